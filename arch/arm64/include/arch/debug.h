/*
 * debug.h - the self-hosted debug support of arch/arm64/debug.c: the EL0 and EL1 hardware
 * breakpoint, watchpoint and software-step exceptions, and the handler above arch/ that takes the hits,
 * registered at boot: perf's hw_breakpoint PMU (perf/bp.c, through
 * ksvc_hw_breakpoint_register).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <arch/trapframe.h>
#include <kern/sched.h>

/* [each CPU, boot] Open the OS lock and enable breakpoint/watchpoint exceptions at EL0 and at
 * EL1 (MDSCR.MDE and KDE; EL1 code sees them only while PSTATE.D is clear). */
void debug_cpu_init(void);
/*
 * [boot] The handler of EL0 hardware breakpoint and watchpoint hits, and the suspend of this
 * CPU's EL0 slots while a task steps over the instruction that hit (kern/ksvc.h's
 * ksvc_hw_breakpoint_register says when each is called).  One handler.
 */
void debug_hw_register(bool (*hit)(bool watch, uint64_t addr, bool write, const uint64_t *regs,
				   bool user, bool irqs_off),
		       void (*suspend)(bool kernel, bool on));
/* [user trap] A breakpoint, watchpoint or software-step exception from EL0 (its ESR class). */
void debug_user_trap(struct trapframe *tf, unsigned int ec);
/* [IRQs masked] This CPU runs a user task that steps over a hit (or not): suspend the EL0
 * breakpoints accordingly (MDSCR_EL1.SS follows at the return to EL0: debug_user_return).  Inline: on a context switch the CPU is
 * almost always in the state already. */
void debug_switch_slow(bool next_stepping);
/* [IRQs masked] Put back the slots that guard an exclusive sequence run unstepped (debug.c). */
void debug_kguard_drop_slow(void);
static inline void debug_kguard_drop(void)
{
	if (this_cpu()->dbg_kguard)
		debug_kguard_drop_slow();
}
static inline void debug_switch(bool next_stepping)
{
	debug_kguard_drop();
	if (this_cpu()->dbg_stepping != next_stepping)
		debug_switch_slow(next_stepping);
}

/* [entry from EL0, before PSTATE.D is cleared] A user task's step (MDSCR_EL1.SS) stays at EL0. */
void debug_user_enter_slow(void);
static inline void debug_user_enter(void)
{
	if (this_cpu()->dbg_ss_armed)
		debug_user_enter_slow();
}
/* [the return to EL0, IRQs and debug exceptions masked] Drop an exclusive-sequence guard, and
 * set MDSCR_EL1.SS when the CPU's user task steps over a hit (clear it when it no longer does).
 * One load when there is nothing to do (dbg_return_work): every syscall comes this way. */
void debug_user_return_slow(void);
static inline void debug_user_return(void)
{
	if (this_cpu()->dbg_return_work)
		debug_user_return_slow();
}
/* [kernel trap] A breakpoint, watchpoint or software-step exception from EL1 (its ESR class). */
void debug_kernel_trap(struct trapframe *tf, unsigned int ec);
/* [kernel trap] Any other exception from EL1: if it came from the instruction this CPU steps
 * over a kernel hit, give the step up (the instruction hits again when retried). */
bool debug_kernel_stepping(void);
void debug_kernel_cancel_slow(struct trapframe *tf);
static inline void debug_kernel_cancel(struct trapframe *tf)
{
	if (debug_kernel_stepping())
		debug_kernel_cancel_slow(tf);
}
