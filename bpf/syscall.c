/*
 * syscall.c - bpf(2), aarch64 syscall 280: bpf_sys(cmd, uattr, size).
 *
 * Linux 6.1 rules for union bpf_attr: a size beyond sizeof(union bpf_attr) must have an all-zero
 * tail (else E2BIG), shorter attributes are zero-filled, and bytes past each command's last field
 * must be zero (EINVAL).  Callers need uid 0 (Linux with unprivileged BPF disabled: EPERM).
 * Commands: MAP_CREATE, MAP_LOOKUP_ELEM, MAP_UPDATE_ELEM, MAP_DELETE_ELEM, MAP_GET_NEXT_KEY,
 * MAP_FREEZE, PROG_LOAD (prog.c), OBJ_GET_INFO_BY_FD (info.c), PROG_TEST_RUN
 * (BPF_PROG_TYPE_SYSCALL; others ENOTSUPP as Linux's perf_event programs), the ids, fds by id,
 * pins, ENABLE_STATS and TASK_FD_QUERY (obj.c), LINK_CREATE (link.c: BPF_PERF_EVENT links),
 * BTF_LOAD (btf_sys.c).  Others: EINVAL.
 * Every user pointer goes through ksvc_copy_{from,to}_user (EFAULT).
 */
#include <stddef.h>
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

_Static_assert(sizeof(union bpf_attr) == 144, "Linux 6.1 union bpf_attr");

bool bpf_attr_tail_dirty(const union bpf_attr *attr, size_t end)
{
	const uint8_t *p = (const uint8_t *)attr;

	for (size_t i = end; i < sizeof(*attr); i++)
		if (p[i])
			return true;
	return false;
}

int bpf_user_tail_zero(const void *uptr, size_t known, size_t size)
{
	uint8_t buf[64];

	while (known < size) {
		size_t n = size - known < sizeof(buf) ? size - known : sizeof(buf);

		if (ksvc_copy_from_user(buf, (const uint8_t *)uptr + known, n))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return -E2BIG;
		known += n;
	}
	return 0;
}

static int map_create(const union bpf_attr *attr)
{
	struct bpf_map *map;
	int err, fd;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(map_extra)))
		return -EINVAL;
	err = bpf_map_create(attr, &map);
	if (err)
		return err;
	fd = bpf_map_fd_install(map, map->map_flags); /* bpf_get_file_flag(map_flags) */
	if (fd < 0)
		bpf_map_put(map);
	return fd;
}

/* Copy in a key (NULL allowed when may_be_null) of the map's key size. */
static int copy_key(struct bpf_map *map, uint64_t ukey, bool may_be_null, void **out)
{
	void *key;

	*out = NULL;
	if (!ukey && may_be_null)
		return 0;
	if (!map->key_size)
		return ukey ? -EINVAL : 0; /* __bpf_copy_key: no key to copy (a ring buffer) */
	key = ksvc_alloc(map->key_size);
	if (!key)
		return -ENOMEM;
	if (ksvc_copy_from_user(key, BPF_UPTR(ukey), map->key_size)) {
		ksvc_free(key);
		return -EFAULT;
	}
	*out = key;
	return 0;
}

/* copy_map_value and check_and_init_map_value: a value's bpf_spin_lock, bpf_timer and kptrs
 * are neither written by nor shown to the syscalls (zeros; an update leaves a kptr NULL, as
 * Linux's array frees it and its hash starts a new element with none). */
static void lock_fields_zero(const struct bpf_map *map, void *value)
{
	uint32_t step = bpf_map_is_percpu(map->type) ? (map->value_size + 7) / 8 * 8 : 0;

	for (unsigned int cpu = 0; map->nr_kptrs && cpu < (step ? ksvc_nr_cpus() : 1); cpu++)
		bpf_map_kptrs_zero(map, (uint8_t *)value + (size_t)cpu * step);
	if (map->spin_lock_off >= 0)
		memset((uint8_t *)value + map->spin_lock_off, 0, sizeof(struct bpf_spin_lock));
	if (map->timer_off >= 0)
		memset((uint8_t *)value + map->timer_off, 0, sizeof(struct bpf_timer));
}

