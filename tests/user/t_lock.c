/* t_lock: POSIX record locks (fcntl F_GETLK / F_SETLK / F_SETLKW, lockf) as Linux 6.1 gives
 * them: locks owned per process (a fork child owns none of its parent's), read/write
 * conflicts, EAGAIN, F_GETLK's report (type, range, pid), splitting and merging of one owner's
 * ranges, negative lengths, downgrade, F_SETLKW waiting and EINTR, release on close of any
 * descriptor of the file and at exit, and the errnos of bad requests.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PATH_ "/tmp/t_lock.file"

struct result {
	int ret, err;
	struct flock fl;
	long ms;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* fcntl(fd, cmd, fl) in a fork child (another lock owner): its result, and fl updated. */
static struct result in_child(int fd, int cmd, struct flock *fl)
{
	struct result r = { .ret = -2 };
	int p[2];

	if (pipe(p))
		return r;
	pid_t pid = fork();

	if (pid == 0) {
		long t0 = now_ms();

		r.ret = fcntl(fd, cmd, fl);
		r.err = errno;
		r.fl = *fl;
		r.ms = now_ms() - t0;
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ret = -3;
	close(p[0]);
	waitpid(pid, NULL, 0);
	*fl = r.fl;
	return r;
}

static int lk(int fd, int cmd, short type, short whence, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = whence, .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/* Another owner's F_GETLK of [start, start+len): the flock it reports. */
static struct flock probe(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	in_child(fd, F_GETLK, &fl);
	return fl;
}

/* Can another owner take this lock now (F_SETLK)? 0, or its errno. */
static int other_can(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	struct result r = in_child(fd, F_SETLK, &fl);

	return r.ret == 0 ? 0 : r.err;
}

static void t_basic(int fd)
{
	struct flock fl;

	CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0) == 0, "F_SETLK F_WRLCK of the whole file", "errno %d", errno);
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET };
	CHECK(fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK, "F_GETLK: our own lock does not conflict",
	      "type %d", fl.l_type);
	CHECK(other_can(fd, F_WRLCK, 0, 1) == EAGAIN, "another process: F_WRLCK -> EAGAIN", "%d",
	      other_can(fd, F_WRLCK, 0, 1));
	CHECK(other_can(fd, F_RDLCK, 1000, 10) == EAGAIN, "another process: F_RDLCK past the end -> EAGAIN", "%d",
	      other_can(fd, F_RDLCK, 1000, 10));
	fl = probe(fd, F_RDLCK, 5, 1);
	CHECK(fl.l_type == F_WRLCK && fl.l_whence == SEEK_SET && fl.l_start == 0 && fl.l_len == 0 &&
		      fl.l_pid == getpid(),
	      "another process's F_GETLK: F_WRLCK, 0, length 0, our pid", "type %d start %ld len %ld pid %d",
	      fl.l_type, (long)fl.l_start, (long)fl.l_len, fl.l_pid);
	CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0) == 0, "relocking our own range succeeds", "errno %d", errno);
	/* downgrade: readers may share, writers still wait */
	CHECK(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 0) == 0, "downgrade to F_RDLCK", "errno %d", errno);
	CHECK(other_can(fd, F_RDLCK, 0, 0) == 0, "another process: F_RDLCK shares it", "%d",
	      other_can(fd, F_RDLCK, 0, 0));
	CHECK(other_can(fd, F_WRLCK, 0, 0) == EAGAIN, "another process: F_WRLCK -> EAGAIN", "%d",
	      other_can(fd, F_WRLCK, 0, 0));
	CHECK(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0) == 0 && other_can(fd, F_WRLCK, 0, 0) == 0,
	      "F_UNLCK: free for others", "errno %d", errno);
}

