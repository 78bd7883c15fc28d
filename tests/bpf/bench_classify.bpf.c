/*
 * bench_classify.bpf.c - benchmark: a branchy per-byte classifier over the buffer: counts of
 * "digits", "letters", "spaces", "controls" and "high" bytes folded into one result.
 */
#include "bpf_defs.h"
#include "classify.h"

SEC("bench") unsigned long bench_main(const unsigned char *buf, unsigned long len)
{
	return classify(buf, len);
}
