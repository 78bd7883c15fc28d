/*
 * vfs.h - files, the in-memory file system and file descriptors, as the rest of the kernel
 * uses them (fs/).  The fs/ module owns the definitions of struct file, struct inode and
 * struct files; this header is its public face.
 *
 * Every call that takes a path takes a kernel string; syscalls copy paths in first.
 * Functions that may sleep say so ([sleep]); none may be called with a spinlock held.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct file;
struct inode;
struct files;
struct wait_queue;

/* ---- boot ---- */
void vfs_init(void); /* the root ramfs with /dev (console, null, zero) */
/* Unpack one or more concatenated newc archives into the root: 0 or -errno. [sleep] */
int initramfs_unpack(const void *buf, size_t len);
/* Write the tree under kpath as a newc cpio stream through emit (for /out delivery). */
int vfs_archive_tree(const char *kpath, void (*emit)(const void *buf, size_t n, void *arg),
		     void *arg);

/* ---- inodes and files, for exec, mmap and the process code ---- */
struct inode *vfs_root(void);
void inode_get(struct inode *ino);
void inode_put(struct inode *ino);
/* Open kpath relative to dirfd (AT_FDCWD: the current process's cwd) with open(2) flags. */
int vfs_open_kernel(int dirfd, const char *kpath, int flags, struct file **out);
void file_get(struct file *f);
void file_put(struct file *f);
/* Read from a regular file at off into kernel memory: bytes read or -errno. [sleep] */
long file_pread_kernel(struct file *f, void *kbuf, size_t n, uint64_t off);
uint64_t file_size(struct file *f);
/* The file's inode number and device (as stat reports them), for MMAP2 records. */
void file_id(struct file *f, uint64_t *ino, uint32_t *dev);
/* The absolute name a regular file was opened by, or NULL (for MMAP2 records). */
const char *file_path(struct file *f);
bool file_is_regular(struct file *f);
bool file_may_exec(struct file *f); /* a regular file with an execute bit */
/* The physical page holding page pgoff of a regular file, for MAP_SHARED mappings (the page
 * stays owned by the file; take a page reference to keep it).  -EFAULT past the end. */
int file_page_pfn(struct file *f, uint64_t pgoff, uint64_t *pfn);

struct vm_area;
/*
 * mmap of a file, after the VMA exists (kernel/include/kern/vm.h): a special file (a device, a perf
 * event) sets vma->ops / priv / flags (VMA_SPECIAL, clearing VMA_BUS_PAST_EOF) and returns 1;
 * a regular file returns 0 (pages come from the file); anything else returns -ENODEV (or
 * -EACCES when the open mode forbids the protection asked for).
 */
int file_mmap_prepare(struct file *f, struct vm_area *vma);
/* Shared anonymous memory of size bytes (Linux's shmem behind MAP_SHARED|MAP_ANONYMOUS and
 * shared /dev/zero): an unlinked ramfs file, so every process that maps it, before a fork or
 * after, sees the same pages.  NULL when out of memory. */
struct file *shm_file_new(uint64_t size);

/* ---- per-process descriptor tables ---- */
struct files *files_new(void); /* fds 0-2 on /dev/console */
struct files *files_dup(struct files *src); /* fork without CLONE_FILES */
void files_get(struct files *fs);
bool files_shared(struct files *fs); /* another process holds it too (clone CLONE_FILES) */
void files_put(struct files *fs); /* closes everything on the last put [sleep] */
void files_close_on_exec(struct files *fs);
/* A new reference to the file behind fd in the current process, or NULL (EBADF). */
struct file *fd_get_file(int fd);

/* ---- the file object (fs/file.c) ---- */

struct vm_area; /* <kern/vm.h>; mmap of files is by file_page_pfn */
struct ksvc_poll; /* a poll table: see ksvc_poll_wait in kern/ksvc.h */
struct wait_queue;
/* [sleep] Sleep on wq until cond(ctx, arg) holds (tested after each waitq_prepare, so no
 * wakeup is lost; no locks held) or a signal is pending: 0, or -ERESTARTSYS (fs/pipe.c). */
int fs_wait_event(struct wait_queue *wq, bool (*cond)(void *ctx, size_t arg), void *ctx,
		  size_t arg);

/*
 * What an open file does.  Every operation is optional (NULL): read/write give EINVAL,
 * llseek ESPIPE, ioctl ENOTTY, poll "always ready for what it was opened for", getdents
 * ENOTDIR.  read and write take user buffers and advance *pos; they return bytes or -errno.
 */
struct file_ops {
	long (*read)(struct file *f, void *ubuf, size_t n, uint64_t *pos);
	long (*write)(struct file *f, const void *ubuf, size_t n, uint64_t *pos);
	int64_t (*llseek)(struct file *f, int64_t off, int whence);
	long (*ioctl)(struct file *f, unsigned int cmd, unsigned long arg);
	/* Readiness (POLLIN...): register on wait queues with ksvc_poll_wait(pt, wq) when pt. */
	unsigned int (*poll)(struct file *f, struct ksvc_poll *pt);
	int (*mmap)(struct file *f, struct vm_area *vma);
	void (*release)(struct file *f); /* the last reference is gone [sleep] */
	long (*getdents)(struct file *f, void *ubuf, size_t n);
	const char *anon_name; /* files without an inode: /proc/PID/fd's "anon_inode:<name>" */
	/* O_ASYNC turned on (fd: the descriptor it was set through) or off (also at the last
	 * close); Linux's f_op->fasync.  0 or -errno (the flag then stays as it was). */
	int (*fasync)(struct file *f, int fd, bool on);
};

/* lseek's arithmetic for byte-offset files; size < 0: SEEK_SET and SEEK_CUR only (file.c) */
int64_t file_llseek_pos(struct file *f, int64_t off, int whence, int64_t size);

/* The F_SETOWN / F_SETOWN_EX / F_SETSIG state of a file (Linux's fown_struct), under fown_lock. */
struct fown {
	int type; /* F_OWNER_TID, F_OWNER_PID or F_OWNER_PGRP */
	int pid; /* 0: no owner */
	int signum; /* F_SETSIG: 0 for SIGIO */
};

/* An O_ASYNC registration handed to an anon object (ksvc_kill_fasync). */
struct ksvc_fasync {
	struct file *file;
	int fd;
};

/* An open file description, shared by dup'd fds and across fork. */
struct file {
	_Atomic long refcount;
	const struct file_ops *ops;
	struct inode *inode; /* a reference; NULL for anon files */
	uint64_t pos; /* racy between threads sharing the description, as Linux without f_pos_lock */
	_Atomic unsigned int flags; /* O_ACCMODE | O_APPEND | O_NONBLOCK | ... as open(2) took */
	void *priv; /* the file type's (pipe end, anon object) */
	char *path; /* regular files: the absolute name it was opened by (kmalloc'd), or NULL */
	struct fown owner;
	struct ksvc_fasync fa; /* fa.file is the file itself */
};

/* A new file (refcount 1) on inode (a new reference is taken) with ops; NULL when no memory. */
struct file *file_alloc(const struct file_ops *ops, struct inode *ino, unsigned int flags,
			void *priv);
/* Install f (the caller's reference moves into the table) at the lowest free fd >= min. */
int fd_install_min(struct file *f, int min, bool cloexec);
static inline int fd_install(struct file *f, bool cloexec)
{
	return fd_install_min(f, 0, cloexec);
}
