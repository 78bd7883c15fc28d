/*
 * perf_internal.h - interfaces between the files of perf/ (included only by the perf/ sources
 * and their host tests).
 *
 * The files of perf/, in the order a newcomer reads them (docs/architecture.md draws it):
 *   The syscall and the event file
 *     core.c      perf_event_open (decode, then commit: fd, group, context, install), read()
 *                 with read_format, the ioctls, poll, close; the lock-order block
 *     attr.c      perf_event_attr copy-in (size versions, E2BIG write-back) and the checks
 *                 Linux 6.1 makes before a PMU sees the event, in Linux's order
 *     ctx.c       per-task and per-CPU contexts and the hooks kernel/ calls: switch, tick,
 *                 fork (inherit), exec, exit, software and tracepoint hits; perf_init
 *   The PMUs
 *     pmu.c       struct perf_pmu, the type -> pmu table, counter maths, group scheduling and
 *                 rotation
 *     pmuv3.c     the ARM PMUv3 backend (through <arch/pmu_sysreg.h> only) and its interrupt
 *     sw.c        the software PMU; its per-config rules are <perf/sw_events.h>
 *     tp.c        the tracepoint PMU
 *     bp.c        the hw_breakpoint PMU (through <arch/dbg_sysreg.h> only) and its trap handler
 *   The sample path: IRQ -> overflow -> BPF -> record -> ring -> wakeup
 *     overflow.c  perf_event_overflow: throttling, frequency mode, the BPF filter, the sample,
 *                 REFRESH / sigtrap / O_ASYNC notification (pending_work)
 *     bpf_attach.c  programs on events and tracepoints (the filter), and struct bpf_perf_ops
 *                 through which bpf/'s helpers reach perf
 *     sample.c    building one PERF_RECORD_SAMPLE (callchains, user regs and stack) and
 *                 writing it into the event's ring
 *     record.c    output cursor; the SAMPLE, read_format, sample_id_all trailer, LOST encoders
 *     ring.c      the ring itself: user page, output_begin/end, LOST, wakeup_events/watermark
 *     mmap.c      an event's ring as user space sees it: mmap, user page, SET_OUTPUT, the
 *                 readers' wakeup and poll
 *     sideband.c  COMM, MMAP2, FORK, EXIT, THROTTLE, SWITCH, KSYMBOL, BPF_EVENT encoders, and
 *                 which events get a side-band record
 *   The views
 *     sysfs.c     /sys/bus/event_source/devices and the perf sysctls
 * The building blocks (attr.c, record.c, ring.c, pmu.c, the encoders) take plain parameters
 * so each tests in isolation; tests/unit/test_perf_core.c runs them all together.
 *
 * Lock legend used on the fields below (core.c owns the lock-order block):
 *   [i]  immutable after perf_event_open commits the event
 *   [c]  perf_ctx.lock (spin_lock_irqsave: IRQ-safe, the context of the event)
 *   [p]  owning CPU with interrupts masked (PMU driver state; only touched on the CPU the event
 *        is ACTIVE on: by ctx switch-in/out with IRQs off or by the PMU interrupt)
 *   [l]  the event's core.child_lock (for its children list: the parent's)
 *   [r]  perf_ring.lock (writers of one ring buffer)
 *   [a]  atomic
 * A field under another lock names it: [bpf_lock], [perf_owner_lock].
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <asm/perf_regs.h>
#include <asm/ptrace.h>
#include <kern/list.h>
#include <kern/spinlock.h>
#include <perf/perf.h>

/* The 6.1 uapi struct is VER7; tools send 128 (perf 6.1) or smaller (size 0 = VER0). */
_Static_assert(sizeof(struct perf_event_attr) == PERF_ATTR_SIZE_VER7, "6.1 perf_event_attr");
_Static_assert(offsetof(struct perf_event_mmap_page, data_head) == 1024, "mmap page layout");
_Static_assert(sizeof(struct perf_event_header) == 8, "record header");
_Static_assert(sizeof(struct perf_branch_entry) == 24, "branch entry");

/* ------------------------------------------------------------------------------------------ */
/* attr.c                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The sysctls and machine facts the open-time checks read (kernel.perf_event_* defaults). */
struct perf_limits {
	uint32_t max_sample_rate; /* perf_event_max_sample_rate, default 100000 */
	uint16_t max_stack;	  /* perf_event_max_stack, default 127 */
	unsigned int nr_cpus;	  /* nr_cpu_ids */
	uint64_t online_mask;	  /* bit n: CPU n online (CPUs 0..63) */
	bool have_sve;		  /* arm64: PERF_REG_ARM64_VG is a valid sample register */
};

#define PERF_DEFAULT_MAX_SAMPLE_RATE 100000u
#define PERF_DEFAULT_MAX_STACK 127u

/*
 * The registers perf passes around (an interrupt's, a task's user state at its last entry, a
 * BPF program's ctx): arm64's struct user_pt_regs read as u64s, x0..x30, sp, pc, pstate.  The
 * sample register numbers (PERF_REG_ARM64_*, uapi <asm/perf_regs.h>) index the same array.
 */
#define PERF_REGS_NR (sizeof(struct user_pt_regs) / sizeof(uint64_t))
#define PERF_REGS_PSTATE (offsetof(struct user_pt_regs, pstate) / sizeof(uint64_t))
#define PERF_REGS_FP PERF_REG_ARM64_X29 /* the frame record the callchain walk starts from */
_Static_assert(offsetof(struct user_pt_regs, sp) / 8 == PERF_REG_ARM64_SP, "user_pt_regs order");
_Static_assert(offsetof(struct user_pt_regs, pc) / 8 == PERF_REG_ARM64_PC, "user_pt_regs order");
_Static_assert(PERF_REGS_NR == 34, "ksvc_user_regs fills 34 registers");
/* pstate's mode field says whether the registers are user mode (EL0) */
static inline bool perf_regs_user(const uint64_t *regs)
{
	return (regs[PERF_REGS_PSTATE] & PSR_MODE_MASK) == PSR_MODE_EL0t;
}
/* Valid PERF_SAMPLE_REGS_* bits: x0..pc, and VG with SVE (PERF_REG_EXTENDED_MASK). */
#define PERF_ARM64_REGS_VALID ((1ull << PERF_REG_ARM64_MAX) - 1)

/* Every flags bit perf_event_open knows (PERF_FLAG_ALL is not in the uapi header). */
#define PERF_FLAG_ALL_KNOWN                                                                        \
	(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC)

/* Checks before copy-in: unknown flags bits -> -EINVAL. */
int perf_attr_check_flags(unsigned long flags);
/*
 * [proc] perf_copy_attr: copy the user attr by its size version (0 = VER0; < VER0 or > page,
 * or a non-zero tail beyond ours -> -E2BIG after writing our size into uattr->size; short
 * structs zero-filled), then Linux's field checks.  Fills in sample_max_stack and the branch
 * privilege levels as Linux does.  0, -E2BIG, -EFAULT, -EINVAL.
 */
int perf_attr_copy(void *uattr, struct perf_event_attr *attr, const struct perf_limits *lim);
/* The field checks of perf_copy_attr on an attr already in kernel memory (size set). */
int perf_attr_check_fields(struct perf_event_attr *attr, const struct perf_limits *lim);
/*
 * The perf_event_open checks after copy-in and before any fd/task lookup: freq vs
 * max_sample_rate, period top bit, PID_CGROUP with pid or cpu -1.
 */
int perf_attr_check_open(const struct perf_event_attr *attr, int pid, int cpu, unsigned long flags,
			 const struct perf_limits *lim);
