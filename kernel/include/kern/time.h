/*
 * time.h - time from the generic timer, and per-CPU one-shot timers.
 *
 * time_ns() is monotonic nanoseconds since boot (any context).  A ktimer fires once, in hard
 * IRQ context on the CPU that armed it (re-armed while its callback runs, on the CPU running
 * it); ktimer_cancel waits out a running callback.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>

#define TICK_HZ 250
#define NSEC_PER_SEC 1000000000ull
#define TICK_NS (NSEC_PER_SEC / TICK_HZ)

struct ktimer {
	struct list_node node; /* lock: owning CPU's timer lock */
	uint64_t deadline_ns;
	void (*fn)(struct ktimer *t);
	int cpu; /* -1 when not armed */
	int base; /* the CPU whose timer lock covers it (pending or running there), -1: never armed */
};

uint64_t time_ns(void);
uint64_t time_counter(void); /* raw CNTVCT_EL0 */
uint32_t time_counter_freq(void);
uint64_t time_ticks_to_ns(uint64_t ticks);
/* [any, after time_init] time_ns() is time_ticks_to_ns(CNTVCT_EL0 - *base_count), that is
 * (ticks * *mult) >> 32: for the vDSO, which computes it in user space. */
void time_counter_params(uint64_t *base_count, uint64_t *mult);
void ktimer_init(struct ktimer *t, void (*fn)(struct ktimer *t));
/* on this CPU, or on the CPU running its callback (not pending: callers serialize arm/cancel) */
void ktimer_arm(struct ktimer *t, uint64_t deadline_ns);
bool ktimer_cancel(struct ktimer *t); /* true when it was still pending */
/* The same without waiting out a running callback (callable from it) */
bool ktimer_try_cancel(struct ktimer *t);
void time_init_cpu(void); /* per CPU: enable the timer PPI and the tick */
void time_init(uint32_t virt_intid, uint32_t dt_freq);
