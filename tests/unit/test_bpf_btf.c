/*
 * test_bpf_btf.c - bpf/btf.c (the BTF parser and validator) and bpf/btf_sys.c through
 * bpf_sys: a good blob's types and sizes, its whole log, errnos of broken ones, the BTF
 * object's id, info and fd by id; then random and mutated blobs (under ASan/UBSan in the
 * host build): bad input is refused with an errno, never read out of bounds, and whatever is
 * accepted can be walked.  The verifier's bpf_spin_lock rules, which Linux 6.1's program
 * types cannot reach through BPF_PROG_LOAD (check_map_prog_compatibility refuses the map
 * first), run here on a program verified directly.  LeakSanitizer checks that every path
 * frees what it took.
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

static uint8_t raw[4096];

static uint32_t build(struct blob *b)
{
	return blob_build(b, raw);
}

/* int; ptr to 3; struct node { int val; struct node *next; }; proto (struct node *n) -> int;
 * func walk; int[4]; const -> typedef u -> int; var v (int); datasec .data */
static uint32_t good(void)
{
	struct blob b;

	blob_init(&b);

	w(&b, str(&b, "int")), w(&b, INFO(BTF_KIND_INT, 0, 0)), w(&b, 4), w(&b, 1u << 24 | 32);
	w(&b, 0), w(&b, INFO(BTF_KIND_PTR, 0, 0)), w(&b, 3);
	w(&b, str(&b, "node")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 16);
	w(&b, str(&b, "val")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "next")), w(&b, 2), w(&b, 64);
	w(&b, 0), w(&b, INFO(BTF_KIND_FUNC_PROTO, 0, 1)), w(&b, 1);
	w(&b, str(&b, "n")), w(&b, 2);
	w(&b, str(&b, "walk")), w(&b, INFO(BTF_KIND_FUNC, 0, 1)), w(&b, 4);
	w(&b, 0), w(&b, INFO(BTF_KIND_ARRAY, 0, 0)), w(&b, 0), w(&b, 1), w(&b, 1), w(&b, 4);
	w(&b, 0), w(&b, INFO(BTF_KIND_CONST, 0, 0)), w(&b, 8);
	w(&b, str(&b, "u")), w(&b, INFO(BTF_KIND_TYPEDEF, 0, 0)), w(&b, 1);
	w(&b, str(&b, "v")), w(&b, INFO(BTF_KIND_VAR, 0, 0)), w(&b, 6), w(&b, 1);
	w(&b, str(&b, ".data")), w(&b, INFO(BTF_KIND_DATASEC, 0, 1)), w(&b, 16);
	w(&b, 9), w(&b, 0), w(&b, 16);
	return build(&b);
}

static void test_good(void **state)
{
	struct bpf_btf *btf;
	uint32_t id, size;
	const struct btf_type *t;

	(void)state;
	assert_int_equal(bpf_btf_parse(raw, good(), NULL, &btf), 0);
	assert_int_equal(btf->nr_types, 11);
	id = 3;
	t = bpf_btf_type_id_size(btf, &id, &size);
	assert_non_null(t);
	assert_int_equal(size, 16);
	id = 6;
	assert_non_null(bpf_btf_type_id_size(btf, &id, &size));
	assert_int_equal(size, 16); /* int[4] */
	id = 7; /* const -> typedef -> int */
	t = bpf_btf_type_id_size(btf, &id, &size);
	assert_true(t && id == 1 && size == 4);
	id = 5; /* a func has no size */
	assert_null(bpf_btf_type_id_size(btf, &id, &size));
	assert_string_equal(bpf_btf_str(btf, bpf_btf_type(btf, 3)->name_off), "node");
	assert_null(bpf_btf_type(btf, 11));
	bpf_btf_put(btf);
}

static char logbuf[4096];

