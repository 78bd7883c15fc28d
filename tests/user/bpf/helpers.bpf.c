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
	__uint(max_entries, 96);
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

struct out {
	char s[64];
};

const char abc_fmt[] = "abc%%";
const char vfmt[] = "t_bpf_helpers %d %d %d %d\n";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct out);
} outs SEC(".maps");

/* bpf_snprintf into outs[k] (zeroed first, as Linux wants initialized memory); its return in res[52 + k] */
#define SNPRINTF(k, size, fmt, args...)                                                            \
	({                                                                                         \
		__u32 _k = (k);                                                                    \
		struct out *_o = bpf_map_lookup_elem(&outs, &_k);                                  \
		if (_o) {                                                                          \
			__builtin_memset(_o->s, 0, sizeof(_o->s));                                 \
			put(52 + _k, BPF_SNPRINTF(_o->s, size, fmt, args));                        \
		}                                                                                  \
	})

SEC("perf_event")
int formats(struct bpf_perf_event_data *ctx)
{
	char abc[4] = "abc";
	__u32 ip = 0x0f02000a; /* 10.0.2.15 in memory order */

	SNPRINTF(0, 64, "%d %u %x %X|%5d|%-5d|%05d|%+d|% d", -42, 7, 255, 255, 42, 42, 42, 42, 42);
	SNPRINTF(1, 64, "%ld %lld %lu %c%c%%", -1L, 1LL << 40, ~0UL, 'o', 'k');
	SNPRINTF(2, 64, "%s|%pks|%5s|%-5s|", abc, abc, abc, abc);
	SNPRINTF(3, 8, "%d-%d-%d", 1000, 2000, 3000); /* truncated to 7 characters */
	SNPRINTF(4, 64, "%pI4 %pi4", &ip, &ip);
	SNPRINTF(5, 64, "%x %d", 0xffffffffffULL, 0x1ffffffffLL); /* int conversions: low 32 bits */
	put(60, bpf_snprintf(0, 0, abc_fmt, 0, 0));
	{
		__u64 v[4] = { 1, 2, 3, 4 };

		put(61, bpf_trace_vprintk(vfmt, sizeof(vfmt), v, sizeof(v)));
	}
	return 1;
}

/* bpf_send_signal(SIGUSR1) on the first run only (res[62] counts the sends), then the errors */
SEC("perf_event")
int signals(struct bpf_perf_event_data *ctx)
{
	__u32 k = 62;
	__u64 *sent = bpf_map_lookup_elem(&res, &k);

	if (!sent || *sent)
		return 1;
	*sent = 1;
	put(58, bpf_send_signal(10));
	put(59, bpf_send_signal(100));
	put(63, (bpf_send_signal_thread(0) & 0xff) | (bpf_send_signal_thread(65) & 0xff) << 8);
	return 1;
}

/* From the PMU interrupt: deferred to irq_work, a second send while one is pending: -EBUSY */
SEC("perf_event")
int signals_hw(struct bpf_perf_event_data *ctx)
{
	__u32 k = 64;
	__u64 *sent = bpf_map_lookup_elem(&res, &k);

	if (!sent || *sent)
		return 1;
	*sent = 1;
	put(65, bpf_send_signal(12));
	put(66, bpf_send_signal(12));
	put(82, bpf_probe_write_user((void *)(user_str_addr + 8), &k, 4)); /* in an interrupt */
	return 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 3);
	__type(value, __u64);
} fifo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 3);
	__type(value, __u64);
} lifo SEC(".maps");

/* res[67..79]: queue and stack operations, once (res[67] marks the run) */
SEC("perf_event")
int queues(struct bpf_perf_event_data *ctx)
{
	__u32 k = 67;
	__u64 *done = bpf_map_lookup_elem(&res, &k), v;

	if (!done || *done)
		return 1;
	*done = 1;
	/* no loops: Linux 6.1 finds one pushing &v an infinite loop (v's slot becomes misc) */
	v = 1;
	bpf_map_push_elem(&fifo, &v, 0);
	v = 2;
	bpf_map_push_elem(&fifo, &v, 0);
	v = 3;
	bpf_map_push_elem(&fifo, &v, 0);
	v = 4;
	put(68, bpf_map_push_elem(&fifo, &v, 0)); /* full: -E2BIG */
	put(69, bpf_map_push_elem(&fifo, &v, BPF_EXIST)); /* drops 1 */
	put(70, bpf_map_push_elem(&fifo, &v, BPF_NOEXIST)); /* -EINVAL */
	v = 0;
	bpf_map_peek_elem(&fifo, &v);
	put(71, v); /* 2 */
	bpf_map_pop_elem(&fifo, &v);
	put(72, v); /* 2 */
	bpf_map_pop_elem(&fifo, &v);
	bpf_map_pop_elem(&fifo, &v);
	put(73, v); /* 4 */
	v = 9;
	put(74, bpf_map_pop_elem(&fifo, &v)); /* -ENOENT */
	put(75, v); /* zeroed */
	v = 1;
	bpf_map_push_elem(&lifo, &v, 0);
	v = 2;
	bpf_map_push_elem(&lifo, &v, 0);
	bpf_map_pop_elem(&lifo, &v);
	put(76, v); /* 2 */
	bpf_map_peek_elem(&lifo, &v);
	put(77, v); /* 1 */
	v = 7;
	bpf_map_push_elem(&fifo, &v, 0); /* for the syscall side to pop */
	return 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu SEC(".maps");

/* bpf_map_lookup_percpu_elem of CPUs 0, 1 and 100000 (none) */
SEC("perf_event")
int percpu(struct bpf_perf_event_data *ctx)
{
	__u32 k = 0;
	__u64 *p0 = bpf_map_lookup_percpu_elem(&pcpu, &k, 0);
	__u64 *p1 = bpf_map_lookup_percpu_elem(&pcpu, &k, 1);
	__u64 *px = bpf_map_lookup_percpu_elem(&pcpu, &k, 100000);

	put(78, p0 ? *p0 : 99);
	put(79, (p1 ? *p1 : 99) * 1000 + !px);
	return 1;
}

/* bpf_probe_write_user: "WRITTEN" to user_str + 8, then to address 8 */
SEC("perf_event")
int writes(struct bpf_perf_event_data *ctx)
{
	char w[8] = "WRITTEN";

	put(80, bpf_probe_write_user((void *)(user_str_addr + 8), w, sizeof(w)));
	put(81, bpf_probe_write_user((void *)8, w, sizeof(w)));
	return 1;
}
