/*
 * sched.h - tasks, per-CPU data, the scheduler, wait queues.
 *
 * Scheduling: one run queue per CPU, round robin with a TICK-based time slice; new and woken
 * tasks go to an idle CPU their affinity allows when there is one; an idle CPU pulls work from
 * the busiest queue on its tick.  The kernel is preemptible at interrupt return when the
 * interrupted code had interrupts enabled and preempt_count is 0; since every spinlock is held
 * with interrupts masked (see spinlock.h), no lock is ever held across a preemption.
 *
 * Wakeups follow Linux's model: on_rq means "runnable" (queued or running) and only
 * schedule() clears it, for a task whose state says it is going to sleep.  A wakeup that finds
 * on_rq still set only flips the state back, so a wakeup racing with going to sleep is never
 * lost.  A CPU switches to a task only once on_cpu is 0 (its old CPU is done with its stack).
 *
 * Lock order: task->lock -> cpu->rq_lock.  state and on_rq change under task->lock; queued and
 * rq_node under the rq_lock of the CPU whose queue holds the task.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/spinlock.h>
#include <kern/time.h>

#define TASK_COMM_LEN 16

struct cpu_context {
	uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28;
	uint64_t fp, sp, lr;
};

enum task_state {
	TASK_RUNNABLE, /* running or wants to run */
	TASK_SLEEPING, /* going to sleep or asleep: runs again after wake_up_task */
	TASK_ZOMBIE, /* exited; never runs again */
};

struct task;

struct task {
	struct cpu_context ctx; /* saved by cpu_switch; lock: none (owner CPU) */
	struct spinlock lock;
	int tid;
	char comm[TASK_COMM_LEN];
	enum task_state state; /* lock: lock */
	bool on_rq; /* runnable: queued or running; lock: lock */
	bool queued; /* on rq_node of cpus[rq_cpu]; lock: that rq_lock */
	unsigned int rq_cpu;
	_Atomic int on_cpu; /* 1 while a CPU runs or is switching away from it */
	unsigned int cpu; /* CPU it runs on or last ran on */
	uint64_t affinity; /* allowed CPUs, bit per CPU */
	struct list_node rq_node; /* lock: rq_lock of cpu */
	int preempt_count;
	/* migrate_disable nesting: while non-zero it runs only on cpu (it may still be preempted
	 * and sleep); only the task itself changes it, others read it once it is off-CPU */
	int migrate_disable;
	bool kthread;
	void *kstack; /* KSTACK_SIZE bytes */
	/* accounting, for rusage and the software perf events */
	uint64_t runtime_ns, slice_start_ns, last_switch_in_ns;
	/* ticks that found it running at EL0 / in the kernel (only its CPU writes them): how its
	 * runtime splits into user and system time (task_cputime_split, as cputime_adjust) */
	uint64_t user_ticks, sys_ticks;
	uint64_t nvcsw, nivcsw, nr_migrations;
	int exit_code;
	struct list_node all_node; /* lock: tasks_lock */
	struct list_node dbg_node; /* every task, for sched_dump_tasks */
	void *perf_ctx; /* owned by perf/ */
	void *bpf_storage; /* owned by bpf/ (task storage); freed by bpf_task_free */
	unsigned int perf_last_cpu; /* for the cpu-migrations event */
	bool perf_ran;
	void *proc; /* user process state, kernel/proc.c (NULL for kernel threads) */
	/*
	 * Other tasks, as BPF programs walk them through the kernel's BTF (Linux's task_struct
	 * members of the same names): the thread group's id, the task that created it (a thread
	 * of the parent process; init's leader once orphaned), the task it reports to (the same
	 * here: ptrace's tracer is not put there), its group's leader.  Kernel threads and init:
	 * CPU 0's idle task (pid 0, Linux's swapper/0, its own parent) is their parent; a kernel
	 * thread leads its own group.  kernel/proc.c writes them under proc_tree_lock and
	 * moves every pointer off a thread before that thread can be freed (see proc.c), so a
	 * pointer read from a live task names a task that is still allocated; programs read
	 * them with probe loads and helpers check a task is still tracked before using it.
	 */
	int tgid;
	struct task *real_parent;
	struct task *parent;
	struct task *group_leader;
	void *kretprobes; /* pending kernel return probes, kernel/kprobes.c (the task only) */
};

struct wait_queue {
	struct spinlock lock;
	struct list_node waiters;
};

struct waiter {
	struct list_node node;
	struct task *task;
	bool woken;
};

struct call_entry;

