/*
 * sys_time.c - clocks and sleeping: clock_gettime, clock_getres, clock_settime, gettimeofday,
 * settimeofday, nanosleep, clock_nanosleep, times, getrusage.
 *
 * ABI: Linux 6.1 on arm64 (<linux/time.h>, <linux/time_types.h>, <linux/times.h>,
 * <linux/resource.h>).  CLOCK_REALTIME starts from the PL031 RTC the device tree names
 * (kernel/main.c, clock_realtime_init), at 2026-01-01T00:00:00Z (REALTIME_EPOCH) without one,
 * and can be set.  MONOTONIC, MONOTONIC_RAW, BOOTTIME and the COARSE clocks all read the generic timer (no suspend, no NTP slewing); their resolution is 1 ns as Linux
 * reports for high-resolution clocks, the COARSE ones a tick.  CPU-time clocks count a
 * thread's time on a CPU; times, getrusage and /proc split it into user and system time as
 * Linux's tick-based cputime_adjust (task_cputime_split).  Negative clock ids are the posix-cpu-timers encoding (~pid << 3 | type).
 * An interrupted sleep returns -ERESTARTNOHAND (EINTR when a handler runs; the remaining time
 * is written for relative sleeps).
 * The vDSO (arch/arm64/vdso/vgettime.c) answers clock_gettime, gettimeofday and clock_getres
 * of the non-CPU-time clocks in user space with these same values: a change of the realtime
 * offset goes to its [vvar] page too (clock_realtime_set).
 */
#include <linux/resource.h>
#include <linux/time.h>
#include <linux/time_types.h>
#include <linux/times.h>
#include <kern/assert.h>
#include <kern/clock.h>
#include <kern/errno.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <kern/vdso.h>

#define SYSARGS uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5
#define REALTIME_EPOCH 1767225600ull /* 2026-01-01T00:00:00Z */
#define USER_HZ 100

static int64_t realtime_offset_ns = (int64_t)(REALTIME_EPOCH * NSEC_PER_SEC);


