/* cgroup_util.h - what the cgroup tests share (header only, after tap.h): cgroup2 at
 * /sys/fs/cgroup, mounted here when it is not (refvm's Linux boots without it), writes of
 * cgroup files and moves of a process. */
#ifndef TESTS_USER_CGROUP_UTIL_H
#define TESTS_USER_CGROUP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#define CG "/sys/fs/cgroup"

/* Mount cgroup2 at CG unless it is there (a PASS or FAIL line when it mounts). */
static inline void cg_mount(void)
{
	struct statfs sf;

	if (statfs(CG, &sf) || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
		tap_check(mount("none", CG, "cgroup2", 0, NULL) == 0, "mount cgroup2 at " CG, "%s",
			  strerror(errno));
}

/* Write s to path: the count, -errno of the write, or -1000 - errno when open fails. */
static inline long cg_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	long r;

	if (fd < 0)
		return -1000 - errno;
	r = write(fd, s, strlen(s));
	if (r < 0)
		r = -errno;
	close(fd);
	return r;
}

/* Move process pid (0: ourselves) into the cgroup directory dir: 0 or -1. */
static inline int cg_move(const char *dir, int pid)
{
	char path[256], num[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(num, sizeof(num), "%d", pid);
	return cg_write(path, num) == (long)strlen(num) ? 0 : -1;
}

#endif
