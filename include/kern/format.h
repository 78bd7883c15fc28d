/* format.h - kernel vsnprintf (kernel/lib/format.c): the printf subset documented in ksvc.h. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

/* Like C's vsnprintf: returns the length the full output would have, always NUL-terminates. */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
