/*
 * interp.c - the eBPF interpreter: decoding to threaded code and the two dispatch loops.
 *
 * Implements the eBPF ISA through v4 (RFC 9669): ALU/ALU64 including sdiv/smod, movsx and
 * bswap; JMP/JMP32 including gotol (JMP32|JA with imm); LDX (also sign-extending), ST, STX;
 * atomics add/and/or/xor with and without fetch, xchg, cmpxchg; lddw (map pseudo sources are
 * already pointers here); helper calls; bpf-to-bpf calls with their own frames.
 *
 * Decoding maps each slot to a handler label once, at load time; running then costs one load
 * and one indirect jump of dispatch per instruction and no checks (the verifier proved safety).
 * bpf_tail_call (a verified program's only: its map holds programs) continues in the slot's
 * program in place of the calling frame, at most BPF_MAX_TAIL_CALLS deep on a call path, as
 * Linux 6.1's arm64 JIT counts them (also from subprograms, which its interpreter refuses).
 * Not here: verification (verify*.c), helpers (helpers.c), LD_ABS/LD_IND.
 */
#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

#include "bpf_internal.h"
#include "interp_ops.h"

/* Unaligned-capable access: the ISA allows unaligned loads and stores. */
struct bpf_u16u {
	uint16_t v;
} __attribute__((packed, may_alias));
struct bpf_u32u {
	uint32_t v;
} __attribute__((packed, may_alias));
struct bpf_u64u {
	uint64_t v;
} __attribute__((packed, may_alias));

