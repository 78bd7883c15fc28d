/*
 * perftorture - perf's concurrency torture: threads of one process work on one shared table of
 * perf fds at once, as careless or hostile programs do, while children fork, exec and exit.
 *
 *   perftorture [threads] [seconds] [seed]
 *
 * Every thread picks, at random: perf_event_open (software clocks and faults, cycles counting
 * and sampling, dummy; on the task or on a CPU; inherit; in a group of another slot's event,
 * or with FD_OUTPUT / FD_NO_GROUP) into a slot, closing what was there; close of a slot or of
 * a guessed fd number (the next one open will return); dup of a slot; the ioctls ENABLE,
 * DISABLE, RESET (with and without PERF_IOC_FLAG_GROUP), REFRESH, PERIOD, SET_OUTPUT, SET_BPF,
 * ID, MODIFY_ATTRIBUTES; O_ASYNC with F_SETOWN / F_SETSIG (every overflow then signals the
 * process: SIGIO and an RT signal, counted by handlers), and clearing it; prctl
 * PR_TASK_PERF_EVENTS_DISABLE / ENABLE; events with attr.sigtrap (SIGTRAP to the thread) and
 * remove_on_exec, and watchpoints on a shared word the workers write;
 * BPF_LINK_CREATE of a perf_event program on a slot and the link's close; mmap of a ring
 * on a slot, munmap of one; read with every read_format size; fork of a child that touches
 * pages, reads and ioctls inherited fds, and then exits, or execs /bin/true.  The slots hold
 * raw fd numbers, so a thread may well use an fd another one just closed or that now names a
 * different file: that is the point (stdin is /dev/null, so such a read never waits).
 *
 * At the end every fd is closed and every child reaped.  The kernel must not panic or hang
 * (a watchdog alarm reports a hung thread); the caller compares /proc/meminfo (MemAvailable,
 * Slab) before and after to find leaks.  Prints one summary line: "perftorture: ... ops".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSLOT 48
#define NMAP 8

static _Atomic int slot[NSLOT];
static int prog_fd = -1;
static volatile int stop;
static _Atomic long ops, opens, forks, maps;

struct th {
	pthread_t t;
	uint64_t rs;
	struct {
		void *p;
		size_t len;
	} map[NMAP];
};

static uint64_t rnd(struct th *t)
{
	t->rs ^= t->rs << 13;
	t->rs ^= t->rs >> 7;
	t->rs ^= t->rs << 17;
	return t->rs;
}

static int pick(struct th *t)
{
	return atomic_load(&slot[rnd(t) % NSLOT]);
}

static long peo(struct perf_event_attr *a, int pid, int cpu, int group, unsigned long flags)
{
	return syscall(__NR_perf_event_open, a, pid, cpu, group, flags);
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* r0 = 1; exit: keeps every sample */
static int load_prog(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

static void put_slot(int i, int fd)
{
	int old = atomic_exchange(&slot[i], fd);

	if (old >= 0)
		close(old);
}

static volatile uint64_t watched; /* the watchpoints' word: workers write it */
static atomic_long sigs; /* SIGIO, the F_SETSIG signal and sigtrap's SIGTRAP, as they come */

static void on_sig(int sig)
{
	(void)sig;
	atomic_fetch_add(&sigs, 1);
}

static void do_open(struct th *t)
{
	struct perf_event_attr a;
	int kind = (int)(rnd(t) % 7), pid = 0, cpu = -1, group = -1;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.disabled = rnd(t) % 2;
	a.inherit = rnd(t) % 3 == 0;
	a.exclude_kernel = rnd(t) % 2;
	a.read_format = rnd(t) % 16; /* TOTAL_TIME_*, ID, GROUP */
	if (a.inherit)
		a.read_format &= ~(uint64_t)PERF_FORMAT_GROUP; /* Linux: EINVAL otherwise */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | (rnd(t) % 2 ? PERF_SAMPLE_CALLCHAIN : 0);
	a.wakeup_events = 1;
	switch (kind) {
	case 0:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = 20000 + rnd(t) % 200000;
		break;
	case 1:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		a.sample_period = 1 + rnd(t) % 4;
		break;
	case 2:
		a.type = PERF_TYPE_HARDWARE;
		a.config = PERF_COUNT_HW_CPU_CYCLES;
		break;
	case 3:
		a.type = PERF_TYPE_RAW;
		a.config = 0x11;
		a.sample_period = 5000 + rnd(t) % 50000;
		break;
	case 4:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.mmap = a.comm = a.task = 1;
		a.sample_id_all = 1;
		break;
	case 5:
		a.type = PERF_TYPE_BREAKPOINT;
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (uint64_t)(uintptr_t)&watched;
		a.bp_len = HW_BREAKPOINT_LEN_8;
		/* not 1: an arm64 watchpoint fires before the store, so a signal on every hit
		 * (sigtrap, O_ASYNC) returns to the store and fires again, forever, on Linux too
		 * (why perf's Sigtrap test skips arm64) */
		a.sample_period = 2 + rnd(t) % 3;
		break;
	default:
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 50000;
		break;
	}
	if (a.sample_period && rnd(t) % 5 == 0) {
		a.sigtrap = 1; /* needs remove_on_exec and a task (EINVAL otherwise: fine too) */
		a.remove_on_exec = rnd(t) % 4 != 0;
		a.sig_data = rnd(t);
	}
	if (rnd(t) % 4 == 0) {
		pid = -1;
		cpu = (int)(rnd(t) % 4);
	}
	if (rnd(t) % 3 == 0) {
		group = pick(t);
		if (rnd(t) % 4 == 0)
			flags |= rnd(t) % 2 ? PERF_FLAG_FD_NO_GROUP : PERF_FLAG_FD_OUTPUT;
	}
	int fd = (int)peo(&a, pid, cpu, group, flags);

	if (fd >= 0) {
		atomic_fetch_add(&opens, 1);
		put_slot((int)(rnd(t) % NSLOT), fd);
	}
}

static void do_ioctl(struct th *t)
{
	int fd = pick(t);
	uint64_t v = 1 + rnd(t) % 100000, id;

	switch (rnd(t) % 12) {
	case 0:
		ioctl(fd, PERF_EVENT_IOC_ENABLE, rnd(t) % 2 ? PERF_IOC_FLAG_GROUP : 0);
		break;
	case 9: {
		/* O_ASYNC on or off, with an owner (us, our group, a thread, nobody) and a signal */
		int fl = fcntl(fd, F_GETFL);
		struct f_owner_ex ox = { F_OWNER_PID, getpid() };

		if (rnd(t) % 3 == 0) {
			ox.type = F_OWNER_TID;
			ox.pid = (int)syscall(__NR_gettid);
		} else if (rnd(t) % 3 == 0) {
			ox.type = F_OWNER_PGRP;
			ox.pid = getpgrp();
		}
		fcntl(fd, F_SETOWN_EX, &ox);
		fcntl(fd, F_SETSIG, rnd(t) % 2 ? SIGRTMIN + 1 : 0);
		if (fl >= 0)
			fcntl(fd, F_SETFL, rnd(t) % 3 ? fl | O_ASYNC : fl & ~O_ASYNC);
		break;
	}
	case 10: {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_BREAKPOINT;
		a.bp_type = rnd(t) % 2 ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
		a.bp_addr = (uint64_t)(uintptr_t)&watched + (rnd(t) % 2) * 8;
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.sample_period = 2 + rnd(t) % 3;
		a.disabled = rnd(t) % 2;
		ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
		break;
	}
	case 11:
		prctl(rnd(t) % 2 ? PR_TASK_PERF_EVENTS_DISABLE : PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
		break;
	case 1:
		ioctl(fd, PERF_EVENT_IOC_DISABLE, rnd(t) % 2 ? PERF_IOC_FLAG_GROUP : 0);
		break;
	case 2:
		ioctl(fd, PERF_EVENT_IOC_RESET, rnd(t) % 2 ? PERF_IOC_FLAG_GROUP : 0);
		break;
	case 3:
		ioctl(fd, PERF_EVENT_IOC_REFRESH, (int)(rnd(t) % 4));
		break;
	case 4:
		ioctl(fd, PERF_EVENT_IOC_PERIOD, &v);
		break;
	case 5:
		ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rnd(t) % 3 ? pick(t) : -1);
		break;
	case 6:
		ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd);
		break;
	case 7: {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.link_create.prog_fd = (uint32_t)prog_fd;
		a.link_create.target_fd = (uint32_t)fd;
		a.link_create.attach_type = BPF_PERF_EVENT;
		int l = (int)sys_bpf(BPF_LINK_CREATE, &a);

		if (l >= 0) {
			if (rnd(t) % 2)
				usleep(100);
			close(l);
		}
		break;
	}
	default:
		ioctl(fd, PERF_EVENT_IOC_ID, &id);
		break;
	}
}

