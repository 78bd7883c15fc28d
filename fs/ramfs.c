/*
 * ramfs.c - the in-memory file system: inodes, directory entries and file bodies.
 *
 * What it does: inodes for directories, regular files, symlinks, character devices and pipes;
 * directory entries in insertion order; regular file data in 4 KiB pages from alloc_pages(0),
 * one pointer per page (NULL is a hole that reads as zeros), so file_page_pfn can hand a page
 * to a MAP_SHARED mapping.  Inodes live while they have references (open files, cwds, walks in
 * progress) or links (nlink > 0); the last of either frees them under vfs_lock.  The fs-wide
 * sleeping lock vfs_lock and its mutex are here too.
 *
 * What it does not do: path walking (namei.c), permissions beyond mode bits (uid 0 owns
 * everything), block accounting other than st_blocks from allocated pages.
 *
 * Page references: a file page's struct page refcount counts the file (1) plus every short
 * term user (a read or write copying without vfs_lock, or a mapping that took one).  Whoever
 * drops it to 0 frees the page: ramfs_page_put.  ABI: none directly (stat fields come from
 * here through stat.c).
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <linux/stat.h>
#include "fs_internal.h"

struct fs_mutex vfs_lock;
static _Atomic uint64_t next_ino = 1;

/* ---- fs_mutex ---- */

void fs_mutex_init(struct fs_mutex *m)
{
	spin_init(&m->lock);
	m->held = false;
	m->owner = NULL;
	waitq_init(&m->wq);
}

static bool fs_mutex_try(struct fs_mutex *m)
{
	unsigned long f = spin_lock_irqsave(&m->lock);
	bool ok = !m->held;

	m->held = true;
	if (ok)
		m->owner = ksvc_task_current();
	spin_unlock_irqrestore(&m->lock, f);
	return ok;
}

/*
 * Spin a little before sleeping: vfs_lock's holders never block, so the lock is usually
 * free again within microseconds, far sooner than a sleeper is woken on another CPU.
 */
#define FS_MUTEX_SPIN_NS 20000u

void fs_mutex_lock(struct fs_mutex *m)
{
	uint64_t until = 0;

	while (!fs_mutex_try(m)) {
		if (!until)
			until = ksvc_clock_ns() + FS_MUTEX_SPIN_NS;
		if (ksvc_clock_ns() < until) {
			while (READ_ONCE(m->held) && ksvc_clock_ns() < until)
				arch_cpu_relax();
			continue;
		}
		wait_event(&m->wq, !READ_ONCE(m->held));
	}
}

void fs_mutex_unlock(struct fs_mutex *m)
{
	unsigned long f = spin_lock_irqsave(&m->lock);

	m->held = false;
	m->owner = NULL;
	spin_unlock_irqrestore(&m->lock, f);
	waitq_wake_one(&m->wq);
}

uint64_t vfs_now_ns(void)
{
	return ksvc_clock_ns();
}

/* ---- inodes ---- */

struct inode *ramfs_inode_new(uint32_t mode)
{
	struct inode *ino = kmalloc(sizeof(*ino));

	if (!ino)
		return NULL;
	atomic_store(&ino->refs, 1);
	ino->mode = mode;
	ino->ino = atomic_fetch_add(&next_ino, 1);
	ino->atime_ns = ino->mtime_ns = ino->ctime_ns = vfs_now_ns();
	list_init(&ino->dirents);
	return ino;
}

static void inode_free_locked(struct inode *ino)
{
	fs_mutex_assert_held(&vfs_lock);
	if (ino->pseudo && ino->pseudo->evict)
		ino->pseudo->evict(ino);
	if (S_ISREG(ino->mode)) {
		ramfs_truncate_locked(ino, 0);
		kfree(ino->pages);
	}
	kfree(ino->target);
	kfree(ino->pdata);
	kfree(ino);
}

void inode_get(struct inode *ino)
{
	atomic_fetch_add(&ino->refs, 1);
}

void inode_put_locked(struct inode *ino)
{
	fs_mutex_assert_held(&vfs_lock);
	if (atomic_fetch_sub(&ino->refs, 1) == 1 && ino->nlink == 0)
		inode_free_locked(ino);
}

