/*
 * helpers.c - the eBPF helper functions, as an index table by enum bpf_func_id (<linux/bpf.h>),
 * each with the argument and return types the verifier checks calls against, and the
 * trace_printk buffer.
 *
 * Provided: map_lookup/update/delete_elem, ktime_get_ns, trace_printk, get_prandom_u32,
 * get_smp_processor_id, get_current_pid_tgid, get_current_uid_gid, get_current_comm,
 * probe_read_{user,kernel}{,_str}, and the perf ones that reach perf through the registered
 * struct bpf_perf_ops (perf_event_output, perf_event_read_value, get_stackid, get_stack,
 * perf_prog_read_value) or the context (get_attach_cookie), and the ringbuf ones (output,
 * query, reserve, submit, discard: map_ringbuf.c).  Issue 19 added Linux 6.1's other
 * perf_event helpers: callbacks (loop, for_each_map_elem), strings (strncmp, strtol, strtoul;
 * snprintf and trace_vprintk in bprintf.c), the legacy probe reads, clocks and ids, signals,
 * perf_event_read, branch records (-ENOENT as arm64), QUEUE/STACK and per-CPU lookups, and
 * get_current_task_btf (the current struct task, which the verifier types by the kernel's
 * BTF: PTR_TO_BTF_ID, verify_mem.c), find_vma on such a task (its callback gets the kernel's
 * struct vm_area, typed too), get_task_stack / task_pt_regs / copy_from_user_task on such a
 * task or one reached through its links (real_parent, group_leader), the bpf_timer ones
 * (helpers_timer.c), the BTF-bound ones (kptr, ...) whose arguments the verifier still
 * refuses; spin_lock/spin_unlock on a map value's struct bpf_spin_lock
 * (map_btf.c finds it; Linux 6.1 lets no program type here use such a map yet, prog.c).
 * Return values follow Linux 6.1.
 * Every helper may run in the PMU interrupt: no sleeping, and no allocation but
 * bpf_ringbuf_reserve's bounce buffer (ksvc_alloc, [any]); copy_from_user, which may sleep,
 * only in sleepable programs.
 * Not here: tail calls, dynptrs, user_ringbuf_drain, the helpers of other program types
 * (the verifier rejects their ids).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define P(x) ((void *)(uintptr_t)(x))

static const struct bpf_perf_ops *perf_ops;

void bpf_register_perf_ops(const struct bpf_perf_ops *ops)
{
	__atomic_store_n(&perf_ops, ops, __ATOMIC_RELEASE);
}

const struct bpf_perf_ops *bpf_perf(void)
{
	return __atomic_load_n(&perf_ops, __ATOMIC_ACQUIRE);
}

/* ---- maps ---- */

/*
 * Linux 6.1 calls map_update/delete/push/pop/peek_elem straight into the map's ops (64-bit
 * JIT fixup), whose int result fills only the low 32 bits of r0: the same here.
 */

static uint64_t h_map_lookup(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uintptr_t)m->ops->lookup(m, P(key));
}

static uint64_t h_map_update(uint64_t map, uint64_t key, uint64_t val, uint64_t flags, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uint32_t)m->ops->update(m, P(key), P(val), flags);
}

static uint64_t h_map_delete(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uint32_t)m->ops->delete(m, P(key));
}

/* bpf_map_lookup_percpu_elem: another CPU's value of a per-CPU map, NULL past the last CPU. */
static uint64_t h_map_lookup_cpu(uint64_t map, uint64_t key, uint64_t cpu, uint64_t a4,
				 uint64_t a5)
{
	struct bpf_map *m = P(map);

	if ((uint32_t)cpu >= ksvc_nr_cpus() || !m->ops->lookup_cpu)
		return 0;
	return (uintptr_t)m->ops->lookup_cpu(m, P(key), (uint32_t)cpu);
}

static uint64_t h_map_push(uint64_t map, uint64_t val, uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uint32_t)m->ops->push(m, P(val), flags);
}

static uint64_t h_map_pop(uint64_t map, uint64_t val, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uint32_t)m->ops->pop(m, P(val), true);
}

static uint64_t h_map_peek(uint64_t map, uint64_t val, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);

	return (uint32_t)m->ops->pop(m, P(val), false);
}

/* ---- task and time ---- */

static uint64_t h_ktime(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_clock_ns();
}

static uint64_t h_prandom(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_random_u32();
}

static uint64_t h_cpu(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_cpu_id();
}

static uint64_t h_pid_tgid(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_current_pid_tgid(); /* one call: it runs on many overflows */
}

static uint64_t h_uid_gid(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uint64_t)ksvc_current_gid() << 32 | ksvc_current_uid();
}

static uint64_t h_comm(uint64_t buf, uint64_t size, uint64_t a3, uint64_t a4, uint64_t a5)
{
	char comm[16];
	char *dst = P(buf);

	ksvc_current_comm(comm);
	comm[15] = 0;
	/* strscpy semantics: always NUL-terminated, zero padding is not promised but harmless */
	memset(dst, 0, size);
	memcpy(dst, comm, MIN((uint64_t)strlen(comm), size - 1));
	return 0;
}

/* ---- probe_read ---- */

static long probe_read(void *dst, uint64_t size, const void *src, bool user)
{
	int err = ksvc_read_nofault(dst, src, size, user);

	if (err)
		memset(dst, 0, size);
	return err;
}

static long probe_read_str(char *dst, uint64_t size, const char *src, bool user)
{
	uint64_t i;

	if (!size)
		return 0;
	for (i = 0; i < size - 1; i++) {
		if (ksvc_read_nofault(&dst[i], src + i, 1, user)) {
			memset(dst, 0, size);
			return -EFAULT;
		}
		if (!dst[i])
			return (long)i + 1;
	}
	dst[i] = 0;
	return (long)size;
}

