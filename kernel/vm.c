/*
 * vm.c - user address spaces: page tables per mm with ASIDs, VMAs, demand paging,
 * copy-on-write fork, and mmap/munmap/mprotect/brk/madvise with Linux's semantics and errnos.
 * See include/kern/vm.h for the model.  Not implemented: mremap (ENOSYS... returns -ENOMEM as
 * Linux does when it cannot move), mlock (accepted, no effect: nothing is ever swapped), NUMA.
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
#include <kern/trace.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/trap.h>
#include <kern/vm.h>
#include <kern/uprobes.h>
#include <linux/perf_event.h>
#include <perf/perf.h>

#define NR_ASIDS 65536
static uint64_t asid_bitmap[NR_ASIDS / 64];
static struct spinlock asid_lock = SPINLOCK_INIT;
static pte_t *empty_pgd;

/* ---- sleeping mutex ---- */

void kmutex_init(struct kmutex *m)
{
	spin_init(&m->lock);
	m->owner = NULL;
	waitq_init(&m->wq);
}

void kmutex_lock(struct kmutex *m)
{
	struct task *me = current_task();
	bool waited = false;

	for (;;) {
		unsigned long f = spin_lock_irqsave(&m->lock);

		if (!m->owner) {
			m->owner = me;
			spin_unlock_irqrestore(&m->lock, f);
			if (waited)
				trace_contention_end(m);
			return;
		}
		spin_unlock_irqrestore(&m->lock, f);
		if (!waited)
			trace_contention_begin(m);
		waited = true;
		wait_event(&m->wq, READ_ONCE(m->owner) == NULL);
	}
}

void kmutex_unlock(struct kmutex *m)
{
	unsigned long f = spin_lock_irqsave(&m->lock);

	kassert(m->owner == current_task());
	m->owner = NULL;
	spin_unlock_irqrestore(&m->lock, f);
	waitq_wake_one(&m->wq);
}

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

static void page_unref(uint64_t pfn)
{
	struct page *p = pfn_page(pfn);

	if (p && __atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		trace_mm_page_free(pfn, 0);
		page_free(&kernel_pages, pfn, 0);
	}
}

static void *pt_alloc(void)
{
	return alloc_pages(0);
}

static void tlb_flush_page(struct mm *mm, uint64_t va)
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

static pte_t user_pte(uint64_t pfn, uint32_t flags, bool writable)
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
static void unmap_pages_locked(struct mm *mm, uint64_t start, uint64_t end, bool special)
{
	mm_assert_locked(mm);
	for (uint64_t va = start; va < end; va += PAGE_SIZE) {
		pte_t *pte = pt_walk(mm->pgd, va, false, pt_alloc);

		if (!pte || !(*pte & PTE_VALID)) {
			/* skip quickly over an absent 2 MiB table */
			if (!pte)
				va = (va | ((1ull << 21) - 1)) + 1 - PAGE_SIZE;
			continue;
		}
		uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;

		*pte = 0;
		tlb_flush_page(mm, va);
		if (!special)
			page_unref(pfn);
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
	struct list_node *n, *tmp;

	list_for_each_safe(n, tmp, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		unmap_pages_locked(mm, v->start, v->end, v->flags & VMA_SPECIAL);
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

/* Remove [start, end) from the VMA list, splitting VMAs that straddle it. mm->lock held. */
static int unmap_range_locked(struct mm *mm, uint64_t start, uint64_t end)
{
	kmutex_assert_held(&mm->lock);
	struct list_node *n, *tmp;

	list_for_each_safe(n, tmp, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->end <= start || v->start >= end)
			continue;
		if (v->start < start && v->end > end) {
			/* punch a hole: keep the head in v, the tail in a clone */
			struct vm_area *tail = vma_clone(v);

			if (!tail)
				return -ENOMEM;
			tail->pgoff += (end - v->start) >> PAGE_SHIFT;
			tail->start = end;
			v->end = start;
			vma_insert_locked(mm, tail);
			unmap_pages_locked(mm, start, end, v->flags & VMA_SPECIAL);
			return 0;
		}
		uint64_t s = v->start > start ? v->start : start;
		uint64_t e = v->end < end ? v->end : end;

		unmap_pages_locked(mm, s, e, v->flags & VMA_SPECIAL);
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
	err = unmap_range_locked(mm, start, start + len);
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
	pte_t *pte = pt_walk(mm->pgd, va, true, pt_alloc);

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
			*pte = user_pte(pfn, v->flags, true);
		} else {
			void *copy = alloc_pages(0);

			if (!copy)
				return -ENOMEM;
			memcpy(copy, phys_to_virt(pfn << PAGE_SHIFT), PAGE_SIZE);
			*pte = user_pte(virt_to_phys(copy) >> PAGE_SHIFT, v->flags, true);
			page_unref(pfn);
		}
		tlb_flush_page(mm, va);
		return 0;
	}
	uint64_t pfn;
	int err = fill_page(v, va, &pfn);

	if (err)
		return err;
	bool writable = (v->flags & VMA_WRITE) != 0;

	*pte = user_pte(pfn, v->flags, writable);
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
	pte_t *pte = p && p->mm ? pt_walk(p->mm->pgd, va & ~(PAGE_SIZE - 1), false, pt_alloc) : NULL;
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
		pte_t *pte = pt_walk(mm->pgd, va & ~(PAGE_SIZE - 1), false, pt_alloc);

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
				page_unref(pfn);
				pfn = virt_to_phys(copy) >> PAGE_SHIFT;
			}
			*pte = user_pte(pfn, v->flags, false); /* private now: no COW mark */
			tlb_flush_page(mm, va & ~(PAGE_SIZE - 1));
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
			pte_t *sp = pt_walk(src->pgd, va, false, pt_alloc);

			if (!sp) {
				va = (va | ((1ull << 21) - 1)) + 1 - PAGE_SIZE;
				continue;
			}
			if (!(*sp & PTE_VALID))
				continue;
			pte_t *dp = pt_walk(mm->pgd, va, true, pt_alloc);

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

/* ---- system calls ---- */

static uint32_t prot_to_flags(uint64_t prot)
{
	uint32_t f = 0;

	if (prot & PROT_READ)
		f |= VMA_READ;
	if (prot & PROT_WRITE)
		f |= VMA_WRITE | VMA_READ;
	if (prot & PROT_EXEC)
		f |= VMA_EXEC | VMA_READ;
	return f;
}

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

static bool range_free_locked(struct mm *mm, uint64_t start, uint64_t end)
{
	kmutex_assert_held(&mm->lock);
	struct list_node *n;

	list_for_each(n, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->start < end && v->end > start)
			return false;
	}
	return true;
}

