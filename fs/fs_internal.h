/*
 * fs_internal.h - what the fs/ files share: the inode, the ramfs directory entry, the fs-wide
 * sleeping lock, the path walker and the helpers the syscall files use.  Included only by fs/.
 *
 * Lock legend:
 *   (V)  vfs_lock, the one sleeping lock over the whole tree: directory entries, inode
 *        metadata (size, mode, nlink, times, pages[]), inode frees.  Never held across a user
 *        copy (a page fault may come back into fs/ through file_page_pfn) or a blocking wait.
 *   (a)  atomic.
 *   (c)  constant after creation.
 * Lock order: pipe->mutex -> mm->lock (a user copy faults) -> vfs_lock (the fault reads a
 * file) -> wait queue and proc locks -> files->lock (spinlock, innermost).  Nothing takes
 * mm->lock or a pipe mutex while holding vfs_lock.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/sched.h>
#include <kern/spinlock.h>
#include <fs/vfs.h>
#include <linux/inotify.h>

#define VFS_PATH_MAX 4096
#define VFS_NAME_MAX 255
#define VFS_SYMLOOP_MAX 40
#define VFS_DEV 0x10u /* st_dev of the one ramfs: makedev(0, 16) */
#define FILES_MAX 1024 /* RLIMIT_NOFILE hard ceiling */

/* ---- a small sleeping mutex (no owner tracking, not recursive) ---- */
struct fs_mutex {
	struct spinlock lock;
	bool held; /* (lock) */
	const void *owner; /* the holding task, for fs_mutex_assert_held */
	struct wait_queue wq;
};
/* In a *_locked function: the calling task holds m (checked in the debug build). */
#define fs_mutex_assert_held(m) kdebug_assert((m)->owner == (const void *)ksvc_task_current())
void fs_mutex_init(struct fs_mutex *m);
void fs_mutex_lock(struct fs_mutex *m);
void fs_mutex_unlock(struct fs_mutex *m);

extern struct fs_mutex vfs_lock;

struct pipe;

struct inode {
	_Atomic int refs; /* (a); the last put happens under vfs_lock */
	uint32_t mode; /* (V) S_IFMT | permissions */
	uint32_t nlink; /* (V) directory entries naming it (+1 "." and per subdir for dirs) */
	uint64_t ino; /* (c) */
	uint64_t size; /* (V) bytes; symlinks: strlen(target) */
	uint64_t atime_ns, mtime_ns, ctime_ns; /* (V) */
	uint32_t uid, gid; /* (V) 0 unless chown'd */
	uint32_t rdev; /* (c) character devices: makedev encoding (major << 8 | minor) */
	/* directories */
	struct list_node dirents; /* (V) struct ramfs_dirent, insertion order */
	struct inode *parent; /* (V) no reference; NULL once removed; root: itself */
	/* regular files: page i holds bytes [i*4096, (i+1)*4096), NULL is a hole */
	void **pages; /* (V) */
	uint64_t pages_cap; /* (V) entries in pages[] */
	char *target; /* (c) symlinks: NUL-terminated */
	const struct file_ops *fops; /* (c) character devices and pipes */
	struct pipe *pipe; /* (c) pipes */
	/* pseudo files and directories (pseudo.c, procfs.c, sysfs.c); NULL/0 for ramfs */
	const struct pseudo_ops *pseudo; /* (c) */
	long parg; /* (c) the generator's argument (a pid, a CPU number...) */
	void *pdata; /* (c) kmalloc'd, freed with the inode (static contents) */
	uint32_t fs_magic; /* (c) statfs f_type: 0 for ramfs, PROC_SUPER_MAGIC, SYSFS_MAGIC */
	/* directories: the root of the filesystem mounted here (mount.c), which the path walk
	 * enters instead of this directory; NULL when none */
	struct inode *mounted; /* (V) */
};

struct ramfs_dirent {
	struct list_node node; /* (V) */
	struct inode *inode; /* counted in inode->nlink, no reference */
	uint16_t len;
	char name[]; /* NUL-terminated */
};

