/* samplebench: guest instructions per perf sample (overflow interrupt -> record published in
 * the ring), on whatever kernel it runs on (perfkernel or Linux 6.1, both under QEMU -icount
 * shift=0, one CPU: CLOCK_MONOTONIC then advances 1 ns per guest instruction).
 *
 *   samplebench [-n ITERS] [-p PERIOD] [-r REPS]
 *     -n ITERS   busy-loop iterations (2 instructions each; default 20,000,000 = 40M insns)
 *     -p PERIOD  sample period: cycles, and ns for cpu-clock (default 20000 = 50,000 samples
 *                per second of guest time under icount)
 *     -r REPS    repetitions per case, minimum taken (default 3)
 *
 * Cases, one line each:
 *   "NAME: N guest instructions per sample (samples S, extra E, throttle T, unthrottle U,
 *    lost L, callchain C)"
 *   cycles_ip_tid_time   PERF_TYPE_HARDWARE/CPU_CYCLES, sample_type IP|TID|TIME
 *   cycles_callchain     the same | CALLCHAIN; the loop runs 5 noinline frames deep
 *                        (f1..f5, built with frame pointers, also in leaves; the unwind ends
 *                        there: callchain nr 7, PERF_CONTEXT_USER + 6 user addresses)
 *   cpuclock_ip_tid_time PERF_TYPE_SOFTWARE/CPU_CLOCK, sample_period PERIOD ns, IP|TID|TIME
 *   bpf_{count,stack,drop}_{interp,jit}   cycles IP|TID|TIME with an eBPF program attached
 *                        (PERF_EVENT_IOC_SET_BPF), loaded with net.core.bpf_jit_enable 0
 *                        (interp) or 1 (jit); n/a where the sysctl cannot be set so:
 *                        count: bpf_get_current_pid_tgid, HASH lookup keyed by it, atomic add
 *                          (update on first sight), return 1;
 *                        stack: bpf_get_stackid(ctx, STACK_TRACE, BPF_F_USER_STACK), then the
 *                          same HASH count keyed by the stack id, return 1;
 *                        drop: count returning 0 (no sample is written: per overflow, counted
 *                          as the event's count / PERIOD)
 *
 * Method.  A fixed user-only busy loop (subs/b.ne, no syscalls, no memory) is timed with
 * CLOCK_MONOTONIC alone and with the sampling event enabled (enabled with an ioctl before the
 * first clock read, disabled after the second).  extra = t_sampled - t_alone (t_alone is the
 * minimum over REPS runs); per sample = extra / samples, where samples are the
 * PERF_RECORD_SAMPLE records this task's pid/tid found in the ring (129 pages, 512 KiB of data:
 * nothing is lost at these rates; LOST, THROTTLE and UNTHROTTLE records are counted and
 * reported).  The event is a per-task event (pid 0, cpu -1) with exclude_kernel=0 and
 * exclude_hv=1, as `perf record -e cycles -c PERIOD` as root opens it.  The same loop runs in
 * every case (always 5 frames deep), so the callchain case differs only in sample_type.  The
 * figure reported is the minimum per-sample cost over REPS repetitions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys_bpf.h"
#include "sys_perf.h"

#define DATA_PAGES 128

static long iters = 20000000;
static uint64_t period = 20000;
static int reps = 3;
static long pagesz;

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The busy loop: 2 instructions per iteration, user mode only, no memory traffic.  It runs
 * in f5, the innermost of 5 noinline frames f1..f5, each with a frame record (built with
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer); chain_entry calls f1 with x29 = 0, so
 * a frame-pointer unwind ends after f1's record: the user callchain is exactly
 * {PERF_CONTEXT_USER, ip in f5, f4, f3, f2, f1, chain_entry} (nr 7) on any kernel, whatever
 * glibc's start-up code does with its frames. */
long chain_entry(long n);
long f1(long n);
long f2(long n);
long f3(long n);
long f4(long n);
long f5(long n);

