/* t_socketpair: socketpair(AF_UNIX, SOCK_STREAM) as Linux 6.1 gives it: data both ways, fstat,
 * SOCK_NONBLOCK and SOCK_CLOEXEC, EOF and EPIPE/SIGPIPE after close and shutdown (MSG_NOSIGNAL),
 * poll (POLLIN, POLLOUT, POLLRDHUP, POLLHUP), send/recv with MSG_PEEK, MSG_DONTWAIT and
 * MSG_WAITALL, sendmsg/recvmsg with two iovecs, getsockname/getpeername/recvfrom addresses,
 * getsockopt/setsockopt, the errnos of bad arguments, and no memory left behind by closed pairs.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static int pair(int *sv, int flags)
{
	return socketpair(AF_UNIX, SOCK_STREAM | flags, 0, sv);
}

static void t_data(void)
{
	int sv[2];
	char buf[64];
	struct stat st;

	if (!tap_ok(pair(sv, 0), errno, "socketpair(AF_UNIX, SOCK_STREAM)"))
		return;
	CHECK(write(sv[0], "ping", 4) == 4 && read(sv[1], buf, sizeof(buf)) == 4 && !memcmp(buf, "ping", 4),
	      "bytes written to one end are read from the other", "errno %d", errno);
	CHECK(write(sv[1], "pong!", 5) == 5 && read(sv[0], buf, sizeof(buf)) == 5 && !memcmp(buf, "pong!", 5),
	      "and the other way", "errno %d", errno);
	CHECK(fstat(sv[0], &st) == 0 && S_ISSOCK(st.st_mode), "fstat: S_IFSOCK", "mode %o", st.st_mode);
	CHECK((fcntl(sv[0], F_GETFL) & O_ACCMODE) == O_RDWR, "F_GETFL: O_RDWR", "%#x", fcntl(sv[0], F_GETFL));
	EXPECT_ERRNO(lseek(sv[0], 0, SEEK_SET), ESPIPE, "lseek -> ESPIPE");
	/* a large write is read back whole, in pieces, by a reader in another process */
	pid_t p = fork();

	if (p == 0) {
		static char big[300000];

		memset(big, 'x', sizeof(big));
		_exit(write(sv[0], big, sizeof(big)) == (ssize_t)sizeof(big) ? 0 : 1);
	}
	size_t got = 0;
	ssize_t r;

	while (got < 300000 && (r = read(sv[1], buf, sizeof(buf))) > 0)
		got += (size_t)r;
	int status = -1;

	waitpid(p, &status, 0);
	CHECK(got == 300000 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "300000 bytes from a writer that blocks while the reader catches up", "got %zu status %#x", got, status);
	close(sv[0]);
	close(sv[1]);
}

static void t_flags(void)
{
	int sv[2];
	char c;

	if (!tap_ok(pair(sv, SOCK_NONBLOCK | SOCK_CLOEXEC), errno, "socketpair with SOCK_NONBLOCK | SOCK_CLOEXEC"))
		return;
	CHECK((fcntl(sv[0], F_GETFL) & O_NONBLOCK) && (fcntl(sv[1], F_GETFD) & FD_CLOEXEC),
	      "O_NONBLOCK and FD_CLOEXEC set on both", "fl %#x fd %#x", fcntl(sv[0], F_GETFL), fcntl(sv[1], F_GETFD));
	EXPECT_ERRNO(read(sv[0], &c, 1), EAGAIN, "read of an empty nonblocking socket -> EAGAIN");
	close(sv[0]);
	close(sv[1]);
	if (!tap_ok(pair(sv, 0), errno, "socketpair"))
		return;
	EXPECT_ERRNO(recv(sv[0], &c, 1, MSG_DONTWAIT), EAGAIN, "recv MSG_DONTWAIT of an empty socket -> EAGAIN");
	close(sv[0]);
	close(sv[1]);
}

