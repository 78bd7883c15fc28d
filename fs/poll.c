/*
 * poll.c - waiting for several descriptors at once: the poll table (struct ksvc_poll, which
 * file types and anon files fill through ksvc_poll_wait), ppoll and pselect6.
 *
 * What it does: Linux's do_poll / do_select loop: one pass asks every file for its mask,
 * registering a waiter on each wait queue it names (first pass only); with nothing ready the
 * thread sleeps until a queue wakes it, the timeout passes, or a poll interval a file asked
 * for (the console, which has no receive interrupt) passes; then it re-arms its waiters and
 * polls again.  A file without a poll operation is always ready for reading and writing
 * (regular files, /dev/null).  With nothing ready and a signal pending the call returns
 * -ERESTARTNOHAND (kern/signal_proc.h).  The sigmask argument replaces the thread's mask
 * for the call; when interrupted, restore_sigmask makes signal delivery put it back after
 * the handler's frame has recorded it, as Linux's restore_saved_sigmask_unless().
 * Both write the time left back into the timeout, as Linux does (errors there are ignored).
 *
 * What it does not do: poll(2)/select(2) (arm64 has only ppoll and pselect6).  epoll (level-
 * triggered, on the same loop) is at the end of this file.
 *
 * ABI: struct pollfd {int fd; short events, revents}; POLL* from <asm-generic/poll.h>;
 * struct __kernel_timespec; fd_set as an array of unsigned long bits; pselect6's sixth
 * argument points at {const sigset_t *ss; size_t ss_len}; sigset size must be 8.
 * ppoll: nfds above RLIMIT_NOFILE is EINVAL; negative fds are skipped (revents 0), closed
 * ones give POLLNVAL.  pselect6: negative n is EINVAL, n is clamped to the table size, a
 * closed fd in a set is EBADF.
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <asm-generic/poll.h>
#include <linux/time_types.h>
#include "fs_internal.h"

#define POLLIN_SET (POLLRDNORM | POLLRDBAND | POLLIN | POLLHUP | POLLERR)
#define POLLOUT_SET (POLLWRBAND | POLLWRNORM | POLLOUT | POLLERR)
#define POLLEX_SET (POLLPRI)
#define SIG_UNBLOCKABLE_BITS ((1ull << 8) | (1ull << 18)) /* SIGKILL, SIGSTOP */
#define NSEC 1000000000ull
#define CHUNK_ENTRIES 60

struct pollfd_k {
	int fd;
	short events, revents;
};
_Static_assert(sizeof(struct pollfd_k) == 8, "struct pollfd");

struct poll_entry {
	struct waiter w;
	struct wait_queue *wq;
	struct file *file; /* a reference: keeps wq (inside the file's object) alive */
};

struct poll_chunk {
	struct poll_chunk *next;
	int n;
	struct poll_entry e[CHUNK_ENTRIES];
};

struct ksvc_poll {
	bool queue; /* register waiters (first pass of a call that may sleep) */
	bool nomem; /* a registration failed: fall back to polling every interval */
	uint64_t interval_ns; /* re-poll after this long even without a wakeup (0: never) */
	struct file *cur; /* the file being polled, for the entries it registers */
	struct poll_chunk *chunks;
	struct wait_queue self; /* always registered: the waiter to block on */
	struct poll_entry self_entry;
};

void ksvc_poll_wait(struct ksvc_poll *pt, struct wait_queue *wq)
{
	struct poll_chunk *c;

	if (!pt || !pt->queue)
		return;
	c = pt->chunks;
	if (!c || c->n == CHUNK_ENTRIES) {
		c = kmalloc(sizeof(*c));
		if (!c) {
			pt->nomem = true;
			return;
		}
		c->next = pt->chunks;
		pt->chunks = c;
	}
	c->e[c->n].wq = wq;
	c->e[c->n].file = pt->cur;
	if (pt->cur)
		file_get(pt->cur);
	waitq_prepare(wq, &c->e[c->n].w);
	c->n++;
}

