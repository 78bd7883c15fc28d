/*
 * mmap.c - an event's ring as user space sees it: mmap of the ring (1 + 2^n pages) and the
 * user page kept as Linux keeps it (index/offset for rdpmc, time_enabled/running, the time
 * conversion), the ring an event writes into (its own, its parent's when inherited, or another
 * event's after PERF_EVENT_IOC_SET_OUTPUT / PERF_FLAG_FD_OUTPUT), poll readiness and the
 * readers' wakeup.
 *
 * As Linux, an inherited event writes into its parent's ring, and a ring outlives close() as
 * long as it is mapped.  Does not: write records (ring.c reserves and publishes, sample.c and
 * sideband.c fill them), the AUX area (an mmap at a non-zero offset gets EINVAL).
 *
 * Locking: which ring an event writes into (perf_event.ring, core.own_ring, core.output) changes
 * under the ring owner's core.child_lock; writers hold the same lock while they write
 * (sample.c), so a ring is never freed under a writer.  A wakeup reads core.output under it too
 * and keeps the target alive with core.output_wakers (perf_event_ring_wake).
 */
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include "perf_internal.h"

/* ---- the ring an event writes into: its own, its parent's, or its SET_OUTPUT target's ---- */

struct perf_ring *perf_event_ring_get(struct perf_event *e)
{
	struct perf_event *owner = perf_core(e)->parent ? perf_core(e)->parent : e;
	unsigned long f = spin_lock_irqsave(&perf_core(owner)->child_lock);
	struct perf_ring *r = owner->ring;

	if (r)
		perf_ring_get(r);
	spin_unlock_irqrestore(&perf_core(owner)->child_lock, f);
	return r;
}

/* ---- the user page and the mapping ---- */

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

/* ---- close and SET_OUTPUT ---- */

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
	struct perf_ring *r = perf_event_ring_get(e);

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
		r = perf_event_ring_get(out); /* the target must have a ring (be mapped) */
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
	if (old_out) {
		/* acquire: pairs with the release in perf_event_ring_wake; a wakeup that read
		 * old_out before the switch has finished with it */
		while (atomic_load_explicit(&c->output_wakers, memory_order_acquire))
			arch_cpu_relax();
		perf_event_put(old_out);
	}
	return 0;
}

/* ---- the readers: wakeup and poll ---- */

/*
 * Wake e's readers and, when redirected, its SET_OUTPUT target's.  output is read under the
 * child_lock and counted in output_wakers until the target is woken: perf_set_output waits
 * for the count to drop before it lets the old target go, so a target switched away and
 * closed on another CPU meanwhile is still there (Linux keeps it with RCU).  Interrupts stay
 * masked through the window, so a waiter never waits on a preempted waker.
 */
void perf_event_ring_wake(struct perf_event *e)
{
	struct perf_event_core *oc = perf_core(perf_core(e)->parent ? perf_core(e)->parent : e);
	unsigned long f = spin_lock_irqsave(&oc->child_lock);
	struct perf_event *out = oc->output;

	if (out)
		atomic_fetch_add_explicit(&oc->output_wakers, 1, memory_order_relaxed);
	spin_unlock(&oc->child_lock);
	ksvc_waitq_wake_all(oc->wq);
	if (out) {
		ksvc_waitq_wake_all(perf_core(out)->wq);
		/* release: the wakeup is done before perf_set_output may drop out */
		atomic_fetch_sub_explicit(&oc->output_wakers, 1, memory_order_release);
	}
	ksvc_irq_restore(f);
}

unsigned int perf_output_poll(struct perf_event *e)
{
	struct perf_ring *r = perf_event_ring_get(e);
	unsigned int mask = POLLHUP; /* perf_poll: without a ring there is nothing to wait for */

	if (r) {
		mask = perf_ring_unread(r) ? POLLIN | POLLRDNORM : 0;
		perf_ring_put(r);
	}
	return mask;
}
