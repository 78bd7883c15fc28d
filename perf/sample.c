/*
 * sample.c - building and writing one PERF_RECORD_SAMPLE: the fields sample_type asks for
 * (ids, IP, period, READ, frame-pointer CALLCHAIN, RAW, REGS_USER, STACK_USER), sized as
 * Linux's perf_prepare_sample, then reserved in the event's ring, encoded (record.c) and
 * published (ring.c) under the ring owner's child_lock; and the frame walks bpf's
 * get_stackid/get_stack share.
 *
 * Called from the overflow path (overflow.c) with the overflow's registers, in any context
 * with interrupts masked or not: no allocation, no sleep; the readers' wakeup goes out here
 * or, for a tracepoint, from the event's pending_work.  Does not: decide whether to sample
 * (throttling, periods, the BPF filter: overflow.c), branch stacks, weights, data sources,
 * physical addresses (their fields read as zero, as Linux on a PMU without them).
 */
#include <linux/perf_event.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "perf_internal.h"

void perf_event_sample_id(struct perf_event *e, struct perf_sample_id *sid)
{
	sid->pid = (uint32_t)ksvc_current_tgid();
	sid->tid = (uint32_t)ksvc_current_tid();
	sid->time = ksvc_clock_ns();
	sid->id = e->primary_id;
	sid->stream_id = e->id;
	sid->cpu = ksvc_cpu_id();
}

/* Frame-pointer walk: {fp, lr} records, stopping at a bad or hostile frame (the seam's
 * unwinder, one call per chain). */
static unsigned int walk_frames(uint64_t *out, unsigned int room, uint64_t fp, bool user)
{
	return ksvc_walk_frames_nofault(out, room, fp, user);
}

static unsigned int build_callchain(struct perf_event *e, const uint64_t *regs, bool user,
				    uint64_t *chain, unsigned int room)
{
	unsigned int n = 0, max = e->attr.sample_max_stack ? e->attr.sample_max_stack : 127;
	uint64_t uregs[PERF_REGS_NR];

	if (max + 4 < room)
		room = max + 4;
	if (!user && !e->attr.exclude_callchain_kernel) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		chain[n++] = regs[PERF_REG_ARM64_PC];
		n += walk_frames(chain + n, room - n - 2, regs[PERF_REGS_FP], false);
	}
	if (!e->attr.exclude_callchain_user && n + 2 < room) {
		if (!user) {
			ksvc_user_regs(uregs);
			regs = uregs;
			if (!regs[PERF_REG_ARM64_PC])
				return n; /* a kernel thread */
		}
		chain[n++] = PERF_CONTEXT_USER;
		chain[n++] = regs[PERF_REG_ARM64_PC];
		n += walk_frames(chain + n, room - n, regs[PERF_REGS_FP], true);
	}
	return n;
}

/* sample_type bits whose perf_sample_data fields perf_sample_output fills itself */
#define SAMPLE_FILLED                                                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |             \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |              \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |          \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CGROUP)

/* defer_wake: wake the readers from pending_work instead of here (a tracepoint may fire
 * inside the scheduler's wakeup path, under the very locks a wakeup takes). */
