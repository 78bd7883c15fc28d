/*
 * record.c - encoders for the records a perf event writes: PERF_RECORD_SAMPLE, the read_format
 * block (read(2) and PERF_SAMPLE_READ), the sample_id_all trailer, and PERF_RECORD_LOST.
 *
 * ABI: Linux 6.1 include/uapi/linux/perf_event.h record layouts, field order as
 * kernel/events/core.c perf_output_sample / perf_output_read_{one,group} /
 * __perf_event__output_id_sample.  Records are 8-byte aligned; header.size covers the trailer.
 *
 * Does: size computation and byte-exact writing into a perf_out cursor (a flat buffer or a
 * reserved, possibly wrapping, span of a ring).  Does not: gather the data (callchains, regs,
 * times are the caller's), reserve ring space (ring.c), or clamp a too-large sample (the caller
 * shrinks the user stack dump as Linux's perf_sample_ustack_size does).
 */
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/ksvc.h>
#include <kern/string.h>

#include "perf_internal.h"

/* ---- output cursor ---- */

void perf_out_init(struct perf_out *o, void *buf, size_t len)
{
	o->base = buf;
	o->size = len;
	o->off = 0;
	o->left = len;
}

void perf_out_put(struct perf_out *o, const void *src, size_t n)
{
	const uint8_t *s = src;

	kassert(n <= o->left);
	o->left -= n;
	while (n) {
		size_t chunk = MIN(n, o->size - o->off);

		memcpy(o->base + o->off, s, chunk);
		s += chunk;
		n -= chunk;
		o->off += chunk;
		if (o->off == o->size)
			o->off = 0;
	}
}

void perf_out_u64s(struct perf_out *o, const uint64_t *v, size_t n)
{
	size_t off = o->off, bytes = 8 * n;

	kassert(bytes <= o->left);
	if (bytes >= o->size - off) {
		perf_out_put(o, v, bytes); /* reaches the end of the area: the wrapping copy */
		return;
	}
	/* a few u64 (a callchain): a store each, no memcpy call */
	for (uint8_t *p = o->base + off, *end = p + bytes; p < end; p += 8, v++)
		__builtin_memcpy(p, v, 8);
	o->off = off + bytes;
	o->left -= bytes;
}

void perf_out_zero(struct perf_out *o, size_t n)
{
	kassert(n <= o->left);
	o->left -= n;
	while (n) {
		size_t chunk = MIN(n, o->size - o->off);

		memset(o->base + o->off, 0, chunk);
		n -= chunk;
		o->off += chunk;
		if (o->off == o->size)
			o->off = 0;
	}
}

static void out_header(struct perf_out *o, uint32_t type, uint16_t misc, size_t size)
{
	/* struct perf_event_header: u32 type, u16 misc, u16 size */
	kassert(size <= PERF_RECORD_MAX_SIZE && (size & 7) == 0);
	perf_out_u32x2(o, type, (uint32_t)misc | (uint32_t)size << 16);
}

/* ---- read_format ---- */

size_t perf_read_size(uint64_t read_format, uint32_t nr)
{
	size_t entry = 8; /* value */
	size_t size = 0;

	if (read_format & PERF_FORMAT_ID)
		entry += 8;
	if (read_format & PERF_FORMAT_LOST)
		entry += 8;
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		size += 8;
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		size += 8;
	if (read_format & PERF_FORMAT_GROUP)
		return 8 /* nr */ + size + (size_t)nr * entry;
	return size + entry;
}

static void read_entry(struct perf_out *o, uint64_t read_format, const struct perf_read_entry *e)
{
	perf_out_u64(o, e->value);
	if (read_format & PERF_FORMAT_ID)
		perf_out_u64(o, e->id);
	if (read_format & PERF_FORMAT_LOST)
		perf_out_u64(o, e->lost);
}

