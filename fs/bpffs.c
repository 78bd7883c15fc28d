/*
 * bpffs.c - the bpf filesystem: `mount -t bpf bpf /sys/fs/bpf` (each mount a new, empty tree,
 * statfs f_type BPF_FS_MAGIC), whose files are pinned bpf objects.  bpf(2)'s BPF_OBJ_PIN and
 * BPF_OBJ_GET (bpf/obj.c) come here through ksvc_bpffs_pin / ksvc_bpffs_get; mkdir, rmdir,
 * unlink, rename and ls are the ramfs's.  A pin holds what an fd of the object holds; the
 * last of its names and opens gone, the inode's evict drops it (ops->release).
 *
 * Linux 6.1 (kernel/bpf/inode.c): the root is mode 01777; a pin is a regular file of mode
 * 0600 less the umask; pinning into a directory outside a bpf filesystem is EPERM, over an
 * existing name EEXIST; BPF_OBJ_GET of a file that is no pinned object is EACCES.
 *
 * open(2) of a pin is EIO (Linux without map BTF).
 *
 * umount(2) ends the filesystem: its names go, and the objects pinned there with them (as
 * Linux's kill_litter_super), once no fd or cwd holds their inodes.
 *
 * What it does not do: mount options (mode=), bind mounts of one bpffs in several places.
 */
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <linux/fcntl.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include "fs_internal.h"

struct pin {
	const struct ksvc_file_ops *ops;
	void *priv; /* the pin's reference */
};

static void pin_evict(struct inode *ino)
{
	struct pin *p = ino->pdata;

	if (p && p->ops->release)
		p->ops->release(p->priv);
}

/* bpffs_obj_open: a pinned object is no file to read (without map BTF to print values) */
static int pin_open(struct inode *ino)
{
	(void)ino;
	return -EIO;
}

static const struct pseudo_ops pin_ops = { .evict = pin_evict, .open = pin_open };

struct inode *bpffs_root_new(void)
{
	struct inode *root = ramfs_inode_new(S_IFDIR | 01777);

	if (root) {
		root->fs_magic = BPF_FS_MAGIC;
		root->parent = root;
		root->nlink = 2; /* "." and its name in the mount point's directory */
	}
	return root;
}

/* Unlink everything under dir, depth first: pins no longer named nor open drop their objects. */
static void empty_dir_locked(struct inode *dir)
{
	fs_mutex_assert_held(&vfs_lock);
	while (!ramfs_dir_empty_locked(dir)) {
		struct ramfs_dirent *de = list_entry(dir->dirents.next, struct ramfs_dirent, node);

		if (S_ISDIR(de->inode->mode))
			empty_dir_locked(de->inode);
		ramfs_unlink_locked(dir, de);
	}
}

void bpffs_kill_locked(struct inode *root)
{
	fs_mutex_assert_held(&vfs_lock);
	empty_dir_locked(root);
	root->nlink = 0;
	root->parent = NULL;
	inode_put_locked(root); /* bpffs_root_new's reference */
}

/* Linux's dir->i_op == &bpf_dir_iops: a directory of a bpf filesystem. */
static bool in_bpffs_locked(struct inode *dir)
{
	fs_mutex_assert_held(&vfs_lock);
	return dir->fs_magic == BPF_FS_MAGIC;
}

int ksvc_bpffs_pin(const void *upath, const struct ksvc_file_ops *ops, void *priv)
{
	struct proc *pr = current_task()->proc;
	struct vfs_parent pp;
	struct inode *ino;
	struct pin *p;
	int err = vfs_parent_begin(AT_FDCWD, upath, &pp);

	if (err)
		return err;
	if (vfs_name_is_dots(pp.last, pp.len) || ramfs_lookup_locked(pp.dir, pp.last, pp.len))
		err = -EEXIST;
	else if (!in_bpffs_locked(pp.dir))
		err = -EPERM;
	else if (pp.dir->nlink == 0)
		err = -ENOENT;
	if (err)
		goto out;
	err = -ENOMEM;
	p = kmalloc(sizeof(*p));
	ino = p ? ramfs_inode_new(S_IFREG | (0600 & ~(pr ? pr->umask : 022))) : NULL;
	if (!ino) {
		kfree(p);
		goto out;
	}
	p->ops = ops;
	p->priv = priv;
	ino->pdata = p;
	ino->pseudo = &pin_ops;
	ino->fs_magic = BPF_FS_MAGIC;
	err = ramfs_link_locked(pp.dir, pp.last, pp.len, ino);
	if (err) {
		ino->pdata = NULL; /* the caller keeps its reference */
		kfree(p);
	}
	inode_put_locked(ino); /* the link keeps it */
out:
	vfs_parent_end(&pp);
	return err;
}

int ksvc_bpffs_get(const void *upath, const struct ksvc_file_ops **ops, void **priv)
{
	struct inode *ino;
	char *kpath;
	int err = vfs_path_from_user(upath, &kpath);

	if (err)
		return err;
	err = vfs_lookup_at(AT_FDCWD, kpath, true, &ino);
	kfree(kpath);
	if (err)
		return err;
	fs_mutex_lock(&vfs_lock);
	if (ino->pseudo == &pin_ops && ino->pdata) {
		struct pin *p = ino->pdata;

		if (p->ops->get)
			p->ops->get(p->priv);
		*ops = p->ops;
		*priv = p->priv;
	} else {
		err = -EACCES;
	}
	inode_put_locked(ino);
	fs_mutex_unlock(&vfs_lock);
	return err;
}
