/* t_signal: rt_sigaction/SA_SIGINFO, masks and pending delivery, kill/tgkill,
 * sigaltstack, SIGCHLD, default actions, synchronous faults in children,
 * EINTR without SA_RESTART (and restart with it).
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <ucontext.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t hits, h_signo, h_code, h_pid, h_uid, h_onalt, h_value;
static volatile sig_atomic_t order[8], norder;
static char *alt_lo, *alt_hi;

static void info_handler(int sig, siginfo_t *si, void *uc)
{
	hits++;
	h_signo = si->si_signo;
	h_code = si->si_code;
	h_pid = si->si_pid;
	h_uid = si->si_uid;
	h_value = si->si_value.sival_int;
	char here;
	h_onalt = alt_lo && &here >= alt_lo && &here < alt_hi;
	if (norder < 8)
		order[norder++] = sig;
}

static void plain_handler(int sig)
{
	hits++;
	if (norder < 8)
		order[norder++] = sig;
}

static int set_handler(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static void check_sigaction(void)
{
	CHECK(set_handler(SIGUSR1, info_handler, 0) == 0, "rt_sigaction SA_SIGINFO install", "errno %d", errno);
	struct sigaction old;
	sigaction(SIGUSR1, NULL, &old);
	CHECK(old.sa_sigaction == info_handler && (old.sa_flags & SA_SIGINFO), "rt_sigaction reads back handler",
	      "flags %#x", old.sa_flags);
	hits = 0;
	kill(getpid(), SIGUSR1);
	CHECK(hits == 1 && h_signo == SIGUSR1 && h_code == SI_USER && h_pid == getpid() && h_uid == (int)getuid(),
	      "kill self: delivered before kill returns, si_signo/si_code SI_USER/si_pid/si_uid",
	      "hits %d signo %d code %d pid %d", hits, h_signo, h_code, h_pid);
	hits = 0;
	CHECK(syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1) == 0 && hits == 1 && h_code == SI_TKILL,
	      "tgkill: delivered, si_code SI_TKILL", "hits %d code %d", hits, h_code);
	hits = 0;
	raise(SIGUSR1);
	CHECK(hits == 1 && h_code == SI_TKILL, "raise -> tgkill SI_TKILL", "code %d", h_code);
	hits = 0;
	sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 1234});
	CHECK(hits == 1 && h_code == SI_QUEUE && h_value == 1234, "sigqueue: SI_QUEUE with si_value", "code %d value %d",
	      h_code, h_value);
	EXPECT_ERRNO(sigaction(SIGKILL, &old, NULL), EINVAL, "rt_sigaction SIGKILL -> EINVAL");
	EXPECT_ERRNO(sigaction(SIGSTOP, &old, NULL), EINVAL, "rt_sigaction SIGSTOP -> EINVAL");
	EXPECT_ERRNO(sigaction(0, &old, NULL), EINVAL, "rt_sigaction signal 0 -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_rt_sigaction, 65, NULL, &old, 8), EINVAL, "rt_sigaction signal 65 -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4), EINVAL, "rt_sigaction sigsetsize 4 -> EINVAL");
	CHECK(sigaction(SIGKILL, NULL, &old) == 0, "rt_sigaction query SIGKILL ok", "errno %d", errno);
	EXPECT_ERRNO(kill(getpid(), 65), EINVAL, "kill signal 65 -> EINVAL");
	CHECK(kill(getpid(), 0) == 0, "kill sig 0 probes existence", "errno %d", errno);
	EXPECT_ERRNO(kill(999999, 0), ESRCH, "kill no such pid -> ESRCH");
	EXPECT_ERRNO(syscall(SYS_tgkill, getpid(), 999999, SIGUSR1), ESRCH, "tgkill no such tid -> ESRCH");
	EXPECT_ERRNO(syscall(SYS_tgkill, 0, gettid(), SIGUSR1), EINVAL, "tgkill tgid 0 -> EINVAL");

	/* SA_RESETHAND: one shot, then default */
	hits = 0;
	signal(SIGUSR2, SIG_DFL);
	set_handler(SIGUSR2, info_handler, SA_RESETHAND);
	raise(SIGUSR2);
	sigaction(SIGUSR2, NULL, &old);
	CHECK(hits == 1 && old.sa_handler == SIG_DFL, "SA_RESETHAND resets to SIG_DFL", "hits %d", hits);
	/* SIG_IGN discards */
	signal(SIGUSR2, SIG_IGN);
	hits = 0;
	raise(SIGUSR2);
	CHECK(hits == 0, "SIG_IGN: nothing happens", "hits %d", hits);
}

