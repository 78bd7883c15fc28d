/*
 * core.c - perf_event_open(2) and the perf event file: decode then commit, read() with
 * read_format, the ioctls (ENABLE, DISABLE, RESET with PERF_IOC_FLAG_GROUP, ID, PERIOD,
 * SET_OUTPUT to -1), poll (POLLHUP once the task exited), close.
 *
 * Linux 6.1 (kernel/events/core.c) is the reference for every errno and the order of checks:
 * attr.c decodes and checks the attr; the target task or CPU, the group and the PMU follow;
 * the fd is installed last.  The file's mmap is the ring (mmap.c); PERF_EVENT_IOC_SET_BPF
 * attaches a PERF_EVENT program (bpf_attach.c).  Event memory lives while core.refs > 0: the
 * fd holds one, each inherited child one on its parent.
 *
 * Lock order of perf/ (outer first; the legend of each field is in perf_internal.h).  Every
 * perf lock is a spinlock taken with interrupts masked, so no path may sleep under one.
 *
 *   perf_attach_lock                    task contexts come and go: open's lookup, fork, exec,
 *    |                                  exit, close's unhooking of inherited children
 *    +-> ctx->sched.lock                exec and exit (event_exit_locked), fork's install of a
 *    |    |                             child event into the child's new context
 *    |    +-> top's child_lock          exit folds a child's counts into its parent
 *    +-> top's child_lock               fork links a child, close unhooks one
 *    +-> parent's bpf_lock              fork: the child shares the parent's program
 *
 *   ctx->sched.lock                     software and tracepoint events counted in process
 *    |                                  context (perf_sw_event, perf_tp_event), side-band
 *    |                                  emission, the tick (throttle, frequency, rotation)
 *    +-> e's program run                no lock: detach waits for it (bpf_attach.c)
 *    |    +-> owner's child_lock        ... and may write a sample (bpf_perf_event_output)
 *    |         +-> ring->lock
 *    +-> owner's child_lock             the sample itself: which ring, held while writing it
 *    |    +-> ring->lock                (sample.c; Linux's perf_output_begin/end)
 *    +-> ring->lock                     side-band and THROTTLE records (perf_ring_write, with a
 *                                       reference on the ring and no child_lock)
 *
 *   The overflow interrupt (PMU, cpu-clock timer) and a breakpoint hit (bp.c) hold no ctx lock
 *   and start at their program's run or the owner's child_lock.  tp_lock (bpf_attach.c: programs on tracepoints) nests the same
 *   bpf_lock-less chain: tp_lock -> owner's child_lock -> ring->lock.  child_lock -> the
 *   seam's fasync lock (pending_work's O_ASYNC signal).  perf_owner_lock, bp_lock (bp.c) and
 *   the sysfs lock are leaves.  Reader wakeups (ksvc_waitq_wake_all) happen after the ring
 *   and child locks are dropped, under a ctx lock at most; perf_event_ring_wake takes the
 *   owner's child_lock alone first, to read its SET_OUTPUT target (mmap.c).
 *
 * Two contexts are never locked together.  A context's events change only on the CPU where
 * it is active (perf_ctx_call), so its own task running with interrupts masked (fork's walk
 * of the parent's events under perf_attach_lock) sees them stable without the ctx lock.
 */
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <perf/perf.h>
#include <bpf/bpf.h>
#include "perf_internal.h"

struct spinlock perf_attach_lock = SPINLOCK_INIT;
struct perf_limits perf_limits = {
	.max_sample_rate = PERF_DEFAULT_MAX_SAMPLE_RATE,
	.max_stack = PERF_DEFAULT_MAX_STACK,
};
static _Atomic uint64_t next_event_id = 1;
/* Events by the thread that opened them (prctl PR_TASK_PERF_EVENTS_*). */
static struct spinlock perf_owner_lock = SPINLOCK_INIT;
static struct list_node perf_owned = LIST_INIT(perf_owned);

static const struct ksvc_file_ops perf_fops;

/* ---- event lifetime ---- */

struct perf_event *perf_event_alloc(const struct perf_event_attr *attr, int cpu)
{
	struct perf_kevent *k = ksvc_alloc(sizeof(*k));

	if (!k)
		return NULL;
	struct perf_event *e = &k->ev;

