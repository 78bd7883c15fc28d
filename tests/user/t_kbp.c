/* t_kbp: PERF_TYPE_BREAKPOINT on kernel addresses, found in /proc/kallsyms (root).  A per-task
 * one is EINVAL, so is a CPU-wide one with exclude_kernel; a CPU-wide execute breakpoint on the
 * getppid handler counts each getppid this task makes on that CPU, and with a period of 1
 * samples each with IP and ADDR at the handler and misc KERNEL.  Watchpoints on kernel data:
 * a BPF array's value, whose kernel address a privileged BPF_PROG_TYPE_SYSCALL program stores
 * into the value itself (Debian's kallsyms lists no data symbols): a read watchpoint counts the
 * BPF_MAP_LOOKUP_ELEM copies out of it and not the updates, a write watchpoint the
 * BPF_MAP_UPDATE_ELEM copies into it and not the lookups.  The kernel steps over every hit:
 * the calls keep returning the right values.  Torture:
 * watchpoints and breakpoints on both CPUs opened, enabled and closed in a loop while children
 * make syscalls on every CPU.  Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "sys_bpf.h"
#include "sys_perf.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define DATA_PAGES 8
#define CALLS 200
#define TORTURE 30
#define HOT_INSNS 48 /* per function */
#define HOT_SECONDS 25

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t ksym(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[200], t;
	unsigned long long a;
	uint64_t found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %199s", &a, &t, sym) == 3 && !strcmp(sym, name))
			found = a;
	fclose(f);
	return found;
}

static void attr_bp(struct perf_event_attr *a, uint32_t type, uint64_t addr, uint64_t len)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = type;
	a->bp_addr = addr;
	a->bp_len = len;
	a->disabled = 1;
}

static long long count_of(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return (long long)v;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

/* getppid CALLS times with fd enabled: all returned the parent's pid */
static int calls(int fd)
{
	pid_t pp = getppid();
	int ok = 1;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < CALLS; i++)
		ok &= syscall(__NR_getppid) == pp;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	return ok;
}

static void t_errnos(uint64_t fn)
{
	struct perf_event_attr a;

	attr_bp(&a, HW_BREAKPOINT_X, fn, 4);
	EXPECT_ERRNO(perf_open(&a, 0, -1), EINVAL, "per-task breakpoint on a kernel address: EINVAL");
	EXPECT_ERRNO(perf_open(&a, 0, 0), EINVAL,
		     "per-task breakpoint on a kernel address on one CPU: EINVAL");
	a.exclude_kernel = 1;
	EXPECT_ERRNO(perf_open(&a, -1, 0), EINVAL,
		     "CPU-wide breakpoint on a kernel address with exclude_kernel: EINVAL");
	attr_bp(&a, HW_BREAKPOINT_W, fn, 8);
	a.exclude_kernel = 1;
	EXPECT_ERRNO(perf_open(&a, -1, 0), EINVAL,
		     "CPU-wide watchpoint on a kernel address with exclude_kernel: EINVAL");
}

static void t_exec(uint64_t fn)
{
	struct perf_event_attr a;

	attr_bp(&a, HW_BREAKPOINT_X, fn, 4);
	int fd = (int)perf_open(&a, -1, 0);

	if (!tap_ok(fd, errno, "CPU-wide execute breakpoint on the getppid handler opens"))
		return;
	int ok = calls(fd);
	long long n = count_of(fd);

	printf("# execute breakpoint: %lld hits for %d getppid calls\n", n, CALLS);
	CHECK(n >= CALLS && n < 2 * CALLS, "it counts each of the 200 getppid calls on its CPU",
	      "count %lld", n);
	CHECK(ok, "getppid returned the parent's pid under the breakpoint", "wrong result");
	close(fd);
}

struct sample_tally {
	uint64_t fn;
	int samples, good, mine;
};

