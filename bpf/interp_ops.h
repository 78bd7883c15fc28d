/*
 * interp_ops.h - the interpreter's handler list (an X-macro): one entry per decoded operation.
 * interp.c decodes each eBPF instruction (opcode plus the off/imm fields that select sdiv,
 * movsx, byte order and atomic variants) to one of these; interp_body.h has a computed-goto
 * label for each.  Included only by bpf/interp*.{c,h}.
 */
#pragma once

#define BPF_ALU_OPS(X, W)                                                                          \
	X(ADD##W##_X) X(ADD##W##_K) X(SUB##W##_X) X(SUB##W##_K) X(MUL##W##_X) X(MUL##W##_K)        \
	X(DIV##W##_X) X(DIV##W##_K) X(SDIV##W##_X) X(SDIV##W##_K) X(MOD##W##_X) X(MOD##W##_K)     \
	X(SMOD##W##_X) X(SMOD##W##_K) X(OR##W##_X) X(OR##W##_K) X(AND##W##_X) X(AND##W##_K)        \
	X(XOR##W##_X) X(XOR##W##_K) X(LSH##W##_X) X(LSH##W##_K) X(RSH##W##_X) X(RSH##W##_K)        \
	X(ARSH##W##_X) X(ARSH##W##_K) X(NEG##W) X(MOV##W##_X) X(MOV##W##_K) X(MOVSX8_##W)          \
	X(MOVSX16_##W)

#define BPF_JMP_OPS(X, W)                                                                          \
	X(JEQ##W##_X) X(JEQ##W##_K) X(JNE##W##_X) X(JNE##W##_K) X(JGT##W##_X) X(JGT##W##_K)        \
	X(JGE##W##_X) X(JGE##W##_K) X(JLT##W##_X) X(JLT##W##_K) X(JLE##W##_X) X(JLE##W##_K)        \
	X(JSET##W##_X) X(JSET##W##_K) X(JSGT##W##_X) X(JSGT##W##_K) X(JSGE##W##_X)                 \
	X(JSGE##W##_K) X(JSLT##W##_X) X(JSLT##W##_K) X(JSLE##W##_X) X(JSLE##W##_K)

#define BPF_ATOMIC_OPS(X, W)                                                                       \
	X(AADD##W) X(AOR##W) X(AAND##W) X(AXOR##W) X(AFADD##W) X(AFOR##W) X(AFAND##W)              \
	X(AFXOR##W) X(AXCHG##W) X(ACMPXCHG##W)

#define BPF_INTERP_OPS(X)                                                                          \
	BPF_ALU_OPS(X, 64) BPF_ALU_OPS(X, 32) X(MOVSX32_64) X(LE16) X(LE32) X(LE64) X(BE16)        \
	X(BE32) X(BE64) X(BSWAP16) X(BSWAP32) X(BSWAP64)                                           \
	BPF_JMP_OPS(X, 64) BPF_JMP_OPS(X, 32) X(JA) X(JA32) X(CALL) X(CALL_LOCAL) X(CALLX) X(EXIT)  \
	X(TAIL_CALL)                                                                              \
	X(LDXB) X(LDXH) X(LDXW) X(LDXDW) X(LDXSB) X(LDXSH) X(LDXSW) X(PLDXB) X(PLDXH) X(PLDXW) X(PLDXDW) X(PLDXSB) \
	X(PLDXSH) X(PLDXSW) X(STB) X(STH) X(STW) X(STDW)    \
	X(STXB) X(STXH) X(STXW) X(STXDW) BPF_ATOMIC_OPS(X, 32) BPF_ATOMIC_OPS(X, 64) X(LDDW)       \
	X(BAD)

#define BPF_OP_ENUM(n) BPF_OP_##n,
enum bpf_interp_op { BPF_INTERP_OPS(BPF_OP_ENUM) BPF_OP_COUNT };
#undef BPF_OP_ENUM
