/*
 * output.c - what perf events write: the mmap'd ring (1 + 2^n pages, the user page kept as
 * Linux keeps it), PERF_RECORD_SAMPLE from the PMU overflow interrupt with frame-pointer
 * callchains, side-band records (COMM, MMAP2, FORK, EXIT) for the task and CPU contexts, and
 * poll readiness (POLLIN with data, POLLHUP once the task exited).
 *
 * As Linux, an inherited event writes into its parent's ring, and a ring outlives close() as
 * long as it is mapped.  Frequency mode and throttling follow Linux 6.1 (perf_adjust_period,
 * __perf_event_account_interrupt, perf_adjust_freq_unthr_context).  Not yet: cpu-clock
 * sampling from a timer, PERF_SAMPLE_STACK_USER contents, SET_OUTPUT redirection (refused
 * with EINVAL at mmap), the AUX area (an mmap at a non-zero offset gets EINVAL).
 */
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <asm/siginfo.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <perf/perf.h>
#include "perf_internal.h"

#define USER_TOP (1ull << 48)
#define PERF_TICK_HZ 250 /* the scheduler tick: max_samples_per_tick = rate / HZ */
#define PERF_TICK_NS (1000000000ull / PERF_TICK_HZ)

static void log_throttle(struct perf_event *e, bool unthrottle);

/* ---- ring lifetime and the user page ---- */

static struct perf_ring *event_ring_get(struct perf_event *e)
{
	struct perf_event *owner = perf_core(e)->parent ? perf_core(e)->parent : e;
	unsigned long f = spin_lock_irqsave(&perf_core(owner)->child_lock);
	struct perf_ring *r = owner->ring;

	if (r)
		perf_ring_get(r);
	spin_unlock_irqrestore(&perf_core(owner)->child_lock, f);
	return r;
}

/*
 * The user page as Linux's perf_event_update_userpage + arm64's arch_perf_update_userpage:
 * while the event is on a counter of this CPU and EL0 may read it (rdpmc), index is the
 * counter + 1 and count = offset + the counter's value (pmc_width bits).  [c]
 */
static void update_userpage(struct perf_event *e, struct perf_ring *r)
{
	struct perf_time_conv tc;
	struct perf_userpage_event ev = { 0 };
	uint32_t freq;
	uint64_t cyc, ns;

	ksvc_clock_info(&freq, &cyc, &ns);
	perf_time_conv_init(&tc, freq, 56, cyc, ns);
	if (e->state == PERF_EVENT_STATE_ACTIVE && e->pmu->event_idx)
		ev.index = (uint32_t)e->pmu->event_idx(e);
	ev.offset = (int64_t)atomic_load(&e->count);
	if (ev.index)
		ev.offset -= (int64_t)e->hw.prev_count;
	ev.time_enabled = e->time_enabled;
	ev.time_running = e->time_running;
	ev.pmc_width = (e->hw.flags & PERF_HW_64BIT) ? 64 : 32;
	ev.cap_user_rdpmc = (e->hw.flags & PERF_HW_USER_READ) != 0; /* the index says if it works */
	perf_ring_update_userpage(r, &ev, &tc, ns);
}

void perf_event_update_userpage_locked(struct perf_event *e)
{
	perf_event_assert_locked(e);
	if (e->ring && perf_core(e)->own_ring)
		update_userpage(e, e->ring);
}

