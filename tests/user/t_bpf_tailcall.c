/* t_bpf_tailcall: bpf_tail_call and BPF_MAP_TYPE_PROG_ARRAY as Linux 6.1 has them.
 * The map: creation rules, program fds in, program ids out of a syscall lookup, EBADF /
 * EINVAL / E2BIG / ENOENT, the owner (program type and JIT state, shown in fdinfo) that
 * refuses other program types at update and at load, slots holding their program (gone when
 * the slot is deleted, and every slot emptied when the map's last fd closes).  The verifier:
 * ctx in R1, a program array in R2, R0 unset after the call, no reference held across it,
 * tail calls in the main program only (a program without BTF).  At run time (perf_event programs on page faults):
 * a tail call does not come back, a miss (index past the end, empty slot) falls through, and
 * a program tail-calling itself runs 34 times a run (MAX_TAIL_CALL_CNT 33).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"

#include <fcntl.h>
#include <stddef.h>
#include <linux/bpf_perf_event.h>

static long bpf_sys(int cmd, union bpf_attr *a, unsigned size)
{
	long r = syscall(__NR_bpf, cmd, a, size);

	return r < 0 ? -errno : r;
}

#include "../unit/prog_btf.h"

/* res[slot] += 1 (atomic); r6 keeps the ctx */
#define RES_INC(res, slot)                                                                         \
	INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, slot), MOV_X(2, 10), ADD_K(2, -4),                \
		LD_MAP(1, res), CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 2), MOV_K(1, 1),         \
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD)
/* res[slot] += r (r6..r9; atomic) */
#define RES_ADD(res, slot, r)                                                                      \
	INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, slot), MOV_X(2, 10), ADD_K(2, -4),                \
		LD_MAP(1, res), CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 1),                       \
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, r, 0, BPF_ADD)
/* bpf_tail_call(ctx in r6, progs, index): 5 instructions */
#define TAIL(progs, index) MOV_X(1, 6), LD_MAP(2, progs), MOV_K(3, index), CALL(BPF_FUNC_tail_call)

static char logbuf[65536];

/* a u32 key by value */
static long elem(int cmd, int fd, uint32_t key, void *value, uint64_t flags)
{
	return map_elem(cmd, fd, &key, value, flags);
}

static long update(int fd, uint32_t key, int value, uint64_t flags)
{
	return elem(BPF_MAP_UPDATE_ELEM, fd, key, &value, flags);
}

static int load(uint32_t type, const struct bpf_insn *insns, size_t n)
{
	return prog_load_log(type, insns, n, logbuf, sizeof(logbuf));
}

static uint64_t res_get(int res, uint32_t slot)
{
	uint64_t v = 0;

	elem(BPF_MAP_LOOKUP_ELEM, res, slot, &v, 0);
	return v;
}

static void res_clear(int res)
{
	uint64_t z = 0;

	for (uint32_t k = 0; k < 8; k++)
		elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
}

/* The map's fdinfo line starting with key, or "" */
static const char *fdinfo(int fd, const char *key, char *out, size_t size)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return out;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = 0;
	p = strstr(buf, key);
	if (p) {
		size_t l = strcspn(p, "\n");

		snprintf(out, size, "%.*s", (int)l, p);
	}
	return out;
}

