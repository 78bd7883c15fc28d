/*
 * test_perf_bp.c - perf/bp.c against the fake debug registers: Linux 6.1's attr checks and
 * register encoding (arm64 arch_build_bp_info / hw_breakpoint_arch_parse), slot reservation
 * per kind with ENOSPC (per task, per CPU, and the two together), installing events into free
 * registers and suspending them, and which events a breakpoint or watchpoint hit counts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/hw_breakpoint.h>
#include <arch/dbg_sysreg.h>
#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

struct perf_limits perf_limits = { .nr_cpus = 2 };

/* bp.c samples through the software-event path: record what it was asked */
static int samples;
static uint64_t sample_addr;

void perf_sw_sample(struct perf_event *e, uint64_t addr, bool throttle)
{
	(void)e;
	assert_false(throttle); /* one hit, one overflow: never throttled */
	samples++;
	sample_addr = addr;
}

static const uint64_t *sample_regs;
static bool sample_user;

void perf_sw_sample_regs(struct perf_event *e, uint64_t addr, const uint64_t *regs, bool user,
			 bool throttle)
{
	perf_sw_sample(e, addr, throttle);
	sample_regs = regs;
	sample_user = user;
}

#define MAX_EV 40
static struct perf_event evs[MAX_EV];
static int nev;

static int setup(void **state)
{
	(void)state;
	memset(&dbg_fake, 0, sizeof(dbg_fake));
	dbg_fake.dfr0 = 5ull << 12 | 3ull << 20; /* 6 breakpoints, 4 watchpoints (QEMU's) */
	perf_bp_init();
	ksvc_fake.cpu = 0;
	perf_bp_cpu_init();
	ksvc_fake.cpu = 1;
	perf_bp_cpu_init();
	ksvc_fake.cpu = 0;
	memset(evs, 0, sizeof(evs));
	nev = 0;
	samples = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < nev; i++)
		if (evs[i].destroy)
			evs[i].destroy(&evs[i]);
	perf_pmu_unregister(perf_bp_pmu());
	return 0;
}

/* Open a breakpoint event through the PMU's event_init: 0 or -errno, *out the event. */
static int open_bp(uint32_t type, uint64_t addr, uint64_t len, int tid, int cpu,
		   struct perf_event **out)
{
	struct perf_event *e = &evs[nev++];

	e->attr.type = PERF_TYPE_BREAKPOINT;
	e->attr.bp_type = type;
	e->attr.bp_addr = addr;
	e->attr.bp_len = len;
	e->target_tid = tid;
	e->cpu = cpu;
	e->hw.idx = -1;
	e->pmu = perf_bp_pmu();
	if (out)
		*out = e;
	return perf_bp_pmu()->event_init(e);
}

static void close_bp(struct perf_event *e)
{
	if (e->destroy)
		e->destroy(e);
	e->destroy = NULL;
}