int perf_mmap(void *priv, struct ksvc_mmap *m)
{
	struct perf_event *e = priv;
	struct perf_event_core *c = perf_core(e);
	uint64_t pages = m->len / KSVC_PAGE_SIZE, nr;
	struct perf_ring *r, *fresh = NULL;
	int err = 0;

	if (!m->shared || m->pgoff != 0 || pages == 0)
		return -EINVAL;
	if (e->cpu == -1 && e->attr.inherit)
		return -EINVAL; /* Linux: no mmap of inherited per-task counters */
	nr = pages - 1;
	if (nr & (nr - 1))
		return -EINVAL; /* data pages must be a power of two */
	if (c->parent)
		return -EINVAL; /* inherited events have no fd to map */
	if (!e->ring) {
		uint32_t wm = e->attr.watermark ? e->attr.wakeup_watermark : 0;

		err = perf_ring_create((uint32_t)nr, wm, !m->write, &fresh);
		if (err)
			return err;
		fresh->backward = e->attr.write_backward;
	}
	unsigned long f = spin_lock_irqsave(&c->child_lock);

	r = e->ring;
	if (!r && fresh) {
		r = e->ring = fresh; /* the event's reference */
		c->own_ring = true;
		fresh = NULL;
	}
	if (r && r->nr_pages != nr)
		err = -EINVAL;
	else
		perf_ring_get(r); /* the mapping's reference */
	spin_unlock_irqrestore(&c->child_lock, f);
	if (fresh)
		perf_ring_put(fresh);
	if (err)
		return err;
	update_userpage(e, r);
	m->map_priv = r;
	return 0;
}

uint64_t perf_mmap_phys(void *priv, void *map_priv, uint64_t pgoff)
{
	struct perf_ring *r = map_priv;

	(void)priv;
	return pgoff <= r->nr_pages ? perf_ring_page_phys(r, pgoff) : 0;
}

void perf_mmap_open(void *priv, void *map_priv)
{
	(void)priv;
	perf_ring_get(map_priv);
}

void perf_mmap_close(void *priv, void *map_priv)
{
	(void)priv;
	perf_ring_put(map_priv);
}

void perf_output_release(struct perf_event *e)
{
	perf_set_output(e, NULL);
	unsigned long f = spin_lock_irqsave(&perf_core(e)->child_lock);
	struct perf_ring *r = e->ring;

	e->ring = NULL;
	spin_unlock_irqrestore(&perf_core(e)->child_lock, f);
	if (r)
		perf_ring_put(r);
}

bool perf_event_has_ring(struct perf_event *e)
{
	struct perf_ring *r = event_ring_get(e);

	if (r)
		perf_ring_put(r);
	return r != NULL;
}

int perf_set_output(struct perf_event *e, struct perf_event *out)
{
	struct perf_event_core *c = perf_core(e);
	struct perf_ring *r = NULL, *old;
	struct perf_event *old_out;
	unsigned long f;

	if (out) {
		if (out == e || out->cpu != e->cpu ||
		    (out->cpu == -1 && perf_core(out)->ctx != c->ctx) ||
		    out->attr.use_clockid != e->attr.use_clockid ||
		    (out->attr.use_clockid && out->attr.clockid != e->attr.clockid))
			return -EINVAL;
		r = event_ring_get(out); /* the target must have a ring (be mapped) */
		if (!r)
			return -EINVAL;
	}
	f = spin_lock_irqsave(&c->child_lock);
	if (c->own_ring && e->ring) {
		spin_unlock_irqrestore(&c->child_lock, f);
		if (r)
			perf_ring_put(r);
		return -EBUSY; /* its own ring is mapped */
	}
	old = e->ring;
	old_out = c->output;
	e->ring = r; /* the reference event_ring_get took */
	c->output = out;
	if (out)
		atomic_fetch_add(&perf_core(out)->refs, 1);
	spin_unlock_irqrestore(&c->child_lock, f);
	if (old)
		perf_ring_put(old);
	if (old_out)
		perf_event_put(old_out);
	return 0;
}

/* Wake the readers of e's ring: e's and, when redirected, its output event's. */
static void ring_wake(struct perf_event *e)
{
	struct perf_event *owner = perf_core(e)->parent ? perf_core(e)->parent : e;

	ksvc_waitq_wake_all(perf_core(owner)->wq);
	if (perf_core(owner)->output)
		ksvc_waitq_wake_all(perf_core(perf_core(owner)->output)->wq);
}

