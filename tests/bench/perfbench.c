/* perfbench: guest instructions per operation of the perf_event_open(2) paths that matter to a
 * profiler, on whatever kernel it runs on (perfkernel or Linux 6.1, both under QEMU -icount).
 *
 *   perfbench [-s SCALE] [-c]
 *     -s SCALE  multiply every iteration count by SCALE (default 1)
 *     -c        measure with CLOCK_MONOTONIC even when an instructions counter exists
 *
 * Figures, one line each: "NAME: N guest instructions per op"
 *   null_syscall   getppid() through a raw svc (calibration)
 *   clock_gettime_svc   clock_gettime(CLOCK_MONOTONIC) through a raw svc
 *   clock_gettime_vdso  clock_gettime(CLOCK_MONOTONIC) through glibc, which calls the vDSO's
 *                  __kernel_clock_gettime (AT_SYSINFO_EHDR); a "# " line gives vDSO/syscall
 *   read_taskclock read(2) of a task-clock counting event, read_format 0 (8 bytes)
 *   read_instr     read(2) of the instructions counting event (only when it exists)
 *   open_close     perf_event_open(task-clock, pid 0, cpu -1) + close(2)
 *   ctxsw_0ev      one context switch: two threads pinned to one CPU ping-ponging through a
 *                  futex (futex_wake + futex_wait each side); round trip / 2
 *   ctxsw_4sw      the same with 4 software counting events open on each thread
 *                  (task-clock, context-switches, cpu-clock, page-faults)
 *   ctxsw_4hw      the same with 4 hardware counting events on each thread
 *                  (cycles, instructions, cycles, instructions; only with an instructions
 *                  counter)
 *
 * Method.  Under QEMU -icount shift=0 both a PERF_COUNT_HW_INSTRUCTIONS event (exclude_user=0,
 * exclude_kernel=0; it only exists under icount) and CLOCK_MONOTONIC (1 ns per guest
 * instruction) count guest instructions.  null_syscall and the reads use the counter when it
 * opens (else the clock; under icount both give the same figures).  open_close and the
 * context-switch figures always use CLOCK_MONOTONIC: installing a new event into the task's
 * context reschedules that context, which stops the measuring counter for a while (it misses
 * ~770 instructions per open on Linux 6.1, ~1,050 on perfkernel), a measuring counter would
 * itself be an event switched in and out, and the clock counts both threads and the scheduler
 * between them.  QEMU's icount is global: with several vCPUs it
 * also counts what other (non-idle) vCPUs execute, so run with one CPU for clean figures.
 * Each figure is (cost(N ops) - cost(0 ops)) / N, the minimum over REPS repetitions; the few
 * loop instructions per iteration stay in.  Without icount the unit is host-timed ns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REPS 5

static int hw_fd = -1;   /* the measuring instructions counter, or -1: clock */
static int use_clock;    /* -c */
static long scale = 1;

static int ev_open(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.read_format = 0;
	a.disabled = 0;
	a.exclude_user = 0;
	a.exclude_kernel = 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rd(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		fprintf(stderr, "perfbench: read(fd %d): %s\n", fd, strerror(errno));
		exit(1);
	}
	return v;
}

/* the single-thread meter */
static uint64_t meter(void)
{
	return hw_fd >= 0 ? rd(hw_fd) : clock_ns();
}

static long raw_getppid(void)
{
	register long x8 __asm__("x8") = __NR_getppid;
	register long x0 __asm__("x0");

	__asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
}

static long raw_clock_gettime(clockid_t clk, struct timespec *ts)
{
	register long x8 __asm__("x8") = __NR_clock_gettime;
	register long x0 __asm__("x0") = clk;
	register long x1 __asm__("x1") = (long)ts;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x8) : "memory");
	return x0;
}

/* ---- single-thread operations ---- */
enum op { OP_GETPPID, OP_READ, OP_OPENCLOSE, OP_GETTIME_SVC, OP_GETTIME_VDSO };
static int op_fd = -1;

