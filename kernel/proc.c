/*
 * proc.c - user processes and threads: clone (fork and threads), exit, exit_group,
 * reparenting to init, and freeing dead threads (wait4 and waitid: sys_wait.c).
 *
 * Linux semantics: the process id is the thread-group leader's tid; a process becomes a zombie
 * when its last thread exits, its parent gets SIGCHLD and reaps it with wait4; orphans go to
 * init (pid 1).  CLONE_CHILD_CLEARTID writes 0 to the tid word and wakes its futex at thread
 * exit.  A dead thread's kernel stack is freed by the reaper thread once no CPU is on it.
 * Not implemented: CLONE_VFORK's suspension of the parent (the child runs, the parent too,
 * which is legal for programs that only exec or _exit), namespaces.  ptrace's hooks
 * (kernel/ptrace.c) report clone events, exits and tracee stops to wait4.
 * Each thread's real_parent / parent / group_leader (sched.h) are kept here: set at clone,
 * retargeted off a thread before it can be freed (retarget_locked), a leader that exits first
 * parked until its group's last thread exits.  Pidfds are kernel/pidfd.c.
 */
#include <kern/cgroup.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/resource.h>
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <arch/debug.h>
#include <arch/memlayout.h>
#include <arch/trapframe.h>
#include <bpf/task.h>
#include <fs/vfs.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <linux/fcntl.h>
#include <kern/futex.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/uprobes.h>
#include <kern/ptrace.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/trace.h>
#include <kern/vm.h>
#include <perf/perf.h>

struct spinlock proc_tree_lock = SPINLOCK_INIT;
static struct list_node all_procs = LIST_INIT(all_procs);
static struct list_node all_threads = LIST_INIT(all_threads); /* uthread.task.all_node */
struct proc *init_proc;

extern void user_thread_start(void);

static inline uint64_t read_tpidr_el0(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(v));
	return v;
}

static inline void write_tpidr_el0(uint64_t v)
{
	__asm__ volatile("msr tpidr_el0, %0" ::"r"(v));
}

/* ---- lookup ---- */

struct uthread *proc_find_thread_locked(int tid)
{
	spin_assert_held(&proc_tree_lock);
	struct list_node *n;

	list_for_each(n, &all_threads) {
		struct uthread *t = (struct uthread *)list_entry(n, struct task, all_node);

		if (t->task.tid == tid && t->task.state != TASK_ZOMBIE)
			return t;
	}
	return NULL;
}

struct proc *proc_first_locked(void)
{
	spin_assert_held(&proc_tree_lock);
	return list_empty(&all_procs) ? NULL : list_entry(all_procs.next, struct proc, all_node);
}

struct proc *proc_next_locked(struct proc *p)
{
	spin_assert_held(&proc_tree_lock);
	return p->all_node.next == &all_procs ? NULL
					      : list_entry(p->all_node.next, struct proc, all_node);
}

int proc_live_tids_locked(struct proc *p, int *ids, int max)
{
	spin_assert_held(&proc_tree_lock);
	struct list_node *n;
	int cnt = 0;

	spin_lock(&p->lock);
	list_for_each(n, &p->threads) {
		struct uthread *t = list_entry(n, struct uthread, thread_node);

		if (cnt < max && t->task.state != TASK_ZOMBIE)
			ids[cnt++] = t->task.tid;
	}
	spin_unlock(&p->lock);
	return cnt;
}

struct proc *proc_find_locked(int tgid)
{
	spin_assert_held(&proc_tree_lock);
	struct list_node *n;

	list_for_each(n, &all_procs) {
		struct proc *p = list_entry(n, struct proc, all_node);

		if (p->tgid == tgid && !p->zombie)
			return p;
	}
	return NULL;
}

/* ---- creation ---- */

static struct uthread *uthread_alloc(const char *comm)
{
	struct uthread *ut = kmalloc(sizeof(*ut));

	if (!ut)
		return NULL;
	struct task *t = &ut->task;

