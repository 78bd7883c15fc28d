/*
 * sys_perf.c - the perf_event_open(2) system call (aarch64 nr 241): the table entry that hands
 * the call to the portable perf core (perf/core.c), which decodes the attribute, finds the
 * task, group and CPU, and installs the event's fd.
 */
#include <perf/perf.h>
#include <kern/syscall.h>

static long sys_perf_event_open(uint64_t uattr, uint64_t pid, uint64_t cpu, uint64_t group_fd,
				uint64_t flags)
{
	return perf_event_open((void *)uattr, (int)pid, (int)cpu, (int)group_fd,
			       (unsigned long)flags);
}
SYSCALL(__NR_perf_event_open, sys_perf_event_open);
