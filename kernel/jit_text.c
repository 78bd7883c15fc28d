/*
 * jit_text.c - executable memory for the eBPF JIT (ksvc_text_alloc/free, include/kern/ksvc.h)
 * and what the JIT asks about the CPU and the kernel (LSE atomics, where the current task's ids
 * are).
 *
 * W^X: the code is written through the pages' linear-map address, cleaned to the point of
 * unification (DC CVAU), then mapped read-only and executable at a fresh address in
 * [JIT_BASE, JIT_END) whose lines are invalidated in the instruction caches (IC IVAU, broadcast
 * to the inner shareable domain) before an ISB.  Other CPUs reach the code only through a
 * program pointer they load after an exception entry (the PMU interrupt, a syscall), which is
 * a context synchronization event, so they need no IPI.
 * The area is JIT_SIZE bytes whose page tables mmu.c makes at boot; a bitmap hands out runs of
 * pages, each followed by an unmapped guard page.
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <arch/sysreg.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/spinlock.h>
#include <kern/string.h>

extern pte_t kernel_l0[512];

#define JIT_PAGES (JIT_SIZE / PAGE_SIZE)

static struct spinlock jit_va_lock = SPINLOCK_INIT;
static uint64_t jit_used[JIT_PAGES / 64]; /* (jit_va_lock) a bit per page of the area */

static bool va_busy(uint64_t i)
{
	return jit_used[i / 64] >> (i % 64) & 1;
}

static void va_mark(uint64_t first, uint64_t n, bool used)
{
	for (uint64_t i = first; i < first + n; i++) {
		if (used)
			jit_used[i / 64] |= 1ull << (i % 64);
		else
			jit_used[i / 64] &= ~(1ull << (i % 64));
	}
}

/* n pages plus a guard page, first fit: the address or 0 */
static uint64_t va_alloc(uint64_t n)
{
	unsigned long f = spin_lock_irqsave(&jit_va_lock);
	uint64_t run = 0, va = 0;

	for (uint64_t i = 0; i < JIT_PAGES; i++) {
		run = va_busy(i) ? 0 : run + 1;
		if (run == n + 1) {
			va_mark(i + 1 - run, run, true);
			va = JIT_BASE + (i + 1 - run) * PAGE_SIZE;
			break;
		}
	}
	spin_unlock_irqrestore(&jit_va_lock, f);
	return va;
}

static void va_free(uint64_t va, uint64_t n)
{
	unsigned long f = spin_lock_irqsave(&jit_va_lock);

	va_mark((va - JIT_BASE) / PAGE_SIZE, n + 1, false);
	spin_unlock_irqrestore(&jit_va_lock, f);
}

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
	va = va_alloc(size / PAGE_SIZE);
	if (!va) {
		free_pages(pages, order);
		return NULL;
	}
	if (mmu_map_kernel(va, virt_to_phys(pages), size, MAP_TEXT)) {
		mmu_unmap_kernel(va, size);
		va_free(va, size / PAGE_SIZE);
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
	va_free(va, 1ull << order);
	if (pages)
		free_pages(pages, order);
}

bool ksvc_cpu_has_lse_atomics(void)
{
	return ((read_sysreg(id_aa64isar0_el1) >> 20) & 15) >= 2;
}

/* what ksvc_current_pid_tgid reads: this_cpu()->current, then proc_tgid() and tid */
bool ksvc_current_layout(struct ksvc_current_layout *l)
{
	_Static_assert(sizeof(((struct task *)0)->tid) == 4 && sizeof(((struct proc *)0)->tgid) == 4,
		       "32-bit ids");
	l->cpu_current = offsetof(struct cpu, current);
	l->task_tid = offsetof(struct task, tid);
	l->task_proc = offsetof(struct task, proc);
	l->proc_tgid = offsetof(struct proc, tgid);
	return true;
}