void poll_set_interval(struct ksvc_poll *pt, uint64_t ns)
{
	if (pt && (!pt->interval_ns || ns < pt->interval_ns))
		pt->interval_ns = ns;
}

static void poll_table_init(struct ksvc_poll *pt)
{
	memset(pt, 0, sizeof(*pt));
	waitq_init(&pt->self);
	waitq_prepare(&pt->self, &pt->self_entry.w);
	pt->self_entry.wq = &pt->self;
	pt->queue = true;
}

/* Re-arm every waiter before the next pass (state SLEEPING, woken cleared). */
static void poll_table_rearm(struct ksvc_poll *pt)
{
	waitq_prepare(&pt->self, &pt->self_entry.w);
	for (struct poll_chunk *c = pt->chunks; c; c = c->next)
		for (int i = 0; i < c->n; i++)
			waitq_prepare(c->e[i].wq, &c->e[i].w);
}

static void poll_table_free(struct ksvc_poll *pt)
{
	struct poll_chunk *c, *next;

	for (c = pt->chunks; c; c = c->next)
		for (int i = 0; i < c->n; i++)
			waitq_finish(c->e[i].wq, &c->e[i].w);
	waitq_finish(&pt->self, &pt->self_entry.w);
	/* Off every queue and RUNNABLE again: now the files may go (release may sleep). */
	for (c = pt->chunks; c; c = next) {
		next = c->next;
		for (int i = 0; i < c->n; i++)
			file_put(c->e[i].file);
		kfree(c);
	}
}

static unsigned int file_poll(struct file *f, struct ksvc_poll *pt)
{
	unsigned int m = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

	if (f->ops && f->ops->poll) {
		pt->cur = f;
		m = f->ops->poll(f, pt);
		pt->cur = NULL;
	}
	return m;
}

/* One pass over ppoll's array: how many entries have revents. */
static int poll_pass(struct pollfd_k *fds, unsigned int n, struct ksvc_poll *pt)
{
	int count = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct file *f;

		fds[i].revents = 0;
		if (fds[i].fd < 0)
			continue;
		if (fd_get(fds[i].fd, &f)) {
			fds[i].revents = POLLNVAL;
		} else {
			unsigned int m = file_poll(f, pt);

			file_put(f);
			fds[i].revents = (short)(m & ((unsigned short)fds[i].events | POLLERR | POLLHUP));
		}
		if (fds[i].revents)
			count++;
	}
	return count;
}

/* select's sets: in, out, ex bit arrays (words) and their results. */
struct select_sets {
	unsigned int n, words;
	uint64_t *in[3], *out[3]; /* NULL when the caller passed no set */
};

static int select_pass(struct select_sets *s, struct ksvc_poll *pt)
{
	static const unsigned int want[3] = { POLLIN_SET, POLLOUT_SET, POLLEX_SET };
	int count = 0;

	for (unsigned int fd = 0; fd < s->n; fd++) {
		uint64_t bit = 1ull << (fd % 64);
		unsigned int w = fd / 64, m;
		bool any = false;
		struct file *f;

		for (int k = 0; k < 3; k++)
			any |= s->in[k] && (s->in[k][w] & bit);
		if (!any)
			continue;
		if (fd_get((int)fd, &f))
			return -EBADF;
		m = file_poll(f, pt);
		file_put(f);
		for (int k = 0; k < 3; k++) {
			if (s->in[k] && (s->in[k][w] & bit) && (m & want[k]) && !(s->out[k][w] & bit)) {
				s->out[k][w] |= bit;
				count++;
			}
		}
	}
	return count;
}

/*
 * The loop both calls share.  deadline 0: wait forever; UINT64_MAX: do not wait.
 * pass(arg, pt) returns the ready count or -errno.
 */