void perf_read_write(struct perf_out *o, uint64_t read_format, const struct perf_read_values *v)
{
	if (read_format & PERF_FORMAT_GROUP) {
		/* { nr, time_enabled?, time_running?, { value, id?, lost? }[nr] }, leader first */
		perf_out_u64(o, v->nr);
		if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			perf_out_u64(o, v->time_enabled);
		if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			perf_out_u64(o, v->time_running);
		for (uint32_t i = 0; i < v->nr; i++)
			read_entry(o, read_format, &v->ent[i]);
		return;
	}
	/* { value, time_enabled?, time_running?, id?, lost? } */
	perf_out_u64(o, v->ent[0].value);
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		perf_out_u64(o, v->time_enabled);
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		perf_out_u64(o, v->time_running);
	if (read_format & PERF_FORMAT_ID)
		perf_out_u64(o, v->ent[0].id);
	if (read_format & PERF_FORMAT_LOST)
		perf_out_u64(o, v->ent[0].lost);
}

/* ---- sample_id_all trailer ---- */

size_t perf_id_trailer_size(uint64_t sample_type, bool sample_id_all)
{
	size_t size = 0;

	if (!sample_id_all)
		return 0;
	if (sample_type & PERF_SAMPLE_TID)
		size += 8;
	if (sample_type & PERF_SAMPLE_TIME)
		size += 8;
	if (sample_type & PERF_SAMPLE_ID)
		size += 8;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		size += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		size += 8;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		size += 8;
	return size;
}

void perf_id_trailer_write(struct perf_out *o, uint64_t sample_type, bool sample_id_all,
			   const struct perf_sample_id *sid)
{
	if (!sample_id_all)
		return;
	if (sample_type & PERF_SAMPLE_TID)
		perf_out_u32x2(o, sid->pid, sid->tid);
	if (sample_type & PERF_SAMPLE_TIME)
		perf_out_u64(o, sid->time);
	if (sample_type & PERF_SAMPLE_ID)
		perf_out_u64(o, sid->id);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		perf_out_u64(o, sid->stream_id);
	if (sample_type & PERF_SAMPLE_CPU)
		perf_out_u32x2(o, sid->cpu, 0);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		perf_out_u64(o, sid->id);
}

/* ---- PERF_RECORD_LOST ---- */

size_t perf_lost_size(uint64_t sample_type, bool sample_id_all)
{
	return sizeof(struct perf_event_header) + 16 +
	       perf_id_trailer_size(sample_type, sample_id_all);
}

void perf_lost_write(struct perf_out *o, uint64_t id, uint64_t lost, uint64_t sample_type,
		     bool sample_id_all, const struct perf_sample_id *sid)
{
	/* misc 0: Linux's __perf_output_begin lost_event */
	out_header(o, PERF_RECORD_LOST, 0, perf_lost_size(sample_type, sample_id_all));
	perf_out_u64(o, id);
	perf_out_u64(o, lost);
	perf_id_trailer_write(o, sample_type, sample_id_all, sid);
}

/* ---- PERF_RECORD_SAMPLE ---- */

uint16_t perf_sample_misc(bool user_mode, bool exact_ip)
{
	uint16_t misc = user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;

	if (exact_ip)
		misc |= PERF_RECORD_MISC_EXACT_IP;
	return misc;
}

/*
 * Bits set in v.  Not __builtin_popcountll: with general registers only, GCC calls libgcc's
 * __popcountdi2, whose arm64 build counts with SIMD registers and so clobbers the v0 of the
 * user task a sample interrupted.
 */
static inline unsigned int popcount64(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((v * 0x0101010101010101ull) >> 56);
}

static size_t regs_size(uint64_t abi, uint64_t mask)
{
	/* abi, then one u64 per mask bit when there are registers */
	return 8 + (abi ? 8 * (size_t)popcount64(mask) : 0);
}

/* RAW: u32 size + data, padded so the u32 and the data end 8-aligned; size counts the pad. */
static size_t raw_padded(const struct perf_sample_data *d)
{
	if (!d->raw)
		return 4;
	return ALIGN_UP((size_t)d->raw_size + 4, 8) - 4;
}

