/*
 * selftest.c - in-kernel self-tests of the foundation, run by kinit with the "selftest" boot
 * option: every CPU online, ticks on every CPU, IPI round trips, the scheduler spreading work
 * and honouring affinity, sleeping and waking across CPUs, timers, and allocator stress from
 * all CPUs at once.  Prints one PASS/FAIL/SKIP line per test and "N passed, M failed".
 */
#include <arch/memlayout.h>
#include <kern/format.h>
#include <kern/irq.h>
#include <kern/kernel.h>
#include <kern/mm.h>
#include <kern/platform.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/time.h>
#include "ktest.h"

extern const struct ktest __ktests_start[], __ktests_end[];
extern struct platform boot_platform;

#define FAILF(...)                                                                                 \
	do {                                                                                       \
		ksnprintf(why, why_len, __VA_ARGS__);                                              \
		return KTEST_FAIL;                                                                 \
	} while (0)

int ktest_run_all(void)
{
	int pass = 0, fail = 0, skip = 0;

	for (const struct ktest *t = __ktests_start; t < __ktests_end; t++) {
		char why[160] = "";
		int r = t->fn(why, sizeof(why));

		if (r == KTEST_PASS) {
			printk("PASS ktest: %s\n", t->name);
			pass++;
		} else if (r == KTEST_SKIP) {
			printk("SKIP ktest: %s: %s\n", t->name, why);
			skip++;
		} else {
			printk("FAIL ktest: %s: %s\n", t->name, why);
			fail++;
		}
	}
	printk("%d passed, %d failed, %d skipped\n", pass, fail, skip);
	return fail ? 1 : 0;
}

KTEST(cpus_online)
{
	if (nr_cpus_online != boot_platform.nr_cpus)
		FAILF("%u of %u CPUs online", nr_cpus_online, boot_platform.nr_cpus);
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (!cpus[i].online)
			FAILF("cpu %u offline", i);
	return KTEST_PASS;
}

KTEST(ticks_every_cpu)
{
	uint64_t before[MAX_CPUS];

	/* Every CPU's tick keeps coming: each ticks twice, within 200 periods.  Not a rate: a
	 * vCPU the host does not run for a while gets one late tick for several periods (that
	 * failed this test at 5 periods on a loaded 2-core host). */
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		before[i] = READ_ONCE(cpus[i].ticks);
	for (int p = 0; p < 200; p++) {
		unsigned int done = 0;

		sleep_ns(TICK_NS);
		for (unsigned int i = 0; i < nr_cpus_possible; i++)
			done += READ_ONCE(cpus[i].ticks) - before[i] >= 2;
		if (done == nr_cpus_possible)
			return KTEST_PASS;
	}
	for (unsigned int i = 0; i < nr_cpus_possible; i++) {
		uint64_t d = READ_ONCE(cpus[i].ticks) - before[i];

		if (d < 2)
			FAILF("cpu %u ticked %lu times in 200 tick periods", i, d);
	}
	return KTEST_PASS;
}

static void ipi_fn(void *arg)
{
	_Atomic unsigned int *hits = arg;

	atomic_fetch_add(&hits[this_cpu()->id], 1);
}

KTEST(ipi_roundtrip)
{
	static _Atomic unsigned int hits[MAX_CPUS];
	const int rounds = 200;

	if (nr_cpus_online < 2) {
		ksnprintf(why, why_len, "needs 2 CPUs");
		return KTEST_SKIP;
	}
	for (unsigned int i = 0; i < MAX_CPUS; i++)
		atomic_store(&hits[i], 0);
	uint64_t t0 = time_ns();

	for (int r = 0; r < rounds; r++)
		for (unsigned int i = 0; i < nr_cpus_possible; i++)
			smp_call(i, ipi_fn, (void *)hits, true);
	uint64_t dt = time_ns() - t0;

	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (atomic_load(&hits[i]) != (unsigned int)rounds)
			FAILF("cpu %u ran %u of %d calls", i, atomic_load(&hits[i]), rounds);
	printk("  ipi: %d synchronous calls to %u CPUs in %lu us\n", rounds, nr_cpus_possible,
	       dt / 1000);
	/* Fire-and-forget calls arrive too. */
	for (unsigned int i = 0; i < MAX_CPUS; i++)
		atomic_store(&hits[i], 0);
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		smp_call(i, ipi_fn, (void *)hits, false);
	uint64_t deadline = time_ns() + 100000000ull;

	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		while (atomic_load(&hits[i]) != 1) {
			if (time_ns() > deadline)
				FAILF("async call to cpu %u never ran", i);
			arch_cpu_relax();
		}
	return KTEST_PASS;
}

