/*
 * posix_lock.c - POSIX record locks: fcntl F_GETLK, F_SETLK and F_SETLKW (and so lockf(3),
 * which perf daemon takes on BASE/lock to refuse a second daemon over the same base).
 *
 * What it does: byte-range read and write locks per inode, owned by a descriptor table (a
 * process and its CLONE_FILES threads, as Linux's current->files), so a fork child owns none
 * of its parent's.  A lock conflicts with another owner's overlapping lock when either is a
 * write lock; F_SETLK then fails with EAGAIN, F_SETLKW sleeps (interruptible) until it can
 * take it.  Setting a range replaces the owner's own locks there (splitting them), and
 * adjacent or overlapping ranges of one type merge, so F_GETLK reports what Linux reports.
 * Closing any descriptor of the inode drops all the owner's locks on it (POSIX's rule, Linux's
 * locks_remove_posix from filp_close), and so does the table's last put at exit.
 *
 * What it does not do: deadlock detection (EDEADLK), open file description locks (F_OFD_*:
 * EINVAL as before), leases, mandatory locking, and flock(2)'s whole-file locks.
 *
 * Locking: lock_spin guards the one list of every lock (short; nothing sleeps under it);
 * waiters sleep on lock_wq, woken whenever a lock is removed or narrowed.  A lock holds a
 * reference on its inode.
 *
 * ABI: struct flock from <asm-generic/fcntl.h> (32 bytes on arm64); ranges are inclusive,
 * l_len 0 means to the end of any file (OFFSET_MAX), a negative l_len covers the bytes before
 * l_start; EINVAL for a bad l_whence or a range before 0, EOVERFLOW for one past OFFSET_MAX,
 * EBADF for a read lock on a file not open for reading (write lock: not open for writing).
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/list.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include "fs_internal.h"

#define OFFSET_MAX INT64_MAX
#define SEEK_SET_ 0
#define SEEK_CUR_ 1
#define SEEK_END_ 2

_Static_assert(sizeof(struct flock) == 32, "arm64 struct flock");

struct posix_lock {
	struct list_node node; /* on all_locks (lock_spin) */
	struct inode *ino; /* a reference */
	const void *owner; /* the descriptor table */
	int pid; /* tgid of the process that set it: F_GETLK's l_pid */
	short type; /* F_RDLCK or F_WRLCK */
	int64_t start, end; /* inclusive */
};

static struct spinlock lock_spin = SPINLOCK_INIT;
static struct list_node all_locks = LIST_INIT(all_locks);
static struct wait_queue lock_wq = { SPINLOCK_INIT, LIST_INIT(lock_wq.waiters) };

/* The request, decoded: what to lock, for whom. */
struct lock_req {
	struct inode *ino;
	const void *owner;
	short type;
	int64_t start, end;
};

static bool overlaps(const struct posix_lock *l, const struct lock_req *r)
{
	return l->ino == r->ino && l->start <= r->end && r->start <= l->end;
}

/* Another owner's lock that r cannot coexist with, or NULL (lock_spin held). */
static struct posix_lock *conflict_locked(const struct lock_req *r)
{
	struct list_node *pos;

	list_for_each(pos, &all_locks) {
		struct posix_lock *l = list_entry(pos, struct posix_lock, node);

		if (l->owner != r->owner && overlaps(l, r) &&
		    (l->type == F_WRLCK || r->type == F_WRLCK))
			return l;
	}
	return NULL;
}

static bool no_conflict(void *ctx, size_t unused)
{
	unsigned long fl = spin_lock_irqsave(&lock_spin);
	bool ok = !conflict_locked(ctx);

	spin_unlock_irqrestore(&lock_spin, fl);
	return ok;
}

/*
 * Apply r for its owner (no conflict, lock_spin held): the owner's locks inside the range go
 * to *freed, ones straddling it are cut (spare: a node for the right part of a split), and
 * the new lock (node, unless F_UNLCK) merges with its own type's neighbours.  Returns whether
 * anything was removed or narrowed (waiters to wake); consumes node and spare or leaves them
 * in *freed.
 */
static bool apply_locked(const struct lock_req *r, struct posix_lock *node,
			 struct posix_lock *spare, struct list_node *freed)
{
	struct list_node *pos, *tmp;
	bool loosened = false;
	int64_t start = r->start, end = r->end;

	list_for_each_safe(pos, tmp, &all_locks) {
		struct posix_lock *l = list_entry(pos, struct posix_lock, node);

		if (l->owner != r->owner || l->ino != r->ino)
			continue;
		/* a neighbour or overlap of the same type: absorb it into the new lock */
		if (r->type == l->type && l->start <= (end == OFFSET_MAX ? end : end + 1) &&
		    start <= (l->end == OFFSET_MAX ? l->end : l->end + 1)) {
			start = MIN(start, l->start);
			end = MAX(end, l->end);
			list_del_init(pos);
			list_add_tail(freed, pos);
			continue;
		}
		if (l->end < r->start || l->start > r->end)
			continue;
		loosened = true;
		if (l->start < r->start && l->end > r->end) { /* split in two */
			*spare = *l;
			spare->start = r->end + 1;
			l->end = r->start - 1;
			inode_get(spare->ino);
			list_add_tail(&all_locks, &spare->node);
			spare = NULL;
		} else if (l->start < r->start) {
			l->end = r->start - 1;
		} else if (l->end > r->end) {
			l->start = r->end + 1;
		} else {
			list_del_init(pos);
			list_add_tail(freed, pos);
		}
	}
	if (node) {
		node->start = start;
		node->end = end;
		list_add_tail(&all_locks, &node->node);
	}
	if (spare)
		list_add_tail(freed, &spare->node);
	return loosened || !node;
}

