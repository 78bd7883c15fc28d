/*
 * t_procabi.c - process ABI that Linux perf's own test suite reads: /proc/PID/fd (readlink
 * names and the listing), /proc/<tid> and /proc/PID/task/<tid> of a thread that does not
 * lead its group; /proc/PID/root; user and system time; CLOCK_REALTIME from the RTC; /sys/kernel/notes' build id; the kernel log (syslog(2) as busybox dmesg reads it, /dev/kmsg).  Each check passes on perfkernel and on Linux 6.1 (refvm.sh).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/eventfd.h>
#include <sys/klog.h>
#include <sys/utsname.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include "tap.h"
#include "sys_perf.h"

static char buf[16384];

/* Read a whole file into buf (NUL-terminated): length or -errno. */
static long slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	long len = 0, n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return -errno;
	buf[len] = 0;
	return len;
}

/* readlink of /proc/<pid>/fd/<fd> into out (NUL-terminated): length or -errno. */
static long fd_link(int pid, int fd, char *out, size_t size)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	long n = readlink(path, out, size - 1);

	if (n < 0)
		return -errno;
	out[n] = 0;
	return n;
}

static void check_link(int pid, int fd, const char *want, const char *what)
{
	char got[512];
	long n = fd_link(pid, fd, got, sizeof(got));

	if (n < 0)
		tap_fail(what, "readlink: %s", strerror((int)-n));
	else
		CHECK(!strcmp(got, want), what, "got \"%s\", want \"%s\"", got, want);
}

static void check_fd_links(void)
{
	char want[512], exe[512];
	struct stat st;
	int p[2], sv[2];

	int fd = open("/dev/null", O_RDONLY);
	check_link(0, fd, "/dev/null", "fd link: /dev/null");
	close(fd);
	long n = fd_link(0, fd, want, sizeof(want));
	CHECK(n == -ENOENT, "fd link: closed fd is ENOENT", "got %ld", n);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		fd = open(exe, O_RDONLY);
		check_link(0, fd, exe, "fd link: regular file is its path");
		/* a walk through the link opens the same file */
		snprintf(want, sizeof(want), "/proc/self/fd/%d", fd);
		int fd2 = open(want, O_RDONLY);
		struct stat a, b;

		CHECK(fd2 >= 0 && !fstat(fd, &a) && !fstat(fd2, &b) && a.st_ino == b.st_ino &&
			      a.st_size == b.st_size,
		      "open(/proc/self/fd/N) opens the same file", "fd2 %d errno %d", fd2, errno);
		if (fd2 >= 0)
			close(fd2);
		close(fd);
	}
	if (!pipe(p) && !fstat(p[0], &st)) {
		snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)st.st_ino);
		check_link(0, p[0], want, "fd link: pipe read end pipe:[ino]");
		check_link(0, p[1], want, "fd link: pipe write end pipe:[ino]");
	}
	if (!socketpair(AF_UNIX, SOCK_STREAM, 0, sv) && !fstat(sv[0], &st)) {
		snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)st.st_ino);
		check_link(0, sv[0], want, "fd link: socket:[ino]");
		close(sv[0]);
		close(sv[1]);
	}
	fd = eventfd(0, 0);
	check_link(0, fd, "anon_inode:[eventfd]", "fd link: eventfd");
	close(fd);

	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
	};
	fd = (int)sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		tap_fail("fd link: perf event", "perf_event_open: %s", strerror(errno));
	else
		check_link(0, fd, "anon_inode:[perf_event]", "fd link: perf event");

	union bpf_attr ba;

	memset(&ba, 0, sizeof(ba));
	ba.map_type = BPF_MAP_TYPE_ARRAY;
	ba.key_size = 4;
	ba.value_size = 8;
	ba.max_entries = 4;
	int mfd = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &ba, sizeof(ba));

	if (mfd < 0)
		tap_fail("fd link: bpf map", "BPF_MAP_CREATE: %s", strerror(errno));
	else
		check_link(0, mfd, "anon_inode:bpf-map", "fd link: bpf map");

	/* /proc/<pid>/fd/N names the same as /proc/self/fd/N */
	if (fd >= 0) {
		check_link(getpid(), fd, "anon_inode:[perf_event]", "fd link: /proc/<pid>/fd/N");
		close(fd);
	}
	if (mfd >= 0)
		close(mfd);

	/* another process's table: a child holding a pipe end at fd 40 */
	if (!pipe(p)) {
		pid_t pid = fork();

		if (pid == 0) {
			char c;

			dup2(p[0], 40);
			close(p[1]);
			write(sv[1], "", 0);
			_exit(read(40, &c, 1) == 1 ? 0 : 1);
		}
		/* wait until the child's fd 40 is there (its dup2) */
		for (int i = 0; i < 500 && fd_link(pid, 40, want, sizeof(want)) < 0; i++)
			usleep(10000);
		fstat(p[0], &st);
		snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)st.st_ino);
		check_link(pid, 40, want, "fd link: another process's fd");
		write(p[1], "x", 1);
		waitpid(pid, NULL, 0);
		close(p[0]);
		close(p[1]);
	}
}

