/*
 * perf.h - what the rest of the kernel may call of perf/.
 *
 * kernel/ reaches perf through its syscall entry (kernel/sys_perf.c) and the task hooks
 * declared here (like FreeBSD's pmckern.h), fs/ through the sysfs and sysctl views at the end.
 * arch/ never calls perf: perf_init registers the PMU interrupt handler and the hardware
 * breakpoint handler through the seam (kern/ksvc.h), and they reach perf from there.
 * Everything else of perf/ is private (perf/perf_internal.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* One mapping, for perf_task_mmap (PERF_RECORD_MMAP / MMAP2 fields). */
struct perf_mmap_info {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min; /* device of the file, 0 for anonymous maps */
	uint64_t ino, ino_generation;
	uint32_t prot, flags; /* PROT_*, MAP_* */
	const char *filename; /* path, "[vdso]", "//anon", ... */
	bool exec;	      /* VM_EXEC: without it the record is flagged MISC_MMAP_DATA */
	bool user;	      /* a user mapping (MISC_USER) or a kernel one (MISC_KERNEL) */
};

/* ---- the hooks kernel/ calls (perf/ctx.c), and boot ---- */

struct ksvc_task;

extern bool perf_debug; /* boot option perfdebug (diagnosis) */
/* [boot] Contexts, the PMUs (software, tracepoint, breakpoint, PMUv3) and their interrupt and
 * trap handlers (ksvc_pmu_irq_register, ksvc_hw_breakpoint_register).  0 or -errno. */
int perf_init(void);
/* [proc] perf_event_open(2) as Linux 6.1: the new event's fd, or -errno.  kernel/sys_perf.c is
 * its syscall table entry. */
long perf_event_open(void *uattr, int pid, int cpu, int group_fd, unsigned long flags);
/* [boot, each CPU, IRQs masked] Reset this CPU's PMU. */
void perf_cpu_init(void);
/* [IRQs masked] Switch counting from prev to next on this CPU; next_migrated when next last
 * ran on another CPU (a cpu-migrations event). */
void perf_task_switch(struct ksvc_task *prev, struct ksvc_task *next, bool next_migrated);
/* [IRQ, each CPU's tick] Multiplexing rotation. */
void perf_tick(void);
/* [proc] The current task forked child (a process or a thread): inherit events. */
void perf_task_fork(struct ksvc_task *parent, struct ksvc_task *child);
/* [proc] The current task exec'd: enable_on_exec. */
void perf_task_exec(void);
/* [proc] The current task's comm changed (exec: true with the new program's name). */
void perf_task_comm(const char *comm, bool exec);
/* [proc] prctl(PR_TASK_PERF_EVENTS_ENABLE / _DISABLE): every event the current thread opened
 * (and their inherited children) on or off. */
void perf_task_owned_enable(bool on);
/* [proc] The current task mapped something (exec's segments, mmap with PROT_EXEC). */
void perf_task_mmap(const struct perf_mmap_info *m);
/* [proc] The current thread exits: fold inherited counts, POLLHUP for its readers. */
void perf_task_exit(void);
/* [any] A software event happened n times on the current task and CPU, in kernel mode or user
 * mode (exclude_kernel / exclude_user); addr is the fault address for page faults
 * (PERF_SAMPLE_ADDR), else 0. */
void perf_sw_event(uint32_t config, uint64_t n, uint64_t addr, bool in_kernel);

/* [any] Tracepoint id fired on the current task and CPU: its record (size bytes, Linux's
 * layout) and the registers to sample (user_pt_regs order; user: user-mode registers). */
void perf_tp_event(uint64_t id, const void *rec, uint32_t size, const uint64_t *regs, bool user);

/* [proc] The current task hit uprobe u (kern/ksvc.h) at its entry (ret false) or returned
 * from the function at func that it probes (ret true): regs are its user registers
 * (user_pt_regs order; pc is the probe, or the return address). */
struct ksvc_uprobe;
void perf_uprobe_hit(struct ksvc_uprobe *u, const uint64_t *regs, bool ret, uint64_t func);

/* [IRQs masked] The kernel hit kprobe k (kern/ksvc.h) on the current task and CPU; regs are
 * the kernel's registers there (user_pt_regs order, pc the probe); ret: the return of
 * function func (pc the address it returns to). */
struct ksvc_kprobe;
void perf_kprobe_hit(struct ksvc_kprobe *k, const uint64_t *regs, bool ret, uint64_t func);

/* ---- what /sys and /proc show of perf (perf/sysfs.c), for fs/sysfs.c and fs/procfs.c ---- */

/* One sysfs attribute file: name and contents without the newline ("config:0-15"). */
struct perf_sysfs_attr {
	const char *name;
	const char *value;
};

/* A registered PMU as /sys/bus/event_source/devices/<name>/ shows it.  Arrays are valid
 * during the emit call only. */
struct perf_sysfs_pmu {
	const char *name;
	int type;
	bool has_cpus; /* a "cpus" file listing the possible CPUs (PMUv3: "0-3") */
	const struct perf_sysfs_attr *format; /* format/<name> */
	unsigned int nr_format;
	const struct perf_sysfs_attr *events; /* events/<name>: "event=0x0011" */
	unsigned int nr_events;
	const struct perf_sysfs_attr *caps; /* caps/<name> */
	unsigned int nr_caps;
};

/* [proc] Call emit for each registered PMU in type order: the number of PMUs. */
int perf_sysfs_pmus(void (*emit)(const struct perf_sysfs_pmu *pmu, void *arg), void *arg);

/*
 * The perf sysctls under /proc/sys/kernel ("perf_event_paranoid", "perf_event_max_sample_rate",
 * "perf_event_mlock_kb", "perf_event_max_stack", "perf_cpu_time_max_percent").
 * perf_sysctl_get: 0 and *val, or -ENOENT.  perf_sysctl_set: 0, -EINVAL (out of range as
 * Linux's handler), -EPERM (read-only here), -ENOENT.
 */
int perf_sysctl_get(const char *name, long *val);
int perf_sysctl_set(const char *name, long val);
