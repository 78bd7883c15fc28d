/*
 * sys_perf.h - perf_event_open(2) and a reader of the mmap'd ring for the userland tests
 * (tests/user) and tools: glibc has no perf_event_open wrapper.
 *
 * The ring reader follows the perf_event_mmap_page protocol (include/uapi/linux/perf_event.h):
 * load data_head with acquire, copy records out (a record may wrap past the end of the data
 * area), store data_tail with release.  Header-only (static inline), like tests/user/tap.h.
 * Not here: the aux area, overwrite (read-only) rings.
 */
#pragma once

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* attr: a struct perf_event_attr, or raw bytes for the size checks */
static inline long sys_perf_event_open(void *attr, int pid, int cpu, int group_fd,
				       unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

struct perf_ring {
	void *base; /* the mapping: the user page, then the data pages */
	size_t len;
	struct perf_event_mmap_page *pg;
	unsigned char *data;
	uint64_t size; /* data bytes, a power of two */
	unsigned int bad; /* malformed records met (the rest of the ring is then skipped) */
};

/* Map fd's ring: the user page and npages data pages.  0, or -1 with errno. */
static inline int perf_ring_map(struct perf_ring *r, int fd, unsigned int npages)
{
	long ps = sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	r->len = (size_t)(npages + 1) * (size_t)ps;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -1;
	}
	r->pg = r->base;
	r->size = r->pg->data_size ? r->pg->data_size : (uint64_t)npages * (uint64_t)ps;
	r->data = (unsigned char *)r->base + (r->pg->data_offset ? r->pg->data_offset : (uint64_t)ps);
	return 0;
}

static inline void perf_ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
	r->base = NULL;
}

/* n bytes at ring position pos (data_head/data_tail units), across the wrap */
static inline void perf_ring_copy(const struct perf_ring *r, uint64_t pos, void *dst, size_t n)
{
	uint64_t o = pos % r->size;
	size_t first = o + n > r->size ? (size_t)(r->size - o) : n;

	memcpy(dst, r->data + o, first);
	if (first < n)
		memcpy((unsigned char *)dst + first, r->data, n - first);
}

/*
 * Hand each complete record between data_tail and data_head to fn (a copy in buf, buf_size
 * bytes, 8-aligned; larger records count as bad), then consume them (consume false: leave
 * data_tail, for a second look).  Returns the number of records handed over.
 */
static inline int perf_ring_read(struct perf_ring *r,
				 void (*fn)(const struct perf_event_header *h, void *arg), void *arg,
				 uint64_t *buf, size_t buf_size, int consume)
{
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pg->data_tail;
	int n = 0;

	while (tail < head) {
		struct perf_event_header h;

		if (head - tail < sizeof(h))
			goto bad;
		perf_ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || (h.size & 7) || h.size > buf_size)
			goto bad;
		perf_ring_copy(r, tail, buf, h.size);
		if (fn)
			fn((const struct perf_event_header *)buf, arg);
		tail += h.size;
		n++;
	}
	goto out;
bad:
	r->bad++;
	tail = head;
out:
	if (consume)
		__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