	e->attr = *attr;
	e->cpu = cpu;
	e->core = &k->core;
	e->id = atomic_fetch_add(&next_event_id, 1);
	e->primary_id = e->id;
	e->state = attr->disabled ? PERF_EVENT_STATE_OFF : PERF_EVENT_STATE_INACTIVE;
	e->hw.idx = -1;
	perf_event_init_group(e, e);
	list_init(&k->core.event_entry);
	list_init(&k->core.children);
	list_init(&k->core.child_entry);
	list_init(&k->core.owner_entry);
	spin_init(&k->core.child_lock);
	spin_init(&k->core.bpf_lock);
	atomic_store(&k->core.refs, 1);
	k->core.pending_work.fn = perf_pending_work;
	k->core.wq = ksvc_waitq_alloc();
	if (!k->core.wq) {
		ksvc_free(k);
		return NULL;
	}
	return e;
}

void perf_event_put(struct perf_event *e)
{
	struct perf_event_core *c = perf_core(e);

	int old = atomic_fetch_sub(&c->refs, 1);

	kdebug_assert(old > 0); /* a put with no reference: underflow, or use after free */
	if (old != 1)
		return;
	ksvc_irq_work_sync(&c->pending_work); /* no notification may still be on its way */
	if (e->destroy)
		e->destroy(e);
	ksvc_trace_filter_free(atomic_load(&e->tp_filter));
	if (c->ctx)
		perf_ctx_put(c->ctx);
	if (c->prog)
		bpf_prog_put(c->prog);
	if (e->cgrp)
		ksvc_cgroup_put(e->cgrp);
	ksvc_timer_free(c->sw_timer);
	ksvc_waitq_free(c->wq);
	ksvc_free(e);
}

/* ---- totals with inherited children ---- */

/* arg: the event whose group is read.  Its leader is read here, under the context lock: a
 * leader read before the call may be closed and freed meanwhile, its siblings promoted. */
static void read_fn(struct perf_context *ctx, void *arg)
{
	struct perf_event *leader = ((struct perf_event *)arg)->group_leader, *s;
	struct list_node *n;

	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	perf_event_read_count_locked(leader);
	perf_event_update_time_locked(leader, ctx->time);
	list_for_each(n, &leader->sibling_list) {
		s = list_entry(n, struct perf_event, group_entry);
		perf_event_read_count_locked(s);
		perf_event_update_time_locked(s, ctx->time);
	}
}

/* Fold the hardware count and the times of e's group into the event structures. */
static void event_sync(struct perf_event *e)
{
	struct perf_event_core *c = perf_core(e);

	if (c->ctx && !c->exited)
		perf_ctx_call(c->ctx, read_fn, e);
}

/*
 * A snapshot of e's inherited children, each with a reference (kids_put drops them), taken
 * under child_lock, for work on each child that cannot run under the lock.  A child that exits
 * meanwhile leaves the list and folds its count into the parent, but the reference keeps it
 * alive for us.  (Walking the list with the lock dropped could loop on a removed node, which
 * list_del links to itself, or use a freed child.)
 */
#define KIDS_INLINE 8
struct kids {
	struct perf_event **ev;
	int n;
	struct perf_event *inl[KIDS_INLINE];
};

/* Under child_lock: up to cap children into k->ev, each with a reference. */
static void kids_fill_locked(struct perf_event_core *c, struct kids *k, int cap)
{
	spin_assert_held(&c->child_lock);
	struct list_node *n;

	k->n = 0;
	list_for_each(n, &c->children) {
		struct perf_event_core *cc = list_entry(n, struct perf_event_core, child_entry);

		if (k->n == cap)
			break;
		atomic_fetch_add(&cc->refs, 1);
		k->ev[k->n++] = perf_event_of(cc);
	}
}

static void kids_get(struct perf_event *e, struct kids *k)
{
	struct perf_event_core *c = perf_core(e);
	int cap = KIDS_INLINE;

	k->ev = k->inl;
	for (;;) {
		unsigned long f = spin_lock_irqsave(&c->child_lock);
		struct list_node *n;
		int nr = 0;

		list_for_each(n, &c->children)
			nr++;
		if (nr <= cap) {
			kids_fill_locked(c, k, cap);
			spin_unlock_irqrestore(&c->child_lock, f);
			return;
		}
		spin_unlock_irqrestore(&c->child_lock, f);
		if (k->ev != k->inl)
			ksvc_free(k->ev);
		cap = nr * 2; /* room for children forked meanwhile */
		k->ev = ksvc_alloc(sizeof(*k->ev) * (size_t)cap);
		if (!k->ev) { /* out of memory: the children that fit inline */
			k->ev = k->inl;
			f = spin_lock_irqsave(&c->child_lock);
			kids_fill_locked(c, k, KIDS_INLINE);
			spin_unlock_irqrestore(&c->child_lock, f);
			return;
		}
	}
}

static void kids_put(struct kids *k)
{
	for (int i = 0; i < k->n; i++)
		perf_event_put(k->ev[i]);
	if (k->ev != k->inl)
		ksvc_free(k->ev);
}

