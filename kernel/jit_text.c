/*
 * jit_text.c - executable memory for the eBPF JIT (ksvc_text_alloc/free, include/kern/ksvc.h)
 * and the CPU feature the JIT asks about (LSE atomics).
 *
 * W^X: the code is written through the pages' linear-map address, cleaned to the point of
 * unification (DC CVAU), then mapped read-only and executable at a fresh address in
 * [JIT_BASE, JIT_END) whose lines are invalidated in the instruction caches (IC IVAU, broadcast
 * to the inner shareable domain) before an ISB.  Other CPUs reach the code only through a
 * program pointer they load after an exception entry (the PMU interrupt, a syscall), which is
 * a context synchronization event, so they need no IPI.
 * Not here: reuse of JIT addresses (a bump allocator; 64 TiB of them last a very long time).
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <arch/sysreg.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/spinlock.h>
#include <kern/string.h>

extern pte_t kernel_l0[512];

static struct spinlock jit_va_lock = SPINLOCK_INIT;
static uint64_t jit_va_next = JIT_BASE; /* (jit_va_lock) */

static unsigned int text_order(size_t len)
{
	unsigned int order = 0;

	while ((PAGE_SIZE << order) < len)
		order++;
	return order;
}

void *ksvc_text_alloc(const void *code, size_t len)
{
	unsigned int order = text_order(len);
	uint64_t size = PAGE_SIZE << order, ctr = read_sysreg(ctr_el0), va;
	uint64_t dline = 4ull << ((ctr >> 16) & 15), iline = 4ull << (ctr & 15);
	unsigned long f;
	uint8_t *pages;

	if (!len || order > 8)
		return NULL;
	pages = alloc_pages(order);
	if (!pages)
		return NULL;
	memcpy(pages, code, len);
	for (uint64_t a = (uint64_t)pages & ~(dline - 1); a < (uint64_t)pages + len; a += dline)
		__asm__ volatile("dc cvau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
	f = spin_lock_irqsave(&jit_va_lock);
	va = jit_va_next;
	jit_va_next += size + PAGE_SIZE; /* a guard page between images */
	spin_unlock_irqrestore(&jit_va_lock, f);
	if (va + size > JIT_END || mmu_map_kernel(va, virt_to_phys(pages), size, MAP_TEXT)) {
		mmu_unmap_kernel(va, size);
		free_pages(pages, order);
		return NULL;
	}
	for (uint64_t a = va & ~(iline - 1); a < va + len; a += iline)
		__asm__ volatile("ic ivau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish\n isb" ::: "memory");
	return (void *)va;
}

void ksvc_text_free(void *text, size_t len)
{
	unsigned int order = text_order(len);
	uint64_t va = (uint64_t)text;
	pte_t *pte;
	void *pages;

	if (!text)
		return;
	/* the linear-map address of the first page, from the mapping itself */
	pte = pt_walk(kernel_l0, va, false, NULL);
	pages = pte && (*pte & PTE_VALID) ? phys_to_virt(*pte & PTE_ADDR_MASK) : NULL;
	mmu_unmap_kernel(va, PAGE_SIZE << order);
	if (pages)
		free_pages(pages, order);
}

bool ksvc_cpu_has_lse_atomics(void)
{
	return ((read_sysreg(id_aa64isar0_el1) >> 20) & 15) >= 2;
}
