/* t_tracepoint: tracefs, mount(2), and tracepoints as perf events (PERF_TYPE_TRACEPOINT),
 * checked against Linux 6.1's ABI; passes on perfkernel and on Linux (refvm.sh).
 *
 *  1 mount/umount2 errnos: EFAULT (bad type pointer), ENOENT (no target), ENOTDIR (a file),
 *    ENODEV (unknown type), EINVAL (umount of a non-mount point, unknown umount flags); a
 *    tracefs mount on a new directory shows events/ and is listed in /proc/mounts until its
 *    umount2.
 *  2 tracefs at /sys/kernel/tracing (statfs TRACEFS_MAGIC): format files byte for byte as
 *    Linux 6.1 (Debian arm64) prints them, ids, available_events.
 *  3 counting: syscalls:sys_enter_getpid exactly N times per thread;
 *    exclude_kernel keeps the syscall events (they carry user registers) and drops the
 *    raw_syscalls ones (kernel registers); exclude_user drops nothing;
 *    sched:sched_process_fork per fork; an unknown id is EINVAL.
 *  4 sampling: PERF_SAMPLE_RAW of sys_enter_getpid, sys_exit_getpid and sys_enter_openat,
 *    byte for byte (size, common fields, syscall nr, arguments, ret, zeroed padding), and of
 *    signal:signal_generate for an ignored signal sent to ourselves.
 *  5 a write_backward ring: data_head runs down from 0, records read forward from it.
 *  6 BPF_PROG_TYPE_TRACEPOINT programs with SET_BPF: EINVAL for the wrong program type either
 *    way, EEXIST for a second one; the program sees the record (ctx + 8: __syscall_nr), runs
 *    at each hit, returning 0 drops the hit; closing the event detaches it.
 *  7 the helpers that take registers from ctx, in a tracepoint program (whose ctx holds them
 *    behind its first word): get_stackid and get_stack with BPF_F_USER_STACK give the getpid
 *    call's user stack (its first address in this program's text), bpf_perf_event_output puts
 *    a record with the program's bytes into a bpf-output event.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include "tracing.h"
#include "tap.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_MAGIC 0x74726163

/* ---- 1: mount ---- */

