/* bench_fnv.bpf.c - benchmark: 64-bit FNV-1a over the buffer (r1 = buffer, r2 = length). */
#include "bpf_defs.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	unsigned long h = 14695981039346656037ull;

	for (unsigned long i = 0; i < len; i++) {
		h ^= buf[i];
		h *= 1099511628211ull;
	}
	return h;
}
