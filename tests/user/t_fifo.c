/* t_fifo: named FIFOs (mkfifo, mknod S_IFIFO) as Linux 6.1 gives them (perf daemon talks to its
 * sessions' perf record through control and ack FIFOs): the inode, open's rules (a blocking
 * O_RDONLY waits for a writer and O_WRONLY for a reader, O_WRONLY | O_NONBLOCK without a reader
 * is ENXIO, O_RDWR never waits), data between processes, EOF and POLLHUP once the writers go,
 * EPIPE and SIGPIPE without readers, contents dropped when the last opener closes, EINTR of a
 * waiting open, lseek's ESPIPE and F_GETPIPE_SZ.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define F "/tmp/t_fifo.p"

static volatile int sigs;

static void on_sig(int sig)
{
	(void)sig;
	sigs++;
}

static short revents(int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };

	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

int main(void)
{
	struct stat st;
	char buf[16];
	int r, w, st_;

	tap_init("t_fifo", 60);
	unlink(F);
	umask(022);
	CHECK(mkfifo(F, 0666) == 0, "mkfifo", "errno %d", errno);
	CHECK(stat(F, &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 0777) == 0644 && st.st_size == 0,
	      "a FIFO inode, mode 0666 & ~umask", "mode %o", st.st_mode);
	EXPECT_ERRNO(mkfifo(F, 0600), EEXIST, "mkfifo of an existing name -> EEXIST");
	EXPECT_ERRNO(open(F, O_WRONLY | O_NONBLOCK), ENXIO, "O_WRONLY | O_NONBLOCK without a reader -> ENXIO");

	r = open(F, O_RDONLY | O_NONBLOCK);
	if (!tap_ok(r, errno, "O_RDONLY | O_NONBLOCK opens at once"))
		return tap_done();
	CHECK(read(r, buf, sizeof(buf)) == 0, "no writer yet: read gives 0", "errno %d", errno);
	CHECK(revents(r, POLLIN) == 0, "no writer has come yet: no POLLHUP", "%#x", revents(r, POLLIN));
	w = open(F, O_WRONLY | O_NONBLOCK);
	CHECK(w >= 0, "with a reader, O_WRONLY | O_NONBLOCK opens", "errno %d", errno);
	CHECK(write(w, "abc", 3) == 3 && revents(r, POLLIN) == POLLIN, "write: the reader polls POLLIN", "%#x",
	      revents(r, POLLIN));
	CHECK(read(r, buf, sizeof(buf)) == 3 && !memcmp(buf, "abc", 3), "the reader reads it", "errno %d", errno);
	EXPECT_ERRNO(read(r, buf, sizeof(buf)), EAGAIN, "empty with a writer: EAGAIN");
	EXPECT_ERRNO(lseek(r, 0, SEEK_SET), ESPIPE, "lseek -> ESPIPE");
	CHECK(fcntl(r, F_GETPIPE_SZ) == 65536, "F_GETPIPE_SZ 65536", "%d", fcntl(r, F_GETPIPE_SZ));
	close(w);
	CHECK(read(r, buf, sizeof(buf)) == 0, "the writer closed: EOF", "errno %d", errno);
	CHECK(revents(r, POLLIN) == POLLHUP, "and POLLHUP", "%#x", revents(r, POLLIN));
	close(r);

	/* no reader: EPIPE and SIGPIPE */
	r = open(F, O_RDONLY | O_NONBLOCK);
	w = open(F, O_WRONLY | O_NONBLOCK);
	close(r);
	signal(SIGPIPE, on_sig);
	sigs = 0;
	EXPECT_ERRNO(write(w, "x", 1), EPIPE, "the reader closed: write -> EPIPE");
	CHECK(sigs == 1, "and SIGPIPE", "%d", sigs);
	signal(SIGPIPE, SIG_DFL);
	close(w);

	/* O_RDWR never waits; the contents go with the last opener */
	r = open(F, O_RDWR);
	CHECK(r >= 0 && write(r, "keep", 4) == 4 && read(r, buf, 2) == 2 && !memcmp(buf, "ke", 2),
	      "O_RDWR: both ends in one fd", "errno %d", errno);
	close(r);
	r = open(F, O_RDWR | O_NONBLOCK);
	EXPECT_ERRNO(read(r, buf, sizeof(buf)), EAGAIN, "reopened: the old bytes are gone");
	/* perf's control FIFO: held O_RDWR | O_NONBLOCK, written by others that come and go */
	for (int i = 0; i < 3; i++) {
		w = open(F, O_WRONLY | O_NONBLOCK);
		if (write(w, "ping", 4) != 4) {
		}
		close(w);
	}
	CHECK(read(r, buf, sizeof(buf)) == 12 && revents(r, POLLIN) == 0,
	      "three writers in turn: 12 bytes, no POLLHUP for an O_RDWR holder", "%#x", revents(r, POLLIN));
	close(r);

	/* a blocking O_RDONLY waits for a writer */
	pid_t c = fork();

	if (c == 0) {
		usleep(100000);
		int fd = open(F, O_WRONLY);

		_exit(fd >= 0 && write(fd, "child", 5) == 5 ? 0 : 1);
	}
	r = open(F, O_RDONLY);
	CHECK(r >= 0 && read(r, buf, sizeof(buf)) == 5 && !memcmp(buf, "child", 5), "a blocking O_RDONLY waits for the writer",
	      "errno %d", errno);
	waitpid(c, &st_, 0);
	CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0 && read(r, buf, sizeof(buf)) == 0, "the writer's exit: EOF",
	      "status %#x", st_);
	close(r);
	/* a blocking O_WRONLY waits for a reader */
	c = fork();
	if (c == 0) {
		usleep(100000);
		int fd = open(F, O_RDONLY);
		char b[8];

		_exit(fd >= 0 && read(fd, b, sizeof(b)) == 2 ? 0 : 1);
	}
	w = open(F, O_WRONLY);
	CHECK(w >= 0 && write(w, "hi", 2) == 2, "a blocking O_WRONLY waits for the reader", "errno %d", errno);
	close(w);
	waitpid(c, &st_, 0);
	CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0, "which reads the bytes", "status %#x", st_);
	/* a waiting open interrupted */
	struct sigaction sa = { .sa_handler = on_sig };

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	EXPECT_ERRNO(open(F, O_RDONLY), EINTR, "a waiting open interrupted by a signal -> EINTR");
	alarm(0);
	tap_init("t_fifo", 60);
	/* unlinked while open */
	r = open(F, O_RDWR);
	unlink(F);
	CHECK(write(r, "z", 1) == 1 && read(r, buf, 1) == 1 && stat(F, &st) == -1, "unlinked: still works, the name gone",
	      "errno %d", errno);
	close(r);
	return tap_done();
}
