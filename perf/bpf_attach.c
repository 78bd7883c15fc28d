/*
 * bpf_attach.c - BPF_PROG_TYPE_PERF_EVENT programs on perf events: attach
 * (PERF_EVENT_IOC_SET_BPF and BPF_LINK_CREATE through struct bpf_perf_ops), the overflow-path
 * filter (Linux's bpf_overflow_handler: the program returning 0 drops the sample), and the
 * hooks the bpf/ helpers reach perf through (event fds for PERF_EVENT_ARRAY maps,
 * bpf_perf_event_output into a bpf-output event, perf_prog_read_value, get_stackid/get_stack).
 *
 * Linux 6.1 is the reference: one program per event (EEXIST), only PERF_EVENT programs
 * (EINVAL), inherited children share the parent's program, a per-CPU recursion guard drops a
 * sample whose overflow happens while a program already runs on that CPU.
 *
 * Tracepoint events take BPF_PROG_TYPE_TRACEPOINT programs only (perf_event_set_bpf_prog:
 * EINVAL for another type, checked before EEXIST).  As Linux keeps them with the tracepoint
 * (trace_event_call.prog_array), not with the event, such a program runs at every hit of its
 * tracepoint, whatever task or CPU the event watches, before any event counts it
 * (perf_trace_run_bpf_submit): ctx is a copy of the record whose first 8 bytes hold a pointer
 * to the hook's registers, zeroed up to PERF_MAX_TRACE_SIZE (the verifier allows reads of
 * [8, 2048)); when any program returns 0 the hit is dropped for every event.  Not done:
 * Linux's EACCES for a program that reads past the event's fields (max_ctx_offset).
 *
 * Uprobe events take BPF_PROG_TYPE_KPROBE programs only (EINVAL for another type, before
 * EEXIST), kept in the same table: as Linux's trace_uprobe filter has it, the program runs
 * at every hit of the probe by the event's process (a per-task event) or by anyone (a
 * CPU-wide one, on any CPU), enabled or not, with a struct pt_regs as ctx; a 0 from it drops
 * the hit for that event (perf_probe_bpf_run).  Inherited events do not carry it.  Kprobe
 * events take them too; their programs run at every hit, as Linux's kprobe_perf_func.
 *
 * Locking: core.bpf_lock (irqsave) serializes attach and detach of core.prog.  The overflow
 * filter (perf_bpf_filter_masked, perf_internal.h) takes no lock (Linux's RCU read side): it
 * announces the event it runs for in perf_bpf_running[cpu], then reads core.prog; detaching
 * clears core.prog, then waits until no CPU announces the event, so a run in flight ends
 * before the program can be freed.
 */
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "perf_internal.h"

/* A program's ctx holds arm64's user_pt_regs: the registers perf passes around, as they are. */
_Static_assert(sizeof(bpf_user_pt_regs_t) == PERF_REGS_NR * sizeof(uint64_t), "ctx regs");

const struct perf_event *_Atomic perf_bpf_running[PERF_BPF_CPUS];
int *perf_bpf_active[PERF_BPF_CPUS];
static void bpf_wait_runs(const struct perf_event *e);

/* ---- programs on tracepoints ---- */

#define TP_PROGS_MAX 64
#define TP_CTX_MAX 2048 /* PERF_MAX_TRACE_SIZE */

static struct {
	const struct perf_event *e; /* NULL: a free slot */
	uint64_t id;		    /* a tracepoint's */
	const void *probe;	    /* a probe event's uprobe or kprobe (NULL for a tracepoint) */
	bool ret;		    /* a probe event's: a return probe */
	int tgid;		    /* a per-task uprobe event's process, 0: every hit */
	struct bpf_prog *prog; /* the event's reference (core.prog) */
} tp_progs[TP_PROGS_MAX];	 /* (tp_lock) */
static struct spinlock tp_lock = SPINLOCK_INIT;
static _Atomic int tp_nr_progs;	 /* slots in use */
static uint64_t tp_ctx[PERF_BPF_CPUS][TP_CTX_MAX / 8]; /* per CPU, under bpf_prog_active */

