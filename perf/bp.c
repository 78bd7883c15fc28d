/*
 * bp.c - the hw_breakpoint PMU (PERF_TYPE_BREAKPOINT, "breakpoint" in sysfs): an execute
 * breakpoint on an instruction, or a watchpoint on loads and/or stores of 1 to 8 bytes, on
 * the arm64 debug registers; each hit counts 1 and, with a sample_period, samples as a software
 * event does (addr = attr.bp_addr), with the registers of the hit: user code's, or the kernel's
 * for a CPU-wide breakpoint on a kernel address (IP the kernel instruction, misc KERNEL).
 *
 * Linux 6.1 is the reference for what is accepted:
 *  - kernel/events/hw_breakpoint.c: bp_type EMPTY/INVALID is EINVAL; slots are reserved per
 *    type (instruction or data) at open: on each CPU the event could run on, that CPU's
 *    CPU-wide breakpoints plus the most any one task has there must fit its registers, else
 *    ENOSPC.  A breakpoint on a kernel address with exclude_kernel is EINVAL.
 *  - arch/arm64/kernel/hw_breakpoint.c: bp_type X, R, W or RW and bp_len 1..8, else EINVAL;
 *    an execute breakpoint is 4 bytes whatever bp_len says; the address is aligned down (4 for
 *    execute, 8 for data) and the byte-select mask shifted by what was cut off (kept to its 8
 *    bits); the privilege follows the address (EL1 above TASK_SIZE), and a per-task kernel
 *    breakpoint is EINVAL.
 * Running: pmu add/del install an event in a free register of this CPU (EAGAIN when none is
 * free); the arch trap code reports EL0 and EL1 debug exceptions through perf_bp_hit and then
 * steps over the instruction with this CPU's slots of that level suspended (perf_bp_suspend),
 * as Linux does; perf_bp_init registers both with it (ksvc_hw_breakpoint_register).
 * A kernel hit is taken like an NMI (debug exceptions are not masked with interrupts): where the
 * kernel had interrupts masked it only counts, since the sample's ring buffer lock may be the
 * one that code holds (Linux's ring buffer is lock-free and samples there too).
 * Locks: bp_lock (IRQ-safe) covers the reservations; the per-CPU slot tables are [p] (this
 * CPU, interrupts masked).
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <arch/dbg_sysreg.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <perf/perf.h>
#include <kern/string.h>
#include "perf_internal.h"

#define BP_TASK_SIZE (1ull << 48) /* arm64 TASK_SIZE with 48-bit VAs */
#define BP_SLOTS 16
enum { BP_INST, BP_DATA }; /* slot kinds: DBGB* and DBGW* registers */

/* control register fields (DBGBCR/DBGWCR): enable, EL1 or EL0 only, load/store, byte select */
#define CTRL_E 0x1u
#define CTRL_EL1 (1u << 1)
#define CTRL_EL0 (2u << 1)
#define CTRL_LOAD (1u << 3)
#define CTRL_STORE (2u << 3)
#define CTRL_BAS_SHIFT 5

static struct spinlock bp_lock;
static struct list_node bp_reserved = LIST_INIT(bp_reserved); /* hw.bp_node, under bp_lock */
static unsigned int nr_slots[2];				 /* per kind, from ID_AA64DFR0 */

struct bp_cpu {
	struct perf_event *ev[2][BP_SLOTS];
	uint32_t ctrl[2][BP_SLOTS]; /* what the control register holds without the suspension */
	bool suspended[2];	    /* EL0 [0] or EL1 [1] slots off while stepping over a hit */
};
static struct bp_cpu bp_cpus[PERF_MAX_CPUS];

static unsigned int bp_kind(uint32_t bp_type)
{
	return (bp_type & HW_BREAKPOINT_RW) ? BP_DATA : BP_INST;
}