static uint64_t h_read_user(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4, uint64_t a5)
{
	return (uint64_t)probe_read(P(dst), size, P(src), true);
}

static uint64_t h_read_kernel(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4, uint64_t a5)
{
	return (uint64_t)probe_read(P(dst), size, P(src), false);
}

uint64_t bpf_probe_load(uintptr_t addr, uint32_t size)
{
	uint64_t v = 0; /* little-endian: the low size bytes */

	if (probe_read(&v, size, P(addr), false))
		return 0;
	return v;
}

static uint64_t h_read_user_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4, uint64_t a5)
{
	return (uint64_t)probe_read_str(P(dst), size, P(src), true);
}

static uint64_t h_read_kernel_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4,
				  uint64_t a5)
{
	return (uint64_t)probe_read_str(P(dst), size, P(src), false);
}

/* ---- trace_printk ---- */

#define TRACE_BUF_SIZE 16384

static struct {
	struct spinlock lock;
	char buf[TRACE_BUF_SIZE];
	uint64_t head, tail; /* (lock) bytes written / read, positions modulo the size */
} trace = { .lock = SPINLOCK_INIT };

static struct wait_queue *_Atomic trace_wq; /* trace_pipe's readers, woken after each line */

void bpf_trace_set_waitq(struct wait_queue *wq)
{
	atomic_store(&trace_wq, wq);
}

static void trace_put(const char *s, size_t n)
{
	unsigned long flags = spin_lock_irqsave(&trace.lock);
	struct wait_queue *wq;

	for (size_t i = 0; i < n; i++)
		trace.buf[trace.head++ % TRACE_BUF_SIZE] = s[i];
	if (trace.head - trace.tail > TRACE_BUF_SIZE)
		trace.tail = trace.head - TRACE_BUF_SIZE; /* overwrite the oldest text */
	spin_unlock_irqrestore(&trace.lock, flags);
	wq = atomic_load(&trace_wq);
	if (wq)
		ksvc_waitq_wake_all(wq);
}

bool bpf_trace_pending(void)
{
	unsigned long flags = spin_lock_irqsave(&trace.lock);
	bool pending = trace.tail < trace.head;

	spin_unlock_irqrestore(&trace.lock, flags);
	return pending;
}

size_t bpf_trace_read(char *buf, size_t len)
{
	unsigned long flags = spin_lock_irqsave(&trace.lock);
	size_t n = 0;

	while (n < len && trace.tail < trace.head)
		buf[n++] = trace.buf[trace.tail++ % TRACE_BUF_SIZE];
	spin_unlock_irqrestore(&trace.lock, flags);
	return n;
}

void bpf_trace_reset(void)
{
	unsigned long flags = spin_lock_irqsave(&trace.lock);

	trace.head = trace.tail = 0;
	spin_unlock_irqrestore(&trace.lock, flags);
}

/*
 * Format trace_printk's fmt with up to three u64 arguments: %d %i %u %x %X %c %s %p %%, with
 * l/ll/z and width; Linux rejects anything else (and more than 3 conversions) with EINVAL.
 */
/* bpf_trace_printk(fmt, fmt_size, a1, a2, a3): Linux's bpf_bprintf_prepare rules with at most
 * three arguments, formatted as bpf_snprintf formats (bprintf.c). */
static uint64_t h_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1, uint64_t a2,
			       uint64_t a3)
{
	uint64_t args[3] = { a1, a2, a3 };

	return bpf_trace_fmt(P(fmt), fmt_size, args, 3);
}

void bpf_trace_line(const char *msg)
{
	char line[600], comm[16];
	int ln;

	ksvc_current_comm(comm);
	comm[15] = 0;
	ln = ksnprintf(line, sizeof(line), "%16s-%-7d [%03u] bpf_trace_printk: %s", comm,
		     ksvc_current_tid(), ksvc_cpu_id(), msg);
	if (ln > (int)sizeof(line) - 1)
		ln = (int)sizeof(line) - 1;
	trace_put(line, (size_t)ln);
	ksvc_printk("bpf_trace_printk: %s", msg);
}

/* ---- perf: through struct bpf_perf_ops ---- */

/* The event a PERF_EVENT_ARRAY helper names by flags (an index, or BPF_F_CURRENT_CPU): 0, or
 * Linux's -EINVAL (other flag bits), -E2BIG (past the array), -ENOENT (empty slot). */
static int perf_array_pick(struct bpf_map *m, uint64_t flags, void **ev)
{
	uint64_t index = flags & BPF_F_INDEX_MASK;

	if (flags & ~BPF_F_INDEX_MASK)
		return -EINVAL;
	if (index == BPF_F_CURRENT_CPU)
		index = ksvc_cpu_id();
	if (index >= m->max_entries)
		return -E2BIG;
	*ev = bpf_perf_array_event(m, (uint32_t)index);
	return *ev && bpf_perf() ? 0 : -ENOENT;
}

static uint64_t h_perf_output(uint64_t ctx, uint64_t map, uint64_t flags, uint64_t data,
			      uint64_t size)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	void *ev;
	int ecpu, err = perf_array_pick(P(map), flags, &ev);

	if (err)
		return (uint64_t)(int64_t)err;
	ecpu = ops->event_cpu(ev);
	if (ecpu != -1 && (unsigned int)ecpu != ksvc_cpu_id())
		return (uint64_t)-EOPNOTSUPP;
	return (uint64_t)ops->event_output(ev, P(ctx), P(data), size);
}

static uint64_t h_perf_read_value(uint64_t map, uint64_t flags, uint64_t buf, uint64_t size,
				  uint64_t a5)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	struct bpf_perf_event_value *v = P(buf);
	void *ev;
	long err = -EINVAL;

	if (size != sizeof(*v))
		goto clear;
	err = perf_array_pick(P(map), flags, &ev);
	if (err)
		goto clear;
	err = ops->event_read(ev, v);
	if (!err)
		return 0;
