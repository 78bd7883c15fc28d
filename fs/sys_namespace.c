/*
 * sys_namespace.c - syscalls that change directories: mkdirat, unlinkat (AT_REMOVEDIR),
 * renameat2 (0, RENAME_NOREPLACE, RENAME_EXCHANGE), linkat, symlinkat, and readlinkat.
 *
 * What it does: each resolves the parent directory with vfs_parent_begin (which holds
 * vfs_lock until vfs_parent_end), decides every error first, allocates, then changes the
 * tree (decode, then commit).  Errors are Linux's for the edge cases: "." / ".." / "/" as the
 * last component, trailing slashes on non-directories, a directory moved under itself
 * (EINVAL), hard links to directories (EPERM), renames across parents of a directory.
 *
 * What it does not do: mknodat, RENAME_WHITEOUT (EINVAL, as ramfs), sticky-bit checks.
 *
 * ABI: AT_REMOVEDIR, AT_SYMLINK_FOLLOW, AT_EMPTY_PATH (<linux/fcntl.h>), RENAME_* (<linux/fs.h>);
 * readlinkat copies at most bufsiz bytes without a NUL and returns the count.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include "fs_internal.h"

static uint32_t cur_umask(void)
{
	struct proc *p = current_task()->proc;

	return p ? p->umask : 022;
}

/* Create a new inode of mode in pp's directory (which must not have the name yet). */
static int create_locked(struct vfs_parent *pp, uint32_t mode, struct inode **out)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino;
	int err;

	if (pp->dir->nlink == 0)
		return -ENOENT; /* the directory was removed */
	if (pp->dir->fs_magic == CGROUP2_SUPER_MAGIC)
		return -EPERM; /* kernfs: no symlinks, nodes or files of one's own */
	ino = ramfs_inode_new(mode);
	if (!ino)
		return -ENOMEM;
	if (pp->dir->fs_magic == BPF_FS_MAGIC)
		ino->fs_magic = BPF_FS_MAGIC; /* a directory of a bpf filesystem is one too */
	err = ramfs_link_locked(pp->dir, pp->last, pp->len, ino);
	if (err) {
		inode_put_locked(ino);
		return err;
	}
	fsnotify_dir_locked(pp->dir, IN_CREATE, pp->last, pp->len, ino, 0);
	*out = ino;
	return 0;
}

static long sys_mkdirat(uint64_t dirfd, uint64_t upath, uint64_t mode)
{
	struct vfs_parent pp;
	struct inode *ino;
	int err = vfs_parent_begin_op((int)dirfd, (const void *)upath, &pp, VFS_PARENT_CREATE);

	if (err)
		return err;
	if (vfs_name_is_dots(pp.last, pp.len) || ramfs_lookup_locked(pp.dir, pp.last, pp.len))
		err = -EEXIST;
	else if (pp.dir->fs_magic == CGROUP2_SUPER_MAGIC)
		err = cgroupfs_mkdir_locked(pp.dir, pp.last, pp.len,
					    (uint32_t)mode & 01777 & ~cur_umask());
	else if (!(err = create_locked(&pp, S_IFDIR | ((uint32_t)mode & 01777 & ~cur_umask()),
				       &ino)))
		inode_put_locked(ino);
	vfs_parent_end(&pp);
	return err;
}
SYSCALL(__NR_mkdirat, sys_mkdirat);

