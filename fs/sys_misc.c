/*
 * sys_misc.c - the remaining file syscalls busybox and libc reach for: utimensat, fchown,
 * fchownat, statfs, fstatfs, sync, syncfs, fadvise64, flock, fallocate, mknodat.
 *
 * What it does: timestamps (UTIME_NOW / UTIME_OMIT; NULL times: now), owners (stored and
 * reported by stat; -1 keeps a field), statfs of the one ramfs (f_type RAMFS_MAGIC, 4 KiB
 * blocks, free blocks from the page allocator), fallocate mode 0 and FALLOC_FL_KEEP_SIZE
 * (the size grows; pages are allocated on write anyway), mknodat of regular files, named
 * FIFOs (pipe.c) and the character devices dev.c drives.  sync, syncfs, fadvise64 and flock
 * succeed on valid descriptors: there is no backing store and one machine.
 *
 * What it does not do: sockets and block devices (mknodat: EPERM; bind makes sockets),
 * flock(2) locks that exclude (fcntl record locks do: posix_lock.c).
 *
 * ABI: struct statfs (<asm/statfs.h>), struct __kernel_timespec times[2], UTIME_NOW
 * ((1 << 30) - 1) and UTIME_OMIT ((1 << 30) - 2) as <linux/stat.h> in the kernel defines them.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm/statfs.h>
#include <linux/falloc.h>
#include <linux/fcntl.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include <linux/time_types.h>
#include "fs_internal.h"

#define UTIME_NOW_K ((1l << 30) - 1l)
#define UTIME_OMIT_K ((1l << 30) - 2l)
#define NSEC 1000000000ull

_Static_assert(sizeof(struct statfs) == 120, "arm64 struct statfs");

/* The inode path names from dirfd, or dirfd's own with AT_EMPTY_PATH and "" (or a NULL
 * path when null_ok, as utimensat allows). */
static int inode_at(int dirfd, uint64_t upath, unsigned int flags, bool null_ok,
		    struct inode **out)
{
	char *kpath = NULL;
	int err;

	if (upath || !null_ok) {
		err = vfs_path_from_user((const void *)upath, &kpath);
		if (err)
			return err;
	}
	if (!kpath || (!kpath[0] && (flags & AT_EMPTY_PATH))) {
		kfree(kpath);
		if (dirfd == AT_FDCWD)
			return vfs_base_get(AT_FDCWD, "", out);
		struct file *f;

		err = fd_get(dirfd, &f);
		if (err)
			return err;
		if (f->inode)
			inode_get(f->inode);
		*out = f->inode;
		file_put(f);
		return *out ? 0 : -EPERM;
	}
	err = vfs_lookup_at(dirfd, kpath, !(flags & AT_SYMLINK_NOFOLLOW), out);
	kfree(kpath);
	return err;
}

static bool utime_valid(const struct __kernel_timespec *t)
{
	return t->tv_nsec == UTIME_NOW_K || t->tv_nsec == UTIME_OMIT_K ||
	       (t->tv_nsec >= 0 && t->tv_nsec < (long long)NSEC);
}

static uint64_t utime_ns(const struct __kernel_timespec *t, uint64_t now)
{
	if (t->tv_nsec == UTIME_NOW_K)
		return now;
	return (uint64_t)t->tv_sec * NSEC + (uint64_t)t->tv_nsec;
}

static long sys_utimensat(uint64_t dirfd, uint64_t upath, uint64_t utimes, uint64_t flags)
{
	struct __kernel_timespec t[2] = { { 0, UTIME_NOW_K }, { 0, UTIME_NOW_K } };
	struct inode *ino;
	uint64_t now;
	int err;

	if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (utimes && ksvc_copy_from_user(t, (const void *)utimes, sizeof(t)))
		return -EFAULT;
	if (!utime_valid(&t[0]) || !utime_valid(&t[1]))
		return -EINVAL;
	if (t[0].tv_nsec == UTIME_OMIT_K && t[1].tv_nsec == UTIME_OMIT_K)
		return 0;
	err = inode_at((int)dirfd, upath, (unsigned int)flags, true, &ino);
	if (err)
		return err;
	fs_mutex_lock(&vfs_lock);
	now = vfs_now_ns();
	if (t[0].tv_nsec != UTIME_OMIT_K)
		ino->atime_ns = utime_ns(&t[0], now);
	if (t[1].tv_nsec != UTIME_OMIT_K)
		ino->mtime_ns = utime_ns(&t[1], now);
	ino->ctime_ns = now;
	fs_mutex_unlock(&vfs_lock);
	inode_put(ino);
	return 0;
}
SYSCALL(__NR_utimensat, sys_utimensat);

