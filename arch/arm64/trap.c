/*
 * trap.c - what happens after vectors.S saved a trap frame: interrupts, kernel faults (with a
 * readable report: ESR decoded, FAR, ELR, registers, CPU, backtrace), user exceptions handed to
 * kernel/ (syscalls, page faults, signals), and the preemption points on interrupt return.
 */
#include <arch/arch.h>
#include <arch/debug.h>
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <arch/trapframe.h>
#include <kern/assert.h>
#include <kern/ksym.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/trap.h>

void trap_el1_sync(struct trapframe *tf);
void trap_el0_sync(struct trapframe *tf);
void trap_irq(struct trapframe *tf);
void trap_el0_irq(struct trapframe *tf);
void trap_unexpected(struct trapframe *tf, int kind);
void trap_return_user(struct trapframe *tf);
void schedule_preempt(void);

static const char *const ec_names[64] = {
	[ESR_EC_UNKNOWN] = "unknown/undefined instruction",
	[ESR_EC_WFX] = "WFI/WFE",
	[ESR_EC_FPSIMD] = "FP/SIMD access",
	[ESR_EC_ILL] = "illegal execution state",
	[ESR_EC_SVC64] = "SVC",
	[ESR_EC_SYS64] = "MSR/MRS/system instruction",
	[ESR_EC_SVE] = "SVE access",
	[ESR_EC_PAC] = "pointer authentication failure",
	[ESR_EC_IABT_LOW] = "instruction abort from EL0",
	[ESR_EC_IABT_CUR] = "instruction abort from EL1",
	[ESR_EC_PC_ALIGN] = "PC alignment fault",
	[ESR_EC_DABT_LOW] = "data abort from EL0",
	[ESR_EC_DABT_CUR] = "data abort from EL1",
	[ESR_EC_SP_ALIGN] = "SP alignment fault",
	[ESR_EC_FP_EXC64] = "floating-point exception",
	[ESR_EC_SERROR] = "SError",
	[ESR_EC_BREAKPT_LOW] = "breakpoint from EL0",
	[ESR_EC_SOFTSTP_LOW] = "software step from EL0",
	[ESR_EC_WATCHPT_LOW] = "watchpoint from EL0",
	[ESR_EC_BREAKPT_CUR] = "breakpoint from EL1",
	[ESR_EC_SOFTSTP_CUR] = "software step from EL1",
	[ESR_EC_WATCHPT_CUR] = "watchpoint from EL1",
	[ESR_EC_BRK64] = "BRK instruction",
};

static const char *fsc_name(uint32_t fsc)
{
	switch (fsc & 0x3c) {
	case 0x04:
		return "translation fault";
	case 0x08:
		return "access flag fault";
	case 0x0c:
		return "permission fault";
	case 0x00:
		return "address size fault";
	case 0x10:
		return "synchronous external abort";
	case 0x20:
		return fsc == 0x21 ? "alignment fault" : "other";
	default:
		return "other";
	}
}

/* "<prefix><addr> <function>+<offset>" for kernel code, the bare address otherwise */
static void print_addr(const char *prefix, uint64_t addr)
{
	char name[64];
	uint64_t off;

	if (ksym_lookup(addr, name, sizeof(name), &off))
		printk("%s%016lx %s+%#lx\n", prefix, addr, name, off);
	else
		printk("%s%016lx\n", prefix, addr);
}

void dump_backtrace(uint64_t fp)
{
	printk("backtrace:\n");
	for (int depth = 0; depth < 16 && fp; depth++) {
		/* Only follow frame records inside the kernel's own memory. */
		if (fp < PAGE_OFFSET || (fp & 7))
			break;
		uint64_t *rec = (uint64_t *)fp;

		print_addr("  ", rec[1]);
		fp = rec[0];
	}
}

static void report(const char *what, struct trapframe *tf)
{
	uint32_t ec = (uint32_t)(tf->esr >> ESR_EC_SHIFT) & 0x3f;
	const char *name = ec_names[ec] ? ec_names[ec] : "?";
	struct cpu *c = this_cpu();

	printk("\n*** %s on cpu %u, task %d (%s)\n", what, c ? c->id : 0,
	       c && c->current ? c->current->tid : 0, c && c->current ? c->current->comm : "-");
	printk("ESR %08lx: EC %#x %s, ISS %#lx", tf->esr, ec, name, tf->esr & ESR_ISS_MASK);
	if (ec == ESR_EC_DABT_CUR || ec == ESR_EC_DABT_LOW || ec == ESR_EC_IABT_CUR ||
	    ec == ESR_EC_IABT_LOW)
		printk(" (%s, level %lu, %s)", fsc_name(tf->esr & ESR_FSC_MASK), tf->esr & 3,
		       (tf->esr & ESR_WNR) ? "write" : "read");
	printk("\nFAR %016lx  ELR %016lx  SPSR %08lx  SP_EL0 %016lx\n", tf->far, tf->pc,
	       tf->pstate, tf->sp);
	if (!trapframe_from_user(tf)) {
		print_addr("PC  ", tf->pc);
		print_addr("LR  ", tf->x[30]);
	}
	for (int i = 0; i < 31; i += 2) {
		if (i == 30)
			printk("x30 %016lx\n", tf->x[30]);
		else
			printk("x%-2d %016lx  x%-2d %016lx\n", i, tf->x[i], i + 1, tf->x[i + 1]);
	}
	dump_backtrace(tf->x[29]);
}

extern char uaccess_start[], uaccess_end[];
extern char uaccess_fixup_copy[], uaccess_fixup_str[];

