/*
 * exec_stack.c - the initial user stack of a new program: strings, argc, argv, envp, auxv.
 *
 * What it does: computes, as Linux 6.1 does for an ELF program, where execve puts the
 * argument and environment strings (fs/exec.c: copy_string_kernel, copy_strings) and what
 * create_elf_tables (fs/binfmt_elf.c) puts below them, applies execve's E2BIG limits, and
 * writes the result into a kernel buffer standing for the top of the new stack.  The exec
 * path then maps that buffer at the top of the stack VMA and starts the program with SP at
 * layout.sp.
 *
 * What it does not do: copy strings from the old image's user memory (the caller has kernel
 * copies), pick the random bytes or the stack top (no randomisation here: Linux without
 * ASLR), map anything, or write AT_EXECFD / AT_BASE_PLATFORM (binfmt_misc and platforms
 * arm64 does not have).
 *
 * ABI (the aarch64 Linux process entry state, from the top of the stack down):
 *   stack_top - 8         8 zero bytes (bprm->p starts one pointer below the VMA end)
 *   ...                   the filename (AT_EXECFN) just below, then envp strings with
 *                         env[0] lowest, then argv strings with argv[0] lowest: each list
 *                         contiguous and in order (copy_strings works backwards from the
 *                         last); with argc == 0 an empty argv[0] string below them all
 *                         (Linux >= 5.18), so argc is 1
 *   align down to 16      (arch_align_stack without randomisation)
 *   AT_PLATFORM string    "aarch64" (ELF_PLATFORM), no realignment
 *   AT_RANDOM             16 bytes
 *   ...                   padding: the vector start is rounded down to 16 (STACK_ROUND)
 *   auxv                  (id, value) pairs in arm64's order: AT_SYSINFO_EHDR (left out
 *                         when the caller has no vDSO), AT_MINSIGSTKSZ (AT_IGNORE when unknown),
 *                         AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM,
 *                         AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID,
 *                         AT_SECURE, AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM, AT_NULL
 *   envp[envc], NULL
 *   argv[argc], NULL
 *   sp ->  argc           (8 bytes; sp is 16-byte aligned)
 * E2BIG as execve: a string over MAX_ARG_STRLEN bytes with its NUL (valid_arg_len), more
 * than MAX_ARG_STRINGS strings (count), or strings above the limit bprm_stack_limits sets:
 * max(min(6 MiB, RLIMIT_STACK / 4), ARG_MAX) less 8 bytes per argv and envp pointer (argc
 * counted as at least 1), the filename's bytes included.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/auxvec.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/exec_stack.h>
#include <kern/string.h>

#define STK_LIM_MAX_ARGS (6ull << 20) /* _STK_LIM / 4 * 3 */
#define ARG_MAX_BYTES (32ull * 4096) /* ARG_MAX: always allowed, even with small stacks */
#define EXEC_PAGESZ 4096u /* AT_PAGESZ: ELF_EXEC_PAGESIZE */
#define EXEC_CLKTCK 100u /* AT_CLKTCK: CLOCKS_PER_SEC (USER_HZ) */
#define PLATFORM_MAX 64u /* a sanity bound on the kernel's own AT_PLATFORM string */
#define WORD 8u /* sizeof(elf_addr_t) */

/* Everything about the layout except the bytes: computed first, written second. */
struct plan {
	size_t argc; /* after the argc == 0 fix-up */
	bool empty_argv0;
	uint64_t execfn, env_start, arg_start; /* arg_end == env_start, env_end == execfn */
	uint64_t platform, random;
	uint64_t sp, argv, envp, auxv;
	uint64_t aux[2 * EXEC_STACK_AUXV_MAX];
	size_t aux_words;
};

/* copy_strings' length: bytes with the NUL, or -E2BIG past MAX_ARG_STRLEN, -EFAULT for NULL. */
static long arg_len(const char *s)
{
	size_t n;

	if (!s)
		return -EFAULT;
	n = strnlen(s, EXEC_STACK_MAX_ARG_STRLEN) + 1;
	if (n > EXEC_STACK_MAX_ARG_STRLEN)
		return -E2BIG;
	return (long)n;
}

/* bprm_stack_limits: room for strings once the argv/envp pointers are counted, or -E2BIG. */
static long strings_limit(const struct exec_stack_args *in)
{
	uint64_t rlim = in->stack_rlimit ? in->stack_rlimit : EXEC_STACK_DEFAULT_RLIMIT;
	uint64_t limit = MIN(STK_LIM_MAX_ARGS, rlim / 4), ptr_size;

	limit = MAX(limit, ARG_MAX_BYTES);
	ptr_size = ((uint64_t)MAX(in->argc, (size_t)1) + in->envc) * WORD;
	if (limit <= ptr_size)
		return -E2BIG;
	return (long)(limit - ptr_size);
}

