/* pcpu.bpf.c - t_bpf_pcpu's programs: typed ksyms (extern ... __ksym, lddw BPF_PSEUDO_BTF_ID)
 * of two per-CPU variables both kernels have, bpf_prog_active (an int: the BPF recursion guard,
 * which a perf_event program's own run holds at 1) and kstat (struct kernel_stat, whose
 * irqs_sum counts the CPU's interrupts), through bpf_this_cpu_ptr and bpf_per_cpu_ptr; and
 * programs the verifier refuses. */
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

char LICENSE[] SEC("license") = "GPL";
