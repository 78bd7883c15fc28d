/*
 * trace.h - static tracepoints: the event table (Linux 6.1's names, ids, record layouts and
 * format text) and the hooks kernel/ calls where the events happen.
 *
 * The table (trace/events_gen.c, generated from Linux's format files by
 * tools/trace/gen-events.py) is sorted by id.  A record is laid out as Linux's: the 8-byte
 * common header (common_type = the id, common_flags, common_preempt_count, common_pid), then
 * the fields at their offsets.  syscalls:* events exist for the syscalls this kernel has.
 *
 * A hook costs one load and a predictable branch while no perf event uses its tracepoint:
 * trace_on[] counts the active perf events of each event (perf/tp.c's add/del, through
 * ksvc_trace_use), trace_syscalls_on those of raw_syscalls and syscalls together.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_field {
	const char *decl; /* "char prev_comm[16]", as the format file shows it */
	const char *name; /* "prev_comm" */
	uint16_t offset, size;
	uint8_t is_signed;
};

struct trace_event {
	const char *system, *name;
	uint16_t id;	   /* common_type, PERF_TYPE_TRACEPOINT config */
	int16_t sc_nr;	   /* syscalls:* events: the syscall number; else -1 */
	uint16_t size;	   /* bytes of the fixed record (Linux's entry struct) */
	uint8_t nr_fields; /* after the common ones */
	const struct trace_field *fields;
	const char *print_fmt;
};

extern const struct trace_event trace_events[]; /* ascending id */
extern const unsigned int trace_nr_events;

#define TRACE_MAX_ID 2048
/* Fixed ids (Linux 6.1 arm64, Debian's kernel) of the events the kernel hooks name. */
enum {
	TRACE_ID_RAW_SYS_EXIT = 23,
	TRACE_ID_RAW_SYS_ENTER = 24,
	TRACE_ID_SIGNAL_DELIVER = 134,
	TRACE_ID_CONTENTION_END = 275,
	TRACE_ID_CONTENTION_BEGIN = 276,
	TRACE_ID_MM_PAGE_ALLOC = 472,
	TRACE_ID_MM_PAGE_FREE = 474,
	TRACE_ID_KFREE = 476,
	TRACE_ID_KMALLOC = 477,
	TRACE_ID_SIGNAL_GENERATE = 135,
	TRACE_ID_SCHED_STAT_RUNTIME = 252,
	TRACE_ID_SCHED_PROCESS_EXEC = 257,
	TRACE_ID_SCHED_PROCESS_FORK = 258,
	TRACE_ID_SCHED_PROCESS_EXIT = 261,
	TRACE_ID_SCHED_SWITCH = 264,
	TRACE_ID_SCHED_WAKEUP_NEW = 265,
	TRACE_ID_SCHED_WAKEUP = 266,
	TRACE_ID_IRQ_HANDLER_EXIT = 100,
	TRACE_ID_IRQ_HANDLER_ENTRY = 101,
	TRACE_ID_HRTIMER_CANCEL = 305,
	TRACE_ID_HRTIMER_EXPIRE_EXIT = 306,
	TRACE_ID_HRTIMER_EXPIRE_ENTRY = 307,
	TRACE_ID_HRTIMER_START = 308,
	TRACE_ID_HRTIMER_INIT = 309,
};

/* The event with this id, or NULL (also for syscalls:* events of syscalls we lack). */
const struct trace_event *trace_event_by_id(uint64_t id);
/* The syscalls:sys_enter_/sys_exit_ event of syscall nr, or NULL. */
const struct trace_event *trace_syscall_event(unsigned int nr, bool exit);
/* Is syscall nr implemented (kernel/syscall.c; the host fake says yes)? */
bool trace_syscall_exists(unsigned int nr);

/* Active perf events per id, and of the syscall events together. */
extern _Atomic int trace_on[TRACE_MAX_ID];
extern _Atomic int trace_syscalls_on;
/* [any] One more (delta 1) or one fewer (-1) active user of event id. */
void trace_use(uint64_t id, int delta);

static inline bool trace_enabled(unsigned int id)
{
	return __builtin_expect(atomic_load_explicit(&trace_on[id], memory_order_relaxed) != 0, 0);
}

/* Fill the common header of a record of event id (common_pid: the current thread). */
void trace_common(void *rec, unsigned int id, bool irqs_off);

