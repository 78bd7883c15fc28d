/*
 * ptrace.h - the hooks the rest of the kernel calls into kernel/ptrace.c (ptrace(2), Linux 6.1
 * semantics).  A traced thread (struct uthread) points at its struct ptrace_link; every hook
 * below is cheap to skip: callers test ut->ptrace first.  [tracee]: called by the traced thread
 * itself, in process context, may sleep (it stops there until its tracer resumes it).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct proc;
struct trapframe;
struct uthread;
struct ksiginfo;

/* [tracee] syscall_dispatch, before the handler: the syscall-entry stop (PTRACE_SYSCALL).
 * *nr may be changed by the tracer (NT_ARM_SYSTEM_CALL); false: skip the call (-1, killed). */
bool ptrace_syscall_entry(struct trapframe *tf, uint64_t *nr);
/* [tracee] after the handler: PTRACE_EVENT_EXEC (or the legacy SIGTRAP) after a successful
 * execve, then the syscall-exit stop. */
void ptrace_syscall_exit(struct trapframe *tf, uint64_t nr, long ret);

/* [tracee] signal delivery (sig_get) dequeued sig: the signal-delivery stop.  Returns the
 * signal to act on (0: none), info rewritten when the tracer substituted another. */
int ptrace_signal(struct uthread *ut, int sig, struct ksiginfo *info);
/* [tracee] the group-stop and PTRACE_INTERRUPT traps (PTRACE_EVENT_STOP), PTRACE_LISTEN. */
void ptrace_jobctl(struct uthread *ut);
/* [any] does the traced thread ut owe its tracer a group-stop or interrupt trap? */
bool ptrace_jobctl_pending(struct uthread *ut);

/* [tracee] clone: attach the child to our tracer when the options say so (before the child
 * runs); returns the PTRACE_EVENT_* to report with ptrace_clone_event once it runs, or 0. */
int ptrace_clone(struct uthread *parent, struct uthread *child, uint64_t flags, int exit_signal);
void ptrace_clone_event(int event, int child_tid);
void ptrace_vfork_done(int child_tid);

/* [tracee] exit and exit_group, before anything is torn down: PTRACE_EVENT_EXIT. */
void ptrace_exit_event(int status);
/* [tracee] the thread is gone (proc_exit_thread): report status to the tracer. */
void ptrace_tracee_exit(struct uthread *ut, int status);
/* [proc] the last thread of p exits: detach (or kill, PTRACE_O_EXITKILL) its tracees. */
void ptrace_tracer_exit(struct proc *p);

/* [proc] wait4/waitid: a stop or exit (with WEXITED) report of one of me's tracees matching
 * pid (wait4's pid rules; a tracee is eligible whatever __WALL/__WCLONE say, as Linux);
 * consumed unless options has WNOWAIT.  Returns its tid (status in *status) or 0; *any
 * is set when me traces a matching thread at all. */
int ptrace_wait(struct proc *me, int pid, int options, int *status, bool *any);
