/*
 * sys_timer.c - interval and POSIX timers that end in signals: getitimer/setitimer
 * (ITIMER_REAL -> SIGALRM; glibc's alarm() is setitimer), timer_create, timer_settime,
 * timer_gettime, timer_getoverrun, timer_delete.
 *
 * ABI: Linux 6.1 on arm64 (<linux/time_types.h> __kernel_itimerspec / __kernel_old_itimerval,
 * <asm-generic/siginfo.h> sigevent).  ITIMER_REAL sends SIGALRM with SI_KERNEL to the process;
 * a POSIX timer sends its sigev_signo with SI_TIMER, si_timerid, si_value (SIGEV_SIGNAL and
 * SIGEV_THREAD to the process, SIGEV_THREAD_ID to one thread of it; SIGEV_NONE only counts
 * time).  Timer ids count from 0 per process.  POSIX timers go away at exec and exit;
 * ITIMER_REAL survives exec, as on Linux.
 *
 * Not done: ITIMER_VIRTUAL/ITIMER_PROF are stored and read back but never fire; CPU-time
 * clocks for timer_create (EINVAL); overrun counting (always 0); CLOCK_REALTIME timers are
 * kept as monotonic deadlines, so clock_settime does not move them.
 *
 * Lifetime: a timer's callback runs in hard IRQ context on the CPU that armed it, and takes
 * t->lock first.  So t->lock holders cancel with ktimer_try_cancel, which does not wait for a
 * callback already taken off the queue (ktimer_cancel would, spinning on the callback that
 * spins on t->lock: a deadlock between timer_settime or timer_delete and the expiry on
 * another CPU).  A deleted timer that may have such a callback in flight (armed, cancel
 * failed) is freed by that callback; otherwise by the deleter.  Lock order: ptimer_lock -> timer->lock -> proc locks.
 */
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <linux/time.h>
#include <linux/time_types.h>
#include <kern/assert.h>
#include <kern/clock.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include "signal_internal.h"

#define SYSARGS uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5
#define PTIMER_ITIMER_BASE (-3) /* ids -3..-1: ITIMER_REAL, VIRTUAL, PROF */
#define PTIMER_MAX_PER_PROC 1024

struct ptimer {
	struct list_node node; /* on ptimers (ptimer_lock) */
	struct proc *p;
	int id; /* >= 0 POSIX timer; PTIMER_ITIMER_BASE + which for itimers */
	struct spinlock lock; /* covers what follows */
	struct ktimer kt;
	bool armed; /* kt queued or its callback not yet past the lock */
	bool enabled, dead;
	uint64_t deadline, interval; /* monotonic ns */
	int notify, signo, tid, clock;
	uint64_t value;
};

static void sig_timers_delete_one(struct proc *p, int id);

static struct spinlock ptimer_lock = SPINLOCK_INIT;
static struct list_node ptimers = LIST_INIT(ptimers);