void perf_event_totals(struct perf_event *e, uint64_t *count, uint64_t *enabled,
		       uint64_t *running)
{
	struct perf_event_core *c = perf_core(e);
	struct list_node *n;
	struct kids k;

	event_sync(e);
	if (list_empty(&c->children) && !c->child_count && !c->child_enabled) {
		/* no inheritance in play (the common case): no lock to take */
		*count = atomic_load(&e->count);
		*enabled = e->time_enabled;
		*running = e->time_running;
		return;
	}
	/* A live child is read from its own context on its own CPU, without our lock. */
	kids_get(e, &k);
	for (int i = 0; i < k.n; i++)
		event_sync(k.ev[i]);
	/* Then the sum, under the lock that also covers each exit's fold: every child counts
	 * once, folded into child_count or still on the list. */
	unsigned long f = spin_lock_irqsave(&c->child_lock);

	*count = atomic_load(&e->count) + c->child_count;
	*enabled = e->time_enabled + c->child_enabled;
	*running = e->time_running + c->child_running;
	list_for_each(n, &c->children) {
		struct perf_event *ch = perf_event_of(list_entry(n, struct perf_event_core, child_entry));

		*count += atomic_load(&ch->count);
		*enabled += ch->time_enabled;
		*running += ch->time_running;
	}
	spin_unlock_irqrestore(&c->child_lock, f);
	kids_put(&k);
}

/* ---- read() ---- */

/*
 * A group's members, each with a reference, taken under its context's lock: the lock that
 * closing a leader or a sibling takes to change the group (remove_locked).  Without it a read
 * or a group ioctl could follow a member another thread is freeing.
 */
/* perf_event_validate_size: the group's read size with nr members (the new one counted),
 * the fixed sample fields and the id trailer stay below 16 KiB (Linux's conservative share of
 * a 64 KiB record). */
static bool perf_event_size_ok(const struct perf_event_attr *a, uint32_t nr)
{
	const uint64_t fixed = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			       PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
	const uint64_t id = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	size_t size = perf_read_size(a->read_format, nr) + 8;

	/* 8 bytes a field (no popcount: libgcc's would use SIMD registers) */
	for (uint64_t st = a->sample_type & (fixed | id); st; st &= st - 1)
		size += 8;

	return size < 16 * 1024;
}

#define GROUP_SNAP_SMALL 9

struct group_snap {
	struct perf_event *of;	 /* in: the event whose group */
	bool siblings;		 /* in: the siblings too, else the leader alone */
	uint32_t n;		 /* out: ev[0] is the leader; 0 when out of memory */
	struct perf_event **ev;	 /* small, or an allocation for a big group */
	struct perf_event *small[GROUP_SNAP_SMALL];
};

static void group_snap_fn(struct perf_context *ctx, void *arg)
{
	struct group_snap *g = arg;
	struct perf_event *leader = g->of->group_leader, *s;
	struct list_node *n;
	uint32_t want = g->siblings ? 1 + leader->nr_siblings : 1;

	(void)ctx;
	g->n = 0;
	g->ev = g->small;
	if (want > GROUP_SNAP_SMALL) {
		g->ev = ksvc_alloc(want * sizeof(*g->ev));
		if (!g->ev)
			return;
	}
	atomic_fetch_add(&perf_core(leader)->refs, 1);
	g->ev[g->n++] = leader;
	if (!g->siblings)
		return;
	list_for_each(n, &leader->sibling_list) {
		s = list_entry(n, struct perf_event, group_entry);
		if (g->n == want)
			break;
		atomic_fetch_add(&perf_core(s)->refs, 1);
		g->ev[g->n++] = s;
	}
}

/* 0, or -ENOMEM (nothing held then) */
static int group_snap_get(struct perf_event *e, bool siblings, struct group_snap *g)
{
	g->of = e;
	g->siblings = siblings;
	g->ev = g->small;
	if (perf_core(e)->ctx) {
		perf_ctx_call(perf_core(e)->ctx, group_snap_fn, g);
	} else {
		atomic_fetch_add(&perf_core(e)->refs, 1);
		g->ev[0] = e;
		g->n = 1;
	}
	return g->n ? 0 : -ENOMEM;
}

static void group_snap_put(struct group_snap *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		perf_event_put(g->ev[i]);
	g->n = 0;
	if (g->ev != g->small)
		ksvc_free(g->ev);
	g->ev = g->small;
}

static long read_group(struct perf_event *e, void *ubuf, size_t len);

