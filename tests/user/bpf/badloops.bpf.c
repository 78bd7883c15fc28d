/* badloops.bpf.c - perf_event programs with callbacks the verifier must judge as Linux 6.1
 * does; t_bpf_loops loads each alone.  Built by clang -target bpf.
 *   cb_ret2      a bpf_loop callback returning 2: refused (r0 must be 0 or 1)
 *   each_pea     for_each_map_elem over a perf event array: refused (map type)
 *   key_write    a for_each_map_elem callback writing its key: refused
 *   nested_loop  bpf_loop inside a bpf_loop callback
 *   cb_ok        a callback reading its stack context: accepted (the control)
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 2);
} pea SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

static long ret2(__u32 i, void *c)
{
	return 2;
}

SEC("perf_event")
int cb_ret2(struct bpf_perf_event_data *ctx)
{
	bpf_loop(4, ret2, 0, 0);
	return 1;
}

static long any_elem(void *map, __u32 *key, void *val, void *c)
{
	return 0;
}

SEC("perf_event")
int each_pea(struct bpf_perf_event_data *ctx)
{
	bpf_for_each_map_elem(&pea, any_elem, 0, 0);
	return 1;
}

static long write_key(void *map, __u32 *key, __u64 *val, void *c)
{
	*key = 1;
	return 0;
}

SEC("perf_event")
int key_write(struct bpf_perf_event_data *ctx)
{
	bpf_for_each_map_elem(&hash, write_key, 0, 0);
	return 1;
}

static long inner(__u32 i, void *c)
{
	*(__u64 *)c += i;
	return 0;
}

static long outer(__u32 i, void *c)
{
	bpf_loop(3, inner, c, 0);
	return 0;
}

SEC("perf_event")
int nested_loop(struct bpf_perf_event_data *ctx)
{
	__u64 sum = 0;

	bpf_loop(3, outer, &sum, 0);
	return sum == 9;
}

static long read_ctx(__u32 i, void *c)
{
	return *(__u64 *)c == i;
}

SEC("perf_event")
int cb_ok(struct bpf_perf_event_data *ctx)
{
	__u64 n = 5;

	return bpf_loop(10, read_ctx, &n, 0) == 6;
}
