/* t_mm: memory management: brk, anonymous demand paging (minor faults),
 * MAP_FIXED, munmap/mprotect faults caught with siglongjmp, shared and private
 * mappings across fork (copy-on-write), private file mappings, VMA splits, MADV_DONTNEED.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static sigjmp_buf jb;
static volatile sig_atomic_t got_sig, got_code;
static volatile void *got_addr;
static long pg;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	siglongjmp(jb, 1);
}

/* 1 if *p faulted on a write (or read if !wr), setting got_* */
static int faults(volatile char *p, int wr)
{
	got_sig = 0;
	got_addr = NULL;
	if (sigsetjmp(jb, 1) == 0) {
		if (wr)
			*p = 1;
		else
			(void)*p;
		return 0;
	}
	return 1;
}

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void check_brk(void)
{
	uintptr_t b0 = syscall(SYS_brk, 0);
	CHECK(b0 != 0, "brk(0) returns current break", "%#lx", (unsigned long)b0);
	uintptr_t b1 = syscall(SYS_brk, b0 + 10 * pg);
	CHECK(b1 == b0 + 10 * pg, "brk grows by 10 pages", "%#lx -> %#lx", (unsigned long)b0, (unsigned long)b1);
	volatile char *p = (char *)b0;
	int ok = 1;
	for (int i = 0; i < 10; i++) {
		if (p[i * pg] != 0)
			ok = 0;
		p[i * pg] = (char)i;
	}
	CHECK(ok && p[9 * pg] == 9, "new brk memory zeroed and writable", "mismatch");
	uintptr_t b2 = syscall(SYS_brk, b0 + 2 * pg);
	CHECK(b2 == b0 + 2 * pg, "brk shrinks", "%#lx", (unsigned long)b2);
	CHECK(faults(p + 5 * pg, 0) && got_sig == SIGSEGV, "access above shrunk brk -> SIGSEGV", "sig %d", got_sig);
	uintptr_t b3 = syscall(SYS_brk, b0 + 5 * pg);
	CHECK(b3 == b0 + 5 * pg && p[4 * pg] == 0, "regrown brk memory is zero again", "%#lx", (unsigned long)b3);
	uintptr_t huge = syscall(SYS_brk, b0 + (1UL << 46));
	CHECK(huge == b3, "impossible brk returns old break", "%#lx", (unsigned long)huge);
	syscall(SYS_brk, b0);
	void *m = malloc(300000);
	CHECK(m != NULL, "malloc works (mmap/brk)", "NULL");
	free(m);
}

