/*
 * vm.h - user address spaces (kernel/vm.c): VMAs, demand paging, copy-on-write; their
 * mmap/munmap/mprotect/brk/madvise system calls are kernel/sys_mm.c.
 *
 * An mm has a 4-level page table (TTBR0, tagged with its ASID) and a sorted list of VMAs.
 * Pages are filled on first touch: anonymous ones zeroed, private file ones read from the
 * file (bytes past file_end zero), shared file ones taken from the file (file_page_pfn), and
 * special ones (perf rings) from vm_ops->fault.  fork shares private pages read-only with a
 * copy-on-write mark; the first write copies unless the page has one user left.
 * Lock: mm->lock (a sleeping mutex) covers the VMA list, brk and the page table.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/mutex.h>
#include <kern/sched.h>
#include <arch/pgtable.h>

struct file;
struct vm_area;
struct uprobe_xol;

struct vm_ops {
	/* The pfn to map at addr (page aligned); 0 or -EFAULT (SIGBUS). */
	int (*fault)(struct vm_area *vma, uint64_t addr, uint64_t *pfn);
	/* The VMA goes away (munmap, exit); also called for each piece of a split VMA. */
	void (*close)(struct vm_area *vma);
	/* A VMA is duplicated by fork or split; take a reference on priv. */
	void (*open)(struct vm_area *vma);
	/* A special mapping's name in /proc/PID/maps ("[vdso]"), or NULL. */
	const char *name;
};

#define VMA_READ 0x1
#define VMA_WRITE 0x2
#define VMA_EXEC 0x4
#define VMA_SHARED 0x8
#define VMA_STACK 0x10
#define VMA_SPECIAL 0x20 /* vm_ops pages: never copied, never COW */
#define VMA_BUS_PAST_EOF 0x40 /* mmap of a file: pages wholly past file_end raise SIGBUS */
#define VMA_DONTCOPY 0x80 /* not inherited by fork (perf rings: Linux's VM_DONTCOPY) */
#define VMA_NOMAYWRITE 0x100 /* mprotect may not make it writable (Linux: no VM_MAYWRITE) */

struct vm_area {
	struct list_node node;
	uint64_t start, end;
	uint32_t flags; /* VMA_* */
	struct file *file; /* file-backed: a reference */
	uint64_t pgoff; /* file page of start */
	uint64_t file_end; /* private file mapping: addresses >= this read as zero */
	const struct vm_ops *ops;
	void *priv;
};

/* An mm's *_locked helpers: its lock is held, or nobody else can reach it (mm_put's teardown
 * of the last reference). */
#define mm_assert_locked(mm) \
	kdebug_assert(atomic_load(&(mm)->refs) == 0 || (mm)->lock.owner == current_task())

struct mm {
	struct kmutex lock;
	_Atomic int refs;
	pte_t *pgd;
	uint16_t asid;
	struct list_node vmas; /* sorted by start */
	uint64_t start_brk, brk;
	uint64_t mmap_base;
	uint64_t stack_top;
	uint64_t sigtramp; /* the signal return trampoline: the vDSO's __kernel_rt_sigreturn */
	uint64_t vdso;	   /* the vDSO's base (AT_SYSINFO_EHDR), 0 when not mapped */
	struct uprobe_xol *xol; /* the uprobes' out-of-line page (kernel/uprobes.c), or NULL */
	/* its probes' reference counters are raised (kernel/uprobes.c; its mutex: exec sets
	 * it once the new program's are, fork copies it with the memory) */
	bool uprobe_refs;
	uint64_t start_code, end_code, start_data, end_data, arg_start, arg_end, env_start, env_end;
};

struct mm *mm_new(void);
struct mm *mm_dup(struct mm *src); /* fork: copy-on-write */
void mm_get(struct mm *mm);
void mm_put(struct mm *mm);
/* Switch TTBR0 to mm (NULL: the empty table kernel threads use). */
void mm_activate(struct mm *mm);

/* Map [start, start+len) (page aligned) with VMA_* flags: 0 or -errno.  Replaces what is
 * there (MAP_FIXED semantics).  file may be NULL; a reference is taken when mapped. */
int vm_map_fixed(struct mm *mm, uint64_t start, uint64_t len, uint32_t flags, struct file *file,
		 uint64_t pgoff, uint64_t file_end, const struct vm_ops *ops, void *priv);
/* Copy into user memory of mm (the current one) as exec builds the stack. */
int vm_copy_to_user_mm(struct mm *mm, uint64_t dst, const void *src, uint64_t n);
/* Handle a fault at addr taken in user mode (user) or by a kernel access to user memory: 0 when
 * mapped now, -EFAULT (SEGV_MAPERR), -EACCES (SEGV_ACCERR), -EIO (SIGBUS), -ENOMEM.  Counts
 * the fault on the current thread and as perf page-fault events of that mode. */
int vm_fault(struct mm *mm, uint64_t addr, bool write, bool exec, bool user);
/* [proc] A PERF_RECORD_MMAP2 for the VMA containing addr, as Linux names and describes it. */
void vm_perf_record_at(struct mm *mm, uint64_t addr);
/* Find the VMA containing addr (mm->lock held) or NULL. */
struct vm_area *vm_find_locked(struct mm *mm, uint64_t addr);
void vm_init(void);
/* Highest free gap of len bytes below mm->mmap_base (where a top-down mmap puts a new
 * mapping); 0 when none.  mm->lock held. */
uint64_t vm_find_gap_locked(struct mm *mm, uint64_t len);
/* Instructions were written at kernel address k (n bytes): make instruction fetch see them. */
void vm_icache_sync(void *k, uint64_t n);
/* ptrace's PEEK/POKE into another mm: the bytes copied, 0 if addr is unmapped. */
uint64_t vm_access_remote(struct mm *mm, uint64_t addr, void *buf, uint64_t len, bool write);
