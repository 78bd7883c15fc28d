/*
 * jit.c - the arm64 eBPF JIT: translates a structurally valid program (verified, or checked by
 * bpf_check_structure on the test path) to A64 code, with the same results as interp.c.
 *
 * Covers the ISA through v4 as the interpreter does: ALU/ALU64 (32-bit forms zero-extend;
 * x/0 = 0 and x%0 = x, INT_MIN/-1 = INT_MIN, which A64's udiv/sdiv/msub give as they are;
 * shift counts masked as lslv/lsrv/asrv do), movsx, byte swaps, JMP/JMP32 and gotol, lddw
 * (map pseudo sources are already addresses), LDX/LDXSX/ST/STX of every size, helper calls
 * (the interpreter's table, AAPCS64: r1-r5 are x0-x4 already), bpf-to-bpf calls with the
 * interpreter's frame rule, and the atomics in LSE form or as LDAXR/STLXR loops.
 * Not here: callx (test path only: such programs stay interpreted), tail calls and LD_ABS/IND
 * (the interpreter has none either).  Anything this file refuses falls back to the interpreter.
 *
 * Code shape: with bpf-to-bpf calls, a prologue saves the callee-saved registers, then pushes
 * a call frame whose return address is the epilogue; every BPF exit returns through its frame
 * ([sp]) so the main program and subprograms exit alike.  A local call pushes {return, r10,
 * r6..r9}, moves r10 down by the caller's frame, and restores them on return; the frame depth
 * is counted (x26) as the interpreter counts it, and running out ends the program with r0 as it
 * stands.  Without them (the common case, and the one run on every overflow) the frame is
 * lean: only the callee-saved registers the program names are saved, and an exit branches to
 * the epilogue.
 * A map_lookup_elem call whose map is known where it is made (r1 set by an lddw of one of the
 * program's maps in the same straight-line code) calls that map's lookup directly, as Linux's
 * fixup resolves map ops at load time, or the lookup the map has for its key size
 * (ops->lookup_for); on an ARRAY it is inline (bounds check, then base + index * value size,
 * as Linux's array_map_gen_lookup emits it).  get_current_pid_tgid is inline where the kernel says where the current
 * task's ids are (ksvc_current_layout): a few loads rather than a call on every overflow.
 * Two passes: the first only measures each instruction, the second emits with known targets.
 */
#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <bpf/jit.h>
#include "bpf_internal.h"
#include "interp_ops.h"
#include "jit_a64.h"

/* BPF register -> A64 register.  r0 is x7 so helper arguments r1-r5 sit in x0-x4. */
static const uint8_t reg_map[11] = { 7, 0, 1, 2, 3, 4, 19, 20, 21, 22, 25 };
#define T1 9 /* scratch */
#define T2 10
#define T3 11
#define TA 12 /* a computed address */
#define TS 13 /* exclusive store status */
#define DEPTH 26
#define SAVED_SP 27

#define MAX_WORDS (1u << 20) /* 4 MiB of code: b.cond reaches 1 MiB either way, checked */

_Atomic int bpf_jit_enable = 1;

int bpf_jit_enable_get(void)
{
	return atomic_load(&bpf_jit_enable);
}

int bpf_jit_enable_set(long v)
{
	if (v < 0 || v > 2)
		return -EINVAL;
	atomic_store(&bpf_jit_enable, (int)v);
	return 0;
}

struct jit {
	uint32_t *buf; /* NULL in the measuring pass */
	uint32_t n; /* words emitted so far */
	uint32_t *offs; /* word offset of each BPF slot; offs[len] is the epilogue */
	uint8_t *target; /* per slot: a jump or call lands there */
	uint32_t epilogue;
	const struct bpf_jit_opts *o;
	bool lean; /* no bpf-to-bpf calls: the lean frame */
	uint8_t saved[6]; /* lean: the callee-saved registers saved, nsaved of them */
	uint32_t nsaved;
	bool bad; /* a branch out of range: give up */
};

static void emit(struct jit *j, uint32_t w)
{
	if (j->buf)
		j->buf[j->n] = w;
	j->n++;
}

/* Branch offset in words from the current position to word target (second pass only). */
static int32_t rel(struct jit *j, uint32_t target, int bits)
{
	int64_t d = (int64_t)target - (int64_t)j->n;

	if (j->buf && (d >= (1ll << (bits - 1)) || d < -(1ll << (bits - 1))))
		j->bad = true;
	return (int32_t)d;
}