void inode_put(struct inode *ino)
{
	if (!ino)
		return;
	fs_mutex_lock(&vfs_lock);
	inode_put_locked(ino);
	fs_mutex_unlock(&vfs_lock);
}

/* ---- directories ---- */

struct ramfs_dirent *ramfs_lookup_locked(struct inode *dir, const char *name, size_t len)
{
	fs_mutex_assert_held(&vfs_lock);
	struct list_node *n;

	list_for_each(n, &dir->dirents) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);

		if (de->len == len && memcmp(de->name, name, len) == 0)
			return de;
	}
	return NULL;
}

int ramfs_link_locked(struct inode *dir, const char *name, size_t len, struct inode *ino)
{
	fs_mutex_assert_held(&vfs_lock);
	struct ramfs_dirent *de;

	if (len > VFS_NAME_MAX)
		return -ENAMETOOLONG;
	de = kmalloc(sizeof(*de) + len + 1);
	if (!de)
		return -ENOMEM;
	de->inode = ino;
	de->len = (uint16_t)len;
	memcpy(de->name, name, len);
	list_add_tail(&dir->dirents, &de->node);
	ino->nlink++;
	if (S_ISDIR(ino->mode)) {
		ino->nlink++; /* its "." */
		ino->parent = dir;
		dir->nlink++; /* its ".." */
	}
	dir->mtime_ns = dir->ctime_ns = ino->ctime_ns = vfs_now_ns();
	return 0;
}

/* Remove the entry; frees the inode when that was its last link and nobody holds it. */
void ramfs_unlink_locked(struct inode *dir, struct ramfs_dirent *de)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = de->inode;

	list_del(&de->node);
	kfree(de);
	if (S_ISDIR(ino->mode)) {
		ino->nlink = 0;
		ino->parent = NULL;
		dir->nlink--;
	} else {
		ino->nlink--;
	}
	dir->mtime_ns = dir->ctime_ns = ino->ctime_ns = vfs_now_ns();
	if (ino->nlink == 0 && atomic_load(&ino->refs) == 0)
		inode_free_locked(ino);
}

bool ramfs_dir_empty_locked(struct inode *dir)
{
	fs_mutex_assert_held(&vfs_lock);
	return list_empty(&dir->dirents);
}

/* ---- file pages ---- */

static struct page *ramfs_page_meta(void *page)
{
	return page_lookup(&kernel_pages, page_va_to_pfn(&kernel_pages, page));
}

