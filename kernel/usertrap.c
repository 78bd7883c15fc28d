/*
 * usertrap.c - exceptions taken from EL0 and the return-to-user work.
 *
 * Until user processes exist (issue: run static Linux programs) no task ever enters EL0, so an
 * EL0 exception here is a kernel bug and panics with the frame; page faults from kernel mode
 * on user addresses are resolved by the user-access fixups only.
 */
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <arch/trapframe.h>
#include <kern/assert.h>
#include <kern/sched.h>
#include <kern/trap.h>

void trap_user_sync(struct trapframe *tf)
{
	kpanic("EL0 exception without a user process (ESR %lx, ELR %lx)", tf->esr, tf->pc);
}

bool trap_user_work_pending(struct trapframe *tf)
{
	(void)tf;
	return false;
}

void trap_user_work(struct trapframe *tf)
{
	(void)tf;
}

bool mm_fault_from_kernel(uint64_t far, bool write)
{
	(void)far;
	(void)write;
	return false; /* no user address spaces yet */
}
