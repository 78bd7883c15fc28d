/*
 * test_elf.c - host tests for kernel/elf.c: real static aarch64 programs (ET_EXEC and
 * static-pie, built by tests/unit/module.mk) checked against what readelf reports about them,
 * every truncation of their headers, and hand-built hostile images: bad identification,
 * bad program header tables, bad PT_INTERP, bad / overlapping / huge / wrapping PT_LOADs,
 * plus random corruption.  Images sit in exact-size heap blocks so ASan sees overreads.
 *
 * The errnos were checked against Debian 12's Linux 6.1 arm64 kernel (refvm.sh) by exec'ing
 * patched copies of hello-static: ENOEXEC for e_phentsize 32, e_phnum 0 or 74, ET_REL,
 * EM_X86_64 and a 1-byte PT_INTERP; EIO for PT_INTERP past EOF; execve succeeding for
 * ELFCLASS32, ELFDATA2MSB and EI_VERSION 0; SIGSEGV (after the point of no return) for
 * p_filesz > p_memsz, an incongruent p_offset, p_vaddr at TASK_SIZE, a segment past it, an
 * entry at it, no PT_LOAD, overlapping segments and a 64 TiB .bss; SIGBUS for file bytes
 * past EOF.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <asm-generic/mman-common.h>
#include <linux/elf.h>
#include <kern/elf.h>
#include <kern/errno.h>

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "build/fixtures"
#endif
#ifndef READELF
#define READELF "aarch64-linux-gnu-readelf"
#endif

#define LIMIT (1ull << 48) /* TASK_SIZE for 48-bit VAs */
#define PG 4096ull

/* ---- helpers ---- */

struct blob {
	unsigned char *p;
	size_t len;
};

static struct blob load_fixture(const char *name)
{
	char path[512];
	struct blob b = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("fixture %s missing (built by tests/unit/module.mk)", path);
	fseek(f, 0, SEEK_END);
	b.len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	b.p = malloc(b.len);
	assert_non_null(b.p);
	assert_int_equal(fread(b.p, 1, b.len, f), b.len);
	fclose(f);
	return b;
}

/* elf_plan over an exact-size heap copy; the copy is kept until the next call. */
static unsigned char *held;

static int plan_exact(const void *img, size_t len, uint64_t limit, struct elf_plan *p)
{
	free(held);
	held = malloc(len ? len : 1);
	assert_non_null(held);
	memcpy(held, img, len);
	return elf_plan(held, len, limit, p);
}

/* A synthetic image: header, program headers at 64, payload up to IMG_SIZE. */
#define IMG_SIZE 0x4000u
#define MAXPH 80

struct img {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAXPH];
	unsigned int n;
	size_t size; /* file size */
};

static void img_init(struct img *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->eh.e_ident, ELFMAG, SELFMAG);
	m->eh.e_ident[EI_CLASS] = ELFCLASS64;
	m->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	m->eh.e_ident[EI_VERSION] = EV_CURRENT;
	m->eh.e_type = type;
	m->eh.e_machine = EM_AARCH64;
	m->eh.e_version = EV_CURRENT;
	m->eh.e_phoff = sizeof(Elf64_Ehdr);
	m->eh.e_ehsize = sizeof(Elf64_Ehdr);
	m->eh.e_phentsize = sizeof(Elf64_Phdr);
	m->size = IMG_SIZE;
}

static Elf64_Phdr *img_add(struct img *m, uint32_t type, uint32_t flags, uint64_t off,
			   uint64_t vaddr, uint64_t filesz, uint64_t memsz)
{
	Elf64_Phdr *ph = &m->ph[m->n++];

	ph->p_type = type;
	ph->p_flags = flags;
	ph->p_offset = off;
	ph->p_vaddr = ph->p_paddr = vaddr;
	ph->p_filesz = filesz;
	ph->p_memsz = memsz;
	ph->p_align = 0x10000;
	m->eh.e_phnum = (uint16_t)m->n;
	return ph;
}

