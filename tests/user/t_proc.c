/* t_proc: process lifecycle and process-information syscalls.
 * fork/execve (re-exec of itself as the child) with argv/envp/auxv checks,
 * exit/exit_group statuses via wait4, ids, uname, prctl comm, prlimit64,
 * getrandom, clocks, affinity, sysinfo, sched_yield, getuid family,
 * set_tid_address.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* The re-exec'd child: check what execve handed over, exit 0 if all good, else
 * the number of the first failing check (the parent reports it). */
static int child_main(int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[2], "arg two") != 0 || strcmp(argv[3], "") != 0)
		return 10;
	const char *e = getenv("T_PROC_ENV");
	if (!e || strcmp(e, "hello=world") != 0)
		return 11;
	if (getenv("PATH") != NULL) /* envp given explicitly without PATH */
		return 12;
	if (getauxval(AT_PAGESZ) != (unsigned long)sysconf(_SC_PAGESIZE))
		return 13;
	const char *fn = (const char *)getauxval(AT_EXECFN);
	if (!fn || strcmp(fn, "/proc/self/exe") == 0 || strstr(fn, "t_proc") == NULL)
		return 14;
	return 0;
}

static void check_auxv(const char *argv0)
{
	unsigned long pg = getauxval(AT_PAGESZ);
	CHECK(pg == 4096 || pg == 16384 || pg == 65536, "auxv AT_PAGESZ", "got %lu", pg);
	CHECK(pg == (unsigned long)sysconf(_SC_PAGESIZE), "auxv AT_PAGESZ == sysconf", "%lu vs %ld",
	      pg, sysconf(_SC_PAGESIZE));
	unsigned long hw = getauxval(AT_HWCAP);
	CHECK(hw != 0, "auxv AT_HWCAP nonzero", "0");
	CHECK(hw & (1UL << 1), "auxv AT_HWCAP has ASIMD (bit 1)", "hwcap %#lx", hw);
	const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
	if (CHECK(rnd != NULL, "auxv AT_RANDOM present", "NULL")) {
		unsigned char copy[16];
		memcpy(copy, rnd, 16); /* readable: would fault otherwise */
		int nz = 0;
		for (int i = 0; i < 16; i++)
			nz |= copy[i];
		CHECK(nz, "auxv AT_RANDOM 16 readable bytes, not all zero", "all zero");
	}
	const char *fn = (const char *)getauxval(AT_EXECFN);
	struct stat st;
	CHECK(fn && strstr(fn, "t_proc") && stat(fn, &st) == 0 && S_ISREG(st.st_mode),
	      "auxv AT_EXECFN names this executable", "execfn %s argv0 %s", fn ? fn : "(null)", argv0);

	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long phnum = getauxval(AT_PHNUM);
	unsigned long phent = getauxval(AT_PHENT);
	CHECK(phent == sizeof(ElfW(Phdr)), "auxv AT_PHENT == sizeof(Elf64_Phdr)", "got %lu", phent);
	int ok = ph != NULL && phnum > 0 && phnum < 64;
	int found_text = 0;
	uintptr_t bias = 0; /* static non-PIE: 0; static-pie: from PT_PHDR */
	if (ok) {
		uintptr_t me = (uintptr_t)&check_auxv;
		for (unsigned long i = 0; i < phnum; i++)
			if (ph[i].p_type == PT_PHDR)
				bias = (uintptr_t)ph - ph[i].p_vaddr;
		for (unsigned long i = 0; i < phnum; i++)
			if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && me >= bias + ph[i].p_vaddr &&
			    me < bias + ph[i].p_vaddr + ph[i].p_memsz)
				found_text = 1;
	}
	CHECK(ok && found_text, "auxv AT_PHDR/AT_PHNUM describe the running binary",
	      "phdr %p phnum %lu text-found %d", (void *)ph, phnum, found_text);
	/* The ELF header sits at the start of the first PT_LOAD (offset 0). */
	const ElfW(Ehdr) *eh = NULL;
	for (unsigned long i = 0; ph && i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
			eh = (const ElfW(Ehdr) *)(bias + ph[i].p_vaddr);
			break;
		}
	CHECK(eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_phnum == phnum &&
		      (uintptr_t)eh + eh->e_phoff == (uintptr_t)ph && eh->e_machine == EM_AARCH64,
	      "auxv AT_PHDR matches the mapped ELF header", "ehdr %p", (void *)eh);
	unsigned long entry = getauxval(AT_ENTRY);
	CHECK(eh && entry == bias + eh->e_entry, "auxv AT_ENTRY == e_entry", "%#lx vs %#lx", entry,
	      eh ? (unsigned long)eh->e_entry : 0UL);
	errno = 0;
	unsigned long sec = getauxval(AT_SECURE);
	CHECK(sec == 0 && errno == 0, "auxv AT_SECURE present and 0", "got %lu errno %d", sec, errno);
	CHECK(getauxval(AT_UID) == getuid(), "auxv AT_UID == getuid", "%lu", getauxval(AT_UID));
	CHECK(getauxval(AT_EUID) == geteuid(), "auxv AT_EUID == geteuid", "%lu", getauxval(AT_EUID));
	CHECK(getauxval(AT_GID) == getgid(), "auxv AT_GID == getgid", "%lu", getauxval(AT_GID));
	CHECK(getauxval(AT_EGID) == getegid(), "auxv AT_EGID == getegid", "%lu", getauxval(AT_EGID));
	long clk = getauxval(AT_CLKTCK);
	CHECK(clk == 100 || clk == 250 || clk == 300 || clk == 1000, "auxv AT_CLKTCK sane", "%ld", clk);
}

