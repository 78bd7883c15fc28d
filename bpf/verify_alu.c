/*
 * verify_alu.c - the verifier's ALU rules: value ranges of scalar results (64-bit and 32-bit
 * ALU, with the ISA's division, shift and sign-extension semantics), constant folding, and what
 * pointer arithmetic is allowed (add/sub of bounded scalars to stack, map value and ctx pointers;
 * no 32-bit, bitwise or multiplicative operations on pointers: EACCES as Linux 6.1; a scalar
 * unbounded below or beyond 2^29: EINVAL, as its check_reg_sane_offset).
 * Part of the walk in verify.c; not here: memory accesses (verify_mem.c).
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "verify.h"

#define PTR_OFF_MAX (1 << 29)

/* ---- ALU ---- */

/* Exact result of an ALU op on constants, with the interpreter's semantics. */
static uint64_t alu_eval(const struct bpf_insn *in, uint64_t a, uint64_t b)
{
	/* byte-order ops have their own width (imm), whatever the class */
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64 || BPF_OP(in->code) == BPF_END;
	uint8_t op = BPF_OP(in->code);
	bool s = in->off == 1;
	uint64_t r;

	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case BPF_ADD: r = a + b; break;
	case BPF_SUB: r = a - b; break;
	case BPF_MUL: r = a * b; break;
	case BPF_OR: r = a | b; break;
	case BPF_AND: r = a & b; break;
	case BPF_XOR: r = a ^ b; break;
	case BPF_LSH: r = a << (b & (is64 ? 63 : 31)); break;
	case BPF_RSH: r = a >> (b & (is64 ? 63 : 31)); break;
	case BPF_ARSH:
		r = is64 ? (uint64_t)((int64_t)a >> (b & 63)) : (uint32_t)((int32_t)a >> (b & 31));
		break;
	case BPF_NEG: r = -a; break;
	case BPF_DIV:
		if (!b)
			r = 0;
		else if (!s)
			r = a / b;
		else if (is64)
			r = b == (uint64_t)-1 ? -a : (uint64_t)((int64_t)a / (int64_t)b);
		else
			r = b == 0xffffffffu ? -a : (uint32_t)((int32_t)a / (int32_t)b);
		break;
	case BPF_MOD:
		if (!b)
			r = a;
		else if (!s)
			r = a % b;
		else if (is64)
			r = b == (uint64_t)-1 ? 0 : (uint64_t)((int64_t)a % (int64_t)b);
		else
			r = b == 0xffffffffu ? 0 : (uint32_t)((int32_t)a % (int32_t)b);
		break;
	case BPF_MOV:
		if (in->off == 8)
			r = (uint64_t)(int64_t)(int8_t)b;
		else if (in->off == 16)
			r = (uint64_t)(int64_t)(int16_t)b;
		else if (in->off == 32)
			r = (uint64_t)(int64_t)(int32_t)b;
		else
			r = b;
		break;
	case BPF_END:
		if (BPF_SRC(in->code) == BPF_TO_LE && BPF_CLASS(in->code) == BPF_ALU)
			r = in->imm == 16 ? (uint16_t)a : in->imm == 32 ? (uint32_t)a : a;
		else
			r = in->imm == 16 ? __builtin_bswap16((uint16_t)a) :
			    in->imm == 32 ? __builtin_bswap32((uint32_t)a) :
					    __builtin_bswap64(a);
		break;
	default: r = 0; break;
	}
	return is64 ? r : (uint32_t)r;
}

static uint64_t fill_ones(uint64_t x)
{
	return x ? UINT64_MAX >> __builtin_clzll(x) : 0;
}

