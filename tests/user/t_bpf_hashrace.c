/* t_bpf_hashrace: a BPF_MAP_TYPE_HASH under a PERF_EVENT program on every CPU while the
 * syscall side churns the same keys.  One busy thread per CPU (up to 3, beside the main one)
 * samples itself with cpu-clock every 20 us; its program picks a key 0..31
 * (bpf_get_prandom_u32), adds 1 to its value when the lookup finds it, else inserts
 * key << 32 | 1 (BPF_NOEXIST), and counts its runs in an ARRAY map.  Meanwhile the main thread
 * deletes, re-inserts (key << 32) and walks the keys for 300 ms.  A program's lookup takes no
 * lock (perfkernel as Linux's RCU lookup), so elements are deleted and reused under it.
 * Checks: the programs ran on the sampled threads; every syscall got 0 or an errno the ABI
 * gives for it (delete ENOENT, lookup ENOENT, get_next_key ENOENT, update E2BIG); after the
 * sampling stops every element's value still names its own key (the high half) and at most
 * 32 elements exist; a key inserted then is found.  No crash, no hang (watchdog).
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01 (5/5).
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include "tap.h"

enum { NKEYS = 32, MAX_THREADS = 3 };

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define ALU64_IMM(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define FP_ADDR(d, off) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, 10, 0, 0), ALU64_IMM(BPF_ADD, d, off)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
/* r0 = lookup(map, fp - 4) */
#define LOOKUP(map) INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map), \
	INSN(0, 0, 0, 0, 0), FP_ADDR(2, -4), CALL(BPF_FUNC_map_lookup_elem)
/* r0 ? *r0 += 1 (atomic), skip: r0 NULL jumps over it */
#define ADD_ONE(skip) INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, skip, 0), ALU64_IMM(BPF_MOV, 1, 1), \
	INSN(BPF_STX | BPF_DW | BPF_ATOMIC, 0, 1, 0, BPF_ADD)

static int map_create(int type, unsigned int vs, unsigned int max)
{
	union bpf_attr a = { .map_type = (uint32_t)type, .key_size = 4, .value_size = vs,
			     .max_entries = max };

	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static long map_op(int cmd, int fd, const void *key, void *value, uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)value; /* next_key for BPF_MAP_GET_NEXT_KEY */
	a.flags = flags;
	return sys_bpf(cmd, &a);
}

/* key = prandom & 31; v = lookup(hash, key); v ? *v += 1 : update(hash, key, key << 32 | 1,
 * NOEXIST); runs[0] += 1; return 0 (no sample written: no ring needed) */
static int load_prog(int hash, int runs)
{
	struct bpf_insn p[] = {
		CALL(BPF_FUNC_get_prandom_u32),
		ALU64_IMM(BPF_AND, 0, NKEYS - 1),
		INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0),
		LOOKUP(hash), /* 3..7 */
		ADD_ONE(3), /* 8..10 */
		INSN(BPF_JMP | BPF_JA, 0, 0, 12, 0), /* to 24 */
		INSN(BPF_LDX | BPF_MEM | BPF_W, 1, 10, -4, 0),
		ALU64_IMM(BPF_LSH, 1, 32), ALU64_IMM(BPF_OR, 1, 1),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -16, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, hash), INSN(0, 0, 0, 0, 0),
		FP_ADDR(2, -4), FP_ADDR(3, -16),
		ALU64_IMM(BPF_MOV, 4, BPF_NOEXIST),
		CALL(BPF_FUNC_map_update_elem),
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), /* 24: runs[0] += 1 */
		LOOKUP(runs),
		ADD_ONE(2),
		ALU64_IMM(BPF_MOV, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static char log[4096];
	union bpf_attr a = { .prog_type = BPF_PROG_TYPE_PERF_EVENT, .insns = (uintptr_t)p,
			     .insn_cnt = sizeof(p) / sizeof(p[0]), .license = (uintptr_t)"GPL",
			     .log_buf = (uintptr_t)log, .log_size = sizeof(log), .log_level = 1 };
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);

	if (fd < 0)
		tap_fail("load the program", "%s; log: %.300s", strerror(errno), log);
	return fd;
}

struct worker {
	pthread_t t;
	int cpu, prog, err;
	atomic_int ready;
};

static atomic_int stop;

static void *work(void *arg)
{
	struct worker *w = arg;
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 20000,
					.sample_type = PERF_SAMPLE_IP };
	volatile unsigned long spin = 0;
	cpu_set_t s;
	int fd;

	CPU_ZERO(&s);
	CPU_SET(w->cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, w->prog) != 0)
		w->err = errno ? errno : EINVAL;
	atomic_store(&w->ready, 1);
	while (!atomic_load(&stop))
		spin++;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 0 or the errno the ABI allows for it: counted; anything else is reported once */
