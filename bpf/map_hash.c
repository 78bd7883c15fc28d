/*
 * map_hash.c - BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_HASH and BPF_MAP_TYPE_LRU_HASH.
 *
 * Linux 6.1 semantics: update flags BPF_ANY / BPF_NOEXIST (EEXIST when present) / BPF_EXIST
 * (ENOENT when absent), anything else EINVAL; a full HASH map fails inserts with E2BIG, an LRU
 * map evicts its least recently used element instead; delete of a missing key is ENOENT;
 * get_next_key of a missing (or NULL) key returns the first key.
 *
 * All max_entries elements are allocated at creation (Linux's default preallocation), so
 * programs in the PMU interrupt never allocate; a value pointer a program holds stays valid
 * memory even if the element is deleted meanwhile (Linux preallocated maps behave the same).
 * One spinlock (irqsave) per map guards buckets and the free list.  LRU eviction scans for the
 * oldest stamp: O(max_entries), simple rather than Linux's per-CPU LRU lists.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct helem {
	struct helem *next; /* (m) bucket chain or free list */
	uint32_t hash; /* (m) */
	bool used; /* (m) */
	uint64_t stamp; /* LRU: last use */
	uint8_t data[]; /* key rounded to 8, then the value(s) */
};

struct htab {
	uint32_t nbuckets; /* power of two */
	uint32_t count; /* (m) */
	uint32_t key_round, value_round, elem_size;
	uint64_t clock; /* LRU stamps */
	struct helem **buckets; /* (m) */
	struct helem *free; /* (m) */
	uint8_t *pool;
};

#define HTAB_MAX_BYTES (64u << 20)

static uint32_t nvalues(const struct bpf_map *map)
{
	return bpf_map_is_percpu(map->type) ? ksvc_nr_cpus() : 1;
}

static int htab_check(const union bpf_attr *attr)
{
	uint32_t ok = BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | BPF_F_RDONLY |
		      BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_ZERO_SEED;
	bool lru = attr->map_type == BPF_MAP_TYPE_LRU_HASH;
	uint64_t bytes;

	if (attr->map_flags & ~ok)
		return -EINVAL;
	if (!lru && (attr->map_flags & BPF_F_NO_COMMON_LRU))
		return -EINVAL;
	if (lru && (attr->map_flags & BPF_F_NO_PREALLOC))
		return -BPF_ENOTSUPP;
	if (attr->max_entries == 0 || attr->key_size == 0 || attr->value_size == 0)
		return -EINVAL;
	if (attr->key_size > BPF_STACK_SIZE)
		return -E2BIG;
	if (attr->value_size >= (1u << 20))
		return -E2BIG;
	bytes = (uint64_t)attr->max_entries *
		(sizeof(struct helem) + ((attr->key_size + 7) & ~7u) +
		 (uint64_t)((attr->value_size + 7) & ~7u) *
			 (attr->map_type == BPF_MAP_TYPE_PERCPU_HASH ? ksvc_nr_cpus() : 1));
	if (bytes > HTAB_MAX_BYTES)
		return -ENOMEM;
	return 0;
}

static struct helem *elem_at(struct htab *h, uint32_t i)
{
	return (struct helem *)(h->pool + (size_t)i * h->elem_size);
}

static int htab_alloc(struct bpf_map *map)
{
	struct htab *h = ksvc_alloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->nbuckets = 1;
	while (h->nbuckets < map->max_entries)
		h->nbuckets <<= 1;
	h->key_round = (map->key_size + 7) & ~7u;
	h->value_round = (map->value_size + 7) & ~7u;
	h->elem_size = (uint32_t)sizeof(struct helem) + h->key_round + h->value_round * nvalues(map);
	h->buckets = ksvc_alloc(sizeof(*h->buckets) * h->nbuckets);
	h->pool = ksvc_alloc((size_t)h->elem_size * map->max_entries);
	if (!h->buckets || !h->pool) {
		ksvc_free(h->buckets);
		ksvc_free(h->pool);
		ksvc_free(h);
		return -ENOMEM;
	}
	for (uint32_t i = map->max_entries; i-- > 0;) {
		elem_at(h, i)->next = h->free;
		h->free = elem_at(h, i);
	}
	map->priv = h;
	return 0;
}

static void htab_free(struct bpf_map *map)
{
	struct htab *h = map->priv;

	ksvc_free(h->buckets);
	ksvc_free(h->pool);
	ksvc_free(h);
}

/* FNV-1a over the key bytes. */
static uint32_t key_hash(const void *key, uint32_t len)
{
	const uint8_t *p = key;
	uint32_t x = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		x = (x ^ p[i]) * 16777619u;
	return x;
}

static struct helem *find_locked(struct bpf_map *map, const void *key, uint32_t hash)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;

	for (struct helem *e = h->buckets[hash & (h->nbuckets - 1)]; e; e = e->next)
		if (e->hash == hash && !memcmp(e->data, key, map->key_size))
			return e;
	return NULL;
}

static uint8_t *value_of(struct bpf_map *map, struct helem *e, unsigned int cpu)
{
	struct htab *h = map->priv;

	return e->data + h->key_round + (size_t)h->value_round * cpu;
}

static void unlink_locked(struct bpf_map *map, struct helem *e)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;
	struct helem **pp = &h->buckets[e->hash & (h->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	e->used = false;
	e->next = h->free;
	h->free = e;
	h->count--;
}

static void evict_lru_locked(struct bpf_map *map)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;
	struct helem *old = NULL;

	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct helem *e = elem_at(h, i);

		if (e->used && (!old || e->stamp < old->stamp))
			old = e;
	}
	if (old)
		unlink_locked(map, old);
}

