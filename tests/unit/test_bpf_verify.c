/*
 * test_bpf_verify.c - the verifier, table-driven: each row is a program, the errno Linux gives
 * for it and a substring of the log.  Also the programs clang -O2 -target bpf emits for
 * ordinary perf-event BPF code (tests/bpf/perf_*.bpf.c), which must load (the branchy
 * classifier only with precision tracking), and the log attributes (level 1/2, ENOSPC,
 * EINVAL).  Programs go through bpf_sys(BPF_PROG_LOAD).
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
#include "../bpf/bpf_elf.h"
#include "../bpf/classify.h"
#include "../fakes/ksvc_fake.h"
#include "prog_btf.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOVR(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU(op, d, i) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALUR(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JI(op, d, i, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JR(op, d, s, o) I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_LOCAL(o) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, o)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, which) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, which), I(0, 0, 0, 0, 0)
#define LD_MAPVAL(d, which, off) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_VALUE, 0, which), \
	I(0, 0, 0, 0, off)
#define LD_FUNC(d, off) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_FUNC, 0, off), I(0, 0, 0, 0, 0)
#define LD64(d, v) I(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(v)), I(0, 0, 0, 0, (int32_t)((uint64_t)(v) >> 32))
#define ATOM(sz, d, s, o, op) I(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)

#define ARRAY_LEN(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define SAMPLE_PERIOD offsetof(struct bpf_perf_event_data, sample_period)
#define ADDR offsetof(struct bpf_perf_event_data, addr)

/* map placeholders in imm, replaced by real fds */
enum { M_HASH = -100, M_ARRAY = -101, M_PERF = -102, M_STACK = -103, M_ARRAY1 = -104, M_RO = -105,
       M_RB = -106 };

/* a 4-byte key at fp-4, r2 = fp-4 */
#define KEY_ON_STACK ST(BPF_W, 10, -4, 0), MOVR(2, 10), ALU(BPF_ADD, 2, -4)

/*
 * Precision rows.  0-8: r6, r7 unknown, r0 a 64-byte map value or a jump null insns ahead.
 * 9-11: a split, r6 > 10 jumping off ahead, with no checkpoint at the fall-through.  Last: a
 * byte load at r0 + rN, then the null path's exit.
 */
#define VALUE_AND_UNKNOWNS(null) LDX(BPF_DW, 6, 1, SAMPLE_PERIOD), LDX(BPF_DW, 7, 1, ADDR), \
	KEY_ON_STACK, LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, null)
#define SPLIT(off) MOV(2, 0), JA(0), JI(BPF_JGT, 6, 10, off)
#define LOAD_AT(r) ALUR(BPF_ADD, 0, r), LDX(BPF_B, 0, 0, 0), EXIT, MOV(0, 0), EXIT
#define UNBOUNDED "math between map_value pointer and register with unbounded min value"
/* r0 = bpf_ringbuf_reserve(ringbuf, size, 0); and r0's submit (5 + 3 insns) */
#define RESERVE(size) LD_MAP(1, M_RB), MOV(2, size), MOV(3, 0), CALL(BPF_FUNC_ringbuf_reserve)
#define SUBMIT(r) MOVR(1, r), MOV(2, 0), CALL(BPF_FUNC_ringbuf_submit)

struct row {
	const char *name;
	struct bpf_insn insns[32];
	uint32_t type; /* 0 = PERF_EVENT */
	int err;
	const char *log;
	const char *license;
	/* log_level (0: 1).  A row that walks a million instructions takes 4 (statistics
	 * only): at 1 its line per instruction fills the log, and a full log makes the load
	 * ENOSPC whatever else failed, as on Linux (t_bpf_vlog) */
	uint32_t level;
	/* func_info (prog_btf.h): 0 when the program loads a callback (as clang's would), 1
	 * never, 2 always; fi: each subprogram's FUNC (0 static, else enum pb_global) */
	uint8_t btf;
	uint8_t fi[10];
};

