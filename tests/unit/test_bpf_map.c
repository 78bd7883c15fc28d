/*
 * test_bpf_map.c - map semantics through bpf/map*.c directly: create checks per type, array and
 * per-CPU array, hash / per-CPU hash / LRU hash (flags, full map, iteration, eviction),
 * PERF_EVENT_ARRAY with and without registered perf ops, STACK_TRACE inserts as
 * bpf_get_stackid makes them, mmapable arrays, bloom filters, and references; CGROUP_ARRAY
 * with bpf_current_task_under_cgroup and the cgroup id helpers over the fake cgroup tree.
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

static struct bpf_map *mk(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags)
{
	union bpf_attr a;
	struct bpf_map *m = NULL;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	assert_int_equal(bpf_map_create(&a, &m), 0);
	return m;
}

static int try_create(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags)
{
	union bpf_attr a;
	struct bpf_map *m = NULL;
	int err;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	err = bpf_map_create(&a, &m);
	if (!err)
		bpf_map_put(m);
	return err;
}

static void test_create_checks(void **state)
{
	assert_int_equal(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0), 0);
	assert_int_equal(try_create(BPF_MAP_TYPE_ARRAY, 8, 8, 1, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, BPF_F_MMAPABLE), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_HASH, 4, 8, 0, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_HASH, 600, 8, 4, 0), -E2BIG);
	assert_int_equal(try_create(BPF_MAP_TYPE_LRU_HASH, 4, 8, 4, BPF_F_NO_PREALLOC), -BPF_ENOTSUPP);
	assert_int_equal(try_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 8, 4, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_STACK_TRACE, 4, 12, 4, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 200, 4, 0), -EINVAL);
	/* ring buffers: no key or value, a power-of-two page multiple */
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0), 0);
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 4, 0, 4096, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 0, 8, 4096, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 2048, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 3 * 4096, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, BPF_F_MMAPABLE), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_RDONLY | BPF_F_WRONLY), -EINVAL);
	ksvc_fake.fail_alloc_after = 1;
	assert_int_equal(try_create(BPF_MAP_TYPE_HASH, 4, 8, 4, 0), -ENOMEM);
	ksvc_fake.fail_alloc_after = -1;
}

static void test_array(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_ARRAY, 4, 12, 3, 0);
	uint32_t k = 2, next;
	uint8_t v[12] = { 1, 2, 3 }, out[12];
	uint8_t *p;

	p = m->ops->lookup(m, &k);
	assert_non_null(p);
	assert_int_equal(p[0], 0);
	assert_int_equal(m->ops->update(m, &k, v, BPF_ANY), 0);
	assert_int_equal(p[2], 3);
	assert_int_equal(m->ops->update(m, &k, v, BPF_NOEXIST), -EEXIST);
	assert_int_equal(m->ops->sys_lookup(m, &k, out), 0);
	assert_memory_equal(out, v, 12);
	k = 3;
	assert_null(m->ops->lookup(m, &k));
	assert_int_equal(m->ops->sys_update(m, &k, v, BPF_ANY), -E2BIG);
	assert_int_equal(m->ops->delete(m, &k), -EINVAL);
	assert_int_equal(m->ops->get_next_key(m, NULL, &next), 0);
	assert_int_equal(next, 0);
	k = 2;
	assert_int_equal(m->ops->get_next_key(m, &k, &next), -ENOENT);
	bpf_map_put(m);
}

static void test_percpu(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2, 0);
	struct bpf_map *h = mk(BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 2, 0);
	uint32_t k = 1, one = 1, two = 2;
	uint64_t all[4];

	assert_int_equal(bpf_map_sys_value_size(m), 8 * ksvc_nr_cpus());
	ksvc_fake.cpu = 1;
	assert_int_equal(m->ops->update(m, &k, &one, BPF_ANY), 0);
	ksvc_fake.cpu = 3;
	assert_int_equal(m->ops->update(m, &k, &two, BPF_ANY), 0);
	assert_int_equal(*(uint32_t *)m->ops->lookup(m, &k), 2);
	assert_int_equal(m->ops->sys_lookup(m, &k, all), 0);
	assert_int_equal(all[0], 0);
	assert_int_equal(all[1], 1);
	assert_int_equal(all[3], 2);
	/* per-CPU hash: a new element from the program side zeroes the other CPUs */
	assert_int_equal(h->ops->update(h, &k, &two, BPF_ANY), 0);
	assert_int_equal(h->ops->sys_lookup(h, &k, all), 0);
	assert_int_equal(all[3], 2);
	assert_int_equal(all[1], 0);
	all[0] = 5;
	assert_int_equal(h->ops->sys_update(h, &k, all, BPF_EXIST), 0);
	ksvc_fake.cpu = 0;
	assert_int_equal(*(uint32_t *)h->ops->lookup(h, &k), 5);
	bpf_map_put(m);
	bpf_map_put(h);
}

