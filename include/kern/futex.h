/* futex.h - futexes (kernel/futex.c). */
#pragma once

#include <stdint.h>

/* Wake up to n waiters on the current process's futex word at uaddr (CLONE_CHILD_CLEARTID). */
void futex_wake_address(uint64_t uaddr, int n);