static void run_op(enum op op, long n)
{
	uint64_t v;

	for (long i = 0; i < n; i++) {
		switch (op) {
		case OP_GETPPID:
			raw_getppid();
			break;
		case OP_GETTIME_SVC: {
			struct timespec ts;

			raw_clock_gettime(CLOCK_MONOTONIC, &ts);
			break;
		}
		case OP_GETTIME_VDSO: {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			break;
		}
		case OP_READ:
			if (read(op_fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
				fprintf(stderr, "perfbench: read: %s\n", strerror(errno));
				exit(1);
			}
			break;
		case OP_OPENCLOSE: {
			int fd = ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

			if (fd < 0) {
				fprintf(stderr, "perfbench: perf_event_open: %s\n", strerror(errno));
				exit(1);
			}
			close(fd);
			break;
		}
		}
	}
}

static double measure(enum op op, long n)
{
	double best = -1;
	int saved = hw_fd;

	/* Opening an event into this task's context reschedules the context (Linux's
	 * ctx_resched), so the measuring counter stops for part of perf_event_open: under icount
	 * the clock counts the same instructions and misses none. */
	if (op == OP_OPENCLOSE && hw_fd >= 0)
		hw_fd = -1;

	run_op(op, n / 10 + 1); /* warm up */
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = meter();
		run_op(op, 0);
		uint64_t t1 = meter();
		uint64_t t2 = meter();
		run_op(op, n);
		uint64_t t3 = meter();
		double per = ((double)(t3 - t2) - (double)(t1 - t0)) / (double)n;

		if (best < 0 || per < best)
			best = per;
	}
	hw_fd = saved;
	return best;
}

/* ---- context switches: futex ping-pong on one CPU ---- */
static _Atomic int turn;     /* 0: main runs, 1: partner runs */
static _Atomic int stage;    /* partner's progress through the setup */
static long pp_rounds;
static int pp_events;        /* 0, 4 software, 4 hardware (per thread) */
enum { EV_NONE, EV_SW, EV_HW };

static long futex(_Atomic int *addr, int op, int val)
{
	return syscall(SYS_futex, (int *)addr, op, val, NULL, NULL, 0);
}

static void pin_cpu0(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	if (sched_setaffinity(0, sizeof(s), &s) != 0) {
		fprintf(stderr, "perfbench: sched_setaffinity: %s\n", strerror(errno));
		exit(1);
	}
}

