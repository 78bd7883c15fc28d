/*
 * hooks.c - the tracepoints' hook bodies: each builds its event's record as Linux 6.1 lays it
 * out and hands it to perf (perf_tp_event).  kernel/ calls the inline wrappers of
 * <kern/trace.h>, which test the event's use count first, so a hook nobody listens to is one
 * load and a branch.
 *
 * Registers for samples: syscalls:* events carry the task's user registers (Linux's
 * perf_syscall_enter/exit pass the syscall's pt_regs); the others the hook's own kernel
 * state (perf_fetch_caller_regs), so exclude_kernel drops them and exclude_user does not.
 *
 * ABI: Linux 6.1 include/trace/events/{sched,syscalls,signal,kmem,lock}.h, kernel/trace/trace_syscalls.c
 * (struct syscall_trace_enter: int nr, unsigned long args[nb_args]; exit: long ret),
 * __trace_sched_switch_state (preempted: TASK_REPORT_MAX 0x100, "R+"; sleeping: 0x1 "S";
 * exiting: EXIT_ZOMBIE 0x20 "Z"), prio 120 (nice 0); the idle task is "swapper/N", pid 0.
 * Records are padded as perf_trace_buf_alloc does: u32 size + record to a multiple of 8,
 * the padding zeroed.
 */
#include <arch/trapframe.h>
#include <kern/compiler.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/trace.h>
#include <perf/perf.h>

#define PRIO_NORMAL 120
#define REC_MAX 512

/* The hook's kernel state as perf_fetch_caller_regs gives it: pc = the caller, EL1h. */
#define KERNEL_REGS(r)                                                                             \
	do {                                                                                       \
		memset((r), 0, sizeof(uint64_t) * 34);                                             \
		(r)[29] = (uint64_t)__builtin_frame_address(0);                                    \
		(r)[30] = (uint64_t)__builtin_return_address(0);                                   \
		(r)[31] = (uint64_t)__builtin_frame_address(0);                                    \
		(r)[32] = (uint64_t)__builtin_return_address(0);                                   \
		(r)[33] = 0x3c5;                                                                   \
	} while (0)

static bool irqs_off(void)
{
	unsigned long f = ksvc_irq_save();

	ksvc_irq_restore(f);
	return (f & 0x80) != 0; /* DAIF.I */
}

/* The record's size as perf sees it: u32 size + record rounded up to 8 bytes. */
static uint32_t padded(uint32_t size)
{
	return ((size + 4 + 7) & ~7u) - 4;
}

static void emit(unsigned int id, uint8_t *rec, uint32_t size, const uint64_t *regs, bool user)
{
	uint32_t n = padded(size);

	memset(rec + size, 0, n - size);
	trace_common(rec, id, irqs_off());
	perf_tp_event(id, rec, n, regs, user);
}

static void task_comm(const struct task *t, char out[16])
{
	memset(out, 0, 16);
	if (t->tid == 0)
		ksnprintf(out, 16, "swapper/%u", t->cpu);
	else
		memcpy(out, t->comm, 15);
}

/* ---- syscalls ---- */

static void sys_event(const struct trapframe *tf, bool exit, long ret)
{
	uint64_t nr = tf->x[8], uregs[34], kregs[34];
	uint8_t rec[64 + 8];
	unsigned int raw_id = exit ? TRACE_ID_RAW_SYS_EXIT : TRACE_ID_RAW_SYS_ENTER;

	if (trace_enabled(raw_id)) {
		int64_t id = (int64_t)nr;

		KERNEL_REGS(kregs);
		memcpy(rec + 8, &id, 8);
		if (exit)
			memcpy(rec + 16, &ret, 8);
		else
			memcpy(rec + 16, tf->x, 48);
		emit(raw_id, rec, exit ? 24 : 64, kregs, false);
	}
	const struct trace_event *ev = nr < 0x10000 ? trace_syscall_event((unsigned int)nr, exit)
						    : NULL;

	if (!ev || !trace_enabled(ev->id))
		return;
	int32_t nr32 = (int32_t)nr;

	memset(rec, 0, 16);
	memcpy(rec + 8, &nr32, 4);
	if (exit)
		memcpy(rec + 16, &ret, 8);
	else
		memcpy(rec + 16, tf->x, (size_t)ev->size - 16);
	ksvc_user_regs(uregs);
	emit(ev->id, rec, ev->size, uregs, true);
}

void trace_sys_enter_slow(const struct trapframe *tf)
{
	sys_event(tf, false, 0);
}

void trace_sys_exit_slow(const struct trapframe *tf, long ret)
{
	sys_event(tf, true, ret);
}

/* ---- sched ---- */

static void put32(uint8_t *rec, unsigned int off, int32_t v)
{
	memcpy(rec + off, &v, 4);
}

