/*
 * t_bpf_gfunc.c - BTF func_info and the verifier, as Linux 6.1: a callback's lddw
 * BPF_PSEUDO_FUNC needs func_info ("missing btf func_info") naming a static function
 * ("callback function not static"); a global function (BTF_FUNC_GLOBAL) is verified once on
 * its own from its prototype (int g(struct bpf_perf_event_data *ctx, int x, int *p)), each
 * call only checks its arguments against the prototype and gets an unknown r0 back.  The BTF
 * is tests/unit/prog_btf.h's, loaded with BPF_BTF_LOAD.  Runs on perfkernel and on Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include "tap.h"
#include "bpf_insn.h"

static long bpf_sys(int cmd, union bpf_attr *a, unsigned size)
{
	long r = syscall(__NR_bpf, cmd, a, size);

	return r < 0 ? -errno : r;
}

#include "../unit/prog_btf.h"

static char log_buf[1 << 16];
static uint32_t load_level = 2; /* load()'s log_level */

/* BPF_PROG_LOAD's attributes for p (syscall programs sleepable), the log in log_buf. */
static void prog_attr(union bpf_attr *a, uint32_t type, const struct bpf_insn *p, unsigned n,
		      uint32_t level)
{
	memset(a, 0, sizeof(*a));
	a->prog_type = type;
	a->prog_flags = type == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0;
	a->insns = (uintptr_t)p;
	a->insn_cnt = n;
	a->license = (uintptr_t)"GPL";
	a->log_buf = (uintptr_t)log_buf;
	a->log_size = sizeof(log_buf);
	a->log_level = level;
	log_buf[0] = 0;
}

/* Load p as a perf_event program at log_level load_level, func_info per kinds (NULL kinds and
 * nkinds 1: no BTF at all): the fd or -errno. */
