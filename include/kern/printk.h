/* printk.h - the kernel console (PL011 through arch/arm64/uart.c). */
#pragma once

#include <stdarg.h>
#include <kern/compiler.h>

void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vprintk(const char *fmt, va_list ap);
/* Write raw bytes to the console (user writes to /dev/console land here). */
void console_write(const char *buf, unsigned long n);
/* Non-blocking read of one console byte, or -1. */
int console_getc(void);