static int tp_attach(struct perf_event *e, struct bpf_prog *prog)
{
	bool up = e->attr.type == PERF_TYPE_UPROBE, probe = up || e->attr.type == PERF_TYPE_KPROBE;
	/* Linux's trace_uprobe filter: the process of a per-task event; a kprobe has none */
	struct ksvc_task *t = up && e->target_tid ? ksvc_task_find(e->target_tid) : NULL;
	int err = -ENOMEM;

	unsigned long f = spin_lock_irqsave(&tp_lock);

	for (unsigned int i = 0; i < TP_PROGS_MAX; i++) {
		if (tp_progs[i].e)
			continue;
		tp_progs[i].e = e;
		tp_progs[i].id = e->attr.config;
		tp_progs[i].probe = up ? (const void *)e->hw.uprobe
				       : probe ? (const void *)e->hw.kprobe : NULL;
		tp_progs[i].ret = probe && (e->attr.config & 1);
		tp_progs[i].tgid = t ? ksvc_task_tgid(t) : 0;
		tp_progs[i].prog = prog;
		atomic_fetch_add(&tp_nr_progs, 1);
		err = 0;
		break;
	}
	spin_unlock_irqrestore(&tp_lock, f);
	if (!err && !probe)
		ksvc_trace_use(e->attr.config, 1); /* the hook fires for the program alone too */
	return err;
}

/* After it, no run of the event's program is in flight or can start. */
static void tp_detach(const struct perf_event *e)
{
	bool found = false;

	unsigned long f = spin_lock_irqsave(&tp_lock);

	for (unsigned int i = 0; i < TP_PROGS_MAX; i++) {
		if (tp_progs[i].e != e)
			continue;
		tp_progs[i].e = NULL;
		tp_progs[i].prog = NULL;
		atomic_fetch_sub(&tp_nr_progs, 1);
		found = true;
	}
	spin_unlock_irqrestore(&tp_lock, f);
	if (found && e->attr.type == PERF_TYPE_TRACEPOINT)
		ksvc_trace_use(e->attr.config, -1);
}

void perf_tp_bpf_release(struct perf_event *e)
{
	tp_detach(e);
}

bool perf_tp_bpf_run(const struct perf_tp_hit *hit)
{
	uint64_t ret = 1;

	if (!atomic_load_explicit(&tp_nr_progs, memory_order_relaxed))
		return true;
	unsigned long f = ksvc_irq_save();
	unsigned int cpu = ksvc_cpu_id() % PERF_BPF_CPUS;
	int *active = ksvc_bpf_prog_active();

	if (++*active == 1 &&
	    !atomic_load_explicit(&perf_bpf_running[cpu], memory_order_relaxed)) {
		uint64_t *ctx = tp_ctx[cpu];
		uint32_t n = MIN(hit->size, (uint32_t)TP_CTX_MAX);
		bool copied = false;

		spin_lock(&tp_lock);
		for (unsigned int i = 0; i < TP_PROGS_MAX && ret; i++) {
			if (!tp_progs[i].e || tp_progs[i].probe || tp_progs[i].id != hit->id)
				continue;
			if (!copied) {
				memcpy(ctx, hit->rec, n);
				memset((uint8_t *)ctx + n, 0, TP_CTX_MAX - n);
				ctx[0] = (uint64_t)(uintptr_t)hit->regs;
				copied = true;
			}
			ret = bpf_prog_run(tp_progs[i].prog, ctx) != 0;
		}
		spin_unlock(&tp_lock);
	}
	--*active;
	ksvc_irq_restore(f);
	return ret != 0;
}

int perf_event_set_bpf(struct perf_event *e, struct bpf_prog *prog, uint64_t cookie)
{
	struct perf_event_core *c = perf_core(e);
	bool tp = e->attr.type == PERF_TYPE_TRACEPOINT;
	bool probe = e->attr.type == PERF_TYPE_UPROBE || e->attr.type == PERF_TYPE_KPROBE;
	int err = 0;

	unsigned long f = spin_lock_irqsave(&c->bpf_lock);

	/* perf_event_set_bpf_prog: a tracing event's program type first, then EEXIST */
	if ((tp && bpf_prog_type(prog) != BPF_PROG_TYPE_TRACEPOINT) ||
	    (probe && bpf_prog_type(prog) != BPF_PROG_TYPE_KPROBE))
		err = -EINVAL;
	else if (c->prog)
		err = -EEXIST;
	else if (!tp && !probe && bpf_prog_type(prog) != BPF_PROG_TYPE_PERF_EVENT)
		err = -EINVAL;
	else if ((!tp && !probe) || (err = tp_attach(e, prog)) == 0) {
		c->bpf_cookie = cookie;
		/* Release: a filter that reads the program (acquire) reads its cookie */
		__atomic_store_n(&c->prog, prog, __ATOMIC_RELEASE); /* takes the caller's reference */
	}
	spin_unlock_irqrestore(&c->bpf_lock, f);
	return err;
}

