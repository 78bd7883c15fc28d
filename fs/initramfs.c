/*
 * initramfs.c - the root file system at boot and /out at the end: vfs_init builds the root
 * ramfs (/dev with its devices, /tmp, /proc and /sys with their pseudo files); initramfs_unpack fills it from one or more
 * concatenated newc archives; vfs_archive_tree writes a directory back out as a newc archive.
 *
 * What it does: entries are applied in order, so a later archive (run.sh appends the per-run
 * one after the base) replaces files of an earlier one: an existing non-directory, or an
 * empty directory, of another type or of the same name is removed first; an existing
 * directory is kept and takes the new mode.  File data is copied (the initrd is freed after).
 * Character devices get the driver of the same major:minor when there is one.  A bad entry
 * is reported and skipped; a malformed archive stops the unpack with -EINVAL, as Linux's
 * "junk in compressed archive".
 *
 * What it does not do: hard links (each name gets its own inode; newc carries the data with
 * the last link only), block devices, FIFOs, sockets, compressed archives.
 *
 * ABI: newc ("070701") as fs/cpio.c describes, written by fs/cpio_write.c; the archive has
 * names relative to the directory ("perf.data", "sub/x"), directories before their contents,
 * and ends with "TRAILER!!!".  A file of 4 GiB or more does not fit newc: it is left out and
 * the call returns -EFBIG after writing everything else.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <fs/cpio.h>
#include "fs_internal.h"

/* ---- boot ---- */

static struct inode *mkdir_boot_locked(struct inode *parent, const char *name, uint32_t mode)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *d = ramfs_inode_new(S_IFDIR | mode);

	if (!d)
		return NULL;
	ramfs_link_locked(parent, name, strlen(name), d);
	inode_put_locked(d); /* the link keeps it */
	return d;
}

void vfs_init(void)
{
	struct inode *root, *dev, *proc, *sys;

	fs_mutex_init(&vfs_lock);
	root = ramfs_inode_new(S_IFDIR | 0755);
	if (!root)
		return;
	root->nlink = 2; /* "." and its own ".." */
	vfs_set_root(root); /* keeps the creation reference forever */
	fs_mutex_lock(&vfs_lock);
	dev = mkdir_boot_locked(root, "dev", 0755);
	mkdir_boot_locked(root, "tmp", 01777);
	proc = mkdir_boot_locked(root, "proc", 0555);
	sys = mkdir_boot_locked(root, "sys", 0555);
	fs_mutex_unlock(&vfs_lock);
	if (dev)
		dev_init(dev);
	if (proc)
		procfs_init(proc);
	if (sys) {
		sysfs_init(sys);
		tracefs_init(sys);
		cgroupfs_init();
	}
}

/* ---- unpack ---- */

/* Make room for a new entry of mode at (dir, name): 0 to create, 1 when an existing
 * directory is kept (only its mode changes), or -errno. */
static int unpack_clear_locked(struct inode *dir, const char *name, size_t len, uint32_t mode)
{
	fs_mutex_assert_held(&vfs_lock);
	struct ramfs_dirent *de = ramfs_lookup_locked(dir, name, len);

	if (!de)
		return 0;
	if (S_ISDIR(de->inode->mode)) {
		if (S_ISDIR(mode)) {
			de->inode->mode = mode;
			return 1;
		}
		if (!ramfs_dir_empty_locked(de->inode))
			return -ENOTEMPTY;
	}
	ramfs_unlink_locked(dir, de);
	return 0;
}

static int unpack_entry(const struct cpio_entry *e, const char *path)
{
	uint32_t type = e->mode & S_IFMT, mode = e->mode & (S_IFMT | 07777);
	struct inode *dir, *ino = NULL;
	const char *last;
	size_t len;
	bool trailing;
	uint64_t off = 0;
	long r;
	int err;

	if (!path[0])
		return 0; /* "." is the root itself */
	if (type != S_IFDIR && type != S_IFREG && type != S_IFLNK && type != S_IFCHR)
		return -EINVAL;
	fs_mutex_lock(&vfs_lock);
	err = vfs_walk_parent_locked(vfs_root(), path, &dir, &last, &len, &trailing);
	if (!err)
		err = unpack_clear_locked(dir, last, len, mode);
	if (err) {
		fs_mutex_unlock(&vfs_lock);
		return err < 0 ? err : 0;
	}
	ino = ramfs_inode_new(mode);
	if (!ino) {
		fs_mutex_unlock(&vfs_lock);
		return -ENOMEM;
	}
	ino->mtime_ns = (uint64_t)e->mtime * 1000000000ull;
	if (type == S_IFLNK) {
		ino->target = kmalloc(e->data_size + 1);
		if (!ino->target) {
			err = -ENOMEM;
			goto out_put;
		}
		memcpy(ino->target, e->data, e->data_size);
		ino->size = strlen(ino->target);
	} else if (type == S_IFCHR) {
		ino->rdev = e->rdev_major << 8 | (e->rdev_minor & 0xff);
		ino->fops = dev_fops_for(ino->rdev);
	}
	err = ramfs_link_locked(dir, last, len, ino);
out_put:
	fs_mutex_unlock(&vfs_lock);
	if (!err && type == S_IFREG && e->data_size) {
		r = ramfs_write(ino, e->data, e->data_size, &off, false, false);
		if (r < 0)
			err = (int)r;
	}
	inode_put(ino);
	return err;
}

