/*
 * overflow.c - what happens when an event's period elapses, Linux 6.1's
 * __perf_event_overflow: the throttle accounting (__perf_event_account_interrupt: more than
 * max_sample_rate / HZ overflows in one tick stop the event until the next tick, with
 * THROTTLE/UNTHROTTLE records), the frequency mode's period (perf_adjust_period, per overflow
 * and per tick: perf_adjust_freq_unthr_context), the BPF program that may drop the sample
 * (bpf_attach.c), the sample itself (sample.c), and the notifications that follow it: the
 * REFRESH limit, sigtrap and the O_ASYNC signal, deferred to the event's pending_work.
 *
 * Entry points: perf_event_overflow from an interrupt (the PMU's, pmuv3.c; a cpu-clock timer,
 * sw.c), perf_sw_sample and perf_tp_sample from process context (a counted software event or
 * tracepoint reached its period).  None allocates or sleeps.  The [p] fields they use belong
 * to the CPU the event is active on, with interrupts masked.
 */
#include <linux/perf_event.h>
#include <asm/siginfo.h>
#include <kern/compiler.h>
#include <kern/ksvc.h>
#include "perf_internal.h"

#define PERF_TICK_HZ 250 /* the scheduler tick: max_samples_per_tick = rate / HZ */
#define PERF_TICK_NS (1000000000ull / PERF_TICK_HZ)

static uint32_t max_samples_per_tick(void)
{
	return (perf_limits.max_sample_rate + PERF_TICK_HZ - 1) / PERF_TICK_HZ;
}

static void adjust_period(struct perf_event *e, uint64_t nsec, uint64_t count)
{
	perf_freq_adjust_period(&e->hw, e->attr.sample_freq, nsec, count);
}

/* ---- from an interrupt ---- */

/* The PMU interrupt (pmuv3.c) or a cpu-clock timer (sw.c) found e's period elapsed; regs are
 * the registers the interrupt interrupted (user: in user mode).  true: stop the counter. */
bool perf_event_overflow(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user)
{
	struct perf_event_core *c = perf_core(e);
	bool throttle = false;

	if (++c->interrupts >= max_samples_per_tick() && !c->throttled) {
		c->throttled = true;
		throttle = true;
		perf_event_log_throttle(e, false);
	}
	if (e->attr.freq) {
		uint64_t now = ksvc_clock_ns();
		uint64_t delta = now - c->freq_time_stamp;

		c->freq_time_stamp = now;
		if (delta > 0 && delta < 2 * PERF_TICK_NS)
			adjust_period(e, delta, period);
	}
	/* the program check stays inline: the common case has none */
	if (!READ_ONCE(c->prog) || perf_bpf_filter_masked(e, period, regs, 0))
		perf_sample_output(e, period, regs, user, 0, NULL, 0, false);
	return perf_overflow_notify(e, 0) || throttle;
}

/* ---- from process context: software events and tracepoints ---- */

/* An overflow in process context: false to go on with the sample, true when the event is
 * throttled.  __perf_event_account_interrupt: every overflow counts toward the tick's limit,
 * but only a second one from the same occurrence (throttle) may throttle. */
static bool process_overflow_throttled(struct perf_event *e, bool throttle)
{
	struct perf_event_core *c = perf_core(e);

	if (c->throttled)
		return true;
	if (++c->interrupts >= max_samples_per_tick() && throttle) {
		c->throttled = true;
		perf_event_log_throttle(e, false);
	}
	return false;
}

/* A software event's period elapsed in process context (a page fault, a context switch):
 * the sample shows the task's user state; addr is the fault address for page faults. */
void perf_sw_sample(struct perf_event *e, uint64_t addr, bool throttle)
{
	uint64_t regs[PERF_REGS_NR];

	ksvc_user_regs(regs);
	perf_sw_sample_regs(e, addr, regs, regs[PERF_REG_ARM64_PC] != 0, throttle);
}

void perf_sw_sample_regs(struct perf_event *e, uint64_t addr, const uint64_t *regs, bool user,
			 bool throttle)
{
	struct perf_event_core *c = perf_core(e);

	if (process_overflow_throttled(e, throttle))
		return;
	if (!READ_ONCE(c->prog) || perf_bpf_filter(e, e->hw.sample_period, regs, addr))
		perf_sample_output(e, e->hw.sample_period, regs, user, addr, NULL, 0, false);
	if (perf_overflow_notify(e, addr))
		e->pmu->stop(e, 0); /* the REFRESH limit: no more counts until it is refreshed */
}

void perf_tp_sample(struct perf_event *e, const struct perf_tp_hit *hit, bool throttle)
{
	if (process_overflow_throttled(e, throttle))
		return;
	perf_sample_output(e, e->hw.sample_period, hit->regs, hit->user, 0, hit->rec, hit->size,
			   true);
	if (perf_overflow_notify(e, 0))
		e->pmu->stop(e, 0);
}

/* ---- the tick: unthrottle, re-tune the frequency-mode periods ---- */

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
			perf_event_log_throttle(e, true);
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

/* ---- after the sample: REFRESH, sigtrap, O_ASYNC ---- */

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
		perf_event_ring_wake(e);
	kill = atomic_exchange(&c->pending_kill, 0);
	if (kill) {
		unsigned long f = spin_lock_irqsave(&c->child_lock);

		if (c->fasync)
			ksvc_kill_fasync(c->fasync, kill);
		spin_unlock_irqrestore(&c->child_lock, f);
	}
}
