/*
 * ksvc.h - the kernel-services seam.
 *
 * perf/, bpf/ and the other portable files (kernel/dt.c, kernel/page.c, ...) call the rest of the
 * kernel only through these functions.  kernel/ksvc.c implements them for the real kernel;
 * tests/fakes/ksvc_fake.c implements them for host tests (a link-time swap, no #ifdefs).
 *
 * Context legend for each declaration:
 *   [any]     callable from any context, including hard IRQ with interrupts masked
 *   [proc]    process context only (a current task exists; may fault on user memory)
 *   [sleep]   may sleep; process context with no spinlock held
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- memory ---- */

/* [any] Zeroed allocation of size bytes, 16-byte aligned; NULL when out of memory. */
void *ksvc_alloc(size_t size);
/* [any] Free what ksvc_alloc returned; NULL is ignored. */
void ksvc_free(void *p);
/* [any] 2^order zeroed, physically contiguous pages, page aligned; NULL when out of memory. */
void *ksvc_alloc_pages(unsigned int order);
/* [any] Free pages from ksvc_alloc_pages with the same order. */
void ksvc_free_pages(void *p, unsigned int order);
/* [any] Physical address of memory from ksvc_alloc_pages (for mapping it into user space). */
uint64_t ksvc_virt_to_phys(const void *p);

#define KSVC_PAGE_SIZE 4096u

/*
 * [sleep] Executable memory for JIT code: copy len bytes of code into fresh pages mapped
 * read+execute only (never writable and executable at once), with the data and instruction
 * cache maintenance instruction fetch needs on every CPU.  The code's address, or NULL.
 */
void *ksvc_text_alloc(const void *code, size_t len);
/* [sleep] Unmap and free what ksvc_text_alloc returned (len as given to it). */
void ksvc_text_free(void *text, size_t len);
/* [any] The CPUs implement the LSE atomics (ID_AA64ISAR0_EL1.Atomic >= 2: LDADD, CAS, SWP). */
bool ksvc_cpu_has_lse_atomics(void);
/*
 * [any] For the JIT's inline bpf_get_current_pid_tgid: TPIDR_EL1 holds this CPU's record,
 * whose word at cpu_current is the current task; the task's 32-bit tid is at task_tid, its
 * process (NULL for a kernel thread: tgid is then the tid) at task_proc, the process's 32-bit
 * tgid at proc_tgid.  false: no such layout here (the JIT calls the helper).
 */
struct ksvc_current_layout {
	uint32_t cpu_current, task_tid, task_proc, proc_tgid;
};
bool ksvc_current_layout(struct ksvc_current_layout *l);

/* ---- user memory ---- */

/* [proc] Copy from/to the current task's user memory: 0, or -EFAULT (bad or kernel address). */
int ksvc_copy_from_user(void *dst, const void *usrc, size_t n);
int ksvc_copy_to_user(void *udst, const void *src, size_t n);
/*
 * [proc] Copy a NUL-terminated user string of at most n bytes including the NUL: its length,
 * -EFAULT, or -ENAMETOOLONG when no NUL is found within n bytes.
 */
long ksvc_strncpy_from_user(char *dst, const void *usrc, size_t n);
/*
 * [any] Read memory that may not be mapped without faulting the kernel: 0 or -EFAULT.  user
 * selects the current task's user address space (addresses below the user limit only) or
 * kernel memory (mapped kernel addresses only).
 */
int ksvc_read_nofault(void *dst, const void *src, size_t n, bool user);
/* [any] Write n bytes to user memory without faulting pages in (bpf_probe_write_user): 0 or
 * -EFAULT (outside user space, not mapped, not writable or not yet written: copy-on-write). */
int ksvc_write_user_nofault(void *udst, const void *src, size_t n);
/* [any] ksvc_read_nofault of the two u64 at addr (a frame record {fp, lr}), one load pair
 * when addr is 16-aligned: the frame-pointer unwinder's step.  0 or -EFAULT. */
int ksvc_read_pair_nofault(uint64_t out[2], uint64_t addr, bool user);
/*
 * [any] The frame-pointer unwinder (what Linux's arch callchain code does): from the frame
 * record {fp, lr} at fp in the current task's user space (user) or the kernel, each record's
 * lr into out, at most room of them, following each record's fp.  It stops at a record that
 * is not 8-aligned, outside that space or unreadable, at an lr of 0, and after a record whose
 * fp does not lie above it (a loop or a forged chain).  Returns how many were written.  One
 * call for the whole chain: it runs on every callchain sample and get_stackid.
 */