__asm__(".text\n"
	".p2align 4\n"
	".globl chain_entry\n"
	".type chain_entry, %function\n"
	"chain_entry:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, xzr\n"
	"	bl f1\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	".size chain_entry, .-chain_entry\n");

__attribute__((noinline, used)) long f5(long n)
{
	long r = n;

	__asm__ volatile("1:	subs %0, %0, #1\n"
			 "	b.ne 1b\n"
			 : "+r"(r)
			 :
			 : "cc");
	return r;
}

/* the empty asm after each call keeps it from being a tail call */
__attribute__((noinline, used)) long f4(long n)
{
	long r = f5(n);
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline, used)) long f3(long n)
{
	long r = f4(n);
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline, used)) long f2(long n)
{
	long r = f3(n);
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline, used)) long f1(long n)
{
	long r = f2(n);
	__asm__ volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

static uint64_t run_loop(void)
{
	uint64_t t0 = clock_ns();
	chain_entry(iters);
	uint64_t t1 = clock_ns();

	return t1 - t0;
}

struct ring {
	int fd;
	struct perf_event_mmap_page *up;
	unsigned char *data;
	uint64_t size;
	size_t maplen;
};

struct counts {
	uint64_t samples, throttle, unthrottle, lost, other, foreign;
	uint64_t chain_nr; /* sum of callchain nr over samples */
};

/* the first callchain seen, printed once as a check */
static uint64_t chain0[16];
static uint64_t chain0_nr;

static int ring_open(struct ring *rg, uint32_t type, uint64_t config, uint64_t sample_type)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.exclude_kernel = 0;
	rg->fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (rg->fd < 0)
		return -1;
	rg->maplen = (size_t)(DATA_PAGES + 1) * (size_t)pagesz;
	void *m = mmap(NULL, rg->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, rg->fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "samplebench: mmap ring: %s\n", strerror(errno));
		close(rg->fd);
		return -1;
	}
	rg->up = m;
	uint64_t off = rg->up->data_offset ? rg->up->data_offset : (uint64_t)pagesz;
	rg->size = rg->up->data_size ? rg->up->data_size : (uint64_t)DATA_PAGES * pagesz;
	rg->data = (unsigned char *)m + off;
	return 0;
}

static void ring_close(struct ring *rg)
{
	munmap(rg->up, rg->maplen);
	close(rg->fd);
}

