/*
 * map_misc.c - BPF_MAP_TYPE_PERF_EVENT_ARRAY and BPF_MAP_TYPE_STACK_TRACE.
 *
 * PERF_EVENT_ARRAY (Linux 6.1 fd array): u32 key and u32 value; the syscall stores a perf event
 * fd, which perf's registered struct bpf_perf_ops turns into an event reference (EBADF for an
 * fd that is not a perf event, also before perf registers); update flags other than BPF_ANY are
 * EINVAL, indexes past the end E2BIG, lookup from the syscall ENOTSUPP (524), delete of an empty
 * slot ENOENT.  When the last map fd closes the events are dropped (Linux releases them with the
 * file that added them).  Programs reach the events only through bpf_perf_event_output/read.
 *
 * STACK_TRACE: u32 stack id -> up to value_size/8 u64 instruction pointers, filled by
 * bpf_get_stackid (bpf_stackmap_insert); buckets are preallocated so inserts never allocate.
 * Same id for the same stack; a different stack hashing to a taken id is EEXIST unless
 * BPF_F_REUSE_STACKID.  The syscall side can look up (zero-padded), delete and iterate; update
 * is EINVAL.  bpf_get_stackid finds a stack already stored without the map lock, as Linux
 * does: a bucket is filled before it is published (release), and buckets are never freed
 * while the map lives (a replaced or deleted one is reused later, Linux's freelist race
 * included).  Not here: BPF_F_STACK_BUILD_ID.  The buckets come in chunks of at most
 * STACK_CHUNK bytes: bpftrace's map (131072 ids of 127 frames) is 133 MB, which Linux takes
 * from vmalloc and which no single block of the page allocator holds.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

/* ---- perf event array ---- */

static int perf_array_check(const union bpf_attr *attr)
{
	if (attr->max_entries == 0 || attr->key_size != 4 || attr->value_size != 4 ||
	    (attr->map_flags & ~(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY |
				 BPF_F_PRESERVE_ELEMS)))
		return -EINVAL;
	if (attr->max_entries > (1u << 20))
		return -E2BIG;
	return 0;
}

static int perf_array_alloc(struct bpf_map *map)
{
	map->priv = ksvc_alloc(sizeof(void *) * map->max_entries);
	return map->priv ? 0 : -ENOMEM;
}

static void perf_array_clear(struct bpf_map *map)
{
	void **ev = map->priv;
	const struct bpf_perf_ops *ops = bpf_perf();

	for (uint32_t i = 0; i < map->max_entries; i++) {
		unsigned long flags = spin_lock_irqsave(&map->lock);
		void *old = ev[i];

		ev[i] = NULL;
		spin_unlock_irqrestore(&map->lock, flags);
		if (old && ops)
			ops->event_put(old);
	}
}

static void perf_array_free(struct bpf_map *map)
{
	perf_array_clear(map);
	ksvc_free(map->priv);
}

void *bpf_perf_array_event(struct bpf_map *map, uint32_t index)
{
	void **ev = map->priv;

	if (map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY || index >= map->max_entries)
		return NULL;
	return __atomic_load_n(&ev[index], __ATOMIC_ACQUIRE);
}

static void *no_lookup(struct bpf_map *map, const void *key)
{
	return NULL;
}

static int no_prog_update(struct bpf_map *map, const void *key, const void *value, uint64_t f)
{
	return -EINVAL;
}

static int perf_array_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	return -BPF_ENOTSUPP;
}

static int perf_array_sys_update(struct bpf_map *map, const void *key, const void *value,
				 uint64_t flags)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	void **ev = map->priv, *event, *old;
	uint32_t index;
	unsigned long irq;
	int fd, err;

	err = bpf_fd_array_slot(map, key, value, flags, &index, &fd);
	if (err)
		return err;
	if (!ops)
		return -EBADF; /* nothing can be a perf event before perf registers */
	err = ops->event_get_fd(fd, &event);
	if (err)
		return err;
	irq = spin_lock_irqsave(&map->lock);
	old = ev[index];
	__atomic_store_n(&ev[index], event, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&map->lock, irq);
	if (old)
		ops->event_put(old);
	return 0;
}

static int perf_array_delete(struct bpf_map *map, const void *key)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	void **ev = map->priv, *old;
	unsigned long irq;
	uint32_t index;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return -E2BIG;
	irq = spin_lock_irqsave(&map->lock);
	old = ev[index];
	ev[index] = NULL;
	spin_unlock_irqrestore(&map->lock, irq);
	if (!old)
		return -ENOENT;
	if (ops)
		ops->event_put(old);
	return 0;
}