void trace_sched_switch_slow(struct task *prev, struct task *next, bool preempt)
{
	uint8_t rec[72];
	uint64_t regs[34];
	int64_t state = preempt ? 0x100 : prev->state == TASK_SLEEPING ? 0x1
					 : prev->state == TASK_ZOMBIE ? 0x20 : 0;

	KERNEL_REGS(regs);
	task_comm(prev, (char *)rec + 8);
	put32(rec, 24, prev->tid);
	put32(rec, 28, PRIO_NORMAL);
	memcpy(rec + 32, &state, 8);
	task_comm(next, (char *)rec + 40);
	put32(rec, 56, next->tid);
	put32(rec, 60, PRIO_NORMAL);
	emit(TRACE_ID_SCHED_SWITCH, rec, 64, regs, false);
}

void trace_sched_wakeup_slow(struct task *t, bool new_task, int cpu)
{
	uint8_t rec[48];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	task_comm(t, (char *)rec + 8);
	put32(rec, 24, t->tid);
	put32(rec, 28, PRIO_NORMAL);
	put32(rec, 32, cpu);
	emit(new_task ? TRACE_ID_SCHED_WAKEUP_NEW : TRACE_ID_SCHED_WAKEUP, rec, 36, regs, false);
}

void trace_sched_process_fork_slow(struct task *parent, struct task *child)
{
	uint8_t rec[56];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	task_comm(parent, (char *)rec + 8);
	put32(rec, 24, parent->tid);
	task_comm(child, (char *)rec + 28);
	put32(rec, 44, child->tid);
	emit(TRACE_ID_SCHED_PROCESS_FORK, rec, 48, regs, false);
}

void trace_sched_process_exec_slow(const char *filename, int old_pid)
{
	uint8_t rec[REC_MAX];
	uint64_t regs[34];
	size_t len = strlen(filename) + 1;

	if (len > REC_MAX - 32)
		len = REC_MAX - 32;
	KERNEL_REGS(regs);
	uint32_t loc = (uint32_t)len << 16 | 20;

	memcpy(rec + 8, &loc, 4);
	put32(rec, 12, current_task()->tid);
	put32(rec, 16, old_pid);
	memcpy(rec + 20, filename, len - 1);
	rec[20 + len - 1] = 0;
	emit(TRACE_ID_SCHED_PROCESS_EXEC, rec, (uint32_t)(20 + len), regs, false);
}

void trace_sched_process_exit_slow(void)
{
	uint8_t rec[40];
	uint64_t regs[34];
	struct task *t = current_task();

	KERNEL_REGS(regs);
	task_comm(t, (char *)rec + 8);
	put32(rec, 24, t->tid);
	put32(rec, 28, PRIO_NORMAL);
	emit(TRACE_ID_SCHED_PROCESS_EXIT, rec, 32, regs, false);
}

void trace_sched_stat_runtime_slow(struct task *t, uint64_t delta_ns)
{
	uint8_t rec[56];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	task_comm(t, (char *)rec + 8);
	put32(rec, 24, t->tid);
	put32(rec, 28, 0);
	memcpy(rec + 32, &delta_ns, 8);
	uint64_t vruntime = t->runtime_ns + delta_ns; /* nice 0 weighs 1: the total run time */

	memcpy(rec + 40, &vruntime, 8);
	emit(TRACE_ID_SCHED_STAT_RUNTIME, rec, 48, regs, false);
}

/* ---- signal ---- */

void trace_signal_generate_slow(int sig, int err, int code, const char *comm, int pid, bool group,
				int result)
{
	uint8_t rec[56];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	put32(rec, 8, sig);
	put32(rec, 12, err);
	put32(rec, 16, code);
	memset(rec + 20, 0, 16);
	memcpy(rec + 20, comm, strnlen(comm, 15));
	put32(rec, 36, pid);
	put32(rec, 40, group);
	put32(rec, 44, result);
	emit(TRACE_ID_SIGNAL_GENERATE, rec, 48, regs, false);
}

void trace_signal_deliver_slow(int sig, int err, int code, uint64_t handler, uint64_t flags)
{
	uint8_t rec[48];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	put32(rec, 8, sig);
	put32(rec, 12, err);
	put32(rec, 16, code);
	put32(rec, 20, 0);
	memcpy(rec + 24, &handler, 8);
	memcpy(rec + 32, &flags, 8);
	emit(TRACE_ID_SIGNAL_DELIVER, rec, 40, regs, false);
}

/* ---- kmem (kmalloc/kfree: slab_common.c; mm_page_*: page_alloc.c) ---- */

#define GFP_KERNEL 0xcc0u /* __GFP_RECLAIM | __GFP_IO | __GFP_FS */
#define GFP_ZERO 0x100u
#define NUMA_NO_NODE (-1)

static void put64(uint8_t *rec, unsigned int off, uint64_t v)
{
	memcpy(rec + off, &v, 8);
}

