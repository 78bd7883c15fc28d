/*
 * jit_a64.h - A64 instruction encoders for the eBPF JIT (jit.c): one static inline function per
 * instruction form the JIT emits, returning the 32-bit word.  Encodings from the Arm ARM
 * (DDI 0487), section C6; tests/unit/test_bpf_jit.c checks each against words the GNU
 * assembler produces.  Register numbers are 0..31; 31 is xzr or sp as the form says.
 * Included only by bpf/jit.c and its unit test.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define A64_SP 31
#define A64_ZR 31

enum a64_cond {
	A64_EQ = 0, A64_NE = 1, A64_HS = 2, A64_LO = 3, A64_MI = 4, A64_PL = 5, A64_HI = 8,
	A64_LS = 9, A64_GE = 10, A64_LT = 11, A64_GT = 12, A64_LE = 13,
};

static inline uint32_t a64_sf(bool is64)
{
	return is64 ? 0x80000000u : 0;
}

/* MOVZ / MOVK / MOVN rd, #imm16, lsl #(16 * hw) */
static inline uint32_t a64_movz(bool is64, int rd, uint32_t imm16, int hw)
{
	return a64_sf(is64) | 0x52800000u | (uint32_t)hw << 21 | (imm16 & 0xffff) << 5 | rd;
}
static inline uint32_t a64_movk(bool is64, int rd, uint32_t imm16, int hw)
{
	return a64_sf(is64) | 0x72800000u | (uint32_t)hw << 21 | (imm16 & 0xffff) << 5 | rd;
}
static inline uint32_t a64_movn(bool is64, int rd, uint32_t imm16, int hw)
{
	return a64_sf(is64) | 0x12800000u | (uint32_t)hw << 21 | (imm16 & 0xffff) << 5 | rd;
}

/* Data processing, shifted register (shift 0): base is the 32-bit opcode. */
enum a64_logic {
	A64_AND = 0x0a000000u, A64_ORR = 0x2a000000u, A64_EOR = 0x4a000000u,
	A64_ANDS = 0x6a000000u, A64_ADD = 0x0b000000u, A64_SUB = 0x4b000000u,
	A64_SUBS = 0x6b000000u, A64_ORN = 0x2a200000u,
};
static inline uint32_t a64_reg3(uint32_t op, bool is64, int rd, int rn, int rm)
{
	return a64_sf(is64) | op | (uint32_t)rm << 16 | (uint32_t)rn << 5 | rd;
}
/* the same with rm shifted left by sh bits (LSL) */
static inline uint32_t a64_reg3_lsl(uint32_t op, bool is64, int rd, int rn, int rm, unsigned sh)
{
	return a64_reg3(op, is64, rd, rn, rm) | sh << 10;
}
static inline uint32_t a64_mov(bool is64, int rd, int rm)
{
	return a64_reg3(A64_ORR, is64, rd, A64_ZR, rm);
}

/* ADD / SUB / SUBS (immediate, 0..4095), ADDS as CMN. rn 31 is sp for ADD/SUB. */
enum a64_addsub_imm {
	A64_ADDI = 0x11000000u, A64_ADDSI = 0x31000000u, A64_SUBI = 0x51000000u,
	A64_SUBSI = 0x71000000u,
};
static inline uint32_t a64_addsub_imm(uint32_t op, bool is64, int rd, int rn, uint32_t imm12)
{
	return a64_sf(is64) | op | (imm12 & 0xfff) << 10 | (uint32_t)rn << 5 | rd;
}

/* Data processing, two sources. */
enum a64_dp2 {
	A64_UDIV = 0x1ac00800u, A64_SDIV = 0x1ac00c00u, A64_LSLV = 0x1ac02000u,
	A64_LSRV = 0x1ac02400u, A64_ASRV = 0x1ac02800u,
};
/* MADD (sub false) / MSUB rd = ra +- rn * rm */
static inline uint32_t a64_madd(bool is64, bool sub, int rd, int rn, int rm, int ra)
{
	return a64_sf(is64) | 0x1b000000u | (uint32_t)rm << 16 | (sub ? 0x8000u : 0) |
	       (uint32_t)ra << 10 | (uint32_t)rn << 5 | rd;
}

/* UBFM / SBFM: lsl, lsr, asr by immediate, sxtb/sxth/sxtw, uxth. */
static inline uint32_t a64_bfm(bool is64, bool sign, int rd, int rn, unsigned immr, unsigned imms)
{
	uint32_t base = sign ? 0x13000000u : 0x53000000u;

	if (is64)
		base |= 0x80400000u; /* sf and N */
	return base | (immr & 63) << 16 | (imms & 63) << 10 | (uint32_t)rn << 5 | rd;
}

/* REV16 (w), REV (w), REV (x) */
static inline uint32_t a64_rev16w(int rd, int rn)
{
	return 0x5ac00400u | (uint32_t)rn << 5 | rd;
}
static inline uint32_t a64_rev(bool is64, int rd, int rn)
{
	return (is64 ? 0xdac00c00u : 0x5ac00800u) | (uint32_t)rn << 5 | rd;
}