static int poll_loop(int (*pass)(void *arg, struct ksvc_poll *pt), void *arg, uint64_t deadline)
{
	struct ksvc_poll pt;
	bool timed_out = deadline == UINT64_MAX;
	int count;

	poll_table_init(&pt);
	if (timed_out)
		pt.queue = false;
	for (;;) {
		count = pass(arg, &pt);
		pt.queue = false;
		if (count || timed_out)
			break;
		if (signal_pending(current_task())) {
			count = -ERESTARTNOHAND;
			break;
		}
		uint64_t until = deadline;

		if (pt.nomem && !pt.interval_ns)
			pt.interval_ns = 10000000;
		if (pt.interval_ns) {
			uint64_t soon = time_ns() + pt.interval_ns;

			if (!until || soon < until)
				until = soon;
		}
		waitq_block(&pt.self_entry.w, until);
		if (deadline && time_ns() >= deadline)
			timed_out = true;
		poll_table_rearm(&pt);
	}
	poll_table_free(&pt);
	return count;
}

/* A user timeout into a deadline (0: none, UINT64_MAX: zero timeout). */
static int timeout_get(uint64_t uts, uint64_t *deadline, struct __kernel_timespec *ts)
{
	*deadline = 0;
	if (!uts)
		return 0;
	if (ksvc_copy_from_user(ts, (const void *)uts, sizeof(*ts)))
		return -EFAULT;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= (long long)NSEC)
		return -EINVAL;
	if (!ts->tv_sec && !ts->tv_nsec) {
		*deadline = UINT64_MAX;
		return 0;
	}
	uint64_t ns = (uint64_t)ts->tv_sec > (UINT64_MAX / 4) / NSEC
			      ? UINT64_MAX / 4
			      : (uint64_t)ts->tv_sec * NSEC + (uint64_t)ts->tv_nsec;

	*deadline = time_ns() + ns;
	return 0;
}

/* Linux writes the time left back (poll_select_finish); a fault there is ignored. */
static void timeout_put(uint64_t uts, uint64_t deadline)
{
	struct __kernel_timespec ts = { 0, 0 };
	uint64_t now = time_ns();

	if (!uts || !deadline)
		return;
	if (deadline != UINT64_MAX && deadline > now) {
		ts.tv_sec = (long long)((deadline - now) / NSEC);
		ts.tv_nsec = (long long)((deadline - now) % NSEC);
	}
	(void)ksvc_copy_to_user((void *)uts, &ts, sizeof(ts));
}

/* Install the call's signal mask: 0, -EINVAL, -EFAULT; *swapped when installed. */
static int sigmask_enter(uint64_t uset, uint64_t size, bool *swapped)
{
	struct uthread *ut = current_uthread();
	struct proc *p = current_proc();
	uint64_t set;

	*swapped = false;
	if (!uset)
		return 0;
	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (ksvc_copy_from_user(&set, (const void *)uset, sizeof(set)))
		return -EFAULT;
	if (!ut || !p)
		return 0;
	unsigned long fl = spin_lock_irqsave(&p->sighand->lock);

	ut->saved_sigmask = ut->sigmask;
	ut->sigmask = set & ~SIG_UNBLOCKABLE_BITS;
	spin_unlock_irqrestore(&p->sighand->lock, fl);
	*swapped = true;
	return 0;
}

/* Interrupted: signal delivery restores the mask after the handler frame records it. */
static void sigmask_exit(bool swapped, long ret)
{
	struct uthread *ut = current_uthread();
	struct proc *p = current_proc();

	if (!swapped)
		return;
	unsigned long fl = spin_lock_irqsave(&p->sighand->lock);

	if (ret == -ERESTARTNOHAND)
		ut->restore_sigmask = true;
	else
		ut->sigmask = ut->saved_sigmask;
	spin_unlock_irqrestore(&p->sighand->lock, fl);
}

struct ppoll_args {
	struct pollfd_k *fds;
	unsigned int n;
};

static int ppoll_pass(void *arg, struct ksvc_poll *pt)
{
	struct ppoll_args *a = arg;

	return poll_pass(a->fds, a->n, pt);
}