static void test_hash(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_HASH, 8, 4, 3, 0);
	uint64_t k, seen = 0, cur, next;
	uint32_t v = 7;
	int n = 0;

	k = 1;
	assert_null(m->ops->lookup(m, &k));
	assert_int_equal(m->ops->update(m, &k, &v, BPF_EXIST), -ENOENT);
	assert_int_equal(m->ops->update(m, &k, &v, BPF_NOEXIST), 0);
	assert_int_equal(m->ops->update(m, &k, &v, BPF_NOEXIST), -EEXIST);
	assert_int_equal(m->ops->update(m, &k, &v, 7), -EINVAL);
	k = 2;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0);
	k = 3;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0);
	k = 4;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), -E2BIG);
	assert_int_equal(*(uint32_t *)m->ops->lookup(m, &(uint64_t){ 3 }), 7);
	for (int r = m->ops->get_next_key(m, NULL, &next); r == 0;
	     r = m->ops->get_next_key(m, &cur, &next)) {
		seen += next;
		cur = next;
		n++;
	}
	assert_int_equal(n, 3);
	assert_int_equal(seen, 6);
	k = 99; /* missing key: iteration restarts */
	assert_int_equal(m->ops->get_next_key(m, &k, &next), 0);
	k = 2;
	assert_int_equal(m->ops->delete(m, &k), 0);
	assert_int_equal(m->ops->delete(m, &k), -ENOENT);
	k = 4;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0);
	bpf_map_put(m);
}

/* What the JIT uses instead of ops->lookup (htab's lookup_for, bpf_array_layout) finds the
 * same values, and is offered only for the maps it covers. */
static void test_jit_lookups(void **state)
{
	struct bpf_map *h8 = mk(BPF_MAP_TYPE_HASH, 8, 8, 16, 0), *h4 = mk(BPF_MAP_TYPE_HASH, 4, 8, 16, 0);
	struct bpf_map *h12 = mk(BPF_MAP_TYPE_HASH, 12, 8, 16, 0);
	struct bpf_map *lru = mk(BPF_MAP_TYPE_LRU_HASH, 8, 8, 16, 0);
	struct bpf_map *pc = mk(BPF_MAP_TYPE_PERCPU_HASH, 8, 8, 16, 0);
	struct bpf_map *arr = mk(BPF_MAP_TYPE_ARRAY, 4, 12, 5, 0);
	struct bpf_map *parr = mk(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 5, 0);
	bpf_map_lookup_fn f8 = h8->ops->lookup_for(h8), f4 = h4->ops->lookup_for(h4);
	uint64_t v = 5;
	uint32_t elem;
	uint8_t *base;
	int found = 0;

	assert_non_null(f8);
	assert_non_null(f4);
	assert_null(h12->ops->lookup_for(h12));
	assert_null(lru->ops->lookup_for(lru));
	assert_null(pc->ops->lookup_for(pc));
	for (uint64_t k = 1; k < 40; k += 3) {
		uint32_t k4 = (uint32_t)k * 0x10001u;

		assert_int_equal(h8->ops->update(h8, &k, &v, BPF_ANY), 0);
		assert_int_equal(h4->ops->update(h4, &k4, &v, BPF_ANY), 0);
	}
	for (uint64_t k = 0; k < 40; k++) {
		uint32_t k4 = (uint32_t)k * 0x10001u;

		assert_ptr_equal(f8(h8, &k), h8->ops->lookup(h8, &k));
		assert_ptr_equal(f4(h4, &k4), h4->ops->lookup(h4, &k4));
		found += f8(h8, &k) != NULL;
	}
	assert_int_equal(found, 13);
	assert_true(bpf_array_layout(arr, &base, &elem));
	assert_int_equal(elem, 16); /* 12 rounded up to 8 */
	for (uint32_t i = 0; i < 5; i++)
		assert_ptr_equal(base + (size_t)i * elem, arr->ops->lookup(arr, &i));
	assert_false(bpf_array_layout(parr, &base, &elem));
	assert_false(bpf_array_layout(h8, &base, &elem));
	bpf_map_put(h8);
	bpf_map_put(h4);
	bpf_map_put(h12);
	bpf_map_put(lru);
	bpf_map_put(pc);
	bpf_map_put(arr);
	bpf_map_put(parr);
}

static void test_lru(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_LRU_HASH, 4, 4, 2, 0);
	uint32_t k, v = 1;

	k = 1;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0);
	k = 2;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0);
	k = 1;
	assert_non_null(m->ops->lookup(m, &k)); /* 1 is now the most recent */
	k = 3;
	assert_int_equal(m->ops->update(m, &k, &v, BPF_ANY), 0); /* evicts 2 */
	k = 2;
	assert_null(m->ops->lookup(m, &k));
	k = 1;
	assert_non_null(m->ops->lookup(m, &k));
	bpf_map_put(m);
}

