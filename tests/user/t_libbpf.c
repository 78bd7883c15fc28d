/* t_libbpf: Debian's libbpf 1.1 (static) as a real client, in the KernelScript @perf_event
 * flow: open the event disabled with FD_CLOEXEC (pid -1, cpu 0), IOC_RESET,
 * bpf_program__attach_perf_event (BPF_LINK_CREATE after libbpf's feature probes), IOC_ENABLE,
 * the workload, read() the count, IOC_DISABLE, bpf_link__destroy, close.  The object
 * (tests/user/bpf/pagefaults.bpf.c, clang -target bpf) is embedded and opened from memory.
 * Page faults (SOFTWARE, period 1) are counted by the program in a map; libbpf's perf_buffer
 * (per-CPU bpf-output events, epoll) carries bpf_perf_event_output records and its ring_buffer
 * (a BPF_MAP_TYPE_RINGBUF, mmap, epoll) bpf_ringbuf_output records, then records written in
 * place with bpf_ringbuf_reserve/submit; branch-misses and
 * cache-misses (HARDWARE) do not exist on QEMU's PMU: ENOENT, as on Linux.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-11-29 (28/28).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const char _binary_pagefaults_bpf_o_start[], _binary_pagefaults_bpf_o_end[];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		vfprintf(stderr, fmt, ap);
	return 0;
}

static uint64_t buf_lo;
static int nsamples, in_buf;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	uint64_t addr;

	nsamples++;
	if (size < 8)
		return;
	memcpy(&addr, data, 8);
	in_buf += addr >= buf_lo && addr < buf_lo + 32 * 4096;
}

/* to_ring_reserve's record (tests/user/bpf/pagefaults.bpf.c) */
struct fault {
	uint64_t addr;
	uint32_t pid;
	char comm[16];
};

static int nfaults, good_faults;

static int on_fault(void *ctx, void *data, size_t size)
{
	struct fault f;

	nfaults++;
	if (size != sizeof(f))
		return 0;
	memcpy(&f, data, sizeof(f));
	good_faults += f.addr >= buf_lo && f.addr < buf_lo + 32 * 4096 && f.pid == (uint32_t)getpid() &&
		       !strcmp(f.comm, "t_libbpf");
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	on_sample(ctx, 0, data, (__u32)size);
	return 0;
}