static void test_mount(void)
{
	char buf[8192];
	struct stat st;
	int fd;

	EXPECT_ERRNO(mount("none", "/tmp", (const char *)8, 0, NULL), EFAULT, "mount with a bad type pointer is EFAULT");
	EXPECT_ERRNO(mount("none", "/tmp/no/such/dir", "tracefs", 0, NULL), ENOENT, "mount on a missing target is ENOENT");
	fd = open("/tmp/t_tracepoint.file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	close(fd);
	EXPECT_ERRNO(mount("none", "/tmp/t_tracepoint.file", "tracefs", 0, NULL), ENOTDIR, "mount tracefs on a regular file is ENOTDIR");
	unlink("/tmp/t_tracepoint.file");
	EXPECT_ERRNO(mount("none", "/tmp", "nosuchfs", 0, NULL), ENODEV, "mount of an unknown filesystem type is ENODEV");
	EXPECT_ERRNO(umount2("/tmp", 0), EINVAL, "umount2 of a directory that is no mount point is EINVAL");
	EXPECT_ERRNO(umount2("/tmp", 0x100), EINVAL, "umount2 with unknown flags is EINVAL");
	EXPECT_ERRNO(umount2("/tmp/no/such", 0), ENOENT, "umount2 of a missing path is ENOENT");

	mkdir("/tmp/t_tracepoint.mnt", 0755);
	if (mount("nodev", "/tmp/t_tracepoint.mnt", "tracefs", 0, NULL)) {
		tap_fail("mount -t tracefs on a new directory", "%s", strerror(errno));
		return;
	}
	tap_pass("mount -t tracefs on a new directory");
	CHECK(stat("/tmp/t_tracepoint.mnt/events/sched/sched_switch/id", &st) == 0, "the mount shows events/sched/sched_switch/id", "%s", strerror(errno));
	read_file("/proc/mounts", buf, sizeof(buf));
	CHECK(strstr(buf, "nodev /tmp/t_tracepoint.mnt tracefs rw"), "/proc/mounts lists the tracefs mount", "%s", buf);
	CHECK(umount2("/tmp/t_tracepoint.mnt", 0) == 0, "umount2 of the tracefs mount", "%s", strerror(errno));
	CHECK(stat("/tmp/t_tracepoint.mnt/events", &st) == -1 && errno == ENOENT, "after umount2 the directory is empty again", "events still there");
	read_file("/proc/mounts", buf, sizeof(buf));
	CHECK(!strstr(buf, "/tmp/t_tracepoint.mnt"), "/proc/mounts no longer lists it", "%s", buf);
	rmdir("/tmp/t_tracepoint.mnt");
}

/* ---- 2: tracefs ---- */



/* As Linux 6.1 (Debian's arm64 kernel) prints them (tools/trace/linux-6.1-formats.txt). */
static const struct {
	const char *event, *text;
} formats[] = {
	{ "sched/sched_switch",
	  "name: sched_switch\n"
	  "ID: 264\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n" },
	{ "syscalls/sys_enter_getpid",
	  "name: sys_enter_getpid\n"
	  "ID: 181\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"\"\n" },
	{ "syscalls/sys_exit_getpid",
	  "name: sys_exit_getpid\n"
	  "ID: 180\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"0x%lx\", REC->ret\n" },
	{ "raw_syscalls/sys_exit",
	  "name: sys_exit\n"
	  "ID: 23\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	  "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n" },
	{ "sched/sched_process_exec",
	  "name: sched_process_exec\n"
	  "ID: 257\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	  "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	  "\n"
	  "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, REC->old_pid\n" },
	{ "syscalls/sys_enter_openat",
	  "name: sys_enter_openat\n"
	  "ID: 580\n"
	  "format:\n"
	  TRACE_COMMON_FIELDS
	  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
	  "\n"
	  "print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n" },
};

static void test_tracefs(void)
{
	char buf[8192], path[256];
	struct statfs sf;

	CHECK(statfs(TRACEFS, &sf) == 0 && sf.f_type == TRACEFS_MAGIC, "/sys/kernel/tracing is tracefs (statfs magic)", "f_type %lx",
			 (long)sf.f_type);
	read_file("/proc/mounts", buf, sizeof(buf));
	CHECK(strstr(buf, " /sys/kernel/tracing tracefs "), "/proc/mounts lists /sys/kernel/tracing", "%s", buf);
	for (unsigned i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char what[128];
		int n;

		snprintf(path, sizeof(path), TRACEFS "/events/%s/format", formats[i].event);
		snprintf(what, sizeof(what), "%s/format as Linux 6.1", formats[i].event);
		n = read_file(path, buf, sizeof(buf));
		CHECK(n > 0 && !strcmp(buf, formats[i].text), what, "read %d bytes: %.300s", n, n > 0 ? buf : "");
	}
	CHECK(event_id("sched/sched_switch") == 264 && event_id("syscalls/sys_enter_getpid") == 181 &&
	      event_id("raw_syscalls/sys_enter") == 24,
	      "ids as Linux 6.1 (sched_switch 264, sys_enter_getpid 181, sys_enter 24)",
	      "%ld %ld %ld", event_id("sched/sched_switch"), event_id("syscalls/sys_enter_getpid"),
	      event_id("raw_syscalls/sys_enter"));
	static char avail[200000];
	read_file(TRACEFS "/available_events", avail, sizeof(avail));
	CHECK(strstr(avail, "sched:sched_switch\n") && strstr(avail, "syscalls:sys_enter_openat\n") &&
	    strstr(avail, "raw_syscalls:sys_exit\n"), "available_events lists sched_switch, sys_enter_openat, sys_exit", "missing");
	CHECK(read_file(TRACEFS "/events/sched/sched_switch/enable", buf, sizeof(buf)) > 0 &&
	    !strcmp(buf, "0\n"), "events/sched/sched_switch/enable reads 0", "%s", buf);
	CHECK(read_file(TRACEFS "/events/sched/sched_switch/filter", buf, sizeof(buf)) > 0 &&
	    !strcmp(buf, "none\n"), "events/sched/sched_switch/filter reads none", "%s", buf);
}

/* ---- 3: counting ---- */

static void tp_attr(struct perf_event_attr *a, long id)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = (uint64_t)id;
	a->disabled = 1;
}

static long count_getpid(long id, int n, int excl_user, int excl_kernel)
{
	struct perf_event_attr a;
	uint64_t v = 0;
	int fd;

	tp_attr(&a, id);
	a.exclude_user = excl_user;
	a.exclude_kernel = excl_kernel;
	fd = (int)peo(&a, 0, -1, -1, 0);
	if (fd < 0)
		return -errno - 1000;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < n; i++)
		syscall(SYS_getpid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		v = (uint64_t)-1;
	close(fd);
	return (long)v;
}

static void test_count(void)
{
	long id = event_id("syscalls/sys_enter_getpid"), raw = event_id("raw_syscalls/sys_enter");
	long fork_id = event_id("sched/sched_process_fork"), c;
	struct perf_event_attr a;
	int fd;

	static const struct {
		const char *what;
		bool raw;
		int n, excl_user, excl_kernel;
		long min, max;
	} cases[] = {
		{ "syscalls:sys_enter_getpid counts 100 getpid calls", false, 100, 0, 0, 100, 100 },
		{ "exclude_kernel keeps syscall events (user registers)", false, 50, 0, 1, 50, 50 },
		{ "exclude_user does not drop tracepoint hits (perf_tp_event_match)", false, 50, 1, 0,
		  50, 50 },
		{ "raw_syscalls:sys_enter counts at least the getpid calls", true, 50, 0, 0, 50, 60 },
		{ "exclude_kernel drops raw_syscalls events (kernel registers)", true, 50, 0, 1, 0, 0 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = count_getpid(cases[i].raw ? raw : id, cases[i].n, cases[i].excl_user,
				 cases[i].excl_kernel);
		if (c >= cases[i].min && c <= cases[i].max)
			tap_pass(cases[i].what);
		else
			tap_fail(cases[i].what, "%ld", c);
	}

	tp_attr(&a, fork_id);
	fd = (int)peo(&a, 0, -1, -1, 0);
	if (fd < 0) {
		tap_fail("sched:sched_process_fork counts 3 forks", "open: %s", strerror(errno));
	} else {
		uint64_t v = 0;

		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (int i = 0; i < 3; i++) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			waitpid(p, NULL, 0);
		}
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &v, sizeof(v)) == sizeof(v) && v == 3)
			tap_pass("sched:sched_process_fork counts 3 forks");
		else
			tap_fail("sched:sched_process_fork counts 3 forks", "%llu",
				 (unsigned long long)v);
		close(fd);
	}
	tp_attr(&a, 0xfffff);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an unknown tracepoint id is EINVAL");
}

