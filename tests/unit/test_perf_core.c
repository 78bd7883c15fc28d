/*
 * test_perf_core.c - the perf core as the kernel runs it (core.c, ctx.c, mmap.c, sample.c,
 * overflow.c, sideband.c, sw.c, pmuv3.c, bpf_attach.c and bpf/), driven through
 * perf_event_open and the file operations against the ksvc fake and the fake PMUv3 registers:
 * open/close orderings and errno, the unwinding of every allocation failure of an open (no
 * fd, no event, no context entry left; LeakSanitizer checks the memory), the overflow path
 * (PMU interrupt, cpu-clock timer, a software event) through a BPF program into the ring
 * against a simulated reader, inheritance with the count folded back at exit, and
 * PERF_EVENT_IOC_SET_OUTPUT racing a reader wakeup (another thread plays the other CPU).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <arch/dbg_sysreg.h>
#include <arch/pmu_sysreg.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <perf/perf.h>
#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

#define EV_CPU_CYCLES 0x11
/* QEMU -cpu max: SW_INCR, INST_RETIRED, CPU_CYCLES */
#define PMCEID0 ((1ull << 0x08) | (1ull << 0x11) | (1ull << 0x00))

/* ---- the syscall and file operations, as user space reaches them ---- */

static struct perf_event_attr attr_of(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	return a;
}

static int open_ev(struct perf_event_attr *a, int pid, int cpu, int group, unsigned long flags)
{
	return (int)perf_event_open(a, pid, cpu, group, flags);
}

static const struct ksvc_file_ops *ops_of(int fd, void **priv)
{
	const struct ksvc_file_ops *ops;

	*priv = ksvc_fake_fd_priv(fd, &ops);
	assert_non_null(*priv);
	return ops;
}

static long rd(int fd, void *buf, size_t n)
{
	void *priv;

	return ops_of(fd, &priv)->read(priv, buf, n);
}

static long ioc(int fd, unsigned int cmd, unsigned long arg)
{
	void *priv;

	return ops_of(fd, &priv)->ioctl(priv, cmd, arg);
}

static uint64_t count_of(int fd)
{
	uint64_t v = ~0ull;

	assert_int_equal(rd(fd, &v, sizeof(v)), sizeof(v));
	return v;
}

static struct perf_event *event_of(int fd)
{
	void *priv;

	ops_of(fd, &priv);
	return priv;
}

/* mmap of 1 + data_pages pages, shared and writable: the ring */
static struct perf_ring *map_ring(int fd, unsigned int data_pages)
{
	struct ksvc_mmap m = { .len = (1ull + data_pages) * KSVC_PAGE_SIZE, .shared = true,
			       .write = true };
	void *priv;
	const struct ksvc_file_ops *ops = ops_of(fd, &priv);

	assert_int_equal(ops->mmap(priv, &m), 0);
	return m.map_priv;
}

static void unmap_ring(int fd, struct perf_ring *r)
{
	void *priv;

	ops_of(fd, &priv)->mmap_close(priv, r);
}

/* ---- a simulated reader: what perf record does with the mapped pages ---- */

struct rec {
	struct perf_event_header h;
	uint64_t body[64];
};

/* The next record, or false: data_head with acquire, copy out (it may wrap), data_tail with
 * release (the partner of the writer's data_tail acquire in ring.c). */
static bool next_record(struct perf_ring *r, struct rec *out)
{
	struct perf_event_mmap_page *up = r->user_page;
	uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = up->data_tail;
	uint8_t *dst = (uint8_t *)out;

	if (tail == head)
		return false;
	for (size_t i = 0; i < sizeof(out->h); i++)
		dst[i] = r->data[(tail + i) % r->data_size];
	assert_true(out->h.size >= sizeof(out->h) && out->h.size <= sizeof(*out));
	for (size_t i = 0; i < out->h.size; i++)
		dst[i] = r->data[(tail + i) % r->data_size];
	__atomic_store_n(&up->data_tail, tail + out->h.size, __ATOMIC_RELEASE);
	return true;
}

/* Skip side-band records; the next PERF_RECORD_SAMPLE or false. */
static bool next_sample(struct perf_ring *r, struct rec *out)
{
	while (next_record(r, out))
		if (out->h.type == PERF_RECORD_SAMPLE)
			return true;
	return false;
}

/* ---- setup: perf_init once, as the kernel's boot does ---- */

static struct perf_context *task_ctx_of(struct ksvc_task *t)
{
	void *ctx = *ksvc_task_perf_slot(t);

	return ctx == PERF_TASK_DEAD ? NULL : ctx;
}

