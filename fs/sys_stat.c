/*
 * sys_stat.c - syscalls about one file by path or descriptor: openat, fstat, newfstatat,
 * statx, faccessat, faccessat2, fchmod, fchmodat, truncate, ftruncate, umask, chdir, fchdir,
 * getcwd.
 *
 * What it does: copies paths in (PATH_MAX buffers from kmalloc), resolves them with namei.c,
 * fills the arm64 struct stat (asm-generic layout) and struct statx.  Everything is owned by
 * uid 0, so access checks are root's: R_OK and W_OK always pass, X_OK needs some x bit on
 * anything but a directory.  Anonymous files (perf, bpf) stat as Linux's anon inode: mode
 * 0600 without a type.
 *
 * What it does not do: chown, utimensat, btime (statx leaves STATX_BTIME out of stx_mask).
 *
 * ABI: struct stat from <asm/stat.h>, struct statx and STATX_* from <linux/stat.h>, AT_*
 * from <linux/fcntl.h>; getcwd returns the length including the NUL (ERANGE when it does
 * not fit), as the raw Linux syscall does.
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm/stat.h>
#include <linux/fcntl.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include "fs_internal.h"

_Static_assert(sizeof(struct stat) == 128, "arm64 struct stat");
_Static_assert(offsetof(struct stat, st_size) == 48, "st_size");
_Static_assert(sizeof(struct statx) == 256, "struct statx");

#define NSEC 1000000000ull

struct kstat {
	uint64_t ino, size, blocks, atime, mtime, ctime;
	uint32_t mode, nlink, rdev, dev, uid, gid;
};

static void kstat_fill(struct inode *ino, struct kstat *ks)
{
	memset(ks, 0, sizeof(*ks));
	if (!ino) { /* anon inode */
		ks->mode = 0600;
		ks->nlink = 1;
		ks->ino = 1;
		ks->dev = 0xf;
		return;
	}
	fs_mutex_lock(&vfs_lock);
	ks->ino = ino->ino;
	ks->mode = ino->mode;
	ks->nlink = ino->nlink;
	ks->size = S_ISDIR(ino->mode) ? 0 : ino->size;
	if (S_ISREG(ino->mode)) {
		for (uint64_t i = 0; i < ino->pages_cap; i++)
			ks->blocks += ino->pages[i] ? KSVC_PAGE_SIZE / 512 : 0;
	}
	if (S_ISFIFO(ino->mode)) {
		ks->size = 0;
		ks->nlink = 1;
	}
	ks->rdev = ino->rdev;
	ks->dev = ino->fs_magic == CGROUP2_SUPER_MAGIC ? CGROUP_DEV : VFS_DEV;
	ks->uid = ino->uid;
	ks->gid = ino->gid;
	ks->atime = ino->atime_ns;
	ks->mtime = ino->mtime_ns;
	ks->ctime = ino->ctime_ns;
	fs_mutex_unlock(&vfs_lock);
}

static int stat_to_user(const struct kstat *ks, void *ubuf)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = ks->dev;
	st.st_ino = ks->ino;
	st.st_mode = ks->mode;
	st.st_nlink = ks->nlink;
	st.st_uid = ks->uid;
	st.st_gid = ks->gid;
	st.st_rdev = ks->rdev;
	st.st_size = (long)ks->size;
	st.st_blksize = KSVC_PAGE_SIZE;
	st.st_blocks = (long)ks->blocks;
	st.st_atime = (long)(ks->atime / NSEC);
	st.st_atime_nsec = ks->atime % NSEC;
	st.st_mtime = (long)(ks->mtime / NSEC);
	st.st_mtime_nsec = ks->mtime % NSEC;
	st.st_ctime = (long)(ks->ctime / NSEC);
	st.st_ctime_nsec = ks->ctime % NSEC;
	return ksvc_copy_to_user(ubuf, &st, sizeof(st));
}

static void statx_ts(struct statx_timestamp *t, uint64_t ns)
{
	t->tv_sec = (int64_t)(ns / NSEC);
	t->tv_nsec = (uint32_t)(ns % NSEC);
}

static int statx_to_user(const struct kstat *ks, void *ubuf)
{
	struct statx sx;

	memset(&sx, 0, sizeof(sx));
	sx.stx_mask = STATX_BASIC_STATS;
	sx.stx_blksize = KSVC_PAGE_SIZE;
	sx.stx_nlink = ks->nlink;
	sx.stx_uid = ks->uid;
	sx.stx_gid = ks->gid;
	sx.stx_mode = (uint16_t)ks->mode;
	sx.stx_ino = ks->ino;
	sx.stx_size = ks->size;
	sx.stx_blocks = ks->blocks;
	statx_ts(&sx.stx_atime, ks->atime);
	statx_ts(&sx.stx_ctime, ks->ctime);
	statx_ts(&sx.stx_mtime, ks->mtime);
	sx.stx_rdev_major = ks->rdev >> 8;
	sx.stx_rdev_minor = ks->rdev & 0xff;
	sx.stx_dev_major = ks->dev >> 8;
	sx.stx_dev_minor = ks->dev & 0xff;
	return ksvc_copy_to_user(ubuf, &sx, sizeof(sx));
}

