/* t_files: file and directory syscalls, fd table operations, errno cases.
 * Works in a fresh directory under /tmp.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static char dir[64];

static void p(char *out, const char *name)
{
	snprintf(out, 128, "%s/%s", dir, name);
}

static void check_basic_io(void)
{
	char path[128];
	p(path, "a.txt");
	int fd = openat(AT_FDCWD, path, O_CREAT | O_EXCL | O_RDWR, 0644);
	if (!CHECK(fd >= 0, "openat O_CREAT|O_EXCL", "errno %d", errno))
		return;
	EXPECT_ERRNO(openat(AT_FDCWD, path, O_CREAT | O_EXCL | O_RDWR, 0644), EEXIST, "openat O_EXCL on existing -> EEXIST");
	CHECK(write(fd, "hello world\n", 12) == 12, "write 12 bytes", "errno %d", errno);
	off_t o = lseek(fd, 0, SEEK_CUR);
	CHECK(o == 12, "lseek SEEK_CUR after write", "%ld", (long)o);
	CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek SEEK_SET 0", "errno %d", errno);
	char buf[64] = {0};
	CHECK(read(fd, buf, sizeof(buf)) == 12 && memcmp(buf, "hello world\n", 12) == 0, "read back", "'%s'", buf);
	CHECK(read(fd, buf, sizeof(buf)) == 0, "read at EOF -> 0", "errno %d", errno);
	CHECK(lseek(fd, -6, SEEK_END) == 6, "lseek SEEK_END -6", "errno %d", errno);
	EXPECT_ERRNO(lseek(fd, -100, SEEK_SET), EINVAL, "lseek negative -> EINVAL");
	EXPECT_ERRNO(lseek(fd, 0, 42), EINVAL, "lseek bad whence -> EINVAL");
	/* a position past INT64_MAX wraps negative in Linux's f_pos + offset: EINVAL, not EOVERFLOW */
	lseek(fd, 5, SEEK_SET);
	EXPECT_ERRNO(lseek(fd, INT64_MAX, SEEK_CUR), EINVAL, "lseek SEEK_CUR past INT64_MAX -> EINVAL");
	EXPECT_ERRNO(lseek(fd, INT64_MAX, SEEK_END), EINVAL, "lseek SEEK_END past INT64_MAX -> EINVAL");
	CHECK(lseek(fd, 0, SEEK_CUR) == 5, "failed lseek leaves the offset", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	/* no holes in a file written from 0: data at every offset, the hole at the end */
	CHECK(lseek(fd, 3, SEEK_DATA) == 3, "lseek SEEK_DATA 3 -> 3", "errno %d", errno);
	CHECK(lseek(fd, 3, SEEK_HOLE) == 12, "lseek SEEK_HOLE 3 -> size", "errno %d", errno);
	EXPECT_ERRNO(lseek(fd, 12, SEEK_DATA), ENXIO, "lseek SEEK_DATA at size -> ENXIO");
	EXPECT_ERRNO(lseek(fd, -1, SEEK_HOLE), ENXIO, "lseek SEEK_HOLE negative -> ENXIO");

	struct iovec iov[3] = {{"AB", 2}, {"", 0}, {"CDE", 3}};
	CHECK(lseek(fd, 0, SEEK_END) == 12 && writev(fd, iov, 3) == 5, "writev 3 iovecs", "errno %d", errno);
	char x[4] = {0}, y[8] = {0};
	struct iovec riov[2] = {{x, 3}, {y, 8}};
	lseek(fd, 10, SEEK_SET);
	ssize_t n = readv(fd, riov, 2);
	CHECK(n == 7 && memcmp(x, "d\nA", 3) == 0 && memcmp(y, "BCDE", 4) == 0, "readv splits across iovecs",
	      "n %zd x '%.3s' y '%.4s'", n, x, y);
	CHECK(pwrite(fd, "XY", 2, 0) == 2 && lseek(fd, 0, SEEK_CUR) == 17, "pwrite64 leaves offset",
	      "off %ld", (long)lseek(fd, 0, SEEK_CUR));
	memset(buf, 0, sizeof(buf));
	CHECK(pread(fd, buf, 5, 0) == 5 && memcmp(buf, "XYllo", 5) == 0 && lseek(fd, 0, SEEK_CUR) == 17,
	      "pread64 reads at offset, leaves offset", "'%.5s'", buf);
	EXPECT_ERRNO(pread(fd, buf, 5, -1), EINVAL, "pread64 negative offset -> EINVAL");
	struct iovec bad = {buf, 1};
	EXPECT_ERRNO(syscall(SYS_readv, fd, &bad, -1), EINVAL, "readv negative iovcnt -> EINVAL");
	EXPECT_ERRNO(syscall(SYS_readv, fd, &bad, 1025), EINVAL, "readv iovcnt > IOV_MAX -> EINVAL");

	struct stat st;
	CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 17 && (st.st_mode & 0777) == (0644 & ~022 & 0777) ,
	      "fstat regular file size 17 mode 0644", "mode %o size %ld", st.st_mode, (long)st.st_size);
	CHECK(st.st_nlink == 1 && st.st_blksize > 0, "fstat nlink 1", "nlink %ld", (long)st.st_nlink);
	struct stat st2;
	CHECK(fstatat(AT_FDCWD, path, &st2, 0) == 0 && st2.st_ino == st.st_ino && st2.st_dev == st.st_dev,
	      "newfstatat same inode as fstat", "errno %d", errno);
	CHECK(fstatat(fd, "", &st2, AT_EMPTY_PATH) == 0 && st2.st_ino == st.st_ino, "newfstatat AT_EMPTY_PATH",
	      "errno %d", errno);
	struct statx sx;
	memset(&sx, 0, sizeof(sx));
	CHECK(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx) == 0 && sx.stx_size == 17 &&
		      sx.stx_ino == st.st_ino && (sx.stx_mask & STATX_SIZE) && S_ISREG(sx.stx_mode),
	      "statx basic stats", "errno %d size %llu mask %#x", errno, (unsigned long long)sx.stx_size, sx.stx_mask);
	EXPECT_ERRNO(statx(AT_FDCWD, path, 0x80000000, STATX_BASIC_STATS, &sx), EINVAL, "statx bad flags -> EINVAL");

	CHECK(ftruncate(fd, 4) == 0 && fstat(fd, &st) == 0 && st.st_size == 4, "ftruncate shrink", "size %ld",
	      (long)st.st_size);
	CHECK(ftruncate(fd, 10000) == 0 && fstat(fd, &st) == 0 && st.st_size == 10000, "ftruncate grow", "size %ld",
	      (long)st.st_size);
	memset(buf, 1, sizeof(buf));
	CHECK(pread(fd, buf, 8, 5000) == 8 && buf[0] == 0 && buf[7] == 0, "grown region reads zeros", "%d", buf[0]);
	EXPECT_ERRNO(ftruncate(fd, -1), EINVAL, "ftruncate negative -> EINVAL");
	CHECK(close(fd) == 0, "close", "errno %d", errno);
	EXPECT_ERRNO(close(fd), EBADF, "close twice -> EBADF");
	EXPECT_ERRNO(read(fd, buf, 1), EBADF, "read closed fd -> EBADF");
	EXPECT_ERRNO(write(-1, buf, 1), EBADF, "write fd -1 -> EBADF");
	EXPECT_ERRNO(fstat(9999, &st), EBADF, "fstat fd 9999 -> EBADF");

	fd = open(path, O_RDONLY);
	EXPECT_ERRNO(write(fd, "x", 1), EBADF, "write on O_RDONLY fd -> EBADF");
	EXPECT_ERRNO(ftruncate(fd, 0), EINVAL, "ftruncate O_RDONLY fd -> EINVAL");
	close(fd);
	fd = open(path, O_WRONLY | O_APPEND);
	EXPECT_ERRNO(read(fd, buf, 1), EBADF, "read on O_WRONLY fd -> EBADF");
	lseek(fd, 0, SEEK_SET);
	CHECK(write(fd, "Z", 1) == 1 && fstat(fd, &st) == 0 && st.st_size == 10001, "O_APPEND writes at end",
	      "size %ld", (long)st.st_size);
	close(fd);
	fd = open(path, O_RDWR | O_TRUNC);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0, "O_TRUNC empties", "size %ld", (long)st.st_size);
	close(fd);
	fd = open(path, O_RDWR);
	CHECK(fsync(fd) == 0 && fdatasync(fd) == 0, "fsync/fdatasync on a file", "errno %d", errno);
	CHECK(fchmod(fd, 0600) == 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0600, "fchmod 0600",
	      "mode %o", st.st_mode);
	CHECK(fchmodat(AT_FDCWD, path, 0644, 0) == 0 && stat(path, &st) == 0 && (st.st_mode & 07777) == 0644,
	      "fchmodat 0644", "mode %o", st.st_mode);
	close(fd);
	char upath[128];
	p(upath, "umask.txt");
	mode_t old = umask(077);
	fd = open(upath, O_CREAT | O_WRONLY, 0666);
	umask(old);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600, "umask 077 applied at create", "mode %o",
	      st.st_mode);
	close(fd);
	unlink(upath);
	CHECK(faccessat(AT_FDCWD, path, R_OK | W_OK, 0) == 0, "faccessat R_OK|W_OK", "errno %d", errno);
	CHECK(faccessat(AT_FDCWD, path, F_OK, 0) == 0, "faccessat F_OK", "errno %d", errno);
	EXPECT_ERRNO(faccessat(AT_FDCWD, path, X_OK, 0), EACCES, "faccessat X_OK on 0644 file -> EACCES");
	EXPECT_ERRNO(faccessat(AT_FDCWD, path, 0x40, 0), EINVAL, "faccessat bad mode -> EINVAL");
}

