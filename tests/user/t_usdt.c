/* t_usdt: uprobes with a reference counter (USDT semaphores), checked against Linux 6.1;
 * passes on perfkernel and on Linux (refvm.sh).  The semaphore is this program's own 16-bit
 * counter in a writable section of its file, the probed functions are its own too.
 *
 *  1 the uprobe PMU's config:32-63 (format/ref_ctr_offset): the semaphore goes from 0 to 1
 *    when a probe with it opens, stays 1 for a second event on that probe, counts 2 with a
 *    second probe sharing it, and is back to 0 when the last closes; an odd offset, and a
 *    probe already made with another counter offset (or none), are EINVAL.
 *  2 fork and exec: a child forked while the probe is in sees 1 and sees 0 once the parent's
 *    event closes; a program exec'd while a CPU-wide probe is in sees 1 from its start.
 *  3 uprobe_events' "PATH:OFF(REF)": listed as Linux prints it ("(0x%lx)" after the offset),
 *    the semaphore raised only while a perf event has the event open.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include "tracing.h"
#include "tap.h"

#define TRACEFS "/sys/kernel/tracing"

/* the USDT semaphore: in the file (initialised data, as <sys/sdt.h>'s .probes section) */
volatile uint16_t usdt_sema __attribute__((section(".probes"))) = 0;

uint64_t u_one(uint64_t x);
uint64_t u_two(uint64_t x);
__asm__(".text\n.balign 16\n"
	".globl u_one\n.type u_one,%function\nu_one: add x0, x0, #1\n ret\n"
	".globl u_two\n.type u_two,%function\nu_two: add x0, x0, #2\n ret\n");

static int uprobe_type = -1;
static char path[512];
static long off_one, off_two, off_sema;

/* A uprobe PMU event on this program's offset off with reference counter ref, for this task
 * or (cpu_wide) every task on CPU 0: fd or -1. */
static int usdt_open_on(long off, uint64_t ref, bool cpu_wide)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)uprobe_type;
	a.config = ref << 32;
	a.config1 = (uintptr_t)path;
	a.config2 = (uint64_t)off;
	a.exclude_kernel = 1;
	return (int)peo(&a, cpu_wide ? -1 : 0, cpu_wide ? 0 : -1, -1, 0);
}

static int usdt_open(long off, uint64_t ref)
{
	return usdt_open_on(off, ref, false);
}

static void test_pmu(void)
{
	CHECK(usdt_sema == 0, "the semaphore is 0 with no probe", "%u", usdt_sema);
	int a = usdt_open(off_one, (uint64_t)off_sema);

	CHECK(a >= 0 && usdt_sema == 1, "a probe with the semaphore as its counter raises it to 1",
	      "fd %d (%s) sema %u", a, strerror(errno), usdt_sema);
	int b = usdt_open(off_one, (uint64_t)off_sema);

	CHECK(b >= 0 && usdt_sema == 1, "a second event on that probe leaves it at 1", "fd %d sema %u",
	      b, usdt_sema);
	int c = usdt_open(off_two, (uint64_t)off_sema);

	CHECK(c >= 0 && usdt_sema == 2, "a second probe with the same counter: 2", "fd %d sema %u", c,
	      usdt_sema);
	EXPECT_ERRNO(usdt_open(off_one, (uint64_t)off_sema + 2), EINVAL,
		     "a probe already made with another counter offset is EINVAL");
	EXPECT_ERRNO(usdt_open(off_one, 0), EINVAL, "and so is one without a counter");
	u_one(0);
	CHECK(a >= 0 && count_of(a) == 1, "the probe still counts its hits", "%llu",
	      (unsigned long long)count_of(a));
	close(c);
	CHECK(usdt_sema == 1, "closing the second probe: 1", "%u", usdt_sema);
	close(b);
	CHECK(usdt_sema == 1, "closing one of the first probe's events: still 1", "%u", usdt_sema);
	close(a);
	CHECK(usdt_sema == 0, "closing the last: 0", "%u", usdt_sema);
	EXPECT_ERRNO(usdt_open(off_two, (uint64_t)off_sema + 1), EINVAL,
		     "an odd counter offset is EINVAL");
	CHECK(usdt_sema == 0, "and leaves the semaphore alone", "%u", usdt_sema);
}