static int group_setup(void **state)
{
	pmu_fake_reset(6, 5, PMCEID0, 0);
	dbg_fake.dfr0 = 5ull << 12 | 3ull << 20;
	ksvc_fake_task(0, 100, 100);
	return perf_init();
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	ksvc_fake.fail_alloc_after = -1;
	ksvc_fake.current_task = 0;
	ksvc_fake.tid = ksvc_fake.tgid = 100;
	return 0;
}

/* ---- open and close ---- */

static void test_open_read_close(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	uint32_t small;
	int fd = open_ev(&a, 0, -1, -1, 0);

	assert_int_equal(fd, 3);
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 3, 0x1000, false);
	assert_int_equal(count_of(fd), 3);
	assert_int_equal(rd(fd, &small, sizeof(small)), -ENOSPC);
	assert_int_equal(ioc(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 3, 0x1000, false);
	assert_int_equal(count_of(fd), 3);
	assert_int_equal(ksvc_fake_close(fd), 0);
	assert_true(list_empty(&task_ctx_of(ksvc_task_current())->events));
}

/* Linux's order of checks; no error leaves an fd behind (the next open gets fd 3). */
static void test_open_errors(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr bad = attr_of(1000, 0);

	assert_int_equal(open_ev(&a, 0, -1, -1, 1ul << 20), -EINVAL); /* unknown flag */
	assert_int_equal(open_ev(&a, -1, -1, -1, 0), -EINVAL);	   /* no task, no CPU */
	assert_int_equal(open_ev(&a, 4242, -1, -1, 0), -ESRCH);	   /* no such task */
	assert_int_equal(open_ev(&a, 0, -1, 200, 0), -EBADF);	   /* group_fd not open */
	assert_int_equal(open_ev(&a, 0, 64, -1, 0), -EINVAL);	   /* CPU out of range */
	assert_int_equal(open_ev(&bad, 0, -1, -1, 0), -ENOENT);	   /* no such PMU */
	a.config = PERF_COUNT_SW_MAX;
	assert_int_equal(open_ev(&a, 0, -1, -1, 0), -ENOENT); /* sw.c's table has no row */
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	assert_int_equal(open_ev(&a, 0, -1, -1, 0), 3);
}

/* Every allocation of an open may fail: the open then fails with ENOMEM and leaves nothing
 * (fd, event, context entry, ring); the memory is LeakSanitizer's to check. */
static void test_alloc_failure_unwinds(void **state)
{
	int ok = 0;

	for (int n = 0; n < 64 && ok < 2; n++) {
		struct perf_event_attr l = attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		struct perf_event_attr s = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
		int lfd, sfd = -1;

		l.sample_period = 100000;
		s.sample_period = 100000; /* a timer of its own */
		ksvc_fake.fail_alloc_after = n;
		lfd = open_ev(&l, 0, -1, -1, 0);
		if (lfd >= 0)
			sfd = open_ev(&s, 0, -1, lfd, 0);
		ksvc_fake.fail_alloc_after = -1;
		assert_true(lfd >= 0 || lfd == -ENOMEM);
		assert_true(sfd >= 0 || sfd == -ENOMEM || sfd == -1);
		if (sfd >= 0) {
			assert_int_equal(lfd, 3);
			assert_int_equal(sfd, 4);
			assert_ptr_equal(event_of(sfd)->group_leader, event_of(lfd));
			ok++;
		}
		ksvc_fake_close_all();
		struct perf_context *ctx = task_ctx_of(ksvc_task_current());

		assert_true(!ctx || list_empty(&ctx->events));
		/* the fd table is clean: the lowest fd again */
		struct perf_event_attr t = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
		int fd = open_ev(&t, 0, -1, -1, 0);

		assert_int_equal(fd, 3);
		assert_int_equal(ksvc_fake_close(fd), 0);
	}
	assert_int_equal(ok, 2); /* the loop went past the last allocation */
}

/* Closing the leader first: its sibling leads a group of its own and still counts. */
static void test_leader_closed_first(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	int lfd = open_ev(&a, 0, -1, -1, 0);
	int sfd = open_ev(&a, 0, -1, lfd, 0);

	assert_true(lfd >= 0 && sfd >= 0);
	assert_ptr_equal(event_of(sfd)->group_leader, event_of(lfd));
	assert_int_equal(ksvc_fake_close(lfd), 0);
	assert_ptr_equal(event_of(sfd)->group_leader, event_of(sfd));
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 2, 0x1000, false);
	assert_int_equal(count_of(sfd), 2);
	assert_int_equal(ksvc_fake_close(sfd), 0);
	assert_true(list_empty(&task_ctx_of(ksvc_task_current())->events));
}

/* ---- overflow -> program -> record -> ring ---- */

static int load_prog(uint64_t ret)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = (int32_t)ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	return (int)bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}

