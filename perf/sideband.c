/*
 * sideband.c - encoders for the side-band records perf report needs besides samples:
 * PERF_RECORD_COMM, PERF_RECORD_MMAP / MMAP2, PERF_RECORD_FORK / EXIT and
 * PERF_RECORD_THROTTLE / UNTHROTTLE, each with the sample_id_all trailer when the event asks.
 *
 * ABI: Linux 6.1 kernel/events/core.c perf_event_comm_output, perf_event_mmap_output,
 * perf_event_task_output, perf_log_throttle; layouts in include/uapi/linux/perf_event.h.
 *   COMM     misc 0, | COMM_EXEC when it comes from exec; comm NUL-padded to 8
 *   MMAP2    misc USER (KERNEL for kernel maps), | MMAP_DATA for non-exec maps;
 *            pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename
 *   FORK/EXIT misc 0; pid, ppid, tid, ptid, time
 *   THROTTLE  misc 0; time, id (primary id), stream_id
 *   SWITCH   misc SWITCH_OUT(|_PREEMPT) or 0; SWITCH_CPU_WIDE adds next_prev_pid/tid
 *   KSYMBOL  misc 0; addr, len, ksym_type, flags, name NUL-padded to 8
 *   BPF_EVENT misc 0; type, flags, id, tag[8]
 * The trailer describes the task the record is emitted in (the parent for FORK): the caller
 * fills perf_sb_target.sid.
 *
 * Emission (the second half): which events hear of a task's COMM, MMAP2, FORK or EXIT, as
 * Linux's perf_iterate_sb: those of the current task's context and of this CPU's that are not
 * off, bound to this CPU or to none, and ask for the kind (attr.comm, mmap/mmap2/mmap_data,
 * task); each gets the record in its ring (perf_ring_write) and its readers a wakeup.  THROTTLE
 * records go to the throttled event only (overflow.c decides when).
 */
#include <kern/compiler.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <perf/perf.h>
#include "perf_internal.h"

#define TASK_COMM_LEN 16
#define KSYM_NAME_LEN 512
#define PERF_SB_PATH_MAX 4096 /* PATH_MAX: longer names are cut as Linux's buffer does */

static size_t padded_strlen(const char *s, size_t max)
{
	/* the NUL counts; the rest of the last u64 is zero */
	return ALIGN_UP(strnlen(s, max - 1) + 1, 8);
}

static void put_padded_str(struct perf_out *o, const char *s, size_t padded)
{
	size_t n = strnlen(s, padded - 1);

	perf_out_put(o, s, n);
	perf_out_zero(o, padded - n);
}

static void put_header(struct perf_out *o, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)size};

	perf_out_put(o, &h, sizeof(h));
}

