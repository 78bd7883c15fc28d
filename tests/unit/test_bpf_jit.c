/*
 * test_bpf_jit.c - the arm64 JIT (bpf/jit.c, bpf/jit_a64.h) on the host: every encoder against
 * the word GNU as (aarch64-linux-gnu-as -march=armv8.1-a) assembles for the same instruction;
 * the emitter's refusals (callx, unknown helpers) that send a program to the interpreter;
 * the code shape of a small program (the lean frame without bpf-to-bpf calls, the full one
 * with them); a map_lookup_elem call bound to the map's own lookup when its map is known at
 * the call; installing and freeing code through the seam; and
 * random structurally valid programs, which must emit or be refused, never crash.
 * Running the code needs an aarch64 CPU: tier 20 runs the conformance vectors through the JIT
 * under qemu-aarch64.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../../bpf/jit_a64.h"
#include "../fakes/ksvc_fake.h"

struct enc {
	uint32_t got, want;
	const char *as;
};

static void test_encoders(void **state)
{
	const struct enc t[] = {
		{ a64_movz(true, 7, 0x1234, 1), 0xd2a24687, "mov x7, #0x12340000" },
		{ a64_movk(false, 9, 0xbeef, 0), 0x7297dde9, "movk w9, #0xbeef" },
		{ a64_movn(true, 10, 5, 3), 0x92e000aa, "movn x10, #5, lsl #48" },
		{ a64_mov(true, 19, 0), 0xaa0003f3, "mov x19, x0" },
		{ a64_mov(false, 2, 3), 0x2a0303e2, "mov w2, w3" },
		{ a64_reg3(A64_ADD, true, 0, 0, 1), 0x8b010000, "add x0, x0, x1" },
		{ a64_reg3(A64_SUB, false, 4, 4, 22), 0x4b160084, "sub w4, w4, w22" },
		{ a64_reg3(A64_AND, true, 20, 20, 21), 0x8a150294, "and x20, x20, x21" },
		{ a64_reg3(A64_ORR, false, 1, 1, 2), 0x2a020021, "orr w1, w1, w2" },
		{ a64_reg3(A64_EOR, true, 22, 22, 9), 0xca0902d6, "eor x22, x22, x9" },
		{ a64_reg3(A64_ORN, true, 9, A64_ZR, 1), 0xaa2103e9, "mvn x9, x1" },
		{ a64_reg3(A64_ANDS, true, A64_ZR, 7, 9), 0xea0900ff, "tst x7, x9" },
		{ a64_reg3(A64_SUBS, false, A64_ZR, 0, 1), 0x6b01001f, "cmp w0, w1" },
		{ a64_addsub_imm(A64_ADDI, true, 0, 1, 4095), 0x913ffc20, "add x0, x1, #4095" },
		{ a64_addsub_imm(A64_SUBI, true, 25, 25, 512), 0xd1080339, "sub x25, x25, #512" },
		{ a64_addsub_imm(A64_SUBSI, true, A64_ZR, 0, 12), 0xf100301f, "cmp x0, #12" },
		{ a64_addsub_imm(A64_ADDSI, false, A64_ZR, 3, 7), 0x31001c7f, "cmn w3, #7" },
		{ a64_addsub_imm(A64_ADDI, true, 29, A64_SP, 0), 0x910003fd, "mov x29, sp" },
		{ a64_addsub_imm(A64_ADDI, true, A64_SP, 27, 0), 0x9100037f, "mov sp, x27" },
		{ a64_madd(true, false, 0, 0, 1, A64_ZR), 0x9b017c00, "mul x0, x0, x1" },
		{ a64_madd(false, true, 2, 10, 3, 2), 0x1b038942, "msub w2, w10, w3, w2" },
		{ a64_reg3(A64_UDIV, true, 1, 1, 9), 0x9ac90821, "udiv x1, x1, x9" },
		{ a64_reg3(A64_SDIV, false, 1, 1, 9), 0x1ac90c21, "sdiv w1, w1, w9" },
		{ a64_reg3(A64_LSLV, true, 0, 0, 1), 0x9ac12000, "lsl x0, x0, x1" },
		{ a64_reg3(A64_LSRV, false, 0, 0, 1), 0x1ac12400, "lsr w0, w0, w1" },
		{ a64_reg3(A64_ASRV, true, 0, 0, 1), 0x9ac12800, "asr x0, x0, x1" },
		{ a64_bfm(true, false, 3, 3, 59, 58), 0xd37be863, "lsl x3, x3, #5" },
		{ a64_bfm(false, false, 3, 3, 7, 31), 0x53077c63, "lsr w3, w3, #7" },
		{ a64_bfm(true, true, 3, 3, 63, 63), 0x937ffc63, "asr x3, x3, #63" },
		{ a64_bfm(true, true, 0, 1, 0, 7), 0x93401c20, "sxtb x0, w1" },
		{ a64_bfm(false, true, 0, 1, 0, 15), 0x13003c20, "sxth w0, w1" },
		{ a64_bfm(true, true, 0, 1, 0, 31), 0x93407c20, "sxtw x0, w1" },
		{ a64_bfm(false, false, 0, 0, 0, 15), 0x53003c00, "uxth w0, w0" },
		{ a64_rev16w(1, 1), 0x5ac00421, "rev16 w1, w1" },
		{ a64_rev(false, 1, 1), 0x5ac00821, "rev w1, w1" },
		{ a64_rev(true, 1, 1), 0xdac00c21, "rev x1, x1" },
		{ a64_ldst_unscaled(0, 1, 0, 1, -1), 0x385ff020, "ldurb w0, [x1, #-1]" },
		{ a64_ldst_unscaled(0, 2, 0, 1, 0), 0x38800020, "ldursb x0, [x1]" },
		{ a64_ldst_unscaled(1, 2, 0, 1, 255), 0x788ff020, "ldursh x0, [x1, #255]" },
		{ a64_ldst_unscaled(2, 1, 7, 25, -256), 0xb8500327, "ldur w7, [x25, #-256]" },
		{ a64_ldst_unscaled(3, 0, 9, 0, 8), 0xf8008009, "stur x9, [x0, #8]" },
		{ a64_ldst_reg(2, 2, 0, 1, 11), 0xb8ab6820, "ldrsw x0, [x1, x11]" },
		{ a64_ldst_reg(1, 0, 10, 2, 11), 0x782b684a, "strh w10, [x2, x11]" },
		{ a64_ldr_x_uimm(9, A64_SP, 0), 0xf94003e9, "ldr x9, [sp]" },
		{ a64_ldstp(false, 3, 29, 30, A64_SP, -80), 0xa9bb7bfd, "stp x29, x30, [sp, #-80]!" },
		{ a64_ldstp(false, 2, 19, 20, A64_SP, 16), 0xa90153f3, "stp x19, x20, [sp, #16]" },
		{ a64_ldstp(true, 2, 21, 22, A64_SP, 32), 0xa9425bf5, "ldp x21, x22, [sp, #32]" },
		{ a64_ldstp(true, 1, 29, 30, A64_SP, 80), 0xa8c57bfd, "ldp x29, x30, [sp], #80" },
		{ a64_lse_al(A64_LDADD, true, 1, 10, 0), 0xf8e1000a, "ldaddal x1, x10, [x0]" },
		{ a64_lse_al(A64_LDCLR, false, 9, 2, 12), 0xb8e91182, "ldclral w9, w2, [x12]" },
		{ a64_lse_al(A64_LDEOR, true, 1, 1, 0), 0xf8e12001, "ldeoral x1, x1, [x0]" },
		{ a64_lse_al(A64_LDSET, false, 1, 10, 0), 0xb8e1300a, "ldsetal w1, w10, [x0]" },
		{ a64_lse_al(A64_SWP, true, 1, 1, 12), 0xf8e18181, "swpal x1, x1, [x12]" },
		{ a64_casal(true, 7, 1, 0), 0xc8e7fc01, "casal x7, x1, [x0]" },
		{ a64_casal(false, 7, 1, 0), 0x88e7fc01, "casal w7, w1, [x0]" },
		{ a64_ldaxr(true, 9, 0), 0xc85ffc09, "ldaxr x9, [x0]" },
		{ a64_ldaxr(false, 9, 12), 0x885ffd89, "ldaxr w9, [x12]" },
		{ a64_stlxr(true, 13, 10, 0), 0xc80dfc0a, "stlxr w13, x10, [x0]" },
		{ a64_stlxr(false, 13, 1, 12), 0x880dfd81, "stlxr w13, w1, [x12]" },
		{ a64_blr(9), 0xd63f0120, "blr x9" },
		{ a64_br(9), 0xd61f0120, "br x9" },
		{ a64_ret(), 0xd65f03c0, "ret" },
		{ a64_dmb_ish(), 0xd5033bbf, "dmb ish" },
		{ a64_reg3_lsl(A64_ORR, true, 7, 7, 11, 32), 0xaa0b80e7, "orr x7, x7, x11, lsl #32" },
		{ a64_ldr_uimm(2, 7, 9, 16), 0xb9401127, "ldr w7, [x9, #16]" },
		{ a64_ldr_uimm(3, 10, 9, 4088), 0xf947fd2a, "ldr x10, [x9, #4088]" },
		{ a64_ldr_uimm(0, 1, 2, 3), 0x39400c41, "ldrb w1, [x2, #3]" },
		{ a64_ldar(4, 0), 0xc8dffc04, "ldar x4, [x0]" },
		{ a64_cbz(true, 10, 2), 0xb400004a, "cbz x10, .+8" },
		{ a64_mrs_tpidr_el1(9), 0xd538d089, "mrs x9, tpidr_el1" },
		{ a64_b(2), 0x14000002, "b .+8" },
		{ a64_bcond(A64_NE, -3), 0x54ffffa1, "b.ne .-12" },
		{ a64_cbnz(false, 13, -4), 0x35ffff8d, "cbnz w13, .-16" },
		{ a64_adr(9, 6), 0x100000c9, "adr x9, .+24" },
		{ a64_adr(9, 1), 0x10000029, "adr x9, .+4" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].got != t[i].want)
			print_error("%s: got %08x want %08x\n", t[i].as, t[i].got, t[i].want);
		assert_int_equal(t[i].got, t[i].want);
	}
}

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static const struct bpf_jit_opts opts = { .frame_size = 512, .verified = true };

static void test_refusals(void **state)
{
	const struct bpf_insn callx[] = { I(BPF_JMP | BPF_CALL | BPF_X, 1, 0, 0, 0), EXIT };
	const struct bpf_insn nohelper[] = { I(BPF_JMP | BPF_CALL, 0, 0, 0, 100000), EXIT };
	const struct bpf_insn badjump[] = { I(BPF_JMP | BPF_JA, 0, 0, 5, 0), EXIT };
	/* a subprogram's bpf_tail_call (as the main program's): left to the interpreter, which
	 * runs the next program in place of the subprogram's frame */
	const struct bpf_insn subtail[] = {
		I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), EXIT,
		I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), EXIT,
	};
	uint32_t *code, n;

	assert_int_equal(bpf_jit_emit(callx, 2, &opts, &code, &n), -EINVAL);
	assert_null(code);
	assert_int_equal(bpf_jit_emit(nohelper, 2, &opts, &code, &n), -EINVAL);
	assert_int_equal(bpf_jit_emit(badjump, 2, &opts, &code, &n), -EINVAL);
	assert_int_equal(bpf_jit_emit(subtail, 6, &opts, &code, &n), -EINVAL);
	assert_null(code);
}

