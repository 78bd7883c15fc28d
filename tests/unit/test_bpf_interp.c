/*
 * test_bpf_interp.c - the interpreter (bpf/interp.c) on hand-built programs: ISA edge cases
 * (division by zero, INT_MIN/-1, shift masking, ALU32 zero-extension, movsx, bswap, sign-
 * extending loads), jumps incl. gotol, atomics, lddw, helper calls, bpf-to-bpf frames, and the
 * counting interpreter agreeing with the fast one.  The conformance suite runs in tier 20.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../fakes/ksvc_fake.h"
#include "bpf_unit_prog.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32(d, i) I(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOVR(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU(op, d, i) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALUR(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32(op, d, i) I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32R(op, d, s) I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define LD64(d, v) I(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(uint32_t)(v)), \
	I(0, 0, 0, 0, (int32_t)((uint64_t)(v) >> 32))
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

struct case_ {
	const char *name;
	struct bpf_insn insns[24];
	uint32_t len;
	uint64_t r0;
	uint64_t executed;
};

#define C(name, r0, n, ...) { name, { __VA_ARGS__ }, n, r0, 0 }

static const struct case_ cases[] = {
	C("div by zero", 0, 4, MOV(0, 7), MOV(1, 0), ALUR(BPF_DIV, 0, 1), EXIT),
	C("mod by zero", 7, 4, MOV(0, 7), MOV(1, 0), ALUR(BPF_MOD, 0, 1), EXIT),
	C("div32 uses low half", 0, 5, MOV(0, 7), LD64(1, 0x100000000ull), ALU32R(BPF_DIV, 0, 1), EXIT),
	C("sdiv INT_MIN/-1", 0x8000000000000000ull, 4, LD64(0, 0x8000000000000000ull),
	  I(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 1, -1), EXIT),
	C("smod INT_MIN%-1", 0, 4, LD64(0, 0x8000000000000000ull),
	  I(BPF_ALU64 | BPF_MOD | BPF_K, 0, 0, 1, -1), EXIT),
	C("sdiv32 -7/2", 0xfffffffdu, 3, MOV32(0, -7), I(BPF_ALU | BPF_DIV | BPF_K, 0, 0, 1, 2), EXIT),
	C("smod -7%2", (uint64_t)-1, 3, MOV(0, -7), I(BPF_ALU64 | BPF_MOD | BPF_K, 0, 0, 1, 2), EXIT),
	C("lsh masked", 2, 4, MOV(0, 1), MOV(1, 65), ALUR(BPF_LSH, 0, 1), EXIT),
	C("lsh32 masked", 2, 4, MOV(0, 1), MOV(1, 33), ALU32R(BPF_LSH, 0, 1), EXIT),
	C("arsh", (uint64_t)-2, 3, MOV(0, -8), ALU(BPF_ARSH, 0, 2), EXIT),
	C("arsh32", 0xfffffffeu, 3, MOV32(0, -8), ALU32(BPF_ARSH, 0, 2), EXIT),
	C("alu32 zero-extends", 0, 3, MOV(0, -1), ALU32(BPF_ADD, 0, 1), EXIT),
	C("mov32 zero-extends", 0xffffffffu, 2, MOV32(0, -1), EXIT),
	C("neg", (uint64_t)-5, 3, MOV(0, 5), I(BPF_ALU64 | BPF_NEG, 0, 0, 0, 0), EXIT),
	C("movsx8", (uint64_t)-128, 3, MOV(1, 0x80), I(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 8, 0), EXIT),
	C("movsx16 32", 0xffff8000u, 3, MOV(1, 0x8000), I(BPF_ALU | BPF_MOV | BPF_X, 0, 1, 16, 0), EXIT),
	C("movsx32", (uint64_t)-1, 3, MOV32(1, -1), I(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 32, 0), EXIT),
	C("be16", 0x3412, 3, MOV(0, 0x1234), I(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 16), EXIT),
	C("le32 truncates", 0x55667788, 4, LD64(0, 0x1122334455667788ull),
	  I(BPF_ALU | BPF_END | BPF_TO_LE, 0, 0, 0, 32), EXIT),
	C("bswap64", 0x8877665544332211ull, 4, LD64(0, 0x1122334455667788ull),
	  I(BPF_ALU64 | BPF_END, 0, 0, 0, 64), EXIT),
	C("jmp signed", 1, 6, MOV(0, 0), MOV(1, -1), I(BPF_JMP | BPF_JSLT | BPF_K, 1, 0, 1, 0), EXIT,
	  /* taken */ MOV(0, 1), EXIT),
	C("gotol", 3, 5, MOV(0, 1), I(BPF_JMP32 | BPF_JA, 0, 0, 0, 1), EXIT, MOV(0, 3), EXIT),
	C("jmp32 low half", 1, 7, LD64(1, 0x100000005ull), MOV(0, 0),
	  I(BPF_JMP32 | BPF_JEQ | BPF_K, 1, 0, 1, 5), EXIT, MOV(0, 1), EXIT),
	C("ldxsb from stack", (uint64_t)-3, 3, I(BPF_ST | BPF_MEM | BPF_B, 10, 0, -1, -3),
	  I(BPF_LDX | BPF_MEMSX | BPF_B, 0, 10, -1, 0), EXIT),
	C("atomics", 0x0f, 10, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 1), MOV(1, 2),
	  I(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 1, -8, BPF_OR), MOV(1, 4),
	  I(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 1, -8, BPF_ADD | BPF_FETCH), /* r1 = 3 */
	  MOV(0, 7), MOV(2, 0xf), I(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 2, -8, BPF_CMPXCHG),
	  /* [fp-8] = 0xf, r0 = 7 */ I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -8, 0), EXIT),
	C("cmpxchg32 fails", 5, 5, I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 5), MOV(0, 6), MOV(1, 9),
	  I(BPF_STX | BPF_ATOMIC | BPF_W, 10, 1, -4, BPF_CMPXCHG), EXIT),
	C("xchg", 0x77, 4, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0x77), MOV(0, 1),
	  I(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 0, -8, BPF_XCHG), EXIT),
	/* caller keeps fp-8 = 1 while the callee writes its own fp-8 = 2; r6 survives the call */
	C("local call frames", 0x1002 + 1 + 0x100 * 5, 15, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 1),
	  MOV(6, 5), MOV(1, 0x1000), I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 6),
	  I(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, -8, 0), ALUR(BPF_ADD, 0, 1), MOVR(1, 6),
	  ALU(BPF_MUL, 1, 0x100), ALUR(BPF_ADD, 0, 1), EXIT,
	  /* callee */ I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 2), MOV(6, 99),
	  I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -8, 0), ALUR(BPF_ADD, 0, 1), EXIT),
};

