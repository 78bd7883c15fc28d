/*
 * verify_dynptr.c - the verifier's half of struct bpf_dynptr, as Linux 6.1 checks it: a
 * dynptr lives in two 8-byte stack slots at an 8-aligned offset; a constructor
 * (dynptr_from_mem, ringbuf_reserve_dynptr) wants slots that hold no dynptr and marks them;
 * the other helpers want an initialized one (submit/discard a ring buffer one, whose reference
 * they end, with every data slice taken from it).  Instructions may not read the slots (they
 * may overwrite them, as 6.1 lets them; a ring buffer dynptr's reference then leaks).
 * A callback's PTR_TO_DYNPTR (user_ringbuf_drain) is a dynptr the helper owns: accepted as
 * it is.  The run-time half is helpers_dynptr.c.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/string.h>
#include "verify.h"

/* Slot index (spill[]) of the dynptr's lower half for a stack offset (Linux's get_spi). */
static uint32_t dyn_slot(int32_t off)
{
	return (uint32_t)((-(int64_t)off - 1) / 8);
}

/* is_spi_bounds_valid: both slots inside what the frame tracks. */
static bool slots_tracked(const struct frame *f, int32_t off)
{
	int64_t s = (-(int64_t)off - 1) / 8;

	return off < 0 && s >= 1 && (uint64_t)s < f->depth / 8;
}

static bool slot_has(const struct frame *f, uint32_t s, uint8_t type, bool all)
{
	for (uint32_t k = 0; k < 8; k++)
		if ((f->stype[s * 8 + k] == type) != all)
			return !all;
	return all;
}

bool stack_has_dynptr(const struct frame *f, int64_t lo, int64_t hi)
{
	for (int64_t o = lo; o < hi; o++) {
		uint64_t i = (uint64_t)(-o - 1);

		if (o < 0 && i < f->depth && f->stype[i] == STACK_DYNPTR)
			return true;
	}
	return false;
}

/* is_dynptr_reg_valid_init: both slots whole dynptr slots, the lower one its first. */
static bool dyn_valid(const struct frame *f, int32_t off)
{
	uint32_t s = dyn_slot(off);

	return slots_tracked(f, off) && f->spill[s].off == 1 && slot_has(f, s, STACK_DYNPTR, true) &&
	       slot_has(f, s - 1, STACK_DYNPTR, true);
}

int dynptr_check_arg(struct venv *env, uint32_t regno, uint32_t argno, uint8_t arg,
		     struct dynptr_meta *m)
{
	const struct reg *r = &cur_frame(env)->regs[regno];
	bool release = arg == ARG_DYNPTR_RINGBUF_RELEASE;
	const struct frame *sf;
	uint32_t s;

	if (r->type != PTR_TO_STACK && r->type != PTR_TO_DYNPTR)
		return verr(env, -EACCES, "R%u type=%s expected=fp, dynptr_ptr\n", regno,
			    reg_type_name(r->type));
	if (r->type == PTR_TO_STACK && r->off % 8)
		return verr(env, -EINVAL, "cannot pass in dynptr at an offset\n");
	sf = r->type == PTR_TO_STACK ? env->cur->frames[r->frameno] : cur_frame(env);
	s = dyn_slot(r->off);
	if (release && (r->type != PTR_TO_STACK || !slots_tracked(sf, r->off) || !sf->spill[s].id))
		return verr(env, -EINVAL, "arg %u is an unacquired reference\n", regno);
	if (r->type == PTR_TO_DYNPTR)
		return 0; /* the helper's own: no slots to check (Linux) */
	if (arg == ARG_DYNPTR_UNINIT_LOCAL || arg == ARG_DYNPTR_UNINIT_RINGBUF) {
		if (slots_tracked(sf, r->off) &&
		    (slot_has(sf, s, STACK_DYNPTR, false) || slot_has(sf, s - 1, STACK_DYNPTR, false)))
			return verr(env, -EINVAL, "Dynptr has to be an uninitialized dynptr\n");
		m->uninit_regno = regno;
		m->uninit_type = arg == ARG_DYNPTR_UNINIT_LOCAL ? BPF_DYNPTR_LOCAL : BPF_DYNPTR_RINGBUF;
		return 0;
	}
	if (!dyn_valid(sf, r->off))
		return verr(env, -EINVAL, "Expected an initialized dynptr as arg #%u\n", argno + 1);
	if (release && sf->spill[s].mem_size != BPF_DYNPTR_RINGBUF)
		return verr(env, -EINVAL, "Expected a dynptr of type ringbuf  as arg #%u\n", argno + 1);
	if (release)
		m->release_regno = regno;
	m->ref = sf->spill[s].id;
	return 0;
}

int dynptr_commit(struct venv *env, const struct dynptr_meta *m)
{
	struct frame *f = cur_frame(env), *sf;
	uint32_t s, id = 0;
	int err;

	if (m->uninit_regno) {
		const struct reg *r = &f->regs[m->uninit_regno];

		/* the helper writes the 16 bytes: Linux checks them as two 8-byte stores */
		for (int32_t i = 0; i < 16; i += 8) {
			err = check_mem_access(env, m->uninit_regno, i, 8, true, VALUE_UNKNOWN, false);
			if (err)
				return err;
		}
		sf = env->cur->frames[r->frameno];
		if (!slots_tracked(sf, r->off))
			return -EINVAL;
		if (m->uninit_type == BPF_DYNPTR_RINGBUF) {
			int64_t ref = acquire_ref(env);

			if (ref < 0)
				return (int)ref;
			id = (uint32_t)ref;
		}
		s = dyn_slot(r->off);
		memset(&sf->stype[(s - 1) * 8], STACK_DYNPTR, 16);
		memset(&sf->spill[s - 1], 0, 2 * sizeof(sf->spill[0]));
		sf->spill[s].off = 1;
		sf->spill[s].mem_size = sf->spill[s - 1].mem_size = m->uninit_type;
		sf->spill[s].id = sf->spill[s - 1].id = id;
	}
	if (m->release_regno) {
		const struct reg *r = &f->regs[m->release_regno];

		sf = env->cur->frames[r->frameno];
		s = dyn_slot(r->off);
		id = sf->spill[s].id;
		memset(&sf->stype[(s - 1) * 8], STACK_INVALID, 16);
		memset(&sf->spill[s - 1], 0, 2 * sizeof(sf->spill[0]));
		/* the reference ends, and every data slice taken from the dynptr with it */
		if (!release_ref(env->cur, id))
			return verr(env, -EINVAL, "func %s#%d reference has not been acquired before\n",
				    bpf_helper_get(env->insns[env->idx].imm)->name,
				    env->insns[env->idx].imm);
	}
	return 0;
}