	t->kstack = alloc_pages(2);
	if (!t->kstack) {
		kfree(ut);
		return NULL;
	}
	spin_init(&t->lock);
	t->tid = task_next_tid();
	memcpy(t->comm, comm, TASK_COMM_LEN);
	t->comm[TASK_COMM_LEN - 1] = 0;
	t->affinity = ~0ull;
	t->state = TASK_RUNNABLE;
	list_init(&t->rq_node);
	list_init(&t->all_node);
	list_init(&ut->thread_node);
	list_init(&ut->sigpending);
	ut->tf = (struct trapframe *)((char *)t->kstack + KSTACK_SIZE - sizeof(struct trapframe));
	sched_track_task(t);
	t->ctx.sp = (uint64_t)ut->tf;
	t->ctx.lr = (uint64_t)user_thread_start;
	return ut;
}

static void uthread_free(struct uthread *ut)
{
	uprobe_task_free(ut);
	sched_untrack_task(&ut->task);
	bpf_task_free((struct ksvc_task *)&ut->task); /* after: nobody finds it by tid now */
	free_pages(ut->task.kstack, 2);
	kfree(ut);
}

static struct proc *proc_alloc(void)
{
	struct proc *p = kmalloc(sizeof(*p));

	if (!p)
		return NULL;
	spin_init(&p->lock);
	list_init(&p->children);
	list_init(&p->sibling);
	list_init(&p->threads);
	list_init(&p->all_node);
	waitq_init(&p->child_wait);
	waitq_init(&p->pidfd_wait);
	p->exit_signal = SIGCHLD;
	p->umask = 022;
	for (int i = 0; i < PROC_RLIM_NLIMITS; i++)
		p->rlim[i].cur = p->rlim[i].max = RLIM_INFINITY;
	p->rlim[RLIMIT_STACK].cur = 8ull << 20;
	p->rlim[RLIMIT_NOFILE].cur = 1024;
	p->rlim[RLIMIT_NOFILE].max = 4096;
	p->rlim[RLIMIT_CORE].cur = 0;
	atomic_store(&p->refs, 1); /* the parent's link */
	return p;
}

void proc_get(struct proc *p)
{
	atomic_fetch_add(&p->refs, 1);
}

/* Drop a reference; the last frees the memory (and the signal handlers with it). */
void proc_put(struct proc *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	sighand_put(p->sighand);
	cgroup_proc_free(p);
	kfree(p);
}

static void proc_link_thread(struct proc *p, struct uthread *ut)
{
	ut->task.proc = p;
	atomic_fetch_add(&p->refs, 1); /* dropped by the reaper */
	unsigned long f = spin_lock_irqsave(&p->lock);

	list_add_tail(&p->threads, &ut->thread_node);
	p->nr_threads++;
	spin_unlock_irqrestore(&p->lock, f);
	f = spin_lock_irqsave(&proc_tree_lock);
	list_add_tail(&all_threads, &ut->task.all_node);
	spin_unlock_irqrestore(&proc_tree_lock, f);
}

/* The first user process: an empty mm, console fds, root cwd; exec fills it. */
struct uthread *proc_create_init(void)
{
	struct proc *p = proc_alloc();
	struct uthread *ut = uthread_alloc("init");

	if (!p || !ut)
		kpanic("no memory for init");
	p->tgid = ut->task.tid;
	p->mm = mm_new();
	p->files = files_new();
	p->sighand = sighand_alloc();
	p->cwd = vfs_root();
	if (!p->mm || !p->files || !p->sighand)
		kpanic("no memory for init");
	inode_get(p->cwd);
	p->pgid = p->sid = p->tgid;
	uthread_signal_init(ut, NULL);
	proc_link_thread(p, ut);
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	ut->task.tgid = p->tgid;
	ut->task.group_leader = p->leader = &ut->task;
	ut->task.real_parent = ut->task.parent = cpus[0].idle; /* Linux: swapper/0 */
	list_add_tail(&all_procs, &p->all_node);
	cgroup_fork_locked(p, p); /* the root */
	spin_unlock_irqrestore(&proc_tree_lock, f);
	init_proc = p;
	return ut;
}

#define CLONE_SUPPORTED                                                                            \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |         \
	 CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID |           \
	 CLONE_VFORK | CLONE_PARENT | CLONE_DETACHED | CLONE_IO | CLONE_PTRACE | CLONE_UNTRACED |  \
	 CLONE_PIDFD)

