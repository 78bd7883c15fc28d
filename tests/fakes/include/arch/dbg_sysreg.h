/*
 * dbg_sysreg.h (host fake) - the breakpoint and watchpoint registers of
 * arch/arm64/include/arch/dbg_sysreg.h as plain arrays, so that perf/bp.c runs in host tests.
 * dbg_fake.dfr0 says how many there are (BRPs in [15:12], WRPs in [23:20], each count - 1).
 */
#pragma once

#include <stdint.h>

struct dbg_fake_regs {
	uint64_t dfr0;
	uint64_t bvr[16], bcr[16], wvr[16], wcr[16];
	unsigned int writes;
};

extern struct dbg_fake_regs dbg_fake;

static inline uint64_t dbg_read_id_aa64dfr0(void)
{
	return dbg_fake.dfr0;
}

static inline void dbg_fake_write(uint64_t *file, unsigned int n, uint64_t v)
{
	file[n & 15] = v;
	dbg_fake.writes++;
}

static inline void dbg_write_bvr(unsigned int n, uint64_t v) { dbg_fake_write(dbg_fake.bvr, n, v); }
static inline void dbg_write_bcr(unsigned int n, uint64_t v) { dbg_fake_write(dbg_fake.bcr, n, v); }
static inline void dbg_write_wvr(unsigned int n, uint64_t v) { dbg_fake_write(dbg_fake.wvr, n, v); }
static inline void dbg_write_wcr(unsigned int n, uint64_t v) { dbg_fake_write(dbg_fake.wcr, n, v); }

static inline void dbg_isb(void)
{
}
