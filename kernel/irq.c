/*
 * irq.c - the named interrupt layer: each requested interrupt gets a descriptor (Linux's virq
 * and action name) and a dispatcher registered with the GIC driver, which calls the handler
 * between the irq:irq_handler_entry and irq:irq_handler_exit tracepoints, as Linux's
 * handle_irq_event_percpu / handle_percpu_devid_irq do.
 *
 * The IPIs are actions too, at Linux's numbers and named "IPI" as arm64's set_smp_ipi_range
 * requests them: IPI_RESCHED is Linux's IPI_RESCHEDULE (0), IPI_CALL IPI_CALL_FUNC (1),
 * IPI_WORK IPI_IRQ_WORK (5); IPI_STOP never returns (gic.c handles it).
 * Does not: share an interrupt between actions, thread handlers.
 * ABI: Linux 6.1 include/trace/events/irq.h (irq_handler_entry: int irq, __string name;
 * irq_handler_exit: int irq, int ret, IRQ_HANDLED 1 / IRQ_NONE 0).
 */
#include <stdatomic.h>
#include <kern/errno.h>
#include <kern/irq.h>
#include <kern/irq_desc.h>
#include <kern/percpu.h>
#include <kern/platform.h>
#include <kern/sched.h>
#include <kern/trace.h>

#define NR_ACTIONS 16

DEFINE_PER_CPU(struct kernel_stat, kstat); /* kern/irq.h */

static struct irq_action {
	irq_action_fn fn; /* fn..intid: written at boot, before the interrupt is enabled */
	void *arg;
	const char *name;
	unsigned int virq;
	uint32_t intid;
	_Atomic unsigned int count[PLATFORM_MAX_CPUS]; /* written by its CPU in IRQ context */
} actions[NR_ACTIONS];
static _Atomic unsigned int nr_actions; /* release: the action is filled in */

static void irq_dispatch(uint32_t intid, struct trapframe *tf, void *arg)
{
	struct irq_action *a = arg;
	unsigned int cpu = this_cpu()->id;

	if (cpu < PLATFORM_MAX_CPUS)
		atomic_store_explicit(&a->count[cpu],
				      atomic_load_explicit(&a->count[cpu], memory_order_relaxed) + 1,
				      memory_order_relaxed);
	trace_irq_handler_entry(a->virq, a->name);
	bool handled = a->fn(intid, tf, a->arg);

	trace_irq_handler_exit(a->virq, handled);
}

int irq_request(uint32_t intid, unsigned int virq, const char *name, irq_action_fn fn, void *arg)
{
	unsigned int n = atomic_load_explicit(&nr_actions, memory_order_relaxed);

	if (n == NR_ACTIONS)
		return -ENOSPC;
	struct irq_action *a = &actions[n];

	a->fn = fn;
	a->arg = arg;
	a->name = name;
	a->virq = virq;
	a->intid = intid;
	int err = irq_register(intid, irq_dispatch, a);

	if (!err) /* pairs with the acquire in irq_for_each */
		atomic_store_explicit(&nr_actions, n + 1, memory_order_release);
	return err;
}

void irq_for_each(void (*fn)(void *ctx, const struct irq_info *info), void *ctx)
{
	unsigned int n = atomic_load_explicit(&nr_actions, memory_order_acquire);
	unsigned int last = 0;

	for (;;) { /* the next virq above last: a handful of interrupts */
		const struct irq_action *next = NULL;

		for (unsigned int i = 0; i < n; i++)
			if (actions[i].virq > last && (!next || actions[i].virq < next->virq))
				next = &actions[i];
		if (!next)
			return;
		struct irq_info info = { next->virq, next->intid, next->name, { 0 } };

		for (unsigned int c = 0; c < PLATFORM_MAX_CPUS; c++)
			info.count[c] = atomic_load_explicit(&next->count[c], memory_order_relaxed);
		fn(ctx, &info);
		last = next->virq;
	}
}

/* The sender set need_resched: the return from the interrupt switches (trap_irq). */
static bool ipi_resched(uint32_t intid, struct trapframe *tf, void *arg)
{
	(void)intid, (void)tf, (void)arg;
	return true;
}

static bool ipi_call(uint32_t intid, struct trapframe *tf, void *arg)
{
	(void)intid, (void)tf, (void)arg;
	smp_handle_calls();
	return true;
}

static bool ipi_work(uint32_t intid, struct trapframe *tf, void *arg)
{
	(void)intid, (void)tf, (void)arg;
	irq_work_run();
	return true;
}

void irq_init_ipis(void)
{
	irq_request(IPI_RESCHED, IRQ_VIRQ_IPI_BASE + 0, "IPI", ipi_resched, NULL);
	irq_request(IPI_CALL, IRQ_VIRQ_IPI_BASE + 1, "IPI", ipi_call, NULL);
	irq_request(IPI_WORK, IRQ_VIRQ_IPI_BASE + 5, "IPI", ipi_work, NULL);
}
