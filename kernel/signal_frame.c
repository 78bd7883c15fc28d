/*
 * signal_frame.c - delivering signals on the way back to EL0, the arm64 signal frame,
 * rt_sigreturn, sigaltstack, and syscall restart.
 *
 * ABI (arch/arm64/kernel/signal.c, Linux 6.1): below the interrupted sp (or at the top of the
 * alternate stack for SA_ONSTACK) go a struct frame_record {fp = x29, lr = x30} at the first
 * 16-byte boundary, then struct rt_sigframe { siginfo_t info; struct ucontext uc; } ending at
 * the next 16-byte boundary below it.  uc.uc_mcontext (struct sigcontext) holds fault_address,
 * x0-x30, sp, pc, pstate, and its __reserved area an fpsimd_context record (FPSIMD_MAGIC, 528
 * bytes: fpsr, fpcr, v0-v31), for a fault an esr_context record (ESR_MAGIC, the ESR as
 * Linux sanitizes it), and a zero terminator record.  The handler starts with
 * sp = &frame, x0 = signo, x1 = &info and x2 = &uc (SA_SIGINFO), x29 = &frame_record,
 * x30 = sa_restorer, pc = handler.  Signals are delivered one per signal_deliver call; the
 * return-to-user loop calls again while more are deliverable, so with several pending the
 * frames stack up and the last one built runs first, as on Linux.
 *
 * x30 is sa_restorer with SA_RESTORER, else the vDSO's __kernel_rt_sigreturn (kernel/vdso.c).
 * Not done: SVE/SME/ZA and extra_context records (not built; rejected on sigreturn),
 * restart_syscall (ERESTART_RESTARTBLOCK restarts the call from scratch).
 */
#include <asm/sigcontext.h>
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <asm/ucontext.h>
#include <linux/signal.h>
#include <arch/memlayout.h>
#include <arch/trapframe.h>
#include <kern/trace.h>
#include <kern/errno.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/vm.h>
#include "signal_internal.h"

struct rt_sigframe {
	siginfo_t info;
	struct ucontext uc;
};

struct frame_record {
	uint64_t fp, lr;
};

_Static_assert(sizeof(siginfo_t) == 128, "siginfo_t is 128 bytes");
_Static_assert(sizeof(struct fpsimd_context) == 528, "fpsimd_context record size");
_Static_assert(sizeof(struct esr_context) == 16, "esr_context record size");
_Static_assert(__builtin_offsetof(struct ucontext, uc_mcontext) == 176, "uc_mcontext offset");
_Static_assert(__builtin_offsetof(struct rt_sigframe, uc) == 128, "rt_sigframe layout");
_Static_assert(__builtin_offsetof(struct sigcontext, __reserved) == 288, "sigcontext layout");
_Static_assert(sizeof(((struct fpsimd_regs *)0)->v) == 512, "uthread fp layout");

#define TF_ESR_IN_SYSCALL (1ull << 63) /* set by signal_syscall_enter, RES0 in ESR_EL1 */
#define PSR_MODE_MASK 0x1full
#define PSR_DAIF_MASK (0xfull << 6)
/* pstate bits a sigreturn may set: NZCV, DIT, SSBS, BTYPE (valid_native_regs keeps these). */
#define PSR_USER_OK ((0xfull << 28) | (1ull << 24) | (1ull << 12) | (3ull << 10))

static uint64_t uptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* ---- siginfo ---- */

enum sig_layout sig_layout(int sig, int code)
{
	static const struct {
		int sig, limit;
		enum sig_layout layout;
	} specific[] = {
		{ SIGILL, NSIGILL, SL_FAULT },	   { SIGFPE, NSIGFPE, SL_FAULT },
		{ SIGSEGV, NSIGSEGV, SL_FAULT },   { SIGBUS, NSIGBUS, SL_FAULT },
		{ SIGTRAP, NSIGTRAP, SL_FAULT },   { SIGCHLD, NSIGCHLD, SL_CHLD },
		{ SIGPOLL, NSIGPOLL, SL_POLL },	   { SIGSYS, NSIGSYS, SL_SYS },
	};