static const struct row rows[] = {
	{ "mov exit", { MOV(0, 0), EXIT }, 0, 0, "processed" },
	{ "r0 not set", { EXIT }, 0, -EACCES, "R0 !read_ok" },
	{ "jump out of range", { JA(5), EXIT }, 0, -EINVAL, "jump out of range" },
	{ "unreachable", { MOV(0, 0), EXIT, MOV(0, 1), EXIT }, 0, -EINVAL, "unreachable insn 2" },
	/* Linux's check_cfg order: by index, unreachable before a jump into a lddw */
	{ "into lddw", { JA(1), LD64(0, 1), EXIT }, 0, -EINVAL, "unreachable insn 1" },
	{ "into a reachable lddw", { JI(BPF_JEQ, 1, 0, 1), LD64(0, 1), EXIT }, 0, -EINVAL,
	  "jump into the middle of ldimm64 insn 1" },
	{ "unknown opcode", { I(0xff, 0, 0, 0, 0), EXIT }, 0, -EINVAL, "unknown opcode ff" },
	{ "callx", { MOV(2, 5), I(BPF_JMP | BPF_CALL | BPF_X, 2, 0, 0, 0), MOV(0, 0), EXIT }, 0,
	  -EINVAL, "unknown opcode 8d" },
	{ "last not exit", { MOV(0, 0) }, 0, -EINVAL, "last insn is not an exit or jmp" },
	{ "infinite loop", { MOV(0, 0), JA(-1) }, 0, -EINVAL, "infinite loop detected" },
	{ "unbounded loop", { MOV(0, 0), ALU(BPF_ADD, 0, 1), JA(-2) }, 0, -E2BIG,
	  "BPF program is too large", .level = 4 },
	{ "unbounded loop, its log full", { MOV(0, 0), ALU(BPF_ADD, 0, 1), JA(-2) }, 0, -ENOSPC,
	  "2: (05) goto pc-2\n1: (07) r0 += 1\n" },
	{ "bounded loop",
	  { MOV(0, 0), MOV(1, 0), ALUR(BPF_ADD, 0, 1), ALU(BPF_ADD, 1, 1), JI(BPF_JLT, 1, 10, -3),
	    EXIT },
	  0, 0, "processed" },
	/* Linux lets privileged loaders (all of ours) read stack never written: an unknown scalar
	 * (allow_uninit_stack; tried on Linux 6.1, directly and as a helper's key) */
	{ "uninit stack read", { LDX(BPF_DW, 0, 10, -8), EXIT }, 0, 0, "" },
	{ "uninit stack read is unknown, not zero",
	  { LDX(BPF_DW, 0, 10, -8), JI(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 0), MOV(0, 0), EXIT }, 0,
	  -EACCES, "R0 invalid mem access 'scalar'" },
	{ "stack out of bounds", { ST(BPF_DW, 10, -520, 0), MOV(0, 0), EXIT }, 0, -EACCES,
	  "stack R10 off=-520" },
	{ "stack above fp", { ST(BPF_W, 10, 0, 0), MOV(0, 0), EXIT }, 0, -EACCES, "stack R10" },
	{ "stack write then read", { ST(BPF_DW, 10, -8, 7), LDX(BPF_W, 0, 10, -8), EXIT }, 0, 0, "" },
	{ "spill fill pointer",
	  { STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 2, 10, -8), LDX(BPF_DW, 0, 2, SAMPLE_PERIOD), EXIT }, 0, 0, "" },
	{ "fp read only", { MOV(10, 0), MOV(0, 0), EXIT }, 0, -EACCES, "frame pointer is read only" },
	{ "no null check",
	  { KEY_ON_STACK, LD_MAP(1, M_HASH), CALL(BPF_FUNC_map_lookup_elem), LDX(BPF_DW, 0, 0, 0),
	    EXIT },
	  0, -EACCES, "invalid mem access 'map_value_or_null'" },
	{ "null check",
	  { KEY_ON_STACK, LD_MAP(1, M_HASH), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 1),
	    LDX(BPF_DW, 0, 0, 0), EXIT },
	  0, 0, "" },
	{ "map value past end",
	  { KEY_ON_STACK, LD_MAP(1, M_HASH), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 1),
	    LDX(BPF_DW, 0, 0, 8), EXIT },
	  0, -EACCES, "invalid access to map value, value_size=8 off=8 size=8" },
	{ "key uninit (allowed as on Linux for privileged loaders)",
	  { MOVR(2, 10), ALU(BPF_ADD, 2, -4), LD_MAP(1, M_HASH), CALL(BPF_FUNC_map_lookup_elem),
	    MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "map arg not map",
	  { KEY_ON_STACK, MOV(1, 0), CALL(BPF_FUNC_map_lookup_elem), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R1 type=scalar expected=map_ptr" },
	{ "unknown helper", { CALL(9999), MOV(0, 0), EXIT }, 0, -EINVAL, "invalid func unknown#9999" },
	{ "gpl only helper",
	  { ST(BPF_W, 10, -4, 0x0a6968), MOVR(1, 10), ALU(BPF_ADD, 1, -4), MOV(2, 4),
	    CALL(BPF_FUNC_trace_printk), MOV(0, 0), EXIT },
	  0, -EINVAL, "GPL-restricted", "Proprietary" },
	{ "trace_printk gpl",
	  { ST(BPF_W, 10, -4, 0x0a6968), MOVR(1, 10), ALU(BPF_ADD, 1, -4), MOV(2, 4),
	    CALL(BPF_FUNC_trace_printk), MOV(0, 0), EXIT },
	  0, 0, "" },
	/* Linux refuses an immediate store (BPF_ST) into ctx before it asks the program type */
	{ "ctx write", { ST(BPF_DW, 1, 0, 0), MOV(0, 0), EXIT }, 0, -EACCES,
	  "BPF_ST stores into R1 ctx is not allowed" },
	{ "ctx write syscall", { ST(BPF_W, 1, 84, -2), MOV(0, 0), EXIT }, BPF_PROG_TYPE_SYSCALL,
	  -EACCES, "BPF_ST stores into R1 ctx is not allowed" },
	/* root may store pointers (Linux's allow_ptr_leaks): the ctx access itself is refused */
	{ "ctx stx write", { STX(BPF_DW, 1, 1, 0), MOV(0, 0), EXIT }, 0, -EACCES,
	  "invalid bpf_context access off=0 size=8" },
	{ "syscall ctx stx pointer", { STX(BPF_DW, 1, 1, 8), MOV(0, 0), EXIT }, BPF_PROG_TYPE_SYSCALL,
	  0, "" },
	{ "syscall atomic ctx", { MOVR(2, 10), ATOM(BPF_DW, 1, 2, 0, BPF_ADD), MOV(0, 0), EXIT },
	  BPF_PROG_TYPE_SYSCALL, -EACCES, "BPF_ATOMIC stores into R1 ctx is not allowed" },
	{ "ctx stx scalar write", { MOV(2, 0), STX(BPF_DW, 1, 2, 0), MOV(0, 0), EXIT }, 0, -EACCES,
	  "invalid bpf_context access" },
	/* pointer arithmetic as Linux 6.1 does it for a privileged loader (each tried there) */
	{ "neg of a pointer", { MOVR(2, 10), ALU(BPF_NEG, 2, 0), MOV(0, 0), EXIT }, 0, 0, "" },
	{ "stack pointer minus a constant", { MOVR(2, 10), ALU(BPF_SUB, 2, 8), MOV(0, 0), EXIT }, 0,
	  -EACCES, "R2 subtraction from stack pointer prohibited" },
	{ "pointer minus pointer", { MOVR(2, 10), ALUR(BPF_SUB, 2, 1), MOV(0, 0), EXIT }, 0, 0, "" },
	{ "pointer and pointer", { MOVR(2, 10), ALUR(BPF_AND, 2, 1), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R2 pointer &= pointer prohibited" },
	{ "bitwise on a pointer", { MOVR(2, 10), ALU(BPF_AND, 2, -8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R2 bitwise operator &= on pointer prohibited" },
	{ "shift of a pointer", { MOVR(2, 10), ALU(BPF_LSH, 2, 1), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R2 pointer arithmetic with <<= operator prohibited" },
	{ "32-bit sub on a pointer", { MOVR(2, 10), I(BPF_ALU | BPF_SUB | BPF_K, 2, 0, 0, 8), MOV(0, 0),
				       EXIT },
	  0, 0, "" },
	{ "32-bit add on a pointer", { MOVR(2, 10), I(BPF_ALU | BPF_ADD | BPF_K, 2, 0, 0, 8), MOV(0, 0),
				       EXIT },
	  0, -EACCES, "R2 32-bit pointer arithmetic prohibited" },
	{ "huge constant on ctx", { ALU(BPF_AND, 1, 0x7fffffff), MOV(0, 0), EXIT }, 0, -EINVAL,
	  "math between ctx pointer and 2147483647 is not allowed" },
	{ "map pointer read (no BTF)", { LD_MAP(1, M_HASH), LDX(BPF_W, 0, 1, 24), EXIT }, 0,
	  -EACCES, "R1 invalid mem access 'map_ptr'" },
	{ "map pointer plus 0", { LD_MAP(1, M_HASH), ALU(BPF_ADD, 1, 0), MOV(0, 0), EXIT }, 0, 0, "" },
	{ "map pointer plus 8", { LD_MAP(1, M_HASH), ALU(BPF_ADD, 1, 8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R1 pointer arithmetic on map_ptr prohibited" },
	{ "misaligned stack store", { ST(BPF_DW, 10, -12, 0), MOV(0, 0), EXIT }, 0, -EACCES,
	  "misaligned stack access off (0x0; 0x0)+0+-12 size 8" },
	{ "misaligned stack load", { MOVR(2, 10), ALU(BPF_ADD, 2, -16), LDX(BPF_W, 0, 2, 2), EXIT }, 0,
	  -EACCES, "misaligned stack access off (0x0; 0x0)+-16+2 size 4" },
	{ "partial pointer spill", { STX(BPF_W, 10, 1, -8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "invalid size of register spill" },
	{ "ctx sample_period", { LDX(BPF_DW, 0, 1, offsetof(struct bpf_perf_event_data, sample_period)), EXIT },
	  0, 0, "" },
	{ "ctx narrow addr", { LDX(BPF_W, 0, 1, offsetof(struct bpf_perf_event_data, addr)), EXIT }, 0,
	  0, "" },
	{ "ctx regs narrow", { LDX(BPF_W, 0, 1, 0), EXIT }, 0, -EACCES, "invalid bpf_context access" },
	{ "ctx past end", { LDX(BPF_DW, 0, 1, sizeof(struct bpf_perf_event_data)), EXIT }, 0,
	  -EACCES, "invalid bpf_context access" },
	{ "scalar deref", { MOV(0, 0), LDX(BPF_DW, 0, 0, 0), EXIT }, 0, -EACCES,
	  "invalid mem access 'scalar'" },
	{ "map ptr arith", { LD_MAP(1, M_HASH), ALU(BPF_ADD, 1, 8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "pointer arithmetic on map_ptr prohibited" },
	{ "32-bit ptr arith", { I(BPF_ALU | BPF_ADD | BPF_K, 1, 0, 0, 8), MOV(0, 0), EXIT }, 0,
	  -EACCES, "32-bit pointer arithmetic prohibited" },
	{ "div by zero", { MOV(0, 10), MOV(1, 0), ALUR(BPF_DIV, 0, 1), ALUR(BPF_MOD, 0, 1), EXIT }, 0,
	  0, "" },
	{ "div by zero imm", { MOV(0, 1), ALU(BPF_DIV, 0, 0), EXIT }, 0, -EINVAL, "div by zero" },
	{ "shift too far", { MOV(0, 1), I(BPF_ALU | BPF_LSH | BPF_K, 0, 0, 0, 32), EXIT }, 0, -EINVAL,
	  "invalid shift 32" },
	{ "alu reserved", { I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 1, 0, 0), EXIT }, 0, -EINVAL,
	  "BPF_ALU uses reserved fields" },
	{ "rsh32 by reg masked",
	  { LDX(BPF_W, 0, 1, SAMPLE_PERIOD), MOV(2, 33), I(BPF_ALU | BPF_RSH | BPF_X, 0, 2, 0, 0),
	    JI(BPF_JEQ, 0, 0, 1), EXIT, MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "callee fp into caller",
	  { MOVR(1, 10), ALU(BPF_ADD, 1, -8), ST(BPF_DW, 10, -8, 0), CALL_LOCAL(2),
	    LDX(BPF_DW, 0, 10, -8), EXIT, STX(BPF_DW, 1, 10, 0), MOV(0, 0), EXIT },
	  0, -EINVAL, "cannot spill pointers to stack into stack frame of the caller" },
	{ "var stack index",
	  { ST(BPF_DW, 10, -16, 1), ST(BPF_DW, 10, -8, 2), LDX(BPF_DW, 2, 1, SAMPLE_PERIOD),
	    ALU(BPF_AND, 2, 15), ALUR(BPF_ADD, 2, 10), LDX(BPF_B, 0, 2, -16), EXIT },
	  0, 0, "" },
	{ "var stack index too big",
	  { ST(BPF_DW, 10, -16, 1), ST(BPF_DW, 10, -8, 2), LDX(BPF_DW, 2, 1, SAMPLE_PERIOD),
	    ALU(BPF_AND, 2, 31), ALUR(BPF_ADD, 2, 10), LDX(BPF_B, 0, 2, -16), EXIT },
	  0, -EINVAL, "invalid variable-offset read from stack R2" }, /* checked on Linux 6.1 */
	{ "var map index bounded",
	  { KEY_ON_STACK, LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 4),
	    LDX(BPF_DW, 1, 0, 0), JI(BPF_JGT, 1, 56, 2), ALUR(BPF_ADD, 0, 1), LDX(BPF_B, 0, 0, 0),
	    MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "var map index unbounded",
	  { KEY_ON_STACK, LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 3),
	    LDX(BPF_DW, 1, 0, 0), ALUR(BPF_ADD, 0, 1), LDX(BPF_B, 0, 0, 0), MOV(0, 0), EXIT },
	  0, -EINVAL, "unbounded min value" },
	{ "pointer plus huge constant",
	  { MOVR(1, 10), MOV(2, 1 << 30), ALUR(BPF_ADD, 1, 2), MOV(0, 0), EXIT }, 0, -EINVAL,
	  "math between fp pointer and 1073741824 is not allowed" },
	{ "pointer plus huge range",
	  { LDX(BPF_DW, 2, 1, SAMPLE_PERIOD), ALU(BPF_AND, 2, 255), ALU(BPF_ADD, 2, 1 << 30),
	    MOVR(1, 10), ALUR(BPF_ADD, 1, 2), MOV(0, 0), EXIT },
	  0, -EINVAL, "value 1073741824 makes fp pointer be out of bounds" },
	{ "bpf-to-bpf call",
	  { MOV(1, 3), CALL_LOCAL(1), EXIT, ST(BPF_DW, 10, -8, 1), MOVR(0, 1), ALU(BPF_ADD, 0, 1), EXIT },
	  0, 0, "" },
	/* Linux 6.1: a call back into a subprogram on the call path is a back-edge of check_cfg */
	{ "recursion", { CALL_LOCAL(1), EXIT, CALL_LOCAL(-1), EXIT }, 0, -EINVAL,
	  "back-edge from insn 2 to 2" },
	{ "call chain of 9 frames",
	  { CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT,
	    CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT,
	    MOV(0, 0), EXIT },
	  0, -E2BIG, "the call stack of 9 frames is too deep\n" },
	{ "mutual recursion",
	  { CALL_LOCAL(1), EXIT, CALL_LOCAL(1), EXIT, CALL_LOCAL(-3), EXIT }, 0, -EINVAL,
	  "back-edge from insn 4 to 2" },
	{ "return callee stack", { CALL_LOCAL(1), EXIT, MOVR(0, 10), EXIT }, 0, -EINVAL,
	  "cannot return stack pointer" },
	{ "stack map lookup",
	  { KEY_ON_STACK, LD_MAP(1, M_STACK), CALL(BPF_FUNC_map_lookup_elem), MOV(0, 0), EXIT }, 0,
	  -EINVAL, "cannot pass map_type 7 into func bpf_map_lookup_elem#1" },
	{ "output to hash map",
	  { ST(BPF_DW, 10, -8, 0), MOVR(4, 10), ALU(BPF_ADD, 4, -8), LD_MAP(2, M_HASH), MOV(3, 0),
	    MOV(5, 8), CALL(BPF_FUNC_perf_event_output), MOV(0, 0), EXIT },
	  0, -EINVAL, "cannot pass map_type 1 into func bpf_perf_event_output#25" },
	{ "perf_event_output",
	  { ST(BPF_DW, 10, -8, 0), MOVR(4, 10), ALU(BPF_ADD, 4, -8), LD_MAP(2, M_PERF),
	    LD64(3, 0xffffffffu), MOV(5, 8), CALL(BPF_FUNC_perf_event_output), MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "get_stackid",
	  { LD_MAP(2, M_STACK), MOV(3, 0), CALL(BPF_FUNC_get_stackid), EXIT }, 0, 0, "" },
	{ "atomic on ctx", { MOV(2, 1), ATOM(BPF_DW, 1, 2, 0, BPF_ADD), MOV(0, 0), EXIT }, 0, -EACCES,
	  "BPF_ATOMIC stores into R1 ctx" },
	/* as on Linux for root (allow_ptr_leaks): an atomic may add a pointer into the stack */
	{ "atomic adds a pointer", { ST(BPF_DW, 10, -8, 0), ATOM(BPF_DW, 10, 1, -8, BPF_ADD), MOV(0, 0),
				     EXIT },
	  0, 0, "" },
	{ "atomic misaligned",
	  { ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), MOV(2, 1), ATOM(BPF_DW, 10, 2, -12, BPF_ADD),
	    MOV(0, 0), EXIT },
	  0, -EACCES, "misaligned" },
	{ "atomics on stack",
	  { ST(BPF_DW, 10, -8, 5), MOV(2, 1), ATOM(BPF_DW, 10, 2, -8, BPF_ADD | BPF_FETCH),
	    MOV(0, 5), ATOM(BPF_DW, 10, 2, -8, BPF_CMPXCHG), ATOM(BPF_W, 10, 2, -4, BPF_XCHG), EXIT },
	  0, 0, "" },
	{ "map value pseudo", { LD_MAPVAL(1, M_ARRAY1, 8), LDX(BPF_DW, 0, 1, 0), EXIT }, 0, 0, "" },
	{ "libbpf global data probe", { LD_MAPVAL(1, M_ARRAY1, 8), ST(BPF_DW, 1, 0, 42), MOV(0, 0), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, 0, "" },
	/* a socket filter's __sk_buff, as Linux's sk_filter_is_valid_access */
	{ "socket filter reads len", { LDX(BPF_W, 0, 1, 0), EXIT }, BPF_PROG_TYPE_SOCKET_FILTER, 0,
	  "" },
	{ "socket filter reads a byte of mark", { LDX(BPF_B, 0, 1, 9), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, 0, "" },
	{ "socket filter reads data", { LDX(BPF_W, 0, 1, offsetof(struct __sk_buff, data)), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, -EACCES, "invalid bpf_context access off=76 size=4" },
	{ "socket filter writes mark", { MOV(2, 0), STX(BPF_W, 1, 2, 8), MOV(0, 0), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, -EACCES, "invalid bpf_context access off=8 size=4" },
	{ "socket filter writes cb[1]", { MOV(2, 0), STX(BPF_W, 1, 2, 52), MOV(0, 0), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, 0, "" },
	{ "modified ctx pointer", { ALU(BPF_ADD, 1, 8), LDX(BPF_DW, 0, 1, 0), EXIT }, 0, -EACCES,
	  "dereference of modified ctx ptr R1 off=8 disallowed" },
	{ "map value pseudo oob", { LD_MAPVAL(1, M_ARRAY1, 8), LDX(BPF_DW, 0, 1, 8), EXIT }, 0,
	  -EACCES, "invalid access to map value" },
	{ "map value pseudo multi", { LD_MAPVAL(1, M_ARRAY, 0), MOV(0, 0), EXIT }, 0, -BPF_ENOTSUPP,
	  "direct value access" },
	{ "rdonly map write", { LD_MAPVAL(1, M_RO, 0), ST(BPF_DW, 1, 0, 1), MOV(0, 0), EXIT }, 0,
	  -EACCES, "write into map forbidden" },
	{ "rdonly map read", { LD_MAPVAL(1, M_RO, 0), LDX(BPF_DW, 0, 1, 0), EXIT }, 0, 0, "" },
	{ "bad map fd", { I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 200), I(0, 0, 0, 0, 0),
			  MOV(0, 0), EXIT },
	  0, -EBADF, "fd 200 is not pointing to valid bpf_map" },
	{ "v4 insns",
	  { MOV(0, -7), I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 8, 0), I(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 1, 2),
	    I(BPF_ALU64 | BPF_END | BPF_K, 0, 0, 0, 32), I(BPF_JMP32 | BPF_JA, 0, 0, 0, 0),
	    ST(BPF_B, 10, -1, -3), I(BPF_LDX | BPF_MEMSX | BPF_B, 2, 10, -1, 0), EXIT },
	  0, 0, "" },
	{ "jmp32 bounded",
	  { MOV(0, 0), I(BPF_JMP32 | BPF_JSGT | BPF_K, 0, 0, 2, 5), ALU(BPF_ADD, 0, 1), JA(-3), EXIT }, 0,
	  0, "" },
	{ "jmp32 bounds u32 index",
	  { ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), LDX(BPF_W, 2, 1, SAMPLE_PERIOD),
	    I(BPF_JMP32 | BPF_JGT | BPF_K, 2, 0, 3, 15), ALUR(BPF_ADD, 2, 10), LDX(BPF_B, 0, 2, -16),
	    EXIT, MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "jmp32 cannot bound u64",
	  { ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0), LDX(BPF_DW, 2, 1, SAMPLE_PERIOD),
	    I(BPF_JMP32 | BPF_JGT | BPF_K, 2, 0, 3, 15), ALUR(BPF_ADD, 2, 10), LDX(BPF_B, 0, 2, -16),
	    EXIT, MOV(0, 0), EXIT },
	  0, -EINVAL, "unbounded min value" },
	{ "pointer compare",
	  { MOVR(2, 10), JR(BPF_JEQ, 2, 1, 1), MOV(0, 1), MOV(0, 0), EXIT }, 0, 0, "" },
	{ "syscall ctx rw", { LDX(BPF_W, 0, 1, 4), STX(BPF_W, 1, 0, 8), EXIT }, BPF_PROG_TYPE_SYSCALL, 0,
	  "" },
	/* which types may call what: Linux 6.1's sets, measured there for every helper id */
	/* a syscall program knows get_stackid (its arguments are checked: not "unknown func"),
	 * but as a sleepable program it may not use the stack map the helper wants (Linux 6.1) */
	{ "syscall get_stackid (a tracing helper)", { CALL(BPF_FUNC_get_stackid), EXIT },
	  BPF_PROG_TYPE_SYSCALL, -EACCES, "R2 !read_ok" },
	{ "syscall with a stack map (sleepable)",
	  { LD_MAP(2, M_STACK), MOV(3, 0), CALL(BPF_FUNC_get_stackid), EXIT }, BPF_PROG_TYPE_SYSCALL,
	  -EINVAL, "Sleepable programs can only use array, hash, and ringbuf maps" },
	{ "tracepoint get_stackid",
	  { LD_MAP(2, M_STACK), MOV(3, 0), CALL(BPF_FUNC_get_stackid), EXIT },
	  BPF_PROG_TYPE_TRACEPOINT, 0, "" },
	{ "syscall no perf helper",
	  { MOV(2, 0), MOV(3, 0), CALL(BPF_FUNC_perf_prog_read_value), EXIT }, BPF_PROG_TYPE_SYSCALL,
	  -EINVAL, "unknown func bpf_perf_prog_read_value#56" },
	{ "socket filter no tracing helper", { CALL(BPF_FUNC_get_current_pid_tgid), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, -EINVAL, "unknown func bpf_get_current_pid_tgid#14" },
	{ "socket filter base helper", { CALL(BPF_FUNC_ktime_get_ns), EXIT },
	  BPF_PROG_TYPE_SOCKET_FILTER, 0, "" },
	{ "unknown prog type", { MOV(0, 0), EXIT }, BPF_PROG_TYPE_XDP, -EINVAL, NULL },
	/*
	 * Precision.  Loops whose counters differ from path to path: Linux 6.1 prunes them
	 * (counters are not precise), without that they run out of budget.
	 */
	{ "classifier loop over stack",
	  { LDX(BPF_DW, 3, 1, ADDR), MOVR(1, 10), ALU(BPF_ADD, 1, -128), MOV(2, 128),
	    CALL(BPF_FUNC_probe_read_kernel), MOV(6, 0), MOV(7, 0), MOV(8, 0), MOV(9, 0),
	    /* 9: c = buf[i]: digits in r7, spaces in r8, the rest in r9 */
	    MOVR(1, 10), ALUR(BPF_ADD, 1, 6), LDX(BPF_B, 2, 1, -128),
	    JI(BPF_JGT, 2, '9', 3), JI(BPF_JLT, 2, '0', 2), ALU(BPF_ADD, 7, 1), JA(4),
	    JI(BPF_JNE, 2, ' ', 2), ALU(BPF_ADD, 8, 1), JA(1), ALU(BPF_ADD, 9, 1),
	    /* 20: i++ */
	    ALU(BPF_ADD, 6, 1), JI(BPF_JLT, 6, 128, -13),
	    MOVR(0, 7), ALUR(BPF_ADD, 0, 8), ALUR(BPF_ADD, 0, 9), EXIT },
	  0, 0, "processed" },
	{ "counters loop over map value",
	  { KEY_ON_STACK, LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 19),
	    MOV(1, 0), MOV(2, 0), MOV(3, 0), MOV(4, 0),
	    /* 11: bits of each byte pick the counters */
	    MOVR(6, 0), ALUR(BPF_ADD, 6, 1), LDX(BPF_B, 6, 6, 0),
	    I(BPF_JMP | BPF_JSET | BPF_K, 6, 0, 1, 1), ALU(BPF_ADD, 2, 1),
	    I(BPF_JMP | BPF_JSET | BPF_K, 6, 0, 1, 2), ALU(BPF_ADD, 3, 1),
	    I(BPF_JMP | BPF_JSET | BPF_K, 6, 0, 1, 4), ALUR(BPF_ADD, 4, 6),
	    ALU(BPF_ADD, 1, 1), JI(BPF_JLT, 1, 64, -11),
	    MOVR(0, 2), ALUR(BPF_ADD, 0, 3), ALUR(BPF_ADD, 0, 4), EXIT, MOV(0, 0), EXIT },
	  0, 0, "processed" },
	/*
	 * ... but a scalar whose bounds decided something must still match exactly.  In each,
	 * the first path makes a checkpoint at the join (the first prune point 8 insns and 2 jumps
	 * after the last one) and a later path with an unsafe value must not be pruned there.
	 */
	{ "offset bounded on one path only",
	  { VALUE_AND_UNKNOWNS(10), SPLIT(4), MOV(7, 4), MOV(3, 0), MOV(4, 0), MOV(5, 0),
	    /* 16: join, r7 == 4 first */
	    LOAD_AT(7) },
	  0, -EINVAL, UNBOUNDED },
	{ "offset spilled bounded on one path only",
	  { VALUE_AND_UNKNOWNS(13), SPLIT(4), ST(BPF_DW, 10, -16, 4), MOV(3, 0), MOV(4, 0), JA(1),
	    STX(BPF_DW, 10, 7, -16),
	    /* 17: join, 4 in fp-16 first */
	    MOV(7, 0), LDX(BPF_DW, 8, 10, -16), LOAD_AT(8) },
	  0, -EINVAL, UNBOUNDED },
	{ "offset spilled after the join",
	  { VALUE_AND_UNKNOWNS(13), SPLIT(4), MOV(7, 4), MOV(3, 0), MOV(4, 0), MOV(5, 0),
	    /* 16: join, r7 == 4 first, then spilled, filled and used */
	    STX(BPF_DW, 10, 7, -16), MOV(7, 0), LDX(BPF_DW, 8, 10, -16), LOAD_AT(8) },
	  0, -EINVAL, UNBOUNDED },
	{ "offset filled through another pointer",
	  { VALUE_AND_UNKNOWNS(14), SPLIT(4), ST(BPF_DW, 10, -16, 4), MOV(3, 0), MOV(4, 0), JA(1),
	    STX(BPF_DW, 10, 7, -16),
	    /* 17: join, 4 in fp-16 first; filled through r3 */
	    MOV(7, 0), MOVR(3, 10), LDX(BPF_DW, 8, 3, -16), LOAD_AT(8) },
	  0, -EINVAL, UNBOUNDED },
	{ "offset spilled through another pointer",
	  { VALUE_AND_UNKNOWNS(14), ST(BPF_DW, 10, -16, 0), JA(0), JI(BPF_JGT, 6, 10, 4), MOV(7, 4),
	    MOV(3, 0), MOV(4, 0), MOV(5, 0),
	    /* 16: join, r7 == 4 first; spilled through r3 */
	    MOVR(3, 10), STX(BPF_DW, 3, 7, -16), MOV(7, 0), LDX(BPF_DW, 8, 10, -16), LOAD_AT(8) },
	  0, -EINVAL, UNBOUNDED },
	{ "branch decided by bounds on one path",
	  { LDX(BPF_DW, 7, 1, ADDR), KEY_ON_STACK, LD_MAP(1, M_ARRAY),
	    CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 9), MOV(8, 30), JA(0),
	    JI(BPF_JGT, 7, 10, 5), MOV(8, 16), MOV(2, 0), MOV(3, 0), MOV(4, 0), MOV(5, 0),
	    /* 16: join, r8 == 16 first: never above 20 there */
	    JI(BPF_JGT, 8, 20, 2), MOV(0, 0), EXIT, LDX(BPF_B, 0, 0, 64), EXIT },
	  0, -EACCES, "invalid access to map value, value_size=64" },
	{ "precision passed on by a pruned path",
	  { VALUE_AND_UNKNOWNS(19), SPLIT(4), MOV(7, 4), MOV(2, 0), MOV(3, 0), JA(9),
	    /* 16: the second path (r7 == 4) checkpoints at 23 and is pruned at 25 by the first */
	    JI(BPF_JGT, 6, 20, 6), MOV(7, 4), MOV(2, 0), MOV(3, 0), MOV(4, 0), MOV(5, 0), JA(0),
	    /* 23: the third (r7 unknown) must not be pruned here by the second */
	    MOV(4, 0), JA(0), LOAD_AT(7) },
	  0, -EINVAL, UNBOUNDED },
	{ "helper size bounded on one path only",
	  { LDX(BPF_DW, 6, 1, SAMPLE_PERIOD), LDX(BPF_DW, 7, 1, ADDR), JI(BPF_JGT, 6, 10, 5),
	    MOV(7, 16), MOV(2, 0), MOV(3, 0), MOV(0, 0), JA(0),
	    /* 8: join, r7 == 16 first */
	    MOVR(1, 10), ALU(BPF_ADD, 1, -16), MOVR(2, 7), CALL(BPF_FUNC_get_current_comm),
	    MOV(0, 0), EXIT },
	  0, -EACCES, "R2 min value is negative" },
	{ "bound from the other register of a compare",
	  { LDX(BPF_B, 6, 1, SAMPLE_PERIOD), LDX(BPF_DW, 7, 1, ADDR), KEY_ON_STACK,
	    LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 12),
	    MOV(8, 255), JA(0), JI(BPF_JGT, 7, 10, 5), MOV(8, 63), MOV(2, 0), MOV(3, 0), MOV(4, 0),
	    MOV(5, 0),
	    /* 17: join, r8 == 63 first; r6 <= r8 bounds the offset */
	    JR(BPF_JGT, 6, 8, 3), ALUR(BPF_ADD, 0, 6), LDX(BPF_B, 0, 0, 0), EXIT, MOV(0, 0), EXIT },
	  0, -EACCES, "invalid access to map value, value_size=64" },
	{ "loop bound differs by path",
	  { LDX(BPF_DW, 7, 1, ADDR), KEY_ON_STACK, LD_MAP(1, M_ARRAY),
	    CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 15), MOV(8, 65), JA(0),
	    JI(BPF_JGT, 7, 10, 5), MOV(8, 16), MOV(2, 0), MOV(3, 0), MOV(4, 0), MOV(5, 0),
	    /* 16: join, r8 == 16 first; the loop's exit is decided by r1 and r8 */
	    MOV(1, 0), JR(BPF_JGE, 1, 8, 5), MOVR(2, 0), ALUR(BPF_ADD, 2, 1), LDX(BPF_B, 3, 2, 0),
	    ALU(BPF_ADD, 1, 1), JA(-6), MOV(0, 0), EXIT },
	  0, -EACCES, "invalid access to map value, value_size=64" },
	/* a 32-bit or sign-extending move of a scalar over a pointer leaves a scalar (the fuzzer
	 * found the pointer kept, and an atomic through it accepted) */
	{ "w1 = 256 over a map value pointer",
	  { LD_MAPVAL(1, M_ARRAY1, 8), I(BPF_ALU | BPF_MOV | BPF_K, 1, 0, 0, 256), MOV(3, 1),
	    ATOM(BPF_DW, 1, 3, 0, BPF_ADD | BPF_FETCH), MOV(0, 0), EXIT },
	  0, -EACCES, "R1 invalid mem access 'scalar'" },
	{ "movsx over a stack pointer",
	  { MOV(2, 7), MOVR(1, 10), I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 2, 8, 0), ST(BPF_DW, 1, 0, 1),
	    MOV(0, 0), EXIT },
	  0, -EACCES, "R1 invalid mem access 'scalar'" },
	{ "w1 = w2 over a ctx pointer", { MOV(2, 3), I(BPF_ALU | BPF_MOV | BPF_X, 1, 2, 0, 0),
	  LDX(BPF_DW, 0, 1, 0), EXIT }, 0, -EACCES, "R1 invalid mem access 'scalar'" },
	/* ringbuf reservations: Linux 6.1's reference tracking (t_bpf_ringbuf checks the same
	 * programs on Linux) */
	{ "ringbuf reserve, write, submit",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 5), ST(BPF_DW, 0, 0, 1), ST(BPF_DW, 0, 8, 2), SUBMIT(0),
	    MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "ringbuf no null check", { RESERVE(16), ST(BPF_DW, 0, 0, 1), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R0 invalid mem access 'alloc_mem_or_null'" },
	{ "ringbuf arithmetic before the null check",
	  { RESERVE(16), ALU(BPF_ADD, 0, 8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "pointer arithmetic on alloc_mem_or_null prohibited, null-check it first" },
	{ "ringbuf leak", { RESERVE(16), JI(BPF_JEQ, 0, 0, 1), ST(BPF_DW, 0, 0, 1), MOV(0, 0), EXIT },
	  0, -EINVAL, "Unreleased reference id=2 alloc_insn=4" },
	{ "ringbuf leak on one path",
	  { LDX(BPF_DW, 6, 1, SAMPLE_PERIOD), RESERVE(16), JI(BPF_JEQ, 0, 0, 4),
	    JI(BPF_JGT, 6, 5, 3), SUBMIT(0), MOV(0, 0), EXIT },
	  0, -EINVAL, "Unreleased reference" },
	{ "ringbuf null branch holds nothing",
	  { RESERVE(16), JI(BPF_JNE, 0, 0, 2), MOV(0, 0), EXIT, MOVR(1, 0), MOV(2, 0),
	    CALL(BPF_FUNC_ringbuf_discard), MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "ringbuf past the reserved size",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 4), ST(BPF_DW, 0, 12, 1), SUBMIT(0), MOV(0, 0), EXIT },
	  0, -EACCES, "invalid access to memory, mem_size=16 off=12 size=8" },
	{ "ringbuf variable offset in bounds",
	  { LDX(BPF_DW, 6, 1, SAMPLE_PERIOD), ALU(BPF_AND, 6, 8), RESERVE(16), JI(BPF_JEQ, 0, 0, 6),
	    MOVR(7, 0), ALUR(BPF_ADD, 7, 6), ST(BPF_DW, 7, 0, 1), SUBMIT(0), MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "ringbuf variable offset past the end",
	  { LDX(BPF_DW, 6, 1, SAMPLE_PERIOD), ALU(BPF_AND, 6, 16), RESERVE(16), JI(BPF_JEQ, 0, 0, 6),
	    MOVR(7, 0), ALUR(BPF_ADD, 7, 6), ST(BPF_DW, 7, 0, 1), SUBMIT(0), MOV(0, 0), EXIT },
	  0, -EACCES, "invalid access to memory, mem_size=16 off=16 size=8" },
	{ "ringbuf size not constant",
	  { LDX(BPF_DW, 2, 1, SAMPLE_PERIOD), LD_MAP(1, M_RB), MOV(3, 0),
	    CALL(BPF_FUNC_ringbuf_reserve), MOV(0, 0), EXIT },
	  0, -EACCES, "R2 is not a known constant'" },
	{ "ringbuf reserve on an array",
	  { LD_MAP(1, M_ARRAY), MOV(2, 8), MOV(3, 0), CALL(BPF_FUNC_ringbuf_reserve), MOV(0, 0), EXIT },
	  0, -EINVAL, "cannot pass map_type 2 into func bpf_ringbuf_reserve#131" },
	{ "ringbuf store after submit",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 5), MOVR(6, 0), SUBMIT(0), ST(BPF_DW, 6, 0, 1), MOV(0, 0),
	    EXIT },
	  0, -EACCES, "R6 invalid mem access 'scalar'" },
	{ "ringbuf spilled copy dies at submit",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 6), STX(BPF_DW, 10, 0, -8), SUBMIT(0),
	    LDX(BPF_DW, 6, 10, -8), ST(BPF_DW, 6, 0, 1), MOV(0, 0), EXIT },
	  0, -EACCES, "R6 invalid mem access 'scalar'" },
	{ "ringbuf double submit",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 7), MOVR(6, 0), SUBMIT(0), SUBMIT(6), MOV(0, 0), EXIT },
	  0, -EACCES, "R1 type=scalar expected=alloc_mem" },
	{ "ringbuf submit inner pointer",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 4), MOVR(1, 0), ALU(BPF_ADD, 1, 8), MOV(2, 0),
	    CALL(BPF_FUNC_ringbuf_submit), MOV(0, 0), EXIT },
	  0, -EACCES, "dereference of modified alloc_mem ptr R1 off=8 disallowed" },
	{ "ringbuf submit map value",
	  { KEY_ON_STACK, LD_MAP(1, M_ARRAY), CALL(BPF_FUNC_map_lookup_elem), JI(BPF_JEQ, 0, 0, 3),
	    SUBMIT(0), MOV(0, 0), EXIT },
	  0, -EACCES, "R1 type=map_value expected=alloc_mem" },
	{ "ringbuf r0 after submit",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 4), SUBMIT(0), EXIT, MOV(0, 0), EXIT }, 0, -EACCES,
	  "R0 !read_ok" },
	{ "ringbuf memory as a helper buffer",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 7), MOVR(6, 0), MOVR(1, 0), MOV(2, 16),
	    CALL(BPF_FUNC_get_current_comm), SUBMIT(6), MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "ringbuf atomic add",
	  { RESERVE(16), JI(BPF_JEQ, 0, 0, 6), ST(BPF_DW, 0, 0, 0), MOV(1, 1),
	    ATOM(BPF_DW, 0, 1, 0, BPF_ADD), SUBMIT(0), MOV(0, 0), EXIT },
	  0, 0, "" },
	{ "ringbuf two at once",
	  { RESERVE(8), MOVR(6, 0), RESERVE(8), MOVR(7, 0), JI(BPF_JEQ, 6, 0, 3), SUBMIT(6),
	    JI(BPF_JEQ, 7, 0, 3), MOVR(1, 7), MOV(2, 0), CALL(BPF_FUNC_ringbuf_discard), MOV(0, 0),
	    EXIT },
	  0, 0, "" },
	/* ---- callbacks (bpf_loop, for_each_map_elem) and the issue-19 helpers ---- */
	{ "loop: callback returns 1",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOV(0, 1), EXIT }, 0, 0, "processed" },
	{ "loop: callback returns 2",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOV(0, 2), EXIT }, 0, -EINVAL,
	  "At callback return the register R0 has value (0x2; 0x0) should have been in (0x0; 0x1)" },
	{ "loop: callback returns its index",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOVR(0, 1), EXIT }, 0, -EINVAL, "has unknown scalar value" },
	{ "loop: callback returns a pointer",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOVR(0, 10), EXIT }, 0, -EACCES, "R0 not a scalar value" },
	{ "loop: a scalar callback",
	  { MOV(1, 4), MOV(2, 0), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT }, 0,
	  -EACCES, "R2 type=scalar expected=func" },
	{ "loop: ctx a map pointer",
	  { MOV(1, 4), LD_FUNC(2, 7), LD_MAP(3, M_ARRAY), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0),
	    EXIT, MOV(0, 0), EXIT }, 0, -EACCES, "R3 type=map_ptr expected=fp" },
	{ "loop: callback reads the caller's stack",
	  { ST(BPF_DW, 10, -8, 3), MOV(1, 4), LD_FUNC(2, 6), MOVR(3, 10), ALU(BPF_ADD, 3, -8), MOV(4, 0),
	    CALL(BPF_FUNC_loop), EXIT, LDX(BPF_DW, 0, 2, 0), ALU(BPF_AND, 0, 1), EXIT }, 0, 0,
	  "processed" },
	{ "loop: callback reads uninit caller stack",
	  { MOV(1, 4), LD_FUNC(2, 7), MOVR(3, 10), ALU(BPF_ADD, 3, -8), MOV(4, 0),
	    CALL(BPF_FUNC_loop), MOV(0, 0), EXIT, LDX(BPF_DW, 0, 2, 0), ALU(BPF_AND, 0, 1), EXIT }, 0,
	  0, "" },
	{ "loop: callback offset out of range",
	  { MOV(1, 4), LD_FUNC(2, 60), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT },
	  0, -EINVAL, "call to invalid destination" },
	{ "for_each: perf event array",
	  { LD_MAP(1, M_PERF), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_for_each_map_elem),
	    MOV(0, 0), EXIT, MOV(0, 0), EXIT }, 0, -BPF_ENOTSUPP, "callback function not allowed for map" },
	{ "for_each: callback writes the key",
	  { LD_MAP(1, M_HASH), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_for_each_map_elem),
	    MOV(0, 0), EXIT, ST(BPF_W, 2, 0, 1), MOV(0, 0), EXIT }, 0, -EACCES,
	  "write to change key R2 not allowed" },
	{ "for_each: callback reads past the value",
	  { LD_MAP(1, M_HASH), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_for_each_map_elem),
	    MOV(0, 0), EXIT, LDX(BPF_DW, 0, 3, 8), MOV(0, 0), EXIT }, 0, -EACCES,
	  "invalid access to map value, value_size=8 off=8 size=8" },
	{ "for_each: callback reads key and value, looks the key up",
	  { LD_MAP(1, M_HASH), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_for_each_map_elem),
	    MOV(0, 0), EXIT, LDX(BPF_W, 6, 2, 0), LDX(BPF_DW, 7, 3, 0), CALL(BPF_FUNC_map_lookup_elem),
	    MOV(0, 0), EXIT }, 0, 0, "processed" },
	/* global functions (BTF_FUNC_GLOBAL, Linux 6.1's do_check_subprogs): g_args(ctx, int x,
	 * int *p) returns p ? *p : ctx->sample_period + x; GCALL: slot, then g_args(ctx, 5, fp-8) */