/*
 * The perf_event_alloc checks before the PMU lookup: cpu range (pid/cpu -1 -> -EINVAL),
 * sigtrap without task, inherit with PERF_SAMPLE_READ.  has_task: pid != -1 (not cgroup).
 * Clears branch_sample_type without BRANCH_STACK as Linux does.
 */
int perf_attr_check_alloc(struct perf_event_attr *attr, int cpu, bool has_task,
			  const struct perf_limits *lim);
/* After PMU init: aux_output without PMU support -> -EOPNOTSUPP. */
int perf_attr_check_pmu(const struct perf_event_attr *attr, unsigned int pmu_caps);
/*
 * perf_event_set_clock: CLOCK_MONOTONIC/_RAW always; REALTIME/BOOTTIME/TAI only on a PMU
 * that does not use NMIs (PERF_PMU_CAP_NO_NMI); else -EINVAL.
 */
int perf_attr_check_clockid(int clockid, unsigned int pmu_caps);
/* What the FD_OUTPUT / PERF_EVENT_IOC_SET_OUTPUT checks compare of the two events. */
struct perf_output_info {
	const void *event; /* identity */
	int cpu;
	const void *task; /* the task followed, NULL for a CPU event */
	bool use_clockid;
	int clockid;
	bool write_backward;
	bool mmapped; /* the redirected event has its own mapping */
};
/*
 * perf_event_set_output: not to itself, same CPU, same task for cpu -1 events, same clock,
 * same write direction, no mapping of its own.  -EINVAL.
 */
int perf_attr_check_output(const struct perf_output_info *ev, const struct perf_output_info *out);
/* After the online check: aux_output/aux_sample_size need an AUX group leader (-EINVAL). */
int perf_attr_check_aux_event(const struct perf_event_attr *attr, bool leader_is_aux);
/* perf_event_open: online check of a per-CPU event's CPU (-ENODEV), after the context lookup. */
int perf_attr_check_cpu_online(int cpu, bool has_task, const struct perf_limits *lim);

/* What the group checks need to know of the leader named by group_fd. */
struct perf_group_info {
	bool is_leader; /* leader->group_leader == leader */
	bool inherit;
	int cpu;
	const void *ctx; /* its context identity */
	bool use_clockid;
	int clockid;
};
/*
 * [proc] The syscall's first three steps in order: perf_attr_check_flags, perf_attr_copy,
 * perf_attr_check_open.  core.c then gets the fd, group_fd and task, and goes on with
 * perf_attr_check_group_inherit and perf_attr_check_alloc.
 */
int perf_attr_decode(void *uattr, int pid, int cpu, unsigned long flags,
		     const struct perf_limits *lim, struct perf_event_attr *attr);
/* Before alloc: with a task, inherit must match the leader's (-EINVAL). */
int perf_attr_check_group_inherit(const struct perf_event_attr *attr, bool has_task,
				  const struct perf_group_info *leader);
/* After the context is found: sibling-of-sibling, clock, cpu, context, pinned/exclusive. */
int perf_attr_check_group(const struct perf_event_attr *attr, int cpu, const void *ctx,
			  const struct perf_group_info *leader);

/* ------------------------------------------------------------------------------------------ */
/* record.c                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * An output cursor: a span of `left` bytes reserved in a (possibly wrapping) area of `size`
 * bytes, written from `off`.  A flat buffer is an area that never wraps.
 */
struct perf_out {
	uint8_t *base;
	size_t size;
	size_t off;  /* < size */
	size_t left; /* bytes still reserved; writing more is a kernel bug (kassert) */
};

void perf_out_init(struct perf_out *o, void *buf, size_t len);
void perf_out_put(struct perf_out *o, const void *src, size_t n);
void perf_out_zero(struct perf_out *o, size_t n);
/* n u64 values in a row (a callchain) */
void perf_out_u64s(struct perf_out *o, const uint64_t *v, size_t n);
/*
 * One u64 or u32: inline, a single store when it does not straddle the end of the area (the
 * sample path writes a dozen of these per record); perf_out_put otherwise.
 */
static inline void perf_out_small(struct perf_out *o, const void *v, size_t n)
{
	if (__builtin_expect(o->size - o->off > n && o->left >= n, 1)) {
		__builtin_memcpy(o->base + o->off, v, n); /* n is a constant: one store */
		o->off += n;
		o->left -= n;
	} else {
		perf_out_put(o, v, n);
	}
}

static inline void perf_out_u64(struct perf_out *o, uint64_t v)
{
	perf_out_small(o, &v, sizeof(v));
}

static inline void perf_out_u32(struct perf_out *o, uint32_t v)
{
	perf_out_small(o, &v, sizeof(v));
}

/* Two u32 fields that follow each other (TID's pid and tid, CPU's cpu and res), as one u64. */
static inline void perf_out_u32x2(struct perf_out *o, uint32_t lo, uint32_t hi)
{
	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are little-endian");
	perf_out_u64(o, (uint64_t)lo | (uint64_t)hi << 32);
}

/* The sample_id fields (trailer, LOST, sideband): what Linux's perf_event_header__init_id fills. */
struct perf_sample_id {
	uint32_t pid, tid; /* TID */
	uint64_t time;	   /* TIME */
	uint64_t id; /* ID and IDENTIFIER: primary_event_id (the parent's id when inherited) */
	uint64_t stream_id; /* STREAM_ID: the event's own id */
	uint32_t cpu;	    /* CPU (followed by a zero u32) */
};

/* read_format values: one entry (single) or leader first then siblings (PERF_FORMAT_GROUP). */
struct perf_read_entry {
	uint64_t value, id, lost;
};
struct perf_read_values {
	uint64_t time_enabled, time_running;
	uint32_t nr; /* entries in ent; 1 for the single form */
	const struct perf_read_entry *ent;
};

/* Byte size of read()/PERF_SAMPLE_READ for read_format and nr group members. */
size_t perf_read_size(uint64_t read_format, uint32_t nr);
/* Encode in Linux's order (perf_output_read_one / _group); o must hold perf_read_size bytes. */
void perf_read_write(struct perf_out *o, uint64_t read_format, const struct perf_read_values *v);

/* Everything a PERF_RECORD_SAMPLE may carry; only the fields sample_type selects are read. */
struct perf_sample_data {
	struct perf_sample_id sid;
	uint64_t ip;
	uint64_t addr;
	uint64_t period;
	const struct perf_read_values *read; /* PERF_SAMPLE_READ */
	const uint64_t *callchain;	     /* with PERF_CONTEXT_* markers, as Linux stores them */
	uint64_t callchain_nr;
	const void *raw; /* NULL: Linux's empty raw (size 4, one zero u32) */
	uint32_t raw_size;
	const struct perf_branch_entry *branches; /* NULL: nr = 0 only */
	uint64_t branch_nr, branch_hw_idx;
	uint64_t regs_user_abi;	   /* PERF_SAMPLE_REGS_ABI_*; NONE for a kernel thread */
	const uint64_t *regs_user; /* indexed by PERF_REG_ARM64_* (x0..x30, sp, pc) */
	uint64_t stack_user_sp;	   /* user address the STACK_USER dump starts at */
	uint64_t
	    stack_user_size; /* dump size (attr.sample_stack_user clamped, 8-aligned); 0 = none */
	uint64_t weight;     /* WEIGHT or WEIGHT_STRUCT (union perf_sample_weight.full) */
	uint64_t data_src, transaction;
	uint64_t regs_intr_abi;
	const uint64_t *regs_intr;
	uint64_t phys_addr, cgroup, data_page_size, code_page_size;
};