static void emit_mov_imm(struct jit *j, bool is64, int rd, uint64_t v)
{
	int nhw = is64 ? 4 : 2, zeros = 0, ones = 0;
	bool inv, first = true;

	if (!is64)
		v = (uint32_t)v;
	for (int i = 0; i < nhw; i++) {
		uint32_t h = (v >> (16 * i)) & 0xffff;

		zeros += h == 0;
		ones += h == 0xffff;
	}
	inv = ones > zeros;
	for (int i = 0; i < nhw; i++) {
		uint32_t h = (v >> (16 * i)) & 0xffff;

		if (h == (inv ? 0xffffu : 0))
			continue;
		if (first)
			emit(j, inv ? a64_movn(is64, rd, ~h, i) : a64_movz(is64, rd, h, i));
		else
			emit(j, a64_movk(is64, rd, h, i));
		first = false;
	}
	if (first)
		emit(j, inv ? a64_movn(is64, rd, 0, 0) : a64_movz(is64, rd, 0, 0));
}

/* rd = rn + imm (64-bit), for addresses and r10 adjustments. */
static void emit_add_imm64(struct jit *j, int rd, int rn, int64_t imm)
{
	if (imm >= 0 && imm < 4096) {
		emit(j, a64_addsub_imm(A64_ADDI, true, rd, rn, (uint32_t)imm));
	} else if (imm < 0 && imm > -4096) {
		emit(j, a64_addsub_imm(A64_SUBI, true, rd, rn, (uint32_t)-imm));
	} else {
		emit_mov_imm(j, true, T3, (uint64_t)imm);
		emit(j, a64_reg3(A64_ADD, true, rd, rn, T3));
	}
}

/* ---- ALU ---- */

static void emit_alu_reg(struct jit *j, unsigned int op, bool is64, int d, int s, bool sdiv)
{
	switch (op) {
	case BPF_ADD: emit(j, a64_reg3(A64_ADD, is64, d, d, s)); break;
	case BPF_SUB: emit(j, a64_reg3(A64_SUB, is64, d, d, s)); break;
	case BPF_MUL: emit(j, a64_madd(is64, false, d, d, s, A64_ZR)); break;
	case BPF_OR: emit(j, a64_reg3(A64_ORR, is64, d, d, s)); break;
	case BPF_AND: emit(j, a64_reg3(A64_AND, is64, d, d, s)); break;
	case BPF_XOR: emit(j, a64_reg3(A64_EOR, is64, d, d, s)); break;
	case BPF_LSH: emit(j, a64_reg3(A64_LSLV, is64, d, d, s)); break;
	case BPF_RSH: emit(j, a64_reg3(A64_LSRV, is64, d, d, s)); break;
	case BPF_ARSH: emit(j, a64_reg3(A64_ASRV, is64, d, d, s)); break;
	case BPF_MOV: emit(j, a64_mov(is64, d, s)); break;
	case BPF_DIV: emit(j, a64_reg3(sdiv ? A64_SDIV : A64_UDIV, is64, d, d, s)); break;
	case BPF_MOD:
		/* d - (d / s) * s: a zero divisor gives d, INT_MIN % -1 gives 0 */
		emit(j, a64_reg3(sdiv ? A64_SDIV : A64_UDIV, is64, T2, d, s));
		emit(j, a64_madd(is64, true, d, T2, s, d));
		break;
	}
}

static void emit_alu_imm(struct jit *j, unsigned int op, bool is64, int d, int32_t imm, bool sdiv)
{
	unsigned int width = is64 ? 64 : 32;

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
		if (imm > -4096 && imm < 4096) {
			bool add = (op == BPF_ADD) == (imm >= 0);
			uint32_t a = (uint32_t)(imm < 0 ? -imm : imm);

			emit(j, a64_addsub_imm(add ? A64_ADDI : A64_SUBI, is64, d, d, a));
			return;
		}
		break;
	case BPF_LSH:
		imm &= width - 1;
		emit(j, a64_bfm(is64, false, d, d, (width - (unsigned)imm) & (width - 1),
				width - 1 - (unsigned)imm));
		return;
	case BPF_RSH:
	case BPF_ARSH:
		imm &= width - 1;
		emit(j, a64_bfm(is64, op == BPF_ARSH, d, d, (unsigned)imm, width - 1));
		return;
	case BPF_MOV:
		emit_mov_imm(j, is64, d, (uint64_t)(int64_t)imm);
		return;
	}
	emit_mov_imm(j, is64, T1, (uint64_t)(int64_t)imm);
	emit_alu_reg(j, op, is64, d, T1, sdiv);
}