clear:
	memset(v, 0, size);
	return (uint64_t)err;
}

static long callchain(void *ctx, uint64_t flags, uint64_t *ips, uint32_t max)
{
	const struct bpf_perf_ops *ops = bpf_perf();

	if (!ops || !ops->callchain)
		return -EFAULT;
	return ops->callchain(ctx, flags & BPF_F_USER_STACK, ips, max);
}

#define STACK_MAX 127 /* PERF_MAX_STACK_DEPTH */

static uint64_t h_get_stackid(uint64_t ctx, uint64_t map, uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct bpf_map *m = P(map);
	uint32_t skip = flags & BPF_F_SKIP_FIELD_MASK, want = m->value_size / 8;
	uint64_t ips[STACK_MAX + 1];
	long n;

	if (flags & ~(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP |
		      BPF_F_REUSE_STACKID))
		return (uint64_t)-EINVAL;
	if (want + skip > STACK_MAX)
		want = STACK_MAX - skip;
	n = callchain(P(ctx), flags, ips, want + skip);
	if (n < 0)
		return (uint64_t)n;
	if ((uint64_t)n <= skip)
		return (uint64_t)-EFAULT;
	return (uint64_t)bpf_stackmap_insert(m, ips + skip, (uint32_t)(n - skip), flags);
}

static uint64_t h_get_stack(uint64_t ctx, uint64_t buf, uint64_t size, uint64_t flags, uint64_t a5)
{
	uint32_t skip = flags & BPF_F_SKIP_FIELD_MASK, want = (uint32_t)(size / 8);
	uint64_t ips[STACK_MAX + 1];
	long n, err = -EINVAL;

	if (flags & ~(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID))
		goto clear;
	if ((flags & BPF_F_USER_BUILD_ID) || size % 8)
		goto clear;
	if (want + skip > STACK_MAX)
		want = STACK_MAX - skip;
	n = callchain(P(ctx), flags, ips, want + skip);
	return bpf_stack_result(P(buf), size, ips, n, skip + 1, skip);
clear:
	memset(P(buf), 0, size);
	return (uint64_t)err;
}

static uint64_t h_prog_read_value(uint64_t ctx, uint64_t buf, uint64_t size, uint64_t a4, uint64_t a5)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	struct bpf_perf_event_data_kern *k = P(ctx);
	struct bpf_perf_event_value *v = P(buf);
	long err = -EINVAL;

	if (size == sizeof(*v)) {
		err = -ENOENT;
		if (ops && k->event)
			err = ops->event_read(k->event, v);
		if (!err)
			return 0;
	}
	memset(v, 0, size);
	return (uint64_t)err;
}

/*
 * perf_event_output, get_stackid and get_stack take registers from ctx, which in a perf_event
 * (or kprobe) program starts with them.  A tracepoint program's ctx holds a pointer to them in
 * its first word (perf/bpf_attach.c puts it there); a syscall program's holds none, and these
 * use the calling task's user registers, as Linux's take its caller's.  Either way the perf side
 * gets a ctx laid out as a perf_event program's.
 */
static struct bpf_perf_event_data_kern *regs_ctx(uint64_t ctx, bool tp,
						 struct bpf_perf_event_data_kern *k)
{
	uint64_t regs[34] = { 0 };
	const uint64_t *r = tp ? *(const uint64_t *const *)P(ctx) : NULL;

	memset(k, 0, sizeof(*k));
	if (tp && r)
		memcpy(regs, r, sizeof(regs));
	else if (!tp)
		ksvc_user_regs(regs);
	/* arm64's user_pt_regs is regs[34]; a host build (unit tests) has another layout */
	memcpy(&k->data.regs, regs, MIN(sizeof(k->data.regs), sizeof(regs)));
	return k;
}

#define REGS_VARIANT(name, fn, tp)                                                                 \
	static uint64_t name(uint64_t ctx, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)   \
	{                                                                                          \
		struct bpf_perf_event_data_kern k;                                                 \
                                                                                                   \
		return fn((uintptr_t)regs_ctx(ctx, tp, &k), a2, a3, a4, a5);                       \
	}
REGS_VARIANT(h_perf_output_tp, h_perf_output, true)
REGS_VARIANT(h_get_stackid_tp, h_get_stackid, true)
REGS_VARIANT(h_get_stack_tp, h_get_stack, true)
REGS_VARIANT(h_perf_output_cur, h_perf_output, false)
REGS_VARIANT(h_get_stackid_cur, h_get_stackid, false)
REGS_VARIANT(h_get_stack_cur, h_get_stack, false)

static uint64_t h_attach_cookie(uint64_t ctx, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ((struct bpf_perf_event_data_kern *)P(ctx))->cookie;
}

static uint64_t h_ringbuf_output(uint64_t map, uint64_t data, uint64_t size, uint64_t flags,
				 uint64_t a5)
{
	return (uint64_t)bpf_ringbuf_output(P(map), P(data), size, flags);
}

static uint64_t h_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags, uint64_t a4,
				  uint64_t a5)
{
	(void)a4, (void)a5;
	return (uintptr_t)bpf_ringbuf_reserve(P(map), size, flags);
}

static uint64_t h_ringbuf_submit(uint64_t data, uint64_t flags, uint64_t a3, uint64_t a4,
				 uint64_t a5)
{
	(void)a3, (void)a4, (void)a5;
	bpf_ringbuf_commit(P(data), flags, false);
	return 0;
}

static uint64_t h_ringbuf_discard(uint64_t data, uint64_t flags, uint64_t a3, uint64_t a4,
				  uint64_t a5)
{
	(void)a3, (void)a4, (void)a5;
	bpf_ringbuf_commit(P(data), flags, true);
	return 0;
}