/* The usual static executable: text at 0x400000 (holding the headers), data + bss above. */
static void img_exec(struct img *m)
{
	img_init(m, ET_EXEC);
	img_add(m, PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x2000, 0x2000);
	img_add(m, PT_LOAD, PF_R | PF_W, 0x2100, 0x412100, 0x800, 0x3000);
	img_add(m, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
	m->eh.e_entry = 0x400100;
}

/* Serialise into a buffer of m->size bytes (headers laid where e_phoff says if they fit). */
static unsigned char *img_bytes(const struct img *m, unsigned char *buf)
{
	memset(buf, 0, IMG_SIZE);
	memcpy(buf, &m->eh, sizeof(m->eh));
	if (m->eh.e_phoff < IMG_SIZE) {
		size_t room = IMG_SIZE - m->eh.e_phoff, n = m->n * sizeof(Elf64_Phdr);

		memcpy(buf + m->eh.e_phoff, m->ph, n < room ? n : room);
	}
	memcpy(buf + 0x3000, "/lib/ld-linux-aarch64.so.1", 27);
	return buf;
}

static int img_plan(const struct img *m, uint64_t limit, struct elf_plan *p)
{
	unsigned char buf[IMG_SIZE];

	return plan_exact(img_bytes(m, buf), m->size, limit, p);
}

/* ---- real binaries against readelf ---- */

struct re_load {
	uint64_t off, vaddr, filesz, memsz, align;
	uint32_t flags;
};

struct re_facts {
	int type; /* ET_EXEC / ET_DYN */
	uint64_t entry, phoff;
	unsigned int phnum, nload;
	struct re_load load[16];
	int has_stack;
	uint32_t stack_flags;
	int has_interp;
};

static uint32_t re_flags(const char *s)
{
	uint32_t f = 0;

	for (; *s && !(s[0] == '0' && s[1] == 'x'); s++) {
		if (*s == 'R')
			f |= PF_R;
		else if (*s == 'W')
			f |= PF_W;
		else if (*s == 'E')
			f |= PF_X;
	}
	return f;
}

static void readelf_facts(const char *name, struct re_facts *r)
{
	char cmd[600], line[512];
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "%s -lhW %s/%s", READELF, FIXTURE_DIR, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *v;
		unsigned long long a[6];
		int n = 0;

		if ((v = strstr(line, "Type:")))
			r->type = strstr(v, "EXEC") ? ET_EXEC : strstr(v, "DYN") ? ET_DYN : -1;
		else if ((v = strstr(line, "Entry point address:")))
			r->entry = strtoull(v + 20, NULL, 16);
		else if ((v = strstr(line, "Start of program headers:")))
			r->phoff = strtoull(v + 25, NULL, 10);
		else if ((v = strstr(line, "Number of program headers:")))
			r->phnum = (unsigned int)strtoul(v + 26, NULL, 10);
		else if (sscanf(line, " LOAD %llx %llx %llx %llx %llx%n", &a[0], &a[1], &a[2], &a[3],
				&a[4], &n) == 5 && n > 0) {
			struct re_load *l = &r->load[r->nload++];
			char *al = strstr(line + n, "0x");

			assert_true(r->nload < 16);
			l->off = a[0];
			l->vaddr = a[1];
			l->filesz = a[3];
			l->memsz = a[4];
			l->flags = re_flags(line + n);
			assert_non_null(al);
			l->align = strtoull(al, NULL, 16);
		} else if (sscanf(line, " GNU_STACK %llx %llx %llx %llx %llx%n", &a[0], &a[1],
				  &a[2], &a[3], &a[4], &n) == 5 && n > 0) {
			r->has_stack = 1;
			r->stack_flags = re_flags(line + n);
		} else if (strstr(line, " INTERP ")) {
			r->has_interp = 1;
		}
	}
	assert_int_equal(pclose(f), 0);
	assert_true(r->nload > 0);
}

static void check_against_readelf(const char *name, int want_type)
{
	struct blob b = load_fixture(name);
	struct re_facts r;
	struct elf_plan p;
	uint64_t bias = 0, brk = 0, phdr = 0, max_align = PG;

	readelf_facts(name, &r);
	assert_int_equal(r.type, want_type);
	assert_int_equal(elf_plan(b.p, b.len, LIMIT, &p), 0);
	assert_int_equal(p.type, want_type);

	if (want_type == ET_DYN) {
		uint64_t end = 0, base;

		for (unsigned int i = 0; i < r.nload; i++) {
			if (r.load[i].align > max_align)
				max_align = r.load[i].align;
			if (r.load[i].vaddr + r.load[i].memsz > end)
				end = r.load[i].vaddr + r.load[i].memsz;
		}
		/* No PT_INTERP: top-down under mmap_base (2^48 - 128 MiB), aligned to p_align. */
		base = (1ull << 48) - (128ull << 20) -
		       (((end + PG - 1) & ~(PG - 1)) - (r.load[0].vaddr & ~(PG - 1)));
		bias = (base & ~(max_align - 1)) - (r.load[0].vaddr & ~(PG - 1));
	}
	assert_int_equal(p.load_bias, bias);
	assert_int_equal(p.entry, r.entry + bias);
	assert_int_equal(p.phnum, r.phnum);
	assert_int_equal(p.phent, 56);
	assert_int_equal(p.nr_segs, r.nload);
	assert_null(p.interp);
	assert_int_equal(r.has_interp, 0);
	assert_int_equal(p.has_gnu_stack, r.has_stack);
	assert_int_equal(p.exec_stack, (r.stack_flags & PF_X) != 0);

	for (unsigned int i = 0; i < r.nload; i++) {
		const struct re_load *l = &r.load[i];
		struct elf_segment s;
		int prot = ((l->flags & PF_R) ? PROT_READ : 0) | ((l->flags & PF_W) ? PROT_WRITE : 0) |
			   ((l->flags & PF_X) ? PROT_EXEC : 0);

		assert_int_equal(elf_plan_segment(&p, i, &s), 0);
		assert_int_equal(s.copy_to, l->vaddr + bias);
		assert_int_equal(s.start, (l->vaddr + bias) & ~(PG - 1));
		assert_int_equal(s.end, (l->vaddr + bias + l->memsz + PG - 1) & ~(PG - 1));
		assert_int_equal(s.file_offset, l->off);
		assert_int_equal(s.file_len, l->filesz);
		assert_int_equal(s.mem_len, l->memsz);
		assert_int_equal(s.prot, prot);
		if (l->vaddr + l->memsz > brk)
			brk = l->vaddr + l->memsz;
		if (l->off <= r.phoff && r.phoff < l->off + l->filesz)
			phdr = r.phoff - l->off + l->vaddr;
	}
	assert_int_equal(elf_plan_segment(&p, r.nload, &(struct elf_segment){ 0 }), -EINVAL);
	if (want_type == ET_DYN) /* a static-pie's brk is moved to ELF_ET_DYN_BASE */
		assert_int_equal(p.brk_start, 0xaaaaaaaab000ull);
	else
		assert_int_equal(p.brk_start, (brk + bias + PG - 1) & ~(PG - 1));
	assert_int_not_equal(phdr, 0);
	assert_int_equal(p.phdr_addr, phdr + bias);
	assert_int_equal(p.image_start, (r.load[0].vaddr + bias) & ~(PG - 1));
	assert_int_equal(p.image_end, (brk + bias + PG - 1) & ~(PG - 1));
	assert_int_equal(p.start_code, r.load[0].vaddr + bias);
	assert_int_equal(p.end_code, r.load[0].vaddr + r.load[0].filesz + bias);
	free(b.p);
}

