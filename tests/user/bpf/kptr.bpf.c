/* kptr.bpf.c - t_bpf_kptr's clang-built programs: a global pointer to the current thread's
 * struct kept as a kptr (__kptr, btf_type_tag "kptr").  The kernel finds a kptr's struct by
 * its name alone, and one kptr it cannot find leaves the whole value without kptrs, so each
 * kernel has its own data section (a map of its own), kptr and program: perfkernel's struct
 * task (tid) in .data.pk, Linux's struct task_struct (pid) in .data.lx; the id read through
 * it is CO-RE relocated.  Clang 14 loses a pointer's type tag when the same pointer type is met untagged
 * or as a struct member first, so the kptr structs appear only in these two globals: the
 * programs hold the pointers as void *, read them as task___rd / task_struct___rd (CO-RE
 * flavours of the same kernel structs) and call bpf_get_current_task_btf through a void *
 * declaration. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define __kptr __attribute__((btf_type_tag("kptr")))

struct task {
	int tid;
};
struct task_struct {
	int pid;
};
struct task___rd {
	int tid;
} __attribute__((preserve_access_index));
struct task_struct___rd {
	int pid;
} __attribute__((preserve_access_index));

struct task __kptr *cur_pk SEC(".data.pk");
struct task_struct __kptr *cur_lx SEC(".data.lx");

static void *(*current_task_btf)(void) = (void *)BPF_FUNC_get_current_task_btf;

/* out[0]: runs; out[1]: the thread id read through the kptr the previous run stored;
 * out[2]: runs that found it NULL */
#include "out.h"

static void count(__u32 k)
{
	__u64 *n = bpf_map_lookup_elem(&out, &k);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("perf_event")
int kptr_pk(void *ctx)
{
	void *t = cur_pk;

	count(0);
	if (t)
		put(1, ((struct task___rd *)t)->tid);
	else
		count(2);
	cur_pk = current_task_btf();
	return 0;
}

SEC("perf_event")
int kptr_lx(void *ctx)
{
	void *t = cur_lx;

	count(0);
	if (t)
		put(1, ((struct task_struct___rd *)t)->pid);
	else
		count(2);
	cur_lx = current_task_btf();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