int initramfs_unpack(const void *buf, size_t len)
{
	char *path = kmalloc(VFS_PATH_MAX);
	size_t off = 0;
	int r = 1;

	if (!path)
		return -ENOMEM;
	while (r > 0) {
		struct cpio_entry e;

		r = cpio_next(buf, len, &off, &e);
		if (r == 0) {
			r = cpio_skip_padding(buf, len, &off);
			continue;
		}
		if (r < 0)
			break;
		int n = cpio_name_normalize(e.name, e.name_len, path, VFS_PATH_MAX);
		int err = n < 0 ? n : unpack_entry(&e, path);

		if (err)
			ksvc_printk("initramfs: %s: skipped (%d)\n", e.name, err);
	}
	kfree(path);
	return r;
}

/* ---- archive ---- */

struct archive {
	struct cpio_writer w;
	char *path; /* PATH_MAX: the current name relative to the top */
	int err; /* the first member that could not be written (-EFBIG) */
};

static int ar_header(struct archive *a, const struct inode *ino, uint64_t size)
{
	const struct cpio_member m = {
		.name = a->path,
		.ino = (uint32_t)ino->ino,
		.mode = ino->mode,
		.uid = ino->uid,
		.gid = ino->gid,
		.nlink = S_ISDIR(ino->mode) ? 2 : 1,
		.mtime = (uint32_t)(ino->mtime_ns / 1000000000ull),
		.size = size,
		.dev_minor = VFS_DEV,
		.rdev_major = ino->rdev >> 8,
		.rdev_minor = ino->rdev & 0xff,
	};
	int err = cpio_write_header(&a->w, &m);

	if (err && !a->err)
		a->err = err;
	return err;
}

static void ar_file_locked(struct archive *a, struct inode *ino)
{
	fs_mutex_assert_held(&vfs_lock);
	static const char zeros[KSVC_PAGE_SIZE];

	if (ar_header(a, ino, ino->size))
		return; /* too big for newc: skipped, reported by the return value */
	for (uint64_t off = 0; off < ino->size; off += KSVC_PAGE_SIZE) {
		uint64_t i = off / KSVC_PAGE_SIZE;
		size_t n = (size_t)MIN((uint64_t)KSVC_PAGE_SIZE, ino->size - off);

		cpio_write_data(&a->w, i < ino->pages_cap && ino->pages[i] ? ino->pages[i] : zeros, n);
	}
	cpio_write_pad(&a->w);
}

static void ar_dir_locked(struct archive *a, struct inode *dir, size_t plen)
{
	fs_mutex_assert_held(&vfs_lock);
	struct list_node *n;

	list_for_each(n, &dir->dirents) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);
		struct inode *ino = de->inode;
		size_t nlen = plen + (plen ? 1 : 0) + de->len;

		if (nlen + 1 > VFS_PATH_MAX)
			continue;
		if (plen)
			a->path[plen] = '/';
		memcpy(a->path + nlen - de->len, de->name, de->len);
		a->path[nlen] = 0;
		if (S_ISREG(ino->mode)) {
			ar_file_locked(a, ino);
		} else if (S_ISLNK(ino->mode)) {
			if (!ar_header(a, ino, ino->size)) {
				cpio_write_data(&a->w, ino->target, ino->size);
				cpio_write_pad(&a->w);
			}
		} else if (!ar_header(a, ino, 0) && S_ISDIR(ino->mode)) {
			ar_dir_locked(a, ino, nlen);
		}
		a->path[plen] = 0;
	}
}

int vfs_archive_tree(const char *kpath, void (*emit)(const void *buf, size_t n, void *arg),
		     void *arg)
{
	struct archive a = { .w = { .emit = emit, .arg = arg } };
	struct inode *top;
	int err;

	if (!vfs_root())
		return 0; /* the file system never started (selftest boots): nothing to send */
	a.path = kmalloc(VFS_PATH_MAX);
	if (!a.path)
		return -ENOMEM;
	fs_mutex_lock(&vfs_lock);
	err = vfs_walk_locked(vfs_root(), kpath, true, &top);
	if (!err && !S_ISDIR(top->mode))
		err = -ENOTDIR;
	if (!err) {
		ar_dir_locked(&a, top, 0);
		cpio_write_trailer(&a.w);
		err = a.err;
	}
	fs_mutex_unlock(&vfs_lock);
	kfree(a.path);
	return err;
}
