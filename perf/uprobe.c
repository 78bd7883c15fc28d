/*
 * uprobe.c - the uprobe PMU ("uprobe" in sysfs, type 7 as Linux's first dynamic types give
 * it): config1 points to the path of a file, config2 is the file offset of the instruction
 * to probe, config:0 asks for the function's return instead of its entry
 * (format/retprobe), config:32-63 is a reference counter offset (format/ref_ctr_offset).
 * Each hit by the task or on the CPU the event watches counts 1 and, sampling, writes a
 * PERF_RECORD_SAMPLE whose PERF_SAMPLE_RAW is the uprobe trace record.  The probes
 * themselves (the BRK in the process's text, the out-of-line step) are kernel/uprobes.c's,
 * reached through ksvc_uprobe_register; hits come back through perf_uprobe_hit.
 *
 * ABI: Linux 6.1 kernel/events/core.c perf_uprobe_event_init (ENOENT for other types,
 * EOPNOTSUPP with a branch stack), kernel/trace/trace_event_perf.c perf_uprobe_init (EINVAL
 * without a path or with an empty one, E2BIG for one longer than PATH_MAX, EFAULT), then the
 * path lookup's errno (ENOENT...), EINVAL for a file that is not regular, an offset past its
 * end or not 4-aligned (__uprobe_register); trace_uprobe.c __uprobe_perf_func: the raw
 * record is struct uprobe_trace_entry_head (the 8-byte common header, then the probe's
 * address, or the function's and the return address for a return probe) padded so that
 * the record with its u32 size ends 8-aligned; freq mode starts at a period of 1 as for
 * tracepoints.  A BPF_PROG_TYPE_KPROBE program on the event (bpf_attach.c) sees the hit's
 * registers as struct pt_regs and drops it by returning 0.
 *
 * An inherited event shares its parent's probe (Linux reads the path again from the forking
 * task's memory, and fails the fork with EFAULT when it is not there).
 * config:32-63, ref_ctr_offset, is the file offset of the probe's USDT semaphore
 * (kernel/uprobes.c raises it in each process while the probe is in its text).
 */
#include <linux/perf_event.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "perf_internal.h"

#define UPROBE_PATH_MAX 4096 /* PATH_MAX */
#define UPROBE_RAW_MAX 32

static void uprobe_destroy(struct perf_event *e)
{
	perf_tp_bpf_release(e); /* its program off the probe before the probe goes */
	if (e->hw.uprobe)
		ksvc_uprobe_unregister(e->hw.uprobe, e->attr.config & 1);
	e->hw.uprobe = NULL;
}

static int uprobe_event_init(struct perf_event *e)
{
	bool ret = e->attr.config & 1;
	char *path;
	long n;
	int err;

	if (e->attr.type != PERF_TYPE_UPROBE)
		return -ENOENT;
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if (e->hw.uprobe) {
		/* inherited: one more registration of the parent's probe */
		ksvc_uprobe_dup(e->hw.uprobe, ret);
		goto done;
	}
	if (!e->attr.config1)
		return -EINVAL;
	path = ksvc_alloc(UPROBE_PATH_MAX);
	if (!path)
		return -ENOMEM;
	n = ksvc_strncpy_from_user(path, (const void *)(uintptr_t)e->attr.config1, UPROBE_PATH_MAX);
	if (n == -ENAMETOOLONG)
		err = -E2BIG; /* strndup_user's EINVAL, which perf_uprobe_init turns into E2BIG */
	else if (n < 0)
		err = (int)n;
	else if (!path[0])
		err = -EINVAL;
	else
		err = ksvc_uprobe_register(path, e->attr.config2, e->attr.config >> 32, ret,
					   &e->hw.uprobe);
	ksvc_free(path);
	if (err)
		return err;
done:
	if (e->attr.freq && e->attr.sample_freq)
		e->hw.sample_period = e->hw.last_period = 1;
	e->destroy = uprobe_destroy;
	return 0;
}