void trace_kmalloc_slow(uint64_t call_site, const void *ptr, uint64_t req, uint64_t alloc)
{
	uint8_t rec[64];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	memset(rec, 0, sizeof(rec));
	put64(rec, 8, call_site);
	put64(rec, 16, (uint64_t)(uintptr_t)ptr);
	put64(rec, 24, req);
	put64(rec, 32, alloc);
	put64(rec, 40, GFP_KERNEL);
	put32(rec, 48, NUMA_NO_NODE);
	emit(TRACE_ID_KMALLOC, rec, 56, regs, false); /* sizeof: node then 4 bytes of padding */
}

/* The 24-byte records of two fields: a u64 at 8, then b (b_size bytes) at 16. */
static void emit_pair(unsigned int id, uint64_t a, uint64_t b, unsigned int b_size)
{
	uint8_t rec[32];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	memset(rec, 0, sizeof(rec));
	put64(rec, 8, a);
	memcpy(rec + 16, &b, b_size); /* little-endian: the low bytes */
	emit(id, rec, 24, regs, false);
}

void trace_kfree_slow(uint64_t call_site, const void *ptr)
{
	emit_pair(TRACE_ID_KFREE, call_site, (uint64_t)(uintptr_t)ptr, 8);
}

void trace_mm_page_alloc_slow(uint64_t pfn, unsigned int order)
{
	uint8_t rec[48];
	uint64_t regs[34];

	KERNEL_REGS(regs);
	memset(rec, 0, sizeof(rec));
	put64(rec, 8, pfn);
	put32(rec, 16, (int32_t)order);
	put64(rec, 24, GFP_KERNEL | GFP_ZERO);
	put32(rec, 32, 0); /* MIGRATE_UNMOVABLE */
	emit(TRACE_ID_MM_PAGE_ALLOC, rec, 40, regs, false);
}

void trace_mm_page_free_slow(uint64_t pfn, unsigned int order)
{
	emit_pair(TRACE_ID_MM_PAGE_FREE, pfn, order, 4);
}

/* ---- lock (contention_begin: LCB_F_MUTEX for a sleeping lock; contention_end: ret 0) ---- */

void trace_contention_slow(const void *lock, bool begin)
{
	emit_pair(begin ? TRACE_ID_CONTENTION_BEGIN : TRACE_ID_CONTENTION_END,
		  (uint64_t)(uintptr_t)lock, begin ? 0x20 : 0, 4); /* LCB_F_MUTEX; ret 0 */
}

/* ---- irq (kernel/irq.c) and timer (kernel/time.c's ktimers as hrtimers) ---- */

void trace_irq_handler_slow(unsigned int irq, const char *name, bool entry, bool handled)
{
	uint8_t rec[64];
	uint64_t regs[34];
	int32_t virq = (int32_t)irq;

	KERNEL_REGS(regs);
	memcpy(rec + 8, &virq, 4);
	if (!entry) {
		put32(rec, 12, handled); /* IRQ_HANDLED / IRQ_NONE */
		emit(TRACE_ID_IRQ_HANDLER_EXIT, rec, 16, regs, false);
		return;
	}
	size_t len = strnlen(name, 31) + 1;
	uint32_t loc = (uint32_t)len << 16 | 16; /* __data_loc: the string after the record */

	memcpy(rec + 12, &loc, 4);
	memcpy(rec + 16, name, len - 1);
	rec[16 + len - 1] = 0;
	emit(TRACE_ID_IRQ_HANDLER_ENTRY, rec, (uint32_t)(16 + len), regs, false);
}

#define CLOCK_MONOTONIC 1
#define HRTIMER_MODE_ABS_PINNED_HARD 0x0a /* ABS 0 | PINNED 2 | HARD 8 */

void trace_hrtimer_slow(unsigned int id, const void *timer, uint64_t fn, uint64_t ns)
{
	uint8_t rec[48];
	uint64_t regs[34];
	uint32_t size = 16;

	KERNEL_REGS(regs);
	memset(rec, 0, sizeof(rec));
	put64(rec, 8, (uint64_t)(uintptr_t)timer);
	switch (id) {
	case TRACE_ID_HRTIMER_INIT:
		put32(rec, 16, CLOCK_MONOTONIC);
		put32(rec, 20, HRTIMER_MODE_ABS_PINNED_HARD);
		size = 24;
		break;
	case TRACE_ID_HRTIMER_START: /* was_armed stays 0: ktimer_arm takes a disarmed timer */
		put64(rec, 16, fn);
		put64(rec, 24, ns); /* expires */
		put64(rec, 32, ns); /* softexpires: no slack */
		put32(rec, 40, HRTIMER_MODE_ABS_PINNED_HARD);
		size = 48;
		break;
	case TRACE_ID_HRTIMER_EXPIRE_ENTRY:
		put64(rec, 16, ns); /* now */
		put64(rec, 24, fn);
		size = 32;
		break;
	}
	emit(id, rec, size, regs, false);
}