static void tally(const struct perf_event_header *h, void *arg)
{
	struct sample_tally *t = arg;
	const uint64_t *f = (const uint64_t *)(h + 1);
	const uint32_t *pt = (const uint32_t *)&f[1];

	if (h->type != PERF_RECORD_SAMPLE)
		return;
	t->samples++;
	if (f[0] == t->fn && f[2] == t->fn &&
	    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		t->good++;
	if (pt[0] == (uint32_t)getpid() && pt[1] == (uint32_t)getpid())
		t->mine++;
}

static void t_sample(uint64_t fn)
{
	const char *w = "one sample per hit: IP and ADDR at the handler, misc KERNEL, our pid";
	struct perf_event_attr a;
	struct perf_ring r;
	struct sample_tally t = { fn, 0, 0, 0 };
	uint64_t buf[64];

	attr_bp(&a, HW_BREAKPOINT_X, fn, 4);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	int fd = (int)perf_open(&a, -1, 0);

	if (!tap_ok(fd, errno, "sampling CPU-wide execute breakpoint opens"))
		return;
	if (perf_ring_map(&r, fd, DATA_PAGES)) {
		tap_fail(w, "mmap: errno %d", errno);
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 20; i++)
		syscall(__NR_getppid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_ring_read(&r, tally, &t, buf, sizeof(buf), 1);
	CHECK(t.samples >= 20 && t.good == t.samples && t.mine >= 20 && !r.bad, w,
	      "%d samples, %d at the handler, %d ours, %u bad", t.samples, t.good, t.mine, r.bad);
	perf_ring_unmap(&r);
	close(fd);
}

static int run_prog(int prog)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	return (int)sys_bpf(BPF_PROG_TEST_RUN, &a);
}

/* A SYSCALL program that runs op with r0 at map's value 0 (and r1 = 1), or -1. */
static int value_prog(int map, struct bpf_insn op)
{
	char log[4096] = "";
	struct bpf_insn p[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		MOV_X(BPF_REG_2, BPF_REG_10),
		ADD_K(BPF_REG_2, -4),
		LD_MAP(BPF_REG_1, map),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_K(BPF_REG_0, 0, 2),
		MOV_K(BPF_REG_1, 1),
		op,
		RET0,
	};
	int prog = bpf_prog_new(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, N_INSNS(p), log,
				sizeof(log));

	if (prog < 0)
		printf("# program load: errno %d: %s\n", errno, log);
	return prog;
}

/* A 1-entry ARRAY of size bytes and the kernel address of its value (0 if unknown). */
static int value_map(uint32_t size, uint64_t *kaddr)
{
	static uint64_t value[3 * PG / 8]; /* the lookup's copy: size at most */
	int map = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, size, 1, 0);
	uint32_t key = 0;

	*kaddr = 0;
	if (map < 0)
		return -1;
	/* v = lookup(map, &0); if (v) *v = v; return 0 */
	int prog = value_prog(map, INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_0, 0, 0));

	if (prog >= 0 && size <= sizeof(value) && run_prog(prog) == 0 &&
	    bpf_map_elem(BPF_MAP_LOOKUP_ELEM, map, &key, value, 0) == 0)
		*kaddr = value[0];
	if (prog >= 0)
		close(prog);
	return map;
}

/* n lookups (write false) or updates of map's value with fd enabled: all succeeded */
static int map_calls(int fd, int map, bool write, int n)
{
	uint32_t key = 0;
	uint64_t v = 0;
	int ok = 1;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < n; i++) {
		v = write ? (uint64_t)i : 0;
		ok &= bpf_map_elem(write ? BPF_MAP_UPDATE_ELEM : BPF_MAP_LOOKUP_ELEM, map, &key, &v,
				   0) == 0;
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (write)
		ok &= bpf_map_elem(BPF_MAP_LOOKUP_ELEM, map, &key, &v, 0) == 0 &&
		      v == (uint64_t)n - 1;
	return ok;
}

