/*
 * test_bpf_disasm.c - bpf/disasm.c: each instruction form in the notation of Linux 6.1's
 * verifier log (kernel/bpf/disasm.c's print_bpf_insn with a privileged loader), including the
 * forms libbpf parses back ("call unknown#195896080") and malformed instructions, which print
 * as Linux prints them instead of being refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include "../../bpf/bpf_internal.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

static void check(struct bpf_insn in, const char *want)
{
	char got[96];

	bpf_disasm(got, sizeof(got), &in, 1);
	assert_string_equal(got, want);
}

static void test_alu(void **state)
{
	check(I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0), "(bf) r6 = r1");
	check(I(BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, -1), "(b4) w0 = -1");
	check(I(BPF_ALU64 | BPF_ADD | BPF_K, 10, 0, 0, -8), "(07) r10 += -8");
	check(I(BPF_ALU | BPF_LSH | BPF_X, 2, 3, 0, 0), "(6c) w2 <<= w3");
	check(I(BPF_ALU64 | BPF_ARSH | BPF_K, 1, 0, 0, 63), "(c7) r1 s>>= 63");
	check(I(BPF_ALU64 | BPF_NEG, 4, 0, 0, 0), "(87) r4 = -r4");
	check(I(BPF_ALU | BPF_NEG, 4, 0, 0, 0), "(84) w4 = -w4");
	check(I(BPF_ALU | BPF_END | BPF_TO_BE, 1, 0, 0, 16), "(dc) r1 = be16 r1");
	check(I(BPF_ALU | BPF_END | BPF_TO_LE, 1, 0, 0, 64), "(d4) r1 = le64 r1");
	/* ISA v4, as later Linux writes it */
	check(I(BPF_ALU64 | BPF_END, 1, 0, 0, 32), "(d7) r1 = bswap32 r1");
	check(I(BPF_ALU64 | BPF_DIV | BPF_X, 1, 2, 1, 0), "(3f) r1 s/= r2");
	check(I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 2, 8, 0), "(bf) r1 = (s8)r2");
	/* an opcode Linux has no name for: its table's NULL */
	check(I(BPF_ALU64 | 0xe0 | BPF_K, 1, 0, 0, 2), "(e7) r1 (null) 2");
}

static void test_mem(void **state)
{
	check(I(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, 8, 0), "(79) r2 = *(u64 *)(r1 +8)");
	check(I(BPF_LDX | BPF_MEM | BPF_B, 2, 10, -1, 0), "(71) r2 = *(u8 *)(r10 -1)");
	check(I(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0), "(63) *(u32 *)(r10 -4) = r0");
	check(I(BPF_ST | BPF_MEM | BPF_H, 10, 0, -2, 7), "(6a) *(u16 *)(r10 -2) = 7");
	check(I(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD), "(db) lock *(u64 *)(r0 +0) += r1");
	check(I(BPF_STX | BPF_ATOMIC | BPF_W, 0, 1, 4, BPF_OR | BPF_FETCH),
	      "(c3) r1 = atomic_fetch_or((u32 *)(r0 +4), r1)");
	check(I(BPF_STX | BPF_ATOMIC | BPF_DW, 2, 3, 0, BPF_CMPXCHG),
	      "(db) r0 = atomic64_cmpxchg((u64 *)(r2 +0), r0, r3)");
	check(I(BPF_STX | BPF_ATOMIC | BPF_DW, 2, 3, 0, BPF_XCHG),
	      "(db) r3 = atomic64_xchg((u64 *)(r2 +0), r3)");
	check(I(BPF_STX | BPF_ATOMIC | BPF_DW, 2, 3, 0, 0x77), "BUG_db");
	check(I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 12), "(20) r0 = *(u32 *)skb[12]");
	check(I(BPF_LD | BPF_IND | BPF_H, 0, 3, 0, 2), "(48) r0 = *(u16 *)skb[r3 + 2]");
	check(I(BPF_LDX | BPF_MSH | BPF_B, 0, 0, 0, 0), "BUG_ldx_b1");
}

static void test_ld_imm64(void **state)
{
	struct bpf_insn p[2] = { I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 0x4ac4c00),
				 I(0, 0, 0, 0, (int32_t)0xffff0000) };
	char got[96];

	bpf_disasm(got, sizeof(got), p, 2);
	assert_string_equal(got, "(18) r1 = 0xffff000004ac4c00");
	/* the last instruction of a program: only the low half exists */
	bpf_disasm(got, sizeof(got), p, 1);
	assert_string_equal(got, "(18) r1 = 0x4ac4c00");
}

static void test_jmp(void **state)
{
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem), "(85) call bpf_map_lookup_elem#1");
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
	      "(85) call bpf_get_current_pid_tgid#14");
	/* libbpf's poisoned CO-RE relocation, which it looks for in the log */
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, 195896080), "(85) call unknown#195896080");
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, -1), "(85) call unknown#-1");
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, 0), "(85) call bpf_unspec#0");
	char want[64];

	snprintf(want, sizeof(want), "(85) call unknown#%d", __BPF_FUNC_MAX_ID); /* past the list */
	check(I(BPF_JMP | BPF_CALL, 0, 0, 0, __BPF_FUNC_MAX_ID), want);
	check(I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 5), "(85) call pc+5");
	check(I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 9), "(85) call kernel-function#9");
	check(I(BPF_JMP | BPF_JA, 0, 0, -3, 0), "(05) goto pc-3");
	check(I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), "(95) exit");
	check(I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0), "(15) if r0 == 0x0 goto pc+2");
	check(I(BPF_JMP32 | BPF_JSGT | BPF_X, 1, 2, -4, 0), "(6e) if w1 s> w2 goto pc-4");
	check(I(BPF_JMP | BPF_JSET | BPF_K, 3, 0, 1, -16), "(45) if r3 & 0xfffffff0 goto pc+1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alu),
		cmocka_unit_test(test_mem),
		cmocka_unit_test(test_ld_imm64),
		cmocka_unit_test(test_jmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
