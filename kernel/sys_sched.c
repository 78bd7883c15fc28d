/*
 * sys_sched.c - scheduling system calls: sched_yield, CPU affinity, getcpu, the scheduling
 * policy calls, membarrier, and sysinfo.
 *
 * ABI: Linux 6.1 on arm64.  The affinity mask is one 64-bit word (MAX_CPUS <= 64):
 * sched_getaffinity needs len a multiple of 8 covering every possible CPU and returns 8, the
 * bytes written; sched_setaffinity ignores bits beyond the possible CPUs and refuses (EINVAL) a
 * mask with no online CPU.  There is one policy (round robin, like SCHED_OTHER); SCHED_FIFO/RR
 * get EPERM, as for a caller without CAP_SYS_NICE.  membarrier's barriers are IPIs to every
 * online CPU (each runs a full barrier in the handler).
 */
#include <linux/membarrier.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <linux/sysinfo.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>

#define SYSARGS uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5

static void *uptr(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

static long sys_sched_yield(SYSARGS)
{
	sched_yield();
	return 0;
}
SYSCALL(__NR_sched_yield, sys_sched_yield);

static uint64_t cpus_online_mask(void)
{
	uint64_t m = 0;

	for (unsigned int i = 0; i < nr_cpus_possible && i < 64; i++)
		if (atomic_load(&cpus[i].online))
			m |= 1ull << i;
	return m;
}

/* Thread by tid, 0 the caller (proc_tree_lock held). */
static struct task *task_arg_locked(int pid)
{
	spin_assert_held(&proc_tree_lock);
	if (pid == 0)
		return current_task();
	struct uthread *t = pid > 0 ? proc_find_thread_locked(pid) : NULL;

	return t ? &t->task : NULL;
}

static long sys_sched_getaffinity(SYSARGS)
{
	uint64_t len = a1, mask;

	if (len * 8 < nr_cpus_possible || (len & 7))
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct task *t = task_arg_locked((int)a0);

	mask = t ? t->affinity & cpus_online_mask() : 0;
	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (!t)
		return -ESRCH;
	if (ksvc_copy_to_user(uptr(a2), &mask, sizeof(mask)))
		return -EFAULT;
	return sizeof(mask);
}
SYSCALL(__NR_sched_getaffinity, sys_sched_getaffinity);

static long sys_sched_setaffinity(SYSARGS)
{
	uint64_t mask = 0, possible;

	if (ksvc_copy_from_user(&mask, uptr(a2), MIN(a1, sizeof(mask))))
		return -EFAULT;
	possible = nr_cpus_possible >= 64 ? ~0ull : (1ull << nr_cpus_possible) - 1;
	mask &= possible;
	if (!(mask & cpus_online_mask()))
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct task *t = task_arg_locked((int)a0);
	bool self = t == current_task();

	if (t && !self)
		sched_set_affinity(t, mask);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (!t)
		return -ESRCH;
	if (self)
		sched_set_affinity(t, mask); /* may yield to move: not under the lock */
	return 0;
}
SYSCALL(__NR_sched_setaffinity, sys_sched_setaffinity);

static long sys_getcpu(SYSARGS)
{
	uint32_t cpu = this_cpu()->id, node = 0;

	if (a0 && ksvc_copy_to_user(uptr(a0), &cpu, sizeof(cpu)))
		return -EFAULT;
	if (a1 && ksvc_copy_to_user(uptr(a1), &node, sizeof(node)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_getcpu, sys_getcpu);

/* ---- policy ---- */

static long sched_check_pid(int pid)
{
	if (pid < 0)
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct task *t = task_arg_locked(pid);

	spin_unlock_irqrestore(&proc_tree_lock, f);
	return t ? 0 : -ESRCH;
}

static long sched_check_param(uint64_t policy, uint64_t uparam)
{
	struct sched_param sp;

	if (!uparam)
		return -EINVAL;
	if (ksvc_copy_from_user(&sp, uptr(uparam), sizeof(sp)))
		return -EFAULT;
	switch (policy & ~(uint64_t)SCHED_RESET_ON_FORK) {
	case SCHED_NORMAL:
	case SCHED_BATCH:
	case SCHED_IDLE:
		return sp.sched_priority == 0 ? 0 : -EINVAL;
	case SCHED_FIFO:
	case SCHED_RR:
		return sp.sched_priority >= 1 && sp.sched_priority <= 99 ? -EPERM : -EINVAL;
	default:
		return -EINVAL;
	}
}

static long sys_sched_getscheduler(SYSARGS)
{
	long r = sched_check_pid((int)a0);

	return r ? r : SCHED_NORMAL;
}
SYSCALL(__NR_sched_getscheduler, sys_sched_getscheduler);

static long sys_sched_getparam(SYSARGS)
{
	struct sched_param sp = { 0 };
	long r = sched_check_pid((int)a0);

	if (!r && (!a1 || ksvc_copy_to_user(uptr(a1), &sp, sizeof(sp))))
		r = a1 ? -EFAULT : -EINVAL;
	return r;
}
SYSCALL(__NR_sched_getparam, sys_sched_getparam);

static long sys_sched_setscheduler(SYSARGS)
{
	long r = sched_check_pid((int)a0);

	return r ? r : sched_check_param(a1, a2);
}
SYSCALL(__NR_sched_setscheduler, sys_sched_setscheduler);

static long sys_sched_setparam(SYSARGS)
{
	long r = sched_check_pid((int)a0);

	return r ? r : sched_check_param(SCHED_NORMAL, a1);
}
SYSCALL(__NR_sched_setparam, sys_sched_setparam);

static long sys_sched_get_priority_max(SYSARGS)
{
	if (a0 == SCHED_FIFO || a0 == SCHED_RR)
		return 99;
	return a0 == SCHED_NORMAL || a0 == SCHED_BATCH || a0 == SCHED_IDLE ? 0 : -EINVAL;
}
SYSCALL(__NR_sched_get_priority_max, sys_sched_get_priority_max);

static long sys_sched_get_priority_min(SYSARGS)
{
	if (a0 == SCHED_FIFO || a0 == SCHED_RR)
		return 1;
	return a0 == SCHED_NORMAL || a0 == SCHED_BATCH || a0 == SCHED_IDLE ? 0 : -EINVAL;
}
SYSCALL(__NR_sched_get_priority_min, sys_sched_get_priority_min);

/* ---- membarrier ---- */

#define MEMBARRIER_SUPPORTED                                                                       \
	(MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED |                                 \
	 MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED |             \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)

static void membarrier_ipi(void *arg)
{
	(void)arg;
	__asm__ volatile("dmb ish" ::: "memory");
}

static long sys_membarrier(SYSARGS)
{
	if (a0 == MEMBARRIER_CMD_QUERY)
		return a1 ? -EINVAL : MEMBARRIER_SUPPORTED;
	if (a1)
		return -EINVAL;
	switch (a0) {
	case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
		return 0;
	case MEMBARRIER_CMD_GLOBAL:
	case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
		smp_call_all(membarrier_ipi, NULL);
		return 0;
	default:
		return -EINVAL;
	}
}
SYSCALL(__NR_membarrier, sys_membarrier);

/* ---- sysinfo ---- */

static unsigned int count_tasks_locked(const struct proc *p)
{
	spin_assert_held(&proc_tree_lock);
	unsigned int n = p->zombie ? 0 : (unsigned int)p->nr_threads;
	const struct list_node *c;

	list_for_each(c, &p->children)
		n += count_tasks_locked(list_entry(c, struct proc, sibling));
	return n;
}

static long sys_sysinfo(SYSARGS)
{
	struct sysinfo si;
	uint64_t now = time_ns();

	memset(&si, 0, sizeof(si));
	si.uptime = (long)(now / NSEC_PER_SEC + (now % NSEC_PER_SEC ? 1 : 0));
	si.totalram = mem_total_bytes();
	si.freeram = mem_free_bytes();
	si.mem_unit = 1;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *root = proc_find_locked(1);

	if (!root)
		for (root = current_proc(); root->parent; root = root->parent)
			;
	unsigned int n = count_tasks_locked(root);

	spin_unlock_irqrestore(&proc_tree_lock, f);
	si.procs = (uint16_t)MIN(n, 0xffffu);
	return ksvc_copy_to_user(uptr(a0), &si, sizeof(si)) ? -EFAULT : 0;
}
SYSCALL(__NR_sysinfo, sys_sysinfo);
