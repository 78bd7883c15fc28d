/*
 * format.c - a small vsnprintf for the kernel: %d %i %u %x %X %o %p %s %c %%, the l/ll/z/h
 * length modifiers, field width, '0', '-' and '#' flags, and precision for %s.  Portable (built into
 * host tests too).  No floating point.
 */
#include <stdint.h>
#include <kern/format.h>

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, int left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left)
		while (fill-- > 0)
			put(o, pad);
	for (size_t i = 0; i < n; i++)
		put(o, s[i]);
	if (left)
		while (fill-- > 0)
			put(o, ' ');
}

static size_t utoa(char *tmp, uint64_t v, unsigned base, int upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	return n;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		int left = 0, width = 0, prec = -1, lng = 0, alt = 0;
		char pad = ' ';

		for (fmt++; *fmt == '-' || *fmt == '0' || *fmt == '#'; fmt++) {
			if (*fmt == '-')
				left = 1;
			else if (*fmt == '#')
				alt = 1;
			else
				pad = '0';
		}
		if (*fmt == '*') {
			width = va_arg(ap, int);
			fmt++;
		}
		for (; *fmt >= '0' && *fmt <= '9'; fmt++)
			width = width * 10 + (*fmt - '0');
		if (*fmt == '.') {
			prec = 0;
			for (fmt++; *fmt >= '0' && *fmt <= '9'; fmt++)
				prec = prec * 10 + (*fmt - '0');
		}
		for (;; fmt++) {
			if (*fmt == 'l' || *fmt == 'z' || *fmt == 'j' || *fmt == 't')
				lng++;
			else if (*fmt != 'h')
				break;
		}
		char tmp[24], rev[24];
		size_t n = 0;
		uint64_t u;
		int neg = 0;

		switch (*fmt) {
		case 'd':
		case 'i': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);

			neg = v < 0;
			u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			n = utoa(rev, u, 10, 0);
			goto emit_num;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			u = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			n = utoa(rev, u, *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16, *fmt == 'X');
			if (alt && u && (*fmt == 'x' || *fmt == 'X')) {
				rev[n++] = *fmt;
				rev[n++] = '0';
			}
			goto emit_num;
		case 'p':
			u = (uint64_t)(uintptr_t)va_arg(ap, void *);
			n = utoa(rev, u, 16, 0);
			rev[n++] = 'x';
			rev[n++] = '0';
			goto emit_num;
		case 's': {
			const char *s = va_arg(ap, const char *);
			size_t len = 0;

			if (!s)
				s = "(null)";
			while (s[len] && (prec < 0 || (int)len < prec))
				len++;
			put_padded(&o, s, len, width, left, ' ');
			continue;
		}
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_padded(&o, tmp, 1, width, left, ' ');
			continue;
		case '%':
			put(&o, '%');
			continue;
		default:
			put(&o, '%');
			if (*fmt)
				put(&o, *fmt);
			else
				fmt--;
			continue;
		}
emit_num:
		if (neg && pad == '0') {
			put(&o, '-');
			width--;
		} else if (neg) {
			rev[n++] = '-';
		}
		for (size_t i = 0; i < n; i++)
			tmp[i] = rev[n - 1 - i];
		put_padded(&o, tmp, n, width, left, pad);
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
