/*
 * ctx.c - perf contexts and the hooks kernel/ calls: per-CPU contexts (always active on their
 * CPU) and per-task contexts (scheduled in and out with their task), context time, running a
 * change on the CPU that owns the counters, inheritance at fork with counts folded back at
 * exit, enable_on_exec, and multiplexing rotation on the tick.
 *
 * Linux's model (kernel/events/core.c): a task context's time advances only while the task
 * runs, so a task event's time_enabled is its task's run time while enabled, and time_running
 * the part of it the event spent on a counter.  Context switches and CPU migrations are counted
 * as the software events at switch time, page faults by the VM through perf_sw_event().
 */
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <perf/perf.h>
#include <perf/sw_events.h>
#include "perf_internal.h"

struct perf_context *perf_cpu_ctx[PERF_MAX_CPUS];
static bool perf_ready;
bool perf_debug; /* boot option perfdebug: print each event's state at task exit */

/* ---- contexts ---- */

static struct perf_context *ctx_alloc(struct ksvc_task *task, int cpu)
{
	struct perf_context *ctx = ksvc_alloc(sizeof(*ctx));

	if (!ctx)
		return NULL;
	perf_ctx_init(&ctx->sched);
	ctx->task = task;
	ctx->cpu = cpu;
	ctx->active = !task;
	ctx->tstamp = ksvc_clock_ns();
	list_init(&ctx->events);
	atomic_store(&ctx->refs, 1);
	return ctx;
}

void perf_ctx_put(struct perf_context *ctx)
{
	int old = atomic_fetch_sub(&ctx->refs, 1);

	kdebug_assert(old > 0);
	if (old == 1)
		ksvc_free(ctx);
}

void perf_ctx_update_time_locked(struct perf_context *ctx, uint64_t now)
{
	spin_assert_held(&ctx->sched.lock);
	if (ctx->active)
		ctx->time += now - ctx->tstamp;
	ctx->tstamp = now;
}

struct perf_context *perf_task_ctx_get_locked(struct ksvc_task *t, bool create)
{
	spin_assert_held(&perf_attach_lock);
	void **slot = ksvc_task_perf_slot(t);
	struct perf_context *ctx = *slot;

	if (ctx == PERF_TASK_DEAD)
		return NULL;
	if (!ctx && create) {
		ctx = ctx_alloc(t, -1);
		if (!ctx)
			return NULL;
		/* Publish before the task can be switched with it: the switch hook reads the
		 * slot with interrupts off; the context starts inactive. */
		__atomic_store_n(slot, ctx, __ATOMIC_RELEASE);
	}
	if (ctx)
		atomic_fetch_add(&ctx->refs, 1);
	return ctx;
}

struct call_req {
	struct perf_context *ctx;
	void (*fn)(struct perf_context *ctx, void *arg);
	void *arg;
	bool done;
};

/*
 * Can fn run here on ctx (ctx lock held)?  Yes when ctx is active on this CPU, or inactive and
 * its task is not running anywhere (the switch-in hook will schedule the events in).  A task
 * context whose task is the one running here is activated first: its task is already on the
 * CPU, so it would otherwise not count until its next switch.
 */
bool perf_ctx_here_locked(struct perf_context *ctx, int *elsewhere)
{
	spin_assert_held(&ctx->sched.lock);
	int me = (int)ksvc_cpu_id();

	*elsewhere = -1;
	if (ctx->active) {
		if (ctx->cpu == me)
			return true;
		*elsewhere = ctx->cpu;
		return false;
	}
	if (ctx->task && ctx->task == ksvc_task_current()) {
		ctx->active = true;
		ctx->cpu = me;
		ctx->tstamp = ksvc_clock_ns();
		return true;
	}
	if (ctx->task && !ctx->dead) {
		int cpu = ksvc_task_running_cpu(ctx->task);

		if (cpu >= 0 && cpu != me) {
			*elsewhere = cpu;
			return false;
		}
	}
	return true;
}

static void remote_call(void *p)
{
	struct call_req *r = p;
	struct perf_context *ctx = r->ctx;
	int elsewhere;

	spin_lock(&ctx->sched.lock);
	if (perf_ctx_here_locked(ctx, &elsewhere)) {
		r->fn(ctx, r->arg);
		r->done = true;
	}
	spin_unlock(&ctx->sched.lock);
}

