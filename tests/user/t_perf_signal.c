/*
 * t_perf_signal.c - overflow notification and control, as self-profilers and test suites use
 * them (each checked side by side with Linux 6.1 under refvm.sh):
 *   - fcntl on a perf fd: F_SETOWN / F_GETOWN (pid, -pgrp, ESRCH), F_SETOWN_EX / F_GETOWN_EX,
 *     F_SETSIG / F_GETSIG, O_ASYNC in F_GETFL;
 *   - async: with O_ASYNC every overflow signals the owner: the F_SETSIG signal with si_code
 *     POLL_IN, si_band POLLIN|POLLRDNORM and si_fd (one per overflow, counted exactly), or a
 *     plain SIGIO (SI_KERNEL) without F_SETSIG; no signal without O_ASYNC;
 *   - refresh: PERF_EVENT_IOC_REFRESH n enables for n overflows, the last one signals POLL_HUP
 *     and disables the event; its errnos (inherit, not sampling) and REFRESH 0;
 *   - sigtrap: attr.sigtrap sends SIGTRAP to the task itself, si_code TRAP_PERF, si_addr the
 *     fault address, si_perf_data attr.sig_data, si_perf_type the event type; the attr rules;
 *   - prctl: PR_TASK_PERF_EVENTS_DISABLE / ENABLE stop and restart every event the caller
 *     opened (also one on its child), not events others opened on it;
 *   - group: more than 64 siblings, read back with PERF_FORMAT_GROUP; the size bound (E2BIG);
 *   - mmap_data: attr.mmap_data alone records data mappings (PERF_RECORD_MMAP, MISC_MMAP_DATA);
 *   - comm: prctl(PR_SET_NAME) emits PERF_RECORD_COMM without the exec bit;
 *   - kbp: a breakpoint on a kernel address with exclude_kernel is EINVAL;
 *   - modify: PERF_EVENT_IOC_MODIFY_ATTRIBUTES moves a watchpoint to another address (and
 *     kind); other fields may not change (EINVAL), nor the type; other events EOPNOTSUPP;
 *   - ustack: PERF_SAMPLE_STACK_USER (perf record --call-graph dwarf) dumps the user stack from
 *     the sampled sp: size, the bytes (a pattern the sampled function keeps on its stack),
 *     dyn_size;
 *   - execmaps: what an exec records for mmap, mmap2, mmap_data and comm (load_elf_binary's
 *     order): COMM (COMM_EXEC even without attr.comm_exec), [stack], the program's text, its
 *     data, the bss as //anon (pgoff its address), [vvar], [vdso], then [heap] as it grows;
 *   - rmexec: attr.remove_on_exec: the event stops at the task's exec, its fd polls POLLHUP
 *     and reads the count from before the exec; an event without it goes on.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <linux/hw_breakpoint.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include "tap.h"
#include "sys_perf.h"

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static void spin_ms(unsigned ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	while (now_ns() < end)
		sink++;
}

static uint64_t read1(int fd)
{
	uint64_t v = ~0ull;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ull;
	return v;
}

/* n fresh pages, each touched once (one page fault each) */
static char *fresh_pages(size_t n)
{
	char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * 4096, MADV_NOHUGEPAGE);
	return p;
}

static void touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * 4096] = 1;
}

