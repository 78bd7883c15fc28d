/*
 * pmu_fake.c - the simulated PMUv3 behind tests/fakes/include/arch/pmu_sysreg.h.
 *
 * Models what perf/pmuv3.c relies on: PMCR.N event counters of 32 bits, or 64 bits with
 * PMCR.LP on PMUv3p5; PMCCNTR overflowing at bit 31 or (PMCR.LC) bit 63; PMEVTYPER filters
 * (P excludes EL1, U excludes EL0, NSH includes EL2); CHAIN (0x1e) on an odd counter counting
 * the overflows of the even counter below it; PMOVS bits set on overflow; writes to
 * unimplemented counters ignored (reads 0), as on hardware.
 */
#include <string.h>

#include <arch/pmu_sysreg.h>

struct pmu_fake_regs pmu_fake;

#define PMCR_E (1u << 0)
#define PMCR_P (1u << 1)
#define PMCR_C (1u << 2)
#define PMCR_LC (1u << 6)
#define PMCR_LP (1u << 7)
#define PMCR_N_SHIFT 11
#define EVT_P (1u << 31)
#define EVT_U (1u << 30)
#define EVT_NSH (1u << 27)
#define EV_CHAIN 0x1e
#define EV_CPU_CYCLES 0x11
#define CYCLE_BIT 31

static unsigned int nr_counters(void)
{
	return (pmu_fake.pmcr >> PMCR_N_SHIFT) & 0x1f;
}

void pmu_fake_reset(unsigned int n, unsigned int pmuver, uint64_t pmceid0, uint64_t pmceid1)
{
	memset(&pmu_fake, 0, sizeof(pmu_fake));
	pmu_fake.dfr0 = (uint64_t)pmuver << 8;
	pmu_fake.pmcr = (uint64_t)n << PMCR_N_SHIFT;
	pmu_fake.pmceid0 = pmceid0;
	pmu_fake.pmceid1 = pmceid1;
	/* counters and enables are UNKNOWN at reset: make them visibly dirty */
	pmu_fake.cnten = 0xffffffffu;
	pmu_fake.inten = 0xffffffffu;
	pmu_fake.ovs = 0x5;
	for (unsigned int i = 0; i < PMU_FAKE_MAX; i++)
		pmu_fake.evcntr[i] = 0xdead0000u + i;
}

void pmu_fake_write_pmcr(uint64_t v)
{
	uint64_t ro = pmu_fake.pmcr & (0x1full << PMCR_N_SHIFT);
	uint64_t lp = ((pmu_fake.dfr0 >> 8) & 0xf) >= 6 ? PMCR_LP : 0;

	pmu_fake.writes++;
	if (v & PMCR_P)
		for (unsigned int i = 0; i < PMU_FAKE_MAX; i++)
			pmu_fake.evcntr[i] = 0;
	if (v & PMCR_C)
		pmu_fake.ccntr = 0;
	/* P and C are write-only actions; LP exists only on PMUv3p5 */
	pmu_fake.pmcr = ro | (v & (PMCR_E | PMCR_LC | lp | 0x38));
}

static uint64_t ev_mask(void)
{
	return (pmu_fake.pmcr & PMCR_LP) ? ~0ull : 0xffffffffull;
}

void pmu_fake_write_evtyper(unsigned int n, uint64_t v)
{
	pmu_fake.selr = n;
	if (n < nr_counters())
		pmu_fake.evtyper[n] = (uint32_t)v;
}

uint64_t pmu_fake_read_evcntr(unsigned int n)
{
	pmu_fake.selr = n;
	return n < nr_counters() ? pmu_fake.evcntr[n] & ev_mask() : 0;
}

void pmu_fake_write_evcntr(unsigned int n, uint64_t v)
{
	pmu_fake.selr = n;
	if (n < nr_counters())
		pmu_fake.evcntr[n] = v & ev_mask();
}

static bool counts_at(uint32_t filter, unsigned int el)
{
	switch (el) {
	case 0:
		return !(filter & EVT_U);
	case 1:
		return !(filter & EVT_P);
	default:
		return filter & EVT_NSH;
	}
}

/* Add n to counter i; returns how many times it overflowed. */
static uint64_t bump(unsigned int i, uint64_t n)
{
	uint64_t mask = ev_mask();
	uint64_t old = pmu_fake.evcntr[i] & mask;
	uint64_t wraps;

	if (mask == ~0ull) {
		pmu_fake.evcntr[i] = old + n;
		wraps = pmu_fake.evcntr[i] < old;
	} else {
		wraps = (old + n) >> 32;
		pmu_fake.evcntr[i] = (old + n) & mask;
	}
	if (wraps)
		pmu_fake.ovs |= 1u << i;
	return wraps;
}

void pmu_fake_count(uint32_t ev, uint64_t n, unsigned int el)
{
	if (!(pmu_fake.pmcr & PMCR_E))
		return;
	for (unsigned int i = 0; i < nr_counters(); i++) {
		uint32_t t = pmu_fake.evtyper[i];

		if (!(pmu_fake.cnten & (1u << i)) || (t & 0xffff) != ev || !counts_at(t, el))
			continue;
		uint64_t wraps = bump(i, n);

		/* CHAIN on the odd neighbour counts this counter's overflows */
		if (wraps && !(i & 1) && i + 1 < nr_counters() &&
		    (pmu_fake.cnten & (1u << (i + 1))) &&
		    (pmu_fake.evtyper[i + 1] & 0xffff) == EV_CHAIN)
			bump(i + 1, wraps);
	}
	if (ev == EV_CPU_CYCLES && (pmu_fake.cnten & (1u << CYCLE_BIT)) &&
	    counts_at(pmu_fake.ccfiltr, el)) {
		uint64_t old = pmu_fake.ccntr;

		pmu_fake.ccntr += n;
		if (pmu_fake.pmcr & PMCR_LC) {
			if (pmu_fake.ccntr < old)
				pmu_fake.ovs |= 1u << CYCLE_BIT;
		} else if (((old & 0xffffffffull) + n) >> 32) {
			pmu_fake.ovs |= 1u << CYCLE_BIT;
		}
	}
}

bool pmu_fake_irq_pending(void)
{
	return (pmu_fake.pmcr & PMCR_E) && (pmu_fake.ovs & pmu_fake.inten & pmu_fake.cnten);
}