static uint64_t run(const struct bpf_insn *insns, uint32_t len, bool counting, uint64_t *count)
{
	struct bpf_dinsn d[32];
	static uint8_t stack[BPF_MAX_FRAMES * BPF_STACK_SIZE] __attribute__((aligned(16)));

	assert_int_equal(bpf_check_structure(insns, len, false, NULL), 0);
	bpf_interp_decode(insns, len, d, BPF_STACK_SIZE, counting, 0);
	return bpf_interp_run(d, 0, 0, stack + sizeof(stack), counting ? count : NULL);
}

static void test_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct case_ *c = &cases[i];
		struct bpf_insn insns[24];
		uint32_t len = c->len;
		uint64_t n = 0, fast, slow;

		memcpy(insns, c->insns, sizeof(insns));
		fast = run(insns, len, false, NULL);
		slow = run(insns, len, true, &n);
		if (fast != c->r0 || slow != c->r0)
			print_error("case '%s': fast 0x%llx counting 0x%llx want 0x%llx\n", c->name,
				    (unsigned long long)fast, (unsigned long long)slow,
				    (unsigned long long)c->r0);
		assert_int_equal(fast, c->r0);
		assert_int_equal(slow, c->r0);
		assert_true(n > 0 && n <= len);
	}
}

static void test_count_and_helpers(void **state)
{
	/* r0 = 0; loop 10 times: r0 += ktime_get_ns() - 1000000; exit */
	static const struct bpf_insn loop[] = {
		MOV(6, 0), MOV(7, 10), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
		ALU(BPF_SUB, 0, 1000000), ALUR(BPF_ADD, 6, 0), ALU(BPF_SUB, 7, 1),
		I(BPF_JMP | BPF_JNE | BPF_K, 7, 0, -5, 0), MOVR(0, 6), EXIT,
	};
	uint64_t n = 0;

	ksvc_fake.clock_ns = 1000000;
	ksvc_fake.clock_step_ns = 1;
	assert_int_equal(run(loop, 9, true, &n), 45);
	assert_int_equal(n, 2 + 10 * 5 + 2);
	ksvc_fake.clock_step_ns = 0;
}