static void inode_chown(struct inode *ino, uint64_t uid, uint64_t gid)
{
	fs_mutex_lock(&vfs_lock);
	if ((uint32_t)uid != (uint32_t)-1)
		ino->uid = (uint32_t)uid;
	if ((uint32_t)gid != (uint32_t)-1)
		ino->gid = (uint32_t)gid;
	if (S_ISREG(ino->mode) && ((uint32_t)uid != (uint32_t)-1 || (uint32_t)gid != (uint32_t)-1))
		ino->mode &= ~(uint32_t)(S_ISUID | ((ino->mode & S_IXGRP) ? S_ISGID : 0));
	ino->ctime_ns = vfs_now_ns();
	fs_mutex_unlock(&vfs_lock);
}

static long sys_fchownat(uint64_t dirfd, uint64_t upath, uint64_t uid, uint64_t gid,
			 uint64_t flags)
{
	struct inode *ino;
	int err;

	if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	err = inode_at((int)dirfd, upath, (unsigned int)flags, false, &ino);
	if (err)
		return err;
	inode_chown(ino, uid, gid);
	inode_put(ino);
	return 0;
}
SYSCALL(__NR_fchownat, sys_fchownat);

static long sys_fchown(uint64_t fd, uint64_t uid, uint64_t gid)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (err)
		return err;
	if (f->inode)
		inode_chown(f->inode, uid, gid);
	file_put(f);
	return 0;
}
SYSCALL(__NR_fchown, sys_fchown);

static int statfs_to_user(void *ubuf, uint32_t magic)
{
	struct statfs st;

	memset(&st, 0, sizeof(st));
	st.f_type = magic ? magic : RAMFS_MAGIC;
	st.f_bsize = KSVC_PAGE_SIZE;
	st.f_frsize = KSVC_PAGE_SIZE;
	st.f_blocks = (long)(mem_total_bytes() / KSVC_PAGE_SIZE);
	st.f_bfree = st.f_bavail = (long)(mem_free_bytes() / KSVC_PAGE_SIZE);
	st.f_fsid.val[0] = VFS_DEV;
	st.f_namelen = VFS_NAME_MAX;
	return ksvc_copy_to_user(ubuf, &st, sizeof(st));
}

static long sys_statfs(uint64_t upath, uint64_t ubuf)
{
	struct inode *ino;
	int err = inode_at(AT_FDCWD, upath, 0, false, &ino);

	uint32_t magic;

	if (err)
		return err;
	magic = ino->fs_magic;
	inode_put(ino);
	return statfs_to_user((void *)ubuf, magic);
}
SYSCALL(__NR_statfs, sys_statfs);

static long sys_fstatfs(uint64_t fd, uint64_t ubuf)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	uint32_t magic;

	if (err)
		return err;
	magic = f->inode ? f->inode->fs_magic : 0;
	file_put(f);
	return statfs_to_user((void *)ubuf, magic);
}
SYSCALL(__NR_fstatfs, sys_fstatfs);

static long sys_sync(void)
{
	return 0;
}
SYSCALL(__NR_sync, sys_sync);

/* syncfs, fadvise64, flock: nothing to do beyond checking the descriptor. */
static long sys_fd_nop(uint64_t fd)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (!err)
		file_put(f);
	return err;
}
SYSCALL(__NR_syncfs, sys_fd_nop);
SYSCALL(__NR_flock, sys_fd_nop);

