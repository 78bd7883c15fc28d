/* t_perf_swsample: software events sample with a period (perf_swevent_event): page-faults
 * with sample_period 4 over 64 new pages give 16 samples whose PERF_SAMPLE_ADDR is the faulting
 * address; PERF_EVENT_IOC_PERIOD to 8 halves that; PERF_SAMPLE_READ carries the count.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-11-29. */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096
#define DATA_PAGES 8

struct result {
	uint64_t samples, addr_in_buf, last_read_value;
};

static void run(int fd, struct perf_event_mmap_page *m, uint64_t period, struct result *r)
{
	char *buf = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t tail = m->data_tail, head;
	char *data = (char *)m + PG;

	memset(r, 0, sizeof(*r));
	if (period)
		ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 64; i++)
		buf[i * PG] = 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	while (tail < head) {
		struct perf_event_header *h = (void *)(data + (tail % (DATA_PAGES * PG)));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t *f = (uint64_t *)(h + 1); /* ip, addr, read value */

			r->samples++;
			if (f[1] >= (uint64_t)buf && f[1] < (uint64_t)buf + 64 * PG)
				r->addr_in_buf++;
			r->last_read_value = f[2];
		}
		tail += h->size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	munmap(buf, 64 * PG);
}

int main(void)
{
	struct perf_event_attr a;
	struct result r;

	tap_init("t_perf_swsample", 60);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 4;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ;
	a.disabled = 1;
	int fd = (int)sys_perf_event_open(&a, 0, -1, -1, 0);

	if (!CHECK(fd >= 0, "open page-faults with sample_period 4", "errno %d", errno))
		return tap_done();
	struct perf_event_mmap_page *m =
		mmap(NULL, (1 + DATA_PAGES) * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (!CHECK(m != MAP_FAILED, "mmap the ring", "errno %d", errno))
		return tap_done();
	run(fd, m, 0, &r);
	CHECK(r.samples >= 15 && r.samples <= 17, "64 new pages at period 4: about 16 samples",
	      "%llu samples", (unsigned long long)r.samples);
	CHECK(r.addr_in_buf == r.samples && r.samples, "PERF_SAMPLE_ADDR is the faulting address",
	      "%llu of %llu", (unsigned long long)r.addr_in_buf, (unsigned long long)r.samples);
	CHECK(r.last_read_value >= 60 && r.last_read_value <= 66,
	      "PERF_SAMPLE_READ carries the count (last sample near 64)", "value %llu",
	      (unsigned long long)r.last_read_value);
	run(fd, m, 8, &r);
	CHECK(r.samples >= 7 && r.samples <= 9, "IOC_PERIOD 8: about 8 samples", "%llu samples",
	      (unsigned long long)r.samples);
	return tap_done();
}
