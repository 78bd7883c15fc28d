/* t_tp_irq: the irq and timer tracepoints, checked against Linux 6.1's ABI; passes on
 * perfkernel and on Linux (refvm.sh, as root: CPU-wide events).
 *
 *  1 tracefs: irq:irq_handler_entry/exit and timer:hrtimer_init, hrtimer_start,
 *    hrtimer_cancel, hrtimer_expire_entry, hrtimer_expire_exit with Linux 6.1's ids, fields
 *    and print fmt, byte for byte.
 *  2 irq:irq_handler_entry/exit sampled on CPU 0 (PERF_SAMPLE_RAW) while this task spins
 *    there (100 ms, longer on a loaded host): the timer's interrupts, named "arch_timer" with the number /proc/interrupts gives
 *    it, the name a __data_loc string after the 16-byte record, the hard-IRQ flag set
 *    (TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF), each entry followed by its exit on that CPU
 *    with ret 1 (IRQ_HANDLED).
 *    A task on CPU 1 woken from CPU 0 takes IPIs there, named "IPI", numbered 1..7 as
 *    Linux's arm64 numbers its IPIs.
 *  3 timer:hrtimer_* on CPU 0 around nanosleep: the sleep's timer is started by this task
 *    with an absolute CLOCK_MONOTONIC expiry 2 ms on, then expires (expire_entry at a now
 *    past it, its function set, then expire_exit); a sleep cut short by a signal cancels its
 *    timer (hrtimer_cancel from this task); a POSIX timer is initialised at timer_create
 *    (CLOCK_MONOTONIC) and started at timer_settime.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include "tracing.h"
#include "tap.h"

static const struct {
	const char *sysev, *text;
} formats[] = {
	{ "irq/irq_handler_entry",
	  "name: irq_handler_entry\n"
	  "ID: 101\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n" },
	{ "irq/irq_handler_exit",
	  "name: irq_handler_exit\n"
	  "ID: 100\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"irq=%d ret=%s\", REC->irq, REC->ret ? \"handled\" : \"unhandled\"\n" },
	{ "timer/hrtimer_init",
	  "name: hrtimer_init\n"
	  "ID: 309\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:clockid_t clockid;\toffset:16;\tsize:4;\tsigned:1;\n"
	  "\tfield:enum hrtimer_mode mode;\toffset:20;\tsize:4;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"hrtimer=%p clockid=%s mode=%s\", REC->hrtimer, __print_symbolic(REC->clockid,"
	  " { 0, \"CLOCK_REALTIME\" }, { 1, \"CLOCK_MONOTONIC\" }, { 7, \"CLOCK_BOOTTIME\" }, { 11, "
	  "\"CLOCK_TAI\" }), __print_symbolic(REC->mode, { HRTIMER_MODE_ABS, \"ABS\" }, { HRTIMER_MOD"
	  "E_REL, \"REL\" }, { HRTIMER_MODE_ABS_PINNED, \"ABS|PINNED\" }, { HRTIMER_MODE_REL_PINNED, "
	  "\"REL|PINNED\" }, { HRTIMER_MODE_ABS_SOFT, \"ABS|SOFT\" }, { HRTIMER_MODE_REL_SOFT, \"REL|"
	  "SOFT\" }, { HRTIMER_MODE_ABS_PINNED_SOFT, \"ABS|PINNED|SOFT\" }, { HRTIMER_MODE_REL_PINNED"
	  "_SOFT, \"REL|PINNED|SOFT\" }, { HRTIMER_MODE_ABS_HARD, \"ABS|HARD\" }, { HRTIMER_MODE_REL_"
	  "HARD, \"REL|HARD\" }, { HRTIMER_MODE_ABS_PINNED_HARD, \"ABS|PINNED|HARD\" }, { HRTIMER_MOD"
	  "E_REL_PINNED_HARD, \"REL|PINNED|HARD\" })\n" },
	{ "timer/hrtimer_start",
	  "name: hrtimer_start\n"
	  "ID: 308\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:s64 expires;\toffset:24;\tsize:8;\tsigned:1;\n"
	  "\tfield:s64 softexpires;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:enum hrtimer_mode mode;\toffset:40;\tsize:4;\tsigned:0;\n"
	  "\tfield:bool was_armed;\toffset:44;\tsize:1;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s was_armed=%d\","
	  " REC->hrtimer, REC->function, (unsigned long long) REC->expires, (unsigned long long) REC-"
	  ">softexpires, __print_symbolic(REC->mode, { HRTIMER_MODE_ABS, \"ABS\" }, { HRTIMER_MODE_RE"
	  "L, \"REL\" }, { HRTIMER_MODE_ABS_PINNED, \"ABS|PINNED\" }, { HRTIMER_MODE_REL_PINNED, \"RE"
	  "L|PINNED\" }, { HRTIMER_MODE_ABS_SOFT, \"ABS|SOFT\" }, { HRTIMER_MODE_REL_SOFT, \"REL|SOFT"
	  "\" }, { HRTIMER_MODE_ABS_PINNED_SOFT, \"ABS|PINNED|SOFT\" }, { HRTIMER_MODE_REL_PINNED_SOF"
	  "T, \"REL|PINNED|SOFT\" }, { HRTIMER_MODE_ABS_HARD, \"ABS|HARD\" }, { HRTIMER_MODE_REL_HARD"
	  ", \"REL|HARD\" }, { HRTIMER_MODE_ABS_PINNED_HARD, \"ABS|PINNED|HARD\" }, { HRTIMER_MODE_RE"
	  "L_PINNED_HARD, \"REL|PINNED|HARD\" }), REC->was_armed\n" },
	{ "timer/hrtimer_cancel",
	  "name: hrtimer_cancel\n"
	  "ID: 305\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"hrtimer=%p\", REC->hrtimer\n" },
	{ "timer/hrtimer_expire_entry",
	  "name: hrtimer_expire_entry\n"
	  "ID: 307\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"hrtimer=%p function=%ps now=%llu\", REC->hrtimer, REC->function, (unsigned lo"
	  "ng long) REC->now\n" },
	{ "timer/hrtimer_expire_exit",
	  "name: hrtimer_expire_exit\n"
	  "ID: 306\n"
	  "format:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"hrtimer=%p\", REC->hrtimer\n" },
};

static void test_formats(void)
{
	static char buf[8192];

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char what[128];
		int n = format_is(formats[i].sysev, formats[i].text, 1, buf, sizeof(buf));

		snprintf(what, sizeof(what), "%s's format as Linux 6.1's", formats[i].sysev);
		tap_check(n > 0, what, "read %d: [%.400s]", n, buf);
	}
}

/* ---- CPU 0's events, sampled with their pid/tid and raw record ---- */

