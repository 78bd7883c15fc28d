/* t_pidfd: process file descriptors as Linux 6.1 makes them.
 * pidfd_open: O_RDWR, close-on-exec, PIDFD_NONBLOCK shows in F_GETFL; pid <= 0, unknown flags
 * and a thread that is not its group's leader EINVAL, no such process ESRCH; a zombie still has
 * one, a reaped process not.
 * poll: nothing while the process runs, POLLIN once it has exited (a sleeper is woken).
 * waitid(P_PIDFD): the child's exit (CLD_KILLED / CLD_EXITED, its pid and status), WNOHANG 0
 * with a zeroed siginfo, a PIDFD_NONBLOCK pidfd EAGAIN instead of waiting, id -1 EINVAL, not a
 * pidfd EBADF, not our child (ourselves, our parent) ECHILD, after the reap ECHILD; the siginfo
 * is zeroed on those errors too.
 * pidfd_send_signal: flags EINVAL, not a pidfd EBADF, info's si_signo other than sig EINVAL,
 * a non-negative si_code to another process EPERM (allowed to ourselves), an invalid signal
 * EINVAL; an SI_QUEUE siginfo arrives with its value; signal 0 to a zombie 0, after the reap
 * ESRCH.  fdinfo's Pid: the id, -1 once reaped.
 * clone(CLONE_PIDFD) puts the child's pidfd (close-on-exec) at parent_tid; with
 * CLONE_PARENT_SETTID, CLONE_DETACHED or CLONE_THREAD it is EINVAL.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static long send_sig(int fd, int sig, siginfo_t *info, unsigned int flags)
{
	return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static long waitid_fd(int fd, siginfo_t *si, int options)
{
	return syscall(SYS_waitid, P_PIDFD, fd, si, options, NULL);
}

/* fdinfo's Pid: value, or -100 when there is none */
static int fdinfo_pid(int fd)
{
	char path[64], buf[512];
	int f, n, pid = -100;
	char *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -100;
	n = (int)read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -100;
	buf[n] = 0;
	p = strstr(buf, "Pid:\t");
	if (p)
		sscanf(p + 5, "%d", &pid);
	return pid;
}

static void *thread_fn(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

static void check_open(void)
{
	pid_t tid = 0;
	pthread_t th;
	int fd;

	fd = pidfd_open(getpid(), 0);
	if (!CHECK(fd >= 0, "pidfd_open(getpid(), 0)", "errno %d", errno))
		return;
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "close-on-exec", "%d", fcntl(fd, F_GETFD));
	CHECK((fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK)) == O_RDWR, "O_RDWR, blocking",
	      "%#x", fcntl(fd, F_GETFL));
	CHECK(fdinfo_pid(fd) == getpid(), "fdinfo Pid: is our pid", "%d", fdinfo_pid(fd));
	close(fd);
	fd = pidfd_open(getpid(), PIDFD_NONBLOCK);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK), "PIDFD_NONBLOCK: F_GETFL has O_NONBLOCK",
	      "fd %d errno %d", fd, errno);
	close(fd);
	EXPECT_ERRNO(pidfd_open(0, 0), EINVAL, "pidfd_open(0): EINVAL");
	EXPECT_ERRNO(pidfd_open(-1, 0), EINVAL, "pidfd_open(-1): EINVAL");
	EXPECT_ERRNO(pidfd_open(getpid(), 1), EINVAL, "pidfd_open flags 1: EINVAL");
	EXPECT_ERRNO(pidfd_open(getpid(), O_CLOEXEC), EINVAL, "pidfd_open flags O_CLOEXEC: EINVAL");
	EXPECT_ERRNO(pidfd_open(0x7ffffff0, 0), ESRCH, "pidfd_open(no such pid): ESRCH");
	/* a thread that is not the leader */
	if (pthread_create(&th, NULL, thread_fn, &tid) == 0) {
		pthread_join(th, NULL);
		/* the thread is gone now: a second one that stays would be a live non-leader */
	}
	CHECK(tid > 0 && tid != getpid(), "a thread ran", "tid %d", tid);
}

static volatile pid_t live_tid;
static int thread_pipe[2];

static void *thread_wait(void *arg)
{
	char c;

	live_tid = gettid();
	if (read(thread_pipe[0], &c, 1) < 0) {
	}
	return NULL;
}

static void check_thread(void)
{
	pthread_t th;

	if (pipe(thread_pipe) || pthread_create(&th, NULL, thread_wait, NULL))
		return;
	while (!live_tid)
		usleep(1000);
	EXPECT_ERRNO(pidfd_open(live_tid, 0), EINVAL, "pidfd_open(a live non-leader thread): EINVAL");
	if (write(thread_pipe[1], "x", 1) < 0) {
	}
	pthread_join(th, NULL);
	close(thread_pipe[0]);
	close(thread_pipe[1]);
}

