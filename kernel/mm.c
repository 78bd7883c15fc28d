/*
 * mm.c - kernel memory bring-up: the linear map of all RAM the device tree lists, the page
 * allocator over what is free (RAM minus the image, the DTB, the initrd and reserved ranges),
 * and kmalloc.  Page metadata is carved from the top of the largest RAM range.
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/string.h>
#include <kern/trace.h>

struct page_allocator kernel_pages;
struct kmem kernel_kmem;
/* What mm_init kept from the allocator, the initrd last so that freeing it drops one entry. */
static struct phys_range boot_holes[PLATFORM_MAX_RESERVED + 4];
static int nr_boot_holes;

/* kmem:kmalloc / kfree and kmem:mm_page_alloc / mm_page_free fire here (their callers' call
 * sites), after the allocators' locks are dropped. */
void *kmalloc(size_t size)
{
	void *p = kmem_alloc(&kernel_kmem, size);

	trace_kmalloc((uint64_t)(uintptr_t)__builtin_return_address(0), p, size,
		      p ? kmem_object_size(size) : 0);
	return p;
}

void kfree(void *p)
{
	trace_kfree((uint64_t)(uintptr_t)__builtin_return_address(0), p);
	kmem_free(&kernel_kmem, p);
}

void *alloc_pages(unsigned int order)
{
	uint64_t pfn;

	if (!page_alloc(&kernel_pages, order, &pfn)) {
		trace_mm_page_alloc(~0ull, order);
		return NULL;
	}
	void *p = page_pfn_to_va(&kernel_pages, pfn);

	memset(p, 0, PAGE_SIZE << order);
	trace_mm_page_alloc(pfn, order);
	return p;
}

void free_pages(void *p, unsigned int order)
{
	uint64_t pfn = page_va_to_pfn(&kernel_pages, p);

	trace_mm_page_free(pfn, order);
	page_free(&kernel_pages, pfn, order);
}

uint64_t mem_total_bytes(void)
{
	return kernel_pages.nr_managed << PAGE_SHIFT;
}

uint64_t mem_free_bytes(void)
{
	return kernel_pages.nr_free << PAGE_SHIFT;
}

/* Free [a, b) minus every range in holes[] (sorted or not: handled by recursion). */
static void free_minus(uint64_t a, uint64_t b, const struct phys_range *holes, int nholes)
{
	a = ALIGN_UP(a, PAGE_SIZE);
	b = ALIGN_DOWN(b, PAGE_SIZE);
	if (a >= b)
		return;
	for (int i = 0; i < nholes; i++) {
		uint64_t hs = ALIGN_DOWN(holes[i].base, PAGE_SIZE);
		uint64_t he = ALIGN_UP(holes[i].base + holes[i].size, PAGE_SIZE);

		if (he <= a || hs >= b)
			continue;
		free_minus(a, hs, holes + i + 1, nholes - i - 1);
		free_minus(he, b, holes + i + 1, nholes - i - 1);
		return;
	}
	page_free_range(&kernel_pages, a >> PAGE_SHIFT, (b - a) >> PAGE_SHIFT);
}

int mm_boot_holes(const struct phys_range **holes)
{
	*holes = boot_holes;
	return nr_boot_holes;
}

void mm_init(const struct platform *pf, uint64_t image_pa, uint64_t image_end_pa, uint64_t dtb_pa,
	     uint64_t dtb_size)
{
	struct phys_range *holes = boot_holes;
	int nholes = 0;

	for (unsigned int i = 0; i < pf->nr_mem; i++)
		kassert(mmu_map_kernel(PAGE_OFFSET + pf->mem[i].base, pf->mem[i].base,
				       pf->mem[i].size, MAP_NORMAL) == 0);
	page_allocator_init(&kernel_pages, PAGE_OFFSET);

	/* Metadata for every range, from the top of the largest one. */
	unsigned int big = 0;
	uint64_t meta_bytes = 0;

	for (unsigned int i = 0; i < pf->nr_mem; i++) {
		meta_bytes += (pf->mem[i].size >> PAGE_SHIFT) * sizeof(struct page);
		if (pf->mem[i].size > pf->mem[big].size)
			big = i;
	}
	meta_bytes = ALIGN_UP(meta_bytes, PAGE_SIZE);
	uint64_t meta_pa = ALIGN_DOWN(pf->mem[big].base + pf->mem[big].size - meta_bytes, PAGE_SIZE);
	struct page *meta = phys_to_virt(meta_pa);

	for (unsigned int i = 0; i < pf->nr_mem; i++) {
		uint64_t n = pf->mem[i].size >> PAGE_SHIFT;

		kassert(page_zone_add(&kernel_pages, pf->mem[i].base >> PAGE_SHIFT, n, meta) == 0);
		meta += n;
	}
	holes[nholes++] = (struct phys_range){ image_pa, image_end_pa - image_pa };
	holes[nholes++] = (struct phys_range){ dtb_pa, dtb_size };
	holes[nholes++] = (struct phys_range){ meta_pa, meta_bytes };
	for (unsigned int i = 0; i < pf->nr_reserved; i++)
		holes[nholes++] = pf->reserved[i];
	if (pf->initrd_end)
		holes[nholes++] =
			(struct phys_range){ pf->initrd_start, pf->initrd_end - pf->initrd_start };
	nr_boot_holes = nholes;
	for (unsigned int i = 0; i < pf->nr_mem; i++)
		free_minus(pf->mem[i].base, pf->mem[i].base + pf->mem[i].size, holes, nholes);
	kmem_init(&kernel_kmem, &kernel_pages);
	mmu_use_page_allocator();
}

/* Give the initrd's pages back once it has been unpacked. */
void mm_free_initrd(const struct platform *pf)
{
	if (pf->initrd_end) {
		nr_boot_holes--;
		free_minus(pf->initrd_start, pf->initrd_end, NULL, 0);
	}
}
