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
 * One spinlock (irqsave) per map serializes writers (buckets and the free list) and the
 * syscall side.  A program's lookup takes no lock, as Linux's RCU lookup: writers publish an
 * element with a release store after filling it, and a chain ends in a "nulls" marker naming
 * its bucket (Linux's hlist_nulls), so a lookup whose element was deleted and reused in another
 * bucket meanwhile notices it ended in a foreign chain and walks again.  An element freed
 * keeps its chain link until reused (the free list links through its key bytes), so a walk
 * standing on it still reaches the end of a chain.  LRU eviction scans for the oldest stamp:
 * O(max_entries), simple rather than Linux's per-CPU LRU lists.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct helem {
	_Atomic uintptr_t next; /* (m, lookups read) next in the bucket chain, or its nulls */
	uint32_t hash; /* (m, lookups read) */
	bool used; /* (m) */
	_Atomic uint64_t stamp; /* LRU: last use (a) */
	uint8_t data[]; /* key rounded to 8 (a free element's first word: the free list), then
			 * the value(s) */
};

struct htab {
	uint32_t nbuckets; /* (c) power of two */
	uint32_t mask; /* (c) nbuckets - 1 */
	uint32_t count; /* (m) */
	uint32_t key_round, value_round, elem_size; /* (c) */
	bool percpu, lru; /* (c) */
	_Atomic uint64_t clock; /* LRU stamps (a) */
	_Atomic uintptr_t *buckets; /* (m, lookups read) first element, or the bucket's nulls */
	struct helem *free; /* (m) */
	uint8_t *pool; /* (c) */
};

/* A chain's end: the bucket's index, tagged (elements are 8-byte aligned). */
#define NULLS(b) ((uintptr_t)(b) << 1 | 1)
#define IS_NULLS(p) ((p) & 1)

static struct helem **free_link(struct helem *e)
{
	return (struct helem **)(void *)e->data;
}

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
	h->mask = h->nbuckets - 1;
	h->key_round = (map->key_size + 7) & ~7u;
	h->value_round = (map->value_size + 7) & ~7u;
	h->elem_size = (uint32_t)sizeof(struct helem) + h->key_round + h->value_round * nvalues(map);
	h->percpu = bpf_map_is_percpu(map->type);
	h->lru = map->type == BPF_MAP_TYPE_LRU_HASH;
	h->buckets = ksvc_alloc(sizeof(*h->buckets) * h->nbuckets);
	h->pool = ksvc_alloc((size_t)h->elem_size * map->max_entries);
	if (!h->buckets || !h->pool) {
		ksvc_free(h->buckets);
		ksvc_free(h->pool);
		ksvc_free(h);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < h->nbuckets; b++)
		atomic_init(&h->buckets[b], NULLS(b));
	for (uint32_t i = map->max_entries; i-- > 0;) {
		*free_link(elem_at(h, i)) = h->free;
		h->free = elem_at(h, i);
	}
	map->priv = h;
	return 0;
}

static uint8_t *value_of(struct bpf_map *map, struct helem *e, unsigned int cpu);

/* Zero e's key and value, all but the value's struct bpf_timer (which bpf_timer_detach takes
 * and clears under its own lock, as a program may be making one there). */
static void zero_but_timer(struct bpf_map *map, struct helem *e)
{
	struct htab *h = map->priv;
	uint8_t *end = e->data + (h->elem_size - sizeof(*e));

	if (map->timer_off < 0) {
		memset(e->data, 0, (size_t)(end - e->data));
		return;
	}
	uint8_t *t = value_of(map, e, 0) + map->timer_off;

	memset(e->data, 0, (size_t)(t - e->data));
	memset(t + sizeof(struct bpf_timer), 0, (size_t)(end - (t + sizeof(struct bpf_timer))));
}

/* Linux's htab_free_timers, on map_release_uref: every element's timer goes */
static void htab_release_uref(struct bpf_map *map)
{
	struct htab *h = map->priv;
	struct bpf_hrt *timers = NULL;
	unsigned long irq;

	if (map->timer_off < 0)
		return;
	irq = spin_lock_irqsave(&map->lock);
	/* free elements too: a program may have made one there after the delete */
	for (uint32_t i = 0; i < map->max_entries; i++)
		timers = bpf_timer_detach(map, value_of(map, elem_at(h, i), 0), timers);
	spin_unlock_irqrestore(&map->lock, irq);
	bpf_timer_release(timers);
}

static void htab_free(struct bpf_map *map)
{
	htab_release_uref(map);
	struct htab *h = map->priv;

	ksvc_free(h->buckets);
	ksvc_free(h->pool);
	ksvc_free(h);
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8); /* one load: keys need not be aligned */
	return v;
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

#define HASH_MUL 0x9e3779b97f4a7c15ull /* 2^64 / the golden ratio, odd */

/* The key bytes as words (the last one zero-padded), each mixed in with a multiply, then the
 * high half of a last multiply (Fibonacci hashing): a few instructions per 8 bytes rather
 * than a round per byte, for the lookup on every overflow. */