/* The clone; *pidfd_proc (when asked for) gets the new process with a reference, before it
 * can run (and be reaped). */
static long clone_inner(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t tls, uint64_t ctid,
			struct proc **pidfd_proc)
{
	struct uthread *parent = current_uthread();
	struct proc *pp = parent->task.proc;
	int exit_signal = (int)(flags & 0xff);

	flags &= ~0xffull;
	if (flags & ~(uint64_t)CLONE_SUPPORTED)
		return -EINVAL;
	if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
		return -EINVAL;
	if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
		return -EINVAL;
	if (exit_signal >= KSIG_MAX + 1)
		return -EINVAL;
	struct uthread *ut = uthread_alloc(parent->task.comm);

	if (!ut)
		return -ENOMEM;
	struct proc *p = pp;

	if (!(flags & CLONE_THREAD)) {
		p = proc_alloc();
		if (!p) {
			uthread_free(ut);
			return -ENOMEM;
		}
		p->tgid = ut->task.tid;
		p->exit_signal = exit_signal;
		p->umask = pp->umask;
		p->pgid = pp->pgid;
		p->sid = pp->sid;
		memcpy(p->rlim, pp->rlim, sizeof(p->rlim));
		if (flags & CLONE_VM) {
			mm_get(pp->mm);
			p->mm = pp->mm;
		} else {
			p->mm = mm_dup(pp->mm);
		}
		if (flags & CLONE_FILES) {
			files_get(pp->files);
			p->files = pp->files;
		} else {
			p->files = files_dup(pp->files);
		}
		if (flags & CLONE_SIGHAND) {
			sighand_get(pp->sighand);
			p->sighand = pp->sighand;
		} else {
			p->sighand = sighand_dup(pp->sighand);
		}
		p->cwd = pp->cwd;
		inode_get(p->cwd);
		p->exe = pp->exe;
		if (p->exe)
			inode_get(p->exe);
		if (!p->mm || !p->files || !p->sighand) {
			/* unwind what was made */
			if (p->mm)
				mm_put(p->mm);
			if (p->files)
				files_put(p->files);
			if (p->sighand)
				sighand_put(p->sighand);
			inode_put(p->cwd);
			inode_put(p->exe);
			kfree(p);
			uthread_free(ut);
			return -ENOMEM;
		}
	}
	/* Registers: the parent's, with x0 = 0 in the child. */
	*ut->tf = *parent->tf;
	ut->tf->x[0] = 0;
	if (newsp)
		ut->tf->sp = newsp;
	fpsimd_save(&parent->fp);
	ut->fp = parent->fp;
	/* The parent runs: its TLS register is live, its saved copy stale. */
	ut->tpidr_el0 = (flags & CLONE_SETTLS) ? tls : read_tpidr_el0();
	ut->task.affinity = parent->task.affinity;
	ut->task.proc = p; /* uthread_signal_init tells a thread from a fork by it */
	uthread_signal_init(ut, parent);
	if (flags & CLONE_CHILD_CLEARTID)
		ut->clear_child_tid = ctid;
	int tid = ut->task.tid;

	if (flags & CLONE_PARENT_SETTID)
		ksvc_copy_to_user((void *)ptid, &tid, sizeof(tid));
	proc_link_thread(p, ut);
	/* The links to other tasks, under the tree lock that exits retarget them under (see
	 * retarget_locked): a thread already on p's list but not yet linked is skipped there. */
	unsigned long tf = spin_lock_irqsave(&proc_tree_lock);

