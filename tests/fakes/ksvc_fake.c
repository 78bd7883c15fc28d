/*
 * ksvc_fake.c - the kernel-services seam for host tests (link-time swap for kernel/ksvc.c).
 *
 * Memory comes from malloc so ASan sees every overrun; "user memory" is ordinary host memory,
 * except that ranges a test marks bad (ksvc_fake_bad_user) fail with -EFAULT.  The fd table is
 * a small array per process.  Tests steer identity and time through the ksvc_fake_* variables.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <kern/assert.h>
#include <kern/spinlock.h>
#include <kern/ksvc.h>
#include "ksvc_fake.h"

struct ksvc_fake_state ksvc_fake = {
	.tgid = 100,
	.tid = 100,
	.uid = 0,
	.gid = 0,
	.comm = "fake-task",
	.nr_cpus = 4,
	.cpu = 0,
	.clock_ns = 1000000,
	.clock_step_ns = 0,
	.rand_state = 12345,
	.fail_alloc_after = -1,
};

/* Counts an allocation against fail_alloc_after: true when this one must fail. */
static bool alloc_must_fail(void)
{
	if (ksvc_fake.fail_alloc_after < 0)
		return false;
	if (ksvc_fake.fail_alloc_after == 0)
		return true;
	ksvc_fake.fail_alloc_after--;
	return false;
}

void *ksvc_alloc(size_t size)
{
	if (alloc_must_fail())
		return NULL;
	return calloc(1, size ? size : 1);
}

void ksvc_free(void *p)
{
	free(p);
}

void *ksvc_alloc_pages(unsigned int order)
{
	void *p;

	if (alloc_must_fail())
		return NULL;
	if (posix_memalign(&p, KSVC_PAGE_SIZE, (size_t)KSVC_PAGE_SIZE << order))
		return NULL;
	memset(p, 0, (size_t)KSVC_PAGE_SIZE << order);
	return p;
}

void ksvc_free_pages(void *p, unsigned int order)
{
	(void)order;
	free(p);
}

