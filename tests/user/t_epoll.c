/* t_epoll: epoll_create1/epoll_ctl/epoll_pwait on pipes: errnos (EINVAL, EBADF, EPERM, EEXIST,
 * ENOENT), level-triggered readiness with the caller's data, timeout 0, EPOLLONESHOT disarming
 * until EPOLL_CTL_MOD, a closed fd leaving the set, a blocking wait woken by a writer thread.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-11-29.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

static int wfd;

static void *writer(void *arg)
{
	usleep(50000);
	if (write(wfd, "x", 1) != 1)
		return NULL;
	return arg;
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 }, out[4];
	int p[2], q[2], ep, reg;

	tap_init("t_epoll", 30);
	EXPECT_ERRNO(epoll_create1(1), EINVAL, "epoll_create1 unknown flag: EINVAL");
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!CHECK(ep >= 0 && pipe(p) == 0 && pipe(q) == 0, "epoll_create1 and two pipes", "errno %d",
		   errno))
		return tap_done();
	reg = open("/bin/t_epoll", O_RDONLY);
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, reg, &ev), EPERM, "a regular file: EPERM");
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev), EBADF, "fd not open: EBADF");
	EXPECT_ERRNO(epoll_ctl(p[0], EPOLL_CTL_ADD, q[0], &ev), EINVAL, "epfd not an epoll: EINVAL");
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL, "an epoll on itself: EINVAL");
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), ENOENT, "MOD before ADD: ENOENT");
	EXPECT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), "ADD the read end of a pipe");
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST, "ADD twice: EEXIST");
	EXPECT_ERRNO(epoll_wait(ep, out, 0, 0), EINVAL, "maxevents 0: EINVAL");
	CHECK(epoll_wait(ep, out, 4, 0) == 0, "nothing ready, timeout 0: 0", "errno %d", errno);
	CHECK(write(p[1], "ab", 2) == 2, "write the pipe", "errno %d", errno);
	int n = epoll_wait(ep, out, 4, 0);

	CHECK(n == 1 && out[0].events == EPOLLIN && out[0].data.u64 == 0x1234,
	      "ready: EPOLLIN with the caller's data", "n %d events %#x data %#llx", n, out[0].events,
	      (unsigned long long)out[0].data.u64);
	CHECK(epoll_wait(ep, out, 4, 0) == 1, "level-triggered: still ready", "errno %d", errno);
	ev.events = EPOLLIN | EPOLLONESHOT;
	EXPECT_OK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), "MOD to EPOLLONESHOT");
	CHECK(epoll_wait(ep, out, 4, 0) == 1 && epoll_wait(ep, out, 4, 0) == 0,
	      "EPOLLONESHOT: reported once, then disarmed", "errno %d", errno);
	EXPECT_OK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), "MOD re-arms it");
	CHECK(epoll_wait(ep, out, 4, 0) == 1, "re-armed: ready again", "errno %d", errno);
	EXPECT_OK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), "DEL");
	EXPECT_ERRNO(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), ENOENT, "DEL twice: ENOENT");

	ev.events = EPOLLIN;
	ev.data.u64 = 7;
	EXPECT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev), "ADD a second pipe");
	pthread_t t;

	wfd = q[1];
	pthread_create(&t, NULL, writer, NULL);
	n = epoll_wait(ep, out, 4, 5000);
	CHECK(n == 1 && out[0].data.u64 == 7, "a blocking wait is woken by a writer", "n %d errno %d",
	      n, errno);
	pthread_join(t, NULL);
	close(q[0]);
	CHECK(epoll_wait(ep, out, 4, 0) == 0, "a closed fd leaves the set", "errno %d", errno);
	return tap_done();
}