static void test_log_and_errnos(void **state)
{
	struct bpf_verifier_log log = { .ubuf = logbuf, .size = sizeof(logbuf), .level = 1 };
	struct bpf_btf *btf;
	uint32_t n = good();

	(void)state;
	assert_int_equal(bpf_btf_parse(raw, n, &log, &btf), 0);
	assert_non_null(strstr(logbuf, "[3] STRUCT node size=16 vlen=2\n"
				       "\tval type_id=1 bits_offset=0\n"
				       "\tnext type_id=2 bits_offset=64\n"
				       "[4] FUNC_PROTO (anon) return=1 args=(2 n)\n"));
	assert_non_null(strstr(logbuf, "[10] DATASEC .data size=16 vlen=1\n\t type_id=9 offset=0 size=16\n"));
	bpf_btf_put(btf);
	raw[0] = 0;
	assert_int_equal(bpf_btf_parse(raw, n, NULL, &btf), -EINVAL);
	good();
	raw[2] = 2;
	assert_int_equal(bpf_btf_parse(raw, n, NULL, &btf), -BPF_ENOTSUPP);
	good();
	assert_int_equal(bpf_btf_parse(raw, 3, NULL, &btf), -EINVAL);
	assert_int_equal(bpf_btf_parse(raw, BPF_BTF_MAX_SIZE + 1, NULL, &btf), -E2BIG);
	/* the struct's ptr member pointing at the struct through the ptr is fine; make the
	 * typedef (8) point at the const (7): a loop */
	good();
	memcpy(raw + 24 + 4 * (4 + 3 + 3 + 6 + 3 + 2 + 3 + 6 + 3) + 8, &(uint32_t){ 7 }, 4);
	assert_int_equal(bpf_btf_parse(raw, n, NULL, &btf), -EEXIST);
	/* a log too small for the good blob */
	log = (struct bpf_verifier_log){ .ubuf = logbuf, .size = 128, .level = 1 };
	good();
	assert_int_equal(bpf_btf_parse(raw, n, &log, &btf), -ENOSPC);
}

static long sys(int cmd, union bpf_attr *a)
{
	return bpf_sys(cmd, a, sizeof(*a));
}

static void test_object(void **state)
{
	union bpf_attr a;
	struct bpf_btf_info info;
	uint8_t back[512];
	uint32_t n = good();
	int fd, fd2;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = n;
	fd = (int)sys(BPF_BTF_LOAD, &a);
	assert_true(fd >= 0);
	memset(&info, 0, sizeof(info));
	info.btf = (uintptr_t)back;
	info.btf_size = sizeof(back);
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD, &a), 0);
	assert_int_equal(info.btf_size, n);
	assert_memory_equal(back, raw, n);
	assert_true(info.id > 0);
	memset(&a, 0, sizeof(a));
	a.btf_id = info.id;
	fd2 = (int)sys(BPF_BTF_GET_FD_BY_ID, &a);
	assert_true(fd2 >= 0);
	/* keyless arrays: a one-element array of a DATASEC (global data) is fine; a value type
	 * without a size is EINVAL, for whatever kind (a crash once: the kind's check met no
	 * value) */
	{
		struct {
			uint32_t type, max, vid;
			long want;
		} rows[] = {
			{ BPF_MAP_TYPE_ARRAY, 1, 10, 0 },	{ BPF_MAP_TYPE_ARRAY, 2, 10, -EINVAL },
			{ BPF_MAP_TYPE_ARRAY, 1, 5, -EINVAL },	{ BPF_MAP_TYPE_ARRAY, 1, 3, -EINVAL },
			{ BPF_MAP_TYPE_HASH, 1, 3, -EINVAL },	{ BPF_MAP_TYPE_HASH, 1, 10, -EINVAL },
			{ BPF_MAP_TYPE_PERCPU_ARRAY, 1, 10, -EINVAL },
			{ BPF_MAP_TYPE_BLOOM_FILTER, 1, 5, -EINVAL },
		};

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			long r;

			memset(&a, 0, sizeof(a));
			a.map_type = rows[i].type;
			a.key_size = rows[i].type == BPF_MAP_TYPE_BLOOM_FILTER ? 0 : 4;
			a.value_size = 16;
			a.max_entries = rows[i].max;
			a.btf_fd = (uint32_t)fd;
			a.btf_value_type_id = rows[i].vid;
			r = sys(BPF_MAP_CREATE, &a);
			if (r >= 0)
				assert_int_equal(ksvc_fake_close((int)r), 0);
			if ((r >= 0 ? 0 : r) != rows[i].want)
				fail_msg("row %zu: got %ld, want %ld", i, r, rows[i].want);
		}
	}
	assert_int_equal(ksvc_fake_close(fd), 0);
	assert_int_equal(ksvc_fake_close(fd2), 0);
	memset(&a, 0, sizeof(a));
	a.btf_id = info.id;
	assert_int_equal(sys(BPF_BTF_GET_FD_BY_ID, &a), -ENOENT);
}

