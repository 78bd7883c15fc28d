/*
 * cgroupfs.c - the cgroup2 filesystem over kernel/cgroup.c: `mount -t cgroup2 none DIR`
 * (every mount shows the one hierarchy, statfs f_type CGROUP2_SUPER_MAGIC), a directory per
 * cgroup, mkdir to make one, rmdir to remove one; /proc/PID/cgroup; the seam call that turns
 * a directory fd into a cgroup for bpf/ (ksvc_cgroup_get_fd).
 *
 * What it does: each cgroup directory holds the core files of Linux 6.1's cgroup v2 that this
 * kernel implements, with Linux's modes: cgroup.procs and cgroup.threads (0644: the pids /
 * tids in it; a write moves a process, "0" the writer's), cgroup.controllers (0444) and
 * cgroup.subtree_control (0644), both empty (there are no controllers: "+cpu" is ENOENT,
 * as Linux for a controller that is not available, "+x" / garbage EINVAL), cgroup.max.depth
 * and cgroup.max.descendants (0644, "max" or a number, enforced at mkdir), cgroup.stat (0444:
 * nr_descendants, nr_dying_descendants); and, not in the root, cgroup.type (0644, "domain"),
 * cgroup.events (0444, "populated N\nfrozen 0\n") and cgroup.kill (0200: "1" kills every
 * process in the subtree; reading it is EINVAL, another number ERANGE).  A cgroup's id is its directory's
 * inode number; the root is ino 1 (kernfs's first node), on a device of its own.
 *
 * Errors as Linux's kernfs/cgroup: files may not be created (EACCES), unlinked, linked,
 * renamed, symlinked or mknod'ed (EPERM); rmdir of a cgroup with processes or children is
 * EBUSY; a name with a newline is EINVAL; reading or writing a file of a removed cgroup is
 * ENODEV; every file takes a write (read-only ones then fail it with EINVAL).
 *
 * A change of cgroup.events (populated) is IN_MODIFY to inotify watches on the file and its
 * directory, as kernfs_notify.
 *
 * What it does not do: cgroup.freeze, cgroup.pressure (not built), threaded
 * cgroups (writing "threaded" to cgroup.type is EOPNOTSUPP), poll on cgroup.events (pseudo
 * files have none), the cgroup1 filesystem (ENODEV at mount), mount options.
 *
 * ABI: Linux 6.1 kernel/cgroup/cgroup.c (cgroup_base_files, cgroup_procs_write: kstrtoint of
 * the stripped text, negative EINVAL, no process ESRCH), fs/kernfs (ENODEV once removed),
 * proc_cgroup_show ("0::/path\n" with only v2).
 */
#include <kern/cgroup.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include "fs_internal.h"

static struct inode *cgroupfs_root;

enum cg_file {
	CG_PROCS,
	CG_THREADS,
	CG_CONTROLLERS,
	CG_SUBTREE_CONTROL,
	CG_MAX_DESCENDANTS,
	CG_MAX_DEPTH,
	CG_STAT,
	CG_TYPE,
	CG_EVENTS,
	CG_KILL,
	CG_NR_FILES,
};

static struct cgroup *ino_cgroup(struct inode *ino)
{
	return (struct cgroup *)(uintptr_t)ino->parg;
}

static void cg_evict(struct inode *ino)
{
	struct cgroup *cg = ino_cgroup(ino);

	if (cg && cg->events_file == ino)
		cg->events_file = NULL;
	cgroup_put(cg); /* the directory's or the file's reference */
}

/* kernfs_notify of cgroup.events: IN_MODIFY to the file's watches and its directory's. */
void cgroupfs_events_changed(struct cgroup *cg)
{
	fs_mutex_lock(&vfs_lock);
	struct inode *ino = cg->events_file;

	if (ino) /* its directory is alive while it still names it */
		fsnotify_modify_locked(ino->nlink ? cg->events_dir : NULL, ino, "cgroup.events");
	fs_mutex_unlock(&vfs_lock);
}

#define PIDS_MAX 4096

