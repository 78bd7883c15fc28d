/*
 * classify.h - the branchy per-byte classifier of bench_classify and perf_classify: counts of
 * "digits", "letters", "spaces", "controls", "high" and other bytes, packed into one word at
 * the CLASS_* shifts (each count below 256 fits).  Plain C: the host unit test builds it too, for the counts it expects.
 */
#pragma once

#define CLASS_DIGIT 0
#define CLASS_ALPHA 12
#define CLASS_SPACE 24
#define CLASS_CTRL 32
#define CLASS_HIGH 44
#define CLASS_OTHER 56

static inline __attribute__((always_inline)) unsigned long classify(const unsigned char *buf,
								    unsigned long len)
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
	return digit << CLASS_DIGIT | alpha << CLASS_ALPHA | space << CLASS_SPACE |
	       ctrl << CLASS_CTRL | high << CLASS_HIGH | other << CLASS_OTHER;
}
