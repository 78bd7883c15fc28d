/*
 * perf_stack.bpf.c - ordinary perf-event BPF: stack buffers (comm, a format string), a
 * bounded loop over the comm bytes, a ctx field read, an array map indexed by a masked value,
 * trace_printk.  The verifier must accept it.
 */
#include "bpf_defs.h"

struct bpf_map_def SEC("maps") buckets = {
	.type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 8,
};

SEC("perf_event") int comm_hash(struct bpf_perf_event_data *ctx)
{
	char comm[16];
	char fmt[] = "comm %s hash %u\n";
	unsigned int h = 2166136261u, key;
	unsigned long *slot;

	bpf_get_current_comm(comm, sizeof(comm));
#pragma clang loop unroll(disable)
	for (int i = 0; i < 16; i++) {
		if (!comm[i])
			break;
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	}
	key = (h ^ (unsigned int)ctx->sample_period) & 7;
	slot = bpf_map_lookup_elem(&buckets, &key);
	if (!slot)
		return 0;
	*slot += 1;
	bpf_trace_printk(fmt, sizeof(fmt), comm, h);
	return 1;
}

char _license[] SEC("license") = "GPL";
