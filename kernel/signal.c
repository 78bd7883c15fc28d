/*
 * signal.c - POSIX signals, the sending side: signal handler tables (struct sighand), the
 * shared and per-thread pending queues, sending with Linux's target-thread choice and wakeup,
 * synchronous faults, group stop/continue, and the parent's SIGCHLD.
 *
 * Linux 6.1 semantics (kernel/signal.c): standard signals (1-31) do not queue (a second one
 * while pending is dropped), real-time signals (32-64) queue in order, each with its siginfo;
 * a signal whose action is "ignore" is discarded at send time unless blocked; SIGCONT discards
 * pending stop signals and a stop signal discards a pending SIGCONT; SIGKILL/SIGSTOP cannot be
 * blocked, caught or ignored.  A process-directed signal goes on the shared queue and wakes one
 * thread that does not block it (the sender if it is one of them); SIGKILL wakes all.
 *
 * Delivery (frames, default actions, sigreturn) lives in signal_frame.c; the syscalls in
 * sys_signal.c.  Not done: ptrace, job-control orphan rules, RLIMIT_SIGPENDING accounting per
 * user (a fixed per-queue cap instead), core dumps (status never carries 0x80, as on Linux
 * with RLIMIT_CORE 0).  Group-stop state is kept in a side table keyed by struct proc until
 * struct proc carries the fields.
 */
#include <linux/wait.h>
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <arch/trapframe.h>
#include <kern/trace.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include "signal_internal.h"

#define SIG_QUEUE_MAX 1024 /* queued real-time signals per queue (RLIMIT_SIGPENDING stand-in) */

_Static_assert(KSIG_MAX == _NSIG, "one action per Linux signal");

struct wait_queue sig_stop_wq = { SPINLOCK_INIT, LIST_INIT(sig_stop_wq.waiters) };

/* ---- default actions ---- */

enum sig_default sig_default_action(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGURG:
	case SIGWINCH:
		return SIGDFL_IGN;
	case SIGCONT:
		return SIGDFL_CONT;
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return SIGDFL_STOP;
	case SIGQUIT:
	case SIGILL:
	case SIGTRAP:
	case SIGABRT:
	case SIGBUS:
	case SIGFPE:
	case SIGSEGV:
	case SIGXCPU:
	case SIGXFSZ:
	case SIGSYS:
		return SIGDFL_CORE;
	default:
		return SIGDFL_TERM;
	}
}

bool sig_handler_ignored(const struct ksigaction *ka, int sig)
{
	if (ka->handler == (uint64_t)(uintptr_t)SIG_IGN)
		return true;
	return ka->handler == (uint64_t)(uintptr_t)SIG_DFL &&
	       (sig_default_action(sig) == SIGDFL_IGN || sig_default_action(sig) == SIGDFL_CONT);
}

/* ---- sighand ---- */

struct sighand *sighand_alloc(void)
{
	struct sighand *s = kmalloc(sizeof(*s));

	if (!s)
		return NULL;
	spin_init(&s->lock);
	s->refs = 1;
	list_init(&s->shared_pending);
	s->shared_pending_set = 0;
	return s;
}

struct sighand *sighand_dup(struct sighand *src)
{
	struct sighand *s = sighand_alloc();

	if (!s)
		return NULL;
	unsigned long f = spin_lock_irqsave(&src->lock);

	memcpy(s->action, src->action, sizeof(s->action));
	spin_unlock_irqrestore(&src->lock, f);
	return s; /* pending signals are not inherited across fork */
}

void sighand_get(struct sighand *s)
{
	unsigned long f = spin_lock_irqsave(&s->lock);

	s->refs++;
	spin_unlock_irqrestore(&s->lock, f);
}

static void sig_free_queue(struct list_node *head)
{
	struct list_node *n;

	while ((n = list_pop_head(head)))
		kfree(list_entry(n, struct ksiginfo, node));
}

void sighand_put(struct sighand *s)
{
	if (!s)
		return;
	unsigned long f = spin_lock_irqsave(&s->lock);
	int left = --s->refs;

	spin_unlock_irqrestore(&s->lock, f);
	if (left)
		return;
	sig_free_queue(&s->shared_pending);
	kfree(s);
}