static _Atomic int calls_elsewhere, calls_made;

static void on_cpu_fn(void *arg)
{
	if (this_cpu()->id != (unsigned int)(uintptr_t)arg)
		atomic_fetch_add(&calls_elsewhere, 1);
	atomic_fetch_add(&calls_made, 1);
}

static void caller_worker(void *p)
{
	uint64_t until = time_ns() + 40 * TICK_NS;
	uint32_t x = (uint32_t)(uintptr_t)p * 2654435761u + 1;

	while (time_ns() < until) {
		x = x * 1664525 + 1013904223;
		unsigned int cpu = (x >> 16) % nr_cpus_online;

		smp_call(cpu, on_cpu_fn, (void *)(uintptr_t)cpu, (x >> 8) & 1);
	}
}

/* smp_call from tasks that are preempted and migrated while they call and wait: every call
 * runs on the CPU it names (a waiting caller that picked up calls for the CPU it had just
 * left ran them where it was; perf's remote_call relies on the CPU) */
KTEST(smp_call_runs_on_its_cpu)
{
	struct task *t[2 * MAX_CPUS];
	unsigned int n = 2 * nr_cpus_online;

	if (nr_cpus_online < 2) {
		ksnprintf(why, why_len, "needs 2 CPUs");
		return KTEST_SKIP;
	}
	atomic_store(&calls_elsewhere, 0);
	atomic_store(&calls_made, 0);
	for (unsigned int i = 0; i < n; i++) {
		t[i] = kthread_create("caller", caller_worker, (void *)(uintptr_t)(i + 1), -1);
		if (!t[i])
			FAILF("kthread_create");
	}
	for (unsigned int i = 0; i < n; i++)
		kthread_join(t[i]);
	/* fire-and-forget calls still in flight finish within a tick */
	sleep_ns(2 * TICK_NS);
	if (atomic_load(&calls_elsewhere))
		FAILF("%d of %d calls ran on another CPU", atomic_load(&calls_elsewhere),
		      atomic_load(&calls_made));
	return KTEST_PASS;
}

struct spread_arg {
	uint64_t cpus_seen; /* bit per CPU */
	uint64_t until_ns;
};

static void spread_worker(void *p)
{
	struct spread_arg *a = p;

	while (time_ns() < a->until_ns)
		__atomic_fetch_or(&a->cpus_seen, 1ull << this_cpu()->id, __ATOMIC_RELAXED);
}

KTEST(sched_spreads_work)
{
	unsigned int n = nr_cpus_online;
	struct spread_arg args[MAX_CPUS];
	struct task *tasks[MAX_CPUS];
	uint64_t union_seen = 0;

	for (unsigned int i = 0; i < n; i++) {
		args[i].cpus_seen = 0;
		args[i].until_ns = time_ns() + 30 * TICK_NS;
		tasks[i] = kthread_create("spread", spread_worker, &args[i], -1);
		if (!tasks[i])
			FAILF("kthread_create");
	}
	for (unsigned int i = 0; i < n; i++) {
		kthread_join(tasks[i]);
		union_seen |= args[i].cpus_seen;
	}
	unsigned int ran_on = 0;

	for (uint64_t m = union_seen; m; m &= m - 1) /* no __builtin_popcountll: see check-nosimd.sh */
		ran_on++;
	if (ran_on != n)
		FAILF("%u busy threads ran on CPU set %#lx only", n, union_seen);
	return KTEST_PASS;
}

static _Atomic bool preempt_stop;

static void preempt_worker(void *p)
{
	_Atomic uint64_t *count = p;
	uint64_t until = time_ns() + 400 * TICK_NS; /* a bound if the test never says stop */

	while (!atomic_load(&preempt_stop) && time_ns() < until)
		atomic_fetch_add(count, 1);
}

