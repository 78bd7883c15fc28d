/* t_unix: named AF_UNIX SOCK_STREAM sockets as Linux 6.1 gives them (what perf daemon uses):
 * socket, bind to a path (a socket inode in the tree, mode 0777 & ~umask, removed only by
 * unlink), listen, connect, accept/accept4, data both ways, addresses (getsockname,
 * getpeername, accept's), SO_ACCEPTCONN and SO_PEERCRED, poll readiness of a listener and of a
 * connection, EOF, EPIPE/SIGPIPE, the backlog limit with O_NONBLOCK, abstract and autobound
 * names, and the errnos of misuse (ECONNREFUSED, EADDRINUSE, ENOENT, EINVAL, EISCONN,
 * ENOTCONN, EAGAIN).  Then threads racing connect against close of the listener and accept,
 * and no memory left behind by 1000 connections.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIR_ "/tmp/t_unix.d"
#define PATH_ DIR_ "/sock"

static volatile int sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static socklen_t mkaddr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

static int usock(int flags)
{
	return socket(AF_UNIX, SOCK_STREAM | flags, 0);
}

static int bind_path(int fd, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = mkaddr(&a, path);

	return bind(fd, (struct sockaddr *)&a, len);
}

static int connect_path(int fd, const char *path)
{
	struct sockaddr_un a;

	mkaddr(&a, path);
	return connect(fd, (struct sockaddr *)&a, sizeof(a));
}

/* A listener bound to path: the fd or -1. */
static int listener(const char *path, int backlog)
{
	int fd = usock(0);

	unlink(path);
	if (fd < 0 || bind_path(fd, path) || listen(fd, backlog)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static short revents(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

static void t_create(void)
{
	struct stat st;
	int fd = usock(0), v = -1;
	socklen_t len = sizeof(v);

	if (!tap_ok(fd, errno, "socket(AF_UNIX, SOCK_STREAM, 0)"))
		return;
	CHECK(fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode), "fstat: S_IFSOCK", "mode %o", st.st_mode);
	CHECK(getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v == 0, "SO_ACCEPTCONN: 0", "%d", v);
	CHECK(revents(fd, POLLIN | POLLOUT) == (POLLOUT | POLLHUP), "unconnected: POLLOUT | POLLHUP", "%#x",
	      revents(fd, POLLIN | POLLOUT));
	EXPECT_ERRNO(write(fd, "x", 1), ENOTCONN, "write on an unconnected socket -> ENOTCONN");
	EXPECT_ERRNO(send(fd, "x", 1, MSG_NOSIGNAL), ENOTCONN, "send on an unconnected socket -> ENOTCONN");
	char c;

	EXPECT_ERRNO(read(fd, &c, 1), EINVAL, "read on an unconnected socket -> EINVAL");
	struct sockaddr_un a;

	len = sizeof(a);
	EXPECT_ERRNO(getpeername(fd, (struct sockaddr *)&a, &len), ENOTCONN, "getpeername unconnected -> ENOTCONN");
	len = sizeof(a);
	memset(&a, 0x55, sizeof(a));
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0 && len == sizeof(sa_family_t) && a.sun_family == AF_UNIX,
	      "getsockname unbound: {AF_UNIX}, length 2", "len %u", len);
	EXPECT_ERRNO(listen(fd, 1), EINVAL, "listen on an unbound socket -> EINVAL");
	struct ucred cr = { 7, 7, 7 };

	len = sizeof(cr);
	CHECK(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid == 0 && cr.uid == (uid_t)-1 &&
		      cr.gid == (gid_t)-1,
	      "SO_PEERCRED unconnected: pid 0, uid and gid -1", "pid %d uid %d gid %d", cr.pid, cr.uid, cr.gid);
	CHECK(shutdown(fd, SHUT_RDWR) == 0, "shutdown of an unconnected socket succeeds", "errno %d", errno);
	EXPECT_ERRNO(accept(fd, NULL, NULL), EINVAL, "accept on a non-listening socket -> EINVAL");
	close(fd);
	fd = usock(SOCK_NONBLOCK | SOCK_CLOEXEC);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	      "SOCK_NONBLOCK | SOCK_CLOEXEC", "fd %d", fd);
	close(fd);
	EXPECT_ERRNO(socket(12345, SOCK_STREAM, 0), EAFNOSUPPORT, "an unknown family -> EAFNOSUPPORT");
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_RDM, 0), ESOCKTNOSUPPORT, "AF_UNIX SOCK_RDM -> ESOCKTNOSUPPORT");
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM, 2), EPROTONOSUPPORT, "protocol 2 -> EPROTONOSUPPORT");
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM | 0x100000, 0), EINVAL, "unknown type flags -> EINVAL");
	fd = socket(AF_UNIX, SOCK_STREAM, AF_UNIX);
	CHECK(fd >= 0, "protocol PF_UNIX is accepted", "errno %d", errno);
	close(fd);
}