/* A page-fault event on ourselves, one overflow per fault. */
static int open_faults(int disabled, int inherit)
{
	struct perf_event_attr a;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.disabled = disabled;
	a.inherit = inherit;
	return (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- fcntl ---- */

static void test_fcntl(void)
{
	int fd = open_faults(1, 0);
	struct f_owner_ex ox;

	if (fd < 0) {
		tap_fail("fcntl: open", "%s", strerror(errno));
		return;
	}
	tap_check(fcntl(fd, F_GETOWN) == 0, "fcntl: no owner at first", "F_GETOWN %d",
		  fcntl(fd, F_GETOWN));
	tap_check(fcntl(fd, F_SETOWN, getpid()) == 0 && fcntl(fd, F_GETOWN) == getpid(),
		  "fcntl: F_SETOWN pid, F_GETOWN gives it", "%d (%s)", fcntl(fd, F_GETOWN),
		  strerror(errno));
	tap_check(fcntl(fd, F_SETOWN, -getpgrp()) == 0 && fcntl(fd, F_GETOWN) == -getpgrp(),
		  "fcntl: F_SETOWN -pgrp, F_GETOWN gives it", "%d want %d", fcntl(fd, F_GETOWN),
		  -getpgrp());
	errno = 0;
	tap_check(fcntl(fd, F_SETOWN, 4000000) == -1 && errno == ESRCH, "fcntl: F_SETOWN no such pid",
		  "errno %d", errno);
	ox.type = F_OWNER_TID;
	ox.pid = (int)syscall(__NR_gettid);
	memset(&ox, 0, sizeof(ox));
	ox.type = F_OWNER_TID;
	ox.pid = (int)syscall(__NR_gettid);
	int r = fcntl(fd, F_SETOWN_EX, &ox);
	struct f_owner_ex got = { -1, -1 };
	int r2 = fcntl(fd, F_GETOWN_EX, &got);

	tap_check(r == 0 && r2 == 0 && got.type == F_OWNER_TID && got.pid == ox.pid,
		  "fcntl: F_SETOWN_EX tid round trip", "r %d r2 %d type %d pid %d", r, r2, got.type,
		  got.pid);
	tap_check(fcntl(fd, F_GETOWN) == ox.pid, "fcntl: F_GETOWN after F_OWNER_TID", "%d",
		  fcntl(fd, F_GETOWN));
	ox.type = 7;
	errno = 0;
	tap_check(fcntl(fd, F_SETOWN_EX, &ox) == -1 && errno == EINVAL, "fcntl: F_SETOWN_EX bad type",
		  "errno %d", errno);
	errno = 0;
	tap_check(fcntl(fd, F_SETOWN_EX, (void *)16) == -1 && errno == EFAULT,
		  "fcntl: F_SETOWN_EX bad pointer", "errno %d", errno);
	ox.type = F_OWNER_PGRP;
	ox.pid = getpgrp();
	r = fcntl(fd, F_SETOWN_EX, &ox);
	tap_check(r == 0 && fcntl(fd, F_GETOWN) == -getpgrp(), "fcntl: F_OWNER_PGRP reads as -pgrp",
		  "r %d getown %d", r, fcntl(fd, F_GETOWN));
	tap_check(fcntl(fd, F_GETSIG) == 0, "fcntl: F_GETSIG 0 at first", "%d", fcntl(fd, F_GETSIG));
	tap_check(fcntl(fd, F_SETSIG, SIGRTMIN + 2) == 0 && fcntl(fd, F_GETSIG) == SIGRTMIN + 2,
		  "fcntl: F_SETSIG round trip", "%d", fcntl(fd, F_GETSIG));
	errno = 0;
	tap_check(fcntl(fd, F_SETSIG, 65) == -1 && errno == EINVAL, "fcntl: F_SETSIG 65 is EINVAL",
		  "errno %d", errno);
	int fl = fcntl(fd, F_GETFL);

	tap_check(fcntl(fd, F_SETFL, fl | O_ASYNC) == 0 && (fcntl(fd, F_GETFL) & O_ASYNC),
		  "fcntl: O_ASYNC set", "flags %#x", fcntl(fd, F_GETFL));
	tap_check(fcntl(fd, F_SETFL, fl) == 0 && !(fcntl(fd, F_GETFL) & O_ASYNC),
		  "fcntl: O_ASYNC cleared", "flags %#x", fcntl(fd, F_GETFL));
	close(fd);
}

/* ---- async signals ---- */

/* Block sig, take what is queued of it (up to max infos). */
static int drain(int sig, siginfo_t *infos, int max)
{
	sigset_t s;
	struct timespec zero = { 0, 0 };
	int n = 0;
	siginfo_t si;

	sigemptyset(&s);
	sigaddset(&s, sig);
	while (sigtimedwait(&s, &si, &zero) == sig) {
		if (n < max)
			infos[n] = si;
		n++;
	}
	return n;
}

static void block(int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static int setup_async(int fd, int sig)
{
	if (fcntl(fd, F_SETOWN, getpid()) || (sig && fcntl(fd, F_SETSIG, sig)))
		return -1;
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC | O_NONBLOCK);
}

static void test_async(void)
{
	const int n = 40, sig = SIGRTMIN + 1;
	siginfo_t inf[64];
	char *p = fresh_pages(n);
	int fd = open_faults(1, 0);

	if (fd < 0 || !p) {
		tap_fail("async: open", "%s", strerror(errno));
		return;
	}
	block(sig);
	block(SIGIO);
	drain(sig, inf, 0);
	tap_check(setup_async(fd, sig) == 0, "async: owner, F_SETSIG, O_ASYNC", "%s",
		  strerror(errno));
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t count = read1(fd);
	int got = drain(sig, inf, 64);
	int bad = 0;

	for (int i = 0; i < got && i < 64; i++)
		if (inf[i].si_code != POLL_IN || inf[i].si_fd != fd ||
		    inf[i].si_band != (POLLIN | POLLRDNORM))
			bad++;
	tap_check(count == (uint64_t)n, "async: the event counted each fault", "count %llu",
		  (unsigned long long)count);
	tap_check(got == n, "async: one queued signal per overflow", "%d signals for %d overflows",
		  got, n);
	tap_check(got > 0 && !bad, "async: si_code POLL_IN, si_fd, si_band POLLIN|POLLRDNORM",
		  "%d bad (first: code %d fd %d band %#lx)", bad, got ? inf[0].si_code : 0,
		  got ? inf[0].si_fd : 0, got ? (long)inf[0].si_band : 0);
	tap_check(drain(SIGIO, inf, 0) == 0, "async: no SIGIO besides the F_SETSIG signal", "got one");
	munmap(p, n * 4096);

	/* plain SIGIO without F_SETSIG: SI_KERNEL, no fd */
	p = fresh_pages(8);
	fcntl(fd, F_SETSIG, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, 8);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	got = drain(SIGIO, inf, 64);
	tap_check(got == 1 && inf[0].si_code == SI_KERNEL, "async: plain SIGIO (SI_KERNEL) without F_SETSIG",
		  "%d signals, code %d", got, got ? inf[0].si_code : 0);
	munmap(p, 8 * 4096);

	/* O_ASYNC off: no signal at all */
	p = fresh_pages(8);
	fcntl(fd, F_SETSIG, sig);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, 8);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	got = drain(sig, inf, 64) + drain(SIGIO, inf, 64);
	tap_check(got == 0, "async: no signal once O_ASYNC is cleared", "%d signals", got);
	munmap(p, 8 * 4096);
	close(fd);

	/* a handler (not a queue) sees SIGIO once per overflow too: the self-profiler pattern */
	p = fresh_pages(8);
	fd = open_faults(1, 0);
	drain(sig, inf, 0);
	setup_async(fd, sig);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, 8);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	/* closing the fd drops the owner: nothing after it */
	close(fd);
	got = drain(sig, inf, 64);
	tap_check(got == 8, "async: second event, 8 faults give 8 signals", "%d", got);
	munmap(p, 8 * 4096);

	/* a process group as the owner: a child in a group of its own counts its signals */
	pid_t ch = fork();

	if (ch == 0) {
		struct f_owner_ex ox;
		char *q = fresh_pages(4);
		int efd = open_faults(1, 0);

		setpgid(0, 0);
		ox.type = F_OWNER_PGRP;
		ox.pid = getpgrp();
		drain(sig, inf, 0);
		if (!q || efd < 0 || fcntl(efd, F_SETOWN_EX, &ox) || fcntl(efd, F_SETSIG, sig) ||
		    fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) | O_ASYNC))
			_exit(10);
		ioctl(efd, PERF_EVENT_IOC_ENABLE, 0);
		touch(q, 4);
		ioctl(efd, PERF_EVENT_IOC_DISABLE, 0);
		_exit(drain(sig, inf, 64));
	}
	int st = 0;

	waitpid(ch, &st, 0);
	tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 4,
		  "async: F_OWNER_PGRP: the group gets one signal per overflow", "status %#x", st);
}