	if (code > SI_USER && code < SI_KERNEL) {
		for (unsigned int i = 0; i < sizeof(specific) / sizeof(specific[0]); i++) {
			if (specific[i].sig != sig || code > specific[i].limit)
				continue;
			if (sig == SIGTRAP && code == TRAP_PERF)
				return SL_FAULT_PERF;
			return specific[i].layout;
		}
		return code <= NSIGPOLL ? SL_POLL : SL_KILL;
	}
	if (code == SI_TIMER)
		return SL_TIMER;
	if (code == SI_SIGIO)
		return SL_POLL;
	return code < 0 ? SL_RT : SL_KILL;
}

int sig_copy_siginfo_to_user(uint64_t uaddr, const struct ksiginfo *k)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = k->signo;
	si.si_errno = k->errno_;
	si.si_code = k->code;
	switch (sig_layout(k->signo, k->code)) {
	case SL_FAULT_PERF: {
		/* _sigfault._perf after si_addr: data (u64), type (u32), flags (u32) */
		char *perf = (char *)&si.si_addr + sizeof(void *);

		memcpy(perf, &k->perf_data, 8);
		memcpy(perf + 8, &k->perf_type, 4);
		memcpy(perf + 12, &k->perf_flags, 4);
	}
		/* fall through */
	case SL_FAULT:
	case SL_SYS: /* si_call_addr */
		si.si_addr = (void *)(uintptr_t)k->addr;
		break;
	case SL_CHLD:
		si.si_pid = k->pid;
		si.si_uid = k->uid;
		si.si_status = k->status;
		si.si_utime = (long)(k->utime / 10000000ull); /* clock_t in USER_HZ (100) */
		si.si_stime = (long)(k->stime / 10000000ull);
		break;
	case SL_POLL:
		si.si_band = k->band;
		si.si_fd = k->status;
		break;
	case SL_TIMER:
		si.si_tid = k->pid; /* timer id */
		si.si_overrun = k->status;
		si._sifields._timer._sigval.sival_ptr = (void *)(uintptr_t)k->value;
		break;
	case SL_RT:
		si.si_pid = k->pid;
		si.si_uid = k->uid;
		si._sifields._rt._sigval.sival_ptr = (void *)(uintptr_t)k->value;
		break;
	default:
		si.si_pid = k->pid;
		si.si_uid = k->uid;
		break;
	}
	return ksvc_copy_to_user((void *)(uintptr_t)uaddr, &si, sizeof(si));
}

/* ---- alternate stack ---- */

bool sig_on_altstack(const struct uthread *ut, uint64_t sp)
{
	return ut->altstack_size && sp > ut->altstack_sp &&
	       sp - ut->altstack_sp <= ut->altstack_size;
}

static int sig_altstack_flags(const struct uthread *ut, uint64_t sp)
{
	int f;

	if (!ut->altstack_size)
		f = SS_DISABLE;
	else
		f = sig_on_altstack(ut, sp) ? SS_ONSTACK : 0;
	return f | (int)((unsigned int)ut->altstack_flags & SS_FLAG_BITS);
}

/* do_sigaltstack: 0 or -EPERM / -EINVAL / -ENOMEM. */
static int sig_set_altstack(struct uthread *ut, const stack_t *ss, uint64_t sp)
{
	unsigned int mode = (unsigned int)ss->ss_flags & ~SS_FLAG_BITS;

	if (sig_on_altstack(ut, sp))
		return -EPERM;
	if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
		return -EINVAL;
	if (mode == SS_DISABLE) {
		ut->altstack_sp = ut->altstack_size = 0;
		ut->altstack_flags = 0;
		return 0;
	}
	if (ss->ss_size < MINSIGSTKSZ)
		return -ENOMEM;
	ut->altstack_sp = uptr(ss->ss_sp);
	ut->altstack_size = ss->ss_size;
	ut->altstack_flags = (int)((unsigned int)ss->ss_flags & SS_FLAG_BITS);
	return 0;
}

