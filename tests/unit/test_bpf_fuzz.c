/*
 * test_bpf_fuzz.c - random and mutated programs through BPF_PROG_LOAD; every accepted one is
 * run on a context and maps whose memory is exactly what the verifier allowed, so under ASan
 * any access outside its regions (ctx, the 512-byte stack, map values) fails the test.
 * A rejection must come with a Linux errno.  Bounded for make test (BPF_FUZZ_ITERS, default
 * 2000); tests/fuzz/fuzz-bpf.sh runs it long with BPF_FUZZ_ITERS and BPF_FUZZ_SEED.
 * BPF_FUZZ_DUMP=N prints iteration N's program and its level-2 verifier log.
 * Issue 19's helpers are among the calls, and two seeds hold callbacks (bpf_loop,
 * for_each_map_elem) whose lddw BPF_PSEUDO_FUNC mutations aim anywhere; two more hold dynptrs
 * (local and ring buffer) and a tail call, one a tail call from a subprogram, with program array, ring buffer and bloom filter
 * maps to aim at; one keeps the current task in a kptr (an array whose value's BTF has one,
 * typed by a small kernel BTF whose struct task is the fake's first 8 bytes).  One more calls a
 * global function (BTF_FUNC_GLOBAL: verified on its own) from two sites.  Programs carry BTF
 * func_info (prog_btf.h) as a compiler's would, 7 times in 8; each subprogram static or, one
 * time in four, one of the global prototypes there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../../bpf/btf.h"
#include "../user/btf_blob.h"
#include "../fakes/ksvc_fake.h"
#include "prog_btf.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MAXLEN 48

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint32_t pick(uint32_t n)
{
	return rnd() % n;
}

/* array (1 x 16 bytes), hash (8 x 8 bytes), per-CPU array, program array (slot 0 empty:
 * tail calls fall through; slot 1 seed_subtail), ring buffer, bloom filter, array with a kptr at 8 (1 x 16 bytes) */
#define NMAPS 8
static int map_fds[NMAPS];

/* Seeds: what ordinary programs look like; mutations start from these. */
static const struct bpf_insn seed_lookup[] = {
	I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4, 0),
	I(BPF_LDX | BPF_MEM | BPF_DW, 1, 0, 0, 0), I(BPF_ALU64 | BPF_AND | BPF_K, 1, 0, 0, 7),
	I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), I(BPF_LDX | BPF_MEM | BPF_B, 0, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), EXIT,
};
static const struct bpf_insn seed_loop[] = {
	I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -16, 1), I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 2),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_X, 3, 2, 0, 0),
	I(BPF_LDX | BPF_MEM | BPF_B, 4, 3, -16, 0), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 4, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, 1), I(BPF_JMP | BPF_JLT | BPF_K, 2, 0, -6, 16),
	EXIT,
};
static const struct bpf_insn seed_ctx[] = {
	I(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, offsetof(struct bpf_perf_event_data, sample_period), 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_VALUE, 0, 0), I(0, 0, 0, 0, 8),
	I(BPF_STX | BPF_MEM | BPF_DW, 1, 2, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 1),
	I(BPF_STX | BPF_ATOMIC | BPF_DW, 1, 3, 0, BPF_ADD | BPF_FETCH),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -16),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 16),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_comm),
	I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -16, 0), EXIT,
};

/* bpf_loop(4, cb, fp-8, 0); cb reads *ctx: callbacks and their frames */
static const struct bpf_insn seed_cb[] = {
	I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 3), I(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 4),
	I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_FUNC, 0, 6), I(0, 0, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -8),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_loop),
	EXIT,
	I(BPF_LDX | BPF_MEM | BPF_DW, 0, 2, 0, 0), I(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 1), EXIT,
};
/* bpf_for_each_map_elem(hash, cb, NULL, 0); cb reads the value */
static const struct bpf_insn seed_each[] = {
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
	I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_FUNC, 0, 5), I(0, 0, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_for_each_map_elem), EXIT,
	I(BPF_LDX | BPF_MEM | BPF_DW, 0, 3, 0, 0), I(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 1), EXIT,
};

/* dynptrs: a local one over the array's value (read, write, data slice), a ring buffer one
 * (reserve, write, submit); a map lddw's second half names its map (seed_program) */
