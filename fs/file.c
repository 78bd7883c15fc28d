/*
 * file.c - open file descriptions and the ramfs file types: regular files (read, write,
 * llseek with SEEK_SET/CUR/END/DATA/HOLE) and directories (getdents64, llseek), plus the
 * helpers exec and mmap use (file_pread_kernel, file_size, file_may_exec, file_page_pfn).
 *
 * What it does not do: the fd table (fdtable.c), devices (dev.c), pipes (pipe.c).
 *
 * ABI: struct linux_dirent64 {u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]},
 * records 8-byte aligned; "." and ".." come first as on Linux's ramfs (dcache_readdir);
 * d_off is the position of the next record (0 ".", 1 "..", 2 + i the i-th entry).  A
 * buffer too small for the next record is EINVAL unless nothing is left (then 0).
 */
#include <stdatomic.h>
#include <arch/memlayout.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <kern/vm.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include "fs_internal.h"

struct linux_dirent64_k {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
};
_Static_assert(offsetof(struct linux_dirent64_k, d_off) == 8, "dirent64 d_off");
_Static_assert(offsetof(struct linux_dirent64_k, d_reclen) == 16, "dirent64 d_reclen");
_Static_assert(offsetof(struct linux_dirent64_k, d_type) == 18, "dirent64 d_type");
_Static_assert(offsetof(struct linux_dirent64_k, d_name) == 19, "dirent64 d_name");

/* ---- the file object ---- */

struct file *file_alloc(const struct file_ops *ops, struct inode *ino, unsigned int flags,
			void *priv)
{
	struct file *f = kmalloc(sizeof(*f));

	if (!f)
		return NULL;
	atomic_store(&f->refcount, 1);
	f->ops = ops;
	f->inode = ino;
	if (ino)
		inode_get(ino);
	atomic_store(&f->flags, flags);
	f->priv = priv;
	f->path = NULL;
	f->owner = (struct fown){ F_OWNER_PID, 0, 0 };
	f->fa = (struct ksvc_fasync){ f, -1 };
	return f;
}

void file_get(struct file *f)
{
	atomic_fetch_add(&f->refcount, 1);
}

void file_put(struct file *f)
{
	if (!f || atomic_fetch_sub(&f->refcount, 1) != 1)
		return;
	/* __fput: fsnotify_close, then the O_ASYNC registration goes before the file */
	if (f->inode)
		fsnotify_file(f, file_writable(f) ? IN_CLOSE_WRITE : IN_CLOSE_NOWRITE);
	if ((atomic_load(&f->flags) & FASYNC) && f->ops && f->ops->fasync)
		f->ops->fasync(f, -1, false);
	if (f->ops && f->ops->release)
		f->ops->release(f);
	inode_put(f->inode);
	kfree(f->path);
	kfree(f);
}

const char *file_path(struct file *f)
{
	return f->path;
}

bool file_readable(const struct file *f)
{
	unsigned int acc = atomic_load(&f->flags) & O_ACCMODE;

	return acc == O_RDONLY || acc == O_RDWR;
}

bool file_writable(const struct file *f)
{
	unsigned int acc = atomic_load(&f->flags) & O_ACCMODE;

	return acc == O_WRONLY || acc == O_RDWR;
}

bool file_is_regular(struct file *f)
{
	return f->inode && S_ISREG(f->inode->mode);
}

uint64_t file_size(struct file *f)
{
	return f->inode ? READ_ONCE(f->inode->size) : 0;
}

bool file_may_exec(struct file *f)
{
	return file_is_regular(f) && (READ_ONCE(f->inode->mode) & 0111);
}

long file_pread_kernel(struct file *f, void *kbuf, size_t n, uint64_t off)
{
	if (!file_is_regular(f))
		return f->inode && S_ISDIR(f->inode->mode) ? -EISDIR : -EINVAL;
	return ramfs_read(f->inode, kbuf, n, off, false);
}

int file_page_pfn(struct file *f, uint64_t pgoff, uint64_t *pfn)
{
	void *page = NULL;
	int err = -EFAULT;

	if (!file_is_regular(f))
		return -ENODEV;
	fs_mutex_lock(&vfs_lock);
	if (pgoff < (f->inode->size + KSVC_PAGE_SIZE - 1) / KSVC_PAGE_SIZE)
		err = ramfs_page_get_locked(f->inode, pgoff * KSVC_PAGE_SIZE, true, &page);
	fs_mutex_unlock(&vfs_lock);
	if (err)
		return err;
	*pfn = virt_to_phys(page) >> PAGE_SHIFT;
	ramfs_page_put(page); /* the file keeps its own reference */
	return 0;
}

/* ---- regular files ---- */

static long reg_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	long r = ramfs_read(f->inode, ubuf, n, *pos, true);

	if (r > 0)
		*pos += (uint64_t)r;
	return r;
}

static long reg_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return ramfs_write(f->inode, ubuf, n, pos, atomic_load(&f->flags) & O_APPEND, true);
}

