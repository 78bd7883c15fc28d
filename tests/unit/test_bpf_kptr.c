/*
 * test_bpf_kptr.c - kptrs in map values: bpf/map_btf.c's parse of a value's __kptr members
 * (Linux 6.1's btf_parse_kptrs, outcomes checked there under refvm by tests/user/t_bpf_kptr)
 * and bpf/verify_kptr.c's rules for loads, stores and bpf_kptr_xchg, with a small kernel BTF:
 *
 *	struct task { int tid; int tgid; struct task *slot; struct inner { int x, y; } in; }
 *	(tid 0, tgid 4, slot 8, in 16: size 24; the fake seam's task starts with tid)
 *
 * Map values (map BTF): struct val { u64 a; struct task __kptr *p; struct inner __kptr *q; }.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include <bpf/bpf.h>
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../../bpf/btf.h"
#include "../fakes/ksvc_fake.h"
#include "../user/btf_blob.h"

#define W(x) w(&b, (x))

/* kernel BTF: [1] int, [2] task, [3] ptr task, [4] inner */
enum { K_INT = 1, K_TASK, K_PTR_TASK, K_INNER };

static int setup(void **state)
{
	static uint8_t raw[4096];
	struct blob b;

	blob_init(&b);
	W(str(&b, "int")), W(INFO(BTF_KIND_INT, 0, 0)), W(4), W(BTF_INT_SIGNED << 24 | 32);
	W(str(&b, "task")), W(INFO(BTF_KIND_STRUCT, 0, 4)), W(24);
	W(str(&b, "tid")), W(K_INT), W(0);
	W(str(&b, "tgid")), W(K_INT), W(32);
	W(str(&b, "slot")), W(K_PTR_TASK), W(64);
	W(str(&b, "in")), W(K_INNER), W(128);
	W(0), W(INFO(BTF_KIND_PTR, 0, 0)), W(K_TASK);
	W(str(&b, "inner")), W(INFO(BTF_KIND_STRUCT, 0, 2)), W(8);
	W(str(&b, "x")), W(K_INT), W(0);
	W(str(&b, "y")), W(K_INT), W(32);
	return bpf_btf_vmlinux_init(raw, blob_build(&b, raw));
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	return 0;
}

/* map BTF variants */
enum variant { GOOD, REF, UNKNOWN, OTHER_TAG, TWO_TAGS, TO_INT, AT_4, NINE, DATASEC };
/* [1] int, [2] u64, [3] task, [4] inner, [5] tag->task, [6] ptr->5, [7] tag->inner,
 * [8] ptr->7, [9] the value */
enum { M_INT = 1, M_U64, M_TASK, M_INNER, M_TAG_T, M_PTR_T, M_TAG_I, M_PTR_I, M_VAL };