void uthread_signal_init(struct uthread *t, const struct uthread *parent)
{
	list_init(&t->sigpending);
	t->sigpending_set = 0;
	t->sigmask = parent ? parent->sigmask : 0;
	t->saved_sigmask = 0;
	t->restore_sigmask = false;
	/* A new thread starts without an alternate stack; a fork child keeps its parent's (Linux
	 * clears it for CLONE_VM without CLONE_VFORK; threads are the CLONE_VM case here).  The
	 * child's task.proc must be set to tell them apart; unset, it counts as a thread (sharing
	 * an alternate stack between threads would be the worse mistake). */
	bool fork_child = parent && parent->task.proc && t->task.proc &&
			  parent->task.proc != t->task.proc;

	if (fork_child) {
		t->altstack_sp = parent->altstack_sp;
		t->altstack_size = parent->altstack_size;
		t->altstack_flags = parent->altstack_flags;
	} else {
		t->altstack_sp = t->altstack_size = 0;
		t->altstack_flags = 0;
	}
}

void uthread_signal_release(struct uthread *t)
{
	struct proc *p = t->task.proc;
	unsigned long f = 0;

	if (p && p->sighand)
		f = spin_lock_irqsave(&p->sighand->lock);
	sig_free_queue(&t->sigpending);
	t->sigpending_set = 0;
	if (p && p->sighand)
		spin_unlock_irqrestore(&p->sighand->lock, f);
}

void signal_exec_reset(struct proc *p)
{
	struct sighand *sh = p->sighand;
	struct uthread *ut = current_uthread();
	unsigned long f = spin_lock_irqsave(&sh->lock);

	/* Linux flush_signal_handlers(t, 0): handlers back to SIG_DFL, SIG_IGN stays; flags,
	 * restorer and masks cleared for every signal. */
	for (int i = 0; i < KSIG_MAX; i++) {
		struct ksigaction *ka = &sh->action[i];

		if (ka->handler != (uint64_t)(uintptr_t)SIG_IGN)
			ka->handler = (uint64_t)(uintptr_t)SIG_DFL;
		ka->flags = 0;
		ka->restorer = 0;
		ka->mask = 0;
	}
	spin_unlock_irqrestore(&sh->lock, f);
	if (ut) {
		ut->altstack_sp = ut->altstack_size = 0;
		ut->altstack_flags = 0;
	}
	sig_timers_release(p, true); /* POSIX timers end at exec; ITIMER_REAL stays */
}

/* ---- queues ---- */

static int sig_pick(uint64_t set)
{
	if (set & SIG_SYNC_MASK)
		set &= SIG_SYNC_MASK;
	return set ? __builtin_ctzll(set) + 1 : 0;
}

static int sig_count_queue(const struct list_node *head)
{
	const struct list_node *n;
	int c = 0;

	list_for_each(n, head)
		c++;
	return c;
}

/* Take sig off one queue: its first queued siginfo, or a bare one when the queue entry could
 * not be allocated at send time. */
static void sig_take(struct list_node *head, uint64_t *set, int sig, struct ksiginfo *info)
{
	struct list_node *n;
	struct ksiginfo *found = NULL;
	bool more = false;

	list_for_each(n, head) {
		struct ksiginfo *q = list_entry(n, struct ksiginfo, node);

		if (q->signo != sig)
			continue;
		if (!found)
			found = q;
		else {
			more = true;
			break;
		}
	}
	if (found) {
		list_del(&found->node);
		*info = *found;
		kfree(found);
	} else {
		memset(info, 0, sizeof(*info));
		info->signo = sig;
		info->code = SI_USER;
	}
	list_init(&info->node);
	if (!more)
		*set &= ~SIGBIT(sig);
}

int sig_dequeue_locked(struct uthread *ut, struct sighand *sh, uint64_t want, struct ksiginfo *info)
{
	spin_assert_held(&sh->lock);
	int sig = sig_pick(ut->sigpending_set & want);

	if (sig) {
		sig_take(&ut->sigpending, &ut->sigpending_set, sig, info);
		return sig;
	}
	sig = sig_pick(sh->shared_pending_set & want);
	if (sig)
		sig_take(&sh->shared_pending, &sh->shared_pending_set, sig, info);
	return sig;
}

static void sig_flush_queue(struct list_node *head, uint64_t *set, uint64_t mask)
{
	struct list_node *n, *tmp;

	if (!(*set & mask))
		return;
	list_for_each_safe(n, tmp, head) {
		struct ksiginfo *q = list_entry(n, struct ksiginfo, node);

		if (SIGBIT(q->signo) & mask) {
			list_del(&q->node);
			kfree(q);
		}
	}
	*set &= ~mask;
}