static int emit_alu(struct jit *j, const struct bpf_insn *in)
{
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	unsigned int op = BPF_OP(in->code);
	int d = reg_map[in->dst_reg], s = reg_map[in->src_reg];

	if (op == BPF_END) {
		bool swap = is64 || BPF_SRC(in->code) == BPF_X; /* bswap, or to big-endian */

		switch (in->imm) {
		case 16:
			if (swap)
				emit(j, a64_rev16w(d, d));
			emit(j, a64_bfm(false, false, d, d, 0, 15)); /* uxth */
			return 0;
		case 32:
			emit(j, swap ? a64_rev(false, d, d) : a64_mov(false, d, d));
			return 0;
		case 64:
			if (swap)
				emit(j, a64_rev(true, d, d));
			return 0;
		}
		return -EINVAL;
	}
	if (op == BPF_NEG) {
		emit(j, a64_reg3(A64_SUB, is64, d, A64_ZR, d));
		return 0;
	}
	if (op == BPF_MOV && BPF_SRC(in->code) == BPF_X && in->off) {
		unsigned int bits = (unsigned int)in->off;

		if (bits != 8 && bits != 16 && !(bits == 32 && is64))
			return -EINVAL;
		emit(j, a64_bfm(is64, true, d, s, 0, bits - 1));
		return 0;
	}
	if (op > BPF_END || (op != BPF_ADD && op != BPF_SUB && op != BPF_MUL && op != BPF_DIV &&
			     op != BPF_OR && op != BPF_AND && op != BPF_LSH && op != BPF_RSH &&
			     op != BPF_MOD && op != BPF_XOR && op != BPF_MOV && op != BPF_ARSH))
		return -EINVAL;
	if (BPF_SRC(in->code) == BPF_X)
		emit_alu_reg(j, op, is64, d, s, in->off == 1);
	else
		emit_alu_imm(j, op, is64, d, in->imm, in->off == 1);
	return 0;
}

/* ---- jumps ---- */

static int jmp_cond(unsigned int op)
{
	switch (op) {
	case BPF_JEQ: return A64_EQ;
	case BPF_JNE: return A64_NE;
	case BPF_JGT: return A64_HI;
	case BPF_JGE: return A64_HS;
	case BPF_JLT: return A64_LO;
	case BPF_JLE: return A64_LS;
	case BPF_JSGT: return A64_GT;
	case BPF_JSGE: return A64_GE;
	case BPF_JSLT: return A64_LT;
	case BPF_JSLE: return A64_LE;
	case BPF_JSET: return A64_NE;
	}
	return -1;
}

static void emit_cmp(struct jit *j, const struct bpf_insn *in, bool is64, int d, int s)
{
	unsigned int op = BPF_OP(in->code);
	int32_t imm = in->imm;

	if (BPF_SRC(in->code) == BPF_X) {
		emit(j, a64_reg3(op == BPF_JSET ? A64_ANDS : A64_SUBS, is64, A64_ZR, d, s));
		return;
	}
	if (op != BPF_JSET && imm >= 0 && imm < 4096) {
		emit(j, a64_addsub_imm(A64_SUBSI, is64, A64_ZR, d, (uint32_t)imm));
	} else if (op != BPF_JSET && imm < 0 && imm > -4096) {
		emit(j, a64_addsub_imm(A64_ADDSI, is64, A64_ZR, d, (uint32_t)-imm));
	} else {
		emit_mov_imm(j, is64, T1, (uint64_t)(int64_t)imm);
		emit(j, a64_reg3(op == BPF_JSET ? A64_ANDS : A64_SUBS, is64, A64_ZR, d, T1));
	}
}

/* ---- memory ---- */

static const int size_log2[4] = { [BPF_W >> 3] = 2, [BPF_H >> 3] = 1, [BPF_B >> 3] = 0,
				  [BPF_DW >> 3] = 3 };

static void emit_ldst(struct jit *j, int size, int opc, int rt, int rn, int16_t off)
{
	if (off >= -256 && off < 256) {
		emit(j, a64_ldst_unscaled(size, opc, rt, rn, off));
	} else {
		emit_mov_imm(j, true, T3, (uint64_t)(int64_t)off);
		emit(j, a64_ldst_reg(size, opc, rt, rn, T3));
	}
}

/* The address dst + off of an atomic, in a register. */
static int atomic_addr(struct jit *j, int d, int16_t off)
{
	if (!off)
		return d;
	emit_add_imm64(j, TA, d, off);
	return TA;
}