static int map_elem(int cmd, const union bpf_attr *attr)
{
	struct bpf_map *map;
	void *key = NULL, *value = NULL;
	bool can_read, can_write;
	uint32_t vsize;
	int err;

	/* each command's last attr field: next_key, key (DELETE), flags */
	if (bpf_attr_tail_dirty(attr, cmd == BPF_MAP_GET_NEXT_KEY ? BPF_END_OF(next_key) :
			     cmd == BPF_MAP_DELETE_ELEM	 ? BPF_END_OF(key) :
							   BPF_END_OF(flags)))
		return -EINVAL;
	err = bpf_map_get_fd_mode((int)attr->map_fd, &map, &can_read, &can_write);
	if (err)
		return err;
	vsize = bpf_map_sys_value_size(map);
	/* map_get_sys_perms: the fd's mode, and no writing once frozen */
	can_write = can_write && !map->frozen;
	err = -EPERM;
	if ((cmd != BPF_MAP_UPDATE_ELEM && cmd != BPF_MAP_DELETE_ELEM && !can_read) ||
	    (cmd != BPF_MAP_LOOKUP_ELEM && cmd != BPF_MAP_GET_NEXT_KEY && !can_write))
		goto out;
	err = -EINVAL;
	if ((cmd == BPF_MAP_LOOKUP_ELEM || cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM) &&
	    (attr->flags & ~BPF_F_LOCK))
		goto out;
	if (cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM && attr->flags)
		goto out; /* no bpf_spin_lock here; queues and stacks take no flags */
	if ((cmd == BPF_MAP_LOOKUP_ELEM || cmd == BPF_MAP_UPDATE_ELEM) &&
	    (attr->flags & BPF_F_LOCK) && map->spin_lock_off < 0)
		goto out; /* BPF_F_LOCK wants a bpf_spin_lock in the value */
	err = copy_key(map, attr->key, cmd == BPF_MAP_GET_NEXT_KEY, &key);
	if (err)
		goto out;
	err = -ENOMEM;
	value = ksvc_alloc(MAX(cmd == BPF_MAP_GET_NEXT_KEY ? map->key_size : vsize, 1u));
	if (!value)
		goto out;
	switch (cmd) {
	case BPF_MAP_LOOKUP_ELEM:
		/* a bloom filter tests the value it is given and writes nothing back */
		if (map->type == BPF_MAP_TYPE_BLOOM_FILTER) {
			err = ksvc_copy_from_user(value, BPF_UPTR(attr->value), vsize) ?
				      -EFAULT : map->ops->sys_lookup(map, key, value);
			break;
		}
		err = map->ops->sys_lookup(map, key, value);
		if (!err)
			lock_fields_zero(map, value);
		if (!err && ksvc_copy_to_user(BPF_UPTR(attr->value), value, vsize))
			err = -EFAULT;
		break;
	case BPF_MAP_UPDATE_ELEM:
		err = -EFAULT;
		if (ksvc_copy_from_user(value, BPF_UPTR(attr->value), vsize))
			break;
		lock_fields_zero(map, value);
		/* no program can hold a value's lock (prog.c): a plain copy is BPF_F_LOCK's */
		err = map->ops->sys_update(map, key, value, attr->flags & ~(uint64_t)BPF_F_LOCK);
		break;
	case BPF_MAP_DELETE_ELEM:
		err = map->ops->delete(map, key);
		break;
	case BPF_MAP_LOOKUP_AND_DELETE_ELEM:
		/* Linux 6.1: QUEUE and STACK pop, the hash maps look up then delete */
		if (map->type == BPF_MAP_TYPE_QUEUE || map->type == BPF_MAP_TYPE_STACK)
			err = (int)bpf_qstack_pop(map, value, true);
		else if (map->type == BPF_MAP_TYPE_HASH || map->type == BPF_MAP_TYPE_PERCPU_HASH ||
			 map->type == BPF_MAP_TYPE_LRU_HASH)
			err = map->ops->sys_lookup(map, key, value) ?: map->ops->delete(map, key);
		else
			err = -BPF_ENOTSUPP;
		if (!err)
			lock_fields_zero(map, value);
		if (!err && ksvc_copy_to_user(BPF_UPTR(attr->value), value, vsize))
			err = -EFAULT;
		break;
	case BPF_MAP_GET_NEXT_KEY:
		err = map->ops->get_next_key(map, key, value);
		if (!err && ksvc_copy_to_user(BPF_UPTR(attr->next_key), value, map->key_size))
			err = -EFAULT;
		break;
	}
out:
	ksvc_free(key);
	ksvc_free(value);
	bpf_map_put(map);
	return err;
}

static int map_freeze(const union bpf_attr *attr)
{
	struct bpf_map *map;
	unsigned long flags;
	int err;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(map_fd)))
		return -EINVAL;
	/* Linux 6.1 checks neither the fd's mode nor BPF_F_RDONLY here */
	err = bpf_map_get_fd((int)attr->map_fd, &map);
	if (err)
		return err;
	flags = spin_lock_irqsave(&map->lock);
	if (map->frozen || map->mmap_writers)
		err = -EBUSY; /* Linux: frozen already, or a writable mapping exists */
	else
		map->frozen = true;
	spin_unlock_irqrestore(&map->lock, flags);
	bpf_map_put(map);
	return err;
}

/* ---- PROG_TEST_RUN ---- */

static int test_run_syscall(struct bpf_prog *prog, const union bpf_attr *attr,
			    union bpf_attr *uattr)
{
	uint32_t size = attr->test.ctx_size_in;
	uint32_t retval;
	void *ctx;
	int err = 0;