unsigned int perf_output_poll(struct perf_event *e)
{
	struct perf_ring *r = event_ring_get(e);
	unsigned int mask = POLLHUP; /* perf_poll: without a ring there is nothing to wait for */

	if (r) {
		mask = perf_ring_unread(r) ? POLLIN | POLLRDNORM : 0;
		perf_ring_put(r);
	}
	return mask;
}

static void ring_wake(struct perf_event *e);

/* ---- samples ---- */

static void fill_sid(struct perf_event *e, struct perf_sample_id *sid)
{
	sid->pid = (uint32_t)ksvc_current_tgid();
	sid->tid = (uint32_t)ksvc_current_tid();
	sid->time = ksvc_clock_ns();
	sid->id = e->primary_id;
	sid->stream_id = e->id;
	sid->cpu = ksvc_cpu_id();
}

/* Frame-pointer walk: {fp, lr} records, stopping at a bad or hostile frame. */
static unsigned int walk_frames(uint64_t *out, unsigned int room, uint64_t fp, bool user)
{
	unsigned int n = 0;

	while (n < room && fp && !(fp & 7)) {
		uint64_t rec[2];

		if (user ? fp >= USER_TOP : fp < USER_TOP)
			break;
		if (ksvc_read_pair_nofault(rec, fp, user))
			break;
		if (!rec[1])
			break;
		out[n++] = rec[1];
		if (rec[0] <= fp)
			break; /* frames grow upwards: a loop or a forged chain ends here */
		fp = rec[0];
	}
	return n;
}

static unsigned int build_callchain(struct perf_event *e, const uint64_t *regs, bool user,
				    uint64_t *chain, unsigned int room)
{
	unsigned int n = 0, max = e->attr.sample_max_stack ? e->attr.sample_max_stack : 127;
	uint64_t uregs[PERF_REGS_NR];

	if (max + 4 < room)
		room = max + 4;
	if (!user && !e->attr.exclude_callchain_kernel) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		chain[n++] = regs[PERF_REG_ARM64_PC];
		n += walk_frames(chain + n, room - n - 2, regs[PERF_REGS_FP], false);
	}
	if (!e->attr.exclude_callchain_user && n + 2 < room) {
		if (!user) {
			ksvc_user_regs(uregs);
			regs = uregs;
			if (!regs[PERF_REG_ARM64_PC])
				return n; /* a kernel thread */
		}
		chain[n++] = PERF_CONTEXT_USER;
		chain[n++] = regs[PERF_REG_ARM64_PC];
		n += walk_frames(chain + n, room - n, regs[PERF_REGS_FP], true);
	}
	return n;
}

/* sample_type bits whose perf_sample_data fields output_sample fills itself */
#define SAMPLE_FILLED                                                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |             \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |              \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |          \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* defer_wake: wake the readers from pending_work instead of here (a tracepoint may fire
 * inside the scheduler's wakeup path, under the very locks a wakeup takes). */