static int emit_atomic(struct jit *j, const struct bpf_insn *in)
{
	bool is64 = BPF_SIZE(in->code) == BPF_DW, fetch = in->imm & BPF_FETCH;
	int s = reg_map[in->src_reg], r0 = reg_map[0], a;
	unsigned int op = (unsigned int)in->imm & ~(unsigned int)BPF_FETCH;
	uint32_t lse, llsc;

	switch (in->imm) {
	case BPF_ADD: case BPF_ADD | BPF_FETCH: lse = A64_LDADD; llsc = A64_ADD; break;
	case BPF_OR: case BPF_OR | BPF_FETCH: lse = A64_LDSET; llsc = A64_ORR; break;
	case BPF_AND: case BPF_AND | BPF_FETCH: lse = A64_LDCLR; llsc = A64_AND; break;
	case BPF_XOR: case BPF_XOR | BPF_FETCH: lse = A64_LDEOR; llsc = A64_EOR; break;
	case BPF_XCHG: lse = A64_SWP; llsc = 0; break;
	case BPF_CMPXCHG: lse = 0; llsc = 0; break;
	default: return -EINVAL;
	}
	if (BPF_SIZE(in->code) != BPF_DW && BPF_SIZE(in->code) != BPF_W)
		return -EINVAL;
	a = atomic_addr(j, reg_map[in->dst_reg], in->off);
	if (j->o->lse) {
		if (in->imm == BPF_CMPXCHG) {
			emit(j, a64_casal(is64, r0, s, a)); /* r0: expected in, old value out */
		} else if (op == BPF_AND) {
			emit(j, a64_reg3(A64_ORN, is64, T1, A64_ZR, s)); /* ldclr clears bits */
			emit(j, a64_lse_al(lse, is64, T1, fetch ? s : T2, a));
		} else {
			emit(j, a64_lse_al(lse, is64, s, fetch || in->imm == BPF_XCHG ? s : T2, a));
		}
		return 0;
	}
	/* LL/SC: old value in T1, new in T2, retry until the store-exclusive succeeds */
	if (in->imm == BPF_CMPXCHG) {
		emit(j, a64_ldaxr(is64, T1, a));
		emit(j, a64_reg3(A64_SUBS, is64, A64_ZR, T1, r0));
		emit(j, a64_bcond(A64_NE, 3));
		emit(j, a64_stlxr(is64, TS, s, a));
		emit(j, a64_cbnz(false, TS, -4));
		emit(j, a64_mov(is64, r0, T1));
		return 0;
	}
	emit(j, a64_ldaxr(is64, T1, a));
	if (llsc) {
		emit(j, a64_reg3(llsc, is64, T2, T1, s));
		emit(j, a64_stlxr(is64, TS, T2, a));
		emit(j, a64_cbnz(false, TS, -3));
	} else {
		emit(j, a64_stlxr(is64, TS, s, a));
		emit(j, a64_cbnz(false, TS, -2));
	}
	if (fetch || in->imm == BPF_XCHG)
		emit(j, a64_mov(is64, s, T1));
	return 0;
}

/* ---- calls ---- */

/*
 * A BPF_PROBE_MEM(SX) load (a kernel object's field, typed by the verifier): a call to
 * bpf_probe_load, which reads 0 where the load would fault, with r0-r5 (x7, x0-x4) kept around
 * it on the native stack; dst gets the value, sign-extended for PROBE_MEMSX.
 */
static void emit_probe_load(struct jit *j, int size, bool sx, int d, int s, int16_t off)
{
	uint64_t fn;
	uint64_t (*load)(uintptr_t, uint32_t) = bpf_probe_load;
	static const unsigned int bits[4] = { 7, 15, 31, 63 };

	memcpy(&fn, &load, sizeof(fn));
	emit_add_imm64(j, TA, s, off);
	emit(j, a64_ldstp(false, 3, 0, 1, A64_SP, -48));
	emit(j, a64_ldstp(false, 2, 2, 3, A64_SP, 16));
	emit(j, a64_ldstp(false, 2, 4, reg_map[0], A64_SP, 32));
	emit(j, a64_mov(true, 0, TA));
	emit_mov_imm(j, false, 1, 1u << size);
	emit_mov_imm(j, true, T1, fn);
	emit(j, a64_blr(T1));
	emit(j, a64_mov(true, T2, 0));
	emit(j, a64_ldstp(true, 2, 4, reg_map[0], A64_SP, 32));
	emit(j, a64_ldstp(true, 2, 2, 3, A64_SP, 16));
	emit(j, a64_ldstp(true, 1, 0, 1, A64_SP, 48));
	if (sx)
		emit(j, a64_bfm(true, true, d, T2, 0, bits[size]));
	else
		emit(j, a64_mov(true, d, T2));
}

/*
 * The map r1 holds at the call in slot i, when the straight-line code before it (no jump
 * lands in between) set r1 with an lddw of one of the program's maps; else NULL.
 */
static struct bpf_map *call_map(const struct jit *j, const struct bpf_insn *insns, uint32_t i)
{
	for (uint32_t k = i; k-- > 0;) {
		const struct bpf_insn *in = &insns[k];
		unsigned int cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

		if (j->target[k + 1])
			return NULL; /* r1 may come from elsewhere */
		if (in->code == 0 && k > 0 && insns[k - 1].code == (BPF_LD | BPF_IMM | BPF_DW))
			continue; /* an lddw's second slot */
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			uint64_t a = (uint32_t)in->imm | (uint64_t)(uint32_t)insns[k + 1].imm << 32;

			if (in->dst_reg != 1)
				continue;
			if (in->src_reg != BPF_PSEUDO_MAP_FD)
				return NULL;
			for (uint32_t m = 0; m < j->o->nr_maps; m++)
				if ((uintptr_t)j->o->maps[m] == a)
					return j->o->maps[m];
			return NULL;
		}
		if (cls == BPF_JMP || cls == BPF_JMP32) {
			if (op == BPF_CALL || op == BPF_EXIT || op == BPF_JA)
				return NULL;
			continue; /* a conditional jump writes no register */
		}
		if ((cls == BPF_ST || cls == BPF_STX) && BPF_MODE(in->code) == BPF_MEM)
			continue;
		if (in->dst_reg == 1 || in->src_reg == 1 || cls == BPF_STX)
			return NULL; /* r1 written (or an atomic's fetch: be conservative) */
	}
	return NULL;
}

