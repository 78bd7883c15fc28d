/*
 * t_bpf_jit.c - the eBPF JIT as userland sees it: net.core.bpf_jit_enable (/proc/sys/net/core/
 * bpf_jit_enable, 1 by default), BPF_OBJ_GET_INFO_BY_FD's jited_prog_len / jited_prog_insns,
 * and programs giving the same results JIT-compiled (1) and interpreted (0): ALU edge cases,
 * byte swaps, jumps, loads and stores of every size on the context, the atomics on the stack,
 * bpf-to-bpf calls with a frame each, helper calls on maps and direct map value addresses,
 * ARRAY lookups past the end (NULL).
 * BPF_PROG_TYPE_SYSCALL programs run by BPF_PROG_TEST_RUN.  Only ISA v3 (what Linux 6.1's
 * verifier takes).  Linux built with BPF_JIT_ALWAYS_ON refuses 0: the interpreted half is then
 * skipped and each result is checked against its expected value only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"
#include "sys_bpf.h"

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define ALU(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALUR(op, d, s) INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32(op, d, i) INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32R(op, d, s) INSN(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define MOV(d, i) ALU(BPF_MOV, d, i)
#define MOVR(d, s) ALUR(BPF_MOV, d, s)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ATOMIC(sz, d, s, o, op) INSN(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define END(src, d, bits) INSN(BPF_ALU | BPF_END | (src), d, 0, 0, bits)
#define JMP(op, d, i, o) INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMPR(op, d, s, o) INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32R(op, d, s, o) INSN(BPF_JMP32 | (op) | BPF_X, d, s, o, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define CALL_LOCAL(o) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, o)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static char logbuf[16384];

static int jit_get(void)
{
	char c[8] = "";
	int fd = open("/proc/sys/net/core/bpf_jit_enable", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, c, sizeof(c) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? c[0] - '0' : -1;
}

static int jit_set(int v)
{
	char c = (char)('0' + v);
	int fd = open("/proc/sys/net/core/bpf_jit_enable", O_WRONLY);
	int ok = fd >= 0 && write(fd, &c, 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static uint32_t jited_len(int prog)
{
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
		return 0;
	return info.jited_prog_len;
}

static int map_lookup(int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	return (int)sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

#define CTX_WORDS 12

struct result {
	uint64_t r0;
	uint64_t ctx[CTX_WORDS];
	uint64_t map[2];
	uint32_t jited;
};

/* build the program (map: a fresh 1-entry ARRAY of 16 bytes), load, run once on ctx */
typedef int (*builder)(struct bpf_insn *p, int map);

static int run_one(builder b, const uint64_t *ctx_in, struct result *r, const char *what)
{
	struct bpf_insn p[128];
	int map = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0), prog, n;
	union bpf_attr a;

	memset(r, 0, sizeof(*r));
	if (map < 0) {
		tap_fail(what, "map: %s", strerror(errno));
		return -1;
	}
	n = b(p, map);
	prog = bpf_prog_new(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, (uint32_t)n, logbuf, sizeof(logbuf));
	if (prog < 0) {
		size_t l = strlen(logbuf);

		/* the verifier's reason is at the end of its log */
		tap_fail(what, "load: %s: ...%s", strerror(errno), logbuf + (l > 400 ? l - 400 : 0));
		close(map);
		return -1;
	}
	r->jited = jited_len(prog);
	memcpy(r->ctx, ctx_in, sizeof(r->ctx));
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = prog;
	a.test.ctx_in = (uintptr_t)r->ctx;
	a.test.ctx_size_in = sizeof(r->ctx);
	if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0) {
		tap_fail(what, "test_run: %s", strerror(errno));
		close(prog);
		close(map);
		return -1;
	}
	r->r0 = a.test.retval;
	map_lookup(map, 0, r->map);
	close(prog);
	close(map);
	return 0;
}