static int wait_status(pid_t pid, int *st)
{
	struct rusage ru;
	pid_t r = wait4(pid, st, 0, &ru);
	return r == pid;
}

static void check_fork_exec(const char *self)
{
	int st = 0;
	pid_t parent = getpid();
	int pfd[2];
	if (pipe(pfd) != 0) {
		tap_fail("fork ppid", "pipe errno %d", errno);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		pid_t pp = getppid();
		pid_t me = getpid();
		close(pfd[0]);
		if (write(pfd[1], &me, sizeof(me)) != sizeof(me))
			_exit(99);
		_exit(pp == parent ? 0 : 1);
	}
	close(pfd[1]);
	pid_t seen = 0;
	if (read(pfd[0], &seen, sizeof(seen)) != sizeof(seen))
		seen = -1;
	close(pfd[0]);
	CHECK(pid > 0 && wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "fork: child sees getppid == parent pid", "pid %d status %#x", pid, st);
	CHECK(seen == pid, "fork: child getpid == fork return", "child says %d, fork said %d", seen, pid);

	/* exit statuses */
	pid = fork();
	if (pid == 0)
		_exit(42);
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 42, "exit(42) -> WEXITSTATUS 42",
	      "status %#x", st);
	pid = fork();
	if (pid == 0)
		syscall(SYS_exit_group, 300); /* only low 8 bits survive */
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == (300 & 0xff),
	      "exit_group(300) -> WEXITSTATUS 44", "status %#x", st);
	pid = fork();
	if (pid == 0)
		syscall(SYS_exit, 7);
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 7, "exit(7) of single thread",
	      "status %#x", st);
	pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, SIG_DFL);
		kill(getpid(), SIGUSR1);
		_exit(0);
	}
	CHECK(wait_status(pid, &st) && WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1 && !WIFEXITED(st),
	      "kill self SIGUSR1 -> WIFSIGNALED SIGUSR1", "status %#x", st);
	pid = fork();
	if (pid == 0) {
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	CHECK(wait_status(pid, &st) && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "abort -> WTERMSIG SIGABRT",
	      "status %#x", st);
	/* wait4 with no children -> ECHILD; WNOHANG on running child -> 0 */
	EXPECT_ERRNO(wait4(-1, &st, 0, NULL), ECHILD, "wait4 with no children -> ECHILD");
	int gate[2];
	if (pipe(gate) == 0) {
		pid = fork();
		if (pid == 0) {
			char c;
			close(gate[1]);
			(void)!read(gate[0], &c, 1);
			_exit(3);
		}
		close(gate[0]);
		pid_t r = wait4(pid, &st, WNOHANG, NULL);
		CHECK(r == 0, "wait4 WNOHANG on running child -> 0", "got %d errno %d", r, errno);
		close(gate[1]);
		CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 3,
		      "wait4 after child released", "status %#x", st);
	}
	EXPECT_ERRNO(wait4(getpid(), &st, 0, NULL), ECHILD, "wait4 on non-child pid -> ECHILD");

	/* execve of ourselves with argv/envp */
	pid = fork();
	if (pid == 0) {
		char *av[] = {(char *)self, "child", "arg two", "", NULL};
		char *ev[] = {"T_PROC_ENV=hello=world", "X=1", NULL};
		execve(self, av, ev);
		_exit(127);
	}
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "execve self: child sees argv, envp, auxv", "status %#x (exit code = failing check)", st);
	pid = fork();
	if (pid == 0) {
		syscall(SYS_execve, self, NULL, NULL);
		_exit(127);
	}
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 33,
	      "execve with argv NULL, envp NULL: child gets argc 1, argv[0] \"\", empty env", "status %#x", st);
	{
		char *av[] = {(char *)self, "child", "arg two", "", NULL};
		char *ev[] = {"T_PROC_ENV=hello=world", NULL};
		posix_spawnattr_t at;
		posix_spawnattr_init(&at);
		pid_t sp = -1;
		int r = posix_spawn(&sp, self, NULL, &at, av, ev);
		CHECK(r == 0 && sp > 0 && wait_status(sp, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "posix_spawn (clone CLONE_VM|CLONE_VFORK) runs the child", "r %d status %#x", r, st);
		r = posix_spawn(&sp, "/nonexistent/x", NULL, &at, av, ev);
		CHECK(r == ENOENT, "posix_spawn missing file -> ENOENT reported to parent", "r %d", r);
		posix_spawnattr_destroy(&at);
	}
	pid = fork();
	if (pid == 0) {
		char *av[] = {"x", NULL};
		int r = execve("/nonexistent/t_proc", av, environ);
		_exit(r == -1 && errno == ENOENT ? 0 : 1);
	}
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "execve missing file -> ENOENT",
	      "status %#x", st);
	pid = fork();
	if (pid == 0) {
		char *av[] = {"x", NULL};
		int r = execve("/tmp", av, environ);
		_exit(r == -1 && errno == EACCES ? 0 : 1);
	}
	CHECK(wait_status(pid, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "execve directory -> EACCES",
	      "status %#x", st);
}

