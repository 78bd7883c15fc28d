/*
 * filefuzz - random reads, writes and seeks on the kernel's text files from inside the guest
 * (tests/fuzz/fuzz-syscalls.sh): tracefs and debugfs, /sys, /proc/sys, /proc/self, and a
 * bpf filesystem.
 *
 *   filefuzz [children] [ops] [seed]
 *
 * The parent walks the trees once (no symlinks, depth 8) and keeps every regular file.  Each
 * child then does `ops` operations, each on a file picked at random, opened O_NONBLOCK with a
 * random access mode (sometimes O_TRUNC or O_APPEND):
 *   - write a generated text: numbers, junk bytes (NULs included), lines of up to 9000 bytes,
 *     tracer and event names, tracefs filter expressions, and probe definitions in the
 *     kprobe_events / uprobe_events syntax with random groups, names, targets, offsets,
 *     reference counters and fetch arguments (the text parsers' input);
 *   - read a random size at a random offset, lseek with any whence;
 *   - open a tracepoint, kprobe or uprobe event by the id a tracefs `id` file gives, counting or
 *     sampling on the child itself (pid 0, never CPU-wide), run a little, read it and close it;
 *   - make, rename and remove directories and pin or look up objects in the bpf filesystem;
 *   - make and remove cgroups (cgroup2 at /sys/fs/cgroup), move the children (and their
 *     parent) between them through cgroup.procs, write cgroup.threads and the limits, use a
 *     cgroup directory fd across its rmdir.
 * Uprobe definitions aim at /bin/filefuzz itself (the children run through any probe they
 * arm), /bin/hot, busybox and paths that do not exist.  Left out: /proc/sysrq-trigger,
 * cgroup.kill (it would kill the parent, which the children move between cgroups), and
 * other processes' /proc directories.  What is checked is the kernel: the run must end without
 * a panic or a hung child; children killed by signals (a probe on a random instruction of their
 * own text, a write to /proc/self/mem) are expected.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

#define MAX_FILES 30000

/* top: tracefs's own control files and /proc/sys; evf: each event's id, enable, filter */
static char **files, **top, **evf;
static int nfiles, ntop, nevf;

static void classify(char *p)
{
	static const char *const names[] = { "uprobe_events", "kprobe_events", "set_event", "current_tracer",
					     "tracing_on", "trace", "trace_pipe" };
	const char *b = strrchr(p, '/') + 1;

	if (!strncmp(p, "/proc/sys/", 10))
		top[ntop++] = p;
	else if (!strcmp(b, "filter") || !strcmp(b, "enable") || !strcmp(b, "id"))
		evf[nevf++] = p;
	else
		for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(b, names[i]))
				top[ntop++] = p;
}
static char text[10000];

static void walk(const char *dir, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 8 || nfiles >= MAX_FILES || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)) && nfiles < MAX_FILES) {
		char p[512];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
		if (!strcmp(p, "/proc/sysrq-trigger") || !strcmp(e->d_name, "cgroup.kill") ||
		    lstat(p, &st))
			continue; /* cgroup.kill: the children move the parent into cgroups */
		if (!strncmp(p, "/proc/", 6) && p[6] >= '0' && p[6] <= '9')
			continue; /* other processes */
		if (S_ISDIR(st.st_mode))
			walk(p, depth + 1);
		else if (S_ISREG(st.st_mode)) {
			files[nfiles] = strdup(p);
			classify(files[nfiles++]);
		}
	}
	closedir(d);
}

static const char *pick(const char *const *v, int n)
{
	return v[rnd() % n];
}

#define PICK(v) pick(v, (int)(sizeof(v) / sizeof(v[0])))

static int put(int n, const char *fmt, const char *s)
{
	if (n >= (int)sizeof(text) - 600)
		return n;
	return n + snprintf(text + n, sizeof(text) - n, fmt, s);
}

static int number(int n)
{
	static const char *const nums[] = { "0", "1", "-1", "2", "4294967296", "0x10", "18446744073709551615",
					    "99999999999999999999999", "-0", "+1", "1 2", "007", "1k", "" };
	char b[32];

	if (rnd() % 2)
		return put(n, "%s", PICK(nums));
	snprintf(b, sizeof(b), "%lld", (long long)(rnd() % 2 ? rnd() % 5000 : rnd()));
	return put(n, "%s", b);
}

