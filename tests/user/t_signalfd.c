/* t_signalfd: signalfd4(2) as Linux 6.1 gives it (perf daemon reads SIGCHLD from one): records
 * for kill, sigqueue and a child's exit (signo, code, pid, uid, status, value), several per
 * read, poll readiness, a blocking read woken by a signal, the mask replaced through the fd,
 * the signal consumed, /proc/self/fd's name, and the errnos of bad arguments.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static short revents(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

int main(void)
{
	struct signalfd_siginfo si[2];
	sigset_t m, pend;
	char link[64], path[64];
	int fd, pfd[2];

	tap_init("t_signalfd", 60);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigaddset(&m, SIGCHLD);
	sigaddset(&m, SIGKILL); /* dropped silently */
	sigprocmask(SIG_BLOCK, &m, NULL);
	fd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
	if (!tap_ok(fd, errno, "signalfd(-1, {USR1, CHLD, KILL}, SFD_NONBLOCK | SFD_CLOEXEC)"))
		return tap_done();
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "O_NONBLOCK and FD_CLOEXEC",
	      "fl %#x", fcntl(fd, F_GETFL));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t ln = readlink(path, link, sizeof(link) - 1);

	link[ln > 0 ? ln : 0] = 0;
	CHECK(!strcmp(link, "anon_inode:[signalfd]"), "/proc/self/fd names it anon_inode:[signalfd]", "'%s'", link);
	EXPECT_ERRNO(read(fd, si, sizeof(si[0])), EAGAIN, "nothing pending: EAGAIN");
	CHECK(revents(fd) == 0, "nothing pending: no POLLIN", "%#x", revents(fd));
	EXPECT_ERRNO(read(fd, si, 100), EINVAL, "a read shorter than 128 bytes -> EINVAL");

	kill(getpid(), SIGUSR1);
	CHECK(revents(fd) == POLLIN, "SIGUSR1 pending: POLLIN", "%#x", revents(fd));
	memset(si, 0x55, sizeof(si));
	CHECK(read(fd, si, sizeof(si)) == sizeof(si[0]) && si[0].ssi_signo == SIGUSR1 && si[0].ssi_code == SI_USER &&
		      si[0].ssi_pid == (uint32_t)getpid() && si[0].ssi_uid == getuid() && si[0].ssi_status == 0 &&
		      si[0].ssi_ptr == 0,
	      "kill: one record, SIGUSR1, SI_USER, our pid and uid, the rest 0", "signo %u code %d pid %u ptr %llx",
	      si[0].ssi_signo, si[0].ssi_code, si[0].ssi_pid, (unsigned long long)si[0].ssi_ptr);
	sigpending(&pend);
	CHECK(!sigismember(&pend, SIGUSR1), "the signal is consumed", "still pending");

	union sigval v = { .sival_int = 42 };

	sigqueue(getpid(), SIGUSR1, v);
	CHECK(read(fd, si, sizeof(si[0])) == sizeof(si[0]) && si[0].ssi_code == SI_QUEUE && si[0].ssi_int == 42 &&
		      si[0].ssi_ptr == 42,
	      "sigqueue: SI_QUEUE, ssi_int and ssi_ptr 42", "code %d int %d", si[0].ssi_code, si[0].ssi_int);

	pid_t c = fork();

	if (c == 0)
		_exit(7);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECK(poll(&p, 1, 5000) == 1, "a child's exit makes it readable", "revents %#x", p.revents);
	CHECK(read(fd, si, sizeof(si[0])) == sizeof(si[0]) && si[0].ssi_signo == SIGCHLD &&
		      si[0].ssi_code == CLD_EXITED && si[0].ssi_pid == (uint32_t)c && si[0].ssi_status == 7,
	      "SIGCHLD: CLD_EXITED, the child's pid, status 7", "signo %u code %d pid %u status %d", si[0].ssi_signo,
	      si[0].ssi_code, si[0].ssi_pid, si[0].ssi_status);
	waitpid(c, NULL, 0);

	kill(getpid(), SIGUSR1);
	c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	CHECK(read(fd, si, sizeof(si)) == sizeof(si) && si[0].ssi_signo == SIGUSR1 && si[1].ssi_signo == SIGCHLD,
	      "two pending: one read returns both, lowest number first", "%u %u", si[0].ssi_signo, si[1].ssi_signo);

	/* a blocking read, woken by another process's signal */
	int bfd = signalfd(-1, &m, 0);

	if (pipe(pfd) == 0) {
		c = fork();
		if (c == 0) {
			usleep(100000);
			kill(getppid(), SIGUSR1);
			_exit(0);
		}
		CHECK(read(bfd, si, sizeof(si[0])) == sizeof(si[0]) && si[0].ssi_signo == SIGUSR1 &&
			      si[0].ssi_pid == (uint32_t)c,
		      "a blocking read waits for the signal", "signo %u pid %u", si[0].ssi_signo, si[0].ssi_pid);
		waitpid(c, NULL, 0);
		read(fd, si, sizeof(si)); /* the child's SIGCHLD */
		close(pfd[0]);
		close(pfd[1]);
	}
	close(bfd);

	/* the mask replaced through the fd */
	sigset_t m2;

	sigemptyset(&m2);
	sigaddset(&m2, SIGCHLD);
	CHECK(signalfd(fd, &m2, 0) == fd, "signalfd(fd, {CHLD}) returns fd", "errno %d", errno);
	kill(getpid(), SIGUSR1);
	EXPECT_ERRNO(read(fd, si, sizeof(si[0])), EAGAIN, "SIGUSR1 is no longer read");
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGUSR1), "and stays pending", "not pending");
	signalfd(fd, &m, 0);
	CHECK(read(fd, si, sizeof(si[0])) == sizeof(si[0]) && si[0].ssi_signo == SIGUSR1, "mask back: read it",
	      "signo %u", si[0].ssi_signo);

	/* errors */
	pipe(pfd);
	EXPECT_ERRNO(signalfd(pfd[0], &m, 0), EINVAL, "signalfd on a pipe -> EINVAL");
	EXPECT_ERRNO(signalfd(999, &m, 0), EBADF, "signalfd on a closed fd -> EBADF");
	EXPECT_ERRNO(syscall(SYS_signalfd4, -1, &m, 4, 0), EINVAL, "sizemask 4 -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_signalfd4, -1, &m, 8, 1), EINVAL, "unknown flags -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_signalfd4, -1, 8L, 8, 0), EFAULT, "a bad mask pointer -> EFAULT");
	EXPECT_ERRNO(write(fd, si, sizeof(si[0])), EINVAL, "write -> EINVAL");
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	return tap_done();
}