#define G_ARGS_BODY JI(BPF_JEQ, 3, 0, 2), LDX(BPF_W, 0, 3, 0), EXIT, LDX(BPF_DW, 0, 1, SAMPLE_PERIOD), \
	ALUR(BPF_ADD, 0, 2), EXIT
#define GCALL(slot, fpoff) slot, ST(BPF_DW, 10, -8, 0), MOV(2, 5), MOVR(3, 10), ALU(BPF_ADD, 3, fpoff), \
	CALL_LOCAL(1), EXIT
	{ "global: two call sites, different arguments",
	  { MOVR(6, 1), ST(BPF_DW, 10, -8, 0), MOV(2, 5), MOVR(3, 10), ALU(BPF_ADD, 3, -8),
	    CALL_LOCAL(7), MOVR(7, 0), MOVR(1, 6), MOV(2, 7), MOV(3, 0), CALL_LOCAL(2),
	    ALUR(BPF_ADD, 0, 7), EXIT, G_ARGS_BODY },
	  0, 0, "Func#1 is safe for any args that match its prototype\n", .level = 2, .btf = 2,
	  .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: validated first, skipped at the call",
	  { GCALL(MOV(0, 0), -8), G_ARGS_BODY }, 0, 0,
	  "Validating g_args() func#1...\n7: R1=ctx(off=0,imm=0) R2=scalar() R3=mem_or_null(id=2,off=0,imm=0) R10=fp0\n",
	  .level = 2, .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: call skipped", { GCALL(MOV(0, 0), -8), G_ARGS_BODY }, 0, 0,
	  "Func#1 is global and valid. Skipping.\n", .level = 2, .btf = 2,
	  .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: fp where ctx is declared", { GCALL(MOVR(1, 10), -8), G_ARGS_BODY }, 0, -EINVAL,
	  "arg#0 expected pointer to ctx, but got PTR\nCaller passes invalid args into func#1\n",
	  .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: modified ctx", { GCALL(ALU(BPF_ADD, 1, 8), -8), G_ARGS_BODY }, 0, -EACCES,
	  "dereference of modified ctx ptr R1 off=8 disallowed\nCaller passes invalid args into func#1\n",
	  .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: an unknown scalar where the memory is",
	  { ST(BPF_DW, 10, -8, 0), MOV(2, 5), LDX(BPF_DW, 3, 1, SAMPLE_PERIOD), MOV(0, 0), MOV(0, 0),
	    CALL_LOCAL(1), EXIT, G_ARGS_BODY }, 0, -EINVAL,
	  "R3 type=scalar expected=fp\nCaller passes invalid args into func#1\n", .btf = 2,
	  .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: memory too small for an int",
	  { GCALL(MOV(0, 0), -2), G_ARGS_BODY }, 0, -EINVAL, "Caller passes invalid args into func#1\n",
	  .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: a pointer for the int",
	  { MOVR(2, 10), ST(BPF_DW, 10, -8, 0), MOV(0, 0), MOVR(3, 10), ALU(BPF_ADD, 3, -8),
	    CALL_LOCAL(1), EXIT, G_ARGS_BODY }, 0, -EINVAL,
	  "R2 is not a scalar\nCaller passes invalid args into func#1\n",
	  .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: body checked on its own (no null check), whatever the caller passes",
	  { GCALL(MOV(0, 0), -8), LDX(BPF_W, 0, 3, 0), EXIT }, 0, -EACCES,
	  "R3 invalid mem access 'mem_or_null'", .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: body reads past the int",
	  { GCALL(MOV(0, 0), -8), JI(BPF_JEQ, 3, 0, 1), LDX(BPF_DW, 0, 3, 0), MOV(0, 0), EXIT }, 0,
	  -EACCES, "invalid access to memory, mem_size=4 off=0 size=8", .btf = 2,
	  .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: r0 after the call is unknown",
	  { CALL_LOCAL(4), JI(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 0), MOV(0, 0), EXIT, MOV(0, 0), EXIT },
	  0, -EACCES, "R0 invalid mem access 'scalar'", .btf = 2, .fi = { 0, PB_G_VOID } },
	{ "static: r0 after the call is what it returned",
	  { CALL_LOCAL(4), JI(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 0), MOV(0, 0), EXIT, MOV(0, 0), EXIT },
	  0, 0, "", .btf = 2 },
	{ "global: returns a pointer (BTF)", { CALL_LOCAL(1), EXIT, MOV(0, 0), EXIT }, 0, -EINVAL,
	  "Global function g_retptr() doesn't return scalar. Only those are supported.\n", .btf = 2,
	  .fi = { 0, PB_G_RETPTR } },
	{ "global: R0 a pointer at its exit", { CALL_LOCAL(1), EXIT, MOVR(0, 10), EXIT }, 0, -EINVAL,
	  "At subprogram exit the register R0 is not a scalar value (fp)\n", .btf = 2,
	  .fi = { 0, PB_G_VOID } },
	{ "global: void * argument", { MOV(1, 0), CALL_LOCAL(1), EXIT, MOV(0, 0), EXIT }, 0, -EINVAL,
	  "arg#0 reference type('UNKNOWN ') size cannot be determined: -22\n", .btf = 2,
	  .fi = { 0, PB_G_VOIDPTR } },
	{ "global: six arguments", { CALL_LOCAL(1), EXIT, MOV(0, 0), EXIT }, 0, -EINVAL,
	  "Global function g_six() with 6 > 5 args. Buggy compiler.\n", .btf = 2,
	  .fi = { 0, PB_G_SIX } },
	/* the pointer moved on one path only: the walk must not take the moved one for the
	 * checkpoint the other left at the join (prunes compare a memory pointer's offset) */
	{ "global: memory pointer moved on one path, read at the join",
	  { GCALL(MOV(0, 0), -8), JI(BPF_JEQ, 3, 0, 14), JI(BPF_JGT, 2, 5, 10), MOV(4, 0), MOV(4, 0),
	    MOV(4, 0), MOV(4, 0), MOV(4, 0), MOV(4, 0), JA(0), JA(0), JA(0), JA(1),
	    ALU(BPF_ADD, 3, 2), LDX(BPF_W, 0, 3, 0), EXIT, MOV(0, 0), EXIT }, 0, -EACCES,
	  "invalid access to memory, mem_size=4 off=2 size=4", .btf = 2,
	  .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "subprograms listed at log level 2", { GCALL(MOV(0, 0), -8), G_ARGS_BODY }, 0, 0,
	  "func#0 @0\nfunc#1 @7\n", .level = 2, .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "static: a call that does not match the prototype is walked all the same",
	  { MOVR(2, 10), CALL_LOCAL(1), EXIT, ST(BPF_DW, 2, -8, 1), MOV(0, 0), EXIT }, 0, 0,
	  "R2 is not a scalar\n", .level = 2, .btf = 2, .fi = { 0, PB_S_ARGS } },
	{ "main: a prototype without ctx is logged, not refused", { MOV(0, 0), EXIT }, 0, 0,
	  "reg type unsupported for arg#0 function g_voidptr#79\n0: R1=ctx(off=0,imm=0) R10=fp0\n",
	  .level = 2, .btf = 2, .fi = { PB_G_VOIDPTR } },
