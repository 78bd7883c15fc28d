/*
 * test_perf_sideband.c - byte-for-byte tests of perf/sideband.c: COMM (with COMM_EXEC),
 * MMAP and MMAP2 (misc bits, filename padding), FORK/EXIT, THROTTLE/UNTHROTTLE, each with and
 * without the sample_id_all trailer, and the size-query convention.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../perf/perf_internal.h"

struct exp {
	uint8_t b[4096];
	size_t n;
};

static void e64(struct exp *e, uint64_t v)
{
	memcpy(e->b + e->n, &v, 8);
	e->n += 8;
}

static void e32(struct exp *e, uint32_t v)
{
	memcpy(e->b + e->n, &v, 4);
	e->n += 4;
}

static void estr(struct exp *e, const char *s, size_t padded)
{
	memset(e->b + e->n, 0, padded);
	memcpy(e->b + e->n, s, strlen(s));
	e->n += padded;
}

static void ehdr(struct exp *e, uint32_t type, uint16_t misc, uint16_t size)
{
	e32(e, type);
	memcpy(e->b + e->n, &misc, 2);
	memcpy(e->b + e->n + 2, &size, 2);
	e->n += 4;
}

/* perf record's sample_type (IP|TID|TIME) with sample_id_all: trailer {pid,tid},{time} */
static const struct perf_sb_target T_REC = {
    .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
    .sample_id_all = true,
    .sid = {.pid = 300, .tid = 301, .time = 999, .id = 5, .stream_id = 6, .cpu = 1},
};
static const struct perf_sb_target T_NONE = {.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID};
static const struct perf_sb_target T_ALL = {
    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU,
    .sample_id_all = true,
    .sid = {.pid = 1, .tid = 2, .time = 3, .id = 4, .stream_id = 5, .cpu = 6},
};

static void trailer_rec(struct exp *e)
{
	e32(e, 300);
	e32(e, 301);
	e64(e, 999);
}

static void check(const struct exp *e, const uint8_t *buf, size_t size)
{
	assert_int_equal(size, e->n);
	assert_memory_equal(buf, e->b, e->n);
}

static void test_comm(void **state)
{
	uint8_t buf[256];
	struct exp e = {.n = 0};
	size_t n;

	/* exec: misc COMM_EXEC (0x2000) only, as perf report -D shows */
	ehdr(&e, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 8 + 8 + 8 + 16);
	e32(&e, 300);
	e32(&e, 301);
	estr(&e, "true", 8);
	trailer_rec(&e);
	n = perf_sb_comm(buf, sizeof(buf), &T_REC, 300, 301, "true", true);
	check(&e, buf, n);

	/* prctl rename: misc 0, no trailer; a 7-char name pads to 8, 8 chars to 16 */
	e.n = 0;
	ehdr(&e, PERF_RECORD_COMM, 0, 24);
	e32(&e, 7);
	e32(&e, 8);
	estr(&e, "1234567", 8);
	n = perf_sb_comm(buf, sizeof(buf), &T_NONE, 7, 8, "1234567", false);
	check(&e, buf, n);
	e.n = 0;
	ehdr(&e, PERF_RECORD_COMM, 0, 32);
	e32(&e, 7);
	e32(&e, 8);
	estr(&e, "12345678", 16);
	n = perf_sb_comm(buf, sizeof(buf), &T_NONE, 7, 8, "12345678", false);
	check(&e, buf, n);

	/* longer than TASK_COMM_LEN - 1: cut to 15 characters */
	e.n = 0;
	ehdr(&e, PERF_RECORD_COMM, 0, 32);
	e32(&e, 7);
	e32(&e, 8);
	estr(&e, "abcdefghijklmno", 16);
	n = perf_sb_comm(buf, sizeof(buf), &T_NONE, 7, 8, "abcdefghijklmnopqrst", false);
	check(&e, buf, n);

	/* size query: len 0 writes nothing */
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(perf_sb_comm(buf, 0, &T_REC, 1, 1, "true", true), 40);
	assert_int_equal(buf[0], 0x5a);
}

