/*
 * fdtable.c - per-process descriptor tables and the descriptor syscalls: dup, dup3, fcntl
 * (F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD/SETFD, F_GETFL/SETFL, F_GETPIPE_SZ/SETPIPE_SZ, F_SETOWN,
 * F_SETOWN_EX, F_SETSIG and their getters), close,
 * close_range; and the kernel seam for anonymous objects (ksvc_fd_install / ksvc_fd_get):
 * an anon file wrapping (struct ksvc_file_ops, priv) for bpf maps and programs and perf
 * events, whose poll goes to ksvc_file_ops.poll.
 *
 * O_ASYNC: F_SETFL tells the file (file_ops.fasync); an anon object keeps the registration
 * and signals the owner through ksvc_kill_fasync (perf events do; Linux's send_sigio).
 *
 * Also what /proc/PID/fd (fs/procfs_fd.c) reads of another process's table: its open fds,
 * a file with a reference, and the name readlink shows for a file (file_describe).
 *
 * POSIX record locks (F_GETLK, F_SETLK, F_SETLKW) are posix_lock.c's; every close of a
 * descriptor here drops its table's locks on the file's inode (fd_close_put).
 *
 * What it does not do: open file description locks (F_OFD_*: EINVAL), O_ASYNC on pipes,
 * sockets and ttys (the flag is kept, nothing is signalled).
 *
 * A table is a fixed array of FILES_MAX (1024, RLIMIT_NOFILE's hard ceiling) file pointers
 * and close-on-exec bits under one spinlock; files are put outside it (release may sleep).
 * ABI: fcntl commands and FD_CLOEXEC from <asm-generic/fcntl.h>; errno as Linux 6.1.
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/vm.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm-generic/poll.h>
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <kern/signal.h>
#include <kern/spinlock.h>
#include <linux/close_range.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include "fs_internal.h"

#define RLIMIT_NOFILE_IDX 7 /* RLIMIT_NOFILE in <asm-generic/resource.h> */
#define PIPE_SIZE 65536

/*
 * A descriptor handed out by fd_reserve and not yet committed: the slot is taken (no other
 * open gets it, dup2 onto it is EBUSY) but holds no file (close and every lookup say EBADF),
 * as Linux's get_unused_fd_flags before fd_install.
 */
#define FD_RESERVED ((struct file *)1)

static struct file *slot_file(struct file *f)
{
	return f == FD_RESERVED ? NULL : f;
}

struct files {
	_Atomic int refs;
	struct spinlock lock; /* covers fd[] and cloexec[] */
	struct file *fd[FILES_MAX]; /* a file, NULL (free) or FD_RESERVED */
	uint64_t cloexec[FILES_MAX / 64];
};

static struct files *files_cur(void)
{
	struct proc *p = current_task()->proc;

	return p ? p->files : NULL;
}

/* The descriptor limit of the current process (RLIMIT_NOFILE soft limit, at most 1024). */
int fd_limit(void)
{
	struct proc *p = current_task()->proc;
	uint64_t cur = p ? p->rlim[RLIMIT_NOFILE_IDX].cur : FILES_MAX;

	return cur && cur < FILES_MAX ? (int)cur : FILES_MAX;
}

static void cloexec_set_locked(struct files *fs, int fd, bool on)
{
	spin_assert_held(&fs->lock);
	if (on)
		fs->cloexec[fd / 64] |= 1ull << (fd % 64);
	else
		fs->cloexec[fd / 64] &= ~(1ull << (fd % 64));
}

static bool cloexec_get_locked(struct files *fs, int fd)
{
	spin_assert_held(&fs->lock);
	return fs->cloexec[fd / 64] >> (fd % 64) & 1;
}

struct files *files_new(void)
{
	struct files *fs = kmalloc(sizeof(*fs));
	struct file *con;

	if (!fs)
		return NULL;
	atomic_store(&fs->refs, 1);
	spin_init(&fs->lock);
	con = dev_console_open();
	if (!con) {
		kfree(fs);
		return NULL;
	}
	for (int i = 0; i < 3; i++) {
		file_get(con);
		fs->fd[i] = con;
	}
	file_put(con);
	return fs;
}

