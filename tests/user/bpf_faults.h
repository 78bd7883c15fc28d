/* bpf_faults.h - run a libbpf-loaded perf_event program on page faults, and load one program
 * of an embedded object alone for its verifier log (header only, for the tests that need
 * libbpf: t_bpf_loops, t_bpf_helpers, t_bpf_user_ringbuf). */
#ifndef TESTS_USER_BPF_FAULTS_H
#define TESTS_USER_BPF_FAULTS_H

#include <bpf/libbpf.h>

#include "bpf_raw.h"

/* libbpf's messages off (libbpf_set_print): the tests print what they check. */
static inline int faults_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* Open the object in [start, end) with only program name to load (NULL, errno, if it does
 * not open). */
static inline struct bpf_object *open_one_prog(const char *start, const char *end,
					       const char *name)
{
	struct bpf_object *obj = bpf_object__open_mem(start, (size_t)(end - start), NULL);
	struct bpf_program *p;

	if (!obj)
		return NULL;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	return obj;
}

/*
 * Open the object in [start, end) and load program name alone, its verifier log in log: 0 or
 * the load's -errno (-1000 when the object does not open).
 */
static inline int load_one_prog(const char *start, const char *end, const char *name, char *log,
				size_t logsize)
{
	struct bpf_object *obj = bpf_object__open_mem(start, (size_t)(end - start), NULL);
	struct bpf_program *p;
	int err;

	if (!obj)
		return -1000;
	bpf_object__for_each_program(p, obj) {
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
		if (!strcmp(bpf_program__name(p), name))
			bpf_program__set_log_buf(p, log, logsize);
	}
	log[0] = 0;
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	return err;
}

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