static void test_mmap2(void **state)
{
	uint8_t buf[512];
	struct exp e = {.n = 0};
	struct perf_mmap_info m = {
	    .pid = 300,
	    .tid = 300,
	    .addr = 0xaaaab0000000ull,
	    .len = 0x2000,
	    .pgoff = 0,
	    .maj = 8,
	    .min = 1,
	    .ino = 123456,
	    .ino_generation = 7,
	    .prot = 5 /* r-x */,
	    .flags = 2 /* MAP_PRIVATE */,
	    .filename = "/usr/bin/true",
	    .exec = true,
	    .user = true,
	};
	size_t n;

	/* 8 header + 8 pid/tid + 24 addr/len/pgoff + 32 maj..flags + 16 name + 16 trailer */
	ehdr(&e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 104);
	e32(&e, 300);
	e32(&e, 300);
	e64(&e, 0xaaaab0000000ull);
	e64(&e, 0x2000);
	e64(&e, 0);
	e32(&e, 8);
	e32(&e, 1);
	e64(&e, 123456);
	e64(&e, 7);
	e32(&e, 5);
	e32(&e, 2);
	estr(&e, "/usr/bin/true", 16);
	trailer_rec(&e);
	n = perf_sb_mmap(buf, sizeof(buf), &T_REC, &m, true);
	check(&e, buf, n);

	/* [vdso], data mapping: MISC_MMAP_DATA; no trailer */
	m.filename = "[vdso]";
	m.exec = false;
	e.n = 0;
	ehdr(&e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA, 80);
	e32(&e, 300);
	e32(&e, 300);
	e64(&e, 0xaaaab0000000ull);
	e64(&e, 0x2000);
	e64(&e, 0);
	e32(&e, 8);
	e32(&e, 1);
	e64(&e, 123456);
	e64(&e, 7);
	e32(&e, 5);
	e32(&e, 2);
	estr(&e, "[vdso]", 8);
	n = perf_sb_mmap(buf, sizeof(buf), &T_NONE, &m, true);
	check(&e, buf, n);

	/* old MMAP (attr.mmap without mmap2), kernel map */
	m.filename = "[kernel.kallsyms]_text";
	m.exec = true;
	m.user = false;
	e.n = 0;
	ehdr(&e, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 8 + 8 + 24 + 24 + 16);
	e32(&e, 300);
	e32(&e, 300);
	e64(&e, 0xaaaab0000000ull);
	e64(&e, 0x2000);
	e64(&e, 0);
	estr(&e, "[kernel.kallsyms]_text", 24);
	trailer_rec(&e);
	n = perf_sb_mmap(buf, sizeof(buf), &T_REC, &m, false);
	check(&e, buf, n);
}

static void test_fork_exit(void **state)
{
	uint8_t buf[256];
	struct exp e = {.n = 0};
	size_t n;

	ehdr(&e, PERF_RECORD_FORK, 0, 8 + 24 + 16);
	e32(&e, 400);
	e32(&e, 300);
	e32(&e, 400);
	e32(&e, 301);
	e64(&e, 12345);
	trailer_rec(&e); /* the parent's context */
	n = perf_sb_task(buf, sizeof(buf), &T_REC, PERF_RECORD_FORK, 400, 300, 400, 301, 12345);
	check(&e, buf, n);

	e.n = 0;
	ehdr(&e, PERF_RECORD_EXIT, 0, 32);
	e32(&e, 400);
	e32(&e, 300);
	e32(&e, 400);
	e32(&e, 300);
	e64(&e, 777);
	n = perf_sb_task(buf, sizeof(buf), &T_NONE, PERF_RECORD_EXIT, 400, 300, 400, 300, 777);
	check(&e, buf, n);

	/* full trailer: TID, TIME, ID, STREAM_ID, CPU(+res), IDENTIFIER */
	e.n = 0;
	ehdr(&e, PERF_RECORD_EXIT, 0, 32 + 48);
	e32(&e, 400);
	e32(&e, 300);
	e32(&e, 400);
	e32(&e, 300);
	e64(&e, 777);
	e32(&e, 1);
	e32(&e, 2);
	e64(&e, 3);
	e64(&e, 4);
	e64(&e, 5);
	e32(&e, 6);
	e32(&e, 0);
	e64(&e, 4);
	n = perf_sb_task(buf, sizeof(buf), &T_ALL, PERF_RECORD_EXIT, 400, 300, 400, 300, 777);
	check(&e, buf, n);
}

