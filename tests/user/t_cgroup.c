/* t_cgroup: the cgroup v2 filesystem as Linux 6.1 shows it without controllers.
 * Mount: cgroup2 at /sys/fs/cgroup (mounted here when it is not), again elsewhere showing the
 * same tree; statfs CGROUP2_SUPER_MAGIC, the root ino 1 mode 0555, /proc/mounts' line.
 * Files: the root's core files and modes (no cgroup.events / cgroup.type there), a child's
 * (with them), their contents; mkdir / rmdir and nlink; cgroup.stat's counts.
 * Membership: a process moved with cgroup.procs ("0", a pid), its threads with it
 * (cgroup.threads), a fork inheriting it, /proc/PID/cgroup, cgroup.events' populated up the
 * tree (IN_MODIFY to inotify watches of the file and its directory when it changes), rmdir
 * EBUSY while populated and allowed once the process exited.
 * Errnos: EEXIST (also for /sys/fs and the mount point: mkdir -p), EBUSY (also rmdir of
 * the mount point), ENOTDIR, EPERM (unlink, symlink, rename, link, mknod), EISDIR,
 * EACCES (new files), ESRCH / EINVAL for cgroup.procs, ENOENT / EINVAL for subtree_control,
 * EINVAL for read-only files, cgroup.kill (0200, not in the root: "1" kills a process in a
 * child cgroup, other numbers ERANGE, garbage and reads EINVAL), EOPNOTSUPP for a lone thread into another domain, EAGAIN past
 * cgroup.max.depth / max.descendants, and a removed cgroup: its files ENODEV, its directory
 * fd ENOENT for new names.  Races: processes moving in and out of a cgroup that is made and
 * removed meanwhile (EBUSY or removed; moves ENODEV or ENOENT; nothing left behind).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "cgroup_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

static char A[96], B[128], C[160]; /* our cgroups: A, A/b, A/b/c */

static int rd(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	buf[n] = 0;
	close(fd);
	return (int)n;
}

static void check_text(const char *what, const char *path, const char *want)
{
	char buf[512];
	int n = rd(path, buf, sizeof(buf));

	tap_check(n >= 0 && !strcmp(buf, want), what, "%s: %d <%s>, want <%s>", path, n, buf, want);
}

static void check_err(const char *what, long r, int want)
{
	tap_check(r == -1 && errno == want, what, "%ld errno %d, want errno %d", r, errno, want);
}

static void check_wr(const char *what, const char *path, const char *s, long want)
{
	long r = cg_write(path, s);

	tap_check(r == want, what, "write <%s> to %s: %ld, want %ld", s, path, r, want);
}

