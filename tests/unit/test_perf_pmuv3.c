/*
 * test_perf_pmuv3.c - perf/pmuv3.c against the fake PMUv3 register file: probe facts
 * (PMUVer, PMCR.N, PMCEID), Linux's errno for each event rejection, EL filter bits, counter
 * allocation (cycle counter preference, exhaustion, chained pairs and their fragmentation),
 * counting across 32-bit wraps through the overflow interrupt, sampling periods handed to
 * perf_event_overflow (recorded here), throttling, CHAIN-ed 64-bit events, PMUv3p5 long
 * counters with the 32-bit bias, group validation, and multiplexing through pmu.c's rotation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <arch/pmu_sysreg.h>
#include <perf/perf.h>
#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

/* QEMU -cpu max: CPU_CYCLES, INST_RETIRED (icount), STALL_FRONTEND/BACKEND, STALL */
#define QEMU_PMCEID0 ((1ull << 0x08) | (1ull << 0x11) | (1ull << 0x00))
#define QEMU_PMCEID1 ((1ull << (0x23 - 32)) | (1ull << (0x24 - 32)) | (1ull << (0x3c - 32)))

static const uint64_t fake_regs[34];

struct ovf {
	int calls;
	uint64_t last_period;
	struct perf_event *last;
	bool throttle;
};
static struct ovf ovf;

/* pmuv3.c hands elapsed periods to the core's overflow path: here, this recorder */
bool perf_event_overflow(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user)
{
	assert_ptr_equal(regs, fake_regs);
	assert_true(user);
	ovf.calls++;
	ovf.last_period = period;
	ovf.last = e;
	return ovf.throttle;
}

static int setup_ver(unsigned int n, unsigned int ver)
{
	perf_pmu_reset_table();
	memset(&ovf, 0, sizeof(ovf));
	pmu_fake_reset(n, ver, QEMU_PMCEID0, QEMU_PMCEID1);
	pmuv3_kernel_in_hyp = false;
	pmuv3_user_access = false;
	return pmuv3_probe(2);
}

static int setup_max(void **state)
{
	return setup_ver(6, 5); /* -cpu max under QEMU 7.2: PMUv3p4, 6 counters */
}

static int setup_a72(void **state)
{
	return setup_ver(6, 1); /* cortex-a72: PMUv3, 32-bit event counters */
}

static int setup_p5(void **state)
{
	return setup_ver(6, 6); /* PMUv3p5: 64-bit event counters */
}

static int teardown(void **state)
{
	pmuv3_remove();
	return 0;
}

/* An event as core.c builds it before perf_pmu_init_event. */
static int open_ev(struct perf_event *e, uint32_t type, uint64_t config, uint64_t period,
		   struct perf_event *leader)
{
	memset(e, 0, sizeof(*e));
	e->attr.type = type;
	e->attr.config = config;
	e->attr.sample_period = period;
	e->cpu = -1;
	e->attach_task = true;
	perf_event_init_group(e, leader);
	return perf_pmu_init_event(e);
}

static void test_probe(void **state)
{
	assert_non_null(pmuv3_pmu());
	assert_string_equal(pmuv3_pmu()->name, "armv8_pmuv3");
	assert_int_equal(pmuv3_pmu()->type, PERF_TYPE_PMUV3);
	assert_int_equal(pmuv3_num_counters(), 7);
	assert_false(pmuv3_has_long_counters());
	assert_true(pmuv3_event_implemented(0x11));
	assert_true(pmuv3_event_implemented(0x08));
	assert_true(pmuv3_event_implemented(0x24));
	assert_true(pmuv3_event_implemented(0x3c));
	assert_false(pmuv3_event_implemented(0x04));
	assert_false(pmuv3_event_implemented(0x4000));
	assert_non_null(strstr(ksvc_fake.log, "7 counters available"));
	/* reset state: all disabled, overflow cleared, PMCR.LC, E on, no LP before v3p5 */
	assert_int_equal(pmu_fake.cnten, 0);
	assert_int_equal(pmu_fake.inten, 0);
	assert_int_equal(pmu_fake.ovs, 0);
	assert_int_equal(pmu_fake.pmcr & 0xc1, 0x41);
	assert_int_equal(pmu_fake.evcntr[0], 0); /* PMCR.P reset the counters */
	/* a second PMU at the same type is refused */
	assert_int_equal(pmuv3_probe(2), -EBUSY);

	pmuv3_remove();
	assert_null(pmuv3_pmu());
	pmu_fake_reset(6, 0, 0, 0);
	assert_int_equal(pmuv3_probe(2), -ENODEV);
	pmu_fake_reset(6, 0xf, 0, 0);
	assert_int_equal(pmuv3_probe(2), -ENODEV);
	pmu_fake_reset(6, 6, 0, 0);
	assert_int_equal(pmuv3_probe(2), 0);
	assert_true(pmuv3_has_long_counters());
	assert_int_equal(pmu_fake.pmcr & 0xc0, 0xc0);
}

