/*
 * sha1.h - SHA-1 (FIPS 180-4), for the program tag (bpf_prog_info.tag: the first 8 bytes of
 * the digest of the instructions, as Linux's bpf_prog_calc_tag).  Freestanding: also built
 * into the host unit test and into tests/user/t_bpf_basic, which computes expected tags.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define BPF_SHA1_DIGEST 20

struct bpf_sha1 {
	uint32_t h[5];
	uint64_t len; /* bytes hashed so far */
	uint8_t block[64]; /* the partial block: len % 64 bytes */
};

void bpf_sha1_init(struct bpf_sha1 *s);
void bpf_sha1_update(struct bpf_sha1 *s, const void *data, size_t n);
void bpf_sha1_final(struct bpf_sha1 *s, uint8_t digest[BPF_SHA1_DIGEST]);
