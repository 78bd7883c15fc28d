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
 * BPF_MAP_TYPE_USER_RINGBUF is the same ring the other way round (Linux 6.1's user ring
 * buffer): user space maps the producer page and the data writable (the consumer page
 * read-only: EPERM otherwise), writes records with the same header and publishes them by the
 * producer position; bpf_user_ringbuf_drain hands each to a callback as a dynptr and frees its
 * space.  The fd polls writable while the ring has room.
 *
 * bpf_ringbuf_reserve hands the program the record's body in place, as Linux does.  Linux's
 * kernel mapping shows the data pages twice too, so a body that wraps is one piece; this kernel
 * maps them once, so such a body is reserved in a bounce buffer instead and copied into the
 * ring at submit, before the header's BUSY bit clears: readers see the same bytes at the same
 * positions.  submit and discard find the ring from the record's header (pg_off gives the
 * data's first page; the rings are listed by it) or from the bounce buffer.  The verifier
 * guarantees each reservation is submitted or discarded exactly once.
 * Locks: rb->lock (IRQ-safe) serialises producers; the consumer position is user memory;
 * rb_list_lock (IRQ-safe) guards the list of rings.
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
	struct ringbuf *next; /* (rb_list_lock) */
	uint64_t *consumer; /* page: the position user space has read up to */
	uint64_t *producer; /* page: the position written up to */
	uint8_t *data;
	uint64_t mask; /* data size - 1 */
	unsigned int order;
	struct spinlock lock;
	struct wait_queue *wq;
	_Atomic int busy; /* USER_RINGBUF: a bpf_user_ringbuf_drain is consuming */
};

/* A reservation whose body wraps: hdr mirrors the ring's header, with pg_off RB_BOUNCED. */
#define RB_BOUNCED 0u /* pg_off of a real header is at least RB_PGOFF + 2 */
struct rb_bounce {
	struct ringbuf *rb;
	uint64_t pos; /* the record's header in the ring */
	uint32_t hdr[2];
	uint8_t body[];
};

static struct spinlock rb_list_lock = SPINLOCK_INIT;
static struct ringbuf *rb_list;

static struct ringbuf *rb_of(const struct bpf_map *map)
{
	return map->priv;
}

static void rb_list_add(struct ringbuf *rb)
{
	unsigned long f = spin_lock_irqsave(&rb_list_lock);

	rb->next = rb_list;
	rb_list = rb;
	spin_unlock_irqrestore(&rb_list_lock, f);
}

static void rb_list_del(struct ringbuf *rb)
{
	unsigned long f = spin_lock_irqsave(&rb_list_lock);

	for (struct ringbuf **pp = &rb_list; *pp; pp = &(*pp)->next) {
		if (*pp == rb) {
			*pp = rb->next;
			break;
		}
	}
	spin_unlock_irqrestore(&rb_list_lock, f);
}

/* The ring whose data pages start at data. */
static struct ringbuf *rb_find(const uint8_t *data)
{
	unsigned long f = spin_lock_irqsave(&rb_list_lock);
	struct ringbuf *rb = rb_list;

