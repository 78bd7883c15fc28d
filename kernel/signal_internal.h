/*
 * signal_internal.h - what kernel/signal.c, kernel/signal_frame.c and kernel/sys_signal.c share.
 * Not for other modules: they use <kern/signal.h> and <kern/signal_proc.h>.
 *
 * Locking (all with interrupts masked):
 *   proc_tree_lock -> proc->lock -> sighand->lock -> task->lock -> rq_lock
 *   sig_stop_lock is a leaf: nothing else is taken while holding it.
 * sighand->lock covers the actions, the shared queue, and (unlike the legend in proc.h says)
 * every thread's private queue and sigmask writes too, as Linux's siglock does: one lock makes
 * "queue, pick a thread that does not block it, wake it" atomic.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/proc.h>
#include <kern/signal.h>

struct trapframe;

#define SIGBIT(sig) (1ull << ((sig) - 1))
/* SIGKILL and SIGSTOP can never be blocked, caught or ignored. */
#define SIG_UNBLOCKABLE (SIGBIT(9) | SIGBIT(19))
/* Synchronous fault signals are dequeued first (Linux's SYNCHRONOUS_MASK). */
#define SIG_SYNC_MASK (SIGBIT(11) | SIGBIT(7) | SIGBIT(4) | SIGBIT(5) | SIGBIT(8) | SIGBIT(31))
#define SIG_STOP_MASK (SIGBIT(19) | SIGBIT(20) | SIGBIT(21) | SIGBIT(22))

/* Default dispositions (Linux's sig_kernel_{ignore,stop,coredump}). */
enum sig_default {
	SIGDFL_TERM,
	SIGDFL_CORE,
	SIGDFL_IGN,
	SIGDFL_STOP,
	SIGDFL_CONT,
};
enum sig_default sig_default_action(int sig);

static inline bool sig_valid(int sig)
{
	return sig >= 1 && sig <= KSIG_MAX;
}

/* Is sig ignored by action (SIG_IGN, or SIG_DFL with a default of ignore)? */
bool sig_handler_ignored(const struct ksigaction *ka, int sig);

/* Dequeue the next deliverable signal for ut (lowest number, sync faults first, thread queue
 * before the shared one) among the bits of `want`; fills *info; 0 when none.  sighand->lock. */
int sig_dequeue_locked(struct uthread *ut, struct sighand *sh, uint64_t want,
		       struct ksiginfo *info);
/* Discard every pending instance of the signals in set from p's queues.  sighand->lock. */
void sig_flush_locked(struct proc *p, uint64_t set);

/* Group stop (kept in a side table keyed by struct proc until proc.h grows the fields). */
bool sig_group_stopped(struct proc *p);
int sig_group_stop_signal(struct proc *p); /* the stopping signal, 0 when not stopped */
void sig_group_stop_wait(struct proc *p);
void sig_group_stop_begin(struct proc *p, int sig);

/* The ESR a fault signal's frame reports (esr_context), from the trap's ESR; 0 for none.
 * signal_force_fault keeps it in ksiginfo.value, unused for fault signals. */
uint64_t sig_fault_esr(uint64_t esr, uint64_t addr);

/* Fill a struct ksiginfo for a signal sent by the current task. */
void sig_info_user(struct ksiginfo *info, int sig, int code);

/* sigaltstack state and user pointer helpers (kernel/signal_frame.c). */
bool sig_on_altstack(const struct uthread *ut, uint64_t sp);
int sig_copy_siginfo_to_user(uint64_t uaddr, const struct ksiginfo *info);
/* Which union member of siginfo a (signal, si_code) fills: Linux's siginfo_layout(). */
enum sig_layout { SL_KILL, SL_TIMER, SL_POLL, SL_FAULT, SL_FAULT_PERF, SL_CHLD, SL_RT, SL_SYS };
enum sig_layout sig_layout(int sig, int code);
/* signalfd.c: a signal was queued somewhere; signalfd readers and pollers re-check.  No
 * signal locks may be held. */
void signalfd_notify(void);

/* Timers (kernel/sys_timer.c): delete p's timers, all (exit) or POSIX only (exec). */
void sig_timers_release(struct proc *p, bool posix_only);

extern struct wait_queue sig_stop_wq;
