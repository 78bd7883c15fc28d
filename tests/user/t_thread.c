/* t_thread: pthreads, mutex contention, futex WAIT/WAKE (private, bitset,
 * timeouts), CLONE_CHILD_CLEARTID, TLS, thread ids, exit_group from a thread.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static long futex(void *uaddr, int op, int val, const struct timespec *ts, void *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static __thread int tls_var = 7;
static __thread char tls_buf[64];

enum { NT = 16, ITERS = 2000 };
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static _Atomic long acounter;

struct targ {
	int idx;
	pid_t tid;
	int tls_ok;
	void *tls_addr;
};

static void *worker(void *a)
{
	struct targ *t = a;
	t->tid = gettid();
	t->tls_ok = tls_var == 7;
	tls_var = 100 + t->idx;
	snprintf(tls_buf, sizeof(tls_buf), "thread %d", t->idx);
	t->tls_addr = &tls_var;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		atomic_fetch_add(&acounter, 1);
		if ((i & 255) == 0)
			sched_yield();
	}
	char want[64];
	snprintf(want, sizeof(want), "thread %d", t->idx);
	t->tls_ok &= tls_var == 100 + t->idx && strcmp(tls_buf, want) == 0;
	return (void *)(intptr_t)(t->idx * 3);
}

static void *getpid_thread(void *a)
{
	int *r = a;
	r[0] = getpid();
	r[1] = gettid();
	r[2] = getppid();
	return NULL;
}

static void check_pthreads(void)
{
	pthread_t th[NT];
	struct targ a[NT];
	int created = 0;
	tls_var = 1;
	for (int i = 0; i < NT; i++) {
		a[i] = (struct targ){.idx = i};
		if (pthread_create(&th[i], NULL, worker, &a[i]) == 0)
			created++;
	}
	CHECK(created == NT, "pthread_create 16 threads", "created %d", created);
	int joined = 0, rv_ok = 1;
	for (int i = 0; i < created; i++) {
		void *rv;
		if (pthread_join(th[i], &rv) == 0)
			joined++;
		rv_ok &= (intptr_t)rv == i * 3;
	}
	CHECK(joined == created && rv_ok, "pthread_join all, return values", "joined %d rv_ok %d", joined, rv_ok);
	CHECK(counter == (long)created * ITERS, "mutex-protected counter exact", "%ld want %ld", counter,
	      (long)created * ITERS);
	CHECK(acounter == (long)created * ITERS, "atomic counter exact", "%ld", (long)acounter);
	int tls_ok = 1, distinct = 1, tid_ok = 1;
	for (int i = 0; i < created; i++) {
		tls_ok &= a[i].tls_ok;
		tid_ok &= a[i].tid != getpid() && a[i].tid > 0;
		for (int j = 0; j < i; j++)
			distinct &= a[i].tid != a[j].tid && a[i].tls_addr != a[j].tls_addr;
	}
	CHECK(tls_ok, "TLS initial value per thread and private writes", "mismatch");
	CHECK(tls_var == 1, "main thread TLS untouched by threads", "%d", tls_var);
	CHECK(tid_ok, "gettid in thread != getpid", "mismatch");
	CHECK(distinct, "thread ids and TLS addresses distinct", "mismatch");
	/* 200 short threads, sequentially: resources are reclaimed */
	int ok = 0, r3[3];
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, getpid_thread, r3) == 0 &&
		    pthread_join(t, NULL) == 0)
			ok++;
	}
	CHECK(ok == 200, "200 create/join cycles", "ok %d", ok);
}

static int futex_word;
static _Atomic int woke;

