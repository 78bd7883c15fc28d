/* t_bpf_helpers: what the helpers added for issue 19 return, here and on Linux 6.1, from
 * clang-built programs (tests/user/bpf/helpers.bpf.c, loaded by Debian's libbpf 1.1) run on
 * page faults: strncmp, strtol and strtoul (bases, signs, overflow, the characters consumed),
 * numa node, cgroup and ancestor cgroup ids (the root), get_current_task, get_ns_current_pid_tgid
 * (match, wrong inode, wrong size, a dev over 32 bits), ktime_get_ns/boot_ns/tai_ns and
 * jiffies64 against the clocks, probe_read/probe_read_str (a user address, a fault),
 * read_branch_records and get_branch_snapshot (no branch records on arm64),
 * perf_event_read (a counter, an empty slot, an index past the end, bad flags).
 * Then loads Linux refuses, with its errno and log line: copy_from_user in a non-sleepable
 * program, get_func_ip in a perf_event program, bpf_spin_lock and bpf_timer in a map without
 * BTF (EACCES), bpf_loop given a scalar for its callback, strncmp with a string that is not
 * in a frozen read-only map or not in a map at all.  (Bad callbacks are in t_bpf_loops: Linux
 * wants BTF func_info for lddw BPF_PSEUDO_FUNC, which only libbpf's loads carry there.)
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern const char _binary_helpers_bpf_o_start[], _binary_helpers_bpf_o_end[];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
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
}

static char user_str[16] = "hello";

int main(void)
{
	uint64_t res[64] = { 0 }, t0[4], t1[4];
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
	err = bpf_object__load(obj);
	if (!CHECK(!err, "bpf_object__load: the helper programs verify", "err %d", err))
		return tap_done();
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
	close(cfd);
	bpf_object__close(obj);
	refusals();
	return tap_done();
}
