/*
 * sys_mm.c - the system calls that change an address space, with Linux's semantics and errnos:
 * mmap, munmap, mprotect, brk, madvise, mincore, get_mempolicy, and the mlock family (accepted,
 * no effect: nothing is ever swapped).  Each change that Linux reports to perf
 * (perf_event_mmap) gives a PERF_RECORD_MMAP2 here.  The address space itself (page tables,
 * VMAs, faults) is kernel/vm.c.
 *
 * Not implemented: mremap (no entry: ENOSYS), NUMA policies beyond the one node.
 */
#include <linux/mman.h>
#include <arch/memlayout.h>
#include <arch/pgtable.h>
#include <fs/vfs.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/syscall.h>
#include <kern/vm.h>
#include "vm_internal.h"
#include <linux/perf_event.h>
#include <perf/perf.h>

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
			vm_unmap_range_locked(mm, addr, addr + len);
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
	int err = vm_unmap_range_locked(mm, addr, addr + len);

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
			v = vm_split_locked(mm, v, a);
			if (!v) {
				ret = -ENOMEM;
				goto out;
			}
		}
		if (v->end > end && !vm_split_locked(mm, v, end)) { /* split off the tail */
			ret = -ENOMEM;
			goto out;
		}
		v->flags = (v->flags & ~(uint32_t)(VMA_READ | VMA_WRITE | VMA_EXEC)) |
			   prot_to_flags(prot);
		for (uint64_t va = v->start; va < v->end; va += PAGE_SIZE) {
			pte_t *pte = pt_walk(mm->pgd, va, false, vm_pt_alloc);

			if (!pte || !(*pte & PTE_VALID))
				continue;
			uint64_t pfn = (*pte & PTE_ADDR_MASK) >> PAGE_SHIFT;
			bool w = (v->flags & VMA_WRITE) && !(*pte & PTE_SW_COW);
			pte_t keep = *pte & PTE_SW_COW;

			if (!(v->flags & (VMA_READ | VMA_WRITE | VMA_EXEC))) {
				/* PROT_NONE: drop it; the page is refilled on the next access */
				*pte = 0;
				if (!(v->flags & VMA_SPECIAL))
					vm_page_unref(pfn);
			} else {
				*pte = vm_user_pte(pfn, v->flags, w) | keep;
			}
			vm_tlb_flush_page(mm, va);
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
		vm_unmap_range_locked(mm, new_end, old_end);
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
			vm_unmap_pages_locked(mm, a, a + PAGE_SIZE, false);
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
			pte_t *pte = pt_walk(mm->pgd, a, false, vm_pt_alloc);
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