static int bad_errnos;

static void allow(long r, int err, int allowed, const char *what)
{
	if (r == 0 || (r == -1 && err == allowed))
		return;
	if (bad_errnos++ < 3)
		tap_fail(what, "got %ld errno %d (%s)", r, r == -1 ? err : 0, strerror(err));
}

/* the syscall side for 300 ms: delete, re-insert and walk every key */
static void churn(int hash)
{
	uint64_t end = now_ns() + 300000000ull;

	while (now_ns() < end) {
		for (uint32_t k = 0; k < NKEYS; k++) {
			uint64_t v = (uint64_t)k << 32;
			uint32_t next;
			long r;

			errno = 0;
			r = map_op(BPF_MAP_DELETE_ELEM, hash, &k, NULL, 0);
			allow(r, errno, ENOENT, "delete");
			if (k & 1) {
				r = map_op(BPF_MAP_UPDATE_ELEM, hash, &k, &v, BPF_ANY);
				allow(r, errno, E2BIG, "update");
			}
			r = map_op(BPF_MAP_LOOKUP_ELEM, hash, &k, &v, 0);
			allow(r, errno, ENOENT, "lookup");
			r = map_op(BPF_MAP_GET_NEXT_KEY, hash, &k, &next, 0);
			allow(r, errno, ENOENT, "get_next_key");
		}
	}
}

int main(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = ncpu > 1 ? (int)(ncpu - 1 < MAX_THREADS ? ncpu - 1 : MAX_THREADS) : 1;
	struct worker w[MAX_THREADS];
	int hash, runs, prog, n = 0, bad = 0, err = 0;
	uint64_t nruns = 0;
	uint32_t k, zero = 0, key;

	tap_init("t_bpf_hashrace", 60);
	hash = map_create(BPF_MAP_TYPE_HASH, 8, NKEYS);
	runs = map_create(BPF_MAP_TYPE_ARRAY, 8, 1);
	if (hash < 0 || runs < 0) {
		tap_fail("create the maps", "%s", strerror(errno));
		return tap_done();
	}
	prog = load_prog(hash, runs);
	if (prog < 0)
		return tap_done();
	memset(w, 0, sizeof(w));
	for (int i = 0; i < nthreads; i++) {
		w[i].cpu = (i + 1) % (int)(ncpu > 0 ? ncpu : 1);
		w[i].prog = prog;
		if (pthread_create(&w[i].t, NULL, work, &w[i]) != 0) {
			tap_fail("start a sampled thread", "%s", strerror(errno));
			return tap_done();
		}
		while (!atomic_load(&w[i].ready))
			sched_yield();
		if (w[i].err)
			err = w[i].err;
	}
	if (!CHECK(!err, "each thread samples itself with the program", "%s", strerror(err))) {
		atomic_store(&stop, 1);
		for (int i = 0; i < nthreads; i++)
			pthread_join(w[i].t, NULL);
		return tap_done();
	}
	churn(hash);
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].t, NULL);
	CHECK(bad_errnos == 0, "every syscall: 0 or its ABI errno", "%d others", bad_errnos);
	map_op(BPF_MAP_LOOKUP_ELEM, runs, &zero, &nruns, 0);
	CHECK(nruns > 0, "the programs ran", "%llu runs", (unsigned long long)nruns);
	/* quiescent now: every element names its key, and there are at most NKEYS of them */
	for (int more = map_op(BPF_MAP_GET_NEXT_KEY, hash, NULL, &key, 0) == 0; more && n <= NKEYS;
	     more = map_op(BPF_MAP_GET_NEXT_KEY, hash, &k, &key, 0) == 0) {
		uint64_t v = 0;

		k = key;
		n++;
		if (map_op(BPF_MAP_LOOKUP_ELEM, hash, &k, &v, 0) != 0 || v >> 32 != k || k >= NKEYS)
			bad++;
	}
	CHECK(n <= NKEYS && !bad, "after the race every value names its own key",
	      "%d elements, %d wrong", n, bad);
	for (k = 0; k < NKEYS; k++) {
		uint64_t v = (uint64_t)k << 32 | 7, got = 0;

		if (map_op(BPF_MAP_UPDATE_ELEM, hash, &k, &v, BPF_ANY) != 0 ||
		    map_op(BPF_MAP_LOOKUP_ELEM, hash, &k, &got, 0) != 0 || got != v)
			bad++;
	}
	CHECK(!bad, "then every key inserted is found with its value", "%d wrong", bad);
	printf("# %llu program runs, %d threads\n", (unsigned long long)nruns, nthreads);
	return tap_done();
}
