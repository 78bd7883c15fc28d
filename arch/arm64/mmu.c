/*
 * mmu.c - the kernel half of the address space (TTBR1): linear map, MMIO mappings, and the
 * generic 4-level table walker that user address spaces use too.
 *
 * The early boot code left the image mapped at KIMAGE_VA in kernel_l0.  Before the page
 * allocator exists, table pages come from a static pool in .bss; mmu_use_page_allocator()
 * switches to alloc_pages.  Large aligned ranges use 1 GiB and 2 MiB blocks.
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <arch/sysreg.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/spinlock.h>
#include <kern/string.h>

extern pte_t kernel_l0[512];

#define EARLY_POOL_PAGES 48
static uint8_t early_pool[EARLY_POOL_PAGES][PAGE_SIZE] __aligned(PAGE_SIZE);
static unsigned int early_used;
static bool use_allocator;
static struct spinlock kmap_lock = SPINLOCK_INIT;
static uint64_t iomap_next = IOMAP_BASE;

static void *table_alloc(void)
{
	if (use_allocator)
		return alloc_pages(0);
	if (early_used == EARLY_POOL_PAGES)
		return NULL;
	return early_pool[early_used++];
}

void mmu_use_page_allocator(void)
{
	use_allocator = true;
	/* The JIT area's tables, once: mapping and unmapping code there then allocates nothing,
	 * so memory use returns to where it was when programs go. */
	for (uint64_t va = JIT_BASE; va < JIT_BASE + JIT_SIZE; va += 1ull << 21)
		pt_walk(kernel_l0, va, true, table_alloc);
}

static inline uint64_t table_pa(const void *va)
{
	return virt_to_phys(va);
}

extern char _head[], _kernel_end[];

/* Table pages live in the linear map, except the boot tables and the early pool, which are
 * part of the image and reachable through KIMAGE_VA before the linear map exists. */
static inline pte_t *table_va(pte_t e)
{
	uint64_t pa = e & PTE_ADDR_MASK;
	uint64_t img = (uint64_t)_head - kimage_voffset;

	if (pa >= img && pa < (uint64_t)_kernel_end - kimage_voffset)
		return (pte_t *)(pa + kimage_voffset);
	return phys_to_virt(pa);
}

pte_t *pt_walk(pte_t *root, uint64_t va, bool alloc, pt_alloc_fn alloc_fn)
{
	pte_t *t = root;

	for (int level = 0; level < 3; level++) {
		unsigned int idx = (va >> (39 - 9 * level)) & 511;
		pte_t e = t[idx];

		if (!(e & PTE_VALID)) {
			if (!alloc)
				return NULL;
			void *n = alloc_fn();

			if (!n)
				return NULL;
			/* Table contents visible before the descriptor that points at them. */
			dsb_ishst();
			t[idx] = table_pa(n) | PTE_VALID | PTE_TABLE;
			e = t[idx];
		} else if (!(e & PTE_TABLE)) {
			return NULL; /* a block covers it */
		}
		t = table_va(e);
	}
	return &t[(va >> 12) & 511];
}