static void check_dirs(void)
{
	char d[128], f[128], q[128], link[128];
	p(d, "sub");
	CHECK(mkdirat(AT_FDCWD, d, 0755) == 0, "mkdirat", "errno %d", errno);
	EXPECT_ERRNO(mkdirat(AT_FDCWD, d, 0755), EEXIST, "mkdirat existing -> EEXIST");
	p(f, "sub/f1");
	int fd = open(f, O_CREAT | O_WRONLY, 0600);
	close(fd);
	p(f, "sub/f2");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	close(fd);
	int dfd = openat(AT_FDCWD, d, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0, "openat O_DIRECTORY on a dir", "errno %d", errno);
	EXPECT_ERRNO(openat(AT_FDCWD, f, O_RDONLY | O_DIRECTORY), ENOTDIR, "openat O_DIRECTORY on file -> ENOTDIR");
	EXPECT_ERRNO(openat(AT_FDCWD, d, O_WRONLY), EISDIR, "open dir for write -> EISDIR");
	char buf[64];
	EXPECT_ERRNO(read(dfd, buf, sizeof(buf)), EISDIR, "read on a dir fd -> EISDIR");
	/* relative openat from dirfd */
	int f1 = openat(dfd, "f1", O_RDONLY);
	CHECK(f1 >= 0, "openat relative to dirfd", "errno %d", errno);
	EXPECT_ERRNO(openat(f1, "x", O_RDONLY), ENOTDIR, "openat with a file as dirfd -> ENOTDIR");
	close(f1);
	EXPECT_ERRNO(openat(12345, "x", O_RDONLY), EBADF, "openat bad dirfd -> EBADF");

	char dbuf[4096];
	int seen = 0, dots = 0, types_ok = 1;
	long n;
	while ((n = syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(dbuf + off);
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				dots++, types_ok &= de->d_type == DT_DIR;
			else if (!strcmp(de->d_name, "f1") || !strcmp(de->d_name, "f2"))
				seen++, types_ok &= de->d_type == DT_REG;
			if (de->d_reclen == 0 || de->d_reclen % 8)
				types_ok = 0;
			off += de->d_reclen ? de->d_reclen : n;
		}
	}
	CHECK(n == 0 && seen == 2 && dots == 2 && types_ok, "getdents64 lists . .. f1 f2 with d_type",
	      "n %ld seen %d dots %d types_ok %d", n, seen, dots, types_ok);
	/* Linux: at EOF there is nothing to emit, so even a too-small buffer gives 0, not EINVAL */
	long z = syscall(SYS_getdents64, dfd, dbuf, 8);
	CHECK(z == 0, "getdents64 at EOF with tiny buffer -> 0", "got %ld errno %d", z, errno);
	lseek(dfd, 0, SEEK_SET);
	EXPECT_ERRNO(syscall(SYS_getdents64, dfd, dbuf, 8), EINVAL, "getdents64 tiny buffer after rewind -> EINVAL");
	fd = open(f, O_RDONLY);
	EXPECT_ERRNO(syscall(SYS_getdents64, fd, dbuf, sizeof(dbuf)), ENOTDIR, "getdents64 on a file -> ENOTDIR");
	close(fd);

	EXPECT_ERRNO(unlinkat(AT_FDCWD, d, AT_REMOVEDIR), ENOTEMPTY, "rmdir non-empty -> ENOTEMPTY");
	EXPECT_ERRNO(unlinkat(AT_FDCWD, d, 0), EISDIR, "unlink a dir -> EISDIR");
	EXPECT_ERRNO(unlinkat(AT_FDCWD, f, AT_REMOVEDIR), ENOTDIR, "rmdir a file -> ENOTDIR");
	p(q, "sub/f1/x");
	EXPECT_ERRNO(open(q, O_RDONLY), ENOTDIR, "path through a file -> ENOTDIR");
	p(q, "nosuch/x");
	EXPECT_ERRNO(open(q, O_RDONLY), ENOENT, "missing dir component -> ENOENT");
	EXPECT_ERRNO(open(q, O_CREAT | O_WRONLY, 0644), ENOENT, "O_CREAT in missing dir -> ENOENT");
	EXPECT_ERRNO(open("", O_RDONLY), ENOENT, "open empty path -> ENOENT");

	/* renameat2 */
	p(q, "sub/f3");
	CHECK(renameat2(AT_FDCWD, f, AT_FDCWD, q, 0) == 0 && access(f, F_OK) != 0 && access(q, F_OK) == 0,
	      "renameat2 moves", "errno %d", errno);
	p(f, "sub/f1");
	EXPECT_ERRNO(renameat2(AT_FDCWD, f, AT_FDCWD, q, RENAME_NOREPLACE), EEXIST, "renameat2 NOREPLACE onto existing -> EEXIST");
	CHECK(renameat2(dfd, "f1", dfd, "f3", 0) == 0 && faccessat(dfd, "f1", F_OK, 0) != 0,
	      "renameat2 replaces existing (dirfd relative)", "errno %d", errno);
	p(f, "sub/nope");
	EXPECT_ERRNO(renameat2(AT_FDCWD, f, AT_FDCWD, q, 0), ENOENT, "renameat2 missing source -> ENOENT");
	EXPECT_ERRNO(renameat2(AT_FDCWD, q, AT_FDCWD, q, 0x100), EINVAL, "renameat2 bad flags -> EINVAL");

	/* symlinks */
	p(link, "sub/lnk");
	CHECK(symlinkat("f3", dfd, "lnk") == 0, "symlinkat", "errno %d", errno);
	char tgt[64] = {0};
	ssize_t r = readlinkat(AT_FDCWD, link, tgt, sizeof(tgt));
	CHECK(r == 2 && memcmp(tgt, "f3", 2) == 0, "readlinkat returns target, no NUL", "r %zd '%s'", r, tgt);
	memset(tgt, 'x', sizeof(tgt));
	r = readlinkat(dfd, "lnk", tgt, 1);
	CHECK(r == 1 && tgt[0] == 'f' && tgt[1] == 'x', "readlinkat truncates to bufsize", "r %zd", r);
	EXPECT_ERRNO(readlinkat(dfd, "f3", tgt, sizeof(tgt)), EINVAL, "readlinkat on non-symlink -> EINVAL");
	struct stat st, lst;
	CHECK(stat(link, &st) == 0 && S_ISREG(st.st_mode) && lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode) &&
		      lst.st_size == 2,
	      "stat follows / lstat doesn't", "errno %d", errno);
	EXPECT_ERRNO(open(link, O_RDONLY | O_NOFOLLOW), ELOOP, "O_NOFOLLOW on symlink -> ELOOP");
	EXPECT_ERRNO(symlinkat("x", dfd, "lnk"), EEXIST, "symlinkat existing -> EEXIST");
	CHECK(unlinkat(dfd, "lnk", 0) == 0 && unlinkat(dfd, "f3", 0) == 0, "unlinkat files", "errno %d", errno);
	EXPECT_ERRNO(unlinkat(dfd, "f3", 0), ENOENT, "unlinkat missing -> ENOENT");
	close(dfd);
	CHECK(unlinkat(AT_FDCWD, d, AT_REMOVEDIR) == 0, "rmdir empty dir", "errno %d", errno);

	/* cwd */
	char cwd[256], old[256];
	CHECK(getcwd(old, sizeof(old)) != NULL, "getcwd", "errno %d", errno);
	CHECK(chdir(dir) == 0 && getcwd(cwd, sizeof(cwd)) && strcmp(cwd, dir) == 0, "chdir + getcwd",
	      "cwd '%s'", cwd);
	CHECK(access("a.txt", F_OK) == 0, "relative path after chdir", "errno %d", errno);
	EXPECT_ERRNO(syscall(SYS_getcwd, cwd, 2), ERANGE, "getcwd tiny buffer -> ERANGE");
	long gl = syscall(SYS_getcwd, cwd, sizeof(cwd));
	CHECK(gl == (long)strlen(dir) + 1, "raw getcwd returns length incl NUL", "%ld", gl);
	EXPECT_ERRNO(chdir("a.txt"), ENOTDIR, "chdir to a file -> ENOTDIR");
	EXPECT_ERRNO(chdir("nonexistent"), ENOENT, "chdir missing -> ENOENT");
	chdir(old);
}