struct files *files_dup(struct files *src)
{
	struct files *fs = kmalloc(sizeof(*fs));
	unsigned long fl;

	if (!fs)
		return NULL;
	atomic_store(&fs->refs, 1);
	spin_init(&fs->lock);
	fl = spin_lock_irqsave(&src->lock);
	for (int i = 0; i < FILES_MAX; i++) {
		fs->fd[i] = slot_file(src->fd[i]); /* a reservation stays with its table */
		if (fs->fd[i])
			file_get(fs->fd[i]);
	}
	memcpy(fs->cloexec, src->cloexec, sizeof(fs->cloexec));
	spin_unlock_irqrestore(&src->lock, fl);
	return fs;
}

bool files_shared(struct files *fs)
{
	return atomic_load(&fs->refs) > 1;
}

void files_get(struct files *fs)
{
	atomic_fetch_add(&fs->refs, 1);
}

/* The end of one descriptor of fs: its owner's record locks on the inode go (POSIX), then
 * the file reference. */
static void fd_close_put(struct files *fs, struct file *f)
{
	posix_locks_remove(fs, f->inode);
	file_put(f);
}

void files_put(struct files *fs)
{
	if (!fs || atomic_fetch_sub(&fs->refs, 1) != 1)
		return;
	for (int i = 0; i < FILES_MAX; i++)
		if (slot_file(fs->fd[i]))
			fd_close_put(fs, fs->fd[i]);
	kfree(fs);
}

/* Detach fd (under the lock), returning its file for the caller to put, or NULL. */
static struct file *fd_detach_locked(struct files *fs, int fd)
{
	spin_assert_held(&fs->lock);
	struct file *f = fs->fd[fd];

	if (f == FD_RESERVED)
		return NULL; /* its opener commits or cancels it */
	fs->fd[fd] = NULL;
	cloexec_set_locked(fs, fd, false);
	return f;
}

void files_close_on_exec(struct files *fs)
{
	for (int w = 0; w < FILES_MAX / 64; w++) {
		struct file *closing[64];
		int n = 0;
		unsigned long fl = spin_lock_irqsave(&fs->lock);
		uint64_t bits = fs->cloexec[w];

		for (int b = 0; bits; b++, bits >>= 1) {
			struct file *f = (bits & 1) ? fd_detach_locked(fs, w * 64 + b) : NULL;

			if (f)
				closing[n++] = f;
		}
		spin_unlock_irqrestore(&fs->lock, fl);
		while (n)
			fd_close_put(fs, closing[--n]); /* release may sleep: outside the lock */
	}
}

int fd_get(int fd, struct file **out)
{
	struct files *fs = files_cur();
	struct file *f = NULL;
	unsigned long fl;

	if (!fs || fd < 0 || fd >= FILES_MAX)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	f = slot_file(fs->fd[fd]);
	if (f)
		file_get(f);
	spin_unlock_irqrestore(&fs->lock, fl);
	*out = f;
	return f ? 0 : -EBADF;
}

struct file *fd_get_file(int fd)
{
	struct file *f;

	return fd_get(fd, &f) ? NULL : f;
}

