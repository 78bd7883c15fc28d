/*
 * uprobes.c - user-space probes: a BRK at a file offset in every process that maps the file
 * executable, and what runs when one is hit (perf's uprobe PMU registers them through
 * ksvc_uprobe_register, kern/ksvc.h, and receives the hits through perf_uprobe_hit).
 *
 * Linux 6.1 kernel/events/uprobes.c and arch/arm64/kernel/probes/ are the reference for what
 * user space sees:
 *  - a probe is (inode, offset); the breakpoint is BRK #0x005 (UPROBES_BRK_IMM) written into
 *    the mm's own copy of the text page, never the file's page: a private file mapping here
 *    always has private pages (kernel/vm.c reads them from the file), fork shares them
 *    copy-on-write and vm_access_remote breaks that sharing as ptrace's POKETEXT does;
 *  - registering installs the BRK in every mm that maps the file executable and not writable
 *    (valid_vma); a page faulted in later gets it as it is read from the file
 *    (uprobe_fill_page, Linux's uprobe_mmap), so a process that execs or mmaps the file after
 *    the probe was made has it too, and fork copies it with the page;
 *  - removal restores the original bytes wherever the BRK still is;
 *  - a probe with a reference counter (ref_ctr_offset: a USDT semaphore, a 16-bit counter at a
 *    file offset in the file's writable private mapping) raises it by one in each mm that maps
 *    the probe's text, when it is registered or the program is exec'd, and lowers it (never
 *    below 0) when it is removed: Linux's update_ref_ctr at each BRK write; fork copies it
 *    with the memory.  Different from Linux: a file mmapped after the probe (a dlopen'ed
 *    library) does not get its counter raised;
 *  - the original instruction is simulated when it uses the PC (B, BL, B.cond, CBZ/CBNZ,
 *    TBZ/TBNZ, BR, BLR, RET, ADR, ADRP) and otherwise runs out of line in a "[uprobes]" page
 *    of the mm (Linux's XOL area); instructions Linux 6.1 rejects for uprobes (literal loads,
 *    exception generation, exclusives, the remaining system/branch class) give EINVAL;
 *  - a return probe replaces the link register at entry by the XOL page's first slot (a BRK,
 *    Linux's uretprobe trampoline) and reports the return there with pc = the real return
 *    address, nesting up to 64 deep (MAX_URETPROBE_DEPTH).
 * Different from Linux: after the out-of-line instruction a second BRK in its slot brings
 * the task back (Linux single-steps it); the slot of a probe site stays with it for the mm's
 * life (the area has 32 pages: 16383 sites per process, then the hit is a SIGTRAP as for a
 * stray BRK); the
 * instruction is checked when the probe is registered rather than when it is first installed;
 * a child forked inside a function with a pending return probe does not get the XOL page, so
 * its return there faults.
 *
 * Locks: uprobe_mutex (sleeping) serialises register/unregister and is taken before any
 * mm->lock; uprobe_lock (spin, IRQ-safe) covers the list and each probe's counts and is taken
 * under mm->lock by the fault path.
 */
#include <linux/fcntl.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <arch/trapframe.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/list.h>
#include <kern/mm.h>
#include <kern/probe_insn.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/trap.h>
#include <kern/uprobes.h>
#include <kern/vm.h>
#include <fs/vfs.h>
#include <perf/perf.h>

#define UPROBE_BRK_IMM 0x005
#define UPROBE_BRK (0xd4200000u | (UPROBE_BRK_IMM << 5))
#define XOL_SLOT 8	/* bytes: the instruction and a BRK */
#define XOL_PER_PAGE (PAGE_SIZE / XOL_SLOT)
#define XOL_PAGES 32	/* the area's size; its pages are allocated as slots fill them */
#define XOL_SLOTS (XOL_PAGES * XOL_PER_PAGE)
#define URET_DEPTH 64	/* Linux's MAX_URETPROBE_DEPTH */