static void t_close_shutdown(void)
{
	int sv[2];
	char buf[8];
	struct pollfd pfd;

	signal(SIGPIPE, on_sigpipe);
	if (!tap_ok(pair(sv, 0), errno, "socketpair"))
		return;
	CHECK(write(sv[0], "ab", 2) == 2, "write before the peer closes", "errno %d", errno);
	close(sv[0]);
	pfd = (struct pollfd){ .fd = sv[1], .events = POLLIN | POLLOUT | POLLRDHUP };
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP | POLLRDHUP)) == (POLLIN | POLLHUP | POLLRDHUP),
	      "peer closed: POLLIN | POLLHUP | POLLRDHUP", "revents %#x", pfd.revents);
	CHECK(read(sv[1], buf, sizeof(buf)) == 2 && read(sv[1], buf, sizeof(buf)) == 0,
	      "peer closed: the data, then EOF", "errno %d", errno);
	sigpipes = 0;
	EXPECT_ERRNO(write(sv[1], "x", 1), EPIPE, "write to a closed peer -> EPIPE");
	CHECK(sigpipes == 1, "and SIGPIPE", "%d signals", sigpipes);
	EXPECT_ERRNO(send(sv[1], "x", 1, MSG_NOSIGNAL), EPIPE, "send MSG_NOSIGNAL to a closed peer -> EPIPE");
	CHECK(sigpipes == 1, "MSG_NOSIGNAL: no SIGPIPE", "%d signals", sigpipes);
	EXPECT_ERRNO(write(sv[1], "", 0), EPIPE, "even a write of 0 bytes to a closed peer -> EPIPE");
	CHECK(sigpipes == 2, "and SIGPIPE", "%d signals", sigpipes);
	close(sv[1]);

	if (!tap_ok(pair(sv, 0), errno, "socketpair"))
		return;
	CHECK(shutdown(sv[0], SHUT_WR) == 0, "shutdown(SHUT_WR)", "errno %d", errno);
	CHECK(read(sv[1], buf, sizeof(buf)) == 0, "after the peer's SHUT_WR: EOF", "errno %d", errno);
	pfd = (struct pollfd){ .fd = sv[1], .events = POLLIN | POLLOUT | POLLRDHUP };
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLRDHUP | POLLOUT)) == (POLLIN | POLLRDHUP | POLLOUT) &&
		      !(pfd.revents & POLLHUP),
	      "after the peer's SHUT_WR: POLLIN | POLLRDHUP | POLLOUT, no POLLHUP", "revents %#x", pfd.revents);
	CHECK(write(sv[1], "cd", 2) == 2 && read(sv[0], buf, sizeof(buf)) == 2,
	      "the other direction still works", "errno %d", errno);
	sigpipes = 0;
	EXPECT_ERRNO(write(sv[0], "x", 1), EPIPE, "write after our SHUT_WR -> EPIPE");
	CHECK(sigpipes == 1, "and SIGPIPE", "%d signals", sigpipes);
	CHECK(shutdown(sv[0], SHUT_RD) == 0, "shutdown(SHUT_RD)", "errno %d", errno);
	EXPECT_ERRNO(send(sv[1], "x", 1, MSG_NOSIGNAL), EPIPE, "write to a peer that shut down reading -> EPIPE");
	CHECK(read(sv[0], buf, sizeof(buf)) == 0, "read after our SHUT_RD: EOF", "errno %d", errno);
	pfd = (struct pollfd){ .fd = sv[0], .events = POLLIN | POLLRDHUP };
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP), "both directions shut: POLLHUP", "revents %#x",
	      pfd.revents);
	EXPECT_ERRNO(shutdown(sv[0], 3), EINVAL, "shutdown(how 3) -> EINVAL");
	close(sv[0]);
	close(sv[1]);
	signal(SIGPIPE, SIG_DFL);
}

static void t_send_recv(void)
{
	int sv[2];
	char buf[16] = { 0 };

	if (!tap_ok(pair(sv, 0), errno, "socketpair"))
		return;
	struct pollfd pfd = { .fd = sv[1], .events = POLLIN | POLLOUT };

	CHECK(poll(&pfd, 1, 0) == 1 && pfd.revents == POLLOUT, "empty: POLLOUT only", "revents %#x", pfd.revents);
	CHECK(send(sv[0], "hello", 5, 0) == 5, "send", "errno %d", errno);
	CHECK(poll(&pfd, 1, 0) == 1 && pfd.revents == (POLLIN | POLLOUT), "data: POLLIN | POLLOUT", "revents %#x",
	      pfd.revents);
	CHECK(recv(sv[1], buf, 3, MSG_PEEK) == 3 && !memcmp(buf, "hel", 3) && recv(sv[1], buf, 5, 0) == 5 &&
		      !memcmp(buf, "hello", 5),
	      "MSG_PEEK leaves the bytes to read", "errno %d", errno);
	/* MSG_WAITALL: a writer in two halves, 50 ms apart */
	pid_t p = fork();

	if (p == 0) {
		send(sv[0], "12345", 5, 0);
		usleep(50000);
		send(sv[0], "67890", 5, 0);
		_exit(0);
	}
	CHECK(recv(sv[1], buf, 10, MSG_WAITALL) == 10 && !memcmp(buf, "1234567890", 10),
	      "MSG_WAITALL waits for all 10 bytes", "'%.10s'", buf);
	waitpid(p, NULL, 0);
	/* sendmsg / recvmsg with two iovecs */
	char a[4] = "abc", b[4] = "def", ra[3], rb[10];
	struct iovec siov[2] = { { a, 3 }, { b, 3 } }, riov[2] = { { ra, 3 }, { rb, sizeof(rb) } };
	struct sockaddr_un name;
	struct msghdr m = { .msg_iov = siov, .msg_iovlen = 2 };

	CHECK(sendmsg(sv[0], &m, 0) == 6, "sendmsg of two iovecs", "errno %d", errno);
	memset(&m, 0, sizeof(m));
	m.msg_iov = riov;
	m.msg_iovlen = 2;
	m.msg_name = &name;
	m.msg_namelen = sizeof(name);
	m.msg_flags = -1;
	CHECK(recvmsg(sv[1], &m, 0) == 6 && !memcmp(ra, "abc", 3) && !memcmp(rb, "def", 3),
	      "recvmsg into two iovecs", "errno %d", errno);
	CHECK(m.msg_namelen == 0 && m.msg_controllen == 0 && m.msg_flags == 0,
	      "recvmsg: no name (an unnamed peer), no control data, no flags", "namelen %u controllen %zu flags %#x",
	      m.msg_namelen, (size_t)m.msg_controllen, m.msg_flags);
	/* addresses: both ends are unnamed */
	socklen_t len = sizeof(name);

	memset(&name, 0x55, sizeof(name));
	CHECK(getsockname(sv[0], (struct sockaddr *)&name, &len) == 0 && len == sizeof(sa_family_t) &&
		      name.sun_family == AF_UNIX,
	      "getsockname: {AF_UNIX}, length 2", "len %u family %d", len, name.sun_family);
	len = sizeof(name);
	CHECK(getpeername(sv[0], (struct sockaddr *)&name, &len) == 0 && len == sizeof(sa_family_t),
	      "getpeername: length 2", "len %u", len);
	len = sizeof(name);
	send(sv[0], "z", 1, 0);
	CHECK(recvfrom(sv[1], buf, 1, 0, (struct sockaddr *)&name, &len) == 1 && len == 0,
	      "recvfrom: address length 0", "len %u", len);
	EXPECT_ERRNO(sendto(sv[0], "z", 1, 0, (struct sockaddr *)&name, sizeof(name)), EISCONN,
		     "sendto with an address on a connected socket -> EISCONN");
	close(sv[0]);
	close(sv[1]);
}