static void test_parse(void **state)
{
	static const struct {
		uint32_t type;
		uint64_t addr, len;
		int err;
		uint64_t want_addr;
		uint32_t want_ctrl; /* BAS << 5 | LSC << 3 | EL0 << 1 (not enabled) */
	} rows[] = {
		/* execute: 4 bytes whatever bp_len says (perf passes sizeof(long)) */
		{ HW_BREAKPOINT_X, 0x400100, 8, 0, 0x400100, 0xf << 5 | 2 << 1 },
		{ HW_BREAKPOINT_X, 0x400100, 4, 0, 0x400100, 0xf << 5 | 2 << 1 },
		/* store of 8 at an aligned address */
		{ HW_BREAKPOINT_W, 0x500000, 8, 0, 0x500000, 0xff << 5 | 2 << 3 | 2 << 1 },
		/* load of 1 byte at offset 3: address aligned down, byte select moved up */
		{ HW_BREAKPOINT_R, 0x500003, 1, 0, 0x500000, 0x08 << 5 | 1 << 3 | 2 << 1 },
		/* len 3 at offset 6: the mask keeps its 8 bits (0x1c0 -> 0xc0), as Linux's bitfield */
		{ HW_BREAKPOINT_RW, 0x500006, 3, 0, 0x500000, 0xc0 << 5 | 3 << 3 | 2 << 1 },
		/* bad type or length */
		{ HW_BREAKPOINT_X | HW_BREAKPOINT_R, 0x400100, 4, -EINVAL, 0, 0 },
		{ HW_BREAKPOINT_W, 0x500000, 0, -EINVAL, 0, 0 },
		{ HW_BREAKPOINT_W, 0x500000, 9, -EINVAL, 0, 0 },
		/* kernel addresses: not per task */
		{ HW_BREAKPOINT_X, 0xffff800000080000ull, 4, -EINVAL, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct perf_event_attr a = { .bp_type = rows[i].type, .bp_addr = rows[i].addr,
					     .bp_len = rows[i].len };
		uint64_t addr = 0;
		uint32_t ctrl = 0;

		assert_int_equal(perf_bp_parse(&a, true, &addr, &ctrl), rows[i].err);
		if (rows[i].err)
			continue;
		assert_int_equal(addr, rows[i].want_addr);
		assert_int_equal(ctrl, rows[i].want_ctrl);
	}
	struct perf_event_attr k = { .bp_type = HW_BREAKPOINT_X, .bp_addr = 0xffff800000080000ull,
				     .bp_len = 4 };
	uint64_t addr;
	uint32_t ctrl;

	/* CPU-wide: an EL1 breakpoint (privilege 1), unless it excludes the kernel */
	assert_int_equal(perf_bp_parse(&k, false, &addr, &ctrl), 0);
	assert_int_equal(addr, 0xffff800000080000ull);
	assert_int_equal(ctrl, 0xf << 5 | 1 << 1);
	k.exclude_kernel = 1;
	assert_int_equal(perf_bp_parse(&k, false, &addr, &ctrl), -EINVAL);
	/* the last byte below TASK_SIZE: user space */
	struct perf_event_attr u = { .bp_type = HW_BREAKPOINT_W, .bp_addr = (1ull << 48) - 8,
				     .bp_len = 8 };
	assert_int_equal(perf_bp_parse(&u, true, &addr, &ctrl), 0);
}

static void test_event_init_errors(void **state)
{
	struct perf_event *e;

	(void)state;
	assert_int_equal(open_bp(HW_BREAKPOINT_EMPTY, 0x400100, 4, 100, -1, NULL), -EINVAL);
	assert_int_equal(open_bp(HW_BREAKPOINT_INVALID, 0x400100, 4, 100, -1, NULL), -EINVAL);
	assert_int_equal(open_bp(HW_BREAKPOINT_W, 0x500000, 16, 100, -1, &e), -EINVAL);
	assert_null(e->destroy); /* a failed open keeps no slot */
	/* not a breakpoint: the next PMU's */
	struct perf_event *o = &evs[nev++];

	o->attr.type = PERF_TYPE_SOFTWARE;
	assert_int_equal(perf_bp_pmu()->event_init(o), -ENOENT);
	o->attr.type = PERF_TYPE_BREAKPOINT;
	o->attr.bp_type = HW_BREAKPOINT_X;
	o->attr.bp_len = 4;
	o->attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
	assert_int_equal(perf_bp_pmu()->event_init(o), -EOPNOTSUPP);
}

static void test_reservation(void **state)
{
	struct perf_event *e[8];

	(void)state;
	/* one task: 6 execute breakpoints, the 7th is ENOSPC; watchpoints count apart */
	for (int i = 0; i < 6; i++)
		assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400000 + 4 * i, 4, 100, -1, &e[i]), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 100, -1, NULL), -ENOSPC);
	assert_int_equal(open_bp(HW_BREAKPOINT_W, 0x500000, 8, 100, -1, NULL), 0);
	/* another task has registers of its own */
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 200, -1, NULL), 0);
	/* closing one frees a slot */
	close_bp(e[5]);
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 100, -1, NULL), 0);
	/* a CPU-wide breakpoint needs a slot next to the busiest task (100: 6): ENOSPC */
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 0, 1, NULL), -ENOSPC);
	close_bp(e[0]);
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 0, 1, &e[6]), 0);
	/* and now task 100 cannot take the freed slot back on CPU 1 (nor with cpu -1) */
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 100, -1, NULL), -ENOSPC);
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 100, 0, NULL), 0);
}

