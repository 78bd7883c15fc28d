/*
 * sched.c - per-CPU round-robin scheduling, kernel threads, wait queues, sleeping.
 *
 * See kernel/include/kern/sched.h for the wakeup model and lock order.  Time slices are one tick
 * (TICK_NS); the tick marks need_resched and, on an idle CPU, pulls a task from the busiest run
 * queue.  perf's context-switch hook (perf_task_switch) runs with interrupts masked on the
 * switching CPU.
 */
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <bpf/task.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/irq.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <arch/trapframe.h>
#include <kern/proc.h>
#include <perf/perf.h>
#include <kern/sched.h>
#include <kern/uprobes.h>
#include <kern/trace.h>
#include <kern/string.h>

extern void cpu_switch(struct cpu_context *from, struct cpu_context *to);
extern void thread_trampoline(void);
void sched_new_thread_started(void);

struct cpu cpus[MAX_CPUS];
unsigned int nr_cpus_online, nr_cpus_possible;
static _Atomic int next_tid = 1;

void preempt_disable(void)
{
	current_task()->preempt_count++;
}

void preempt_enable(void)
{
	struct task *t = current_task();

	kassert(t->preempt_count > 0);
	t->preempt_count--;
}

void migrate_disable(void)
{
	current_task()->migrate_disable++;
	__asm__ volatile("" ::: "memory"); /* the pinned code stays after the increment */
}

void migrate_enable(void)
{
	struct task *t = current_task();

	kassert(t->migrate_disable > 0);
	__asm__ volatile("" ::: "memory");
	if (--t->migrate_disable)
		return;
	/* an affinity change deferred while pinned: move now (the requeue in __schedule) */
	if (!(t->affinity & (1ull << t->cpu))) {
		atomic_store(&this_cpu()->need_resched, true);
		if (!t->preempt_count && !(read_sysreg(daif) & PSR_I))
			sched_yield();
	}
}

static unsigned long irq_save(void)
{
	unsigned long f = read_sysreg(daif);

	__asm__ volatile("msr daifset, #2" ::: "memory");
	return f;
}

static void irq_restore(unsigned long f)
{
	write_sysreg(daif, f);
}

/* ---- run queues ---- */

static void enqueue_locked(struct cpu *c, struct task *t)
{
	spin_assert_held(&c->rq_lock);
	kassert(!t->queued);
	if (t->state == TASK_ZOMBIE)
		kpanic("enqueue of exited task %d (%s) on cpu %u", t->tid, t->comm, c->id);
	list_add_tail(&c->rq, &t->rq_node);
	t->queued = true;
	t->rq_cpu = c->id;
	c->rq_len++;
}

static void dequeue_locked(struct cpu *c, struct task *t)
{
	spin_assert_held(&c->rq_lock);
	if (!t->queued || t->rq_cpu != c->id)
		kpanic("dequeue of task %p tid %d (%s) from cpu %u: queued %d rq_cpu %u state %d "
		       "on_rq %d on_cpu %d cpu %u", (void *)t, t->tid, t->comm, c->id, t->queued,
		       t->rq_cpu, t->state, t->on_rq, (int)atomic_load(&t->on_cpu), t->cpu);
	list_del(&t->rq_node);
	t->queued = false;
	c->rq_len--;
}

/*
 * Pick a CPU for a task becoming runnable: an idle allowed CPU, else the least loaded; among
 * equals the one it last ran on (cache warmth).  Warmth only breaks ties: counting its last CPU
 * one task lighter made the CPU of a waker that is still running (a parent writing a child's
 * "go" pipe, as perf stat does) as good as an idle one, and the first in order won.  The woken
 * task then preempted its waker there, and the waker sat in that run queue while other CPUs
 * idled, until one pulled it on its tick (up to 4 ms) or the wakee slept: perf stat's child
 * exec'd and died in that time, SIGCHLD came before perf stat reached wait4, and it skipped the
 * wait (its handler clears child_pid) and printed no "Segmentation fault".  Linux's
 * select_idle_sibling likewise takes an idle CPU before the waker's busy one.  A task that
 * went to sleep with migration disabled wakes on the CPU it was pinned to.
 */
