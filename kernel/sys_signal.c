/*
 * sys_signal.c - the signal system calls: rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigsuspend, rt_sigtimedwait, kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
 * pidfd_send_signal.
 * (sigaltstack and rt_sigreturn are in signal_frame.c.)
 *
 * ABI: the kernel's struct sigaction on arm64 (<asm-generic/signal.h>: handler, flags,
 * restorer, 8-byte mask), sigsetsize must be 8 where Linux requires sizeof(sigset_t); unknown
 * sa_flags bits are cleared (Linux >= 5.11, so SA_UNSUPPORTED reads back clear).  Everyone is
 * root, so there are no permission checks.  kill(-1) and kill(-pgid) walk the process tree from
 * init; processes outside it (none, if orphans are re-parented to init) are not reached.
 */
#include <asm/fcntl.h>
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <kern/errno.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <linux/time_types.h>
#include "signal_internal.h"

#define UAPI_SA_FLAGS                                                                              \
	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER |         \
	 SA_RESETHAND | SA_EXPOSE_TAGBITS | SA_RESTORER)

_Static_assert(sizeof(struct sigaction) == 32, "kernel sigaction on arm64");
_Static_assert(sizeof(sigset_t) == 8, "kernel sigset_t");

static void *uptr(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

/* ---- actions and masks ---- */

static long sys_rt_sigaction(uint64_t sig_, uint64_t uact, uint64_t uoact, uint64_t sigsetsize,
			     uint64_t a4, uint64_t a5)
{
	int sig = (int)sig_;
	struct proc *p = current_proc();
	struct sigaction act, oact;
	struct ksigaction old;

	if (sigsetsize != sizeof(sigset_t))
		return -EINVAL;
	if ((int64_t)sig_ != sig || !sig_valid(sig) ||
	    (uact && (sig == SIGKILL || sig == SIGSTOP)))
		return -EINVAL;
	if (uact && ksvc_copy_from_user(&act, uptr(uact), sizeof(act)))
		return -EFAULT;

	unsigned long f = spin_lock_irqsave(&p->lock);
	struct sighand *sh = p->sighand;

	spin_lock(&sh->lock);
	old = sh->action[sig - 1];
	if (uact) {
		struct ksigaction *ka = &sh->action[sig - 1];

		ka->handler = (uint64_t)(uintptr_t)act.sa_handler;
		ka->flags = act.sa_flags & UAPI_SA_FLAGS;
		ka->restorer = (uint64_t)(uintptr_t)act.sa_restorer;
		ka->mask = act.sa_mask.sig[0] & ~SIG_UNBLOCKABLE;
		/* POSIX: setting "ignore" discards the pending instances, in every thread. */
		if (sig_handler_ignored(ka, sig))
			sig_flush_locked(p, SIGBIT(sig));
	}
	spin_unlock(&sh->lock);
	spin_unlock_irqrestore(&p->lock, f);

	if (uoact) {
		memset(&oact, 0, sizeof(oact));
		oact.sa_handler = (__sighandler_t)(uintptr_t)old.handler;
		oact.sa_flags = old.flags & UAPI_SA_FLAGS;
		oact.sa_restorer = (__sigrestore_t)(uintptr_t)old.restorer;
		oact.sa_mask.sig[0] = old.mask;
		if (ksvc_copy_to_user(uptr(uoact), &oact, sizeof(oact)))
			return -EFAULT;
	}
	return 0;
}
SYSCALL(__NR_rt_sigaction, sys_rt_sigaction);

static long sys_rt_sigprocmask(uint64_t how, uint64_t uset, uint64_t uoset, uint64_t sigsetsize,
			       uint64_t a4, uint64_t a5)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;
	sigset_t set, old;

	if (sigsetsize != sizeof(sigset_t))
		return -EINVAL;
	old.sig[0] = ut->sigmask;
	if (uset) {
		if (ksvc_copy_from_user(&set, uptr(uset), sizeof(set)))
			return -EFAULT;
		uint64_t m = set.sig[0] & ~SIG_UNBLOCKABLE;
		unsigned long f = spin_lock_irqsave(&sh->lock);

		switch (how) {
		case SIG_BLOCK:
			ut->sigmask |= m;
			break;
		case SIG_UNBLOCK:
			ut->sigmask &= ~m;
			break;
		case SIG_SETMASK:
			ut->sigmask = m;
			break;
		default:
			spin_unlock_irqrestore(&sh->lock, f);
			return -EINVAL;
		}
		spin_unlock_irqrestore(&sh->lock, f);
	}
	if (uoset && ksvc_copy_to_user(uptr(uoset), &old, sizeof(old)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_rt_sigprocmask, sys_rt_sigprocmask);

static long sys_rt_sigpending(uint64_t uset, uint64_t sigsetsize, uint64_t a2, uint64_t a3,
			      uint64_t a4, uint64_t a5)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;

	if (sigsetsize > sizeof(sigset_t))
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&sh->lock);
	uint64_t pend = (ut->sigpending_set | sh->shared_pending_set) & ut->sigmask;

	spin_unlock_irqrestore(&sh->lock, f);
	if (ksvc_copy_to_user(uptr(uset), &pend, sigsetsize))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_rt_sigpending, sys_rt_sigpending);