static long sys_mmap(uint64_t addr, uint64_t len, uint64_t prot, uint64_t flags, uint64_t fd,
		     uint64_t off)
{
	struct mm *mm = current_proc()->mm;
	uint64_t type = flags & MAP_TYPE;
	struct file *f = NULL, *shm = NULL;
	uint32_t vflags = prot_to_flags(prot);
	long ret;

	if (!len || (off & (PAGE_SIZE - 1)))
		return -EINVAL;
	if (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE)
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (!len || len > USER_VA_END)
		return -ENOMEM;
	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) &&
	    ((addr & (PAGE_SIZE - 1)) || addr + len > USER_VA_END || addr + len < addr))
		return (addr & (PAGE_SIZE - 1)) ? -EINVAL : -ENOMEM;
	if (type != MAP_PRIVATE)
		vflags |= VMA_SHARED;
	if (!(flags & MAP_ANONYMOUS)) {
		f = fd_get_file((int)fd);
		if (!f)
			return -EBADF;
	}
	if (flags & MAP_GROWSDOWN)
		vflags |= VMA_STACK;
	kmutex_lock(&mm->lock);
	if (flags & MAP_FIXED_NOREPLACE) {
		if (!range_free_locked(mm, addr, addr + len)) {
			ret = -EEXIST;
			goto out;
		}
	} else if (!(flags & MAP_FIXED)) {
		uint64_t hint = addr & ~(PAGE_SIZE - 1);

		if (hint && hint + len <= mm->mmap_base && hint + len > hint &&
		    range_free_locked(mm, hint, hint + len))
			addr = hint;
		else
			addr = vm_find_gap_locked(mm, len);
		if (!addr) {
			ret = -ENOMEM;
			goto out;
		}
	}
	uint64_t file_end = 0;

	if ((flags & MAP_ANONYMOUS) && (vflags & VMA_SHARED)) {
		/* one object behind the mapping, not pages each process faults in on its own:
		 * a fork's child and parent share even the pages neither touched yet */
		shm = shm_file_new(len);
		if (!shm) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (f) {
		/* bytes past EOF in the last page read as zero; whole pages past it SIGBUS */
		file_end = addr + (file_size(f) > off ? file_size(f) - off : 0);
		vflags |= VMA_BUS_PAST_EOF;
	}
	ret = vm_map_fixed(mm, addr, len, vflags, shm ? shm : f, shm ? 0 : off >> PAGE_SHIFT, file_end,
			   NULL, NULL);
	if (!ret && f) {
		struct vm_area *v = vm_find_locked(mm, addr);
		int r = file_mmap_prepare(f, v);

		if (r < 0) {
			unmap_range_locked(mm, addr, addr + len);
			ret = r;
		}
	}
	if (!ret)
		ret = (long)addr;
out:
	kmutex_unlock(&mm->lock);
	if (ret >= 0) {
		/* PERF_RECORD_MMAP2 (perf_event_mmap): events take exec ones, mmap_data the rest */
		uint64_t ino = 0;
		uint32_t dev = 0;

		if (f)
			file_id(f, &ino, &dev);
		struct perf_mmap_info m = {
			.pid = (uint32_t)current_proc()->tgid,
			.tid = (uint32_t)current_task()->tid,
			.addr = (uint64_t)ret,
			.len = len,
			.pgoff = f ? off : (uint64_t)ret, /* an anonymous VMA's pgoff is its address */
			.maj = dev >> 8,
			.min = dev & 0xff,
			.ino = ino,
			.prot = (uint32_t)prot,
			.flags = (uint32_t)(flags & (MAP_SHARED | MAP_PRIVATE)),
			.filename = f && file_path(f) ? file_path(f) : "//anon",
			.exec = (vflags & VMA_EXEC) != 0,
			.user = true,
		};

		perf_task_mmap(&m);
	}
	if (f)
		file_put(f);
	if (shm)
		file_put(shm);
	return ret;
}
SYSCALL(__NR_mmap, sys_mmap);