/* ---- 4: sampling ---- */

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t size;
};

static int ring_open(struct ring *r, long id)
{
	struct perf_event_attr a;

	tp_attr(&a, id);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	r->fd = (int)peo(&a, 0, -1, -1, 0);
	if (r->fd < 0)
		return -1;
	r->size = 3 * 4096;
	r->pg = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	return r->pg == MAP_FAILED ? -1 : 0;
}

/* The raw data of the first sample: its size, copied to out (at most 256 bytes); -1: none. */
static int ring_first_raw(struct ring *r, uint8_t *out, uint32_t *pid, uint32_t *tid)
{
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE), pos = 0;
	uint8_t *data = (uint8_t *)r->pg + 4096;

	while (pos < head) {
		struct perf_event_header *h = (void *)(data + pos % (r->size - 4096));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint32_t *p = (uint32_t *)(h + 1), sz = p[2];

			*pid = p[0];
			*tid = p[1];
			if (sz > 256)
				return -1;
			memcpy(out, &p[3], sz);
			return (int)sz;
		}
		pos += h->size;
	}
	return -1;
}

static void ring_close(struct ring *r)
{
	munmap(r->pg, r->size);
	close(r->fd);
}

static void check_raw(const char *what, const uint8_t *got, int n, const uint8_t *want,
		      int wn)
{
	if (n == wn && !memcmp(got, want, (size_t)n)) {
		tap_pass(what);
		return;
	}
	char hex[600];
	int k = 0;

	for (int i = 0; i < n && k < 590; i++)
		k += snprintf(hex + k, sizeof(hex) - k, "%02x", got[i]);
	hex[k] = 0;
	tap_fail(what, "size %d (want %d): %s", n, wn, hex);
}

