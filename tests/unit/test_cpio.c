/*
 * test_cpio.c - host tests for fs/cpio.c: archives written by GNU cpio (newc and crc, built by
 * tests/unit/module.mk), hand-built hostile archives, every truncation, random corruption,
 * and name normalisation.  Each archive under test sits in a heap block of exactly its size
 * so AddressSanitizer reports any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <kern/errno.h>
#include <fs/cpio.h>

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "build/fixtures"
#endif

struct blob {
	unsigned char *p;
	size_t len;
};

static struct blob load_fixture(const char *name)
{
	char path[512];
	struct blob b = { 0 };
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("fixture %s missing (built by tests/unit/module.mk)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b.len = (size_t)n;
	b.p = malloc(b.len ? b.len : 1);
	assert_non_null(b.p);
	assert_int_equal(fread(b.p, 1, b.len, f), b.len);
	fclose(f);
	return b;
}

/* An exact-size heap copy of the first len bytes, so ASan catches overreads. */
static unsigned char *exact_copy(const void *src, size_t len)
{
	unsigned char *p = malloc(len ? len : 1);

	assert_non_null(p);
	memcpy(p, src, len);
	return p;
}

/* ---- hand-built archives ---- */

struct ent {
	const char *magic; /* NULL: "070701" */
	const char *name;
	uint32_t namesize; /* 0: strlen(name) + 1 */
	uint32_t mode;
	const void *data;
	uint32_t size;
	uint32_t check;
	uint32_t ino;
};

static size_t put_entry(unsigned char *buf, size_t pos, const struct ent *e)
{
	uint32_t namesize = e->namesize ? e->namesize : (uint32_t)strlen(e->name) + 1;
	char hdr[111];

	snprintf(hdr, sizeof(hdr), "%s%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 e->magic ? e->magic : "070701", e->ino, e->mode, 1000u, 100u, 1u, 12345u, e->size,
		 8u, 1u, 0u, 0u, namesize, e->check);
	memcpy(buf + pos, hdr, 110);
	pos += 110;
	memset(buf + pos, 0, namesize + 4);
	memcpy(buf + pos, e->name, strnlen(e->name, namesize));
	pos += namesize;
	while (pos & 3)
		buf[pos++] = 0;
	if (e->size)
		memcpy(buf + pos, e->data, e->size);
	pos += e->size;
	while (pos & 3)
		buf[pos++] = 0;
	return pos;
}

static size_t put_trailer(unsigned char *buf, size_t pos)
{
	struct ent t = { .name = "TRAILER!!!" };

	return put_entry(buf, pos, &t);
}

/*
 * Run cpio_next over an exact-size copy of buf[0..len).  The copy lives until the next call
 * (the entry points into it).
 */
static unsigned char *held_copy;

static int next_exact(const void *buf, size_t len, size_t *off, struct cpio_entry *e)
{
	free(held_copy);
	held_copy = exact_copy(buf, len);
	return cpio_next(held_copy, len, off, e);
}

/* ---- GNU cpio fixtures ---- */

static const char *const tree_names[] = { ".", "big", "bin", "bin/link", "empty", "etc",
					  "etc/motd" };

static void check_tree(struct blob b)
{
	struct cpio_entry e;
	size_t off = 0;
	unsigned int n = 0;
	int r;

	while ((r = cpio_next(b.p, b.len, &off, &e)) == 1) {
		assert_true(n < sizeof(tree_names) / sizeof(tree_names[0]));
		assert_string_equal(e.name, tree_names[n]);
		assert_int_equal(e.name_len, strlen(tree_names[n]));
		assert_int_equal(off & 3, 0);
		if (!strcmp(e.name, "etc/motd")) {
			assert_true(S_ISREG(e.mode));
			assert_int_equal(e.data_size, 6);
			assert_memory_equal(e.data, "hello\n", 6);
		} else if (!strcmp(e.name, "bin/link")) {
			assert_true(S_ISLNK(e.mode));
			assert_int_equal(e.data_size, strlen("../etc/motd"));
			assert_memory_equal(e.data, "../etc/motd", e.data_size);
		} else if (!strcmp(e.name, "big")) {
			const unsigned char *d = e.data;

			assert_int_equal(e.data_size, 5000);
			for (size_t i = 0; i < 5000; i++)
				assert_int_equal(d[i], 97 + i % 26);
		} else if (!strcmp(e.name, "empty")) {
			assert_true(S_ISREG(e.mode));
			assert_int_equal(e.data_size, 0);
		} else {
			assert_true(S_ISDIR(e.mode));
			assert_true(e.nlink >= 2);
		}
		n++;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 7);
	assert_string_equal(e.name, "TRAILER!!!");
	assert_true(off <= b.len);
}

