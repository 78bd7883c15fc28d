/*
 * verify_prec.c - precision tracking for the verifier's pruning (the idea of Linux's
 * mark_chain_precision): a checkpoint's scalars start imprecise, and pruning lets any scalar
 * stand in for an imprecise one.  A scalar becomes precise in the checkpoints of the current
 * path when its bounds decide something: a conditional jump that ranges decide (or that they
 * make impossible one way), the scalar side of pointer arithmetic, a helper's size argument.
 * The mark goes back along the path's instructions to whatever the value came from (movs, ALU
 * operands, stack spills and fills through r10, the other register of a comparison, which
 * refines it) and into each parent checkpoint on the way.  A path pruned by a checkpoint gets
 * that checkpoint's precise marks the same way.
 *
 * Only marks in fully explored checkpoints prune anything (the walk's rule), and those are
 * final: every path below has ended, pruned paths having passed their marks up first.
 * Whatever backtracking cannot follow (a fill or spill through another pointer register, calls
 * into subprograms, a lost history) marks every scalar of the path's checkpoints precise.
 * Programs with bpf-to-bpf calls keep every scalar precise, as Linux 6.1 does.
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "verify.h"

#define HIST_MAX 512 /* jumps kept between two checkpoints of one path (4 KiB) */

void hist_push(struct vstate *st, uint32_t idx, uint32_t prev)
{
	if (st->hist_lost)
		return;
	if (st->nhist == st->hist_cap) {
		uint32_t cap = st->hist_cap ? st->hist_cap * 2 : 16;
		struct hist_entry *n = cap <= HIST_MAX ? ksvc_alloc(sizeof(*n) * cap) : NULL;

		if (!n) {
			/* sound either way: backtracking through this stretch marks everything */
			st->hist_lost = true;
			return;
		}
		if (st->nhist)
			memcpy(n, st->hist, sizeof(*n) * st->nhist);
		ksvc_free(st->hist);
		st->hist = n;
		st->hist_cap = cap;
	}
	st->hist[st->nhist].idx = idx;
	st->hist[st->nhist++].prev = prev;
}

static void frame_set_precise(struct frame *f, uint8_t precise)
{
	for (int r = 0; r < MAX_BPF_REG; r++)
		if (f->regs[r].type == SCALAR)
			f->regs[r].precise = precise;
	for (uint32_t s = 0; s < f->depth / 8; s++)
		if (f->stype[s * 8] == STACK_SPILL && f->spill[s].type == SCALAR)
			f->spill[s].precise = precise;
}

void checkpoint_init_precision(const struct venv *env, struct vstate *cp)
{
	for (uint32_t i = 0; i <= cp->curframe; i++)
		frame_set_precise(cp->frames[i], env->nr_subprogs > 1);
	cp->all_precise = env->nr_subprogs > 1;
}

/*
 * The fallback: every scalar of checkpoint st and of all the checkpoints above it.  Stops at
 * one done before (its parents were done with it), so repeated fallbacks stay linear.
 */
static void mark_all_precise(struct vstate *st)
{
	for (; st && !st->all_precise; st = st->parent) {
		for (uint32_t i = 0; i <= st->curframe; i++)
			frame_set_precise(st->frames[i], 1);
		st->all_precise = true;
	}
}

static uint64_t slot_bit(int64_t off)
{
	return 1ull << ((-off - 1) / 8);
}

/*
 * Step back over insn i: regs/slots say which registers and r10 stack slots must be exact after
 * it; afterwards, which must be exact before it.  false: cannot follow, give up.
 */
static bool backtrack_insn(const struct venv *env, uint32_t i, uint16_t *regs, uint64_t *slots)
{
	const struct bpf_insn *in = &env->insns[i];
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	uint16_t d = (uint16_t)(1u << in->dst_reg), s = (uint16_t)(1u << in->src_reg);
	bool x = BPF_SRC(in->code) == BPF_X;
	int64_t lo, hi;

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (!(*regs & d))
			return true;
		if (op == BPF_MOV) {
			*regs &= (uint16_t)~d;
			if (x)
				*regs |= s;
		} else if (x && op != BPF_NEG && op != BPF_END) {
			*regs |= s;
		}
		return true;
	case BPF_LD: /* lddw: a constant or a map */
		*regs &= (uint16_t)~d;
		return true;
	case BPF_LDX:
		if (!(*regs & d))
			return true;
		*regs &= (uint16_t)~d;
		if (env->aux[i] & AUX_FILL_INDIRECT)
			return false; /* which slot it came from is not known here */
		/* only an aligned 8-byte load from a spill keeps the spilled bounds */
		if (in->src_reg == BPF_REG_10 && insn_size(in->code) == 8 && !(in->off % 8) &&
		    in->off < 0)
			*slots |= slot_bit(in->off);
		return true;
	case BPF_ST:
	case BPF_STX:
		if (*regs & d)
			return false; /* a scalar as an address: not a store we can follow */
		if (BPF_MODE(in->code) == BPF_ATOMIC) {
			/* a fetched value is unknown; the slot is plain data afterwards */
			if (in->imm & BPF_FETCH)
				*regs &= (uint16_t)~(in->imm == BPF_CMPXCHG ? 1u : s);
		} else if (in->dst_reg != BPF_REG_10) {
			/* a spill through another pointer may have filled a slot in slots */
			return !(*slots && (env->aux[i] & AUX_SPILL_INDIRECT));
		}
		if (in->dst_reg != BPF_REG_10)
			return true;
		lo = in->off;
		hi = lo + insn_size(in->code);
		if (cls == BPF_STX && BPF_MODE(in->code) != BPF_ATOMIC && hi - lo == 8 && !(lo % 8) &&
		    (*slots & slot_bit(lo)))
			*regs |= s; /* a spill: the slot holds what the register held */
		for (int64_t o = lo; o < hi; o++)
			*slots &= ~slot_bit(o);
		return true;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_CALL) {
			if (in->src_reg == BPF_PSEUDO_CALL || (*regs & 0x3e))
				return false;
			*regs &= (uint16_t)~1u; /* a helper's r0 is unknown or a pointer */
			return true;
		}
		if (op == BPF_EXIT)
			return false;
		/* the comparison refined both registers: each one's bounds came from the other */
		if (op != BPF_JA && x && (env->aux[i] & AUX_JMP_SCALARS) && (*regs & (d | s)))
			*regs |= d | s;
		return true;
	}
	return false;
}