/* ---- refresh ---- */

static void test_refresh(void)
{
	const int sig = SIGRTMIN + 1;
	siginfo_t inf[64];
	char *p = fresh_pages(20);
	int fd = open_faults(1, 0);

	if (fd < 0 || !p) {
		tap_fail("refresh: open", "%s", strerror(errno));
		return;
	}
	block(sig);
	drain(sig, inf, 0);
	setup_async(fd, sig);
	int r = ioctl(fd, PERF_EVENT_IOC_REFRESH, 3);

	tap_check(r == 0, "refresh: REFRESH 3", "%s", strerror(errno));
	touch(p, 10);
	uint64_t count = read1(fd);
	int got = drain(sig, inf, 64);

	tap_check(count == 3, "refresh: the event stops after 3 overflows", "count %llu",
		  (unsigned long long)count);
	tap_check(got == 3 && inf[0].si_code == POLL_IN && inf[1].si_code == POLL_IN &&
			  inf[2].si_code == POLL_HUP && inf[2].si_band == (POLLHUP | POLLERR) &&
			  inf[2].si_fd == fd,
		  "refresh: POLL_IN, POLL_IN, then POLL_HUP (band POLLHUP|POLLERR)",
		  "%d signals, codes %d %d %d band %#lx", got, got > 0 ? inf[0].si_code : 0,
		  got > 1 ? inf[1].si_code : 0, got > 2 ? inf[2].si_code : 0,
		  got > 2 ? (long)inf[2].si_band : 0);
	r = ioctl(fd, PERF_EVENT_IOC_REFRESH, 2);
	touch(p + 10 * 4096, 5);
	count = read1(fd);
	got = drain(sig, inf, 64);
	tap_check(r == 0 && count == 5 && got == 2 && inf[1].si_code == POLL_HUP,
		  "refresh: REFRESH 2 again: two more, the last POLL_HUP",
		  "r %d count %llu signals %d", r, (unsigned long long)count, got);
	/* REFRESH 0 enables without a limit */
	r = ioctl(fd, PERF_EVENT_IOC_REFRESH, 0);
	touch(p + 15 * 4096, 5);
	count = read1(fd);
	got = drain(sig, inf, 64);
	tap_check(r == 0 && count == 10 && got == 5, "refresh: REFRESH 0 enables with no limit",
		  "r %d (%s) count %llu signals %d", r, strerror(errno), (unsigned long long)count,
		  got);
	close(fd);
	munmap(p, 20 * 4096);

	fd = open_faults(1, 1);
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == -1 && errno == EINVAL,
		  "refresh: inherited event is EINVAL", "errno %d", errno);
	close(fd);
	struct perf_event_attr a;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	a.disabled = 1;
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == -1 && errno == EINVAL,
		  "refresh: counting event is EINVAL", "errno %d", errno);
	close(fd);
}