static int name(int n)
{
	static const char *const names[] = { "ev", "grp/ev", "uprobes/x", "probe_hot/burn", "a/b/c", "/ev",
					     "grp/", "sched/sched_switch", "9bad", "x-y", "" };
	char b[160];
	int len;

	if (rnd() % 3)
		return put(n, "%s", PICK(names));
	len = (int)(rnd() % 2 ? rnd() % 12 : rnd() % 150);
	for (int i = 0; i < len; i++)
		b[i] = (char)(rnd() % 4 ? 'a' + rnd() % 26 : "/_.:-0 %"[rnd() % 8]);
	b[len] = 0;
	return put(n, "%s", b);
}

static int fetcharg(int n)
{
	static const char *const args[] = {
		"%x0", "%x1", "%x30", "%x31", "%sp", "%pc", "%lr", "+8(%sp)", "-8(%x29)", "+0(+8(%x0))",
		"$stack", "$stack3", "$retval", "$comm", "@0x10000", "@+0x1000", "%x0:u64", "%x1:s32",
		"+0(%x0):string", "+0(%x0):ustring", "%x2:x16", "%x3:b4@2/32", "%x0:symbol", "+16(%sp):u8",
		"%x0:foo", "%zz", "+(%x0)", "+99999999999999999999(%sp)", "",
	};

	if (rnd() % 3 == 0) {
		n = name(n);
		n = put(n, "%s", "=");
	}
	return put(n, "%s", PICK(args));
}

static int probe(int n)
{
	static const char *const kinds[] = { "p", "r", "-", "x", "P", "r9", "p:", "" };
	static const char *const files_[] = { "/bin/filefuzz", "/bin/hot", "/bin/busybox", "/nonexistent",
					      "/proc/self/exe", "/sys", "", "/bin/filefuzz/" };
	static const char *const syms[] = { "sys_getpid", "do_sys_getpid", "kmalloc", "schedule",
					    "perf_event_open", "nosuchsym", "0xffff000000000000", "0" };
	char b[64];

	n = put(n, "%s", rnd() % 3 ? (rnd() % 2 ? "p" : "r") : PICK(kinds));
	if (rnd() % 4) {
		n = put(n, "%s", ":");
		n = name(n);
	}
	n = put(n, "%s", rnd() % 8 ? " " : "\t");
	if (rnd() % 2) {
		n = put(n, "%s", PICK(files_));
		n = put(n, "%s", rnd() % 8 ? ":" : "");
		/* offsets into the text, aligned or not, and beyond it */
		snprintf(b, sizeof(b), rnd() % 2 ? "0x%llx" : "%llu",
			 (unsigned long long)(rnd() % 3 ? (rnd() % 0x80000) & ~(uint64_t)(rnd() % 2 ? 3 : 0) : rnd()));
		n = put(n, "%s", b);
		if (rnd() % 5 == 0) {
			snprintf(b, sizeof(b), "(0x%llx)", (unsigned long long)(rnd() % 2 ? rnd() % 0x100000 : rnd()));
			n = put(n, "%s", b);
		}
	} else {
		n = put(n, "%s", PICK(syms));
		if (rnd() % 2) {
			snprintf(b, sizeof(b), "+%llu", (unsigned long long)(rnd() % 3 ? (rnd() % 64) * 4 : rnd()));
			n = put(n, "%s", b);
		}
	}
	for (int k = rnd() % 2 ? 0 : (int)(rnd() % 4); k > 0; k--) {
		n = put(n, "%s", " ");
		n = fetcharg(n);
	}
	return n;
}

static int filter(int n)
{
	static const char *const fields[] = { "common_pid", "pid", "prev_pid", "comm", "prev_comm", "id",
					      "nosuch", "common_type", "ret", "" };
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&", "~", "=", "" };
	static const char *const vals[] = { "0", "1", "-1", "\"sh\"", "\"f*\"", "sh", "0x10", "\"", "()",
					    "99999999999999999999" };

	for (int k = (int)(rnd() % 4) + 1; k > 0; k--) {
		if (rnd() % 5 == 0)
			n = put(n, "%s", rnd() % 2 ? "(" : "!");
		n = put(n, "%s ", PICK(fields));
		n = put(n, "%s ", PICK(ops));
		n = put(n, "%s", PICK(vals));
		if (rnd() % 5 == 0)
			n = put(n, "%s", ")");
		if (k > 1)
			n = put(n, " %s ", rnd() % 2 ? "&&" : rnd() % 2 ? "||" : "");
	}
	return n;
}