/* Sum of the lengths of n strings, adding to *total and failing once it passes limit. */
static int add_strings(const char *const *v, size_t n, uint64_t limit, uint64_t *total)
{
	if (n && !v)
		return -EFAULT;
	for (size_t i = 0; i < n; i++) {
		long len = arg_len(v[i]);

		if (len < 0)
			return (int)len;
		*total += (uint64_t)len;
		if (*total > limit)
			return -E2BIG; /* bprm->p fell below bprm->argmin */
	}
	return 0;
}

static void aux_push(struct plan *pl, uint64_t id, uint64_t val)
{
	pl->aux[pl->aux_words++] = id;
	pl->aux[pl->aux_words++] = val;
}

/* create_elf_tables' vector, in its order for arm64 (ARCH_DLINFO first). */
static void fill_auxv(struct plan *pl, const struct exec_stack_args *in)
{
	pl->aux_words = 0;
	if (in->sysinfo_ehdr)
		aux_push(pl, AT_SYSINFO_EHDR, in->sysinfo_ehdr);
	if (in->minsigstksz)
		aux_push(pl, AT_MINSIGSTKSZ, in->minsigstksz);
	else
		aux_push(pl, AT_IGNORE, 0);
	aux_push(pl, AT_HWCAP, in->hwcap);
	aux_push(pl, AT_PAGESZ, EXEC_PAGESZ);
	aux_push(pl, AT_CLKTCK, EXEC_CLKTCK);
	aux_push(pl, AT_PHDR, in->phdr);
	aux_push(pl, AT_PHENT, in->phent);
	aux_push(pl, AT_PHNUM, in->phnum);
	aux_push(pl, AT_BASE, in->base);
	aux_push(pl, AT_FLAGS, in->flags);
	aux_push(pl, AT_ENTRY, in->entry);
	aux_push(pl, AT_UID, in->uid);
	aux_push(pl, AT_EUID, in->euid);
	aux_push(pl, AT_GID, in->gid);
	aux_push(pl, AT_EGID, in->egid);
	aux_push(pl, AT_SECURE, in->secure);
	aux_push(pl, AT_RANDOM, pl->random);
	aux_push(pl, AT_HWCAP2, in->hwcap2);
	aux_push(pl, AT_EXECFN, pl->execfn);
	if (in->platform)
		aux_push(pl, AT_PLATFORM, pl->platform);
	aux_push(pl, AT_NULL, 0);
}

/*
 * The whole layout, checking every limit; no bytes written.  Addresses are computed below
 * PLAN_TOP (16-byte aligned, far above any possible image) and moved by plan_move: the
 * layout only depends on the top's alignment.
 */
#define PLAN_TOP (1ull << 62)

static int plan_stack(const struct exec_stack_args *in, struct plan *pl)
{
	uint64_t total = 0, env_bytes = 0, arg_bytes = 0, p, items;
	long limit, flen;
	size_t plen = 0;
	int err;

	memset(pl, 0, sizeof(*pl));
	if (!in || in->argc > EXEC_STACK_MAX_ARG_STRINGS || in->envc > EXEC_STACK_MAX_ARG_STRINGS)
		return in ? -E2BIG : -EINVAL;
	limit = strings_limit(in);
	if (limit < 0)
		return (int)limit;
	flen = arg_len(in->filename);
	if (flen < 0)
		return (int)flen;
	total = (uint64_t)flen;
	if (total > (uint64_t)limit)
		return -E2BIG;
	err = add_strings(in->envp, in->envc, (uint64_t)limit, &total);
	if (err)
		return err;
	env_bytes = total - (uint64_t)flen;
	err = add_strings(in->argv, in->argc, (uint64_t)limit, &total);
	if (err)
		return err;
	arg_bytes = total - env_bytes - (uint64_t)flen;
	pl->argc = in->argc;
	if (in->argc == 0) {
		/* do_execveat_common: an empty argv gets "" so argv[1] is never envp[0]. */
		if (++total > (uint64_t)limit)
			return -E2BIG;
		pl->empty_argv0 = true;
		pl->argc = 1;
		arg_bytes = 1;
	}
	if (in->platform) {
		plen = strnlen(in->platform, PLATFORM_MAX) + 1;
		if (plen > PLATFORM_MAX)
			return -EINVAL;
	}

	items = (uint64_t)(pl->argc + 1) + (in->envc + 1) + 1;
	p = PLAN_TOP - WORD;
	pl->execfn = p - (uint64_t)flen;
	pl->env_start = pl->execfn - env_bytes;
	pl->arg_start = pl->env_start - arg_bytes;
	p = pl->arg_start & ~15ull; /* arch_align_stack */
	if (in->platform) {
		p -= plen;
		pl->platform = p;
	}
	p -= 16;
	pl->random = p;
	fill_auxv(pl, in); /* for its length; plan_move fills in the addresses */
	p -= pl->aux_words * WORD; /* STACK_ADD(p, ei_index) */
	pl->sp = (p - items * WORD) & ~15ull; /* STACK_ROUND(sp, items) */
	pl->argv = pl->sp + WORD;
	pl->envp = pl->argv + (pl->argc + 1) * WORD;
	pl->auxv = pl->envp + (in->envc + 1) * WORD;
	return 0;
}

