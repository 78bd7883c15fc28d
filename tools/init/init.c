/*
 * init - perfkernel's /init (pid 1): runs the command line the host passed in /cmd through
 * busybox `sh -c`, reaps every orphan handed to it meanwhile, and exits with the command's
 * status (128 + signal when a signal ended it).  The kernel ends the run when init exits and
 * reports that status to the host.  With an empty /cmd it runs the demo (/bin/demo.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEMO "/bin/demo.sh"

static char *read_cmd(void)
{
	static char buf[65536];
	int fd = open("/cmd", O_RDONLY);
	ssize_t n = 0, r;

	if (fd < 0)
		return NULL;
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return n ? buf : NULL;
}

int main(void)
{
	char *cmd = read_cmd();
	char *argv[] = { "sh", "-c", cmd ? cmd : DEMO, NULL };
	pid_t child;
	int status = 0;

	setenv("PATH", "/bin:/usr/bin:/sbin:/usr/sbin", 1);
	setenv("HOME", "/root", 1);
	setenv("TERM", "dumb", 1);
	chdir("/");
	child = fork();
	if (child < 0) {
		perror("init: fork");
		return 127;
	}
	if (child == 0) {
		execv("/bin/sh", argv);
		perror("init: exec /bin/sh");
		_exit(127);
	}
	for (;;) {
		int st;
		pid_t p = wait(&st);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == child)
			status = st;
	}
	fflush(stdout);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