struct map_row {
	uint32_t type;
	uint64_t config, config1;
	int expect;
	uint32_t evtype; /* event number programmed when expect == 0 */
};

static void test_event_map_errnos(void **state)
{
	const uint64_t cache = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			       ((uint64_t)PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16);
	static const struct map_row rows[] = {
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0x11},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, 0x08},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 0, 0, 0x23},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 0, 0, 0x24},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0, -ENOENT, 0},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX, 0, -EINVAL, 0},
	    {PERF_TYPE_HARDWARE, 0xffffffffull, 0, -EINVAL, 0},
	    {PERF_TYPE_HW_CACHE, 0, 0, -ENOENT, 0},
	    {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_MAX, 0, -EINVAL, 0},
	    {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_OP_MAX << 8, 0, -EINVAL, 0},
	    {PERF_TYPE_HW_CACHE, (uint64_t)PERF_COUNT_HW_CACHE_RESULT_MAX << 16, 0, -EINVAL, 0},
	    {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_NODE, 0, -ENOENT, 0},
	    {PERF_TYPE_RAW, 0x11, 0, 0, 0x11},
	    {PERF_TYPE_RAW, 0x04, 0, 0, 0x04}, /* not in PMCEID: opens, counts 0 */
	    {PERF_TYPE_RAW, 0x00, 0, 0, 0x00},
	    {PERF_TYPE_RAW, 0x1234, 0, 0, 0x1234},
	    {PERF_TYPE_RAW, 0xabcd0008ull, 0, 0, 0x0008}, /* config masked to 16 bits */
	    {PERF_TYPE_RAW, 0x1e, 0, 0, 0x1e},		  /* CHAIN: opens in 6.1, never scheduled */
	    {PERF_TYPE_PMUV3, 0x08, 0, 0, 0x08},
	    {PERF_TYPE_PMUV3, 0x1e, 0, 0, 0x1e},
	    {PERF_TYPE_SOFTWARE, 0, 0, -ENOENT, 0}, /* no software PMU here */
	    {42, 0, 0, -ENOENT, 0},
	    /* the extended type names this PMU */
	    {PERF_TYPE_HARDWARE, ((uint64_t)PERF_TYPE_PMUV3 << 32) | 1, 0, 0, 0x08},
	    {PERF_TYPE_HARDWARE, ((uint64_t)PERF_TYPE_PMUV3 << 32) | 3, 0, -ENOENT, 0},
	    /* rdpmc with a 64-bit non-cycles event needs PMUv3p5 */
	    {PERF_TYPE_RAW, 0x08, 3, -EOPNOTSUPP, 0},
	    {PERF_TYPE_RAW, 0x11, 3, 0, 0x11},
	    {PERF_TYPE_RAW, 0x08, 2, 0, 0x08},
	    {PERF_TYPE_RAW, 0x08, 1, 0, 0x08},
	};
	struct perf_event e;

	(void)cache;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		int err = open_ev(&e, rows[i].type, rows[i].config, 0, NULL);

		if (rows[i].config1) {
			memset(&e, 0, sizeof(e));
			e.attr.type = rows[i].type;
			e.attr.config = rows[i].config;
			e.attr.config1 = rows[i].config1;
			e.cpu = -1;
			e.attach_task = true;
			perf_event_init_group(&e, NULL);
			err = perf_pmu_init_event(&e);
		}
		if (err != rows[i].expect)
			fail_msg("row %zu (type %u config %#llx): got %d want %d", i, rows[i].type,
				 (unsigned long long)rows[i].config, err, rows[i].expect);
		if (!err)
			assert_int_equal(e.hw.config_base & 0xffff, rows[i].evtype);
	}
}

