/*
 * ptrace_req.c - the tracer's side of ptrace(2) (Linux 6.1, arm64): TRACEME, ATTACH/SEIZE
 * (with the wait for a stopped task's re-trap), KILL, INTERRUPT, and the requests on a stopped
 * tracee: PEEK/POKE, GETREGSET/SETREGSET (NT_PRSTATUS, NT_PRFPREG, NT_ARM_TLS,
 * NT_ARM_SYSTEM_CALL), SETOPTIONS, GETEVENTMSG, GETSIGINFO, GET_SYSCALL_INFO, and CONT/SYSCALL/
 * LISTEN/DETACH, which fill the stopped tracee's frame (kernel/ptrace.c).  A request pins the
 * tracee (busy) so that a SIGKILL cannot take its registers away meanwhile.  Other requests
 * (PEEKUSR: arm64 has none, GETREGS, SINGLESTEP, SETSIGINFO, ...) are EIO.
 */
#include <linux/audit.h>
#include <linux/elf.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <asm/ptrace.h>
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <asm/unistd.h>
#include <arch/trapframe.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/vm.h>
#include "ptrace_internal.h"
#include "signal_internal.h"

_Static_assert(sizeof(struct user_fpsimd_state) == sizeof(struct fpsimd_regs),
	       "uthread fp is user_fpsimd_state");
_Static_assert(__builtin_offsetof(struct ptrace_syscall_info, entry.args) == 32,
	       "ptrace_syscall_info layout");

/* ---- the tracer's requests ---- */

