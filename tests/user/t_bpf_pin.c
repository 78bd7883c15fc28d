/* t_bpf_pin: a BPF program run by BPF_PROG_TEST_RUN stays on one CPU for the whole run, as
 * Linux 6.1's bpf_prog_test_run_syscall pins it (migrate_disable: it may be preempted, but
 * resumes where it was).  tests/user/bpf/pin.bpf.c's SYSCALL programs read
 * bpf_get_smp_processor_id(), look up and bump their PERCPU_ARRAY slot, spin (pin: bpf_loop of
 * 100000 rounds, interpreted; pinl: a bounded loop of
 * bpf_copy_from_user (which may sleep) of 16 KiB for 10 ms by bpf_ktime_get_ns(), longer than a
 * tick, JIT-compiled when the JIT is on),
 * then read the CPU and look the slot up again.  2 x nproc threads run them over and over for a
 * few seconds while another thread keeps moving them between CPUs with sched_setaffinity (which
 * Linux defers to the end of the run).  No run may see its CPU change, get another slot from the
 * second lookup, or find its slot's count lower than the count it left there; every CPU's slot
 * counts the runs that started on it, and the counts add up to the runs made.
 * With bpf_jit_enable 0 only pinl runs (Linux 6.1 refuses pin's callback without the JIT).
 * Before the run was pinned (ksvc_migrate_disable in test_run_syscall), SMP=2: about half the
 * runs moved (JIT on: pin 67 of 144, pinl 70 of 142; off: pinl 411 of 810); now none.
 * Passes on Linux 6.1 (refvm.sh --smp 2, 2026-12-01): JIT on 12 checks (pin 183 runs, pinl
 * 184, none moved), off 8 checks and pin skipped (pinl 554 runs).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"
#include "bpf_raw.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

extern const char _binary_pin_bpf_o_start[], _binary_pin_bpf_o_end[];

struct slot {
	uint64_t runs, cpu;
};

struct args {
	uint32_t iters, moved, cpu0, cpu1;
	uint64_t sink, ubuf;
};

static char ubuf[16384];

#define MAX_THREADS 64
#define SECONDS 3

static int prog_fd[2], map_fd, nthreads, ncpus;
/* net.core.bpf_jit_enable: Linux 6.1 refuses pin's bpf_loop callback in an interpreted program
 * ("callbacks are not allowed in non-JITed programs"), so with 0 only pinl runs */
static int jit;
static _Atomic int stop, tids[MAX_THREADS];
static _Atomic uint64_t runs[2], moved_cpu[2], moved_slot[2], went_back[2], failed[2];
static _Atomic uint64_t first_bad[2], short_spin;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *runner(void *arg)
{
	int me = (int)(intptr_t)arg;

	tids[me] = (int)syscall(SYS_gettid);
	for (unsigned int n = 0; !atomic_load(&stop); n++) {
		int w = jit ? (n + me) & 1 : 1;
		struct args a = { .iters = w ? 10000000 : 100000, .ubuf = (uintptr_t)ubuf };
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));

		if (bpf_prog_test_run_opts(prog_fd[w], &o) || o.retval) {
			failed[w]++;
			continue;
		}
		runs[w]++;
		if (w && a.sink >= 4000)
			short_spin++;
		if (a.moved && !first_bad[w])
			first_bad[w] = (uint64_t)a.moved << 32 | a.cpu0 << 16 | a.cpu1;
		if (a.moved & 1)
			moved_cpu[w]++;
		if (a.moved & 2)
			moved_slot[w]++;
		if (a.moved & 4)
			went_back[w]++;
	}
	return NULL;
}

/* Keep moving the runners: each in turn to one CPU, the next CPU each round */
static void *pusher(void *arg)
{
	unsigned int n = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		int t = tids[n % nthreads];
		cpu_set_t s;

		CPU_ZERO(&s);
		CPU_SET((int)((n / nthreads + n) % ncpus), &s);
		if (t)
			sched_setaffinity(t, sizeof(s), &s);
		n++;
		usleep(500);
	}
	return NULL;
}

