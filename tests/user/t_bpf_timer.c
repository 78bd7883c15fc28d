/* t_bpf_timer: bpf_timer helpers that run, as Linux 6.1 has them.  SYSCALL programs
 * (tests/user/bpf/timer.bpf.c, loaded by libbpf: callbacks want BTF func_info) run by
 * BPF_PROG_TEST_RUN init a timer in an ARRAY or HASH value, set a callback that counts in the
 * value and in a global counter, and start it: the callback runs once per start, on the CPU that
 * started it, may re-arm itself, and gets -EDEADLK cancelling itself.  Errnos: init with a clock
 * other than MONOTONIC/REALTIME/BOOTTIME or flags >= 16 EINVAL, a second init EBUSY, a map with
 * no user reference EPERM; set_callback, start and cancel of an uninitialized timer EINVAL, start
 * with flags or without a callback (also after a cancel, which forgets it) EINVAL; cancel 1 when
 * pending, else 0.  Overwriting an array element, deleting a hash element (from user space or
 * from the callback itself) and closing the map's last fd cancel and free the timer: no callback
 * runs after, and the program the timer kept alive goes.  The verifier: tracing programs may not
 * use a map with a timer, a callback must return 0, bpf_timer_init's map is the timer's, no
 * load or store touches the timer.  A program without callbacks of its own (JIT-compiled)
 * starts and cancels.  Then races: two threads calling the helpers while the elements are
 * overwritten, deleted and re-inserted, and many objects with timers re-arming themselves
 * closed while they fire.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct elem {
	uint64_t t[2];
	uint64_t count, rearm;
	int64_t deadlk;
	uint64_t cb_cpu;
	int64_t restart;
};

struct ctl {
	uint32_t op, which, key, cpu;
	uint64_t arg, arg2;
	int64_t ret;
};

enum { OP_INIT = 1, OP_SETCB, OP_START, OP_CANCEL, OP_SETCB_DEL };
enum { ARR = 0, HMAP, GONE };

extern const char _binary_timer_bpf_o_start[], _binary_timer_bpf_o_end[];

static char logbuf[65536];

struct inst {
	struct bpf_object *obj;
	int ctl, jctl, arr, hmap, gone, fired;
};

/* The object with its ctl and jctl programs loaded */
static int inst_open(struct inst *in)
{
	struct bpf_program *p;

	in->obj = bpf_object__open_mem(_binary_timer_bpf_o_start,
				       (size_t)(_binary_timer_bpf_o_end - _binary_timer_bpf_o_start),
				       NULL);
	if (!in->obj)
		return -1;
	bpf_object__for_each_program(p, in->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "ctl") ||
						     !strcmp(bpf_program__name(p), "jctl"));
	if (bpf_object__load(in->obj)) {
		bpf_object__close(in->obj);
		return -1;
	}
	in->ctl = bpf_program__fd(bpf_object__find_program_by_name(in->obj, "ctl"));
	in->jctl = bpf_program__fd(bpf_object__find_program_by_name(in->obj, "jctl"));
	in->arr = bpf_map__fd(bpf_object__find_map_by_name(in->obj, "arr"));
	in->hmap = bpf_map__fd(bpf_object__find_map_by_name(in->obj, "hmap"));
	in->gone = bpf_map__fd(bpf_object__find_map_by_name(in->obj, "gone"));
	in->fired = bpf_map__fd(bpf_object__find_map_by_name(in->obj, "fired"));
	return 0;
}

/* One run of program fd: the helper's result (-2000 - errno when the run itself failed) */
static long run_fd(int fd, uint32_t which, uint32_t op, uint32_t key, uint64_t arg,
		   uint64_t arg2, uint32_t *cpu)
{
	struct ctl c = { .op = op, .which = which, .key = key, .arg = arg, .arg2 = arg2 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(fd, &o))
		return -2000 - errno;
	if (cpu)
		*cpu = c.cpu;
	return c.ret;
}

static long run(const struct inst *in, uint32_t which, uint32_t op, uint32_t key, uint64_t arg,
		uint64_t arg2, uint32_t *cpu)
{
	return run_fd(in->ctl, which, op, key, arg, arg2, cpu);
}

