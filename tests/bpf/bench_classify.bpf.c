/*
 * bench_classify.bpf.c - benchmark: a branchy per-byte classifier over the buffer: counts of
 * "digits", "letters", "spaces", "controls" and "high" bytes folded into one result.
 */
#include "bpf_defs.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	unsigned long digit = 0, alpha = 0, space = 0, ctrl = 0, high = 0, other = 0;

	for (unsigned long i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if (c >= '0' && c <= '9')
			digit++;
		else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			alpha++;
		else if (c == ' ' || c == '\t' || c == '\n')
			space++;
		else if (c < 32)
			ctrl++;
		else if (c >= 128)
			high++;
		else
			other++;
	}
	return digit | alpha << 12 | space << 24 | ctrl << 32 | high << 44 | other << 56;
}