/* r0 = 1; exit, no bpf-to-bpf call: the lean frame (fp and lr only, as no r6-r10 is named),
 * mov, the last exit falls into the epilogue */
static void test_shape(void **state)
{
	const struct bpf_insn prog[] = { I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), EXIT };
	uint32_t *code, n;
	struct bpf_jit_image img;

	assert_int_equal(bpf_jit_emit(prog, 2, &opts, &code, &n), 0);
	assert_int_equal(n, 2 + 1 + 3);
	assert_int_equal(code[0], 0xa9bf7bfd); /* stp x29, x30, [sp, #-16]! */
	assert_int_equal(code[1], 0x910003fd); /* mov x29, sp */
	assert_int_equal(code[2], a64_movz(true, 7, 1, 0)); /* r0 is x7 */
	assert_int_equal(code[3], 0xaa0703e0); /* mov x0, x7 */
	assert_int_equal(code[4], 0xa8c17bfd); /* ldp x29, x30, [sp], #16 */
	assert_int_equal(code[n - 1], 0xd65f03c0);
	/* the seam's copy holds the same words (never run: the host may not be aarch64) */
	bool text_ok = ksvc_fake_text_ok;

	ksvc_fake_text_ok = false;
	assert_int_equal(bpf_jit_compile(prog, 2, &opts, &img), -ENOMEM);
	assert_null(img.fn);
	ksvc_fake_text_ok = true;
	assert_int_equal(bpf_jit_compile(prog, 2, &opts, &img), 0);
	assert_non_null(img.fn);
	assert_int_equal(img.len, n * 4);
	assert_memory_equal(img.text, code, n * 4);
	bpf_jit_free(&img);
	assert_null(img.text);
	ksvc_free(code);
	ksvc_fake_text_ok = text_ok;
}