int fd_install_min(struct file *f, int min, bool cloexec)
{
	struct files *fs = files_cur();
	int limit = fd_limit(), fd = -EMFILE;
	unsigned long fl;

	if (!fs)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	for (int i = min; i < limit; i++) {
		if (!fs->fd[i]) {
			fs->fd[i] = f;
			cloexec_set_locked(fs, i, cloexec);
			fd = i;
			break;
		}
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	return fd;
}

/* ---- syscalls ---- */

static long sys_close(uint64_t fd_)
{
	struct files *fs = files_cur();
	int fd = (int)fd_;
	struct file *f = NULL;
	unsigned long fl;

	if (!fs || fd < 0 || fd >= FILES_MAX)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	f = fd_detach_locked(fs, fd);
	spin_unlock_irqrestore(&fs->lock, fl);
	if (!f)
		return -EBADF;
	fd_close_put(fs, f);
	return 0;
}
SYSCALL(__NR_close, sys_close);

/* close_range: CLOSE_RANGE_UNSHARE first gives the process a private copy of a shared table
 * (CLONE_FILES), CLOSE_RANGE_CLOEXEC marks instead of closing. */
static long sys_close_range(uint64_t first, uint64_t last, uint64_t flags)
{
	struct proc *p = current_task()->proc;
	struct files *fs = files_cur();

	if (flags & ~(uint64_t)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))
		return -EINVAL;
	if ((unsigned int)first > (unsigned int)last)
		return -EINVAL;
	if (!fs)
		return 0;
	if ((flags & CLOSE_RANGE_UNSHARE) && atomic_load(&fs->refs) > 1) {
		struct files *copy = files_dup(fs);

		if (!copy)
			return -ENOMEM;
		/* only this thread group's threads read it, each its own, and /proc */
		files_put(proc_files_swap(p, copy));
		fs = copy;
	}
	last = MIN((unsigned int)last, (unsigned int)FILES_MAX - 1);
	for (unsigned int fd = (unsigned int)first; fd <= (unsigned int)last && fd < FILES_MAX; fd++) {
		struct file *f = NULL;
		unsigned long fl = spin_lock_irqsave(&fs->lock);

		if (slot_file(fs->fd[fd])) {
			if (flags & CLOSE_RANGE_CLOEXEC)
				cloexec_set_locked(fs, (int)fd, true);
			else
				f = fd_detach_locked(fs, (int)fd);
		}
		spin_unlock_irqrestore(&fs->lock, fl);
		if (f)
			fd_close_put(fs, f);
	}
	return 0;
}
SYSCALL(__NR_close_range, sys_close_range);

static long sys_dup(uint64_t fd)
{
	struct file *f;
	int err = fd_get((int)fd, &f), nfd;

	if (err)
		return err;
	nfd = fd_install(f, false);
	if (nfd < 0)
		file_put(f);
	return nfd;
}
SYSCALL(__NR_dup, sys_dup);

static long sys_dup3(uint64_t oldfd_, uint64_t newfd_, uint64_t flags)
{
	struct files *fs = files_cur();
	int oldfd = (int)oldfd_, newfd = (int)newfd_;
	struct file *f, *old;
	unsigned long fl;

	if (flags & ~(uint64_t)O_CLOEXEC)
		return -EINVAL;
	if (oldfd == newfd)
		return fd_get(oldfd, &f) ?: -EINVAL;
	if (!fs || newfd < 0 || newfd >= fd_limit() || oldfd < 0 || oldfd >= FILES_MAX)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	f = slot_file(fs->fd[oldfd]);
	if (!f) {
		spin_unlock_irqrestore(&fs->lock, fl);
		return -EBADF;
	}
	if (fs->fd[newfd] == FD_RESERVED) {
		spin_unlock_irqrestore(&fs->lock, fl);
		return -EBUSY; /* do_dup2: an fd another thread is opening */
	}
	file_get(f);
	old = fs->fd[newfd];
	fs->fd[newfd] = f;
	cloexec_set_locked(fs, newfd, flags & O_CLOEXEC);
	spin_unlock_irqrestore(&fs->lock, fl);
	if (old)
		fd_close_put(fs, old);
	return newfd;
}
SYSCALL(__NR_dup3, sys_dup3);

/* ---- F_SETOWN, F_SETSIG and O_ASYNC (Linux's f_setown, send_sigio) ---- */

static struct spinlock fown_lock = SPINLOCK_INIT; /* every file's owner and fa.fd */

static long owner_set(struct file *f, int type, int pid)
{
	/* find_vpid: the id must name a live thread, process or group (sig 0 probes) */
	if (pid && signal_send_owner(type, pid, 0, NULL))
		return -ESRCH;
	unsigned long fl = spin_lock_irqsave(&fown_lock);

	f->owner.type = type;
	f->owner.pid = pid;
	spin_unlock_irqrestore(&fown_lock, fl);
	return 0;
}

