/*
 * tp.c - the tracepoint PMU (PERF_TYPE_TRACEPOINT): config is a tracepoint's id (as tracefs's
 * events/<system>/<event>/id shows it).  An event counts each hit of its tracepoint on the
 * task or CPU it watches and, sampling, writes PERF_RECORD_SAMPLEs whose PERF_SAMPLE_RAW is
 * the tracepoint's record.  The kernel's hooks hand each hit to perf_tp_event (ctx.c), which
 * walks the running task's and the CPU's contexts as perf_sw_event does.  While an event is
 * on a CPU it holds a use of its tracepoint (ksvc_trace_use), which is what turns the
 * kernel's hook on.
 *
 * ABI: Linux 6.1 kernel/events/core.c perf_tp_event_init (ENOENT for other types, EOPNOTSUPP
 * with a branch stack), kernel/trace/trace_event_perf.c perf_trace_init (EINVAL for an
 * unknown id), perf_tp_event / perf_tp_event_match (exclude_kernel drops hits whose
 * registers are kernel ones: every event but the syscalls:* ones, which carry the task's user
 * registers; exclude_user is not looked at), one sample per elapsed period; freq mode starts
 * at a period of 1.
 * BPF_PROG_TYPE_TRACEPOINT programs (SET_BPF, BPF_LINK_CREATE) run per tracepoint hit before
 * any event counts it (bpf_attach.c, perf_tp_bpf_run).
 * PERF_EVENT_IOC_SET_FILTER (perf_event_set_filter, ftrace_profile_set_filter): the string is
 * copied first (strndup_user of a page: EFAULT, EINVAL), then only tracepoint, kprobe and
 * uprobe events take one (EINVAL), once (EEXIST); it is tracefs's filter language
 * (trace/filter.c through the seam; a kprobe or uprobe event knows only the common and generic
 * fields, as Linux's perf-local probes) and drops hits before they count or sample
 * (perf_tp_filter_match); an inherited event uses its parent's.
 */
#include <linux/perf_event.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include "perf_internal.h"

static void tp_destroy(struct perf_event *e)
{
	perf_tp_bpf_release(e);
	ksvc_trace_event_close(e->attr.config);
}

static int tp_event_init(struct perf_event *e)
{
	if (e->attr.type != PERF_TYPE_TRACEPOINT)
		return -ENOENT;
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	int err = ksvc_trace_event_open(e->attr.config);

	if (err)
		return err;
	if (e->attr.freq && e->attr.sample_freq)
		e->hw.sample_period = e->hw.last_period = 1;
	e->destroy = tp_destroy;
	return 0;
}

static void tp_start(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = 0;
}

static void tp_stop(struct perf_event *e, int flags)
{
	(void)flags;
	e->hw.state = PERF_HES_STOPPED;
}

static int tp_add(struct perf_event *e, int flags)
{
	e->hw.state = PERF_HES_STOPPED;
	ksvc_trace_use(e->attr.config, 1);
	if (flags & PERF_EF_START)
		tp_start(e, flags);
	return 0;
}

static void tp_del(struct perf_event *e, int flags)
{
	tp_stop(e, flags);
	ksvc_trace_use(e->attr.config, -1);
}

static void tp_read(struct perf_event *e)
{
	(void)e; /* the count is e->count itself */
}

static struct perf_pmu tp_pmu = {
	.name = "tracepoint",
	.caps = PERF_PMU_CAP_SOFTWARE | PERF_PMU_CAP_NO_NMI,
	.event_init = tp_event_init,
	.add = tp_add,
	.del = tp_del,
	.start = tp_start,
	.stop = tp_stop,
	.read = tp_read,
};

struct perf_pmu *perf_tp_pmu(void)
{
	return &tp_pmu;
}

void perf_tp_count_locked(struct perf_context *ctx, const struct perf_tp_hit *hit)
{
	spin_assert_held(&ctx->sched.lock);
	struct list_node *it;

	list_for_each(it, &ctx->events) {
		struct perf_event *e = perf_event_of(list_entry(it, struct perf_event_core, event_entry));

		if (e->attr.type != PERF_TYPE_TRACEPOINT || e->attr.config != hit->id ||
		    e->state != PERF_EVENT_STATE_ACTIVE || (e->hw.state & PERF_HES_STOPPED))
			continue;
		if (e->attr.exclude_kernel && !hit->user)
			continue; /* perf_tp_event_match: exclude_user is not looked at */
		if (!perf_tp_filter_ok(e, hit))
			continue;
		perf_tp_count_one(e, hit);
	}
}

/* ---- PERF_EVENT_IOC_SET_FILTER ---- */

int perf_tp_set_filter(struct perf_event *e, const void *uarg)
{
	struct trace_filter *f = NULL, *none = NULL;
	char *s = ksvc_alloc(KSVC_PAGE_SIZE);
	long n;
	int err, probe = 0;

	if (!s)
		return -ENOMEM;
	/* strndup_user(arg, PAGE_SIZE) first: EFAULT, EINVAL for a longer string */
	n = ksvc_strncpy_from_user(s, uarg, KSVC_PAGE_SIZE);
	err = n == -ENAMETOOLONG ? -EINVAL : n < 0 ? (int)n : 0;
	if (err)
		goto out;
	/* perf_event_is_tracing: tracepoints, kprobe and uprobe PMU events */
	if (e->pmu == perf_uprobe_pmu() || e->pmu == perf_kprobe_pmu())
		probe = 1 + (int)(e->attr.config & 1);
	else if (e->pmu != &tp_pmu) {
		err = -EINVAL;
		goto out;
	}
	/* ftrace_profile_set_filter: one filter per event, never replaced */
	err = -EEXIST;
	if (atomic_load(&e->tp_filter))
		goto out;
	err = ksvc_trace_filter_new(probe ? 0 : e->attr.config, probe, s, &f);
	if (err)
		goto out;
	if (!atomic_compare_exchange_strong(&e->tp_filter, &none, f)) {
		ksvc_trace_filter_free(f);
		err = -EEXIST;
	}
out:
	ksvc_free(s);
	return err;
}

bool perf_tp_filter_ok(struct perf_event *e, const struct perf_tp_hit *hit)
{
	struct perf_event *top = perf_core(e)->parent ? perf_core(e)->parent : e;
	const struct trace_filter *f = atomic_load_explicit(&top->tp_filter, memory_order_acquire);

	return !f || ksvc_trace_filter_match(f, hit->rec, hit->size);
}

void perf_tp_count_one(struct perf_event *e, const struct perf_tp_hit *hit)
{
	atomic_fetch_add(&e->count, 1);
	if (e->attr.sample_period) {
		bool more = false;

		e->hw.period_left -= 1;
		while (e->hw.period_left <= 0) {
			e->hw.period_left += (int64_t)e->hw.sample_period;
			perf_tp_sample(e, hit, more);
			more = true;
		}
	}
}