static void test_fixture_static(void **state)
{
	check_against_readelf("hello-static", ET_EXEC);
}

static void test_fixture_static_pie(void **state)
{
	check_against_readelf("hello-static-pie", ET_DYN);
}

/* Every prefix of a real binary: -ENOEXEC through the headers, -EINVAL while a segment's
 * file bytes are cut, 0 once they are all there. */
static void test_fixture_truncation(void **state)
{
	struct blob b = load_fixture("hello-static");
	struct elf_plan p;
	struct re_facts r;
	size_t hdr_end, seg_end = 0;

	readelf_facts("hello-static", &r);
	hdr_end = r.phoff + r.phnum * 56;
	for (unsigned int i = 0; i < r.nload; i++)
		if (r.load[i].off + r.load[i].filesz > seg_end)
			seg_end = r.load[i].off + r.load[i].filesz;

	for (size_t len = 0; len < hdr_end; len++)
		assert_int_equal(plan_exact(b.p, len, LIMIT, &p), -ENOEXEC);
	for (size_t len = hdr_end; len < seg_end; len += (len < hdr_end + 4096) ? 1 : 4093)
		assert_int_equal(plan_exact(b.p, len, LIMIT, &p), -EINVAL);
	assert_int_equal(plan_exact(b.p, seg_end - 1, LIMIT, &p), -EINVAL);
	assert_int_equal(plan_exact(b.p, seg_end, LIMIT, &p), 0);
	assert_int_equal(plan_exact(b.p, b.len, LIMIT, &p), 0);
	free(b.p);
}

/* The image at an odd address: nothing may assume the file is aligned (UBSan checks). */
static void test_fixture_unaligned(void **state)
{
	struct blob b = load_fixture("hello-static-pie");
	unsigned char *odd = malloc(b.len + 1);
	struct elf_plan p;
	struct elf_segment s;

	memcpy(odd + 1, b.p, b.len);
	assert_int_equal(elf_plan(odd + 1, b.len, LIMIT, &p), 0);
	assert_int_equal(elf_plan_segment(&p, 0, &s), 0);
	free(odd);
	free(b.p);
}

/* ---- synthetic images ---- */

static void test_synthetic_exec(void **state)
{
	struct img m;
	struct elf_plan p;
	struct elf_segment s;

	img_exec(&m);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.load_bias, 0);
	assert_int_equal(p.entry, 0x400100);
	assert_int_equal(p.phdr_addr, 0x400040);
	assert_int_equal(p.phnum, 3);
	assert_int_equal(p.nr_segs, 2);
	assert_int_equal(p.brk_start, 0x416000); /* 0x412100 + 0x3000 = 0x415100 */
	assert_int_equal(p.start_code, 0x400000);
	assert_int_equal(p.end_code, 0x402000);
	assert_int_equal(p.start_data, 0x412100);
	assert_int_equal(p.end_data, 0x412900);
	assert_int_equal(p.image_start, 0x400000);
	assert_int_equal(p.image_end, 0x416000);
	assert_true(p.has_gnu_stack);
	assert_false(p.exec_stack);
	assert_false(p.has_pt_phdr);
	assert_int_equal(elf_plan_segment(&p, 1, &s), 0);
	assert_int_equal(s.start, 0x412000);
	assert_int_equal(s.end, 0x416000);
	assert_int_equal(s.copy_to, 0x412100);
	assert_int_equal(s.file_offset, 0x2100);
	assert_int_equal(s.file_len, 0x800);
	assert_int_equal(s.mem_len, 0x3000);
	assert_int_equal(s.prot, PROT_READ | PROT_WRITE);
}