static void test_other_rejections(void **state)
{
	struct perf_event e;

	/* exclude_idle: armv8pmu_set_event_filter fails -> EOPNOTSUPP */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_HARDWARE;
	e.attr.exclude_idle = 1;
	e.cpu = -1;
	perf_event_init_group(&e, NULL);
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
	/* branch stack sampling */
	e.attr.exclude_idle = 0;
	e.attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
	/* ... also through the every-PMU loop for an unknown type: armpmu answers first */
	e.attr.type = 42;
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
	/* rdpmc on a CPU event */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_RAW;
	e.attr.config = 0x11;
	e.attr.config1 = 2;
	e.cpu = 0;
	perf_event_init_group(&e, NULL);
	assert_int_equal(perf_pmu_init_event(&e), -EINVAL);
	/* VG in sample_regs_user: the CPU PMU lacks extended regs */
	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_RAW;
	e.attr.sample_type = PERF_SAMPLE_REGS_USER;
	e.attr.sample_regs_user = 1ull << 46;
	e.cpu = -1;
	perf_event_init_group(&e, NULL);
	assert_int_equal(perf_pmu_init_event(&e), -EOPNOTSUPP);
}

static uint32_t filter_of(unsigned int user, unsigned int kernel, unsigned int hv,
			  unsigned int host, unsigned int guest)
{
	struct perf_event e;

	memset(&e, 0, sizeof(e));
	e.attr.type = PERF_TYPE_RAW;
	e.attr.config = 0x11;
	e.attr.exclude_user = user;
	e.attr.exclude_kernel = kernel;
	e.attr.exclude_hv = hv;
	e.attr.exclude_host = host;
	e.attr.exclude_guest = guest;
	e.cpu = -1;
	perf_event_init_group(&e, NULL);
	assert_int_equal(perf_pmu_init_event(&e), 0);
	return e.hw.config_base & 0xffff0000u;
}

static void test_el_filters(void **state)
{
	const uint32_t P = 1u << 31, U = 1u << 30, NSH = 1u << 27;

	/* kernel at EL1 */
	assert_int_equal(filter_of(0, 0, 0, 0, 0), NSH);
	assert_int_equal(filter_of(1, 0, 0, 0, 0), U | NSH);
	assert_int_equal(filter_of(0, 1, 0, 0, 0), P | NSH);
	assert_int_equal(filter_of(0, 1, 1, 0, 0), P); /* cycles:u as perf asks it */
	assert_int_equal(filter_of(1, 1, 1, 0, 0), P | U);
	assert_int_equal(filter_of(0, 0, 0, 1, 0), 0);
	assert_int_equal(filter_of(0, 0, 0, 0, 1), NSH); /* exclude_guest: ignored at EL1 */
	/* VHE kernel at EL2 */
	pmuv3_kernel_in_hyp = true;
	assert_int_equal(filter_of(0, 0, 0, 0, 0), NSH);
	assert_int_equal(filter_of(0, 0, 1, 0, 0), NSH); /* exclude_hv is ignored */
	assert_int_equal(filter_of(0, 1, 0, 0, 0), P);
	assert_int_equal(filter_of(0, 0, 0, 0, 1), P | NSH);
	assert_int_equal(filter_of(0, 0, 0, 1, 0), U);
	pmuv3_kernel_in_hyp = false;
}

