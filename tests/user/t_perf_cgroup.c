/* t_perf_cgroup: what perf events say about cgroups, here and on Linux 6.1 with nothing
 * written to cgroup.subtree_control (the only state this kernel has: it has no controllers).
 * On cgroup2 perf uses the implicit perf_event controller, which a child cgroup gets only
 * once a controller is enabled in its parent: until then every task's perf_event cgroup is
 * the root.  So: PERF_SAMPLE_CGROUP carries 1 (the root's id) in the root and in a child
 * cgroup; cgroup-switches counts no switch between a task of the root and one of a child
 * (a ping-pong over pipes on one CPU); PERF_FLAG_PID_CGROUP takes the root's directory fd (a
 * CPU event that counts for every task), is ENOENT for a child cgroup's, EBADF for a
 * directory or file that is no cgroup, EINVAL with cpu -1 or a leader of another cgroup.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"
#include "cgroup_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 40

static char A[96];

/* A counting software event of config, all else zero. */
static void sw_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
}

struct seen {
	int n, other;
	uint64_t want, got;
};

static void on_record(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const uint64_t *v = (const void *)(h + 1);

	if (h->type != PERF_RECORD_SAMPLE)
		return;
	s->n++;
	s->got = v[0];
	if (v[0] != s->want)
		s->other++;
}

/* Page-fault samples (period 1) with PERF_SAMPLE_CGROUP while in dir (NULL: the root). */
static void sample_checks(const char *what, const char *dir, uint64_t want)
{
	struct perf_event_attr a;
	struct perf_ring r;
	struct seen s = { 0, 0, want, 0 };
	uint64_t buf[64];
	char *p;
	int fd;

	if (dir && cg_move(dir, 0)) {
		tap_fail(what, "move into %s: %s", dir, strerror(errno));
		return;
	}
	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_CGROUP;
	a.disabled = 1;
	a.exclude_kernel = 1;
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || perf_ring_map(&r, fd, 8)) {
		tap_fail(what, "open/mmap: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	p = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 16; i++)
		p[i * 4096] = 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(p, 16 * 4096);
	perf_ring_read(&r, on_record, &s, buf, sizeof(buf), 1);
	tap_check(s.n >= 16 && s.other == 0, what, "%d samples, %d with another id (last %llu, want %llu)",
		  s.n, s.other, (unsigned long long)s.got, (unsigned long long)want);
	perf_ring_unmap(&r);
	close(fd);
	if (dir && cg_move(CG, getpid()))
		tap_fail(what, "back to the root: %s", strerror(errno));
}

/* cgroup-switches of this task over ROUNDS round trips with a child on our CPU. */
static long switches_with_child(const char *child_dir)
{
	struct perf_event_attr a;
	int ping[2], pong[2], fd;
	long long count = -1;
	pid_t pid;
	char c = 'x';

	if (pipe(ping) || pipe(pong))
		return -1;
	pid = fork();
	if (pid == 0) {
		for (;;) {
			if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
				_exit(0);
		}
	}
	if (child_dir && cg_move(child_dir, pid))
		return -2;
	sw_attr(&a, PERF_COUNT_SW_CGROUP_SWITCHES);
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		for (int i = 0; i < ROUNDS; i++) {
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				break;
		}
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			count = -3;
		close(fd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ping[1]);
	close(pong[0]);
	close(ping[0]);
	close(pong[1]);
	return (long)count;
}

static long open_cg(int fd, int cpu, int group)
{
	struct perf_event_attr a;

	sw_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	return sys_perf_event_open(&a, fd, cpu, group, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
}

static void check_open_err(const char *what, long r, int want)
{
	tap_check(r == -1 && errno == want, what, "%ld %s, want %s", r, strerror(errno),
		  strerror(want));
	if (r >= 0)
		close((int)r);
}

static void cgroup_event_checks(void)
{
	char path[160];
	long long count = 0;
	int root = open(CG, O_RDONLY | O_DIRECTORY), child = open(A, O_RDONLY | O_DIRECTORY);
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY), file, ev, plain;
	struct perf_event_attr a;

	snprintf(path, sizeof(path), "%s/cgroup.procs", A);
	file = open(path, O_RDONLY);
	ev = (int)open_cg(root, 0, -1);
	if (tap_check(ev >= 0, "PERF_FLAG_PID_CGROUP with the root's fd on CPU 0", "%s",
		      strerror(errno))) {
		usleep(20000);
		tap_check(read(ev, &count, sizeof(count)) == sizeof(count) && count > 0,
			  "the root cgroup's event counts", "%lld", count);
		check_open_err("a child cgroup's fd in the root event's group: ENOENT",
			       open_cg(child, 0, ev), ENOENT);
	}
	check_open_err("PERF_FLAG_PID_CGROUP with a child cgroup's fd: ENOENT", open_cg(child, 0, -1),
		       ENOENT);
	check_open_err("PERF_FLAG_PID_CGROUP with the root's fd and cpu -1: EINVAL",
		       open_cg(root, -1, -1), EINVAL);
	check_open_err("PERF_FLAG_PID_CGROUP with a directory that is no cgroup: EBADF",
		       open_cg(dir, 0, -1), EBADF);
	check_open_err("PERF_FLAG_PID_CGROUP with a cgroup's file: EBADF", open_cg(file, 0, -1),
		       EBADF);
	sw_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	plain = (int)sys_perf_event_open(&a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (plain >= 0)
		check_open_err("joining a leader of no cgroup: EINVAL", open_cg(root, 0, plain), EINVAL);
	close(plain);
	if (ev >= 0)
		close(ev);
	close(root);
	close(child);
	close(dir);
	close(file);
}

int main(void)
{
	struct stat st;
	cpu_set_t set;
	long n;

	tap_init("t_perf_cgroup", 60);
	cg_mount();
	snprintf(A, sizeof(A), CG "/t_perf_cgroup.%d", getpid());
	if (!tap_check(mkdir(A, 0755) == 0 && stat(A, &st) == 0, "mkdir a cgroup", "%s",
		       strerror(errno)))
		return tap_done();
	sample_checks("PERF_SAMPLE_CGROUP in the root: 1", NULL, 1);
	sample_checks("PERF_SAMPLE_CGROUP in a child cgroup: 1, its perf_event cgroup is the root",
		      A, 1);
	sample_checks("PERF_SAMPLE_CGROUP back in the root: 1", NULL, 1);

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set); /* the child inherits it: one CPU for both */
	n = switches_with_child(NULL);
	tap_check(n == 0, "cgroup-switches: none with a child in our cgroup", "%ld", n);
	n = switches_with_child(A);
	tap_check(n == 0, "cgroup-switches: none with a child in a child cgroup (one perf_event cgroup)",
		  "%ld for %d round trips", n, ROUNDS);
	cgroup_event_checks();

	tap_check(rmdir(A) == 0, "rmdir of our cgroup", "%s", strerror(errno));
	return tap_done();
}