static void check_fdops(const char *self)
{
	char path[128];
	p(path, "a.txt");
	int fd = open(path, O_RDWR);
	int d = dup(fd);
	CHECK(d > fd, "dup returns new lowest fd", "fd %d dup %d", fd, d);
	write(fd, "12345", 5);
	CHECK(lseek(d, 0, SEEK_CUR) == 5, "dup shares the file offset", "%ld", (long)lseek(d, 0, SEEK_CUR));
	close(d);
	CHECK(dup3(fd, 20, 0) == 20 && fcntl(20, F_GETFD) == 0, "dup3 to 20 no cloexec", "errno %d", errno);
	CHECK(dup3(fd, 20, O_CLOEXEC) == 20 && fcntl(20, F_GETFD) == FD_CLOEXEC, "dup3 O_CLOEXEC onto open fd",
	      "fd flags %d", fcntl(20, F_GETFD));
	EXPECT_ERRNO(dup3(fd, fd, 0), EINVAL, "dup3 oldfd == newfd -> EINVAL");
	EXPECT_ERRNO(dup3(fd, 21, 0x4), EINVAL, "dup3 bad flags -> EINVAL");
	EXPECT_ERRNO(dup3(777, 21, 0), EBADF, "dup3 bad oldfd -> EBADF");
	CHECK(dup2(fd, fd) == fd, "dup2 same fd returns it", "errno %d", errno);
	close(20);
	int f = fcntl(fd, F_DUPFD, 30);
	CHECK(f == 30 && fcntl(f, F_GETFD) == 0, "F_DUPFD >= 30", "got %d", f);
	int g = fcntl(fd, F_DUPFD, 30);
	CHECK(g == 31, "F_DUPFD picks next free >= arg", "got %d", g);
	int h = fcntl(fd, F_DUPFD_CLOEXEC, 30);
	CHECK(h == 32 && fcntl(h, F_GETFD) == FD_CLOEXEC, "F_DUPFD_CLOEXEC", "got %d", h);
	close(f), close(g), close(h);
	EXPECT_ERRNO(fcntl(fd, F_DUPFD, -1), EINVAL, "F_DUPFD negative -> EINVAL");
	CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC, "F_SETFD/F_GETFD",
	      "errno %d", errno);
	fcntl(fd, F_SETFD, 0);
	int fl = fcntl(fd, F_GETFL);
	CHECK((fl & O_ACCMODE) == O_RDWR && !(fl & O_NONBLOCK), "F_GETFL O_RDWR", "%#x", fl);
	CHECK(fcntl(fd, F_SETFL, fl | O_NONBLOCK | O_APPEND) == 0 &&
		      (fcntl(fd, F_GETFL) & (O_NONBLOCK | O_APPEND)) == (O_NONBLOCK | O_APPEND),
	      "F_SETFL O_NONBLOCK|O_APPEND", "%#x", fcntl(fd, F_GETFL));
	fcntl(fd, F_SETFL, O_WRONLY);
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR, "F_SETFL ignores access mode", "%#x", fcntl(fd, F_GETFL));
	EXPECT_ERRNO(fcntl(fd, 9999), EINVAL, "fcntl unknown cmd -> EINVAL");
	EXPECT_ERRNO(fcntl(555, F_GETFD), EBADF, "fcntl bad fd -> EBADF");
	EXPECT_ERRNO(ioctl(fd, TCGETS, &(struct termios){0}), ENOTTY, "ioctl TCGETS on regular file -> ENOTTY");
	int oc = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fcntl(oc, F_GETFD) == FD_CLOEXEC, "open O_CLOEXEC sets FD_CLOEXEC", "%d", fcntl(oc, F_GETFD));

	/* close-on-exec across execve: child reports which fds survived */
	int keep = dup(fd);
	pid_t pid = fork();
	if (pid == 0) {
		char a1[16], a2[16];
		snprintf(a1, sizeof(a1), "%d", keep);
		snprintf(a2, sizeof(a2), "%d", oc);
		char *av[] = {(char *)self, "cloexec-child", a1, a2, NULL};
		execve(self, av, (char *[]){NULL});
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "close-on-exec: cloexec fd closed, other kept over execve",
	      "child status %#x", st);
	close(keep);
	close(oc);
	close(fd);
}