/* The sample fields that are one u64 whatever the sample holds (WEIGHT_TYPE apart: either bit). */
#define SAMPLE_U64_FIELDS                                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |             \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |              \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |                      \
	 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |                  \
	 PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

size_t perf_sample_size(const struct perf_event_attr *attr, const struct perf_sample_data *d)
{
	uint64_t st = attr->sample_type;
	size_t size = sizeof(struct perf_event_header) + 8 * (size_t)popcount64(st & SAMPLE_U64_FIELDS);

	if (st & PERF_SAMPLE_WEIGHT_TYPE)
		size += 8;
	if (!(st & ~(SAMPLE_U64_FIELDS | PERF_SAMPLE_WEIGHT_TYPE)))
		return size; /* the common case: no field whose size depends on the sample */
	if (st & PERF_SAMPLE_READ)
		size += perf_read_size(attr->read_format, d->read ? d->read->nr : 1);
	if (st & PERF_SAMPLE_CALLCHAIN)
		size += 8 + 8 * (size_t)d->callchain_nr;
	if (st & PERF_SAMPLE_RAW)
		size += 4 + raw_padded(d);
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		size += 8;
		if (d->branches) {
			if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
				size += 8;
			size += (size_t)d->branch_nr * sizeof(struct perf_branch_entry);
		}
	}
	if (st & PERF_SAMPLE_REGS_USER)
		size += regs_size(d->regs_user_abi, attr->sample_regs_user);
	if (st & PERF_SAMPLE_STACK_USER) {
		/* size, then (with user regs) the dump and dyn_size */
		size += 8;
		if (d->regs_user_abi && d->stack_user_size)
			size += (size_t)d->stack_user_size + 8;
	}
	if (st & PERF_SAMPLE_REGS_INTR)
		size += regs_size(d->regs_intr_abi, attr->sample_regs_intr);
	return size;
}

uint16_t perf_sample_ustack_size(uint16_t stack_size, uint16_t header_size, bool have_regs,
				 uint64_t user_sp, uint64_t task_size)
{
	uint64_t room;

	/* no user registers (a kernel thread): no stack pointer, no dump */
	if (!have_regs)
		return 0;
	/* not beyond the top of the user address space */
	room = user_sp < task_size ? task_size - user_sp : 0;
	if (room > 0xffff)
		room = 0xffff;
	if (stack_size > room)
		stack_size = (uint16_t)room;
	/* the size and dyn_size fields */
	header_size += 2 * sizeof(uint64_t);
	/* the u16 record size would overflow: take what is left, 8-aligned (Linux's u16 maths) */
	if ((uint16_t)(header_size + stack_size) < header_size) {
		stack_size = (uint16_t)(0xffffu - header_size - sizeof(uint64_t));
		stack_size = (uint16_t)ALIGN_UP(stack_size, 8u);
	}
	return stack_size;
}

static void write_regs(struct perf_out *o, uint64_t abi, uint64_t mask, const uint64_t *regs)
{
	perf_out_u64(o, abi);
	if (!abi)
		return;
	/* ascending bit order, perf_output_sample_regs; value by perf_reg_value index */
	for (unsigned int bit = 0; bit < 64; bit++)
		if (mask & (1ull << bit))
			perf_out_u64(o, bit < PERF_REG_ARM64_MAX && regs ? regs[bit] : 0);
}

static void write_stack_user(struct perf_out *o, const struct perf_sample_data *d)
{
	uint8_t chunk[128];
	uint64_t done = 0;

	if (!d->regs_user_abi || !d->stack_user_size) {
		perf_out_u64(o, 0);
		return;
	}
	perf_out_u64(o, d->stack_user_size);
	while (done < d->stack_user_size) {
		size_t n = (size_t)MIN((uint64_t)sizeof(chunk), d->stack_user_size - done);

		if (ksvc_read_nofault(chunk, (const void *)(uintptr_t)(d->stack_user_sp + done), n,
				      true))
			break;
		perf_out_put(o, chunk, n);
		done += n;
	}
	/* the unreadable rest is skipped space (zeroed here); dyn_size says how much is real */
	perf_out_zero(o, (size_t)(d->stack_user_size - done));
	perf_out_u64(o, done);
}

