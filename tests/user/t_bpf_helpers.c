/* t_bpf_helpers: what the helpers added for issue 19 return, here and on Linux 6.1, from
 * clang-built programs (tests/user/bpf/helpers.bpf.c, loaded by Debian's libbpf 1.1) run on
 * page faults: strncmp, strtol and strtoul (bases, signs, overflow, the characters consumed),
 * numa node, cgroup and ancestor cgroup ids (the root), get_current_task, get_ns_current_pid_tgid
 * (match, wrong inode, wrong size, a dev over 32 bits), ktime_get_ns/boot_ns/tai_ns and
 * jiffies64 against the clocks, probe_read/probe_read_str (a user address, a fault),
 * read_branch_records and get_branch_snapshot (no branch records on arm64),
 * perf_event_read (a counter, an empty slot, an index past the end, bad flags), snprintf
 * (conversions, flags, widths, truncation, %pI4), trace_vprintk, send_signal(_thread), QUEUE and
 * STACK maps (push, pop, peek from programs; the syscall's peek, push and pop),
 * map_lookup_percpu_elem, probe_write_user (a user buffer, a bad address, from an interrupt).
 * Then loads Linux refuses, with its errno and log line: copy_from_user in a non-sleepable
 * program, get_func_ip in a perf_event program, bpf_spin_lock and bpf_timer in a map without
 * BTF (EACCES), bpf_loop given a scalar for its callback, strncmp with a string that is not
 * in a frozen read-only map or not in a map at all.  (Bad callbacks are in t_bpf_loops: Linux
 * wants BTF func_info for lddw BPF_PSEUDO_FUNC, which only libbpf's loads carry there.)
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern const char _binary_helpers_bpf_o_start[], _binary_helpers_bpf_o_end[];

/* libbpf's messages only with T_BPF_DEBUG set */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return getenv("T_BPF_DEBUG") ? vfprintf(stdout, fmt, ap) : 0;
}



static uint64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define E(x) ((uint64_t)(int64_t)-(x))

static const struct want {
	int k;
	uint64_t v;
	const char *what;
} wants[] = {
	{ 0, 0, "strncmp(\"abc\", 8, \"abc\") = 0" },
	{ 1, E(3), "strncmp(\"abc\", 8, \"abf\") = 'c' - 'f'" },
	{ 2, 0, "strncmp(\"abc\", 2, \"abf\") = 0" },
	{ 3, 6, "strtol(\" -0x1fz\", base 0) consumed 6" },
	{ 4, E(31), "strtol(\" -0x1fz\", base 0) = -31" },
	{ 5, 3, "strtol(\" -0x1fz\", base 10) consumed 3" },
	{ 6, 0, "strtol(\" -0x1fz\", base 10) = 0" },
	{ 7, E(ERANGE), "strtoul of 20 nines: -ERANGE" },
	{ 8, 4, "strtoul(\"0755\", base 0) consumed 4" },
	{ 9, 0755, "strtoul(\"0755\", base 0) = 0755" },
	{ 10, E(EINVAL), "strtoul(\"-5\"): -EINVAL" },
	{ 11, E(EINVAL), "strtol(\"xyz\"): -EINVAL" },
	{ 12, E(EINVAL), "strtol base 7: -EINVAL" },
	{ 13, E(EINVAL), "strtol flags 1 << 5: -EINVAL" },
	{ 14, 1, "strtol(\"0x\", base 0) consumed 1 (octal 0)" },
	{ 15, 0, "strtol(\"0x\", base 0) = 0" },
	{ 16, 20, "strtol(LONG_MIN) consumed 20" },
	{ 17, 1ull << 63, "strtol(LONG_MIN) = LONG_MIN" },
	{ 18, E(ERANGE), "strtol of 20 hex nines: -ERANGE" },
	{ 19, E(EINVAL), "strtoul(\" -0\", 3 bytes): -EINVAL" },
	{ 20, 0, "get_numa_node_id = 0" },
	{ 21, 1, "get_current_cgroup_id = 1 (the root)" },
	{ 22, 1, "get_current_ancestor_cgroup_id(0) = 1" },
	{ 23, 0, "get_current_ancestor_cgroup_id(1) = 0" },
	{ 24, 1, "get_current_task is not 0" },
	{ 25, 0, "get_ns_current_pid_tgid in our pid namespace: 0" },
	{ 26, 1, "get_ns_current_pid_tgid: pid and tgid as get_current_pid_tgid" },
	{ 27, E(EINVAL), "get_ns_current_pid_tgid, another inode: -EINVAL" },
	{ 28, 0, "get_ns_current_pid_tgid, another inode: zeroed" },
	{ 29, E(EINVAL), "get_ns_current_pid_tgid, size 4: -EINVAL" },
	{ 30, 0x100000000ull, "get_ns_current_pid_tgid, size 4: those 4 bytes zeroed" },
	{ 31, E(EINVAL), "get_ns_current_pid_tgid, dev over 32 bits: -EINVAL" },
	{ 36, 0, "probe_read of a user address: 0" },
	{ 37, 0x6f6c6c6568ull, "probe_read of a user address: its bytes" },
	{ 38, 6, "probe_read_str of \"hello\": 6" },
	{ 39, 'h' | 'o' << 8, "probe_read_str of \"hello\": the string" },
	{ 40, E(EFAULT), "probe_read of address 8: -EFAULT" },
	{ 41, 0, "probe_read of address 8: zeroed" },
	{ 42, E(EFAULT), "probe_read_str of address 8: -EFAULT" },
	{ 43, 0, "probe_read_str of address 8: zeroed" },
	{ 44, E(ENOENT), "read_branch_records: -ENOENT (no branch records on arm64)" },
	{ 45, E(ENOENT), "read_branch_records size query: -ENOENT" },
	{ 46, E(ENOENT), "get_branch_snapshot: -ENOENT" },
	{ 47, E(ENOENT), "get_branch_snapshot flags 1: -ENOENT" },
	{ 48, 1, "perf_event_read of a page-fault counter: its count" },
	{ 49, E(ENOENT), "perf_event_read of an empty slot: -ENOENT" },
	{ 50, E(E2BIG), "perf_event_read past max_entries: -E2BIG" },
	{ 51, E(EINVAL), "perf_event_read with bad flags: -EINVAL" },
};