/* A zero-extending load of 1 << size bytes at rn + off, when one LDR (unsigned offset) can. */
static bool emit_ldr_field(struct jit *j, int size, int rt, int rn, uint32_t off)
{
	if (off & ((1u << size) - 1) || (off >> size) > 4095)
		return false;
	emit(j, a64_ldr_uimm(size, rt, rn, off));
	return true;
}

/*
 * get_current_pid_tgid as ksvc_current_pid_tgid computes it, from the current task the CPU
 * record (TPIDR_EL1) names: tgid << 32 | tid, the tgid being the tid without a process.
 * Measured first (buf NULL): false when a field is out of reach and the helper is called.
 */
static bool emit_pid_tgid(struct jit *j)
{
	const struct ksvc_current_layout *l = j->o->cur;
	int r0 = reg_map[0];
	uint32_t n0 = j->n;
	bool ok;

	if (!l)
		return false;
	emit(j, a64_mrs_tpidr_el1(T1));
	ok = emit_ldr_field(j, 3, T1, T1, l->cpu_current) &&
	     emit_ldr_field(j, 2, r0, T1, l->task_tid) &&
	     emit_ldr_field(j, 3, T2, T1, l->task_proc);
	if (ok) {
		emit(j, a64_mov(false, T3, r0));
		emit(j, a64_cbz(true, T2, 2));
		ok = emit_ldr_field(j, 2, T3, T2, l->proc_tgid);
		emit(j, a64_reg3_lsl(A64_ORR, true, r0, r0, T3, 32));
	}
	if (!ok)
		j->n = n0; /* nothing kept: the measuring pass decides, the emitting one agrees */
	return ok;
}

/*
 * map_lookup_elem on a known ARRAY, inline as Linux's array_map_gen_lookup has it: the u32 key
 * at r2, NULL past max_entries, else the value's address (array_lookup's results).
 */
static bool emit_array_lookup(struct jit *j, const struct bpf_map *m)
{
	uint8_t *base;
	uint32_t elem, branch;
	int r0 = reg_map[0];

	if (!bpf_array_layout(m, &base, &elem) || !elem)
		return false;
	emit(j, a64_ldr_uimm(2, T1, reg_map[2], 0)); /* the index, zero-extended */
	emit_mov_imm(j, false, T2, m->max_entries);
	emit(j, a64_reg3(A64_SUBS, false, A64_ZR, T1, T2));
	branch = j->n;
	emit(j, a64_bcond(A64_HS, 0)); /* patched below: to the NULL */
	emit_mov_imm(j, true, T2, (uint64_t)(uintptr_t)base);
	if (!(elem & (elem - 1))) {
		emit(j, a64_reg3_lsl(A64_ADD, true, r0, T2, T1, (unsigned)__builtin_ctz(elem)));
	} else {
		emit_mov_imm(j, true, T3, elem);
		emit(j, a64_madd(true, false, r0, T1, T3, T2));
	}
	emit(j, a64_b(2));
	if (j->buf)
		j->buf[branch] = a64_bcond(A64_HS, (int32_t)(j->n - branch));
	emit(j, a64_movz(true, r0, 0, 0));
	return true;
}

static int emit_helper_call(struct jit *j, const struct bpf_insn *insns, uint32_t i)
{
	int32_t id = insns[i].imm;
	bpf_helper_fn fn;
	uint64_t addr;

	/* bpf_tail_call: such programs are left to the interpreter */
	if (id == BPF_FUNC_tail_call || !(fn = bpf_helper_impl(id, j->o->prog_type)))
		return -EINVAL;
	if (id == BPF_FUNC_get_current_pid_tgid && emit_pid_tgid(j))
		return 0;
	memcpy(&addr, &fn, sizeof(addr)); /* code pointer as a number */
	if (id == BPF_FUNC_map_lookup_elem && j->o->verified) {
		struct bpf_map *m = call_map(j, insns, i);

		/* the helper is m->ops->lookup(m, key) with the same arguments, or the lookup the
		 * map has for its key size */
		bpf_map_lookup_fn f = m ? m->ops->lookup_for ? m->ops->lookup_for(m) : NULL : NULL;

		if (m && emit_array_lookup(j, m))
			return 0;

		if (m && !f)
			f = m->ops->lookup;
		if (f)
			memcpy(&addr, &f, sizeof(addr));
	}
	emit_mov_imm(j, true, T1, addr);
	emit(j, a64_blr(T1));
	emit(j, a64_mov(true, reg_map[0], 0));
	return 0;
}

