/*
 * namei.c - path resolution and open: the walk from a starting directory through ".", "..",
 * symlinks and trailing slashes, with Linux's errors; openat's create/exclusive/truncate rules.
 *
 * What it does: resolves kernel path strings under vfs_lock (no inode can be freed while it
 * is held, so the walk takes no references until its result); at most 40 symlinks per
 * resolution (ELOOP), names up to NAME_MAX 255 (ENAMETOOLONG), paths up to PATH_MAX 4096
 * including the NUL.  "/.." is "/".  A path with a trailing "/" must name a directory (or a
 * symlink to one).  Relative paths start at dirfd or the process's cwd (root when none).
 *
 * Mount points (tracefs.c): a directory with ->mounted set is entered as that root.
 * What it does not do: permission checks beyond mode bits (root does
 * everything but exec of a file with no x bit), O_PATH/O_TMPFILE, FIFOs by name.
 *
 * ABI: openat(2) flags from <asm-generic/fcntl.h> via <linux/fcntl.h>; errno as Linux 6.1.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <linux/magic.h>
#include "fs_internal.h"

static struct inode *root_inode;

struct inode *vfs_root(void)
{
	return root_inode;
}

void vfs_set_root(struct inode *root)
{
	root_inode = root;
	root->parent = root;
}

static int walk_rec(struct inode *base, const char *p, const char *end, bool follow, int *links,
		    struct inode **out);

/* One component [c, c + len) of dir: the inode it names, following a symlink when follow. */
static int walk_step(struct inode *dir, const char *c, size_t len, bool follow, int *links,
		     struct inode **out)
{
	struct ramfs_dirent *de;
	struct inode *ino;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (len > VFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 1 && c[0] == '.') {
		*out = dir;
		return 0;
	}
	if (len == 2 && c[0] == '.' && c[1] == '.') {
		if (!dir->parent)
			return -ENOENT; /* a removed directory */
		*out = dir->parent;
		return 0;
	}
	if (dir->pseudo && dir->pseudo->refresh)
		dir->pseudo->refresh(dir, c, len);
	de = ramfs_lookup_locked(dir, c, len);
	if (!de)
		return -ENOENT;
	ino = de->inode;
	if (S_ISLNK(ino->mode) && follow) {
		if (++*links > VFS_SYMLOOP_MAX)
			return -ELOOP;
		if (!ino->target) {
			/* a magic link names its inode directly (/proc/PID/exe) */
			struct inode *t = ino->pseudo && ino->pseudo->follow ? ino->pseudo->follow(ino)
									    : NULL;

			if (!t)
				return -ENOENT;
			*out = t;
			return 0;
		}
		return walk_rec(dir, ino->target, ino->target + strlen(ino->target), true, links,
				out);
	}
	while (ino->mounted)
		ino = ino->mounted; /* a mount point: the mounted filesystem's root */
	*out = ino;
	return 0;
}

static int walk_rec(struct inode *base, const char *p, const char *end, bool follow, int *links,
		    struct inode **out)
{
	struct inode *cur = base;

	if (p == end)
		return -ENOENT;
	if (*p == '/')
		cur = root_inode;
	for (;;) {
		const char *c, *q;
		bool last, trailing;
		int err;

		while (p < end && *p == '/')
			p++;
		if (p == end)
			break;
		c = p;
		while (p < end && *p != '/')
			p++;
		q = p;
		while (q < end && *q == '/')
			q++;
		last = q == end;
		trailing = last && p != end;
		err = walk_step(cur, c, (size_t)(p - c), !last || follow || trailing, links, &cur);
		if (err)
			return err;
		if (trailing && !S_ISDIR(cur->mode))
			return -ENOTDIR;
	}
	*out = cur;
	return 0;
}

