/*
 * vdso.h - the [vvar] page the kernel shares read-only with every process, and the layout of
 * the vDSO mapping (arch/arm64/vdso/: the image; kernel/vdso.c: mapping and updates).
 *
 * The vDSO's clocks are the syscall's (kernel/sys_time.c, kernel/time.c) computed in user
 * space: monotonic ns = ((CNTVCT_EL0 - boot_count) * ns_mult) >> 32, realtime = monotonic +
 * realtime_offset_ns.  The kernel changes the page under a seqcount (seq odd while it
 * writes), so a reader that sees the same even seq before and after its reads has a
 * consistent set.  Included by the kernel and by the vDSO (freestanding, no libc).
 */
#pragma once

#include <stdint.h>

/* [vvar] is VDSO_VVAR_PAGES pages directly below the vDSO text (as Linux 6.1 with
 * CONFIG_TIME_NS: the data page, then the time-namespace page, which faults here). */
#define VDSO_VVAR_PAGES 2
#define VDSO_PAGE_SIZE 4096

struct vdso_data {
	uint32_t seq;		    /* odd while the kernel writes */
	uint32_t use_syscall;	    /* nonzero: every call goes to the kernel */
	uint64_t boot_count;	    /* CNTVCT_EL0 at monotonic time 0 */
	uint64_t ns_mult;	    /* ns = (ticks * ns_mult) >> 32 */
	int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t coarse_res_ns;	    /* clock_getres of the COARSE clocks: a tick */
};

/* The monotonic clock from a counter value: exactly kernel/time.c's time_ticks_to_ns. */
static inline uint64_t vdso_ticks_to_ns(uint64_t ticks, uint64_t ns_mult)
{
	return (uint64_t)(((unsigned __int128)ticks * ns_mult) >> 32);
}