static void check_anon(void)
{
	enum { N = 64 };
	char *p = mmap(NULL, N * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(p != MAP_FAILED, "mmap anon 64 pages", "errno %d", errno))
		return;
	CHECK((uintptr_t)p % pg == 0, "mmap result page aligned", "%p", (void *)p);
	long f0 = minflt();
	for (int i = 0; i < N; i++)
		p[i * pg] = 1;
	long f1 = minflt();
	CHECK(f1 - f0 >= N, "touching 64 new pages -> >= 64 minor faults", "delta %ld", f1 - f0);
	CHECK(f1 - f0 < N + 40, "... and not wildly more", "delta %ld", f1 - f0);
	long f2 = minflt();
	for (int i = 0; i < N; i++)
		p[i * pg] = 2;
	CHECK(minflt() - f2 < 8, "re-touching mapped pages -> ~no faults", "delta %ld", minflt() - f2);
	int z = 1;
	for (int i = 0; i < N; i++)
		z &= p[i * pg + 1] == 0;
	CHECK(z, "anon pages zero-filled", "mismatch");

	/* MAP_FIXED over the middle */
	char *q = mmap(p + 8 * pg, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == p + 8 * pg && q[0] == 0 && p[7 * pg] == 2 && p[12 * pg] == 2, "MAP_FIXED replaces range exactly",
	      "q %p", (void *)q);
	EXPECT_ERRNO((long)mmap(p + 1, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), EINVAL,
		     "MAP_FIXED unaligned -> EINVAL");
	char *nr = mmap(p + 8 * pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(nr == MAP_FAILED && errno == EEXIST, "MAP_FIXED_NOREPLACE on mapped -> EEXIST", "%p errno %d", (void *)nr,
	      errno);
	char *hint = mmap(p + 8 * pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hint != MAP_FAILED && hint != p + 8 * pg, "hint on mapped range picks another address", "%p",
	      (void *)hint);
	munmap(hint, pg);

	/* munmap then access */
	CHECK(munmap(p + 20 * pg, 2 * pg) == 0, "munmap 2 pages in the middle", "errno %d", errno);
	CHECK(faults(p + 20 * pg, 0) && got_sig == SIGSEGV && got_code == SEGV_MAPERR && got_addr == p + 20 * pg,
	      "read of unmapped page -> SIGSEGV SEGV_MAPERR si_addr", "sig %d code %d addr %p", got_sig, got_code,
	      (void *)got_addr);
	CHECK(!faults(p + 19 * pg, 1) && !faults(p + 22 * pg, 1), "neighbours still mapped", "sig %d", got_sig);
	CHECK(munmap(p + 20 * pg, 2 * pg) == 0, "munmap of already unmapped range ok", "errno %d", errno);
	EXPECT_ERRNO(munmap(p + 1, pg), EINVAL, "munmap unaligned -> EINVAL");
	EXPECT_ERRNO(munmap(p, 0), EINVAL, "munmap len 0 -> EINVAL");
	EXPECT_ERRNO((long)mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL, "mmap len 0 -> EINVAL");
	EXPECT_ERRNO((long)mmap(NULL, pg, PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL, "mmap neither SHARED nor PRIVATE -> EINVAL");
	EXPECT_ERRNO((long)mmap(NULL, pg, PROT_READ, MAP_PRIVATE, 555, 0), EBADF, "mmap file bad fd -> EBADF");

	/* mprotect */
	CHECK(mprotect(p, pg, PROT_READ) == 0, "mprotect PROT_READ", "errno %d", errno);
	CHECK(!faults(p, 0), "read of read-only page ok", "sig %d", got_sig);
	CHECK(faults(p, 1) && got_sig == SIGSEGV && got_code == SEGV_ACCERR && got_addr == p,
	      "write to read-only page -> SIGSEGV SEGV_ACCERR", "sig %d code %d", got_sig, got_code);
	CHECK(mprotect(p, pg, PROT_NONE) == 0 && faults(p, 0) && got_code == SEGV_ACCERR, "PROT_NONE read -> SEGV_ACCERR",
	      "code %d", got_code);
	CHECK(mprotect(p, pg, PROT_READ | PROT_WRITE) == 0 && !faults(p, 1) && p[0] == 1, "mprotect back to RW keeps data",
	      "p0 %d", p[0]);
	EXPECT_ERRNO(mprotect(p + 1, pg, PROT_READ), EINVAL, "mprotect unaligned -> EINVAL");
	EXPECT_ERRNO(mprotect(p + 20 * pg, pg, PROT_READ), ENOMEM, "mprotect unmapped -> ENOMEM");
	EXPECT_ERRNO(mprotect(p, pg, 0x100), EINVAL, "mprotect bad prot -> EINVAL");

	/* MADV_DONTNEED */
	memset(p + 30 * pg, 0x5a, 4 * pg);
	CHECK(madvise(p + 30 * pg, 4 * pg, MADV_DONTNEED) == 0, "madvise MADV_DONTNEED", "errno %d", errno);
	CHECK(p[30 * pg] == 0 && p[33 * pg + 100] == 0 && p[34 * pg] == 2, "MADV_DONTNEED zeroes private anon pages",
	      "%d %d %d", p[30 * pg], p[33 * pg + 100], p[34 * pg]);
	EXPECT_ERRNO(madvise(p + 1, pg, MADV_DONTNEED), EINVAL, "madvise unaligned -> EINVAL");
	EXPECT_ERRNO(madvise(p, pg, 12345), EINVAL, "madvise bad advice -> EINVAL");
	EXPECT_ERRNO(madvise(p + 20 * pg, pg, MADV_DONTNEED), ENOMEM, "madvise unmapped -> ENOMEM");
	munmap(p, N * pg);
	CHECK(faults(p + 5 * pg, 0) && got_sig == SIGSEGV, "whole mapping gone after munmap", "sig %d", got_sig);
}

static void check_fork_sharing(void)
{
	volatile int *sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	volatile int *pr = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static volatile int data_var = 11;
	sh[0] = 1;
	pr[0] = 1;
	int *heap = malloc(sizeof(int));
	*heap = 5;
	pid_t pid = fork();
	if (pid == 0) {
		sh[0] = 42;
		sh[100] = 43;
		pr[0] = 99;
		data_var = 99;
		*heap = 99;
		_exit(pr[0] == 99 && data_var == 99 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child sees its own writes", "status %#x", st);
	CHECK(sh[0] == 42 && sh[100] == 43, "MAP_SHARED anon: parent sees child's writes", "%d %d", sh[0], sh[100]);
	CHECK(pr[0] == 1, "MAP_PRIVATE anon: copy-on-write, parent unchanged", "%d", pr[0]);
	CHECK(data_var == 11 && *heap == 5, "COW of .data and heap after fork", "%d %d", data_var, *heap);
	/* parent writes after fork not visible to a child that already forked (COW both ways) */
	int p2[2];
	pipe(p2);
	pr[0] = 1;
	pid = fork();
	if (pid == 0) {
		char c;
		read(p2[0], &c, 1);
		_exit(pr[0] == 1 ? 0 : 1);
	}
	pr[0] = 77;
	write(p2[1], "x", 1);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "parent's write after fork invisible to child", "status %#x", st);
	close(p2[0]), close(p2[1]);
	/* shared mapping: MADV_DONTNEED does not discard data */
	madvise((void *)sh, pg, MADV_DONTNEED);
	CHECK(sh[0] == 42, "MADV_DONTNEED on shared anon keeps data", "%d", sh[0]);
	munmap((void *)sh, pg);
	munmap((void *)pr, pg);
	free(heap);

	/* pages of a shared anonymous mapping that nobody touched before the fork are shared too
	 * (one shmem object behind the mapping), both ways */
	volatile int *un = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int q1[2], q2[2];

	pipe(q1), pipe(q2);
	pid = fork();
	if (pid == 0) {
		char c;

		un[0] = 7;			    /* first touch, in the child */
		write(q1[1], "x", 1);
		read(q2[0], &c, 1);
		_exit(un[pg / sizeof(int)] == 8 ? 0 : 1); /* the parent's first touch */
	}
	char c;

	read(q1[0], &c, 1);
	CHECK(un[0] == 7, "shared anon untouched before fork: the child's write is seen", "%d", un[0]);
	un[pg / sizeof(int)] = 8;
	write(q2[1], "x", 1);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "shared anon untouched before fork: the parent's write is seen", "status %#x", st);
	close(q1[0]), close(q1[1]), close(q2[0]), close(q2[1]);
	munmap((void *)un, 4 * pg);
}

static void check_file_map(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/t_mm.%d", getpid());
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (!CHECK(fd >= 0, "create temp file", "errno %d", errno))
		return;
	static char buf[3 * 4096 + 100];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 'a' + i % 26;
	write(fd, buf, sizeof(buf));
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (CHECK(m != MAP_FAILED, "mmap file MAP_PRIVATE", "errno %d", errno)) {
		CHECK(memcmp(m, buf, sizeof(buf)) == 0, "private file mmap reads file content", "mismatch");
		size_t sz = sizeof(buf);
		size_t end = (sz + pg - 1) / pg * pg;
		int z = 1;
		for (size_t i = sz; i < end; i++)
			z &= m[i] == 0;
		CHECK(z, "tail of last page past EOF reads zero", "mismatch");
		if (end < (size_t)4 * pg)
			CHECK(faults(m + end, 0) && got_sig == SIGBUS, "access past EOF page -> SIGBUS", "sig %d", got_sig);
		m[0] = 'Z';
		char c;
		pread(fd, &c, 1, 0);
		CHECK(c == 'a', "write to MAP_PRIVATE file map not written to file", "'%c'", c);
		munmap(m, 4 * pg);
	}
	m = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, pg);
	CHECK(m != MAP_FAILED && m[0] == buf[pg], "mmap with file offset", "errno %d", errno);
	if (m != MAP_FAILED)
		munmap(m, pg);
	EXPECT_ERRNO((long)mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 100), EINVAL, "mmap unaligned offset -> EINVAL");
	int ro = open(path, O_RDONLY);
	EXPECT_ERRNO((long)mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES,
		     "MAP_SHARED PROT_WRITE on O_RDONLY fd -> EACCES");
	m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (CHECK(m != MAP_FAILED, "mmap file MAP_SHARED", "errno %d", errno)) {
		m[1] = 'Q';
		char c = 0;
		pread(fd, &c, 1, 1);
		CHECK(c == 'Q', "MAP_SHARED store visible through read()", "'%c'", c);
		munmap(m, pg);
	}
	close(ro);
	close(fd);
	unlink(path);
}