static void test_memory_args(void **state)
{
	/* r0 = *(u32 *)(r1 + 2) + r2, unaligned */
	static const struct bpf_insn prog[] = {
		I(BPF_LDX | BPF_MEM | BPF_W, 0, 1, 2, 0), ALUR(BPF_ADD, 0, 2),
		I(BPF_STX | BPF_MEM | BPF_H, 1, 0, 7, 0), EXIT,
	};
	uint8_t mem[10] = { 0, 0, 1, 2, 3, 4, 0, 0, 0, 0 };
	struct bpf_dinsn d[4];
	uint64_t stack[64];

	bpf_interp_decode(prog, 4, d, BPF_STACK_SIZE, false, 0);
	assert_int_equal(bpf_interp_run(d, (uintptr_t)mem, 10, stack + 64, NULL), 0x0403020b);
	assert_int_equal(mem[7], 0x0b);
	assert_int_equal(mem[8], 0x02);
}

static void test_structure(void **state)
{
	static const struct bpf_insn bad_reg[] = { MOV(11, 0), EXIT };
	static const struct bpf_insn into_lddw[] = { I(BPF_JMP | BPF_JA, 0, 0, 1, 0), LD64(0, 1), EXIT };
	static const struct bpf_insn callx[] = { MOV(2, 5), I(BPF_JMP | BPF_CALL | BPF_X, 2, 0, 0, 0),
						 EXIT };

	/* the test path refuses a bad register at once; the verifier when its walk reaches it */
	assert_int_equal(bpf_check_structure(bad_reg, 2, false, NULL), -EINVAL);
	assert_int_equal(bpf_check_structure(bad_reg, 2, true, NULL), 0);
	assert_int_equal(bpf_check_structure(into_lddw, 4, false, NULL), -EINVAL);
	assert_int_equal(bpf_check_structure(into_lddw, 4, true, NULL), 0); /* the cfg pass's */
	assert_int_equal(bpf_check_structure(callx, 3, false, NULL), 0);
	assert_int_equal(bpf_check_structure(callx, 3, true, NULL), -EINVAL);
}

/* BPF_PROG_LOAD of a perf_event program with func_info (every function static): fd or -errno */
static long load_btf(const struct bpf_insn *insns, uint32_t n, char *log, uint32_t logsize)
{
	long btf, fd = pb_prog_load(insns, n, NULL, 0, log, logsize, &btf);

	assert_true(btf >= 0);
	ksvc_fake_close((int)btf);
	return fd;
}

static int prog_array(uint32_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	a.key_size = a.value_size = 4;
	a.max_entries = n;
	return (int)bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
}

static long slot_set(int map, uint32_t key, uint32_t fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&fd;
	return bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
}

#define LDMAP(d, fd) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define CALLH(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define CALLL(off) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, off)
#define NI(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define STDW(off, v) I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, off, v)

/*
 * Tail calls from subprograms (Linux 6.1's arm64 JIT semantics): the next program runs in
 * place of the subprogram's frame (its fp-16 is not the caller's) and returns to the caller;
 * a miss falls through; a subprogram tail-calling its own program nests 33 deep (34 frames,
 * past BPF_MAX_FRAMES); the frames above one are kept under 256 bytes (EACCES).
 */