/* Free what apply_locked or a removal took off the list (no lock held). */
static void free_list(struct list_node *freed)
{
	struct list_node *pos, *tmp;

	list_for_each_safe(pos, tmp, freed) {
		struct posix_lock *l = list_entry(pos, struct posix_lock, node);

		list_del_init(pos);
		if (l->ino)
			inode_put(l->ino);
		kfree(l);
	}
}

/* struct flock's range against f: 0 or -errno (flock_to_posix_lock). */
static int decode_range(struct file *f, const struct flock *fl, int64_t *start, int64_t *end)
{
	int64_t base;

	switch (fl->l_whence) {
	case SEEK_SET_: base = 0; break;
	case SEEK_CUR_: base = (int64_t)f->pos; break;
	case SEEK_END_: base = (int64_t)f->inode->size; break;
	default: return -EINVAL;
	}
	if (__builtin_add_overflow(base, fl->l_start, start) || *start < 0)
		return -EINVAL;
	if (fl->l_len > 0) {
		if (fl->l_len - 1 > OFFSET_MAX - *start)
			return -EOVERFLOW;
		*end = *start + fl->l_len - 1;
	} else if (fl->l_len < 0) {
		*end = *start - 1;
		*start += fl->l_len;
		if (*start < 0)
			return -EINVAL;
	} else {
		*end = OFFSET_MAX;
	}
	return 0;
}

long posix_lock_fcntl(struct file *f, const void *owner, unsigned int cmd, uint64_t uarg)
{
	struct flock fl;
	struct lock_req r = { .ino = f->inode, .owner = owner };
	struct list_node freed;
	unsigned long irq;
	long err;

	if (ksvc_copy_from_user(&fl, (const void *)uarg, sizeof(fl)))
		return -EFAULT;
	if (!f->inode)
		return -EBADF;
	if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK && fl.l_type != F_UNLCK)
		return -EINVAL;
	r.type = fl.l_type;
	err = decode_range(f, &fl, &r.start, &r.end);
	if (err)
		return err;
	if (cmd == F_GETLK) {
		if (r.type == F_UNLCK)
			return -EINVAL;
		irq = spin_lock_irqsave(&lock_spin);
		struct posix_lock *l = conflict_locked(&r);

		if (l) {
			fl.l_type = l->type;
			fl.l_whence = SEEK_SET_;
			fl.l_start = l->start;
			fl.l_len = l->end == OFFSET_MAX ? 0 : l->end - l->start + 1;
			fl.l_pid = l->pid;
		} else {
			fl.l_type = F_UNLCK;
		}
		spin_unlock_irqrestore(&lock_spin, irq);
		return ksvc_copy_to_user((void *)uarg, &fl, sizeof(fl)) ? -EFAULT : 0;
	}
	if ((r.type == F_RDLCK && !file_readable(f)) || (r.type == F_WRLCK && !file_writable(f)))
		return -EBADF;
	struct posix_lock *node = NULL, *spare = kmalloc(sizeof(*spare));

	if (r.type != F_UNLCK)
		node = kmalloc(sizeof(*node));
	if (!spare || (r.type != F_UNLCK && !node)) {
		kfree(spare);
		kfree(node);
		return -ENOLCK;
	}
	memset(spare, 0, sizeof(*spare));
	if (node) {
		memset(node, 0, sizeof(*node));
		node->ino = r.ino;
		node->owner = owner;
		node->pid = proc_tgid(current_task());
		node->type = r.type;
		inode_get(r.ino);
	}
	list_init(&freed);
	for (;;) {
		irq = spin_lock_irqsave(&lock_spin);
		if (r.type == F_UNLCK || !conflict_locked(&r))
			break;
		spin_unlock_irqrestore(&lock_spin, irq);
		if (cmd == F_SETLK) {
			err = -EAGAIN;
			goto out_free;
		}
		err = fs_wait_event(&lock_wq, no_conflict, &r, 0);
		if (err)
			goto out_free;
	}
	bool wake = apply_locked(&r, node, spare, &freed);

	spin_unlock_irqrestore(&lock_spin, irq);
	if (wake)
		waitq_wake_all(&lock_wq);
	free_list(&freed);
	return 0;
out_free:
	if (node)
		inode_put(node->ino);
	kfree(node);
	kfree(spare);
	return err;
}

void posix_locks_remove(const void *owner, struct inode *ino)
{
	struct list_node freed, *pos, *tmp;
	unsigned long irq;

	if (!ino)
		return;
	list_init(&freed);
	irq = spin_lock_irqsave(&lock_spin);
	list_for_each_safe(pos, tmp, &all_locks) {
		struct posix_lock *l = list_entry(pos, struct posix_lock, node);

		if (l->owner == owner && l->ino == ino) {
			list_del_init(pos);
			list_add_tail(&freed, pos);
		}
	}
	spin_unlock_irqrestore(&lock_spin, irq);
	if (list_empty(&freed))
		return;
	waitq_wake_all(&lock_wq);
	free_list(&freed);
}