int main(void)
{
	static const char *const name[2] = { "pin (bpf_loop)", "pinl (bounded loop)" };
	pthread_t th[MAX_THREADS], push;
	struct bpf_object *obj;
	char what[160];

	tap_init("t_bpf_pin", 120);
	libbpf_set_print(faults_quiet);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	nthreads = 2 * ncpus > MAX_THREADS ? MAX_THREADS : 2 * ncpus;
	jit = bpf_jit_enabled();
	obj = bpf_object__open_mem(_binary_pin_bpf_o_start,
				   (size_t)(_binary_pin_bpf_o_end - _binary_pin_bpf_o_start), NULL);
	if (obj)
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, "pin"), jit);
	if (!obj || bpf_object__load(obj)) {
		tap_fail("open and load pin.bpf.o", "%s", strerror(errno));
		return tap_done();
	}
	prog_fd[0] = jit ? bpf_program__fd(bpf_object__find_program_by_name(obj, "pin")) : 0;
	prog_fd[1] = bpf_program__fd(bpf_object__find_program_by_name(obj, "pinl"));
	map_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "pc"));
	CHECK(prog_fd[0] >= 0 && prog_fd[1] >= 0 && map_fd >= 0, "both programs and the map load",
	      "fds %d %d %d", prog_fd[0], prog_fd[1], map_fd);

	double t0 = now();

	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, runner, (void *)(intptr_t)i);
	pthread_create(&push, NULL, pusher, NULL);
	while (now() - t0 < SECONDS)
		usleep(100000);
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_join(push, NULL);

	if (!jit)
		tap_skip("pin (bpf_loop)", "its callback needs the JIT (bpf_jit_enable 0)");
	for (int w = !jit; w < 2; w++) {
		uint64_t b = first_bad[w];

		printf("# %s: %llu runs by %d threads on %d CPUs in %d s: %llu changed CPU, %llu "
		       "another slot, %llu count went back\n", name[w], (unsigned long long)runs[w],
		       nthreads, ncpus, SECONDS, (unsigned long long)moved_cpu[w],
		       (unsigned long long)moved_slot[w], (unsigned long long)went_back[w]);
		snprintf(what, sizeof(what), "%s: every run succeeds", name[w]);
		CHECK(runs[w] > 0 && !failed[w], what, "%llu runs, %llu failed",
		      (unsigned long long)runs[w], (unsigned long long)failed[w]);
		snprintf(what, sizeof(what), "%s: no run sees bpf_get_smp_processor_id() change",
			 name[w]);
		CHECK(!moved_cpu[w], what, "%llu of %llu runs (first: cpu %u -> %u)",
		      (unsigned long long)moved_cpu[w], (unsigned long long)runs[w],
		      (unsigned)(b >> 16 & 0xffff), (unsigned)(b & 0xffff));
		snprintf(what, sizeof(what), "%s: the per-CPU slot looked up at the end is the first",
			 name[w]);
		CHECK(!moved_slot[w], what, "%llu of %llu runs", (unsigned long long)moved_slot[w],
		      (unsigned long long)runs[w]);
		snprintf(what, sizeof(what), "%s: no run finds its slot's count below its own bump",
			 name[w]);
		CHECK(!went_back[w], what, "%llu of %llu runs", (unsigned long long)went_back[w],
		      (unsigned long long)runs[w]);
	}

	CHECK(short_spin * 2 < runs[1], "pinl's loop lasts its 10 ms in most runs",
	      "%llu of %llu runs ended their loop first", (unsigned long long)short_spin,
	      (unsigned long long)runs[1]);

	int np = libbpf_num_possible_cpus();
	struct slot *v = calloc(np > 0 ? np : 1, sizeof(*v));
	uint32_t k = 0;
	uint64_t sum = 0;
	int bad_cpu = -1;

	if (np > 0 && v && !bpf_map_lookup_elem(map_fd, &k, v)) {
		for (int c = 0; c < np; c++) {
			sum += v[c].runs;
			if (v[c].runs && v[c].cpu != (uint64_t)c && bad_cpu < 0)
				bad_cpu = c;
		}
		CHECK(sum == runs[0] + runs[1], "the per-CPU counts add up to the runs made",
		      "%llu, %llu runs", (unsigned long long)sum,
		      (unsigned long long)(runs[0] + runs[1]));
		CHECK(bad_cpu < 0, "each CPU's slot was last written by a run on that CPU",
		      "cpu %d's slot says %llu", bad_cpu,
		      (unsigned long long)(bad_cpu >= 0 ? v[bad_cpu].cpu : 0));
	} else {
		tap_fail("read the per-CPU slots", "%s", strerror(errno));
	}
	free(v);
	bpf_object__close(obj);
	return tap_done();
}
