/* t_perf_sample: perf sampling and the mmap ring buffer (perf_event_open(2), Linux 6.1 ABI).
 * Must run as root. Every event samples on cycles (PERF_COUNT_HW_CPU_CYCLES, the only QEMU PMU
 * event whose overflow is reliable; see ../shared/tools/perf-abi-notes.md beside the
 * repository) unless stated.
 *
 *  1 layout   IP|TID|TIME|ID|STREAM_ID|CPU|PERIOD, read_format ID: size, misc USER, pid/tid, id,
 *             stream_id, period 100000, cpu < ncpu, time increasing.
 *  2 ip       exclude_kernel=1 samples on a busy asm loop: >= 90% of IPs inside the loop.
 *  3 threads  per-CPU inherit=1 events with two busy threads: pid == getpid(), tid in {main, thread}, both seen.
 *  4 sideband per-CPU comm/mmap2/task/comm_exec/sample_id_all/inherit + enable_on_exec on a child that
 *             re-execs this program (which forks): COMM(EXEC), MMAP2 of the text, FORK, EXIT,
 *             sample_id_all trailers.
 *  5 lost     1+1 pages, period 10000, not read: PERF_RECORD_LOST (lost > 0), read_format LOST.
 *  6 output   PERF_EVENT_IOC_SET_OUTPUT of a second event into the first's ring: both ids there.
 *  7 poll     wakeup_events=1: POLLIN within 3 s of samples; POLLHUP after the child exits.
 *  8 chain    IP|CALLCHAIN through asm frames a -> b -> c -> loop (each with a frame record):
 *             PERF_CONTEXT_USER, loop ip, return addresses in c, b, a for >= 80% of samples.
 *  9 freq     freq=1 sample_freq=1000 over 0.5 s busy: 250..750 samples, periods vary.
 * 10 cpuclock SW CPU_CLOCK, period 1 ms, ~200 ms busy: the median gap between samples is 1 ms, and
 *    the samples are within 50% of cpu time / 1 ms, less the time in gaps over 3 ms (host stalls).
 * 11 throttle period 1000 on cycles: the program completes, records are well-formed
 *             (THROTTLE/UNTHROTTLE counted, not required).
 *
 * The ring is read the way perf does: data_head with an acquire load, records copied out (they
 * may wrap), data_tail written back with a release store.
 * The busy loop and the callchain frames are assembly so that their address ranges are exact
 * (the C flags -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer are set in module.mk).
 *
 * Passes on Linux 6.1 (Debian 6.1.0-56-arm64), 2026-11-29, 23 pass 0 fail 0 skip, ~3.5 s:
 *   sh /work/shared/tools/refvm.sh --smp 4 --overlay DIR -- /bin/t_perf_sample
 *   sh /work/shared/tools/refvm.sh --smp 4 --icount --overlay DIR -- /bin/t_perf_sample
 * (DIR/bin/t_perf_sample = build/user/bin/t_perf_sample).
 *
 * Linux/QEMU behaviour the checks rely on (the kernel under test must match):
 *  - Linux refuses mmap of an inherit=1 event opened with cpu=-1 (EINVAL): the threads and
 *    side-band checks open one event per CPU, each with its own ring, as perf record does.
 *  - SET_OUTPUT needs the target already mmapped (Linux: EINVAL otherwise), same task/cpu.
 *  - QEMU notices a cycle counter overflow late, often at the next exception-level change: with
 *    a syscall every ~0.1 ms, a third of exclude_kernel samples get a kernel ip (misc KERNEL)
 *    on Linux too. The measured loops therefore make no syscalls (sl_loop calibrated once;
 *    our kernel has no vDSO, so clock_gettime is a syscall there). A kernel ip must come with
 *    misc KERNEL, a user ip with misc USER.
 *  - Linux under plain TCG lowers perf_event_max_sample_rate at run time (100000 -> 3250 seen)
 *    and then throttles period-1000 cycles (~76 THROTTLE/UNTHROTTLE in 0.3 s); with -icount it
 *    lowers it less (100000 or 57000 seen) and throttles as much (~77). Check 11 prints the
 *    counts and does not require them.
 *  - enable_on_exec: COMM(EXEC) comes before the MMAP2 of the new text; the FORK record's
 *    sample_id_all trailer is the forking task's, so it is not checked.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

/* ---- assembly: busy loop and a known call chain ----
 * sl_loop(n): n iterations of {add, subs, b.ne}; [sl_loop, sl_loop_end) is its whole code.
 * cs_a(n) -> cs_b(n) -> cs_c(n) -> cs_loop(n): each pushes a frame record (stp x29, x30; mov x29,
 * sp) so an fp unwinder sees loop pc, then return addresses inside c, b, a. */
void sl_loop(uint64_t n);
void cs_a(uint64_t n);
extern const char sl_loop_end[], cs_a_end[], cs_b[], cs_b_end[], cs_c[], cs_c_end[],
	cs_loop[], cs_loop_end[];
__asm__(".text\n"
	".global sl_loop\n.type sl_loop, %function\n"
	"sl_loop:\n"
	"	cbz x0, 2f\n"
	"1:	add x9, x9, #1\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"2:	ret\n"
	".size sl_loop, .-sl_loop\n"
	".global sl_loop_end\nsl_loop_end:\n"
	"	nop\n"
	".global cs_a\n.type cs_a, %function\n"
	"cs_a:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	bl cs_b\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size cs_a, .-cs_a\n"
	".global cs_a_end\ncs_a_end:\n"
	"	nop\n"
	".global cs_b\n.type cs_b, %function\n"
	"cs_b:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	bl cs_c\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size cs_b, .-cs_b\n"
	".global cs_b_end\ncs_b_end:\n"
	"	nop\n"
	".global cs_c\n.type cs_c, %function\n"
	"cs_c:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	bl cs_loop\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size cs_c, .-cs_c\n"
	".global cs_c_end\ncs_c_end:\n"
	"	nop\n"
	".global cs_loop\n.type cs_loop, %function\n"
	"cs_loop:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	cbz x0, 2f\n"
	"1:	add x9, x9, #1\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"2:	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size cs_loop, .-cs_loop\n"
	".global cs_loop_end\ncs_loop_end:\n"
	"	nop\n");