void perf_event_clear_bpf(struct perf_event *e, struct bpf_prog *prog)
{
	struct perf_event_core *c = perf_core(e);
	struct bpf_prog *old = NULL;

	unsigned long f = spin_lock_irqsave(&c->bpf_lock);

	if (!prog || c->prog == prog) {
		old = c->prog;
		WRITE_ONCE(c->prog, NULL);
	}
	spin_unlock_irqrestore(&c->bpf_lock, f);
	if (old)
		bpf_wait_runs(e);
	if (old && (e->attr.type == PERF_TYPE_TRACEPOINT || e->attr.type == PERF_TYPE_UPROBE ||
		    e->attr.type == PERF_TYPE_KPROBE))
		tp_detach(e); /* before the put: a run may still hold the program */
	if (old)
		bpf_prog_put(old);
}

void perf_event_inherit_bpf(struct perf_event *child, struct perf_event *parent)
{
	struct perf_event_core *pc = perf_core(parent), *cc = perf_core(child);

	if (parent->attr.type == PERF_TYPE_TRACEPOINT)
		return; /* the tracepoint's program already runs for every task */
	if (parent->attr.type == PERF_TYPE_UPROBE || parent->attr.type == PERF_TYPE_KPROBE)
		return; /* Linux's child gets a trace_[uk]probe of its own, without the program */
	unsigned long f = spin_lock_irqsave(&pc->bpf_lock);

	if (pc->prog) {
		bpf_prog_get(pc->prog);
		cc->prog = pc->prog;
		cc->bpf_cookie = pc->bpf_cookie;
	}
	spin_unlock_irqrestore(&pc->bpf_lock, f);
}

/* After a detach cleared core.prog: no CPU runs the old program for e any more. */
static void bpf_wait_runs(const struct perf_event *e)
{
	/* pairs with perf_bpf_filter_masked's fence: it sees core.prog NULL, or this sees it run */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned int i = 0; i < PERF_BPF_CPUS; i++)
		while (atomic_load_explicit(&perf_bpf_running[i], memory_order_acquire) == e)
			arch_cpu_relax();
}

bool perf_bpf_filter(struct perf_event *e, uint64_t period, const uint64_t *regs, uint64_t addr)
{
	unsigned long f = ksvc_irq_save();
	bool keep = perf_bpf_filter_masked(e, period, regs, addr);

	ksvc_irq_restore(f);
	return keep;
}

/* ---- programs on probe events ---- */

#define PT_REGS_SIZE 336 /* arm64 struct pt_regs: user_pt_regs, then kernel-only words */
static uint64_t probe_ctx[PERF_BPF_CPUS][PT_REGS_SIZE / 8]; /* per CPU, under bpf_prog_active */
/* its words past user_pt_regs are zeroed: a helper reading it as a perf ctx finds regs NULL */
_Static_assert(offsetof(struct bpf_perf_event_data_kern, regs) + sizeof(void *) <= PT_REGS_SIZE,
	       "kprobe ctx");

int perf_probe_bpf_run(const void *probe, bool ret, const uint64_t *regs,
		       const struct perf_event **dropped, int max)
{
	int n = 0;

	if (!atomic_load_explicit(&tp_nr_progs, memory_order_relaxed))
		return 0;
	unsigned long f = ksvc_irq_save();
	unsigned int cpu = ksvc_cpu_id() % PERF_BPF_CPUS;
	int tgid = ksvc_current_tgid();
	int *active = ksvc_bpf_prog_active();
	bool copied = false, busy = ++*active != 1 ||
				    atomic_load_explicit(&perf_bpf_running[cpu], memory_order_relaxed);
	uint64_t *ctx = probe_ctx[cpu];

	if (spin_is_held_by_me(&tp_lock)) { /* a kprobe in a tracepoint program's helper */
		--*active;
		ksvc_irq_restore(f);
		return -1;
	}
	spin_lock(&tp_lock);
	for (unsigned int i = 0; i < TP_PROGS_MAX && n < max; i++) {
		if (!tp_progs[i].e || tp_progs[i].probe != probe || tp_progs[i].ret != ret ||
		    (tp_progs[i].tgid && tp_progs[i].tgid != tgid))
			continue;
		/* trace_call_bpf: with a program already running on this CPU the hit is dropped */
		if (!busy && !copied) {
			memcpy(ctx, regs, 34 * sizeof(uint64_t));
			memset(ctx + 34, 0, PT_REGS_SIZE - 34 * sizeof(uint64_t));
			copied = true;
		}
		if (busy || !bpf_prog_run(tp_progs[i].prog, ctx))
			dropped[n++] = tp_progs[i].e;
	}
	spin_unlock(&tp_lock);
	--*active;
	ksvc_irq_restore(f);
	return n;
}

/* ---- struct bpf_perf_ops ---- */

