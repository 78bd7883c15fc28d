/*
 * sigreturn.S - __kernel_rt_sigreturn, where a signal handler returns to when the process set
 * no SA_RESTORER (glibc on arm64 sets none): the handler's x30 points here
 * (kernel/signal_frame.c), and rt_sigreturn restores the interrupted context.
 *
 * Unwinding through it, as arm64 Linux 6.1's vDSO describes it: the kernel leaves x29
 * pointing at a frame record {fp, lr} holding the interrupted x29 and x30 (signal_frame.c
 * puts it above the rt_sigframe), so the CFA is x29 and the caller's x29/x30 are the record's
 * two words; the FDE is marked a signal frame ('S': the return address is not decremented).
 * The nop before the symbol is inside that FDE, so an unwinder that looks up a return address
 * minus one still finds it.  libgcc also recognises the two instructions themselves
 * (mov x8, #139; svc #0) when no FDE is found.
 */
#include <asm/unistd.h>

	.text
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa	x29, 0
	.cfi_offset	x29, 0
	.cfi_offset	x30, 8
	nop
	.globl	__kernel_rt_sigreturn	/* no type: STT_NOTYPE, as Linux's SYM_CODE_START */
__kernel_rt_sigreturn:
	mov	x8, #__NR_rt_sigreturn
	svc	#0
	.cfi_endproc
	.size	__kernel_rt_sigreturn, . - __kernel_rt_sigreturn
