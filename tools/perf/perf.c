/*
 * perf.c - entry point of our `perf` and the workload start protocol.
 *
 * `perf stat ...` and `perf record ...` dispatch to stat.c and record.c.
 * The workload is started the way Linux perf 6.1 starts it
 * (evlist__prepare_workload/evlist__start_workload): fork; the child names
 * itself "perf-exec", signals readiness by closing a pipe and blocks reading
 * a second pipe; the parent opens its events with pid=child (so
 * enable_on_exec arms them in the child's context), then writes one byte and
 * the child execs. An exec failure is reported back with sigqueue(SIGUSR1,
 * errno) so the parent can print "Workload failed: ...".
 *
 * Not done here: event parsing (events.c), output formats (stat.c, record.c).
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t workload_errno;

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

double perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* SIGUSR1 from the child carries the errno of its failed execvp. */
static void workload_failed(int sig, siginfo_t *info, void *uctx)
{
	(void)sig;
	(void)uctx;
	workload_errno = info->si_value.sival_int;
}

int perf_workload_exec_errno(void)
{
	return workload_errno;
}

static void workload_child(char **argv, int ready_wr, int go_rd)
{
	char c;
	union sigval val;

	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_NAME, "perf-exec", 0, 0, 0);
	close(ready_wr); /* parent's read() of the ready pipe now returns 0 */
	if (read(go_rd, &c, 1) != 1) {
		/* parent went away or gave up before starting us */
		_exit(0);
	}
	execvp(argv[0], argv);
	val.sival_int = errno;
	if (sigqueue(getppid(), SIGUSR1, val))
		perror(argv[0]);
	_exit(-1);
}

int perf_workload_prepare(char **argv, struct perf_workload *wl)
{
	int ready[2], go[2];
	struct sigaction sa;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = workload_failed;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	workload_errno = 0;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return -errno;
	}
	fflush(NULL);
	wl->pid = fork();
	if (wl->pid < 0) {
		int err = -errno;

		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
		return err;
	}
	if (wl->pid == 0) {
		close(ready[0]);
		close(go[1]);
		workload_child(argv, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	/* wait until the child is parked on the go pipe */
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	wl->go_fd = go[1];
	return 0;
}

int perf_workload_start(struct perf_workload *wl)
{
	char c = 0;
	ssize_t n = write(wl->go_fd, &c, 1);

	close(wl->go_fd);
	wl->go_fd = -1;
	return n == 1 ? 0 : -EPIPE;
}

static void usage(void)
{
	fprintf(stderr, "usage: perf stat [-e list] [-a] [-C cpus] [-p pid | -t tid] [-x sep] [-r "
			"N] [-o file] [--] cmd\n"
			"       perf record [-e ev] [-c period | -F freq] [-a] [-C cpus] [-g] [-o "
			"file] [--] cmd\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 129;
	}
	if (!strcmp(argv[1], "stat"))
		return perf_cmd_stat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record"))
		return perf_cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("perf version 6.1.perfkernel\n");
		return 0;
	}
	usage();
	return 129;
}
