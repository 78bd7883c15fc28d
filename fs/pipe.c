/*
 * pipe.c - anonymous pipes: pipe2 and the pipe file type; the byte ring under them is also
 * each direction of a socketpair (socket.c).
 *
 * What it does: a 64 KiB ring per pipe (F_GETPIPE_SZ reports 65536); reads return what is
 * there (at least one byte, blocking while the pipe is empty and has a writer), 0 at EOF;
 * writes of at most PIPE_BUF (4096) bytes are atomic, longer ones may be split and block until
 * everything is written (or return the partial count when O_NONBLOCK); EAGAIN when nothing
 * could be moved without blocking; a write with no reader raises SIGPIPE on the writing
 * thread and fails with EPIPE.  Blocking waits end with -ERESTARTSYS when a signal is pending
 * (kern/signal_proc.h: -EINTR for the caller unless the handler has SA_RESTART).
 * Poll: the read end is POLLIN with data and POLLHUP without writers, the write end POLLOUT
 * with room and POLLERR without readers, as Linux's pipe_poll.
 *
 * Locking: pipe->mutex (sleeping) serializes the data copies, which touch user memory; the
 * counters are read without it by poll and by sleepers re-testing their condition after
 * waitq_prepare, so no wakeup is lost.  Readers wait on rwait, writers on wwait.
 *
 * Named FIFOs (mknod S_IFIFO): the first open makes the inode's ring and the last close drops
 * it with its bytes (fifo_mutex guards inode->pipe and the FIFO's refs).  Open follows
 * fifo_open: O_RDONLY waits for a writer to open (unless O_NONBLOCK), O_WRONLY for a reader
 * (O_NONBLOCK without a reader: ENXIO), O_RDWR never waits; a waiting open ends with
 * -ERESTARTSYS on a signal.  A FIFO reader polls POLLHUP without writers only once a writer
 * opened after it (Linux keeps w_counter in f_version; here the file's unused pos holds it).
 *
 * What it does not do: F_SETPIPE_SZ resizing, splice, O_DIRECT packet mode, reopening a
 * pipe(2) through /proc/PID/fd.
 *
 * ABI: pipe2(int fds[2], flags) with O_CLOEXEC | O_NONBLOCK (| O_DIRECT accepted), EINVAL
 * for other flags; the ends are O_RDONLY / O_WRONLY for F_GETFL; lseek and pread: ESPIPE.
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
#include <asm-generic/poll.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include "fs_internal.h"

#define PIPE_SIZE 65536u
#define PIPE_BUF_ATOMIC 4096u

struct pipe {
	struct fs_mutex mutex; /* serializes readers and writers */
	char *buf; /* PIPE_SIZE bytes */
	_Atomic uint64_t head, tail; /* bytes ever written / read; used = head - tail (mutex) */
	_Atomic int readers, writers; /* open read / write ends (files, not fds) */
	_Atomic int refs; /* the two end files (a FIFO: its open files, under fifo_mutex) */
	_Atomic unsigned int r_opens, w_opens; /* FIFO opens for reading / writing, ever */
	struct wait_queue rwait, wwait;
};

static uint64_t pipe_used(struct pipe *p)
{
	return atomic_load(&p->head) - atomic_load(&p->tail);
}

static bool pipe_is_reader(struct file *f)
{
	return (atomic_load(&f->flags) & O_ACCMODE) == O_RDONLY;
}

static bool pipe_nonblock(struct file *f)
{
	return atomic_load(&f->flags) & O_NONBLOCK;
}

int fs_wait_event(struct wait_queue *wq, bool (*cond)(void *ctx, size_t arg), void *ctx,
		  size_t arg)
{
	struct waiter w = { 0 };
	int err = 0;

	for (;;) {
		waitq_prepare(wq, &w);
		if (cond(ctx, arg))
			break;
		if (signal_pending(current_task())) {
			err = -ERESTARTSYS;
			break;
		}
		waitq_block(&w, 0);
	}
	waitq_finish(wq, &w);
	return err;
}

static bool can_read(void *ctx, size_t unused)
{
	struct pipe *p = ctx;

	return pipe_used(p) || !atomic_load(&p->writers);
}

