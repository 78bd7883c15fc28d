/* t_perf_bp: PERF_TYPE_BREAKPOINT events count what user code does at an address: an execute
 * breakpoint counts the calls of a noinline function, watchpoints count the stores, loads or
 * both of a variable (and only of the bytes asked for), a sampling breakpoint writes one sample
 * per hit with IP and ADDR at the function, an inherited one counts a child's calls too, and the
 * registers run out with ENOSPC; the kernel's own stores into a watched variable (read() into
 * it) do not count.  Each hit is stepped over, so the program runs on as if nothing happened.
 * (Not here: a breakpoint on an svc instruction; Linux 6.1 kills the task with SIGTRAP there,
 * perfkernel counts it and goes on.)  Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
#define DATA_PAGES 8

static volatile uint64_t wvar;
static volatile uint8_t wbytes[16] __attribute__((aligned(8)));
static volatile uint64_t sink;

__attribute__((noinline)) void bp_target(uint64_t v)
{
	sink += v;
	__asm__ volatile("" ::: "memory");
}

static int bp_open(uint32_t type, uint64_t addr, uint64_t len, int inherit, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = type;
	a.bp_addr = addr;
	a.bp_len = len;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.inherit = inherit;
	a.sample_period = period;
	if (period)
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
	return (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static long long count_of(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return (long long)v;
}

static void on(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void off(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

static void t_exec(void)
{
	int fd = bp_open(HW_BREAKPOINT_X, (uintptr_t)bp_target, sizeof(long), 0, 0);

	if (!tap_ok(fd, errno, "exec breakpoint on bp_target opens"))
		return;
	on(fd);
	for (int i = 0; i < 1000; i++)
		bp_target((uint64_t)i);
	off(fd);
	long long n = count_of(fd);

	CHECK(n == 1000, "exec breakpoint counts 1000 calls", "count %lld", n);
	CHECK(sink == 999ull * 1000 / 2, "the calls ran as without the breakpoint", "sink %llu",
	      (unsigned long long)sink);
	/* disabled, it counts nothing */
	for (int i = 0; i < 10; i++)
		bp_target(0);
	CHECK(count_of(fd) == n, "a disabled breakpoint counts nothing", "count %lld", count_of(fd));
	close(fd);
}

static void t_watch(void)
{
	static const struct {
		uint32_t type;
		const char *opens, *what;
		long long want;
	} cases[] = {
		{ HW_BREAKPOINT_W, "write watchpoint on an 8-byte variable opens",
		  "write watchpoint counts 500 stores (not the 300 loads)", 500 },
		{ HW_BREAKPOINT_R, "read watchpoint on an 8-byte variable opens",
		  "read watchpoint counts 300 loads (not the 500 stores)", 300 },
		{ HW_BREAKPOINT_RW, "read/write watchpoint on an 8-byte variable opens",
		  "read/write watchpoint counts all 800 accesses", 800 },
	};
	uint64_t got = 0;

	wvar = 0; /* mapped and written before any watchpoint */
	for (unsigned int c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int fd = bp_open(cases[c].type, (uintptr_t)&wvar, 8, 0, 0);

		if (!tap_ok(fd, errno, cases[c].opens))
			continue;
		on(fd);
		for (int i = 0; i < 500; i++)
			wvar = (uint64_t)i;
		for (int i = 0; i < 300; i++)
			got += wvar;
		off(fd);
		long long n = count_of(fd);

		CHECK(n == cases[c].want, cases[c].what, "count %lld", n);
		close(fd);
	}
	CHECK(wvar == 499 && got == 3 * 300 * 499, "watched stores and loads took effect",
	      "wvar %llu, loads summed %llu", (unsigned long long)wvar, (unsigned long long)got);

	/* a 1-byte watchpoint on byte 3: byte stores to 0 do not count, stores to 3 do */
	int fd = bp_open(HW_BREAKPOINT_W, (uintptr_t)&wbytes[3], 1, 0, 0);

	if (tap_ok(fd, errno, "1-byte write watchpoint on byte 3 opens")) {
		on(fd);
		for (int i = 0; i < 100; i++)
			wbytes[0] = (uint8_t)i;
		for (int i = 0; i < 50; i++)
			wbytes[3] = (uint8_t)i;
		off(fd);
		long long n = count_of(fd);

		CHECK(n == 50, "1-byte watchpoint counts the 50 stores to its byte, not the 100 "
			       "to byte 0", "count %lld", n);
		close(fd);
	}
}

