/*
 * signal.h - POSIX signals as Linux delivers them on arm64 (kernel/signal.c).
 *
 * Process-directed signals queue on the thread group's sighand, thread-directed ones on the
 * thread.  Delivery happens on the way back to EL0 (trap_return_user), building the arm64
 * rt_sigframe (siginfo, ucontext with sigcontext and an FPSIMD record, frame record) on the
 * user stack or the alternate stack; rt_sigreturn restores it.  Sleeping syscalls poll
 * signal_pending() and return -EINTR.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/list.h>
#include <kern/spinlock.h>

struct proc;
struct uthread;
struct task;
struct trapframe;

#define KSIG_MAX 64

/* What a queued signal carries (the kernel side of siginfo_t). */
struct ksiginfo {
	struct list_node node;
	int signo, code, errno_;
	int pid; /* sender, or the child for SIGCHLD */
	uint32_t uid;
	int status; /* SIGCHLD: exit code or signal */
	uint64_t addr; /* fault address */
	uint64_t value; /* sigqueue value, timer id */
	uint64_t utime, stime;
	int64_t band; /* SIGPOLL layout (O_ASYNC): si_band; the fd is in status */
	uint64_t perf_data; /* TRAP_PERF: si_perf_data, si_perf_type, si_perf_flags */
	uint32_t perf_type, perf_flags;
};

struct ksigaction {
	uint64_t handler; /* SIG_DFL 0, SIG_IGN 1, or a user address */
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

struct sighand {
	struct spinlock lock;
	int refs;
	struct ksigaction action[KSIG_MAX];
	struct list_node shared_pending; /* struct ksiginfo */
	uint64_t shared_pending_set;
};

struct sighand *sighand_alloc(void); /* all default */
struct sighand *sighand_dup(struct sighand *src); /* fork */
void sighand_get(struct sighand *s); /* CLONE_SIGHAND */
void sighand_put(struct sighand *s);
void signal_exec_reset(struct proc *p); /* handlers back to SIG_DFL, ignored stay ignored */
void uthread_signal_init(struct uthread *t, const struct uthread *parent);
void uthread_signal_release(struct uthread *t); /* free its queue at thread exit */

/* Send: 0, or -EINVAL / -ESRCH.  info may be NULL (SI_KERNEL, or SI_USER from current). */
int signal_send_proc(struct proc *p, int sig, const struct ksiginfo *info);
int signal_send_thread(struct uthread *t, int sig, const struct ksiginfo *info);
/* Send to an fcntl owner: type F_OWNER_TID (one thread), F_OWNER_PID (its process) or
 * F_OWNER_PGRP (every process of group pid).  [any]: takes proc_tree_lock.  -ESRCH, -EAGAIN. */
int signal_send_owner(int type, int pid, int sig, const struct ksiginfo *info);
/* A synchronous fault (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE) in the current thread: if
 * blocked or ignored it still kills, as Linux's force_sig_fault. */
void signal_force_fault(int sig, int code, uint64_t addr);
/* Is there an unblocked signal for t (used by sleeping syscalls to return -EINTR)? */
bool signal_pending(struct task *t);
/* On return to EL0: deliver one pending signal (frame, default action, stop, ...). */
bool signal_work_pending(struct trapframe *tf);
void signal_deliver(struct trapframe *tf);
/* The parent's notification when a child process ends (status as wait4 reports it). */
void signal_notify_parent_exit(struct proc *child);