/* Caller holds p->lock (thread list) and sighand->lock. */
void sig_flush_locked(struct proc *p, uint64_t set)
{
	spin_assert_held(&p->lock);
	struct list_node *n;

	sig_flush_queue(&p->sighand->shared_pending, &p->sighand->shared_pending_set, set);
	list_for_each(n, &p->threads) {
		struct uthread *t = list_entry(n, struct uthread, thread_node);

		sig_flush_queue(&t->sigpending, &t->sigpending_set, set);
	}
}

/* Queue on one queue; false when dropped (standard signal already pending, queue full). */
static bool sig_enqueue(struct list_node *head, uint64_t *set, int sig, struct ksiginfo *q)
{
	if (sig < SIGRTMIN && (*set & SIGBIT(sig)))
		return false;
	if (sig >= SIGRTMIN && sig_count_queue(head) >= SIG_QUEUE_MAX)
		return false;
	if (q)
		list_add_tail(head, &q->node);
	*set |= SIGBIT(sig);
	return true;
}

void sig_info_user(struct ksiginfo *info, int sig, int code)
{
	memset(info, 0, sizeof(*info));
	info->signo = sig;
	info->code = code;
	info->pid = current_task()->proc ? ksvc_current_tgid() : 0;
	info->uid = 0;
}

/* ---- group stop side table ---- */

struct sig_stop {
	struct list_node node;
	struct proc *p;
	bool stopped;
	int sig;
	bool report_stop, report_cont; /* for wait4 WUNTRACED / WCONTINUED */
};

static struct spinlock sig_stop_lock = SPINLOCK_INIT;
static struct list_node sig_stops = LIST_INIT(sig_stops);

static struct sig_stop *sig_stop_find_locked(struct proc *p)
{
	spin_assert_held(&sig_stop_lock);
	struct list_node *n;

	list_for_each(n, &sig_stops) {
		struct sig_stop *e = list_entry(n, struct sig_stop, node);

		if (e->p == p)
			return e;
	}
	return NULL;
}

bool sig_group_stopped(struct proc *p)
{
	if (list_empty(&sig_stops)) /* racy fast path; the sleep loop re-checks under the lock */
		return false;
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(p);
	bool r = e && e->stopped;

	spin_unlock_irqrestore(&sig_stop_lock, f);
	return r;
}

int sig_group_stop_signal(struct proc *p)
{
	if (list_empty(&sig_stops))
		return 0;
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(p);
	int r = e && e->stopped ? e->sig : 0;

	spin_unlock_irqrestore(&sig_stop_lock, f);
	return r;
}

void signal_proc_release(struct proc *p)
{
	sig_timers_release(p, false);
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(p);

	if (e)
		list_del(&e->node);
	spin_unlock_irqrestore(&sig_stop_lock, f);
	kfree(e);
}

bool signal_child_wait_event(struct proc *child, int options, int *status)
{
	bool r = false;
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(child);

	if (e && (options & WUNTRACED) && e->stopped && e->report_stop) {
		*status = (e->sig << 8) | 0x7f;
		if (!(options & WNOWAIT))
			e->report_stop = false;
		r = true;
	} else if (e && (options & WCONTINUED) && e->report_cont) {
		*status = 0xffff;
		if (!(options & WNOWAIT))
			e->report_cont = false;
		r = true;
	}
	spin_unlock_irqrestore(&sig_stop_lock, f);
	return r;
}

/* Tell p's parent that p stopped or continued (CLD_STOPPED / CLD_CONTINUED). */
static void sig_notify_parent_cldstop(struct proc *p, int code, int status)
{
	bool take = !spin_is_held_by_me(&proc_tree_lock);
	unsigned long f = take ? spin_lock_irqsave(&proc_tree_lock) : 0;
	struct proc *parent = p->parent;

	if (parent && !parent->zombie && parent->sighand) {
		struct ksiginfo info;

		memset(&info, 0, sizeof(info));
		info.signo = SIGCHLD;
		info.code = code;
		info.pid = p->tgid;
		info.status = status;
		if (!(parent->sighand->action[SIGCHLD - 1].flags & SA_NOCLDSTOP))
			signal_send_proc(parent, SIGCHLD, &info);
		waitq_wake_all(&parent->child_wait);
	}
	if (take)
		spin_unlock_irqrestore(&proc_tree_lock, f);
}

