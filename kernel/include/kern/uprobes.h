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
/* A task goes: its pending kernel return probes with it. */
struct task;
void kprobe_task_free(struct task *t);
/* [proc, mm->lock held] Page va of private file mapping v was just read from the file into
 * page (a kernel address): write the BRK of each probe it holds (Linux's uprobe_mmap). */
void uprobe_fill_page(struct vm_area *v, uint64_t va, void *page);
/* [proc] The current thread exec'd: its pending return probes are gone with the old mm, and
 * the probes with a reference counter in the new program raise it. */
void uprobe_exec(struct uthread *ut);
/* A thread is freed: drop its pending return probes. */
void uprobe_task_free(struct uthread *ut);

/* ---- uprobe trace events (kernel/uprobe_events.c), for tracefs's uprobe_events ---- */

struct ksvc_uprobe;
/* A fetch argument of a probe event (trace_probe.c): NAME=FETCH[:TYPE]. */
#define PROBE_ARGS_MAX 16
/* Where a fetch starts: x0..x30, or one of these. */
enum {
	PROBE_ARG_SP = 31,     /* %sp, and $stack */
	PROBE_ARG_PC = 32,     /* %pc */
	PROBE_ARG_RETVAL = 40, /* $retval (return probes) */
	PROBE_ARG_STACKN,      /* $stackN: the N-th u64 at the stack pointer (imm: N) */
	PROBE_ARG_IMM,	       /* @ADDR, @SYM[+|-OFF] (imm: the address) */
	PROBE_ARG_FOFFS,       /* @+OFF: the probed file's offset OFF where the task maps it */
	PROBE_ARG_COMM,	       /* $comm: the task's name (a string) */
};
#define PROBE_DEREF_MAX 14 /* nested +OFF(...) and @'s reads: Linux's FETCH_INSN_MAX room */
#define PROBE_ARGSTR_MAX 63 /* MAX_ARGSTR_LEN: FETCH[:TYPE] */
struct probe_arg {
	char name[24];
	char spec[PROBE_ARGSTR_MAX + 1]; /* FETCH[:TYPE] as written, for the listing */
	uint8_t reg;	 /* the start: x0..x30 or PROBE_ARG_* */
	uint8_t nderef;	 /* then this many memory reads, at offs[0] from it first (the innermost) */
	char type;	 /* 'u', 's', 'x', 'd' (none given: a hex u64), 'S' a string */
	uint8_t size;	 /* bytes */
	uint16_t offset; /* in the record */
	uint64_t imm;
	int64_t offs[PROBE_DEREF_MAX];
};
struct uprobe_event_info {
	uint16_t id; /* its tracepoint id (PERF_TYPE_TRACEPOINT config) */
	char group[64], name[64];
	const char *path;
	uint64_t offset;
	uint64_t ref_ctr_offset; /* "path:OFF(REF)": its USDT semaphore's file offset, 0 none */
	bool ret; /* "r:": a return probe */
	bool kprobe; /* a kprobe_events event: path is the kernel symbol, offset into it */
	unsigned int maxactive; /* a kretprobe's "rN" (shown as Linux's default when not given) */
	uint64_t hits; /* uprobe_profile / kprobe_profile */
	unsigned int nargs;
	struct probe_arg args[PROBE_ARGS_MAX];
};
/* is_good_name: [A-Za-z_][A-Za-z0-9_]* (group, event and argument names). */
bool probe_name_ok(const char *s);
/* Parse fetch arguments argv[0..argc) of a probe (ret: a return probe; kprobe: a kernel one,
 * whose @SYM names are looked up): 0, -EINVAL, or -ENOENT for an unknown @SYM; args' offsets
 * follow the record's fixed head (16 bytes, 24 for a return probe), packed. */
int probe_args_parse(char **argv, int argc, bool ret, bool kprobe, struct probe_arg *args,
		     unsigned int *n);
/* [sleep] Define event group/name on path:offset (kprobe: the symbol sym+offset), with the
 * reference counter at file offset ref_ctr (uprobes; 0: none): 0 with *id, -EEXIST, -ENOSPC,
 * -ENOMEM. */
int uprobe_event_add(const char *group, const char *name, const char *path, uint64_t offset,
		     uint64_t ref_ctr, bool ret, bool kprobe, unsigned int maxactive, const struct probe_arg *args,
		     unsigned int nargs, uint16_t *id);
/* [sleep] Delete one of the kind (-ENOENT, -EBUSY while a perf event has it open), or all of
 * the kind (-EBUSY and nothing deleted when any is open). */
int uprobe_event_del(const char *group, const char *name, bool kprobe);
int uprobe_event_clear(bool kprobe);
/* [IRQs masked] Kprobe k was hit (see perf_kprobe_hit): write the records of its events. */
struct ksvc_kprobe;
void kprobe_events_hit(struct ksvc_kprobe *k, const uint64_t *regs, bool ret, uint64_t func);
/* [sleep] Could sym+off be probed (ret: for its returns)?  0, -ENOENT, -EINVAL. */
int kprobe_check(const char *sym, uint64_t off, bool ret);
/* [sleep] fn on a copy of each defined event, in table order. */
void uprobe_events_each(void (*fn)(const struct uprobe_event_info *info, void *arg), void *arg);
/* [sleep] Is id a uprobe event?  Open (the first registers its uprobe: 0 or the registration's
 * errno, EINVAL for an unknown id) and close a perf event's use of it. */
bool uprobe_event_exists(uint64_t id);
int uprobe_event_open(uint64_t id);
void uprobe_event_close(uint64_t id);
/* [proc] Probe u was hit (see perf_uprobe_hit): write the records of its events. */
void uprobe_events_hit(struct ksvc_uprobe *u, const uint64_t *regs, bool ret, uint64_t func);
