/*
 * map_ringbuf.c - BPF_MAP_TYPE_RINGBUF: one ring of variable-size records that programs write
 * with bpf_ringbuf_output and user space reads through mmap (libbpf's ring_buffer), as Linux
 * 6.1's kernel/bpf/ringbuf.c.
 *
 * ABI (what user space sees through the map fd's mmap, in pages): 0 the consumer position
 * (the only page that may be mapped writable), 1 the producer position, then the data pages
 * twice in a row so a record that wraps reads as one piece.  A record is an 8-byte header
 * {u32 len with BUSY (bit 31) while being written and DISCARD (bit 30), u32 pg_off} and len
 * bytes, the whole rounded up to 8.  pg_off is the header's page counted as Linux counts it
 * (from the start of its struct bpf_ringbuf, one page before the consumer position).  The
 * producer position is published with release after the header, the consumer's read with
 * acquire.  Creation: key and value size 0, max_entries a power of two and a page multiple.
 * The map fd polls readable while there is unread data; syscall lookups and updates get
 * ENOTSUPP (524) as in Linux.
 *
 * Not built: bpf_ringbuf_reserve/submit/discard (they need reference tracking in the verifier;
 * programs using them are rejected as calls of unknown helpers).
 * Locks: rb->lock (IRQ-safe) serialises producers; the consumer position is user memory.
 */
#include <linux/poll.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)
#define RB_HDR 8
#define RB_MAX_RECORD (UINT32_MAX / 4) /* Linux's RINGBUF_MAX_RECORD_SZ */
#define RB_MAX_DATA (1u << 24)	       /* 16 MiB: what one allocation here can hold */
#define RB_PGOFF 1		       /* Linux's pages of struct bpf_ringbuf before consumer_pos */

struct ringbuf {
	uint64_t *consumer; /* page: the position user space has read up to */
	uint64_t *producer; /* page: the position written up to */
	uint8_t *data;
	uint64_t mask; /* data size - 1 */
	unsigned int order;
	struct spinlock lock;
	struct wait_queue *wq;
};

static struct ringbuf *rb_of(const struct bpf_map *map)
{
	return map->priv;
}

static int rb_check(const union bpf_attr *attr)
{
	if (attr->map_flags & ~BPF_F_NUMA_NODE)
		return -EINVAL;
	if (attr->key_size || attr->value_size || !attr->max_entries ||
	    (attr->max_entries & (attr->max_entries - 1)) || (attr->max_entries % KSVC_PAGE_SIZE))
		return -EINVAL;
	if (attr->max_entries > RB_MAX_DATA)
		return -ENOMEM; /* Linux would try: more than this kernel can give in one piece */
	return 0;
}

static void rb_free(struct bpf_map *map)
{
	struct ringbuf *rb = rb_of(map);

	if (!rb)
		return;
	if (rb->data)
		ksvc_free_pages(rb->data, rb->order);
	if (rb->consumer)
		ksvc_free_pages(rb->consumer, 0);
	if (rb->producer)
		ksvc_free_pages(rb->producer, 0);
	ksvc_waitq_free(rb->wq);
	ksvc_free(rb);
	map->priv = NULL;
}

static int rb_alloc(struct bpf_map *map)
{
	struct ringbuf *rb = ksvc_alloc(sizeof(*rb));

	if (!rb)
		return -ENOMEM;
	map->priv = rb;
	while ((KSVC_PAGE_SIZE << rb->order) < map->max_entries)
		rb->order++;
	rb->mask = map->max_entries - 1;
	spin_init(&rb->lock);
	rb->consumer = ksvc_alloc_pages(0);
	rb->producer = ksvc_alloc_pages(0);
	rb->data = ksvc_alloc_pages(rb->order);
	rb->wq = ksvc_waitq_alloc();
	if (!rb->consumer || !rb->producer || !rb->data || !rb->wq) {
		rb_free(map);
		return -ENOMEM;
	}
	memset(rb->consumer, 0, KSVC_PAGE_SIZE);
	memset(rb->producer, 0, KSVC_PAGE_SIZE);
	return 0;
}

static void *rb_no_lookup(struct bpf_map *map, const void *key)
{
	(void)map;
	(void)key;
	return NULL;
}

static int rb_no_update(struct bpf_map *map, const void *key, const void *value, uint64_t f)
{
	(void)map, (void)key, (void)value, (void)f;
	return -BPF_ENOTSUPP;
}

static int rb_no_delete(struct bpf_map *map, const void *key)
{
	(void)map, (void)key;
	return -BPF_ENOTSUPP;
}

static int rb_no_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	(void)map, (void)key, (void)value;
	return -BPF_ENOTSUPP;
}

static int rb_no_next_key(struct bpf_map *map, const void *key, void *next)
{
	(void)map, (void)key, (void)next;
	return -BPF_ENOTSUPP;
}

