/*
 * log.c - the verifier log (bpf_attr.log_buf / log_size / log_level of BPF_PROG_LOAD) and the
 * small printf-style formatter bpf/ uses instead of libc.
 *
 * Linux 6.1 semantics: each message is formatted into a kernel line buffer and copied to the
 * user buffer at once, always NUL-terminated; when the buffer fills, later text is dropped and
 * the load fails with ENOSPC; a failed copy makes it fail with EFAULT.
 * The formatter knows %d %i %u %x %X %s %c %p %% with l/ll/z, width, '0' and '-'.  No floating
 * point.  Not here: what is logged (verify*.c).
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

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

static void put_num(struct out *o, uint64_t v, bool neg, unsigned int base, bool upper,
		    int width, bool zero, bool left)
{
	char tmp[24];
	int n = 0;
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	if (neg)
		width--;
	if (neg && zero)
		put(o, '-');
	if (!left)
		for (int i = n; i < width; i++)
			put(o, zero ? '0' : ' ');
	if (neg && !zero)
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
	if (left)
		for (int i = (int)(neg ? 1 : 0) + n; i < width; i++)
			put(o, ' ');
}

int bpf_vfmt(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		bool zero = false, left = false;
		int width = 0, lng = 0;
		uint64_t v;
		int64_t sv;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (; *fmt == '0' || *fmt == '-'; fmt++) {
			if (*fmt == '0')
				zero = true;
			else
				left = true;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i':
			sv = lng ? va_arg(ap, long long) : va_arg(ap, int);
			if (lng == 1)
				sv = (long)sv;
			put_num(&o, sv < 0 ? -(uint64_t)sv : (uint64_t)sv, sv < 0, 10, false, width,
				zero, left);
			break;
		case 'u':
		case 'x':
		case 'X':
			v = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned int);
			put_num(&o, v, false, *fmt == 'u' ? 10 : 16, *fmt == 'X', width, zero, left);
			break;
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_num(&o, (uintptr_t)va_arg(ap, void *), false, 16, false, 0, false, false);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len = (int)strlen(s ? s : "(null)");

			if (!s)
				s = "(null)";
			if (!left)
				for (int i = len; i < width; i++)
					put(&o, ' ');
			while (*s)
				put(&o, *s++);
			if (left)
				for (int i = len; i < width; i++)
					put(&o, ' ');
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			if (!*fmt)
				fmt--;
			break;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int bpf_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = bpf_vfmt(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void bpf_log(struct bpf_verifier_log *log, const char *fmt, ...)
{
	va_list ap;
	uint32_t n, room;

	if (!log)
		return;
	va_start(ap, fmt);
	n = (uint32_t)bpf_vfmt(log->kbuf, sizeof(log->kbuf), fmt, ap);
	va_end(ap);
	if (n >= sizeof(log->kbuf))
		n = sizeof(log->kbuf) - 1;
	log->klen = n; /* the last message stays in kbuf for tools and tests */
	if (!log->level || !log->ubuf)
		return;
	room = log->size - log->len - 1;
	if (n > room) {
		n = room;
		log->truncated = true;
	}
	log->kbuf[n] = 0;
	if (ksvc_copy_to_user(log->ubuf + log->len, log->kbuf, n + 1)) {
		log->ubuf = NULL;
		return;
	}
	log->len += n;
	if (log->len >= log->size - 1)
		log->truncated = true;
}

int bpf_log_finish(struct bpf_verifier_log *log)
{
	if (!log->level)
		return 0;
	if (!log->ubuf)
		return -EFAULT;
	if (log->truncated)
		return -ENOSPC;
	return 0;
}