void perf_ctx_call(struct perf_context *ctx, void (*fn)(struct perf_context *ctx, void *arg),
		   void *arg)
{
	struct call_req r = { ctx, fn, arg, false };
	int elsewhere;

	for (;;) {
		unsigned long f = spin_lock_irqsave(&ctx->sched.lock);

		if (perf_ctx_here_locked(ctx, &elsewhere)) {
			fn(ctx, arg);
			spin_unlock_irqrestore(&ctx->sched.lock, f);
			return;
		}
		spin_unlock_irqrestore(&ctx->sched.lock, f);
		ksvc_run_on_cpu((unsigned int)elsewhere, remote_call, &r);
		if (r.done)
			return;
		/* the task moved meanwhile: try again where it is now */
	}
}

/* ---- install / remove ---- */

static void install_fn(struct perf_context *ctx, void *arg)
{
	struct perf_event *e = arg;

	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	e->tstamp = ctx->time;
	list_add_tail(&ctx->events, &perf_core(e)->event_entry);
	if (ctx->active)
		perf_ctx_sched_out_locked(&ctx->sched, ctx->time);
	/* The leader was closed after the open looked it up: as if it went just after this
	 * install, the event leads a group of its own (remove_locked's rule). */
	if (e->group_leader != e && list_empty(&perf_core(e->group_leader)->event_entry))
		e->group_leader = e;
	if (e->group_leader == e)
		perf_ctx_add_group_locked(&ctx->sched, e);
	else
		perf_group_attach_locked(e);
	if (ctx->active)
		perf_ctx_sched_in_locked(&ctx->sched, ctx->time);
}

void perf_install_event(struct perf_context *ctx, struct perf_event *e)
{
	perf_core(e)->ctx = ctx;
	perf_ctx_call(ctx, install_fn, e);
}

/* Take e out of its context; a leader's siblings become singleton groups (Linux). */
static void remove_locked(struct perf_context *ctx, struct perf_event *e)
{
	spin_assert_held(&ctx->sched.lock);
	struct perf_event_core *c = perf_core(e);
	struct list_node *n, *tmp;

	if (list_empty(&c->event_entry))
		return; /* already out */
	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	if (ctx->active)
		perf_ctx_sched_out_locked(&ctx->sched, ctx->time);
	if (e->state == PERF_EVENT_STATE_ACTIVE) {
		/* never on the PMU without its group's leader; if it is, it still comes off
		 * here, on its CPU, before anything can free it */
		ksvc_printk("perf: BUG: event %llu on the PMU outside its group\n",
			    (unsigned long long)e->id);
		e->pmu->del(e, 0);
		e->state = PERF_EVENT_STATE_INACTIVE;
	}
	perf_event_update_time_locked(e, ctx->time);
	if (e->group_leader == e) {
		perf_ctx_del_group_locked(&ctx->sched, e);
		list_for_each_safe(n, tmp, &e->sibling_list) {
			struct perf_event *s = list_entry(n, struct perf_event, group_entry);

			perf_group_detach_locked(s);
			s->group_leader = s;
			perf_ctx_add_group_locked(&ctx->sched, s);
		}
	} else {
		perf_group_detach_locked(e);
	}
	list_del_init(&c->event_entry);
	if (ctx->active)
		perf_ctx_sched_in_locked(&ctx->sched, ctx->time);
}

static void remove_fn(struct perf_context *ctx, void *arg)
{
	remove_locked(ctx, arg);
}

void perf_remove_event(struct perf_event *e)
{
	struct perf_event_core *c = perf_core(e);

	if (c->ctx)
		perf_ctx_call(c->ctx, remove_fn, e);
}

/* ---- hooks: context switch, tick ---- */

static struct perf_context *task_ctx(struct ksvc_task *t)
{
	struct perf_context *ctx = __atomic_load_n(ksvc_task_perf_slot(t), __ATOMIC_ACQUIRE);

	return ctx == PERF_TASK_DEAD ? NULL : ctx;
}

/* One switch or migration for ctx's software events, in the mode <perf/sw_events.h> gives. */
static void sched_count_locked(struct perf_context *ctx, uint32_t config)
{
	spin_assert_held(&ctx->sched.lock);
	perf_sw_count_locked(ctx, config, 1, 0, perf_sw_events[config].kernel_mode);
}

