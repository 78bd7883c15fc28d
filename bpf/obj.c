/*
 * obj.c - what bpf(2) does with programs, maps and links as objects, whatever their kind: the
 * one id table (BPF_{PROG,MAP,LINK}_GET_NEXT_ID and _GET_FD_BY_ID walk it), pins in a bpf
 * filesystem (BPF_OBJ_PIN, BPF_OBJ_GET through fs/bpffs.c), runtime statistics
 * (kernel.bpf_stats_enabled and BPF_ENABLE_STATS) and BPF_TASK_FD_QUERY.
 *
 * Linux 6.1 (kernel/bpf/syscall.c, inode.c) is the reference: ids are per kind, allocated
 * cyclically in [1, INT_MAX); GET_NEXT_ID takes start_id < INT_MAX (else EINVAL) and gives the
 * next live id or ENOENT; GET_FD_BY_ID gives ENOENT for an id not (or no longer) live, EINVAL
 * for open_flags on a program or link and for BPF_F_RDONLY with BPF_F_WRONLY on a map.  A pin
 * holds what an fd holds (for a map, a user reference too); BPF_OBJ_PIN of an fd that is no
 * bpf object is EINVAL; BPF_OBJ_GET of a link wants no open_flags (EINVAL), of a program
 * ignores them.
 * BPF_TASK_FD_QUERY: ENOENT (no such task), EBADF (no such fd), ENOTSUPP for a file that is
 * neither a perf event nor a raw tracepoint link (fd 0, say: bpftool's probe); a perf event
 * answers through perf (bpf_perf_ops.query): ENOENT without a program, EOPNOTSUPP for a
 * PERF_EVENT program, a tracepoint's name and BPF_FD_TYPE_TRACEPOINT for a tracepoint program.
 *
 * Map fds opened with BPF_F_RDONLY / BPF_F_WRONLY (open_flags, file_flags) are O_RDONLY /
 * O_WRONLY files: the element commands check the fd's mode (syscall.c).
 * BTF objects (btf_sys.c) have ids of their own; a BTF fd cannot be pinned (EINVAL, as 6.1).
 * Not here: raw tracepoint links.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <bpf/jit.h>
#include <bpf/sysctl.h>
#include "bpf_internal.h"

#define ID_SLOTS 3072 /* live programs, maps and links together */

static struct {
	uint8_t kind; /* enum bpf_obj_kind; 0: free */
	uint32_t id;
	void *obj;
	_Atomic uint32_t *refcnt;
} ids[ID_SLOTS]; /* (ids_lock) */
static uint32_t ids_next[BPF_OBJ_BTF + 1] = { 1, 1, 1, 1, 1 }; /* (ids_lock) per kind */
static struct spinlock ids_lock = SPINLOCK_INIT;

static bool id_live_locked(enum bpf_obj_kind kind, uint32_t id)
{
	for (uint32_t i = 0; i < ID_SLOTS; i++)
		if (ids[i].kind == kind && ids[i].id == id)
			return true;
	return false;
}

int bpf_id_alloc(enum bpf_obj_kind kind, void *obj, _Atomic uint32_t *refcnt, uint32_t *id)
{
	unsigned long f = spin_lock_irqsave(&ids_lock);
	uint32_t slot, v;
	int err = -ENOSPC;

	for (slot = 0; slot < ID_SLOTS && ids[slot].kind; slot++)
		;
	if (slot < ID_SLOTS) {
		/* idr_alloc_cyclic(1, INT_MAX): past the last id, from 1 again, skipping live ones */
		do {
			v = ids_next[kind];
			ids_next[kind] = v + 1 >= INT32_MAX ? 1 : v + 1;
		} while (id_live_locked(kind, v));
		ids[slot].kind = (uint8_t)kind;
		ids[slot].id = v;
		ids[slot].obj = obj;
		ids[slot].refcnt = refcnt;
		*id = v;
		err = 0;
	}
	spin_unlock_irqrestore(&ids_lock, f);
	return err;
}

void bpf_id_free(enum bpf_obj_kind kind, uint32_t id)
{
	unsigned long f = spin_lock_irqsave(&ids_lock);

	for (uint32_t i = 0; i < ID_SLOTS; i++) {
		if (ids[i].kind == kind && ids[i].id == id) {
			ids[i].kind = 0;
			ids[i].obj = NULL;
			break;
		}
	}
	spin_unlock_irqrestore(&ids_lock, f);
}