/*
 * Loads and stores.  size 0..3 (byte .. doubleword); opc 0 store, 1 load, 2 load signed to 64
 * bits.  Unscaled 9-bit signed offset (LDUR/STUR family) or register offset.
 */
static inline uint32_t a64_ldst_unscaled(int size, int opc, int rt, int rn, int32_t imm9)
{
	return 0x38000000u | (uint32_t)size << 30 | (uint32_t)opc << 22 |
	       ((uint32_t)imm9 & 0x1ff) << 12 | (uint32_t)rn << 5 | rt;
}
static inline uint32_t a64_ldst_reg(int size, int opc, int rt, int rn, int rm)
{
	return 0x38206800u | (uint32_t)size << 30 | (uint32_t)opc << 22 | (uint32_t)rm << 16 |
	       (uint32_t)rn << 5 | rt;
}
/* LDR xt, [xn, #imm] (unsigned, scaled by 8) */
static inline uint32_t a64_ldr_x_uimm(int rt, int rn, uint32_t off)
{
	return 0xf9400000u | (off / 8) << 10 | (uint32_t)rn << 5 | rt;
}

/* LDR (unsigned offset, scaled by the size 0..3): zero-extending loads of 1..8 bytes */
static inline uint32_t a64_ldr_uimm(int size, int rt, int rn, uint32_t off)
{
	return 0x39400000u | (uint32_t)size << 30 | (off >> size) << 10 | (uint32_t)rn << 5 | rt;
}
/* LDAR xt, [xn] */
static inline uint32_t a64_ldar(int rt, int rn)
{
	return 0xc8dffc00u | (uint32_t)rn << 5 | rt;
}

/* STP / LDP of x registers.  mode: 1 post-index, 2 signed offset, 3 pre-index. */
static inline uint32_t a64_ldstp(bool load, int mode, int rt, int rt2, int rn, int32_t off)
{
	return 0xa8000000u | (uint32_t)mode << 23 | (load ? 0x400000u : 0) |
	       ((uint32_t)(off / 8) & 0x7f) << 15 | (uint32_t)rt2 << 10 | (uint32_t)rn << 5 | rt;
}

/* LSE atomics with acquire and release: LDADDAL, LDCLRAL, LDEORAL, LDSETAL, SWPAL, CASAL. */
enum a64_lse { A64_LDADD = 0x0000u, A64_LDCLR = 0x1000u, A64_LDEOR = 0x2000u, A64_LDSET = 0x3000u,
	       A64_SWP = 0x8000u };
static inline uint32_t a64_lse_al(uint32_t op, bool is64, int rs, int rt, int rn)
{
	return (is64 ? 0xf8e00000u : 0xb8e00000u) | op | (uint32_t)rs << 16 | (uint32_t)rn << 5 | rt;
}
static inline uint32_t a64_casal(bool is64, int rs, int rt, int rn)
{
	return (is64 ? 0xc8e0fc00u : 0x88e0fc00u) | (uint32_t)rs << 16 | (uint32_t)rn << 5 | rt;
}
/* LDAXR / STLXR (status in ws) */
static inline uint32_t a64_ldaxr(bool is64, int rt, int rn)
{
	return (is64 ? 0xc85ffc00u : 0x885ffc00u) | (uint32_t)rn << 5 | rt;
}
static inline uint32_t a64_stlxr(bool is64, int ws, int rt, int rn)
{
	return (is64 ? 0xc800fc00u : 0x8800fc00u) | (uint32_t)ws << 16 | (uint32_t)rn << 5 | rt;
}

/* Branches; offsets in instructions (words), relative to the branch itself. */
static inline uint32_t a64_b(int32_t off)
{
	return 0x14000000u | ((uint32_t)off & 0x3ffffff);
}
static inline uint32_t a64_bcond(int cond, int32_t off)
{
	return 0x54000000u | ((uint32_t)off & 0x7ffff) << 5 | (uint32_t)cond;
}
static inline uint32_t a64_cbnz(bool is64, int rt, int32_t off)
{
	return a64_sf(is64) | 0x35000000u | ((uint32_t)off & 0x7ffff) << 5 | rt;
}
static inline uint32_t a64_cbz(bool is64, int rt, int32_t off)
{
	return a64_sf(is64) | 0x34000000u | ((uint32_t)off & 0x7ffff) << 5 | rt;
}
static inline uint32_t a64_blr(int rn)
{
	return 0xd63f0000u | (uint32_t)rn << 5;
}
static inline uint32_t a64_br(int rn)
{
	return 0xd61f0000u | (uint32_t)rn << 5;
}
static inline uint32_t a64_ret(void)
{
	return 0xd65f03c0u;
}
/* ADR xd, . + 4 * off */
static inline uint32_t a64_adr(int rd, int32_t off)
{
	uint32_t b = (uint32_t)off * 4;

	return 0x10000000u | (b & 3) << 29 | ((b >> 2) & 0x7ffff) << 5 | rd;
}
/* MRS xt, TPIDR_EL1 */
static inline uint32_t a64_mrs_tpidr_el1(int rt)
{
	return 0xd538d080u | rt;
}
static inline uint32_t a64_dmb_ish(void)
{
	return 0xd5033bbfu;
}