static void test_fixture_newc(void **state)
{
	struct blob b = load_fixture("sample-newc.cpio");

	assert_memory_equal(b.p, "070701", 6);
	check_tree(b);
	free(b.p);
}

static void test_fixture_crc(void **state)
{
	struct blob b = load_fixture("sample-crc.cpio");
	struct cpio_entry e;
	size_t off = 0;
	int r;

	assert_memory_equal(b.p, "070702", 6);
	check_tree(b);

	/* Flip a byte of "big": its checksum no longer matches. */
	while ((r = cpio_next(b.p, b.len, &off, &e)) == 1 && strcmp(e.name, "big"))
		;
	assert_int_equal(r, 1);
	((unsigned char *)e.data)[100] ^= 1;
	off = e.header_offset;
	assert_int_equal(cpio_next(b.p, b.len, &off, &e), -EINVAL);
	assert_int_equal(off, e.header_offset);
	free(b.p);
}

/* Every prefix of a real archive: parsing stops with -EINVAL, never reads out of bounds. */
static void test_fixture_every_truncation(void **state)
{
	struct blob b = load_fixture("sample-newc.cpio");
	struct cpio_entry e;
	size_t full_end = 0, off = 0;
	int r;

	while ((r = cpio_next(b.p, b.len, &off, &e)) == 1)
		;
	assert_int_equal(r, 0);
	full_end = e.header_offset + 110 + 11; /* the trailer's name ends here */

	for (size_t len = 0; len <= b.len; len++) {
		unsigned char *copy = exact_copy(b.p, len);

		off = 0;
		while ((r = cpio_next(copy, len, &off, &e)) == 1)
			;
		if (len < full_end)
			assert_int_equal(r, -EINVAL);
		else
			assert_int_equal(r, 0);
		free(copy);
	}
	free(b.p);
}

/* Random corruption of a real archive: any outcome but a crash or an out-of-bounds read. */
static void test_fixture_random_corruption(void **state)
{
	struct blob b = load_fixture("sample-crc.cpio");
	unsigned int seed = 12345;

	for (int iter = 0; iter < 3000; iter++) {
		unsigned char *copy = exact_copy(b.p, b.len);
		size_t len = b.len, off = 0;
		struct cpio_entry e;
		int r, steps = 0;

		for (int k = 0; k < 1 + iter % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % 1400; /* the headers live in the first ~1.3 KiB */
			seed = seed * 1103515245u + 12345u;
			copy[at % len] = (unsigned char)(seed >> 16);
		}
		while ((r = cpio_next(copy, len, &off, &e)) == 1) {
			assert_true(off <= len);
			assert_true((const unsigned char *)e.data + e.data_size <= copy + len);
			assert_true(++steps < 100);
		}
		assert_true(r == 0 || r == -EINVAL);
		free(copy);
	}
	free(b.p);
}

/* ---- hand-built hostile archives ---- */

static void test_basic_and_trailer(void **state)
{
	unsigned char buf[512];
	struct ent a = { .name = "./init", .mode = S_IFREG | 0755, .data = "abc", .size = 3,
			 .ino = 7 };
	struct cpio_entry e;
	size_t pos = put_entry(buf, 0, &a), off = 0;

	pos = put_trailer(buf, pos);
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	assert_string_equal(e.name, "./init");
	assert_int_equal(e.name_len, 6);
	assert_int_equal(e.mode, S_IFREG | 0755);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(e.gid, 100);
	assert_int_equal(e.nlink, 1);
	assert_int_equal(e.mtime, 12345);
	assert_int_equal(e.ino, 7);
	assert_int_equal(e.dev_major, 8);
	assert_int_equal(e.dev_minor, 1);
	assert_int_equal(e.data_size, 3);
	assert_int_equal(off, 120 + 4); /* 110 + 7 -> 120, 3 -> 4 */
	assert_int_equal(next_exact(buf, pos, &off, &e), 0);
	assert_int_equal(off, pos);
}

