/* otask.bpf.c - t_bpf_otask's programs: other tasks reached through the current one's typed
 * links (real_parent, group_leader), and the helpers that take such a task.  The fields are
 * relocated by libbpf against the running kernel: perfkernel's struct task (tid, tgid,
 * real_parent, group_leader) and struct trapframe (sp, pc), or Linux's struct task_struct
 * (pid, tgid, ...) and struct pt_regs (sp, pc). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task___pk {
	int tid;
	int tgid;
	struct task___pk *real_parent;
	struct task___pk *group_leader;
} __attribute__((preserve_access_index));
struct task_struct___lx {
	int pid;
	int tgid;
	struct task_struct___lx *real_parent;
	struct task_struct___lx *group_leader;
} __attribute__((preserve_access_index));

struct trapframe___pk {
	__u64 sp, pc;
} __attribute__((preserve_access_index));
struct pt_regs___lx {
	__u64 sp, pc;
} __attribute__((preserve_access_index));

/* out[0..4] results, out[5..7] the test's inputs */
#include "out.h"
#include "vma.h"

static __u64 get(__u32 k)
{
	__u64 *p = bpf_map_lookup_elem(&out, &k);

	return p ? *p : 0;
}

/* The parent: its task pointer through real_parent (plain loads, typed by the kernel's BTF) */
static void *parent_task(void)
{
	if (bpf_core_type_exists(struct task___pk))
		return ((struct task___pk *)bpf_get_current_task_btf())->real_parent;
	return ((struct task_struct___lx *)bpf_get_current_task_btf())->real_parent;
}

/* out[1] parent's tgid, out[2] our leader's thread id, out[3] our tgid, out[4] the flavour;
 * out[0]: how many real_parent steps up to the task of pid 0, plus 256 when that one is its
 * own real_parent (Linux's swapper/0) */
SEC("syscall")
int links(void *ctx)
{
	__u64 up = 0;

	if (bpf_core_type_exists(struct task___pk)) {
		struct task___pk *t = (void *)bpf_get_current_task_btf();

		put(1, t->real_parent->tgid);
		put(2, t->group_leader->tid);
		put(3, t->tgid);
		put(4, 1);
#pragma unroll
		for (int i = 0; i < 16; i++) {
			if (!t || t->tid == 0)
				break;
			t = t->real_parent;
			up++;
		}
		if (t && t->tid == 0 && t->real_parent == t)
			up += 256;
	} else {
		struct task_struct___lx *t = (void *)bpf_get_current_task_btf();

		put(1, t->real_parent->tgid);
		put(2, t->group_leader->pid);
		put(3, t->tgid);
		put(4, 2);
#pragma unroll
		for (int i = 0; i < 16; i++) {
			if (!t || t->pid == 0)
				break;
			t = t->real_parent;
			up++;
		}
		if (t && t->pid == 0 && t->real_parent == t)
			up += 256;
	}
	put(0, up);
	return 0;
}

/* bpf_get_task_stack(parent, buf, out[5] bytes, out[6] flags): out[1] its result, out[2] the
 * first address, out[3] whether the bytes past the result are zero */
SEC("syscall")
int pstack(void *ctx)
{
	__u64 buf[16] = {};
	__u32 size = get(5), zero = 1;
	long r;

	if (size > sizeof(buf))
		size = sizeof(buf);
	r = bpf_get_task_stack(parent_task(), buf, size, get(6));
	put(1, r);
	put(2, buf[0]);
	for (int i = 0; i < 16; i++)
		if (i * 8 >= r && i * 8 < size && buf[i])
			zero = 0;
	put(3, zero);
	return 0;
}

/* the same on the current task (out[6] flags), 16 entries */
SEC("syscall")
int mystack(void *ctx)
{
	__u64 buf[16] = {};

	put(1, bpf_get_task_stack(bpf_get_current_task_btf(), buf, sizeof(buf), get(6)));
	put(2, buf[0]);
	return 0;
}

/* bpf_task_pt_regs(current): out[1] pc, out[2] sp of the user registers */
SEC("syscall")
int regs(void *ctx)
{
	void *r = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (bpf_core_type_exists(struct trapframe___pk)) {
		put(1, ((struct trapframe___pk *)r)->pc);
		put(2, ((struct trapframe___pk *)r)->sp);
	} else {
		put(1, ((struct pt_regs___lx *)r)->pc);
		put(2, ((struct pt_regs___lx *)r)->sp);
	}
	return 0;
}

/* bpf_copy_from_user_task(&v, 8, out[5], parent, out[6]): out[1] result, out[2] v (which
 * starts as all ones) */
SEC("syscall")
int pcopy(void *ctx)
{
	__u64 v = ~0ull;

	put(1, bpf_copy_from_user_task(&v, sizeof(v), (void *)get(5), parent_task(), get(6)));
	put(2, v);
	return 0;
}

/* bpf_find_vma(parent, out[5], ...): out[1] result, out[2] calls, out[3..4] the area */
SEC("syscall")
int pvma(void *ctx)
{
	struct vma_seen c = { 0 };

	put(1, bpf_find_vma(parent_task(), get(5), vma_cb, &c, 0));
	put(2, c.calls);
	put(3, c.start);
	put(4, c.end);
	return 0;
}

/* two find_vma calls in one run on a timer overflow: out[1], out[2] their results */
SEC("perf_event")
int vma_twice(void *ctx)
{
	struct vma_seen c = { 0 };
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 a = get(5);

	if (!a)
		return 0;
	put(1, bpf_find_vma(t, a, vma_cb, &c, 0));
	put(2, bpf_find_vma(t, a, vma_cb, &c, 0));
	put(5, 0); /* once */
	return 0;
}

/* a counter per thread, bumped on the parent from the child's page faults */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} pcount SEC(".maps");

SEC("perf_event")
int parent_count(void *ctx)
{
	__u64 *c = bpf_task_storage_get(&pcount, parent_task(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (c)
		__sync_fetch_and_add(c, 1);
	return 0;
}

/* refused: copy_from_user_task may sleep, a perf_event program may not */
SEC("perf_event")
int copy_nosleep(void *ctx)
{
	__u64 v;

	return bpf_copy_from_user_task(&v, sizeof(v), 0, bpf_get_current_task_btf(), 0);
}

/* refused: a number for the task */
SEC("syscall")
int stack_scalar(void *ctx)
{
	__u64 buf[4];

	return bpf_get_task_stack((void *)(long)bpf_get_prandom_u32(), buf, sizeof(buf), 0);
}

SEC("syscall")
int regs_scalar(void *ctx)
{
	return bpf_task_pt_regs((void *)(long)bpf_get_prandom_u32()) != 0;
}

char LICENSE[] SEC("license") = "GPL";