static uint64_t fired(const struct inst *in)
{
	uint32_t k = 0;
	uint64_t v = 0;

	bpf_map_lookup_elem(in->fired, &k, &v);
	return v;
}

static struct elem get(int fd, uint32_t key)
{
	struct elem e;

	memset(&e, 0xff, sizeof(e));
	bpf_map_lookup_elem(fd, &key, &e);
	return e;
}

static void put(int fd, uint32_t key, uint64_t rearm)
{
	struct elem e = { .rearm = rearm };

	bpf_map_update_elem(fd, &key, &e, BPF_ANY);
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

/* got and want evaluated once: tap_check is a function, so a macro naming them twice ran every
 * helper twice (a second "start 1 ms" re-armed a timer whose first expiry a stalled vCPU had
 * already let fire: "the callback ran once: got 2") */
#define EQ(got, want, what)                                                                        \
	do {                                                                                       \
		long got_ = (long)(got), want_ = (long)(want);                                     \
		CHECK(got_ == want_, what, "got %ld, want %ld", got_, want_);                      \
	} while (0)

static void refusals(void)
{
	static const struct {
		const char *prog, *msg;
		int err;
	} r[] = {
		{ "pe", "tracing progs cannot use bpf_timer yet", -EINVAL },
		{ "badret", "At async callback the register R0 has value (0x1; 0x0) should have been in (0x0; 0x0)", -EINVAL },
		{ "mismatch", "timer pointer in R1 map_uid=0 doesn't match map pointer in R2 map_uid=0", -EINVAL },
		{ "peek", "bpf_timer cannot be accessed directly by load/store", -EACCES },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		int err = load_one_prog(_binary_timer_bpf_o_start, _binary_timer_bpf_o_end, r[i].prog,
					logbuf, sizeof(logbuf));
		char what[64];

		snprintf(what, sizeof(what), "%s refused", r[i].prog);
		CHECK(err == r[i].err && strstr(logbuf, r[i].msg), what, "load %d, log ends: %s", err,
		      logbuf + (strlen(logbuf) > 400 ? strlen(logbuf) - 400 : 0));
	}
}

static void errnos_and_runs(const struct inst *in)
{
	uint32_t cpu = 0;
	struct elem e;
	uint64_t f0;

	EQ(run(in, ARR, OP_SETCB, 0, 0, 0, NULL), -EINVAL, "set_callback uninitialized: -EINVAL");
	EQ(run(in, ARR, OP_START, 0, 1000, 0, NULL), -EINVAL, "start uninitialized: -EINVAL");
	EQ(run(in, ARR, OP_CANCEL, 0, 0, 0, NULL), -EINVAL, "cancel uninitialized: -EINVAL");
	EQ(run(in, ARR, OP_INIT, 0, 2, 0, NULL), -EINVAL, "init CLOCK_PROCESS_CPUTIME_ID: -EINVAL");
	EQ(run(in, ARR, OP_INIT, 0, 4, 0, NULL), -EINVAL, "init CLOCK_MONOTONIC_RAW: -EINVAL");
	EQ(run(in, ARR, OP_INIT, 0, 16 | 1, 0, NULL), -EINVAL, "init flags 17: -EINVAL");
	EQ(run(in, ARR, OP_INIT, 0, 1, 0, NULL), 0, "init CLOCK_MONOTONIC");
	EQ(run(in, ARR, OP_INIT, 0, 1, 0, NULL), -EBUSY, "second init: -EBUSY");
	EQ(run(in, ARR, OP_START, 0, 1000000, 0, NULL), -EINVAL, "start without a callback: -EINVAL");
	EQ(run(in, ARR, OP_SETCB, 0, 0, 0, NULL), 0, "set_callback");
	EQ(run(in, ARR, OP_START, 0, 1000000, 1, NULL), -EINVAL, "start flags 1: -EINVAL");
	f0 = fired(in);
	EQ(run(in, ARR, OP_START, 0, 1000000, 0, &cpu), 0, "start 1 ms");
	msleep(100);
	e = get(in->arr, 0);
	EQ(e.count, 1, "the callback ran once");
	EQ(fired(in) - f0, 1, "the global counter too");
	EQ(e.deadlk, -EDEADLK, "cancel from its own callback: -EDEADLK");
	EQ(e.cb_cpu, cpu, "it ran on the CPU that started it");
	CHECK(e.t[0] == 0 && e.t[1] == 0, "user space reads the timer as zeros", "%llx %llx",
	      (unsigned long long)e.t[0], (unsigned long long)e.t[1]);
	EQ(run(in, ARR, OP_CANCEL, 0, 0, 0, NULL), 0, "cancel of an expired timer: 0");
	EQ(run(in, ARR, OP_START, 0, 1000000, 0, NULL), -EINVAL, "start after cancel (no callback): -EINVAL");
	EQ(run(in, ARR, OP_SETCB, 0, 0, 0, NULL), 0, "set_callback again");
	EQ(run(in, ARR, OP_START, 0, 1000000000, 0, NULL), 0, "start 1 s");
	EQ(run_fd(in->jctl, ARR, OP_START, 0, 2000000000, 0, NULL), 0,
	   "start again from a JIT-compiled program: 2 s");
	EQ(run_fd(in->jctl, ARR, OP_CANCEL, 0, 0, 0, NULL), 1, "cancel of a pending timer: 1");
	EQ(run_fd(in->jctl, ARR, OP_CANCEL, 0, 0, 0, NULL), 0, "cancel again: 0");
	EQ(run_fd(in->jctl, ARR, OP_INIT, 0, 1, 0, NULL), -EBUSY, "init from it: -EBUSY");
	{
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		char jit = '?';
		FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "r");

		if (f) {
			jit = (char)fgetc(f);
			fclose(f);
		}
		memset(&info, 0, sizeof(info));
		bpf_obj_get_info_by_fd(in->jctl, &info, &len);
		if (jit == '1')
			CHECK(info.jited_prog_len > 0, "that program is JIT-compiled", "jited_prog_len 0");
		else
			tap_skip("that program is JIT-compiled", "bpf_jit_enable %c", jit);
	}

	/* re-arming from the callback: 1 + 3 runs */
	put(in->arr, 1, 3);
	f0 = fired(in);
	EQ(run(in, ARR, OP_INIT, 1, 7, 0, NULL), 0, "init CLOCK_BOOTTIME");
	EQ(run(in, ARR, OP_SETCB, 1, 0, 0, NULL), 0, "set_callback");
	EQ(run(in, ARR, OP_START, 1, 1000000, 0, NULL), 0, "start 1 ms, re-arming 3 times");
	msleep(200);
	e = get(in->arr, 1);
	EQ(e.count, 4, "the callback ran 4 times");
	EQ(e.rearm, 0, "its re-arms done");
	EQ(e.restart, 0, "bpf_timer_start from the callback: 0");
	EQ(fired(in) - f0, 4, "the global counter too");

	/* overwriting an array element frees its timer */
	f0 = fired(in);
	EQ(run(in, ARR, OP_INIT, 2, 0, 0, NULL), 0, "init CLOCK_REALTIME");
	EQ(run(in, ARR, OP_SETCB, 2, 0, 0, NULL), 0, "set_callback");
	EQ(run(in, ARR, OP_START, 2, 200000000, 0, NULL), 0, "start 200 ms");
	put(in->arr, 2, 0);
	msleep(400);
	EQ(fired(in) - f0, 0, "an overwritten element's timer never fires");
	EQ(run(in, ARR, OP_INIT, 2, 1, 0, NULL), 0, "the element takes a new timer");

	/* deleting a hash element frees its timer */
	put(in->hmap, 5, 0);
	f0 = fired(in);
	EQ(run(in, HMAP, OP_INIT, 5, 1, 0, NULL), 0, "hash: init");
	EQ(run(in, HMAP, OP_SETCB, 5, 0, 0, NULL), 0, "hash: set_callback");
	EQ(run(in, HMAP, OP_START, 5, 200000000, 0, NULL), 0, "hash: start 200 ms");
	EQ(bpf_map_delete_elem(in->hmap, &(uint32_t){ 5 }), 0, "hash: delete the element");
	msleep(400);
	EQ(fired(in) - f0, 0, "a deleted element's timer never fires");
	EQ(run(in, HMAP, OP_INIT, 5, 1, 0, NULL), -1001, "the element is gone");

	/* a hash element whose callback deletes it */
	put(in->hmap, 6, 0);
	f0 = fired(in);
	EQ(run(in, HMAP, OP_INIT, 6, 1, 0, NULL), 0, "hash: init");
	EQ(run(in, HMAP, OP_SETCB_DEL, 6, 0, 0, NULL), 0, "hash: set_callback (deleting)");
	EQ(run(in, HMAP, OP_START, 6, 1000000, 0, NULL), 0, "hash: start 1 ms");
	msleep(100);
	EQ(fired(in) - f0, 1, "the deleting callback ran once");
	{
		int r = bpf_map_lookup_elem(in->hmap, &(uint32_t){ 6 }, &e);

		CHECK(r == -ENOENT || (r == -1 && errno == ENOENT), "its element is gone",
		      "lookup %d", r);
	}

	/* the hash update replaces the element and its timer */
	put(in->hmap, 7, 0);
	f0 = fired(in);
	EQ(run(in, HMAP, OP_INIT, 7, 1, 0, NULL), 0, "hash: init");
	EQ(run(in, HMAP, OP_SETCB, 7, 0, 0, NULL), 0, "hash: set_callback");
	EQ(run(in, HMAP, OP_START, 7, 200000000, 0, NULL), 0, "hash: start 200 ms");
	put(in->hmap, 7, 0);
	msleep(400);
	EQ(fired(in) - f0, 0, "a replaced hash element's timer never fires");
	EQ(run(in, HMAP, OP_INIT, 7, 1, 0, NULL), 0, "the new element takes a new timer");

	/* a map with no user reference left */
	close(in->gone);
	EQ(run(in, GONE, OP_INIT, 0, 1, 0, NULL), -EPERM, "init in a map without user fds: -EPERM");
}