/* A text for a write: which kind is random, whatever the file is. */
static int gen(void)
{
	static const char *const words[] = { "nop", "function", "function_graph", "blk", "sched:sched_switch",
					     "!sched:sched_switch", "*:*", "sched:*", "0\n", "1\n", "none",
					     "# comment\n", "\n", " ", "-:*", "-:uprobes/*" };
	int n = 0;

	switch (rnd() % 8) {
	case 0:
		n = number(n);
		break;
	case 1: {
		int len = (int)(rnd() % 2 ? rnd() % 300 : rnd() % 9000);

		for (int i = 0; i < len; i++)
			text[i] = (char)(rnd() % 3 ? rnd() : 'a' + rnd() % 26);
		return len;
	}
	case 2:
		n = put(n, "%s", PICK(words));
		break;
	case 3:
		n = filter(n);
		break;
	default:
		for (int k = (int)(rnd() % 3) + 1; k > 0; k--) {
			n = probe(n);
			n = put(n, "%s", rnd() % 6 ? "\n" : "");
		}
		break;
	}
	if (rnd() % 4 == 0)
		n = put(n, "%s", "\n");
	return n;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* One of mkdir, rmdir, unlink of p, or rename of p to q. */
static void name_op(const char *p, const char *q)
{
	switch (rnd() % 4) {
	case 0:
		mkdir(p, (mode_t)(rnd() % 01000));
		break;
	case 1:
		rmdir(p);
		break;
	case 2:
		unlink(p);
		break;
	default:
		rename(p, q);
		break;
	}
}

/* Random names under the bpf filesystem. */
static void bpffs_op(void)
{
	static const char *const paths[] = { "/sys/fs/bpf/a", "/sys/fs/bpf/b", "/sys/fs/bpf/a/x", "/sys/fs/bpf/b/y",
					     "/sys/fs/bpf/a/x/z", "/sys/fs/bpf/", "/sys/fs/bpf/m" };
	const char *p = PICK(paths), *q = PICK(paths);
	union bpf_attr a;
	int fd;

	switch (rnd() % 6) {
	case 0:
	case 1:
	case 2:
	case 3:
		name_op(p, q);
		break;
	case 4:
		memset(&a, 0, sizeof(a));
		a.map_type = rnd() % 2 ? BPF_MAP_TYPE_ARRAY : BPF_MAP_TYPE_HASH;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 4;
		fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)p;
		a.bpf_fd = (uint32_t)fd;
		sys_bpf(BPF_OBJ_PIN, &a);
		close(fd);
		break;
	default:
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)p;
		a.file_flags = (uint32_t)(rnd() % 4);
		fd = (int)sys_bpf(BPF_OBJ_GET, &a);
		if (fd >= 0)
			close(fd);
		break;
	}
}

/* Open the event an `id` file names (tracepoint, kprobe or uprobe) on this child and run. */
static void event_op(const char *idfile)
{
	struct perf_event_attr at;
	char b[32];
	int fd = open(idfile, O_RDONLY), ev;
	ssize_t r;
	volatile uint64_t sink = 0;

	if (fd < 0)
		return;
	r = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (r <= 0)
		return;
	b[r] = 0;
	memset(&at, 0, sizeof(at));
	at.size = sizeof(at);
	at.type = PERF_TYPE_TRACEPOINT;
	at.config = strtoull(b, NULL, 10);
	if (rnd() % 2) {
		at.sample_period = 1 + rnd() % 4;
		at.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	}
	at.disabled = rnd() % 4 == 0;
	ev = (int)syscall(__NR_perf_event_open, &at, 0, -1, -1, 0);
	if (ev < 0)
		return;
	if (rnd() % 2)
		ioctl(ev, PERF_EVENT_IOC_ENABLE, 0);
	if (rnd() % 3 == 0) {
		snprintf(text, sizeof(text), "%s", "");
		int n = filter(0);

		text[n] = 0;
		ioctl(ev, PERF_EVENT_IOC_SET_FILTER, text);
	}
	for (int i = 0; i < 2000; i++)
		sink += (uint64_t)getpid();
	if (read(ev, b, 8) < 0)
		sink++;
	close(ev);
}