struct ksvc_uprobe {
	struct list_node node; /* uprobes (uprobe_lock) */
	struct file *file;     /* a reference: keeps the inode */
	uint64_t offset;
	uint64_t ref_ctr;      /* file offset of its USDT semaphore (a u16), 0: none */
	uint32_t insn;	       /* the original instruction */
	unsigned int nr_entry, nr_ret; /* registrations (uprobe_lock) */
	bool dying;	       /* being removed: not installed any more (uprobe_lock) */
	_Atomic int refs;      /* the list's, and each hit or pending return in flight */
};

/* The XOL area of an mm: slot 0 the return trampoline, then one slot per probe site. */
struct xol_meta {
	uint64_t vaddr[XOL_PER_PAGE]; /* the probe each slot of a page steps for */
	uint32_t insn[XOL_PER_PAGE];
};

struct uprobe_xol {
	struct mm *mm;
	uint64_t vaddr;
	struct spinlock lock;
	unsigned int nr;	/* slots used (lock) */
	void *page[XOL_PAGES];	/* allocated as slots reach them (lock to write) */
	struct xol_meta *meta[XOL_PAGES];
};

/* A thread's pending return probes. */
struct uprobe_task {
	unsigned int depth;
	struct { struct ksvc_uprobe *u; uint64_t func, ret; } ri[URET_DEPTH];
};

static struct kmutex uprobe_mutex;
static struct spinlock uprobe_lock = SPINLOCK_INIT;
static struct list_node uprobes = LIST_INIT(uprobes);
static _Atomic int nr_uprobes; /* listed: the fault path's fast check */

static void uprobe_put(struct ksvc_uprobe *u)
{
	if (atomic_fetch_sub(&u->refs, 1) == 1) {
		file_put(u->file);
		kfree(u);
	}
}

/* ---- the XOL area ---- */

static int xol_fault(struct vm_area *vma, uint64_t addr, uint64_t *pfn)
{
	struct uprobe_xol *x = vma->priv;
	void *page = READ_ONCE(x->page[(addr - vma->start) / PAGE_SIZE]);

	if (!page)
		return -EFAULT; /* no slot there yet */
	*pfn = virt_to_phys(page) >> PAGE_SHIFT;
	return 0;
}

static void xol_free(struct uprobe_xol *x)
{
	for (unsigned int i = 0; i < XOL_PAGES; i++) {
		if (x->page[i])
			free_pages(x->page[i], 0);
		kfree(x->meta[i]);
	}
	kfree(x);
}

static void xol_close(struct vm_area *vma)
{
	struct uprobe_xol *x = vma->priv;

	if (x->mm->xol == x)
		x->mm->xol = NULL;
	xol_free(x);
}

static const struct vm_ops xol_ops = { .fault = xol_fault, .close = xol_close, .name = "[uprobes]" };

/* Make page i of the area (lock held or x private): false when out of memory. */
static bool xol_page_add(struct uprobe_xol *x, unsigned int i)
{
	void *page = alloc_pages(0);
	struct xol_meta *m = kmalloc(sizeof(*m));

	if (!page || !m) {
		if (page)
			free_pages(page, 0);
		kfree(m);
		return false;
	}
	x->meta[i] = m;
	WRITE_ONCE(x->page[i], page);
	return true;
}

/* The mm's XOL area, made at its first hit (Linux's xol_add_vma); NULL when out of memory. */
static struct uprobe_xol *xol_get(struct mm *mm)
{
	struct uprobe_xol *x;

	kmutex_lock(&mm->lock);
	x = mm->xol;
	if (x)
		goto out;
	x = kmalloc(sizeof(*x));
	uint64_t va = vm_find_gap_locked(mm, XOL_PAGES * PAGE_SIZE);

	if (!x || !va || !xol_page_add(x, 0)) {
		if (x)
			xol_free(x);
		x = NULL;
		goto out;
	}
	x->mm = mm;
	x->vaddr = va;
	spin_init(&x->lock);
	*(uint32_t *)x->page[0] = UPROBE_BRK; /* slot 0: the return trampoline */
	x->nr = 1;
	vm_icache_sync(x->page[0], 4);
	if (vm_map_fixed(mm, va, XOL_PAGES * PAGE_SIZE,
			 VMA_EXEC | VMA_SPECIAL | VMA_DONTCOPY | VMA_NOMAYWRITE, NULL, 0, 0, &xol_ops,
			 x)) {
		xol_free(x);
		x = NULL;
		goto out;
	}
	mm->xol = x;
out:
	kmutex_unlock(&mm->lock);
	return x;
}