/* consume everything in the ring, counting records */
static void ring_drain(struct ring *rg, uint64_t sample_type, struct counts *c)
{
	uint64_t head = __atomic_load_n(&rg->up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->up->data_tail;
	pid_t pid = getpid();
	unsigned char buf[4096];

	memset(c, 0, sizeof(*c));
	while (tail < head) {
		struct perf_event_header h;
		uint64_t pos = tail % rg->size;

		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = rg->data[(pos + i) % rg->size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		size_t n = h.size < sizeof(buf) ? h.size : sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = rg->data[(pos + i) % rg->size];
		switch (h.type) {
		case PERF_RECORD_SAMPLE: {
			uint64_t *p = (uint64_t *)(buf + sizeof(h));
			uint32_t spid = 0;

			if (sample_type & PERF_SAMPLE_IP)
				p++;
			if (sample_type & PERF_SAMPLE_TID) {
				spid = (uint32_t)*p;
				p++;
			}
			if (sample_type & PERF_SAMPLE_TIME)
				p++;
			if (sample_type & PERF_SAMPLE_CALLCHAIN) {
				c->chain_nr += *p;
				if (!chain0_nr && *p && *p <= 16 &&
				    (size_t)((unsigned char *)(p + 1 + *p) - buf) <= n) {
					chain0_nr = *p;
					memcpy(chain0, p + 1, *p * sizeof(uint64_t));
				}
			}
			c->samples++;
			if (spid != (uint32_t)pid)
				c->foreign++;
			break;
		}
		case PERF_RECORD_THROTTLE:
			c->throttle++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			c->unthrottle++;
			break;
		case PERF_RECORD_LOST:
			c->lost += ((uint64_t *)(buf + sizeof(h)))[1];
			break;
		default:
			c->other++;
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&rg->up->data_tail, head, __ATOMIC_RELEASE);
}

/* one sampled run: returns guest time, fills c */
static uint64_t sampled_run(struct ring *rg, uint64_t sample_type, struct counts *c)
{
	struct counts junk;

	ring_drain(rg, sample_type, &junk);
	ioctl(rg->fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(rg->fd, PERF_EVENT_IOC_ENABLE, 0);
	uint64_t t = run_loop();
	ioctl(rg->fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_drain(rg, sample_type, c);
	if (!c->samples) {
		/* a program dropped every sample: count overflows instead */
		uint64_t v = 0;

		if (read(rg->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			c->samples = v / period;
	}
	return t;
}

static uint64_t t_alone;

static void measure_alone(void)
{
	t_alone = 0;
	run_loop(); /* warm up */
	for (int r = 0; r < reps; r++) {
		uint64_t t = run_loop();
		if (!t_alone || t < t_alone)
			t_alone = t;
	}
	printf("# alone: %llu ns for %ld iterations (%.3f per iteration)\n",
	       (unsigned long long)t_alone, iters, (double)t_alone / (double)iters);
}

static void one_case(const char *name, uint32_t type, uint64_t config, uint64_t sample_type,
		     int prog_fd)
{
	struct ring rg;
	struct counts c, best_c;
	double best = -1;
	uint64_t best_t = 0;
	uint64_t th = 0, unth = 0, lost = 0;

	if (ring_open(&rg, type, config, sample_type) != 0) {
		fprintf(stderr, "samplebench: %s: perf_event_open/mmap: %s\n", name, strerror(errno));
		printf("%s: n/a\n", name);
		return;
	}
	if (prog_fd >= 0 && ioctl(rg.fd, PERF_EVENT_IOC_SET_BPF, prog_fd) != 0) {
		fprintf(stderr, "samplebench: %s: PERF_EVENT_IOC_SET_BPF: %s\n", name, strerror(errno));
		printf("%s: n/a\n", name);
		ring_close(&rg);
		return;
	}
	memset(&best_c, 0, sizeof(best_c));
	sampled_run(&rg, sample_type, &c); /* warm up */
	th += c.throttle;
	unth += c.unthrottle;
	lost += c.lost;
	for (int r = 0; r < reps; r++) {
		uint64_t t = sampled_run(&rg, sample_type, &c);
		th += c.throttle;
		unth += c.unthrottle;
		lost += c.lost;
		if (!c.samples)
			continue;
		double per = ((double)t - (double)t_alone) / (double)c.samples;
		printf("# %s rep %d: %llu ns, %llu samples (%llu not ours), %.1f per sample\n", name,
		       r, (unsigned long long)t, (unsigned long long)c.samples,
		       (unsigned long long)c.foreign, per);
		if (best < 0 || per < best) {
			best = per;
			best_c = c;
			best_t = t;
		}
	}
	ring_close(&rg);
	if (chain0_nr) {
		printf("# %s: first callchain (nr %llu):", name, (unsigned long long)chain0_nr);
		for (uint64_t i = 0; i < chain0_nr; i++)
			printf(" %#llx", (unsigned long long)chain0[i]);
		printf("; f5 %p f4 %p f3 %p f2 %p f1 %p chain_entry %p\n", (void *)f5, (void *)f4,
		       (void *)f3, (void *)f2, (void *)f1, (void *)chain_entry);
		chain0_nr = 0;
	}
	if (best < 0) {
		printf("%s: n/a (no samples; throttle %llu)\n", name, (unsigned long long)th);
		return;
	}
	printf("%s: %.1f guest instructions per sample (samples %llu, extra %lld, throttle %llu, "
	       "unthrottle %llu, lost %llu, callchain %.1f)\n",
	       name, best, (unsigned long long)best_c.samples,
	       (long long)(best_t - t_alone), (unsigned long long)th, (unsigned long long)unth,
	       (unsigned long long)lost,
	       best_c.samples ? (double)best_c.chain_nr / (double)best_c.samples : 0.0);
	fflush(stdout);
}

/* ---- eBPF programs for the bpf_* cases ---- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)

/* count (stack: keyed by get_stackid first), returning ret */
static int prog_load(int hash_fd, int stack_fd, int ret)
{
	struct bpf_insn p[32];
	union bpf_attr a;
	int n = 0;

	if (stack_fd >= 0) {
		/* r0 = get_stackid(ctx, stackmap, BPF_F_USER_STACK) */
		p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, stack_fd);
		p[n++] = INSN(0, 0, 0, 0, 0);
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, BPF_F_USER_STACK);
		p[n++] = CALL(BPF_FUNC_get_stackid);
	} else {
		p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	}
	p[n++] = INSN(BPF_STX | BPF_DW | BPF_MEM, 10, 0, -8, 0); /* key */
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, hash_fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1);
	p[n++] = INSN(BPF_STX | BPF_DW | BPF_ATOMIC, 0, 1, 0, BPF_ADD);
	p[n++] = INSN(BPF_JMP | BPF_JA, 0, 0, 9, 0);
	/* first sight: update(key, 1, BPF_ANY) */
	p[n++] = INSN(BPF_ST | BPF_DW | BPF_MEM, 10, 0, -16, 1);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, hash_fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -16);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, BPF_ANY);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, ret);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)p;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t)"GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

