/*
 * irq.h - interrupt registration over the GIC (arch/arm64/gic.c).  Handlers run in hard-IRQ
 * context with interrupts masked; they must not sleep or allocate.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/percpu.h>

struct trapframe;
typedef void (*irq_handler_t)(uint32_t intid, struct trapframe *tf, void *arg);

#define IPI_RESCHED 0
#define IPI_CALL 1
#define IPI_STOP 2
#define IPI_WORK 3 /* ksvc_irq_work (kernel/ksvc.c) */

/* Register the handler of an INTID (SGI, PPI or SPI); PPIs are then enabled per CPU. */
int irq_register(uint32_t intid, irq_handler_t fn, void *arg);
/* Enable/disable an INTID: for SGIs and PPIs on the calling CPU, for SPIs globally. */
void irq_enable(uint32_t intid, bool level);
void irq_disable(uint32_t intid);
void ipi_send(unsigned int cpu, unsigned int sgi);
int gic_version(void);
/* Run this CPU's queued ksvc_irq_work (the IPI_WORK handler; interrupts masked). */
void irq_work_run(void);

/*
 * Per-CPU interrupt statistics, Linux's struct kernel_stat (include/linux/kernel_stat.h) as
 * the per-CPU variable kstat: irqs_sum counts the interrupts this CPU took (every INTID the GIC
 * acknowledged, IPIs and the timer included, as Linux's kstat_incr_irqs_this_cpu).  Linux's
 * softirqs[] counts are absent: there are no softirqs here.  Written by its CPU in IRQ context.
 */
struct kernel_stat {
	unsigned long irqs_sum;
};
DECLARE_PER_CPU(struct kernel_stat, kstat);