/* readdir /proc/self/fd lists exactly the open descriptors (its own directory fd too). */
static void check_fd_listing(void)
{
	int extra[3] = { open("/dev/null", O_RDONLY), dup2(0, 37), eventfd(0, 0) };
	DIR *d = opendir("/proc/self/fd");
	char listed[128] = { 0 };
	int bad = -1, n = 0;

	if (!d) {
		tap_fail("fd listing", "opendir: %s", strerror(errno));
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int fd = atoi(e->d_name);

		if (fd < 0 || fd >= 128 || e->d_type != DT_LNK)
			bad = fd;
		else
			listed[fd] = 1;
		n++;
	}
	for (int fd = 0; fd < 128; fd++)
		if ((fcntl(fd, F_GETFD) >= 0) != listed[fd])
			bad = fd;
	CHECK(bad == -1 && listed[dirfd(d)] && listed[37], "fd listing: exactly the open fds",
	      "fd %d differs (%d entries)", bad, n);
	closedir(d);
	for (int i = 0; i < 3; i++)
		close(extra[i]);
}

/* ---- a thread that does not lead ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int worker_tid, worker_done;

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, "worker1");
	pthread_mutex_lock(&mu);
	worker_tid = (int)gettid();
	pthread_cond_broadcast(&cv);
	while (!worker_done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

static const char *field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? p + strlen(name) : "";
}

static void check_status(const char *path, int tid, const char *what)
{
	char w[128];
	long n = slurp(path);

	if (n < 0) {
		tap_fail(what, "%s: %s", path, strerror((int)-n));
		return;
	}
	int ok = !strncmp(field(buf, "Name:\t"), "worker1\n", 8) &&
		 atoi(field(buf, "\nTgid:\t")) == getpid() && atoi(field(buf, "\nPid:\t")) == tid &&
		 atoi(field(buf, "\nPPid:\t")) == getppid();

	snprintf(w, sizeof(w), "%s: Name, Tgid, Pid, PPid", what);
	CHECK(ok, w, "%.200s", buf);
}

static void check_thread_files(int tid)
{
	char path[128], want[64];
	long n;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	check_status(path, tid, "/proc/<tid>/status");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", getpid(), tid);
	check_status(path, tid, "/proc/<pid>/task/<tid>/status");

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	snprintf(want, sizeof(want), "%d (worker1) ", tid);
	n = slurp(path);
	CHECK(n > 0 && !strncmp(buf, want, strlen(want)), "/proc/<tid>/stat: pid and comm",
	      "%ld: %.80s", n, n > 0 ? buf : "");
	if (n > 0) {
		/* field 4 ppid; fields 14-17 times; field 20 num_threads (>= 2) */
		char *p = strrchr(buf, ')');
		int ppid = 0, nthreads = 0;
		long skip;

		if (p && sscanf(p + 2, "%*c %d %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld "
				"%ld %ld %d", &ppid, &skip, &skip, &skip, &skip, &skip, &skip,
				&skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip,
				&nthreads) == 17)
			CHECK(ppid == getppid() && nthreads == 2,
			      "/proc/<tid>/stat: ppid and num_threads", "ppid %d threads %d", ppid,
			      nthreads);
		else
			tap_fail("/proc/<tid>/stat: ppid and num_threads", "parse: %.120s", buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	n = slurp(path);
	CHECK(n == 8 && !strcmp(buf, "worker1\n"), "/proc/<tid>/comm", "%ld \"%s\"", n,
	      n > 0 ? buf : "");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", getpid(), tid);
	n = slurp(path);
	CHECK(n == 8 && !strcmp(buf, "worker1\n"), "/proc/<pid>/task/<tid>/comm", "%ld \"%s\"",
	      n, n > 0 ? buf : "");

	/* task/ lists both threads, from the leader's directory and from the thread's */
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", i ? tid : getpid());
		DIR *d = opendir(path);
		int seen_me = 0, seen_tid = 0, others = 0;

		for (struct dirent *e; d && (e = readdir(d));) {
			int id = atoi(e->d_name);

			if (e->d_name[0] == '.')
				continue;
			if (id == getpid())
				seen_me++;
			else if (id == tid)
				seen_tid++;
			else
				others++;
		}
		if (d)
			closedir(d);
		CHECK(seen_me == 1 && seen_tid == 1 && !others,
		      i ? "/proc/<tid>/task lists both threads" : "/proc/<pid>/task lists both threads",
		      "leader %d thread %d others %d (%s)", seen_me, seen_tid, others,
		      d ? "" : strerror(errno));
	}
	/* /proc itself lists only thread-group leaders */
	DIR *d = opendir("/proc");
	int listed = 0;

	for (struct dirent *e; d && (e = readdir(d));)
		if (atoi(e->d_name) == tid)
			listed = 1;
	if (d)
		closedir(d);
	CHECK(d && !listed, "/proc lists no thread ids", "tid %d listed", tid);
}