static void test_bad_ident(void **state)
{
	static const struct {
		size_t at;
		unsigned char v;
	} bad[] = {
		{ 0, 0x7e }, { 1, 'e' }, { 2, 'l' }, { 3, 'f' }, { 0, 0 }, { 3, 0 },
	};
	/* Linux 6.1 runs these (checked on Debian 12's kernel): only e_machine is looked at. */
	static const struct {
		size_t at;
		unsigned char v;
	} ignored[] = {
		{ EI_CLASS, ELFCLASS32 }, { EI_CLASS, 0 }, { EI_DATA, ELFDATA2MSB }, { EI_DATA, 0 },
		{ EI_VERSION, 0 }, { EI_VERSION, 2 }, { EI_OSABI, 0x61 }, { 15, 0xff },
	};
	struct img m;
	struct elf_plan p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		img_exec(&m);
		m.eh.e_ident[bad[i].at] = bad[i].v;
		assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	}
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		img_exec(&m);
		m.eh.e_ident[ignored[i].at] = ignored[i].v;
		assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	}
	assert_false(elf_plan_err_is_fatal(-ENOEXEC));
	assert_false(elf_plan_err_is_fatal(-EIO));
	assert_true(elf_plan_err_is_fatal(-EINVAL));
	assert_true(elf_plan_err_is_fatal(-ENOMEM));
}

static void test_bad_type_and_machine(void **state)
{
	static const uint16_t types[] = { ET_NONE, ET_REL, ET_CORE, 0xfe00, 0xffff };
	static const uint16_t machines[] = { 0, 3 /* 386 */, 40 /* ARM */, 62 /* X86_64 */,
					     243 /* RISCV */, 0xffff };
	struct img m;
	struct elf_plan p;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		img_exec(&m);
		m.eh.e_type = types[i];
		assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	}
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		img_exec(&m);
		m.eh.e_machine = machines[i];
		assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	}
}

static void test_bad_phdr_table(void **state)
{
	struct img m;
	struct elf_plan p;

	img_exec(&m);
	m.eh.e_phentsize = 0;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	m.eh.e_phentsize = 32;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	m.eh.e_phentsize = 64;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);

	img_exec(&m);
	m.eh.e_phnum = 0;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	m.eh.e_phnum = 0xffff;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);

	/* 73 headers fill at most a page (4088 bytes); 74 do not. */
	img_exec(&m);
	while (m.n < 73)
		img_add(&m, PT_NOTE, PF_R, 0, 0, 0, 0);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.phnum, 73);
	img_add(&m, PT_NOTE, PF_R, 0, 0, 0, 0);
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);

	/* The table past the end, straddling it, or with an offset that overflows. */
	static const uint64_t offs[] = { IMG_SIZE, IMG_SIZE - 56 * 3 + 1, IMG_SIZE + 1,
					 UINT64_MAX, UINT64_MAX - 55, 1ull << 63 };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		img_exec(&m);
		m.eh.e_phoff = offs[i];
		assert_int_equal(img_plan(&m, LIMIT, &p), -ENOEXEC);
	}
	/* At the very end is fine (the text segment still covers it). */
	img_exec(&m);
	m.eh.e_phoff = IMG_SIZE - 56 * 3;
	{
		unsigned char buf[IMG_SIZE];

		img_bytes(&m, buf);
		assert_int_equal(plan_exact(buf, m.size, LIMIT, &p), 0);
	}
}

static void test_interp(void **state)
{
	struct img m;
	struct elf_plan p;

	img_exec(&m);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x403000, 27, 27);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_non_null(p.interp);
	assert_string_equal(p.interp, "/lib/ld-linux-aarch64.so.1");
	assert_int_equal(p.interp_len, 26);

	/* Only the first PT_INTERP counts: a broken second one is never read. */
	img_add(&m, PT_INTERP, PF_R, 0x3001, 0x403001, 1, 1);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);

	static const struct {
		uint64_t off, filesz;
		int err;
	} bad[] = {
		{ 0x3000, 0, -ENOEXEC },     { 0x3000, 1, -ENOEXEC },
		{ 0x3000, 4097, -ENOEXEC },  { 0x3000, UINT64_MAX, -ENOEXEC },
		{ 0x3000, 26, -ENOEXEC },    /* last byte not NUL */
		{ IMG_SIZE - 10, 27, -EIO }, { IMG_SIZE, 2, -EIO },
		{ UINT64_MAX - 5, 27, -EIO },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		img_exec(&m);
		img_add(&m, PT_INTERP, PF_R, bad[i].off, 0, bad[i].filesz, bad[i].filesz);
		assert_int_equal(img_plan(&m, LIMIT, &p), bad[i].err);
	}
	/* PATH_MAX bytes are allowed; only the last must be NUL (the path is then the C string
	 * at p_offset: here empty, since the image is zero there). */
	img_exec(&m);
	img_add(&m, PT_INTERP, PF_R, 0x3000 - 4096 + 27, 0, 4096, 4096);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_non_null(p.interp);
	assert_int_equal(p.interp_len, 0);
	/* A segment-sized path ending in NUL: the C string up to the first NUL. */
	img_exec(&m);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0, 100, 100);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.interp_len, 26);
}

