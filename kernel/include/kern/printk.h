/* printk.h - the kernel console (PL011 through arch/arm64/uart.c) and the kernel log
 * (kernel/klog.c: syslog(2), /dev/kmsg, busybox dmesg).  printk writes both; klog only the log. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/compiler.h>

void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vprintk(const char *fmt, va_list ap);
/* Write raw bytes to the console (user writes to /dev/console land here). */
void console_write(const char *buf, unsigned long n);
/* Non-blocking read of one console byte, or -1. */
int console_getc(void);

/* The log only, not the console: per-call diagnostics (an unknown syscall, an unhandled
 * signal).  level: 0 (emerg) .. 7 (debug), as KERN_*; one record per call. */
void klog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vklog(int level, const char *fmt, va_list ap);
/* printk's text into the log (level 6); a line without its newline is continued. */
void klog_printk_text(const char *s, size_t n);

/* Linux's default ratelimit: 10 messages per 5 s per call site, then a count of the rest. */
#define KLOG_RATELIMIT_INTERVAL_NS (5000000000ull)
#define KLOG_RATELIMIT_BURST 10
struct klog_ratelimit {
	uint64_t begin_ns;
	unsigned int printed, missed;
};
bool klog_ratelimit_ok(struct klog_ratelimit *rl);
#define klog_ratelimited(level, ...)                                                               \
	do {                                                                                       \
		static struct klog_ratelimit klog_rl_;                                             \
		if (klog_ratelimit_ok(&klog_rl_))                                                  \
			klog((level), __VA_ARGS__);                                                \
	} while (0)