static void check_threads(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, worker, NULL)) {
		tap_fail("thread", "pthread_create failed");
		return;
	}
	pthread_mutex_lock(&mu);
	while (!worker_tid)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	check_thread_files(worker_tid);
	pthread_mutex_lock(&mu);
	worker_done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
}

/* ---- the kernel log: syslog(2) (klogctl, busybox dmesg) and /dev/kmsg ---- */

static char logbuf[1 << 19];

static long read_all(void)
{
	int n = klogctl(10, NULL, 0); /* SYSLOG_ACTION_SIZE_BUFFER */

	if (n <= 0)
		return -1;
	n = klogctl(3, logbuf, n < (int)sizeof(logbuf) - 1 ? n : (int)sizeof(logbuf) - 1);
	if (n >= 0)
		logbuf[n] = 0;
	return n;
}

/* The line of logbuf holding text, or NULL. */
static const char *log_line(const char *text)
{
	const char *p = strstr(logbuf, text);

	if (!p)
		return NULL;
	while (p > logbuf && p[-1] != '\n')
		p--;
	return p;
}

/* "<prio>[ sssss.uuuuuu] " in front of a READ_ALL line (Linux with CONFIG_PRINTK_TIME) */
static int syslog_prefix_ok(const char *line, int prio)
{
	char want[16];
	int n = snprintf(want, sizeof(want), "<%d>[", prio), dot = 0, digits = 0;

	if (strncmp(line, want, n))
		return 0;
	for (line += n; *line && *line != ']'; line++) {
		if (*line == '.')
			dot++;
		else if (*line >= '0' && *line <= '9')
			digits++;
		else if (*line != ' ' || dot)
			return 0;
	}
	return *line == ']' && line[1] == ' ' && dot == 1 && digits >= 7;
}

