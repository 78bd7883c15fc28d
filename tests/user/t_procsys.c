/*
 * t_procsys.c - the /proc and /sys files perf tools read: formats and values that must be
 * the same on perfkernel and on Linux 6.1 (run both: make run CMD=/bin/t_procsys, and
 * refvm.sh --smp 4 --overlay DIR -- /bin/t_procsys).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "tap.h"

static char buf[65536];

/* Read a whole file into buf (NUL-terminated): length or -errno. */
static long slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	long len = 0, n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return -errno;
	buf[len] = 0;
	return len;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* "0-3" -> 4 (comma lists too). */
static int count_cpulist(const char *s)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *e;
		long a = strtol(s, &e, 10), b = a;

		if (e == s)
			return -1;
		if (*e == '-')
			b = strtol(e + 1, &e, 10);
		n += (int)(b - a + 1);
		s = *e == ',' ? e + 1 : e;
	}
	return n;
}

static void check_int_file(const char *path, long *out)
{
	char what[256];
	char *e;
	long v;

	snprintf(what, sizeof(what), "%s is an integer line", path);
	if (slurp(path) < 0) {
		tap_fail(what, "read: %s", strerror(errno));
		return;
	}
	v = strtol(buf, &e, 10);
	CHECK(e != buf && strcmp(e, "\n") == 0, what, "contents \"%s\"", buf);
	if (out)
		*out = v;
}

static void test_sysctls(void)
{
	const char *p = "/proc/sys/kernel/perf_event_paranoid";
	long rate = 0, mlock = 0, stack = 0, kptr = -1, old = 0, v = 0;

	check_int_file("/proc/sys/kernel/perf_event_max_sample_rate", &rate);
	CHECK(rate >= 1 && rate <= 100000, "perf_event_max_sample_rate in 1..100000", "%ld", rate);
	check_int_file("/proc/sys/kernel/perf_event_mlock_kb", &mlock);
	CHECK(mlock == 516, "perf_event_mlock_kb is 516", "%ld", mlock);
	check_int_file("/proc/sys/kernel/perf_event_max_stack", &stack);
	CHECK(stack == 127, "perf_event_max_stack is 127", "%ld", stack);
	check_int_file("/proc/sys/kernel/kptr_restrict", &kptr);
	CHECK(kptr == 0, "kptr_restrict is 0", "%ld", kptr);
	check_int_file(p, &old);
	CHECK(old == 3, "perf_event_paranoid is Debian's 3", "%ld", old);
	CHECK(write_str(p, "2\n") == 0, "write perf_event_paranoid 2", "%s", strerror(errno));
	check_int_file(p, &v);
	CHECK(v == 2, "perf_event_paranoid reads back 2", "%ld", v);
	CHECK(write_str(p, "-1") == 0, "write perf_event_paranoid -1", "%s", strerror(errno));
	check_int_file(p, &v);
	CHECK(v == -1, "perf_event_paranoid reads back -1", "%ld", v);
	{
		int r = write_str(p, "abc");
		CHECK(r == -EINVAL, "write perf_event_paranoid abc is EINVAL", "%d", r);
	}
	{
		int r = write_str(p, "7x");
		CHECK(r == -EINVAL, "write perf_event_paranoid 7x is EINVAL", "%d", r);
	}
	{
		int r = write_str("/proc/sys/kernel/perf_event_max_sample_rate", "0");
		CHECK(r == -EINVAL, "perf_event_max_sample_rate 0 is EINVAL", "%d", r);
	}
	snprintf(buf, sizeof(buf), "%ld\n", old);
	CHECK(write_str(p, buf) == 0, "restore perf_event_paranoid", "%s", strerror(errno));
}

static void test_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char *e;
	unsigned long long midr;
	struct statfs sf;

	if (slurp("/sys/devices/system/cpu/online") < 0)
		tap_fail("cpu/online readable", "%s", strerror(errno));
	else
		CHECK(count_cpulist(buf) == online, "cpu/online matches _SC_NPROCESSORS_ONLN",
		      "\"%s\" vs %ld", buf, online);
	if (slurp("/sys/devices/system/cpu/possible") < 0)
		tap_fail("cpu/possible readable", "%s", strerror(errno));
	else
		CHECK(count_cpulist(buf) >= online, "cpu/possible covers the online CPUs", "%s", buf);
	if (slurp("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1") < 0) {
		tap_fail("midr_el1 readable", "%s", strerror(errno));
	} else {
		midr = strtoull(buf, &e, 16);
		CHECK(strlen(buf) == 19 && !strncmp(buf, "0x", 2) && *e == '\n' && midr >> 32 == 0,
		      "midr_el1 is 0x%016x", "\"%s\"", buf);
	}
	check_int_file("/sys/devices/system/cpu/cpu0/topology/core_id", NULL);
	check_int_file("/sys/devices/system/cpu/cpu0/topology/physical_package_id", NULL);
	if (slurp("/sys/devices/system/cpu/cpu0/topology/core_cpus_list") >= 0)
		CHECK(!strcmp(buf, "0\n"), "cpu0 core_cpus_list is 0", "\"%s\"", buf);
	else
		tap_fail("core_cpus_list readable", "%s", strerror(errno));
	CHECK(slurp("/sys/devices/system/cpu/cpu0/topology/die_id") == -ENOENT,
	      "arm64 has no topology/die_id", "%s", buf);
	CHECK(statfs("/sys", &sf) == 0 && sf.f_type == 0x62656572, "statfs /sys is sysfs",
	      "%lx", (long)sf.f_type);
	CHECK(statfs("/proc", &sf) == 0 && sf.f_type == 0x9fa0, "statfs /proc is proc", "%lx",
	      (long)sf.f_type);
	if (slurp("/proc/cpuinfo") > 0)
		CHECK(strstr(buf, "processor\t: 0\n") && strstr(buf, "CPU implementer\t: 0x") &&
		      strstr(buf, "CPU part\t: 0x") && strstr(buf, "Features\t: fp asimd"),
		      "cpuinfo has the arm64 fields", "%.200s", buf);
	else
		tap_fail("cpuinfo readable", "%s", strerror(errno));
}

