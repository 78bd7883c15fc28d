/*
 * vm.c - user address spaces: page tables per mm with ASIDs, the VMA list and its splits,
 * demand paging, copy-on-write fork, remote access for ptrace.  See
 * kernel/include/kern/vm.h for the model.  The system calls that change an address space
 * (mmap, munmap, mprotect, brk, madvise, mincore...) are kernel/sys_mm.c, on the helpers
 * vm_internal.h names.
 */
#include <linux/mman.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <arch/sysreg.h>
#include <fs/vfs.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/trace.h>
#include <kern/trap.h>
#include <kern/vm.h>
#include "vm_internal.h"
#include <kern/uprobes.h>
#include <linux/perf_event.h>
#include <perf/perf.h>

#define NR_ASIDS 65536
static uint64_t asid_bitmap[NR_ASIDS / 64];
static struct spinlock asid_lock = SPINLOCK_INIT;
static pte_t *empty_pgd;

/* ---- pages and refcounts ---- */

static struct page *pfn_page(uint64_t pfn)
{
	return page_lookup(&kernel_pages, pfn);
}

static void page_ref(uint64_t pfn)
{
	struct page *p = pfn_page(pfn);

	if (p)
		__atomic_fetch_add(&p->refcount, 1, __ATOMIC_RELAXED);
}

void vm_page_unref(uint64_t pfn)
{
	struct page *p = pfn_page(pfn);

	if (p && __atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		trace_mm_page_free(pfn, 0);
		page_free(&kernel_pages, pfn, 0);
	}
}

void *vm_pt_alloc(void)
{
	return alloc_pages(0);
}

void vm_tlb_flush_page(struct mm *mm, uint64_t va)
{
	uint64_t arg = ((uint64_t)mm->asid << 48) | ((va >> 12) & 0xfffffffffffull);

	dsb_ishst();
	__asm__ volatile("tlbi vae1is, %0\n dsb ish\n isb" ::"r"(arg) : "memory");
}

static void tlb_flush_mm(struct mm *mm)
{
	dsb_ishst();
	__asm__ volatile("tlbi aside1is, %0\n dsb ish\n isb" ::"r"((uint64_t)mm->asid << 48)
			 : "memory");
}

pte_t vm_user_pte(uint64_t pfn, uint32_t flags, bool writable)
{
	pte_t e = (pfn << PAGE_SHIFT) | PTE_PAGE | PTE_ATTRIDX(MT_NORMAL) | PTE_SH_INNER | PTE_AF |
		  PTE_NG | PTE_USER | PTE_PXN;

	if (!writable)
		e |= PTE_RDONLY;
	if (!(flags & VMA_EXEC))
		e |= PTE_UXN;
	if (flags & VMA_SHARED)
		e |= PTE_SW_SHARED;
	return e;
}

/* ---- mm lifetime ---- */

void vm_init(void)
{
	empty_pgd = alloc_pages(0);
	kassert(empty_pgd);
	asid_bitmap[0] = 1; /* ASID 0: kernel threads' empty table */
}

static uint16_t asid_alloc(void)
{
	unsigned long f = spin_lock_irqsave(&asid_lock);

	for (unsigned int w = 0; w < NR_ASIDS / 64; w++) {
		if (asid_bitmap[w] == ~0ull)
			continue;
		unsigned int b = (unsigned int)__builtin_ctzll(~asid_bitmap[w]);

		asid_bitmap[w] |= 1ull << b;
		spin_unlock_irqrestore(&asid_lock, f);
		return (uint16_t)(w * 64 + b);
	}
	spin_unlock_irqrestore(&asid_lock, f);
	kpanic("out of ASIDs");
}

static void asid_free(uint16_t asid)
{
	unsigned long f = spin_lock_irqsave(&asid_lock);

	asid_bitmap[asid / 64] &= ~(1ull << (asid % 64));
	spin_unlock_irqrestore(&asid_lock, f);
}

struct mm *mm_new(void)
{
	struct mm *mm = kmalloc(sizeof(*mm));

	if (!mm)
		return NULL;
	mm->pgd = alloc_pages(0);
	if (!mm->pgd) {
		kfree(mm);
		return NULL;
	}
	kmutex_init(&mm->lock);
	atomic_store(&mm->refs, 1);
	list_init(&mm->vmas);
	mm->asid = asid_alloc();
	mm->mmap_base = USER_VA_END - (128ull << 20);
	return mm;
}