static uint64_t h_ringbuf_query(uint64_t map, uint64_t flags, uint64_t a3, uint64_t a4,
				uint64_t a5)
{
	return bpf_ringbuf_query(P(map), flags);
}

/* ---- callbacks ---- */

#define BPF_MAX_LOOPS (8 * 1024 * 1024)
#define FOR_EACH_KEY_ON_STACK 64

/* bpf_loop: the callback with (index, ctx) until it returns 1; the runs it made. */
static uint64_t h_user_ringbuf_drain(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags,
				     uint64_t a5)
{
	return (uint64_t)bpf_user_ringbuf_drain(P(map), fn, ctx, flags);
}

static uint64_t h_loop(uint64_t nr, uint64_t fn, uint64_t ctx, uint64_t flags, uint64_t a5)
{
	uint32_t n = (uint32_t)nr, i;

	if (flags)
		return (uint64_t)-EINVAL;
	/* Linux inlines bpf_loop when flags is a known 0: its -E2BIG is then a 32-bit move */
	if (n > BPF_MAX_LOOPS)
		return (uint32_t)-E2BIG;
	for (i = 0; i < n; i++)
		if (bpf_callback_run(fn, i, ctx, 0, 0))
			return i + 1;
	return n;
}

/*
 * bpf_for_each_map_elem: the callback with (map, key, value, ctx) for each element in key
 * order until it returns 1; the elements visited.  Keys come from get_next_key (IRQ-safe);
 * at most max_entries visits, so deleting from the callback cannot loop forever.
 */
static uint64_t h_for_each(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags, uint64_t a5)
{
	struct bpf_map *m = P(map);
	uint8_t small[2][FOR_EACH_KEY_ON_STACK], *key[2] = { small[0], small[1] }, *big = NULL;
	uint64_t n = 0;
	int cur = 0;
	void *v;

	if (flags)
		return (uint64_t)-EINVAL;
	if (m->key_size > FOR_EACH_KEY_ON_STACK) {
		/* rare large keys: off the kernel stack, which nested callbacks share */
		big = ksvc_alloc(2 * (size_t)m->key_size);
		if (!big)
			return 0;
		key[0] = big;
		key[1] = big + m->key_size;
	}
	if (m->ops->get_next_key(m, NULL, key[cur]))
		goto out;
	while (n < m->max_entries) {
		v = m->ops->lookup(m, key[cur]);
		if (v) {
			n++;
			if (bpf_callback_run(fn, map, (uintptr_t)key[cur], (uintptr_t)v, ctx))
				break;
		}
		if (m->ops->get_next_key(m, key[cur], key[!cur]))
			break;
		cur = !cur;
	}
out:
	ksvc_free(big);
	return n;
}

/* ---- time, ids, the task ---- */

#define HZ 250 /* Debian's arm64 CONFIG_HZ */
#define INITIAL_JIFFIES ((uint64_t)(uint32_t)(-300 * HZ))

static uint64_t h_ktime_tai(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_clock_tai_ns();
}

static uint64_t h_jiffies64(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return INITIAL_JIFFIES + ksvc_clock_ns() / (1000000000 / HZ);
}

static uint64_t h_zero(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return 0; /* get_numa_node_id: one node */
}

/* The current task's cgroup v2 id (its cgroupfs directory's inode number; the root's is 1). */
static uint64_t h_cgroup_id(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_cgroup_current_id();
}

/* Its ancestor's at level (an int, as Linux's): itself at its own level, 0 past it. */
static uint64_t h_ancestor_cgroup_id(uint64_t level, uint64_t a2, uint64_t a3, uint64_t a4,
				     uint64_t a5)
{
	return ksvc_cgroup_current_ancestor_id((int32_t)level);
}

static uint64_t h_task_under_cgroup(uint64_t map, uint64_t idx, uint64_t a3, uint64_t a4,
				    uint64_t a5)
{
	return (uint64_t)bpf_cgroup_array_current_under(P(map), (uint32_t)idx);
}

static uint64_t h_current_task(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uintptr_t)ksvc_task_current(); /* get_current_task_btf: the verifier types it */
}

/* The initial pid namespace as stat(2) of /proc/self/ns/pid shows it on Linux (nsfs 0:4). */
#define PIDNS_INIT_DEV 4
#define PIDNS_INIT_INO 0xEFFFFFFCu

static uint64_t h_ns_pid_tgid(uint64_t dev, uint64_t ino, uint64_t buf, uint64_t size, uint64_t a5)
{
	struct bpf_pidns_info *info = P(buf);
	long err = -EINVAL;

	if (size != sizeof(*info) || (uint32_t)dev != dev)
		goto clear;
	if (dev != PIDNS_INIT_DEV || ino != PIDNS_INIT_INO)
		goto clear; /* not our namespace: -EINVAL too, as Linux */
	info->pid = (uint32_t)ksvc_current_tid();
	info->tgid = (uint32_t)ksvc_current_tgid();
	return 0;
clear:
	memset(P(buf), 0, size);
	return (uint64_t)err;
}

/* ---- legacy probe reads: the user or kernel half by address (arm64 TASK_SIZE, 48 bits) ---- */

#define USER_TOP (1ull << 48)

static uint64_t h_read_compat(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4, uint64_t a5)
{
	return (uint64_t)probe_read(P(dst), size, P(src), src < USER_TOP);
}

static uint64_t h_read_str_compat(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4,
				  uint64_t a5)
{
	return (uint64_t)probe_read_str(P(dst), size, P(src), src < USER_TOP);
}

/* bpf_probe_write_user: not from an interrupt (-EPERM, Linux's in_interrupt()). */
static uint64_t h_probe_write_user(uint64_t dst, uint64_t src, uint64_t size, uint64_t a4,
				   uint64_t a5)
{
	if (ksvc_in_irq() || ksvc_current_tgid() <= 0)
		return (uint64_t)-EPERM;
	return (uint64_t)(int64_t)ksvc_write_user_nofault(P(dst), P(src), size);
}