#define CHAIN2 CALL_LOCAL(1), EXIT
#define G9 { 0, PB_G_VOID, PB_G_VOID, PB_G_VOID, PB_G_VOID, PB_G_VOID, PB_G_VOID, PB_G_VOID, PB_G_VOID }
	{ "global: 8 frames deep", { CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, MOV(0, 0),
	  EXIT }, 0, 0, "", .btf = 2, .fi = G9 },
	/* Linux's check_max_stack_depth counts the calls */
	{ "global: 9 frames deep", { CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2, CHAIN2,
	  MOV(0, 0), EXIT }, 0, -E2BIG, "the call stack of 8 frames is too deep !\n", .btf = 2,
	  .fi = G9 },
	{ "global: its memory is no ring buffer record",
	  { GCALL(MOV(0, 0), -8), JI(BPF_JEQ, 3, 0, 3), MOVR(1, 3), MOV(2, 0),
	    CALL(BPF_FUNC_ringbuf_submit), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R1 type=mem expected=alloc_mem\n", .btf = 2, .fi = { 0, PB_G_CTX_INT_PTR } },
	{ "global: ctx for memory (perf_event: its loads are rewritten)",
	  { MOVR(2, 1), MOV(1, 1), CALL_LOCAL(1), EXIT, MOV(0, 0), EXIT }, 0, -EINVAL,
	  "R2 type=ctx expected=fp\nCaller passes invalid args into func#1\n", .btf = 2,
	  .fi = { 0, PB_G_MEM } },
	{ "global: ctx for memory (kprobe: its last byte read, not written)",
	  { MOVR(2, 1), MOV(1, 1), CALL_LOCAL(1), EXIT, MOV(0, 0), EXIT }, BPF_PROG_TYPE_KPROBE,
	  -EINVAL, "invalid bpf_context access off=3 size=1\nCaller passes invalid args into func#1\n",
	  .btf = 2, .fi = { 0, PB_G_MEM } },
	{ "callback without func_info",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOV(0, 0), EXIT }, 0, -EINVAL, "missing btf func_info\n", .btf = 1 },
	{ "global callback",
	  { MOV(1, 4), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), MOV(0, 0), EXIT,
	    MOV(0, 0), EXIT }, 0, -EINVAL, "callback function not static\n", .fi = { 0, PB_G_VOID } },
	{ "copy_from_user: not sleepable",
	  { MOVR(1, 10), ALU(BPF_ADD, 1, -8), MOV(2, 8), MOV(3, 0), CALL(BPF_FUNC_copy_from_user),
	    MOV(0, 0), EXIT }, 0, -EINVAL, "helper call might sleep in a non-sleepable prog" },
	{ "get_func_ip: perf_event", { MOVR(6, 1), CALL(BPF_FUNC_get_func_ip), MOV(0, 0), EXIT }, 0,
	  -BPF_ENOTSUPP, "func bpf_get_func_ip#173 not supported for program type 7" },
	{ "get_current_task_btf: no kernel BTF", { CALL(BPF_FUNC_get_current_task_btf), MOV(0, 0), EXIT },
	  0, -EINVAL, "invalid return type 8 of func bpf_get_current_task_btf#158" },
	{ "spin_lock: map without BTF",
	  { LD_MAPVAL(1, M_ARRAY1, 0), CALL(BPF_FUNC_spin_lock), MOV(0, 0), EXIT }, 0, -EACCES,
	  "has to have BTF in order to use bpf_spin_lock" },
	{ "kptr_xchg: map without BTF",
	  { LD_MAPVAL(1, M_ARRAY1, 0), MOV(2, 0), CALL(BPF_FUNC_kptr_xchg), MOV(0, 0), EXIT }, 0,
	  -EACCES, "has to have BTF in order to use bpf_kptr_xchg" },
	{ "strncmp: string in a map not frozen",
	  { ST(BPF_DW, 10, -8, 0), MOVR(1, 10), ALU(BPF_ADD, 1, -8), MOV(2, 8), LD_MAPVAL(3, M_RO, 0),
	    CALL(BPF_FUNC_strncmp), MOV(0, 0), EXIT }, 0, -EACCES, "R3 does not point to a readonly map" },
	{ "strtol: result pointer a scalar",
	  { ST(BPF_DW, 10, -8, 0), MOVR(1, 10), ALU(BPF_ADD, 1, -8), MOV(2, 8), MOV(3, 0), MOV(4, 0),
	    CALL(BPF_FUNC_strtol), MOV(0, 0), EXIT }, 0, -EACCES, "R4 type=scalar expected=fp" },
	{ "task_storage_get: a scalar task",
	  { LD_MAP(1, M_HASH), MOV(2, 0), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_task_storage_get), MOV(0, 0),
	    EXIT }, 0, -EACCES, "R2 type=scalar expected=ptr_" }, /* the task: args come first */
	{ "one load through ctx on one path and the stack on the other",
	  { ST(BPF_DW, 10, -8, 0), MOVR(6, 1), CALL(BPF_FUNC_get_prandom_u32), MOVR(2, 6),
	    JI(BPF_JEQ, 0, 0, 2), MOVR(2, 10), ALU(BPF_ADD, 2, -8), LDX(BPF_DW, 0, 2, 0), MOV(0, 0),
	    EXIT }, 0, -EINVAL, "same insn cannot be used with different pointers" },
	{ "strncmp: zero size", { ST(BPF_DW, 10, -8, 0), MOVR(1, 10), ALU(BPF_ADD, 1, -8), MOV(2, 0),
	    LD_MAPVAL(3, M_RO, 0), CALL(BPF_FUNC_strncmp), MOV(0, 0), EXIT }, 0, -EACCES,
	  "R2 invalid zero-sized read" },
};