static void pmu_overflow(uint64_t pc)
{
	uint64_t regs[PERF_REGS_NR] = { 0 };

	regs[PERF_REG_ARM64_PC] = pc;
	regs[PERF_REGS_PSTATE] = PSR_MODE_EL0t;
	pmu_fake_count(EV_CPU_CYCLES, 1000, 0);
	assert_true(pmu_fake_irq_pending());
	assert_true(ksvc_fake.pmu_irq(regs, perf_regs_user(regs)));
}

static void test_pmu_overflow_to_ring(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	struct rec rec;
	int fd, keep, drop;

	a.sample_period = 1000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	a.exclude_kernel = 1;
	fd = open_ev(&a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	struct perf_ring *r = map_ring(fd, 2);

	pmu_overflow(0x400123);
	assert_true(next_sample(r, &rec));
	assert_int_equal(rec.h.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	assert_int_equal(rec.body[0], 0x400123);	     /* IP */
	assert_int_equal(rec.body[1], 100ull << 32 | 100); /* TID: pid, tid */
	assert_int_equal(rec.body[2], 1000);		     /* PERIOD */
	assert_false(next_record(r, &rec));

	/* a program returning 0 drops the sample, one returning 1 keeps it */
	drop = load_prog(0);
	keep = load_prog(1);
	assert_true(drop >= 0 && keep >= 0);
	assert_int_equal(ioc(fd, PERF_EVENT_IOC_SET_BPF, (unsigned long)drop), 0);
	pmu_overflow(0x400200);
	assert_false(next_record(r, &rec));
	assert_int_equal(ioc(fd, PERF_EVENT_IOC_SET_BPF, (unsigned long)keep), -EEXIST);
	unmap_ring(fd, r);
	ksvc_fake_close_all(); /* the event lets its program go */

	fd = open_ev(&a, 0, -1, -1, 0);
	r = map_ring(fd, 2);
	keep = load_prog(1);
	assert_int_equal(ioc(fd, PERF_EVENT_IOC_SET_BPF, (unsigned long)keep), 0);
	pmu_overflow(0x400300);
	assert_true(next_sample(r, &rec));
	assert_int_equal(rec.body[0], 0x400300);
	unmap_ring(fd, r);
}

/* A sampling software event on this task with a one-page ring; the fake's user (and timer)
 * registers at pc. */
static int open_sw_sampling(uint64_t config, uint64_t period, uint64_t sample_type,
			    uint64_t pc, struct perf_ring **r)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, config);

	a.sample_period = period;
	a.sample_type = sample_type;
	int fd = open_ev(&a, 0, -1, -1, 0);

	assert_true(fd >= 0);
	*r = map_ring(fd, 1);
	memset(ksvc_fake.irq_regs, 0, sizeof(ksvc_fake.irq_regs));
	ksvc_fake.irq_regs[PERF_REG_ARM64_PC] = pc;
	return fd;
}

/* A software event in process context: the task's user registers, the fault address. */
static void test_sw_overflow_addr(void **state)
{
	struct perf_ring *r;
	struct rec rec;
	int fd = open_sw_sampling(PERF_COUNT_SW_PAGE_FAULTS, 2, PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
				  0x400500, &r);

	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, 0xdead000, false);
	assert_false(next_sample(r, &rec)); /* half a period */
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, 0xbeef000, false);
	assert_true(next_sample(r, &rec));
	assert_int_equal(rec.body[0], 0x400500);
	assert_int_equal(rec.body[1], 0xbeef000);
	unmap_ring(fd, r);
}

/* cpu-clock samples from its timer, with the registers the timer interrupt interrupted. */
static void test_cpu_clock_timer(void **state)
{
	struct perf_ring *r;
	struct rec rec;
	int fd = open_sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000,
				  PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD, 0x400777, &r);

	ksvc_fake.irq_user = true;
	assert_true(ksvc_fake_fire_timer(perf_core(event_of(fd))->sw_timer));
	assert_true(next_sample(r, &rec));
	assert_int_equal(rec.h.misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	assert_int_equal(rec.body[0], 0x400777);
	assert_int_equal(rec.body[1], 100000);
	/* re-armed for the next period; off once disabled */
	assert_int_equal(ioc(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	assert_false(ksvc_fake_fire_timer(perf_core(event_of(fd))->sw_timer));
	ksvc_fake.irq_user = false;
	unmap_ring(fd, r);
}

/* ---- inherit and exit ---- */

static void become(int index, int tid)
{
	struct ksvc_task *prev = ksvc_task_current();

	ksvc_fake.current_task = index;
	ksvc_fake.tid = ksvc_fake.tgid = tid;
	perf_task_switch(prev, ksvc_task_current(), false);
}

static void test_inherit_exit(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	struct ksvc_task *parent = ksvc_task_current(), *child = ksvc_fake_task(1, 101, 101);

	*ksvc_task_perf_slot(child) = NULL;
	a.inherit = 1;
	int fd = open_ev(&a, 0, -1, -1, 0);

	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 3, 0x1000, false);
	perf_task_fork(parent, child);
	struct perf_context *cctx = task_ctx_of(child);

	assert_non_null(cctx);
	assert_false(list_empty(&cctx->events)); /* the inherited copy */
	become(1, 101);
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 5, 0x2000, false);
	assert_int_equal(count_of(fd), 3 + 5); /* the parent's read sums its children */
	perf_task_exit();
	assert_ptr_equal(*ksvc_task_perf_slot(child), PERF_TASK_DEAD);
	become(0, 100);
	assert_int_equal(count_of(fd), 3 + 5); /* folded into the parent at exit */
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, 0x1000, false);
	assert_int_equal(count_of(fd), 3 + 5 + 1);
	assert_int_equal(ksvc_fake_close(fd), 0);
}