/* The VMAs of [m, m + n pages) in /proc/self/maps: start page, perms and file page of each */
static int maps_of(char *m, long n, long *start, char perms[][5], long *pgoff, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int k = 0;

	if (!f)
		return -1;
	while (k < max && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char pr[5];

		if (sscanf(line, "%lx-%lx %4s %lx", &s, &e, pr, &off) != 4)
			continue;
		if (s < (unsigned long)m || s >= (unsigned long)m + n * pg)
			continue;
		start[k] = (long)(s - (unsigned long)m) / pg;
		memcpy(perms[k], pr, 5);
		pgoff[k] = (long)off / pg;
		k++;
	}
	fclose(f);
	return k;
}

/* mprotect of a middle page splits a file VMA in three, munmap of a middle page punches a
 * hole: each piece keeps the file offset of its own start */
static void check_vma_splits(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/t_mm_split.%d", getpid());
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (!CHECK(fd >= 0, "create temp file", "errno %d", errno))
		return;
	for (int i = 0; i < 5; i++) {
		char page[4096];
		memset(page, 'A' + i, sizeof(page));
		for (long o = 0; o < pg; o += sizeof(page))
			write(fd, page, sizeof(page));
	}
	char *m = mmap(NULL, 5 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!CHECK(m != MAP_FAILED, "mmap 5 file pages", "errno %d", errno))
		goto out;
	CHECK(mprotect(m + pg, pg, PROT_READ) == 0, "mprotect the 2nd of 5 pages", "errno %d", errno);
	CHECK(munmap(m + 3 * pg, pg) == 0, "munmap the 4th of 5 pages", "errno %d", errno);
	long start[8], off[8];
	char perms[8][5];
	int k = maps_of(m, 5, start, perms, off, 8);
	CHECK(k == 4 && start[0] == 0 && !strcmp(perms[0], "rw-p") && off[0] == 0 && start[1] == 1 &&
		      !strcmp(perms[1], "r--p") && off[1] == 1 && start[2] == 2 && !strcmp(perms[2], "rw-p") &&
		      off[2] == 2 && start[3] == 4 && !strcmp(perms[3], "rw-p") && off[3] == 4,
	      "maps: 0 rw-p @0, 1 r--p @1, 2 rw-p @2, 4 rw-p @4",
	      "%d vmas: %ld %s @%ld, %ld %s @%ld, %ld %s @%ld, %ld %s @%ld", k, start[0], perms[0], off[0],
	      start[1], perms[1], off[1], start[2], perms[2], off[2], start[3], perms[3], off[3]);
	CHECK(m[0] == 'A' && m[pg] == 'B' && m[2 * pg] == 'C' && m[4 * pg] == 'E', "each piece reads its file page",
	      "%c %c %c %c", m[0], m[pg], m[2 * pg], m[4 * pg]);
	CHECK(faults(m + pg, 1) && got_code == SEGV_ACCERR, "write to the read-only piece -> SEGV_ACCERR",
	      "sig %d code %d", got_sig, got_code);
	CHECK(!faults(m + 2 * pg, 1) && !faults(m + 4 * pg, 1), "the writable pieces take writes", "sig %d", got_sig);
	CHECK(faults(m + 3 * pg, 0) && got_code == SEGV_MAPERR, "the hole -> SEGV_MAPERR", "code %d", got_code);
	munmap(m, 5 * pg);
out:
	close(fd);
	unlink(path);
}