/* ALU64/ALU32 edge cases, byte swaps, jumps; every result also stored to ctx[3..11] */
static int build_alu(struct bpf_insn *p, int map)
{
	int n = 0;

	p[n++] = LDX(BPF_DW, 6, 1, 0); /* a */
	p[n++] = LDX(BPF_DW, 7, 1, 8); /* b */
	p[n++] = LDX(BPF_W, 8, 1, 16); /* zero */
	p[n++] = MOVR(0, 6);
	p[n++] = ALUR(BPF_DIV, 0, 8); /* a / 0 = 0 */
	p[n++] = MOVR(2, 6);
	p[n++] = ALUR(BPF_MOD, 2, 8); /* a % 0 = a */
	p[n++] = ALUR(BPF_ADD, 0, 2);
	p[n++] = MOVR(3, 6);
	p[n++] = ALU32R(BPF_MOD, 3, 8); /* (u32)a */
	p[n++] = STX(BPF_DW, 1, 3, 24);
	p[n++] = MOVR(3, 6);
	p[n++] = ALUR(BPF_DIV, 3, 7);
	p[n++] = ALUR(BPF_XOR, 0, 3);
	p[n++] = MOVR(3, 6);
	p[n++] = ALU32R(BPF_MUL, 3, 7);
	p[n++] = STX(BPF_DW, 1, 3, 32);
	p[n++] = MOVR(4, 6);
	p[n++] = ALUR(BPF_RSH, 4, 7);
	p[n++] = ALUR(BPF_ADD, 0, 4);
	p[n++] = MOVR(4, 6);
	p[n++] = ALU(BPF_ARSH, 4, 5);
	p[n++] = STX(BPF_DW, 1, 4, 40);
	p[n++] = MOVR(4, 6);
	p[n++] = ALU32(BPF_LSH, 4, 3);
	p[n++] = ALU32(BPF_ARSH, 4, 1);
	p[n++] = STX(BPF_DW, 1, 4, 48);
	p[n++] = MOVR(5, 6);
	p[n++] = ALU(BPF_NEG, 5, 0);
	p[n++] = ALU(BPF_MUL, 5, -3);
	p[n++] = ALU(BPF_SUB, 5, 100000);
	p[n++] = ALU(BPF_AND, 5, 0x7ffff0f0);
	p[n++] = ALU32(BPF_OR, 5, -16);
	p[n++] = STX(BPF_DW, 1, 5, 56);
	p[n++] = MOVR(2, 6);
	p[n++] = END(BPF_TO_BE, 2, 64);
	p[n++] = STX(BPF_DW, 1, 2, 64);
	p[n++] = MOVR(2, 6);
	p[n++] = END(BPF_TO_BE, 2, 16);
	p[n++] = MOVR(3, 6);
	p[n++] = END(BPF_TO_BE, 3, 32);
	p[n++] = ALUR(BPF_ADD, 2, 3);
	p[n++] = MOVR(3, 6);
	p[n++] = END(BPF_TO_LE, 3, 16);
	p[n++] = ALUR(BPF_ADD, 2, 3);
	p[n++] = STX(BPF_DW, 1, 2, 72);
	/* jumps: signed and unsigned, 64 and 32 bits, jset */
	p[n++] = JMPR(BPF_JSGT, 6, 7, 1);
	p[n++] = ALU(BPF_ADD, 0, 1);
	p[n++] = JMPR(BPF_JGT, 6, 7, 1);
	p[n++] = ALU(BPF_ADD, 0, 2);
	p[n++] = JMP32R(BPF_JSLT, 6, 7, 1);
	p[n++] = ALU(BPF_ADD, 0, 4);
	p[n++] = JMP(BPF_JSET, 6, 0x80, 1);
	p[n++] = ALU(BPF_ADD, 0, 8);
	p[n++] = JMP(BPF_JSLE, 7, -5, 1);
	p[n++] = ALU(BPF_ADD, 0, 16);
	/* sub-word stores and loads */
	p[n++] = STX(BPF_B, 1, 6, 80);
	p[n++] = STX(BPF_H, 1, 6, 82);
	p[n++] = ST(BPF_W, 10, -8, -2); /* an immediate store into ctx is refused (as on Linux) */
	p[n++] = LDX(BPF_W, 2, 10, -8);
	p[n++] = STX(BPF_W, 1, 2, 84);
	p[n++] = LDX(BPF_H, 2, 1, 84);
	p[n++] = ALUR(BPF_ADD, 0, 2);
	p[n++] = LDX(BPF_B, 2, 1, 82);
	p[n++] = ALUR(BPF_ADD, 0, 2);
	p[n++] = STX(BPF_DW, 1, 0, 88);
	p[n++] = EXIT();
	return n;
}

/* lddw of a map (src BPF_PSEUDO_MAP_FD) or of one of its value's bytes (BPF_PSEUDO_MAP_VALUE) */
static int ld_map(struct bpf_insn *p, int d, int src, int fd, int off)
{
	p[0] = INSN(BPF_LD | BPF_DW | BPF_IMM, d, src, 0, fd);
	p[1] = INSN(0, 0, 0, 0, off);
	return 2;
}

