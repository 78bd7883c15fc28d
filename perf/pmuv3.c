/*
 * pmuv3.c - the ARMv8 PMUv3 backend ("armv8_pmuv3", type PERF_TYPE_PMUV3): generalized
 * HARDWARE and HW_CACHE events mapped to PMUv3 common events, RAW pass-through, EL filtering,
 * counter allocation (cycle counter, event counters, chained pairs for 64-bit events on PMUs
 * without PMUv3p5), counting with 32->64 bit extension through the overflow interrupt, and
 * sampling periods programmed as -left.
 *
 * ABI: what Linux 6.1 drivers/perf/arm_pmu.c + arch/arm64/kernel/perf_event.c do, errno for
 * errno: armpmu_event_init, __hw_perf_event_init, armpmu_map_event & co, armv8pmu map_event
 * (PMCEID gating, `long` = config1:0, `rdpmc` = config1:1), armv8pmu_filter_match (a raw
 * CHAIN event opens but is never scheduled: 6.2 started refusing it with EINVAL),
 * armv8pmu_set_event_filter, armv8pmu_get_event_idx, armv8pmu_handle_irq, armv8pmu_reset.
 * Counter indexes are Linux's: 0 is PMCCNTR, i >= 1 is event counter i - 1; a chained event
 * holds idx (odd hardware counter, CHAIN) and idx - 1 (even hardware counter, the event).
 *
 * Hardware is reached only through <arch/pmu_sysreg.h>.  Every function except probe runs on
 * the CPU whose counters it touches with interrupts masked ([p]); the interrupt handler
 * allocates nothing and hands elapsed periods to perf_event_overflow (overflow.c).
 *
 * EL0 counter access (rdpmc) as Linux 6.1: PMUSERENR gets ER|CR while a task event with the
 * rdpmc format bit (config1:1) is on a counter and the perf_user_access sysctl
 * (pmuv3_user_access) is set; unused counters are cleared first so nothing leaks.
 * Does not: KVM guest/host event switching, the implementation-specific
 * event maps (Cortex-A53/A57/A72 tables): the generic maps are what Linux uses for QEMU's
 * "arm,armv8-pmuv3" device.
 */
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <arch/pmu_sysreg.h>
#include <perf/perf.h>

#include "perf_internal.h"

/* PMCR_EL0 */
#define PMCR_E (1u << 0)  /* enable all counters */
#define PMCR_P (1u << 1)  /* reset event counters */
#define PMCR_C (1u << 2)  /* reset cycle counter */
#define PMCR_LC (1u << 6) /* cycle counter overflows at 64 bits */
#define PMCR_LP (1u << 7) /* event counters are 64 bits (PMUv3p5) */
#define PMCR_N_SHIFT 11
#define PMCR_N_MASK 0x1f

/* PMEVTYPER<n>_EL0 / PMCCFILTR_EL0 */
#define EVTYPE_EVENT 0xffffu
#define EVTYPE_EXCLUDE_EL1 (1u << 31) /* P */
#define EVTYPE_EXCLUDE_EL0 (1u << 30) /* U */
#define EVTYPE_INCLUDE_EL2 (1u << 27) /* NSH */
#define EVTYPE_MASK 0xc800ffffu

/* ID_AA64DFR0_EL1.PMUVer */
#define DFR0_PMUVER_SHIFT 8
#define PMUVER_NONE 0x0
#define PMUVER_V3P5 0x6
#define PMUVER_IMPDEF 0xf

/* common event numbers */
#define EV_SW_INCR 0x00
#define EV_L1I_CACHE_REFILL 0x01
#define EV_L1I_TLB_REFILL 0x02
#define EV_L1D_CACHE_REFILL 0x03
#define EV_L1D_CACHE 0x04
#define EV_L1D_TLB_REFILL 0x05
#define EV_INST_RETIRED 0x08
#define EV_PC_WRITE_RETIRED 0x0c
#define EV_BR_MIS_PRED 0x10
#define EV_CPU_CYCLES 0x11
#define EV_BR_PRED 0x12
#define EV_L1I_CACHE 0x14
#define EV_BUS_CYCLES 0x1d
#define EV_CHAIN 0x1e
#define EV_STALL_FRONTEND 0x23
#define EV_STALL_BACKEND 0x24
#define EV_L1D_TLB 0x25
#define EV_L1I_TLB 0x26
#define EV_LL_CACHE_RD 0x36
#define EV_LL_CACHE_MISS_RD 0x37
#define MAX_COMMON_EVENTS 0x40

