/*
 * map_queue.c - BPF_MAP_TYPE_QUEUE (FIFO) and BPF_MAP_TYPE_STACK (LIFO): keyless maps of
 * max_entries values of value_size bytes, in a ring of max_entries + 1 slots.
 *
 * Linux 6.1 semantics (queue_stack_maps.c): key_size must be 0 and value_size and max_entries
 * non-zero, flags only the access ones (EINVAL).  Programs use bpf_map_push_elem (flags 0 or
 * BPF_EXIST, which overwrites the oldest value when full; else -E2BIG when full, -EINVAL for
 * other flags), bpf_map_pop_elem and bpf_map_peek_elem (-ENOENT and a zeroed value when empty).
 * The syscall's LOOKUP_ELEM peeks, UPDATE_ELEM pushes, LOOKUP_AND_DELETE_ELEM pops; DELETE_ELEM
 * and GET_NEXT_KEY are EINVAL.  Every operation takes map->lock with interrupts off: the PMU
 * interrupt may push while the syscall pops.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct qstack {
	uint32_t size; /* (c) max_entries + 1 slots */
	uint32_t head, tail; /* (m) next slot to write; oldest value */
	uint8_t data[]; /* (m) size * value_size */
};

static int qs_check(const union bpf_attr *attr)
{
	uint32_t ok = BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG |
		      BPF_F_WRONLY_PROG;

	if (!attr->max_entries || attr->key_size || !attr->value_size || (attr->map_flags & ~ok))
		return -EINVAL;
	if ((uint64_t)attr->value_size * ((uint64_t)attr->max_entries + 1) > (64u << 20))
		return -E2BIG;
	return 0;
}

static int qs_alloc(struct bpf_map *map)
{
	struct qstack *q = ksvc_alloc(sizeof(*q) + (size_t)map->value_size * (map->max_entries + 1));

	if (!q)
		return -ENOMEM;
	q->size = map->max_entries + 1;
	map->priv = q;
	return 0;
}

static void qs_free(struct bpf_map *map)
{
	ksvc_free(map->priv);
}

static void *slot(struct bpf_map *map, uint32_t i)
{
	struct qstack *q = map->priv;

	return q->data + (size_t)i * map->value_size;
}

long bpf_qstack_push(struct bpf_map *map, const void *value, uint64_t flags)
{
	struct qstack *q = map->priv;
	unsigned long irq;
	long err = 0;

	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	irq = spin_lock_irqsave(&map->lock);
	if ((q->head + 1) % q->size == q->tail) {
		if (!(flags & BPF_EXIST)) {
			err = -E2BIG;
			goto out;
		}
		q->tail = (q->tail + 1) % q->size; /* drop the oldest */
	}
	memcpy(slot(map, q->head), value, map->value_size);
	q->head = (q->head + 1) % q->size;
out:
	spin_unlock_irqrestore(&map->lock, irq);
	return err;
}

long bpf_qstack_pop(struct bpf_map *map, void *value, bool remove)
{
	struct qstack *q = map->priv;
	unsigned long irq = spin_lock_irqsave(&map->lock);
	uint32_t i;

	if (q->head == q->tail) {
		spin_unlock_irqrestore(&map->lock, irq);
		memset(value, 0, map->value_size);
		return -ENOENT;
	}
	if (map->type == BPF_MAP_TYPE_QUEUE) {
		i = q->tail;
		if (remove)
			q->tail = (q->tail + 1) % q->size;
	} else {
		i = (q->head + q->size - 1) % q->size;
		if (remove)
			q->head = i;
	}
	memcpy(value, slot(map, i), map->value_size);
	spin_unlock_irqrestore(&map->lock, irq);
	return 0;
}

static void *qs_lookup(struct bpf_map *map, const void *key)
{
	return NULL;
}

static int qs_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return (int)bpf_qstack_push(map, value, flags);
}

static int qs_einval(struct bpf_map *map, const void *key)
{
	return -EINVAL;
}

static int qs_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	return (int)bpf_qstack_pop(map, value, false);
}

static int qs_next_key(struct bpf_map *map, const void *key, void *next)
{
	return -EINVAL;
}

const struct bpf_map_ops bpf_qstack_ops = {
	.check = qs_check,
	.alloc = qs_alloc,
	.free = qs_free,
	.lookup = qs_lookup,
	.update = qs_update,
	.delete = qs_einval,
	.sys_lookup = qs_sys_lookup,
	.sys_update = qs_update,
	.get_next_key = qs_next_key,
	.push = bpf_qstack_push,
	.pop = bpf_qstack_pop,
};