static void test_trailer_without_padding(void **state)
{
	unsigned char buf[1024];
	size_t pos = put_trailer(buf, 0), off = 0;
	struct cpio_entry e;

	assert_int_equal(pos, 124);
	/* 110 + 11 = 121 bytes: the padding after the trailer's name may be missing. */
	for (size_t len = 121; len <= 124; len++) {
		off = 0;
		assert_int_equal(next_exact(buf, len, &off, &e), 0);
		assert_int_equal(off, len);
	}
	off = 0;
	assert_int_equal(next_exact(buf, 120, &off, &e), -EINVAL);
}

static void test_bad_magic(void **state)
{
	static const char *const magics[] = { "070707", "070703", "070700", "170701", "07070 ",
					      "\0\0\0\0\0\0" };
	unsigned char buf[1024];

	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		size_t pos = put_trailer(buf, 0), off = 0;
		struct cpio_entry e;

		memcpy(buf, magics[i], 6);
		assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
		assert_int_equal(off, 0);
	}
}

static void test_non_hex_in_every_field(void **state)
{
	static const char bad[] = { 'g', 'G', ' ', 'x', '-', '\0', 0x7f, (char)0xff };
	unsigned char buf[1024];
	struct ent a = { .name = "f", .mode = S_IFREG | 0644, .data = "zz", .size = 2 };

	for (unsigned int field = 0; field < 13; field++) {
		for (unsigned int digit = 0; digit < 8; digit += 7) {
			for (size_t k = 0; k < sizeof(bad); k++) {
				size_t pos = put_entry(buf, 0, &a), off = 0;
				struct cpio_entry e;

				pos = put_trailer(buf, pos);
				buf[6 + field * 8 + digit] = (unsigned char)bad[k];
				assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
			}
		}
	}
}

static void test_lowercase_and_uppercase_hex(void **state)
{
	unsigned char buf[1024];
	struct ent a = { .name = "f", .mode = 0x81ed, .ino = 0xabcdef };
	struct cpio_entry e;
	size_t pos = put_entry(buf, 0, &a), off = 0;

	memcpy(buf + 6, "00aBcDeF", 8);
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	assert_int_equal(e.ino, 0xabcdef);
	assert_int_equal(e.mode, 0x81ed);
}

static void test_bad_name(void **state)
{
	unsigned char buf[1024];
	struct cpio_entry e;
	size_t pos, off;

	/* namesize 0 */
	struct ent a = { .name = "x", .namesize = 0 };
	pos = put_entry(buf, 0, &a);
	memcpy(buf + 6 + 11 * 8, "00000000", 8);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);

	/* name not NUL-terminated within namesize */
	struct ent b = { .name = "abcd", .namesize = 4 };
	pos = put_entry(buf, 0, &b);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);

	/* namesize running past the buffer, and huge */
	struct ent c = { .name = "abc", .namesize = 200 };
	pos = put_entry(buf, 0, &c);
	off = 0;
	assert_int_equal(next_exact(buf, 120, &off, &e), -EINVAL);
	memcpy(buf + 6 + 11 * 8, "FFFFFFFF", 8);
	off = 0;
	assert_int_equal(next_exact(buf, 120, &off, &e), -EINVAL);

	/* an embedded NUL ends the name, as for Linux's C strings */
	struct ent d = { .name = "ab", .namesize = 6 };
	pos = put_entry(buf, 0, &d);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	assert_int_equal(e.name_len, 2);
	assert_int_equal(off, 116);
}