void mm_get(struct mm *mm)
{
	atomic_fetch_add(&mm->refs, 1);
}

void mm_activate(struct mm *mm)
{
	uint64_t ttbr = mm ? virt_to_phys(mm->pgd) | ((uint64_t)mm->asid << 48)
			   : virt_to_phys(empty_pgd);

	write_sysreg(ttbr0_el1, ttbr);
	isb();
}

static void vma_release(struct vm_area *v)
{
	if (v->ops && v->ops->close)
		v->ops->close(v);
	if (v->file)
		file_put(v->file);
	kfree(v);
}

/* Drop every page of [start, end) from the page table; mm->lock held. */
void vm_unmap_pages_locked(struct mm *mm, uint64_t start, uint64_t end, bool special)
{
	mm_assert_locked(mm);
	for (uint64_t va = start; va < end; va += PAGE_SIZE) {
		pte_t *pte = pt_walk(mm->pgd, va, false, vm_pt_alloc);

		if (!pte || !(*pte & PTE_VALID)) {
			/* skip quickly over an absent 2 MiB table */
			if (!pte)
				va = (va | ((1ull << 21) - 1)) + 1 - PAGE_SIZE;
			continue;
		}
		uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;

		*pte = 0;
		vm_tlb_flush_page(mm, va);
		if (!special)
			vm_page_unref(pfn);
	}
}

static void free_tables(pte_t *t, int level)
{
	if (level < 3)
		for (int i = 0; i < 512; i++)
			if ((t[i] & PTE_VALID) && (t[i] & PTE_TABLE))
				free_tables(phys_to_virt(t[i] & PTE_ADDR_MASK), level + 1);
	free_pages(t, 0);
}

void mm_put(struct mm *mm)
{
	if (atomic_fetch_sub(&mm->refs, 1) != 1)
		return;
	/* bpf_find_vma on another task may hold the lock it took while the mm was still that
	 * task's (ksvc_task_find_vma): the teardown waits for it */
	kmutex_lock(&mm->lock);
	kmutex_unlock(&mm->lock);
	struct list_node *n, *tmp;

	list_for_each_safe(n, tmp, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		vm_unmap_pages_locked(mm, v->start, v->end, v->flags & VMA_SPECIAL);
		list_del(&v->node);
		vma_release(v);
	}
	tlb_flush_mm(mm);
	free_tables(mm->pgd, 0);
	asid_free(mm->asid);
	kfree(mm);
}

/* ---- VMA list ---- */

/* The VMA list walk, without the lock check: vm_find_locked, and mm_debug_pte's diagnostics */
static struct vm_area *vma_lookup(struct mm *mm, uint64_t addr)
{
	struct list_node *n;

	list_for_each(n, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (addr < v->start)
			return NULL;
		if (addr < v->end)
			return v;
	}
	return NULL;
}

struct vm_area *vm_find_locked(struct mm *mm, uint64_t addr)
{
	mm_assert_locked(mm);
	return vma_lookup(mm, addr);
}

static void vma_insert_locked(struct mm *mm, struct vm_area *v)
{
	mm_assert_locked(mm);
	struct list_node *n;

	list_for_each(n, &mm->vmas) {
		if (list_entry(n, struct vm_area, node)->start > v->start)
			break;
	}
	list_insert_between(&v->node, n->prev, n);
}

static struct vm_area *vma_clone(const struct vm_area *v)
{
	struct vm_area *c = kmalloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *v;
	list_init(&c->node);
	if (c->file)
		file_get(c->file);
	if (c->ops && c->ops->open)
		c->ops->open(c);
	return c;
}

/*
 * Split v at addr (v->start < addr < v->end): v keeps [v->start, addr), a clone holding
 * [addr, v->end) with its file offset moved along goes on the list and is returned.  NULL when
 * out of memory, v unchanged.  The pages stay mapped; only the bookkeeping splits.
 */
struct vm_area *vm_split_locked(struct mm *mm, struct vm_area *v, uint64_t addr)
{
	kmutex_assert_held(&mm->lock);
	struct vm_area *t = vma_clone(v);

	if (!t)
		return NULL;
	t->pgoff += (addr - v->start) >> PAGE_SHIFT;
	t->start = addr;
	v->end = addr;
	vma_insert_locked(mm, t);
	return t;
}