/* The current thread dequeued a stop signal with its default action: stop the group. */
void sig_group_stop_begin(struct proc *p, int sig)
{
	struct sig_stop *fresh = kmalloc(sizeof(*fresh));
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(p);

	if (!e && fresh) {
		e = fresh;
		fresh = NULL;
		e->p = p;
		list_add_tail(&sig_stops, &e->node);
	}
	if (e) {
		e->stopped = true;
		e->sig = sig;
		e->report_stop = true;
		e->report_cont = false;
	}
	spin_unlock_irqrestore(&sig_stop_lock, f);
	kfree(fresh);
	if (!e)
		return; /* out of memory: the stop is lost, as if it had been ignored */
	signal_wake_group(p);
	sig_notify_parent_cldstop(p, CLD_STOPPED, sig);
}

static bool sig_kill_pending(struct uthread *ut, struct proc *p)
{
	return ((READ_ONCE(ut->sigpending_set) | READ_ONCE(p->sighand->shared_pending_set)) &
		SIGBIT(SIGKILL)) != 0;
}

void sig_group_stop_wait(struct proc *p)
{
	struct uthread *ut = current_uthread();
	struct waiter w = { 0 };

	for (;;) {
		waitq_prepare(&sig_stop_wq, &w);
		if (!sig_group_stopped(p) || READ_ONCE(p->exiting) || sig_kill_pending(ut, p) ||
		    READ_ONCE(ut->ptrace)) /* a new tracer: re-trap as a ptrace group stop */
			break;
		waitq_block(&w, 0);
	}
	waitq_finish(&sig_stop_wq, &w);
}

/* SIGCONT sent to p: resume a stopped group.  true when the parent must hear CLD_CONTINUED. */
static bool sig_group_continue(struct proc *p)
{
	bool was = false;

	if (list_empty(&sig_stops))
		return false;
	unsigned long f = spin_lock_irqsave(&sig_stop_lock);
	struct sig_stop *e = sig_stop_find_locked(p);

	if (e && e->stopped) {
		e->stopped = false;
		e->report_stop = false;
		e->report_cont = true;
		was = true;
	}
	spin_unlock_irqrestore(&sig_stop_lock, f);
	if (was)
		waitq_wake_all(&sig_stop_wq);
	return was;
}

/* ---- sending ---- */

static struct uthread *sig_first_thread_locked(struct proc *p)
{
	spin_assert_held(&p->lock);
	if (list_empty(&p->threads))
		return NULL;
	return list_entry(p->threads.next, struct uthread, thread_node);
}

static void sig_wake_all_locked(struct proc *p)
{
	spin_assert_held(&p->lock);
	struct list_node *n;

	list_for_each(n, &p->threads)
		wake_up_task(&list_entry(n, struct uthread, thread_node)->task);
}

void signal_wake_group(struct proc *p)
{
	struct task *me = current_task();
	struct list_node *n;
	unsigned long f = spin_lock_irqsave(&p->lock);

	list_for_each(n, &p->threads) {
		struct uthread *t = list_entry(n, struct uthread, thread_node);

		if (&t->task != me)
			wake_up_task(&t->task);
	}
	spin_unlock_irqrestore(&p->lock, f);
	waitq_wake_all(&sig_stop_wq);
}

/*
 * Queue sig for p (target NULL: shared) or one thread, and wake who must notice.  Linux's
 * prepare_signal + __send_signal_locked + complete_signal.  Holds p->lock -> sighand->lock.
 */