static long sys_ppoll(uint64_t ufds, uint64_t nfds, uint64_t uts, uint64_t usig,
		      uint64_t sigsize)
{
	struct __kernel_timespec ts;
	struct ppoll_args a;
	uint64_t deadline;
	bool swapped;
	long ret;

	if (nfds > (uint64_t)fd_limit())
		return -EINVAL;
	ret = timeout_get(uts, &deadline, &ts);
	if (ret)
		return ret;
	a.n = (unsigned int)nfds;
	a.fds = kmalloc(nfds ? nfds * sizeof(*a.fds) : 1);
	if (!a.fds)
		return -ENOMEM;
	if (nfds && ksvc_copy_from_user(a.fds, (const void *)ufds, nfds * sizeof(*a.fds))) {
		kfree(a.fds);
		return -EFAULT;
	}
	ret = sigmask_enter(usig, sigsize, &swapped);
	if (ret) {
		kfree(a.fds);
		return ret;
	}
	ret = poll_loop(ppoll_pass, &a, deadline);
	if (ret >= 0 && nfds && ksvc_copy_to_user((void *)ufds, a.fds, nfds * sizeof(*a.fds)))
		ret = -EFAULT;
	sigmask_exit(swapped, ret);
	timeout_put(uts, deadline);
	kfree(a.fds);
	return ret;
}
SYSCALL(__NR_ppoll, sys_ppoll);

static int select_pass_cb(void *arg, struct ksvc_poll *pt)
{
	return select_pass(arg, pt);
}

static long sys_pselect6(uint64_t n_, uint64_t uin, uint64_t uout, uint64_t uex, uint64_t uts,
			 uint64_t usig)
{
	const uint64_t uset[3] = { uin, uout, uex };
	struct __kernel_timespec ts;
	struct select_sets s = { 0 };
	struct {
		uint64_t ss, ss_len;
	} sig = { 0, 0 };
	uint64_t deadline, *mem;
	size_t bytes;
	bool swapped = false;
	long ret;

	if ((int)n_ < 0)
		return -EINVAL;
	s.n = MIN((unsigned int)(int)n_, (unsigned int)FILES_MAX);
	s.words = (s.n + 63) / 64;
	bytes = s.words * sizeof(uint64_t);
	ret = timeout_get(uts, &deadline, &ts);
	if (ret)
		return ret;
	if (usig && ksvc_copy_from_user(&sig, (const void *)usig, sizeof(sig)))
		return -EFAULT;
	mem = kmalloc(6 * bytes + 8);
	if (!mem)
		return -ENOMEM;
	for (int k = 0; k < 3; k++) {
		if (!uset[k])
			continue;
		s.in[k] = mem + 2 * k * s.words;
		s.out[k] = s.in[k] + s.words;
		if (bytes && ksvc_copy_from_user(s.in[k], (const void *)uset[k], bytes)) {
			kfree(mem);
			return -EFAULT;
		}
	}
	ret = sigmask_enter(sig.ss, sig.ss_len, &swapped);
	if (ret) {
		kfree(mem);
		return ret;
	}
	ret = poll_loop(select_pass_cb, &s, deadline);
	for (int k = 0; k < 3 && ret >= 0; k++)
		if (s.in[k] && bytes && ksvc_copy_to_user((void *)uset[k], s.out[k], bytes))
			ret = -EFAULT;
	sigmask_exit(swapped, ret);
	timeout_put(uts, deadline);
	kfree(mem);
	return ret;
}
SYSCALL(__NR_pselect6, sys_pselect6);

/*
 * ---- epoll: epoll_create1, epoll_ctl, epoll_pwait ----
 *
 * An interest list of (fd, file, events, data) polled with the same loop as ppoll, so it is
 * level-triggered: EPOLLET is accepted and reported like a level (a spurious extra report is
 * all a caller can see); EPOLLONESHOT disarms an entry once it reported, until EPOLL_CTL_MOD.
 * An entry whose fd was closed (or now names another file) is skipped, as Linux drops it at
 * close.  Errnos follow Linux 6.1: EINVAL (flags, op, maxevents, epfd not an epoll or fd ==
 * epfd), EBADF, EPERM (a file without poll: regular files), EEXIST, ENOENT, EFAULT.
 * Not here: nested epoll readiness (an epoll file polls as always ready), EPOLLEXCLUSIVE
 * semantics, epoll_pwait2.
 */