static void do_map(struct th *t)
{
	int i = (int)(rnd(t) % NMAP);

	if (t->map[i].p) {
		munmap(t->map[i].p, t->map[i].len);
		t->map[i].p = NULL;
		return;
	}
	size_t len = (1 + ((size_t)1 << (rnd(t) % 4))) * 4096;
	void *p = mmap(NULL, len, PROT_READ | (rnd(t) % 2 ? PROT_WRITE : 0), MAP_SHARED, pick(t), 0);

	if (p != MAP_FAILED) {
		atomic_fetch_add(&maps, 1);
		t->map[i].p = p;
		t->map[i].len = len;
		(void)*(volatile uint64_t *)p; /* the user page */
	}
}

static void child_work(struct th *t)
{
	char *m = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[512];

	for (int i = 0; i < 16 && m != MAP_FAILED; i++)
		m[i * 4096] = 1;
	for (int i = 0; i < 8; i++) {
		if (read(pick(t), buf, 8 + rnd(t) % 500) < 0) {
			/* EBADF, ENOSPC, ...: expected */
		}
		do_ioctl(t);
	}
	if (rnd(t) % 3 == 0)
		execl("/bin/true", "true", (char *)NULL);
	_exit(0);
}

static void *worker(void *arg)
{
	struct th *t = arg;
	char buf[512];

	while (!stop) {
		atomic_fetch_add(&ops, 1);
		switch (rnd(t) % 16) {
		case 0:
		case 1:
		case 2:
			do_open(t);
			break;
		case 3:
			put_slot((int)(rnd(t) % NSLOT), -1);
			break;
		case 4: {
			/* the next fd an open will return, closed before the open returns it */
			int next = dup(0);

			if (next >= 0) {
				close(next);
				close(next);
			}
			break;
		}
		case 5: {
			int d = dup(pick(t));

			if (d >= 0)
				put_slot((int)(rnd(t) % NSLOT), d);
			break;
		}
		case 6:
		case 7:
		case 8:
			do_ioctl(t);
			break;
		case 9:
		case 10:
			do_map(t);
			break;
		case 11:
		case 12:
			if (read(pick(t), buf, 8 + rnd(t) % 500) < 0) {
				/* expected: EBADF, ENOSPC, ... */
			}
			break;
		case 13:
			if (rnd(t) % 8 == 0) {
				pid_t c = fork();

				if (c == 0)
					child_work(t);
				if (c > 0)
					atomic_fetch_add(&forks, 1);
			}
			break;
		default: {
			/* work for the events to count and sample */
			volatile uint64_t s = 0;

			for (int i = 0; i < 20000; i++)
				s += (uint64_t)i;
			watched = s; /* the watchpoints' hits */
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			break;
		}
		}
	}
	for (int i = 0; i < NMAP; i++)
		if (t->map[i].p)
			munmap(t->map[i].p, t->map[i].len);
	return NULL;
}