/* The object with this id with one more reference (Linux's *_inc_not_zero), or NULL. */
static void *id_get(enum bpf_obj_kind kind, uint32_t id)
{
	unsigned long f = spin_lock_irqsave(&ids_lock);
	void *obj = NULL;

	for (uint32_t i = 0; i < ID_SLOTS && id; i++) {
		if (ids[i].kind != kind || ids[i].id != id)
			continue;
		uint32_t r = atomic_load(ids[i].refcnt);

		/* a count already at zero is being freed: its id is about to go */
		while (r && !atomic_compare_exchange_weak(ids[i].refcnt, &r, r + 1))
			;
		if (r)
			obj = ids[i].obj;
		break;
	}
	spin_unlock_irqrestore(&ids_lock, f);
	return obj;
}

static enum bpf_obj_kind cmd_kind(int cmd)
{
	switch (cmd) {
	case BPF_PROG_GET_NEXT_ID:
	case BPF_PROG_GET_FD_BY_ID:
		return BPF_OBJ_PROG;
	case BPF_MAP_GET_NEXT_ID:
	case BPF_MAP_GET_FD_BY_ID:
		return BPF_OBJ_MAP;
	case BPF_BTF_GET_NEXT_ID:
	case BPF_BTF_GET_FD_BY_ID:
		return BPF_OBJ_BTF;
	default:
		return BPF_OBJ_LINK;
	}
}

int bpf_obj_next_id(int cmd, const union bpf_attr *attr, union bpf_attr *uattr)
{
	enum bpf_obj_kind kind = cmd_kind(cmd);
	uint32_t best = 0;
	unsigned long f;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(next_id)) || attr->start_id >= INT32_MAX)
		return -EINVAL;
	f = spin_lock_irqsave(&ids_lock);
	for (uint32_t i = 0; i < ID_SLOTS; i++)
		if (ids[i].kind == kind && ids[i].id > attr->start_id && (!best || ids[i].id < best))
			best = ids[i].id;
	spin_unlock_irqrestore(&ids_lock, f);
	if (!best)
		return -ENOENT;
	if (ksvc_copy_to_user(&uattr->next_id, &best, sizeof(best)))
		return -EFAULT;
	return 0;
}

/* A new fd for an object the caller holds one reference to, which the fd takes over. */
static int obj_fd_install(enum bpf_obj_kind kind, void *obj, uint32_t open_flags)
{
	int fd;

	switch (kind) {
	case BPF_OBJ_PROG:
		fd = bpf_prog_fd_install(obj);
		if (fd < 0)
			bpf_prog_put(obj);
		return fd;
	case BPF_OBJ_MAP:
		fd = bpf_map_fd_install(obj, open_flags);
		if (fd < 0)
			bpf_map_put(obj);
		return fd;
	case BPF_OBJ_BTF:
		fd = bpf_btf_fd_install(obj);
		if (fd < 0)
			bpf_btf_put(obj);
		return fd;
	default:
		fd = ksvc_fd_install(&bpf_link_fops, obj, true);
		if (fd < 0)
			bpf_link_put(obj);
		return fd;
	}
}

/* bpf_get_file_flag: BPF_F_RDONLY and BPF_F_WRONLY are exclusive; nothing else is allowed. */
static bool open_flags_bad(uint32_t flags)
{
	return (flags & ~(uint32_t)(BPF_F_RDONLY | BPF_F_WRONLY)) ||
	       (flags & (BPF_F_RDONLY | BPF_F_WRONLY)) == (BPF_F_RDONLY | BPF_F_WRONLY);
}

int bpf_obj_fd_by_id(int cmd, const union bpf_attr *attr)
{
	enum bpf_obj_kind kind = cmd_kind(cmd);
	void *obj;

	/* programs and links end at next_id, BTF at btf_id; maps take open_flags */
	if (bpf_attr_tail_dirty(attr, kind == BPF_OBJ_MAP ? BPF_END_OF(open_flags) :
				      kind == BPF_OBJ_BTF ? BPF_END_OF(btf_id) :
							    BPF_END_OF(next_id)))
		return -EINVAL;
	if (kind == BPF_OBJ_MAP && open_flags_bad(attr->open_flags))
		return -EINVAL;
	obj = id_get(kind, attr->start_id);
	if (!obj)
		return -ENOENT;
	return obj_fd_install(kind, obj, attr->open_flags);
}

