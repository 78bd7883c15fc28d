/*
 * map_array.c - BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY.
 *
 * Linux 6.1 semantics: u32 keys 0..max_entries-1, every element always exists (zeroed at
 * creation), update with BPF_NOEXIST fails with EEXIST, delete with EINVAL, get_next_key walks
 * the indexes.  BPF_F_MMAPABLE arrays (global data: .data/.rodata/.bss) keep their values in
 * whole pages so fs/ can map them (bpf_map_mmap_area); BPF_MAP_FREEZE is in syscall.c.
 * Per-CPU arrays keep one copy per CPU; the syscall side sees all copies, each rounded to 8 bytes.
 * Values are read and written without locks, as in Linux (no BPF_F_LOCK).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct array {
	uint32_t elem; /* value size rounded to 8 */
	uint32_t order; /* mmapable: page order of data, else 0 */
	bool pages;
	uint8_t *data; /* percpu: [cpu][index] */
};

#define ARRAY_MAX_BYTES (64u << 20)

static int array_check(const union bpf_attr *attr)
{
	uint32_t ok = BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_RDONLY | BPF_F_WRONLY |
		      BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP;
	bool percpu = attr->map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	uint64_t bytes;

	if (attr->max_entries == 0 || attr->key_size != 4 || attr->value_size == 0 ||
	    (attr->map_flags & ~ok) || (percpu && (attr->map_flags & (BPF_F_MMAPABLE | BPF_F_INNER_MAP))) ||
	    (attr->map_flags & BPF_F_PRESERVE_ELEMS))
		return -EINVAL;
	if (attr->value_size > (1u << 20) || (percpu && attr->value_size > 32768))
		return -E2BIG;
	bytes = (uint64_t)attr->max_entries * ((attr->value_size + 7) & ~7u);
	if (percpu)
		bytes *= ksvc_nr_cpus();
	if (bytes > ARRAY_MAX_BYTES)
		return -ENOMEM;
	return 0;
}

static int array_alloc(struct bpf_map *map)
{
	struct array *a = ksvc_alloc(sizeof(*a));
	uint64_t bytes;

	if (!a)
		return -ENOMEM;
	a->elem = (map->value_size + 7) & ~7u;
	bytes = (uint64_t)a->elem * map->max_entries;
	if (bpf_map_is_percpu(map->type))
		bytes *= ksvc_nr_cpus();
	if (map->map_flags & BPF_F_MMAPABLE) {
		while (((uint64_t)KSVC_PAGE_SIZE << a->order) < bytes)
			a->order++;
		a->pages = true;
		a->data = ksvc_alloc_pages(a->order);
	} else {
		a->data = ksvc_alloc((size_t)bytes);
	}
	if (!a->data) {
		ksvc_free(a);
		return -ENOMEM;
	}
	map->priv = a;
	return 0;
}

/* Linux's array_map_free_timers, on map_release_uref: every element's timer goes */
static void array_release_uref(struct bpf_map *map)
{
	if (map->timer_off < 0)
		return;
	for (uint32_t i = 0; i < map->max_entries; i++)
		bpf_timer_free_value(map, ((struct array *)map->priv)->data +
						  (size_t)i * ((struct array *)map->priv)->elem);
}

static void array_free(struct bpf_map *map)
{
	struct array *a = map->priv;

	array_release_uref(map);

	if (a->pages)
		ksvc_free_pages(a->data, a->order);
	else
		ksvc_free(a->data);
	ksvc_free(a);
}

void *bpf_array_base(struct bpf_map *map)
{
	return ((struct array *)map->priv)->data;
}

bool bpf_array_layout(const struct bpf_map *map, uint8_t **base, uint32_t *elem)
{
	const struct array *a = map->priv;

	if (map->type != BPF_MAP_TYPE_ARRAY)
		return false;
	*base = a->data;
	*elem = a->elem;
	return true;
}

static uint8_t *elem(struct bpf_map *map, uint32_t index, unsigned int cpu)
{
	struct array *a = map->priv;

	return a->data + ((size_t)cpu * map->max_entries + index) * a->elem;
}

static void *array_lookup_cpu(struct bpf_map *map, const void *key, uint32_t cpu)
{
	uint32_t index;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return NULL;
	return elem(map, index, cpu);
}

static void *array_lookup(struct bpf_map *map, const void *key)
{
	return array_lookup_cpu(map, key, bpf_map_is_percpu(map->type) ? ksvc_cpu_id() : 0);
}