static void check_ids(void)
{
	pid_t p = getpid();
	CHECK(p > 0, "getpid > 0", "%d", p);
	CHECK(syscall(SYS_getpid) == p, "raw getpid == getpid", "mismatch");
	CHECK(gettid() == p, "gettid == getpid in main thread", "tid %d pid %d", gettid(), p);
	CHECK(getppid() > 0 && getppid() != p, "getppid sane", "%d", getppid());
	uid_t r, e, s;
	gid_t gr, ge, gs;
	CHECK(getresuid(&r, &e, &s) == 0 && r == getuid() && e == geteuid(), "getresuid consistent",
	      "%u %u %u", r, e, s);
	CHECK(getresgid(&gr, &ge, &gs) == 0 && gr == getgid() && ge == getegid(), "getresgid consistent",
	      "%u %u %u", gr, ge, gs);
	CHECK(geteuid() == 0, "running as root (euid 0)", "euid %u", geteuid());
	int tid_word = 0;
	long t = syscall(SYS_set_tid_address, &tid_word);
	CHECK(t == p, "set_tid_address returns the tid", "got %ld", t);
	/* under refvm's /init (pid 1, never setsid) both are 0, so only check they work */
	CHECK(getpgid(0) >= 0 && getpgid(0) == getpgid(p) && getsid(0) >= 0, "getpgid/getsid succeed",
	      "%d %d", getpgid(0), getsid(0));
}

static void check_uname(void)
{
	struct utsname u;
	if (!CHECK(uname(&u) == 0, "uname succeeds", "errno %d", errno))
		return;
	CHECK(strcmp(u.sysname, "Linux") == 0, "uname sysname Linux", "'%s'", u.sysname);
	int maj = -1, min = -1;
	CHECK(sscanf(u.release, "%d.%d", &maj, &min) == 2 && maj >= 2 && min >= 0, "uname release is N.N...",
	      "'%s'", u.release);
	CHECK(strcmp(u.machine, "aarch64") == 0, "uname machine aarch64", "'%s'", u.machine);
}