static int fds[7];

static int setup(void **state)
{
	static const uint32_t spec[7][5] = {
		{ BPF_MAP_TYPE_HASH, 4, 8, 16, 0 },
		{ BPF_MAP_TYPE_ARRAY, 4, 64, 4, 0 },
		{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, 0 },
		{ BPF_MAP_TYPE_STACK_TRACE, 4, 64, 16, 0 },
		{ BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_MMAPABLE },
		{ BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_RDONLY_PROG },
		{ BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
	};

	for (int i = 0; i < 7; i++) {
		union bpf_attr a = { .map_type = spec[i][0], .key_size = spec[i][1],
				     .value_size = spec[i][2], .max_entries = spec[i][3],
				     .map_flags = spec[i][4] };

		fds[i] = (int)bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	return 0;
}

static uint32_t row_len(const struct row *r)
{
	uint32_t n = 32;

	while (n > 0 && !r->insns[n - 1].code && !r->insns[n - 1].imm && !r->insns[n - 1].off &&
	       !r->insns[n - 1].dst_reg && !r->insns[n - 1].src_reg && !(n >= 2 && r->insns[n - 2].code == (BPF_LD | BPF_DW | BPF_IMM)))
		n--;
	return n;
}

/* what load() gives the next program (struct row's btf and fi) */
static uint8_t load_btf;
static const uint8_t *load_fi;

static long load(const struct bpf_insn *insns, uint32_t n, uint32_t type, const char *license,
		 char *log, uint32_t log_size, uint32_t level)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)license;
	a.log_buf = (uintptr_t)log;
	a.log_size = log_size;
	a.log_level = level;
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags = BPF_F_SLEEPABLE; /* Linux loads no other kind */
	if (load_btf == 2 || (load_btf == 0 && pb_has_pseudo_func(insns, n))) {
		static struct bpf_func_info fi[PB_STATIC];
		long btf_fd = pb_attach(&a, insns, n, load_fi, sizeof(((struct row *)0)->fi), fi), ret;

		assert_true(btf_fd >= 0);
		ret = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		ksvc_fake_close((int)btf_fd);
		return ret;
	}
	return bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* One table row: load it and compare errno and log. */
static void test_row(void **state)
{
	static char log[65536];
	const struct row *r = *state;
	struct bpf_insn insns[32];
	uint32_t n = row_len(r);
	long ret;
	int err;

	memcpy(insns, r->insns, sizeof(insns));
	for (uint32_t k = 0; k < n; k++)
		if (insns[k].code == (BPF_LD | BPF_DW | BPF_IMM) && insns[k].src_reg &&
		    insns[k].imm <= M_HASH && insns[k].imm >= M_RB)
			insns[k].imm = fds[M_HASH - insns[k].imm];
	memset(log, 0, sizeof(log));
	load_btf = r->btf;
	load_fi = r->fi;
	ret = load(insns, n, r->type ? r->type : BPF_PROG_TYPE_PERF_EVENT,
		   r->license ? r->license : "GPL", log, sizeof(log), r->level ? r->level : 1);
	load_btf = 0;
	load_fi = NULL;
	err = ret < 0 ? (int)ret : 0;
	if (ret >= 0)
		ksvc_fake_close((int)ret);
	if (err != r->err || (r->log && !strstr(log, r->log)))
		fail_msg("row '%s': got %ld, want %d and log '%s'; log:\n%s", r->name, ret, r->err,
			 r->log ? r->log : "", log);
}

static void load_elf(const char *name, const char *sec, struct bpf_elf_obj *obj, int *fd)
{
	char path[256];

	*fd = bpf_elf_load(bpf_elf_path(name, path, sizeof(path)), sec,
			   BPF_PROG_TYPE_PERF_EVENT, obj);
	if (*fd < 0)
		printf("%s: %d\n%s\n", name, *fd, obj->log);
	assert_true(*fd >= 0);
}

/* clang-built perf-event programs load, and the count program counts. */
static void test_clang_programs(void **state)
{
	static struct bpf_elf_obj obj;
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *prog;
	union bpf_attr a;
	uint32_t key = (uint32_t)ksvc_fake.tgid;
	uint64_t v = 0;
	int fd;

	load_elf("perf_count", "perf_event", &obj, &fd);
	assert_int_equal(bpf_prog_get_fd(fd, &prog), 0);
	memset(&ctx, 0, sizeof(ctx));
	for (int i = 0; i < 3; i++)
		assert_int_equal(bpf_prog_run(prog, &ctx), 0);
	bpf_prog_put(prog);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)bpf_elf_map_fd(&obj, "counts");
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), 0);
	assert_int_equal(v, 3);
	ksvc_fake_close_all();
	assert_int_equal(setup(state), 0);

	load_elf("perf_stack", "perf_event", &obj, &fd);
	assert_int_equal(bpf_prog_get_fd(fd, &prog), 0);
	bpf_trace_reset();
	assert_int_equal(bpf_prog_run(prog, &ctx), 1);
	{
		char buf[256] = { 0 };

		bpf_trace_read(buf, sizeof(buf) - 1);
		assert_non_null(strstr(buf, "bpf_trace_printk: comm fake-task hash"));
	}
	bpf_prog_put(prog);
	load_elf("perf_events", "perf_event", &obj, &fd);
	assert_int_equal(bpf_prog_get_fd(fd, &prog), 0);
	ctx.data.sample_period = 1000;
	assert_int_equal(bpf_prog_run(prog, &ctx), 0);
	bpf_prog_put(prog);
}