KTEST(preemption_time_slices)
{
	/* Two busy threads pinned to one CPU both make progress: the tick preempts them.  Waits
	 * until both have counted and there were two involuntary switches, up to 200 periods (not
	 * a rate: a vCPU the host does not run gets one late tick for several periods). */
	static _Atomic uint64_t c1, c2;
	unsigned int cpu = nr_cpus_possible - 1;
	uint64_t mid1 = 0, mid2 = 0, preempts = 0;

	atomic_store(&c1, 0);
	atomic_store(&c2, 0);
	atomic_store(&preempt_stop, false);
	struct task *a = kthread_create("busy-a", preempt_worker, (void *)&c1, (int)cpu);
	struct task *b = kthread_create("busy-b", preempt_worker, (void *)&c2, (int)cpu);

	if (!a || !b)
		FAILF("kthread_create");
	for (int p = 0; p < 200; p++) {
		sleep_ns(TICK_NS);
		mid1 = atomic_load(&c1);
		mid2 = atomic_load(&c2);
		preempts = a->nivcsw + b->nivcsw;
		if (mid1 && mid2 && preempts >= 2)
			break;
	}
	atomic_store(&preempt_stop, true);
	kthread_join(a);
	kthread_join(b);
	if (!mid1 || !mid2)
		FAILF("after 200 ticks: %lu and %lu iterations (one thread starved)", mid1, mid2);
	if (preempts < 2)
		FAILF("only %lu involuntary switches", preempts);
	return KTEST_PASS;
}

static uint64_t affinity_migrations; /* the worker's own count: kthread_join frees it */

static void affinity_worker(void *p)
{
	_Atomic int *where = p;
	struct task *me = current_task();

	for (unsigned int target = 0; target < nr_cpus_possible; target++) {
		sched_set_affinity(me, 1ull << target);
		if (this_cpu()->id != target) {
			atomic_store(where, -(int)target - 1);
			return;
		}
	}
	affinity_migrations = me->nr_migrations;
	atomic_store(where, 1);
}

KTEST(affinity_migrates)
{
	static _Atomic int result;

	atomic_store(&result, 0);
	affinity_migrations = 0;
	struct task *t = kthread_create("migrate", affinity_worker, (void *)&result, -1);

	if (!t)
		FAILF("kthread_create");
	kthread_join(t);
	int r = atomic_load(&result);

	if (r != 1)
		FAILF("still not on cpu %d after sched_set_affinity", -r - 1);
	if (nr_cpus_possible > 1 && affinity_migrations == 0)
		FAILF("no migrations counted");
	return KTEST_PASS;
}

/* ---- migrate_disable ---- */

struct pin_arg {
	_Atomic int tid; /* set once running (the pusher waits for it) */
	int moved; /* rounds whose CPU changed while migration was disabled (-1: never ran) */
	unsigned int from, to; /* the first such change */
	uint64_t pinned_preempts; /* involuntary switches while pinned */
	uint64_t slept; /* sleeps while pinned */
};

static _Atomic bool pin_stop;

/* Spin for ticks ticks; 1 when this_cpu() differs from cpu on the way */
static int spin_on(unsigned int cpu, unsigned int ticks, struct pin_arg *a)
{
	uint64_t until = time_ns() + ticks * TICK_NS;

	while (time_ns() < until) {
		unsigned int now = this_cpu()->id;

		if (now != cpu) {
			if (!a->moved++) {
				a->from = cpu;
				a->to = now;
			}
			return 1;
		}
	}
	return 0;
}

/* Rounds of: disable, spin 3 ticks, nest, sleep half a tick, spin, unnest, spin, enable */
static void pin_worker(void *p)
{
	struct pin_arg *a = p;
	struct task *me = current_task();

	a->moved = 0;
	atomic_store(&a->tid, me->tid);
	for (int r = 0; r < 6; r++) {
		migrate_disable();
		unsigned int cpu = this_cpu()->id;
		uint64_t inv = me->nivcsw;

		if (spin_on(cpu, 3, a))
			goto next;
		migrate_disable();
		sleep_ns(TICK_NS / 2);
		a->slept++;
		if (spin_on(cpu, 1, a)) {
			migrate_enable();
			goto next;
		}
		migrate_enable(); /* inner: still pinned */
		spin_on(cpu, 1, a);
next:
		a->pinned_preempts += me->nivcsw - inv;
		migrate_enable();
	}
}

static void pin_busy(void *p)
{
	uint64_t until = time_ns() + 2000 * TICK_NS; /* a bound if the test never says stop */

	(void)p;
	while (!atomic_load(&pin_stop) && time_ns() < until)
		;
}