static long load(const struct bpf_insn *p, unsigned n, const uint8_t *kinds, uint32_t nkinds)
{
	struct bpf_func_info fi[PB_STATIC];
	union bpf_attr a;
	long fd, btf = -1;

	prog_attr(&a, BPF_PROG_TYPE_PERF_EVENT, p, n, load_level);
	if (kinds || !nkinds) {
		btf = pb_attach(&a, p, n, kinds, nkinds, fi);
		if (btf < 0)
			return btf;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (btf >= 0)
		close((int)btf);
	if (fd >= 0)
		close((int)fd);
	return fd;
}

static unsigned count(const char *s)
{
	unsigned n = 0;

	for (const char *p = log_buf; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

#define SP offsetof(struct bpf_perf_event_data, sample_period)
/* g(ctx, x, p): p ? *p : ctx->sample_period + x */
#define G_BODY JEQ_K(3, 0, 2), INSN(BPF_LDX | BPF_MEM | BPF_W, 0, 3, 0, 0), EXIT_INSN, \
	INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, SP, 0), INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 2, 0, 0), \
	EXIT_INSN
/* slot; g(ctx, 5, fp + off) */
#define G_CALL(slot, off) slot, INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_K(2, 5), MOV_X(3, 10), \
	ADD_K(3, off), CALL_LOCAL(1), EXIT_INSN
#define LD_FUNC(d, off) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_FUNC, 0, off), INSN(0, 0, 0, 0, 0)

static const uint8_t g_args[] = { 0, PB_G_CTX_INT_PTR };

static void callbacks(void)
{
	const struct bpf_insn loop[] = {
		MOV_K(1, 4), LD_FUNC(2, 6), MOV_K(3, 0), MOV_K(4, 0), CALL(BPF_FUNC_loop), RET0, RET0,
	};
	long r;

	r = load(loop, N_INSNS(loop), NULL, 1);
	CHECK(r == -EINVAL && strstr(log_buf, "missing btf func_info\n"),
	      "bpf_loop callback without func_info: EINVAL", "%ld\n%s", r, log_buf);
	r = load(loop, N_INSNS(loop), NULL, 0);
	CHECK(r >= 0, "bpf_loop callback with func_info (static): loads", "%ld\n%s", r, log_buf);
	r = load(loop, N_INSNS(loop), (const uint8_t[]){ 0, PB_G_VOID }, 2);
	CHECK(r == -EINVAL && strstr(log_buf, "callback function not static\n"),
	      "a global function as the callback: EINVAL", "%ld\n%s", r, log_buf);
}

static void global_funcs(void)
{
	const struct bpf_insn two[] = {
		MOV_X(6, 1), INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_K(2, 5), MOV_X(3, 10),
		ADD_K(3, -8), CALL_LOCAL(7), MOV_X(7, 0), MOV_X(1, 6), MOV_K(2, 7), MOV_K(3, 0),
		CALL_LOCAL(2), INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0), EXIT_INSN, G_BODY,
	};
	const struct bpf_insn ptr_for_int[] = {
		MOV_X(2, 10), INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_K(0, 0), MOV_X(3, 10),
		ADD_K(3, -8), CALL_LOCAL(1), EXIT_INSN, G_BODY,
	};
	const struct bpf_insn fp_ctx[] = { G_CALL(MOV_X(1, 10), -8), G_BODY };
	const struct bpf_insn short_mem[] = { G_CALL(MOV_K(0, 0), -2), G_BODY };
	/* the body dereferences p unchecked: refused though the only caller passes fp-8 */
	const struct bpf_insn unchecked[] = {
		G_CALL(MOV_K(0, 0), -8), INSN(BPF_LDX | BPF_MEM | BPF_W, 0, 3, 0, 0), EXIT_INSN,
	};
	/* r0 of g(): 0 when the static body is walked, unknown when g is global */
	const struct bpf_insn r0[] = {
		CALL_LOCAL(4), JEQ_K(0, 0, 1), INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 0, 0, 0), RET0, RET0,
	};
	long r;

	r = load(two, N_INSNS(two), g_args, 2);
	if (getenv("T_BPF_DEBUG"))
		fputs(log_buf, stdout);
	CHECK(r >= 0 && count("Validating g_args() func#1...\n") == 1 &&
	      count("Func#1 is safe for any args that match its prototype\n") == 1 &&
	      count("Func#1 is global and valid. Skipping.\n") == 2,
	      "global g(ctx, int, int *) from two sites: verified once, skipped twice", "%ld\n%s", r,
	      log_buf);
	CHECK(!strncmp(log_buf, "func#0 @0\nfunc#1 @13\n", 20), "log level 2 lists the subprograms",
	      "\n%s", log_buf);
	CHECK(strstr(log_buf, "Validating g_args() func#1...\n13: R1=ctx(off=0,imm=0) R2=scalar() "
			      "R3=mem_or_null(id=2,off=0,imm=0) R10=fp0\n"),
	      "the global function starts from its prototype's registers", "\n%s", log_buf);
	CHECK(strstr(log_buf, "Validating g_args() func#1...\n") <
		      strstr(log_buf, "Func#1 is global and valid. Skipping.\n"),
	      "the global function is verified before the main program", "\n%s", log_buf);
	r = load(ptr_for_int, N_INSNS(ptr_for_int), g_args, 2);
	CHECK(r == -EINVAL && strstr(log_buf, "R2 is not a scalar\nCaller passes invalid args into func#1\n"),
	      "a pointer for the int: EINVAL", "%ld\n%s", r, log_buf);
	r = load(fp_ctx, N_INSNS(fp_ctx), g_args, 2);
	CHECK(r == -EINVAL && strstr(log_buf, "arg#0 expected pointer to ctx, but got PTR\n"
					      "Caller passes invalid args into func#1\n"),
	      "the stack for ctx: EINVAL", "%ld\n%s", r, log_buf);
	r = load(short_mem, N_INSNS(short_mem), g_args, 2);
	CHECK(r == -EINVAL && strstr(log_buf, "Caller passes invalid args into func#1\n"),
	      "2 bytes of stack for an int: EINVAL", "%ld\n%s", r, log_buf);
	r = load(unchecked, N_INSNS(unchecked), g_args, 2);
	CHECK(r == -EACCES && strstr(log_buf, "R3 invalid mem access 'mem_or_null'\n"),
	      "the body checked on its own (p may be NULL): EACCES", "%ld\n%s", r, log_buf);
	{
		/* g's memory is not a ring buffer record: it cannot be submitted */
		const struct bpf_insn submit[] = {
			G_CALL(MOV_K(0, 0), -8), JEQ_K(3, 0, 3), MOV_X(1, 3), MOV_K(2, 0),
			CALL(BPF_FUNC_ringbuf_submit), RET0,
		};

		r = load(submit, N_INSNS(submit), g_args, 2);
		CHECK(r == -EACCES && strstr(log_buf, "R1 type=mem expected=alloc_mem\n"),
		      "ringbuf_submit of a global function's memory: EACCES", "%ld\n%s", r, log_buf);
	}
	r = load(r0, N_INSNS(r0), (const uint8_t[]){ 0, PB_G_VOID }, 2);
	CHECK(r == -EACCES && strstr(log_buf, "R0 invalid mem access 'scalar'"),
	      "r0 after a global call is an unknown scalar", "%ld\n%s", r, log_buf);
	r = load(r0, N_INSNS(r0), NULL, 0);
	CHECK(r >= 0, "r0 after a static call is what it returned", "%ld\n%s", r, log_buf);
	/* a static callee whose prototype the call does not match: logged, walked with what
	 * the caller passed (here it writes through the pointer given for the int) */
	{
		const struct bpf_insn p[] = {
			MOV_X(2, 10), CALL_LOCAL(1), EXIT_INSN,
			INSN(BPF_ST | BPF_MEM | BPF_DW, 2, 0, -8, 1), RET0,
		};

		r = load(p, N_INSNS(p), (const uint8_t[]){ 0, PB_S_ARGS }, 2);
		CHECK(r >= 0 && strstr(log_buf, "R2 is not a scalar\n") &&
			      !strstr(log_buf, "Caller passes"),
		      "static: a call not matching the prototype is logged and walked", "%ld\n%s",
		      r, log_buf);
	}
	/* the main program's own prototype: a void * where ctx would be is only logged */
	{
		const struct bpf_insn p[] = { RET0 };
		char want[96];

		snprintf(want, sizeof(want), "reg type unsupported for arg#0 function g_voidptr#%u\n"
					     "0: R1=ctx(off=0,imm=0) R10=fp0\n",
			 pb_func_id(0, PB_G_VOIDPTR));
		r = load(p, N_INSNS(p), (const uint8_t[]){ PB_G_VOIDPTR }, 1);
		CHECK(r >= 0 && strstr(log_buf, want), "main(void *): logged, loads", "%ld\n%s", r,
		      log_buf);
	}
}