static long perf_read(void *priv, void *ubuf, size_t len)
{
	struct perf_event *e = priv;
	uint64_t fmt = e->attr.read_format;
	struct perf_read_entry ent[1];
	struct perf_read_values v = { .ent = ent };
	uint64_t buf[5];

	if (fmt & PERF_FORMAT_GROUP)
		return read_group(e, ubuf, len);
	if (len < perf_read_size(fmt, 1))
		return -ENOSPC;
	if (e->state == PERF_EVENT_STATE_ERROR)
		return 0; /* a pinned event that could not go on: EOF */
	perf_event_totals(e, &ent[0].value, &v.time_enabled, &v.time_running);
	/* One event: value, then the fields read_format asks for, in Linux's order. */
	unsigned int n = 0;

	buf[n++] = ent[0].value;
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		buf[n++] = v.time_enabled;
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		buf[n++] = v.time_running;
	if (fmt & PERF_FORMAT_ID)
		buf[n++] = e->primary_id;
	if (fmt & PERF_FORMAT_LOST)
		buf[n++] = atomic_load(&e->lost_samples);
	if (ksvc_copy_to_user(ubuf, buf, n * 8))
		return -EFAULT;
	return (long)(n * 8);
}

/* PERF_FORMAT_GROUP: the leader's times, then each member (any number: the open-time size
 * check bounds a group by its read size, as Linux). */
static long read_group(struct perf_event *e, void *ubuf, size_t len)
{
	uint64_t fmt = e->attr.read_format;
	struct group_snap g;
	struct perf_read_values v = { 0 };
	struct perf_out o;
	uint64_t *buf = NULL;
	struct perf_read_entry *ent = NULL;
	long ret;

	if (group_snap_get(e, true, &g))
		return -ENOMEM;
	uint32_t nr = g.n;
	size_t size = perf_read_size(fmt, nr);

	v.nr = nr;
	if (len < size) {
		ret = -ENOSPC;
		goto out;
	}
	if (e->state == PERF_EVENT_STATE_ERROR) {
		ret = 0; /* a pinned event that could not go on: EOF */
		goto out;
	}
	ent = ksvc_alloc(nr * sizeof(*ent));
	buf = ksvc_alloc(size);
	v.ent = ent;
	if (!ent || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	perf_event_totals(g.ev[0], &ent[0].value, &v.time_enabled, &v.time_running);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t en, ru;

		if (i)
			perf_event_totals(g.ev[i], &ent[i].value, &en, &ru);
		ent[i].id = g.ev[i]->primary_id;
		ent[i].lost = atomic_load(&g.ev[i]->lost_samples);
	}
	perf_out_init(&o, buf, size);
	perf_read_write(&o, fmt, &v);
	ret = ksvc_copy_to_user(ubuf, buf, size) ? -EFAULT : (long)size;
out:
	group_snap_put(&g);
	ksvc_free(ent);
	ksvc_free(buf);
	return ret;
}

/* ---- enable / disable / reset ---- */

struct state_op {
	struct perf_event *e;
	int what; /* 0 disable, 1 enable, 2 reset */
	bool group;
};

static void apply_one_locked(struct perf_context *ctx, struct perf_event *e, int what)
{
	spin_assert_held(&ctx->sched.lock);
	if (what == 2) {
		perf_event_read_count_locked(e);
		atomic_store(&e->count, 0);
		return;
	}
	if (what == 1 && e->state == PERF_EVENT_STATE_OFF) {
		perf_event_update_time_locked(e, ctx->time);
		e->state = PERF_EVENT_STATE_INACTIVE;
		e->tstamp = ctx->time;
	} else if (what == 0 && e->state >= PERF_EVENT_STATE_INACTIVE) {
		/* __perf_event_disable: a leader takes its whole group off the PMU (its siblings
		 * stay enabled, INACTIVE, and come back with it); a sibling goes off alone. */
		if (e->group_leader == e) {
			perf_group_sched_out_locked(&ctx->sched, e, ctx->time);
		} else if (e->state == PERF_EVENT_STATE_ACTIVE) {
			e->pmu->read(e);
			e->pmu->del(e, 0);
		}
		perf_event_update_time_locked(e, ctx->time);
		e->state = PERF_EVENT_STATE_OFF;
	}
}

static void state_fn(struct perf_context *ctx, void *arg)
{
	struct state_op *op = arg;
	struct perf_event *e = op->e;
	struct list_node *n;

	perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
	if (op->what == 1 && ctx->active)
		perf_ctx_sched_out_locked(&ctx->sched, ctx->time);
	apply_one_locked(ctx, e, op->what);
	if (op->group && e->group_leader == e) {
		list_for_each(n, &e->sibling_list)
			apply_one_locked(ctx, list_entry(n, struct perf_event, group_entry),
					 op->what);
	}
	if (op->what == 1 && ctx->active)
		perf_ctx_sched_in_locked(&ctx->sched, ctx->time);
	perf_event_update_userpage_locked(e); /* index/offset follow the counter */
}