/* With r6 and r10 named: saved in pairs, r10 from the third argument; an exit before the
 * last slot branches to the epilogue. */
static void test_lean_saves(void **state)
{
	const struct bpf_insn prog[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 10, 0, 0),
		I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 1, 0),
		EXIT,
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 2),
		EXIT,
	};
	uint32_t *code, n;

	assert_int_equal(bpf_jit_emit(prog, 5, &opts, &code, &n), 0);
	assert_int_equal(code[0], 0xa9be7bfd); /* stp x29, x30, [sp, #-32]! */
	assert_int_equal(code[2], 0xa90167f3); /* stp x19, x25, [sp, #16] */
	assert_int_equal(code[3], 0xaa0203f9); /* mov x25, x2 */
	/* slot 2's exit: b to the epilogue, which restores and returns */
	assert_int_equal(code[n - 4], 0xaa0703e0); /* mov x0, x7 */
	assert_int_equal(code[n - 3], 0xa94167f3); /* ldp x19, x25, [sp, #16] */
	assert_int_equal(code[n - 2], 0xa8c27bfd); /* ldp x29, x30, [sp], #32 */
	bool found = false;

	for (uint32_t k = 4; k < n - 4; k++)
		if (code[k] == a64_b((int32_t)(n - 4 - k)))
			found = true;
	assert_true(found);
	ksvc_free(code);
}