static int sig_send(struct proc *p, struct uthread *target, int sig, const struct ksiginfo *info)
{
	struct ksiginfo *q = kmalloc(sizeof(*q));
	bool cont_notify = false;

	if (q) {
		if (info)
			*q = *info;
		else
			sig_info_user(q, sig, SI_KERNEL);
		q->signo = sig;
		list_init(&q->node);
	} else if (sig >= SIGRTMIN) {
		return -EAGAIN;
	}

	unsigned long f = spin_lock_irqsave(&p->lock);
	struct sighand *sh = p->sighand;

	/* A thread already unlinked by proc_exit_thread (thread_node self-linked) has freed its
	 * queue: what is queued now would leak. */
	if (p->exiting || !sh || list_empty(&p->threads) ||
	    (target && list_empty(&target->thread_node))) {
		spin_unlock_irqrestore(&p->lock, f);
		kfree(q);
		return 0; /* a dying or dead process swallows signals, as on Linux */
	}
	spin_lock(&sh->lock);
	/* prepare_signal: stop and continue signals cancel each other. */
	if (SIGBIT(sig) & SIG_STOP_MASK)
		sig_flush_locked(p, SIGBIT(SIGCONT));
	if (sig == SIGCONT) {
		sig_flush_locked(p, SIG_STOP_MASK);
		cont_notify = sig_group_continue(p);
	}
	struct uthread *probe = target ? target : sig_first_thread_locked(p);
	struct ksigaction *ka = &sh->action[sig - 1];
	bool queued = false;

	/* sig_ignored: discarded unless blocked (the handler may change before unblocking) or
	 * traced (the tracer sees every signal). */
	bool ignored = sig_handler_ignored(ka, sig) && !(probe->sigmask & SIGBIT(sig)) &&
		       !READ_ONCE(probe->ptrace);
	char tcomm[16];
	int tpid = probe->task.tid;

	if (trace_enabled(TRACE_ID_SIGNAL_GENERATE))
		memcpy(tcomm, probe->task.comm, sizeof(tcomm));
	if (!ignored) {
		if (target)
			queued = sig_enqueue(&target->sigpending, &target->sigpending_set, sig, q);
		else
			queued = sig_enqueue(&sh->shared_pending, &sh->shared_pending_set, sig, q);
	}
	if (queued) {
		struct uthread *me = current_uthread();

		if (sig == SIGKILL) {
			sig_wake_all_locked(p);
		} else if (target) {
			if (!(target->sigmask & SIGBIT(sig)))
				wake_up_task(&target->task);
		} else if (me && me->task.proc == p && !(me->sigmask & SIGBIT(sig))) {
			/* the sender itself notices on its way out of the kernel */
		} else {
			struct list_node *n;

			list_for_each(n, &p->threads) {
				struct uthread *t = list_entry(n, struct uthread, thread_node);

				if (!(t->sigmask & SIGBIT(sig))) {
					wake_up_task(&t->task);
					break;
				}
			}
		}
	}
	spin_unlock(&sh->lock);
	spin_unlock_irqrestore(&p->lock, f);
	trace_signal_generate(sig, info ? info->errno_ : 0, info ? info->code : SI_KERNEL, tcomm,
			      tpid, !target, queued ? 0 : ignored ? 1 : 2);
	if (!queued)
		kfree(q);
	else
		signalfd_notify();
	if (cont_notify)
		sig_notify_parent_cldstop(p, CLD_CONTINUED, SIGCONT);
	return 0;
}

int signal_send_proc(struct proc *p, int sig, const struct ksiginfo *info)
{
	if (!sig_valid(sig))
		return -EINVAL;
	if (!p)
		return -ESRCH;
	return sig_send(p, NULL, sig, info);
}

int signal_send_thread(struct uthread *t, int sig, const struct ksiginfo *info)
{
	if (!sig_valid(sig))
		return -EINVAL;
	if (!t || !t->task.proc)
		return -ESRCH;
	return sig_send(t->task.proc, t, sig, info);
}

void signal_force_fault(int sig, int code, uint64_t addr)
{
	struct uthread *ut = current_uthread();
	struct proc *p = current_proc();
	struct ksiginfo info;

	kassert(ut && sig_valid(sig));
	/* force_sig_info_to_task: a blocked or ignored fault signal gets the default action. */
	unsigned long f = spin_lock_irqsave(&p->sighand->lock);
	struct ksigaction *ka = &p->sighand->action[sig - 1];
	bool blocked = (ut->sigmask & SIGBIT(sig)) != 0;

	if (blocked || ka->handler == (uint64_t)(uintptr_t)SIG_IGN) {
		ka->handler = (uint64_t)(uintptr_t)SIG_DFL;
		ut->sigmask &= ~SIGBIT(sig);
	}
	bool unhandled = ka->handler == (uint64_t)(uintptr_t)SIG_DFL;

	spin_unlock_irqrestore(&p->sighand->lock, f);
	/* arm64_show_signal (show_unhandled_signals): a fault that will kill says so */
	if (unhandled)
		klog_ratelimited(6, "%s[%d]: unhandled signal %d code %d at pc %lx, address %lx, "
				 "esr %lx", ut->task.comm, ut->task.tid, sig, code,
				 (unsigned long)ut->tf->pc, (unsigned long)addr,
				 (unsigned long)ut->tf->esr);
	memset(&info, 0, sizeof(info));
	info.signo = sig;
	info.code = code;
	info.addr = addr;
	info.value = sig_fault_esr(ut->tf->esr, addr);
	signal_send_thread(ut, sig, &info);
}