static const struct bpf_insn seed_dynptr[] = {
	I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 100),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem), I(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 1, 0),
	EXIT,
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 16),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 4, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, -32), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_from_mem),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -48),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8), I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -32), I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 4),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_read),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -32),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8), I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 8),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_data), I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0),
	I(BPF_LDX | BPF_MEM | BPF_DW, 0, 0, 0, 0),
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 104),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 16), I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 4, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, -64),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_reserve_dynptr),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -64),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -48), I(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 8),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_dynptr_write),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -64),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_submit_dynptr),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), EXIT,
};
/* bpf_tail_call(ctx, prog_array, 0) then r0 = 1 */
static const struct bpf_insn seed_tail[] = {
	I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 103),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), EXIT,
};

/* main: sub() + 1; sub: bpf_tail_call(ctx, prog_array, 1) then r0 = 0.  Slot 1 holds this
 * program (setup), so a run nests 33 tail calls from subprogram frames (34 frames deep). */
static const struct bpf_insn seed_subtail[] = {
	I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 2), I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
	EXIT,
	I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 103),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 1), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), EXIT,
};

/* the kptr: loaded, NULL-checked, read through; the current task stored in it */
static const struct bpf_insn seed_kptr[] = {
	I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 107),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem), I(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 1, 0),
	EXIT,
	I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0), I(BPF_LDX | BPF_MEM | BPF_DW, 1, 6, 8, 0),
	I(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1, 0), I(BPF_LDX | BPF_MEM | BPF_W, 7, 1, 4, 0),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf),
	I(BPF_STX | BPF_MEM | BPF_DW, 6, 0, 8, 0), I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), EXIT,
};

/* g(ctx, 5, fp-8) and g(ctx, 7, NULL) with g a global int g(ctx, int x, int *p) */
static const struct bpf_insn seed_global[] = {
	I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0), I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 5), I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -8), I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 7),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 7), I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0),
	I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 2), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0),
	EXIT,
	I(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 2, 0), I(BPF_LDX | BPF_MEM | BPF_W, 0, 3, 0, 0), EXIT,
	I(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, offsetof(struct bpf_perf_event_data, sample_period), 0),
	I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 2, 0, 0), EXIT,
};

/* current_task_under_cgroup(cgroup array, 1) + get_current_ancestor_cgroup_id(1) */
static const struct bpf_insn seed_cgroup[] = {
	I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 106),
	I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 1),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_current_task_under_cgroup),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
	I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_ancestor_cgroup_id),
	I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 6, 0, 0), EXIT,
};

static const struct {
	const struct bpf_insn *insns;
	uint32_t len;
	uint8_t g1; /* subprogram 1's func_info (prog_btf.h): 0 static */
} seeds[] = {
	{ seed_kptr, sizeof(seed_kptr) / 8 },
	{ seed_cgroup, sizeof(seed_cgroup) / 8 },
	{ seed_global, sizeof(seed_global) / 8, PB_G_CTX_INT_PTR },
	{ seed_dynptr, sizeof(seed_dynptr) / 8 },
	{ seed_tail, sizeof(seed_tail) / 8 },
	{ seed_subtail, sizeof(seed_subtail) / 8 },
	{ seed_lookup, sizeof(seed_lookup) / 8 },
	{ seed_loop, sizeof(seed_loop) / 8 },
	{ seed_ctx, sizeof(seed_ctx) / 8 },
	{ seed_cb, sizeof(seed_cb) / 8 },
	{ seed_each, sizeof(seed_each) / 8 },
};

static int32_t interesting(void)
{
	static const int32_t v[] = { 0, 1, -1, 2, 4, 7, 8, 15, 16, 31, 32, 63, 64, 255, 511, 512,
				     -8, -16, -512, -513, 0x7fffffff, (int32_t)0x80000000, 4096 };

	return pick(3) ? v[pick(sizeof(v) / sizeof(v[0]))] : (int32_t)rnd();
}

static uint8_t reg(void)
{
	return pick(16) ? (uint8_t)pick(11) : (uint8_t)pick(16);
}