static int ids_show(struct pbuf *b, struct cgroup *cg, bool threads)
{
	int *ids = kmalloc(PIDS_MAX * sizeof(int));
	int n;

	if (!ids)
		return -ENOMEM;
	n = cgroup_list(cg, threads, ids, PIDS_MAX);
	for (int i = 0; i < n; i++)
		pb_printf(b, "%d\n", ids[i]);
	kfree(ids);
	return 0;
}

static void max_show(struct pbuf *b, int v)
{
	if (v == CGROUP_MAX_UNLIMITED)
		pb_printf(b, "max\n");
	else
		pb_printf(b, "%d\n", v);
}

static int cg_show(struct inode *ino, struct pbuf *b, enum cg_file kind)
{
	struct cgroup *cg = ino_cgroup(ino);
	struct cgroup_stat st;

	cgroup_stat(cg, &st);
	if (st.dead)
		return -ENODEV;
	switch (kind) {
	case CG_PROCS:
	case CG_THREADS:
		return ids_show(b, cg, kind == CG_THREADS);
	case CG_CONTROLLERS:
	case CG_SUBTREE_CONTROL:
		return 0; /* no controllers */
	case CG_MAX_DESCENDANTS:
		max_show(b, st.max_descendants);
		return 0;
	case CG_MAX_DEPTH:
		max_show(b, st.max_depth);
		return 0;
	case CG_STAT:
		pb_printf(b, "nr_descendants %d\nnr_dying_descendants %d\n", st.nr_descendants,
			  st.nr_dying_descendants);
		return 0;
	case CG_TYPE:
		pb_printf(b, "domain\n");
		return 0;
	case CG_EVENTS:
		pb_printf(b, "populated %d\nfrozen 0\n", st.populated ? 1 : 0);
		return 0;
	default: /* cgroup.kill: no seq_show */
		return -EINVAL;
	}
}

/* strstrip: the text without leading and trailing white space, NUL-terminated in place. */
static char *strip(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t'))
		s[--n] = 0;
	while (*s == ' ' || *s == '\n' || *s == '\t')
		s++;
	return s;
}

/* kstrtoint (base 10, an optional sign, an optional trailing newline already stripped) */
static int parse_int(const char *s, int *out)
{
	bool neg = *s == '-';
	int64_t v = 0;

	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 0x80000000ll)
			return -ERANGE;
	}
	if (!neg && v > 0x7fffffff)
		return -ERANGE;
	*out = (int)(neg ? -v : v);
	return 0;
}

/* cgroup_subtree_control_write: tokens "+name" / "-name"; no controller exists here */
static int subtree_control_store(char *s)
{
	while (*s) {
		char *tok = s;

		while (*s && *s != ' ' && *s != '\n' && *s != '\t')
			s++;
		if (*s)
			*s++ = 0;
		if (!*tok)
			continue;
		if (*tok != '+' && *tok != '-')
			return -EINVAL;
		/* Linux: a known controller not available here is ENOENT, an unknown name EINVAL */
		static const char *const known[] = { "cpuset", "cpu", "io", "memory", "hugetlb",
						     "pids", "rdma", "misc" };
		bool found = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			found |= !strcmp(tok + 1, known[i]);
		return found ? -ENOENT : -EINVAL;
	}
	return 0;
}

static long cg_store(struct inode *ino, const char *buf, size_t n, enum cg_file kind)
{
	struct cgroup *cg = ino_cgroup(ino);
	struct cgroup_stat st;
	char *k, *s;
	int v = 0, err = 0;

	cgroup_stat(cg, &st);
	if (st.dead)
		return -ENODEV;
	k = kmalloc(n + 1);
	if (!k)
		return -ENOMEM;
	memcpy(k, buf, n);
	k[n] = 0;
	s = strip(k);
	switch (kind) {
	case CG_PROCS:
	case CG_THREADS:
		err = parse_int(s, &v);
		if (!err && v < 0)
			err = -EINVAL;
		if (!err)
			err = kind == CG_PROCS ? cgroup_attach_proc(cg, v) : cgroup_attach_thread(cg, v);
		break;
	case CG_SUBTREE_CONTROL:
		err = subtree_control_store(s);
		break;
	case CG_MAX_DESCENDANTS:
	case CG_MAX_DEPTH:
		if (!strcmp(s, "max"))
			v = CGROUP_MAX_UNLIMITED;
		else if ((err = parse_int(s, &v)) == 0 && v < 0)
			err = -ERANGE;
		if (!err)
			err = cgroup_set_max(cg, kind == CG_MAX_DEPTH, v);
		break;
	case CG_TYPE:
		/* only "threaded" is a change Linux takes; threaded cgroups are not built */
		err = strcmp(s, "threaded") ? -EINVAL : -EOPNOTSUPP;
		break;
	case CG_KILL:
		/* cgroup_kill_write: a number, and only 1 */
		err = parse_int(s, &v);
		if (!err && v != 1)
			err = -ERANGE;
		if (!err)
			err = cgroup_kill(cg);
		break;
	default:
		err = -EINVAL; /* cgroup_file_write without a write method */
		break;
	}
	kfree(k);
	return err ? err : (long)n;
}

