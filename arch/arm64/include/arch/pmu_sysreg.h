/*
 * pmu_sysreg.h - ARMv8 PMUv3 system register accessors (the only way perf/pmuv3.c touches the
 * PMU).  Host tests replace this header with tests/fakes/include/arch/pmu_sysreg.h, a fake
 * register file with the same function names.
 *
 * Event counters are reached through PMSELR_EL0 + PMXEVTYPER_EL0/PMXEVCNTR_EL0: the select
 * register makes those pairs non-atomic, so callers run with interrupts masked (pmuv3.c's
 * [p] rule).  Field layouts are in pmuv3.c; this header is registers only.
 */
#pragma once

#include <stdint.h>

#define PMU_SYSREG_READ(name)                                                                      \
	({                                                                                         \
		uint64_t _v;                                                                       \
		__asm__ volatile("mrs %0, " #name : "=r"(_v));                                     \
		_v;                                                                                \
	})
#define PMU_SYSREG_WRITE(name, v) __asm__ volatile("msr " #name ", %0" ::"r"((uint64_t)(v)))

static inline void pmu_isb(void)
{
	__asm__ volatile("isb" ::: "memory");
}

static inline uint64_t pmu_read_id_aa64dfr0(void)
{
	return PMU_SYSREG_READ(id_aa64dfr0_el1);
}

static inline uint64_t pmu_read_pmcr(void)
{
	return PMU_SYSREG_READ(pmcr_el0);
}

static inline void pmu_write_pmcr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmcr_el0, v);
	pmu_isb();
}

static inline uint64_t pmu_read_pmceid0(void)
{
	return PMU_SYSREG_READ(pmceid0_el0);
}

static inline uint64_t pmu_read_pmceid1(void)
{
	return PMU_SYSREG_READ(pmceid1_el0);
}

static inline uint64_t pmu_read_pmcntenset(void)
{
	return PMU_SYSREG_READ(pmcntenset_el0);
}

static inline void pmu_write_pmcntenset(uint64_t v)
{
	PMU_SYSREG_WRITE(pmcntenset_el0, v);
}

static inline void pmu_write_pmcntenclr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmcntenclr_el0, v);
}

static inline void pmu_write_pmintenset(uint64_t v)
{
	PMU_SYSREG_WRITE(pmintenset_el1, v);
}

static inline void pmu_write_pmintenclr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmintenclr_el1, v);
}

static inline uint64_t pmu_read_pmovsclr(void)
{
	return PMU_SYSREG_READ(pmovsclr_el0);
}

static inline void pmu_write_pmovsclr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmovsclr_el0, v);
}

static inline void pmu_write_pmovsset(uint64_t v)
{
	PMU_SYSREG_WRITE(pmovsset_el0, v);
}

static inline void pmu_write_pmselr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmselr_el0, v);
	pmu_isb();
}

static inline void pmu_write_evtyper(unsigned int n, uint64_t v)
{
	pmu_write_pmselr(n);
	PMU_SYSREG_WRITE(pmxevtyper_el0, v);
}

static inline uint64_t pmu_read_evcntr(unsigned int n)
{
	pmu_write_pmselr(n);
	return PMU_SYSREG_READ(pmxevcntr_el0);
}

static inline void pmu_write_evcntr(unsigned int n, uint64_t v)
{
	pmu_write_pmselr(n);
	PMU_SYSREG_WRITE(pmxevcntr_el0, v);
}

static inline uint64_t pmu_read_pmccntr(void)
{
	return PMU_SYSREG_READ(pmccntr_el0);
}

static inline void pmu_write_pmccntr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmccntr_el0, v);
}

static inline void pmu_write_pmccfiltr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmccfiltr_el0, v);
}

static inline void pmu_write_pmuserenr(uint64_t v)
{
	PMU_SYSREG_WRITE(pmuserenr_el0, v);
	pmu_isb();
}