/* copy_from_user may sleep: only sleepable programs reach it (the verifier checks). */
static uint64_t h_copy_from_user(uint64_t dst, uint64_t size, uint64_t src, uint64_t a4,
				 uint64_t a5)
{
	if (!ksvc_copy_from_user(P(dst), P(src), size))
		return 0;
	memset(P(dst), 0, size);
	return (uint64_t)-EFAULT;
}

/* ---- signals ---- */

/*
 * The signal goes out from irq_work, as Linux defers it when interrupts are off, which they are
 * whenever a perf_event program runs on arm64 Linux (PMU interrupt, and software events too:
 * t_bpf_helpers sees -EBUSY there): one pending per CPU (-EBUSY while it is), to the task that
 * was running if it still is when the work runs (else dropped).
 */
#define SIG_CPUS 64

static struct sig_work {
	struct ksvc_irq_work w;
	_Atomic int busy;
	int tid, sig;
	bool thread;
} sig_works[SIG_CPUS];

static void sig_work_fn(struct ksvc_irq_work *w)
{
	struct sig_work *s = (struct sig_work *)w;

	if (ksvc_current_tid() == s->tid)
		ksvc_signal_current(s->sig, s->thread);
	atomic_store(&s->busy, 0);
}

static long send_signal(uint32_t sig, bool thread)
{
	unsigned int cpu = ksvc_cpu_id();
	struct sig_work *s;
	long err = ksvc_signal_current(0, thread); /* -EPERM: a kernel thread, exiting, init */

	if (err)
		return err;
	if (sig > 64)
		return -EINVAL;
	if (cpu >= SIG_CPUS)
		return ksvc_signal_current((int)sig, thread);
	s = &sig_works[cpu];
	if (atomic_exchange(&s->busy, 1))
		return -EBUSY;
	s->w.fn = sig_work_fn;
	s->tid = ksvc_current_tid();
	s->sig = (int)sig;
	s->thread = thread;
	ksvc_irq_work_queue(&s->w);
	return 0;
}

static uint64_t h_send_signal(uint64_t sig, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uint64_t)send_signal((uint32_t)sig, false);
}

static uint64_t h_send_signal_thread(uint64_t sig, uint64_t a2, uint64_t a3, uint64_t a4,
				     uint64_t a5)
{
	return (uint64_t)send_signal((uint32_t)sig, true);
}

/* ---- perf: counters and branch records ---- */

/* bpf_perf_event_read: the counter of the event at index, or a negative errno. */
static uint64_t h_perf_read(uint64_t map, uint64_t flags, uint64_t a3, uint64_t a4, uint64_t a5)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	struct bpf_perf_event_value v;
	void *ev;
	int err = perf_array_pick(P(map), flags, &ev);

	if (err)
		return (uint64_t)(int64_t)err;
	err = ops->event_read(ev, &v);
	return err ? (uint64_t)(int64_t)err : v.counter;
}

/* No branch records on arm64 in Linux 6.1 (x86 LBR only): -ENOENT, the buffer untouched. */
static uint64_t h_enoent(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uint64_t)-ENOENT;
}

/*
 * bpf_tail_call as a plain call: only the verifier-free test path makes one (a verified
 * program's call is decoded as the interpreter's tail call).  With no program array it finds
 * nothing, so it falls through as Linux's does on a miss.
 */
static uint64_t h_tail_call_miss(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return 0;
}

/*
 * bpf_spin_lock / bpf_spin_unlock on the 4-byte struct bpf_spin_lock of a map value (the
 * verifier proved the pointer, one lock at a time and no call in between): interrupts stay
 * masked on this CPU while it is held, as Linux's __bpf_spin_lock_irqsave; the flags wait
 * in a per-CPU slot for the unlock.
 */
#define LOCK_CPUS 256
static unsigned long lock_irq_flags[LOCK_CPUS]; /* (this CPU, interrupts masked) */

static uint64_t h_spin_lock(uint64_t lock, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	_Atomic uint32_t *l = (_Atomic uint32_t *)(uintptr_t)lock;
	unsigned long flags = ksvc_irq_save();
	uint32_t zero = 0;

	while (!atomic_compare_exchange_weak_explicit(l, &zero, 1, memory_order_acquire,
						      memory_order_relaxed)) {
		zero = 0;
		arch_cpu_relax();
	}
	lock_irq_flags[ksvc_cpu_id() % LOCK_CPUS] = flags;
	return 0;
}

static uint64_t h_spin_unlock(uint64_t lock, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	unsigned long flags = lock_irq_flags[ksvc_cpu_id() % LOCK_CPUS];

	atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)lock, 0, memory_order_release);
	ksvc_irq_restore(flags);
	return 0;
}

/* bpf_get_func_ip in a KPROBE program (ctx unused): the kprobe's function, 0 on a uprobe or
 * a probe inside a function, as Linux 6.1's bpf_get_func_ip_kprobe */
static uint64_t h_func_ip_kprobe(uint64_t ctx, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ksvc_kprobe_running_addr();
}

/* bpf_kptr_xchg: swap a referenced kptr.  The verifier lets no call through here, as no map
 * has a referenced kptr (verify_kptr.c), but the exchange is what Linux's is. */
static uint64_t h_kptr_xchg(uint64_t value, uint64_t ptr, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return atomic_exchange((_Atomic uint64_t *)P(value), ptr);
}

/* ---- the table ---- */

#define H(id, f, r, gpl, av, ...)                                                                  \
	[BPF_FUNC_##id] = { .name = "bpf_" #id, .fn = f, .ret = r, .gpl_only = gpl, .avail = av,          \
			    .args = { __VA_ARGS__ } }

