/* bpf_raw.h - what the tests that build programs from raw instructions add to tools/lib's
 * sys_bpf.h and sys_perf.h (header only): map creation with map_extra and inner_map_fd, u32-keyed
 * element commands, object ids, program loads with a verifier log, and a page-fault event of this
 * task for running perf_event programs (also used by bpf_faults.h, its libbpf counterpart). */
#ifndef TESTS_USER_BPF_RAW_H
#define TESTS_USER_BPF_RAW_H

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys_bpf.h"
#include "sys_perf.h"

/* net.core.bpf_jit_enable is not 0 (1 by default on both kernels; tier 40 also runs us with 0) */
static inline int bpf_jit_enabled(void)
{
	char c = '1';
	int fd = open("/proc/sys/net/core/bpf_jit_enable", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1';
		close(fd);
	}
	return c != '0';
}

/* BPF_MAP_CREATE with map_extra (a bloom filter's hash count) and inner_map_fd (a map-in-map's
 * template): the fd or -1 and errno. */
static inline int map_create_attr(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max,
				  uint32_t flags, uint64_t extra, int inner)
{
	return bpf_map_new_ext(type, ks, vs, max, flags, extra, inner);
}

static inline int map_create(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags)
{
	return bpf_map_new(type, ks, vs, max, flags);
}

/* BPF_MAP_{LOOKUP,UPDATE,DELETE}_ELEM, LOOKUP_AND_DELETE_ELEM with a u32 key (NULL: keyless). */
static inline long map_elem(int cmd, int fd, const uint32_t *key, void *value, uint64_t flags)
{
	return bpf_map_elem(cmd, fd, key, value, flags);
}

/* The id of a program, map or link fd (each info struct starts with type and id), or 0. */
static inline uint32_t obj_id(int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = 8;
	a.info.info = (uintptr_t)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? 0 : info.id;
}

/* BPF_{PROG,MAP,LINK}_GET_FD_BY_ID: the fd or -1 and errno. */
static inline int obj_fd_by_id(int cmd, uint32_t id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_id = id; /* the same field as map_id and link_id */
	return (int)sys_bpf(cmd, &a);
}

/* BPF_PROG_LOAD (GPL) with the verifier's log (level 1) in log: the fd or -1 and errno. */
static inline int prog_load_log(uint32_t type, const struct bpf_insn *insns, size_t n, char *log,
				size_t logsize)
{
	return bpf_prog_new(type, 0, insns, (uint32_t)n, log, (uint32_t)logsize);
}

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

/* Enable the event fd, fault in n fresh pages, disable it. */
static inline void faults_touch(int fd, int n)
{
	char *buf = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < n; i++)
		buf[i * 4096] = 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(buf, (size_t)n * 4096);
}

/* Run the perf_event program prog (PERF_EVENT_IOC_SET_BPF) on n page faults: 0 or -errno. */
static inline int prog_run_on_faults(int prog, int n)
{
	int fd = faults_perf_open(PERF_COUNT_SW_PAGE_FAULTS, 1), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog))
		err = -errno;
	else
		faults_touch(fd, n);
	close(fd);
	return err;
}

#endif