#define IN(p, lo, hi) ((uint64_t)(p) >= (uint64_t)(uintptr_t)(lo) && (uint64_t)(p) < (uint64_t)(uintptr_t)(hi))

/* ---- helpers ---- */
static const char *en(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "?";
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t cputime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* busy in sl_loop for about ms milliseconds of wall time */
static void busy_ms(unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	while (now_ns() < end)
		sl_loop(100000);
}

/* sl_loop iterations per ms (calibrated in main), so that measured regions need no syscalls
 * (our kernel has no vDSO: clock_gettime is a syscall there) */
static uint64_t iters_per_ms = 1000;

static void calibrate(void)
{
	uint64_t best = ~0ull;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns();
		sl_loop(1000000);
		uint64_t dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	iters_per_ms = best ? 1000000ull * 1000000ull / best : 1000000;
	if (!iters_per_ms)
		iters_per_ms = 1;
}

/* about ms milliseconds in sl_loop without a syscall */
static void spin_ms(unsigned ms)
{
	sl_loop(iters_per_ms * ms);
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config, uint64_t period,
		      uint64_t st)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->sample_period = period;
	a->sample_type = st;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static void cycles_attr(struct perf_event_attr *a, uint64_t period, uint64_t st)
{
	attr_init(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, period, st);
}

/* ---- the ring (tools/lib/sys_perf.h) ---- */
typedef void (*rec_fn)(const struct perf_event_header *h, void *ctx);

static uint64_t rec_buf[65536 / 8];
static int ring_bad; /* malformed records seen */

/* Hand every complete record to fn and consume it; return how many. */
static int ring_drain(struct perf_ring *r, rec_fn fn, void *ctx)
{
	unsigned int bad = r->bad;
	int n = perf_ring_read(r, fn, ctx, rec_buf, sizeof(rec_buf), 1);

	ring_bad += (int)(r->bad - bad);
	return n;
}

/* open (type/config from a) on pid/cpu and map npages; fd or -1 with errno, FAIL printed */
static int open_map(struct perf_event_attr *a, int pid, int cpu, struct perf_ring *r, unsigned npages,
		    const char *what)
{
	int fd = (int)sys_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		tap_fail(what, "perf_event_open: errno %d (%s)", e, en(e));
		errno = e;
		return -1;
	}
	if (perf_ring_map(r, fd, npages) != 0) {
		int e = errno;
		tap_fail(what, "mmap %u+1 pages: errno %d (%s)", npages, e, en(e));
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int ncpu;

/* perf record style: one event per CPU (pid, cpu=i), each with its own ring (Linux refuses
 * mmap of an inherit=1 event with cpu=-1). Returns the number opened (all or nothing). */
#define MAXCPU 16
struct pcpu {
	int n, fd[MAXCPU];
	struct perf_ring r[MAXCPU];
};

static int pcpu_open(struct pcpu *pc, struct perf_event_attr *a, int pid, unsigned npages, const char *what)
{
	int n = ncpu < MAXCPU ? ncpu : MAXCPU;
	pc->n = 0;
	for (int i = 0; i < n; i++) {
		char w[200];
		snprintf(w, sizeof(w), "%s (cpu %d)", what, i);
		int fd = open_map(a, pid, i, &pc->r[i], npages, w);
		if (fd < 0) {
			for (int j = 0; j < pc->n; j++) {
				perf_ring_unmap(&pc->r[j]);
				close(pc->fd[j]);
			}
			pc->n = 0;
			return 0;
		}
		pc->fd[i] = fd;
		pc->n++;
	}
	return pc->n;
}

static void pcpu_ioctl(struct pcpu *pc, unsigned long req)
{
	for (int i = 0; i < pc->n; i++)
		ioctl(pc->fd[i], req, 0);
}

static void pcpu_drain(struct pcpu *pc, rec_fn fn, void *ctx)
{
	for (int i = 0; i < pc->n; i++)
		ring_drain(&pc->r[i], fn, ctx);
}

static void pcpu_close(struct pcpu *pc)
{
	for (int i = 0; i < pc->n; i++) {
		perf_ring_unmap(&pc->r[i]);
		close(pc->fd[i]);
	}
	pc->n = 0;
}

/* ---- 1 layout ---- */
struct s1 {
	int n, user, bad_size, bad_misc, bad_pid, bad_id, bad_stream, bad_period, bad_cpu, bad_time, other;
	uint64_t id, last_time;
	int pid, tid;
	char first_err[200];
};

static void s1_rec(const struct perf_event_header *h, void *ctx)
{
	struct s1 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE) {
		s->other++;
		return;
	}
	s->n++;
	const uint64_t *p = (const uint64_t *)(h + 1);
	if (h->size != 8 + 7 * 8) {
		if (!s->bad_size++)
			snprintf(s->first_err, sizeof(s->first_err), "size %u want 64", h->size);
		return;
	}
	uint64_t ip = p[0];
	uint32_t pid = (uint32_t)p[1], tid = (uint32_t)(p[1] >> 32);
	uint64_t time = p[2], id = p[3], stream = p[4];
	uint32_t cpu = (uint32_t)p[5], res = (uint32_t)(p[5] >> 32);
	uint64_t period = p[6];
	/* skid: an exclude_kernel overflow can be taken after entering EL1; Linux then reports a
	 * kernel ip with misc KERNEL. A user ip must say USER, a kernel ip KERNEL, and most are user. */
	unsigned mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	int kip = ip >= 0xffff000000000000ull;
	if (mode == PERF_RECORD_MISC_USER && !kip)
		s->user++;
	else if (!(mode == PERF_RECORD_MISC_KERNEL && kip) && !s->bad_misc++)
		snprintf(s->first_err, sizeof(s->first_err), "misc %#x ip %#llx", h->misc, (unsigned long long)ip);
	if (((int)pid != s->pid || (int)tid != s->tid) && !s->bad_pid++)
		snprintf(s->first_err, sizeof(s->first_err), "pid/tid %u/%u want %d/%d", pid, tid, s->pid, s->tid);
	if (id != s->id && !s->bad_id++)
		snprintf(s->first_err, sizeof(s->first_err), "id %llu want %llu", (unsigned long long)id,
			 (unsigned long long)s->id);
	if (stream != s->id && !s->bad_stream++)
		snprintf(s->first_err, sizeof(s->first_err), "stream_id %llu want %llu",
			 (unsigned long long)stream, (unsigned long long)s->id);
	if (period != 100000 && !s->bad_period++)
		snprintf(s->first_err, sizeof(s->first_err), "period %llu", (unsigned long long)period);
	if ((cpu >= (uint32_t)ncpu || res != 0) && !s->bad_cpu++)
		snprintf(s->first_err, sizeof(s->first_err), "cpu %u res %u (ncpu %d)", cpu, res, ncpu);
	if (s->n > 1 && time <= s->last_time && !s->bad_time++)
		snprintf(s->first_err, sizeof(s->first_err), "time %llu after %llu", (unsigned long long)time,
			 (unsigned long long)s->last_time);
	s->last_time = time;
}

static void t_layout(void)
{
	const char *w = "layout: IP|TID|TIME|ID|STREAM_ID|CPU|PERIOD sample records";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD);
	a.read_format = PERF_FORMAT_ID;
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	struct s1 s = { .pid = getpid(), .tid = gettid_() };
	if (ioctl(fd, PERF_EVENT_IOC_ID, &s.id) != 0) {
		tap_fail(w, "PERF_EVENT_IOC_ID: errno %d", errno);
		goto out;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		spin_ms(20);
		ring_drain(&r, s1_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s1_rec, &s);
	uint64_t rv[2] = { 0, 0 };
	ssize_t rn = read(fd, rv, sizeof(rv));
	CHECK(rn == 16 && rv[1] == s.id, "layout: read_format ID gives {value, id}",
	      "read %zd id %llu want %llu", rn, (unsigned long long)rv[1], (unsigned long long)s.id);
	int bad = s.bad_size + s.bad_misc + s.bad_pid + s.bad_id + s.bad_stream + s.bad_period + s.bad_cpu +
		  s.bad_time;
	CHECK(s.n >= 10 && bad == 0 && s.user * 10 >= s.n * 9, w,
	      "%d samples (%d user, %d other records); bad: size %d misc %d pid %d id %d stream %d period %d cpu %d "
	      "time %d; first: %s",
	      s.n, s.user, s.other, s.bad_size, s.bad_misc, s.bad_pid, s.bad_id, s.bad_stream, s.bad_period,
	      s.bad_cpu, s.bad_time, s.first_err);
out:
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 2 ip ---- */
struct s2 {
	int n, in;
	uint64_t first_out;
};

static void s2_rec(const struct perf_event_header *h, void *ctx)
{
	struct s2 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	uint64_t ip = *(const uint64_t *)(h + 1);
	s->n++;
	if (IN(ip, sl_loop, sl_loop_end))
		s->in++;
	else if (!s->first_out)
		s->first_out = ip;
}

static void t_ip(void)
{
	const char *w = "ip: >= 90% of exclude_kernel samples inside the busy loop";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP);
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	struct s2 s = { 0 };
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		spin_ms(20);
		ring_drain(&r, s2_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s2_rec, &s);
	CHECK(s.n >= 10 && s.in * 10 >= s.n * 9, w, "%d of %d samples in [%p,%p); first outside %#llx", s.in,
	      s.n, (void *)sl_loop, (void *)sl_loop_end, (unsigned long long)s.first_out);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 3 threads ---- */
struct s3 {
	int n, bad, main_n, thr_n;
	int pid, main_tid, thr_tid;
	uint32_t bad_pid, bad_tid;
};

static void s3_rec(const struct perf_event_header *h, void *ctx)
{
	struct s3 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	const uint64_t *p = (const uint64_t *)(h + 1);
	uint32_t pid = (uint32_t)p[1], tid = (uint32_t)(p[1] >> 32);
	s->n++;
	if ((int)pid == s->pid && (int)tid == s->main_tid)
		s->main_n++;
	else if ((int)pid == s->pid && (int)tid == s->thr_tid)
		s->thr_n++;
	else if (!s->bad++) {
		s->bad_pid = pid;
		s->bad_tid = tid;
	}
}

static volatile int thr_tid_v;
static void *thr_main(void *arg)
{
	thr_tid_v = gettid_();
	busy_ms(300);
	return NULL;
}

static void t_threads(void)
{
	const char *w = "threads: inherit=1 per-CPU samples carry pid and both tids";
	struct perf_event_attr a;
	struct pcpu pc;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	a.inherit = 1;
	a.disabled = 0;
	if (!pcpu_open(&pc, &a, 0, 16, w))
		return;
	struct s3 s = { .pid = getpid(), .main_tid = gettid_() };
	pthread_t th;
	if (pthread_create(&th, NULL, thr_main, NULL) != 0) {
		tap_fail(w, "pthread_create failed");
		goto out;
	}
	/* thr_tid_v is set at thread start; wait for it before classifying samples */
	while (!thr_tid_v)
		sched_yield();
	s.thr_tid = thr_tid_v;
	for (int i = 0; i < 14; i++) {
		busy_ms(20);
		pcpu_drain(&pc, s3_rec, &s);
	}
	pthread_join(th, NULL);
	pcpu_ioctl(&pc, PERF_EVENT_IOC_DISABLE);
	pcpu_drain(&pc, s3_rec, &s);
	CHECK(s.bad == 0 && s.main_n > 0 && s.thr_n > 0, w,
	      "%d samples: main tid %d: %d, thread tid %d: %d, other %d (first %u/%u, pid %d)", s.n,
	      s.main_tid, s.main_n, s.thr_tid, s.thr_n, s.bad, s.bad_pid, s.bad_tid, s.pid);
out:
	pcpu_close(&pc);
}

/* ---- 4 side-band ---- */
static char exe_path[4096];

struct s4 {
	int child, gchild;
	int comm_ok, comm_n, mmap_ok, mmap_n, exit_ok, fork_ok, trailer_bad, n;
	char comm_seen[64], mmap_seen[300], err[200];
	uint32_t fork_pid, fork_ppid;
	const char *want_comm;
};

/* sample_id_all trailer for sample_type TID|TIME: last 16 bytes {pid, tid, time} */
static void s4_trailer(struct s4 *s, const struct perf_event_header *h, int want)
{
	const unsigned char *b = (const unsigned char *)h;
	uint32_t pid, tid;
	memcpy(&pid, b + h->size - 16, 4);
	memcpy(&tid, b + h->size - 12, 4);
	if (((int)pid != want || (int)tid != want) && !s->trailer_bad++)
		snprintf(s->err, sizeof(s->err), "type %u trailer pid/tid %u/%u want %d", h->type, pid, tid, want);
}

static void s4_rec(const struct perf_event_header *h, void *ctx)
{
	struct s4 *s = ctx;
	const unsigned char *b = (const unsigned char *)h;
	uint32_t pid, tid;
	s->n++;
	switch (h->type) {
	case PERF_RECORD_COMM: {
		memcpy(&pid, b + 8, 4);
		memcpy(&tid, b + 12, 4);
		const char *comm = (const char *)b + 16;
		s->comm_n++;
		snprintf(s->comm_seen, sizeof(s->comm_seen), "%.16s misc %#x pid %u", comm, h->misc, pid);
		if ((int)pid == s->child && (int)tid == s->child && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    strncmp(comm, s->want_comm, 15) == 0) {
			s->comm_ok++;
			s4_trailer(s, h, s->child);
		}
		break;
	}
	case PERF_RECORD_MMAP2: {
		uint64_t addr, len;
		uint32_t prot;
		memcpy(&pid, b + 8, 4);
		memcpy(&addr, b + 16, 8);
		memcpy(&len, b + 24, 8);
		memcpy(&prot, b + 64, 4);
		const char *fn = (const char *)b + 72;
		s->mmap_n++;
		if (strcmp(fn, exe_path) == 0 || !s->mmap_seen[0])
			snprintf(s->mmap_seen, sizeof(s->mmap_seen), "%.200s prot %#x pid %u addr %#llx len %#llx",
				 fn, prot, pid, (unsigned long long)addr, (unsigned long long)len);
		if ((int)pid == s->child && (prot & PROT_EXEC) && strcmp(fn, exe_path) == 0 &&
		    IN(sl_loop, addr, addr + len)) {
			s->mmap_ok++;
			s4_trailer(s, h, s->child);
		}
		break;
	}
	case PERF_RECORD_FORK: {
		uint32_t ppid, ptid;
		memcpy(&pid, b + 8, 4);
		memcpy(&ppid, b + 12, 4);
		memcpy(&tid, b + 16, 4);
		memcpy(&ptid, b + 20, 4);
		if ((int)ppid == s->child && (int)ptid == s->child && pid == tid && (int)pid != s->child) {
			s->fork_ok++;
			s->fork_pid = pid;
		}
		break;
	}
	case PERF_RECORD_EXIT: {
		memcpy(&pid, b + 8, 4);
		memcpy(&tid, b + 16, 4);
		if ((int)pid == s->child && (int)tid == s->child) {
			s->exit_ok++;
			s4_trailer(s, h, s->child);
		}
		break;
	}
	default:
		break;
	}
}

/* the re-exec'd child: fork a short-lived grandchild, spin a little, exit */
static int sb_child(void)
{
	pid_t g = fork();
	if (g == 0)
		_exit(0);
	if (g > 0)
		waitpid(g, NULL, 0);
	busy_ms(20);
	return 0;
}

static void t_sideband(void)
{
	const char *w = "sideband";
	int go[2], ready[2];
	if (pipe(go) || pipe(ready)) {
		tap_fail(w, "pipe: errno %d", errno);
		return;
	}
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(go[1]);
		close(ready[0]);
		prctl(PR_SET_NAME, "sb-waiting");
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		if (read(go[0], &x, 1) != 1)
			_exit(2);
		char *argv[] = { exe_path, "--sb-child", NULL };
		execv(exe_path, argv);
		_exit(127);
	}
	if (c < 0) {
		tap_fail(w, "fork: errno %d", errno);
		return;
	}
	close(go[0]);
	close(ready[1]);
	char x;
	if (read(ready[0], &x, 1) != 1) {
		tap_fail(w, "child not ready");
		return;
	}
	struct perf_event_attr a;
	struct pcpu pc;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	a.comm = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.task = 1;
	a.comm_exec = 1;
	a.sample_id_all = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	int ok = pcpu_open(&pc, &a, c, 16, "sideband: per-CPU open+mmap on the child");
	if (write(go[1], "g", 1) != 1) {
	}
	close(go[1]);
	close(ready[0]);
	int st = 0;
	waitpid(c, &st, 0);
	if (!ok)
		return;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sideband: child re-exec ran", "status %#x", st);
	const char *base = strrchr(exe_path, '/');
	struct s4 s = { .child = c, .want_comm = base ? base + 1 : exe_path };
	pcpu_drain(&pc, s4_rec, &s);
	CHECK(s.comm_ok == 1, "sideband: COMM with COMM_EXEC, the child's pid/tid and the new comm",
	      "%d matching of %d COMM (want comm %s; last %s)", s.comm_ok, s.comm_n, s.want_comm, s.comm_seen);
	CHECK(s.mmap_ok >= 1, "sideband: MMAP2 of the executable's text (filename, PROT_EXEC, covers code)",
	      "%d matching of %d MMAP2 (want %s, code %p; seen %s)", s.mmap_ok, s.mmap_n, exe_path,
	      (void *)sl_loop, s.mmap_seen);
	CHECK(s.fork_ok == 1, "sideband: FORK record for the child's fork (ppid/ptid = child)", "%d matching",
	      s.fork_ok);
	CHECK(s.exit_ok == 1, "sideband: EXIT record with the child's pid/tid", "%d matching of %d records",
	      s.exit_ok, s.n);
	CHECK(s.trailer_bad == 0 && (s.comm_ok + s.mmap_ok + s.exit_ok) > 0,
	      "sideband: sample_id_all trailers carry the child's pid/tid", "%d bad: %s", s.trailer_bad, s.err);
	pcpu_close(&pc);
}

/* ---- 5 lost ---- */
struct s5 {
	int samples, lost_recs, other;
	uint64_t lost, id;
	int bad_id;
};

static void s5_rec(const struct perf_event_header *h, void *ctx)
{
	struct s5 *s = ctx;
	const uint64_t *p = (const uint64_t *)(h + 1);
	if (h->type == PERF_RECORD_SAMPLE)
		s->samples++;
	else if (h->type == PERF_RECORD_LOST) {
		s->lost_recs++;
		s->lost += p[1];
		if (p[0] != s->id)
			s->bad_id++;
	} else
		s->other++;
}

static void t_lost(void)
{
	const char *w = "lost: PERF_RECORD_LOST on a 1+1 page ring";
	struct perf_event_attr a;
	struct perf_ring r;
	int have_lost_fmt = 1;
	cycles_attr(&a, 10000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD);
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		have_lost_fmt = 0;
		a.read_format = PERF_FORMAT_ID;
		fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		tap_fail(w, "perf_event_open: errno %d (%s)", errno, en(errno));
		return;
	}
	if (perf_ring_map(&r, fd, 1) != 0) {
		tap_fail(w, "mmap 1+1 pages: errno %d (%s)", errno, en(errno));
		close(fd);
		return;
	}
	struct s5 s = { 0 };
	ioctl(fd, PERF_EVENT_IOC_ID, &s.id);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	busy_ms(300); /* not read: the ring fills */
	ring_drain(&r, s5_rec, &s);
	busy_ms(100); /* room again: the next output reports what was lost */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s5_rec, &s);
	printf("# lost: %d LOST records, lost sum %llu, %d samples kept\n", s.lost_recs, (unsigned long long)s.lost,
	       s.samples);
	CHECK(s.lost_recs > 0 && s.lost > 0 && s.bad_id == 0, w,
	      "%d LOST records, lost sum %llu, bad id %d, %d samples, %d other", s.lost_recs,
	      (unsigned long long)s.lost, s.bad_id, s.samples, s.other);
	if (have_lost_fmt) {
		uint64_t v[3] = { 0, 0, 0 };
		ssize_t n = read(fd, v, sizeof(v));
		CHECK(n == 24 && v[1] == s.id && v[2] > 0, "lost: read_format ID|LOST reports lost > 0",
		      "read %zd: value %llu id %llu lost %llu", n, (unsigned long long)v[0],
		      (unsigned long long)v[1], (unsigned long long)v[2]);
	} else {
		tap_skip("lost: read_format ID|LOST reports lost > 0", "PERF_FORMAT_LOST rejected (EINVAL)");
	}
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 6 SET_OUTPUT ---- */
struct s6 {
	uint64_t id1, id2;
	int n1, n2, other;
};

