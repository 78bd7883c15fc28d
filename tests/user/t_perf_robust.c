/*
 * t_perf_robust.c - perf behaviour that programs written elsewhere found broken, each a check
 * that failed on the kernel before its fix:
 *   - group: disabling a group's leader takes the whole group off (Linux's
 *     __perf_event_disable): after a group reset the sibling reads 0 while the leader is off,
 *     and counts again once it is back;
 *   - stale: a process that disables its leader and exits leaves no counter programmed for
 *     its freed events (the kernel panicked on the next overflow of that counter);
 *   - race: perf_event_open against close() of the fd it is about to return, from another
 *     thread (the fd was published before the event was complete);
 *   - regs: a cpu-clock sample taken while the task is in a syscall carries that syscall's
 *     user registers (PERF_SAMPLE_REGS_USER pc: the instruction after svc);
 *   - no_group: an event opened with PERF_FLAG_FD_NO_GROUP leads its own group: the leader's
 *     GROUP read shows one member, its id is its own, disabling the leader leaves it counting;
 *   - install: a task-clock event opened on a just-forked child that spins in syscalls on
 *     another CPU counts at once, 200 times over (the install was lost when the child was
 *     between the scheduler's perf hook and becoming its CPU's current task: the event stayed
 *     off until the child's next switch, which a lone spinner never has; 4 to 13 in 300 read 0
 *     at -smp 4; t_perf_signal's prctl check failed so in full runs).
 * Passes on Linux 6.1 (refvm.sh --smp 4).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include "tap.h"
#include "sys_perf.h"

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static void spin_ms(unsigned ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
}

static int64_t rd(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? (int64_t)v : -1;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

/* ---- group: disabling the leader takes the group off ---- */

static void t_group(void)
{
	struct perf_event_attr a;
	int lead, sib;

	/* QEMU's PMU implements cycles (and few else): two of them, the second on an event
	 * counter (raw 0x11, CPU_CYCLES) */
	attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	lead = sys_perf_event_open(&a, 0, -1, -1, 0);
	if (!CHECK(lead >= 0, "group: open a cycles leader", "errno %d", errno))
		return;
	attr_init(&a, PERF_TYPE_RAW, 0x11);
	sib = sys_perf_event_open(&a, 0, -1, lead, 0);
	if (!CHECK(sib >= 0, "group: open a cycles sibling", "errno %d", errno)) {
		close(lead);
		return;
	}
	spin_ms(5);
	CHECK(rd(sib) > 0, "group: the sibling counts while the group is on", "%lld",
	      (long long)rd(sib));
	EXPECT_OK(ioctl(lead, PERF_EVENT_IOC_DISABLE, 0), "group: DISABLE the leader");
	EXPECT_OK(ioctl(lead, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP), "group: RESET the group");
	spin_ms(10);
	int64_t s = rd(sib), l = rd(lead);

	CHECK(s == 0, "group: the leader off, its sibling does not count", "sibling %lld", (long long)s);
	CHECK(l == 0, "group: the leader off, it does not count", "leader %lld", (long long)l);
	EXPECT_OK(ioctl(lead, PERF_EVENT_IOC_ENABLE, 0), "group: ENABLE the leader");
	spin_ms(5);
	s = rd(sib);
	l = rd(lead);
	CHECK(s > 0 && l > 0, "group: the leader back on, both count again", "sibling %lld leader %lld",
	      (long long)s, (long long)l);
	/* a sibling alone: the leader goes on counting */
	EXPECT_OK(ioctl(sib, PERF_EVENT_IOC_DISABLE, 0), "group: DISABLE the sibling alone");
	EXPECT_OK(ioctl(lead, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP), "group: RESET the group again");
	spin_ms(5);
	s = rd(sib);
	l = rd(lead);
	CHECK(s == 0 && l > 0, "group: the sibling off, the leader still counts",
	      "sibling %lld leader %lld", (long long)s, (long long)l);
	close(sib);
	close(lead);
}