#define CG_OPS(kind)                                                                               \
	static int show_##kind(struct inode *ino, struct pbuf *b)                                  \
	{                                                                                          \
		return cg_show(ino, b, kind);                                                      \
	}                                                                                          \
	static long store_##kind(struct inode *ino, const char *buf, size_t n)                     \
	{                                                                                          \
		return cg_store(ino, buf, n, kind);                                                \
	}                                                                                          \
	static const struct pseudo_ops ops_##kind = { .show = show_##kind,                         \
						      .store = store_##kind,                       \
						      .evict = cg_evict }

CG_OPS(CG_PROCS);
CG_OPS(CG_THREADS);
CG_OPS(CG_CONTROLLERS);
CG_OPS(CG_SUBTREE_CONTROL);
CG_OPS(CG_MAX_DESCENDANTS);
CG_OPS(CG_MAX_DEPTH);
CG_OPS(CG_STAT);
CG_OPS(CG_TYPE);
CG_OPS(CG_EVENTS);
CG_OPS(CG_KILL);

static const struct {
	const char *name;
	uint32_t mode;
	const struct pseudo_ops *ops;
	bool not_on_root;
} cg_files[CG_NR_FILES] = {
	[CG_PROCS] = { "cgroup.procs", 0644, &ops_CG_PROCS, false },
	[CG_THREADS] = { "cgroup.threads", 0644, &ops_CG_THREADS, false },
	[CG_CONTROLLERS] = { "cgroup.controllers", 0444, &ops_CG_CONTROLLERS, false },
	[CG_SUBTREE_CONTROL] = { "cgroup.subtree_control", 0644, &ops_CG_SUBTREE_CONTROL, false },
	[CG_MAX_DESCENDANTS] = { "cgroup.max.descendants", 0644, &ops_CG_MAX_DESCENDANTS, false },
	[CG_MAX_DEPTH] = { "cgroup.max.depth", 0644, &ops_CG_MAX_DEPTH, false },
	[CG_STAT] = { "cgroup.stat", 0444, &ops_CG_STAT, false },
	[CG_TYPE] = { "cgroup.type", 0644, &ops_CG_TYPE, true },
	[CG_EVENTS] = { "cgroup.events", 0444, &ops_CG_EVENTS, true },
	[CG_KILL] = { "cgroup.kill", 0200, &ops_CG_KILL, true },
};

static const struct pseudo_ops cg_dir_ops = { .evict = cg_evict };

/* The files of cg's directory dir, each with a reference on cg: 0 or -ENOMEM. */
static int populate_locked(struct inode *dir, struct cgroup *cg, bool root)
{
	fs_mutex_assert_held(&vfs_lock);
	for (int i = 0; i < CG_NR_FILES; i++) {
		if (root && cg_files[i].not_on_root)
			continue;
		struct inode *f = pseudo_file_locked(dir, cg_files[i].name, cg_files[i].mode,
						     cg_files[i].ops, (long)(uintptr_t)cg);

		if (!f)
			return -ENOMEM;
		cgroup_get(cg);
		if (i == CG_EVENTS) {
			cg->events_file = f;
			cg->events_dir = dir;
		}
	}
	return 0;
}