static void t_ranges(int fd)
{
	struct flock fl;

	/* split: [0,99] less [40,59] */
	lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 100);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 40, 20);
	fl = probe(fd, F_WRLCK, 0, 1);
	CHECK(fl.l_type == F_WRLCK && fl.l_start == 0 && fl.l_len == 40, "unlock of the middle: [0, 40) stays",
	      "type %d start %ld len %ld", fl.l_type, (long)fl.l_start, (long)fl.l_len);
	fl = probe(fd, F_WRLCK, 70, 1);
	CHECK(fl.l_type == F_WRLCK && fl.l_start == 60 && fl.l_len == 40, "and [60, 100)", "type %d start %ld len %ld",
	      fl.l_type, (long)fl.l_start, (long)fl.l_len);
	fl = probe(fd, F_WRLCK, 50, 1);
	CHECK(fl.l_type == F_UNLCK, "and nothing at 50", "type %d", fl.l_type);
	CHECK(other_can(fd, F_WRLCK, 40, 20) == 0, "another process locks the hole", "errno");
	/* merge: filling the hole joins the three */
	lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 40, 20);
	fl = probe(fd, F_WRLCK, 10, 1);
	CHECK(fl.l_start == 0 && fl.l_len == 100, "adjacent locks of one type merge: [0, 100)", "start %ld len %ld",
	      (long)fl.l_start, (long)fl.l_len);
	/* a read lock in the middle of a write lock splits it three ways */
	lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 40, 20);
	fl = probe(fd, F_WRLCK, 45, 1);
	CHECK(fl.l_type == F_RDLCK && fl.l_start == 40 && fl.l_len == 20, "a read lock inside a write lock: [40, 60) read",
	      "type %d start %ld len %ld", fl.l_type, (long)fl.l_start, (long)fl.l_len);
	CHECK(other_can(fd, F_RDLCK, 45, 5) == 0 && other_can(fd, F_RDLCK, 30, 1) == EAGAIN,
	      "others may read-lock only the read part", "errno");
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
	/* negative length and SEEK_CUR / SEEK_END */
	CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 10, -5) == 0, "l_len -5 at 10", "errno %d", errno);
	fl = probe(fd, F_WRLCK, 0, 0);
	CHECK(fl.l_start == 5 && fl.l_len == 5, "covers [5, 10)", "start %ld len %ld", (long)fl.l_start,
	      (long)fl.l_len);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
	lseek(fd, 30, SEEK_SET);
	lk(fd, F_SETLK, F_WRLCK, SEEK_CUR, 2, 3);
	fl = probe(fd, F_WRLCK, 0, 0);
	CHECK(fl.l_start == 32 && fl.l_len == 3, "SEEK_CUR: from the file offset", "start %ld len %ld",
	      (long)fl.l_start, (long)fl.l_len);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
	lk(fd, F_SETLK, F_WRLCK, SEEK_END, -4, 2); /* the file is 100 bytes */
	fl = probe(fd, F_WRLCK, 0, 0);
	CHECK(fl.l_start == 96 && fl.l_len == 2, "SEEK_END: from the size", "start %ld len %ld", (long)fl.l_start,
	      (long)fl.l_len);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void t_wait(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int p[2];

	lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0);
	if (pipe(p))
		return;
	pid_t pid = fork();

	if (pid == 0) {
		long t0 = now_ms();
		int r = fcntl(fd, F_SETLKW, &fl);
		long ms = now_ms() - t0;

		_exit(r == 0 && ms >= 80 ? 0 : 1);
	}
	usleep(150000);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
	int st = -1;

	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "F_SETLKW waits until the holder unlocks", "status %#x", st);
	CHECK(other_can(fd, F_WRLCK, 0, 0) == 0, "the waiter's lock went with its exit", "errno");
	/* interrupted by a signal */
	lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_alarm };

		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		int r = fcntl(fd, F_SETLKW, &fl);

		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "F_SETLKW interrupted by a signal -> EINTR", "status %#x", st);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
	close(p[0]);
	close(p[1]);
}

static void t_close_exit(int fd)
{
	int other = open(PATH_, O_RDONLY);

	lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0);
	close(other);
	CHECK(other_can(fd, F_WRLCK, 0, 0) == 0, "closing another descriptor of the file drops our locks", "errno");
	/* a child's lock goes at its exit; lockf */
	pid_t pid;
	int p[2], st;
	char c;

	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (lockf(fd, F_TLOCK, 0))
			_exit(1);
		if (write(p[1], "l", 1) != 1)
			_exit(2);
		usleep(100000);
		_exit(0);
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1, "a child takes lockf(F_TLOCK)", "errno %d", errno);
	errno = 0;
	CHECK(lockf(fd, F_TEST, 0) == -1 && (errno == EACCES || errno == EAGAIN), "lockf(F_TEST) sees it",
	      "errno %d", errno);
	CHECK(lockf(fd, F_TLOCK, 0) == -1 && (errno == EACCES || errno == EAGAIN), "lockf(F_TLOCK) fails",
	      "errno %d", errno);
	waitpid(pid, &st, 0);
	CHECK(lockf(fd, F_TLOCK, 0) == 0, "after the child's exit it succeeds", "errno %d", errno);
	lockf(fd, F_ULOCK, 0);
	close(p[0]);
}

static void t_errors(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = 7 };
	int rd = open(PATH_, O_RDONLY), wr = open(PATH_, O_WRONLY);

	EXPECT_ERRNO(fcntl(fd, F_SETLK, &fl), EINVAL, "l_whence 7 -> EINVAL");
	EXPECT_ERRNO(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, -1, 1), EINVAL, "a start before 0 -> EINVAL");
	EXPECT_ERRNO(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 2, -3), EINVAL, "a negative length past 0 -> EINVAL");
	EXPECT_ERRNO(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 2, INT64_MAX), EOVERFLOW, "a range past OFFSET_MAX -> EOVERFLOW");
	EXPECT_ERRNO(lk(fd, F_SETLK, 9, SEEK_SET, 0, 0), EINVAL, "l_type 9 -> EINVAL");
	EXPECT_ERRNO(lk(fd, F_GETLK, F_UNLCK, SEEK_SET, 0, 0), EINVAL, "F_GETLK of F_UNLCK -> EINVAL");
	EXPECT_ERRNO(lk(rd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0), EBADF, "F_WRLCK on a read-only fd -> EBADF");
	EXPECT_ERRNO(lk(wr, F_SETLK, F_RDLCK, SEEK_SET, 0, 0), EBADF, "F_RDLCK on a write-only fd -> EBADF");
	EXPECT_ERRNO(fcntl(fd, F_SETLK, (struct flock *)8), EFAULT, "a bad struct flock pointer -> EFAULT");
	EXPECT_ERRNO(lk(999, F_SETLK, F_WRLCK, SEEK_SET, 0, 0), EBADF, "a closed fd -> EBADF");
	close(rd);
	close(wr);
}

int main(void)
{
	char buf[100];
	int fd;

	tap_init("t_lock", 60);
	unlink(PATH_);
	fd = open(PATH_, O_RDWR | O_CREAT, 0644);
	memset(buf, 'x', sizeof(buf));
	if (!tap_ok(fd, errno, "open") || write(fd, buf, sizeof(buf)) != sizeof(buf))
		return 1;
	t_basic(fd);
	t_ranges(fd);
	t_wait(fd);
	t_close_exit(fd);
	t_errors(fd);
	close(fd);
	unlink(PATH_);
	return tap_done();
}
