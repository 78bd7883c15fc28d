/* bench_sum.bpf.c - benchmark: byte sum over the buffer (r1 = buffer, r2 = length). */
#include "bpf_defs.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < len; i++)
		sum += buf[i];
	return sum;
}
