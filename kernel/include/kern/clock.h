/* clock.h - the wall clock (kernel/sys_time.c): CLOCK_REALTIME in ns since the Unix epoch. */
#pragma once

#include <stdint.h>

/* [any] CLOCK_REALTIME now, in nanoseconds since 1970-01-01T00:00:00Z. */
uint64_t clock_realtime_ns(void);

/* [boot] Set CLOCK_REALTIME from a hardware clock's seconds since the epoch (the PL031). */
void clock_realtime_init(uint64_t epoch_sec);
/* [any] CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds (the vDSO's copy follows it). */
int64_t clock_realtime_offset_ns(void);
