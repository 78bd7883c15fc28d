/*
 * usertrap.c - exceptions from EL0 and the work done before returning there.
 *
 * SVC is a system call; instruction/data aborts go to the VM (demand paging, copy-on-write)
 * and become SIGSEGV/SIGBUS when they cannot be resolved; undefined instructions SIGILL;
 * alignment faults SIGBUS; BRK SIGTRAP.  Before returning to EL0: a forked child writes its
 * CLONE_CHILD_SETTID word, an exiting thread group ends the thread, signals are delivered.
 */
#include <asm/siginfo.h>
#include <asm/signal.h>
#include <arch/debug.h>
#include <arch/sysreg.h>
#include <arch/trapframe.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/signal.h>
#include <kern/syscall.h>
#include <kern/trap.h>
#include <kern/vm.h>
#include <kern/signal_proc.h>
#include "signal_internal.h"

static void user_abort(struct trapframe *tf, uint32_t ec)
{
	bool is_data = ec == ESR_EC_DABT_LOW;
	uint32_t fsc = tf->esr & ESR_FSC_MASK;
	bool write = is_data && (tf->esr & ESR_WNR) && !(tf->esr & (1 << 8)) /* not a CM op */;
	struct proc *p = current_proc();

	if ((fsc & 0x3c) == 0x20 && fsc == 0x21) {
		signal_force_fault(SIGBUS, BUS_ADRALN, tf->far);
		return;
	}
	if (tf->far >= (1ull << 48)) {
		signal_force_fault(SIGSEGV, SEGV_MAPERR, tf->far);
		return;
	}
	int err = vm_fault(p->mm, tf->far, write, !is_data, true);

	if (err == 0)
		return;
	if (err == -EIO)
		signal_force_fault(SIGBUS, BUS_ADRERR, tf->far);
	else if (err == -ENOMEM)
		signal_force_fault(SIGKILL, SI_KERNEL, tf->far);
	else
		signal_force_fault(SIGSEGV, err == -EACCES ? SEGV_ACCERR : SEGV_MAPERR, tf->far);
}

/*
 * EL0 reads of the CPU ID registers (MRS with Op0 3, Op1 0, CRn 0) trap; Linux emulates them
 * for programs that see HWCAP_CPUID (glibc reads MIDR_EL1 to pick its string routines).
 * MPIDR reads as Linux shows it (0x80000000); the ID_AA64 registers report the hardware's
 * values (Linux masks some fields it hides from user space: a known difference).
 */
static bool emulate_mrs_iss(struct trapframe *tf, uint32_t iss);

static bool emulate_mrs(struct trapframe *tf)
{
	return emulate_mrs_iss(tf, tf->esr & ESR_ISS_MASK);
}

/*
 * ARMv8.0 CPUs without FEAT_IDST (cortex-a72) report the same EL0 MRS as an undefined
 * instruction (EC 0): decode the instruction into the trapped-MRS syndrome and emulate it,
 * as Linux's undef hook does.
 */
static bool emulate_undef_mrs(struct trapframe *tf)
{
	uint32_t insn;

	if (ksvc_copy_from_user(&insn, (void *)tf->pc, sizeof(insn)))
		return false;
	if ((insn & 0xfff00000u) != 0xd5300000u) /* MRS Xt, S3_<op1>_C<n>_C<m>_<op2> */
		return false;
	uint32_t op0 = 2 + ((insn >> 19) & 1), op1 = (insn >> 16) & 7, crn = (insn >> 12) & 0xf;
	uint32_t crm = (insn >> 8) & 0xf, op2 = (insn >> 5) & 7, rt = insn & 0x1f;
	uint32_t iss = (op0 << 20) | (op2 << 17) | (op1 << 14) | (crn << 10) | (rt << 5) |
		       (crm << 1) | 1;

	return emulate_mrs_iss(tf, iss);
}

