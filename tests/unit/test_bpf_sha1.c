/*
 * test_bpf_sha1.c - bpf/sha1.c against the FIPS 180 SHA-1 examples ("abc", the 56-byte
 * two-block message, a million 'a'), the empty message, and input fed in uneven pieces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../bpf/sha1.h"

static void hex(const uint8_t d[BPF_SHA1_DIGEST], char out[2 * BPF_SHA1_DIGEST + 1])
{
	for (int i = 0; i < BPF_SHA1_DIGEST; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* SHA-1 of msg fed chunk bytes at a time (0: all at once), as hex */
static void digest_of(const char *msg, size_t len, size_t chunk, char out[41])
{
	struct bpf_sha1 s;
	uint8_t d[BPF_SHA1_DIGEST];

	bpf_sha1_init(&s);
	for (size_t i = 0; i < len; i += chunk ? chunk : len)
		bpf_sha1_update(&s, msg + i, chunk && len - i > chunk ? chunk : len - i);
	bpf_sha1_final(&s, d);
	hex(d, out);
}

static void test_fips_vectors(void **state)
{
	static const struct {
		const char *msg, *want;
	} v[] = {
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
	};
	char got[41];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (size_t chunk = 0; chunk < 8; chunk++) {
			digest_of(v[i].msg, strlen(v[i].msg), chunk, got);
			assert_string_equal(got, v[i].want);
		}
	}
}

static void test_million_a(void **state)
{
	static char a[1000000];
	char got[41];

	memset(a, 'a', sizeof(a));
	digest_of(a, sizeof(a), 0, got);
	assert_string_equal(got, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	digest_of(a, sizeof(a), 4096 + 7, got);
	assert_string_equal(got, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

/* Lengths around the padding boundary: 55 bytes pad in one block, 56..63 need two. */
static void test_padding_edges(void **state)
{
	static const char *const want[] = {
		[55] = "c1c8bbdc22796e28c0e15163d20899b65621d65a",
		[56] = "c2db330f6083854c99d4b5bfb6e8f29f201be699",
		[64] = "0098ba824b5c16427bd7a1122a5a442a25ec644d",
	};
	char msg[64], got[41];

	memset(msg, 'a', sizeof(msg));
	for (size_t n = 0; n < sizeof(want) / sizeof(want[0]); n++) {
		if (!want[n])
			continue;
		digest_of(msg, n, 0, got);
		assert_string_equal(got, want[n]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_vectors),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_padding_edges),
	};

	return cmocka_run_group_tests_name("bpf_sha1", tests, NULL, NULL);
}