/* Remove [start, end) from the VMA list, splitting VMAs that straddle it. mm->lock held. */
int vm_unmap_range_locked(struct mm *mm, uint64_t start, uint64_t end)
{
	kmutex_assert_held(&mm->lock);
	struct list_node *n, *tmp;

	list_for_each_safe(n, tmp, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->end <= start || v->start >= end)
			continue;
		if (v->start < start && v->end > end) {
			/* punch a hole: keep the head in v, the tail in a clone */
			if (!vm_split_locked(mm, v, end))
				return -ENOMEM;
			v->end = start;
			vm_unmap_pages_locked(mm, start, end, v->flags & VMA_SPECIAL);
			return 0;
		}
		uint64_t s = v->start > start ? v->start : start;
		uint64_t e = v->end < end ? v->end : end;

		vm_unmap_pages_locked(mm, s, e, v->flags & VMA_SPECIAL);
		if (s == v->start && e == v->end) {
			list_del(&v->node);
			vma_release(v);
		} else if (s == v->start) {
			v->pgoff += (e - v->start) >> PAGE_SHIFT;
			v->start = e;
		} else {
			v->end = s;
		}
	}
	return 0;
}

int vm_map_fixed(struct mm *mm, uint64_t start, uint64_t len, uint32_t flags, struct file *file,
		 uint64_t pgoff, uint64_t file_end, const struct vm_ops *ops, void *priv)
{
	struct vm_area *v = kmalloc(sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	v->start = start;
	v->end = start + len;
	v->flags = flags;
	v->file = file;
	v->pgoff = pgoff;
	v->file_end = file_end;
	v->ops = ops;
	v->priv = priv;
	if (file)
		file_get(file);
	err = vm_unmap_range_locked(mm, start, start + len);
	if (err) {
		if (file)
			file_put(file);
		kfree(v);
		return err;
	}
	vma_insert_locked(mm, v);
	return 0;
}

/* ---- faults ---- */

static int fill_page(struct vm_area *v, uint64_t va, uint64_t *pfn_out)
{
	if (v->ops && v->ops->fault)
		return v->ops->fault(v, va, pfn_out);
	uint64_t pgoff = v->pgoff + ((va - v->start) >> PAGE_SHIFT);

	if (v->file && (v->flags & VMA_SHARED)) {
		int err = file_page_pfn(v->file, pgoff, pfn_out);

		if (err)
			return -EIO;
		page_ref(*pfn_out);
		return 0;
	}
	if (v->file && va >= v->file_end && (v->flags & VMA_BUS_PAST_EOF))
		return -EIO; /* a whole page past the end of the file: SIGBUS */
	void *page = alloc_pages(0);

	if (!page)
		return -ENOMEM;
	if (v->file && va < v->file_end) {
		uint64_t want = v->file_end - va < PAGE_SIZE ? v->file_end - va : PAGE_SIZE;
		long got = file_pread_kernel(v->file, page, want, pgoff << PAGE_SHIFT);

		if (got < 0) {
			free_pages(page, 0);
			return -EIO;
		}
		uprobe_fill_page(v, va, page);
	}
	*pfn_out = virt_to_phys(page) >> PAGE_SHIFT;
	return 0;
}

static int fault_locked(struct mm *mm, uint64_t addr, bool write, bool exec)
{
	kmutex_assert_held(&mm->lock);
	struct vm_area *v = vm_find_locked(mm, addr);
	uint64_t va = addr & ~(PAGE_SIZE - 1);

	if (!v)
		return -EFAULT;
	if ((write && !(v->flags & VMA_WRITE)) || (exec && !(v->flags & VMA_EXEC)) ||
	    (!(v->flags & (VMA_READ | VMA_WRITE | VMA_EXEC))))
		return -EACCES;
	pte_t *pte = pt_walk(mm->pgd, va, true, vm_pt_alloc);

	if (!pte)
		return -ENOMEM;
	if (*pte & PTE_VALID) {
		if (!write || !(*pte & PTE_RDONLY))
			return 0; /* raced with another thread: already fixed */
		if (!(*pte & PTE_SW_COW))
			return -EACCES;
		uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;
		struct page *pg = pfn_page(pfn);

		if (pg && __atomic_load_n(&pg->refcount, __ATOMIC_ACQUIRE) == 1) {
			*pte = vm_user_pte(pfn, v->flags, true);
		} else {
			void *copy = alloc_pages(0);

			if (!copy)
				return -ENOMEM;
			memcpy(copy, phys_to_virt(pfn << PAGE_SHIFT), PAGE_SIZE);
			*pte = vm_user_pte(virt_to_phys(copy) >> PAGE_SHIFT, v->flags, true);
			vm_page_unref(pfn);
		}
		vm_tlb_flush_page(mm, va);
		return 0;
	}
	uint64_t pfn;
	int err = fill_page(v, va, &pfn);

	if (err)
		return err;
	bool writable = (v->flags & VMA_WRITE) != 0;

	*pte = vm_user_pte(pfn, v->flags, writable);
	if (v->flags & VMA_SPECIAL)
		*pte &= ~PTE_SW_SHARED;
	dsb_ishst();
	isb();
	return 0;
}

int vm_fault(struct mm *mm, uint64_t addr, bool write, bool exec, bool user)
{
	/* do_page_fault: every fault is a page-fault event, in the mode it was taken in (a
	 * uaccess fault is a kernel one); a resolved one is also a minor fault */
	perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, addr, !user);
	kmutex_lock(&mm->lock);
	int err = fault_locked(mm, addr, write, exec);

	kmutex_unlock(&mm->lock);
	if (!err) {
		struct uthread *ut = current_uthread();

		if (ut)
			ut->min_flt++;
		perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS_MIN, 1, addr, !user);
	}
	return err;
}