/* ---- stale: a disabled leader, an exit, then overflows on the same CPU ---- */

static void t_stale(void)
{
	struct perf_event_attr a;
	int rounds = 20, bad = 0;

	pin(1);
	for (int i = 0; i < rounds; i++) {
		pid_t c = fork();

		if (c == 0) {
			attr_init(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
			int lead = sys_perf_event_open(&a, 0, -1, -1, 0);

			attr_init(&a, PERF_TYPE_RAW, 0x11);
			a.sample_period = 20000; /* overflows often, and keeps doing so if left on */
			a.sample_type = PERF_SAMPLE_IP;
			int sib = lead >= 0 ? sys_perf_event_open(&a, 0, -1, lead, 0) : -1;

			if (lead < 0 || sib < 0)
				_exit(2);
			spin_ms(2);
			ioctl(lead, PERF_EVENT_IOC_DISABLE, 0);
			_exit(0); /* no close: exit releases both */
		}
		int st = 0;

		waitpid(c, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
		/* this CPU runs on; a counter left on would overflow into a freed event */
		attr_init(&a, PERF_TYPE_RAW, 0x11);
		a.sample_period = 20000;
		int fd = sys_perf_event_open(&a, 0, -1, -1, 0);

		spin_ms(3);
		if (fd >= 0)
			close(fd);
	}
	pin(0);
	CHECK(bad == 0, "stale: 20 processes disable their leader and exit; overflows go on safely",
	      "%d children failed", bad);
}

/* ---- race: open against close of the fd it is about to return ---- */

static volatile int race_stop;

static void *closer(void *arg)
{
	long *closed = arg;

	while (!race_stop) {
		/* the lowest free fd: what the next open returns */
		int next = dup(0);

		if (next < 0)
			continue;
		close(next);
		if (close(next + 0) == 0)
			(*closed)++;
	}
	return NULL;
}

static void t_race(void)
{
	struct perf_event_attr a;
	pthread_t th[2];
	long closed[2] = { 0, 0 };
	int opened = 0, failed = 0;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_period = 100000;
	a.sample_type = PERF_SAMPLE_IP;
	race_stop = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, closer, &closed[i]);
	uint64_t end = now_ns() + 1500000000ull;

	while (now_ns() < end) {
		int fd = sys_perf_event_open(&a, 0, -1, -1, 0);

		if (fd >= 0) {
			opened++;
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			close(fd); /* EBADF when the closer was first: fine */
		} else if (errno != EMFILE) {
			failed++;
		}
	}
	race_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(opened > 100 && failed == 0, "race: open against close of the next fd, 1.5 s",
	      "%d opened, %d failed (errno %d)", opened, failed, errno);
	int fd = sys_perf_event_open(&a, 0, -1, -1, 0);

	CHECK(fd >= 0, "race: perf_event_open works after it", "errno %d", errno);
	if (fd >= 0)
		close(fd);
}

/* ---- regs: a sample inside a syscall carries the syscall's user registers ---- */

extern char __executable_start[], etext[];

static int is_text(uint64_t a)
{
	return a >= (uint64_t)__executable_start && a + 4 <= (uint64_t)etext;
}

/* read(2) through our own svc, so the user pc of every sample taken inside it is known */
__attribute__((noinline)) static long raw_read(int fd, void *buf, size_t n)
{
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)n;
	register long x8 __asm__("x8") = __NR_read;

	__asm__ volatile("svc #0\n"
			 ".globl t_perf_robust_after_svc\n"
			 "t_perf_robust_after_svc:\n"
			 : "+r"(x0)
			 : "r"(x1), "r"(x2), "r"(x8)
			 : "memory");
	return x0;
}
extern char t_perf_robust_after_svc[];

