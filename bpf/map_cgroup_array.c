/*
 * map_cgroup_array.c - BPF_MAP_TYPE_CGROUP_ARRAY: slots of cgroups (cgroup2 directories) that
 * bpf_current_task_under_cgroup tests the current task against.
 *
 * Linux 6.1 fd-array semantics (kernel/bpf/arraymap.c cgroup_array_map_ops): u32 key and u32
 * value, max_entries > 0, map_flags BPF_F_NUMA_NODE, BPF_F_RDONLY, BPF_F_WRONLY only.  The
 * syscall stores the fd of an open cgroup2 directory: update flags other than BPF_ANY EINVAL,
 * an index past the end E2BIG, no such fd or not a cgroup directory EBADF, a removed cgroup
 * ENOENT (cgroup_get_from_fd).  Syscall lookup is ENOTSUPP (524: no map_fd_sys_lookup_elem),
 * delete of an empty slot ENOENT, past the end E2BIG.  A slot holds a reference on its
 * cgroup, dropped when it is overwritten or deleted and when the map is freed (this map type
 * has no map_release_uref: the slots outlive the last user fd while a program holds the map).
 *
 * bpf_current_task_under_cgroup (Linux's order): idx >= max_entries -E2BIG, an empty slot
 * -EAGAIN, else 1 when the current task's cgroup is the slot's or below it, 0 if not.  The
 * program reads a slot without a reference of its own, as the other fd arrays here do; the
 * cgroup memory itself is type-stable (kernel/cgroup.c), so a racing delete cannot make the
 * read fault.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

static int cg_alloc(struct bpf_map *map)
{
	map->priv = ksvc_alloc(sizeof(struct cgroup *) * map->max_entries);
	return map->priv ? 0 : -ENOMEM;
}

static struct cgroup *cg_swap(struct bpf_map *map, uint32_t index, struct cgroup *cg)
{
	return bpf_fd_array_swap(map, map->priv, index, cg);
}

static void cg_free(struct bpf_map *map)
{
	for (uint32_t i = 0; i < map->max_entries; i++)
		ksvc_cgroup_put(cg_swap(map, i, NULL));
	ksvc_free(map->priv);
}

static void *cg_lookup(struct bpf_map *map, const void *key)
{
	return NULL; /* the verifier lets programs reach the slots only through the helper */
}

static int cg_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return -EINVAL;
}

static int cg_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	return -BPF_ENOTSUPP;
}

static int cg_sys_update(struct bpf_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	struct cgroup *cg;
	uint32_t index;
	int fd, err;

	err = bpf_fd_array_slot(map, key, value, flags, &index, &fd);
	if (!err)
		err = ksvc_cgroup_get_fd(fd, &cg);
	if (err)
		return err;
	ksvc_cgroup_put(cg_swap(map, index, cg)); /* the slot keeps cg's reference */
	return 0;
}

static int cg_delete(struct bpf_map *map, const void *key)
{
	void *old;
	int err = bpf_fd_array_take(map, map->priv, key, &old);

	if (!err)
		ksvc_cgroup_put(old);
	return err;
}

long bpf_cgroup_array_current_under(struct bpf_map *map, uint32_t index)
{
	struct cgroup **slots = map->priv;
	struct cgroup *cg;

	if (map->type != BPF_MAP_TYPE_CGROUP_ARRAY || index >= map->max_entries)
		return -E2BIG;
	cg = __atomic_load_n(&slots[index], __ATOMIC_ACQUIRE);
	if (!cg)
		return -EAGAIN;
	return ksvc_cgroup_current_under(cg) ? 1 : 0;
}

const struct bpf_map_ops bpf_cgroup_array_ops = {
	.check = bpf_fd_array_check,
	.alloc = cg_alloc,
	.free = cg_free,
	.lookup = cg_lookup,
	.update = cg_update,
	.delete = cg_delete,
	.sys_lookup = cg_sys_lookup,
	.sys_update = cg_sys_update,
	.get_next_key = bpf_array_next_key,
};
