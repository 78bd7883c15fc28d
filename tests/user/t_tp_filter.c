/* t_tp_filter: PERF_EVENT_IOC_SET_FILTER and tracefs's filter files, checked against Linux
 * 6.1's ABI; passes on perfkernel and on Linux (refvm.sh).
 *
 *  1 errnos: EINVAL on a software event, EFAULT for a bad pointer (copied first, whatever the
 *    event), EINVAL for a string of a page or more, EEXIST for a second filter (even a bad
 *    one), and the parse errors as create_filter returns them: EINVAL, and EPERM, ENOENT,
 *    ESRCH for its bare -1, -2, -3 (too few '(', too many '(', a missing quote).
 *  2 counting: syscalls:sys_enter_close counts only the hits its filter passes: integer
 *    comparisons, &, &&, ||, !, parentheses, common_pid, cpu, comm (the current task's name)
 *    with ==, != and ~ globs.
 *  3 sampling: only hits that pass become samples.
 *  4 inherit: a child's hits go through the parent event's filter.
 *  5 char[16] fields: sched:sched_process_fork's parent_comm with ==, !=, and ~ "x*", "?x",
 *    "[..]*", and "*x" (which compares the end of the whole 16-byte field in 6.1).
 *  6 events/<sys>/<event>/filter: what is written shows back, a bad filter is its errno and
 *    the parse error's text, "0" clears; events/<sys>/filter sets each event of the system
 *    (or its error); neither filters perf's events.
 *  7 char * fields: syscalls:sys_enter_openat's filename.ustring compares the path a task
 *    passed (==, !=, ~); plain filename reads it as kernel memory and never matches; the
 *    parse errors around ".ustring" as Linux shows them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tracing.h"
#include "tap.h"

#define EV "/sys/kernel/tracing/events/"

static int set_filter(int fd, const char *s)
{
	return ioctl(fd, PERF_EVENT_IOC_SET_FILTER, s) ? -errno : 0;
}

/* close() of fds that are not open: 3 x 1000, 5 x 1001, 7 x 1002 */
static void closes(void)
{
	for (int i = 0; i < 3; i++)
		close(1000);
	for (int i = 0; i < 5; i++)
		close(1001);
	for (int i = 0; i < 7; i++)
		close(1002);
}

/* ---- 1 ---- */

/* s for a check's name: control characters shown as '.' (one line per check) */
static const char *shown(const char *s)
{
	static char buf[100];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (unsigned char)s[i] < ' ' ? '.' : s[i];
	buf[i] = 0;
	return buf;
}