/* Range of a scalar op on non-constant operands (both already in the op's width). */
static void alu_range(const struct bpf_insn *in, struct reg *d, const struct reg *s)
{
	uint8_t op = BPF_OP(in->code);
	/* shift counts as the ISA masks them */
	uint64_t sh = s->umin & (BPF_CLASS(in->code) == BPF_ALU64 ? 63 : 31);
	struct reg r;
	int64_t lo, hi;

	mark_unknown(&r);
	switch (op) {
	case BPF_ADD:
		if (d->umax + s->umax >= d->umax) {
			r.umin = d->umin + s->umin;
			r.umax = d->umax + s->umax;
		}
		if (!__builtin_add_overflow(d->smin, s->smin, &lo) &&
		    !__builtin_add_overflow(d->smax, s->smax, &hi)) {
			r.smin = lo;
			r.smax = hi;
		}
		break;
	case BPF_SUB:
		if (d->umin >= s->umax) {
			r.umin = d->umin - s->umax;
			r.umax = d->umax - s->umin;
		}
		if (!__builtin_sub_overflow(d->smin, s->smax, &lo) &&
		    !__builtin_sub_overflow(d->smax, s->smin, &hi)) {
			r.smin = lo;
			r.smax = hi;
		}
		break;
	case BPF_MUL:
		if (d->umax <= UINT32_MAX && s->umax <= UINT32_MAX) {
			r.umin = d->umin * s->umin;
			r.umax = d->umax * s->umax;
		}
		break;
	case BPF_AND:
		r.umax = MIN(d->umax, s->umax);
		break;
	case BPF_OR:
		r.umin = MAX(d->umin, s->umin);
		r.umax = fill_ones(d->umax | s->umax);
		break;
	case BPF_XOR:
		r.umax = fill_ones(d->umax | s->umax);
		break;
	case BPF_LSH:
		if (reg_is_const(s) && d->umax <= (UINT64_MAX >> sh)) {
			r.umin = d->umin << sh;
			r.umax = d->umax << sh;
		}
		break;
	case BPF_RSH:
		if (reg_is_const(s)) {
			r.umin = d->umin >> sh;
			r.umax = d->umax >> sh;
		} else {
			r.umax = d->umax;
		}
		break;
	case BPF_ARSH:
		if (reg_is_const(s) && BPF_CLASS(in->code) == BPF_ALU64) {
			r.smin = d->smin >> sh;
			r.smax = d->smax >> sh;
		}
		break;
	case BPF_DIV:
		if (in->off)
			break;
		if (reg_is_const(s) && s->umin) {
			r.umin = d->umin / s->umin;
			r.umax = d->umax / s->umin;
		} else {
			r.umax = d->umax;
		}
		break;
	case BPF_MOD:
		if (in->off)
			break;
		r.umax = d->umax;
		if (reg_is_const(s) && s->umin)
			r.umax = MIN(d->umax, s->umin - 1);
		break;
	case BPF_MOV:
		if (!in->off) {
			r = *s;
		} else {
			int64_t m = (int64_t)1 << (in->off - 1);

			if (s->umax < (uint64_t)m) {
				r = *s;
			} else {
				r.smin = -m;
				r.smax = m - 1;
			}
		}
		break;
	case BPF_END:
		if (BPF_SRC(in->code) == BPF_TO_LE && BPF_CLASS(in->code) == BPF_ALU &&
		    in->imm < 64) {
			r.umax = ((uint64_t)1 << in->imm) - 1;
			if (d->umax <= r.umax)
				r = *d;
		} else if (in->imm < 64) {
			r.umax = ((uint64_t)1 << in->imm) - 1;
		}
		break;
	default:
		break;
	}
	reg_sync(&r);
	*d = r;
}

/* A scalar's value as seen by a 32-bit operation. */
static void to32(struct reg *r)
{
	if (reg_is_const(r)) {
		mark_const(r, (uint32_t)r->umin);
		return;
	}
	if (r->umax > UINT32_MAX) {
		mark_unknown(r);
		r->umax = UINT32_MAX;
		reg_sync(r);
	}
}

/* the operator as Linux's verifier log names it, by BPF_OP >> 4 */
static const char *const alu_str[16] = { "+=", "-=",  "*=",  "/=", "|=", "&=", "<<=",  ">>=",
					 "neg", "%=", "^=", "=", "s>>=", "endian" };

/*
 * Pointer arithmetic, in Linux's order (adjust_reg_min_max_vals, adjust_ptr_min_max_vals):
 * pointer op pointer; 32-bit ops; null-checks and types; sane offsets; then the operator.
 * Every loader here is privileged, so where Linux lets those through (allow_ptr_leaks:
 * pointer - pointer, 32-bit subtraction) the result is an unknown scalar.
 */