static void test_install_and_hits(void **state)
{
	struct perf_event *b, *w, *r, *b2;
	struct perf_pmu *pmu = perf_bp_pmu();

	(void)state;
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400100, 4, 100, -1, &b), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_W, 0x500008, 8, 100, -1, &w), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_R, 0x500013, 1, 100, -1, &r), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400200, 4, 100, -1, &b2), 0);
	b->attr.sample_period = 2;
	b->hw.sample_period = 2;
	b->hw.period_left = 2;
	b->attr.bp_addr = 0x400100;
	assert_int_equal(pmu->add(b, PERF_EF_START), 0);
	assert_int_equal(pmu->add(w, PERF_EF_START), 0);
	assert_int_equal(pmu->add(r, PERF_EF_START), 0);
	assert_int_equal(pmu->add(b2, 0), 0); /* installed, stopped */
	assert_int_equal(b->hw.idx, 0);
	assert_int_equal(b2->hw.idx, 1);
	assert_int_equal(dbg_fake.bvr[0], 0x400100);
	assert_int_equal(dbg_fake.bcr[0], 0xf << 5 | 2 << 1 | 1);
	assert_int_equal(dbg_fake.bcr[1], 0xf << 5 | 2 << 1); /* not enabled */
	assert_int_equal(dbg_fake.wvr[0], 0x500008);
	assert_int_equal(dbg_fake.wcr[0], 0xff << 5 | 2 << 3 | 2 << 1 | 1);
	assert_int_equal(dbg_fake.wvr[1], 0x500010);
	assert_int_equal(dbg_fake.wcr[1], 0x08 << 5 | 1 << 3 | 2 << 1 | 1);

	/* breakpoint hits: the matching started event counts; every 2nd hit samples */
	assert_true(perf_bp_hit(false, 0x400100, false, NULL, true, false));
	assert_true(perf_bp_hit(false, 0x400100, false, NULL, true, false));
	assert_int_equal(b->count, 2);
	assert_int_equal(samples, 1);
	assert_int_equal(sample_addr, 0x400100);
	assert_false(perf_bp_hit(false, 0x400104, false, NULL, true, false));
	perf_bp_hit(false, 0x400200, false, NULL, true, false); /* b2 is stopped */
	assert_int_equal(b2->count, 0);

	/* watchpoints: the access type must match; an exact byte match first */
	assert_true(perf_bp_hit(true, 0x50000c, true, NULL, true, false));
	assert_int_equal(w->count, 1);
	assert_int_equal(r->count, 0);
	assert_true(perf_bp_hit(true, 0x500013, false, NULL, true, false));
	assert_int_equal(r->count, 1);
	assert_int_equal(w->count, 1);
	/* a load reported near (not in) the watched byte: the closest load watchpoint */
	assert_true(perf_bp_hit(true, 0x500016, false, NULL, true, false));
	assert_int_equal(r->count, 2);

	/* suspend: every control register loses E, and gets it back */
	perf_bp_suspend(false, true);
	assert_int_equal(dbg_fake.bcr[0] & 1, 0);
	assert_int_equal(dbg_fake.wcr[0] & 1, 0);
	assert_int_equal(dbg_fake.wcr[1] & 1, 0);
	/* an event started while suspended stays off in the register until the resume */
	pmu->start(b2, 0);
	assert_int_equal(dbg_fake.bcr[1] & 1, 0);
	perf_bp_suspend(false, false);
	assert_int_equal(dbg_fake.bcr[0] & 1, 1);
	assert_int_equal(dbg_fake.bcr[1] & 1, 1);
	assert_int_equal(dbg_fake.wcr[1] & 1, 1);

	/* del frees the register */
	pmu->del(b, 0);
	assert_int_equal(dbg_fake.bcr[0], 0);
	assert_int_equal(b->hw.idx, -1);
	assert_false(perf_bp_hit(false, 0x400100, false, NULL, true, false));
	/* registers are per CPU: CPU 1 has its own free slot 0 */
	ksvc_fake.cpu = 1;
	assert_int_equal(pmu->add(b, PERF_EF_START), 0);
	assert_int_equal(b->hw.idx, 0);
	pmu->del(b, 0);
	ksvc_fake.cpu = 0;
	pmu->del(b2, 0);
	pmu->del(w, 0);
	pmu->del(r, 0);
}