static int output_sample(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user,
			 uint64_t addr, const void *raw, uint32_t raw_size, bool defer_wake)
{
	uint64_t st = e->attr.sample_type;
	struct perf_sample_data d;
	uint64_t uregs[PERF_REGS_NR], chain[160];
	struct perf_ring_handle h;
	struct perf_ring_writer w;
	struct perf_read_entry rent;
	struct perf_read_values rv;
	/* as event_ring_get, but the ring is used under the lock instead of with a reference: the
	 * owner's pointer keeps it alive until perf_output_release or SET_OUTPUT, which take it */
	struct perf_event *owner = perf_core(e)->parent ? perf_core(e)->parent : e;
	struct perf_ring *r;
	unsigned long f;
	bool wake = false;
	int err = 0;

	if (!READ_ONCE(owner->ring))
		return -ENOSPC; /* not mapped (a racing mmap only makes this sample the last lost) */
	/* the fields we have no data for read as zero; the rest are all set below */
	if (st & ~SAMPLE_FILLED)
		memset(&d, 0, sizeof(d));
	fill_sid(e, &d.sid);
	d.ip = regs[PERF_REG_ARM64_PC];
	d.period = period;
	d.addr = addr;
	d.raw = raw;
	d.raw_size = raw_size;
	d.read = NULL;
	if (st & PERF_SAMPLE_READ) {
		/* this event's own values (the group form reads as one entry: no siblings here) */
		rent.value = atomic_load(&e->count);
		rent.id = e->primary_id;
		rent.lost = atomic_load(&e->lost_samples);
		rv.time_enabled = e->time_enabled;
		rv.time_running = e->time_running;
		rv.nr = 1;
		rv.ent = &rent;
		d.read = &rv;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		d.callchain = chain;
		d.callchain_nr = build_callchain(e, regs, user, chain, 160);
	}
	if (st & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) {
		/* perf_sample_regs_user: the user state (a kernel thread has none) */
		if (user) {
			d.regs_user = regs;
		} else {
			ksvc_user_regs(uregs);
			d.regs_user = uregs;
		}
		d.regs_user_abi = user || uregs[PERF_REG_ARM64_PC] || uregs[PERF_REG_ARM64_SP] ? PERF_SAMPLE_REGS_ABI_64
								 : PERF_SAMPLE_REGS_ABI_NONE;
	}
	d.stack_user_size = 0; /* d is not cleared when every field is one we fill */
	size_t size = perf_sample_size(&e->attr, &d);

	if (st & PERF_SAMPLE_STACK_USER) {
		/* last, as perf_prepare_sample: the dump takes what the u16 size leaves; the
		 * fields before it count (Linux's header->size at that point, without the 8-byte
		 * size field that perf_sample_size counted already) */
		size_t before = size - 8;

		d.stack_user_sp = d.regs_user[PERF_REG_ARM64_SP];
		d.stack_user_size = before > 0xffff ? 0
			: perf_sample_ustack_size((uint16_t)e->attr.sample_stack_user, (uint16_t)before,
						  d.regs_user_abi != PERF_SAMPLE_REGS_ABI_NONE,
						  d.stack_user_sp, PERF_USER_TASK_SIZE);
		size = perf_sample_size(&e->attr, &d);
	}
	w.sample_type = st;
	w.sample_id_all = e->attr.sample_id_all;
	w.sid = d.sid;

	f = spin_lock_irqsave(&perf_core(owner)->child_lock);
	r = owner->ring;
	if (r && perf_ring_output_begin(r, &h, size, &w) == 0) {
		perf_sample_write(&h.out, &e->attr, &d, perf_sample_misc(user, false), size);
		wake = perf_ring_output_end(&h, e->attr.watermark ? 0 : e->attr.wakeup_events);
	} else {
		if (r)
			atomic_fetch_add(&e->lost_samples, 1);
		err = -ENOSPC;
	}
	spin_unlock_irqrestore(&perf_core(owner)->child_lock, f);
	if (wake && defer_wake) {
		atomic_store(&perf_core(e)->pending_wake, true);
		ksvc_irq_work_queue(&perf_core(e)->pending_work);
	} else if (wake) {
		ring_wake(e);
	}
	return err;
}

void perf_output_sample(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user)
{
	/* the program check stays inline: the common case has none */
	if (!READ_ONCE(perf_core(e)->prog) || perf_bpf_filter(e, period, regs, 0))
		output_sample(e, period, regs, user, 0, NULL, 0, false);
}

long perf_output_raw(struct perf_event *e, const uint64_t *regs, bool user, const void *raw,
		     uint32_t size)
{
	return output_sample(e, 1, regs, user, 0, raw, size, false);
}

long perf_bpf_callchain(const uint64_t *regs, bool regs_user, bool user, uint64_t *ips,
			uint32_t max)
{
	uint64_t uregs[PERF_REGS_NR];

	if (!max)
		return 0;
	if (!user) {
		if (regs_user)
			return 0; /* no kernel frames under a user-mode sample */
		ips[0] = regs[PERF_REG_ARM64_PC];
		return 1 + walk_frames(ips + 1, max - 1, regs[PERF_REGS_FP], false);
	}
	if (!regs_user) {
		ksvc_user_regs(uregs);
		regs = uregs;
		if (!regs[PERF_REG_ARM64_PC])
			return 0; /* a kernel thread */
	}
	ips[0] = regs[PERF_REG_ARM64_PC];
	return 1 + walk_frames(ips + 1, max - 1, regs[PERF_REGS_FP], true);
}

