/*
 * pmu.c - the PMU layer under perf core: the type -> PMU table and event-to-PMU binding,
 * counter maths shared by hardware backends, and the scheduling of event groups onto PMUs
 * (sched in/out, multiplexing rotation) with time_enabled/time_running bookkeeping.
 *
 * ABI: Linux 6.1 kernel/events/core.c perf_pmu_register (dynamic types from PERF_TYPE_MAX),
 * perf_init_event (extended HW type in config[63:32], RAW aliasing, the try-every-PMU
 * fallback), perf_try_init_event's post checks, ctx_sched_in / merge_sched_in /
 * group_sched_in / group_can_go_on / perf_rotate_context; drivers/perf/arm_pmu.c
 * armpmu_event_update / armpmu_event_set_period for the counter maths.  What user space sees
 * of this: the errno of perf_event_open, and read()'s value, time_enabled, time_running.
 *
 * Locking: the table is written at boot (perf_init) and read without a lock afterwards.
 * Scheduling functions take a context whose lock the caller holds ([c]) on the CPU the
 * context runs on with IRQs masked ([p]); PMU callbacks run there.
 *
 * Does not: contexts per task/CPU, IPIs, enable/disable ioctls, frequency adjustment, cgroup
 * or exclusive-PMU bookkeeping (core.c).
 */
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>

#include "perf_internal.h"

static struct perf_pmu *pmu_by_type[PERF_PMU_MAX_TYPES];
static struct perf_pmu *pmu_order[PERF_PMU_MAX_TYPES]; /* registration order */
static unsigned int nr_pmus;

int perf_pmu_register(struct perf_pmu *pmu, int type)
{
	if (nr_pmus == PERF_PMU_MAX_TYPES)
		return -ENOSPC;
	if (type >= 0) {
		if (type >= PERF_PMU_MAX_TYPES)
			return -EINVAL;
		if (pmu_by_type[type])
			return -EBUSY;
	} else {
		/* idr_alloc from PERF_TYPE_MAX: the first free dynamic type */
		for (type = PERF_TYPE_MAX; type < PERF_PMU_MAX_TYPES && pmu_by_type[type]; type++)
			;
		if (type == PERF_PMU_MAX_TYPES)
			return -ENOSPC;
	}
	pmu->type = type;
	pmu_by_type[type] = pmu;
	pmu_order[nr_pmus++] = pmu;
	return 0;
}

void perf_pmu_unregister(struct perf_pmu *pmu)
{
	unsigned int i;

	if (pmu->type >= 0 && pmu->type < PERF_PMU_MAX_TYPES && pmu_by_type[pmu->type] == pmu)
		pmu_by_type[pmu->type] = NULL;
	for (i = 0; i < nr_pmus && pmu_order[i] != pmu; i++)
		;
	if (i == nr_pmus)
		return;
	for (; i + 1 < nr_pmus; i++)
		pmu_order[i] = pmu_order[i + 1];
	nr_pmus--;
}

void perf_pmu_reset_table(void)
{
	memset(pmu_by_type, 0, sizeof(pmu_by_type));
	memset(pmu_order, 0, sizeof(pmu_order));
	nr_pmus = 0;
}

struct perf_pmu *perf_pmu_find(uint32_t type)
{
	return type < PERF_PMU_MAX_TYPES ? pmu_by_type[type] : NULL;
}

static bool has_any_exclude(const struct perf_event_attr *a)
{
	return a->exclude_idle || a->exclude_user || a->exclude_kernel || a->exclude_hv ||
	       a->exclude_guest || a->exclude_host;
}

/* perf_try_init_event: bind, init, then the checks Linux makes on a successful init. */
static int try_init(struct perf_pmu *pmu, struct perf_event *e)
{
	int ret;

	e->pmu = pmu;
	ret = pmu->event_init(e);
	if (!ret) {
		bool ext = ((e->attr.sample_type & PERF_SAMPLE_REGS_USER) &&
			    (e->attr.sample_regs_user & PERF_REG_EXTENDED_MASK)) ||
			   ((e->attr.sample_type & PERF_SAMPLE_REGS_INTR) &&
			    (e->attr.sample_regs_intr & PERF_REG_EXTENDED_MASK));

		if (!(pmu->caps & PERF_PMU_CAP_EXTENDED_REGS) && ext)
			ret = -EOPNOTSUPP;
		if ((pmu->caps & PERF_PMU_CAP_NO_EXCLUDE) && has_any_exclude(&e->attr))
			ret = -EINVAL;
	}
	if (ret)
		e->pmu = NULL;
	return ret;
}