static void test_pmu(void)
{
	const char *d = "/sys/bus/event_source/devices/";
	char path[256];
	long type = -1;

	snprintf(path, sizeof(path), "%sarmv8_pmuv3/type", d);
	check_int_file(path, &type);
	CHECK(type >= 6, "armv8_pmuv3 type is dynamic (>= PERF_TYPE_MAX)", "%ld", type);
	snprintf(path, sizeof(path), "%ssoftware/type", d);
	check_int_file(path, &type);
	CHECK(type == 1, "software type is 1", "%ld", type);
	snprintf(path, sizeof(path), "%sarmv8_pmuv3/format/event", d);
	CHECK(slurp(path) > 0 && !strcmp(buf, "config:0-15\n"), "format/event is config:0-15",
	      "\"%s\"", buf);
	snprintf(path, sizeof(path), "%sarmv8_pmuv3/events/cpu_cycles", d);
	CHECK(slurp(path) > 0 && !strcmp(buf, "event=0x0011\n"), "events/cpu_cycles", "\"%s\"",
	      buf);
	snprintf(path, sizeof(path), "%sarmv8_pmuv3/cpus", d);
	CHECK(slurp(path) > 0 && count_cpulist(buf) >= 1, "armv8_pmuv3/cpus is a cpulist",
	      "\"%s\"", buf);
	snprintf(path, sizeof(path), "%sarmv8_pmuv3/caps/slots", d);
	CHECK(slurp(path) == 11 && !strncmp(buf, "0x", 2), "caps/slots is 0x%%08x", "\"%s\"",
	      buf);
	snprintf(path, sizeof(path), "%sarmv8_pmuv3/type", d);
	{
		int fd = open(path, O_WRONLY);
		CHECK(fd < 0 && errno == EACCES, "sysfs type is not writable", "fd %d errno %d",
		      fd, errno);
		if (fd >= 0)
			close(fd);
	}
}

static void test_self(void)
{
	char want[64], *p;
	long n;
	int pid = getpid();
	struct stat st;

	if (slurp("/proc/self/status") < 0) {
		tap_fail("/proc/self/status readable", "%s", strerror(errno));
	} else {
		snprintf(want, sizeof(want), "\nPid:\t%d\n", pid);
		CHECK(strstr(buf, want) != NULL, "status Pid == getpid()", "%.300s", buf);
		CHECK(!strncmp(buf, "Name:\tt_procsys\nUmask:\t", 22), "status starts Name, Umask",
		      "%.60s", buf);
		snprintf(want, sizeof(want), "\nPPid:\t%d\n", getppid());
		CHECK(strstr(buf, want) != NULL, "status PPid == getppid()", "%.300s", buf);
	}
	if (slurp("/proc/self/comm") < 0)
		tap_fail("/proc/self/comm readable", "%s", strerror(errno));
	else
		CHECK(!strcmp(buf, "t_procsys\n"), "comm", "\"%s\"", buf);
	if (slurp("/proc/self/stat") < 0) {
		tap_fail("/proc/self/stat readable", "%s", strerror(errno));
	} else {
		int fields = 2; /* pid and comm, then one per blank after the ")" */

		snprintf(want, sizeof(want), "%d (t_procsys) R %d ", pid, getppid());
		CHECK(!strncmp(buf, want, strlen(want)), "stat starts pid (comm) R ppid", "%.80s",
		      buf);
		p = strrchr(buf, ')');
		for (; p && *p; p++)
			fields += *p == ' ';
		CHECK(fields == 52, "stat has 52 fields", "%d", fields);
	}
	n = slurp("/proc/self/maps");
	if (n <= 0) {
		tap_fail("/proc/self/maps readable", "%ld", n);
	} else {
		unsigned long a, b, self = (unsigned long)&test_self;
		char perms[8];
		int found = 0, stack = 0;

		for (p = buf; p && *p;) {
			char line[512], *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);

			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			memcpy(line, p, len);
			line[len] = 0;
			if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a <= self && self < b &&
			    perms[2] == 'x')
				found = strlen(line) > 73 && strstr(line + 73, "t_procsys") != NULL;
			if (strstr(line, " [stack]"))
				stack = 1;
			p = nl ? nl + 1 : NULL;
		}
		CHECK(found, "maps has the program text mapping with its file name", "%.400s",
		      buf);
		CHECK(stack, "maps has [stack]", "%.400s", buf);
	}
	n = readlink("/proc/self/exe", want, sizeof(want) - 1);
	if (n > 0)
		want[n] = 0;
	CHECK(n > 0 && strstr(want, "t_procsys") != NULL, "readlink /proc/self/exe", "%ld %s", n,
	      n > 0 ? want : strerror(errno));
	n = readlink("/proc/self", want, sizeof(want) - 1);
	if (n > 0)
		want[n] = 0;
	CHECK(n > 0 && atoi(want) == pid, "/proc/self -> pid", "%ld", n);
	snprintf(want, sizeof(want), "/proc/%d/task/%d", pid, pid);
	CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "/proc/PID/task/TID is a directory",
	      "%s", strerror(errno));
	n = slurp("/proc/self/cmdline");
	CHECK(n > 0 && strstr(buf, "t_procsys") != NULL, "cmdline has argv[0]", "%ld", n);
	CHECK(slurp("/proc/999999/status") == -ENOENT, "/proc/999999 does not exist", "%s", "");
}

