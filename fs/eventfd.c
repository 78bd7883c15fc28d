/*
 * eventfd.c - eventfd2(2): a 64-bit counter behind a file descriptor, as Linux's fs/eventfd.c.
 *
 * read(2) of 8 bytes or more takes the whole count (EFD_SEMAPHORE: 1 of it) and leaves 0 (or
 * count - 1), blocking while the count is 0 (EAGAIN with EFD_NONBLOCK); write(2) of 8 bytes
 * adds a value, blocking while that would pass 0xfffffffffffffffe (EAGAIN with EFD_NONBLOCK).
 * Fewer than 8 bytes, or writing 0xffffffffffffffff, is EINVAL.  Poll: POLLIN while the count
 * is above 0, POLLOUT while one more can be added.  Blocking waits end with -ERESTARTSYS on a
 * pending signal.  perf record uses one to wake its poll loop.
 *
 * Locking: ev->lock (IRQ-safe) covers the count; readers and writers sleep on ev->wq after
 * waitq_prepare, so no wakeup is lost.
 *
 * ABI: eventfd2(initval, flags) with EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE, else EINVAL;
 * the fd is O_RDWR for F_GETFL; lseek succeeds and changes nothing (noop_llseek).
 */
#include <stdatomic.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/spinlock.h>
#include <kern/syscall.h>
#include <asm-generic/poll.h>
#include <linux/fcntl.h>
#include "fs_internal.h"

#define EFD_SEMAPHORE 1
#define EFD_MAX UINT64_MAX

struct eventfd {
	struct spinlock lock;
	uint64_t count;
	bool semaphore;
	struct wait_queue wq;
};

/* Wait until ready(ev): 0, or -ERESTARTSYS on a signal. */
static int efd_wait(struct eventfd *ev, bool (*ready)(struct eventfd *, uint64_t), uint64_t arg)
{
	struct waiter w = { 0 };
	int err = 0;

	for (;;) {
		waitq_prepare(&ev->wq, &w);
		unsigned long f = spin_lock_irqsave(&ev->lock);
		bool ok = ready(ev, arg);

		spin_unlock_irqrestore(&ev->lock, f);
		if (ok)
			break;
		if (signal_pending(current_task())) {
			err = -ERESTARTSYS;
			break;
		}
		waitq_block(&w, 0);
	}
	waitq_finish(&ev->wq, &w);
	return err;
}

static bool readable(struct eventfd *ev, uint64_t unused)
{
	(void)unused;
	return ev->count > 0;
}

static bool room_for(struct eventfd *ev, uint64_t v)
{
	return EFD_MAX - ev->count > v;
}

static long efd_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct eventfd *ev = f->priv;
	uint64_t v;

	(void)pos;
	if (n < sizeof(v))
		return -EINVAL;
	for (;;) {
		unsigned long fl = spin_lock_irqsave(&ev->lock);

		if (ev->count) {
			v = ev->semaphore ? 1 : ev->count;
			ev->count -= v;
			spin_unlock_irqrestore(&ev->lock, fl);
			break;
		}
		spin_unlock_irqrestore(&ev->lock, fl);
		if (atomic_load(&f->flags) & O_NONBLOCK)
			return -EAGAIN;
		int err = efd_wait(ev, readable, 0);

		if (err)
			return err;
	}
	waitq_wake_all(&ev->wq);
	/* Linux takes the count before copying out: a bad buffer loses it too */
	return ksvc_copy_to_user(ubuf, &v, sizeof(v)) ? -EFAULT : (long)sizeof(v);
}

static long efd_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	struct eventfd *ev = f->priv;
	uint64_t v;

	(void)pos;
	if (n < sizeof(v))
		return -EINVAL;
	if (ksvc_copy_from_user(&v, ubuf, sizeof(v)))
		return -EFAULT;
	if (v == EFD_MAX)
		return -EINVAL;
	for (;;) {
		unsigned long fl = spin_lock_irqsave(&ev->lock);

		if (room_for(ev, v)) {
			ev->count += v;
			spin_unlock_irqrestore(&ev->lock, fl);
			break;
		}
		spin_unlock_irqrestore(&ev->lock, fl);
		if (atomic_load(&f->flags) & O_NONBLOCK)
			return -EAGAIN;
		int err = efd_wait(ev, room_for, v);

		if (err)
			return err;
	}
	waitq_wake_all(&ev->wq);
	return sizeof(v);
}

static unsigned int efd_poll(struct file *f, struct ksvc_poll *pt)
{
	struct eventfd *ev = f->priv;
	unsigned int mask = 0;

	ksvc_poll_wait(pt, &ev->wq);
	unsigned long fl = spin_lock_irqsave(&ev->lock);
	uint64_t c = ev->count;

	spin_unlock_irqrestore(&ev->lock, fl);
	if (c > 0)
		mask |= POLLIN | POLLRDNORM;
	if (c == EFD_MAX)
		mask |= POLLERR;
	if (EFD_MAX - 1 > c)
		mask |= POLLOUT | POLLWRNORM;
	return mask;
}

/* Linux's noop_llseek: the position stays where it is (0) */
static int64_t efd_llseek(struct file *f, int64_t off, int whence)
{
	(void)off;
	(void)whence;
	return (int64_t)f->pos;
}

static void efd_release(struct file *f)
{
	kfree(f->priv);
}

static const struct file_ops eventfd_fops = {
	.read = efd_read,
	.write = efd_write,
	.poll = efd_poll,
	.llseek = efd_llseek,
	.release = efd_release,
	.anon_name = "[eventfd]",
};

static long sys_eventfd2(uint64_t initval, uint64_t flags)
{
	struct eventfd *ev;
	struct file *f;
	int fd;

	if (flags & ~(uint64_t)(O_CLOEXEC | O_NONBLOCK | EFD_SEMAPHORE))
		return -EINVAL;
	ev = kmalloc(sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	spin_init(&ev->lock);
	waitq_init(&ev->wq);
	ev->count = (uint32_t)initval; /* the syscall takes an unsigned int */
	ev->semaphore = flags & EFD_SEMAPHORE;
	f = file_alloc(&eventfd_fops, NULL, O_RDWR | (flags & O_NONBLOCK), ev);
	if (!f) {
		kfree(ev);
		return -ENOMEM;
	}
	fd = fd_install(f, flags & O_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}
SYSCALL(__NR_eventfd2, sys_eventfd2);
