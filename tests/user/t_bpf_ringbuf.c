/* t_bpf_ringbuf: BPF_MAP_TYPE_RINGBUF as libbpf's ring_buffer uses it: creation rules, the
 * mmap layout (a writable consumer page, a read-only producer page and the data twice), records
 * written by bpf_ringbuf_output from a BPF_PROG_TYPE_SYSCALL program (PROG_TEST_RUN) with their
 * header {len, pg_off}, -EAGAIN when full, a record that wraps read in one piece, ringbuf_query,
 * poll and epoll readiness, EINVAL for a key and ENOTSUPP for element access from the syscall, the verifier's map-type check,
 * and mprotect refusing to make a read-only bpf map mapping writable.  bpf_ringbuf_reserve with
 * submit and discard: the records and their DISCARD bit, NULL for flags or no room, a reserved
 * record that wraps, and the verifier's reference tracking (null check, leaks, bounds, use after
 * submit, double submit, inner pointers).
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_bpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096
#define RB_SIZE (4 * PG)
#define ENOTSUPP_ 524

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define ST_DW(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static char logbuf[8192];

/* A SYSCALL program (Linux: "Syscall programs can only be sleepable"), its log in logbuf */
static int prog_load(const struct bpf_insn *insns, int n)
{
	return bpf_prog_new(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, insns, (uint32_t)n, logbuf, sizeof(logbuf));
}

/* Run a SYSCALL program once: its r0, or -1 with errno. */
static long long run(int prog)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = prog;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0)
		return -1;
	return (int32_t)a.test.retval;
}

/*
 * Run prog (one 16-byte record {magic, tag} each run), consuming each record, until one wraps
 * past the end of the data; it must read in one piece through the second copy of the data.
 */
static void wrap_check(int prog, uint64_t *cons, const volatile uint64_t *prod, const uint8_t *data,
		       uint64_t magic, uint64_t tag, const char *what)
{
	for (int i = 0; i < 1000; i++) {
		uint64_t at = *prod;

		if (run(prog) != 0)
			break;
		if ((at % RB_SIZE) + 24 > RB_SIZE) {
			const uint8_t *rec = data + at % RB_SIZE; /* the second copy continues it */
			const uint64_t *body = (const uint64_t *)(rec + 8);

			CHECK(((const uint32_t *)rec)[0] == 16 && body[0] == magic && body[1] == tag, what,
			      "len %#x", ((const uint32_t *)rec)[0]);
			__atomic_store_n(cons, *prod, __ATOMIC_RELEASE);
			return;
		}
		__atomic_store_n(cons, *prod, __ATOMIC_RELEASE);
	}
	tap_fail(what, "none wrapped");
}

/* bpf_ringbuf_output(map, fp-16, 16 bytes {0x1111.., n}, flags) */
static int output_prog(int map, int32_t tag, int64_t flags)
{
	struct bpf_insn p[] = {
		ST_DW(BPF_REG_10, -16, 0x11111111),
		ST_DW(BPF_REG_10, -8, tag),
		LD_MAP(BPF_REG_1, map),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -16),
		MOV64_IMM(BPF_REG_3, 16),
		MOV64_IMM(BPF_REG_4, (int32_t)flags),
		CALL(BPF_FUNC_ringbuf_output),
		EXIT(),
	};
	return prog_load(p, sizeof(p) / sizeof(p[0]));
}

static int query_prog(int map, int32_t what)
{
	struct bpf_insn p[] = {
		LD_MAP(BPF_REG_1, map),
		MOV64_IMM(BPF_REG_2, what),
		CALL(BPF_FUNC_ringbuf_query),
		EXIT(),
	};
	return prog_load(p, sizeof(p) / sizeof(p[0]));
}

static void t_create(void)
{
	int fd;

	EXPECT_ERRNO(bpf_map_new(BPF_MAP_TYPE_RINGBUF, 4, 0, PG, 0), EINVAL, "RINGBUF with key_size 4 -> EINVAL");
	EXPECT_ERRNO(bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 8, PG, 0), EINVAL, "RINGBUF with value_size 8 -> EINVAL");
	EXPECT_ERRNO(bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, 3 * PG, 0), EINVAL, "RINGBUF of 3 pages -> EINVAL");
	EXPECT_ERRNO(bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, PG / 2, 0), EINVAL, "RINGBUF of half a page -> EINVAL");
	EXPECT_ERRNO(bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, PG, BPF_F_MMAPABLE), EINVAL,
		     "RINGBUF with BPF_F_MMAPABLE -> EINVAL");
	fd = bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, PG, 0);
	tap_ok(fd, errno, "RINGBUF of one page");
	if (fd >= 0)
		close(fd);
}