static void check_dev(void)
{
	int n = open("/dev/null", O_RDWR);
	char buf[100];
	memset(buf, 7, sizeof(buf));
	if (CHECK(n >= 0, "open /dev/null", "errno %d", errno)) {
		CHECK(write(n, buf, 100) == 100, "write /dev/null swallows", "errno %d", errno);
		CHECK(read(n, buf, 100) == 0, "read /dev/null -> EOF", "errno %d", errno);
		struct stat st;
		CHECK(fstat(n, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3), "/dev/null is chr 1:3",
		      "mode %o rdev %lx", st.st_mode, (unsigned long)st.st_rdev);
		close(n);
	}
	int z = open("/dev/zero", O_RDONLY);
	if (CHECK(z >= 0, "open /dev/zero", "errno %d", errno)) {
		int nz = 0;
		CHECK(read(z, buf, 100) == 100, "read /dev/zero full count", "errno %d", errno);
		for (int i = 0; i < 100; i++)
			nz |= buf[i];
		CHECK(nz == 0, "/dev/zero gives zeros", "nonzero");
		close(z);
	}
}

static int cloexec_child(int argc, char **argv)
{
	if (argc != 4)
		return 10;
	int keep = atoi(argv[2]), oc = atoi(argv[3]);
	if (fcntl(keep, F_GETFD) != 0)
		return 11;
	if (fcntl(oc, F_GETFD) != -1 || errno != EBADF)
		return 12;
	return 0;
}