static int ops_get_fd(int fd, void **event)
{
	return perf_event_get_fd(fd, (struct perf_event **)event);
}

static void ops_put(void *event)
{
	perf_event_put(event);
}

/* BPF_TASK_FD_QUERY (Linux 6.1's bpf_get_perf_event_info): a tracepoint event's program and
 * the tracepoint's name; a PERF_EVENT program is not reported (EOPNOTSUPP). */
static int ops_task_fd_query(int pid, int fd, uint32_t *prog_id, const char **name)
{
	struct perf_event *e;
	struct perf_event_core *c;
	int err = perf_event_get_task_fd(pid, fd, &e);

	if (err)
		return err;
	c = perf_core(e);
	unsigned long f = spin_lock_irqsave(&c->bpf_lock);

	if (!c->prog)
		err = -ENOENT;
	else if (bpf_prog_type(c->prog) == BPF_PROG_TYPE_PERF_EVENT)
		err = -EOPNOTSUPP;
	else
		*prog_id = bpf_prog_id(c->prog);
	spin_unlock_irqrestore(&c->bpf_lock, f);
	if (!err)
		*name = ksvc_trace_event_name(e->attr.config);
	perf_event_put(e);
	return err;
}

static int ops_cpu(void *event)
{
	return ((struct perf_event *)event)->cpu;
}

/* The event counts on this CPU now (Linux: event->oncpu == smp_processor_id()). */
static bool on_this_cpu(struct perf_event *e)
{
	struct perf_context *ctx = perf_core(e)->ctx;

	if (e->state != PERF_EVENT_STATE_ACTIVE)
		return false;
	if (e->cpu >= 0)
		return (unsigned int)e->cpu == ksvc_cpu_id();
	return ctx && ctx->task == ksvc_task_current();
}

/*
 * bpf_perf_event_output, get_stackid and get_stack take the registers from ctx: a PERF_EVENT
 * ctx (struct bpf_perf_event_data) and a KPROBE one (struct pt_regs) start with them, and for
 * tracepoint and syscall programs bpf/ hands these a ctx laid out so (bpf_helper_impl).
 */
/* A perf event ctx has regs; a kprobe's pt_regs (zero past user_pt_regs) and the ctx bpf/
 * builds for other programs' helpers hold the registers themselves. */
static const uint64_t *ctx_regs(const void *ctx)
{
	const struct bpf_perf_event_data_kern *k = ctx;

	return k->regs ? k->regs : (const uint64_t *)&k->data.regs;
}

static long ops_output(void *event, void *ctx, const void *data, uint64_t size)
{
	struct perf_event *e = event;
	const uint64_t *regs = ctx_regs(ctx);

	if (e->attr.type != PERF_TYPE_SOFTWARE || e->attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return -EINVAL;
	if (size > 0xffff) /* a raw record's size is a u32, the record's a u16 */
		return -E2BIG;
	if (!on_this_cpu(e))
		return -EOPNOTSUPP;
	return perf_output_raw(e, regs, perf_regs_user(regs), data, (uint32_t)size);
}

static long ops_read(void *event, struct bpf_perf_event_value *v)
{
	struct perf_event *e = event;
	struct perf_context *ctx = perf_core(e)->ctx;

	/* Linux's perf_event_read_local: the current task's event, or this CPU's */
	if (e->attach_task ? !ctx || ctx->task != ksvc_task_current()
			   : e->cpu != (int)ksvc_cpu_id())
		return -EINVAL;
	if (on_this_cpu(e))
		e->pmu->read(e);
	v->counter = atomic_load(&e->count);
	v->enabled = e->time_enabled;
	v->running = e->time_running;
	return 0;
}

static long ops_callchain(void *ctx, bool user, uint64_t *ips, uint32_t max)
{
	const uint64_t *regs = ctx_regs(ctx);

	return perf_bpf_callchain(regs, perf_regs_user(regs), user, ips, max);
}

static int ops_attach(void *event, struct bpf_prog *prog, uint64_t cookie)
{
	return perf_event_set_bpf(event, prog, cookie);
}

static void ops_detach(void *event, struct bpf_prog *prog)
{
	perf_event_clear_bpf(event, prog);
}

static const struct bpf_perf_ops perf_bpf_ops = {
	.event_get_fd = ops_get_fd,
	.task_fd_query = ops_task_fd_query,
	.event_put = ops_put,
	.event_cpu = ops_cpu,
	.event_output = ops_output,
	.event_read = ops_read,
	.callchain = ops_callchain,
	.attach = ops_attach,
	.detach = ops_detach,
};

void perf_bpf_init(void)
{
	bpf_register_perf_ops(&perf_bpf_ops);
}