KTEST(migrate_disable_pins)
{
	/* 2 x nCPU pinning workers and nCPU busy threads, while this thread keeps setting each
	 * worker's affinity to one CPU after another: no worker's CPU changes while pinned */
	static struct pin_arg args[2 * MAX_CPUS];
	struct task *w[2 * MAX_CPUS], *busy[MAX_CPUS];
	unsigned int n = nr_cpus_online, nw = 2 * n;
	uint64_t preempts = 0, slept = 0, pushes = 0;

	atomic_store(&pin_stop, false);
	for (unsigned int i = 0; i < n; i++)
		if (!(busy[i] = kthread_create("pin-busy", pin_busy, NULL, -1)))
			FAILF("kthread_create");
	for (unsigned int i = 0; i < nw; i++) {
		memset(&args[i], 0, sizeof(args[i]));
		args[i].moved = -1;
		if (!(w[i] = kthread_create("pinned", pin_worker, &args[i], -1)))
			FAILF("kthread_create");
	}
	for (unsigned int k = 0; k < 100000; k++) {
		bool done = true;

		for (unsigned int i = 0; i < nw; i++)
			if (READ_ONCE(w[i]->state) != TASK_ZOMBIE)
				done = false;
		if (done)
			break;
		struct task *t = w[k % nw];

		if (READ_ONCE(t->state) != TASK_ZOMBIE && atomic_load(&args[k % nw].tid)) {
			sched_set_affinity(t, 1ull << ((k / nw + k) % n));
			pushes++;
		}
		sleep_ns(TICK_NS / 4);
	}
	for (unsigned int i = 0; i < nw; i++) {
		sched_set_affinity(w[i], ~0ull);
		kthread_join(w[i]);
	}
	atomic_store(&pin_stop, true);
	for (unsigned int i = 0; i < n; i++)
		kthread_join(busy[i]);
	for (unsigned int i = 0; i < nw; i++) {
		if (args[i].moved)
			FAILF("worker %u: %d rounds moved while pinned (first cpu %u -> %u)", i,
			      args[i].moved, args[i].from, args[i].to);
		preempts += args[i].pinned_preempts;
		slept += args[i].slept;
	}
	if (!preempts)
		FAILF("no worker was preempted while pinned (%lu affinity changes)", pushes);
	if (slept != 6 * nw)
		FAILF("%lu of %u pinned sleeps", slept, 6 * nw);
	return KTEST_PASS;
}

/* Pinned on one CPU with every CPU allowed, time-sliced there with a busy thread, while the
 * other CPUs idle and would pull it on their ticks */
static void unpulled_worker(void *p)
{
	struct pin_arg *a = p;
	struct task *me = current_task();

	a->moved = 0;
	sched_set_affinity(me, 1);
	migrate_disable();
	sched_set_affinity(me, ~0ull);
	uint64_t inv = me->nivcsw;

	spin_on(0, 20, a);
	a->pinned_preempts = me->nivcsw - inv;
	migrate_enable();
}

KTEST(migrate_disable_not_pulled)
{
	static struct pin_arg a;

	if (nr_cpus_online < 2)
		return ksnprintf(why, why_len, "one CPU"), KTEST_SKIP;
	memset(&a, 0, sizeof(a));
	a.moved = -1;
	atomic_store(&pin_stop, false);
	struct task *b = kthread_create("pin-busy", pin_busy, NULL, 0);
	struct task *t = kthread_create("pin-idle", unpulled_worker, &a, -1);

	if (!b || !t)
		FAILF("kthread_create");
	kthread_join(t);
	atomic_store(&pin_stop, true);
	kthread_join(b);
	if (a.moved)
		FAILF("moved while pinned (%d: cpu %u -> %u)", a.moved, a.from, a.to);
	if (!a.pinned_preempts)
		FAILF("never preempted while pinned");
	return KTEST_PASS;
}

static void defer_worker(void *p)
{
	_Atomic int *res = p;
	struct task *me = current_task();

	migrate_disable();
	unsigned int cpu = this_cpu()->id, other = (cpu + 1) % nr_cpus_online;

	sched_set_affinity(me, 1ull << other);
	for (uint64_t until = time_ns() + 2 * TICK_NS; time_ns() < until;)
		sched_yield(); /* a switch, which must not move it */
	if (this_cpu()->id != cpu) {
		migrate_enable();
		atomic_store(res, 1); /* moved while pinned */
		return;
	}
	migrate_disable(); /* nested: the inner enable does not move it */
	migrate_enable();
	if (this_cpu()->id != cpu) {
		migrate_enable();
		atomic_store(res, 2);
		return;
	}
	migrate_enable(); /* the outermost: the affinity takes effect */
	atomic_store(res, this_cpu()->id == other ? 4 : 3);
}