	ut->task.tgid = p->tgid;
	if (p != pp) {
		bool up = (flags & CLONE_PARENT) && pp->parent;
		struct proc *par = up ? pp->parent : pp;

		p->parent = par;
		WRITE_ONCE(p->ppid, par->tgid);
		list_add_tail(&par->children, &p->sibling);
		list_add_tail(&all_procs, &p->all_node);
		cgroup_fork_locked(p, pp);
		p->leader = ut->task.group_leader = &ut->task;
		/* Linux's copy_process: the creating thread, or its parent for CLONE_PARENT */
		ut->task.real_parent = up ? parent->task.real_parent : &parent->task;
	} else {
		ut->task.group_leader = pp->leader;
		ut->task.real_parent = parent->task.real_parent; /* threads share the parent */
	}
	ut->task.parent = ut->task.real_parent;
	spin_unlock_irqrestore(&proc_tree_lock, tf);
	if (flags & CLONE_CHILD_SETTID) {
		/* The child's address space: for a thread it is ours; for a fork, write it
		 * after the child runs would be Linux; writing into the COW copy is the same. */
		if (flags & CLONE_VM)
			ksvc_copy_to_user((void *)ctid, &tid, sizeof(tid));
		else
			ut->set_child_tid = ctid;
	}
	trace_sched_process_fork(&parent->task, &ut->task);
	perf_task_fork((struct ksvc_task *)&parent->task, (struct ksvc_task *)&ut->task);
	int pt_event = READ_ONCE(parent->ptrace) ? ptrace_clone(parent, ut, flags, exit_signal) : 0;
	struct vfork_done vd;

	if (flags & CLONE_VFORK) {
		waitq_init(&vd.wq);
		vd.done = false;
		ut->vfork = &vd;
	}
	if (pidfd_proc) {
		proc_get(p);
		*pidfd_proc = p;
	}
	task_make_runnable(&ut->task, -1);
	if (pt_event)
		ptrace_clone_event(pt_event, tid);
	if (flags & CLONE_VFORK) {
		wait_event(&vd.wq, READ_ONCE(vd.done));
		unsigned long f = spin_lock_irqsave(&vd.wq.lock); /* the child is out of vd */

		spin_unlock_irqrestore(&vd.wq.lock, f);
		if (READ_ONCE(parent->ptrace))
			ptrace_vfork_done(tid);
	}
	return tid;
}

/*
 * clone(2): CLONE_PIDFD puts a pidfd for the child (close-on-exec) at parent_tid, as Linux 6.1's
 * legacy clone: not with CLONE_PARENT_SETTID (the same word), CLONE_THREAD or CLONE_DETACHED
 * (EINVAL); the fd is taken before the child exists, so running out of fds fails the clone.
 */
static long do_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
	struct ksvc_fd_resv r;
	struct proc *p = NULL;
	long tid;
	int err;

	if (!(flags & CLONE_PIDFD))
		return clone_inner(flags, newsp, ptid, tls, ctid, NULL);
	if (flags & (CLONE_PARENT_SETTID | CLONE_THREAD | CLONE_DETACHED))
		return -EINVAL;
	err = pidfd_reserve(&r);
	if (err)
		return err;
	if (ksvc_copy_to_user((void *)ptid, &r.fd, sizeof(r.fd))) {
		ksvc_fd_cancel(&r);
		return -EFAULT;
	}
	tid = clone_inner(flags, newsp, ptid, tls, ctid, &p);
	if (tid < 0) {
		ksvc_fd_cancel(&r);
		return tid;
	}
	pidfd_commit(&r, p);
	return tid;
}

/*
 * unshare(2), as Linux's ksys_unshare for what exists here.  Threads share one process's
 * cwd, umask and fd table, so a multi-threaded caller cannot take private ones: CLONE_FS and
 * CLONE_FILES are EINVAL there (not built).  Namespaces are not built: EINVAL, what Linux
 * answers without CONFIG_*_NS.  Single-threaded, CLONE_FS has nothing to unshare (a fork copies
 * cwd and umask) and CLONE_FILES copies a table shared through clone(CLONE_FILES).
 */
#define CLONE_NAMESPACES                                                                           \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID |   \
	 CLONE_NEWCGROUP | CLONE_NEWTIME)

