/*
 * sys_rw.c - the data-path syscalls on descriptors: read, write, readv, writev, pread64,
 * pwrite64, preadv, pwritev, preadv2, pwritev2, lseek, ioctl, getdents64, fsync, fdatasync; sendfile (from a
 * regular file to a regular file, pipe or device) and copy_file_range (regular to regular).
 *
 * What it does: the checks Linux's fs/read_write.c makes before calling the file type
 * (EBADF for a descriptor not open for that direction, EINVAL for a type without the
 * operation, ESPIPE for positioned I/O on an unseekable file, EINVAL for a negative offset,
 * iovcnt outside 0..UIO_MAXIOV or an iovec total past SSIZE_MAX), then the file_ops call.
 * A vector stops at the first short segment, as Linux's do_loop_readv_writev; after the
 * first segment, a read from an unseekable file stops rather than block when poll says no
 * data is left.  Counts are clamped to MAX_RW_COUNT (INT_MAX rounded down to a page).
 * Generic ioctls: FIONBIO, FIOCLEX, FIONCLEX, FIOASYNC; others go to the file type (ENOTTY
 * when it has none).
 *
 * ABI: struct iovec {void *iov_base; size_t iov_len} (<linux/uio.h>), SEEK_* (<linux/fs.h>).
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/syscall.h>
#include <asm-generic/poll.h>
#include <asm/ioctls.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/uio.h>
#include "fs_internal.h"

#define MAX_RW_COUNT (0x7fffffffu & ~(KSVC_PAGE_SIZE - 1))

_Static_assert(sizeof(struct iovec) == 16, "iovec");

static long do_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	long r;

	if (!file_readable(f))
		return -EBADF;
	if (!f->ops || !f->ops->read)
		return -EINVAL;
	r = f->ops->read(f, ubuf, MIN(n, (size_t)MAX_RW_COUNT), pos);
	if (r > 0)
		fsnotify_file(f, IN_ACCESS);
	return r;
}

static long do_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	long r;

	if (!file_writable(f))
		return -EBADF;
	if (!f->ops || !f->ops->write)
		return -EINVAL;
	r = f->ops->write(f, ubuf, MIN(n, (size_t)MAX_RW_COUNT), pos);
	if (r > 0)
		fsnotify_file(f, IN_MODIFY);
	return r;
}

static bool file_seekable(struct file *f)
{
	return f->ops && f->ops->llseek;
}

static long sys_read(uint64_t fd, uint64_t buf, uint64_t n)
{
	struct file *f;
	long r = fd_get((int)fd, &f);

	if (r)
		return r;
	r = do_read(f, (void *)buf, n, &f->pos);
	file_put(f);
	return r;
}
SYSCALL(__NR_read, sys_read);

static long sys_write(uint64_t fd, uint64_t buf, uint64_t n)
{
	struct file *f;
	long r = fd_get((int)fd, &f);

	if (r)
		return r;
	r = do_write(f, (const void *)buf, n, &f->pos);
	file_put(f);
	return r;
}
SYSCALL(__NR_write, sys_write);

static long do_prw(uint64_t fd, uint64_t buf, uint64_t n, uint64_t off, bool write)
{
	struct file *f;
	uint64_t pos = off;
	long r = fd_get((int)fd, &f);

	if (r)
		return r;
	if ((int64_t)off < 0)
		r = -EINVAL;
	else if (!file_seekable(f))
		r = -ESPIPE;
	else if (write)
		r = do_write(f, (const void *)buf, n, &pos);
	else
		r = do_read(f, (void *)buf, n, &pos);
	file_put(f);
	return r;
}

static long sys_pread64(uint64_t fd, uint64_t buf, uint64_t n, uint64_t off)
{
	return do_prw(fd, buf, n, off, false);
}
SYSCALL(__NR_pread64, sys_pread64);

static long sys_pwrite64(uint64_t fd, uint64_t buf, uint64_t n, uint64_t off)
{
	return do_prw(fd, buf, n, off, true);
}
SYSCALL(__NR_pwrite64, sys_pwrite64);

int iov_import(uint64_t uiov, uint64_t cnt, struct iovec **out)
{
	struct iovec *iov;
	uint64_t total = 0;

	if ((int64_t)(int)cnt < 0 || cnt > UIO_MAXIOV)
		return -EINVAL;
	iov = kmalloc(cnt ? cnt * sizeof(*iov) : 1);
	if (!iov)
		return -ENOMEM;
	if (cnt && ksvc_copy_from_user(iov, (const void *)uiov, cnt * sizeof(*iov))) {
		kfree(iov);
		return -EFAULT;
	}
	for (uint64_t i = 0; i < cnt; i++) {
		if ((int64_t)iov[i].iov_len < 0 || (total += iov[i].iov_len) > INT64_MAX) {
			kfree(iov);
			return -EINVAL;
		}
	}
	*out = iov;
	return 0;
}

long iov_transfer(const struct iovec *iov, uint64_t cnt,
		  long (*one)(void *ctx, void *base, size_t len, long total), void *ctx)
{
	long total = 0;

	for (uint64_t i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		long r = one(ctx, iov[i].iov_base, iov[i].iov_len, total);

		if (r < 0)
			return total ? total : r;
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return total;
}

struct rwv {
	struct file *f;
	uint64_t *pos;
	bool write;
};

static long rwv_one(void *ctx, void *base, size_t len, long total)
{
	struct rwv *v = ctx;
	struct file *f = v->f;

	/* a read that has some bytes stops before a stream would block */
	if (!v->write && total && !file_seekable(f) && f->ops->poll &&
	    !(f->ops->poll(f, NULL) & (POLLIN | POLLHUP)))
		return 0;
	return v->write ? do_write(f, base, len, v->pos) : do_read(f, base, len, v->pos);
}

