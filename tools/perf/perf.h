/*
 * perf.h - shared declarations of our userland `perf` (stat and record).
 *
 * The tool is an ordinary static Linux program: it talks to the kernel only
 * through perf_event_open(2), read/ioctl/mmap/poll on the event fds, and
 * fork/exec/wait4 for the workload, exactly as Linux perf 6.1 does (see
 * ../shared/tools/perf-abi-notes.md). It runs unchanged on perfkernel and
 * on real Linux. ABI types come from <linux/perf_event.h>.
 */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

_Static_assert(sizeof(struct perf_event_attr) >= PERF_ATTR_SIZE_VER7, "uapi attr too old");

#define PERF_MAX_CPUS 256
#define PERF_MAX_EVENTS 64

/* One parsed -e event: the attr to open and the name perf prints. */
struct perf_evdesc {
	char name[96];
	struct perf_event_attr attr;
};

/* events.c */
int perf_parse_events(const char *list, struct perf_evdesc *out, int max);
int perf_parse_cpus(const char *list, int *cpus, int max);
int perf_online_cpus(int *cpus, int max);
bool perf_ev_is(const struct perf_evdesc *ev, uint32_t type, uint64_t config);
bool perf_ev_is_clock(const struct perf_evdesc *ev);

/* perf.c: syscall wrapper and the workload protocol shared by stat and record */
int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

struct perf_workload {
	pid_t pid;
	int go_fd; /* write end of the pipe the child blocks on */
};
int perf_workload_prepare(char **argv, struct perf_workload *wl);
int perf_workload_start(struct perf_workload *wl);
int perf_workload_exec_errno(void);
double perf_now(void);

/* subcommands */
int perf_cmd_stat(int argc, char **argv);
int perf_cmd_record(int argc, char **argv);

/* perfdata.c: perf.data writer (tools/perf/Documentation/perf.data-file-format.txt) */
struct perf_data_file {
	int fd;
	const struct perf_event_attr *attr;
	const char *evname;
	const uint64_t *ids;
	int nr_ids;
	uint64_t data_off;
	uint64_t data_size;
};
int perf_data_begin(struct perf_data_file *f, const char *path, const struct perf_event_attr *attr,
		    const char *evname, const uint64_t *ids, int nr_ids);
int perf_data_write(struct perf_data_file *f, const void *buf, size_t len);
int perf_data_finish(struct perf_data_file *f, int argc, char **argv, uint64_t first_ts,
		     uint64_t last_ts);
