/*
 * vgettime.c - the vDSO's clocks: __kernel_clock_gettime, __kernel_gettimeofday and
 * __kernel_clock_getres, answered in user space from CNTVCT_EL0 and the [vvar] page.
 *
 * What it does: CLOCK_REALTIME, MONOTONIC, MONOTONIC_RAW, BOOTTIME, TAI and the two COARSE
 * clocks, the set arm64 Linux 6.1's vDSO answers itself.  The values are the syscall's to
 * the nanosecond (kernel/sys_time.c: every one of these reads the generic timer, the
 * realtime ones plus the settable offset; the COARSE ones are not tick-grained here, so
 * neither are they in the syscall).  What it does not do: any other clock (CPU-time,
 * *_ALARM, invalid ids) goes to the real syscall, as does everything while the kernel sets
 * vvar.use_syscall.  A bad pointer faults in user space (SIGSEGV), as with Linux's vDSO,
 * instead of EFAULT.
 *
 * ABI: the functions return 0 or a negative errno (the syscall's raw return); glibc calls
 * them in place of the svc.  No data of its own, no relocations: the image is shared,
 * read-only, by every process (arch/arm64/vdso/vdso.lds, checked by check-vdso.sh).
 */
#include <stdbool.h>
#include <stdint.h>
#include <asm/unistd.h>
#include <linux/time.h>
#include <linux/time_types.h>
#include <arch/vdso.h>

#define NSEC_PER_SEC 1000000000ull

/* [vvar]'s data page, VDSO_VVAR_PAGES pages below the image (vdso.lds). */
extern const struct vdso_data _vdso_data __attribute__((visibility("hidden")));

int __kernel_clock_gettime(int clk, struct __kernel_timespec *ts);
int __kernel_gettimeofday(struct __kernel_old_timeval *tv, struct timezone *tz);
int __kernel_clock_getres(int clk, struct __kernel_timespec *res);

static long vdso_svc2(long nr, long a0, long a1)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x8) : "memory");
	return x0;
}

/* The clocks answered here, and whether they add the realtime offset. */
static bool clock_known(int clk, bool *realtime)
{
	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
		*realtime = true;
		return true;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		*realtime = false;
		return true;
	default:
		return false;
	}
}

/*
 * The clock in ns: false when the kernel wants the syscall used.  The seqcount read: seq
 * (acquire: the data loads stay after it), the data and the counter, then an acquire fence
 * (the loads stay before the re-read) and seq again; an odd or changed seq means the kernel
 * wrote meanwhile (kernel/vdso.c vdso_clock_update is the writer).  The isb orders the
 * counter read after the loads before it, as kernel/time.c's time_counter does.
 */
static inline __attribute__((always_inline)) bool vdso_read_ns(bool realtime, uint64_t *ns)
{
	const struct vdso_data *vd = &_vdso_data;
	uint32_t seq;
	uint64_t base, mult, cnt;
	int64_t off;

	/* one base register for every field: GCC otherwise rebuilds the address (adrp+add) for
	 * each atomic load, 8 instructions more per call */
	__asm__("" : "+r"(vd));
	for (;;) {
		seq = __atomic_load_n(&vd->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;
		if (__atomic_load_n(&vd->use_syscall, __ATOMIC_RELAXED))
			return false;
		base = __atomic_load_n(&vd->boot_count, __ATOMIC_RELAXED);
		mult = __atomic_load_n(&vd->ns_mult, __ATOMIC_RELAXED);
		off = __atomic_load_n(&vd->realtime_offset_ns, __ATOMIC_RELAXED);
		__asm__ volatile("isb\n mrs %0, cntvct_el0" : "=r"(cnt) : : "memory");
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&vd->seq, __ATOMIC_RELAXED) == seq)
			break;
	}
	*ns = vdso_ticks_to_ns(cnt - base, mult);
	if (realtime)
		*ns = (uint64_t)((int64_t)*ns + off);
	return true;
}

int __kernel_clock_gettime(int clk, struct __kernel_timespec *ts)
{
	bool realtime;
	uint64_t ns;

	if (!clock_known(clk, &realtime) || !vdso_read_ns(realtime, &ns))
		return (int)vdso_svc2(__NR_clock_gettime, clk, (long)ts);
	ts->tv_sec = (long long)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long long)(ns % NSEC_PER_SEC);
	return 0;
}

int __kernel_gettimeofday(struct __kernel_old_timeval *tv, struct timezone *tz)
{
	uint64_t ns;

	if (tv) {
		if (!vdso_read_ns(true, &ns))
			return (int)vdso_svc2(__NR_gettimeofday, (long)tv, (long)tz);
		tv->tv_sec = (long)(ns / NSEC_PER_SEC);
		tv->tv_usec = (long)(ns % NSEC_PER_SEC / 1000);
	}
	if (tz) {
		tz->tz_minuteswest = 0; /* the syscall's: no timezone is ever set */
		tz->tz_dsttime = 0;
	}
	return 0;
}

int __kernel_clock_getres(int clk, struct __kernel_timespec *res)
{
	bool realtime;
	uint64_t ns;

	if (!clock_known(clk, &realtime) ||
	    __atomic_load_n(&_vdso_data.use_syscall, __ATOMIC_RELAXED))
		return (int)vdso_svc2(__NR_clock_getres, clk, (long)res);
	ns = (clk == CLOCK_REALTIME_COARSE || clk == CLOCK_MONOTONIC_COARSE)
		     ? __atomic_load_n(&_vdso_data.coarse_res_ns, __ATOMIC_RELAXED)
		     : 1;
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = (long long)ns;
	}
	return 0;
}