/* The record misc bits of a sample: cpu mode, and EXACT_IP for a precise IP. */
uint16_t perf_sample_misc(bool user_mode, bool exact_ip);
/* Size of the sample_id_all trailer for sample_type (0 when !sample_id_all). */
size_t perf_id_trailer_size(uint64_t sample_type, bool sample_id_all);
/* Write the trailer (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER). */
void perf_id_trailer_write(struct perf_out *o, uint64_t sample_type, bool sample_id_all,
			   const struct perf_sample_id *sid);
/*
 * perf_sample_ustack_size: the STACK_USER dump size for a sample whose other fields take
 * header_size bytes: attr.sample_stack_user cut at the top of user space (task_size - sp) and
 * so that the record still fits its u16 size.  0 without user registers.
 */
uint16_t perf_sample_ustack_size(uint16_t stack_size, uint16_t header_size, bool have_regs,
				 uint64_t user_sp, uint64_t task_size);
/* arm64's TASK_SIZE with 48-bit user addresses: where a user stack dump stops */
#define PERF_USER_TASK_SIZE (1ull << 48)
/* Total PERF_RECORD_SAMPLE size (8-aligned, header included); > 0xfff8 cannot be written. */
size_t perf_sample_size(const struct perf_event_attr *attr, const struct perf_sample_data *d);
/*
 * [any] Write one PERF_RECORD_SAMPLE; size is perf_sample_size(attr, d), which the caller has
 * already computed to reserve the space.  STACK_USER reads the user stack with
 * ksvc_read_nofault; bytes it cannot read are zero and dyn_size tells.
 */
void perf_sample_write(struct perf_out *o, const struct perf_event_attr *attr,
		       const struct perf_sample_data *d, uint16_t misc, size_t size);
/* PERF_RECORD_LOST {id, lost} plus trailer. */
size_t perf_lost_size(uint64_t sample_type, bool sample_id_all);
void perf_lost_write(struct perf_out *o, uint64_t id, uint64_t lost, uint64_t sample_type,
		     bool sample_id_all, const struct perf_sample_id *sid);

#define PERF_RECORD_MAX_SIZE 0xfff8u /* header.size is a u16; records stay 8-aligned */

/* ------------------------------------------------------------------------------------------ */
/* ring.c                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The writer identity a ring needs to emit PERF_RECORD_LOST ahead of the next record. */
struct perf_ring_writer {
	uint64_t sample_type;
	bool sample_id_all;
	struct perf_sample_id sid; /* LOST's id is sid.stream_id (Linux: event->id) */
};

/*
 * One mmap ring: page 0 is struct perf_event_mmap_page, then nr_pages (0 or 2^n) data pages.
 * Several events may share it (PERF_EVENT_IOC_SET_OUTPUT, also across CPUs for task events),
 * so writers serialise on lock with IRQs masked: begin takes it, end drops it, and a writer
 * must not nest (the PMU IRQ cannot arrive while a process-context writer holds it).
 */
struct perf_ring {
	struct spinlock lock;
	struct perf_event_mmap_page *user_page; /* [i] page from ksvc_alloc_pages(0) */
	uint8_t *data;				/* [i] 2^order pages, NULL when nr_pages == 0 */
	uint32_t nr_pages;			/* [i] data pages */
	unsigned int order;			/* [i] */
	uint64_t data_size;			/* [i] nr_pages * page size */
	uint64_t watermark;			/* [i] bytes between wakeups */
	bool overwrite;	       /* [i] mapped without PROT_WRITE: never checks data_tail */
	bool backward;	       /* [i] attr.write_backward: head runs down from 0 */
	uint64_t head;	       /* [r] next write position (free running) */
	uint64_t lost;	       /* [r] records dropped since the last PERF_RECORD_LOST */
	uint64_t wakeup;       /* [r] wakeup generation (watermark bytes and wakeup_events) */
	uint32_t events;       /* [r] samples since the last wakeup_events wakeup */
	_Atomic uint32_t refs; /* [a] mappings + events using it */
};

/* A reservation made by perf_ring_output_begin, finished by perf_ring_output_end. */
struct perf_ring_handle {
	struct perf_ring *ring;
	struct perf_out out; /* the reserved bytes, after any LOST record */
	unsigned long irqflags;
	uint64_t wakeup_at_begin;
};

/* mmap length -> data page count (0 or a power of two), or -EINVAL as Linux perf_mmap. */
long perf_ring_pages_for_len(uint64_t len);
/*
 * [any] Allocate a ring of nr_pages data pages with the user page set up as Linux's
 * perf_event_init_userpage (cap_bit0_is_deprecated, size, data_offset, data_size).  watermark:
 * attr.watermark ? attr.wakeup_watermark : 0 (0 means half the buffer).  -EINVAL, -ENOMEM.
 */
int perf_ring_create(uint32_t nr_pages, uint32_t watermark, bool overwrite, struct perf_ring **out);
void perf_ring_get(struct perf_ring *r);
/* Drop a reference; frees the pages with the last one. */
void perf_ring_put(struct perf_ring *r);
/* Physical address of mmap page pgoff (0 = user page), or 0 when out of range. */
uint64_t perf_ring_page_phys(const struct perf_ring *r, uint64_t pgoff);

/* arm64 sched_clock conversion parameters for the user page (arch_perf_update_userpage). */
struct perf_time_conv {
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero, time_cycles, time_mask;
};
/*
 * From the arch timer frequency, its width in bits and the sched_clock epoch (counter value and
 * ns at that value).  62.5 MHz gives shift 21, mult 33554432 as on Linux under QEMU.
 */
void perf_time_conv_init(struct perf_time_conv *tc, uint32_t freq_hz, unsigned int bits,
			 uint64_t epoch_cyc, uint64_t epoch_ns);
uint64_t perf_time_conv_cyc_to_ns(const struct perf_time_conv *tc, uint64_t cyc);

/* Per-event values perf_event_update_userpage publishes. */
struct perf_userpage_event {
	uint32_t index; /* rdpmc index + 1, 0 = not readable from user */
	int64_t offset; /* count - hw prev_count when index != 0, else count */
	uint64_t time_enabled, time_running;
	uint16_t pmc_width;
	bool cap_user_rdpmc;
};
/* [any] The seqlock'd update of the user page (lock++ ... lock++), with the time fields. */
void perf_ring_update_userpage(struct perf_ring *r, const struct perf_userpage_event *ev,
			       const struct perf_time_conv *tc, uint64_t now_ns);

/*
 * [any] Reserve size bytes (8-aligned, header included).  First emits PERF_RECORD_LOST for
 * records dropped earlier when it fits together with this one.  0 with the lock held, or
 * -ENOSPC (the record is counted lost; no lock held), -EINVAL for a bad size.
 */
int perf_ring_output_begin(struct perf_ring *r, struct perf_ring_handle *h, size_t size,
			   const struct perf_ring_writer *w);
/*
 * [any] Publish the record (data_head release store) and drop the lock.  wakeup_events:
 * attr.wakeup_events for a sample of an event without attr.watermark, else 0.  Returns true
 * when readers must be woken; the caller defers that wakeup (IRQ context never wakes).
 */
bool perf_ring_output_end(struct perf_ring_handle *h, uint32_t wakeup_events);
/* [any] begin + copy + end of a record already encoded in rec. -ENOSPC or 0; *wake set. */
int perf_ring_write(struct perf_ring *r, const void *rec, size_t size,
		    const struct perf_ring_writer *w, bool *wake);
/* [any] Bytes the reader has not consumed (data_head - data_tail). */
uint64_t perf_ring_unread(struct perf_ring *r);

