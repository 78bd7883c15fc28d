/*
 * debug.h - the self-hosted debug support of arch/arm64/debug.c: the EL0 debug exceptions
 * (hardware breakpoints and watchpoints, software step, BRK) and the handlers above arch/ that
 * take them, registered at boot: perf's hw_breakpoint PMU (perf/bp.c, through
 * ksvc_hw_breakpoint_register) and BRK handlers by immediate (uprobes).
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
/*
 * [boot] A BRK #imm from EL0 goes to fn, which returns true when it dealt with the trap (tf
 * updated), false for the SIGTRAP a BRK gives otherwise.  At most a few handlers.
 */
void debug_brk_register(uint16_t imm, bool (*fn)(struct trapframe *tf));
/* [user trap] A BRK from EL0: true when a registered handler took it. */
bool debug_user_brk(struct trapframe *tf);
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