static void bpf_cases(uint64_t sample_type)
{
	static const char *const kind[] = { "count", "stack", "drop" };
	int old = bpf_jit_sysctl(-1);

	printf("# bpf_jit_enable = %d\n", old);
	for (int k = 0; k < 3; k++) {
		for (int jit = 0; jit < 2; jit++) {
			char name[64];
			int hash = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, 1024, 0);
			int stack = k == 1 ? bpf_map_new(BPF_MAP_TYPE_STACK_TRACE, 4, 127 * 8, 1024, 0) : -1;
			int prog = -1;

			snprintf(name, sizeof(name), "bpf_%s_%s", kind[k], jit ? "jit" : "interp");
			if (hash >= 0 && (k != 1 || stack >= 0) && (old < 0 || bpf_jit_sysctl(jit) == 0))
				prog = prog_load(hash, stack, k == 2 ? 0 : 1);
			if (prog < 0) {
				fprintf(stderr, "samplebench: %s: %s\n", name, strerror(errno));
				printf("%s: n/a\n", name);
			} else {
				one_case(name, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, sample_type,
					 prog);
				close(prog);
			}
			if (hash >= 0)
				close(hash);
			if (stack >= 0)
				close(stack);
		}
	}
	if (old >= 0)
		bpf_jit_sysctl(old);
}

static void show_sysctl(const char *name)
{
	char path[128], v[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(v, sizeof(v), f)) {
		v[strcspn(v, "\n")] = 0;
		printf("# %s = %s\n", name, v);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	int opt;
	cpu_set_t s;

	while ((opt = getopt(argc, argv, "n:p:r:")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtol(optarg, NULL, 0);
			break;
		case 'p':
			period = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			reps = (int)strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: samplebench [-n ITERS] [-p PERIOD] [-r REPS]\n");
			return 2;
		}
	}
	if (iters < 1 || !period || reps < 1) {
		fprintf(stderr, "samplebench: bad arguments\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pagesz = sysconf(_SC_PAGESIZE);
	CPU_ZERO(&s);
	CPU_SET(0, &s);
	sched_setaffinity(0, sizeof(s), &s);
	show_sysctl("perf_event_max_sample_rate");
	show_sysctl("perf_cpu_time_max_percent");
	printf("# period %llu, %ld iterations, %d reps\n", (unsigned long long)period, iters, reps);

	measure_alone();
	const uint64_t itt = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	one_case("cycles_ip_tid_time", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, itt, -1);
	one_case("cycles_callchain", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		 itt | PERF_SAMPLE_CALLCHAIN, -1);
	one_case("cpuclock_ip_tid_time", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, itt, -1);
	bpf_cases(itt);
	show_sysctl("perf_event_max_sample_rate");
	return 0;
}