/* A /proc file seeks as seq_lseek: SEEK_SET and SEEK_CUR only, never below 0 */
static void check_seq_lseek(void)
{
	int fd = open("/proc/self/stat", O_RDONLY);

	if (!CHECK(fd >= 0, "open /proc/self/stat", "errno %d", errno))
		return;
	CHECK(lseek(fd, 7, SEEK_SET) == 7 && lseek(fd, 2, SEEK_CUR) == 9, "/proc lseek SET 7, CUR +2 -> 9",
	      "errno %d", errno);
	EXPECT_ERRNO(lseek(fd, 0, SEEK_END), EINVAL, "/proc lseek SEEK_END -> EINVAL");
	EXPECT_ERRNO(lseek(fd, -10, SEEK_CUR), EINVAL, "/proc lseek below 0 -> EINVAL");
	EXPECT_ERRNO(lseek(fd, INT64_MAX, SEEK_CUR), EINVAL, "/proc lseek past INT64_MAX -> EINVAL");
	CHECK(lseek(fd, 0, SEEK_CUR) == 9, "/proc failed lseek leaves the offset", "%ld",
	      (long)lseek(fd, 0, SEEK_CUR));
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "cloexec-child") == 0)
		return cloexec_child(argc, argv);
	tap_init("t_files", 20);
	umask(022);
	snprintf(dir, sizeof(dir), "/tmp/t_files.%d", getpid());
	if (!CHECK(mkdir(dir, 0755) == 0, "mkdir work dir under /tmp", "errno %d", errno))
		return tap_done();
	check_basic_io();
	check_dirs();
	check_fdops((const char *)getauxval(AT_EXECFN));
	check_dev();
	check_seq_lseek();
	char path[128];
	p(path, "a.txt");
	unlink(path);
	CHECK(rmdir(dir) == 0, "cleanup work dir", "errno %d", errno);
	return tap_done();
}
