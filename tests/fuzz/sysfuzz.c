/*
 * sysfuzz - random system calls from inside the guest (tests/fuzz/fuzz-syscalls.sh).
 *
 *   sysfuzz [children] [calls] [seed]
 *
 * Each child makes `calls` system calls with random numbers (0..449) and arguments drawn from
 * a pool of edge values: 0, 1, -1, small integers, fds, pointers into and just past its own
 * buffer (refilled with junk and pointers now and then), unmapped and kernel addresses, powers
 * of two and random words.  Skipped: calls that end the child or reach outside it (exit,
 * reboot, kill and friends, clone, execve, process_vm_writev, ptrace: a TRACEME'd child stops
 * at its next signal and its parent's wait() then waits forever, here as on Linux;
 * t_ptrace checks ptrace's bad input), that wait without bound
 * (futex, ppoll, epoll_pwait, nanosleep, clock_nanosleep, wait4), and rt_sigreturn.  Memory
 * calls (mprotect, munmap, mremap, madvise, remap_file_pages) are aimed away from the child's
 * own code and stack.  The children's fds 0-2 are /dev/null.  What is checked is the kernel:
 * the run must end, without a panic; children killed by signals are expected.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

#define BUF 8192

static char *buf;

static uint64_t arg(void)
{
	switch (rnd() % 14) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (uint64_t)-1;
	case 3: return rnd() % 64;
	case 4: return (uint64_t)buf + rnd() % BUF;
	case 5: return (uint64_t)buf;
	case 6: return 0x1000;
	case 7: return 0xffff000000000000ull + rnd() % 0x100000;
	case 8: return rnd();
	case 9: return 1ull << (rnd() % 64);
	case 10: return (uint64_t)buf + BUF - rnd() % 16;
	case 11: return rnd() % 4096;
	case 12: return 0x7fffffff;
	default: return (uint64_t)(int64_t)((int)(rnd() % 2048) - 1024);
	}
}

static int skipped(long nr)
{
	static const int skip[] = {
		__NR_exit, __NR_exit_group, __NR_reboot, __NR_kill, __NR_tkill, __NR_tgkill,
		__NR_clone, __NR_clone3, __NR_execve, __NR_execveat, __NR_process_vm_writev,
		__NR_wait4, __NR_futex, __NR_ppoll, __NR_epoll_pwait, __NR_nanosleep,
		__NR_clock_nanosleep, __NR_rt_sigreturn, __NR_ptrace,
	};
	for (unsigned int k = 0; k < sizeof(skip) / sizeof(skip[0]); k++)
		if (skip[k] == nr)
			return 1;
	return 0;
}

static void child(uint64_t seed, int calls)
{
	int null = open("/dev/null", O_RDWR);

	rs = seed;
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	buf = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	alarm(30);
	for (int i = 0; i < calls; i++) {
		long nr = (long)(rnd() % 450);
		uint64_t a[6];

		if (skipped(nr))
			continue;
		if (rnd() % 16 == 0)
			for (int j = 0; j < BUF; j += 8)
				*(uint64_t *)(buf + j) = rnd() % 3 ? rnd() : (uint64_t)buf;
		for (int j = 0; j < 6; j++)
			a[j] = arg();
		if (nr == __NR_mprotect || nr == __NR_munmap || nr == __NR_mremap ||
		    nr == __NR_madvise || nr == __NR_remap_file_pages)
			a[0] = 0x10000000 + (a[0] & 0xfff000);
		syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int nchild = argc > 1 ? atoi(argv[1]) : 8, calls = argc > 2 ? atoi(argv[2]) : 2000;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	int st, n = 0, sig = 0;

	for (int c = 0; c < nchild; c++)
		if (fork() == 0)
			child(seed * 7919 + (uint64_t)c * 104729 + 1, calls);
	while (wait(&st) > 0) {
		n++;
		sig += !WIFEXITED(st);
	}
	printf("sysfuzz: seed %llu: %d children, %d calls each, %d ended by a signal\n",
	       (unsigned long long)seed, n, calls, sig);
	return 0;
}