static void test_bad_loads(void **state)
{
	static const struct {
		uint64_t off, vaddr, filesz, memsz;
		int err;
	} bad[] = {
		{ 0x2100, 0x412100, 0x800, 0x7ff, -EINVAL },		/* filesz > memsz */
		{ 0x2100, LIMIT + 0x100, 0x800, 0x800, -EINVAL },	/* vaddr >= TASK_SIZE */
		{ 0x2100, UINT64_MAX - 0xeff, 0x800, 0x800, -EINVAL },	/* near 2^64 */
		{ 0x2100, LIMIT - 0xf00, 0x800, 0x1000, -EINVAL },	/* end past TASK_SIZE */
		{ 0x2100, 0x412100, 0x800, LIMIT, -EINVAL },		/* memsz > TASK_SIZE */
		{ 0x2100, 0x412100, 0x800, UINT64_MAX, -EINVAL },	/* memsz wraps */
		{ 0x2100, 0x412200, 0x800, 0x800, -EINVAL },		/* offset % page != vaddr % page */
		{ UINT64_MAX - 0xeff, 0x412100, 0x1000, 0x1000, -EINVAL }, /* p_offset overflow */
		{ 0x3100, 0x412100, 0x1000, 0x1000, -EINVAL },		/* file bytes past EOF */
		{ IMG_SIZE + 0x100, 0x412100, 0x10, 0x10, -EINVAL },	/* offset past EOF */
		{ 0x2100, 0x401100, 0x800, 0x800, -EINVAL },		/* overlaps the text */
		{ 0x2100, 0x3ff100, 0x800, 0x1000, -EINVAL },		/* overlaps from below */
	};
	struct img m;
	struct elf_plan p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		img_exec(&m);
		m.ph[1].p_offset = bad[i].off;
		m.ph[1].p_vaddr = bad[i].vaddr;
		m.ph[1].p_filesz = bad[i].filesz;
		m.ph[1].p_memsz = bad[i].memsz;
		assert_int_equal(img_plan(&m, LIMIT, &p), bad[i].err);
	}

	/* Adjacent pages are fine; a shared page is not. */
	img_exec(&m);
	m.ph[1].p_offset = 0x2000;
	m.ph[1].p_vaddr = 0x402000;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	m.ph[0].p_filesz = m.ph[0].p_memsz = 0x2001;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);

	/* p_filesz == 0: the offset is never used, so its congruence does not matter. */
	img_exec(&m);
	m.ph[1].p_offset = 0x123;
	m.ph[1].p_filesz = 0;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);

	/* The entry point at or past TASK_SIZE. */
	img_exec(&m);
	m.eh.e_entry = LIMIT;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);
	m.eh.e_entry = UINT64_MAX;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);
}

static void test_no_loads(void **state)
{
	struct img m;
	struct elf_plan p;

	img_init(&m, ET_EXEC);
	img_add(&m, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
	m.eh.e_entry = 0x400000;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);

	/* Only empty PT_LOADs: total_mapping_size() is 0. */
	img_add(&m, PT_LOAD, PF_R, 0, 0x400000, 0, 0);
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);
	m.eh.e_type = ET_DYN;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);
}

static void test_huge_segments(void **state)
{
	struct img m;
	struct elf_plan p;

	/* A 1 TiB .bss is a valid plan (the mm's allocation decides, as vm_brk does). */
	img_exec(&m);
	m.ph[1].p_memsz = 1ull << 40;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.brk_start, (0x412100 + (1ull << 40) + PG - 1) & ~(PG - 1));

	/* Ending exactly at TASK_SIZE is allowed; one byte more is not. */
	img_exec(&m);
	m.ph[1].p_vaddr = LIMIT - 0x1000 + 0x100;
	m.ph[1].p_memsz = 0xf00;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.brk_start, LIMIT);
	m.ph[1].p_memsz = 0xf01;
	assert_int_equal(img_plan(&m, LIMIT, &p), -EINVAL);

	/* A PIE (PT_INTERP) spanning more than the third above ELF_ET_DYN_BASE: no room. */
	img_exec(&m);
	m.eh.e_type = ET_DYN;
	m.ph[0].p_vaddr = 0;
	m.ph[1].p_vaddr = 0x12100;
	m.eh.e_entry = 0x100;
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x3000, 27, 27);
	m.ph[1].p_memsz = 0x600000000000ull;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOMEM);
	m.ph[1].p_memsz = 0x500000000000ull;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);

	/* A static-pie goes top-down under mmap_base: that fits; more than mmap_base does not. */
	m.n--;
	m.eh.e_phnum--;
	m.ph[1].p_memsz = 0x600000000000ull;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_true(p.image_end <= LIMIT - (128ull << 20));
	assert_true(p.image_end > LIMIT - (128ull << 20) - 0x10000); /* 64 KiB p_align */
	m.ph[1].p_memsz = LIMIT - (128ull << 20) - 0x12100;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.image_start, 0);
	m.ph[1].p_memsz += 1;
	assert_int_equal(img_plan(&m, LIMIT, &p), -ENOMEM);
	m.ph[1].p_memsz = 0x3000;
	assert_int_equal(img_plan(&m, 128ull << 20, &p), -ENOMEM); /* no room above the gap */
	assert_int_equal(img_plan(&m, 256ull << 20, &p), 0);
	assert_int_equal(p.image_end, (128ull << 20) - 0xa000); /* 0x16000 bytes at 0x7fe0000 */
}

