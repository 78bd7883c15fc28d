/* t_pipe: pipe2 flags, blocking/nonblocking semantics, EOF, EPIPE/SIGPIPE,
 * large transfers across fork, ppoll/pselect6 readiness and timeouts.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void check_flags(void)
{
	int p[2];
	CHECK(pipe2(p, 0) == 0 && p[0] >= 0 && p[1] >= 0 && p[0] != p[1], "pipe2 flags 0", "errno %d", errno);
	CHECK(fcntl(p[0], F_GETFD) == 0 && (fcntl(p[0], F_GETFL) & O_ACCMODE) == O_RDONLY &&
		      (fcntl(p[1], F_GETFL) & O_ACCMODE) == O_WRONLY,
	      "pipe ends are O_RDONLY / O_WRONLY", "fl %#x %#x", fcntl(p[0], F_GETFL), fcntl(p[1], F_GETFL));
	char c;
	EXPECT_ERRNO(write(p[0], "x", 1), EBADF, "write to read end -> EBADF");
	EXPECT_ERRNO(read(p[1], &c, 1), EBADF, "read from write end -> EBADF");
	EXPECT_ERRNO(lseek(p[0], 0, SEEK_SET), ESPIPE, "lseek on pipe -> ESPIPE");
	EXPECT_ERRNO(pread(p[0], &c, 1, 0), ESPIPE, "pread on pipe -> ESPIPE");
	close(p[0]), close(p[1]);

	CHECK(pipe2(p, O_CLOEXEC) == 0 && fcntl(p[0], F_GETFD) == FD_CLOEXEC && fcntl(p[1], F_GETFD) == FD_CLOEXEC,
	      "pipe2 O_CLOEXEC sets FD_CLOEXEC on both", "errno %d", errno);
	close(p[0]), close(p[1]);
	CHECK(pipe2(p, O_NONBLOCK) == 0 && (fcntl(p[0], F_GETFL) & O_NONBLOCK) && (fcntl(p[1], F_GETFL) & O_NONBLOCK),
	      "pipe2 O_NONBLOCK on both ends", "errno %d", errno);
	EXPECT_ERRNO(read(p[0], &c, 1), EAGAIN, "empty nonblocking pipe read -> EAGAIN");
	static char big[1 << 17];
	ssize_t total = 0, n;
	while ((n = write(p[1], big, sizeof(big))) > 0)
		total += n;
	int e = errno;
	CHECK(n == -1 && e == EAGAIN && total == 65536, "full nonblocking pipe: 65536 then EAGAIN",
	      "total %zd errno %d", total, e);
	CHECK(fcntl(p[1], F_GETPIPE_SZ) == 65536, "F_GETPIPE_SZ 65536", "%d", fcntl(p[1], F_GETPIPE_SZ));
	ssize_t got = read(p[0], big, sizeof(big));
	CHECK(got == 65536, "read drains whole pipe in one call", "got %zd", got);
	close(p[0]), close(p[1]);
	EXPECT_ERRNO(pipe2(p, O_RDWR), EINVAL, "pipe2 bad flags -> EINVAL");
	EXPECT_ERRNO(pipe2(p, 0x1), EINVAL, "pipe2 flag 1 -> EINVAL");
}

static void check_blocking(void)
{
	int p[2];
	pipe2(p, 0);
	/* t0 before the fork: the child's 100 ms start there, and the parent may first run after
	 * some of them have gone (that made this check fail under load with 85 ms) */
	long long t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct timespec d = {0, 100 * 1000 * 1000};
		nanosleep(&d, NULL);
		write(p[1], "wake", 4);
		_exit(0);
	}
	close(p[1]);
	char buf[16] = {0};
	ssize_t n = read(p[0], buf, sizeof(buf));
	long long dt = now_ms() - t0;
	CHECK(n == 4 && memcmp(buf, "wake", 4) == 0, "blocking read woken by writer in child", "n %zd", n);
	CHECK(dt >= 90, "blocking read actually blocked (~100ms)", "took %lld ms", dt);
	n = read(p[0], buf, sizeof(buf));
	CHECK(n == 0, "EOF after the only writer exits", "n %zd errno %d", n, errno);
	waitpid(pid, NULL, 0);
	close(p[0]);

	/* EOF only after all writers close (dup'd write end) */
	pipe2(p, O_NONBLOCK);
	int w2 = dup(p[1]);
	close(p[1]);
	EXPECT_ERRNO(read(p[0], buf, 1), EAGAIN, "still a writer (dup) -> EAGAIN not EOF");
	close(w2);
	CHECK(read(p[0], buf, 1) == 0, "last writer closed -> EOF", "errno %d", errno);
	close(p[0]);
}

