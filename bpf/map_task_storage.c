/*
 * map_task_storage.c - BPF_MAP_TYPE_TASK_STORAGE: at most one value per (map, thread), made
 * by bpf_task_storage_get with BPF_LOCAL_STORAGE_GET_F_CREATE on a kernel-typed task, gone
 * with bpf_task_storage_delete, the syscall side's delete, the map, or the thread
 * (bpf_task_free, which kernel/ calls as the thread's struct is freed).
 *
 * Linux 6.1 (kernel/bpf/bpf_local_storage.c, bpf_task_storage.c) is the reference: creation
 * wants BPF_F_NO_PREALLOC, only it and BPF_F_CLONE, max_entries 0, a 4-byte key, a value
 * and BTF key and value types (EINVAL), the value at most BPF_LOCAL_STORAGE_MAX_VALUE_SIZE
 * (E2BIG); map_btf.c checks the key is a 32-bit int.  From user space the key is a pidfd
 * (EBADF otherwise) naming a live process (ENOENT otherwise): lookup (ENOENT without a value),
 * update with BPF_ANY / BPF_NOEXIST (EEXIST) / BPF_EXIST (ENOENT), delete (ENOENT), no
 * get_next_key (ENOTSUPP).  Programs reach it only through the two helpers (map.c's
 * bpf_map_func_ok).
 *
 * Locking: one IRQ-safe lock (ts_lock) guards every thread's list (its bpf slot) and every
 * map's list, as the helpers run in the PMU interrupt; values are allocated and freed with
 * ksvc_alloc/ksvc_free ([any]).  The syscall side finds the thread by id under ts_lock, and
 * bpf_task_free takes ts_lock after the thread can no longer be found, so a thread found stays
 * until ts_lock is dropped.  The helpers' task may be one a program reached through another
 * task's links and kept past its end: they check it is still allocated (ksvc_task_live) under
 * ts_lock, which bpf_task_free needs before the task's memory goes.  A value's bytes are read
 * and written without the lock, as in Linux without BPF_F_LOCK.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/list.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <bpf/task.h>
#include "bpf_internal.h"

/* Linux's BPF_LOCAL_STORAGE_MAX_VALUE_SIZE: U16_MAX less its element header (struct
 * bpf_local_storage_elem, 128 bytes on arm64 with its cache-line aligned data): 65407, as
 * Linux 6.1 answers under refvm.sh (65408 is E2BIG). */
#define TS_MAX_VALUE (65535u - 128u)

struct ts_elem {
	struct ts_elem *task_next; /* the thread's values: its bpf slot's list (ts_lock) */
	struct list_node map_node; /* the map's values (ts_lock) */
	struct bpf_map *map;
	struct ksvc_task *task;
	uint64_t value[]; /* value_size bytes */
};

static struct spinlock ts_lock = SPINLOCK_INIT;

static int ts_check(const union bpf_attr *attr)
{
	if ((attr->map_flags & ~(BPF_F_NO_PREALLOC | BPF_F_CLONE)) ||
	    !(attr->map_flags & BPF_F_NO_PREALLOC) || attr->max_entries ||
	    attr->key_size != sizeof(int) || !attr->value_size || !attr->btf_key_type_id ||
	    !attr->btf_value_type_id)
		return -EINVAL;
	if (attr->value_size > TS_MAX_VALUE)
		return -E2BIG;
	return 0;
}

static int ts_alloc(struct bpf_map *map)
{
	struct list_node *head = ksvc_alloc(sizeof(*head));

	if (!head)
		return -ENOMEM;
	list_init(head);
	map->priv = head;
	return 0;
}

static struct ts_elem **task_list(struct ksvc_task *t)
{
	return (struct ts_elem **)ksvc_task_bpf_slot(t);
}

/* The (map, t) value or NULL; ts_lock held. */
static struct ts_elem *find_locked(struct bpf_map *map, struct ksvc_task *t)
{
	for (struct ts_elem *e = *task_list(t); e; e = e->task_next)
		if (e->map == map)
			return e;
	return NULL;
}

/* Take e off its thread's list and its map's; ts_lock held. */
static void unlink_locked(struct ts_elem *e)
{
	struct ts_elem **pp = task_list(e->task);

	while (*pp != e)
		pp = &(*pp)->task_next;
	*pp = e->task_next;
	list_del(&e->map_node);
}

/* A new value for (map, t), value's bytes or zeros, linked; ts_lock held.  NULL: no memory. */
static struct ts_elem *create_locked(struct bpf_map *map, struct ksvc_task *t, const void *value)
{
	struct ts_elem *e = ksvc_alloc(sizeof(*e) + map->value_size);

	if (!e)
		return NULL;
	e->map = map;
	e->task = t;
	if (value)
		memcpy(e->value, value, map->value_size);
	else
		memset(e->value, 0, map->value_size);
	e->task_next = *task_list(t);
	*task_list(t) = e;
	list_add_tail(map->priv, &e->map_node);
	return e;
}

static void ts_free(struct bpf_map *map)
{
	struct list_node *head = map->priv;
	unsigned long f = spin_lock_irqsave(&ts_lock);

	while (!list_empty(head)) {
		struct ts_elem *e = list_entry(head->next, struct ts_elem, map_node);

		unlink_locked(e);
		ksvc_free(e);
	}
	spin_unlock_irqrestore(&ts_lock, f);
	ksvc_free(head);
}

