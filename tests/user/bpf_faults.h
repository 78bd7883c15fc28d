/* bpf_faults.h - run a libbpf-loaded perf_event program on page faults (header only, for the
 * tests that need libbpf: t_bpf_loops, t_bpf_helpers). */
#ifndef TESTS_USER_BPF_FAULTS_H
#define TESTS_USER_BPF_FAULTS_H

#include <bpf/libbpf.h>

#include "bpf_raw.h"

/* Attach prog to page faults (period 1) of this task and fault in n fresh pages: 0 or -errno. */
static inline int run_on_faults(struct bpf_program *prog, int n)
{
	struct bpf_link *link;
	int fd = faults_perf_open(PERF_COUNT_SW_PAGE_FAULTS, 1);

	if (fd < 0)
		return -errno;
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		close(fd);
		return -errno;
	}
	faults_touch(fd, n);
	bpf_link__destroy(link);
	close(fd);
	return 0;
}

#endif
