/*
 * map_btf.c - BPF_MAP_CREATE's btf_fd, btf_key_type_id and btf_value_type_id, as Linux
 * 6.1's map_create and map_check_btf take them (after the map itself is allocated).
 *
 * A key type needs a value type (EINVAL, map.c); they ask for btf_fd (EBADF, EINVAL: not a
 * BTF).  With a value type:
 * the key type (if any) and the value type must have the map's key and value sizes
 * (EINVAL); a map without a key type must be a kind that checks BTF itself (EINVAL
 * otherwise).  The map kinds' own checks: an array's key is a 32-bit int, or none for a
 * one-element array whose value is a DATASEC (libbpf's .data/.rodata/.bss); a bloom filter has
 * no key; a task storage's key is a 32-bit int; program, perf event, cgroup and map-in-map
 * arrays and stack traces take no BTF (ENOTSUPP).  A struct bpf_spin_lock or bpf_timer member
 * of the value is found and placed (spin locks in hash, array and task storage values only:
 * ENOTSUPP; timers in hash, LRU hash and array values: EOPNOTSUPP; neither with
 * BPF_F_RDONLY_PROG: EACCES).  The ids show in bpf_map_info.
 * Not here: kptr fields (they name kernel BTF types, which this kernel does not describe).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"

/* btf_find_field over a struct's members: the byte offset of the one member whose type is
 * "struct <name>" of size sz, -ENOENT without one, -EINVAL misplaced, -E2BIG two of them */
static int find_field(const struct bpf_btf *btf, const struct btf_type *t, const char *name,
		      uint32_t sz, uint32_t align)
{
	const struct btf_member *m;
	int found = -ENOENT;

	if (bpf_btf_kind(t) != BTF_KIND_STRUCT && bpf_btf_kind(t) != BTF_KIND_UNION &&
	    bpf_btf_kind(t) != BTF_KIND_DATASEC)
		return -EINVAL;
	if (bpf_btf_kind(t) == BTF_KIND_DATASEC) {
		const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);

		for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
			const struct btf_type *var = bpf_btf_type(btf, v[i].type);
			const struct btf_type *vt = var ? bpf_btf_type(btf, var->type) : NULL;
			const char *n = vt ? bpf_btf_str(btf, vt->name_off) : NULL;

			if (!n || strcmp(n, name) || v[i].size != sz)
				continue;
			if (v[i].offset % align)
				return -EINVAL;
			if (bpf_btf_kind(vt) != BTF_KIND_STRUCT || vt->size != sz)
				continue;
			if (found >= 0)
				return -E2BIG;
			found = (int)v[i].offset;
		}
		return found;
	}
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
		const struct btf_type *mt = bpf_btf_type(btf, m[i].type);
		const char *n = mt ? bpf_btf_str(btf, mt->name_off) : NULL;
		uint32_t off = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset) :
							  m[i].offset;

		if (!n || strcmp(n, name))
			continue;
		if (off % 8 || (off / 8) % align)
			return -EINVAL;
		if (bpf_btf_kind(mt) != BTF_KIND_STRUCT || mt->size != sz)
			continue;
		if (found >= 0)
			return -E2BIG;
		found = (int)(off / 8);
	}
	return found;
}

static const struct btf_type btf_none; /* kind 0: what no check takes for a value */

static bool int32_key(const struct btf_type *k)
{
	uint32_t d;

	if (!k || bpf_btf_kind(k) != BTF_KIND_INT)
		return false;
	d = *(const uint32_t *)(k + 1);
	return BTF_INT_BITS(d) == 32 && !BTF_INT_OFFSET(d);
}

/* the map kind's map_check_btf (key NULL: no key type), or 1 when the kind has none */
static int kind_check(const struct bpf_map *map, const struct btf_type *key,
		      const struct btf_type *value)
{
	switch (map->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		if (!key) /* keyless: a global data section */
			return map->type == BPF_MAP_TYPE_ARRAY && map->max_entries == 1 &&
				       bpf_btf_kind(value) == BTF_KIND_DATASEC ? 0 : -EINVAL;
		return int32_key(key) ? 0 : -EINVAL;
	case BPF_MAP_TYPE_BLOOM_FILTER:
		return key ? -EINVAL : 0;
	case BPF_MAP_TYPE_TASK_STORAGE:
		return int32_key(key) ? 0 : -EINVAL;
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
	case BPF_MAP_TYPE_STACK_TRACE:
		return -BPF_ENOTSUPP; /* map_check_no_btf */
	default:
		return 1;
	}
}

static int check_types(struct bpf_map *map, const struct bpf_btf *btf, uint32_t kid, uint32_t vid)
{
	const struct btf_type *key = NULL, *value;
	uint32_t ksize = 0, vsize = 0;
	int off, err;

	if (kid) {
		key = bpf_btf_type_id_size(btf, &kid, &ksize);
		if (!key || ksize != map->key_size)
			return -EINVAL;
	}
	value = bpf_btf_type_id_size(btf, &vid, &vsize);
	if (!kid && kind_check(map, NULL, value ? value : &btf_none) == 1)
		return -EINVAL; /* no key type, and no check of the kind's to say that is fine */
	if (!value || vsize != map->value_size)
		return -EINVAL;
	off = find_field(btf, value, "bpf_spin_lock", sizeof(struct bpf_spin_lock), 4);
	if (off >= 0) {
		if (map->map_flags & BPF_F_RDONLY_PROG)
			return -EACCES;
		if (map->type != BPF_MAP_TYPE_HASH && map->type != BPF_MAP_TYPE_ARRAY &&
		    map->type != BPF_MAP_TYPE_TASK_STORAGE)
			return -BPF_ENOTSUPP;
	}
	map->spin_lock_off = off;
	off = find_field(btf, value, "bpf_timer", sizeof(struct bpf_timer), 8);
	if (off >= 0) {
		if (map->map_flags & BPF_F_RDONLY_PROG)
			return -EACCES;
		if (map->type != BPF_MAP_TYPE_HASH && map->type != BPF_MAP_TYPE_LRU_HASH &&
		    map->type != BPF_MAP_TYPE_ARRAY)
			return -EOPNOTSUPP;
	}
	map->timer_off = off;
	err = kind_check(map, key, value);
	return err == 1 ? 0 : err;
}

int bpf_map_check_btf(struct bpf_map *map, const union bpf_attr *attr)
{
	struct bpf_btf *btf;
	int err;

	map->spin_lock_off = -EINVAL;
	map->timer_off = -EINVAL;
	if (!attr->btf_key_type_id && !attr->btf_value_type_id)
		return 0;
	err = bpf_btf_get_fd((int)attr->btf_fd, &btf);
	if (err)
		return err;
	if (attr->btf_value_type_id) {
		err = check_types(map, btf, attr->btf_key_type_id, attr->btf_value_type_id);
		if (err) {
			bpf_btf_put(btf);
			return err;
		}
	}
	map->btf = btf;
	map->btf_key_type_id = attr->btf_key_type_id;
	map->btf_value_type_id = attr->btf_value_type_id;
	return 0;
}