/* pending_work, interrupts masked: the REFRESH limit ran out.  Its counter is stopped already;
 * where its context runs here (or nowhere) the event goes off now.  A task that moved to
 * another CPU in between keeps the event on, stopped, until a DISABLE or a REFRESH. */
void perf_event_disable_inatomic(struct perf_event *e)
{
	struct perf_context *ctx = perf_core(e)->ctx;
	int elsewhere;

	if (!ctx)
		return;
	spin_lock(&ctx->sched.lock);
	if (!list_empty(&perf_core(e)->event_entry) && perf_ctx_here_locked(ctx, &elsewhere)) {
		perf_ctx_update_time_locked(ctx, ksvc_clock_ns());
		apply_one_locked(ctx, e, 0);
	}
	spin_unlock(&ctx->sched.lock);
}

static void event_state_op(struct perf_event *e, int what, bool group)
{
	struct perf_event_core *c = perf_core(e);
	struct state_op op = { e, what, group };

	if (c->ctx && !c->exited)
		perf_ctx_call(c->ctx, state_fn, &op);
	if (what == 2) {
		unsigned long f = spin_lock_irqsave(&c->child_lock);

		c->child_count = 0;
		spin_unlock_irqrestore(&c->child_lock, f);
	}
	/* Inherited children follow their parent (Linux applies the ioctl to the family). */
	struct kids k;

	kids_get(e, &k);
	for (int i = 0; i < k.n; i++) {
		struct perf_event *ch = k.ev[i];
		struct state_op cop = { ch, what, false };

		if (perf_core(ch)->ctx && !perf_core(ch)->exited)
			perf_ctx_call(perf_core(ch)->ctx, state_fn, &cop);
	}
	kids_put(&k);
}

struct period_op {
	struct perf_event *e;
	uint64_t period;
};

/* __perf_event_period: the new period applies now, restarting the current one. */
static void period_fn(struct perf_context *ctx, void *arg)
{
	struct period_op *op = arg;
	struct perf_event *e = op->e;

	(void)ctx;
	if (e->attr.freq) {
		e->attr.sample_freq = op->period;
		return;
	}
	e->attr.sample_period = op->period;
	e->hw.sample_period = op->period;
	if (e->state == PERF_EVENT_STATE_ACTIVE) {
		e->pmu->stop(e, PERF_EF_UPDATE);
		e->hw.period_left = 0;
		e->pmu->start(e, PERF_EF_RELOAD);
	} else {
		e->hw.period_left = (int64_t)op->period;
	}
}

/* perf_event_modify_attr: breakpoints only; the event and its inherited children, each taken
 * off and (unless the attr says disabled) put back on around the change. */
static int modify_one(struct perf_event *e, const struct perf_event_attr *na)
{
	int err;

	e->attr.sig_data = na->sig_data; /* perf_event_modify_copy_attr */
	event_state_op(e, 0, false);
	err = perf_bp_modify(e, na);
	if (!e->attr.disabled)
		event_state_op(e, 1, false);
	return err;
}

static int modify_attr(struct perf_event *e, const struct perf_event_attr *na)
{
	struct kids k;
	int err;

	if (e->attr.type != na->type)
		return -EINVAL;
	if (e->attr.type != PERF_TYPE_BREAKPOINT)
		return -EOPNOTSUPP;
	err = modify_one(e, na);
	kids_get(e, &k);
	for (int i = 0; i < k.n && !err; i++)
		err = modify_one(k.ev[i], na);
	kids_put(&k);
	return err;
}