/* The slot running insn for the probe at vaddr: its address, or 0 when the area is full. */
static uint64_t xol_slot(struct uprobe_xol *x, uint64_t vaddr, uint32_t insn)
{
	uint64_t at = 0;
	unsigned long f = spin_lock_irqsave(&x->lock);

	for (unsigned int s = 1; s < x->nr && !at; s++) {
		const struct xol_meta *m = x->meta[s / XOL_PER_PAGE];

		if (m->vaddr[s % XOL_PER_PAGE] == vaddr && m->insn[s % XOL_PER_PAGE] == insn)
			at = x->vaddr + s * XOL_SLOT;
	}
	if (!at && x->nr < XOL_SLOTS &&
	    (x->nr % XOL_PER_PAGE || xol_page_add(x, x->nr / XOL_PER_PAGE))) {
		unsigned int s = x->nr;
		struct xol_meta *m = x->meta[s / XOL_PER_PAGE];
		uint32_t *k = (uint32_t *)((char *)x->page[s / XOL_PER_PAGE] +
					   (s % XOL_PER_PAGE) * XOL_SLOT);

		m->vaddr[s % XOL_PER_PAGE] = vaddr;
		m->insn[s % XOL_PER_PAGE] = insn;
		k[0] = insn;
		k[1] = UPROBE_BRK;
		vm_icache_sync(k, XOL_SLOT);
		WRITE_ONCE(x->nr, s + 1); /* after the slot: the BRK path reads nr unlocked */
		at = x->vaddr + s * XOL_SLOT;
	}
	spin_unlock_irqrestore(&x->lock, f);
	return at;
}

/* ---- probes in address spaces ---- */

static bool vma_probed(const struct vm_area *v, const struct file *file)
{
	return v->file && v->file->inode == file->inode && (v->flags & VMA_EXEC) &&
	       !(v->flags & (VMA_WRITE | VMA_SHARED | VMA_SPECIAL));
}

/* Where the VMA maps the file's offset, or 0. */
static uint64_t vma_vaddr(const struct vm_area *v, uint64_t offset)
{
	uint64_t base = v->pgoff << PAGE_SHIFT;

	if (offset < base || offset - base >= v->end - v->start)
		return 0;
	uint64_t va = v->start + (offset - base);

	return va < v->file_end ? va : 0;
}

/* Add d to u's reference counter in mm, if its mapping is there. */
static void ref_ctr_add(struct mm *mm, struct ksvc_uprobe *u, int d)
{
	uint64_t va = 0;
	uint16_t c;
	struct list_node *n;

	kmutex_lock(&mm->lock);
	list_for_each(n, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		if (v->file && v->file->inode == u->file->inode &&
		    (v->flags & (VMA_WRITE | VMA_SHARED)) == VMA_WRITE &&
		    (va = vma_vaddr(v, u->ref_ctr)))
			break;
	}
	kmutex_unlock(&mm->lock);
	if (!va || vm_access_remote(mm, va, &c, 2, false) != 2 || (d < 0 && c == 0))
		return; /* __update_ref_ctr: never below zero */
	c = (uint16_t)(c + d);
	vm_access_remote(mm, va, &c, 2, true);
}

void uprobe_fill_page(struct vm_area *v, uint64_t va, void *page)
{
	struct list_node *n;

	if (!atomic_load_explicit(&nr_uprobes, memory_order_relaxed))
		return;
	unsigned long f = spin_lock_irqsave(&uprobe_lock);

	list_for_each(n, &uprobes) {
		struct ksvc_uprobe *u = list_entry(n, struct ksvc_uprobe, node);
		uint64_t at;

		if (u->dying || !vma_probed(v, u->file) || !(at = vma_vaddr(v, u->offset)))
			continue;
		if (at >= va && at < va + PAGE_SIZE) {
			*(uint32_t *)((char *)page + (at - va)) = UPROBE_BRK;
			vm_icache_sync((char *)page + (at - va), 4);
		}
	}
	spin_unlock_irqrestore(&uprobe_lock, f);
}