static long btf_fd(enum variant v, uint32_t *value_size)
{
	static uint8_t raw[4096];
	struct blob b;
	union bpf_attr a;
	const char *tag = v == REF ? "kptr_ref" : v == OTHER_TAG ? "user" : "kptr";

	blob_init(&b);
	W(str(&b, "int")), W(INFO(BTF_KIND_INT, 0, 0)), W(4), W(BTF_INT_SIGNED << 24 | 32);
	W(str(&b, "u64")), W(INFO(BTF_KIND_INT, 0, 0)), W(8), W(64);
	W(str(&b, v == UNKNOWN ? "no_such" : "task")), W(INFO(BTF_KIND_STRUCT, 0, 0)), W(0);
	W(str(&b, "inner")), W(INFO(BTF_KIND_STRUCT, 0, 0)), W(0);
	/* TWO_TAGS: the task's tag points at the inner's tag; TO_INT: at int */
	W(str(&b, tag)), W(INFO(BTF_KIND_TYPE_TAG, 0, 0)),
		W(v == TWO_TAGS ? M_TAG_I : v == TO_INT ? M_INT : M_TASK);
	W(0), W(INFO(BTF_KIND_PTR, 0, 0)), W(M_TAG_T);
	W(str(&b, "kptr")), W(INFO(BTF_KIND_TYPE_TAG, 0, 0)), W(M_INNER);
	W(0), W(INFO(BTF_KIND_PTR, 0, 0)), W(M_TAG_I);
	if (v == NINE) { /* { u64 a; nine task kptrs } */
		W(str(&b, "val")), W(INFO(BTF_KIND_STRUCT, 0, 10)), W(80);
		W(str(&b, "a")), W(M_U64), W(0);
		for (uint32_t i = 1; i < 10; i++)
			W(str(&b, "p")), W(M_PTR_T), W(64 * i);
		*value_size = 80;
	} else if (v == DATASEC) { /* .bss { u64 a; struct task __kptr *p; } */
		W(str(&b, "a")), W(INFO(BTF_KIND_VAR, 0, 0)), W(M_U64), W(1);
		W(str(&b, "p")), W(INFO(BTF_KIND_VAR, 0, 0)), W(M_PTR_T), W(1);
		W(str(&b, ".bss")), W(INFO(BTF_KIND_DATASEC, 0, 2)), W(16);
		W(M_VAL), W(0), W(8);
		W(M_VAL + 1), W(8), W(8);
		*value_size = 16;
	} else if (v == AT_4) { /* { int a; int b; struct task __kptr *p; } */
		W(str(&b, "val")), W(INFO(BTF_KIND_STRUCT, 0, 3)), W(16);
		W(str(&b, "a")), W(M_INT), W(0);
		W(str(&b, "b")), W(M_INT), W(32);
		W(str(&b, "p")), W(M_PTR_T), W(64);
		*value_size = 16;
	} else { /* { u64 a; struct task __kptr *p; struct inner __kptr *q; } */
		W(str(&b, "val")), W(INFO(BTF_KIND_STRUCT, 0, 3)), W(24);
		W(str(&b, "a")), W(M_U64), W(0);
		W(str(&b, "p")), W(M_PTR_T), W(64);
		W(str(&b, "q")), W(M_PTR_I), W(128);
		*value_size = 24;
	}
	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = blob_build(&b, raw);
	return bpf_sys(BPF_BTF_LOAD, &a, sizeof(a));
}

static long map_new(uint32_t type, enum variant v, uint32_t flags)
{
	union bpf_attr a;
	uint32_t vs = 0;
	long btf = btf_fd(v, &vs), fd;

	assert_true(btf >= 0);
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vs;
	a.max_entries = v == DATASEC ? 1 : 4;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = v == DATASEC ? 0 : M_INT;
	a.btf_value_type_id = v == DATASEC ? M_VAL + 2 : M_VAL; /* the section after its vars */
	strcpy(a.map_name, "m");
	fd = bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
	ksvc_fake_close((int)btf);
	return fd;
}

static struct bpf_map *map_of(long fd)
{
	struct bpf_map *m;

	assert_int_equal(bpf_map_get_fd((int)fd, &m), 0);
	bpf_map_put(m); /* the fd keeps it */
	return m;
}