/* ---- sigtrap ---- */

static volatile int trap_hits;
static siginfo_t trap_info;
static void *volatile trap_last;
static void *volatile trap_all[8];

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!trap_hits++)
		trap_info = *si;
	trap_last = si->si_addr;
	if (trap_hits <= 8)
		trap_all[trap_hits - 1] = si->si_addr;
}

static void test_sigtrap(void)
{
	struct perf_event_attr a;
	struct sigaction sa;
	char *p = fresh_pages(4);

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.sigtrap = 1;
	a.sig_data = 0xfeedcafe12345678ull;
	errno = 0;
	tap_check((int)sys_perf_event_open(&a, 0, -1, -1, 0) == -1 && errno == EINVAL, "sigtrap: needs remove_on_exec",
		  "errno %d", errno);
	a.remove_on_exec = 1;
	errno = 0;
	tap_check((int)sys_perf_event_open(&a, -1, 0, -1, 0) == -1 && errno == EINVAL, "sigtrap: needs a task",
		  "errno %d", errno);
	/* the handler runs on a stack touched beforehand: its frames fault no page in */
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	memset(altstack, 1, sizeof(altstack));
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGTRAP, &sa, NULL);
	a.disabled = 1;
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 || !p) {
		tap_fail("sigtrap: open", "%s", strerror(errno));
		return;
	}
	/* one delivery first: the signal return path's own pages are in before counting */
	raise(SIGTRAP);
	trap_hits = 0;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, 3);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	tap_check(trap_hits == 3, "sigtrap: one SIGTRAP per overflow", "%d (at %p %p %p %p, pages at %p)",
		  trap_hits, trap_all[0], trap_all[1], trap_all[2], trap_all[3], (void *)p);
	tap_check(trap_info.si_code == TRAP_PERF && trap_info.si_addr == p,
		  "sigtrap: si_code TRAP_PERF, si_addr the fault address", "code %d addr %p want %p",
		  trap_info.si_code, trap_info.si_addr, (void *)p);
	/* glibc's siginfo_t has no names for them: the kernel's _sigfault._perf, after si_addr */
	uint64_t perf_data;
	uint32_t perf_type, perf_flags;

	memcpy(&perf_data, (char *)&trap_info + 24, 8);
	memcpy(&perf_type, (char *)&trap_info + 32, 4);
	memcpy(&perf_flags, (char *)&trap_info + 36, 4);
	tap_check(perf_data == 0xfeedcafe12345678ull && perf_type == PERF_TYPE_SOFTWARE &&
			  perf_flags == 0,
		  "sigtrap: si_perf_data, si_perf_type, si_perf_flags", "data %#llx type %u flags %u",
		  (unsigned long long)perf_data, perf_type, perf_flags);
	close(fd);
	signal(SIGTRAP, SIG_DFL);
	munmap(p, 4 * 4096);
}

/* ---- prctl ---- */

static void test_prctl(void)
{
	struct perf_event_attr a;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);
	int pfd[2];

	if (fd < 0 || pipe(pfd)) {
		tap_fail("prctl: open", "%s", strerror(errno));
		return;
	}
	/* a child that spins until told: an event we open on it is ours too */
	pid_t ch = fork();

	if (ch == 0) {
		char c;

		close(pfd[1]);
		fcntl(pfd[0], F_SETFL, O_NONBLOCK);
		while (read(pfd[0], &c, 1) != 0)
			sink++;
		_exit(0);
	}
	close(pfd[0]);
	int cfd = (int)sys_perf_event_open(&a, ch, -1, -1, 0);

	/* both have run (a slow or single-CPU machine may take a while to run the child) */
	spin_ms(20);
	for (int i = 0; i < 200 && read1(cfd) == 0; i++)
		usleep(10000);
	tap_check(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) == 0, "prctl: DISABLE", "%s",
		  strerror(errno));
	uint64_t a0 = read1(fd), c0 = read1(cfd);

	spin_ms(30);
	uint64_t a1 = read1(fd), c1 = read1(cfd);

	tap_check(a0 > 0 && a1 == a0, "prctl: own event stopped", "%llu -> %llu",
		  (unsigned long long)a0, (unsigned long long)a1);
	tap_check(c0 > 0 && c1 == c0, "prctl: the event on the child stopped too", "%llu -> %llu",
		  (unsigned long long)c0, (unsigned long long)c1);
	tap_check(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) == 0, "prctl: ENABLE", "%s",
		  strerror(errno));
	spin_ms(30);
	uint64_t a2 = read1(fd), c2 = read1(cfd);

	for (int i = 0; i < 200 && c2 == c1; i++) {
		usleep(10000);
		c2 = read1(cfd);
	}

	tap_check(a2 > a1 + 10000000, "prctl: own event counts again", "%llu -> %llu",
		  (unsigned long long)a1, (unsigned long long)a2);
	tap_check(c2 > c1, "prctl: child's event counts again", "%llu -> %llu",
		  (unsigned long long)c1, (unsigned long long)c2);
	close(pfd[1]);
	waitpid(ch, NULL, 0);
	close(cfd);
	close(fd);

	/* an event a child opens on its parent is the child's: the parent's DISABLE leaves it */
	int r2[2], back[2];
	char c;

	if (pipe(r2) || pipe(back))
		return;
	ch = fork();
	if (ch == 0) {
		/* each step waits for the other side: a child slow to run (a loaded host) must not
		 * take both readings after the parent's spin */
		int efd = (int)sys_perf_event_open(&a, getppid(), -1, -1, 0);
		uint64_t v0, v1;

		if (write(back[1], "o", 1) != 1 || read(r2[0], &c, 1) != 1) /* parent disabled */
			_exit(2);
		v0 = read1(efd);
		if (write(back[1], "r", 1) != 1 || read(r2[0], &c, 1) != 1) /* parent spun */
			_exit(2);
		v1 = read1(efd);
		_exit(efd >= 0 && v1 > v0 ? 0 : 1);
	}
	if (read(back[0], &c, 1) != 1) /* the child's event is open */
		return;
	prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
	if (write(r2[1], "x", 1) != 1 || read(back[0], &c, 1) != 1) /* its first reading taken */
		return;
	spin_ms(30);
	if (write(r2[1], "x", 1) != 1)
		return;
	int st = 0;

	waitpid(ch, &st, 0);
	prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
	tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "prctl: an event another process opened on us keeps counting", "status %#x", st);
	close(r2[0]);
	close(r2[1]);
	close(back[0]);
	close(back[1]);
}