static long perf_ioctl(void *priv, unsigned int cmd, unsigned long arg)
{
	struct perf_event *e = priv;
	bool group = arg & PERF_IOC_FLAG_GROUP;

	switch (cmd) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET: {
		int what = cmd == PERF_EVENT_IOC_DISABLE ? 0 : cmd == PERF_EVENT_IOC_ENABLE ? 1 : 2;
		struct group_snap g;

		if (!group) {
			event_state_op(e, what, false);
			return 0;
		}
		if (group_snap_get(e, false, &g)) /* the leader, held while the ioctl works on it */
			return -ENOMEM;
		event_state_op(g.ev[0], what, true);
		group_snap_put(&g);
		return 0;
	}
	case PERF_EVENT_IOC_ID:
		return ksvc_copy_to_user((void *)arg, &e->primary_id, sizeof(uint64_t));
	case PERF_EVENT_IOC_PERIOD: {
		uint64_t period;

		if (ksvc_copy_from_user(&period, (void *)arg, sizeof(period)))
			return -EFAULT;
		if (!e->attr.sample_period && !e->attr.freq)
			return -EINVAL; /* not a sampling event */
		if (e->attr.freq) {
			if (period > perf_limits.max_sample_rate)
				return -EINVAL;
		} else if (!period || (period & (1ull << 63))) {
			return -EINVAL;
		}
		perf_ctx_call(perf_core(e)->ctx, period_fn, &(struct period_op){ e, period });
		return 0;
	}
	case PERF_EVENT_IOC_SET_OUTPUT: {
		void *p;
		int err;

		if ((int)arg == -1)
			return perf_set_output(e, NULL);
		err = ksvc_fd_get((int)arg, &perf_fops, &p);
		if (err)
			return err == -EINVAL ? -EBADF : err;
		err = perf_set_output(e, p);
		perf_event_put(p);
		return err;
	}
	case PERF_EVENT_IOC_SET_BPF: {
		struct bpf_prog *prog;
		int err = bpf_prog_get_fd((int)arg, &prog);

		if (err)
			return err;
		err = perf_event_set_bpf(e, prog, 0);
		if (err)
			bpf_prog_put(prog);
		return err;
	}
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES: {
		struct perf_event_attr na;
		int err = perf_attr_copy((void *)arg, &na, &perf_limits);

		if (err)
			return err;
		return modify_attr(e, &na);
	}
	case PERF_EVENT_IOC_SET_FILTER:
		return perf_tp_set_filter(e, (const void *)arg);
	case PERF_EVENT_IOC_REFRESH:
		/* _perf_event_refresh: n more overflows, then off with POLL_HUP (0: no limit) */
		if (e->attr.inherit || !e->attr.sample_period)
			return -EINVAL;
		atomic_fetch_add(&perf_core(e)->event_limit, (int)arg);
		event_state_op(e, 1, false);
		return 0;
	default:
		return -ENOTTY;
	}
}

/* ---- poll / close ---- */

static unsigned int perf_poll(void *priv, struct ksvc_poll *pt)
{
	struct perf_event *e = priv;

	ksvc_poll_wait(pt, perf_core(e)->wq);
	return perf_output_poll(e) | (READ_ONCE(perf_core(e)->exited) ? POLLHUP : 0);
}

/* ---- owners: prctl PR_TASK_PERF_EVENTS_DISABLE / ENABLE ---- */

static void owner_set(struct perf_event *e)
{
	unsigned long f = spin_lock_irqsave(&perf_owner_lock);

	perf_core(e)->owner = ksvc_task_current();
	list_add_tail(&perf_owned, &perf_core(e)->owner_entry);
	spin_unlock_irqrestore(&perf_owner_lock, f);
}

static void owner_forget(struct perf_event *e)
{
	unsigned long f = spin_lock_irqsave(&perf_owner_lock);

	perf_core(e)->owner = NULL;
	list_del_init(&perf_core(e)->owner_entry);
	spin_unlock_irqrestore(&perf_owner_lock, f);
}

void perf_owner_exit(struct ksvc_task *t)
{
	struct list_node *n, *tmp;
	unsigned long f = spin_lock_irqsave(&perf_owner_lock);

	list_for_each_safe(n, tmp, &perf_owned) {
		struct perf_event_core *c = list_entry(n, struct perf_event_core, owner_entry);

		if (c->owner == t) {
			c->owner = NULL;
			list_del_init(&c->owner_entry);
		}
	}
	spin_unlock_irqrestore(&perf_owner_lock, f);
}

void perf_task_owned_enable(bool on)
{
	struct ksvc_task *me = ksvc_task_current();
	struct perf_event **ev = NULL;
	uint32_t n = 0, cap = 0;
	struct list_node *it;

	/* size the snapshot, then take it with a reference on each (more may come meanwhile:
	 * those are left alone, as if opened after the call) */
	unsigned long f = spin_lock_irqsave(&perf_owner_lock);

	list_for_each(it, &perf_owned)
		cap += list_entry(it, struct perf_event_core, owner_entry)->owner == me;
	spin_unlock_irqrestore(&perf_owner_lock, f);
	if (!cap)
		return;
	ev = ksvc_alloc(cap * sizeof(*ev));
	if (!ev)
		return;
	f = spin_lock_irqsave(&perf_owner_lock);
	list_for_each(it, &perf_owned) {
		struct perf_event_core *c = list_entry(it, struct perf_event_core, owner_entry);

		if (c->owner == me && n < cap) {
			atomic_fetch_add(&c->refs, 1);
			ev[n++] = perf_event_of(c);
		}
	}
	spin_unlock_irqrestore(&perf_owner_lock, f);
	for (uint32_t i = 0; i < n; i++) {
		event_state_op(ev[i], on ? 1 : 0, false);
		perf_event_put(ev[i]);
	}
	ksvc_free(ev);
}