/* ---- pins (Linux's kernel/bpf/inode.c, the filesystem in fs/bpffs.c) ---- */

int bpf_obj_pin(const union bpf_attr *attr)
{
	struct bpf_prog *prog;
	struct bpf_map *map;
	struct bpf_link *link;
	int fd = (int)attr->bpf_fd, err;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(file_flags)) || attr->file_flags)
		return -EINVAL;
	/* bpf_fd_probe_obj: a map (with a user reference, as an fd), a program, a link */
	if (!bpf_map_get_fd(fd, &map)) {
		atomic_fetch_add(&map->usercnt, 1);
		err = ksvc_bpffs_pin(BPF_UPTR(attr->pathname), &bpf_map_fops, map);
		if (err)
			bpf_map_fops.release(map);
		return err;
	}
	if (!bpf_prog_get_fd(fd, &prog)) {
		err = ksvc_bpffs_pin(BPF_UPTR(attr->pathname), &bpf_prog_fops, prog);
		if (err)
			bpf_prog_put(prog);
		return err;
	}
	if (!bpf_link_get_fd(fd, &link)) {
		err = ksvc_bpffs_pin(BPF_UPTR(attr->pathname), &bpf_link_fops, link);
		if (err)
			bpf_link_put(link);
		return err;
	}
	return -EINVAL;
}

int bpf_obj_get(const union bpf_attr *attr)
{
	const struct ksvc_file_ops *ops;
	void *obj;
	int err;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(file_flags)) || attr->bpf_fd ||
	    open_flags_bad(attr->file_flags))
		return -EINVAL;
	err = ksvc_bpffs_get(BPF_UPTR(attr->pathname), &ops, &obj);
	if (err)
		return err;
	if (ops == &bpf_map_fops)
		return obj_fd_install(BPF_OBJ_MAP, obj, attr->file_flags);
	if (ops == &bpf_prog_fops) /* whatever the open_flags (Linux 6.1) */
		return obj_fd_install(BPF_OBJ_PROG, obj, 0);
	if (!attr->file_flags)
		return obj_fd_install(BPF_OBJ_LINK, obj, 0);
	bpf_link_put(obj); /* a link opened other than read-write */
	return -EINVAL;
}

/* ---- runtime statistics ---- */

_Atomic int bpf_stats_users; /* BPF_ENABLE_STATS fds, plus one while the sysctl is 1 */
static int stats_sysctl; /* (stats_lock) kernel.bpf_stats_enabled as written */
static struct spinlock stats_lock = SPINLOCK_INIT;

static void stats_release(void *priv)
{
	(void)priv;
	atomic_fetch_sub(&bpf_stats_users, 1);
}

static const struct ksvc_file_ops stats_fops = { .name = "bpf-stats",
						 .rdonly = true,
						 .release = stats_release };

int bpf_enable_stats(const union bpf_attr *attr)
{
	int fd;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(enable_stats.type)))
		return -EINVAL;
	if (attr->enable_stats.type != BPF_STATS_RUN_TIME)
		return -EINVAL;
	if (atomic_load(&bpf_stats_users) > INT32_MAX / 2)
		return -EBUSY;
	atomic_fetch_add(&bpf_stats_users, 1);
	fd = ksvc_fd_install(&stats_fops, NULL, true);
	if (fd < 0)
		atomic_fetch_sub(&bpf_stats_users, 1);
	return fd;
}

/* kernel.bpf_stats_enabled reads back what was written (not whether an fd enables them). */
static int stats_sysctl_set(long v)
{
	unsigned long f;

	if (v < 0 || v > 1)
		return -EINVAL;
	f = spin_lock_irqsave(&stats_lock);
	if (v != stats_sysctl)
		atomic_fetch_add(&bpf_stats_users, v ? 1 : -1);
	stats_sysctl = (int)v;
	spin_unlock_irqrestore(&stats_lock, f);
	return 0;
}