static void test_counting_cycles_and_filter(void **state)
{
	struct perf_event cyc, cyck, ins;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_int_equal(open_ev(&cyc, PERF_TYPE_HARDWARE, 0, 0, NULL), 0);
	assert_int_equal(open_ev(&cyck, PERF_TYPE_HARDWARE, 0, 0, NULL), 0);
	cyck.hw.config_base |= 1u << 30; /* as exclude_user would */
	assert_int_equal(open_ev(&ins, PERF_TYPE_HARDWARE, 1, 0, NULL), 0);
	assert_int_equal(cyc.hw.sample_period, 0x7fffffff); /* counting: half the 32-bit range */

	assert_int_equal(pmu->add(&cyc, PERF_EF_START), 0);
	assert_int_equal(cyc.hw.idx, PMUV3_IDX_CYCLE);
	assert_int_equal(pmu->add(&cyck, PERF_EF_START), 0);
	assert_int_equal(cyck.hw.idx, 1); /* the cycle counter is taken: event counter 0 */
	assert_int_equal(pmu_fake.evtyper[0], 0x11 | (1u << 30) | (1u << 27));
	assert_int_equal(pmu->add(&ins, PERF_EF_START), 0);
	assert_int_equal(ins.hw.idx, 2);
	assert_int_equal(pmu_fake.cnten, (1u << 31) | 0x3);
	assert_int_equal(pmu_fake.inten, (1u << 31) | 0x3);
	/* the 32-bit cycle event is biased on the 64-bit PMCCNTR */
	assert_int_equal(pmu_fake.ccntr, 0xffffffff80000001ull);

	pmu_fake_count(0x11, 1000, 0);
	pmu_fake_count(0x11, 300, 1);
	pmu_fake_count(0x08, 77, 0);
	pmu->read(&cyc);
	pmu->read(&cyck);
	pmu->read(&ins);
	assert_int_equal(cyc.count, 1300);
	assert_int_equal(cyck.count, 300);
	assert_int_equal(ins.count, 77);

	pmu->del(&cyc, 0);
	assert_int_equal(cyc.hw.idx, -1);
	assert_int_equal(pmu_fake.cnten & (1u << 31), 0);
	pmu_fake_count(0x11, 1000, 0);
	assert_int_equal(cyc.count, 1300);
	/* the freed cycle counter goes to the next cycles event */
	pmu->del(&cyck, 0);
	assert_int_equal(pmu->add(&cyck, PERF_EF_START), 0);
	assert_int_equal(cyck.hw.idx, 0);
	pmu->del(&cyck, 0);
	pmu->del(&ins, 0);
	assert_int_equal(pmu_fake.cnten, 0);
}

static void run_irqs(void)
{
	while (pmu_fake_irq_pending())
		assert_true(pmuv3_handle_irq(fake_regs, true));
}

static void count_chunks(uint32_t ev, uint64_t total, uint64_t chunk)
{
	while (total) {
		uint64_t n = total < chunk ? total : chunk;

		pmu_fake_count(ev, n, 0);
		run_irqs();
		total -= n;
	}
}

static void test_32bit_extension(void **state)
{
	struct perf_event ins, cyc;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_int_equal(open_ev(&ins, PERF_TYPE_RAW, 0x08, 0, NULL), 0);
	assert_int_equal(open_ev(&cyc, PERF_TYPE_RAW, 0x11, 0, NULL), 0);
	assert_int_equal(pmu->add(&ins, PERF_EF_START), 0);
	assert_int_equal(pmu->add(&cyc, PERF_EF_START), 0);
	assert_int_equal(pmu_fake.evcntr[0], 0x80000001u);
	/* 10 billion events: several 32-bit wraps, each folded in by the interrupt */
	count_chunks(0x08, 10000000000ull, 700000000ull);
	count_chunks(0x11, 10000000000ull, 900000000ull);
	pmu->read(&ins);
	pmu->read(&cyc);
	assert_int_equal(ins.count, 10000000000ull);
	assert_int_equal(cyc.count, 10000000000ull);
	assert_int_equal(ovf.calls, 0);	  /* counting events never sample */
	assert_false(pmuv3_handle_irq(fake_regs, true)); /* nothing pending: not ours */
	pmu->del(&ins, 0);
	pmu->del(&cyc, 0);
}

