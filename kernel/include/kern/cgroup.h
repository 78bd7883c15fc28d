/*
 * cgroup.h - the cgroup v2 hierarchy (kernel/cgroup.c): one tree of cgroups, each process in
 * exactly one of them.  fs/cgroupfs.c shows it as the cgroup2 filesystem; bpf/ reaches it
 * through the seam (ksvc_cgroup_*).
 *
 * Lock legend:
 *   (L)  cgroup_lock, a spinlock taken with interrupts off; after proc_tree_lock.
 *   (a)  atomic.
 *   (c)  constant after creation.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc;
struct task;

#define CGROUP_ROOT_ID 1 /* Linux: the root's kernfs node is ino 1 */
#define CGROUP_MAX_UNLIMITED 0x7fffffff /* cgroup.max.depth / max.descendants "max" */

struct cgroup {
	_Atomic int refs; /* (a) the directory, its files, processes, children, BPF map slots */
	struct cgroup *parent; /* (c) a reference; NULL for the root */
	uint64_t id; /* (c) the inode number of its directory in cgroupfs */
	int level; /* (c) the root is 0 */
	char *name; /* (c) kmalloc'd; "" for the root */
	int nr_procs; /* (L) live processes directly here */
	int nr_populated_children; /* (L) children with a live process at or below them */
	int nr_children; /* (L) live (not removed) children */
	int nr_descendants, nr_dying_descendants; /* (L) cgroup.stat */
	int max_depth, max_descendants; /* (L) CGROUP_MAX_UNLIMITED: "max" */
	bool dead; /* (L) removed by rmdir */
	void *events_file, *events_dir; /* (vfs_lock) cgroupfs's cgroup.events inode (NULL: none)
					* and the directory it is in while it is linked */
	struct cgroup *free_next; /* (L) on the free pool */
};

struct cgroup *cgroup_root(void);

/* References.  cgroup_put may free (into the type-stable pool), taking cgroup_lock. [any] */
void cgroup_get(struct cgroup *cg);
void cgroup_put(struct cgroup *cg);
/* A reference unless cg was removed: 0 or -ENOENT (Linux's css_tryget_online). */
int cgroup_get_live(struct cgroup *cg);
/* A reference for a perf cgroup event (css_tryget_online_from_dir with the perf_event
 * controller): 0, or -ENOENT when cg has no perf_event state of its own or was removed. */
int cgroup_perf_get(struct cgroup *cg);

/* mkdir: a new child named name (len bytes) of parent whose id is id, with one reference
 * (the directory's): 0, -ENOENT (parent removed), -EAGAIN (cgroup.max.depth or
 * max.descendants of an ancestor reached), -ENOMEM. */
int cgroup_create(struct cgroup *parent, const char *name, size_t len, uint64_t id,
		  struct cgroup **out);
/* rmdir: 0, or -EBUSY while a process or a live child is in it; the root is -EBUSY. */
int cgroup_remove(struct cgroup *cg);

/* Move the process of pid (0: the caller's) into dst (cgroup.procs): 0, -ESRCH, -ENODEV
 * (dst removed).  An exiting process stays where it is (0). */
int cgroup_attach_proc(struct cgroup *dst, int pid);
/* cgroup.threads on a domain cgroup: a thread may be "moved" only where its process is
 * already (0); elsewhere -EOPNOTSUPP (no threaded cgroups here); -ESRCH, -ENODEV. */
int cgroup_attach_thread(struct cgroup *dst, int tid);

/* fs/cgroupfs.c: cg's cgroup.events changed (populated): its watchers hear of it. [sleep] */
void cgroupfs_events_changed(struct cgroup *cg);

/* kernel/proc.c hooks.  fork: the child starts in the parent's cgroup (proc_tree_lock held);
 * exit: the last thread is gone, the process no longer populates its cgroup
 * (proc_tree_lock held; *flipped gets a reference when populated states changed); free: the
 * process's memory goes, with its reference. */
void cgroup_fork_locked(struct proc *child, struct proc *parent);
void cgroup_exit_locked(struct proc *p, struct cgroup **flipped, int *levels);
/* After cgroup_exit_locked, with no lock held: tell the cgroup.events watchers of the levels
 * cgroups from flipped up whose populated state changed, and drop flipped's reference
 * (NULL: nothing to tell). [sleep] */
void cgroup_notify_flipped(struct cgroup *flipped, int levels);
void cgroup_proc_free(struct proc *p);

/* The cgroup of t (the root for kernel threads), without a reference: valid while t runs
 * (current) or the caller holds proc_tree_lock.  [any] */
struct cgroup *cgroup_of_task(const struct task *t);
/* cg's ancestor at level (cg itself at its own level), NULL above cg's level. [any] */
struct cgroup *cgroup_ancestor(struct cgroup *cg, int level);
/* cg is anc or below it. [any] */
bool cgroup_is_descendant(struct cgroup *cg, struct cgroup *anc);

/* The path of cg from the root ("/", "/a/b") into buf (NUL-terminated): its length, or
 * -ENAMETOOLONG. */
int cgroup_path(struct cgroup *cg, char *buf, size_t size);
/* The path of the cgroup of the process (thread, when tid) id: -ESRCH when there is none. */
int cgroup_path_of(int id, bool tid, char *buf, size_t size);

/* Up to max pids (threads: tids) of the live processes directly in cg: the count. */
int cgroup_list(struct cgroup *cg, bool threads, int *ids, int max);

/* cgroup.kill: SIGKILL to every live process in cg or below it: 0 or -ENODEV (removed). */
int cgroup_kill(struct cgroup *cg);

struct cgroup_stat {
	bool populated, dead;
	int nr_descendants, nr_dying_descendants, max_depth, max_descendants;
};
void cgroup_stat(struct cgroup *cg, struct cgroup_stat *st);
/* cgroup.max.depth / max.descendants writes: 0 or -ENODEV. */
int cgroup_set_max(struct cgroup *cg, bool depth, int value);
