/*
 * verify_jmp.c - the verifier's conditional jumps: a branch is followed one way when the value
 * ranges decide it, otherwise both ways, each with the ranges the comparison implies
 * (unsigned and signed; JMP32 where the operands fit its view); a jump that ranges
 * make impossible is dropped.  `if (p == 0)` on a map lookup result turns every copy of it into
 * NULL on one side and a map value pointer on the other.  Pointer comparisons go both ways.
 * Part of the walk in verify.c.
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "verify.h"

/* ---- conditional jumps ---- */

/* 1 taken, 0 not taken, -1 unknown, for scalar a OP b (64-bit view). */
static int branch_taken(uint8_t op, const struct reg *a, const struct reg *b)
{
	switch (op) {
	case BPF_JEQ:
		if (reg_is_const(a) && reg_is_const(b))
			return a->umin == b->umin;
		if (a->umin > b->umax || a->umax < b->umin || a->smin > b->smax || a->smax < b->smin)
			return 0;
		return -1;
	case BPF_JNE: {
		int t = branch_taken(BPF_JEQ, a, b);

		return t < 0 ? -1 : !t;
	}
	case BPF_JSET:
		if (reg_is_const(a) && reg_is_const(b))
			return (a->umin & b->umin) != 0;
		if (a->umax == 0 || b->umax == 0)
			return 0;
		return -1;
	case BPF_JGT:
		return a->umin > b->umax ? 1 : a->umax <= b->umin ? 0 : -1;
	case BPF_JGE:
		return a->umin >= b->umax ? 1 : a->umax < b->umin ? 0 : -1;
	case BPF_JLT:
		return a->umax < b->umin ? 1 : a->umin >= b->umax ? 0 : -1;
	case BPF_JLE:
		return a->umax <= b->umin ? 1 : a->umin > b->umax ? 0 : -1;
	case BPF_JSGT:
		return a->smin > b->smax ? 1 : a->smax <= b->smin ? 0 : -1;
	case BPF_JSGE:
		return a->smin >= b->smax ? 1 : a->smax < b->smin ? 0 : -1;
	case BPF_JSLT:
		return a->smax < b->smin ? 1 : a->smin >= b->smax ? 0 : -1;
	case BPF_JSLE:
		return a->smax <= b->smin ? 1 : a->smin > b->smax ? 0 : -1;
	}
	return -1;
}

static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JGT: return BPF_JLE;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JLE: return BPF_JGT;
	case BPF_JSGT: return BPF_JSLE;
	case BPF_JSGE: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGE;
	case BPF_JSLE: return BPF_JSGT;
	}
	return 0; /* JSET: nothing to learn */
}

/* Refine a and b knowing that a OP b holds. */
static void refine(uint8_t op, struct reg *a, struct reg *b)
{
	switch (op) {
	case BPF_JEQ:
		a->umin = b->umin = MAX(a->umin, b->umin);
		a->umax = b->umax = MIN(a->umax, b->umax);
		a->smin = b->smin = MAX(a->smin, b->smin);
		a->smax = b->smax = MIN(a->smax, b->smax);
		break;
	case BPF_JNE:
		if (reg_is_const(b)) {
			if (a->umin == b->umin)
				a->umin++;
			if (a->umax == b->umin)
				a->umax--;
			if (a->smin == b->smin)
				a->smin++;
			if (a->smax == b->smin)
				a->smax--;
		}
		break;
	case BPF_JGT:
		a->umin = MAX(a->umin, b->umin + 1);
		b->umax = MIN(b->umax, a->umax - 1);
		break;
	case BPF_JGE:
		a->umin = MAX(a->umin, b->umin);
		b->umax = MIN(b->umax, a->umax);
		break;
	case BPF_JLT:
		refine(BPF_JGT, b, a);
		return;
	case BPF_JLE:
		refine(BPF_JGE, b, a);
		return;
	case BPF_JSGT:
		a->smin = MAX(a->smin, b->smin + 1);
		b->smax = MIN(b->smax, a->smax - 1);
		break;
	case BPF_JSGE:
		a->smin = MAX(a->smin, b->smin);
		b->smax = MIN(b->smax, a->smax);
		break;
	case BPF_JSLT:
		refine(BPF_JSGT, b, a);
		return;
	case BPF_JSLE:
		refine(BPF_JSGE, b, a);
		return;
	}
	reg_sync(a);
	reg_sync(b);
}

static void null_check_reg(struct reg *x, uint32_t id, bool is_null)
{
	if (!reg_maybe_null(x->type) || x->id != id)
		return;
	if (is_null) {
		mark_const(x, 0);
	} else if (x->type == PTR_TO_BTF_ID_OR_NULL || x->type == PTR_TO_RDONLY_MEM_OR_NULL ||
		   x->type == PTR_TO_BTF_ID_UNTRUSTED_OR_NULL) {
		x->type = x->type == PTR_TO_BTF_ID_OR_NULL	 ? PTR_TO_BTF_ID :
			  x->type == PTR_TO_RDONLY_MEM_OR_NULL ? PTR_TO_RDONLY_MEM :
								 PTR_TO_BTF_ID_UNTRUSTED;
		x->id = 0;
	} else if (x->type == PTR_TO_MAP_VALUE_OR_NULL && x->map->inner_meta) {
		/* a map-in-map lookup gives an inner map, typed by the template (Linux) */
		x->type = CONST_PTR_TO_MAP;
		x->map = x->map->inner_meta;
		x->id = 0;
	} else {
		x->type = x->type == PTR_TO_MEM_OR_NULL ? PTR_TO_MEM : PTR_TO_MAP_VALUE;
		/* a value with a bpf_spin_lock keeps its id: the lock's owner (Linux) */
		if (x->type != PTR_TO_MAP_VALUE || x->map->spin_lock_off < 0)
			x->id = 0;
	}
}