static int open_set(int kind, int *fds)
{
	static const uint64_t sw[4] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
				       PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_PAGE_FAULTS};
	static const uint64_t hw[4] = {PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
				       PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS};

	for (int i = 0; i < 4; i++)
		fds[i] = -1;
	if (kind == EV_NONE)
		return 0;
	for (int i = 0; i < 4; i++) {
		fds[i] = kind == EV_SW ? ev_open(PERF_TYPE_SOFTWARE, sw[i])
				       : ev_open(PERF_TYPE_HARDWARE, hw[i]);
		if (fds[i] < 0) {
			fprintf(stderr, "perfbench: perf_event_open (set %d, #%d): %s\n", kind, i,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void close_set(int *fds)
{
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void ping_rounds(long n)
{
	for (long i = 0; i < n; i++) {
		atomic_store(&turn, 1);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
		while (atomic_load(&turn) == 1)
			futex(&turn, FUTEX_WAIT_PRIVATE, 1);
	}
}

static void pong_rounds(long n)
{
	for (long i = 0; i < n; i++) {
		while (atomic_load(&turn) == 0)
			futex(&turn, FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&turn, 0);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
}

static void *partner(void *arg)
{
	int fds[4];
	int ok;

	(void)arg;
	pin_cpu0();
	ok = open_set(pp_events, fds) == 0;
	atomic_store(&stage, ok ? 1 : -1);
	if (ok)
		pong_rounds(pp_rounds);
	close_set(fds);
	return NULL;
}

/* one configuration: rounds per repetition, REPS repetitions; returns per switch or -1 */
static double measure_ctxsw(int kind, long rounds)
{
	pthread_t th;
	int fds[4];
	double best = -1;
	long warm = rounds / 10 + 1;

	if (open_set(kind, fds) != 0) {
		close_set(fds);
		return -1;
	}
	atomic_store(&turn, 0);
	atomic_store(&stage, 0);
	pp_events = kind;
	pp_rounds = warm + (long)REPS * rounds;
	if (pthread_create(&th, NULL, partner, NULL) != 0) {
		fprintf(stderr, "perfbench: pthread_create failed\n");
		exit(1);
	}
	while (atomic_load(&stage) == 0)
		sched_yield();
	if (atomic_load(&stage) < 0) {
		pthread_join(th, NULL);
		close_set(fds);
		return -1;
	}
	ping_rounds(warm);
	uint64_t cs0 = kind == EV_SW ? rd(fds[1]) : 0;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = clock_ns();
		uint64_t t1 = clock_ns();
		ping_rounds(rounds);
		uint64_t t2 = clock_ns();
		double per = ((double)(t2 - t1) - (double)(t1 - t0)) / (2.0 * (double)rounds);

		if (best < 0 || per < best)
			best = per;
	}
	if (kind == EV_SW) /* sanity: the main thread really blocks once per round */
		printf("# ctxsw check: main thread context-switches per round: %.2f\n",
		       (double)(rd(fds[1]) - cs0) / ((double)REPS * (double)rounds));
	pthread_join(th, NULL);
	close_set(fds);
	return best;
}

static void report(const char *name, double v)
{
	if (v < 0)
		printf("%s: n/a\n", name);
	else
		printf("%s: %.1f guest instructions per op\n", name, v);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "s:c")) != -1) {
		switch (opt) {
		case 's':
			scale = strtol(optarg, NULL, 0);
			if (scale < 1)
				scale = 1;
			break;
		case 'c':
			use_clock = 1;
			break;
		default:
			fprintf(stderr, "usage: perfbench [-s SCALE] [-c]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pin_cpu0();

	int instr = ev_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	if (instr >= 0 && !use_clock)
		hw_fd = instr;
	printf("# perfbench: meter %s; open_close, ctxsw: CLOCK_MONOTONIC%s\n",
	       hw_fd >= 0 ? "instructions counter (user+kernel)" : "CLOCK_MONOTONIC",
	       instr >= 0 ? "" : " (no instructions counter: not under icount? then units are ns)");

	report("null_syscall", measure(OP_GETPPID, 20000 * scale));
	double gt_svc = measure(OP_GETTIME_SVC, 20000 * scale);
	double gt_vdso = measure(OP_GETTIME_VDSO, 20000 * scale);

	report("clock_gettime_svc", gt_svc);
	report("clock_gettime_vdso", gt_vdso);
	printf("# clock_gettime(CLOCK_MONOTONIC): vDSO %.0f, syscall %.0f per call: vDSO/syscall %.3f\n",
	       gt_vdso, gt_svc, gt_svc > 0 ? gt_vdso / gt_svc : 0.0);

	op_fd = ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	if (op_fd < 0) {
		fprintf(stderr, "perfbench: task-clock: %s\n", strerror(errno));
		report("read_taskclock", -1);
	} else {
		report("read_taskclock", measure(OP_READ, 10000 * scale));
		close(op_fd);
	}
	if (instr >= 0) {
		op_fd = instr;
		report("read_instr", measure(OP_READ, 10000 * scale));
	}
	int probe = ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	if (probe >= 0) {
		close(probe);
		report("open_close", measure(OP_OPENCLOSE, 2000 * scale));
	} else {
		report("open_close", -1);
	}

	/* no measuring counter left open during the switch figures */
	if (instr >= 0)
		close(instr);
	hw_fd = -1;
	report("ctxsw_0ev", measure_ctxsw(EV_NONE, 2000 * scale));
	report("ctxsw_4sw", measure_ctxsw(EV_SW, 2000 * scale));
	if (instr >= 0)
		report("ctxsw_4hw", measure_ctxsw(EV_HW, 2000 * scale));
	return 0;
}