KTEST(migrate_disable_defers_affinity)
{
	static _Atomic int res;
	static const char *const what[] = { "no result", "moved by a yield while pinned",
					    "moved by the inner migrate_enable",
					    "not moved by the outer migrate_enable" };
	struct task *t;

	if (nr_cpus_online < 2)
		return ksnprintf(why, why_len, "one CPU"), KTEST_SKIP;
	atomic_store(&res, 0);
	if (!(t = kthread_create("pin-defer", defer_worker, (void *)&res, -1)))
		FAILF("kthread_create");
	kthread_join(t);
	if (atomic_load(&res) != 4)
		FAILF("%s", what[atomic_load(&res) & 3]);
	return KTEST_PASS;
}

struct ping {
	struct wait_queue wq;
	_Atomic int stage;
};

static void pong_worker(void *p)
{
	struct ping *pg = p;

	for (int i = 0; i < 50; i++) {
		wait_event(&pg->wq, atomic_load(&pg->stage) == 2 * i + 1);
		atomic_store(&pg->stage, 2 * i + 2);
		waitq_wake_all(&pg->wq);
	}
}

KTEST(sleep_wakeup_across_cpus)
{
	static struct ping pg;

	waitq_init(&pg.wq);
	atomic_store(&pg.stage, 0);
	int other = nr_cpus_possible > 1 ? (int)(this_cpu()->id + 1) % (int)nr_cpus_possible : -1;
	struct task *t = kthread_create("pong", pong_worker, &pg, other);

	if (!t)
		FAILF("kthread_create");
	for (int i = 0; i < 50; i++) {
		atomic_store(&pg.stage, 2 * i + 1);
		waitq_wake_all(&pg.wq);
		wait_event(&pg.wq, atomic_load(&pg.stage) == 2 * i + 2);
	}
	kthread_join(t);
	uint64_t t0 = time_ns();

	sleep_ns(10000000);
	uint64_t slept = time_ns() - t0;

	if (slept < 10000000)
		FAILF("sleep_ns(10 ms) returned after %lu ns", slept);
	return KTEST_PASS;
}

static _Atomic int timer_fired;
static void timer_fn(struct ktimer *t)
{
	(void)t;
	atomic_fetch_add(&timer_fired, 1);
}

KTEST(timers_fire_and_cancel)
{
	struct ktimer a, b;

	atomic_store(&timer_fired, 0);
	ktimer_init(&a, timer_fn);
	ktimer_init(&b, timer_fn);
	unsigned long f = ksvc_irq_save();

	ktimer_arm(&a, time_ns() + 2000000);
	ktimer_arm(&b, time_ns() + 1000000000); /* pending still when the vCPU stalls a while */
	ksvc_irq_restore(f);
	if (!ktimer_cancel(&b))
		FAILF("cancel of a pending timer failed");
	sleep_ns(8000000);
	if (atomic_load(&timer_fired) != 1)
		FAILF("%d timers fired, expected 1", atomic_load(&timer_fired));
	if (ktimer_cancel(&a))
		FAILF("cancel of a fired timer reported pending");
	return KTEST_PASS;
}

/* A callback that runs for 30 us and re-arms its timer 20 us on, on its own CPU */
static struct ktimer rearm_timer;
static _Atomic int rearm_fired;

static void rearm_fn(struct ktimer *t)
{
	uint64_t end = time_ns() + 30000;

	atomic_fetch_add(&rearm_fired, 1);
	while (time_ns() < end)
		arch_cpu_relax();
	ktimer_arm(t, time_ns() + 20000);
}

static void rearm_start(void *arg)
{
	ktimer_arm(arg, time_ns() + 20000);
}

/* ktimer_cancel from another CPU while the callback runs and re-arms: the timer is neither
 * armed nor fires again once cancel returns (it used to come back armed, and its owner freed
 * it while it was still on the other CPU's list). */