static void *uptr(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

static struct ptimer *ptimer_find_locked(struct proc *p, int id)
{
	spin_assert_held(&ptimer_lock);
	struct list_node *n;

	list_for_each(n, &ptimers) {
		struct ptimer *t = list_entry(n, struct ptimer, node);

		if (t->p == p && t->id == id)
			return t;
	}
	return NULL;
}

static void ptimer_send(struct ptimer *t)
{
	struct ksiginfo info;

	memset(&info, 0, sizeof(info));
	info.signo = t->signo;
	if (t->id < 0) {
		info.code = SI_KERNEL;
		signal_send_proc(t->p, t->signo, &info);
		return;
	}
	if (t->notify == SIGEV_NONE)
		return;
	info.code = SI_TIMER;
	info.pid = t->id; /* si_timerid */
	info.value = t->value;
	if (t->notify == (SIGEV_SIGNAL | SIGEV_THREAD_ID)) {
		struct list_node *n;
		unsigned long f = spin_lock_irqsave(&t->p->lock);

		list_for_each(n, &t->p->threads) {
			struct uthread *u = list_entry(n, struct uthread, thread_node);

			if (u->task.tid == t->tid) {
				spin_unlock_irqrestore(&t->p->lock, f);
				/* the thread list lock is dropped: u stays valid while the
				 * group lives, and a dying thread swallows the signal */
				signal_send_thread(u, t->signo, &info);
				return;
			}
		}
		spin_unlock_irqrestore(&t->p->lock, f);
		return;
	}
	signal_send_proc(t->p, t->signo, &info);
}

/* Hard IRQ, on the CPU that armed kt. */
static void ptimer_fire(struct ktimer *kt)
{
	struct ptimer *t = container_of(kt, struct ptimer, kt);
	uint64_t now = time_ns();

	spin_lock(&t->lock);
	t->armed = false;
	if (t->dead) {
		spin_unlock(&t->lock);
		kfree(t);
		return;
	}
	if (!t->enabled) {
		spin_unlock(&t->lock);
		return;
	}
	if (now < t->deadline) { /* re-set while this expiry was in flight */
		ktimer_arm(&t->kt, t->deadline);
		t->armed = true;
		spin_unlock(&t->lock);
		return;
	}
	ptimer_send(t);
	if (t->interval) {
		t->deadline += t->interval;
		if (t->deadline <= now) /* missed expiries are overruns, not a burst */
			t->deadline = now + t->interval - (now - t->deadline) % t->interval;
		ktimer_arm(&t->kt, t->deadline);
		t->armed = true;
	} else {
		t->enabled = false;
	}
	spin_unlock(&t->lock);
}

/* Arm or disarm t: deadline 0 disarms.  t->lock held, interrupts off. */
static void ptimer_set_locked(struct ptimer *t, uint64_t deadline, uint64_t interval)
{
	spin_assert_held(&t->lock);
	t->enabled = deadline != 0;
	t->deadline = deadline;
	t->interval = interval;
	if (t->armed) {
		if (!ktimer_try_cancel(&t->kt))
			return; /* its callback is in flight and will see the new setting */
		t->armed = false;
	}
	if (t->enabled) {
		ktimer_arm(&t->kt, deadline);
		t->armed = true;
	}
}

static void ptimer_get_locked(const struct ptimer *t, uint64_t *left, uint64_t *interval)
{
	spin_assert_held(&t->lock);
	uint64_t now = time_ns();

	*interval = t->interval;
	*left = t->enabled ? (t->deadline > now ? t->deadline - now : 1) : 0;
}

/* Mark t dead and free it unless its callback is in flight (which then frees it). */
static void ptimer_destroy(struct ptimer *t)
{
	unsigned long f = spin_lock_irqsave(&t->lock);
	bool in_flight = false;

	t->dead = true;
	t->enabled = false;
	if (t->armed && !ktimer_try_cancel(&t->kt))
		in_flight = true;
	t->armed = in_flight;
	spin_unlock_irqrestore(&t->lock, f);
	if (!in_flight)
		kfree(t);
}

/* Delete p's timers: all of them (exit), or the POSIX ones only (exec). */
void sig_timers_release(struct proc *p, bool posix_only)
{
	for (;;) {
		struct ptimer *victim = NULL;
		struct list_node *n;
		unsigned long f = spin_lock_irqsave(&ptimer_lock);

		list_for_each(n, &ptimers) {
			struct ptimer *t = list_entry(n, struct ptimer, node);

			if (t->p == p && (!posix_only || t->id >= 0)) {
				victim = t;
				list_del(&t->node);
				break;
			}
		}
		spin_unlock_irqrestore(&ptimer_lock, f);
		if (!victim)
			return;
		ptimer_destroy(victim);
	}
}

static struct ptimer *ptimer_new(struct proc *p, int id)
{
	struct ptimer *t = kmalloc(sizeof(*t));

	if (!t)
		return NULL;
	t->p = p;
	t->id = id;
	spin_init(&t->lock);
	ktimer_init(&t->kt, ptimer_fire);
	return t;
}

/* ---- setitimer / getitimer ---- */

static uint64_t tv_ns(const struct __kernel_old_timeval *tv)
{
	return (uint64_t)tv->tv_sec * NSEC_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

static void ns_tv(uint64_t ns, struct __kernel_old_timeval *tv)
{
	tv->tv_sec = (long)(ns / NSEC_PER_SEC);
	tv->tv_usec = (long)(ns % NSEC_PER_SEC / 1000);
}

static long itimer_do(int which, const struct __kernel_old_itimerval *nw,
		      struct __kernel_old_itimerval *old)
{
	struct proc *p = current_proc();
	struct ptimer *fresh = NULL;

	if (which < ITIMER_REAL || which > ITIMER_PROF)
		return -EINVAL;
	if (nw && !(fresh = ptimer_new(p, PTIMER_ITIMER_BASE + which)))
		return -ENOMEM;
	unsigned long f = spin_lock_irqsave(&ptimer_lock);
	struct ptimer *t = ptimer_find_locked(p, PTIMER_ITIMER_BASE + which);

	if (!t && fresh) {
		t = fresh;
		fresh = NULL;
		t->signo = SIGALRM;
		list_add_tail(&ptimers, &t->node);
	}
	if (t) {
		uint64_t left, interval;

		spin_lock(&t->lock);
		ptimer_get_locked(t, &left, &interval);
		if (old) {
			ns_tv(left, &old->it_value);
			ns_tv(interval, &old->it_interval);
		}
		if (nw) {
			uint64_t v = tv_ns(&nw->it_value), iv = tv_ns(&nw->it_interval);

			if (which == ITIMER_REAL)
				ptimer_set_locked(t, v ? time_ns() + v : 0, iv);
			else { /* stored, never fired */
				t->enabled = v != 0;
				t->deadline = v ? time_ns() + v : 0;
				t->interval = iv;
			}
		}
		spin_unlock(&t->lock);
	} else if (old) {
		memset(old, 0, sizeof(*old));
	}
	spin_unlock_irqrestore(&ptimer_lock, f);
	kfree(fresh);
	return 0;
}

static long sys_setitimer(SYSARGS)
{
	struct __kernel_old_itimerval nw, old;

	if (a1) {
		if (ksvc_copy_from_user(&nw, uptr(a1), sizeof(nw)))
			return -EFAULT;
		if (nw.it_value.tv_sec < 0 || nw.it_value.tv_usec < 0 ||
		    nw.it_value.tv_usec >= 1000000 || nw.it_interval.tv_sec < 0 ||
		    nw.it_interval.tv_usec < 0 || nw.it_interval.tv_usec >= 1000000)
			return -EINVAL;
	} else {
		memset(&nw, 0, sizeof(nw)); /* Linux: a NULL new value disarms */
	}
	long r = itimer_do((int)a0, &nw, a2 ? &old : NULL);

	if (!r && a2 && ksvc_copy_to_user(uptr(a2), &old, sizeof(old)))
		return -EFAULT;
	return r;
}
SYSCALL(__NR_setitimer, sys_setitimer);

static long sys_getitimer(SYSARGS)
{
	struct __kernel_old_itimerval old;
	long r = itimer_do((int)a0, NULL, &old);

	if (!r && ksvc_copy_to_user(uptr(a1), &old, sizeof(old)))
		return -EFAULT;
	return r;
}
SYSCALL(__NR_getitimer, sys_getitimer);

/* ---- POSIX timers ---- */

static long sys_timer_create(SYSARGS)
{
	struct proc *p = current_proc();
	int clk = (int)a0;
	sigevent_t ev;

	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
	    clk != CLOCK_REALTIME_ALARM && clk != CLOCK_BOOTTIME_ALARM && clk != CLOCK_TAI)
		return -EINVAL;
	if (a1) {
		if (ksvc_copy_from_user(&ev, uptr(a1), sizeof(ev)))
			return -EFAULT;
	} else {
		memset(&ev, 0, sizeof(ev));
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGALRM;
	}
	switch (ev.sigev_notify) {
	case SIGEV_SIGNAL | SIGEV_THREAD_ID: {
		unsigned long f = spin_lock_irqsave(&proc_tree_lock);
		struct uthread *u = proc_find_thread_locked(ev.sigev_notify_thread_id);
		bool ok = u && u->task.proc == p;

		spin_unlock_irqrestore(&proc_tree_lock, f);
		if (!ok)
			return -EINVAL;
	}
		/* fallthrough */
	case SIGEV_SIGNAL:
	case SIGEV_THREAD:
		if (ev.sigev_signo <= 0 || ev.sigev_signo > KSIG_MAX)
			return -EINVAL;
		break;
	case SIGEV_NONE:
		break;
	default:
		return -EINVAL;
	}
	struct ptimer *t = ptimer_new(p, 0);

	if (!t)
		return -ENOMEM;
	t->notify = ev.sigev_notify == SIGEV_THREAD ? SIGEV_SIGNAL : ev.sigev_notify;
	t->signo = ev.sigev_signo;
	t->tid = ev.sigev_notify_thread_id;
	t->value = (uint64_t)(uintptr_t)ev.sigev_value.sival_ptr;
	t->clock = clk;

	unsigned long f = spin_lock_irqsave(&ptimer_lock);
	int id = 0;

	while (id < PTIMER_MAX_PER_PROC && ptimer_find_locked(p, id))
		id++;
	if (id < PTIMER_MAX_PER_PROC) {
		t->id = id;
		if (!a1)
			t->value = (uint64_t)id; /* sigev_value.sival_int = the timer id */
		list_add_tail(&ptimers, &t->node);
	}
	spin_unlock_irqrestore(&ptimer_lock, f);
	if (id >= PTIMER_MAX_PER_PROC) {
		kfree(t);
		return -EAGAIN;
	}
	if (ksvc_copy_to_user(uptr(a2), &id, sizeof(id))) {
		sig_timers_delete_one(p, id);
		return -EFAULT;
	}
	return 0;
}
SYSCALL(__NR_timer_create, sys_timer_create);

static void sig_timers_delete_one(struct proc *p, int id)
{
	unsigned long f = spin_lock_irqsave(&ptimer_lock);
	struct ptimer *t = id >= 0 ? ptimer_find_locked(p, id) : NULL;

	if (t)
		list_del(&t->node);
	spin_unlock_irqrestore(&ptimer_lock, f);
	if (t)
		ptimer_destroy(t);
}

static long sys_timer_delete(SYSARGS)
{
	struct proc *p = current_proc();
	unsigned long f = spin_lock_irqsave(&ptimer_lock);
	struct ptimer *t = (int)a0 >= 0 ? ptimer_find_locked(p, (int)a0) : NULL;

	spin_unlock_irqrestore(&ptimer_lock, f);
	if (!t)
		return -EINVAL;
	sig_timers_delete_one(p, (int)a0);
	return 0;
}
SYSCALL(__NR_timer_delete, sys_timer_delete);

static int its_valid(const struct __kernel_timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < (long long)NSEC_PER_SEC;
}

static uint64_t ts_to_ns(const struct __kernel_timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static void ns_to_ts(uint64_t ns, struct __kernel_timespec *ts)
{
	ts->tv_sec = (long long)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long long)(ns % NSEC_PER_SEC);
}

/* Read (old) and/or set (nw) the caller's timer id: 0 or -EINVAL. */
static long ptimer_op(int id, struct __kernel_itimerspec *old, const struct __kernel_itimerspec *nw,
		      bool abstime)
{
	struct proc *p = current_proc();
	long r = -EINVAL;
	unsigned long f = spin_lock_irqsave(&ptimer_lock);
	struct ptimer *t = id >= 0 ? ptimer_find_locked(p, id) : NULL;

	if (t) {
		uint64_t left, interval;

		spin_lock(&t->lock);
		ptimer_get_locked(t, &left, &interval);
		if (old) {
			ns_to_ts(left, &old->it_value);
			ns_to_ts(interval, &old->it_interval);
		}
		if (nw) {
			uint64_t v = ts_to_ns(&nw->it_value), now = time_ns(), deadline = 0;

			if (v && abstime) {
				/* absolute on the timer's clock: realtime ones convert at set time */
				uint64_t cur = now;

				if (t->clock == CLOCK_REALTIME || t->clock == CLOCK_REALTIME_ALARM ||
				    t->clock == CLOCK_TAI)
					cur = clock_realtime_ns();
				deadline = v > cur ? now + (v - cur) : now;
			} else if (v) {
				deadline = now + v;
			}
			ptimer_set_locked(t, deadline, ts_to_ns(&nw->it_interval));
		}
		spin_unlock(&t->lock);
		r = 0;
	}
	spin_unlock_irqrestore(&ptimer_lock, f);
	return r;
}

static long sys_timer_settime(SYSARGS)
{
	struct __kernel_itimerspec nw, old;

	if (a1 & ~(uint64_t)TIMER_ABSTIME)
		return -EINVAL;
	if (ksvc_copy_from_user(&nw, uptr(a2), sizeof(nw)))
		return -EFAULT;
	if (!its_valid(&nw.it_value) || !its_valid(&nw.it_interval))
		return -EINVAL;
	long r = ptimer_op((int)a0, a3 ? &old : NULL, &nw, (a1 & TIMER_ABSTIME) != 0);

	if (!r && a3 && ksvc_copy_to_user(uptr(a3), &old, sizeof(old)))
		return -EFAULT;
	return r;
}
SYSCALL(__NR_timer_settime, sys_timer_settime);

static long sys_timer_gettime(SYSARGS)
{
	struct __kernel_itimerspec old;
	long r = ptimer_op((int)a0, &old, NULL, false);

	if (!r && ksvc_copy_to_user(uptr(a1), &old, sizeof(old)))
		return -EFAULT;
	return r;
}
SYSCALL(__NR_timer_gettime, sys_timer_gettime);

static long sys_timer_getoverrun(SYSARGS)
{
	long r = ptimer_op((int)a0, NULL, NULL, false);

	return r ? r : 0; /* overruns are not counted */
}
SYSCALL(__NR_timer_getoverrun, sys_timer_getoverrun);
