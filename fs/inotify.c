/*
 * inotify.c - inotify_init1, inotify_add_watch, inotify_rm_watch: filesystem events read from
 * a file, as Linux's fs/notify/inotify.  perf daemon watches its config file's directory for
 * IN_CLOSE_WRITE to reload the config.
 *
 * What it does: watches on inodes (a watch holds a reference), one per inode and instance,
 * numbered from 1 upward (inotify_add_watch on a watched inode replaces its mask, or adds to
 * it with IN_MASK_ADD; IN_MASK_CREATE makes that EEXIST).  Events reach the watches of the
 * inode itself (no name) and of the directory that names it (with the name and IN_ISDIR for
 * a directory).  Generated: IN_ACCESS and IN_MODIFY (read and write), IN_OPEN,
 * IN_CLOSE_WRITE and IN_CLOSE_NOWRITE (the last put of a file), IN_CREATE (open with O_CREAT,
 * mkdir, mknod, symlink, link, bind), IN_DELETE (unlink, rmdir), IN_MOVED_FROM and
 * IN_MOVED_TO with a shared cookie (rename), IN_DELETE_SELF when the last name goes, then
 * IN_IGNORED as the watch is dropped (also after IN_ONESHOT's event and inotify_rm_watch),
 * IN_Q_OVERFLOW past 16384 queued events.  An event equal to the last queued one is merged
 * into it.  read returns whole events (EINVAL when the first does not fit), blocking unless
 * IN_NONBLOCK; FIONREAD gives the bytes queued; poll is POLLIN with events.
 *
 * What it does not do: IN_ATTRIB, IN_MOVE_SELF and IN_UNMOUNT are accepted in masks and
 * never generated; truncate gives no IN_MODIFY; a file's parent is found by the absolute
 * name it was opened by (struct file path: regular files), so a file renamed while open, or
 * a directory, reports its open/close/access/modify events only to its own watches.
 * IN_DELETE_SELF comes when the last link goes, not when the last open file closes.  No
 * per-user limits on instances.
 *
 * Locking: in_lock (a spinlock, taken under vfs_lock when the caller holds it) guards the
 * watch list and every instance's queue; kmalloc never sleeps, so events are built under
 * it.  A dropped watch's inode reference is put after in_lock, with inode_put_locked when the
 * caller holds vfs_lock.  nwatches lets every hook return at once when nobody watches.
 *
 * ABI: struct inotify_event and the IN_* bits from <linux/inotify.h>; a name is padded with
 * NULs to a multiple of 16 bytes (its len counts the padding); inotify_init1 flags IN_CLOEXEC |
 * IN_NONBLOCK, else EINVAL; bad masks EINVAL; a fd that is not an instance EINVAL.
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/list.h>
#include <kern/mm.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm-generic/ioctls.h>
#include <asm-generic/poll.h>
#include <linux/fcntl.h>
#include <linux/inotify.h>
#include <linux/stat.h>
#include "fs_internal.h"

#define IN_ALL_BITS                                                                                \
	(IN_ALL_EVENTS | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED | IN_ONLYDIR | IN_DONT_FOLLOW |  \
	 IN_EXCL_UNLINK | IN_MASK_ADD | IN_MASK_CREATE | IN_ISDIR | IN_ONESHOT)
#define IN_MAX_EVENTS 16384 /* fs.inotify.max_queued_events */
#define IN_MAX_WATCHES 8192 /* fs.inotify.max_user_watches, per instance here */

_Static_assert(sizeof(struct inotify_event) == 16, "inotify_event");

struct inotify {
	struct list_node events; /* struct in_event, oldest first (in_lock) */
	unsigned int nevents; /* (in_lock) */
	size_t bytes; /* what read would return in all (in_lock) */
	int next_wd, nwatch; /* (in_lock) */
	struct wait_queue wq;
};

struct in_watch {
	struct list_node node; /* on watches (in_lock) */
	struct inode *ino; /* a reference */
	struct inotify *in;
	int wd;
	uint32_t mask;
};

struct in_event {
	struct list_node node;
	struct inotify_event ev; /* ev.len: the padded name length */
	char name[];
};

static struct spinlock in_lock = SPINLOCK_INIT;
static struct list_node watches = LIST_INIT(watches);
static _Atomic int nwatches;
static _Atomic uint32_t next_cookie;

static const struct file_ops inotify_fops;