#include <linux/eventpoll.h>

struct ep_item {
	int fd;
	const struct file *file; /* identity only: never dereferenced */
	uint32_t events;
	uint64_t data;
};

struct eventpoll {
	_Atomic int refs;
	struct spinlock lock;
	struct ep_item *items; /* (lock) */
	unsigned int n, cap;   /* (lock) */
};

static void ep_get(void *priv)
{
	atomic_fetch_add(&((struct eventpoll *)priv)->refs, 1);
}

static void ep_release(void *priv)
{
	struct eventpoll *ep = priv;

	if (atomic_fetch_sub(&ep->refs, 1) != 1)
		return;
	kfree(ep->items);
	kfree(ep);
}

static const struct ksvc_file_ops ep_fops = {
	.name = "[eventpoll]",
	.get = ep_get,
	.release = ep_release,
};

static long sys_epoll_create1(uint64_t flags)
{
	struct eventpoll *ep;
	int fd;

	if (flags & ~(uint64_t)EPOLL_CLOEXEC)
		return -EINVAL;
	ep = kmalloc(sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	memset(ep, 0, sizeof(*ep));
	atomic_store(&ep->refs, 1);
	spin_init(&ep->lock);
	fd = ksvc_fd_install(&ep_fops, ep, flags & EPOLL_CLOEXEC);
	if (fd < 0)
		kfree(ep);
	return fd;
}
SYSCALL(__NR_epoll_create1, sys_epoll_create1);

static int ep_find(struct eventpoll *ep, int fd, const struct file *f)
{
	for (unsigned int i = 0; i < ep->n; i++)
		if (ep->items[i].fd == fd && ep->items[i].file == f)
			return (int)i;
	return -1;
}

static int ep_get_fd(int epfd, struct eventpoll **out)
{
	void *priv;
	int err = ksvc_fd_get(epfd, &ep_fops, &priv);

	if (err)
		return err == -EINVAL ? -EINVAL : -EBADF;
	*out = priv;
	return 0;
}

static long sys_epoll_ctl(uint64_t epfd, uint64_t op, uint64_t fd_, uint64_t uev)
{
	struct epoll_event ev = { 0 };
	struct eventpoll *ep;
	struct file *f;
	int fd = (int)fd_, err, i;

	if (op != EPOLL_CTL_DEL && ksvc_copy_from_user(&ev, (const void *)uev, sizeof(ev)))
		return -EFAULT;
	if (fd_get((int)epfd, &f))
		return -EBADF;
	file_put(f);
	if (fd_get(fd, &f))
		return -EBADF;
	if (!f->ops || !f->ops->poll) {
		file_put(f);
		return -EPERM;
	}
	err = ep_get_fd((int)epfd, &ep);
	if (err || fd == (int)epfd) {
		if (!err)
			ep_release(ep);
		file_put(f);
		return -EINVAL;
	}
	unsigned long fl = spin_lock_irqsave(&ep->lock);

	i = ep_find(ep, fd, f);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (i >= 0) {
			err = -EEXIST;
			break;
		}
		if (ep->n == ep->cap) {
			unsigned int cap = ep->cap ? ep->cap * 2 : 8;
			struct ep_item *n = cap <= FILES_MAX ? kmalloc(cap * sizeof(*n)) : NULL;

			if (!n) {
				err = -ENOMEM;
				break;
			}
			if (ep->n)
				memcpy(n, ep->items, ep->n * sizeof(*n));
			kfree(ep->items);
			ep->items = n;
			ep->cap = cap;
		}
		ep->items[ep->n++] = (struct ep_item){ fd, f, ev.events | EPOLLERR | EPOLLHUP, ev.data };
		break;
	case EPOLL_CTL_MOD:
		if (i < 0)
			err = -ENOENT;
		else
			ep->items[i].events = ev.events | EPOLLERR | EPOLLHUP, ep->items[i].data = ev.data;
		break;
	case EPOLL_CTL_DEL:
		if (i < 0)
			err = -ENOENT;
		else
			ep->items[i] = ep->items[--ep->n];
		break;
	default:
		err = -EINVAL;
	}
	spin_unlock_irqrestore(&ep->lock, fl);
	ep_release(ep);
	file_put(f);
	return err;
}
SYSCALL(__NR_epoll_ctl, sys_epoll_ctl);