	while (rb && rb->data != data)
		rb = rb->next;
	spin_unlock_irqrestore(&rb_list_lock, f);
	return rb;
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
	rb_list_del(rb);
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
	rb_list_add(rb);
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

#define RB_OPS                                                                                     \
	.check = rb_check, .alloc = rb_alloc, .free = rb_free, .lookup = rb_no_lookup,             \
	.update = rb_no_update, .delete = rb_no_delete, .sys_lookup = rb_no_sys_lookup,            \
	.sys_update = rb_no_update, .get_next_key = rb_no_next_key
const struct bpf_map_ops bpf_ringbuf_ops = { RB_OPS };
/* USER_RINGBUF: the same ring, written by user space and read by bpf_user_ringbuf_drain */
const struct bpf_map_ops bpf_user_ringbuf_ops = { RB_OPS };

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

/* The header page's pg_off, counted as Linux counts it (see the top). */
static uint32_t rb_pgoff(const struct ringbuf *rb, uint64_t pos)
{
	return (uint32_t)(RB_PGOFF + 2 + ((pos & rb->mask) / KSVC_PAGE_SIZE));
}

/*
 * Claim len bytes (header included) at the producer position and write a BUSY header for a
 * size-byte body; with bounce, a body that would wrap gets a bounce buffer (*bounce).  The
 * position, or -EAGAIN when the ring has no room (or no memory for the bounce).
 */
static int64_t rb_claim(struct ringbuf *rb, uint64_t size, bool bounce, struct rb_bounce **b)
{
	uint64_t len = (size + RB_HDR + 7) & ~7ull, cons, prod;
	uint32_t *hdr;
	unsigned long f;

	*b = NULL;
	if (size > RB_MAX_RECORD || len > rb->mask + 1)
		return -EAGAIN;
	/* acquire pairs with the consumer's release: the bytes it has read may be overwritten */
	cons = load_acquire(rb->consumer);
	f = spin_lock_irqsave(&rb->lock);
	prod = *rb->producer;
	if (prod + len - cons > rb->mask)
		goto full;
	if (bounce && (prod & rb->mask) + RB_HDR + size > rb->mask + 1) {
		*b = ksvc_alloc(sizeof(**b) + size);
		if (!*b)
			goto full;
		(*b)->rb = rb;
		(*b)->pos = prod;
		(*b)->hdr[0] = (uint32_t)size | RB_BUSY;
		(*b)->hdr[1] = RB_BOUNCED;
	}
	hdr = (uint32_t *)(rb->data + (prod & rb->mask)); /* 8-aligned: never split */
	hdr[0] = (uint32_t)size | RB_BUSY;
	hdr[1] = rb_pgoff(rb, prod);
	/* release: a consumer that sees the new position sees the busy header */
	__atomic_store_n(rb->producer, prod + len, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&rb->lock, f);
	return (int64_t)prod;
full:
	spin_unlock_irqrestore(&rb->lock, f);
	return -EAGAIN;
}

/* The record at pos is complete: clear BUSY (DISCARD it) and wake the reader as Linux does. */
static void rb_commit(struct ringbuf *rb, uint64_t pos, uint32_t len, uint64_t flags)
{
	uint32_t *hdr = (uint32_t *)(rb->data + (pos & rb->mask));
	uint64_t cons;

	/* the length without BUSY, after the data (Linux's xchg is a full barrier) */
	__atomic_exchange_n(&hdr[0], len, __ATOMIC_SEQ_CST);
	cons = load_acquire(rb->consumer);
	if ((flags & BPF_RB_FORCE_WAKEUP) ||
	    (!(flags & BPF_RB_NO_WAKEUP) && (cons & rb->mask) == (pos & rb->mask)))
		ksvc_waitq_wake_all(rb->wq);
}

long bpf_ringbuf_output(struct bpf_map *map, const void *data, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	struct rb_bounce *b;
	int64_t pos;

	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return -EINVAL;
	pos = rb_claim(rb, size, false, &b);
	if (pos < 0)
		return pos;
	rb_copy(rb, (uint64_t)pos + RB_HDR, data, size);
	rb_commit(rb, (uint64_t)pos, (uint32_t)size, flags);
	return 0;
}

void *bpf_ringbuf_reserve(struct bpf_map *map, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	struct rb_bounce *b;
	int64_t pos;

	if (flags)
		return NULL;
	pos = rb_claim(rb, size, true, &b);
	if (pos < 0)
		return NULL;
	if (b)
		return b->body;
	return rb->data + ((uint64_t)pos & rb->mask) + RB_HDR; /* just past its header */
}

void bpf_ringbuf_commit(void *sample, uint64_t flags, bool discard)
{
	uint32_t *h = (uint32_t *)sample - 2;
	uint32_t size = h[0] & ~(RB_BUSY | RB_DISCARD);
	uint32_t len = size | (discard ? RB_DISCARD : 0);
	struct ringbuf *rb;
	uint64_t pos;

	if (h[1] == RB_BOUNCED) {
		struct rb_bounce *b = (struct rb_bounce *)((uint8_t *)h - offsetof(struct rb_bounce, hdr));

		rb = b->rb;
		pos = b->pos;
		if (!discard)
			rb_copy(rb, pos + RB_HDR, b->body, size);
		ksvc_free(b);
	} else {
		uintptr_t page = (uintptr_t)h & ~(uintptr_t)(KSVC_PAGE_SIZE - 1);

		rb = rb_find((const uint8_t *)page - (uintptr_t)(h[1] - RB_PGOFF - 2) * KSVC_PAGE_SIZE);
		if (!rb)
			return; /* not a reservation: the verifier lets none through */
		pos = (uint64_t)((uint8_t *)h - rb->data);
	}
	rb_commit(rb, pos, len, flags);
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

/* ---- USER_RINGBUF: user space produces, bpf_user_ringbuf_drain consumes ---- */

#define USER_RB_MAX_SAMPLES (128 * 1024) /* BPF_MAX_USER_RINGBUF_SAMPLES */

/*
 * The next sample (Linux's __bpf_user_ringbuf_peek): 0 with *pos and *size, -ENODATA (none,
 * or still BUSY), -EAGAIN (a DISCARD sample, now skipped), -EINVAL (producer position not a
 * multiple of 8, or a sample past it), -E2BIG (larger than the ring or a dynptr).
 */
static int user_rb_peek(struct ringbuf *rb, uint64_t *pos, uint32_t *size)
{
	uint64_t prod = load_acquire(rb->producer), cons = load_acquire(rb->consumer), total;
	uint32_t hdr, len;

	if (prod % 8)
		return -EINVAL;
	if (cons >= prod)
		return -ENODATA;
	/* acquire pairs with the producer's release of the header */
	hdr = __atomic_load_n((uint32_t *)(rb->data + (cons & rb->mask)), __ATOMIC_ACQUIRE);
	len = hdr & ~(RB_BUSY | RB_DISCARD);
	total = ((uint64_t)len + RB_HDR + 7) & ~7ull;
	if (total > prod - cons)
		return -EINVAL;
	if (total > rb->mask + 1 || len > (1u << 24) - 1)
		return -E2BIG;
	if (hdr & RB_DISCARD) {
		__atomic_store_n(rb->consumer, cons + total, __ATOMIC_RELEASE);
		return -EAGAIN;
	}
	if (hdr & RB_BUSY)
		return -ENODATA;
	*pos = cons + RB_HDR;
	*size = len;
	return 0;
}

/* A sample's bytes in one piece: in place, or copied out when they wrap (the data pages are
 * mapped once here, twice in Linux; user_rb_put_back returns what the callback wrote).
 * NULL: no memory for the copy. */
static void *user_rb_sample(struct ringbuf *rb, uint64_t pos, uint32_t size, void **copy)
{
	uint64_t off = pos & rb->mask, first = rb->mask + 1 - off;
	uint8_t *c;

	*copy = NULL;
	if (first >= size)
		return rb->data + off;
	c = ksvc_alloc(size);
	if (!c)
		return NULL;
	memcpy(c, rb->data + off, first);
	memcpy(c + first, rb->data, size - first);
	*copy = c;
	return c;
}

static void user_rb_put_back(struct ringbuf *rb, uint64_t pos, uint32_t size, const uint8_t *copy)
{
	uint64_t off = pos & rb->mask, first = rb->mask + 1 - off;

	memcpy(rb->data + off, copy, first);
	memcpy(rb->data, copy + first, size - first);
	ksvc_free((void *)copy);
}

long bpf_user_ringbuf_drain(struct bpf_map *map, uint64_t fn, uint64_t ctx, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	long samples, discarded = 0, ret = 0;
	int busy = 0;

	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return -EINVAL;
	if (!atomic_compare_exchange_strong(&rb->busy, &busy, 1))
		return -EBUSY;
	for (samples = 0; samples < USER_RB_MAX_SAMPLES && ret == 0; samples++) {
		uint64_t pos, dynptr[2];
		uint32_t size;
		void *copy, *data;
		int err = user_rb_peek(rb, &pos, &size);

		if (err == -ENODATA)
			break;
		if (err == -EAGAIN) {
			discarded++;
			continue;
		}
		if (err) {
			ret = err;
			goto out;
		}
		data = user_rb_sample(rb, pos, size, &copy);
		if (!data) {
			ret = -ENOMEM;
			goto out;
		}
		bpf_dynptr_init(dynptr, data, BPF_DYNPTR_LOCAL, size);
		ret = (long)bpf_callback_run(fn, (uintptr_t)dynptr, ctx, 0, 0);
		if (copy) /* the dynptr is writable, as Linux 6.1's */
			user_rb_put_back(rb, pos, size, copy);
		/* release pairs with the producer's acquire: the space is free again */
		__atomic_store_n(rb->consumer, pos - RB_HDR + (((uint64_t)size + RB_HDR + 7) & ~7ull),
				 __ATOMIC_RELEASE);
	}
	ret = samples - discarded;
out:
	atomic_store(&rb->busy, 0);
	if ((flags & BPF_RB_FORCE_WAKEUP) || (!(flags & BPF_RB_NO_WAKEUP) && samples > 0))
		ksvc_waitq_wake_all(rb->wq);
	return ret;
}

/* ---- the file side ---- */

unsigned int bpf_ringbuf_poll(struct bpf_map *map, struct ksvc_poll *pt)
{
	struct ringbuf *rb = rb_of(map);
	uint64_t avail = bpf_ringbuf_query(map, BPF_RB_AVAIL_DATA);

	ksvc_poll_wait(pt, rb->wq);
	if (map->type == BPF_MAP_TYPE_USER_RINGBUF) /* writable while there is room */
		return avail < rb->mask + 1 ? POLLOUT | POLLWRNORM : 0;
	return avail ? POLLIN | POLLRDNORM : 0;
}

int bpf_ringbuf_mmap_check(struct bpf_map *map, const struct ksvc_mmap *m)
{
	uint64_t pages = 2 + 2 * ((rb_of(map)->mask + 1) / KSVC_PAGE_SIZE);

	/* writable: the consumer page alone (ringbuf_map_mmap_kern); for a user ring, all but
	 * the consumer page (ringbuf_map_mmap_user) */
	if (map->type == BPF_MAP_TYPE_USER_RINGBUF) {
		if (m->write && m->pgoff == 0)
			return -EPERM;
	} else if (m->write && (m->pgoff != 0 || m->len != KSVC_PAGE_SIZE)) {
		return -EPERM;
	}
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
