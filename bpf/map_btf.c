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
 * kptr fields (Linux 6.1's btf_parse_kptrs): pointer members tagged "kptr" or "kptr_ref" (at
 * most 8), each to a struct the kernel's BTF has by name; a value with them goes in hash, LRU
 * hash, array and per-CPU array maps only (EOPNOTSUPP), without BPF_F_RDONLY_PROG or
 * WRONLY_PROG (EACCES).  As in Linux, a value whose kptrs do not parse still makes a map: it
 * just has none (kptr_err keeps why, for bpf_kptr_xchg's message).  A referenced kptr needs
 * the type's destructor kfunc, and this kernel registers none, so "kptr_ref" always ends
 * in ENOENT here.
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

/* Linux's btf_find_kptr on a member of type tid at byte off: 1 a kptr (its local struct id in
 * *sid), 0 not one, -EINVAL a malformed one */
static int kptr_member(const struct bpf_btf *btf, uint32_t tid, uint32_t off,
		       struct bpf_kptr_field *f, uint32_t *sid)
{
	const struct btf_type *t = bpf_btf_type(btf, tid), *tag;
	const char *n;

	if (!t || bpf_btf_kind(t) != BTF_KIND_PTR)
		return 0;
	tag = bpf_btf_type(btf, t->type);
	if (!tag || bpf_btf_kind(tag) != BTF_KIND_TYPE_TAG)
		return 0;
	t = bpf_btf_type(btf, tag->type);
	if (t && bpf_btf_kind(t) == BTF_KIND_TYPE_TAG)
		return -EINVAL; /* one tag only */
	n = bpf_btf_str(btf, tag->name_off);
	if (!n || (strcmp(n, "kptr") && strcmp(n, "kptr_ref")))
		return -EINVAL;
	t = bpf_btf_skip_modifiers(btf, tag->type, sid);
	if (!t || (bpf_btf_kind(t) != BTF_KIND_STRUCT && bpf_btf_kind(t) != BTF_KIND_UNION))
		return -EINVAL;
	f->off = off;
	f->ref = n[4] != '\0';
	return 1;
}

/*
 * btf_find_field(BTF_FIELD_KPTR): the value's kptrs in f[] with their local struct ids in
 * sid[]; their count, or -EINVAL (a member not 8-byte aligned: Linux 6.1 checks every member
 * of a struct, kptr or not) or -E2BIG (more than BPF_MAP_KPTR_MAX).
 */
static int find_kptrs(const struct bpf_btf *btf, const struct btf_type *t,
		      struct bpf_kptr_field *f, uint32_t *sid)
{
	bool sec = bpf_btf_kind(t) == BTF_KIND_DATASEC;
	struct bpf_kptr_field tmp;
	uint32_t n = 0, tid, off, stmp;
	int ret;

	if (bpf_btf_kind(t) != BTF_KIND_STRUCT && bpf_btf_kind(t) != BTF_KIND_UNION && !sec)
		return -EINVAL;
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
		if (sec) {
			const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1) + i;
			const struct btf_type *var = bpf_btf_type(btf, v->type);

			if (!var || v->size != 8)
				continue;
			tid = var->type;
			off = v->offset;
		} else {
			const struct btf_member *m = (const struct btf_member *)(t + 1) + i;

			tid = m->type;
			off = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
			if (off % 8)
				return -EINVAL;
			off /= 8;
		}
		if (off % 8)
			return -EINVAL;
		ret = kptr_member(btf, tid, off, n < BPF_MAP_KPTR_MAX ? &f[n] : &tmp,
				  n < BPF_MAP_KPTR_MAX ? &sid[n] : &stmp);
		if (ret <= 0) {
			if (ret < 0)
				return ret;
			continue;
		}
		if (n >= BPF_MAP_KPTR_MAX)
			return -E2BIG;
		n++;
	}
	return (int)n;
}

/* btf_parse_kptrs: each kptr's struct found in the kernel's BTF by name and kind (ENOENT),
 * a referenced one's destructor too (none here: ENOENT).  0 or -errno; map->kptrs filled. */
static int parse_kptrs(struct bpf_map *map, const struct bpf_btf *btf, const struct btf_type *t)
{
	const struct bpf_btf *kbtf = bpf_btf_vmlinux();
	struct bpf_kptr_field f[BPF_MAP_KPTR_MAX];
	uint32_t sid[BPF_MAP_KPTR_MAX];
	int n;

	memset(f, 0, sizeof(f)); /* map_in_map.c compares them whole */
	n = find_kptrs(btf, t, f, sid);
	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct btf_type *st = bpf_btf_type(btf, sid[i]);
		const char *name = bpf_btf_str(btf, st->name_off);

		f[i].btf_id = kbtf && name ? bpf_btf_find_by_name_kind(kbtf, name, bpf_btf_kind(st)) : 0;
		if (!f[i].btf_id || f[i].ref)
			return -ENOENT; /* no such kernel type; no destructor kfunc for it */
	}
	memcpy(map->kptrs, f, sizeof(f[0]) * (uint32_t)n);
	map->nr_kptrs = (uint32_t)n;
	return 0;
}

const struct bpf_kptr_field *bpf_map_kptr_at(const struct bpf_map *map, int64_t off)
{
	for (uint32_t i = 0; i < map->nr_kptrs; i++)
		if (map->kptrs[i].off == off)
			return &map->kptrs[i];
	return NULL;
}

void bpf_map_kptrs_zero(const struct bpf_map *map, void *value)
{
	for (uint32_t i = 0; i < map->nr_kptrs; i++)
		memset((uint8_t *)value + map->kptrs[i].off, 0, sizeof(uint64_t));
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
	map->kptr_err = parse_kptrs(map, btf, value);
	if (map->nr_kptrs) {
		if (map->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG))
			return -EACCES;
		if (map->type != BPF_MAP_TYPE_HASH && map->type != BPF_MAP_TYPE_LRU_HASH &&
		    map->type != BPF_MAP_TYPE_ARRAY && map->type != BPF_MAP_TYPE_PERCPU_ARRAY)
			return -EOPNOTSUPP;
	}
	err = kind_check(map, key, value);
	return err == 1 ? 0 : err;
}

int bpf_map_check_btf(struct bpf_map *map, const union bpf_attr *attr)
{
	struct bpf_btf *btf;
	int err;

	map->spin_lock_off = -EINVAL;
	map->timer_off = -EINVAL;
	map->nr_kptrs = 0;
	map->kptr_err = 0;
	if (!attr->btf_key_type_id && !attr->btf_value_type_id)
		return 0;
	err = bpf_btf_get_fd((int)attr->btf_fd, &btf);
	if (err)
		return err;
	if (attr->btf_value_type_id) {
		err = check_types(map, btf, attr->btf_key_type_id, attr->btf_value_type_id);
		if (err) {
			map->nr_kptrs = 0;
			bpf_btf_put(btf);
			return err;
		}
	}
	map->btf = btf;
	map->btf_key_type_id = attr->btf_key_type_id;
	map->btf_value_type_id = attr->btf_value_type_id;
	return 0;
}
