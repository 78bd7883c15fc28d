/*
 * klog.c - the kernel log: a ring of records that printk (console and log) and klog (log
 * only: per-call diagnostics, rate-limited) append to, read back through syslog(2) (klogctl,
 * busybox dmesg) and /dev/kmsg.
 *
 * What it does: syslog(2)'s actions as Linux 6.1's do_syslog: CLOSE/OPEN (0), READ (the
 * records not read yet, as many whole ones as fit), READ_ALL and READ_CLEAR (the newest whole
 * records that fit, since the last CLEAR), CLEAR, CONSOLE_OFF/ON/LEVEL (1-8, else EINVAL),
 * SIZE_UNREAD, SIZE_BUFFER; EINVAL for another action, a NULL buffer or a negative length,
 * EFAULT for a bad buffer.  Each record reads as "<prio>[seconds.micros] text\n" (Linux with
 * CONFIG_PRINTK_TIME).  /dev/kmsg (1:11): each read returns one record as
 * "prio,seq,usecs,-;text\n" (EINVAL when it does not fit, and the record is passed, EPIPE once after records were
 * overwritten under the reader), lseek SEEK_SET 0 / SEEK_END / SEEK_DATA; a write adds a
 * record ("<N>" in front sets the level and facility, LOG_USER by default).
 *
 * What it does not do: block.  READ and a /dev/kmsg read with nothing new return 0 and
 * EAGAIN where Linux waits; the console level is kept but printk's console output (boot
 * messages, panics) ignores it.  Records longer than KLOG_TEXT bytes are cut; non-printable
 * bytes are not escaped in /dev/kmsg.
 *
 * ABI: SYSLOG_ACTION_* of include/linux/syslog.h (not in the uapi headers: numbers as
 * syslog(2)); /dev/kmsg as Documentation/ABI/testing/dev-kmsg.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <arch/memlayout.h>
#include <fs/vfs.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/fs.h>

enum {
	SYSLOG_ACTION_CLOSE,
	SYSLOG_ACTION_OPEN,
	SYSLOG_ACTION_READ,
	SYSLOG_ACTION_READ_ALL,
	SYSLOG_ACTION_READ_CLEAR,
	SYSLOG_ACTION_CLEAR,
	SYSLOG_ACTION_CONSOLE_OFF,
	SYSLOG_ACTION_CONSOLE_ON,
	SYSLOG_ACTION_CONSOLE_LEVEL,
	SYSLOG_ACTION_SIZE_UNREAD,
	SYSLOG_ACTION_SIZE_BUFFER,
};

#define KLOG_RECORDS 512
#define KLOG_TEXT 200
#define KLOG_BUF_LEN (KLOG_RECORDS * 256) /* SIZE_BUFFER: every record formatted fits */
#define KLOG_FMT_MAX (KLOG_TEXT + 48)
#define LOG_USER (1 << 3)

struct klog_rec {
	uint64_t seq;
	uint64_t ts_ns;
	uint8_t prio; /* facility << 3 | level */
	bool open; /* printk's line not finished yet: later text continues it */
	uint16_t len;
	char text[KLOG_TEXT + 1]; /* NUL-terminated */
};

static struct spinlock klog_lock = SPINLOCK_INIT;
/* records [first, next) are held, at recs[seq % KLOG_RECORDS]; all (klog_lock) */
static struct klog_rec recs[KLOG_RECORDS];
static uint64_t next_seq, clear_seq, read_seq;
static int console_loglevel = 7;

static uint64_t first_seq_locked(void)
{
	return next_seq > KLOG_RECORDS ? next_seq - KLOG_RECORDS : 0;
}

static struct klog_rec *new_rec_locked(int prio)
{
	struct klog_rec *r = &recs[next_seq % KLOG_RECORDS];

	r->seq = next_seq++;
	r->ts_ns = time_ns();
	r->prio = (uint8_t)prio;
	r->open = false;
	r->len = 0;
	return r;
}

/* Append text: each line a record; a printk line without its newline stays open (cont). */
static void klog_store(int prio, const char *s, size_t n, bool cont)
{
	unsigned long f = spin_lock_irqsave(&klog_lock);
	struct klog_rec *r = next_seq ? &recs[(next_seq - 1) % KLOG_RECORDS] : NULL;

	if (!cont || !r || !r->open)
		r = NULL;
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t seg = nl ? (size_t)(nl - s) : n;

		if (!r)
			r = new_rec_locked(prio);
		size_t room = KLOG_TEXT - r->len, take = MIN(seg, room);

		memcpy(r->text + r->len, s, take);
		r->len += (uint16_t)take;
		r->text[r->len] = 0;
		r->open = cont && !nl;
		if (nl)
			r = NULL;
		s += seg + (nl ? 1 : 0);
		n -= seg + (nl ? 1 : 0);
	}
	spin_unlock_irqrestore(&klog_lock, f);
}

