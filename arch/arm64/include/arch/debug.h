/*
 * debug.h - the self-hosted debug support of arch/arm64/debug.c: the EL0 hardware breakpoint,
 * watchpoint and software-step exceptions, and the handler above arch/ that takes the hits,
 * registered at boot: perf's hw_breakpoint PMU (perf/bp.c, through
 * ksvc_hw_breakpoint_register).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <arch/trapframe.h>
#include <kern/sched.h>

/* [each CPU, boot] Open the OS lock and enable breakpoint/watchpoint exceptions (MDSCR.MDE). */
void debug_cpu_init(void);
/*
 * [boot] The handler of EL0 hardware breakpoint and watchpoint hits, and the suspend of this
 * CPU's EL0 slots while a task steps over the instruction that hit (kern/ksvc.h's
 * ksvc_hw_breakpoint_register says when each is called).  One handler.
 */
void debug_hw_register(bool (*hit)(bool watch, uint64_t addr, bool write),
		       void (*suspend)(bool on));
/* [user trap] A breakpoint, watchpoint or software-step exception from EL0 (its ESR class). */
void debug_user_trap(struct trapframe *tf, unsigned int ec);
/* [IRQs masked] This CPU runs a user task that steps over a hit (or not): suspend the EL0
 * breakpoints and set MDSCR_EL1.SS accordingly.  Inline: on a context switch the CPU is
 * almost always in the state already. */
void debug_switch_slow(bool next_stepping);
static inline void debug_switch(bool next_stepping)
{
	if (this_cpu()->dbg_stepping != next_stepping)
		debug_switch_slow(next_stepping);
}
