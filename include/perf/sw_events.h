/*
 * sw_events.h - the software events (PERF_TYPE_SOFTWARE), one row per config: what counts it
 * here, whether an elapsed period writes a sample, and perf's names for it.  perf/sw.c (the
 * software PMU) and perf/ctx.c read the rules from it, tools/perf/events.c the names (-e), so
 * no special case about a config lives anywhere else.  Pure data: freestanding C and the uapi
 * <linux/perf_event.h>, usable by the kernel and by userland.
 *
 * Linux 6.1 is the reference for what each config counts (kernel/events/core.c
 * perf_swevent_init, cpu_clock_event_*, task_clock_event_*; the callers of perf_sw_event) and
 * for the names (tools/perf/util/parse-events.c event_symbols_sw).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* What makes a software event's count go up here. */
enum perf_sw_source {
	PERF_SW_CLOCK,	 /* nanoseconds while the event is on (sw.c reads a clock); sampling
			  * fires from a timer every sample_period ns */
	PERF_SW_KERNEL,	 /* occurrences the kernel reports (perf_sw_event, the switch hook in
			  * ctx.c); sampling every sample_period occurrences */
	PERF_SW_BPF,	 /* nothing counts; BPF programs write records into it
			  * (bpf_perf_event_output) */
	PERF_SW_NEVER,	 /* nothing happens here that Linux would count: the row says why its
			  * count is 0 on Linux too */
};

struct perf_sw_event_desc {
	const char *name;  /* perf's name (-e) */
	const char *alias; /* perf's other name, or NULL */
	enum perf_sw_source source;
	/* An occurrence is in kernel mode whatever the task was doing (the scheduler), so
	 * exclude_kernel events never see it (Linux samples the scheduler's own registers). */
	bool kernel_mode;
};

static const struct perf_sw_event_desc perf_sw_events[PERF_COUNT_SW_MAX] = {
	/* wall-clock time while on */
	[PERF_COUNT_SW_CPU_CLOCK] = { "cpu-clock", NULL, PERF_SW_CLOCK, false },
	/* the task's run time while on (its context's time) */
	[PERF_COUNT_SW_TASK_CLOCK] = { "task-clock", NULL, PERF_SW_CLOCK, false },
	/* every user or kernel page fault the VM resolves or refuses (kernel/vm.c) */
	[PERF_COUNT_SW_PAGE_FAULTS] = { "page-faults", "faults", PERF_SW_KERNEL, false },
	/* every switch away from a task (ctx.c perf_task_switch) */
	[PERF_COUNT_SW_CONTEXT_SWITCHES] = { "context-switches", "cs", PERF_SW_KERNEL, true },
	/* a task switched in on another CPU than the one it last ran on (perf_task_switch) */
	[PERF_COUNT_SW_CPU_MIGRATIONS] = { "cpu-migrations", "migrations", PERF_SW_KERNEL, true },
	/* faults resolved without I/O (kernel/vm.c): all of them (no file needs I/O) */
	[PERF_COUNT_SW_PAGE_FAULTS_MIN] = { "minor-faults", NULL, PERF_SW_KERNEL, false },
	/* faults that wait for I/O: none here, every file lives in memory (the initramfs), as
	 * on a Linux whose files are all in the page cache */
	[PERF_COUNT_SW_PAGE_FAULTS_MAJ] = { "major-faults", NULL, PERF_SW_NEVER, false },
	/* arm64 Linux never counts it either: unaligned accesses are done by the hardware or
	 * raise SIGBUS, no kernel fixup */
	[PERF_COUNT_SW_ALIGNMENT_FAULTS] = { "alignment-faults", NULL, PERF_SW_NEVER, false },
	/* counted on arm64 Linux only for the emulated deprecated instructions (SWP, CP15
	 * barriers, SETEND), which this kernel does not emulate and AArch64 tasks cannot run */
	[PERF_COUNT_SW_EMULATION_FAULTS] = { "emulation-faults", NULL, PERF_SW_NEVER, false },
	/* counts nothing by design: a carrier for side-band records */
	[PERF_COUNT_SW_DUMMY] = { "dummy", NULL, PERF_SW_NEVER, false },
	/* records from bpf_perf_event_output; its count stays 0 as on Linux */
	[PERF_COUNT_SW_BPF_OUTPUT] = { "bpf-output", NULL, PERF_SW_BPF, false },
	/* Linux counts a switch between tasks of different perf_event cgroups; every task's is
	 * the root here (kernel/cgroup.c: no controller can be enabled, so the implicit
	 * perf_event controller never reaches a child cgroup), so no switch crosses one: 0, as
	 * Linux counts until a controller is enabled in cgroup.subtree_control */
	[PERF_COUNT_SW_CGROUP_SWITCHES] = { "cgroup-switches", NULL, PERF_SW_NEVER, true },
};

/* The row of config, or NULL for a config Linux does not know (ENOENT). */
static inline const struct perf_sw_event_desc *perf_sw_event_desc(uint64_t config)
{
	return config < PERF_COUNT_SW_MAX ? &perf_sw_events[config] : NULL;
}