/*
 * The ESR a fault's frame reports in its esr_context record (Linux's thread.fault_code, set by
 * set_thread_esr and arm64_notify_die): aborts and SP/PC alignment faults carry one, an abort
 * on a kernel address is reported as a level-0 translation fault from EL0.  0: no record.
 */
uint64_t sig_fault_esr(uint64_t esr, uint64_t addr)
{
	uint64_t ec = (esr >> 26) & 0x3f;
	const uint64_t ec_mask = 0x3full << 26, il = 1ull << 25, cm = 1ull << 8, wnr = 1ull << 6;
	const uint64_t fsc_fault = 0x04;

	esr &= 0xffffffffull; /* ISS2 and the syscall mark are not ESR bits to report */
	switch (ec) {
	case 0x24: /* data abort from EL0 */
		if (addr >> 48)
			esr = (esr & (ec_mask | il | cm | wnr)) | fsc_fault;
		return esr;
	case 0x20: /* instruction abort from EL0 */
		if (addr >> 48)
			esr = (esr & (ec_mask | il)) | fsc_fault;
		return esr;
	case 0x22: /* PC alignment */
	case 0x26: /* SP alignment */
		return esr;
	default:
		return 0;
	}
}

bool signal_pending(struct task *t)
{
	struct uthread *ut = task_uthread(t);

	if (!ut)
		return false;
	struct proc *p = t->proc;

	if (READ_ONCE(p->exiting))
		return true;
	uint64_t pend = READ_ONCE(ut->sigpending_set) | READ_ONCE(p->sighand->shared_pending_set);

	if (unlikely(READ_ONCE(ut->ptrace)) && ptrace_jobctl_pending(ut))
		return true; /* PTRACE_INTERRUPT or a group stop to report */
	return (pend & ~READ_ONCE(ut->sigmask)) != 0;
}

/* ---- the parent's view of a child's end ---- */

bool signal_parent_autoreaps(struct proc *child)
{
	struct proc *parent = child->parent;

	if (!parent || !parent->sighand || child->exit_signal != SIGCHLD)
		return false;
	const struct ksigaction *ka = &parent->sighand->action[SIGCHLD - 1];

	return ka->handler == (uint64_t)(uintptr_t)SIG_IGN || (ka->flags & SA_NOCLDWAIT);
}

void signal_notify_parent_exit(struct proc *child)
{
	/* The group is gone: its timers and stop state with it (wait4 sees only the exit). */
	signal_proc_release(child);

	bool take = !spin_is_held_by_me(&proc_tree_lock);
	unsigned long f = take ? spin_lock_irqsave(&proc_tree_lock) : 0;
	struct proc *parent = child->parent;
	int st = child->exit_status;

	if (parent && parent->sighand && child->exit_signal > 0 && sig_valid(child->exit_signal)) {
		struct ksiginfo info;
		const struct ksigaction *ka = &parent->sighand->action[SIGCHLD - 1];

		memset(&info, 0, sizeof(info));
		info.signo = child->exit_signal;
		info.pid = child->tgid;
		if ((st & 0x7f) == 0) {
			info.code = CLD_EXITED;
			info.status = (st >> 8) & 0xff;
		} else {
			info.code = (st & 0x80) ? CLD_DUMPED : CLD_KILLED;
			info.status = st & 0x7f;
		}
		info.utime = child->utime_ns;
		info.stime = child->stime_ns;
		/* do_notify_parent: an ignored SIGCHLD is not sent (the child is auto-reaped). */
		if (!(child->exit_signal == SIGCHLD &&
		      ka->handler == (uint64_t)(uintptr_t)SIG_IGN))
			signal_send_proc(parent, child->exit_signal, &info);
	}
	if (parent)
		waitq_wake_all(&parent->child_wait);
	if (take)
		spin_unlock_irqrestore(&proc_tree_lock, f);
}
