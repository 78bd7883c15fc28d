/*
 * ptrace.c - ptrace(2) as Linux 6.1 implements it on arm64, for debuggers, test harnesses and
 * strace: TRACEME, ATTACH, SEIZE, INTERRUPT, LISTEN, CONT, SYSCALL, DETACH, KILL, PEEK/POKE
 * TEXT/DATA (PEEKUSER is EIO as on arm64), GETREGSET/SETREGSET (NT_PRSTATUS, NT_PRFPREG,
 * NT_ARM_TLS, NT_ARM_SYSTEM_CALL), SETOPTIONS, GETEVENTMSG, GETSIGINFO, GET_SYSCALL_INFO; the
 * stops (signal-delivery, group-stop, syscall entry/exit with x7 = 0/1, PTRACE_EVENT_FORK/
 * VFORK/CLONE/VFORK_DONE/EXEC/EXIT/STOP) and the wait4 statuses the tracer reads them by.
 *
 * Model.  A traced thread points at its struct ptrace_link; the tracer is a process (any of
 * its threads may wait and issue requests, as Linux allows for its thread group's tracees).
 * A stopping tracee publishes a struct pt_frame on its own stack (link->stop), notifies the
 * tracer (SIGCHLD CLD_TRAPPED, child_wait) and sleeps on ptrace_wq until a request fills the
 * frame, SIGKILL arrives or its group exits.  Requests that touch a stopped tracee pin it
 * (link->busy): a killed tracee leaves its stop only once no request is using its registers.
 * A tracee that exits while its tracer is not its parent (or is a non-leader thread) leaves
 * its link as a report for the tracer's wait4; otherwise the parent's ordinary wait4 reports.
 *
 * Not done: PTRACE_SINGLESTEP and hardware debug regsets, SETSIGINFO/GETSIGMASK/PEEKSIGINFO,
 * seccomp events, the delay of a traced child's report to a real parent that is not its
 * tracer (both see it at once here), process_vm_readv (strace falls back to PEEKDATA).
 *
 * This file is the tracee's side (the stops and the hooks other modules call, wait4's
 * reports); kernel/ptrace_req.c the tracer's requests.  Locks: ptrace_internal.h.
 */
#include <linux/audit.h>
#include <linux/elf.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <asm/ptrace.h>
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <asm/unistd.h>
#include <arch/trapframe.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/vm.h>
#include "ptrace_internal.h"
#include "signal_internal.h"

_Static_assert(sizeof(struct user_pt_regs) == 34 * 8, "user_pt_regs is x0-x30, sp, pc, pstate");
_Static_assert(__builtin_offsetof(struct trapframe, pstate) ==
		       __builtin_offsetof(struct user_pt_regs, pstate),
	       "the trap frame starts with user_pt_regs");

struct spinlock ptrace_lock = SPINLOCK_INIT;
struct list_node ptrace_links = LIST_INIT(ptrace_links);
struct wait_queue ptrace_wq = { SPINLOCK_INIT, LIST_INIT(ptrace_wq.waiters) };

bool pt_kill_pending(struct uthread *ut)
{
	struct proc *p = ut->task.proc;

	return ((READ_ONCE(ut->sigpending_set) | READ_ONCE(p->sighand->shared_pending_set)) &
		SIGBIT(SIGKILL)) ||
	       READ_ONCE(p->exiting);
}

void pt_unlink_free_locked(struct ptrace_link *l)
{
	spin_assert_held(&ptrace_lock);
	list_del(&l->node);
	kfree(l);
}

/* ---- the tracee's side: stopping ---- */

struct pt_result {
	bool resumed; /* a request ended the stop (else: not stopped, or killed) */
	long request;
	int sig;
};

/* The ptrace_do_notify siginfo: SIGTRAP-style stops carry {signo, code = exit code, pid}. */
static void pt_notify_si(struct ksiginfo *si, int signo, int code)
{
	memset(si, 0, sizeof(*si));
	si->signo = signo;
	si->code = code;
	si->pid = current_task()->tid;
}

