/*
 * page.c - a binary buddy allocator over physical page frames.
 *
 * Blocks of 2^order pages are aligned to 2^order in pfn space and never cross a zone (one zone
 * per RAM range), so a block's buddy is pfn ^ (1 << order) when that lies in the same zone.
 * Free blocks sit on per-zone, per-order lists; frees merge with free buddies of the same
 * order.  The allocator never touches the memory it manages (the caller zeroes), so it is
 * portable and host-tested over an arena.
 * Lock: a->lock (IRQ-safe) covers every field of the allocator and the page metadata's
 * state/order/node; refcount belongs to the page's owner.
 */
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/page.h>
#include <kern/string.h>

void page_allocator_init(struct page_allocator *a, uint64_t va_offset)
{
	memset(a, 0, sizeof(*a));
	spin_init(&a->lock);
	a->va_offset = va_offset;
}

int page_zone_add(struct page_allocator *a, uint64_t base_pfn, uint64_t npages, struct page *meta)
{
	if (a->nr_zones == PAGE_MAX_ZONES || npages == 0)
		return -ENOSPC;
	struct page_zone *z = &a->zones[a->nr_zones];

	z->base_pfn = base_pfn;
	z->npages = npages;
	z->pages = meta;
	memset(meta, 0, npages * sizeof(*meta));
	for (unsigned int o = 0; o <= PAGE_MAX_ORDER; o++)
		list_init(&z->free[o]);
	for (uint64_t i = 0; i < npages; i++)
		list_init(&meta[i].node);
	a->nr_zones++;
	return 0;
}

static struct page_zone *zone_of(struct page_allocator *a, uint64_t pfn)
{
	for (unsigned int i = 0; i < a->nr_zones; i++) {
		struct page_zone *z = &a->zones[i];

		if (pfn >= z->base_pfn && pfn - z->base_pfn < z->npages)
			return z;
	}
	return NULL;
}

struct page *page_lookup(struct page_allocator *a, uint64_t pfn)
{
	struct page_zone *z = zone_of(a, pfn);

	return z ? &z->pages[pfn - z->base_pfn] : NULL;
}

static bool block_in_zone(const struct page_zone *z, uint64_t pfn, unsigned int order)
{
	return pfn >= z->base_pfn && pfn + (1ul << order) <= z->base_pfn + z->npages;
}

/* Put a block on its free list, merging with free buddies; a->lock held. */
static void free_block_locked(struct page_allocator *a, struct page_zone *z, uint64_t pfn,
			      unsigned int order)
{
	spin_assert_held(&a->lock);
	while (order < PAGE_MAX_ORDER) {
		uint64_t buddy = pfn ^ (1ul << order);

		if (!block_in_zone(z, buddy, order))
			break;
		struct page *b = &z->pages[buddy - z->base_pfn];

		if (b->state != PAGE_FREE || b->order != order)
			break;
		list_del(&b->node);
		b->state = PAGE_TAIL;
		pfn &= ~(1ul << order);
		order++;
	}
	struct page *head = &z->pages[pfn - z->base_pfn];

	head->state = PAGE_FREE;
	head->order = (uint8_t)order;
	list_add_head(&z->free[order], &head->node);
}

void page_free_range(struct page_allocator *a, uint64_t pfn, uint64_t n)
{
	unsigned long flags = spin_lock_irqsave(&a->lock);

	while (n) {
		struct page_zone *z = zone_of(a, pfn);

		kassert(z);
		unsigned int order = 0;

		/* The largest aligned block that fits in what is left. */
		while (order < PAGE_MAX_ORDER && !(pfn & (1ul << order)) &&
		       (2ul << order) <= n && block_in_zone(z, pfn, order + 1))
			order++;
		for (uint64_t i = 1; i < (1ul << order); i++)
			z->pages[pfn - z->base_pfn + i].state = PAGE_TAIL;
		free_block_locked(a, z, pfn, order);
		a->nr_free += 1ul << order;
		a->nr_managed += 1ul << order;
		pfn += 1ul << order;
		n -= 1ul << order;
	}
	spin_unlock_irqrestore(&a->lock, flags);
}

bool page_alloc(struct page_allocator *a, unsigned int order, uint64_t *pfn_out)
{
	if (order > PAGE_MAX_ORDER)
		return false;
	unsigned long flags = spin_lock_irqsave(&a->lock);

	for (unsigned int zi = 0; zi < a->nr_zones; zi++) {
		struct page_zone *z = &a->zones[zi];
		unsigned int o = order;

		while (o <= PAGE_MAX_ORDER && list_empty(&z->free[o]))
			o++;
		if (o > PAGE_MAX_ORDER)
			continue;
		struct page *head = list_entry(list_pop_head(&z->free[o]), struct page, node);
		uint64_t pfn = z->base_pfn + (uint64_t)(head - z->pages);

		/* Split: hand the upper halves back until the block is the size asked for. */
		while (o > order) {
			o--;
			uint64_t upper = pfn + (1ul << o);
			struct page *u = &z->pages[upper - z->base_pfn];

			u->state = PAGE_FREE;
			u->order = (uint8_t)o;
			list_add_head(&z->free[o], &u->node);
		}
		head->state = PAGE_ALLOCATED;
		head->order = (uint8_t)order;
		head->refcount = 1;
		a->nr_free -= 1ul << order;
		spin_unlock_irqrestore(&a->lock, flags);
		*pfn_out = pfn;
		return true;
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return false;
}

void page_free(struct page_allocator *a, uint64_t pfn, unsigned int order)
{
	unsigned long flags = spin_lock_irqsave(&a->lock);
	struct page_zone *z = zone_of(a, pfn);

	kassert(z && block_in_zone(z, pfn, order));
	struct page *head = &z->pages[pfn - z->base_pfn];

	kassert(head->state == PAGE_ALLOCATED || head->state == PAGE_SLAB);
	kassert(head->order == order);
	head->refcount = 0;
	head->slab_free = NULL;
	head->slab_inuse = 0;
	free_block_locked(a, z, pfn, order);
	a->nr_free += 1ul << order;
	spin_unlock_irqrestore(&a->lock, flags);
}
