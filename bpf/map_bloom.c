/*
 * map_bloom.c - BPF_MAP_TYPE_BLOOM_FILTER: a keyless set of value_size-byte values that can
 * say "maybe present" or "absent" (false positives, never false negatives).
 *
 * Linux 6.1 semantics (kernel/bpf/bloom_filter.c): key_size 0, value_size and max_entries
 * non-zero, map_flags only NUMA_NODE, ZERO_SEED and the access flags, map_extra's low 4 bits
 * the number of hash functions (0: 5; any other bit set: EINVAL).  The bit array holds
 * max_entries * nr_hash_funcs * 7 / 5 bits rounded up to a power of two (at least 64; past
 * 2^31, 2^32 bits).  Each hash is Bob Jenkins's lookup3 as Linux's jhash (jhash2 over u32
 * words when value_size is a multiple of 4) with seed + index, the seed random unless
 * BPF_F_ZERO_SEED, so a zero-seed filter sets the same bits as Linux's.
 * Programs: bpf_map_push_elem adds (flags other than BPF_ANY: -EINVAL), bpf_map_peek_elem
 * tests (0 or -ENOENT); the syscall: UPDATE_ELEM adds, LOOKUP_ELEM tests the value it is given
 * (and writes nothing back), DELETE_ELEM and GET_NEXT_KEY are EOPNOTSUPP.  Bits are set with
 * atomic ORs: no lock.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define BLOOM_DEFAULT_HASHES 5

struct bloom {
	uint32_t nr_hashes; /* (c) */
	uint32_t mask; /* (c) bits - 1 */
	uint32_t seed; /* (c) */
	uint32_t words32; /* (c) value_size / 4 when it divides, else 0 */
	uint64_t bits[]; /* (a) */
};

/* ---- Bob Jenkins's lookup3 hash, with the initial value and word order Linux's jhash uses */

#define JHASH_INITVAL 0xdeadbeefu

static inline uint32_t rol32(uint32_t v, unsigned int s)
{
	return (v << s) | (v >> (32 - s));
}

#define JHASH_MIX(a, b, c)                                                                         \
	do {                                                                                       \
		a -= c, a ^= rol32(c, 4), c += b;                                                  \
		b -= a, b ^= rol32(a, 6), a += c;                                                  \
		c -= b, c ^= rol32(b, 8), b += a;                                                  \
		a -= c, a ^= rol32(c, 16), c += b;                                                 \
		b -= a, b ^= rol32(a, 19), a += c;                                                 \
		c -= b, c ^= rol32(b, 4), b += a;                                                  \
	} while (0)

#define JHASH_FINAL(a, b, c)                                                                       \
	do {                                                                                       \
		c ^= b, c -= rol32(b, 14);                                                         \
		a ^= c, a -= rol32(c, 11);                                                         \
		b ^= a, b -= rol32(a, 25);                                                         \
		c ^= b, c -= rol32(b, 16);                                                         \
		a ^= c, a -= rol32(c, 4);                                                          \
		b ^= a, b -= rol32(a, 14);                                                         \
		c ^= b, c -= rol32(b, 24);                                                         \
	} while (0)

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* jhash: len bytes, the tail added byte by byte (little-endian order within each word). */
static uint32_t jhash_bytes(const uint8_t *k, uint32_t len, uint32_t initval)
{
	uint32_t a, b, c, w[3] = { 0, 0, 0 };

	a = b = c = JHASH_INITVAL + len + initval;
	for (; len > 12; len -= 12, k += 12) {
		a += load32(k);
		b += load32(k + 4);
		c += load32(k + 8);
		JHASH_MIX(a, b, c);
	}
	if (!len)
		return c;
	for (uint32_t i = 0; i < len; i++)
		w[i / 4] += (uint32_t)k[i] << (8 * (i % 4));
	a += w[0];
	b += w[1];
	c += w[2];
	JHASH_FINAL(a, b, c);
	return c;
}

/* jhash2: n u32 words. */
static uint32_t jhash_words(const uint8_t *k, uint32_t n, uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + (n << 2) + initval;
	for (; n > 3; n -= 3, k += 12) {
		a += load32(k);
		b += load32(k + 4);
		c += load32(k + 8);
		JHASH_MIX(a, b, c);
	}
	if (!n)
		return c;
	if (n == 3)
		c += load32(k + 8);
	if (n >= 2)
		b += load32(k + 4);
	a += load32(k);
	JHASH_FINAL(a, b, c);
	return c;
}

static uint32_t bloom_hash(const struct bpf_map *map, const struct bloom *bl, const void *value,
			   uint32_t i)
{
	uint32_t h = bl->words32 ? jhash_words(value, bl->words32, bl->seed + i) :
				   jhash_bytes(value, map->value_size, bl->seed + i);

	return h & bl->mask;
}