static void put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
}

static void common(uint8_t *rec, long id)
{
	uint16_t type = (uint16_t)id;
	int32_t tid = (int32_t)syscall(SYS_gettid);

	memset(rec, 0, 8);
	put(rec, &type, 2);
	put(rec + 4, &tid, 4);
}

static void test_sample(void)
{
	struct ring r;
	uint8_t got[256], want[256];
	uint32_t pid, tid;
	long id = event_id("syscalls/sys_enter_getpid");
	int n;
	int32_t nr = SYS_getpid;

	if (ring_open(&r, id)) {
		tap_fail("sys_enter_getpid sample", "open/mmap: %s", strerror(errno));
		return;
	}
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	syscall(SYS_getpid);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	n = ring_first_raw(&r, got, &pid, &tid);
	memset(want, 0, sizeof(want));
	common(want, id);
	put(want + 8, &nr, 4);
	check_raw("sys_enter_getpid raw record: 20 bytes, common fields, nr, zero padding", got, n,
		  want, 20);
	CHECK(pid == (uint32_t)getpid() && tid == (uint32_t)syscall(SYS_gettid), "sys_enter_getpid sample pid/tid", "%u/%u", pid, tid);
	ring_close(&r);

	id = event_id("syscalls/sys_exit_getpid");
	if (ring_open(&r, id)) {
		tap_fail("sys_exit_getpid sample", "open/mmap: %s", strerror(errno));
		return;
	}
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	long ret = syscall(SYS_getpid);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	n = ring_first_raw(&r, got, &pid, &tid);
	memset(want, 0, sizeof(want));
	common(want, id);
	put(want + 8, &nr, 4);
	put(want + 16, &ret, 8);
	check_raw("sys_exit_getpid raw record: nr and ret", got, n, want, 28);
	ring_close(&r);

	id = event_id("syscalls/sys_enter_openat");
	if (ring_open(&r, id)) {
		tap_fail("sys_enter_openat sample", "open/mmap: %s", strerror(errno));
		return;
	}
	static const char path[] = "/proc/self/stat";
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	int fd = (int)syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_RDONLY | O_CLOEXEC), 0L);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	close(fd);
	n = ring_first_raw(&r, got, &pid, &tid);
	memset(want, 0, sizeof(want));
	common(want, id);
	nr = SYS_openat;
	put(want + 8, &nr, 4);
	uint64_t args[4] = { (uint64_t)(long)AT_FDCWD, (uint64_t)(uintptr_t)path,
			     O_RDONLY | O_CLOEXEC, 0 };
	put(want + 16, args, sizeof(args));
	check_raw("sys_enter_openat raw record: dfd, filename, flags, mode", got, n, want, 52);
	ring_close(&r);

	/* signal_generate of an ignored SIGUSR2 to ourselves: result 1 (TRACE_SIGNAL_IGNORED) */
	id = event_id("signal/signal_generate");
	if (ring_open(&r, id)) {
		tap_fail("signal_generate sample", "open/mmap: %s", strerror(errno));
		return;
	}
	signal(SIGUSR2, SIG_IGN);
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	kill(getpid(), SIGUSR2);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	n = ring_first_raw(&r, got, &pid, &tid);
	memset(want, 0, sizeof(want));
	common(want, id);
	int32_t gen[3] = { SIGUSR2, 0, SI_USER }, tail[3] = { (int32_t)getpid(), 1, 1 };
	put(want + 8, gen, sizeof(gen));
	prctl(PR_GET_NAME, (unsigned long)(want + 20), 0, 0, 0);
	put(want + 36, tail, sizeof(tail));
	want[2] = 1; /* common_flags: TRACE_FLAG_IRQS_OFF, sent under the siglock */
	/* Linux also sets TRACE_FLAG_NEED_RESCHED (0x04) and TRACE_FLAG_PREEMPT_RESCHED (0x20)
	 * when a reschedule happens to be pending at that instant (seen as 0x25 on Linux 6.1):
	 * scheduling state, not the record's layout */
	if (n > 2)
		got[2] &= (uint8_t)~0x24;
	check_raw("signal_generate raw record: sig, errno, code, comm, pid, group, result", got, n,
		  want, 52);
	ring_close(&r);
}