static char logbuf[65536];

static int load(const struct bpf_insn *insns, size_t n, uint32_t flags)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = logbuf, .log_size = sizeof(logbuf),
		    .log_level = 1, .prog_flags = flags);
	int fd;

	logbuf[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "t", "GPL", insns, n, &o);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -errno;
}

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOVX(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LDMAP(d, fd) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define LDVAL(d, fd) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_VALUE, 0, fd), I(0, 0, 0, 0, 0)
#define STDW(d, o, i) I(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)

static void refused(const char *what, const struct bpf_insn *p, size_t n, int err, const char *msg)
{
	int got = load(p, n, 0);

	if (got == -err && strstr(logbuf, msg))
		tap_pass(what);
	else
		tap_fail(what, "got %d, log: %.300s", got, logbuf);
}

/* bpf_snprintf(fp-40 (32 bytes), 32, fmt from a frozen read-only map, fp-16, data_len). */
static int fmt_load(const char *fmt, int data_len)
{
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = BPF_F_RDONLY_PROG);
	int m = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fmt", 4, 32, 1, &ro), err;
	char val[32] = { 0 };
	uint32_t zero = 0;

	strncpy(val, fmt, sizeof(val) - 1);
	bpf_map_update_elem(m, &zero, val, 0);
	bpf_map_freeze(m);
	struct bpf_insn p[] = { STDW(10, -8, 0), STDW(10, -16, 0), STDW(10, -24, 0), STDW(10, -32, 0),
				STDW(10, -40, 0), MOVX(1, 10), ADD(1, -40), MOV(2, 32), LDVAL(3, m),
				MOVX(4, 10), ADD(4, -16), MOV(5, data_len), CALL(BPF_FUNC_snprintf), MOV(0, 0),
				EXIT };
	err = load(p, sizeof(p) / sizeof(p[0]), 0);
	close(m);
	return err;
}