static int ptr_arith(struct venv *env, const struct bpf_insn *in, struct reg *d,
		     const struct reg *s)
{
	uint8_t op = BPF_OP(in->code);
	struct frame *f = cur_frame(env);
	struct reg ptr, off;

	if (is_pointer(d) && is_pointer(s)) {
		if (op == BPF_SUB) {
			mark_unknown(d);
			return 0;
		}
		return verr(env, -EACCES, "R%u pointer %s pointer prohibited\n", in->dst_reg,
			    alu_str[op >> 4]);
	}
	if (BPF_CLASS(in->code) == BPF_ALU) {
		if (op == BPF_SUB) {
			mark_unknown(d);
			return 0;
		}
		return verr(env, -EACCES, "R%u 32-bit pointer arithmetic prohibited\n", in->dst_reg);
	}
	ptr = is_pointer(d) ? *d : *s;
	off = is_pointer(d) ? *s : *d;
	switch (ptr.type) {
	case PTR_TO_STACK:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
	case PTR_TO_CTX:
	case PTR_TO_MEM:
	case PTR_TO_BTF_ID:
	case PTR_TO_PERCPU_BTF_ID:
	case PTR_TO_RDONLY_MEM:
	case PTR_TO_BTF_ID_UNTRUSTED:
		break;
	case CONST_PTR_TO_MAP:
		if (op == BPF_ADD && reg_is_const(&off) && off.umin == 0)
			break;
		/* fall through */
	default:
		return verr(env, -EACCES, "R%u pointer arithmetic on %s prohibited%s\n", in->dst_reg,
			    reg_name(&ptr),
			    reg_maybe_null(ptr.type) ?
				    ", null-check it first" : "");
	}
	/* Linux's check_reg_sane_offset: EINVAL */
	if (reg_is_const(&off) && (off.smin >= PTR_OFF_MAX || off.smin <= -PTR_OFF_MAX))
		return verr(env, -EINVAL, "math between %s pointer and %lld is not allowed\n",
			    reg_name(&ptr), (long long)off.smin);
	if (off.smin == INT64_MIN)
		return verr(env, -EINVAL,
			    "math between %s pointer and register with unbounded min value is not allowed\n",
			    reg_name(&ptr));
	if (off.smin >= PTR_OFF_MAX || off.smin <= -PTR_OFF_MAX)
		return verr(env, -EINVAL, "value %lld makes %s pointer be out of bounds\n",
			    (long long)off.smin, reg_name(&ptr));
	if (off.smax > PTR_OFF_MAX)
		return verr(env, -EACCES,
			    "math between %s pointer and register with unbounded min value is not allowed\n",
			    reg_name(&ptr));
	switch (op) {
	case BPF_ADD:
		break;
	case BPF_SUB:
		if (is_pointer(s))
			return verr(env, -EACCES, "R%u tried to subtract pointer from scalar\n",
				    in->dst_reg);
		if (ptr.type == PTR_TO_STACK)
			return verr(env, -EACCES, "R%u subtraction from stack pointer prohibited\n",
				    in->dst_reg);
		break;
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
		return verr(env, -EACCES, "R%u bitwise operator %s on pointer prohibited\n",
			    in->dst_reg, alu_str[op >> 4]);
	default:
		return verr(env, -EACCES, "R%u pointer arithmetic with %s operator prohibited\n",
			    in->dst_reg, alu_str[op >> 4]);
	}
	/* the scalar's bounds become the pointer's offset */
	if (!is_pointer(d))
		mark_reg_precise(env, in->dst_reg);
	else if (BPF_SRC(in->code) == BPF_X)
		mark_reg_precise(env, in->src_reg);
	if (ptr.type == CONST_PTR_TO_MAP) {
		f->regs[in->dst_reg] = ptr; /* + 0 */
		return 0;
	}
	if (reg_is_const(&off)) {
		int64_t c = op == BPF_ADD ? off.smin : -off.smin;

		if (ptr.off + c <= -PTR_OFF_MAX || ptr.off + c >= PTR_OFF_MAX)
			return verr(env, -EINVAL, "%s pointer offset %lld is not allowed\n",
				    reg_name(&ptr), (long long)(ptr.off + c));
		ptr.off += (int32_t)c;
	} else {
		/* a ctx pointer may move by a variable amount; dereferencing it is refused
		 * (verify_mem.c ctx_access), as on Linux */
		if (op == BPF_ADD) {
			ptr.smin += off.smin;
			ptr.smax += off.smax;
		} else {
			ptr.smin -= off.smax;
			ptr.smax -= off.smin;
		}
		if (ptr.smin < -PTR_OFF_MAX || ptr.smax > PTR_OFF_MAX)
			return verr(env, -EACCES, "R%u pointer offset out of bounds\n", in->dst_reg);
		ptr.umin = ptr.smin >= 0 ? (uint64_t)ptr.smin : 0;
		ptr.umax = ptr.smin >= 0 ? (uint64_t)ptr.smax : UINT64_MAX;
	}
	f->regs[in->dst_reg] = ptr;
	return 0;
}

