/*
 * map_prog_array.c - BPF_MAP_TYPE_PROG_ARRAY: the program slots bpf_tail_call jumps through.
 *
 * Linux 6.1 fd-array semantics: u32 key and u32 value, max_entries > 0; map_flags only
 * BPF_F_NUMA_NODE, BPF_F_RDONLY, BPF_F_WRONLY (BPF_F_RDONLY_PROG / WRONLY_PROG, MMAPABLE,
 * INNER_MAP and PRESERVE_ELEMS are EINVAL).  The syscall stores a program fd: EBADF for no
 * file, EINVAL for a file that is not a program or a program of another "owner" (the first
 * program type and JIT state that met the map, through an update or a load that uses it);
 * update flags other than BPF_ANY EINVAL, indexes past the end E2BIG.  Syscall lookup gives
 * the slot's program id (ENOENT when empty or past the end); delete of an empty slot ENOENT.
 * A slot holds a reference on its program, dropped when the slot is overwritten or deleted,
 * when the last user fd of the map goes (Linux's prog_array_map_clear on map_release_uref)
 * and when the map is freed.  Programs reach the slots only through bpf_tail_call (the
 * verifier refuses every other helper on this map type).
 *
 * Not here: the JIT's direct tail calls (poke descriptors), programs with BPF_PROG_TYPE_EXT.
 * A program running a tail call on another CPU reads a slot without a reference of its own:
 * as for the other maps here, there is no RCU grace period before a deleted slot's program
 * is freed.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct prog_array {
	bool owned; /* (m) owner_type and owner_jited are set */
	uint32_t owner_type; /* (m) */
	bool owner_jited; /* (m) */
	struct bpf_prog *slots[]; /* (m) written; read by tail calls with acquire loads */
};

static int pa_alloc(struct bpf_map *map)
{
	struct prog_array *pa = ksvc_alloc(sizeof(*pa) + sizeof(pa->slots[0]) * map->max_entries);

	if (!pa)
		return -ENOMEM;
	memset(pa, 0, sizeof(*pa) + sizeof(pa->slots[0]) * map->max_entries);
	map->priv = pa;
	return 0;
}

static struct bpf_prog *pa_swap(struct bpf_map *map, uint32_t index, struct bpf_prog *prog)
{
	struct prog_array *pa = map->priv;

	return bpf_fd_array_swap(map, (void **)pa->slots, index, prog);
}

static void pa_clear(struct bpf_map *map)
{
	for (uint32_t i = 0; i < map->max_entries; i++)
		bpf_prog_put(pa_swap(map, i, NULL));
}

static void pa_free(struct bpf_map *map)
{
	pa_clear(map);
	ksvc_free(map->priv);
}

bool bpf_prog_array_compatible(struct bpf_map *map, const struct bpf_prog *prog)
{
	struct prog_array *pa = map->priv;
	unsigned long irq = spin_lock_irqsave(&map->lock);
	bool ok = true;

	if (!pa->owned) {
		pa->owned = true;
		pa->owner_type = prog->type;
		pa->owner_jited = prog->jit_requested;
	} else {
		ok = pa->owner_type == prog->type && pa->owner_jited == prog->jit_requested;
	}
	spin_unlock_irqrestore(&map->lock, irq);
	return ok;
}

bool bpf_prog_array_owner(struct bpf_map *map, uint32_t *type, bool *jited)
{
	struct prog_array *pa = map->priv;
	unsigned long irq;
	bool owned;

	if (map->type != BPF_MAP_TYPE_PROG_ARRAY)
		return false;
	irq = spin_lock_irqsave(&map->lock);
	owned = pa->owned;
	*type = pa->owner_type;
	*jited = pa->owner_jited;
	spin_unlock_irqrestore(&map->lock, irq);
	return owned;
}

const struct bpf_prog *bpf_prog_array_get(struct bpf_map *map, uint32_t index)
{
	struct prog_array *pa = map->priv;

	if (index >= map->max_entries)
		return NULL;
	return __atomic_load_n(&pa->slots[index], __ATOMIC_ACQUIRE);
}

static void *pa_lookup(struct bpf_map *map, const void *key)
{
	return NULL; /* the verifier lets no program look up a program array */
}

static int pa_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return -EINVAL; /* nor update it */
}

static int pa_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	struct prog_array *pa = map->priv;
	uint32_t index, id = 0;
	unsigned long irq;

	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return -ENOENT;
	irq = spin_lock_irqsave(&map->lock);
	if (pa->slots[index])
		id = pa->slots[index]->id; /* prog_fd_array_sys_lookup_elem: the program's id */
	spin_unlock_irqrestore(&map->lock, irq);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, 4);
	return 0;
}

static int pa_sys_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	struct bpf_prog *prog;
	uint32_t index;
	int fd, err;

	err = bpf_fd_array_slot(map, key, value, flags, &index, &fd);
	if (!err)
		err = bpf_prog_get_fd(fd, &prog);
	if (err)
		return err;
	if (!bpf_prog_array_compatible(map, prog)) {
		bpf_prog_put(prog);
		return -EINVAL;
	}
	bpf_prog_put(pa_swap(map, index, prog)); /* the slot keeps prog's reference */
	return 0;
}

static int pa_delete(struct bpf_map *map, const void *key)
{
	struct prog_array *pa = map->priv;
	void *old;
	int err = bpf_fd_array_take(map, (void **)pa->slots, key, &old);

	if (!err)
		bpf_prog_put(old);
	return err;
}

const struct bpf_map_ops bpf_prog_array_ops = {
	.check = bpf_fd_array_check,
	.alloc = pa_alloc,
	.free = pa_free,
	.lookup = pa_lookup,
	.update = pa_update,
	.delete = pa_delete,
	.sys_lookup = pa_sys_lookup,
	.sys_update = pa_sys_update,
	.get_next_key = bpf_array_next_key,
	.release_uref = pa_clear,
};