static void fmt_refusals(void)
{
	static const struct {
		const char *fmt;
		int len, err;
		const char *what;
	} f[] = {
		{ "%d", 8, 0, "snprintf \"%d\" with one argument loads" },
		{ "%d %d", 8, -EINVAL, "snprintf \"%d %d\" with one argument: EINVAL" },
		{ "%%d", 0, 0, "snprintf \"%%d\" with no argument loads" },
		{ "%q", 8, -EINVAL, "snprintf \"%q\": EINVAL" },
		{ "%sx", 8, -EINVAL, "snprintf \"%sx\" (a letter after %s): EINVAL" },
		{ "%hd", 8, -EINVAL, "snprintf \"%hd\": EINVAL" },
		{ "%pI5", 8, -EINVAL, "snprintf \"%pI5\": EINVAL" },
		{ "\x01", 0, -EINVAL, "snprintf with a control character: EINVAL" },
		{ "%lld %lx", 16, 0, "snprintf \"%lld %lx\" loads" },
		{ "%d", 4, -EINVAL, "snprintf data_len 4: EINVAL" },
	};

	for (unsigned int i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		int got = fmt_load(f[i].fmt, f[i].len);

		CHECK(got == f[i].err && (!got || f[i].len % 8 || strstr(logbuf, "Invalid format string")),
		      f[i].what, "got %d, log: %.300s", got, logbuf);
	}
}

static void refusals(void)
{
	int arr = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vals", 4, 16, 1, NULL);
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = BPF_F_RDONLY_PROG);
	int str = bpf_map_create(BPF_MAP_TYPE_ARRAY, "str", 4, 8, 1, &ro);
	uint32_t zero = 0;
	char abc[8] = "abc";

	bpf_map_update_elem(str, &zero, abc, 0); /* not frozen yet */
	{
		struct bpf_insn p[] = { MOVX(1, 10), ADD(1, -8), MOV(2, 8), MOV(3, 0), CALL(BPF_FUNC_copy_from_user),
					MOV(0, 0), EXIT };
		refused("copy_from_user in a non-sleepable program: EINVAL", p, 7, EINVAL,
			"helper call might sleep in a non-sleepable prog");
	}
	{
		int q = bpf_map_create(BPF_MAP_TYPE_QUEUE, "q", 0, 8, 4, NULL);
		struct bpf_insn p[] = { LDMAP(1, q), MOVX(2, 10), ADD(2, -8), CALL(BPF_FUNC_map_lookup_elem),
					MOV(0, 0), EXIT };
		refused("map_lookup_elem of a queue (no key): EACCES", p, 7, EACCES, "invalid zero-sized read");
		struct bpf_insn p2[] = { LDMAP(1, arr), MOVX(2, 10), ADD(2, -16), CALL(BPF_FUNC_map_pop_elem),
					 MOV(0, 0), EXIT };
		refused("map_pop_elem of an array: EINVAL", p2, 7, EINVAL,
			"cannot pass map_type 2 into func bpf_map_pop_elem#88");
		close(q);
	}
	{
		struct bpf_insn p[] = { CALL(BPF_FUNC_get_func_ip), MOV(0, 0), EXIT };
		refused("get_func_ip in a perf_event program: ENOTSUPP (524)", p, 3, 524,
			"not supported for program type 7");
	}
	{
		struct bpf_insn p[] = { LDVAL(1, arr), CALL(BPF_FUNC_spin_lock), MOV(0, 0), EXIT };
		refused("bpf_spin_lock in a map without BTF: EACCES", p, 5, EACCES,
			"map 'vals' has to have BTF in order to use bpf_spin_lock");
	}
	{
		struct bpf_insn p[] = { MOVX(1, 10), ADD(1, -8), CALL(BPF_FUNC_spin_lock), MOV(0, 0), EXIT };
		refused("bpf_spin_lock on the stack: EACCES", p, 5, EACCES, "R1 type=fp expected=map_value");
	}
	{
		struct bpf_insn p[] = { LDVAL(1, arr), LDMAP(2, arr), MOV(3, 0), CALL(BPF_FUNC_timer_init),
					MOV(0, 0), EXIT };
		refused("bpf_timer_init in a map without BTF: EACCES", p, 8, EACCES,
			"map 'vals' has to have BTF in order to use bpf_timer");
	}
	{
		struct bpf_insn p[] = { MOV(1, 4), MOV(2, 0), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop),
					MOV(0, 0), EXIT };
		refused("bpf_loop given a scalar callback: EACCES", p, 7, EACCES, "R2 type=scalar expected=func");
	}
	{
		struct bpf_insn p[] = { STDW(10, -8, 0x636261), MOVX(1, 10), ADD(1, -8), MOV(2, 8),
					MOVX(3, 10), ADD(3, -8), CALL(BPF_FUNC_strncmp), MOV(0, 0), EXIT };
		refused("strncmp with s2 on the stack: EACCES", p, 9, EACCES, "R3 type=fp expected=map_value");
	}
	{
		struct bpf_insn p[] = { STDW(10, -8, 0x636261), MOVX(1, 10), ADD(1, -8), MOV(2, 8),
					LDVAL(3, str), CALL(BPF_FUNC_strncmp), MOV(0, 0), EXIT };
		refused("strncmp with s2 in a read-only map not frozen: EACCES", p, 9, EACCES,
			"does not point to a readonly map");
		bpf_map_freeze(str);
		int got = load(p, 9, 0);

		CHECK(got == 0, "strncmp with s2 in a frozen read-only map loads", "got %d, log: %.300s", got,
		      logbuf);
	}
	close(arr);
	close(str);
	fmt_refusals();
}

