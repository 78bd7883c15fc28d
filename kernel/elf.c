/*
 * elf.c - validation and load planning for aarch64 ELF64 executables held in memory.
 *
 * The planner reads only a prefix of the file (elf_plan_head): the ELF header, the program
 * headers and PT_INTERP's path (elf_plan_head_need says how long a prefix), so exec never
 * holds a whole program in memory; the PT_LOADs are mapped from the file itself.
 *
 * What it does: checks an ELF file the way Linux 6.1's load_elf_binary (fs/binfmt_elf.c)
 * does before it maps anything, and computes what that function would compute: the load
 * bias, the page-rounded range and protection of every PT_LOAD, the entry point, AT_PHDR,
 * AT_PHNUM, AT_PHENT, the start of brk, the mm's code/data bounds, PT_INTERP's path and
 * PT_GNU_STACK's executable bit.  The kernel's exec then maps and copies; this file never
 * touches an address space, so hostile images are tested on the host.
 *
 * What it does not do: load the interpreter (the caller runs elf_plan_at on it if it wants
 * one), relocate anything (static-pie binaries relocate themselves), honour
 * PT_GNU_PROPERTY / BTI (Linux's arch_elf_adjust_prot adds PROT_BTI), randomise.
 *
 * ABI: the ELF64 file format (Elf64_Ehdr, Elf64_Phdr from <linux/elf.h>), and Linux 6.1's
 * choices for it (the errnos checked against Debian 12's 6.1 arm64 kernel):
 *  - Found before execve's point of no return, so execve fails with them: -ENOEXEC when the
 *    magic, e_type (ET_EXEC/ET_DYN) or e_machine (EM_AARCH64) is wrong (EI_CLASS, EI_DATA
 *    and EI_VERSION are not checked: Linux runs such files), e_phentsize !=
 *    sizeof(Elf64_Phdr), the table is empty, over one page, or not inside the file
 *    (load_elf_phdrs), or the first PT_INTERP's size is outside [2, PATH_MAX] or its last
 *    byte is not NUL; -EIO when that PT_INTERP's bytes are outside the file (a short read).
 *  - Found after it, where Linux kills the task with SIGSEGV instead of failing execve
 *    (elf_plan_err_is_fatal): -EINVAL for a PT_LOAD with p_vaddr at or above TASK_SIZE,
 *    p_filesz > p_memsz, p_memsz reaching past TASK_SIZE, p_offset and p_vaddr not
 *    congruent modulo the page size (mmap's EINVAL), an empty total mapping
 *    (total_mapping_size() == 0), or an entry at or above TASK_SIZE (BAD_ADDR); -ENOMEM
 *    when the placed image does not fit.
 *  - AT_PHDR is the address of the PT_LOAD bytes that hold e_phoff (Linux >= 5.18 ignores
 *    PT_PHDR for this); brk starts at the page-aligned end of the highest segment.
 *  - ET_DYN with PT_INTERP (a PIE program): at ELF_ET_DYN_BASE aligned down to the largest
 *    power-of-two PT_LOAD p_align, minus the first PT_LOAD's page.
 *  - ET_DYN without PT_INTERP (static-pie, or ld.so run directly): where Linux's top-down
 *    mmap puts it without randomisation: as high as it fits under mmap_base (TASK_SIZE less
 *    the 128 MiB minimum stack gap), aligned down to that p_align; its brk starts at
 *    ELF_ET_DYN_BASE, page aligned, away from the image.  Checked on Debian 12's 6.1 kernel
 *    with randomize_va_space=0: image at 0xfffff7f50000, brk at 0xaaaaaaaab000.
 *
 * Stricter than Linux, on purpose, each a fatal -EINVAL where Linux also ends with a dead
 * task: no PT_LOAD at all (Linux jumps to the entry and the task takes SIGSEGV), PT_LOAD file
 * bytes past the end of the file (Linux maps them; touching them raises SIGBUS), and PT_LOADs
 * whose page-rounded ranges overlap (Linux maps the later over the earlier; real binaries
 * never do this, and hand-made ones crash).  Bytes between p_filesz and the end of the page
 * read as zero here; Linux shows the file's following bytes there unless the segment has a
 * .bss.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <asm-generic/mman-common.h>
#include <linux/elf.h>
#include <linux/limits.h>
#include <kern/compiler.h>
#include <kern/elf.h>
#include <kern/errno.h>
#include <kern/string.h>

_Static_assert(sizeof(Elf64_Ehdr) == 64, "Elf64_Ehdr layout");
_Static_assert(sizeof(Elf64_Phdr) == 56, "Elf64_Phdr layout");

#define PAGE_OFF(x) ((x) & (uint64_t)(ELF_PLAN_PAGE_SIZE - 1))
#define PAGE_START(x) ((x) & ~(uint64_t)(ELF_PLAN_PAGE_SIZE - 1))
#define PAGE_ALIGN_UP(x) PAGE_START((x) + ELF_PLAN_PAGE_SIZE - 1)

/* Linux reads the program header table only if it fits in ELF_MIN_ALIGN (one page). */
#define ELF_PHDR_TABLE_MAX ELF_PLAN_PAGE_SIZE

