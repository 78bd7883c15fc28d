/*
 * sys_misc.c - small process system calls: identity (pids, uids, groups, sessions), uname,
 * resource limits, getrandom, CPU affinity and scheduling policy, sysinfo, prctl, robust
 * lists, rseq, membarrier, personality, capabilities, priorities.
 *
 * ABI: Linux 6.1 on arm64 (<linux/utsname.h> new_utsname, <linux/resource.h> rlimit,
 * <linux/sysinfo.h>, <linux/prctl.h>, <linux/capability.h> v3).  Everyone is root (uid/gid 0,
 * every capability), so the set*id calls succeed without changing anything.  Scheduling is
 * round robin only: SCHED_OTHER/BATCH/IDLE are accepted as the one policy, real-time policies
 * get EPERM (as for an unprivileged caller); priorities are not stored.  rseq gives ENOSYS
 * (glibc then runs without it, as on kernels before 4.18).  The affinity mask is 8 bytes
 * (MAX_CPUS <= 64), so sched_getaffinity returns 8.
 */
#include <linux/resource.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <linux/prctl.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <linux/sysinfo.h>
#include <linux/utsname.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <perf/perf.h>

#define SYSARGS uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5

static void *uptr(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

static int put_u32(uint64_t uaddr, uint32_t v)
{
	return uaddr ? ksvc_copy_to_user(uptr(uaddr), &v, sizeof(v)) : 0;
}

/* ---- identity ---- */

static long sys_uname(SYSARGS)
{
	struct new_utsname u;

	memset(&u, 0, sizeof(u));
	memcpy(u.sysname, "Linux", sizeof("Linux"));
	memcpy(u.nodename, "perfkernel", sizeof("perfkernel"));
	memcpy(u.release, "6.1.0-perfkernel", sizeof("6.1.0-perfkernel"));
	memcpy(u.version, "#1 SMP PREEMPT perfkernel", sizeof("#1 SMP PREEMPT perfkernel"));
	memcpy(u.machine, "aarch64", sizeof("aarch64"));
	memcpy(u.domainname, "(none)", sizeof("(none)"));
	return ksvc_copy_to_user(uptr(a0), &u, sizeof(u)) ? -EFAULT : 0;
}
SYSCALL(__NR_uname, sys_uname);

static long sys_getpid(SYSARGS)
{
	return current_proc()->tgid;
}
SYSCALL(__NR_getpid, sys_getpid);

static long sys_gettid(SYSARGS)
{
	return current_task()->tid;
}
SYSCALL(__NR_gettid, sys_gettid);

static long sys_getppid(SYSARGS)
{
	return READ_ONCE(current_proc()->ppid); /* kept with parent under proc_tree_lock */
}
SYSCALL(__NR_getppid, sys_getppid);

static long sys_get_id_zero(SYSARGS)
{
	return 0; /* root: uid, euid, gid, egid; and set*id/setgroups succeed as no-ops */
}
SYSCALL(__NR_getuid, sys_get_id_zero);
/* The table takes one name per entry: give each number its own symbol. */
#define ZERO_ALIAS(nr, name)                                                                       \
	static long name(SYSARGS)                                                                  \
	{                                                                                          \
		return sys_get_id_zero(a0, a1, a2, a3, a4, a5);                                    \
	}                                                                                          \
	SYSCALL(nr, name)
ZERO_ALIAS(__NR_geteuid, sys_geteuid);
ZERO_ALIAS(__NR_getgid, sys_getgid);
ZERO_ALIAS(__NR_getegid, sys_getegid);
ZERO_ALIAS(__NR_setuid, sys_setuid);
ZERO_ALIAS(__NR_setgid, sys_setgid);
ZERO_ALIAS(__NR_setreuid, sys_setreuid);
ZERO_ALIAS(__NR_setregid, sys_setregid);
ZERO_ALIAS(__NR_setresuid, sys_setresuid);
ZERO_ALIAS(__NR_setresgid, sys_setresgid);
ZERO_ALIAS(__NR_setfsuid, sys_setfsuid); /* returns the previous fsuid: 0 */
ZERO_ALIAS(__NR_setfsgid, sys_setfsgid);
ZERO_ALIAS(__NR_setgroups, sys_setgroups);
ZERO_ALIAS(__NR_getgroups, sys_getgroups); /* no supplementary groups */

static long sys_getresuid(SYSARGS)
{
	if (put_u32(a0, 0) || put_u32(a1, 0) || put_u32(a2, 0))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_getresuid, sys_getresuid);

static long sys_getresgid(SYSARGS)
{
	return sys_getresuid(a0, a1, a2, a3, a4, a5);
}
SYSCALL(__NR_getresgid, sys_getresgid);

/* pid 0 is the caller; otherwise a live process (proc_tree_lock held). */
static struct proc *proc_arg_locked(int pid)
{
	spin_assert_held(&proc_tree_lock);
	if (pid == 0)
		return current_proc();
	if (pid < 0)
		return NULL;
	struct proc *p = proc_find_locked(pid);
	struct uthread *t = p ? NULL : proc_find_thread_locked(pid);

	return p ? p : t ? t->task.proc : NULL;
}

static long sys_getpgid(SYSARGS)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = proc_arg_locked((int)a0);
	long r = p ? p->pgid : -ESRCH;

	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}