static void check_prctl(void)
{
	char name[32] = {0};
	CHECK(prctl(PR_SET_NAME, "tproc-name", 0, 0, 0) == 0, "prctl PR_SET_NAME", "errno %d", errno);
	CHECK(prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && strcmp(name, "tproc-name") == 0, "prctl PR_GET_NAME",
	      "'%s'", name);
	prctl(PR_SET_NAME, "0123456789abcdefXYZ", 0, 0, 0);
	memset(name, 'x', sizeof(name));
	prctl(PR_GET_NAME, name, 0, 0, 0);
	CHECK(strcmp(name, "0123456789abcde") == 0 && name[16] == 'x',
	      "prctl PR_SET_NAME truncates to 15 chars + NUL", "'%.20s'", name);
	prctl(PR_SET_NAME, "t_proc", 0, 0, 0);
	EXPECT_ERRNO(prctl(0x7fff1234, 0, 0, 0, 0), EINVAL, "prctl unknown option -> EINVAL");
}

static void check_rlimit(void)
{
	struct rlimit old, nw, got;
	if (!CHECK(prlimit(0, RLIMIT_NOFILE, NULL, &old) == 0, "prlimit64 get NOFILE", "errno %d", errno))
		return;
	CHECK(old.rlim_cur > 0 && old.rlim_cur <= old.rlim_max, "NOFILE cur <= max", "%lu %lu",
	      (unsigned long)old.rlim_cur, (unsigned long)old.rlim_max);
	nw = old;
	nw.rlim_cur = 64;
	CHECK(prlimit(0, RLIMIT_NOFILE, &nw, &got) == 0 && got.rlim_cur == old.rlim_cur,
	      "prlimit64 set returns old value", "errno %d", errno);
	struct rlimit now;
	getrlimit(RLIMIT_NOFILE, &now);
	CHECK(now.rlim_cur == 64, "prlimit64 set took effect (getrlimit)", "%lu", (unsigned long)now.rlim_cur);
	int fds[70], n = 0, e = 0;
	for (; n < 70; n++) {
		fds[n] = dup(0);
		if (fds[n] < 0) {
			e = errno;
			break;
		}
	}
	CHECK(n < 70 && e == EMFILE, "dup beyond RLIMIT_NOFILE -> EMFILE", "opened %d errno %d", n, e);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	prlimit(0, RLIMIT_NOFILE, &old, NULL);
	nw.rlim_cur = old.rlim_max + 1;
	nw.rlim_max = old.rlim_max;
	if (old.rlim_max != RLIM_INFINITY)
		EXPECT_ERRNO(prlimit(0, RLIMIT_NOFILE, &nw, NULL), EINVAL, "prlimit64 cur > max -> EINVAL");
	EXPECT_ERRNO(prlimit(0, 999, NULL, &got), EINVAL, "prlimit64 bad resource -> EINVAL");
	CHECK(prlimit(0, RLIMIT_STACK, NULL, &got) == 0 && got.rlim_cur >= 65536, "prlimit64 STACK", "%lu",
	      (unsigned long)got.rlim_cur);
	EXPECT_ERRNO(prlimit(999999, RLIMIT_NOFILE, NULL, &got), ESRCH, "prlimit64 no such pid -> ESRCH");
}

static void check_random(void)
{
	unsigned char a[64], b[64];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	ssize_t r1 = getrandom(a, sizeof(a), 0);
	ssize_t r2 = getrandom(b, sizeof(b), GRND_NONBLOCK);
	CHECK(r1 == 64, "getrandom 64 bytes", "got %zd errno %d", r1, errno);
	CHECK(r2 == 64 && memcmp(a, b, 64) != 0, "getrandom GRND_NONBLOCK differs", "got %zd", r2);
	CHECK(getrandom(a, 0, 0) == 0, "getrandom 0 bytes -> 0", "nonzero");
	EXPECT_ERRNO(getrandom(a, 8, 0x100), EINVAL, "getrandom unknown flag -> EINVAL");
}