static void check_mode(const char *dir, const char *name, unsigned int mode)
{
	char path[256], what[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(what, sizeof(what), "%s is 0%o", name, mode);
	if (stat(path, &st)) {
		tap_fail(what, "stat %s: %s", path, strerror(errno));
		return;
	}
	tap_check(st.st_mode == (S_IFREG | mode) && st.st_size == 0, what, "mode 0%o size %ld",
		  st.st_mode, (long)st.st_size);
}

static void check_populated(const char *what, const char *dir, int want)
{
	char path[256], exp[64];

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	snprintf(exp, sizeof(exp), "populated %d\nfrozen 0\n", want);
	check_text(what, path, exp);
}

static void mount_checks(void)
{
	struct statfs sf;
	struct stat st = { 0 }, st2;
	char buf[4096];

	cg_mount();
	tap_check(statfs(CG, &sf) == 0 && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC,
		  "statfs f_type CGROUP2_SUPER_MAGIC", "%lx", (unsigned long)sf.f_type);
	tap_check(stat(CG, &st) == 0 && st.st_ino == 1 && st.st_mode == (S_IFDIR | 0555),
		  "the root: ino 1, mode 0555", "ino %lu mode 0%o", (unsigned long)st.st_ino,
		  st.st_mode);
	rd("/proc/mounts", buf, sizeof(buf));
	tap_check(strstr(buf, " " CG " cgroup2 rw") != NULL, "/proc/mounts lists cgroup2",
		  "%s", buf);
	check_text("/proc/self/cgroup in the root", "/proc/self/cgroup", "0::/\n");
	tap_check(mkdir(A, 0755) == 0 && stat(A, &st) == 0, "mkdir a cgroup", "%s",
		  strerror(errno));
	/* a second mount shows the same hierarchy */
	mkdir("/tmp/t_cgroup.mnt", 0755);
	if (!tap_check(mount("none", "/tmp/t_cgroup.mnt", "cgroup2", 0, NULL) == 0,
		       "mount cgroup2 a second time", "%s", strerror(errno)))
		return;
	snprintf(buf, sizeof(buf), "/tmp/t_cgroup.mnt%s", A + strlen(CG));
	tap_check(stat(buf, &st2) == 0 && st2.st_ino == st.st_ino && st2.st_dev == st.st_dev,
		  "the second mount shows the same cgroup", "%s: %s", buf, strerror(errno));
	tap_check(umount("/tmp/t_cgroup.mnt") == 0, "umount the second", "%s", strerror(errno));
	rmdir("/tmp/t_cgroup.mnt");
}

static void file_checks(void)
{
	static const char *const both[] = { "cgroup.procs", "cgroup.threads",
					     "cgroup.subtree_control", "cgroup.max.descendants",
					     "cgroup.max.depth" };
	char path[256], buf[512];
	struct stat st, rst;
	nlink_t nl;

	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		check_mode(CG, both[i], 0644);
		check_mode(A, both[i], 0644);
	}
	check_mode(CG, "cgroup.controllers", 0444);
	check_mode(CG, "cgroup.stat", 0444);
	check_mode(A, "cgroup.controllers", 0444);
	check_mode(A, "cgroup.stat", 0444);
	check_mode(A, "cgroup.events", 0444);
	check_mode(A, "cgroup.type", 0644);
	check_mode(A, "cgroup.kill", 0200);
	check_err("no cgroup.kill in the root", stat(CG "/cgroup.kill", &st), ENOENT);
	check_err("no cgroup.events in the root", stat(CG "/cgroup.events", &st), ENOENT);
	check_err("no cgroup.type in the root", stat(CG "/cgroup.type", &st), ENOENT);
	tap_check(stat(A, &st) == 0 && st.st_mode == (S_IFDIR | 0755) && st.st_nlink == 2 &&
			  st.st_ino != 1,
		  "a new cgroup: mode 0755, nlink 2", "mode 0%o nlink %lu", st.st_mode,
		  (unsigned long)st.st_nlink);
	static const char *const text[][2] = {
		{ "cgroup.type", "domain\n" },
		{ "cgroup.events", "populated 0\nfrozen 0\n" },
		{ "cgroup.max.depth", "max\n" },
		{ "cgroup.max.descendants", "max\n" },
		{ "cgroup.controllers", "" },
		{ "cgroup.subtree_control", "" },
		{ "cgroup.procs", "" },
		{ "cgroup.threads", "" },
		{ "cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n" },
	};

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", A, text[i][0]);
		check_text(text[i][0], path, text[i][1]);
	}
	stat(A, &st);
	nl = st.st_nlink;
	tap_check(mkdir(B, 0700) == 0, "mkdir a child", "%s", strerror(errno));
	tap_check(stat(A, &st) == 0 && st.st_nlink == nl + 1, "the parent's nlink grows",
		  "%lu", (unsigned long)st.st_nlink);
	tap_check(stat(B, &st) == 0 && st.st_mode == (S_IFDIR | 0700), "mkdir's mode", "0%o",
		  st.st_mode);
	check_text("cgroup.stat counts the child", path, "nr_descendants 1\nnr_dying_descendants 0\n");
	stat(CG, &rst);
	rd(CG "/cgroup.stat", buf, sizeof(buf));
	tap_check(strncmp(buf, "nr_descendants ", 15) == 0 && atoi(buf + 15) >= 2,
		  "the root's cgroup.stat counts every descendant", "%s", buf);
}