static void check_mask(void)
{
	sigset_t s, old, pend, cur;
	set_handler(SIGUSR1, info_handler, 0);
	signal(SIGUSR2, plain_handler);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	CHECK(sigprocmask(SIG_BLOCK, &s, &old) == 0, "rt_sigprocmask SIG_BLOCK", "errno %d", errno);
	hits = 0;
	norder = 0;
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1); /* standard signals do not queue */
	CHECK(hits == 0, "blocked signals not delivered", "hits %d", hits);
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGUSR1) && sigismember(&pend, SIGUSR2), "sigpending shows both", "mismatch");
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGUSR1) && !sigismember(&old, SIGUSR1), "mask read back", "mismatch");
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(hits == 2, "unblock delivers pending signals, standard ones coalesced", "hits %d", hits);
	/* Linux dequeues the lowest-numbered signal (SIGUSR1) first and builds its frame, then,
	 * still on the way out of the kernel, builds SIGUSR2's frame on top of it: so the
	 * SIGUSR2 handler body runs first, then returns into the SIGUSR1 handler. */
	CHECK(norder == 2 && order[0] == SIGUSR2 && order[1] == SIGUSR1,
	      "two pending on unblock: both frames built at once, SIGUSR2 handler runs first",
	      "order %d %d", order[0], order[1]);
	/* with SIGUSR2 in SIGUSR1's sa_mask, SIGUSR1 runs to completion first */
	struct sigaction sa1;
	memset(&sa1, 0, sizeof(sa1));
	sa1.sa_sigaction = info_handler;
	sa1.sa_flags = SA_SIGINFO;
	sigaddset(&sa1.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &sa1, NULL);
	sigprocmask(SIG_BLOCK, &s, &old);
	norder = 0;
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(norder == 2 && order[0] == SIGUSR1 && order[1] == SIGUSR2,
	      "sa_mask defers SIGUSR2 until SIGUSR1's handler returns", "order %d %d", order[0], order[1]);
	set_handler(SIGUSR1, info_handler, 0);
	/* SIGKILL/SIGSTOP cannot be blocked: silently dropped from the mask */
	sigset_t ks;
	sigemptyset(&ks);
	sigaddset(&ks, SIGKILL);
	sigaddset(&ks, SIGSTOP);
	sigprocmask(SIG_BLOCK, &ks, &old);
	sigprocmask(SIG_SETMASK, &old, &cur);
	CHECK(!sigismember(&cur, SIGKILL) && !sigismember(&cur, SIGSTOP), "SIGKILL/SIGSTOP never blocked", "mismatch");
	EXPECT_ERRNO(sigprocmask(99, &s, NULL), EINVAL, "rt_sigprocmask bad how -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, 16), EINVAL, "rt_sigprocmask sigsetsize 16 -> EINVAL");

	/* realtime signals queue, delivered in order */
	int rt = SIGRTMIN + 2;
	set_handler(rt, info_handler, 0);
	sigemptyset(&s);
	sigaddset(&s, rt);
	sigprocmask(SIG_BLOCK, &s, &old);
	hits = 0;
	for (int i = 0; i < 3; i++)
		sigqueue(getpid(), rt, (union sigval){.sival_int = i});
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(hits == 3 && h_value == 2, "realtime signals queue (3 delivered, last value 2)", "hits %d value %d", hits,
	      h_value);

	/* rt_sigtimedwait collects a blocked pending signal */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, &old);
	kill(getpid(), SIGUSR1);
	siginfo_t si;
	struct timespec to = {1, 0};
	int r = sigtimedwait(&s, &si, &to);
	CHECK(r == SIGUSR1 && si.si_pid == getpid(), "rt_sigtimedwait takes pending signal", "r %d", r);
	struct timespec short_to = {0, 20 * 1000 * 1000};
	EXPECT_ERRNO(sigtimedwait(&s, &si, &short_to), EAGAIN, "rt_sigtimedwait timeout -> EAGAIN");
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void check_altstack(void)
{
	static char alt[64 * 1024];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0}, os;
	CHECK(sigaltstack(&ss, &os) == 0 && os.ss_flags == SS_DISABLE, "sigaltstack install (was disabled)",
	      "errno %d flags %d", errno, os.ss_flags);
	alt_lo = alt;
	alt_hi = alt + sizeof(alt);
	set_handler(SIGUSR1, info_handler, SA_ONSTACK);
	h_onalt = 0;
	raise(SIGUSR1);
	CHECK(h_onalt == 1, "SA_ONSTACK handler runs on the alternate stack", "onalt %d", h_onalt);
	set_handler(SIGUSR1, info_handler, 0);
	h_onalt = 1;
	raise(SIGUSR1);
	CHECK(h_onalt == 0, "handler without SA_ONSTACK runs on the normal stack", "onalt %d", h_onalt);
	stack_t q;
	sigaltstack(NULL, &q);
	CHECK(q.ss_sp == alt && q.ss_size == sizeof(alt) && q.ss_flags == 0, "sigaltstack query", "flags %d", q.ss_flags);
	stack_t small = {.ss_sp = alt, .ss_size = 100, .ss_flags = 0};
	EXPECT_ERRNO(sigaltstack(&small, NULL), ENOMEM, "sigaltstack too small -> ENOMEM");
	stack_t badf = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0x77};
	EXPECT_ERRNO(sigaltstack(&badf, NULL), EINVAL, "sigaltstack bad flags -> EINVAL");
	stack_t dis = {.ss_flags = SS_DISABLE};
	sigaltstack(&dis, NULL);
	alt_lo = alt_hi = NULL;
}

