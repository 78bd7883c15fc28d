/*
 * spinlock.h - IRQ-safe ticket spinlocks on C11 atomics.
 *
 * Portable: the kernel and host tests share it; interrupt masking goes through the ksvc seam.
 * spin_lock_irqsave is the form to use for anything an interrupt handler may also take.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <kern/assert.h>
#include <kern/ksvc.h>

struct spinlock {
	_Atomic uint16_t next; /* ticket handed to the next locker */
	_Atomic uint16_t owner; /* ticket now holding the lock */
	int32_t holder_cpu; /* -1 when free; for spin_is_held_by_me assertions */
	uintptr_t holder_pc; /* KDEBUG: where the holder's function returns to (a hang's culprit) */
};

#define SPINLOCK_INIT { 0, 0, -1, 0 }

static inline void spin_init(struct spinlock *l)
{
	atomic_store_explicit(&l->next, 0, memory_order_relaxed);
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
	l->holder_cpu = -1;
}

void arch_cpu_relax(void);

static inline void spin_lock(struct spinlock *l)
{
	uint16_t me = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);

	/* Acquire pairs with the release in spin_unlock of the previous holder. */
	while (atomic_load_explicit(&l->owner, memory_order_acquire) != me)
		arch_cpu_relax();
	l->holder_cpu = (int32_t)ksvc_cpu_id();
	if (KDEBUG) /* a store on every lock, the debug build only */
		l->holder_pc = (uintptr_t)__builtin_return_address(0);
}

static inline bool spin_trylock(struct spinlock *l)
{
	uint16_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
	uint16_t expect = owner;

	if (!atomic_compare_exchange_strong_explicit(&l->next, &expect, (uint16_t)(owner + 1),
						     memory_order_acquire, memory_order_relaxed))
		return false;
	l->holder_cpu = (int32_t)ksvc_cpu_id();
	return true;
}

static inline void spin_unlock(struct spinlock *l)
{
	uint16_t o = atomic_load_explicit(&l->owner, memory_order_relaxed);

	l->holder_cpu = -1;
	/* Release pairs with the acquire in spin_lock of the next holder. */
	atomic_store_explicit(&l->owner, (uint16_t)(o + 1), memory_order_release);
}

static inline bool spin_is_held_by_me(const struct spinlock *l)
{
	return l->holder_cpu == (int32_t)ksvc_cpu_id();
}

/* In a *_locked function: the caller holds l (checked in the debug build and host tests). */
static inline void spin_assert_held(const struct spinlock *l)
{
	kdebug_assert(spin_is_held_by_me(l));
}

static inline unsigned long spin_lock_irqsave(struct spinlock *l)
{
	unsigned long flags = ksvc_irq_save();

	spin_lock(l);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, unsigned long flags)
{
	spin_unlock(l);
	ksvc_irq_restore(flags);
}
