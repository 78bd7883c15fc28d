/*
 * signalfd.c - signalfd4(2): signals read as struct signalfd_siginfo records from a file, as
 * Linux's fs/signalfd.c.  perf daemon blocks SIGCHLD and polls a signalfd for its sessions'
 * exits.
 *
 * What it does: read(2) dequeues the reading thread's pending signals in the fd's mask (its
 * own queue first, then the process's, lowest number first, as rt_sigtimedwait), one 128-byte
 * record each, as many as fit; it blocks while none is pending (EAGAIN with SFD_NONBLOCK or
 * O_NONBLOCK; -ERESTARTSYS when another signal interrupts).  Poll is POLLIN while one is
 * pending for the polling thread.  signalfd4 on an existing signalfd replaces its mask.
 * SIGKILL and SIGSTOP are silently dropped from a mask, as on Linux.
 *
 * Locking: the mask is atomic; pending sets are read and taken under sighand->lock.  Every
 * queued signal wakes signalfd_wq (signal.c calls signalfd_notify after dropping its locks),
 * and readers and pollers re-check their own condition, so no wakeup is lost.
 *
 * ABI: struct signalfd_siginfo from <linux/signalfd.h> (128 bytes), filled per siginfo
 * layout as Linux's signalfd_copyinfo; flags SFD_CLOEXEC | SFD_NONBLOCK (= O_CLOEXEC |
 * O_NONBLOCK), else EINVAL; sizemask must be 8 (EINVAL); a fd that is not a signalfd: EINVAL.
 */
#include <stdatomic.h>
#include <asm-generic/poll.h>
#include <asm/siginfo.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <fs/vfs.h>
#include <linux/fcntl.h>
#include <linux/signalfd.h>
#include "signal_internal.h"

_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd_siginfo");

struct signalfd {
	_Atomic uint64_t mask; /* bit (sig - 1) */
};

static struct wait_queue signalfd_wq = { SPINLOCK_INIT, LIST_INIT(signalfd_wq.waiters) };

void signalfd_notify(void)
{
	waitq_wake_all(&signalfd_wq);
}

/* The signals of mask pending for the current thread. */
static uint64_t sfd_pending(uint64_t mask)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;
	uint64_t set;

	if (!ut || !sh)
		return 0;
	unsigned long f = spin_lock_irqsave(&sh->lock);

	set = (ut->sigpending_set | sh->shared_pending_set) & mask;
	spin_unlock_irqrestore(&sh->lock, f);
	return set;
}

static void sfd_fill(struct signalfd_siginfo *o, const struct ksiginfo *k)
{
	memset(o, 0, sizeof(*o));
	o->ssi_signo = (uint32_t)k->signo;
	o->ssi_errno = k->errno_;
	o->ssi_code = k->code;
	switch (sig_layout(k->signo, k->code)) {
	case SL_KILL:
		o->ssi_pid = (uint32_t)k->pid;
		o->ssi_uid = k->uid;
		break;
	case SL_TIMER:
		o->ssi_tid = (uint32_t)k->pid; /* the timer id */
		o->ssi_overrun = (uint32_t)k->status;
		o->ssi_ptr = k->value;
		o->ssi_int = (int32_t)k->value;
		break;
	case SL_POLL:
		o->ssi_band = (uint32_t)k->band;
		o->ssi_fd = k->status;
		break;
	case SL_FAULT:
	case SL_FAULT_PERF:
		o->ssi_addr = k->addr;
		break;
	case SL_CHLD:
		o->ssi_pid = (uint32_t)k->pid;
		o->ssi_uid = k->uid;
		o->ssi_status = k->status;
		o->ssi_utime = k->utime / 10000000ull; /* clock_t in USER_HZ (100) */
		o->ssi_stime = k->stime / 10000000ull;
		break;
	case SL_RT:
		o->ssi_pid = (uint32_t)k->pid;
		o->ssi_uid = k->uid;
		o->ssi_ptr = k->value;
		o->ssi_int = (int32_t)k->value;
		break;
	case SL_SYS:
		o->ssi_call_addr = k->addr;
		break;
	}
}

/* Take one signal of mask for the current thread: its number, or 0. */
static int sfd_dequeue(uint64_t mask, struct ksiginfo *info)
{
	struct uthread *ut = current_uthread();
	struct sighand *sh = current_proc()->sighand;
	int sig;

	if (!ut || !sh)
		return 0;
	unsigned long f = spin_lock_irqsave(&sh->lock);

	sig = sig_dequeue_locked(ut, sh, mask, info);
	spin_unlock_irqrestore(&sh->lock, f);
	return sig;
}

static bool sfd_ready(void *ctx, size_t unused)
{
	return sfd_pending(*(const uint64_t *)ctx) != 0;
}

static long sfd_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct signalfd *sfd = f->priv;
	size_t done = 0;

	(void)pos;
	if (n < sizeof(struct signalfd_siginfo))
		return -EINVAL;
	while (done + sizeof(struct signalfd_siginfo) <= n) {
		uint64_t mask = atomic_load(&sfd->mask);
		struct signalfd_siginfo rec;
		struct ksiginfo info;
		int sig = sfd_dequeue(mask, &info);

		if (!sig) {
			if (done)
				break;
			if (atomic_load(&f->flags) & O_NONBLOCK)
				return -EAGAIN;
			int err = fs_wait_event(&signalfd_wq, sfd_ready, &mask, 0);

			if (err)
				return err;
			continue;
		}
		sfd_fill(&rec, &info);
		if (ksvc_copy_to_user((char *)ubuf + done, &rec, sizeof(rec)))
			return done ? (long)done : -EFAULT; /* the signal is lost, as Linux's */
		done += sizeof(rec);
	}
	return (long)done;
}

static unsigned int sfd_poll(struct file *f, struct ksvc_poll *pt)
{
	struct signalfd *sfd = f->priv;

	ksvc_poll_wait(pt, &signalfd_wq);
	return sfd_pending(atomic_load(&sfd->mask)) ? POLLIN | POLLRDNORM : 0;
}

static void sfd_release(struct file *f)
{
	kfree(f->priv);
}

static const struct file_ops signalfd_fops = {
	.read = sfd_read,
	.poll = sfd_poll,
	.release = sfd_release,
	.anon_name = "[signalfd]",
};

static long sys_signalfd4(uint64_t ufd, uint64_t umask, uint64_t sizemask, uint64_t flags)
{
	struct signalfd *sfd;
	struct file *f;
	uint64_t mask;
	int fd = (int)ufd;

	if (flags & ~(uint64_t)(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	if (sizemask != sizeof(uint64_t))
		return -EINVAL;
	if (ksvc_copy_from_user(&mask, (const void *)umask, sizeof(mask)))
		return -EFAULT;
	mask &= ~SIG_UNBLOCKABLE;
	if (fd != -1) {
		f = fd_get_file(fd);
		if (!f)
			return -EBADF;
		if (f->ops != &signalfd_fops) {
			file_put(f);
			return -EINVAL;
		}
		sfd = f->priv;
		atomic_store(&sfd->mask, mask);
		file_put(f);
		signalfd_notify(); /* the new mask may already be ready */
		return fd;
	}
	sfd = kmalloc(sizeof(*sfd));
	if (!sfd)
		return -ENOMEM;
	atomic_store(&sfd->mask, mask);
	f = file_alloc(&signalfd_fops, NULL, O_RDWR | (flags & O_NONBLOCK), sfd);
	if (!f) {
		kfree(sfd);
		return -ENOMEM;
	}
	fd = fd_install(f, flags & O_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}
SYSCALL(__NR_signalfd4, sys_signalfd4);