/* ------------------------------------------------------------------------------------------ */
/* sideband.c                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The trailer configuration of the event a side-band record goes to. */
struct perf_sb_target {
	uint64_t sample_type;
	bool sample_id_all;
	struct perf_sample_id sid;
};

/* struct perf_mmap_info (the argument of the mmap hook) is in <perf/perf.h>. */

/*
 * Each encoder returns the record size, writing it to buf only when it fits in len (so a call
 * with len 0 asks for the size).  Strings are NUL-terminated, zero-padded to 8 bytes.
 */
size_t perf_sb_comm(void *buf, size_t len, const struct perf_sb_target *t, uint32_t pid,
		    uint32_t tid, const char *comm, bool exec);
/* mmap2: PERF_RECORD_MMAP2 with maj/min/ino/ino_generation/prot/flags, else PERF_RECORD_MMAP. */
size_t perf_sb_mmap(void *buf, size_t len, const struct perf_sb_target *t,
		    const struct perf_mmap_info *m, bool mmap2);
/* type: PERF_RECORD_FORK or PERF_RECORD_EXIT. */
size_t perf_sb_task(void *buf, size_t len, const struct perf_sb_target *t, uint32_t type,
		    uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);
/* PERF_RECORD_THROTTLE or UNTHROTTLE (unthrottle true). */
size_t perf_sb_throttle(void *buf, size_t len, const struct perf_sb_target *t, bool unthrottle,
			uint64_t time, uint64_t id, uint64_t stream_id);

/*
 * PERF_RECORD_SWITCH (task context: header only) or, cpu_wide, PERF_RECORD_SWITCH_CPU_WIDE with
 * the pid/tid of the task switched to (out) or from (in).  misc SWITCH_OUT on the way out,
 * | SWITCH_OUT_PREEMPT when the task was still runnable.
 */
size_t perf_sb_switch(void *buf, size_t len, const struct perf_sb_target *t, bool out, bool preempt,
		      bool cpu_wide, uint32_t next_prev_pid, uint32_t next_prev_tid);
/* PERF_RECORD_KSYMBOL: addr, len, ksym_type (PERF_RECORD_KSYMBOL_TYPE_*), flags, name. */
size_t perf_sb_ksymbol(void *buf, size_t len, const struct perf_sb_target *t, uint64_t addr,
		       uint32_t sym_len, uint16_t ksym_type, bool unregister, const char *name);
/* PERF_RECORD_BPF_EVENT: type (PERF_BPF_EVENT_PROG_LOAD/UNLOAD), flags, prog id, tag. */
size_t perf_sb_bpf_event(void *buf, size_t len, const struct perf_sb_target *t, uint16_t type,
			 uint16_t flags, uint32_t id, const uint8_t tag[8]);

/* ------------------------------------------------------------------------------------------ */
/* pmu.c                                                                                       */
/* ------------------------------------------------------------------------------------------ */

struct perf_event;

/* pmu->caps, Linux's PERF_PMU_CAP_* values */
#define PERF_PMU_CAP_NO_INTERRUPT 0x0001
#define PERF_PMU_CAP_NO_NMI 0x0002
#define PERF_PMU_CAP_AUX_OUTPUT 0x0080
#define PERF_PMU_CAP_EXTENDED_REGS 0x0008
#define PERF_PMU_CAP_NO_EXCLUDE 0x0040
#define PERF_PMU_CAP_EXTENDED_HW_TYPE 0x0100
/* ours: a software PMU (its groups always go on, like PERF_EV_CAP_SOFTWARE) */
#define PERF_PMU_CAP_SOFTWARE 0x10000

/* add/start/stop/del flags, as Linux's PERF_EF_* */
#define PERF_EF_START 0x01
#define PERF_EF_RELOAD 0x02
#define PERF_EF_UPDATE 0x04

/* hw.state, as Linux's PERF_HES_* */
#define PERF_HES_STOPPED 0x01
#define PERF_HES_UPTODATE 0x02

struct perf_pmu {
	const char *name; /* sysfs name under /sys/bus/event_source/devices */
	int type;	  /* set by perf_pmu_register */
	unsigned int caps;
	/* 0, or -ENOENT when the event is not this PMU's (the lookup tries the next). [proc] */
	int (*event_init)(struct perf_event *e);
	/* Put e on a counter of this CPU: 0 or -EAGAIN. [p] */
	int (*add)(struct perf_event *e, int flags);
	void (*del)(struct perf_event *e, int flags);	/* [p] */
	void (*start)(struct perf_event *e, int flags); /* [p] */
	void (*stop)(struct perf_event *e, int flags);	/* [p] */
	void (*read)(struct perf_event *e);	/* [p] fold the hardware count into e->count */
	int (*event_idx)(struct perf_event *e); /* user page index; NULL: 0 */
	/* May e go on this CPU's PMU at all?  NULL: yes (Linux's pmu->filter_match). [p] */
	bool (*filter_match)(struct perf_event *e);
	void *priv;
};

#define PERF_MAX_CPUS 64 /* per-CPU contexts and PMU state */
#define PERF_PMU_MAX_TYPES 16
/* Type Linux 6.1 gives the DT-probed armv8_pmuv3 under QEMU: after kprobe (6) and uprobe (7). */
#define PERF_TYPE_PMUV3 8
/* Linux registers kprobe then uprobe right after breakpoint: the first dynamic types */
#define PERF_TYPE_KPROBE 6
#define PERF_TYPE_UPROBE 7

/* Register pmu at type (>= 0) or the first free type >= PERF_TYPE_MAX (-1). -EBUSY, -ENOSPC. */
int perf_pmu_register(struct perf_pmu *pmu, int type);
void perf_pmu_unregister(struct perf_pmu *pmu);
struct perf_pmu *perf_pmu_find(uint32_t type);
/*
 * perf_init_event: HARDWARE/HW_CACHE with config[63:32] name a PMU type (extended type, config
 * masked to 32 bits, no fallback); without it they alias RAW.  A type without a PMU tries every
 * PMU in registration order: the first answer other than -ENOENT wins.  Then Linux's
 * post-init checks (extended regs, NO_EXCLUDE).  Sets e->pmu.  0 or -errno.
 */
int perf_pmu_init_event(struct perf_event *e);
/* Forget every registration (host tests). */
void perf_pmu_reset_table(void);

/* Counter maths. */
static inline uint64_t perf_counter_mask(unsigned int width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}
/* Events counted between prev and now on a width-bit counter that may have wrapped once. */
static inline uint64_t perf_counter_delta(uint64_t prev, uint64_t now, unsigned int width)
{
	return (now - prev) & perf_counter_mask(width);
}

/* The PMU-private hardware state of an event (Linux's struct hw_perf_event, the part we use). */
struct perf_hw {
	int idx;		/* [p] counter index, -1 when not on a counter */
	uint32_t config_base;	/* [i] PMEVTYPER/PMCCFILTR value (event + EL filter) */
	uint32_t flags;		/* [i] PERF_HW_* */
	int state;		/* [p] PERF_HES_* */
	uint64_t prev_count;	/* [p] last raw counter value folded into count */
	int64_t period_left;	/* [p] events until the next sample */
	uint64_t sample_period; /* [i] (freq mode adjusts it, under [p]) */
	uint64_t last_period;	/* [p] the period of the sample being taken */
	uint64_t bp_addr;	/* [i] breakpoint: the aligned address (bp.c) */
	struct list_node bp_node; /* breakpoint: in bp.c's reservations (its lock) */
	struct ksvc_uprobe *uprobe; /* [i] uprobe event: its probe (uprobe.c) */
	struct ksvc_kprobe *kprobe; /* [i] kprobe event: its probe (kprobe.c) */
};
#define PERF_HW_64BIT 0x1     /* config1:0 `long`: 64-bit count (chained or PMUv3p5) */
#define PERF_HW_USER_READ 0x2 /* config1:1 `rdpmc`: user space reads the counter */