static void t_regs(void)
{
	struct perf_event_attr a;
	size_t pg = 4096, len = 65 * pg;
	static char buf[1 << 20];

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.exclude_kernel = 0;
	a.sample_period = 50000; /* 50 us */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 1ull << PERF_REG_ARM64_PC;
	a.disabled = 1;
	int fd = sys_perf_event_open(&a, 0, -1, -1, 0);

	if (!CHECK(fd >= 0, "regs: open cpu-clock sampling REGS_USER pc", "errno %d", errno))
		return;
	struct perf_event_mmap_page *mp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (!CHECK(mp != MAP_FAILED, "regs: mmap the ring", "errno %d", errno)) {
		close(fd);
		return;
	}
	int z = open("/dev/zero", O_RDONLY);

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	uint64_t end = now_ns() + 200000000ull;

	while (now_ns() < end)
		raw_read(z, buf, sizeof(buf));
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	close(z);

	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	char *data = (char *)mp + mp->data_offset;
	uint64_t size = mp->data_size;
	int kern = 0, kern_ok = 0, kern_svc = 0, user = 0, user_ok = 0;

	for (uint64_t off = mp->data_tail; off < head;) {
		struct perf_event_header h;
		uint64_t rec[8];

		for (size_t i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 24) {
			for (size_t i = 0; i < 24; i++)
				((char *)rec)[i] = data[(off + sizeof(h) + i) % size];
			/* ip, abi, pc */
			if ((h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
				kern++;
				/* most are inside our read; the rest were taken on the way into or
				 * out of another syscall (clock_gettime): their user pc follows an svc
				 * too.  An exception from user mode other than svc (a page fault)
				 * under the sample is possible but rare. */
				kern_ok += rec[1] == PERF_SAMPLE_REGS_ABI_64 &&
					   rec[2] == (uint64_t)t_perf_robust_after_svc;
				kern_svc += rec[1] == PERF_SAMPLE_REGS_ABI_64 && rec[2] >= 4 &&
					    (rec[2] & 3) == 0 && is_text(rec[2] - 4) &&
					    *(const uint32_t *)(rec[2] - 4) == 0xd4000001u; /* svc #0 */
			} else {
				user++;
				user_ok += rec[1] == PERF_SAMPLE_REGS_ABI_64 && rec[2] == rec[0];
			}
		}
		off += h.size;
	}
	CHECK(kern > 0 && kern_ok >= kern * 9 / 10,
	      "regs: samples inside read(2) carry its user pc (after its svc)", "%d of %d (pc %p)",
	      kern_ok, kern, (void *)t_perf_robust_after_svc);
	CHECK(kern_svc >= kern - kern / 100, "regs: kernel-mode samples carry a syscall's user pc",
	      "%d of %d", kern_svc, kern);
	CHECK(user_ok == user, "regs: user-mode samples: regs_user pc is the sample ip", "%d of %d",
	      user_ok, user);
	munmap(mp, len);
	close(fd);
}

/* ---- no_group: PERF_FLAG_FD_NO_GROUP keeps the new event out of group_fd's group ---- */

static int group_members(int leader)
{
	uint64_t buf[1 + 2 * 8];

	if (read(leader, buf, sizeof(buf)) < 8)
		return -1;
	return (int)buf[0];
}

static void t_no_group(void)
{
	struct perf_event_attr a;
	uint64_t id_l = 0, id_n = 0, id_s = 0;

	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	int lead = sys_perf_event_open(&a, 0, -1, -1, 0);

	if (!CHECK(lead >= 0, "no_group: open a task-clock leader", "errno %d", errno))
		return;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	int ng = sys_perf_event_open(&a, 0, -1, lead, PERF_FLAG_FD_NO_GROUP);

	CHECK(ng >= 0, "no_group: open cpu-clock with group_fd = leader, FD_NO_GROUP", "errno %d", errno);
	CHECK(group_members(lead) == 1, "no_group: the leader's GROUP read shows one member",
	      "%d", group_members(lead));
	int sib = sys_perf_event_open(&a, 0, -1, lead, 0);

	CHECK(sib >= 0 && group_members(lead) == 2,
	      "no_group: a sibling opened without the flag does join (two members)", "%d",
	      group_members(lead));
	ioctl(lead, PERF_EVENT_IOC_ID, &id_l);
	ioctl(ng, PERF_EVENT_IOC_ID, &id_n);
	ioctl(sib, PERF_EVENT_IOC_ID, &id_s);
	CHECK(id_n && id_n != id_l && id_n != id_s && id_s != id_l,
	      "no_group: IOC_ID of the FD_NO_GROUP event is its own", "%llu %llu %llu",
	      (unsigned long long)id_l, (unsigned long long)id_n, (unsigned long long)id_s);
	EXPECT_OK(ioctl(lead, PERF_EVENT_IOC_DISABLE, 0), "no_group: DISABLE the leader");
	int64_t n0 = rd(ng);

	spin_ms(10);
	int64_t n1 = rd(ng);

	CHECK(n1 > n0, "no_group: the leader off, the FD_NO_GROUP event still counts",
	      "%lld -> %lld", (long long)n0, (long long)n1);
	if (sib >= 0)
		close(sib);
	if (ng >= 0)
		close(ng);
	close(lead);

	/* FD_OUTPUT: group_fd takes the output and, without FD_NO_GROUP, the event too */
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_period = 1000000;
	a.read_format = PERF_FORMAT_GROUP;
	lead = sys_perf_event_open(&a, -1, 0, -1, 0);
	void *ring = lead >= 0 ? mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, lead, 0)
			       : MAP_FAILED;

	if (!CHECK(ring != MAP_FAILED, "no_group: a CPU 0 leader with a ring", "errno %d", errno)) {
		if (lead >= 0)
			close(lead);
		return;
	}
	int out = sys_perf_event_open(&a, -1, 0, lead, PERF_FLAG_FD_OUTPUT);

	CHECK(out >= 0 && group_members(lead) == 2, "no_group: FD_OUTPUT alone joins the group too",
	      "fd %d, %d members", out, group_members(lead));
	int out_ng = sys_perf_event_open(&a, -1, 0, lead, PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP);

	CHECK(out_ng >= 0 && group_members(lead) == 2,
	      "no_group: FD_OUTPUT|FD_NO_GROUP redirects without joining", "fd %d, %d members", out_ng,
	      group_members(lead));
	EXPECT_ERRNO(sys_perf_event_open(&a, -1, 1, lead, PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP), EINVAL,
		     "no_group: FD_OUTPUT to another CPU's event -> EINVAL");
	if (out_ng >= 0)
		close(out_ng);
	if (out >= 0)
		close(out);
	munmap(ring, 3 * 4096);
	close(lead);
}

