/* t_inotify: inotify as Linux 6.1 gives it (perf daemon reloads its config on IN_CLOSE_WRITE
 * in the config's directory): the events of create, open, write, read, close, mkdir, rmdir,
 * rename (cookie pairs), unlink, with names padded to 16 bytes; a watch on a file itself
 * (IN_DELETE_SELF, IN_IGNORED); merging of equal events; IN_ONESHOT; inotify_rm_watch;
 * FIONREAD, poll, a blocking read, a short buffer; and the errnos of bad arguments.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define D "/tmp/t_inotify.d"

struct ev {
	int wd;
	uint32_t mask, cookie, len;
	char name[64];
};

/* Read what is queued (nonblocking fd): the events, at most max. */
static int drain(int fd, struct ev *out, int max)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + r && n < max;) {
			struct inotify_event *e = (struct inotify_event *)p;

			out[n].wd = e->wd;
			out[n].mask = e->mask;
			out[n].cookie = e->cookie;
			out[n].len = e->len;
			snprintf(out[n].name, sizeof(out[n].name), "%s", e->len ? e->name : "");
			n++;
			p += sizeof(*e) + e->len;
		}
	}
	return n;
}

static char *show(const struct ev *e, int n)
{
	static char s[1024];
	size_t at = 0;

	s[0] = 0;
	for (int i = 0; i < n && at < sizeof(s) - 80; i++)
		at += (size_t)snprintf(s + at, sizeof(s) - at, "[wd %d %#x '%s' len %u] ", e[i].wd, e[i].mask,
				       e[i].name, e[i].len);
	return s;
}

static int is(const struct ev *e, int wd, uint32_t mask, const char *name)
{
	return e->wd == wd && e->mask == mask && !strcmp(e->name, name) &&
	       e->len == (name[0] ? (uint32_t)((strlen(name) + 16) & ~15u) : 0);
}

