/* t_ptrace: ptrace(2) as Linux 6.1 does it on arm64, through the raw syscall and the uapi
 * headers (<linux/ptrace.h>, <asm/ptrace.h>, <linux/elf.h>).
 *
 * - TRACEME + execve: the legacy SIGTRAP stop after exec (status 0x57f, SI_USER from itself),
 *   CONT, the exit status; TRACEME twice is EPERM.
 * - syscall stops (PTRACE_SYSCALL, TRACESYSGOOD): 0x857f, x7 = 0 at entry and 1 at exit, x8 and
 *   the arguments, GETEVENTMSG 1/2, GETSIGINFO {SIGTRAP, 0x85}, PTRACE_GET_SYSCALL_INFO entry
 *   and exit, NT_ARM_SYSTEM_CALL; skipping a call with syscall number -1 and a chosen x0.
 * - memory: PEEKDATA/POKEDATA of a variable, PEEKTEXT/POKETEXT of read-only text (the tracee's
 *   private copy, the tracer's own text untouched), EIO for unmapped addresses, EFAULT for a bad
 *   data pointer, PEEKUSER EIO; GETREGSET/SETREGSET errors (EFAULT, EINVAL, short iov).
 * - ATTACH of a running child (SIGSTOP stop, SI_KERNEL), requests on a running tracee ESRCH,
 *   DETACH; SEIZE (no stop), INTERRUPT (PTRACE_EVENT_STOP|SIGTRAP), INTERRUPT without SEIZE EIO;
 *   errors: self EPERM, no such pid ESRCH, a non-tracee ESRCH, traced twice EPERM, bad signal EIO,
 *   a kernel thread EPERM (where /proc/2 is kthreadd).
 * - signal-delivery stops: siginfo, suppressing and substituting the signal.
 * - group stop: ATTACH (plain 0x137f, GETSIGINFO EINVAL) and SEIZE (PTRACE_EVENT_STOP|SIGSTOP,
 *   LISTEN, SIGCONT re-traps with SIGTRAP, then the SIGCONT delivery stop), as strace starts.
 * - fork/vfork/exec/exit events with __WALL: EVENT_FORK with the child's pid, the auto-attached
 *   child's first stop, EVENT_EXEC, EVENT_EXIT with the status, the grandchild's exit reported
 *   to the tracer (not its parent), EVENT_VFORK and VFORK_DONE.
 * - threads: PTRACE_EVENT_CLONE with the thread's tid, its first stop (waited for without
 *   __WALL: a tracee is always eligible) and its exit.
 * - waitid: CLD_TRAPPED with the stop's code (SIGSTOP, 0x85) without WSTOPPED, WNOWAIT,
 *   WNOHANG's zeroed fields, CLD_EXITED; CLD_STOPPED/CONTINUED/KILLED; EINVAL, ECHILD.
 * - bad input: every reading request with edge addresses and data pointers gets 0, EIO,
 *   EFAULT or EINVAL and leaves the stopped tracee whole; on ourselves and pid 0, ESRCH.
 * - tracer exit: detaches (the tracee runs on), or kills with PTRACE_O_EXITKILL; SEIZE of pid 1.
 * - PTRACE_KILL.
 * 103/103 here and on Linux 6.1 (refvm.sh --smp 2).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <linux/audit.h>
#include <linux/elf.h>
#include <linux/ptrace.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

static const char *self_path;
static volatile long magic = 0x1122334455667788L;

static long pt(long req, pid_t pid, void *addr, void *data)
{
	return syscall(SYS_ptrace, req, (long)pid, addr, data);
}

static long ptl(long req, pid_t pid, long addr, long data)
{
	return syscall(SYS_ptrace, req, (long)pid, addr, data);
}

/* the word PEEK returns through *data (the raw syscall) */
static long peek(pid_t pid, const void *addr, long *out)
{
	return pt(PTRACE_PEEKDATA, pid, (void *)addr, out);
}

__attribute__((noinline)) int never_called(int x)
{
	return x * 3 + 1;
}

static int waitst(pid_t pid, int flags)
{
	int st = -1;
	pid_t r;

	do
		r = waitpid(pid, &st, flags);
	while (r < 0 && errno == EINTR);
	return r == pid ? st : -1;
}