/* mincore: touched anonymous pages are in memory, untouched ones not; file pages are (page
 * cache); EINVAL unaligned, ENOMEM for a hole. */
static void check_mincore(void)
{
	unsigned char vec[4];
	char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!CHECK(a != MAP_FAILED, "mincore: an anonymous mapping", "errno %d", errno))
		return;
	a[0] = 1;
	a[2 * pg] = 1;
	CHECK(mincore(a, 4 * pg, vec) == 0 && vec[0] == 1 && vec[1] == 0 && vec[2] == 1 && vec[3] == 0,
	      "mincore: touched pages 1, untouched 0", "%d %d %d %d", vec[0], vec[1], vec[2], vec[3]);
	EXPECT_ERRNO(mincore(a + 1, pg, vec), EINVAL, "mincore of an unaligned address -> EINVAL");
	munmap(a + pg, pg);
	EXPECT_ERRNO(mincore(a, 3 * pg, vec), ENOMEM, "mincore over an unmapped page -> ENOMEM");
	munmap(a, 4 * pg);
	int fd = open("/proc/self/exe", O_RDONLY);
	int fd2 = fd >= 0 ? fd : open("/bin/t_mm", O_RDONLY);
	char *f = fd2 >= 0 ? mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd2, 0) : MAP_FAILED;

	if (f != MAP_FAILED) {
		CHECK(mincore(f, pg, vec) == 0 && vec[0] == 1,
		      "mincore: a page of a file that was just run is in memory", "%d", vec[0]);
		munmap(f, pg);
	}
	if (fd2 >= 0)
		close(fd2);
}

/* get_mempolicy with no policy set: MPOL_DEFAULT and an empty node mask */
static void check_mempolicy(void)
{
	int mode = -1;
	unsigned long nodes[16];

	memset(nodes, 0xff, sizeof(nodes));
	long r = syscall(SYS_get_mempolicy, &mode, nodes, 1025, NULL, 0);
	int zero = 1;

	for (int i = 0; i < 16; i++)
		zero &= nodes[i] == 0;
	CHECK(r == 0 && mode == 0 && zero, "get_mempolicy: MPOL_DEFAULT, empty node mask",
	      "r %ld mode %d", r, mode);
	EXPECT_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 1 << 5), EINVAL,
		     "get_mempolicy with an unknown flag -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_get_mempolicy, &mode, NULL, 0, (void *)4096, 0), EINVAL,
		     "get_mempolicy with an address but no MPOL_F_ADDR -> EINVAL");
}

int main(void)
{
	tap_init("t_mm", 20);
	pg = sysconf(_SC_PAGESIZE);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	check_brk();
	check_anon();
	check_fork_sharing();
	check_file_map();
	check_vma_splits();
	check_mincore();
	check_mempolicy();
	return tap_done();
}