int main(void)
{
	struct ev e[32];
	char c = 'x', link[64], path[64];
	int fd, wd, f, n, avail = -1;

	tap_init("t_inotify", 60);
	mkdir(D, 0755);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (!tap_ok(fd, errno, "inotify_init1(IN_NONBLOCK | IN_CLOEXEC)"))
		return tap_done();
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	CHECK((fl & O_NONBLOCK) && (fl & O_ACCMODE) == O_RDONLY && (fdfl & FD_CLOEXEC),
	      "O_RDONLY | O_NONBLOCK, and FD_CLOEXEC", "%#x %#x", fl, fdfl);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(link, 0, sizeof(link));
	CHECK(readlink(path, link, sizeof(link) - 1) > 0 && !strcmp(link, "anon_inode:inotify"),
	      "/proc/self/fd names it anon_inode:inotify", "'%s'", link);
	wd = inotify_add_watch(fd, D, IN_ALL_EVENTS);
	CHECK(wd == 1, "the first watch is wd 1", "%d errno %d", wd, errno);
	CHECK(inotify_add_watch(fd, D, IN_CREATE) == wd, "watching it again: the same wd", "errno %d", errno);
	CHECK(inotify_add_watch(fd, D, IN_ALL_EVENTS) == wd, "(mask back to all)", "errno %d", errno);
	EXPECT_ERRNO(read(fd, e, sizeof(e)), EAGAIN, "nothing queued: EAGAIN");
	CHECK(ioctl(fd, FIONREAD, &avail) == 0 && avail == 0, "FIONREAD: 0", "%d", avail);

	/* create, write twice (merged), close */
	f = open(D "/a", O_CREAT | O_WRONLY, 0644);
	write(f, &c, 1);
	write(f, &c, 1);
	close(f);
	CHECK(ioctl(fd, FIONREAD, &avail) == 0 && avail == 4 * 32, "FIONREAD: 4 events of 32 bytes", "%d", avail);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLIN, "poll: POLLIN", "%#x", p.revents);
	n = drain(fd, e, 32);
	CHECK(n == 4 && is(&e[0], wd, IN_CREATE, "a") && is(&e[1], wd, IN_OPEN, "a") && is(&e[2], wd, IN_MODIFY, "a") &&
		      is(&e[3], wd, IN_CLOSE_WRITE, "a"),
	      "create, open, write x2, close: IN_CREATE, IN_OPEN, one IN_MODIFY, IN_CLOSE_WRITE, names padded to 16",
	      "%d: %s", n, show(e, n));
	/* read it */
	f = open(D "/a", O_RDONLY);
	read(f, &c, 1);
	close(f);
	n = drain(fd, e, 32);
	CHECK(n == 3 && is(&e[0], wd, IN_OPEN, "a") && is(&e[1], wd, IN_ACCESS, "a") &&
		      is(&e[2], wd, IN_CLOSE_NOWRITE, "a"),
	      "open, read, close: IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE", "%d: %s", n, show(e, n));
	/* cp over an existing file, as perf daemon's test does */
	f = open(D "/a", O_WRONLY | O_TRUNC);
	write(f, "new", 3);
	close(f);
	n = drain(fd, e, 32);
	CHECK(n >= 2 && is(&e[n - 1], wd, IN_CLOSE_WRITE, "a"), "rewriting it ends with IN_CLOSE_WRITE", "%d: %s", n,
	      show(e, n));
	/* directories */
	mkdir(D "/sub", 0755);
	rmdir(D "/sub");
	n = drain(fd, e, 32);
	CHECK(n == 2 && is(&e[0], wd, IN_CREATE | IN_ISDIR, "sub") && is(&e[1], wd, IN_DELETE | IN_ISDIR, "sub"),
	      "mkdir, rmdir: IN_CREATE | IN_ISDIR, IN_DELETE | IN_ISDIR", "%d: %s", n, show(e, n));
	/* rename */
	rename(D "/a", D "/b");
	n = drain(fd, e, 32);
	CHECK(n == 2 && is(&e[0], wd, IN_MOVED_FROM, "a") && is(&e[1], wd, IN_MOVED_TO, "b") && e[0].cookie &&
		      e[0].cookie == e[1].cookie,
	      "rename: IN_MOVED_FROM and IN_MOVED_TO with one cookie", "%d: %s", n, show(e, n));
	/* a watch on the file itself */
	int fwd = inotify_add_watch(fd, D "/b", IN_MODIFY | IN_DELETE_SELF);

	CHECK(fwd == 2, "a watch on the file: wd 2", "%d", fwd);
	f = open(D "/b", O_WRONLY);
	write(f, &c, 1);
	close(f);
	n = drain(fd, e, 32);
	CHECK(n == 4 && is(&e[0], wd, IN_OPEN, "b") && is(&e[1], wd, IN_MODIFY, "b") && is(&e[2], fwd, IN_MODIFY, "") &&
		      is(&e[3], wd, IN_CLOSE_WRITE, "b"),
	      "write: the directory's event with the name, then the file's without", "%d: %s", n, show(e, n));
	unlink(D "/b");
	n = drain(fd, e, 32);
	CHECK(n == 3 && is(&e[0], fwd, IN_DELETE_SELF, "") && is(&e[1], fwd, IN_IGNORED, "") &&
		      is(&e[2], wd, IN_DELETE, "b"),
	      "unlink: IN_DELETE_SELF and IN_IGNORED on the file's watch, then the directory's IN_DELETE", "%d: %s", n,
	      show(e, n));
	/* IN_ONESHOT */
	int ifd = inotify_init1(IN_NONBLOCK);
	int owd = inotify_add_watch(ifd, D, IN_CREATE | IN_ONESHOT);

	close(open(D "/c1", O_CREAT | O_WRONLY, 0644));
	close(open(D "/c2", O_CREAT | O_WRONLY, 0644));
	n = drain(ifd, e, 32);
	CHECK(n == 2 && is(&e[0], owd, IN_CREATE, "c1") && is(&e[1], owd, IN_IGNORED, ""),
	      "IN_ONESHOT: one event, then IN_IGNORED", "%d: %s", n, show(e, n));
	close(ifd);
	drain(fd, e, 32);
	/* a buffer too small for the first event */
	close(open(D "/c3", O_CREAT | O_WRONLY, 0644));
	EXPECT_ERRNO(read(fd, path, 10), EINVAL, "a 10-byte read of a 32-byte event -> EINVAL");
	drain(fd, e, 32);
	/* a blocking read woken by a child */
	int bfd = inotify_init();

	inotify_add_watch(bfd, D, IN_CREATE);
	pid_t ch = fork();

	if (ch == 0) {
		usleep(100000);
		close(open(D "/late", O_CREAT | O_WRONLY, 0644));
		_exit(0);
	}
	char buf[256] __attribute__((aligned(8)));
	ssize_t r = read(bfd, buf, sizeof(buf));

	CHECK(r == 32 && !strcmp(((struct inotify_event *)buf)->name, "late"), "a blocking read waits for the event",
	      "%zd", r);
	waitpid(ch, NULL, 0);
	close(bfd);
	/* rm_watch */
	CHECK(inotify_rm_watch(fd, wd) == 0, "inotify_rm_watch", "errno %d", errno);
	n = drain(fd, e, 32);
	CHECK(n >= 1 && is(&e[n - 1], wd, IN_IGNORED, ""), "it queues IN_IGNORED", "%d: %s", n, show(e, n));
	EXPECT_ERRNO(inotify_rm_watch(fd, wd), EINVAL, "removing it again -> EINVAL");
	/* errors */
	EXPECT_ERRNO(inotify_init1(0x1), EINVAL, "inotify_init1 unknown flags -> EINVAL");
	EXPECT_ERRNO(inotify_add_watch(fd, D, 0), EINVAL, "mask 0 -> EINVAL");
	EXPECT_ERRNO(inotify_add_watch(fd, D, IN_CREATE | 0x00100000), EINVAL, "an unknown mask bit -> EINVAL");
	EXPECT_ERRNO(inotify_add_watch(fd, D, IN_CREATE | IN_MASK_ADD | IN_MASK_CREATE), EINVAL,
		     "IN_MASK_ADD with IN_MASK_CREATE -> EINVAL");
	wd = inotify_add_watch(fd, D, IN_CREATE);
	EXPECT_ERRNO(inotify_add_watch(fd, D, IN_DELETE | IN_MASK_CREATE), EEXIST,
		     "IN_MASK_CREATE on a watched inode -> EEXIST");
	EXPECT_ERRNO(inotify_add_watch(fd, D "/none", IN_CREATE), ENOENT, "a missing path -> ENOENT");
	EXPECT_ERRNO(inotify_add_watch(fd, D "/c1", IN_CREATE | IN_ONLYDIR), ENOTDIR, "IN_ONLYDIR on a file -> ENOTDIR");
	int pf[2];

	pipe(pf);
	EXPECT_ERRNO(inotify_add_watch(pf[0], D, IN_CREATE), EINVAL, "add_watch on a pipe -> EINVAL");
	EXPECT_ERRNO(inotify_rm_watch(pf[0], 1), EINVAL, "rm_watch on a pipe -> EINVAL");
	EXPECT_ERRNO(inotify_add_watch(999, D, IN_CREATE), EBADF, "a closed fd -> EBADF");
	EXPECT_ERRNO(syscall(SYS_inotify_add_watch, fd, 8L, IN_CREATE), EFAULT, "a bad path pointer -> EFAULT");
	close(pf[0]);
	close(pf[1]);
	close(fd);
	unlink(D "/c1");
	unlink(D "/c2");
	unlink(D "/c3");
	unlink(D "/late");
	rmdir(D);
	return tap_done();
}
