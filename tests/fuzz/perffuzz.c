/*
 * perffuzz - perf_event_open(2) and bpf(2) with random, half-valid arguments from inside the
 * guest (tests/fuzz/fuzz-syscalls.sh).
 *
 *   perffuzz [children] [operations] [seed]
 *
 * Each child keeps up to 64 fds and does, at random: perf_event_open with an attr of random
 * type, size, config, period, sample_type, read_format, flag bits, breakpoint fields, probe
 * fields (the kprobe and uprobe PMUs, types 6 and 7: a kernel function or a file, any offset),
 * pid, cpu, group fd and open flags; bpf(2) commands (MAP_CREATE with random types and sizes, PROG_LOAD of
 * random instructions, the others with random attrs and fds); and on its fds the perf ioctls
 * (with PERF_IOC_FLAG_GROUP, random arguments and fds), mmap of random sizes, offsets and
 * protections with a touch of the mapping, read, dup, close; some work between, and now and
 * then a fork whose child inherits the events.  fds 0-2 are /dev/null.  What is checked is the
 * kernel: the run must end, without a panic or a hung child (SIGALRM after 60 s reports where
 * it was).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

static int fds[64], nfd;
static char *buf; /* 32 KiB: attr, bpf attr, instructions, log, read buffer */
static volatile int cur_i, cur_op;

static int pickfd(void)
{
	return nfd && rnd() % 8 ? fds[rnd() % nfd] : (int)(rnd() % 40) - 2;
}

static void addfd(int fd)
{
	if (fd < 0)
		return;
	if (nfd < 64) {
		fds[nfd++] = fd;
	} else {
		int i = (int)(rnd() % 64);

		close(fds[i]);
		fds[i] = fd;
	}
}

static void do_open(void)
{
	static const uint32_t sizes[] = { 0, 64, 72, 80, 96, 104, 112, 120, 128, 136, 4096, 3 };
	struct perf_event_attr *a = (void *)buf;
	uint64_t bits = rnd();

	memset(a, 0, 256);
	if (rnd() % 4 == 0)
		for (int i = 0; i < 256; i += 8)
			*(uint64_t *)(buf + i) = rnd() % 3 ? 0 : rnd();
	a->type = rnd() % 4 ? (uint32_t)(rnd() % 6) : (uint32_t)rnd();
	a->size = sizes[rnd() % 12];
	a->config = rnd() % 3 ? rnd() % 12 : rnd();
	if (rnd() % 8 == 0) {
		/* probes at random offsets in programs everyone runs and in kernel functions */
		static const char *const where[] = { "/bin/busybox", "/bin/perffuzz", "/bin/sh",
						     "sys_getpid", "sys_read", "sys_write", "sys_openat",
						     "sys_close", "file_put", "" };

		a->type = 6 + (uint32_t)(rnd() % 2);
		a->config1 = rnd() % 8 ? (uint64_t)(uintptr_t)where[rnd() % 10] : rnd();
		a->config2 = rnd() % 4 ? (rnd() % 0x2000) & ~3ull : rnd();
	}
	if (a->type == PERF_TYPE_BREAKPOINT) {
		a->bp_type = (uint32_t)(rnd() % 8);
		a->bp_addr = rnd() % 2 ? (uint64_t)buf : rnd();
		a->bp_len = 1ull << (rnd() % 4);
	}
	a->sample_period = rnd() % 4 ? rnd() % 5000 : rnd();
	a->sample_type = rnd() % 2 ? rnd() & 0x3ffff : rnd() & 0x1ff;
	a->read_format = rnd() & 0x1f;
	memcpy((char *)a + offsetof(struct perf_event_attr, read_format) + 8, &bits, 8); /* flags */
	a->wakeup_events = (uint32_t)(rnd() % 4);
	a->sample_regs_user = rnd() % 2 ? rnd() : 0;
	a->sample_stack_user = rnd() % 2 ? (uint32_t)(rnd() % 70000) : 0;
	a->sample_max_stack = (uint16_t)(rnd() % 200);
	int pid = rnd() % 3 == 0 ? -1 : rnd() % 3 == 0 ? (int)(rnd() % 64) : 0;
	int cpu = rnd() % 3 == 0 ? -1 : (int)(rnd() % 6) - 1;
	int grp = rnd() % 3 ? -1 : pickfd();
	unsigned long flags = rnd() % 3 ? PERF_FLAG_FD_CLOEXEC : rnd() & 0xf;

	addfd((int)syscall(__NR_perf_event_open, a, pid, cpu, grp, flags));
}