static void random_insn(struct bpf_insn *in, uint32_t i, uint32_t len)
{
	static const uint8_t classes[] = { BPF_ALU64, BPF_ALU64, BPF_ALU, BPF_JMP, BPF_JMP32,
					   BPF_LDX, BPF_ST, BPF_STX, BPF_STX, BPF_LD };
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	uint8_t cls = classes[pick(sizeof(classes))];

	memset(in, 0, sizeof(*in));
	in->dst_reg = reg();
	in->src_reg = reg();
	in->imm = interesting();
	switch (cls) {
	case BPF_ALU64:
	case BPF_ALU:
		in->code = (uint8_t)(cls | (pick(14) << 4) | (pick(2) ? BPF_X : BPF_K));
		in->off = pick(8) ? 0 : (int16_t)(pick(2) ? 1 : 8 << pick(3));
		if (BPF_SRC(in->code) == BPF_X)
			in->imm = 0;
		else if (pick(8))
			in->src_reg = 0;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		in->code = (uint8_t)(cls | (pick(14) << 4) | (pick(2) ? BPF_X : BPF_K));
		in->off = (int16_t)((int)pick(12) - 4);
		if (BPF_SRC(in->code) == BPF_K && pick(8))
			in->src_reg = 0;
		if (BPF_OP(in->code) == BPF_CALL) {
			static const int32_t helpers[] = { 1, 2, 3, 5, 6, 7, 8, 14, 15, 16, 25, 27,
							  112, 113, 114, 115, 174, 12, 9999,
							  /* issue 19's */
							  181, 164, 182, 105, 106, 165, 109, 117, 87,
							  88, 89, 195, 118, 120, 125, 35, 93, 169, 4,
							  45, 36, 148, 22, 119, 176, 177,
							  /* dynptrs, tail calls' */
							  197, 198, 199, 200, 201, 202, 203, 12,
							  /* task helpers', snprintf_btf, per_cpu_ptr, this_cpu_ptr,
							   * kptrs' */
							  141, 175, 191, 149, 153, 154, 158, 194 };

			in->code = BPF_JMP | BPF_CALL;
			in->imm = helpers[pick(sizeof(helpers) / 4)];
			in->dst_reg = in->src_reg = 0;
			in->off = 0;
		}
		if (BPF_OP(in->code) == BPF_EXIT)
			in->code = BPF_JMP | BPF_EXIT, in->dst_reg = in->src_reg = 0, in->off = 0, in->imm = 0;
		break;
	case BPF_LDX:
		in->code = (uint8_t)(BPF_LDX | (pick(6) ? BPF_MEM : BPF_MEMSX) | sizes[pick(4)]);
		in->off = (int16_t)(pick(3) ? -(int)(pick(70) * 8) + (int)pick(8) : (int)pick(200));
		in->imm = 0;
		break;
	case BPF_ST:
		in->code = (uint8_t)(BPF_ST | BPF_MEM | sizes[pick(4)]);
		in->src_reg = 0;
		in->off = (int16_t)(-(int)(pick(70) * 8) + (int)pick(4));
		break;
	case BPF_STX:
		in->code = (uint8_t)(BPF_STX | (pick(4) ? BPF_MEM : BPF_ATOMIC) | sizes[pick(4)]);
		in->off = (int16_t)(-(int)(pick(70) * 8) + (pick(4) ? 0 : (int)pick(8)));
		if (BPF_MODE(in->code) == BPF_ATOMIC) {
			static const int32_t ops[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
						       BPF_ADD | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG };

			in->imm = ops[pick(7)];
		} else {
			in->imm = 0;
		}
		break;
	case BPF_LD:
		if (i + 1 < len) {
			in->code = BPF_LD | BPF_IMM | BPF_DW;
			in->src_reg = (uint8_t)(pick(2) ? 0 : pick(2) ? BPF_PSEUDO_MAP_FD :
						 pick(2) ? BPF_PSEUDO_MAP_VALUE : BPF_PSEUDO_FUNC);
			if (in->src_reg == BPF_PSEUDO_FUNC)
				in->imm = (int32_t)pick(len + 4) - (int32_t)i - 3; /* a callback, maybe bad */
			else if (in->src_reg)
				in->imm = map_fds[in->src_reg == BPF_PSEUDO_MAP_VALUE ? 0 : pick(NMAPS)];
			in[1] = (struct bpf_insn){ 0 };
			in[1].imm = in->src_reg == BPF_PSEUDO_MAP_VALUE ? (int32_t)pick(20) :
				    in->src_reg ? 0 : interesting();
		} else {
			in->code = BPF_JMP | BPF_EXIT;
		}
		break;
	}
}

/* Seed s in p with the map fds patched in: its length. */
static uint32_t seed_program(struct bpf_insn *p, uint32_t s)
{
	uint32_t len = seeds[s].len;

	memcpy(p, seeds[s].insns, len * 8);
	for (uint32_t i = 0; i + 1 < len; i++)
		if (p[i].code == (BPF_LD | BPF_IMM | BPF_DW) && p[i].src_reg &&
		    p[i].src_reg != BPF_PSEUDO_FUNC) {
			/* a seed names its map as 100 + its index in the second half's imm (else the
			 * hash) */
			uint32_t m = p[i + 1].imm >= 100 && p[i + 1].imm < 100 + NMAPS ?
					     (uint32_t)p[i + 1].imm - 100 : 1;

			p[i].imm = map_fds[p[i].src_reg == BPF_PSEUDO_MAP_VALUE ? 0 : m];
			if (p[i].src_reg == BPF_PSEUDO_MAP_FD)
				p[i + 1].imm = 0;
			i++;
		}
	return len;
}