static int pt_traceme(void)
{
	struct uthread *ut = current_uthread();
	struct proc *p = ut->task.proc;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	int err = -EPERM;

	if (p->parent && !READ_ONCE(ut->ptrace)) {
		struct ptrace_link *l = pt_link_alloc(p->parent, ut);

		err = -ENOMEM;
		if (l) {
			spin_lock(&ptrace_lock);
			list_add_tail(&ptrace_links, &l->node);
			ut->ptrace = l;
			spin_unlock(&ptrace_lock);
			err = 0;
		}
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

/* JOBCTL_TRAPPING: attaching to a stopped task returns once it re-trapped for us, so the
 * tracer's next wait4 reports that stop (before a SIGCONT sent meanwhile). */
static void pt_wait_trapped(struct proc *me, int tid, const struct ptrace_link *l)
{
	struct waiter w = { 0 };

	for (;;) {
		waitq_prepare(&me->child_wait, &w);
		unsigned long f = spin_lock_irqsave(&proc_tree_lock);
		struct uthread *ut = proc_find_thread_locked(tid);

		spin_lock(&ptrace_lock);
		bool done = !ut || ut->ptrace != l || l->stop || pt_kill_pending(ut);

		spin_unlock(&ptrace_lock);
		spin_unlock_irqrestore(&proc_tree_lock, f);
		if (done)
			break;
		waitq_block(&w, 0);
	}
	waitq_finish(&me->child_wait, &w);
}

static int pt_attach(long pid, bool seize, uint64_t addr, uint64_t flags)
{
	struct proc *me = current_proc();

	if (seize && (addr != 0 || (flags & ~(uint64_t)PTRACE_O_MASK)))
		return -EIO;
	struct ptrace_link *fresh = kmalloc(sizeof(*fresh));

	if (!fresh)
		return -ENOMEM;
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = pid > 0 && pid <= 0x7fffffff ? proc_find_thread_locked((int)pid) : NULL;
	int err = 0;

	if (!ut)
		err = pid > 0 && pid <= 0x7fffffff && sched_tid_is_kthread((int)pid) ? -EPERM : -ESRCH;
	else if (ut->task.proc == me || READ_ONCE(((struct proc *)ut->task.proc)->exiting))
		err = -EPERM;
	if (err) {
		spin_unlock_irqrestore(&proc_tree_lock, f);
		kfree(fresh);
		return err;
	}
	struct ptrace_link *l = pt_link_alloc(me, ut);

	kfree(fresh);
	if (!l) {
		spin_unlock_irqrestore(&proc_tree_lock, f);
		return -ENOMEM;
	}
	spin_lock(&ptrace_lock);
	if (ut->ptrace) {
		spin_unlock(&ptrace_lock);
		spin_unlock_irqrestore(&proc_tree_lock, f);
		kfree(l);
		return -EPERM;
	}
	l->seized = seize;
	l->options = seize ? (uint32_t)flags : 0;
	struct proc *p = ut->task.proc;
	bool stopped = sig_group_stopped(p);

	if (stopped)
		l->trap_stop = true; /* re-trap as a group stop for the new tracer */
	list_add_tail(&ptrace_links, &l->node);
	ut->ptrace = l;
	spin_unlock(&ptrace_lock);
	if (!seize) {
		struct ksiginfo info;

		memset(&info, 0, sizeof(info)); /* SEND_SIG_PRIV */
		info.signo = SIGSTOP;
		info.code = SI_KERNEL;
		signal_send_thread(ut, SIGSTOP, &info);
	}
	if (stopped)
		wake_up_task(&ut->task);
	int tid = ut->task.tid;

	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (stopped)
		pt_wait_trapped(me, tid, l);
	return 0;
}

/* Find pid among our tracees: it must be stopped (not listening), and is pinned (busy) until
 * pt_put.  -ESRCH otherwise, as ptrace_check_attach. */
static int pt_get(long pid, struct ptrace_link **out)
{
	struct proc *me = current_proc();
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = pid > 0 && pid <= 0x7fffffff ? proc_find_thread_locked((int)pid) : NULL;
	int err = -ESRCH;

	spin_lock(&ptrace_lock);
	struct ptrace_link *l = ut ? ut->ptrace : NULL;

	if (l && l->tracer == me && l->stop) {
		l->busy++;
		*out = l;
		err = 0;
	}
	spin_unlock(&ptrace_lock);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

static void pt_put(struct ptrace_link *l)
{
	unsigned long f = spin_lock_irqsave(&ptrace_lock);

	l->busy--;
	/* a SIGKILL waits for the last request to let go of the stopped tracee */
	if (!l->busy && l->tracee && pt_kill_pending(l->tracee))
		wake_up_task(&l->tracee->task);
	spin_unlock_irqrestore(&ptrace_lock, f);
}

/* CONT, SYSCALL, LISTEN, DETACH: end the stop (ptrace_resume).  Drops our pin in the same
 * locked step: once resumed, the tracee may exit and free l. */
static int pt_resume(struct ptrace_link *l, long request, uint64_t data)
{
	unsigned long f = spin_lock_irqsave(&ptrace_lock);
	int err = 0;

	if (data > KSIG_MAX) {
		err = -EIO;
	} else if (request == PTRACE_LISTEN && (!l->seized || l->why != PT_STOP_GROUP)) {
		err = -EIO;
	} else if (l->stop && l->busy == 1) {
		struct pt_frame *fr = l->stop;
		struct uthread *ut = l->tracee;

		if (request == PTRACE_SYSCALL)
			l->syscall_trace = true;
		else if (request != PTRACE_LISTEN)
			l->syscall_trace = false;
		fr->request = request;
		fr->sig = (int)data;
		fr->done = true;
		l->stop = NULL;
		l->report = false;
		l->busy = 0;
		if (request == PTRACE_DETACH) {
			ut->ptrace = NULL;
			pt_unlink_free_locked(l);
		}
		wake_up_task(&ut->task);
		spin_unlock_irqrestore(&ptrace_lock, f);
		return 0;
	} else {
		err = -ESRCH;
	}
	spin_unlock_irqrestore(&ptrace_lock, f);
	pt_put(l);
	return err;
}

static int pt_peek(struct ptrace_link *l, uint64_t addr, uint64_t data)
{
	uint64_t word;
	struct mm *mm = ((struct proc *)l->tracee->task.proc)->mm;

	if (vm_access_remote(mm, addr, &word, sizeof(word), false) != sizeof(word))
		return -EIO;
	return ksvc_copy_to_user((void *)data, &word, sizeof(word));
}

static int pt_poke(struct ptrace_link *l, uint64_t addr, uint64_t data)
{
	struct mm *mm = ((struct proc *)l->tracee->task.proc)->mm;

	return vm_access_remote(mm, addr, &data, sizeof(data), true) == sizeof(data) ? 0 : -EIO;
}

/* The regset's bytes, in a buffer big enough for any: its size, or -EINVAL (unknown note). */
static int pt_regset_size(uint64_t type)
{
	switch (type) {
	case NT_PRSTATUS:
		return sizeof(struct user_pt_regs);
	case NT_PRFPREG:
		return sizeof(struct user_fpsimd_state);
	case NT_ARM_TLS:
		return 8;
	case NT_ARM_SYSTEM_CALL:
		return 4;
	default:
		return -EINVAL;
	}
}

static void pt_regset_get(struct ptrace_link *l, uint64_t type, void *buf)
{
	struct uthread *ut = l->tracee;

	switch (type) {
	case NT_PRSTATUS:
		memcpy(buf, ut->tf, sizeof(struct user_pt_regs));
		break;
	case NT_PRFPREG:
		memcpy(buf, &ut->fp, sizeof(ut->fp));
		break;
	case NT_ARM_TLS:
		memcpy(buf, &ut->tpidr_el0, 8);
		break;
	case NT_ARM_SYSTEM_CALL:
		memcpy(buf, &l->syscallno, 4);
		break;
	}
}

#define PSR_DAIF (PSR_D_BIT | PSR_A_BIT | PSR_I_BIT | PSR_F_BIT)
/* SPSR bits that are RES0 for an AArch64 EL0 task (Linux's SPSR_EL1_AARCH64_RES0_BITS). */
#define PSR_RES0 ((0xffffffffull << 32) | (0x7ull << 25) | (0x3full << 13) | (1ull << 5))

static int pt_regset_set(struct ptrace_link *l, uint64_t type, const void *buf, int len)
{
	struct uthread *ut = l->tracee;

	switch (type) {
	case NT_PRSTATUS: {
		struct user_pt_regs r;

		memcpy(&r, ut->tf, sizeof(r));
		memcpy(&r, buf, (size_t)len);
		r.pstate &= ~PSR_RES0;
		/* valid_native_regs: EL0t, no DAIF masking */
		if ((r.pstate & (PSR_MODE_MASK | PSR_MODE32_BIT)) || (r.pstate & PSR_DAIF))
			return -EINVAL;
		memcpy(ut->tf, &r, sizeof(r));
		return 0;
	}
	case NT_PRFPREG:
		memcpy(&ut->fp, buf, (size_t)len);
		return 0;
	case NT_ARM_TLS:
		memcpy(&ut->tpidr_el0, buf, (size_t)len);
		return 0;
	case NT_ARM_SYSTEM_CALL:
		memcpy(&l->syscallno, buf, (size_t)len);
		return 0;
	}
	return -EINVAL;
}

static int pt_regset(struct ptrace_link *l, bool set, uint64_t type, uint64_t uiov)
{
	struct iovec_k {
		uint64_t base, len;
	} iov;
	uint64_t buf[sizeof(struct user_fpsimd_state) / 8];
	int size = pt_regset_size(type);

	if (ksvc_copy_from_user(&iov, (void *)uiov, sizeof(iov)))
		return -EFAULT;
	if (size < 0)
		return size;
	/* ptrace_regset: whole registers only for a write; a short read is cut */
	if (set && (iov.len % (type == NT_ARM_SYSTEM_CALL ? 4 : 8)))
		return -EINVAL;
	int n = iov.len < (uint64_t)size ? (int)iov.len : size;

	if (set) {
		if (ksvc_copy_from_user(buf, (void *)iov.base, (size_t)n))
			return -EFAULT;
		return pt_regset_set(l, type, buf, n);
	}
	pt_regset_get(l, type, buf);
	if (ksvc_copy_to_user((void *)iov.base, buf, (size_t)n))
		return -EFAULT;
	iov.len = (uint64_t)n;
	return ksvc_copy_to_user((void *)uiov, &iov, sizeof(iov));
}

static int pt_getsiginfo(struct ptrace_link *l, uint64_t data)
{
	if (!l->has_si)
		return -EINVAL;
	if (!l->si_notify)
		return sig_copy_siginfo_to_user(data, &l->si);
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = l->si.signo;
	si.si_code = l->si.code;
	si.si_pid = l->si.pid;
	si.si_uid = l->si.uid;
	return ksvc_copy_to_user((void *)data, &si, sizeof(si));
}

static long pt_get_syscall_info(struct ptrace_link *l, uint64_t size, uint64_t data)
{
	const struct trapframe *tf = l->tracee->tf;
	struct ptrace_syscall_info info;
	uint64_t actual = __builtin_offsetof(struct ptrace_syscall_info, entry);
	bool sysgood = l->has_si && l->si_notify && l->si.code == (SIGTRAP | 0x80);

	memset(&info, 0, sizeof(info));
	info.op = PTRACE_SYSCALL_INFO_NONE;
	info.arch = AUDIT_ARCH_AARCH64;
	info.instruction_pointer = tf->pc;
	info.stack_pointer = tf->sp;
	if (sysgood && l->why == PT_STOP_SYSCALL_ENTRY) {
		info.op = PTRACE_SYSCALL_INFO_ENTRY;
		info.entry.nr = (uint64_t)(int64_t)l->syscallno;
		info.entry.args[0] = tf->far; /* orig_x0 (signal_syscall_enter) */
		for (int i = 1; i < 6; i++)
			info.entry.args[i] = tf->x[i];
		actual = __builtin_offsetof(struct ptrace_syscall_info, entry.args) +
			 sizeof(info.entry.args);
	} else if (sysgood && l->why == PT_STOP_SYSCALL_EXIT) {
		int64_t rv = (int64_t)tf->x[0];

		info.op = PTRACE_SYSCALL_INFO_EXIT;
		info.exit.rval = rv;
		info.exit.is_error = rv < 0 && rv >= -4095;
		actual = __builtin_offsetof(struct ptrace_syscall_info, exit.is_error) + 1;
	}
	uint64_t n = size < actual ? size : actual;

	if (ksvc_copy_to_user((void *)data, &info, (size_t)n))
		return -EFAULT;
	return (long)actual;
}

static long pt_request(struct ptrace_link *l, long request, uint64_t addr, uint64_t data)
{
	switch (request) {
	case PTRACE_PEEKTEXT:
	case PTRACE_PEEKDATA:
		return pt_peek(l, addr, data);
	case PTRACE_POKETEXT:
	case PTRACE_POKEDATA:
		return pt_poke(l, addr, data);
	case PTRACE_GETREGSET:
	case PTRACE_SETREGSET:
		return pt_regset(l, request == PTRACE_SETREGSET, addr, data);
	case PTRACE_SETOPTIONS:
		if (data & ~(uint64_t)PTRACE_O_MASK)
			return -EINVAL;
		l->options = (uint32_t)data;
		return 0;
	case PTRACE_GETEVENTMSG:
		return ksvc_copy_to_user((void *)data, &l->eventmsg, sizeof(l->eventmsg));
	case PTRACE_GETSIGINFO:
		return pt_getsiginfo(l, data);
	case PTRACE_GET_SYSCALL_INFO:
		return pt_get_syscall_info(l, addr, data);
	case PTRACE_CONT:
	case PTRACE_SYSCALL:
	case PTRACE_LISTEN:
	case PTRACE_DETACH:
		return pt_resume(l, request, data);
	default:
		return -EIO; /* PEEKUSR/POKEUSR, GETREGS, SINGLESTEP, ...: not on arm64 or not built */
	}
}

/* KILL and INTERRUPT need no stop (ptrace_check_attach's ignore_state). */
static int pt_kill_or_interrupt(long pid, long request)
{
	struct proc *me = current_proc();
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = pid > 0 && pid <= 0x7fffffff ? proc_find_thread_locked((int)pid) : NULL;

	spin_lock(&ptrace_lock);
	struct ptrace_link *l = ut ? ut->ptrace : NULL;
	int err = 0;

	if (!l || l->tracer != me)
		err = -ESRCH;
	else if (request == PTRACE_INTERRUPT && !l->seized)
		err = -EIO;
	else if (request == PTRACE_INTERRUPT)
		l->trap_stop = true;
	spin_unlock(&ptrace_lock);
	if (!err && request == PTRACE_KILL) {
		struct ksiginfo info;

		sig_info_user(&info, SIGKILL, SI_USER);
		signal_send_proc(ut->task.proc, SIGKILL, &info);
	} else if (!err) {
		wake_up_task(&ut->task); /* out of a sleeping syscall or a listen */
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

static long sys_ptrace(uint64_t request, uint64_t pid, uint64_t addr, uint64_t data)
{
	long req = (long)request;
	struct ptrace_link *l;
	long ret;

	if (req == PTRACE_TRACEME)
		return pt_traceme();
	if (req == PTRACE_ATTACH || req == PTRACE_SEIZE)
		return pt_attach((long)pid, req == PTRACE_SEIZE, addr, data);
	if (req == PTRACE_KILL || req == PTRACE_INTERRUPT)
		return pt_kill_or_interrupt((long)pid, req);
	ret = pt_get((long)pid, &l);
	if (ret)
		return ret;
	ret = pt_request(l, req, addr, data);
	if (req != PTRACE_CONT && req != PTRACE_SYSCALL && req != PTRACE_LISTEN &&
	    req != PTRACE_DETACH)
		pt_put(l); /* pt_resume let go itself */
	return ret;
}
SYSCALL(__NR_ptrace, sys_ptrace);
