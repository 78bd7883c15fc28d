/*
 * dbg_sysreg.h - the self-hosted debug registers perf/bp.c programs: breakpoint and watchpoint
 * value/control pairs DBGBVR<n>_EL1/DBGBCR<n>_EL1 and DBGWVR<n>_EL1/DBGWCR<n>_EL1 (n < 16),
 * and ID_AA64DFR0_EL1 for how many there are.  Host tests replace this header with
 * tests/fakes/include/arch/dbg_sysreg.h, a register file with the same function names.
 * The register number is part of the instruction, so each accessor switches over n.
 */
#pragma once

#include <stdint.h>

static inline uint64_t dbg_read_id_aa64dfr0(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, id_aa64dfr0_el1" : "=r"(v));
	return v;
}

#define DBG_CASE(reg, n, v)                                                                        \
	case n:                                                                                    \
		__asm__ volatile("msr " #reg #n "_el1, %0" ::"r"(v));                              \
		break
#define DBG_WRITE16(reg, n, v)                                                                     \
	switch (n) {                                                                               \
		DBG_CASE(reg, 0, v); DBG_CASE(reg, 1, v); DBG_CASE(reg, 2, v); DBG_CASE(reg, 3, v);   \
		DBG_CASE(reg, 4, v); DBG_CASE(reg, 5, v); DBG_CASE(reg, 6, v); DBG_CASE(reg, 7, v);   \
		DBG_CASE(reg, 8, v); DBG_CASE(reg, 9, v); DBG_CASE(reg, 10, v); DBG_CASE(reg, 11, v); \
		DBG_CASE(reg, 12, v); DBG_CASE(reg, 13, v); DBG_CASE(reg, 14, v);                    \
		DBG_CASE(reg, 15, v);                                                                \
	}

static inline void dbg_write_bvr(unsigned int n, uint64_t v)
{
	DBG_WRITE16(dbgbvr, n, v)
}

static inline void dbg_write_bcr(unsigned int n, uint64_t v)
{
	DBG_WRITE16(dbgbcr, n, v)
}

static inline void dbg_write_wvr(unsigned int n, uint64_t v)
{
	DBG_WRITE16(dbgwvr, n, v)
}

static inline void dbg_write_wcr(unsigned int n, uint64_t v)
{
	DBG_WRITE16(dbgwcr, n, v)
}

static inline void dbg_isb(void)
{
	__asm__ volatile("isb" ::: "memory");
}