static long long ts_ns(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void check_clock(void)
{
	struct timespec a, b, res;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(ts_ns(b) >= ts_ns(a), "CLOCK_MONOTONIC non-decreasing", "%lld then %lld", ts_ns(a), ts_ns(b));
	CHECK(a.tv_nsec >= 0 && a.tv_nsec < 1000000000, "tv_nsec normalised", "%ld", a.tv_nsec);
	struct timespec d = {0, 10 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(r == 0 && ts_ns(b) - ts_ns(a) >= 10000000LL, "nanosleep 10ms advances MONOTONIC >= 10ms",
	      "delta %lld ns", ts_ns(b) - ts_ns(a));
	struct timespec rt;
	CHECK(clock_gettime(CLOCK_REALTIME, &rt) == 0 && rt.tv_sec > 0, "CLOCK_REALTIME", "%ld",
	      (long)rt.tv_sec);
	CHECK(clock_gettime(CLOCK_BOOTTIME, &rt) == 0 && ts_ns(rt) >= ts_ns(a),
	      "CLOCK_BOOTTIME >= earlier MONOTONIC", "boot %lld mono %lld", ts_ns(rt), ts_ns(a));
	struct timespec c1, c2;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	for (volatile int i = 0; i < 2000000; i++)
		;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c2);
	CHECK(ts_ns(c2) > ts_ns(c1), "CLOCK_PROCESS_CPUTIME_ID advances while spinning", "%lld -> %lld",
	      ts_ns(c1), ts_ns(c2));
	CHECK(clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0 &&
		      res.tv_nsec <= 10000000,
	      "clock_getres MONOTONIC", "%ld.%09ld", (long)res.tv_sec, res.tv_nsec);
	EXPECT_ERRNO(syscall(SYS_clock_gettime, 12345, &a), EINVAL, "clock_gettime bad clock -> EINVAL");
	struct timespec bad = {0, 1000000000};
	EXPECT_ERRNO(syscall(SYS_nanosleep, &bad, NULL), EINVAL, "nanosleep tv_nsec 1e9 -> EINVAL");
	struct timespec z = {0, 0};
	CHECK(nanosleep(&z, NULL) == 0, "nanosleep 0", "errno %d", errno);
}

static void check_sched(void)
{
	cpu_set_t set, one, back;
	CPU_ZERO(&set);
	if (!CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity", "errno %d", errno))
		return;
	int n = CPU_COUNT(&set);
	CHECK(n >= 1, "affinity has >= 1 cpu", "%d", n);
	long raw = syscall(SYS_sched_getaffinity, 0, sizeof(set), &set);
	CHECK(raw > 0 && raw % 8 == 0 && raw <= (long)sizeof(set), "raw sched_getaffinity returns byte count",
	      "got %ld", raw);
	EXPECT_ERRNO(syscall(SYS_sched_getaffinity, 0, 3, &set), EINVAL,
		     "sched_getaffinity len not multiple of 8 -> EINVAL");
	int last = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "sched_setaffinity to one cpu", "errno %d", errno);
	sched_getaffinity(0, sizeof(back), &back);
	CHECK(CPU_COUNT(&back) == 1 && CPU_ISSET(last, &back), "affinity reads back one cpu", "count %d",
	      CPU_COUNT(&back));
	for (int i = 0; i < 200; i++)
		sched_yield();
	CHECK(sched_getcpu() == last, "runs on the pinned cpu (sched_getcpu)", "cpu %d want %d", sched_getcpu(),
	      last);
	CPU_ZERO(&one);
	CPU_SET(CPU_SETSIZE - 1, &one);
	EXPECT_ERRNO(sched_setaffinity(0, sizeof(one), &one), EINVAL, "sched_setaffinity to no online cpu -> EINVAL");
	CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "sched_setaffinity restore", "errno %d", errno);
	CHECK(sched_yield() == 0, "sched_yield returns 0", "errno %d", errno);
	EXPECT_ERRNO(sched_getaffinity(999999, sizeof(set), &set), ESRCH, "sched_getaffinity no such pid -> ESRCH");
}

static void check_sysinfo(void)
{
	struct sysinfo si;
	memset(&si, 0, sizeof(si));
	if (!CHECK(sysinfo(&si) == 0, "sysinfo", "errno %d", errno))
		return;
	CHECK(si.totalram > 0 && si.freeram <= si.totalram && si.mem_unit >= 1, "sysinfo memory sane",
	      "total %lu free %lu unit %u", si.totalram, si.freeram, si.mem_unit);
	CHECK(si.procs >= 1, "sysinfo procs >= 1", "%u", si.procs);
	struct timespec bt;
	clock_gettime(CLOCK_BOOTTIME, &bt);
	CHECK(si.uptime >= 0 && si.uptime <= bt.tv_sec + 1, "sysinfo uptime ~ CLOCK_BOOTTIME", "%ld vs %ld",
	      si.uptime, (long)bt.tv_sec);
}