static int btf_fd = -1;
static int last_seed; /* make_program's seed, or -1 */

/* BTF func_info for p as its seed's, or random: 0 or the records in fi. */
static uint32_t func_info(const struct bpf_insn *p, uint32_t len, struct bpf_func_info *fi)
{
	uint8_t kinds[PB_STATIC] = { 0 };

	for (uint32_t s = 1; s < PB_STATIC; s++)
		if (!pick(4))
			kinds[s] = (uint8_t)(pick(2) ? PB_G_CTX_INT_PTR : 1 + pick(PB_G_NR - 1));
	if (last_seed >= 0 && pick(4))
		kinds[1] = seeds[last_seed].g1;
	return pb_func_info(p, len, kinds, PB_STATIC, fi, PB_STATIC);
}

static uint32_t make_program(struct bpf_insn *p)
{
	uint32_t len;

	last_seed = -1;
	if (pick(2)) {
		last_seed = (int)pick(sizeof(seeds) / sizeof(seeds[0]));
		len = seed_program(p, (uint32_t)last_seed);
		for (uint32_t n = 1 + pick(3); n; n--) {
			struct bpf_insn *in = &p[pick(len)];

			switch (pick(6)) {
			case 0: in->code ^= (uint8_t)(1u << pick(8)); break;
			case 1: in->dst_reg = reg(); break;
			case 2: in->src_reg = reg(); break;
			case 3: in->off = (int16_t)(in->off + (int)pick(17) - 8); break;
			case 4: in->imm = interesting(); break;
			default: random_insn(in, (uint32_t)(in - p), len); break;
			}
		}
		return len;
	}
	len = 2 + pick(MAXLEN - 2);
	for (uint32_t i = 0; i < len; i++) {
		random_insn(&p[i], i, len);
		if (p[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
	p[0] = (struct bpf_insn)I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	if (pick(4))
		p[len - 1] = (struct bpf_insn)EXIT;
	return len;
}

/*
 * probe_read*(), trace_printk's %s and snprintf_btf's object read any address by design; the
 * host fake of ksvc_read_nofault cannot survive an unmapped one, so such programs are
 * verified, not run.
 */
static bool reads_anywhere(const struct bpf_insn *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i].code == (BPF_JMP | BPF_CALL) && p[i].src_reg == 0 &&
		    (p[i].imm == BPF_FUNC_trace_printk || (p[i].imm >= BPF_FUNC_probe_read_user &&
							   p[i].imm <= BPF_FUNC_probe_read_kernel_str) ||
		     p[i].imm == BPF_FUNC_probe_read || p[i].imm == BPF_FUNC_probe_read_str ||
		     p[i].imm == BPF_FUNC_probe_write_user || p[i].imm == BPF_FUNC_copy_from_user ||
		     p[i].imm == BPF_FUNC_snprintf || p[i].imm == BPF_FUNC_trace_vprintk ||
		     p[i].imm == BPF_FUNC_snprintf_btf))
			return true;
	return false;
}

static bool linux_errno(long e)
{
	/* ENOENT: a typed ksym's BTF id past the kernel's last type (Linux's check_pseudo_btf_id) */
	return e == -EINVAL || e == -EACCES || e == -E2BIG || e == -EBADF || e == -EPROTO ||
	       e == -BPF_ENOTSUPP || e == -ENOSPC || e == -EFAULT || e == -ENOENT;
}

static void test_fuzz(void **state)
{
	const char *it = getenv("BPF_FUZZ_ITERS"), *sd = getenv("BPF_FUZZ_SEED");
	const char *dp = getenv("BPF_FUZZ_DUMP");
	long iters = it ? atol(it) : 2000, accepted = 0, rejected = 0, dump = dp ? atol(dp) : -1;
	long global = 0; /* accepted with a global function among the subprograms */
	static char log[16384];
	struct bpf_insn prog[MAXLEN + 2];
	struct bpf_func_info fi[PB_STATIC];
	union bpf_attr a;

	rng = sd ? strtoull(sd, NULL, 0) : 0x243f6a8885a308d3ull;
	if (!rng)
		rng = 1;
	for (long n = 0; n < iters; n++) {
		uint32_t len = make_program(prog);
		long fd;

		memset(&a, 0, sizeof(a));
		a.prog_type = pick(8) ? BPF_PROG_TYPE_PERF_EVENT : BPF_PROG_TYPE_SYSCALL;
		if (a.prog_type == BPF_PROG_TYPE_SYSCALL)
			a.prog_flags = BPF_F_SLEEPABLE;
		a.insns = (uintptr_t)prog;
		a.insn_cnt = len;
		a.license = (uintptr_t)"GPL";
		a.log_buf = (uintptr_t)log;
		a.log_size = sizeof(log);
		a.log_level = pick(4) ? 1 : 2;
		if (pick(8)) {
			a.prog_btf_fd = (uint32_t)btf_fd;
			a.func_info = (uintptr_t)fi;
			a.func_info_rec_size = sizeof(fi[0]);
			a.func_info_cnt = func_info(prog, len, fi);
		}
		if (dump == n) /* BPF_FUZZ_DUMP=N: the program of iteration N, and its log (level 2) */
			a.log_level = 2;
		fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		if (dump == n) {
			for (uint32_t i = 0; i < len; i++)
				printf("insn %u: code %#04x dst %u src %u off %d imm %d\n", i, prog[i].code,
				       prog[i].dst_reg, prog[i].src_reg, prog[i].off, prog[i].imm);
			printf("type %u fd %ld log:\n%s\n", a.prog_type, fd, log);
		}
		if (fd < 0) {
			if (!linux_errno(fd))
				fail_msg("iteration %ld: errno %ld; log:\n%s", n, -fd, log);
			rejected++;
			if (getenv("BPF_FUZZ_SHOW"))
				printf("REJ %s", log);
			continue;
		}
		accepted++;
		for (uint32_t k = 1; k < a.func_info_cnt; k++)
			if (fi[k].type_id >= PB_FUNC0 + PB_STATIC &&
			    fi[k].type_id != pb_func_id(k, PB_S_ARGS)) {
				global++;
				break;
			}
		if (reads_anywhere(prog, len)) {
			ksvc_fake_close((int)fd);
			continue;
		}
		{
			struct bpf_prog *p;
			/* exactly the ctx the type allows: ASan flags anything past it */
			size_t sz = a.prog_type == BPF_PROG_TYPE_PERF_EVENT ?
					    sizeof(struct bpf_perf_event_data_kern) :
					    65536;
			uint8_t *ctx = malloc(sz);

			memset(ctx, 0x5a, sz);
			assert_int_equal(bpf_prog_get_fd((int)fd, &p), 0);
			bpf_prog_run(p, ctx);
			bpf_prog_put(p);
			free(ctx);
		}
		ksvc_fake_close((int)fd);
	}
	printf("fuzz: %ld programs, %ld accepted (%ld with a global function), %ld rejected\n",
	       iters, accepted, global, rejected);
	assert_true(accepted > 0);
}

/* Every seed as it is loads and runs (a mutation of a broken seed would test little). */
static void test_seeds(void **state)
{
	struct bpf_insn prog[MAXLEN + 2];
	struct bpf_perf_event_data_kern ctx;
	struct bpf_func_info fi[PB_STATIC];
	static char log[16384];

	for (uint32_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		union bpf_attr a;
		struct bpf_prog *p;
		long fd, btf;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
		a.insns = (uintptr_t)prog;
		a.insn_cnt = seed_program(prog, s);
		a.license = (uintptr_t)"GPL";
		a.log_buf = (uintptr_t)log;
		a.log_size = sizeof(log);
		a.log_level = 1;
		btf = pb_attach(&a, prog, a.insn_cnt, (const uint8_t[]){ 0, seeds[s].g1 }, 2, fi);
		assert_true(btf >= 0);
		fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		ksvc_fake_close((int)btf);
		if (fd < 0)
			fail_msg("seed %u: errno %ld; log:\n%s", s, -fd, log);
		memset(&ctx, 0, sizeof(ctx));
		assert_int_equal(bpf_prog_get_fd((int)fd, &p), 0);
		bpf_prog_run(p, &ctx);
		bpf_prog_put(p);
		ksvc_fake_close((int)fd);
	}
}

/* The kernel's BTF (struct task { int tid, tgid; }: the fake task's first 8 bytes) and the
 * kptr array (value { u64 a; struct task __kptr *p; }): its fd or -1. */
static int kptr_map(void)
{
	static uint8_t raw[24 + 4 * 512 + 1024];
	static struct blob b;
	union bpf_attr a;
	long btf;
	int fd;

	blob_init(&b);
	t_int(&b, "int", 4, BTF_INT_SIGNED, 32); /* 1 */
	w(&b, str(&b, "task")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 8); /* 2 */
	w(&b, str(&b, "tid")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "tgid")), w(&b, 1), w(&b, 32);
	if (bpf_btf_vmlinux_init(raw, blob_build(&b, raw)))
		return -1;
	blob_init(&b);
	t_int(&b, "int", 4, BTF_INT_SIGNED, 32); /* 1 */
	t_int(&b, "u64", 8, 0, 64); /* 2 */
	w(&b, str(&b, "task")), w(&b, INFO(BTF_KIND_STRUCT, 0, 0)), w(&b, 0); /* 3 */
	t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, "kptr"), 3); /* 4 */
	t_ref(&b, BTF_KIND_PTR, 0, 4); /* 5 */
	w(&b, str(&b, "val")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 16); /* 6 */
	w(&b, str(&b, "a")), w(&b, 2), w(&b, 0);
	w(&b, str(&b, "p")), w(&b, 5), w(&b, 64);
	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = blob_build(&b, raw);
	btf = bpf_sys(BPF_BTF_LOAD, &a, sizeof(a));
	if (btf < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 16;
	a.max_entries = 1;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 6;
	fd = (int)bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
	ksvc_fake_close((int)btf);
	return fd;
}