static void perf_get(void *priv)
{
	atomic_fetch_add(&perf_core((struct perf_event *)priv)->refs, 1);
}

static void perf_release(void *priv)
{
	struct perf_event *e = priv;
	struct perf_event_core *c = perf_core(e);
	struct list_node *n;

	/* The fd's reference goes: take the event and its inherited children out.  Children
	 * are unhooked under perf_attach_lock, which the exit path folds them under. */
	for (;;) {
		unsigned long f = spin_lock_irqsave(&perf_attach_lock);

		spin_lock(&c->child_lock);
		n = list_pop_head(&c->children);
		spin_unlock(&c->child_lock);
		if (n)
			list_entry(n, struct perf_event_core, child_entry)->parent = NULL;
		spin_unlock_irqrestore(&perf_attach_lock, f);
		if (!n)
			break;
		struct perf_event *ch =
			perf_event_of(list_entry(n, struct perf_event_core, child_entry));

		perf_remove_event(ch);
		perf_event_put(ch);
		perf_event_put(e); /* the child's reference on its parent */
	}
	owner_forget(e);
	perf_remove_event(e);
	perf_output_release(e);
	perf_event_put(e);
}

static void perf_fasync(void *priv, struct ksvc_fasync *fa)
{
	struct perf_event_core *c = perf_core((struct perf_event *)priv);
	unsigned long f = spin_lock_irqsave(&c->child_lock);

	c->fasync = fa;
	spin_unlock_irqrestore(&c->child_lock, f);
}

static const struct ksvc_file_ops perf_fops = {
	.name = "[perf_event]",
	.get = perf_get,
	.release = perf_release,
	.read = perf_read,
	.ioctl = perf_ioctl,
	.poll = perf_poll,
	.mmap = perf_mmap,
	.mmap_phys = perf_mmap_phys,
	.mmap_open = perf_mmap_open,
	.mmap_close = perf_mmap_close,
	.fasync = perf_fasync,
};

int perf_event_get_fd(int fd, struct perf_event **out)
{
	void *p;
	int err = ksvc_fd_get(fd, &perf_fops, &p);

	if (err)
		return -EBADF; /* Linux's perf_event_get: not open, or not a perf event */
	*out = p;
	return 0;
}

int perf_event_get_task_fd(int tid, int fd, struct perf_event **out)
{
	void *p;
	int err = ksvc_task_fd_get(tid, fd, &perf_fops, &p);

	if (!err)
		*out = p;
	return err;
}

/* ---- perf_event_open ---- */