const struct bpf_helper bpf_helpers[__BPF_FUNC_MAX_ID] = {
	H(map_lookup_elem, h_map_lookup, RET_MAP_VALUE_OR_NULL, false, AV_BASE, ARG_CONST_MAP,
	  ARG_MAP_KEY),
	H(map_update_elem, h_map_update, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MAP_KEY,
	  ARG_MAP_VALUE, ARG_ANY),
	H(map_delete_elem, h_map_delete, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MAP_KEY),
	H(ktime_get_ns, h_ktime, RET_INTEGER, false, AV_BASE, 0),
	H(tail_call, h_tail_call_miss, RET_VOID, false, AV_BASE, ARG_CTX, ARG_CONST_MAP, ARG_ANY),
	/* the format arguments are not checked: any register, as in Linux */
	H(trace_printk, h_trace_printk, RET_INTEGER, true, AV_BASE, ARG_MEM, ARG_SIZE_NZ),
	H(get_prandom_u32, h_prandom, RET_INTEGER, false, AV_BASE, 0),
	H(get_smp_processor_id, h_cpu, RET_INTEGER, false, AV_BASE, 0),
	H(get_current_pid_tgid, h_pid_tgid, RET_INTEGER, false, AV_TRACING, 0),
	H(get_current_uid_gid, h_uid_gid, RET_INTEGER, false, AV_TRACING, 0),
	H(get_current_comm, h_comm, RET_INTEGER, false, AV_TRACING, ARG_MEM_UNINIT, ARG_SIZE_NZ),
	H(perf_event_output, h_perf_output, RET_INTEGER, true, AV_BASE, ARG_CTX, ARG_CONST_MAP,
	  ARG_ANY, ARG_MEM, ARG_SIZE),
	H(perf_event_read_value, h_perf_read_value, RET_INTEGER, true, AV_TRACING, ARG_CONST_MAP,
	  ARG_ANY, ARG_MEM_UNINIT, ARG_SIZE),
	H(get_stackid, h_get_stackid, RET_INTEGER, true, AV_TRACING, ARG_CTX, ARG_CONST_MAP, ARG_ANY),
	H(get_stack, h_get_stack, RET_INTEGER, true, AV_TRACING, ARG_CTX, ARG_MEM_UNINIT, ARG_SIZE,
	  ARG_ANY),
	H(perf_prog_read_value, h_prog_read_value, RET_INTEGER, true, AV_PERF, ARG_CTX,
	  ARG_MEM_UNINIT, ARG_SIZE),
	H(get_attach_cookie, h_attach_cookie, RET_INTEGER, false, AV_PERF, ARG_CTX),
	H(ringbuf_output, h_ringbuf_output, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MEM,
	  ARG_SIZE, ARG_ANY),
	H(ringbuf_query, h_ringbuf_query, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_ANY),
	H(ringbuf_reserve, h_ringbuf_reserve, RET_RINGBUF_MEM_OR_NULL, false, AV_BASE, ARG_CONST_MAP,
	  ARG_ALLOC_SIZE, ARG_ANY),
	H(ringbuf_submit, h_ringbuf_submit, RET_VOID, false, AV_BASE, ARG_RINGBUF_RELEASE, ARG_ANY),
	H(ringbuf_discard, h_ringbuf_discard, RET_VOID, false, AV_BASE, ARG_RINGBUF_RELEASE, ARG_ANY),
	H(probe_read_user, h_read_user, RET_INTEGER, true, AV_BASE, ARG_MEM_UNINIT, ARG_SIZE, ARG_ANY),
	H(probe_read_kernel, h_read_kernel, RET_INTEGER, true, AV_BASE, ARG_MEM_UNINIT, ARG_SIZE,
	  ARG_ANY),
	H(probe_read_user_str, h_read_user_str, RET_INTEGER, true, AV_BASE, ARG_MEM_UNINIT, ARG_SIZE,
	  ARG_ANY),
	H(probe_read_kernel_str, h_read_kernel_str, RET_INTEGER, true, AV_BASE, ARG_MEM_UNINIT,
	  ARG_SIZE, ARG_ANY),
	[BPF_FUNC_loop] = { .name = "bpf_loop", .fn = h_loop, .ret = RET_INTEGER, .cb = CB_LOOP,
			    .args = { ARG_ANY, ARG_FUNC, ARG_STACK_OR_NULL, ARG_ANY } },
	[BPF_FUNC_for_each_map_elem] = { .name = "bpf_for_each_map_elem", .fn = h_for_each,
					 .ret = RET_INTEGER, .cb = CB_MAP_ELEM,
					 .args = { ARG_CONST_MAP, ARG_FUNC, ARG_STACK_OR_NULL,
						   ARG_ANY } },
	H(probe_read, h_read_compat, RET_INTEGER, true, AV_TRACING, ARG_MEM_UNINIT, ARG_SIZE, ARG_ANY),
	H(probe_read_str, h_read_str_compat, RET_INTEGER, true, AV_TRACING, ARG_MEM_UNINIT, ARG_SIZE,
	  ARG_ANY),
	H(ktime_get_boot_ns, h_ktime, RET_INTEGER, false, AV_BASE, 0), /* no suspend: = monotonic */
	H(ktime_get_tai_ns, h_ktime_tai, RET_INTEGER, false, AV_BASE, 0),
	H(jiffies64, h_jiffies64, RET_INTEGER, false, AV_BASE, 0),
	H(get_numa_node_id, h_zero, RET_INTEGER, false, AV_BASE, 0),
	H(get_current_cgroup_id, h_cgroup_id, RET_INTEGER, false, AV_TRACING, 0),
	H(get_current_ancestor_cgroup_id, h_ancestor_cgroup_id, RET_INTEGER, false, AV_TRACING, ARG_ANY),
	/* a BPF_MAP_TYPE_CGROUP_ARRAY only (bpf_map_func_ok) */
	H(current_task_under_cgroup, h_task_under_cgroup, RET_INTEGER, false, AV_TRACING,
	  ARG_CONST_MAP, ARG_ANY),
	H(get_current_task, h_current_task, RET_INTEGER, true, AV_BASE, 0),
	H(get_current_task_btf, h_current_task, RET_BTF_ID, true, AV_BASE, 0),
	H(get_ns_current_pid_tgid, h_ns_pid_tgid, RET_INTEGER, false, AV_TRACING, ARG_ANY, ARG_ANY,
	  ARG_MEM_UNINIT, ARG_SIZE_NZ),
	H(strncmp, bpf_h_strncmp, RET_INTEGER, false, AV_BASE, ARG_MEM, ARG_SIZE_NZ, ARG_CONST_STR_RO),
	H(strtol, bpf_h_strtol, RET_INTEGER, false, AV_BASE, ARG_MEM, ARG_SIZE_NZ, ARG_ANY, ARG_PTR_TO_LONG),
	H(strtoul, bpf_h_strtoul, RET_INTEGER, false, AV_BASE, ARG_MEM, ARG_SIZE_NZ, ARG_ANY,
	  ARG_PTR_TO_LONG),
	H(perf_event_read, h_perf_read, RET_INTEGER, true, AV_TRACING, ARG_CONST_MAP, ARG_ANY),
	H(read_branch_records, h_enoent, RET_INTEGER, true, AV_PERF, ARG_CTX, ARG_MEM_RO_OR_NULL,
	  ARG_SIZE, ARG_ANY),
	H(get_branch_snapshot, h_enoent, RET_INTEGER, true, AV_TRACING, ARG_MEM_UNINIT, ARG_SIZE, ARG_ANY),
	/* check_get_func_ip: kprobe and tracing programs only (ENOTSUPP for perf_event); tracing
	 * ones do not load here, so every call is a KPROBE program's */
	H(get_func_ip, h_func_ip_kprobe, RET_INTEGER, true, AV_TRACING, ARG_CTX),
	/* snprintf_btf: Linux's btf_show text of a kernel-typed value (btf_show.c) */
	H(snprintf_btf, bpf_h_snprintf_btf, RET_INTEGER, false, AV_BASE, ARG_MEM, ARG_SIZE_NZ, ARG_MEM,
	  ARG_SIZE_NZ, ARG_ANY),
	[BPF_FUNC_copy_from_user] = { .name = "bpf_copy_from_user", .avail = AV_TRACING, .fn = h_copy_from_user,
				      .ret = RET_INTEGER, .might_sleep = true,
				      .args = { ARG_MEM_UNINIT, ARG_SIZE, ARG_ANY } },
	[BPF_FUNC_copy_from_user_task] = { .name = "bpf_copy_from_user_task", .avail = AV_TRACING,
					   .fn = bpf_h_copy_from_user_task, .ret = RET_INTEGER,
					   .might_sleep = true, .gpl_only = true,
					   .args = { ARG_MEM_UNINIT, ARG_SIZE, ARG_ANY, ARG_TASK,
						     ARG_ANY } },
	H(get_task_stack, bpf_h_get_task_stack, RET_INTEGER, false, AV_TRACING, ARG_TASK, ARG_MEM_UNINIT,
	  ARG_SIZE, ARG_ANY),
	H(task_pt_regs, bpf_h_task_pt_regs, RET_BTF_ID, true, AV_BASE, ARG_TASK),
	[BPF_FUNC_find_vma] = { .name = "bpf_find_vma", .avail = AV_TRACING, .fn = bpf_h_find_vma, .ret = RET_INTEGER,
				.cb = CB_FIND_VMA,
				.args = { ARG_TASK, ARG_ANY, ARG_FUNC, ARG_STACK_OR_NULL,
					  ARG_ANY } },
	H(per_cpu_ptr, bpf_h_per_cpu_ptr, RET_PERCPU_OBJ_OR_NULL, false, AV_BASE, ARG_PERCPU_BTF,
	  ARG_ANY),
	H(this_cpu_ptr, bpf_h_this_cpu_ptr, RET_PERCPU_OBJ, false, AV_BASE, ARG_PERCPU_BTF),
	/* BPF_MAP_TYPE_TASK_STORAGE (map_task_storage.c) needs BTF to be created, on Linux too */
	H(task_storage_get, bpf_h_task_storage_get, RET_MAP_VALUE_OR_NULL, false, AV_TRACING,
	  ARG_CONST_MAP, ARG_TASK, ARG_MAP_VALUE_OR_NULL, ARG_ANY),
	H(task_storage_delete, bpf_h_task_storage_delete, RET_INTEGER, false, AV_TRACING,
	  ARG_CONST_MAP, ARG_TASK),
	/* bpf_spin_lock, bpf_timer and kptrs live in map values that BTF describes */
	H(spin_lock, h_spin_lock, RET_VOID, false, AV_BASE, ARG_MAP_VALUE_BTF),
	H(spin_unlock, h_spin_unlock, RET_VOID, false, AV_BASE, ARG_MAP_VALUE_BTF),
	/* helpers_timer.c; the callback runs later, from the timer (set_timer_callback_state) */
	H(timer_init, bpf_h_timer_init, RET_INTEGER, true, AV_BASE, ARG_MAP_VALUE_BTF, ARG_CONST_MAP,
	  ARG_ANY),
	[BPF_FUNC_timer_set_callback] = { .name = "bpf_timer_set_callback", .fn = bpf_h_timer_set_callback,
					  .ret = RET_INTEGER, .gpl_only = true, .cb = CB_TIMER,
					  .args = { ARG_MAP_VALUE_BTF, ARG_FUNC } },
	H(timer_start, bpf_h_timer_start, RET_INTEGER, true, AV_BASE, ARG_MAP_VALUE_BTF, ARG_ANY,
	  ARG_ANY),
	H(timer_cancel, bpf_h_timer_cancel, RET_INTEGER, true, AV_BASE, ARG_MAP_VALUE_BTF),
	H(kptr_xchg, h_kptr_xchg, RET_INTEGER, false, AV_BASE, ARG_MAP_VALUE_BTF, ARG_ANY),
	/* the format is checked at load too (verify_mem.c) */
	H(snprintf, bpf_h_snprintf, RET_INTEGER, false, AV_BASE, ARG_MEM_RO_OR_NULL, ARG_SIZE,
	  ARG_CONST_STR_RO, ARG_MEM_RO_OR_NULL, ARG_SIZE),
	H(probe_write_user, h_probe_write_user, RET_INTEGER, true, AV_TRACING, ARG_ANY, ARG_MEM,
	  ARG_SIZE_NZ),
	H(map_lookup_percpu_elem, h_map_lookup_cpu, RET_MAP_VALUE_OR_NULL, false, AV_BASE, ARG_CONST_MAP,
	  ARG_MAP_KEY, ARG_ANY),
	H(map_push_elem, h_map_push, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MAP_VALUE, ARG_ANY),
	H(map_pop_elem, h_map_pop, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MAP_VALUE_UNINIT),
	H(map_peek_elem, h_map_peek, RET_INTEGER, false, AV_BASE, ARG_CONST_MAP, ARG_MAP_VALUE_UNINIT),
	H(send_signal, h_send_signal, RET_INTEGER, false, AV_TRACING, ARG_ANY),
	H(send_signal_thread, h_send_signal_thread, RET_INTEGER, false, AV_TRACING, ARG_ANY),
	/* dynptrs: Linux 6.1 takes dynptr_from_mem's memory from map values only (verify_mem.c) */
	H(dynptr_from_mem, bpf_h_dynptr_from_mem, RET_INTEGER, false, AV_BASE, ARG_MEM_UNINIT,
	  ARG_SIZE, ARG_ANY, ARG_DYNPTR_UNINIT_LOCAL),
	H(dynptr_read, bpf_h_dynptr_read, RET_INTEGER, false, AV_BASE, ARG_MEM_UNINIT, ARG_SIZE,
	  ARG_DYNPTR, ARG_ANY, ARG_ANY),
	H(dynptr_write, bpf_h_dynptr_write, RET_INTEGER, false, AV_BASE, ARG_DYNPTR, ARG_ANY, ARG_MEM,
	  ARG_SIZE, ARG_ANY),
	H(dynptr_data, bpf_h_dynptr_data, RET_DYNPTR_MEM_OR_NULL, false, AV_BASE, ARG_DYNPTR, ARG_ANY,
	  ARG_ALLOC_SIZE),
	H(ringbuf_reserve_dynptr, bpf_h_ringbuf_reserve_dynptr, RET_INTEGER, false, AV_BASE,
	  ARG_CONST_MAP, ARG_ANY, ARG_ANY, ARG_DYNPTR_UNINIT_RINGBUF),
	H(ringbuf_submit_dynptr, bpf_h_ringbuf_submit_dynptr, RET_VOID, false, AV_BASE,
	  ARG_DYNPTR_RINGBUF_RELEASE, ARG_ANY),
	H(ringbuf_discard_dynptr, bpf_h_ringbuf_discard_dynptr, RET_VOID, false, AV_BASE,
	  ARG_DYNPTR_RINGBUF_RELEASE, ARG_ANY),
	[BPF_FUNC_user_ringbuf_drain] = { .name = "bpf_user_ringbuf_drain", .fn = h_user_ringbuf_drain,
					  .ret = RET_INTEGER, .cb = CB_USER_RINGBUF,
					  .args = { ARG_CONST_MAP, ARG_FUNC, ARG_STACK_OR_NULL,
						    ARG_ANY } },
	H(trace_vprintk, bpf_h_trace_vprintk, RET_INTEGER, true, AV_BASE, ARG_MEM, ARG_SIZE_NZ,
	  ARG_MEM_RO_OR_NULL, ARG_SIZE),
};

