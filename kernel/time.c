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
	t->base = -1;
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

/*
 * A timer whose callback is running on another CPU is armed there, as hrtimers stay on the
 * base running them: its cancel then finds it pending or running under that one CPU's lock.
 * Armed here meanwhile, a cancel could take it off this CPU's list while its callback still ran
 * there and return.  That CPU is in timer_irq, which reprograms once its callbacks are done.
 */
void ktimer_arm(struct ktimer *t, uint64_t deadline_ns)
{
	unsigned long f = ksvc_irq_save(); /* this_cpu() stays ours */
	struct cpu *c = this_cpu(), *b = c;
	int base = __atomic_load_n(&t->base, __ATOMIC_ACQUIRE);
	struct list_node *n;

	if (base >= 0 && base != (int)c->id) {
		struct cpu *o = &cpus[base];

		spin_lock(&o->timer_lock);
		if (t->base == base && atomic_load_explicit(&o->running_timer, memory_order_relaxed) == t)
			b = o;
		else
			spin_unlock(&o->timer_lock);
	}
	if (b == c)
		spin_lock(&c->timer_lock);
	kassert(t->cpu < 0);
	/* not still on another CPU's list (debug: list_del poisons, ktimer_init self-links) */
	kdebug_assert(t->node.next == &t->node || t->node.next == LIST_POISON_NEXT);
	kdebug_assert(b == c || b->in_timer_irq);
	t->deadline_ns = deadline_ns;
	t->cpu = (int)b->id;
	__atomic_store_n(&t->base, (int)b->id, __ATOMIC_RELEASE);
	list_for_each(n, &b->timers) {
		if (list_entry(n, struct ktimer, node)->deadline_ns > deadline_ns)
			break;
	}
	list_insert_between(&t->node, n->prev, n);
	/* from a callback, timer_irq reprograms once when they are all done */
	if (b->timers.next == &t->node && !b->in_timer_irq)
		reprogram_locked(b);
	spin_unlock(&b->timer_lock);
	/* after the unlock: perf may arm a timer of its own */
	trace_hrtimer_start(t, (uint64_t)(uintptr_t)t->fn, deadline_ns);
	ksvc_irq_restore(f);
}

#define CANCEL_REMOVED 1 /* it was pending: taken off its list */
#define CANCEL_RUNNING 2 /* its callback is running on CPU *base */

/*
 * Take t off its list if pending, and say whether its callback is running: both under the one
 * lock of its base, so that "neither" holds at one instant.  (Reading the pending CPU and the
 * running callbacks separately let a cancel see "not running", then "not pending" after the
 * timer had fired in between, and return with the callback running.)
 */
static int try_cancel(struct ktimer *t, int *running_on)
{
	for (;;) {
		int base = __atomic_load_n(&t->base, __ATOMIC_ACQUIRE), r = 0;

		if (base < 0)
			return 0; /* never armed */
		struct cpu *b = &cpus[base];
		unsigned long f = spin_lock_irqsave(&b->timer_lock);

		if (t->base != base) { /* armed elsewhere meanwhile */
			spin_unlock_irqrestore(&b->timer_lock, f);
			continue;
		}
		/* pending iff on this CPU's list: t->cpu is written under the lock of its list */
		if (t->cpu == base) {
			list_del(&t->node);
			t->cpu = -1;
			r |= CANCEL_REMOVED;
		}
		if (atomic_load_explicit(&b->running_timer, memory_order_relaxed) == t)
			r |= CANCEL_RUNNING;
		spin_unlock_irqrestore(&b->timer_lock, f);
		if (r & CANCEL_REMOVED)
			trace_hrtimer_cancel(t);
		*running_on = base;
		return r;
	}
}

/*
 * A callback may re-arm its own timer (perf's sampling clock, bpf_timer), so wait for it and
 * try again until t is neither pending nor running (as hrtimer_cancel).
 */
bool ktimer_cancel(struct ktimer *t)
{
	bool was = false;

	for (;;) {
		int base = -1, r = try_cancel(t, &base);

		was |= (r & CANCEL_REMOVED) != 0;
		if (!(r & CANCEL_RUNNING))
			return was;
		while (atomic_load_explicit(&cpus[base].running_timer, memory_order_acquire) == t)
			arch_cpu_relax();
	}
}

bool ktimer_try_cancel(struct ktimer *t)
{
	int base;

	/* not pending: nothing to take off (callers serialize it with arming) */
	if (__atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE) < 0)
		return false;
	return (try_cancel(t, &base) & CANCEL_REMOVED) != 0;
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
		/* running and not pending at once, under the lock (try_cancel) */
		t->cpu = -1;
		atomic_store_explicit(&c->running_timer, t, memory_order_relaxed);
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
