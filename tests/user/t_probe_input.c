/*
 * t_probe_input.c - malformed lines written to tracefs's uprobe_events get Linux 6.1's errno
 * and leave the kernel and the defined probes as they were (found by tests/fuzz/filefuzz.c: a
 * lone "p" made the kernel read an argument that was never parsed).  Each line is written on
 * its own with O_APPEND, so no line clears the probes before it.
 * Run on both kernels: make run CMD=/bin/t_probe_input, and refvm.sh --overlay DIR -- /bin/t_probe_input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"

#define EVENTS "/sys/kernel/tracing/uprobe_events"

static int append(const char *line)
{
	int fd = open(EVENTS, O_WRONLY | O_APPEND);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int main(void)
{
	static const struct {
		const char *line;
		int err;
	} cases[] = {
		{ "p\n", -EINVAL },
		{ "r\n", -EINVAL },
		{ "p", -EINVAL },
		{ "p:\n", -EINVAL },
		{ "p:ev\n", -EINVAL },
		{ "p:grp/ev\n", -EINVAL },
		{ "-\n", -EINVAL },
		{ "-:\n", -EINVAL },
		{ "p /bin/hot\n", -EINVAL },
		{ "p:grp/ev /bin/hot:\n", -EINVAL },
		{ "p:grp/ev /nonexistent:0x10\n", -ENOENT },
		{ "p:a/b/c /bin/hot:0x10\n", -EINVAL },
		{ "x /bin/hot:0x10\n", -EINVAL },
		{ "p:9x /bin/hot:0x10\n", -EINVAL },
		{ "p:grp/ev /bin/hot:0x10 a b c d e f g h i j\n", -EINVAL },
		{ "\n", 0 },
		{ "# a comment\n", 0 },
	};
	char what[160];

	tap_init("t_probe_input", 60);
	mkdir("/sys/kernel/tracing", 0755);
	if (access(EVENTS, F_OK))
		mount("none", "/sys/kernel/tracing", "tracefs", 0, NULL);
	int fd = open(EVENTS, O_WRONLY | O_TRUNC);

	if (fd < 0) {
		tap_fail("open uprobe_events", "%s", strerror(errno));
		return tap_done();
	}
	close(fd);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = append(cases[i].line);

		snprintf(what, sizeof(what), "write \"%.*s\" to uprobe_events: errno %d",
			 (int)strcspn(cases[i].line, "\n"), cases[i].line, -cases[i].err);
		if (err == cases[i].err)
			tap_pass(what);
		else
			tap_fail(what, "got %d", -err);
	}
	/* a good line still works after them, and O_TRUNC takes it away */
	int err = append("p:t_probe_input/ok /bin/hot:0x10\n");
	char buf[512] = "";

	fd = open(EVENTS, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	if (!err && !strcmp(buf, "p:t_probe_input/ok /bin/hot:0x0000000000000010\n"))
		tap_pass("after the bad lines, a good one is defined and is the only probe listed");
	else
		tap_fail("after the bad lines, a good one is defined and is the only probe listed",
			 "write %d, uprobe_events \"%s\"", err, buf);
	fd = open(EVENTS, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	return tap_done();
}
