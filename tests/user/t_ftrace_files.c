/*
 * t_ftrace_files.c - the function tracer's control files in tracefs that `perf ftrace` resets
 * before it picks a tracer: what they show and which writes they take, the same on perfkernel
 * (which has no function tracer: current_tracer takes only nop) and on Linux 6.1.
 * Run on both kernels: make run CMD=/bin/t_ftrace_files, and refvm.sh --overlay DIR -- /bin/t_ftrace_files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "sys_bpf.h"
#include "tap.h"

#define T "/sys/kernel/tracing/"

/* write s to T name (open flags fl): 0 or -errno */
static int put(const char *name, int fl, const char *s)
{
	char p[128];
	int fd, err = 0;

	snprintf(p, sizeof(p), T "%s", name);
	fd = open(p, O_WRONLY | fl);
	if (fd < 0)
		return -errno;
	if (s && write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static const char *get(const char *name)
{
	static char buf[512];
	char p[128];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), T "%s", name);
	fd = open(p, O_RDONLY);
	buf[0] = 0;
	if (fd < 0)
		return "(no file)";
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static void expect_text(const char *what, const char *name, const char *want)
{
	const char *got = get(name);

	if (!strcmp(got, want))
		tap_pass(what);
	else
		tap_fail(what, "\"%s\"", got);
}

static void expect_err(const char *what, int got, int want)
{
	if (got == want)
		tap_pass(what);
	else
		tap_fail(what, "got %d, want %d", got, want);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* trace_pipe with nothing written: EAGAIN with O_NONBLOCK, not ready for poll, and a blocking
 * read waits until a signal ends it (EINTR: the handler has no SA_RESTART; a child sends it). */
static void check_trace_pipe(void)
{
	int fd = open(T "trace_pipe", O_RDONLY | O_NONBLOCK);
	char buf[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sigaction sa;

	if (fd < 0) {
		tap_fail("trace_pipe opens", "%s", strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		; /* what an earlier test left */
	errno = 0;
	expect_err("trace_pipe, empty, O_NONBLOCK: read is EAGAIN", read(fd, buf, sizeof(buf)) < 0 ? -errno : 0,
		   -EAGAIN);
	expect_err("trace_pipe, empty: poll is not ready", poll(&p, 1, 0), 0);
	close(fd);
	fd = open(T "trace_pipe", O_RDONLY);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pid_t parent = getpid(), c = fork();

	if (c == 0) {
		usleep(300000);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	errno = 0;
	ssize_t n = read(fd, buf, sizeof(buf));

	waitpid(c, NULL, 0);
	expect_err("trace_pipe, empty: a blocking read waits until a signal (EINTR)", n < 0 ? -errno : (int)n,
		   -EINTR);
	close(fd);
}

/* A line from bpf_trace_printk (a BPF_PROG_TYPE_SYSCALL program run with BPF_PROG_TEST_RUN)
 * makes trace_pipe ready and a blocking read returns it. */
static void check_trace_pipe_line(void)
{
	/* *(u32 *)(fp - 8) = "hi\n"; trace_printk(fp - 8, 4); return 0 */
	struct bpf_insn prog[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -8, .imm = 0x000a6968 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2, .imm = 4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_trace_printk },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	int p = bpf_prog_new(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, prog, 7, log, sizeof(log));
	int fd = open(T "trace_pipe", O_RDONLY);
	union bpf_attr a;
	char buf[512] = "";
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	if (p < 0 || fd < 0) {
		tap_fail("a trace_printk line reaches trace_pipe", "load %d (%s), open %d", p, log, fd);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)p;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0) {
		tap_fail("a trace_printk line reaches trace_pipe", "test run: %s", strerror(errno));
		return;
	}
	expect_err("trace_pipe after a trace_printk: poll is ready", poll(&pf, 1, 5000), 1);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = 0;
	if (n > 0 && strstr(buf, "bpf_trace_printk: hi\n"))
		tap_pass("trace_pipe: a blocking read returns the trace_printk line");
	else
		tap_fail("trace_pipe: a blocking read returns the trace_printk line", "%zd \"%s\"", n, buf);
	close(fd);
	close(p);
}

int main(void)
{
	char mask[32];
	long n = sysconf(_SC_NPROCESSORS_CONF);

	tap_init("t_ftrace_files", 60);
	mkdir("/sys/kernel/tracing", 0755);
	if (access(T "current_tracer", F_OK))
		mount("none", "/sys/kernel/tracing", "tracefs", 0, NULL);
	expect_err("current_tracer takes nop", put("current_tracer", O_TRUNC, "nop\n"), 0);
	expect_err("current_tracer refuses a tracer that does not exist (EINVAL)",
		   put("current_tracer", O_TRUNC, "no_such_tracer\n"), -EINVAL);
	expect_text("current_tracer shows nop", "current_tracer", "nop\n");
	/* set_ftrace_pid: O_TRUNC clears, a write lists pids in order, a word not a pid is EINVAL */
	expect_err("set_ftrace_pid opened with O_TRUNC", put("set_ftrace_pid", O_TRUNC, NULL), 0);
	expect_text("set_ftrace_pid is empty after O_TRUNC: \"no pid\"", "set_ftrace_pid", "no pid\n");
	expect_err("set_ftrace_pid takes \"12 13\"", put("set_ftrace_pid", O_TRUNC, "12 13\n"), 0);
	expect_text("set_ftrace_pid lists 12 and 13", "set_ftrace_pid", "12\n13\n");
	expect_err("set_ftrace_pid refuses \"abc\" (EINVAL)", put("set_ftrace_pid", O_TRUNC, "abc\n"),
		   -EINVAL);
	expect_err("set_ftrace_pid takes a blank (perf ftrace's reset)",
		   put("set_ftrace_pid", O_TRUNC, " \n"), 0);
	expect_text("set_ftrace_pid is empty after the reset", "set_ftrace_pid", "no pid\n");
	/* max_graph_depth and tracing_thresh: unsigned decimals */
	expect_err("max_graph_depth takes 5", put("max_graph_depth", O_TRUNC, "5\n"), 0);
	expect_text("max_graph_depth shows 5", "max_graph_depth", "5\n");
	expect_err("max_graph_depth refuses \"x\" (EINVAL)", put("max_graph_depth", O_TRUNC, "x\n"),
		   -EINVAL);
	expect_err("max_graph_depth back to 0", put("max_graph_depth", O_TRUNC, "0\n"), 0);
	expect_text("tracing_thresh shows 0", "tracing_thresh", "0\n");
	expect_err("tracing_thresh refuses -1 (EINVAL)", put("tracing_thresh", O_TRUNC, "-1\n"), -EINVAL);
	/* tracing_cpumask: every CPU, in hex */
	snprintf(mask, sizeof(mask), "%llx\n", n >= 64 ? ~0ull : (1ull << n) - 1);
	expect_text("tracing_cpumask shows every CPU in hex", "tracing_cpumask", mask);
	expect_err("tracing_cpumask takes 1", put("tracing_cpumask", O_TRUNC, "1\n"), 0);
	expect_text("tracing_cpumask shows 1", "tracing_cpumask", "1\n");
	expect_err("tracing_cpumask refuses \"xyz\" (EINVAL)", put("tracing_cpumask", O_TRUNC, "xyz\n"),
		   -EINVAL);
	put("tracing_cpumask", O_TRUNC, mask);
	expect_text("tracing_cpumask back to every CPU", "tracing_cpumask", mask);
	/* the function filters take perf ftrace's blank reset */
	expect_err("set_ftrace_filter takes a blank", put("set_ftrace_filter", O_TRUNC, " \n"), 0);
	expect_err("set_ftrace_notrace takes a blank", put("set_ftrace_notrace", O_TRUNC, " \n"), 0);
	expect_err("set_graph_function takes a blank", put("set_graph_function", O_TRUNC, " \n"), 0);
	expect_err("set_graph_notrace takes a blank", put("set_graph_notrace", O_TRUNC, " \n"), 0);
	expect_text("set_ftrace_filter with no filter: all functions", "set_ftrace_filter",
		    "#### all functions enabled ####\n");
	expect_err("set_ftrace_filter refuses a name no function has (EINVAL)",
		   put("set_ftrace_filter", O_TRUNC, "no_such_function_here\n"), -EINVAL);
	/* trace: O_TRUNC empties it, a write is taken */
	expect_err("trace opens with O_TRUNC and takes a write", put("trace", O_TRUNC, "x\n"), 0);
	check_trace_pipe();
	check_trace_pipe_line();
	return tap_done();
}