/* prototypes and bodies a global function may not have */
static void bad_globals(void)
{
	const struct bpf_insn call[] = { MOV_K(1, 0), CALL_LOCAL(1), EXIT_INSN, RET0 };
	const struct bpf_insn ret_fp[] = { CALL_LOCAL(1), EXIT_INSN, MOV_X(0, 10), EXIT_INSN };
	static const struct {
		uint8_t kind;
		const char *what, *msg;
	} rows[] = {
		{ PB_G_RETPTR, "returning a pointer",
		  "Global function g_retptr() doesn't return scalar. Only those are supported.\n" },
		{ PB_G_VOIDPTR, "a void * argument",
		  "arg#0 reference type('UNKNOWN ') size cannot be determined: -22\n" },
		{ PB_G_SIX, "six arguments", "Global function g_six() with 6 > 5 args. Buggy compiler.\n" },
	};
	long r;

	for (size_t i = 0; i < N_INSNS(rows); i++) {
		char what[96];

		snprintf(what, sizeof(what), "global function %s: EINVAL", rows[i].what);
		r = load(call, N_INSNS(call), (const uint8_t[]){ 0, rows[i].kind }, 2);
		CHECK(r == -EINVAL && strstr(log_buf, rows[i].msg), what, "%ld\n%s", r, log_buf);
	}
	r = load(ret_fp, N_INSNS(ret_fp), (const uint8_t[]){ 0, PB_G_VOID }, 2);
	CHECK(r == -EINVAL && strstr(log_buf, "At subprogram exit the register R0 is not a scalar "
					      "value (fp)\n"),
	      "global function returning its frame pointer: EINVAL", "%ld\n%s", r, log_buf);
}

