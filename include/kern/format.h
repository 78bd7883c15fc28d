/*
 * format.h - the one formatting engine (kernel/lib/format.c), a primitive every layer may use:
 * the kernel's printk and ksnprintf, bpf/'s verifier log and trace lines, bpf_snprintf's
 * conversions (bpf/bprintf.c checks Linux's rules first, then formats with fmt_int/fmt_str),
 * perf/'s sysfs values.  Portable: built into the kernel and into every host test.
 *
 * kvsnprintf knows %d %i %u %x %X %o %p %s %c %%, the flags '-' '0' '#' '+' ' ', a field
 * width (or '*'), a precision for %s, and the l/ll/z/j/t/h length modifiers (any of l z j t
 * means 64 bits; h is read as int).  An unknown conversion is copied out as text.  No
 * floating point, no %n.
 */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Output into buf[size]; len counts every byte asked for, also those that did not fit. */
struct fmt_out {
	char *buf;
	size_t size, len;
};

#define FMT_LEFT 0x1 /* '-': pad on the right */
#define FMT_ZERO 0x2 /* '0': numbers padded with zeros after the sign (ignored with FMT_LEFT) */
#define FMT_ALT 0x4 /* '#': 0x / 0X before a non-zero hex number */
#define FMT_PLUS 0x8 /* '+': signed conversions show '+' when not negative */
#define FMT_SPACE 0x10 /* ' ': signed conversions show ' ' when not negative */

/* One conversion: what fmt_int and fmt_str need of "%[flags][width][.prec][len]conv". */
struct fmt_spec {
	unsigned int flags; /* FMT_* */
	int width; /* 0: none */
	int prec; /* -1: none; %s prints at most prec bytes */
	char conv; /* d i u x X o p (fmt_int); s c (fmt_str) */
	unsigned char size; /* fmt_int: the argument's bytes, 4 (truncated, sign-extended for d i) or 8 */
};

void fmt_putc(struct fmt_out *o, char c);
/* n bytes of s, padded with spaces to the spec's width (FMT_LEFT: on the right). */
void fmt_str(struct fmt_out *o, const char *s, size_t n, const struct fmt_spec *sp);
/* v as sp->conv says (p: "0x" and hex), with sign, prefix and padding. */
void fmt_int(struct fmt_out *o, uint64_t v, const struct fmt_spec *sp);
/* NUL-terminate (when size > 0, truncating); the full length, NUL not counted. */
size_t fmt_end(struct fmt_out *o);

/* Like C's vsnprintf: returns the length the full output would have, always NUL-terminates. */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