int perf_bp_parse(const struct perf_event_attr *a, bool task, uint64_t *addr, uint32_t *ctrl)
{
	uint32_t type, mask;
	uint64_t align, off;

	switch (a->bp_type) {
	case HW_BREAKPOINT_X: type = 0; break;
	case HW_BREAKPOINT_R: type = CTRL_LOAD; break;
	case HW_BREAKPOINT_W: type = CTRL_STORE; break;
	case HW_BREAKPOINT_RW: type = CTRL_LOAD | CTRL_STORE; break;
	default: return -EINVAL;
	}
	if (a->bp_len < HW_BREAKPOINT_LEN_1 || a->bp_len > HW_BREAKPOINT_LEN_8)
		return -EINVAL;
	uint64_t len = type ? a->bp_len : 4; /* A64 instructions are 4 bytes, whatever perf says */
	/* kernel space: the first and the last byte at or above TASK_SIZE */
	bool kernel = a->bp_addr >= BP_TASK_SIZE && a->bp_addr + len - 1 >= BP_TASK_SIZE;

	mask = (1u << len) - 1;

	align = type ? 7 : 3;
	off = a->bp_addr & align;
	*addr = a->bp_addr & ~align;
	mask = (mask << off) & 0xff;
	*ctrl = mask << CTRL_BAS_SHIFT | type | (kernel ? CTRL_EL1 : CTRL_EL0);
	if (kernel && (task || a->exclude_kernel))
		return -EINVAL; /* no per-task kernel breakpoints; none that excludes the kernel */
	return 0;
}

/* ---- slot reservation ---- */

/* Reserved events of kind on cpu: CPU-wide ones there, and tid's (any CPU or that one). */
static unsigned int busy_on(unsigned int kind, int cpu, int tid)
{
	struct list_node *n;
	unsigned int pinned = 0, mine = 0;

	list_for_each(n, &bp_reserved) {
		struct perf_event *o = list_entry(n, struct perf_event, hw.bp_node);

		if (bp_kind(o->attr.bp_type) != kind)
			continue;
		if (!o->target_tid && o->cpu == cpu)
			pinned++;
		else if (o->target_tid && o->target_tid == tid && (o->cpu == -1 || o->cpu == cpu))
			mine++;
	}
	return pinned + mine;
}

/* The most any one task has on cpu. */
static unsigned int max_task_on(unsigned int kind, int cpu)
{
	struct list_node *n;
	unsigned int most = 0;

	list_for_each(n, &bp_reserved) {
		struct perf_event *o = list_entry(n, struct perf_event, hw.bp_node);

		if (o->target_tid && bp_kind(o->attr.bp_type) == kind) {
			unsigned int c = busy_on(kind, cpu, o->target_tid) - busy_on(kind, cpu, 0);

			if (c > most)
				most = c;
		}
	}
	return most;
}

static int reserve(struct perf_event *e)
{
	unsigned int kind = bp_kind(e->attr.bp_type), need = 0;
	unsigned int lo = e->cpu >= 0 ? (unsigned int)e->cpu : 0;
	unsigned int hi = e->cpu >= 0 ? lo + 1 : perf_limits.nr_cpus;
	unsigned long f = spin_lock_irqsave(&bp_lock);
	int err = 0;

	for (unsigned int c = lo; c < hi; c++) {
		unsigned int n = e->target_tid ? busy_on(kind, (int)c, e->target_tid)
					       : busy_on(kind, (int)c, 0) + max_task_on(kind, (int)c);

		need = n + 1 > need ? n + 1 : need;
	}
	if (need > nr_slots[kind])
		err = -ENOSPC;
	else
		list_add_tail(&bp_reserved, &e->hw.bp_node);
	spin_unlock_irqrestore(&bp_lock, f);
	return err;
}

static void bp_destroy(struct perf_event *e)
{
	unsigned long f = spin_lock_irqsave(&bp_lock);

	list_del(&e->hw.bp_node);
	spin_unlock_irqrestore(&bp_lock, f);
}

static int bp_event_init(struct perf_event *e)
{
	uint64_t addr;
	uint32_t ctrl;
	int err;

	if (e->attr.type != PERF_TYPE_BREAKPOINT)
		return -ENOENT;
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if (e->attr.bp_type == HW_BREAKPOINT_EMPTY || e->attr.bp_type == HW_BREAKPOINT_INVALID)
		return -EINVAL;
	/* Linux's order: the slot, then the attr */
	err = reserve(e);
	if (err)
		return err;
	err = perf_bp_parse(&e->attr, e->target_tid != 0, &addr, &ctrl);
	if (err) {
		bp_destroy(e);
		return err;
	}
	e->hw.bp_addr = addr;
	e->hw.config_base = ctrl;
	e->destroy = bp_destroy;
	return 0;
}