/* ---- ramfs.c: inodes and the tree, all (V) unless said ---- */
struct inode *ramfs_inode_new(uint32_t mode); /* refs 1, nlink 0 */
void inode_put_locked(struct inode *ino);
struct ramfs_dirent *ramfs_lookup_locked(struct inode *dir, const char *name, size_t len);
int ramfs_link_locked(struct inode *dir, const char *name, size_t len, struct inode *ino);
void ramfs_unlink_locked(struct inode *dir, struct ramfs_dirent *de);
bool ramfs_dir_empty_locked(struct inode *dir);
int ramfs_truncate_locked(struct inode *ino, uint64_t size);
/* The page holding byte off, allocated when create; a page reference is taken (put with
 * ramfs_page_put), so the caller may copy to or from it after dropping vfs_lock. */
int ramfs_page_get_locked(struct inode *ino, uint64_t off, bool create, void **page);
void ramfs_page_put(void *page);
uint64_t vfs_now_ns(void);
/* Regular file body I/O with user (user true) or kernel buffers; [sleep], takes vfs_lock. */
long ramfs_read(struct inode *ino, void *buf, size_t n, uint64_t off, bool user);
long ramfs_write(struct inode *ino, const void *buf, size_t n, uint64_t *off, bool append,
		 bool user);

/* ---- namei.c: path walk, under vfs_lock ---- */
/* Resolve path from base (absolute paths start at the root); follow a final symlink when
 * follow.  *out gets no reference (valid while vfs_lock is held). */
int vfs_walk_locked(struct inode *base, const char *path, bool follow, struct inode **out);
/* Resolve all but the last component: *dir and the last name (pointer into path, *len
 * bytes; len 0 for "/" ), *trailing when the path ends in "/". */
/* The absolute path of directory dir, NUL-terminated, at buf + *start (built from the end
 * of buf): 0, -ENOENT (removed) or -ENAMETOOLONG.  vfs_lock held. */
int vfs_dir_path_locked(struct inode *dir, char *buf, size_t cap, size_t *start);
int vfs_walk_parent_locked(struct inode *base, const char *path, struct inode **dir,
			   const char **last, size_t *len, bool *trailing);
/* The starting directory for dirfd (AT_FDCWD: cwd) and path, with a reference. */
int vfs_base_get(int dirfd, const char *path, struct inode **out);
/* Copy a user path into a new kmalloc'd PATH_MAX buffer (kfree it): 0 or -errno. */
int vfs_path_from_user(const void *upath, char **out);
int vfs_openat(struct inode *base, const char *path, int flags, uint32_t mode,
	       struct file **out);
/* A user path resolved from dirfd: the inode with a reference.  "" is ENOENT. */
int vfs_lookup_at(int dirfd, const char *kpath, bool follow, struct inode **out);
/* For syscalls that change a directory: copy the user path, resolve its parent and hold
 * vfs_lock until vfs_parent_end.  last/len name the final component (len 0 for "/"). */
struct vfs_parent {
	char *kpath;
	struct inode *base, *dir;
	const char *last;
	size_t len;
	bool trailing;
};
int vfs_parent_begin(int dirfd, const void *upath, struct vfs_parent *pp);
/* The same, for a call that creates the name (mkdir, mknod, symlink, link: EEXIST before
 * the EACCES of /proc and /sys) or rmdir (EBUSY for a mount point there). */
enum vfs_parent_op { VFS_PARENT_ANY, VFS_PARENT_CREATE, VFS_PARENT_RMDIR };
int vfs_parent_begin_op(int dirfd, const void *upath, struct vfs_parent *pp,
			enum vfs_parent_op op);
void vfs_parent_end(struct vfs_parent *pp);
bool vfs_name_is_dots(const char *name, size_t len); /* "", "." or ".." */
void vfs_set_root(struct inode *root);
/* The file operations a (non-anon) inode gets at open. */
const struct file_ops *vfs_inode_fops(struct inode *ino);

/* ---- file.c ---- */
extern const struct file_ops ramfs_file_ops, ramfs_dir_ops;
bool file_readable(const struct file *f);
bool file_writable(const struct file *f);

/* ---- fdtable.c ---- */
/* fd_get_file, but -EBADF as an error pointer value is awkward: this returns 0 or -EBADF. */
int fd_get(int fd, struct file **out);
/* Undo an fd_install whose syscall then failed: close fd if it still holds f. */
void fd_uninstall(int fd, struct file *f);
/* pipe2 and socketpair: a and b (their references) into two new fds, written to the user
 * array ufds: 0, or -errno with both files released. */