static void t_options_errors(void)
{
	int sv[2], v = 0, fds[2];
	socklen_t len = sizeof(v);
	struct ucred cred;

	if (!tap_ok(pair(sv, 0), errno, "socketpair"))
		return;
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, &len) == 0 && v == SOCK_STREAM && len == sizeof(int),
	      "SO_TYPE: SOCK_STREAM", "%d len %u", v, len);
	len = sizeof(v);
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 && v == AF_UNIX, "SO_DOMAIN: AF_UNIX", "%d", v);
	len = sizeof(v);
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &v, &len) == 0 && v == 0, "SO_ERROR: 0", "%d", v);
	len = sizeof(cred);
	CHECK(getsockopt(sv[1], SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred) &&
		      cred.pid == getpid() && cred.uid == getuid(),
	      "SO_PEERCRED: the creating process", "pid %d uid %d len %u", cred.pid, cred.uid, len);
	v = 65536;
	CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) == 0, "setsockopt SO_SNDBUF 65536", "errno %d",
	      errno);
	len = sizeof(v);
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, &len) == 0 && v == 131072, "SO_SNDBUF reads back doubled",
	      "%d", v);
	len = sizeof(v);
	EXPECT_ERRNO(getsockopt(sv[0], SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT, "an unknown option -> ENOPROTOOPT");
	EXPECT_ERRNO(socketpair(12345, SOCK_STREAM, 0, fds), EAFNOSUPPORT, "an unknown family -> EAFNOSUPPORT");
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_RDM, 0, fds), ESOCKTNOSUPPORT, "AF_UNIX SOCK_RDM -> ESOCKTNOSUPPORT");
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_STREAM, 2, fds), EPROTONOSUPPORT, "protocol 2 -> EPROTONOSUPPORT");
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_STREAM | 0x100000, 0, fds), EINVAL, "unknown type flags -> EINVAL");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, AF_UNIX, fds) == 0, "protocol PF_UNIX is accepted", "errno %d", errno);
	close(fds[0]);
	close(fds[1]);
	EXPECT_ERRNO(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 8L), EFAULT, "a bad fd array -> EFAULT");
	if (pipe(fds) == 0) {
		EXPECT_ERRNO(send(fds[1], "x", 1, 0), ENOTSOCK, "send on a pipe -> ENOTSOCK");
		EXPECT_ERRNO(shutdown(fds[0], SHUT_RD), ENOTSOCK, "shutdown of a pipe -> ENOTSOCK");
		close(fds[0]);
		close(fds[1]);
	}
	EXPECT_ERRNO(send(999, "x", 1, 0), EBADF, "send on a closed fd -> EBADF");
	close(sv[0]);
	close(sv[1]);
}

static long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* 1000 pairs made and closed (each holds two 64 KiB rings here): nothing may stay behind */
static void t_no_leak(void)
{
	int sv[2], made = 0;
	long before = mem_available_kb();

	for (int i = 0; i < 1000; i++) {
		if (pair(sv, 0))
			break;
		if (write(sv[0], "x", 1) != 1)
			break;
		close(sv[0]);
		close(sv[1]);
		made++;
	}
	long after = mem_available_kb();

	CHECK(made == 1000 && before > 0 && after > before - 16 * 1024,
	      "1000 pairs made and closed: MemAvailable within 16 MiB of before", "%d made, %ld kB -> %ld kB", made,
	      before, after);
}

int main(void)
{
	tap_init("t_socketpair", 60);
	t_data();
	t_flags();
	t_close_shutdown();
	t_send_recv();
	t_options_errors();
	t_no_leak();
	return tap_done();
}