static void t_bind(void)
{
	struct stat st;
	struct sockaddr_un a;
	socklen_t len;
	int fd = usock(0), fd2 = usock(0), f;

	umask(022);
	unlink(PATH_);
	CHECK(bind_path(fd, PATH_) == 0, "bind to a path", "errno %d", errno);
	CHECK(stat(PATH_, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0755,
	      "the path is a socket inode, mode 0777 & ~umask", "mode %o errno %d", st.st_mode, errno);
	len = sizeof(a);
	memset(&a, 0, sizeof(a));
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0 && !strcmp(a.sun_path, PATH_) &&
		      len == offsetof(struct sockaddr_un, sun_path) + strlen(PATH_) + 1,
	      "getsockname: the bound path and its length", "'%s' len %u", a.sun_path, len);
	EXPECT_ERRNO(bind_path(fd, DIR_ "/other"), EINVAL, "bind of a bound socket -> EINVAL");
	EXPECT_ERRNO(bind_path(fd2, PATH_), EADDRINUSE, "bind to an existing socket path -> EADDRINUSE");
	f = open(DIR_ "/file", O_CREAT | O_WRONLY, 0644);
	close(f);
	EXPECT_ERRNO(bind_path(fd2, DIR_ "/file"), EADDRINUSE, "bind to a regular file's path -> EADDRINUSE");
	EXPECT_ERRNO(bind_path(fd2, DIR_ "/nodir/sock"), ENOENT, "bind under a missing directory -> ENOENT");
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_INET;
	strcpy(a.sun_path, DIR_ "/x");
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&a, sizeof(a)), EINVAL, "bind of family AF_INET -> EINVAL");
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&a, 1), EINVAL, "bind with length 1 -> EINVAL");
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&a, sizeof(a) + 1), EINVAL, "bind with length 111 -> EINVAL");
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)8, sizeof(a)), EFAULT, "bind of a bad pointer -> EFAULT");
	/* connecting to what is not listening */
	EXPECT_ERRNO(connect_path(fd2, PATH_), ECONNREFUSED, "connect to a bound, non-listening socket -> ECONNREFUSED");
	EXPECT_ERRNO(connect_path(fd2, DIR_ "/file"), ECONNREFUSED, "connect to a regular file -> ECONNREFUSED");
	EXPECT_ERRNO(connect_path(fd2, DIR_ "/none"), ENOENT, "connect to a missing path -> ENOENT");
	EXPECT_ERRNO(open(PATH_, O_RDWR), ENXIO, "open of a socket path -> ENXIO");
	close(fd);
	CHECK(stat(PATH_, &st) == 0 && S_ISSOCK(st.st_mode), "the path stays after the socket closes", "errno %d",
	      errno);
	EXPECT_ERRNO(connect_path(fd2, PATH_), ECONNREFUSED, "connect to a closed socket's path -> ECONNREFUSED");
	CHECK(unlink(PATH_) == 0 && stat(PATH_, &st) == -1 && errno == ENOENT, "unlink removes it", "errno %d", errno);
	CHECK(bind_path(fd2, PATH_) == 0, "the path can be bound again after unlink", "errno %d", errno);
	close(fd2);
	unlink(PATH_);
	unlink(DIR_ "/file");
	/* a relative path, from the working directory */
	fd = usock(0);
	if (chdir(DIR_) == 0) {
		CHECK(bind_path(fd, "rel") == 0 && stat(DIR_ "/rel", &st) == 0 && S_ISSOCK(st.st_mode),
		      "bind to a relative path", "errno %d", errno);
		len = sizeof(a);
		CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0 && !strcmp(a.sun_path, "rel"),
		      "getsockname: the path as given", "'%s'", a.sun_path);
		if (chdir("/") != 0) {
		}
	}
	close(fd);
	unlink(DIR_ "/rel");
}