void klog_printk_text(const char *s, size_t n)
{
	klog_store(6, s, n, true);
}

void vklog(int level, const char *fmt, va_list ap)
{
	char line[KLOG_TEXT + 1];
	int n = kvsnprintf(line, sizeof(line), fmt, ap);

	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (n > 0 && line[n - 1] == '\n')
		n--;
	klog_store(level & 7, line, (size_t)n, false);
}

void klog(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vklog(level, fmt, ap);
	va_end(ap);
}

/* Linux's ___ratelimit: burst messages per interval, then a count of those dropped. */
bool klog_ratelimit_ok(struct klog_ratelimit *rl)
{
	uint64_t now = time_ns();
	unsigned long f = spin_lock_irqsave(&klog_lock);
	unsigned int missed = 0;
	bool ok;

	if (!rl->begin_ns || now - rl->begin_ns >= KLOG_RATELIMIT_INTERVAL_NS) {
		missed = rl->missed;
		rl->begin_ns = now ? now : 1;
		rl->printed = 0;
		rl->missed = 0;
	}
	ok = rl->printed < KLOG_RATELIMIT_BURST;
	if (ok)
		rl->printed++;
	else
		rl->missed++;
	spin_unlock_irqrestore(&klog_lock, f);
	if (missed)
		klog(4, "klog: %u messages suppressed", missed);
	return ok;
}

/* A copy of record seq, if still held. */
static bool rec_get(uint64_t seq, struct klog_rec *out)
{
	unsigned long f = spin_lock_irqsave(&klog_lock);
	bool ok = seq >= first_seq_locked() && seq < next_seq;

	if (ok)
		*out = recs[seq % KLOG_RECORDS];
	spin_unlock_irqrestore(&klog_lock, f);
	return ok;
}

static size_t fmt_syslog(const struct klog_rec *r, char *buf)
{
	uint64_t us = r->ts_ns / 1000;

	return (size_t)ksnprintf(buf, KLOG_FMT_MAX, "<%u>[%5lu.%06lu] %s\n", r->prio,
				 (unsigned long)(us / 1000000), (unsigned long)(us % 1000000), r->text);
}

static void seq_window(uint64_t from, uint64_t *start, uint64_t *end)
{
	unsigned long f = spin_lock_irqsave(&klog_lock);

	*start = MAX(from, first_seq_locked());
	*end = next_seq;
	spin_unlock_irqrestore(&klog_lock, f);
}

/* Bytes the records [start, end) take formatted. */
static long fmt_total(uint64_t start, uint64_t end)
{
	char *line = kmalloc(KLOG_FMT_MAX);
	struct klog_rec r;
	long total = 0;

	if (!line)
		return -ENOMEM;
	for (uint64_t s = start; s < end; s++)
		if (rec_get(s, &r))
			total += (long)fmt_syslog(&r, line);
	kfree(line);
	return total;
}

/* Copy whole records from *seq on while they fit in len bytes; *seq moves past them. */
static long copy_records(char *ubuf, long len, uint64_t *seq, uint64_t end)
{
	char *line = kmalloc(KLOG_FMT_MAX);
	struct klog_rec r;
	long done = 0;

	if (!line)
		return -ENOMEM;
	for (; *seq < end; (*seq)++) {
		if (!rec_get(*seq, &r))
			continue;
		size_t n = fmt_syslog(&r, line);

		if ((long)n > len - done)
			break;
		if (ksvc_copy_to_user(ubuf + done, line, n)) {
			kfree(line);
			return done ? done : -EFAULT;
		}
		done += (long)n;
	}
	kfree(line);
	return done;
}

/* READ_ALL / READ_CLEAR: the newest whole records since the last CLEAR that fit. */
static long read_all(char *ubuf, long len, bool clear)
{
	uint64_t start, end;
	struct klog_rec r;
	char *line;
	long total;

	seq_window(clear_seq, &start, &end);
	total = fmt_total(start, end);
	if (total < 0)
		return total;
	line = kmalloc(KLOG_FMT_MAX);
	if (!line)
		return -ENOMEM;
	for (; start < end && total > len; start++)
		if (rec_get(start, &r))
			total -= (long)fmt_syslog(&r, line);
	kfree(line);
	long n = copy_records(ubuf, len, &start, end);

	if (n >= 0 && clear) {
		unsigned long f = spin_lock_irqsave(&klog_lock);

		clear_seq = end;
		spin_unlock_irqrestore(&klog_lock, f);
	}
	return n;
}

