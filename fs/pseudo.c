/*
 * pseudo.c - the shared machinery of /proc and /sys: generated files and self-refreshing
 * directories on top of the ramfs tree.
 *
 * What it does: a pseudo file is a ramfs inode (S_IFREG, size 0) with inode->pseudo set.
 * Opening it gives pseudo_file_ops: the first read (and any read from offset 0, as seq_file
 * does after a rewind) calls ops->show into a kmalloc'd buffer kept with the open file;
 * reads then copy from that snapshot.  A write copies the user bytes (at most one page, as
 * proc's sysctl handlers and kernfs take) and calls ops->store.  A pseudo directory is an
 * ordinary ramfs directory whose ops->refresh the path walk (namei.c) and getdents (file.c)
 * call first, under vfs_lock, so /proc can add and drop <pid> entries as processes come and
 * go.  A pseudo symlink may have a fixed target or only ops->readlink (sys_readlinkat).
 * vfs_inode_path_locked finds a file's name for /proc/PID/maps and exe; pseudo_cpu_midr reads
 * MIDR_EL1 on the CPU it describes (a cross-CPU call; an offline CPU shows the reader's).
 * A pseudo blob is a sysfs bin_attribute over bytes that never change (the kernel's BTF): its
 * size is st_size, reads copy from the bytes at the file offset, a page at most per read as
 * kernfs_file_direct_read, and lseek takes SEEK_END.
 *
 * What it does not do: poll notification (sysfs_notify), mmap of pseudo files (ENODEV, as
 * proc and sysfs attribute files), partial-page sysfs writes at an offset.
 *
 * ABI: as Linux's procfs/sysfs files: st_size 0 (sysfs attributes 4096), contents regenerated at offset 0, writes
 * to files without a store handler refused at open with EACCES (kernfs_fop_open), statfs
 * f_type PROC_SUPER_MAGIC 0x9fa0 / SYSFS_MAGIC 0x62656572 (set by procfs.c and sysfs.c).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <arch/sysreg.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include "fs_internal.h"

#define PSEUDO_WRITE_MAX 4096

/* ---- the text buffer ---- */

static bool pb_reserve(struct pbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *n;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	while (cap < b->len + more + 1)
		cap *= 2;
	n = kmalloc(cap);
	if (!n) {
		b->oom = true;
		return false;
	}
	if (b->buf)
		memcpy(n, b->buf, b->len);
	kfree(b->buf);
	b->buf = n;
	b->cap = cap;
	return true;
}

void pb_putn(struct pbuf *b, const char *s, size_t n)
{
	if (!pb_reserve(b, n))
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = 0;
}

void pb_printf(struct pbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !pb_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	kvsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pb_pad(struct pbuf *b, size_t col)
{
	size_t start = b->len, cur;

	while (start > 0 && b->buf[start - 1] != '\n')
		start--;
	cur = b->len - start;
	while (cur++ < col)
		pb_putn(b, " ", 1);
}

void pb_cpu_list(struct pbuf *b, bool online_only)
{
	unsigned int i = 0, n = nr_cpus_possible;
	bool first = true;

	while (i < n) {
		unsigned int j;

		if (online_only && !atomic_load(&cpus[i].online)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < n && (!online_only || atomic_load(&cpus[j + 1].online)); j++)
			;
		pb_printf(b, j == i ? "%s%u" : "%s%u-%u", first ? "" : ",", i, j);
		first = false;
		i = j + 1;
	}
}

static void midr_read_fn(void *arg)
{
	*(uint64_t *)arg = read_sysreg(midr_el1);
}

uint64_t pseudo_cpu_midr(unsigned int cpu)
{
	uint64_t v = read_sysreg(midr_el1);

	if (cpu < nr_cpus_possible && atomic_load(&cpus[cpu].online))
		smp_call(cpu, midr_read_fn, &v, true);
	return v;
}

/* ---- pseudo files ---- */

struct pseudo_snap {
	char *buf;
	size_t len;
};

static long pf_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct pseudo_snap *s = f->priv;
	struct inode *ino = f->inode;
	size_t c;

	if (!s || *pos == 0) {
		struct pbuf b = { 0 };
		int err = ino->pseudo->show ? ino->pseudo->show(ino, &b) : 0;

		if (!err && b.oom)
			err = -ENOMEM;
		if (err) {
			kfree(b.buf);
			return err;
		}
		if (!s) {
			s = kmalloc(sizeof(*s));
			if (!s) {
				kfree(b.buf);
				return -ENOMEM;
			}
			f->priv = s;
		}
		kfree(s->buf);
		s->buf = b.buf;
		s->len = b.len;
	}
	if (*pos >= s->len)
		return 0;
	c = MIN(n, s->len - (size_t)*pos);
	if (ksvc_copy_to_user(ubuf, s->buf + *pos, c))
		return -EFAULT;
	*pos += c;
	return (long)c;
}