/* The same programs as -mcpu=v3 code (ALU32, JMP32) load too. */
static void test_clang_v3(void **state)
{
	static const char *const names[] = { "perf_count_v3", "perf_stack_v3", "perf_events_v3" };
	static struct bpf_elf_obj obj;
	int fd;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		load_elf(names[i], "perf_event", &obj, &fd);
		ksvc_fake_close_all();
		assert_int_equal(setup(state), 0);
	}
}

/* One class count out of classify()'s packed word. */
static uint64_t class_count(uint64_t packed, int shift)
{
	return packed >> shift & 0xff;
}

/*
 * A branchy per-byte classifier (tests/bpf/perf_classify.bpf.c): its counters differ from path
 * to path, so only precision tracking keeps the walk within budget, as on Linux.  It must
 * also count what classify() compiled for the host counts.
 */
static void test_clang_classify(void **state)
{
	static const char *const names[] = { "perf_classify", "perf_classify_v3" };
	static const int shifts[6] = { CLASS_DIGIT, CLASS_ALPHA, CLASS_SPACE,
				       CLASS_CTRL,  CLASS_HIGH,  CLASS_OTHER };
	static struct bpf_elf_obj obj;
	static const char text[] = "Processed 19149 insns\tin 2 loops;\nno E2BIG\x01\x7f\xff";
	unsigned char buf[256], data[128];
	struct bpf_perf_event_data_kern ctx;
	uint64_t want[2][6] = { { 0 } }, got[6];
	uint32_t key = 0;
	struct bpf_prog *prog;
	union bpf_attr a;
	int fd;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)text[i % (sizeof(text) - 1)];
	for (int k = 0; k < 6; k++) {
		want[0][k] = class_count(classify(buf, 128), shifts[k]) +
			     class_count(classify(buf + 128, 128), shifts[k]);
		want[1][k] = class_count(classify(data, sizeof(data)), shifts[k]);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		load_elf(names[i], "perf_event", &obj, &fd);
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)bpf_elf_map_fd(&obj, "bufs");
		a.key = (uintptr_t)&key;
		a.value = (uintptr_t)buf;
		assert_int_equal(bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)), 0);
		memset(&ctx, 0, sizeof(ctx));
		ctx.data.addr = (uintptr_t)data;
		assert_int_equal(bpf_prog_get_fd(fd, &prog), 0);
		assert_int_equal(bpf_prog_run(prog, &ctx), 0);
		bpf_prog_put(prog);
		for (uint32_t k = 0; k < 2; k++) {
			a.map_fd = (uint32_t)bpf_elf_map_fd(&obj, "classes");
			a.key = (uintptr_t)&k;
			a.value = (uintptr_t)got;
			assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), 0);
			assert_memory_equal(got, want[k], sizeof(got));
		}
		ksvc_fake_close_all();
		assert_int_equal(setup(state), 0);
	}
}