static void *htab_lookup_cpu(struct bpf_map *map, const void *key, uint32_t cpu)
{
	struct htab *h = map->priv;
	uint32_t hash = key_hash(key, map->key_size);
	unsigned long flags = spin_lock_irqsave(&map->lock);
	struct helem *e = find_locked(map, key, hash);

	if (e)
		e->stamp = ++h->clock;
	spin_unlock_irqrestore(&map->lock, flags);
	if (!e)
		return NULL;
	return value_of(map, e, cpu);
}

static void *htab_lookup(struct bpf_map *map, const void *key)
{
	return htab_lookup_cpu(map, key, bpf_map_is_percpu(map->type) ? ksvc_cpu_id() : 0);
}

/*
 * Insert or replace.  all_cpus: value holds every CPU's copy (syscall side of per-CPU maps);
 * otherwise value is one copy, written to this CPU's slot (new per-CPU elements zero the rest).
 */
static int htab_put(struct bpf_map *map, const void *key, const void *value, uint64_t flags,
		    bool all_cpus)
{
	struct htab *h = map->priv;
	uint32_t hash = key_hash(key, map->key_size);
	bool percpu = bpf_map_is_percpu(map->type);
	unsigned long irq;
	struct helem *e;
	int err = 0;

	if (flags > BPF_EXIST)
		return -EINVAL;
	irq = spin_lock_irqsave(&map->lock);
	e = find_locked(map, key, hash);
	if (e && flags == BPF_NOEXIST) {
		err = -EEXIST;
		goto out;
	}
	if (!e && flags == BPF_EXIST) {
		err = -ENOENT;
		goto out;
	}
	if (!e) {
		if (!h->free && map->type == BPF_MAP_TYPE_LRU_HASH)
			evict_lru_locked(map);
		if (!h->free) {
			err = -E2BIG;
			goto out;
		}
		e = h->free;
		h->free = e->next;
		memset(e->data, 0, h->elem_size - sizeof(*e));
		memcpy(e->data, key, map->key_size);
		e->hash = hash;
		e->used = true;
		e->next = h->buckets[hash & (h->nbuckets - 1)];
		h->buckets[hash & (h->nbuckets - 1)] = e;
		h->count++;
	}
	e->stamp = ++h->clock;
	if (!percpu)
		memcpy(value_of(map, e, 0), value, map->value_size);
	else if (!all_cpus)
		memcpy(value_of(map, e, ksvc_cpu_id()), value, map->value_size);
	else
		for (unsigned int cpu = 0; cpu < ksvc_nr_cpus(); cpu++)
			memcpy(value_of(map, e, cpu), (const uint8_t *)value + (size_t)cpu * h->value_round,
			       map->value_size);
out:
	spin_unlock_irqrestore(&map->lock, irq);
	return err;
}

static int htab_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return htab_put(map, key, value, flags, false);
}

static int htab_sys_update(struct bpf_map *map, const void *key, const void *value,
			   uint64_t flags)
{
	return htab_put(map, key, value, flags, true);
}

static int htab_delete(struct bpf_map *map, const void *key)
{
	uint32_t hash = key_hash(key, map->key_size);
	unsigned long flags = spin_lock_irqsave(&map->lock);
	struct helem *e = find_locked(map, key, hash);

	if (e)
		unlink_locked(map, e);
	spin_unlock_irqrestore(&map->lock, flags);
	return e ? 0 : -ENOENT;
}

static int htab_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	struct htab *h = map->priv;
	uint32_t hash = key_hash(key, map->key_size);
	unsigned long flags = spin_lock_irqsave(&map->lock);
	struct helem *e = find_locked(map, key, hash);

	if (e) {
		if (!bpf_map_is_percpu(map->type))
			memcpy(value, value_of(map, e, 0), map->value_size);
		else
			for (unsigned int cpu = 0; cpu < ksvc_nr_cpus(); cpu++)
				memcpy((uint8_t *)value + (size_t)cpu * h->value_round,
				       value_of(map, e, cpu), h->value_round);
	}
	spin_unlock_irqrestore(&map->lock, flags);
	return e ? 0 : -ENOENT;
}

static int htab_next_key(struct bpf_map *map, const void *key, void *next)
{
	struct htab *h = map->priv;
	unsigned long flags = spin_lock_irqsave(&map->lock);
	struct helem *e = key ? find_locked(map, key, key_hash(key, map->key_size)) : NULL;
	uint32_t b = 0;
	int err = 0;

	if (e) {
		b = (e->hash & (h->nbuckets - 1)) + 1;
		e = e->next;
	}
	while (!e && b < h->nbuckets)
		e = h->buckets[b++];
	if (e)
		memcpy(next, e->data, map->key_size);
	else
		err = -ENOENT;
	spin_unlock_irqrestore(&map->lock, flags);
	return err;
}

#define HTAB_OPS                                                                                   \
	.check = htab_check, .alloc = htab_alloc, .free = htab_free, .lookup = htab_lookup,        \
	.update = htab_update, .delete = htab_delete, .sys_lookup = htab_sys_lookup,               \
	.sys_update = htab_sys_update, .get_next_key = htab_next_key

const struct bpf_map_ops bpf_hash_ops = { HTAB_OPS };
const struct bpf_map_ops bpf_percpu_hash_ops = { HTAB_OPS, .lookup_cpu = htab_lookup_cpu };
const struct bpf_map_ops bpf_lru_hash_ops = { HTAB_OPS };