#define RING_PAGES 256
#define MAX_RECS 8192

struct rec {
	uint32_t tid;
	uint32_t size; /* of raw */
	uint8_t raw[96];
};
static struct rec recs[MAX_RECS];
static int nrecs;

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
};

/* A disabled sampling event (period 1) of tracepoint sysev on CPU 0, any task, mmapped. */
static int ring_open(struct ring *r, const char *sysev, int group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)event_id(sysev);
	a.disabled = group < 0;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	r->fd = (int)peo(&a, -1, 0, group, 0);
	if (r->fd < 0)
		return -1;
	if (group >= 0) { /* the leader's ring takes the sibling's samples too */
		r->pg = NULL;
		return ioctl(r->fd, PERF_EVENT_IOC_SET_OUTPUT, group) ? -1 : 0;
	}
	r->pg = mmap(NULL, (RING_PAGES + 1) * 4096ul, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	return r->pg == MAP_FAILED ? -1 : 0;
}

/* All samples of the ring, in order, into recs[]. */
static void ring_drain(struct ring *r)
{
	const uint8_t *d = (const uint8_t *)r->pg + 4096;
	uint64_t size = RING_PAGES * 4096ull, head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pg->data_tail;

	nrecs = 0;
	while (tail < head) {
		uint8_t buf[512];
		struct perf_event_header h;

		for (unsigned i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = d[(tail + i) % size];
		for (unsigned i = 0; i < h.size && i < sizeof(buf); i++)
			buf[i] = d[(tail + i) % size];
		if (!h.size)
			break;
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE || nrecs == MAX_RECS)
			continue;
		struct rec *x = &recs[nrecs++];

		memcpy(&x->tid, buf + 12, 4);
		memcpy(&x->size, buf + 16, 4);
		memset(x->raw, 0, sizeof(x->raw));
		memcpy(x->raw, buf + 20, x->size < sizeof(x->raw) ? x->size : sizeof(x->raw));
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
}

static void ring_close(struct ring *r)
{
	if (r->pg && r->pg != MAP_FAILED)
		munmap(r->pg, (RING_PAGES + 1) * 4096ul);
	close(r->fd);
}

static uint16_t rtype(const struct rec *x)
{
	uint16_t t;

	memcpy(&t, x->raw, 2);
	return t;
}
static int32_t r32(const struct rec *x, int off)
{
	int32_t v;

	memcpy(&v, x->raw + off, 4);
	return v;
}
static uint64_t r64(const struct rec *x, int off)
{
	uint64_t v;

	memcpy(&v, x->raw + off, 8);
	return v;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The number /proc/interrupts shows for the interrupt named name, or -1. */
static int proc_irq(const char *name)
{
	static char buf[8192];
	char *line;

	if (read_file("/proc/interrupts", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t n = strlen(line), k = strlen(name);
		int irq;

		while (n && line[n - 1] == ' ')
			n--;
		if (n > k && !strncmp(line + n - k, name, k) && line[n - k - 1] == ' ' &&
		    sscanf(line, " %d:", &irq) == 1)
			return irq;
	}
	return -1;
}

static void test_irq(void)
{
	struct ring r, rx;
	int id_entry = (int)event_id("irq/irq_handler_entry"), id_exit = (int)event_id("irq/irq_handler_exit");

	if (ring_open(&r, "irq/irq_handler_entry", -1) || ring_open(&rx, "irq/irq_handler_exit", r.fd)) {
		tap_fail("irq:irq_handler_entry/exit on CPU 0", "open/mmap: %s", strerror(errno));
		return;
	}
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	/* 100 ms (25 ticks at 250 Hz) and on until a dozen records are in (a loaded host's guest
	 * takes fewer ticks), at most 5 s */
	uint64_t start = mono_ns();

	while (mono_ns() < start + 100000000ull ||
	       (__atomic_load_n(&r.pg->data_head, __ATOMIC_ACQUIRE) < 12 * 32 &&
		mono_ns() < start + 5000000000ull))
		;
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ring_drain(&r);

	int timer_irq = proc_irq("arch_timer"), ntimer = 0, bad_loc = 0, bad_flags = 0, bad_pair = 0;
	int bad_ret = 0, other_irq = -1, open_irq = -1;
	char why[200] = "";

	for (int i = 0; i < nrecs; i++) {
		const struct rec *x = &recs[i];

		if (rtype(x) == id_entry) {
			uint32_t loc = (uint32_t)r32(x, 12);
			const char *name = (const char *)x->raw + 16;

			if (open_irq >= 0)
				bad_pair++;
			open_irq = r32(x, 8);
			if ((loc & 0xffff) != 16 || (loc >> 16) != strlen(name) + 1 ||
			    x->size < 16 + (loc >> 16)) {
				if (!bad_loc++)
					snprintf(why, sizeof(why), "loc %#x size %u name %.20s", loc, x->size, name);
			}
			if ((x->raw[2] & 0x09) != 0x09)
				bad_flags++;
			if (!strcmp(name, "arch_timer")) {
				ntimer++;
				if (r32(x, 8) != timer_irq)
					other_irq = r32(x, 8);
			}
		} else if (rtype(x) == id_exit) {
			if (open_irq != r32(x, 8))
				bad_pair++;
			else if (open_irq == timer_irq && r32(x, 12) != 1)
				bad_ret++;
			open_irq = -1;
		}
	}
	tap_check(timer_irq > 0, "/proc/interrupts names the timer's interrupt arch_timer", "%d",
		  timer_irq);
	tap_check(ntimer >= 4, "irq_handler_entry: the timer's interrupts on CPU 0, named arch_timer",
		  "%d of %d records", ntimer, nrecs);
	tap_check(other_irq < 0, "irq_handler_entry's irq: /proc/interrupts' number", "%d vs %d",
		  other_irq, timer_irq);
	tap_check(nrecs > 0 && !bad_loc, "irq_handler_entry's name: a __data_loc string after the record",
		  "%s", why);
	tap_check(nrecs > 0 && !bad_flags, "irq_handler_entry's common_flags: hard IRQ, IRQs off",
		  "%d bad", bad_flags);
	tap_check(nrecs > 0 && !bad_pair, "each irq_handler_entry followed by its irq_handler_exit",
		  "%d unpaired", bad_pair);
	tap_check(nrecs > 0 && !bad_ret, "irq_handler_exit of the timer: ret 1 (IRQ_HANDLED)",
		  "%d other", bad_ret);
	ring_close(&rx);
	ring_close(&r);
}

/* A child on CPU 1 woken 20 times through a pipe from CPU 0: the wakeups are IPIs there. */
static void test_ipi(void)
{
	struct ring r;
	int p[2], id_entry = (int)event_id("irq/irq_handler_entry");
	struct perf_event_attr a;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip("irq_handler_entry of IPIs", "one CPU");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id_entry;
	a.disabled = 1;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	r.fd = (int)peo(&a, -1, 1, -1, 0);
	r.pg = r.fd >= 0 ? mmap(NULL, (RING_PAGES + 1) * 4096ul, PROT_READ | PROT_WRITE, MAP_SHARED,
				r.fd, 0)
			 : MAP_FAILED;
	if (r.pg == MAP_FAILED || pipe(p)) {
		tap_fail("irq_handler_entry on CPU 1", "open/mmap: %s", strerror(errno));
		return;
	}
	pid_t c = fork();

	if (c == 0) {
		cpu_set_t set;
		char b;

		CPU_ZERO(&set);
		CPU_SET(1, &set);
		sched_setaffinity(0, sizeof(set), &set);
		close(p[1]);
		while (read(p[0], &b, 1) == 1)
			;
		_exit(0);
	}
	close(p[0]);
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int k = 0; k < 20; k++) {
		struct timespec ms = { 0, 2000000 };

		nanosleep(&ms, NULL);
		if (write(p[1], "x", 1) != 1)
			break;
	}
	close(p[1]);
	waitpid(c, NULL, 0);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r);
	int nipi = 0, bad = 0;

	for (int i = 0; i < nrecs; i++) {
		if (rtype(&recs[i]) != id_entry || strcmp((const char *)recs[i].raw + 16, "IPI"))
			continue;
		nipi++;
		if (r32(&recs[i], 8) < 1 || r32(&recs[i], 8) > 7)
			bad++;
	}
	tap_check(nipi > 0 && !bad,
		  "irq_handler_entry on CPU 1 as a task there is woken: IPIs, numbered 1..7",
		  "%d IPIs (%d numbered otherwise) of %d records", nipi, bad, nrecs);
	ring_close(&r);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_hrtimer(void)
{
	static const char *evs[] = { "timer/hrtimer_init", "timer/hrtimer_start", "timer/hrtimer_cancel",
				     "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit" };
	struct ring r[5];
	int ids[5];

	for (int i = 0; i < 5; i++) {
		ids[i] = (int)event_id(evs[i]);
		if (ring_open(&r[i], evs[i], i ? r[0].fd : -1)) {
			tap_fail("timer:hrtimer_* on CPU 0", "open %s: %s", evs[i], strerror(errno));
			return;
		}
	}
	signal(SIGALRM, on_alarm);
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	uint64_t before = mono_ns();

	ioctl(r[0].fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	struct timespec two_ms = { 0, 2000000 }, long_sleep = { 5, 0 };

	nanosleep(&two_ms, NULL);
	uint64_t after = mono_ns();
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };

	setitimer(ITIMER_REAL, &it, NULL);
	int slept = nanosleep(&long_sleep, NULL);
	int serr = errno;
	timer_t pt;
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM };
	struct itimerspec its = { { 0, 0 }, { 30, 0 } };

	if (timer_create(CLOCK_MONOTONIC, &sev, &pt) == 0) {
		timer_settime(pt, 0, &its, NULL);
		timer_delete(pt);
	}

	ioctl(r[0].fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ring_drain(&r[0]);
	tap_check(slept == -1 && serr == EINTR, "a 5 s nanosleep cut short by SIGALRM", "%d %s",
		  slept, strerror(serr));

	/* the 2 ms sleep: init, start by us, expire_entry, expire_exit of one timer */
	int si = -1, ok_init = 0, ok_entry = 0, ok_exit = 0, ok_cancel = 0;
	uint64_t timer = 0, expires = 0;
	char why[240] = "no hrtimer_start from this task 2 ms on";

	for (int i = 0; i < nrecs && si < 0; i++) {
		const struct rec *x = &recs[i];
		uint64_t soft = r64(x, 32);

		if (rtype(x) == ids[1] && x->tid == me && soft >= before + 2000000 &&
		    soft <= after + 2000000) {
			si = i;
			timer = r64(x, 8);
			expires = r64(x, 24);
		}
	}
	/* a POSIX timer: initialised (CLOCK_MONOTONIC) at timer_create, started at settime
	 * (Linux's nanosleep initialises its on-stack timer without the tracepoint) */
	uint64_t ptimer = 0;

	for (int i = 0; i < nrecs; i++) {
		const struct rec *x = &recs[i];

		if (rtype(x) == ids[0] && x->tid == me && r32(x, 16) == CLOCK_MONOTONIC)
			ptimer = r64(x, 8);
		else if (rtype(x) == ids[1] && x->tid == me && ptimer && r64(x, 8) == ptimer &&
			 r64(x, 32) >= after + 20000000000ull && r64(x, 32) < after + 60000000000ull)
			ok_init = 1;
	}
	for (int i = si + 1; si >= 0 && i < nrecs; i++) {
		const struct rec *x = &recs[i];

		if (r64(x, 8) != timer)
			continue;
		if (rtype(x) == ids[3] && !ok_entry) {
			ok_entry = r64(x, 16) >= expires && r64(x, 16) < expires + 1000000000ull &&
				   r64(x, 24) != 0;
			snprintf(why, sizeof(why), "expires %llu now %llu function %#llx",
				 (unsigned long long)expires, (unsigned long long)r64(x, 16),
				 (unsigned long long)r64(x, 24));
		} else if (rtype(x) == ids[4] && ok_entry) {
			ok_exit = 1;
			break;
		}
	}
	/* the 5 s sleep: started by us, cancelled by us when the signal woke it */
	for (int i = 0; i < nrecs; i++) {
		const struct rec *x = &recs[i];

		if (rtype(x) != ids[1] || x->tid != me || r64(x, 32) < after + 4000000000ull)
			continue;
		for (int j = i + 1; j < nrecs; j++)
			if (rtype(&recs[j]) == ids[2] && recs[j].tid == me && r64(&recs[j], 8) == r64(x, 8))
				ok_cancel = 1;
	}
	tap_check(si >= 0, "hrtimer_start: nanosleep's timer, started by this task to expire 2 ms on (CLOCK_MONOTONIC)",
		  "%d records", nrecs);
	tap_check(ok_init, "hrtimer_init at timer_create(CLOCK_MONOTONIC), then hrtimer_start of that timer at settime",
		  "%s", "none");
	tap_check(ok_entry, "hrtimer_expire_entry of that timer: now past its expiry, its function", "%s", why);
	tap_check(ok_exit, "hrtimer_expire_exit of that timer after its entry", "%s", "none");
	tap_check(ok_cancel, "hrtimer_cancel: the interrupted sleep's timer, by this task", "%s", "none");
	for (int i = 4; i >= 0; i--)
		ring_close(&r[i]);
}

int main(void)
{
	tap_init("t_tp_irq", 120);
	test_formats();
	if (pin_cpu0()) {
		tap_fail("sched_setaffinity to CPU 0", "%s", strerror(errno));
		return tap_done();
	}
	test_irq();
	test_ipi();
	test_hrtimer();
	return tap_done();
}