uint64_t ksvc_virt_to_phys(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int user_range_bad(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	if (!p && n)
		return 1;
	for (int i = 0; i < KSVC_FAKE_MAX_BAD; i++) {
		uintptr_t lo = ksvc_fake.bad_user[i].start;
		uintptr_t hi = lo + ksvc_fake.bad_user[i].len;

		if (ksvc_fake.bad_user[i].len && a < hi && a + n > lo)
			return 1;
	}
	return 0;
}

int ksvc_copy_from_user(void *dst, const void *usrc, size_t n)
{
	if (user_range_bad(usrc, n))
		return -EFAULT;
	memcpy(dst, usrc, n);
	return 0;
}

int ksvc_copy_to_user(void *udst, const void *src, size_t n)
{
	if (user_range_bad(udst, n))
		return -EFAULT;
	memcpy(udst, src, n);
	return 0;
}

long ksvc_strncpy_from_user(char *dst, const void *usrc, size_t n)
{
	const char *s = usrc;

	for (size_t i = 0; i < n; i++) {
		if (user_range_bad(s + i, 1))
			return -EFAULT;
		dst[i] = s[i];
		if (!s[i])
			return (long)i;
	}
	return -ENAMETOOLONG;
}

int ksvc_read_nofault(void *dst, const void *src, size_t n, bool user)
{
	(void)user;
	if (user_range_bad(src, n))
		return -EFAULT;
	memcpy(dst, src, n);
	return 0;
}

int ksvc_read_pair_nofault(uint64_t out[2], uint64_t addr, bool user)
{
	return ksvc_read_nofault(out, (const void *)(uintptr_t)addr, 2 * sizeof(uint64_t), user);
}

/* The kernel's unwinder over the fake's reads: records upwards, lr != 0. */
unsigned int ksvc_walk_frames_nofault(uint64_t *out, unsigned int room, uint64_t fp, bool user)
{
	uint64_t rec[2];
	unsigned int n;

	for (n = 0; n < room && fp && !(fp & 7); fp = rec[0]) {
		if (ksvc_read_pair_nofault(rec, fp, user) || !rec[1])
			break;
		out[n++] = rec[1];
		if (rec[0] <= fp)
			break;
	}
	return n;
}

int ksvc_write_user_nofault(void *udst, const void *src, size_t n)
{
	if (!udst || (uintptr_t)udst < 4096)
		return -EFAULT;
	memcpy(udst, src, n);
	return 0;
}

int ksvc_signal_current(int sig, bool thread)
{
	(void)thread;
	if (sig < 0 || sig > 64)
		return -EINVAL;
	ksvc_fake.last_signal = sig;
	return 0;
}

uint64_t ksvc_clock_tai_ns(void)
{
	return 1700000000ull * 1000000000ull + ksvc_fake.clock_ns;
}

uint64_t ksvc_clock_ns(void)
{
	uint64_t t = ksvc_fake.clock_ns;

	ksvc_fake.clock_ns += ksvc_fake.clock_step_ns;
	return t;
}

unsigned int ksvc_cpu_id(void)
{
	ksvc_fake.cpu_id_migrate_depth = ksvc_fake.migrate_depth;
	return ksvc_fake.cpu;
}

void ksvc_migrate_disable(void)
{
	ksvc_fake.migrate_depth++;
	ksvc_fake.migrate_disables++;
}

void ksvc_migrate_enable(void)
{
	if (ksvc_fake.migrate_depth <= 0)
		kpanic("ksvc_migrate_enable without ksvc_migrate_disable");
	ksvc_fake.migrate_depth--;
}

unsigned int ksvc_nr_cpus(void)
{
	return ksvc_fake.nr_cpus;
}

int *ksvc_bpf_prog_active(void)
{
	return &ksvc_fake.bpf_prog_active[ksvc_fake.cpu % 8];
}

uint64_t ksvc_per_cpu_offset(unsigned int cpu)
{
	return ksvc_fake.per_cpu_offset[cpu % 8];
}

uint64_t ksvc_kallsyms_lookup_name(const char *name)
{
	for (const struct ksvc_fake_ksym *k = ksvc_fake.ksyms; k && k->name; k++)
		if (!strcmp(k->name, name))
			return k->addr;
	return 0;
}

int ksvc_current_tgid(void)
{
	return ksvc_fake.tgid;
}

int ksvc_current_tid(void)
{
	return ksvc_fake.tid;
}

uint64_t ksvc_current_pid_tgid(void)
{
	return (uint64_t)(uint32_t)ksvc_fake.tgid << 32 | (uint32_t)ksvc_fake.tid;
}

uint32_t ksvc_current_uid(void)
{
	return ksvc_fake.uid;
}

uint32_t ksvc_current_gid(void)
{
	return ksvc_fake.gid;
}

void ksvc_current_comm(char comm[16])
{
	memset(comm, 0, 16);
	strncpy(comm, ksvc_fake.comm, 15);
}

uint32_t ksvc_random_u32(void)
{
	/* xorshift32: deterministic across runs so failures reproduce. */
	uint32_t x = ksvc_fake.rand_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	ksvc_fake.rand_state = x;
	return x;
}

void ksvc_vprintk(const char *fmt, va_list ap)
{
	char line[512];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	size_t used = strlen(ksvc_fake.log);

	if (n > 0 && used + (size_t)n < sizeof(ksvc_fake.log))
		memcpy(ksvc_fake.log + used, line, (size_t)n + 1);
	if (getenv("KSVC_FAKE_VERBOSE"))
		fputs(line, stderr);
}

void ksvc_printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ksvc_vprintk(fmt, ap);
	va_end(ap);
}

unsigned long ksvc_irq_save(void)
{
	return ksvc_fake.irq_depth++;
}

void ksvc_irq_restore(unsigned long flags)
{
	ksvc_fake.irq_depth = (unsigned int)flags;
}

void arch_cpu_relax(void)
{
}