/* The file may be at any alignment: copy headers out rather than cast pointers into it. */
static void read_phdr(const struct elf_plan *plan, uint64_t phoff, unsigned int i,
		      Elf64_Phdr *ph)
{
	memcpy(ph, (const char *)plan->file + phoff + (uint64_t)i * sizeof(*ph), sizeof(*ph));
}

static int check_ehdr(const void *file, uint64_t file_size, Elf64_Ehdr *eh)
{
	/* Linux zero-fills a short file's header buffer, so a short file fails one of these. */
	if (file_size < sizeof(*eh))
		return -ENOEXEC;
	memcpy(eh, file, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ENOEXEC;
	/* Only e_machine: like Linux, EI_CLASS / EI_DATA / EI_VERSION are not looked at. */
	if (eh->e_machine != EM_AARCH64)
		return -ENOEXEC;
	/* load_elf_phdrs: exact entry size, a non-empty table of at most a page, in the file. */
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	if (eh->e_phnum == 0 || (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > ELF_PHDR_TABLE_MAX)
		return -ENOEXEC;
	if (eh->e_phoff > file_size ||
	    (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > file_size - eh->e_phoff)
		return -ENOEXEC;
	return 0;
}

/* The first PT_INTERP, as Linux uses only that one. */
static int scan_interp(struct elf_plan *plan, const Elf64_Ehdr *eh)
{
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		const char *path;

		read_phdr(plan, eh->e_phoff, i, &ph);
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz > PATH_MAX || ph.p_filesz < 2)
			return -ENOEXEC;
		if (ph.p_offset > plan->file_size || ph.p_filesz > plan->file_size - ph.p_offset)
			return -EIO;
		if (ph.p_offset + ph.p_filesz > plan->head_len)
			return -EIO; /* not in the caller's prefix: elf_plan_head_need */
		path = (const char *)plan->file + ph.p_offset;
		if (path[ph.p_filesz - 1] != '\0')
			return -ENOEXEC;
		plan->interp = path;
		plan->interp_len = strnlen(path, ph.p_filesz);
		return 0;
	}
	return 0;
}

/* PT_GNU_STACK and PT_PHDR; the last of each wins, as in Linux's switch over all headers. */
static void scan_flags(struct elf_plan *plan, const Elf64_Ehdr *eh)
{
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		read_phdr(plan, eh->e_phoff, i, &ph);
		if (ph.p_type == PT_GNU_STACK) {
			plan->has_gnu_stack = true;
			plan->exec_stack = (ph.p_flags & PF_X) != 0;
		} else if (ph.p_type == PT_PHDR) {
			plan->has_pt_phdr = true;
			plan->pt_phdr_vaddr = ph.p_vaddr; /* biased later */
		}
	}
}

/* The per-PT_LOAD checks of load_elf_binary, on unbiased addresses as Linux makes them. */
static int check_load(const Elf64_Phdr *ph, uint64_t user_limit, uint64_t file_size)
{
	if (ph->p_filesz != 0 && PAGE_OFF(ph->p_offset) != PAGE_OFF(ph->p_vaddr))
		return -EINVAL; /* mmap with an unaligned file offset */
	if (ph->p_vaddr >= user_limit || ph->p_filesz > ph->p_memsz ||
	    ph->p_memsz > user_limit || user_limit - ph->p_memsz < ph->p_vaddr)
		return -EINVAL;
	/* Stricter than Linux: the file bytes must exist. */
	if (ph->p_offset > file_size || ph->p_filesz > file_size - ph->p_offset)
		return -EINVAL;
	return 0;
}

static bool ranges_overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

/*
 * Walk the PT_LOADs: check each, find the span, the bias inputs and what Linux accumulates
 * (phdr_addr, code/data bounds, elf_brk), all unbiased.
 */