static void on_alarm(int sig)
{
	static const char msg[] = "perftorture: HUNG (watchdog)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0) {
	}
	_exit(2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, secs = argc > 2 ? atoi(argv[2]) : 5;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	struct th th[16];

	if (n < 1 || n > 16)
		n = 4;
	/* a slot may hold a stale number that now names a dup of fd 0 (the guessed closes make
	 * that likely): stdin is /dev/null so a read of it ends */
	int nul = open("/dev/null", O_RDWR);

	if (nul > 0) {
		dup2(nul, 0);
		close(nul);
	}
	signal(SIGALRM, on_alarm);
	/* a group of our own: O_ASYNC owners include our process group, whose signals must not
	 * reach the shell that started us */
	setpgid(0, 0);
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	alarm((unsigned)secs + 60);
	for (int i = 0; i < NSLOT; i++)
		atomic_store(&slot[i], -1);
	prog_fd = load_prog();
	memset(th, 0, sizeof(th));
	for (int i = 0; i < n; i++) {
		th[i].rs = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
		pthread_create(&th[i].t, NULL, worker, &th[i]);
	}
	struct timespec d = { secs, 0 };

	/* the whole time: a SIGIO cuts nanosleep short with EINTR (SA_RESTART does not apply to
	 * it, on Linux either), which made a "20 s" run last about one second */
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i].t, NULL);
	for (int i = 0; i < NSLOT; i++)
		put_slot(i, -1);
	while (wait(NULL) > 0)
		;
	if (prog_fd >= 0)
		close(prog_fd);
	printf("perftorture: seed %llu, %d threads, %d s: %ld ops, %ld opens, %ld maps, %ld forks, "
	       "%ld signals\n",
	       (unsigned long long)seed, n, secs, atomic_load(&ops), atomic_load(&opens),
	       atomic_load(&maps), atomic_load(&forks), atomic_load(&sigs));
	return 0;
}
