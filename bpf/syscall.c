/*
 * syscall.c - bpf(2), aarch64 syscall 280: bpf_sys(cmd, uattr, size).
 *
 * Linux 6.1 rules for union bpf_attr: a size beyond sizeof(union bpf_attr) must have an all-zero
 * tail (else E2BIG), shorter attributes are zero-filled, and bytes past each command's last field
 * must be zero (EINVAL).  Callers need uid 0 (Linux with unprivileged BPF disabled: EPERM).
 * Commands: MAP_CREATE, MAP_LOOKUP_ELEM, MAP_UPDATE_ELEM, MAP_DELETE_ELEM, MAP_GET_NEXT_KEY,
 * MAP_FREEZE, PROG_LOAD (prog.c), OBJ_GET_INFO_BY_FD (progs and maps), PROG_TEST_RUN
 * (BPF_PROG_TYPE_SYSCALL; others ENOTSUPP as Linux's perf_event programs), PROG_GET_NEXT_ID,
 * MAP_GET_NEXT_ID, LINK_CREATE (BPF_PERF_EVENT links: a PERF_EVENT program on a perf event,
 * detached when the link closes), BTF_LOAD (EINVAL: no BTF, libbpf falls back).  Others: EINVAL.
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
_Static_assert(sizeof(struct bpf_prog_info) == 232, "Linux 6.1 struct bpf_prog_info");
_Static_assert(sizeof(struct bpf_map_info) == 88, "Linux 6.1 struct bpf_map_info");

#define END_OF(field) (offsetof(union bpf_attr, field) + sizeof(((union bpf_attr *)0)->field))
#define UPTR(x) ((void *)(uintptr_t)(x))

/* CHECK_ATTR: the bytes after the command's last field are zero. */
static bool tail_dirty(const union bpf_attr *attr, size_t end)
{
	const uint8_t *p = (const uint8_t *)attr;

	for (size_t i = end; i < sizeof(*attr); i++)
		if (p[i])
			return true;
	return false;
}

/* bpf_check_uarg_tail_zero: bytes [known, size) of a user struct are zero. */
static int user_tail_zero(const void *uptr, size_t known, size_t size)
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

	if (tail_dirty(attr, END_OF(map_extra)))
		return -EINVAL;
	err = bpf_map_create(attr, &map);
	if (err)
		return err;
	fd = bpf_map_fd_install(map);
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
	if (ksvc_copy_from_user(key, UPTR(ukey), map->key_size)) {
		ksvc_free(key);
		return -EFAULT;
	}
	*out = key;
	return 0;
}

static bool sys_can_write(const struct bpf_map *map)
{
	return !(map->map_flags & BPF_F_RDONLY) && !map->frozen;
}

