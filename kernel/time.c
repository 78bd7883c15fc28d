/*
 * time.c - the clock and per-CPU one-shot timers on the generic timer's virtual channel.
 *
 * time_ns() converts CNTVCT_EL0 ticks since boot to ns (128-bit multiply, exact).  Each CPU
 * keeps a sorted list of armed ktimers plus its scheduler tick, and programs CNTV_CVAL_EL0 for
 * whichever comes first.  Callbacks run in hard IRQ context on that CPU.
 * Lock: cpu->timer_lock (IRQ-safe) covers cpu->timers and each armed ktimer's node/cpu.
 */
#include <arch/sysreg.h>
#include <arch/vdso.h>
#include <kern/assert.h>
#include <kern/irq.h>
#include <kern/irq_desc.h>
#include <kern/ksvc.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/time.h>
#include <kern/trace.h>

static uint32_t freq;
static uint64_t boot_count;
static uint32_t timer_intid;

uint64_t time_counter(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

uint32_t time_counter_freq(void)
{
	return freq;
}

/* ns = ticks * 1e9 / freq as (ticks * mult) >> 32: a multiply, not a 128-bit divide (the
 * clock is read on every perf read and switch).  mult is rounded up, so the error is below one
 * nanosecond per 2^32 ticks and the clock stays monotonic.  The vDSO computes the same from
 * the same two numbers (time_counter_params), with the same function. */
static uint64_t ns_mult;

uint64_t time_ticks_to_ns(uint64_t ticks)
{
	return vdso_ticks_to_ns(ticks, ns_mult);
}

void time_counter_params(uint64_t *base_count, uint64_t *mult)
{
	*base_count = boot_count;
	*mult = ns_mult;
}

/* floor(ns * freq / 1e9) exactly, split at whole seconds so that no 128-bit divide is needed
 * (r * freq < 1e9 * 2^32 fits 64 bits): this runs each time a timer is armed or fires. */
static uint64_t ns_to_count(uint64_t ns)
{
	uint64_t s = ns / NSEC_PER_SEC, r = ns % NSEC_PER_SEC;

	return boot_count + s * freq + r * freq / NSEC_PER_SEC;
}

uint64_t time_ns(void)
{
	if (!freq)
		return 0;
	return time_ticks_to_ns(time_counter() - boot_count);
}

void ktimer_init(struct ktimer *t, void (*fn)(struct ktimer *t))
{
	list_init(&t->node);
	t->fn = fn;
	t->cpu = -1;
	t->deadline_ns = 0;
	trace_hrtimer_init(t);
}

/* Program the hardware for the earliest timer; c->timer_lock held. */
static void reprogram_locked(struct cpu *c)
{
	spin_assert_held(&c->timer_lock);
	uint64_t next = ~0ull;

	if (!list_empty(&c->timers))
		next = list_entry(c->timers.next, struct ktimer, node)->deadline_ns;
	write_sysreg(cntv_cval_el0, ns_to_count(next == ~0ull ? time_ns() + TICK_NS : next));
	write_sysreg(cntv_ctl_el0, 1);
	isb();
}

void ktimer_arm(struct ktimer *t, uint64_t deadline_ns)
{
	unsigned long f = ksvc_irq_save(); /* this_cpu() stays ours */
	struct cpu *c = this_cpu();
	struct list_node *n;

	spin_lock(&c->timer_lock);
	kassert(t->cpu < 0);
	/* not still on another CPU's list (debug: list_del poisons, ktimer_init self-links) */
	kdebug_assert(t->node.next == &t->node || t->node.next == LIST_POISON_NEXT);
	t->deadline_ns = deadline_ns;
	t->cpu = (int)c->id;
	list_for_each(n, &c->timers) {
		if (list_entry(n, struct ktimer, node)->deadline_ns > deadline_ns)
			break;
	}
	list_insert_between(&t->node, n->prev, n);
	/* from a callback, timer_irq reprograms once when they are all done */
	if (c->timers.next == &t->node && !c->in_timer_irq)
		reprogram_locked(c);
	spin_unlock(&c->timer_lock);
	/* after the unlock: perf may arm a timer of its own */
	trace_hrtimer_start(t, (uint64_t)(uintptr_t)t->fn, deadline_ns);
	ksvc_irq_restore(f);
}

/* Wait until no CPU is running t's callback (it may be using memory t lives in). */
static void wait_callback_done(struct ktimer *t)
{
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		while (atomic_load_explicit(&cpus[i].running_timer, memory_order_acquire) == t)
			arch_cpu_relax();
}

/*
 * A callback may re-arm its own timer (perf's sampling clock, bpf_timer): one that was running
 * when the first try found nothing pending can have armed t again by the time it is done, so
 * try again until t is neither pending nor running (Linux's hrtimer_cancel loops the same way).
 * Returning with t armed let its owner free it while still on a CPU's list.
 */
bool ktimer_cancel(struct ktimer *t)
{
	bool was = false;

	for (;;) {
		if (ktimer_try_cancel(t))
			was = true;
		wait_callback_done(t);
		if (__atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE) < 0)
			return was;
	}
}