static volatile sig_atomic_t chld_hits, chld_pid, chld_code, chld_status;
static void chld_handler(int sig, siginfo_t *si, void *uc)
{
	chld_hits++;
	chld_pid = si->si_pid;
	chld_code = si->si_code;
	chld_status = si->si_status;
}

static void check_children(void)
{
	set_handler(SIGCHLD, chld_handler, SA_RESTART);
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, &old);
	chld_hits = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(9);
	int st;
	/* wait for the signal: sigsuspend with SIGCHLD unblocked */
	sigset_t wait_mask = old;
	sigdelset(&wait_mask, SIGCHLD);
	while (!chld_hits)
		sigsuspend(&wait_mask);
	CHECK(chld_hits == 1 && chld_pid == pid && chld_code == CLD_EXITED && chld_status == 9,
	      "SIGCHLD on child exit: si_pid, CLD_EXITED, si_status", "pid %d code %d status %d", chld_pid, chld_code,
	      chld_status);
	waitpid(pid, &st, 0);
	chld_hits = 0;
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	kill(pid, SIGTERM);
	while (!chld_hits)
		sigsuspend(&wait_mask);
	CHECK(chld_code == CLD_KILLED && chld_status == SIGTERM, "SIGCHLD CLD_KILLED with si_status = signal",
	      "code %d status %d", chld_code, chld_status);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM && !WCOREDUMP(st), "SIGTERM default action kills: WTERMSIG",
	      "status %#x", st);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGCHLD, SIG_DFL);

	/* default actions */
	struct {
		int sig;
		int killed;
	} defs[] = {{SIGUSR2, 1}, {SIGHUP, 1}, {SIGALRM, 1}, {SIGINT, 1}, {SIGKILL, 1}, {SIGURG, 0}, {SIGWINCH, 0}};
	for (unsigned i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		pid = fork();
		if (pid == 0) {
			signal(defs[i].sig, SIG_DFL);
			raise(defs[i].sig);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		char what[64];
		snprintf(what, sizeof(what), "default action of %s: %s", sigabbrev_np(defs[i].sig),
			 defs[i].killed ? "terminate" : "ignore");
		CHECK(defs[i].killed ? (WIFSIGNALED(st) && WTERMSIG(st) == defs[i].sig) : (WIFEXITED(st) && WEXITSTATUS(st) == 0),
		      what, "status %#x", st);
	}
	/* SIGSTOP / SIGCONT observed via waitpid WUNTRACED / WCONTINUED */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	kill(pid, SIGSTOP);
	pid_t r = waitpid(pid, &st, WUNTRACED);
	CHECK(r == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "SIGSTOP: WIFSTOPPED", "status %#x", st);
	kill(pid, SIGCONT);
	r = waitpid(pid, &st, WCONTINUED);
	CHECK(r == pid && WIFCONTINUED(st), "SIGCONT: WIFCONTINUED", "status %#x", st);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "SIGKILL kills", "status %#x", st);
}