unsigned int ksvc_walk_frames_nofault(uint64_t *out, unsigned int room, uint64_t fp, bool user);

/* ---- time, CPUs, current task ---- */

/* [any] Monotonic nanoseconds since boot. */
uint64_t ksvc_clock_ns(void);
/* [any] CLOCK_TAI in ns: CLOCK_REALTIME, the TAI offset being 0 as Linux's until adjtimex sets it. */
uint64_t ksvc_clock_tai_ns(void);
/* [any] The CPU we run on (stable only while preemption or interrupts are off). */
unsigned int ksvc_cpu_id(void);
/*
 * [sleep] Keep the current task on its CPU until the matching ksvc_migrate_enable (they nest;
 * Linux's migrate_disable): it may still be preempted and sleep, but resumes on the same CPU,
 * so ksvc_cpu_id and per-CPU data stay its own for a BPF program's whole run.
 */
void ksvc_migrate_disable(void);
void ksvc_migrate_enable(void);
/* [any] Number of possible CPUs; CPU ids are 0 .. n-1. */
unsigned int ksvc_nr_cpus(void);
/*
 * [any, interrupts masked] This CPU's bpf_prog_active (Linux's per-CPU int of that name, a
 * per-CPU variable of the kernel's BTF): how many kprobe, tracepoint and perf_event programs
 * run on this CPU; a hit that finds it non-zero is dropped (the recursion guard).
 */
int *ksvc_bpf_prog_active(void);
/* [any] The distance from a per-CPU variable's address (its template's, as kallsyms and the
 * kernel's BTF name it) to cpu's own copy, cpu < ksvc_nr_cpus() (Linux's __per_cpu_offset). */
uint64_t ksvc_per_cpu_offset(unsigned int cpu);
/* [any] The kernel symbol name's address from the kernel's symbol table (/proc/kallsyms), 0
 * when there is none (Linux's kallsyms_lookup_name). */
uint64_t ksvc_kallsyms_lookup_name(const char *name);
/* [any] Current task's thread-group id (what userland calls the pid), thread id, uid, gid. */
int ksvc_current_tgid(void);
int ksvc_current_tid(void);
/* [any] Both in one call, as bpf_get_current_pid_tgid returns them: tgid << 32 | tid. */
uint64_t ksvc_current_pid_tgid(void);
uint32_t ksvc_current_uid(void);
uint32_t ksvc_current_gid(void);
/* [any] Current task's comm, NUL-terminated, in 16 bytes (TASK_COMM_LEN). */
void ksvc_current_comm(char comm[16]);
/* [any] Pseudo-random 32 bits (not for cryptography). */
uint32_t ksvc_random_u32(void);

/* ---- console ---- */

/* [any] Kernel log, printf subset: %d %i %u %x %X %p %s %c %%, with l/ll/z, width, '0', '-'. */
void ksvc_printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ksvc_vprintk(const char *fmt, va_list ap);

/* ---- interrupts ---- */

/* [any] Mask local interrupts, returning the previous state for ksvc_irq_restore. */
unsigned long ksvc_irq_save(void);
void ksvc_irq_restore(unsigned long flags);

/* ---- file descriptors for anonymous objects (bpf maps and programs, perf events) ---- */

struct ksvc_poll;
struct ksvc_mmap;
struct ksvc_fasync;
struct wait_queue;