/*
 * Fold a new raw counter value into *count and period_left (armpmu_event_update).  width:
 * 64 or 32 (counting width of the event).  Returns the delta.
 */
uint64_t perf_hw_update(struct perf_hw *hw, _Atomic uint64_t *count, uint64_t new_raw,
			unsigned int width);
/*
 * Next period (armpmu_event_set_period): returns true when a period elapsed (a sample is due)
 * and stores in *program the value to write to the counter: -left masked to width, left
 * capped at half the counter range so the IRQ has slack.
 */
bool perf_hw_set_period(struct perf_hw *hw, unsigned int width, uint64_t *program);
/*
 * Frequency mode (Linux's perf_adjust_period): count events happened in nsec; move
 * hw->sample_period 1/8 of the way toward the period that gives sample_freq samples per
 * second (at least 1).
 */
void perf_freq_adjust_period(struct perf_hw *hw, uint64_t sample_freq, uint64_t nsec,
			     uint64_t count);

/* ---- events and their scheduling context ---- */

enum perf_event_state {
	PERF_EVENT_STATE_DEAD = -4,
	PERF_EVENT_STATE_EXIT = -3,
	PERF_EVENT_STATE_ERROR = -2,
	PERF_EVENT_STATE_OFF = -1,
	PERF_EVENT_STATE_INACTIVE = 0,
	PERF_EVENT_STATE_ACTIVE = 1,
};

/*
 * A perf event: the sketch core.c completes (fds, rings, owners, children, wait queues).  The
 * fields below are what the building blocks use.
 */
struct perf_event {
	struct perf_event_attr attr; /* [i] */
	struct perf_pmu *pmu;	     /* [i] */
	int cpu;		     /* [i] -1: follows its task */
	bool attach_task;	     /* [i] a task event (pid given): Linux's PERF_ATTACH_TASK */
	int target_tid;		     /* [i] a task event's task (tid), 0 for a CPU event */
	struct cgroup *cgrp;	     /* [i] PERF_FLAG_PID_CGROUP's cgroup (a reference), or NULL */
	void (*destroy)(struct perf_event *e); /* [i] the PMU's undo of event_init, at free */
	uint64_t id;		     /* [i] stream id (PERF_EVENT_IOC_ID) */
	uint64_t primary_id;	     /* [i] id, or the parent's id for an inherited event */
	struct perf_event *group_leader; /* [c] itself for a leader */
	struct list_node group_entry;  /* [c] leader: in ctx pinned/flexible; sibling: in leader */
	struct list_node sibling_list; /* [c] leader: its siblings in order */
	uint32_t nr_siblings;	       /* [c] */
	int state;		       /* [c] enum perf_event_state */
	uint64_t tstamp;	       /* [c] when the times were last folded */
	uint64_t time_enabled;	       /* [c] ns enabled (state >= INACTIVE) */
	uint64_t time_running;	       /* [c] ns on the PMU (ACTIVE) */
	uint32_t rotate_index;	       /* [c] order among flexible groups */
	_Atomic uint64_t count;	       /* [a] events counted */
	_Atomic uint64_t lost_samples; /* [a] PERF_FORMAT_LOST */
	struct perf_hw hw;	       /* [p] */
	/* [l] output ring (own or SET_OUTPUT target), a reference; an inherited event has none
	 * and writes its parent's.  Set under e's child_lock (mmap.c), read under the owner's by
	 * the writers.  An own ring (core.own_ring) stays until perf_output_release, after the
	 * event left its context, so [c] holders (the user page) read it without child_lock. */
	struct perf_ring *ring;
	void *core;		       /* core.c's private part */
	/* [a] PERF_EVENT_IOC_SET_FILTER's filter of a tracing event, set once (tp.c); an
	 * inherited event uses its parent's */
	struct trace_filter *_Atomic tp_filter;
};

/* A scheduling context: the events of one task or one CPU on one PMU class. */
struct perf_ctx {
	struct spinlock lock;
	struct list_node pinned;   /* [c] pinned group leaders, in open order */
	struct list_node flexible; /* [c] flexible group leaders, in rotation order */
	bool rotate_necessary;	   /* [c] a flexible group could not go on */
	bool exclusive_on;	   /* [c] an exclusive group is ACTIVE */
	uint32_t nr_active;	   /* [c] groups ACTIVE */
};

void perf_ctx_init(struct perf_ctx *ctx);
/*
 * Before perf_pmu_init_event: e->group_leader = leader (or e), empty lists, state OFF when
 * attr.disabled else INACTIVE (the PMU's group validation reads it), hw.idx -1.  Does not link
 * e into the leader's siblings: perf_group_attach_locked does, once open commits.
 */
void perf_event_init_group(struct perf_event *e, struct perf_event *leader);
void perf_group_attach_locked(struct perf_event *e);
void perf_group_detach_locked(struct perf_event *e);
/* Add a leader to ctx: pinned or flexible list by attr.pinned. [c] */
void perf_ctx_add_group_locked(struct perf_ctx *ctx, struct perf_event *leader);
void perf_ctx_del_group_locked(struct perf_ctx *ctx, struct perf_event *leader);
/*
 * Fold now into enabled/running of e (perf_event_update_time).  now is the context's time (it
 * stops while a task context is switched out).  State changes fold automatically; an INACTIVE
 * event's times are folded lazily, so read() and the user page update call this first. [c]
 */
void perf_event_update_time_locked(struct perf_event *e, uint64_t now);
/*
 * ctx_sched_in: pinned groups, then flexible groups, in list order.  Groups failing
 * event_filter_match (an event bound to another CPU, or refused by pmu->filter_match) are
 * skipped without consequence.  A group goes on whole or
 * not at all (transaction); once a hardware group fails, no later hardware group goes on
 * (software-only groups still do); a pinned group that fails goes to ERROR; a flexible one
 * sets rotate_necessary.  Exclusive groups as Linux's group_can_go_on. [c][p]
 */
void perf_ctx_sched_in_locked(struct perf_ctx *ctx, uint64_t now);
/* ctx_sched_out: every ACTIVE group off (times folded at now). [c][p] */
void perf_ctx_sched_out_locked(struct perf_ctx *ctx, uint64_t now);
/* One group off the PMU (a no-op unless its leader is on): leader and siblings go INACTIVE.
 * Siblings are never on without their leader, so disabling a leader takes the group off. */
void perf_group_sched_out_locked(struct perf_ctx *ctx, struct perf_event *leader, uint64_t now);
/*
 * perf_rotate_context: when rotate_necessary, schedule the flexible groups out, move the first
 * flexible group to the tail, and schedule in again.  Returns true when it rotated. [c][p]
 */
bool perf_ctx_rotate_locked(struct perf_ctx *ctx, uint64_t now);
/* Read an ACTIVE event's count from its PMU (pmu->read), then its value. [c][p] */
uint64_t perf_event_read_count_locked(struct perf_event *e);

/* ------------------------------------------------------------------------------------------ */
/* pmuv3.c                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define PMUV3_MAX_COUNTERS 32 /* index 0 = PMCCNTR (Linux's ARMV8_IDX_CYCLE_COUNTER), 1.. = n-1 */
#define PMUV3_IDX_CYCLE 0