/* ---- hooks kernel/ calls (trace/hooks.c); each returns at once when its events are off ---- */
struct trapframe;
struct task;
/* kernel/syscall.c calls them around a syscall while trace_syscalls_on is nonzero. */
void trace_sys_enter_slow(const struct trapframe *tf);
void trace_sys_exit_slow(const struct trapframe *tf, long ret);
void trace_sched_switch_slow(struct task *prev, struct task *next, bool preempt);
void trace_sched_wakeup_slow(struct task *t, bool new_task, int cpu);
void trace_sched_process_fork_slow(struct task *parent, struct task *child);
void trace_sched_process_exec_slow(const char *filename, int old_pid);
void trace_sched_process_exit_slow(void);
/* [IRQs off] before the switch: prev is current. */
static inline void trace_sched_switch(struct task *prev, struct task *next, bool preempt)
{
	if (trace_enabled(TRACE_ID_SCHED_SWITCH))
		trace_sched_switch_slow(prev, next, preempt);
}
/* t became runnable on cpu: woken (sched_wakeup) or new (sched_wakeup_new). */
static inline void trace_sched_wakeup(struct task *t, bool new_task, int cpu)
{
	if (trace_enabled(new_task ? TRACE_ID_SCHED_WAKEUP_NEW : TRACE_ID_SCHED_WAKEUP))
		trace_sched_wakeup_slow(t, new_task, cpu);
}
static inline void trace_sched_process_fork(struct task *parent, struct task *child)
{
	if (trace_enabled(TRACE_ID_SCHED_PROCESS_FORK))
		trace_sched_process_fork_slow(parent, child);
}
/* After a successful exec of filename (the path execve was given); old_pid: the tid before. */
static inline void trace_sched_process_exec(const char *filename, int old_pid)
{
	if (trace_enabled(TRACE_ID_SCHED_PROCESS_EXEC))
		trace_sched_process_exec_slow(filename, old_pid);
}
void trace_sched_stat_runtime_slow(struct task *t, uint64_t delta_ns);
/* t ran delta_ns until this switch away from it (not for the idle task). */
static inline void trace_sched_stat_runtime(struct task *t, uint64_t delta_ns)
{
	if (trace_enabled(TRACE_ID_SCHED_STAT_RUNTIME))
		trace_sched_stat_runtime_slow(t, delta_ns);
}
void trace_signal_generate_slow(int sig, int err, int code, const char *comm, int pid, bool group,
				int result);
void trace_signal_deliver_slow(int sig, int err, int code, uint64_t handler, uint64_t flags);
/* A signal was sent to pid (comm): result 0 queued, 1 ignored, 2 already pending
 * (TRACE_SIGNAL_DELIVERED, _IGNORED, _ALREADY_PENDING); group: to the whole process. */
static inline void trace_signal_generate(int sig, int err, int code, const char *comm, int pid,
					 bool group, int result)
{
	if (trace_enabled(TRACE_ID_SIGNAL_GENERATE))
		trace_signal_generate_slow(sig, err, code, comm, pid, group, result);
}
/* The current thread dequeued sig, whose action is handler/flags. */
static inline void trace_signal_deliver(int sig, int err, int code, uint64_t handler,
					uint64_t flags)
{
	if (trace_enabled(TRACE_ID_SIGNAL_DELIVER))
		trace_signal_deliver_slow(sig, err, code, handler, flags);
}
/* The current thread exits (before perf's exit hook). */
static inline void trace_sched_process_exit(void)
{
	if (trace_enabled(TRACE_ID_SCHED_PROCESS_EXIT))
		trace_sched_process_exit_slow();
}

/* ---- kmem and lock (Linux 6.1 include/trace/events/{kmem,lock}.h) ---- */
void trace_kmalloc_slow(uint64_t call_site, const void *ptr, uint64_t req, uint64_t alloc);
void trace_kfree_slow(uint64_t call_site, const void *ptr);
void trace_mm_page_alloc_slow(uint64_t pfn, unsigned int order);
void trace_mm_page_free_slow(uint64_t pfn, unsigned int order);
void trace_contention_slow(const void *lock, bool begin);
/* kmalloc (kernel/mm.c): ptr of req bytes in an object of alloc bytes, for call_site. */
static inline void trace_kmalloc(uint64_t call_site, const void *ptr, uint64_t req, uint64_t alloc)
{
	if (trace_enabled(TRACE_ID_KMALLOC))
		trace_kmalloc_slow(call_site, ptr, req, alloc);
}
static inline void trace_kfree(uint64_t call_site, const void *ptr)
{
	if (trace_enabled(TRACE_ID_KFREE))
		trace_kfree_slow(call_site, ptr);
}
/* alloc_pages / free_pages: 2^order pages at pfn (~0: the allocation failed). */
static inline void trace_mm_page_alloc(uint64_t pfn, unsigned int order)
{
	if (trace_enabled(TRACE_ID_MM_PAGE_ALLOC))
		trace_mm_page_alloc_slow(pfn, order);
}
static inline void trace_mm_page_free(uint64_t pfn, unsigned int order)
{
	if (trace_enabled(TRACE_ID_MM_PAGE_FREE))
		trace_mm_page_free_slow(pfn, order);
}
/* A sleeping lock (kmutex) is taken: the task waits for it (begin), then has it (end). */
static inline void trace_contention_begin(const void *lock)
{
	if (trace_enabled(TRACE_ID_CONTENTION_BEGIN))
		trace_contention_slow(lock, true);
}
static inline void trace_contention_end(const void *lock)
{
	if (trace_enabled(TRACE_ID_CONTENTION_END))
		trace_contention_slow(lock, false);
}