int fd_install_pair(struct file *a, struct file *b, bool cloexec, uint64_t ufds);
int fd_set_cloexec(int fd, bool on);
/* The soft RLIMIT_NOFILE of the current process, at most FILES_MAX. */
int fd_limit(void);

/* ---- inotify.c: the event hooks (each returns at once while nothing is watched) ---- */
/* An event (IN_OPEN, IN_ACCESS, IN_MODIFY, IN_CLOSE_*) on f's inode, for its own watches and
 * its directory's.  [sleep] Takes vfs_lock unless the caller holds it. */
void fsnotify_file(struct file *f, uint32_t mask);
/* An event (IN_CREATE, IN_DELETE, IN_MOVED_*) on directory dir about its entry name (len
 * bytes) naming child.  vfs_lock held. */
void fsnotify_dir_locked(struct inode *dir, uint32_t mask, const char *name, size_t len,
			 struct inode *child, uint32_t cookie);
/* ino's last name is about to go: IN_DELETE_SELF, then its watches end (IN_IGNORED).
 * vfs_lock held; ino stays valid only while the caller still links it. */
void fsnotify_gone_locked(struct inode *ino);
uint32_t fsnotify_cookie(void); /* a new IN_MOVED_FROM / IN_MOVED_TO pair's cookie */
/* IN_MODIFY on ino, named name in directory dir (NULL: its watches only) when its contents
 * changed without a write (kernfs_notify: cgroup.events).  vfs_lock held. */
void fsnotify_modify_locked(struct inode *dir, struct inode *ino, const char *name);

/* ---- posix_lock.c ---- */
/* fcntl F_GETLK / F_SETLK / F_SETLKW on f for the lock owner (a descriptor table), with the
 * user's struct flock at uarg: 0 or -errno.  [sleep] */
long posix_lock_fcntl(struct file *f, const void *owner, unsigned int cmd, uint64_t uarg);
/* Drop owner's record locks on ino (a descriptor of it closed); ino may be NULL. [sleep] */
void posix_locks_remove(const void *owner, struct inode *ino);

/* ---- dev.c ---- */
void dev_init(struct inode *devdir);
extern const struct file_ops console_fops;
extern const struct file_ops klog_kmsg_fops; /* kernel/klog.c: /dev/kmsg */
struct file *dev_console_open(void);
/* The driver of a character device number (major << 8 | minor), or NULL (ENXIO at open). */
const struct file_ops *dev_fops_for(uint32_t rdev);
long dev_write_kernel(struct file *f, const void *kbuf, size_t n); /* O_RDWR on /dev/console, NULL when out of memory */

/* ---- sys_rw.c ---- */
struct iovec;
/* Copy in and check a user iovec array (cnt up to UIO_MAXIOV, total within SSIZE_MAX): 0 or
 * -errno; *out is kmalloc'd (kfree it). */
int iov_import(uint64_t uiov, uint64_t cnt, struct iovec **out);
/* one(ctx, base, len, total so far) on each non-empty iovec in turn, while each moves all it
 * was asked: the bytes moved, or one's error when nothing was. */
long iov_transfer(const struct iovec *iov, uint64_t cnt,
		  long (*one)(void *ctx, void *base, size_t len, long total), void *ctx);

/* ---- pipe.c ---- */
unsigned int pipe_poll(struct file *f, struct ksvc_poll *pt);
/* The byte ring itself, for socket.c: one reader, one writer, refs references. */
struct pipe;
struct pipe *pipe_alloc(int refs); /* NULL when out of memory */
void pipe_unref(struct pipe *p);   /* the last reference frees */
/* [sleep] Read up to n bytes to user memory: blocking while empty with a writer (unless
 * nonblock: -EAGAIN); 0 at EOF, which eof forces once the ring is empty; peek leaves the
 * bytes there.  -ERESTARTSYS on a signal. */
long pipe_read_core(struct pipe *p, void *ubuf, size_t n, bool nonblock, bool peek, bool eof);
/* [sleep] Write n bytes (user or kernel memory) as pipe(7) does; no reader: -EPIPE, with
 * SIGPIPE to the calling thread when sigpipe. */
long pipe_write_core(struct pipe *p, const void *ubuf, size_t n, bool nonblock, bool user,
		     bool sigpipe);