/*
 * [any, boot] Probe the PMU of the CPU we run on (ID_AA64DFR0_EL1.PMUVer, PMCR.N, PMCEID*),
 * reset it, and register it as PERF_TYPE_PMUV3 "armv8_pmuv3".  nr_cpus: per-CPU state.
 * -ENODEV without PMUv3.  Secondary CPUs call pmuv3_cpu_init.
 */
int pmuv3_probe(unsigned int nr_cpus);
/* [p] Reset the PMU of this CPU (counters off, overflow cleared, PMCR.LC/LP as Linux). */
void pmuv3_cpu_init(void);
/* [p] The PMU interrupt of this CPU (perf_init registers it with ksvc_pmu_irq_register), with
 * the interrupted registers (user_pt_regs order) and whether they are user mode: true when it
 * was ours. */
bool pmuv3_handle_irq(const uint64_t *regs, bool user);
/* The registered PMU (NULL before probe) and its facts. */
struct perf_pmu *pmuv3_pmu(void);
/* kernel.perf_user_access (default 0): rdpmc indexes are published only when set. */
extern bool pmuv3_user_access;
/* The kernel runs at EL2 (VHE): changes how exclude_hv/host/guest map to EL filters. */
extern bool pmuv3_kernel_in_hyp;
unsigned int pmuv3_num_counters(void); /* event counters + cycle counter */
bool pmuv3_has_long_counters(void);    /* PMUv3p5 */
/* Whether common event number ev (0..0x3f, 0x4000..0x403f) is implemented (PMCEID). */
bool pmuv3_event_implemented(uint32_t ev);
/* Free the per-CPU state and unregister (host tests). */
void pmuv3_remove(void);

/* ======================================================================================
 * perf core (core.c, ctx.c, sw.c): contexts, event lifetime, the syscall and fd operations.
 *
 * Locks: perf_attach_lock (task contexts come and go) and ctx->sched.lock (the event lists
 * and every [c] field); the order of every nesting is the block at the top of core.c.
 * A context's events change only on the CPU where the context is active (its counters are
 * that CPU's registers): perf_ctx_call runs the change there, by IPI when needed.
 * ====================================================================================== */

struct ksvc_task;
struct wait_queue;

struct perf_context {
	struct perf_ctx sched;	 /* the scheduling lists and their lock */
	struct ksvc_task *task;	 /* [a] NULL for a CPU context, and after the task exited */
	int cpu;		 /* [c] CPU context: its CPU; task: where active, else -1 */
	bool active;		 /* [c] scheduled in on cpu */
	bool dead;		 /* [a] the task exited: no new events */
	uint64_t time, tstamp;	 /* [c] context time (advances while active) and its base */
	/* [c] every event of the context (core.event_entry); changed only where the context is
	 * active, so its own task walks it with interrupts masked and no lock (fork) */
	struct list_node events;
	_Atomic int refs; /* [a] events + the task's slot */
};

/* What core.c keeps per event, beside struct perf_event (one allocation). */
struct perf_event_core {
	struct perf_context *ctx;	/* [i] after install */
	struct list_node event_entry;	/* [c] in ctx->events */
	struct perf_event *parent;	/* [i] the event this one was inherited from */
	struct list_node children;	/* [l] inherited children (parent's child_lock) */
	struct list_node child_entry;	/* [l] */
	struct spinlock child_lock;	/* the [l] fields, e->ring, and writing e's ring */
	uint64_t child_count, child_enabled, child_running; /* [l] folded from exited children */
	_Atomic int refs;		/* [a] fd, children, in-flight users */
	struct wait_queue *wq;		/* [i] poll: POLLHUP at exit, POLLIN with ring data */
	bool sw_clock;			/* [i] a clock (sw_events.h: PERF_SW_CLOCK), looked
					 * up once at event_init: the switch path asks often */
	uint64_t sw_prev;		/* [p] clock events: last reading */
	bool exited;			/* [c] its task exited: reads give the final count */
	/* sampling: [p] on the CPU the event runs on, interrupts masked */
	uint32_t interrupts;		/* overflows since the last tick */
	bool throttled;			/* stopped by the throttle until the next tick */
	uint64_t freq_time_stamp;	/* freq mode: time of the last overflow */
	uint64_t freq_count_stamp;	/* freq mode: count at the last tick */
	struct ksvc_timer *sw_timer;	/* [i] cpu-clock/task-clock sampling */
	uint64_t sw_deadline;		/* [p] the timer's next expiry (a fixed schedule) */
	bool own_ring;			/* [l] e->ring comes from e's own mmap */
	struct perf_event *output;	/* [l] SET_OUTPUT target (a reference), woken with e */
	/* [a] perf_event_ring_wake calls between reading output and waking it; SET_OUTPUT
	 * waits for 0 before it drops its reference on the old target */
	_Atomic int output_wakers;
	struct spinlock bpf_lock;	/* attach and detach of prog */
	struct bpf_prog *prog;		/* [bpf_lock] PERF_EVENT program (a reference) or NULL;
					 * the overflow reads it locklessly (bpf_attach.c) */
	uint64_t bpf_cookie;		/* [bpf_lock] bpf_get_attach_cookie() */
	/* overflow notification (Linux's pending_irq): set at the overflow, acted on by
	 * pending_work (overflow.c) once no lock is held */
	struct ksvc_fasync *fasync;	/* [l] O_ASYNC on the event's file, or NULL */
	_Atomic int event_limit;	/* REFRESH: overflows left before the event stops; 0 none */
	_Atomic int pending_kill;	/* POLL_IN / POLL_HUP for the O_ASYNC owner, or 0 */
	_Atomic bool pending_disable;	/* the REFRESH limit ran out: disable the event */
	_Atomic bool pending_sigtrap;	/* attr.sigtrap: SIGTRAP to the task */
	_Atomic bool pending_wake;	/* a tracepoint sample's reader wakeup */
	uint64_t pending_addr;		/* [p] the sigtrap's si_addr */
	struct ksvc_irq_work pending_work;
	/* the task that opened it (Linux's event->owner), for prctl PR_TASK_PERF_EVENTS_* */
	struct ksvc_task *owner;	/* [perf_owner_lock] NULL once the fd closed or it exited */
	struct list_node owner_entry;	/* [perf_owner_lock] in perf_owned */
};

struct bpf_prog;
/* core.c: thread t exits: the events it opened have no owner any more. */
void perf_owner_exit(struct ksvc_task *t);
/* overflow.c: after an overflow's sample (Linux's __perf_event_overflow): the REFRESH limit, the
 * sigtrap and the O_ASYNC signal.  [any] true: the limit ran out, stop the event's counter. */
bool perf_overflow_notify(struct perf_event *e, uint64_t addr);
/* overflow.c: pending_work's function (perf_event_alloc sets it) */
void perf_pending_work(struct ksvc_irq_work *w);
/* core.c: disable e where its context runs now, from pending_work (IRQ context). */
void perf_event_disable_inatomic(struct perf_event *e);
/* bpf_attach.c: programs on events (Linux's perf_event_set_bpf_handler and friends). */
int perf_event_set_bpf(struct perf_event *e, struct bpf_prog *prog, uint64_t cookie);
void perf_event_clear_bpf(struct perf_event *e, struct bpf_prog *prog);
void perf_event_inherit_bpf(struct perf_event *child, struct perf_event *parent);
/* [any] Run e's program for an overflow (the caller saw core.prog set): false drops the
 * sample.  With interrupts masked, perf_bpf_filter_masked does the same inline. */