/* ---- irq and timer (Linux 6.1 include/trace/events/{irq,timer}.h) ---- */
void trace_irq_handler_slow(unsigned int irq, const char *name, bool entry, bool handled);
/* kernel/irq.c, around an interrupt's action: Linux's virq and action name; handled: the
 * handler's IRQ_HANDLED (1) or IRQ_NONE (0). */
static inline void trace_irq_handler_entry(unsigned int irq, const char *name)
{
	if (trace_enabled(TRACE_ID_IRQ_HANDLER_ENTRY))
		trace_irq_handler_slow(irq, name, true, false);
}
static inline void trace_irq_handler_exit(unsigned int irq, bool handled)
{
	if (trace_enabled(TRACE_ID_IRQ_HANDLER_EXIT))
		trace_irq_handler_slow(irq, NULL, false, handled);
}
/* A ktimer is Linux's hrtimer: CLOCK_MONOTONIC, an absolute deadline, pinned to the CPU that
 * armed it, expiring in hard IRQ context (HRTIMER_MODE_ABS_PINNED_HARD). */
void trace_hrtimer_slow(unsigned int id, const void *timer, uint64_t fn, uint64_t ns);
static inline void trace_hrtimer_init(const void *timer)
{
	if (trace_enabled(TRACE_ID_HRTIMER_INIT))
		trace_hrtimer_slow(TRACE_ID_HRTIMER_INIT, timer, 0, 0);
}
/* armed for deadline_ns (time_ns() clock) */
static inline void trace_hrtimer_start(const void *timer, uint64_t fn, uint64_t deadline_ns)
{
	if (trace_enabled(TRACE_ID_HRTIMER_START))
		trace_hrtimer_slow(TRACE_ID_HRTIMER_START, timer, fn, deadline_ns);
}
/* taken off its queue while still pending */
static inline void trace_hrtimer_cancel(const void *timer)
{
	if (trace_enabled(TRACE_ID_HRTIMER_CANCEL))
		trace_hrtimer_slow(TRACE_ID_HRTIMER_CANCEL, timer, 0, 0);
}
/* around its callback fn, run at now_ns */
static inline void trace_hrtimer_expire_entry(const void *timer, uint64_t fn, uint64_t now_ns)
{
	if (trace_enabled(TRACE_ID_HRTIMER_EXPIRE_ENTRY))
		trace_hrtimer_slow(TRACE_ID_HRTIMER_EXPIRE_ENTRY, timer, fn, now_ns);
}
static inline void trace_hrtimer_expire_exit(const void *timer)
{
	if (trace_enabled(TRACE_ID_HRTIMER_EXPIRE_EXIT))
		trace_hrtimer_slow(TRACE_ID_HRTIMER_EXPIRE_EXIT, timer, 0, 0);
}

/* ---- event filters (trace/filter.c): tracefs's filter language ---- */
struct trace_filter;
/* The parse errors the filter file names (Linux 6.1's FILT_ERR_*); their positions. */
enum {
	TRACE_FILT_NONE,
	TRACE_FILT_INVALID_OP,
	TRACE_FILT_TOO_MANY_OPEN,
	TRACE_FILT_TOO_MANY_CLOSE,
	TRACE_FILT_MISSING_QUOTE,
	TRACE_FILT_OPERAND_TOO_LONG,
	TRACE_FILT_EXPECT_STRING,
	TRACE_FILT_EXPECT_DIGIT,
	TRACE_FILT_ILLEGAL_FIELD_OP,
	TRACE_FILT_FIELD_NOT_FOUND,
	TRACE_FILT_ILLEGAL_INTVAL,
	TRACE_FILT_BAD_SUBSYS_FILTER,
	TRACE_FILT_TOO_MANY_PREDS,
	TRACE_FILT_INVALID_FILTER,
	TRACE_FILT_INVALID_VALUE,
	TRACE_FILT_NO_FILTER,
};
struct trace_filter_err {
	int code; /* TRACE_FILT_*; NONE when the errno alone tells */
	int pos;  /* where in the string */
};
/* [sleep] Parse str (NUL-terminated) against an event's fields (plus the common and generic
 * ones): 0 and *out, or Linux's errno (EINVAL, and EPERM, ENOENT, ESRCH for the errors
 * create_filter returns raw) with *err filled. */
int trace_filter_parse(const struct trace_field *fields, unsigned int nfields, const char *str,
		       struct trace_filter **out, struct trace_filter_err *err);
/* [any] Does the record (size bytes) pass?  comm: the current task's; cpu: this CPU.  A
 * NULL filter passes everything. */
bool trace_filter_match(const struct trace_filter *f, const void *rec, uint32_t size,
			const char comm[16], unsigned int cpu);
/* [any] NULL is ignored. */
void trace_filter_free(struct trace_filter *f);
/* [any] What the filter file shows after str failed with err (without the final newline
 * print_event_filter adds): the length it wanted; buf is NUL-terminated within size. */
size_t trace_filter_err_text(char *buf, size_t size, const char *str,
			     const struct trace_filter_err *err);