static char user_str[16] = "hello";
static volatile int usr1_count, usr1_code, usr1_pid, usr2_count;

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	usr2_count++;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	usr1_count++;
	usr1_code = si->si_code;
	usr1_pid = si->si_pid;
}

int main(void)
{
	uint64_t res[96] = { 0 }, t0[4], t1[4];
	struct bpf_object *obj;
	struct stat st;
	cpu_set_t set;
	int err, resfd, cfd, ctrs;
	uint32_t zero = 0;
	char what[160];

	tap_init("t_bpf_helpers", 60);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	libbpf_set_print(quiet);
	obj = bpf_object__open_mem(_binary_helpers_bpf_o_start,
				   (size_t)(_binary_helpers_bpf_o_end - _binary_helpers_bpf_o_start), NULL);
	if (!CHECK(obj, "bpf_object__open_mem", "errno %d", errno))
		return tap_done();
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	struct {
		uint64_t addr, dev, ino;
	} b = { (uintptr_t)user_str, 4, 0xEFFFFFFCu };
	/* the initial pid namespace's nsfs ids: /proc/self/ns is not built here (Linux's values) */
	if (!stat("/proc/self/ns/pid", &st)) {
		b.dev = st.st_dev;
		b.ino = st.st_ino;
	}
	if (!bss || bpf_map__set_initial_value(bss, &b, sizeof(b)))
		tap_fail(".bss initial value", "errno %d", errno);
	struct bpf_program *prog;
	static char plog[16][65536];
	int np = 0;
	bpf_object__for_each_program(prog, obj)
		if (np < 16)
			bpf_program__set_log_buf(prog, plog[np++], sizeof(plog[0]));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "bpf_object__load: the helper programs verify", "err %d", err)) {
		for (int i = 0; i < np; i++) /* the verifier's last words on each */
			if (plog[i][0])
				printf("# log %d: ...%s\n", i, plog[i] + (strlen(plog[i]) > 600 ? strlen(plog[i]) - 600 : 0));
		return tap_done();
	}
	resfd = bpf_object__find_map_fd_by_name(obj, "res");
	ctrs = bpf_object__find_map_fd_by_name(obj, "counters");
	cfd = faults_perf_open(PERF_COUNT_SW_PAGE_FAULTS, 0);
	if (bpf_map_update_elem(ctrs, &zero, &cfd, 0))
		tap_fail("counters[0] = a page-fault counter", "errno %d", errno);
	static const char *const progs[] = { "strings", "ids", "reads", "counter" };
	for (unsigned int i = 0; i < 4; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i]);

		snprintf(what, sizeof(what), "%s runs on page faults", progs[i]);
		err = p ? run_on_faults(p, 4) : -ENOENT;
		CHECK(!err, what, "err %d", err);
	}
	t0[0] = now(CLOCK_MONOTONIC);
	t0[1] = now(CLOCK_BOOTTIME);
	t0[2] = now(CLOCK_REALTIME);
	err = run_on_faults(bpf_object__find_program_by_name(obj, "clocks"), 4);
	t1[0] = now(CLOCK_MONOTONIC);
	t1[1] = now(CLOCK_BOOTTIME);
	t1[2] = now(CLOCK_REALTIME);
	for (uint32_t k = 0; k < 64; k++)
		bpf_map_lookup_elem(resfd, &k, &res[k]);
	for (unsigned int i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		CHECK(res[wants[i].k] == wants[i].v, wants[i].what, "got %#llx want %#llx",
		      (unsigned long long)res[wants[i].k], (unsigned long long)wants[i].v);
	CHECK(res[32] >= t0[0] && res[32] <= t1[0], "ktime_get_ns within CLOCK_MONOTONIC around it",
	      "%llu not in [%llu, %llu]", (unsigned long long)res[32], (unsigned long long)t0[0],
	      (unsigned long long)t1[0]);
	CHECK(res[33] >= t0[1] && res[33] <= t1[1], "ktime_get_boot_ns within CLOCK_BOOTTIME around it",
	      "%llu not in [%llu, %llu]", (unsigned long long)res[33], (unsigned long long)t0[1],
	      (unsigned long long)t1[1]);
	CHECK(res[34] + 1000000 >= t0[2] && res[34] <= t1[2] + 1000000,
	      "ktime_get_tai_ns within CLOCK_REALTIME around it (TAI offset 0)", "%llu not in [%llu, %llu]",
	      (unsigned long long)res[34], (unsigned long long)t0[2], (unsigned long long)t1[2]);
	/* HZ 250 from INITIAL_JIFFIES (-300 * HZ as 32 bits) at boot */
	uint64_t j = 4294967296ull - 75000 + t0[0] / 4000000;
	CHECK(res[35] + 250 >= j && res[35] <= j + 250, "jiffies64 = INITIAL_JIFFIES + uptime at HZ 250",
	      "%llu, expected about %llu", (unsigned long long)res[35], (unsigned long long)j);
	struct bpf_program *fp = bpf_object__find_program_by_name(obj, "formats");
	err = fp ? run_on_faults(fp, 4) : -ENOENT;
	CHECK(!err, "formats runs on page faults", "err %d", err);
	static const char *const outs_want[6] = {
		"-42 7 ff FF|   42|42   |00042|+42| 42",
		"-1 1099511627776 18446744073709551615 ok%",
		"abc|abc|  abc|abc  |",
		"1000-20",
		"10.0.2.15 010.000.002.015",
		"ffffffff -1",
	};
	int outfd = bpf_object__find_map_fd_by_name(obj, "outs");
	for (uint32_t k = 0; k < 6; k++) {
		char o[64] = { 0 };
		uint64_t r = 0;
		size_t want_ret = k == 3 ? strlen("1000-2000-3000") + 1 : strlen(outs_want[k]) + 1;

		bpf_map_lookup_elem(outfd, &k, o);
		bpf_map_lookup_elem(resfd, &(uint32_t){ 52 + k }, &r);
		snprintf(what, sizeof(what), "snprintf: \"%s\", returns %zu", outs_want[k], want_ret);
		CHECK(!strcmp(o, outs_want[k]) && r == want_ret, what, "got \"%.64s\" and %llu", o,
		      (unsigned long long)r);
	}
	bpf_map_lookup_elem(resfd, &(uint32_t){ 60 }, &res[60]);
	bpf_map_lookup_elem(resfd, &(uint32_t){ 61 }, &res[61]);
	CHECK(res[60] == 5, "snprintf(NULL, 0, \"abc%%\"): 5, the length it needs", "got %llu",
	      (unsigned long long)res[60]);
	CHECK(res[61] == 22, "trace_vprintk with 4 arguments: 22 characters", "got %llu",
	      (unsigned long long)res[61]);
	/* QUEUE and STACK maps from the program, then from the syscall */
	err = run_on_faults(bpf_object__find_program_by_name(obj, "queues"), 4);
	CHECK(!err, "queues runs on page faults", "err %d", err);
	{
		static const struct {
			int k;
			uint64_t v;
			const char *what;
		} q[] = {
			/* 32-bit: Linux calls the map's op directly, an int */
			{ 68, (uint32_t)-E2BIG, "push to a full queue: -E2BIG (32-bit)" },
			{ 69, 0, "push BPF_EXIST to a full queue: 0 (drops the oldest)" },
			{ 70, (uint32_t)-EINVAL, "push BPF_NOEXIST: -EINVAL (32-bit)" },
			{ 71, 2, "peek of a queue: the oldest (2)" },
			{ 72, 2, "pop of a queue: the oldest (2)" },
			{ 73, 4, "pops in FIFO order: 3 then 4" },
			{ 74, (uint32_t)-ENOENT, "pop of an empty queue: -ENOENT (32-bit)" },
			{ 75, 0, "pop of an empty queue: value zeroed" },
			{ 76, 2, "pop of a stack: the newest (2)" },
			{ 77, 1, "peek of a stack after a pop: 1" },
		};
		for (unsigned int i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			uint32_t k = (uint32_t)q[i].k;
			uint64_t v = 0;

			bpf_map_lookup_elem(resfd, &k, &v);
			CHECK(v == q[i].v, q[i].what, "got %#llx want %#llx", (unsigned long long)v,
			      (unsigned long long)q[i].v);
		}
		int fifo = bpf_object__find_map_fd_by_name(obj, "fifo");
		uint64_t v = 0, w = 8;

		CHECK(!bpf_map_lookup_elem(fifo, NULL, &v) && v == 7,
		      "syscall LOOKUP_ELEM of a queue peeks (7)", "v %llu errno %d", (unsigned long long)v, errno);
		CHECK(!bpf_map_update_elem(fifo, NULL, &w, 0), "syscall UPDATE_ELEM of a queue pushes",
		      "errno %d", errno);
		CHECK(!bpf_map_lookup_and_delete_elem(fifo, NULL, &v) && v == 7,
		      "syscall LOOKUP_AND_DELETE_ELEM of a queue pops (7)", "v %llu errno %d",
		      (unsigned long long)v, errno);
		CHECK(!bpf_map_lookup_and_delete_elem(fifo, NULL, &v) && v == 8,
		      "then 8", "v %llu errno %d", (unsigned long long)v, errno);
		CHECK(bpf_map_lookup_and_delete_elem(fifo, NULL, &v) && errno == ENOENT,
		      "then ENOENT", "errno %d", errno);
		CHECK(bpf_map_delete_elem(fifo, NULL) && errno == EINVAL, "syscall DELETE_ELEM of a queue: EINVAL",
		      "errno %d", errno);
		CHECK(bpf_map_create(BPF_MAP_TYPE_QUEUE, "q", 4, 8, 4, NULL) < 0 && errno == EINVAL,
		      "a queue with a key: EINVAL", "errno %d", errno);
		CHECK(bpf_map_create(BPF_MAP_TYPE_STACK, "s", 0, 8, 0, NULL) < 0 && errno == EINVAL,
		      "a stack of 0 entries: EINVAL", "errno %d", errno);
	}
	/* probe_write_user into this process */
	err = run_on_faults(bpf_object__find_program_by_name(obj, "writes"), 4);
	bpf_map_lookup_elem(resfd, &(uint32_t){ 80 }, &res[80]);
	bpf_map_lookup_elem(resfd, &(uint32_t){ 81 }, &res[81]);
	CHECK(!err && res[80] == 0 && !strcmp(user_str + 8, "WRITTEN"),
	      "probe_write_user into this process: 0, the bytes written", "err %d ret %#llx got \"%.8s\"",
	      err, (unsigned long long)res[80], user_str + 8);
	CHECK(res[81] == (uint64_t)-EFAULT, "probe_write_user to address 8: -EFAULT", "%#llx",
	      (unsigned long long)res[81]);
	/* map_lookup_percpu_elem: CPU i's value is i + 10 */
	{
		int ncpu = libbpf_num_possible_cpus(), pfd = bpf_object__find_map_fd_by_name(obj, "pcpu");
		uint64_t vals[64] = { 0 }, r78 = 0, r79 = 0;

		for (int c = 0; c < ncpu && c < 64; c++)
			vals[c] = (uint64_t)c + 10;
		bpf_map_update_elem(pfd, &zero, vals, 0);
		err = run_on_faults(bpf_object__find_program_by_name(obj, "percpu"), 4);
		bpf_map_lookup_elem(resfd, &(uint32_t){ 78 }, &r78);
		bpf_map_lookup_elem(resfd, &(uint32_t){ 79 }, &r79);
		CHECK(!err && r78 == 10, "map_lookup_percpu_elem of CPU 0: its value", "err %d got %llu", err,
		      (unsigned long long)r78);
		CHECK(r79 == 11 * 1000 + 1, "map_lookup_percpu_elem of CPU 1: its value; of CPU 100000: NULL",
		      "got %llu", (unsigned long long)r79);
	}
	/* bpf_send_signal: SIGUSR1 to this process, from the kernel (SI_KERNEL) */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	err = run_on_faults(bpf_object__find_program_by_name(obj, "signals"), 4);
	for (int i = 0; i < 100 && !usr1_code; i++)
		usleep(1000);
	for (uint32_t k = 58; k < 64; k++)
		bpf_map_lookup_elem(resfd, &k, &res[k]);
	CHECK(usr1_count == 1 && usr1_code == SI_KERNEL && usr1_pid == 0,
	      "send_signal(SIGUSR1): one SIGUSR1, si_code SI_KERNEL, si_pid 0", "count %d code %d pid %d",
	      usr1_count, usr1_code, usr1_pid);
	CHECK(res[58] == 0, "send_signal(SIGUSR1) returns 0", "%#llx", (unsigned long long)res[58]);
	CHECK(res[59] == (uint64_t)-EINVAL, "send_signal(100): -EINVAL", "%#llx",
	      (unsigned long long)res[59]);
	CHECK((res[63] & 0xff) == (uint8_t)-EBUSY, "send_signal_thread(0) with a signal pending: -EBUSY",
	      "%#llx",
	      (unsigned long long)res[63]);
	CHECK((res[63] >> 8 & 0xff) == (uint8_t)-EINVAL, "send_signal_thread(65): -EINVAL", "%#llx",
	      (unsigned long long)res[63]);
	/* the same from a cycles overflow (the PMU interrupt) */
	sa.sa_sigaction = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	{
		struct perf_event_attr a;
		struct bpf_link *l;
		int hfd;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_HARDWARE;
		a.config = PERF_COUNT_HW_CPU_CYCLES;
		a.sample_period = 200000;
		a.disabled = 1;
		a.exclude_kernel = 1;
		hfd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		l = hfd >= 0 ? bpf_program__attach_perf_event(
				       bpf_object__find_program_by_name(obj, "signals_hw"), hfd) : NULL;
		CHECK(l, "signals_hw on a cycles event", "errno %d", errno);
		ioctl(hfd, PERF_EVENT_IOC_ENABLE, 0);
		for (volatile long i = 0; i < 20000000 && !usr2_count; i++)
			;
		ioctl(hfd, PERF_EVENT_IOC_DISABLE, 0);
		if (l)
			bpf_link__destroy(l);
		if (hfd >= 0)
			close(hfd);
	}
	for (uint32_t k = 64; k < 67; k++)
		bpf_map_lookup_elem(resfd, &k, &res[k]);
	CHECK(usr2_count == 1 && res[65] == 0,
	      "send_signal(SIGUSR2) from the PMU interrupt: 0, one SIGUSR2", "count %d ret %#llx",
	      usr2_count, (unsigned long long)res[65]);
	bpf_map_lookup_elem(resfd, &(uint32_t){ 82 }, &res[82]);
	CHECK(res[82] == (uint64_t)-EPERM, "probe_write_user from the PMU interrupt: -EPERM", "%#llx",
	      (unsigned long long)res[82]);
	CHECK(res[66] == (uint64_t)-EBUSY, "a second send_signal in the same run: -EBUSY",
	      "%#llx", (unsigned long long)res[66]);
	close(cfd);
	bpf_object__close(obj);
	refusals();
	return tap_done();
}