/* ---- big groups ---- */

static void test_group(void)
{
	struct perf_event_attr a;
	const uint64_t fmt = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST;
	static int fds[1024];
	int n = 0, err = 0;
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 1024) {
		rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.read_format = fmt;
	a.disabled = 1;
	fds[n++] = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fds[0] < 0) {
		tap_fail("group: leader", "%s", strerror(errno));
		return;
	}
	a.disabled = 0;
	while (n < 1000) {
		int fd = (int)sys_perf_event_open(&a, 0, -1, fds[0], PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = errno;
			break;
		}
		fds[n++] = fd;
	}
	/* 6.1's perf_event_validate_size: the group's read size with the new member (24 + 24 per
	 * member) plus a record header stays below 16 KiB: 681 members */
	tap_check(n == 681 && err == E2BIG, "group: siblings until the read size bound (E2BIG)",
		  "%d members, then errno %d", n, err);
	size_t sz = 24 + 24 * (size_t)n;
	uint64_t *buf = calloc(1, sz + 64);
	long r = read(fds[0], buf, sz);

	tap_check(r == (long)sz && buf[0] == (uint64_t)n, "group: GROUP read of all members",
		  "read %ld want %zu, nr %llu", r, sz, (unsigned long long)buf[0]);
	errno = 0;
	r = read(fds[0], buf, sz - 8);
	tap_check(r == -1 && errno == ENOSPC, "group: short buffer ENOSPC", "r %ld errno %d", r,
		  errno);
	uint64_t id = 0;

	ioctl(fds[100], PERF_EVENT_IOC_ID, &id);
	tap_check(n > 100 && buf[3 + 100 * 3 + 1] == id, "group: member 100's id in place",
		  "%llu want %llu", (unsigned long long)buf[3 + 100 * 3 + 1], (unsigned long long)id);
	free(buf);
	for (int i = n - 1; i >= 0; i--)
		close(fds[i]);
}

/* ---- side-band: mmap_data, comm ---- */

struct ring {
	int fd;
	struct perf_ring pr; /* 8 data pages */
};

static int ring_open(struct ring *r, struct perf_event_attr *a)
{
	r->fd = (int)sys_perf_event_open(a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -1;
	return perf_ring_map(&r->pr, r->fd, 8);
}

static void ring_close(struct ring *r)
{
	perf_ring_unmap(&r->pr);
	close(r->fd);
}

struct scan {
	int (*fn)(struct perf_event_header *, void *);
	void *arg;
	int hits;
};

static void scan_one(const struct perf_event_header *h, void *p)
{
	struct scan *s = p;

	s->hits += s->fn((struct perf_event_header *)h, s->arg);
}

/* Call fn(hdr) for each record, leaving them in the ring; returns how many fn accepted. */
static int ring_scan(struct ring *r, int (*fn)(struct perf_event_header *, void *), void *arg)
{
	static uint64_t buf[65536 / 8];
	struct scan s = { fn, arg, 0 };

	perf_ring_read(&r->pr, scan_one, &s, buf, sizeof(buf), 0);
	return s.hits;
}

struct mmap_want {
	uint64_t addr, len;
	const char *name;
	uint16_t misc;
};

static int match_mmap(struct perf_event_header *h, void *arg)
{
	struct mmap_want *w = arg;
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		char name[];
	} *m = (void *)(h + 1);

	if (h->type != PERF_RECORD_MMAP || m->addr != w->addr)
		return 0;
	w->misc = h->misc;
	return m->len == w->len && !strcmp(m->name, w->name) && m->pid == (uint32_t)getpid();
}