void perf_task_switch(struct ksvc_task *prev, struct ksvc_task *next, bool migrated)
{
	struct perf_context *pc = task_ctx(prev), *nc = task_ctx(next), *cc;
	uint64_t now;

	if (!perf_ready)
		return;
	now = ksvc_clock_ns();
	cc = perf_cpu_ctx[ksvc_cpu_id()];
	if (pc) {
		spin_lock(&pc->sched.lock);
		perf_ctx_update_time_locked(pc, now);
		sched_count_locked(pc, PERF_COUNT_SW_CONTEXT_SWITCHES);
		perf_ctx_sched_out_locked(&pc->sched, pc->time);
		pc->active = false;
		pc->cpu = -1;
		spin_unlock(&pc->sched.lock);
	}
	/* the CPU's events see every switch, from or to any task (idle too), and every task
	 * that arrives from another CPU, as Linux's perf_sw_event_sched */
	if (cc && !list_empty(&cc->events)) {
		spin_lock(&cc->sched.lock);
		sched_count_locked(cc, PERF_COUNT_SW_CONTEXT_SWITCHES);
		if (migrated)
			sched_count_locked(cc, PERF_COUNT_SW_CPU_MIGRATIONS);
		spin_unlock(&cc->sched.lock);
	}
	if (nc) {
		spin_lock(&nc->sched.lock);
		nc->active = true;
		nc->cpu = (int)ksvc_cpu_id();
		nc->tstamp = now;
		perf_ctx_sched_in_locked(&nc->sched, nc->time);
		if (migrated)
			sched_count_locked(nc, PERF_COUNT_SW_CPU_MIGRATIONS);
		struct list_node *un;

		list_for_each(un, &nc->events) {
			struct perf_event *ue =
				perf_event_of(list_entry(un, struct perf_event_core, event_entry));

			if (ue->ring && (ue->hw.flags & PERF_HW_USER_READ))
				perf_event_update_userpage_locked(ue);
		}
		if (perf_debug) {
			struct list_node *it;

			list_for_each(it, &nc->events) {
				struct perf_event *e = perf_event_of(
					list_entry(it, struct perf_event_core, event_entry));

				if (e->cpu == nc->cpu && e->state == PERF_EVENT_STATE_INACTIVE)
					ksvc_printk("perf: event %lu stays off cpu %d (task %d, "
						    "migrated %d)\n", (unsigned long)e->id, nc->cpu,
						    ksvc_task_tid(next), migrated);
			}
		}
		spin_unlock(&nc->sched.lock);
	}
}

static void rotate(struct perf_context *ctx, uint64_t now)
{
	/* the tick interrupted a holder of this lock on this CPU: that holder let interrupts in */
	if (KDEBUG && spin_is_held_by_me(&ctx->sched.lock))
		kpanic("perf: the tick found ctx lock %p held on its own CPU (taken from %p)",
		       (void *)&ctx->sched.lock, (void *)ctx->sched.lock.holder_pc);
	spin_lock(&ctx->sched.lock);
	if (ctx->active)
		perf_adjust_freq_unthr_locked(ctx);
	if (ctx->active && ctx->sched.rotate_necessary) {
		perf_ctx_update_time_locked(ctx, now);
		perf_ctx_rotate_locked(&ctx->sched, ctx->time);
	}
	spin_unlock(&ctx->sched.lock);
}

void perf_tick(void)
{
	struct perf_context *tc;

	if (!perf_ready)
		return;
	uint64_t now = ksvc_clock_ns();

	rotate(perf_cpu_ctx[ksvc_cpu_id()], now);
	tc = task_ctx(ksvc_task_current());
	if (tc)
		rotate(tc, now);
}

/* fn(ctx, arg) on the running task's context, then on this CPU's when it has events, each
 * under its lock with interrupts masked: where software and tracepoint events happen. */
void perf_each_current_ctx(void (*fn)(struct perf_context *ctx, const void *arg), const void *arg)
{
	struct perf_context *tc, *cc;
	unsigned long f;

	if (!perf_ready)
		return;
	f = ksvc_irq_save();
	tc = task_ctx(ksvc_task_current());
	cc = perf_cpu_ctx[ksvc_cpu_id()];
	if (tc) {
		spin_lock(&tc->sched.lock);
		fn(tc, arg);
		spin_unlock(&tc->sched.lock);
	}
	if (cc && !list_empty(&cc->events)) {
		spin_lock(&cc->sched.lock);
		fn(cc, arg);
		spin_unlock(&cc->sched.lock);
	}
	ksvc_irq_restore(f);
}