static void test_sampling(void **state)
{
	struct perf_event s;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_int_equal(open_ev(&s, PERF_TYPE_HARDWARE, 0, 100000, NULL), 0);
	assert_int_equal(pmu->add(&s, PERF_EF_START), 0);
	assert_int_equal(s.hw.idx, 0);
	assert_int_equal(pmu_fake.ccntr, 0xffffffffull << 32 | (0x100000000ull - 100000));
	pmu_fake_count(0x11, 99999, 0);
	assert_false(pmu_fake_irq_pending());
	pmu_fake_count(0x11, 1, 0);
	assert_true(pmu_fake_irq_pending());
	run_irqs();
	assert_int_equal(ovf.calls, 1);
	assert_int_equal(ovf.last_period, 100000);
	assert_ptr_equal(ovf.last, &s);
	/* exact icount behaviour: 306 samples for 30.6M cycles at -c 100000 */
	count_chunks(0x11, 30500000, 99991);
	assert_int_equal(ovf.calls, 306);
	pmu->read(&s);
	assert_int_equal(s.count, 30600000);
	/* overshoot: the next period is shortened by the skid */
	pmu_fake_count(0x11, 100000 + 50, 0);
	run_irqs();
	assert_int_equal(ovf.calls, 307);
	assert_int_equal(s.hw.period_left, 100000 - 50);
	/* throttling stops the counter */
	ovf.throttle = true;
	pmu_fake_count(0x11, 100000, 0);
	run_irqs();
	assert_int_equal(ovf.calls, 308);
	assert_int_equal(pmu_fake.cnten & (1u << 31), 0);
	pmu->start(&s, PERF_EF_RELOAD);
	assert_int_not_equal(pmu_fake.cnten & (1u << 31), 0);
	pmu->del(&s, 0);
	/* a sampling event on an event counter: -period in 32 bits */
	assert_int_equal(open_ev(&s, PERF_TYPE_RAW, 0x08, 5000, NULL), 0);
	assert_int_equal(pmu->add(&s, PERF_EF_START), 0);
	assert_int_equal(pmu_fake.evcntr[0], 0x100000000ull - 5000);
	ovf.throttle = false;
	count_chunks(0x08, 50000, 1234);
	assert_int_equal(ovf.calls, 308 + 10);
	pmu->del(&s, 0);
}

static void test_allocation_exhaustion(void **state)
{
	struct perf_event ev[8], cyc[2];
	struct perf_pmu *pmu = pmuv3_pmu();

	for (int i = 0; i < 7; i++) {
		assert_int_equal(open_ev(&ev[i], PERF_TYPE_RAW, 0x08, 0, NULL), 0);
		int err = pmu->add(&ev[i], PERF_EF_START);

		assert_int_equal(err, i < 6 ? 0 : -EAGAIN);
		if (!err)
			assert_int_equal(ev[i].hw.idx, i + 1);
	}
	/* cycles still fit in PMCCNTR, the second one nowhere */
	assert_int_equal(open_ev(&cyc[0], PERF_TYPE_RAW, 0x11, 0, NULL), 0);
	assert_int_equal(open_ev(&cyc[1], PERF_TYPE_RAW, 0x11, 0, NULL), 0);
	assert_int_equal(pmu->add(&cyc[0], PERF_EF_START), 0);
	assert_int_equal(pmu->add(&cyc[1], PERF_EF_START), -EAGAIN);
	pmu->del(&ev[2], 0);
	assert_int_equal(pmu->add(&cyc[1], PERF_EF_START), 0);
	assert_int_equal(cyc[1].hw.idx, 3);
	for (int i = 0; i < 6; i++)
		if (ev[i].hw.idx >= 0)
			pmu->del(&ev[i], 0);
	pmu->del(&cyc[0], 0);
	pmu->del(&cyc[1], 0);
}