/* Every mm now, each with a reference (kfree the array, mm_put each). */
static unsigned int all_mms(struct mm ***out)
{
	unsigned int cap = 16, n;
	struct mm **v;

	for (;;) {
		v = kmalloc(cap * sizeof(*v));
		if (!v)
			break;
		n = 0;
		unsigned long f = spin_lock_irqsave(&proc_tree_lock);

		for (struct proc *p = proc_first_locked(); p; p = proc_next_locked(p)) {
			if (!p->mm)
				continue;
			if (n < cap)
				mm_get(p->mm), v[n] = p->mm;
			n++;
		}
		spin_unlock_irqrestore(&proc_tree_lock, f);
		if (n <= cap)
			break;
		for (unsigned int i = 0; i < cap; i++)
			mm_put(v[i]);
		kfree(v);
		cap = n + 16;
	}
	*out = v;
	return v ? n : 0;
}

/* Write the BRK (install) or the original instruction back (remove) in every mm. */
static void patch_all(struct ksvc_uprobe *u, bool install)
{
	struct mm **mms;
	unsigned int nr = all_mms(&mms);

	for (unsigned int i = 0; i < nr; i++) {
		struct mm *mm = mms[i];
		uint64_t at[8];
		unsigned int na = 0;
		struct list_node *n;

		kmutex_lock(&mm->lock);
		bool refs = mm->uprobe_refs;

		list_for_each(n, &mm->vmas) {
			struct vm_area *v = list_entry(n, struct vm_area, node);
			uint64_t va;

			if (na < 8 && vma_probed(v, u->file) && (va = vma_vaddr(v, u->offset)))
				at[na++] = va;
		}
		kmutex_unlock(&mm->lock);
		if (na && refs && u->ref_ctr)
			ref_ctr_add(mm, u, install ? 1 : -1);
		for (unsigned int k = 0; k < na; k++) {
			uint32_t cur = 0, want = install ? UPROBE_BRK : u->insn;

			if (vm_access_remote(mm, at[k], &cur, 4, false) != 4 || cur == want)
				continue;
			if (!install && cur != UPROBE_BRK)
				continue; /* rewritten by someone else (a debugger): leave it */
			vm_access_remote(mm, at[k], &want, 4, true);
		}
		mm_put(mm);
	}
	kfree(mms);
}

int ksvc_uprobe_register(const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool ret,
			 struct ksvc_uprobe **out)
{
	struct file *f;
	uint32_t insn = 0;
	struct list_node *n;
	int err = vfs_open_kernel(AT_FDCWD, path, O_RDONLY, &f);

	if (err)
		return err;
	if (!file_is_regular(f) || offset > file_size(f) || (offset & 3) || (ref_ctr_offset & 1)) {
		file_put(f);
		return -EINVAL;
	}
	if (file_pread_kernel(f, &insn, 4, offset) < 0 || probe_insn_classify(insn) == PROBE_INSN_REJECT) {
		file_put(f);
		return -EINVAL; /* arch_uprobe_analyze_insn's PROBE_INSN_REJECTED */
	}
	kmutex_lock(&uprobe_mutex);
	unsigned long fl = spin_lock_irqsave(&uprobe_lock);

	list_for_each(n, &uprobes) {
		struct ksvc_uprobe *u = list_entry(n, struct ksvc_uprobe, node);

		if (u->file->inode == f->inode && u->offset == offset) {
			if (u->ref_ctr != ref_ctr_offset) { /* alloc_uprobe's mismatch */
				spin_unlock_irqrestore(&uprobe_lock, fl);
				kmutex_unlock(&uprobe_mutex);
				file_put(f);
				return -EINVAL;
			}
			*(ret ? &u->nr_ret : &u->nr_entry) += 1;
			spin_unlock_irqrestore(&uprobe_lock, fl);
			kmutex_unlock(&uprobe_mutex);
			file_put(f);
			*out = u;
			return 0;
		}
	}
	spin_unlock_irqrestore(&uprobe_lock, fl);
	struct ksvc_uprobe *u = kmalloc(sizeof(*u));

