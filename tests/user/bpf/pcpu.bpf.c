/* pcpu.bpf.c - t_bpf_pcpu's programs: typed ksyms (extern ... __ksym, lddw BPF_PSEUDO_BTF_ID)
 * of two per-CPU variables both kernels have, bpf_prog_active (an int: the BPF recursion guard,
 * which a perf_event program's own run holds at 1) and kstat (struct kernel_stat, whose
 * irqs_sum counts the CPU's interrupts), through bpf_this_cpu_ptr and bpf_per_cpu_ptr; and
 * programs the verifier refuses; and bpf_snprintf_btf of bytes t_bpf_pcpu.c puts in a map,
 * shown as a kernel type it names. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct kernel_stat {
	unsigned long irqs_sum;
} __attribute__((preserve_access_index));

extern const int bpf_prog_active __ksym;
extern const struct kernel_stat kstat __ksym;

#include "out.h"

#define MAX_CPUS 64

SEC("perf_event")
int pcpu_read(void *ctx)
{
	const int *active = bpf_this_cpu_ptr(&bpf_prog_active);
	const struct kernel_stat *ks = bpf_this_cpu_ptr(&kstat);
	__u32 cpu = bpf_get_smp_processor_id(), n = 0, irqs_ok = 1;

	put(1, *active + 100); /* 100 + 1: the program's own run counts */
	put(2, ks->irqs_sum > 0);
	/* this CPU's instance is per_cpu_ptr's for this CPU */
	put(3, (__u64)active == (__u64)bpf_per_cpu_ptr(&bpf_prog_active, cpu));
	for (__u32 i = 0; i < MAX_CPUS; i++) {
		const struct kernel_stat *k = bpf_per_cpu_ptr(&kstat, i);

		if (!k)
			break;
		if (!k->irqs_sum)
			irqs_ok = 0;
		n++;
	}
	put(4, n);
	put(5, irqs_ok);
	put(6, !bpf_per_cpu_ptr(&bpf_prog_active, n) && !bpf_per_cpu_ptr(&kstat, 0xffffffffu));
	put(7, ks != bpf_per_cpu_ptr(&kstat, cpu ^ 1));
	return 0;
}

/* a per-CPU variable is not memory by itself: only the two helpers take it */
SEC("perf_event")
int pcpu_direct(void *ctx)
{
	return bpf_prog_active;
}

/* this_cpu_ptr of an int is read-only memory */
SEC("perf_event")
int pcpu_write(void *ctx)
{
	int *p = (int *)bpf_this_cpu_ptr(&bpf_prog_active);

	*p = 0;
	return 0;
}

/* per_cpu_ptr may be NULL */
SEC("perf_event")
int pcpu_nullable(void *ctx)
{
	return *(const int *)bpf_per_cpu_ptr(&bpf_prog_active, 0);
}

/* 4 bytes of int, no more */
SEC("perf_event")
int pcpu_past_end(void *ctx)
{
	return ((const int *)bpf_this_cpu_ptr(&bpf_prog_active))[1];
}

/* only a per-CPU variable's pointer */
SEC("perf_event")
int pcpu_ctx_arg(void *ctx)
{
	return bpf_this_cpu_ptr(ctx) != 0;
}

/* show_in[0]: what to show; show_out[0]: what bpf_snprintf_btf returned and wrote */
struct show_in {
	__u32 type_id, str_size;
	__u64 flags;
	__u64 addr; /* 0: show data; else this address */
	__u32 ptr_size; /* 16, or 8 for a wrong btf_ptr_size */
	__u32 pad;
	__u64 data[64];
};
struct show_out {
	__s64 ret;
	char str[2048];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct show_in);
} show_in SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct show_out);
} show_out SEC(".maps");

SEC("perf_event")
int show(void *ctx)
{
	__u32 k = 0;
	struct show_in *in = bpf_map_lookup_elem(&show_in, &k);
	struct show_out *o = bpf_map_lookup_elem(&show_out, &k);
	struct btf_ptr p = {};

	if (!in || !o)
		return 0;
	p.ptr = in->addr ? (void *)in->addr : (void *)in->data;
	p.type_id = in->type_id;
	/* constant sizes: 1 and 10 for truncation, else the whole buffer */
	if (in->ptr_size == 8)
		o->ret = bpf_snprintf_btf(o->str, sizeof(o->str), &p, 8, in->flags);
	else if (in->str_size == 1)
		o->ret = bpf_snprintf_btf(o->str, 1, &p, sizeof(p), in->flags);
	else if (in->str_size == 10)
		o->ret = bpf_snprintf_btf(o->str, 10, &p, sizeof(p), in->flags);
	else
		o->ret = bpf_snprintf_btf(o->str, sizeof(o->str), &p, sizeof(p), in->flags);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