static void map_abi(void)
{
	char line[128];
	uint32_t v;
	int pa, fd, sf, id, ok;
	struct bpf_insn ret0[] = { RET0 };

	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 8, 4, 0), EINVAL, "PROG_ARRAY value_size 8: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 8, 4, 4, 0), EINVAL, "PROG_ARRAY key_size 8: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 0, 0), EINVAL, "PROG_ARRAY max_entries 0: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, BPF_F_RDONLY_PROG), EINVAL,
		     "PROG_ARRAY BPF_F_RDONLY_PROG: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, BPF_F_MMAPABLE), EINVAL,
		     "PROG_ARRAY BPF_F_MMAPABLE: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, BPF_F_PRESERVE_ELEMS), EINVAL,
		     "PROG_ARRAY BPF_F_PRESERVE_ELEMS: EINVAL");
	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	if (!CHECK(pa >= 0, "PROG_ARRAY of 4 slots", "%s", strerror(errno)))
		return;
	fd = load(BPF_PROG_TYPE_PERF_EVENT, ret0, N_INSNS(ret0));
	sf = load(BPF_PROG_TYPE_SOCKET_FILTER, ret0, N_INSNS(ret0));
	if (!CHECK(fd >= 0 && sf >= 0, "a perf_event and a socket filter program load", "%s", strerror(errno)))
		return;
	CHECK(!fdinfo(pa, "owner_prog_type", line, sizeof(line))[0], "fdinfo: no owner before any program",
	      "%s", line);
	EXPECT_ERRNO(elem(BPF_MAP_LOOKUP_ELEM, pa, 0, &v, 0), ENOENT, "lookup of an empty slot: ENOENT");
	EXPECT_ERRNO(elem(BPF_MAP_LOOKUP_ELEM, pa, 9, &v, 0), ENOENT, "lookup past the end: ENOENT");
	EXPECT_ERRNO(elem(BPF_MAP_DELETE_ELEM, pa, 0, NULL, 0), ENOENT, "delete of an empty slot: ENOENT");
	EXPECT_ERRNO(elem(BPF_MAP_DELETE_ELEM, pa, 9, NULL, 0), E2BIG, "delete past the end: E2BIG");
	EXPECT_ERRNO(update(pa, 4, fd, 0), E2BIG, "update past the end: E2BIG");
	EXPECT_ERRNO(update(pa, 0, fd, BPF_NOEXIST), EINVAL, "update with BPF_NOEXIST: EINVAL");
	EXPECT_ERRNO(update(pa, 0, 9999, 0), EBADF, "update with a closed fd: EBADF");
	EXPECT_ERRNO(update(pa, 0, pa, 0), EINVAL, "update with a map fd: EINVAL");
	EXPECT_OK(update(pa, 1, fd, 0), "update slot 1 with a perf_event program");
	CHECK(!strcmp(fdinfo(pa, "owner_prog_type", line, sizeof(line)), "owner_prog_type:\t7"),
	      "fdinfo: owner_prog_type 7 (perf_event)", "%s", line);
	{
		char jit[8] = "";
		int j = open("/proc/sys/net/core/bpf_jit_enable", O_RDONLY);

		if (j >= 0 && read(j, jit, sizeof(jit) - 1) > 0)
			CHECK(!strcmp(fdinfo(pa, "owner_jited", line, sizeof(line)),
				      jit[0] == '0' ? "owner_jited:\t0" : "owner_jited:\t1"),
			      "fdinfo: owner_jited as bpf_jit_enable", "%s", line);
		if (j >= 0)
			close(j);
	}
	v = 0;
	ok = elem(BPF_MAP_LOOKUP_ELEM, pa, 1, &v, 0) == 0;
	CHECK(ok && v == obj_id(fd), "lookup from the syscall gives the program's id",
	      "ok %d id %u want %u", ok, v, obj_id(fd));
	EXPECT_ERRNO(update(pa, 2, sf, 0), EINVAL, "a socket filter into a perf_event-owned array: EINVAL");
	{
		struct bpf_insn uses[] = { LD_MAP(1, pa), RET0 };

		EXPECT_ERRNO(load(BPF_PROG_TYPE_SOCKET_FILTER, uses, N_INSNS(uses)), EINVAL,
			     "loading a socket filter that uses a perf_event-owned array: EINVAL");
	}
	{
		uint32_t k = 0, next = 7;
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)pa;
		a.key = (uintptr_t)&k;
		a.next_key = (uintptr_t)&next;
		CHECK(sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) == 0 && next == 1, "get_next_key(0) = 1 (every index)",
		      "next %u", next);
	}
	/* the slot's reference keeps the program after its fd closes, until the slot goes */
	id = (int)obj_id(fd);
	close(fd);
	fd = obj_fd_by_id(BPF_PROG_GET_FD_BY_ID, (uint32_t)id);
	CHECK(fd >= 0, "a program in a slot outlives its fd", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(elem(BPF_MAP_DELETE_ELEM, pa, 1, NULL, 0), "delete slot 1");
	EXPECT_ERRNO(elem(BPF_MAP_LOOKUP_ELEM, pa, 1, &v, 0), ENOENT, "lookup of the deleted slot: ENOENT");
	EXPECT_ERRNO(obj_fd_by_id(BPF_PROG_GET_FD_BY_ID, (uint32_t)id), ENOENT, "the deleted slot's program is gone (GET_FD_BY_ID ENOENT)");
	close(pa);

	/* a socket filter owns this one: perf_event programs using it do not load */
	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	EXPECT_OK(update(pa, 0, sf, 0), "a socket filter into a new array");
	{
		struct bpf_insn uses[] = { LD_MAP(1, pa), RET0 };

		EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, uses, N_INSNS(uses)), EINVAL,
			     "loading a perf_event program that uses a socket-filter-owned array: EINVAL");
	}
	close(pa);
	close(sf);
}