/*
 * Stop with exit code `code` (the wait status is code << 8 | 0x7f) until the tracer resumes
 * us.  si: the siginfo GETSIGINFO returns (NULL: EINVAL, a non-seized group stop).
 */
static struct pt_result pt_stop(int code, enum pt_why why, const struct ksiginfo *si,
				bool si_notify, uint64_t msg)
{
	struct uthread *ut = current_uthread();
	struct pt_frame fr = { 0 };
	struct pt_result r = { 0 };
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	spin_lock(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;

	if (!l || pt_kill_pending(ut)) {
		spin_unlock(&ptrace_lock);
		spin_unlock_irqrestore(&proc_tree_lock, f);
		return r;
	}
	l->stop = &fr;
	l->why = why;
	l->report = true;
	l->status = (code << 8) | 0x7f;
	l->has_si = si != NULL;
	l->si_notify = si_notify;
	if (si)
		l->si = *si;
	l->eventmsg = msg;
	struct proc *tracer = l->tracer;

	spin_unlock(&ptrace_lock);
	/* do_notify_parent_cldstop(for_ptracer): SIGCHLD CLD_TRAPPED unless SA_NOCLDSTOP */
	if (tracer->sighand && !(tracer->sighand->action[SIGCHLD - 1].flags & SA_NOCLDSTOP)) {
		struct ksiginfo info;

		memset(&info, 0, sizeof(info));
		info.signo = SIGCHLD;
		info.code = CLD_TRAPPED;
		info.pid = ut->task.tid;
		info.status = code & 0x7f;
		signal_send_proc(tracer, SIGCHLD, &info);
	}
	waitq_wake_all(&tracer->child_wait);
	spin_unlock_irqrestore(&proc_tree_lock, f);

	struct waiter w = { 0 };

	for (;;) {
		waitq_prepare(&ptrace_wq, &w);
		f = spin_lock_irqsave(&ptrace_lock);
		l = ut->ptrace;
		bool leave = fr.done || (pt_kill_pending(ut) && (!l || l->busy == 0));

		if (leave && !fr.done && l && l->stop == &fr) {
			l->stop = NULL;
			l->report = false;
		}
		spin_unlock_irqrestore(&ptrace_lock, f);
		if (leave)
			break;
		waitq_block(&w, 0);
	}
	waitq_finish(&ptrace_wq, &w);
	r.resumed = fr.done;
	r.request = fr.request;
	r.sig = fr.sig;
	return r;
}

/* ptrace_notify: a SIGTRAP stop with exit code code (syscall and event stops). */
static struct pt_result pt_notify(int code, enum pt_why why, uint64_t msg)
{
	struct ksiginfo si;

	pt_notify_si(&si, SIGTRAP, code);
	return pt_stop(code, why, &si, true, msg);
}

/* send_sig(sig, current, 1): a signal the tracer passed when resuming a syscall stop. */
static void pt_send_self(int sig, int code)
{
	struct ksiginfo info;

	memset(&info, 0, sizeof(info));
	info.signo = sig;
	info.code = code;
	if (code == SI_USER)
		info.pid = ksvc_current_tgid();
	signal_send_thread(current_uthread(), sig, &info);
}

static uint32_t pt_options(struct uthread *ut, bool *seized)
{
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;
	uint32_t o = l ? l->options : 0;

	if (seized)
		*seized = l && l->seized;
	spin_unlock_irqrestore(&ptrace_lock, f);
	return o;
}

/* ---- syscall stops ---- */

static void pt_syscall_stop(struct trapframe *tf, enum pt_why why)
{
	uint32_t o = pt_options(current_uthread(), NULL);
	int code = SIGTRAP | ((o & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
	uint64_t x7 = tf->x[7];

	/* arm64: x7 tells entry (0) from exit (1) while stopped, then is given back */
	tf->x[7] = why == PT_STOP_SYSCALL_EXIT;
	struct pt_result r = pt_notify(code, why,
				       why == PT_STOP_SYSCALL_EXIT ? PTRACE_EVENTMSG_SYSCALL_EXIT
								   : PTRACE_EVENTMSG_SYSCALL_ENTRY);

	tf->x[7] = x7;
	if (r.resumed && r.sig)
		pt_send_self(r.sig, SI_KERNEL);
}

bool ptrace_syscall_entry(struct trapframe *tf, uint64_t *nr)
{
	struct uthread *ut = current_uthread();
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;
	bool trace = l && l->syscall_trace;

	if (l)
		l->syscallno = (int)*nr;
	spin_unlock_irqrestore(&ptrace_lock, f);
	if (!trace)
		return true;
	pt_syscall_stop(tf, PT_STOP_SYSCALL_ENTRY);
	f = spin_lock_irqsave(&ptrace_lock);
	l = ut->ptrace;
	if (l)
		*nr = (uint64_t)(int64_t)l->syscallno;
	spin_unlock_irqrestore(&ptrace_lock, f);
	/* a fatal signal or a syscall number of -1 skips the call (forget_syscall) */
	return !pt_kill_pending(ut) && (int64_t)*nr != -1;
}

static void pt_exec_event(struct uthread *ut)
{
	bool seized;
	uint32_t o = pt_options(ut, &seized);

	if (o & PTRACE_O_TRACEEXEC)
		pt_notify(SIGTRAP | (PTRACE_EVENT_EXEC << 8), PT_STOP_EVENT, (uint64_t)ut->task.tid);
	else if (!seized)
		pt_send_self(SIGTRAP, SI_USER); /* the legacy exec SIGTRAP */
}

void ptrace_syscall_exit(struct trapframe *tf, uint64_t nr, long ret)
{
	struct uthread *ut = current_uthread();

	if ((nr == __NR_execve || nr == __NR_execveat) && ret == 0)
		pt_exec_event(ut);
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;
	bool trace = l && l->syscall_trace;

	spin_unlock_irqrestore(&ptrace_lock, f);
	if (trace)
		pt_syscall_stop(tf, PT_STOP_SYSCALL_EXIT);
	f = spin_lock_irqsave(&ptrace_lock);
	if (ut->ptrace)
		ut->ptrace->syscallno = -1;
	spin_unlock_irqrestore(&ptrace_lock, f);
}

/* ---- signal-delivery, group-stop and interrupt stops ---- */

int ptrace_signal(struct uthread *ut, int sig, struct ksiginfo *info)
{
	struct pt_result r = pt_stop(sig, PT_STOP_SIGNAL, info, false, 0);

	if (!r.resumed)
		return pt_kill_pending(ut) ? 0 : sig; /* detached before it stopped: deliver */
	int nsig = r.sig;

	if (!nsig)
		return 0;
	if (nsig != sig) {
		/* the tracer substituted a signal: it looks sent by the tracer */
		memset(info, 0, sizeof(*info));
		info->signo = nsig;
		info->code = SI_USER;
		unsigned long f = spin_lock_irqsave(&ptrace_lock);

		if (ut->ptrace)
			info->pid = ut->ptrace->tracer->tgid;
		spin_unlock_irqrestore(&ptrace_lock, f);
	}
	if (ut->sigmask & SIGBIT(nsig)) {
		signal_send_thread(ut, nsig, info); /* blocked now: back on the queue */
		return 0;
	}
	return nsig;
}

bool ptrace_jobctl_pending(struct uthread *ut)
{
	struct proc *p = ut->task.proc;
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;
	bool r = false;

	if (l) {
		bool stopped = sig_group_stopped(p);

		if (!stopped)
			l->gstop_done = false;
		r = l->trap_stop || (stopped && !l->gstop_done);
	}
	spin_unlock_irqrestore(&ptrace_lock, f);
	return r;
}

/* PTRACE_LISTEN: stay stopped until the group stop ends, an interrupt or a kill. */
static void pt_listen(struct uthread *ut)
{
	struct proc *p = ut->task.proc;
	struct waiter w = { 0 };

	for (;;) {
		waitq_prepare(&sig_stop_wq, &w);
		unsigned long f = spin_lock_irqsave(&ptrace_lock);
		struct ptrace_link *l = ut->ptrace;
		bool leave = !l || l->trap_stop || !sig_group_stopped(p) || pt_kill_pending(ut);

		if (l && leave)
			l->trap_stop = true; /* JOBCTL_TRAP_NOTIFY: report what ended it */
		spin_unlock_irqrestore(&ptrace_lock, f);
		if (leave)
			break;
		waitq_block(&w, 0);
	}
	waitq_finish(&sig_stop_wq, &w);
}

void ptrace_jobctl(struct uthread *ut)
{
	struct proc *p = ut->task.proc;

	for (;;) {
		int gsig = sig_group_stop_signal(p);
		unsigned long f = spin_lock_irqsave(&ptrace_lock);
		struct ptrace_link *l = ut->ptrace;
		int code = 0;
		bool seized = l && l->seized;

		if (!l) {
			spin_unlock_irqrestore(&ptrace_lock, f);
			if (gsig)
				sig_group_stop_wait(p);
			return;
		}
		if (!gsig)
			l->gstop_done = false;
		if (gsig && !l->gstop_done) {
			l->gstop_done = true;
			l->trap_stop = false;
			code = seized ? gsig | (PTRACE_EVENT_STOP << 8) : gsig;
		} else if (l->trap_stop) {
			l->trap_stop = false;
			if (seized)
				code = (gsig ? gsig : SIGTRAP) | (PTRACE_EVENT_STOP << 8);
		}
		spin_unlock_irqrestore(&ptrace_lock, f);
		if (!code || pt_kill_pending(ut))
			return;
		struct ksiginfo si;
		struct pt_result r;

		/* a seized group stop carries a siginfo; a plain one does not (GETSIGINFO EINVAL) */
		pt_notify_si(&si, code & 0xff, code);
		r = pt_stop(code, PT_STOP_GROUP, seized ? &si : NULL, true, 0);
		if (!r.resumed || r.request != PTRACE_LISTEN)
			return;
		pt_listen(ut);
	}
}

/* ---- fork, exit ---- */

struct ptrace_link *pt_link_alloc(struct proc *tracer, struct uthread *ut)
{
	struct ptrace_link *l = kmalloc(sizeof(*l));

	if (!l)
		return NULL;
	struct proc *p = ut->task.proc;

	l->tracee = ut;
	l->tracer = tracer;
	l->tid = ut->task.tid;
	l->tgid = p->tgid;
	l->pgid = p->pgid;
	l->syscallno = -1;
	return l;
}

int ptrace_clone(struct uthread *parent, struct uthread *child, uint64_t flags, int exit_signal)
{
	struct ptrace_link *fresh = kmalloc(sizeof(*fresh));
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct ptrace_link *l = parent->ptrace;
	int event = 0;

	if (l && !(flags & CLONE_UNTRACED)) {
		event = (flags & CLONE_VFORK) ? PTRACE_EVENT_VFORK
			: exit_signal != SIGCHLD ? PTRACE_EVENT_CLONE
						 : PTRACE_EVENT_FORK;
		if (!(l->options & (1u << event)))
			event = 0;
	}
	bool attach = l && fresh && (event || (flags & CLONE_PTRACE));
	bool seized = l && l->seized;

	if (attach) {
		kfree(fresh);
		fresh = pt_link_alloc(l->tracer, child);
	}
	if (attach && fresh) {
		fresh->options = l->options;
		fresh->seized = l->seized;
		fresh->trap_stop = l->seized; /* the new child's first stop: PTRACE_EVENT_STOP */
		list_add_tail(&ptrace_links, &fresh->node);
		child->ptrace = fresh;
		fresh = NULL;
	} else {
		attach = false;
	}
	spin_unlock_irqrestore(&ptrace_lock, f);
	kfree(fresh);
	if (attach && !seized) {
		/* ptrace_init_task: a bare SIGSTOP (no siginfo queued: SI_USER, pid 0) */
		struct sighand *sh = ((struct proc *)child->task.proc)->sighand;

		f = spin_lock_irqsave(&sh->lock);
		child->sigpending_set |= SIGBIT(SIGSTOP);
		spin_unlock_irqrestore(&sh->lock, f);
	}
	return attach ? event : 0;
}

void ptrace_clone_event(int event, int child_tid)
{
	pt_notify(SIGTRAP | (event << 8), PT_STOP_EVENT, (uint64_t)child_tid);
}

void ptrace_vfork_done(int child_tid)
{
	if (pt_options(current_uthread(), NULL) & PTRACE_O_TRACEVFORKDONE)
		ptrace_clone_event(PTRACE_EVENT_VFORK_DONE, child_tid);
}

void ptrace_exit_event(int status)
{
	struct uthread *ut = current_uthread();

	if (!READ_ONCE(ut->ptrace) || status == SIGKILL)
		return;
	if (pt_options(ut, NULL) & PTRACE_O_TRACEEXIT)
		pt_notify(SIGTRAP | (PTRACE_EVENT_EXIT << 8), PT_STOP_EVENT, (uint64_t)status);
}

void ptrace_tracee_exit(struct uthread *ut, int status)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	spin_lock(&ptrace_lock);
	struct ptrace_link *l = ut->ptrace;
	struct proc *p = ut->task.proc;

	ut->ptrace = NULL;
	if (l) {
		l->tracee = NULL;
		l->stop = NULL;
		/* The parent's own wait4 reports a process it traces; others need the link. */
		if (l->tid == l->tgid && l->tracer == p->parent) {
			pt_unlink_free_locked(l);
			l = NULL;
		} else {
			l->dead = true;
			l->report = true;
			l->status = status;
		}
	}
	struct proc *tracer = l ? l->tracer : NULL;

	spin_unlock(&ptrace_lock);
	if (tracer)
		waitq_wake_all(&tracer->child_wait);
	spin_unlock_irqrestore(&proc_tree_lock, f);
}

void ptrace_tracer_exit(struct proc *p)
{
	for (;;) {
		unsigned long f = spin_lock_irqsave(&proc_tree_lock);

		spin_lock(&ptrace_lock);
		struct ptrace_link *l = NULL;
		struct list_node *n;

		list_for_each(n, &ptrace_links) {
			struct ptrace_link *c = list_entry(n, struct ptrace_link, node);

			if (c->tracer == p) {
				l = c;
				break;
			}
		}
		if (!l) {
			spin_unlock(&ptrace_lock);
			spin_unlock_irqrestore(&proc_tree_lock, f);
			return;
		}
		struct uthread *ut = l->tracee;
		bool kill = ut && (l->options & PTRACE_O_EXITKILL);

		if (ut) {
			if (l->stop) {
				l->stop->done = true; /* resume with no signal */
				l->stop->request = 0;
			}
			ut->ptrace = NULL;
		}
		pt_unlink_free_locked(l);
		spin_unlock(&ptrace_lock);
		if (kill) {
			struct ksiginfo info;

			sig_info_user(&info, SIGKILL, SI_USER);
			signal_send_proc(ut->task.proc, SIGKILL, &info);
		}
		if (ut)
			wake_up_task(&ut->task); /* out of a stop or a listen */
		spin_unlock_irqrestore(&proc_tree_lock, f);
	}
}

/* ---- wait4 ---- */

int ptrace_wait(struct proc *me, int pid, int options, int *status, bool *any)
{
	int tid = 0;
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	struct list_node *n;

	list_for_each(n, &ptrace_links) {
		struct ptrace_link *l = list_entry(n, struct ptrace_link, node);

		if (l->tracer != me)
			continue;
		if (pid > 0 ? l->tid != pid
		    : pid == 0 ? l->pgid != me->pgid
		    : pid < -1 ? l->pgid != -pid
			       : false)
			continue;
		/* eligible_child: a tracee is waited for whatever __WALL/__WCLONE say */
		*any = true;
		/* stops are reported whatever WSTOPPED says, exits only with WEXITED */
		if (!l->report || (l->dead && !(options & WEXITED)))
			continue;
		tid = l->tid;
		*status = l->status;
		if (options & WNOWAIT)
			break;
		l->report = false;
		if (l->dead)
			pt_unlink_free_locked(l);
		break;
	}
	spin_unlock_irqrestore(&ptrace_lock, f);
	return tid;
}