static void check_epipe(void)
{
	int p[2];
	pipe2(p, 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	EXPECT_ERRNO(write(p[1], "x", 1), EPIPE, "write with no readers, SIGPIPE ignored -> EPIPE");
	CHECK(write(p[1], "", 0) == 0, "a null write with no readers -> 0 (Linux's pipe_write)", "errno %d", errno);
	signal(SIGPIPE, SIG_DFL);
	pid_t pid = fork();
	if (pid == 0) {
		write(p[1], "x", 1);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "write with no readers, default -> killed by SIGPIPE",
	      "status %#x", st);
	/* blocked SIGPIPE: EPIPE and SIGPIPE left pending */
	sigset_t s, old, pend;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	sigprocmask(SIG_BLOCK, &s, &old);
	EXPECT_ERRNO(write(p[1], "x", 1), EPIPE, "SIGPIPE blocked -> EPIPE");
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGPIPE), "SIGPIPE pending after EPIPE", "not pending");
	signal(SIGPIPE, SIG_IGN); /* discards the pending one */
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
}

static void check_large(void)
{
	int p[2];
	pipe2(p, 0);
	enum { N = 1 << 20 };
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		static unsigned char buf[N];
		for (int i = 0; i < N; i++)
			buf[i] = (unsigned char)(i * 7 + (i >> 10));
		ssize_t n = write(p[1], buf, N); /* one write of 1 MiB: blocks until fully written */
		_exit(n == N ? 0 : 1);
	}
	close(p[1]);
	static unsigned char in[N];
	size_t got = 0;
	ssize_t n;
	int reads = 0;
	while ((n = read(p[0], in + got, N - got)) > 0) {
		got += n;
		reads++;
		if (got == N)
			break;
	}
	int bad = -1;
	for (int i = 0; i < (int)got; i++)
		if (in[i] != (unsigned char)(i * 7 + (i >> 10))) {
			bad = i;
			break;
		}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(got == N && bad < 0, "1 MiB across fork arrives intact", "got %zu first bad %d", got, bad);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "single 1 MiB write returns full count", "status %#x", st);
	CHECK(reads > 1, "large transfer needed several reads (pipe capacity limited)", "reads %d", reads);
	close(p[0]);
}

