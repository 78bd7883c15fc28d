/*
 * test_bpf_timer.c - bpf/helpers_timer.c through its helpers and map hooks, with the seam's
 * fake timers fired by hand: init's errnos, a callback run with (map, key, value) that counts
 * in the value, -EDEADLK from its own callback, cancel forgetting the callback and dropping the
 * program, an array overwrite and release_uref freeing timers (no live seam timer, program
 * references back), and a hash element deleted by its own callback freed once the callback
 * returned (irq_work), and one a program made in a deleted element freed at its reuse.
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

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MOV0 I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, (f))

/* main: r0 = 0; exit.  cb_count (2): value[24] = *key; value[16] += 1; value[32] =
 * bpf_timer_cancel(value) (its own timer).  cb_delete (13): bpf_map_delete_elem(map, key). */
static const struct bpf_insn insns[] = {
	MOV0, EXIT,
	/* 2 */ I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 3, 0, 0),
	I(BPF_LDX | BPF_MEM | BPF_W, 4, 2, 0, 0),
	I(BPF_STX | BPF_MEM | BPF_DW, 6, 4, 24, 0),
	I(BPF_LDX | BPF_MEM | BPF_DW, 4, 6, 16, 0),
	I(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 1),
	I(BPF_STX | BPF_MEM | BPF_DW, 6, 4, 16, 0),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
	CALL(BPF_FUNC_timer_cancel),
	I(BPF_STX | BPF_MEM | BPF_DW, 6, 0, 32, 0),
	MOV0, EXIT,
	/* 13 */ CALL(BPF_FUNC_map_delete_elem),
	MOV0, EXIT,
};
#define CB_COUNT 2
#define CB_DELETE 13
#define NINSNS (sizeof(insns) / sizeof(insns[0]))

static struct bpf_dinsn dinsns[NINSNS];
static struct bpf_prog prog;

struct val {
	uint64_t timer[2];
	uint64_t count, key;
	int64_t cancel;
	uint64_t pad;
};

static struct bpf_map *mk(uint32_t type)
{
	union bpf_attr a;
	struct bpf_map *m = NULL;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = sizeof(struct val);
	a.max_entries = 4;
	assert_int_equal(bpf_map_create(&a, &m), 0);
	m->timer_off = 0; /* as map_btf.c finds it at the value's start */
	m->spin_lock_off = -ENOENT;
	atomic_store(&m->usercnt, 1);
	return m;
}

static uint64_t cb(uint32_t at)
{
	return (uintptr_t)&dinsns[at];
}

static int setup(void **state)
{
	bpf_interp_decode(insns, NINSNS, dinsns, 0, false, BPF_PROG_TYPE_SYSCALL);
	memset(&prog, 0, sizeof(prog));
	atomic_store(&prog.refcnt, 1);
	prog.dinsns = dinsns;
	prog.len = NINSNS;
	assert_int_equal(bpf_timer_prog_add(&prog), 0);
	ksvc_fake.timers_live = 0;
	return 0;
}

static int teardown(void **state)
{
	bpf_timer_prog_del(&prog);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(atomic_load(&prog.refcnt), 1);
	return 0;
}

#define H(f, a, b, c) ((int64_t)bpf_h_timer_##f((uintptr_t)(a), (uint64_t)(b), (uint64_t)(c), 0, 0))

static struct val *elem(struct bpf_map *m, uint32_t k)
{
	return m->ops->lookup(m, &k);
}

static void test_init(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_ARRAY);
	struct val *v = elem(m, 1);

	assert_int_equal(H(set_callback, v, cb(CB_COUNT), 0), -EINVAL);
	assert_int_equal(H(start, v, 1000, 0), -EINVAL);
	assert_int_equal(H(cancel, v, 0, 0), -EINVAL);
	assert_int_equal(H(init, v, m, 2), -EINVAL); /* CLOCK_PROCESS_CPUTIME_ID */
	assert_int_equal(H(init, v, m, 16 | 1), -EINVAL);
	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(H(init, v, m, 7), -EBUSY);
	assert_int_equal(H(start, v, 1000, 0), -EINVAL); /* no callback yet */
	assert_int_equal(ksvc_fake.timers_live, 1);
	atomic_store(&m->usercnt, 0);
	assert_int_equal(H(init, elem(m, 2), m, 1), -EPERM);
	assert_int_equal(H(set_callback, v, cb(CB_COUNT), 0), -EPERM);
	m->ops->release_uref(m);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(v->timer[0], 0);
	bpf_map_put(m);
}