static void fault_child(int kind)
{
	switch (kind) {
	case 0: {
		volatile int *np = (int *)0;
		*np = 1; /* SIGSEGV */
		break;
	}
	case 1:
		__asm__ volatile(".inst 0x00000000"); /* permanently undefined: SIGILL */
		break;
	case 2:
		__asm__ volatile("brk #0x1234"); /* SIGTRAP */
		break;
	case 3: {
		/* misaligned exclusive load raises an alignment fault: SIGBUS */
		static char buf[16] __attribute__((aligned(16)));
		long v;
		__asm__ volatile("ldxr %0, [%1]" : "=r"(v) : "r"(buf + 1) : "memory");
		break;
	}
	case 4:
		abort();
		break;
	case 5: {
		volatile int *kp = (int *)0xffff000000001000UL;
		(void)*kp; /* kernel address: SIGSEGV */
		break;
	}
	}
	_exit(0);
}

static void check_faults(void)
{
	struct {
		int kind, sig;
		const char *name;
	} f[] = {{0, SIGSEGV, "null deref"},          {1, SIGILL, "udf (.inst 0)"}, {2, SIGTRAP, "brk #imm"},
		 {3, SIGBUS, "misaligned ldxr"},      {4, SIGABRT, "abort"},        {5, SIGSEGV, "kernel address read"}};
	for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		pid_t pid = fork();
		if (pid == 0) {
			signal(f[i].sig, SIG_DFL);
			fault_child(f[i].kind);
		}
		int st;
		waitpid(pid, &st, 0);
		char what[96];
		snprintf(what, sizeof(what), "%s kills only the child with %s", f[i].name, sigabbrev_np(f[i].sig));
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == f[i].sig, what, "status %#x", st);
	}
}

/* handler that records si_code/addr and reports them through the exit status */
static void fault_report(int sig, siginfo_t *si, void *uc)
{
	int ok = 1;
	switch (sig) {
	case SIGSEGV:
		ok = si->si_code == SEGV_MAPERR && ((uintptr_t)si->si_addr == 0 ||
						    (uintptr_t)si->si_addr == 0xffff000000001000UL);
		break;
	case SIGILL:
		ok = si->si_code == ILL_ILLOPC && si->si_addr != NULL;
		break;
	case SIGTRAP:
		ok = si->si_code == TRAP_BRKPT;
		break;
	case SIGBUS:
		ok = si->si_code == BUS_ADRALN;
		break;
	}
	_exit(ok ? 0 : 50 + si->si_code);
}

static void check_fault_codes(void)
{
	/* No SIGFPE-style fault exists on aarch64: sdiv by zero yields 0 and FP exceptions
	 * do not trap (FPCR trap enables are RAZ on QEMU and most cores). Record that the
	 * division neither traps nor kills. */
	long q = -1, num = 5, den = 0;
	__asm__ volatile("sdiv %0, %1, %2" : "=r"(q) : "r"(num), "r"(den));
	CHECK(q == 0, "aarch64 sdiv by zero gives 0, no SIGFPE", "q %ld", q);

	struct {
		int kind, sig;
		const char *name;
	} g[] = {{0, SIGSEGV, "null deref si_code SEGV_MAPERR, si_addr 0"},
		 {1, SIGILL, "udf si_code ILL_ILLOPC, si_addr = pc"},
		 {2, SIGTRAP, "brk si_code TRAP_BRKPT"},
		 {3, SIGBUS, "misaligned ldxr si_code BUS_ADRALN"},
		 {5, SIGSEGV, "kernel address si_code SEGV_MAPERR, si_addr exact"}};
	for (unsigned i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		pid_t pid = fork();
		if (pid == 0) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_sigaction = fault_report;
			sa.sa_flags = SA_SIGINFO;
			sigaction(g[i].sig, &sa, NULL);
			fault_child(g[i].kind);
		}
		int st;
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, g[i].name, "status %#x (exit 50+si_code on mismatch)", st);
	}
}

