/*
 * pmu_sysreg.h (host fake) - a PMUv3 register file with the accessor names of
 * arch/arm64/include/arch/pmu_sysreg.h.  Host builds put tests/fakes/include first on the
 * include path, so perf/pmuv3.c runs against this.  tests/fakes/pmu_fake.c simulates counting
 * (pmu_fake_count), overflow bits, CHAIN, PMCR.N/LC/LP, PMCEID and ID_AA64DFR0.PMUVer.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define PMU_FAKE_MAX 31

struct pmu_fake_regs {
	uint64_t dfr0; /* ID_AA64DFR0_EL1: PMUVer in [11:8] */
	uint64_t pmcr; /* N in [15:11] is read-only; E, LC, LP as written; P, C reset counters */
	uint64_t pmceid0, pmceid1;
	uint32_t cnten, inten, ovs;
	uint32_t selr;
	uint32_t evtyper[PMU_FAKE_MAX];
	uint64_t evcntr[PMU_FAKE_MAX];
	uint64_t ccntr;
	uint32_t ccfiltr;
	uint64_t userenr;
	unsigned int isbs, writes;
};

extern struct pmu_fake_regs pmu_fake;

/* Power-on state: n event counters, PMUVer (1 = v3, 6 = v3p5), PMCEID0/1. */
void pmu_fake_reset(unsigned int n, unsigned int pmuver, uint64_t pmceid0, uint64_t pmceid1);
/* n occurrences of event ev at exception level el (0 user, 1 kernel, 2 hyp). */
void pmu_fake_count(uint32_t ev, uint64_t n, unsigned int el);
/* The PMU interrupt line: PMCR.E and an enabled overflow with its interrupt enabled. */
bool pmu_fake_irq_pending(void);

static inline void pmu_isb(void)
{
	pmu_fake.isbs++;
}

static inline uint64_t pmu_read_id_aa64dfr0(void)
{
	return pmu_fake.dfr0;
}

static inline uint64_t pmu_read_pmcr(void)
{
	return pmu_fake.pmcr;
}

void pmu_fake_write_pmcr(uint64_t v);

static inline void pmu_write_pmcr(uint64_t v)
{
	pmu_fake_write_pmcr(v);
}

static inline uint64_t pmu_read_pmceid0(void)
{
	return pmu_fake.pmceid0;
}

static inline uint64_t pmu_read_pmceid1(void)
{
	return pmu_fake.pmceid1;
}

static inline uint64_t pmu_read_pmcntenset(void)
{
	return pmu_fake.cnten;
}

static inline void pmu_write_pmcntenset(uint64_t v)
{
	pmu_fake.cnten |= (uint32_t)v;
}

static inline void pmu_write_pmcntenclr(uint64_t v)
{
	pmu_fake.cnten &= ~(uint32_t)v;
}

static inline void pmu_write_pmintenset(uint64_t v)
{
	pmu_fake.inten |= (uint32_t)v;
}

static inline void pmu_write_pmintenclr(uint64_t v)
{
	pmu_fake.inten &= ~(uint32_t)v;
}

static inline uint64_t pmu_read_pmovsclr(void)
{
	return pmu_fake.ovs;
}

static inline void pmu_write_pmovsclr(uint64_t v)
{
	pmu_fake.ovs &= ~(uint32_t)v;
}

static inline void pmu_write_pmovsset(uint64_t v)
{
	pmu_fake.ovs |= (uint32_t)v;
}

static inline void pmu_write_pmselr(uint64_t v)
{
	pmu_fake.selr = (uint32_t)v & 0x1f;
}

void pmu_fake_write_evtyper(unsigned int n, uint64_t v);
uint64_t pmu_fake_read_evcntr(unsigned int n);
void pmu_fake_write_evcntr(unsigned int n, uint64_t v);

static inline void pmu_write_evtyper(unsigned int n, uint64_t v)
{
	pmu_fake_write_evtyper(n, v);
}

static inline uint64_t pmu_read_evcntr(unsigned int n)
{
	return pmu_fake_read_evcntr(n);
}

static inline void pmu_write_evcntr(unsigned int n, uint64_t v)
{
	pmu_fake_write_evcntr(n, v);
}

static inline uint64_t pmu_read_pmccntr(void)
{
	return pmu_fake.ccntr;
}

static inline void pmu_write_pmccntr(uint64_t v)
{
	pmu_fake.ccntr = v;
}

static inline void pmu_write_pmccfiltr(uint64_t v)
{
	pmu_fake.ccfiltr = (uint32_t)v;
}

static inline void pmu_write_pmuserenr(uint64_t v)
{
	pmu_fake.userenr = v;
}