/* What path (or, with AT_EMPTY_PATH and "", dirfd itself) names, as a kstat. */
static int stat_at(int dirfd, uint64_t upath, unsigned int flags, struct kstat *ks)
{
	struct inode *ino;
	char *kpath;
	int err = vfs_path_from_user((const void *)upath, &kpath);

	if (err)
		return err;
	if (!kpath[0] && (flags & AT_EMPTY_PATH)) {
		struct file *f;

		kfree(kpath);
		if (dirfd == AT_FDCWD) {
			err = vfs_base_get(AT_FDCWD, "", &ino);
			if (err)
				return err;
			kstat_fill(ino, ks);
			inode_put(ino);
			return 0;
		}
		err = fd_get(dirfd, &f);
		if (err)
			return err;
		kstat_fill(f->inode, ks);
		file_put(f);
		return 0;
	}
	err = vfs_lookup_at(dirfd, kpath, !(flags & AT_SYMLINK_NOFOLLOW), &ino);
	kfree(kpath);
	if (err)
		return err;
	kstat_fill(ino, ks);
	inode_put(ino);
	return 0;
}

static long sys_openat(uint64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mode)
{
	struct proc *p = current_task()->proc;
	struct inode *base;
	struct file *f;
	char *kpath;
	int err = vfs_path_from_user((const void *)upath, &kpath), fd;

	if (err)
		return err;
	err = -ENOENT;
	if (!kpath[0])
		goto out_free;
	err = vfs_base_get((int)dirfd, kpath, &base);
	if (err)
		goto out_free;
	mode &= 07777;
	if (p)
		mode &= ~(uint64_t)p->umask;
	err = vfs_openat(base, kpath, (int)flags, (uint32_t)mode, &f);
	inode_put(base);
	if (err)
		goto out_free;
	fd = fd_install(f, flags & O_CLOEXEC);
	if (fd < 0)
		file_put(f);
	err = fd;
out_free:
	kfree(kpath);
	return err;
}
SYSCALL(__NR_openat, sys_openat);

static long sys_fstat(uint64_t fd, uint64_t ubuf)
{
	struct kstat ks;
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (err)
		return err;
	kstat_fill(f->inode, &ks);
	file_put(f);
	return stat_to_user(&ks, (void *)ubuf);
}
SYSCALL(__NR_fstat, sys_fstat);

static long sys_newfstatat(uint64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t flags)
{
	struct kstat ks;
	int err;

	if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
		return -EINVAL;
	err = stat_at((int)dirfd, upath, (unsigned int)flags, &ks);
	return err ? err : stat_to_user(&ks, (void *)ubuf);
}
SYSCALL(__NR_newfstatat, sys_newfstatat);

static long sys_statx(uint64_t dirfd, uint64_t upath, uint64_t flags, uint64_t mask,
		      uint64_t ubuf)
{
	struct kstat ks;
	int err;

	if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH |
				AT_STATX_SYNC_TYPE))
		return -EINVAL;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if ((uint32_t)mask & STATX__RESERVED)
		return -EINVAL;
	err = stat_at((int)dirfd, upath, (unsigned int)flags, &ks);
	return err ? err : statx_to_user(&ks, (void *)ubuf);
}
SYSCALL(__NR_statx, sys_statx);

static long do_faccessat(uint64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
	struct kstat ks;
	int err;

	if (mode & ~(uint64_t)7)
		return -EINVAL;
	if (flags & ~(uint64_t)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	err = stat_at((int)dirfd, upath, (unsigned int)flags, &ks);
	if (err)
		return err;
	/* root: X_OK needs an x bit somewhere unless it is a directory */
	if ((mode & 1) && !S_ISDIR(ks.mode) && !(ks.mode & 0111))
		return -EACCES;
	return 0;
}

static long sys_faccessat(uint64_t dirfd, uint64_t upath, uint64_t mode)
{
	return do_faccessat(dirfd, upath, mode, 0);
}
SYSCALL(__NR_faccessat, sys_faccessat);

static long sys_faccessat2(uint64_t dirfd, uint64_t upath, uint64_t mode, uint64_t flags)
{
	return do_faccessat(dirfd, upath, mode, flags);
}
SYSCALL(__NR_faccessat2, sys_faccessat2);

static void inode_chmod(struct inode *ino, uint64_t mode)
{
	fs_mutex_lock(&vfs_lock);
	ino->mode = (ino->mode & S_IFMT) | ((uint32_t)mode & 07777);
	ino->ctime_ns = vfs_now_ns();
	fs_mutex_unlock(&vfs_lock);
}

static long sys_fchmod(uint64_t fd, uint64_t mode)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (err)
		return err;
	if (f->inode)
		inode_chmod(f->inode, mode);
	file_put(f);
	return 0;
}
SYSCALL(__NR_fchmod, sys_fchmod);