static void check_syslog(void)
{
	char marker[64], line[512];
	struct utsname u;

	EXPECT_ERRNO(klogctl(3, NULL, 10), EINVAL, "syslog READ_ALL NULL buffer: EINVAL");
	EXPECT_ERRNO(klogctl(3, logbuf, -1), EINVAL, "syslog READ_ALL negative length: EINVAL");
	EXPECT_ERRNO(klogctl(99, logbuf, 10), EINVAL, "syslog unknown action: EINVAL");
	EXPECT_ERRNO(klogctl(8, NULL, 0), EINVAL, "syslog CONSOLE_LEVEL 0: EINVAL");
	EXPECT_ERRNO(klogctl(8, NULL, 9), EINVAL, "syslog CONSOLE_LEVEL 9: EINVAL");
	/* (long enough for the newest record: a buffer it does not fit is never written) */
	EXPECT_ERRNO(klogctl(3, (char *)8, 65536), EFAULT, "syslog READ_ALL bad buffer: EFAULT");
	CHECK(klogctl(3, logbuf, 0) == 0, "syslog READ_ALL length 0: 0", "errno %d", errno);
	CHECK(klogctl(10, NULL, 0) >= 4096, "syslog SIZE_BUFFER", "got %d", klogctl(10, NULL, 0));

	/* a write to /dev/kmsg is a record: LOG_USER unless the prefix names a facility */
	snprintf(marker, sizeof(marker), "t_procabi marker %d", getpid());
	int fd = open("/dev/kmsg", O_RDWR | O_NONBLOCK);

	if (fd < 0) {
		tap_fail("/dev/kmsg", "open: %s", strerror(errno));
		return;
	}
	lseek(fd, 0, SEEK_END);
	snprintf(line, sizeof(line), "<5>%s\n", marker);
	CHECK(write(fd, line, strlen(line)) == (ssize_t)strlen(line), "/dev/kmsg write",
	      "errno %d", errno);
	long n = read_all();
	const char *l = n > 0 ? log_line(marker) : NULL;

	CHECK(l && syslog_prefix_ok(l, 13) && !strncmp(strstr(l, "] ") + 2, marker, strlen(marker)),
	      "syslog READ_ALL: the /dev/kmsg record as <13>[time] text",
	      "%ld bytes, line: %.80s", n, l ? l : "(none)");
	/* /dev/kmsg reads one record per read: prio,seq,usecs,flags;text */
	long r = read(fd, line, sizeof(line) - 1);

	if (r > 0)
		line[r] = 0;
	unsigned long long seq, us;
	int prio, used = 0;

	CHECK(r > 0 && sscanf(line, "%d,%llu,%llu,-;%n", &prio, &seq, &us, &used) == 3 &&
		      used && prio == 13 && !strncmp(line + used, marker, strlen(marker)),
	      "/dev/kmsg read: 13,seq,usecs,-;text", "%ld errno %d: %.80s", r, errno,
	      r > 0 ? line : "");
	/* a record that does not fit: EINVAL, and the reader is past it (Linux 6.1) */
	char tiny[8];

	write(fd, "<5>second\n", 10);
	errno = 0;
	r = read(fd, tiny, sizeof(tiny));
	CHECK(r == -1 && errno == EINVAL, "/dev/kmsg read into a short buffer: EINVAL",
	      "got %ld errno %d", r, errno);
	errno = 0;
	r = read(fd, line, sizeof(line));
	CHECK(r == -1 && errno == EAGAIN, "/dev/kmsg read at the end, O_NONBLOCK: EAGAIN",
	      "got %ld errno %d", r, errno);
	close(fd);

	/* an unknown syscall is ENOSYS; perfkernel notes it in the log (not on the console:
	 * tests/qemu/user.sh checks the console), Linux says nothing */
	errno = 0;
	r = syscall(500, 1, 2, 3);
	CHECK(r == -1 && errno == ENOSYS, "unknown syscall 500: ENOSYS", "got %ld errno %d", r,
	      errno);
	if (!uname(&u) && strstr(u.release, "perfkernel")) {
		read_all();
		l = log_line("unknown syscall 500 ");
		CHECK(l && syslog_prefix_ok(l, 4), "unknown syscall in the kernel log (dmesg)",
		      "%.80s", l ? l : "(none)");
	} else {
		tap_skip("unknown syscall in the kernel log (dmesg)", "Linux does not log it");
	}
}

/* ---- the wall clock, the kernel's build id ---- */

static void check_realtime(void)
{
	struct timespec ts;

	/* set from the RTC at boot (QEMU virt's PL031 on perfkernel) */
	CHECK(!clock_gettime(CLOCK_REALTIME, &ts) && ts.tv_sec > 1577836800,
	      "CLOCK_REALTIME is after 2020-01-01", "%lld", (long long)ts.tv_sec);
}