static long sys_sigaltstack(uint64_t uss, uint64_t uoss, uint64_t a2, uint64_t a3, uint64_t a4,
			    uint64_t a5)
{
	struct uthread *ut = current_uthread();
	uint64_t sp = ut->tf->sp;
	stack_t old, ss;
	int r = 0;

	memset(&old, 0, sizeof(old));
	old.ss_sp = (void *)(uintptr_t)ut->altstack_sp;
	old.ss_size = ut->altstack_size;
	old.ss_flags = sig_altstack_flags(ut, sp);
	if (uss) {
		if (ksvc_copy_from_user(&ss, (const void *)(uintptr_t)uss, sizeof(ss)))
			return -EFAULT;
		r = sig_set_altstack(ut, &ss, sp);
		if (r)
			return r;
	}
	if (uoss && ksvc_copy_to_user((void *)(uintptr_t)uoss, &old, sizeof(old)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_sigaltstack, sys_sigaltstack);

/* ---- building the frame ---- */

/* sigcontext.__reserved: the FPSIMD record, an ESR record for a fault (esr != 0), then the
 * terminator. */
static int sig_put_records(uint64_t ureserved, const struct uthread *ut, uint64_t esr)
{
	struct fpsimd_context fc;
	struct esr_context ec = { { ESR_MAGIC, sizeof(struct esr_context) }, esr };
	struct _aarch64_ctx end = { 0, 0 };
	uint64_t off = sizeof(fc);

	memset(&fc, 0, sizeof(fc));
	fc.head.magic = FPSIMD_MAGIC;
	fc.head.size = sizeof(fc);
	fc.fpsr = ut->fp.fpsr;
	fc.fpcr = ut->fp.fpcr;
	memcpy(fc.vregs, ut->fp.v, sizeof(fc.vregs));
	if (ksvc_copy_to_user((void *)(uintptr_t)ureserved, &fc, sizeof(fc)))
		return -EFAULT;
	if (esr) {
		if (ksvc_copy_to_user((void *)(uintptr_t)(ureserved + off), &ec, sizeof(ec)))
			return -EFAULT;
		off += sizeof(ec);
	}
	return ksvc_copy_to_user((void *)(uintptr_t)(ureserved + off), &end, sizeof(end));
}

static int sig_setup_frame(struct trapframe *tf, struct uthread *ut, int sig,
			   const struct ksigaction *ka, const struct ksiginfo *info, uint64_t oldmask)
{
	uint64_t sp = tf->sp;

	if ((ka->flags & SA_ONSTACK) && ut->altstack_size && !sig_on_altstack(ut, sp))
		sp = ut->altstack_sp + ut->altstack_size;
	uint64_t rec = ALIGN_DOWN(sp - sizeof(struct frame_record), 16);
	uint64_t fr = ALIGN_DOWN(rec, 16) - ALIGN_UP(sizeof(struct rt_sigframe), 16);
	struct rt_sigframe *uf = (struct rt_sigframe *)(uintptr_t)fr;

	if (fr >= rec || rec >= USER_VA_END)
		return -EFAULT;
	if (!(ka->flags & SA_RESTORER) && !current_proc()->mm->sigtramp)
		return -EFAULT;

	/* the ucontext head: flags, link, stack, mask */
	struct {
		uint64_t uc_flags;
		uint64_t uc_link;
		stack_t uc_stack;
		sigset_t uc_sigmask;
	} head;
	_Static_assert(sizeof(head) == __builtin_offsetof(struct ucontext, uc_sigmask) + 8,
		       "ucontext head layout");
	memset(&head, 0, sizeof(head));
	head.uc_stack.ss_sp = (void *)(uintptr_t)ut->altstack_sp;
	head.uc_stack.ss_size = ut->altstack_size;
	head.uc_stack.ss_flags = sig_altstack_flags(ut, tf->sp);
	head.uc_sigmask.sig[0] = oldmask;
	if (ksvc_copy_to_user(&uf->uc, &head, sizeof(head)))
		return -EFAULT;

	struct {
		uint64_t fault_address;
		uint64_t regs[31];
		uint64_t sp, pc, pstate;
	} mc;
	_Static_assert(sizeof(mc) == __builtin_offsetof(struct sigcontext, __reserved) - 8,
		       "sigcontext head layout (then 8 bytes of padding)");
	mc.fault_address = 0;
	if (info->code > SI_USER && info->code < SI_KERNEL && (sig == SIGSEGV || sig == SIGBUS))
		mc.fault_address = info->addr;
	memcpy(mc.regs, tf->x, sizeof(mc.regs));
	mc.sp = tf->sp;
	mc.pc = tf->pc;
	mc.pstate = tf->pstate;
	if (ksvc_copy_to_user(&uf->uc.uc_mcontext, &mc, sizeof(mc)))
		return -EFAULT;
	bool fault = info->code > SI_USER && info->code < SI_KERNEL &&
		     (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGTRAP ||
		      sig == SIGFPE);

	if (sig_put_records(uptr(uf->uc.uc_mcontext.__reserved), ut, fault ? info->value : 0))
		return -EFAULT;
	struct frame_record r = { tf->x[29], tf->x[30] };

	if (ksvc_copy_to_user((void *)(uintptr_t)rec, &r, sizeof(r)))
		return -EFAULT;
	if ((ka->flags & SA_SIGINFO) && sig_copy_siginfo_to_user(uptr(&uf->info), info))
		return -EFAULT;

	/* setup_return */
	tf->x[0] = (uint64_t)sig;
	if (ka->flags & SA_SIGINFO) {
		tf->x[1] = uptr(&uf->info);
		tf->x[2] = uptr(&uf->uc);
	}
	tf->sp = fr;
	tf->x[29] = rec;
	/* Without SA_RESTORER (glibc sets none on arm64), return through the vDSO's
	 * __kernel_rt_sigreturn (mm->sigtramp), as Linux: unwinders know it by its CFI. */
	tf->x[30] = (ka->flags & SA_RESTORER) ? ka->restorer : current_proc()->mm->sigtramp;
	tf->pc = ka->handler;
	tf->pstate &= ~(3ull << 10); /* BTYPE: the handler is entered as by a plain branch */
	if ((ka->flags & SA_ONSTACK) && (ut->altstack_flags & (int)SS_AUTODISARM)) {
		ut->altstack_sp = ut->altstack_size = 0;
		ut->altstack_flags = 0;
	}
	return 0;
}

/* ---- delivery ---- */

/* A frame saved by an svc (an IRQ frame holds a stale ESR, hence the restart-code test too). */
static bool sig_svc_frame(const struct trapframe *tf)
{
	return ((tf->esr >> 26) & 0x3f) == 0x15; /* ESR_ELx.EC == SVC64 */
}

void signal_syscall_enter(struct trapframe *tf)
{
	tf->far = tf->x[0];
	tf->esr |= TF_ESR_IN_SYSCALL;
}

bool signal_work_pending(struct trapframe *tf)
{
	struct uthread *ut = current_uthread();

	if (!ut || !trapframe_from_user(tf))
		return false;
	if (tf->esr & TF_ESR_IN_SYSCALL) {
		if (signal_is_restart_code((long)tf->x[0]))
			return true;
		tf->esr &= ~TF_ESR_IN_SYSCALL;
	} else if (sig_svc_frame(tf) && signal_is_restart_code((long)tf->x[0])) {
		return true;
	}
	struct proc *p = ut->task.proc;

	if (unlikely(READ_ONCE(ut->ptrace)))
		return ut->restore_sigmask || signal_pending(&ut->task); /* covers the traps */
	return ut->restore_sigmask || signal_pending(&ut->task) || sig_group_stopped(p);
}

/* Pick the next signal to act on; its action copied to *ka.  0 when nothing is left. */
static int sig_get(struct uthread *ut, struct proc *p, struct ksigaction *ka, struct ksiginfo *info)
{
	struct sighand *sh = p->sighand;

	for (;;) {
		if (unlikely(READ_ONCE(ut->ptrace)))
			ptrace_jobctl(ut); /* group-stop and interrupt traps, or the plain wait */
		else if (sig_group_stopped(p)) {
			sig_group_stop_wait(p);
			if (READ_ONCE(ut->ptrace))
				continue; /* seized while stopped: its trap first */
		}
		if (READ_ONCE(p->exiting))
			proc_exit_thread(0);

		unsigned long f = spin_lock_irqsave(&sh->lock);
		int sig = sig_dequeue_locked(ut, sh, ~ut->sigmask, info);

		if (!sig) {
			spin_unlock_irqrestore(&sh->lock, f);
			return 0;
		}
		if (unlikely(READ_ONCE(ut->ptrace)) && sig != SIGKILL) {
			/* the signal-delivery stop: the tracer may cancel or change it */
			spin_unlock_irqrestore(&sh->lock, f);
			sig = ptrace_signal(ut, sig, info);
			if (!sig)
				continue;
			f = spin_lock_irqsave(&sh->lock);
		}
		struct ksigaction *act = &sh->action[sig - 1];

		*ka = *act;
		if (ka->handler > 1 && (ka->flags & SA_RESETHAND))
			act->handler = (uint64_t)(uintptr_t)SIG_DFL; /* SA_ONESHOT */
		spin_unlock_irqrestore(&sh->lock, f);
		trace_signal_deliver(sig, info->errno_, info->code, ka->handler, ka->flags);

		if (ka->handler == (uint64_t)(uintptr_t)SIG_IGN)
			continue;
		if (ka->handler > 1)
			return sig;
		switch (sig_default_action(sig)) {
		case SIGDFL_IGN:
		case SIGDFL_CONT:
			continue;
		case SIGDFL_STOP:
			sig_group_stop_begin(p, sig);
			continue;
		case SIGDFL_TERM:
		case SIGDFL_CORE:
			/* No core is written, so the status is the bare signal, as Linux's with
			 * RLIMIT_CORE 0; the parent sees CLD_KILLED. */
			proc_exit_group(sig);
		}
	}
}

void signal_deliver(struct trapframe *tf)
{
	struct uthread *ut = current_uthread();
	struct proc *p = ut->task.proc;
	long ret = 0;
	bool restarting = false;

	/* Without signal_syscall_enter's mark the original x0 is lost: no restart, EINTR. */
	if (!(tf->esr & TF_ESR_IN_SYSCALL) && sig_svc_frame(tf) &&
	    signal_is_restart_code((long)tf->x[0]))
		tf->x[0] = (uint64_t)-EINTR;
	/* do_signal: rewind an interrupted syscall first; undone below if a handler runs. */
	if (tf->esr & TF_ESR_IN_SYSCALL) {
		tf->esr &= ~TF_ESR_IN_SYSCALL;
		ret = (long)tf->x[0];
		if (signal_is_restart_code(ret)) {
			tf->x[0] = tf->far;
			tf->pc -= 4;
			restarting = true;
		}
	}

	struct ksigaction ka;
	struct ksiginfo info;
	int sig = sig_get(ut, p, &ka, &info);

	if (!sig) {
		if (ut->restore_sigmask) {
			ut->restore_sigmask = false;
			unsigned long f = spin_lock_irqsave(&p->sighand->lock);

			ut->sigmask = ut->saved_sigmask;
			spin_unlock_irqrestore(&p->sighand->lock, f);
		}
		return;
	}
	if (restarting && (ret == -ERESTARTNOHAND || ret == -ERESTART_RESTARTBLOCK ||
			   (ret == -ERESTARTSYS && !(ka.flags & SA_RESTART)))) {
		tf->x[0] = (uint64_t)-EINTR;
		tf->pc += 4;
	}
	uint64_t oldmask = ut->restore_sigmask ? ut->saved_sigmask : ut->sigmask;

	if (sig_setup_frame(tf, ut, sig, &ka, &info, oldmask)) {
		/* force_sigsegv: no way to run the handler */
		klog_ratelimited(6, "%s[%d]: cannot build the frame for signal %d at sp %lx: "
				 "SIGSEGV", ut->task.comm, ut->task.tid, sig, (unsigned long)tf->sp);
		proc_exit_group(SIGSEGV);
	}
	/* signal_delivered: block sa_mask and (unless SA_NODEFER) the signal itself. */
	unsigned long f = spin_lock_irqsave(&p->sighand->lock);

	ut->restore_sigmask = false;
	ut->sigmask |= ka.mask;
	if (!(ka.flags & SA_NODEFER))
		ut->sigmask |= SIGBIT(sig);
	ut->sigmask &= ~SIG_UNBLOCKABLE;
	spin_unlock_irqrestore(&p->sighand->lock, f);
}

/* ---- rt_sigreturn ---- */

/* Walk the __reserved records: exactly one FPSIMD record, then the terminator. */
static int sig_restore_records(struct uthread *ut, uint64_t ureserved)
{
	uint64_t off = 0, limit = sizeof(((struct sigcontext *)0)->__reserved);
	bool have_fp = false;

	while (off + sizeof(struct _aarch64_ctx) <= limit) {
		struct _aarch64_ctx h;

		if (ksvc_copy_from_user(&h, (const void *)(uintptr_t)(ureserved + off), sizeof(h)))
			return -EFAULT;
		if (h.magic == 0)
			return (h.size == 0 && have_fp) ? 0 : -EINVAL;
		if (h.size < sizeof(h) || (h.size & 15) || h.size > limit - off)
			return -EINVAL;
		if (h.magic == FPSIMD_MAGIC) {
			struct fpsimd_context fc;

			if (have_fp || h.size != sizeof(fc))
				return -EINVAL;
			if (ksvc_copy_from_user(&fc, (const void *)(uintptr_t)(ureserved + off),
						sizeof(fc)))
				return -EFAULT;
			ut->fp.fpsr = fc.fpsr;
			ut->fp.fpcr = fc.fpcr;
			memcpy(ut->fp.v, fc.vregs, sizeof(fc.vregs));
			have_fp = true;
		} else if (h.magic != ESR_MAGIC) {
			return -EINVAL; /* SVE, ZA, extra_context: never built here */
		}
		off += h.size;
	}
	return -EINVAL;
}

static long sys_rt_sigreturn(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
			     uint64_t a5)
{
	struct uthread *ut = current_uthread();
	struct proc *p = ut->task.proc;
	struct trapframe *tf = ut->tf;
	struct rt_sigframe *uf = (struct rt_sigframe *)(uintptr_t)tf->sp;
	sigset_t mask;
	stack_t st;
	struct {
		uint64_t fault_address;
		uint64_t regs[31];
		uint64_t sp, pc, pstate;
	} mc;

	tf->esr &= ~TF_ESR_IN_SYSCALL; /* forget the syscall: x0 is the restored x0 */
	if (tf->sp & 15)
		goto badframe;
	if (ksvc_copy_from_user(&mask, &uf->uc.uc_sigmask, sizeof(mask)) ||
	    ksvc_copy_from_user(&mc, &uf->uc.uc_mcontext, sizeof(mc)) ||
	    ksvc_copy_from_user(&st, &uf->uc.uc_stack, sizeof(st)))
		goto badframe;
	/* valid_user_regs: AArch64 EL0t with no exception masked */
	if ((mc.pstate & PSR_MODE_MASK) || (mc.pstate & PSR_DAIF_MASK) || (mc.pc & 3) ||
	    mc.pc >= USER_VA_END)
		goto badframe;
	if (sig_restore_records(ut, uptr(uf->uc.uc_mcontext.__reserved)))
		goto badframe;

	unsigned long f = spin_lock_irqsave(&p->sighand->lock);

	ut->sigmask = mask.sig[0] & ~SIG_UNBLOCKABLE;
	spin_unlock_irqrestore(&p->sighand->lock, f);
	memcpy(tf->x, mc.regs, sizeof(mc.regs));
	tf->sp = mc.sp;
	tf->pc = mc.pc;
	tf->pstate = mc.pstate & PSR_USER_OK;
	(void)sig_set_altstack(ut, &st, tf->sp); /* restore_altstack: errors ignored */
	return (long)tf->x[0];

badframe:
	signal_force_fault(SIGSEGV, SEGV_MAPERR, tf->sp); /* arm64_notify_segfault(sp) */
	return 0;
}
SYSCALL(__NR_rt_sigreturn, sys_rt_sigreturn);