/* A CPU-wide breakpoint and watchpoint on kernel addresses: EL1 slots, which the user step's
 * suspension leaves on; kernel hits count and sample with the kernel's registers, except where
 * the kernel had interrupts masked (count only); a user hit never counts a kernel slot. */
static void test_kernel_slots(void **state)
{
	struct perf_event *k, *kw, *u;
	struct perf_pmu *pmu = perf_bp_pmu();
	uint64_t regs[34] = { 0 };

	(void)state;
	assert_int_equal(open_bp(HW_BREAKPOINT_X, 0xffff800000081000ull, 4, 0, 0, &k), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_W, 0xffff800000200008ull, 8, 0, 0, &kw), 0);
	assert_int_equal(open_bp(HW_BREAKPOINT_W, 0x500008, 8, 100, -1, &u), 0);
	k->attr.sample_period = 1;
	k->hw.sample_period = 1;
	k->hw.period_left = 1;
	assert_int_equal(pmu->add(k, PERF_EF_START), 0);
	assert_int_equal(pmu->add(kw, PERF_EF_START), 0);
	assert_int_equal(pmu->add(u, PERF_EF_START), 0);
	assert_int_equal(dbg_fake.bcr[0], 0xf << 5 | 1 << 1 | 1);
	assert_int_equal(dbg_fake.wcr[0], 0xff << 5 | 2 << 3 | 1 << 1 | 1);

	assert_true(perf_bp_hit(false, 0xffff800000081000ull, false, regs, false, false));
	assert_int_equal(k->count, 1);
	assert_int_equal(samples, 1);
	assert_ptr_equal(sample_regs, regs);
	assert_false(sample_user);
	/* interrupts were masked where it hit: counted, not sampled */
	assert_true(perf_bp_hit(false, 0xffff800000081000ull, false, regs, false, true));
	assert_int_equal(k->count, 2);
	assert_int_equal(samples, 1);
	/* a user store reported near both watchpoints: only the user one is a candidate */
	assert_true(perf_bp_hit(true, 0x500010, true, regs, true, false));
	assert_int_equal(u->count, 1);
	assert_int_equal(kw->count, 0);
	assert_true(perf_bp_hit(true, 0xffff800000200008ull, true, regs, false, false));
	assert_int_equal(kw->count, 1);
	assert_int_equal(u->count, 1);

	/* the user step suspends the EL0 slots only, the kernel step the EL1 ones only */
	perf_bp_suspend(false, true);
	assert_int_equal(dbg_fake.bcr[0] & 1, 1);
	assert_int_equal(dbg_fake.wcr[0] & 1, 1);
	assert_int_equal(dbg_fake.wcr[1] & 1, 0);
	perf_bp_suspend(false, false);
	perf_bp_suspend(true, true);
	assert_int_equal(dbg_fake.bcr[0] & 1, 0);
	assert_int_equal(dbg_fake.wcr[0] & 1, 0);
	assert_int_equal(dbg_fake.wcr[1] & 1, 1);
	perf_bp_suspend(true, false);
	assert_int_equal(dbg_fake.bcr[0] & 1, 1);
	assert_int_equal(dbg_fake.wcr[0] & 1, 1);
	pmu->del(k, 0);
	pmu->del(kw, 0);
	pmu->del(u, 0);
}

static void test_slots_run_out(void **state)
{
	struct perf_event *e[7];
	struct perf_pmu *pmu = perf_bp_pmu();

	(void)state;
	/* two tasks' events can be reserved beyond one CPU's registers; only 6 go on at once */
	for (int i = 0; i < 7; i++) {
		assert_int_equal(open_bp(HW_BREAKPOINT_X, 0x400000 + 4 * i, 4, 100 + (i & 1), -1,
					 &e[i]),
				 0);
	}
	for (int i = 0; i < 6; i++)
		assert_int_equal(pmu->add(e[i], 0), 0);
	assert_int_equal(pmu->add(e[6], 0), -EAGAIN);
	for (int i = 0; i < 6; i++)
		pmu->del(e[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_init_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reservation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_install_and_hits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_run_out, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
