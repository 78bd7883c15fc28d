/*
 * map_in_map.c - BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS: maps whose values
 * are other maps, all alike the inner-map template given at creation.
 *
 * Linux 6.1 semantics (map_in_map.c, arraymap.c, hashtab.c): value_size 4 (a map fd); the
 * array takes the fd-array attributes (EINVAL otherwise), the hash the hash ones.
 * inner_map_fd names the template: EBADF for no file, EINVAL for a file that is not a map or
 * for a map-in-map (one level only), ENOTSUPP (524) for a program array (no map_meta_equal).
 * The template keeps the inner map's type, key and value size and flags (and max_entries for
 * an ARRAY without BPF_F_INNER_MAP); an update with a map that differs is EINVAL.  The
 * syscall: UPDATE takes a map fd (array: BPF_ANY only, E2BIG past the end; hash: the hash's
 * flags, EEXIST / ENOENT / E2BIG, after the fd is resolved), LOOKUP gives the inner map's id,
 * DELETE (array: E2BIG past the end, ENOENT empty; hash: ENOENT), GET_NEXT_KEY as the outer
 * kind.  Programs may only bpf_map_lookup_elem, which gives the inner map itself (the
 * verifier types it as the template after the null check).  A slot holds a reference on its
 * map.  The hash keeps the inner maps' addresses in a BPF_MAP_TYPE_HASH of 8-byte values
 * (map_hash.c) that has no id; map->lock orders each replacement with the reference it drops.
 * Not here: RCU before an inner map replaced under a running program goes (as the other maps).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

/* ---- the template ---- */

int bpf_map_meta_alloc(int inner_fd, struct bpf_map **out)
{
	struct bpf_map *inner, *meta;
	int err = bpf_map_get_fd(inner_fd, &inner);

	if (err)
		return err;
	if (inner->inner_meta)
		err = -EINVAL; /* one level of nesting only */
	else if (inner->type == BPF_MAP_TYPE_PROG_ARRAY)
		err = -BPF_ENOTSUPP; /* no map_meta_equal: it cannot be an inner map */
	meta = err ? NULL : ksvc_alloc(sizeof(*meta));
	if (!err && !meta)
		err = -ENOMEM;
	if (!err) {
		memset(meta, 0, sizeof(*meta));
		meta->ops = inner->ops;
		meta->type = inner->type;
		meta->key_size = inner->key_size;
		meta->value_size = inner->value_size;
		meta->max_entries = inner->max_entries;
		meta->map_flags = inner->map_flags;
		meta->map_extra = inner->map_extra;
		meta->spin_lock_off = inner->spin_lock_off;
		meta->timer_off = inner->timer_off;
		memcpy(meta->kptrs, inner->kptrs, sizeof(meta->kptrs));
		meta->nr_kptrs = inner->nr_kptrs;
		meta->kptr_err = inner->kptr_err;
		memcpy(meta->name, inner->name, sizeof(meta->name));
		*out = meta;
	}
	bpf_map_put(inner);
	return err;
}

/* Linux's map_meta_equal: bpf_map_meta_equal, and array_map_meta_equal's max_entries. */
static bool meta_equal(const struct bpf_map *meta, const struct bpf_map *m)
{
	if (meta->type != m->type || meta->key_size != m->key_size ||
	    meta->value_size != m->value_size || meta->map_flags != m->map_flags ||
	    meta->nr_kptrs != m->nr_kptrs ||
	    memcmp(meta->kptrs, m->kptrs, sizeof(m->kptrs[0]) * m->nr_kptrs))
		return false; /* bpf_map_equal_kptr_off_tab too */
	return meta->type != BPF_MAP_TYPE_ARRAY || (meta->map_flags & BPF_F_INNER_MAP) ||
	       meta->max_entries == m->max_entries;
}

/* The map fd as a value of outer, with a reference: -EBADF, or -EINVAL (no map, unlike the
 * template). */
static int inner_get(struct bpf_map *outer, int fd, struct bpf_map **out)
{
	int err = bpf_map_get_fd(fd, out);

	if (!err && !meta_equal(outer->inner_meta, *out)) {
		bpf_map_put(*out);
		err = -EINVAL;
	}
	return err;
}

static uint32_t id_of(const struct bpf_map *inner)
{
	return inner ? inner->id : 0;
}

static int mim_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return -EINVAL; /* programs only look up */
}

/* ---- ARRAY_OF_MAPS ---- */

static int aom_alloc(struct bpf_map *map)
{
	size_t bytes = sizeof(struct bpf_map *) * map->max_entries;

	map->priv = ksvc_alloc(bytes);
	if (!map->priv)
		return -ENOMEM;
	memset(map->priv, 0, bytes);
	return 0;
}

static struct bpf_map *aom_swap(struct bpf_map *map, uint32_t index, struct bpf_map *inner)
{
	return bpf_fd_array_swap(map, map->priv, index, inner);
}

static void aom_free(struct bpf_map *map)
{
	for (uint32_t i = 0; i < map->max_entries; i++)
		bpf_map_put(aom_swap(map, i, NULL));
	ksvc_free(map->priv);
}

static void *aom_lookup(struct bpf_map *map, const void *key)
{
	struct bpf_map **slots = map->priv;
	uint32_t index;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return NULL;
	return __atomic_load_n(&slots[index], __ATOMIC_ACQUIRE);
}