#define UNSUPPORTED 0xffffffffu		       /* HW_OP_UNSUPPORTED / CACHE_OP_UNSUPPORTED */
#define IDX_TO_COUNTER(idx) (((idx)-1) & 0x1f) /* idx 0 -> 31: PMCCNTR's bit */
#define USER_IDX_CYCLE 32		       /* rdpmc index Linux gives the cycle counter */

/* armv8_pmuv3_perf_map */
static const uint32_t hw_map[PERF_COUNT_HW_MAX] = {
    [PERF_COUNT_HW_CPU_CYCLES] = EV_CPU_CYCLES,
    [PERF_COUNT_HW_INSTRUCTIONS] = EV_INST_RETIRED,
    [PERF_COUNT_HW_CACHE_REFERENCES] = EV_L1D_CACHE,
    [PERF_COUNT_HW_CACHE_MISSES] = EV_L1D_CACHE_REFILL,
    [PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = EV_PC_WRITE_RETIRED,
    [PERF_COUNT_HW_BRANCH_MISSES] = EV_BR_MIS_PRED,
    [PERF_COUNT_HW_BUS_CYCLES] = EV_BUS_CYCLES,
    [PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = EV_STALL_FRONTEND,
    [PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = EV_STALL_BACKEND,
    [PERF_COUNT_HW_REF_CPU_CYCLES] = UNSUPPORTED,
};

#define C(x) PERF_COUNT_HW_CACHE_##x
#define OP_R C(OP_READ)
#define ACC C(RESULT_ACCESS)
#define MISS C(RESULT_MISS)

/* armv8_pmuv3_perf_cache_map; every other entry is UNSUPPORTED (cache_map_get) */
static const uint32_t cache_map[C(MAX)][C(OP_MAX)][C(RESULT_MAX)] = {
    [C(L1D)][OP_R][ACC] = EV_L1D_CACHE + 1,	   [C(L1D)][OP_R][MISS] = EV_L1D_CACHE_REFILL + 1,
    [C(L1I)][OP_R][ACC] = EV_L1I_CACHE + 1,	   [C(L1I)][OP_R][MISS] = EV_L1I_CACHE_REFILL + 1,
    [C(DTLB)][OP_R][MISS] = EV_L1D_TLB_REFILL + 1, [C(DTLB)][OP_R][ACC] = EV_L1D_TLB + 1,
    [C(ITLB)][OP_R][MISS] = EV_L1I_TLB_REFILL + 1, [C(ITLB)][OP_R][ACC] = EV_L1I_TLB + 1,
    [C(LL)][OP_R][MISS] = EV_LL_CACHE_MISS_RD + 1, [C(LL)][OP_R][ACC] = EV_LL_CACHE_RD + 1,
    [C(BPU)][OP_R][ACC] = EV_BR_PRED + 1,	   [C(BPU)][OP_R][MISS] = EV_BR_MIS_PRED + 1,
};

/* The table stores event + 1 so that the zero of designated initializers means UNSUPPORTED. */
static uint32_t cache_map_get(unsigned int t, unsigned int op, unsigned int res)
{
	uint32_t v = cache_map[t][op][res];

	return v ? v - 1 : UNSUPPORTED;
}

struct pmuv3_cpu {
	struct perf_event *events[PMUV3_MAX_COUNTERS]; /* [p] by idx */
	uint32_t used_mask;			       /* [p] */
	uint32_t user_readers;			       /* [p] events on it with EL0 read access */
};

#define PMUSERENR_CR (1u << 2) /* EL0 reads the cycle counter */
#define PMUSERENR_ER (1u << 3) /* EL0 reads the event counters */

static struct {
	struct perf_pmu pmu;
	struct pmuv3_cpu *cpus;
	unsigned int nr_cpus;
	unsigned int num_events; /* PMCR.N + 1 (the cycle counter) */
	bool has_long;		 /* PMUv3p5: 64-bit event counters */
	uint64_t pmceid;	 /* common events 0x00..0x3f */
	uint64_t pmceid_ext;	 /* 0x4000..0x403f */
	bool probed;
} pv;

bool pmuv3_user_access;
bool pmuv3_kernel_in_hyp;

static struct pmuv3_cpu *this_cpu(void)
{
	unsigned int cpu = ksvc_cpu_id();

	kassert(cpu < pv.nr_cpus);
	return &pv.cpus[cpu];
}

/* ---- event attributes ---- */

static bool ev_is_64bit(const struct perf_event *e)
{
	return e->attr.config1 & 0x1; /* format "long" */
}

static bool ev_wants_user(const struct perf_event *e)
{
	return e->attr.config1 & 0x2; /* format "rdpmc" */
}

static bool ev_is_chained(const struct perf_event *e)
{
	return !(e->hw.flags & PERF_HW_USER_READ) && ev_is_64bit(e) && !pv.has_long &&
	       e->hw.idx != PMUV3_IDX_CYCLE;
}

static unsigned int ev_width(const struct perf_event *e)
{
	return (e->hw.flags & PERF_HW_64BIT) ? 64 : 32;
}

/* ---- event_init ---- */

static int map_hw(uint64_t config)
{
	if (config >= PERF_COUNT_HW_MAX)
		return -EINVAL;
	return hw_map[config] == UNSUPPORTED ? -ENOENT : (int)hw_map[config];
}

static int map_cache(uint64_t config)
{
	unsigned int type = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;
	uint32_t ev;

	if (type >= C(MAX) || op >= C(OP_MAX) || res >= C(RESULT_MAX))
		return -EINVAL;
	ev = cache_map_get(type, op, res);
	return ev == UNSUPPORTED ? -ENOENT : (int)ev;
}

/* armpmu_map_event with the generic maps (maps = false: the NULL "extra" maps) */
static int map_event(const struct perf_event *e, bool maps)
{
	uint32_t type = e->attr.type;

	if (type == (uint32_t)pv.pmu.type || type == PERF_TYPE_RAW)
		return (int)(e->attr.config & EVTYPE_EVENT);
	if (type == PERF_TYPE_HARDWARE) {
		if (e->attr.config >= PERF_COUNT_HW_MAX)
			return -EINVAL;
		return maps ? map_hw(e->attr.config) : -ENOENT;
	}
	if (type == PERF_TYPE_HW_CACHE) {
		int r = map_cache(e->attr.config);

		return r == -EINVAL || maps ? r : -ENOENT;
	}
	return -ENOENT;
}

static int pmuv3_map(struct perf_event *e)
{
	int ev = map_event(e, true);

	/* 6.1 accepts a raw CHAIN (0x1e) here; pmuv3_filter_match keeps it off the PMU */
	if (ev_is_64bit(e))
		e->hw.flags |= PERF_HW_64BIT;
	/* rdpmc: a task event on one counter (no chaining) */
	if (ev_wants_user(e)) {
		if (!e->attach_task)
			return -EINVAL;
		if (ev_is_64bit(e) && ev != EV_CPU_CYCLES && !pv.has_long)
			return -EOPNOTSUPP;
		e->hw.flags |= PERF_HW_USER_READ;
	}
	/* only the common events this PMU implements (PMCEID) */
	if (ev > 0 && ev < MAX_COMMON_EVENTS && (pv.pmceid & (1ull << ev)))
		return ev;
	return map_event(e, false);
}

/* armv8pmu_set_event_filter: the PMEVTYPER EL bits; exclude_idle cannot be done */
static int set_event_filter(struct perf_event *e, uint32_t *config_base)
{
	const struct perf_event_attr *a = &e->attr;
	uint32_t f = 0;

	if (a->exclude_idle)
		return -EPERM;
	if (pmuv3_kernel_in_hyp) {
		/* VHE: the kernel is EL2; exclude_hv has no hypervisor to exclude */
		if (!a->exclude_kernel && !a->exclude_host)
			f |= EVTYPE_INCLUDE_EL2;
		if (a->exclude_guest)
			f |= EVTYPE_EXCLUDE_EL1;
		if (a->exclude_host)
			f |= EVTYPE_EXCLUDE_EL0;
	} else {
		if (!a->exclude_hv && !a->exclude_host)
			f |= EVTYPE_INCLUDE_EL2;
	}
	if (a->exclude_kernel)
		f |= EVTYPE_EXCLUDE_EL1;
	if (a->exclude_user)
		f |= EVTYPE_EXCLUDE_EL0;
	*config_base = f;
	return 0;
}

static int get_event_idx(uint32_t *used, const struct perf_event *e);

/* Would e fit with the other enabled members of its group on an empty PMU? (validate_group) */
static bool validate_one(uint32_t *used, const struct perf_event *e)
{
	if (e->pmu && (e->pmu->caps & PERF_PMU_CAP_SOFTWARE))
		return true;
	if (e->pmu != &pv.pmu)
		return false;
	if (e->state < PERF_EVENT_STATE_OFF)
		return true;
	if (e->state == PERF_EVENT_STATE_OFF && !e->attr.enable_on_exec)
		return true;
	return get_event_idx(used, e) >= 0;
}

static int validate_group(struct perf_event *e)
{
	struct perf_event *leader = e->group_leader;
	uint32_t used = 0;
	struct list_node *n;

	if (!validate_one(&used, leader))
		return -EINVAL;
	if (e == leader)
		return 0;
	list_for_each(
	    n, &leader->sibling_list) if (!validate_one(&used,
							list_entry(n, struct perf_event,
								   group_entry))) return -EINVAL;
	if (!validate_one(&used, e))
		return -EINVAL;
	return 0;
}

/*
 * The last reference is going.  Every path that frees an event takes it off the PMU first
 * (perf_remove_event on the CPU that owns it), so no CPU may still hold it: if one does, that
 * is a kernel bug, reported here, and the slot is let go so the interrupt handler stops the
 * counter instead of following a freed pointer.
 */
static void pmuv3_destroy(struct perf_event *e)
{
	for (unsigned int cpu = 0; cpu < pv.nr_cpus; cpu++) {
		struct pmuv3_cpu *c = &pv.cpus[cpu];

		for (unsigned int idx = 0; idx < pv.num_events; idx++) {
			if (c->events[idx] != e)
				continue;
			ksvc_printk("perf: BUG: a freed %s event still owns counter %u on cpu %u\n",
				    pv.pmu.name, idx, cpu);
			c->events[idx] = NULL;
			c->used_mask &= ~(1u << idx);
		}
	}
}

static int pmuv3_event_init(struct perf_event *e)
{
	uint32_t filter;
	int ev;

	/* a CPU event for a CPU this PMU does not serve (all CPUs share one class here) */
	if (e->cpu >= (int)pv.nr_cpus)
		return -ENOENT;
	/* no taken-branch sampling */
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	e->hw.flags = 0;
	ev = pmuv3_map(e);
	if (ev < 0)
		return ev;
	e->hw.idx = -1;
	if (set_event_filter(e, &filter))
		return -EOPNOTSUPP;
	e->hw.config_base = filter | (uint32_t)ev;
	e->destroy = pmuv3_destroy;
	/* counting: an overflow interrupt every half range extends the count to 64 bits */
	if (!e->attr.sample_period) {
		e->hw.sample_period = perf_counter_mask(ev_width(e)) >> 1;
		e->hw.last_period = e->hw.sample_period;
		e->hw.period_left = (int64_t)e->hw.sample_period;
	}
	return validate_group(e);
}

/* ---- counter allocation ---- */

static bool test_and_set(uint32_t *mask, int idx)
{
	bool was = *mask & (1u << idx);

	*mask |= 1u << idx;
	return was;
}

static int get_event_idx(uint32_t *used, const struct perf_event *e)
{
	/* always prefer the cycle counter for cycles */
	if ((e->hw.config_base & EVTYPE_EVENT) == EV_CPU_CYCLES) {
		if (!test_and_set(used, PMUV3_IDX_CYCLE))
			return PMUV3_IDX_CYCLE;
		if (ev_is_64bit(e) && (e->hw.flags & PERF_HW_USER_READ) && !pv.has_long)
			return -EAGAIN;
	}
	/* a 64-bit event without PMUv3p5: an (even, odd) pair, idx names the odd one */
	if (!(e->hw.flags & PERF_HW_USER_READ) && ev_is_64bit(e) && !pv.has_long) {
		for (int idx = 2; idx < (int)pv.num_events; idx += 2) {
			if (!test_and_set(used, idx)) {
				if (!test_and_set(used, idx - 1))
					return idx;
				*used &= ~(1u << idx);
			}
		}
		return -EAGAIN;
	}
	for (int idx = 1; idx < (int)pv.num_events; idx++)
		if (!test_and_set(used, idx))
			return idx;
	return -EAGAIN;
}

/* ---- hardware access ---- */

static void write_evtype(const struct perf_event *e)
{
	int idx = e->hw.idx;

	if (ev_is_chained(e)) {
		pmu_write_evtyper(IDX_TO_COUNTER(idx - 1), e->hw.config_base & EVTYPE_MASK);
		pmu_write_evtyper(IDX_TO_COUNTER(idx), EV_CHAIN | EVTYPE_INCLUDE_EL2);
	} else if (idx == PMUV3_IDX_CYCLE) {
		pmu_write_pmccfiltr(e->hw.config_base & EVTYPE_MASK & ~EVTYPE_EVENT);
	} else {
		pmu_write_evtyper(IDX_TO_COUNTER(idx), e->hw.config_base & EVTYPE_MASK);
	}
}

static uint32_t counter_bits(const struct perf_event *e)
{
	uint32_t m = 1u << IDX_TO_COUNTER(e->hw.idx);

	if (ev_is_chained(e))
		m |= 1u << IDX_TO_COUNTER(e->hw.idx - 1);
	return m;
}

/* A 32-bit event on a 64-bit counter counts in the low half: bias the top so it overflows. */
static bool needs_bias(const struct perf_event *e)
{
	if (ev_is_64bit(e))
		return false;
	return pv.has_long || e->hw.idx == PMUV3_IDX_CYCLE;
}

static uint64_t read_counter(const struct perf_event *e)
{
	int idx = e->hw.idx;
	uint64_t v;

	if (idx == PMUV3_IDX_CYCLE) {
		v = pmu_read_pmccntr();
	} else {
		v = pmu_read_evcntr(IDX_TO_COUNTER(idx));
		if (ev_is_chained(e))
			v = (v << 32) | (pmu_read_evcntr(IDX_TO_COUNTER(idx - 1)) & 0xffffffffu);
	}
	return needs_bias(e) ? v & 0xffffffffu : v;
}

static void write_counter(const struct perf_event *e, uint64_t v)
{
	int idx = e->hw.idx;

	if (needs_bias(e))
		v |= 0xffffffff00000000ull;
	if (idx == PMUV3_IDX_CYCLE) {
		pmu_write_pmccntr(v);
	} else if (ev_is_chained(e)) {
		pmu_write_evcntr(IDX_TO_COUNTER(idx), v >> 32);
		pmu_write_evcntr(IDX_TO_COUNTER(idx - 1), v & 0xffffffffu);
	} else {
		pmu_write_evcntr(IDX_TO_COUNTER(idx), v);
	}
}

static void hw_disable(const struct perf_event *e)
{
	uint32_t irq = 1u << IDX_TO_COUNTER(e->hw.idx);

	pmu_write_pmcntenclr(counter_bits(e));
	pmu_isb();
	pmu_write_pmintenclr(irq);
	pmu_isb();
	/* drop an overflow that is pending for this counter */
	pmu_write_pmovsclr(irq);
	pmu_isb();
}

static void hw_enable(const struct perf_event *e)
{
	hw_disable(e);
	write_evtype(e);
	/* the interrupt comes from the high counter of a chained pair */
	pmu_write_pmintenset(1u << IDX_TO_COUNTER(e->hw.idx));
	/* the event type is in place before the counter starts */
	pmu_isb();
	pmu_write_pmcntenset(counter_bits(e));
}

static void event_update(struct perf_event *e)
{
	perf_hw_update(&e->hw, &e->count, read_counter(e), ev_width(e));
}

static bool event_set_period(struct perf_event *e)
{
	uint64_t program;
	bool elapsed = perf_hw_set_period(&e->hw, ev_width(e), &program);

	write_counter(e, program);
	return elapsed;
}

/* ---- struct perf_pmu ops ---- */

static void pmuv3_start(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = 0;
	event_set_period(e);
	hw_enable(e);
}

static void pmuv3_stop(struct perf_event *e, int flags)
{
	(void)flags;
	if (e->hw.state & PERF_HES_STOPPED)
		return;
	hw_disable(e);
	event_update(e);
	e->hw.state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int pmuv3_add(struct perf_event *e, int flags)
{
	struct pmuv3_cpu *c = this_cpu();
	int idx = get_event_idx(&c->used_mask, e);

	if (idx < 0)
		return idx;
	e->hw.idx = idx;
	hw_disable(e);
	c->events[idx] = e;
	e->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if ((e->hw.flags & PERF_HW_USER_READ) && c->user_readers++ == 0 && pmuv3_user_access) {
		/* armv8pmu_enable_user_access: clear what other tasks left in free counters */
		for (unsigned int i = 1; i < pv.num_events; i++)
			if (!(c->used_mask & (1u << i)))
				pmu_write_evcntr(IDX_TO_COUNTER(i), 0);
		if (!(c->used_mask & 1u))
			pmu_write_pmccntr(0);
		pmu_write_pmuserenr(PMUSERENR_ER | PMUSERENR_CR);
		pmu_isb();
	}
	if (flags & PERF_EF_START)
		pmuv3_start(e, PERF_EF_RELOAD);
	return 0;
}

static void pmuv3_del(struct perf_event *e, int flags)
{
	struct pmuv3_cpu *c = this_cpu();
	int idx = e->hw.idx;

	(void)flags;
	pmuv3_stop(e, PERF_EF_UPDATE);
	c->events[idx] = NULL;
	c->used_mask &= ~(1u << idx);
	if (ev_is_chained(e))
		c->used_mask &= ~(1u << (idx - 1));
	e->hw.idx = -1;
	if ((e->hw.flags & PERF_HW_USER_READ) && --c->user_readers == 0)
		pmu_write_pmuserenr(0);
}

static void pmuv3_read(struct perf_event *e)
{
	event_update(e);
}

static bool pmuv3_filter_match(struct perf_event *e)
{
	return (e->hw.config_base & EVTYPE_EVENT) != EV_CHAIN;
}

static int pmuv3_event_idx(struct perf_event *e)
{
	if (!pmuv3_user_access || !(e->hw.flags & PERF_HW_USER_READ))
		return 0;
	return e->hw.idx == PMUV3_IDX_CYCLE ? USER_IDX_CYCLE : e->hw.idx;
}

/* ---- interrupt ---- */

bool pmuv3_handle_irq(const uint64_t *regs, bool user)
{
	struct pmuv3_cpu *c = this_cpu();
	uint32_t ovs = (uint32_t)pmu_read_pmovsclr();

	pmu_write_pmovsclr(ovs);
	pmu_isb();
	if (!ovs)
		return false;
	/* stop everything so the group's counts stay consistent while we look */
	pmu_write_pmcr(pmu_read_pmcr() & ~(uint64_t)PMCR_E);
	/* rotated by one, bit idx of pending is counter IDX_TO_COUNTER(idx): visit the overflowed
	 * counters only, in idx order (the cycle counter first) */
	for (uint32_t pending = ovs << 1 | ovs >> 31; pending; pending &= pending - 1) {
		unsigned int idx = (unsigned int)__builtin_ctz(pending);
		struct perf_event *e = idx < pv.num_events ? c->events[idx] : NULL;
		uint64_t period;

		/* An overflow nobody owns here (an event gone or moved, a counter never given
		 * out, the low half of a chained pair): its flag is cleared above; stop the
		 * counter and its interrupt and touch nothing else. */
		if (!e || e->hw.idx != (int)idx) {
			uint32_t bit = 1u << IDX_TO_COUNTER(idx);

			if (!(c->used_mask & (1u << idx))) {
				pmu_write_pmcntenclr(bit);
				pmu_write_pmintenclr(bit);
				pmu_isb();
			}
			continue;
		}
		event_update(e);
		period = e->hw.last_period;
		if (!event_set_period(e))
			continue;
		/* a counting event's interrupt only extends the count (perf_event_overflow: 0) */
		if (!e->attr.sample_period)
			continue;
		if (perf_event_overflow(e, period, regs, user))
			hw_disable(e); /* throttled, or its REFRESH limit ran out */
	}
	pmu_write_pmcr(pmu_read_pmcr() | PMCR_E);
	return true;
}

/* ---- probe ---- */

void pmuv3_cpu_init(void)
{
	uint64_t pmcr = PMCR_P | PMCR_C | PMCR_LC | PMCR_E;

	/* enables are UNKNOWN at reset */
	pmu_write_pmcntenclr(0xffffffffu);
	pmu_write_pmintenclr(0xffffffffu);
	pmu_write_pmovsclr(0xffffffffu);
	pmu_write_pmuserenr(0);
	if (pv.has_long)
		pmcr |= PMCR_LP;
	/*
	 * Counters start and stop one by one through PMCNTEN; PMCR.E stays on (Linux toggles it
	 * with the used mask, which makes no difference to what the counters see).
	 */
	pmu_write_pmcr(pmcr);
}

int pmuv3_probe(unsigned int nr_cpus)
{
	unsigned int ver = (pmu_read_id_aa64dfr0() >> DFR0_PMUVER_SHIFT) & 0xf;
	uint64_t e0, e1;
	int err;

	if (ver == PMUVER_NONE || ver == PMUVER_IMPDEF)
		return -ENODEV;
	if (pv.probed)
		return -EBUSY;
	pv.cpus = ksvc_alloc(sizeof(*pv.cpus) * nr_cpus);
	if (!pv.cpus)
		return -ENOMEM;
	pv.nr_cpus = nr_cpus;
	pv.num_events = ((pmu_read_pmcr() >> PMCR_N_SHIFT) & PMCR_N_MASK) + 1;
	pv.has_long = ver >= PMUVER_V3P5;
	e0 = pmu_read_pmceid0();
	e1 = pmu_read_pmceid1();
	pv.pmceid = (e0 & 0xffffffffu) | (e1 << 32);
	pv.pmceid_ext = (e0 >> 32) | (e1 & 0xffffffff00000000ull);
	pv.pmu = (struct perf_pmu){
	    .name = "armv8_pmuv3",
	    .event_init = pmuv3_event_init,
	    .add = pmuv3_add,
	    .del = pmuv3_del,
	    .start = pmuv3_start,
	    .stop = pmuv3_stop,
	    .read = pmuv3_read,
	    .event_idx = pmuv3_event_idx,
	    .filter_match = pmuv3_filter_match,
	};
	err = perf_pmu_register(&pv.pmu, PERF_TYPE_PMUV3);
	if (err) {
		ksvc_free(pv.cpus);
		pv.cpus = NULL;
		return err;
	}
	pv.probed = true;
	pmuv3_cpu_init();
	ksvc_printk("hw perfevents: enabled with armv8_pmuv3 PMU driver, %u counters available\n",
		    pv.num_events);
	return 0;
}

void pmuv3_remove(void)
{
	if (!pv.probed)
		return;
	perf_pmu_unregister(&pv.pmu);
	ksvc_free(pv.cpus);
	memset(&pv, 0, sizeof(pv));
}

struct perf_pmu *pmuv3_pmu(void)
{
	return pv.probed ? &pv.pmu : NULL;
}

unsigned int pmuv3_num_counters(void)
{
	return pv.num_events;
}

bool pmuv3_has_long_counters(void)
{
	return pv.has_long;
}

bool pmuv3_event_implemented(uint32_t ev)
{
	if (ev < MAX_COMMON_EVENTS)
		return pv.pmceid & (1ull << ev);
	if (ev >= 0x4000 && ev < 0x4000 + MAX_COMMON_EVENTS)
		return pv.pmceid_ext & (1ull << (ev - 0x4000));
	return false;
}
