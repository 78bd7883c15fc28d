/* bpf_faults.h - run a libbpf-loaded perf_event program on page faults (header only, for the
 * tests that need libbpf: t_bpf_loops, t_bpf_helpers). */
#ifndef TESTS_USER_BPF_FAULTS_H
#define TESTS_USER_BPF_FAULTS_H

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys_perf.h"

/* A SOFTWARE event of this task on any CPU; disabled when it samples (period != 0). */
static inline int faults_perf_open(uint64_t config, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = period;
	a.disabled = period != 0;
	return (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Attach prog to page faults (period 1) of this task and fault in n fresh pages: 0 or -errno. */
static inline int run_on_faults(struct bpf_program *prog, int n)
{
	struct bpf_link *link;
	char *buf;
	int fd = faults_perf_open(PERF_COUNT_SW_PAGE_FAULTS, 1);

	if (fd < 0)
		return -errno;
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		close(fd);
		return -errno;
	}
	buf = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < n; i++)
		buf[i * 4096] = 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(buf, (size_t)n * 4096);
	bpf_link__destroy(link);
	close(fd);
	return 0;
}

#endif