static long do_rwv(uint64_t fd, uint64_t uiov, uint64_t cnt, uint64_t *posp, bool write,
		   bool positioned)
{
	struct iovec *iov;
	struct file *f;
	long total = 0, r = fd_get((int)fd, &f);

	if (r)
		return r;
	if (positioned && !file_seekable(f)) {
		file_put(f);
		return -ESPIPE;
	}
	if (write ? !file_writable(f) : !file_readable(f)) {
		file_put(f);
		return -EBADF;
	}
	r = iov_import(uiov, cnt, &iov);
	if (r) {
		file_put(f);
		return r;
	}
	struct rwv v = { f, posp ? posp : &f->pos, write };

	total = iov_transfer(iov, cnt, rwv_one, &v);
	kfree(iov);
	file_put(f);
	return total;
}

static long sys_readv(uint64_t fd, uint64_t iov, uint64_t cnt)
{
	return do_rwv(fd, iov, cnt, NULL, false, false);
}
SYSCALL(__NR_readv, sys_readv);

static long sys_writev(uint64_t fd, uint64_t iov, uint64_t cnt)
{
	return do_rwv(fd, iov, cnt, NULL, true, false);
}
SYSCALL(__NR_writev, sys_writev);

static long sys_preadv(uint64_t fd, uint64_t iov, uint64_t cnt, uint64_t off)
{
	uint64_t pos = off;

	if ((int64_t)off < 0)
		return -EINVAL;
	return do_rwv(fd, iov, cnt, &pos, false, true);
}
SYSCALL(__NR_preadv, sys_preadv);

static long sys_pwritev(uint64_t fd, uint64_t iov, uint64_t cnt, uint64_t off)
{
	uint64_t pos = off;

	if ((int64_t)off < 0)
		return -EINVAL;
	return do_rwv(fd, iov, cnt, &pos, true, true);
}
SYSCALL(__NR_pwritev, sys_pwritev);

/* preadv2/pwritev2: offset -1 is the file position; RWF_APPEND writes at the end. */
static long do_rwv2(uint64_t fd, uint64_t iov, uint64_t cnt, uint64_t off, uint64_t flags,
		    bool write)
{
	uint64_t pos = off;

	if (flags & ~(uint64_t)RWF_SUPPORTED)
		return -EOPNOTSUPP;
	if ((flags & RWF_APPEND) && !write)
		return -EOPNOTSUPP;
	if ((int64_t)off == -1)
		return do_rwv(fd, iov, cnt, NULL, write, false);
	if ((int64_t)off < 0)
		return -EINVAL;
	if (write && (flags & RWF_APPEND)) {
		struct file *f;
		long r = fd_get((int)fd, &f);

		if (r)
			return r;
		pos = file_size(f);
		file_put(f);
	}
	return do_rwv(fd, iov, cnt, &pos, write, true);
}