/* SIGPIPE to the calling thread; -EPIPE. */
long pipe_epipe(void);
/* One reader (reader) or writer fewer; both sides wake. */
void pipe_end_close(struct pipe *p, bool reader);
bool pipe_ends(struct pipe *p, bool reader); /* any reader (reader) / writer left */
/* The read side's (reader) or write side's readiness, as pipe_poll gives it. */
unsigned int pipe_poll_side(struct pipe *p, struct ksvc_poll *pt, bool reader);
bool file_is_pipe(struct file *f); /* pipe(2)'s or a named FIFO's */
/* Named FIFOs: the inode's file operations, and what vfs_openat runs for a new file of one
 * (no locks held): 0, -ENXIO, -ENOMEM or -ERESTARTSYS; on failure f->priv is NULL. [sleep] */
extern const struct file_ops fifo_fops;
int fifo_open(struct file *f);
long pipe_write_kernel(struct file *f, const void *kbuf, size_t n); /* [sleep] */
#define SIGPIPE_NR 13

/* ---- pseudo.c: generated files (/proc, /sys) ---- */
/* A growing text buffer the show callbacks print into (kmalloc'd; oom set on failure). */
struct pbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};
void pb_printf(struct pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pb_putn(struct pbuf *b, const char *s, size_t n);
void pb_pad(struct pbuf *b, size_t col); /* spaces up to column col of the current line */
/* The possible (or online) CPUs as a Linux cpulist: "0-3", "0,2-3" (no newline). */
void pb_cpu_list(struct pbuf *b, bool online_only);
/* MIDR_EL1 of cpu, read there (smp_call, waits; no locks may be held). */
uint64_t pseudo_cpu_midr(unsigned int cpu);

struct pseudo_ops {
	/* Regular files: produce the contents at the first read (and at each read from offset
	 * 0), without vfs_lock held: 0 or -errno. */
	int (*show)(struct inode *ino, struct pbuf *b);
	/* Write of n bytes (kernel copy, NUL-terminated): n or -errno.  NULL: read-only
	 * (open for writing is EACCES, as kernfs and proc do for root). */
	long (*store)(struct inode *ino, const char *buf, size_t n);
	/* Regular files opened for writing with O_TRUNC: 0 or the open's -errno, without
	 * vfs_lock held.  NULL: O_TRUNC does nothing. */
	int (*truncate)(struct inode *ino);
	/* Directories: bring the entries up to date, under vfs_lock (must not sleep on anything
	 * but kmalloc): before looking up name (len bytes) or, with name NULL, before a listing. */
	void (*refresh)(struct inode *dir, const char *name, size_t len);
	/* Symlinks whose target depends on the reader: readlink fills buf (at most size bytes,
	 * no NUL needed) without vfs_lock held and returns the length or -errno. */
	long (*readlink)(struct inode *ino, char *buf, size_t size);
	/* Symlinks that name an inode, not a path (/proc/PID/exe): the inode, under vfs_lock and
	 * kept alive by its owner while vfs_lock is held (no reference taken); NULL: ENOENT. */
	struct inode *(*follow)(struct inode *ino);
	/* Optional: the inode is being freed (no names, no opens left), under vfs_lock. */
	void (*evict)(struct inode *ino);
	/* Optional: open(2) of the inode, under vfs_lock: 0 or the errno it fails with. */
	int (*open)(struct inode *ino);
};
#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
extern const struct file_ops pseudo_file_ops;
/* ---- procfs.c, procfs_fd.c, fdtable.c: /proc/PID/fd ---- */
struct files;
/* Call fn(files, arg) on the descriptor table of parg's process (a /proc directory's
 * argument) under proc_tree_lock and the process's lock (fn must not sleep): 0, or -ESRCH
 * when the process is gone or has no table. */
int procfs_with_files(long parg, void (*fn)(struct files *fs, void *arg), void *arg);
extern const struct pseudo_ops procfs_fd_dir_ops, procfs_fdinfo_dir_ops;
#define PROC_TASK_BIT (1L << 32) /* parg of task/<tid>/ files: the id is a tid */
/* The open fds of fs, ascending (at most max): the count.  Spinlock only. */
int files_list_fds(struct files *fs, int *fds, int max);
/* fd's file with a reference, or NULL.  Spinlock only. */
struct file *files_fd_file_get(struct files *fs, int fd);
/* The same, with whether fd is close-on-exec. */
struct file *files_fd_file_get_cloexec(struct files *fs, int fd, bool *cloexec);
/* The anon object behind f when it is one of kops, else NULL. */
void *file_anon_priv(struct file *f, const struct ksvc_file_ops *kops);
/* An anon object's own /proc/PID/fdinfo lines (ksvc_file_ops.show_fdinfo) into buf: the length. */
size_t file_show_fdinfo(struct file *f, char *buf, size_t size);
/* fd's file's inode without a reference (vfs_lock held keeps it), or NULL. */
struct inode *files_fd_inode_locked(struct files *fs, int fd);
/* What readlink of /proc/PID/fd/N shows for f, NUL-terminated in buf: the length. [sleep] */
size_t file_describe(struct file *f, char *buf, size_t size);

/* Under vfs_lock.  Children inherit dir's fs_magic.  NULL when out of memory or the name
 * exists.  The new inode has no reference beyond its link. */
struct inode *pseudo_mkdir_locked(struct inode *dir, const char *name, uint32_t mode,
				  const struct pseudo_ops *ops, long arg);
struct inode *pseudo_file_locked(struct inode *dir, const char *name, uint32_t mode,
				 const struct pseudo_ops *ops, long arg);
/* A read-only binary file over len bytes at data, which must outlive it (a sysfs
 * bin_attribute: st_size len). */
struct inode *pseudo_blob_locked(struct inode *dir, const char *name, uint32_t mode,
				 const void *data, size_t len);
/* A read-only file whose contents are fixed now (printf format). */
struct inode *pseudo_text_locked(struct inode *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct inode *pseudo_symlink_locked(struct inode *dir, const char *name, const char *target,
				    const struct pseudo_ops *ops, long arg);
/* Unlink the entry and, for a directory, everything under it. */
void pseudo_remove_locked(struct inode *dir, struct ramfs_dirent *de);
/* The absolute path of a non-directory inode, searched from the root (skipping /proc and
 * /sys): length, or 0 when it has no name. */
size_t vfs_inode_path_locked(struct inode *ino, char *buf, size_t size);
void procfs_init(struct inode *procdir);
/* ---- tracefs.c: tracefs, debugfs, mount(2), umount2(2), /proc/mounts ---- */
#define TRACEFS_MAGIC 0x74726163
/* ---- bpffs.c ---- */
/* A new, empty bpf filesystem's root directory (statfs BPF_FS_MAGIC), refs 1, nlink 2 (set
 * nlink 0 before the last put to free it); NULL: no memory. */
struct inode *bpffs_root_new(void);
/* umount: unlink everything in the filesystem and drop its root's reference (vfs_lock held). */
void bpffs_kill_locked(struct inode *root);
#define DEBUGFS_MAGIC 0x64626720
/* Build tracefs and debugfs and mount them at /sys/kernel/{tracing,debug} (after sysfs_init). */
void tracefs_init(struct inode *sysdir);
extern const struct pseudo_ops proc_mounts_ops;
void sysfs_init(struct inode *sysdir);

/* ---- cgroupfs.c: the cgroup2 filesystem (kernel/cgroup.c's tree) ---- */
void cgroupfs_init(void);
struct inode *cgroupfs_root_locked(void); /* the one root every cgroup2 mount shows */
bool cgroupfs_is_dir(const struct inode *ino); /* a cgroup's directory */
/* mkdir / rmdir in a cgroup directory (vfs_lock held, the name checked absent / present):
 * 0 or -errno. */
int cgroupfs_mkdir_locked(struct inode *dir, const char *name, size_t len, uint32_t mode);
int cgroupfs_rmdir_locked(struct inode *dir, struct ramfs_dirent *de);
/* /proc/PID/cgroup of process (or thread, tid) id: 0 or -ESRCH. */
int cgroupfs_proc_show(int id, bool tid, struct pbuf *b);
#define CGROUP_DEV 0x1au /* st_dev of cgroupfs: an anonymous device of its own, as Linux */

/* ---- poll.c ---- */
/* Ask the poll loop to re-poll after ns even without a wakeup (the console has no IRQ). */
void poll_set_interval(struct ksvc_poll *pt, uint64_t ns);
