/* t_perf_rdpmc: self-monitoring without syscalls on arm64 (as root): with the
 * kernel.perf_user_access sysctl set and the rdpmc format bit (config1 bit 1), a task's cycles
 * event publishes cap_user_rdpmc, its counter index and pmc_width in the mmap'd user page, and
 * EL0 reads the counter (PMCCNTR_EL0 or PMEVCNTRn_EL0) to get counts that agree with read();
 * without the bit cap_user_rdpmc is 0; with the sysctl at 0 Linux still sets cap_user_rdpmc
 * for an rdpmc event but publishes index 0 (no counter to read).  The sysctl takes 0 or 1.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29. */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <setjmp.h>
#include <signal.h>

static int set_user_access(const char *v)
{
	int fd = open("/proc/sys/kernel/perf_user_access", O_WRONLY);
	int r;

	if (fd < 0)
		return -errno;
	r = write(fd, v, strlen(v)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int open_cycles(uint64_t config1)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.config1 = config1;
	a.exclude_kernel = 1;
	return (int)sys_perf_event_open(&a, 0, -1, -1, 0);
}

static uint64_t read_pmc(uint32_t idx)
{
	uint64_t v;

	if (idx == 31) {
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		return v;
	}
	__asm__ volatile("msr pmselr_el0, %1\n isb\n mrs %0, pmxevcntr_el0" : "=r"(v) : "r"((uint64_t)idx));
	return v;
}

/* The documented read loop (include/uapi/linux/perf_event.h). */
static uint64_t user_count(volatile struct perf_event_mmap_page *pc, uint32_t *index)
{
	uint32_t seq, idx;
	uint64_t count;

	do {
		seq = pc->lock;
		__asm__ volatile("" ::: "memory");
		idx = pc->index;
		count = pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			unsigned int width = pc->pmc_width;
			int64_t pmc = (int64_t)read_pmc(idx - 1);

			pmc <<= 64 - width;
			pmc >>= 64 - width;
			count += (uint64_t)pmc;
		}
		__asm__ volatile("" ::: "memory");
	} while (pc->lock != seq);
	*index = idx;
	return count;
}

static volatile uint64_t sink;

static void work(void)
{
	for (int i = 0; i < 200000; i++)
		sink += (uint64_t)i;
}

/* The generic timer from EL0, as Linux sets CNTKCTL_EL1 (EL0VCTEN): the virtual counter and
 * its frequency read without a trap (perf's time-to-TSC conversion and any user timer code). */
static sigjmp_buf ill_jmp;

static void on_ill(int sig)
{
	(void)sig;
	siglongjmp(ill_jmp, 1);
}

static void t_el0_timer(void)
{
	volatile uint64_t v0 = 0, v1 = 0, f = 0;
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_ill;
	sigaction(SIGILL, &sa, &old);
	if (sigsetjmp(ill_jmp, 1) == 0) {
		__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v0));
		for (volatile int i = 0; i < 100000; i++)
			;
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v1));
		__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
		CHECK(v1 > v0, "EL0 reads cntvct_el0, and it moves", "%llu -> %llu",
		      (unsigned long long)v0, (unsigned long long)v1);
		CHECK(f >= 1000000, "EL0 reads cntfrq_el0", "%llu", (unsigned long long)f);
	} else {
		tap_fail("EL0 reads cntvct_el0 and cntfrq_el0", "SIGILL");
	}
	sigaction(SIGILL, &old, NULL);
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	tap_init("t_perf_rdpmc", 60);
	t_el0_timer();
	if (geteuid() != 0) {
		tap_skip("all", "needs root");
		return tap_done();
	}
	int r = set_user_access("1");

	if (r == -ENOENT) {
		tap_skip("all", "no /proc/sys/kernel/perf_user_access");
		return tap_done();
	}
	CHECK(r == 0, "perf_user_access = 1", "err %d", r);
	CHECK(set_user_access("2") == -EINVAL, "perf_user_access = 2 -> EINVAL", "%s", "");
	int fd = open_cycles(0x2); /* rdpmc */

	if (!CHECK(fd >= 0, "open cycles with config1:1 (rdpmc)", "errno %d", errno))
		return tap_done();
	volatile struct perf_event_mmap_page *pc = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);

	if (!CHECK(pc != MAP_FAILED, "mmap the user page", "errno %d", errno))
		return tap_done();
	uint32_t idx = 0;
	uint64_t c0 = user_count(pc, &idx);

	CHECK(pc->cap_user_rdpmc == 1, "cap_user_rdpmc", "cap %u", (unsigned)pc->cap_user_rdpmc);
	CHECK(idx != 0, "index of the counter", "index %u", idx);
	CHECK(pc->pmc_width == 32 || pc->pmc_width == 64, "pmc_width 32 or 64", "width %u",
	      (unsigned)pc->pmc_width);
	work();
	uint64_t c1 = user_count(pc, &idx);
	uint64_t via_read = 0;

	CHECK(c1 > c0, "user-read count grows over a loop", "%llu -> %llu", (unsigned long long)c0,
	      (unsigned long long)c1);
	CHECK(read(fd, &via_read, 8) == 8 && via_read >= c1, "read() agrees (>= the earlier user read)",
	      "read %llu user %llu", (unsigned long long)via_read, (unsigned long long)c1);
	munmap((void *)pc, pg);
	close(fd);

	fd = open_cycles(0); /* no rdpmc bit */
	pc = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(pc != MAP_FAILED && pc->cap_user_rdpmc == 0 && pc->index == 0,
	      "without config1:1: cap_user_rdpmc 0, index 0", "cap %u index %u",
	      pc != MAP_FAILED ? (unsigned)pc->cap_user_rdpmc : 99u,
	      pc != MAP_FAILED ? (unsigned)pc->index : 99u);
	if (pc != MAP_FAILED)
		munmap((void *)pc, pg);
	close(fd);

	CHECK(set_user_access("0") == 0, "perf_user_access = 0", "%s", "");
	fd = open_cycles(0x2);
	pc = fd >= 0 ? mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	CHECK(pc != MAP_FAILED && pc->cap_user_rdpmc == 1 && pc->index == 0,
	      "sysctl 0: cap_user_rdpmc still 1, index 0", "cap %u index %u",
	      pc != MAP_FAILED ? (unsigned)pc->cap_user_rdpmc : 99u,
	      pc != MAP_FAILED ? (unsigned)pc->index : 99u);
	if (pc != MAP_FAILED)
		munmap((void *)pc, pg);
	if (fd >= 0)
		close(fd);
	return tap_done();
}
