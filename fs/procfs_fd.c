/*
 * procfs_fd.c - /proc/PID/fd (and /proc/PID/task/TID/fd): one magic symlink per open
 * descriptor of the process.  readlink gives what Linux's d_path gives for the file
 * (file_describe: a path, "pipe:[ino]", "socket:[ino]", "anon_inode:[perf_event]",
 * "anon_inode:bpf-map"...), and a path walk through the link reaches the file's inode (opening
 * /proc/self/fd/N opens the same file; an anonymous file has none: ENOENT).  The directory is
 * brought up to date with the table at each lookup and listing, as procfs.c does for PIDs.
 *
 * /proc/PID/fdinfo/N: Linux's "pos:\t%lli\nflags:\t0%o\nmnt_id:\t%i\nino:\t%lu\n" (flags as the
 * file was opened, with O_CLOEXEC when the fd is close-on-exec), then what the object adds
 * (ksvc_file_ops.show_fdinfo: bpf programs, maps and links; perf events add nothing, as in
 * 6.1).  ksvc_task_fd_get: an anon object in another thread's table (BPF_TASK_FD_QUERY).
 *
 * What it does not do: the link modes Linux gives by the file's access mode (these stat as
 * 0777), permission checks on another process's table, fdinfo's lock lines.
 *
 * ABI: fs/proc/fd.c (names are the decimal fd, listed in ascending order; fdinfo files 0444).
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include "fs_internal.h"

/* parg of a link: the directory's (a pid, maybe with procfs's task bit) and the fd */
#define FD_SHIFT 40
#define FD_ARG_MASK ((1L << FD_SHIFT) - 1)

struct fd_list {
	int *fds;
	int n;
};

static void list_fn(struct files *fs, void *arg)
{
	struct fd_list *l = arg;

	l->n = files_list_fds(fs, l->fds, FILES_MAX);
}

/* "0", "17": a descriptor number without leading zeros, as Linux names them. */
static bool parse_fd(const char *name, size_t len, int *fd)
{
	int v = 0;

	if (!len || len > 4 || (name[0] == '0' && len > 1))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (name[i] - '0');
	}
	*fd = v;
	return v < FILES_MAX;
}

static bool fd_in(const struct fd_list *l, int fd)
{
	for (int i = 0; i < l->n; i++)
		if (l->fds[i] == fd)
			return true;
	return false;
}

static const struct pseudo_ops fd_link_ops, fdinfo_ops;

static void fd_add_locked(struct inode *dir, int fd)
{
	fs_mutex_assert_held(&vfs_lock);
	char nm[8];
	int len = ksnprintf(nm, sizeof(nm), "%d", fd);
	long arg = dir->parg | ((long)fd << FD_SHIFT);

	if (ramfs_lookup_locked(dir, nm, (size_t)len))
		return;
	if (dir->pseudo == &procfs_fdinfo_dir_ops)
		pseudo_file_locked(dir, nm, 0444, &fdinfo_ops, arg);
	else
		pseudo_symlink_locked(dir, nm, NULL, &fd_link_ops, arg);
}

/* Under vfs_lock: drop the links of closed fds, add the open ones (name: only that one). */
static void fd_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	struct fd_list l = { 0 };
	struct list_node *n, *next;
	int want = -1;

	if (name && !parse_fd(name, len, &want))
		return;
	l.fds = kmalloc(FILES_MAX * sizeof(int));
	if (!l.fds)
		return;
	if (procfs_with_files(dir->parg, list_fn, &l))
		l.n = 0; /* the process is gone: an empty directory */
	for (n = dir->dirents.next; n != &dir->dirents; n = next) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);
		int fd;

		next = n->next;
		if (!parse_fd(de->name, de->len, &fd) || (name && fd != want))
			continue;
		if (!fd_in(&l, fd))
			pseudo_remove_locked(dir, de);
	}
	if (name) {
		if (fd_in(&l, want))
			fd_add_locked(dir, want);
	} else {
		for (int i = 0; i < l.n; i++)
			fd_add_locked(dir, l.fds[i]);
	}
	kfree(l.fds);
}

struct fd_peek {
	int fd;
	struct file *file; /* readlink, fdinfo: with a reference */
	bool cloexec;
	struct inode *inode; /* follow: none (vfs_lock keeps it) */
};