static bool vfs_lock_mine(void)
{
	return READ_ONCE(vfs_lock.owner) == (const void *)ksvc_task_current();
}

/* Queue one event on in (in_lock held): merged with an equal last one, or the overflow. */
static void queue_locked(struct inotify *in, int wd, uint32_t mask, uint32_t cookie,
			 const char *name, size_t len)
{
	uint32_t padded = len ? (uint32_t)((len + 1 + 15) & ~(size_t)15) : 0;
	struct in_event *last = list_empty(&in->events)
					? NULL
					: list_entry(in->events.prev, struct in_event, node);
	struct in_event *e;

	if (in->nevents >= IN_MAX_EVENTS) {
		if (last && last->ev.mask == IN_Q_OVERFLOW)
			return;
		wd = -1, mask = IN_Q_OVERFLOW, cookie = 0, len = padded = 0;
	}
	if (last && last->ev.wd == wd && last->ev.mask == mask && last->ev.cookie == cookie &&
	    last->ev.len == padded &&
	    (!len || (strnlen(last->name, padded) == len && !memcmp(last->name, name, len))))
		return;
	e = kmalloc(sizeof(*e) + padded);
	if (!e)
		return; /* Linux queues an overflow event; nothing better to do here */
	e->ev.wd = wd;
	e->ev.mask = mask;
	e->ev.cookie = cookie;
	e->ev.len = padded;
	if (len)
		memcpy(e->name, name, len); /* kmalloc zeroed the padding */
	list_add_tail(&in->events, &e->node);
	in->nevents++;
	in->bytes += sizeof(e->ev) + padded;
	waitq_wake_all(&in->wq);
}

/* Take w off the list, with its IN_IGNORED when ignored (in_lock held); the caller puts it. */
static void drop_watch_locked(struct in_watch *w, bool ignored, struct list_node *dropped)
{
	if (ignored)
		queue_locked(w->in, w->wd, IN_IGNORED, 0, NULL, 0);
	list_del_init(&w->node);
	list_add_tail(dropped, &w->node);
	w->in->nwatch--;
	atomic_fetch_sub(&nwatches, 1);
}

static void put_dropped(struct list_node *dropped)
{
	bool locked = vfs_lock_mine();
	struct list_node *pos, *tmp;

	list_for_each_safe(pos, tmp, dropped) {
		struct in_watch *w = list_entry(pos, struct in_watch, node);

		list_del_init(pos);
		if (locked)
			inode_put_locked(w->ino);
		else
			inode_put(w->ino);
		kfree(w);
	}
}

/*
 * The watches on ino (or, with ino NULL, those of instance in): each whose mask has the event
 * queues it (none when mask is 0); IN_ONESHOT watches that fired, and all of them when drop,
 * end (with IN_IGNORED, unless the instance itself is going).  A name goes with an event on a
 * directory's watches about its entry.
 */
static void walk(const struct inode *ino, const struct inotify *in, uint32_t mask,
		 uint32_t cookie, const char *name, size_t len, bool drop)
{
	struct list_node dropped, *pos, *tmp;
	unsigned long fl;

	list_init(&dropped);
	fl = spin_lock_irqsave(&in_lock);
	list_for_each_safe(pos, tmp, &watches) {
		struct in_watch *w = list_entry(pos, struct in_watch, node);
		bool hit;

		if (ino ? w->ino != ino : w->in != in)
			continue;
		hit = w->mask & mask & IN_ALL_EVENTS;
		if (hit)
			queue_locked(w->in, w->wd, mask, cookie, name, len);
		if (drop || (hit && (w->mask & IN_ONESHOT)))
			drop_watch_locked(w, ino != NULL, &dropped);
	}
	spin_unlock_irqrestore(&in_lock, fl);
	put_dropped(&dropped);
}

static void notify(struct inode *ino, uint32_t mask, uint32_t cookie, const char *name, size_t len)
{
	walk(ino, NULL, mask, cookie, name, len, false);
}

static uint32_t isdir(const struct inode *ino)
{
	return ino && S_ISDIR(ino->mode) ? IN_ISDIR : 0;
}