static int map_elem(int cmd, const union bpf_attr *attr)
{
	struct bpf_map *map;
	void *key = NULL, *value = NULL;
	uint32_t vsize;
	int err;

	/* each command's last attr field: next_key, key (DELETE), flags */
	if (tail_dirty(attr, cmd == BPF_MAP_GET_NEXT_KEY ? END_OF(next_key) :
			     cmd == BPF_MAP_DELETE_ELEM	 ? END_OF(key) :
							   END_OF(flags)))
		return -EINVAL;
	err = bpf_map_get_fd((int)attr->map_fd, &map);
	if (err)
		return err;
	vsize = bpf_map_sys_value_size(map);
	err = -EPERM;
	if (cmd == BPF_MAP_LOOKUP_ELEM || cmd == BPF_MAP_GET_NEXT_KEY) {
		if (map->map_flags & BPF_F_WRONLY)
			goto out;
	} else if (!sys_can_write(map)) {
		goto out;
	}
	err = -EINVAL;
	if ((cmd == BPF_MAP_LOOKUP_ELEM || cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM) &&
	    (attr->flags & ~BPF_F_LOCK))
		goto out;
	if (cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM && attr->flags)
		goto out; /* no bpf_spin_lock here; queues and stacks take no flags */
	if ((cmd == BPF_MAP_LOOKUP_ELEM || cmd == BPF_MAP_UPDATE_ELEM) && (attr->flags & BPF_F_LOCK))
		goto out; /* no map here has a bpf_spin_lock in its value */
	err = copy_key(map, attr->key, cmd == BPF_MAP_GET_NEXT_KEY, &key);
	if (err)
		goto out;
	err = -ENOMEM;
	value = ksvc_alloc(MAX(cmd == BPF_MAP_GET_NEXT_KEY ? map->key_size : vsize, 1u));
	if (!value)
		goto out;
	switch (cmd) {
	case BPF_MAP_LOOKUP_ELEM:
		err = map->ops->sys_lookup(map, key, value);
		if (!err && ksvc_copy_to_user(UPTR(attr->value), value, vsize))
			err = -EFAULT;
		break;
	case BPF_MAP_UPDATE_ELEM:
		err = -EFAULT;
		if (ksvc_copy_from_user(value, UPTR(attr->value), vsize))
			break;
		err = map->ops->sys_update(map, key, value, attr->flags);
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
		if (!err && ksvc_copy_to_user(UPTR(attr->value), value, vsize))
			err = -EFAULT;
		break;
	case BPF_MAP_GET_NEXT_KEY:
		err = map->ops->get_next_key(map, key, value);
		if (!err && ksvc_copy_to_user(UPTR(attr->next_key), value, map->key_size))
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

	if (tail_dirty(attr, END_OF(map_fd)))
		return -EINVAL;
	err = bpf_map_get_fd((int)attr->map_fd, &map);
	if (err)
		return err;
	flags = spin_lock_irqsave(&map->lock);
	if (map->map_flags & BPF_F_RDONLY)
		err = -EPERM;
	else if (map->frozen || map->mmap_writers)
		err = -EBUSY; /* Linux: frozen already, or a writable mapping exists */
	else
		map->frozen = true;
	spin_unlock_irqrestore(&map->lock, flags);
	bpf_map_put(map);
	return err;
}

static int next_id(int cmd, const union bpf_attr *attr, union bpf_attr *uattr)
{
	uint32_t id;
	int err;

	if (tail_dirty(attr, END_OF(next_id)))
		return -EINVAL;
	err = cmd == BPF_PROG_GET_NEXT_ID ? bpf_prog_next_id(attr->start_id, &id) :
					    bpf_map_next_id(attr->start_id, &id);
	if (err)
		return err;
	if (ksvc_copy_to_user(&uattr->next_id, &id, sizeof(id)))
		return -EFAULT;
	return 0;
}

/* ---- OBJ_GET_INFO_BY_FD ---- */

static int prog_info(struct bpf_prog *prog, const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_prog_info info;
	uint32_t len = attr->info.info_len;
	void *uinfo = UPTR(attr->info.info);
	int err = user_tail_zero(uinfo, sizeof(info), len);

	if (err)
		return err;
	if (len > sizeof(info))
		len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (ksvc_copy_from_user(&info, uinfo, len))
		return -EFAULT;
	{
		uint32_t want_insns = info.xlated_prog_len, want_maps = info.nr_map_ids;
		uint64_t uinsns = info.xlated_prog_insns, umaps = info.map_ids;
		uint32_t want_jited = info.jited_prog_len;
		uint64_t ujited = info.jited_prog_insns;

		memset(&info, 0, sizeof(info));
		info.type = prog->type;
		info.id = prog->id;
		memcpy(info.tag, prog->tag, sizeof(info.tag));
		info.xlated_prog_len = prog->len * 8;
		info.xlated_prog_insns = uinsns;
		info.load_time = prog->load_time;
		info.created_by_uid = prog->uid;
		info.nr_map_ids = prog->nr_maps;
		info.map_ids = umaps;
		memcpy(info.name, prog->name, sizeof(info.name));
		info.gpl_compatible = prog->gpl;
		info.verified_insns = prog->len;
		if (uinsns && want_insns &&
		    ksvc_copy_to_user(UPTR(uinsns), prog->orig,
				      want_insns < prog->len * 8 ? want_insns : prog->len * 8))
			return -EFAULT;
		/* the JIT's code as it runs (Linux: bpf_prog_get_info_by_fd, bpf_dump_raw_ok) */
		info.jited_prog_len = prog->jit.len;
		info.jited_prog_insns = ujited;
		if (prog->jit.len && ujited && want_jited &&
		    ksvc_copy_to_user(UPTR(ujited), prog->jit.text,
				      want_jited < prog->jit.len ? want_jited : prog->jit.len))
			return -EFAULT;
		for (uint32_t i = 0; umaps && i < want_maps && i < prog->nr_maps; i++)
			if (ksvc_copy_to_user((uint32_t *)UPTR(umaps) + i, &prog->maps[i]->id, 4))
				return -EFAULT;
	}
	if (ksvc_copy_to_user(uinfo, &info, len) ||
	    ksvc_copy_to_user(&uattr->info.info_len, &len, sizeof(len)))
		return -EFAULT;
	return 0;
}

static int map_info(struct bpf_map *map, const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_map_info info;
	uint32_t len = attr->info.info_len;
	void *uinfo = UPTR(attr->info.info);
	int err = user_tail_zero(uinfo, sizeof(info), len);

	if (err)
		return err;
	if (len > sizeof(info))
		len = sizeof(info);
	memset(&info, 0, sizeof(info));
	info.type = map->type;
	info.id = map->id;
	info.key_size = map->key_size;
	info.value_size = map->value_size;
	info.max_entries = map->max_entries;
	info.map_flags = map->map_flags;
	memcpy(info.name, map->name, sizeof(info.name));
	if (ksvc_copy_to_user(uinfo, &info, len) ||
	    ksvc_copy_to_user(&uattr->info.info_len, &len, sizeof(len)))
		return -EFAULT;
	return 0;
}

static int obj_info(const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_prog *prog;
	struct bpf_map *map;
	int err;

	if (tail_dirty(attr, END_OF(info.info)))
		return -EINVAL;
	err = bpf_prog_get_fd((int)attr->info.bpf_fd, &prog);
	if (!err) {
		err = prog_info(prog, attr, uattr);
		bpf_prog_put(prog);
		return err;
	}
	if (err == -EBADF)
		return err;
	err = bpf_map_get_fd((int)attr->info.bpf_fd, &map);
	if (!err) {
		err = map_info(map, attr, uattr);
		bpf_map_put(map);
	}
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
	if (size && ksvc_copy_from_user(ctx, UPTR(attr->test.ctx_in), size)) {
		err = -EFAULT;
		goto out;
	}
	retval = (uint32_t)bpf_prog_run(prog, ctx);
	if (ksvc_copy_to_user(&uattr->test.retval, &retval, sizeof(retval)) ||
	    (size && ksvc_copy_to_user(UPTR(attr->test.ctx_in), ctx, size)))
		err = -EFAULT;
out:
	ksvc_free(ctx);
	return err;
}

static int test_run(const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_prog *prog;
	int err;

	if (tail_dirty(attr, END_OF(test.batch_size)))
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

/* ---- BPF_LINK_CREATE: PERF_EVENT programs on perf events (Linux's bpf_perf_link) ---- */

struct perf_link {
	_Atomic int refs;
	struct bpf_prog *prog; /* the link's reference; the event holds another while attached */
	void *event;	       /* a reference on the perf event */
};

static void link_get(void *priv)
{
	atomic_fetch_add(&((struct perf_link *)priv)->refs, 1);
}

static void link_release(void *priv)
{
	struct perf_link *l = priv;
	const struct bpf_perf_ops *ops = bpf_perf();

	if (atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	/* closing the link detaches the program (Linux: perf_event_free_bpf_prog) */
	ops->detach(l->event, NULL);
	ops->event_put(l->event);
	bpf_prog_put(l->prog);
	ksvc_free(l);
}

static const struct ksvc_file_ops bpf_link_fops = {
	.name = "bpf_link",
	.get = link_get,
	.release = link_release,
};

static int link_create(const union bpf_attr *attr)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	struct bpf_prog *prog;
	struct perf_link *l;
	void *event;
	int err, fd;

	if (tail_dirty(attr, END_OF(link_create.kprobe_multi.cookies)))
		return -EINVAL;
	err = bpf_prog_get_fd((int)attr->link_create.prog_fd, &prog);
	if (err)
		return err;
	/* a KPROBE program with another attach type is a kprobe_multi link: not built, as in
	 * Debian's 6.1 (no CONFIG_FPROBE), EOPNOTSUPP */
	err = -EOPNOTSUPP;
	if (prog->type == BPF_PROG_TYPE_KPROBE && attr->link_create.attach_type != BPF_PERF_EVENT)
		goto out_prog;
	err = -EINVAL;
	/* PERF_EVENT, TRACEPOINT and KPROBE programs link to perf events; the attach below checks
	 * the program type against the event's */
	if ((prog->type != BPF_PROG_TYPE_PERF_EVENT && prog->type != BPF_PROG_TYPE_TRACEPOINT &&
	     prog->type != BPF_PROG_TYPE_KPROBE) ||
	    attr->link_create.attach_type != BPF_PERF_EVENT || attr->link_create.flags)
		goto out_prog;
	err = -EBADF;
	if (!ops || ops->event_get_fd((int)attr->link_create.target_fd, &event))
		goto out_prog;
	err = -ENOMEM;
	l = ksvc_alloc(sizeof(*l));
	if (!l)
		goto out_event;
	atomic_store(&l->refs, 1);
	l->prog = prog;
	l->event = event;
	bpf_prog_get(prog); /* the event's reference */
	err = ops->attach(event, prog, attr->link_create.perf_event.bpf_cookie);
	if (err) {
		bpf_prog_put(prog);
		ksvc_free(l);
		goto out_event;
	}
	fd = ksvc_fd_install(&bpf_link_fops, l, true);
	if (fd < 0)
		link_release(l);
	return fd;
out_event:
	ops->event_put(event);
out_prog:
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
	err = user_tail_zero(uattr, sizeof(attr), size);
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
		if (tail_dirty(&attr, END_OF(core_relo_rec_size)))
			return -EINVAL;
		return bpf_prog_load(&attr);
	case BPF_OBJ_GET_INFO_BY_FD:
		return obj_info(&attr, (union bpf_attr *)uattr);
	case BPF_PROG_TEST_RUN:
		return test_run(&attr, (union bpf_attr *)uattr);
	case BPF_PROG_GET_NEXT_ID:
	case BPF_MAP_GET_NEXT_ID:
		return next_id(cmd, &attr, (union bpf_attr *)uattr);
	case BPF_LINK_CREATE:
		return link_create(&attr);
	case BPF_BTF_LOAD:
		return -EINVAL;
	default:
		return -EINVAL;
	}
}