static long sys_munmap(uint64_t addr, uint64_t len)
{
	struct mm *mm = current_proc()->mm;

	if ((addr & (PAGE_SIZE - 1)) || !len || addr + len > USER_VA_END || addr + len < addr)
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	kmutex_lock(&mm->lock);
	int err = unmap_range_locked(mm, addr, addr + len);

	kmutex_unlock(&mm->lock);
	return err;
}
SYSCALL(__NR_munmap, sys_munmap);

/*
 * PERF_RECORD_MMAP/MMAP2 for v as it is now (Linux's perf_event_mmap on a VMA, which mprotect
 * and brk call too): its file's path, or the name Linux gives an anonymous VMA ([heap],
 * [stack], a special mapping's own, else //anon, whose pgoff is its address).  mm->lock held.
 */
static void vma_perf_record(struct mm *mm, const struct vm_area *v)
{
	mm_assert_locked(mm);
	uint64_t ino = 0;
	uint32_t dev = 0;
	const char *name = "//anon";
	uint64_t pgoff = v->start;

	if (v->file) {
		file_id(v->file, &ino, &dev);
		name = file_path(v->file) ? file_path(v->file) : "//anon";
		pgoff = v->pgoff << PAGE_SHIFT;
	} else if (v->ops && v->ops->name) {
		name = v->ops->name;
		pgoff = 0;
	} else if (mm->start_brk && v->start <= mm->start_brk && v->end >= mm->brk) {
		name = "[heap]";
	} else if (v->end == mm->stack_top) {
		name = "[stack]";
	}
	struct perf_mmap_info m = {
		.pid = (uint32_t)current_proc()->tgid,
		.tid = (uint32_t)current_task()->tid,
		.addr = v->start,
		.len = v->end - v->start,
		.pgoff = pgoff,
		.maj = dev >> 8,
		.min = dev & 0xff,
		.ino = ino,
		.prot = (v->flags & VMA_READ ? PROT_READ : 0) | (v->flags & VMA_WRITE ? PROT_WRITE : 0) |
			(v->flags & VMA_EXEC ? PROT_EXEC : 0),
		.flags = v->flags & VMA_SHARED ? MAP_SHARED : MAP_PRIVATE,
		.filename = name,
		.exec = (v->flags & VMA_EXEC) != 0,
		.user = true,
	};

	perf_task_mmap(&m);
}

void vm_perf_record_at(struct mm *mm, uint64_t addr)
{
	kmutex_lock(&mm->lock);
	struct vm_area *v = vm_find_locked(mm, addr);

	if (v)
		vma_perf_record(mm, v);
	kmutex_unlock(&mm->lock);
}

