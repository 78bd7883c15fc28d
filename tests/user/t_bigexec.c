/*
 * t_bigexec.c - execve of a program larger than the 4 MiB a single kernel buffer holds (a
 * 9 MiB .rodata pad): exec reads only the headers and maps the PT_LOADs from the file, as
 * Linux.  The parent checks its own file's size, then execs itself as a child that reads
 * both ends of the pad (pages faulted in from the file) and exits 0.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"

#define PAD_SIZE (9u << 20)

/* Every byte is (i * 7 + 1) & 0xff for a few sample offsets: the initialiser sets them. */
#define PADV(i) [i] = (unsigned char)((i) * 7 + 1)
__attribute__((used)) static const unsigned char pad[PAD_SIZE] = {
	PADV(0), PADV(4096), PADV(PAD_SIZE / 2), PADV(PAD_SIZE - 4096), PADV(PAD_SIZE - 1),
};

static int pad_ok(void)
{
	static const uint32_t at[] = { 0, 4096, PAD_SIZE / 2, PAD_SIZE - 4096, PAD_SIZE - 1 };
	const volatile unsigned char *p = pad;

	for (unsigned int i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		if (p[at[i]] != (unsigned char)(at[i] * 7 + 1) || p[at[i] + (at[i] ? -1 : 1)] != 0)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct stat st;
	int status;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return pad_ok() ? 0 : 3;
	tap_init("t_bigexec", 60);
	if (stat("/proc/self/exe", &st))
		tap_fail("self size", "stat /proc/self/exe: %s", strerror(errno));
	else if (st.st_size <= (8 << 20))
		tap_fail("self size", "%lld bytes, want > 8 MiB", (long long)st.st_size);
	else
		tap_pass("self size > 8 MiB");
	if (pad_ok())
		tap_pass("pad bytes read back");
	else
		tap_fail("pad bytes read back", "wrong contents");
	pid_t pid = fork();

	if (pid == 0) {
		char *av[] = { argv[0], "child", NULL };

		execv(strchr(argv[0], '/') ? argv[0] : "/bin/t_bigexec", av);
		_exit(100 + errno);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		tap_fail("exec of a 9 MiB program", "fork/wait: %s", strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		tap_fail("exec of a 9 MiB program", "status 0x%x (100+errno: exec failed)", status);
	else
		tap_pass("exec of a 9 MiB program");
	return tap_done();
}