/* Move the planned layout to stack_top and fill the auxv with the final addresses. */
static void plan_move(struct plan *pl, const struct exec_stack_args *in, uint64_t stack_top)
{
	uint64_t d = stack_top - PLAN_TOP; /* modular: stack_top is below PLAN_TOP */

	pl->execfn += d;
	pl->env_start += d;
	pl->arg_start += d;
	if (pl->platform)
		pl->platform += d;
	pl->random += d;
	pl->sp += d;
	pl->argv += d;
	pl->envp += d;
	pl->auxv += d;
	fill_auxv(pl, in);
}

long exec_stack_size(const struct exec_stack_args *in)
{
	struct plan pl;
	int err = plan_stack(in, &pl);

	if (err)
		return err;
	return (long)(PLAN_TOP - pl.sp);
}

/* The buffer stands for [top - size, top): user address u is buf[u - (top - size)]. */
struct sbuf {
	uint8_t *buf;
	uint64_t base;
};

static void put_bytes(const struct sbuf *s, uint64_t uaddr, const void *src, size_t n)
{
	memcpy(s->buf + (uaddr - s->base), src, n);
}

static void put_word(const struct sbuf *s, uint64_t uaddr, uint64_t v)
{
	put_bytes(s, uaddr, &v, sizeof(v)); /* little-endian on both the host and aarch64 */
}

/* Strings from addr upward, and their pointers from vec upward; returns the end address. */
static uint64_t put_strings(const struct sbuf *s, uint64_t addr, uint64_t vec,
			    const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1; /* arg_len bounded it already */

		put_bytes(s, addr, v[i], len);
		put_word(s, vec + i * WORD, addr);
		addr += len;
	}
	return addr;
}

int exec_stack_build(const struct exec_stack_args *in, uint8_t *buf, size_t buf_size,
		     uint64_t stack_top, struct exec_stack_layout *out)
{
	struct plan pl;
	struct sbuf s;
	uint64_t a;
	int err;

	if (!buf || !out || stack_top < buf_size || (stack_top & 15) || stack_top > PLAN_TOP)
		return -EINVAL;
	err = plan_stack(in, &pl);
	if (err)
		return err;
	if (PLAN_TOP - pl.sp > stack_top)
		return -EINVAL; /* the image would reach below address 0 */
	if (PLAN_TOP - pl.sp > buf_size)
		return -E2BIG;
	plan_move(&pl, in, stack_top);

	s.buf = buf;
	s.base = stack_top - buf_size;
	memset(buf, 0, buf_size);
	put_bytes(&s, pl.execfn, in->filename, strlen(in->filename) + 1);
	a = put_strings(&s, pl.env_start, pl.envp, in->envp, in->envc);
	put_word(&s, pl.envp + in->envc * WORD, 0);
	if (pl.empty_argv0)
		put_word(&s, pl.argv, pl.arg_start); /* the "" the zeroed buffer already holds */
	else
		put_strings(&s, pl.arg_start, pl.argv, in->argv, in->argc);
	put_word(&s, pl.argv + pl.argc * WORD, 0);
	put_word(&s, pl.sp, pl.argc);
	if (in->platform)
		put_bytes(&s, pl.platform, in->platform, strlen(in->platform) + 1);
	put_bytes(&s, pl.random, in->random, sizeof(in->random));
	put_bytes(&s, pl.auxv, pl.aux, pl.aux_words * WORD);

	memset(out, 0, sizeof(*out));
	out->sp = pl.sp;
	out->argv = pl.argv;
	out->envp = pl.envp;
	out->auxv = pl.auxv;
	out->auxv_words = pl.aux_words;
	out->arg_start = pl.arg_start;
	out->arg_end = pl.env_start;
	out->env_start = pl.env_start;
	out->env_end = a;
	out->execfn = pl.execfn;
	out->platform = pl.platform;
	out->random = pl.random;
	out->used = (size_t)(stack_top - pl.sp);
	return 0;
}