struct cpu {
	unsigned int id;
	uint64_t mpidr;
	struct task *current;
	struct task *idle;
	struct task *prev_switched; /* the task switched away from, for finish_switch */
	struct spinlock rq_lock;
	struct list_node rq; /* runnable tasks, FIFO */
	unsigned int rq_len; /* lock: rq_lock */
	_Atomic bool need_resched;
	_Atomic bool online;
	uint64_t ticks;
	uint64_t ctx_switches;
	/* cross-CPU function calls (smp.c) */
	struct spinlock call_lock;
	struct list_node calls;
	/* one-shot timers (time.c) */
	struct spinlock timer_lock;
	struct list_node timers; /* sorted by deadline */
	struct ktimer tick;
	struct ktimer *_Atomic running_timer; /* callback in progress (ktimer_cancel waits) */
	bool in_timer_irq; /* [timer_lock] timer_irq is running callbacks: it reprograms after */
	bool dbg_stepping; /* the user task it runs steps over a breakpoint (arch/arm64/debug.c) */
	bool dbg_ss_armed; /* MDSCR_EL1.SS set for that step, on the way to EL0 (same file) */
	bool dbg_kguard;   /* execute slots guard an exclusive sequence (same file) */
	bool dbg_return_work; /* dbg_kguard, or dbg_stepping != dbg_ss_armed: the return to EL0
				 * has debug work (arch/arm64/debug.c keeps it; one load there) */
	uint32_t gic_cpu_mask; /* GICv2 CPU interface bit */
	uint64_t gicr_base; /* GICv3 redistributor (virtual address) */
	struct trapframe *irq_tf; /* the frame the current interrupt interrupted (debugging) */
} __attribute__((aligned(64)));

extern struct cpu cpus[];
extern unsigned int nr_cpus_online, nr_cpus_possible;

static inline struct cpu *this_cpu(void)
{
	struct cpu *c;

	__asm__ volatile("mrs %0, tpidr_el1" : "=r"(c));
	return c;
}

static inline struct task *current_task(void)
{
	return this_cpu()->current;
}

void sched_init_cpu(struct cpu *c, struct task *idle);
void sched_track_task(struct task *t);
void sched_untrack_task(struct task *t);
/* fn(t, arg) with t known to be a task not yet freed (one of those sched_track_task listed and
 * sched_untrack_task has not removed), under the list's lock: interrupts masked, fn must not
 * sleep and takes what it needs to keep (a reference) before it returns.  fn's result, or
 * -ESRCH when t is no such task (a pointer a BPF program kept after the task was freed). */
int sched_with_live_task(struct task *t, int (*fn)(struct task *t, void *arg), void *arg);
/* Is tid a kernel thread's (ptrace answers EPERM for those, ESRCH for no task)? */
bool sched_tid_is_kthread(int tid);
/* Print every task's scheduling state and kernel backtrace (hang diagnosis). */
void sched_dump_tasks(void);
/* Make a kernel thread runnable; NULL when out of memory. */
struct task *kthread_create(const char *name, void (*fn)(void *), void *arg, int cpu);
struct task *task_alloc(const char *name);
int task_next_tid(void);
void task_free(struct task *t);
void task_make_runnable(struct task *t, int cpu_hint);
__attribute__((noreturn)) void thread_exit(void);
/* Wait for a kernel thread to exit and free it. */
void kthread_join(struct task *t);
void schedule(void);
void sched_yield(void);
void sched_tick(void);
void sched_set_affinity(struct task *t, uint64_t mask);
void wake_up_task(struct task *t);
void idle_loop(void) __attribute__((noreturn));
void preempt_disable(void);
void preempt_enable(void);
/*
 * Keep the current task on this CPU until the matching migrate_enable (they nest): it can
 * still be preempted and sleep, but wakeups, balancing and affinity changes put it back on
 * this CPU only (Linux's migrate_disable).  An affinity set meanwhile that excludes this CPU
 * takes effect at the outermost migrate_enable, which then moves the task.
 */
void migrate_disable(void);
void migrate_enable(void);

void waitq_init(struct wait_queue *wq);
/* Sleep until woken or timeout_ns (0: none) passes: 1 when woken, 0 on timeout. */
void waitq_wake_all(struct wait_queue *wq);
void waitq_wake_one(struct wait_queue *wq);
/*
 * A struct waiter must start zeroed ({ 0 }): waitq_prepare tells a fresh waiter from one
 * already queued by its fields.  The sleep protocol: waitq_prepare (join the queue, state SLEEPING), test the condition,
 * waitq_block (schedule away unless already woken; deadline_ns 0 means none; false when the
 * deadline passed), repeat; waitq_finish (leave the queue, state RUNNABLE).
 */
void waitq_prepare(struct wait_queue *wq, struct waiter *w);
bool waitq_block(struct waiter *w, uint64_t deadline_ns);
void waitq_finish(struct wait_queue *wq, struct waiter *w);
/* Sleep until cond holds, re-checking after every wakeup. */
#define wait_event(wq, cond)                                                                       \
	do {                                                                                       \
		struct waiter __w = { 0 };                                                         \
		for (;;) {                                                                         \
			waitq_prepare((wq), &__w);                                                 \
			if (cond)                                                                  \
				break;                                                             \
			waitq_block(&__w, 0);                                                      \
		}                                                                                  \
		waitq_finish((wq), &__w);                                                          \
	} while (0)
void sleep_ns(uint64_t ns);

/* smp.c: run fn(arg) on cpu (in IRQ context there); wait for it when wait is set. */
void smp_call(unsigned int cpu, void (*fn)(void *), void *arg, bool wait);
void smp_call_all(void (*fn)(void *), void *arg); /* every online CPU, waits */
void smp_handle_calls(void);
void smp_boot_secondaries(void);
