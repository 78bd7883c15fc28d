/*
 * test_perf_pmu.c - perf/pmu.c: the type -> PMU table (dynamic types, extended HW types, RAW
 * aliasing, the try-every-PMU fallback and its errno), the counter maths, and group
 * scheduling against a fake PMU with a fixed number of slots: pinned before flexible,
 * all-or-nothing groups, Linux's can_add_hw rule, software groups, exclusive groups, pinned
 * failures to ERROR, and rotation with time_enabled/time_running bookkeeping.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../perf/perf_internal.h"

/* ---- a fake PMU: `slots` counters, answers only its own type unless told otherwise ---- */

struct fake_pmu {
	struct perf_pmu pmu;
	int slots, used;
	int init_ret;	      /* what event_init returns for an event it accepts */
	uint32_t accept_type; /* attr.type it takes (besides its own) */
	int inits;	      /* event_init calls */
	uint64_t last_config;
};

static int fake_init(struct perf_event *e)
{
	struct fake_pmu *f = e->pmu->priv;

	f->inits++;
	if (e->attr.type != (uint32_t)f->pmu.type && e->attr.type != f->accept_type)
		return -ENOENT;
	f->last_config = e->attr.config;
	return f->init_ret;
}

static int fake_add(struct perf_event *e, int flags)
{
	struct fake_pmu *f = e->pmu->priv;

	if (f->used == f->slots)
		return -EAGAIN;
	f->used++;
	return 0;
}

static void fake_del(struct perf_event *e, int flags)
{
	struct fake_pmu *f = e->pmu->priv;

	f->used--;
}

static void fake_read(struct perf_event *e)
{
	atomic_fetch_add(&e->count, 1);
}

static void fake_setup(struct fake_pmu *f, const char *name, int slots, unsigned int caps)
{
	memset(f, 0, sizeof(*f));
	f->pmu = (struct perf_pmu){.name = name,
				   .caps = caps,
				   .event_init = fake_init,
				   .add = fake_add,
				   .del = fake_del,
				   .read = fake_read,
				   .priv = f};
	f->slots = slots;
	f->accept_type = ~0u;
}

static int reset(void **state)
{
	perf_pmu_reset_table();
	return 0;
}

/* ---- table ---- */

static void test_register_types(void **state)
{
	struct fake_pmu sw, tp, bp, kp, up, cpu;

	fake_setup(&sw, "software", 0, PERF_PMU_CAP_SOFTWARE);
	fake_setup(&tp, "tracepoint", 0, 0);
	fake_setup(&bp, "breakpoint", 0, 0);
	fake_setup(&kp, "kprobe", 0, 0);
	fake_setup(&up, "uprobe", 0, 0);
	fake_setup(&cpu, "armv8_pmuv3", 0, 0);
	/* Linux 6.1 boot order: software 1, tracepoint 2, kprobe and uprobe dynamic, bp 5 */
	assert_int_equal(perf_pmu_register(&sw.pmu, PERF_TYPE_SOFTWARE), 0);
	assert_int_equal(perf_pmu_register(&tp.pmu, PERF_TYPE_TRACEPOINT), 0);
	assert_int_equal(perf_pmu_register(&kp.pmu, -1), 0);
	assert_int_equal(perf_pmu_register(&up.pmu, -1), 0);
	assert_int_equal(perf_pmu_register(&bp.pmu, PERF_TYPE_BREAKPOINT), 0);
	assert_int_equal(perf_pmu_register(&cpu.pmu, -1), 0);
	assert_int_equal(kp.pmu.type, 6);
	assert_int_equal(up.pmu.type, 7);
	assert_int_equal(cpu.pmu.type, PERF_TYPE_PMUV3);
	assert_ptr_equal(perf_pmu_find(8), &cpu.pmu);
	assert_null(perf_pmu_find(PERF_TYPE_RAW));
	assert_null(perf_pmu_find(1000));
	struct fake_pmu dup;

	fake_setup(&dup, "dup", 0, 0);
	assert_int_equal(perf_pmu_register(&dup.pmu, PERF_TYPE_SOFTWARE), -EBUSY);
	perf_pmu_unregister(&kp.pmu);
	assert_null(perf_pmu_find(6));
	assert_int_equal(perf_pmu_register(&dup.pmu, -1), 0);
	assert_int_equal(dup.pmu.type, 6);
}