/* ---- perf event array through fake perf ops ---- */

static int fake_events[4];
static int puts_done;

static int ev_get(int fd, void **ev)
{
	if (fd < 100 || fd > 103)
		return -EBADF;
	*ev = &fake_events[fd - 100];
	return 0;
}

static void ev_put(void *ev)
{
	puts_done++;
}

static int ev_cpu(void *ev)
{
	return -1;
}

static long ev_output(void *ev, void *ctx, const void *data, uint64_t size)
{
	*(int *)ev += (int)size;
	return 0;
}

static long ev_read(void *ev, struct bpf_perf_event_value *v)
{
	v->counter = 42;
	v->enabled = v->running = 1;
	return 0;
}

static long ev_chain(void *ctx, bool user, uint64_t *ips, uint32_t max)
{
	uint32_t n = max < 5 ? max : 5;

	for (uint32_t i = 0; i < n; i++)
		ips[i] = 0x1000 + i + (ctx ? 0x100 : 0);
	return n;
}

static const struct bpf_perf_ops fake_perf = {
	.event_get_fd = ev_get, .event_put = ev_put, .event_cpu = ev_cpu,
	.event_output = ev_output, .event_read = ev_read, .callchain = ev_chain,
};

static void test_perf_array(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, 0);
	uint32_t k = 1, fd = 101, out;
	struct bpf_perf_event_value val;
	uint64_t data = 0;

	bpf_register_perf_ops(NULL);
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), -EBADF);
	bpf_register_perf_ops(&fake_perf);
	fd = 5;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), -EBADF);
	fd = 101;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_NOEXIST), -EINVAL);
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), 0);
	assert_int_equal(m->ops->sys_lookup(m, &k, &out), -BPF_ENOTSUPP);
	assert_ptr_equal(bpf_perf_array_event(m, 1), &fake_events[1]);
	/* the helpers as a program calls them */
	assert_int_equal(bpf_helpers[BPF_FUNC_perf_event_output].fn(0, (uintptr_t)m, 1,
								    (uintptr_t)&data, 8), 0);
	assert_int_equal(fake_events[1], 8);
	assert_int_equal((int64_t)bpf_helpers[BPF_FUNC_perf_event_output].fn(0, (uintptr_t)m, 2,
									     (uintptr_t)&data, 8),
			 -ENOENT);
	assert_int_equal((int64_t)bpf_helpers[BPF_FUNC_perf_event_output].fn(0, (uintptr_t)m, 9,
									     (uintptr_t)&data, 8),
			 -E2BIG);
	assert_int_equal(bpf_helpers[BPF_FUNC_perf_event_read_value].fn((uintptr_t)m, 1,
									(uintptr_t)&val, sizeof(val), 0),
			 0);
	assert_int_equal(val.counter, 42);
	k = 4;
	assert_int_equal(m->ops->delete(m, &k), -E2BIG);
	k = 2;
	assert_int_equal(m->ops->delete(m, &k), -ENOENT);
	puts_done = 0;
	m->ops->release_uref(m);
	assert_int_equal(puts_done, 1);
	assert_null(bpf_perf_array_event(m, 1));
	bpf_map_put(m);
	bpf_register_perf_ops(NULL);
}

static int64_t under(struct bpf_map *m, uint32_t idx)
{
	return (int64_t)bpf_helpers[BPF_FUNC_current_task_under_cgroup].fn((uintptr_t)m, idx, 0, 0,
									   0);
}