static int match_comm(struct perf_event_header *h, void *arg)
{
	struct {
		uint32_t pid, tid;
		char comm[];
	} *c = (void *)(h + 1);
	uint16_t *misc = arg;

	if (h->type != PERF_RECORD_COMM || strcmp(c->comm, "sig-renamed"))
		return 0;
	*misc = h->misc;
	return c->pid == (uint32_t)getpid() && c->tid == (uint32_t)syscall(__NR_gettid);
}

static void test_sideband(void)
{
	struct perf_event_attr a;
	struct ring r;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.mmap_data = 1;
	a.sample_id_all = 1;
	if (ring_open(&r, &a)) {
		tap_fail("mmap_data: open", "%s", strerror(errno));
		return;
	}
	void *d = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mmap_want w = { (uint64_t)(uintptr_t)d, 3 * 4096, "//anon", 0 };
	struct mmap_want wx = { (uint64_t)(uintptr_t)x, 4096, "//anon", 0 };

	tap_check(ring_scan(&r, match_mmap, &w) == 1 && (w.misc & PERF_RECORD_MISC_MMAP_DATA),
		  "mmap_data: alone, an anonymous data mapping gives PERF_RECORD_MMAP (MMAP_DATA)",
		  "misc %#x", w.misc);
	tap_check(ring_scan(&r, match_mmap, &wx) == 0, "mmap_data: alone, no record for exec maps",
		  "got one");
	munmap(d, 3 * 4096);
	munmap(x, 4096);
	ring_close(&r);

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.comm = 1;
	if (ring_open(&r, &a)) {
		tap_fail("comm: open", "%s", strerror(errno));
		return;
	}
	char old[16] = "";
	uint16_t misc = 0xffff;

	prctl(PR_GET_NAME, old, 0, 0, 0);
	prctl(PR_SET_NAME, "sig-renamed", 0, 0, 0);
	tap_check(ring_scan(&r, match_comm, &misc) == 1 && misc == 0,
		  "comm: PR_SET_NAME emits PERF_RECORD_COMM, misc without COMM_EXEC", "misc %#x", misc);
	prctl(PR_SET_NAME, old, 0, 0, 0);
	ring_close(&r);
}

/* ---- MODIFY_ATTRIBUTES ---- */

static volatile uint64_t wvar[2];

static void test_modify(void)
{
	struct perf_event_attr a, b;

	attr_init(&a, PERF_TYPE_BREAKPOINT, 0);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&wvar[0];
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);

	if (fd < 0) {
		tap_fail("modify: open", "%s", strerror(errno));
		return;
	}
	wvar[0] = 1;
	uint64_t c0 = read1(fd);

	b = a;
	b.bp_addr = (uint64_t)(uintptr_t)&wvar[1];
	int r = ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &b);

	wvar[0] = 2;
	uint64_t c1 = read1(fd);

	wvar[1] = 3;
	uint64_t c2 = read1(fd);

	tap_check(c0 == 1 && r == 0 && c1 == 1 && c2 == 2,
		  "modify: the watchpoint moves to the new address", "c0 %llu r %d c1 %llu c2 %llu",
		  (unsigned long long)c0, r, (unsigned long long)c1, (unsigned long long)c2);
	b.bp_type = HW_BREAKPOINT_RW;
	r = ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &b);
	sink += wvar[1];
	tap_check(r == 0 && read1(fd) == 3, "modify: W to RW, a read now counts", "r %d count %llu", r,
		  (unsigned long long)read1(fd));
	b.exclude_user = 1;
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &b) == -1 && errno == EINVAL,
		  "modify: another field changed is EINVAL", "errno %d", errno);
	b.exclude_user = 0;
	b.type = PERF_TYPE_SOFTWARE;
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &b) == -1 && errno == EINVAL,
		  "modify: another type is EINVAL", "errno %d", errno);
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, (void *)8) == -1 && errno == EFAULT,
		  "modify: bad pointer EFAULT", "errno %d", errno);
	close(fd);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);
	errno = 0;
	tap_check(ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) == -1 && errno == EOPNOTSUPP,
		  "modify: a software event is EOPNOTSUPP", "errno %d", errno);
	close(fd);
}

/* ---- user stack dumps ---- */

struct ustack_seen {
	int samples;
	uint64_t abi, sp, size, dyn;
	int pattern_at; /* offset of the pattern in the dump, or -1 */
};

static const uint8_t ustack_pat[16] = "perfkernel-dump";