static int getregs(pid_t pid, struct user_pt_regs *r)
{
	struct iovec iov = { r, sizeof(*r) };

	return (int)pt(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}

static int setregs(pid_t pid, struct user_pt_regs *r)
{
	struct iovec iov = { r, sizeof(*r) };

	return (int)pt(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static pid_t spawn_pauser(void)
{
	pid_t c = fork();

	if (c == 0) {
		for (;;)
			pause();
	}
	return c;
}

static void reap_kill(pid_t c)
{
	kill(c, SIGKILL);
	waitst(c, __WALL);
}

/* ---- TRACEME + exec ---- */

static void test_traceme_exec(void)
{
	pid_t c = fork();

	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		errno = 0;
		long r = pt(PTRACE_TRACEME, 0, 0, 0);
		if (r != -1 || errno != EPERM)
			_exit(91);
		execl(self_path, self_path, "exit7", (char *)NULL);
		_exit(92);
	}
	int st = waitst(c, 0);
	CHECK(st == 0x57f, "TRACEME then execve: SIGTRAP stop (0x57f)", "status %#x", st);
	siginfo_t si = { 0 };
	long r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(r == 0 && si.si_signo == SIGTRAP && si.si_code == SI_USER && si.si_pid == c,
	      "exec SIGTRAP siginfo: SI_USER from the tracee", "r %ld signo %d code %d pid %d", r,
	      si.si_signo, si.si_code, si.si_pid);
	r = pt(PTRACE_CONT, c, 0, 0);
	st = waitst(c, 0);
	CHECK(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7, "CONT: exits 7 after exec",
	      "r %ld status %#x", r, st);
}

/* ---- syscall stops, registers, memory ---- */

static int child_syscalls(void)
{
	pid_t me = getpid();

	kill(me, SIGSTOP);
	long t = syscall(SYS_gettid, 0x1111L, 0x2222L, 0x3333L, 0x4444L, 0x5555L, 0x6666L);
	if (t != me)
		return 10;
	long r = syscall(SYS_getppid, 0x77L);
	if (r != 4242)
		return 11;
	if (magic != 0x0102030405060708L)
		return 12;
	if (never_called(1) != 4)
		return 13; /* text the tracer poked back unchanged */
	for (;;)
		pause();
}

static void test_syscall_stops(void)
{
	pid_t c = fork();

	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		_exit(child_syscalls());
	}
	int st = waitst(c, 0);
	CHECK(st == 0x137f, "kill(self, SIGSTOP) under TRACEME: signal stop 0x137f", "status %#x", st);
	siginfo_t si = { 0 };
	long r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(r == 0 && si.si_signo == SIGSTOP && si.si_code == SI_USER && si.si_pid == c,
	      "signal stop siginfo", "r %ld signo %d code %d pid %d", r, si.si_signo, si.si_code,
	      si.si_pid);
	EXPECT_ERRNO(ptl(PTRACE_SETOPTIONS, c, 0, 1L << 30), EINVAL, "SETOPTIONS unknown bit: EINVAL");
	EXPECT_OK(ptl(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD), "SETOPTIONS TRACESYSGOOD");
	EXPECT_ERRNO(ptl(PTRACE_CONT, c, 0, 100), EIO, "CONT with signal 100: EIO");
	struct ptrace_syscall_info info;
	memset(&info, 0xff, sizeof(info));
	r = pt(PTRACE_GET_SYSCALL_INFO, c, (void *)sizeof(info), &info);
	CHECK(r == (long)offsetof(struct ptrace_syscall_info, entry) &&
		      info.op == PTRACE_SYSCALL_INFO_NONE && info.arch == AUDIT_ARCH_AARCH64 &&
		      info.instruction_pointer && info.stack_pointer,
	      "GET_SYSCALL_INFO at a signal stop: NONE", "r %ld op %d arch %#x", r, info.op,
	      info.arch);

	/* memory while stopped */
	long w = 0;
	r = peek(c, (const void *)&magic, &w);
	CHECK(r == 0 && w == 0x1122334455667788L, "PEEKDATA of a variable", "r %ld word %#lx", r, w);
	EXPECT_OK(ptl(PTRACE_POKEDATA, c, (long)&magic, 0x0102030405060708L), "POKEDATA");
	r = peek(c, (const void *)&magic, &w);
	CHECK(r == 0 && w == 0x0102030405060708L && magic == 0x1122334455667788L,
	      "PEEKDATA sees the poke, the tracer's copy unchanged", "word %#lx", w);
	long text = 0;
	r = pt(PTRACE_PEEKTEXT, c, (void *)never_called, &text);
	CHECK(r == 0 && text == *(volatile long *)never_called, "PEEKTEXT of read-only text",
	      "r %ld", r);
	r = ptl(PTRACE_POKETEXT, c, (long)never_called, ~text);
	long t2 = 0;
	pt(PTRACE_PEEKTEXT, c, (void *)never_called, &t2);
	CHECK(r == 0 && t2 == ~text && *(volatile long *)never_called == text,
	      "POKETEXT into read-only text: the tracee's own copy", "r %ld word %#lx", r, t2);
	ptl(PTRACE_POKETEXT, c, (long)never_called, text);
	EXPECT_ERRNO(peek(c, (const void *)8, &w), EIO, "PEEKDATA of an unmapped address: EIO");
	EXPECT_ERRNO(ptl(PTRACE_POKEDATA, c, 8, 0), EIO, "POKEDATA of an unmapped address: EIO");
	EXPECT_ERRNO(pt(PTRACE_PEEKDATA, c, (void *)&magic, (void *)8), EFAULT,
		     "PEEKDATA into a bad data pointer: EFAULT");
	EXPECT_ERRNO(pt(PTRACE_PEEKUSR, c, 0, &w), EIO, "PEEKUSER: EIO on arm64");
	struct user_pt_regs regs;
	EXPECT_ERRNO(pt(PTRACE_GETREGSET, c, (void *)NT_PRSTATUS, (void *)8), EFAULT,
		     "GETREGSET with a bad iovec: EFAULT");
	struct iovec iov = { &regs, sizeof(regs) };
	EXPECT_ERRNO(pt(PTRACE_GETREGSET, c, (void *)0x4711, &iov), EINVAL,
		     "GETREGSET of an unknown note: EINVAL");
	iov.iov_len = 8;
	r = pt(PTRACE_GETREGSET, c, (void *)NT_PRSTATUS, &iov);
	CHECK(r == 0 && iov.iov_len == 8, "GETREGSET with a short iovec: cut, iov_len 8",
	      "r %ld len %zu", r, iov.iov_len);
	iov.iov_len = sizeof(regs) + 64;
	r = pt(PTRACE_GETREGSET, c, (void *)NT_PRSTATUS, &iov);
	CHECK(r == 0 && iov.iov_len == sizeof(regs), "GETREGSET NT_PRSTATUS: 272 bytes",
	      "r %ld len %zu", r, iov.iov_len);

	/* entry of gettid */
	EXPECT_OK(ptl(PTRACE_SYSCALL, c, 0, 0), "PTRACE_SYSCALL");
	st = waitst(c, 0);
	CHECK(st == 0x857f, "syscall-entry stop: (SIGTRAP|0x80) << 8 | 0x7f", "status %#x", st);
	getregs(c, &regs);
	CHECK(regs.regs[8] == SYS_gettid && regs.regs[7] == 0 && regs.regs[0] == 0x1111 &&
		      regs.regs[5] == 0x6666,
	      "entry: x8 = gettid, x7 = 0, x0..x5 the arguments", "x8 %llu x7 %llu x0 %#llx",
	      regs.regs[8], regs.regs[7], regs.regs[0]);
	unsigned long msg = 9;
	r = pt(PTRACE_GETEVENTMSG, c, 0, &msg);
	CHECK(r == 0 && msg == PTRACE_EVENTMSG_SYSCALL_ENTRY, "GETEVENTMSG at entry: 1", "msg %lu",
	      msg);
	memset(&si, 0, sizeof(si));
	r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(r == 0 && si.si_signo == SIGTRAP && si.si_code == (SIGTRAP | 0x80) && si.si_pid == c,
	      "GETSIGINFO at a syscall stop: SIGTRAP, code 0x85", "signo %d code %#x pid %d",
	      si.si_signo, si.si_code, si.si_pid);
	r = pt(PTRACE_GET_SYSCALL_INFO, c, (void *)sizeof(info), &info);
	CHECK(r == (long)offsetof(struct ptrace_syscall_info, entry.args[6]) &&
		      info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_gettid &&
		      info.entry.args[0] == 0x1111 && info.entry.args[5] == 0x6666 &&
		      info.instruction_pointer == regs.pc && info.stack_pointer == regs.sp,
	      "GET_SYSCALL_INFO entry", "r %ld op %d nr %llu", r, info.op,
	      (unsigned long long)info.entry.nr);
	int scno = -5;
	struct iovec siov = { &scno, sizeof(scno) };
	r = pt(PTRACE_GETREGSET, c, (void *)NT_ARM_SYSTEM_CALL, &siov);
	CHECK(r == 0 && scno == SYS_gettid, "NT_ARM_SYSTEM_CALL at entry", "r %ld nr %d", r, scno);

	/* exit of gettid */
	ptl(PTRACE_SYSCALL, c, 0, 0);
	st = waitst(c, 0);
	getregs(c, &regs);
	CHECK(st == 0x857f && regs.regs[7] == 1 && (long)regs.regs[0] == c,
	      "syscall-exit stop: x7 = 1, x0 the result", "status %#x x7 %llu x0 %lld", st,
	      regs.regs[7], (long long)regs.regs[0]);
	pt(PTRACE_GETEVENTMSG, c, 0, &msg);
	r = pt(PTRACE_GET_SYSCALL_INFO, c, (void *)sizeof(info), &info);
	CHECK(msg == PTRACE_EVENTMSG_SYSCALL_EXIT && r == (long)(offsetof(struct ptrace_syscall_info,
									 exit.is_error) + 1) &&
		      info.op == PTRACE_SYSCALL_INFO_EXIT && info.exit.rval == c && !info.exit.is_error,
	      "exit: GETEVENTMSG 2, GET_SYSCALL_INFO exit", "msg %lu r %ld op %d rval %lld", msg, r,
	      info.op, (long long)info.exit.rval);

	/* skip getppid: syscall number -1, x0 chosen by the tracer */
	ptl(PTRACE_SYSCALL, c, 0, 0);
	st = waitst(c, 0);
	getregs(c, &regs);
	CHECK(st == 0x857f && regs.regs[8] == SYS_getppid, "entry of getppid", "st %#x x8 %llu", st,
	      regs.regs[8]);
	scno = -1;
	r = pt(PTRACE_SETREGSET, c, (void *)NT_ARM_SYSTEM_CALL, &siov);
	regs.regs[0] = 4242;
	long r2 = setregs(c, &regs);
	CHECK(r == 0 && r2 == 0, "SETREGSET NT_ARM_SYSTEM_CALL -1 and NT_PRSTATUS x0",
	      "r %ld %ld errno %d", r, r2, errno);
	struct user_pt_regs bad = regs;
	bad.pstate = 0x3c5; /* EL1h, DAIF masked */
	EXPECT_ERRNO(setregs(c, &bad), EINVAL, "SETREGSET with an EL1 pstate: EINVAL");
	ptl(PTRACE_SYSCALL, c, 0, 0);
	st = waitst(c, 0);
	getregs(c, &regs);
	CHECK(st == 0x857f && regs.regs[0] == 4242 && regs.regs[7] == 1,
	      "skipped call: exit stop with the tracer's x0", "st %#x x0 %lld", st,
	      (long long)regs.regs[0]);
	ptl(PTRACE_CONT, c, 0, 0);
	sleep_ms(100);
	st = -1;
	pid_t wr = waitpid(c, &st, WNOHANG);
	CHECK(wr == 0, "the tracee ran on (pause)", "waitpid %d status %#x", wr, st);
	EXPECT_ERRNO(peek(c, (const void *)&magic, &w), ESRCH, "PEEKDATA of a running tracee: ESRCH");
	EXPECT_ERRNO(ptl(PTRACE_CONT, c, 0, 0), ESRCH, "CONT of a running tracee: ESRCH");
	EXPECT_OK(ptl(PTRACE_KILL, c, 0, 0), "PTRACE_KILL of a running tracee");
	st = waitst(c, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "PTRACE_KILL: killed by SIGKILL",
	      "status %#x", st);
}

/* ---- attach, seize, errors ---- */

static void test_attach(void)
{
	EXPECT_ERRNO(ptl(PTRACE_ATTACH, getpid(), 0, 0), EPERM, "ATTACH to itself: EPERM");
	EXPECT_ERRNO(ptl(PTRACE_ATTACH, 0x3ffffff0, 0, 0), ESRCH, "ATTACH to no such pid: ESRCH");
	EXPECT_ERRNO(ptl(PTRACE_CONT, getppid(), 0, 0), ESRCH, "CONT of a process we do not trace: ESRCH");
	char buf[64] = "";
	int fd = open("/proc/2/stat", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	/* pid 2: kthreadd on Linux; on perfkernel a kernel thread its /proc does not list */
	if (strstr(buf, "(kthreadd)") || (fd < 0 && errno == ENOENT))
		EXPECT_ERRNO(ptl(PTRACE_ATTACH, 2, 0, 0), EPERM, "ATTACH to a kernel thread: EPERM");
	else
		tap_skip("ATTACH to a kernel thread: EPERM", "pid 2 is a user process here");

	pid_t c = spawn_pauser();
	sleep_ms(20);
	EXPECT_OK(ptl(PTRACE_ATTACH, c, 0, 0), "ATTACH to a running child");
	int st = waitst(c, 0);
	siginfo_t si = { 0 };
	long r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(st == 0x137f && r == 0 && si.si_signo == SIGSTOP && si.si_code == SI_KERNEL,
	      "ATTACH: SIGSTOP stop, SI_KERNEL", "status %#x code %d", st, si.si_code);
	EXPECT_ERRNO(ptl(PTRACE_INTERRUPT, c, 0, 0), EIO, "INTERRUPT without SEIZE: EIO");
	EXPECT_ERRNO(ptl(PTRACE_LISTEN, c, 0, 0), EIO, "LISTEN without SEIZE: EIO");
	pid_t other = fork();
	if (other == 0) {
		errno = 0;
		long r3 = ptl(PTRACE_ATTACH, c, 0, 0);
		_exit(r3 == -1 && errno == EPERM ? 0 : 1);
	}
	st = waitst(other, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ATTACH to a traced process: EPERM", "status %#x",
	      st);
	EXPECT_OK(ptl(PTRACE_DETACH, c, 0, 0), "DETACH");
	EXPECT_ERRNO(ptl(PTRACE_CONT, c, 0, 0), ESRCH, "CONT after DETACH: ESRCH");
	sleep_ms(20);
	pid_t wr = waitpid(c, &st, WNOHANG);
	CHECK(wr == 0, "detached child runs on", "waitpid %d status %#x", wr, st);

	/* SEIZE: no stop; INTERRUPT traps with PTRACE_EVENT_STOP */
	EXPECT_ERRNO(ptl(PTRACE_SEIZE, c, 0, 1L << 30), EIO, "SEIZE with an unknown option: EIO");
	EXPECT_OK(ptl(PTRACE_SEIZE, c, 0, PTRACE_O_TRACESYSGOOD), "SEIZE a running child");
	sleep_ms(20);
	wr = waitpid(c, &st, WNOHANG | __WALL);
	CHECK(wr == 0, "SEIZE does not stop it", "waitpid %d status %#x", wr, st);
	EXPECT_OK(ptl(PTRACE_INTERRUPT, c, 0, 0), "INTERRUPT");
	st = waitst(c, __WALL);
	memset(&si, 0, sizeof(si));
	r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(st == (0x7f | SIGTRAP << 8 | PTRACE_EVENT_STOP << 16) && r == 0 &&
		      si.si_code == (SIGTRAP | PTRACE_EVENT_STOP << 8),
	      "INTERRUPT: PTRACE_EVENT_STOP|SIGTRAP", "status %#x si_code %#x", st, si.si_code);
	EXPECT_OK(ptl(PTRACE_CONT, c, 0, 0), "CONT after the interrupt");
	reap_kill(c);
}

/* ---- signal-delivery stops ---- */

static volatile sig_atomic_t got_usr1;
static void on_usr1(int s)
{
	(void)s;
	got_usr1++;
}

static void test_signal_stops(void)
{
	int p[2];
	if (pipe(p))
		return;
	pid_t c = fork();
	if (c == 0) {
		signal(SIGUSR1, on_usr1);
		close(p[0]);
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		kill(getpid(), SIGSTOP);
		for (int i = 0; i < 2; i++) {
			while (!got_usr1 && i == 1)
				pause();
			if (i == 0)
				sleep_ms(300); /* the suppressed SIGUSR1 comes and goes */
			char b = (char)got_usr1;
			if (write(p[1], &b, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	close(p[1]);
	int st = waitst(c, 0);
	ptl(PTRACE_CONT, c, 0, 0);
	kill(c, SIGUSR1);
	st = waitst(c, 0);
	siginfo_t si = { 0 };
	long r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(st == (SIGUSR1 << 8 | 0x7f) && r == 0 && si.si_signo == SIGUSR1 &&
		      si.si_code == SI_USER && si.si_pid == getpid(),
	      "signal-delivery stop: SIGUSR1 with its siginfo", "status %#x code %d pid %d", st,
	      si.si_code, si.si_pid);
	ptl(PTRACE_CONT, c, 0, 0); /* suppressed */
	char b = 9;
	r = read(p[0], &b, 1);
	CHECK(r == 1 && b == 0, "CONT with 0 suppresses the signal", "r %ld handler ran %d", r, b);
	kill(c, SIGUSR2);
	st = waitst(c, 0);
	CHECK(st == (SIGUSR2 << 8 | 0x7f), "SIGUSR2 stop", "status %#x", st);
	ptl(PTRACE_CONT, c, 0, SIGUSR1); /* substituted */
	r = read(p[0], &b, 1);
	CHECK(r == 1 && b == 1, "CONT with SIGUSR1 delivers SIGUSR1 instead", "r %ld handler ran %d",
	      r, b);
	st = waitst(c, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the tracee exits 0", "status %#x", st);
	close(p[0]);
}

/* ---- group stop, as strace starts a program ---- */

static void test_group_stop(void)
{
	/* plain ATTACH: SIGSTOP delivered back becomes a group stop without siginfo */
	pid_t c = spawn_pauser();
	ptl(PTRACE_ATTACH, c, 0, 0);
	int st = waitst(c, 0);
	ptl(PTRACE_CONT, c, 0, SIGSTOP);
	st = waitst(c, 0);
	siginfo_t si;
	EXPECT_ERRNO(pt(PTRACE_GETSIGINFO, c, 0, &si), EINVAL,
		     "group stop after ATTACH: GETSIGINFO EINVAL");
	CHECK(st == 0x137f, "group stop: 0x137f", "status %#x", st);
	reap_kill(c);

	/* strace: the child stops itself, the parent sees it, seizes, interrupts, SIGCONT */
	c = fork();
	if (c == 0) {
		kill(getpid(), SIGSTOP);
		_exit(5);
	}
	st = waitst(c, WSTOPPED);
	CHECK(st == 0x137f, "the child stopped itself (WSTOPPED)", "status %#x", st);
	EXPECT_OK(ptl(PTRACE_SEIZE, c, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC), "SEIZE a stopped child");
	EXPECT_OK(ptl(PTRACE_INTERRUPT, c, 0, 0), "INTERRUPT it");
	kill(c, SIGCONT);
	st = waitst(c, __WALL);
	memset(&si, 0, sizeof(si));
	long r = pt(PTRACE_GETSIGINFO, c, 0, &si);
	CHECK(st == (0x7f | SIGSTOP << 8 | PTRACE_EVENT_STOP << 16) && r == 0 &&
		      si.si_code == (SIGSTOP | PTRACE_EVENT_STOP << 8),
	      "seized stopped child: PTRACE_EVENT_STOP|SIGSTOP", "status %#x code %#x", st, si.si_code);
	EXPECT_OK(ptl(PTRACE_LISTEN, c, 0, 0), "LISTEN");
	st = waitst(c, __WALL);
	CHECK(st == (0x7f | SIGTRAP << 8 | PTRACE_EVENT_STOP << 16),
	      "after SIGCONT: re-trap PTRACE_EVENT_STOP|SIGTRAP", "status %#x", st);
	ptl(PTRACE_SYSCALL, c, 0, 0);
	st = waitst(c, __WALL);
	CHECK(st == (SIGCONT << 8 | 0x7f), "then the SIGCONT delivery stop", "status %#x", st);
	ptl(PTRACE_CONT, c, 0, SIGCONT);
	st = waitst(c, __WALL);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5, "the tracee exits 5", "status %#x", st);
}

/* ---- fork, vfork, exec and exit events ---- */

static void test_events(void)
{
	pid_t c = fork();
	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		kill(getpid(), SIGSTOP);
		pid_t g = fork();
		if (g == 0) {
			execl(self_path, self_path, "exit7", (char *)NULL);
			_exit(92);
		}
		int gst = 0;
		waitpid(g, &gst, 0);
		pid_t v = vfork();
		if (v == 0)
			_exit(3);
		int vst = 0;
		waitpid(v, &vst, 0);
		_exit(WIFEXITED(gst) && WEXITSTATUS(gst) == 7 && WEXITSTATUS(vst) == 3 ? 0 : 1);
	}
	int st = waitst(c, 0);
	CHECK(st == 0x137f, "the child stopped itself", "status %#x", st);
	long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD;
	EXPECT_OK(ptl(PTRACE_SETOPTIONS, c, 0, opts), "SETOPTIONS fork/vfork/exec/exit");
	ptl(PTRACE_CONT, c, 0, 0);
	pid_t g = 0, v = 0;
	int seen_fork = 0, seen_gstop = 0, seen_exec = 0, seen_gexit_ev = 0, seen_gexit = 0,
	    seen_vfork = 0, seen_vdone = 0, seen_cexit_ev = 0, seen_cexit = 0, other = 0;
	for (int n = 0; n < 40 && !seen_cexit; n++) {
		int s = -1;
		pid_t w = waitpid(-1, &s, __WALL);
		if (w < 0)
			break;
		unsigned long msg = 0;
		int ev = (s >> 16) & 0xff;
		if (WIFSTOPPED(s) && ev)
			pt(PTRACE_GETEVENTMSG, w, 0, &msg);
		if (w == c && ev == PTRACE_EVENT_FORK) {
			seen_fork = 1;
			g = (pid_t)msg;
		} else if (w == c && ev == PTRACE_EVENT_VFORK) {
			seen_vfork = 1;
			v = (pid_t)msg;
		} else if (w == c && ev == PTRACE_EVENT_VFORK_DONE) {
			seen_vdone = v && (pid_t)msg == v;
		} else if (w == c && ev == PTRACE_EVENT_EXIT) {
			seen_cexit_ev = msg == 0;
		} else if (w == c && WIFEXITED(s)) {
			seen_cexit = 1 + WEXITSTATUS(s);
		} else if (w != c && WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP && !ev) {
			seen_gstop++; /* the new child's first stop (fork or vfork child) */
		} else if (w != c && ev == PTRACE_EVENT_EXEC) {
			seen_exec = (pid_t)msg == w;
		} else if (w != c && ev == PTRACE_EVENT_EXIT) {
			seen_gexit_ev = msg == (7 << 8) || msg == (3 << 8);
		} else if (w != c && WIFEXITED(s)) {
			seen_gexit += WEXITSTATUS(s) == 7 || WEXITSTATUS(s) == 3;
		} else {
			other = s;
		}
		ptl(PTRACE_CONT, w, 0, 0);
	}
	CHECK(seen_fork && g > 0, "PTRACE_EVENT_FORK with the child's pid", "seen %d pid %d", seen_fork, g);
	CHECK(seen_gstop == 2, "the fork and vfork children start with a SIGSTOP stop", "seen %d", seen_gstop);
	CHECK(seen_exec, "PTRACE_EVENT_EXEC, GETEVENTMSG its pid", "seen %d", seen_exec);
	CHECK(seen_gexit_ev, "PTRACE_EVENT_EXIT with the exit status", "seen %d", seen_gexit_ev);
	CHECK(seen_gexit == 2, "the traced grandchildren's exits reach the tracer", "seen %d", seen_gexit);
	CHECK(seen_vfork && v > 0 && seen_vdone, "PTRACE_EVENT_VFORK and VFORK_DONE", "vfork %d done %d",
	      seen_vfork, seen_vdone);
	CHECK(seen_cexit_ev && seen_cexit == 1, "the child's own EVENT_EXIT and exit 0 (its waits worked)",
	      "ev %d exit %d other %#x", seen_cexit_ev, seen_cexit - 1, other);
}

/* ---- bad input: reading requests with edge arguments never hurt the stopped tracee ---- */

static void test_bad_input(void)
{
	pid_t c = fork();

	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		kill(getpid(), SIGSTOP);
		_exit(magic == 0x1122334455667788L ? 6 : 1);
	}
	int st = waitst(c, 0);
	/* (not 31/32: PTRACE_SYSEMU resumes on arm64 Linux; not built here) */
	static const long reqs[] = { PTRACE_PEEKTEXT, PTRACE_PEEKDATA, PTRACE_PEEKUSR, 12, 14,
				     PTRACE_GETREGSET, PTRACE_GETSIGINFO, PTRACE_GETEVENTMSG,
				     PTRACE_GET_SYSCALL_INFO, 0x4300, -1 };
	/* data points at an iovec heading a big buffer: every answer fits, none aims elsewhere */
	static struct {
		struct iovec iov;
		long room[64];
	} out;
	static long buf[128];
	const long addrs[] = { 0, 8, -1, (long)0xffff000000001000ull, (long)&magic, (long)buf,
			       NT_PRSTATUS, NT_ARM_SYSTEM_CALL, 0x4711, 0x7fffffff };
	const long datas[] = { 0, 8, -1, (long)0xffff000000001000ull, (long)buf, (long)&out };
	const int na = sizeof(addrs) / sizeof(addrs[0]), nd = sizeof(datas) / sizeof(datas[0]);
	int calls = 0, odd = 0, odd_self = 0;
	long odd_req = 0, odd_err = 0;

	for (unsigned int i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
		for (int a = 0; a < na; a++)
			for (int d = 0; d < nd; d++) {
				out.iov.iov_base = buf;
				out.iov.iov_len = sizeof(buf);
				buf[0] = buf[1] = 0; /* as an iovec: EFAULT */
				errno = 0;
				long r = ptl(reqs[i], c, addrs[a], datas[d]);
				int e = errno;
				calls++;
				if (!(r >= 0 || e == EIO || e == EFAULT || e == EINVAL) && !odd++) {
					odd_req = reqs[i];
					odd_err = e;
				}
				errno = 0;
				r = ptl(reqs[i], a & 1 ? getpid() : 0, addrs[a], datas[d]);
				odd_self += !(r == -1 && errno == ESRCH);
			}
	CHECK(!odd, "reading requests with edge arguments: 0, EIO, EFAULT or EINVAL",
	      "%d of %d odd, first request %#lx errno %ld", odd, calls, odd_req, odd_err);
	CHECK(!odd_self, "the same on ourselves and on pid 0: ESRCH", "%d of %d not ESRCH",
	      odd_self, calls);
	struct user_pt_regs regs;
	long r = getregs(c, &regs);
	ptl(PTRACE_CONT, c, 0, 0);
	st = waitst(c, 0);
	CHECK(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 6,
	      "the tracee is still stopped and whole, and runs on", "r %ld status %#x", r, st);
}

/* ---- waitid: the siginfo of ptrace stops and of job control ---- */

static int wid(idtype_t t, id_t id, siginfo_t *si, int options)
{
	memset(si, 0xa5, sizeof(*si));
	int r;

	do
		r = waitid(t, id, si, options);
	while (r < 0 && errno == EINTR);
	return r;
}

static void test_waitid(void)
{
	pid_t c = fork();

	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		kill(getpid(), SIGSTOP);
		syscall(SYS_getppid);
		_exit(7);
	}
	siginfo_t si;
	int r = wid(P_PID, c, &si, WEXITED | WNOWAIT);
	CHECK(r == 0 && si.si_signo == SIGCHLD && si.si_code == CLD_TRAPPED && si.si_pid == c &&
		      si.si_status == SIGSTOP && si.si_uid == 0,
	      "waitid WEXITED|WNOWAIT: the signal stop as CLD_TRAPPED, status SIGSTOP",
	      "r %d signo %d code %d pid %d status %#x", r, si.si_signo, si.si_code, si.si_pid,
	      si.si_status);
	int st = waitst(c, 0);
	CHECK(st == 0x137f, "WNOWAIT left the stop for waitpid", "status %#x", st);
	ptl(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD);
	ptl(PTRACE_SYSCALL, c, 0, 0);
	r = wid(P_ALL, 0, &si, WEXITED);
	CHECK(r == 0 && si.si_code == CLD_TRAPPED && si.si_pid == c && si.si_status == (SIGTRAP | 0x80),
	      "waitid P_ALL: a syscall stop, CLD_TRAPPED status 0x85", "code %d pid %d status %#x",
	      si.si_code, si.si_pid, si.si_status);
	r = wid(P_PID, c, &si, WEXITED | WNOHANG);
	CHECK(r == 0 && si.si_pid == 0 && si.si_signo == 0 && si.si_status == 0,
	      "waitid WNOHANG with nothing to report: 0, si_pid/si_signo/si_status 0",
	      "r %d pid %d signo %d", r, si.si_pid, si.si_signo);
	ptl(PTRACE_CONT, c, 0, 0);
	r = wid(P_PID, c, &si, WEXITED);
	CHECK(r == 0 && si.si_code == CLD_EXITED && si.si_status == 7 && si.si_pid == c,
	      "waitid: CLD_EXITED, status 7", "code %d status %d", si.si_code, si.si_status);
	EXPECT_ERRNO(waitid(P_ALL, 0, &si, 0), EINVAL, "waitid without WEXITED/WSTOPPED/WCONTINUED: EINVAL");
	EXPECT_ERRNO(waitid(P_PID, 0, &si, WEXITED), EINVAL, "waitid P_PID 0: EINVAL");
	EXPECT_ERRNO(waitid(P_ALL, 0, &si, WEXITED), ECHILD, "waitid with no children: ECHILD");

	/* job control of an untraced child */
	c = spawn_pauser();
	kill(c, SIGSTOP);
	r = wid(P_PID, c, &si, WSTOPPED);
	CHECK(r == 0 && si.si_code == CLD_STOPPED && si.si_status == SIGSTOP,
	      "waitid WSTOPPED: CLD_STOPPED, status SIGSTOP", "code %d status %d", si.si_code,
	      si.si_status);
	kill(c, SIGCONT);
	r = wid(P_PID, c, &si, WCONTINUED);
	CHECK(r == 0 && si.si_code == CLD_CONTINUED && si.si_status == SIGCONT,
	      "waitid WCONTINUED: CLD_CONTINUED, status SIGCONT", "code %d status %d", si.si_code,
	      si.si_status);
	kill(c, SIGKILL);
	r = wid(P_PGID, 0, &si, WEXITED);
	CHECK(r == 0 && si.si_code == CLD_KILLED && si.si_status == SIGKILL && si.si_pid == c,
	      "waitid P_PGID 0: CLD_KILLED, status SIGKILL", "code %d status %d", si.si_code,
	      si.si_status);
}

/* ---- threads ---- */

static void *thread_fn(void *arg)
{
	(void)arg;
	return NULL;
}

static void test_threads(void)
{
	pid_t c = fork();
	if (c == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		kill(getpid(), SIGSTOP);
		pthread_t th;
		if (pthread_create(&th, NULL, thread_fn, NULL) || pthread_join(th, NULL))
			_exit(91);
		_exit(0);
	}
	int st = waitst(c, 0);
	ptl(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACECLONE);
	ptl(PTRACE_CONT, c, 0, 0);
	st = waitst(c, 0);
	unsigned long tid = 0;
	pt(PTRACE_GETEVENTMSG, c, 0, &tid);
	CHECK(st == (0x7f | SIGTRAP << 8 | PTRACE_EVENT_CLONE << 16) && tid > 0 && (pid_t)tid != c,
	      "pthread_create: PTRACE_EVENT_CLONE with the new tid", "status %#x tid %lu", st, tid);
	st = -1;
	pid_t w = waitpid(-1, &st, 0);
	CHECK(w == (pid_t)tid && st == 0x137f,
	      "the new thread's first stop (SIGSTOP): a tracee is waited for without __WALL",
	      "got %d status %#x", w, st);
	ptl(PTRACE_CONT, (pid_t)tid, 0, 0);
	ptl(PTRACE_CONT, c, 0, 0);
	st = waitst((pid_t)tid, __WALL);
	CHECK(st == 0, "the thread's exit reaches the tracer (__WALL): status 0", "status %#x", st);
	st = waitst(c, __WALL);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the traced process exits 0", "status %#x", st);
}

/* ---- the tracer exits ---- */

static void test_tracer_exit(void)
{
	volatile long *ctr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctr == MAP_FAILED)
		return;
	pid_t c = fork();
	if (c == 0) {
		for (;;) {
			ctr[0]++;
			sleep_ms(1);
		}
	}
	pid_t t = fork();
	if (t == 0) {
		if (ptl(PTRACE_ATTACH, c, 0, 0))
			_exit(1);
		if (waitst(c, 0) != 0x137f)
			_exit(2);
		_exit(0); /* stopped and still traced */
	}
	int st = waitst(t, 0);
	long before = ctr[0];
	sleep_ms(100);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && ctr[0] > before,
	      "the tracer's exit detaches: the stopped tracee runs again", "status %#x ctr %ld -> %ld",
	      st, before, ctr[0]);
	t = fork();
	if (t == 0) {
		if (ptl(PTRACE_SEIZE, c, 0, PTRACE_O_EXITKILL))
			_exit(1);
		_exit(0);
	}
	waitst(t, 0);
	st = waitst(c, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "PTRACE_O_EXITKILL: the tracer's exit kills",
	      "status %#x", st);
	/* pid 1: init on Linux (root may trace it); a kernel thread on perfkernel (its init is
	 * the first user process, not pid 1): EPERM */
	int want = access("/proc/1/stat", F_OK) == 0 ? 0 : EPERM;
	t = fork();
	if (t == 0)
		_exit(ptl(PTRACE_SEIZE, 1, 0, 0) == 0 ? 0 : 10 + errno);
	st = waitst(t, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (want ? 10 + want : 0),
	      want ? "SEIZE of pid 1, a kernel thread here: EPERM"
		   : "SEIZE of pid 1 (init, as root), detached at exit",
	      "status %#x", st);
	munmap((void *)ctr, 4096);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exit7"))
		return 7;
	self_path = strchr(argv[0], '/') ? argv[0] : "/bin/t_ptrace";
	tap_init("t_ptrace", 60);
	test_traceme_exec();
	test_syscall_stops();
	test_attach();
	test_signal_stops();
	test_group_stop();
	test_events();
	test_threads();
	test_waitid();
	test_bad_input();
	test_tracer_exit();
	return tap_done();
}