int bpf_sysctl_get(const char *name, long *v)
{
	if (!strcmp(name, "bpf_jit_enable"))
		*v = bpf_jit_enable_get();
	else if (!strcmp(name, "bpf_stats_enabled"))
		*v = stats_sysctl;
	else if (!strcmp(name, "unprivileged_bpf_disabled"))
		*v = 1; /* bpf(2) wants uid 0 (bpf_sys), and nothing changes that */
	else if (!strcmp(name, "bpf_jit_harden"))
		*v = 0; /* the JIT does not blind constants */
	else if (!strcmp(name, "bpf_jit_kallsyms"))
		*v = 0; /* JIT code is not in /proc/kallsyms */
	else
		return -ENOENT;
	return 0;
}

int bpf_sysctl_set(const char *name, long v)
{
	if (!strcmp(name, "bpf_jit_enable"))
		return bpf_jit_enable_set(v);
	if (!strcmp(name, "bpf_stats_enabled"))
		return stats_sysctl_set(v);
	if (!strcmp(name, "unprivileged_bpf_disabled"))
		return v == 1 ? 0 : v < 0 || v > 2 ? -EINVAL : -EPERM; /* Linux once set to 1 */
	return -ENOENT;
}

/* ---- BPF_TASK_FD_QUERY ---- */

/* bpf_task_fd_query_copy: buf_len is always the name's length; a short buffer gets a cut,
 * NUL-terminated copy and ENOSPC after the other fields are written. */
static int fd_query_copy(const union bpf_attr *attr, union bpf_attr *uattr, uint32_t prog_id,
			 uint32_t fd_type, const char *name)
{
	char *ubuf = BPF_UPTR(attr->task_fd_query.buf);
	uint32_t len = name ? (uint32_t)strlen(name) : 0, in = attr->task_fd_query.buf_len;
	uint64_t zero64 = 0;
	char zero = 0;
	int err = 0;

	if (ksvc_copy_to_user(&uattr->task_fd_query.buf_len, &len, sizeof(len)))
		return -EFAULT;
	if (in && ubuf) {
		if (!len) {
			if (ksvc_copy_to_user(ubuf, &zero, 1))
				return -EFAULT;
		} else if (in >= len + 1) {
			if (ksvc_copy_to_user(ubuf, name, len + 1))
				return -EFAULT;
		} else {
			err = -ENOSPC;
			if (ksvc_copy_to_user(ubuf, name, in - 1) ||
			    ksvc_copy_to_user(ubuf + in - 1, &zero, 1))
				return -EFAULT;
		}
	}
	if (ksvc_copy_to_user(&uattr->task_fd_query.prog_id, &prog_id, sizeof(prog_id)) ||
	    ksvc_copy_to_user(&uattr->task_fd_query.fd_type, &fd_type, sizeof(fd_type)) ||
	    ksvc_copy_to_user(&uattr->task_fd_query.probe_offset, &zero64, 8) ||
	    ksvc_copy_to_user(&uattr->task_fd_query.probe_addr, &zero64, 8))
		return -EFAULT;
	return err;
}

int bpf_task_fd_query(const union bpf_attr *attr, union bpf_attr *uattr)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	int pid = (int)attr->task_fd_query.pid, fd = (int)attr->task_fd_query.fd, err;
	struct bpf_link *link;
	uint32_t prog_id;
	const char *name;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(task_fd_query.probe_addr)))
		return -EINVAL;
	if (attr->task_fd_query.flags)
		return -EINVAL;
	err = ksvc_task_fd_get(pid, fd, &bpf_link_fops, (void **)&link);
	if (err == -ENOENT || err == -EBADF)
		return err;
	if (!err) {
		bpf_link_put(link);
		return -BPF_ENOTSUPP; /* a link, but no raw tracepoint link */
	}
	err = ops ? ops->task_fd_query(pid, fd, &prog_id, &name) : -EINVAL;
	if (err == -EINVAL)
		return -BPF_ENOTSUPP; /* neither a link nor a perf event */
	if (err)
		return err;
	return fd_query_copy(attr, uattr, prog_id, BPF_FD_TYPE_TRACEPOINT, name);
}