/* log_level 1 keeps the path that failed: nothing of a global function's walk that passed
 * but the line after it, nothing but the statistics when everything passes */
static void log_level1(void)
{
	struct bpf_insn two[] = {
		MOV_X(6, 1), INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_K(2, 5), MOV_X(3, 10),
		ADD_K(3, -8), CALL_LOCAL(7), MOV_X(7, 0), MOV_X(1, 6), MOV_K(2, 7), MOV_K(3, 0),
		CALL_LOCAL(2), INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0), EXIT_INSN, G_BODY,
	};
	long r;

	load_level = 1;
	r = load(two, N_INSNS(two), g_args, 2);
	CHECK(r >= 0 && !strncmp(log_buf, "processed 19 insns", 18), "level 1, all pass: statistics only",
	      "%ld\n%s", r, log_buf);
	two[11] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 0, 0, 0); /* main dereferences g's r0 */
	r = load(two, N_INSNS(two), g_args, 2);
	CHECK(r == -EACCES && !strncmp(log_buf, "Func#1 is safe for any args that match its prototype\n"
						"0: R1=ctx(off=0,imm=0) R10=fp0\n", 84) &&
		      strstr(log_buf, "Func#1 is global and valid. Skipping.\n"),
	      "level 1, main fails: the global function's line, then main's path", "%ld\n%s", r,
	      log_buf);
	two[11] = INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0);
	two[14] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 3, 0, 0); /* g reads 8 bytes of an int */
	r = load(two, N_INSNS(two), g_args, 2);
	CHECK(r == -EACCES && !strncmp(log_buf, "Validating g_args() func#1...\n13: R1=ctx(off=0,imm=0) "
						"R2=scalar() R3=mem_or_null(id=2,off=0,imm=0) R10=fp0\n",
				       107) &&
		      strstr(log_buf, "invalid access to memory, mem_size=4 off=0 size=8\n"),
	      "level 1, the global function fails: its path", "%ld\n%s", r, log_buf);
	load_level = 2;
}

/* ctx where g_mem(int x, int *p) wants memory: refused where Linux rewrites ctx loads
 * (perf_event), its last byte checked for a read and a write where it does not (kprobe,
 * whose ctx is read-only) */
static void ctx_as_memory(void)
{
	const struct bpf_insn q[] = { MOV_X(2, 1), MOV_K(1, 1), CALL_LOCAL(1), EXIT_INSN, RET0 };
	struct bpf_func_info fi[PB_STATIC];
	union bpf_attr a;
	long btf, fd;

	fd = load(q, N_INSNS(q), (const uint8_t[]){ 0, PB_G_MEM }, 2);
	CHECK(fd == -EINVAL && strstr(log_buf, "R2 type=ctx expected=fp\nCaller passes invalid args "
					       "into func#1\n"),
	      "perf_event: ctx for an int *: EINVAL", "%ld\n%s", fd, log_buf);
	prog_attr(&a, BPF_PROG_TYPE_KPROBE, q, N_INSNS(q), 1);
	btf = pb_attach(&a, q, N_INSNS(q), (const uint8_t[]){ 0, PB_G_MEM }, 2, fi);
	fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
	CHECK(fd == -EINVAL && strstr(log_buf, "invalid bpf_context access off=3 size=1\n"
					       "Caller passes invalid args into func#1\n"),
	      "kprobe: ctx for an int *: its last byte read, not written: EINVAL", "%ld\n%s", fd,
	      log_buf);
	if (fd >= 0)
		close((int)fd);
	close((int)btf);
}