static long sys_unlinkat(uint64_t dirfd, uint64_t upath, uint64_t flags)
{
	bool rmdir = flags & AT_REMOVEDIR;
	struct ramfs_dirent *de;
	struct vfs_parent pp;
	struct inode *ino;
	int err;

	if (flags & ~(uint64_t)AT_REMOVEDIR)
		return -EINVAL;
	err = vfs_parent_begin_op((int)dirfd, (const void *)upath, &pp,
				  rmdir ? VFS_PARENT_RMDIR : VFS_PARENT_ANY);
	if (err)
		return err;
	if (vfs_name_is_dots(pp.last, pp.len)) {
		if (!rmdir)
			err = -EISDIR;
		else if (pp.len == 0)
			err = -EBUSY;
		else
			err = pp.len == 1 ? -EINVAL : -ENOTEMPTY;
		goto out;
	}
	de = ramfs_lookup_locked(pp.dir, pp.last, pp.len);
	if (!de) {
		err = -ENOENT;
		goto out;
	}
	ino = de->inode;
	if (pp.dir->fs_magic == CGROUP2_SUPER_MAGIC) {
		/* a cgroup goes with rmdir; its files never go */
		if (rmdir)
			err = cgroupfs_rmdir_locked(pp.dir, de);
		else
			err = S_ISDIR(ino->mode) ? -EISDIR : -EPERM;
		goto out;
	}
	if (rmdir) {
		if (!S_ISDIR(ino->mode))
			err = -ENOTDIR;
		else if (!ramfs_dir_empty_locked(ino))
			err = -ENOTEMPTY;
		else if (ino == vfs_root())
			err = -EBUSY;
	} else if (S_ISDIR(ino->mode)) {
		err = -EISDIR;
	} else if (pp.trailing) {
		err = -ENOTDIR;
	}
	if (!err) {
		/* Linux's order: the inode's end (at its iput) before the directory's event */
		if (S_ISDIR(ino->mode) || ino->nlink == 1)
			fsnotify_gone_locked(ino);
		fsnotify_dir_locked(pp.dir, IN_DELETE, pp.last, pp.len, ino, 0);
		ramfs_unlink_locked(pp.dir, de);
	}
out:
	vfs_parent_end(&pp);
	return err;
}
SYSCALL(__NR_unlinkat, sys_unlinkat);

static long sys_symlinkat(uint64_t utarget, uint64_t dirfd, uint64_t upath)
{
	struct vfs_parent pp;
	struct inode *ino;
	char *target;
	size_t tlen;
	int err = vfs_path_from_user((const void *)utarget, &target);

	if (err)
		return err;
	tlen = strlen(target);
	if (!tlen) {
		kfree(target);
		return -ENOENT;
	}
	char *small = kmalloc(tlen + 1); /* keep only what the target needs */

	if (!small) {
		kfree(target);
		return -ENOMEM;
	}
	memcpy(small, target, tlen + 1);
	kfree(target);
	target = small;
	err = vfs_parent_begin_op((int)dirfd, (const void *)upath, &pp, VFS_PARENT_CREATE);
	if (err) {
		kfree(target);
		return err;
	}
	if (vfs_name_is_dots(pp.last, pp.len) || ramfs_lookup_locked(pp.dir, pp.last, pp.len))
		err = -EEXIST;
	else if (pp.trailing)
		err = -ENOENT;
	else
		err = create_locked(&pp, S_IFLNK | 0777, &ino);
	if (!err) {
		ino->target = target;
		ino->size = tlen;
		target = NULL;
		inode_put_locked(ino);
	}
	vfs_parent_end(&pp);
	kfree(target);
	return err;
}
SYSCALL(__NR_symlinkat, sys_symlinkat);

static long sys_readlinkat(uint64_t dirfd, uint64_t upath, uint64_t ubuf, uint64_t size)
{
	struct inode *ino;
	char *kpath;
	size_t n = 0;
	int err;

	if ((int64_t)(int)size <= 0)
		return -EINVAL;
	err = vfs_path_from_user((const void *)upath, &kpath);
	if (err)
		return err;
	err = vfs_lookup_at((int)dirfd, kpath, false, &ino);
	if (!err) {
		if (!S_ISLNK(ino->mode)) {
			err = -EINVAL;
		} else if (ino->pseudo && ino->pseudo->readlink) {
			long r = ino->pseudo->readlink(ino, kpath, MIN((size_t)size,
								      (size_t)VFS_PATH_MAX));

			if (r < 0)
				err = (int)r;
			else
				n = (size_t)r;
		} else {
			n = MIN((size_t)size, strlen(ino->target));
			memcpy(kpath, ino->target, n); /* the target never changes */
		}
		inode_put(ino);
	}
	if (!err && ksvc_copy_to_user((void *)ubuf, kpath, n))
		err = -EFAULT;
	kfree(kpath);
	return err ? err : (long)n;
}
SYSCALL(__NR_readlinkat, sys_readlinkat);

