/* helpers.bpf.c - one BPF_PROG_TYPE_PERF_EVENT program per group of helpers for t_bpf_helpers;
 * each writes what the helpers returned to res[] (running again writes the same values, but
 * for the clocks, which the test checks by range).  Built by clang -target bpf.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} res SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");

/* user addresses and ns ids the test fills in */
__u64 user_str_addr = 0, pidns_dev = 0, pidns_ino = 0;

static __always_inline void put(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&res, &k);

	if (p)
		*p = v;
}

const char abc[] = "abc";
const char abd[] = "abf";

SEC("perf_event")
int strings(struct bpf_perf_event_data *ctx)
{
	char s1[8] = "abc", num[16] = " -0x1fz", big[24] = "99999999999999999999", oct[8] = "0755";
	char neg[8] = "-5", none[8] = "xyz", hex0[8] = "0x", lmin[24] = "-9223372036854775808";
	long l = 7;
	unsigned long u = 7;

	put(0, bpf_strncmp(s1, sizeof(s1), abc));
	put(1, bpf_strncmp(s1, sizeof(s1), abd));
	put(2, bpf_strncmp(s1, 2, abd));
	put(3, bpf_strtol(num, sizeof(num), 0, &l));
	put(4, l);
	put(5, bpf_strtol(num, sizeof(num), 10, &l)); /* "-0" then x: 3 chars, 0 */
	put(6, l);
	put(7, bpf_strtoul(big, sizeof(big), 10, &u));
	put(8, bpf_strtoul(oct, sizeof(oct), 0, &u));
	put(9, u);
	put(10, bpf_strtoul(neg, sizeof(neg), 0, &u));
	put(11, bpf_strtol(none, sizeof(none), 0, &l));
	put(12, bpf_strtol(num, sizeof(num), 7, &l));
	put(13, bpf_strtol(num, sizeof(num), 1 << 5, &l));
	put(14, bpf_strtol(hex0, sizeof(hex0), 0, &l)); /* "0x" and no digit: "0" in base 8 */
	put(15, l);
	put(16, bpf_strtol(lmin, sizeof(lmin), 10, &l));
	put(17, l);
	put(18, bpf_strtol(big, sizeof(big), 16, &l));
	put(19, bpf_strtoul(num, 3, 16, &u)); /* " -0": 3 characters */
	return 1;
}

SEC("perf_event")
int ids(struct bpf_perf_event_data *ctx)
{
	struct bpf_pidns_info ns = { 1, 1 };
	__u64 pt = bpf_get_current_pid_tgid();

	put(20, bpf_get_numa_node_id());
	put(21, bpf_get_current_cgroup_id());
	put(22, bpf_get_current_ancestor_cgroup_id(0));
	put(23, bpf_get_current_ancestor_cgroup_id(1));
	put(24, bpf_get_current_task() != 0);
	put(25, bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)));
	put(26, ((__u64)ns.tgid << 32 | ns.pid) == pt);
	ns.pid = ns.tgid = 1;
	put(27, bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino + 1, &ns, sizeof(ns)));
	put(28, (__u64)ns.tgid << 32 | ns.pid);
	ns.pid = ns.tgid = 1;
	put(29, bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, 4));
	put(30, (__u64)ns.tgid << 32 | ns.pid);
	put(31, bpf_get_ns_current_pid_tgid(1ull << 32, pidns_ino, &ns, sizeof(ns)));
	return 1;
}

SEC("perf_event")
int clocks(struct bpf_perf_event_data *ctx)
{
	put(32, bpf_ktime_get_ns());
	put(33, bpf_ktime_get_boot_ns());
	put(34, bpf_ktime_get_tai_ns());
	put(35, bpf_jiffies64());
	return 1;
}

SEC("perf_event")
int reads(struct bpf_perf_event_data *ctx)
{
	char buf[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	__u64 v = 0;
	long r;

	put(36, bpf_probe_read(&v, sizeof(v), (void *)user_str_addr)); /* a user address */
	put(37, v);
	put(38, bpf_probe_read_str(buf, sizeof(buf), (void *)user_str_addr));
	put(39, buf[0] | buf[4] << 8 | (__u64)buf[5] << 16);
	put(40, bpf_probe_read(&v, sizeof(v), (void *)8)); /* a fault: zeroed */
	put(41, v);
	r = bpf_probe_read_str(buf, sizeof(buf), (void *)8);
	put(42, r);
	put(43, buf[0] | buf[1] << 8);
	put(44, bpf_read_branch_records(ctx, buf, sizeof(buf), 0));
	put(45, bpf_read_branch_records(ctx, 0, 0, BPF_F_GET_BRANCH_RECORDS_SIZE));
	put(46, bpf_get_branch_snapshot(buf, sizeof(buf), 0));
	put(47, bpf_get_branch_snapshot(buf, sizeof(buf), 1));
	return 1;
}

SEC("perf_event")
int counter(struct bpf_perf_event_data *ctx)
{
	long v = bpf_perf_event_read(&counters, 0);

	put(48, v > 0 && v < 1000000);
	put(49, bpf_perf_event_read(&counters, 1));
	put(50, bpf_perf_event_read(&counters, 9));
	put(51, bpf_perf_event_read(&counters, 1ull << 32));
	return 1;
}