/* main calls a chain of n - 1 functions, each the next: all static, or all global */
static long chain(unsigned n, int global)
{
	struct bpf_insn p[2 * 16];
	uint8_t kinds[16] = { 0 };

	for (unsigned i = 0; i + 1 < n; i++) {
		p[2 * i] = CALL_LOCAL(1);
		p[2 * i + 1] = EXIT_INSN;
		kinds[i + 1] = global ? PB_G_VOID : 0;
	}
	p[2 * n - 2] = MOV_K(0, 0);
	p[2 * n - 1] = EXIT_INSN;
	return load(p, 2 * n, kinds, n);
}

static void frames(void)
{
	long r;

	r = chain(8, 1);
	CHECK(r >= 0, "8 frames through global functions: loads", "%ld\n%s", r, log_buf);
	r = chain(9, 1); /* Linux's check_max_stack_depth counts 8 calls */
	CHECK(r == -E2BIG && strstr(log_buf, "the call stack of 8 frames is too deep !\n"),
	      "9 frames through global functions: E2BIG", "%ld\n%s", r, log_buf);
	r = chain(9, 0);
	CHECK(r == -E2BIG && strstr(log_buf, "the call stack of 9 frames is too deep\n"),
	      "9 frames through static functions: E2BIG", "%ld\n%s", r, log_buf);
}

/* A syscall program calling g_mem(x, p) = p ? *p + x : 2 * x twice, run (BPF_PROG_TEST_RUN)
 * by the interpreter or the JIT: g(5, &3) + g(7, NULL) = 22, the stack slot the callee got
 * a pointer to still 3. */
static void run_global(void)
{
	const struct bpf_insn p[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 3), MOV_K(1, 5), MOV_X(2, 10), ADD_K(2, -8),
		CALL_LOCAL(9), MOV_X(6, 0), MOV_K(1, 7), MOV_K(2, 0), CALL_LOCAL(5),
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 6, 0, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, -8, 0), INSN(BPF_ALU64 | BPF_MUL | BPF_K, 1, 0, 0, 100),
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), EXIT_INSN,
		/* g_mem */
		JEQ_K(2, 0, 3), INSN(BPF_LDX | BPF_MEM | BPF_W, 0, 2, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), EXIT_INSN,
		MOV_X(0, 1), INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), EXIT_INSN,
	};
	struct bpf_func_info fi[PB_STATIC];
	char ctx[8] = { 0 };
	union bpf_attr a;
	long btf, fd, r;

	prog_attr(&a, BPF_PROG_TYPE_SYSCALL, p, N_INSNS(p), 1);
	btf = pb_attach(&a, p, N_INSNS(p), (const uint8_t[]){ 0, PB_G_MEM }, 2, fi);
	fd = btf < 0 ? btf : bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
	CHECK(fd >= 0, "syscall program calling a global function twice: loads", "%ld\n%s", fd,
	      log_buf);
	if (fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.ctx_in = (uintptr_t)ctx;
	a.test.ctx_size_in = sizeof(ctx);
	r = bpf_sys(BPF_PROG_TEST_RUN, &a, sizeof(a));
	CHECK(r == 0 && a.test.retval == 322, "... runs: g(5, &3) + g(7, NULL) = 22, the slot still 3",
	      "%ld retval %u", r, a.test.retval);
	close((int)fd);
	close((int)btf);
}

int main(void)
{
	tap_init("t_bpf_gfunc", 60);
	callbacks();
	global_funcs();
	run_global();
	frames();
	log_level1();
	ctx_as_memory();
	bad_globals();
	return tap_done();
}