static int aom_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	unsigned long irq = spin_lock_irqsave(&map->lock);
	uint32_t id = id_of(aom_lookup(map, key));

	spin_unlock_irqrestore(&map->lock, irq);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, 4);
	return 0;
}

static int aom_sys_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	struct bpf_map *inner;
	uint32_t index;
	int fd, err;

	err = bpf_fd_array_slot(map, key, value, flags, &index, &fd);
	if (!err)
		err = inner_get(map, fd, &inner);
	if (err)
		return err;
	bpf_map_put(aom_swap(map, index, inner));
	return 0;
}

static int aom_delete(struct bpf_map *map, const void *key)
{
	void *old;
	int err = bpf_fd_array_take(map, map->priv, key, &old);

	if (!err)
		bpf_map_put(old);
	return err;
}

const struct bpf_map_ops bpf_array_of_maps_ops = {
	.check = bpf_fd_array_check,
	.alloc = aom_alloc,
	.free = aom_free,
	.lookup = aom_lookup,
	.update = mim_update,
	.delete = aom_delete,
	.sys_lookup = aom_sys_lookup,
	.sys_update = aom_sys_update,
	.get_next_key = bpf_array_next_key,
};

/* ---- HASH_OF_MAPS: a hash of the inner maps' addresses ---- */

static int hom_check(const union bpf_attr *attr)
{
	union bpf_attr h = *attr;

	if (attr->value_size != 4)
		return -EINVAL;
	h.map_type = BPF_MAP_TYPE_HASH;
	return bpf_hash_ops.check(&h);
}

static int hom_alloc(struct bpf_map *map)
{
	struct bpf_map *tab = ksvc_alloc(sizeof(*tab));
	int err;

	if (!tab)
		return -ENOMEM;
	memset(tab, 0, sizeof(*tab));
	tab->ops = &bpf_hash_ops;
	tab->type = BPF_MAP_TYPE_HASH;
	tab->key_size = map->key_size;
	tab->value_size = sizeof(struct bpf_map *);
	tab->max_entries = map->max_entries;
	tab->map_flags = map->map_flags;
	tab->spin_lock_off = tab->timer_off = -EINVAL; /* map pointers only */
	spin_init(&tab->lock);
	atomic_store(&tab->refcnt, 1);
	err = tab->ops->alloc(tab);
	if (err) {
		ksvc_free(tab);
		return err;
	}
	map->priv = tab;
	return 0;
}

/* The inner map under key, or NULL. */
static struct bpf_map *hom_get(struct bpf_map *map, const void *key)
{
	struct bpf_map *tab = map->priv;
	struct bpf_map **v = tab->ops->lookup(tab, key);

	return v ? __atomic_load_n(v, __ATOMIC_ACQUIRE) : NULL;
}

static void hom_free(struct bpf_map *map)
{
	struct bpf_map *tab = map->priv;
	uint8_t key[BPF_STACK_SIZE], next[BPF_STACK_SIZE];
	bool first = true;

	/* every element's map, then the table */
	while (tab->ops->get_next_key(tab, first ? NULL : key, next) == 0) {
		bpf_map_put(hom_get(map, next));
		memcpy(key, next, map->key_size);
		first = false;
	}
	tab->ops->free(tab);
	ksvc_free(tab);
}

static void *hom_lookup(struct bpf_map *map, const void *key)
{
	return hom_get(map, key);
}

static int hom_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	unsigned long irq = spin_lock_irqsave(&map->lock);
	uint32_t id = id_of(hom_get(map, key));

	spin_unlock_irqrestore(&map->lock, irq);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, 4);
	return 0;
}

static int hom_sys_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	struct bpf_map *tab = map->priv, *inner, *old;
	unsigned long irq;
	uint32_t fd;
	int err;

	memcpy(&fd, value, 4);
	err = inner_get(map, (int)fd, &inner); /* the fd first, then the hash's flags (Linux) */
	if (err)
		return err;
	irq = spin_lock_irqsave(&map->lock);
	old = hom_get(map, key);
	err = tab->ops->update(tab, key, &inner, flags);
	spin_unlock_irqrestore(&map->lock, irq);
	bpf_map_put(err ? inner : old);
	return err;
}

static int hom_delete(struct bpf_map *map, const void *key)
{
	struct bpf_map *tab = map->priv, *old;
	unsigned long irq = spin_lock_irqsave(&map->lock);
	int err;

	old = hom_get(map, key);
	err = tab->ops->delete(tab, key);
	spin_unlock_irqrestore(&map->lock, irq);
	if (!err)
		bpf_map_put(old);
	return err;
}

static int hom_next_key(struct bpf_map *map, const void *key, void *next)
{
	struct bpf_map *tab = map->priv;

	return tab->ops->get_next_key(tab, key, next);
}

const struct bpf_map_ops bpf_hash_of_maps_ops = {
	.check = hom_check,
	.alloc = hom_alloc,
	.free = hom_free,
	.lookup = hom_lookup,
	.update = mim_update,
	.delete = hom_delete,
	.sys_lookup = hom_sys_lookup,
	.sys_update = hom_sys_update,
	.get_next_key = hom_next_key,
};
