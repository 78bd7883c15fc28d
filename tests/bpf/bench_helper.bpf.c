/* bench_helper.bpf.c - benchmark: a loop of 10,000 helper calls (bpf_get_prandom_u32). */
#include "bpf_defs.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	unsigned long sum = 0;

	for (unsigned int i = 0; i < 10000; i++)
		sum += bpf_get_prandom_u32();
	return sum;
}