static long pf_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	struct inode *ino = f->inode;
	char *k;
	long r;

	if (!ino->pseudo->store)
		return -EIO;
	if (n == 0)
		return 0;
	n = MIN(n, (size_t)PSEUDO_WRITE_MAX);
	k = kmalloc(n + 1);
	if (!k)
		return -ENOMEM;
	if (ksvc_copy_from_user(k, ubuf, n)) {
		kfree(k);
		return -EFAULT;
	}
	k[n] = 0;
	r = ino->pseudo->store(ino, k, n);
	kfree(k);
	if (r > 0)
		*pos += (uint64_t)r;
	return r;
}

/* seq_lseek: SEEK_SET and SEEK_CUR only */
static int64_t pf_llseek(struct file *f, int64_t off, int whence)
{
	return file_llseek_pos(f, off, whence, -1);
}

static int pf_mmap(struct file *f, struct vm_area *vma)
{
	return -ENODEV;
}

static void pf_release(struct file *f)
{
	struct pseudo_snap *s = f->priv;

	if (s) {
		kfree(s->buf);
		kfree(s);
	}
}

const struct file_ops pseudo_file_ops = {
	.read = pf_read,
	.write = pf_write,
	.llseek = pf_llseek,
	.mmap = pf_mmap,
	.release = pf_release,
};

/* ---- fixed binary contents: sysfs bin_attribute files ---- */

/* kernfs_file_direct_read: at most a page per read(2), clipped at the attribute's size */
static long blob_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct inode *ino = f->inode;
	const char *data = (const char *)(uintptr_t)ino->parg;
	size_t c;

	if (*pos >= ino->size)
		return 0;
	c = MIN(MIN(n, (size_t)KSVC_PAGE_SIZE), (size_t)(ino->size - *pos));
	if (ksvc_copy_to_user(ubuf, data + *pos, c))
		return -EFAULT;
	*pos += c;
	return (long)c;
}

static int64_t blob_llseek(struct file *f, int64_t off, int whence)
{
	return file_llseek_pos(f, off, whence, (int64_t)f->inode->size);
}

static const struct file_ops blob_file_ops = {
	.read = blob_read,
	.llseek = blob_llseek,
	.mmap = pf_mmap,
};
static const struct pseudo_ops blob_ops = { 0 };

/* ---- building the tree ---- */

static struct inode *pseudo_new_locked(struct inode *dir, const char *name, uint32_t mode,
				       const struct pseudo_ops *ops, long arg)
{
	fs_mutex_assert_held(&vfs_lock);
	size_t len = strlen(name);
	struct inode *ino;

	if (ramfs_lookup_locked(dir, name, len))
		return NULL;
	ino = ramfs_inode_new(mode);
	if (!ino)
		return NULL;
	ino->pseudo = ops;
	ino->parg = arg;
	ino->fs_magic = dir->fs_magic;
	if (S_ISREG(mode) && ino->fs_magic == SYSFS_MAGIC)
		ino->size = KSVC_PAGE_SIZE; /* sysfs attributes stat as one page, proc's as 0 */
	if (ramfs_link_locked(dir, name, len, ino)) {
		inode_put_locked(ino);
		return NULL;
	}
	inode_put_locked(ino); /* the link keeps it */
	return ino;
}

