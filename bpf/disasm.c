/*
 * disasm.c - one eBPF instruction as text, in the notation of Linux 6.1's verifier log
 * ("0: (bf) r6 = r1", "5: (85) call bpf_map_lookup_elem#1", "9: (95) exit").
 *
 * The verifier writes a line per instruction it walks at log_level 1 and 2, as Linux's
 * do_check does; tools read those lines back (libbpf finds the instruction of a failed CO-RE
 * relocation by its "N: (85) call unknown#195896080" line).  Instructions Linux 6.1 does not
 * know (the ISA v4 forms) are written as later Linux writes them.  A 64-bit immediate load
 * shows its whole value, map pointers included, as Linux does for a privileged loader.
 */
#include <linux/bpf.h>
#include <stdint.h>

#include <kern/format.h>
#include "bpf_internal.h"

/* Helper names by id, from the uapi header's list (Linux's func_id_str). */
#define HELPER_NAME(x) [BPF_FUNC_##x] = "bpf_" #x
static const char *const helper_names[] = { __BPF_FUNC_MAPPER(HELPER_NAME) };
#undef HELPER_NAME

const char *bpf_helper_id_name(int32_t id)
{
	if (id >= 0 && (uint32_t)id < sizeof(helper_names) / sizeof(helper_names[0]))
		return helper_names[id];
	return NULL;
}

static const char *const alu_op[16] = {
	[BPF_ADD >> 4] = "+=",  [BPF_SUB >> 4] = "-=", [BPF_MUL >> 4] = "*=",
	[BPF_DIV >> 4] = "/=",  [BPF_OR >> 4] = "|=",  [BPF_AND >> 4] = "&=",
	[BPF_LSH >> 4] = "<<=", [BPF_RSH >> 4] = ">>=", [BPF_NEG >> 4] = "neg",
	[BPF_MOD >> 4] = "%=",  [BPF_XOR >> 4] = "^=", [BPF_MOV >> 4] = "=",
	[BPF_ARSH >> 4] = "s>>=", [BPF_END >> 4] = "endian",
};

static const char *const jmp_op[16] = {
	[BPF_JA >> 4] = "jmp",   [BPF_JEQ >> 4] = "==",  [BPF_JGT >> 4] = ">",
	[BPF_JLT >> 4] = "<",    [BPF_JGE >> 4] = ">=",  [BPF_JLE >> 4] = "<=",
	[BPF_JSGT >> 4] = "s>",  [BPF_JSLT >> 4] = "s<", [BPF_JSGE >> 4] = "s>=",
	[BPF_JSLE >> 4] = "s<=", [BPF_JSET >> 4] = "&",  [BPF_JNE >> 4] = "!=",
	[BPF_CALL >> 4] = "call", [BPF_EXIT >> 4] = "exit",
};

static const char *const size_name[4] = {
	[BPF_W >> 3] = "u32", [BPF_H >> 3] = "u16", [BPF_B >> 3] = "u8", [BPF_DW >> 3] = "u64",
};

static const char *const class_name[8] = {
	[BPF_LD] = "ld", [BPF_LDX] = "ldx", [BPF_ST] = "st", [BPF_STX] = "stx",
	[BPF_ALU] = "alu", [BPF_JMP] = "jmp", [BPF_JMP32] = "jmp32", [BPF_ALU64] = "alu64",
};

static const char *const atomic_fetch_name[16] = {
	[BPF_ADD >> 4] = "add", [BPF_AND >> 4] = "and", [BPF_OR >> 4] = "or", [BPF_XOR >> 4] = "xor",
};

static int sz_bits(uint8_t code)
{
	static const int bits[4] = { 32, 16, 8, 64 };

	return bits[BPF_SIZE(code) >> 3];
}

static int dis_alu(char *b, size_t n, const struct bpf_insn *in)
{
	uint8_t code = in->code, op = BPF_OP(code);
	char r = BPF_CLASS(code) == BPF_ALU64 ? 'r' : 'w';

	if (op == BPF_END) {
		if (BPF_CLASS(code) == BPF_ALU64) /* ISA v4's unconditional swap */
			return ksnprintf(b, n, "(%02x) r%u = bswap%d r%u", code, in->dst_reg, in->imm,
					 in->dst_reg);
		return ksnprintf(b, n, "(%02x) r%u = %s%d r%u", code, in->dst_reg,
				 BPF_SRC(code) == BPF_TO_BE ? "be" : "le", in->imm, in->dst_reg);
	}
	if (op == BPF_NEG)
		return ksnprintf(b, n, "(%02x) %c%u = -%c%u", code, r, in->dst_reg, r, in->dst_reg);
	const char *name = alu_op[op >> 4]; /* NULL prints "(null)", as on Linux */

	/* ISA v4: signed division (off 1), sign-extending moves (off 8, 16, 32) */
	if ((op == BPF_DIV || op == BPF_MOD) && in->off == 1)
		name = op == BPF_DIV ? "s/=" : "s%=";
	if (BPF_SRC(code) == BPF_X) {
		if (op == BPF_MOV && in->off)
			return ksnprintf(b, n, "(%02x) %c%u = (s%d)%c%u", code, r, in->dst_reg, in->off,
					 r, in->src_reg);
		return ksnprintf(b, n, "(%02x) %c%u %s %c%u", code, r, in->dst_reg, name, r,
				 in->src_reg);
	}
	return ksnprintf(b, n, "(%02x) %c%u %s %d", code, r, in->dst_reg, name, in->imm);
}

