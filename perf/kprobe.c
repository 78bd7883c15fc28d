/*
 * kprobe.c - the kprobe PMU ("kprobe" in sysfs, type 6 as Linux's first dynamic type gives
 * it): config1 points to a kernel function's name and config2 is the offset into it, or
 * config1 is 0 and config2 the address to probe; config:0 asks for a return probe
 * (format/retprobe).  Each hit on the task or CPU the event watches counts 1 and, sampling,
 * writes a PERF_RECORD_SAMPLE of the kernel registers there (RAW: the kprobe trace record,
 * kprobe_trace_entry_head: the common header and the probe's address).  The BRK in the
 * kernel's text is kernel/kprobes.c's, reached through ksvc_kprobe_register.
 *
 * ABI: Linux 6.1 kernel/events/core.c perf_kprobe_event_init (ENOENT for other types,
 * EOPNOTSUPP with a branch stack), trace_event_perf.c perf_kprobe_init (the name copied with
 * strndup_user of KSYM_NAME_LEN: E2BIG when longer, EFAULT; an empty name counts as none;
 * neither name nor address: EINVAL), then register_kprobe's errno (ENOENT for an unknown
 * function, EINVAL for an address it refuses).  BPF_PROG_TYPE_KPROBE programs attach with
 * SET_BPF or BPF_LINK_CREATE (bpf_attach.c) and run at every hit.
 * A return probe (config:0, at a function's entry only) counts and samples each return, its
 * RAW the kretprobe record (the function and the address it returns to).  A hit inside perf
 * itself (this CPU holding the context lock the hit would take) is missed, as Linux's
 * recursion guards miss them.
 */
#include <linux/perf_event.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "perf_internal.h"

#define KSYM_NAME_LEN 512

static void kprobe_destroy(struct perf_event *e)
{
	perf_tp_bpf_release(e); /* its program off the probe before the probe goes */
	if (e->hw.kprobe)
		ksvc_kprobe_unregister(e->hw.kprobe, e->attr.config & 1);
	e->hw.kprobe = NULL;
}

static int kprobe_event_init(struct perf_event *e)
{
	char *name = NULL;
	int err;

	if (e->attr.type != PERF_TYPE_KPROBE)
		return -ENOENT;
	if (e->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		return -EOPNOTSUPP;
	if (e->hw.kprobe) {
		ksvc_kprobe_dup(e->hw.kprobe, e->attr.config & 1); /* inherited: the parent's probe */
		err = 0;
		goto done;
	}
	if (e->attr.config1) {
		name = ksvc_alloc(KSYM_NAME_LEN);
		if (!name)
			return -ENOMEM;
		long n = ksvc_strncpy_from_user(name, (const void *)(uintptr_t)e->attr.config1,
						KSYM_NAME_LEN);

		if (n < 0) {
			ksvc_free(name);
			return n == -ENAMETOOLONG ? -E2BIG : (int)n;
		}
		if (!name[0]) {
			ksvc_free(name);
			name = NULL;
		}
	} else if (!e->attr.config2) {
		return -EINVAL;
	}
	if (!name && !e->attr.config2)
		err = -EINVAL; /* an empty name and no address */
	else
		err = ksvc_kprobe_register(name, name ? e->attr.config2 : 0,
					   name ? 0 : e->attr.config2, e->attr.config & 1,
					   &e->hw.kprobe);
	ksvc_free(name);
	if (err)
		return err;
done:
	if (e->attr.freq && e->attr.sample_freq)
		e->hw.sample_period = e->hw.last_period = 1;
	e->destroy = kprobe_destroy;
	return 0;
}

static struct perf_pmu kprobe_pmu = {
	.name = "kprobe",
	.caps = PERF_PMU_CAP_SOFTWARE | PERF_PMU_CAP_NO_NMI,
	.event_init = kprobe_event_init,
	.add = perf_probe_add,
	.del = perf_probe_stop,
	.start = perf_probe_start,
	.stop = perf_probe_stop,
	.read = perf_probe_read,
};

struct perf_pmu *perf_kprobe_pmu(void)
{
	return &kprobe_pmu;
}

void perf_kprobe_hit(struct ksvc_kprobe *k, const uint64_t *regs, bool ret, uint64_t func)
{
	if (perf_ctx_held_here())
		return;
	perf_probe_event(&kprobe_pmu, k, ret, regs, false, func);
}