static inline __attribute__((always_inline)) uint32_t key_hash(const void *key, uint32_t len)
{
	const uint8_t *p = key;
	uint64_t x = len, w = 0;

	for (; len >= 8; len -= 8, p += 8)
		x = (x ^ load64(p)) * HASH_MUL;
	if (len) {
		uint32_t i = 0;

		if (len >= 4) {
			w = load32(p);
			i = 4;
		}
		for (; i < len; i++)
			w |= (uint64_t)p[i] << (8 * i);
		x = (x ^ w) * HASH_MUL;
	}
	return (uint32_t)(((x ^ x >> 32) * HASH_MUL) >> 32);
}

/* memcmp(a, b, len) == 0, a word at a time. */
static inline __attribute__((always_inline)) bool key_eq(const uint8_t *a, const uint8_t *b, uint32_t len)
{
	for (; len >= 8; len -= 8, a += 8, b += 8)
		if (load64(a) != load64(b))
			return false;
	if (len >= 4) {
		if (load32(a) != load32(b))
			return false;
		len -= 4, a += 4, b += 4;
	}
	for (uint32_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static struct helem *chain_next(const _Atomic uintptr_t *link)
{
	/* Acquire pairs with the release store that published the element (htab_put) */
	uintptr_t p = atomic_load_explicit(link, memory_order_acquire);

	return IS_NULLS(p) ? NULL : (struct helem *)p;
}

/* The lookup a program makes: no lock (see the top of the file). */
static inline __attribute__((always_inline)) struct helem *find_lockless(struct htab *h, const void *key, uint32_t key_size,
				   uint32_t hash)
{
	uint32_t b = hash & h->mask;
	uintptr_t p;

	do {
		p = atomic_load_explicit(&h->buckets[b], memory_order_acquire);
		while (!IS_NULLS(p)) {
			struct helem *e = (struct helem *)p;

			if (READ_ONCE(e->hash) == hash && key_eq(e->data, key, key_size))
				return e;
			p = atomic_load_explicit(&e->next, memory_order_acquire);
		}
	} while (p != NULLS(b)); /* ended in another bucket's chain: an element moved */
	return NULL;
}

static struct helem *find_locked(struct bpf_map *map, const void *key, uint32_t hash)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;

	for (struct helem *e = chain_next(&h->buckets[hash & (h->nbuckets - 1)]); e;
	     e = chain_next(&e->next))
		if (e->hash == hash && key_eq(e->data, key, map->key_size))
			return e;
	return NULL;
}

static uint8_t *value_of(struct bpf_map *map, struct helem *e, unsigned int cpu)
{
	struct htab *h = map->priv;

	return e->data + h->key_round + (size_t)h->value_round * cpu;
}

/* Take e out of its chain; its timer (if any) goes on *timers for bpf_timer_release once
 * map->lock is dropped. */
static void unlink_locked(struct bpf_map *map, struct helem *e, struct bpf_hrt **timers)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;
	_Atomic uintptr_t *pp = &h->buckets[e->hash & (h->nbuckets - 1)];

	while (chain_next(pp) != e)
		pp = &chain_next(pp)->next;
	/* e keeps its link: a lockless walk standing on it goes on along the chain */
	atomic_store_explicit(pp, atomic_load_explicit(&e->next, memory_order_relaxed),
			      memory_order_release);
	e->used = false;
	*timers = bpf_timer_detach(map, value_of(map, e, 0), *timers);
	*free_link(e) = h->free;
	h->free = e;
	h->count--;
}

static void evict_lru_locked(struct bpf_map *map, struct bpf_hrt **timers)
{
	spin_assert_held(&map->lock);
	struct htab *h = map->priv;
	struct helem *old = NULL;

	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct helem *e = elem_at(h, i);

		if (e->used && (!old || atomic_load_explicit(&e->stamp, memory_order_relaxed) <
						atomic_load_explicit(&old->stamp, memory_order_relaxed)))
			old = e;
	}
	if (old)
		unlink_locked(map, old, timers);
}