static void test_init_event_lookup(void **state)
{
	struct fake_pmu sw, cpu;
	struct perf_event e;

	fake_setup(&sw, "software", 0, PERF_PMU_CAP_SOFTWARE);
	fake_setup(&cpu, "cpu", 0, PERF_PMU_CAP_EXTENDED_HW_TYPE);
	assert_int_equal(perf_pmu_register(&sw.pmu, PERF_TYPE_SOFTWARE), 0);
	assert_int_equal(perf_pmu_register(&cpu.pmu, -1), 0);
	cpu.accept_type = PERF_TYPE_HARDWARE; /* like armpmu: HARDWARE/HW_CACHE/RAW */

	/* HARDWARE aliases RAW; no RAW PMU: every PMU is asked, cpu answers */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_HARDWARE;
	e.attr.config = PERF_COUNT_HW_CPU_CYCLES;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_ptr_equal(e.pmu, &cpu.pmu);
	assert_int_equal(sw.inits, 1);

	/* the extended type: config[63:32] names the PMU, config is cut to 32 bits */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_HARDWARE;
	e.attr.config = ((uint64_t)cpu.pmu.type << 32) | PERF_COUNT_HW_INSTRUCTIONS;
	sw.inits = 0;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_ptr_equal(e.pmu, &cpu.pmu);
	assert_int_equal(e.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_int_equal(sw.inits, 0);
	/* an extended type naming a PMU without PERF_PMU_CAP_EXTENDED_HW_TYPE (software): every
	 * PMU is asked instead, and the CPU PMU takes it.  Debian's 6.1 (the reference VM) opens
	 * HARDWARE config (1 << 32) | CPU_CYCLES this way. */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_HARDWARE;
	e.attr.config = (uint64_t)PERF_TYPE_SOFTWARE << 32;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_ptr_equal(e.pmu, &cpu.pmu);
	/* an extended type nobody owns: every PMU is asked (as Linux), the CPU PMU takes it */
	e.attr.config = 13ull << 32;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_ptr_equal(e.pmu, &cpu.pmu);
	assert_int_equal(e.attr.config, 0);

	/* unknown type: ENOENT; a PMU's other error stops the loop */
	memset(&e, 0, sizeof(e));
	e.attr.type = 42;
	assert_int_equal(perf_pmu_init_event(&e), -ENOENT);
	cpu.accept_type = 42;
	cpu.init_ret = -EOPNOTSUPP;
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
	cpu.init_ret = 0;

	/* period set up as perf_event_alloc does */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_SOFTWARE;
	e.attr.freq = 1;
	e.attr.sample_freq = 4000;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_int_equal(e.hw.sample_period, 1);
	assert_int_equal(e.hw.period_left, 1);
	assert_int_equal(e.hw.idx, -1);
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_SOFTWARE;
	e.attr.sample_period = 100000;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_int_equal(e.hw.sample_period, 100000);
	assert_int_equal(e.hw.last_period, 100000);
}

static void test_raw_then_type_fallback(void **state)
{
	struct fake_pmu raw, hw;
	struct perf_event e;

	/* a RAW PMU refusing a HARDWARE event sends the lookup back to attr.type */
	fake_setup(&raw, "raw", 0, 0);
	fake_setup(&hw, "hw", 0, 0);
	assert_int_equal(perf_pmu_register(&raw.pmu, PERF_TYPE_RAW), 0);
	assert_int_equal(perf_pmu_register(&hw.pmu, PERF_TYPE_HARDWARE), 0);
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_HARDWARE;
	assert_int_equal(perf_pmu_init_event(&e), 0);
	assert_ptr_equal(e.pmu, &hw.pmu);
	assert_int_equal(raw.inits, 1);
}

static void test_post_init_checks(void **state)
{
	struct fake_pmu p;
	struct perf_event e;

	fake_setup(&p, "p", 0, PERF_PMU_CAP_NO_EXCLUDE);
	assert_int_equal(perf_pmu_register(&p.pmu, -1), 0);
	memset(&e, 0, sizeof(e));
	e.attr.type = p.pmu.type;
	e.attr.exclude_user = 1;
	assert_int_equal(perf_pmu_init_event(&e), -EINVAL);
	e.attr.exclude_user = 0;
	e.attr.sample_type = PERF_SAMPLE_REGS_USER;
	e.attr.sample_regs_user = PERF_REG_EXTENDED_MASK;
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
	p.pmu.caps |= PERF_PMU_CAP_EXTENDED_REGS;
	assert_int_equal(perf_pmu_init_event(&e), 0);
}

/* ---- counter maths ---- */

static void test_counter_maths(void **state)
{
	struct perf_hw hw = {.sample_period = 1000, .period_left = 1000, .last_period = 1000};
	_Atomic uint64_t count = 0;
	uint64_t prog;

	assert_int_equal(perf_counter_delta(0xfffffff0, 0x10, 32), 0x20);
	assert_int_equal(perf_counter_delta(5, 3, 64), (uint64_t)-2);
	assert_int_equal(perf_counter_mask(32), 0xffffffffu);
	assert_int_equal(perf_counter_mask(64), ~0ull);

	/* first programming: -1000 in 32 bits, no sample */
	assert_false(perf_hw_set_period(&hw, 32, &prog));
	assert_int_equal(prog, 0x100000000ull - 1000);
	/* the counter overflowed 5 events late: delta 1005, the sample is due, 995 left */
	assert_int_equal(perf_hw_update(&hw, &count, 5, 32), 1005);
	assert_int_equal(count, 1005);
	assert_true(perf_hw_set_period(&hw, 32, &prog));
	assert_int_equal(hw.period_left, 995);
	assert_int_equal(prog, 0x100000000ull - 995);
	/* far behind: restart the period */
	hw.period_left = -5000;
	assert_true(perf_hw_set_period(&hw, 32, &prog));
	assert_int_equal(hw.period_left, 1000);
	/* a period longer than half the counter is cut to half */
	hw.sample_period = 1ull << 40;
	hw.period_left = 1ll << 40;
	assert_false(perf_hw_set_period(&hw, 32, &prog));
	assert_int_equal(prog, 0x80000001ull);
	assert_int_equal(hw.prev_count, (uint64_t) - (int64_t)0x7fffffff);
	/* a 32-bit read after the wrap folds into 64 bits */
	assert_int_equal(perf_hw_update(&hw, &count, 0x10, 32), 0x7fffffffull + 0x10);
	/* 64-bit counters */
	hw.sample_period = 100;
	hw.period_left = 100;
	assert_false(perf_hw_set_period(&hw, 64, &prog));
	assert_int_equal(prog, (uint64_t)-100);
}

/* ---- scheduling ---- */

static struct perf_event *mk(struct perf_event *e, struct fake_pmu *p, struct perf_event *leader,
			     bool pinned)
{
	memset(e, 0, sizeof(*e));
	e->attr.pinned = pinned;
	e->pmu = &p->pmu;
	perf_event_init_group(e, leader);
	if (leader)
		perf_group_attach_locked(e);
	return e;
}

static void test_sched_pinned_first_and_groups(void **state)
{
	struct fake_pmu hw, sw;
	struct perf_ctx ctx;
	struct perf_event a, b, b1, b2, c, p, s;

	fake_setup(&hw, "hw", 3, 0);
	fake_setup(&sw, "sw", 0, PERF_PMU_CAP_SOFTWARE);
	sw.slots = 100;
	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	perf_ctx_add_group_locked(&ctx, mk(&a, &hw, NULL, false));
	perf_ctx_add_group_locked(&ctx, mk(&b, &hw, NULL, false));
	mk(&b1, &hw, &b, false);
	mk(&b2, &hw, &b, false);
	perf_ctx_add_group_locked(&ctx, mk(&c, &hw, NULL, false));
	perf_ctx_add_group_locked(&ctx, mk(&s, &sw, NULL, false));
	perf_ctx_add_group_locked(&ctx, mk(&p, &hw, NULL, true));
	assert_int_equal(b.nr_siblings, 2);

	perf_ctx_sched_in_locked(&ctx, 0);
	/* pinned p first, then a; group b (3) does not fit in the 1 left: none of it goes on */
	assert_int_equal(p.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(a.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(b.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(b1.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(b2.state, PERF_EVENT_STATE_INACTIVE);
	/* c would fit, but after a failed hardware group nothing more goes on (can_add_hw) */
	assert_int_equal(c.state, PERF_EVENT_STATE_INACTIVE);
	/* software groups always go on */
	assert_int_equal(s.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(hw.used, 2);
	assert_true(ctx.rotate_necessary);

	perf_ctx_sched_out_locked(&ctx, 10);
	assert_int_equal(hw.used, 0);
	assert_int_equal(a.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(a.time_running, 10);
	assert_int_equal(a.time_enabled, 10);
	/* INACTIVE events fold lazily: what read() does first */
	perf_event_update_time_locked(&c, 10);
	assert_int_equal(c.time_running, 0);
	assert_int_equal(c.time_enabled, 10);
	assert_int_equal(ctx.nr_active, 0);
}

static void test_sched_pinned_error_and_off(void **state)
{
	struct fake_pmu hw;
	struct perf_ctx ctx;
	struct perf_event p1, p2, p3, f, off;

	fake_setup(&hw, "hw", 2, 0);
	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	perf_ctx_add_group_locked(&ctx, mk(&p1, &hw, NULL, true));
	perf_ctx_add_group_locked(&ctx, mk(&p2, &hw, NULL, true));
	perf_ctx_add_group_locked(&ctx, mk(&p3, &hw, NULL, true));
	perf_ctx_add_group_locked(&ctx, mk(&f, &hw, NULL, false));
	memset(&off, 0, sizeof(off));
	off.attr.disabled = 1;
	off.pmu = &hw.pmu;
	perf_event_init_group(&off, NULL);
	perf_ctx_add_group_locked(&ctx, &off);
	assert_int_equal(off.state, PERF_EVENT_STATE_OFF);

	perf_ctx_sched_in_locked(&ctx, 0);
	assert_int_equal(p1.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(p2.state, PERF_EVENT_STATE_ACTIVE);
	/* a pinned group that cannot go on is in error (read() returns 0 bytes) */
	assert_int_equal(p3.state, PERF_EVENT_STATE_ERROR);
	/* the flexible pass starts afresh but the PMU is full */
	assert_int_equal(f.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(off.state, PERF_EVENT_STATE_OFF);
	perf_ctx_sched_out_locked(&ctx, 5);
	assert_int_equal(off.time_enabled, 0);
	assert_int_equal(p3.time_enabled, 0);
	/* ERROR groups are not retried */
	perf_ctx_sched_in_locked(&ctx, 5);
	assert_int_equal(p3.state, PERF_EVENT_STATE_ERROR);
	perf_ctx_sched_out_locked(&ctx, 6);
}

static void test_sched_exclusive(void **state)
{
	struct fake_pmu hw;
	struct perf_ctx ctx;
	struct perf_event x, a, b;

	fake_setup(&hw, "hw", 4, 0);
	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	mk(&x, &hw, NULL, false);
	x.attr.exclusive = 1;
	perf_ctx_add_group_locked(&ctx, &x);
	perf_ctx_add_group_locked(&ctx, mk(&a, &hw, NULL, false));
	perf_ctx_sched_in_locked(&ctx, 0);
	/* the exclusive group is on alone */
	assert_int_equal(x.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(a.state, PERF_EVENT_STATE_INACTIVE);
	assert_true(ctx.exclusive_on);
	perf_ctx_sched_out_locked(&ctx, 1);
	assert_false(ctx.exclusive_on);

	/* an exclusive group behind a busy PMU stays off */
	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	perf_ctx_add_group_locked(&ctx, mk(&b, &hw, NULL, false));
	mk(&x, &hw, NULL, false);
	x.attr.exclusive = 1;
	perf_ctx_add_group_locked(&ctx, &x);
	perf_ctx_sched_in_locked(&ctx, 0);
	assert_int_equal(b.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(x.state, PERF_EVENT_STATE_INACTIVE);
	perf_ctx_sched_out_locked(&ctx, 1);
}

static void test_rotation_times(void **state)
{
	struct fake_pmu hw;
	struct perf_ctx ctx;
	struct perf_event ev[3];
	uint64_t now = 0;

	fake_setup(&hw, "hw", 2, 0);
	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	for (int i = 0; i < 3; i++)
		perf_ctx_add_group_locked(&ctx, mk(&ev[i], &hw, NULL, false));
	perf_ctx_sched_in_locked(&ctx, now);
	assert_int_equal(ev[2].state, PERF_EVENT_STATE_INACTIVE);
	/* 6 ticks of 100 ns with a rotation each: every event runs 2 of every 3 ticks */
	for (int t = 0; t < 6; t++) {
		now += 100;
		assert_true(perf_ctx_rotate_locked(&ctx, now));
		assert_int_equal(hw.used, 2);
	}
	perf_ctx_sched_out_locked(&ctx, now);
	for (int i = 0; i < 3; i++) {
		perf_event_update_time_locked(&ev[i], now);
		assert_int_equal(ev[i].time_enabled, 600);
		assert_int_equal(ev[i].time_running, 400);
		/* a read of an ACTIVE event goes to the PMU; inactive ones do not */
		assert_int_equal(perf_event_read_count_locked(&ev[i]), 0);
	}
	/* nothing to rotate when everything fits */
	hw.slots = 3;
	perf_ctx_sched_in_locked(&ctx, now);
	assert_false(ctx.rotate_necessary);
	assert_false(perf_ctx_rotate_locked(&ctx, now + 1));
	assert_int_equal(perf_event_read_count_locked(&ev[0]), 1);
	perf_ctx_sched_out_locked(&ctx, now + 2);
	perf_group_detach_locked(&ev[0]);
}

static void test_group_detach(void **state)
{
	struct fake_pmu hw;
	struct perf_event l, s1, s2;

	fake_setup(&hw, "hw", 4, 0);
	mk(&l, &hw, NULL, false);
	mk(&s1, &hw, &l, false);
	mk(&s2, &hw, &l, false);
	assert_int_equal(l.nr_siblings, 2);
	perf_group_detach_locked(&s1);
	assert_int_equal(l.nr_siblings, 1);
	assert_ptr_equal(s1.group_leader, &s1);
	assert_ptr_equal(l.sibling_list.next, &s2.group_entry);
}

/* Frequency mode: from period 1, a steady 1e9 events/s at 4000 Hz converges toward 250000
 * by 1/8 steps and stays there; a rate change moves it again; nothing drops to 0. */
static void test_freq_adjust_period(void **state)
{
	struct perf_hw hw = { .sample_period = 1 };
	uint64_t prev = hw.sample_period;

	(void)state;
	for (int tick = 0; tick < 200; tick++) {
		/* a 4 ms tick of a 1 GHz counter */
		perf_freq_adjust_period(&hw, 4000, 4000000, 4000000);
		assert_true(hw.sample_period >= prev); /* monotonic approach from below */
		prev = hw.sample_period;
	}
	assert_in_range(hw.sample_period, 249000, 251000);
	/* one step moves 1/8 of the way: halving the rate halves the target */
	uint64_t before = hw.sample_period;

	perf_freq_adjust_period(&hw, 4000, 4000000, 2000000);
	assert_in_range(before - hw.sample_period, 15000, 16000);
	/* a degenerate interval keeps the period, and a zero count never reaches 0 */
	before = hw.sample_period;
	perf_freq_adjust_period(&hw, 4000, 0, 1000);
	assert_int_equal(hw.sample_period, before);
	hw.sample_period = 1;
	perf_freq_adjust_period(&hw, 4000, 4000000, 0);
	assert_int_equal(hw.sample_period, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_register_types, reset),
	    cmocka_unit_test_setup(test_init_event_lookup, reset),
	    cmocka_unit_test_setup(test_raw_then_type_fallback, reset),
	    cmocka_unit_test_setup(test_post_init_checks, reset),
	    cmocka_unit_test(test_counter_maths),
	    cmocka_unit_test(test_sched_pinned_first_and_groups),
	    cmocka_unit_test(test_sched_pinned_error_and_off),
	    cmocka_unit_test(test_sched_exclusive),
	    cmocka_unit_test(test_rotation_times),
	    cmocka_unit_test(test_group_detach),
	    cmocka_unit_test(test_freq_adjust_period),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