SYSCALL(__NR_getpgid, sys_getpgid);

static long sys_getsid(SYSARGS)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = proc_arg_locked((int)a0);
	long r = p ? p->sid : -ESRCH;

	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}
SYSCALL(__NR_getsid, sys_getsid);

/* Is there a process in group pgid of session sid? (proc_tree_lock) */
static bool pgrp_exists_locked(struct proc *root, int pgid, int sid)
{
	spin_assert_held(&proc_tree_lock);
	if (root->pgid == pgid && root->sid == sid && !root->zombie)
		return true;
	struct list_node *n;

	list_for_each(n, &root->children)
		if (pgrp_exists_locked(list_entry(n, struct proc, sibling), pgid, sid))
			return true;
	return false;
}

static long sys_setpgid(SYSARGS)
{
	struct proc *me = current_proc();
	int pid = (int)a0, pgid = (int)a1;
	long r = 0;

	if (pgid < 0)
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = pid ? proc_find_locked(pid) : me;

	if (!pgid)
		pgid = p ? p->tgid : 0;
	if (!p || (p != me && p->parent != me))
		r = -ESRCH;
	else if (p->sid == p->tgid || p->sid != me->sid)
		r = -EPERM; /* a session leader, or a child in another session */
	else if (pgid != p->tgid) {
		struct proc *root = proc_find_locked(1);

		if (!root)
			for (root = me; root->parent; root = root->parent)
				;
		if (!pgrp_exists_locked(root, pgid, me->sid))
			r = -EPERM;
	}
	if (!r)
		p->pgid = pgid;
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}
SYSCALL(__NR_setpgid, sys_setpgid);