int check_alu(struct venv *env, const struct bpf_insn *in)
{
	struct frame *f = cur_frame(env);
	/* byte-order ops are as wide as their imm says, in either class */
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64 || BPF_OP(in->code) == BPF_END;
	uint8_t op = BPF_OP(in->code);
	struct reg *d = &f->regs[in->dst_reg], s;
	int err;

	if (BPF_SRC(in->code) == BPF_X && op != BPF_NEG && op != BPF_END) {
		err = check_reg_read(env, in->src_reg);
		if (err)
			return err;
		s = f->regs[in->src_reg];
	} else {
		mark_const(&s, is64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm);
	}
	if (op != BPF_MOV) {
		err = check_reg_read(env, in->dst_reg);
		if (err)
			return err;
	}
	if ((op == BPF_DIV || op == BPF_MOD) && BPF_SRC(in->code) == BPF_K && !in->imm)
		return verr(env, -EINVAL, "div by zero\n");
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && BPF_SRC(in->code) == BPF_K &&
	    (in->imm < 0 || in->imm >= (BPF_CLASS(in->code) == BPF_ALU64 ? 64 : 32)))
		return verr(env, -EINVAL, "invalid shift %d\n", in->imm);
	err = check_reg_write(env, in->dst_reg);
	if (err)
		return err;
	if ((op == BPF_DIV || op == BPF_MOD) && in->off != 0 && in->off != 1)
		return verr(env, -EINVAL, "BPF_ALU uses reserved fields\n");
	if (op == BPF_MOV) {
		if (is64 && !in->off) {
			*d = s;
			return 0;
		}
		if (is_pointer(&s)) {
			mark_unknown(d);
			if (!is64) {
				d->umax = UINT32_MAX;
				reg_sync(d);
			}
			return 0;
		}
		/* a scalar moved in (32-bit or sign-extending): whatever d held is gone, a
		 * pointer too; the range code below computes it from s alone */
		mark_unknown(d);
	}
	if (is_pointer(d) || is_pointer(&s)) {
		if (op == BPF_NEG || op == BPF_END) {
			mark_unknown(d); /* privileged, as Linux's allow_ptr_leaks */
			return 0;
		}
		return ptr_arith(env, in, d, &s);
	}
	if (!is64) {
		to32(d);
		to32(&s);
	}
	if ((reg_is_const(d) || op == BPF_MOV) && reg_is_const(&s) && op != BPF_NEG &&
	    op != BPF_END) {
		mark_const(d, alu_eval(in, d->umin, s.umin));
	} else if ((op == BPF_NEG || op == BPF_END) && reg_is_const(d)) {
		mark_const(d, alu_eval(in, d->umin, 0));
	} else if (op == BPF_NEG || (!is64 && (op == BPF_ARSH || in->off))) {
		mark_unknown(d);
	} else {
		alu_range(in, d, &s);
	}
	if (!is64 && (d->umax > UINT32_MAX || d->type != SCALAR)) {
		mark_unknown(d);
		d->umax = UINT32_MAX;
		reg_sync(d);
	}
	return 0;
}

