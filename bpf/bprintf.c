/*
 * bprintf.c - bpf_snprintf and bpf_trace_vprintk: Linux 6.1's bpf_bprintf_prepare format
 * rules (checked at load for snprintf's constant format, and again at run time) as a front
 * end: parse_conv says what Linux allows and turns each conversion into a struct fmt_spec,
 * which the kernel's one formatter (<kern/format.h>: fmt_int, fmt_str) lays out.
 *
 * Allowed: printable ASCII and spaces; %% ; per conversion the flags "0 +-" and a width; %d %i
 * %u %x %X with l or ll (int when bare); %c; %s, %pks, %pus (a kernel or user string read
 * without faulting: empty when it faults); %p (alone, or before a space, punctuation or K x s S),
 * %px, %pK, %pB, %pI4 %pi4 %pI6 %pi6.  At most one conversion per u64 of data.
 * Differences: %p, %pK and %pB print the raw address (Linux hashes %p and names %pB's symbol).
 * Not here: the per-CPU buffers' nesting limit (-EBUSY).
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define MAX_VAR_ARGS 12 /* MAX_BPF_FUNC_VAR_ARGS */
#define STR_MAX 512 /* a %s argument's bytes at most (MAX_BPRINTF_BUF_LEN) */

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_print(char c)
{
	return c >= 0x20 && c < 0x7f;
}