struct ksvc_file_ops {
	const char *name; /* anon inode name shown in /proc/PID/fd, e.g. "bpf-map" */
	bool rdonly, wronly; /* the file is O_RDONLY (bpf links) or O_WRONLY, not O_RDWR */
	/* Take one more reference on priv; ksvc_fd_get calls it under the fd-table lock. */
	void (*get)(void *priv);
	/* The last descriptor for the file is gone: drop the file's reference. [sleep] */
	void (*release)(void *priv);
	/* Optional; NULL gives the errno Linux gives for an anon file without the operation. */
	long (*read)(void *priv, void *ubuf, size_t len);
	long (*ioctl)(void *priv, unsigned int cmd, unsigned long arg);
	/* Optional: readiness as POLLIN/POLLOUT/...; register on the object's wait queues with
	 * ksvc_poll_wait(pt, wq) first (pt may be NULL: just report).  NULL: always readable. */
	unsigned int (*poll)(void *priv, struct ksvc_poll *pt);
	/* Optional: mmap.  NULL: ENODEV.  mmap validates a mapping and sets m->map_priv; pages
	 * are then asked for one at a time with mmap_phys (physical address of page pgoff of the
	 * object: the mmap offset counts, a mapping starts at m->pgoff); mmap_open/mmap_close count the VMAs that use a mapping (a split adds one;
	 * fork never copies these mappings, as Linux's VM_DONTCOPY). */
	int (*mmap)(void *priv, struct ksvc_mmap *m);
	uint64_t (*mmap_phys)(void *priv, void *map_priv, uint64_t pgoff);
	void (*mmap_open)(void *priv, void *map_priv);
	void (*mmap_close)(void *priv, void *map_priv);
	/* Optional: O_ASYNC (see ksvc_kill_fasync); NULL: the flag is kept but signals nothing. */
	void (*fasync)(void *priv, struct ksvc_fasync *fa);
	/* Optional: the object's lines of /proc/PID/fdinfo/N after Linux's common ones, written
	 * to buf (NUL-terminated within size); returns their length. */
	size_t (*show_fdinfo)(void *priv, char *buf, size_t size);
};

struct ksvc_mmap {
	uint64_t len; /* bytes, a page multiple */
	uint64_t pgoff; /* the mmap offset, in pages */
	bool write, shared; /* PROT_WRITE, MAP_SHARED */
	void *map_priv; /* set by ops->mmap */
	bool deny_write_later; /* set by ops->mmap: mprotect may not add PROT_WRITE (EACCES) */
};

/*
 * [proc] Inside a poll operation: have ppoll/pselect6 wake up when wq is woken (fs/poll.c).
 * pt NULL is a no-op.  Call it before testing the condition, so no wakeup is lost.
 */
void ksvc_poll_wait(struct ksvc_poll *pt, struct wait_queue *wq);

/*
 * [sleep] Install a new descriptor for (ops, priv) in the current task's table; the file takes
 * over the caller's reference to priv.  The lowest free fd, or -EMFILE / -ENOMEM (the caller
 * then still owns its reference).
 */
int ksvc_fd_install(const struct ksvc_file_ops *ops, void *priv, bool cloexec);
/*
 * [sleep] Install in two steps, as Linux's get_unused_fd_flags / fd_install, for an object that
 * must be complete before any other thread can reach it through its fd.  ksvc_fd_reserve takes
 * the lowest free fd (r->fd) and allocates the file: 0, -EMFILE or -ENOMEM.  Until the commit
 * the fd is taken but empty: close() and lookups of it fail with EBADF, dup2 onto it EBUSY.
 * ksvc_fd_commit makes it (ops, priv), taking over the caller's reference, and returns the fd
 * (only if the process swapped its table meanwhile and the new one is full: -EMFILE, with priv
 * released as by a close).  ksvc_fd_cancel gives the fd back; the caller keeps its reference.
 */
struct ksvc_fd_resv {
	int fd;
	bool cloexec;
	void *file; /* the kernel's, opaque here */
};
int ksvc_fd_reserve(const struct ksvc_file_ops *ops, bool cloexec, struct ksvc_fd_resv *r);
int ksvc_fd_commit(struct ksvc_fd_resv *r, void *priv);
void ksvc_fd_cancel(struct ksvc_fd_resv *r);
/*
 * [proc] Look up fd in the current task's table: -EBADF when it is not open, -EINVAL when it is
 * not a file of ops.  On success *priv holds a new reference taken with ops->get.
 */
int ksvc_fd_get(int fd, const struct ksvc_file_ops *ops, void **priv);
/* [sleep] ksvc_fd_install with file status flags (O_NONBLOCK) set on the new file. */
int ksvc_fd_install_flags(const struct ksvc_file_ops *ops, void *priv, bool cloexec,
			  unsigned int fflags);
/* [proc] ksvc_fd_get, and the file's status flags (O_NONBLOCK...) in *fflags. */
int ksvc_fd_get_flags(int fd, const struct ksvc_file_ops *ops, void **priv, unsigned int *fflags);