bool ktimer_try_cancel(struct ktimer *t)
{
	for (;;) {
		int cpu = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE); /* pairs with timer_irq */

		if (cpu < 0)
			return false;
		struct cpu *c = &cpus[cpu];
		unsigned long f = spin_lock_irqsave(&c->timer_lock);

		if (t->cpu == cpu) {
			list_del(&t->node);
			t->cpu = -1;
			spin_unlock_irqrestore(&c->timer_lock, f);
			trace_hrtimer_cancel(t);
			return true;
		}
		spin_unlock_irqrestore(&c->timer_lock, f);
	}
}

/*
 * The tick, re-armed one period on.  A tick that finds itself later than a period re-arms one
 * period from now plus as long as it was late (at most 4 periods), rather than on the grid:
 * under QEMU's icount the vCPUs take turns, and each time a vCPU leaves its translated code
 * (an interrupt acknowledge, a timer write) the others run on, so one tick's handler can span
 * more than a period of guest time.  Re-armed on the grid, the next tick was then already due
 * when the handler returned, and the CPU went from tick to tick without ever running the task
 * it had interrupted (-smp 2 -icount: a woken pipe reader never ran).  Linux's tick (NO_HZ,
 * hrtimer_forward) skips what it missed too.
 */
static void tick_fn(struct ktimer *t)
{
	uint64_t next = t->deadline_ns + TICK_NS, now;

	sched_tick();
	now = time_ns();
	if (next <= now) {
		uint64_t late = now - t->deadline_ns;

		next = now + TICK_NS + (late < 4 * TICK_NS ? late : 4 * TICK_NS);
	}
	ktimer_arm(t, next);
}

/* The virtual timer's interrupt: handled when the timer condition is met (CNTV_CTL.ISTATUS). */
static bool timer_irq(uint32_t intid, struct trapframe *tf, void *arg)
{
	struct cpu *c = this_cpu();
	uint64_t now = time_ns();
	bool fired = (read_sysreg(cntv_ctl_el0) & 4) != 0;

	spin_lock(&c->timer_lock);
	c->in_timer_irq = true;
	while (!list_empty(&c->timers)) {
		struct ktimer *t = list_entry(c->timers.next, struct ktimer, node);

		if (t->deadline_ns > now)
			break;
		kdebug_assert(t->cpu == (int)c->id); /* on this list and no other */
		list_del(&t->node);
		/* running before disarmed, and the disarm a release: whoever sees t->cpu < 0
		 * without this lock (ktimer_cancel) sees the callback in progress too */
		atomic_store_explicit(&c->running_timer, t, memory_order_relaxed);
		__atomic_store_n(&t->cpu, -1, __ATOMIC_RELEASE);
		spin_unlock(&c->timer_lock);
		void (*fn)(struct ktimer *) = t->fn;

		trace_hrtimer_expire_entry(t, (uint64_t)(uintptr_t)fn, now);
		fn(t);
		trace_hrtimer_expire_exit(t);
		/* Release pairs with the acquire in ktimer_cancel: the callback is done with t. */
		atomic_store_explicit(&c->running_timer, NULL, memory_order_release);
		spin_lock(&c->timer_lock);
	}
	c->in_timer_irq = false;
	reprogram_locked(c);
	spin_unlock(&c->timer_lock);
	return fired;
}

void time_init(uint32_t virt_intid, uint32_t dt_freq)
{
	freq = (uint32_t)read_sysreg(cntfrq_el0);
	if (!freq)
		freq = dt_freq;
	kassert(freq);
	ns_mult = (uint64_t)((((unsigned __int128)NSEC_PER_SEC << 32) + freq - 1) / freq);
	boot_count = read_sysreg(cntvct_el0);
	timer_intid = virt_intid;
	irq_request(timer_intid, IRQ_VIRQ_ARCH_TIMER, "arch_timer", timer_irq, NULL);
}

void time_init_cpu(void)
{
	struct cpu *c = this_cpu();

	irq_enable(timer_intid, true);
	/* EL0 reads the virtual counter and CNTFRQ, nothing else (Linux's
	 * arch_counter_set_user_access): CNTKCTL_EL1.EL0VCTEN only */
	write_sysreg(cntkctl_el1, (read_sysreg(cntkctl_el1) & ~0x3ffull) | (1ull << 1));
	isb();
	ktimer_init(&c->tick, tick_fn);
	ktimer_arm(&c->tick, time_ns() + TICK_NS);
}