static void errno_checks(void)
{
	char path[256], p2[256];

	check_err("mkdir of an existing cgroup EEXIST", mkdir(A, 0755), EEXIST);
	check_err("rmdir with a child EBUSY", rmdir(A), EBUSY);
	snprintf(path, sizeof(path), "%s/cgroup.procs", A);
	check_err("rmdir of a file ENOTDIR", rmdir(path), ENOTDIR);
	check_err("unlink of a file EPERM", unlink(path), EPERM);
	check_err("unlink of a cgroup EISDIR", unlink(B), EISDIR);
	check_err("rmdir of dot EINVAL", rmdir(CG "/."), EINVAL);
	check_err("rmdir of the mount point EBUSY", rmdir(CG), EBUSY);
	check_err("mkdir of the mount point EEXIST", mkdir(CG, 0755), EEXIST);
	check_err("mkdir of /sys/fs EEXIST (as mkdir -p does)", mkdir("/sys/fs", 0755), EEXIST);
	check_err("mkdir with a missing parent ENOENT", mkdir(CG "/t_cgroup.none/x", 0755), ENOENT);
	check_err("O_CREAT|O_EXCL of an existing file EEXIST",
		  open(path, O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	snprintf(p2, sizeof(p2), "%s/newfile", A);
	check_err("creating a file EACCES", open(p2, O_CREAT | O_WRONLY, 0644), EACCES);
	snprintf(p2, sizeof(p2), "%s/sl", A);
	check_err("symlink EPERM", symlink("x", p2), EPERM);
	check_err("link EPERM", link(path, p2), EPERM);
	check_err("mknod EPERM", mknod(p2, S_IFIFO | 0600, 0), EPERM);
	snprintf(p2, sizeof(p2), "%s/renamed", A);
	check_err("rename EPERM", rename(B, p2), EPERM);
	check_err("rename of a missing name ENOENT", rename(p2, B), ENOENT);
	snprintf(p2, sizeof(p2), "%s/bad\nname", A);
	check_err("a name with a newline EINVAL", mkdir(p2, 0755), EINVAL);
	check_wr("cgroup.procs: no such pid ESRCH", path, "999999", -ESRCH);
	check_wr("cgroup.procs: garbage EINVAL", path, "abc", -EINVAL);
	check_wr("cgroup.procs: negative EINVAL", path, "-1", -EINVAL);
	check_wr("cgroup.procs: two pids EINVAL", path, "12 13", -EINVAL);
	check_wr("cgroup.procs: trailing garbage EINVAL", path, "1x", -EINVAL);
	check_wr("cgroup.procs: empty write 0", path, "", 0);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", A);
	check_wr("subtree_control +cpu ENOENT (not available)", path, "+cpu", -ENOENT);
	check_wr("subtree_control +nosuch EINVAL", path, "+nosuch", -EINVAL);
	check_wr("subtree_control garbage EINVAL", path, "garbage", -EINVAL);
	check_wr("subtree_control empty write 0", path, "", 0);
	snprintf(path, sizeof(path), "%s/cgroup.events", A);
	check_wr("write to cgroup.events EINVAL", path, "x", -EINVAL);
	snprintf(path, sizeof(path), "%s/cgroup.controllers", A);
	check_wr("write to cgroup.controllers EINVAL", path, "x", -EINVAL);
	snprintf(path, sizeof(path), "%s/cgroup.stat", A);
	check_wr("write to cgroup.stat EINVAL", path, "x", -EINVAL);
	snprintf(path, sizeof(path), "%s/cgroup.type", A);
	check_wr("cgroup.type back to domain EINVAL", path, "domain", -EINVAL);
	snprintf(path, sizeof(path), "%s/cgroup.kill", A);
	check_wr("cgroup.kill 0 ERANGE", path, "0", -ERANGE);
	check_wr("cgroup.kill 2 ERANGE", path, "2", -ERANGE);
	check_wr("cgroup.kill garbage EINVAL", path, "x", -EINVAL);
	char kb[16];
	int kr = rd(path, kb, sizeof(kb));

	tap_check(kr == -EINVAL, "reading cgroup.kill EINVAL", "%d", kr);
	/* a lone thread into another domain cgroup */
	snprintf(path, sizeof(path), "%s/cgroup.threads", A);
	char tid[32];

	snprintf(tid, sizeof(tid), "%d", (int)syscall(SYS_gettid));
	check_wr("cgroup.threads: a thread into another domain EOPNOTSUPP", path, tid, -EOPNOTSUPP);
	check_wr("cgroup.threads: a thread where it is", CG "/cgroup.threads", tid, (long)strlen(tid));
}

static void limit_checks(void)
{
	char path[256], p2[256];

	snprintf(path, sizeof(path), "%s/cgroup.max.depth", A);
	check_wr("cgroup.max.depth 1", path, "1", 1);
	check_text("cgroup.max.depth reads 1", path, "1\n");
	check_err("mkdir past max.depth EAGAIN", mkdir(C, 0755), EAGAIN);
	check_wr("cgroup.max.depth max", path, "max\n", 4);
	snprintf(path, sizeof(path), "%s/cgroup.max.descendants", A);
	check_wr("cgroup.max.descendants 1", path, "1", 1);
	snprintf(p2, sizeof(p2), "%s/x", A);
	check_err("mkdir past max.descendants EAGAIN", mkdir(p2, 0755), EAGAIN);
	check_wr("cgroup.max.descendants garbage EINVAL", path, "lots", -EINVAL);
	check_wr("cgroup.max.descendants max", path, "max", 3);
	tap_check(mkdir(C, 0755) == 0, "mkdir once the limits are max", "%s", strerror(errno));
	rmdir(C);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Wait up to 2 s for IN_MODIFY on the file watch wf and, named cgroup.events, on the
 * directory watch wd (kernfs notifies from a work queue): whether each came. */
static void wait_modify(int in, int wf, int wd, int *got_file, int *got_dir)
{
	char buf[4096] __attribute__((aligned(8)));
	struct pollfd p = { in, POLLIN, 0 };

	*got_file = *got_dir = 0;
	for (int i = 0; i < 20 && !(*got_file && *got_dir); i++) {
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(in, buf, sizeof(buf));
		for (ssize_t o = 0; n > 0 && o < n;) {
			const struct inotify_event *e = (const void *)(buf + o);

			if (e->wd == wf && (e->mask & IN_MODIFY))
				*got_file = 1;
			if (e->wd == wd && (e->mask & IN_MODIFY) && e->len &&
			    !strcmp(e->name, "cgroup.events"))
				*got_dir = 1;
			o += (ssize_t)sizeof(*e) + e->len;
		}
	}
}

/* A child moved into B: the parent sees it there, its threads, its fork. */
static void membership_checks(void)
{
	char path[256], want[300], buf[512];
	int go[2], done[2];
	pid_t pid;

	if (pipe(go) || pipe(done)) {
		tap_fail("pipes", "%s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		pthread_t t;
		char c;

		c = pthread_create(&t, NULL, idle_thread, NULL) == 0 ? 'r' : 'x';
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		/* a fork inherits the cgroup */
		pid_t g = fork();

		if (g == 0) {
			char b2[256], w2[300];

			snprintf(w2, sizeof(w2), "0::%s\n", B + strlen(CG));
			rd("/proc/self/cgroup", b2, sizeof(b2));
			_exit(strcmp(b2, w2) ? 3 : 0);
		}
		int st = 0;

		waitpid(g, &st, 0);
		c = WIFEXITED(st) ? (char)WEXITSTATUS(st) : 9;
		if (write(done[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c = 'g', r = 0;

	tap_check(read(done[0], &r, 1) == 1 && r == 'r', "a child with two threads", "%c", r);
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), wf, wd, gf, gd;

	snprintf(path, sizeof(path), "%s/cgroup.events", B);
	wf = inotify_add_watch(in, path, IN_MODIFY);
	wd = inotify_add_watch(in, A, IN_MODIFY);
	snprintf(path, sizeof(path), "%s/cgroup.procs", B);
	snprintf(want, sizeof(want), "%d", pid);
	check_wr("cgroup.procs: move a process by pid", path, want, (long)strlen(want));
	wait_modify(in, wf, wd, &gf, &gd);
	tap_check(in >= 0 && gf && gd, "cgroup.events: IN_MODIFY on the file and from its parent's directory when populated",
		  "file %d, directory %d", gf, gd);
	snprintf(want, sizeof(want), "%d\n", pid);
	check_text("cgroup.procs lists it", path, want);
	snprintf(path, sizeof(path), "%s/cgroup.threads", B);
	rd(path, buf, sizeof(buf));
	tap_check(atoi(buf) == pid && strchr(buf, '\n') && strchr(buf, '\n')[1] != 0 &&
			  strchr(strchr(buf, '\n') + 1, '\n'),
		  "cgroup.threads lists both threads", "<%s>", buf);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	snprintf(want, sizeof(want), "0::%s\n", B + strlen(CG));
	check_text("/proc/PID/cgroup names it", path, want);
	check_populated("cgroup.events: populated", B, 1);
	check_populated("cgroup.events: the parent populated by its child", A, 1);
	snprintf(path, sizeof(path), "%s/cgroup.procs", A);
	check_text("the parent's own cgroup.procs stays empty", path, "");
	check_err("rmdir of a populated cgroup EBUSY", rmdir(B), EBUSY);
	r = 0;

	if (write(go[1], &c, 1) != 1 || read(done[0], &r, 1) != 1)
		r = 99;
	tap_check(r == 0, "a fork starts in its parent's cgroup", "child reported %d", r);
	int st = 0;

	snprintf(path, sizeof(path), "%s/cgroup.kill", A);
	check_wr("cgroup.kill of the parent cgroup", path, "1", 1);
	tap_check(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "cgroup.kill killed the process below it", "status 0x%x", st);
	wait_modify(in, wf, wd, &gf, &gd);
	tap_check(gf && gd, "cgroup.events: IN_MODIFY again once it empties", "file %d, directory %d",
		  gf, gd);
	close(in);
	check_populated("cgroup.events after the exit", B, 0);
	check_populated("the parent unpopulated too", A, 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", B);
	check_text("cgroup.procs empty after the exit", path, "");
	tap_check(rmdir(B) == 0, "rmdir once the process exited", "%s", strerror(errno));
	tap_check(mkdir(B, 0755) == 0, "mkdir the same name again", "%s", strerror(errno));
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

static void self_checks(void)
{
	char path[256], want[300], me[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", B);
	check_wr("cgroup.procs: 0 moves the writer", path, "0", 1);
	snprintf(want, sizeof(want), "0::%s\n", B + strlen(CG));
	check_text("/proc/self/cgroup follows", "/proc/self/cgroup", want);
	snprintf(me, sizeof(me), "%d\n", getpid());
	check_text("cgroup.procs lists us", path, me);
	snprintf(me, sizeof(me), "%d", getpid());
	check_wr("back to the root by pid", CG "/cgroup.procs", me, (long)strlen(me));
	check_text("/proc/self/cgroup in the root again", "/proc/self/cgroup", "0::/\n");
}

/* A removed cgroup whose files and directory are still open. */
static void dead_checks(void)
{
	char path[256], buf[64];
	int dfd, pfd, efd;

	dfd = mkdir(C, 0755) == 0 ? open(C, O_RDONLY | O_DIRECTORY) : -1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", C);
	pfd = open(path, O_WRONLY);
	snprintf(path, sizeof(path), "%s/cgroup.events", C);
	efd = open(path, O_RDONLY);
	if (!tap_check(dfd >= 0 && pfd >= 0 && efd >= 0, "open a cgroup's directory and files",
		       "%d %d %d: %s", dfd, pfd, efd, strerror(errno)))
		return;
	tap_check(rmdir(C) == 0, "rmdir with its files open", "%s", strerror(errno));
	check_err("cgroup.procs of a removed cgroup ENODEV", write(pfd, "0", 1), ENODEV);
	check_err("cgroup.events of a removed cgroup ENODEV", read(efd, buf, sizeof(buf)), ENODEV);
	check_err("openat in a removed cgroup ENOENT", openat(dfd, "cgroup.procs", O_RDONLY),
		  ENOENT);
	check_err("mkdirat in a removed cgroup ENOENT", mkdirat(dfd, "x", 0755), ENOENT);
	check_text("/proc/self/cgroup unchanged", "/proc/self/cgroup", "0::/\n");
	close(dfd);
	close(pfd);
	close(efd);
}

/* Children moving themselves in and out of C while the parent makes and removes it: the
 * moves into a removed cgroup fail (ENODEV, or ENOENT at open), nothing is lost. */
static void race_checks(void)
{
	char cprocs[200], bprocs[200], path[256];
	pid_t kids[3];
	int ok = 1, removed = 0;

	snprintf(cprocs, sizeof(cprocs), "%s/cgroup.procs", C);
	snprintf(bprocs, sizeof(bprocs), "%s/cgroup.procs", B);
	for (int k = 0; k < 3; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			for (int i = 0; i < 300; i++) {
				long r = cg_write(cprocs, "0");

				if (r != 1 && r != -ENODEV && r != -1000 - ENOENT)
					_exit(10);
				if (cg_write(bprocs, "0") != 1)
					_exit(11);
			}
			_exit(0);
		}
	}
	for (int i = 0; i < 300; i++) {
		mkdir(C, 0755);
		if (rmdir(C) == 0)
			removed++;
		else if (errno != EBUSY && errno != ENOENT)
			ok = 0;
	}
	for (int k = 0; k < 3; k++) {
		int st = 0;

		waitpid(kids[k], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			tap_fail("racing moves: a child", "status 0x%x", st);
	}
	tap_check(ok && removed > 0, "rmdir racing moves: EBUSY or done", "ok %d, %d removed",
		  ok, removed);
	tap_check(rmdir(C) == 0 || errno == ENOENT, "rmdir once the movers exited", "%s",
		  strerror(errno));
	check_populated("unpopulated after the race", B, 0);
	snprintf(path, sizeof(path), "%s/cgroup.stat", B);
	char buf[128];

	rd(path, buf, sizeof(buf));
	tap_check(!strncmp(buf, "nr_descendants 0\n", 17), "no descendant left after the race",
		  "%s", buf);
}

int main(void)
{
	tap_init("t_cgroup", 60);
	snprintf(A, sizeof(A), CG "/t_cgroup.%d", getpid());
	snprintf(B, sizeof(B), "%s/b", A);
	snprintf(C, sizeof(C), "%s/c", B);
	mount_checks();
	if (access(A, F_OK) == 0) {
		file_checks();
		errno_checks();
		limit_checks();
		membership_checks();
		self_checks();
		dead_checks();
		race_checks();
	}
	rmdir(C);
	rmdir(B);
	tap_check(rmdir(A) == 0, "rmdir of our cgroups", "%s", strerror(errno));
	return tap_done();
}