static unsigned int select_cpu(struct task *t, int hint)
{
	unsigned int best = t->cpu, best_load = ~0u;

	if (t->migrate_disable) /* off-CPU, so stable: back where it was pinned */
		return t->cpu;
	if (hint >= 0 && (t->affinity & (1ull << hint)) && cpus[hint].online)
		return (unsigned int)hint;
	for (unsigned int i = 0; i < nr_cpus_possible; i++) {
		struct cpu *c = &cpus[i];

		if (!c->online || !(t->affinity & (1ull << i)))
			continue;
		unsigned int load = c->rq_len + (c->current != c->idle);

		if (load < best_load || (load == best_load && i == t->cpu)) {
			best = i;
			best_load = load;
		}
	}
	return best;
}

static void kick_cpu(unsigned int cpu)
{
	atomic_store(&cpus[cpu].need_resched, true);
	if (cpu != this_cpu()->id)
		ipi_send(cpu, IPI_RESCHED);
}

static unsigned int select_cpu(struct task *t, int hint);
static void activate(struct task *t, unsigned int cpu)
{
	struct cpu *c = &cpus[cpu];

	spin_lock(&c->rq_lock);
	if (t->cpu != cpu && t->tid) {
		t->nr_migrations++;
	}
	enqueue_locked(c, t);
	spin_unlock(&c->rq_lock);
	kick_cpu(cpu);
}

void task_make_runnable(struct task *t, int cpu_hint)
{
	unsigned long f = irq_save();

	spin_lock(&t->lock);
	t->state = TASK_RUNNABLE;
	t->on_rq = true;
	unsigned int cpu = select_cpu(t, cpu_hint);

	trace_sched_wakeup(t, true, (int)cpu);
	activate(t, cpu);
	spin_unlock(&t->lock);
	irq_restore(f);
}

void wake_up_task(struct task *t)
{
	unsigned long f = irq_save();

	spin_lock(&t->lock);
	if (t->state == TASK_SLEEPING) {
		t->state = TASK_RUNNABLE;
		/* Still on_rq: it has not reached schedule(), which will now keep it running. */
		if (!t->on_rq) {
			unsigned int cpu = select_cpu(t, -1);

			t->on_rq = true;
			trace_sched_wakeup(t, false, (int)cpu);
			activate(t, cpu);
		} else {
			trace_sched_wakeup(t, false, (int)t->cpu);
		}
	}
	spin_unlock(&t->lock);
	irq_restore(f);
}

/* ---- switching ---- */

static void finish_switch(void)
{
	struct cpu *c = this_cpu();
	struct task *prev = c->prev_switched;

	if (prev) {
		c->prev_switched = NULL;
		/* Release pairs with the acquire spin in __schedule of the next CPU to run it. */
		atomic_store_explicit(&prev->on_cpu, 0, memory_order_release);
	}
}

void sched_new_thread_started(void)
{
	finish_switch();
	__asm__ volatile("msr daifclr, #2" ::: "memory");
}