/*
 * [proc] ksvc_fd_get on thread tid's descriptor table (BPF_TASK_FD_QUERY): -ENOENT when there
 * is no such thread, -EBADF when fd is not open there, -EINVAL when it is not a file of ops.
 */
int ksvc_task_fd_get(int tid, int fd, const struct ksvc_file_ops *ops, void **priv);
/*
 * [sleep] bpffs (fs/bpffs.c): pin (ops, priv) at the user path upath, a new file of a bpf
 * filesystem, taking over the caller's reference (which the file drops with ops->release when
 * it is unlinked and closed): 0, -EEXIST, -ENOENT, -EPERM (the directory is not in a bpf
 * filesystem), -EFAULT, -ENAMETOOLONG.  ksvc_bpffs_get: the object pinned at upath with a new
 * reference (ops->get): 0, -ENOENT, -EACCES (not a pinned object), -EFAULT.
 */
int ksvc_bpffs_pin(const void *upath, const struct ksvc_file_ops *ops, void *priv);
int ksvc_bpffs_get(const void *upath, const struct ksvc_file_ops **ops, void **priv);

/*
 * ---- O_ASYNC: signalling a file's owner (Linux's fasync) ----
 * An object whose file supports O_ASYNC gets ops->fasync calls: with fa when F_SETFL sets
 * O_ASYNC on its file, with NULL when F_SETFL clears it and when the file's last reference
 * goes (before ops->release).  It keeps fa until then and signals through it.
 */
struct ksvc_fasync; /* the kernel's: the file and the fd O_ASYNC was set through */
/*
 * [any] Signal fa's owner (fcntl F_SETOWN / F_SETOWN_EX): its F_SETSIG signal with si_code
 * reason (POLL_IN, POLL_HUP...), si_band and si_fd, or a plain SIGIO when F_SETSIG is 0 (or the
 * queue is full).  No owner: nothing.  Takes process-table and signal locks: call it only with
 * no lock held that the scheduler or signal code may take (from ksvc_irq_work, say).
 */
void ksvc_kill_fasync(struct ksvc_fasync *fa, int reason);

/*
 * ---- deferred work (Linux's irq_work) ----
 * ksvc_irq_work_queue runs w->fn(w) soon on the calling CPU in hard-IRQ context, once
 * interrupts are unmasked again: after every lock the caller holds is dropped.  Queuing a work
 * that is already queued does nothing (false); a running work may queue itself again.
 */
struct ksvc_irq_work {
	struct ksvc_irq_work *next; /* the kernel's */
	_Atomic unsigned int state; /* the kernel's: queued, running */
	void (*fn)(struct ksvc_irq_work *w);
};
/* [any] */
bool ksvc_irq_work_queue(struct ksvc_irq_work *w);
/* [sleep] Wait until w is neither queued nor running (before freeing what holds it). */
void ksvc_irq_work_sync(struct ksvc_irq_work *w);

/* ---- cgroups (kernel/cgroup.c, fs/cgroupfs.c): opaque to bpf/ and perf/ ---- */

struct cgroup;
/* [proc] The cgroup whose cgroupfs directory fd is open, with a reference: 0, -EBADF (no
 * such fd, or not a cgroup directory), -ENOENT (the cgroup was removed). */
int ksvc_cgroup_get_fd(int fd, struct cgroup **out);
/* [any] Drop a reference from ksvc_cgroup_get_fd; NULL is ignored. */
void ksvc_cgroup_put(struct cgroup *cg);
/* [any] The current task's cgroup is cg or below it. */
bool ksvc_cgroup_current_under(struct cgroup *cg);
/* [any] The id (cgroupfs inode number; the root is 1) of the current task's cgroup, or of its
 * ancestor at level (0: the root); 0 for a level past its own or negative. */
uint64_t ksvc_cgroup_current_id(void);
uint64_t ksvc_cgroup_current_ancestor_id(int level);
/* Linux's perf_event controller, implicit on cgroup2: the cgroup whose perf_event state a
 * cgroup uses (kernel/cgroup.c says why that is the root here).
 * [proc] PERF_FLAG_PID_CGROUP's fd, with a reference: 0, -EBADF (not a cgroup directory),
 * -ENOENT (a cgroup without perf_event state of its own, or removed). */
