/*
 * page.h - the physical page allocator (buddy system) and kmalloc.
 *
 * Pages are named by page frame number (pfn = physical address >> 12).  The allocator maps a
 * pfn to a usable pointer with va = (pfn << PAGE_SHIFT) + va_offset: the kernel uses its linear
 * map offset, host tests an identity arena.  Every function is IRQ-safe (one spinlock,
 * taken with interrupts masked) and never sleeps.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/spinlock.h>

#define PAGE_MAX_ORDER 10 /* largest block: 4 MiB */
#define PAGE_MAX_ZONES 8
#define PG_SHIFT 12
#define PG_SIZE (1ul << PG_SHIFT)

enum page_state {
	PAGE_RESERVED = 0, /* not managed (kernel image, firmware, holes) */
	PAGE_FREE, /* head of a free block of 2^order pages */
	PAGE_ALLOCATED, /* head of an allocated block */
	PAGE_TAIL, /* inside a block whose head is elsewhere */
	PAGE_SLAB, /* a kmalloc slab page */
};

struct page {
	struct list_node node; /* free list or slab partial list; lock: allocator / kmalloc */
	uint32_t refcount; /* users of an allocated page (copy-on-write sharing) */
	uint8_t order;
	uint8_t state; /* enum page_state */
	uint8_t slab_class; /* PAGE_SLAB: kmalloc size class */
	uint16_t slab_inuse; /* PAGE_SLAB: objects handed out */
	void *slab_free; /* PAGE_SLAB: first free object */
};

struct page_zone {
	uint64_t base_pfn, npages;
	struct page *pages; /* npages entries */
	struct list_node free[PAGE_MAX_ORDER + 1];
};

struct page_allocator {
	struct spinlock lock;
	uint64_t va_offset;
	struct page_zone zones[PAGE_MAX_ZONES];
	unsigned int nr_zones;
	uint64_t nr_free; /* pages */
	uint64_t nr_managed; /* pages ever freed into the allocator */
};

void page_allocator_init(struct page_allocator *a, uint64_t va_offset);
/* Describe pfns [base, base + n) with metadata meta[n]; every page starts reserved. */
int page_zone_add(struct page_allocator *a, uint64_t base_pfn, uint64_t npages, struct page *meta);
/* Hand reserved pages [pfn, pfn + n) to the allocator as free memory. */
void page_free_range(struct page_allocator *a, uint64_t pfn, uint64_t n);
/* 2^order contiguous pages, not zeroed; false when none are free. */
bool page_alloc(struct page_allocator *a, unsigned int order, uint64_t *pfn);
void page_free(struct page_allocator *a, uint64_t pfn, unsigned int order);
/* Metadata of a managed pfn, or NULL. */
struct page *page_lookup(struct page_allocator *a, uint64_t pfn);

static inline void *page_pfn_to_va(const struct page_allocator *a, uint64_t pfn)
{
	return (void *)(uintptr_t)((pfn << PG_SHIFT) + a->va_offset);
}

static inline uint64_t page_va_to_pfn(const struct page_allocator *a, const void *va)
{
	return ((uint64_t)(uintptr_t)va - a->va_offset) >> PG_SHIFT;
}

/* ---- kmalloc: slabs of one page for 16..2048 bytes, whole pages beyond ---- */

struct kmem {
	struct page_allocator *pages;
	struct spinlock lock;
	struct list_node partial[8]; /* slab pages with free objects, per size class */
	uint64_t bytes_in_use; /* for leak checks */
};

void kmem_init(struct kmem *k, struct page_allocator *pages);
/* Zeroed, 16-byte aligned (page aligned from 4 KiB up); NULL when out of memory. */
/* The bytes an allocation of size takes (its size class, or its pages). */
size_t kmem_object_size(size_t size);
void *kmem_alloc(struct kmem *k, size_t size);
void kmem_free(struct kmem *k, void *p);