static void test_chained(void **state)
{
	struct perf_event one, lng, lng2, lng3;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_false(pmuv3_has_long_counters());
	/* fragment: counter 0 busy, so the first pair is counters 2,3 (idx 3,4) */
	assert_int_equal(open_ev(&one, PERF_TYPE_RAW, 0x08, 0, NULL), 0);
	assert_int_equal(pmu->add(&one, PERF_EF_START), 0);
	assert_int_equal(one.hw.idx, 1);
	memset(&lng, 0, sizeof(lng));
	lng.attr.type = PERF_TYPE_RAW;
	lng.attr.config = 0x08;
	lng.attr.config1 = 1; /* long */
	lng.cpu = -1;
	perf_event_init_group(&lng, NULL);
	assert_int_equal(perf_pmu_init_event(&lng), 0);
	assert_int_equal(lng.hw.sample_period, 0x7fffffffffffffffull);
	assert_int_equal(pmu->add(&lng, PERF_EF_START), 0);
	assert_int_equal(lng.hw.idx, 4);
	assert_int_equal(pmu_fake.evtyper[2] & 0xffff, 0x08);
	assert_int_equal(pmu_fake.evtyper[3], 0x1e | (1u << 27));
	assert_int_equal(pmu_fake.cnten & 0xc, 0xc);
	assert_int_equal(pmu_fake.inten & 0xc, 0x8); /* the interrupt from the high half */
	/* -(2^63-1): high 0x80000000, low 1 */
	assert_int_equal(pmu_fake.evcntr[3], 0x80000000u);
	assert_int_equal(pmu_fake.evcntr[2], 1);
	/* 20 billion events: the low half wraps, CHAIN carries, no interrupt needed */
	count_chunks(0x08, 20000000000ull, 1000000000ull);
	pmu->read(&lng);
	pmu->read(&one);
	assert_int_equal(lng.count, 20000000000ull);
	assert_int_equal(one.count, 20000000000ull);
	/* pairs: (4,5) taken via idx 6, then none left (1 busy, 2-3 free but odd idx 2 needs 1) */
	lng2 = lng;
	lng2.count = 0;
	lng2.hw.idx = -1;
	assert_int_equal(pmu->add(&lng2, PERF_EF_START), 0);
	assert_int_equal(lng2.hw.idx, 6);
	lng3 = lng2;
	lng3.hw.idx = -1;
	assert_int_equal(pmu->add(&lng3, PERF_EF_START), -EAGAIN);
	pmu->del(&lng, 0);
	assert_int_equal(pmu->add(&lng3, PERF_EF_START), 0);
	assert_int_equal(lng3.hw.idx, 4);
	pmu->del(&lng2, 0);
	pmu->del(&lng3, 0);
	pmu->del(&one, 0);
	assert_int_equal(pmu_fake.cnten, 0);
}

static void test_long_counters_v3p5(void **state)
{
	struct perf_event lng, shrt;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_true(pmuv3_has_long_counters());
	memset(&lng, 0, sizeof(lng));
	lng.attr.type = PERF_TYPE_RAW;
	lng.attr.config = 0x08;
	lng.attr.config1 = 1;
	lng.cpu = -1;
	perf_event_init_group(&lng, NULL);
	assert_int_equal(perf_pmu_init_event(&lng), 0);
	assert_int_equal(pmu->add(&lng, PERF_EF_START), 0);
	assert_int_equal(lng.hw.idx, 1); /* one 64-bit counter, no chain */
	assert_int_equal(pmu_fake.evcntr[0], 0x8000000000000001ull);
	assert_int_equal(open_ev(&shrt, PERF_TYPE_RAW, 0x08, 1000, NULL), 0);
	assert_int_equal(pmu->add(&shrt, PERF_EF_START), 0);
	/* a 32-bit event on a 64-bit counter: biased so it overflows at 2^32 */
	assert_int_equal(pmu_fake.evcntr[1], 0xffffffff00000000ull | (0x100000000ull - 1000));
	count_chunks(0x08, 10000000000ull, 3000000000ull);
	pmu->read(&lng);
	pmu->read(&shrt);
	assert_int_equal(lng.count, 10000000000ull);
	assert_int_equal(shrt.count, 10000000000ull);
	assert_int_equal(ovf.calls, 4); /* chunks of 3e9 overshoot: one sample per IRQ */
	/* rdpmc + long on a non-cycles event is fine with PMUv3p5; index published by sysctl */
	struct perf_event u;

	memset(&u, 0, sizeof(u));
	u.attr.type = PERF_TYPE_RAW;
	u.attr.config = 0x08;
	u.attr.config1 = 3;
	u.cpu = -1;
	u.attach_task = true;
	perf_event_init_group(&u, NULL);
	assert_int_equal(perf_pmu_init_event(&u), 0);
	assert_int_equal(pmu->add(&u, PERF_EF_START), 0);
	assert_int_equal(pmu->event_idx(&u), 0);
	pmuv3_user_access = true;
	assert_int_equal(pmu->event_idx(&u), u.hw.idx);
	assert_int_equal(pmu->event_idx(&lng), 0);
	pmu->del(&u, 0);
	pmu->del(&lng, 0);
	pmu->del(&shrt, 0);
}

