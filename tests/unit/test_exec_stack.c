/*
 * test_exec_stack.c - host tests for kernel/exec_stack.c: build stack images, then read them
 * back the way a C library's _start does (argc at SP, argv, envp, auxv) and check every
 * pointer, value, alignment and the exact Linux layout; then execve's E2BIG limits at their
 * boundaries, and the buffer / argument errors.  Buffers are exact-size heap blocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/auxvec.h>
#include <kern/errno.h>
#include <kern/exec_stack.h>

#define TOP 0x0000fffffffff000ull /* a typical arm64 STACK_TOP without randomisation */
#define MAXLEN EXEC_STACK_MAX_ARG_STRLEN

/* ---- a reader, as a libc's startup code sees the stack ---- */

struct image {
	uint8_t *buf;
	size_t size;
	uint64_t top;
};

static const uint8_t *at(const struct image *im, uint64_t uaddr, size_t n)
{
	uint64_t base = im->top - im->size;

	assert_true(uaddr >= base && uaddr <= im->top && n <= im->top - uaddr);
	return im->buf + (uaddr - base);
}

static uint64_t word(const struct image *im, uint64_t uaddr)
{
	uint64_t v;

	assert_int_equal(uaddr & 7, 0);
	memcpy(&v, at(im, uaddr, 8), 8);
	return v;
}

static const char *str(const struct image *im, uint64_t uaddr)
{
	const char *s = (const char *)at(im, uaddr, 1);
	size_t room = im->top - uaddr;

	assert_non_null(memchr(s, 0, room));
	return s;
}

struct parsed {
	uint64_t argc;
	const char *argv[64];
	uint64_t argv_addr[64];
	size_t envc;
	const char *envp[64];
	uint64_t envp_addr[64];
	uint64_t aux_id[32], aux_val[32];
	size_t auxc; /* AT_NULL excluded */
	uint64_t auxv_end; /* address just past AT_NULL's pair */
};

static void parse(const struct image *im, uint64_t sp, struct parsed *p)
{
	uint64_t a;

	memset(p, 0, sizeof(*p));
	assert_int_equal(sp & 15, 0);
	p->argc = word(im, sp);
	a = sp + 8;
	for (uint64_t i = 0; i < p->argc; i++, a += 8) {
		assert_true(i < 64);
		p->argv_addr[i] = word(im, a);
		p->argv[i] = str(im, p->argv_addr[i]);
	}
	assert_int_equal(word(im, a), 0);
	for (a += 8; word(im, a) != 0; a += 8) {
		assert_true(p->envc < 64);
		p->envp_addr[p->envc] = word(im, a);
		p->envp[p->envc] = str(im, p->envp_addr[p->envc]);
		p->envc++;
	}
	for (a += 8; word(im, a) != AT_NULL; a += 16) {
		assert_true(p->auxc < 32);
		p->aux_id[p->auxc] = word(im, a);
		p->aux_val[p->auxc] = word(im, a + 8);
		p->auxc++;
	}
	assert_int_equal(word(im, a + 8), 0);
	p->auxv_end = a + 16;
}

static uint64_t aux(const struct parsed *p, uint64_t id)
{
	for (size_t i = 0; i < p->auxc; i++)
		if (p->aux_id[i] == id)
			return p->aux_val[i];
	fail_msg("auxv entry %llu missing", (unsigned long long)id);
	return 0;
}

static bool has_aux(const struct parsed *p, uint64_t id)
{
	for (size_t i = 0; i < p->auxc; i++)
		if (p->aux_id[i] == id)
			return true;
	return false;
}

/* ---- fixtures ---- */

static const char *const def_argv[] = { "/bin/prog", "-x", "hello world" };
static const char *const def_envp[] = { "HOME=/", "PATH=/bin:/usr/bin", "TERM=linux" };

static void default_args(struct exec_stack_args *in)
{
	memset(in, 0, sizeof(*in));
	in->argv = def_argv;
	in->argc = 3;
	in->envp = def_envp;
	in->envc = 3;
	in->filename = "/bin/prog";
	in->platform = "aarch64";
	for (int i = 0; i < 16; i++)
		in->random[i] = (uint8_t)(0xa0 + i);
	in->minsigstksz = 5280;
	in->hwcap = 0x8ff;
	in->hwcap2 = 0x2;
	in->phdr = 0x400040;
	in->phent = 56;
	in->phnum = 6;
	in->entry = 0x4005c0;
	in->uid = 1;
	in->euid = 2;
	in->gid = 3;
	in->egid = 4;
}

