/*
 * string.h - the C string and memory functions the kernel provides (kernel/lib/string.c).
 * Portable files include this instead of <string.h>; on the host the C library supplies them
 * with the same prototypes.
 */
#pragma once

#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t maxlen);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
/* base 0 (0x.. hex, 0.. octal, else decimal), 8, 10 or 16; no sign, no locale */
unsigned long strtoul(const char *s, char **end, int base);