static long sys_mprotect(uint64_t addr, uint64_t len, uint64_t prot)
{
	struct mm *mm = current_proc()->mm;
	uint64_t end;
	long ret = 0;

	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	if (prot & ~(uint64_t)(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM | PROT_GROWSDOWN |
				  PROT_GROWSUP | PROT_BTI | PROT_MTE))
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	end = addr + len;
	if (end < addr || end > USER_VA_END)
		return -ENOMEM;
	if (!len)
		return 0;
	kmutex_lock(&mm->lock);
	/* Every page must be mapped (ENOMEM otherwise), as Linux. */
	for (uint64_t a = addr; a < end;) {
		struct vm_area *v = vm_find_locked(mm, a);

		if (!v) {
			ret = -ENOMEM;
			goto out;
		}
		if ((prot & PROT_WRITE) && (v->flags & VMA_NOMAYWRITE)) {
			ret = -EACCES;
			goto out;
		}
		a = v->end;
	}
	for (uint64_t a = addr; a < end;) {
		struct vm_area *v = vm_find_locked(mm, a);

		if (v->start < a) { /* split off the head */
			struct vm_area *t = vma_clone(v);

			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			t->pgoff += (a - v->start) >> PAGE_SHIFT;
			t->start = a;
			v->end = a;
			vma_insert_locked(mm, t);
			v = t;
		}
		if (v->end > end) { /* split off the tail */
			struct vm_area *t = vma_clone(v);

			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			t->pgoff += (end - v->start) >> PAGE_SHIFT;
			t->start = end;
			v->end = end;
			vma_insert_locked(mm, t);
		}
		v->flags = (v->flags & ~(uint32_t)(VMA_READ | VMA_WRITE | VMA_EXEC)) |
			   prot_to_flags(prot);
		for (uint64_t va = v->start; va < v->end; va += PAGE_SIZE) {
			pte_t *pte = pt_walk(mm->pgd, va, false, pt_alloc);

			if (!pte || !(*pte & PTE_VALID))
				continue;
			uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;
			bool w = (v->flags & VMA_WRITE) && !(*pte & PTE_SW_COW);
			pte_t keep = *pte & PTE_SW_COW;

			if (!(v->flags & (VMA_READ | VMA_WRITE | VMA_EXEC))) {
				/* PROT_NONE: drop it; the page is refilled on the next access */
				*pte = 0;
				if (!(v->flags & VMA_SPECIAL))
					page_unref(pfn);
			} else {
				*pte = user_pte(pfn, v->flags, w) | keep;
			}
			tlb_flush_page(mm, va);
		}
		vma_perf_record(mm, v); /* mprotect_fixup: the VMA with its new protection */
		a = v->end;
	}
out:
	kmutex_unlock(&mm->lock);
	return ret;
}
SYSCALL(__NR_mprotect, sys_mprotect);

