/*
 * sw.c - the software PMU (PERF_TYPE_SOFTWARE).  What each config counts, whether it samples
 * and why some stay 0 (as on arm64 Linux) is the table in <perf/sw_events.h>: the clocks
 * (cpu-clock, task-clock) count nanoseconds while the event is on, the kernel's occurrences
 * (page faults through perf_sw_event(), switches and migrations from the switch hook) come in
 * through perf_sw_count_locked, bpf-output carries the records BPF programs write
 * (bpf_attach.c).  Software events never fail to go on, so groups of them are never
 * multiplexed.  A sampling clock event samples from a one-shot timer re-armed every period
 * (ns), as Linux's perf_swevent_hrtimer; in frequency mode it becomes a fixed period of
 * 1e9 / freq, at least 10 us, as Linux does.
 */
#include <linux/perf_event.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <perf/sw_events.h>
#include "perf_internal.h"

/* What sw_events.h says of e's config, as sw_event_init recorded it. */
static bool is_clock(struct perf_event *e)
{
	return perf_core(e)->sw_clock;
}

static uint64_t clock_now(struct perf_event *e)
{
	struct perf_context *ctx = perf_core(e)->ctx;

	/* task-clock follows its context's time (the task's run time); cpu-clock wall time */
	if (e->attr.config == PERF_COUNT_SW_TASK_CLOCK && ctx && ctx->task) {
		uint64_t now = ksvc_clock_ns();

		return ctx->time + (ctx->active ? now - ctx->tstamp : 0);
	}
	return ksvc_clock_ns();
}

static void sw_read(struct perf_event *e);

static bool is_sampling(const struct perf_event *e)
{
	return e->attr.sample_period != 0; /* sample_freq shares the field */
}

static void clock_timer_fn(void *arg, const uint64_t *regs, bool user)
{
	struct perf_event *e = arg;
	uint64_t period = e->hw.sample_period;

	if (e->hw.state & PERF_HES_STOPPED)
		return;
	sw_read(e);
	if (perf_event_overflow(e, period, regs, user))
		return; /* throttled: the tick's unthrottle restarts it */
	/* A fixed schedule, as hrtimer_forward: the time spent sampling does not add up. */
	uint64_t now = ksvc_clock_ns();
	struct perf_event_core *c = perf_core(e);

	c->sw_deadline += period;
	if (c->sw_deadline <= now)
		c->sw_deadline = now + period; /* fell behind: skip the missed expiries */
	ksvc_timer_start(c->sw_timer, c->sw_deadline - now);
}

/* A sampling clock event: its period in ns (freq mode: 1e9 / freq) and its timer.  Out of
 * line (cold), so that opening a counting event sets up no stack frame. */
static __attribute__((noinline, cold)) int clock_sampling_init(struct perf_event *e)
{
	if (e->attr.freq) {
		e->attr.sample_period = 1000000000ull / e->attr.sample_freq;
		e->attr.freq = 0;
	}
	if (e->attr.sample_period < 10000)
		e->attr.sample_period = 10000;
	e->hw.sample_period = e->hw.last_period = e->attr.sample_period;
	perf_core(e)->sw_timer = ksvc_timer_alloc(clock_timer_fn, e);
	return perf_core(e)->sw_timer ? 0 : -ENOMEM;
}

static int sw_event_init(struct perf_event *e)
{
	const struct perf_sw_event_desc *d = perf_sw_event_desc(e->attr.config);

	if (e->attr.type != PERF_TYPE_SOFTWARE || !d)
		return -ENOENT;
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP; /* perf_swevent_init: has_branch_stack */
	perf_core(e)->sw_clock = d->source == PERF_SW_CLOCK;
	if (!is_sampling(e))
		return 0;
	if (is_clock(e))
		return clock_sampling_init(e);
	/* counting events in freq mode sample every event first (Linux adjusts later) */
	if (e->attr.freq)
		e->hw.sample_period = e->hw.last_period = 1;
	return 0;
}

static void sw_read(struct perf_event *e)
{
	if (!is_clock(e) || (e->hw.state & PERF_HES_STOPPED))
		return;
	uint64_t now = clock_now(e);
	uint64_t prev = perf_core(e)->sw_prev;

	perf_core(e)->sw_prev = now;
	atomic_fetch_add(&e->count, now - prev);
}

static void sw_start(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = 0;
	if (is_clock(e))
		perf_core(e)->sw_prev = clock_now(e);
	if (perf_core(e)->sw_timer) {
		perf_core(e)->sw_deadline = ksvc_clock_ns() + e->hw.sample_period;
		ksvc_timer_start(perf_core(e)->sw_timer, e->hw.sample_period);
	}
}

static void sw_stop(struct perf_event *e, int flags)
{
	(void)flags;
	sw_read(e);
	e->hw.state = PERF_HES_STOPPED;
	if (perf_core(e)->sw_timer)
		ksvc_timer_cancel(perf_core(e)->sw_timer);
}

static int sw_add(struct perf_event *e, int flags)
{
	e->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		sw_start(e, flags);
	return 0;
}

static void sw_del(struct perf_event *e, int flags)
{
	sw_stop(e, flags);
}

static struct perf_pmu sw_pmu = {
	.name = "software",
	.caps = PERF_PMU_CAP_SOFTWARE | PERF_PMU_CAP_NO_NMI,
	.event_init = sw_event_init,
	.add = sw_add,
	.del = sw_del,
	.start = sw_start,
	.stop = sw_stop,
	.read = sw_read,
};

struct perf_pmu *perf_sw_pmu(void)
{
	return &sw_pmu;
}

void perf_sw_count_locked(struct perf_context *ctx, uint32_t config, uint64_t n, uint64_t addr,
			  bool in_kernel)
{
	spin_assert_held(&ctx->sched.lock);
	struct list_node *it;

	list_for_each(it, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(it, struct perf_event_core, event_entry));

		if (e->attr.type != PERF_TYPE_SOFTWARE || e->state != PERF_EVENT_STATE_ACTIVE ||
		    (e->hw.state & PERF_HES_STOPPED))
			continue; /* off, or stopped by its REFRESH limit */
		if (in_kernel && e->attr.exclude_kernel)
			continue;
		if (e->attr.config != config)
			continue;
		atomic_fetch_add(&e->count, n);
		/* sampling with a period (perf_swevent_event): one sample per period elapsed */
		if (e->attr.sample_period && !is_clock(e)) {
			bool more = false;

			e->hw.period_left -= (int64_t)n;
			while (e->hw.period_left <= 0) {
				e->hw.period_left += (int64_t)e->hw.sample_period;
				perf_sw_sample(e, addr, more);
				more = true;
			}
		}
	}
}