void fsnotify_file(struct file *f, uint32_t mask)
{
	const char *last;
	struct inode *dir;
	size_t len;
	bool trailing, locked;

	if (!atomic_load(&nwatches) || !f->inode)
		return;
	mask |= isdir(f->inode);
	/* the directory that names it first (fsnotify_handle_event's order), found again by the
	 * name the file was opened by */
	if (f->path) {
		locked = vfs_lock_mine();
		if (!locked)
			fs_mutex_lock(&vfs_lock);
		if (!vfs_walk_parent_locked(vfs_root(), f->path, &dir, &last, &len, &trailing)) {
			struct ramfs_dirent *de = ramfs_lookup_locked(dir, last, len);

			if (de && de->inode == f->inode)
				notify(dir, mask, 0, last, len);
		}
		if (!locked)
			fs_mutex_unlock(&vfs_lock);
	}
	notify(f->inode, mask, 0, NULL, 0);
}

void fsnotify_modify_locked(struct inode *dir, struct inode *ino, const char *name)
{
	fs_mutex_assert_held(&vfs_lock);
	if (!atomic_load(&nwatches))
		return;
	if (dir)
		notify(dir, IN_MODIFY, 0, name, strlen(name));
	notify(ino, IN_MODIFY, 0, NULL, 0);
}

void fsnotify_dir_locked(struct inode *dir, uint32_t mask, const char *name, size_t len,
			 struct inode *child, uint32_t cookie)
{
	if (atomic_load(&nwatches))
		notify(dir, mask | isdir(child), cookie, name, len);
}

uint32_t fsnotify_cookie(void)
{
	return atomic_fetch_add(&next_cookie, 1) + 1;
}

void fsnotify_gone_locked(struct inode *ino)
{
	if (atomic_load(&nwatches))
		walk(ino, NULL, IN_DELETE_SELF, 0, NULL, 0, true);
}

/* ---- the instance file ---- */

static bool in_ready(void *ctx, size_t unused)
{
	struct inotify *in = ctx;

	return READ_ONCE(in->nevents) != 0;
}

static long in_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	struct inotify *in = f->priv;
	size_t done = 0;
	unsigned long fl;

	(void)pos;
	for (;;) {
		fl = spin_lock_irqsave(&in_lock);

		if (in->nevents)
			break;
		spin_unlock_irqrestore(&in_lock, fl);
		if (atomic_load(&f->flags) & O_NONBLOCK)
			return -EAGAIN;
		int err = fs_wait_event(&in->wq, in_ready, in, 0);

		if (err)
			return err;
	}
	/* in_lock held: take the events that fit, copy them after */
	struct list_node taken, *pos2, *tmp;

	list_init(&taken);
	while (!list_empty(&in->events)) {
		struct in_event *e = list_entry(in->events.next, struct in_event, node);
		size_t sz = sizeof(e->ev) + e->ev.len;

		if (done + sz > n)
			break;
		list_del_init(&e->node);
		list_add_tail(&taken, &e->node);
		in->nevents--;
		in->bytes -= sz;
		done += sz;
	}
	spin_unlock_irqrestore(&in_lock, fl);
	long ret = done ? (long)done : -EINVAL; /* the first event does not fit */
	size_t at = 0;

	list_for_each_safe(pos2, tmp, &taken) {
		struct in_event *e = list_entry(pos2, struct in_event, node);
		size_t sz = sizeof(e->ev) + e->ev.len;

		if (ret > 0 && ksvc_copy_to_user((char *)ubuf + at, &e->ev, sz))
			ret = -EFAULT;
		at += sz;
		list_del_init(pos2);
		kfree(e);
	}
	return ret;
}

static unsigned int in_poll(struct file *f, struct ksvc_poll *pt)
{
	struct inotify *in = f->priv;

	ksvc_poll_wait(pt, &in->wq);
	return READ_ONCE(in->nevents) ? POLLIN | POLLRDNORM : 0;
}

static long in_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct inotify *in = f->priv;
	unsigned long fl;
	int n;

	if (cmd != FIONREAD)
		return -EINVAL;
	fl = spin_lock_irqsave(&in_lock);
	n = (int)in->bytes;
	spin_unlock_irqrestore(&in_lock, fl);
	return ksvc_copy_to_user((void *)arg, &n, sizeof(n)) ? -EFAULT : 0;
}

static void in_release(struct file *f)
{
	struct inotify *in = f->priv;
	struct list_node *pos, *tmp;

	walk(NULL, in, 0, 0, NULL, 0, true);
	list_for_each_safe(pos, tmp, &in->events) { /* nobody can queue any more */
		list_del_init(pos);
		kfree(list_entry(pos, struct in_event, node));
	}
	kfree(in);
}