static void t_connect(void)
{
	struct sockaddr_un a;
	socklen_t len;
	int l = listener(PATH_, 4), c = usock(0), s, v = -1;
	char buf[64];
	struct ucred cr;

	if (!tap_ok(l, errno, "bind and listen"))
		return;
	len = sizeof(v);
	CHECK(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v == 1, "SO_ACCEPTCONN: 1 once listening",
	      "%d", v);
	CHECK(revents(l, POLLIN | POLLOUT) == 0, "a listener with nothing pending: no events", "%#x",
	      revents(l, POLLIN | POLLOUT));
	CHECK(listen(l, 8) == 0, "listen again changes the backlog", "errno %d", errno);
	CHECK(connect_path(c, PATH_) == 0, "connect", "errno %d", errno);
	CHECK(revents(l, POLLIN | POLLOUT) == POLLIN, "a pending connection: POLLIN", "%#x",
	      revents(l, POLLIN | POLLOUT));
	EXPECT_ERRNO(connect_path(c, PATH_), EISCONN, "connect of a connected socket -> EISCONN");
	EXPECT_ERRNO(listen(c, 1), EINVAL, "listen on a connected socket -> EINVAL");
	EXPECT_ERRNO(connect_path(l, PATH_), EINVAL, "connect of a listening socket -> EINVAL");
	/* the client may write before the accept */
	CHECK(write(c, "early", 5) == 5, "write before the server accepts", "errno %d", errno);
	len = sizeof(a);
	memset(&a, 0x55, sizeof(a));
	s = accept(l, (struct sockaddr *)&a, &len);
	if (!tap_ok(s, errno, "accept"))
		return;
	CHECK(len == sizeof(sa_family_t) && a.sun_family == AF_UNIX, "accept: the unnamed client, length 2",
	      "len %u family %d", len, a.sun_family);
	CHECK(revents(l, POLLIN) == 0, "queue drained: no POLLIN", "%#x", revents(l, POLLIN));
	CHECK(read(s, buf, sizeof(buf)) == 5 && !memcmp(buf, "early", 5), "the server reads it", "errno %d", errno);
	len = sizeof(a);
	memset(&a, 0, sizeof(a));
	CHECK(write(s, "reply", 5) == 5 && recvfrom(c, buf, sizeof(buf), 0, (struct sockaddr *)&a, &len) == 5 &&
		      !memcmp(buf, "reply", 5),
	      "and the client reads the reply", "errno %d", errno);
	CHECK(!strcmp(a.sun_path, PATH_) && len == offsetof(struct sockaddr_un, sun_path) + strlen(PATH_) + 1,
	      "recvfrom on the client: the sender's (the listener's) name", "'%s' len %u", a.sun_path, len);
	len = sizeof(a);
	if (write(c, "y", 1) != 1) {
	}
	CHECK(recvfrom(s, buf, 1, 0, (struct sockaddr *)&a, &len) == 1 && len == 0,
	      "recvfrom on the server from an unnamed client: length 0", "len %u", len);
	CHECK(revents(c, POLLIN | POLLOUT) == POLLOUT, "connected, idle: POLLOUT", "%#x", revents(c, POLLIN | POLLOUT));
	send(s, "q", 1, 0);
	CHECK(revents(c, POLLIN | POLLOUT) == (POLLIN | POLLOUT), "connected, data: POLLIN | POLLOUT", "%#x",
	      revents(c, POLLIN | POLLOUT));
	recv(c, buf, 1, 0);
	/* addresses */
	len = sizeof(a);
	CHECK(getpeername(c, (struct sockaddr *)&a, &len) == 0 && !strcmp(a.sun_path, PATH_),
	      "getpeername on the client: the server's path", "'%s'", a.sun_path);
	len = sizeof(a);
	CHECK(getsockname(s, (struct sockaddr *)&a, &len) == 0 && !strcmp(a.sun_path, PATH_),
	      "getsockname on the accepted socket: the listener's path", "'%s'", a.sun_path);
	len = sizeof(a);
	CHECK(getpeername(s, (struct sockaddr *)&a, &len) == 0 && len == sizeof(sa_family_t),
	      "getpeername on the accepted socket: unnamed, length 2", "len %u", len);
	len = sizeof(a);
	CHECK(getsockname(c, (struct sockaddr *)&a, &len) == 0 && len == sizeof(sa_family_t),
	      "getsockname on the client: unnamed", "len %u", len);
	len = sizeof(cr);
	CHECK(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid == getpid() && cr.uid == getuid(),
	      "SO_PEERCRED on the accepted socket: the connecting process", "pid %d", cr.pid);
	len = sizeof(v);
	CHECK(getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v == 0, "accepted socket: SO_ACCEPTCONN 0",
	      "%d", v);
	/* sendmsg / recvmsg and shutdown */
	struct iovec iov = { "msg", 3 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	CHECK(sendmsg(c, &m, 0) == 3, "sendmsg", "errno %d", errno);
	iov = (struct iovec){ buf, sizeof(buf) };
	CHECK(recvmsg(s, &m, 0) == 3 && !memcmp(buf, "msg", 3), "recvmsg", "errno %d", errno);
	CHECK(shutdown(c, SHUT_WR) == 0 && read(s, buf, sizeof(buf)) == 0, "client SHUT_WR: the server reads EOF",
	      "errno %d", errno);
	close(c);
	CHECK((revents(s, POLLIN | POLLRDHUP) & (POLLIN | POLLHUP | POLLRDHUP)) == (POLLIN | POLLHUP | POLLRDHUP),
	      "client closed: POLLIN | POLLHUP | POLLRDHUP", "%#x", revents(s, POLLIN | POLLRDHUP));
	signal(SIGPIPE, on_sigpipe);
	sigpipes = 0;
	EXPECT_ERRNO(write(s, "x", 1), EPIPE, "write to a closed client -> EPIPE");
	CHECK(sigpipes == 1, "and SIGPIPE", "%d", sigpipes);
	EXPECT_ERRNO(send(s, "x", 1, MSG_NOSIGNAL), EPIPE, "send MSG_NOSIGNAL -> EPIPE");
	CHECK(sigpipes == 1, "without SIGPIPE", "%d", sigpipes);
	signal(SIGPIPE, SIG_DFL);
	close(s);
	/* accept4 flags */
	c = usock(0);
	connect_path(c, PATH_);
	s = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	CHECK(s >= 0 && (fcntl(s, F_GETFL) & O_NONBLOCK) && (fcntl(s, F_GETFD) & FD_CLOEXEC),
	      "accept4(SOCK_NONBLOCK | SOCK_CLOEXEC)", "fd %d errno %d", s, errno);
	EXPECT_ERRNO(read(s, buf, 1), EAGAIN, "its read with nothing there -> EAGAIN");
	EXPECT_ERRNO(accept4(l, NULL, NULL, 0x1), EINVAL, "accept4 with unknown flags -> EINVAL");
	close(s);
	close(c);
	int fl = fcntl(l, F_GETFL);

	fcntl(l, F_SETFL, fl | O_NONBLOCK);
	EXPECT_ERRNO(accept(l, NULL, NULL), EAGAIN, "nonblocking accept with nothing pending -> EAGAIN");
	fcntl(l, F_SETFL, fl);
	close(l);
	unlink(PATH_);
}

/* Closing with unread bytes resets the peer; the client's SO_PEERCRED is the listener's. */
static void t_reset(void)
{
	int l = listener(PATH_, 1), c = usock(0), s, st = -1;
	char buf[8];
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (!tap_ok(l, errno, "listener"))
		return;
	pid_t p = fork();

	if (p == 0) { /* the client in a child: the server's process is its peer */
		if (connect_path(c, PATH_) || getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    cr.pid != getppid())
			_exit(1);
		_exit(write(c, "unread", 6) == 6 ? 0 : 2);
	}
	s = accept(l, NULL, NULL);
	waitpid(p, &st, 0);
	CHECK(s >= 0 && st == 0, "SO_PEERCRED on the client: the listening process", "status %#x", st);
	close(s);
	close(c);
	c = usock(0);
	connect_path(c, PATH_);
	s = accept(l, NULL, NULL);
	if (write(c, "abc", 3) != 3) {
	}
	close(s); /* unread bytes */
	EXPECT_ERRNO(read(c, buf, sizeof(buf)), ECONNRESET, "peer closed with unread bytes: read -> ECONNRESET");
	CHECK(read(c, buf, sizeof(buf)) == 0, "then EOF", "errno %d", errno);
	close(c);
	c = usock(0);
	connect_path(c, PATH_);
	s = accept(l, NULL, NULL);
	close(s);
	int v = -1;

	len = sizeof(v);
	CHECK(read(c, buf, sizeof(buf)) == 0, "peer closed with nothing unread: EOF", "errno %d", errno);
	CHECK(getsockopt(c, SOL_SOCKET, SO_ERROR, &v, &len) == 0 && v == 0, "and SO_ERROR 0", "%d", v);
	close(c);
	close(l);
	unlink(PATH_);
}

/* A child connects 100 ms later: accept blocks until then. */
static void t_blocking(void)
{
	int l = listener(PATH_, 1);
	char buf[8];

	if (!tap_ok(l, errno, "listener"))
		return;
	pid_t p = fork();

	if (p == 0) {
		int c = usock(0);

		usleep(100000);
		if (connect_path(c, PATH_))
			_exit(1);
		_exit(write(c, "child", 5) == 5 ? 0 : 2);
	}
	struct pollfd pf = { .fd = l, .events = POLLIN };

	CHECK(poll(&pf, 1, 5000) == 1 && pf.revents == POLLIN, "poll wakes when a connection arrives", "%#x",
	      pf.revents);
	int s = accept(l, NULL, NULL);
	int st = -1;

	waitpid(p, &st, 0);
	CHECK(s >= 0 && read(s, buf, sizeof(buf)) == 5 && !memcmp(buf, "child", 5) && st == 0,
	      "accept, then the child's bytes", "fd %d status %#x", s, st);
	CHECK(read(s, buf, sizeof(buf)) == 0, "the child exited: EOF", "errno %d", errno);
	close(s);
	/* blocking accept, woken by a connect */
	p = fork();
	if (p == 0) {
		int c = usock(0);

		usleep(100000);
		_exit(connect_path(c, PATH_) ? 1 : 0);
	}
	s = accept(l, NULL, NULL);
	waitpid(p, &st, 0);
	CHECK(s >= 0 && st == 0, "a blocked accept returns the connection", "fd %d status %#x", s, st);
	close(s);
	close(l);
	unlink(PATH_);
}

static void t_backlog(void)
{
	int l = listener(PATH_, 1), c[4], n = 0, err = 0;
	char buf[8];

	if (!tap_ok(l, errno, "listen(fd, 1)"))
		return;
	for (int i = 0; i < 4; i++) {
		c[i] = usock(SOCK_NONBLOCK);
		if (connect_path(c[i], PATH_) == 0)
			n++;
		else if (!err)
			err = errno;
	}
	CHECK(n == 2 && err == EAGAIN, "backlog 1: two connections wait, then nonblocking connect -> EAGAIN",
	      "%d connected, errno %d", n, err);
	/* closing the listener resets the waiting connections */
	close(l);
	EXPECT_ERRNO(read(c[0], buf, sizeof(buf)), ECONNRESET, "listener closed before accept: read -> ECONNRESET");
	CHECK(read(c[0], buf, sizeof(buf)) == 0, "then EOF", "errno %d", errno);
	for (int i = 0; i < 4; i++)
		close(c[i]);
	unlink(PATH_);
}

static void t_abstract(void)
{
	struct sockaddr_un a;
	socklen_t len;
	int l = usock(0), c = usock(0), s, a2 = usock(0);
	char name[] = "\0t_unix-abstract";

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	memcpy(a.sun_path, name, sizeof(name) - 1);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof(name) - 1);
	CHECK(bind(l, (struct sockaddr *)&a, len) == 0 && listen(l, 1) == 0, "bind to an abstract name", "errno %d",
	      errno);
	EXPECT_ERRNO(bind(a2, (struct sockaddr *)&a, len), EADDRINUSE, "the same abstract name again -> EADDRINUSE");
	CHECK(connect(c, (struct sockaddr *)&a, len) == 0, "connect to it", "errno %d", errno);
	s = accept(l, NULL, NULL);
	struct sockaddr_un b;
	socklen_t blen = sizeof(b);

	CHECK(s >= 0 && getpeername(c, (struct sockaddr *)&b, &blen) == 0 && blen == len &&
		      !memcmp(b.sun_path, name, sizeof(name) - 1),
	      "getpeername: the abstract name and length", "len %u", blen);
	close(s);
	close(c);
	close(l);
	c = usock(0);
	CHECK(connect(c, (struct sockaddr *)&a, len) == -1 && errno == ECONNREFUSED,
	      "its socket closed: the name is free (ECONNREFUSED)", "errno %d", errno);
	CHECK(bind(a2, (struct sockaddr *)&a, len) == 0, "and can be bound again", "errno %d", errno);
	close(a2);
	close(c);
	/* autobind: a family alone gets an abstract name of 5 hex digits */
	l = usock(0);
	CHECK(bind(l, (struct sockaddr *)&a, sizeof(sa_family_t)) == 0, "bind with the family alone (autobind)",
	      "errno %d", errno);
	blen = sizeof(b);
	memset(&b, 0, sizeof(b));
	CHECK(getsockname(l, (struct sockaddr *)&b, &blen) == 0 && blen == offsetof(struct sockaddr_un, sun_path) + 6 &&
		      b.sun_path[0] == 0 && strspn(b.sun_path + 1, "0123456789abcdef") == 5,
	      "getsockname: NUL and 5 hex digits", "len %u '%.5s'", blen, b.sun_path + 1);
	close(l);
}