static bool emulate_mrs_iss(struct trapframe *tf, uint32_t iss)
{
	unsigned int op0 = (iss >> 20) & 3, op2 = (iss >> 17) & 7, op1 = (iss >> 14) & 7;
	unsigned int crn = (iss >> 10) & 0xf, rt = (iss >> 5) & 0x1f, crm = (iss >> 1) & 0xf;
	uint64_t v = 0;

	if (!(iss & 1) || op0 != 3 || op1 != 0 || crn != 0)
		return false;
	switch (crm << 3 | op2) {
	case 0 << 3 | 0: v = read_sysreg(midr_el1); break;
	case 0 << 3 | 5: v = 0x80000000ull; break; /* MPIDR_EL1 */
	case 0 << 3 | 6: v = read_sysreg(revidr_el1); break;
	case 4 << 3 | 0: v = read_sysreg(id_aa64pfr0_el1); break;
	case 4 << 3 | 1: v = read_sysreg(id_aa64pfr1_el1); break;
	case 5 << 3 | 0: v = read_sysreg(id_aa64dfr0_el1); break;
	case 5 << 3 | 1: v = read_sysreg(id_aa64dfr1_el1); break;
	case 6 << 3 | 0: v = read_sysreg(id_aa64isar0_el1); break;
	case 6 << 3 | 1: v = read_sysreg(id_aa64isar1_el1); break;
	case 7 << 3 | 0: v = read_sysreg(id_aa64mmfr0_el1); break;
	case 7 << 3 | 1: v = read_sysreg(id_aa64mmfr1_el1); break;
	case 7 << 3 | 2: v = read_sysreg(id_aa64mmfr2_el1); break;
	default:
		if (crm < 4 && !(crm == 0 && op2 != 0 && op2 != 5 && op2 != 6))
			v = 0; /* AArch32 ID space and reserved encodings read as zero */
		else if (crm >= 4)
			v = 0;
		else
			return false;
	}
	if (rt != 31)
		tf->x[rt] = v;
	tf->pc += 4;
	return true;
}

void trap_user_sync(struct trapframe *tf)
{
	uint32_t ec = (uint32_t)(tf->esr >> ESR_EC_SHIFT) & 0x3f;

	switch (ec) {
	case ESR_EC_SVC64:
		syscall_dispatch(tf);
		break;
	case ESR_EC_DABT_LOW:
	case ESR_EC_IABT_LOW:
		user_abort(tf, ec);
		break;
	case ESR_EC_PC_ALIGN:
	case ESR_EC_SP_ALIGN:
		signal_force_fault(SIGBUS, BUS_ADRALN, tf->pc);
		break;
	case ESR_EC_BRK64:
		signal_force_fault(SIGTRAP, TRAP_BRKPT, tf->pc);
		break;
	case ESR_EC_BREAKPT_LOW:
	case ESR_EC_SOFTSTP_LOW:
	case ESR_EC_WATCHPT_LOW:
		debug_user_trap(tf, ec); /* perf breakpoints: count, step over */
		break;
	case ESR_EC_FP_EXC64:
		signal_force_fault(SIGFPE, FPE_FLTINV, tf->pc);
		break;
	case ESR_EC_SYS64:
		if (emulate_mrs(tf))
			break;
		signal_force_fault(SIGILL, ILL_ILLOPC, tf->pc);
		break;
	case ESR_EC_UNKNOWN:
		if (emulate_undef_mrs(tf))
			break;
		signal_force_fault(SIGILL, ILL_ILLOPC, tf->pc);
		break;
	case ESR_EC_ILL:
	case ESR_EC_SVE:
	case ESR_EC_PAC:
	default:
		signal_force_fault(SIGILL, ILL_ILLOPC, tf->pc);
		break;
	}
}

bool trap_user_work_pending(struct trapframe *tf)
{
	struct task *t = current_task();
	struct proc *p = t->proc;
	struct uthread *ut = (struct uthread *)t;

	if (!p)
		return false;
	if (unlikely(p->mm && (read_sysreg(ttbr0_el1) >> 48) != p->mm->asid))
		kpanic("task %d returns to user with TTBR0 %lx, its mm has ASID %u", t->tid,
		       read_sysreg(ttbr0_el1), p->mm->asid);
	if (ut->set_child_tid || READ_ONCE(p->exiting) || ut->restore_sigmask)
		return true;
	if (unlikely(READ_ONCE(ut->ptrace)))
		return signal_work_pending(tf); /* traced: ptrace's traps go the slow way */
	/* The common case, checked inline: no unblocked signal, no syscall restart code in x0,
	 * no group stop.  Anything else goes through the signal code's full check. */
	uint64_t pend = READ_ONCE(ut->sigpending_set) | READ_ONCE(p->sighand->shared_pending_set);

	if (!(pend & ~READ_ONCE(ut->sigmask)) && !signal_is_restart_code((long)tf->x[0]) &&
	    !sig_group_stopped(p))
		return false;
	return signal_work_pending(tf);
}

void trap_user_work(struct trapframe *tf)
{
	struct uthread *ut = current_uthread();

	if (ut->set_child_tid) {
		int tid = ut->task.tid;

		ksvc_copy_to_user((void *)ut->set_child_tid, &tid, sizeof(tid));
		ut->set_child_tid = 0;
	}
	if (proc_exiting())
		proc_exit_thread(0);
	if (signal_work_pending(tf)) {
		/* the signal code reads and writes the saved FP/SIMD copy */
		fpsimd_save(&ut->fp);
		ut->fp_in_memory = true;
		signal_deliver(tf);
		unsigned long f = ksvc_irq_save();

		fpsimd_restore(&ut->fp);
		ut->fp_in_memory = false;
		ksvc_irq_restore(f);
	}
}
