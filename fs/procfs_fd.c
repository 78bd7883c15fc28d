/*
 * procfs_fd.c - /proc/PID/fd (and /proc/PID/task/TID/fd): one magic symlink per open
 * descriptor of the process.  readlink gives what Linux's d_path gives for the file
 * (file_describe: a path, "pipe:[ino]", "socket:[ino]", "anon_inode:[perf_event]",
 * "anon_inode:bpf-map"...), and a path walk through the link reaches the file's inode (opening
 * /proc/self/fd/N opens the same file; an anonymous file has none: ENOENT).  The directory is
 * brought up to date with the table at each lookup and listing, as procfs.c does for PIDs.
 *
 * What it does not do: /proc/PID/fdinfo, the link modes Linux gives by the file's access
 * mode (these stat as 0777), permission checks on another process's table.
 *
 * ABI: fs/proc/fd.c (names are the decimal fd, listed in ascending order).
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
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

static const struct pseudo_ops fd_link_ops;

static void fd_add_locked(struct inode *dir, int fd)
{
	fs_mutex_assert_held(&vfs_lock);
	char nm[8];
	int len = ksnprintf(nm, sizeof(nm), "%d", fd);

	if (!ramfs_lookup_locked(dir, nm, (size_t)len))
		pseudo_symlink_locked(dir, nm, NULL, &fd_link_ops,
				      dir->parg | ((long)fd << FD_SHIFT));
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
	struct file *file; /* readlink: with a reference */
	struct inode *inode; /* follow: none (vfs_lock keeps it) */
};

static void file_fn(struct files *fs, void *arg)
{
	struct fd_peek *pk = arg;

	pk->file = files_fd_file_get(fs, pk->fd);
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