int ksvc_cgroup_perf_get_fd(int fd, struct cgroup **out);
/* [any] PERF_SAMPLE_CGROUP: the id of the current task's perf_event cgroup. */
uint64_t ksvc_cgroup_current_perf_id(void);

/* ---- signals for perf ---- */

/* [any] attr.sigtrap: SIGTRAP to the current thread, si_code TRAP_PERF, si_addr addr,
 * si_perf_data data, si_perf_type type, si_perf_flags TRAP_PERF_FLAG_ASYNC when it is blocked.
 * Nothing for a kernel thread or an exiting task.  Same locking rule as ksvc_kill_fasync. */
void ksvc_send_sig_perf(uint64_t addr, uint32_t type, uint64_t data);
/*
 * [any] bpf_send_signal(_thread): sig (0 checks only) to the current process (thread: the
 * current thread) as the kernel sends it (SI_KERNEL): 0, -EINVAL (not a signal number) or
 * -EPERM (a kernel thread, an exiting task, or init).  Same locking rule as above.
 */
int ksvc_signal_current(int sig, bool thread);

/* ---- handlers perf registers with the interrupt and trap code ---- */

/*
 * [boot] The PMU overflow interrupt of every CPU calls fn, interrupts masked, with the registers
 * it interrupted (arm64 user_pt_regs order: x0-x30, sp, pc, pstate) and whether they are user
 * mode; fn returns true when the interrupt was its own.  0, or -ENODEV when the machine
 * describes no PMU interrupt (no arm,armv8-pmuv3 node), -EBUSY when one is registered already.
 */
int ksvc_pmu_irq_register(bool (*fn)(const uint64_t *regs, bool user));
/*
 * [boot] A hardware breakpoint or watchpoint exception calls hit on its CPU, interrupts masked:
 * a breakpoint at addr (watch false) or a watchpoint hit at data address addr by a load or a
 * store (write); regs are the registers at the hit (user_pt_regs order), of user code (user)
 * or of the kernel.  irqs_off: the kernel code hit had interrupts masked, and may hold any
 * interrupt-safe lock (count, do not sample).  The trap code then steps over the instruction
 * with suspend(kernel, true) on its CPU (kernel: the kernel's slots, else the user ones) and
 * calls suspend(kernel, false) once it stepped; context switches call suspend(false, ...) on
 * the CPU that runs a stepping user task or stops running one.  While the kernel's slots are
 * suspended the trap code may borrow execute slots: suspend(true, false) writes every
 * execute slot's value and control back.
 */
void ksvc_hw_breakpoint_register(bool (*hit)(bool watch, uint64_t addr, bool write,
					     const uint64_t *regs, bool user, bool irqs_off),
				 void (*suspend)(bool kernel, bool on));

/* ---- the interrupted context ---- */

/* [any] Is this CPU running an interrupt handler (Linux's in_interrupt(), hard IRQs here)? */
bool ksvc_in_irq(void);
/* [any] The clock behind ksvc_clock_ns: its counter frequency, and a matching pair of
 * counter and ns readings (the perf_event_mmap_page time_* conversion). */
void ksvc_clock_info(uint32_t *freq_hz, uint64_t *counter, uint64_t *ns);
/* ---- tracepoints (trace/trace.c) ---- */
/* [sleep] A perf event starts using tracepoint id (PERF_TYPE_TRACEPOINT config): 0, or
 * -EINVAL when there is no such tracepoint, or a uprobe event's registration errno. */
int ksvc_trace_event_open(uint64_t id);
/* [sleep] ... and stops (its destroy). */
void ksvc_trace_event_close(uint64_t id);
/* [any] The name of tracepoint id ("sched_switch", "sys_enter_openat"), or NULL. */
const char *ksvc_trace_event_name(uint64_t id);
/* [any] One more (delta 1) or one fewer (-1) active perf event on tracepoint id: the hooks
 * fire while any is. */
void ksvc_trace_use(uint64_t id, int delta);
/* PERF_EVENT_IOC_SET_FILTER's filters (trace/filter.c).  probe: 0 for tracepoint id (a
 * uprobe_events one: __probe_ip, or __probe_func and __probe_ret_ip), 1 for a kprobe/uprobe
 * PMU event, 2 for a return one (the common and generic fields only, as Linux's perf-local
 * probe events).  [sleep] Parse str: 0 and *out, or Linux's errno for it. */