static void check_send_errors(int fd, int pipefd)
{
	siginfo_t si;

	EXPECT_ERRNO(send_sig(fd, 0, NULL, 1), EINVAL, "pidfd_send_signal flags 1: EINVAL");
	EXPECT_ERRNO(send_sig(pipefd, 0, NULL, 0), EBADF, "pidfd_send_signal on a pipe: EBADF");
	EXPECT_ERRNO(send_sig(9999, 0, NULL, 0), EBADF, "pidfd_send_signal on no fd: EBADF");
	EXPECT_ERRNO(send_sig(fd, SIGUSR1, (siginfo_t *)8, 0), EFAULT,
		     "pidfd_send_signal with a bad info pointer: EFAULT");
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR2;
	si.si_code = SI_QUEUE;
	EXPECT_ERRNO(send_sig(fd, SIGUSR1, &si, 0), EINVAL, "info's si_signo is not sig: EINVAL");
	si.si_signo = SIGUSR1;
	si.si_code = SI_USER;
	EXPECT_ERRNO(send_sig(fd, SIGUSR1, &si, 0), EPERM, "si_code SI_USER to another process: EPERM");
	EXPECT_ERRNO(send_sig(fd, 100, NULL, 0), EINVAL, "signal 100: EINVAL");
	CHECK(send_sig(fd, 0, NULL, 0) == 0, "signal 0 to a live process: 0", "errno %d", errno);
}

static void check_child(void)
{
	int fd, nbfd, self, pp, p2[2];
	siginfo_t si;
	struct pollfd pf;
	pid_t pid;

	if (pipe(p2))
		return;
	pid = fork();
	if (pid == 0) {
		sigset_t set;
		siginfo_t got;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		if (write(p2[1], "r", 1) < 0) {
		}
		if (sigwaitinfo(&set, &got) != SIGUSR1)
			_exit(9);
		_exit(got.si_code == SI_QUEUE && got.si_value.sival_int == 42 &&
				      got.si_pid == getppid() ? 7 : 8);
	}
	char c;

	if (read(p2[0], &c, 1) != 1)
		return;
	fd = pidfd_open(pid, 0);
	nbfd = pidfd_open(pid, PIDFD_NONBLOCK);
	if (!CHECK(fd >= 0 && nbfd >= 0, "pidfd_open(child)", "errno %d", errno))
		return;
	pf.fd = fd;
	pf.events = POLLIN;
	pf.revents = 0;
	CHECK(poll(&pf, 1, 0) == 0, "poll on a running child: nothing", "revents %#x", pf.revents);
	memset(&si, 0xff, sizeof(si));
	CHECK(waitid_fd(fd, &si, WEXITED | WNOHANG) == 0 && si.si_pid == 0 && si.si_signo == 0,
	      "waitid(P_PIDFD, WNOHANG) on a running child: 0, siginfo zeroed", "errno %d pid %d",
	      errno, si.si_pid);
	EXPECT_ERRNO(waitid_fd(nbfd, &si, WEXITED), EAGAIN,
		     "waitid(P_PIDFD) on a PIDFD_NONBLOCK pidfd of a running child: EAGAIN");
	EXPECT_ERRNO(waitid_fd(-1, &si, WEXITED), EINVAL, "waitid(P_PIDFD, -1): EINVAL");
	EXPECT_ERRNO(waitid_fd(p2[0], &si, WEXITED), EBADF, "waitid(P_PIDFD, a pipe): EBADF");
	EXPECT_ERRNO(waitid_fd(fd, &si, 0), EINVAL, "waitid(P_PIDFD) without WEXITED...: EINVAL");
	self = pidfd_open(getpid(), 0);
	pp = pidfd_open(getppid(), 0);
	memset(&si, 0xff, sizeof(si));
	EXPECT_ERRNO(waitid_fd(self, &si, WEXITED | WNOHANG), ECHILD,
		     "waitid(P_PIDFD, our own pidfd): ECHILD");
	CHECK(si.si_signo == 0 && si.si_pid == 0, "the siginfo is zeroed on that error too",
	      "signo %d pid %d", si.si_signo, si.si_pid);
	if (pp >= 0)
		EXPECT_ERRNO(waitid_fd(pp, &si, WEXITED | WNOHANG), ECHILD,
			     "waitid(P_PIDFD, our parent's pidfd): ECHILD");
	check_send_errors(fd, p2[0]);

	/* a queued signal with its value */
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 42;
	CHECK(send_sig(fd, SIGUSR1, &si, 0) == 0, "pidfd_send_signal(SIGUSR1, SI_QUEUE info): 0",
	      "errno %d", errno);
	pf.revents = 0;
	CHECK(poll(&pf, 1, 5000) == 1 && (pf.revents & POLLIN),
	      "poll wakes with POLLIN when the child exits", "revents %#x", pf.revents);
	CHECK(send_sig(fd, 0, NULL, 0) == 0, "signal 0 to the zombie: 0", "errno %d", errno);
	int zfd = pidfd_open(pid, 0);

	CHECK(zfd >= 0, "pidfd_open of a zombie", "errno %d", errno);
	memset(&si, 0, sizeof(si));
	CHECK(waitid_fd(nbfd, &si, WEXITED) == 0 && si.si_pid == pid && si.si_signo == SIGCHLD &&
		      si.si_code == CLD_EXITED && si.si_status == 7,
	      "waitid(P_PIDFD): its exit, the SI_QUEUE value arrived (status 7)",
	      "errno %d pid %d code %d status %d", errno, si.si_pid, si.si_code, si.si_status);
	CHECK(fdinfo_pid(fd) == -1, "fdinfo Pid: -1 once reaped", "%d", fdinfo_pid(fd));
	pf.revents = 0;
	CHECK(poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN), "still POLLIN after the reap",
	      "revents %#x", pf.revents);
	EXPECT_ERRNO(send_sig(fd, 0, NULL, 0), ESRCH, "pidfd_send_signal after the reap: ESRCH");
	EXPECT_ERRNO(waitid_fd(fd, &si, WEXITED | WNOHANG), ECHILD, "waitid after the reap: ECHILD");
	EXPECT_ERRNO(pidfd_open(pid, 0), ESRCH, "pidfd_open of a reaped process: ESRCH");
	close(zfd);
	close(fd);
	close(nbfd);
	close(self);
	if (pp >= 0)
		close(pp);
	close(p2[0]);
	close(p2[1]);

	/* killed by a signal sent through its pidfd, found by waitid on it */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	fd = pidfd_open(pid, 0);
	CHECK(send_sig(fd, SIGTERM, NULL, 0) == 0, "pidfd_send_signal(SIGTERM)", "errno %d", errno);
	memset(&si, 0, sizeof(si));
	CHECK(waitid_fd(fd, &si, WEXITED) == 0 && si.si_pid == pid && si.si_code == CLD_KILLED &&
		      si.si_status == SIGTERM,
	      "waitid(P_PIDFD) blocks until it dies: CLD_KILLED by SIGTERM", "pid %d code %d status %d",
	      si.si_pid, si.si_code, si.si_status);
	close(fd);
}

