/*
 * probe_insn.c - the arm64 instruction at a probe (uprobes.c, kprobes.c): whether it can run
 * out of line, must be simulated because it uses the PC, or is refused, as Linux 6.1's
 * arch/arm64/kernel/probes/decode-insn.c arm_probe_decode_insn decides for uprobes; and the
 * simulation itself (simulate-insn.c's b, bl, b.cond, cbz/cbnz, tbz/tbnz, br, blr, ret, adr,
 * adrp) on a trap frame, EL0 or EL1 alike.
 */
#include <stdbool.h>
#include <arch/trapframe.h>
#include <kern/probe_insn.h>

static int64_t sext(uint64_t v, unsigned int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

enum probe_insn_kind probe_insn_classify(uint32_t i)
{
	if ((i & 0x7c000000u) == 0x14000000u ||	/* B, BL */
	    (i & 0xff000010u) == 0x54000000u ||	/* B.cond */
	    (i & 0x7e000000u) == 0x34000000u ||	/* CBZ, CBNZ */
	    (i & 0x7e000000u) == 0x36000000u ||	/* TBZ, TBNZ */
	    (i & 0xfffffc1fu) == 0xd61f0000u ||	/* BR */
	    (i & 0xfffffc1fu) == 0xd63f0000u ||	/* BLR */
	    (i & 0xfffffc1fu) == 0xd65f0000u ||	/* RET */
	    (i & 0x1f000000u) == 0x10000000u)	/* ADR, ADRP */
		return PROBE_INSN_SIMULATE;
	if ((i & 0x3b000000u) == 0x18000000u ||	/* literal loads (6.1 simulates them for kprobes only) */
	    (i & 0x3f000000u) == 0x08000000u ||	/* load/store exclusive */
	    (i & 0xff000000u) == 0xd4000000u ||	/* exception generation */
	    (i & 0xfe000000u) == 0xd6000000u)	/* the other branch-register forms, ERET */
		return PROBE_INSN_REJECT;
	/* aarch64_insn_is_steppable's system class: no MSR, no MRS of DAIF, and of the hints
	 * only those it lists (NOP, PAC and BTI landing pads, CSDB, ESB, PSB): a WFE stepped
	 * after the trap cleared the exclusive monitor may never wake */
	if ((i & 0xfffff01fu) == 0xd503201fu) {
		switch ((i >> 5) & 0x7f) {
		case 0x00: case 0x10: case 0x11: case 0x14: case 0x19: case 0x1b: case 0x1d:
		case 0x1f: case 0x20: case 0x22: case 0x24: case 0x26:
			return PROBE_INSN_STEP;
		default:
			return PROBE_INSN_REJECT;
		}
	}
	if ((i & 0xfff00000u) == 0xd5100000u ||	/* MSR (register) */
	    (i & 0xfff8f01fu) == 0xd500401fu ||	/* MSR (immediate) */
	    (i & 0xffffffe0u) == 0xd53b4220u)	/* MRS Xt, DAIF */
		return PROBE_INSN_REJECT;
	return PROBE_INSN_STEP;
}

static bool cond_holds(unsigned int cond, uint64_t pstate)
{
	bool n = pstate >> 31 & 1, z = pstate >> 30 & 1, c = pstate >> 29 & 1, v = pstate >> 28 & 1;
	bool r;

	switch (cond >> 1) {
	case 0: r = z; break;
	case 1: r = c; break;
	case 2: r = n; break;
	case 3: r = v; break;
	case 4: r = c && !z; break;
	case 5: r = n == v; break;
	case 6: r = n == v && !z; break;
	default: r = true; break;
	}
	return (cond & 1) && cond != 15 ? !r : r;
}

static uint64_t xreg(const struct trapframe *tf, unsigned int r)
{
	return r == 31 ? 0 : tf->x[r];
}

static void set_xreg(struct trapframe *tf, unsigned int r, uint64_t v)
{
	if (r != 31)
		tf->x[r] = v;
}

void probe_insn_simulate(uint32_t i, struct trapframe *tf, uint64_t pc)
{
	unsigned int rt = i & 31, rn = (i >> 5) & 31;
	uint64_t next = pc + 4;

	if ((i & 0x7c000000u) == 0x14000000u) {
		if (i >> 31)
			tf->x[30] = pc + 4;
		next = pc + (uint64_t)(sext(i & 0x3ffffff, 26) * 4);
	} else if ((i & 0xff000010u) == 0x54000000u) {
		if (cond_holds(i & 0xf, tf->pstate))
			next = pc + (uint64_t)(sext((i >> 5) & 0x7ffff, 19) * 4);
	} else if ((i & 0x7e000000u) == 0x34000000u) {
		uint64_t v = xreg(tf, rt);

		if (!(i >> 31))
			v = (uint32_t)v;
		if ((v == 0) != ((i >> 24) & 1))
			next = pc + (uint64_t)(sext((i >> 5) & 0x7ffff, 19) * 4);
	} else if ((i & 0x7e000000u) == 0x36000000u) {
		unsigned int bit = ((i >> 31) << 5) | ((i >> 19) & 31);
		bool set = (xreg(tf, rt) >> bit) & 1;

		if (set == ((i >> 24) & 1))
			next = pc + (uint64_t)(sext((i >> 5) & 0x3fff, 14) * 4);
	} else if ((i & 0xff9ffc1fu) == 0xd61f0000u) { /* BR, BLR, RET */
		next = xreg(tf, rn);
		if ((i & 0xfffffc1fu) == 0xd63f0000u)
			tf->x[30] = pc + 4;
	} else { /* ADR, ADRP */
		int64_t imm = sext(((i >> 5) & 0x7ffff) << 2 | ((i >> 29) & 3), 21);

		set_xreg(tf, rt, i >> 31 ? (pc & ~0xfffull) + (uint64_t)(imm * 4096)
					 : pc + (uint64_t)imm);
	}
	tf->pc = next;
}