/* A bpf-to-bpf call: the full frame (11 words: saves, r10, depth, sp, adr, push), exits
 * return through the frame. */
static void test_full_frame(void **state)
{
	const struct bpf_insn call = I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1);
	const struct bpf_insn prog[] = { call, EXIT, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), EXIT };
	uint32_t *code, n, exits = 0;

	assert_int_equal(bpf_jit_emit(prog, 4, &opts, &code, &n), 0);
	assert_int_equal(code[0], 0xa9bb7bfd); /* stp x29, x30, [sp, #-80]! */
	assert_int_equal(code[n - 1], 0xd65f03c0);

	for (uint32_t k = 11; k + 1 < n; k++)
		exits += code[k] == 0xf94003e9 && code[k + 1] == 0xd61f0120; /* ldr x9, [sp]; br x9 */
	assert_int_equal(exits, 2);
	ksvc_free(code);
}

/* The 64-bit value the code's movz/movn/movk into x9 (T1) leave, before its blr x9. */
static uint64_t called(const uint32_t *code, uint32_t n)
{
	uint64_t v = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t w = code[k], hw = (w >> 21) & 3, imm = (w >> 5) & 0xffff;

		if (w == 0xd63f0120) /* blr x9 */
			return v;
		if ((w & 0x1f) != 9)
			continue;
		if ((w & 0xff800000) == 0xd2800000) /* movz */
			v = (uint64_t)imm << (16 * hw);
		else if ((w & 0xff800000) == 0x92800000) /* movn */
			v = ~((uint64_t)imm << (16 * hw));
		else if ((w & 0xff800000) == 0xf2800000) /* movk */
			v = (v & ~(0xffffull << (16 * hw))) | (uint64_t)imm << (16 * hw);
	}
	return 0;
}