static void s6_rec(const struct perf_event_header *h, void *ctx)
{
	struct s6 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	const uint64_t *p = (const uint64_t *)(h + 1);
	uint64_t id = p[1];
	if (id == s->id1)
		s->n1++;
	else if (id == s->id2)
		s->n2++;
	else
		s->other++;
}

static void t_output(void)
{
	const char *w = "output: SET_OUTPUT merges a second event's samples into the first ring";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_ID);
	int fd1 = open_map(&a, 0, -1, &r, 64, w);
	if (fd1 < 0)
		return;
	int fd2 = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd2 < 0) {
		tap_fail(w, "second perf_event_open: errno %d (%s)", errno, en(errno));
		goto out1;
	}
	struct s6 s = { 0 };
	ioctl(fd1, PERF_EVENT_IOC_ID, &s.id1);
	ioctl(fd2, PERF_EVENT_IOC_ID, &s.id2);
	errno = 0;
	long rc = ioctl(fd2, PERF_EVENT_IOC_SET_OUTPUT, fd1);
	int e = errno;
	if (!tap_ok(rc, e, "output: PERF_EVENT_IOC_SET_OUTPUT(fd2 -> mmapped fd1)"))
		goto out2;
	ioctl(fd1, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fd2, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		busy_ms(20);
		ring_drain(&r, s6_rec, &s);
	}
	ioctl(fd1, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fd2, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s6_rec, &s);
	CHECK(s.n1 > 0 && s.n2 > 0 && s.other == 0 && s.id1 != s.id2, w,
	      "id1 %llu: %d samples, id2 %llu: %d samples, other ids %d", (unsigned long long)s.id1, s.n1,
	      (unsigned long long)s.id2, s.n2, s.other);