/* Threads connect while the main thread accepts a few and then closes the listener. */
struct race {
	int ok, refused, other;
	pthread_mutex_t m;
};

static void *racer(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < 200; i++) {
		int c = usock(SOCK_NONBLOCK), e = 0;

		if (connect_path(c, PATH_) == 0) {
			if (send(c, "r", 1, MSG_NOSIGNAL) != 1) {
			}
		} else
			e = errno;
		close(c);
		pthread_mutex_lock(&r->m);
		if (!e)
			r->ok++;
		else if (e == ECONNREFUSED || e == EAGAIN || e == ENOENT)
			r->refused++;
		else
			r->other++;
		pthread_mutex_unlock(&r->m);
	}
	return NULL;
}

static void t_race(void)
{
	struct race r = { .m = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[3];
	int accepted = 0;

	for (int round = 0; round < 5; round++) {
		int l = listener(PATH_, 16);

		if (l < 0)
			break;
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, racer, &r);
		for (int i = 0; i < 20; i++) {
			struct pollfd pf = { .fd = l, .events = POLLIN };
			int s = poll(&pf, 1, 20) == 1 ? accept4(l, NULL, NULL, SOCK_NONBLOCK) : -1;

			if (s >= 0) {
				accepted++;
				close(s);
			}
		}
		close(l);
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
	}
	CHECK(r.other == 0 && r.ok + r.refused == 5 * 3 * 200 && accepted > 0,
	      "3 threads connecting while the listener accepts and closes: only success, ECONNREFUSED or EAGAIN",
	      "ok %d refused %d other %d accepted %d", r.ok, r.refused, r.other, accepted);
	unlink(PATH_);
}

