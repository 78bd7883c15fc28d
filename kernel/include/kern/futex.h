/* futex.h - futexes (kernel/futex.c). */
#pragma once

#include <stdint.h>

/* Wake up to n waiters on the current process's futex word at uaddr (CLONE_CHILD_CLEARTID). */
void futex_wake_address(uint64_t uaddr, int n);

struct uthread;

/* [sleep] Thread exit, before the CLONE_CHILD_CLEARTID write: walk the thread's robust futex
 * list (set_robust_list) and mark each lock it still holds FUTEX_OWNER_DIED, waking a waiter,
 * as Linux's exit_robust_list.  Call in the exiting thread, with its address space active. */
void futex_exit_robust_list(struct uthread *ut);