static void test_dyn_bias(void **state)
{
	struct img m;
	struct elf_plan p;
	struct elf_segment s;
	unsigned char buf[IMG_SIZE];

	/* A PIE (with PT_INTERP) at ELF_ET_DYN_BASE, aligned down to p_align 64 KiB. */
	img_init(&m, ET_DYN);
	img_add(&m, PT_LOAD, PF_R | PF_X, 0, 0, 0x2000, 0x2000);
	img_add(&m, PT_LOAD, PF_R | PF_W, 0x2100, 0x12100, 0x800, 0x3000);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x3000, 27, 27);
	m.eh.e_entry = 0x180;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_non_null(p.interp);
	assert_int_equal(p.load_bias, 0xaaaaaaaa0000ull);
	assert_int_equal(p.entry, 0xaaaaaaaa0180ull);
	assert_int_equal(p.phdr_addr, 0xaaaaaaaa0040ull);
	assert_int_equal(p.brk_start, 0xaaaaaaab6000ull);
	assert_int_equal(elf_plan_segment(&p, 1, &s), 0);
	assert_int_equal(s.start, 0xaaaaaaab2000ull);
	assert_int_equal(s.copy_to, 0xaaaaaaab2100ull);
	img_add(&m, PT_PHDR, PF_R, 64, 64, 56 * 3, 56 * 3);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_true(p.has_pt_phdr);
	assert_int_equal(p.pt_phdr_vaddr, 0xaaaaaaaa0040ull);
	assert_int_equal(p.pt_phdr_vaddr, p.phdr_addr);
	m.n--;
	m.eh.e_phnum--;

	/* p_align 2 MiB: the base goes down to 2 MiB; non-powers of two are ignored. */
	m.ph[1].p_align = 0x200000;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.load_bias, 0xaaaaaaa00000ull);
	m.ph[1].p_align = 0x300000;
	m.ph[0].p_align = 0x1000;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.load_bias, 0xaaaaaaaaa000ull);
	m.ph[0].p_align = m.ph[1].p_align = 0; /* still at least a page */
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.load_bias, 0xaaaaaaaaa000ull);

	/* The same without PT_INTERP (static-pie): top-down under 2^48 - 128 MiB, brk moved. */
	m.n = 2;
	m.eh.e_phnum = 2;
	m.ph[0].p_align = m.ph[1].p_align = 0x10000;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_null(p.interp);
	assert_int_equal(p.image_start, 0xfffff7fe0000ull); /* 0xfffff8000000 - 0x16000, aligned */
	assert_int_equal(p.load_bias, 0xfffff7fe0000ull);
	assert_int_equal(p.image_end, 0xfffff7ff6000ull);
	assert_int_equal(p.brk_start, 0xaaaaaaaab000ull);
	/* elf_plan_at places it where asked and keeps brk after the image. */
	assert_int_equal(elf_plan_at(img_bytes(&m, buf), IMG_SIZE, LIMIT, 0x5500000000ull, &p), 0);
	assert_int_equal(p.load_bias, 0x5500000000ull);
	assert_int_equal(p.brk_start, 0x5500016000ull);

	/* A first PT_LOAD away from 0: the bias subtracts its page (here it wraps). */
	img_init(&m, ET_DYN);
	img_add(&m, PT_LOAD, PF_R | PF_X, 0, 0xc00000000000ull, 0x2000, 0x2000);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x3000, 27, 27);
	m.eh.e_entry = 0xc00000000100ull;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_int_equal(p.image_start, 0xaaaaaaaa0000ull);
	assert_int_equal(p.entry, 0xaaaaaaaa0100ull);
	assert_int_equal(p.load_bias, 0xaaaaaaaa0000ull - 0xc00000000000ull);

	/* A later PT_LOAD below the first would land below address 0: no room. */
	img_add(&m, PT_LOAD, PF_R | PF_W, 0x2000, 0x1000, 0x10, 0x10);
	assert_int_equal(elf_plan_at(img_bytes(&m, buf), IMG_SIZE, LIMIT, 0x10000, &p), -ENOMEM);

	/* elf_plan_at: a chosen base, e.g. for an interpreter. */
	img_init(&m, ET_DYN);
	img_add(&m, PT_LOAD, PF_R | PF_X, 0, 0, 0x2000, 0x2000);
	m.eh.e_entry = 0x10;
	assert_int_equal(elf_plan_at(img_bytes(&m, buf), IMG_SIZE, LIMIT, 0xffff80001234ull, &p),
			 0);
	assert_int_equal(p.load_bias, 0xffff80000000ull);
	/* ET_EXEC ignores it. */
	img_exec(&m);
	assert_int_equal(elf_plan_at(img_bytes(&m, buf), IMG_SIZE, LIMIT, 0x7000000000ull, &p), 0);
	assert_int_equal(p.load_bias, 0);
}

static void test_phdr_addr(void **state)
{
	struct img m;
	struct elf_plan p;
	unsigned char buf[IMG_SIZE];

	/* Headers in the data segment's file bytes. */
	img_exec(&m);
	m.eh.e_phoff = 0x2200;
	assert_int_equal(plan_exact(img_bytes(&m, buf), IMG_SIZE, LIMIT, &p), 0);
	assert_int_equal(p.phdr_addr, 0x412200);

	/* Headers in no segment: Linux reports 0 + load_bias; PT_PHDR does not change that. */
	img_exec(&m);
	m.eh.e_phoff = 0x3800;
	img_add(&m, PT_PHDR, PF_R, 0x3800, 0x403800, 56 * 4, 56 * 4);
	assert_int_equal(plan_exact(img_bytes(&m, buf), IMG_SIZE, LIMIT, &p), 0);
	assert_int_equal(p.phdr_addr, 0);
	assert_true(p.has_pt_phdr);
	assert_int_equal(p.pt_phdr_vaddr, 0x403800);
}