/* ---- 5: a backward ring (write_backward, read-only mapping) ---- */

static void test_backward(void)
{
	struct perf_event_attr a;
	long id = event_id("syscalls/sys_exit_getpid");
	size_t size = 2 * 4096;
	int fd;

	tp_attr(&a, id);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	a.write_backward = 1;
	fd = (int)peo(&a, 0, -1, -1, 0);
	if (fd < 0) {
		tap_fail("write_backward ring", "open: %s", strerror(errno));
		return;
	}
	struct perf_event_mmap_page *pg = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

	if (pg == MAP_FAILED) {
		tap_fail("write_backward ring", "mmap: %s", strerror(errno));
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *data = (const uint8_t *)pg + 4096;
	/* each sample: header 8, raw size 4, raw 28 (sys_exit_getpid): 40 bytes */
	CHECK(head == (uint64_t)-120, "write_backward: data_head runs down from 0 (3 x 40 bytes)",
	      "data_head %llx", (unsigned long long)head);
	int ok = 1;

	for (uint64_t off = head; off != 0 && ok; off += 40) {
		const struct perf_event_header *h = (const void *)(data + (off & 4095));

		ok = h->type == PERF_RECORD_SAMPLE && h->size == 40;
	}
	CHECK(ok, "write_backward: the records read forward from data_head", "bad record");
	munmap(pg, size);
	close(fd);
}

/* ---- 6: BPF_PROG_TYPE_TRACEPOINT programs ---- */

static void test_bpf(void)
{
	long id = event_id("syscalls/sys_enter_getpid");
	struct perf_event_attr a;
	uint64_t v[2], count = 0;
	int map, tp_prog, tp_prog0, pe_prog, fd, sw;

	map = bpf_count_map();
	tp_prog = bpf_count_prog(BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_TRACEPOINT, map, 1, BPF_W, 8);
	tp_prog0 = bpf_count_prog(BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_TRACEPOINT, map, 0, BPF_W, 8);
	pe_prog = bpf_count_prog(BPF_PROG_TYPE_PERF_EVENT, BPF_PROG_TYPE_TRACEPOINT, map, 1, BPF_W, 8);
	if (map < 0 || tp_prog < 0 || tp_prog0 < 0 || pe_prog < 0) {
		tap_fail("BPF_PROG_TYPE_TRACEPOINT programs load", "%d %d %d %d: %s", map, tp_prog,
			 tp_prog0, pe_prog, strerror(errno));
		return;
	}
	tp_attr(&a, id);
	fd = (int)peo(&a, 0, -1, -1, 0);
	sw = sw_sampling_fd();
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, pe_prog), EINVAL,
		     "SET_BPF of a PERF_EVENT program on a tracepoint event is EINVAL");
	EXPECT_ERRNO(ioctl(sw, PERF_EVENT_IOC_SET_BPF, tp_prog), EINVAL,
		     "SET_BPF of a TRACEPOINT program on a software event is EINVAL");
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, tp_prog),
		  "SET_BPF of a TRACEPOINT program on sys_enter_getpid");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, tp_prog), EEXIST,
		     "a second SET_BPF is EEXIST");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++)
		syscall(SYS_getpid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	bpf_count_value(map, v);
	/* the program runs for every getpid on the machine: at least ours */
	CHECK(v[0] >= 10 && v[0] < 20 && v[1] == SYS_getpid,
	      "the program ran for each getpid and read __syscall_nr from its ctx", "runs %llu nr %llu",
	      (unsigned long long)v[0], (unsigned long long)v[1]);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = ~0ull;
	CHECK(count == 10, "returning 1 keeps the hits: the event counted 10", "%llu",
	      (unsigned long long)count);
	close(fd);
	bpf_count_value(map, v);
	count = v[0];
	for (int i = 0; i < 5; i++)
		syscall(SYS_getpid);
	bpf_count_value(map, v);
	CHECK(v[0] == count, "closing the event takes its program off the tracepoint",
	      "runs %llu after %llu", (unsigned long long)v[0], (unsigned long long)count);

	tp_attr(&a, id);
	fd = (int)peo(&a, 0, -1, -1, 0);
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, tp_prog0), "SET_BPF of a program returning 0");
	bpf_count_value(map, v);
	uint64_t runs0 = v[0];

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++)
		syscall(SYS_getpid);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	bpf_count_value(map, v);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = ~0ull;
	CHECK(count == 0 && v[0] >= runs0 + 10,
	      "returning 0 drops the hits: the program ran, the event counted 0",
	      "count %llu runs %llu", (unsigned long long)count, (unsigned long long)(v[0] - runs0));
	close(fd);
	close(sw);
	close(tp_prog);
	close(tp_prog0);
	close(pe_prog);
	close(map);
}