static void test_parse(void **state)
{
	long fd = map_new(BPF_MAP_TYPE_ARRAY, GOOD, 0);
	struct bpf_map *m;

	assert_true(fd >= 0);
	m = map_of(fd);
	assert_int_equal(m->nr_kptrs, 2);
	assert_int_equal(m->kptr_err, 0);
	assert_int_equal(m->kptrs[0].off, 8);
	assert_int_equal(m->kptrs[0].btf_id, K_TASK);
	assert_false(m->kptrs[0].ref);
	assert_int_equal(m->kptrs[1].off, 16);
	assert_int_equal(m->kptrs[1].btf_id, K_INNER);
	ksvc_fake_close((int)fd);
	fd = map_new(BPF_MAP_TYPE_ARRAY, DATASEC, 0);
	assert_true(fd >= 0);
	m = map_of(fd);
	assert_int_equal(m->nr_kptrs, 1);
	assert_int_equal(m->kptrs[0].off, 8);
	ksvc_fake_close((int)fd);
	/* the map kinds and flags a kptr allows */
	assert_true((fd = map_new(BPF_MAP_TYPE_HASH, GOOD, 0)) >= 0);
	ksvc_fake_close((int)fd);
	assert_true((fd = map_new(BPF_MAP_TYPE_LRU_HASH, GOOD, 0)) >= 0);
	ksvc_fake_close((int)fd);
	assert_true((fd = map_new(BPF_MAP_TYPE_PERCPU_ARRAY, GOOD, 0)) >= 0);
	ksvc_fake_close((int)fd);
	assert_int_equal(map_new(BPF_MAP_TYPE_PERCPU_HASH, GOOD, 0), -EOPNOTSUPP);
	assert_int_equal(map_new(BPF_MAP_TYPE_ARRAY, GOOD, BPF_F_RDONLY_PROG), -EACCES);
	assert_int_equal(map_new(BPF_MAP_TYPE_HASH, GOOD, BPF_F_WRONLY_PROG), -EACCES);
	/* kptrs that do not parse: a map without them, and why */
	static const struct {
		enum variant v;
		int err;
	} bad[] = {
		{ REF, -ENOENT }, { UNKNOWN, -ENOENT }, { OTHER_TAG, -EINVAL }, { TWO_TAGS, -EINVAL },
		{ TO_INT, -EINVAL }, { AT_4, -EINVAL }, { NINE, -E2BIG },
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = map_new(BPF_MAP_TYPE_ARRAY, bad[i].v, 0);
		assert_true(fd >= 0);
		m = map_of(fd);
		assert_int_equal(m->nr_kptrs, 0);
		assert_int_equal(m->kptr_err, bad[i].err);
		ksvc_fake_close((int)fd);
	}
	/* a percpu hash whose kptrs do not parse is a plain one */
	assert_true((fd = map_new(BPF_MAP_TYPE_PERCPU_HASH, REF, 0)) >= 0);
	ksvc_fake_close((int)fd);
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define MOVR(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define JNE0(d, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, 0)
/* r0 = &value of key 0 of map, or return: 8 insns */
#define LOOKUP(map)                                                                              \
	ST(BPF_W, 10, -4, 0), MOVR(2, 10), ADD(2, -4),                                           \
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)(map)),        \
		INSN(0, 0, 0, 0, 0), CALL(BPF_FUNC_map_lookup_elem), JNE0(0, 1), EXIT
#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static char logbuf[8192];

static long load(const struct bpf_insn *insns, uint32_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(logbuf, 0, sizeof(logbuf));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	a.log_buf = (uintptr_t)logbuf;
	a.log_size = sizeof(logbuf);
	a.log_level = 1;
	return bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}

static uint64_t run(long fd)
{
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *prog;
	uint64_t r0;

	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(bpf_prog_get_fd((int)fd, &prog), 0);
	r0 = bpf_prog_run(prog, &ctx);
	bpf_prog_put(prog);
	return r0;
}

static void refused(const struct bpf_insn *p, uint32_t n, const char *msg)
{
	long fd = load(p, n);

	if (fd >= 0 || !strstr(logbuf, msg))
		fail_msg("want EACCES with '%s': %ld, log %s", msg, fd, logbuf);
	assert_int_equal(fd, -EACCES);
}

static long accepted(const struct bpf_insn *p, uint32_t n)
{
	long fd = load(p, n);

	if (fd < 0)
		fail_msg("refused: %ld, log %s", fd, logbuf);
	return fd;
}

static int elem(int cmd, long map, uint64_t *v)
{
	union bpf_attr a;
	uint32_t key = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)v;
	return (int)bpf_sys(cmd, &a, sizeof(a));
}