static void test_throttle(void **state)
{
	uint8_t buf[256];
	struct exp e = {.n = 0};
	size_t n;

	ehdr(&e, PERF_RECORD_THROTTLE, 0, 32 + 16);
	e64(&e, 1000);
	e64(&e, 5);
	e64(&e, 6);
	trailer_rec(&e);
	n = perf_sb_throttle(buf, sizeof(buf), &T_REC, false, 1000, 5, 6);
	check(&e, buf, n);

	e.n = 0;
	ehdr(&e, PERF_RECORD_UNTHROTTLE, 0, 32);
	e64(&e, 2000);
	e64(&e, 5);
	e64(&e, 6);
	n = perf_sb_throttle(buf, sizeof(buf), &T_NONE, true, 2000, 5, 6);
	check(&e, buf, n);
	assert_int_equal(perf_sb_throttle(buf, 8, &T_REC, true, 1, 2, 3), 48);
}

static void test_switch(void **state)
{
	uint8_t buf[128];
	struct exp e = {.n = 0};
	size_t n;

	/* task context, switch in: header only (+ trailer) */
	ehdr(&e, PERF_RECORD_SWITCH, 0, 8 + 16);
	trailer_rec(&e);
	n = perf_sb_switch(buf, sizeof(buf), &T_REC, false, false, false, 0, 0);
	check(&e, buf, n);
	/* switched out while runnable */
	e.n = 0;
	ehdr(&e, PERF_RECORD_SWITCH,
	     PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 8);
	n = perf_sb_switch(buf, sizeof(buf), &T_NONE, true, true, false, 0, 0);
	check(&e, buf, n);
	/* CPU-wide: the other task's pid/tid */
	e.n = 0;
	ehdr(&e, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, 16);
	e32(&e, 42);
	e32(&e, 43);
	n = perf_sb_switch(buf, sizeof(buf), &T_NONE, true, false, true, 42, 43);
	check(&e, buf, n);
}

static void test_ksymbol_bpf_event(void **state)
{
	static const uint8_t tag[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t buf[256];
	struct exp e = {.n = 0};
	size_t n;

	/* 25 characters + NUL pad to 32 */
	ehdr(&e, PERF_RECORD_KSYMBOL, 0, 24 + 32 + 16);
	e64(&e, 0xffff800008001000ull);
	e32(&e, 0x80);
	e32(&e, PERF_RECORD_KSYMBOL_TYPE_BPF); /* u16 ksym_type, then u16 flags 0 */
	estr(&e, "bpf_prog_0123456789abcdef", 32);
	trailer_rec(&e);
	n = perf_sb_ksymbol(buf, sizeof(buf), &T_REC, 0xffff800008001000ull, 0x80,
			    PERF_RECORD_KSYMBOL_TYPE_BPF, false, "bpf_prog_0123456789abcdef");
	check(&e, buf, n);
	/* unregister flag */
	n = perf_sb_ksymbol(buf, sizeof(buf), &T_NONE, 1, 2, PERF_RECORD_KSYMBOL_TYPE_BPF, true,
			    "x");
	assert_int_equal(n, 32);
	assert_int_equal(*(uint16_t *)(buf + 22), PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	assert_string_equal((char *)buf + 24, "x");

	e.n = 0;
	ehdr(&e, PERF_RECORD_BPF_EVENT, 0, 24 + 16);
	e32(&e, PERF_BPF_EVENT_PROG_LOAD); /* u16 type, u16 flags 0 */
	e32(&e, 7);
	memcpy(e.b + e.n, tag, 8);
	e.n += 8;
	trailer_rec(&e);
	n = perf_sb_bpf_event(buf, sizeof(buf), &T_REC, PERF_BPF_EVENT_PROG_LOAD, 0, 7, tag);
	check(&e, buf, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm),      cmocka_unit_test(test_mmap2),
	    cmocka_unit_test(test_fork_exit), cmocka_unit_test(test_throttle),
	    cmocka_unit_test(test_switch),    cmocka_unit_test(test_ksymbol_bpf_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