int perf_bp_modify(struct perf_event *e, const struct perf_event_attr *na)
{
	struct perf_event_attr want = e->attr;
	uint64_t addr;
	uint32_t ctrl;
	int err = perf_bp_parse(na, e->target_tid != 0, &addr, &ctrl);

	if (err)
		return err;
	/* hw_breakpoint_copy_attr onto the old attr: nothing else may have changed */
	want.bp_addr = na->bp_addr;
	want.bp_type = na->bp_type;
	want.bp_len = na->bp_len;
	want.disabled = na->disabled;
	if (memcmp(&want, na, sizeof(want)))
		return -EINVAL;
	if (bp_kind(na->bp_type) != bp_kind(e->attr.bp_type)) {
		/* modify_bp_slot: the slot of the new kind, else keep the old one */
		struct perf_event_attr old = e->attr;

		bp_destroy(e);
		e->attr.bp_type = na->bp_type;
		err = reserve(e);
		if (err) {
			e->attr = old;
			if (reserve(e))
				ksvc_printk("perf: breakpoint %llu lost its slot\n",
					    (unsigned long long)e->id);
			return err;
		}
	}
	e->attr.bp_addr = na->bp_addr;
	e->attr.bp_type = na->bp_type;
	e->attr.bp_len = na->bp_len;
	e->attr.disabled = na->disabled;
	e->hw.bp_addr = addr;
	e->hw.config_base = ctrl;
	return 0;
}

/* ---- the registers of this CPU [p] ---- */

static struct bp_cpu *this_bp_cpu(void)
{
	return &bp_cpus[ksvc_cpu_id() % PERF_MAX_CPUS];
}

/* Does slot i of kind watch the kernel (EL1)? */
static bool slot_el1(const struct bp_cpu *c, unsigned int kind, unsigned int i)
{
	return (c->ctrl[kind][i] & (3u << 1)) == CTRL_EL1;
}

static void write_ctrl(struct bp_cpu *c, unsigned int kind, unsigned int i)
{
	uint32_t v = c->suspended[slot_el1(c, kind, i)] ? c->ctrl[kind][i] & ~CTRL_E : c->ctrl[kind][i];

	if (kind == BP_INST)
		dbg_write_bcr(i, v);
	else
		dbg_write_wcr(i, v);
}

static int bp_add(struct perf_event *e, int flags)
{
	struct bp_cpu *c = this_bp_cpu();
	unsigned int kind = bp_kind(e->attr.bp_type);

	for (unsigned int i = 0; i < nr_slots[kind]; i++) {
		if (c->ev[kind][i])
			continue;
		c->ev[kind][i] = e;
		c->ctrl[kind][i] = e->hw.config_base; /* stopped: not enabled yet */
		if (kind == BP_INST)
			dbg_write_bvr(i, e->hw.bp_addr);
		else
			dbg_write_wvr(i, e->hw.bp_addr);
		write_ctrl(c, kind, i);
		e->hw.idx = (int)i;
		e->hw.state = PERF_HES_STOPPED;
		if (flags & PERF_EF_START)
			e->pmu->start(e, flags);
		return 0;
	}
	return -EAGAIN;
}

static void set_enabled(struct perf_event *e, bool on)
{
	struct bp_cpu *c = this_bp_cpu();
	unsigned int kind = bp_kind(e->attr.bp_type);

	if (e->hw.idx < 0)
		return;
	c->ctrl[kind][e->hw.idx] = e->hw.config_base | (on ? CTRL_E : 0);
	write_ctrl(c, kind, (unsigned int)e->hw.idx);
	dbg_isb();
}

static void bp_start(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = 0;
	set_enabled(e, true);
}

static void bp_stop(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = PERF_HES_STOPPED;
	set_enabled(e, false);
}

static void bp_del(struct perf_event *e, int flags)
{
	struct bp_cpu *c = this_bp_cpu();
	unsigned int kind = bp_kind(e->attr.bp_type);

	bp_stop(e, flags);
	if (e->hw.idx >= 0) {
		c->ev[kind][e->hw.idx] = NULL;
		c->ctrl[kind][e->hw.idx] = 0;
		write_ctrl(c, kind, (unsigned int)e->hw.idx);
		e->hw.idx = -1;
	}
}

static void bp_read(struct perf_event *e)
{
	(void)e; /* the count is kept by the hits themselves */
}

static struct perf_pmu bp_pmu = {
	.name = "breakpoint",
	.caps = PERF_PMU_CAP_SOFTWARE | PERF_PMU_CAP_NO_NMI,
	.event_init = bp_event_init,
	.add = bp_add,
	.del = bp_del,
	.start = bp_start,
	.stop = bp_stop,
	.read = bp_read,
};

struct perf_pmu *perf_bp_pmu(void)
{
	return &bp_pmu;
}

