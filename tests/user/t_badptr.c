/* t_badptr: syscalls given bad user pointers return -1/EFAULT and the program
 * survives. Three bad pointers each: (void *)8 (unmapped low page), a page we
 * munmapped, and a kernel address (0xffff000000000000 + 0x1000).
 * Raw syscall() everywhere so glibc (and the vDSO) never touches the pointer.
 * Cases where Linux does NOT fault are listed in comments and checked as such.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <linux/bpf.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

static void *bads[3];
static const char *bad_names[3] = {"(void*)8", "munmapped page", "kernel address"};

/* For each bad pointer B: expect EFAULT from expr. */
#define EFAULT_ALL(name, expr)                                                          \
	do {                                                                            \
		for (int bi_ = 0; bi_ < 3; bi_++) {                                     \
			void *B = bads[bi_];                                            \
			char what_[128];                                                \
			snprintf(what_, sizeof(what_), "%s with %s -> EFAULT", (name), bad_names[bi_]); \
			errno = 0;                                                      \
			long r_ = (long)(expr);                                         \
			tap_errno(r_, errno, EFAULT, what_);                            \
		}                                                                       \
	} while (0)

static char dir[64];

int main(void)
{
	tap_init("t_badptr", 20);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m + pg, pg);
	bads[0] = (void *)8;
	bads[1] = m + pg;
	bads[2] = (void *)0xffff000000001000UL;

	snprintf(dir, sizeof(dir), "/tmp/t_badptr.%d", getpid());
	mkdir(dir, 0755);
	char fpath[96];
	snprintf(fpath, sizeof(fpath), "%s/f", dir);
	int f = open(fpath, O_CREAT | O_RDWR | O_TRUNC, 0644);
	static char data[8192];
	memset(data, 'd', sizeof(data));
	write(f, data, sizeof(data));
	int zero = open("/dev/zero", O_RDONLY);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	int p[2];
	pipe(p);

	/* read / write and vectors */
	EFAULT_ALL("read regular file", syscall(SYS_pread64, f, B, 16, 0));
	EFAULT_ALL("read /dev/zero", syscall(SYS_read, zero, B, 16));
	write(p[1], "abc", 3);
	EFAULT_ALL("read pipe with data", syscall(SYS_read, p[0], B, 3));
	EFAULT_ALL("write pipe", syscall(SYS_write, p[1], B, 16));
	EFAULT_ALL("write regular file", syscall(SYS_pwrite64, f, B, 16, 0));
	EFAULT_ALL("readv iov array", syscall(SYS_readv, f, B, 1));
	EFAULT_ALL("writev iov array", syscall(SYS_writev, p[1], B, 1));
	{
		struct iovec iov = {0, 16};
		iov.iov_base = bads[0];
		errno = 0;
		EXPECT_ERRNO(syscall(SYS_preadv, f, &iov, 1, 0, 0), EFAULT, "preadv iov_base (void*)8 -> EFAULT");
		iov.iov_base = bads[2];
		EXPECT_ERRNO(syscall(SYS_writev, p[1], &iov, 1), EFAULT, "writev iov_base kernel address -> EFAULT");
	}
	/* a buffer whose second page is unmapped: Linux returns the short count */
	long r = syscall(SYS_pread64, f, m, 2 * pg, 0);
	CHECK(r == pg, "pread64 into half-valid buffer -> short count (one page)", "got %ld errno %d", r, errno);
	/* /dev/null write never touches the buffer: Linux returns the count */
	int nul = open("/dev/null", O_WRONLY);
	r = syscall(SYS_write, nul, bads[0], 16);
	CHECK(r == 16, "write /dev/null with bad buffer succeeds (buffer never read)", "got %ld errno %d", r, errno);
	close(nul);
	/* zero-length read/write with a bad pointer: no access, returns 0 */
	r = syscall(SYS_read, zero, bads[1], 0);
	CHECK(r == 0, "read len 0 with munmapped buffer -> 0", "got %ld errno %d", r, errno);

	/* paths */
	EFAULT_ALL("openat path", syscall(SYS_openat, AT_FDCWD, B, O_RDONLY));
	EFAULT_ALL("mkdirat path", syscall(SYS_mkdirat, AT_FDCWD, B, 0755));
	EFAULT_ALL("unlinkat path", syscall(SYS_unlinkat, AT_FDCWD, B, 0));
	EFAULT_ALL("chdir path", syscall(SYS_chdir, B));
	EFAULT_ALL("faccessat path", syscall(SYS_faccessat, AT_FDCWD, B, F_OK));
	EFAULT_ALL("execve path", syscall(SYS_execve, B, NULL, NULL));
	EFAULT_ALL("readlinkat path", syscall(SYS_readlinkat, AT_FDCWD, B, data, 16));
	symlinkat("target", dfd, "lnk");
	EFAULT_ALL("readlinkat buf", syscall(SYS_readlinkat, dfd, "lnk", B, 16));
	EFAULT_ALL("getcwd buf", syscall(SYS_getcwd, B, 256));

	/* stat family */
	EFAULT_ALL("fstat statbuf", syscall(SYS_fstat, f, B));
	EFAULT_ALL("newfstatat statbuf", syscall(SYS_newfstatat, AT_FDCWD, "/", B, 0));
	EFAULT_ALL("newfstatat path", syscall(SYS_newfstatat, AT_FDCWD, B, data, 0));
	EFAULT_ALL("statx buf", syscall(SYS_statx, AT_FDCWD, "/", 0, STATX_BASIC_STATS, B));
	EFAULT_ALL("statx path", syscall(SYS_statx, AT_FDCWD, B, 0, STATX_BASIC_STATS, data));
	EFAULT_ALL("getdents64 buf", syscall(SYS_getdents64, dfd, B, 4096));

	/* fd creation */
	EFAULT_ALL("pipe2 fds", syscall(SYS_pipe2, B, 0));

	/* process */
	for (int bi = 0; bi < 3; bi++) {
		pid_t c = fork();
		if (c == 0)
			_exit(3);
		char what[96];
		snprintf(what, sizeof(what), "wait4 status with %s -> EFAULT", bad_names[bi]);
		errno = 0;
		r = syscall(SYS_wait4, c, bads[bi], 0, NULL);
		tap_errno(r, errno, EFAULT, what);
		/* Linux has already reaped the child when the store faults */
		snprintf(what, sizeof(what), "wait4 after EFAULT (%s): child already reaped -> ECHILD", bad_names[bi]);
		int st;
		errno = 0;
		r = syscall(SYS_wait4, c, &st, 0, NULL);
		tap_errno(r, errno, ECHILD, what);
	}
	{
		pid_t c = fork();
		if (c == 0)
			_exit(3);
		int st;
		EXPECT_ERRNO(syscall(SYS_wait4, c, &st, 0, bads[1]), EFAULT, "wait4 rusage munmapped -> EFAULT");
	}
	EFAULT_ALL("uname", syscall(SYS_uname, B));
	EFAULT_ALL("sysinfo", syscall(SYS_sysinfo, B));
	EFAULT_ALL("getrandom", syscall(SYS_getrandom, B, 16, 0));
	EFAULT_ALL("prlimit64 new", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, B, NULL));
	EFAULT_ALL("prlimit64 old", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, B));
	EFAULT_ALL("getrlimit", syscall(SYS_getrlimit, RLIMIT_NOFILE, B));
	EFAULT_ALL("getresuid", syscall(SYS_getresuid, B, B, B));
	EFAULT_ALL("prctl PR_SET_NAME", syscall(SYS_prctl, PR_SET_NAME, B, 0, 0, 0));
	EFAULT_ALL("prctl PR_GET_NAME", syscall(SYS_prctl, PR_GET_NAME, B, 0, 0, 0));
	EFAULT_ALL("sched_getaffinity", syscall(SYS_sched_getaffinity, 0, 128, B));
	EFAULT_ALL("sched_setaffinity", syscall(SYS_sched_setaffinity, 0, 128, B));

	/* time */
	EFAULT_ALL("clock_gettime (raw syscall)", syscall(SYS_clock_gettime, CLOCK_MONOTONIC, B));
	EFAULT_ALL("clock_getres", syscall(SYS_clock_getres, CLOCK_MONOTONIC, B));
	EFAULT_ALL("gettimeofday (raw syscall)", syscall(SYS_gettimeofday, B, NULL));
	EFAULT_ALL("nanosleep req", syscall(SYS_nanosleep, B, NULL));
	EFAULT_ALL("clock_nanosleep req", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, B, NULL));

	/* signals */
	EFAULT_ALL("rt_sigaction act", syscall(SYS_rt_sigaction, SIGUSR1, B, NULL, 8));
	EFAULT_ALL("rt_sigaction oldact", syscall(SYS_rt_sigaction, SIGUSR1, NULL, B, 8));
	EFAULT_ALL("rt_sigprocmask set", syscall(SYS_rt_sigprocmask, SIG_BLOCK, B, NULL, 8));
	EFAULT_ALL("rt_sigprocmask oldset", syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, B, 8));
	EFAULT_ALL("rt_sigpending", syscall(SYS_rt_sigpending, B, 8));
	EFAULT_ALL("rt_sigtimedwait set", syscall(SYS_rt_sigtimedwait, B, NULL, NULL, 8));
	EFAULT_ALL("sigaltstack ss", syscall(SYS_sigaltstack, B, NULL));
	EFAULT_ALL("sigaltstack old_ss", syscall(SYS_sigaltstack, NULL, B));

	/* polling */
	EFAULT_ALL("ppoll fds", syscall(SYS_ppoll, B, 1, NULL, NULL, 8));
	{
		struct pollfd pf = {p[0], POLLIN, 0};
		EFAULT_ALL("ppoll timeout", syscall(SYS_ppoll, &pf, 1, B, NULL, 8));
	}
	{
		struct timespec z = {0, 0};
		EFAULT_ALL("pselect6 readfds", syscall(SYS_pselect6, p[0] + 1, B, NULL, NULL, &z, NULL));
		fd_set rs;
		FD_ZERO(&rs);
		FD_SET(p[0], &rs);
		EFAULT_ALL("pselect6 timeout", syscall(SYS_pselect6, p[0] + 1, &rs, NULL, NULL, B, NULL));
	}

	/* futex */
	EFAULT_ALL("futex WAIT uaddr", syscall(SYS_futex, B, FUTEX_WAIT, 0, NULL, NULL, 0));
	EFAULT_ALL("futex WAIT_PRIVATE uaddr", syscall(SYS_futex, B, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	{
		int w = 0;
		EFAULT_ALL("futex WAIT timeout", syscall(SYS_futex, &w, FUTEX_WAIT_PRIVATE, 0, B, NULL, 0));
		/* Linux: FUTEX_WAKE_PRIVATE never touches the word, so an unmapped (but
		 * user-range, aligned) address just wakes nobody: 0. */
		r = syscall(SYS_futex, bads[1], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		CHECK(r == 0, "futex WAKE_PRIVATE on munmapped word -> 0 (no access)", "got %ld errno %d", r, errno);
		EXPECT_ERRNO(syscall(SYS_futex, bads[1], FUTEX_WAKE, 1, NULL, NULL, 0), EFAULT,
			     "futex WAKE (shared) on munmapped word -> EFAULT");
	}

	/* perf_event_open attr and bpf attr */
	EFAULT_ALL("perf_event_open attr", syscall(SYS_perf_event_open, B, 0, -1, -1, 0));
	EFAULT_ALL("bpf MAP_CREATE attr", syscall(SYS_bpf, BPF_MAP_CREATE, B, 72));

	/* survived all of that, and fds still work */
	char c = 0;
	r = syscall(SYS_pread64, f, &c, 1, 0);
	CHECK(r == 1 && c == 'd', "process survived; fds intact", "r %ld", r);
	close(f), close(zero), close(p[0]), close(p[1]);
	unlinkat(dfd, "lnk", 0);
	close(dfd);
	unlink(fpath);
	rmdir(dir);
	return tap_done();
}