/* free memory in kB (sysinfo's freeram) */
static long free_kb(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? -1 : (long)(si.freeram / 1024 * si.mem_unit);
}

static void t_no_leak(void)
{
	int l = listener(PATH_, 4), made = 0;
	long before = free_kb();
	char c;

	for (int i = 0; l >= 0 && i < 1000; i++) {
		int cl = usock(0), s;

		if (connect_path(cl, PATH_) || (s = accept(l, NULL, NULL)) < 0)
			break;
		if (write(cl, "x", 1) != 1 || read(s, &c, 1) != 1)
			break;
		close(cl);
		close(s);
		made++;
	}
	/* connections never accepted, freed with the listener */
	for (int i = 0; l >= 0 && i < 4; i++) {
		int cl = usock(0);

		connect_path(cl, PATH_);
		close(cl);
	}
	close(l);
	long after = free_kb();

	CHECK(made == 1000 && before > 0 && after > before - 16 * 1024,
	      "1000 connections made and closed: free memory within 16 MiB of before", "%d made, %ld kB -> %ld kB",
	      made, before, after);
	unlink(PATH_);
}

int main(void)
{
	tap_init("t_unix", 60);
	mkdir(DIR_, 0755);
	t_create();
	t_bind();
	t_connect();
	t_reset();
	t_blocking();
	t_backlog();
	t_abstract();
	t_race();
	t_no_leak();
	rmdir(DIR_);
	return tap_done();
}
