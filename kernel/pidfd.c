/*
 * pidfd.c - process file descriptors, as Linux 6.1's kernel/pid.c and kernel/fork.c make them.
 *
 * pidfd_open(pid, flags): "[pidfd]", O_RDWR, close-on-exec; flags other than PIDFD_NONBLOCK
 * (O_NONBLOCK, which the file keeps: F_GETFL shows it, waitid(P_PIDFD) takes it as WNOHANG and
 * answers EAGAIN instead of 0) or pid <= 0 EINVAL; a process (zombies too, until reaped) by its
 * id, a thread that is not its group's leader EINVAL, nothing by that id ESRCH.  The file holds
 * a reference on the struct proc (its memory, not its resources), so it names that process
 * for good: poll gives POLLIN | POLLRDNORM once the whole group has exited, and wakes its
 * pollers then; fdinfo's "Pid:" is its id until it is reaped, then -1.
 * clone(CLONE_PIDFD) makes one too (proc.c).  pidfd_send_signal is in sys_signal.c,
 * waitid(P_PIDFD) in proc.c.
 */
#include <asm/poll.h>
#include <linux/fcntl.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/syscall.h>

static void pidfd_get(void *priv)
{
	proc_get(priv);
}

static void pidfd_release(void *priv)
{
	proc_put(priv);
}

static size_t pidfd_fdinfo(void *priv, char *buf, size_t size)
{
	const struct proc *p = priv;
	int nr = READ_ONCE(p->reaped) ? -1 : p->tgid;

	return (size_t)ksnprintf(buf, size, "Pid:\t%d\nNSpid:\t%d\n", nr, nr);
}

static unsigned int pidfd_poll(void *priv, struct ksvc_poll *pt)
{
	struct proc *p = priv;

	ksvc_poll_wait(pt, &p->pidfd_wait);
	return READ_ONCE(p->exited) ? POLLIN | POLLRDNORM : 0;
}

static const struct ksvc_file_ops pidfd_fops = {
	.name = "[pidfd]",
	.get = pidfd_get,
	.release = pidfd_release,
	.poll = pidfd_poll,
	.show_fdinfo = pidfd_fdinfo,
};

void pidfd_notify_exit_locked(struct proc *p)
{
	spin_assert_held(&proc_tree_lock);
	waitq_wake_all(&p->pidfd_wait);
}

int pidfd_reserve(struct ksvc_fd_resv *r)
{
	return ksvc_fd_reserve(&pidfd_fops, true, r);
}

void pidfd_commit(struct ksvc_fd_resv *r, struct proc *p)
{
	(void)ksvc_fd_commit(r, p); /* on its rare -EMFILE, p's reference goes as by a close */
}

static long sys_pidfd_open(uint64_t upid, uint64_t uflags, uint64_t a2, uint64_t a3, uint64_t a4,
			   uint64_t a5)
{
	int pid = (int)upid;
	uint32_t flags = (uint32_t)uflags;
	struct proc *p = NULL;
	long r;

	if ((flags & ~(uint32_t)O_NONBLOCK) || pid <= 0)
		return -EINVAL;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	/* every process not yet reaped (zombies too) */
	for (struct proc *q = proc_first_locked(); q; q = proc_next_locked(q)) {
		if (q->tgid == pid && !q->reaped) {
			p = q;
			break;
		}
	}
	if (p)
		proc_get(p);
	bool thread = !p && proc_find_thread_locked(pid);

	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (!p)
		return thread ? -EINVAL : -ESRCH;
	r = ksvc_fd_install_flags(&pidfd_fops, p, true, flags & O_NONBLOCK);
	if (r < 0)
		proc_put(p);
	return r;
}
SYSCALL(__NR_pidfd_open, sys_pidfd_open);

int pidfd_proc_get(int fd, struct proc **p, bool *nonblock)
{
	void *priv;
	unsigned int fflags = 0;

	if (ksvc_fd_get_flags(fd, &pidfd_fops, &priv, &fflags))
		return -EBADF;
	*p = priv;
	if (nonblock)
		*nonblock = (fflags & O_NONBLOCK) != 0;
	return 0;
}

int ksvc_pidfd_pid(int fd)
{
	struct proc *p;
	int pid;

	if (pidfd_proc_get(fd, &p, NULL))
		return -EBADF;
	pid = p->tgid;
	proc_put(p);
	return pid;
}