/* Build into an exact-size buffer (plus slack); the caller frees im->buf. */
static int build(const struct exec_stack_args *in, size_t slack, struct image *im,
		 struct exec_stack_layout *lay)
{
	long need = exec_stack_size(in);

	if (need < 0)
		return (int)need;
	im->size = (size_t)need + slack;
	im->buf = malloc(im->size);
	im->top = TOP;
	assert_non_null(im->buf);
	memset(im->buf, 0x5a, im->size);
	return exec_stack_build(in, im->buf, im->size, TOP, lay);
}

/* The Linux layout, recomputed independently from the argument list. */
static void check_linux_layout(const struct exec_stack_args *in, const struct image *im,
			       const struct exec_stack_layout *lay, const struct parsed *p)
{
	uint64_t a = TOP - 8, strings = 0;
	size_t argc = in->argc ? in->argc : 1;

	/* 8 zero bytes at the very top, then the filename. */
	assert_int_equal(word(im, TOP - 8), 0);
	a -= strlen(in->filename) + 1;
	assert_int_equal(lay->execfn, a);
	assert_string_equal(str(im, a), in->filename);
	assert_int_equal(aux(p, AT_EXECFN), a);
	assert_int_equal(lay->env_end, a);

	/* envp strings contiguous below it, env[0] lowest; argv strings below those. */
	for (size_t i = 0; i < in->envc; i++)
		strings += strlen(in->envp[i]) + 1;
	assert_int_equal(lay->env_start, a - strings);
	assert_int_equal(lay->arg_end, lay->env_start);
	uint64_t e = lay->env_start;
	for (size_t i = 0; i < in->envc; i++) {
		assert_int_equal(p->envp_addr[i], e);
		assert_string_equal(p->envp[i], in->envp[i]);
		e += strlen(in->envp[i]) + 1;
	}
	strings = 0;
	for (size_t i = 0; i < in->argc; i++)
		strings += strlen(in->argv[i]) + 1;
	if (!in->argc)
		strings = 1;
	assert_int_equal(lay->arg_start, lay->env_start - strings);
	uint64_t g = lay->arg_start;
	assert_int_equal(p->argc, argc);
	for (size_t i = 0; i < argc; i++) {
		const char *want = in->argc ? in->argv[i] : "";

		assert_int_equal(p->argv_addr[i], g);
		assert_string_equal(p->argv[i], want);
		g += strlen(want) + 1;
	}
	assert_int_equal(g, lay->arg_end);
	assert_int_equal(p->envc, in->envc);

	/* Below the strings, 16-aligned: platform, random, then the vectors. */
	a = lay->arg_start & ~15ull;
	if (in->platform) {
		a -= strlen(in->platform) + 1;
		assert_int_equal(lay->platform, a);
		assert_int_equal(aux(p, AT_PLATFORM), a);
		assert_string_equal(str(im, a), in->platform);
	} else {
		assert_false(has_aux(p, AT_PLATFORM));
		assert_int_equal(lay->platform, 0);
	}
	a -= 16;
	assert_int_equal(lay->random, a);
	assert_int_equal(aux(p, AT_RANDOM), a);
	assert_memory_equal(at(im, a, 16), in->random, 16);

	/* STACK_ADD then STACK_ROUND: the vectors end at most 8 bytes below the random bytes. */
	uint64_t ei = (p->auxc + 1) * 2, items = (argc + 1) + (in->envc + 1) + 1;
	uint64_t sp = ((a - ei * 8) - items * 8) & ~15ull;
	assert_int_equal(lay->sp, sp);
	assert_int_equal(lay->argv, sp + 8);
	assert_int_equal(lay->envp, sp + 8 + (argc + 1) * 8);
	assert_int_equal(lay->auxv, lay->envp + (in->envc + 1) * 8);
	assert_int_equal(lay->auxv_words, ei);
	assert_int_equal(p->auxv_end, lay->auxv + ei * 8);
	assert_true(p->auxv_end <= a && a - p->auxv_end < 16);
	assert_int_equal(lay->used, TOP - sp);

	/* Whatever is not laid out is zero, all the way down the buffer. */
	for (uint64_t u = TOP - im->size; u < sp; u++)
		assert_int_equal(*at(im, u, 1), 0);
	for (uint64_t u = p->auxv_end; u < a; u++)
		assert_int_equal(*at(im, u, 1), 0);
}