static int match_ustack(struct perf_event_header *h, void *arg)
{
	struct ustack_seen *s = arg;
	uint64_t *p = (uint64_t *)(h + 1);

	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	s->samples++;
	s->abi = p[0];
	s->sp = p[1]; /* sample_regs_user: sp alone */
	s->size = p[2];
	uint8_t *dump = (uint8_t *)&p[3];

	s->dyn = s->size ? *(uint64_t *)(dump + s->size) : 0;
	s->pattern_at = -1;
	for (uint64_t i = 0; i + sizeof(ustack_pat) <= s->size; i++)
		if (!memcmp(dump + i, ustack_pat, sizeof(ustack_pat))) {
			s->pattern_at = (int)i;
			break;
		}
	return 1;
}

__attribute__((noinline)) static uintptr_t fault_with_pattern(char *page)
{
	volatile uint8_t keep[64];

	for (unsigned i = 0; i < sizeof(ustack_pat); i++)
		keep[16 + i] = ustack_pat[i];
	*(volatile char *)page = 1; /* the sample: this fault */
	return (uintptr_t)&keep[16];
}

static void test_ustack(void)
{
	struct perf_event_attr a;
	struct ring r;
	struct ustack_seen s = { 0 };
	char *p = fresh_pages(1);

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = 1ull << 31; /* PERF_REG_ARM64_SP */
	a.sample_stack_user = 512;
	a.disabled = 1;
	if (!p || ring_open(&r, &a)) {
		tap_fail("ustack: open", "%s", strerror(errno));
		return;
	}
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	uintptr_t pat = fault_with_pattern(p);

	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_scan(&r, match_ustack, &s);
	tap_check(s.samples == 1 && s.abi == PERF_SAMPLE_REGS_ABI_64 && s.size == 512 && s.dyn == 512,
		  "ustack: one sample, a 512-byte dump, dyn_size 512", "samples %d abi %llu size %llu dyn %llu",
		  s.samples, (unsigned long long)s.abi, (unsigned long long)s.size,
		  (unsigned long long)s.dyn);
	tap_check(s.pattern_at >= 0 && s.sp + (uint64_t)s.pattern_at == pat,
		  "ustack: the dump starts at the sampled sp (the pattern is where it was)",
		  "pattern at %d, sp %#llx, pattern address %#lx", s.pattern_at,
		  (unsigned long long)s.sp, (unsigned long)pat);
	ring_close(&r);
	munmap(p, 4096);
}

static const char *self_path;

/* ---- the records of an exec ---- */

struct exec_seen {
	char kinds[12][48];
	int n;
	uint16_t comm_misc;
	int bss_pgoff_ok, bss_follows_data, bss_seen;
	uint64_t data_end;
};

static int match_exec(struct perf_event_header *h, void *arg)
{
	struct exec_seen *s = arg;

	if (h->type == PERF_RECORD_COMM) {
		s->comm_misc = h->misc;
		return 1;
	}
	if (h->type != PERF_RECORD_MMAP2 || s->n >= 12)
		return 0;
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, gen;
		uint32_t prot, flags;
		char name[];
	} *m = (void *)(h + 1);
	const char *base = strrchr(m->name, '/');

	base = base && m->name[0] == '/' && m->name[1] != '/' ? base + 1 : m->name;
	snprintf(s->kinds[s->n++], sizeof(s->kinds[0]), "%s:%u:%s", base, m->prot,
		 (h->misc & PERF_RECORD_MISC_MMAP_DATA) ? "data" : "exec");
	if (!strcmp(base, "t_perf_signal") && m->prot == 3)
		s->data_end = m->addr + m->len;
	if (!strcmp(m->name, "//anon") && s->data_end && !s->bss_seen) {
		s->bss_seen = 1;
		s->bss_pgoff_ok = m->pgoff == m->addr;
		s->bss_follows_data = m->addr == s->data_end;
	}
	return 1;
}

static void test_execmaps(void)
{
	struct perf_event_attr a;
	int go[2];

	if (pipe(go))
		return;
	pid_t ch = fork();

	if (ch == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		execl(self_path, self_path, "maps-child", (char *)NULL);
		_exit(3);
	}
	close(go[0]);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a.mmap = 1;
	a.mmap2 = 1;
	a.mmap_data = 1;
	a.comm = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	int fd = (int)sys_perf_event_open(&a, ch, -1, -1, 0);
	struct ring r = { .fd = fd };
	struct exec_seen s;

	memset(&s, 0, sizeof(s));
	if (fd < 0 || perf_ring_map(&r.pr, fd, 8)) {
		tap_fail("execmaps: open", "%s", strerror(errno));
		return;
	}
	if (write(go[1], "x", 1) != 1)
		return;
	waitpid(ch, NULL, 0);
	ring_scan(&r, match_exec, &s);
	static const char *const want[] = {
		"[stack]:3:data",	   "t_perf_signal:5:exec", "t_perf_signal:3:data", "//anon:3:data",
		"[vvar]:1:data",	   "[vdso]:5:exec",	   "[heap]:3:data",
	};
	int same = s.n >= 7;

	for (int i = 0; i < 7 && same; i++)
		same = !strcmp(s.kinds[i], want[i]);
	tap_check(same, "execmaps: stack, text, data, bss, vvar, vdso, then the heap",
		  "%d records: %s, %s, %s, %s, %s, %s, %s", s.n, s.kinds[0], s.kinds[1], s.kinds[2],
		  s.kinds[3], s.kinds[4], s.kinds[5], s.kinds[6]);
	tap_check(s.bss_pgoff_ok && s.bss_follows_data,
		  "execmaps: the bss record follows the data's file pages, pgoff its address",
		  "pgoff ok %d follows %d", s.bss_pgoff_ok, s.bss_follows_data);
	tap_check(s.comm_misc == PERF_RECORD_MISC_COMM_EXEC,
		  "execmaps: the exec's COMM has COMM_EXEC without attr.comm_exec", "misc %#x",
		  s.comm_misc);
	ring_close(&r);
	close(go[1]);
}

