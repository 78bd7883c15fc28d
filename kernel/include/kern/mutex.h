/*
 * mutex.h - the kernel's sleeping mutex (kernel/mutex.c): held by one task, which may sleep
 * while holding it; never taken in interrupt context, except by kmutex_trylock on behalf of
 * the interrupted task, released before the interrupt returns (bpf_find_vma).
 */
#pragma once

#include <kern/assert.h>
#include <kern/sched.h>
#include <kern/spinlock.h>

struct kmutex {
	struct spinlock lock; /* guards owner */
	struct task *owner; /* NULL when free */
	struct wait_queue wq; /* tasks waiting for owner to become NULL */
};

void kmutex_init(struct kmutex *m);
/* [sleep] */
void kmutex_lock(struct kmutex *m);
void kmutex_unlock(struct kmutex *m);
/* Unlock on behalf of owner, the task that took it (a deferred unlock: bpf_find_vma's). */
void kmutex_unlock_for(struct kmutex *m, struct task *owner);
/* [any] Take m for the current task if it is free (never sleeps): true when taken. */
bool kmutex_trylock(struct kmutex *m);
/* In a function that needs m: the caller holds it (checked in the debug build). */
#define kmutex_assert_held(m) kdebug_assert((m)->owner == current_task())
