/*
 * map.c - what every eBPF map type shares: BPF_MAP_CREATE's common attribute checks, ids,
 * reference counts (programs and fds), the map fd (anon file "bpf-map", with Linux's fdinfo),
 * the type -> ops table
 * and which helpers may take which map type (Linux's check_map_func_compatibility).
 *
 * Linux 6.1 semantics: union bpf_attr map_type/key_size/value_size/max_entries/map_flags/
 * map_name; EINVAL for unknown types and bad sizes/flags, E2BIG for oversize keys and values.
 * Per-type storage and element semantics live in the map_*.c files.
 * Not here: BTF, RINGBUF, the syscall commands (syscall.c).
 */
#include <stdint.h>

#include <linux/poll.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

const struct bpf_map_ops *bpf_map_ops_of(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_ARRAY: return &bpf_array_ops;
	case BPF_MAP_TYPE_PERCPU_ARRAY: return &bpf_percpu_array_ops;
	case BPF_MAP_TYPE_HASH: return &bpf_hash_ops;
	case BPF_MAP_TYPE_PERCPU_HASH: return &bpf_percpu_hash_ops;
	case BPF_MAP_TYPE_LRU_HASH: return &bpf_lru_hash_ops;
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY: return &bpf_perf_array_ops;
	case BPF_MAP_TYPE_STACK_TRACE: return &bpf_stack_ops;
	case BPF_MAP_TYPE_RINGBUF: return &bpf_ringbuf_ops;
	case BPF_MAP_TYPE_USER_RINGBUF: return &bpf_user_ringbuf_ops;
	case BPF_MAP_TYPE_QUEUE: return &bpf_qstack_ops;
	case BPF_MAP_TYPE_STACK: return &bpf_qstack_ops;
	case BPF_MAP_TYPE_PROG_ARRAY: return &bpf_prog_array_ops;
	case BPF_MAP_TYPE_BLOOM_FILTER: return &bpf_bloom_ops;
	case BPF_MAP_TYPE_ARRAY_OF_MAPS: return &bpf_array_of_maps_ops;
	case BPF_MAP_TYPE_HASH_OF_MAPS: return &bpf_hash_of_maps_ops;
	case BPF_MAP_TYPE_TASK_STORAGE: return &bpf_task_storage_ops;
	case BPF_MAP_TYPE_CGROUP_ARRAY: return &bpf_cgroup_array_ops;
	default: return NULL;
	}
}

bool bpf_map_is_percpu(uint32_t type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH;
}

uint32_t bpf_map_sys_value_size(const struct bpf_map *map)
{
	if (bpf_map_is_percpu(map->type))
		return ((map->value_size + 7) & ~7u) * ksvc_nr_cpus();
	return map->value_size;
}

/* Linux's bpf_obj_name_cpy: letters, digits, '_' and '.', NUL-terminated in 16 bytes. */
static int name_check(const char *name)
{
	size_t i;

	for (i = 0; i < BPF_OBJ_NAME_LEN && name[i]; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.'))
			return -EINVAL;
	}
	return i == BPF_OBJ_NAME_LEN ? -EINVAL : 0;
}

int bpf_obj_name_check(const char *name)
{
	return name_check(name);
}

int bpf_map_create(const union bpf_attr *attr, struct bpf_map **out)
{
	const struct bpf_map_ops *ops = bpf_map_ops_of(attr->map_type);
	struct bpf_map *map, *meta = NULL;
	int err;

	if (!ops)
		return -EINVAL;
	if (name_check(attr->map_name))
		return -EINVAL;
	/* inner_map_fd: read by the map-in-map types only, ignored by the others (Linux) */
	/* btf_key_type_id, btf_value_type_id: map_btf.c, once the map is allocated */
	if (attr->btf_vmlinux_value_type_id || attr->map_ifindex ||
	    (attr->btf_key_type_id && !attr->btf_value_type_id))
		return -EINVAL;
	if (attr->map_extra && attr->map_type != BPF_MAP_TYPE_BLOOM_FILTER)
		return -EINVAL;
	if ((attr->map_flags & BPF_F_RDONLY) && (attr->map_flags & BPF_F_WRONLY))
		return -EINVAL;
	if ((attr->map_flags & BPF_F_RDONLY_PROG) && (attr->map_flags & BPF_F_WRONLY_PROG))
		return -EINVAL;
	err = ops->check(attr);
	if (err)
		return err;
	if (attr->map_type == BPF_MAP_TYPE_ARRAY_OF_MAPS || attr->map_type == BPF_MAP_TYPE_HASH_OF_MAPS) {
		err = bpf_map_meta_alloc((int)attr->inner_map_fd, &meta);
		if (err)
			return err;
	}
	map = ksvc_alloc(sizeof(*map));
	if (!map) {
		ksvc_free(meta);
		return -ENOMEM;
	}
	map->ops = ops;
	map->type = attr->map_type;
	map->key_size = attr->key_size;
	map->value_size = attr->value_size;
	map->max_entries = attr->max_entries;
	map->map_flags = attr->map_flags;
	map->map_extra = attr->map_extra;
	map->inner_meta = meta;
	map->spin_lock_off = map->timer_off = -EINVAL; /* none until map_btf.c finds them */
	memcpy(map->name, attr->map_name, BPF_OBJ_NAME_LEN);
	spin_init(&map->lock);
	atomic_store(&map->refcnt, 1);
	err = ops->alloc(map);
	if (err)
		goto err_free_map;
	err = bpf_map_check_btf(map, attr);
	if (err) {
		ops->free(map);
		goto err_free_map;
	}
	err = bpf_id_alloc(BPF_OBJ_MAP, map, &map->refcnt, &map->id);
	if (err) {
		ops->free(map);
		if (map->btf)
			bpf_btf_put(map->btf);
		goto err_free_map;
	}
	*out = map;
	return 0;

err_free_map:
	ksvc_free(map->inner_meta);
	ksvc_free(map);
	return err;
}