static void test_subprog_tail_calls(void **state)
{
	static char log[8192];
	int pa = prog_array(4);
	const struct bpf_insn t7[] = { STDW(-16, 5000), MOV(0, 7), EXIT };
	/* main: fp-16 = 100, sub() + fp-16; sub: fp-16 = 1, tail call slot [8], else 50 */
	struct bpf_insn p[] = {
		STDW(-16, 100), CALLL(3), I(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, -16, 0), ALUR(BPF_ADD, 0, 1),
		EXIT, STDW(-16, 1), LDMAP(2, pa), MOV(3, 0), CALLH(BPF_FUNC_tail_call), MOV(0, 50), EXIT,
	};
	/* main: sub() + 1; sub: tail call slot 1 (this program), else 0 */
	const struct bpf_insn chain[] = {
		CALLL(2), ALU(BPF_ADD, 0, 1), EXIT, LDMAP(2, pa), MOV(3, 1), CALLH(BPF_FUNC_tail_call),
		MOV(0, 0), EXIT,
	};
	struct bpf_insn big[] = { STDW(-256, 0), CALLL(2), MOV(0, 0), EXIT, LDMAP(2, pa), MOV(3, 0),
				  CALLH(BPF_FUNC_tail_call), MOV(0, 0), EXIT };
	const int32_t slots[] = { 0, 2, 9 }, want[] = { 107, 150, 150 };
	long fd, t, c;

	assert_true(pa >= 0);
	t = unit_prog_load(t7, NI(t7), "GPL", log, sizeof(log));
	c = load_btf(chain, NI(chain), log, sizeof(log));
	assert_true(t >= 0 && c >= 0);
	assert_int_equal(slot_set(pa, 0, (uint32_t)t), 0);
	assert_int_equal(slot_set(pa, 1, (uint32_t)c), 0);
	assert_int_equal(unit_prog_load(p, NI(p), "GPL", log, sizeof(log)), -EINVAL); /* no BTF */
	assert_non_null(strstr(log, "tail_call is not allowed in subprogs without BTF"));
	for (int i = 0; i < 3; i++) {
		p[8].imm = slots[i];
		fd = load_btf(p, NI(p), log, sizeof(log));
		if (fd < 0)
			fail_msg("slot %d: %ld\n%s", slots[i], fd, log);
		assert_int_equal(unit_prog_run(fd), want[i]);
		ksvc_fake_close((int)fd);
	}
	assert_int_equal(unit_prog_run(c), 34);
	/* tree: sub() + sub() + 1, sub tail-calling tree itself: each main run is one more; 33
	 * per call path would make 2^34 - 1 runs, the run's cap stops it at 1 + 2112 */
	{
		const struct bpf_insn tree[] = {
			ALUR(BPF_MOV, 7, 1), CALLL(6), ALUR(BPF_MOV, 6, 0), ALUR(BPF_MOV, 1, 7), CALLL(3),
			ALUR(BPF_ADD, 0, 6), ALU(BPF_ADD, 0, 1), EXIT,
			LDMAP(2, pa), MOV(3, 2), CALLH(BPF_FUNC_tail_call), MOV(0, 0), EXIT,
		};
		long tr = load_btf(tree, NI(tree), log, sizeof(log));

		if (tr < 0)
			fail_msg("tree: %ld\n%s", tr, log);
		assert_int_equal(slot_set(pa, 2, (uint32_t)tr), 0);
		assert_int_equal(unit_prog_run(tr), 1 + BPF_MAX_TAIL_CALLS_RUN);
		ksvc_fake_close((int)tr);
	}
	assert_int_equal(load_btf(big, NI(big), log, sizeof(log)), -EACCES);
	assert_non_null(strstr(log, "tail_calls are not allowed when call stack of previous frames is "
				    "256 bytes. Too large\n"));
	big[0].off = -224;
	fd = load_btf(big, NI(big), log, sizeof(log));
	assert_true(fd >= 0);
	assert_int_equal(unit_prog_run(fd), 0);
	ksvc_fake_close((int)fd);
	ksvc_fake_close((int)c);
	ksvc_fake_close((int)t);
	ksvc_fake_close(pa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_count_and_helpers),
		cmocka_unit_test(test_memory_args),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_subprog_tail_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