void kpanic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kpanic: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

/* ---- fd table ---- */

static struct {
	const struct ksvc_file_ops *ops;
	void *priv;
	int refs; /* descriptors pointing at this slot's file (dup) */
} fake_fds[KSVC_FAKE_MAX_FDS];

/* a reserved slot: taken (refs 1), no ops yet, so lookups see EBADF */
int ksvc_fd_reserve(const struct ksvc_file_ops *ops, bool cloexec, struct ksvc_fd_resv *r)
{
	for (int fd = 3; fd < KSVC_FAKE_MAX_FDS; fd++) {
		if (!fake_fds[fd].ops && !fake_fds[fd].refs) {
			fake_fds[fd].refs = 1;
			r->fd = fd;
			r->cloexec = cloexec;
			r->file = (void *)ops;
			return 0;
		}
	}
	return -EMFILE;
}

int ksvc_fd_commit(struct ksvc_fd_resv *r, void *priv)
{
	fake_fds[r->fd].ops = r->file;
	fake_fds[r->fd].priv = priv;
	r->file = NULL;
	return r->fd;
}

void ksvc_fd_cancel(struct ksvc_fd_resv *r)
{
	fake_fds[r->fd].refs = 0;
	r->file = NULL;
}

int ksvc_fd_install(const struct ksvc_file_ops *ops, void *priv, bool cloexec)
{
	struct ksvc_fd_resv r;
	int err = ksvc_fd_reserve(ops, cloexec, &r);

	return err ? err : ksvc_fd_commit(&r, priv);
}

int ksvc_fd_get(int fd, const struct ksvc_file_ops *ops, void **priv)
{
	if (fd < 0 || fd >= KSVC_FAKE_MAX_FDS || !fake_fds[fd].ops)
		return -EBADF;
	if (fake_fds[fd].ops != ops)
		return -EINVAL;
	if (ops->get)
		ops->get(fake_fds[fd].priv);
	*priv = fake_fds[fd].priv;
	return 0;
}

int ksvc_fake_close(int fd)
{
	if (fd < 0 || fd >= KSVC_FAKE_MAX_FDS || !fake_fds[fd].ops)
		return -EBADF;
	const struct ksvc_file_ops *ops = fake_fds[fd].ops;
	void *priv = fake_fds[fd].priv;

	fake_fds[fd].ops = NULL;
	fake_fds[fd].priv = NULL;
	fake_fds[fd].refs = 0;
	if (ops->release)
		ops->release(priv);
	return 0;
}

void *ksvc_fake_fd_priv(int fd, const struct ksvc_file_ops **ops)
{
	if (fd < 0 || fd >= KSVC_FAKE_MAX_FDS || !fake_fds[fd].ops)
		return NULL;
	if (ops)
		*ops = fake_fds[fd].ops;
	return fake_fds[fd].priv;
}

void ksvc_fake_close_all(void)
{
	for (int fd = 0; fd < KSVC_FAKE_MAX_FDS; fd++)
		if (fake_fds[fd].ops)
			ksvc_fake_close(fd);
}

/* ---- interrupted context: tests set ksvc_fake.in_irq, irq_regs (the user state too) ---- */

int ksvc_pmu_irq_register(bool (*fn)(const uint64_t *regs, bool user))
{
	if (ksvc_fake.pmu_irq)
		return -EBUSY;
	ksvc_fake.pmu_irq = fn;
	return 0;
}

void ksvc_hw_breakpoint_register(bool (*hit)(bool watch, uint64_t addr, bool write,
					     const uint64_t *regs, bool user, bool irqs_off),
				 void (*suspend)(bool kernel, bool on))
{
	ksvc_fake.bp_hit = hit;
	ksvc_fake.bp_suspend = suspend;
}

bool ksvc_in_irq(void)
{
	return ksvc_fake.in_irq;
}

void ksvc_user_regs(uint64_t regs[34])
{
	memcpy(regs, ksvc_fake.irq_regs, sizeof(ksvc_fake.irq_regs));
}