static void test_bad_data_size(void **state)
{
	unsigned char buf[1024];
	struct ent a = { .name = "f", .mode = S_IFREG | 0644, .data = "0123456789", .size = 10 };
	struct cpio_entry e;
	size_t pos = put_entry(buf, 0, &a), off;

	/* Body past the end: every cut inside the body or its padding. */
	for (size_t len = 112; len < pos; len++) {
		off = 0;
		assert_int_equal(next_exact(buf, len, &off, &e), -EINVAL);
	}
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	assert_int_equal(off, pos);

	/* Sizes near 2^32 must not wrap. */
	static const char *const sizes[] = { "FFFFFFFF", "FFFFFFFC", "80000000", "0000FFFF" };
	for (size_t i = 0; i < 4; i++) {
		memcpy(buf + 6 + 6 * 8, sizes[i], 8);
		off = 0;
		assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	}
}

static void test_header_truncation(void **state)
{
	unsigned char buf[1024];
	struct ent a = { .name = "f" };
	size_t pos = put_entry(buf, 0, &a);

	for (size_t len = 0; len < pos; len++) {
		size_t off = 0;
		struct cpio_entry e;

		assert_int_equal(next_exact(buf, len, &off, &e), -EINVAL);
		assert_int_equal(off, 0);
	}
}

static void test_bad_offsets(void **state)
{
	unsigned char buf[1024];
	struct ent a = { .name = "f" };
	size_t pos = put_entry(buf, 0, &a), off;
	struct cpio_entry e;

	pos = put_trailer(buf, pos);
	off = 2;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	off = pos;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	off = pos + 4;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	off = SIZE_MAX - 3;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	off = 0;
	assert_int_equal(cpio_next(NULL, 0, &off, &e), -EINVAL);

	/* A well-formed header at an offset that is not a multiple of 4: broken padding. */
	memmove(buf + 2, buf, pos);
	off = 2;
	assert_int_equal(next_exact(buf, pos + 2, &off, &e), -EINVAL);
	assert_int_equal(off, 2);
}

static void test_checksum(void **state)
{
	unsigned char buf[1024];
	struct cpio_entry e;
	size_t pos, off;
	/* 'a' + 'b' + 'c' = 294 */
	struct ent good = { .magic = "070702", .name = "f", .mode = S_IFREG | 0644,
			    .data = "abc", .size = 3, .check = 294 };
	struct ent bad = good;
	struct ent lnk = { .magic = "070702", .name = "l", .mode = S_IFLNK | 0777,
			   .data = "abc", .size = 3, .check = 0 };
	struct ent v1 = good;

	bad.check = 295;
	v1.magic = "070701";
	v1.check = 99; /* ignored for newc */

	pos = put_entry(buf, 0, &good);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	assert_int_equal(e.check, 294);
	pos = put_entry(buf, 0, &bad);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), -EINVAL);
	pos = put_entry(buf, 0, &lnk);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
	pos = put_entry(buf, 0, &v1);
	off = 0;
	assert_int_equal(next_exact(buf, pos, &off, &e), 1);
}

static void test_concatenated_archives(void **state)
{
	unsigned char buf[1024];
	struct ent a = { .name = "a" }, b = { .name = "b" };
	struct cpio_entry e;
	size_t pos = 0, off = 0;
	unsigned char *copy;

	pos = put_entry(buf, pos, &a);
	pos = put_trailer(buf, pos);
	memset(buf + pos, 0, 64);
	pos += 64;
	pos = put_entry(buf, pos, &b);
	pos = put_trailer(buf, pos);
	memset(buf + pos, 0, 8);
	pos += 8;

	copy = exact_copy(buf, pos);
	assert_int_equal(cpio_next(copy, pos, &off, &e), 1);
	assert_string_equal(e.name, "a");
	assert_int_equal(cpio_next(copy, pos, &off, &e), 0);
	assert_int_equal(cpio_skip_padding(copy, pos, &off), 1);
	assert_int_equal(cpio_next(copy, pos, &off, &e), 1);
	assert_string_equal(e.name, "b");
	assert_int_equal(cpio_next(copy, pos, &off, &e), 0);
	assert_int_equal(cpio_skip_padding(copy, pos, &off), 0);
	assert_int_equal(off, pos);
	free(copy);

	/* A header after the NULs that is not 4-byte aligned: broken padding. */
	memmove(buf + 2, buf, 200);
	buf[0] = buf[1] = 0;
	copy = exact_copy(buf, 202);
	off = 0;
	assert_int_equal(cpio_skip_padding(copy, 202, &off), -EINVAL);
	off = 300;
	assert_int_equal(cpio_skip_padding(copy, 202, &off), -EINVAL);
	free(copy);
}