int vfs_walk_locked(struct inode *base, const char *path, bool follow, struct inode **out)
{
	fs_mutex_assert_held(&vfs_lock);
	int links = 0;
	size_t len = strnlen(path, VFS_PATH_MAX);

	if (len >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	return walk_rec(base, path, path + len, follow, &links, out);
}

int vfs_walk_parent_locked(struct inode *base, const char *path, struct inode **dir,
			   const char **last, size_t *len, bool *trailing)
{
	size_t n = strnlen(path, VFS_PATH_MAX);
	const char *end = path + n, *name;
	int links = 0;

	if (n == 0)
		return -ENOENT;
	if (n >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	while (end > path && end[-1] == '/')
		end--;
	*trailing = end != path + n;
	name = end;
	while (name > path && name[-1] != '/')
		name--;
	*last = name;
	*len = (size_t)(end - name);
	if (*len > VFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (end == path) { /* "/" or "///" */
		*dir = root_inode;
		return 0;
	}
	if (name == path) {
		*dir = base;
		if (!S_ISDIR(base->mode))
			return -ENOTDIR;
		return 0;
	}
	/* The prefix up to and including the slash before name resolves as a directory. */
	return walk_rec(base, path, name, true, &links, dir) ?: (S_ISDIR((*dir)->mode) ? 0 : -ENOTDIR);
}

int vfs_base_get(int dirfd, const char *path, struct inode **out)
{
	struct proc *p = current_task()->proc;
	struct file *f;
	int err;

	if (path[0] == '/' || (dirfd == AT_FDCWD && !p)) {
		inode_get(root_inode);
		*out = root_inode;
		return 0;
	}
	if (dirfd == AT_FDCWD) {
		unsigned long fl = spin_lock_irqsave(&p->lock);
		struct inode *cwd = p->cwd ? p->cwd : root_inode;

		inode_get(cwd);
		spin_unlock_irqrestore(&p->lock, fl);
		*out = cwd;
		return 0;
	}
	err = fd_get(dirfd, &f);
	if (err)
		return err;
	if (!f->inode || (!S_ISDIR(f->inode->mode) && path[0])) {
		file_put(f);
		return -ENOTDIR;
	}
	inode_get(f->inode);
	*out = f->inode;
	file_put(f);
	return 0;
}

int vfs_path_from_user(const void *upath, char **out)
{
	char *buf = kmalloc(VFS_PATH_MAX);
	long n;

	if (!buf)
		return -ENOMEM;
	n = ksvc_strncpy_from_user(buf, upath, VFS_PATH_MAX);
	if (n < 0) {
		kfree(buf);
		return (int)n;
	}
	*out = buf;
	return 0;
}

const struct file_ops *vfs_inode_fops(struct inode *ino)
{
	if (S_ISREG(ino->mode) && ino->pseudo && ino->fops)
		return ino->fops; /* a pseudo file with reads of its own (tracefs's trace_pipe) */
	if (S_ISREG(ino->mode) && ino->pseudo)
		return &pseudo_file_ops;
	if (S_ISREG(ino->mode))
		return &ramfs_file_ops;
	if (S_ISDIR(ino->mode))
		return &ramfs_dir_ops;
	return ino->fops;
}

static bool is_dots(const char *name, size_t len)
{
	return len == 0 || (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

/*
 * O_CREAT: find or create the last component; *out gets a reference.  A final symlink is
 * followed, and a dangling one creates its target, as Linux does (links counts them).
 */
static int open_create_locked(struct inode *base, const char *path, int flags, uint32_t mode,
			      int links, struct inode **out)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *dir, *ino;
	struct ramfs_dirent *de;
	const char *last;
	size_t len;
	bool trailing;
	int err;

	err = vfs_walk_parent_locked(base, path, &dir, &last, &len, &trailing);
	if (err)
		return err;
	if (trailing || is_dots(last, len))
		return -EISDIR; /* Linux: O_CREAT with a trailing slash is EISDIR */
	de = ramfs_lookup_locked(dir, last, len);
	if (de) {
		if (flags & O_EXCL)
			return -EEXIST;
		ino = de->inode;
		if (S_ISLNK(ino->mode)) {
			if (flags & O_NOFOLLOW)
				return -ELOOP;
			if (!ino->target)
				return -ENOENT;
			if (++links > VFS_SYMLOOP_MAX)
				return -ELOOP;
			return open_create_locked(dir, ino->target, flags, mode, links, out);
		}
		if (S_ISDIR(ino->mode))
			return -EISDIR;
		inode_get(ino);
		*out = ino;
		return 0;
	}
	if (dir->nlink == 0)
		return -ENOENT;
	if (dir->fs_magic)
		return -EACCES; /* no new files in /proc or /sys */
	ino = ramfs_inode_new(S_IFREG | (mode & 07777));
	if (!ino)
		return -ENOMEM;
	err = ramfs_link_locked(dir, last, len, ino);
	if (err) {
		inode_put_locked(ino);
		return err;
	}
	fsnotify_dir_locked(dir, IN_CREATE, last, len, ino, 0);
	*out = ino;
	return 0;
}

/* The name dir has in its parent (directories have exactly one). */
static struct ramfs_dirent *name_in_parent_locked(struct inode *dir)
{
	fs_mutex_assert_held(&vfs_lock);
	struct list_node *n;

	list_for_each(n, &dir->parent->dirents) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);

		if (de->inode == dir)
			return de;
	}
	return NULL;
}

int vfs_dir_path_locked(struct inode *dir, char *buf, size_t cap, size_t *start)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *root = vfs_root();
	size_t at = cap - 1;

	buf[at] = 0;
	for (struct inode *d = dir; d != root; d = d->parent) {
		struct ramfs_dirent *de = d->parent ? name_in_parent_locked(d) : NULL;

		if (!de)
			return -ENOENT; /* removed */
		if (de->len + 1u > at)
			return -ENAMETOOLONG;
		at -= de->len;
		memcpy(buf + at, de->name, de->len);
		buf[--at] = '/';
	}
	if (at == cap - 1)
		buf[--at] = '/';
	*start = at;
	return 0;
}

/* The absolute name a regular file was opened by (MMAP2 records); NULL when unknown. */
static char *open_path_locked(struct inode *base, const char *path)
{
	fs_mutex_assert_held(&vfs_lock);
	size_t len = strlen(path), at;
	char *buf = kmalloc(VFS_PATH_MAX);

	if (!buf)
		return NULL;
	if (path[0] == '/') {
		if (len >= VFS_PATH_MAX)
			goto fail;
		memcpy(buf, path, len + 1);
		return buf;
	}
	if (vfs_dir_path_locked(base, buf, VFS_PATH_MAX, &at))
		goto fail;
	size_t dl = VFS_PATH_MAX - 1 - at; /* without the NUL */

	if (dl + 1 + len + 1 > VFS_PATH_MAX)
		goto fail;
	memmove(buf, buf + at, dl);
	if (dl > 1)
		buf[dl++] = '/';
	memcpy(buf + dl, path[0] == '.' && path[1] == '/' ? path + 2 : path, len + 1);
	return buf;
fail:
	kfree(buf);
	return NULL;
}

int vfs_openat(struct inode *base, const char *path, int flags, uint32_t mode,
	       struct file **out)
{
	char *abs_path = NULL;
	unsigned int acc = (unsigned int)flags & O_ACCMODE;
	struct inode *ino;
	struct file *f;
	int err;

	fs_mutex_lock(&vfs_lock);
	if (flags & O_CREAT) {
		err = open_create_locked(base, path, flags, mode, 0, &ino);
	} else {
		err = vfs_walk_locked(base, path, !(flags & O_NOFOLLOW), &ino);
		if (!err && S_ISLNK(ino->mode))
			err = -ELOOP;
		if (!err)
			inode_get(ino);
	}
	if (err)
		goto out_unlock;
	err = -ENOTDIR;
	if ((flags & O_DIRECTORY) && !S_ISDIR(ino->mode))
		goto out_put;
	err = -EISDIR;
	if (S_ISDIR(ino->mode) && (acc != O_RDONLY || (flags & O_TRUNC)))
		goto out_put;
	err = -ENXIO;
	if (!S_ISREG(ino->mode) && !S_ISDIR(ino->mode) && !vfs_inode_fops(ino))
		goto out_put;
	if (ino->pseudo && ino->pseudo->open && (err = ino->pseudo->open(ino)))
		goto out_put; /* a pinned bpf object (bpffs.c): EIO */
	err = -EACCES; /* kernfs/proc: no writing a file that has no store, even for root */
	if (ino->pseudo && S_ISREG(ino->mode) && (acc != O_RDONLY || (flags & O_TRUNC)) &&
	    !ino->pseudo->store)
		goto out_put;
	/* Linux truncates even with O_RDONLY (O_TRUNC asks for write permission, root has it). */
	if ((flags & O_TRUNC) && S_ISREG(ino->mode) && !ino->pseudo)
		ramfs_truncate_locked(ino, 0);
	if (S_ISREG(ino->mode) && !ino->pseudo)
		abs_path = open_path_locked(base, path);
	fs_mutex_unlock(&vfs_lock);
	/* a pseudo file's truncation (tracefs's uprobe_events drops every probe), unlocked */
	if ((flags & O_TRUNC) && acc != O_RDONLY && ino->pseudo && ino->pseudo->truncate &&
	    (err = ino->pseudo->truncate(ino)) != 0) {
		inode_put(ino);
		kfree(abs_path);
		return err;
	}
	if (S_ISREG(ino->mode) || S_ISDIR(ino->mode))
		flags |= O_LARGEFILE; /* Linux forces it on 64-bit; F_GETFL shows it */
	f = file_alloc(vfs_inode_fops(ino), ino, (unsigned int)flags &
		       ~(unsigned int)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC), NULL);
	inode_put(ino);
	if (!f) {
		kfree(abs_path);
		return -ENOMEM;
	}
	f->path = abs_path;
	if (f->ops == &fifo_fops && (err = fifo_open(f))) {
		file_put(f);
		return err;
	}
	fsnotify_file(f, IN_OPEN);
	*out = f;
	return 0;

out_put:
	inode_put_locked(ino);
out_unlock:
	fs_mutex_unlock(&vfs_lock);
	return err;
}