KTEST(timers_cancel_self_rearming)
{
	if (nr_cpus_online < 2) {
		ksnprintf(why, why_len, "needs 2 CPUs");
		return KTEST_SKIP;
	}
	ktimer_init(&rearm_timer, rearm_fn);
	for (int i = 0; i < 500; i++) {
		unsigned int other = (this_cpu()->id + 1) % nr_cpus_online;
		uint64_t until = time_ns() + 20000 + (uint64_t)(i % 8) * 7000;

		smp_call(other, rearm_start, &rearm_timer, true);
		while (time_ns() < until)
			arch_cpu_relax();
		ktimer_cancel(&rearm_timer);
		int armed = __atomic_load_n(&rearm_timer.cpu, __ATOMIC_ACQUIRE), n;

		if (armed >= 0) {
			while (ktimer_cancel(&rearm_timer) || rearm_timer.cpu >= 0)
				;
			FAILF("round %d: still armed on cpu %d after ktimer_cancel", i, armed);
		}
		n = atomic_load(&rearm_fired);
		until = time_ns() + 100000;
		while (time_ns() < until)
			arch_cpu_relax();
		if (atomic_load(&rearm_fired) != n)
			FAILF("round %d: fired after ktimer_cancel returned", i);
	}
	return KTEST_PASS;
}

static _Atomic int stress_errors;

static void alloc_worker(void *p)
{
	uint32_t x = (uint32_t)(uintptr_t)p * 2654435761u + 1;
	void *ptrs[64] = { 0 };
	size_t sizes[64] = { 0 };

	for (int round = 0; round < 3000; round++) {
		x = x * 1664525 + 1013904223;
		int slot = (x >> 8) % 64;

		if (ptrs[slot]) {
			unsigned char *q = ptrs[slot];

			for (size_t i = 0; i < sizes[slot]; i += 61)
				if (q[i] != (unsigned char)(slot + sizes[slot]))
					atomic_fetch_add(&stress_errors, 1);
			if (sizes[slot] > 4096)
				free_pages(q, 1);
			else
				kfree(q);
			ptrs[slot] = NULL;
			continue;
		}
		size_t size = (x >> 16) % 9 == 0 ? 8192 : 1 + (x >> 16) % 3000;
		unsigned char *q = size > 4096 ? alloc_pages(1) : kmalloc(size);

		if (!q) {
			atomic_fetch_add(&stress_errors, 1);
			continue;
		}
		memset(q, (int)(slot + size), size);
		ptrs[slot] = q;
		sizes[slot] = size;
	}
	for (int s = 0; s < 64; s++) {
		if (!ptrs[s])
			continue;
		if (sizes[s] > 4096)
			free_pages(ptrs[s], 1);
		else
			kfree(ptrs[s]);
	}
}

KTEST(allocator_stress_all_cpus)
{
	struct task *t[MAX_CPUS];
	uint64_t free_before = mem_free_bytes(), bytes_before = kernel_kmem.bytes_in_use;

	atomic_store(&stress_errors, 0);
	for (unsigned int i = 0; i < nr_cpus_possible; i++) {
		t[i] = kthread_create("alloc", alloc_worker, (void *)(uintptr_t)(i + 1), (int)i);
		if (!t[i])
			FAILF("kthread_create");
	}
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		kthread_join(t[i]);
	if (atomic_load(&stress_errors))
		FAILF("%d corrupted or failed allocations", atomic_load(&stress_errors));
	if (kernel_kmem.bytes_in_use != bytes_before)
		FAILF("kmalloc bytes in use %lu -> %lu", bytes_before, kernel_kmem.bytes_in_use);
	/* Slab pages of the joined threads' task structs may stay cached; allow a few. */
	if (free_before - mem_free_bytes() > 16 * 4096 && mem_free_bytes() < free_before)
		FAILF("free memory %lu -> %lu bytes", free_before, mem_free_bytes());
	return KTEST_PASS;
}

/* Does the page at pa lie in one of the ranges mm_init kept, rounded out to pages as it does? */
static bool in_boot_hole(uint64_t pa, const struct phys_range *holes, int nholes)
{
	for (int i = 0; i < nholes; i++)
		if (pa >= ALIGN_DOWN(holes[i].base, PAGE_SIZE) &&
		    pa < ALIGN_UP(holes[i].base + holes[i].size, PAGE_SIZE))
			return true;
	return false;
}