/* ---- tests ---- */

static void test_basic_image(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	struct image im;
	struct parsed p;

	default_args(&in);
	assert_int_equal(build(&in, 0, &im, &lay), 0);
	parse(&im, lay.sp, &p);
	check_linux_layout(&in, &im, &lay, &p);

	/* arm64's order, with AT_IGNORE / AT_SYSINFO_EHDR rules below. */
	static const uint64_t order[] = { AT_MINSIGSTKSZ, AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR,
					  AT_PHENT, AT_PHNUM, AT_BASE, AT_FLAGS, AT_ENTRY, AT_UID,
					  AT_EUID, AT_GID, AT_EGID, AT_SECURE, AT_RANDOM,
					  AT_HWCAP2, AT_EXECFN, AT_PLATFORM };
	assert_int_equal(p.auxc, sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < p.auxc; i++)
		assert_int_equal(p.aux_id[i], order[i]);
	assert_int_equal(aux(&p, AT_MINSIGSTKSZ), 5280);
	assert_int_equal(aux(&p, AT_HWCAP), 0x8ff);
	assert_int_equal(aux(&p, AT_HWCAP2), 0x2);
	assert_int_equal(aux(&p, AT_PAGESZ), 4096);
	assert_int_equal(aux(&p, AT_CLKTCK), 100);
	assert_int_equal(aux(&p, AT_PHDR), 0x400040);
	assert_int_equal(aux(&p, AT_PHENT), 56);
	assert_int_equal(aux(&p, AT_PHNUM), 6);
	assert_int_equal(aux(&p, AT_BASE), 0);
	assert_int_equal(aux(&p, AT_FLAGS), 0);
	assert_int_equal(aux(&p, AT_ENTRY), 0x4005c0);
	assert_int_equal(aux(&p, AT_UID), 1);
	assert_int_equal(aux(&p, AT_EUID), 2);
	assert_int_equal(aux(&p, AT_GID), 3);
	assert_int_equal(aux(&p, AT_EGID), 4);
	assert_int_equal(aux(&p, AT_SECURE), 0);
	assert_string_equal(p.argv[2], "hello world");
	assert_string_equal(p.envp[1], "PATH=/bin:/usr/bin");
	free(im.buf);
}

static void test_optional_aux_entries(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	struct image im;
	struct parsed p;

	default_args(&in);
	in.sysinfo_ehdr = 0xfffff7ffe000ull;
	in.minsigstksz = 0;
	in.platform = NULL;
	in.secure = true;
	in.base = 0xfffff7fc0000ull;
	assert_int_equal(build(&in, 0, &im, &lay), 0);
	parse(&im, lay.sp, &p);
	check_linux_layout(&in, &im, &lay, &p);
	assert_int_equal(p.aux_id[0], AT_SYSINFO_EHDR);
	assert_int_equal(p.aux_val[0], 0xfffff7ffe000ull);
	assert_int_equal(p.aux_id[1], AT_IGNORE); /* Linux's stand-in for an unknown MINSIGSTKSZ */
	assert_int_equal(p.aux_val[1], 0);
	assert_false(has_aux(&p, AT_MINSIGSTKSZ));
	assert_int_equal(p.aux_id[p.auxc - 1], AT_EXECFN);
	assert_int_equal(aux(&p, AT_SECURE), 1);
	assert_int_equal(aux(&p, AT_BASE), 0xfffff7fc0000ull);
	free(im.buf);
}

static void test_empty_argv_and_envp(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	struct image im;
	struct parsed p;

	default_args(&in);
	in.argc = 0;
	in.argv = NULL;
	in.envc = 0;
	in.envp = NULL;
	assert_int_equal(build(&in, 64, &im, &lay), 0);
	parse(&im, lay.sp, &p);
	check_linux_layout(&in, &im, &lay, &p);
	assert_int_equal(p.argc, 1);
	assert_string_equal(p.argv[0], "");
	assert_int_equal(p.argv_addr[0], lay.execfn - 1);
	assert_int_equal(p.envc, 0);
	free(im.buf);
}