static long sys_setsid(SYSARGS)
{
	struct proc *me = current_proc();
	long r;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	if (me->pgid == me->tgid) {
		r = -EPERM; /* already a group leader */
	} else {
		me->pgid = me->sid = me->tgid;
		r = me->tgid;
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}
SYSCALL(__NR_setsid, sys_setsid);

/* ---- resource limits ---- */

#define NR_OPEN_MAX 1048576 /* fs.nr_open */
_Static_assert(sizeof(struct rlimit) == sizeof(struct rlimit64), "getrlimit and prlimit64 agree");

static long rlimit_do(int pid, unsigned int res, const struct rlimit64 *nw, struct rlimit64 *old)
{
	if (res >= RLIM_NLIMITS || res >= PROC_RLIM_NLIMITS)
		return -EINVAL;
	if (nw && nw->rlim_cur > nw->rlim_max)
		return -EINVAL;
	if (nw && res == RLIMIT_NOFILE && nw->rlim_max > NR_OPEN_MAX)
		return -EPERM;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = proc_arg_locked(pid);

	if (!p) {
		spin_unlock_irqrestore(&proc_tree_lock, f);
		return -ESRCH;
	}
	spin_lock(&p->lock);
	if (old) {
		old->rlim_cur = p->rlim[res].cur;
		old->rlim_max = p->rlim[res].max;
	}
	if (nw) {
		p->rlim[res].cur = nw->rlim_cur;
		p->rlim[res].max = nw->rlim_max;
	}
	spin_unlock(&p->lock);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return 0;
}

static long sys_prlimit64(SYSARGS)
{
	struct rlimit64 nw, old;

	if (a2 && ksvc_copy_from_user(&nw, uptr(a2), sizeof(nw)))
		return -EFAULT;
	long r = rlimit_do((int)a0, (unsigned int)a1, a2 ? &nw : NULL, a3 ? &old : NULL);

	if (r)
		return r;
	if (a3 && ksvc_copy_to_user(uptr(a3), &old, sizeof(old)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_prlimit64, sys_prlimit64);

static long sys_getrlimit(SYSARGS)
{
	struct rlimit64 old;
	long r = rlimit_do(0, (unsigned int)a0, NULL, &old);

	if (r)
		return r;
	return ksvc_copy_to_user(uptr(a1), &old, sizeof(old)) ? -EFAULT : 0;
}
SYSCALL(__NR_getrlimit, sys_getrlimit);

static long sys_setrlimit(SYSARGS)
{
	struct rlimit64 nw;

	if (ksvc_copy_from_user(&nw, uptr(a1), sizeof(nw)))
		return -EFAULT;
	return rlimit_do(0, (unsigned int)a0, &nw, NULL);
}
SYSCALL(__NR_setrlimit, sys_setrlimit);

/* ---- getrandom ---- */

static long sys_getrandom(SYSARGS)
{
	uint64_t len = a1, done = 0;
	uint32_t buf[64];

	if (a2 & ~(uint64_t)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
		return -EINVAL;
	if ((a2 & GRND_INSECURE) && (a2 & GRND_RANDOM))
		return -EINVAL;
	if (len > 0x7ffff000)
		len = 0x7ffff000; /* MAX_RW_COUNT */
	while (done < len) {
		uint64_t n = MIN(len - done, sizeof(buf));

		for (unsigned int i = 0; i < ARRAY_SIZE(buf); i++)
			buf[i] = ksvc_random_u32();
		if (ksvc_copy_to_user(uptr(a0 + done), buf, n))
			return done ? (long)done : -EFAULT;
		done += n;
		if (done < len && signal_pending(current_task()))
			return (long)done;
	}
	return (long)done;
}
SYSCALL(__NR_getrandom, sys_getrandom);

/* ---- prctl ---- */

static long prctl_set_name(uint64_t uname)
{
	char comm[TASK_COMM_LEN];

	memset(comm, 0, sizeof(comm));
	/* strncpy_from_user(comm, arg2, 15): a longer name is cut, never an error */
	for (int i = 0; i < TASK_COMM_LEN - 1; i++) {
		if (ksvc_copy_from_user(&comm[i], uptr(uname + (uint64_t)i), 1))
			return -EFAULT;
		if (!comm[i])
			break;
	}
	memcpy(current_task()->comm, comm, sizeof(comm));
	perf_task_comm(current_task()->comm, false); /* __set_task_comm: a COMM record, not exec */
	return 0;
}

static long sys_prctl(SYSARGS)
{
	switch (a0) {
	case PR_SET_NAME:
		return prctl_set_name(a1);
	case PR_GET_NAME: {
		char comm[TASK_COMM_LEN];

		memcpy(comm, current_task()->comm, sizeof(comm));
		comm[TASK_COMM_LEN - 1] = 0;
		return ksvc_copy_to_user(uptr(a1), comm, sizeof(comm)) ? -EFAULT : 0;
	}
	case PR_TASK_PERF_EVENTS_DISABLE:
		perf_task_owned_enable(false);
		return 0;
	case PR_TASK_PERF_EVENTS_ENABLE:
		perf_task_owned_enable(true);
		return 0;
	case PR_GET_DUMPABLE:
		return 1;
	case PR_SET_DUMPABLE:
		return a1 <= 1 ? 0 : -EINVAL;
	case PR_SET_PDEATHSIG:
		return a1 <= 64 ? 0 : -EINVAL; /* accepted, never sent */
	case PR_GET_PDEATHSIG:
		return put_u32(a1, 0) ? -EFAULT : 0;
	case PR_GET_NO_NEW_PRIVS:
		return 0;
	case PR_SET_NO_NEW_PRIVS:
		return a1 == 1 && !a2 && !a3 && !a4 ? 0 : -EINVAL;
	case PR_CAPBSET_READ:
		return a1 <= CAP_LAST_CAP ? 1 : -EINVAL;
	case PR_GET_TIMERSLACK:
		return 50000;
	case PR_SET_TIMERSLACK:
		return 0;
	default:
		return -EINVAL;
	}
}
SYSCALL(__NR_prctl, sys_prctl);

/* ---- robust futex list, rseq ---- */

static long sys_set_robust_list(SYSARGS)
{
	if (a1 != sizeof(struct robust_list_head))
		return -EINVAL;
	current_uthread()->robust_list = a0;
	return 0;
}
SYSCALL(__NR_set_robust_list, sys_set_robust_list);

static long sys_get_robust_list(SYSARGS)
{
	uint64_t head, len = sizeof(struct robust_list_head);
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *t = (int)a0 ? proc_find_thread_locked((int)a0) : current_uthread();

	head = t ? t->robust_list : 0;
	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (!t)
		return -ESRCH;
	if (ksvc_copy_to_user(uptr(a2), &len, sizeof(len)) ||
	    ksvc_copy_to_user(uptr(a1), &head, sizeof(head)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_get_robust_list, sys_get_robust_list);

static long sys_rseq(SYSARGS)
{
	return -ENOSYS;
}
SYSCALL(__NR_rseq, sys_rseq);

/* ---- personality, capabilities, priorities ---- */

static long sys_personality(SYSARGS)
{
	return 0; /* PER_LINUX, and setting it changes nothing */
}
SYSCALL(__NR_personality, sys_personality);

static long sys_capget(SYSARGS)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];

	if (ksvc_copy_from_user(&h, uptr(a0), sizeof(h)))
		return -EFAULT;
	if (h.version != _LINUX_CAPABILITY_VERSION_1 && h.version != _LINUX_CAPABILITY_VERSION_2 &&
	    h.version != _LINUX_CAPABILITY_VERSION_3) {
		h.version = _LINUX_CAPABILITY_VERSION_3;
		if (ksvc_copy_to_user(uptr(a0), &h, sizeof(h)))
			return -EFAULT;
		return a1 ? -EINVAL : 0;
	}
	if (h.pid < 0)
		return -EINVAL;
	if (!a1)
		return 0;
	unsigned int n = h.version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2;

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = 0xffffffffu;
	d[1].effective = d[1].permitted = (1u << (CAP_LAST_CAP - 31)) - 1;
	return ksvc_copy_to_user(uptr(a1), d, n * sizeof(d[0])) ? -EFAULT : 0;
}
SYSCALL(__NR_capget, sys_capget);

static long sys_capset(SYSARGS)
{
	struct __user_cap_header_struct h;

	if (ksvc_copy_from_user(&h, uptr(a0), sizeof(h)))
		return -EFAULT;
	if (h.version != _LINUX_CAPABILITY_VERSION_1 && h.version != _LINUX_CAPABILITY_VERSION_2 &&
	    h.version != _LINUX_CAPABILITY_VERSION_3)
		return -EINVAL;
	return 0;
}
SYSCALL(__NR_capset, sys_capset);

static long sys_getpriority(SYSARGS)
{
	if (a0 > PRIO_USER)
		return -EINVAL;
	return 20; /* 20 - nice, nice 0 */
}
SYSCALL(__NR_getpriority, sys_getpriority);

static long sys_setpriority(SYSARGS)
{
	if (a0 > PRIO_USER)
		return -EINVAL;
	return 0; /* nice values are not stored: one priority for all */
}
SYSCALL(__NR_setpriority, sys_setpriority);