static const struct file_ops inotify_fops = {
	.read = in_read,
	.poll = in_poll,
	.ioctl = in_ioctl,
	.release = in_release,
	.anon_name = "inotify",
};

static long sys_inotify_init1(uint64_t flags)
{
	struct inotify *in;
	struct file *f;
	int fd;

	if (flags & ~(uint64_t)(IN_CLOEXEC | IN_NONBLOCK))
		return -EINVAL;
	in = kmalloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	list_init(&in->events);
	waitq_init(&in->wq);
	in->next_wd = 1;
	f = file_alloc(&inotify_fops, NULL, O_RDONLY | (flags & IN_NONBLOCK), in);
	if (!f) {
		kfree(in);
		return -ENOMEM;
	}
	fd = fd_install(f, flags & IN_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}
SYSCALL(__NR_inotify_init1, sys_inotify_init1);

/* fd's instance with a reference on its file: 0, -EBADF or -EINVAL. */
static long in_get(uint64_t fd, struct file **fp)
{
	long err = fd_get((int)fd, fp);

	if (!err && (*fp)->ops != &inotify_fops) {
		file_put(*fp);
		err = -EINVAL;
	}
	return err;
}

static long sys_inotify_add_watch(uint64_t fd, uint64_t upath, uint64_t mask_)
{
	uint32_t mask = (uint32_t)mask_;
	struct in_watch *w = NULL, *nw;
	struct inotify *in;
	struct inode *ino;
	struct file *f;
	char *kpath;
	long err;

	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return -EINVAL;
	if ((mask & ~IN_ALL_BITS) || !(mask & IN_ALL_BITS))
		return -EINVAL;
	err = in_get(fd, &f);
	if (err)
		return err;
	in = f->priv;
	err = vfs_path_from_user((const void *)upath, &kpath);
	if (err)
		goto out;
	err = vfs_lookup_at(AT_FDCWD, kpath, !(mask & IN_DONT_FOLLOW), &ino);
	kfree(kpath);
	if (err)
		goto out;
	if ((mask & IN_ONLYDIR) && !S_ISDIR(ino->mode)) {
		inode_put(ino);
		err = -ENOTDIR;
		goto out;
	}
	nw = kmalloc(sizeof(*nw));
	unsigned long fl = spin_lock_irqsave(&in_lock);
	struct list_node *pos;

	list_for_each(pos, &watches) {
		struct in_watch *o = list_entry(pos, struct in_watch, node);

		if (o->in == in && o->ino == ino) {
			w = o;
			break;
		}
	}
	if (w) { /* inotify_update_existing_watch */
		if (mask & IN_MASK_CREATE)
			err = -EEXIST;
		else {
			w->mask = (mask & IN_MASK_ADD) ? (w->mask | mask) : mask;
			err = w->wd;
		}
	} else if (!nw) {
		err = -ENOMEM;
	} else if (in->nwatch >= IN_MAX_WATCHES) {
		err = -ENOSPC;
	} else {
		nw->ino = ino;
		nw->in = in;
		nw->wd = in->next_wd++;
		nw->mask = mask;
		list_add_tail(&watches, &nw->node);
		in->nwatch++;
		atomic_fetch_add(&nwatches, 1);
		err = nw->wd;
		nw = NULL;
		ino = NULL; /* the watch keeps the reference */
	}
	spin_unlock_irqrestore(&in_lock, fl);
	kfree(nw);
	if (ino)
		inode_put(ino);
out:
	file_put(f);
	return err;
}
SYSCALL(__NR_inotify_add_watch, sys_inotify_add_watch);

static long sys_inotify_rm_watch(uint64_t fd, uint64_t wd)
{
	struct list_node dropped, *pos;
	struct file *f;
	long err = in_get(fd, &f);

	if (err)
		return err;
	list_init(&dropped);
	err = -EINVAL;
	unsigned long fl = spin_lock_irqsave(&in_lock);

	list_for_each(pos, &watches) {
		struct in_watch *w = list_entry(pos, struct in_watch, node);

		if (w->in == f->priv && w->wd == (int)wd) {
			drop_watch_locked(w, true, &dropped);
			err = 0;
			break;
		}
	}
	spin_unlock_irqrestore(&in_lock, fl);
	put_dropped(&dropped);
	file_put(f);
	return err;
}
SYSCALL(__NR_inotify_rm_watch, sys_inotify_rm_watch);