int perf_pmu_init_event(struct perf_event *e)
{
	uint32_t type = e->attr.type;
	bool extended = false;
	struct perf_pmu *pmu;
	int ret;

	/* what perf_event_alloc sets before the PMU sees the event */
	e->hw.idx = -1;
	e->hw.sample_period = e->attr.sample_period;
	if (e->attr.freq && e->attr.sample_freq)
		e->hw.sample_period = 1;
	e->hw.last_period = e->hw.sample_period;
	e->hw.period_left = (int64_t)e->hw.sample_period;

	/* HARDWARE and HW_CACHE alias RAW, or name a PMU type in config[63:32] */
	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE) {
		type = (uint32_t)(e->attr.config >> PERF_PMU_TYPE_SHIFT);
		if (!type) {
			type = PERF_TYPE_RAW;
		} else {
			extended = true;
			e->attr.config &= PERF_HW_EVENT_MASK;
		}
	}
again:
	pmu = perf_pmu_find(type);
	/* A PMU named through the extended type must accept that form (Linux's
	 * PERF_PMU_CAP_EXTENDED_HW_TYPE); otherwise every PMU is asked, as Debian's 6.1 does. */
	if (pmu && e->attr.type != type && type != PERF_TYPE_RAW &&
	    !(pmu->caps & PERF_PMU_CAP_EXTENDED_HW_TYPE))
		pmu = NULL;
	if (pmu) {
		ret = try_init(pmu, e);
		if (ret == -ENOENT && e->attr.type != type && !extended) {
			type = e->attr.type;
			goto again;
		}
		return ret;
	}
	/* no PMU owns the type: ask each; the first answer other than ENOENT wins */
	for (unsigned int i = 0; i < nr_pmus; i++) {
		ret = try_init(pmu_order[i], e);
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

/* ---- counter maths ---- */

uint64_t perf_hw_update(struct perf_hw *hw, _Atomic uint64_t *count, uint64_t new_raw,
			unsigned int width)
{
	uint64_t delta = perf_counter_delta(hw->prev_count, new_raw, width);

	hw->prev_count = new_raw;
	atomic_fetch_add_explicit(count, delta, memory_order_relaxed);
	hw->period_left -= (int64_t)delta;
	return delta;
}

void perf_freq_adjust_period(struct perf_hw *hw, uint64_t sample_freq, uint64_t nsec, uint64_t count)
{
	uint64_t freq = sample_freq ? sample_freq : 1;
	unsigned __int128 want128 = (unsigned __int128)count * 1000000000ull;
	unsigned __int128 den = (unsigned __int128)nsec * freq;
	uint64_t want = den ? (uint64_t)(want128 / den) : hw->sample_period;
	int64_t delta = (int64_t)(want - hw->sample_period);

	delta = (delta + 7) / 8; /* perf_adjust_period's low-pass filter */
	hw->sample_period += (uint64_t)delta;
	if (!hw->sample_period || (int64_t)hw->sample_period < 0)
		hw->sample_period = 1;
}

bool perf_hw_set_period(struct perf_hw *hw, unsigned int width, uint64_t *program)
{
	int64_t left = hw->period_left;
	int64_t period = (int64_t)hw->sample_period;
	uint64_t max_period = perf_counter_mask(width);
	bool elapsed = false;

	/* far behind (period changed or a long stop): restart the period */
	if (left <= -period) {
		left = period;
		hw->period_left = left;
		hw->last_period = (uint64_t)period;
		elapsed = true;
	}
	if (left <= 0) {
		left += period;
		hw->period_left = left;
		hw->last_period = (uint64_t)period;
		elapsed = true;
	}
	/* half the counter range at most, so the IRQ is taken before the count laps prev */
	if ((uint64_t)left > (max_period >> 1))
		left = (int64_t)(max_period >> 1);
	hw->prev_count = (uint64_t)-left;
	*program = (uint64_t)-left & max_period;
	return elapsed;
}

/* ---- groups and contexts ---- */

void perf_ctx_init(struct perf_ctx *ctx)
{
	spin_init(&ctx->lock);
	list_init(&ctx->pinned);
	list_init(&ctx->flexible);
	ctx->rotate_necessary = false;
	ctx->exclusive_on = false;
	ctx->nr_active = 0;
}

void perf_event_init_group(struct perf_event *e, struct perf_event *leader)
{
	e->group_leader = leader ? leader : e;
	list_init(&e->group_entry);
	list_init(&e->sibling_list);
	e->nr_siblings = 0;
	e->state = e->attr.disabled ? PERF_EVENT_STATE_OFF : PERF_EVENT_STATE_INACTIVE;
	e->hw.idx = -1;
}

void perf_group_attach_locked(struct perf_event *e)
{
	perf_event_assert_locked(e);
	struct perf_event *leader = e->group_leader;

	if (leader == e)
		return;
	list_add_tail(&leader->sibling_list, &e->group_entry);
	leader->nr_siblings++;
}

void perf_group_detach_locked(struct perf_event *e)
{
	perf_event_assert_locked(e);
	struct perf_event *leader = e->group_leader;

	if (leader == e)
		return;
	list_del(&e->group_entry);
	leader->nr_siblings--;
	e->group_leader = e;
}

void perf_ctx_add_group_locked(struct perf_ctx *ctx, struct perf_event *leader)
{
	spin_assert_held(&ctx->lock);
	kassert(leader->group_leader == leader);
	list_add_tail(leader->attr.pinned ? &ctx->pinned : &ctx->flexible, &leader->group_entry);
}

void perf_ctx_del_group_locked(struct perf_ctx *ctx, struct perf_event *leader)
{
	spin_assert_held(&ctx->lock);
	list_del(&leader->group_entry);
}

void perf_event_update_time_locked(struct perf_event *e, uint64_t now)
{
	perf_event_assert_locked(e);
	uint64_t delta = now - e->tstamp;

	if (e->state >= PERF_EVENT_STATE_INACTIVE)
		e->time_enabled += delta;
	if (e->state == PERF_EVENT_STATE_ACTIVE)
		e->time_running += delta;
	e->tstamp = now;
}

/* perf_event_set_state: fold the times under the old state, then switch. */
static void set_state(struct perf_event *e, int state, uint64_t now)
{
	perf_event_update_time_locked(e, now);
	e->state = state;
}

#define for_each_sibling(pos, leader)                                                              \
	for (struct list_node *_n = (leader)->sibling_list.next;                                   \
	     _n != &(leader)->sibling_list &&                                                      \
	     ((pos) = list_entry(_n, struct perf_event, group_entry), 1);                          \
	     _n = _n->next)

static int event_sched_in(struct perf_event *e, uint64_t now)
{
	if (e->state <= PERF_EVENT_STATE_OFF)
		return 0;
	set_state(e, PERF_EVENT_STATE_ACTIVE, now);
	if (e->pmu->add(e, PERF_EF_START)) {
		set_state(e, PERF_EVENT_STATE_INACTIVE, now);
		return -EAGAIN;
	}
	return 0;
}

static void event_sched_out(struct perf_event *e, uint64_t now)
{
	if (e->state != PERF_EVENT_STATE_ACTIVE)
		return;
	e->pmu->del(e, 0);
	set_state(e, PERF_EVENT_STATE_INACTIVE, now);
}

/* All or nothing: on a failure, what went on comes off again (Linux's PMU transaction). */
static int group_sched_in(struct perf_event *leader, uint64_t now)
{
	struct perf_event *s, *partial = NULL;

	if (leader->state == PERF_EVENT_STATE_OFF)
		return 0;
	if (event_sched_in(leader, now))
		return -EAGAIN;
	for_each_sibling(s, leader)
	{
		if (event_sched_in(s, now)) {
			partial = s;
			break;
		}
	}
	if (!partial)
		return 0;
	for_each_sibling(s, leader)
	{
		if (s == partial)
			break;
		event_sched_out(s, now);
	}
	event_sched_out(leader, now);
	return -EAGAIN;
}

static void group_sched_out(struct perf_event *leader, uint64_t now)
{
	struct perf_event *s;

	if (leader->state != PERF_EVENT_STATE_ACTIVE)
		return;
	event_sched_out(leader, now);
	for_each_sibling(s, leader) event_sched_out(s, now);
}

static bool group_is_software(struct perf_event *leader)
{
	struct perf_event *s;

	if (!(leader->pmu->caps & PERF_PMU_CAP_SOFTWARE))
		return false;
	for_each_sibling(s, leader) if (!(s->pmu->caps & PERF_PMU_CAP_SOFTWARE)) return false;
	return true;
}

static bool group_can_go_on(struct perf_ctx *ctx, struct perf_event *leader, bool can_add_hw)
{
	/* groups of software events only always go on */
	if (group_is_software(leader))
		return true;
	/* an exclusive group is on: no other hardware group */
	if (ctx->exclusive_on)
		return false;
	/* an exclusive group goes on only onto an empty PMU */
	if (leader->attr.exclusive && ctx->nr_active)
		return false;
	/* otherwise only while every earlier group went on */
	return can_add_hw;
}

static bool pmu_filter_match(struct perf_event *e)
{
	return !e->pmu->filter_match || e->pmu->filter_match(e);
}

/* event_filter_match: the CPU the event is bound to, and every member's PMU filter */
static bool event_filter_match(struct perf_event *leader)
{
	struct perf_event *s;

	if (leader->cpu != -1 && leader->cpu != (int)ksvc_cpu_id())
		return false;
	if (!pmu_filter_match(leader))
		return false;
	for_each_sibling(s, leader) if (!pmu_filter_match(s)) return false;
	return true;
}

static void merge_sched_in(struct perf_ctx *ctx, struct perf_event *leader, bool *can_add_hw,
			   uint64_t now)
{
	if (leader->state <= PERF_EVENT_STATE_OFF || leader->state == PERF_EVENT_STATE_ACTIVE)
		return;
	if (!event_filter_match(leader))
		return;
	if (group_can_go_on(ctx, leader, *can_add_hw) && !group_sched_in(leader, now)) {
		ctx->nr_active++;
		if (leader->attr.exclusive)
			ctx->exclusive_on = true;
	}
	if (leader->state == PERF_EVENT_STATE_INACTIVE) {
		*can_add_hw = false;
		if (leader->attr.pinned)
			set_state(leader, PERF_EVENT_STATE_ERROR, now); /* read() then gives EOF */
		else
			ctx->rotate_necessary = true;
	}
}

static void sched_in_list(struct perf_ctx *ctx, struct list_node *head, uint64_t now)
{
	struct list_node *n, *tmp;
	bool can_add_hw = true; /* per pass: pinned failures do not block flexible groups */

	list_for_each_safe(n, tmp, head)
	    merge_sched_in(ctx, list_entry(n, struct perf_event, group_entry), &can_add_hw, now);
}

void perf_ctx_sched_in_locked(struct perf_ctx *ctx, uint64_t now)
{
	spin_assert_held(&ctx->lock);
	sched_in_list(ctx, &ctx->pinned, now);
	sched_in_list(ctx, &ctx->flexible, now);
}

void perf_group_sched_out_locked(struct perf_ctx *ctx, struct perf_event *leader, uint64_t now)
{
	spin_assert_held(&ctx->lock);
	if (leader->state != PERF_EVENT_STATE_ACTIVE)
		return;
	group_sched_out(leader, now);
	ctx->nr_active--;
	if (leader->attr.exclusive)
		ctx->exclusive_on = false;
}

static void sched_out_list(struct perf_ctx *ctx, struct list_node *head, uint64_t now)
{
	struct list_node *n;

	list_for_each(n, head)
		perf_group_sched_out_locked(ctx, list_entry(n, struct perf_event, group_entry), now);
}

void perf_ctx_sched_out_locked(struct perf_ctx *ctx, uint64_t now)
{
	spin_assert_held(&ctx->lock);
	sched_out_list(ctx, &ctx->flexible, now);
	sched_out_list(ctx, &ctx->pinned, now);
	/* no flexible group is on any more, so none is waiting for a rotation */
	ctx->rotate_necessary = false;
}

bool perf_ctx_rotate_locked(struct perf_ctx *ctx, uint64_t now)
{
	struct perf_event *first = NULL;
	struct list_node *n;

	spin_assert_held(&ctx->lock);
	if (!ctx->rotate_necessary || list_empty(&ctx->flexible))
		return false;
	/* ctx_event_to_rotate: the first ACTIVE flexible group, else the first one */
	list_for_each(n, &ctx->flexible)
	{
		struct perf_event *leader = list_entry(n, struct perf_event, group_entry);

		if (leader->state == PERF_EVENT_STATE_ACTIVE) {
			first = leader;
			break;
		}
	}
	if (!first)
		first = list_entry(ctx->flexible.next, struct perf_event, group_entry);
	ctx->rotate_necessary = false;
	sched_out_list(ctx, &ctx->flexible, now);
	list_del(&first->group_entry);
	list_add_tail(&ctx->flexible, &first->group_entry);
	first->rotate_index++;
	perf_ctx_sched_in_locked(ctx, now);
	return true;
}

uint64_t perf_event_read_count_locked(struct perf_event *e)
{
	perf_event_assert_locked(e);
	if (e->state == PERF_EVENT_STATE_ACTIVE && e->pmu->read)
		e->pmu->read(e);
	return atomic_load_explicit(&e->count, memory_order_relaxed);
}