void perf_bp_init(void)
{
	uint64_t dfr0 = dbg_read_id_aa64dfr0();

	spin_init(&bp_lock);
	nr_slots[BP_INST] = (unsigned int)((dfr0 >> 12) & 0xf) + 1;
	nr_slots[BP_DATA] = (unsigned int)((dfr0 >> 20) & 0xf) + 1;
	perf_pmu_register(&bp_pmu, PERF_TYPE_BREAKPOINT);
	ksvc_hw_breakpoint_register(perf_bp_hit, perf_bp_suspend);
}

void perf_bp_cpu_init(void)
{
	struct bp_cpu *c = this_bp_cpu();

	/* the control registers reset to UNKNOWN values: every slot off */
	for (unsigned int i = 0; i < nr_slots[BP_INST]; i++)
		dbg_write_bcr(i, 0);
	for (unsigned int i = 0; i < nr_slots[BP_DATA]; i++)
		dbg_write_wcr(i, 0);
	dbg_isb();
	*c = (struct bp_cpu){ 0 };
}

void perf_bp_suspend(bool kernel, bool on)
{
	struct bp_cpu *c = this_bp_cpu();

	if (c->suspended[kernel] == on && !(kernel && !on))
		return;
	c->suspended[kernel] = on;
	if (kernel && !on) {
		/* the trap code may have borrowed execute slots while they were suspended */
		for (unsigned int i = 0; i < nr_slots[BP_INST] && i < BP_SLOTS; i++) {
			if (c->ev[BP_INST][i])
				dbg_write_bvr(i, c->ev[BP_INST][i]->hw.bp_addr);
			write_ctrl(c, BP_INST, i);
		}
	}
	for (unsigned int kind = BP_INST; kind <= BP_DATA; kind++)
		for (unsigned int i = 0; i < nr_slots[kind]; i++)
			if (c->ev[kind][i])
				write_ctrl(c, kind, i);
	dbg_isb();
}

/* ---- hits [p] ---- */

struct bp_hit {
	const uint64_t *regs;
	bool user, irqs_off;
};

static void hit(struct perf_event *e, const struct bp_hit *h)
{
	if (e->hw.state & PERF_HES_STOPPED)
		return;
	atomic_fetch_add(&e->count, 1);
	if (h->irqs_off)
		return; /* count only: the interrupted code may hold any IRQ-safe lock */
	if (e->attr.sample_period && --e->hw.period_left <= 0) {
		e->hw.period_left += (int64_t)e->hw.sample_period;
		if (h->regs)
			perf_sw_sample_regs(e, e->attr.bp_addr, h->regs, h->user, false);
		else
			perf_sw_sample(e, e->attr.bp_addr, false);
	}
}

/* How far addr is from the bytes slot value/ctrl watches (0: inside), as Linux's heuristic. */
static uint64_t watch_distance(uint64_t addr, uint64_t val, uint32_t ctrl)
{
	uint32_t bas = (ctrl >> CTRL_BAS_SHIFT) & 0xff;
	uint64_t lo, hi;

	if (!bas)
		return UINT64_MAX;
	lo = val + (uint64_t)__builtin_ctz(bas);
	hi = val + 31 - (uint64_t)__builtin_clz(bas);
	return addr < lo ? lo - addr : addr > hi ? addr - hi : 0;
}

bool perf_bp_hit(bool watch, uint64_t addr, bool write, const uint64_t *regs, bool user,
		 bool irqs_off)
{
	struct bp_cpu *c = this_bp_cpu();
	const struct bp_hit h = { regs, user, irqs_off };
	bool any = false;

	if (!watch) {
		for (unsigned int i = 0; i < nr_slots[BP_INST]; i++) {
			struct perf_event *e = c->ev[BP_INST][i];

			if (e && slot_el1(c, BP_INST, i) == !user && e->hw.bp_addr == (addr & ~3ull)) {
				hit(e, &h);
				any = true;
			}
		}
		return any;
	}
	/* watchpoints: every exact match of the access type, else the closest one */
	uint64_t best = UINT64_MAX;
	struct perf_event *closest = NULL;

	for (unsigned int i = 0; i < nr_slots[BP_DATA]; i++) {
		struct perf_event *e = c->ev[BP_DATA][i];

		if (!e || slot_el1(c, BP_DATA, i) == user ||
		    !(e->attr.bp_type & (write ? HW_BREAKPOINT_W : HW_BREAKPOINT_R)))
			continue;
		uint64_t d = watch_distance(addr, e->hw.bp_addr, c->ctrl[BP_DATA][i]);

		if (d < best) {
			best = d;
			closest = e;
		}
		if (!d) {
			hit(e, &h);
			any = true;
		}
	}
	if (!any && closest) {
		hit(closest, &h);
		any = true;
	}
	return any;
}