/* /proc/self/exe opens the running program: the same file as the path it was run by */
static void check_proc_exe(const char *path)
{
	struct stat a, b;
	char magic[4] = { 0 };
	int fd = open("/proc/self/exe", O_RDONLY);

	if (!tap_ok(fd, errno, "open /proc/self/exe"))
		return;
	CHECK(read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0, "/proc/self/exe reads an ELF",
	      "%02x %02x %02x %02x", magic[0], magic[1], magic[2], magic[3]);
	CHECK(fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_size == b.st_size,
	      "/proc/self/exe is the file the program was run from", "ino %lu/%lu",
	      (unsigned long)a.st_ino, (unsigned long)b.st_ino);
	close(fd);
	EXPECT_ERRNO(open("/proc/self/exe", O_RDONLY | O_NOFOLLOW), ELOOP, "open /proc/self/exe O_NOFOLLOW -> ELOOP");
}

/* A thread that parks until told to go, for unshare with a second thread. */
static volatile int unshare_stop;

static int unshare_thread(void *arg)
{
	(void)arg;
	while (!unshare_stop)
		sched_yield();
	return 0;
}

/* clone(CLONE_FILES) without a thread: the child closes fd, after unshare(CLONE_FILES) or
 * not; does the parent's fd survive? */
static int files_child_closes(int fd, int do_unshare)
{
	pid_t p = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, NULL, NULL, 0);

	if (p == 0) {
		if (do_unshare && unshare(CLONE_FILES))
			_exit(2);
		close(fd);
		_exit(0);
	}
	int st = -1;

	waitpid(p, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && fcntl(fd, F_GETFD) >= 0;
}

static void check_unshare(void)
{
	CHECK(unshare(0) == 0, "unshare(0)", "errno %d", errno);
	CHECK(unshare(CLONE_FS) == 0 && unshare(CLONE_FILES) == 0 && unshare(CLONE_SYSVSEM) == 0,
	      "single-threaded: unshare(CLONE_FS), (CLONE_FILES), (CLONE_SYSVSEM)", "errno %d", errno);
	CHECK(unshare(CLONE_THREAD) == 0 && unshare(CLONE_SIGHAND) == 0 && unshare(CLONE_VM) == 0,
	      "single-threaded: unshare(CLONE_THREAD), (CLONE_SIGHAND), (CLONE_VM): nothing to unshare",
	      "errno %d", errno);
	EXPECT_ERRNO(unshare(CSIGNAL), EINVAL, "unshare of an exit-signal bit -> EINVAL");
	EXPECT_ERRNO(unshare(CLONE_SETTLS), EINVAL, "unshare(CLONE_SETTLS) -> EINVAL");
	int fd = open("/", O_RDONLY);

	CHECK(fd >= 0 && files_child_closes(fd, 0) == 0, "clone(CLONE_FILES): the child's close closes ours",
	      "fd %d", fd);
	fd = open("/", O_RDONLY);
	CHECK(fd >= 0 && files_child_closes(fd, 1) == 1,
	      "clone(CLONE_FILES), then unshare(CLONE_FILES) in the child: ours stays open", "fd %d", fd);
	close(fd);
	/* with a second thread: CLONE_THREAD (and what implies it) is EINVAL */
	static char stack[65536] __attribute__((aligned(16)));
	int tid = clone(unshare_thread, stack + sizeof(stack),
			CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, NULL);

	if (!CHECK(tid > 0, "a second thread", "errno %d", errno))
		return;
	EXPECT_ERRNO(unshare(CLONE_THREAD), EINVAL, "two threads: unshare(CLONE_THREAD) -> EINVAL");
	EXPECT_ERRNO(unshare(CLONE_VM), EINVAL, "two threads: unshare(CLONE_VM) -> EINVAL");
	unshare_stop = 1;
	usleep(20000); /* let it exit before the stack goes out of use */
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child_main(argc, argv);
	/* execve(path, NULL, NULL): since 5.18 Linux makes argv = {"", NULL} */
	if (argc == 1 && argv[0] && argv[0][0] == 0)
		return environ && environ[0] == NULL ? 33 : 34;
	tap_init("t_proc", 20);
	CHECK(argc == 1 && argv[0] && argv[argc] == NULL, "argv[argc] == NULL", "argc %d", argc);
	CHECK(environ != NULL, "environ present", "NULL");
	check_auxv(argv[0]);
	check_ids();
	check_fork_exec((const char *)getauxval(AT_EXECFN));
	check_uname();
	check_prctl();
	check_rlimit();
	check_random();
	check_clock();
	check_sched();
	check_sysinfo();
	check_proc_exe((const char *)getauxval(AT_EXECFN));
	check_unshare();
	return tap_done();
}