/* Whatever parses can be walked: every type's size lookup and string stay in bounds. */
static void walk(struct bpf_btf *btf)
{
	for (uint32_t id = 0; id < btf->nr_types + 2; id++) {
		uint32_t rid = id, size = 0;
		const struct btf_type *t = bpf_btf_type(btf, id);

		(void)bpf_btf_type_id_size(btf, &rid, &size);
		(void)bpf_btf_skip_modifiers(btf, id, &rid);
		if (t && id)
			(void)strlen(bpf_btf_str(btf, t->name_off));
	}
}

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void test_fuzz_mutated(void **state)
{
	struct bpf_verifier_log log = { .ubuf = logbuf, .size = sizeof(logbuf), .level = 1 };
	uint8_t copy[4096];
	uint32_t n0 = good(), ok = 0;

	(void)state;
	memcpy(copy, raw, n0);
	for (int it = 0; it < 20000; it++) {
		struct bpf_btf *btf;
		uint32_t n = n0;

		memcpy(raw, copy, n0);
		for (int k = 1 + (int)(rnd() % 4); k; k--) {
			uint32_t pos = rnd() % n0;

			switch (rnd() % 4) {
			case 0:
				raw[pos] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1:
				raw[pos] = (uint8_t)rnd();
				break;
			case 2: /* a small type id or count in a word */
				raw[pos & ~3u] = (uint8_t)(rnd() % 14);
				break;
			default:
				n = 24 + rnd() % (n0 - 23);
				break;
			}
		}
		log.len = 0;
		log.truncated = false;
		if (bpf_btf_parse(raw, n, it & 1 ? &log : NULL, &btf) == 0) {
			walk(btf);
			bpf_btf_put(btf);
			ok++;
		}
	}
	assert_true(ok > 0); /* some mutations keep it valid (names, unused bytes) */
}

/* Blobs of random types with small ids and counts: the resolve pass meets loops, chains,
 * forward references and everything out of range. */
static void test_fuzz_random(void **state)
{
	uint32_t ok = 0;

	(void)state;
	for (int it = 0; it < 20000; it++) {
		struct blob b;
		uint32_t names[3], ntypes = 1 + rnd() % 8;
		struct bpf_btf *btf;

		blob_init(&b);
		names[0] = 0;
		names[1] = str(&b, "a");
		names[2] = str(&b, ".s");
		for (uint32_t i = 0; i < ntypes && b.nw < 200; i++) {
			uint32_t kind = 1 + rnd() % 19, vlen = rnd() % 3;
			uint32_t extra = 0;

			if (rnd() % 4 == 0)
				vlen = 0;
			w(&b, names[rnd() % 3]);
			w(&b, INFO(kind, rnd() % 8 == 0, vlen));
			w(&b, rnd() % 3 ? rnd() % (ntypes + 2) : (uint32_t[]){ 0, 4, 8, 16 }[rnd() % 4]);
			switch (kind) {
			case BTF_KIND_INT:
				w(&b, (rnd() % 2) << 24 | (uint32_t[]){ 8, 16, 32, 64 }[rnd() % 4]);
				break;
			case BTF_KIND_ARRAY:
				w(&b, rnd() % (ntypes + 1)), w(&b, rnd() % (ntypes + 1)), w(&b, rnd() % 5);
				break;
			case BTF_KIND_STRUCT:
			case BTF_KIND_UNION:
			case BTF_KIND_DATASEC:
				extra = 3 * vlen;
				break;
			case BTF_KIND_ENUM:
			case BTF_KIND_FUNC_PROTO:
				extra = 2 * vlen;
				break;
			case BTF_KIND_ENUM64:
				extra = 3 * vlen;
				break;
			case BTF_KIND_VAR:
			case BTF_KIND_DECL_TAG:
				w(&b, rnd() % 3 == 0 ? (uint32_t)-1 : rnd() % 2);
				break;
			}
			for (uint32_t e = 0; e < extra; e++)
				w(&b, e % 3 == 0 ? names[rnd() % 3] : rnd() % 2 ? rnd() % (ntypes + 1) : 8 * (rnd() % 4));
		}
		if (bpf_btf_parse(raw, build(&b), NULL, &btf) == 0) {
			walk(btf);
			bpf_btf_put(btf);
			ok++;
		}
	}
	assert_true(ok > 0);
}

/* ---- bpf_spin_lock rules, on bpf_verify directly ---- */

#define IN(c, d, s_, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) })

enum { L_GOOD, L_NO_UNLOCK, L_CALL, L_OFF0, L_DIRECT, L_UNLOCK_ONLY, L_TWICE };