static void test_fork_exec(void)
{
	int go[2], back[2], st = 0;

	if (pipe(go) || pipe(back))
		return;
	int a = usdt_open(off_one, (uint64_t)off_sema);
	pid_t c = fork();

	if (c == 0) {
		char b = (char)usdt_sema;

		close(go[1]);
		close(a); /* the parent's close is the last */
		if (write(back[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(100);
		_exit(usdt_sema);
	}
	char seen = -1;

	close(go[0]);
	close(back[1]);
	if (read(back[0], &seen, 1) != 1)
		seen = -1;
	close(a);
	if (write(go[1], "g", 1) != 1)
		st = -1;
	close(go[1]);
	close(back[0]);
	waitpid(c, &st, 0);
	CHECK(a >= 0 && seen == 1, "a child forked while the probe is in sees the semaphore at 1",
	      "%d", seen);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "and at 0 once the parent's event closes (the probe leaves its text too)", "status %x",
	      st);

	/* CPU-wide: Linux puts a per-task event's probe (and counter) in its task's mm only */
	a = usdt_open_on(off_one, (uint64_t)off_sema, true);
	c = fork();
	if (c == 0) {
		execl(path, "t_usdt", "--sema", (char *)NULL);
		_exit(100);
	}
	waitpid(c, &st, 0);
	close(a);
	CHECK(a >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
	      "a program exec'd while a CPU-wide probe is in sees its semaphore at 1", "status %x",
	      st);
}

static void test_events(void)
{
	char cmd[768], buf[4096], want[1024];
	int r;

	if (access(TRACEFS "/uprobe_events", F_OK)) {
		tap_skip("uprobe_events", "no tracefs at " TRACEFS);
		return;
	}
	snprintf(cmd, sizeof(cmd), "p:t_usdt/one %s:0x%lx(0x%lx)\n", path, off_one, off_sema);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) ? -1 : 0,
		  "uprobe_events: define p:t_usdt/one PATH:OFF(REF)");
	read_file(TRACEFS "/uprobe_events", buf, sizeof(buf));
	snprintf(want, sizeof(want), "p:t_usdt/one %s:0x%016lx(0x%lx)\n", path, off_one, off_sema);
	CHECK(strstr(buf, want) != NULL, "uprobe_events lists the counter as Linux prints it", "'%s'",
	      buf);
	CHECK(usdt_sema == 0, "the definition alone leaves the semaphore at 0", "%u", usdt_sema);
	int fd = tp_open(event_id("t_usdt/one"), 0, 0);

	CHECK(fd >= 0 && usdt_sema == 1, "a perf event on it raises the semaphore to 1",
	      "fd %d sema %u", fd, usdt_sema);
	if (fd >= 0)
		close(fd);
	CHECK(usdt_sema == 0, "its close lowers it to 0", "%u", usdt_sema);
	snprintf(cmd, sizeof(cmd), "p:t_usdt/two %s:0x%lx(0x%lx\n", path, off_two, off_sema);
	r = write_file(TRACEFS "/uprobe_events", cmd, O_APPEND);
	CHECK(r == -EINVAL, "an unclosed '(' is EINVAL", "%d", r);
	snprintf(cmd, sizeof(cmd), "p:t_usdt/two %s:0x%lx(0x%lx)x\n", path, off_two, off_sema);
	r = write_file(TRACEFS "/uprobe_events", cmd, O_APPEND);
	CHECK(r == -EINVAL, "anything after the ')' is EINVAL", "%d", r);
	snprintf(cmd, sizeof(cmd), "p:t_usdt/two %s:0x%lx(zz)\n", path, off_two);
	r = write_file(TRACEFS "/uprobe_events", cmd, O_APPEND);
	CHECK(r == -EINVAL, "a counter offset that is not a number is EINVAL", "%d", r);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", "-:t_usdt/one\n", O_APPEND) ? -1 : 0,
		  "uprobe_events: delete it");
}

int main(int argc, char **argv)
{
	char buf[64];

	if (argc > 1 && !strcmp(argv[1], "--sema"))
		return usdt_sema;
	tap_init("t_usdt", 60);
	if (read_file("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf)) <= 0 ||
	    (uprobe_type = atoi(buf)) <= 0) {
		tap_fail("the uprobe PMU's type", "%s", buf);
		return tap_done();
	}
	off_one = map_file_offset((void *)u_one, path, sizeof(path));
	off_two = map_file_offset((void *)u_two, path, sizeof(path));
	off_sema = map_file_offset((const void *)&usdt_sema, path, sizeof(path));
	if (!CHECK(off_one > 0 && off_two > 0 && off_sema > 0,
		   "the probes' and the semaphore's file offsets", "%ld %ld %ld", off_one, off_two,
		   off_sema))
		return tap_done();
	test_pmu();
	test_fork_exec();
	test_events();
	return tap_done();
}