/* A bpf-to-bpf call: save r6-r10 and the return point, run the callee, restore. */
static void emit_local_call(struct jit *j, uint32_t target)
{
	emit(j, a64_addsub_imm(A64_SUBSI, true, A64_ZR, DEPTH, BPF_MAX_FRAMES - 1));
	emit(j, a64_bcond(A64_HS, rel(j, j->epilogue, 19)));
	emit(j, a64_addsub_imm(A64_ADDI, true, DEPTH, DEPTH, 1));
	emit(j, a64_adr(T1, 6)); /* the return point, after the b below */
	emit(j, a64_ldstp(false, 3, T1, reg_map[10], A64_SP, -48));
	emit(j, a64_ldstp(false, 2, reg_map[6], reg_map[7], A64_SP, 16));
	emit(j, a64_ldstp(false, 2, reg_map[8], reg_map[9], A64_SP, 32));
	emit_add_imm64(j, reg_map[10], reg_map[10], -(int64_t)j->o->frame_size);
	if (j->o->frame_size >= 4096)
		j->bad = true; /* the adr above counts one instruction for this */
	emit(j, a64_b(rel(j, target, 26)));
	/* return point */
	emit(j, a64_ldstp(true, 2, reg_map[6], reg_map[7], A64_SP, 16));
	emit(j, a64_ldstp(true, 2, reg_map[8], reg_map[9], A64_SP, 32));
	emit(j, a64_ldstp(true, 1, T1, reg_map[10], A64_SP, 48));
	emit(j, a64_addsub_imm(A64_SUBI, true, DEPTH, DEPTH, 1));
}

/* ---- one instruction ---- */

static int emit_insn(struct jit *j, const struct bpf_insn *insns, uint32_t i, uint32_t len)
{
	const struct bpf_insn *in = &insns[i];
	int d = reg_map[in->dst_reg & 15], s = reg_map[in->src_reg & 15];
	unsigned int cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	int size = size_log2[BPF_SIZE(in->code) >> 3];

	if (in->dst_reg > 10 || in->src_reg > 10)
		return -EINVAL;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		return emit_alu(j, in);
	case BPF_JMP:
	case BPF_JMP32: {
		bool is64 = cls == BPF_JMP;
		int64_t t;

		if (op == BPF_EXIT && is64) {
			if (j->lean) {
				if (i + 1 < len) /* else the epilogue follows */
					emit(j, a64_b(rel(j, j->epilogue, 26)));
				return 0;
			}
			emit(j, a64_ldr_x_uimm(T1, A64_SP, 0));
			emit(j, a64_br(T1));
			return 0;
		}
		if (op == BPF_CALL && is64 && BPF_SRC(in->code) == BPF_K) {
			if (in->src_reg != BPF_PSEUDO_CALL)
				return emit_helper_call(j, insns, i);
			t = (int64_t)i + 1 + in->imm;
			if (t < 0 || t >= len)
				return -EINVAL;
			emit_local_call(j, j->offs[t]);
			return 0;
		}
		if (op == BPF_CALL || op == BPF_EXIT)
			return -EINVAL; /* callx, and the 32-bit forms */
		t = (int64_t)i + 1 + (op == BPF_JA && !is64 ? in->imm : in->off);
		if (t < 0 || t >= len)
			return -EINVAL;
		if (op == BPF_JA) {
			emit(j, a64_b(rel(j, j->offs[t], 26)));
			return 0;
		}
		if (jmp_cond(op) < 0)
			return -EINVAL;
		emit_cmp(j, in, is64, d, s);
		emit(j, a64_bcond(jmp_cond(op), rel(j, j->offs[t], 19)));
		return 0;
	}
	case BPF_LDX:
		if (BPF_MODE(in->code) == BPF_MEM) {
			emit_ldst(j, size, 1, d, s, in->off);
			return 0;
		}
		if (BPF_MODE(in->code) == BPF_MEMSX && size < 3) {
			emit_ldst(j, size, 2, d, s, in->off);
			return 0;
		}
		if (BPF_MODE(in->code) == BPF_PROBE_MEM ||
		    (BPF_MODE(in->code) == BPF_PROBE_MEMSX && size < 3)) {
			emit_probe_load(j, size, BPF_MODE(in->code) == BPF_PROBE_MEMSX, d, s, in->off);
			return 0;
		}
		return -EINVAL;
	case BPF_ST:
		if (BPF_MODE(in->code) != BPF_MEM)
			return -EINVAL;
		emit_mov_imm(j, size == 3, T2, (uint64_t)(int64_t)in->imm);
		emit_ldst(j, size, 0, T2, d, in->off);
		return 0;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_MEM) {
			emit_ldst(j, size, 0, s, d, in->off);
			return 0;
		}
		if (BPF_MODE(in->code) == BPF_ATOMIC)
			return emit_atomic(j, in);
		return -EINVAL;
	case BPF_LD:
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW) || i + 1 >= len)
			return -EINVAL;
		/* a callback's address (bpf_loop, for_each_map_elem) is the interpreter's decoded
		 * entry: such a program stays interpreted */
		if (in->src_reg == BPF_PSEUDO_FUNC)
			return -EINVAL;
		emit_mov_imm(j, true, d, (uint32_t)in->imm | (uint64_t)(uint32_t)insns[i + 1].imm << 32);
		return 0;
	}
	return -EINVAL;
}