void bpf_task_free(struct ksvc_task *t)
{
	unsigned long f = spin_lock_irqsave(&ts_lock);
	struct ts_elem *e = *task_list(t);

	*task_list(t) = NULL;
	while (e) {
		struct ts_elem *next = e->task_next;

		list_del(&e->map_node);
		ksvc_free(e);
		e = next;
	}
	spin_unlock_irqrestore(&ts_lock, f);
}

/* ---- the helpers ---- */

uint64_t bpf_h_task_storage_get(uint64_t map, uint64_t task, uint64_t value, uint64_t flags,
				uint64_t a5)
{
	struct bpf_map *m = (struct bpf_map *)(uintptr_t)map;
	struct ksvc_task *t = (struct ksvc_task *)(uintptr_t)task;
	struct ts_elem *e;

	if ((flags & ~(uint64_t)BPF_LOCAL_STORAGE_GET_F_CREATE) || !t)
		return 0;
	unsigned long f = spin_lock_irqsave(&ts_lock);

	/* a task a program reached through another's links may be gone: nothing then */
	e = ksvc_task_live(t) ? find_locked(m, t) : NULL;
	if (!e && (flags & BPF_LOCAL_STORAGE_GET_F_CREATE) && ksvc_task_live(t))
		e = create_locked(m, t, (const void *)(uintptr_t)value);
	spin_unlock_irqrestore(&ts_lock, f);
	return e ? (uintptr_t)e->value : 0;
}

uint64_t bpf_h_task_storage_delete(uint64_t map, uint64_t task, uint64_t a3, uint64_t a4,
				   uint64_t a5)
{
	struct bpf_map *m = (struct bpf_map *)(uintptr_t)map;
	struct ksvc_task *t = (struct ksvc_task *)(uintptr_t)task;
	struct ts_elem *e;

	if (!t)
		return (uint64_t)-EINVAL;
	unsigned long f = spin_lock_irqsave(&ts_lock);

	e = ksvc_task_live(t) ? find_locked(m, t) : NULL;
	if (e)
		unlink_locked(e);
	spin_unlock_irqrestore(&ts_lock, f);
	ksvc_free(e);
	return e ? 0 : (uint64_t)-ENOENT;
}

/* ---- the syscall side: the key is a pidfd ---- */

/* The process's main thread from the pidfd in key, with ts_lock taken (*flags): 0, or
 * -EBADF (not a pidfd) / -ENOENT (the process is gone) with the lock not taken. */
static int pidfd_task_lock(const void *key, struct ksvc_task **out, unsigned long *flags)
{
	int fd, pid;

	memcpy(&fd, key, sizeof(fd));
	pid = ksvc_pidfd_pid(fd);
	if (pid < 0)
		return pid;
	*flags = spin_lock_irqsave(&ts_lock);
	*out = ksvc_task_find(pid);
	if (!*out) {
		spin_unlock_irqrestore(&ts_lock, *flags);
		return -ENOENT;
	}
	return 0;
}

/* The pidfd's value: copied to out (if any), taken away (remove): 0, or -ENOENT without one. */
static int pidfd_elem(struct bpf_map *map, const void *key, void *out, bool remove)
{
	struct ksvc_task *t;
	struct ts_elem *e;
	unsigned long f;
	int err = pidfd_task_lock(key, &t, &f);

	if (err)
		return err;
	e = find_locked(map, t);
	if (e && out)
		memcpy(out, e->value, map->value_size);
	if (e && remove)
		unlink_locked(e);
	spin_unlock_irqrestore(&ts_lock, f);
	if (remove)
		ksvc_free(e);
	return e ? 0 : -ENOENT;
}

static int ts_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	return pidfd_elem(map, key, value, false);
}

static int ts_sys_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	struct ksvc_task *t;
	struct ts_elem *e;
	unsigned long f;
	int err;

	if (flags > BPF_EXIST)
		return -EINVAL;
	err = pidfd_task_lock(key, &t, &f);
	if (err)
		return err;
	e = find_locked(map, t);
	if (e && flags == BPF_NOEXIST)
		err = -EEXIST;
	else if (!e && flags == BPF_EXIST)
		err = -ENOENT;
	else if (e)
		memcpy(e->value, value, map->value_size);
	else if (!create_locked(map, t, value))
		err = -ENOMEM;
	spin_unlock_irqrestore(&ts_lock, f);
	return err;
}

static int ts_sys_delete(struct bpf_map *map, const void *key)
{
	return pidfd_elem(map, key, NULL, true);
}

static int ts_next_key(struct bpf_map *map, const void *key, void *next)
{
	return -BPF_ENOTSUPP;
}

/* map_lookup_elem / map_update_elem from a program: refused by bpf_map_func_ok, never run */
static void *ts_lookup(struct bpf_map *map, const void *key)
{
	return NULL;
}

static int ts_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return -EINVAL;
}

const struct bpf_map_ops bpf_task_storage_ops = {
	.check = ts_check,
	.alloc = ts_alloc,
	.free = ts_free,
	.lookup = ts_lookup,
	.update = ts_update,
	.delete = ts_sys_delete,
	.sys_lookup = ts_sys_lookup,
	.sys_update = ts_sys_update,
	.get_next_key = ts_next_key,
};
