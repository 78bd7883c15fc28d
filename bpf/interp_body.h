/*
 * interp_body.h - the body of the eBPF interpreter, included twice by interp.c: once as the
 * fast interpreter (INTERP_COUNTING 0) and once counting executed instructions for bpf-run and
 * tests (INTERP_COUNTING 1).  Dispatch is threaded code: each decoded instruction holds its
 * handler's label and every handler ends with its own indirect jump.
 *
 * No run-time checks: the verifier (or bpf_check_structure for the test path) has proven jump
 * targets, helper ids and memory accesses.  Division follows the ISA: x/0 = 0, x%0 = x,
 * INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0.  Shift counts are masked to 5 or 6 bits.
 */

static uint64_t INTERP_FN(const struct bpf_dinsn *pc, uint64_t r1, uint64_t r2, uint64_t r3,
			  uint64_t r4, void *stack_top, uint64_t *count, const void *const **labels_out)
{
#define BPF_OP_LABEL(n) [BPF_OP_##n] = &&L_##n,
	static const void *const labels[BPF_OP_COUNT] = { BPF_INTERP_OPS(BPF_OP_LABEL) };
#undef BPF_OP_LABEL
	uint64_t regs[11] = { 0 };
	/* local, or the arena's (struct bpf_tail_arena, its first member) once a tail call from
	 * a subprogram's frame made one */
	struct bpf_iframe local[BPF_MAX_FRAMES], *frames = local;
	unsigned int depth = 0, tail_calls = 0, run_tail_calls = 0;
#if INTERP_COUNTING
	uint64_t n = 0;
#define COUNT n++
#else
#define COUNT (void)0
#endif

	if (labels_out) {
		*labels_out = labels;
		return 0;
	}
	regs[1] = r1;
	regs[2] = r2;
	regs[3] = r3;
	regs[4] = r4;
	regs[10] = (uint64_t)(uintptr_t)stack_top;

#define DST regs[pc->dst]
#define SRC regs[pc->src]
#define IMM (pc->k)
#define IMM32 ((uint32_t)pc->k)
#define JIMM ((uint64_t)(int64_t)pc->imm)
#define JUMP                                                                                       \
	do {                                                                                       \
		COUNT;                                                                             \
		pc = pc->target;                                                                   \
		goto *pc->op;                                                                      \
	} while (0)
#define NEXT                                                                                       \
	do {                                                                                       \
		COUNT;                                                                             \
		pc++;                                                                              \
		goto *pc->op;                                                                      \
	} while (0)
#define ALU64(name, expr)                                                                          \
	L_##name##64_X : DST = expr(DST, SRC);                                                     \
	NEXT;                                                                                      \
	L_##name##64_K : DST = expr(DST, IMM);                                                     \
	NEXT;
#define ALU32(name, expr)                                                                          \
	L_##name##32_X : DST = (uint32_t)expr((uint32_t)DST, (uint32_t)SRC);                       \
	NEXT;                                                                                      \
	L_##name##32_K : DST = (uint32_t)expr((uint32_t)DST, IMM32);                               \
	NEXT;
#define ALU(name, expr) ALU64(name, expr) ALU32(name, expr)
#define E_ADD(a, b) ((a) + (b))
#define E_SUB(a, b) ((a) - (b))
#define E_MUL(a, b) ((a) * (b))
#define E_DIV(a, b) ((b) ? (a) / (b) : 0)
#define E_MOD(a, b) ((b) ? (a) % (b) : (a))
#define E_OR(a, b) ((a) | (b))
#define E_AND(a, b) ((a) & (b))
#define E_XOR(a, b) ((a) ^ (b))
#define E_LSH(a, b) ((a) << ((b) & (sizeof(a) * 8 - 1)))
#define E_RSH(a, b) ((a) >> ((b) & (sizeof(a) * 8 - 1)))
#define E_MOV(a, b) (b)
#define E_ARSH64(a, b) ((uint64_t)((int64_t)(a) >> ((b) & 63)))
#define E_ARSH32(a, b) ((uint32_t)((int32_t)(a) >> ((b) & 31)))
#define E_SDIV64(a, b) bpf_sdiv64(a, b)
#define E_SMOD64(a, b) bpf_smod64(a, b)
#define E_SDIV32(a, b) bpf_sdiv32(a, b)
#define E_SMOD32(a, b) bpf_smod32(a, b)

	goto *pc->op;

	ALU(ADD, E_ADD)
	ALU(SUB, E_SUB)
	ALU(MUL, E_MUL)
	ALU(DIV, E_DIV)
	ALU(MOD, E_MOD)
	ALU(OR, E_OR)
	ALU(AND, E_AND)
	ALU(XOR, E_XOR)
	ALU(LSH, E_LSH)
	ALU(RSH, E_RSH)
	ALU(MOV, E_MOV)
	ALU64(ARSH, E_ARSH64)
	ALU32(ARSH, E_ARSH32)
	ALU64(SDIV, E_SDIV64)
	ALU64(SMOD, E_SMOD64)
	ALU32(SDIV, E_SDIV32)
	ALU32(SMOD, E_SMOD32)
L_NEG64:
	DST = -DST;
	NEXT;
L_NEG32:
	DST = (uint32_t)-(uint32_t)DST;
	NEXT;
L_MOVSX8_64:
	DST = (uint64_t)(int64_t)(int8_t)SRC;
	NEXT;
L_MOVSX16_64:
	DST = (uint64_t)(int64_t)(int16_t)SRC;
	NEXT;
L_MOVSX32_64:
	DST = (uint64_t)(int64_t)(int32_t)SRC;
	NEXT;
L_MOVSX8_32:
	DST = (uint32_t)(int32_t)(int8_t)SRC;
	NEXT;
L_MOVSX16_32:
	DST = (uint32_t)(int32_t)(int16_t)SRC;
	NEXT;
	/* Both builds are little-endian: to-LE truncates, to-BE and bswap swap. */
L_LE16:
	DST = (uint16_t)DST;
	NEXT;
L_LE32:
	DST = (uint32_t)DST;
	NEXT;
L_LE64:
	NEXT;
L_BE16:
L_BSWAP16:
	DST = __builtin_bswap16((uint16_t)DST);
	NEXT;
L_BE32:
L_BSWAP32:
	DST = __builtin_bswap32((uint32_t)DST);
	NEXT;
L_BE64:
L_BSWAP64:
	DST = __builtin_bswap64(DST);
	NEXT;

#define JMP(name, op, T)                                                                           \
	L_##name##64_X : if ((T##64_t)DST op(T##64_t) SRC) JUMP;                                   \
	NEXT;                                                                                      \
	L_##name##64_K : if ((T##64_t)DST op(T##64_t) JIMM) JUMP;                                  \
	NEXT;                                                                                      \
	L_##name##32_X : if ((T##32_t)DST op(T##32_t) SRC) JUMP;                                   \
	NEXT;                                                                                      \
	L_##name##32_K : if ((T##32_t)DST op(T##32_t) JIMM) JUMP;                                  \
	NEXT;
	JMP(JEQ, ==, uint)
	JMP(JNE, !=, uint)
	JMP(JGT, >, uint)
	JMP(JGE, >=, uint)
	JMP(JLT, <, uint)
	JMP(JLE, <=, uint)
	JMP(JSGT, >, int)
	JMP(JSGE, >=, int)
	JMP(JSLT, <, int)
	JMP(JSLE, <=, int)
L_JSET64_X:
	if (DST & SRC)
		JUMP;
	NEXT;
L_JSET64_K:
	if (DST & JIMM)
		JUMP;
	NEXT;
L_JSET32_X:
	if ((uint32_t)(DST & SRC))
		JUMP;
	NEXT;
L_JSET32_K:
	if ((uint32_t)DST & (uint32_t)pc->imm)
		JUMP;
	NEXT;
L_JA:
L_JA32:
	JUMP;
L_CALL:
	regs[0] = pc->fn(regs[1], regs[2], regs[3], regs[4], regs[5]);
	NEXT;
L_CALLX: {
	/* Only the verifier-free test path reaches callx (the verifier rejects 0x8d). */
	uint64_t id = regs[pc->dst ? pc->dst : (pc->imm & 15)];

	if (id >= __BPF_FUNC_MAX_ID || !bpf_helpers[id].fn)
		goto out;
	regs[0] = bpf_helpers[id].fn(regs[1], regs[2], regs[3], regs[4], regs[5]);
	NEXT;
}
L_TAIL_CALL: {
	/* r1 ctx, r2 the program array, r3 the index.  As Linux: an index past the end or a
	 * spent count falls through, and the count goes up before the slot is read (a tail call
	 * to an empty slot uses one).  The next program runs in place of the current frame and
	 * returns to its caller: from the main program's frame it starts on the full stack; from
	 * a subprogram's (Linux 6.1's JIT, programs with BTF) it gets the arena's stack for this
	 * count, the frames below staying as they are.  A call saves the count and its return
	 * restores it (arm64 keeps it in a callee-saved register), so 33 is per call path; the
	 * run as a whole has BPF_MAX_TAIL_CALLS_RUN, against the 2^33 a path tree reaches. */
	const struct bpf_prog *next;
	struct bpf_map *map = (struct bpf_map *)(uintptr_t)regs[2];

	if (INTERP_COUNTING || (uint32_t)regs[3] >= map->max_entries ||
	    tail_calls >= BPF_MAX_TAIL_CALLS || run_tail_calls >= BPF_MAX_TAIL_CALLS_RUN)
		NEXT;
	tail_calls++;
	run_tail_calls++;
	next = bpf_prog_array_get(map, (uint32_t)regs[3]);
	if (!next)
		NEXT;
	if (!depth) {
		regs[10] = (uint64_t)(uintptr_t)stack_top;
	} else {
		if (frames == local) {
			struct bpf_tail_arena *arena = bpf_tail_arena_new(frames, depth);

			if (!arena) /* no memory for it: as a miss */
				NEXT;
			frames = arena->frames;
		}
		regs[10] = (uint64_t)(uintptr_t)bpf_tail_arena_stack((struct bpf_tail_arena *)frames,
								     tail_calls);
	}
	COUNT;
	pc = next->dinsns;
	goto *pc->op;
}
L_CALL_LOCAL:
	if (depth >= BPF_MAX_FRAMES - 1 && (frames == local || depth >= BPF_TAIL_ARENA_FRAMES - 1))
		goto out; /* only reachable without the verifier (the arena's: see interp.c) */
	frames[depth].ret = pc;
	frames[depth].tail_calls = tail_calls;
	__builtin_memcpy(frames[depth].saved, &regs[6], sizeof(frames[depth].saved));
	depth++;
	regs[10] -= (uint16_t)pc->off;
	JUMP;
L_EXIT:
	if (depth == 0)
		goto out;
	depth--;
	pc = frames[depth].ret;
	tail_calls = frames[depth].tail_calls;
	__builtin_memcpy(&regs[6], frames[depth].saved, sizeof(frames[depth].saved));
	NEXT;

#define ADDR(reg) ((uintptr_t)(regs[reg] + (uint64_t)(int64_t)pc->off))
L_LDXB:
	DST = *(const uint8_t *)ADDR(pc->src);
	NEXT;
L_LDXH:
	DST = ((const struct bpf_u16u *)ADDR(pc->src))->v;
	NEXT;
L_LDXW:
	DST = ((const struct bpf_u32u *)ADDR(pc->src))->v;
	NEXT;
L_LDXDW:
	DST = ((const struct bpf_u64u *)ADDR(pc->src))->v;
	NEXT;
L_LDXSB:
	DST = (uint64_t)(int64_t) * (const int8_t *)ADDR(pc->src);
	NEXT;
L_LDXSH:
	DST = (uint64_t)(int64_t)(int16_t)((const struct bpf_u16u *)ADDR(pc->src))->v;
	NEXT;
L_LDXSW:
	DST = (uint64_t)(int64_t)(int32_t)((const struct bpf_u32u *)ADDR(pc->src))->v;
	NEXT;
	/* BPF_PROBE_MEM(SX): a kernel object's field (the verifier typed it by BTF) */
#define PLDX(name, n, cast)                                                                        \
	L_##name : DST = (uint64_t)(cast)bpf_probe_load(ADDR(pc->src), n);                         \
	NEXT;
	PLDX(PLDXB, 1, uint64_t)
	PLDX(PLDXH, 2, uint64_t)
	PLDX(PLDXW, 4, uint64_t)
	PLDX(PLDXDW, 8, uint64_t)
	PLDX(PLDXSB, 1, int8_t)
	PLDX(PLDXSH, 2, int16_t)
	PLDX(PLDXSW, 4, int32_t)
#undef PLDX
L_STB:
	*(uint8_t *)ADDR(pc->dst) = (uint8_t)pc->imm;
	NEXT;
L_STH:
	((struct bpf_u16u *)ADDR(pc->dst))->v = (uint16_t)pc->imm;
	NEXT;
L_STW:
	((struct bpf_u32u *)ADDR(pc->dst))->v = (uint32_t)pc->imm;
	NEXT;
L_STDW:
	((struct bpf_u64u *)ADDR(pc->dst))->v = IMM;
	NEXT;
L_STXB:
	*(uint8_t *)ADDR(pc->dst) = (uint8_t)SRC;
	NEXT;
L_STXH:
	((struct bpf_u16u *)ADDR(pc->dst))->v = (uint16_t)SRC;
	NEXT;
L_STXW:
	((struct bpf_u32u *)ADDR(pc->dst))->v = (uint32_t)SRC;
	NEXT;
L_STXDW:
	((struct bpf_u64u *)ADDR(pc->dst))->v = SRC;
	NEXT;

#define ATOMIC(W, T)                                                                               \
	L_AADD##W : __atomic_fetch_add((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);              \
	NEXT;                                                                                      \
	L_AOR##W : __atomic_fetch_or((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);                \
	NEXT;                                                                                      \
	L_AAND##W : __atomic_fetch_and((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);              \
	NEXT;                                                                                      \
	L_AXOR##W : __atomic_fetch_xor((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);              \
	NEXT;                                                                                      \
	L_AFADD##W : SRC = __atomic_fetch_add((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);       \
	NEXT;                                                                                      \
	L_AFOR##W : SRC = __atomic_fetch_or((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);         \
	NEXT;                                                                                      \
	L_AFAND##W : SRC = __atomic_fetch_and((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);       \
	NEXT;                                                                                      \
	L_AFXOR##W : SRC = __atomic_fetch_xor((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);       \
	NEXT;                                                                                      \
	L_AXCHG##W : SRC = __atomic_exchange_n((T *)ADDR(pc->dst), (T)SRC, __ATOMIC_SEQ_CST);      \
	NEXT;                                                                                      \
	L_ACMPXCHG##W : {                                                                          \
		T expect = (T)regs[0];                                                             \
		__atomic_compare_exchange_n((T *)ADDR(pc->dst), &expect, (T)SRC, false,            \
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
		regs[0] = expect;                                                                  \
		NEXT;                                                                              \
	}
	ATOMIC(32, uint32_t)
	ATOMIC(64, uint64_t)

L_LDDW:
	DST = pc->k;
	COUNT;
	pc += 2;
	goto *pc->op;
L_BAD:
out:
#if INTERP_COUNTING
	*count = n + 1;
#else
	(void)count;
#endif
	if (frames != local)
		ksvc_free(frames);
	return regs[0];

#undef COUNT
#undef DST
#undef SRC
#undef IMM
#undef IMM32
#undef JIMM
#undef JUMP
#undef NEXT
#undef ALU64
#undef ALU32
#undef ALU
#undef JMP
#undef ADDR
#undef ATOMIC
}