static void *futex_waiter(void *a)
{
	long r = futex(&futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	if (r == 0)
		atomic_fetch_add(&woke, 1);
	return NULL;
}

static void check_futex(void)
{
	int r3[3];
	pthread_t t;
	pthread_create(&t, NULL, getpid_thread, r3);
	pthread_join(t, NULL);
	CHECK(r3[0] == getpid() && r3[1] != getpid() && r3[2] == getppid(), "thread: getpid shared, gettid own",
	      "pid %d tid %d", r3[0], r3[1]);

	int w = 1;
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), EAGAIN, "FUTEX_WAIT value mismatch -> EAGAIN");
	struct timespec to = {0, 50 * 1000 * 1000};
	long long t0 = now_ns();
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_PRIVATE, 1, &to, NULL, 0), ETIMEDOUT, "FUTEX_WAIT relative timeout -> ETIMEDOUT");
	long long dt = now_ns() - t0;
	CHECK(dt >= 50000000LL, "FUTEX_WAIT waited >= 50ms", "%lld ns", dt);
	/* WAIT_BITSET uses an absolute timeout (CLOCK_MONOTONIC by default) */
	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 30 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	t0 = now_ns();
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 1, &abs, NULL, FUTEX_BITSET_MATCH_ANY), ETIMEDOUT,
		     "FUTEX_WAIT_BITSET absolute timeout -> ETIMEDOUT");
	CHECK(now_ns() - t0 >= 25000000LL && now_ns() - t0 < 2000000000LL, "WAIT_BITSET honoured absolute deadline",
	      "%lld ns", now_ns() - t0);
	struct timespec past = {0, 0};
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 1, &past, NULL, FUTEX_BITSET_MATCH_ANY), ETIMEDOUT,
		     "WAIT_BITSET deadline in the past -> ETIMEDOUT at once");
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0), EINVAL,
		     "WAIT_BITSET with bitset 0 -> EINVAL");
	struct timespec badto = {0, 1000000000};
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_PRIVATE, 1, &badto, NULL, 0), EINVAL, "FUTEX_WAIT bad timespec -> EINVAL");
	EXPECT_ERRNO(futex((char *)&w + 1, FUTEX_WAIT_PRIVATE, 1, &to, NULL, 0), EINVAL, "FUTEX_WAIT unaligned -> EINVAL");
	EXPECT_ERRNO(futex(&w, 99, 0, NULL, NULL, 0), ENOSYS, "futex unknown op -> ENOSYS");
	CHECK(futex(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == 0, "FUTEX_WAKE with no waiters -> 0", "errno %d", errno);

	/* wake exactly N of M waiters */
	enum { M = 4 };
	pthread_t ws[M];
	futex_word = 0;
	for (int i = 0; i < M; i++)
		pthread_create(&ws[i], NULL, futex_waiter, NULL);
	struct timespec d = {0, 200 * 1000 * 1000};
	nanosleep(&d, NULL); /* let them block */
	long n1 = futex(&futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	nanosleep(&d, NULL);
	CHECK(n1 == 1 && woke == 1, "FUTEX_WAKE 1 wakes exactly one", "ret %ld woke %d", n1, (int)woke);
	long n2 = futex(&futex_word, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0);
	for (int i = 0; i < M; i++)
		pthread_join(ws[i], NULL);
	CHECK(n2 == M - 1 && woke == M, "FUTEX_WAKE 100 wakes the rest, returns count", "ret %ld woke %d", n2, (int)woke);

	/* shared (non-private) futex across fork on a MAP_SHARED page */
	int *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh[0] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec lim = {3, 0};
		long r = futex(&sh[0], FUTEX_WAIT, 0, &lim, NULL, 0);
		_exit(r == 0 && sh[0] == 1 ? 0 : 1);
	}
	nanosleep(&d, NULL);
	sh[0] = 1;
	long nw = 0;
	for (int i = 0; i < 50 && nw == 0; i++) {
		nw = futex(&sh[0], FUTEX_WAKE, 1, NULL, NULL, 0);
		if (!nw)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(nw == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "shared FUTEX_WAKE wakes a forked process", "nw %ld st %#x",
	      nw, st);
	munmap(sh, 4096);
}

/* raw clone with CLONE_CHILD_CLEARTID: the kernel zeroes *ctid and futex-wakes it */
static volatile int ctid_word;
static char cstack[64 * 1024] __attribute__((aligned(16)));

static int clone_fn(void *a)
{
	struct timespec d = {0, 50 * 1000 * 1000};
	nanosleep(&d, NULL);
	syscall(SYS_exit, 0); /* thread exit only */
	return 0;
}

static void check_cleartid(void)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
		    CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
	ctid_word = -1;
	int tid = clone(clone_fn, cstack + sizeof(cstack), flags, NULL, NULL, NULL, (int *)&ctid_word);
	if (!CHECK(tid > 0, "clone thread with CHILD_SETTID|CHILD_CLEARTID", "errno %d", errno))
		return;
	int v;
	for (int i = 0; i < 100 && (v = ctid_word) == -1; i++)
		sched_yield();
	/* wait on the tid word until the kernel clears it */
	long long t0 = now_ns();
	int rounds = 0;
	while ((v = ctid_word) != 0 && rounds < 100) {
		struct timespec to = {1, 0};
		futex((void *)&ctid_word, FUTEX_WAIT, v, &to, NULL, 0);
		rounds++;
	}
	CHECK(ctid_word == 0, "CLONE_CHILD_CLEARTID zeroes tid word and wakes the futex", "word %d after %lld ns",
	      ctid_word, now_ns() - t0);
	CHECK(now_ns() - t0 < 2000000000LL, "woken promptly (not by timeout)", "%lld ns", now_ns() - t0);
}