	if (attr->test.flags || attr->test.cpu || attr->test.batch_size || attr->test.data_in ||
	    attr->test.data_out || attr->test.ctx_out || attr->test.duration || attr->test.repeat ||
	    attr->test.data_size_in || attr->test.data_size_out || attr->test.ctx_size_out)
		return -EINVAL;
	if (size < prog->max_ctx_offset || size > 65535)
		return -EINVAL;
	ctx = ksvc_alloc(size ? size : 1);
	if (!ctx)
		return -ENOMEM;
	if (size && ksvc_copy_from_user(ctx, BPF_UPTR(attr->test.ctx_in), size)) {
		err = -EFAULT;
		goto out;
	}
	/* Linux's bpf_prog_run_pin_on_cpu: preemptible (the program may sleep: every SYSCALL
	 * program is sleepable) but on one CPU, for its CPU id and per-CPU map slots */
	ksvc_migrate_disable();
	retval = (uint32_t)bpf_prog_run(prog, ctx);
	ksvc_migrate_enable();
	if (ksvc_copy_to_user(&uattr->test.retval, &retval, sizeof(retval)) ||
	    (size && ksvc_copy_to_user(BPF_UPTR(attr->test.ctx_in), ctx, size)))
		err = -EFAULT;
out:
	ksvc_free(ctx);
	return err;
}

static int test_run(const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_prog *prog;
	int err;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(test.batch_size)))
		return -EINVAL;
	if ((attr->test.ctx_size_in && !attr->test.ctx_in) ||
	    (!attr->test.ctx_size_in && attr->test.ctx_in) ||
	    (attr->test.ctx_size_out && !attr->test.ctx_out) ||
	    (!attr->test.ctx_size_out && attr->test.ctx_out))
		return -EINVAL;
	err = bpf_prog_get_fd((int)attr->test.prog_fd, &prog);
	if (err)
		return err;
	if (prog->type == BPF_PROG_TYPE_SYSCALL)
		err = test_run_syscall(prog, attr, uattr);
	else
		err = -BPF_ENOTSUPP; /* Linux: perf_event programs have no test_run */
	bpf_prog_put(prog);
	return err;
}

long bpf_sys(int cmd, const void *uattr, unsigned int size)
{
	union bpf_attr attr;
	int err;

	if (ksvc_current_uid() != 0)
		return -EPERM;
	if (size > KSVC_PAGE_SIZE)
		return -E2BIG;
	err = bpf_user_tail_zero(uattr, sizeof(attr), size);
	if (err)
		return err;
	if (size > sizeof(attr))
		size = sizeof(attr);
	memset(&attr, 0, sizeof(attr));
	if (ksvc_copy_from_user(&attr, uattr, size))
		return -EFAULT;
	switch (cmd) {
	case BPF_MAP_CREATE:
		return map_create(&attr);
	case BPF_MAP_LOOKUP_ELEM:
	case BPF_MAP_UPDATE_ELEM:
	case BPF_MAP_DELETE_ELEM:
	case BPF_MAP_GET_NEXT_KEY:
	case BPF_MAP_LOOKUP_AND_DELETE_ELEM:
		return map_elem(cmd, &attr);
	case BPF_MAP_FREEZE:
		return map_freeze(&attr);
	case BPF_PROG_LOAD:
		if (bpf_attr_tail_dirty(&attr, BPF_END_OF(core_relo_rec_size)))
			return -EINVAL;
		return bpf_prog_load(&attr, (union bpf_attr *)uattr);
	case BPF_OBJ_GET_INFO_BY_FD:
		return bpf_obj_info(&attr, (union bpf_attr *)uattr);
	case BPF_PROG_TEST_RUN:
		return test_run(&attr, (union bpf_attr *)uattr);
	case BPF_PROG_GET_NEXT_ID:
	case BPF_MAP_GET_NEXT_ID:
	case BPF_LINK_GET_NEXT_ID:
	case BPF_BTF_GET_NEXT_ID:
		return bpf_obj_next_id(cmd, &attr, (union bpf_attr *)uattr);
	case BPF_PROG_GET_FD_BY_ID:
	case BPF_MAP_GET_FD_BY_ID:
	case BPF_LINK_GET_FD_BY_ID:
	case BPF_BTF_GET_FD_BY_ID:
		return bpf_obj_fd_by_id(cmd, &attr);
	case BPF_OBJ_PIN:
		return bpf_obj_pin(&attr);
	case BPF_OBJ_GET:
		return bpf_obj_get(&attr);
	case BPF_ENABLE_STATS:
		return bpf_enable_stats(&attr);
	case BPF_TASK_FD_QUERY:
		return bpf_task_fd_query(&attr, (union bpf_attr *)uattr);
	case BPF_LINK_CREATE:
		return bpf_link_create(&attr);
	case BPF_BTF_LOAD:
		return bpf_btf_load(&attr);
	default:
		return -EINVAL;
	}
}