static void test_gnu_stack_and_prot(void **state)
{
	struct img m;
	struct elf_plan p;
	struct elf_segment s;

	img_exec(&m);
	m.n = 2;
	m.eh.e_phnum = 2;
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_false(p.has_gnu_stack);

	img_add(&m, PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_true(p.exec_stack);
	img_add(&m, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0); /* the last one wins */
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);
	assert_false(p.exec_stack);

	/* PT_TLS, PT_NOTE, unknown types are ignored. */
	img_add(&m, PT_TLS, PF_R, 0x2100, 0x412100, 0x10, 0x60);
	img_add(&m, 0x6fffffff, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0);
	assert_int_equal(img_plan(&m, LIMIT, &p), 0);

	static const struct {
		uint32_t flags;
		int prot;
	} map[] = {
		{ 0, 0 },
		{ PF_R, PROT_READ },
		{ PF_W, PROT_WRITE },
		{ PF_X, PROT_EXEC },
		{ PF_R | PF_W | PF_X, PROT_READ | PROT_WRITE | PROT_EXEC },
		{ 0xfffffff8, 0 },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		img_exec(&m);
		m.ph[1].p_flags = map[i].flags;
		assert_int_equal(img_plan(&m, LIMIT, &p), 0);
		assert_int_equal(elf_plan_segment(&p, 1, &s), 0);
		assert_int_equal(s.prot, map[i].prot);
		assert_int_equal(s.p_flags, map[i].flags);
	}
}

static void test_bad_user_limit(void **state)
{
	struct img m;
	struct elf_plan p;

	img_exec(&m);
	assert_int_equal(img_plan(&m, 0, &p), -EINVAL);
	assert_int_equal(img_plan(&m, LIMIT + 1, &p), -EINVAL);
	assert_int_equal(img_plan(&m, UINT64_MAX & ~(PG - 1), &p), -EINVAL);
	/* A smaller address space: fits at 2^39, not when TASK_SIZE cuts the data segment. */
	assert_int_equal(img_plan(&m, 1ull << 39, &p), 0);
	assert_int_equal(img_plan(&m, 0x410000, &p), -EINVAL);
	assert_int_equal(elf_plan(NULL, 100, LIMIT, &p), -EINVAL);
}

/* Random corruption of the header and program headers: any errno but no crash, and every
 * successful plan keeps its promises. */
static void test_random_corruption(void **state)
{
	unsigned int seed = 777;
	unsigned char base[IMG_SIZE];
	struct img m;

	img_exec(&m);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x403000, 27, 27);
	img_add(&m, PT_TLS, PF_R, 0x2100, 0x412100, 0x10, 0x60);
	img_bytes(&m, base);

	for (int iter = 0; iter < 20000; iter++) {
		unsigned char buf[IMG_SIZE];
		struct elf_plan p;
		int r;

		memcpy(buf, base, IMG_SIZE);
		for (int k = 0; k < 1 + iter % 6; k++) {
			seed = seed * 1103515245u + 12345u;
			unsigned int at = (seed >> 8) % (64 + 56 * 5);
			seed = seed * 1103515245u + 12345u;
			buf[at] = (iter & 1) ? (unsigned char)(seed >> 16) : buf[at] ^ (1u << (seed >> 29));
		}
		r = plan_exact(buf, IMG_SIZE, LIMIT, &p);
		assert_true(r == 0 || r == -ENOEXEC || r == -EINVAL || r == -EIO || r == -ENOMEM);
		if (r)
			continue;
		assert_true(p.entry < LIMIT);
		assert_true(p.image_start < p.image_end && p.image_end <= LIMIT);
		assert_true(p.brk_start <= p.image_end);
		for (unsigned int i = 0; i < p.nr_segs; i++) {
			struct elf_segment s;

			assert_int_equal(elf_plan_segment(&p, i, &s), 0);
			assert_true(s.start >= p.image_start && s.end <= p.image_end);
			assert_true(s.file_len <= s.mem_len);
			assert_true(s.file_offset + s.file_len <= IMG_SIZE);
			assert_true(s.copy_to >= s.start && s.copy_to + s.mem_len <= s.end);
		}
		if (p.interp)
			assert_true(p.interp >= (const char *)held &&
				    p.interp + p.interp_len < (const char *)held + IMG_SIZE);
	}
}

/*
 * Recorded on Debian 12's Linux 6.1 arm64 kernel with randomize_va_space=0 from
 * /proc/self/stat and getauxval of a static and a static-pie build of the same program:
 *   ET_EXEC: LOADs 0x400000 (filesz 0x7d4c6, R E) and 0x48c810 (0x5818 / 0xad28, RW),
 *     entry 0x400580 -> AT_PHDR 0x400040, end_code 0x47d4c6, start_data 0x48c810,
 *     end_data 0x492028, start_brk 0x498000
 *   ET_DYN:  LOADs 0 (0x8915e, R E) and 0x9c670 (0x59b8 / 0xae98, RW), entry 0x8a80 ->
 *     AT_PHDR 0xfffff7f50040, AT_ENTRY 0xfffff7f58a80, start_code 0xfffff7f50000,
 *     end_code 0xfffff7fd915e, start_data 0xfffff7fec670, end_data 0xfffff7ff2028,
 *     start_brk 0xaaaaaaaab000
 */