/* An overflow in process context: false to go on with the sample, true when the event is
 * throttled.  __perf_event_account_interrupt: every overflow counts toward the tick's limit,
 * but only a second one from the same occurrence (throttle) may throttle. */
static bool process_overflow_throttled(struct perf_event *e, bool throttle)
{
	struct perf_event_core *c = perf_core(e);
	uint32_t max = (perf_limits.max_sample_rate + PERF_TICK_HZ - 1) / PERF_TICK_HZ;

	if (c->throttled)
		return true;
	if (++c->interrupts >= max && throttle) {
		c->throttled = true;
		log_throttle(e, false);
	}
	return false;
}

/* A software event's period elapsed in process context (a page fault, a context switch):
 * the sample shows the task's user state; addr is the fault address for page faults. */
void perf_sw_sample(struct perf_event *e, uint64_t addr, bool throttle)
{
	uint64_t regs[PERF_REGS_NR];
	struct perf_event_core *c = perf_core(e);

	if (process_overflow_throttled(e, throttle))
		return;
	ksvc_user_regs(regs);
	if (!READ_ONCE(c->prog) || perf_bpf_filter(e, e->hw.sample_period, regs, addr))
		output_sample(e, e->hw.sample_period, regs, regs[PERF_REG_ARM64_PC] != 0, addr, NULL, 0, false);
	if (perf_overflow_notify(e, addr))
		e->pmu->stop(e, 0); /* the REFRESH limit: no more counts until it is refreshed */
}

void perf_tp_sample(struct perf_event *e, const struct perf_tp_hit *hit, bool throttle)
{
	if (process_overflow_throttled(e, throttle))
		return;
	output_sample(e, e->hw.sample_period, hit->regs, hit->user, 0, hit->rec, hit->size, true);
	if (perf_overflow_notify(e, 0))
		e->pmu->stop(e, 0);
}

/* ---- side-band records ---- */

enum sb_kind { SB_COMM, SB_MMAP, SB_TASK };

struct sb_req {
	enum sb_kind kind;
	const char *comm;
	bool exec;
	const struct perf_mmap_info *mm;
	uint32_t task_type, pid, ppid, tid, ptid;
};

static bool wants(const struct perf_event *e, const struct sb_req *q)
{
	if (e->state < PERF_EVENT_STATE_INACTIVE)
		return false;
	switch (q->kind) {
	case SB_COMM:
		return e->attr.comm;
	case SB_MMAP:
		/* perf_event_mmap_match: exec maps for mmap/mmap2, the others for mmap_data */
		return q->mm->exec ? e->attr.mmap || e->attr.mmap2 : e->attr.mmap_data;
	case SB_TASK:
		return e->attr.task;
	}
	return false;
}

static void sb_emit_one(struct perf_event *e, const struct sb_req *q, uint8_t *buf, size_t cap)
{
	struct perf_sb_target t = { e->attr.sample_type, e->attr.sample_id_all, { 0 } };
	struct perf_ring_writer w;
	size_t n = 0;
	bool wake = false;

	fill_sid(e, &t.sid);
	switch (q->kind) {
	case SB_COMM:
		/* perf_event_comm: an exec's COMM is marked COMM_EXEC whatever attr.comm_exec says
		 * (that bit only tells the kernel the reader knows the flag) */
		n = perf_sb_comm(buf, cap, &t, t.sid.pid, t.sid.tid, q->comm, q->exec);
		break;
	case SB_MMAP:
		n = perf_sb_mmap(buf, cap, &t, q->mm, e->attr.mmap2);
		break;
	case SB_TASK:
		n = perf_sb_task(buf, cap, &t, q->task_type, q->pid, q->ppid, q->tid, q->ptid,
				 t.sid.time);
		break;
	}
	if (!n || n > cap)
		return;
	struct perf_ring *r = event_ring_get(e);

	if (!r)
		return;
	w.sample_type = t.sample_type;
	w.sample_id_all = t.sample_id_all;
	w.sid = t.sid;
	perf_ring_write(r, buf, n, &w, &wake);
	if (wake)
		ring_wake(e);
	perf_ring_put(r);
}