void ramfs_page_put(void *page)
{
	struct page *pg = ramfs_page_meta(page);

	/* The same protocol as kernel/vm.c's page_unref: whoever drops the last one frees. */
	if (__atomic_sub_fetch(&pg->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		free_pages(page, 0);
}

static void ramfs_page_ref(void *page)
{
	__atomic_add_fetch(&ramfs_page_meta(page)->refcount, 1, __ATOMIC_RELAXED);
}

static int ramfs_grow_locked(struct inode *ino, uint64_t npages)
{
	fs_mutex_assert_held(&vfs_lock);
	uint64_t cap = ino->pages_cap ? ino->pages_cap : 4;
	void **p;

	if (npages <= ino->pages_cap)
		return 0;
	while (cap < npages)
		cap *= 2;
	p = kmalloc(cap * sizeof(void *));
	if (!p)
		return -ENOMEM;
	if (ino->pages)
		memcpy(p, ino->pages, ino->pages_cap * sizeof(void *));
	kfree(ino->pages);
	ino->pages = p;
	ino->pages_cap = cap;
	return 0;
}

int ramfs_page_get_locked(struct inode *ino, uint64_t off, bool create, void **page)
{
	fs_mutex_assert_held(&vfs_lock);
	uint64_t idx = off / KSVC_PAGE_SIZE;
	int err;

	*page = NULL;
	if (idx < ino->pages_cap && ino->pages[idx]) {
		*page = ino->pages[idx];
		ramfs_page_ref(*page);
		return 0;
	}
	if (!create)
		return 0;
	err = ramfs_grow_locked(ino, idx + 1);
	if (err)
		return err;
	ino->pages[idx] = alloc_pages(0);
	if (!ino->pages[idx])
		return -ENOMEM;
	*page = ino->pages[idx];
	ramfs_page_ref(*page);
	return 0;
}

int ramfs_truncate_locked(struct inode *ino, uint64_t size)
{
	fs_mutex_assert_held(&vfs_lock);
	uint64_t keep = (size + KSVC_PAGE_SIZE - 1) / KSVC_PAGE_SIZE;

	for (uint64_t i = keep; i < ino->pages_cap; i++) {
		if (ino->pages[i]) {
			ramfs_page_put(ino->pages[i]);
			ino->pages[i] = NULL;
		}
	}
	/* Zero the tail of the last kept page so a later grow reads zeros there. */
	if (size % KSVC_PAGE_SIZE && keep - 1 < ino->pages_cap && ino->pages[keep - 1]) {
		size_t in = size % KSVC_PAGE_SIZE;

		memset((char *)ino->pages[keep - 1] + in, 0, KSVC_PAGE_SIZE - in);
	}
	ino->size = size;
	ino->mtime_ns = ino->ctime_ns = vfs_now_ns();
	return 0;
}

/* ---- body I/O: one page at a time, copying without vfs_lock ---- */

static size_t io_chunk(uint64_t off, const void *buf, size_t left)
{
	size_t n = KSVC_PAGE_SIZE - off % KSVC_PAGE_SIZE;
	size_t ub = KSVC_PAGE_SIZE - (uintptr_t)buf % KSVC_PAGE_SIZE;

	/* Also stop at user page boundaries: a fault then gives a short count, as Linux. */
	return MIN(MIN(n, ub), left);
}

long ramfs_read(struct inode *ino, void *buf, size_t n, uint64_t off, bool user)
{
	size_t done = 0;

	while (done < n) {
		void *page;
		uint64_t size;
		size_t c;
		int err = 0;

		fs_mutex_lock(&vfs_lock);
		size = ino->size;
		if (off >= size) {
			fs_mutex_unlock(&vfs_lock);
			break;
		}
		c = io_chunk(off, (char *)buf + done, MIN(n - done, size - off));
		ramfs_page_get_locked(ino, off, false, &page);
		fs_mutex_unlock(&vfs_lock);
		if (!page) {
			if (user) {
				static const char zeros[256];

				for (size_t z = 0; z < c && !err; z += MIN(c - z, sizeof(zeros)))
					err = ksvc_copy_to_user((char *)buf + done + z, zeros,
								MIN(c - z, sizeof(zeros)));
			} else {
				memset((char *)buf + done, 0, c);
			}
		} else {
			const char *src = (const char *)page + off % KSVC_PAGE_SIZE;

			if (user)
				err = ksvc_copy_to_user((char *)buf + done, src, c);
			else
				memcpy((char *)buf + done, src, c);
			ramfs_page_put(page);
		}
		if (err)
			return done ? (long)done : err;
		done += c;
		off += c;
	}
	return (long)done;
}

long ramfs_write(struct inode *ino, const void *buf, size_t n, uint64_t *offp, bool append,
		 bool user)
{
	size_t done = 0;
	uint64_t off = *offp;

	if (append) {
		fs_mutex_lock(&vfs_lock);
		off = ino->size;
		fs_mutex_unlock(&vfs_lock);
	}
	if (off + n < off || off + n > (1ull << 46))
		return -EFBIG;
	while (done < n) {
		void *page;
		size_t c = io_chunk(off, (const char *)buf + done, n - done);
		int err;

		fs_mutex_lock(&vfs_lock);
		err = ramfs_page_get_locked(ino, off, true, &page);
		fs_mutex_unlock(&vfs_lock);
		if (err)
			return done ? (long)done : err;
		if (user)
			err = ksvc_copy_from_user((char *)page + off % KSVC_PAGE_SIZE,
						  (const char *)buf + done, c);
		else
			memcpy((char *)page + off % KSVC_PAGE_SIZE, (const char *)buf + done, c);
		ramfs_page_put(page);
		if (err)
			break;
		done += c;
		off += c;
		fs_mutex_lock(&vfs_lock);
		if (off > ino->size)
			ino->size = off;
		ino->mtime_ns = ino->ctime_ns = vfs_now_ns();
		fs_mutex_unlock(&vfs_lock);
	}
	if (!done && n)
		return -EFAULT;
	*offp = off;
	return (long)done;
}