static void do_bpf(void)
{
	union bpf_attr *a = (void *)(buf + 512);
	int cmd = rnd() % 4 == 0 ? (int)(rnd() % 40) : (int)(rnd() % 8);

	memset(a, 0, sizeof(*a));
	switch (cmd) {
	case BPF_MAP_CREATE:
		a->map_type = (uint32_t)(rnd() % 30);
		a->key_size = rnd() % 3 ? 4u << (rnd() % 3) : (uint32_t)(rnd() % 600);
		a->value_size = rnd() % 3 ? 8u << (rnd() % 4) : (uint32_t)(rnd() % 70000);
		a->max_entries = rnd() % 3 ? 1u << (rnd() % 14) : (uint32_t)rnd();
		a->map_flags = rnd() % 3 ? 0 : (uint32_t)(rnd() & 0x3fff);
		break;
	case BPF_PROG_LOAD: {
		struct bpf_insn *in = (void *)(buf + 4096);
		int n = 1 + (int)(rnd() % 64);

		for (int i = 0; i < n; i++) {
			uint64_t r = rnd();

			memcpy(&in[i], &r, 8);
			if (rnd() % 3 == 0)
				in[i].code = BPF_ALU64 | BPF_MOV | BPF_K;
			if (rnd() % 5 == 0) {
				in[i].code = BPF_JMP | BPF_CALL;
				in[i].src_reg = 0;
				in[i].imm = (int32_t)(rnd() % 200);
			}
			if (rnd() % 7 == 0) {
				in[i].code = BPF_LD | BPF_DW | BPF_IMM;
				in[i].src_reg = rnd() % 3;
				in[i].imm = pickfd();
			}
		}
		in[n - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
		a->prog_type = rnd() % 3 ? BPF_PROG_TYPE_PERF_EVENT : (uint32_t)(rnd() % 35);
		a->insns = (uint64_t)in;
		a->insn_cnt = (uint32_t)n;
		a->license = (uint64_t) "GPL";
		a->log_level = (uint32_t)(rnd() % 4);
		a->log_buf = (uint64_t)(buf + 6000);
		a->log_size = rnd() % 2 ? 2000 : (uint32_t)(rnd() % 3000);
		if (a->prog_type == BPF_PROG_TYPE_SYSCALL)
			a->prog_flags = BPF_F_SLEEPABLE;
		break;
	}
	default:
		for (int i = 0; i < 128; i += 8)
			*(uint64_t *)((char *)a + i) = rnd() % 2 ? (uint64_t)pickfd() :
						       rnd() % 3 ? (uint64_t)(buf + rnd() % 4096) : rnd();
		a->map_fd = (uint32_t)pickfd();
		break;
	}
	long r = syscall(__NR_bpf, cmd, a, rnd() % 8 ? sizeof(*a) : rnd() % 300);

	if (cmd == BPF_MAP_CREATE || cmd == BPF_PROG_LOAD || cmd == BPF_LINK_CREATE)
		addfd((int)r);
}

static void do_fd_op(void)
{
	static const unsigned long ioc[] = {
		PERF_EVENT_IOC_ENABLE,	     PERF_EVENT_IOC_DISABLE,	 PERF_EVENT_IOC_RESET,
		PERF_EVENT_IOC_REFRESH,	     PERF_EVENT_IOC_PERIOD,	 PERF_EVENT_IOC_ID,
		PERF_EVENT_IOC_SET_OUTPUT,   PERF_EVENT_IOC_SET_FILTER,	 PERF_EVENT_IOC_SET_BPF,
		PERF_EVENT_IOC_PAUSE_OUTPUT, PERF_EVENT_IOC_QUERY_BPF, PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
	};
	int fd = pickfd(), c = (int)(rnd() % 9);

	cur_op = 10 + c;
	switch (c) {
	case 0:
	case 1:
	case 2: {
		unsigned long arg = rnd() % 3 == 0 ? (unsigned long)pickfd() :
				    rnd() % 2	   ? (unsigned long)(buf + rnd() % 4096) :
							 rnd();
		unsigned long req = rnd() % 8 ? ioc[rnd() % 12] | (rnd() % 4 ? 0 : PERF_IOC_FLAG_GROUP) :
						(unsigned long)rnd();

		ioctl(fd, req, arg);
		break;
	}
	case 3: {
		size_t len = (1 + (rnd() % 2 ? 1u << (rnd() % 6) : rnd() % 20)) * 4096;
		void *p = mmap(NULL, len, rnd() % 4 ? PROT_READ | PROT_WRITE : PROT_READ,
			       rnd() % 5 ? MAP_SHARED : MAP_PRIVATE, fd, rnd() % 5 ? 0 : (rnd() % 8) * 4096);

		if (p != MAP_FAILED) {
			(void)*(volatile char *)((char *)p + rnd() % len);
			if (rnd() % 2)
				munmap(p, len);
		}
		break;
	}
	case 4:
		if (read(fd, buf + 8192, rnd() % 2 ? rnd() % 512 : rnd() % 9000) < 0)
			break;
		break;
	case 5:
		if (rnd() % 3 == 0 && nfd) {
			int i = (int)(rnd() % nfd);

			close(fds[i]);
			fds[i] = fds[--nfd];
		}
		break;
	case 6:
		addfd(dup(fd));
		break;
	case 7:
		if (rnd() % 50 == 0) {
			pid_t p = fork();

			if (p == 0) {
				for (int i = 0; i < 100000; i++)
					buf[i % 4096]++;
				_exit(0);
			}
			if (p > 0)
				waitpid(p, NULL, 0);
		}
		break;
	default:
		for (int i = 0; i < 20000; i++)
			buf[i % 4096] += (char)i;
		break;
	}
}

static void on_alarm(int sig)
{
	char m[80];
	int n = snprintf(m, sizeof(m), "perffuzz: hung at operation %d (kind %d)\n", cur_i, cur_op);

	(void)sig;
	if (write(99, m, (size_t)n) < 0)
		_exit(3);
	_exit(3);
}

static void child(uint64_t seed, int ops)
{
	int null = open("/dev/null", O_RDWR);

	rs = seed;
	dup2(2, 99); /* for the hang report */
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	buf = mmap(NULL, 32768, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	signal(SIGALRM, on_alarm);
	alarm(60);
	for (int i = 0; i < ops; i++) {
		uint64_t k = rnd() % 10;

		cur_i = i;
		cur_op = (int)k;
		if (getppid() == 1)
			_exit(4); /* a forked grandchild whose parent went away */
		if (k < 3)
			do_open();
		else if (k < 5)
			do_bpf();
		else
			do_fd_op();
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int nchild = argc > 1 ? atoi(argv[1]) : 4, ops = argc > 2 ? atoi(argv[2]) : 2000;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	int st, n = 0, sig = 0, hung = 0;

	for (int c = 0; c < nchild; c++)
		if (fork() == 0)
			child(seed * 7919 + (uint64_t)c * 104729 + 1, ops);
	while (wait(&st) > 0) {
		n++;
		sig += !WIFEXITED(st);
		hung += WIFEXITED(st) && WEXITSTATUS(st) == 3;
	}
	printf("perffuzz: seed %llu: %d children, %d operations each, %d ended by a signal, %d hung\n",
	       (unsigned long long)seed, n, ops, sig, hung);
	return hung ? 1 : 0;
}