/*
 * exec reads only a prefix: elf_plan_head_need grows it header, program headers, PT_INTERP,
 * and elf_plan_head on that prefix plans as elf_plan on the whole file; a shorter prefix is
 * -EIO, never an overread (the prefix sits in an exact-size heap block).
 */
static void test_head_prefix(void **state)
{
	struct img m;
	struct elf_plan whole, part;
	unsigned char buf[IMG_SIZE];

	(void)state;
	img_exec(&m);
	img_add(&m, PT_INTERP, PF_R, 0x3000, 0x403000, 27, 27);
	img_bytes(&m, buf);
	assert_int_equal(elf_plan(buf, m.size, LIMIT, &whole), 0);
	uint64_t phend = 64 + (uint64_t)m.n * sizeof(Elf64_Phdr);

	assert_int_equal(elf_plan_head_need(buf, 0, m.size), 64);
	assert_int_equal(elf_plan_head_need(buf, 64, m.size), phend);
	assert_int_equal(elf_plan_head_need(buf, phend, m.size), 0x3000 + 27);
	assert_int_equal(elf_plan_head_need(buf, 0x3000 + 27, m.size), 0x3000 + 27);
	assert_int_equal(elf_plan_head_need(buf, 10, 10), 10); /* short file: all of it */
	const uint64_t lens[] = { 64, phend - 1, phend, 0x3000 + 26, 0x3000 + 27, m.size };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *head = malloc(lens[i]);

		assert_non_null(head);
		memcpy(head, buf, lens[i]);
		int r = elf_plan_head(head, lens[i], m.size, LIMIT, &part);

		if (lens[i] < 0x3000 + 27) {
			assert_int_equal(r, -EIO);
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(part.entry, whole.entry);
			assert_int_equal(part.nr_segs, whole.nr_segs);
			assert_int_equal(part.brk_start, whole.brk_start);
			assert_string_equal(part.interp, whole.interp);
		}
		free(head);
	}
	/* a prefix longer than the file, or shorter than its header: a caller bug */
	assert_int_equal(elf_plan_head(buf, 100, 50, LIMIT, &part), -EINVAL);
	assert_int_equal(elf_plan_head(buf, 10, m.size, LIMIT, &part), -EINVAL);
}

static void test_matches_linux_6_1(void **state)
{
	struct img m;
	struct elf_plan p;

	img_init(&m, ET_EXEC);
	m.size = 0x100000; /* file offsets up to 0x8c810 + 0x5818 */
	img_add(&m, PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x7d4c6, 0x7d4c6);
	img_add(&m, PT_LOAD, PF_R | PF_W, 0x8c810, 0x48c810, 0x5818, 0xad28);
	m.eh.e_entry = 0x400580;
	{
		unsigned char *big = calloc(1, m.size);

		img_bytes(&m, big);
		assert_int_equal(plan_exact(big, m.size, LIMIT, &p), 0);
		assert_int_equal(p.phdr_addr, 0x400040);
		assert_int_equal(p.entry, 0x400580);
		assert_int_equal(p.start_code, 0x400000);
		assert_int_equal(p.end_code, 0x47d4c6);
		assert_int_equal(p.start_data, 0x48c810);
		assert_int_equal(p.end_data, 0x492028);
		assert_int_equal(p.brk_start, 0x498000);

		img_init(&m, ET_DYN);
		m.size = 0x100000;
		img_add(&m, PT_LOAD, PF_R | PF_X, 0, 0, 0x8915e, 0x8915e);
		img_add(&m, PT_LOAD, PF_R | PF_W, 0x8c670, 0x9c670, 0x59b8, 0xae98);
		m.eh.e_entry = 0x8a80;
		img_bytes(&m, big);
		assert_int_equal(plan_exact(big, m.size, LIMIT, &p), 0);
		assert_int_equal(p.phdr_addr, 0xfffff7f50040ull);
		assert_int_equal(p.entry, 0xfffff7f58a80ull);
		assert_int_equal(p.start_code, 0xfffff7f50000ull);
		assert_int_equal(p.end_code, 0xfffff7fd915eull);
		assert_int_equal(p.start_data, 0xfffff7fec670ull);
		assert_int_equal(p.end_data, 0xfffff7ff2028ull);
		assert_int_equal(p.brk_start, 0xaaaaaaaab000ull);
		free(big);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_static),
		cmocka_unit_test(test_fixture_static_pie),
		cmocka_unit_test(test_fixture_truncation),
		cmocka_unit_test(test_fixture_unaligned),
		cmocka_unit_test(test_synthetic_exec),
		cmocka_unit_test(test_bad_ident),
		cmocka_unit_test(test_bad_type_and_machine),
		cmocka_unit_test(test_bad_phdr_table),
		cmocka_unit_test(test_interp),
		cmocka_unit_test(test_bad_loads),
		cmocka_unit_test(test_no_loads),
		cmocka_unit_test(test_huge_segments),
		cmocka_unit_test(test_dyn_bias),
		cmocka_unit_test(test_phdr_addr),
		cmocka_unit_test(test_gnu_stack_and_prot),
		cmocka_unit_test(test_bad_user_limit),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_matches_linux_6_1),
		cmocka_unit_test(test_head_prefix),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	free(held);
	return failed;
}