/* ---- name normalisation ---- */

static void test_name_normalize(void **state)
{
	static const struct {
		const char *in;
		const char *out; /* NULL: -EINVAL */
	} cases[] = {
		{ "./a/b", "a/b" },
		{ "a/b", "a/b" },
		{ "/a/b", "a/b" },
		{ "//a//b//", "a/b" },
		{ "./", "" },
		{ ".", "" },
		{ "", "" },
		{ "/", "" },
		{ "a/./b/.", "a/b" },
		{ "././x", "x" },
		{ ".hidden/..x/x..", ".hidden/..x/x.." },
		{ "...", "..." },
		{ "..", NULL },
		{ "../a", NULL },
		{ "a/..", NULL },
		{ "a/../b", NULL },
		{ "/../etc/passwd", NULL },
		{ "./a/../../b", NULL },
		{ "a//..//", NULL },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = cpio_name_normalize(cases[i].in, strlen(cases[i].in), out, sizeof(out));

		if (!cases[i].out) {
			assert_int_equal(r, -EINVAL);
			continue;
		}
		assert_int_equal(r, (int)strlen(cases[i].out));
		assert_string_equal(out, cases[i].out);
	}
}

static void test_name_normalize_in_place_and_limits(void **state)
{
	char buf[32] = "//./usr//./bin/./sh/";
	char small[4];

	assert_int_equal(cpio_name_normalize(buf, strlen(buf), buf, sizeof(buf)), 10);
	assert_string_equal(buf, "usr/bin/sh");

	/* A NUL within name_len ends the name. */
	assert_int_equal(cpio_name_normalize("ab\0/..", 6, small, sizeof(small)), 2);
	assert_string_equal(small, "ab");

	/* Output limits: 3 characters plus the NUL fit in 4 bytes, 4 do not. */
	assert_int_equal(cpio_name_normalize("a/b", 3, small, sizeof(small)), 3);
	assert_int_equal(cpio_name_normalize("abcd", 4, small, sizeof(small)), -ENAMETOOLONG);
	assert_int_equal(cpio_name_normalize("ab/c", 4, small, sizeof(small)), -ENAMETOOLONG);
	assert_int_equal(cpio_name_normalize("abc/", 4, small, sizeof(small)), 3);
	assert_int_equal(cpio_name_normalize("a", 1, small, 0), -EINVAL);
	assert_int_equal(cpio_name_normalize(NULL, 1, small, 4), -EINVAL);

	/* Exactly name_len bytes are read: an exact-size buffer with no NUL. */
	char *exact = malloc(5);
	memcpy(exact, "./abc", 5);
	assert_int_equal(cpio_name_normalize(exact, 5, small, sizeof(small)), 3);
	assert_string_equal(small, "abc");
	free(exact);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_newc),
		cmocka_unit_test(test_fixture_crc),
		cmocka_unit_test(test_fixture_every_truncation),
		cmocka_unit_test(test_fixture_random_corruption),
		cmocka_unit_test(test_basic_and_trailer),
		cmocka_unit_test(test_trailer_without_padding),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_non_hex_in_every_field),
		cmocka_unit_test(test_lowercase_and_uppercase_hex),
		cmocka_unit_test(test_bad_name),
		cmocka_unit_test(test_bad_data_size),
		cmocka_unit_test(test_header_truncation),
		cmocka_unit_test(test_bad_offsets),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_concatenated_archives),
		cmocka_unit_test(test_name_normalize),
		cmocka_unit_test(test_name_normalize_in_place_and_limits),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	free(held_copy);
	return failed;
}
