/*
 * kmalloc.c - small-object allocation on top of the page allocator.
 *
 * Sizes up to 2048 bytes come from per-class slabs of one page each (classes 16, 32, ...,
 * 2048); a slab page records its class in its struct page, so kmem_free needs no size.  Larger
 * requests take whole 2^order page blocks.  Lock: k->lock (IRQ-safe) covers the partial lists
 * and the slab fields of struct page.  Portable: host tests run it over an arena.
 */
#include <kern/assert.h>
#include <kern/page.h>
#include <kern/string.h>

#define NR_CLASSES 8 /* 16 << 0 .. 16 << 7 = 2048 */
#define POISON_FREE 0x6b /* KDEBUG: a free slab object past its free-list link */

/* KDEBUG: the bytes of a free object after its link, all POISON_FREE unless written since. */
static void poison(void *p, size_t obj)
{
	memset((char *)p + sizeof(void *), POISON_FREE, obj - sizeof(void *));
}

static bool poisoned(const void *p, size_t obj)
{
	const unsigned char *b = (const unsigned char *)p + sizeof(void *);

	for (size_t i = 0; i < obj - sizeof(void *); i++)
		if (b[i] != POISON_FREE)
			return false;
	return true;
}

void kmem_init(struct kmem *k, struct page_allocator *pages)
{
	memset(k, 0, sizeof(*k));
	k->pages = pages;
	spin_init(&k->lock);
	for (int i = 0; i < NR_CLASSES; i++)
		list_init(&k->partial[i]);
}

static int size_class(size_t size)
{
	for (int c = 0; c < NR_CLASSES; c++)
		if (size <= (16u << c))
			return c;
	return -1;
}

static unsigned int size_order(size_t size)
{
	unsigned int order = 0;

	while ((PG_SIZE << order) < size)
		order++;
	return order;
}

static void *slab_alloc_locked(struct kmem *k, int c)
{
	spin_assert_held(&k->lock);
	struct page *pg;
	size_t obj = 16u << c;

	if (list_empty(&k->partial[c])) {
		uint64_t pfn;

		if (!page_alloc(k->pages, 0, &pfn))
			return NULL;
		pg = page_lookup(k->pages, pfn);
		pg->state = PAGE_SLAB;
		pg->slab_class = (uint8_t)c;
		pg->slab_inuse = 0;
		/* Thread the free list through the objects. */
		char *base = page_pfn_to_va(k->pages, pfn);

		pg->slab_free = NULL;
		for (size_t off = PG_SIZE / obj * obj; off >= obj;) {
			off -= obj;
			if (KDEBUG)
				poison(base + off, obj);
			*(void **)(base + off) = pg->slab_free;
			pg->slab_free = base + off;
		}
		list_add_head(&k->partial[c], &pg->node);
	}
	pg = list_entry(k->partial[c].next, struct page, node);
	void *p = pg->slab_free;

	if (KDEBUG && !poisoned(p, obj))
		kpanic("kmalloc: a freed %zu-byte object at %p was written after its free", obj, p);
	pg->slab_free = *(void **)p;
	pg->slab_inuse++;
	if (!pg->slab_free)
		list_del(&pg->node);
	return p;
}

/*
 * KDEBUG red zone of a slab object: the object's class fits the request plus 16 bytes; the
 * bytes after the request hold RED_ZONE up to the last 8, which hold the requested size.
 * kmem_free checks both: a write past the end of what was asked for panics there.  A block of
 * pages gets one too when it has the room (at least 16 bytes past the request; its page's
 * slab_class says so): doubling the block for it would change what runs out of memory when.
 */
#define RED_ZONE 0xbb
#define RED_MIN 16

static void red_zone_set(void *p, size_t obj, size_t size)
{
	memset((char *)p + size, RED_ZONE, obj - sizeof(uint64_t) - size);
	memcpy((char *)p + obj - sizeof(uint64_t), &(uint64_t){ size }, sizeof(uint64_t));
}

