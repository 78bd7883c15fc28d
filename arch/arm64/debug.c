/*
 * debug.c - hardware breakpoints and watchpoints (perf's PERF_TYPE_BREAKPOINT) at the exception
 * level: the debug exceptions from EL0 and from EL1, and the step over the instruction that hit.
 *
 * A breakpoint exception comes before its instruction runs, a watchpoint exception before its
 * access happens: to go on, the CPU steps over that one instruction with the slots of that
 * exception level suspended (MDSCR_EL1.SS and SPSR.SS), and the software-step exception that
 * follows resumes them, as Linux's breakpoint_handler / reinstall_suspended_bps.
 *
 * User hits: the task carries the state (uthread.dbg_step) and each CPU follows the user task
 * it runs (cpu.dbg_stepping: its EL0 slots suspended, set by debug_switch at every switch to a
 * user task).  MDSCR_EL1.SS is set only on the way back to EL0 (debug_user_return) and cleared
 * on every way in (debug_user_enter), so that kernel code, which runs with debug exceptions
 * unmasked (MDSCR_EL1.KDE, PSTATE.D clear from a user exception's entry on), never sees it.
 *
 * Kernel hits: the exception masks PSTATE.D, so the handler and whatever it calls never trap
 * again (no recursion, whatever address a breakpoint is on).  The step runs with the kernel's
 * slots of this CPU suspended and interrupts masked in the stepped context (no interrupt
 * handler or context switch in between, so the per-CPU state stays this CPU's); the step
 * exception puts the interrupt mask back.  The instructions that read or write DAIF (mrs/msr
 * daif, msr daifset/daifclr) are emulated instead: stepped, they would see the forced mask or
 * set PSTATE.D, which holds the step exception off for good.  If the stepped instruction
 * itself traps (a user-copy fault that may sleep, a kprobe's BRK), the step is cancelled at
 * that trap and the instruction hits again when retried: that second hit is not counted.
 * A hit inside a load/store-exclusive sequence restarts the sequence and lets it run unstepped
 * up to a guard breakpoint on its exits (guard_excl), since a step there would retry forever;
 * the guards are dropped at a context switch or the return to EL0 if no exit was reached.
 *
 * What a hit means belongs above arch/: the breakpoint slots' owner (perf's hw_breakpoint PMU)
 * registers its handler here at boot, as the PMU interrupt's handler registers with the
 * interrupt code.
 */
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <arch/debug.h>
#include <arch/dbg_sysreg.h>
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <kern/ksvc.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/assert.h>

#define MDSCR_SS (1ull << 0)
#define MDSCR_KDE (1ull << 13)
#define MDSCR_MDE (1ull << 15)
#define PSR_SS (1ull << 21)

static struct {
	bool (*hit)(bool watch, uint64_t addr, bool write, const uint64_t *regs, bool user,
		    bool irqs_off);
	void (*suspend)(bool kernel, bool on);
} hw;

/* This CPU's step over a kernel hit [IRQs masked, this CPU]. */
struct kstep {
	bool active;
	uint64_t pc;	    /* the stepped instruction */
	uint64_t irq_mask;  /* its context's PSR_I, restored after the step */
	struct task *task;  /* the task it was in ... */
	uint64_t rehit_pc;  /* ... and the instruction a cancelled step retries (0: none) */
	struct task *rehit_task;
	unsigned int nguard; /* execute slots 0.. borrowed as guards (guard_excl) */
};
static struct kstep ksteps[MAX_CPUS];

void debug_hw_register(bool (*hit)(bool watch, uint64_t addr, bool write, const uint64_t *regs,
				   bool user, bool irqs_off),
		       void (*suspend)(bool kernel, bool on))
{
	kassert(!hw.hit);
	hw.hit = hit;
	hw.suspend = suspend;
}