static int update_check(struct bpf_map *map, const void *key, uint64_t flags, uint32_t *index)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	memcpy(index, key, 4);
	if (*index >= map->max_entries)
		return -E2BIG;
	if (flags == BPF_NOEXIST)
		return -EEXIST;
	return 0;
}

static int array_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	uint32_t index;
	int err = update_check(map, key, flags, &index);

	if (err)
		return err;
	void *v = elem(map, index, bpf_map_is_percpu(map->type) ? ksvc_cpu_id() : 0);

	if (map->timer_off >= 0 || map->spin_lock_off >= 0) {
		/* copy_map_value, then check_and_free_fields: an overwrite frees the timer */
		bpf_map_copy_value(map, v, value);
		bpf_timer_free_value(map, v);
	} else {
		memcpy(v, value, map->value_size);
	}
	bpf_map_kptrs_zero(map, v); /* Linux's check_and_free_fields */
	return 0;
}

static int array_delete(struct bpf_map *map, const void *key)
{
	return -EINVAL;
}

static int array_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	struct array *a = map->priv;
	uint32_t index;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return -ENOENT;
	if (!bpf_map_is_percpu(map->type)) {
		memcpy(value, elem(map, index, 0), map->value_size);
		return 0;
	}
	for (unsigned int cpu = 0; cpu < ksvc_nr_cpus(); cpu++)
		memcpy((uint8_t *)value + (size_t)cpu * a->elem, elem(map, index, cpu), a->elem);
	return 0;
}

static int array_sys_update(struct bpf_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	struct array *a = map->priv;
	uint32_t index;
	int err = update_check(map, key, flags, &index);

	if (err)
		return err;
	if (!bpf_map_is_percpu(map->type))
		return array_update(map, key, value, flags);
	for (unsigned int cpu = 0; cpu < ksvc_nr_cpus(); cpu++)
		memcpy(elem(map, index, cpu), (const uint8_t *)value + (size_t)cpu * a->elem,
		       map->value_size);
	return 0;
}

int bpf_fd_array_check(const union bpf_attr *attr)
{
	if (attr->max_entries == 0 || attr->key_size != 4 || attr->value_size != 4 ||
	    (attr->map_flags & ~(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY)))
		return -EINVAL;
	if (attr->max_entries > (1u << 31))
		return -E2BIG; /* array_map_alloc: the index mask would not cover it */
	return 0;
}

int bpf_fd_array_slot(const struct bpf_map *map, const void *key, const void *value,
		      uint64_t flags, uint32_t *index, int *fd)
{
	if (flags != BPF_ANY)
		return -EINVAL;
	memcpy(index, key, 4);
	memcpy(fd, value, 4);
	return *index >= map->max_entries ? -E2BIG : 0;
}

void *bpf_fd_array_swap(struct bpf_map *map, void **slots, uint32_t index, void *ptr)
{
	unsigned long irq = spin_lock_irqsave(&map->lock);
	void *old = slots[index];

	__atomic_store_n(&slots[index], ptr, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&map->lock, irq);
	return old;
}

int bpf_fd_array_take(struct bpf_map *map, void **slots, const void *key, void **old)
{
	uint32_t index;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return -E2BIG;
	*old = bpf_fd_array_swap(map, slots, index, NULL);
	return *old ? 0 : -ENOENT;
}

int bpf_array_next_key(struct bpf_map *map, const void *key, void *next)
{
	uint32_t index = 0, n;

	if (key)
		memcpy(&index, key, 4);
	if (!key || index >= map->max_entries) {
		n = 0;
	} else {
		if (index == map->max_entries - 1)
			return -ENOENT;
		n = index + 1;
	}
	memcpy(next, &n, 4);
	return 0;
}

const struct bpf_map_ops bpf_array_ops = {
	.check = array_check,
	.alloc = array_alloc,
	.free = array_free,
	.release_uref = array_release_uref,
	.lookup = array_lookup,
	.update = array_update,
	.delete = array_delete,
	.sys_lookup = array_sys_lookup,
	.sys_update = array_sys_update,
	.get_next_key = bpf_array_next_key,
};

const struct bpf_map_ops bpf_percpu_array_ops = {
	.check = array_check,
	.alloc = array_alloc,
	.free = array_free,
	.lookup = array_lookup,
	.lookup_cpu = array_lookup_cpu,
	.update = array_update,
	.delete = array_delete,
	.sys_lookup = array_sys_lookup,
	.sys_update = array_sys_update,
	.get_next_key = bpf_array_next_key,
};