static void test_errnos(void)
{
	long sw_id = event_id("sched/sched_switch");
	int fd = sw_sampling_fd(), r;
	static const struct {
		const char *s;
		int err;
	} bad[] = {
		{ "prev_comm == bash", EINVAL },
		{ "prev_comm < \"a\"", EINVAL },
		{ "prev_pid == \"1\"", EINVAL },
		{ "prev_comm == 1", EINVAL },
		{ "nosuch == 1", EINVAL },
		{ "prev_pid = 1", EINVAL },
		{ "prev_pid == 1 &&", EINVAL },
		{ "prev_pid == 1a", EINVAL },
		{ "prev_pid", EINVAL },
		{ "", EINVAL },
		{ "   ", EINVAL },
		{ "0", EINVAL },
		{ "!", EINVAL },
		{ "()", EINVAL },
		{ "prev_pid == +1", EINVAL },
		{ "prev_pid ~ 1", EINVAL },
		{ "prev_pid == 12345678901234567890123", EINVAL },
		{ "(prev_pid == 1", ENOENT },
		{ "prev_pid == 1)", EPERM },
		{ "prev_comm == \"abc", ESRCH },
		{ "prev_pid == 1 & next_pid == 2", EPERM },
		{ "prev_pid >= 1 junk", EPERM },
		{ "prev_pid == 1 || || next_pid == 2", EPERM },
		{ "(prev_pid == 1 &&)", EPERM },
	};
	static const char *const good[] = {
		"prev_pid == 1",
		"  prev_pid == 1  ",
		"\tprev_pid\t==\t1\n",
		"prev_pid==1&&next_pid!=2",
		"prev_comm ~ \"a\" && prev_pid < 3 || (next_pid > 2)",
		"prev_pid != -5",
		"prev_state & 0x10",
		"!(prev_pid == 1) && !!(next_pid <= 010)",
		"prev_comm == 'x' || comm ~ \"[a-z]*\" || COMM != \"y\" || cpu == 0 || CPU >= 1",
	};
	char *big;

	tap_check(fd >= 0 && set_filter(fd, "prev_pid == 1") == -EINVAL,
		  "a software event's filter is EINVAL", "fd %d", fd);
	tap_check(fd >= 0 && set_filter(fd, (const char *)8) == -EFAULT,
		  "a software event's bad filter pointer is EFAULT (copied first)", "fd %d", fd);
	close(fd);
	if (sw_id < 0) {
		tap_fail("sched_switch id", "%s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[200];

		fd = tp_open(sw_id, 0, 0);
		r = set_filter(fd, bad[i].s);
		snprintf(what, sizeof(what), "filter [%s] is %s", bad[i].s, strerror(bad[i].err));
		tap_check(r == -bad[i].err, what, "%s", strerror(-r));
		/* the event has no filter after a failed one */
		snprintf(what, sizeof(what), "a filter after [%s] is set", bad[i].s);
		r = set_filter(fd, "prev_pid == 1");
		tap_check(r == 0, what, "%s", strerror(-r));
		close(fd);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char what[200];

		fd = tp_open(sw_id, 0, 0);
		r = set_filter(fd, good[i]);
		snprintf(what, sizeof(what), "filter [%s] parses", shown(good[i]));
		tap_check(r == 0, what, "%s", strerror(-r));
		snprintf(what, sizeof(what), "a second filter after [%s] is EEXIST", shown(good[i]));
		r = set_filter(fd, "nosuch");
		tap_check(r == -EEXIST, what, "%s", strerror(-r));
		close(fd);
	}
	fd = tp_open(sw_id, 0, 0);
	r = set_filter(fd, (const char *)8);
	tap_check(r == -EFAULT,
		  "a tracepoint's bad filter pointer is EFAULT", "%s", strerror(-r));
	big = malloc(8192);
	memset(big, ' ', 8191);
	memcpy(big, "prev_pid == 1", 13);
	big[4096] = 0;
	r = set_filter(fd, big);
	tap_check(r == -EINVAL, "a filter of 4096 characters is EINVAL",
		  "%s", strerror(-r));
	big[4095] = 0;
	r = set_filter(fd, big);
	tap_check(r == 0, "a filter of 4095 characters is set", "%s",
		  strerror(-r));
	free(big);
	close(fd);
}

/* ---- 2 ---- */

/* A counting event of tracepoint id with filter f around run() (true: it ran right): its
 * count, all ones when run failed; *r the SET_FILTER result. */
static uint64_t filtered_count(long id, const char *f, bool (*run)(void), int *r)
{
	int fd = tp_open(id, 0, 0);
	bool ok;
	uint64_t c;

	*r = set_filter(fd, f);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ok = run();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	c = count_of(fd);
	close(fd);
	return ok ? c : ~0ull;
}

static bool run_closes(void)
{
	closes();
	return true;
}

static void test_counting(void)
{
	long id = event_id("syscalls/sys_enter_close");
	char comm[16] = { 0 }, s[160];
	struct {
		char f[96];
		uint64_t want;
	} t[] = {
		{ "fd == 1001", 5 },
		{ "fd > 1000 && fd < 1002", 5 },
		{ "fd >= 1001", 12 },
		{ "fd <= 1001", 8 },
		{ "fd == 1000 || fd == 1002", 10 },
		{ "!(fd == 1001)", 10 },
		{ "!(fd == 1000 || fd == 1001) && fd != 1003", 7 },
		{ "fd == 1000 || fd == 1001 && fd == 1002", 3 },
		{ "(fd == 1000 || fd == 1001) && fd != 1000", 5 },
		{ "fd & 2", 7 },
		{ "fd & 0x400", 0 },
		{ "fd == 0x3e9", 5 },
		{ "fd != 1001 && fd != 1002", 3 },
		{ "__syscall_nr == 57", 15 },
		{ "cpu >= 0 && CPU < 4096", 15 },
		{ "comm ~ \"*\"", 15 },
		{ "comm ~ \"t_tp*\"", 15 },
		{ "comm ~ \"*filt*\"", 15 },
		{ "comm ~ \"x*\"", 0 },
		{ "comm ~ \"t_?p_[e-g]ilter\"", 15 },
		{ "comm ~ \"!t_tp*\"", 0 },
		{ "", 15 }, /* comm == "<our name>" */
		{ "", 0 },  /* comm != "<our name>" */
		{ "", 5 },  /* common_pid == <our tid> && fd == 1001 */
	};
	size_t n = sizeof(t) / sizeof(t[0]);

	prctl(PR_GET_NAME, comm);
	snprintf(t[n - 3].f, sizeof(t[n - 3].f), "comm == \"%s\"", comm);
	snprintf(t[n - 2].f, sizeof(t[n - 2].f), "comm != \"%s\" && fd > 0", comm);
	snprintf(t[n - 1].f, sizeof(t[n - 1].f), "common_pid == %ld && fd == 1001",
		 (long)syscall(SYS_gettid));
	for (size_t i = 0; i < n; i++) {
		int r;
		uint64_t c = filtered_count(id, t[i].f, run_closes, &r);

		snprintf(s, sizeof(s), "[%.96s] counts %llu", t[i].f, (unsigned long long)t[i].want);
		tap_check(!r && c == t[i].want, s, "set %s, count %llu", strerror(-r),
			  (unsigned long long)c);
	}
}

/* ---- 3 ---- */

static void test_sampling(void)
{
	long id = event_id("syscalls/sys_enter_close");
	int fd = tp_open(id, 0, 1), r = set_filter(fd, "fd == 1002 || fd == 1000");
	size_t size = 9 * 4096;
	struct perf_event_mmap_page *pg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int n1000 = 0, n1002 = 0, other = 0;

	if (r || pg == MAP_FAILED) {
		tap_fail("sampling with a filter", "set %s, mmap %p", strerror(-r), (void *)pg);
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	closes();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), pos = 0;
	const uint8_t *data = (const uint8_t *)pg + 4096;

	while (pos < head) {
		const struct perf_event_header *h = (const void *)(data + pos % (8 * 4096));
		uint64_t arg;

		if (h->type == PERF_RECORD_SAMPLE) {
			/* u32 size, then the record: args[0] at record offset 16 */
			memcpy(&arg, (const uint8_t *)h + 8 + 4 + 16, 8);
			if (arg == 1000)
				n1000++;
			else if (arg == 1002)
				n1002++;
			else
				other++;
		}
		pos += h->size;
	}
	tap_check(n1000 == 3 && n1002 == 7 && !other,
		  "sampling: only the hits the filter passes are samples (3 + 7)",
		  "fd 1000: %d, 1002: %d, others %d", n1000, n1002, other);
	munmap(pg, size);
	close(fd);
}

/* ---- 4 ---- */

static void test_inherit(void)
{
	long id = event_id("syscalls/sys_enter_close");
	int fd = tp_open(id, 1, 0), r = set_filter(fd, "fd == 1001 || fd == 1000"), st;
	pid_t pid;

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pid = fork();
	if (pid == 0) {
		closes();
		closes();
		_exit(0);
	}
	waitpid(pid, &st, 0);
	closes();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t c = count_of(fd);

	tap_check(!r && c == 24, "inherit: the child's hits pass the parent's filter (2 x 8 + 8)",
		  "set %s, count %llu", strerror(-r), (unsigned long long)c);
	close(fd);
}

/* ---- 5 ---- */

static int fork_as(const char *name, int n)
{
	prctl(PR_SET_NAME, name);
	for (int i = 0; i < n; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return -1;
	}
	return 0;
}

/* forks as "alpha" twice and "beta" three times, then takes this task's name back */
static bool run_forks(void)
{
	char comm[16] = { 0 };
	bool ok;

	prctl(PR_GET_NAME, comm);
	ok = !fork_as("alpha", 2) && !fork_as("beta", 3);
	prctl(PR_SET_NAME, comm);
	return ok;
}

static void test_strings(void)
{
	long id = event_id("sched/sched_process_fork");
	static const struct {
		const char *f;
		uint64_t want;
	} t[] = {
		{ "parent_comm == \"alpha\"", 2 },
		{ "parent_comm == \"alph\"", 0 },
		{ "parent_comm != \"beta\"", 2 },
		{ "parent_comm == \"be*\"", 0 },
		{ "parent_comm ~ \"be*\"", 3 },
		{ "parent_comm ~ \"*lph*\"", 2 },
		{ "parent_comm ~ \"?eta\"", 3 },
		{ "parent_comm ~ \"[ab]*\"", 5 },
		{ "parent_comm ~ \"[!a]*\"", 3 },
		{ "parent_comm ~ \"*ta\"", 0 },
		{ "parent_comm ~ \"*\" && child_comm ~ \"alpha\"", 2 },
		{ "child_pid > 0 && (parent_comm == \"alpha\" || parent_comm == \"beta\")", 5 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r;
		uint64_t c = filtered_count(id, t[i].f, run_forks, &r);
		char s[128];

		snprintf(s, sizeof(s), "[%.96s] counts %llu", t[i].f, (unsigned long long)t[i].want);
		tap_check(!r && c == t[i].want, s, "set %s, count %llu", strerror(-r),
			  (unsigned long long)c);
	}
}

/* ---- 6 ---- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC), r;

	if (fd < 0)
		return -errno;
	r = (int)write(fd, s, strlen(s));
	r = r < 0 ? -errno : r;
	close(fd);
	return r;
}

static void check_file(const char *path, const char *want, const char *what)
{
	char buf[1024];
	int n = read_file(path, buf, sizeof(buf));

	tap_check(n >= 0 && !strcmp(buf, want), what, "read %d [%s]", n, n >= 0 ? buf : "");
}

static void test_files(void)
{
	const char *cl = EV "syscalls/sys_enter_close/filter";
	const char *sw = EV "sched/sched_switch/filter", *wk = EV "sched/sched_wakeup/filter";
	static const char sys_default[] =
		"### global filter ###\n# Use this to set filters for multiple events.\n"
		"# Only events with the given fields will be affected.\n"
		"# If no events are modified, an error message will be displayed here\n";
	int r;

	check_file(cl, "none\n", "an event's filter file starts as none");
	r = write_str(cl, "fd == 1001\n");
	tap_check(r == 11, "a filter written to the file is taken", "%d", r);
	check_file(cl, "fd == 1001\n", "the file shows the filter (trailing white space cut)");
	{
		long id = event_id("syscalls/sys_enter_close");
		int fd = tp_open(id, 0, 0);

		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		closes();
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		uint64_t c = count_of(fd);

		tap_check(c == 15, "the filter file does not filter perf's events", "count %llu",
			  (unsigned long long)c);
		close(fd);
	}
	r = write_str(cl, "nosuch == 1");
	tap_check(r == -EINVAL, "a bad filter written is EINVAL", "%d", r);
	check_file(cl, "nosuch == 1\n       ^\nparse_error: Field not found\n\n",
		   "the file shows the parse error under its position");
	r = write_str(cl, "(fd == 1");
	tap_check(r == -ENOENT, "a filter with an open '(' written is ENOENT", "%d", r);
	check_file(cl, "(fd == 1\n^\nparse_error: Too many '('\n\n", "the file shows Too many '('");
	r = write_str(cl, "fd == 1 ||");
	check_file(cl, "fd == 1 ||\n          ^\nparse_error: Meaningless filter expression\n\n",
		   "a trailing || is a meaningless filter expression");
	r = write_str(cl, "   ");
	tap_check(r == -EINVAL, "a blank filter is EINVAL", "%d", r);
	check_file(cl, "\nError: (0)\n\n", "a blank filter shows Error: (0)");
	r = write_str(cl, "0");
	tap_check(r == 1, "writing 0 clears the filter", "%d", r);
	check_file(cl, "none\n", "a cleared filter is none");

	r = write_str(EV "sched/filter", "prev_pid == 1");
	tap_check(r == 13, "a system filter is taken", "%d", r);
	check_file(EV "sched/filter", sys_default, "the system filter file keeps its default text");
	check_file(sw, "prev_pid == 1\n", "the system filter sets each event that has the fields");
	check_file(wk,
		   "prev_pid == 1\n^\nparse_error: Couldn't find or set field in one of a "
		   "subsystem's events\n\n",
		   "an event without the fields shows the subsystem error");
	r = write_str(EV "sched/filter", "0");
	tap_check(r == 1, "0 clears a system's filters", "%d", r);
	check_file(sw, "none\n", "sched_switch's filter cleared by the system's 0");
	check_file(wk, "none\n", "sched_wakeup's filter cleared by the system's 0");
}

/* ---- 7 ---- */

/* openat of paths that do not exist: 3 x /nonexistent/a1, 2 x /nonexistent/b22 */
static bool opens(void)
{
	for (int i = 0; i < 5; i++)
		syscall(SYS_openat, AT_FDCWD, i < 3 ? "/nonexistent/a1" : "/nonexistent/b22",
			O_RDONLY);
	return true;
}

static void test_pointers(void)
{
	long id = event_id("syscalls/sys_enter_openat");
	const char *of = EV "syscalls/sys_enter_openat/filter";
	static const struct {
		const char *f;
		uint64_t want;
	} t[] = {
		{ "filename.ustring == \"/nonexistent/a1\"", 3 },
		{ "filename.ustring ~ \"/nonexistent/*\"", 5 },
		{ "filename.ustring ~ \"*b22\"", 2 },
		{ "filename.ustring != \"/nonexistent/a1\" && filename.ustring ~ \"/non*\"", 2 },
		{ "filename == \"/nonexistent/a1\"", 0 }, /* a user pointer read as kernel memory */
		{ "filename != \"x\"", 0 },		 /* never matches, whatever the operator */
	};
	char s[160];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r;
		uint64_t c = filtered_count(id, t[i].f, opens, &r);

		snprintf(s, sizeof(s), "char *: [%.96s] counts %llu", t[i].f,
			 (unsigned long long)t[i].want);
		tap_check(!r && c == t[i].want, s, "set %s, count %llu", strerror(-r),
			  (unsigned long long)c);
	}
	int fd = tp_open(id, 0, 0), r = set_filter(fd, "filename.ustring == 3");

	tap_check(r == -EINVAL, "char *: FIELD.ustring with a number is EINVAL", "%d", r);
	close(fd);
	r = write_str(of, "filename.ustringx == \"x\"");
	tap_check(r == -EINVAL, "char *: FIELD.ustringx is EINVAL", "%d", r);
	check_file(of, "filename.ustringx == \"x\"\n                 ^\nparse_error: Invalid operator\n\n",
		   "char *: the file shows the operator error after \".ustring\"");
	r = write_str(of, "mode.ustring == \"x\"");
	check_file(of, "mode.ustring == \"x\"\n                 ^\nparse_error: Expecting numeric field\n\n",
		   "char *: .ustring after a number field is that field (a string for it is an error)");
	r = write_str(of, "comm.ustring == \"x\"");
	tap_check(r == 19, "char *: .ustring after comm is comm", "%d", r);
	write_str(of, "0");
}

int main(void)
{
	tap_init("t_tp_filter", 120);
	test_errnos();
	test_counting();
	test_sampling();
	test_inherit();
	test_strings();
	test_files();
	test_pointers();
	return tap_done();
}
