/* task.bpf.c - t_bpf_task's programs: loads through bpf_get_current_task_btf()'s pointer,
 * which the verifier types by the kernel's BTF (PTR_TO_BTF_ID).  The fields are relocated by
 * libbpf against the running kernel: perfkernel's struct task (tid, all_node, comm) or Linux's
 * struct task_struct (pid, tasks, comm); the ___flavour suffixes let one object name both. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct list_node___pk {
	struct list_node___pk *next, *prev;
} __attribute__((preserve_access_index));
struct task___pk {
	int tid;
	char comm[16];
	struct list_node___pk all_node;
} __attribute__((preserve_access_index));

struct list_head___lx {
	struct list_head___lx *next, *prev;
} __attribute__((preserve_access_index));
struct task_struct___lx {
	int pid;
	char comm[16];
	struct list_head___lx tasks;
} __attribute__((preserve_access_index));

/* out[]: t_bpf_task.c's OUT_* indexes */
#include "out.h"
#include "vma.h"

SEC("perf_event")
int task_fields(void *ctx)
{
	__u32 k = 0;
	__u64 *runs = bpf_map_lookup_elem(&out, &k);

	if (runs)
		__sync_fetch_and_add(runs, 1);
	/* plain loads (no bpf_probe_read): the verifier checks each against the struct's BTF */
	if (bpf_core_type_exists(struct task___pk)) {
		struct task___pk *t = (void *)bpf_get_current_task_btf();

		put(1, 1);
		put(2, (__u64)t->tid);
		put(3, *(__u64 *)t->comm);
		/* a pointer member is itself a typed pointer: the list links back to the task */
		put(4, t->all_node.next->prev == &t->all_node);
	} else if (bpf_core_type_exists(struct task_struct___lx)) {
		struct task_struct___lx *t = (void *)bpf_get_current_task_btf();

		put(1, 2);
		put(2, (__u64)t->pid);
		put(3, *(__u64 *)t->comm);
		put(4, t->tasks.next->prev == &t->tasks);
	}
	return 0;
}

/* bpf_find_vma(current, out[5], vma_cb, &seen, out[6]): the test sets the address and the
 * flags.  One call a run: Linux answers a second one in the same run -EBUSY while the first
 * one's unlock waits for its irq_work. */
SEC("perf_event")
int task_vma(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vma_seen c = { 0 };
	__u32 ka = 5, kf = 6;
	__u64 *addr = bpf_map_lookup_elem(&out, &ka), *flags = bpf_map_lookup_elem(&out, &kf);

	if (!addr || !flags)
		return 0;
	put(1, bpf_find_vma(t, *addr, vma_cb, &c, *flags));
	put(2, c.calls);
	put(3, c.start);
	put(4, c.end);
	return 0;
}

/* a counter per thread */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} counts SEC(".maps");

/* counts[current] += 1 (made at 0 on the first run: a NULL initial value), out[0] the runs;
 * out[1]: whether a lookup without F_CREATE found it too */
SEC("perf_event")
int task_count(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 *c = bpf_task_storage_get(&counts, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u32 k = 0;
	__u64 *runs = bpf_map_lookup_elem(&out, &k);

	if (runs)
		__sync_fetch_and_add(runs, 1);
	if (c)
		__sync_fetch_and_add(c, 1);
	put(1, c && bpf_task_storage_get(&counts, t, 0, 0) == c);
	return 0;
}

/* bpf_task_storage_delete(counts, current): out[2] its result, then again: out[3] */
SEC("perf_event")
int task_uncount(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();

	put(2, bpf_task_storage_delete(&counts, t));
	put(3, bpf_task_storage_delete(&counts, t));
	put(4, (__u64)bpf_task_storage_get(&counts, t, 0, 0));
	return 0;
}

/* refused: a task storage map takes only its two helpers */
SEC("perf_event")
int count_lookup(void *ctx)
{
	int k = 0;

	return bpf_map_lookup_elem(&counts, &k) != 0;
}

/* refused: find_vma's task must be a task pointer (not a number), unmoved */
SEC("perf_event")
int vma_scalar_task(void *ctx)
{
	struct vma_seen c = { 0 };

	return bpf_find_vma((struct task_struct *)(long)bpf_get_prandom_u32(), 0, vma_cb, &c, 0);
}

SEC("perf_event")
int vma_moved_task(void *ctx)
{
	struct vma_seen c = { 0 };

	return bpf_find_vma((void *)((char *)bpf_get_current_task_btf() + 8), 0, vma_cb, &c, 0);
}

char LICENSE[] SEC("license") = "GPL";