	if (!u) {
		kmutex_unlock(&uprobe_mutex);
		file_put(f);
		return -ENOMEM;
	}
	u->file = f;
	u->offset = offset;
	u->ref_ctr = ref_ctr_offset;
	u->insn = insn;
	*(ret ? &u->nr_ret : &u->nr_entry) = 1;
	atomic_store(&u->refs, 1);
	fl = spin_lock_irqsave(&uprobe_lock);
	list_add_tail(&uprobes, &u->node);
	atomic_fetch_add(&nr_uprobes, 1);
	spin_unlock_irqrestore(&uprobe_lock, fl);
	patch_all(u, true);
	kmutex_unlock(&uprobe_mutex);
	*out = u;
	return 0;
}

void ksvc_uprobe_dup(struct ksvc_uprobe *u, bool ret)
{
	unsigned long f = spin_lock_irqsave(&uprobe_lock);

	*(ret ? &u->nr_ret : &u->nr_entry) += 1; /* the caller's registration keeps it listed */
	spin_unlock_irqrestore(&uprobe_lock, f);
}

void ksvc_uprobe_unregister(struct ksvc_uprobe *u, bool ret)
{
	bool last;

	kmutex_lock(&uprobe_mutex);
	unsigned long f = spin_lock_irqsave(&uprobe_lock);

	*(ret ? &u->nr_ret : &u->nr_entry) -= 1;
	last = !u->nr_ret && !u->nr_entry;
	u->dying = last;
	spin_unlock_irqrestore(&uprobe_lock, f);
	if (last) {
		/* still listed while the BRKs go: a hit meanwhile finds it and runs the original */
		patch_all(u, false);
		f = spin_lock_irqsave(&uprobe_lock);
		list_del(&u->node);
		atomic_fetch_sub(&nr_uprobes, 1);
		spin_unlock_irqrestore(&uprobe_lock, f);
		uprobe_put(u);
	}
	kmutex_unlock(&uprobe_mutex);
}

/* ---- hits ---- */

/* The probe at pc of the current mm, with a reference, or NULL. */
static struct ksvc_uprobe *probe_at(struct mm *mm, uint64_t pc)
{
	struct ksvc_uprobe *found = NULL;
	struct list_node *n;

	kmutex_lock(&mm->lock);
	struct vm_area *v = vm_find_locked(mm, pc);

	if (v && v->file) {
		uint64_t off = (v->pgoff << PAGE_SHIFT) + (pc - v->start);
		unsigned long f = spin_lock_irqsave(&uprobe_lock);

		list_for_each(n, &uprobes) {
			struct ksvc_uprobe *u = list_entry(n, struct ksvc_uprobe, node);

			if (u->offset == off && vma_probed(v, u->file)) {
				atomic_fetch_add(&u->refs, 1);
				found = u;
				break;
			}
		}
		spin_unlock_irqrestore(&uprobe_lock, f);
	}
	kmutex_unlock(&mm->lock);
	return found;
}

/* Tell the consumers: perf's uprobe events, and the uprobe trace events. */
static void report(struct ksvc_uprobe *u, const struct trapframe *tf, bool ret, uint64_t func)
{
	perf_uprobe_hit(u, (const uint64_t *)tf, ret, func);
	uprobe_events_hit(u, (const uint64_t *)tf, ret, func);
}

static struct uprobe_task *utask_get(struct uthread *ut)
{
	if (!ut->uprobe)
		ut->uprobe = kmalloc(sizeof(*ut->uprobe));
	return ut->uprobe;
}

void uprobe_task_free(struct uthread *ut)
{
	struct uprobe_task *t = ut->uprobe;

	if (!t)
		return;
	while (t->depth)
		uprobe_put(t->ri[--t->depth].u);
	kfree(t);
	ut->uprobe = NULL;
}

/* Entry of a function with return probes: the return goes through the trampoline. */
static void hijack_return(struct ksvc_uprobe *u, struct trapframe *tf, struct uprobe_xol *x)
{
	struct uprobe_task *t = utask_get(current_uthread());

	if (!t || t->depth == URET_DEPTH || tf->x[30] == x->vaddr)
		return; /* Linux too drops the return probe past its depth limit */
	atomic_fetch_add(&u->refs, 1);
	t->ri[t->depth].u = u;
	t->ri[t->depth].func = tf->pc;
	t->ri[t->depth].ret = tf->x[30];
	t->depth++;
	tf->x[30] = x->vaddr;
}