static void check_eintr(void)
{
	int p[2];
	pipe(p);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = plain_handler;
	sa.sa_flags = 0; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	hits = 0;
	struct itimerspec its = {{0, 0}, {0, 100 * 1000 * 1000}};
	timer_t tm;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGALRM;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) {
		tap_fail("timer_create", "errno %d", errno);
		return;
	}
	timer_settime(tm, 0, &its, NULL);
	char c;
	errno = 0;
	ssize_t n = read(p[0], &c, 1);
	int e = errno;
	CHECK(n == -1 && e == EINTR && hits == 1, "blocking read interrupted by handler without SA_RESTART -> EINTR",
	      "n %zd errno %d hits %d", n, e, hits);

	/* with SA_RESTART the read restarts and gets the data a child writes later */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	hits = 0;
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 300 * 1000 * 1000};
		nanosleep(&d, NULL);
		write(p[1], "r", 1);
		_exit(0);
	}
	timer_settime(tm, 0, &its, NULL);
	n = read(p[0], &c, 1);
	CHECK(n == 1 && c == 'r' && hits == 1, "SA_RESTART: read restarts after handler", "n %zd errno %d hits %d", n,
	      errno, hits);
	waitpid(pid, NULL, 0);

	/* nanosleep is never restarted: EINTR with remaining time */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	timer_settime(tm, 0, &its, NULL);
	struct timespec d = {2, 0}, rem = {0, 0};
	int r = nanosleep(&d, &rem);
	e = errno;
	CHECK(r == -1 && e == EINTR && rem.tv_sec >= 1 && rem.tv_sec <= 2, "nanosleep interrupted -> EINTR with remaining",
	      "r %d errno %d rem %ld.%09ld", r, e, (long)rem.tv_sec, rem.tv_nsec);
	timer_delete(tm);
	signal(SIGALRM, tap_alarm_handler);
	close(p[0]), close(p[1]);
}

/* ---- signal frame / ucontext ABI ---- */
static volatile sig_atomic_t ctx_ok, ctx_sp_aligned, ctx_blocked_self, ctx_depth, ctx_max_depth, ctx_calls;
static volatile uintptr_t ctx_fault_addr, ctx_si_addr;

static void skip_insn_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	ctx_ok = uc->uc_mcontext.pc == (uintptr_t)si->si_addr; /* SIGILL: si_addr = pc of the udf */
	uc->uc_mcontext.pc += 4; /* sigreturn resumes after the faulting instruction */
	uc->uc_mcontext.regs[0] = 0x1234; /* and restores modified registers */
}

static void segv_ctx_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	ctx_si_addr = (uintptr_t)si->si_addr;
	ctx_fault_addr = uc->uc_mcontext.fault_address;
	uc->uc_mcontext.pc += 4;
}

static void sp_handler(int sig)
{
	uintptr_t sp;
	__asm__ volatile("mov %0, sp" : "=r"(sp));
	ctx_sp_aligned = (sp & 15) == 0;
	sigset_t cur;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	ctx_blocked_self = sigismember(&cur, sig);
}

static void fp_clobber_handler(int sig)
{
	__asm__ volatile("movi v8.16b, #0x11\n\tmovi v9.16b, #0x22\n\tmovi v16.16b, #0x33\n\tmovi v31.16b, #0x44\n\t"
			 "fmov d0, xzr" ::: "v0", "v8", "v9", "v16", "v31");
}

static void nodefer_handler(int sig)
{
	ctx_depth++;
	ctx_calls++;
	if (ctx_depth > ctx_max_depth)
		ctx_max_depth = ctx_depth;
	if (ctx_calls < 3)
		raise(sig);
	ctx_depth--;
}

