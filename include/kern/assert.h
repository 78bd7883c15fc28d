/*
 * assert.h - kernel invariants.  Never for user input: user input gets an errno.
 * kassert is on in every build; a failure is a kernel bug and panics with file and line.
 */
#pragma once

#include <kern/compiler.h>

__noreturn void kpanic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define kassert(cond)                                                                              \
	do {                                                                                       \
		if (unlikely(!(cond)))                                                             \
			kpanic("assertion failed: %s at %s:%d", #cond, __FILE__, __LINE__);        \
	} while (0)

/*
 * The debug build (make DEBUG=1, and every host test) sets KDEBUG to 1: freed memory is
 * poisoned and checked, reference counts trap on underflow and on use after zero.  The checks
 * are ordinary code under if (KDEBUG), so both builds compile all of it.
 */
#ifndef KDEBUG
#define KDEBUG 0
#endif
#define kdebug_assert(cond)                                                                        \
	do {                                                                                       \
		if (KDEBUG)                                                                        \
			kassert(cond);                                                             \
	} while (0)
