/* loops.bpf.c - five ordinary BPF_PROG_TYPE_PERF_EVENT programs with loops, for t_bpf_loops,
 * plus bpf_for_each_map_elem and bpf_loop's errors.  Each reads its bounds from params (set by
 * the test, so clang cannot fold the loops away) and writes its results to res[]; running
 * again writes the same values.  Built by clang -target bpf.
 *   sum_for      a bounded for loop (hash of 0..n-1)         res[0]
 *   collatz      a while loop with two exits                  res[1]
 *   nested       nested bounded loops                         res[2]
 *   loop_cb      bpf_loop with a callback and a stack ctx     res[3] sum, res[4] return
 *   loop_stop    bpf_loop stopped by its callback             res[5] return, res[6] visits
 *   each_elem    bpf_for_each_map_elem over params            res[7] sum, res[8] return
 *   loop_errors  bpf_loop flags and nr_loops limits           res[9] -EINVAL?, res[10] -E2BIG?
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} res SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} params SEC(".maps");

static __always_inline void put(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&res, &k);

	if (p)
		*p = v;
}

static __always_inline __u64 param(__u32 k)
{
	__u64 *p = bpf_map_lookup_elem(&params, &k);

	return p ? *p : 0;
}

SEC("perf_event")
int sum_for(struct bpf_perf_event_data *ctx)
{
	__u64 n = param(0), s = 0;

	for (__u64 i = 0; i < n && i < 1000; i++)
		s = s * 31 + i;
	put(0, s);
	return 1;
}

SEC("perf_event")
int collatz(struct bpf_perf_event_data *ctx)
{
	__u64 x = param(1), steps = 0;

	while (x > 1 && steps < 200) {
		x = (x & 1) ? 3 * x + 1 : x / 2;
		steps++;
	}
	put(1, steps);
	return 1;
}

SEC("perf_event")
int nested(struct bpf_perf_event_data *ctx)
{
	__u64 n = param(2), c = 0;

	for (__u64 i = 0; i < n && i < 16; i++)
		for (__u64 j = 0; j < n && j < 16; j++)
			if ((i * j) % 3 == 0)
				c++;
	put(2, c);
	return 1;
}

struct sum_ctx {
	__u64 sum;
	__u64 visits;
};

static long add_index(__u32 i, void *data)
{
	struct sum_ctx *c = data;

	c->sum += i;
	return 0;
}

SEC("perf_event")
int loop_cb(struct bpf_perf_event_data *ctx)
{
	struct sum_ctx c = { 0, 0 };
	long r = bpf_loop((__u32)param(0), add_index, &c, 0);

	put(3, c.sum);
	put(4, (__u64)r);
	return 1;
}

static long stop_at_7(__u32 i, void *data)
{
	struct sum_ctx *c = data;

	c->visits++;
	return i == 7;
}

SEC("perf_event")
int loop_stop(struct bpf_perf_event_data *ctx)
{
	struct sum_ctx c = { 0, 0 };
	long r = bpf_loop(1000, stop_at_7, &c, 0);

	put(5, (__u64)r);
	put(6, c.visits);
	return 1;
}

static long add_value(void *map, __u32 *key, __u64 *val, struct sum_ctx *c)
{
	c->sum += *val;
	c->visits += *key;
	return 0;
}

SEC("perf_event")
int each_elem(struct bpf_perf_event_data *ctx)
{
	struct sum_ctx c = { 0, 0 };
	long r = bpf_for_each_map_elem(&params, add_value, &c, 0);

	put(7, c.sum + (c.visits << 32));
	put(8, (__u64)r);
	return 1;
}

SEC("perf_event")
int loop_errors(struct bpf_perf_event_data *ctx)
{
	struct sum_ctx c = { 0, 0 };

	put(9, (__u64)bpf_loop(4, add_index, &c, 1));
	put(10, (__u64)bpf_loop((1 << 23) + 1, add_index, &c, 0));
	put(11, c.sum);
	return 1;
}
