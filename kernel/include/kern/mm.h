/*
 * mm.h - kernel memory: the global page allocator and kmalloc over the linear map.
 * kmalloc/kfree/alloc_pages are IRQ-safe and never sleep.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <kern/page.h>

extern struct page_allocator kernel_pages;
extern struct kmem kernel_kmem;

void *kmalloc(size_t size); /* zeroed */
void kfree(void *p);
void *alloc_pages(unsigned int order); /* zeroed, linear-map address */
void free_pages(void *p, unsigned int order);
uint64_t mem_total_bytes(void);
uint64_t mem_free_bytes(void);

struct platform;
/* Boot: map RAM, start the page allocator and kmalloc (kernel/mm.c). */
void mm_init(const struct platform *pf, uint64_t image_pa, uint64_t image_end_pa, uint64_t dtb_pa,
	     uint64_t dtb_size);
void mm_free_initrd(const struct platform *pf);
struct phys_range;
/* The RAM ranges kept from the allocator (image, DTB, page array, DT reserved, the initrd until
 * it is freed), for the self-test that checks the allocator manages all the rest. */
int mm_boot_holes(const struct phys_range **holes);