static void verifier(int pa, int res, int rb)
{
	struct bpf_insn wrong_map[] = { MOV_X(6, 1), TAIL(res, 0), RET0 };
	struct bpf_insn lookup[] = { INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), MOV_X(2, 10), ADD_K(2, -4),
				     LD_MAP(1, pa), CALL(BPF_FUNC_map_lookup_elem), RET0 };
	struct bpf_insn no_ctx[] = { MOV_K(6, 0), TAIL(pa, 0), RET0 };
	struct bpf_insn no_r0[] = { MOV_X(6, 1), TAIL(pa, 0), EXIT_INSN };
	struct bpf_insn leak[] = { MOV_X(6, 1), LD_MAP(1, rb), MOV_K(2, 8), MOV_K(3, 0),
				   CALL(BPF_FUNC_ringbuf_reserve), JEQ_K(0, 0, 9), MOV_X(7, 0),
				   TAIL(pa, 0), MOV_X(1, 7), MOV_K(2, 0), CALL(BPF_FUNC_ringbuf_discard),
				   RET0 };
	struct bpf_insn in_sub[] = { MOV_X(6, 1), CALL_LOCAL(2), RET0, TAIL(pa, 0), RET0 };
	struct bpf_insn good[] = { MOV_X(6, 1), TAIL(pa, 0), RET0 };
	int fd;

	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, wrong_map, N_INSNS(wrong_map)), EINVAL,
		     "tail_call with an ARRAY map: EINVAL");
	CHECK(strstr(logbuf, "kernel subsystem misconfigured verifier"),
	      "... log: kernel subsystem misconfigured verifier (record_func_key)", "%s", logbuf);
	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, lookup, N_INSNS(lookup)), EINVAL,
		     "map_lookup_elem on a PROG_ARRAY: EINVAL");
	CHECK(strstr(logbuf, "cannot pass map_type 3 into func bpf_map_lookup_elem#1"),
	      "... log: cannot pass map_type 3", "%s", logbuf);
	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, no_ctx, N_INSNS(no_ctx)), EACCES, "tail_call without ctx in R1: EACCES");
	CHECK(strstr(logbuf, "R1 type=scalar expected=ctx"), "... log: R1 type=scalar expected=ctx", "%s", logbuf);
	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, no_r0, N_INSNS(no_r0)), EACCES, "R0 unset after tail_call: EACCES");
	CHECK(strstr(logbuf, "R0 !read_ok"), "... log: R0 !read_ok", "%s", logbuf);
	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, leak, N_INSNS(leak)), EINVAL,
		     "tail_call holding a ring buffer reservation: EINVAL");
	CHECK(strstr(logbuf, "Unreleased reference id=") &&
		      strstr(logbuf, "tail_call would lead to reference leak"),
	      "... log: tail_call would lead to reference leak", "%s", logbuf);
	EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, in_sub, N_INSNS(in_sub)), EINVAL,
		     "tail_call in a subprogram (no BTF): EINVAL");
	CHECK(strstr(logbuf, "tail_call is not allowed in subprogs without BTF"),
	      "... log: tail_call is not allowed in subprogs without BTF", "%s", logbuf);
	fd = load(BPF_PROG_TYPE_PERF_EVENT, good, N_INSNS(good));
	CHECK(fd >= 0, "ctx, a PROG_ARRAY and any index load", "%s\n%s", strerror(errno), logbuf);
	if (fd >= 0)
		close(fd);
}