static inline uint64_t bpf_sdiv64(uint64_t a, uint64_t b)
{
	if (!b)
		return 0;
	if (b == (uint64_t)-1)
		return -a; /* INT64_MIN / -1 wraps to INT64_MIN */
	return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t bpf_smod64(uint64_t a, uint64_t b)
{
	if (!b)
		return a;
	if (b == (uint64_t)-1)
		return 0;
	return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint32_t bpf_sdiv32(uint32_t a, uint32_t b)
{
	if (!b)
		return 0;
	if (b == (uint32_t)-1)
		return -a;
	return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint32_t bpf_smod32(uint32_t a, uint32_t b)
{
	if (!b)
		return a;
	if (b == (uint32_t)-1)
		return 0;
	return (uint32_t)((int32_t)a % (int32_t)b);
}

/* A bpf-to-bpf call's frame in the interpreter: where to return, the caller's r6..r10 and its
 * tail-call count. */
struct bpf_iframe {
	const struct bpf_dinsn *ret;
	uint64_t saved[5];
	unsigned int tail_calls;
};

/*
 * Tail calls from subprogram frames (at most one arena a run, made by the first): the frames
 * go on past BPF_MAX_FRAMES (each tail-called program may nest BPF_MAX_FRAMES - 1 calls
 * deeper than the frame it replaced, and at most BPF_MAX_TAIL_CALLS of them are live), and
 * the program tail-called with count k gets stack k: the frames below it stay live until it
 * returns, and a program running with count k only makes tail calls with larger counts, so
 * no live stack is reused.
 */
#define BPF_TAIL_ARENA_FRAMES (BPF_MAX_FRAMES * (BPF_MAX_TAIL_CALLS + 1))
struct bpf_tail_arena {
	struct bpf_iframe frames[BPF_TAIL_ARENA_FRAMES];
	uint64_t stack[BPF_MAX_TAIL_CALLS][BPF_STACK_SIZE / 8] __attribute__((aligned(16)));
};

static struct bpf_tail_arena *bpf_tail_arena_new(const struct bpf_iframe *frames, unsigned int depth)
{
	struct bpf_tail_arena *a = ksvc_alloc(sizeof(*a));

	if (a)
		__builtin_memcpy(a->frames, frames, depth * sizeof(*frames));
	return a;
}

/* the top of stack k (1 .. BPF_MAX_TAIL_CALLS) */
static inline void *bpf_tail_arena_stack(struct bpf_tail_arena *a, unsigned int k)
{
	return a->stack[k - 1] + BPF_STACK_SIZE / 8;
}

#define INTERP_FN interp_fast
#define INTERP_COUNTING 0
#include "interp_body.h"
#undef INTERP_FN
#undef INTERP_COUNTING

#define INTERP_FN interp_counting
#define INTERP_COUNTING 1
#include "interp_body.h"
#undef INTERP_FN
#undef INTERP_COUNTING

/* ALU operation index (BPF_OP >> 4) -> handler, 64-bit X form; K is +1, 32-bit is +ALU32. */
static const uint8_t alu_base[16] = {
	[BPF_ADD >> 4] = BPF_OP_ADD64_X, [BPF_SUB >> 4] = BPF_OP_SUB64_X,
	[BPF_MUL >> 4] = BPF_OP_MUL64_X, [BPF_DIV >> 4] = BPF_OP_DIV64_X,
	[BPF_OR >> 4] = BPF_OP_OR64_X,	 [BPF_AND >> 4] = BPF_OP_AND64_X,
	[BPF_LSH >> 4] = BPF_OP_LSH64_X, [BPF_RSH >> 4] = BPF_OP_RSH64_X,
	[BPF_NEG >> 4] = BPF_OP_NEG64,	 [BPF_MOD >> 4] = BPF_OP_MOD64_X,
	[BPF_XOR >> 4] = BPF_OP_XOR64_X, [BPF_MOV >> 4] = BPF_OP_MOV64_X,
	[BPF_ARSH >> 4] = BPF_OP_ARSH64_X,
};
#define ALU32_DELTA (BPF_OP_ADD32_X - BPF_OP_ADD64_X)

static const uint8_t jmp_base[16] = {
	[BPF_JEQ >> 4] = BPF_OP_JEQ64_X,   [BPF_JNE >> 4] = BPF_OP_JNE64_X,
	[BPF_JGT >> 4] = BPF_OP_JGT64_X,   [BPF_JGE >> 4] = BPF_OP_JGE64_X,
	[BPF_JLT >> 4] = BPF_OP_JLT64_X,   [BPF_JLE >> 4] = BPF_OP_JLE64_X,
	[BPF_JSET >> 4] = BPF_OP_JSET64_X, [BPF_JSGT >> 4] = BPF_OP_JSGT64_X,
	[BPF_JSGE >> 4] = BPF_OP_JSGE64_X, [BPF_JSLT >> 4] = BPF_OP_JSLT64_X,
	[BPF_JSLE >> 4] = BPF_OP_JSLE64_X,
};
#define JMP32_DELTA (BPF_OP_JEQ32_X - BPF_OP_JEQ64_X)

static int decode_alu(const struct bpf_insn *in)
{
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	unsigned int op = BPF_OP(in->code);
	bool k = BPF_SRC(in->code) == BPF_K;
	int base;

	if (op == BPF_END) {
		static const uint8_t le[] = { BPF_OP_LE16, BPF_OP_LE32, BPF_OP_LE64 };
		static const uint8_t be[] = { BPF_OP_BE16, BPF_OP_BE32, BPF_OP_BE64 };
		static const uint8_t sw[] = { BPF_OP_BSWAP16, BPF_OP_BSWAP32, BPF_OP_BSWAP64 };
		int w = in->imm == 16 ? 0 : in->imm == 32 ? 1 : in->imm == 64 ? 2 : -1;

		if (w < 0)
			return BPF_OP_BAD;
		if (is64)
			return k ? sw[w] : BPF_OP_BAD;
		return k ? le[w] : be[w];
	}
	if (op == BPF_NEG)
		return is64 ? BPF_OP_NEG64 : BPF_OP_NEG32;
	if (op == BPF_MOV && !k && in->off) {
		if (in->off == 8)
			return is64 ? BPF_OP_MOVSX8_64 : BPF_OP_MOVSX8_32;
		if (in->off == 16)
			return is64 ? BPF_OP_MOVSX16_64 : BPF_OP_MOVSX16_32;
		if (in->off == 32 && is64)
			return BPF_OP_MOVSX32_64;
		return BPF_OP_BAD;
	}
	if ((op >> 4) >= 16 || (!alu_base[op >> 4] && op != BPF_ADD))
		return BPF_OP_BAD;
	base = alu_base[op >> 4];
	if ((op == BPF_DIV || op == BPF_MOD) && in->off == 1)
		base = op == BPF_DIV ? BPF_OP_SDIV64_X : BPF_OP_SMOD64_X;
	return base + (k ? 1 : 0) + (is64 ? 0 : ALU32_DELTA);
}

static int decode_jmp(const struct bpf_insn *in)
{
	bool is64 = BPF_CLASS(in->code) == BPF_JMP;
	unsigned int op = BPF_OP(in->code);

	switch (op) {
	case BPF_JA:
		return is64 ? BPF_OP_JA : BPF_OP_JA32;
	case BPF_CALL:
		if (!is64)
			return BPF_OP_BAD;
		if (BPF_SRC(in->code) == BPF_X)
			return BPF_OP_CALLX;
		return in->src_reg == BPF_PSEUDO_CALL ? BPF_OP_CALL_LOCAL : BPF_OP_CALL;
	case BPF_EXIT:
		return is64 ? BPF_OP_EXIT : BPF_OP_BAD;
	default:
		if (!jmp_base[op >> 4])
			return BPF_OP_BAD;
		return jmp_base[op >> 4] + (BPF_SRC(in->code) == BPF_K) + (is64 ? 0 : JMP32_DELTA);
	}
}

static int decode_atomic(const struct bpf_insn *in)
{
	int base = BPF_SIZE(in->code) == BPF_DW ? BPF_OP_AADD64 : BPF_OP_AADD32;

	switch (in->imm) {
	case BPF_ADD: return base + 0;
	case BPF_OR: return base + 1;
	case BPF_AND: return base + 2;
	case BPF_XOR: return base + 3;
	case BPF_ADD | BPF_FETCH: return base + 4;
	case BPF_OR | BPF_FETCH: return base + 5;
	case BPF_AND | BPF_FETCH: return base + 6;
	case BPF_XOR | BPF_FETCH: return base + 7;
	case BPF_XCHG: return base + 8;
	case BPF_CMPXCHG: return base + 9;
	default: return BPF_OP_BAD;
	}
}

/* The handler for one instruction (BPF_OP_BAD for anything outside the ISA). */
static int decode_one(const struct bpf_insn *in)
{
	static const uint8_t sz[4] = { [BPF_W >> 3] = 2, [BPF_H >> 3] = 1, [BPF_B >> 3] = 0,
				       [BPF_DW >> 3] = 3 };
	unsigned int size = sz[BPF_SIZE(in->code) >> 3];

	switch (BPF_CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return decode_alu(in);
	case BPF_JMP:
	case BPF_JMP32:
		return decode_jmp(in);
	case BPF_LDX:
		if (BPF_MODE(in->code) == BPF_MEM)
			return BPF_OP_LDXB + size;
		if (BPF_MODE(in->code) == BPF_MEMSX && size < 3)
			return BPF_OP_LDXSB + size;
		if (BPF_MODE(in->code) == BPF_PROBE_MEM)
			return BPF_OP_PLDXB + size;
		if (BPF_MODE(in->code) == BPF_PROBE_MEMSX && size < 3)
			return BPF_OP_PLDXSB + size;
		return BPF_OP_BAD;
	case BPF_ST:
		return BPF_MODE(in->code) == BPF_MEM ? BPF_OP_STB + size : BPF_OP_BAD;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_MEM)
			return BPF_OP_STXB + size;
		if (BPF_MODE(in->code) == BPF_ATOMIC && size >= 2)
			return decode_atomic(in);
		return BPF_OP_BAD;
	case BPF_LD:
		return in->code == (BPF_LD | BPF_IMM | BPF_DW) ? BPF_OP_LDDW : BPF_OP_BAD;
	}
	return BPF_OP_BAD;
}

int bpf_interp_op(const struct bpf_insn *in)
{
	return decode_one(in);
}

void bpf_interp_decode(const struct bpf_insn *insns, uint32_t len, struct bpf_dinsn *out,
		       uint32_t frame, bool counting, uint32_t prog_type)
{
	const void *const *labels;

	if (counting)
		interp_counting(NULL, 0, 0, 0, 0, NULL, NULL, &labels);
	else
		interp_fast(NULL, 0, 0, 0, 0, NULL, NULL, &labels);
	for (uint32_t i = 0; i < len; i++) {
		const struct bpf_insn *in = &insns[i];
		int op = decode_one(in);

		/* a verified program's bpf_tail_call jumps (Linux's BPF_TAIL_CALL); on the test
		 * path it stays a call of the table's function, a tail call that finds nothing */
		if (op == BPF_OP_CALL && in->imm == BPF_FUNC_tail_call && prog_type && !counting)
			op = BPF_OP_TAIL_CALL;

		out[i].op = labels[op];
		out[i].dst = in->dst_reg;
		out[i].src = in->src_reg;
		out[i].off = in->off;
		out[i].imm = in->imm;
		out[i].k = (uint64_t)(int64_t)in->imm;
		switch (op) {
		case BPF_OP_CALL_LOCAL:
			out[i].off = (int16_t)frame; /* the caller's frame: the callee's r10 goes below */
			out[i].target = &out[i + 1 + in->imm];
			break;
		case BPF_OP_JA32:
			out[i].target = &out[i + 1 + in->imm];
			break;
		case BPF_OP_CALL:
			out[i].fn = bpf_helper_impl(in->imm, prog_type);
			break;
		case BPF_OP_CALLX:
		case BPF_OP_EXIT:
		case BPF_OP_TAIL_CALL:
			break;
		case BPF_OP_LDDW:
			if (i + 1 < len) {
				out[i].k = (uint32_t)in->imm | (uint64_t)(uint32_t)insns[i + 1].imm << 32;
				/* a callback: its decoded entry, bit 0 set for the counting loop */
				if (in->src_reg == BPF_PSEUDO_FUNC)
					out[i].k = (uint64_t)in->imm + i + 1 < len ?
							   (uintptr_t)&out[i + 1 + in->imm] | counting : 0;
				/* the second slot is data: never dispatched */
				out[i + 1].op = labels[BPF_OP_BAD];
				i++;
			}
			break;
		default:
			if (BPF_CLASS(in->code) == BPF_JMP || BPF_CLASS(in->code) == BPF_JMP32)
				out[i].target = &out[i + 1 + in->off];
			break;
		}
	}
}

uint64_t bpf_interp_run(const struct bpf_dinsn *prog, uint64_t r1, uint64_t r2, void *stack_top,
			uint64_t *count)
{
	if (count)
		return interp_counting(prog, r1, r2, 0, 0, stack_top, count, NULL);
	return interp_fast(prog, r1, r2, 0, 0, stack_top, NULL, NULL);
}

/*
 * A callback runs on a stack of its own: the verifier kept the frames from the callback down
 * within BPF_STACK_SIZE together (combined stack check), so one frame's worth is enough.  Its
 * instructions are not added to a counting run's count.  fn 0: a callback the verifier-free
 * path could not place; nothing runs.
 */
uint64_t bpf_callback_run(uint64_t fn, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4)
{
	uint64_t stack[BPF_STACK_SIZE / 8] __attribute__((aligned(16)));
	const struct bpf_dinsn *entry = (const struct bpf_dinsn *)(uintptr_t)(fn & ~1ull);
	uint64_t n;

	if (!entry)
		return 0;
	if (fn & 1)
		return interp_counting(entry, r1, r2, r3, r4, stack + BPF_STACK_SIZE / 8, &n, NULL);
	return interp_fast(entry, r1, r2, r3, r4, stack + BPF_STACK_SIZE / 8, NULL, NULL);
}