/*
 * lseek for every file whose position is a byte offset (Linux's generic_file_llseek_size,
 * seq_lseek and dcache_dir_lseek in one).  size < 0: no end to seek from, so SEEK_SET and
 * SEEK_CUR only, as seq_lseek and directories; otherwise also SEEK_END, and SEEK_DATA /
 * SEEK_HOLE for a file without holes (data everywhere below size, ENXIO at or past it).
 * A position that would pass INT64_MAX is EINVAL, as Linux's wrapped f_pos + offset.
 * f->pos changes only on success.
 */
int64_t file_llseek_pos(struct file *f, int64_t off, int whence, int64_t size)
{
	int64_t base;

	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = (int64_t)f->pos;
		break;
	case SEEK_END:
		if (size < 0)
			return -EINVAL;
		base = size;
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		if (size < 0)
			return -EINVAL;
		if (off < 0 || off >= size)
			return -ENXIO;
		base = whence == SEEK_DATA ? off : size;
		off = 0;
		break;
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, off, &base) || base < 0)
		return -EINVAL;
	f->pos = (uint64_t)base;
	return base;
}

static int64_t reg_llseek(struct file *f, int64_t off, int whence)
{
	return file_llseek_pos(f, off, whence, (int64_t)file_size(f));
}

const struct file_ops ramfs_file_ops = {
	.read = reg_read,
	.write = reg_write,
	.llseek = reg_llseek,
};

/* ---- directories ---- */

static uint8_t dirent_type(uint32_t mode)
{
	return (uint8_t)((mode & S_IFMT) >> 12); /* DT_* are the S_IFMT bits shifted */
}

/* Append one record at buf + *used if it fits in cap: false when it does not. */
static bool dirent_put(char *buf, size_t *used, size_t cap, uint64_t ino, int64_t next,
		       uint32_t mode, const char *name, size_t len)
{
	size_t reclen = ALIGN_UP(offsetof(struct linux_dirent64_k, d_name) + len + 1, 8);
	struct linux_dirent64_k *d = (struct linux_dirent64_k *)(buf + *used);

	if (*used + reclen > cap)
		return false;
	memset(d, 0, reclen);
	d->d_ino = ino;
	d->d_off = next;
	d->d_reclen = (uint16_t)reclen;
	d->d_type = dirent_type(mode);
	memcpy(d->d_name, name, len);
	*used += reclen;
	return true;
}

static long dir_getdents(struct file *f, void *ubuf, size_t n)
{
	struct inode *dir = f->inode;
	size_t cap = MIN(n, (size_t)65536), used = 0;
	uint64_t pos = f->pos, idx = 0;
	bool more = false;
	struct list_node *ln;
	char *buf;
	long r;

	buf = kmalloc(cap ? cap : 1);
	if (!buf)
		return -ENOMEM;
	fs_mutex_lock(&vfs_lock);
	if (dir->pseudo && dir->pseudo->refresh)
		dir->pseudo->refresh(dir, NULL, 0);
	if (pos == 0) {
		if (!dirent_put(buf, &used, cap, dir->ino, 1, S_IFDIR, ".", 1))
			more = true;
		else
			pos = 1;
	}
	if (pos == 1 && !more) {
		struct inode *up = dir->parent ? dir->parent : dir;

		if (!dirent_put(buf, &used, cap, up->ino, 2, S_IFDIR, "..", 2))
			more = true;
		else
			pos = 2;
	}
	list_for_each(ln, &dir->dirents) {
		struct ramfs_dirent *de = list_entry(ln, struct ramfs_dirent, node);

		if (more)
			break;
		if (idx++ < pos - 2)
			continue;
		if (!dirent_put(buf, &used, cap, de->inode->ino, (int64_t)pos + 1, de->inode->mode,
				de->name, de->len)) {
			more = true;
			break;
		}
		pos++;
	}
	dir->atime_ns = vfs_now_ns();
	fs_mutex_unlock(&vfs_lock);
	if (used == 0 && more)
		r = -EINVAL;
	else if (used && ksvc_copy_to_user(ubuf, buf, used))
		r = -EFAULT;
	else {
		f->pos = pos;
		r = (long)used;
	}
	kfree(buf);
	return r;
}

static long dir_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return -EISDIR;
}

static int64_t dir_llseek(struct file *f, int64_t off, int whence)
{
	return file_llseek_pos(f, off, whence, -1);
}

const struct file_ops ramfs_dir_ops = {
	.read = dir_read,
	.llseek = dir_llseek,
	.getdents = dir_getdents,
};

/* ---- mmap ---- */

int file_mmap_prepare(struct file *f, struct vm_area *vma)
{
	unsigned int acc = atomic_load(&f->flags) & O_ACCMODE;

	if (acc == O_WRONLY)
		return -EACCES; /* Linux: every mapping needs read access */
	if (f->ops && f->ops->mmap)
		return f->ops->mmap(f, vma);
	if (!file_is_regular(f) || f->inode->pseudo)
		return -ENODEV;
	if ((vma->flags & VMA_SHARED) && (vma->flags & VMA_WRITE) && acc != O_RDWR)
		return -EACCES;
	return 0;
}

void file_id(struct file *f, uint64_t *ino, uint32_t *dev)
{
	*ino = f->inode ? f->inode->ino : 0;
	*dev = f->inode ? VFS_DEV : 0;
}