static int dis_atomic(char *b, size_t n, const struct bpf_insn *in)
{
	uint8_t code = in->code;
	const char *sz = size_name[BPF_SIZE(code) >> 3], *w = BPF_SIZE(code) == BPF_DW ? "64" : "";
	int32_t op = in->imm & ~BPF_FETCH;

	if ((op == BPF_ADD || op == BPF_AND || op == BPF_OR || op == BPF_XOR) &&
	    !(in->imm & BPF_FETCH))
		return ksnprintf(b, n, "(%02x) lock *(%s *)(r%u %+d) %s r%u", code, sz, in->dst_reg,
				 in->off, alu_op[op >> 4], in->src_reg);
	if (op == BPF_ADD || op == BPF_AND || op == BPF_OR || op == BPF_XOR)
		return ksnprintf(b, n, "(%02x) r%u = atomic%s_fetch_%s((%s *)(r%u %+d), r%u)", code,
				 in->src_reg, w, atomic_fetch_name[op >> 4], sz, in->dst_reg, in->off,
				 in->src_reg);
	if (in->imm == BPF_CMPXCHG)
		return ksnprintf(b, n, "(%02x) r0 = atomic%s_cmpxchg((%s *)(r%u %+d), r0, r%u)", code,
				 w, sz, in->dst_reg, in->off, in->src_reg);
	if (in->imm == BPF_XCHG)
		return ksnprintf(b, n, "(%02x) r%u = atomic%s_xchg((%s *)(r%u %+d), r%u)", code,
				 in->src_reg, w, sz, in->dst_reg, in->off, in->src_reg);
	return ksnprintf(b, n, "BUG_%02x", code);
}

static int dis_jmp(char *b, size_t n, const struct bpf_insn *in)
{
	uint8_t code = in->code, op = BPF_OP(code);
	char r = BPF_CLASS(code) == BPF_JMP32 ? 'w' : 'r';

	if (op == BPF_CALL) {
		const char *name = in->src_reg ? NULL : bpf_helper_id_name(in->imm);

		if (in->src_reg == BPF_PSEUDO_CALL)
			return ksnprintf(b, n, "(%02x) call pc%+d", code, in->imm);
		if (in->src_reg == BPF_PSEUDO_KFUNC_CALL)
			name = "kernel-function";
		return ksnprintf(b, n, "(%02x) call %s#%d", code, name ? name : "unknown", in->imm);
	}
	if (op == BPF_JA && BPF_CLASS(code) == BPF_JMP)
		return ksnprintf(b, n, "(%02x) goto pc%+d", code, in->off);
	if (op == BPF_JA) /* ISA v4's gotol */
		return ksnprintf(b, n, "(%02x) gotol pc%+d", code, in->imm);
	if (op == BPF_EXIT && BPF_CLASS(code) == BPF_JMP)
		return ksnprintf(b, n, "(%02x) exit", code);
	if (BPF_SRC(code) == BPF_X)
		return ksnprintf(b, n, "(%02x) if %c%u %s %c%u goto pc%+d", code, r, in->dst_reg,
				 jmp_op[op >> 4], r, in->src_reg, in->off);
	return ksnprintf(b, n, "(%02x) if %c%u %s 0x%x goto pc%+d", code, r, in->dst_reg,
			 jmp_op[op >> 4], (uint32_t)in->imm, in->off);
}

int bpf_disasm(char *b, size_t n, const struct bpf_insn *in, uint32_t left)
{
	uint8_t code = in->code;
	const char *sz = size_name[BPF_SIZE(code) >> 3];

	switch (BPF_CLASS(code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return dis_alu(b, n, in);
	case BPF_STX:
		if (BPF_MODE(code) == BPF_MEM)
			return ksnprintf(b, n, "(%02x) *(%s *)(r%u %+d) = r%u", code, sz, in->dst_reg,
					 in->off, in->src_reg);
		if (BPF_MODE(code) == BPF_ATOMIC)
			return dis_atomic(b, n, in);
		return ksnprintf(b, n, "BUG_%02x", code);
	case BPF_ST:
		if (BPF_MODE(code) == BPF_MEM)
			return ksnprintf(b, n, "(%02x) *(%s *)(r%u %+d) = %d", code, sz, in->dst_reg,
					 in->off, in->imm);
		return ksnprintf(b, n, "BUG_st_%02x", code);
	case BPF_LDX:
		if (BPF_MODE(code) == BPF_MEM)
			return ksnprintf(b, n, "(%02x) r%u = *(%s *)(r%u %+d)", code, in->dst_reg, sz,
					 in->src_reg, in->off);
		if (BPF_MODE(code) == BPF_MEMSX) /* ISA v4 */
			return ksnprintf(b, n, "(%02x) r%u = *(s%d *)(r%u %+d)", code, in->dst_reg,
					 sz_bits(code), in->src_reg, in->off);
		return ksnprintf(b, n, "BUG_ldx_%02x", code);
	case BPF_LD:
		if (BPF_MODE(code) == BPF_ABS)
			return ksnprintf(b, n, "(%02x) r0 = *(%s *)skb[%d]", code, sz, in->imm);
		if (BPF_MODE(code) == BPF_IND)
			return ksnprintf(b, n, "(%02x) r0 = *(%s *)skb[r%u + %d]", code, sz, in->src_reg,
					 in->imm);
		if (BPF_MODE(code) == BPF_IMM && BPF_SIZE(code) == BPF_DW) {
			uint64_t v = (uint32_t)in->imm;

			if (left >= 2)
				v |= (uint64_t)(uint32_t)in[1].imm << 32;
			return ksnprintf(b, n, "(%02x) r%u = 0x%llx", code, in->dst_reg,
					 (unsigned long long)v);
		}
		return ksnprintf(b, n, "BUG_ld_%02x", code);
	case BPF_JMP:
	case BPF_JMP32:
		return dis_jmp(b, n, in);
	}
	return ksnprintf(b, n, "(%02x) %s", code, class_name[BPF_CLASS(code)]);
}