struct ep_wait {
	struct eventpoll *ep;
	struct ep_item *snap; /* this pass's copy of the interest list */
	unsigned int snap_cap, n, max;
	struct epoll_event *out;
};

static int ep_pass(void *arg, struct ksvc_poll *pt)
{
	struct ep_wait *w = arg;
	struct eventpoll *ep = w->ep;
	int count = 0;

	unsigned long fl;

	for (;;) { /* copy the list, growing the copy (outside the lock) when it got longer */
		unsigned int need;

		fl = spin_lock_irqsave(&ep->lock);
		need = ep->n;
		if (need <= w->snap_cap) {
			w->n = need;
			if (need)
				memcpy(w->snap, ep->items, need * sizeof(*w->snap));
			spin_unlock_irqrestore(&ep->lock, fl);
			break;
		}
		spin_unlock_irqrestore(&ep->lock, fl);
		kfree(w->snap);
		w->snap_cap = 0;
		w->snap = kmalloc(need * sizeof(*w->snap));
		if (!w->snap)
			return -ENOMEM;
		w->snap_cap = need;
	}
	for (unsigned int i = 0; i < w->n && (unsigned int)count < w->max; i++) {
		struct ep_item *it = &w->snap[i];
		struct file *f;
		unsigned int m;

		if (!(it->events & ~(EPOLLERR | EPOLLHUP | EPOLLET | EPOLLONESHOT)) &&
		    (it->events & EPOLLONESHOT))
			continue;
		if (fd_get(it->fd, &f))
			continue; /* closed: gone from the set */
		if (f != it->file) {
			file_put(f);
			continue;
		}
		m = file_poll(f, pt) & it->events;
		file_put(f);
		if (!m)
			continue;
		w->out[count].events = m;
		w->out[count].data = it->data;
		count++;
		if (it->events & EPOLLONESHOT) {
			fl = spin_lock_irqsave(&ep->lock);
			int j = ep_find(ep, it->fd, it->file);

			if (j >= 0)
				ep->items[j].events &= EPOLLONESHOT; /* disarmed until EPOLL_CTL_MOD */
			spin_unlock_irqrestore(&ep->lock, fl);
		}
	}
	return count;
}

static long sys_epoll_pwait(uint64_t epfd, uint64_t uevents, uint64_t maxevents, uint64_t timeout,
			    uint64_t usig, uint64_t sigsize)
{
	struct ep_wait w = { 0 };
	uint64_t deadline = 0;
	bool swapped;
	long ret;
	int ms = (int)timeout;

	if ((int)maxevents <= 0 || (int)maxevents > INT32_MAX / (int)sizeof(struct epoll_event))
		return -EINVAL;
	ret = ep_get_fd((int)epfd, &w.ep);
	if (ret)
		return ret;
	w.max = MIN((unsigned int)(int)maxevents, (unsigned int)FILES_MAX);
	w.out = kmalloc(w.max * sizeof(*w.out));
	ret = -ENOMEM;
	if (!w.out)
		goto out;
	if (ms == 0)
		deadline = UINT64_MAX;
	else if (ms > 0)
		deadline = time_ns() + (uint64_t)ms * 1000000;
	ret = sigmask_enter(usig, sigsize, &swapped);
	if (ret)
		goto out;
	ret = poll_loop(ep_pass, &w, deadline);
	if (ret == -ERESTARTNOHAND)
		ret = -EINTR; /* epoll_wait is never restarted (Linux) */
	if (ret > 0 && ksvc_copy_to_user((void *)uevents, w.out, (size_t)ret * sizeof(*w.out)))
		ret = -EFAULT;
	sigmask_exit(swapped, ret);
out:
	kfree(w.snap);
	kfree(w.out);
	ep_release(w.ep);
	return ret;
}
SYSCALL(__NR_epoll_pwait, sys_epoll_pwait);
