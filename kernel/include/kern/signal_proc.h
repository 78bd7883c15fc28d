/*
 * signal_proc.h - the hooks kernel/proc.c and kernel/syscall.c call in kernel/signal.c beyond
 * <kern/signal.h>: syscall restart, wait4's stop/continue reports, SIGCHLD auto-reaping and
 * waking a group for exit_group.
 *
 * Syscall restart (Linux's -ERESTART* protocol, arch/arm64/kernel/signal.c do_signal): a
 * sleeping syscall interrupted by a signal returns one of the codes below instead of -EINTR.
 * On the way back to EL0 signal_deliver turns it into -EINTR (a handler runs and the code says
 * so) or rewinds pc to the svc with the original x0 (restart).  The codes never reach user
 * space.  It needs syscall_dispatch to call signal_syscall_enter(tf) before running the
 * handler; that hook remembers the original x0 in tf->far (meaningless for an SVC) and marks
 * the frame with bit 63 of tf->esr (RES0 in ESR_EL1, so no hardware-saved frame has it).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct proc;
struct trapframe;

#define ERESTARTSYS 512 /* restart if the handler has SA_RESTART (read, write, wait4, futex) */
#define ERESTARTNOINTR 513 /* always restart */
#define ERESTARTNOHAND 514 /* restart only when no handler runs (sigsuspend, pause, nanosleep) */
#define ERESTART_RESTARTBLOCK 516 /* treated as ERESTARTNOHAND (no restart_syscall) */

static inline bool signal_is_restart_code(long r)
{
	return r == -ERESTARTSYS || r == -ERESTARTNOINTR || r == -ERESTARTNOHAND ||
	       r == -ERESTART_RESTARTBLOCK;
}

/* [proc] Called by syscall_dispatch for every svc, before the handler runs. */
void signal_syscall_enter(struct trapframe *tf);

/*
 * [proc] wait4's WUNTRACED/WCONTINUED: with proc_tree_lock held, does child have a stop (when
 * options has WUNTRACED) or continue (WCONTINUED) report?  If so, *status gets the wait status
 * ((sig << 8) | 0x7f, or 0xffff) and the report is consumed unless options has WNOWAIT.
 * signal.c wakes parent->child_wait whenever such a report appears.
 */
bool signal_child_wait_event(struct proc *child, int options, int *status);

/* [proc] With proc_tree_lock held: should child, now ending, be reaped at once instead of
 * becoming a zombie (the parent's SIGCHLD is SIG_IGN or has SA_NOCLDWAIT)? */
bool signal_parent_autoreaps(struct proc *child);

/* [proc] exit_group: wake every other thread of p (p->exiting already set) so that sleeping
 * syscalls return and each thread exits through signal_deliver -> proc_exit_thread(0). */
void signal_wake_group(struct proc *p);

/* [any] Forget p's group-stop state (call once p is reaped). */
void signal_proc_release(struct proc *p);
