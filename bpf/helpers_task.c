/*
 * helpers_task.c - the helpers that take a task (PTR_TO_BTF_ID of the kernel's struct task: the
 * current one, or one reached through its links, real_parent / group_leader / parent), as
 * Linux 6.1's bpf_trace.c and stackmap.c give them: get_task_stack, task_pt_regs,
 * copy_from_user_task, find_vma; and the end of __bpf_get_stack that bpf_get_stack shares.
 * A task may be gone by the time it is used: the kernel checks it is still allocated before
 * looking inside (ksvc.h), and a gone task reads as one without frames or memory.
 * Not here: build ids (BPF_F_USER_BUILD_ID is EINVAL, as bpf_get_stack here).
 */
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define P(x) ((void *)(uintptr_t)(x))

/* The end of __bpf_get_stack: n addresses in ips (or an errno), fewer than min -EFAULT; past
 * the first skip, those that fit into buf (the rest of it zeroed); their bytes.  On an error
 * buf is all zero. */
uint64_t bpf_stack_result(void *buf, uint64_t size, const uint64_t *ips, long n, long min,
			  uint32_t skip)
{
	long err = n < 0 ? n : -EFAULT;

	if (n < min) {
		memset(buf, 0, size);
		return (uint64_t)err;
	}
	n -= skip;
	if ((uint64_t)n > size / 8)
		n = (long)(size / 8);
	memcpy(buf, ips + skip, (size_t)n * 8);
	memset((char *)buf + n * 8, 0, size - (size_t)n * 8);
	return (uint64_t)(n * 8);
}

/* bpf_get_task_stack: Linux 6.1's __bpf_get_stack for a task: its kernel return addresses, or
 * with BPF_F_USER_STACK the current task's user ones (-EFAULT for a kernel thread, -EOPNOTSUPP
 * for another task), skip dropped; the bytes written, the rest of buf zeroed; buf all zero on
 * an error. */
uint64_t bpf_h_get_task_stack(uint64_t task, uint64_t buf, uint64_t size, uint64_t flags,
			      uint64_t a5)
{
	uint32_t skip = flags & BPF_F_SKIP_FIELD_MASK, num = (uint32_t)(size / 8), max;
	uint64_t ips[PERF_MAX_STACK_DEPTH + 1];
	long n, err = -EINVAL;

	if (flags & ~(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID))
		goto clear;
	if ((flags & BPF_F_USER_BUILD_ID) || size % 8)
		goto clear;
	max = num + skip > PERF_MAX_STACK_DEPTH ? PERF_MAX_STACK_DEPTH : num + skip;
	n = ksvc_task_stack(P(task), flags & BPF_F_USER_STACK, ips, max);
	return bpf_stack_result(P(buf), size, ips, n, skip, skip);
clear:
	memset(P(buf), 0, size);
	return (uint64_t)err;
}

/* bpf_task_pt_regs: the task's saved user registers, typed struct trapframe by the verifier */
uint64_t bpf_h_task_pt_regs(uint64_t task, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uintptr_t)ksvc_task_user_regs(P(task));
}

/* bpf_copy_from_user_task (sleepable programs): size bytes at uptr in the task's memory;
 * flags EINVAL (dst untouched), a short read zeroes dst and is -EFAULT. */
uint64_t bpf_h_copy_from_user_task(uint64_t dst, uint64_t size, uint64_t uptr, uint64_t task,
				   uint64_t flags)
{
	if (flags)
		return (uint64_t)-EINVAL;
	if (!(uint32_t)size)
		return 0;
	if (ksvc_task_copy_from_user(P(task), P(dst), uptr, (uint32_t)size) == (int)(uint32_t)size)
		return 0;
	memset(P(dst), 0, (uint32_t)size);
	return (uint64_t)-EFAULT;
}

/*
 * bpf_find_vma: the callback once with (task, vma, ctx) for the task's memory area holding
 * addr, then 0; -EINVAL for flags, -ENOENT without one (or without memory), -EBUSY when its
 * mm is locked or, with interrupts masked, this CPU's last call has not yet unlocked it.
 */
struct find_vma_call {
	uint64_t fn, task, ctx;
};

static void find_vma_cb(void *vma, void *arg)
{
	const struct find_vma_call *c = arg;

	(void)bpf_callback_run(c->fn, c->task, (uintptr_t)vma, c->ctx, 0);
}

uint64_t bpf_h_find_vma(uint64_t task, uint64_t addr, uint64_t fn, uint64_t ctx, uint64_t flags)
{
	struct find_vma_call c = { .fn = fn, .task = task, .ctx = ctx };

	if (flags)
		return (uint64_t)-EINVAL;
	return (uint64_t)(int64_t)ksvc_task_find_vma(P(task), addr, find_vma_cb, &c);
}
