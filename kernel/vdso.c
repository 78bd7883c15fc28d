/*
 * vdso.c - the vDSO: the image's pages, [vvar] and [vdso] in every new process, the clock
 * data the vDSO reads, and exec's perf records for the mapping.
 *
 * What it does: at boot, copies the image the build linked in (arch/arm64/vdso/image.S: the
 * stripped, checked vdso.so) into page-aligned pages, and fills one [vvar] data page with
 * what kernel/time.c's time_ns() and kernel/sys_time.c's realtime offset use; exec maps
 * both into the new process as Linux 6.1's arm64 __setup_additional_pages does: one gap
 * found top-down below mmap_base after the program and its interpreter are mapped,
 * [vvar] (2 pages: the data page, then the time-namespace page, which raises SIGBUS as on
 * Linux outside a time namespace) directly below [vdso] (the image, AT_SYSINFO_EHDR).  A
 * signal handler without SA_RESTORER returns through the image's __kernel_rt_sigreturn
 * (mm->sigtramp).  clock_settime and settimeofday update [vvar] under a seqcount.
 *
 * What it does not: per-process copies (the pages are shared, so both mappings refuse
 * PROT_WRITE where Linux lets a debugger COW the vDSO), mremap of the vDSO, time
 * namespaces, compat (AArch32) vDSO.
 *
 * ABI: the mapping's /proc/PID/maps lines ("r--p ... [vvar]", "r-xp ... [vdso]"), its
 * PERF_RECORD_MMAP2 (pgoff 0, device and inode 0, PROT_READ|PROT_EXEC, MAP_PRIVATE), the
 * symbols and version arm64 Linux's vDSO exports (arch/arm64/vdso/vdso.lds).
 */
#include <linux/mman.h>
#include <arch/memlayout.h>
#include <arch/vdso.h>
#include <kern/assert.h>
#include <kern/clock.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <kern/time.h>
#include <kern/vdso.h>
#include <kern/vm.h>
#include <perf/perf.h>
#include "vdso-syms.h" /* generated from the image: VDSO_SYM_<name> offsets */

_Static_assert(VDSO_PAGE_SIZE == PAGE_SIZE, "the vDSO's link layout assumes 4 KiB pages");
_Static_assert(sizeof(struct vdso_data) <= PAGE_SIZE, "vvar data fits its page");

#define VVAR_LEN ((uint64_t)VDSO_VVAR_PAGES * PAGE_SIZE)

extern const uint8_t vdso_image_start[], vdso_image_end[];

static uint8_t *vdso_text;	/* the image, page aligned, shared by every process */
static uint64_t vdso_text_len;	/* page multiple */
static struct vdso_data *vvar;	/* [vvar]'s data page */
static struct spinlock vvar_lock = SPINLOCK_INIT; /* serialises vvar's writers */

/* [vvar]: the data page, then the time-namespace page (SIGBUS, as Linux's vvar_fault). */
static int vvar_fault(struct vm_area *v, uint64_t addr, uint64_t *pfn)
{
	if (addr - v->start >= PAGE_SIZE)
		return -EIO;
	*pfn = virt_to_phys(vvar) >> PAGE_SHIFT;
	return 0;
}

static int vdso_fault(struct vm_area *v, uint64_t addr, uint64_t *pfn)
{
	*pfn = (virt_to_phys(vdso_text) + (addr - v->start)) >> PAGE_SHIFT;
	return 0;
}

static const struct vm_ops vvar_ops = { .fault = vvar_fault, .name = "[vvar]" };
static const struct vm_ops vdso_ops = { .fault = vdso_fault, .name = "[vdso]" };

/* Make freshly written instructions visible to instruction fetch on every CPU. */
static void sync_icache(const void *start, uint64_t len)
{
	uint64_t ctr, dline, iline, a, s = (uint64_t)(uintptr_t)start, e = s + len;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	dline = 4ull << ((ctr >> 16) & 0xf);
	iline = 4ull << (ctr & 0xf);
	for (a = s & ~(dline - 1); a < e; a += dline)
		__asm__ volatile("dc cvau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
	for (a = s & ~(iline - 1); a < e; a += iline)
		__asm__ volatile("ic ivau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish\n isb" ::: "memory");
}

void vdso_init(void)
{
	uint64_t size = (uint64_t)(vdso_image_end - vdso_image_start);
	unsigned int order = 0;

	kassert(size >= 64 && !memcmp(vdso_image_start, "\177ELF", 4));
	vdso_text_len = (size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	while ((PAGE_SIZE << order) < vdso_text_len)
		order++;
	vdso_text = alloc_pages(order);
	vvar = alloc_pages(0);
	kassert(vdso_text && vvar);
	memset(vdso_text, 0, vdso_text_len);
	memcpy(vdso_text, vdso_image_start, size);
	sync_icache(vdso_text, vdso_text_len);

	memset(vvar, 0, PAGE_SIZE);
	time_counter_params(&vvar->boot_count, &vvar->ns_mult);
	vvar->coarse_res_ns = TICK_NS;
	vdso_clock_update(clock_realtime_offset_ns());
}

/*
 * The seqcount writer (the reader is vdso_read_ns in arch/arm64/vdso/vgettime.c): seq goes
 * odd, a release fence keeps the data stores after that store, the data, then seq even with
 * release (the data stores before it).  A reader that saw the same even seq on both sides of
 * its loads saw none of this.
 */
void vdso_clock_update(int64_t realtime_offset_ns)
{
	if (!vvar)
		return; /* before vdso_init, which reads the offset itself */
	unsigned long f = spin_lock_irqsave(&vvar_lock);
	uint32_t seq = vvar->seq;

	__atomic_store_n(&vvar->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&vvar->realtime_offset_ns, realtime_offset_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&vvar->seq, seq + 2, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&vvar_lock, f);
}

int vdso_map(struct mm *mm)
{
	kmutex_assert_held(&mm->lock);
	uint64_t base = vm_find_gap_locked(mm, VVAR_LEN + vdso_text_len);
	int err;

	if (!base)
		return -ENOMEM;
	err = vm_map_fixed(mm, base, VVAR_LEN, VMA_READ | VMA_SPECIAL | VMA_NOMAYWRITE, NULL, 0,
			   0, &vvar_ops, NULL);
	if (!err)
		err = vm_map_fixed(mm, base + VVAR_LEN, vdso_text_len,
				   VMA_READ | VMA_EXEC | VMA_SPECIAL | VMA_NOMAYWRITE, NULL, 0, 0,
				   &vdso_ops, NULL);
	if (err)
		return err;
	mm->vdso = base + VVAR_LEN;
	mm->sigtramp = mm->vdso + VDSO_SYM___kernel_rt_sigreturn;
	return 0;
}

void vdso_exec_mmap_records(const struct mm *mm)
{
	struct perf_mmap_info m = {
		.pid = (uint32_t)current_proc()->tgid,
		.tid = (uint32_t)current_task()->tid,
		.addr = mm->vdso - VVAR_LEN,
		.len = VVAR_LEN,
		.prot = PROT_READ,
		.flags = MAP_PRIVATE,
		.filename = "[vvar]",
		.exec = false,
		.user = true,
	};

	if (!mm->vdso)
		return;
	perf_task_mmap(&m); /* a data mapping: only for attr.mmap_data */
	m.addr = mm->vdso;
	m.len = vdso_text_len;
	m.prot = PROT_READ | PROT_EXEC;
	m.filename = "[vdso]";
	m.exec = true;
	perf_task_mmap(&m);
}