size_t perf_sb_comm(void *buf, size_t len, const struct perf_sb_target *t, uint32_t pid,
		    uint32_t tid, const char *comm, bool exec)
{
	size_t name = padded_strlen(comm, TASK_COMM_LEN);
	size_t size = 8 + 8 + name + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	struct perf_out o;

	if (size > len)
		return size;
	perf_out_init(&o, buf, size);
	put_header(&o, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, size);
	perf_out_u32(&o, pid);
	perf_out_u32(&o, tid);
	put_padded_str(&o, comm, name);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_mmap(void *buf, size_t len, const struct perf_sb_target *t,
		    const struct perf_mmap_info *m, bool mmap2)
{
	size_t name = padded_strlen(m->filename, PERF_SB_PATH_MAX);
	size_t body = 8 + 24 + (mmap2 ? 32 : 0);
	size_t size = 8 + body + name + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	uint16_t misc = m->user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	struct perf_out o;

	if (size > PERF_RECORD_MAX_SIZE)
		return 0; /* cannot happen with PATH_MAX names; callers treat 0 as "skip" */
	if (size > len)
		return size;
	if (!m->exec)
		misc |= PERF_RECORD_MISC_MMAP_DATA;
	perf_out_init(&o, buf, size);
	put_header(&o, mmap2 ? PERF_RECORD_MMAP2 : PERF_RECORD_MMAP, misc, size);
	perf_out_u32(&o, m->pid);
	perf_out_u32(&o, m->tid);
	perf_out_u64(&o, m->addr);
	perf_out_u64(&o, m->len);
	perf_out_u64(&o, m->pgoff);
	if (mmap2) {
		perf_out_u32(&o, m->maj);
		perf_out_u32(&o, m->min);
		perf_out_u64(&o, m->ino);
		perf_out_u64(&o, m->ino_generation);
		perf_out_u32(&o, m->prot);
		perf_out_u32(&o, m->flags);
	}
	put_padded_str(&o, m->filename, name);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_task(void *buf, size_t len, const struct perf_sb_target *t, uint32_t type,
		    uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	size_t size = 8 + 24 + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	struct perf_out o;

	if (size > len)
		return size;
	perf_out_init(&o, buf, size);
	put_header(&o, type, 0, size);
	perf_out_u32(&o, pid);
	perf_out_u32(&o, ppid);
	perf_out_u32(&o, tid);
	perf_out_u32(&o, ptid);
	perf_out_u64(&o, time);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_throttle(void *buf, size_t len, const struct perf_sb_target *t, bool unthrottle,
			uint64_t time, uint64_t id, uint64_t stream_id)
{
	size_t size = 8 + 24 + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	struct perf_out o;

	if (size > len)
		return size;
	perf_out_init(&o, buf, size);
	put_header(&o, unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0, size);
	perf_out_u64(&o, time);
	perf_out_u64(&o, id);
	perf_out_u64(&o, stream_id);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_switch(void *buf, size_t len, const struct perf_sb_target *t, bool out, bool preempt,
		      bool cpu_wide, uint32_t next_prev_pid, uint32_t next_prev_tid)
{
	size_t size =
	    8 + (cpu_wide ? 8 : 0) + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	uint16_t misc = 0;
	struct perf_out o;

	if (size > len)
		return size;
	if (out)
		misc = PERF_RECORD_MISC_SWITCH_OUT |
		       (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	perf_out_init(&o, buf, size);
	put_header(&o, cpu_wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH, misc, size);
	if (cpu_wide) {
		perf_out_u32(&o, next_prev_pid);
		perf_out_u32(&o, next_prev_tid);
	}
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_ksymbol(void *buf, size_t len, const struct perf_sb_target *t, uint64_t addr,
		       uint32_t sym_len, uint16_t ksym_type, bool unregister, const char *name)
{
	size_t name_len = padded_strlen(name, KSYM_NAME_LEN);
	size_t size = 24 + name_len + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	struct perf_out o;

	if (size > len)
		return size;
	perf_out_init(&o, buf, size);
	put_header(&o, PERF_RECORD_KSYMBOL, 0, size);
	perf_out_u64(&o, addr);
	perf_out_u32(&o, sym_len);
	perf_out_put(&o, &ksym_type, sizeof(ksym_type));
	uint16_t flags = unregister ? PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER : 0;

	perf_out_put(&o, &flags, sizeof(flags));
	put_padded_str(&o, name, name_len);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

size_t perf_sb_bpf_event(void *buf, size_t len, const struct perf_sb_target *t, uint16_t type,
			 uint16_t flags, uint32_t id, const uint8_t tag[8])
{
	size_t size = 24 + perf_id_trailer_size(t->sample_type, t->sample_id_all);
	struct perf_out o;

	if (size > len)
		return size;
	perf_out_init(&o, buf, size);
	put_header(&o, PERF_RECORD_BPF_EVENT, 0, size);
	perf_out_put(&o, &type, sizeof(type));
	perf_out_put(&o, &flags, sizeof(flags));
	perf_out_u32(&o, id);
	perf_out_put(&o, tag, 8);
	perf_id_trailer_write(&o, t->sample_type, t->sample_id_all, &t->sid);
	return size;
}

/* ---- emission: who gets a record, and writing it ---- */

enum sb_kind { SB_COMM, SB_MMAP, SB_TASK };

struct sb_req {
	enum sb_kind kind;
	const char *comm;
	bool exec;
	const struct perf_mmap_info *mm;
	uint32_t task_type, pid, ppid, tid, ptid;
};

static bool wants(const struct perf_event *e, const struct sb_req *q)
{
	if (e->state < PERF_EVENT_STATE_INACTIVE)
		return false;
	switch (q->kind) {
	case SB_COMM:
		return e->attr.comm;
	case SB_MMAP:
		/* perf_event_mmap_match: exec maps for mmap/mmap2, the others for mmap_data */
		return q->mm->exec ? e->attr.mmap || e->attr.mmap2 : e->attr.mmap_data;
	case SB_TASK:
		return e->attr.task;
	}
	return false;
}

/* Write a record of n bytes (0: none) into e's ring, then wake its readers if may_wake and the
 * ring asks for it (wakeup_events, watermark). */
static void sb_write(struct perf_event *e, const struct perf_sb_target *t, const void *buf,
		     size_t n, bool may_wake)
{
	struct perf_ring_writer w = { t->sample_type, t->sample_id_all, t->sid };
	struct perf_ring *r;
	bool wake = false;

	if (!n)
		return;
	r = perf_event_ring_get(e);
	if (!r)
		return;
	perf_ring_write(r, buf, n, &w, &wake);
	if (wake && may_wake)
		perf_event_ring_wake(e);
	perf_ring_put(r);
}

static void sb_emit_one(struct perf_event *e, const struct sb_req *q, uint8_t *buf, size_t cap)
{
	struct perf_sb_target t = { e->attr.sample_type, e->attr.sample_id_all, { 0 } };
	size_t n = 0;

	perf_event_sample_id(e, &t.sid);
	switch (q->kind) {
	case SB_COMM:
		/* perf_event_comm: an exec's COMM is marked COMM_EXEC whatever attr.comm_exec says
		 * (that bit only tells the kernel the reader knows the flag) */
		n = perf_sb_comm(buf, cap, &t, t.sid.pid, t.sid.tid, q->comm, q->exec);
		break;
	case SB_MMAP:
		n = perf_sb_mmap(buf, cap, &t, q->mm, e->attr.mmap2);
		break;
	case SB_TASK:
		n = perf_sb_task(buf, cap, &t, q->task_type, q->pid, q->ppid, q->tid, q->ptid,
				 t.sid.time);
		break;
	}
	if (n <= cap)
		sb_write(e, &t, buf, n, true);
}

static void sb_ctx(struct perf_context *ctx, const struct sb_req *q, uint8_t *buf, size_t cap)
{
	struct list_node *n;
	unsigned long f = spin_lock_irqsave(&ctx->sched.lock);
	int cpu = (int)ksvc_cpu_id();

	list_for_each(n, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(n, struct perf_event_core, event_entry));

		/* event_filter_match: an event bound to another CPU hears nothing here */
		if (e->cpu != -1 && e->cpu != cpu)
			continue;
		if (wants(e, q))
			sb_emit_one(e, q, buf, cap);
	}
	spin_unlock_irqrestore(&ctx->sched.lock, f);
}

/* The current task's context and this CPU's (Linux's perf_iterate_sb). */
static void sb_emit(const struct sb_req *q)
{
	size_t cap = 512 + (q->mm && q->mm->filename ? strnlen(q->mm->filename, 4096) : 0);
	uint8_t *buf = ksvc_alloc(cap);
	struct perf_context *tc;

	if (!buf)
		return;
	unsigned long f = spin_lock_irqsave(&perf_attach_lock);

	tc = perf_task_ctx_get_locked(ksvc_task_current(), false);
	spin_unlock_irqrestore(&perf_attach_lock, f);
	if (tc) {
		sb_ctx(tc, q, buf, cap);
		perf_ctx_put(tc);
	}
	unsigned int cpu = ksvc_cpu_id();

	if (perf_cpu_ctx[cpu])
		sb_ctx(perf_cpu_ctx[cpu], q, buf, cap);
	ksvc_free(buf);
}

void perf_task_comm(const char *comm, bool exec)
{
	struct sb_req q = { .kind = SB_COMM, .comm = comm, .exec = exec };

	sb_emit(&q);
}

void perf_task_mmap(const struct perf_mmap_info *m)
{
	struct sb_req q = { .kind = SB_MMAP, .mm = m };

	sb_emit(&q);
}

void perf_task_sb_task(bool fork, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct sb_req q = { .kind = SB_TASK,
			    .task_type = fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT,
			    .pid = pid,
			    .ppid = ppid,
			    .tid = tid,
			    .ptid = ptid };

	sb_emit(&q);
}

/* PERF_RECORD_THROTTLE (or UNTHROTTLE) into e's ring, in the interrupt that throttled it or
 * the tick that lets it go on. */
void perf_event_log_throttle(struct perf_event *e, bool unthrottle)
{
	uint8_t buf[128];
	struct perf_sb_target t = { e->attr.sample_type, e->attr.sample_id_all, { 0 } };

	perf_event_sample_id(e, &t.sid);
	size_t n = perf_sb_throttle(buf, sizeof(buf), &t, unthrottle, t.sid.time, e->primary_id,
				    e->id);

	/* readers are woken by the samples around it, not by this record */
	if (n <= sizeof(buf))
		sb_write(e, &t, buf, n, false);
}