/* Random cgroups under the cgroup2 filesystem, and moves between them. */
static void cgroupfs_op(void)
{
	static const char *const dirs[] = { "/sys/fs/cgroup/fa", "/sys/fs/cgroup/fb",
					    "/sys/fs/cgroup/fa/x", "/sys/fs/cgroup/fb/y",
					    "/sys/fs/cgroup/fa/x/z", "/sys/fs/cgroup",
					    "/sys/fs/cgroup/fa/cgroup.procs" };
	static const char *const cfiles[] = { "cgroup.procs", "cgroup.threads", "cgroup.max.depth",
					     "cgroup.max.descendants", "cgroup.subtree_control",
					     "cgroup.type" };
	const char *p = PICK(dirs), *q = PICK(dirs);
	char path[160], num[32];
	int fd, n;

	switch (rnd() % 5) {
	case 0:
	case 1:
		name_op(p, q);
		break;
	case 2:
	case 3:
		/* self ("0"), a sibling, the parent, or a number in a random form */
		n = rnd() % 3 ? 0 : (int)getppid() + (int)(rnd() % 8);
		snprintf(num, sizeof(num), rnd() % 4 ? "%d" : " %d\n", rnd() % 8 ? n : -n);
		snprintf(path, sizeof(path), "%s/%s", p, PICK(cfiles));
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, num, strlen(num)) < 0) {
				/* an errno is the answer */
			}
			close(fd);
		}
		break;
	default:
		/* a directory kept open across its rmdir */
		fd = open(p, O_RDONLY | O_DIRECTORY);
		rmdir(p);
		if (fd >= 0) {
			int f = openat(fd, PICK(cfiles), O_RDWR);

			mkdirat(fd, "w", 0755);
			if (f >= 0) {
				if (write(f, "0", 1) < 0) {
					/* ENODEV once removed */
				}
				close(f);
			}
			close(fd);
		}
		break;
	}
}

static void child(uint64_t seed, int ops)
{
	int null = open("/dev/null", O_RDWR);
	static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC, O_WRONLY | O_APPEND,
				     O_RDWR | O_TRUNC };

	rs = seed;
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	alarm(60);
	for (int i = 0; i < ops; i++) {
		uint64_t w = rnd() % 5;
		const char *f = w < 2 && ntop ? top[rnd() % ntop] : w == 2 && nevf ? evf[rnd() % nevf] :
									      files[rnd() % nfiles];
		int fd, len, k = (int)(rnd() % 17);

		if (k == 0) {
			bpffs_op();
			continue;
		}
		if (k == 16) {
			cgroupfs_op();
			continue;
		}
		if (k == 1) {
			const char *s = strrchr(f, '/');

			if (s && !strcmp(s, "/id"))
				event_op(f);
			continue;
		}
		fd = open(f, modes[rnd() % 6] | O_NONBLOCK);
		if (fd < 0)
			continue;
		for (int j = (int)(rnd() % 4) + 1; j > 0; j--) {
			switch (rnd() % 4) {
			case 0:
			case 1:
				len = gen();
				if (write(fd, text, (size_t)len) < 0 && rnd() % 4 == 0)
					write(fd, text, (size_t)(rnd() % (unsigned)(len + 1)));
				break;
			case 2:
				if (pread(fd, text, rnd() % 2 ? rnd() % 64 : sizeof(text),
					  (off_t)(rnd() % 3 ? rnd() % 8192 : rnd() % 2 ? 0 : rnd() >> 1)) < 0)
					(void)read(fd, text, rnd() % 4096);
				break;
			default:
				lseek(fd, (off_t)(rnd() % 2 ? (int64_t)(rnd() % 9000) - 100 : (int64_t)rnd()),
				      (int)(rnd() % 5));
				(void)read(fd, text, rnd() % 512);
				break;
			}
		}
		close(fd);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	static const char *const roots[] = { "/sys", "/proc/sys", "/proc/self", "/proc" };
	int nchild = argc > 1 ? atoi(argv[1]) : 4, ops = argc > 2 ? atoi(argv[2]) : 2000;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	int st, n = 0, sig = 0;
	char sigs[256] = "";

	files = calloc(MAX_FILES, sizeof(*files));
	top = calloc(MAX_FILES, sizeof(*top));
	evf = calloc(MAX_FILES, sizeof(*evf));
	mkdir("/sys/fs", 0755);
	mkdir("/sys/fs/bpf", 0755);
	mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	mkdir("/sys/fs/cgroup", 0755);
	mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	mkdir("/sys/fs/cgroup/fa", 0755); /* its files are on the walk's list too */
	for (unsigned int r = 0; r < sizeof(roots) / sizeof(roots[0]); r++)
		walk(roots[r], strcmp(roots[r], "/proc") ? 0 : 8); /* /proc: its top level only */
	if (!nfiles) {
		printf("filefuzz: no files found\n");
		return 1;
	}
	for (int c = 0; c < nchild; c++)
		if (fork() == 0)
			child(seed * 6007 + (uint64_t)c * 92821 + 1, ops);
	while (wait(&st) > 0) {
		n++;
		if (WIFSIGNALED(st) && strlen(sigs) < 200)
			sprintf(sigs + strlen(sigs), " %d", WTERMSIG(st));
		sig += !WIFEXITED(st);
	}
	printf("filefuzz: seed %llu: %d files (%d control files, %d event files), %d children, %d ops each, "
	       "%d ended by a signal%s\n", (unsigned long long)seed, nfiles, ntop, nevf, n, ops, sig, sigs);
	return 0;
}