static void lru_touch(struct htab *h, struct helem *e)
{
	atomic_store_explicit(&e->stamp,
			      atomic_fetch_add_explicit(&h->clock, 1, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void *htab_lookup_cpu(struct bpf_map *map, const void *key, uint32_t cpu)
{
	struct htab *h = map->priv;
	struct helem *e = find_lockless(h, key, map->key_size, key_hash(key, map->key_size));

	if (!e)
		return NULL;
	if (h->lru)
		lru_touch(h, e);
	return e->data + h->key_round + (size_t)h->value_round * cpu;
}

static void *htab_lookup(struct bpf_map *map, const void *key)
{
	struct htab *h = map->priv;
	uint32_t ks = map->key_size;
	struct helem *e;

	/* the common key sizes (a pid, a pid_tgid, a stack id) with the size known: straight code */
	if (ks == 8)
		e = find_lockless(h, key, 8, key_hash(key, 8));
	else if (ks == 4)
		e = find_lockless(h, key, 4, key_hash(key, 4));
	else
		e = find_lockless(h, key, ks, key_hash(key, ks));

	if (!e)
		return NULL;
	if (h->lru)
		lru_touch(h, e);
	return e->data + h->key_round + (h->percpu ? (size_t)h->value_round * ksvc_cpu_id() : 0);
}

/* htab_lookup for a HASH map (neither LRU nor per-CPU) with 8- or 4-byte keys (a pid_tgid, a
 * stack id), which the JIT calls directly: no size or flavour to test on every overflow. */
static void *htab_lookup_k8(struct bpf_map *map, const void *key)
{
	struct htab *h = map->priv;
	struct helem *e = find_lockless(h, key, 8, key_hash(key, 8));

	return e ? e->data + 8 : NULL;
}

static void *htab_lookup_k4(struct bpf_map *map, const void *key)
{
	struct htab *h = map->priv;
	struct helem *e = find_lockless(h, key, 4, key_hash(key, 4));

	return e ? e->data + 8 : NULL; /* the key rounded up to 8 */
}

static bpf_map_lookup_fn htab_lookup_for(const struct bpf_map *map)
{
	const struct htab *h = map->priv;

	if (h->lru || h->percpu)
		return NULL;
	return map->key_size == 8 ? htab_lookup_k8 : map->key_size == 4 ? htab_lookup_k4 : NULL;
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
	struct bpf_hrt *timers = NULL;
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
			evict_lru_locked(map, &timers);
		if (!h->free) {
			err = -E2BIG;
			goto out;
		}
		_Atomic uintptr_t *head = &h->buckets[hash & (h->nbuckets - 1)];

		e = h->free;
		h->free = *free_link(e);
		/* a timer a program made in the element after its delete (through a value
		 * pointer it still held) goes now: the element is zeroed but for its timer's
		 * word, which bpf_timer_detach then takes under the timer lock.  Zeroed first,
		 * a timer such a program made in between lost its only pointer, was never
		 * cancelled and ran after the map was freed, into whatever reused its memory. */
		zero_but_timer(map, e);
		timers = bpf_timer_detach(map, value_of(map, e, 0), timers);
		memcpy(e->data, key, map->key_size);
		WRITE_ONCE(e->hash, hash);
		e->used = true;
		atomic_store_explicit(&e->next, atomic_load_explicit(head, memory_order_relaxed),
				      memory_order_release);
		/* Release pairs with the acquire in find_lockless: the element is filled */
		atomic_store_explicit(head, (uintptr_t)e, memory_order_release);
		h->count++;
	}
	lru_touch(h, e);
	if (map->timer_off >= 0 || map->spin_lock_off >= 0) {
		/* Linux puts a new element in, with a fresh timer: the old one's goes */
		bpf_map_copy_value(map, value_of(map, e, 0), value);
		timers = bpf_timer_detach(map, value_of(map, e, 0), timers);
	} else if (!percpu)
		memcpy(value_of(map, e, 0), value, map->value_size);
	else if (!all_cpus)
		memcpy(value_of(map, e, ksvc_cpu_id()), value, map->value_size);
	else
		for (unsigned int cpu = 0; cpu < ksvc_nr_cpus(); cpu++)
			memcpy(value_of(map, e, cpu), (const uint8_t *)value + (size_t)cpu * h->value_round,
			       map->value_size);
	if (!all_cpus) /* a program's update: Linux frees the old value's kptrs */
		bpf_map_kptrs_zero(map, value_of(map, e, percpu ? ksvc_cpu_id() : 0));
out:
	spin_unlock_irqrestore(&map->lock, irq);
	bpf_timer_release(timers);
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
	struct bpf_hrt *timers = NULL;

	if (e)
		unlink_locked(map, e, &timers);
	spin_unlock_irqrestore(&map->lock, flags);
	bpf_timer_release(timers);
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
		e = chain_next(&e->next);
	}
	while (!e && b < h->nbuckets)
		e = chain_next(&h->buckets[b++]);
	if (e)
		memcpy(next, e->data, map->key_size);
	else
		err = -ENOENT;
	spin_unlock_irqrestore(&map->lock, flags);
	return err;
}

#define HTAB_OPS                                                                                   \
	.check = htab_check, .alloc = htab_alloc, .free = htab_free, .lookup = htab_lookup,        \
	.lookup_for = htab_lookup_for, .update = htab_update, .delete = htab_delete,               \
	.sys_lookup = htab_sys_lookup, .sys_update = htab_sys_update, .get_next_key = htab_next_key, \
	.release_uref = htab_release_uref

const struct bpf_map_ops bpf_hash_ops = { HTAB_OPS };
const struct bpf_map_ops bpf_percpu_hash_ops = { HTAB_OPS, .lookup_cpu = htab_lookup_cpu };
const struct bpf_map_ops bpf_lru_hash_ops = { HTAB_OPS };
