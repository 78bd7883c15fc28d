/*
 * helpers_str.c - the string helpers of Linux 6.1: bpf_strncmp (arm64's strncmp: the
 * difference of the first unequal bytes), bpf_strtol and bpf_strtoul (Linux's
 * __bpf_strtoull: leading spaces, one '-', bases 0/8/10/16, the characters consumed,
 * -EINVAL or -ERANGE).  The verifier has checked the buffers (helpers.c's table).
 * Not here: snprintf and trace_vprintk (bprintf.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define P(x) ((void *)(uintptr_t)(x))

/* bpf_strncmp(s1, s1_sz, s2): arm64's strncmp, the difference of the first unequal bytes. */
uint64_t bpf_h_strncmp(uint64_t s1, uint64_t n, uint64_t s2, uint64_t a4, uint64_t a5)
{
	const unsigned char *a = P(s1), *b = P(s2);

	for (uint64_t i = 0; i < n; i++) {
		if (a[i] != b[i])
			return (uint64_t)(int64_t)((int)a[i] - (int)b[i]);
		if (!a[i])
			break;
	}
	return 0;
}

#define BPF_STRTOX_BASE_MASK 0x1fu

static bool k_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0; /* Linux's _ctype: NBSP too */
}

static int digit_of(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : 16;
}

/*
 * Linux's __bpf_strtoull: spaces, one '-', then at most 63 characters parsed as
 * _parse_integer does (base 0: 0x -> 16 when a hex digit follows, 0 -> 8, else 10).  The
 * characters consumed, -EINVAL (no digits, bad base or flags) or -ERANGE (overflow).
 */
static long strtoull_common(const char *buf, uint64_t len, uint64_t flags, uint64_t *res,
			    bool *neg)
{
	unsigned int base = flags & BPF_STRTOX_BASE_MASK;
	uint64_t i = 0, start, v = 0;
	bool over = false;
	char s[64];
	uint64_t n, k = 0;

	if (!len || (base != 0 && base != 8 && base != 10 && base != 16) ||
	    (flags & ~(uint64_t)BPF_STRTOX_BASE_MASK))
		return -EINVAL;
	while (i < len && k_isspace((unsigned char)buf[i]))
		i++;
	*neg = i < len && buf[i] == '-';
	if (*neg)
		i++;
	if (i == len)
		return -EINVAL;
	n = MIN(len - i, sizeof(s) - 1);
	memcpy(s, buf + i, n);
	s[n] = 0;
	if (!base) {
		base = 10;
		if (s[0] == '0')
			base = (s[1] | 0x20) == 'x' && digit_of((unsigned char)s[2]) < 16 ? 16 : 8;
	}
	if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
		k = 2;
	start = k;
	for (; s[k]; k++) {
		unsigned int d = (unsigned int)digit_of((unsigned char)s[k]);

		if (d >= base)
			break;
		if (v > (UINT64_MAX - d) / base)
			over = true;
		v = v * base + d;
	}
	if (over)
		return -ERANGE;
	if (k == start)
		return -EINVAL;
	*res = v;
	return (long)(i + k);
}

uint64_t bpf_h_strtol(uint64_t buf, uint64_t len, uint64_t flags, uint64_t res, uint64_t a5)
{
	uint64_t v;
	bool neg;
	long n = strtoull_common(P(buf), len, flags, &v, &neg);

	if (n < 0)
		return (uint64_t)n;
	if (neg ? (int64_t)-v > 0 : (int64_t)v < 0)
		return (uint64_t)-ERANGE;
	*(int64_t *)P(res) = neg ? (int64_t)-v : (int64_t)v;
	return (uint64_t)n;
}

uint64_t bpf_h_strtoul(uint64_t buf, uint64_t len, uint64_t flags, uint64_t res, uint64_t a5)
{
	uint64_t v;
	bool neg;
	long n = strtoull_common(P(buf), len, flags, &v, &neg);

	if (n < 0)
		return (uint64_t)n;
	if (neg)
		return (uint64_t)-EINVAL;
	*(uint64_t *)P(res) = v;
	return (uint64_t)n;
}