bool perf_bpf_filter(struct perf_event *e, uint64_t period, const uint64_t *regs, uint64_t addr);
/* [proc, or IRQs masked for a kprobe] A hit of a probe (a uprobe's or a kprobe's; its
 * return when ret) with these registers: run the BPF_PROG_TYPE_KPROBE programs of the events
 * it concerns (ctx: a struct pt_regs whose user_pt_regs they fill).  The events whose program
 * dropped the hit go into dropped (at most max): their number; -1 when the whole hit must be
 * dropped (this CPU is inside the program table already). */
int perf_probe_bpf_run(const void *probe, bool ret, const uint64_t *regs,
		       const struct perf_event **dropped, int max);
void perf_bpf_init(void);
/* core.c: the perf event behind fd with a reference, or -EBADF. */
int perf_event_get_fd(int fd, struct perf_event **out);
/* The perf event at fd in thread tid's table, with a reference: 0, -ENOENT (no such thread),
 * -EBADF (fd not open), -EINVAL (not a perf event). */
int perf_event_get_task_fd(int tid, int fd, struct perf_event **out);
/* sample.c: a PERF_RECORD_SAMPLE carrying raw data (bpf_perf_event_output): 0, -ENOSPC. */
long perf_output_raw(struct perf_event *e, const uint64_t *regs, bool user, const void *raw,
		     uint32_t size);
/* sample.c: kernel or user frames of regs for bpf_get_stackid/get_stack. */
long perf_bpf_callchain(const uint64_t *regs, bool regs_user, bool user, uint64_t *ips,
			uint32_t max);

struct perf_kevent {
	struct perf_event ev;
	struct perf_event_core core;
};

static inline struct perf_event_core *perf_core(struct perf_event *e)
{
	return &((struct perf_kevent *)e)->core;
}

/* bpf_attach.c: the per-CPU recursion guard of programs (interrupts masked): the event whose
 * overflow program this CPU runs (read by a detach, which waits for the run to end); the count
 * of programs running (nested hits counted) is the kernel's bpf_prog_active
 * (ksvc_bpf_prog_active), which an overflow program's run counts too, as Linux's
 * bpf_overflow_handler. */
#define PERF_BPF_CPUS 64
extern const struct perf_event *_Atomic perf_bpf_running[PERF_BPF_CPUS];
/* each CPU's ksvc_bpf_prog_active, kept at its first overflow program (the per-CPU area is
 * laid out at boot, before any program runs): a load instead of a seam call per sample */
extern int *perf_bpf_active[PERF_BPF_CPUS];

/* perf_bpf_filter with interrupts masked; inline in the overflow interrupt, where it runs on
 * every sample of an event with a program. */
static inline __attribute__((always_inline)) bool
perf_bpf_filter_masked(struct perf_event *e, uint64_t period, const uint64_t *regs,
		       uint64_t addr)
{
	struct perf_event_core *c = perf_core(e);
	unsigned int cpu = ksvc_cpu_id() % PERF_BPF_CPUS;
	const struct perf_event *_Atomic *running = &perf_bpf_running[cpu];
	int *active = perf_bpf_active[cpu];
	struct bpf_prog *prog;
	uint64_t ret = 1; /* detached meanwhile: the sample goes out as without a program */

	if (__builtin_expect(!active, 0))
		active = perf_bpf_active[cpu] = ksvc_bpf_prog_active();
	if (atomic_load_explicit(running, memory_order_relaxed) || *active)
		return false; /* a program already runs on this CPU: dropped */
	++*active;
	atomic_store_explicit(running, e, memory_order_relaxed);
	/* pairs with the fence in bpf_wait_runs: a detach sees this run, or it is seen */
	atomic_thread_fence(memory_order_seq_cst);
	/* Acquire pairs with perf_event_set_bpf's release: the cookie written before */
	prog = __atomic_load_n(&c->prog, __ATOMIC_ACQUIRE);
	if (prog)
		ret = bpf_prog_run_perf(prog, regs, period, addr, e, c->bpf_cookie);
	/* Release: the run is over before a detach may free the program */
	atomic_store_explicit(running, NULL, memory_order_release);
	--*active;
	return ret != 0;
}

/* In an event-level *_locked function: the event's context lock is held (debug build).  A bare
 * event of a host test, with no core or no context, has no lock to check. */
static inline void perf_event_assert_locked(const struct perf_event *e)
{
	const struct perf_event_core *c = e->core;

	if (KDEBUG && c && c->ctx)
		spin_assert_held(&c->ctx->sched.lock);
}

static inline struct perf_event *perf_event_of(struct perf_event_core *c)
{
	return &((struct perf_kevent *)((char *)c - offsetof(struct perf_kevent, core)))->ev;
}

/* A task's perf slot after its exit hook ran: no context, none may be created. */
#define PERF_TASK_DEAD ((void *)1)

extern struct spinlock perf_attach_lock;
extern struct perf_context *perf_cpu_ctx[];
extern struct perf_limits perf_limits;

/* Run fn(ctx, arg) with ctx locked on the CPU where ctx is active (or here if inactive). */
/* [any, ctx lock held] Can ctx's events be worked on from this CPU (activating a context whose
 * task runs here)?  No: *elsewhere is the CPU its task runs on. */
bool perf_ctx_here_locked(struct perf_context *ctx, int *elsewhere);
void perf_ctx_call(struct perf_context *ctx, void (*fn)(struct perf_context *ctx, void *arg),
		   void *arg);
void perf_ctx_update_time_locked(struct perf_context *ctx, uint64_t now_ns);
void perf_ctx_put(struct perf_context *ctx);
/* The task's context, created when create is set: a reference, or NULL. perf_attach_lock. */
struct perf_context *perf_task_ctx_get_locked(struct ksvc_task *t, bool create);
/* Put an event (leader or sibling, attached to its group) into ctx and schedule it in. */
void perf_install_event(struct perf_context *ctx, struct perf_event *e);
void perf_remove_event(struct perf_event *e);
struct perf_event *perf_event_alloc(const struct perf_event_attr *attr, int cpu);
void perf_event_put(struct perf_event *e);
/* Totals of an event with its inherited children. */
void perf_event_totals(struct perf_event *e, uint64_t *count, uint64_t *enabled,
		       uint64_t *running);

/* mmap.c: an event's ring as user space sees it. */
int perf_mmap(void *priv, struct ksvc_mmap *m);
uint64_t perf_mmap_phys(void *priv, void *map_priv, uint64_t pgoff);
void perf_mmap_open(void *priv, void *map_priv);
void perf_mmap_close(void *priv, void *map_priv);
void perf_output_release(struct perf_event *e);
/* PERF_EVENT_IOC_SET_OUTPUT / PERF_FLAG_FD_OUTPUT: share out's ring (NULL: stop sharing). */
int perf_set_output(struct perf_event *e, struct perf_event *out);
bool perf_event_has_ring(struct perf_event *e);
/* The ring e writes into (its parent's when inherited), with a reference, or NULL. */
struct perf_ring *perf_event_ring_get(struct perf_event *e);
/* Wake the readers of e's ring: e's (its parent's) and, when redirected, its output event's. */
void perf_event_ring_wake(struct perf_event *e);
/* Refresh e's user page (index, offset, times) after it went on or off a counter. [c] */
void perf_event_update_userpage_locked(struct perf_event *e);
unsigned int perf_output_poll(struct perf_event *e);