static void __schedule(bool preempt)
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();
	struct task *prev = c->current, *next;

	atomic_store(&c->need_resched, false);
	spin_lock(&prev->lock);
	if (prev != c->idle) {
		if (!preempt && prev->state != TASK_RUNNABLE) {
			prev->on_rq = false; /* asleep or dead: only a wakeup requeues it */
		} else if (!prev->queued && !(prev->affinity & (1ull << c->id)) &&
			   !prev->migrate_disable) {
			/* no longer allowed here (pinned: migrate_enable moves it later) */
			activate(prev, select_cpu(prev, -1));
		} else {
			spin_lock(&c->rq_lock);
			if (!prev->queued)
				enqueue_locked(c, prev);
			spin_unlock(&c->rq_lock);
		}
	}
	spin_unlock(&prev->lock);

	spin_lock(&c->rq_lock);
	if (list_empty(&c->rq)) {
		next = c->idle;
	} else {
		next = list_entry(c->rq.next, struct task, rq_node);
		dequeue_locked(c, next);
	}
	spin_unlock(&c->rq_lock);

	if (next == prev) {
		irq_restore(f);
		return;
	}
	/* Its previous CPU may still be on its stack: wait until that switch completes. */
	while (atomic_load_explicit(&next->on_cpu, memory_order_acquire))
		arch_cpu_relax();
	atomic_store_explicit(&next->on_cpu, 1, memory_order_relaxed);
	if (next->cpu != c->id && next != c->idle)
		next->nr_migrations++;
	next->cpu = c->id;

	uint64_t now = time_ns();

	if (prev != c->idle)
		trace_sched_stat_runtime(prev, now - prev->last_switch_in_ns);
	prev->runtime_ns += now - prev->last_switch_in_ns;
	next->last_switch_in_ns = now;
	bool migrated = next->perf_last_cpu != c->id && next->perf_ran;

	next->perf_last_cpu = c->id;
	next->perf_ran = true;
	next->slice_start_ns = now;
	if (preempt)
		prev->nivcsw++;
	else
		prev->nvcsw++;
	c->ctx_switches++;
	trace_sched_switch(prev, next, preempt);
	perf_task_switch((struct ksvc_task *)prev, (struct ksvc_task *)next, migrated);
	if (prev->proc || next->proc)
		proc_switch(prev, next);
	c->current = next;
	c->prev_switched = prev;
	cpu_switch(&prev->ctx, &next->ctx);
	/* Back on prev, possibly on another CPU. */
	finish_switch();
	irq_restore(f);
}

void schedule(void)
{
	__schedule(false);
}

/* Interrupt-return preemption point (trap.c). */
void schedule_preempt(void);
void schedule_preempt(void)
{
	__schedule(true);
}

void sched_yield(void)
{
	__schedule(true);
}

/* ---- tick and balancing ---- */

static void pull_work(struct cpu *c)
{
	struct cpu *busiest = NULL;

	for (unsigned int i = 0; i < nr_cpus_possible; i++) {
		struct cpu *o = &cpus[i];

		if (o != c && o->online && o->rq_len > 0 && (!busiest || o->rq_len > busiest->rq_len))
			busiest = o;
	}
	if (!busiest)
		return;
	/* Take the task with the lock order task->lock -> rq_lock: trylock to stay safe. */
	spin_lock(&busiest->rq_lock);
	struct list_node *n;

	list_for_each(n, &busiest->rq) {
		struct task *t = list_entry(n, struct task, rq_node);

		if (!(t->affinity & (1ull << c->id)) || t->migrate_disable)
			continue;
		dequeue_locked(busiest, t);
		spin_unlock(&busiest->rq_lock);
		spin_lock(&c->rq_lock);
		enqueue_locked(c, t);
		spin_unlock(&c->rq_lock);
		atomic_store(&c->need_resched, true);
		return;
	}
	spin_unlock(&busiest->rq_lock);
}

void sched_tick(void)
{
	struct cpu *c = this_cpu();
	struct task *t = c->current;

	c->ticks++;
	perf_tick();
	if (t->proc && c->irq_tf) { /* tick-based user/system split: where the tick found it */
		if (trapframe_from_user(c->irq_tf))
			t->user_ticks++;
		else
			t->sys_ticks++;
	}
	if (t == c->idle) {
		if (c->rq_len)
			atomic_store(&c->need_resched, true);
		else
			pull_work(c);
		return;
	}
	if (time_ns() - t->slice_start_ns >= TICK_NS && c->rq_len)
		atomic_store(&c->need_resched, true);
}