/* ---- the map ---- */

/* The bit array's size - 1 for these attributes (bloom_map_alloc's sizing). */
static uint32_t bloom_mask(uint32_t max_entries, uint32_t nr_hashes)
{
	uint64_t nr_bits = (uint64_t)max_entries * nr_hashes;

	if (nr_bits > UINT32_MAX)
		return UINT32_MAX;
	nr_bits = nr_bits / 5 * 7;
	if (nr_bits > UINT32_MAX || nr_bits > (1ull << 31))
		return UINT32_MAX;
	if (nr_bits <= 64)
		return 63;
	for (uint64_t p = 128;; p <<= 1)
		if (p >= nr_bits)
			return (uint32_t)(p - 1);
}

static int bloom_check(const union bpf_attr *attr)
{
	uint32_t ok = BPF_F_NUMA_NODE | BPF_F_ZERO_SEED | BPF_F_RDONLY | BPF_F_WRONLY |
		      BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG;

	if (attr->key_size || !attr->value_size || !attr->max_entries ||
	    (attr->map_flags & ~ok) || (attr->map_extra & ~0xfull))
		return -EINVAL;
	return 0;
}

static int bloom_alloc(struct bpf_map *map)
{
	uint32_t nr = map->map_extra ? (uint32_t)map->map_extra : BLOOM_DEFAULT_HASHES;
	uint32_t mask = bloom_mask(map->max_entries, nr);
	size_t bytes = ((size_t)mask + 1) / 8;
	struct bloom *bl = ksvc_alloc(sizeof(*bl) + bytes);

	if (!bl)
		return -ENOMEM;
	memset(bl->bits, 0, bytes);
	bl->nr_hashes = nr;
	bl->mask = mask;
	bl->words32 = map->value_size % 4 ? 0 : map->value_size / 4;
	bl->seed = (map->map_flags & BPF_F_ZERO_SEED) ? 0 : ksvc_random_u32();
	map->priv = bl;
	return 0;
}

static void bloom_free(struct bpf_map *map)
{
	ksvc_free(map->priv);
}

static long bloom_push(struct bpf_map *map, const void *value, uint64_t flags)
{
	struct bloom *bl = map->priv;

	if (flags != BPF_ANY)
		return -EINVAL;
	for (uint32_t i = 0; i < bl->nr_hashes; i++) {
		uint32_t h = bloom_hash(map, bl, value, i);

		__atomic_fetch_or(&bl->bits[h / 64], 1ull << (h % 64), __ATOMIC_RELAXED);
	}
	return 0;
}

/* peek: 0 (maybe present) or -ENOENT; pop: EOPNOTSUPP (the verifier lets no program pop). */
static long bloom_pop(struct bpf_map *map, void *value, bool remove)
{
	struct bloom *bl = map->priv;

	if (remove)
		return -EOPNOTSUPP;
	for (uint32_t i = 0; i < bl->nr_hashes; i++) {
		uint32_t h = bloom_hash(map, bl, value, i);

		if (!(__atomic_load_n(&bl->bits[h / 64], __ATOMIC_RELAXED) & (1ull << (h % 64))))
			return -ENOENT;
	}
	return 0;
}

static void *bloom_lookup(struct bpf_map *map, const void *key)
{
	return NULL; /* programs peek instead (the verifier refuses lookups) */
}

static int bloom_update(struct bpf_map *map, const void *key, const void *value, uint64_t flags)
{
	return -EINVAL; /* programs push instead */
}

static int bloom_sys_update(struct bpf_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	return (int)bloom_push(map, value, flags);
}

/* LOOKUP_ELEM: value holds the value to test (syscall.c copies it in for this map type). */
static int bloom_sys_lookup(struct bpf_map *map, const void *key, void *value)
{
	return (int)bloom_pop(map, value, false);
}

static int bloom_eopnotsupp(struct bpf_map *map, const void *key)
{
	return -EOPNOTSUPP;
}

static int bloom_next_key(struct bpf_map *map, const void *key, void *next)
{
	return -EOPNOTSUPP;
}

const struct bpf_map_ops bpf_bloom_ops = {
	.check = bloom_check,
	.alloc = bloom_alloc,
	.free = bloom_free,
	.lookup = bloom_lookup,
	.update = bloom_update,
	.delete = bloom_eopnotsupp,
	.sys_lookup = bloom_sys_lookup,
	.sys_update = bloom_sys_update,
	.get_next_key = bloom_next_key,
	.push = bloom_push,
	.pop = bloom_pop,
};