static int setup(void **state)
{
	static const uint32_t spec[NMAPS - 1][4] = {
		{ BPF_MAP_TYPE_ARRAY, 4, 16, 1 },
		{ BPF_MAP_TYPE_HASH, 4, 8, 8 },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1 },
		{ BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2 },
		{ BPF_MAP_TYPE_RINGBUF, 0, 0, 4096 },
		{ BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 16 },
		{ BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4 },
	};

	/* kptrs: a NULL one is read as the first page, which faults (the fake's probe reads) */
	ksvc_fake.bad_user[0].start = 0;
	ksvc_fake.bad_user[0].len = 4096;
	map_fds[NMAPS - 1] = kptr_map();
	if (map_fds[NMAPS - 1] < 0)
		return -1;
	for (int i = 0; i < NMAPS - 1; i++) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_type = spec[i][0];
		a.key_size = spec[i][1];
		a.value_size = spec[i][2];
		a.max_entries = spec[i][3];
		map_fds[i] = (int)bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
		if (map_fds[i] < 0)
			return -1;
	}
	/* the cgroup array: slot 0 "/a" (the fake's current task sits in the root), slot 1
	 * "/a/b", the rest empty (-EAGAIN) */
	for (uint32_t k = 0; k < 2; k++) {
		union bpf_attr a;
		uint32_t cg = KSVC_FAKE_CGROUP_FD_BASE + 1 + k;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map_fds[6];
		a.key = (uintptr_t)&k;
		a.value = (uintptr_t)&cg;
		if (bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
			return -1;
	}
	{
		static struct pb_blob blob;
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.btf_size = pb_build(&blob);
		a.btf = (uintptr_t)blob.raw;
		btf_fd = (int)bpf_sys(BPF_BTF_LOAD, &a, sizeof(a));
	}
	if (btf_fd < 0)
		return -1;
	{
		/* the program array's slot 1: seed_subtail, whose subprogram tail-calls slot 1 */
		struct bpf_insn prog[MAXLEN + 2];
		struct bpf_func_info fi[PB_STATIC];
		uint32_t key = 1;
		union bpf_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
		a.insns = (uintptr_t)prog;
		for (uint32_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
			if (seeds[s].insns == seed_subtail)
				a.insn_cnt = seed_program(prog, s);
		a.license = (uintptr_t)"GPL";
		a.prog_btf_fd = (uint32_t)btf_fd;
		a.func_info = (uintptr_t)fi;
		a.func_info_rec_size = sizeof(fi[0]);
		a.func_info_cnt = pb_func_info(prog, a.insn_cnt, NULL, 0, fi, PB_STATIC);
		fd = (int)bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		if (fd < 0)
			return -1;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map_fds[3];
		a.key = (uintptr_t)&key;
		a.value = (uintptr_t)&fd;
		if (bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_seeds), cmocka_unit_test(test_fuzz) };

	return cmocka_run_group_tests(tests, setup, teardown);
}