static struct fown owner_get(struct file *f)
{
	unsigned long fl = spin_lock_irqsave(&fown_lock);
	struct fown o = f->owner;

	spin_unlock_irqrestore(&fown_lock, fl);
	return o;
}

static long fcntl_owner(struct file *f, unsigned int cmd, uint64_t arg)
{
	struct f_owner_ex ex;
	struct fown o;

	switch (cmd) {
	case F_SETOWN: {
		int who = (int)arg;

		if (who == (-0x7fffffff - 1))
			return -EINVAL;
		return who < 0 ? owner_set(f, F_OWNER_PGRP, -who) : owner_set(f, F_OWNER_PID, who);
	}
	case F_GETOWN:
		o = owner_get(f);
		return o.type == F_OWNER_PGRP ? -o.pid : o.pid;
	case F_SETOWN_EX:
		if (ksvc_copy_from_user(&ex, (void *)(uintptr_t)arg, sizeof(ex)))
			return -EFAULT;
		if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID && ex.type != F_OWNER_PGRP)
			return -EINVAL;
		return owner_set(f, ex.type, ex.pid);
	case F_GETOWN_EX:
		o = owner_get(f);
		ex.type = o.type;
		ex.pid = o.pid;
		return ksvc_copy_to_user((void *)(uintptr_t)arg, &ex, sizeof(ex));
	case F_SETSIG:
		if (arg > KSIG_MAX)
			return -EINVAL;
		unsigned long fl = spin_lock_irqsave(&fown_lock);

		f->owner.signum = (int)arg;
		spin_unlock_irqrestore(&fown_lock, fl);
		return 0;
	default: /* F_GETSIG */
		return owner_get(f).signum;
	}
}

/* Signals with si_codes of their own: another reason code would be ambiguous (SI_SIGIO). */
static bool sig_specific_codes(int sig)
{
	return sig == SIGILL || sig == SIGFPE || sig == SIGSEGV || sig == SIGBUS ||
	       sig == SIGTRAP || sig == SIGCHLD || sig == SIGPOLL || sig == SIGSYS;
}

void ksvc_kill_fasync(struct ksvc_fasync *fa, int reason)
{
	static const int16_t band[NSIGPOLL] = {
		POLLIN | POLLRDNORM, /* POLL_IN */
		POLLOUT | POLLWRNORM | POLLWRBAND, /* POLL_OUT */
		POLLIN | POLLRDNORM | POLLMSG, /* POLL_MSG */
		POLLERR, /* POLL_ERR */
		POLLPRI | POLLRDBAND, /* POLL_PRI */
		POLLHUP | POLLERR, /* POLL_HUP */
	};
	struct ksiginfo info;
	unsigned long fl = spin_lock_irqsave(&fown_lock);
	struct fown o = fa->file->owner;
	int fd = fa->fd;

	spin_unlock_irqrestore(&fown_lock, fl);
	if (!o.pid || reason < POLL_IN || reason > POLL_HUP)
		return;
	memset(&info, 0, sizeof(info));
	if (o.signum) {
		info.signo = o.signum;
		info.code = o.signum != SIGPOLL && sig_specific_codes(o.signum) ? SI_SIGIO : reason;
		info.band = band[reason - POLL_IN];
		info.status = fd; /* si_fd */
		if (signal_send_owner(o.type, o.pid, o.signum, &info) != -EAGAIN)
			return;
		memset(&info, 0, sizeof(info)); /* the queue is full: plain SIGIO, as Linux */
	}
	info.signo = SIGIO;
	info.code = SI_KERNEL;
	signal_send_owner(o.type, o.pid, SIGIO, &info);
}