/* the atomics on the stack, 64 and 32 bits; old values and final words to ctx */
static int build_atomic(struct bpf_insn *p, int map)
{
	int n = 0;

	p[n++] = LDX(BPF_DW, 6, 1, 0);
	p[n++] = LDX(BPF_DW, 7, 1, 8);
	p[n++] = STX(BPF_DW, 10, 6, -8);
	p[n++] = STX(BPF_DW, 10, 6, -16);
	p[n++] = MOVR(2, 7);
	p[n++] = ATOMIC(BPF_DW, 10, 2, -8, BPF_ADD);
	p[n++] = ATOMIC(BPF_DW, 10, 2, -8, BPF_XOR | BPF_FETCH);
	p[n++] = STX(BPF_DW, 1, 2, 24);
	p[n++] = MOVR(3, 7);
	p[n++] = ATOMIC(BPF_DW, 10, 3, -8, BPF_AND | BPF_FETCH);
	p[n++] = STX(BPF_DW, 1, 3, 32);
	p[n++] = MOVR(3, 7);
	p[n++] = ATOMIC(BPF_DW, 10, 3, -8, BPF_OR);
	p[n++] = MOV(4, 77);
	p[n++] = ATOMIC(BPF_DW, 10, 4, -8, BPF_XCHG);
	p[n++] = STX(BPF_DW, 1, 4, 40);
	p[n++] = MOV(0, 77);
	p[n++] = MOVR(5, 6);
	p[n++] = ATOMIC(BPF_DW, 10, 5, -8, BPF_CMPXCHG); /* matches: stores a */
	p[n++] = STX(BPF_DW, 1, 0, 48);
	p[n++] = MOV(0, 1);
	p[n++] = ATOMIC(BPF_DW, 10, 5, -8, BPF_CMPXCHG); /* does not match */
	p[n++] = STX(BPF_DW, 1, 0, 56);
	p[n++] = MOVR(2, 7);
	p[n++] = ATOMIC(BPF_W, 10, 2, -16, BPF_ADD | BPF_FETCH);
	p[n++] = STX(BPF_DW, 1, 2, 64);
	p[n++] = MOVR(2, 7);
	p[n++] = ATOMIC(BPF_W, 10, 2, -12, BPF_OR | BPF_FETCH);
	p[n++] = STX(BPF_DW, 1, 2, 72);
	p[n++] = MOVR(0, 6);
	p[n++] = ATOMIC(BPF_W, 10, 7, -16, BPF_CMPXCHG);
	p[n++] = STX(BPF_DW, 1, 0, 80);
	p[n++] = MOV(3, -1);
	p[n++] = ATOMIC(BPF_W, 10, 3, -12, BPF_XCHG);
	p[n++] = ATOMIC(BPF_W, 10, 3, -16, BPF_AND);
	p[n++] = LDX(BPF_DW, 0, 10, -8);
	p[n++] = LDX(BPF_DW, 2, 10, -16);
	p[n++] = STX(BPF_DW, 1, 2, 88);
	p[n++] = EXIT();
	return n;
}

/* bpf-to-bpf calls with a stack frame each, helpers on a map, a direct map value address */
static int build_calls(struct bpf_insn *p, int map)
{
	int n = 0;

	p[n++] = MOV(6, 100);
	p[n++] = ST(BPF_DW, 10, -8, 7);
	p[n++] = MOV(1, 3);
	p[n++] = CALL_LOCAL(13); /* f */
	p[n++] = ALUR(BPF_ADD, 6, 0);
	p[n++] = LDX(BPF_DW, 2, 10, -8);
	p[n++] = ALUR(BPF_ADD, 6, 2);
	/* value = lookup(map, 0); value[0] += r6 (atomic) */
	p[n++] = ST(BPF_W, 10, -12, 0);
	n += ld_map(p + n, 1, BPF_PSEUDO_MAP_FD, map, 0);
	p[n++] = MOVR(2, 10);
	p[n++] = ALU(BPF_ADD, 2, -12);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = JMP(BPF_JEQ, 0, 0, 2);
	p[n++] = ATOMIC(BPF_DW, 0, 6, 0, BPF_ADD);
	p[n++] = MOVR(0, 6);
	p[n++] = EXIT();
	/* f(x): its own stack; calls g; x * 2 + 11 + g */
	p[n++] = MOVR(6, 1);
	p[n++] = ST(BPF_DW, 10, -8, 11);
	p[n++] = CALL_LOCAL(5); /* g */
	p[n++] = ALU(BPF_LSH, 6, 1);
	p[n++] = ALUR(BPF_ADD, 6, 0);
	p[n++] = LDX(BPF_DW, 0, 10, -8);
	p[n++] = ALUR(BPF_ADD, 0, 6);
	p[n++] = EXIT();
	/* g: writes the map value's second word through its direct address, returns 1000 */
	n += ld_map(p + n, 1, BPF_PSEUDO_MAP_VALUE, map, 8);
	p[n++] = ST(BPF_DW, 1, 0, 0x4321);
	p[n++] = MOV(0, 1000);
	p[n++] = EXIT();
	return n;
}

