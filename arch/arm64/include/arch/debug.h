/*
 * debug.h - the self-hosted debug support of arch/arm64/debug.c: what perf's hw_breakpoint
 * PMU (perf/bp.c) needs from the exception and context-switch paths.
 */
#pragma once

#include <stdbool.h>
#include <arch/trapframe.h>

/* [each CPU, boot] Open the OS lock and enable breakpoint/watchpoint exceptions (MDSCR.MDE). */
void debug_cpu_init(void);
/* [user trap] A breakpoint, watchpoint or software-step exception from EL0 (its ESR class). */
void debug_user_trap(struct trapframe *tf, unsigned int ec);
/* [IRQs masked] This CPU runs a user task that steps over a hit (or not): suspend the EL0
 * breakpoints and set MDSCR_EL1.SS accordingly (nothing when it already does). */
void debug_switch(bool next_stepping);