bool perf_ctx_held_here(void)
{
	unsigned long f = ksvc_irq_save();
	struct perf_context *tc = task_ctx(ksvc_task_current());
	struct perf_context *cc = perf_cpu_ctx[ksvc_cpu_id()];
	bool held = (tc && spin_is_held_by_me(&tc->sched.lock)) ||
		    (cc && spin_is_held_by_me(&cc->sched.lock));

	ksvc_irq_restore(f);
	return held;
}

struct sw_hit {
	uint32_t config;
	uint64_t n, addr;
	bool in_kernel;
};

static void sw_hit_locked(struct perf_context *ctx, const void *arg)
{
	const struct sw_hit *h = arg;

	spin_assert_held(&ctx->sched.lock);
	perf_sw_count_locked(ctx, h->config, h->n, h->addr, h->in_kernel);
}

/* Software counters bumped by the kernel (page faults) on the running task and this CPU. */
void perf_sw_event(uint32_t config, uint64_t n, uint64_t addr, bool in_kernel)
{
	struct sw_hit h = { config, n, addr, in_kernel };

	perf_each_current_ctx(sw_hit_locked, &h);
}

static void tp_hit_locked(struct perf_context *ctx, const void *arg)
{
	spin_assert_held(&ctx->sched.lock);
	perf_tp_count_locked(ctx, arg);
}

/* A tracepoint fired on the running task and this CPU (the kernel's trace hooks).  A hit
 * inside perf itself (a kmalloc under a context lock this CPU holds) is missed, as Linux's
 * recursion guard misses it. */
void perf_tp_event(uint64_t id, const void *rec, uint32_t size, const uint64_t *regs, bool user)
{
	struct perf_tp_hit hit = { id, rec, size, regs, user };

	if (!perf_ready || perf_ctx_held_here() || !perf_tp_bpf_run(&hit))
		return;
	perf_each_current_ctx(tp_hit_locked, &hit);
}

/* ---- fork: inheritance ---- */

static struct perf_event *inherit_one(struct perf_event *pe, struct perf_context *cctx,
				      struct perf_event *cleader)
{
	struct perf_event *top = perf_core(pe)->parent ? perf_core(pe)->parent : pe;
	struct perf_event *ce = perf_event_alloc(&pe->attr, pe->cpu);

	if (!ce)
		return NULL;
	ce->attach_task = true;
	ce->target_tid = cctx->task ? ksvc_task_tid(cctx->task) : 0;
	ce->primary_id = top->primary_id;
	ce->state = pe->state == PERF_EVENT_STATE_OFF ? PERF_EVENT_STATE_OFF
						       : PERF_EVENT_STATE_INACTIVE;
	/* probe events: the child shares the parent's probe (its path or name pointer is the
	 * parent's user memory, which the forking task may not have) */
	ce->hw.uprobe = pe->hw.uprobe;
	ce->hw.kprobe = pe->hw.kprobe;
	/* An event still waiting for exec is enabled by the child's own exec. */
	if (perf_pmu_init_event(ce)) {
		perf_event_put(ce);
		return NULL;
	}
	perf_core(ce)->parent = top;
	perf_event_inherit_bpf(ce, top);
	atomic_fetch_add(&cctx->refs, 1);
	perf_core(ce)->ctx = cctx;
	if (cleader)
		perf_event_init_group(ce, cleader);
	atomic_fetch_add(&perf_core(top)->refs, 1);
	unsigned long f = spin_lock_irqsave(&perf_core(top)->child_lock);

	list_add_tail(&perf_core(top)->children, &perf_core(ce)->child_entry);
	spin_unlock_irqrestore(&perf_core(top)->child_lock, f);
	perf_install_event(cctx, ce);
	return ce;
}