static void sb_ctx(struct perf_context *ctx, const struct sb_req *q, uint8_t *buf, size_t cap)
{
	struct list_node *n;
	unsigned long f = spin_lock_irqsave(&ctx->sched.lock);
	int cpu = (int)ksvc_cpu_id();

	list_for_each(n, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(n, struct perf_event_core, event_entry));

		/* event_filter_match: an event bound to another CPU hears nothing here */
		if (e->cpu != -1 && e->cpu != cpu)
			continue;
		if (wants(e, q))
			sb_emit_one(e, q, buf, cap);
	}
	spin_unlock_irqrestore(&ctx->sched.lock, f);
}

/* The current task's context and this CPU's (Linux's perf_iterate_sb). */
static void sb_emit(const struct sb_req *q)
{
	size_t cap = 512 + (q->mm && q->mm->filename ? strnlen(q->mm->filename, 4096) : 0);
	uint8_t *buf = ksvc_alloc(cap);
	struct perf_context *tc;

	if (!buf)
		return;
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);

	tc = perf_task_ctx_get_locked(ksvc_task_current(), false);
	spin_unlock_irqrestore(&perf_attach_lock, f);
	if (tc) {
		sb_ctx(tc, q, buf, cap);
		perf_ctx_put(tc);
	}
	unsigned int cpu = ksvc_cpu_id();

	if (perf_cpu_ctx[cpu])
		sb_ctx(perf_cpu_ctx[cpu], q, buf, cap);
	ksvc_free(buf);
}

void perf_task_comm(const char *comm, bool exec)
{
	struct sb_req q = { .kind = SB_COMM, .comm = comm, .exec = exec };

	sb_emit(&q);
}

void perf_task_mmap(const struct perf_mmap_info *m)
{
	struct sb_req q = { .kind = SB_MMAP, .mm = m };

	sb_emit(&q);
}

void perf_task_sb_task(bool fork, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct sb_req q = { .kind = SB_TASK,
			    .task_type = fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT,
			    .pid = pid,
			    .ppid = ppid,
			    .tid = tid,
			    .ptid = ptid };

	sb_emit(&q);
}

/* ---- throttling and frequency mode ---- */

static void log_throttle(struct perf_event *e, bool unthrottle)
{
	uint8_t buf[128];
	struct perf_sb_target t = { e->attr.sample_type, e->attr.sample_id_all, { 0 } };
	struct perf_ring_writer w;
	bool wake = false;

	fill_sid(e, &t.sid);
	size_t n = perf_sb_throttle(buf, sizeof(buf), &t, unthrottle, t.sid.time, e->primary_id,
				    e->id);
	struct perf_ring *r = event_ring_get(e);

	if (!r)
		return;
	if (n && n <= sizeof(buf)) {
		w.sample_type = t.sample_type;
		w.sample_id_all = t.sample_id_all;
		w.sid = t.sid;
		perf_ring_write(r, buf, n, &w, &wake);
	}
	perf_ring_put(r);
}

static void adjust_period(struct perf_event *e, uint64_t nsec, uint64_t count)
{
	perf_freq_adjust_period(&e->hw, e->attr.sample_freq, nsec, count);
}

/* ---- overflow notification: REFRESH, sigtrap, O_ASYNC ---- */

