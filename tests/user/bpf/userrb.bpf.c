/* userrb.bpf.c - perf_event programs draining a BPF_MAP_TYPE_USER_RINGBUF, for
 * t_bpf_user_ringbuf.  Built by clang -target bpf (the callbacks need the BTF func_info Linux
 * wants; libbpf loads it there and drops it here).
 *   drain      res[0] += bpf_user_ringbuf_drain(&urb, cb, NULL, params[0]); per sample the
 *              callback adds 1 to res[1], the first 8 bytes (dynptr_read) to res[2], 1 to
 *              res[3] when 8 bytes at offset 1 are refused, 1 to res[4] when dynptr_data
 *              gives a pointer
 *   drain_rb   the helper on a BPF_MAP_TYPE_RINGBUF: refused
 *   submit_cb  a callback submitting its dynptr: refused
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} res SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} params SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 4096);
} urb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

static __always_inline void add(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&res, &k);

	if (p)
		__sync_fetch_and_add(p, v);
}

static long cb(struct bpf_dynptr *d, void *ctx)
{
	__u64 v = 0;

	add(1, 1);
	bpf_dynptr_read(&v, sizeof(v), d, 0, 0);
	add(2, v);
	if (bpf_dynptr_read(&v, sizeof(v), d, 1, 0))
		add(3, 1);
	if (bpf_dynptr_data(d, 0, 8))
		add(4, 1);
	return 0;
}

SEC("perf_event")
int drain(struct bpf_perf_event_data *ctx)
{
	__u32 k = 0;
	__u64 *flags = bpf_map_lookup_elem(&params, &k);

	add(0, bpf_user_ringbuf_drain(&urb, cb, NULL, flags ? *flags : 0));
	return 0;
}

SEC("perf_event")
int drain_rb(struct bpf_perf_event_data *ctx)
{
	return bpf_user_ringbuf_drain(&rb, cb, NULL, 0) > 0;
}

static long cb_submit(struct bpf_dynptr *d, void *ctx)
{
	bpf_ringbuf_submit_dynptr(d, 0);
	return 0;
}

SEC("perf_event")
int submit_cb(struct bpf_perf_event_data *ctx)
{
	return bpf_user_ringbuf_drain(&urb, cb_submit, NULL, 0) > 0;
}