static void test_group_validation(void **state)
{
	struct perf_event ev[8];

	/* 7 instruction counters do not fit 6 event counters: the 7th member is refused */
	for (int i = 0; i < 7; i++) {
		int err = open_ev(&ev[i], PERF_TYPE_RAW, 0x08, 0, i ? &ev[0] : NULL);

		assert_int_equal(err, i < 6 ? 0 : -EINVAL);
		if (!err && i)
			perf_group_attach_locked(&ev[i]);
	}
	/* a disabled member without enable_on_exec does not count against the group */
	memset(&ev[6], 0, sizeof(ev[6]));
	ev[6].attr.type = PERF_TYPE_RAW;
	ev[6].attr.config = 0x08;
	ev[6].attr.disabled = 1;
	ev[6].cpu = -1;
	perf_event_init_group(&ev[6], &ev[0]);
	assert_int_equal(perf_pmu_init_event(&ev[6]), 0);
	ev[6].attr.enable_on_exec = 1;
	assert_int_equal(perf_pmu_init_event(&ev[6]), -EINVAL);
	/* cycles still go into PMCCNTR */
	assert_int_equal(open_ev(&ev[7], PERF_TYPE_RAW, 0x11, 0, &ev[0]), 0);
}

static void test_multiplexing(void **state)
{
	struct perf_event ev[8];
	struct perf_ctx ctx;
	uint64_t now = 0;

	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	for (int i = 0; i < 8; i++) {
		assert_int_equal(open_ev(&ev[i], PERF_TYPE_RAW, 0x08, 0, NULL), 0);
		perf_ctx_add_group_locked(&ctx, &ev[i]);
	}
	perf_ctx_sched_in_locked(&ctx, now);
	assert_true(ctx.rotate_necessary);
	/* 8 ticks: 1000 instructions each, a rotation after each */
	for (int t = 0; t < 8; t++) {
		pmu_fake_count(0x08, 1000, 0);
		run_irqs();
		now += 1000;
		assert_true(perf_ctx_rotate_locked(&ctx, now));
	}
	perf_ctx_sched_out_locked(&ctx, now);
	for (int i = 0; i < 8; i++) {
		perf_event_update_time_locked(&ev[i], now);
		assert_int_equal(ev[i].time_enabled, 8000);
		assert_int_equal(ev[i].time_running, 6000);
		/* scaled as perf stat does: count * enabled / running == 8000 */
		assert_int_equal(ev[i].count, 6000);
	}
	assert_int_equal(pmu_fake.cnten, 0);
}