/* the current task stored, read back through the kptr; the syscalls see zeros */
static void test_store_load(void **state)
{
	long map = map_new(BPF_MAP_TYPE_ARRAY, GOOD, 0), st, ld;
	uint64_t v[3] = { 0, 0, 0 };
	const struct bpf_insn store[] = { LOOKUP(map), MOVR(6, 0), CALL(BPF_FUNC_get_current_task_btf),
					  STX(BPF_DW, 6, 0, 8), MOV(0, 1), EXIT };
	const struct bpf_insn read[] = { LOOKUP(map), LDX(BPF_DW, 1, 0, 8), JNE0(1, 2), MOV(0, 1000),
					 EXIT, LDX(BPF_W, 0, 1, 0), EXIT };

	ksvc_fake.tid = 4321;
	/* the fake's probe reads fault in the first page (NULL's): a stray 0x111 would read 0 */
	ksvc_fake.bad_user[0].start = 0;
	ksvc_fake.bad_user[0].len = 4096;
	st = accepted(store, N(store));
	ld = accepted(read, N(read));
	assert_int_equal(run(ld), 1000);
	assert_int_equal(run(st), 1);
	assert_int_equal(run(ld), 4321);
	v[1] = 0x77;
	assert_int_equal(elem(BPF_MAP_LOOKUP_ELEM, map, v), 0);
	assert_int_equal(v[1], 0); /* not shown */
	v[0] = 5;
	v[1] = 0x1234; /* not written */
	assert_int_equal(elem(BPF_MAP_UPDATE_ELEM, map, v), 0);
	assert_int_equal(run(ld), 1000);
	assert_int_equal(elem(BPF_MAP_LOOKUP_ELEM, map, v), 0);
	assert_int_equal(v[0], 5);
	/* a program's own update clears it too (Linux's check_and_free_fields) */
	assert_int_equal(run(st), 1);
	const struct bpf_insn update[] = {
		ST(BPF_DW, 10, -32, 9), ST(BPF_DW, 10, -24, 0x111), ST(BPF_DW, 10, -16, 0),
		ST(BPF_W, 10, -4, 0), MOVR(2, 10), ADD(2, -4), MOVR(3, 10), ADD(3, -32), MOV(4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)map),
		INSN(0, 0, 0, 0, 0), CALL(BPF_FUNC_map_update_elem), EXIT,
	};
	long up = accepted(update, N(update));

	assert_int_equal(run(ld), 4321);
	assert_int_equal(run(up), 0);
	assert_int_equal(run(ld), 1000);
	ksvc_fake_close((int)up);
	ksvc_fake_close((int)st);
	ksvc_fake_close((int)ld);
	ksvc_fake_close((int)map);
}