/* ---- remove_on_exec ---- */

static void test_rmexec(void)
{
	struct perf_event_attr a;
	int go[2], done[2];

	if (pipe(go) || pipe(done))
		return;
	pid_t ch = fork();

	if (ch == 0) {
		char c, fdarg[16];

		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		spin_ms(40);
		snprintf(fdarg, sizeof(fdarg), "%d", done[1]);
		execl(self_path, self_path, "rmexec-child", fdarg, (char *)NULL);
		_exit(3);
	}
	close(go[0]);
	close(done[1]);
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a.remove_on_exec = 1;
	int rm = (int)sys_perf_event_open(&a, ch, -1, -1, 0);

	a.remove_on_exec = 0;
	int keep = (int)sys_perf_event_open(&a, ch, -1, -1, 0);

	if (rm < 0 || keep < 0) {
		tap_fail("rmexec: open", "%s", strerror(errno));
		return;
	}
	/* an event without a ring always polls POLLHUP (perf_poll's default): give both one */
	void *rr = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rm, 0);
	void *rk = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, keep, 0);
	struct pollfd p0[2] = { { rm, POLLIN, 0 }, { keep, POLLIN, 0 } };

	poll(p0, 2, 0);
	tap_check(rr != MAP_FAILED && rk != MAP_FAILED && !p0[0].revents && !p0[1].revents,
		  "rmexec: with rings, neither polls anything before", "revents %#x %#x",
		  p0[0].revents, p0[1].revents);
	if (write(go[1], "x", 1) != 1)
		return;
	char c;
	/* the child has exec'd when it writes */
	int r = (int)read(done[0], &c, 1);
	struct pollfd p[2] = { { rm, POLLIN, 0 }, { keep, POLLIN, 0 } };

	poll(p, 2, 0);
	tap_check(r == 1 && (p[0].revents & POLLHUP) && !(p[1].revents & POLLHUP),
		  "rmexec: after the exec the removed event polls POLLHUP, the other not",
		  "r %d revents %#x %#x", r, p[0].revents, p[1].revents);
	waitpid(ch, NULL, 0);
	uint64_t vr = read1(rm), vk = read1(keep);

	tap_check(vr >= 30000000ull && vr * 2 < vk, "rmexec: it counted only until the exec",
		  "removed %llu ns, kept %llu ns", (unsigned long long)vr, (unsigned long long)vk);
	munmap(rr, 2 * 4096);
	munmap(rk, 2 * 4096);
	close(rm);
	close(keep);
	close(go[1]);
	close(done[0]);
}

/* ---- kernel-address breakpoint ---- */

static void test_kbp(void)
{
	struct perf_event_attr a;

	attr_init(&a, PERF_TYPE_BREAKPOINT, 0);
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = 0xffff800008010000ull;
	a.bp_len = 4;
	a.sample_period = 1;
	errno = 0;
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);

	tap_check(fd == -1 && errno == EINVAL, "kbp: kernel address with exclude_kernel is EINVAL",
		  "fd %d errno %d", fd, errno);
	if (fd >= 0)
		close(fd);
	/* perf_poll: an event without a ring reports POLLHUP */
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);
	struct pollfd p = { fd, POLLIN, 0 };

	tap_check(poll(&p, 1, 0) == 1 && p.revents == POLLHUP, "poll: no ring polls POLLHUP",
		  "revents %#x", p.revents);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "rmexec-child")) {
		/* exec'd by test_rmexec: say so, then run long enough to be measured */
		int fd = atoi(argv[2]);

		if (write(fd, "x", 1) != 1)
			return 2;
		spin_ms(120);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "maps-child")) {
		/* exec'd by test_execmaps: grow the heap once */
		char *volatile h = malloc(200000);

		h[0] = 1;
		return 0;
	}
	self_path = argv[0];
	tap_init("t_perf_signal", 120);
	const char *only = argc > 1 ? argv[1] : NULL;

#define RUN(name)                                  \
	if (!only || !strcmp(only, #name))         \
		test_##name();
	RUN(fcntl);
	RUN(async);
	RUN(refresh);
	RUN(sigtrap);
	RUN(prctl);
	RUN(group);
	RUN(sideband);
	RUN(kbp);
	RUN(modify);
	RUN(ustack);
	RUN(rmexec);
	RUN(execmaps);
	return tap_done();
}