struct inode *pseudo_mkdir_locked(struct inode *dir, const char *name, uint32_t mode,
				  const struct pseudo_ops *ops, long arg)
{
	fs_mutex_assert_held(&vfs_lock);
	return pseudo_new_locked(dir, name, S_IFDIR | mode, ops, arg);
}

struct inode *pseudo_file_locked(struct inode *dir, const char *name, uint32_t mode,
				 const struct pseudo_ops *ops, long arg)
{
	fs_mutex_assert_held(&vfs_lock);
	return pseudo_new_locked(dir, name, S_IFREG | mode, ops, arg);
}

struct inode *pseudo_blob_locked(struct inode *dir, const char *name, uint32_t mode,
				 const void *data, size_t len)
{
	struct inode *ino;

	fs_mutex_assert_held(&vfs_lock);
	ino = pseudo_new_locked(dir, name, S_IFREG | mode, &blob_ops, (long)(uintptr_t)data);
	if (ino) {
		ino->fops = &blob_file_ops;
		ino->size = len;
	}
	return ino;
}

static int text_show(struct inode *ino, struct pbuf *b)
{
	if (ino->pdata)
		pb_putn(b, ino->pdata, strlen(ino->pdata));
	return 0;
}

static const struct pseudo_ops text_ops = { .show = text_show };

struct inode *pseudo_text_locked(struct inode *dir, const char *name, const char *fmt, ...)
{
	struct inode *ino;
	va_list ap;
	char *t;

	fs_mutex_assert_held(&vfs_lock);	int n;

	va_start(ap, fmt);
	n = kvsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	t = kmalloc((size_t)n + 1);
	if (!t)
		return NULL;
	va_start(ap, fmt);
	kvsnprintf(t, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ino = pseudo_file_locked(dir, name, 0444, &text_ops, 0);
	if (!ino) {
		kfree(t);
		return NULL;
	}
	ino->pdata = t;
	return ino;
}

struct inode *pseudo_symlink_locked(struct inode *dir, const char *name, const char *target,
				    const struct pseudo_ops *ops, long arg)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = pseudo_new_locked(dir, name, S_IFLNK | 0777, ops, arg);

	if (!ino || !target)
		return ino;
	ino->target = kmalloc(strlen(target) + 1);
	if (ino->target) {
		memcpy(ino->target, target, strlen(target) + 1); /* st_size stays 0, as Linux */
	}
	return ino;
}

void pseudo_remove_locked(struct inode *dir, struct ramfs_dirent *de)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = de->inode;

	if (S_ISDIR(ino->mode)) {
		while (!list_empty(&ino->dirents))
			pseudo_remove_locked(ino, list_entry(ino->dirents.next, struct ramfs_dirent,
							     node));
	}
	ramfs_unlink_locked(dir, de);
}

/* ---- names of files, for maps and exe ---- */

static bool path_search(struct inode *dir, struct inode *want, char *buf, size_t size,
			size_t at, int depth, size_t *out)
{
	struct list_node *n;

	if (depth > 32)
		return false;
	list_for_each(n, &dir->dirents) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);
		struct inode *ino = de->inode;

		if (ino->fs_magic || at + 1 + de->len + 1 > size)
			continue;
		if (ino == want || S_ISDIR(ino->mode)) {
			buf[at] = '/';
			memcpy(buf + at + 1, de->name, de->len);
			buf[at + 1 + de->len] = 0;
		}
		if (ino == want) {
			*out = at + 1 + de->len;
			return true;
		}
		if (S_ISDIR(ino->mode) &&
		    path_search(ino, want, buf, size, at + 1 + de->len, depth + 1, out))
			return true;
	}
	return false;
}

size_t vfs_inode_path_locked(struct inode *ino, char *buf, size_t size)
{
	fs_mutex_assert_held(&vfs_lock);
	size_t len = 0;

	if (size < 2 || !path_search(vfs_root(), ino, buf, size, 0, 0, &len))
		return 0;
	return len;
}
