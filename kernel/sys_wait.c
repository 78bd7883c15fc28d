/*
 * sys_wait.c - wait4 and waitid (Linux 6.1's kernel/exit.c do_wait): a child's exit, stop or
 * continue, or a tracee's stop (kernel/ptrace.c reports those first), by pid, process group,
 * any child, or pidfd (waitid P_PIDFD); WNOHANG, WNOWAIT, the rusage of a reaped child, the
 * siginfo fields waitid writes.  The zombie's memory goes with its last reference (proc_put).
 */
#include <linux/resource.h>
#include <linux/wait.h>
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>

static bool wait_matches(const struct proc *me, const struct proc *c, int pid)
{
	if (pid > 0)
		return c->tgid == pid;
	if (pid == 0)
		return c->pgid == me->pgid;
	if (pid < -1)
		return c->pgid == -pid;
	return true;
}

static void fill_rusage(struct rusage *ru, const struct proc *c)
{
	uint64_t ut = c->utime_ns + c->cutime_ns, st = c->stime_ns + c->cstime_ns;

	memset(ru, 0, sizeof(*ru));
	ru->ru_utime.tv_sec = (long)(ut / 1000000000ull);
	ru->ru_utime.tv_usec = (long)(ut % 1000000000ull / 1000);
	ru->ru_stime.tv_sec = (long)(st / 1000000000ull);
	ru->ru_stime.tv_usec = (long)(st % 1000000000ull / 1000);
	ru->ru_minflt = (long)(c->min_flt + c->cmin_flt);
	ru->ru_majflt = (long)(c->maj_flt + c->cmaj_flt);
}

/*
 * What wait4 and waitid share (Linux's do_wait): the first child or tracee matching pid (wait4's
 * encoding) with something to report under options (WEXITED, WSTOPPED/WUNTRACED, WCONTINUED,
 * WNOHANG, WNOWAIT).  Returns its pid with *status in wait4's encoding (*ru filled and *reaped
 * set when a zombie was reaped; *traced when it is a ptrace report), 0 (WNOHANG, nothing yet),
 * -ECHILD or -ERESTARTSYS.
 */
static long wait_common(int pid, int options, int *status, struct rusage *ru, bool *reaped,
			bool *traced)
{
	struct proc *me = current_proc();

	for (;;) {
		struct waiter w = { 0 };
		bool any = false;
		struct proc *found = NULL;
		int ev_status = 0, ev_pid = 0;

		waitq_prepare(&me->child_wait, &w);
		ev_pid = ptrace_wait(me, pid, options, &ev_status, &any); /* tracees first */
		*traced = ev_pid != 0;
		unsigned long f = spin_lock_irqsave(&proc_tree_lock);
		struct list_node *n;

		list_for_each(n, &me->children) {
			struct proc *c = list_entry(n, struct proc, sibling);

			if (ev_pid)
				break;
			if (!wait_matches(me, c, pid))
				continue;
			any = true;
			if (c->zombie && (options & WEXITED)) {
				if (options & WNOWAIT) {
					ev_pid = c->tgid;
					ev_status = c->exit_status;
					break;
				}
				found = c;
				list_del(&c->sibling);
				list_del(&c->all_node);
				c->reaped = true;
				break;
			}
			if ((options & (WUNTRACED | WCONTINUED)) &&
			    signal_child_wait_event(c, options, &ev_status)) {
				ev_pid = c->tgid;
				break;
			}
		}
		spin_unlock_irqrestore(&proc_tree_lock, f);
		if (ev_pid) {
			waitq_finish(&me->child_wait, &w);
			*status = ev_status;
			return ev_pid;
		}
		if (found || !any || (options & WNOHANG) || signal_pending(current_task())) {
			waitq_finish(&me->child_wait, &w);
			if (found) {
				me->cmin_flt += found->min_flt + found->cmin_flt;
				me->cmaj_flt += found->maj_flt + found->cmaj_flt;
				me->cutime_ns += found->utime_ns + found->cutime_ns;
				me->cstime_ns += found->stime_ns + found->cstime_ns;
				fill_rusage(ru, found);
				*status = found->exit_status;
				*reaped = true;
				int tgid = found->tgid;

				signal_proc_release(found);
				proc_put(found);
				return tgid;
			}
			if (!any)
				return -ECHILD;
			if (options & WNOHANG)
				return 0;
			return -ERESTARTSYS;
		}
		waitq_block(&w, 0);
		waitq_finish(&me->child_wait, &w);
	}
}

static long sys_wait4(uint64_t upid, uint64_t ustatus, uint64_t options, uint64_t urusage)
{
	int status = 0;
	struct rusage ru;
	bool reaped = false, traced;

	if (options & ~(uint64_t)(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WCLONE |
				  __WALL))
		return -EINVAL;
	long r = wait_common((int)upid, (int)options | WEXITED, &status, &ru, &reaped, &traced);

	if (r <= 0)
		return r;
	if (ustatus && ksvc_copy_to_user((void *)ustatus, &status, 4))
		return -EFAULT;
	if (reaped && urusage && ksvc_copy_to_user((void *)urusage, &ru, sizeof(ru)))
		return -EFAULT;
	return r;
}
SYSCALL(__NR_wait4, sys_wait4);