void sched_set_affinity(struct task *t, uint64_t mask)
{
	t->affinity = mask;
	/* pinned by migrate_disable: its migrate_enable moves it */
	if (t == current_task() && !(mask & (1ull << this_cpu()->id)) && !t->migrate_disable)
		sched_yield(); /* the requeue below moves it */
}

void idle_loop(void)
{
	for (;;) {
		struct cpu *c = this_cpu();

		__asm__ volatile("msr daifset, #2" ::: "memory");
		if (c->rq_len || atomic_load(&c->need_resched)) {
			__asm__ volatile("msr daifclr, #2" ::: "memory");
			schedule();
			continue;
		}
		/* WFI wakes on a pending interrupt even while it is masked. */
		wfi();
		__asm__ volatile("msr daifclr, #2" ::: "memory");
	}
}

/* ---- debugging: every task's state and kernel backtrace ---- */

static struct list_node all_tasks = LIST_INIT(all_tasks);
static struct spinlock all_tasks_lock = SPINLOCK_INIT;

void sched_track_task(struct task *t)
{
	unsigned long f = spin_lock_irqsave(&all_tasks_lock);

	list_add_tail(&all_tasks, &t->dbg_node);
	spin_unlock_irqrestore(&all_tasks_lock, f);
}

void sched_untrack_task(struct task *t)
{
	unsigned long f = spin_lock_irqsave(&all_tasks_lock);

	list_del(&t->dbg_node);
	spin_unlock_irqrestore(&all_tasks_lock, f);
}

int sched_with_live_task(struct task *t, int (*fn)(struct task *t, void *arg), void *arg)
{
	struct list_node *n;
	unsigned long f;
	int r = -ESRCH;

	if (!t) /* a NULL link a program passed on */
		return -ESRCH;
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (t == cpus[i].idle) /* never freed */
			return fn(t, arg);
	/* a program run from inside this lock (a kprobe's) finds nothing rather than spin */
	if (spin_is_held_by_me(&all_tasks_lock))
		return -ESRCH;
	f = spin_lock_irqsave(&all_tasks_lock);
	list_for_each(n, &all_tasks) {
		if (list_entry(n, struct task, dbg_node) == t) {
			r = fn(t, arg);
			break;
		}
	}
	spin_unlock_irqrestore(&all_tasks_lock, f);
	return r;
}

bool sched_tid_is_kthread(int tid)
{
	unsigned long f = spin_lock_irqsave(&all_tasks_lock);
	struct list_node *n;
	bool r = false;

	list_for_each(n, &all_tasks) {
		struct task *t = list_entry(n, struct task, dbg_node);

		if (t->tid == tid && !t->proc) {
			r = true;
			break;
		}
	}
	spin_unlock_irqrestore(&all_tasks_lock, f);
	return r;
}

static void dump_this_cpu(void *arg)
{
	struct cpu *c = this_cpu();
	struct trapframe *tf = c->irq_tf;

	(void)arg;
	if (!tf)
		return;
	printk("cpu %u was at pc %016lx (%s mode), task %d:\n", c->id, tf->pc,
	       (tf->pstate & 0xf) ? "kernel" : "user", c->current->tid);
	uint64_t fp = tf->x[29];

	for (int d = 0; d < 12 && fp >= 0xffff000000000000ull && !(fp & 7); d++) {
		uint64_t *rec = (uint64_t *)fp;

		printk("  %016lx\n", rec[1]);
		fp = rec[0];
	}
}