/*
 * Tail calls from bpf-to-bpf subprograms (with BTF func_info, all static int (void) but for
 * kinds).  Linux 6.1 loads them with its JIT only (bpf_jit_enable 0: "tail_calls are not
 * allowed in non-JITed programs with bpf-to-bpf calls"); perfkernel runs them with its JIT on
 * and off (tier 40 runs this both ways; its JIT leaves tail-calling programs to the
 * interpreter).  Measured on Linux 6.1 under refvm, JIT on: the tail-called program runs in
 * place of the subprogram and returns to its caller; the count of 33 goes down into calls and
 * comes back with the return (arm64 keeps it in a callee-saved register).
 */
#define SUB 0x7fff /* CALL_LOCAL(SUB) / LD_FUNC(SUB): the subprogram after main */
#define LD_FUNC(d, off) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_FUNC, 0, off), INSN(0, 0, 0, 0, 0)

#define ST_DW(off, v) INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, off, v)
/* r0 = 6 + ctx->sample_period (r6): 7 on a sampling period of 1 */
#define T7_RET                                                                                     \
	INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 6, offsetof(struct bpf_perf_event_data, sample_period), 0), \
		ADD_K(0, 6), EXIT_INSN

static struct bpf_insn built[256];

/* main then sub in built[], CALL_LOCAL(SUB) and LD_FUNC(SUB) aimed at sub: the length */
static unsigned build(const struct bpf_insn *m, unsigned nm, const struct bpf_insn *sub, unsigned ns)
{
	memcpy(built, m, nm * sizeof(*m));
	memcpy(built + nm, sub, ns * sizeof(*sub));
	for (unsigned i = 0; i < nm; i++)
		if ((built[i].code == (BPF_JMP | BPF_CALL) && built[i].src_reg == BPF_PSEUDO_CALL) ||
		    (built[i].code == (BPF_LD | BPF_DW | BPF_IMM) && built[i].src_reg == BPF_PSEUDO_FUNC))
			if (built[i].imm == SUB)
				built[i].imm = (int)(nm - i - 1);
	return nm + ns;
}

/* Load built[0..n) as a perf_event program with func_info (kinds: NULL all static): fd or -errno */
static long load_fi(unsigned n, const uint8_t *kinds, uint32_t nkinds)
{
	long btf, fd = pb_prog_load(built, n, kinds, nkinds, logbuf, sizeof(logbuf), &btf);

	if (btf >= 0)
		close((int)btf);
	return fd;
}

static unsigned long long r2get(int res, uint32_t k)
{
	return (unsigned long long)res_get(res, k);
}