/* Sleep until a signal is pending for the current thread, or deadline_ns (0: none) passes.
 * false on timeout. */
static bool sig_sleep(uint64_t deadline_ns)
{
	struct task *t = current_task();
	struct wait_queue wq;
	struct waiter w = { 0 };
	bool ok = true;

	waitq_init(&wq);
	for (;;) {
		waitq_prepare(&wq, &w);
		if (signal_pending(t))
			break;
		if (!waitq_block(&w, deadline_ns)) {
			ok = signal_pending(t);
			break;
		}
	}
	waitq_finish(&wq, &w);
	return ok;
}

static long sys_rt_sigsuspend(uint64_t uset, uint64_t sigsetsize, uint64_t a2, uint64_t a3,
			      uint64_t a4, uint64_t a5)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;
	sigset_t set;

	if (sigsetsize != sizeof(sigset_t))
		return -EINVAL;
	if (ksvc_copy_from_user(&set, uptr(uset), sizeof(set)))
		return -EFAULT;
	unsigned long f = spin_lock_irqsave(&sh->lock);

	ut->saved_sigmask = ut->sigmask;
	ut->restore_sigmask = true;
	ut->sigmask = set.sig[0] & ~SIG_UNBLOCKABLE;
	spin_unlock_irqrestore(&sh->lock, f);
	sig_sleep(0);
	/* The frame records the saved mask; signal_deliver restores it if no handler runs. */
	return -ERESTARTNOHAND;
}
SYSCALL(__NR_rt_sigsuspend, sys_rt_sigsuspend);

static long sys_rt_sigtimedwait(uint64_t uthese, uint64_t uinfo, uint64_t uts,
				uint64_t sigsetsize, uint64_t a4, uint64_t a5)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;
	struct __kernel_timespec ts;
	struct ksiginfo info;
	uint64_t deadline = 0;
	sigset_t these;

	if (sigsetsize != sizeof(sigset_t))
		return -EINVAL;
	if (ksvc_copy_from_user(&these, uptr(uthese), sizeof(these)))
		return -EFAULT;
	uint64_t want = these.sig[0] & ~SIG_UNBLOCKABLE;

	if (uts) {
		if (ksvc_copy_from_user(&ts, uptr(uts), sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (long long)NSEC_PER_SEC)
			return -EINVAL;
		uint64_t rel = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;

		deadline = time_ns() + rel;
		if (!deadline)
			deadline = 1;
	}

	unsigned long f = spin_lock_irqsave(&sh->lock);
	int sig = sig_dequeue_locked(ut, sh, want, &info);
	uint64_t saved = ut->sigmask;

	if (!sig)
		ut->sigmask &= ~want; /* let the awaited signals wake us (Linux's real_blocked) */
	spin_unlock_irqrestore(&sh->lock, f);
	if (!sig) {
		bool woke = sig_sleep(deadline);

		f = spin_lock_irqsave(&sh->lock);
		ut->sigmask = saved;
		sig = sig_dequeue_locked(ut, sh, want, &info);
		spin_unlock_irqrestore(&sh->lock, f);
		if (!sig)
			return woke ? -EINTR : -EAGAIN;
	}
	if (uinfo && sig_copy_siginfo_to_user(uinfo, &info))
		return -EFAULT;
	return sig;
}
SYSCALL(__NR_rt_sigtimedwait, sys_rt_sigtimedwait);