static void test_chain_never_scheduled(void **state)
{
	struct perf_event chain, ins, pinned_chain;
	struct perf_ctx ctx;

	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	assert_int_equal(open_ev(&chain, PERF_TYPE_RAW, 0x1e, 0, NULL), 0);
	assert_int_equal(open_ev(&pinned_chain, PERF_TYPE_RAW, 0x1e, 0, NULL), 0);
	pinned_chain.attr.pinned = 1;
	assert_int_equal(open_ev(&ins, PERF_TYPE_RAW, 0x08, 0, NULL), 0);
	perf_ctx_add_group_locked(&ctx, &pinned_chain);
	perf_ctx_add_group_locked(&ctx, &chain);
	perf_ctx_add_group_locked(&ctx, &ins);
	perf_ctx_sched_in_locked(&ctx, 0);
	/* filtered out: inactive, not an error, not a reason to rotate, nothing blocked */
	assert_int_equal(chain.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(pinned_chain.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(ins.state, PERF_EVENT_STATE_ACTIVE);
	assert_false(ctx.rotate_necessary);
	perf_ctx_sched_out_locked(&ctx, 10);
	perf_event_update_time_locked(&chain, 10);
	assert_int_equal(chain.time_enabled, 10);
	assert_int_equal(chain.time_running, 0);

	/* an event bound to another CPU is skipped the same way */
	ins.cpu = 1;
	perf_ctx_sched_in_locked(&ctx, 10);
	assert_int_equal(ins.state, PERF_EVENT_STATE_INACTIVE);
	ins.cpu = 0;
	perf_ctx_sched_in_locked(&ctx, 10);
	assert_int_equal(ins.state, PERF_EVENT_STATE_ACTIVE);
	perf_ctx_sched_out_locked(&ctx, 11);
}

static void test_disable_clears_pending_overflow(void **state)
{
	struct perf_event s;
	struct perf_pmu *pmu = pmuv3_pmu();

	assert_int_equal(open_ev(&s, PERF_TYPE_RAW, 0x08, 10, NULL), 0);
	assert_int_equal(pmu->add(&s, PERF_EF_START), 0);
	pmu_fake_count(0x08, 10, 0);
	assert_true(pmu_fake_irq_pending());
	pmu->del(&s, 0);
	/* the overflow happened, but the event is gone: no stale interrupt */
	assert_int_equal(pmu_fake.ovs, 0);
	assert_false(pmuv3_handle_irq(fake_regs, true));
	assert_int_equal(ovf.calls, 0);
	assert_int_equal(s.count, 10);
}

/* An overflow from a counter no event owns (released, moved, never given out) is cleared,
 * its counter and interrupt are stopped, and nothing is called. */
static void test_unowned_overflow_ignored(void **state)
{
	/* counter 3 programmed and interrupting, as a freed event would have left it */
	pmu_fake.evtyper[3] = 0x08;
	pmu_fake.evcntr[3] = 0xfffffff0u;
	pmu_fake.cnten |= 1u << 3;
	pmu_fake.inten |= 1u << 3;
	pmu_fake.pmcr |= 1; /* PMCR.E */
	pmu_fake_count(0x08, 0x20, 0);
	assert_true(pmu_fake_irq_pending());
	assert_true(pmuv3_handle_irq(fake_regs, true));
	assert_int_equal(ovf.calls, 0);
	assert_int_equal(pmu_fake.ovs, 0);
	assert_int_equal(pmu_fake.inten & (1u << 3), 0);
	assert_int_equal(pmu_fake.cnten & (1u << 3), 0);
	assert_false(pmu_fake_irq_pending());
}

/* Disabling a group's leader (core.c's DISABLE) takes the whole group off the PMU: the
 * siblings stop counting and go INACTIVE with the leader, as Linux's __perf_event_disable. */
static void test_leader_off_takes_group_off(void **state)
{
	struct perf_event lead, sib;
	struct perf_ctx ctx;

	perf_ctx_init(&ctx);
	spin_lock(&ctx.lock); /* the *_locked calls below hold it */
	assert_int_equal(open_ev(&lead, PERF_TYPE_RAW, 0x08, 0, NULL), 0);
	assert_int_equal(open_ev(&sib, PERF_TYPE_RAW, 0x11, 0, &lead), 0);
	perf_ctx_add_group_locked(&ctx, &lead);
	perf_group_attach_locked(&sib);
	perf_ctx_sched_in_locked(&ctx, 0);
	assert_int_equal(sib.state, PERF_EVENT_STATE_ACTIVE);
	assert_int_equal(ctx.nr_active, 1);
	perf_group_sched_out_locked(&ctx, &lead, 10);
	assert_int_equal(lead.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(sib.state, PERF_EVENT_STATE_INACTIVE);
	assert_int_equal(sib.hw.idx, -1);
	assert_int_equal(ctx.nr_active, 0);
	assert_int_equal(pmu_fake.cnten, 0);
	pmu_fake_count(0x11, 100, 0);
	assert_int_equal(sib.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_probe, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_event_map_errnos, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_other_rejections, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_el_filters, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_counting_cycles_and_filter, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_32bit_extension, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_sampling, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_allocation_exhaustion, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_chained, setup_a72, teardown),
	    cmocka_unit_test_setup_teardown(test_long_counters_v3p5, setup_p5, teardown),
	    cmocka_unit_test_setup_teardown(test_group_validation, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_multiplexing, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_chain_never_scheduled, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_unowned_overflow_ignored, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_leader_off_takes_group_off, setup_max, teardown),
	    cmocka_unit_test_setup_teardown(test_disable_clears_pending_overflow, setup_max,
					    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