/* Can EL1 write va, and does it reach pa?  AT asks the MMU without taking a fault. */
static bool linear_map_writable(uint64_t pa)
{
	unsigned long f = ksvc_irq_save(); /* PAR_EL1 is per CPU: no switch in between */
	uint64_t par, va = (uint64_t)phys_to_virt(pa);

	__asm__ volatile("at s1e1w, %1\n\tisb\n\tmrs %0, par_el1" : "=r"(par) : "r"(va) : "memory");
	ksvc_irq_restore(f);
	return !(par & 1) && (par & 0x0000fffffffff000ull) == (pa & ~(PAGE_SIZE - 1));
}

/*
 * Every page of RAM the DT lists is mapped writable in the linear map and has metadata, and
 * the allocator manages exactly the pages mm_init did not keep back: a linear map that covers
 * less than the DT says (a 1 GiB block skipped because the DTB's 2 MiB blocks were there
 * first) or a page array past the mapped region fails here.  Then the highest free page is
 * written and read back through the linear map.
 */
KTEST(page_allocator_covers_ram)
{
	const struct platform *pf = &boot_platform;
	const struct phys_range *holes;
	int nholes = mm_boot_holes(&holes);
	uint64_t managed = 0, ram = 0;

	for (unsigned int i = 0; i < pf->nr_mem; i++) {
		uint64_t base = pf->mem[i].base, size = pf->mem[i].size;
		const struct page_zone *z = NULL;

		ram += size;
		for (unsigned int j = 0; j < kernel_pages.nr_zones; j++)
			if (kernel_pages.zones[j].base_pfn == base >> PAGE_SHIFT)
				z = &kernel_pages.zones[j];
		if (!z || z->npages != size >> PAGE_SHIFT)
			FAILF("RAM %#lx+%#lx has %s", base, size, z ? "a short zone" : "no zone");
		for (uint64_t off = 0; off < size; off += 2ull << 20)
			if (!linear_map_writable(base + off))
				FAILF("RAM %#lx not writable in the linear map", base + off);
		if (!linear_map_writable(base + size - PAGE_SIZE))
			FAILF("RAM %#lx not writable in the linear map", base + size - PAGE_SIZE);
		/* Unlocked reads: a managed page's state changes but never becomes RESERVED. */
		for (uint64_t n = 0; n < z->npages; n++) {
			uint64_t pa = base + (n << PAGE_SHIFT);
			bool kept = READ_ONCE(z->pages[n].state) == PAGE_RESERVED;

			if (kept != in_boot_hole(pa, holes, nholes))
				FAILF("page %#lx is %s", pa, kept ? "not managed" : "managed but kept");
			managed += !kept;
		}
	}
	if (managed != kernel_pages.nr_managed)
		FAILF("%lu pages managed in the zones, %lu counted", managed, kernel_pages.nr_managed);
	if (mem_total_bytes() > ram || mem_total_bytes() < ram / 2)
		FAILF("%lu bytes managed of %lu bytes of RAM", mem_total_bytes(), ram);

	/* The highest free block: its pages are nobody's while the allocator lock is held. */
	unsigned long f = spin_lock_irqsave(&kernel_pages.lock);
	uint64_t top = 0;
	bool found = false;

	for (unsigned int j = 0; j < kernel_pages.nr_zones; j++) {
		const struct page_zone *z = &kernel_pages.zones[j];

		for (unsigned int o = 0; o <= PAGE_MAX_ORDER; o++) {
			struct list_node *pos;

			list_for_each(pos, &z->free[o]) {
				const struct page *pg = list_entry(pos, struct page, node);
				uint64_t last = z->base_pfn + (uint64_t)(pg - z->pages) + (1ul << o) - 1;

				if (!found || last > top)
					top = last;
				found = true;
			}
		}
	}
	bool ok = true;

	if (found) {
		volatile uint64_t *p = phys_to_virt(top << PAGE_SHIFT);

		for (unsigned int i = 0; i < PAGE_SIZE / 8; i++)
			p[i] = top ^ i;
		for (unsigned int i = 0; i < PAGE_SIZE / 8 && ok; i++)
			ok = p[i] == (top ^ i);
	}
	spin_unlock_irqrestore(&kernel_pages.lock, f);
	if (!found)
		FAILF("no free page");
	if (!ok)
		FAILF("highest free page %#lx did not keep what was written", top << PAGE_SHIFT);
	printk("  memory: %lu MiB of RAM, %lu MiB managed, highest free page %#lx\n", ram >> 20,
	       mem_total_bytes() >> 20, top << PAGE_SHIFT);
	return KTEST_PASS;
}