static void test_cgroup_array(void **state)
{
	struct bpf_map *m;
	uint32_t k = 1, fd = KSVC_FAKE_CGROUP_FD_BASE + 1, out;

	assert_int_equal(try_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 8, 4, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_CGROUP_ARRAY, 8, 4, 4, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 0, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, BPF_F_PRESERVE_ELEMS),
			 -EINVAL);
	m = mk(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, 0);
	ksvc_fake.current_cgroup = 2; /* /a/b */
	assert_int_equal(under(m, 4), -E2BIG);
	assert_int_equal(under(m, 1), -EAGAIN);
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_NOEXIST), -EINVAL);
	k = 4;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), -E2BIG);
	k = 1;
	fd = 5;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), -EBADF);
	fd = KSVC_FAKE_CGROUP_FD_BASE + 1;
	ksvc_fake.cgroup_dead[1] = true;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), -ENOENT);
	ksvc_fake.cgroup_dead[1] = false;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), 0);
	assert_int_equal(ksvc_fake.cgroup_refs[1], 1);
	assert_int_equal(m->ops->sys_lookup(m, &k, &out), -BPF_ENOTSUPP);
	assert_int_equal(under(m, 1), 1); /* /a/b is below /a */
	k = 2;
	fd = KSVC_FAKE_CGROUP_FD_BASE + 3;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), 0);
	assert_int_equal(under(m, 2), 0); /* not below /c */
	ksvc_fake.current_cgroup = 3;
	assert_int_equal(under(m, 2), 1);
	assert_int_equal(under(m, 1), 0);
	ksvc_fake.current_cgroup = 0; /* the root is below neither */
	assert_int_equal(under(m, 1), 0);
	/* overwrite drops the old reference */
	fd = KSVC_FAKE_CGROUP_FD_BASE + 0;
	assert_int_equal(m->ops->sys_update(m, &k, &fd, BPF_ANY), 0);
	assert_int_equal(ksvc_fake.cgroup_refs[3], 0);
	assert_int_equal(under(m, 2), 1); /* everything is below the root */
	assert_int_equal(m->ops->delete(m, &k), 0);
	assert_int_equal(ksvc_fake.cgroup_refs[0], 0);
	assert_int_equal(m->ops->delete(m, &k), -ENOENT);
	k = 9;
	assert_int_equal(m->ops->delete(m, &k), -E2BIG);
	assert_int_equal(under(m, 2), -EAGAIN);
	/* the map's end drops the slots' references */
	bpf_map_put(m);
	assert_int_equal(ksvc_fake.cgroup_refs[1], 0);
	/* the id helpers */
	ksvc_fake.current_cgroup = 2;
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_cgroup_id].fn(0, 0, 0, 0, 0), 11);
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_ancestor_cgroup_id].fn(0, 0, 0, 0, 0), 1);
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_ancestor_cgroup_id].fn(1, 0, 0, 0, 0), 10);
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_ancestor_cgroup_id].fn(2, 0, 0, 0, 0), 11);
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_ancestor_cgroup_id].fn(3, 0, 0, 0, 0), 0);
	assert_int_equal(
		bpf_helpers[BPF_FUNC_get_current_ancestor_cgroup_id].fn(0xffffffff, 0, 0, 0, 0), 0);
	ksvc_fake.current_cgroup = 0;
	assert_int_equal(bpf_helpers[BPF_FUNC_get_current_cgroup_id].fn(0, 0, 0, 0, 0), 1);
}

static void test_stack_trace(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 4, 8, 0);
	uint64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 }, out[4];
	long id, id2;
	uint32_t k, next;

	id = bpf_stackmap_insert(m, a, 3, 0);
	assert_true(id >= 0 && id < 8);
	assert_int_equal(bpf_stackmap_insert(m, a, 3, 0), id); /* same stack, same id */
	k = (uint32_t)id;
	assert_int_equal(m->ops->sys_lookup(m, &k, out), 0);
	assert_int_equal(out[2], 3);
	assert_int_equal(out[3], 0); /* zero-padded */
	id2 = bpf_stackmap_insert(m, b, 3, 0);
	assert_true(id2 >= 0 || id2 == -EEXIST);
	assert_int_equal(m->ops->sys_update(m, &k, out, BPF_ANY), -EINVAL);
	assert_int_equal(m->ops->get_next_key(m, NULL, &next), 0);
	assert_int_equal(m->ops->delete(m, &k), 0);
	assert_int_equal(m->ops->sys_lookup(m, &k, out), -ENOENT);
	/* through the helper with a registered callchain */
	bpf_register_perf_ops(&fake_perf);
	id = (long)bpf_helpers[BPF_FUNC_get_stackid].fn(0, (uintptr_t)m, 1, 0, 0);
	assert_true(id >= 0);
	k = (uint32_t)id;
	assert_int_equal(m->ops->sys_lookup(m, &k, out), 0);
	assert_int_equal(out[0], 0x1001); /* one frame skipped */
	assert_int_equal((int64_t)bpf_helpers[BPF_FUNC_get_stackid].fn(0, (uintptr_t)m, 1ull << 20, 0, 0),
			 -EINVAL);
	bpf_register_perf_ops(NULL);
	bpf_map_put(m);
}

/* bpf_get_task_stack / bpf_copy_from_user_task / bpf_task_pt_regs on fake tasks (their frames
 * and memory come from ksvc_fake): Linux 6.1's results, byte counts and zeroing */