void perf_task_fork(struct ksvc_task *parent, struct ksvc_task *child)
{
	struct perf_context *pctx, *cctx = NULL;
	struct list_node *n;

	if (!perf_ready)
		return;
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);

	pctx = perf_task_ctx_get_locked(parent, false);
	if (!pctx) {
		spin_unlock_irqrestore(&perf_attach_lock, f);
		return;
	}
	/* The parent's leaders (and their groups) with inherit set, in open order. */
	list_for_each(n, &pctx->events) {
		struct perf_event *pe = perf_event_of(list_entry(n, struct perf_event_core, event_entry));
		struct list_node *sn;

		if (!pe->attr.inherit || pe->group_leader != pe || perf_core(pe)->exited)
			continue;
		if (!cctx)
			cctx = perf_task_ctx_get_locked(child, true);
		if (!cctx)
			break;
		struct perf_event *cl = inherit_one(pe, cctx, NULL);

		if (!cl)
			continue;
		list_for_each(sn, &pe->sibling_list)
			inherit_one(list_entry(sn, struct perf_event, group_entry), cctx, cl);
	}
	spin_unlock_irqrestore(&perf_attach_lock, f);
	perf_ctx_put(pctx);
	if (cctx)
		perf_ctx_put(cctx);
	perf_task_sb_task(true, (uint32_t)ksvc_task_tgid(child), (uint32_t)ksvc_task_tgid(parent),
			  (uint32_t)ksvc_task_tid(child), (uint32_t)ksvc_task_tid(parent));
}

/* ---- exec: enable_on_exec, remove_on_exec ---- */

/*
 * e leaves its context for good (its task exits, or it execs and e has remove_on_exec): its
 * count is final.  An inherited event folds into its parent, leaves the context and goes on
 * claimed (the caller drops its references); the user's own stays for its fd, which reads the
 * final count and polls POLLHUP, and leaves the context only when remove (exec) asks.
 * perf_attach_lock and the context lock held.
 */
static void event_exit_locked(struct perf_context *ctx, struct perf_event *e,
			      struct list_node *claimed, bool remove)
{
	spin_assert_held(&ctx->sched.lock);
	struct perf_event_core *c = perf_core(e);
	struct perf_event *top = c->parent;

	perf_event_read_count_locked(e);
	perf_event_update_time_locked(e, ctx->time);
	c->exited = true;
	if (!top) {
		if (remove)
			remove_locked(ctx, e);
		ksvc_waitq_wake_all(c->wq); /* POLLHUP for the reader of this task */
		return;
	}
	/* Inherited: fold into the parent (perf_attach_lock keeps the parent's close from
	 * racing: it unhooks children under the same lock). */
	spin_lock(&perf_core(top)->child_lock);
	perf_core(top)->child_count += atomic_load(&e->count);
	perf_core(top)->child_enabled += e->time_enabled;
	perf_core(top)->child_running += e->time_running;
	list_del(&c->child_entry);
	spin_unlock(&perf_core(top)->child_lock);
	remove_locked(ctx, e);
	list_add_tail(claimed, &c->event_entry);
}

/* Drop what event_exit_locked claimed, with no lock held. */
static void put_claimed(struct list_node *claimed)
{
	struct list_node *n;

	while ((n = list_pop_head(claimed))) {
		struct perf_event_core *c = list_entry(n, struct perf_event_core, event_entry);
		struct perf_event *e = perf_event_of(c);
		struct perf_event *top = c->parent;

		c->parent = NULL;
		perf_event_put(e);
		perf_event_put(top);
	}
}

static void exec_fn(struct perf_context *ctx, void *arg)
{
	struct list_node *n, *tmp;
	bool any = false;

	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	/* perf_event_remove_on_exec */
	list_for_each_safe(n, tmp, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(n, struct perf_event_core, event_entry));

		if (e->attr.remove_on_exec)
			event_exit_locked(ctx, e, arg, true);
	}
	list_for_each(n, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(n, struct perf_event_core, event_entry));

		if (e->attr.enable_on_exec && e->state == PERF_EVENT_STATE_OFF) {
			if (!any && ctx->active)
				perf_ctx_sched_out_locked(&ctx->sched, ctx->time);
			any = true;
			e->attr.enable_on_exec = 0;
			perf_event_update_time_locked(e, ctx->time);
			e->state = PERF_EVENT_STATE_INACTIVE;
		}
	}
	if (any && ctx->active)
		perf_ctx_sched_in_locked(&ctx->sched, ctx->time);
}