static bool can_write(void *ctx, size_t want)
{
	struct pipe *p = ctx;

	return PIPE_SIZE - pipe_used(p) >= want || !atomic_load(&p->readers);
}

static const struct file_ops pipe_fops;
static struct fs_mutex fifo_mutex = {
	.lock = SPINLOCK_INIT,
	.wq = { SPINLOCK_INIT, LIST_INIT(fifo_mutex.wq.waiters) },
};

long pipe_read_core(struct pipe *p, void *ubuf, size_t n, bool nonblock, bool peek, bool eof)
{
	long ret;

	if (n == 0)
		return 0;
	fs_mutex_lock(&p->mutex);
	for (;;) {
		uint64_t used = pipe_used(p), tail = atomic_load(&p->tail);

		if (used) {
			size_t k = (size_t)MIN((uint64_t)n, used);
			size_t at = tail % PIPE_SIZE, first = MIN(k, PIPE_SIZE - at);

			if (ksvc_copy_to_user(ubuf, p->buf + at, first) ||
			    (k > first && ksvc_copy_to_user((char *)ubuf + first, p->buf, k - first))) {
				ret = -EFAULT;
				break;
			}
			ret = (long)k;
			if (peek)
				break;
			atomic_store(&p->tail, tail + k);
			waitq_wake_all(&p->wwait);
			break;
		}
		if (eof || !atomic_load(&p->writers)) {
			ret = 0;
			break;
		}
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		fs_mutex_unlock(&p->mutex);
		ret = fs_wait_event(&p->rwait, can_read, p, 0);
		if (ret)
			return ret;
		fs_mutex_lock(&p->mutex);
	}
	fs_mutex_unlock(&p->mutex);
	return ret;
}

static long pipe_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return pipe_read_core(f->priv, ubuf, n, pipe_nonblock(f), false, false);
}

long pipe_epipe(void)
{
	struct uthread *ut = current_uthread();

	if (ut)
		signal_send_thread(ut, SIGPIPE_NR, NULL);
	return -EPIPE;
}

static int pipe_copy_in(char *dst, const void *src, size_t n, bool user)
{
	if (user)
		return ksvc_copy_from_user(dst, src, n);
	memcpy(dst, src, n);
	return 0;
}

long pipe_write_core(struct pipe *p, const void *ubuf, size_t n, bool nonblock, bool user,
		     bool sigpipe)
{
	size_t done = 0;
	long err = 0;

	if (n == 0)
		return 0; /* a null write succeeds, reader or not (Linux's pipe_write) */
	if (!atomic_load(&p->readers))
		return sigpipe ? pipe_epipe() : -EPIPE;
	fs_mutex_lock(&p->mutex);
	while (done < n) {
		size_t left = n - done, room, k, at, first;
		uint64_t head = atomic_load(&p->head);

		if (!atomic_load(&p->readers)) {
			err = sigpipe ? pipe_epipe() : -EPIPE;
			break;
		}
		room = PIPE_SIZE - (size_t)pipe_used(p);
		/* PIPE_BUF atomicity: a small write goes in whole or waits. */
		if (room && (n > PIPE_BUF_ATOMIC || room >= left)) {
			k = MIN(room, left);
			at = head % PIPE_SIZE;
			first = MIN(k, PIPE_SIZE - at);
			if (pipe_copy_in(p->buf + at, (const char *)ubuf + done, first, user) ||
			    (k > first &&
			     pipe_copy_in(p->buf, (const char *)ubuf + done + first, k - first, user))) {
				err = -EFAULT;
				break;
			}
			atomic_store(&p->head, head + k);
			done += k;
			waitq_wake_all(&p->rwait);
			continue;
		}
		if (nonblock) {
			err = -EAGAIN;
			break;
		}
		fs_mutex_unlock(&p->mutex);
		err = fs_wait_event(&p->wwait, can_write, p, n > PIPE_BUF_ATOMIC ? 1 : left);
		fs_mutex_lock(&p->mutex);
		if (err)
			break;
	}
	fs_mutex_unlock(&p->mutex);
	return done ? (long)done : err;
}

static long pipe_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return pipe_write_core(f->priv, ubuf, n, pipe_nonblock(f), true, true);
}

long pipe_write_kernel(struct file *f, const void *kbuf, size_t n)
{
	return pipe_write_core(f->priv, kbuf, n, pipe_nonblock(f), false, true);
}

