/* pagefaults.bpf.c - a BPF_PROG_TYPE_PERF_EVENT program for t_libbpf (the KernelScript
 * @perf_event flow): counts each overflow of the event it is attached to in counts[0] and
 * the attach cookie in counts[1]; keeps the sample.  to_buffer and to_ring send each fault
 * address through bpf_perf_event_output and bpf_ringbuf_output; to_ring_reserve fills a
 * struct fault in place (bpf_ringbuf_reserve, then submit, or discard for a zero address).
 * Built by clang -target bpf. */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int on_overflow(struct bpf_perf_event_data *ctx)
{
	__u32 k = 0, kc = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k), *c = bpf_map_lookup_elem(&counts, &kc);

	if (v)
		__sync_fetch_and_add(v, 1);
	if (c)
		*c = bpf_get_attach_cookie(ctx);
	return 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* each overflow's fault address to this CPU's bpf-output event (libbpf's perf_buffer) */
SEC("perf_event")
int to_buffer(struct bpf_perf_event_data *ctx)
{
	__u64 addr = ctx->addr;

	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &addr, sizeof(addr));
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 4096);
} ring SEC(".maps");

/* each overflow's fault address to a BPF ring buffer (libbpf's ring_buffer) */
SEC("perf_event")
int to_ring(struct bpf_perf_event_data *ctx)
{
	__u64 addr = ctx->addr;

	bpf_ringbuf_output(&ring, &addr, sizeof(addr), 0);
	return 0;
}

/* the fault address, pid and comm, written in place in the ring */
struct fault {
	__u64 addr;
	__u32 pid;
	char comm[16];
};

SEC("perf_event")
int to_ring_reserve(struct bpf_perf_event_data *ctx)
{
	struct fault *f = bpf_ringbuf_reserve(&ring, sizeof(*f), 0);

	if (!f)
		return 0;
	f->addr = ctx->addr;
	f->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(f->comm, sizeof(f->comm));
	if (!f->addr) {
		bpf_ringbuf_discard(f, 0);
		return 0;
	}
	bpf_ringbuf_submit(f, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