static void test_task_helpers(void **state)
{
	bpf_helper_fn stack = bpf_helpers[BPF_FUNC_get_task_stack].fn;
	bpf_helper_fn copy = bpf_helpers[BPF_FUNC_copy_from_user_task].fn;
	struct ksvc_task *me = ksvc_fake_task(0, 10, 10), *other = ksvc_fake_task(1, 11, 11);
	uint64_t buf[6], mem[2] = { 0x1122334455667788ull, 0x99 }, v[2];
	uintptr_t b = (uintptr_t)buf;

	ksvc_fake.current_task = 0;
	memcpy(ksvc_fake.kstack, (uint64_t[]){ 0xa1, 0xa2, 0xa3, 0xa4 }, 32);
	ksvc_fake.kstack_n = 4;
	ksvc_fake.ustack[0] = 0x400;
	ksvc_fake.ustack_n = 1;
	/* another task's kernel frames: 4 of 6 slots, the rest zeroed */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stack((uintptr_t)other, b, sizeof(buf), 0, 0), 32);
	assert_int_equal(buf[0], 0xa1);
	assert_int_equal(buf[3], 0xa4);
	assert_int_equal(buf[4], 0);
	assert_int_equal(buf[5], 0);
	/* skip 1 and room for 2: a2, a3 */
	assert_int_equal(stack((uintptr_t)other, b, 16, 1, 0), 16);
	assert_int_equal(buf[0], 0xa2);
	assert_int_equal(buf[1], 0xa3);
	/* skip all 4: 0 bytes (Linux errs only past them), past them -EFAULT and all zero */
	assert_int_equal(stack((uintptr_t)other, b, 16, 4, 0), 0);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal((int64_t)stack((uintptr_t)other, b, sizeof(buf), 5, 0), -EFAULT);
	assert_int_equal(buf[0], 0);
	assert_int_equal(buf[5], 0);
	/* size 0: 0; not a multiple of 8, unknown flags, a build id: -EINVAL */
	assert_int_equal(stack((uintptr_t)other, b, 0, 0, 0), 0);
	assert_int_equal((int64_t)stack((uintptr_t)other, b, 12, 0, 0), -EINVAL);
	assert_int_equal((int64_t)stack((uintptr_t)other, b, 16, 1ull << 20, 0), -EINVAL);
	assert_int_equal((int64_t)stack((uintptr_t)other, b, 16, BPF_F_USER_BUILD_ID, 0), -EINVAL);
	/* user frames: the current task's; another's -EOPNOTSUPP with the buffer zeroed */
	assert_int_equal(stack((uintptr_t)me, b, 16, BPF_F_USER_STACK, 0), 8);
	assert_int_equal(buf[0], 0x400);
	assert_int_equal(buf[1], 0);
	buf[0] = 1;
	assert_int_equal((int64_t)stack((uintptr_t)other, b, 16, BPF_F_USER_STACK, 0), -EOPNOTSUPP);
	assert_int_equal(buf[0], 0);

	/* copy_from_user_task: flags first (the buffer untouched), size 0, whole, short */
	ksvc_fake.umem = mem;
	ksvc_fake.umem_addr = 0x5000;
	ksvc_fake.umem_len = sizeof(mem);
	v[0] = 7;
	assert_int_equal((int64_t)copy((uintptr_t)v, 8, 0x5000, (uintptr_t)other, 1), -EINVAL);
	assert_int_equal(v[0], 7);
	assert_int_equal(copy((uintptr_t)v, 0, 0x9000, (uintptr_t)other, 0), 0);
	assert_int_equal(copy((uintptr_t)v, 8, 0x5000, (uintptr_t)other, 0), 0);
	assert_int_equal(v[0], 0x1122334455667788ull);
	v[0] = v[1] = 7;
	assert_int_equal((int64_t)copy((uintptr_t)v, 16, 0x5008, (uintptr_t)other, 0), -EFAULT);
	assert_int_equal(v[0], 0); /* a partial read leaves nothing */
	assert_int_equal(v[1], 0);
	ksvc_fake.umem = NULL;
	ksvc_fake.umem_len = 0;

	/* task_pt_regs: where the task keeps its user registers */
	assert_ptr_equal((void *)(uintptr_t)bpf_helpers[BPF_FUNC_task_pt_regs].fn((uintptr_t)other, 0,
										 0, 0, 0),
			 ksvc_task_user_regs(other));
	ksvc_fake.kstack_n = ksvc_fake.ustack_n = 0;
}

/* A one-page RINGBUF and its consumer, producer and data pages (the fake's phys is virt). */
static struct bpf_map *ring4k(uint64_t **cons, uint64_t **prod, uint8_t **data)
{
	union bpf_attr a;
	struct bpf_map *m;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = 4096;
	assert_int_equal(bpf_map_create(&a, &m), 0);
	*cons = (uint64_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 0);
	*prod = (uint64_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 1);
	*data = (uint8_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 2);
	return m;
}

