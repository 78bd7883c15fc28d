/*
 * proc.h - user processes and threads (kernel/proc.c, kernel/exec.c).
 *
 * A struct proc is a thread group: it owns the address space (mm), the file table (files), the
 * working directory, the signal actions and the process-wide pending set, and the parent/child
 * links.  Each thread is a struct task with a struct uthread (user registers, TLS, FP/SIMD,
 * signal mask and thread-private pending signals).
 *
 * Lock order: proc_tree_lock -> proc->lock -> task->lock.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/sched.h>
#include <kern/spinlock.h>

struct mm;
struct files;
struct inode;
struct sighand;
struct trapframe;
struct ptrace_link;
struct uprobe_task;

#define PROC_RLIM_NLIMITS 16

struct rlimit64_k {
	uint64_t cur, max;
};

struct proc {
	int tgid;
	struct spinlock lock; /* covers the fields marked (l) */
	struct proc *parent; /* (proc_tree_lock) */
	int ppid; /* parent->tgid, kept with parent for lockless getppid (proc_tree_lock) */
	struct list_node children; /* (proc_tree_lock) */
	struct list_node sibling; /* (proc_tree_lock) */
	struct list_node threads; /* struct uthread.thread_node (l) */
	int nr_threads; /* live threads (l) */
	struct mm *mm;
	/* written under l (proc_files_swap): its own threads read it freely, /proc under l */
	struct files *files;
	struct inode *cwd; /* (l) */
	struct inode *exe; /* the program it runs, a reference (/proc/PID/exe); NULL before exec (l) */
	struct sighand *sighand; /* actions, shared pending set (its own lock) */
	bool exiting; /* exit_group started (l) */
	bool zombie; /* all threads gone; waiting for wait4 (proc_tree_lock) */
	int exit_status; /* wait4 status word (proc_tree_lock) */
	int exit_signal; /* sent to the parent at exit: SIGCHLD */
	struct wait_queue child_wait; /* the parent waits here for children */
	struct rlimit64_k rlim[PROC_RLIM_NLIMITS];
	uint32_t umask;
	int pgid, sid;
	/* accounting: faults and times of exited threads and reaped children */
	uint64_t min_flt, maj_flt, utime_ns, stime_ns;
	uint64_t cmin_flt, cmaj_flt, cutime_ns, cstime_ns;
	struct list_node all_node; /* (proc_tree_lock) */
	/* the memory's users: the parent's link (until reaped), each thread until the reaper
	 * has it off every CPU (a thread may be preempted on its way out after the reap), and
	 * each pidfd open on it */
	_Atomic int refs;
	/* the thread whose tid is tgid (every thread's group_leader).  One that exits before the
	 * others is kept allocated (parked) until the last one exits, as Linux keeps a zombie
	 * leader, so group_leader never dangles; exec by another thread does not move it here.
	 * (l) for parked_leader. */
	struct task *leader;
	struct uthread *parked_leader;
	/* pidfds (kernel/pidfd.c): exited once the last thread is gone (poll's POLLIN), reaped
	 * once wait4 or the autoreap took it (fdinfo's Pid: -1; signals ESRCH); both
	 * proc_tree_lock.  pidfd_wait is woken at exit. */
	bool exited, reaped;
	struct wait_queue pidfd_wait;
	/* kernel/cgroup.c: its cgroup, a reference until the process is freed (written under
	 * cgroup_lock with proc_tree_lock; read without a lock by its own threads); the last
	 * thread gone, it no longer counts there (cgroup_exited, cgroup_lock) */
	struct cgroup *cgroup;
	bool cgroup_exited;
};

/* FP/SIMD registers: v0-v31, fpsr, fpcr (the layout of struct user_fpsimd_state). */
struct fpsimd_regs {
	__uint128_t v[32];
	uint32_t fpsr, fpcr;
	uint32_t reserved[2];
};

struct uthread {
	struct task task; /* first: a user thread's task; task.proc points at its struct proc */
	struct list_node thread_node;
	struct trapframe *tf; /* the user frame at the top of the kernel stack */
	uint64_t tpidr_el0;
	struct fpsimd_regs fp;
	/* fp (not the registers) holds the truth: set while the kernel edits it (signal frames,
	 * sigreturn), so a context switch in between must not save the stale registers over it */
	bool fp_in_memory;
	bool dbg_step; /* stepping over a breakpoint/watchpoint hit (arch/arm64/debug.c) */
	uint64_t clear_child_tid; /* user address: set_tid_address / CLONE_CHILD_CLEARTID */
	uint64_t set_child_tid; /* fork with CLONE_CHILD_SETTID: written on first return */
	struct vfork_done *vfork; /* CLONE_VFORK: the parent waits until we exec or exit */
	uint64_t robust_list;
	struct ptrace_link *ptrace; /* traced: kernel/ptrace.c (its ptrace_lock) */
	/* signals (kernel/signal.c) */
	uint64_t sigmask; /* blocked, bit (sig - 1) */
	uint64_t saved_sigmask; /* ppoll/pselect6/rt_sigsuspend restore it after delivery */
	bool restore_sigmask;
	struct list_node sigpending; /* struct ksiginfo queue, thread-directed (task->lock) */
	uint64_t sigpending_set; /* (task->lock) */
	uint64_t altstack_sp, altstack_size;
	int altstack_flags;
	/* fault counts for rusage and the page-fault software events */
	uint64_t min_flt, maj_flt;
	uint64_t utime_ns, stime_ns;
	struct uprobe_task *uprobe; /* pending return probes (kernel/uprobes.c), or NULL */
};