static void check_poll(void)
{
	int p[2];
	pipe2(p, 0);
	struct pollfd pf[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}};
	struct timespec ts = {0, 50 * 1000 * 1000};
	long long t0 = now_ms();
	int r = ppoll(pf, 1, &ts, NULL);
	long long dt = now_ms() - t0;
	CHECK(r == 0 && pf[0].revents == 0, "ppoll empty pipe times out -> 0", "r %d revents %#x", r, pf[0].revents);
	CHECK(dt >= 45, "ppoll waited ~50ms", "dt %lld", dt);
	r = ppoll(pf, 2, &ts, NULL);
	CHECK(r == 1 && pf[1].revents == POLLOUT && pf[0].revents == 0, "ppoll write end ready POLLOUT",
	      "r %d revents %#x %#x", r, pf[0].revents, pf[1].revents);
	write(p[1], "a", 1);
	r = ppoll(pf, 2, &ts, NULL);
	CHECK(r == 2 && pf[0].revents == POLLIN, "ppoll read end POLLIN after write", "r %d revents %#x", r,
	      pf[0].revents);
	struct timespec zero = {0, 0};
	r = ppoll(pf, 1, &zero, NULL);
	CHECK(r == 1, "ppoll zero timeout polls", "r %d", r);
	char c;
	read(p[0], &c, 1);
	close(p[1]);
	r = ppoll(pf, 1, &ts, NULL);
	CHECK(r == 1 && (pf[0].revents & POLLHUP) && !(pf[0].revents & POLLIN), "ppoll POLLHUP after writer closes",
	      "r %d revents %#x", r, pf[0].revents);
	struct pollfd nv = {555, POLLIN, 0};
	r = ppoll(&nv, 1, &zero, NULL);
	CHECK(r == 1 && nv.revents == POLLNVAL, "ppoll bad fd -> POLLNVAL", "r %d revents %#x", r, nv.revents);
	struct pollfd neg = {-1, POLLIN, 77};
	r = ppoll(&neg, 1, &zero, NULL);
	CHECK(r == 0 && neg.revents == 0, "ppoll negative fd ignored, revents cleared", "r %d revents %#x", r,
	      neg.revents);
	close(p[0]);

	int q[2];
	pipe2(q, 0);
	int rq[2];
	pipe2(rq, 0);
	/* ppoll woken by a child's write */
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 80 * 1000 * 1000};
		nanosleep(&d, NULL);
		write(rq[1], "z", 1);
		_exit(0);
	}
	struct pollfd w = {rq[0], POLLIN, 0};
	struct timespec lng = {3, 0};
	t0 = now_ms();
	r = ppoll(&w, 1, &lng, NULL);
	dt = now_ms() - t0;
	CHECK(r == 1 && (w.revents & POLLIN) && dt < 2500, "ppoll woken by child's write", "r %d dt %lld", r, dt);
	waitpid(pid, NULL, 0);

	/* pselect6 */
	fd_set rs, ws;
	FD_ZERO(&rs);
	FD_SET(q[0], &rs);
	t0 = now_ms();
	r = pselect(q[0] + 1, &rs, NULL, NULL, &ts, NULL);
	dt = now_ms() - t0;
	CHECK(r == 0 && !FD_ISSET(q[0], &rs) && dt >= 45, "pselect6 empty pipe times out", "r %d dt %lld", r, dt);
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(q[0], &rs);
	FD_SET(q[1], &ws);
	int nfds = (q[0] > q[1] ? q[0] : q[1]) + 1;
	r = pselect(nfds, &rs, &ws, NULL, &ts, NULL);
	CHECK(r == 1 && FD_ISSET(q[1], &ws) && !FD_ISSET(q[0], &rs), "pselect6 write end writable", "r %d", r);
	write(q[1], "b", 1);
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(q[0], &rs);
	FD_SET(q[1], &ws);
	r = pselect(nfds, &rs, &ws, NULL, &ts, NULL);
	CHECK(r == 2 && FD_ISSET(q[0], &rs) && FD_ISSET(q[1], &ws), "pselect6 both ready counts 2", "r %d", r);
	/* raw pselect6 updates the timeout (Linux writes back the remaining time) */
	struct timespec rem = {0, 200 * 1000 * 1000};
	FD_ZERO(&rs);
	FD_SET(q[0], &rs);
	r = syscall(SYS_pselect6, q[0] + 1, &rs, NULL, NULL, &rem, NULL);
	CHECK(r == 1 && rem.tv_sec == 0 && rem.tv_nsec <= 200 * 1000 * 1000, "raw pselect6 ready at once",
	      "r %d rem %ld", r, rem.tv_nsec);
	/* A closed fd inside the fd table. (Linux silently ignores set bits beyond the
	 * fd table's current size, so a huge fd number is not a portable EBADF case.) */
	int closed = dup(0);
	close(closed);
	FD_ZERO(&rs);
	FD_SET(closed, &rs);
	EXPECT_ERRNO(pselect(closed + 1, &rs, NULL, NULL, &zero, NULL), EBADF, "pselect6 closed fd -> EBADF");
	EXPECT_ERRNO(pselect(-1, NULL, NULL, NULL, &zero, NULL), EINVAL, "pselect6 negative nfds -> EINVAL");
	struct timespec badts = {0, -1};
	EXPECT_ERRNO(pselect(0, NULL, NULL, NULL, &badts, NULL), EINVAL, "pselect6 bad timeout -> EINVAL");
	EXPECT_ERRNO(ppoll(&w, 1, &badts, NULL), EINVAL, "ppoll bad timeout -> EINVAL");
	close(q[0]), close(q[1]), close(rq[0]), close(rq[1]);
}

int main(void)
{
	tap_init("t_pipe", 20);
	check_flags();
	check_blocking();
	check_epipe();
	check_large();
	check_poll();
	return tap_done();
}