static void t_edges(void)
{
	int fd;
	/* the kernel writing the watched variable (read() into it) is not the task's store */
	int p[2];

	fd = bp_open(HW_BREAKPOINT_W, (uintptr_t)&wvar, 8, 0, 0);
	if (tap_ok(fd, errno, "write watchpoint for kernel stores opens") && pipe(p) == 0) {
		uint64_t v = 0x1234;
		int ok = 1;

		on(fd);
		for (int i = 0; i < 20; i++) {
			ok &= write(p[1], &v, 8) == 8;
			ok &= read(p[0], (void *)&wvar, 8) == 8;
		}
		off(fd);
		long long n = count_of(fd);

		CHECK(ok && n == 0 && wvar == 0x1234,
		      "read() into a watched variable: the kernel's stores do not count",
		      "count %lld, io %s, wvar %#llx", n, ok ? "ok" : "failed",
		      (unsigned long long)wvar);
		close(p[0]);
		close(p[1]);
	}
	if (fd >= 0)
		close(fd);
}

static void t_sample(void)
{
	const char *w = "sampling breakpoint: one sample per hit, IP and ADDR at bp_target";
	int fd = bp_open(HW_BREAKPOINT_X, (uintptr_t)bp_target, 4, 0, 1);

	if (!tap_ok(fd, errno, "sampling exec breakpoint (period 1) opens"))
		return;
	void *m = mmap(NULL, (1 + DATA_PAGES) * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED) {
		tap_fail(w, "mmap: errno %d", errno);
		close(fd);
		return;
	}
	struct perf_event_mmap_page *pg = m;
	char *data = (char *)m + PG;

	on(fd);
	for (int i = 0; i < 10; i++)
		bp_target(1);
	off(fd);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	int samples = 0, good = 0;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % (DATA_PAGES * PG));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t *f = (uint64_t *)(h + 1);

			samples++;
			if (f[0] == (uintptr_t)bp_target && f[1] == (uintptr_t)bp_target &&
			    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
				good++;
		}
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	CHECK(samples == 10 && good == 10, w, "%d samples, %d at bp_target", samples, good);
	munmap(m, (1 + DATA_PAGES) * PG);
	close(fd);
}

static void t_inherit(void)
{
	int fd = bp_open(HW_BREAKPOINT_X, (uintptr_t)bp_target, 4, 1, 0);

	if (!tap_ok(fd, errno, "inherited exec breakpoint opens"))
		return;
	on(fd);
	pid_t pid = fork();

	if (pid == 0) {
		for (int i = 0; i < 100; i++)
			bp_target(1);
		_exit(0);
	}
	for (int i = 0; i < 50; i++)
		bp_target(1);
	int st = 0;

	waitpid(pid, &st, 0);
	off(fd);
	long long n = count_of(fd);

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child stepped over its hits and exited 0",
	      "status %#x", st);
	CHECK(n == 150, "inherited breakpoint counts the parent's 50 and the child's 100 calls",
	      "count %lld", n);
	close(fd);
}

static void t_nospace(void)
{
	int fds[17], n = 0, err = 0;

	for (; n < 17; n++) {
		fds[n] = bp_open(HW_BREAKPOINT_X, (uintptr_t)bp_target + 4 * (uintptr_t)n, 4, 0, 0);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
	}
	printf("# %d execute breakpoints opened before errno %d\n", n, err);
	CHECK(n >= 1 && n <= 16 && err == ENOSPC,
	      "execute breakpoints on one task run out of registers with ENOSPC", "%d opened, then errno %d",
	      n, err);
	if (n >= 1 && n < 17) {
		close(fds[--n]);
		fds[n] = bp_open(HW_BREAKPOINT_X, (uintptr_t)bp_target, 4, 0, 0);
		CHECK(fds[n] >= 0, "closing one frees its register for the next open", "errno %d",
		      errno);
		if (fds[n] >= 0)
			n++;
	}
	/* data breakpoints have registers of their own */
	int wfd = bp_open(HW_BREAKPOINT_W, (uintptr_t)&wvar, 8, 0, 0);

	CHECK(wfd >= 0, "a watchpoint still opens while the breakpoints are full", "errno %d", errno);
	if (wfd >= 0)
		close(wfd);
	while (n > 0)
		close(fds[--n]);
}

int main(void)
{
	tap_init("t_perf_bp", 60);
	t_exec();
	t_watch();
	t_edges();
	t_sample();
	t_inherit();
	t_nospace();
	return tap_done();
}