static long sys_unshare(uint64_t flags)
{
	struct proc *p = current_proc();
	int threads;

	if (flags & ~(uint64_t)(CLONE_THREAD | CLONE_FS | CLONE_SIGHAND | CLONE_VM | CLONE_FILES |
				 CLONE_SYSVSEM | CLONE_NAMESPACES))
		return -EINVAL;
	if (flags & CLONE_VM)
		flags |= CLONE_SIGHAND;
	if (flags & CLONE_SIGHAND)
		flags |= CLONE_THREAD;
	unsigned long f = spin_lock_irqsave(&p->lock);

	threads = p->nr_threads;
	spin_unlock_irqrestore(&p->lock, f);
	/* check_unshare_flags: "pretend it works if there is nothing to unshare" */
	if ((flags & CLONE_THREAD) && threads > 1)
		return -EINVAL;
	if ((flags & (CLONE_SIGHAND | CLONE_VM)) && READ_ONCE(p->sighand->refs) > 1)
		return -EINVAL;
	if ((flags & CLONE_VM) && atomic_load(&p->mm->refs) > 1)
		return -EINVAL;
	if (flags & CLONE_NAMESPACES)
		return -EINVAL;
	if ((flags & (CLONE_FS | CLONE_FILES)) && threads > 1)
		return -EINVAL;
	if ((flags & CLONE_FILES) && files_shared(p->files)) {
		struct files *copy = files_dup(p->files);

		if (!copy)
			return -ENOMEM;
		files_put(proc_files_swap(p, copy));
	}
	return 0;
}
SYSCALL(__NR_unshare, sys_unshare);

struct files *proc_files_swap(struct proc *p, struct files *files)
{
	unsigned long fl = spin_lock_irqsave(&p->lock);
	struct files *old = p->files;

	p->files = files;
	spin_unlock_irqrestore(&p->lock, fl);
	return old;
}

static long sys_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
	return do_clone(flags, newsp, ptid, tls, ctid);
}
SYSCALL(__NR_clone, sys_clone);

void proc_vfork_release(struct uthread *ut)
{
	struct vfork_done *vd = ut->vfork;

	if (!vd)
		return;
	ut->vfork = NULL;
	/* vd lives on the parent's stack: flag and wakeup under its lock, and the parent takes
	 * that lock once more before returning, so nothing here touches vd after it is gone. */
	unsigned long f = spin_lock_irqsave(&vd->wq.lock);
	struct list_node *n;

	WRITE_ONCE(vd->done, true);
	list_for_each(n, &vd->wq.waiters)
		wake_up_task(list_entry(n, struct waiter, node)->task);
	spin_unlock_irqrestore(&vd->wq.lock, f);
}

/* ---- exit ---- */

static struct list_node dead_threads = LIST_INIT(dead_threads);
static struct spinlock dead_lock = SPINLOCK_INIT;
static struct wait_queue reaper_wq = { SPINLOCK_INIT, LIST_INIT(reaper_wq.waiters) };

static void reaper(void *arg)
{
	(void)arg;
	for (;;) {
		wait_event(&reaper_wq, !list_empty(&dead_threads));
		unsigned long f = spin_lock_irqsave(&dead_lock);
		struct list_node *n = list_pop_head(&dead_threads);

		spin_unlock_irqrestore(&dead_lock, f);
		if (!n)
			continue;
		struct uthread *ut = (struct uthread *)list_entry(n, struct task, all_node);
		struct task *t = &ut->task;

		/* The thread put itself on the list before its last schedule(), and may even be
		 * preempted (and queued on a run queue) in between: it is gone only once it is a
		 * zombie that schedule() took off the run queues and no CPU runs any more. */
		for (;;) {
			unsigned long f2 = spin_lock_irqsave(&t->lock);
			bool off = t->state == TASK_ZOMBIE && !t->on_rq && !t->queued;

			spin_unlock_irqrestore(&t->lock, f2);
			if (off)
				break;
			sched_yield();
		}
		while (atomic_load_explicit(&t->on_cpu, memory_order_acquire))
			arch_cpu_relax();
		struct proc *p = t->proc;

		uthread_free(ut);
		if (p)
			proc_put(p);
	}
}

void proc_start_reaper(void)
{
	if (!kthread_create("reaper", reaper, NULL, -1))
		kpanic("no reaper");
}

/*
 * Point c's threads (and its parked leader) whose real_parent is from, or all of them when from
 * is NULL, at to: proc_tree_lock held.  Every thread's real_parent is a thread of c->parent (or
 * init's leader); a thread that exits moves its children's links off itself before it can be
 * freed, so none of them ever names freed memory.
 */