void bpf_map_get(struct bpf_map *map)
{
	atomic_fetch_add(&map->refcnt, 1);
}

void bpf_map_put(struct bpf_map *map)
{
	if (!map || atomic_fetch_sub(&map->refcnt, 1) != 1)
		return;
	bpf_id_free(BPF_OBJ_MAP, map->id);
	map->ops->free(map);
	if (map->btf)
		bpf_btf_put(map->btf);
	ksvc_free(map->inner_meta);
	ksvc_free(map);
}

/* ---- the map file ---- */

static void map_file_get(void *priv)
{
	bpf_map_get(priv);
}

static void map_file_release(void *priv)
{
	struct bpf_map *map = priv;

	if (atomic_fetch_sub(&map->usercnt, 1) == 1 && map->ops->release_uref)
		map->ops->release_uref(map);
	bpf_map_put(map);
}

/*
 * mmap of a BPF_F_MMAPABLE array (libbpf's global data: .data/.rodata/.bss), as Linux's
 * bpf_map_mmap: shared mappings only, within the array's pages; a writable one is refused once
 * the map is frozen, and keeps BPF_MAP_FREEZE from succeeding while it exists.
 */
/* map_priv: the map, with bit 0 set for a writable mapping (maps are 16-byte aligned). */
static struct bpf_map *mapping_map(void *map_priv, bool *write)
{
	uintptr_t v = (uintptr_t)map_priv;

	if (write)
		*write = v & 1;
	return (struct bpf_map *)(v & ~(uintptr_t)1);
}

static int map_mmap(void *priv, struct ksvc_mmap *m)
{
	struct bpf_map *map = priv;
	bool ring = map->type == BPF_MAP_TYPE_RINGBUF || map->type == BPF_MAP_TYPE_USER_RINGBUF;
	size_t area;
	unsigned long f;
	int err = 0;

	if ((map->type != BPF_MAP_TYPE_ARRAY && !ring) || map->spin_lock_off >= 0 ||
	    map->timer_off >= 0)
		return -BPF_ENOTSUPP; /* Linux: no map_mmap operation, or a lock or timer inside */
	if (!m->shared)
		return -EINVAL;
	if (map->type == BPF_MAP_TYPE_ARRAY) {
		if (!(map->map_flags & BPF_F_MMAPABLE))
			return -EINVAL;
		area = ((size_t)map->max_entries * ((map->value_size + 7) & ~7u) +
			KSVC_PAGE_SIZE - 1) & ~(size_t)(KSVC_PAGE_SIZE - 1);
		if (m->pgoff * KSVC_PAGE_SIZE + m->len > area)
			return -EINVAL;
	}
	/* bpf_map_mmap: a read-only mapping never becomes writable (VM_MAYWRITE cleared) */
	m->deny_write_later = !m->write;
	f = spin_lock_irqsave(&map->lock);
	if (m->write && map->frozen)
		err = -EPERM;
	else if (m->write && (map->map_flags & BPF_F_RDONLY_PROG))
		err = -EACCES; /* the verifier takes the contents as constant */
	else if (ring)
		err = bpf_ringbuf_mmap_check(map, m); /* which pages may be writable */
	if (!err && m->write)
		map->mmap_writers++;
	spin_unlock_irqrestore(&map->lock, f);
	if (err)
		return err;
	atomic_fetch_add(&map->refcnt, 1);
	m->map_priv = (void *)((uintptr_t)map | (m->write ? 1 : 0));
	return 0;
}

