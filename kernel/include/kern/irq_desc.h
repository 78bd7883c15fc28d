/*
 * irq_desc.h - named interrupt handlers over the GIC (kernel/irq.c): the layer between
 * arch/arm64/gic.c's per-INTID table and the drivers, where the irq:irq_handler_entry/exit
 * tracepoints fire.  arch/ never calls trace/: it calls the dispatcher kernel/irq.c registered.
 *
 * An interrupt has Linux's identity: the number Linux 6.1 arm64 gives it on QEMU virt (its
 * virq, shown in /proc/interrupts and in the tracepoints' irq field) and its action's name
 * ("arch_timer", "arm-pmu", "IPI").
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct trapframe;

/* [hard IRQ, interrupts masked] Handle intid; true when the device had raised it (Linux's
 * IRQ_HANDLED), false otherwise (IRQ_NONE). */
typedef bool (*irq_action_fn)(uint32_t intid, struct trapframe *tf, void *arg);

/* Linux 6.1's virqs on QEMU virt: the IPIs take 1..7 (IPI n is n + 1), then the GIC's
 * interrupts in device tree probe order. */
#define IRQ_VIRQ_IPI_BASE 1
#define IRQ_NR_LINUX_IPIS 7 /* arm64's NR_IPI */
#define IRQ_VIRQ_ARCH_TIMER 11
#define IRQ_VIRQ_ARM_PMU 14

/* [boot] Route intid (SGI, PPI or SPI) to fn, traced as interrupt virq named name (a string
 * that lives forever).  0, or -EINVAL / -EBUSY as irq_register. */
int irq_request(uint32_t intid, unsigned int virq, const char *name, irq_action_fn fn, void *arg);

/* [boot, after gic_init] The IPIs (kern/irq.h's IPI_*) as Linux's, traced "IPI". */
void irq_init_ipis(void);

/* What /proc/interrupts shows of one interrupt. */
struct irq_info {
	unsigned int virq; /* IPIs: IRQ_VIRQ_IPI_BASE + Linux's IPI number */
	uint32_t intid; /* the GIC's hwirq */
	const char *name;
	unsigned int count[8]; /* per CPU (PLATFORM_MAX_CPUS), this boot */
};
/* [any] The requested interrupts in ascending virq, one call of fn each. */
void irq_for_each(void (*fn)(void *ctx, const struct irq_info *info), void *ctx);