const struct bpf_helper *bpf_helper_get(int32_t id)
{
	if (id <= 0 || id >= __BPF_FUNC_MAX_ID || !bpf_helpers[id].fn)
		return NULL;
	return &bpf_helpers[id];
}

bool bpf_helper_allowed(const struct bpf_helper *h, uint32_t prog_type)
{
	switch (h->avail) {
	case AV_TRACING:
		return prog_type == BPF_PROG_TYPE_KPROBE || prog_type == BPF_PROG_TYPE_TRACEPOINT ||
		       prog_type == BPF_PROG_TYPE_PERF_EVENT ||
		       prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT || prog_type == BPF_PROG_TYPE_SYSCALL;
	case AV_PERF:
		return prog_type == BPF_PROG_TYPE_PERF_EVENT;
	default:
		return true;
	}
}

bpf_helper_fn bpf_helper_impl(int32_t id, uint32_t prog_type)
{
	const struct bpf_helper *h = bpf_helper_get(id);
	bool tp = prog_type == BPF_PROG_TYPE_TRACEPOINT, cur = prog_type == BPF_PROG_TYPE_SYSCALL;

	if (!h)
		return NULL;
	if (tp || cur) {
		switch (id) {
		case BPF_FUNC_perf_event_output:
			return tp ? h_perf_output_tp : h_perf_output_cur;
		case BPF_FUNC_get_stackid:
			return tp ? h_get_stackid_tp : h_get_stackid_cur;
		case BPF_FUNC_get_stack:
			return tp ? h_get_stack_tp : h_get_stack_cur;
		}
	}
	return h->fn;
}