/* Tracepoints: ids 1..999 exist; uses are counted in ksvc_fake.trace_uses. */
int ksvc_trace_event_open(uint64_t id)
{
	return id >= 1 && id <= 999 ? 0 : -EINVAL;
}

void ksvc_trace_event_close(uint64_t id)
{
	(void)id;
}

void ksvc_trace_use(uint64_t id, int delta)
{
	(void)id;
	ksvc_fake.trace_uses += delta;
}

/* Filters: "fake" parses (and passes every record), anything else is EINVAL. */
int ksvc_trace_filter_new(uint64_t id, int probe, const char *str, struct trace_filter **out)
{
	(void)id;
	(void)probe;
	if (strcmp(str, "fake"))
		return -EINVAL;
	*out = (struct trace_filter *)calloc(1, 1);
	return *out ? 0 : -ENOMEM;
}

bool ksvc_trace_filter_match(const struct trace_filter *f, const void *rec, uint32_t size)
{
	(void)f;
	(void)rec;
	(void)size;
	return true;
}

void ksvc_trace_filter_free(struct trace_filter *f)
{
	free(f);
}

void ksvc_clock_info(uint32_t *freq_hz, uint64_t *counter, uint64_t *ns)
{
	*freq_hz = 62500000;
	*ns = ksvc_fake.clock_ns;
	*counter = ksvc_fake.clock_ns / 16;
}

/* ---- wait queues: counted wakeups ---- */

struct wait_queue {
	int wakeups;
};

struct wait_queue *ksvc_waitq_alloc(void)
{
	return calloc(1, sizeof(struct wait_queue));
}

void ksvc_waitq_free(struct wait_queue *wq)
{
	free(wq);
}

void ksvc_waitq_wake_all(struct wait_queue *wq)
{
	if (ksvc_fake.on_wake)
		ksvc_fake.on_wake(wq);
	wq->wakeups++;
	ksvc_fake.waitq_wakeups++;
}

void ksvc_poll_wait(struct ksvc_poll *pt, struct wait_queue *wq)
{
	(void)pt;
	(void)wq;
}

/* ---- tasks: a small table; task 0 is "current" unless a test says otherwise ---- */

struct ksvc_task {
	int tid, tgid;
	void *perf_slot;
	void *bpf_slot;
	uint64_t user_regs[34];
};

static struct ksvc_task fake_tasks[KSVC_FAKE_MAX_TASKS];

struct ksvc_task *ksvc_task_current(void)
{
	struct ksvc_task *t = &fake_tasks[ksvc_fake.current_task];

	t->tid = ksvc_fake.tid;
	t->tgid = ksvc_fake.tgid;
	return t;
}

struct ksvc_task *ksvc_task_find(int tid)
{
	for (int i = 0; i < KSVC_FAKE_MAX_TASKS; i++)
		if (fake_tasks[i].tid == tid && tid > 0)
			return &fake_tasks[i];
	return NULL;
}

struct ksvc_task *ksvc_fake_task(int index, int tid, int tgid)
{
	fake_tasks[index].tid = tid;
	fake_tasks[index].tgid = tgid;
	return &fake_tasks[index];
}

int ksvc_task_tid(const struct ksvc_task *t)
{
	return t->tid;
}

int ksvc_task_ppid(const struct ksvc_task *t)
{
	(void)t;
	return 1;
}

int ksvc_task_tgid(const struct ksvc_task *t)
{
	return t->tgid;
}

void **ksvc_task_perf_slot(struct ksvc_task *t)
{
	return &t->perf_slot;
}

void **ksvc_task_bpf_slot(struct ksvc_task *t)
{
	return &t->bpf_slot;
}

/* Fake pidfds: fd - KSVC_FAKE_PIDFD_BASE is the pid, for fds from that base on. */
int ksvc_pidfd_pid(int fd)
{
	return fd >= KSVC_FAKE_PIDFD_BASE ? fd - KSVC_FAKE_PIDFD_BASE : -EBADF;
}