static int scan_loads(struct elf_plan *plan, const Elf64_Ehdr *eh, uint64_t user_limit,
		      uint64_t *first_vaddr, uint64_t *max_align, uint64_t *elf_brk)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int err;

	plan->start_code = UINT64_MAX;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t end;

		read_phdr(plan, eh->e_phoff, i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		err = check_load(&ph, user_limit, plan->file_size);
		if (err)
			return err;
		if (plan->nr_segs == 0)
			*first_vaddr = ph.p_vaddr;
		plan->nr_segs++;
		/* maximum_alignment(): power-of-two p_align only */
		if (ph.p_align && !(ph.p_align & (ph.p_align - 1)) && ph.p_align > *max_align)
			*max_align = ph.p_align;
		if (ph.p_offset <= eh->e_phoff && eh->e_phoff - ph.p_offset < ph.p_filesz)
			plan->phdr_addr = eh->e_phoff - ph.p_offset + ph.p_vaddr;
		if ((ph.p_flags & PF_X) && ph.p_vaddr < plan->start_code)
			plan->start_code = ph.p_vaddr;
		if (plan->start_data < ph.p_vaddr)
			plan->start_data = ph.p_vaddr;
		end = ph.p_vaddr + ph.p_filesz;
		if ((ph.p_flags & PF_X) && plan->end_code < end)
			plan->end_code = end;
		if (plan->end_data < end)
			plan->end_data = end;
		end = ph.p_vaddr + ph.p_memsz;
		if (end > *elf_brk)
			*elf_brk = end;
		lo = MIN(lo, PAGE_START(ph.p_vaddr));
		hi = MAX(hi, end);
	}
	if (plan->nr_segs == 0 || hi <= lo)
		return -EINVAL; /* nothing to map; Linux: total_mapping_size() == 0 */
	if (plan->start_code == UINT64_MAX)
		plan->start_code = 0;
	plan->image_start = lo;
	plan->image_end = PAGE_ALIGN_UP(hi);
	return 0;
}

/* Stricter than Linux: no two PT_LOADs may share a page. */
static int check_overlaps(const struct elf_plan *plan)
{
	struct elf_segment a, b;

	for (unsigned int i = 0; i < plan->nr_segs; i++) {
		elf_plan_segment(plan, i, &a);
		if (a.start == a.end)
			continue;
		for (unsigned int j = i + 1; j < plan->nr_segs; j++) {
			elf_plan_segment(plan, j, &b);
			if (b.start != b.end && ranges_overlap(a.start, a.end, b.start, b.end))
				return -EINVAL;
		}
	}
	return 0;
}

static uint64_t dyn_bias(uint64_t dyn_base, uint64_t first_vaddr, uint64_t max_align)
{
	uint64_t align = PAGE_ALIGN_UP(max_align);

	if (align)
		dyn_base &= ~(align - 1);
	/* Linux: load_bias = ELF_PAGESTART(load_bias - vaddr), in modular arithmetic. */
	return PAGE_START(dyn_base - first_vaddr);
}

/*
 * Add the bias to every address (modular, as Linux's unsigned load_bias: a first PT_LOAD
 * above dyn_base gives a "negative" bias).  The placed image must lie inside [0, user_limit).
 */
static int apply_bias(struct elf_plan *plan, uint64_t bias, uint64_t user_limit,
		      uint64_t elf_brk)
{
	uint64_t size = plan->image_end - plan->image_start;
	uint64_t start = plan->image_start + bias;

	if (start >= user_limit || size > user_limit - start)
		return -ENOMEM; /* where mmap would have found no room */
	plan->load_bias = bias;
	plan->image_start = start;
	plan->image_end = start + size;
	plan->phdr_addr += bias;
	plan->start_code += bias;
	plan->end_code += bias;
	plan->start_data += bias;
	plan->end_data += bias;
	plan->brk_start = PAGE_ALIGN_UP(elf_brk + bias);
	if (plan->has_pt_phdr)
		plan->pt_phdr_vaddr += bias;
	return 0;
}

/*
 * Validate and place.  ET_DYN goes at dyn_base, or, when top_down, as high as it fits under
 * the mmap base (where Linux's top-down mmap puts an image that has no PT_INTERP).
 */