const struct bpf_map_ops bpf_ringbuf_ops = {
	.check = rb_check,
	.alloc = rb_alloc,
	.free = rb_free,
	.lookup = rb_no_lookup,
	.update = rb_no_update,
	.delete = rb_no_delete,
	.sys_lookup = rb_no_sys_lookup,
	.sys_update = rb_no_update,
	.get_next_key = rb_no_next_key,
};

/* ---- the program side [any] ---- */

static uint64_t load_acquire(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Copy n bytes to data position pos (masked), wrapping at the end of the data pages. */
static void rb_copy(struct ringbuf *rb, uint64_t pos, const void *src, uint64_t n)
{
	uint64_t off = pos & rb->mask, first = rb->mask + 1 - off;

	if (first >= n) {
		memcpy(rb->data + off, src, n);
		return;
	}
	memcpy(rb->data + off, src, first);
	memcpy(rb->data, (const uint8_t *)src + first, n - first);
}

long bpf_ringbuf_output(struct bpf_map *map, const void *data, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	uint64_t len, cons, prod;
	uint32_t *hdr;
	unsigned long f;

	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return -EINVAL;
	if (size > RB_MAX_RECORD)
		return -EAGAIN;
	len = (size + RB_HDR + 7) & ~7ull;
	if (len > rb->mask + 1)
		return -EAGAIN;
	/* acquire pairs with the consumer's release: the bytes it has read may be overwritten */
	cons = load_acquire(rb->consumer);
	f = spin_lock_irqsave(&rb->lock);
	prod = *rb->producer;
	if (prod + len - cons > rb->mask) {
		spin_unlock_irqrestore(&rb->lock, f);
		return -EAGAIN;
	}
	hdr = (uint32_t *)(rb->data + (prod & rb->mask)); /* 8-aligned: never split */
	hdr[0] = (uint32_t)size | RB_BUSY;
	hdr[1] = (uint32_t)(RB_PGOFF + 2 + ((prod & rb->mask) / KSVC_PAGE_SIZE));
	/* release: a consumer that sees the new position sees the busy header */
	__atomic_store_n(rb->producer, prod + len, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&rb->lock, f);
	rb_copy(rb, prod + RB_HDR, data, size);
	/* commit: the length without BUSY, after the data (Linux's xchg is a full barrier) */
	__atomic_exchange_n(&hdr[0], (uint32_t)size, __ATOMIC_SEQ_CST);
	cons = load_acquire(rb->consumer);
	if ((flags & BPF_RB_FORCE_WAKEUP) ||
	    (!(flags & BPF_RB_NO_WAKEUP) && (cons & rb->mask) == (prod & rb->mask)))
		ksvc_waitq_wake_all(rb->wq);
	return 0;
}

uint64_t bpf_ringbuf_query(struct bpf_map *map, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);

	switch (flags) {
	case BPF_RB_AVAIL_DATA: {
		uint64_t cons = load_acquire(rb->consumer);

		return load_acquire(rb->producer) - cons;
	}
	case BPF_RB_RING_SIZE:
		return rb->mask + 1;
	case BPF_RB_CONS_POS:
		return load_acquire(rb->consumer);
	case BPF_RB_PROD_POS:
		return load_acquire(rb->producer);
	default:
		return 0;
	}
}

/* ---- the file side ---- */

unsigned int bpf_ringbuf_poll(struct bpf_map *map, struct ksvc_poll *pt)
{
	struct ringbuf *rb = rb_of(map);

	ksvc_poll_wait(pt, rb->wq);
	return bpf_ringbuf_query(map, BPF_RB_AVAIL_DATA) ? POLLIN | POLLRDNORM : 0;
}

int bpf_ringbuf_mmap_check(struct bpf_map *map, const struct ksvc_mmap *m)
{
	uint64_t pages = 2 + 2 * ((rb_of(map)->mask + 1) / KSVC_PAGE_SIZE);

	/* writable: the consumer page alone (ringbuf_map_mmap) */
	if (m->write && (m->pgoff != 0 || m->len != KSVC_PAGE_SIZE))
		return -EPERM;
	if (m->pgoff > pages || m->len / KSVC_PAGE_SIZE > pages - m->pgoff)
		return -EINVAL; /* remap_vmalloc_range: beyond the area */
	return 0;
}

uint64_t bpf_ringbuf_mmap_phys(struct bpf_map *map, uint64_t pgoff)
{
	struct ringbuf *rb = rb_of(map);
	uint64_t data_pages = (rb->mask + 1) / KSVC_PAGE_SIZE;

	if (pgoff == 0)
		return ksvc_virt_to_phys(rb->consumer);
	if (pgoff == 1)
		return ksvc_virt_to_phys(rb->producer);
	pgoff -= 2;
	if (pgoff >= 2 * data_pages)
		return 0;
	return ksvc_virt_to_phys(rb->data + (pgoff % data_pages) * KSVC_PAGE_SIZE);
}