/* Mark in checkpoint st what regs/slots ask for; *fresh: some mark was new. */
static bool mark_checkpoint(struct vstate *st, uint16_t *regs, uint64_t *slots, bool *fresh)
{
	struct frame *f = st->frames[st->curframe];

	*fresh = false;
	for (int r = 0; r < MAX_BPF_REG; r++) {
		struct reg *x = &f->regs[r];

		if (!(*regs & (1u << r)))
			continue;
		if (x->type != SCALAR) {
			*regs &= (uint16_t)~(1u << r); /* pointers are compared exactly anyway */
			continue;
		}
		*fresh |= !x->precise;
		x->precise = 1;
	}
	for (uint32_t k = 0; k < 64; k++) {
		struct reg *x = &f->spill[k];

		if (!(*slots & (1ull << k)))
			continue;
		if (k >= f->depth / 8)
			return false; /* the slot was filled some way backtracking did not see */
		if (f->stype[k * 8] != STACK_SPILL || x->type != SCALAR) {
			*slots &= ~(1ull << k);
			continue;
		}
		*fresh |= !x->precise;
		x->precise = 1;
	}
	return true;
}

/*
 * regs/slots of the current frame must be exact at insn pos of the current path: walk back
 * through the path's instructions, one checkpoint's stretch at a time, marking each checkpoint.
 */
static void mark_precise(struct venv *env, uint32_t pos, uint16_t regs, uint64_t slots)
{
	struct vstate *st = env->cur;
	uint32_t i = pos, n = st->nhist;
	bool skip = true, fresh;

	if (env->nr_subprogs > 1 || st->curframe)
		return; /* every checkpoint is all precise already */
	for (;;) {
		if (st->hist_lost)
			goto all;
		for (;;) {
			if (!skip && !backtrack_insn(env, i, &regs, &slots))
				goto all;
			skip = false;
			regs &= (uint16_t)~(1u << BPF_REG_10); /* never a scalar */
			if (!regs && !slots)
				return;
			if (i == st->first && !n)
				break;
			if (n && st->hist[n - 1].idx == i)
				i = st->hist[--n].prev;
			else
				i--;
			if (i >= env->len)
				goto all;
		}
		st = st->parent;
		if (!st)
			return;
		if (!mark_checkpoint(st, &regs, &slots, &fresh))
			goto all;
		/* a checkpoint that had every mark passed them up when it got them */
		if ((!regs && !slots) || !fresh)
			return;
		i = st->last;
		n = st->nhist;
		if (i >= env->len)
			goto all;
	}
all:
	/* the current state is no checkpoint: its marks would mean nothing */
	mark_all_precise(st == env->cur ? st->parent : st);
}

void mark_reg_precise(struct venv *env, uint32_t regno)
{
	if (cur_frame(env)->regs[regno].type == SCALAR)
		mark_precise(env, env->idx, (uint16_t)(1u << regno), 0);
}

void propagate_precision(struct venv *env, const struct vstate *old, uint32_t idx)
{
	const struct frame *of = old->frames[old->curframe];
	const struct frame *cf = cur_frame(env);
	uint16_t regs = 0;
	uint64_t slots = 0;

	for (int r = 0; r < BPF_REG_10; r++)
		if (of->regs[r].type == SCALAR && of->regs[r].precise &&
		    cf->regs[r].type == SCALAR)
			regs |= (uint16_t)(1u << r);
	for (uint32_t k = 0; k < of->depth / 8 && k < 64; k++)
		if (of->stype[k * 8] == STACK_SPILL && of->spill[k].type == SCALAR &&
		    of->spill[k].precise)
			slots |= 1ull << k;
	if (regs || slots)
		mark_precise(env, idx, regs, slots);
}