/* Every small combination of counts and string lengths: alignment and layout hold. */
static void test_layout_sweep(void **state)
{
	static const char pool[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char strs[8][40];
	const char *av[8], *ev[8];
	char fname[40];

	for (int k = 0; k < 8; k++) {
		memcpy(strs[k], pool, (size_t)(k * 5 + 1));
		strs[k][k * 5 + 1] = 0;
	}
	for (size_t argc = 0; argc <= 5; argc++) {
		for (size_t envc = 0; envc <= 4; envc++) {
			for (int flen = 1; flen <= 17; flen += 3) {
				for (int plat = 0; plat < 2; plat++) {
					struct exec_stack_args in;
					struct exec_stack_layout lay;
					struct image im;
					struct parsed p;

					default_args(&in);
					for (size_t i = 0; i < argc; i++)
						av[i] = strs[(i + flen) % 8];
					for (size_t i = 0; i < envc; i++)
						ev[i] = strs[(i * 3 + argc) % 8];
					memcpy(fname, pool, (size_t)flen);
					fname[flen] = 0;
					in.argv = av;
					in.argc = argc;
					in.envp = ev;
					in.envc = envc;
					in.filename = fname;
					in.platform = plat ? "aarch64" : NULL;
					in.sysinfo_ehdr = (argc & 1) ? 0x1000 : 0;
					assert_int_equal(build(&in, (argc * 8) % 48, &im, &lay), 0);
					parse(&im, lay.sp, &p);
					check_linux_layout(&in, &im, &lay, &p);
					free(im.buf);
				}
			}
		}
	}
}

static char *filled(size_t len, char c)
{
	char *s = malloc(len + 1);

	assert_non_null(s);
	memset(s, c, len);
	s[len] = 0;
	return s;
}

/* MAX_ARG_STRLEN counts the NUL: strlen 131071 is the longest string allowed. */
static void test_max_arg_strlen(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	struct image im;
	struct parsed p;
	char *ok = filled(MAXLEN - 1, 'a'), *big = filled(MAXLEN, 'b');
	const char *av[2] = { "prog", ok };
	const char *ev[1] = { ok };

	default_args(&in);
	in.argv = av;
	in.argc = 2;
	assert_int_equal(build(&in, 0, &im, &lay), 0);
	parse(&im, lay.sp, &p);
	check_linux_layout(&in, &im, &lay, &p);
	free(im.buf);

	av[1] = big;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	default_args(&in);
	ev[0] = big;
	in.envp = ev;
	in.envc = 1;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	default_args(&in);
	in.filename = big;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	in.filename = ok;
	assert_true(exec_stack_size(&in) > 0);
	free(ok);
	free(big);
}

/* The total: 2 MiB (RLIMIT_STACK 8 MiB / 4) less 8 bytes per pointer, filename included. */
static void test_total_limit_boundary(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	struct image im;
	struct parsed p;
	char *chunk = filled(MAXLEN - 1, 'e');
	const char *ev[15];
	const char *av[1];
	/* limit = 2097152 - (1 + 15) * 8; env 15 * 131072; filename "f" 2 bytes */
	size_t room = 2097152 - 16 * 8 - 15 * (size_t)MAXLEN - 2;
	char *arg = filled(room - 1, 'a'), *arg1 = filled(room, 'a');

	for (int i = 0; i < 15; i++)
		ev[i] = chunk;
	default_args(&in);
	in.envp = ev;
	in.envc = 15;
	in.argv = av;
	in.argc = 1;
	in.filename = "f";
	av[0] = arg;
	assert_int_equal(build(&in, 0, &im, &lay), 0);
	parse(&im, lay.sp, &p);
	check_linux_layout(&in, &im, &lay, &p);
	assert_true(lay.used > 2097152 - 16 * 8);
	free(im.buf);
	av[0] = arg1;
	assert_int_equal(exec_stack_size(&in), -E2BIG);

	/* A bigger RLIMIT_STACK raises the limit (to at most 6 MiB). */
	in.stack_rlimit = 16ull << 20;
	assert_true(exec_stack_size(&in) > 0);
	in.stack_rlimit = UINT64_MAX; /* RLIM_INFINITY */
	assert_true(exec_stack_size(&in) > 0);
	/* A smaller one lowers it, but never below ARG_MAX (128 KiB). */
	in.stack_rlimit = 4ull << 20;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	free(chunk);
	free(arg);
	free(arg1);
}

static void test_small_rlimit_floor(void **state)
{
	struct exec_stack_args in;
	/* rlimit 4 KiB: limit = ARG_MAX = 131072, less 8 for argv[0]; filename 2 bytes */
	char *a = filled(131072 - 8 - 2 - 1, 'x'), *b = filled(131072 - 8 - 2, 'x');
	const char *av[1] = { a };

	default_args(&in);
	in.stack_rlimit = 4096;
	in.argv = av;
	in.argc = 1;
	in.envc = 0;
	in.filename = "f";
	assert_true(exec_stack_size(&in) > 0);
	av[0] = b;
	assert_int_equal(exec_stack_size(&in), -E2BIG);

	/* With argc == 0 the empty argv[0] still takes a pointer and a byte. */
	in.argc = 0;
	in.argv = NULL;
	in.filename = b + 1; /* 131062 bytes with NUL: limit 131064 leaves 2, "" takes 1 */
	assert_true(exec_stack_size(&in) > 0);
	in.filename = b; /* 131063 + "" = 131064: still fits */
	assert_true(exec_stack_size(&in) > 0);
	free(a);
	a = filled(131072 - 8 - 1, 'y'); /* 131064 with NUL: no room for "" */
	in.filename = a;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	free(a);
	free(b);
}

/* Pointers alone can exhaust the limit: 16384 argv pointers are 128 KiB. */
static void test_too_many_pointers(void **state)
{
	struct exec_stack_args in;
	size_t n = 16384;
	const char **av = calloc(n, sizeof(*av));

	for (size_t i = 0; i < n; i++)
		av[i] = "";
	default_args(&in);
	in.stack_rlimit = 4096;
	in.argv = av;
	in.envc = 0;
	in.argc = n;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	in.argc = n - 2; /* 131056 of pointers leaves 16: 16382 + "/bin/prog" 10 > 16 */
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	in.argc = 1000;
	assert_true(exec_stack_size(&in) > 0);

	/* More than MAX_ARG_STRINGS is E2BIG before any string is looked at. */
	in.argc = (size_t)EXEC_STACK_MAX_ARG_STRINGS + 1;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	in.argc = 1;
	in.envc = (size_t)EXEC_STACK_MAX_ARG_STRINGS + 1;
	assert_int_equal(exec_stack_size(&in), -E2BIG);
	free(av);
}

static void test_buffer_and_argument_errors(void **state)
{
	struct exec_stack_args in;
	struct exec_stack_layout lay;
	long need;
	uint8_t *buf;
	const char *av[2] = { "x", NULL };

	default_args(&in);
	need = exec_stack_size(&in);
	assert_true(need > 0 && need % 16 == 0);
	buf = malloc((size_t)need);
	assert_int_equal(exec_stack_build(&in, buf, (size_t)need, TOP, &lay), 0);
	assert_int_equal(lay.used, (size_t)need);
	assert_int_equal(exec_stack_build(&in, buf, (size_t)need - 1, TOP, &lay), -E2BIG);
	assert_int_equal(exec_stack_build(&in, buf, 0, TOP, &lay), -E2BIG);
	assert_int_equal(exec_stack_build(&in, buf, (size_t)need, TOP + 8, &lay), -EINVAL);
	assert_int_equal(exec_stack_build(&in, buf, (size_t)need, 64, &lay), -EINVAL);
	assert_int_equal(exec_stack_build(&in, buf, (size_t)need, (uint64_t)need, &lay), 0);
	assert_int_equal(lay.sp, 0);
	assert_int_equal(exec_stack_build(&in, NULL, (size_t)need, TOP, &lay), -EINVAL);
	assert_int_equal(exec_stack_build(NULL, buf, (size_t)need, TOP, &lay), -EINVAL);
	assert_int_equal(exec_stack_size(NULL), -EINVAL);

	/* NULL strings or arrays: what execve gives for an unreadable pointer. */
	in.argv = av;
	in.argc = 2;
	assert_int_equal(exec_stack_size(&in), -EFAULT);
	in.argc = 1;
	assert_true(exec_stack_size(&in) > 0);
	in.envp = NULL;
	assert_int_equal(exec_stack_size(&in), -EFAULT);
	default_args(&in);
	in.filename = NULL;
	assert_int_equal(exec_stack_size(&in), -EFAULT);

	/* A kernel platform string that is not a short C string. */
	char *plat = filled(100, 'p');
	default_args(&in);
	in.platform = plat;
	assert_int_equal(exec_stack_size(&in), -EINVAL);
	free(plat);
	free(buf);
}

/*
 * Recorded on Debian 12's Linux 6.1 arm64 kernel without randomisation (see
 * tests/unit/fixtures/stackdump.c): `env -i A=1 BB=22 /tmp/dump x yy` and `env -i /tmp/dump`,
 * offsets below the stack VMA's end (there 1 << 48).
 */
static void test_matches_linux_6_1(void **state)
{
	static const char *const av[] = { "/tmp/dump", "x", "yy" }, *const ev[] = { "A=1", "BB=22" };
	static const struct {
		size_t argc, envc;
		uint64_t sp, argv0, env0, auxv, auxv_end, random, execfn, platform;
	} rec[] = {
		{ 3, 2, 0x1e0, 0x2b, 0x1c, 0x1a0, 0x50, 0x48, 0x12, 0x38 },
		{ 1, 0, 0x1b0, 0x1c, 0, 0x190, 0x40, 0x38, 0x12, 0x28 },
	};
	/* Linux's auxv there, in order (values that are stack addresses checked above). */
	static const uint64_t ids[] = { AT_SYSINFO_EHDR, AT_MINSIGSTKSZ, AT_HWCAP, AT_PAGESZ,
					AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM, AT_BASE, AT_FLAGS,
					AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE,
					AT_RANDOM, AT_HWCAP2, AT_EXECFN, AT_PLATFORM };
	const uint64_t top = 1ull << 48;

	for (size_t r = 0; r < 2; r++) {
		struct exec_stack_args in;
		struct exec_stack_layout lay;
		struct image im = { .size = 1 << 16, .top = top };
		struct parsed p;

		default_args(&in);
		in.argv = av;
		in.argc = rec[r].argc;
		in.envp = ev;
		in.envc = rec[r].envc;
		in.filename = "/tmp/dump";
		in.sysinfo_ehdr = 0xfffff7fff000ull;
		in.minsigstksz = 0x2700;
		im.buf = malloc(im.size);
		assert_int_equal(exec_stack_build(&in, im.buf, im.size, top, &lay), 0);
		parse(&im, lay.sp, &p);
		assert_int_equal(top - lay.sp, rec[r].sp);
		assert_int_equal(top - p.argv_addr[0], rec[r].argv0);
		if (rec[r].envc)
			assert_int_equal(top - p.envp_addr[0], rec[r].env0);
		assert_int_equal(top - lay.auxv, rec[r].auxv);
		assert_int_equal(top - p.auxv_end, rec[r].auxv_end);
		assert_int_equal(top - aux(&p, AT_RANDOM), rec[r].random);
		assert_int_equal(top - aux(&p, AT_EXECFN), rec[r].execfn);
		assert_int_equal(top - aux(&p, AT_PLATFORM), rec[r].platform);
		assert_int_equal(p.auxc, sizeof(ids) / sizeof(ids[0]));
		for (size_t i = 0; i < p.auxc; i++)
			assert_int_equal(p.aux_id[i], ids[i]);
		free(im.buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_image),
		cmocka_unit_test(test_optional_aux_entries),
		cmocka_unit_test(test_empty_argv_and_envp),
		cmocka_unit_test(test_layout_sweep),
		cmocka_unit_test(test_max_arg_strlen),
		cmocka_unit_test(test_total_limit_boundary),
		cmocka_unit_test(test_small_rlimit_floor),
		cmocka_unit_test(test_too_many_pointers),
		cmocka_unit_test(test_buffer_and_argument_errors),
		cmocka_unit_test(test_matches_linux_6_1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
