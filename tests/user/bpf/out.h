/* out.h - the results map of the CO-RE test programs (core.bpf.c, task.bpf.c): eight u64
 * slots the test reads back by index, and put() to fill one. */
#ifndef TESTS_USER_BPF_OUT_H
#define TESTS_USER_BPF_OUT_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} out SEC(".maps");

static void put(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&out, &k);

	if (p)
		*p = v;
}

#endif