/* sample.c: one PERF_RECORD_SAMPLE. */
/* The sample_id fields of a record e writes now (current task, time, CPU, e's ids). */
void perf_event_sample_id(struct perf_event *e, struct perf_sample_id *sid);
/*
 * [any] Build and write e's sample for an overflow of period with the interrupted registers
 * (user: user mode), addr (PERF_SAMPLE_ADDR) and raw data (PERF_SAMPLE_RAW, NULL: empty).
 * defer_wake: the readers' wakeup goes through pending_work (a tracepoint may fire inside
 * the scheduler's wakeup path).  0, or -ENOSPC when e has no ring or the ring is full.
 */
int perf_sample_output(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user,
		       uint64_t addr, const void *raw, uint32_t raw_size, bool defer_wake);

/* overflow.c: an elapsed period, throttling and frequency mode. */
/* [IRQ] The overflow path: throttle accounting, freq-mode period, the BPF filter, the sample,
 * the notifications.  true: the PMU must stop the event (throttled until the next tick, or
 * its REFRESH limit ran out). */
bool perf_event_overflow(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user);
/* [proc, IRQs masked] One software overflow in process context.  throttle false for the first
 * overflow of one counted occurrence, which Linux never throttles (perf_swevent_overflow),
 * true for more. */
void perf_sw_sample(struct perf_event *e, uint64_t addr, bool throttle);
/* ... with the registers of the hit (user: of user code), a breakpoint's (bp.c). */
void perf_sw_sample_regs(struct perf_event *e, uint64_t addr, const uint64_t *regs, bool user,
			 bool throttle);
/* [IRQ, tick] Unthrottle and re-tune the freq-mode periods of a context's active events. */
void perf_adjust_freq_unthr_locked(struct perf_context *ctx);

/* sideband.c: emission (the encoders are declared above). */
/* [proc] FORK or EXIT records for the current task's and CPU's events. */
void perf_task_sb_task(bool fork, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
/* [IRQ or tick] A THROTTLE (unthrottle: UNTHROTTLE) record into e's ring. */
void perf_event_log_throttle(struct perf_event *e, bool unthrottle);

/* bp.c: the hw_breakpoint PMU (perf/perf.h has its arch entry points). */
struct perf_pmu *perf_bp_pmu(void);
/* [proc] Register it at PERF_TYPE_BREAKPOINT, with the register counts of ID_AA64DFR0. */
void perf_bp_init(void);
/* [p] Turn off every breakpoint and watchpoint register of this CPU. */
void perf_bp_cpu_init(void);
/*
 * [IRQs masked] The trap code's handler (registered by perf_bp_init): a debug exception on
 * this CPU, a breakpoint at addr (watch false) or a watchpoint hit at data address addr by a
 * load or a store (write), with the registers at the hit (regs, of user code: user; NULL: the
 * task's user registers).  Counts (and samples, unless irqs_off: kernel code with interrupts
 * masked, which may hold the ring buffer's lock) the events it matches; true when it matched
 * any.  The trap code then steps over the instruction with perf_bp_suspend(kernel, true) and
 * calls perf_bp_suspend(kernel, false) once it stepped.
 */
bool perf_bp_hit(bool watch, uint64_t addr, bool write, const uint64_t *regs, bool user,
		 bool irqs_off);
/* [IRQs masked] Suspend (on) or resume this CPU's kernel (kernel) or user breakpoints and
 * watchpoints.  While the kernel ones are suspended the trap code may borrow execute slots
 * (value and control): their resume writes every execute slot back. */
void perf_bp_suspend(bool kernel, bool on);
/*
 * arm64's arch_build_bp_info + hw_breakpoint_arch_parse: the register value (*addr, aligned)
 * and control (*ctrl, not enabled: EL1 for a kernel address, else EL0) for attr; task: a
 * per-task event.  0, or -EINVAL as Linux (a per-task or exclude_kernel kernel breakpoint).
 */
int perf_bp_parse(const struct perf_event_attr *a, bool task, uint64_t *addr, uint32_t *ctrl);
/*
 * [proc] PERF_EVENT_IOC_MODIFY_ATTRIBUTES on a breakpoint (modify_user_hw_breakpoint_check):
 * only bp_addr, bp_type, bp_len and disabled may differ from e's attr (EINVAL otherwise, or
 * what the new breakpoint's parse gives; ENOSPC when a new kind finds no slot).  The caller
 * has taken the event off and puts it back on after.
 */
int perf_bp_modify(struct perf_event *e, const struct perf_event_attr *na);

/* sw.c: the software PMU. */
struct perf_pmu *perf_sw_pmu(void);
/* tp.c: the tracepoint PMU.  A tracepoint hit: its id, record and the registers the hook
 * gives (user registers for syscall events). */
struct perf_tp_hit {
	uint64_t id;
	const void *rec;
	uint32_t size;
	const uint64_t *regs;
	bool user;
};
struct perf_pmu *perf_tp_pmu(void);
/* uprobe.c: the uprobe PMU, registered at PERF_TYPE_UPROBE. */
struct perf_pmu *perf_uprobe_pmu(void);
/* kprobe.c: the kprobe PMU, registered at PERF_TYPE_KPROBE. */
struct perf_pmu *perf_kprobe_pmu(void);
/* uprobe.c: a probe (probe: hw.uprobe or hw.kprobe of pmu's events) was hit on the current
 * task and CPU: programs, counts, samples (RAW: the probe trace record). */
void perf_probe_event(const struct perf_pmu *pmu, const void *probe, bool ret,
		      const uint64_t *regs, bool user, uint64_t func);
/* uprobe.c: the pmu callbacks of the probe PMUs (software-like: hits count themselves). */
int perf_probe_add(struct perf_event *e, int flags);
void perf_probe_start(struct perf_event *e, int flags);
void perf_probe_stop(struct perf_event *e, int flags);
void perf_probe_read(struct perf_event *e);
/* ctx.c: does this CPU hold the current task's or its own context lock (a probe hit inside
 * perf itself, which must be dropped)? */
bool perf_ctx_held_here(void);
/* ctx.c: fn on the running task's context and this CPU's, each under its lock, IRQs masked. */
void perf_each_current_ctx(void (*fn)(struct perf_context *ctx, const void *arg), const void *arg);
/* bpf_attach.c: run the BPF_PROG_TYPE_TRACEPOINT programs attached to hit's tracepoint:
 * false when one returned 0 (the hit is dropped).  [any] */
bool perf_tp_bpf_run(const struct perf_tp_hit *hit);
/* bpf_attach.c: the tracepoint event is going away: take its program off its tracepoint. */
void perf_tp_bpf_release(struct perf_event *e);
void perf_tp_count_locked(struct perf_context *ctx, const struct perf_tp_hit *hit);
/* tp.c: PERF_EVENT_IOC_SET_FILTER with the user's string at uarg. [sleep] */
int perf_tp_set_filter(struct perf_event *e, const void *uarg);
/* [any] Does the hit pass the filter of e (or of the event e was inherited from)? */
bool perf_tp_filter_ok(struct perf_event *e, const struct perf_tp_hit *hit);
/* [c] One hit of an active event with a tracepoint-like record: count, sample each elapsed
 * period (uprobe.c uses it too). */
void perf_tp_count_one(struct perf_event *e, const struct perf_tp_hit *hit);
/* overflow.c: a tracepoint event's period elapsed: a sample with the record as its raw data. */
void perf_tp_sample(struct perf_event *e, const struct perf_tp_hit *hit, bool throttle);
/* in_kernel: the occurrence happened in kernel mode (a switch, a migration), which events
 * with exclude_kernel do not count (Linux's perf_exclude_event on the scheduler's regs). */
void perf_sw_count_locked(struct perf_context *ctx, uint32_t config, uint64_t n, uint64_t addr,
			  bool in_kernel);