static void subprog_tail_calls(void)
{
	int res = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0);
	int pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	int t7, p7, miss, chain, entry, hier, err;
	long fd;
	uint64_t z = 0;
	unsigned n;

	if (!CHECK(res >= 0 && pa >= 0, "subprogram tail calls: result array and program array", "%s",
		   strerror(errno)))
		return;
	{
		/* slot 0: t7 counts its runs (res[8]), writes fp-16 and returns 6 + the ctx's
		 * sample_period (1) */
		struct bpf_insn t[] = { MOV_X(6, 1), ST_DW(-16, 5000), RES_INC(res, 8), T7_RET };

		t7 = load(BPF_PROG_TYPE_PERF_EVENT, t, N_INSNS(t));
	}
	{
		/* p7: res[0]++, fp-16 = 100, r7 = sub(ctx) + fp-16, res[1] += r7; sub: tail call
		 * slot 0, else 50.  The target runs on the subprogram's frame: fp-16 stays 100. */
		struct bpf_insn m[] = { MOV_X(6, 1), RES_INC(res, 0), ST_DW(-16, 100), MOV_X(1, 6),
					CALL_LOCAL(SUB), MOV_X(7, 0),
					INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, -16, 0),
					INSN(BPF_ALU64 | BPF_ADD | BPF_X, 7, 1, 0, 0), RES_ADD(res, 1, 7), RET0 };
		struct bpf_insn s[] = { MOV_X(6, 1), TAIL(pa, 0), MOV_K(0, 50), EXIT_INSN };
		struct bpf_insn sm[] = { MOV_X(6, 1), TAIL(pa, 3), TAIL(pa, 9), MOV_K(0, 50), EXIT_INSN };

		n = build(m, N_INSNS(m), s, N_INSNS(s));
		EXPECT_ERRNO(load(BPF_PROG_TYPE_PERF_EVENT, built, n), EINVAL,
			     "a subprogram's tail call without BTF: EINVAL");
		CHECK(strstr(logbuf, "tail_call is not allowed in subprogs without BTF"),
		      "... log: tail_call is not allowed in subprogs without BTF", "%s", logbuf);
		fd = load_fi(n, NULL, 0);
		p7 = (int)fd;
		CHECK(fd >= 0, "a subprogram's tail call with BTF func_info loads", "%ld\n%s", fd, logbuf);
		for (uint32_t k = 0; k < 16; k++)
			elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
		/* the misses: an empty slot, then an index past the end */
		n = build(m, N_INSNS(m), sm, N_INSNS(sm));
		miss = (int)load_fi(n, NULL, 0);
	}
	{
		/* chain: slot 1 (res[2]++, sub(ctx), res[3]++); its sub tail-calls slot 1 */
		struct bpf_insn m[] = { MOV_X(6, 1), RES_INC(res, 2), MOV_X(1, 6), CALL_LOCAL(SUB),
					RES_INC(res, 3), RET0 };
		struct bpf_insn s[] = { MOV_X(6, 1), TAIL(pa, 1), RET0 };
		/* entry: res[4]++, a sub tail-calling the chain */
		struct bpf_insn e[] = { MOV_X(6, 1), RES_INC(res, 4), MOV_X(1, 6), CALL_LOCAL(SUB), RET0 };
		/* hier (slot 2): res[5]++, sub (res[7]++, tail call t7), then tail-call itself;
		 * res[6]++ once that falls through */
		struct bpf_insn h[] = { MOV_X(6, 1), RES_INC(res, 5), MOV_X(1, 6), CALL_LOCAL(SUB),
					TAIL(pa, 2), RES_INC(res, 6), RET0 };
		struct bpf_insn hs[] = { MOV_X(6, 1), RES_INC(res, 7), TAIL(pa, 0), RET0 };

		chain = (int)load_fi(build(m, N_INSNS(m), s, N_INSNS(s)), NULL, 0);
		entry = (int)load_fi(build(e, N_INSNS(e), s, N_INSNS(s)), NULL, 0);
		hier = (int)load_fi(build(h, N_INSNS(h), hs, N_INSNS(hs)), NULL, 0);
	}
	if (!CHECK(t7 >= 0 && p7 >= 0 && miss >= 0 && chain >= 0 && entry >= 0 && hier >= 0,
		   "six programs with subprogram tail calls load", "%s\n%s", strerror(errno), logbuf))
		return;
	EXPECT_OK(update(pa, 0, t7, 0), "slot 0: a program returning 7");
	EXPECT_OK(update(pa, 1, chain, 0), "slot 1: the chain");
	EXPECT_OK(update(pa, 2, hier, 0), "slot 2: the hierarchy");

	err = prog_run_on_faults(p7, 4);
	CHECK(!err && r2get(res, 0) >= 4 && r2get(res, 8) == r2get(res, 0) &&
		      r2get(res, 1) == 107 * r2get(res, 0),
	      "the tail-called program returns 7 to the subprogram's caller (7 + 100 a run)",
	      "err %d runs %llu target %llu sum %llu", err, r2get(res, 0), r2get(res, 8), r2get(res, 1));
	for (uint32_t k = 0; k < 16; k++)
		elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
	err = prog_run_on_faults(miss, 4);
	CHECK(!err && r2get(res, 0) >= 4 && r2get(res, 8) == 0 && r2get(res, 1) == 150 * r2get(res, 0),
	      "in a subprogram, tail calls to an empty slot and past the end fall through (50 + 100)",
	      "err %d runs %llu target %llu sum %llu", err, r2get(res, 0), r2get(res, 8), r2get(res, 1));

	for (uint32_t k = 0; k < 16; k++)
		elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
	err = prog_run_on_faults(entry, 4);
	CHECK(!err && r2get(res, 4) >= 4 && r2get(res, 2) == 33 * r2get(res, 4) &&
		      r2get(res, 3) == r2get(res, 2),
	      "tail calls from subprograms nest: 33 a run, each program returning to its caller",
	      "err %d runs %llu chain %llu returned %llu", err, r2get(res, 4), r2get(res, 2),
	      r2get(res, 3));

	for (uint32_t k = 0; k < 16; k++)
		elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
	err = prog_run_on_faults(hier, 4);
	CHECK(!err && r2get(res, 6) >= 4 && r2get(res, 5) == 34 * r2get(res, 6) &&
		      r2get(res, 7) == r2get(res, 5) && r2get(res, 8) == 33 * r2get(res, 6),
	      "a subprogram's tail call counts inside the call only: 34 main runs, 33 targets a run",
	      "err %d runs %llu main %llu sub %llu target %llu", err, r2get(res, 6), r2get(res, 5),
	      r2get(res, 7), r2get(res, 8));
	close(t7), close(p7), close(miss), close(chain), close(entry), close(hier);

	{
		/* the stack of the frames before a tail-calling subprogram: under 256 bytes */
		struct bpf_insn m256[] = { INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -256, 0), MOV_X(6, 1),
					   CALL_LOCAL(SUB), RET0 };
		struct bpf_insn m224[] = { INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -224, 0), MOV_X(6, 1),
					   CALL_LOCAL(SUB), RET0 };
		struct bpf_insn s[] = { MOV_X(6, 1), TAIL(pa, 0), RET0 };
		/* main (32) calls s2 (224 bytes) which calls s (the tail call): 256 */
		struct bpf_insn m2[] = { INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_X(6, 1),
					 CALL_LOCAL(SUB), RET0 };
		struct bpf_insn s2[] = { INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -224, 0), CALL_LOCAL(2),
					 RET0, MOV_X(6, 1), TAIL(pa, 0), RET0 };

		fd = load_fi(build(m256, N_INSNS(m256), s, N_INSNS(s)), NULL, 0);
		CHECK(fd == -EACCES && strstr(logbuf, "tail_calls are not allowed when call stack of "
						      "previous frames is 256 bytes. Too large\n"),
		      "a tail-calling subprogram under a 256-byte frame: EACCES, 256 bytes. Too large",
		      "%ld\n%s", fd, logbuf);
		if (fd >= 0)
			close((int)fd);
		fd = load_fi(build(m224, N_INSNS(m224), s, N_INSNS(s)), NULL, 0);
		CHECK(fd >= 0, "... under a 224-byte frame: loads", "%ld\n%s", fd, logbuf);
		if (fd >= 0)
			close((int)fd);
		fd = load_fi(build(m2, N_INSNS(m2), s2, N_INSNS(s2)), NULL, 0);
		CHECK(fd == -EACCES && strstr(logbuf, "previous frames is 256 bytes. Too large\n"),
		      "... under frames of 8 (32) and 224 bytes: EACCES, 256 bytes", "%ld\n%s", fd, logbuf);
		if (fd >= 0)
			close((int)fd);
	}
	{
		/* a bpf_loop callback has no ctx to pass: its tail call is refused */
		struct bpf_insn m[] = { MOV_X(6, 1), MOV_K(1, 4), LD_FUNC(2, SUB), MOV_K(3, 0), MOV_K(4, 0),
					CALL(BPF_FUNC_loop), RET0 };
		struct bpf_insn cb[] = { MOV_X(1, 2), LD_MAP(2, pa), MOV_K(3, 0), CALL(BPF_FUNC_tail_call),
					 RET0 };

		fd = load_fi(build(m, N_INSNS(m), cb, N_INSNS(cb)), NULL, 0);
		CHECK(fd == -EACCES && strstr(logbuf, "R1 type=scalar expected=ctx"),
		      "a bpf_loop callback's tail call (r1 not ctx): EACCES", "%ld\n%s", fd, logbuf);
		if (fd >= 0)
			close((int)fd);
	}
	{
		/* a global g(ctx, x, p) tail-calling t7: main stores g(ctx, 0, NULL) + 100 */
		struct bpf_insn m[] = { MOV_X(6, 1), RES_INC(res, 0), MOV_X(1, 6), MOV_K(2, 0), MOV_K(3, 0),
					CALL_LOCAL(SUB), MOV_X(7, 0), ADD_K(7, 100), RES_ADD(res, 1, 7),
					RET0 };
		struct bpf_insn g[] = { MOV_X(6, 1), TAIL(pa, 0), MOV_K(0, 50), EXIT_INSN };
		struct bpf_insn t[] = { MOV_X(6, 1), ST_DW(-16, 5000), RES_INC(res, 8), T7_RET };

		t7 = load(BPF_PROG_TYPE_PERF_EVENT, t, N_INSNS(t));
		EXPECT_OK(update(pa, 0, t7, 0), "slot 0: a program returning 7, again");
		fd = load_fi(build(m, N_INSNS(m), g, N_INSNS(g)), (const uint8_t[]){ 0, PB_G_CTX_INT_PTR }, 2);
		CHECK(fd >= 0, "a global function's tail call loads", "%ld\n%s", fd, logbuf);
		for (uint32_t k = 0; k < 16; k++)
			elem(BPF_MAP_UPDATE_ELEM, res, k, &z, 0);
		err = fd >= 0 ? prog_run_on_faults((int)fd, 4) : -EBADF;
		CHECK(!err && r2get(res, 0) >= 4 && r2get(res, 8) == r2get(res, 0) &&
			      r2get(res, 1) == 107 * r2get(res, 0),
		      "... and runs: the global function's caller gets 7 (+ 100)",
		      "err %d runs %llu target %llu sum %llu", err, r2get(res, 0), r2get(res, 8),
		      r2get(res, 1));
		if (fd >= 0)
			close((int)fd);
		close(t7);
	}
	close(pa);
	close(res);
}

