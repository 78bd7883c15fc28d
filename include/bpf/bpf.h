/*
 * bpf.h - what the rest of the kernel may call in the eBPF runtime (bpf/).
 *
 * The syscall table calls bpf_sys for bpf(2) (aarch64 nr 280, Linux 6.1 ABI, union bpf_attr
 * from <linux/bpf.h>).  perf (perf/bpf_attach.c) attaches BPF_PROG_TYPE_PERF_EVENT programs to
 * its events: it takes a program by fd, checks its type and runs it from the overflow IRQ
 * with bpf_prog_run, which never allocates and never sleeps.  perf also registers
 * struct bpf_perf_ops so that BPF_MAP_TYPE_PERF_EVENT_ARRAY can hold perf event files and the
 * perf helpers (perf_event_output, get_stackid, get_stack, perf_prog_read_value,
 * get_attach_cookie) reach perf without bpf/ including perf internals.
 *
 * Not here: the internals (bpf/bpf_internal.h, the JIT in bpf/jit.c).  Not built: tail calls,
 * BTF.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

struct bpf_prog;
struct wait_queue;
struct bpf_map;

/* [sleep] bpf(2): cmd, user pointer to union bpf_attr, its size.  0/fd/id or -errno. */
long bpf_sys(int cmd, const void *uattr, unsigned int size);

/*
 * [proc] The program behind fd with one more reference: -EBADF when fd is not open, -EINVAL
 * when it is not a bpf program (Linux's bpf_prog_get).
 */
int bpf_prog_get_fd(int fd, struct bpf_prog **out);
/*
 * [proc] Like bpf_prog_get_fd, and -EINVAL unless the program has this enum bpf_prog_type
 * (Linux's bpf_prog_get_type, as PERF_EVENT_IOC_SET_BPF uses it).
 */
int bpf_prog_get_fd_type(int fd, uint32_t type, struct bpf_prog **out);
/* [any] Take / drop a reference; the last put frees the program and drops its maps. */
void bpf_prog_get(struct bpf_prog *prog);
void bpf_prog_put(struct bpf_prog *prog);
/* [any] enum bpf_prog_type of a loaded program. */
uint32_t bpf_prog_type(const struct bpf_prog *prog);
/* [any] The program's id (what BPF_PROG_GET_NEXT_ID and bpf_prog_info report). */
uint32_t bpf_prog_id(const struct bpf_prog *prog);

/*
 * [any] Run a verified program with r1 = ctx; returns r0.  For BPF_PROG_TYPE_PERF_EVENT ctx is a
 * struct bpf_perf_event_data_kern (below).  Uses only the C stack (about 1 KiB): no allocation,
 * no sleeping, safe from the PMU overflow interrupt with interrupts masked.
 */
uint64_t bpf_prog_run(const struct bpf_prog *prog, void *ctx);

/*
 * The context a PERF_EVENT program sees.  It starts with the user-visible
 * struct bpf_perf_event_data (regs, sample_period, addr): programs read those fields directly
 * (the verifier allows only them, read-only).  event, cookie and regs are for the helpers.
 * data.regs need only hold the bytes the program reads (bpf_prog_ctx_read): helpers take the
 * registers from regs when it is set, from data.regs when it is NULL.
 */
struct bpf_perf_event_data_kern {
	struct bpf_perf_event_data data;
	void *event; /* the perf event that fired (opaque to bpf/) */
	uint64_t cookie; /* bpf_get_attach_cookie() */
	const uint64_t *regs; /* the sample's registers (user_pt_regs' 34 words), or NULL */
};

#include <bpf/task.h>

/*
 * [any] Run a PERF_EVENT program on an overflow: bpf_prog_run with the ctx built here from the
 * sample's registers (user_pt_regs' 34 words), period, address, event and attach cookie.
 * ctx->data.regs gets only the bytes the program's own loads may read (the verifier's highest
 * ctx offset); helpers find the registers through ctx->regs.  Returns r0.
 */
uint64_t bpf_prog_run_perf(const struct bpf_prog *prog, const uint64_t *regs, uint64_t period,
			   uint64_t addr, void *event, uint64_t cookie);

/*
 * Hooks perf registers.  Every function may be called from the overflow IRQ path ([any]),
 * except event_get_fd and event_put which run in process context.
 */
struct bpf_perf_ops {
	/* The perf event behind fd with a reference: 0, -EBADF (not open or not a perf event). */
	int (*event_get_fd)(int fd, void **event);
	void (*event_put)(void *event);
	/* CPU the event is bound to, or -1 for a task event. */
	int (*event_cpu)(void *event);
	/* bpf_perf_event_output: write a PERF_RECORD_SAMPLE with raw data to event's ring. */
	long (*event_output)(void *event, void *ctx, const void *data, uint64_t size);
	/* bpf_perf_event_read_value / bpf_perf_prog_read_value: counter, enabled, running. */
	long (*event_read)(void *event, struct bpf_perf_event_value *value);
	/*
	 * Kernel (user == false) or user call chain of the context's registers into ips: the number
	 * of entries written (at most max), or -errno.
	 */
	long (*callchain)(void *ctx, bool user, uint64_t *ips, uint32_t max);
	/*
	 * [proc] BPF_LINK_CREATE / link close: attach prog (the caller's reference passes to the
	 * event on success) with a cookie: 0, -EEXIST (one already), -EINVAL (not PERF_EVENT);
	 * detach removes prog if it is still the event's program.
	 */
	int (*attach)(void *event, struct bpf_prog *prog, uint64_t cookie);
	void (*detach)(void *event, struct bpf_prog *prog);
	/*
	 * [proc] BPF_TASK_FD_QUERY of fd in thread pid's table: the program on that perf event and
	 * the name of its tracepoint: 0; -ENOENT / -EBADF (no such thread / fd), -EINVAL (not a
	 * perf event), -ENOENT (no program), -EOPNOTSUPP (a PERF_EVENT program: Linux 6.1 does
	 * not report those).
	 */
	int (*task_fd_query)(int pid, int fd, uint32_t *prog_id, const char **name);
};

/* [sleep] perf registers its ops once at init; NULL unregisters (tests). */
void bpf_register_perf_ops(const struct bpf_perf_ops *ops);

/*
 * [proc] For mmap(2) of a BPF_F_MMAPABLE array map fd (global data): the page-aligned value
 * area and its length, and whether the map may be mapped writable (not frozen, not
 * BPF_F_RDONLY).  -EBADF/-EINVAL for an fd that is not a map, -EINVAL when not mmapable.
 * (mmap(2) of a map fd is the map file's own mmap operation, map_mmap in bpf/map.c.)
 */
int bpf_map_mmap_area(int fd, void **kaddr, size_t *len, bool *writable);

/* [proc] The trace_printk buffer: copies up to len bytes not yet read; returns the count. */
size_t bpf_trace_read(char *buf, size_t len);
/* [any] Whether the trace_printk buffer holds bytes not yet read. */
bool bpf_trace_pending(void);
/*
 * [init] The kernel's own BTF (the .BTF section pahole made, /sys/kernel/btf/vmlinux) as the
 * BTF object Linux boots with: the first id (1), named "vmlinux", kernel_btf set, never freed.
 * 0, or the parser's errno for a blob it refuses.
 */
int bpf_btf_vmlinux_init(const void *data, uint32_t size);

/* [init] The wait queue bpf_trace_printk wakes after each line (tracefs's trace_pipe readers). */
void bpf_trace_set_waitq(struct wait_queue *wq);