static void t_ring(void)
{
	int map = bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, RB_SIZE, 0);

	if (!tap_ok(map, errno, "RINGBUF of 4 pages"))
		return;
	/* the mmap rules */
	errno = 0;
	void *bad = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, map, 0);
	CHECK(bad == MAP_FAILED && errno == EPERM, "writable mapping beyond the consumer page -> EPERM",
	      "%p errno %d", bad, errno);
	bad = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, map, PG);
	CHECK(bad == MAP_FAILED && errno == EPERM, "writable mapping of the producer page -> EPERM", "%p errno %d",
	      bad, errno);
	bad = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, map, 0);
	CHECK(bad == MAP_FAILED && errno == EINVAL, "private mapping -> EINVAL", "%p errno %d", bad, errno);
	bad = mmap(NULL, 2 * PG + 2 * RB_SIZE, PROT_READ, MAP_SHARED, map, PG);
	CHECK(bad == MAP_FAILED && errno == EINVAL, "mapping past the doubled data -> EINVAL", "%p errno %d", bad,
	      errno);
	uint64_t *cons = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, map, 0);
	uint8_t *ro = mmap(NULL, PG + 2 * RB_SIZE, PROT_READ, MAP_SHARED, map, PG);

	if (!CHECK(cons != MAP_FAILED && ro != MAP_FAILED,
		   "libbpf's mappings: consumer page read-write, producer and 2x data read-only", "errno %d", errno))
		goto out_map;
	EXPECT_ERRNO(mprotect(ro, PG, PROT_READ | PROT_WRITE), EACCES,
		     "mprotect of the read-only mapping to PROT_WRITE -> EACCES");
	volatile uint64_t *prod = (volatile uint64_t *)ro;
	uint8_t *data = ro + PG;

	int out = output_prog(map, 7, 0), q = query_prog(map, BPF_RB_AVAIL_DATA);
	int qsize = query_prog(map, BPF_RB_RING_SIZE);

	if (!CHECK(out >= 0 && q >= 0 && qsize >= 0, "SYSCALL programs calling ringbuf_output/query load",
		   "errno %d: %s", errno, logbuf))
		goto out_maps;
	struct pollfd pfd = { .fd = map, .events = POLLIN };

	CHECK(poll(&pfd, 1, 0) == 0, "empty ring: poll says nothing", "revents %#x", pfd.revents);
	long long r = run(out);

	CHECK(r == 0 && *prod == 24, "ringbuf_output of 16 bytes: 0, producer at 24 (8-byte header)",
	      "r0 %lld, producer %llu", r, (unsigned long long)*prod);
	const uint32_t *h = (const uint32_t *)data;

	CHECK(h[0] == 16 && h[1] == 3 && ((const uint64_t *)data)[1] == 0x11111111 &&
		      ((const uint64_t *)data)[2] == 7,
	      "the record: header {len 16, pg_off 3} and the 16 bytes", "len %#x pg_off %u", h[0], h[1]);
	CHECK(run(q) == 24 && run(qsize) == RB_SIZE, "ringbuf_query: 24 bytes available, ring size 16384",
	      "avail %lld size %lld", run(q), run(qsize));
	pfd.revents = 0;
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN), "unread data: poll says POLLIN", "revents %#x",
	      pfd.revents);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN }, got;

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, map, &ev) == 0)
		CHECK(epoll_wait(ep, &got, 1, 0) == 1 && (got.events & EPOLLIN), "epoll on the map fd: EPOLLIN",
		      "errno %d", errno);
	else
		tap_fail("epoll on the map fd: EPOLLIN", "epoll_ctl: errno %d", errno);
	/* read it: consumer = producer */
	__atomic_store_n(cons, *prod, __ATOMIC_RELEASE);
	pfd.revents = 0;
	CHECK(poll(&pfd, 1, 0) == 0 && run(q) == 0, "all read: poll quiet, nothing available", "revents %#x",
	      pfd.revents);
	/* fill it: 16384 / 24 records fit but one: the producer may not get a whole ring ahead */
	int n = 0;

	while (run(out) == 0 && n < 1000)
		n++;
	CHECK(n == (RB_SIZE - 8) / 24 && run(out) == -EAGAIN, "a full ring: -EAGAIN after 682 records",
	      "%d records, then %lld", n, run(out));
	/* free it all but the last record; fill to the end: the next record wraps */
	uint64_t p = *prod;

	__atomic_store_n(cons, p, __ATOMIC_RELEASE);
	wrap_check(out, cons, prod, data, 0x11111111, 7,
		   "a record that wraps reads in one piece through the doubled data");
	/* flags */
	int badflags = output_prog(map, 1, 4);

	CHECK(badflags >= 0 && run(badflags) == -EINVAL, "ringbuf_output with unknown flags -> -EINVAL",
	      "load %d run %lld", badflags, badflags >= 0 ? run(badflags) : 0);
	/* the syscall side has no elements */
	uint32_t k = 0, v = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&k;
	a.value = (uintptr_t)&v;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_LOOKUP_ELEM, &a), EINVAL, "MAP_LOOKUP_ELEM on a RINGBUF with a key -> EINVAL");
	a.key = 0;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_LOOKUP_ELEM, &a), ENOTSUPP_, "MAP_LOOKUP_ELEM on a RINGBUF -> ENOTSUPP (524)");
	EXPECT_ERRNO(sys_bpf(BPF_MAP_UPDATE_ELEM, &a), ENOTSUPP_, "MAP_UPDATE_ELEM on a RINGBUF -> ENOTSUPP (524)");
	EXPECT_ERRNO(sys_bpf(BPF_MAP_DELETE_ELEM, &a), EINVAL,
		     "MAP_DELETE_ELEM with the value field set (past its last field, key) -> EINVAL");
	a.value = 0;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_DELETE_ELEM, &a), ENOTSUPP_, "MAP_DELETE_ELEM on a RINGBUF -> ENOTSUPP (524)");
	if (badflags >= 0)
		close(badflags);
	if (ep >= 0)
		close(ep);