/* ---- 7: helpers with registers from a tracepoint ctx ---- */

extern char __executable_start[], etext[];

static bool in_text(uint64_t ip)
{
	return ip >= (uintptr_t)__executable_start && ip < (uintptr_t)etext;
}

static int map_new(uint32_t type, uint32_t ks, uint32_t vs, uint32_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = n;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)

static void test_bpf_regs(void)
{
	long id = event_id("syscalls/sys_enter_getpid");
	int stacks = map_new(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 16, 16);
	int vals = map_new(BPF_MAP_TYPE_ARRAY, 4, 8 * 16, 1);
	int outs = map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1);
	/* value = vals[0]; value[0] = get_stackid(ctx, stacks, USER); get_stack(ctx, value + 8,
	 * 64, USER); perf_event_output(ctx, outs, CURRENT_CPU, "tp-regs!", 8) */
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
		LD_MAP(1, vals),
		MOV64_REG(2, 10),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 25, 0), /* NULL: to the end */
		MOV64_REG(7, 0),
		MOV64_REG(1, 6),
		LD_MAP(2, stacks),
		MOV64_IMM(3, BPF_F_USER_STACK),
		CALL(BPF_FUNC_get_stackid),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 7, 0, 0, 0),
		MOV64_REG(1, 6),
		MOV64_REG(2, 7),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, 8),
		MOV64_IMM(3, 64),
		MOV64_IMM(4, BPF_F_USER_STACK),
		CALL(BPF_FUNC_get_stack),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 0x722d7074), /* "tp-regs!" */
		INSN(0, 0, 0, 0, 0x21736765),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -16, 0),
		MOV64_REG(1, 6),
		LD_MAP(2, outs),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 3, 0, 0, (int32_t)BPF_F_CURRENT_CPU),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(4, 10),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, -16),
		MOV64_IMM(5, 8),
		CALL(BPF_FUNC_perf_event_output),
		MOV64_IMM(0, 1),
		EXIT(),
	};
	static char vlog[16384];
	struct perf_event_attr a;
	union bpf_attr ba;
	uint64_t value[16], ips[16];
	uint32_t key = 0;
	cpu_set_t cpus;
	int prog, tp, out;
	void *ring;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus); /* the bpf-output event is CPU 0's */
	memset(&ba, 0, sizeof(ba));
	ba.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	ba.insns = (uintptr_t)p;
	ba.insn_cnt = sizeof(p) / sizeof(p[0]);
	ba.license = (uintptr_t) "GPL";
	ba.log_level = 1;
	ba.log_buf = (uintptr_t)vlog;
	ba.log_size = sizeof(vlog);
	prog = (int)sys_bpf(BPF_PROG_LOAD, &ba);
	if (!CHECK(stacks >= 0 && vals >= 0 && outs >= 0 && prog >= 0,
		   "a tracepoint program calling get_stackid, get_stack and perf_event_output loads",
		   "maps %d %d %d prog %d: %s: ...%s", stacks, vals, outs, prog, strerror(errno),
		   vlog + (strlen(vlog) > 300 ? strlen(vlog) - 300 : 0)))
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = PERF_SAMPLE_RAW;
	a.wakeup_events = 1;
	out = (int)peo(&a, -1, 0, -1, 0);
	ring = out >= 0 ? mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0) : MAP_FAILED;
	memset(&ba, 0, sizeof(ba));
	ba.map_fd = outs;
	ba.key = (uintptr_t)&key;
	ba.value = (uintptr_t)&out;
	if (!CHECK(ring != MAP_FAILED && !sys_bpf(BPF_MAP_UPDATE_ELEM, &ba),
		   "a bpf-output event on CPU 0 in the PERF_EVENT_ARRAY", "%s", strerror(errno)))
		return;
	tp_attr(&a, id);
	tp = (int)peo(&a, 0, -1, -1, 0);
	EXPECT_OK(ioctl(tp, PERF_EVENT_IOC_SET_BPF, prog), "SET_BPF of the program on sys_enter_getpid");
	ioctl(tp, PERF_EVENT_IOC_ENABLE, 0);
	syscall(SYS_getpid);
	ioctl(tp, PERF_EVENT_IOC_DISABLE, 0);
	memset(&ba, 0, sizeof(ba));
	ba.map_fd = vals;
	ba.key = (uintptr_t)&key;
	ba.value = (uintptr_t)value;
	memset(value, 0xff, sizeof(value));
	sys_bpf(BPF_MAP_LOOKUP_ELEM, &ba);
	memset(ips, 0, sizeof(ips));
	memset(&ba, 0, sizeof(ba));
	ba.map_fd = stacks;
	ba.key = (uintptr_t)&value[0];
	ba.value = (uintptr_t)ips;
	CHECK((int64_t)value[0] >= 0 && !sys_bpf(BPF_MAP_LOOKUP_ELEM, &ba) && in_text(ips[0]),
	      "get_stackid(USER) from a tracepoint: the getpid call's user stack, in our text",
	      "id %lld, ip %#llx", (long long)value[0], (unsigned long long)ips[0]);
	CHECK(in_text(value[1]) && value[1] == ips[0],
	      "get_stack(USER) from a tracepoint: the same first address", "%#llx vs %#llx",
	      (unsigned long long)value[1], (unsigned long long)ips[0]);
	{
		struct perf_event_mmap_page *up = ring;
		uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
		const uint8_t *d = (const uint8_t *)ring + 4096;
		const struct perf_event_header *h = (const void *)d;
		uint32_t size = head >= 8 + 4 ? *(const uint32_t *)(d + 8) : 0;

		CHECK(head > 0 && h->type == PERF_RECORD_SAMPLE && size >= 8 && !memcmp(d + 12, "tp-regs!", 8),
		      "perf_event_output from a tracepoint: a sample with the program's 8 bytes",
		      "head %llu type %u size %u", (unsigned long long)head, head ? h->type : 0, size);
	}
	close(tp);
	close(out);
	close(prog);
	close(stacks);
	close(vals);
	close(outs);
	CPU_ZERO(&cpus);
	for (int c = 0; c < 64; c++)
		CPU_SET(c, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
}

int main(void)
{
	tap_init("t_tracepoint", 66);
	test_mount();
	test_tracefs();
	test_count();
	test_sample();
	test_backward();
	test_bpf();
	test_bpf_regs();
	return tap_done();
}