/* ---- sending ---- */

static struct proc *sig_tree_root_locked(void)
{
	spin_assert_held(&proc_tree_lock);
	struct proc *p = proc_find_locked(1);

	if (p)
		return p;
	/* init is gone: the top of whatever tree holds us, or (from an interrupt, where there
	 * is no current process: an O_ASYNC signal to a group) any process's */
	p = current_proc() ? current_proc() : proc_first_locked();
	while (p && p->parent)
		p = p->parent;
	return p;
}

/* Pre-order successor of p in the process tree below root. */
static struct proc *sig_tree_next_locked(struct proc *p, struct proc *root)
{
	spin_assert_held(&proc_tree_lock);
	if (!list_empty(&p->children))
		return list_entry(p->children.next, struct proc, sibling);
	while (p != root && p->parent) {
		if (p->sibling.next != &p->parent->children)
			return list_entry(p->sibling.next, struct proc, sibling);
		p = p->parent;
	}
	return NULL;
}

/* kill_something_info: pid > 0 one process, 0 own group, -1 all but init and self, < -1 the
 * group -pid. */
static long sig_kill(int64_t pid, int sig, const struct ksiginfo *info)
{
	struct proc *me = current_proc();
	long r = -ESRCH;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	if (pid > 0) {
		struct proc *p = pid <= 0x7fffffff ? proc_find_locked((int)pid) : NULL;

		if (!p && pid <= 0x7fffffff) { /* a thread id names its thread group too */
			struct uthread *t = proc_find_thread_locked((int)pid);

			p = t ? t->task.proc : NULL;
		}

		if (p)
			r = sig ? signal_send_proc(p, sig, info) : 0;
	} else if (pid != (int64_t)(-0x7fffffff - 1)) {
		int pgid = pid == 0 ? me->pgid : (int)-pid;
		struct proc *root = sig_tree_root_locked();
		int found = 0, err = 0;

		for (struct proc *p = root; p; p = sig_tree_next_locked(p, root)) {
			if (p->zombie)
				continue;
			if (pid == -1 ? (p->tgid <= 1 || p == me) : p->pgid != pgid)
				continue;
			found++;
			if (sig) {
				int e = signal_send_proc(p, sig, info);

				if (e)
					err = e;
			}
		}
		if (found)
			r = err;
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}

static long sys_kill(uint64_t pid, uint64_t sig, uint64_t a2, uint64_t a3, uint64_t a4,
		     uint64_t a5)
{
	struct ksiginfo info;

	if ((int)sig != 0 && !sig_valid((int)sig))
		return -EINVAL;
	if (sig > KSIG_MAX)
		return -EINVAL;
	sig_info_user(&info, (int)sig, SI_USER);
	return sig_kill((int64_t)(int)pid, (int)sig, &info);
}
SYSCALL(__NR_kill, sys_kill);

/* do_send_specific: tgid <= 0 means any group (tkill). */
static long sig_send_tid(int tgid, int tid, int sig, const struct ksiginfo *info)
{
	long r = -ESRCH;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *t = proc_find_thread_locked(tid);

	if (t && (tgid <= 0 || ((struct proc *)t->task.proc)->tgid == tgid))
		r = sig ? signal_send_thread(t, sig, info) : 0;
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}

int signal_send_owner(int type, int pid, int sig, const struct ksiginfo *info)
{
	if (pid <= 0)
		return -ESRCH;
	if (type == F_OWNER_TID)
		return (int)sig_send_tid(0, pid, sig, info);
	return (int)sig_kill(type == F_OWNER_PGRP ? -(int64_t)pid : pid, sig, info);
}

static long sys_tgkill(uint64_t tgid, uint64_t tid, uint64_t sig, uint64_t a3, uint64_t a4,
		       uint64_t a5)
{
	struct ksiginfo info;

	if ((int)tid <= 0 || (int)tgid <= 0 || sig > KSIG_MAX)
		return -EINVAL;
	sig_info_user(&info, (int)sig, SI_TKILL);
	return sig_send_tid((int)tgid, (int)tid, (int)sig, &info);
}
SYSCALL(__NR_tgkill, sys_tgkill);

static long sys_tkill(uint64_t tid, uint64_t sig, uint64_t a2, uint64_t a3, uint64_t a4,
		      uint64_t a5)
{
	struct ksiginfo info;

	if ((int)tid <= 0 || sig > KSIG_MAX)
		return -EINVAL;
	sig_info_user(&info, (int)sig, SI_TKILL);
	return sig_send_tid(0, (int)tid, (int)sig, &info);
}
SYSCALL(__NR_tkill, sys_tkill);

/* The siginfo a sigqueue caller supplies: only another process may not forge kernel codes. */
static long sig_info_from_user(struct ksiginfo *k, uint64_t uinfo, int sig, bool to_self)
{
	siginfo_t si;

	if (ksvc_copy_from_user(&si, uptr(uinfo), sizeof(si)))
		return -EFAULT;
	if ((si.si_code >= 0 || si.si_code == SI_TKILL) && !to_self)
		return -EPERM;
	memset(k, 0, sizeof(*k));
	k->signo = sig;
	k->code = si.si_code;
	k->errno_ = si.si_errno;
	k->pid = si.si_pid;
	k->uid = si.si_uid;
	k->value = (uint64_t)(uintptr_t)si._sifields._rt._sigval.sival_ptr;
	return 0;
}

static long sys_rt_sigqueueinfo(uint64_t pid, uint64_t sig, uint64_t uinfo, uint64_t a3,
				uint64_t a4, uint64_t a5)
{
	struct ksiginfo info;

	if (sig > KSIG_MAX)
		return -EINVAL;
	long r = sig_info_from_user(&info, uinfo, (int)sig, (int)pid == ksvc_current_tgid());

	if (r)
		return r;
	if ((int)pid <= 0)
		return -ESRCH;
	return sig_kill((int)pid, (int)sig, &info);
}
SYSCALL(__NR_rt_sigqueueinfo, sys_rt_sigqueueinfo);

/*
 * pidfd_send_signal(pidfd, sig, info, flags), Linux 6.1's order: flags EINVAL, fd EBADF (not
 * a pidfd too), info EFAULT, sig other than info's si_signo EINVAL, a forged si_code to
 * another than the caller's own thread EPERM, the process reaped ESRCH, sig invalid EINVAL.
 * A zombie takes any signal (0: nothing happens to it).
 */
static long sys_pidfd_send_signal(uint64_t fd, uint64_t sig_, uint64_t uinfo, uint64_t flags,
				  uint64_t a4, uint64_t a5)
{
	struct ksiginfo info;
	struct proc *p;
	int sig = (int)sig_;
	long r;

	if ((uint32_t)flags)
		return -EINVAL;
	r = pidfd_proc_get((int)fd, &p, NULL);
	if (r)
		return r;
	if (uinfo) {
		siginfo_t si;

		r = -EFAULT;
		if (ksvc_copy_from_user(&si, uptr(uinfo), sizeof(si)))
			goto out;
		r = -EINVAL;
		if (si.si_signo != sig)
			goto out;
		r = sig_info_from_user(&info, uinfo, sig, current_task()->tid == p->tgid);
		if (r)
			goto out;
	} else {
		sig_info_user(&info, sig, SI_USER);
	}
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	if (p->reaped)
		r = -ESRCH;
	else if (sig && (sig < 0 || sig > KSIG_MAX || !sig_valid(sig)))
		r = -EINVAL;
	else
		r = sig && !p->exited ? signal_send_proc(p, sig, &info) : 0;
	spin_unlock_irqrestore(&proc_tree_lock, f);
out:
	proc_put(p);
	return r;
}
SYSCALL(__NR_pidfd_send_signal, sys_pidfd_send_signal);

static long sys_rt_tgsigqueueinfo(uint64_t tgid, uint64_t tid, uint64_t sig, uint64_t uinfo,
				  uint64_t a4, uint64_t a5)
{
	struct ksiginfo info;

	if ((int)tid <= 0 || (int)tgid <= 0 || sig > KSIG_MAX)
		return -EINVAL;
	long r = sig_info_from_user(&info, uinfo, (int)sig, (int)tgid == ksvc_current_tgid());

	if (r)
		return r;
	return sig_send_tid((int)tgid, (int)tid, (int)sig, &info);
}
SYSCALL(__NR_rt_tgsigqueueinfo, sys_rt_tgsigqueueinfo);
