/* libc-compat: <limits.h> for libfdt headers (gcc's own limits.h chains to libc's). */
#pragma once
#define CHAR_BIT 8
#define INT_MAX 0x7fffffff
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 0xffffffffu
#define LONG_MAX 0x7fffffffffffffffl
#define ULONG_MAX 0xfffffffffffffffful
#define UINT32_MAX_ 0xffffffffu