/* clone(CLONE_PIDFD): the child's pidfd at parent_tid */
static void check_clone_pidfd(void)
{
	int pidfd = -1;
	siginfo_t si;
	struct pollfd pf;
	long pid;

	EXPECT_ERRNO(syscall(SYS_clone, CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, 0, &pidfd, 0, 0),
		     EINVAL, "clone(CLONE_PIDFD | CLONE_PARENT_SETTID): EINVAL");
	EXPECT_ERRNO(syscall(SYS_clone, CLONE_PIDFD | CLONE_DETACHED | SIGCHLD, 0, &pidfd, 0, 0),
		     EINVAL, "clone(CLONE_PIDFD | CLONE_DETACHED): EINVAL");
	EXPECT_ERRNO(syscall(SYS_clone, CLONE_PIDFD | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, 0,
			     &pidfd, 0, 0),
		     EINVAL, "clone(CLONE_PIDFD | CLONE_THREAD): EINVAL");
	pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
	if (pid == 0)
		_exit(5);
	if (!CHECK(pid > 0 && pidfd >= 0, "clone(CLONE_PIDFD): a pidfd at parent_tid",
		   "pid %ld errno %d fd %d", pid, errno, pidfd))
		return;
	CHECK(fcntl(pidfd, F_GETFD) == FD_CLOEXEC && fdinfo_pid(pidfd) == pid,
	      "close-on-exec, fdinfo Pid: the child", "%d %d", fcntl(pidfd, F_GETFD),
	      fdinfo_pid(pidfd));
	pf.fd = pidfd;
	pf.events = POLLIN;
	pf.revents = 0;
	CHECK(poll(&pf, 1, 5000) == 1 && (pf.revents & POLLIN), "POLLIN once it exits", "%#x",
	      pf.revents);
	memset(&si, 0, sizeof(si));
	CHECK(waitid_fd(pidfd, &si, WEXITED) == 0 && si.si_pid == pid && si.si_code == CLD_EXITED &&
		      si.si_status == 5,
	      "waitid(P_PIDFD) on it: exit status 5", "pid %d code %d status %d", si.si_pid,
	      si.si_code, si.si_status);
	close(pidfd);
}

static void check_self(void)
{
	siginfo_t si;
	int fd = pidfd_open(getpid(), 0);

	memset(&si, 0, sizeof(si));
	si.si_signo = 0;
	si.si_code = SI_USER;
	CHECK(send_sig(fd, 0, &si, 0) == 0, "si_code SI_USER to ourselves (the leader): allowed",
	      "errno %d", errno);
	close(fd);
}

int main(void)
{
	tap_init("t_pidfd", 60);
	check_open();
	check_thread();
	check_self();
	check_child();
	check_clone_pidfd();
	return tap_done();
}