static void test_ringbuf(void **state)
{
	uint64_t *cons, *prod;
	uint8_t *data, rec[100];
	struct bpf_map *m = ring4k(&cons, &prod, &data);

	/* the data pages come twice, then nothing */
	assert_ptr_equal((void *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 3), data);
	assert_int_equal(bpf_ringbuf_mmap_phys(m, 4), 0);
	for (int i = 0; i < 100; i++)
		rec[i] = (uint8_t)i;
	/* 100 bytes: header {100, pg_off 3}, 112 in all */
	assert_int_equal(bpf_ringbuf_output(m, rec, 100, 0), 0);
	assert_int_equal(*prod, 112);
	assert_int_equal(((uint32_t *)data)[0], 100);
	assert_int_equal(((uint32_t *)data)[1], 3);
	assert_memory_equal(data + 8, rec, 100);
	assert_int_equal(bpf_ringbuf_query(m, BPF_RB_AVAIL_DATA), 112);
	assert_int_equal(bpf_ringbuf_query(m, BPF_RB_RING_SIZE), 4096);
	assert_int_equal(bpf_ringbuf_query(m, BPF_RB_PROD_POS), 112);
	assert_int_equal(bpf_ringbuf_query(m, BPF_RB_CONS_POS), 0);
	assert_int_equal(bpf_ringbuf_query(m, 99), 0);
	assert_int_equal(bpf_ringbuf_output(m, rec, 100, 4), -EINVAL);
	/* fill: the producer may not get a whole ring ahead of the consumer */
	int n = 1;

	while (bpf_ringbuf_output(m, rec, 100, BPF_RB_NO_WAKEUP) == 0)
		n++;
	assert_int_equal(n, 36); /* 36 * 112 = 4032; one more would reach 4144 - 0 > 4095 */
	assert_int_equal(bpf_ringbuf_output(m, rec, 4096, 0), -EAGAIN);
	/* the consumer reads two records: the next one wraps, its bytes continue at the start */
	*cons = 224;
	assert_int_equal(bpf_ringbuf_output(m, rec, 100, 0), 0);
	assert_int_equal(*prod, 4032 + 112);
	assert_int_equal(((uint32_t *)(data + 4032))[0], 100);
	assert_memory_equal(data + 4040, rec, 56);
	assert_memory_equal(data, rec + 56, 44);
	/* no syscall access to the elements */
	uint32_t k = 0, v;

	assert_int_equal(m->ops->sys_lookup(m, &k, &v), -BPF_ENOTSUPP);
	assert_int_equal(m->ops->get_next_key(m, NULL, &k), -BPF_ENOTSUPP);
	bpf_map_put(m);
}

/* Output records until the producer's offset in the ring is at (an 8-aligned offset). */
static void fill_to(struct bpf_map *m, const uint64_t *prod, uint64_t at)
{
	static const uint8_t rec[100];

	while (*prod % 4096 != at) {
		uint64_t off = *prod % 4096, left = (at - off) % 4096;

		assert_int_equal(bpf_ringbuf_output(m, rec, left >= 112 + 8 ? 100 : left - 8, 0), 0);
	}
}

/* bpf_ringbuf_reserve + submit/discard: in place, and through a bounce when the body wraps */
static void test_ringbuf_reserve(void **state)
{
	uint64_t *cons, *prod;
	uint8_t *data, rec[100];
	struct bpf_map *m = ring4k(&cons, &prod, &data);
	const uint32_t *h = (const uint32_t *)data;

	for (int i = 0; i < 100; i++)
		rec[i] = (uint8_t)(i + 1);
	assert_null(bpf_ringbuf_reserve(m, 16, 1));    /* flags */
	assert_null(bpf_ringbuf_reserve(m, 4096, 0));  /* more than the ring */
	assert_int_equal(*prod, 0);
	/* in place: the body follows its BUSY header until submit */
	uint8_t *p = bpf_ringbuf_reserve(m, 100, 0);

	assert_ptr_equal(p, data + 8);
	assert_int_equal(*prod, 112);
	assert_int_equal(h[0], 100u | 1u << 31);
	assert_int_equal(h[1], 3);
	memcpy(p, rec, 100);
	bpf_ringbuf_commit(p, 0, false);
	assert_int_equal(h[0], 100);
	assert_memory_equal(data + 8, rec, 100);
	/* discard keeps the record, marked */
	p = bpf_ringbuf_reserve(m, 8, 0);
	assert_ptr_equal(p, data + 120);
	bpf_ringbuf_commit(p, BPF_RB_NO_WAKEUP, true);
	assert_int_equal(h[28], 8u | 1u << 30);
	/* fill to 4032, consume all: the next body (100 bytes at 4040) wraps */
	fill_to(m, prod, 4032);
	assert_int_equal(*prod, 4032);
	assert_null(bpf_ringbuf_reserve(m, 100, 0)); /* 4144 - 0 > 4095: no room */
	*cons = 4032;
	p = bpf_ringbuf_reserve(m, 100, 0);
	assert_non_null(p);
	assert_true(p < data || p >= data + 4096); /* a bounce */
	assert_int_equal(*prod, 4144);
	assert_int_equal(h[4032 / 4], 100u | 1u << 31);
	assert_int_equal(h[4032 / 4 + 1], 3);
	memcpy(p, rec, 100);
	bpf_ringbuf_commit(p, 0, false);
	assert_int_equal(h[4032 / 4], 100);
	assert_memory_equal(data + 4040, rec, 56);
	assert_memory_equal(data, rec + 56, 44);
	/* a wrapping reservation discarded: nothing copied */
	*cons = 4144;
	fill_to(m, prod, 4088);
	*cons = *prod;
	memset(data, 0xee, 16);
	p = bpf_ringbuf_reserve(m, 16, 0);
	assert_true(p < data || p >= data + 4096);
	memset(p, 0x55, 16);
	bpf_ringbuf_commit(p, 0, true);
	assert_int_equal(h[4088 / 4], 16u | 1u << 30);
	assert_int_equal(data[0], 0xee);
	/* an empty body just before the end: in place, one past the data */
	*cons = *prod;
	fill_to(m, prod, 4088);
	*cons = *prod;
	p = bpf_ringbuf_reserve(m, 0, 0);
	assert_ptr_equal(p, data + 4096);
	bpf_ringbuf_commit(p, 0, false);
	assert_int_equal(h[4088 / 4], 0);
	bpf_map_put(m);
}