static int prog_gone(uint32_t id)
{
	for (int i = 0; i < 200; i++) {
		int fd = obj_fd_by_id(BPF_PROG_GET_FD_BY_ID, id);

		if (fd < 0)
			return errno == ENOENT;
		close(fd);
		msleep(10);
	}
	return 0;
}

/* closing the last fd of the map cancels the timer; the program it kept alive goes */
static void close_map(void)
{
	struct inst in;
	uint32_t id;
	uint64_t f0;
	int fd;

	if (inst_open(&in)) {
		tap_fail("open the object", "%s", strerror(errno));
		return;
	}
	f0 = fired(&in);
	id = obj_id(in.ctl);
	EQ(run(&in, ARR, OP_INIT, 3, 1, 0, NULL), 0, "init");
	EQ(run(&in, ARR, OP_SETCB, 3, 0, 0, NULL), 0, "set_callback");
	EQ(run(&in, ARR, OP_START, 3, 300000000, 0, NULL), 0, "start 300 ms");
	close(in.ctl);
	fd = obj_fd_by_id(BPF_PROG_GET_FD_BY_ID, id);
	CHECK(fd >= 0, "the armed timer keeps its program alive", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	close(in.arr);
	msleep(500);
	EQ(fired(&in) - f0, 0, "closing the map's last fd cancelled the timer");
	CHECK(prog_gone(id), "the program went with the timer", "still there");
	close(in.hmap);
	close(in.gone);
	close(in.fired);
	bpf_object__close(in.obj);
}

/* many objects whose timers re-arm themselves, closed while they fire */
static void torture(void)
{
	enum { N = 24 };
	uint32_t ids[N];
	int bad = 0, gone = 0;

	for (int i = 0; i < N; i++) {
		struct inst in;

		ids[i] = 0;
		if (inst_open(&in)) {
			bad++;
			continue;
		}
		ids[i] = obj_id(in.ctl);
		for (uint32_t k = 0; k < 16; k++) {
			put(in.arr, k, 5);
			put(in.hmap, k, 5);
		}
		for (uint32_t k = 0; k < 16; k++) {
			for (uint32_t w = ARR; w <= HMAP; w++) {
				bad += run(&in, w, OP_INIT, k, 1, 0, NULL) != 0;
				bad += run(&in, w, w == HMAP && k % 4 == 3 ? OP_SETCB_DEL : OP_SETCB,
					   k, 0, 0, NULL) != 0;
				bad += run(&in, w, OP_START, k, 20000 * (k + i % 3), 0, NULL) != 0;
			}
		}
		if (i % 2)
			msleep(1);
		bpf_object__close(in.obj);
	}
	EQ(bad, 0, "torture: every helper call succeeded");
	for (int i = 0; i < N; i++)
		gone += ids[i] && prog_gone(ids[i]);
	EQ(gone, N, "torture: every program went");
}

struct hammer {
	const struct inst *in;
	unsigned int seed;
	long runs, odd;
};

static volatile int hammer_stop;

/* helper calls in any order on a few elements while they are overwritten and deleted */
static void *hammer(void *arg)
{
	struct hammer *h = arg;

	while (!hammer_stop) {
		uint32_t r = (uint32_t)rand_r(&h->seed), k = r % 4, w = (r >> 2) % 2, op = (r >> 3) % 5 + 1;
		long ret;

		if (op == OP_SETCB_DEL && w == ARR)
			op = OP_SETCB;
		ret = run(h->in, w, op, k, op == OP_START ? (r >> 6) % 200000 : 1, 0, NULL);
		h->runs++;
		/* what each helper may answer from user space, the element being there or not */
		if (ret != 0 && !(op == OP_CANCEL && ret == 1) && ret != -EINVAL &&
		    !(op == OP_INIT && ret == -EBUSY) && !(w == HMAP && ret == -1001))
			h->odd++;
	}
	return NULL;
}

/* two threads driving the timers of one object while the main thread overwrites, deletes and
 * re-inserts their elements, then closes the object under them */
static void race(void)
{
	struct hammer h[2];
	pthread_t th[2];
	struct inst in;
	long runs = 0, odd = 0;
	uint32_t id;
	int fd;

	if (inst_open(&in)) {
		tap_fail("race: open the object", "%s", strerror(errno));
		return;
	}
	id = obj_id(in.ctl);
	for (uint32_t k = 0; k < 4; k++)
		put(in.hmap, k, 2);
	hammer_stop = 0;
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){ .in = &in, .seed = 7u + (unsigned int)i };
		pthread_create(&th[i], NULL, hammer, &h[i]);
	}
	for (int i = 0; i < 600; i++) {
		uint32_t k = (uint32_t)i % 4;

		if (i % 3 == 0)
			put(in.arr, k, 1);
		else if (i % 3 == 1)
			bpf_map_delete_elem(in.hmap, &k);
		else
			put(in.hmap, k, 2);
		if (i % 50 == 0)
			msleep(1);
	}
	hammer_stop = 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		runs += h[i].runs;
		odd += h[i].odd;
	}
	msleep(50);
	/* every timer dropped its reference once: the program lives while its fd does */
	fd = obj_fd_by_id(BPF_PROG_GET_FD_BY_ID, id);
	CHECK(fd >= 0, "race: the program is still there", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	bpf_object__close(in.obj);
	CHECK(prog_gone(id), "race: the program went with the object", "still there");
	CHECK(runs > 0 && odd == 0, "race: helpers under overwrites and deletes answer as Linux",
	      "%ld runs, %ld unexpected results", runs, odd);
}

int main(void)
{
	struct inst in;

	tap_init("t_bpf_timer", 120);
	libbpf_set_print(faults_quiet);
	refusals();
	if (inst_open(&in)) {
		tap_fail("open and load timer.bpf.o", "%s", strerror(errno));
		return tap_done();
	}
	errnos_and_runs(&in);
	bpf_object__close(in.obj);
	close_map();
	race();
	torture();
	return tap_done();
}