void sched_dump_tasks(void)
{
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (i != this_cpu()->id && cpus[i].current != cpus[i].idle)
			smp_call(i, dump_this_cpu, NULL, false);
	static const char *const st[] = { "runnable", "sleeping", "zombie" };
	struct list_node *n;

	printk("--- tasks ---\n");
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		printk("cpu %u: current %d (%s) rq_len %u need_resched %d\n", i,
		       cpus[i].current ? cpus[i].current->tid : -1,
		       cpus[i].current ? cpus[i].current->comm : "-", cpus[i].rq_len,
		       (int)atomic_load(&cpus[i].need_resched));
	list_for_each(n, &all_tasks) {
		struct task *t = list_entry(n, struct task, dbg_node);

		printk("tid %d %-15s %s on_rq %d queued %d on_cpu %d cpu %u\n", t->tid, t->comm,
		       st[t->state], t->on_rq, t->queued, (int)atomic_load(&t->on_cpu), t->cpu);
		if (!atomic_load(&t->on_cpu)) {
			uint64_t fp = t->ctx.fp;

			printk("  lr %016lx\n", t->ctx.lr);
			for (int d = 0; d < 12 && fp >= 0xffff000000000000ull && !(fp & 7); d++) {
				uint64_t *rec = (uint64_t *)fp;

				printk("  %016lx\n", rec[1]);
				fp = rec[0];
			}
		}
	}
}

/* ---- tasks ---- */

int task_next_tid(void)
{
	return atomic_fetch_add(&next_tid, 1);
}

struct task *task_alloc(const char *name)
{
	struct task *t = kmalloc(sizeof(*t));

	if (!t)
		return NULL;
	t->kstack = alloc_pages(2); /* KSTACK_SIZE */
	if (!t->kstack) {
		kfree(t);
		return NULL;
	}
	spin_init(&t->lock);
	t->tid = atomic_fetch_add(&next_tid, 1);
	for (int i = 0; i < TASK_COMM_LEN - 1 && name[i]; i++)
		t->comm[i] = name[i];
	t->affinity = ~0ull;
	t->state = TASK_RUNNABLE;
	t->tgid = t->tid;
	t->group_leader = t;
	/* Linux's kernel threads descend from kthreadd; here from the idle task (pid 0) */
	t->real_parent = t->parent = cpus[0].idle;
	list_init(&t->rq_node);
	list_init(&t->all_node);
	sched_track_task(t);
	return t;
}

void task_free(struct task *t)
{
	kassert(!atomic_load(&t->on_cpu) && !t->queued);
	sched_untrack_task(t);
	kprobe_task_free(t);
	bpf_task_free((struct ksvc_task *)t);
	free_pages(t->kstack, 2);
	kfree(t);
}

struct task *kthread_create(const char *name, void (*fn)(void *), void *arg, int cpu)
{
	struct task *t = task_alloc(name);

	if (!t)
		return NULL;
	t->kthread = true;
	t->ctx.x19 = (uint64_t)fn;
	t->ctx.x20 = (uint64_t)arg;
	t->ctx.lr = (uint64_t)thread_trampoline;
	t->ctx.sp = (uint64_t)t->kstack + KSTACK_SIZE;
	t->cpu = cpu >= 0 ? (unsigned int)cpu : this_cpu()->id;
	if (cpu >= 0)
		t->affinity = 1ull << cpu;
	task_make_runnable(t, cpu);
	return t;
}

static struct wait_queue exit_wq = { SPINLOCK_INIT, LIST_INIT(exit_wq.waiters) };

void thread_exit(void)
{
	struct task *t = current_task();

	__asm__ volatile("msr daifset, #2" ::: "memory");
	spin_lock(&t->lock);
	t->state = TASK_ZOMBIE;
	spin_unlock(&t->lock);
	waitq_wake_all(&exit_wq);
	schedule();
	kpanic("zombie %d ran again", t->tid);
}

void kthread_join(struct task *t)
{
	wait_event(&exit_wq, READ_ONCE(t->state) == TASK_ZOMBIE);
	while (atomic_load_explicit(&t->on_cpu, memory_order_acquire))
		arch_cpu_relax();
	task_free(t);
}