static void retarget_locked(struct proc *c, struct task *from, struct task *to)
{
	spin_assert_held(&proc_tree_lock);
	unsigned long f = spin_lock_irqsave(&c->lock);
	struct list_node *n;

	list_for_each(n, &c->threads) {
		struct task *t = &list_entry(n, struct uthread, thread_node)->task;

		if (t->real_parent && (!from || t->real_parent == from))
			t->real_parent = t->parent = to;
	}
	if (c->parked_leader) {
		struct task *t = &c->parked_leader->task;

		if (!from || t->real_parent == from)
			t->real_parent = t->parent = to;
	}
	spin_unlock_irqrestore(&c->lock, f);
}

/* Give p's children to init; proc_tree_lock held. */
static void reparent_children_locked(struct proc *p)
{
	spin_assert_held(&proc_tree_lock);
	struct list_node *n, *tmp;

	list_for_each_safe(n, tmp, &p->children) {
		struct proc *c = list_entry(n, struct proc, sibling);

		list_del(&c->sibling);
		c->parent = init_proc;
		WRITE_ONCE(c->ppid, init_proc->tgid);
		retarget_locked(c, NULL, init_proc->leader);
		list_add_tail(&init_proc->children, &c->sibling);
		if (c->zombie)
			waitq_wake_all(&init_proc->child_wait);
	}
}

/* The last thread of p is gone: release the process's resources, become a zombie. */
static void proc_finish(struct proc *p)
{
	struct mm *mm = p->mm;
	struct cgroup *flipped;
	int levels;

	ptrace_tracer_exit(p);
	mm_activate(NULL);
	unsigned long mfl = spin_lock_irqsave(&p->lock); /* uprobes' walk of every mm reads it */

	p->mm = NULL;
	spin_unlock_irqrestore(&p->lock, mfl);
	mm_put(mm);
	files_put(proc_files_swap(p, NULL));
	inode_put(p->cwd);
	p->cwd = NULL;
	unsigned long fl = spin_lock_irqsave(&p->lock);
	struct inode *exe = p->exe;

	p->exe = NULL;
	spin_unlock_irqrestore(&p->lock, fl);
	inode_put(exe);
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);

	cgroup_exit_locked(p, &flipped, &levels);
	if (p == init_proc) {
		spin_unlock_irqrestore(&proc_tree_lock, f);
		kernel_init_exited(p->exit_status);
		return;
	}
	reparent_children_locked(p);
	/* As Linux's exit_notify: zombie and the parent's notification under the tree lock,
	 * so the parent cannot reap (and free) p before the notification is made. */
	bool autoreap = signal_parent_autoreaps(p);

	signal_notify_parent_exit(p);
	p->exited = true;
	pidfd_notify_exit_locked(p);
	if (autoreap) {
		/* SIGCHLD ignored (or SA_NOCLDWAIT): no zombie, nothing for wait4 */
		list_del(&p->sibling);
		list_del(&p->all_node);
		p->reaped = true;
		spin_unlock_irqrestore(&proc_tree_lock, f);
		cgroup_notify_flipped(flipped, levels);
		signal_proc_release(p);
		proc_put(p);
		return;
	}
	p->zombie = true;
	spin_unlock_irqrestore(&proc_tree_lock, f);
	cgroup_notify_flipped(flipped, levels);
}