static void test_refusals(void **state)
{
	long map = map_new(BPF_MAP_TYPE_ARRAY, GOOD, 0), plain, fd;
	const struct bpf_insn no_null[] = { LOOKUP(map), LDX(BPF_DW, 1, 0, 8), LDX(BPF_W, 0, 1, 0),
					    EXIT };
	const struct bpf_insn scalar[] = { LOOKUP(map), MOV(1, 5), STX(BPF_DW, 0, 1, 8), EXIT };
	const struct bpf_insn moved[] = { LOOKUP(map), MOVR(6, 0), CALL(BPF_FUNC_get_current_task_btf),
					  ADD(0, 4), STX(BPF_DW, 6, 0, 8), EXIT };
	/* &task->in is a struct inner: fits q (nested), not p; the task itself does not fit q */
	const struct bpf_insn nested[] = { LOOKUP(map), MOVR(6, 0), CALL(BPF_FUNC_get_current_task_btf),
					   ADD(0, 16), STX(BPF_DW, 6, 0, 16), MOV(0, 0), EXIT };
	const struct bpf_insn nested_p[] = { LOOKUP(map), MOVR(6, 0), CALL(BPF_FUNC_get_current_task_btf),
					     ADD(0, 16), STX(BPF_DW, 6, 0, 8), EXIT };
	const struct bpf_insn task_q[] = { LOOKUP(map), MOVR(6, 0), CALL(BPF_FUNC_get_current_task_btf),
					   STX(BPF_DW, 6, 0, 16), EXIT };
	/* the untrusted task read through: a walk stays untrusted, and fits p again */
	const struct bpf_insn walk[] = { LOOKUP(map), MOVR(6, 0), LDX(BPF_DW, 1, 0, 8), JNE0(1, 2),
					 MOV(0, 0), EXIT,
					 LDX(BPF_DW, 2, 1, 8), STX(BPF_DW, 6, 2, 8), STX(BPF_DW, 6, 1, 8),
					 MOV(0, 0), EXIT };
	const struct bpf_insn walk_helper[] = {
		LOOKUP(map), LDX(BPF_DW, 1, 0, 8), JNE0(1, 2), MOV(0, 0), EXIT, LDX(BPF_DW, 1, 1, 8),
		MOV(2, 0), MOV(3, 0), MOV(4, 0), MOV(5, 0), CALL(BPF_FUNC_find_vma), EXIT };
	const struct bpf_insn st1[] = { LOOKUP(map), ST(BPF_DW, 0, 8, 1), EXIT };
	const struct bpf_insn st0[] = { LOOKUP(map), ST(BPF_DW, 0, 8, 0), MOV(0, 0), EXIT };
	const struct bpf_insn w4[] = { LOOKUP(map), STX(BPF_W, 0, 0, 8), EXIT };
	const struct bpf_insn mis[] = { LOOKUP(map), LDX(BPF_DW, 1, 0, 4), EXIT };
	const struct bpf_insn atomic[] = { LOOKUP(map), MOV(1, 1),
					   INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 8, BPF_ADD), EXIT };
	const struct bpf_insn var[] = { LOOKUP(map), LDX(BPF_DW, 1, 0, 0),
					INSN(BPF_ALU64 | BPF_AND | BPF_K, 1, 0, 0, 8),
					INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), LDX(BPF_DW, 1, 0, 0),
					EXIT };
	const struct bpf_insn helper[] = { LOOKUP(map), MOVR(1, 0), MOV(2, 24), MOV(3, 0),
					   CALL(BPF_FUNC_probe_read_kernel), EXIT };
	const struct bpf_insn arith[] = { LOOKUP(map), LDX(BPF_DW, 1, 0, 8), ADD(1, 8), EXIT };
	const struct bpf_insn xchg[] = { LOOKUP(map), MOVR(1, 0), ADD(1, 8), MOV(2, 0),
					 CALL(BPF_FUNC_kptr_xchg), EXIT };
	const struct bpf_insn xchg0[] = { LOOKUP(map), MOVR(1, 0), MOV(2, 0), CALL(BPF_FUNC_kptr_xchg),
					  EXIT };

	refused(no_null, N(no_null), "R1 invalid mem access 'untrusted_ptr_or_null_'\n");
	refused(scalar, N(scalar), "invalid kptr access, R1 type=scalar expected=ptr_task or "
				   "untrusted_ptr_task\n");
	refused(moved, N(moved), "invalid kptr access, R0 type=ptr_task expected=ptr_task or "
				 "untrusted_ptr_task\n");
	ksvc_fake_close((int)accepted(nested, N(nested)));
	refused(nested_p, N(nested_p), "invalid kptr access, R0 type=ptr_task expected=ptr_task");
	refused(task_q, N(task_q), "invalid kptr access, R0 type=ptr_task expected=ptr_inner or "
				   "untrusted_ptr_inner\n");
	ksvc_fake_close((int)accepted(walk, N(walk)));
	refused(walk_helper, N(walk_helper), "R1 type=untrusted_ptr_ expected=ptr_\n");
	refused(st1, N(st1), "BPF_ST imm must be 0 when storing to kptr at off=8\n");
	ksvc_fake_close((int)accepted(st0, N(st0)));
	refused(w4, N(w4), "kptr access size must be BPF_DW\n");
	refused(mis, N(mis), "kptr access misaligned expected=8 off=4\n");
	refused(atomic, N(atomic), "kptr in map can only be accessed using BPF_MEM instruction mode\n");
	refused(var, N(var), "kptr access cannot have variable offset\n");
	refused(helper, N(helper), "kptr cannot be accessed indirectly by helper\n");
	refused(arith, N(arith), "R1 pointer arithmetic on untrusted_ptr_or_null_ prohibited, "
				 "null-check it first\n");
	refused(xchg, N(xchg), "off=8 kptr isn't referenced kptr\n");
	refused(xchg0, N(xchg0), "off=0 doesn't point to kptr\n");
	/* without kptrs the field is plain memory; xchg says why there are none */
	plain = map_new(BPF_MAP_TYPE_ARRAY, NINE, 0);
	const struct bpf_insn plain_xchg[] = { LOOKUP(plain), MOVR(1, 0), ADD(1, 8), MOV(2, 0),
					       CALL(BPF_FUNC_kptr_xchg), EXIT };
	const struct bpf_insn plain_st[] = { LOOKUP(plain), ST(BPF_W, 0, 8, 1), MOV(0, 0), EXIT };

	refused(plain_xchg, N(plain_xchg), "map 'm' has more than 8 kptr\n");
	fd = accepted(plain_st, N(plain_st));
	ksvc_fake_close((int)fd);
	ksvc_fake_close((int)plain);
	plain = map_new(BPF_MAP_TYPE_ARRAY, REF, 0);
	const struct bpf_insn ref_xchg[] = { LOOKUP(plain), MOVR(1, 0), ADD(1, 8), MOV(2, 0),
					     CALL(BPF_FUNC_kptr_xchg), EXIT };
	refused(ref_xchg, N(ref_xchg), "map 'm' has no valid kptr\n");
	ksvc_fake_close((int)plain);
	ksvc_fake_close((int)map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_parse, teardown),
		cmocka_unit_test_teardown(test_store_load, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