int vfs_open_kernel(int dirfd, const char *kpath, int flags, struct file **out)
{
	struct inode *base;
	int err;

	if (!kpath[0])
		return -ENOENT;
	err = vfs_base_get(dirfd, kpath, &base);
	if (err)
		return err;
	err = vfs_openat(base, kpath, flags, 0644, out);
	inode_put(base);
	return err;
}

/* ---- helpers for the path syscalls ---- */

int vfs_lookup_at(int dirfd, const char *kpath, bool follow, struct inode **out)
{
	struct inode *base, *ino;
	int err;

	if (!kpath[0])
		return -ENOENT;
	err = vfs_base_get(dirfd, kpath, &base);
	if (err)
		return err;
	fs_mutex_lock(&vfs_lock);
	err = vfs_walk_locked(base, kpath, follow, &ino);
	if (!err)
		inode_get(ino);
	fs_mutex_unlock(&vfs_lock);
	inode_put(base);
	if (!err)
		*out = ino;
	return err;
}

/* The errno of a change in a /proc or /sys directory: EACCES, after what Linux checks
 * first: an existing name for the calls that create one (EEXIST), a mount point for rmdir
 * (EBUSY: rmdir /sys/fs/cgroup). */
static int pseudo_dir_err_locked(struct vfs_parent *pp, enum vfs_parent_op op)
{
	fs_mutex_assert_held(&vfs_lock);
	struct ramfs_dirent *de;

	if (op == VFS_PARENT_ANY)
		return -EACCES;
	if (vfs_name_is_dots(pp->last, pp->len))
		return op == VFS_PARENT_CREATE ? -EEXIST : -EACCES;
	if (pp->dir->pseudo && pp->dir->pseudo->refresh)
		pp->dir->pseudo->refresh(pp->dir, pp->last, pp->len);
	de = ramfs_lookup_locked(pp->dir, pp->last, pp->len);
	if (de && op == VFS_PARENT_CREATE)
		return -EEXIST;
	if (de && op == VFS_PARENT_RMDIR && S_ISDIR(de->inode->mode) && de->inode->mounted)
		return -EBUSY;
	return -EACCES;
}