out2:
	close(fd2);
out1:
	perf_ring_unmap(&r);
	close(fd1);
}

/* ---- 7 poll ---- */
static void t_poll(void)
{
	const char *w = "poll";
	int go[2];
	if (pipe(go)) {
		tap_fail(w, "pipe: errno %d", errno);
		return;
	}
	pid_t c = fork();
	if (c == 0) {
		char x;
		close(go[1]);
		if (read(go[0], &x, 1) != 1)
			_exit(2);
		busy_ms(300);
		_exit(0);
	}
	if (c < 0) {
		tap_fail(w, "fork: errno %d", errno);
		return;
	}
	close(go[0]);
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	a.wakeup_events = 1;
	int fd = open_map(&a, c, -1, &r, 64, "poll: open+mmap on a child");
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int pr = 0;
	if (fd >= 0) {
		/* disabled until now: the child's user code between fork and read() would sample */
		pr = poll(&pf, 1, 0);
		CHECK(pr == 0, "poll: no POLLIN while disabled", "poll %d revents %#x", pr, pf.revents);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	uint64_t t0 = now_ns();
	if (write(go[1], "g", 1) != 1) {
	}
	close(go[1]);
	if (fd >= 0) {
		pf.revents = 0;
		pr = poll(&pf, 1, 3000);
		uint64_t dt = (now_ns() - t0) / 1000000;
		int n = ring_drain(&r, NULL, NULL);
		CHECK(pr == 1 && (pf.revents & POLLIN) && n > 0, "poll: POLLIN within 3 s once samples exist",
		      "poll %d revents %#x after %llu ms, %d records", pr, pf.revents, (unsigned long long)dt, n);
	}
	int st;
	waitpid(c, &st, 0);
	if (fd < 0)
		return;
	pf.revents = 0;
	pr = poll(&pf, 1, 3000);
	CHECK(pr == 1 && (pf.revents & POLLHUP), "poll: POLLHUP after the monitored child exits",
	      "poll %d revents %#x", pr, pf.revents);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 8 callchain ---- */
struct s8 {
	int n, ok, no_ctx, short_chain;
	uint64_t ex[6];
	int ex_nr;
};

static void s8_rec(const struct perf_event_header *h, void *ctx)
{
	struct s8 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	const uint64_t *p = (const uint64_t *)(h + 1);
	uint64_t nr = p[1];
	const uint64_t *ips = p + 2;
	s->n++;
	if (8 + 16 + nr * 8 != h->size) {
		s->short_chain++;
		return;
	}
	if (nr < 1 || ips[0] != PERF_CONTEXT_USER) {
		s->no_ctx++;
		return;
	}
	if (nr >= 5 && IN(ips[1], cs_loop, cs_loop_end) && IN(ips[2], cs_c, cs_c_end) &&
	    IN(ips[3], cs_b, cs_b_end) && IN(ips[4], cs_a, cs_a_end) && ips[1] == p[0])
		s->ok++;
	else if (!s->ex_nr) {
		s->ex_nr = (int)nr;
		for (unsigned i = 0; i < 6 && i < nr; i++)
			s->ex[i] = ips[i];
	}
}

static void t_chain(void)
{
	const char *w = "chain: USER context, loop ip, then return addresses in c, b, a (>= 80%)";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN);
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	struct s8 s = { 0 };
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		cs_a(iters_per_ms * 20);
		ring_drain(&r, s8_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s8_rec, &s);
	CHECK(s.n >= 10 && s.ok * 10 >= s.n * 8, w,
	      "%d of %d ok (bad size %d, no USER ctx %d); a %p b %p c %p loop %p; e.g. nr %d: %#llx %#llx %#llx "
	      "%#llx %#llx %#llx",
	      s.ok, s.n, s.short_chain, s.no_ctx, (void *)cs_a, (void *)cs_b, (void *)cs_c, (void *)cs_loop,
	      s.ex_nr, (unsigned long long)s.ex[0], (unsigned long long)s.ex[1], (unsigned long long)s.ex[2],
	      (unsigned long long)s.ex[3], (unsigned long long)s.ex[4], (unsigned long long)s.ex[5]);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 9 freq ---- */
struct s9 {
	int n, distinct;
	uint64_t last, minp, maxp;
};

static void s9_rec(const struct perf_event_header *h, void *ctx)
{
	struct s9 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	const uint64_t *p = (const uint64_t *)(h + 1);
	uint64_t period = p[1];
	if (!s->n || period != s->last)
		s->distinct++;
	if (!s->n || period < s->minp)
		s->minp = period;
	if (period > s->maxp)
		s->maxp = period;
	s->last = period;
	s->n++;
}

static void t_freq(void)
{
	const char *w = "freq: sample_freq=1000 over 0.5 s gives 250..750 samples";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 0, PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD);
	a.freq = 1;
	a.sample_freq = 1000;
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	struct s9 s = { 0 };
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 10; i++) {
		busy_ms(50);
		ring_drain(&r, s9_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t dt = (now_ns() - t0) / 1000000;
	ring_drain(&r, s9_rec, &s);
	printf("# freq: %d samples in %llu ms, %d period changes, period %llu..%llu\n", s.n, (unsigned long long)dt,
	       s.distinct, (unsigned long long)s.minp, (unsigned long long)s.maxp);
	CHECK(s.n >= 250 && s.n <= 750, w, "%d samples in %llu ms (periods %llu..%llu)", s.n,
	      (unsigned long long)dt, (unsigned long long)s.minp, (unsigned long long)s.maxp);
	CHECK(s.distinct > 1, "freq: sample periods vary", "%d distinct run(s), period %llu..%llu", s.distinct,
	      (unsigned long long)s.minp, (unsigned long long)s.maxp);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 10 cpu-clock ---- */
struct s10 {
	int n, bad_period;
	uint64_t period;
	uint64_t t[1024]; /* sample times */
};

static void s10_rec(const struct perf_event_header *h, void *ctx)
{
	struct s10 *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	const uint64_t *p = (const uint64_t *)(h + 1); /* ip, time, period */
	if (p[2] != 1000000 && !s->bad_period++)
		s->period = p[2];
	if (s->n < 1024)
		s->t[s->n] = p[1];
	s->n++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The timer fires every period while the task runs.  Without -icount the guest clock is host
 * time, so a host that stops the vCPU for a while (a loaded machine) leaves gaps in which the
 * task's cpu time grows but no timer can fire (Linux drops the missed expiries too): the median
 * gap between samples must be the period, and the count must match the cpu time less the time
 * spent in gaps of more than 3 periods.
 */
static void t_cpuclock(void)
{
	const char *w = "cpuclock: SW CPU_CLOCK period 1 ms: samples within 50% of cpu time / 1 ms (host stalls excluded)";
	struct perf_event_attr a;
	struct perf_ring r;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000,
		  PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD);
	a.exclude_kernel = 0;
	a.exclude_hv = 0;
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	static struct s10 s;
	memset(&s, 0, sizeof(s));
	uint64_t c0 = cputime_ns();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		busy_ms(20);
		ring_drain(&r, s10_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t ms = (cputime_ns() - c0) / 1000000;
	ring_drain(&r, s10_rec, &s);
	int n = s.n < 1024 ? s.n : 1024;
	static uint64_t gap[1024];
	uint64_t stalled = 0;
	for (int i = 1; i < n; i++) {
		gap[i - 1] = s.t[i] - s.t[i - 1];
		if (gap[i - 1] > 3000000)
			stalled += gap[i - 1] - 1000000;
	}
	qsort(gap, n > 1 ? (size_t)n - 1 : 0, sizeof(gap[0]), cmp_u64);
	uint64_t median = n > 1 ? gap[(n - 1) / 2] : 0, live = ms - (stalled / 1000000 < ms ? stalled / 1000000 : ms);
	printf("# cpuclock: %d samples over %llu ms cpu time, median gap %llu ns, %llu ms in gaps over 3 ms\n", s.n,
	       (unsigned long long)ms, (unsigned long long)median, (unsigned long long)(stalled / 1000000));
	CHECK(n > 10 && median >= 500000 && median <= 1500000, "cpuclock: the median gap between samples is the 1 ms period",
	      "%d samples, median gap %llu ns", s.n, (unsigned long long)median);
	CHECK(ms > 0 && s.n * 2 >= (int)live && s.n * 2 <= 3 * (int)ms, w,
	      "%d samples over %llu ms cpu time, %llu ms of it in long gaps", s.n, (unsigned long long)ms,
	      (unsigned long long)(stalled / 1000000));
	CHECK(s.n > 0 && s.bad_period == 0, "cpuclock: sample period == 1000000", "%d of %d samples had period %llu",
	      s.bad_period, s.n, (unsigned long long)s.period);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 10b FP/SIMD state across samples ---- */
struct s10b {
	int n, regs_ok;
};

static void s10b_rec(const struct perf_event_header *h, void *ctx)
{
	struct s10b *s = ctx;
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	s->n++;
	/* IP, callchain {nr, ips...}, then REGS_USER {abi, 33 regs} */
	const uint64_t *p = (const uint64_t *)(h + 1);
	uint64_t nr = p[1];
	if (h->size == sizeof(*h) + 8 * (1 + 1 + nr + 1 + 33) && p[2 + nr] == PERF_SAMPLE_REGS_ABI_64)
		s->regs_ok++;
}

/*
 * Fill v0-v31 with known bytes, spin `iters` iterations touching only general registers
 * (interrupts and samples land in the loop), then store v0-v31 to out[32][16].
 */
static void simd_spin(unsigned char out[32][16], long iters)
{
	__asm__ volatile(
		"movi v0.16b, #1\n movi v1.16b, #2\n movi v2.16b, #3\n movi v3.16b, #4\n"
		"movi v4.16b, #5\n movi v5.16b, #6\n movi v6.16b, #7\n movi v7.16b, #8\n"
		"movi v8.16b, #9\n movi v9.16b, #10\n movi v10.16b, #11\n movi v11.16b, #12\n"
		"movi v12.16b, #13\n movi v13.16b, #14\n movi v14.16b, #15\n movi v15.16b, #16\n"
		"movi v16.16b, #17\n movi v17.16b, #18\n movi v18.16b, #19\n movi v19.16b, #20\n"
		"movi v20.16b, #21\n movi v21.16b, #22\n movi v22.16b, #23\n movi v23.16b, #24\n"
		"movi v24.16b, #25\n movi v25.16b, #26\n movi v26.16b, #27\n movi v27.16b, #28\n"
		"movi v28.16b, #29\n movi v29.16b, #30\n movi v30.16b, #31\n movi v31.16b, #32\n"
		"1: subs %1, %1, #1\n b.ne 1b\n"
		"stp q0, q1, [%0]\n stp q2, q3, [%0, #32]\n stp q4, q5, [%0, #64]\n"
		"stp q6, q7, [%0, #96]\n stp q8, q9, [%0, #128]\n stp q10, q11, [%0, #160]\n"
		"stp q12, q13, [%0, #192]\n stp q14, q15, [%0, #224]\n stp q16, q17, [%0, #256]\n"
		"stp q18, q19, [%0, #288]\n stp q20, q21, [%0, #320]\n stp q22, q23, [%0, #352]\n"
		"stp q24, q25, [%0, #384]\n stp q26, q27, [%0, #416]\n stp q28, q29, [%0, #448]\n"
		"stp q30, q31, [%0, #480]\n"
		: "+r"(out), "+r"(iters)
		:
		: "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
		  "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
		  "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
}

static void t_simd(void)
{
	const char *w = "simd: v0-v31 of a task keep their values while it is sampled (cpu-clock, "
			"CALLCHAIN|REGS_USER)";
	struct perf_event_attr a;
	struct perf_ring r;
	unsigned char v[32][16];
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000,
		  PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER);
	a.sample_regs_user = (1ull << 33) - 1; /* x0-x30, sp, pc */
	a.exclude_kernel = 0;
	int fd = open_map(&a, 0, -1, &r, 256, w);
	if (fd < 0)
		return;
	struct s10b s = { 0 };
	int bad = 0, first = -1;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int round = 0; round < 10; round++) {
		memset(v, 0, sizeof(v));
		simd_spin(v, (long)iters_per_ms * 20);
		for (int i = 0; i < 32; i++)
			for (int b = 0; b < 16; b++)
				if (v[i][b] != i + 1 && !bad++)
					first = i;
		ring_drain(&r, s10b_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s10b_rec, &s);
	printf("# simd: %d samples over 10 x 20 ms of spinning\n", s.n);
	CHECK(s.n > 0 && s.regs_ok == s.n, "simd: samples carry the callchain and 33 user registers",
	      "%d samples, %d with the expected layout", s.n, s.regs_ok);
	CHECK(s.n > 0 && !bad, w, "%d samples; %d bytes differ (first in v%d)", s.n, bad, first);
	perf_ring_unmap(&r);
	close(fd);
}

/* ---- 11 throttle ---- */
struct s11 {
	int samples, thr, unthr, lost, other, bad;
	uint64_t id;
};

static void s11_rec(const struct perf_event_header *h, void *ctx)
{
	struct s11 *s = ctx;
	const uint64_t *p = (const uint64_t *)(h + 1);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		s->samples++;
		if (h->size != 8 + 3 * 8)
			s->bad++;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (h->type == PERF_RECORD_THROTTLE)
			s->thr++;
		else
			s->unthr++;
		if (h->size != 8 + 3 * 8 || p[1] != s->id)
			s->bad++;
		break;
	case PERF_RECORD_LOST:
		s->lost++;
		if (h->size != 8 + 2 * 8 || p[0] != s->id)
			s->bad++;
		break;
	default:
		s->other++;
	}
}

static void t_throttle(void)
{
	const char *w = "throttle: period 1000 on cycles completes with well-formed records";
	struct perf_event_attr a;
	struct perf_ring r;
	cycles_attr(&a, 1000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID);
	int fd = open_map(&a, 0, -1, &r, 64, w);
	if (fd < 0)
		return;
	struct s11 s = { 0 };
	ioctl(fd, PERF_EVENT_IOC_ID, &s.id);
	int bad0 = ring_bad;
	uint64_t t0 = now_ns();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		busy_ms(30);
		ring_drain(&r, s11_rec, &s);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(&r, s11_rec, &s);
	uint64_t dt = (now_ns() - t0) / 1000000;
	CHECK(s.bad == 0 && ring_bad == bad0 && s.other == 0 && s.samples > 0, w,
	      "%d samples, %d THROTTLE, %d UNTHROTTLE, %d LOST, %d other, %d bad records, %d bad headers, %llu ms",
	      s.samples, s.thr, s.unthr, s.lost, s.other, s.bad, ring_bad - bad0, (unsigned long long)dt);
	printf("# throttle: %d samples, %d THROTTLE, %d UNTHROTTLE, %d LOST in %llu ms\n", s.samples, s.thr,
	       s.unthr, s.lost, (unsigned long long)dt);
	perf_ring_unmap(&r);
	close(fd);
}

/* /proc/sys/kernel/perf_event_max_sample_rate (Linux lowers it at run time under TCG); -1 if absent */
static long max_rate(void)
{
	char b[32];
	int fd = open("/proc/sys/kernel/perf_event_max_sample_rate", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return strtol(b, NULL, 10);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--sb-child") == 0)
		return sb_child();
	tap_init("t_perf_sample", 60);
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n > 0)
		exe_path[n] = 0;
	else if (!realpath(argv[0], exe_path))
		snprintf(exe_path, sizeof(exe_path), "%s", argv[0]);
	calibrate();
	printf("# sl_loop: %llu iterations per ms\n", (unsigned long long)iters_per_ms);

	printf("# perf_event_max_sample_rate at start: %ld\n", max_rate());
	t_layout();
	t_ip();
	t_threads();
	t_sideband();
	t_lost();
	t_output();
	t_poll();
	t_chain();
	t_freq();
	t_cpuclock();
	t_simd();
	t_throttle();
	printf("# perf_event_max_sample_rate at end: %ld\n", max_rate());
	if (ring_bad)
		tap_fail("ring", "%d malformed record headers", ring_bad);
	return tap_done();
}
