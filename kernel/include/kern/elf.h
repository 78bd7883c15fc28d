/*
 * elf.h - validate an aarch64 ELF64 executable from its headers in memory and plan how to
 * load it.
 *
 * Pure: reads only the buffer it is given (the whole file, or its first bytes: elf_plan_head),
 * maps nothing.  kernel/elf.c; host tests in tests/unit/test_elf.c.  The exec path maps each
 * planned segment from the file, and hands the plan's entry / AT_PHDR / AT_PHNUM / brk to the stack builder and the mm.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/errno.h>

/* Page size the plan rounds to (Linux's ELF_MIN_ALIGN on a 4 KiB-page arm64 kernel). */
#define ELF_PLAN_PAGE_SIZE 4096u

/*
 * Where ET_DYN images go: two thirds of the user address space, as Linux's ELF_ET_DYN_BASE
 * (2 * DEFAULT_MAP_WINDOW_64 / 3 = 0xaaaaaaaaaaaa for 48-bit VAs), before alignment.
 */
#define ELF_PLAN_DYN_BASE(user_limit) ((user_limit) / 3 * 2)

/*
 * Linux's mmap_base without randomisation for RLIMIT_STACK up to 127 MiB: TASK_SIZE less
 * MIN_GAP (128 MiB).  Images without PT_INTERP are mapped top-down below it.
 */
#define ELF_PLAN_MMAP_GAP (128ull << 20)
#define ELF_PLAN_MMAP_BASE(user_limit) ((user_limit) - ELF_PLAN_MMAP_GAP)

struct elf_plan {
	const void *file; /* the file's first head_len bytes (headers, PT_INTERP) */
	uint64_t file_size; /* the whole file's size */
	size_t head_len;
	uint16_t type; /* ET_EXEC or ET_DYN */
	uint64_t load_bias; /* added to every p_vaddr; 0 for ET_EXEC */
	uint64_t entry; /* e_entry + load_bias: AT_ENTRY, and the PC when there is no interpreter */
	uint64_t phdr_addr; /* AT_PHDR: the program headers' address in the loaded image */
	uint16_t phnum; /* AT_PHNUM */
	uint16_t phent; /* AT_PHENT (always sizeof(Elf64_Phdr)) */
	unsigned int nr_segs; /* PT_LOAD count; elf_plan_segment(0 .. nr_segs-1) */
	uint64_t image_start, image_end; /* page-aligned span of all segments (biased) */
	/* mm start_brk = brk: the page-aligned end of the highest segment; for ET_DYN without
	 * PT_INTERP (elf_plan only) ELF_ET_DYN_BASE page aligned, as Linux 6.1 moves it there */
	uint64_t brk_start;
	/* mm->start_code / end_code / start_data / end_data as Linux computes them (biased) */
	uint64_t start_code, end_code, start_data, end_data;
	/* PT_INTERP: a NUL-terminated path inside the file, or NULL for a static binary */
	const char *interp;
	size_t interp_len; /* strlen(interp) */
	/* PT_GNU_STACK: present, and its PF_X (Linux's EXSTACK_ENABLE_X / _DISABLE_X) */
	bool has_gnu_stack;
	bool exec_stack;
	/* PT_PHDR's biased p_vaddr, when present (informational; AT_PHDR is phdr_addr) */
	bool has_pt_phdr;
	uint64_t pt_phdr_vaddr;
};

/*
 * One PT_LOAD: map [start, end) with prot (zero-filled), with file_len bytes of the file from
 * file_offset at address copy_to.  Everything else in the range stays zero.
 */
struct elf_segment {
	uint64_t start, end; /* page-aligned, biased, end > start unless p_memsz was empty */
	uint64_t copy_to; /* p_vaddr + load_bias */
	uint64_t file_offset; /* p_offset */
	uint64_t file_len; /* p_filesz (0: nothing to copy) */
	uint64_t mem_len; /* p_memsz */
	int prot; /* PROT_READ / PROT_WRITE / PROT_EXEC from p_flags */
	uint32_t p_flags;
};

/*
 * Validate file[0..file_size) and fill *out.  user_limit is the first address user space may
 * not use (TASK_SIZE; page aligned, at most 2^63).  An ET_DYN image with PT_INTERP is placed
 * at ELF_PLAN_DYN_BASE(user_limit) as elf_plan_at describes; one without (static-pie) as high
 * as it fits below ELF_PLAN_MMAP_BASE(user_limit), aligned down to its largest power-of-two
 * p_align, where Linux's top-down mmap puts it without randomisation.
 * Returns 0, or as Linux's load_elf_binary: -ENOEXEC (not an aarch64 ELF executable, bad
 * program header table, bad PT_INTERP), -EIO (PT_INTERP outside the file), -EINVAL (bad
 * PT_LOAD, bad entry; also a bad user_limit or NULL file, a caller bug), -ENOMEM (the placed
 * image does not fit below user_limit).  See elf_plan_err_is_fatal for how exec reports them.
 */
int elf_plan(const void *file, size_t file_size, uint64_t user_limit, struct elf_plan *out);

/*
 * As elf_plan, for a file of file_size bytes of which head holds the first head_len (at least
 * elf_plan_head_need of them; fewer gives -EIO).  PT_LOADs are checked against file_size.
 */
int elf_plan_head(const void *head, size_t head_len, uint64_t file_size, uint64_t user_limit,
		  struct elf_plan *out);

/*
 * How long a prefix of a file of file_size bytes elf_plan_head reads, given its first
 * head_len bytes: the ELF header, then the program headers, then the first PT_INTERP's path
 * (each known only once the one before is in head).  Call again after reading more until the
 * answer is at most head_len.  Never more than file_size.
 */
uint64_t elf_plan_head_need(const void *head, size_t head_len, uint64_t file_size);

/*
 * As elf_plan, but an ET_DYN image's first PT_LOAD page goes to dyn_base aligned down to the
 * largest power-of-two PT_LOAD p_align (at least a page), as Linux places a PIE at
 * ELF_ET_DYN_BASE.  For loading an interpreter elsewhere.  dyn_base is ignored for ET_EXEC.
 */
int elf_plan_at(const void *file, size_t file_size, uint64_t user_limit, uint64_t dyn_base,
		struct elf_plan *out);

/*
 * Linux finds -ENOEXEC and -EIO before execve's point of no return, so execve returns them.
 * It finds the PT_LOAD / entry problems (-EINVAL, -ENOMEM) only after it has dropped the old
 * image: execve does not return and the task is killed with SIGSEGV.  Exec should do the same
 * when this is true.
 */
static inline bool elf_plan_err_is_fatal(int err)
{
	return err == -EINVAL || err == -ENOMEM;
}

/* The idx-th PT_LOAD (program header order) of a plan elf_plan returned 0 for: 0 or -EINVAL. */
int elf_plan_segment(const struct elf_plan *plan, unsigned int idx, struct elf_segment *out);
