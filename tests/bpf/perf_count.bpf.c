/*
 * perf_count.bpf.c - ordinary perf-event BPF: count samples per pid in a hash map (lookup,
 * null check, atomic add, insert when missing).  The verifier must accept it.
 */
#include "bpf_defs.h"

struct bpf_map_def SEC("maps") counts = {
	.type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 1024,
};

SEC("perf_event") int count_samples(struct bpf_perf_event_data *ctx)
{
	unsigned int pid = bpf_get_current_pid_tgid() >> 32;
	unsigned long *v = bpf_map_lookup_elem(&counts, &pid);

	if (v) {
		__sync_fetch_and_add(v, 1);
	} else {
		unsigned long one = 1;

		bpf_map_update_elem(&counts, &pid, &one, BPF_NOEXIST);
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
