/*
 * syscall.c - the system-call table and dispatcher.  The table is [__NR_x] = sys_x, filled at
 * boot from the SYSCALL() entries every module puts in the .syscalls section.  aarch64 ABI:
 * number in x8, arguments in x0-x5, result in x0.  Unknown numbers give -ENOSYS, noted in the kernel log (each number once).
 */
#include <stdatomic.h>
#include <arch/trapframe.h>
#include <kern/assert.h>
#include <kern/errno.h>
#include <kern/printk.h>
#include <kern/compiler.h>
#include <kern/proc.h>
#include <kern/ptrace.h>
#include <kern/syscall.h>
#include <kern/ksvc.h>
#include <kern/signal_proc.h>
#include <kern/trace.h>

extern const struct syscall_entry __syscalls_start[], __syscalls_end[];
static syscall_fn table[NR_SYSCALLS];
static const char *names[NR_SYSCALLS];
static _Atomic uint64_t logged[NR_SYSCALLS / 64];

void syscall_init(void)
{
	for (const struct syscall_entry *e = __syscalls_start; e < __syscalls_end; e++) {
		kassert(e->nr < NR_SYSCALLS);
		if (table[e->nr])
			kpanic("syscall %u registered twice (%s, %s)", e->nr, names[e->nr], e->name);
		table[e->nr] = e->fn;
		names[e->nr] = e->name;
	}
}

static inline __attribute__((always_inline)) void dispatch(struct trapframe *tf, uint64_t nr)
{
	long ret;

	if (nr < NR_SYSCALLS && table[nr]) {
		/* rt_sigreturn rewrites the saved FP/SIMD state: make the copy current first. */
		bool fp_sync = nr == __NR_rt_sigreturn;
		struct uthread *ut = current_uthread();

		if (fp_sync) {
			fpsimd_save(&ut->fp);
			ut->fp_in_memory = true;
		}
		signal_syscall_enter(tf);
		ret = table[nr](tf->x[0], tf->x[1], tf->x[2], tf->x[3], tf->x[4], tf->x[5]);
		if (fp_sync) {
			unsigned long f = ksvc_irq_save();

			fpsimd_restore(&ut->fp);
			ut->fp_in_memory = false;
			ksvc_irq_restore(f);
		}
		if (nr == __NR_rt_sigreturn)
			return; /* the frame it restored holds x0 */
	} else {
		/* to the log only (dmesg), never into the user's output on the console: each
		 * number once, and numbers past the table at Linux's ratelimit */
		bool once = nr < NR_SYSCALLS &&
			    !(atomic_fetch_or(&logged[nr / 64], 1ull << (nr % 64)) & (1ull << (nr % 64)));

		if (once)
			klog(4, "perfkernel: unknown syscall %lu from %s (pid %d): ENOSYS", nr,
			     current_task()->comm, proc_tgid(current_task()));
		else if (nr >= NR_SYSCALLS)
			klog_ratelimited(4, "perfkernel: unknown syscall %lu from %s (pid %d): ENOSYS",
					 nr, current_task()->comm, proc_tgid(current_task()));
		ret = -ENOSYS;
	}
	tf->x[0] = (uint64_t)ret;
}

/* With a syscall tracepoint in use: raw_syscalls and syscalls events around the call (the
 * result is x0 then, rt_sigreturn's restored one too). */
static __attribute__((noinline)) void dispatch_traced(struct trapframe *tf, uint64_t nr)
{
	trace_sys_enter_slow(tf);
	dispatch(tf, nr);
	trace_sys_exit_slow(tf, (long)tf->x[0]);
}

static inline __attribute__((always_inline)) void syscall_run(struct trapframe *tf, uint64_t nr)
{
	/* one load and a branch while no syscall tracepoint is in use */
	if (__builtin_expect(atomic_load_explicit(&trace_syscalls_on, memory_order_relaxed), 0))
		dispatch_traced(tf, nr);
	else
		dispatch(tf, nr);
}

void syscall_dispatch(struct trapframe *tf)
{
	struct uthread *ut = current_uthread();
	uint64_t nr = tf->x[8];

	if (likely(!READ_ONCE(ut->ptrace))) {
		syscall_run(tf, nr);
		return;
	}
	/* traced: the entry stop may change the number or skip the call, then the exit stop */
	signal_syscall_enter(tf);
	if (ptrace_syscall_entry(tf, &nr))
		syscall_run(tf, nr);
	if (READ_ONCE(ut->ptrace))
		ptrace_syscall_exit(tf, nr, (long)tf->x[0]);
}


bool trace_syscall_exists(unsigned int nr)
{
	return nr < NR_SYSCALLS && table[nr];
}