static bool is_punct(char c)
{
	return is_print(c) && c != ' ' && !(c >= '0' && c <= '9') && !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* One conversion as the rules parsed it. */
struct conv {
	struct fmt_spec f; /* flags and width; integers: conv d i u x X and size 4 or 8 */
	char kind; /* 'i' integer, 'c', 's' kernel string, 'U' user string, 'p', '4' / '6' ip */
	char ip; /* for '4' / '6': 'I' or 'i' */
};

/* %pI4 / %pi4: dotted decimal (i: three digits each); %pI6 / %pi6: eight groups of four hex
 * digits (I: with colons) */
static void put_ip(struct fmt_out *o, const uint8_t *a, const struct conv *c)
{
	struct fmt_spec dec = { .conv = 'u', .size = 4, .width = c->ip == 'i' ? 3 : 0, .flags = FMT_ZERO };
	struct fmt_spec hex = { .conv = 'x', .size = 4, .width = 4, .flags = FMT_ZERO };

	if (c->kind == '4') {
		for (int i = 0; i < 4; i++) {
			if (i)
				fmt_putc(o, '.');
			fmt_int(o, a[i], &dec);
		}
		return;
	}
	for (int i = 0; i < 16; i += 2) {
		if (i && c->ip == 'I')
			fmt_putc(o, ':');
		fmt_int(o, (uint64_t)a[i] << 8 | a[i + 1], &hex);
	}
}

/*
 * Parse the conversion at fmt[*i] (just past '%'): 0 and *c, or -EINVAL as Linux's
 * bpf_bprintf_prepare refuses it.
 */
static int parse_conv(const char *fmt, uint64_t *i, struct conv *c)
{
	static const char flag_chars[] = "0+- ";
	static const unsigned int flag_bits[] = { FMT_ZERO, FMT_PLUS, FMT_LEFT, FMT_SPACE };
	uint64_t k = *i;

	memset(c, 0, sizeof(*c));
	c->f.prec = -1;
	for (const char *fl; fmt[k] && (fl = memchr(flag_chars, fmt[k], 4)); k++)
		c->f.flags |= flag_bits[fl - flag_chars];
	if (fmt[k] >= '1' && fmt[k] <= '9') {
		while (fmt[k] >= '0' && fmt[k] <= '9') {
			if (c->f.width < 10000)
				c->f.width = c->f.width * 10 + (fmt[k] - '0');
			k++;
		}
	}
	if (fmt[k] == 'p') {
		char n1 = fmt[k + 1];

		c->kind = 'p';
		if ((n1 == 'k' || n1 == 'u') && fmt[k + 2] == 's') {
			c->kind = n1 == 'u' ? 'U' : 's';
			k += 2;
			goto str;
		}
		if (!n1 || is_space(n1) || is_punct(n1) || n1 == 'K' || n1 == 'x' || n1 == 's' ||
		    n1 == 'S' || n1 == 'B') {
			if (n1 == 'K' || n1 == 'x' || n1 == 'B')
				k++; /* S and s stay text after a plain %p, as vsnprintf would not */
			*i = k;
			return 0;
		}
		if ((n1 != 'i' && n1 != 'I') || (fmt[k + 2] != '4' && fmt[k + 2] != '6'))
			return -EINVAL;
		c->ip = n1;
		c->kind = fmt[k + 2];
		*i = k + 2;
		return 0;
	}
	if (fmt[k] == 's') {
		c->kind = 's';
str:
		if (fmt[k + 1] && !is_space(fmt[k + 1]) && !is_punct(fmt[k + 1]))
			return -EINVAL;
		*i = k;
		return 0;
	}
	if (fmt[k] == 'c') {
		c->kind = 'c';
		*i = k;
		return 0;
	}
	c->f.size = 4;
	if (fmt[k] == 'l') {
		c->f.size = 8;
		k++;
	}
	if (fmt[k] == 'l')
		k++;
	if (fmt[k] != 'i' && fmt[k] != 'd' && fmt[k] != 'u' && fmt[k] != 'x' && fmt[k] != 'X')
		return -EINVAL;
	c->kind = 'i';
	c->f.conv = fmt[k];
	*i = k;
	return 0;
}

int bpf_bprintf_check(const char *fmt, uint64_t fmt_size, uint32_t num_args)
{
	const char *end = memchr(fmt, 0, fmt_size);
	uint32_t spec = 0;
	struct conv c;

	if (!end)
		return -EINVAL;
	for (uint64_t i = 0; i < (uint64_t)(end - fmt); i++) {
		if ((!is_print(fmt[i]) && !is_space(fmt[i])) || (fmt[i] & 0x80))
			return -EINVAL;
		if (fmt[i] != '%')
			continue;
		if (fmt[i + 1] == '%') {
			i++;
			continue;
		}
		if (spec >= num_args)
			return -EINVAL;
		i++;
		if (parse_conv(fmt, &i, &c))
			return -EINVAL;
		spec++;
	}
	return 0;
}

static void put_str(struct fmt_out *o, uint64_t addr, bool user, const struct conv *c)
{
	char s[STR_MAX];
	uint64_t n = 0;

	while (n < sizeof(s) - 1 && !ksvc_read_nofault(&s[n], (const char *)(uintptr_t)addr + n, 1, user) &&
	       s[n])
		n++;
	fmt_str(o, s, n, &c->f);
}

/* Format checked fmt with args into buf (size bytes, NUL-terminated when size > 0): the full length. */
static uint64_t bprintf(char *buf, uint64_t size, const char *fmt, const uint64_t *args)
{
	struct fmt_out o = { buf, size, 0 };
	struct fmt_spec hex16 = { .conv = 'x', .size = 8, .width = 16, .flags = FMT_ZERO };
	uint32_t spec = 0;
	struct conv c;

	for (uint64_t i = 0; fmt[i]; i++) {
		uint64_t a;

		if (fmt[i] != '%') {
			fmt_putc(&o, fmt[i]);
			continue;
		}
		if (fmt[i + 1] == '%') {
			fmt_putc(&o, '%');
			i++;
			continue;
		}
		i++;
		parse_conv(fmt, &i, &c);
		a = args[spec++];
		switch (c.kind) {
		case 's':
		case 'U':
			put_str(&o, a, c.kind == 'U', &c);
			break;
		case 'c': {
			char ch = (char)a;

			fmt_str(&o, &ch, 1, &c.f);
			break;
		}
		case 'p': /* the raw address, 16 digits */
			fmt_int(&o, a, &hex16);
			break;
		case '4':
		case '6': {
			uint8_t ip[16] = { 0 };

			ksvc_read_nofault(ip, (const void *)(uintptr_t)a, c.kind == '4' ? 4 : 16, false);
			put_ip(&o, ip, &c);
			break;
		}
		default:
			fmt_int(&o, a, &c.f);
			break;
		}
	}
	return fmt_end(&o);
}

static bool data_bad(uint64_t data, uint64_t len)
{
	return len % 8 || len > MAX_VAR_ARGS * 8 || (len && !data);
}

/* bpf_snprintf(str, str_size, fmt, data, data_len): the output's length with its NUL. */
uint64_t bpf_h_snprintf(uint64_t str, uint64_t size, uint64_t fmt, uint64_t data, uint64_t len)
{
	const char *f = (const char *)(uintptr_t)fmt;
	int err;

	if (data_bad(data, len))
		return (uint64_t)-EINVAL;
	err = bpf_bprintf_check(f, UINT32_MAX, (uint32_t)(len / 8));
	if (err)
		return (uint64_t)(int64_t)err;
	return bprintf((char *)(uintptr_t)str, size, f, (const uint64_t *)(uintptr_t)data) + 1;
}

/* bpf_trace_vprintk(fmt, fmt_size, data, data_len): to the trace buffer; the text's length. */
uint64_t bpf_h_trace_vprintk(uint64_t fmt, uint64_t fmt_size, uint64_t data, uint64_t len,
			     uint64_t a5)
{
	const char *f = (const char *)(uintptr_t)fmt;

	if (data_bad(data, len))
		return (uint64_t)-EINVAL;
	return bpf_trace_fmt(f, fmt_size, (const uint64_t *)(uintptr_t)data, (uint32_t)(len / 8));
}

/* trace_printk and trace_vprintk: fmt checked for num_args arguments, formatted, one trace
 * line; the text's length (bstr_printf's), or the check's -errno. */
uint64_t bpf_trace_fmt(const char *fmt, uint64_t fmt_size, const uint64_t *args, uint32_t num_args)
{
	char msg[512];
	uint64_t n;
	int err = bpf_bprintf_check(fmt, fmt_size, num_args);

	if (err)
		return (uint64_t)(int64_t)err;
	n = bprintf(msg, sizeof(msg), fmt, args);
	bpf_trace_line(msg);
	return n;
}