void perf_probe_start(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = 0;
}

void perf_probe_stop(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = PERF_HES_STOPPED;
}

int perf_probe_add(struct perf_event *e, int flags)
{
	e->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		perf_probe_start(e, flags);
	return 0;
}

void perf_probe_read(struct perf_event *e)
{
	(void)e; /* the count is e->count itself */
}

static struct perf_pmu uprobe_pmu = {
	.name = "uprobe",
	.caps = PERF_PMU_CAP_SOFTWARE | PERF_PMU_CAP_NO_NMI,
	.event_init = uprobe_event_init,
	.add = perf_probe_add,
	.del = perf_probe_stop,
	.start = perf_probe_start,
	.stop = perf_probe_stop,
	.read = perf_probe_read,
};

struct perf_pmu *perf_uprobe_pmu(void)
{
	return &uprobe_pmu;
}

/* ---- hits (of uprobes and kprobes: kprobe.c calls perf_probe_event) ---- */

#define PROBE_DROPPED_MAX 64 /* bpf_attach.c's program table */

struct probe_hit {
	const struct perf_pmu *pmu;
	const void *probe; /* hw.uprobe or hw.kprobe */
	bool ret;
	struct perf_tp_hit tp; /* the raw record and the registers, as a tracepoint's */
	const struct perf_event *dropped[PROBE_DROPPED_MAX]; /* their programs returned 0 */
	int nr_dropped;
};

static bool dropped(const struct probe_hit *h, const struct perf_event *e)
{
	for (int i = 0; i < h->nr_dropped; i++)
		if (h->dropped[i] == e)
			return true;
	return false;
}

static void hit_locked(struct perf_context *ctx, const void *arg)
{
	const struct probe_hit *h = arg;
	struct list_node *it;

	spin_assert_held(&ctx->sched.lock);
	list_for_each(it, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(it, struct perf_event_core, event_entry));
		const void *probe = e->pmu == &uprobe_pmu ? (const void *)e->hw.uprobe
							  : (const void *)e->hw.kprobe;

		if (e->pmu != h->pmu || probe != h->probe || (bool)(e->attr.config & 1) != h->ret)
			continue;
		if (e->state != PERF_EVENT_STATE_ACTIVE || (e->hw.state & PERF_HES_STOPPED) ||
		    dropped(h, e) || !perf_tp_filter_ok(e, &h->tp))
			continue;
		perf_tp_count_one(e, &h->tp);
	}
}

void perf_probe_event(const struct perf_pmu *pmu, const void *probe, bool ret,
		      const uint64_t *regs, bool user, uint64_t func)
{
	uint8_t raw[UPROBE_RAW_MAX] = { 0 };
	uint64_t ip[2] = { ret ? func : regs[32], regs[32] };
	int32_t pid = ksvc_current_tid();
	/* the record and its u32 size end 8-aligned: 20 bytes, 28 for a return */
	uint32_t size = ret ? 28 : 20;

	/* struct trace_entry: type (0: a perf-local probe has no trace event id), flags
	 * (TRACE_FLAG_IRQS_OFF for a kprobe, whose handler runs with interrupts masked) and
	 * preempt_count 0, pid; then uprobe_/kprobe_trace_entry_head's addresses */
	raw[2] = user ? 0 : 1;
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 8, ip, ret ? 16 : 8);
	struct probe_hit h = { pmu, probe, ret, { 0, raw, size, regs, user }, { 0 }, 0 };

	h.nr_dropped = perf_probe_bpf_run(probe, ret, regs, h.dropped, PROBE_DROPPED_MAX);
	if (h.nr_dropped < 0)
		return; /* a program already runs on this CPU, or this CPU holds the table */
	perf_each_current_ctx(hit_locked, &h);
}

void perf_uprobe_hit(struct ksvc_uprobe *u, const uint64_t *regs, bool ret, uint64_t func)
{
	perf_probe_event(&uprobe_pmu, u, ret, regs, true, func);
}