/*
 * In st, every copy of the *_or_null with this id becomes a pointer or NULL.  A NULL reservation
 * holds nothing: its reference ends on that branch (Linux's mark_ptr_or_null_regs).
 */
static void mark_null_checked(struct vstate *st, uint32_t id, uint32_t ref, bool is_null)
{
	for (uint32_t fi = 0; fi <= st->curframe; fi++) {
		struct frame *f = st->frames[fi];

		for (int r = 0; r < MAX_BPF_REG; r++)
			null_check_reg(&f->regs[r], id, is_null);
		for (uint32_t s = 0; s < f->depth / 8; s++)
			if (f->stype[s * 8] == STACK_SPILL)
				null_check_reg(&f->spill[s], id, is_null);
	}
	if (is_null && ref)
		release_ref(st, ref);
}

/* Operands as a 32-bit comparison sees them, or false when ranges say nothing. */
static bool view32(uint8_t op, struct reg *r)
{
	bool sgn = op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT || op == BPF_JSLE;

	if (reg_is_const(r)) {
		uint32_t v = (uint32_t)r->umin;

		mark_const(r, sgn ? (uint64_t)(int64_t)(int32_t)v : v);
		return true;
	}
	if (sgn)
		return r->smin >= 0 && r->smax <= INT32_MAX;
	return r->umax <= UINT32_MAX;
}

/* Returns the next instruction index, or a negative errno.  May push the other branch. */
int64_t check_cond_jmp(struct venv *env, const struct bpf_insn *in, uint32_t idx)
{
	struct frame *f = cur_frame(env);
	uint8_t op = BPF_OP(in->code);
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	bool k = BPF_SRC(in->code) == BPF_K;
	uint32_t target = idx + 1 + in->off;
	struct reg *a = &f->regs[in->dst_reg], *bp = NULL, b, a2, b2;
	struct vstate *other;
	int taken = -1, err;

	err = check_reg_read(env, in->dst_reg);
	if (err)
		return err;
	if (!k) {
		err = check_reg_read(env, in->src_reg);
		if (err)
			return err;
		bp = &f->regs[in->src_reg];
		b = *bp;
	} else {
		mark_const(&b, is32 ? (uint32_t)in->imm : (uint64_t)(int64_t)in->imm);
	}
	/* null check of a map lookup result */
	if (reg_maybe_null(a->type) && k &&
	    !in->imm && !is32 && (op == BPF_JEQ || op == BPF_JNE)) {
		/* a NULL acquired pointer holds nothing; a dynptr slice's NULL leaves the dynptr's
		 * reference alone (Linux: ref_obj_id == id only) */
		uint32_t id = a->id, ref = a->ref_obj_id == a->id ? a->ref_obj_id : 0;

		err = push_branch(env, target, &other);
		if (err)
			return err;
		mark_null_checked(other, id, ref, op == BPF_JEQ);
		mark_null_checked(env->cur, id, ref, op == BPF_JNE);
		return idx + 1;
	}
	a2 = *a;
	b2 = b;
	if (a->type == SCALAR && b.type == SCALAR) {
		bool usable = !is32 || (view32(op, &a2) && view32(op, &b2));

		if (!k)
			env->aux[idx] |= AUX_JMP_SCALARS;
		if (usable)
			taken = branch_taken(op, &a2, &b2);
		if (taken >= 0) {
			/* decided by the bounds: they must hold wherever this path is reused */
			mark_reg_precise(env, in->dst_reg);
			if (!k)
				mark_reg_precise(env, in->src_reg);
			return taken ? target : idx + 1;
		}
		err = push_branch(env, target, &other);
		if (err)
			return err;
		/*
		 * Refine where the operands' (32-bit) views are the registers themselves: then the
		 * comparison says the same about the full registers.
		 */
		if (usable) {
			struct frame *of = other->frames[other->curframe];
			bool a_same = !memcmp(&a2, a, sizeof(a2)), b_same = k || !memcmp(&b2, &b, sizeof(b2));
			struct reg ta = a2, tb = b2, fa = a2, fb = b2;

			refine(op, &ta, &tb);
			if (negate(op))
				refine(negate(op), &fa, &fb);
			if (reg_bad(&ta) || reg_bad(&tb) || reg_bad(&fa) || reg_bad(&fb)) {
				/* one way is impossible after all: the bounds decided it */
				mark_reg_precise(env, in->dst_reg);
				if (!k)
					mark_reg_precise(env, in->src_reg);
			}
			if (reg_bad(&ta) || reg_bad(&tb)) {
				/* the jump cannot be taken after all: drop the pushed branch */
				env->stack_len--;
				if (other->parent)
					other->parent->branches--;
				state_free(other);
			} else {
				if (a_same)
					of->regs[in->dst_reg] = ta;
				if (!k && b_same)
					of->regs[in->src_reg] = tb;
			}
			if (reg_bad(&fa) || reg_bad(&fb))
				return -EAGAIN; /* fall-through impossible */
			if (a_same)
				*a = fa;
			if (!k && b_same)
				*bp = fb;
		}
		return idx + 1;
	}
	/* pointers compared with anything: both ways, nothing learned (privileged rules) */
	err = push_branch(env, target, &other);
	if (err)
		return err;
	return idx + 1;
}