static long sys_fcntl(uint64_t fd_, uint64_t cmd, uint64_t arg)
{
	struct files *fs = files_cur();
	int fd = (int)fd_;
	struct file *f;
	unsigned long fl;
	long ret;
	int err = fd_get(fd, &f);

	if (err)
		return err;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if ((int64_t)arg < 0 || arg >= (uint64_t)fd_limit()) {
			ret = -EINVAL;
			break;
		}
		ret = fd_install_min(f, (int)arg, cmd == F_DUPFD_CLOEXEC);
		if (ret >= 0)
			return ret; /* the table holds our reference now */
		break;
	case F_GETFD:
		fl = spin_lock_irqsave(&fs->lock);
		ret = cloexec_get_locked(fs, fd) ? FD_CLOEXEC : 0;
		spin_unlock_irqrestore(&fs->lock, fl);
		break;
	case F_SETFD:
		fl = spin_lock_irqsave(&fs->lock);
		if (fs->fd[fd] == f)
			cloexec_set_locked(fs, fd, arg & FD_CLOEXEC);
		spin_unlock_irqrestore(&fs->lock, fl);
		ret = 0;
		break;
	case F_GETFL:
		ret = atomic_load(&f->flags);
		break;
	case F_SETFL: {
		const unsigned int changeable = O_APPEND | O_NONBLOCK | FASYNC | O_DIRECT | O_NOATIME;
		unsigned int old = atomic_load(&f->flags);

		/* setfl: the file hears of an O_ASYNC change first, and may refuse it */
		ret = 0;
		if (((old ^ (unsigned int)arg) & FASYNC) && f->ops->fasync)
			ret = f->ops->fasync(f, fd, (arg & FASYNC) != 0);
		if (ret)
			break;
		while (!atomic_compare_exchange_weak(&f->flags, &old,
						     (old & ~changeable) | ((unsigned int)arg & changeable)))
			;
		break;
	}
	case F_SETOWN:
	case F_GETOWN:
	case F_SETOWN_EX:
	case F_GETOWN_EX:
	case F_SETSIG:
	case F_GETSIG:
		ret = fcntl_owner(f, (unsigned int)cmd, arg);
		break;
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
		ret = posix_lock_fcntl(f, fs, (unsigned int)cmd, arg);
		break;
	case F_GETPIPE_SZ:
		ret = file_is_pipe(f) ? PIPE_SIZE : -EBADF;
		break;
	case F_SETPIPE_SZ:
		ret = file_is_pipe(f) ? PIPE_SIZE : -EBADF; /* fixed size, as if rounded */
		break;
	default:
		ret = -EINVAL;
	}
	file_put(f);
	return ret;
}
SYSCALL(__NR_fcntl, sys_fcntl);

/* ---- anonymous files for the ksvc seam ---- */

struct anon_file {
	const struct ksvc_file_ops *kops;
	void *priv;
};

static long anon_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct anon_file *a = f->priv;

	return a->kops->read ? a->kops->read(a->priv, ubuf, n) : -EINVAL;
}

static long anon_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct anon_file *a = f->priv;

	return a->kops->ioctl ? a->kops->ioctl(a->priv, cmd, arg) : -ENOTTY;
}

static unsigned int anon_poll(struct file *f, struct ksvc_poll *pt)
{
	struct anon_file *a = f->priv;

	return a->kops->poll ? a->kops->poll(a->priv, pt) : POLLIN | POLLRDNORM;
}

/*
 * mmap of an anon object (perf ring buffers): the object validates the mapping; each VMA
 * holds the file (so the object outlives close()) and one use of the mapping.  Pages come
 * from the object one fault at a time and are never copy-on-write nor copied at fork.
 */
struct anon_map {
	struct anon_file *a;
	void *map_priv;
};

static int anon_vm_fault(struct vm_area *v, uint64_t addr, uint64_t *pfn)
{
	struct anon_map *m = v->priv;
	uint64_t pgoff = v->pgoff + ((addr - v->start) >> 12); /* the page of the object */
	uint64_t pa = m->a->kops->mmap_phys(m->a->priv, m->map_priv, pgoff);

	if (!pa)
		return -EFAULT;
	*pfn = pa >> 12;
	return 0;
}

static void anon_vm_open(struct vm_area *v)
{
	struct anon_map *m = v->priv;
	struct anon_map *copy = kmalloc(sizeof(*copy));

	/* a split: the new piece gets its own record of the same mapping */
	if (copy) {
		*copy = *m;
		v->priv = copy;
	}
	if (m->a->kops->mmap_open)
		m->a->kops->mmap_open(m->a->priv, m->map_priv);
}