static void *uptr(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

uint64_t clock_realtime_ns(void)
{
	return (uint64_t)((int64_t)time_ns() + READ_ONCE(realtime_offset_ns));
}

int64_t clock_realtime_offset_ns(void)
{
	return READ_ONCE(realtime_offset_ns);
}

/* Every change of the offset goes through here, so that the vDSO's [vvar] copy follows it
 * (the lock: two setters cannot leave the copies different). */
static void clock_realtime_set(uint64_t ns)
{
	static struct spinlock lock = SPINLOCK_INIT;
	unsigned long f = spin_lock_irqsave(&lock);
	int64_t off = (int64_t)ns - (int64_t)time_ns();

	WRITE_ONCE(realtime_offset_ns, off);
	vdso_clock_update(off);
	spin_unlock_irqrestore(&lock, f);
}

void clock_realtime_init(uint64_t epoch_sec)
{
	clock_realtime_set(epoch_sec * NSEC_PER_SEC);
}

static uint64_t task_cputime(const struct task *t)
{
	uint64_t r = READ_ONCE(t->runtime_ns);

	if (t == current_task())
		r += time_ns() - t->last_switch_in_ns;
	return r;
}

static uint64_t scale(uint64_t rt, uint64_t part, uint64_t total)
{
	return (uint64_t)((unsigned __int128)rt * part / total);
}

void task_cputime_split(const struct task *t, uint64_t *utime, uint64_t *stime)
{
	uint64_t rt = task_cputime(t), ut = READ_ONCE(t->user_ticks), st = READ_ONCE(t->sys_ticks);

	*stime = st ? scale(rt, st, ut + st) : 0;
	*utime = rt - *stime;
}

void proc_cputime_split(struct proc *p, uint64_t *utime, uint64_t *stime)
{
	struct list_node *n;
	unsigned long f = spin_lock_irqsave(&p->lock);

	*utime = p->utime_ns;
	*stime = p->stime_ns;
	list_for_each(n, &p->threads) {
		uint64_t u, s;

		task_cputime_split(&list_entry(n, struct uthread, thread_node)->task, &u, &s);
		*utime += u;
		*stime += s;
	}
	spin_unlock_irqrestore(&p->lock, f);
}

static uint64_t proc_cputime(struct proc *p)
{
	struct list_node *n;
	unsigned long f = spin_lock_irqsave(&p->lock);
	uint64_t sum = p->utime_ns + p->stime_ns;

	list_for_each(n, &p->threads)
		sum += task_cputime(&list_entry(n, struct uthread, thread_node)->task);
	spin_unlock_irqrestore(&p->lock, f);
	return sum;
}

/* posix-cpu-timers clock ids: CPUCLOCK_PID = ~(clk >> 3), bit 2 per-thread, type in 0..2. */
static int cpuclock_read(int clk, uint64_t *ns)
{
	int pid = ~(clk >> 3);
	bool thread = clk & 4;
	int r = 0;

	if ((clk & 3) == 3)
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	if (thread) {
		struct uthread *t = pid ? proc_find_thread_locked(pid) : current_uthread();

		if (!t || (pid && t->task.proc != current_proc()))
			r = -EINVAL;
		else
			*ns = task_cputime(&t->task);
	} else {
		struct proc *p = pid ? proc_find_locked(pid) : current_proc();

		if (!p)
			r = -EINVAL;
		else
			*ns = proc_cputime(p);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}

static int clock_read(int clk, uint64_t *ns)
{
	if (clk < 0)
		return cpuclock_read(clk, ns);
	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
	case CLOCK_REALTIME_ALARM:
		*ns = clock_realtime_ns();
		return 0;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		*ns = time_ns();
		return 0;
	case CLOCK_PROCESS_CPUTIME_ID:
		*ns = proc_cputime(current_proc());
		return 0;
	case CLOCK_THREAD_CPUTIME_ID:
		*ns = task_cputime(current_task());
		return 0;
	default:
		return -EINVAL;
	}
}

static struct __kernel_timespec ns_to_ts(uint64_t ns)
{
	struct __kernel_timespec ts = { (long long)(ns / NSEC_PER_SEC),
					(long long)(ns % NSEC_PER_SEC) };
	return ts;
}

static int ts_from_user(uint64_t uts, uint64_t *ns)
{
	struct __kernel_timespec ts;

	if (ksvc_copy_from_user(&ts, uptr(uts), sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (long long)NSEC_PER_SEC)
		return -EINVAL;
	if ((uint64_t)ts.tv_sec >= UINT64_MAX / NSEC_PER_SEC - 1)
		*ns = UINT64_MAX / 2; /* effectively forever */
	else
		*ns = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	return 0;
}

static long sys_clock_gettime(SYSARGS)
{
	uint64_t ns;
	int r = clock_read((int)a0, &ns);

	if (r)
		return r;
	struct __kernel_timespec ts = ns_to_ts(ns);

	return ksvc_copy_to_user(uptr(a1), &ts, sizeof(ts)) ? -EFAULT : 0;
}
SYSCALL(__NR_clock_gettime, sys_clock_gettime);

static long sys_clock_getres(SYSARGS)
{
	uint64_t ns;
	int clk = (int)a0;
	int r = clock_read(clk, &ns);

	if (r)
		return r;
	bool coarse = clk == CLOCK_REALTIME_COARSE || clk == CLOCK_MONOTONIC_COARSE;
	struct __kernel_timespec ts = ns_to_ts(coarse ? TICK_NS : 1);

	if (a1 && ksvc_copy_to_user(uptr(a1), &ts, sizeof(ts)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_clock_getres, sys_clock_getres);

static long sys_clock_settime(SYSARGS)
{
	uint64_t ns;

	if ((int)a0 != CLOCK_REALTIME)
		return -EINVAL; /* the only settable clock */
	int r = ts_from_user(a1, &ns);

	if (r)
		return r;
	clock_realtime_set(ns);
	return 0;
}
SYSCALL(__NR_clock_settime, sys_clock_settime);

static long sys_gettimeofday(SYSARGS)
{
	uint64_t ns;

	clock_read(CLOCK_REALTIME, &ns);
	if (a0) {
		struct __kernel_old_timeval tv = { (long)(ns / NSEC_PER_SEC),
						   (long)(ns % NSEC_PER_SEC / 1000) };

		if (ksvc_copy_to_user(uptr(a0), &tv, sizeof(tv)))
			return -EFAULT;
	}
	if (a1) {
		struct timezone tz = { 0, 0 };

		if (ksvc_copy_to_user(uptr(a1), &tz, sizeof(tz)))
			return -EFAULT;
	}
	return 0;
}
SYSCALL(__NR_gettimeofday, sys_gettimeofday);

static long sys_settimeofday(SYSARGS)
{
	struct __kernel_old_timeval tv;

	if (!a0)
		return 0;
	if (ksvc_copy_from_user(&tv, uptr(a0), sizeof(tv)))
		return -EFAULT;
	if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return -EINVAL;
	uint64_t ns = (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * 1000;

	clock_realtime_set(ns);
	return 0;
}
SYSCALL(__NR_settimeofday, sys_settimeofday);

/* ---- sleeping ---- */

/* Sleep until the monotonic deadline or a signal: 0, or -ERESTARTNOHAND. */
static long sleep_until(uint64_t deadline)
{
	struct task *t = current_task();
	struct wait_queue wq;
	struct waiter w = { 0 };
	long r = 0;

	waitq_init(&wq);
	for (;;) {
		waitq_prepare(&wq, &w);
		if (time_ns() >= deadline)
			break;
		if (signal_pending(t)) {
			r = -ERESTARTNOHAND;
			break;
		}
		waitq_block(&w, deadline);
	}
	waitq_finish(&wq, &w);
	return r;
}

static long do_nanosleep(int clk, bool abstime, uint64_t ureq, uint64_t urem)
{
	uint64_t req, now, deadline;
	int r = ts_from_user(ureq, &req);

	if (r)
		return r;
	uint64_t probe;

	if (clk == CLOCK_THREAD_CPUTIME_ID || clock_read(clk, &probe))
		return -EINVAL;
	/* no nsleep for the raw/coarse clocks (as Linux) nor, here, CPU-time clocks */
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
	    clk != CLOCK_TAI)
		return -EOPNOTSUPP;
	now = time_ns();
	if (abstime) {
		uint64_t cur;

		clock_read(clk, &cur);
		deadline = req > cur ? now + (req - cur) : now;
	} else {
		deadline = now + req;
	}
	if (deadline < now)
		deadline = UINT64_MAX / 2;
	long ret = sleep_until(deadline);

	if (ret && !abstime && urem) {
		uint64_t t = time_ns(), left = deadline > t ? deadline - t : 0;
		struct __kernel_timespec rem = ns_to_ts(left);

		if (ksvc_copy_to_user(uptr(urem), &rem, sizeof(rem)))
			return -EFAULT;
	}
	return ret;
}

static long sys_nanosleep(SYSARGS)
{
	return do_nanosleep(CLOCK_MONOTONIC, false, a0, a1);
}
SYSCALL(__NR_nanosleep, sys_nanosleep);

static long sys_clock_nanosleep(SYSARGS)
{
	if (a1 & ~(uint64_t)TIMER_ABSTIME)
		return -EINVAL;
	return do_nanosleep((int)a0, (a1 & TIMER_ABSTIME) != 0, a2, a3);
}
SYSCALL(__NR_clock_nanosleep, sys_clock_nanosleep);

/* ---- times, getrusage ---- */

static long sys_times(SYSARGS)
{
	struct proc *p = current_proc();
	uint64_t now = time_ns();

	if (a0) {
		struct tms t;

		uint64_t u, s;

		proc_cputime_split(p, &u, &s);
		memset(&t, 0, sizeof(t));
		t.tms_utime = (long)(u / (NSEC_PER_SEC / USER_HZ));
		t.tms_stime = (long)(s / (NSEC_PER_SEC / USER_HZ));
		t.tms_cutime = (long)(p->cutime_ns / (NSEC_PER_SEC / USER_HZ));
		t.tms_cstime = (long)(p->cstime_ns / (NSEC_PER_SEC / USER_HZ));
		if (ksvc_copy_to_user(uptr(a0), &t, sizeof(t)))
			return -EFAULT;
	}
	return (long)(now / (NSEC_PER_SEC / USER_HZ)); /* clock ticks since boot */
}
SYSCALL(__NR_times, sys_times);

static void ns_to_tv(uint64_t ns, struct __kernel_old_timeval *tv)
{
	tv->tv_sec = (long)(ns / NSEC_PER_SEC);
	tv->tv_usec = (long)(ns % NSEC_PER_SEC / 1000);
}

static long sys_getrusage(SYSARGS)
{
	struct proc *p = current_proc();
	struct uthread *ut = current_uthread();
	struct rusage ru;
	int who = (int)a0;
	uint64_t u, s;

	memset(&ru, 0, sizeof(ru));
	if (who == RUSAGE_SELF) {
		struct list_node *n;
		unsigned long f = spin_lock_irqsave(&p->lock);

		ru.ru_minflt = (long)p->min_flt;
		ru.ru_majflt = (long)p->maj_flt;
		list_for_each(n, &p->threads) {
			struct uthread *t = list_entry(n, struct uthread, thread_node);

			ru.ru_minflt += (long)t->min_flt;
			ru.ru_majflt += (long)t->maj_flt;
			ru.ru_nvcsw += (long)t->task.nvcsw;
			ru.ru_nivcsw += (long)t->task.nivcsw;
		}
		spin_unlock_irqrestore(&p->lock, f);
		proc_cputime_split(p, &u, &s);
		ns_to_tv(u, &ru.ru_utime);
		ns_to_tv(s, &ru.ru_stime);
	} else if (who == RUSAGE_THREAD) {
		task_cputime_split(&ut->task, &u, &s);
		ns_to_tv(u, &ru.ru_utime);
		ns_to_tv(s, &ru.ru_stime);
		ru.ru_minflt = (long)ut->min_flt;
		ru.ru_majflt = (long)ut->maj_flt;
		ru.ru_nvcsw = (long)ut->task.nvcsw;
		ru.ru_nivcsw = (long)ut->task.nivcsw;
	} else if (who == RUSAGE_CHILDREN) {
		ns_to_tv(p->cutime_ns, &ru.ru_utime);
		ns_to_tv(p->cstime_ns, &ru.ru_stime);
		ru.ru_minflt = (long)p->cmin_flt;
		ru.ru_majflt = (long)p->cmaj_flt;
	} else {
		return -EINVAL;
	}
	return ksvc_copy_to_user(uptr(a1), &ru, sizeof(ru)) ? -EFAULT : 0;
}
SYSCALL(__NR_getrusage, sys_getrusage);