int perf_sample_output(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user,
			 uint64_t addr, const void *raw, uint32_t raw_size, bool defer_wake)
{
	uint64_t st = e->attr.sample_type;
	struct perf_sample_data d;
	uint64_t uregs[PERF_REGS_NR], chain[160];
	struct perf_ring_handle h;
	struct perf_ring_writer w;
	struct perf_read_entry rent;
	struct perf_read_values rv;
	/* as event_ring_get, but the ring is used under the lock instead of with a reference: the
	 * owner's pointer keeps it alive until perf_output_release or SET_OUTPUT, which take it */
	struct perf_event *owner = perf_core(e)->parent ? perf_core(e)->parent : e;
	struct perf_ring *r;
	unsigned long f;
	bool wake = false;
	int err = 0;

	if (!READ_ONCE(owner->ring))
		return -ENOSPC; /* not mapped (a racing mmap only makes this sample the last lost) */
	/* the fields we have no data for read as zero; the rest are all set below */
	if (st & ~SAMPLE_FILLED)
		memset(&d, 0, sizeof(d));
	perf_event_sample_id(e, &d.sid);
	d.ip = regs[PERF_REG_ARM64_PC];
	d.period = period;
	d.addr = addr;
	d.raw = raw;
	d.raw_size = raw_size;
	d.read = NULL;
	if (st & PERF_SAMPLE_READ) {
		/* this event's own values (the group form reads as one entry: no siblings here) */
		rent.value = atomic_load(&e->count);
		rent.id = e->primary_id;
		rent.lost = atomic_load(&e->lost_samples);
		rv.time_enabled = e->time_enabled;
		rv.time_running = e->time_running;
		rv.nr = 1;
		rv.ent = &rent;
		d.read = &rv;
	}
	if (st & PERF_SAMPLE_CGROUP)
		d.cgroup = ksvc_cgroup_current_perf_id(); /* perf_prepare_sample: its perf_event cgroup */
	if (st & PERF_SAMPLE_CALLCHAIN) {
		d.callchain = chain;
		d.callchain_nr = build_callchain(e, regs, user, chain, 160);
	}
	if (st & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) {
		/* perf_sample_regs_user: the user state (a kernel thread has none) */
		if (user) {
			d.regs_user = regs;
		} else {
			ksvc_user_regs(uregs);
			d.regs_user = uregs;
		}
		d.regs_user_abi = user || uregs[PERF_REG_ARM64_PC] || uregs[PERF_REG_ARM64_SP] ? PERF_SAMPLE_REGS_ABI_64
								 : PERF_SAMPLE_REGS_ABI_NONE;
	}
	d.stack_user_size = 0; /* d is not cleared when every field is one we fill */
	size_t size = perf_sample_size(&e->attr, &d);

	if (st & PERF_SAMPLE_STACK_USER) {
		/* last, as perf_prepare_sample: the dump takes what the u16 size leaves; the
		 * fields before it count (Linux's header->size at that point, without the 8-byte
		 * size field that perf_sample_size counted already) */
		size_t before = size - 8;

		d.stack_user_sp = d.regs_user[PERF_REG_ARM64_SP];
		d.stack_user_size = before > 0xffff ? 0
			: perf_sample_ustack_size((uint16_t)e->attr.sample_stack_user, (uint16_t)before,
						  d.regs_user_abi != PERF_SAMPLE_REGS_ABI_NONE,
						  d.stack_user_sp, PERF_USER_TASK_SIZE);
		size = perf_sample_size(&e->attr, &d);
	}
	w.sample_type = st;
	w.sample_id_all = e->attr.sample_id_all;
	w.sid = d.sid;

	f = spin_lock_irqsave(&perf_core(owner)->child_lock);
	r = owner->ring;
	if (r && perf_ring_output_begin(r, &h, size, &w) == 0) {
		perf_sample_write(&h.out, &e->attr, &d, perf_sample_misc(user, false), size);
		wake = perf_ring_output_end(&h, e->attr.watermark ? 0 : e->attr.wakeup_events);
	} else {
		if (r)
			atomic_fetch_add(&e->lost_samples, 1);
		err = -ENOSPC;
	}
	spin_unlock_irqrestore(&perf_core(owner)->child_lock, f);
	if (wake && defer_wake) {
		atomic_store(&perf_core(e)->pending_wake, true);
		ksvc_irq_work_queue(&perf_core(e)->pending_work);
	} else if (wake) {
		perf_event_ring_wake(e);
	}
	return err;
}

long perf_output_raw(struct perf_event *e, const uint64_t *regs, bool user, const void *raw,
		     uint32_t size)
{
	return perf_sample_output(e, 1, regs, user, 0, raw, size, false);
}

long perf_bpf_callchain(const uint64_t *regs, bool regs_user, bool user, uint64_t *ips,
			uint32_t max)
{
	uint64_t uregs[PERF_REGS_NR];

	if (!max)
		return 0;
	if (!user) {
		if (regs_user)
			return 0; /* no kernel frames under a user-mode sample */
		ips[0] = regs[PERF_REG_ARM64_PC];
		return 1 + walk_frames(ips + 1, max - 1, regs[PERF_REGS_FP], false);
	}
	if (!regs_user) {
		ksvc_user_regs(uregs);
		regs = uregs;
		if (!regs[PERF_REG_ARM64_PC])
			return 0; /* a kernel thread */
	}
	ips[0] = regs[PERF_REG_ARM64_PC];
	return 1 + walk_frames(ips + 1, max - 1, regs[PERF_REGS_FP], true);
}
