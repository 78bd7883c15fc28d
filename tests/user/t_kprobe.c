/* t_kprobe: the kprobe PMU (perf_event_open with the type from
 * /sys/bus/event_source/devices/kprobe/type), checked against Linux 6.1's ABI; passes on
 * perfkernel and on Linux (refvm.sh).  The probed function is the kernel's getpid handler,
 * found by name in /proc/kallsyms (__arm64_sys_getpid on Linux, sys_getpid here).
 *
 *  1 sysfs: type, format/retprobe "config:0".
 *  2 errnos: no symbol and no address (EINVAL), an unknown symbol (ENOENT), an empty name
 *    (EINVAL), a bad name pointer (EFAULT), an offset not on an instruction (EINVAL).
 *  3 counting: N getpid calls count N while enabled, none while disabled; by symbol and by
 *    address (config1 0, config2 the address).
 *  4 sampling: PERF_SAMPLE_IP is the probe (a kernel address), TID ours.
 *  5 BPF_PROG_TYPE_KPROBE: SET_BPF (EINVAL for a TRACEPOINT program), the program runs at
 *    each hit and 0 from it drops the hit.
 *  6 return probes (config:0): EINVAL past the function's first instruction; N calls count N
 *    returns; a sample's IP is where the handler returns to (a kernel address) and its
 *    PERF_SAMPLE_RAW the kretprobe record: 28 bytes, the function and that return address.
 *  7 PERF_EVENT_IOC_SET_FILTER on kprobe events: the common and generic fields filter what
 *    counts; the record's own (__probe_ip, __probe_func) are not known to a perf-local probe
 *    (its event was never added to tracefs, which defines the fields): EINVAL.
 *  8 kprobe_events: p: and r: definitions (default group kprobes and name p_SYM_0), listed with
 *    a return probe's maxactive, their format files, PERF_TYPE_TRACEPOINT events on their ids
 *    count the calls and returns and sample the records, kprobe_profile counts the hits;
 *    ENOENT, EINVAL, EEXIST as Linux; -: and O_TRUNC delete them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "tracing.h"
#include "tap.h"

static int kprobe_type = -1;
static const char *getpid_sym;
static uint64_t getpid_addr;

static void kp_attr(struct perf_event_attr *a, const char *sym, uint64_t off, bool ret)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)kprobe_type;
	a->config = ret;
	a->config1 = (uintptr_t)sym;
	a->config2 = off;
}

static void test_sysfs(void)
{
	char buf[128];

	CHECK(read_file("/sys/bus/event_source/devices/kprobe/type", buf, sizeof(buf)) > 0 &&
		      (kprobe_type = atoi(buf)) > 0,
	      "/sys/bus/event_source/devices/kprobe/type", "%s", buf);
	CHECK(read_file("/sys/bus/event_source/devices/kprobe/format/retprobe", buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, "config:0\n"),
	      "format/retprobe is config:0", "'%s'", buf);
}

static void test_errnos(void)
{
	struct perf_event_attr a;

	kp_attr(&a, NULL, 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "no symbol and no address is EINVAL");
	kp_attr(&a, "no_such_function_here", 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), ENOENT, "an unknown symbol is ENOENT");
	kp_attr(&a, "", 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an empty symbol is EINVAL");
	kp_attr(&a, (const char *)8, 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EFAULT, "a bad symbol pointer is EFAULT");
	kp_attr(&a, getpid_sym, 2, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an offset inside an instruction is EINVAL");
}

static void test_count(void)
{
	struct perf_event_attr a;
	int fd, fa;

	kp_attr(&a, getpid_sym, 0, false);
	fd = (int)peo(&a, 0, -1, -1, 0);
	if (!CHECK(fd >= 0, "a kprobe on the getpid handler opens", "%s: %s", getpid_sym, strerror(errno)))
		return;
	for (int i = 0; i < 50; i++)
		syscall(SYS_getpid);
	uint64_t c = count_of(fd);

	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < 10; i++)
		syscall(SYS_getpid);
	CHECK(c == 50 && count_of(fd) == 50, "50 getpid calls count 50, none while disabled",
	      "%llu then %llu", (unsigned long long)c, (unsigned long long)count_of(fd));
	close(fd);

	kp_attr(&a, NULL, getpid_addr, false);
	fa = (int)peo(&a, 0, -1, -1, 0);
	for (int i = 0; i < 7; i++)
		syscall(SYS_getpid);
	CHECK(fa >= 0 && count_of(fa) == 7, "by address (config1 0, config2 the address): 7 of 7",
	      "fd %d count %llu", fa, (unsigned long long)count_of(fa));
	if (fa >= 0)
		close(fa);
}

static void test_sample(void)
{
	struct perf_event_attr a;
	size_t size = 3 * 4096;

	kp_attr(&a, getpid_sym, 0, false);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	int fd = (int)peo(&a, 0, -1, -1, 0);
	struct perf_event_mmap_page *pg = fd < 0 ? MAP_FAILED :
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (!CHECK(pg != MAP_FAILED, "a sampling kprobe event with a ring", "%s", strerror(errno)))
		return;
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpid);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), pos = 0;
	int n = 0, good = 0;

	while (pos < head) {
		struct perf_event_header *h = (void *)((char *)pg + 4096 + pos % (size - 4096));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t ip;
			uint32_t pid, tid;

			memcpy(&ip, h + 1, 8);
			memcpy(&pid, (char *)(h + 1) + 8, 4);
			memcpy(&tid, (char *)(h + 1) + 12, 4);
			n++;
			good += ip == getpid_addr && pid == (uint32_t)getpid() && tid == (uint32_t)gettid() &&
				(h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		}
		pos += h->size;
	}
	CHECK(n == 3 && good == 3, "3 calls, 3 kernel samples at the probe with our pid/tid",
	      "%d samples, %d right", n, good);
	munmap(pg, size);
	close(fd);
}

static void test_retprobe(void)
{
	struct perf_event_attr a;
	size_t size = 3 * 4096;

	kp_attr(&a, getpid_sym, 4, true);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "a return probe past the entry is EINVAL");
	kp_attr(&a, getpid_sym, 0, true);
	int fd = (int)peo(&a, 0, -1, -1, 0);

	if (!CHECK(fd >= 0, "a return probe on the getpid handler opens", "%s", strerror(errno)))
		return;
	for (int i = 0; i < 20; i++)
		syscall(SYS_getpid);
	CHECK(count_of(fd) == 20, "20 calls count 20 returns", "%llu",
	      (unsigned long long)count_of(fd));
	close(fd);

	kp_attr(&a, getpid_sym, 0, true);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW;
	fd = (int)peo(&a, 0, -1, -1, 0);
	struct perf_event_mmap_page *pg = fd < 0 ? MAP_FAILED :
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (!CHECK(pg != MAP_FAILED, "a sampling return probe with a ring", "%s", strerror(errno)))
		return;
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpid);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), pos = 0;
	int n = 0, good = 0;
	char why[160] = "";

	while (pos < head) {
		struct perf_event_header *h = (void *)((char *)pg + 4096 + pos % (size - 4096));

		if (h->type == PERF_RECORD_SAMPLE) {
			const char *p = (const char *)(h + 1);
			uint64_t ip, func, ret;
			uint32_t rsize;

			memcpy(&ip, p, 8);
			memcpy(&rsize, p + 8, 4);
			memcpy(&func, p + 12 + 8, 8);
			memcpy(&ret, p + 12 + 16, 8);
			n++;
			good += rsize == 28 && func == getpid_addr && ret == ip &&
				ip >= 0xffff000000000000ull && ip != getpid_addr;
			snprintf(why, sizeof(why), "size %u func %llx ret %llx ip %llx", rsize,
				 (unsigned long long)func, (unsigned long long)ret,
				 (unsigned long long)ip);
		}
		pos += h->size;
	}
	CHECK(n == 3 && good == 3,
	      "3 returns, 3 samples at the return address with the kretprobe record",
	      "%d samples, %d right (%s)", n, good, why);
	munmap(pg, size);
	close(fd);
}

static void count_filtered(bool ret, const char *fmt, uint64_t v, uint64_t want)
{
	struct perf_event_attr a;
	char f[128], what[192];
	int fd, r;

	snprintf(f, sizeof(f), fmt, (long long)v);
	kp_attr(&a, getpid_sym, 0, ret);
	a.disabled = 1;
	fd = (int)peo(&a, 0, -1, -1, 0);
	r = fd < 0 ? -1 : ioctl(fd, PERF_EVENT_IOC_SET_FILTER, f);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 6; i++)
		syscall(SYS_getpid);
	snprintf(what, sizeof(what), "%s filter [%.40s...] counts %llu of 6", ret ? "return" : "entry",
		 fmt, (unsigned long long)want);
	CHECK(r == 0 && count_of(fd) == want, what, "set %d (%s), count %llu", r, strerror(errno),
	      (unsigned long long)count_of(fd));
	if (fd >= 0)
		close(fd);
}

static void test_filter(void)
{
	struct perf_event_attr a;
	int fd;

	count_filtered(false, "common_pid == %lld", (uint64_t)gettid(), 6);
	count_filtered(false, "common_pid != %lld || comm ~ \"x*\"", (uint64_t)gettid(), 0);
	count_filtered(true, "common_pid == %lld && cpu >= 0", (uint64_t)gettid(), 6);
	count_filtered(true, "common_pid == %lld && comm == \"nope\"", (uint64_t)gettid(), 0);
	for (int ret = 0; ret < 2; ret++) {
		kp_attr(&a, getpid_sym, 0, ret);
		fd = (int)peo(&a, 0, -1, -1, 0);
		EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ret ? "__probe_func == 1" : "__probe_ip == 1"),
			     EINVAL, ret ? "a return probe's __probe_func is not a filter field: EINVAL"
				 : "an entry probe's __probe_ip is not a filter field: EINVAL");
		if (fd >= 0)
			close(fd);
	}
}

#define KE "/sys/kernel/tracing/kprobe_events"

static void test_kprobe_events(void)
{
	char line[256], want[512], buf[2048];
	long nc = sysconf(_SC_NPROCESSORS_CONF);
	int r;

	snprintf(line, sizeof(line), "p:kpt/getpid_entry %s\nr:kpt/getpid_ret %s\np %s\n", getpid_sym,
		 getpid_sym, getpid_sym);
	r = write_file(KE, line, O_TRUNC);
	if (!CHECK(r == 0, "kprobe_events takes p:, r: and p definitions", "%s", strerror(-r)))
		return;
	snprintf(want, sizeof(want), "p:kpt/getpid_entry %s\nr%ld:kpt/getpid_ret %s\np:kprobes/p_%s_0 %s\n",
		 getpid_sym, nc * 2 > 10 ? nc * 2 : 10, getpid_sym, getpid_sym, getpid_sym);
	CHECK(read_file(KE, buf, sizeof(buf)) > 0 && !strcmp(buf, want),
	      "kprobe_events lists them (rN: the default maxactive)", "[%s] want [%s]", buf, want);
	long ide = event_id("kpt/getpid_entry"), idr = event_id("kpt/getpid_ret");
	char path[128];

	snprintf(want, sizeof(want),
		 "name: getpid_ret\nID: %ld\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
		 "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n\n"
		 "print fmt: \"(%%lx <- %%lx)\", REC->__probe_func, REC->__probe_ret_ip\n", idr);
	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kpt/getpid_ret/format");
	CHECK(ide > 0 && idr == ide + 1 && read_file(path, buf, sizeof(buf)) > 0 && !strcmp(buf, want),
	      "events/kpt/getpid_ret/format as Linux's kretprobe events", "ids %ld %ld [%s]", ide, idr, buf);

	int fe = tp_open(ide, 0, 0), fr = tp_open(idr, 0, 0), err_r = errno, fs = tp_open(ide, 0, 1);
	size_t size = 3 * 4096;
	struct perf_event_mmap_page *pg =
		fs < 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fs, 0);

	ioctl(fe, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fr, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fs, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 9; i++)
		syscall(SYS_getpid);
	ioctl(fs, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fe, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fr, PERF_EVENT_IOC_DISABLE, 0);
	CHECK(count_of(fe) == 9 && count_of(fr) == 9,
	      "tracepoint events on them count 9 calls and 9 returns", "%llu %llu (open %d %d: %s)",
	      (unsigned long long)count_of(fe), (unsigned long long)count_of(fr), fe, fr,
	      strerror(err_r));
	uint32_t rsize = 0;
	uint16_t type = 0;
	uint64_t ip = 0;

	if (pg != MAP_FAILED && __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE)) {
		const char *d = (const char *)pg + 4096 + 8;

		memcpy(&rsize, d, 4);
		memcpy(&type, d + 4, 2);
		memcpy(&ip, d + 4 + 8, 8);
	}
	CHECK(rsize == 20 && type == ide && ip == getpid_addr,
	      "a sample's raw record: 20 bytes, the event's id, __probe_ip the function",
	      "size %u type %u ip %llx", rsize, type, (unsigned long long)ip);
	if (pg != MAP_FAILED)
		munmap(pg, size);
	close(fe);
	close(fr);
	close(fs);
	char pe[128], pr[128];

	snprintf(pe, sizeof(pe), "  %-44s %15u %15u\n", "getpid_entry", 9, 0);
	snprintf(pr, sizeof(pr), "  %-44s %15u %15u\n", "getpid_ret", 9, 0);
	CHECK(read_file("/sys/kernel/tracing/kprobe_profile", buf, sizeof(buf)) > 0 && strstr(buf, pe) &&
		      strstr(buf, pr),
	      "kprobe_profile: 9 hits of each probe (one per hit, whatever events count it)", "[%s]", buf);

	snprintf(line, sizeof(line), "p:kpt/getpid_entry %s\n", getpid_sym);
	CHECK(write_file(KE, line, O_APPEND) == -EEXIST, "a name defined twice is EEXIST", "%s", "no");
	CHECK(write_file(KE, "p:kpt/nope no_such_function_here\n", O_APPEND) == -ENOENT,
	      "an unknown function is ENOENT", "%s", "no");
	snprintf(line, sizeof(line), "x:kpt/bad %s\n", getpid_sym);
	CHECK(write_file(KE, line, O_APPEND) == -EINVAL, "an unknown command is EINVAL", "%s", "no");
	snprintf(line, sizeof(line), "r:kpt/bad %s+4\n", getpid_sym);
	CHECK(write_file(KE, line, O_APPEND) == -EINVAL, "a return probe past the entry is EINVAL", "%s", "no");
	CHECK(write_file(KE, "p:kpt/bad\n", O_APPEND) == -EINVAL, "a definition without a place is EINVAL", "%s", "no");
	CHECK(write_file(KE, "-:kpt/getpid_entry\n", O_APPEND) == 0 &&
		      write_file(KE, "-:kpt/getpid_entry\n", O_APPEND) == -ENOENT,
	      "-: deletes, then ENOENT", "%s", "no");
	CHECK(write_file(KE, "\n", O_TRUNC) == 0 && read_file(KE, buf, sizeof(buf)) == 0 &&
		      access("/sys/kernel/tracing/events/kpt", F_OK) != 0,
	      "O_TRUNC deletes them all, and events/kpt with them", "[%s]", buf);
}

static void test_bpf(void)
{
	struct perf_event_attr a;
	uint64_t v[2];
	int map = bpf_count_map();
	int kp = bpf_count_prog(BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_KPROBE, map, 1, BPF_DW, 0);
	int kp0 = bpf_count_prog(BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_KPROBE, map, 0, BPF_DW, 0);
	int tp = bpf_count_prog(BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_KPROBE, map, 1, BPF_DW, 0);

	if (!CHECK(map >= 0 && kp >= 0 && kp0 >= 0 && tp >= 0, "KPROBE programs load", "%s",
		   strerror(errno)))
		return;
	kp_attr(&a, getpid_sym, 0, false);
	int fd = (int)peo(&a, 0, -1, -1, 0);

	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, tp), EINVAL,
		     "SET_BPF of a TRACEPOINT program on a kprobe event is EINVAL");
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp), "SET_BPF of a KPROBE program on a kprobe event");
	for (int i = 0; i < 10; i++)
		syscall(SYS_getpid);
	bpf_count_value(map, v);
	/* a CPU-wide program would also see other tasks' getpid: this one is per task */
	CHECK(v[0] == 10 && count_of(fd) == 10, "the program runs at each of 10 hits, returning 1 keeps them",
	      "runs %llu count %llu", (unsigned long long)v[0], (unsigned long long)count_of(fd));
	close(fd);
	fd = (int)peo(&a, 0, -1, -1, 0);
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp0), "SET_BPF of a program returning 0");
	for (int i = 0; i < 10; i++)
		syscall(SYS_getpid);
	bpf_count_value(map, v);
	CHECK(v[0] == 20 && count_of(fd) == 0, "returning 0 drops the hits: the event counts 0",
	      "runs %llu count %llu", (unsigned long long)v[0], (unsigned long long)count_of(fd));
	close(fd);
	close(kp);
	close(kp0);
	close(tp);
	close(map);
}

int main(void)
{
	static const char *const names[] = { "__arm64_sys_getpid", "sys_getpid", NULL };

	tap_init("t_kprobe", 60);
	test_sysfs();
	if (kprobe_type < 0) {
		tap_skip("kprobe events", "no kprobe PMU");
		return tap_done();
	}
	getpid_addr = kallsyms_find(names, &getpid_sym);
	if (!CHECK(getpid_addr != 0, "the getpid handler is in /proc/kallsyms", "none of its names"))
		return tap_done();
	test_errnos();
	test_count();
	test_sample();
	test_bpf();
	test_retprobe();
	test_filter();
	test_kprobe_events();
	return tap_done();
}
