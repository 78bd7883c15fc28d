/* forkecho: a small program for strace -f: fork; the child writes a line and exits 3; the
 * parent waits for it, writes a line and exits 7 (tests/e2e/debian-strace.sh). */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	static const char child[] = "forkecho child\n", parent[] = "forkecho parent\n";
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (write(1, child, strlen(child)) < 0)
			_exit(1);
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
		return 1;
	if (write(1, parent, strlen(parent)) < 0)
		return 1;
	return 7;
}