static void anon_vm_close(struct vm_area *v)
{
	struct anon_map *m = v->priv;

	if (m->a->kops->mmap_close)
		m->a->kops->mmap_close(m->a->priv, m->map_priv);
	kfree(m);
}

static const struct vm_ops anon_vm_ops = {
	.fault = anon_vm_fault,
	.open = anon_vm_open,
	.close = anon_vm_close,
};

static int anon_mmap(struct file *f, struct vm_area *vma)
{
	struct anon_file *a = f->priv;
	struct ksvc_mmap km = {
		.len = vma->end - vma->start,
		.pgoff = vma->pgoff,
		.write = (vma->flags & VMA_WRITE) != 0,
		.shared = (vma->flags & VMA_SHARED) != 0,
	};
	struct anon_map *m;
	int err;

	if (!a->kops->mmap || !a->kops->mmap_phys)
		return -ENODEV;
	m = kmalloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = a->kops->mmap(a->priv, &km);
	if (err) {
		kfree(m);
		return err;
	}
	m->a = a;
	m->map_priv = km.map_priv;
	vma->ops = &anon_vm_ops;
	vma->priv = m;
	vma->flags = (vma->flags | VMA_SPECIAL | VMA_DONTCOPY) & ~(uint32_t)VMA_BUS_PAST_EOF;
	if (km.deny_write_later)
		vma->flags |= VMA_NOMAYWRITE;
	return 1;
}

static int anon_fasync(struct file *f, int fd, bool on)
{
	struct anon_file *a = f->priv;

	if (!a->kops->fasync)
		return 0;
	if (on) {
		unsigned long fl = spin_lock_irqsave(&fown_lock);

		f->fa.fd = fd;
		spin_unlock_irqrestore(&fown_lock, fl);
	}
	a->kops->fasync(a->priv, on ? &f->fa : NULL);
	return 0;
}

static void anon_release(struct file *f)
{
	struct anon_file *a = f->priv;

	if (a->kops->release)
		a->kops->release(a->priv);
	kfree(a);
}

static const struct file_ops anon_fops = {
	.read = anon_read,
	.ioctl = anon_ioctl,
	.poll = anon_poll,
	.mmap = anon_mmap,
	.release = anon_release,
	.fasync = anon_fasync,
};

void *file_anon_priv(struct file *f, const struct ksvc_file_ops *kops)
{
	struct anon_file *a = f->priv;

	return f->ops == &anon_fops && a->kops == kops ? a->priv : NULL;
}

int ksvc_fd_reserve(const struct ksvc_file_ops *ops, bool cloexec, struct ksvc_fd_resv *r)
{
	struct files *fs = files_cur();
	struct anon_file *a;
	struct file *f;
	int fd;

	if (!fs)
		return -EBADF;
	a = kmalloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->kops = ops;
	a->priv = NULL;
	f = file_alloc(&anon_fops, NULL, ops->rdonly ? O_RDONLY : ops->wronly ? O_WRONLY : O_RDWR, a);
	if (!f) {
		kfree(a);
		return -ENOMEM;
	}
	fd = fd_install(FD_RESERVED, cloexec);
	if (fd < 0) {
		kfree(a);
		kfree(f);
		return fd;
	}
	r->fd = fd;
	r->file = f;
	r->cloexec = cloexec;
	return 0;
}

