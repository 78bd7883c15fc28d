/* fuzz.h - what the guest fuzzers share (header only): the xorshift64 generator. */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdint.h>

static uint64_t rs; /* the generator's state: seed it non-zero */

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

#endif