int main(void)
{
	int res, pa, rb, entry, target, self, miss, withsub, err;

	tap_init("t_bpf_tailcall", 60);
	map_abi();
	res = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 8, 0);
	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	rb = map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	if (!CHECK(res >= 0 && pa >= 0 && rb >= 0, "result array, program array and ring buffer", "%s",
		   strerror(errno)))
		return tap_done();
	verifier(pa, res, rb);
	subprog_tail_calls();
	{
		/* entry: res[0]++, tail call slot 1 (res[1]++), and res[2]++ only if it came back */
		struct bpf_insn e[] = { MOV_X(6, 1), RES_INC(res, 0), TAIL(pa, 1), RES_INC(res, 2), RET0 };
		struct bpf_insn t[] = { MOV_X(6, 1), RES_INC(res, 1), RET0 };
		/* self: res[3]++ and tail call itself; res[4]++ once the count is spent */
		struct bpf_insn s[] = { MOV_X(6, 1), RES_INC(res, 3), TAIL(pa, 2), RES_INC(res, 4), RET0 };
		/* misses: index 7 (past the end) then slot 3 (empty) fall through: res[5], res[6] */
		struct bpf_insn m[] = { MOV_X(6, 1), RES_INC(res, 7), TAIL(pa, 7), RES_INC(res, 5),
					TAIL(pa, 3), RES_INC(res, 6), RET0 };

		/* withsub: calls a subprogram (res[3]++), then tail calls slot 1; res[2]++ if back */
		struct bpf_insn w[] = { MOV_X(6, 1), RES_INC(res, 0), CALL_LOCAL(16), TAIL(pa, 1),
					RES_INC(res, 2), RET0, RES_INC(res, 3), MOV_K(0, 9), EXIT_INSN };

		withsub = load(BPF_PROG_TYPE_PERF_EVENT, w, N_INSNS(w));
		CHECK(withsub >= 0, "a program with a subprogram tail-calls from its main program",
		      "%s\n%s", strerror(errno), logbuf);
		entry = load(BPF_PROG_TYPE_PERF_EVENT, e, N_INSNS(e));
		target = load(BPF_PROG_TYPE_PERF_EVENT, t, N_INSNS(t));
		self = load(BPF_PROG_TYPE_PERF_EVENT, s, N_INSNS(s));
		miss = load(BPF_PROG_TYPE_PERF_EVENT, m, N_INSNS(m));
	}
	if (!CHECK(entry >= 0 && target >= 0 && self >= 0 && miss >= 0, "four tail-calling programs load",
		   "%s\n%s", strerror(errno), logbuf))
		return tap_done();
	EXPECT_OK(update(pa, 1, target, 0), "slot 1: the target");
	EXPECT_OK(update(pa, 2, self, 0), "slot 2: the self-calling program");

	res_clear(res);
	err = prog_run_on_faults(entry, 8);
	CHECK(!err, "entry runs on page faults", "err %d", err);
	CHECK(res_get(res, 0) >= 8 && res_get(res, 1) == res_get(res, 0) && res_get(res, 2) == 0,
	      "a tail call runs the slot's program and does not come back",
	      "entry %llu target %llu came back %llu", (unsigned long long)res_get(res, 0),
	      (unsigned long long)res_get(res, 1), (unsigned long long)res_get(res, 2));

	res_clear(res);
	err = withsub >= 0 ? prog_run_on_faults(withsub, 4) : -EBADF;
	CHECK(!err && res_get(res, 0) >= 4 && res_get(res, 3) == res_get(res, 0) &&
		      res_get(res, 1) == res_get(res, 0) && res_get(res, 2) == 0,
	      "after its subprogram returns, the main program's tail call runs the target",
	      "err %d runs %llu sub %llu target %llu came back %llu", err,
	      (unsigned long long)res_get(res, 0), (unsigned long long)res_get(res, 3),
	      (unsigned long long)res_get(res, 1), (unsigned long long)res_get(res, 2));

	res_clear(res);
	err = prog_run_on_faults(self, 4);
	CHECK(!err, "self runs on page faults", "err %d", err);
	CHECK(res_get(res, 4) >= 4 && res_get(res, 3) == 34 * res_get(res, 4),
	      "a program tail-calling itself runs 34 times a run, then falls through (33 tail calls)",
	      "runs %llu, fell through %llu", (unsigned long long)res_get(res, 3),
	      (unsigned long long)res_get(res, 4));

	res_clear(res);
	err = prog_run_on_faults(miss, 4);
	CHECK(!err, "miss runs on page faults", "err %d", err);
	CHECK(res_get(res, 7) >= 4 && res_get(res, 5) == res_get(res, 7) && res_get(res, 6) == res_get(res, 7),
	      "tail calls past the end and to an empty slot fall through", "runs %llu, %llu, %llu",
	      (unsigned long long)res_get(res, 7), (unsigned long long)res_get(res, 5),
	      (unsigned long long)res_get(res, 6));

	/* the last user fd of the array closes: Linux empties every slot (map_release_uref) */
	close(pa);
	usleep(100 * 1000); /* Linux does it from a work item */
	res_clear(res);
	err = prog_run_on_faults(entry, 4);
	CHECK(!err && res_get(res, 0) >= 4 && res_get(res, 1) == 0 && res_get(res, 2) == res_get(res, 0),
	      "closing the array's last fd empties its slots: the tail call falls through",
	      "err %d entry %llu target %llu fell through %llu", err, (unsigned long long)res_get(res, 0),
	      (unsigned long long)res_get(res, 1), (unsigned long long)res_get(res, 2));
	close(entry);
	close(target);
	close(self);
	close(miss);
	if (withsub >= 0)
		close(withsub);
	close(res);
	close(rb);
	return tap_done();
}