int ksvc_fd_commit(struct ksvc_fd_resv *r, void *priv)
{
	struct files *fs = files_cur();
	struct file *f = r->file;
	unsigned long fl;
	int fd = r->fd;

	((struct anon_file *)f->priv)->priv = priv;
	fl = spin_lock_irqsave(&fs->lock);
	if (fs->fd[fd] == FD_RESERVED) {
		fs->fd[fd] = f;
		f = NULL;
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	if (f) {
		/* close_range(CLOSE_RANGE_UNSHARE) gave the process a new table meanwhile, without
		 * the reservation: the file takes the lowest free fd there (it cannot be EMFILE
		 * for long; if it is, the file is released as a close would) */
		fd = fd_install(f, r->cloexec);
		if (fd < 0)
			file_put(f);
	}
	r->file = NULL;
	return fd;
}

void ksvc_fd_cancel(struct ksvc_fd_resv *r)
{
	struct files *fs = files_cur();
	unsigned long fl = spin_lock_irqsave(&fs->lock);

	if (fs->fd[r->fd] == FD_RESERVED) {
		fs->fd[r->fd] = NULL;
		cloexec_set_locked(fs, r->fd, false);
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	/* the caller keeps its reference to what it would have installed: no release */
	kfree(((struct file *)r->file)->priv);
	kfree(r->file);
	r->file = NULL;
}

int ksvc_fd_install(const struct ksvc_file_ops *ops, void *priv, bool cloexec)
{
	struct ksvc_fd_resv r;
	int err = ksvc_fd_reserve(ops, cloexec, &r);

	return err ? err : ksvc_fd_commit(&r, priv);
}

int ksvc_fd_install_flags(const struct ksvc_file_ops *ops, void *priv, bool cloexec,
			  unsigned int fflags)
{
	struct ksvc_fd_resv r;
	int err = ksvc_fd_reserve(ops, cloexec, &r);

	if (err)
		return err;
	atomic_fetch_or(&((struct file *)r.file)->flags, fflags);
	return ksvc_fd_commit(&r, priv);
}

int ksvc_fd_get_flags(int fd, const struct ksvc_file_ops *ops, void **priv, unsigned int *fflags)
{
	struct files *fs = files_cur();
	struct file *f;
	unsigned long fl;
	int err = ksvc_fd_get(fd, ops, priv);

	if (err)
		return err;
	fl = spin_lock_irqsave(&fs->lock);
	f = slot_file(fs->fd[fd]);
	*fflags = f && f->ops == &anon_fops && ((struct anon_file *)f->priv)->priv == *priv ?
			  atomic_load(&f->flags) : 0;
	spin_unlock_irqrestore(&fs->lock, fl);
	return 0;
}

int ksvc_fd_get(int fd, const struct ksvc_file_ops *ops, void **priv)
{
	struct files *fs = files_cur();
	struct anon_file *a;
	struct file *f;
	unsigned long fl;
	int err = 0;

	if (!fs || fd < 0 || fd >= FILES_MAX)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	f = slot_file(fs->fd[fd]);
	if (!f) {
		err = -EBADF;
	} else if (f->ops != &anon_fops || (a = f->priv)->kops != ops) {
		err = -EINVAL;
	} else {
		if (ops->get)
			ops->get(a->priv);
		*priv = a->priv;
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	return err;
}

int fd_set_cloexec(int fd, bool on)
{
	struct files *fs = files_cur();
	unsigned long fl;
	int err = -EBADF;

	if (!fs || fd < 0 || fd >= FILES_MAX)
		return -EBADF;
	fl = spin_lock_irqsave(&fs->lock);
	if (slot_file(fs->fd[fd])) {
		cloexec_set_locked(fs, fd, on);
		err = 0;
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	return err;
}

void fd_uninstall(int fd, struct file *f)
{
	struct files *fs = files_cur();
	struct file *got = NULL;
	unsigned long fl;

	if (!fs || fd < 0 || fd >= FILES_MAX)
		return;
	fl = spin_lock_irqsave(&fs->lock);
	if (fs->fd[fd] == f)
		got = fd_detach_locked(fs, fd);
	spin_unlock_irqrestore(&fs->lock, fl);
	if (got)
		file_put(got);
}

int fd_install_pair(struct file *a, struct file *b, bool cloexec, uint64_t ufds)
{
	int fds[2];

	fds[0] = fd_install(a, cloexec);
	if (fds[0] < 0) {
		file_put(a);
		file_put(b);
		return fds[0];
	}
	fds[1] = fd_install(b, cloexec);
	if (fds[1] < 0) {
		fd_uninstall(fds[0], a);
		file_put(b);
		return fds[1];
	}
	if (ksvc_copy_to_user((void *)ufds, fds, sizeof(fds))) {
		fd_uninstall(fds[0], a);
		fd_uninstall(fds[1], b);
		return -EFAULT;
	}
	return 0;
}

/* ---- /proc/PID/fd (fs/procfs_fd.c): another process's table, by spinlock only ---- */

int files_list_fds(struct files *fs, int *fds, int max)
{
	unsigned long fl = spin_lock_irqsave(&fs->lock);
	int n = 0;

	for (int i = 0; i < FILES_MAX && n < max; i++)
		if (slot_file(fs->fd[i]))
			fds[n++] = i;
	spin_unlock_irqrestore(&fs->lock, fl);
	return n;
}

struct file *files_fd_file_get(struct files *fs, int fd)
{
	struct file *f = NULL;

	if (fd < 0 || fd >= FILES_MAX)
		return NULL;
	unsigned long fl = spin_lock_irqsave(&fs->lock);

	f = slot_file(fs->fd[fd]);
	if (f)
		file_get(f);
	spin_unlock_irqrestore(&fs->lock, fl);
	return f;
}

struct file *files_fd_file_get_cloexec(struct files *fs, int fd, bool *cloexec)
{
	struct file *f = NULL;

	if (fd < 0 || fd >= FILES_MAX)
		return NULL;
	unsigned long fl = spin_lock_irqsave(&fs->lock);

	f = slot_file(fs->fd[fd]);
	if (f) {
		file_get(f);
		*cloexec = cloexec_get_locked(fs, fd);
	}
	spin_unlock_irqrestore(&fs->lock, fl);
	return f;
}

struct inode *files_fd_inode_locked(struct files *fs, int fd)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = NULL;

	if (fd < 0 || fd >= FILES_MAX)
		return NULL;
	unsigned long fl = spin_lock_irqsave(&fs->lock);
	struct file *f = slot_file(fs->fd[fd]);

	/* the file's reference may go with a close meanwhile, but its last inode_put waits
	 * for vfs_lock, which the caller holds */
	if (f)
		ino = f->inode;
	spin_unlock_irqrestore(&fs->lock, fl);
	return ino;
}

size_t file_show_fdinfo(struct file *f, char *buf, size_t size)
{
	struct anon_file *a = f->ops == &anon_fops ? f->priv : NULL;

	if (!a || !a->kops->show_fdinfo || !size)
		return 0;
	return a->kops->show_fdinfo(a->priv, buf, size);
}

/*
 * readlink of /proc/PID/fd/N, as Linux's d_path: "anon_inode:<name>" for anonymous files,
 * "pipe:[ino]" and "socket:[ino]", "/" for the root, a file's path (" (deleted)" after it
 * when it has no name left), NUL-terminated in buf; the length.
 */
size_t file_describe(struct file *f, char *buf, size_t size)
{
	struct inode *ino = f->inode;
	size_t len = 0;

	if (size < 2)
		return 0;
	if (!ino) {
		const char *name = f->ops == &anon_fops ? ((struct anon_file *)f->priv)->kops->name
							: f->ops->anon_name;

		return (size_t)ksnprintf(buf, size, "anon_inode:%s", name ? name : "[unknown]");
	}
	fs_mutex_lock(&vfs_lock);
	if (S_ISFIFO(ino->mode) && f->ops != &fifo_fops) /* pipe(2)'s, not a named FIFO */
		len = (size_t)ksnprintf(buf, size, "pipe:[%lu]", (unsigned long)ino->ino);
	else if (S_ISSOCK(ino->mode))
		len = (size_t)ksnprintf(buf, size, "socket:[%lu]", (unsigned long)ino->ino);
	else if (ino == vfs_root())
		len = (size_t)ksnprintf(buf, size, "/");
	else
		len = vfs_inode_path_locked(ino, buf, size);
	fs_mutex_unlock(&vfs_lock);
	if (!len && f->path)
		len = (size_t)ksnprintf(buf, size, "%s (deleted)", f->path);
	return MIN(len, size - 1);
}
