/*
 * vectors.S - the EL1 exception vector table, trap-frame save/restore, and the
 * callee-saved context switch.
 *
 * Every entry saves a struct trapframe on the current kernel stack and calls C:
 *   EL1h sync -> trap_el1_sync(tf)    EL1h irq -> trap_irq(tf)
 *   EL0 sync  -> trap_el0_sync(tf)    EL0 irq  -> trap_el0_irq(tf)
 * and everything else (EL1t, FIQ, SError, AArch32) -> trap_unexpected(tf, kind).
 * Returning to EL0 runs trap_return_user(tf) first (signals, rescheduling).
 */
#include <arch/trapframe.h>

	.macro	save_frame
	sub	sp, sp, #TF_SIZE
	stp	x0, x1, [sp, #16 * 0]
	stp	x2, x3, [sp, #16 * 1]
	stp	x4, x5, [sp, #16 * 2]
	stp	x6, x7, [sp, #16 * 3]
	stp	x8, x9, [sp, #16 * 4]
	stp	x10, x11, [sp, #16 * 5]
	stp	x12, x13, [sp, #16 * 6]
	stp	x14, x15, [sp, #16 * 7]
	stp	x16, x17, [sp, #16 * 8]
	stp	x18, x19, [sp, #16 * 9]
	stp	x20, x21, [sp, #16 * 10]
	stp	x22, x23, [sp, #16 * 11]
	stp	x24, x25, [sp, #16 * 12]
	stp	x26, x27, [sp, #16 * 13]
	stp	x28, x29, [sp, #16 * 14]
	mrs	x21, sp_el0
	stp	x30, x21, [sp, #TF_X30]
	mrs	x22, elr_el1
	mrs	x23, spsr_el1
	stp	x22, x23, [sp, #TF_PC]
	mrs	x24, esr_el1
	mrs	x25, far_el1
	stp	x24, x25, [sp, #TF_ESR]
	/* A frame record linking the trap to the interrupted code, for backtraces. */
	mov	x29, xzr
	mov	x0, sp
	.endm

	.macro	restore_frame
	ldp	x22, x23, [sp, #TF_PC]
	msr	elr_el1, x22
	msr	spsr_el1, x23
	ldp	x30, x21, [sp, #TF_X30]
	msr	sp_el0, x21
	ldp	x0, x1, [sp, #16 * 0]
	ldp	x2, x3, [sp, #16 * 1]
	ldp	x4, x5, [sp, #16 * 2]
	ldp	x6, x7, [sp, #16 * 3]
	ldp	x8, x9, [sp, #16 * 4]
	ldp	x10, x11, [sp, #16 * 5]
	ldp	x12, x13, [sp, #16 * 6]
	ldp	x14, x15, [sp, #16 * 7]
	ldp	x16, x17, [sp, #16 * 8]
	ldp	x18, x19, [sp, #16 * 9]
	ldp	x20, x21, [sp, #16 * 10]
	ldp	x22, x23, [sp, #16 * 11]
	ldp	x24, x25, [sp, #16 * 12]
	ldp	x26, x27, [sp, #16 * 13]
	ldp	x28, x29, [sp, #16 * 14]
	add	sp, sp, #TF_SIZE
	eret
	.endm

	.macro	vent label
	.balign	128
	b	\label
	.endm

	.macro	unexpected kind
	save_frame
	mov	x1, #\kind
	bl	trap_unexpected
	b	.
	.endm

	.text
	.balign	2048
	.globl	vectors
vectors:
	vent	el1t_sync
	vent	el1t_irq
	vent	el1t_fiq
	vent	el1t_serror
	vent	el1h_sync
	vent	el1h_irq
	vent	el1h_fiq
	vent	el1h_serror
	vent	el0_sync
	vent	el0_irq
	vent	el0_fiq
	vent	el0_serror
	vent	el0_32_sync
	vent	el0_32_irq
	vent	el0_32_fiq
	vent	el0_32_serror

el1t_sync:	unexpected 0
el1t_irq:	unexpected 1
el1t_fiq:	unexpected 2
el1t_serror:	unexpected 3
el1h_fiq:	unexpected 6
el1h_serror:	unexpected 7
el0_fiq:	unexpected 10
el0_serror:	unexpected 11
el0_32_sync:	unexpected 12
el0_32_irq:	unexpected 13
el0_32_fiq:	unexpected 14
el0_32_serror:	unexpected 15

el1h_sync:
	save_frame
	bl	trap_el1_sync
	b	ret_to_kernel
el1h_irq:
	save_frame
	bl	trap_irq
	b	ret_to_kernel
el0_sync:
	save_frame
	bl	trap_el0_sync
	b	ret_to_user
el0_irq:
	save_frame
	bl	trap_el0_irq
	b	ret_to_user

ret_to_kernel:
	restore_frame

	.globl	ret_to_user
ret_to_user:
	mov	x0, sp
	bl	trap_return_user
	restore_frame

/*
 * cpu_switch(struct cpu_context *from, struct cpu_context *to): save the callee-saved
 * registers, sp and lr of the running thread in *from and resume the thread saved in *to.
 */
	.globl	cpu_switch
cpu_switch:
	mov	x9, sp
	stp	x19, x20, [x0, #16 * 0]
	stp	x21, x22, [x0, #16 * 1]
	stp	x23, x24, [x0, #16 * 2]
	stp	x25, x26, [x0, #16 * 3]
	stp	x27, x28, [x0, #16 * 4]
	stp	x29, x9, [x0, #16 * 5]
	str	x30, [x0, #16 * 6]
	ldp	x19, x20, [x1, #16 * 0]
	ldp	x21, x22, [x1, #16 * 1]
	ldp	x23, x24, [x1, #16 * 2]
	ldp	x25, x26, [x1, #16 * 3]
	ldp	x27, x28, [x1, #16 * 4]
	ldp	x29, x9, [x1, #16 * 5]
	ldr	x30, [x1, #16 * 6]
	mov	sp, x9
	ret

/* A new kernel thread starts here: x19 = function, x20 = argument. */
	.globl	thread_trampoline
thread_trampoline:
	bl	sched_new_thread_started
	mov	x0, x20
	blr	x19
	bl	thread_exit
	b	.

/* A new user thread (clone, or init) starts here with sp at its trap frame. */
	.globl	user_thread_start
user_thread_start:
	bl	sched_new_thread_started
	b	ret_to_user

/* init (pid 1) starts here: exec /init in its own context, then enter user space. */
	.globl	init_thread_start
init_thread_start:
	bl	sched_new_thread_started
	bl	userinit_exec
	b	ret_to_user