static long sys_brk(uint64_t want)
{
	struct mm *mm = current_proc()->mm;
	uint64_t old_end, new_end;

	kmutex_lock(&mm->lock);
	if (want < mm->start_brk)
		goto out;
	old_end = (mm->brk + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	new_end = (want + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (new_end > old_end) {
		/* Linux's overcommit guess: no single growth beyond what RAM could back. */
		if (new_end > mm->mmap_base - (8ull << 20) || new_end - old_end > mem_total_bytes() ||
		    !range_free_locked(mm, old_end, new_end))
			goto out;
		struct vm_area *prev = old_end > mm->start_brk ? vm_find_locked(mm, old_end - 1)
							      : NULL;

		if (prev && prev->end == old_end && !prev->file && !prev->ops &&
		    prev->flags == (VMA_READ | VMA_WRITE))
			prev->end = new_end;
		else if (vm_map_fixed(mm, old_end, new_end - old_end, VMA_READ | VMA_WRITE, NULL, 0,
				      0, NULL, NULL))
			goto out;
		/* do_brk_flags: the grown heap (mm->brk still the old end, as Linux names it) */
		vma_perf_record(mm, vm_find_locked(mm, new_end - 1));
	} else if (new_end < old_end) {
		unmap_range_locked(mm, new_end, old_end);
	}
	mm->brk = want;
out:
	want = mm->brk;
	kmutex_unlock(&mm->lock);
	return (long)want;
}
SYSCALL(__NR_brk, sys_brk);

static long sys_madvise(uint64_t addr, uint64_t len, uint64_t advice)
{
	struct mm *mm = current_proc()->mm;

	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (advice != MADV_DONTNEED && advice != MADV_FREE)
		return advice <= MADV_COLD + 100 ? 0 : -EINVAL; /* hints: accepted, no effect */
	kmutex_lock(&mm->lock);
	for (uint64_t a = addr; a < addr + len; a += PAGE_SIZE) {
		struct vm_area *v = vm_find_locked(mm, a);

		if (!v) {
			kmutex_unlock(&mm->lock);
			return -ENOMEM;
		}
		if (!(v->flags & (VMA_SHARED | VMA_SPECIAL)))
			unmap_pages_locked(mm, a, a + PAGE_SIZE, false);
	}
	kmutex_unlock(&mm->lock);
	return 0;
}
SYSCALL(__NR_madvise, sys_madvise);

static long sys_mlock_nop(uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	return 0; /* nothing is ever paged out */
}
SYSCALL(__NR_mlock, sys_mlock_nop);
SYSCALL(__NR_munlock, sys_mlock_nop);

/*
 * mincore(2): one byte per page, 1 when it is in memory.  Nothing is ever paged out here, so a
 * page of a file mapping is in memory when the file has it (the whole file is in ramfs) and an
 * anonymous page once it was touched (mapped).  EINVAL for an unaligned start, ENOMEM when a
 * page of the range is not mapped, EFAULT for vec, as Linux.
 */
static long sys_mincore(uint64_t addr, uint64_t len, uint64_t uvec)
{
	struct mm *mm = current_proc()->mm;
	uint8_t chunk[64];
	uint64_t end, a, done = 0;
	long ret = 0;

	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	end = addr + ((len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1));
	if (end < addr || end > USER_VA_END)
		return -ENOMEM;
	for (a = addr; a < end && !ret;) {
		unsigned int n = 0;

		kmutex_lock(&mm->lock);
		for (; a < end && n < sizeof(chunk); a += PAGE_SIZE, n++) {
			struct vm_area *v = vm_find_locked(mm, a);

			if (!v) {
				ret = -ENOMEM;
				break;
			}
			pte_t *pte = pt_walk(mm->pgd, a, false, pt_alloc);
			bool in = pte && (*pte & PTE_VALID);

			if (!in && v->file && !(v->flags & VMA_SPECIAL)) {
				uint64_t off = ((v->pgoff << PAGE_SHIFT) + (a - v->start));

				in = off < file_size(v->file);
			}
			chunk[n] = in;
		}
		kmutex_unlock(&mm->lock);
		if (!ret && ksvc_copy_to_user((void *)(uvec + done), chunk, n))
			ret = -EFAULT;
		done += n;
	}
	return ret;
}
SYSCALL(__NR_mincore, sys_mincore);

/*
 * get_mempolicy(2) on a machine with one memory node and no policies set: every task and
 * range has MPOL_DEFAULT, whose node mask is empty; MPOL_F_MEMS_ALLOWED gives node 0;
 * MPOL_F_NODE with MPOL_F_ADDR the node of the page (0).  Errnos as Linux's do_get_mempolicy.
 */
#define MPOL_F_NODE_ (1 << 0)
#define MPOL_F_ADDR_ (1 << 1)
#define MPOL_F_MEMS_ALLOWED_ (1 << 2)

static long sys_get_mempolicy(uint64_t umode, uint64_t unodes, uint64_t maxnode, uint64_t addr,
			      uint64_t flags)
{
	int mode = 0; /* MPOL_DEFAULT */
	uint64_t nodes = 0;

	if (unodes && maxnode < 1)
		return -EINVAL; /* fewer bits than nr_node_ids */
	if (flags & ~(uint64_t)(MPOL_F_NODE_ | MPOL_F_ADDR_ | MPOL_F_MEMS_ALLOWED_))
		return -EINVAL;
	if (flags & MPOL_F_MEMS_ALLOWED_) {
		if (flags & (MPOL_F_NODE_ | MPOL_F_ADDR_))
			return -EINVAL;
		nodes = 1; /* node 0 */
	} else if (flags & MPOL_F_ADDR_) {
		struct mm *mm = current_proc()->mm;

		kmutex_lock(&mm->lock);
		bool mapped = vm_find_locked(mm, addr) != NULL;

		kmutex_unlock(&mm->lock);
		if (!mapped)
			return -EFAULT;
	} else if (addr) {
		return -EINVAL;
	} else if (flags & MPOL_F_NODE_) {
		return -EINVAL; /* only for MPOL_INTERLEAVE, never set here */
	}
	if (umode && ksvc_copy_to_user((void *)umode, &mode, sizeof(mode)))
		return -EFAULT;
	if (unodes) {
		/* copy_nodes_to_user: ALIGN(maxnode - 1, 64) bits; one node, the rest zero */
		uint64_t words = (maxnode - 1 + 63) / 64, zero = 0;

		if (words * 8 > PAGE_SIZE)
			return -EINVAL;

		for (uint64_t i = 0; i < words; i++)
			if (ksvc_copy_to_user((void *)(unodes + 8 * i), i ? &zero : &nodes, 8))
				return -EFAULT;
	}
	return 0;
}
SYSCALL(__NR_get_mempolicy, sys_get_mempolicy);