/* The current fake task's one memory area (ksvc_fake.vma), as the kernel's struct vm_area
 * starts: a list link, then start and end. */
int ksvc_task_find_vma(struct ksvc_task *t, uint64_t addr, void (*fn)(void *vma, void *arg),
		       void *arg)
{
	if (t != &fake_tasks[ksvc_fake.current_task] || addr < ksvc_fake.vma.start ||
	    addr >= ksvc_fake.vma.end)
		return -ENOENT;
	fn(&ksvc_fake.vma, arg);
	return 0;
}

/* Every fake task's kernel frames are ksvc_fake.kstack; user frames only for the current one
 * (another's is -EOPNOTSUPP, as the kernel's) */
long ksvc_task_stack(struct ksvc_task *t, bool user, uint64_t *ips, unsigned int max)
{
	const uint64_t *from = user ? ksvc_fake.ustack : ksvc_fake.kstack;
	unsigned int n = user ? ksvc_fake.ustack_n : ksvc_fake.kstack_n;

	if (user && t != &fake_tasks[ksvc_fake.current_task])
		return -EOPNOTSUPP;
	if (n > max)
		n = max;
	memcpy(ips, from, n * sizeof(*ips));
	return n;
}

/* Reads ksvc_fake.umem (at umem_addr, umem_len bytes) for any task: the bytes inside it */
int ksvc_task_copy_from_user(struct ksvc_task *t, void *dst, uint64_t uaddr, uint32_t size)
{
	uint64_t end = ksvc_fake.umem_addr + ksvc_fake.umem_len;
	uint32_t n;

	(void)t;
	if (uaddr < ksvc_fake.umem_addr || uaddr >= end)
		return 0;
	n = end - uaddr < size ? (uint32_t)(end - uaddr) : size;
	memcpy(dst, (const char *)ksvc_fake.umem + (uaddr - ksvc_fake.umem_addr), n);
	return (int)n;
}

void *ksvc_task_user_regs(struct ksvc_task *t)
{
	return t->user_regs;
}

bool ksvc_task_live(const struct ksvc_task *t)
{
	return t >= fake_tasks && t < fake_tasks + KSVC_FAKE_MAX_TASKS;
}

int ksvc_task_running_cpu(const struct ksvc_task *t)
{
	return t == &fake_tasks[ksvc_fake.current_task] ? (int)ksvc_fake.cpu : -1;
}

bool ksvc_cpu_online(unsigned int cpu)
{
	return cpu < ksvc_fake.nr_cpus;
}

void ksvc_run_on_cpu(unsigned int cpu, void (*fn)(void *arg), void *arg)
{
	unsigned int saved = ksvc_fake.cpu;

	ksvc_fake.cpu = cpu;
	fn(arg);
	ksvc_fake.cpu = saved;
}

/* ---- timers: tests fire them by hand (ksvc_fake_fire_timer) ---- */

struct ksvc_timer {
	ksvc_timer_fn *fn;
	void *arg;
	bool armed;
	uint64_t delay_ns;
};

struct ksvc_timer *ksvc_timer_alloc(ksvc_timer_fn *fn, void *arg)
{
	struct ksvc_timer *t = calloc(1, sizeof(*t));

	if (t) {
		t->fn = fn;
		t->arg = arg;
		ksvc_fake.timers_live++;
	}
	return t;
}

void ksvc_timer_free(struct ksvc_timer *t)
{
	if (t)
		ksvc_fake.timers_live--;
	if (ksvc_fake.last_timer == t)
		ksvc_fake.last_timer = NULL;
	free(t);
}

void ksvc_timer_start(struct ksvc_timer *t, uint64_t delay_ns)
{
	t->armed = true;
	t->delay_ns = delay_ns;
	ksvc_fake.last_timer = t;
}

void ksvc_timer_cancel(struct ksvc_timer *t)
{
	t->armed = false;
}

bool ksvc_timer_try_cancel(struct ksvc_timer *t)
{
	bool was = t->armed;

	t->armed = false;
	return was;
}

