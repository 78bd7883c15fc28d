/* t_eventfd: eventfd2(2) as perf record uses it and as Linux 6.1 defines it: the counter, read
 * taking it all (or 1 with EFD_SEMAPHORE), EAGAIN when empty or full with EFD_NONBLOCK, EINVAL
 * for short buffers, the maximum value and unknown flags, poll readiness, a blocked read
 * woken by a write from another thread, and F_GETFL/FD_CLOEXEC.  Passes on Linux 6.1
 * (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

static int wfd;

static void *late_writer(void *arg)
{
	uint64_t v = 5;

	(void)arg;
	usleep(50000);
	if (write(wfd, &v, 8) != 8)
		return (void *)1;
	return NULL;
}

int main(void)
{
	tap_init("t_eventfd", 30);
	uint64_t v = 0;
	int fd = eventfd(3, EFD_NONBLOCK | EFD_CLOEXEC);

	if (!tap_ok(fd, errno, "eventfd(3, NONBLOCK|CLOEXEC)"))
		return tap_done();
	CHECK((fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK)) == (O_RDWR | O_NONBLOCK) &&
		      (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	      "O_RDWR|O_NONBLOCK, close-on-exec", "fl %#x fd %#x", fcntl(fd, F_GETFL), fcntl(fd, F_GETFD));
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

	CHECK(poll(&p, 1, 0) == 1 && p.revents == (POLLIN | POLLOUT), "count 3: POLLIN|POLLOUT",
	      "revents %#x", p.revents);
	CHECK(read(fd, &v, 8) == 8 && v == 3, "read takes the count (3)", "v %llu", (unsigned long long)v);
	EXPECT_ERRNO(read(fd, &v, 8), EAGAIN, "read of an empty counter, nonblocking -> EAGAIN");
	EXPECT_ERRNO(read(fd, &v, 7), EINVAL, "read of 7 bytes -> EINVAL");
	p.revents = 0;
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLOUT, "count 0: POLLOUT only", "revents %#x", p.revents);
	v = 10;
	CHECK(write(fd, &v, 8) == 8 && write(fd, &v, 8) == 8, "two writes of 10", "errno %d", errno);
	uint64_t two[2] = { 0, 0 };

	CHECK(read(fd, two, 16) == 8 && two[0] == 20, "a 16-byte read returns 8 bytes: the sum 20",
	      "v %llu", (unsigned long long)two[0]);
	v = UINT64_MAX;
	EXPECT_ERRNO(write(fd, &v, 8), EINVAL, "write of 0xffffffffffffffff -> EINVAL");
	EXPECT_ERRNO(write(fd, &v, 4), EINVAL, "write of 4 bytes -> EINVAL");
	v = UINT64_MAX - 1;
	CHECK(write(fd, &v, 8) == 8, "write of the largest count", "errno %d", errno);
	v = 1;
	EXPECT_ERRNO(write(fd, &v, 8), EAGAIN, "a write past the largest count, nonblocking -> EAGAIN");
	p.revents = 0;
	CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLIN, "full: POLLIN only", "revents %#x", p.revents);
	CHECK(lseek(fd, 100, SEEK_SET) == 0, "lseek does nothing: 0 (noop_llseek)", "errno %d", errno);
	close(fd);

	fd = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
	CHECK(fd >= 0 && read(fd, &v, 8) == 8 && v == 1 && read(fd, &v, 8) == 8 && v == 1 &&
		      read(fd, &v, 8) < 0 && errno == EAGAIN,
	      "EFD_SEMAPHORE: each read takes 1, then EAGAIN", "v %llu errno %d", (unsigned long long)v,
	      errno);
	if (fd >= 0)
		close(fd);
	EXPECT_ERRNO(syscall(SYS_eventfd2, 0, 0x100), EINVAL, "eventfd2 with an unknown flag -> EINVAL");

	/* blocking: a read sleeps until another thread writes */
	wfd = eventfd(0, 0);
	pthread_t t;
	void *tret = (void *)1;

	if (wfd >= 0 && pthread_create(&t, NULL, late_writer, NULL) == 0) {
		v = 0;
		long r = read(wfd, &v, 8);

		pthread_join(t, &tret);
		CHECK(r == 8 && v == 5 && !tret, "a blocking read wakes on another thread's write",
		      "r %ld v %llu", r, (unsigned long long)v);
	} else {
		tap_fail("a blocking read wakes on another thread's write", "setup errno %d", errno);
	}
	if (wfd >= 0)
		close(wfd);
	return tap_done();
}
