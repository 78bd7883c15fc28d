/*
 * uprobes.h - user-space probes (kernel/uprobes.c): what the VM, exec and the thread code
 * call.  perf reaches the probes through ksvc_uprobe_register/unregister (kern/ksvc.h) and is
 * told of hits through perf_uprobe_hit (perf/perf.h).
 */
#pragma once

#include <stdint.h>

struct uthread;
struct vm_area;

/* [boot] Register the BRK handler. */
void uprobe_init(void);
/* [proc, mm->lock held] Page va of private file mapping v was just read from the file into
 * page (a kernel address): write the BRK of each probe it holds (Linux's uprobe_mmap). */
void uprobe_fill_page(struct vm_area *v, uint64_t va, void *page);
/* [proc] The current thread exec'd: its pending return probes are gone with the old mm. */
void uprobe_exec(struct uthread *ut);
/* A thread is freed: drop its pending return probes. */
void uprobe_task_free(struct uthread *ut);