static void t_watch(uint64_t value)
{
	struct perf_event_attr a;
	int map;

	map = value_map(8, &value);
	if (!CHECK(map >= 0 && value >= 0xffff000000000000ull,
		   "a BPF program stores its array value's kernel address", "map %d, address %#llx",
		   map, (unsigned long long)value))
		return;
	attr_bp(&a, HW_BREAKPOINT_R, value, 8);
	int fd = (int)perf_open(&a, -1, 0);

	if (tap_ok(fd, errno, "CPU-wide read watchpoint on the map value opens")) {
		int ok = map_calls(fd, map, false, CALLS);
		long long n = count_of(fd);

		printf("# read watchpoint: %lld hits for %d lookups\n", n, CALLS);
		CHECK(ok && n >= CALLS && n <= 4 * CALLS,
		      "it counts the copies out of the value of 200 lookups", "count %lld, calls %s", n,
		      ok ? "ok" : "failed");
		ok = map_calls(fd, map, true, CALLS);
		n = count_of(fd);
		CHECK(ok && n == 0, "it counts none of 200 updates, which took effect",
		      "count %lld, calls %s", n, ok ? "ok" : "failed");
		close(fd);
	}
	attr_bp(&a, HW_BREAKPOINT_W, value, 8);
	fd = (int)perf_open(&a, -1, 0);
	if (tap_ok(fd, errno, "CPU-wide write watchpoint on the map value opens")) {
		int ok = map_calls(fd, map, true, CALLS);
		long long n = count_of(fd);

		printf("# write watchpoint: %lld hits for %d updates\n", n, CALLS);
		CHECK(ok && n >= CALLS && n <= 4 * CALLS,
		      "it counts the copies into the value of 200 updates, which took effect",
		      "count %lld, calls %s", n, ok ? "ok" : "failed");
		ok = map_calls(fd, map, false, CALLS);
		n = count_of(fd);
		CHECK(ok && n == 0, "it counts none of 200 lookups", "count %lld", n);
		/* a BPF program's atomic add (an exclusive load/store loop or one LSE instruction):
		 * one store each */
		int prog = value_prog(map, INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0,
						BPF_REG_1, 0, BPF_ADD));
		uint32_t key = 0;
		uint64_t v = 0;

		ok = prog >= 0 && bpf_map_elem(BPF_MAP_UPDATE_ELEM, map, &key, &v, 0) == 0;
		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (int i = 0; ok && i < CALLS; i++)
			ok &= run_prog(prog) == 0;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		n = count_of(fd);
		ok &= bpf_map_elem(BPF_MAP_LOOKUP_ELEM, map, &key, &v, 0) == 0;
		printf("# write watchpoint: %lld hits for %d atomic adds\n", n, CALLS);
		CHECK(ok && n >= CALLS && n <= 2 * CALLS && v == CALLS,
		      "it counts each of 200 atomic adds by a BPF program, which all took effect",
		      "count %lld, value %llu, runs %s", n, (unsigned long long)v, ok ? "ok" : "failed");
		if (prog >= 0)
			close(prog);
		close(fd);
	}
	close(map);
}

/* children make syscalls on every CPU while the parent opens, enables and closes breakpoints */
static void t_torture(uint64_t fn)
{
	/* the watched word is in a page of the map's own (others' atomics in a watched page are
	 * very slow under QEMU: each one stops every vCPU) */
	static uint64_t big[3 * PG / 8];
	uint64_t slot;
	int map = value_map(sizeof(big), &slot);

	slot += 2 * PG - (slot & (PG - 1)); /* the next page but one: inside the value */

	pid_t kids[3];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int opened = 0, errs = 0, first_err = 0;

	pin(0);
	for (int k = 0; k < 3; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			pin(k % (int)(ncpu > 0 ? ncpu : 1));
			for (uint64_t v = 0;; v++) {
				uint32_t key = 0;

				syscall(__NR_getppid);
				big[0] = v;
				bpf_map_elem(v & 1 ? BPF_MAP_UPDATE_ELEM : BPF_MAP_LOOKUP_ELEM, map, &key,
					     big, 0);
			}
		}
	}
	sched_setaffinity(0, sizeof(cpu_set_t), &(cpu_set_t){ { ~0ul } });
	for (int i = 0; i < TORTURE; i++) {
		struct perf_event_attr a;
		int cpu = (int)(i % (ncpu > 0 ? ncpu : 1));

		if (i % 3 == 0)
			attr_bp(&a, HW_BREAKPOINT_X, fn, 4);
		else
			attr_bp(&a, i % 3 == 1 ? HW_BREAKPOINT_R : HW_BREAKPOINT_RW, slot, 8);
		a.disabled = 0;
		if (i % 2)
			a.sample_period = 1, a.sample_type = PERF_SAMPLE_IP;
		int fd = (int)perf_open(&a, -1, cpu);

		if (fd < 0) {
			if (!errs++)
				first_err = errno;
			continue;
		}
		opened++;
		if (i % 4 == 0) {
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		}
		count_of(fd);
		close(fd);
	}
	int st, ok = 1;

	for (int k = 0; k < 3; k++) {
		kill(kids[k], SIGKILL);
		ok &= waitpid(kids[k], &st, 0) == kids[k] && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	}
	CHECK(opened == TORTURE && errs == 0,
	      "30 breakpoints and watchpoints opened and closed on every CPU beside busy syscalls",
	      "%d opened, %d failed (first errno %d)", opened, errs, first_err);
	CHECK(ok, "the syscall children ran until killed", "a child died otherwise");
	CHECK(syscall(__NR_getppid) == getppid(), "the kernel still works after the torture", "no");
	close(map);
}