/* Load (maps as in the rows), run once on a zeroed perf ctx, return r0. */
static uint64_t load_run(const struct bpf_insn *in, uint32_t n)
{
	static char log[16384];
	struct bpf_perf_event_data_kern ctx;
	struct bpf_insn insns[64];
	struct bpf_prog *prog;
	uint64_t r0;
	long fd;

	memcpy(insns, in, n * sizeof(*in));
	for (uint32_t k = 0; k < n; k++)
		if (insns[k].code == (BPF_LD | BPF_DW | BPF_IMM) && insns[k].src_reg &&
		    insns[k].imm <= M_HASH && insns[k].imm >= M_RB)
			insns[k].imm = fds[M_HASH - insns[k].imm];
	fd = load(insns, n, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, sizeof(log), 1);
	if (fd < 0)
		fail_msg("load of %u insns: %ld, log:\n%s", n, fd, log);
	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(bpf_prog_get_fd((int)fd, &prog), 0);
	r0 = bpf_prog_run(prog, &ctx);
	bpf_prog_put(prog);
	ksvc_fake_close((int)fd);
	return r0;
}

/* Callbacks run by the interpreter, and helpers' results, on the host. */
static void test_callbacks_run(void **state)
{
	static const struct bpf_insn loop_sum[] = {
		ST(BPF_DW, 10, -8, 0), MOV(1, 10), LD_FUNC(2, 9), MOVR(3, 10), ALU(BPF_ADD, 3, -8),
		MOV(4, 0), CALL(BPF_FUNC_loop), LDX(BPF_DW, 1, 10, -8), ALU(BPF_MUL, 1, 1000),
		ALUR(BPF_ADD, 0, 1), EXIT,
		/* callback (index, ctx): *ctx += index */
		LDX(BPF_DW, 3, 2, 0), ALUR(BPF_ADD, 3, 1), STX(BPF_DW, 2, 3, 0), MOV(0, 0), EXIT,
	};
	static const struct bpf_insn loop_stop[] = {
		MOV(1, 100), LD_FUNC(2, 5), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), EXIT,
		/* stop at index 4: 5 runs */
		MOV(0, 0), JI(BPF_JNE, 1, 4, 1), MOV(0, 1), EXIT,
	};
	static const struct bpf_insn each_sum[] = {
		ST(BPF_DW, 10, -8, 0), LD_MAP(1, M_HASH), LD_FUNC(2, 9), MOVR(3, 10), ALU(BPF_ADD, 3, -8),
		MOV(4, 0), CALL(BPF_FUNC_for_each_map_elem), LDX(BPF_DW, 1, 10, -8), ALU(BPF_MUL, 1, 1000),
		ALUR(BPF_ADD, 0, 1), EXIT,
		/* callback (map, key, value, ctx): *ctx += *value */
		LDX(BPF_DW, 5, 3, 0), LDX(BPF_DW, 6, 4, 0), ALUR(BPF_ADD, 6, 5), STX(BPF_DW, 4, 6, 0),
		MOV(0, 0), EXIT,
	};
	static const struct bpf_insn strtol_run[] = {
		LD64(1, 0x007a663178302d20ull), /* " -0x1fz" */
		STX(BPF_DW, 10, 1, -16), ST(BPF_DW, 10, -8, 0), MOVR(1, 10), ALU(BPF_ADD, 1, -16),
		MOV(2, 8), MOV(3, 0), MOVR(4, 10), ALU(BPF_ADD, 4, -8), CALL(BPF_FUNC_strtol),
		LDX(BPF_DW, 1, 10, -8), ALU(BPF_MUL, 1, 1000), ALUR(BPF_ADD, 0, 1), EXIT,
	};
	static const struct bpf_insn e2big[] = {
		LD64(1, (1 << 23) + 1), LD_FUNC(2, 5), MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_loop), EXIT,
		MOV(0, 0), EXIT,
	};
	(void)state;
	/* callbacks nested 4 deep load and run; 5 deep: E2BIG (the kernel stack bounds them) */
	for (int depth = 4; depth <= 5; depth++) {
		static char log[4096];
		struct bpf_insn p[64];
		uint32_t n = 0;
		long fd;

		for (int l = 0; l < depth; l++) { /* level l calls level l + 1, 8 slots each */
			struct bpf_insn lvl[] = { MOV(1, 2), LD_FUNC(2, 6), MOV(3, 0), MOV(4, 0),
						  CALL(BPF_FUNC_loop), MOV(0, 0), EXIT };

			memcpy(&p[n], lvl, sizeof(lvl));
			n += ARRAY_LEN(lvl);
		}
		p[n++] = (struct bpf_insn)MOV(0, 0);
		p[n++] = (struct bpf_insn)EXIT;
		fd = load(p, n, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, sizeof(log), 1);
		if (depth == 4) {
			if (fd < 0)
				fail_msg("4 deep: %ld\n%s", fd, log);
			assert_int_equal(load_run(p, n), 0);
			ksvc_fake_close((int)fd);
		} else {
			assert_int_equal(fd, -E2BIG);
			assert_non_null(strstr(log, "callbacks nested 5 deep"));
		}
	}
	assert_int_equal(load_run(loop_sum, ARRAY_LEN(loop_sum)), 45 * 1000 + 10);
	assert_int_equal(load_run(loop_stop, ARRAY_LEN(loop_stop)), 5);
	for (uint32_t k = 1; k <= 3; k++) {
		uint64_t v = k;
		union bpf_attr a = { .map_fd = (uint32_t)fds[0], .key = (uintptr_t)&k,
				     .value = (uintptr_t)&v };

		assert_int_equal(bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)), 0);
	}
	assert_int_equal(load_run(each_sum, ARRAY_LEN(each_sum)), 6 * 1000 + 3);
	assert_int_equal((int64_t)load_run(strtol_run, ARRAY_LEN(strtol_run)), 6 - 31 * 1000);
	assert_int_equal(load_run(e2big, ARRAY_LEN(e2big)), (uint32_t)-E2BIG);
}