static void *exit_group_thread(void *a)
{
	struct timespec d = {0, 20 * 1000 * 1000};
	nanosleep(&d, NULL);
	syscall(SYS_exit_group, 33);
	return NULL;
}

static void *sleeper(void *a)
{
	for (;;)
		pause();
	return NULL;
}

static void check_exit_group(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t1, t2, t3;
		pthread_create(&t1, NULL, sleeper, NULL);
		pthread_create(&t2, NULL, sleeper, NULL);
		pthread_create(&t3, NULL, exit_group_thread, NULL);
		for (;;)
			pause();
	}
	int st = 0;
	pid_t r = waitpid(pid, &st, 0);
	CHECK(r == pid && WIFEXITED(st) && WEXITSTATUS(st) == 33, "exit_group from a thread kills all, status 33",
	      "r %d status %#x", r, st);
	/* the main thread exiting with SYS_exit leaves the process alive while a thread runs */
	pid = fork();
	if (pid == 0) {
		pthread_t t;
		pthread_create(&t, NULL, exit_group_thread, NULL);
		syscall(SYS_exit, 5);
	}
	r = waitpid(pid, &st, 0);
	CHECK(r == pid && WIFEXITED(st) && WEXITSTATUS(st) == 33, "main thread SYS_exit: process lives on until exit_group",
	      "status %#x", st);
}

/* ---- more futex ops and a condition variable ---- */
static int bs_word;
static _Atomic int bs_woke;
static void *bitset_waiter(void *a)
{
	struct timespec lim;
	clock_gettime(CLOCK_MONOTONIC, &lim);
	lim.tv_sec += 3;
	long r = futex(&bs_word, FUTEX_WAIT_BITSET_PRIVATE, 0, &lim, NULL, 0x1);
	if (r == 0)
		atomic_fetch_add(&bs_woke, 1);
	return NULL;
}

static int rq_a, rq_b;
static _Atomic int rq_woke;
static void *requeue_waiter(void *a)
{
	struct timespec lim = {3, 0};
	long r = futex(&rq_a, FUTEX_WAIT_PRIVATE, 0, &lim, NULL, 0);
	if (r == 0)
		atomic_fetch_add(&rq_woke, 1);
	return NULL;
}

static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_ready, cv_seen;
static void *cv_waiter(void *a)
{
	pthread_mutex_lock(&cmu);
	while (!cv_ready)
		pthread_cond_wait(&cv, &cmu);
	cv_seen++;
	pthread_mutex_unlock(&cmu);
	return NULL;
}