struct trace_filter;
int ksvc_trace_filter_new(uint64_t id, int probe, const char *str, struct trace_filter **out);
/* [any] Does a hit's record pass f (NULL passes), for the current task on this CPU? */
bool ksvc_trace_filter_match(const struct trace_filter *f, const void *rec, uint32_t size);
/* [any] NULL is ignored. */
void ksvc_trace_filter_free(struct trace_filter *f);
/* [proc] The current task's user registers (at the last entry from user space). */
void ksvc_user_regs(uint64_t regs[34]);

/* ---- uprobes (kernel/uprobes.c) ---- */

struct ksvc_uprobe; /* one probed (file, offset), shared by its registrations */
/*
 * [sleep] Probe the instruction at offset of the file at path (ret: its return, else its
 * entry) in every process that maps it, now and later: 0 with *out (hits then reach
 * perf_uprobe_hit with it), or -ENOENT and the open errors of path, -EINVAL (not a regular
 * file, offset past the end or not 4-aligned, an instruction Linux does not probe,
 * ref_ctr_offset not 2-aligned or not the one the probe already has), -ENOMEM.
 * ref_ctr_offset (0: none) is the file offset of a USDT semaphore, a 16-bit counter that each
 * process mapping the file sees raised by one while the probe is in its text.
 */
int ksvc_uprobe_register(const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool ret,
			 struct ksvc_uprobe **out);
/* [sleep] Undo one registration (ret as given); the last one takes the BRKs out. */
void ksvc_uprobe_unregister(struct ksvc_uprobe *u, bool ret);
/* [any] One more registration of u (an inherited event's, under perf's spinlocks at fork),
 * undone by unregister; the caller holds one already. */
void ksvc_uprobe_dup(struct ksvc_uprobe *u, bool ret);

/* ---- kprobes (kernel/kprobes.c) ---- */

struct ksvc_kprobe; /* one probed kernel address, shared by its registrations */
/*
 * [sleep] Probe the kernel instruction at sym+off (sym NULL: at addr), or with ret the
 * returns of the function whose first instruction that is: 0 with *out (hits then reach
 * perf_kprobe_hit with it), -ENOENT (no such function), -EINVAL (outside the kernel's text,
 * not 4-aligned, a refused instruction or function, a return probe not at an entry), -ENOSPC,
 * -ENOMEM.
 */
int ksvc_kprobe_register(const char *sym, uint64_t off, uint64_t addr, bool ret,
			 struct ksvc_kprobe **out);
/* [sleep] Undo one registration (ret as registered); the last one puts the original
 * instruction back. */
void ksvc_kprobe_unregister(struct ksvc_kprobe *k, bool ret);
/* [any] One more registration of k, as ksvc_uprobe_dup. */
void ksvc_kprobe_dup(struct ksvc_kprobe *k, bool ret);
/* [any, interrupts masked] For bpf_get_func_ip in a KPROBE program: the address of the
 * kprobe whose handlers this CPU runs when that is a function's first instruction (for a
 * return probe: its function's), else 0 (no kprobe runs: a uprobe; a probe inside a function). */
uint64_t ksvc_kprobe_running_addr(void);

/* ---- one-shot timers (cpu-clock sampling) ---- */

struct ksvc_timer;
/*
 * [any] A timer that calls fn in hard-IRQ context on the CPU that started it, with the
 * registers the timer interrupt interrupted (arm64 user_pt_regs order: x0-x30, sp, pc, pstate;
 * valid during the call) and whether they are user mode: what a cpu-clock sample shows.
 */
typedef void ksvc_timer_fn(void *arg, const uint64_t *regs, bool user);
struct ksvc_timer *ksvc_timer_alloc(ksvc_timer_fn *fn, void *arg);
/* [any] Cancels it first (as ksvc_timer_cancel: never from its own callback). */
void ksvc_timer_free(struct ksvc_timer *t);
/* [any, IRQs masked] Fire once after delay_ns on this CPU (also from its own callback). */
void ksvc_timer_start(struct ksvc_timer *t, uint64_t delay_ns);
/* [any, IRQs masked] Stop it if pending; waits out a callback running on another CPU. */
void ksvc_timer_cancel(struct ksvc_timer *t);
/* [any, IRQs masked] Stop it if pending, without waiting for a running callback (also from
 * its own callback): true when it was pending (Linux's hrtimer_try_to_cancel). */