bool ksvc_fake_fire_timer(struct ksvc_timer *t)
{
	if (!t || !t->armed)
		return false;
	t->armed = false;
	ksvc_fake.in_irq = true;
	t->fn(t->arg, ksvc_fake.irq_regs, ksvc_fake.irq_user);
	ksvc_fake.in_irq = false;
	return true;
}

/* ---- deferred work, O_ASYNC and sigtrap: recorded, run on demand ---- */

bool ksvc_irq_work_queue(struct ksvc_irq_work *w)
{
	if (atomic_load(&w->state) & 1u)
		return false;
	atomic_fetch_or(&w->state, 1u);
	w->next = ksvc_fake.irq_work;
	ksvc_fake.irq_work = w;
	return true;
}

void ksvc_fake_irq_work_run(void)
{
	struct ksvc_irq_work *w = ksvc_fake.irq_work;

	ksvc_fake.irq_work = NULL;
	while (w) {
		struct ksvc_irq_work *next = w->next;

		atomic_store(&w->state, 0u);
		w->fn(w);
		w = next;
	}
}

void ksvc_irq_work_sync(struct ksvc_irq_work *w)
{
	if (atomic_load(&w->state))
		ksvc_fake_irq_work_run();
}

void ksvc_kill_fasync(struct ksvc_fasync *fa, int reason)
{
	(void)fa;
	if (reason >= 0 && reason < 8)
		ksvc_fake.fasync_kills[reason]++;
}

void ksvc_send_sig_perf(uint64_t addr, uint32_t type, uint64_t data)
{
	ksvc_fake.sig_perf++;
	ksvc_fake.sig_perf_addr = addr;
	ksvc_fake.sig_perf_type = type;
	ksvc_fake.sig_perf_data = data;
}

/*
 * JIT text: an anonymous mapping written, then made read+execute.  The code is aarch64: on any
 * other host the fake refuses (NULL) unless a test asks for it, so that programs loaded by the
 * host tests stay interpreted.
 */
#if defined(__aarch64__)
bool ksvc_fake_text_ok = true;
#else
bool ksvc_fake_text_ok = false;
#endif

void *ksvc_text_alloc(const void *code, size_t len)
{
	void *p;

	if (!ksvc_fake_text_ok)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code, len);
	if (mprotect(p, len, PROT_READ | PROT_EXEC)) {
		munmap(p, len);
		return NULL;
	}
	__builtin___clear_cache((char *)p, (char *)p + len);
	return p;
}

void ksvc_text_free(void *text, size_t len)
{
	if (text)
		munmap(text, len);
}

bool ksvc_fake_lse;

bool ksvc_cpu_has_lse_atomics(void)
{
	return ksvc_fake_lse;
}

/* The host fake's task is no TPIDR_EL1 record: the JIT calls the helper. */
bool ksvc_current_layout(struct ksvc_current_layout *l)
{
	(void)l;
	return false;
}

/* Tracepoint names: "fake_tp" for every valid id. */
const char *ksvc_trace_event_name(uint64_t id)
{
	return ksvc_trace_event_open(id) ? NULL : "fake_tp";
}

/* Other tasks' descriptors: the host fake has one task, whose tid is ksvc_current_tid(). */
int ksvc_task_fd_get(int tid, int fd, const struct ksvc_file_ops *ops, void **priv)
{
	if (tid != ksvc_current_tid())
		return -ENOENT;
	return ksvc_fd_get(fd, ops, priv);
}

/* No bpf filesystem on the host: pins fail as outside one. */
int ksvc_bpffs_pin(const void *upath, const struct ksvc_file_ops *ops, void *priv)
{
	(void)upath, (void)ops, (void)priv;
	return -EPERM;
}

int ksvc_bpffs_get(const void *upath, const struct ksvc_file_ops **ops, void **priv)
{
	(void)upath, (void)ops, (void)priv;
	return -ENOENT;
}

/* ---- cgroups: the fixed tree of ksvc_fake.h ---- */