static void *fake_lookup(struct bpf_map *map, const void *key)
{
	(void)key;
	return map;
}

/* map_lookup_elem with r1 from an lddw of one of the program's maps in straight-line code:
 * a call of that map's lookup; an unknown map, or a jump landing in between: the helper. */
static void test_map_call(void **state)
{
	static const struct bpf_map_ops ops = { .lookup = fake_lookup };
	static struct bpf_map m = { .ops = &ops };
	struct bpf_map *maps[] = { &m };
	uint64_t a = (uintptr_t)&m, helper, direct;
	struct bpf_insn prog[] = {
		I(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0, 0), /* lands on the lddw, which runs */
		I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)(uint32_t)a),
		I(0, 0, 0, 0, (int32_t)(uint32_t)(a >> 32)),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		EXIT,
	};
	struct bpf_jit_opts o = opts;
	bpf_helper_fn fn = bpf_helper_impl(BPF_FUNC_map_lookup_elem, 0);
	void *(*lk)(struct bpf_map *, const void *) = fake_lookup;
	uint32_t *code, n;

	memcpy(&helper, &fn, sizeof(helper));
	memcpy(&direct, &lk, sizeof(direct));
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == helper); /* no maps given: not one of the program's */
	ksvc_free(code);
	o.maps = maps;
	o.nr_maps = 1;
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == direct);
	ksvc_free(code);
	o.verified = false; /* the lddw is not known to be a map without the verifier */
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == helper);
	ksvc_free(code);
	o.verified = true;
	prog[0].off = 2; /* lands on the mov r2, past the lddw: r1 may be anything */
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == helper);
	ksvc_free(code);
	prog[0].off = 4; /* lands on the call */
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == helper);
	ksvc_free(code);
	prog[0].off = 0;
	prog[3] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0); /* r1 rewritten */
	assert_int_equal(bpf_jit_emit(prog, 7, &o, &code, &n), 0);
	assert_true(called(code, n) == helper);
	ksvc_free(code);
}

/* Random programs bpf_check_structure accepts: the JIT emits them or refuses, and every
 * branch lands on an instruction of the program. */
static void test_random(void **state)
{
	struct bpf_insn p[16];
	unsigned int seed = 1, emitted = 0;

	for (int iter = 0; iter < 20000; iter++) {
		struct bpf_verifier_log log = { 0 };
		uint32_t *code, n, len = 2 + rand_r(&seed) % 14;

		for (uint32_t i = 0; i < len; i++) {
			uint32_t r = (uint32_t)rand_r(&seed);

			p[i] = (struct bpf_insn){ .code = (uint8_t)r, .dst_reg = (r >> 8) % 11,
						  .src_reg = (r >> 12) % 11,
						  .off = (int16_t)((int)((r >> 16) % 9) - 4),
						  .imm = (int32_t)rand_r(&seed) % 70 - 5 };
			if (r & (1u << 30))
				p[i].imm = (int32_t)((uint32_t)rand_r(&seed) << 1);
		}
		p[len - 1] = (struct bpf_insn)EXIT;
		if (bpf_check_structure(p, len, false, &log))
			continue;
		if (bpf_jit_emit(p, len, &opts, &code, &n))
			continue;
		emitted++;
		assert_true(n > 4); /* at least the lean frame's stp, mov, mov x0, ldp, ret */
		ksvc_free(code);
	}
	assert_true(emitted > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoders),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_lean_saves),
		cmocka_unit_test(test_full_frame),
		cmocka_unit_test(test_map_call),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