static long sys_linkat(uint64_t olddirfd, uint64_t uold, uint64_t newdirfd, uint64_t unew,
		       uint64_t flags)
{
	struct vfs_parent pp;
	struct inode *ino;
	char *kold;
	int err;

	if (flags & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	err = vfs_path_from_user((const void *)uold, &kold);
	if (err)
		return err;
	err = vfs_lookup_at((int)olddirfd, kold, flags & AT_SYMLINK_FOLLOW, &ino);
	kfree(kold);
	if (err)
		return err;
	err = vfs_parent_begin_op((int)newdirfd, (const void *)unew, &pp, VFS_PARENT_CREATE);
	if (err) {
		inode_put(ino);
		return err;
	}
	if (S_ISDIR(ino->mode))
		err = -EPERM;
	else if (vfs_name_is_dots(pp.last, pp.len) || ramfs_lookup_locked(pp.dir, pp.last, pp.len))
		err = -EEXIST;
	else if (pp.dir->fs_magic == CGROUP2_SUPER_MAGIC || ino->fs_magic == CGROUP2_SUPER_MAGIC)
		err = -EPERM;
	else if (pp.trailing)
		err = -ENOENT;
	else if (pp.dir->nlink == 0 || ino->nlink == 0)
		err = -ENOENT;
	else if (!(err = ramfs_link_locked(pp.dir, pp.last, pp.len, ino)))
		fsnotify_dir_locked(pp.dir, IN_CREATE, pp.last, pp.len, ino, 0);
	inode_put_locked(ino);
	vfs_parent_end(&pp);
	return err;
}
SYSCALL(__NR_linkat, sys_linkat);

/* ---- rename ---- */

/* Is d inside (or equal to) the directory anc? */
static bool is_within_locked(struct inode *d, struct inode *anc)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *root = vfs_root();

	for (; d; d = d->parent) {
		if (d == anc)
			return true;
		if (d == root)
			break;
	}
	return false;
}

/* Point dirent de (in dir from) at ino, moving a directory's ".." to to. */
static void reparent_locked(struct inode *ino, struct inode *from, struct inode *to)
{
	fs_mutex_assert_held(&vfs_lock);
	if (!S_ISDIR(ino->mode) || from == to)
		return;
	from->nlink--;
	to->nlink++;
	ino->parent = to;
}

static int rename_check_locked(struct inode *src, struct inode *dst, struct inode *newdir,
			       unsigned int flags)
{
	fs_mutex_assert_held(&vfs_lock);
	if (S_ISDIR(src->mode) && is_within_locked(newdir, src))
		return -EINVAL;
	if (!dst)
		return 0;
	if (flags & RENAME_EXCHANGE)
		return S_ISDIR(dst->mode) && is_within_locked(src->parent ? src->parent : src, dst)
			       ? -EINVAL
			       : 0;
	if (S_ISDIR(src->mode) && !S_ISDIR(dst->mode))
		return -ENOTDIR;
	if (!S_ISDIR(src->mode) && S_ISDIR(dst->mode))
		return -EISDIR;
	if (S_ISDIR(dst->mode) && !ramfs_dir_empty_locked(dst))
		return -ENOTEMPTY;
	return 0;
}

/* inotify: ino moved from from's name to to's, one cookie for the pair */
static void rename_notify_locked(struct vfs_parent *from, struct vfs_parent *to,
				 struct inode *ino)
{
	uint32_t cookie = fsnotify_cookie();

	fsnotify_dir_locked(from->dir, IN_MOVED_FROM, from->last, from->len, ino, cookie);
	fsnotify_dir_locked(to->dir, IN_MOVED_TO, to->last, to->len, ino, cookie);
}