bool file_is_pipe(struct file *f)
{
	return f->ops == &pipe_fops || f->ops == &fifo_fops;
}

unsigned int pipe_poll_side(struct pipe *p, struct ksvc_poll *pt, bool reader)
{
	unsigned int mask = 0;

	if (reader) {
		ksvc_poll_wait(pt, &p->rwait);
		if (pipe_used(p))
			mask |= POLLIN | POLLRDNORM;
		if (!atomic_load(&p->writers))
			mask |= POLLHUP;
	} else {
		ksvc_poll_wait(pt, &p->wwait);
		if (pipe_used(p) < PIPE_SIZE)
			mask |= POLLOUT | POLLWRNORM;
		if (!atomic_load(&p->readers))
			mask |= POLLERR;
	}
	return mask;
}

unsigned int pipe_poll(struct file *f, struct ksvc_poll *pt)
{
	return pipe_poll_side(f->priv, pt, pipe_is_reader(f));
}

void pipe_end_close(struct pipe *p, bool reader)
{
	if (reader)
		atomic_fetch_sub(&p->readers, 1);
	else
		atomic_fetch_sub(&p->writers, 1);
	waitq_wake_all(&p->rwait);
	waitq_wake_all(&p->wwait);
}

void pipe_unref(struct pipe *p)
{
	/* The other end may be releasing on another CPU: the last one out frees. */
	if (atomic_fetch_sub(&p->refs, 1) == 1) {
		kfree(p->buf);
		kfree(p);
	}
}

bool pipe_ends(struct pipe *p, bool reader)
{
	return atomic_load(reader ? &p->readers : &p->writers) > 0;
}

static void pipe_release(struct file *f)
{
	struct pipe *p = f->priv;

	pipe_end_close(p, pipe_is_reader(f));
	pipe_unref(p);
}

static const struct file_ops pipe_fops = {
	.read = pipe_read,
	.write = pipe_write,
	.poll = pipe_poll,
	.release = pipe_release,
};

struct pipe *pipe_alloc(int refs)
{
	struct pipe *p = kmalloc(sizeof(*p));

	if (!p)
		return NULL;
	p->buf = kmalloc(PIPE_SIZE);
	if (!p->buf) {
		kfree(p);
		return NULL;
	}
	fs_mutex_init(&p->mutex);
	waitq_init(&p->rwait);
	waitq_init(&p->wwait);
	atomic_store(&p->head, 0);
	atomic_store(&p->tail, 0);
	atomic_store(&p->readers, 1);
	atomic_store(&p->writers, 1);
	atomic_store(&p->refs, refs);
	return p;
}

/* ---- named FIFOs ---- */

static bool fifo_reads(struct file *f)
{
	return (atomic_load(&f->flags) & O_ACCMODE) != O_WRONLY;
}

static bool fifo_writes(struct file *f)
{
	return (atomic_load(&f->flags) & O_ACCMODE) != O_RDONLY;
}

/* One opener fewer: its ends close, and the last takes the ring with it (fifo_mutex held). */
static void fifo_put_locked(struct inode *ino, struct pipe *p, bool rd, bool wr)
{
	if (rd)
		pipe_end_close(p, true);
	if (wr)
		pipe_end_close(p, false);
	if (atomic_fetch_sub(&p->refs, 1) == 1) {
		ino->pipe = NULL;
		kfree(p->buf);
		kfree(p);
	}
}

static bool opens_changed(void *ctx, size_t seen)
{
	return atomic_load((_Atomic unsigned int *)ctx) != (unsigned int)seen;
}

