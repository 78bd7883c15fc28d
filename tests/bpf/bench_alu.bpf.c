/* bench_alu.bpf.c - benchmark: 1,000,000 iterations of a register-only ALU loop. */
#include "bpf_defs.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	unsigned long x = 0x9e3779b97f4a7c15ull, y = len;

	for (unsigned int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		y += x ^ i;
	}
	return x + y;
}
