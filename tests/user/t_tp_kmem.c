/* t_tp_kmem: the kmem and lock tracepoints, checked against Linux 6.1's ABI; passes on
 * perfkernel and on Linux (refvm.sh).
 *
 *  1 tracefs: kmem:kmalloc, kfree, kmem_cache_alloc, kmem_cache_free, mm_page_alloc,
 *    mm_page_free and lock:contention_begin, contention_end with Linux 6.1's ids and fields
 *    (their format files up to the print fmt, byte for byte).
 *  2 kmem:kmalloc and kmem:kfree count the allocations of pipe2/close, and a kmalloc sample's
 *    PERF_SAMPLE_RAW is Linux's record: 60 bytes, type 477, our tid, a kernel call site,
 *    bytes_alloc >= bytes_req > 0, NUMA_NO_NODE.
 *  3 kmem:mm_page_alloc counts at least one page per first touch of an anonymous page, with a
 *    40-byte record of order 0; kmem:mm_page_free counts their freeing at munmap.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tracing.h"
#include "tap.h"

static const struct {
	const char *sysev, *head;
} formats[] = {
	{ "kmem/kmalloc", "name: kmalloc\nID: 477\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n"
	  "\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;\n\nprint fmt: \"call_site=%pS ptr=%p" },
	{ "kmem/kfree", "name: kfree\nID: 476\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	  "print fmt: \"call_site=%pS ptr=%p\", (void *)REC->call_site, REC->ptr\n" },
	{ "kmem/kmem_cache_alloc", "name: kmem_cache_alloc\nID: 478\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n" },
	{ "kmem/kmem_cache_free", "name: kmem_cache_free\nID: 475\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n\n" },
	{ "kmem/mm_page_alloc", "name: mm_page_alloc\nID: 472\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:int migratetype;\toffset:32;\tsize:4;\tsigned:1;\n\n" },
	{ "kmem/mm_page_free", "name: mm_page_free\nID: 474\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n\n" },
	{ "lock/contention_begin", "name: contention_begin\nID: 276\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * lock_addr;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int flags;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"%p (flags=%s)\", REC->lock_addr, __print_flags(REC->flags, \"|\", "
	  "{ (1U << 0), \"SPIN\" }, { (1U << 1), \"READ\" }, { (1U << 2), \"WRITE\" }, "
	  "{ (1U << 3), \"RT\" }, { (1U << 4), \"PERCPU\" }, { (1U << 5), \"MUTEX\" } )\n" },
	{ "lock/contention_end", "name: contention_end\nID: 275\nformat:\n" TRACE_COMMON_FIELDS
	  "\tfield:void * lock_addr;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:int ret;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"%p (ret=%d)\", REC->lock_addr, REC->ret\n" },
};

static void test_formats(void)
{
	static char buf[16384];

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char what[128];
		int n = format_is(formats[i].sysev, formats[i].head, 0, buf, sizeof(buf));

		snprintf(what, sizeof(what), "%s's format as Linux 6.1's", formats[i].sysev);
		tap_check(n > 0, what, "read %d: [%.300s]", n, buf);
	}
}

static void test_kmalloc(void)
{
	int fm = tp_open(event_id("kmem/kmalloc"), 0, 0), ff = tp_open(event_id("kmem/kfree"), 0, 0);
	int fs = tp_open(event_id("kmem/kmalloc"), 0, 1);
	size_t size = 9 * 4096;
	struct perf_event_mmap_page *pg =
		fs >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fs, 0) : MAP_FAILED;

	if (fm < 0 || ff < 0 || pg == MAP_FAILED) {
		tap_fail("kmem:kmalloc events", "open/mmap: %s", strerror(errno));
		return;
	}
	ioctl(fm, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(ff, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fs, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		int p[2];

		if (pipe2(p, 0) == 0) {
			close(p[0]);
			close(p[1]);
		}
	}
	ioctl(fs, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fm, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(ff, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t m = count_of(fm), f = count_of(ff);

	tap_check(m >= 10 && m < 100000, "kmem:kmalloc counts pipe2's allocations (10 pipes)",
		  "%llu", (unsigned long long)m);
	tap_check(f >= 10 && f < 100000, "kmem:kfree counts their freeing", "%llu",
		  (unsigned long long)f);

	const uint8_t *d = (const uint8_t *)pg + 4096;
	const struct perf_event_header *h = (const void *)d;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	int ok = 0;
	char why[160] = "no sample";

	if (head && h->type == PERF_RECORD_SAMPLE) {
		uint32_t rsize;
		const uint8_t *r = d + 8 + 4;
		uint16_t type;
		int32_t pid, node;
		uint64_t site, req, alloc;

		memcpy(&rsize, d + 8, 4);
		memcpy(&type, r, 2);
		memcpy(&pid, r + 4, 4);
		memcpy(&site, r + 8, 8);
		memcpy(&req, r + 24, 8);
		memcpy(&alloc, r + 32, 8);
		memcpy(&node, r + 48, 4);
		ok = rsize == 60 && type == 477 && pid == (int32_t)syscall(SYS_gettid) &&
		     site >= 0xffff000000000000ull && req > 0 && alloc >= req && node == -1;
		snprintf(why, sizeof(why), "size %u type %u pid %d site %llx req %llu alloc %llu node %d",
			 rsize, type, pid, (unsigned long long)site, (unsigned long long)req,
			 (unsigned long long)alloc, node);
	}
	tap_check(ok, "kmem:kmalloc's raw record as Linux lays it out", "%s", why);
	munmap(pg, size);
	close(fm);
	close(ff);
	close(fs);
}

static void test_pages(void)
{
	int fa = tp_open(event_id("kmem/mm_page_alloc"), 0, 0), ff = tp_open(event_id("kmem/mm_page_free"), 0, 0);
	int fs = tp_open(event_id("kmem/mm_page_alloc"), 0, 1);
	size_t size = 9 * 4096;
	struct perf_event_mmap_page *pg =
		fs >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fs, 0) : MAP_FAILED;
	enum { N = 32 };
	char *mem = mmap(NULL, N * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (fa < 0 || ff < 0 || pg == MAP_FAILED || mem == MAP_FAILED) {
		tap_fail("kmem:mm_page_alloc events", "open/mmap: %s", strerror(errno));
		return;
	}
	ioctl(fa, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fs, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < N; i++)
		mem[i * 4096] = 1;
	ioctl(fs, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fa, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(ff, PERF_EVENT_IOC_ENABLE, 0);
	munmap(mem, N * 4096);
	ioctl(ff, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t a = count_of(fa), f = count_of(ff);

	tap_check(a >= N && a < 100000, "kmem:mm_page_alloc counts the first touches (32 pages)",
		  "%llu", (unsigned long long)a);
	tap_check(f >= 1 && f < 100000, "kmem:mm_page_free counts munmap's freeing", "%llu",
		  (unsigned long long)f);

	const uint8_t *d = (const uint8_t *)pg + 4096;
	const struct perf_event_header *h = (const void *)d;
	uint32_t rsize = 0, order = ~0u;
	uint16_t type = 0;

	if (__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) && h->type == PERF_RECORD_SAMPLE) {
		memcpy(&rsize, d + 8, 4);
		memcpy(&type, d + 12, 2);
		memcpy(&order, d + 12 + 16, 4);
	}
	tap_check(rsize == 44 && type == 472 && order == 0,
		  "kmem:mm_page_alloc's raw record: 44 bytes, order 0", "size %u type %u order %u",
		  rsize, type, order);
	munmap(pg, size);
	close(fa);
	close(ff);
	close(fs);
}

int main(void)
{
	tap_init("t_tp_kmem", 120);
	test_formats();
	test_kmalloc();
	test_pages();
	return tap_done();
}
