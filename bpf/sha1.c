/*
 * sha1.c - SHA-1 as FIPS 180-4 section 6.1 defines it: 64-byte blocks, big-endian words, an
 * 80-word schedule, padding with 0x80, zeros and the bit length.  Only what the program tag
 * needs: no HMAC, no other digests.  Uses no library call, so user programs can build it too.
 */
#include "sha1.h"

static uint32_t rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (int t = 16; t < 80; t++)
		w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	for (int t = 0; t < 80; t++) {
		uint32_t f, k, tmp;

		if (t < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (t < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (t < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		tmp = rol(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = tmp;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void bpf_sha1_init(struct bpf_sha1 *s)
{
	s->h[0] = 0x67452301;
	s->h[1] = 0xefcdab89;
	s->h[2] = 0x98badcfe;
	s->h[3] = 0x10325476;
	s->h[4] = 0xc3d2e1f0;
	s->len = 0;
}

void bpf_sha1_update(struct bpf_sha1 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < n; i++) {
		s->block[s->len++ % 64] = p[i];
		if (s->len % 64 == 0)
			sha1_block(s->h, s->block);
	}
}

void bpf_sha1_final(struct bpf_sha1 *s, uint8_t digest[BPF_SHA1_DIGEST])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, len[8];

	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	bpf_sha1_update(s, &pad, 1);
	pad = 0;
	while (s->len % 64 != 56)
		bpf_sha1_update(s, &pad, 1);
	bpf_sha1_update(s, len, sizeof(len));
	for (int i = 0; i < BPF_SHA1_DIGEST; i++)
		digest[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}