int vfs_parent_begin(int dirfd, const void *upath, struct vfs_parent *pp)
{
	return vfs_parent_begin_op(dirfd, upath, pp, VFS_PARENT_ANY);
}

int vfs_parent_begin_op(int dirfd, const void *upath, struct vfs_parent *pp,
			enum vfs_parent_op op)
{
	int err = vfs_path_from_user(upath, &pp->kpath);

	if (err)
		return err;
	if (!pp->kpath[0]) {
		err = -ENOENT;
		goto err_free;
	}
	err = vfs_base_get(dirfd, pp->kpath, &pp->base);
	if (err)
		goto err_free;
	fs_mutex_lock(&vfs_lock);
	err = vfs_walk_parent_locked(pp->base, pp->kpath, &pp->dir, &pp->last, &pp->len,
				     &pp->trailing);
	if (!err && pp->dir->fs_magic && pp->dir->fs_magic != BPF_FS_MAGIC &&
	    pp->dir->fs_magic != CGROUP2_SUPER_MAGIC) /* /proc and /sys: no mkdir, unlink, */
		err = pseudo_dir_err_locked(pp, op); /* rename, link or symlink */
	if (!err)
		return 0;
	fs_mutex_unlock(&vfs_lock);
	inode_put(pp->base);
err_free:
	kfree(pp->kpath);
	return err;
}

void vfs_parent_end(struct vfs_parent *pp)
{
	fs_mutex_unlock(&vfs_lock);
	inode_put(pp->base);
	kfree(pp->kpath);
}

bool vfs_name_is_dots(const char *name, size_t len)
{
	return is_dots(name, len);
}
