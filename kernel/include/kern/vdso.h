/*
 * vdso.h - the vDSO (kernel/vdso.c; the image is arch/arm64/vdso/): mapped into every new
 * process at exec with its [vvar] data page, which the kernel keeps in step with the clocks.
 */
#pragma once

#include <stdint.h>

struct mm;

/* [boot, after time_init] Copy the image into its pages and fill [vvar]. */
void vdso_init(void);
/* [proc, mm->lock held] Map [vvar] and [vdso] where a top-down mmap would (exec, after the
 * program and its interpreter); sets mm->vdso (AT_SYSINFO_EHDR) and mm->sigtramp
 * (__kernel_rt_sigreturn).  0 or -errno. */
int vdso_map(struct mm *mm);
/* [proc] The PERF_RECORD_MMAP2s of exec's vDSO mapping ([vvar] as data, then [vdso]). */
void vdso_exec_mmap_records(const struct mm *mm);
/* [any] CLOCK_REALTIME - CLOCK_MONOTONIC changed (clock_settime, settimeofday). */
void vdso_clock_update(int64_t realtime_offset_ns);