out_maps:
	if (out >= 0)
		close(out);
	if (q >= 0)
		close(q);
	if (qsize >= 0)
		close(qsize);
	munmap(cons, PG);
	munmap(ro, PG + 2 * RB_SIZE);
out_map:
	close(map);
}

/* ---- bpf_ringbuf_reserve / submit / discard ---- */

#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
/* r0 = bpf_ringbuf_reserve(map, size, flags) */
#define RESERVE(map, size, flags) LD_MAP(BPF_REG_1, map), MOV64_IMM(BPF_REG_2, size), \
	MOV64_IMM(BPF_REG_3, flags), CALL(BPF_FUNC_ringbuf_reserve)

/* reserve size bytes; on NULL return 1; else write {0x2222.., tag} (if size >= 16) and
 * submit (or discard) with flags 0 and return 0 */
static int reserve_prog(int map, int32_t size, int32_t rflags, int32_t tag, bool discard)
{
	struct bpf_insn p[] = {
		RESERVE(map, size, rflags),
		JEQ_IMM(BPF_REG_0, 0, 7),
		ST_DW(BPF_REG_0, 0, 0x22222222),
		ST_DW(BPF_REG_0, 8, tag),
		MOV64_REG(BPF_REG_1, BPF_REG_0),
		MOV64_IMM(BPF_REG_2, 0),
		CALL(discard ? BPF_FUNC_ringbuf_discard : BPF_FUNC_ringbuf_submit),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
		MOV64_IMM(BPF_REG_0, 1),
		EXIT(),
	};
	if (size < 16) { /* no body to write */
		p[6] = MOV64_IMM(BPF_REG_2, 0); /* pad: the jump still lands on "return 1" */
		p[7] = MOV64_IMM(BPF_REG_2, 0);
	}
	return prog_load(p, sizeof(p) / sizeof(p[0]));
}

