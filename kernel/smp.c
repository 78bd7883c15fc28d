/*
 * smp.c - bringing up secondary CPUs (PSCI CPU_ON) and cross-CPU function calls over IPIs.
 *
 * smp_call queues an entry on the target CPU and raises IPI_CALL; the target runs the function
 * in IRQ context.  A waiting caller spins with its own call queue serviced, so two CPUs calling
 * each other with interrupts masked cannot deadlock.
 * Lock: cpu->call_lock (IRQ-safe) covers cpu->calls.
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <kern/irq.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/platform.h>

struct call_entry {
	struct list_node node;
	void (*fn)(void *);
	void *arg;
	_Atomic int done;
	bool heap; /* fire-and-forget entries are freed by the target */
};

uint64_t secondary_stack_tops[MAX_CPUS];
extern void secondary_entry(void);
extern struct platform boot_platform;
void secondary_main(unsigned int cpu);
void kernel_cpu_online(struct cpu *c);

/*
 * Run the calls queued for this CPU, each with interrupts masked as in the IPI.  The CPU is
 * read with interrupts masked too: a waiting caller runs this from a preemptible task, and one
 * preempted and moved between reading its CPU and taking that CPU's queue ran another CPU's
 * calls where it now was (perf's remote_call acts on the CPU it runs on).
 */
void smp_handle_calls(void)
{
	for (;;) {
		unsigned long f = ksvc_irq_save();
		struct cpu *c = this_cpu();

		spin_lock(&c->call_lock);
		struct list_node *n = list_pop_head(&c->calls);

		spin_unlock(&c->call_lock);
		if (!n) {
			ksvc_irq_restore(f);
			return;
		}
		struct call_entry *e = list_entry(n, struct call_entry, node);
		bool heap = e->heap;

		/* A call runs as in the IPI, interrupts masked, also when a CPU waiting in
		 * smp_call picks it up with interrupts on: the callee's spin_locks (perf's
		 * remote_call takes a context lock the tick takes too) rely on it. */
		e->fn(e->arg);
		ksvc_irq_restore(f);
		if (heap)
			kfree(e);
		else
			atomic_store_explicit(&e->done, 1, memory_order_release);
	}
}

void smp_call(unsigned int cpu, void (*fn)(void *), void *arg, bool wait)
{
	struct call_entry local, *e = &local;
	/* masked from the CPU check to the call: a caller moved in between ran it elsewhere */
	unsigned long f = ksvc_irq_save();

	if (cpu == this_cpu()->id) {
		fn(arg);
		ksvc_irq_restore(f);
		return;
	}
	ksvc_irq_restore(f);
	if (!wait) {
		e = kmalloc(sizeof(*e));
		if (!e)
			wait = true, e = &local; /* no memory: fall back to waiting on the stack */
		else
			e->heap = true;
	}
	if (e == &local)
		local.heap = false;
	e->fn = fn;
	e->arg = arg;
	atomic_store(&e->done, 0);
	struct cpu *t = &cpus[cpu];

	f = spin_lock_irqsave(&t->call_lock);
	list_add_tail(&t->calls, &e->node);
	spin_unlock_irqrestore(&t->call_lock, f);
	ipi_send(cpu, IPI_CALL);
	if (!wait)
		return;
	while (!atomic_load_explicit(&e->done, memory_order_acquire)) {
		smp_handle_calls();
		arch_cpu_relax();
	}
}

void smp_call_all(void (*fn)(void *), void *arg)
{
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (cpus[i].online)
			smp_call(i, fn, arg, true);
}

void smp_boot_secondaries(void)
{
	for (unsigned int i = 1; i < nr_cpus_possible; i++) {
		void *stack = alloc_pages(2);

		if (!stack) {
			printk("smp: no memory for cpu %u\n", i);
			continue;
		}
		secondary_stack_tops[i] = (uint64_t)stack + KSTACK_SIZE;
		dsb_sy();
		int err = psci_cpu_on(cpus[i].mpidr, virt_to_phys((void *)secondary_entry), i);

		if (err) {
			printk("smp: cpu %u (mpidr %lx) failed to start: %d\n", i, cpus[i].mpidr, err);
			continue;
		}
		uint64_t deadline = time_ns() + 1000000000ull;

		while (!atomic_load(&cpus[i].online) && time_ns() < deadline)
			arch_cpu_relax();
		if (!atomic_load(&cpus[i].online))
			printk("smp: cpu %u did not come online\n", i);
	}
}

void secondary_main(unsigned int cpu)
{
	struct cpu *c = &cpus[cpu];

	write_sysreg(tpidr_el1, c);
	kernel_cpu_online(c);
	idle_loop();
}