bool trap_fixup_uaccess(struct trapframe *tf)
{
	uint64_t pc = tf->pc;

	/* Demand paging and copy-on-write on a user address: resolve and retry, unless we
	 * are in a context that must not sleep (preempt_count: probe reads from IRQs). */
	if (tf->far < USER_VA_END && current_task()->preempt_count == 0 &&
	    mm_fault_from_kernel(tf->far, (tf->esr & ESR_WNR) != 0)) {
		static uint64_t last_far[8], repeats[8];
		unsigned int id = this_cpu()->id & 7;

		if (last_far[id] == tf->far && ++repeats[id] == 1000) {
			printk("uaccess fault loop: far %lx esr %lx pc %lx task %d\n", tf->far, tf->esr,
			       tf->pc, current_task()->tid);
			mm_debug_pte(tf->far);
		}
		if (last_far[id] != tf->far) {
			last_far[id] = tf->far;
			repeats[id] = 0;
		}
		return true;
	}
	if (pc < (uint64_t)uaccess_start || pc >= (uint64_t)uaccess_end)
		return false;
	/* arch_strncpy_user and arch_read_pair (after it) return -1 */
	tf->pc = pc >= (uint64_t)(uintptr_t)arch_strncpy_user ? (uint64_t)uaccess_fixup_str
						   : (uint64_t)uaccess_fixup_copy;
	return true;
}

void trap_el1_sync(struct trapframe *tf)
{
	uint32_t ec = (uint32_t)(tf->esr >> ESR_EC_SHIFT) & 0x3f;

	/* perf breakpoints on kernel addresses: count, step over (debug exceptions masked) */
	if (ec == ESR_EC_BREAKPT_CUR || ec == ESR_EC_WATCHPT_CUR || ec == ESR_EC_SOFTSTP_CUR) {
		debug_kernel_trap(tf, ec);
		return;
	}
	debug_kernel_cancel(tf); /* the instruction stepped over a hit trapped: no more step */
	/* A fault in a user-copy routine resumes at its fixup (EFAULT), never panics. */
	if ((ec == ESR_EC_DABT_CUR) && trap_fixup_uaccess(tf))
		return;
	/* kprobes: the handler kernel/kprobes.c registered for the BRK's immediate */
	if (ec == ESR_EC_BRK64 && trap_brk(tf))
		return;
	report("kernel exception", tf);
	kpanic("unhandled kernel exception");
}

/* A user task that steps over a hit: its MDSCR_EL1.SS goes before debug exceptions are on. */
static __attribute__((noinline)) void trap_el0_sync_stepping(struct trapframe *tf)
{
	debug_user_enter_slow();
	__asm__ volatile("msr daifclr, #10" ::: "memory");
	trap_user_sync(tf);
}

void trap_el0_sync(struct trapframe *tf)
{
	/* Interrupts on, debug exceptions too (kernel breakpoints in syscalls, as Linux; a user
	 * debug exception masks them again first thing, debug_user_trap).  Kept to a load and a
	 * branch beyond the old path: every syscall comes here. */
	if (unlikely(this_cpu()->dbg_ss_armed)) {
		trap_el0_sync_stepping(tf);
		return;
	}
	__asm__ volatile("msr daifclr, #10" ::: "memory");
	trap_user_sync(tf);
}

/* An interrupt from EL0: a stepping user task's MDSCR_EL1.SS goes first (the return path may
 * switch to a task whose kernel code runs with debug exceptions on). */
void trap_el0_irq(struct trapframe *tf)
{
	debug_user_enter();
	trap_irq(tf);
}

void trap_irq(struct trapframe *tf)
{
	struct task *t = current_task();

	struct trapframe *outer = this_cpu()->irq_tf;

	t->preempt_count++;
	/* this frame while the handlers run, and only then (NULL outside them: ksvc_in_irq, the
	 * tick's user/system split, a ksvc timer's registers) */
	this_cpu()->irq_tf = tf;
	gic_handle_irq(tf);
	this_cpu()->irq_tf = outer;
	t->preempt_count--;
	/* Kernel preemption: only where the interrupted code had interrupts on. */
	if (!trapframe_from_user(tf) && !(tf->pstate & PSR_I) && t->preempt_count == 0 &&
	    atomic_load(&this_cpu()->need_resched) && t != this_cpu()->idle)
		schedule_preempt();
}

void trap_return_user(struct trapframe *tf)
{
	for (;;) {
		/* interrupts and debug exceptions off until the eret (ELR/SPSR are live) */
		__asm__ volatile("msr daifset, #10" ::: "memory");
		if (atomic_load(&this_cpu()->need_resched)) {
			__asm__ volatile("msr daifclr, #2" ::: "memory");
			schedule_preempt();
			continue;
		}
		if (!trap_user_work_pending(tf)) {
			debug_user_return();
			return; /* return to EL0 with interrupts masked until eret */
		}
		__asm__ volatile("msr daifclr, #2" ::: "memory");
		trap_user_work(tf);
	}
}

void trap_unexpected(struct trapframe *tf, int kind)
{
	static const char *const kinds[16] = {
		"EL1t sync", "EL1t IRQ", "EL1t FIQ", "EL1t SError", "EL1h sync", "EL1h IRQ",
		"EL1h FIQ", "EL1h SError", "EL0 sync", "EL0 IRQ", "EL0 FIQ", "EL0 SError",
		"AArch32 sync", "AArch32 IRQ", "AArch32 FIQ", "AArch32 SError",
	};

	report(kinds[kind & 15], tf);
	kpanic("unexpected exception");
}