void debug_cpu_init(void)
{
	write_sysreg(oslar_el1, 0); /* the OS lock blocks debug exceptions until opened */
	/* breakpoints and watchpoints on, at EL1 too wherever PSTATE.D is clear */
	write_sysreg(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
	isb();
}

/* After any change of the three flags: whether debug_user_return has work */
static void note_return_work(struct cpu *c)
{
	c->dbg_return_work = c->dbg_kguard || c->dbg_stepping != c->dbg_ss_armed;
}

static void set_step(bool on)
{
	uint64_t m = read_sysreg(mdscr_el1);

	write_sysreg(mdscr_el1, on ? m | MDSCR_SS : m & ~MDSCR_SS);
	isb();
}

void debug_switch_slow(bool next_stepping)
{
	struct cpu *c = this_cpu();

	c->dbg_stepping = next_stepping;
	note_return_work(c);
	if (hw.suspend)
		hw.suspend(false, next_stepping);
}

void debug_user_enter_slow(void)
{
	this_cpu()->dbg_ss_armed = false;
	note_return_work(this_cpu());
	set_step(false);
}

static void user_return_step(void)
{
	this_cpu()->dbg_ss_armed = true;
	note_return_work(this_cpu());
	set_step(true);
}

void debug_user_return_slow(void)
{
	struct cpu *c = this_cpu();

	debug_kguard_drop();
	if (c->dbg_stepping != c->dbg_ss_armed)
		c->dbg_stepping ? user_return_step() : debug_user_enter_slow();
}

void debug_user_trap(struct trapframe *tf, unsigned int ec)
{
	struct uthread *ut = current_uthread();

	/* debug exceptions off first: perf's handler below never runs inside itself (the
	 * entry, trap_el0_sync, unmasks them for every class, to keep the syscall path short) */
	__asm__ volatile("msr daifset, #8" ::: "memory");
	unsigned long f = ksvc_irq_save(); /* this CPU's slots and MDSCR stay ours */

	switch (ec) {
	case ESR_EC_BREAKPT_LOW:
	case ESR_EC_WATCHPT_LOW:
		if (hw.hit && ec == ESR_EC_BREAKPT_LOW)
			hw.hit(false, tf->pc, false, (const uint64_t *)tf, true, false);
		else if (hw.hit)
			hw.hit(true, tf->far, (tf->esr & ESR_WNR) != 0, (const uint64_t *)tf, true,
			       false);
		/* step over it, hit or not: a slot that is still on would trap again forever */
		ut->dbg_step = true;
		debug_switch(true);
		tf->pstate |= PSR_SS;
		break;
	case ESR_EC_SOFTSTP_LOW:
		if (!ut->dbg_step) {
			ksvc_irq_restore(f);
			signal_force_fault(SIGTRAP, TRAP_TRACE, tf->pc); /* not ours: as a debugger's */
			return;
		}
		ut->dbg_step = false;
		debug_switch(false);
		tf->pstate &= ~PSR_SS;
		break;
	}
	ksvc_irq_restore(f);
}

/* ---- kernel hits (EL1, debug exceptions masked) ---- */

static struct kstep *this_kstep(void)
{
	return &ksteps[this_cpu()->id % MAX_CPUS];
}

static void kstep_end(struct kstep *k)
{
	k->active = false;
	set_step(false);
	if (hw.suspend)
		hw.suspend(true, false);
}

#define GUARDS_MAX 4

#define INSN_MRS_DAIF 0xd53b4220u	/* mrs xt, daif (| t) */
#define INSN_MSR_DAIF 0xd51b4220u	/* msr daif, xt (| t) */
#define INSN_MSR_DAIFSET 0xd50340dfu	/* msr daifset, #imm (| imm << 8) */
#define INSN_MSR_DAIFCLR 0xd50340ffu	/* msr daifclr, #imm (| imm << 8) */

#define DAIF_BITS (0xfull << 6)

static bool emulate_daif(struct trapframe *tf)
{
	uint32_t insn = *(const uint32_t *)tf->pc;
	unsigned int rt = insn & 0x1f;
	uint64_t imm = (uint64_t)(insn >> 8 & 0xf) << 6;

	if ((insn & ~0x1fu) == INSN_MRS_DAIF) {
		if (rt != 31)
			tf->x[rt] = tf->pstate & DAIF_BITS;
	} else if ((insn & ~0x1fu) == INSN_MSR_DAIF) {
		tf->pstate = (tf->pstate & ~DAIF_BITS) | ((rt == 31 ? 0 : tf->x[rt]) & DAIF_BITS);
	} else if ((insn & ~0xf00u) == INSN_MSR_DAIFSET) {
		tf->pstate |= imm;
	} else if ((insn & ~0xf00u) == INSN_MSR_DAIFCLR) {
		tf->pstate &= ~imm;
	} else {
		return false;
	}
	tf->pc += 4;
	return true;
}

/* ---- exclusive sequences ---- */

#define INSN_EXCL_MASK 0x3f800000u /* load/store exclusive: bits 29:24 001000, o2 (23) 0 */
#define INSN_EXCL 0x08000000u
#define INSN_EXCL_LOAD (1u << 22)
#define EXCL_SCAN 16 /* instructions each way */
#define BCR_GUARD (0xfu << 5 | 1u << 1 | 1u) /* 4 bytes, EL1, enabled */

static uint32_t insn_at(uint64_t a)
{
	return *(const uint32_t *)a;
}

static bool is_excl(uint32_t i)
{
	return (i & INSN_EXCL_MASK) == INSN_EXCL;
}

/* Is pc in a load/store-exclusive sequence (within its page)?  Its load *lo, its store *st. */
static bool excl_region(uint64_t pc, uint64_t *lo, uint64_t *st)
{
	uint64_t page = pc & ~0xfffull, a = pc;

	for (;; a -= 4) {
		uint32_t i = insn_at(a);

		if (is_excl(i) && (i & INSN_EXCL_LOAD))
			break;
		if (is_excl(i) && a != pc)
			return false; /* a store-exclusive first: pc is past its sequence */
		if (a == page || pc - a >= EXCL_SCAN * 4)
			return false;
	}
	*lo = a;
	for (a = pc; a < page + 4096 && a - pc < EXCL_SCAN * 4; a += 4) {
		uint32_t i = insn_at(a);

		if (is_excl(i) && !(i & INSN_EXCL_LOAD)) {
			*st = a;
			return true;
		}
		if (is_excl(i) && a != *lo)
			return false; /* another load-exclusive before any store */
	}
	return false;
}

static int64_t sext(uint64_t v, unsigned int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* The target of a direct branch at a (B, B.cond, CB(N)Z, TB(N)Z), or false. */
static bool branch_target(uint64_t a, uint32_t i, uint64_t *t)
{
	if ((i & 0xff000010u) == 0x54000000u || (i & 0x7e000000u) == 0x34000000u)
		*t = a + (uint64_t)(sext(i >> 5 & 0x7ffff, 19) * 4);
	else if ((i & 0x7e000000u) == 0x36000000u)
		*t = a + (uint64_t)(sext(i >> 5 & 0x3fff, 14) * 4);
	else if ((i & 0xfc000000u) == 0x14000000u)
		*t = a + (uint64_t)(sext(i & 0x3ffffff, 26) * 4);
	else
		return false;
	return true;
}

/*
 * A hit inside an exclusive sequence cannot be stepped: the exception between its load and its
 * store clears the exclusive monitor, the store fails and the loop comes back to the hit
 * forever.  Instead the sequence restarts at its load-exclusive (as after a failed store) and
 * runs natively with this CPU's kernel slots suspended, until one of its exits (the
 * instruction after the store, or a branch out) hits a guard breakpoint in a borrowed slot.
 * false: too many exits for the slots (then it is stepped).
 */
static bool guard_excl(struct kstep *k, struct trapframe *tf)
{
	uint64_t lo, st, t, exits[GUARDS_MAX];
	unsigned int n = 0, slots = (unsigned int)((read_sysreg(id_aa64dfr0_el1) >> 12) & 0xf) + 1;

	if (!excl_region(tf->pc, &lo, &st))
		return false;
	exits[n++] = st + 4;
	for (uint64_t a = lo; a <= st; a += 4) {
		if (!branch_target(a, insn_at(a), &t) || (t >= lo && t <= st))
			continue;
		bool dup = false;

		for (unsigned int j = 0; j < n; j++)
			dup |= exits[j] == t;
		if (dup)
			continue;
		if (n == GUARDS_MAX || n == slots)
			return false;
		exits[n++] = t;
	}
	if (hw.suspend)
		hw.suspend(true, true);
	for (unsigned int j = 0; j < n; j++) {
		dbg_write_bvr(j, exits[j]);
		dbg_write_bcr(j, BCR_GUARD);
	}
	isb();
	k->nguard = n;
	this_cpu()->dbg_kguard = true;
	note_return_work(this_cpu());
	tf->pc = lo;
	return true;
}

void debug_kguard_drop_slow(void)
{
	struct kstep *k = this_kstep();

	k->nguard = 0;
	this_cpu()->dbg_kguard = false;
	note_return_work(this_cpu());
	if (hw.suspend)
		hw.suspend(true, false); /* writes the borrowed slots back */
}

void debug_kernel_trap(struct trapframe *tf, unsigned int ec)
{
	struct kstep *k = this_kstep();

	if (ec == ESR_EC_BREAKPT_CUR && k->nguard) {
		/* an exit of an exclusive sequence run natively: the slots are back, go on there */
		debug_kguard_drop_slow();
		return;
	}

	if (ec == ESR_EC_SOFTSTP_CUR) {
		if (!k->active) {
			/* not ours (none is set but ours): stop stepping, go on */
			set_step(false);
			tf->pstate &= ~PSR_SS;
			return;
		}
		tf->pstate = (tf->pstate & ~(uint64_t)PSR_I) | k->irq_mask;
		tf->pstate &= ~PSR_SS;
		kstep_end(k);
		return;
	}
	bool watch = ec == ESR_EC_WATCHPT_CUR;
	bool again = k->rehit_pc == tf->pc && k->rehit_task == current_task();

	k->rehit_pc = 0;
	if (hw.hit && !again)
		hw.hit(watch, watch ? tf->far : tf->pc, watch && (tf->esr & ESR_WNR) != 0,
		       (const uint64_t *)tf, false, (tf->pstate & PSR_I) != 0);
	/* an instruction that reads or writes the DAIF masks: emulated, not stepped (a step with
	 * interrupts masked would read them wrong, and one that masks debug exceptions never ends) */
	if (!watch && emulate_daif(tf))
		return;
	if (guard_excl(k, tf))
		return;
	/* step over it with this CPU's kernel slots off and interrupts masked */
	k->active = true;
	k->pc = tf->pc;
	k->irq_mask = tf->pstate & PSR_I;
	k->task = current_task();
	if (hw.suspend)
		hw.suspend(true, true);
	tf->pstate |= PSR_SS | PSR_I;
	set_step(true);
}

void debug_kernel_cancel_slow(struct trapframe *tf)
{
	struct kstep *k = this_kstep();

	/* the stepped instruction trapped: it runs again from this frame, not stepped */
	if (tf->pc == k->pc) {
		k->rehit_pc = k->pc;
		k->rehit_task = k->task;
	}
	tf->pstate = (tf->pstate & ~(uint64_t)(PSR_SS | PSR_I)) | k->irq_mask;
	kstep_end(k);
}

bool debug_kernel_stepping(void)
{
	return this_kstep()->active;
}
