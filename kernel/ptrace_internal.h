/*
 * ptrace_internal.h - what kernel/ptrace.c (the tracee's side: stops, hooks, wait4) and
 * kernel/ptrace_req.c (the tracer's requests) share.  Not for other modules: <kern/ptrace.h>.
 *
 * Locks: proc_tree_lock -> ptrace_lock -> (wait queue and task locks, to wake).  ptrace_lock
 * covers every struct ptrace_link field and each uthread's ptrace pointer.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/spinlock.h>

enum pt_why {
	PT_STOP_SIGNAL = 1, /* signal-delivery stop: siginfo is the signal's */
	PT_STOP_SYSCALL_ENTRY,
	PT_STOP_SYSCALL_EXIT,
	PT_STOP_EVENT, /* PTRACE_EVENT_* other than STOP */
	PT_STOP_GROUP, /* group stop or PTRACE_EVENT_STOP (INTERRUPT, new child) */
};

/* What a request hands a stopped tracee; lives on the tracee's stack while it is stopped. */
struct pt_frame {
	bool done;
	long request; /* PTRACE_CONT, SYSCALL, LISTEN, DETACH; 0: the tracer went away */
	int sig;
};

struct ptrace_link {
	struct list_node node; /* all_links */
	struct uthread *tracee; /* NULL once it exited (dead) */
	struct proc *tracer;
	int tid, tgid, pgid;
	uint32_t options; /* PTRACE_O_* */
	bool seized;
	bool syscall_trace; /* resumed by PTRACE_SYSCALL */
	bool trap_stop; /* JOBCTL_TRAP_STOP: INTERRUPT, seize of a stopped task, new child */
	bool gstop_done; /* this group stop was reported (or was resumed from) */
	struct pt_frame *stop; /* non-NULL while stopped */
	int busy; /* requests using the stopped tracee's state */
	enum pt_why why;
	bool report; /* a wait4 report is due */
	int status; /* its wait status */
	bool dead;
	bool has_si, si_notify;
	struct ksiginfo si;
	uint64_t eventmsg;
	int syscallno; /* NT_ARM_SYSTEM_CALL: the syscall in progress, -1 outside one */
};

extern struct spinlock ptrace_lock;
extern struct list_node ptrace_links; /* every struct ptrace_link (ptrace_lock) */
extern struct wait_queue ptrace_wq; /* stopped tracees sleep here */

/* SIGKILL pending or the group exiting: a stop ends, no new stop begins. */
bool pt_kill_pending(struct uthread *ut);
/* Take l off ptrace_links and free it; ptrace_lock held. */
void pt_unlink_free_locked(struct ptrace_link *l);
/* A link from tracer to ut, not yet listed (NULL: no memory). */
struct ptrace_link *pt_link_alloc(struct proc *tracer, struct uthread *ut);