void proc_exit_thread(int status)
{
	struct uthread *ut = current_uthread();
	struct proc *p = ut->task.proc;
	struct uthread *parked = NULL;
	bool last, park = false;

	futex_exit_robust_list(ut); /* owner-died wakeups for the robust mutexes it held */
	if (ut->clear_child_tid) {
		int zero = 0;

		if (ksvc_copy_to_user((void *)ut->clear_child_tid, &zero, sizeof(zero)) == 0)
			futex_wake_address(ut->clear_child_tid, 1);
	}
	trace_sched_process_exit();
	perf_task_exit();
	proc_vfork_release(ut);
	unsigned long f = spin_lock_irqsave(&p->lock);

	list_del_init(&ut->thread_node);
	p->nr_threads--;
	last = p->nr_threads == 0;
	/* a leader that goes first stays allocated until the last thread (group_leader) */
	if (last) {
		parked = p->parked_leader;
		p->parked_leader = NULL;
	} else if (&ut->task == p->leader) {
		p->parked_leader = ut;
		park = true;
	}
	if (!p->exiting || last)
		p->exit_status = p->exiting ? p->exit_status : status;
	p->min_flt += ut->min_flt;
	p->maj_flt += ut->maj_flt;
	/* the slice running now counts too (task_cputime_split adds it for the current task) */
	uint64_t u, s;

	task_cputime_split(&ut->task, &u, &s);
	p->utime_ns += u;
	p->stime_ns += s;
	spin_unlock_irqrestore(&p->lock, f);
	uthread_signal_release(ut);
	if (READ_ONCE(ut->ptrace))
		ptrace_tracee_exit(ut, p->exiting || last ? p->exit_status : status);
	if (last)
		proc_finish(p);
	f = spin_lock_irqsave(&proc_tree_lock);
	list_del(&ut->task.all_node);
	if (!last && p != init_proc) {
		/* our children's real_parent moves to a thread still in the group (Linux's
		 * find_alive_thread), or to init's leader when the group is ending */
		struct task *to = init_proc->leader;
		struct list_node *n;
		unsigned long pf = spin_lock_irqsave(&p->lock);

		if (!list_empty(&p->threads))
			to = &list_entry(p->threads.next, struct uthread, thread_node)->task;
		spin_unlock_irqrestore(&p->lock, pf);
		list_for_each(n, &p->children)
			retarget_locked(list_entry(n, struct proc, sibling), &ut->task, to);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	/* The reaper frees our stack once we are off the CPU (a parked leader's once the
	 * group's last thread hands it over). */
	f = spin_lock_irqsave(&dead_lock);
	if (!park)
		list_add_tail(&dead_threads, &ut->task.all_node);
	if (parked)
		list_add_tail(&dead_threads, &parked->task.all_node);
	spin_unlock_irqrestore(&dead_lock, f);
	waitq_wake_all(&reaper_wq);
	thread_exit();
}

void proc_exit_group(int status)
{
	struct uthread *ut = current_uthread();
	struct proc *p = ut->task.proc;

	if (READ_ONCE(ut->ptrace))
		ptrace_exit_event(status);
	unsigned long f = spin_lock_irqsave(&p->lock);

	if (!p->exiting) {
		p->exiting = true;
		p->exit_status = status;
	}
	spin_unlock_irqrestore(&p->lock, f);
	signal_wake_group(p); /* each thread sees p->exiting on its way out */
	proc_exit_thread(status);
}

bool proc_exiting(void)
{
	struct proc *p = current_proc();

	return p && READ_ONCE(p->exiting);
}

static long sys_exit(uint64_t code)
{
	if (READ_ONCE(current_uthread()->ptrace))
		ptrace_exit_event((int)((code & 0xff) << 8));
	proc_exit_thread((int)((code & 0xff) << 8));
}
SYSCALL(__NR_exit, sys_exit);

static long sys_exit_group(uint64_t code)
{
	proc_exit_group((int)((code & 0xff) << 8));
}
SYSCALL(__NR_exit_group, sys_exit_group);

static long sys_set_tid_address(uint64_t addr)
{
	current_uthread()->clear_child_tid = addr;
	return current_task()->tid;
}
SYSCALL(__NR_set_tid_address, sys_set_tid_address);

/* ---- context switch of user state ---- */

void proc_switch(struct task *prev, struct task *next)
{
	struct proc *pp = prev->proc, *np = next->proc;

	if (pp) {
		struct uthread *u = (struct uthread *)prev;

		u->tpidr_el0 = read_tpidr_el0();
		if (!u->fp_in_memory)
			fpsimd_save(&u->fp);
	}
	if (np) {
		struct uthread *u = (struct uthread *)next;

		mm_activate(np->mm); /* always: TTBR0 is cheap to write, a stale one is not */
		write_tpidr_el0(u->tpidr_el0);
		fpsimd_restore(&u->fp);
		debug_switch(u->dbg_step); /* its breakpoint step, if it was in one */
	} else if (pp) {
		mm_activate(NULL);
	}
}
