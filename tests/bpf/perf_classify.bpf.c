/*
 * perf_classify.bpf.c - ordinary perf-event BPF with branchy loops (classify.h): classify each
 * byte of a 256-byte map value (in two halves: counts stay below 256), then 128 bytes copied to
 * the stack from the sampled data address, and add the per-class counts to a map.  The counters take different values on
 * different paths, so the verifier must not tell states apart by them (precision tracking) or
 * it runs out of budget; Linux 6.1 accepts it.
 */
#include "bpf_defs.h"
#include "classify.h"

struct bpf_map_def SEC("maps") bufs = {
	.type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 256, .max_entries = 1,
};
struct bpf_map_def SEC("maps") classes = {
	.type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8 * 6, .max_entries = 2,
};

static __attribute__((always_inline)) void add(unsigned int key, unsigned long packed)
{
	unsigned long *out = bpf_map_lookup_elem(&classes, &key);

	if (!out)
		return;
	out[0] += packed >> CLASS_DIGIT & 0xff;
	out[1] += packed >> CLASS_ALPHA & 0xff;
	out[2] += packed >> CLASS_SPACE & 0xff;
	out[3] += packed >> CLASS_CTRL & 0xff;
	out[4] += packed >> CLASS_HIGH & 0xff;
	out[5] += packed >> CLASS_OTHER & 0xff;
}

SEC("perf_event") int classify_bytes(struct bpf_perf_event_data *ctx)
{
	unsigned char data[128];
	unsigned int zero = 0;
	const unsigned char *buf = bpf_map_lookup_elem(&bufs, &zero);

	if (!buf)
		return 0;
	add(0, classify(buf, 128));
	add(0, classify(buf + 128, 128));
	if (bpf_probe_read_kernel(data, sizeof(data), (const void *)ctx->addr))
		return 0;
	add(1, classify(data, sizeof(data)));
	return 0;
}

char _license[] SEC("license") = "GPL";
