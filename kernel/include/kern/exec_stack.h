/*
 * exec_stack.h - build the initial user stack of a new program image, as Linux's execve
 * (copy_strings) and create_elf_tables lay it out.
 *
 * Pure: writes only the caller's buffer, which stands for the top of the new stack.
 * kernel/exec_stack.c; host tests in tests/unit/test_exec_stack.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Linux's per-string limit (MAX_ARG_STRLEN, 32 pages) and count limit (MAX_ARG_STRINGS). */
#define EXEC_STACK_MAX_ARG_STRLEN (32u * 4096u)
#define EXEC_STACK_MAX_ARG_STRINGS 0x7fffffffu
/* RLIMIT_STACK's default soft limit (_STK_LIM), used when stack_rlimit is 0. */
#define EXEC_STACK_DEFAULT_RLIMIT (8ull << 20)
/* At most this many auxv entries are written, AT_NULL included. */
#define EXEC_STACK_AUXV_MAX 24

struct exec_stack_args {
	/* Kernel copies of the strings, NUL-terminated.  argc == 0 gets argv = { "" }. */
	const char *const *argv;
	size_t argc;
	const char *const *envp;
	size_t envc;
	const char *filename; /* bprm->filename: the string AT_EXECFN points to */
	const char *platform; /* AT_PLATFORM string ("aarch64"); NULL: no AT_PLATFORM */
	uint8_t random[16]; /* AT_RANDOM bytes, from the caller's random source */
	uint64_t stack_rlimit; /* RLIMIT_STACK soft limit; 0: 8 MiB */

	/* auxv values */
	uint64_t sysinfo_ehdr; /* AT_SYSINFO_EHDR (vDSO); 0: entry left out */
	uint64_t minsigstksz; /* AT_MINSIGSTKSZ; 0: AT_IGNORE in its place, as Linux */
	uint64_t hwcap, hwcap2; /* AT_HWCAP, AT_HWCAP2 */
	uint64_t phdr, phent, phnum; /* AT_PHDR, AT_PHENT, AT_PHNUM (from struct elf_plan) */
	uint64_t base; /* AT_BASE: interpreter load address, 0 without one */
	uint64_t flags; /* AT_FLAGS */
	uint64_t entry; /* AT_ENTRY: the program's (biased) entry point */
	uint32_t uid, euid, gid, egid;
	bool secure; /* AT_SECURE */
};

/* Where things landed, in user addresses. */
struct exec_stack_layout {
	uint64_t sp; /* initial SP: argc lives here; 16-byte aligned */
	uint64_t argv, envp, auxv; /* the three arrays */
	size_t auxv_words; /* auxv length in 64-bit words, AT_NULL pair included */
	uint64_t arg_start, arg_end, env_start, env_end; /* mm fields (/proc/PID/cmdline) */
	uint64_t execfn, platform, random; /* AT_EXECFN, AT_PLATFORM (0 if none), AT_RANDOM */
	size_t used; /* stack_top - sp: bytes of the buffer's top in use */
};

/*
 * Bytes of stack the image needs (what exec_stack_build will use), or -E2BIG as execve
 * gives it: a string longer than MAX_ARG_STRLEN with its NUL, more than MAX_ARG_STRINGS
 * strings, or strings plus argv/envp pointers over the limit (a quarter of RLIMIT_STACK,
 * capped at 6 MiB, never under 128 KiB).  -EFAULT for a NULL string pointer.
 */
long exec_stack_size(const struct exec_stack_args *in);

/*
 * Lay the stack out below stack_top (16-byte aligned) in buf, which stands for the user
 * range [stack_top - buf_size, stack_top); buf is zeroed first.  0 with *out filled, the
 * errors of exec_stack_size, -E2BIG when buf_size is too small, -EINVAL for a stack_top that
 * is misaligned, above 2^62, below buf_size or too low for the image.
 */
int exec_stack_build(const struct exec_stack_args *in, uint8_t *buf, size_t buf_size,
		     uint64_t stack_top, struct exec_stack_layout *out);