/* ---- prologue, epilogue, passes ---- */

/* The lean frame: fp, lr, then the saved registers, 16-byte aligned. */
static int32_t lean_frame(const struct jit *j)
{
	return (int32_t)(16 + 8 * ((j->nsaved + 1) & ~1u));
}

static void emit_lean_prologue(struct jit *j)
{
	emit(j, a64_ldstp(false, 3, 29, 30, A64_SP, -lean_frame(j)));
	emit(j, a64_addsub_imm(A64_ADDI, true, 29, A64_SP, 0));
	for (uint32_t k = 0; k < j->nsaved; k += 2) {
		if (k + 1 < j->nsaved)
			emit(j, a64_ldstp(false, 2, j->saved[k], j->saved[k + 1], A64_SP, 16 + 8 * k));
		else
			emit(j, a64_ldstp(false, 2, j->saved[k], A64_ZR, A64_SP, 16 + 8 * k));
	}
	for (uint32_t k = 0; k < j->nsaved; k++)
		if (j->saved[k] == reg_map[10])
			emit(j, a64_mov(true, reg_map[10], 2)); /* the third argument: the stack top */
	if (!j->o->verified) {
		/* the interpreter starts with zeroed registers; the verifier rules out reads */
		static const int zero[] = { 2, 3, 4, 7 };

		for (unsigned int k = 0; k < sizeof(zero) / sizeof(zero[0]); k++)
			emit(j, a64_movz(true, zero[k], 0, 0));
		for (uint32_t k = 0; k < j->nsaved; k++)
			if (j->saved[k] != reg_map[10])
				emit(j, a64_movz(true, j->saved[k], 0, 0));
	}
}

static void emit_lean_epilogue(struct jit *j)
{
	emit(j, a64_mov(true, 0, reg_map[0]));
	for (uint32_t k = 0; k < j->nsaved; k += 2)
		emit(j, a64_ldstp(true, 2, j->saved[k], k + 1 < j->nsaved ? j->saved[k + 1] : A64_ZR,
				  A64_SP, 16 + 8 * k));
	emit(j, a64_ldstp(true, 1, 29, 30, A64_SP, lean_frame(j)));
	emit(j, a64_ret());
}

static void emit_prologue(struct jit *j)
{
	if (j->lean) {
		emit_lean_prologue(j);
		return;
	}
	emit(j, a64_ldstp(false, 3, 29, 30, A64_SP, -80));
	emit(j, a64_addsub_imm(A64_ADDI, true, 29, A64_SP, 0));
	emit(j, a64_ldstp(false, 2, 19, 20, A64_SP, 16));
	emit(j, a64_ldstp(false, 2, 21, 22, A64_SP, 32));
	emit(j, a64_ldstp(false, 2, 25, 26, A64_SP, 48));
	emit(j, a64_ldstp(false, 2, 27, 28, A64_SP, 64));
	emit(j, a64_mov(true, reg_map[10], 2)); /* the third argument: the stack top */
	emit(j, a64_movz(true, DEPTH, 0, 0));
	emit(j, a64_addsub_imm(A64_ADDI, true, SAVED_SP, A64_SP, 0));
	if (!j->o->verified) {
		/* the interpreter starts with zeroed registers; the verifier rules out reads */
		static const int zero[] = { 2, 3, 4, 7, 19, 20, 21, 22 };

		for (unsigned int k = 0; k < sizeof(zero) / sizeof(zero[0]); k++)
			emit(j, a64_movz(true, zero[k], 0, 0));
	}
	emit(j, a64_adr(T1, 0)); /* patched below: the epilogue */
	if (j->buf)
		j->buf[j->n - 1] = a64_adr(T1, (int32_t)(j->epilogue - (j->n - 1)));
	emit(j, a64_ldstp(false, 3, T1, A64_ZR, A64_SP, -16));
}