static long sys_preadv2(uint64_t fd, uint64_t iov, uint64_t cnt, uint64_t off, uint64_t off_hi,
			uint64_t flags)
{
	return do_rwv2(fd, iov, cnt, off, flags, false);
}
SYSCALL(__NR_preadv2, sys_preadv2);

static long sys_pwritev2(uint64_t fd, uint64_t iov, uint64_t cnt, uint64_t off,
			 uint64_t off_hi, uint64_t flags)
{
	return do_rwv2(fd, iov, cnt, off, flags, true);
}
SYSCALL(__NR_pwritev2, sys_pwritev2);

static long sys_lseek(uint64_t fd, uint64_t off, uint64_t whence)
{
	struct file *f;
	long r = fd_get((int)fd, &f);

	if (r)
		return r;
	if (!file_seekable(f))
		r = -ESPIPE;
	else if (whence > SEEK_MAX)
		r = -EINVAL;
	else
		r = f->ops->llseek(f, (int64_t)off, (int)whence);
	file_put(f);
	return r;
}
SYSCALL(__NR_lseek, sys_lseek);

static long sys_ioctl(uint64_t fd, uint64_t cmd_, uint64_t arg)
{
	unsigned int cmd = (unsigned int)cmd_;
	struct file *f;
	long r = fd_get((int)fd, &f);
	int v;

	if (r)
		return r;
	switch (cmd) {
	case FIONBIO:
		if (ksvc_copy_from_user(&v, (const void *)arg, sizeof(v))) {
			r = -EFAULT;
			break;
		}
		if (v)
			atomic_fetch_or(&f->flags, (unsigned int)O_NONBLOCK);
		else
			atomic_fetch_and(&f->flags, ~(unsigned int)O_NONBLOCK);
		break;
	case FIOCLEX:
	case FIONCLEX:
		r = fd_set_cloexec((int)fd, cmd == FIOCLEX);
		break;
	case FIOASYNC:
		break;
	default:
		r = f->ops && f->ops->ioctl ? f->ops->ioctl(f, cmd, (unsigned long)arg) : -ENOTTY;
	}
	file_put(f);
	return r;
}
SYSCALL(__NR_ioctl, sys_ioctl);

static long sys_getdents64(uint64_t fd, uint64_t buf, uint64_t n)
{
	struct file *f;
	long r = fd_get((int)fd, &f);

	if (r)
		return r;
	r = f->ops && f->ops->getdents ? f->ops->getdents(f, (void *)buf, MIN(n, (uint64_t)INT32_MAX))
				       : -ENOTDIR;
	file_put(f);
	return r;
}
SYSCALL(__NR_getdents64, sys_getdents64);

static long sys_fsync(uint64_t fd)
{
	struct file *f;
	long r = fd_get((int)fd, &f);

	if (!r)
		file_put(f);
	return r;
}
SYSCALL(__NR_fsync, sys_fsync);
SYSCALL(__NR_fdatasync, sys_fsync);

/* ---- sendfile and copy_file_range: a page at a time through a kernel buffer ---- */

/* Write kernel bytes to f at *pos (regular files) or its stream: bytes or -errno. */
static long file_write_kernel(struct file *f, const void *kbuf, size_t n, uint64_t *pos)
{
	if (f->ops == &ramfs_file_ops)
		return ramfs_write(f->inode, kbuf, n, pos, atomic_load(&f->flags) & O_APPEND, false);
	if (file_is_pipe(f))
		return pipe_write_kernel(f, kbuf, n);
	return dev_write_kernel(f, kbuf, n);
}