static void check_context(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = skip_insn_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, NULL);
	ctx_ok = 0;
	register long x0 __asm__("x0") = 5;
	__asm__ volatile(".inst 0x00000000" : "+r"(x0)::"memory");
	CHECK(ctx_ok && x0 == 0x1234, "sigreturn resumes at modified pc with modified x0 (udf skipped)", "ctx_ok %d x0 %#lx",
	      ctx_ok, (long)x0);
	signal(SIGILL, SIG_DFL);

	sa.sa_sigaction = segv_ctx_handler;
	sigaction(SIGSEGV, &sa, NULL);
	volatile int *bad = (int *)0x10;
	__asm__ volatile("ldr wzr, [%0]" ::"r"(bad) : "memory");
	CHECK(ctx_si_addr == 0x10 && ctx_fault_addr == 0x10, "SIGSEGV: si_addr and uc_mcontext.fault_address = 0x10",
	      "si_addr %#lx fault_address %#lx", (unsigned long)ctx_si_addr, (unsigned long)ctx_fault_addr);
	signal(SIGSEGV, SIG_DFL);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sp_handler;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	CHECK(ctx_sp_aligned, "handler sp is 16-byte aligned", "misaligned");
	CHECK(ctx_blocked_self, "signal blocked while its handler runs", "not blocked");
	sigset_t cur;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGUSR1), "mask restored after handler returns", "still blocked");

	/* FP/SIMD state survives a handler that clobbers it */
	sa.sa_handler = fp_clobber_handler;
	sigaction(SIGUSR2, &sa, NULL);
	uint64_t before[4], after[4];
	double d0 = 3.25, d0_after = 0;
	__asm__ volatile("movi v8.2d, #0xff00ff00ff00ff00\n\tmovi v9.2d, #0x00ff00ff00ff00ff\n\t"
			 "movi v16.2d, #0xffff0000ffff0000\n\tmovi v31.2d, #0x0000ffff0000ffff\n\t"
			 "fmov d0, %d[in]\n\t"
			 "mov x1, %[pid]\n\tmov x0, x1\n\tmov x1, %[sig]\n\tmov x8, #129\n\tsvc #0\n\t" /* kill(getpid, SIGUSR2) */
			 "fmov %d[out], d0\n\t"
			 "umov %[b0], v8.d[0]\n\tumov %[b1], v9.d[0]\n\tumov %[b2], v16.d[0]\n\tumov %[b3], v31.d[1]\n\t"
			 : [out] "=&w"(d0_after), [b0] "=&r"(after[0]), [b1] "=&r"(after[1]), [b2] "=&r"(after[2]),
			   [b3] "=&r"(after[3])
			 : [in] "w"(d0), [pid] "r"((long)getpid()), [sig] "r"((long)SIGUSR2)
			 : "x0", "x1", "x8", "v0", "v8", "v9", "v16", "v31", "memory");
	before[0] = 0xff00ff00ff00ff00ULL;
	before[1] = 0x00ff00ff00ff00ffULL;
	before[2] = 0xffff0000ffff0000ULL;
	before[3] = 0x0000ffff0000ffffULL;
	CHECK(memcmp(before, after, sizeof(before)) == 0 && d0_after == 3.25,
	      "FP/SIMD registers preserved across a clobbering handler", "v8 %#llx v31 %#llx d0 %g",
	      (unsigned long long)after[0], (unsigned long long)after[3], d0_after);

	/* SA_NODEFER: the handler can be re-entered */
	sa.sa_handler = nodefer_handler;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGUSR1, &sa, NULL);
	ctx_depth = ctx_max_depth = ctx_calls = 0;
	raise(SIGUSR1);
	CHECK(ctx_max_depth == 3 && ctx_calls == 3, "SA_NODEFER allows nesting to depth 3", "depth %d calls %d",
	      ctx_max_depth, ctx_calls);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	ctx_depth = ctx_max_depth = ctx_calls = 0;
	raise(SIGUSR1);
	CHECK(ctx_max_depth == 1 && ctx_calls == 3, "without SA_NODEFER a re-raise waits for return (depth 1, 3 calls)",
	      "depth %d calls %d", ctx_max_depth, ctx_calls);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

int main(void)
{
	tap_init("t_signal", 25);
	check_sigaction();
	check_mask();
	check_altstack();
	check_children();
	check_faults();
	check_fault_codes();
	check_context();
	check_eintr();
	return tap_done();
}