static void file_fn(struct files *fs, void *arg)
{
	struct fd_peek *pk = arg;

	pk->file = files_fd_file_get_cloexec(fs, pk->fd, &pk->cloexec);
}

static void inode_fn(struct files *fs, void *arg)
{
	struct fd_peek *pk = arg;

	pk->inode = files_fd_inode_locked(fs, pk->fd);
}

static long fd_readlink(struct inode *ino, char *buf, size_t size)
{
	struct fd_peek pk = { .fd = (int)(ino->parg >> FD_SHIFT) };
	char *path;
	size_t len;

	if (procfs_with_files(ino->parg & FD_ARG_MASK, file_fn, &pk) || !pk.file)
		return -ENOENT;
	path = kmalloc(VFS_PATH_MAX);
	if (!path) {
		file_put(pk.file);
		return -ENOMEM;
	}
	len = file_describe(pk.file, path, VFS_PATH_MAX);
	file_put(pk.file);
	len = MIN(len, size);
	memcpy(buf, path, len);
	kfree(path);
	return (long)len;
}

static struct inode *fd_follow(struct inode *ino)
{
	struct fd_peek pk = { .fd = (int)(ino->parg >> FD_SHIFT) };

	if (procfs_with_files(ino->parg & FD_ARG_MASK, inode_fn, &pk))
		return NULL;
	return pk.inode;
}

static const struct pseudo_ops fd_link_ops = { .readlink = fd_readlink, .follow = fd_follow };
const struct pseudo_ops procfs_fd_dir_ops = { .refresh = fd_dir_refresh };

/* ---- /proc/PID/fdinfo/N ---- */

/* Mount ids: the root ramfs is mount 1; anonymous files (perf, bpf, eventfd...) live on an
 * internal mount of their own, as Linux's anon_inode mount, which no mount list shows. */
#define ROOT_MNT_ID 1
#define ANON_MNT_ID 15
#define ANON_INO 1 /* what fstat gives for an anonymous file (sys_stat.c) */

static int fdinfo_show(struct inode *ino, struct pbuf *b)
{
	struct fd_peek pk = { .fd = (int)(ino->parg >> FD_SHIFT) };
	unsigned int flags;
	char *extra;
	size_t n;

	if (procfs_with_files(ino->parg & FD_ARG_MASK, file_fn, &pk) || !pk.file)
		return -ENOENT;
	extra = kmalloc(KSVC_PAGE_SIZE);
	if (!extra) {
		file_put(pk.file);
		return -ENOMEM;
	}
	flags = atomic_load(&pk.file->flags) | (pk.cloexec ? O_CLOEXEC : 0);
	pb_printf(b, "pos:\t%lld\nflags:\t0%o\nmnt_id:\t%d\nino:\t%lu\n", (long long)pk.file->pos,
		  flags, pk.file->inode ? ROOT_MNT_ID : ANON_MNT_ID,
		  pk.file->inode ? (unsigned long)pk.file->inode->ino : (unsigned long)ANON_INO);
	n = file_show_fdinfo(pk.file, extra, KSVC_PAGE_SIZE);
	pb_putn(b, extra, n);
	kfree(extra);
	file_put(pk.file);
	return 0;
}

static const struct pseudo_ops fdinfo_ops = { .show = fdinfo_show };
const struct pseudo_ops procfs_fdinfo_dir_ops = { .refresh = fd_dir_refresh };

/* ---- another thread's descriptors, for bpf(2)'s BPF_TASK_FD_QUERY ---- */

static void task_fd_fn(struct files *fs, void *arg)
{
	struct fd_peek *pk = arg;

	pk->file = files_fd_file_get(fs, pk->fd);
}

int ksvc_task_fd_get(int tid, int fd, const struct ksvc_file_ops *ops, void **priv)
{
	struct fd_peek pk = { .fd = fd };
	void *p;

	if (tid <= 0 || procfs_with_files(tid | PROC_TASK_BIT, task_fd_fn, &pk))
		return -ENOENT;
	if (!pk.file)
		return -EBADF;
	p = file_anon_priv(pk.file, ops);
	if (p && ops->get)
		ops->get(p);
	file_put(pk.file); /* [sleep]: may be the last reference if the fd was closed meanwhile */
	if (!p)
		return -EINVAL;
	*priv = p;
	return 0;
}
