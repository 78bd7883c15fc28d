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
 * Does not: decide which events get a record (attr.comm/mmap/mmap2/task, filters) nor write
 * the ring; the hooks in core.c do both with perf_ring_write.
 */
#include <kern/compiler.h>
#include <kern/string.h>

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