static int plan_image(const void *file, size_t head_len, uint64_t file_size,
		      uint64_t user_limit, uint64_t dyn_base, bool top_down, struct elf_plan *out)
{
	uint64_t first_vaddr = 0, max_align = 0, elf_brk = 0, bias = 0;
	Elf64_Ehdr eh;
	int err;

	memset(out, 0, sizeof(*out));
	if (!file || user_limit == 0 || PAGE_OFF(user_limit) || user_limit > (1ull << 63))
		return -EINVAL;
	if (head_len > file_size || head_len < MIN(file_size, (uint64_t)sizeof(eh)))
		return -EINVAL;
	err = check_ehdr(file, file_size, &eh);
	if (err)
		return err;
	/* the caller's prefix must hold the program headers (elf_plan_head_need) */
	if (eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > head_len)
		return -EIO;
	out->file = file;
	out->head_len = head_len;
	out->file_size = file_size;
	out->type = eh.e_type;
	out->phnum = eh.e_phnum;
	out->phent = eh.e_phentsize;

	err = scan_interp(out, &eh);
	if (err)
		return err;
	scan_flags(out, &eh);
	err = scan_loads(out, &eh, user_limit, &first_vaddr, &max_align, &elf_brk);
	if (err)
		return err;
	if (eh.e_type == ET_DYN && top_down && !out->interp) {
		uint64_t mmap_base = ELF_PLAN_MMAP_BASE(user_limit);
		uint64_t span = out->image_end - out->image_start;

		if (user_limit <= ELF_PLAN_MMAP_GAP || span > mmap_base)
			return -ENOMEM;
		dyn_base = mmap_base - span;
	}
	if (eh.e_type == ET_DYN)
		bias = dyn_bias(dyn_base, first_vaddr, max_align);
	err = apply_bias(out, bias, user_limit, elf_brk);
	if (err)
		return err;
	out->entry = eh.e_entry + bias;
	if (out->entry >= user_limit)
		return -EINVAL; /* BAD_ADDR(elf_entry) */
	return check_overlaps(out);
}

int elf_plan_at(const void *file, size_t file_size, uint64_t user_limit, uint64_t dyn_base,
		struct elf_plan *out)
{
	return plan_image(file, file_size, file_size, user_limit, dyn_base, false, out);
}

int elf_plan(const void *file, size_t file_size, uint64_t user_limit, struct elf_plan *out)
{
	return elf_plan_head(file, file_size, file_size, user_limit, out);
}

/* Furthest end of [off, off + len) inside the file, or 0 when it is not. */
static uint64_t range_end(uint64_t off, uint64_t len, uint64_t file_size)
{
	return off <= file_size && len <= file_size - off ? off + len : 0;
}

uint64_t elf_plan_head_need(const void *head, size_t head_len, uint64_t file_size)
{
	Elf64_Ehdr eh;
	uint64_t need = MIN(file_size, (uint64_t)sizeof(eh));

	if (head_len < need)
		return need;
	if (check_ehdr(head, file_size, &eh))
		return need; /* elf_plan fails on the header alone */
	uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);

	need = MAX(need, phend);
	if (head_len < phend)
		return need;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, (const char *)head + eh.e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz <= PATH_MAX)
			need = MAX(need, range_end(ph.p_offset, ph.p_filesz, file_size));
		break;
	}
	return need;
}

int elf_plan_head(const void *head, size_t head_len, uint64_t file_size, uint64_t user_limit,
		  struct elf_plan *out)
{
	int err = plan_image(head, head_len, file_size, user_limit,
			     ELF_PLAN_DYN_BASE(user_limit), true, out);

	/* A static-pie's brk goes to ELF_ET_DYN_BASE, away from its image (Linux 6.1). */
	if (!err && out->type == ET_DYN && !out->interp)
		out->brk_start = PAGE_ALIGN_UP(ELF_PLAN_DYN_BASE(user_limit));
	return err;
}

/* The e_phoff the plan was made from (read again: the plan keeps only the file). */
static uint64_t plan_phoff(const struct elf_plan *plan)
{
	Elf64_Ehdr eh;

	memcpy(&eh, plan->file, sizeof(eh));
	return eh.e_phoff;
}

int elf_plan_segment(const struct elf_plan *plan, unsigned int idx, struct elf_segment *out)
{
	uint64_t phoff;
	unsigned int n = 0;

	if (!plan->file || idx >= plan->nr_segs)
		return -EINVAL;
	phoff = plan_phoff(plan);
	for (unsigned int i = 0; i < plan->phnum; i++) {
		Elf64_Phdr ph;

		read_phdr(plan, phoff, i, &ph);
		if (ph.p_type != PT_LOAD || n++ != idx)
			continue;
		out->copy_to = ph.p_vaddr + plan->load_bias;
		out->start = PAGE_START(out->copy_to);
		out->end = PAGE_ALIGN_UP(out->copy_to + ph.p_memsz);
		out->file_offset = ph.p_offset;
		out->file_len = ph.p_filesz;
		out->mem_len = ph.p_memsz;
		out->p_flags = ph.p_flags;
		out->prot = ((ph.p_flags & PF_R) ? PROT_READ : 0) |
			    ((ph.p_flags & PF_W) ? PROT_WRITE : 0) |
			    ((ph.p_flags & PF_X) ? PROT_EXEC : 0);
		return 0;
	}
	return -EINVAL;
}
