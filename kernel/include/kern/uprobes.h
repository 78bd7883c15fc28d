/*
 * uprobes.h - user-space probes (kernel/uprobes.c): what the VM, exec and the thread code
 * call.  perf reaches the probes through ksvc_uprobe_register/unregister (kern/ksvc.h) and is
 * told of hits through perf_uprobe_hit (perf/perf.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct uthread;
struct vm_area;

/* [boot] Register the BRK handler. */
void uprobe_init(void);
/* [boot] Register the kernel BRK handlers (kernel/kprobes.c). */
void kprobe_init(void);
/* [proc, mm->lock held] Page va of private file mapping v was just read from the file into
 * page (a kernel address): write the BRK of each probe it holds (Linux's uprobe_mmap). */
void uprobe_fill_page(struct vm_area *v, uint64_t va, void *page);
/* [proc] The current thread exec'd: its pending return probes are gone with the old mm. */
void uprobe_exec(struct uthread *ut);
/* A thread is freed: drop its pending return probes. */
void uprobe_task_free(struct uthread *ut);

/* ---- uprobe trace events (kernel/uprobe_events.c), for tracefs's uprobe_events ---- */

struct ksvc_uprobe;
struct uprobe_event_info {
	uint16_t id; /* its tracepoint id (PERF_TYPE_TRACEPOINT config) */
	char group[64], name[64];
	const char *path;
	uint64_t offset;
	bool ret; /* "r:": a return probe */
	uint64_t hits; /* uprobe_profile */
};
/* [sleep] Define event group/name on path:offset: 0 with *id, -EEXIST, -ENOSPC, -ENOMEM. */
int uprobe_event_add(const char *group, const char *name, const char *path, uint64_t offset,
		     bool ret, uint16_t *id);
/* [sleep] Delete one (-ENOENT, -EBUSY while a perf event has it open), or all (-EBUSY and
 * nothing deleted when any is open). */
int uprobe_event_del(const char *group, const char *name);
int uprobe_event_clear(void);
/* [sleep] fn on a copy of each defined event, in table order. */
void uprobe_events_each(void (*fn)(const struct uprobe_event_info *info, void *arg), void *arg);
/* [sleep] Is id a uprobe event?  Open (the first registers its uprobe: 0 or the registration's
 * errno, EINVAL for an unknown id) and close a perf event's use of it. */
bool uprobe_event_exists(uint64_t id);
int uprobe_event_open(uint64_t id);
void uprobe_event_close(uint64_t id);
/* [proc] Probe u was hit (see perf_uprobe_hit): write the records of its events. */
void uprobe_events_hit(struct ksvc_uprobe *u, const uint64_t *regs, bool ret, uint64_t func);