static long sys_syslog(uint64_t type, uint64_t ubuf, uint64_t ulen)
{
	int len = (int)ulen;
	uint64_t start, end;
	unsigned long f;
	long n;

	switch ((int)type) {
	case SYSLOG_ACTION_CLOSE:
	case SYSLOG_ACTION_OPEN:
		return 0;
	case SYSLOG_ACTION_READ:
	case SYSLOG_ACTION_READ_ALL:
	case SYSLOG_ACTION_READ_CLEAR:
		if (!ubuf || len < 0)
			return -EINVAL;
		if (!len)
			return 0;
		if (ubuf >= USER_VA_END || (uint64_t)len > USER_VA_END - ubuf)
			return -EFAULT;
		if ((int)type != SYSLOG_ACTION_READ)
			return read_all((char *)ubuf, len, (int)type == SYSLOG_ACTION_READ_CLEAR);
		seq_window(read_seq, &start, &end);
		n = copy_records((char *)ubuf, len, &start, end);
		f = spin_lock_irqsave(&klog_lock);
		if (n > 0 && start > read_seq)
			read_seq = start;
		spin_unlock_irqrestore(&klog_lock, f);
		return n;
	case SYSLOG_ACTION_CLEAR:
		f = spin_lock_irqsave(&klog_lock);
		clear_seq = next_seq;
		spin_unlock_irqrestore(&klog_lock, f);
		return 0;
	case SYSLOG_ACTION_CONSOLE_OFF:
		console_loglevel = 1;
		return 0;
	case SYSLOG_ACTION_CONSOLE_ON:
		console_loglevel = 7;
		return 0;
	case SYSLOG_ACTION_CONSOLE_LEVEL:
		if (len < 1 || len > 8)
			return -EINVAL;
		console_loglevel = len < 2 ? 2 : len; /* minimum_console_loglevel */
		return 0;
	case SYSLOG_ACTION_SIZE_UNREAD:
		seq_window(read_seq, &start, &end);
		return fmt_total(start, end);
	case SYSLOG_ACTION_SIZE_BUFFER:
		return KLOG_BUF_LEN;
	default:
		return -EINVAL;
	}
}
SYSCALL(__NR_syslog, sys_syslog);

/* ---- /dev/kmsg: f->pos is the next record's seq + 1 (0: the oldest held) ---- */

static long kmsg_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	char *line;
	struct klog_rec r;
	uint64_t start, end, seq;

	seq_window(0, &start, &end);
	seq = *pos ? *pos - 1 : start;
	if (seq < start) {
		*pos = start + 1;
		return -EPIPE;
	}
	if (seq >= end || !rec_get(seq, &r))
		return -EAGAIN;
	line = kmalloc(KLOG_FMT_MAX);
	if (!line)
		return -ENOMEM;
	size_t len = (size_t)ksnprintf(line, KLOG_FMT_MAX, "%u,%lu,%lu,-;%s\n", r.prio,
				       (unsigned long)r.seq, (unsigned long)(r.ts_ns / 1000), r.text);
	long ret = (long)len;

	*pos = seq + 2; /* consumed even when it does not fit, as Linux's devkmsg_read */
	if (len > n)
		ret = -EINVAL;
	else if (ksvc_copy_to_user(ubuf, line, len))
		ret = -EFAULT;
	kfree(line);
	return ret;
}

static long kmsg_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	char *k;
	size_t at = 0;
	int prio = LOG_USER | 4; /* default_message_loglevel, facility LOG_USER */

	if (n > 1024)
		return -EINVAL; /* LOG_LINE_MAX */
	k = kmalloc(n + 1);
	if (!k)
		return -ENOMEM;
	if (ksvc_copy_from_user(k, ubuf, n)) {
		kfree(k);
		return -EFAULT;
	}
	k[n] = 0;
	if (k[0] == '<') {
		int v = 0;
		size_t i = 1;

		while (i < n && i < 12 && k[i] >= '0' && k[i] <= '9')
			v = v * 10 + (k[i++] - '0');
		if (i > 1 && i < n && k[i] == '>') {
			prio = (v >> 3) ? v & 0x3ff : LOG_USER | (v & 7);
			at = i + 1;
		}
	}
	size_t len = n - at;

	if (len && k[at + len - 1] == '\n')
		len--;
	klog_store(prio & 0xff, k + at, len, false);
	kfree(k);
	return (long)n;
}

static int64_t kmsg_llseek(struct file *f, int64_t off, int whence)
{
	uint64_t start, end;

	if (off)
		return -ESPIPE;
	seq_window(whence == SEEK_DATA ? clear_seq : 0, &start, &end);
	if (whence == SEEK_SET || whence == SEEK_DATA)
		f->pos = start + 1;
	else if (whence == SEEK_END)
		f->pos = end + 1;
	else
		return -EINVAL;
	return 0;
}

const struct file_ops klog_kmsg_fops = {
	.read = kmsg_read,
	.write = kmsg_write,
	.llseek = kmsg_llseek,
};