static void red_zone_check(const void *p, size_t obj)
{
	uint64_t size;

	memcpy(&size, (const char *)p + obj - sizeof(uint64_t), sizeof(size));
	if (size > obj - RED_MIN)
		kpanic("kmalloc: the size word of a %zu-byte object at %p was overwritten (%lu)", obj,
		       p, (unsigned long)size);
	for (size_t i = size; i < obj - sizeof(uint64_t); i++)
		if (((const unsigned char *)p)[i] != RED_ZONE)
			kpanic("kmalloc: a write past the end of a %lu-byte object at %p (byte %zu)",
			       (unsigned long)size, p, i);
}

size_t kmem_object_size(size_t size)
{
	int c = size_class((size ? size : 1) + (KDEBUG ? RED_MIN : 0));

	return c >= 0 ? 16u << c : (size_t)PG_SIZE << size_order(size);
}

void *kmem_alloc(struct kmem *k, size_t size)
{
	int c = size_class((size ? size : 1) + (KDEBUG ? RED_MIN : 0));
	void *p;

	if (c >= 0) {
		unsigned long flags = spin_lock_irqsave(&k->lock);

		p = slab_alloc_locked(k, c);
		if (p)
			k->bytes_in_use += 16u << c;
		spin_unlock_irqrestore(&k->lock, flags);
		if (p) {
			memset(p, 0, 16u << c);
			if (KDEBUG)
				red_zone_set(p, 16u << c, size);
		}
		return p;
	}
	unsigned int order = size_order(size);
	uint64_t pfn;

	if (order > PAGE_MAX_ORDER || !page_alloc(k->pages, order, &pfn))
		return NULL;
	p = page_pfn_to_va(k->pages, pfn);
	memset(p, 0, PG_SIZE << order);
	if (KDEBUG) {
		struct page *pg = page_lookup(k->pages, pfn);
		bool room = (PG_SIZE << order) - size >= RED_MIN;

		pg->slab_class = room;
		if (room)
			red_zone_set(p, PG_SIZE << order, size);
	}
	unsigned long flags = spin_lock_irqsave(&k->lock);

	k->bytes_in_use += PG_SIZE << order;
	spin_unlock_irqrestore(&k->lock, flags);
	return p;
}

void kmem_free(struct kmem *k, void *p)
{
	if (!p)
		return;
	uint64_t pfn = page_va_to_pfn(k->pages, p);
	struct page *pg = page_lookup(k->pages, pfn);

	kassert(pg);
	if (pg->state == PAGE_SLAB) {
		unsigned long flags = spin_lock_irqsave(&k->lock);
		size_t obj = 16u << pg->slab_class;
		bool was_full = !pg->slab_free;

		kassert(((uintptr_t)p & (PG_SIZE - 1)) % obj == 0);
		if (KDEBUG) {
			/* on its page's free list already: a double free */
			for (void *f = pg->slab_free; f; f = *(void **)f)
				if (f == p)
					kpanic("kmalloc: double free of a %zu-byte object at %p", obj, p);
			red_zone_check(p, obj);
			poison(p, obj);
		}
		*(void **)p = pg->slab_free;
		pg->slab_free = p;
		pg->slab_inuse--;
		k->bytes_in_use -= obj;
		if (pg->slab_inuse == 0) {
			if (!was_full)
				list_del(&pg->node);
			spin_unlock_irqrestore(&k->lock, flags);
			pg->state = PAGE_ALLOCATED;
			page_free(k->pages, pfn, 0);
			return;
		}
		if (was_full)
			list_add_head(&k->partial[pg->slab_class], &pg->node);
		spin_unlock_irqrestore(&k->lock, flags);
		return;
	}
	kassert(pg->state == PAGE_ALLOCATED && ((uintptr_t)p & (PG_SIZE - 1)) == 0);
	unsigned int order = pg->order;

	if (KDEBUG && pg->slab_class)
		red_zone_check(p, PG_SIZE << order);
	unsigned long flags = spin_lock_irqsave(&k->lock);

	k->bytes_in_use -= PG_SIZE << order;
	spin_unlock_irqrestore(&k->lock, flags);
	page_free(k->pages, pfn, order);
}
