/* core.bpf.c - CO-RE programs for t_kbtf: libbpf relocates them against the running kernel's
 * BTF (/sys/kernel/btf/vmlinux) before loading them.  Local types carry a ___flavour suffix,
 * which libbpf drops when it matches them by name against the kernel's types. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* perfkernel's thread (struct task, kernel/include/kern/sched.h: tid) and Linux's
 * (struct task_struct: pid): each kernel has one of the two */
struct task___pk {
	int tid;
} __attribute__((preserve_access_index));
struct task_struct___lx {
	int pid;
} __attribute__((preserve_access_index));
/* the uapi struct both kernels' perf code uses, so both kernels' BTF describe it; the last
 * field is in neither */
struct perf_event_attr___kbtf {
	__u32 type;
	__u32 size;
	__u64 config;
	__u64 no_such_field_kbtf;
} __attribute__((preserve_access_index));

/* out[]: what read_tid found (t_kbtf.c's OUT_* indexes) */
#include "out.h"

SEC("perf_event")
int read_tid(void *ctx)
{
	void *t = (void *)bpf_get_current_task();
	__u32 k = 0;
	__u64 *runs = bpf_map_lookup_elem(&out, &k);

	if (runs)
		__sync_fetch_and_add(runs, 1);
	/* a relocation that finds no type is poisoned by libbpf; the branch it sits in is dead
	 * code once bpf_core_type_exists is a constant, and the verifier never reaches it */
	if (bpf_core_type_exists(struct task___pk)) {
		put(1, 1);
		put(2, (__u64)BPF_CORE_READ((struct task___pk *)t, tid));
	} else if (bpf_core_type_exists(struct task_struct___lx)) {
		put(1, 2);
		put(2, (__u64)BPF_CORE_READ((struct task_struct___lx *)t, pid));
	}
	put(3, bpf_core_field_exists(struct perf_event_attr___kbtf, config));
	put(4, bpf_core_field_exists(struct perf_event_attr___kbtf, no_such_field_kbtf));
	put(5, bpf_core_field_offset(struct perf_event_attr___kbtf, config));
	put(6, bpf_core_type_size(struct perf_event_attr___kbtf));
	return 0;
}

/* a CO-RE read of a field the kernel lacks: libbpf poisons the load and the program is refused */
SEC("perf_event")
int read_missing(void *ctx)
{
	struct perf_event_attr___kbtf *a = (void *)bpf_get_current_task();

	put(7, BPF_CORE_READ(a, no_such_field_kbtf));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
