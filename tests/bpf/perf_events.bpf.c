/*
 * perf_events.bpf.c - ordinary perf-event BPF: bpf_perf_event_output of a stack struct to a
 * PERF_EVENT_ARRAY and bpf_get_stackid into a STACK_TRACE map, global data in .bss and
 * .rodata, and a bounded loop with a variable index into a map value.  Must be accepted.
 */
#include "bpf_defs.h"

struct bpf_map_def SEC("maps") events = {
	.type = BPF_MAP_TYPE_PERF_EVENT_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 4,
};
struct bpf_map_def SEC("maps") stacks = {
	.type = BPF_MAP_TYPE_STACK_TRACE, .key_size = 4, .value_size = 8 * 16, .max_entries = 64,
};
struct bpf_map_def SEC("maps") hist = {
	.type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8 * 32, .max_entries = 1,
};

unsigned long samples;
const volatile unsigned int shift = 3;

struct sample {
	unsigned long period, addr;
	long stackid;
	unsigned int cpu, pad;
};

SEC("perf_event") int on_sample(struct bpf_perf_event_data *ctx)
{
	struct sample s = {};
	unsigned int zero = 0;
	unsigned long *h;

	samples++;
	s.period = ctx->sample_period;
	s.addr = ctx->addr;
	s.stackid = bpf_get_stackid(ctx, &stacks, 0);
	s.cpu = bpf_get_smp_processor_id();
	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &s, sizeof(s));
	h = bpf_map_lookup_elem(&hist, &zero);
	if (!h)
		return 0;
#pragma clang loop unroll(disable)
	for (unsigned int i = 0; i < 32; i++) {
		if ((s.period >> shift) <= (1ul << i)) {
			h[i] += 1;
			break;
		}
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