/* /sys/kernel/notes: the kernel's ELF notes, raw (Elf64_Nhdr, name and desc 4-aligned) */
static void check_notes(void)
{
	int fd = open("/sys/kernel/notes", O_RDONLY);
	long n = 0, r;
	int found = 0, bad = 0;

	if (fd < 0) {
		tap_fail("/sys/kernel/notes", "open: %s", strerror(errno));
		return;
	}
	while ((r = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += r;
	close(fd);
	for (long at = 0; at + 12 <= n;) {
		uint32_t h[3];

		memcpy(h, buf + at, 12);
		long next = at + 12 + ((h[0] + 3) & ~3u) + ((h[1] + 3) & ~3u);

		if (next > n) {
			bad = 1;
			break;
		}
		if (h[2] == 3 /* NT_GNU_BUILD_ID */ && h[0] == 4 && !memcmp(buf + at + 12, "GNU", 4))
			found = h[1];
		at = next;
	}
	CHECK(!bad && found == 20, "/sys/kernel/notes: an NT_GNU_BUILD_ID note, 20 bytes",
	      "%ld bytes, build id %d bytes%s", n, found, bad ? ", truncated note" : "");
}

/* ---- user and system time ---- */

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv_sec(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* utime and stime of /proc/self/stat (fields 14, 15), in clock ticks */
static int stat_times(long *ut, long *st)
{
	long n = slurp("/proc/self/stat");
	char *p = n > 0 ? strrchr(buf, ')') : NULL;

	return p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", ut, st) == 2;
}

static void check_cputime(void)
{
	struct rusage a, b, sa, sb;
	struct tms ta, tb;
	long ut0, st0, ut1, st1;
	double t0;
	volatile unsigned long spin = 0;

	/* a loop of cheap syscalls: its time is mostly the kernel's */
	getrusage(RUSAGE_THREAD, &a);
	getrusage(RUSAGE_SELF, &sa);
	times(&ta);
	int have_stat = stat_times(&ut0, &st0);

	t0 = thread_cpu();
	while (thread_cpu() - t0 < 0.4)
		for (int i = 0; i < 200; i++)
			syscall(__NR_getppid);
	getrusage(RUSAGE_THREAD, &b);
	getrusage(RUSAGE_SELF, &sb);
	times(&tb);
	double du = tv_sec(b.ru_utime) - tv_sec(a.ru_utime);
	double ds = tv_sec(b.ru_stime) - tv_sec(a.ru_stime);

	CHECK(ds > 0.04, "syscall loop: RUSAGE_THREAD system time", "user %.3f s, system %.3f s",
	      du, ds);
	CHECK(tv_sec(sb.ru_stime) - tv_sec(sa.ru_stime) > 0.04,
	      "syscall loop: RUSAGE_SELF system time", "system %.3f s",
	      tv_sec(sb.ru_stime) - tv_sec(sa.ru_stime));
	CHECK(tb.tms_stime - ta.tms_stime > 4, "syscall loop: times() tms_stime", "%ld ticks",
	      (long)(tb.tms_stime - ta.tms_stime));
	CHECK(have_stat && stat_times(&ut1, &st1) && st1 - st0 > 4,
	      "syscall loop: /proc/self/stat stime", "%ld ticks", have_stat ? st1 - st0 : -1);

	/* a pure user loop: mostly user time */
	getrusage(RUSAGE_THREAD, &a);
	t0 = thread_cpu();
	while (thread_cpu() - t0 < 0.4)
		for (int i = 0; i < 1000000; i++)
			spin++;
	getrusage(RUSAGE_THREAD, &b);
	du = tv_sec(b.ru_utime) - tv_sec(a.ru_utime);
	ds = tv_sec(b.ru_stime) - tv_sec(a.ru_stime);
	CHECK(du > 0.2 && du > ds, "user loop: user time over system time",
	      "user %.3f s, system %.3f s", du, ds);
}

/* /proc/PID/root: a link to the process's root, "/" here, that walks and openat(2)s through
 * as bcc's symbol resolver does (bpftrace's ustack): openat(root fd, "bin/prog") */
static void check_root(void)
{
	char got[512], exe[512], path[600];
	struct stat a, b;
	long n;

	n = readlink("/proc/self/root", got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = 0;
	CHECK(n == 1 && !strcmp(got, "/"), "readlink(/proc/self/root) is /", "n %ld \"%s\" errno %d",
	      n, got, errno);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)getppid());
	n = readlink(path, got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = 0;
	CHECK(n == 1 && !strcmp(got, "/"), "readlink(/proc/PPID/root) is /", "n %ld \"%s\" errno %d",
	      n, got, errno);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || stat("/proc/self/exe", &a)) {
		tap_fail("/proc/self/root walks", "/proc/self/exe: %s", strerror(errno));
		return;
	}
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/self/root%s", exe);
	CHECK(!stat(path, &b) && a.st_ino == b.st_ino, "stat(/proc/self/root/<exe>) is the program",
	      "%s errno %d", path, errno);
	int root = open("/proc/self/root", O_RDONLY);
	int fd = root >= 0 ? openat(root, exe + 1, O_RDONLY) : -1;

	CHECK(fd >= 0 && !fstat(fd, &b) && a.st_ino == b.st_ino,
	      "openat(open(/proc/self/root), <exe without />) opens the program", "root %d fd %d errno %d",
	      root, fd, errno);
	if (fd >= 0)
		close(fd);
	if (root >= 0)
		close(root);
}

int main(void)
{
	tap_init("t_procabi", 60);
	check_root();
	check_fd_links();
	check_fd_listing();
	check_threads();
	check_syslog();
	check_realtime();
	check_notes();
	check_cputime();
	return tap_done();
}