static void test_log_attrs(void **state)
{
	static const struct bpf_insn prog[] = { MOV(0, 0), JI(BPF_JEQ, 0, 0, 0), EXIT };
	char log[4096], small[128];

	memset(log, 0, sizeof(log));
	assert_true(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, sizeof(log), 2) >= 0);
	assert_non_null(strstr(log, "0: (b7)"));
	assert_non_null(strstr(log, "processed"));
	/* too small for the level-2 log */
	memset(small, 'x', sizeof(small));
	assert_int_equal(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", small, sizeof(small), 2),
			 -ENOSPC);
	assert_int_equal(small[sizeof(small) - 1], 0);
	assert_int_equal(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, 64, 1), -EINVAL);
	assert_int_equal(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", NULL, 4096, 1), -EINVAL);
	assert_int_equal(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, 4096, 0), -EINVAL);
	assert_int_equal(load(prog, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, 4096, 8), -EINVAL);
	assert_int_equal(load(prog, 0, BPF_PROG_TYPE_PERF_EVENT, "GPL", NULL, 0, 0), -E2BIG);
	/* the log is written even when the load fails */
	memset(log, 0, sizeof(log));
	assert_int_equal(load(prog, 1, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, sizeof(log), 1),
			 -EINVAL);
	assert_non_null(strstr(log, "last insn is not an exit or jmp"));
	/* and, as on Linux, closed by the figures whether the program passed or not */
	assert_non_null(strstr(log, "not an exit or jmp\nprocessed 0 insns (limit 1000000) "));
	{
		static const struct bpf_insn st_ctx[] = { ST(BPF_DW, 1, 0, 0), MOV(0, 0), EXIT };

		memset(log, 0, sizeof(log));
		assert_int_equal(load(st_ctx, 3, BPF_PROG_TYPE_PERF_EVENT, "GPL", log, sizeof(log), 1),
				 -EACCES);
		assert_non_null(strstr(log, "BPF_ST stores into R1 ctx is not allowed\n"
					    "processed 1 insns (limit 1000000) "));
	}
	ksvc_fake_close_all();
	assert_int_equal(setup(state), 0);
}

int main(void)
{
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	struct CMUnitTest tests[NROWS + 5];
	const char *only = getenv("BPF_TEST_ROW"); /* debugging one row */
	size_t n = 0;

	for (size_t i = 0; i < NROWS; i++) {
		if (only && strcmp(only, rows[i].name))
			continue;
		tests[n] = (struct CMUnitTest){ .name = rows[i].name, .test_func = test_row,
						.initial_state = (void *)&rows[i] };
		n++;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_clang_programs);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_clang_v3);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_clang_classify);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_log_attrs);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_callbacks_run);
	return _cmocka_run_group_tests("bpf_verify", tests, n, setup, teardown);
}