static void t_reserve(void)
{
	int map = bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, RB_SIZE, 0);

	if (!tap_ok(map, errno, "RINGBUF for reserve"))
		return;
	uint64_t *cons = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, map, 0);
	const uint8_t *ro = mmap(NULL, PG + 2 * RB_SIZE, PROT_READ, MAP_SHARED, map, PG);

	if (!CHECK(cons != MAP_FAILED && ro != MAP_FAILED, "mapping the ring", "errno %d", errno))
		goto out_map;
	const volatile uint64_t *prod = (const volatile uint64_t *)ro;
	const uint8_t *data = ro + PG;
	int sub = reserve_prog(map, 16, 0, 5, false);

	if (!CHECK(sub >= 0, "reserve, write, submit: loads", "errno %d log %s", errno, logbuf))
		goto out_maps;
	int dis = reserve_prog(map, 16, 0, 6, true);

	CHECK(dis >= 0, "reserve, write, discard: loads", "errno %d log %s", errno, logbuf);
	CHECK(run(sub) == 0 && *prod == 24, "reserve + submit of 16 bytes: producer at 24", "prod %llu",
	      (unsigned long long)*prod);
	const uint32_t *h = (const uint32_t *)data;

	CHECK(h[0] == 16 && h[1] == 3 && ((const uint64_t *)data)[1] == 0x22222222 &&
		      ((const uint64_t *)data)[2] == 5,
	      "the submitted record: header {16, pg_off 3}, the body the program wrote",
	      "hdr %#x %u", h[0], h[1]);
	CHECK(dis >= 0 && run(dis) == 0 && *prod == 48 && h[6] == (16u | 1u << 30) && h[7] == 3,
	      "reserve + discard: the record stays, its length has BPF_RINGBUF_DISCARD_BIT",
	      "prod %llu hdr %#x", (unsigned long long)*prod, h[6]);
	int flags = reserve_prog(map, 16, 1, 0, false), big = reserve_prog(map, RB_SIZE, 0, 0, false);

	CHECK(flags >= 0 && run(flags) == 1 && *prod == 48, "reserve with flags -> NULL, nothing written",
	      "load %d", flags);
	CHECK(big >= 0 && run(big) == 1 && *prod == 48, "reserve of the ring's size -> NULL", "load %d", big);
	int zero = reserve_prog(map, 0, 0, 0, false);

	CHECK(zero >= 0 && run(zero) == 0 && *prod == 56 && h[12] == 0,
	      "reserve of 0 bytes + submit: an 8-byte record", "load %d prod %llu hdr %#x log %s", zero,
	      (unsigned long long)*prod, h[12], zero < 0 ? logbuf : "");
	/* full: reserve gives NULL; then consume and go round until a reserved record wraps */
	int n = 0;

	while (run(sub) == 0 && n < 1000)
		n++;
	CHECK(n == (RB_SIZE - 8 - 56) / 24 && run(sub) == 1, "a full ring: reserve -> NULL",
	      "%d records", n);
	__atomic_store_n(cons, *prod, __ATOMIC_RELEASE);
	wrap_check(sub, cons, prod, data, 0x22222222, 5,
		   "a reserved record that wraps: the program's bytes, in one piece");
	/* the verifier's reference tracking */
	struct {
		const char *what;
		struct bpf_insn p[16];
		int n, err;
		const char *log;
	} bad[] = {
		{ "reserve without a null check -> EACCES",
		  { RESERVE(map, 16, 0), ST_DW(BPF_REG_0, 0, 1), MOV64_IMM(BPF_REG_0, 0), EXIT() }, 8,
		  EACCES, "invalid mem access 'alloc_mem_or_null'" },
		{ "a reservation never submitted -> EINVAL",
		  { RESERVE(map, 16, 0), JEQ_IMM(BPF_REG_0, 0, 1), ST_DW(BPF_REG_0, 0, 1),
		    MOV64_IMM(BPF_REG_0, 0), EXIT() },
		  9, EINVAL, "Unreleased reference id=" },
		{ "a store past the reserved size -> EACCES",
		  { RESERVE(map, 16, 0), JEQ_IMM(BPF_REG_0, 0, 4), ST_DW(BPF_REG_0, 16, 1),
		    MOV64_REG(BPF_REG_1, BPF_REG_0), MOV64_IMM(BPF_REG_2, 0),
		    CALL(BPF_FUNC_ringbuf_submit), MOV64_IMM(BPF_REG_0, 0), EXIT() },
		  12, EACCES, "invalid access to memory, mem_size=16 off=16 size=8" },
		{ "a size that is not a constant -> EACCES",
		  { LDX_DW(BPF_REG_2, BPF_REG_1, 0), LD_MAP(BPF_REG_1, map), MOV64_IMM(BPF_REG_3, 0),
		    CALL(BPF_FUNC_ringbuf_reserve), MOV64_IMM(BPF_REG_0, 0), EXIT() },
		  7, EACCES, "R2 is not a known constant" },
		{ "a store after submit -> EACCES",
		  { RESERVE(map, 16, 0), JEQ_IMM(BPF_REG_0, 0, 5), MOV64_REG(BPF_REG_6, BPF_REG_0),
		    MOV64_REG(BPF_REG_1, BPF_REG_0), MOV64_IMM(BPF_REG_2, 0),
		    CALL(BPF_FUNC_ringbuf_submit), ST_DW(BPF_REG_6, 0, 1), MOV64_IMM(BPF_REG_0, 0),
		    EXIT() },
		  13, EACCES, "R6 invalid mem access 'scalar'" },
		{ "submitting twice -> EACCES",
		  { RESERVE(map, 16, 0), JEQ_IMM(BPF_REG_0, 0, 7), MOV64_REG(BPF_REG_6, BPF_REG_0),
		    MOV64_REG(BPF_REG_1, BPF_REG_0), MOV64_IMM(BPF_REG_2, 0),
		    CALL(BPF_FUNC_ringbuf_submit), MOV64_REG(BPF_REG_1, BPF_REG_6),
		    MOV64_IMM(BPF_REG_2, 0), CALL(BPF_FUNC_ringbuf_submit), MOV64_IMM(BPF_REG_0, 0),
		    EXIT() },
		  15, EACCES, "R1 type=scalar expected=alloc_mem" },
		{ "submitting an inner pointer -> EACCES",
		  { RESERVE(map, 16, 0), JEQ_IMM(BPF_REG_0, 0, 4), MOV64_REG(BPF_REG_1, BPF_REG_0),
		    ADD_IMM(BPF_REG_1, 8), MOV64_IMM(BPF_REG_2, 0), CALL(BPF_FUNC_ringbuf_submit),
		    MOV64_IMM(BPF_REG_0, 0), EXIT() },
		  12, EACCES, "dereference of modified alloc_mem ptr R1 off=8 disallowed" },
		{ "submitting a stack pointer -> EACCES",
		  { MOV64_REG(BPF_REG_1, BPF_REG_10), ADD_IMM(BPF_REG_1, -8), MOV64_IMM(BPF_REG_2, 0),
		    CALL(BPF_FUNC_ringbuf_submit), MOV64_IMM(BPF_REG_0, 0), EXIT() },
		  6, EACCES, "R1 type=fp expected=alloc_mem" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = prog_load(bad[i].p, bad[i].n);

		CHECK(fd < 0 && errno == bad[i].err && strstr(logbuf, bad[i].log), bad[i].what,
		      "fd %d errno %d log: %s", fd, errno, logbuf);
		if (fd >= 0)
			close(fd);
	}
	/* a NULL check that releases: return on NULL, discard otherwise */
	struct bpf_insn ok[] = {
		RESERVE(map, 16, 0), INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 2, 0),
		MOV64_IMM(BPF_REG_0, 0), EXIT(), MOV64_REG(BPF_REG_1, BPF_REG_0),
		MOV64_IMM(BPF_REG_2, 0), CALL(BPF_FUNC_ringbuf_discard), MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	int fd = prog_load(ok, sizeof(ok) / sizeof(ok[0]));

	CHECK(fd >= 0, "the NULL branch holds no reference: loads", "errno %d log %s", errno, logbuf);
	if (fd >= 0)
		close(fd);
	if (flags >= 0)
		close(flags);
	if (big >= 0)
		close(big);
	if (zero >= 0)
		close(zero);
	if (dis >= 0)
		close(dis);
	close(sub);
out_maps:
	munmap(cons, PG);
	munmap((void *)ro, PG + 2 * RB_SIZE);
out_map:
	close(map);
}