/* Copy count bytes from regular file in at *ipos to out at *opos: bytes or -errno. */
static long copy_between(struct file *in, uint64_t *ipos, struct file *out, uint64_t *opos,
			 size_t count)
{
	char *kbuf = kmalloc(KSVC_PAGE_SIZE);
	size_t done = 0;
	long r = 0;

	if (!kbuf)
		return -ENOMEM;
	count = MIN(count, (size_t)MAX_RW_COUNT);
	while (done < count) {
		size_t c = MIN(count - done, (size_t)KSVC_PAGE_SIZE);
		long w;

		r = ramfs_read(in->inode, kbuf, c, *ipos, false);
		if (r <= 0)
			break;
		w = file_write_kernel(out, kbuf, (size_t)r, opos);
		if (w <= 0) {
			r = w;
			break;
		}
		*ipos += (uint64_t)w;
		done += (size_t)w;
		if (w < r)
			break;
	}
	kfree(kbuf);
	return done ? (long)done : r;
}

static long sys_sendfile(uint64_t out_fd, uint64_t in_fd, uint64_t uoff, uint64_t count)
{
	struct file *in, *out;
	int64_t off = 0;
	uint64_t pos, opos;
	long r = fd_get((int)in_fd, &in);

	if (r)
		return r;
	r = fd_get((int)out_fd, &out);
	if (r) {
		file_put(in);
		return r;
	}
	if (!file_readable(in) || !file_writable(out))
		r = -EBADF;
	else if (in->ops != &ramfs_file_ops || (atomic_load(&out->flags) & O_APPEND))
		r = -EINVAL;
	else if (uoff && ksvc_copy_from_user(&off, (const void *)uoff, sizeof(off)))
		r = -EFAULT;
	else if (off < 0)
		r = -EINVAL;
	if (!r) {
		pos = uoff ? (uint64_t)off : in->pos;
		opos = out->pos;
		r = copy_between(in, &pos, out, &opos, count);
		if (out->ops == &ramfs_file_ops)
			out->pos = opos;
		if (uoff) {
			off = (int64_t)pos;
			if (ksvc_copy_to_user((void *)uoff, &off, sizeof(off)))
				r = -EFAULT;
		} else {
			in->pos = pos;
		}
	}
	file_put(in);
	file_put(out);
	return r;
}
SYSCALL(__NR_sendfile, sys_sendfile);

static long sys_copy_file_range(uint64_t fd_in, uint64_t uoff_in, uint64_t fd_out,
				uint64_t uoff_out, uint64_t len, uint64_t flags)
{
	struct file *in, *out;
	int64_t oin = 0, oout = 0;
	uint64_t ipos, opos;
	long r;

	if (flags)
		return -EINVAL;
	r = fd_get((int)fd_in, &in);
	if (r)
		return r;
	r = fd_get((int)fd_out, &out);
	if (r) {
		file_put(in);
		return r;
	}
	if (!file_readable(in) || !file_writable(out) || (atomic_load(&out->flags) & O_APPEND))
		r = -EBADF;
	else if (in->ops == &ramfs_dir_ops || out->ops == &ramfs_dir_ops)
		r = -EISDIR;
	else if (in->ops != &ramfs_file_ops || out->ops != &ramfs_file_ops)
		r = -EINVAL;
	else if ((uoff_in && ksvc_copy_from_user(&oin, (const void *)uoff_in, sizeof(oin))) ||
		 (uoff_out && ksvc_copy_from_user(&oout, (const void *)uoff_out, sizeof(oout))))
		r = -EFAULT;
	else if (oin < 0 || oout < 0)
		r = -EINVAL;
	if (!r) {
		ipos = uoff_in ? (uint64_t)oin : in->pos;
		opos = uoff_out ? (uint64_t)oout : out->pos;
		if (in->inode == out->inode && ipos < opos + len && opos < ipos + len)
			r = -EINVAL; /* overlapping ranges of one file */
		else
			r = copy_between(in, &ipos, out, &opos, len);
	}
	if (r >= 0) {
		oin = (int64_t)ipos;
		oout = (int64_t)opos;
		if (uoff_in)
			(void)ksvc_copy_to_user((void *)uoff_in, &oin, sizeof(oin));
		else
			in->pos = ipos;
		if (uoff_out)
			(void)ksvc_copy_to_user((void *)uoff_out, &oout, sizeof(oout));
		else
			out->pos = opos;
	}
	file_put(in);
	file_put(out);
	return r;
}
SYSCALL(__NR_copy_file_range, sys_copy_file_range);