static void emit_epilogue(struct jit *j)
{
	if (j->lean) {
		emit_lean_epilogue(j);
		return;
	}
	emit(j, a64_addsub_imm(A64_ADDI, true, A64_SP, SAVED_SP, 0));
	emit(j, a64_mov(true, 0, reg_map[0]));
	emit(j, a64_ldstp(true, 2, 19, 20, A64_SP, 16));
	emit(j, a64_ldstp(true, 2, 21, 22, A64_SP, 32));
	emit(j, a64_ldstp(true, 2, 25, 26, A64_SP, 48));
	emit(j, a64_ldstp(true, 2, 27, 28, A64_SP, 64));
	emit(j, a64_ldstp(true, 1, 29, 30, A64_SP, 80));
	emit(j, a64_ret());
}

static int jit_pass(struct jit *j, const struct bpf_insn *insns, uint32_t len)
{
	j->n = 0;
	j->bad = false;
	emit_prologue(j);
	for (uint32_t i = 0; i < len; i++) {
		int err;

		if (!j->buf)
			j->offs[i] = j->n;
		else if (j->offs[i] != j->n)
			return -EFAULT; /* the passes disagree: a JIT bug, keep interpreting */
		err = emit_insn(j, insns, i, len);
		if (err)
			return err;
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++;
			if (i < len)
				j->offs[i] = j->n; /* never a jump target */
		}
		if (j->n > MAX_WORDS)
			return -E2BIG;
	}
	j->offs[len] = j->n;
	if (!j->buf)
		j->epilogue = j->n;
	emit_epilogue(j);
	return j->bad ? -E2BIG : 0;
}

/*
 * Jump and call targets (j->target), whether the program makes bpf-to-bpf calls (j->lean
 * without), and for the lean frame the callee-saved registers it names (r6-r10).
 */
static void jit_scan(struct jit *j, const struct bpf_insn *insns, uint32_t len)
{
	bool used[11] = { false };

	j->lean = true;
	for (uint32_t i = 0; i < len; i++) {
		const struct bpf_insn *in = &insns[i];
		unsigned int cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
		int64_t t = -1;

		used[in->dst_reg <= 10 ? in->dst_reg : 0] = true;
		used[in->src_reg <= 10 ? in->src_reg : 0] = true;
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++; /* its second slot names no register */
			continue;
		}
		if (cls != BPF_JMP && cls != BPF_JMP32)
			continue;
		if (op == BPF_CALL) {
			if (in->src_reg == BPF_PSEUDO_CALL) {
				j->lean = false;
				t = (int64_t)i + 1 + in->imm;
			}
		} else if (op != BPF_EXIT) {
			t = (int64_t)i + 1 + (op == BPF_JA && cls == BPF_JMP32 ? in->imm : in->off);
		}
		if (t >= 0 && t < len)
			j->target[t] = 1;
	}
	j->nsaved = 0;
	for (int r = 6; r <= 10; r++)
		if (used[r])
			j->saved[j->nsaved++] = reg_map[r];
}

int bpf_jit_emit(const struct bpf_insn *insns, uint32_t len, const struct bpf_jit_opts *o,
		 uint32_t **code, uint32_t *nwords)
{
	struct jit j = { .o = o };
	int err;

	*code = NULL;
	if (!len)
		return -EINVAL;
	j.offs = ksvc_alloc(sizeof(uint32_t) * ((size_t)len + 1));
	j.target = ksvc_alloc((size_t)len + 1);
	if (!j.offs || !j.target) {
		ksvc_free(j.offs);
		ksvc_free(j.target);
		return -ENOMEM;
	}
	memset(j.target, 0, (size_t)len + 1);
	jit_scan(&j, insns, len);
	err = jit_pass(&j, insns, len);
	if (!err) {
		j.buf = ksvc_alloc(sizeof(uint32_t) * j.n);
		err = j.buf ? jit_pass(&j, insns, len) : -ENOMEM;
	}
	ksvc_free(j.offs);
	ksvc_free(j.target);
	if (err) {
		ksvc_free(j.buf);
		return err;
	}
	*code = j.buf;
	*nwords = j.n;
	return 0;
}

int bpf_jit_compile(const struct bpf_insn *insns, uint32_t len, const struct bpf_jit_opts *o,
		    struct bpf_jit_image *img)
{
	uint32_t *code, n;
	int err = bpf_jit_emit(insns, len, o, &code, &n);

	memset(img, 0, sizeof(*img));
	if (err)
		return err;
	img->text = ksvc_text_alloc(code, (size_t)n * 4);
	ksvc_free(code);
	if (!img->text)
		return -ENOMEM;
	img->len = n * 4;
	memcpy(&img->fn, &img->text, sizeof(img->fn)); /* data to code pointer */
	return 0;
}

void bpf_jit_free(struct bpf_jit_image *img)
{
	if (img->text)
		ksvc_text_free(img->text, img->len);
	memset(img, 0, sizeof(*img));
}