static void t_other_maps(void)
{
	int arr = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);

	if (!tap_ok(arr, errno, "ARRAY map for the type checks"))
		return;
	EXPECT_ERRNO(output_prog(arr, 1, 0), EINVAL, "ringbuf_output on an ARRAY map -> EINVAL (verifier)");
	CHECK(strstr(logbuf, "cannot pass map_type 2 into func bpf_ringbuf_output#130") != NULL,
	      "the verifier log names the map type and the helper", "log: %s", logbuf);
	struct pollfd pfd = { .fd = arr, .events = POLLIN };

	CHECK(poll(&pfd, 1, 0) == 1 && pfd.revents == POLLERR, "poll on a map that is not a ring: POLLERR",
	      "revents %#x", pfd.revents);
	close(arr);
	/* a read-only mapping of a frozen mmapable array stays read-only */
	int m = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 512, BPF_F_MMAPABLE);

	if (!tap_ok(m, errno, "mmapable ARRAY"))
		return;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = m;
	sys_bpf(BPF_MAP_FREEZE, &a);
	void *ro = mmap(NULL, PG, PROT_READ, MAP_SHARED, m, 0);

	if (CHECK(ro != MAP_FAILED, "read-only mapping of the frozen array", "errno %d", errno)) {
		EXPECT_ERRNO(mprotect(ro, PG, PROT_READ | PROT_WRITE), EACCES,
			     "mprotect of a frozen array's mapping to PROT_WRITE -> EACCES");
		munmap(ro, PG);
	}
	close(m);
}

int main(void)
{
	tap_init("t_bpf_ringbuf", 60);
	t_create();
	t_ring();
	t_reserve();
	t_other_maps();
	return tap_done();
}
