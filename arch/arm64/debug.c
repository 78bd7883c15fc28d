/*
 * debug.c - user breakpoints and watchpoints (perf's PERF_TYPE_BREAKPOINT) at the exception
 * level: the debug exceptions from EL0 and the step over the instruction that hit.
 *
 * A breakpoint exception comes before its instruction runs, a watchpoint exception before its
 * access happens: to go on, the task steps over that one instruction with this CPU's EL0
 * breakpoints and watchpoints suspended (MDSCR_EL1.SS and SPSR.SS), and the software-step
 * exception that follows resumes them, as Linux's breakpoint_handler / reinstall_suspended_bps.
 * The task carries the state (uthread.dbg_step) and each CPU follows the user task it runs
 * (cpu.dbg_stepping, set by debug_switch at every switch to a user task).  Kernel debug exceptions stay
 * off (MDSCR_EL1.KDE = 0), so none of this runs at EL1.
 *
 * What a hit means belongs above arch/: the breakpoint slots' owner (perf's hw_breakpoint PMU)
 * registers its handler here at boot, as the PMU interrupt's handler registers with the
 * interrupt code.
 */
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <arch/debug.h>
#include <arch/sysreg.h>
#include <kern/ksvc.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/assert.h>

#define MDSCR_SS (1ull << 0)
#define MDSCR_MDE (1ull << 15)
#define PSR_SS (1ull << 21)

static struct {
	bool (*hit)(bool watch, uint64_t addr, bool write);
	void (*suspend)(bool on);
} hw;

void debug_hw_register(bool (*hit)(bool watch, uint64_t addr, bool write),
		       void (*suspend)(bool on))
{
	kassert(!hw.hit);
	hw.hit = hit;
	hw.suspend = suspend;
}

void debug_cpu_init(void)
{
	write_sysreg(oslar_el1, 0); /* the OS lock blocks debug exceptions until opened */
	write_sysreg(mdscr_el1, MDSCR_MDE);
	isb();
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
	if (hw.suspend)
		hw.suspend(next_stepping);
	set_step(next_stepping);
}

void debug_user_trap(struct trapframe *tf, unsigned int ec)
{
	struct uthread *ut = current_uthread();
	unsigned long f = ksvc_irq_save(); /* this CPU's slots and MDSCR stay ours */

	switch (ec) {
	case ESR_EC_BREAKPT_LOW:
	case ESR_EC_WATCHPT_LOW:
		if (hw.hit && ec == ESR_EC_BREAKPT_LOW)
			hw.hit(false, tf->pc, false);
		else if (hw.hit)
			hw.hit(true, tf->far, (tf->esr & ESR_WNR) != 0);
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
