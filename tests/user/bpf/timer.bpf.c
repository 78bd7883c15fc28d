/* timer.bpf.c - SYSCALL programs driving bpf_timer, for t_bpf_timer (clang-built: the timer
 * callbacks need the BTF func_info Linux wants, and the maps their value BTF).
 *   ctl        one timer helper on element c->key of arr (c->which 0), hmap (1) or gone (2),
 *              by c->op: 1 init (clock c->arg), 2 set_callback(tick), 3 start (c->arg ns,
 *              flags c->arg2), 4 cancel, 5 set_callback(tick_del); its result in c->ret, the
 *              CPU it ran on in c->cpu
 *   jctl       without a callback of its own, so JIT-compiled: on arr, op 1 init, 3 start,
 *              4 cancel
 *   tick       the callback: fired[0] += 1, count += 1, its CPU, bpf_timer_cancel of its own
 *              timer (-EDEADLK) in deadlk, and while rearm > 0: rearm -= 1 and a new 1 ms start
 *   tick_del   the callback: fired[0] += 1, then it deletes its own element
 *   pe         a perf_event program using arr: refused (tracing programs, no bpf_timer)
 *   badret     a callback returning 1: refused
 *   mismatch   bpf_timer_init of an arr timer with hmap: refused
 *   peek       a load of the timer's bytes: refused
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct elem {
	struct bpf_timer t;
	__u64 count;
	__u64 rearm;
	__s64 deadlk;
	__u64 cb_cpu;
	__s64 restart;
};

struct ctl {
	__u32 op, which, key, cpu;
	__u64 arg, arg2;
	__s64 ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct elem);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct elem);
} hmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct elem);
} gone SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fired SEC(".maps");

static void bump(void)
{
	__u32 z = 0;
	__u64 *f = bpf_map_lookup_elem(&fired, &z);

	if (f)
		__sync_fetch_and_add(f, 1);
}

static int tick(void *map, __u32 *key, struct elem *v)
{
	bump();
	v->count++;
	v->cb_cpu = bpf_get_smp_processor_id();
	v->deadlk = bpf_timer_cancel(&v->t);
	if (v->rearm) {
		v->rearm--;
		v->restart = bpf_timer_start(&v->t, 1000000, 0);
	}
	return 0;
}

static int tick_del(void *map, __u32 *key, struct elem *v)
{
	bump();
	bpf_map_delete_elem(map, key);
	return 0;
}

static __always_inline long op(struct ctl *c, struct elem *v, void *map)
{
	switch (c->op) {
	case 1:
		return bpf_timer_init(&v->t, map, c->arg);
	case 2:
		return bpf_timer_set_callback(&v->t, tick);
	case 3:
		return bpf_timer_start(&v->t, c->arg, c->arg2);
	case 4:
		return bpf_timer_cancel(&v->t);
	case 5:
		return bpf_timer_set_callback(&v->t, tick_del);
	}
	return -1000;
}

SEC("syscall")
int ctl(struct ctl *c)
{
	__u32 key = c->key;
	struct elem *v;

	c->cpu = bpf_get_smp_processor_id();
	if (c->which == 0) {
		v = bpf_map_lookup_elem(&arr, &key);
		c->ret = v ? op(c, v, &arr) : -1001;
	} else if (c->which == 1) {
		v = bpf_map_lookup_elem(&hmap, &key);
		c->ret = v ? op(c, v, &hmap) : -1001;
	} else {
		v = bpf_map_lookup_elem(&gone, &key);
		c->ret = v ? op(c, v, &gone) : -1001;
	}
	return 0;
}

SEC("syscall")
int jctl(struct ctl *c)
{
	__u32 key = c->key;
	struct elem *v = bpf_map_lookup_elem(&arr, &key);

	if (!v)
		c->ret = -1001;
	else if (c->op == 1)
		c->ret = bpf_timer_init(&v->t, &arr, c->arg);
	else if (c->op == 3)
		c->ret = bpf_timer_start(&v->t, c->arg, c->arg2);
	else
		c->ret = bpf_timer_cancel(&v->t);
	return 0;
}

SEC("perf_event")
int pe(struct bpf_perf_event_data *ctx)
{
	__u32 key = 0;
	struct elem *v = bpf_map_lookup_elem(&arr, &key);

	return v ? 1 : 0;
}

static int ret_one(void *map, __u32 *key, struct elem *v)
{
	return 1;
}

SEC("syscall")
int badret(void *ctx)
{
	__u32 key = 0;
	struct elem *v = bpf_map_lookup_elem(&arr, &key);

	if (v)
		bpf_timer_set_callback(&v->t, ret_one);
	return 0;
}

SEC("syscall")
int mismatch(void *ctx)
{
	__u32 key = 0;
	struct elem *v = bpf_map_lookup_elem(&arr, &key);

	if (v)
		bpf_timer_init(&v->t, &hmap, 1);
	return 0;
}

SEC("syscall")
int peek(void *ctx)
{
	__u32 key = 0;
	struct elem *v = bpf_map_lookup_elem(&arr, &key);

	return v ? (int)*(volatile __u64 *)&v->t : 0;
}