/* The address of name and of the symbol after it in /proc/kallsyms (its end), or 0. */
static uint64_t ksym_span(const char *name, uint64_t *end)
{
	uint64_t a = ksym(name), next = UINT64_MAX;
	FILE *f = a ? fopen("/proc/kallsyms", "r") : NULL;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "%llx", &v) == 1 && v > a && v < next)
			next = v;
	}
	fclose(f);
	*end = next;
	return a;
}

/* A child's work on the kernel paths the breakpoints sit on: copies to and from user memory
 * (into pages not yet faulted in), pipes, getppid, yields, forks.  Exits 1 on a wrong result. */
static void hot_work(volatile uint64_t *progress)
{
	pid_t pp = getppid();
	int p[2];
	char buf[256], back[256];

	if (pipe(p))
		_exit(1);
	for (uint64_t n = 0;; n++) {
		char *fresh = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				   0);

		if (fresh == MAP_FAILED)
			_exit(1);
		for (unsigned int i = 0; i < sizeof(buf); i++)
			buf[i] = (char)(n + i);
		/* a write from, and a read into, memory that faults in the copy */
		memcpy(fresh + PG - 100, buf, sizeof(buf));
		if (write(p[1], fresh + PG - 100, sizeof(buf)) != sizeof(buf) ||
		    read(p[0], fresh + 2 * PG - 50, sizeof(buf)) != sizeof(buf) ||
		    memcmp(fresh + 2 * PG - 50, buf, sizeof(buf)))
			_exit(2);
		if (write(p[1], buf, sizeof(buf)) != sizeof(buf) ||
		    read(p[0], back, sizeof(back)) != sizeof(back) || memcmp(back, buf, sizeof(buf)))
			_exit(3);
		munmap(fresh, 3 * PG);
		if (syscall(__NR_getppid) != pp)
			_exit(4);
		sched_yield();
		if (n % 16 == 0) {
			pid_t c = fork();
			int st;

			if (c == 0)
				_exit(7);
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
				_exit(5);
		}
		__atomic_add_fetch(progress, 1, __ATOMIC_RELAXED);
	}
}

/* Execute breakpoints (period 1) on every instruction of hot kernel functions (the first
 * HOT_INSNS of each, for HOT_SECONDS at most), 6 at a time on each CPU, while children run hot_work on every CPU: their results stay right, the hits
 * count, nothing hangs.  The functions: the user copy routines (whose faults may sleep in the
 * middle of a step), the interrupt-mask and scheduler paths, the syscall path. */