static uint64_t map_mmap_phys(void *priv, void *map_priv, uint64_t pgoff)
{
	struct bpf_map *map = mapping_map(map_priv, NULL);

	(void)priv;
	if (map->type == BPF_MAP_TYPE_RINGBUF || map->type == BPF_MAP_TYPE_USER_RINGBUF)
		return bpf_ringbuf_mmap_phys(map, pgoff);
	return ksvc_virt_to_phys((char *)bpf_array_base(map) + pgoff * KSVC_PAGE_SIZE);
}

/* bpf_map_poll: a ring buffer is readable with unread data, a user ring buffer writable
 * with room; other maps poll as an error. */
static unsigned int map_poll(void *priv, struct ksvc_poll *pt)
{
	struct bpf_map *map = priv;

	if (map->type == BPF_MAP_TYPE_RINGBUF || map->type == BPF_MAP_TYPE_USER_RINGBUF)
		return bpf_ringbuf_poll(map, pt);
	return POLLERR;
}

static void map_mmap_open(void *priv, void *map_priv)
{
	bool write;
	struct bpf_map *map = mapping_map(map_priv, &write);
	unsigned long f = spin_lock_irqsave(&map->lock);

	(void)priv;
	if (write)
		map->mmap_writers++;
	spin_unlock_irqrestore(&map->lock, f);
	atomic_fetch_add(&map->refcnt, 1);
}

static void map_mmap_close(void *priv, void *map_priv)
{
	bool write;
	struct bpf_map *map = mapping_map(map_priv, &write);
	unsigned long f = spin_lock_irqsave(&map->lock);

	(void)priv;
	if (write)
		map->mmap_writers--;
	spin_unlock_irqrestore(&map->lock, f);
	bpf_map_put(map);
}

/* The map file opened read-write, read-only or write-only (BPF_F_RDONLY / BPF_F_WRONLY in
 * map_flags at creation, open_flags of GET_FD_BY_ID, file_flags of OBJ_GET). */
#define MAP_FOPS(...)                                                                              \
	{                                                                                          \
		.name = "bpf-map", .get = map_file_get, .release = map_file_release,               \
		.poll = map_poll, .mmap = map_mmap, .mmap_phys = map_mmap_phys,                    \
		.mmap_open = map_mmap_open, .mmap_close = map_mmap_close,                          \
		.show_fdinfo = bpf_map_fdinfo, __VA_ARGS__                                         \
	}
const struct ksvc_file_ops bpf_map_fops = MAP_FOPS();
static const struct ksvc_file_ops map_fops_rdonly = MAP_FOPS(.rdonly = true);
static const struct ksvc_file_ops map_fops_wronly = MAP_FOPS(.wronly = true);

int bpf_map_fd_install(struct bpf_map *map, uint32_t open_flags)
{
	const struct ksvc_file_ops *ops = (open_flags & BPF_F_RDONLY) ? &map_fops_rdonly :
					  (open_flags & BPF_F_WRONLY) ? &map_fops_wronly :
									&bpf_map_fops;
	int fd;

	atomic_fetch_add(&map->usercnt, 1);
	fd = ksvc_fd_install(ops, map, true);
	if (fd < 0)
		atomic_fetch_sub(&map->usercnt, 1);
	return fd;
}

int bpf_map_get_fd_mode(int fd, struct bpf_map **out, bool *can_read, bool *can_write)
{
	static const struct ksvc_file_ops *const modes[] = { &bpf_map_fops, &map_fops_rdonly,
							     &map_fops_wronly };
	void *priv;
	unsigned int i;
	int err = -EBADF;

	for (i = 0; i < 3; i++) {
		err = ksvc_fd_get(fd, modes[i], &priv);
		if (err != -EINVAL)
			break;
	}
	if (err)
		return err == -EINVAL ? -EINVAL : -EBADF;
	*out = priv;
	*can_read = modes[i] != &map_fops_wronly;
	*can_write = modes[i] != &map_fops_rdonly;
	return 0;
}

int bpf_map_get_fd(int fd, struct bpf_map **out)
{
	bool r, w;

	return bpf_map_get_fd_mode(fd, out, &r, &w);
}