/* ---- SET_OUTPUT racing a reader wakeup ---- */

static struct {
	int e_fd, out_fd;
	struct wait_queue *out_wq; /* the hook acts at the wakeup of this queue */
	bool started;
	pthread_t th;
	_Atomic bool done;
	long set_output_ret;
	int close_ret;
} race;

/* Another CPU: SET_OUTPUT(e, -1), dropping e's reference on its target, then the target's
 * last close.  No cmocka asserts here: they may only fail on the test's own thread. */
static void *redirect_and_close(void *arg)
{
	const struct ksvc_file_ops *ops;
	void *priv = ksvc_fake_fd_priv(race.e_fd, &ops);

	(void)arg;
	race.set_output_ret = ops->ioctl(priv, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)-1);
	race.close_ret = ksvc_fake_close(race.out_fd);
	atomic_store(&race.done, true);
	return NULL;
}

/* At the target's wakeup, the other CPU runs; the waker waits up to 200 ms for it to finish,
 * which it does unless the wakeup holds the target's release off. */
static void wake_hook(struct wait_queue *wq)
{
	if (wq != race.out_wq || race.started)
		return;
	race.started = true;
	if (pthread_create(&race.th, NULL, redirect_and_close, NULL))
		return;
	for (int i = 0; i < 200 && !atomic_load(&race.done); i++)
		usleep(1000);
}

/*
 * A sample of e (from the PMU interrupt, which holds no context lock), redirected into out's
 * ring, wakes e's readers and out's.  If SET_OUTPUT and out's last close complete on another
 * CPU in between, the wakeup must not touch the freed target (AddressSanitizer: a
 * heap-use-after-free in the wait queue when it does).
 */
static void test_set_output_races_wakeup(void **state)
{
	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	int out_fd = open_ev(&a, 0, -1, -1, 0);
	void *out_priv;
	const struct ksvc_file_ops *out_ops;
	struct rec rec;

	assert_true(out_fd >= 0);
	struct perf_ring *r = map_ring(out_fd, 1);

	out_ops = ops_of(out_fd, &out_priv);
	a = attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	a.sample_period = 1000;
	a.wakeup_events = 1;
	a.sample_type = PERF_SAMPLE_IP;
	a.exclude_kernel = 1;
	int e_fd = open_ev(&a, 0, -1, -1, 0);

	assert_true(e_fd >= 0);
	assert_int_equal(ioc(e_fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)out_fd), 0);
	memset(&race, 0, sizeof(race));
	race.e_fd = e_fd;
	race.out_fd = out_fd;
	race.out_wq = perf_core(event_of(out_fd))->wq;
	ksvc_fake.on_wake = wake_hook;
	pmu_overflow(0x400400); /* the PMU interrupt: no context lock held */
	ksvc_fake.on_wake = NULL;
	assert_true(race.started);
	pthread_join(race.th, NULL);
	assert_int_equal(race.set_output_ret, 0);
	assert_int_equal(race.close_ret, 0);
	assert_true(next_sample(r, &rec)); /* written before the wakeup, still in the mapped ring */
	out_ops->mmap_close(out_priv, r);  /* the last reference: the ring goes */
	assert_int_equal(ksvc_fake_close(e_fd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_open_read_close, teardown),
	    cmocka_unit_test_teardown(test_open_errors, teardown),
	    cmocka_unit_test_teardown(test_alloc_failure_unwinds, teardown),
	    cmocka_unit_test_teardown(test_leader_closed_first, teardown),
	    cmocka_unit_test_teardown(test_pmu_overflow_to_ring, teardown),
	    cmocka_unit_test_teardown(test_sw_overflow_addr, teardown),
	    cmocka_unit_test_teardown(test_cpu_clock_timer, teardown),
	    cmocka_unit_test_teardown(test_inherit_exit, teardown),
	    cmocka_unit_test_teardown(test_set_output_races_wakeup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