struct cgroup {
	int index, parent, level;
	uint64_t id;
};

static struct cgroup fake_cgroups[4] = {
	{ 0, -1, 0, 1 },
	{ 1, 0, 1, 10 },
	{ 2, 1, 2, 11 },
	{ 3, 0, 1, 12 },
};

struct cgroup *ksvc_fake_cgroup(int index)
{
	return &fake_cgroups[index];
}

int ksvc_cgroup_get_fd(int fd, struct cgroup **out)
{
	int i = fd - KSVC_FAKE_CGROUP_FD_BASE;

	if (i < 0 || i >= 4)
		return -EBADF;
	if (ksvc_fake.cgroup_dead[i])
		return -ENOENT;
	ksvc_fake.cgroup_refs[i]++;
	*out = &fake_cgroups[i];
	return 0;
}

void ksvc_cgroup_put(struct cgroup *cg)
{
	if (cg)
		ksvc_fake.cgroup_refs[cg->index]--;
}

static struct cgroup *fake_ancestor(int level)
{
	struct cgroup *cg = &fake_cgroups[ksvc_fake.current_cgroup];

	if (level < 0 || level > cg->level)
		return NULL;
	while (cg->level > level)
		cg = &fake_cgroups[cg->parent];
	return cg;
}

bool ksvc_cgroup_current_under(struct cgroup *cg)
{
	return fake_ancestor(cg->level) == cg;
}

uint64_t ksvc_cgroup_current_id(void)
{
	return fake_cgroups[ksvc_fake.current_cgroup].id;
}

/* perf_event state: the root's only, as the kernel's */
int ksvc_cgroup_perf_get_fd(int fd, struct cgroup **out)
{
	int err = ksvc_cgroup_get_fd(fd, out);

	if (!err && (*out)->index != 0) {
		ksvc_cgroup_put(*out);
		err = -ENOENT;
	}
	return err;
}

uint64_t ksvc_cgroup_current_perf_id(void)
{
	return fake_cgroups[0].id;
}

uint64_t ksvc_cgroup_current_ancestor_id(int level)
{
	struct cgroup *a = fake_ancestor(level);

	return a ? a->id : 0;
}

/* Uprobes: "/bin/hot" exists, at 4-aligned offsets below 4096 (2-aligned reference counter
 * offsets); registrations are counted in
 * ksvc_fake.uprobe_regs. */
struct ksvc_uprobe {
	int dummy;
};
static struct ksvc_uprobe fake_uprobe;

int ksvc_uprobe_register(const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool ret,
			 struct ksvc_uprobe **out)
{
	(void)ret;
	if (strcmp(path, "/bin/hot"))
		return -ENOENT;
	if (offset >= 4096 || (offset & 3) || (ref_ctr_offset & 1))
		return -EINVAL;
	ksvc_fake.uprobe_regs++;
	*out = &fake_uprobe;
	return 0;
}

void ksvc_uprobe_dup(struct ksvc_uprobe *u, bool ret)
{
	(void)u;
	(void)ret;
	ksvc_fake.uprobe_regs++;
}

void ksvc_uprobe_unregister(struct ksvc_uprobe *u, bool ret)
{
	(void)u;
	(void)ret;
	ksvc_fake.uprobe_regs--;
}

/* Kprobes: none in the host tests. */
int ksvc_kprobe_register(const char *sym, uint64_t off, uint64_t addr, bool ret,
			 struct ksvc_kprobe **out)
{
	(void)sym;
	(void)off;
	(void)addr;
	(void)ret;
	(void)out;
	return -ENOENT;
}

void ksvc_kprobe_dup(struct ksvc_kprobe *k, bool ret)
{
	(void)ret;
	(void)k;
}

void ksvc_kprobe_unregister(struct ksvc_kprobe *k, bool ret)
{
	(void)ret;
	(void)k;
}

uint64_t ksvc_kprobe_running_addr(void)
{
	return ksvc_fake.kprobe_running_addr;
}