static pte_t leaf_attrs(int type)
{
	if (type == MAP_DEVICE)
		return PTE_ATTRIDX(MT_DEVICE_nGnRnE) | PTE_AF | PTE_PXN | PTE_UXN;
	if (type == MAP_TEXT)
		return PTE_ATTRIDX(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN | PTE_RDONLY;
	/* the linear map is data: kernel code runs from KIMAGE_VA, JIT code from MAP_TEXT pages,
	 * so no page is writable and executable at EL1 through any of its addresses */
	return PTE_ATTRIDX(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN | PTE_PXN;
}

/*
 * Map one block or page at the given level (1: 1 GiB, 2: 2 MiB, 3: 4 KiB).  -EEXIST when a
 * table already sits where the block would go: part of that block was mapped before with
 * smaller entries (kmain maps the DTB's 4 MiB before the memory nodes are known), and a
 * "valid, so already mapped" answer would leave the rest of the block unmapped.
 */
static int map_one(uint64_t va, uint64_t pa, int level, int type)
{
	pte_t *t = kernel_l0;

	for (int l = 0; l < level; l++) {
		unsigned int idx = (va >> (39 - 9 * l)) & 511;
		pte_t e = t[idx];

		if (!(e & PTE_VALID)) {
			void *n = table_alloc();

			if (!n)
				return -ENOMEM;
			memset(n, 0, PAGE_SIZE);
			dsb_ishst();
			t[idx] = table_pa(n) | PTE_VALID | PTE_TABLE;
			e = t[idx];
		} else if (!(e & PTE_TABLE)) {
			return 0; /* already covered by a larger block: the linear map is 1:1 */
		}
		t = table_va(e);
	}
	unsigned int idx = (va >> (39 - 9 * level)) & 511;

	if (level < 3 && (t[idx] & (PTE_VALID | PTE_TABLE)) == (PTE_VALID | PTE_TABLE))
		return -EEXIST;
	if (t[idx] & PTE_VALID)
		return 0;
	t[idx] = (pa & PTE_ADDR_MASK) | leaf_attrs(type) | (level == 3 ? PTE_PAGE : PTE_BLOCK);
	return 0;
}

int mmu_map_kernel(uint64_t va, uint64_t pa, uint64_t size, int type)
{
	unsigned long f = spin_lock_irqsave(&kmap_lock);
	uint64_t end = va + size;
	int err = 0;

	va &= ~(PAGE_SIZE - 1);
	pa &= ~(PAGE_SIZE - 1);
	while (va < end && !err) {
		uint64_t left = end - va;
		int level = 3;

		if (type == MAP_NORMAL && !((va | pa) & ((1ull << 30) - 1)) && left >= (1ull << 30))
			level = 1;
		else if (type == MAP_NORMAL && !((va | pa) & ((1ull << 21) - 1)) &&
			 left >= (1ull << 21))
			level = 2;
		/* Fill a table that is already there at the next level down rather than
		 * replace it: it is live (the DTB is read through it), and swapping a table
		 * for a block would need break-before-make. */
		while ((err = map_one(va, pa, level, type)) == -EEXIST)
			level++;
		uint64_t step = 1ull << (39 - 9 * level);

		va += step;
		pa += step;
	}
	dsb_ishst();
	__asm__ volatile("tlbi vmalle1is\n dsb ish\n isb" ::: "memory");
	spin_unlock_irqrestore(&kmap_lock, f);
	return err;
}

void mmu_unmap_kernel(uint64_t va, uint64_t size)
{
	unsigned long f = spin_lock_irqsave(&kmap_lock);

	for (uint64_t a = va & ~(PAGE_SIZE - 1); a < va + size; a += PAGE_SIZE) {
		pte_t *pte = pt_walk(kernel_l0, a, false, NULL);

		if (pte)
			*pte = 0;
	}
	dsb_ishst();
	for (uint64_t a = va & ~(PAGE_SIZE - 1); a < va + size; a += PAGE_SIZE)
		__asm__ volatile("tlbi vaae1is, %0" ::"r"(a >> 12) : "memory");
	__asm__ volatile("dsb ish\n isb" ::: "memory");
	spin_unlock_irqrestore(&kmap_lock, f);
}

uint64_t ioremap(uint64_t pa, uint64_t size)
{
	uint64_t off = pa & (PAGE_SIZE - 1);
	uint64_t len = (size + off + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	unsigned long f = spin_lock_irqsave(&kmap_lock);
	uint64_t va = iomap_next;

	iomap_next += len + PAGE_SIZE; /* a guard page between mappings */
	spin_unlock_irqrestore(&kmap_lock, f);
	if (va + len > IOMAP_END || mmu_map_kernel(va, pa - off, len, MAP_DEVICE))
		return 0;
	return va + off;
}
