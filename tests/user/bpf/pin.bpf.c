/* pin.bpf.c - SYSCALL programs that must stay on one CPU for a whole run, for t_bpf_pin.
 *   pin    reads bpf_get_smp_processor_id(), looks up its PERCPU_ARRAY slot and bumps it,
 *          spins a->iters rounds of bpf_loop, then reads the CPU again and looks the slot up
 *          again: a->moved bit 0 when the CPU changed, bit 1 when the re-lookup gives another
 *          slot than the first, bit 2 when the slot's count went backwards (another CPU's)
 *   pinl   the same with a bounded loop of its own (no callback: the JIT compiles it here) of
 *          bpf_copy_from_user (the sleepable helper) of BUF_SIZE bytes at a->ubuf, that stops
 *          after a->iters ns by bpf_ktime_get_ns; a->sink the rounds it made
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct slot {
	__u64 runs;
	__u64 cpu;
};

struct args {
	__u32 iters, moved, cpu0, cpu1;
	__u64 sink;
	__u64 ubuf; /* pinl: BUF_SIZE bytes of user memory */
};

#define BUF_SIZE 16384

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[BUF_SIZE]);
} buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot);
} pc SEC(".maps");

static long spin(__u32 i, void *ctx)
{
	__u64 *s = ctx;

	*s = *s * 6364136223846793005ull + i;
	return 0;
}

static __always_inline int check(struct args *a, __u32 c0, struct slot *p, __u64 mine)
{
	__u32 k = 0, c1 = bpf_get_smp_processor_id();
	struct slot *q = bpf_map_lookup_elem(&pc, &k);

	if (!q)
		return 1;
	a->cpu0 = c0;
	a->cpu1 = c1;
	a->moved = (c0 != c1) | ((p != q) << 1) | ((q->runs < mine) << 2);
	return 0;
}

SEC("syscall")
int pin(struct args *a)
{
	__u32 k = 0, c0 = bpf_get_smp_processor_id();
	struct slot *p = bpf_map_lookup_elem(&pc, &k);
	__u64 s = c0, mine;

	if (!p)
		return 1;
	mine = __sync_fetch_and_add(&p->runs, 1) + 1;
	p->cpu = c0;
	bpf_loop(a->iters, spin, &s, 0);
	a->sink = s;
	return check(a, c0, p, mine);
}

SEC("syscall")
int pinl(struct args *a)
{
	__u32 k = 0, c0 = bpf_get_smp_processor_id();
	struct slot *p = bpf_map_lookup_elem(&pc, &k);
	__u64 mine;

	if (!p)
		return 1;
	mine = __sync_fetch_and_add(&p->runs, 1) + 1;
	p->cpu = c0;
	__u64 t0 = bpf_ktime_get_ns();
	char *b = bpf_map_lookup_elem(&buf, &k);
	__u32 i;

	if (!b)
		return 1;
	for (i = 0; i < 4000; i++) {
		if (bpf_ktime_get_ns() - t0 > a->iters)
			break;
		if (bpf_copy_from_user(b, BUF_SIZE, (void *)a->ubuf))
			return 1;
	}
	a->sink = i;
	return check(a, c0, p, mine);
}