/* ARRAY lookups past the end (keys 1 and 0xffffffff of the 1-entry map: NULL), then key 0:
 * value[0] = 0x55; r0 = 1 when both were NULL (the JIT's inline lookup bounds them) */
static int build_array(struct bpf_insn *p, int map)
{
	static const int32_t keys[] = { 1, -1, 0 };
	int n = 0;

	p[n++] = MOV(7, 1);
	for (unsigned int k = 0; k < 3; k++) {
		p[n++] = ST(BPF_W, 10, -4, keys[k]);
		n += ld_map(p + n, 1, BPF_PSEUDO_MAP_FD, map, 0);
		p[n++] = MOVR(2, 10);
		p[n++] = ALU(BPF_ADD, 2, -4);
		p[n++] = CALL(BPF_FUNC_map_lookup_elem);
		if (k < 2) {
			p[n++] = JMP(BPF_JEQ, 0, 0, 1);
			p[n++] = MOV(7, 2 + (int)k); /* found past the end */
		} else {
			p[n++] = JMP(BPF_JEQ, 0, 0, 1);
			p[n++] = ST(BPF_DW, 0, 0, 0x55);
		}
	}
	p[n++] = MOVR(0, 7);
	p[n++] = EXIT();
	return n;
}

static void compare(const char *name, builder b, const uint64_t *ctx, bool interp,
		    const struct result *want)
{
	struct result j, i;
	char what[96];

	snprintf(what, sizeof(what), "%s: JIT-compiled", name);
	jit_set(1);
	if (run_one(b, ctx, &j, what))
		return;
	CHECK(j.jited > 0, what, "jited_prog_len 0");
	if (want) {
		snprintf(what, sizeof(what), "%s: JIT result", name);
		CHECK(j.r0 == want->r0 && !memcmp(j.map, want->map, sizeof(j.map)), what,
		      "r0 %#llx map %#llx %#llx", (unsigned long long)j.r0,
		      (unsigned long long)j.map[0], (unsigned long long)j.map[1]);
	}
	if (!interp)
		return;
	snprintf(what, sizeof(what), "%s: interpreted with bpf_jit_enable 0", name);
	jit_set(0);
	if (run_one(b, ctx, &i, what)) {
		jit_set(1);
		return;
	}
	jit_set(1);
	CHECK(i.jited == 0, what, "jited_prog_len %u", i.jited);
	snprintf(what, sizeof(what), "%s: JIT and interpreter agree", name);
	for (int k = 0; k < CTX_WORDS; k++)
		if (j.ctx[k] != i.ctx[k]) {
			tap_fail(what, "ctx[%d] %#llx vs %#llx", k, (unsigned long long)j.ctx[k],
				 (unsigned long long)i.ctx[k]);
			return;
		}
	CHECK(j.r0 == i.r0 && !memcmp(j.map, i.map, sizeof(j.map)), what, "r0 %#llx vs %#llx",
	      (unsigned long long)j.r0, (unsigned long long)i.r0);
}

int main(void)
{
	static const uint64_t ctxs[][CTX_WORDS] = {
		{ 0x8000000000000007ull, 3, 0 },
		{ 0xfedcba9876543210ull, 0xffffffff0000007full, 0 },
		{ 0x7fffffff, (uint64_t)-7, 0 },
		{ 0x1234, 0x80000000, 0 },
	};
	const struct result calls_want = { .r0 = 100 + 1017 + 7, .map = { 1124, 0x4321 } };
	const struct result array_want = { .r0 = 1, .map = { 0x55, 0 } };
	int old;
	bool interp;

	tap_init("t_bpf_jit", 30);
	old = jit_get();
	if (!CHECK(old == 1, "net.core.bpf_jit_enable is 1 by default", "%d", old))
		return tap_done();
	interp = jit_set(0) == 0;
	jit_set(1);
	if (!interp)
		tap_skip("bpf_jit_enable 0", "refused (%s): a JIT-only kernel", strerror(errno));
	for (unsigned int c = 0; c < sizeof(ctxs) / sizeof(ctxs[0]); c++) {
		char name[32];

		snprintf(name, sizeof(name), "alu ctx %u", c);
		compare(name, build_alu, ctxs[c], interp, NULL);
		snprintf(name, sizeof(name), "atomics ctx %u", c);
		compare(name, build_atomic, ctxs[c], interp, NULL);
	}
	compare("calls and maps", build_calls, ctxs[0], interp, &calls_want);
	compare("array lookups past the end", build_array, ctxs[0], interp, &array_want);
	EXPECT_ERRNO(jit_set(3), EINVAL, "bpf_jit_enable 3 is refused");
	jit_set(old);
	return tap_done();
}