void sched_init_cpu(struct cpu *c, struct task *idle)
{
	spin_init(&c->rq_lock);
	list_init(&c->rq);
	spin_init(&c->call_lock);
	list_init(&c->calls);
	spin_init(&c->timer_lock);
	list_init(&c->timers);
	idle->cpu = c->id;
	idle->affinity = 1ull << c->id;
	idle->tgid = idle->tid;
	idle->group_leader = idle->real_parent = idle->parent = idle; /* as Linux's swapper */
	atomic_store(&idle->on_cpu, 1);
	idle->on_rq = true;
	c->idle = idle;
	c->current = idle;
}

/* ---- wait queues ---- */

void waitq_init(struct wait_queue *wq)
{
	spin_init(&wq->lock);
	list_init(&wq->waiters);
}

void waitq_prepare(struct wait_queue *wq, struct waiter *w)
{
	struct task *t = current_task();
	unsigned long f = spin_lock_irqsave(&wq->lock);

	if (w->task != t) {
		w->task = t;
		list_init(&w->node);
	}
	if (list_empty(&w->node))
		list_add_tail(&wq->waiters, &w->node);
	w->woken = false;
	spin_lock(&t->lock);
	t->state = TASK_SLEEPING;
	spin_unlock(&t->lock);
	spin_unlock_irqrestore(&wq->lock, f);
}

struct sleep_timer {
	struct ktimer timer;
	struct task *task;
	bool fired;
};

static void sleep_timer_fn(struct ktimer *kt)
{
	struct sleep_timer *st = container_of(kt, struct sleep_timer, timer);

	st->fired = true;
	wake_up_task(st->task);
}

bool waitq_block(struct waiter *w, uint64_t deadline_ns)
{
	struct sleep_timer st = { .task = w->task, .fired = false };

	if (deadline_ns) {
		if (time_ns() >= deadline_ns) {
			unsigned long f = spin_lock_irqsave(&w->task->lock);

			w->task->state = TASK_RUNNABLE;
			spin_unlock_irqrestore(&w->task->lock, f);
			return false;
		}
		ktimer_init(&st.timer, sleep_timer_fn);
		ktimer_arm(&st.timer, deadline_ns);
	}
	schedule();
	if (deadline_ns) {
		ktimer_cancel(&st.timer);
		return !st.fired || w->woken;
	}
	return true;
}

void waitq_finish(struct wait_queue *wq, struct waiter *w)
{
	struct task *t = current_task();
	unsigned long f = spin_lock_irqsave(&wq->lock);

	if (w->task == t && !list_empty(&w->node))
		list_del_init(&w->node);
	spin_lock(&t->lock);
	t->state = TASK_RUNNABLE;
	spin_unlock(&t->lock);
	spin_unlock_irqrestore(&wq->lock, f);
}

void waitq_wake_all(struct wait_queue *wq)
{
	unsigned long f = spin_lock_irqsave(&wq->lock);
	struct list_node *n;

	list_for_each(n, &wq->waiters) {
		struct waiter *w = list_entry(n, struct waiter, node);

		w->woken = true;
		wake_up_task(w->task);
	}
	spin_unlock_irqrestore(&wq->lock, f);
}

void waitq_wake_one(struct wait_queue *wq)
{
	unsigned long f = spin_lock_irqsave(&wq->lock);
	struct list_node *n;

	list_for_each(n, &wq->waiters) {
		struct waiter *w = list_entry(n, struct waiter, node);

		if (!w->woken) {
			w->woken = true;
			wake_up_task(w->task);
			break;
		}
	}
	spin_unlock_irqrestore(&wq->lock, f);
}

void sleep_ns(uint64_t ns)
{
	struct wait_queue wq;
	struct waiter w = { 0 };
	uint64_t deadline = time_ns() + ns;

	waitq_init(&wq);
	for (;;) {
		waitq_prepare(&wq, &w);
		if (!waitq_block(&w, deadline))
			break;
		if (time_ns() >= deadline)
			break;
	}
	waitq_finish(&wq, &w);
}