int fifo_open(struct file *f)
{
	struct inode *ino = f->inode;
	bool rd = fifo_reads(f), wr = fifo_writes(f);
	bool nonblock = atomic_load(&f->flags) & O_NONBLOCK;
	struct pipe *p;
	int err = 0;

	fs_mutex_lock(&fifo_mutex);
	p = ino->pipe;
	if (!p) {
		p = pipe_alloc(0);
		if (!p) {
			fs_mutex_unlock(&fifo_mutex);
			return -ENOMEM;
		}
		atomic_store(&p->readers, 0);
		atomic_store(&p->writers, 0);
		ino->pipe = p;
	}
	atomic_fetch_add(&p->refs, 1);
	if (!rd && nonblock && !atomic_load(&p->readers)) {
		fifo_put_locked(ino, p, false, false);
		fs_mutex_unlock(&fifo_mutex);
		return -ENXIO;
	}
	if (rd) {
		atomic_fetch_add(&p->readers, 1);
		atomic_fetch_add(&p->r_opens, 1);
	}
	if (wr) {
		atomic_fetch_add(&p->writers, 1);
		atomic_fetch_add(&p->w_opens, 1);
	}
	unsigned int r_seen = atomic_load(&p->r_opens), w_seen = atomic_load(&p->w_opens);

	f->priv = p;
	f->pos = w_seen;
	fs_mutex_unlock(&fifo_mutex);
	/* the partner waiting in its open counts this one */
	waitq_wake_all(&p->rwait);
	waitq_wake_all(&p->wwait);
	if (rd && !wr && !nonblock && !atomic_load(&p->writers))
		err = fs_wait_event(&p->rwait, opens_changed, &p->w_opens, w_seen);
	else if (wr && !rd && !atomic_load(&p->readers))
		err = fs_wait_event(&p->wwait, opens_changed, &p->r_opens, r_seen);
	if (err) {
		fs_mutex_lock(&fifo_mutex);
		fifo_put_locked(ino, p, rd, wr);
		fs_mutex_unlock(&fifo_mutex);
		f->priv = NULL;
	}
	return err;
}

static long fifo_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return pipe_read_core(f->priv, ubuf, n, pipe_nonblock(f), false, false);
}

static long fifo_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return pipe_write_core(f->priv, ubuf, n, pipe_nonblock(f), true, true);
}

static unsigned int fifo_poll(struct file *f, struct ksvc_poll *pt)
{
	struct pipe *p = f->priv;
	unsigned int mask = 0;

	if (fifo_reads(f)) {
		mask |= pipe_poll_side(p, pt, true) & (POLLIN | POLLRDNORM);
		if (!atomic_load(&p->writers) && atomic_load(&p->w_opens) != (unsigned int)f->pos)
			mask |= POLLHUP;
	}
	if (fifo_writes(f))
		mask |= pipe_poll_side(p, pt, false);
	return mask;
}

static void fifo_release(struct file *f)
{
	if (!f->priv)
		return; /* its open failed */
	fs_mutex_lock(&fifo_mutex);
	fifo_put_locked(f->inode, f->priv, fifo_reads(f), fifo_writes(f));
	fs_mutex_unlock(&fifo_mutex);
}

const struct file_ops fifo_fops = {
	.read = fifo_read,
	.write = fifo_write,
	.poll = fifo_poll,
	.release = fifo_release,
};

/* Both ends of a new pipe: 0 or -ENOMEM. */
static int pipe_create(unsigned int flags, struct file **rd, struct file **wr)
{
	struct pipe *p = pipe_alloc(2);
	struct inode *ino = p ? ramfs_inode_new(S_IFIFO | 0600) : NULL;

	if (!ino)
		goto err_free;
	ino->pipe = p;
	ino->fops = &pipe_fops;
	*rd = file_alloc(&pipe_fops, ino, O_RDONLY | (flags & O_NONBLOCK), p);
	*wr = file_alloc(&pipe_fops, ino, O_WRONLY | (flags & O_NONBLOCK), p);
	inode_put(ino);
	if (*rd && *wr)
		return 0;
	/* Release nothing through the ops: free by hand. */
	if (*rd)
		(*rd)->ops = NULL, file_put(*rd);
	if (*wr)
		(*wr)->ops = NULL, file_put(*wr);
	kfree(p->buf);
	kfree(p);
	return -ENOMEM;
err_free:
	if (p) {
		kfree(p->buf);
		kfree(p);
	}
	return -ENOMEM;
}

static long sys_pipe2(uint64_t ufds, uint64_t flags)
{
	struct file *rd, *wr;
	int err;

	if (flags & ~(uint64_t)(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	err = pipe_create((unsigned int)flags, &rd, &wr);
	if (err)
		return err;
	return fd_install_pair(rd, wr, flags & O_CLOEXEC, ufds);
}
SYSCALL(__NR_pipe2, sys_pipe2);
