/*
 * log.c - the verifier log (bpf_attr.log_buf / log_size / log_level of BPF_PROG_LOAD).
 *
 * Linux 6.1 semantics: each message is formatted into a kernel line buffer and copied to the
 * user buffer at once, always NUL-terminated; when the buffer fills, later text is dropped and
 * the load fails with ENOSPC; a failed copy makes it fail with EFAULT.
 * Messages are formatted by the kernel's one formatter (<kern/format.h>).  Not here: what is
 * logged (verify*.c).
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

void bpf_log(struct bpf_verifier_log *log, const char *fmt, ...)
{
	va_list ap;
	uint32_t n, room;

	if (!log)
		return;
	va_start(ap, fmt);
	n = (uint32_t)kvsnprintf(log->kbuf, sizeof(log->kbuf), fmt, ap);
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

void bpf_log_rewind(struct bpf_verifier_log *log, uint32_t pos)
{
	char zero = 0;

	if (!log || !log->level || !log->ubuf || pos > log->len)
		return;
	log->len = pos;
	log->truncated = log->len >= log->size - 1; /* what was cut off is gone with the rest */
	if (ksvc_copy_to_user(log->ubuf + pos, &zero, 1))
		log->ubuf = NULL;
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