void mm_debug_pte(uint64_t va)
{
	struct proc *p = current_proc();
	pte_t *pte = p && p->mm ? pt_walk(p->mm->pgd, va & ~(PAGE_SIZE - 1), false, vm_pt_alloc) : NULL;
	/* racy without mm->lock, which the faulting path may hold: a diagnostic only */
	struct vm_area *v = p && p->mm ? vma_lookup(p->mm, va) : NULL;

	printk("  mm %p asid %u ttbr0 %lx pte %lx vma %lx-%lx flags %x\n", p ? (void *)p->mm : NULL,
	       p && p->mm ? p->mm->asid : 0, read_sysreg(ttbr0_el1), pte ? *pte : 0,
	       v ? v->start : 0, v ? v->end : 0, v ? v->flags : 0);
}

bool mm_fault_from_kernel(uint64_t far, bool write)
{
	struct proc *p = current_proc();

	return p && p->mm && vm_fault(p->mm, far, write, false, false) == 0;
}

int vm_copy_to_user_mm(struct mm *mm, uint64_t dst, const void *src, uint64_t n)
{
	(void)mm;
	return ksvc_copy_to_user((void *)dst, src, n);
}

void vm_icache_sync(void *k, uint64_t n)
{
	/* clean to the point of unification, then drop every CPU's I-cache */
	for (uint64_t a = (uint64_t)k & ~63ull; a < (uint64_t)k + n; a += 64)
		__asm__ volatile("dc cvau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish\n ic ialluis\n dsb ish\n isb" ::: "memory");
}

/*
 * ptrace's access to another process's memory (PEEK/POKE; Linux's access_remote_vm with
 * FOLL_FORCE): up to len bytes between buf and addr in mm, one page at a time; the number of
 * bytes done (0 when addr itself cannot be reached).  A write to a private read-only mapping
 * (a breakpoint in text) gets its own copy of a page shared copy-on-write and leaves it
 * read-only; shared read-only and special mappings (rings, [sigpage]) are never written.
 */