void cgroupfs_init(void)
{
	struct inode *r = ramfs_inode_new(S_IFDIR | 0555);

	if (!r)
		return;
	fs_mutex_lock(&vfs_lock);
	r->ino = CGROUP_ROOT_ID; /* before anyone sees it */
	r->fs_magic = CGROUP2_SUPER_MAGIC;
	r->parent = r;
	r->nlink = 2;
	r->pseudo = &cg_dir_ops;
	r->parg = (long)(uintptr_t)cgroup_root();
	cgroup_get(cgroup_root());
	populate_locked(r, cgroup_root(), true);
	cgroupfs_root = r; /* its reference is the filesystem's, kept forever */
	fs_mutex_unlock(&vfs_lock);
}

struct inode *cgroupfs_root_locked(void)
{
	fs_mutex_assert_held(&vfs_lock);
	return cgroupfs_root;
}

bool cgroupfs_is_dir(const struct inode *ino)
{
	return ino->pseudo == &cg_dir_ops;
}

int cgroupfs_mkdir_locked(struct inode *dir, const char *name, size_t len, uint32_t mode)
{
	fs_mutex_assert_held(&vfs_lock);
	struct cgroup *cg;
	struct inode *ino;
	char nm[VFS_NAME_MAX + 1];
	int err;

	if (dir->nlink == 0 || !cgroupfs_is_dir(dir))
		return -ENOENT;
	if (len > VFS_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(nm, name, len);
	nm[len] = 0;
	if (memchr(nm, '\n', len))
		return -EINVAL; /* cgroup_mkdir */
	ino = pseudo_mkdir_locked(dir, nm, mode & 07777, &cg_dir_ops, 0);
	if (!ino)
		return -ENOMEM;
	err = cgroup_create(ino_cgroup(dir), name, len, ino->ino, &cg);
	if (err) {
		/* parg is still NULL: its eviction puts nothing */
		pseudo_remove_locked(dir, ramfs_lookup_locked(dir, nm, len));
		return err;
	}
	ino->parg = (long)(uintptr_t)cg; /* still under vfs_lock: no one has seen it */
	err = populate_locked(ino, cg, false);
	if (err) {
		cgroup_remove(cg);
		pseudo_remove_locked(dir, ramfs_lookup_locked(dir, nm, len));
		return err;
	}
	fsnotify_dir_locked(dir, IN_CREATE, name, len, ino, 0);
	return 0;
}

int cgroupfs_rmdir_locked(struct inode *dir, struct ramfs_dirent *de)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = de->inode;
	int err;

	if (!cgroupfs_is_dir(ino))
		return -ENOTDIR;
	err = cgroup_remove(ino_cgroup(ino));
	if (err)
		return err;
	fsnotify_gone_locked(ino);
	fsnotify_dir_locked(dir, IN_DELETE, de->name, de->len, ino, 0);
	pseudo_remove_locked(dir, de);
	return 0;
}

/* ---- the seam for bpf/: an fd of a cgroup directory ---- */

/* The cgroup of a cgroup directory fd, through get: -EBADF for anything else (Linux's
 * css_tryget_online_from_dir and cgroup_get_from_file). */
static int cgroup_of_fd(int fd, int (*get)(struct cgroup *cg), struct cgroup **out)
{
	struct file *f;
	int err = fd_get(fd, &f);

	if (err)
		return err;
	if (!f->inode || !cgroupfs_is_dir(f->inode)) {
		err = -EBADF;
	} else {
		err = get(ino_cgroup(f->inode));
		if (!err)
			*out = ino_cgroup(f->inode);
	}
	file_put(f);
	return err;
}

int ksvc_cgroup_get_fd(int fd, struct cgroup **out)
{
	return cgroup_of_fd(fd, cgroup_get_live, out); /* a removed cgroup: ENOENT */
}

int ksvc_cgroup_perf_get_fd(int fd, struct cgroup **out)
{
	return cgroup_of_fd(fd, cgroup_perf_get, out);
}

/* ---- /proc/PID/cgroup ---- */

int cgroupfs_proc_show(int id, bool tid, struct pbuf *b)
{
	char *path = kmalloc(VFS_PATH_MAX);
	int r;

	if (!path)
		return -ENOMEM;
	r = cgroup_path_of(id, tid, path, VFS_PATH_MAX);
	if (r >= 0)
		pb_printf(b, "0::%s\n", path);
	kfree(path);
	return r < 0 ? r : 0;
}