static void test_mmapable(void **state)
{
	struct bpf_map *m = mk(BPF_MAP_TYPE_ARRAY, 4, 100, 50, BPF_F_MMAPABLE);
	uint32_t k = 49;
	uint8_t *base = bpf_array_base(m);

	assert_int_equal((uintptr_t)base % KSVC_PAGE_SIZE, 0);
	assert_ptr_equal(m->ops->lookup(m, &k), base + 49 * 104);
	bpf_map_put(m);
}

/*
 * BLOOM_FILTER: creation rules, push/peek and the syscall ops' errnos, and a zero-seed filter
 * of 64 bits and one hash setting Linux's bits: holding 0, it reports exactly the values
 * t_bpf_bloom recorded on Linux 6.1 (jhash2 over one u32) among 1..400.
 */
static void test_bloom(void **state)
{
	static const uint32_t linux_fp[] = { 26, 59, 127, 180, 224, 312, 343 };
	uint32_t v = 0, fp[64], n = 0, none;
	union bpf_attr a;
	struct bpf_map *m = NULL;

	assert_int_equal(try_create(BPF_MAP_TYPE_BLOOM_FILTER, 4, 4, 1, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_BLOOM_FILTER, 0, 0, 1, 0), -EINVAL);
	assert_int_equal(try_create(BPF_MAP_TYPE_BLOOM_FILTER, 0, 4, 1, BPF_F_MMAPABLE), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_BLOOM_FILTER;
	a.value_size = 4;
	a.max_entries = 1;
	a.map_flags = BPF_F_ZERO_SEED;
	a.map_extra = 16;
	assert_int_equal(bpf_map_create(&a, &m), -EINVAL);
	a.map_extra = 1;
	assert_int_equal(bpf_map_create(&a, &m), 0);
	assert_int_equal(m->ops->pop(m, &v, false), -ENOENT);
	assert_int_equal(m->ops->push(m, &v, BPF_EXIST), -EINVAL);
	assert_int_equal(m->ops->push(m, &v, BPF_ANY), 0);
	assert_int_equal(m->ops->sys_lookup(m, NULL, &v), 0);
	assert_int_equal(m->ops->pop(m, &v, true), -EOPNOTSUPP);
	assert_int_equal(m->ops->delete(m, NULL), -EOPNOTSUPP);
	assert_int_equal(m->ops->get_next_key(m, NULL, &none), -EOPNOTSUPP);
	assert_null(m->ops->lookup(m, NULL));
	for (v = 1; v <= 400; v++)
		if (m->ops->pop(m, &v, false) == 0 && n < 64)
			fp[n++] = v;
	assert_int_equal(n, sizeof(linux_fp) / sizeof(linux_fp[0]));
	assert_memory_equal(fp, linux_fp, sizeof(linux_fp));
	bpf_map_put(m);
	/* another map type with map_extra: EINVAL */
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.map_flags = 0;
	a.map_extra = 1;
	assert_int_equal(bpf_map_create(&a, &m), -EINVAL);
}

/* The dynptr helpers' run-time half: bounds (-E2BIG), flags (-EINVAL), null dynptrs, data
 * slices, and a ring buffer dynptr's reserve, refusal (-EINVAL) and submit. */
static void test_dynptr(void **state)
{
	uint8_t mem[32] = { 0 }, out[8];
	uint64_t d[2], r[2], v = 0x0102030405060708ull;
	struct bpf_map *rb = mk(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
#define U(p) ((uint64_t)(uintptr_t)(p))

	assert_int_equal(bpf_h_dynptr_from_mem(U(mem), sizeof(mem), 0, U(d), 0), 0);
	assert_int_equal(bpf_h_dynptr_write(U(d), 24, U(&v), 8, 0), 0);
	assert_int_equal(bpf_h_dynptr_write(U(d), 25, U(&v), 8, 0), (uint64_t)-E2BIG);
	assert_int_equal(bpf_h_dynptr_write(U(d), 0, U(&v), 8, 1), (uint64_t)-EINVAL);
	assert_int_equal(bpf_h_dynptr_read(U(out), 8, U(d), 24, 0), 0);
	assert_memory_equal(out, &v, 8);
	assert_memory_equal(mem + 24, &v, 8);
	assert_int_equal(bpf_h_dynptr_read(U(out), 8, U(d), UINT32_MAX, 0), (uint64_t)-E2BIG);
	assert_int_equal(bpf_h_dynptr_data(U(d), 24, 8, 0, 0), U(mem + 24));
	assert_int_equal(bpf_h_dynptr_data(U(d), 28, 8, 0, 0), 0);
	/* a failed constructor leaves a null dynptr */
	assert_int_equal(bpf_h_dynptr_from_mem(U(mem), 1u << 24, 0, U(d), 0), (uint64_t)-E2BIG);
	assert_int_equal(bpf_h_dynptr_read(U(out), 0, U(d), 0, 0), (uint64_t)-EINVAL);
	assert_int_equal(bpf_h_dynptr_data(U(d), 0, 0, 0, 0), 0);
	/* ring buffer dynptrs */
	assert_int_equal(bpf_h_ringbuf_reserve_dynptr(U(rb), 16, 1, U(r), 0), (uint64_t)-EINVAL);
	assert_int_equal(bpf_h_ringbuf_discard_dynptr(U(r), 0, 0, 0, 0), 0); /* null: nothing */
	assert_int_equal(bpf_h_ringbuf_reserve_dynptr(U(rb), 8192, 0, U(r), 0), (uint64_t)-EINVAL);
	assert_int_equal(bpf_h_ringbuf_reserve_dynptr(U(rb), 16, 0, U(r), 0), 0);
	assert_int_equal(bpf_h_dynptr_write(U(r), 8, U(&v), 8, 0), 0);
	assert_int_equal(bpf_h_ringbuf_submit_dynptr(U(r), 0, 0, 0, 0), 0);
	assert_int_equal(bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA), 24);
	assert_int_equal(bpf_h_dynptr_data(U(r), 0, 0, 0, 0), 0); /* submitted: null */
	bpf_map_put(rb);
#undef U
}

/*
 * USER_RINGBUF and bpf_user_ringbuf_drain: samples written where user space writes them (the
 * pages bpf_ringbuf_mmap_phys gives), a callback returning 0, DISCARD skipped and not
 * counted, BUSY stopping, a sample past the producer position or a producer position not a
 * multiple of 8 -EINVAL, bad flags -EINVAL.
 */
static void test_user_ringbuf(void **state)
{
	static const struct bpf_insn cb[] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
					      { .code = BPF_JMP | BPF_EXIT } };
	struct bpf_dinsn d[2];
	struct bpf_map *m = mk(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096, 0);
	uint64_t *cons = (uint64_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 0);
	uint64_t *prod = (uint64_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 1);
	uint8_t *data = (uint8_t *)(uintptr_t)bpf_ringbuf_mmap_phys(m, 2);
	uint32_t hdr[2] = { 8, 0 };
	uint64_t fn = (uintptr_t)d;

	bpf_interp_decode(cb, 2, d, BPF_STACK_SIZE, false, BPF_PROG_TYPE_PERF_EVENT);
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, 0), 0); /* empty */
	memcpy(data, hdr, 8);
	hdr[0] = 8 | (1u << 30); /* DISCARD */
	memcpy(data + 16, hdr, 8);
	hdr[0] = 8;
	memcpy(data + 32, hdr, 8);
	*prod = 48;
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, 4), -EINVAL);
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, BPF_RB_NO_WAKEUP), 2);
	assert_int_equal(*cons, 48);
	hdr[0] = 8 | (1u << 31); /* BUSY */
	memcpy(data + 48, hdr, 8);
	*prod = 64;
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, 0), 0);
	assert_int_equal(*cons, 48);
	hdr[0] = 64; /* past the producer position */
	memcpy(data + 48, hdr, 8);
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, 0), -EINVAL);
	*prod = 52; /* not a multiple of 8 */
	assert_int_equal(bpf_user_ringbuf_drain(m, fn, 0, 0), -EINVAL);
	bpf_map_put(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_checks), cmocka_unit_test(test_array),
		cmocka_unit_test(test_percpu),	      cmocka_unit_test(test_hash),
		cmocka_unit_test(test_lru),	      cmocka_unit_test(test_perf_array),
		cmocka_unit_test(test_stack_trace),   cmocka_unit_test(test_task_helpers),
		cmocka_unit_test(test_mmapable),      cmocka_unit_test(test_cgroup_array),
		cmocka_unit_test(test_ringbuf),	      cmocka_unit_test(test_bloom),
		cmocka_unit_test(test_dynptr),		      cmocka_unit_test(test_user_ringbuf),
		cmocka_unit_test(test_ringbuf_reserve), cmocka_unit_test(test_jit_lookups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