bool perf_overflow_notify(struct perf_event *e, uint64_t addr)
{
	struct perf_event_core *c = perf_core(e);
	struct perf_event *top = c->parent ? c->parent : e;
	struct perf_event_core *tc = perf_core(top);
	int limit = atomic_load(&c->event_limit);
	bool stop = false;

	/* the REFRESH count: its last overflow stops the event and hangs up */
	if (limit && atomic_fetch_sub(&c->event_limit, 1) == 1) {
		stop = true;
		atomic_store(&c->pending_disable, true);
	}
	if (e->attr.sigtrap) {
		c->pending_addr = addr;
		atomic_store(&c->pending_sigtrap, true);
	}
	if (stop || e->attr.sigtrap)
		ksvc_irq_work_queue(&c->pending_work);
	/* the O_ASYNC owner hears of every overflow (the parent's file for an inherited one) */
	if (READ_ONCE(tc->fasync)) {
		if (stop)
			atomic_store(&tc->pending_kill, POLL_HUP);
		else
			atomic_compare_exchange_strong(&tc->pending_kill, &(int){ 0 }, POLL_IN);
		ksvc_irq_work_queue(&tc->pending_work);
	}
	return stop;
}

/* Interrupts masked, no lock held: Linux's perf_pending_irq. */
void perf_pending_work(struct ksvc_irq_work *w)
{
	struct perf_event_core *c = container_of(w, struct perf_event_core, pending_work);
	struct perf_event *e = perf_event_of(c);
	int kill;

	if (atomic_exchange(&c->pending_disable, false))
		perf_event_disable_inatomic(e);
	/* perf_sigtrap: only to the event's own task, and only while it is the one running */
	if (atomic_exchange(&c->pending_sigtrap, false) && c->ctx && c->ctx->task &&
	    c->ctx->task == ksvc_task_current())
		ksvc_send_sig_perf(c->pending_addr, e->attr.type, e->attr.sig_data);
	if (atomic_exchange(&c->pending_wake, false))
		ring_wake(e);
	kill = atomic_exchange(&c->pending_kill, 0);
	if (kill) {
		unsigned long f = spin_lock_irqsave(&c->child_lock);

		if (c->fasync)
			ksvc_kill_fasync(c->fasync, kill);
		spin_unlock_irqrestore(&c->child_lock, f);
	}
}

bool perf_event_overflow(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user)
{
	struct perf_event_core *c = perf_core(e);
	uint32_t max = (perf_limits.max_sample_rate + PERF_TICK_HZ - 1) / PERF_TICK_HZ;
	bool throttle = false;

	if (++c->interrupts >= max && !c->throttled) {
		c->throttled = true;
		throttle = true;
		log_throttle(e, false);
	}
	if (e->attr.freq) {
		uint64_t now = ksvc_clock_ns();
		uint64_t delta = now - c->freq_time_stamp;

		c->freq_time_stamp = now;
		if (delta > 0 && delta < 2 * PERF_TICK_NS)
			adjust_period(e, delta, period);
	}
	perf_output_sample(e, period, regs, user);
	return perf_overflow_notify(e, 0) || throttle;
}

void perf_adjust_freq_unthr_locked(struct perf_context *ctx)
{
	spin_assert_held(&ctx->sched.lock);
	struct list_node *n;

	list_for_each(n, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(n, struct perf_event_core, event_entry));
		struct perf_event_core *c = perf_core(e);

		if (e->state != PERF_EVENT_STATE_ACTIVE || !(e->attr.sample_period || e->attr.freq))
			continue;
		c->interrupts = 0;
		if (c->throttled) {
			c->throttled = false;
			log_throttle(e, true);
			e->pmu->start(e, PERF_EF_RELOAD);
		}
		if (e->attr.freq) {
			/* the count over the last tick re-tunes the period (a fast start from 1) */
			e->pmu->read(e);
			uint64_t now = atomic_load(&e->count);
			uint64_t delta = now - c->freq_count_stamp;

			c->freq_count_stamp = now;
			if (delta)
				adjust_period(e, PERF_TICK_NS, delta);
		}
	}
}