/* ---- install: an event opened on a task being switched in ---- */

static volatile long install_sink;

static void t_install(void)
{
	int zero = 0, n = 200;
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int c = 0; c < 64; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof(all), &all);
	for (int i = 0; i < n; i++) {
		struct perf_event_attr a;
		uint64_t v = 0;
		int pfd[2], fd;
		pid_t ch;

		if (pipe(pfd))
			break;
		ch = fork();
		if (ch == 0) {
			char c;

			close(pfd[1]);
			fcntl(pfd[0], F_SETFL, O_NONBLOCK);
			while (read(pfd[0], &c, 1) != 0)
				install_sink++;
			_exit(0);
		}
		close(pfd[0]);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		fd = (int)sys_perf_event_open(&a, ch, -1, -1, 0);
		for (int k = 0; fd >= 0 && k < 50 && v == 0; k++) {
			usleep(2000);
			if (read(fd, &v, sizeof(v)) != sizeof(v))
				v = 0;
		}
		zero += v == 0;
		close(pfd[1]);
		waitpid(ch, NULL, 0);
		if (fd >= 0)
			close(fd);
	}
	pin(0);
	CHECK(zero == 0, "install: a task-clock event on a just-forked spinning child counts within 100 ms",
	      "%d of %d read 0", zero, n);
}

int main(void)
{
	tap_init("t_perf_robust", 60);
	pin(0);
	t_group();
	t_stale();
	t_race();
	t_regs();
	t_no_group();
	t_install();
	return tap_done();
}