static int verify_locker(struct bpf_map *map, int v, char *log, size_t logsz)
{
	struct bpf_insn p[40];
	uint32_t n = 0, jeq;
	uint64_t addr = (uintptr_t)map;
	struct bpf_verifier_log vl = { .ubuf = log, .size = (uint32_t)logsz, .level = 1 };
	struct bpf_prog *prog;
	int err;

	p[n++] = IN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);
	p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = IN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);
	p[n++] = IN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)(uint32_t)addr);
	p[n++] = IN(0, 0, 0, 0, (int32_t)(uint32_t)(addr >> 32));
	p[n++] = IN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	jeq = n;
	p[n++] = IN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0);
	p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0);
	if (v != L_UNLOCK_ONLY) {
		p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0);
		p[n++] = IN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, v == L_OFF0 ? 0 : 4);
		p[n++] = IN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_spin_lock);
	}
	if (v == L_TWICE) {
		p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0);
		p[n++] = IN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 4);
		p[n++] = IN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_spin_lock);
	}
	if (v == L_CALL)
		p[n++] = IN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_prandom_u32);
	if (v == L_DIRECT)
		p[n++] = IN(BPF_ST | BPF_MEM | BPF_W, 6, 0, 4, 1);
	if (v != L_NO_UNLOCK) {
		p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0);
		p[n++] = IN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 4);
		p[n++] = IN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_spin_unlock);
	}
	p[jeq].off = (int16_t)(n - jeq - 1);
	p[n++] = IN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	prog = ksvc_alloc(sizeof(*prog));
	prog->type = BPF_PROG_TYPE_PERF_EVENT;
	prog->gpl = true;
	prog->len = n;
	prog->insns = ksvc_alloc(sizeof(p[0]) * n);
	memcpy(prog->insns, p, sizeof(p[0]) * n);
	memset(log, 0, logsz);
	err = bpf_verify(prog, &vl);
	ksvc_free(prog->insns);
	ksvc_free(prog);
	return err;
}

static void test_spin_lock_rules(void **state)
{
	union bpf_attr a;
	struct bpf_map *map;
	uint32_t n;
	int btf, fd;
	static char log[8192];
	struct {
		int v, err;
		const char *msg;
	} rows[] = {
		{ L_GOOD, 0, NULL },
		{ L_NO_UNLOCK, -EINVAL, "bpf_spin_unlock is missing\n" },
		{ L_CALL, -EINVAL, "function calls are not allowed while holding a lock\n" },
		{ L_OFF0, -EACCES, "off 0 doesn't point to 'struct bpf_spin_lock'\n" },
		{ L_DIRECT, -EACCES, "bpf_spin_lock cannot be accessed directly by load/store\n" },
		{ L_UNLOCK_ONLY, -EACCES, "bpf_spin_unlock without taking a lock\n" },
		/* the second lock is a call while holding one: that rule speaks first */
		{ L_TWICE, -EINVAL, "function calls are not allowed while holding a lock\n" },
	};

	(void)state;
	/* 1 int, 2 struct bpf_spin_lock {int val}, 3 struct v {int a; struct bpf_spin_lock l} */
	{
		struct blob b;

		blob_init(&b);
		w(&b, str(&b, "int")), w(&b, INFO(BTF_KIND_INT, 0, 0)), w(&b, 4), w(&b, 1u << 24 | 32);
		w(&b, str(&b, "bpf_spin_lock")), w(&b, INFO(BTF_KIND_STRUCT, 0, 1)), w(&b, 4);
		w(&b, str(&b, "val")), w(&b, 1), w(&b, 0);
		w(&b, str(&b, "v")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 8);
		w(&b, str(&b, "a")), w(&b, 1), w(&b, 0);
		w(&b, str(&b, "l")), w(&b, 2), w(&b, 32);
		n = build(&b);
	}
	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = n;
	btf = (int)sys(BPF_BTF_LOAD, &a);
	assert_true(btf >= 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 3;
	fd = (int)sys(BPF_MAP_CREATE, &a);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_get_fd(fd, &map), 0);
	assert_int_equal(map->spin_lock_off, 4);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int err = verify_locker(map, rows[i].v, log, sizeof(log));

		if (err != rows[i].err || (rows[i].msg && !strstr(log, rows[i].msg)))
			fail_msg("variant %d: got %d, want %d [%s]; log:\n%s", rows[i].v, err,
				 rows[i].err, rows[i].msg ? rows[i].msg : "", log);
	}
	bpf_map_put(map);
	assert_int_equal(ksvc_fake_close(fd), 0);
	assert_int_equal(ksvc_fake_close(btf), 0);
}

static int teardown(void **state)
{
	(void)state;
	ksvc_fake_close_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_log_and_errnos),
		cmocka_unit_test_teardown(test_object, teardown),
		cmocka_unit_test(test_fuzz_mutated),
		cmocka_unit_test(test_fuzz_random),
		cmocka_unit_test_teardown(test_spin_lock_rules, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
