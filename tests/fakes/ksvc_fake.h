/* ksvc_fake.h - knobs of the host-test implementation of the ksvc seam (tests/fakes/ksvc_fake.c). */
#pragma once

#include <stdint.h>
#include <kern/ksvc.h>

#define KSVC_FAKE_MAX_BAD 8
#define KSVC_FAKE_MAX_FDS 256
#define KSVC_FAKE_MAX_TASKS 8

struct ksvc_fake_state {
	int tgid, tid;
	uint32_t uid, gid;
	char comm[16];
	unsigned int nr_cpus, cpu;
	uint64_t clock_ns; /* what ksvc_clock_ns returns next */
	uint64_t clock_step_ns; /* added after each ksvc_clock_ns call */
	int last_signal; /* ksvc_signal_current's last signal */
	uint32_t rand_state;
	int fail_alloc_after; /* >= 0: that many more ksvc_alloc calls succeed, then NULL */
	unsigned int irq_depth;
	int migrate_depth; /* ksvc_migrate_disable nesting */
	int migrate_disables; /* ksvc_migrate_disable calls */
	int cpu_id_migrate_depth; /* migrate_depth at the last ksvc_cpu_id call */
	struct {
		uintptr_t start;
		size_t len;
	} bad_user[KSVC_FAKE_MAX_BAD]; /* "user" ranges that fault */
	struct {
		void *link[2];
		uint64_t start, end;
	} vma; /* the current task's one memory area (ksvc_task_find_vma) */
	uint64_t kstack[8], ustack[8]; /* ksvc_task_stack: kernel frames (any task), user */
	unsigned int kstack_n, ustack_n;
	const void *umem; /* ksvc_task_copy_from_user: umem_len bytes seen at umem_addr */
	uint64_t umem_addr, umem_len;
	char log[65536]; /* everything printk'd */
	int waitq_wakeups; /* ksvc_waitq_wake_all calls */
	/* called by ksvc_waitq_wake_all before it touches wq: a test's window into a wakeup */
	void (*on_wake)(struct wait_queue *wq);
	int current_task; /* index into the fake task table */
	uint64_t irq_regs[34]; /* the user registers (ksvc_user_regs) and a fired timer's */
	int trace_uses; /* ksvc_trace_use: active tracepoint events */
	int uprobe_regs; /* ksvc_uprobe_register minus unregister */
	uint64_t kprobe_running_addr; /* what ksvc_kprobe_running_addr answers */
	bool irq_user;	 /* a fired timer's registers are user mode */
	bool in_irq;	 /* what ksvc_in_irq answers */
	/* the handlers perf registered with the interrupt and trap code (NULL: none) */
	bool (*pmu_irq)(const uint64_t *regs, bool user);
	bool (*bp_hit)(bool watch, uint64_t addr, bool write, const uint64_t *regs, bool user,
		       bool irqs_off);
	void (*bp_suspend)(bool kernel, bool on);
	struct ksvc_irq_work *irq_work; /* queued, run by ksvc_fake_irq_work_run */
	int fasync_kills[8]; /* ksvc_kill_fasync calls by reason (POLL_IN..POLL_HUP) */
	int sig_perf; /* ksvc_send_sig_perf calls */
	uint64_t sig_perf_addr, sig_perf_data;
	uint32_t sig_perf_type;
	int bpf_prog_active[8]; /* ksvc_bpf_prog_active, by cpu % 8 */
	uint64_t per_cpu_offset[8]; /* ksvc_per_cpu_offset */
	/* ksvc_kallsyms_lookup_name's table, ended by a NULL name (NULL: no symbols) */
	const struct ksvc_fake_ksym {
		const char *name;
		uint64_t addr;
	} *ksyms;
	struct ksvc_timer *last_timer; /* the timer ksvc_timer_start armed last */
	int timers_live; /* ksvc_timer_alloc minus ksvc_timer_free */
	/* cgroups: a fixed tree (see KSVC_FAKE_CGROUP_*), the current task's, references held
	 * (ksvc_cgroup_get_fd minus ksvc_cgroup_put) and removed ones */
	int current_cgroup;
	int cgroup_refs[4];
	bool cgroup_dead[4];
};

extern struct ksvc_fake_state ksvc_fake;

/* Close fd as close(2) would (release runs when it was the last reference). */
int ksvc_fake_close(int fd);
/* The object behind fd, or NULL; *ops receives its ops when ops is not NULL. */
void *ksvc_fake_fd_priv(int fd, const struct ksvc_file_ops **ops);
void ksvc_fake_close_all(void);
/* ksvc_pidfd_pid: fds from this one on are pidfds of pid fd - base */
#define KSVC_FAKE_PIDFD_BASE 100000

/* The fake cgroup tree: 0 the root (id 1), 1 "/a" (id 10), 2 "/a/b" (id 11), 3 "/c" (id 12);
 * fd KSVC_FAKE_CGROUP_FD_BASE + i is cgroup i's directory. */
#define KSVC_FAKE_CGROUP_FD_BASE 200000
struct cgroup *ksvc_fake_cgroup(int index);

/* Name fake task index with a tid and tgid (ksvc_task_find finds it). */
struct ksvc_task *ksvc_fake_task(int index, int tid, int tgid);
/* Run the queued ksvc_irq_work (as the kernel's self-IPI would once interrupts are on). */
void ksvc_fake_irq_work_run(void);

/* Fire t as its interrupt would, with irq_regs / irq_user, if it is armed (true then). */
bool ksvc_fake_fire_timer(struct ksvc_timer *t);

/* What ksvc_cpu_has_lse_atomics answers (default false). */
extern bool ksvc_fake_lse;
/* ksvc_text_alloc works (default: only on an aarch64 host, where the JIT's code can run). */
extern bool ksvc_fake_text_ok;