int bpf_map_mmap_area(int fd, void **kaddr, size_t *len, bool *writable)
{
	struct bpf_map *map;
	int err = bpf_map_get_fd(fd, &map);

	if (err)
		return err;
	if (map->type != BPF_MAP_TYPE_ARRAY || !(map->map_flags & BPF_F_MMAPABLE)) {
		bpf_map_put(map);
		return -EINVAL;
	}
	*kaddr = bpf_array_base(map);
	*len = ((size_t)map->max_entries * ((map->value_size + 7) & ~7u) + KSVC_PAGE_SIZE - 1) &
	       ~(size_t)(KSVC_PAGE_SIZE - 1);
	*writable = !map->frozen && !(map->map_flags & BPF_F_RDONLY);
	bpf_map_put(map); /* the fd keeps the map alive while fs/ maps it */
	return 0;
}

/*
 * Which helpers may take a map of this type (both directions of Linux's
 * check_map_func_compatibility for the helpers we have).
 */
bool bpf_map_func_ok(const struct bpf_map *map, int32_t func_id)
{
	switch (map->type) {
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
		if (func_id != BPF_FUNC_perf_event_read && func_id != BPF_FUNC_perf_event_output &&
		    func_id != BPF_FUNC_perf_event_read_value)
			return false;
		break;
	case BPF_MAP_TYPE_STACK_TRACE:
		if (func_id != BPF_FUNC_get_stackid)
			return false;
		break;
	case BPF_MAP_TYPE_RINGBUF:
		if (func_id != BPF_FUNC_ringbuf_output && func_id != BPF_FUNC_ringbuf_reserve &&
		    func_id != BPF_FUNC_ringbuf_query && func_id != BPF_FUNC_ringbuf_reserve_dynptr)
			return false;
		break;
	case BPF_MAP_TYPE_PROG_ARRAY:
		if (func_id != BPF_FUNC_tail_call)
			return false;
		break;
	case BPF_MAP_TYPE_CGROUP_ARRAY:
		if (func_id != BPF_FUNC_current_task_under_cgroup)
			return false; /* (and skb_under_cgroup, which no program type here has) */
		break;
	case BPF_MAP_TYPE_USER_RINGBUF:
		if (func_id != BPF_FUNC_user_ringbuf_drain)
			return false;
		break;
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
		if (func_id != BPF_FUNC_map_push_elem && func_id != BPF_FUNC_map_pop_elem &&
		    func_id != BPF_FUNC_map_peek_elem)
			return false;
		break;
	case BPF_MAP_TYPE_BLOOM_FILTER:
		if (func_id != BPF_FUNC_map_push_elem && func_id != BPF_FUNC_map_peek_elem)
			return false;
		break;
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		if (func_id != BPF_FUNC_map_lookup_elem)
			return false;
		break;
	case BPF_MAP_TYPE_TASK_STORAGE:
		if (func_id != BPF_FUNC_task_storage_get && func_id != BPF_FUNC_task_storage_delete)
			return false;
		break;
	default:
		break;
	}
	switch (func_id) {
	case BPF_FUNC_perf_event_read:
	case BPF_FUNC_perf_event_output:
	case BPF_FUNC_perf_event_read_value:
		return map->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	case BPF_FUNC_get_stackid:
		return map->type == BPF_MAP_TYPE_STACK_TRACE;
	case BPF_FUNC_tail_call:
		return map->type == BPF_MAP_TYPE_PROG_ARRAY;
	case BPF_FUNC_ringbuf_output:
	case BPF_FUNC_ringbuf_reserve:
	case BPF_FUNC_ringbuf_query:
	case BPF_FUNC_ringbuf_reserve_dynptr:
		return map->type == BPF_MAP_TYPE_RINGBUF;
	case BPF_FUNC_user_ringbuf_drain:
		return map->type == BPF_MAP_TYPE_USER_RINGBUF;
	case BPF_FUNC_map_lookup_percpu_elem:
		return map->type == BPF_MAP_TYPE_PERCPU_ARRAY || map->type == BPF_MAP_TYPE_PERCPU_HASH ||
		       map->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	case BPF_FUNC_map_pop_elem:
		return map->type == BPF_MAP_TYPE_QUEUE || map->type == BPF_MAP_TYPE_STACK;
	case BPF_FUNC_map_push_elem:
	case BPF_FUNC_map_peek_elem:
		return map->type == BPF_MAP_TYPE_QUEUE || map->type == BPF_MAP_TYPE_STACK ||
		       map->type == BPF_MAP_TYPE_BLOOM_FILTER;
	case BPF_FUNC_current_task_under_cgroup:
		return map->type == BPF_MAP_TYPE_CGROUP_ARRAY;
	case BPF_FUNC_task_storage_get:
	case BPF_FUNC_task_storage_delete:
		return map->type == BPF_MAP_TYPE_TASK_STORAGE;
	default:
		return true;
	}
}