static void check_futex_more(void)
{
	struct timespec d = {0, 150 * 1000 * 1000};
	pthread_t t;
	bs_word = 0;
	pthread_create(&t, NULL, bitset_waiter, NULL);
	nanosleep(&d, NULL);
	long r1 = futex(&bs_word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0x2);
	nanosleep(&d, NULL);
	CHECK(r1 == 0 && bs_woke == 0, "FUTEX_WAKE_BITSET with disjoint bitset wakes nobody", "r %ld woke %d", r1,
	      (int)bs_woke);
	long r2 = futex(&bs_word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0x3);
	pthread_join(t, NULL);
	CHECK(r2 == 1 && bs_woke == 1, "FUTEX_WAKE_BITSET with overlapping bitset wakes it", "r %ld woke %d", r2,
	      (int)bs_woke);
	/* plain FUTEX_WAKE uses bitset ~0 and wakes a bitset waiter */
	bs_woke = 0;
	pthread_create(&t, NULL, bitset_waiter, NULL);
	nanosleep(&d, NULL);
	long r3 = futex(&bs_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	CHECK(r3 == 1 && bs_woke == 1, "FUTEX_WAKE wakes a WAIT_BITSET waiter", "r %ld", r3);

	/* CLOCK_REALTIME absolute deadline */
	int w = 1;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	rt.tv_nsec += 20 * 1000 * 1000;
	if (rt.tv_nsec >= 1000000000) {
		rt.tv_sec++;
		rt.tv_nsec -= 1000000000;
	}
	EXPECT_ERRNO(futex(&w, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &rt, NULL, FUTEX_BITSET_MATCH_ANY),
		     ETIMEDOUT, "WAIT_BITSET|CLOCK_REALTIME deadline -> ETIMEDOUT");
	EXPECT_ERRNO(futex(&w, FUTEX_WAKE_PRIVATE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS,
		     "FUTEX_CLOCK_REALTIME on FUTEX_WAKE -> ENOSYS");

	/* CMP_REQUEUE: wake 1, move the rest to rq_b */
	enum { M = 3 };
	pthread_t ws[M];
	rq_a = rq_b = 0;
	for (int i = 0; i < M; i++)
		pthread_create(&ws[i], NULL, requeue_waiter, NULL);
	nanosleep(&d, NULL);
	EXPECT_ERRNO(futex(&rq_a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)(long)INT32_MAX, &rq_b, 5), EAGAIN,
		     "FUTEX_CMP_REQUEUE with *uaddr != val3 -> EAGAIN");
	long rq = futex(&rq_a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)(long)INT32_MAX, &rq_b, 0);
	nanosleep(&d, NULL);
	int woke_after_requeue = rq_woke;
	long on_a = futex(&rq_a, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0);
	long on_b = futex(&rq_b, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0);
	for (int i = 0; i < M; i++)
		pthread_join(ws[i], NULL);
	CHECK(rq == M && woke_after_requeue == 1, "FUTEX_CMP_REQUEUE returns woken+requeued (3), wakes 1",
	      "ret %ld woke %d", rq, woke_after_requeue);
	CHECK(on_a == 0 && on_b == M - 1 && rq_woke == M, "requeued waiters sit on the second futex", "a %ld b %ld", on_a,
	      on_b);

	/* condition variable broadcast */
	pthread_t cw[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&cw[i], NULL, cv_waiter, NULL);
	nanosleep(&d, NULL);
	pthread_mutex_lock(&cmu);
	cv_ready = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cmu);
	for (int i = 0; i < 4; i++)
		pthread_join(cw[i], NULL);
	CHECK(cv_seen == 4, "pthread_cond_broadcast wakes all 4 waiters", "seen %d", cv_seen);
	/* timed cond wait times out */
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 30 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&cmu);
	int tr = pthread_cond_timedwait(&cv, &cmu, &abs);
	pthread_mutex_unlock(&cmu);
	CHECK(tr == ETIMEDOUT, "pthread_cond_timedwait -> ETIMEDOUT", "got %d", tr);
}

int main(void)
{
	tap_init("t_thread", 25);
	check_pthreads();
	check_futex();
	check_futex_more();
	check_cleartid();
	check_exit_group();
	return tap_done();
}