uint64_t vm_access_remote(struct mm *mm, uint64_t addr, void *buf, uint64_t len, bool write)
{
	uint64_t done = 0;

	kmutex_lock(&mm->lock);
	while (done < len) {
		uint64_t va = addr + done, off = va & (PAGE_SIZE - 1);
		uint64_t n = PAGE_SIZE - off < len - done ? PAGE_SIZE - off : len - done;
		struct vm_area *v = vm_find_locked(mm, va);

		if (!v || (write && (v->flags & VMA_SPECIAL)) ||
		    (write && !(v->flags & VMA_WRITE) && (v->flags & VMA_SHARED)))
			break;
		bool force = write && !(v->flags & VMA_WRITE);

		if (fault_locked(mm, va, write && !force, false))
			break;
		pte_t *pte = pt_walk(mm->pgd, va & ~(PAGE_SIZE - 1), false, vm_pt_alloc);

		if (!pte || !(*pte & PTE_VALID))
			break;
		uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;

		if (force && (*pte & PTE_SW_COW)) {
			struct page *pg = pfn_page(pfn);

			if (!pg || __atomic_load_n(&pg->refcount, __ATOMIC_ACQUIRE) != 1) {
				void *copy = alloc_pages(0);

				if (!copy)
					break;
				memcpy(copy, phys_to_virt(pfn << PAGE_SHIFT), PAGE_SIZE);
				vm_page_unref(pfn);
				pfn = virt_to_phys(copy) >> PAGE_SHIFT;
			}
			*pte = vm_user_pte(pfn, v->flags, false); /* private now: no COW mark */
			vm_tlb_flush_page(mm, va & ~(PAGE_SIZE - 1));
		}
		char *k = (char *)phys_to_virt(pfn << PAGE_SHIFT) + off;

		if (write) {
			memcpy(k, (char *)buf + done, n);
			vm_icache_sync(k, n); /* the tracee may run what was written */
		} else {
			memcpy((char *)buf + done, k, n);
		}
		done += n;
	}
	kmutex_unlock(&mm->lock);
	return done;
}

/* ---- fork ---- */

struct mm *mm_dup(struct mm *src)
{
	struct mm *mm = mm_new();
	struct list_node *n;

	if (!mm)
		return NULL;
	kmutex_lock(&src->lock);
	mm->start_brk = src->start_brk;
	mm->brk = src->brk;
	mm->mmap_base = src->mmap_base;
	mm->stack_top = src->stack_top;
	mm->sigtramp = src->sigtramp;
	mm->uprobe_refs = src->uprobe_refs;
	mm->vdso = src->vdso;
	mm->start_code = src->start_code;
	mm->end_code = src->end_code;
	mm->start_data = src->start_data;
	mm->end_data = src->end_data;
	mm->arg_start = src->arg_start;
	mm->arg_end = src->arg_end;
	mm->env_start = src->env_start;
	mm->env_end = src->env_end;
	list_for_each(n, &src->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->flags & VMA_DONTCOPY)
			continue;
		struct vm_area *c = vma_clone(v);

		if (!c)
			goto oom;
		list_add_tail(&mm->vmas, &c->node);
		if (v->flags & VMA_SPECIAL)
			continue; /* refilled through vm_ops in the child */
		for (uint64_t va = v->start; va < v->end; va += PAGE_SIZE) {
			pte_t *sp = pt_walk(src->pgd, va, false, vm_pt_alloc);

			if (!sp) {
				va = (va | ((1ull << 21) - 1)) + 1 - PAGE_SIZE;
				continue;
			}
			if (!(*sp & PTE_VALID))
				continue;
			pte_t *dp = pt_walk(mm->pgd, va, true, vm_pt_alloc);

			if (!dp)
				goto oom;
			uint64_t pfn = (*sp & PTE_ADDR_MASK) >> PAGE_SHIFT;

			if (!(v->flags & VMA_SHARED) && !(*sp & PTE_RDONLY)) {
				*sp |= PTE_RDONLY | PTE_SW_COW;
			} else if (!(v->flags & VMA_SHARED)) {
				*sp |= PTE_SW_COW;
			}
			*dp = *sp;
			page_ref(pfn);
		}
	}
	tlb_flush_mm(src);
	kmutex_unlock(&src->lock);
	return mm;
oom:
	tlb_flush_mm(src);
	kmutex_unlock(&src->lock);
	mm_put(mm);
	return NULL;
}

/* ---- placing mappings ---- */

uint64_t vm_find_gap_locked(struct mm *mm, uint64_t len)
{
	kmutex_assert_held(&mm->lock);
	uint64_t top = mm->mmap_base;
	struct list_node *n;

	for (n = mm->vmas.prev; n != &mm->vmas; n = n->prev) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->start >= top)
			continue;
		if (v->end <= top - len && top - len >= PAGE_SIZE * 16)
			return top - len;
		top = v->start;
		if (top < len)
			return 0;
	}
	return top >= len + PAGE_SIZE * 16 ? top - len : 0;
}