static long sys_fchmodat(uint64_t dirfd, uint64_t upath, uint64_t mode)
{
	struct inode *ino;
	char *kpath;
	int err = vfs_path_from_user((const void *)upath, &kpath);

	if (err)
		return err;
	err = vfs_lookup_at((int)dirfd, kpath, true, &ino);
	kfree(kpath);
	if (err)
		return err;
	inode_chmod(ino, mode);
	inode_put(ino);
	return 0;
}
SYSCALL(__NR_fchmodat, sys_fchmodat);

static int do_truncate(struct inode *ino, int64_t len)
{
	int err = 0;

	if (len < 0)
		return -EINVAL;
	if (len > (1ll << 46))
		return -EFBIG;
	fs_mutex_lock(&vfs_lock);
	if (S_ISDIR(ino->mode))
		err = -EISDIR;
	else if (!S_ISREG(ino->mode))
		err = -EINVAL;
	else
		err = ramfs_truncate_locked(ino, (uint64_t)len);
	fs_mutex_unlock(&vfs_lock);
	return err;
}

static long sys_truncate(uint64_t upath, uint64_t len)
{
	struct inode *ino;
	char *kpath;
	int err;

	if ((int64_t)len < 0)
		return -EINVAL;
	err = vfs_path_from_user((const void *)upath, &kpath);
	if (err)
		return err;
	err = vfs_lookup_at(AT_FDCWD, kpath, true, &ino);
	kfree(kpath);
	if (err)
		return err;
	err = do_truncate(ino, (int64_t)len);
	inode_put(ino);
	return err;
}
SYSCALL(__NR_truncate, sys_truncate);

static long sys_ftruncate(uint64_t fd, uint64_t len)
{
	struct file *f;
	int err;

	if ((int64_t)len < 0)
		return -EINVAL;
	err = fd_get((int)fd, &f);
	if (err)
		return err;
	if (!f->inode || !S_ISREG(f->inode->mode) || !file_writable(f))
		err = -EINVAL;
	else
		err = do_truncate(f->inode, (int64_t)len);
	file_put(f);
	return err;
}
SYSCALL(__NR_ftruncate, sys_ftruncate);

static long sys_umask(uint64_t mask)
{
	struct proc *p = current_task()->proc;
	uint32_t old;

	if (!p)
		return 022;
	old = p->umask;
	p->umask = (uint32_t)mask & 0777;
	return old;
}
SYSCALL(__NR_umask, sys_umask);

/* ---- the working directory ---- */

static int set_cwd(struct inode *ino)
{
	struct proc *p = current_task()->proc;
	struct inode *old;
	unsigned long fl;

	if (!S_ISDIR(ino->mode)) {
		inode_put(ino);
		return -ENOTDIR;
	}
	if (!p) {
		inode_put(ino);
		return -EINVAL;
	}
	fl = spin_lock_irqsave(&p->lock);
	old = p->cwd;
	p->cwd = ino;
	spin_unlock_irqrestore(&p->lock, fl);
	inode_put(old);
	return 0;
}

static long sys_chdir(uint64_t upath)
{
	struct inode *ino;
	char *kpath;
	int err = vfs_path_from_user((const void *)upath, &kpath);

	if (err)
		return err;
	err = vfs_lookup_at(AT_FDCWD, kpath, true, &ino);
	kfree(kpath);
	return err ? err : set_cwd(ino);
}
SYSCALL(__NR_chdir, sys_chdir);

static long sys_fchdir(uint64_t fd)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (err)
		return err;
	if (!f->inode) {
		file_put(f);
		return -ENOTDIR;
	}
	inode_get(f->inode);
	err = set_cwd(f->inode);
	file_put(f);
	return err;
}
SYSCALL(__NR_fchdir, sys_fchdir);

static long sys_getcwd(uint64_t ubuf, uint64_t size)
{
	struct inode *cwd;
	char *buf = kmalloc(VFS_PATH_MAX);
	size_t at;
	long r;
	int err;

	if (!buf)
		return -ENOMEM;
	err = vfs_base_get(AT_FDCWD, "", &cwd);
	if (err) {
		kfree(buf);
		return err;
	}
	fs_mutex_lock(&vfs_lock);
	err = vfs_dir_path_locked(cwd, buf, VFS_PATH_MAX, &at);
	fs_mutex_unlock(&vfs_lock);
	inode_put(cwd);
	r = err ? err : (long)(VFS_PATH_MAX - at);
	if (r > 0 && (uint64_t)r > size)
		r = -ERANGE;
	else if (r > 0 && ksvc_copy_to_user((void *)ubuf, buf + at, (size_t)r))
		r = -EFAULT;
	kfree(buf);
	return r;
}
SYSCALL(__NR_getcwd, sys_getcwd);
