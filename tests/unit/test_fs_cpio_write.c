/*
 * test_fs_cpio_write.c - host tests for fs/cpio_write.c: archives written through a memory
 * sink are read back with fs/cpio.c (member by member: names, modes, sizes, bodies, 4-byte
 * alignment from the archive start), name lengths that exercise every padding case, a body
 * emitted in uneven pieces, the trailer's exact bytes, and -EFBIG for bodies past 32 bits.
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

struct sink {
	unsigned char *p;
	size_t len, cap;
	int calls;
};

static void sink_emit(const void *buf, size_t n, void *arg)
{
	struct sink *s = arg;

	assert_true(n > 0); /* the writer never emits empty pieces */
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->p = realloc(s->p, s->cap);
		assert_non_null(s->p);
	}
	memcpy(s->p + s->len, buf, n);
	s->len += n;
	s->calls++;
}

/* An exact-size heap copy, so AddressSanitizer catches a parser overread. */
static unsigned char *exact(const struct sink *s)
{
	unsigned char *p = malloc(s->len ? s->len : 1);

	assert_non_null(p);
	memcpy(p, s->p, s->len);
	return p;
}

static void put_file(struct cpio_writer *w, const char *name, uint32_t mode, const void *body,
		     size_t n)
{
	struct cpio_member m = { .name = name, .mode = mode, .nlink = 1, .size = n, .ino = 7 };

	assert_int_equal(cpio_write_header(w, &m), 0);
	cpio_write_data(w, body, n);
	cpio_write_pad(w);
}

static void test_round_trip(void **state)
{
	struct sink s = { 0 };
	struct cpio_writer w = { .emit = sink_emit, .arg = &s };
	struct cpio_member dir = { .name = "sub", .mode = S_IFDIR | 0755, .nlink = 2, .mtime = 99 };
	char big[4099];
	struct cpio_entry e;
	size_t off = 0;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 13);
	put_file(&w, "perf.data", S_IFREG | 0644, "hello", 5);
	assert_int_equal(cpio_write_header(&w, &dir), 0);
	put_file(&w, "sub/x", S_IFREG | 0600, big, sizeof(big));
	put_file(&w, "lnk", S_IFLNK | 0777, "perf.data", 9);
	put_file(&w, "empty", S_IFREG | 0644, "", 0);
	cpio_write_trailer(&w);
	assert_int_equal(w.off, s.len);
	assert_int_equal(s.len % 4, 0);

	unsigned char *a = exact(&s);

	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_string_equal(e.name, "perf.data");
	assert_int_equal(e.mode, S_IFREG | 0644);
	assert_int_equal(e.data_size, 5);
	assert_memory_equal(e.data, "hello", 5);
	assert_int_equal(e.ino, 7);
	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_string_equal(e.name, "sub");
	assert_int_equal(e.mode, S_IFDIR | 0755);
	assert_int_equal(e.nlink, 2);
	assert_int_equal(e.mtime, 99);
	assert_int_equal(e.data_size, 0);
	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_string_equal(e.name, "sub/x");
	assert_int_equal(e.data_size, sizeof(big));
	assert_memory_equal(e.data, big, sizeof(big));
	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_string_equal(e.name, "lnk");
	assert_int_equal(e.mode & S_IFMT, S_IFLNK);
	assert_memory_equal(e.data, "perf.data", 9);
	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_string_equal(e.name, "empty");
	assert_int_equal(e.data_size, 0);
	assert_int_equal(cpio_next(a, s.len, &off, &e), 0);
	assert_int_equal(off, s.len);
	free(a);
	free(s.p);
}

/* Every name length mod 4 and body length mod 4: each header starts 4-aligned. */
static void test_padding(void **state)
{
	struct sink s = { 0 };
	struct cpio_writer w = { .emit = sink_emit, .arg = &s };
	char name[32], body[16];
	struct cpio_entry e;
	size_t off = 0;
	int n = 0;

	memset(body, 'b', sizeof(body));
	for (int nl = 1; nl <= 9; nl++) {
		for (int bl = 0; bl <= 5; bl++) {
			memset(name, 'a' + bl, (size_t)nl);
			name[nl] = 0;
			put_file(&w, name, S_IFREG | 0644, body, (size_t)bl);
		}
	}
	cpio_write_trailer(&w);

	unsigned char *a = exact(&s);
	int r;

	while ((r = cpio_next(a, s.len, &off, &e)) == 1) {
		assert_int_equal(e.header_offset % 4, 0);
		assert_int_equal(e.name_len, (size_t)(n / 6 + 1));
		assert_int_equal(e.data_size, (size_t)(n % 6));
		n++;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 9 * 6);
	assert_int_equal(off, s.len);
	free(a);
	free(s.p);
}

/* A body emitted in uneven pieces is one member; the offset keeps counting. */
static void test_body_in_pieces(void **state)
{
	struct sink s = { 0 };
	struct cpio_writer w = { .emit = sink_emit, .arg = &s };
	struct cpio_member m = { .name = "f", .mode = S_IFREG | 0644, .nlink = 1, .size = 10 };
	struct cpio_entry e;
	size_t off = 0;

	assert_int_equal(cpio_write_header(&w, &m), 0);
	cpio_write_data(&w, "012", 3);
	cpio_write_data(&w, "3456789", 7);
	cpio_write_pad(&w);
	cpio_write_trailer(&w);

	unsigned char *a = exact(&s);

	assert_int_equal(cpio_next(a, s.len, &off, &e), 1);
	assert_memory_equal(e.data, "0123456789", 10);
	assert_int_equal(cpio_next(a, s.len, &off, &e), 0);
	free(a);
	free(s.p);
}

static void test_trailer_bytes(void **state)
{
	struct sink s = { 0 };
	struct cpio_writer w = { .emit = sink_emit, .arg = &s };
	const char *want = "070701"
			   "00000000" "00000000" "00000000" "00000000" "00000001" "00000000"
			   "00000000" "00000000" "00000000" "00000000" "00000000" "0000000b"
			   "00000000" "TRAILER!!!";

	cpio_write_trailer(&w);
	assert_int_equal(s.len, 124); /* 110 + 11, padded to 4 */
	assert_memory_equal(s.p, want, 110 + 10);
	assert_int_equal(s.p[120], 0);
	assert_int_equal(s.p[121], 0);
	free(s.p);
}

static void test_too_big(void **state)
{
	struct sink s = { 0 };
	struct cpio_writer w = { .emit = sink_emit, .arg = &s };
	struct cpio_member m = { .name = "huge", .mode = S_IFREG | 0644, .size = 1ull << 32 };

	assert_int_equal(cpio_write_header(&w, &m), -EFBIG);
	assert_int_equal(s.len, 0); /* nothing written for it */
	m.size = UINT32_MAX;
	assert_int_equal(cpio_write_header(&w, &m), 0);
	free(s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_body_in_pieces),
		cmocka_unit_test(test_trailer_bytes),
		cmocka_unit_test(test_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