static long sys_renameat2(uint64_t olddirfd, uint64_t uold, uint64_t newdirfd, uint64_t unew,
			  uint64_t flags_)
{
	unsigned int flags = (unsigned int)flags_;
	struct ramfs_dirent *sde, *dde, *nde = NULL;
	struct vfs_parent op, np;
	struct inode *src, *dst;
	int err;

	if (flags_ & ~(uint64_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	err = vfs_parent_begin((int)olddirfd, (const void *)uold, &op);
	if (err)
		return err;
	/* Hold the old parent by reference while the lock is dropped to resolve the new one. */
	inode_get(op.dir);
	fs_mutex_unlock(&vfs_lock);
	err = vfs_parent_begin((int)newdirfd, (const void *)unew, &np);
	if (err) {
		fs_mutex_lock(&vfs_lock);
		goto out_old;
	}
	err = -EBUSY;
	if (vfs_name_is_dots(op.last, op.len) || vfs_name_is_dots(np.last, np.len))
		goto out_both;
	err = -ENOENT;
	if (op.dir->nlink == 0 || np.dir->nlink == 0)
		goto out_both;
	sde = ramfs_lookup_locked(op.dir, op.last, op.len);
	if (!sde)
		goto out_both;
	err = -EPERM; /* cgroup2 has no rename */
	if (op.dir->fs_magic == CGROUP2_SUPER_MAGIC || np.dir->fs_magic == CGROUP2_SUPER_MAGIC)
		goto out_both;
	src = sde->inode;
	dde = ramfs_lookup_locked(np.dir, np.last, np.len);
	dst = dde ? dde->inode : NULL;
	if ((flags & RENAME_EXCHANGE) && !dst)
		goto out_both;
	err = -EEXIST;
	if ((flags & RENAME_NOREPLACE) && dst)
		goto out_both;
	err = -ENOTDIR;
	if (!S_ISDIR(src->mode) && (op.trailing || np.trailing))
		goto out_both;
	err = 0;
	if (src == dst)
		goto out_both;
	err = rename_check_locked(src, dst, np.dir, flags);
	if (err)
		goto out_both;
	if (flags & RENAME_EXCHANGE) {
		sde->inode = dst;
		dde->inode = src;
		reparent_locked(src, op.dir, np.dir);
		reparent_locked(dst, np.dir, op.dir);
		src->ctime_ns = dst->ctime_ns = vfs_now_ns();
		rename_notify_locked(&op, &np, src);
		rename_notify_locked(&np, &op, dst);
		goto out_both;
	}
	nde = kmalloc(sizeof(*nde) + np.len + 1);
	err = -ENOMEM;
	if (!nde)
		goto out_both;
	err = 0;
	nde->inode = src;
	nde->len = (uint16_t)np.len;
	memcpy(nde->name, np.last, np.len);
	rename_notify_locked(&op, &np, src);
	if (dde) {
		if (S_ISDIR(dst->mode) || dst->nlink == 1)
			fsnotify_gone_locked(dst);
		ramfs_unlink_locked(np.dir, dde);
	}
	list_del(&sde->node);
	kfree(sde);
	list_add_tail(&np.dir->dirents, &nde->node);
	reparent_locked(src, op.dir, np.dir);
	op.dir->mtime_ns = np.dir->mtime_ns = src->ctime_ns = vfs_now_ns();
out_both:
	vfs_parent_end(&np); /* drops vfs_lock ... */
	fs_mutex_lock(&vfs_lock); /* ... which vfs_parent_end(&op) drops again */
out_old:
	inode_put_locked(op.dir);
	vfs_parent_end(&op);
	return err;
}
SYSCALL(__NR_renameat2, sys_renameat2);

/* renameat(2) is its own syscall on arm64; glibc uses it for renameat2 with flags 0. */
static long sys_renameat(uint64_t olddirfd, uint64_t uold, uint64_t newdirfd, uint64_t unew)
{
	return sys_renameat2(olddirfd, uold, newdirfd, unew, 0);
}
SYSCALL(__NR_renameat, sys_renameat);
