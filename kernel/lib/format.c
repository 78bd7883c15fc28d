/*
 * format.c - the one formatting engine (include/kern/format.h): fmt_int and fmt_str lay out a
 * single conversion, kvsnprintf walks a C format over a va_list with them.  bpf/bprintf.c uses
 * the same two for bpf_snprintf's arguments after checking Linux's format rules.
 *
 * Portable: built into the kernel and into every host test (tests/unit/test_format.c).  Does
 * not do: floating point, %n, positional arguments, precision for numbers.
 */
#include <stdbool.h>
#include <stdint.h>
#include <kern/format.h>

void fmt_putc(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void fmt_fill(struct fmt_out *o, char c, int n)
{
	while (n-- > 0)
		fmt_putc(o, c);
}

void fmt_str(struct fmt_out *o, const char *s, size_t n, const struct fmt_spec *sp)
{
	int fill = sp->width > (int)n ? sp->width - (int)n : 0;

	if (!(sp->flags & FMT_LEFT))
		fmt_fill(o, ' ', fill);
	for (size_t i = 0; i < n; i++)
		fmt_putc(o, s[i]);
	if (sp->flags & FMT_LEFT)
		fmt_fill(o, ' ', fill);
}

void fmt_int(struct fmt_out *o, uint64_t v, const struct fmt_spec *sp)
{
	bool sgn = sp->conv == 'd' || sp->conv == 'i';
	unsigned int base = sp->conv == 'o' ? 8 : sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p' ? 16 : 10;
	const char *dig = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	const char *prefix = "";
	char tmp[24], sign = 0;
	int n = 0, len;

	if (sp->size == 4)
		v = sgn ? (uint64_t)(int64_t)(int32_t)v : (uint32_t)v;
	if (sgn && (int64_t)v < 0) {
		sign = '-';
		v = (uint64_t)0 - v;
	} else if (sgn && (sp->flags & (FMT_PLUS | FMT_SPACE))) {
		sign = sp->flags & FMT_PLUS ? '+' : ' ';
	}
	if (sp->conv == 'p' || (base == 16 && v && (sp->flags & FMT_ALT)))
		prefix = sp->conv == 'X' ? "0X" : "0x";
	do {
		tmp[n++] = dig[v % base];
		v /= base;
	} while (v);
	len = n + (sign ? 1 : 0) + (prefix[0] ? 2 : 0);
	if (!(sp->flags & (FMT_LEFT | FMT_ZERO)))
		fmt_fill(o, ' ', sp->width - len);
	if (sign)
		fmt_putc(o, sign);
	for (; *prefix; prefix++)
		fmt_putc(o, *prefix);
	if ((sp->flags & (FMT_LEFT | FMT_ZERO)) == FMT_ZERO)
		fmt_fill(o, '0', sp->width - len);
	while (n)
		fmt_putc(o, tmp[--n]);
	if (sp->flags & FMT_LEFT)
		fmt_fill(o, ' ', sp->width - len);
}

size_t fmt_end(struct fmt_out *o)
{
	if (o->size)
		o->buf[o->len < o->size ? o->len : o->size - 1] = 0;
	return o->len;
}

/* The flags, width, precision and length of the conversion at *fmt (just past '%'); *fmt is
 * left on the conversion character. */
static void parse_spec(const char **fmt, struct fmt_spec *sp, va_list *ap)
{
	const char *f = *fmt;

	*sp = (struct fmt_spec){ .prec = -1, .size = 4 };
	for (;; f++) {
		if (*f == '-')
			sp->flags |= FMT_LEFT;
		else if (*f == '0')
			sp->flags |= FMT_ZERO;
		else if (*f == '#')
			sp->flags |= FMT_ALT;
		else if (*f == '+')
			sp->flags |= FMT_PLUS;
		else if (*f == ' ')
			sp->flags |= FMT_SPACE;
		else
			break;
	}
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		f++;
	}
	for (; *f >= '0' && *f <= '9'; f++)
		sp->width = sp->width * 10 + (*f - '0');
	if (*f == '.') {
		sp->prec = 0;
		for (f++; *f >= '0' && *f <= '9'; f++)
			sp->prec = sp->prec * 10 + (*f - '0');
	}
	for (;; f++) {
		if (*f == 'l' || *f == 'z' || *f == 'j' || *f == 't')
			sp->size = 8;
		else if (*f != 'h')
			break;
	}
	sp->conv = *f;
	*fmt = f;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_out o = { buf, size, 0 };
	va_list args;

	va_copy(args, ap);
	for (; *fmt; fmt++) {
		struct fmt_spec sp;

		if (*fmt != '%') {
			fmt_putc(&o, *fmt);
			continue;
		}
		fmt++;
		parse_spec(&fmt, &sp, &args);
		switch (sp.conv) {
		case 'd':
		case 'i':
			fmt_int(&o, sp.size == 8 ? (uint64_t)va_arg(args, int64_t) : (uint64_t)va_arg(args, int), &sp);
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			fmt_int(&o, sp.size == 8 ? va_arg(args, uint64_t) : va_arg(args, unsigned int), &sp);
			break;
		case 'p':
			sp.size = 8;
			fmt_int(&o, (uint64_t)(uintptr_t)va_arg(args, void *), &sp);
			break;
		case 's': {
			const char *s = va_arg(args, const char *);
			size_t len = 0;

			if (!s)
				s = "(null)";
			while (s[len] && (sp.prec < 0 || (int)len < sp.prec))
				len++;
			fmt_str(&o, s, len, &sp);
			break;
		}
		case 'c': {
			char c = (char)va_arg(args, int);

			fmt_str(&o, &c, 1, &sp);
			break;
		}
		case '%':
			fmt_putc(&o, '%');
			break;
		default: /* not a conversion: the text as written */
			fmt_putc(&o, '%');
			if (!sp.conv)
				fmt--;
			else
				fmt_putc(&o, sp.conv);
			break;
		}
	}
	va_end(args);
	return (int)fmt_end(&o);
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