static void t_hot(const char *only_fn)
{
	static const char *const linux_names[] = {
		"__arch_copy_to_user", "__arch_copy_from_user", "invoke_syscall", NULL,
	};
	static const char *const our_names[] = {
		"__schedule", "ksvc_irq_save", "arch_copy_user", "trap_return_user", NULL,
	};
	const char *const *names = ksym("__arm64_sys_getppid") ? linux_names : our_names;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	volatile uint64_t *progress = mmap(NULL, PG, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t kids[4];
	int nfn = 0, bad_open = 0, first_err = 0;
	long long total = 0;
	uint64_t insns = 0;

	/* a time budget: each hit costs much under QEMU, more on a loaded host */
	time_t deadline = time(NULL) + HOT_SECONDS;

	if (ncpu < 1 || ncpu > 16)
		ncpu = 1;
	if (progress == MAP_FAILED) {
		tap_fail("hot functions", "mmap: errno %d", errno);
		return;
	}
	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			pin(k % (int)ncpu);
			hot_work(progress);
		}
	}
	for (unsigned int f = 0; names[f]; f++) {
		uint64_t end, a = only_fn && strcmp(only_fn, names[f]) ? 0 : ksym_span(names[f], &end);

		if (!a)
			continue;
		if (end - a > HOT_INSNS * 4)
			end = a + HOT_INSNS * 4;
		nfn++;
		long long fn_hits = 0;

		for (uint64_t at = a; at < end && time(NULL) < deadline; at += 6 * 4) {
			int fds[16 * 6], n = 0;

			for (int cpu = 0; cpu < ncpu; cpu++)
				for (uint64_t i = at; i < at + 6 * 4 && i < end; i += 4) {
					struct perf_event_attr attr;

					attr_bp(&attr, HW_BREAKPOINT_X, i, 4);
					attr.disabled = 0;
					attr.sample_period = 1;
					attr.sample_type = PERF_SAMPLE_IP;
					fds[n] = (int)perf_open(&attr, -1, cpu);
					if (fds[n] < 0) {
						if (!bad_open++)
							first_err = errno;
						continue;
					}
					n++;
				}
			insns += (uint64_t)n / (uint64_t)ncpu;
			usleep(10000);
			while (n > 0) {
				long long c = count_of(fds[--n]);

				fn_hits += c > 0 ? c : 0;
				close(fds[n]);
			}
		}
		printf("# %s: %lld hits, %ld s\n", names[f], fn_hits, (long)time(NULL));
		total += fn_hits;
	}
	/* the children still make progress (within 5 s: a loaded host may starve them a while) */
	uint64_t before = *progress, after = before;

	for (int w = 0; w < 500 && after == before; w++) {
		usleep(10000);
		after = *progress;
	}
	int st, ok = 1;

	for (int k = 0; k < 4; k++) {
		kill(kids[k], SIGKILL);
		ok &= waitpid(kids[k], &st, 0) == kids[k] && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		if (!WIFSIGNALED(st))
			printf("# child %d: status %#x\n", k, st);
	}
	printf("# %d functions, %llu instructions, %lld hits, %llu rounds of work\n", nfn,
	       (unsigned long long)insns, total, (unsigned long long)after);
	CHECK(nfn >= 1 && insns > 0 && bad_open == 0,
	      "execute breakpoints open on every instruction of the hot functions on every CPU",
	      "%d functions, %d opens failed (first errno %d)", nfn, bad_open, first_err);
	CHECK(total > 0, "they count hits", "no hits");
	CHECK(ok && after > before, "the work beside them got right results and went on",
	      "children %s, progress %llu -> %llu", ok ? "ok" : "failed",
	      (unsigned long long)before, (unsigned long long)after);
	munmap((void *)progress, PG);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : ""; /* one part: "torture" or "hot" */

	tap_init("t_kbp", 90);
	uint64_t fn = ksym("__arm64_sys_getppid");

	if (!fn)
		fn = ksym("sys_getppid"); /* perfkernel's name for it */
	if (!fn) {
		tap_fail("kernel symbols", "no getppid handler in /proc/kallsyms");
		return tap_done();
	}
	printf("# getppid handler %#llx, %ld s\n", (unsigned long long)fn, (long)time(NULL));
	pin(0);
	if (!*only) {
		t_errnos(fn);
		t_exec(fn);
		t_sample(fn);
		t_watch(0);
	}
	if (!*only || !strcmp(only, "torture"))
		t_torture(fn);
	if (!*only || !strcmp(only, "hot"))
		t_hot(argc > 2 ? argv[2] : NULL);
	return tap_done();
}