void perf_task_exec(void)
{
	struct perf_context *ctx;
	struct list_node claimed = LIST_INIT(claimed);
	int elsewhere;

	if (!perf_ready)
		return;
	/* as at exit: the current task's context, here, under perf_attach_lock for the
	 * inherited events that leave */
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);

	ctx = perf_task_ctx_get_locked(ksvc_task_current(), false);
	if (ctx) {
		spin_lock(&ctx->sched.lock);
		perf_ctx_here_locked(ctx, &elsewhere); /* its task runs here: always true */
		exec_fn(ctx, &claimed);
		spin_unlock(&ctx->sched.lock);
	}
	spin_unlock_irqrestore(&perf_attach_lock, f);
	put_claimed(&claimed);
	if (ctx)
		perf_ctx_put(ctx);
}

/* ---- exit: fold inherited counts back, end the task's own events ---- */

static void exit_fn(struct perf_context *ctx, void *arg)
{
	(void)arg;
	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	if (ctx->active)
		perf_ctx_sched_out_locked(&ctx->sched, ctx->time);
	ctx->active = false;
	ctx->cpu = -1;
}

void perf_task_exit(void)
{
	struct ksvc_task *t = ksvc_task_current();
	struct perf_context *ctx;
	struct list_node *n, *tmp;

	if (!perf_ready)
		return;
	perf_owner_exit(t);
	perf_task_sb_task(false, (uint32_t)ksvc_task_tgid(t), (uint32_t)ksvc_task_ppid(t),
			  (uint32_t)ksvc_task_tid(t), (uint32_t)ksvc_task_ppid(t));
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);
	void **slot = ksvc_task_perf_slot(t);

	ctx = *slot == PERF_TASK_DEAD ? NULL : *slot;
	*slot = PERF_TASK_DEAD; /* no new events; the switch hook ignores it now */
	if (!ctx) {
		spin_unlock_irqrestore(&perf_attach_lock, f);
		return;
	}
	struct list_node claimed = LIST_INIT(claimed);

	spin_lock(&ctx->sched.lock);
	exit_fn(ctx, NULL);
	list_for_each_safe(n, tmp, &ctx->events) {
		struct perf_event_core *c = list_entry(n, struct perf_event_core, event_entry);
		struct perf_event *e = perf_event_of(c);

		if (perf_debug)
			ksvc_printk("perf exit: tid %d event %lu cpu %d state %d idx %d count %lu "
				    "interrupts %u throttled %d period_left %ld sample_period %lu\n",
				    ksvc_task_tid(t), (unsigned long)e->id, e->cpu, e->state, e->hw.idx,
				    (unsigned long)atomic_load(&e->count), c->interrupts, c->throttled,
				    (long)e->hw.period_left, (unsigned long)e->hw.sample_period);
		event_exit_locked(ctx, e, &claimed, false);
	}
	spin_unlock(&ctx->sched.lock);
	spin_unlock_irqrestore(&perf_attach_lock, f);
	put_claimed(&claimed);
	ctx->task = NULL;
	ctx->dead = true;
	perf_ctx_put(ctx); /* the slot's reference */
}

/* ---- boot ---- */

int perf_init(void)
{
	unsigned int n = ksvc_nr_cpus();

	if (n > PERF_MAX_CPUS)
		n = PERF_MAX_CPUS;
	for (unsigned int i = 0; i < n; i++) {
		perf_cpu_ctx[i] = ctx_alloc(NULL, (int)i);
		if (!perf_cpu_ctx[i])
			return -ENOMEM;
	}
	perf_pmu_register(perf_sw_pmu(), PERF_TYPE_SOFTWARE);
	perf_pmu_register(perf_tp_pmu(), PERF_TYPE_TRACEPOINT);
	perf_bp_init();
	perf_pmu_register(perf_kprobe_pmu(), PERF_TYPE_KPROBE);
	perf_pmu_register(perf_uprobe_pmu(), PERF_TYPE_UPROBE);
	perf_bpf_init();
	int err = pmuv3_probe(n);

	if (!err)
		err = ksvc_pmu_irq_register(pmuv3_handle_irq);
	if (err && err != -ENODEV)
		return err;
	perf_ready = true;
	return 0;
}

/* Per CPU, interrupts masked: reset the PMU of this CPU. */
void perf_cpu_init(void)
{
	perf_bp_cpu_init();
	if (pmuv3_pmu())
		pmuv3_cpu_init();
}