void perf_sample_write(struct perf_out *o, const struct perf_event_attr *attr,
		       const struct perf_sample_data *d, uint16_t misc, size_t size)
{
	uint64_t st = attr->sample_type;
	size_t start_left = o->left;

	out_header(o, PERF_RECORD_SAMPLE, misc, size);
	if (st & PERF_SAMPLE_IDENTIFIER)
		perf_out_u64(o, d->sid.id);
	if (st & PERF_SAMPLE_IP)
		perf_out_u64(o, d->ip);
	if (st & PERF_SAMPLE_TID)
		perf_out_u32x2(o, d->sid.pid, d->sid.tid);
	if (st & PERF_SAMPLE_TIME)
		perf_out_u64(o, d->sid.time);
	if (st & PERF_SAMPLE_ADDR)
		perf_out_u64(o, d->addr);
	if (st & PERF_SAMPLE_ID)
		perf_out_u64(o, d->sid.id);
	if (st & PERF_SAMPLE_STREAM_ID)
		perf_out_u64(o, d->sid.stream_id);
	if (st & PERF_SAMPLE_CPU)
		perf_out_u32x2(o, d->sid.cpu, 0);
	if (st & PERF_SAMPLE_PERIOD)
		perf_out_u64(o, d->period);
	if (st & PERF_SAMPLE_READ) {
		struct perf_read_entry zero = {0};
		struct perf_read_values none = {.nr = 1, .ent = &zero};

		perf_read_write(o, attr->read_format, d->read ? d->read : &none);
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		perf_out_u64(o, d->callchain_nr);
		perf_out_u64s(o, d->callchain, d->callchain_nr);
	}
	if (st & PERF_SAMPLE_RAW) {
		size_t padded = raw_padded(d);

		perf_out_u32(o, (uint32_t)padded);
		if (d->raw) {
			perf_out_put(o, d->raw, d->raw_size);
			perf_out_zero(o, padded - d->raw_size);
		} else {
			perf_out_u32(o, 0);
		}
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		if (d->branches) {
			perf_out_u64(o, d->branch_nr);
			if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
				perf_out_u64(o, d->branch_hw_idx);
			perf_out_put(o, d->branches,
				     (size_t)d->branch_nr * sizeof(struct perf_branch_entry));
		} else {
			perf_out_u64(o, 0); /* "we always store at least the value of nr" */
		}
	}
	if (st & PERF_SAMPLE_REGS_USER)
		write_regs(o, d->regs_user_abi, attr->sample_regs_user, d->regs_user);
	if (st & PERF_SAMPLE_STACK_USER)
		write_stack_user(o, d);
	if (st & PERF_SAMPLE_WEIGHT_TYPE)
		perf_out_u64(o, d->weight);
	if (st & PERF_SAMPLE_DATA_SRC)
		perf_out_u64(o, d->data_src);
	if (st & PERF_SAMPLE_TRANSACTION)
		perf_out_u64(o, d->transaction);
	if (st & PERF_SAMPLE_REGS_INTR)
		write_regs(o, d->regs_intr_abi, attr->sample_regs_intr, d->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		perf_out_u64(o, d->phys_addr);
	if (st & PERF_SAMPLE_CGROUP)
		perf_out_u64(o, d->cgroup);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		perf_out_u64(o, d->data_page_size);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		perf_out_u64(o, d->code_page_size);
	if (st & PERF_SAMPLE_AUX)
		perf_out_u64(o, 0);
	kassert(start_left - o->left == size);
}