extern struct spinlock proc_tree_lock;

static inline struct uthread *task_uthread(struct task *t)
{
	return t->proc ? (struct uthread *)t : NULL;
}

static inline struct uthread *current_uthread(void)
{
	return task_uthread(current_task());
}

static inline struct proc *current_proc(void)
{
	return current_task()->proc;
}

static inline int proc_tgid(const struct task *t)
{
	return t->proc ? ((const struct proc *)t->proc)->tgid : t->tid;
}

/* Find a live thread by tid, or a process by tgid (NULL if none); no reference is taken:
 * call with proc_tree_lock held. */
struct uthread *proc_find_thread_locked(int tid);
struct proc *proc_find_locked(int tgid);
/* The tids of p's threads that have not exited, at most max: the count (proc_tree_lock held). */
int proc_live_tids_locked(struct proc *p, int *ids, int max);
/* Some process (the oldest still listed, zombies too), or NULL: proc_tree_lock held. */
struct proc *proc_first_locked(void);
/* The process listed after p, or NULL: proc_tree_lock held. */
struct proc *proc_next_locked(struct proc *p);

/* Replace p's descriptor table (under p->lock, for /proc/PID/fd): the old one, whose
 * reference passes to the caller. */
struct files *proc_files_swap(struct proc *p, struct files *files);

/* kernel/sys_time.c: CPU time as user and system time, Linux's cputime_adjust: the run time
 * (exact) split in the ratio of the ticks that found the thread at EL0 and in the kernel
 * (all user time before the first tick).  proc_: the dead threads' (p->utime_ns,
 * stime_ns) plus each live thread's; takes p->lock. */
void task_cputime_split(const struct task *t, uint64_t *utime, uint64_t *stime);
void proc_cputime_split(struct proc *p, uint64_t *utime, uint64_t *stime);

/* A reference on p's memory (not its resources): proc_get, proc_put (which may free it). */
void proc_get(struct proc *p);
void proc_put(struct proc *p);

/* kernel/pidfd.c: the process pidfd fd refers to, with a reference (proc_put it), and whether
 * the file is O_NONBLOCK: 0, or -EBADF (not open, or not a pidfd). */
int pidfd_proc_get(int fd, struct proc **p, bool *nonblock);
/* clone's CLONE_PIDFD: an fd taken for a pidfd before the child exists (0, -EMFILE, -ENOMEM;
 * ksvc_fd_cancel gives it back), made the pidfd of p, whose reference the file takes. */
struct ksvc_fd_resv;
int pidfd_reserve(struct ksvc_fd_resv *r);
void pidfd_commit(struct ksvc_fd_resv *r, struct proc *p);
/* proc_finish: the group is gone, wake its pidfds' pollers (proc_tree_lock held). */
void pidfd_notify_exit_locked(struct proc *p);

/* Terminate the calling thread / the whole group with a wait4 status word. */
__attribute__((noreturn)) void proc_exit_thread(int status);
__attribute__((noreturn)) void proc_exit_group(int status);

/* kernel/exec.c */
int exec_kernel_path(const char *path, char *const argv[], char *const envp[]);

struct vfork_done {
	struct wait_queue wq;
	bool done;
};
/* The vfork parent may go on (exec or exit of the child). */
void proc_vfork_release(struct uthread *ut);

/* arch/arm64/fpsimd.S */
void fpsimd_save(struct fpsimd_regs *r);
void fpsimd_restore(const struct fpsimd_regs *r);
void fpsimd_load_zero(void);

/* kernel/proc.c */
struct uthread *proc_create_init(void);
void proc_start_reaper(void);
bool proc_exiting(void);
/* Switch the user-visible CPU state (TTBR0, TPIDR_EL0, FP/SIMD) from prev to next. */
void proc_switch(struct task *prev, struct task *next);
/* kernel/userinit.c: init (pid 1) exited with this wait status: power off. */
void kernel_init_exited(int wait_status);