static int index_next_key(uint32_t n, const void *key, void *next)
{
	uint32_t index = 0, r;

	if (key)
		memcpy(&index, key, 4);
	if (!key || index >= n)
		r = 0;
	else if (index == n - 1)
		return -ENOENT;
	else
		r = index + 1;
	memcpy(next, &r, 4);
	return 0;
}

static int perf_array_next_key(struct bpf_map *map, const void *key, void *next)
{
	return index_next_key(map->max_entries, key, next);
}

const struct bpf_map_ops bpf_perf_array_ops = {
	.check = perf_array_check,
	.alloc = perf_array_alloc,
	.free = perf_array_free,
	.lookup = no_lookup,
	.update = no_prog_update,
	.delete = perf_array_delete,
	.sys_lookup = perf_array_sys_lookup,
	.sys_update = perf_array_sys_update,
	.get_next_key = perf_array_next_key,
	.release_uref = perf_array_clear,
};

/* ---- stack trace ---- */

struct stack_bucket {
	struct stack_bucket *next_free;
	uint32_t hash, nr;
	uint64_t ips[];
};

struct stackmap {
	uint32_t nbuckets; /* power of two >= max_entries; ids are < nbuckets */
	uint32_t bucket_size;
	struct stack_bucket **buckets; /* (m; get_stackid reads locklessly, acquire) */
	struct stack_bucket *free; /* (m) */
	uint32_t nchunks;
	uint8_t **chunks; /* the buckets' storage, threaded onto free at create */
};

#define STACK_CHUNK (1u << 20)

#define PERF_MAX_STACK 127

static int stack_check(const union bpf_attr *attr)
{
	if (attr->map_flags & ~(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY))
		return -EINVAL;
	if (attr->max_entries == 0 || attr->key_size != 4 || attr->value_size < 8 ||
	    attr->value_size % 8 || attr->value_size / 8 > PERF_MAX_STACK)
		return -EINVAL;
	if (attr->max_entries > (1u << 20))
		return -E2BIG;
	return 0;
}

static void stack_release(struct stackmap *s)
{
	for (uint32_t c = 0; s->chunks && c < s->nchunks; c++)
		ksvc_free(s->chunks[c]);
	ksvc_free(s->chunks);
	ksvc_free(s->buckets);
	ksvc_free(s);
}

static int stack_alloc(struct bpf_map *map)
{
	struct stackmap *s = ksvc_alloc(sizeof(*s));
	uint32_t per_chunk, left;

	if (!s)
		return -ENOMEM;
	s->nbuckets = 1;
	while (s->nbuckets < map->max_entries)
		s->nbuckets <<= 1;
	s->bucket_size = (uint32_t)sizeof(struct stack_bucket) + map->value_size;
	s->buckets = ksvc_alloc(sizeof(*s->buckets) * s->nbuckets);
	/* one spare per id so a replacing insert always finds a free bucket */
	left = map->max_entries + 1;
	per_chunk = STACK_CHUNK / s->bucket_size;
	s->nchunks = (left + per_chunk - 1) / per_chunk;
	s->chunks = ksvc_alloc(sizeof(*s->chunks) * s->nchunks);
	if (!s->buckets || !s->chunks) {
		stack_release(s);
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < s->nchunks; c++, left -= per_chunk) {
		uint32_t n = left < per_chunk ? left : per_chunk;

		s->chunks[c] = ksvc_alloc((size_t)s->bucket_size * n);
		if (!s->chunks[c]) {
			stack_release(s);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct stack_bucket *b = (void *)(s->chunks[c] + (size_t)i * s->bucket_size);

			b->next_free = s->free;
			s->free = b;
		}
	}
	map->priv = s;
	return 0;
}

static void stack_free(struct bpf_map *map)
{
	stack_release(map->priv);
}

#define IPS_MUL 0x9e3779b97f4a7c15ull /* 2^64 / the golden ratio, odd */

/* Each address mixed in with a multiply, then the high half of a last one: a few
 * instructions per frame (get_stackid runs on every overflow). */
static uint32_t ips_hash(const uint64_t *ips, uint32_t nr)
{
	uint64_t x = nr;

	for (uint32_t i = 0; i < nr; i++)
		x = (x ^ ips[i]) * IPS_MUL;
	return (uint32_t)(((x ^ x >> 32) * IPS_MUL) >> 32);
}