static int open_event(uint32_t type, uint64_t config, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.sample_period = period;
	a.wakeup_events = 1;
	a.disabled = 1;
	return (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Attach prog to a new page-faults event (period 1) and fault in 32 fresh pages at buf_lo
 * with it enabled.  The link to destroy and the event's fd in *fd (both checked), or NULL.
 */
static struct bpf_link *fault_32(struct bpf_program *prog, const char *what, int *fd)
{
	struct bpf_link *link;

	*fd = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1);
	if (*fd < 0) {
		tap_fail(what, "page-faults event: errno %d", errno);
		return NULL;
	}
	buf_lo = (uint64_t)mmap(NULL, 32 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	link = bpf_program__attach_perf_event(prog, *fd);
	if (!CHECK(link, what, "errno %d", errno)) {
		close(*fd);
		return NULL;
	}
	ioctl(*fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 32; i++)
		((char *)buf_lo)[i * 4096] = 1;
	ioctl(*fd, PERF_EVENT_IOC_DISABLE, 0);
	return link;
}

int main(void)
{
	cpu_set_t set;

	tap_init("t_libbpf", 60);
	libbpf_set_print(quiet);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	EXPECT_OK(sched_setaffinity(0, sizeof(set), &set), "run on CPU 0 (the event's CPU)");

	struct bpf_object *obj = bpf_object__open_mem(
		_binary_pagefaults_bpf_o_start,
		(size_t)(_binary_pagefaults_bpf_o_end - _binary_pagefaults_bpf_o_start), NULL);

	if (!CHECK(obj, "bpf_object__open_mem", "errno %d", errno))
		return tap_done();
	int err = bpf_object__load(obj);

	if (!CHECK(!err, "bpf_object__load (libbpf's probes, map and program loads)", "err %d", err))
		return tap_done();
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "on_overflow");
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "counts");

	CHECK(prog && map && bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT,
	      "the perf_event program and its map", "prog %p map %p", (void *)prog, (void *)map);
	if (!prog || !map)
		return tap_done();

	/* page faults: SOFTWARE, period 1, counted by the program */
	int fd = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1);

	if (!CHECK(fd >= 0, "open page-faults (pid -1, cpu 0, period 1, disabled, CLOEXEC)",
		   "errno %d", errno))
		return tap_done();
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_RESET, 0), "IOC_RESET");
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = 0x5eed);
	struct bpf_link *link = bpf_program__attach_perf_event_opts(prog, fd, &opts);

	CHECK(link, "bpf_program__attach_perf_event_opts (a BPF_PERF_EVENT link)", "errno %d", errno);
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), "IOC_ENABLE");
	char *buf = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	for (int i = 0; i < 64; i++)
		buf[i * 4096] = 1;
	uint64_t count = 0, runs = 0, cookie = 0;
	uint32_t k0 = 0, k1 = 1;

	EXPECT_OK(read(fd, &count, sizeof(count)) == sizeof(count) ? 0 : -1, "read() the count");
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), "IOC_DISABLE");
	bpf_map__lookup_elem(map, &k0, sizeof(k0), &runs, sizeof(runs), 0);
	bpf_map__lookup_elem(map, &k1, sizeof(k1), &cookie, sizeof(cookie), 0);
	CHECK(count >= 64, "the event counted the 64 faults", "count %llu", (unsigned long long)count);
	CHECK(runs >= 64 && runs <= count + 2, "the program counted each fault in its map",
	      "runs %llu count %llu", (unsigned long long)runs, (unsigned long long)count);
	CHECK(cookie == 0x5eed, "bpf_get_attach_cookie: the link's cookie", "%#llx",
	      (unsigned long long)cookie);
	EXPECT_OK(bpf_link__destroy(link), "bpf_link__destroy");
	close(fd);

	/* KernelScript's flow: page-faults with period 1, on CPU 0 (its default: pid -1, cpu 0,
	 * the process pinned there) and on the task itself (pid 0, cpu -1, free to migrate), over
	 * 1000 fresh pages.  Every fault is one overflow and Linux runs the program for each
	 * (perf_swevent_overflow never throttles an event's first overflow), so the program's
	 * count equals the event's, exactly. */
	for (int pass = 0; pass < 2; pass++) {
		const char *tag = pass ? "task (pid 0, cpu -1)" : "CPU 0 (pid -1, cpu 0)";
		char what[160];
		uint64_t zero = 0, n = 0, r = 0;
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		a.sample_period = 1;
		a.wakeup_events = 1;
		a.disabled = 1;
		int tfd = (int)syscall(__NR_perf_event_open, &a, pass ? 0 : -1, pass ? -1 : 0, -1,
				       PERF_FLAG_FD_CLOEXEC);

		snprintf(what, sizeof(what), "1000 faults, %s: open page-faults, period 1", tag);
		CHECK(tfd >= 0, what, "errno %d", errno);
		bpf_map__update_elem(map, &k0, sizeof(k0), &zero, sizeof(zero), 0);
		if (tfd >= 0)
			ioctl(tfd, PERF_EVENT_IOC_RESET, 0);
		struct bpf_link *tl = tfd >= 0 ? bpf_program__attach_perf_event(prog, tfd) : NULL;

		snprintf(what, sizeof(what), "1000 faults, %s: bpf_program__attach_perf_event", tag);
		if (CHECK(tl, what, "errno %d", errno)) {
			cpu_set_t all;

			/* the task event's client is free to migrate */
			CPU_ZERO(&all);
			for (int c = 0; c < 64; c++)
				CPU_SET(c, &all);
			if (pass)
				sched_setaffinity(0, sizeof(all), &all);
			char *pages = mmap(NULL, 1000 * 4096, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			madvise(pages, 1000 * 4096, MADV_NOHUGEPAGE); /* Linux: one fault a page */
			ioctl(tfd, PERF_EVENT_IOC_ENABLE, 0);
			for (int i = 0; i < 1000; i++)
				pages[i * 4096] = 1;
			ioctl(tfd, PERF_EVENT_IOC_DISABLE, 0);
			if (read(tfd, &n, sizeof(n)) != sizeof(n))
				n = 0;
			bpf_map__lookup_elem(map, &k0, sizeof(k0), &r, sizeof(r), 0);
			snprintf(what, sizeof(what), "1000 faults, %s: the event counts each fault", tag);
			CHECK(n >= 1000, what, "count %llu", (unsigned long long)n);
			snprintf(what, sizeof(what),
				 "1000 faults, %s: the program runs once per overflow, none missed", tag);
			CHECK(r == n, what, "runs %llu, overflows %llu", (unsigned long long)r,
			      (unsigned long long)n);
			bpf_link__destroy(tl);
			munmap(pages, 1000 * 4096);
			sched_setaffinity(0, sizeof(set), &set);
		}
		if (tfd >= 0)
			close(tfd);
	}

	/* libbpf's perf_buffer: per-CPU bpf-output events in a PERF_EVENT_ARRAY, epoll, rings */
	struct perf_buffer *pb = perf_buffer__new(bpf_object__find_map_fd_by_name(obj, "events"), 8,
						  on_sample, NULL, NULL, NULL);
	struct bpf_program *out = bpf_object__find_program_by_name(obj, "to_buffer");

	CHECK(pb && out, "perf_buffer__new on the PERF_EVENT_ARRAY", "errno %d", errno);
	if (pb && out && (link = fault_32(out, "attach the bpf_perf_event_output program", &fd))) {
		int n = perf_buffer__poll(pb, 1000);

		CHECK(n > 0, "perf_buffer__poll finds data", "%d", n);
		CHECK(nsamples >= 32 && in_buf >= 32,
		      "one record per fault, each carrying its fault address", "%d records, %d in buffer",
		      nsamples, in_buf);
		bpf_link__destroy(link);
		close(fd);
	}
	perf_buffer__free(pb);

	/* libbpf's ring_buffer: a BPF_MAP_TYPE_RINGBUF mapped as Linux maps it, epoll */
	nsamples = in_buf = 0;
	struct ring_buffer *rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "ring"),
						  on_record, NULL, NULL);
	struct bpf_program *toring = bpf_object__find_program_by_name(obj, "to_ring");

	CHECK(rb && toring, "ring_buffer__new on the RINGBUF map", "errno %d", errno);
	if (rb && toring && (link = fault_32(toring, "attach the bpf_ringbuf_output program", &fd))) {
		int n = ring_buffer__poll(rb, 1000);

		CHECK(n >= 32, "ring_buffer__poll consumes a record per fault", "%d", n);
		CHECK(nsamples >= 32 && in_buf >= 32, "each ring record carries its fault address",
		      "%d records, %d in buffer", nsamples, in_buf);
		bpf_link__destroy(link);
		close(fd);
	}
	ring_buffer__free(rb);

	/* the same ring filled in place: bpf_ringbuf_reserve, submit (discard for address 0) */
	rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "ring"), on_fault, NULL, NULL);
	struct bpf_program *reserve = bpf_object__find_program_by_name(obj, "to_ring_reserve");

	CHECK(rb && reserve, "ring_buffer__new again, the bpf_ringbuf_reserve program loaded",
	      "errno %d", errno);
	if (rb && reserve &&
	    (link = fault_32(reserve, "attach the bpf_ringbuf_reserve program", &fd))) {
		int n = ring_buffer__poll(rb, 1000);

		CHECK(n >= 32, "ring_buffer__poll consumes a reserved record per fault", "%d", n);
		CHECK(good_faults >= 32 && good_faults == nfaults,
		      "each reserved record carries its fault address, pid and comm",
		      "%d records, %d good", nfaults, good_faults);
		bpf_link__destroy(link);
		close(fd);
	}
	ring_buffer__free(rb);

	/* branch misses and cache misses: QEMU's PMU has neither event (PMCEID) */
	EXPECT_ERRNO(open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1000000), ENOENT,
		     "branch-misses on QEMU: ENOENT");
	EXPECT_ERRNO(open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1000000), ENOENT,
		     "cache-misses on QEMU: ENOENT");
	bpf_object__close(obj);
	return tap_done();
}