static void test_fire_cancel(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_ARRAY);
	struct val *v = elem(m, 2);
	struct ksvc_timer *t;

	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(H(set_callback, v, cb(CB_COUNT), 0), 0);
	assert_int_equal(atomic_load(&prog.refcnt), 2); /* the timer keeps the program */
	assert_int_equal(H(start, v, 1000, 1), -EINVAL);
	assert_int_equal(H(start, v, 1000, 0), 0);
	t = ksvc_fake.last_timer;
	assert_true(ksvc_fake_fire_timer(t));
	assert_int_equal(v->count, 1);
	assert_int_equal(v->key, 2);
	assert_int_equal(v->cancel, -EDEADLK);
	assert_false(ksvc_fake_fire_timer(t)); /* one-shot */
	assert_int_equal(H(start, v, 1000, 0), 0);
	assert_int_equal(H(cancel, v, 0, 0), 1);
	assert_int_equal(H(cancel, v, 0, 0), 0);
	assert_int_equal(atomic_load(&prog.refcnt), 1); /* cancel dropped it */
	assert_false(ksvc_fake_fire_timer(t));
	assert_int_equal(H(start, v, 1000, 0), -EINVAL); /* the callback is forgotten */
	assert_int_equal(v->count, 1);

	/* an overwrite from a program or the syscall frees the timer */
	assert_int_equal(H(set_callback, v, cb(CB_COUNT), 0), 0);
	assert_int_equal(H(start, v, 1000, 0), 0);
	struct val z = { .count = 9, .timer = { 1, 2 } };
	uint32_t k = 2;

	assert_int_equal(m->ops->update(m, &k, &z, BPF_ANY), 0);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(atomic_load(&prog.refcnt), 1);
	assert_int_equal(v->timer[0], 0); /* never copied from the new value */
	assert_int_equal(v->timer[1], 0);
	assert_int_equal(v->count, 9);
	assert_int_equal(H(init, v, m, 1), 0);
	bpf_map_put(m); /* the map's free releases the rest */
}

static void test_hash_self_delete(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_HASH);
	struct val z = { 0 };
	uint32_t k = 3;
	struct val *v;

	assert_int_equal(m->ops->update(m, &k, &z, BPF_ANY), 0);
	v = elem(m, 3);
	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(H(set_callback, v, cb(CB_DELETE), 0), 0);
	assert_int_equal(H(start, v, 1000, 0), 0);
	assert_true(ksvc_fake_fire_timer(ksvc_fake.last_timer));
	assert_null(elem(m, 3)); /* the callback deleted its element */
	/* ... and the timer with it, once the callback returned: from irq_work */
	assert_int_equal(ksvc_fake.timers_live, 1);
	assert_int_equal(atomic_load(&prog.refcnt), 2);
	ksvc_fake_irq_work_run();
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(atomic_load(&prog.refcnt), 1);

	/* a hash update replaces the element's timer; release_uref frees them all */
	assert_int_equal(m->ops->update(m, &k, &z, BPF_ANY), 0);
	v = elem(m, 3);
	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(m->ops->update(m, &k, &z, BPF_EXIST), 0);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(H(set_callback, v, cb(CB_COUNT), 0), 0);
	assert_int_equal(H(start, v, 1000, 0), 0);
	atomic_store(&m->usercnt, 0);
	m->ops->release_uref(m);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(atomic_load(&prog.refcnt), 1);
	bpf_map_put(m);
}

/* A program still holding a deleted element's value may init a timer there: it goes when the
 * element is reused, or when the map's last fd goes. */
static void test_hash_stale_value(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_HASH);
	struct val z = { 0 };
	uint32_t k = 1;
	struct val *v;

	assert_int_equal(m->ops->update(m, &k, &z, BPF_ANY), 0);
	v = elem(m, 1);
	assert_int_equal(m->ops->delete(m, &k), 0);
	assert_int_equal(H(init, v, m, 1), 0);
	assert_int_equal(ksvc_fake.timers_live, 1);
	assert_int_equal(m->ops->update(m, &k, &z, BPF_ANY), 0); /* reuses the element */
	assert_ptr_equal(elem(m, 1), v);
	assert_int_equal(ksvc_fake.timers_live, 0);
	assert_int_equal(m->ops->delete(m, &k), 0);
	assert_int_equal(H(init, v, m, 1), 0);
	atomic_store(&m->usercnt, 0);
	m->ops->release_uref(m);
	assert_int_equal(ksvc_fake.timers_live, 0);
	bpf_map_put(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fire_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hash_self_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hash_stale_value, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