long perf_event_open(void *uattr, int pid, int cpu, int group_fd, unsigned long flags)
{
	struct perf_event_attr attr;
	struct perf_event *leader = NULL, *e = NULL, *output = NULL;
	struct perf_context *ctx = NULL;
	struct ksvc_fd_resv resv = { .fd = -1 };
	int cgroup_fd = -1;
	int err;

	perf_limits.nr_cpus = ksvc_nr_cpus();
	perf_limits.online_mask = 0;
	for (unsigned int i = 0; i < perf_limits.nr_cpus && i < 64; i++)
		if (ksvc_cpu_online(i))
			perf_limits.online_mask |= 1ull << i;
	err = perf_attr_decode(uattr, pid, cpu, flags, &perf_limits, &attr);
	if (err)
		return err;
	if (flags & PERF_FLAG_PID_CGROUP) {
		cgroup_fd = pid; /* a CPU event, counting only for that cgroup's tasks */
		pid = -1;
	}
	/* Linux's order: the fd is taken here (EMFILE before a bad group_fd), and installed
	 * last, when the event is complete: no other thread can reach (or close) it before. */
	err = ksvc_fd_reserve(&perf_fops, flags & PERF_FLAG_FD_CLOEXEC, &resv);
	if (err)
		return err;
	if (group_fd != -1) {
		void *p;

		err = ksvc_fd_get(group_fd, &perf_fops, &p);
		if (err) {
			ksvc_fd_cancel(&resv);
			return err == -EINVAL ? -EBADF : err;
		}
		/* As Linux 6.1: group_fd is the group's leader unless FD_NO_GROUP says not to
		 * join, and with FD_OUTPUT also the event whose ring takes the output (so
		 * FD_OUTPUT alone both joins and redirects). */
		leader = p;
		if (flags & PERF_FLAG_FD_OUTPUT) {
			output = leader;
			perf_get(output); /* a reference each for leader and output */
			/* Linux's perf_event_set_output runs before the new event has a context,
			 * so an output event that follows a task (cpu -1) never matches: EINVAL. */
			if (output->cpu != cpu || output->cpu == -1 || !perf_event_has_ring(output)) {
				perf_event_put(output);
				perf_event_put(leader);
				ksvc_fd_cancel(&resv);
				return -EINVAL;
			}
		}
		if (flags & PERF_FLAG_FD_NO_GROUP) {
			perf_event_put(leader);
			leader = NULL;
		}
	}
	e = perf_event_alloc(&attr, cpu);
	err = -ENOMEM;
	if (!e)
		goto err_leader;
	e->attach_task = pid != -1;
	if (pid != -1)
		e->target_tid = pid ? pid : ksvc_current_tid();
	/* Linux's order: the task (ESRCH), the allocation checks, the PMU, then the context. */
	if (pid > 0) {
		unsigned long f = spin_lock_irqsave(&perf_attach_lock);
		bool found = ksvc_task_find(pid) != NULL;

		spin_unlock_irqrestore(&perf_attach_lock, f);
		err = -ESRCH;
		if (!found)
			goto err_event;
	}
	err = perf_attr_check_alloc(&e->attr, cpu, pid != -1, &perf_limits);
	if (err)
		goto err_event;
	err = perf_pmu_init_event(e);
	if (err)
		goto err_event;
	/* perf_cgroup_connect: the cgroup's perf_event state (EBADF: no cgroup directory,
	 * ENOENT: none of its own, which only the root has here; kernel/cgroup.c), shared with
	 * the group's leader.  The root holds every task, so its event counts as a CPU event. */
	if (cgroup_fd != -1) {
		err = ksvc_cgroup_perf_get_fd(cgroup_fd, &e->cgrp);
		if (!err && leader && leader->cgrp != e->cgrp)
			err = -EINVAL;
		if (err)
			goto err_event;
	}
	if ((e->attr.sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    e->attr.sample_max_stack > perf_limits.max_stack) {
		err = -EOVERFLOW; /* get_callchain_buffers */
		goto err_event;
	}
	/* The target: a task (pid >= 0) or a CPU (pid == -1). */
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);

	if (pid != -1) {
		struct ksvc_task *t = pid == 0 ? ksvc_task_current() : ksvc_task_find(pid);

		err = -ESRCH;
		if (t)
			ctx = perf_task_ctx_get_locked(t, true);
		if (t && !ctx)
			err = -ENOMEM;
	} else {
		ctx = perf_cpu_ctx[cpu];
		atomic_fetch_add(&ctx->refs, 1);
	}
	spin_unlock_irqrestore(&perf_attach_lock, f);
	if (!ctx)
		goto err_event;
	perf_core(e)->ctx = ctx;
	err = perf_attr_check_pmu(&e->attr, e->pmu->caps);
	if (!err && e->attr.use_clockid)
		err = perf_attr_check_clockid(e->attr.clockid, e->pmu->caps);
	if (!err)
		err = perf_attr_check_cpu_online(cpu, pid != -1, &perf_limits);
	if (!err && leader) {
		struct perf_group_info gi = {
			.is_leader = leader->group_leader == leader,
			.inherit = leader->attr.inherit,
			.cpu = leader->cpu,
			.ctx = perf_core(leader)->ctx,
			.use_clockid = leader->attr.use_clockid,
			.clockid = leader->attr.clockid,
		};

		err = perf_attr_check_group_inherit(&e->attr, pid != -1, &gi);
		if (!err)
			err = perf_attr_check_group(&e->attr, cpu, ctx, &gi);
		if (!err && perf_core(leader)->exited)
			err = -EINVAL;
	}
	/* perf_event_validate_size: a sample of the group must fit a record, with room */
	if (!err && !perf_event_size_ok(&e->attr, leader ? leader->nr_siblings + 2 : 2))
		err = -E2BIG;
	if (err)
		goto err_event;
	/* Committed: the event goes live, and its fd last. */
	if (leader) {
		perf_event_init_group(e, leader);
		/* Linux gives a sibling the leader's state when the leader is off. */
	}
	perf_install_event(ctx, e);
	if (leader)
		perf_event_put(leader);
	if (output) {
		perf_set_output(e, output); /* checked above: the target has a ring */
		perf_event_put(output);
	}
	owner_set(e);
	return ksvc_fd_commit(&resv, e); /* the fd owns the event's first reference */

err_event:
	perf_event_put(e); /* drops the context reference too */
err_leader:
	if (leader)
		perf_event_put(leader);
	if (output)
		perf_event_put(output);
	ksvc_fd_cancel(&resv);
	return err;
}