/* /proc/kallsyms as perf reads it: "%016lx %c %s" lines (a "\t[module]" may follow), _stext,
 * and the kernel's functions (T/t) listed by name with their addresses. */
static void test_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type, rest[64];
	unsigned long long addr, text = 0, stext = 0;
	long funcs = 0, bad = 0, lines = 0;

	if (!CHECK(f != NULL, "kallsyms opens", "%s", strerror(errno)))
		return;
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%llx %c %255s %63s", &addr, &type, name, rest);
		size_t hex = strspn(line, "0123456789abcdef");

		lines++;
		if (n < 3 || hex != 16 || line[16] != ' ' || line[18] != ' ') {
			if (bad++ == 0)
				printf("# kallsyms: malformed line %ld: %s", lines, line);
			continue;
		}
		if ((type == 'T' || type == 't') && addr)
			funcs++;
		if (!strcmp(name, "_text"))
			text = addr;
		if (!strcmp(name, "_stext"))
			stext = addr;
	}
	fclose(f);
	CHECK(!bad && lines > 0, "kallsyms: every line is \"%016lx %c %s\"", "%ld of %ld malformed", bad, lines);
	/* Linux 6.1 on arm64 lists _stext but not _text (perf then relocates by _stext) */
	CHECK(stext && (!text || text <= stext), "kallsyms: _stext non-zero, any _text at or below it",
	      "_text %#llx _stext %#llx", text, stext);
	CHECK(funcs >= 500, "kallsyms: the kernel's functions by name (>= 500 T/t symbols)", "%ld", funcs);
}

static void test_misc(void)
{
	if (slurp("/proc/meminfo") > 0) {
		unsigned long tot = 0, fr = 0;
		CHECK(sscanf(buf, "MemTotal: %lu kB\nMemFree: %lu kB\n", &tot, &fr) == 2 &&
		      tot > 0 && fr <= tot && !strncmp(buf, "MemTotal:       ", 16),
		      "meminfo MemTotal/MemFree", "%.100s", buf);
		CHECK(strstr(buf, "\nMemAvailable:") != NULL, "meminfo MemAvailable", "%s", "");
	} else {
		tap_fail("meminfo readable", "%s", strerror(errno));
	}
	CHECK(slurp("/proc/version") > 0 && !strncmp(buf, "Linux version 6.1.", 18),
	      "/proc/version", "%.80s", buf);
	{
		double up = 0, idle = 0;
		CHECK(slurp("/proc/uptime") > 0 && sscanf(buf, "%lf %lf", &up, &idle) == 2 && up > 0,
		      "/proc/uptime", "%s", buf);
	}
	CHECK(slurp("/proc/mounts") > 0 && strstr(buf, " /sys sysfs ") && strstr(buf, " /proc proc "),
	      "/proc/mounts lists proc and sysfs", "%s", buf);
	CHECK(slurp("/proc/modules") >= 0, "/proc/modules readable", "%s", strerror(errno));
	CHECK(slurp("/proc/kallsyms") > 0 && strstr(buf, " T _stext\n"), "kallsyms has _stext",
	      "%.80s", buf);
	test_kallsyms();
	CHECK(slurp("/sys/devices/system/memory/block_size_bytes") > 0 &&
	      strtoul(buf, NULL, 16) > 0, "memory/block_size_bytes is hex", "%s", buf);
	CHECK(slurp("/sys/devices/system/node/node0/cpulist") > 0 && count_cpulist(buf) >= 1,
	      "node0/cpulist", "%s", buf);
}

int main(void)
{
	tap_init("t_procsys", 60);
	test_sysctls();
	test_cpus();
	test_pmu();
	test_self();
	test_misc();
	return tap_done();
}