/* The siginfo fields waitid writes (kernel/exit.c SYSCALL waitid): SIGCHLD, the cause, pid,
 * uid and status, from wait4's status word; all zero for WNOHANG with nothing to report. */
static int waitid_put_info(uint64_t uinfo, int pid, int status, bool traced)
{
	struct {
		int signo, errno_, code, pid;
		uint32_t uid;
		int status;
	} si = { 0 };

	if (pid > 0) {
		si.signo = SIGCHLD;
		si.pid = pid;
		if ((status & 0x7f) == 0) {
			si.code = CLD_EXITED;
			si.status = (status >> 8) & 0xff;
		} else if ((status & 0xff) == 0x7f) {
			si.code = traced ? CLD_TRAPPED : CLD_STOPPED;
			si.status = traced ? (status >> 8) & 0xffff : (status >> 8) & 0xff;
		} else if (status == 0xffff) {
			si.code = CLD_CONTINUED;
			si.status = SIGCONT;
		} else {
			si.code = (status & 0x80) ? CLD_DUMPED : CLD_KILLED;
			si.status = status & 0x7f;
		}
	}
	/* only these fields are written, as Linux's unsafe_put_user sequence does */
	const struct {
		size_t off;
		const void *v;
	} f[] = {
		{ __builtin_offsetof(siginfo_t, si_signo), &si.signo },
		{ __builtin_offsetof(siginfo_t, si_errno), &si.errno_ },
		{ __builtin_offsetof(siginfo_t, si_code), &si.code },
		{ __builtin_offsetof(siginfo_t, si_pid), &si.pid },
		{ __builtin_offsetof(siginfo_t, si_uid), &si.uid },
		{ __builtin_offsetof(siginfo_t, si_status), &si.status },
	};

	for (unsigned int i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (ksvc_copy_to_user((void *)(uinfo + f[i].off), f[i].v, 4))
			return -EFAULT;
	return 0;
}

/* Linux's kernel_waitid: the child reported (its pid, with *status in wait4's encoding), 0
 * (WNOHANG, nothing yet) or an errno. */
static long kernel_waitid(uint64_t which, uint64_t id, uint64_t options, int *status,
			  struct rusage *ru, bool *reaped, bool *traced)
{
	bool nonblock = false;
	uint64_t opts_in = options;
	int pid;

	if (options & ~(uint64_t)(WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED |
				  __WNOTHREAD | __WCLONE | __WALL))
		return -EINVAL;
	if (!(options & (WEXITED | WSTOPPED | WCONTINUED)))
		return -EINVAL;
	switch (which) {
	case P_ALL:
		pid = -1;
		break;
	case P_PID:
		if ((int)id <= 0)
			return -EINVAL;
		pid = (int)id;
		break;
	case P_PGID:
		if ((int)id < 0)
			return -EINVAL;
		pid = id ? -(int)id : 0;
		break;
	case P_PIDFD: {
		/* Linux's pidfd_get_pid: the process the pidfd names, a child to wait for by its
		 * id (ECHILD when it is not ours or already reaped); the file's O_NONBLOCK makes
		 * it WNOHANG, with EAGAIN instead of 0 when nothing is ready */
		struct proc *pp;
		int err;

		if ((int)id < 0)
			return -EINVAL;
		err = pidfd_proc_get((int)id, &pp, &nonblock);
		if (err)
			return err;
		pid = READ_ONCE(pp->reaped) ? 0x7fffffff : pp->tgid; /* 0x7fffffff: none */
		proc_put(pp);
		if (nonblock)
			options |= WNOHANG;
		break;
	}
	default:
		return -EINVAL;
	}
	long r = wait_common(pid, (int)options, status, ru, reaped, traced);

	if (r == 0 && nonblock && !(opts_in & WNOHANG))
		return -EAGAIN;
	return r;
}

/* As Linux's waitid: the siginfo is written whatever the outcome (zeros for an error too) */
static long sys_waitid(uint64_t which, uint64_t id, uint64_t uinfo, uint64_t options,
		       uint64_t urusage)
{
	int status = 0;
	struct rusage ru;
	bool reaped = false, traced = false;
	long r = kernel_waitid(which, id, options, &status, &ru, &reaped, &traced);

	if (r > 0 && reaped && urusage && ksvc_copy_to_user((void *)urusage, &ru, sizeof(ru)))
		return -EFAULT;
	if (uinfo && waitid_put_info(uinfo, r > 0 ? (int)r : 0, status, traced))
		return -EFAULT;
	return r > 0 ? 0 : r;
}
SYSCALL(__NR_waitid, sys_waitid);