static bool trampoline_hit(struct trapframe *tf)
{
	struct uprobe_task *t = current_uthread()->uprobe;

	if (!t || !t->depth)
		return false;
	t->depth--;
	struct ksvc_uprobe *u = t->ri[t->depth].u;

	tf->pc = t->ri[t->depth].ret;
	if (!READ_ONCE(u->dying) && READ_ONCE(u->nr_ret))
		report(u, tf, true, t->ri[t->depth].func);
	uprobe_put(u);
	return true;
}

/* BRK #0x005 from EL0: a probe, the end of an out-of-line step, or a return. */
static bool uprobe_brk(struct trapframe *tf)
{
	if (!trapframe_from_user(tf))
		return false;
	struct mm *mm = current_proc()->mm;
	struct uprobe_xol *x = READ_ONCE(mm->xol);
	uint64_t pc = tf->pc;

	if (x && pc >= x->vaddr && pc < x->vaddr + XOL_PAGES * PAGE_SIZE) {
		unsigned int s = (unsigned int)((pc - x->vaddr) / XOL_SLOT);

		if (pc == x->vaddr)
			return trampoline_hit(tf);
		if ((pc - x->vaddr) % XOL_SLOT != 4 || s >= READ_ONCE(x->nr))
			return false;
		tf->pc = x->meta[s / XOL_PER_PAGE]->vaddr[s % XOL_PER_PAGE] + 4;
		return true;
	}
	struct ksvc_uprobe *u = probe_at(mm, pc);

	if (!u) {
		uint32_t insn;

		/* gone meanwhile: run what is there now; a BRK of the program's own: SIGTRAP */
		return ksvc_copy_from_user(&insn, (const void *)pc, 4) == 0 && insn != UPROBE_BRK;
	}
	bool entry = READ_ONCE(u->nr_entry) != 0, ret = READ_ONCE(u->nr_ret) != 0;

	if (!READ_ONCE(u->dying) && entry)
		report(u, tf, false, 0);
	if (probe_insn_classify(u->insn) == PROBE_INSN_SIMULATE) {
		if (!READ_ONCE(u->dying) && ret && (x = xol_get(mm)))
			hijack_return(u, tf, x);
		probe_insn_simulate(u->insn, tf, pc);
	} else {
		uint64_t slot = (x = xol_get(mm)) ? xol_slot(x, pc, u->insn) : 0;

		if (!slot) {
			uprobe_put(u);
			return false;
		}
		if (!READ_ONCE(u->dying) && ret)
			hijack_return(u, tf, x);
		tf->pc = slot;
	}
	uprobe_put(u);
	return true;
}

void uprobe_exec(struct uthread *ut)
{
	struct mm *mm = current_proc()->mm;
	struct list_node *n;

	uprobe_task_free(ut); /* the returns it waited for were in the old program */
	/* under the mutex: a registration meanwhile counts this mm either here or in patch_all */
	kmutex_lock(&uprobe_mutex);
	list_for_each(n, &uprobes) {
		struct ksvc_uprobe *u = list_entry(n, struct ksvc_uprobe, node);
		bool mapped = false;
		struct list_node *m;

		if (!u->ref_ctr || u->dying)
			continue;
		kmutex_lock(&mm->lock);
		list_for_each(m, &mm->vmas) {
			struct vm_area *v = list_entry(m, struct vm_area, node);

			mapped = mapped || (vma_probed(v, u->file) && vma_vaddr(v, u->offset));
		}
		kmutex_unlock(&mm->lock);
		if (mapped)
			ref_ctr_add(mm, u, 1);
	}
	kmutex_lock(&mm->lock);
	mm->uprobe_refs = true;
	kmutex_unlock(&mm->lock);
	kmutex_unlock(&uprobe_mutex);
}

void uprobe_init(void)
{
	kmutex_init(&uprobe_mutex);
	trap_brk_register(UPROBE_BRK_IMM, uprobe_brk);
}