static inline __attribute__((always_inline)) bool ips_eq(const uint64_t *a, const uint64_t *b,
							  uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* b holds this stack (or, with BPF_F_FAST_STACK_CMP, one of its hash and depth). */
static inline __attribute__((always_inline)) bool
bucket_holds(const struct stack_bucket *b, uint32_t hash, const uint64_t *ips, uint32_t nr,
	     uint64_t flags)
{
	return b && b->hash == hash && b->nr == nr &&
	       ((flags & BPF_F_FAST_STACK_CMP) || ips_eq(b->ips, ips, nr));
}

/* A stack not in its bucket: store it there, under the map's lock. */
static __attribute__((noinline)) long stackmap_insert_locked(struct bpf_map *map,
							     const uint64_t *ips, uint32_t nr,
							     uint64_t flags, uint32_t hash)
{
	struct stackmap *s = map->priv;
	uint32_t id = hash & (s->nbuckets - 1);
	struct stack_bucket *b, *nb;
	unsigned long irq;
	long ret;

	irq = spin_lock_irqsave(&map->lock);
	b = s->buckets[id];
	if (bucket_holds(b, hash, ips, nr, flags)) {
		ret = id;
		goto out;
	}
	if (b && !(flags & BPF_F_REUSE_STACKID)) {
		ret = -EEXIST;
		goto out;
	}
	nb = s->free;
	if (!nb) {
		ret = -ENOMEM;
		goto out;
	}
	s->free = nb->next_free;
	nb->hash = hash;
	nb->nr = nr;
	memcpy(nb->ips, ips, (size_t)nr * 8);
	/* Release: a lockless get_stackid that finds nb sees it filled */
	__atomic_store_n(&s->buckets[id], nb, __ATOMIC_RELEASE);
	if (b) {
		b->next_free = s->free;
		s->free = b;
	}
	ret = id;
out:
	spin_unlock_irqrestore(&map->lock, irq);
	return ret;
}

long bpf_stackmap_insert(struct bpf_map *map, const uint64_t *ips, uint32_t nr, uint64_t flags)
{
	struct stackmap *s = map->priv;
	uint32_t hash, id;

	if (map->type != BPF_MAP_TYPE_STACK_TRACE)
		return -EINVAL;
	if (nr > map->value_size / 8)
		nr = map->value_size / 8;
	hash = ips_hash(ips, nr);
	id = hash & (s->nbuckets - 1);
	/* the common case, a stack seen before: no lock (acquire pairs with the release in
	 * stackmap_insert_locked) */
	if (bucket_holds(__atomic_load_n(&s->buckets[id], __ATOMIC_ACQUIRE), hash, ips, nr, flags))
		return id;
	return stackmap_insert_locked(map, ips, nr, flags, hash);
}

static int stack_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	struct stackmap *s = map->priv;
	struct stack_bucket *b;
	unsigned long irq;
	uint32_t id;
	int err = 0;

	memcpy(&id, key, 4);
	if (id >= s->nbuckets)
		return -ENOENT;
	irq = spin_lock_irqsave(&map->lock);
	b = s->buckets[id];
	if (b) {
		memcpy(value, b->ips, (size_t)b->nr * 8);
		memset((uint8_t *)value + b->nr * 8, 0, map->value_size - b->nr * 8);
	} else {
		err = -ENOENT;
	}
	spin_unlock_irqrestore(&map->lock, irq);
	return err;
}

static int stack_sys_update(struct bpf_map *map, const void *key, const void *value, uint64_t f)
{
	return -EINVAL;
}

static int stack_delete(struct bpf_map *map, const void *key)
{
	struct stackmap *s = map->priv;
	struct stack_bucket *b;
	unsigned long irq;
	uint32_t id;

	memcpy(&id, key, 4);
	if (id >= s->nbuckets)
		return -EINVAL;
	irq = spin_lock_irqsave(&map->lock);
	b = s->buckets[id];
	if (b) {
		__atomic_store_n(&s->buckets[id], NULL, __ATOMIC_RELAXED);
		b->next_free = s->free;
		s->free = b;
	}
	spin_unlock_irqrestore(&map->lock, irq);
	return b ? 0 : -ENOENT;
}

static int stack_next_key(struct bpf_map *map, const void *key, void *next)
{
	struct stackmap *s = map->priv;
	uint32_t id = 0;
	unsigned long irq;
	int err = -ENOENT;

	if (key) {
		memcpy(&id, key, 4);
		id = id >= s->nbuckets ? 0 : id + 1;
	}
	irq = spin_lock_irqsave(&map->lock);
	for (; id < s->nbuckets; id++)
		if (s->buckets[id]) {
			memcpy(next, &id, 4);
			err = 0;
			break;
		}
	spin_unlock_irqrestore(&map->lock, irq);
	return err;
}

const struct bpf_map_ops bpf_stack_ops = {
	.check = stack_check,
	.alloc = stack_alloc,
	.free = stack_free,
	.lookup = no_lookup,
	.update = no_prog_update,
	.delete = stack_delete,
	.sys_lookup = stack_sys_lookup,
	.sys_update = stack_sys_update,
	.get_next_key = stack_next_key,
};