bool ksvc_timer_try_cancel(struct ksvc_timer *t);

/* ---- wait queues (for poll) ---- */

struct wait_queue;
/* [any] A wait queue object owned by the caller; NULL when out of memory. */
struct wait_queue *ksvc_waitq_alloc(void);
void ksvc_waitq_free(struct wait_queue *wq);
/* [any] Wake every sleeper (IRQ-safe: the overflow path may call it). */
void ksvc_waitq_wake_all(struct wait_queue *wq);

/* ---- perf: tasks, CPUs, the scheduler ---- */

/* A thread, as perf names it (kernel/ks: struct task).  Opaque to portable code. */
struct ksvc_task;

/* [any] The running thread. */
struct ksvc_task *ksvc_task_current(void);
/*
 * [proc] The live thread with this tid, or NULL.  The result stays valid only while the
 * caller keeps the thread from exiting: perf holds its context lock, which the exit hook
 * (perf_task_exit) takes too.
 */
struct ksvc_task *ksvc_task_find(int tid);
int ksvc_task_tid(const struct ksvc_task *t);
int ksvc_task_tgid(const struct ksvc_task *t);
/* [proc] The process id of t's parent process (0 for none). */
int ksvc_task_ppid(const struct ksvc_task *t);
/* [any] The task's perf context slot (kernel/ stores it, perf/ owns what it points to). */
void **ksvc_task_perf_slot(struct ksvc_task *t);
/* [any] The task's BPF task-storage slot (bpf/ owns what it points to; see bpf_task_free). */
void **ksvc_task_bpf_slot(struct ksvc_task *t);
/* [proc] The process id a pidfd (pidfd_open) refers to, or -EBADF when fd is not one. */
int ksvc_pidfd_pid(int fd);
/*
 * The task helpers take any task pointer a program holds (it may have been freed since: each
 * checks the task is still one the scheduler tracks, under its lock, before it looks inside).
 * [any] bpf_find_vma: fn(vma, arg) on the kernel's struct vm_area that holds addr in t's
 * memory, with its mm locked (never waiting): 0, or -ENOENT (no such area, no memory, t gone),
 * -EBUSY (the lock is held).
 */
int ksvc_task_find_vma(struct ksvc_task *t, uint64_t addr, void (*fn)(void *vma, void *arg),
		       void *arg);
/* [sleep] bpf_copy_from_user_task: up to size bytes at uaddr in t's memory into dst, as
 * ptrace reads them; the bytes read (0 for a task without memory or gone). */
int ksvc_task_copy_from_user(struct ksvc_task *t, void *dst, uint64_t uaddr, uint32_t size);
/* [any] Is t still allocated (the current task, an idle task, or one the scheduler tracks)?
 * Once it is no longer tracked, bpf_task_free runs for it: a caller that checks under a lock
 * bpf_task_free takes (task storage's) keeps it from being freed until that lock is dropped. */
bool ksvc_task_live(const struct ksvc_task *t);
/* [any] bpf_task_pt_regs: where t's user registers are saved (Linux's task_pt_regs); NULL
 * when t is gone. */
void *ksvc_task_user_regs(struct ksvc_task *t);
/* [any] bpf_get_task_stack's trace: t's kernel return addresses (the current task's from the
 * caller; another's from where it last switched away), or the current task's user ones (its
 * pc, then the frame records from its saved x29), at most max: how many, or -EFAULT (t gone;
 * user for a task without user registers), -EOPNOTSUPP (user for another task, as Linux 6.1). */
long ksvc_task_stack(struct ksvc_task *t, bool user, uint64_t *ips, unsigned int max);
/* [any] The CPU the task is running on right now, or is being switched to or from, or -1
 * when it is on none (a hint: it may change at once). */
int ksvc_task_running_cpu(const struct ksvc_task *t);
/* [any] Is the CPU online? */
bool ksvc_cpu_online(unsigned int cpu);
/* [proc] Run fn(arg) on cpu with interrupts masked and wait for it (IPI when remote). */
void ksvc_run_on_cpu(unsigned int cpu, void (*fn)(void *arg), void *arg);