static long sys_fadvise64(uint64_t fd, uint64_t off, uint64_t len, uint64_t advice)
{
	struct file *f;
	int err = fd_get((int)fd, &f);

	if (err)
		return err;
	if (f->inode && S_ISFIFO(f->inode->mode))
		err = -ESPIPE;
	else if (advice > 5 || (int64_t)len < 0)
		err = -EINVAL;
	file_put(f);
	return err;
}
SYSCALL(__NR_fadvise64, sys_fadvise64);

static long sys_fallocate(uint64_t fd, uint64_t mode, uint64_t off, uint64_t len)
{
	struct file *f;
	int err;

	if ((int64_t)off < 0 || (int64_t)len <= 0)
		return -EINVAL;
	if (mode & ~(uint64_t)FALLOC_FL_KEEP_SIZE)
		return -EOPNOTSUPP;
	err = fd_get((int)fd, &f);
	if (err)
		return err;
	if (!file_writable(f))
		err = -EBADF;
	else if (!f->inode || S_ISFIFO(f->inode->mode))
		err = -ESPIPE;
	else if (S_ISDIR(f->inode->mode))
		err = -EISDIR;
	else if (!S_ISREG(f->inode->mode))
		err = -ENODEV;
	else if (off + len > (1ull << 46) || off + len < off)
		err = -EFBIG;
	if (!err && !(mode & FALLOC_FL_KEEP_SIZE)) {
		fs_mutex_lock(&vfs_lock);
		if (off + len > f->inode->size)
			f->inode->size = off + len;
		f->inode->ctime_ns = vfs_now_ns();
		fs_mutex_unlock(&vfs_lock);
	}
	file_put(f);
	return err;
}
SYSCALL(__NR_fallocate, sys_fallocate);

static long sys_mknodat(uint64_t dirfd, uint64_t upath, uint64_t mode, uint64_t dev)
{
	uint32_t type = (uint32_t)mode & S_IFMT, rdev = 0;
	const struct file_ops *fops = NULL;
	struct vfs_parent pp;
	struct inode *ino;
	struct proc *p = current_task()->proc;
	int err;

	if (type == 0)
		type = S_IFREG;
	if (type == S_IFDIR)
		return -EPERM;
	if (type != S_IFREG && type != S_IFCHR && type != S_IFIFO)
		return type == S_IFSOCK || type == S_IFBLK ? -EPERM : -EINVAL;
	if (type == S_IFIFO)
		fops = &fifo_fops;
	if (type == S_IFCHR) {
		/* huge_encode_dev layout from the syscall: major bits 8-19, minor 0-7 and 20-31 */
		uint32_t major = ((uint32_t)dev >> 8) & 0xfff, minor = ((uint32_t)dev & 0xff);

		rdev = major << 8 | minor;
		fops = dev_fops_for(rdev);
	}
	err = vfs_parent_begin_op((int)dirfd, (const void *)upath, &pp, VFS_PARENT_CREATE);
	if (err)
		return err;
	if (vfs_name_is_dots(pp.last, pp.len) || ramfs_lookup_locked(pp.dir, pp.last, pp.len))
		err = -EEXIST;
	else if (pp.dir->nlink == 0)
		err = -ENOENT;
	else if (pp.dir->fs_magic == CGROUP2_SUPER_MAGIC)
		err = -EPERM; /* kernfs has no mknod */
	else if (!(ino = ramfs_inode_new(type | ((uint32_t)mode & 07777 & ~(p ? p->umask : 0)))))
		err = -ENOMEM;
	else {
		ino->rdev = rdev;
		ino->fops = fops;
		err = ramfs_link_locked(pp.dir, pp.last, pp.len, ino);
		if (!err)
			fsnotify_dir_locked(pp.dir, IN_CREATE, pp.last, pp.len, ino, 0);
		inode_put_locked(ino);
	}
	vfs_parent_end(&pp);
	return err;
}
SYSCALL(__NR_mknodat, sys_mknodat);
