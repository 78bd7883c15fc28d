/*
 * sigreturn.S - __kernel_rt_sigreturn, where a signal handler returns to when the process set
 * no SA_RESTORER (glibc on arm64 sets none): the handler's x30 points here
 * (kernel/signal_frame.c), and rt_sigreturn restores the interrupted context.
 *
 * No unwind tables, as Linux 6.1's image carries none: unwinders know the trampoline by its two
 * instructions (libgcc's aarch64 fallback, gdb) and restore every register from the
 * rt_sigframe at sp.  An FDE saying "CFA = x29, x29/x30 from the frame record" (Linux's source
 * has one, its image drops it) sends libgcc on with the interrupted x30 as pc and the frame
 * record as sp, and a static glibc program's _Unwind_Backtrace from a handler then faults.
 * The nop before it is there as in Linux's image (an unwinder looking up a return address
 * minus one lands inside the trampoline's bounds).
 */
#include <asm/unistd.h>

	.text
	nop
	.globl	__kernel_rt_sigreturn	/* no type: STT_NOTYPE, as Linux's SYM_CODE_START */
__kernel_rt_sigreturn:
	mov	x8, #__NR_rt_sigreturn
	svc	#0
	.size	__kernel_rt_sigreturn, . - __kernel_rt_sigreturn
