/*
 * ksvc.c - the kernel's implementation of the services seam (include/kern/ksvc.h) that the
 * portable modules (perf/, bpf/, ...) are written against.  tests/fakes/ksvc_fake.c is the
 * host twin.
 */
#include <arch/arch.h>
#include <arch/debug.h>
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <kern/clock.h>
#include <kern/errno.h>
#include <kern/irq.h>
#include <kern/irq_desc.h>
#include <kern/ksvc.h>
#include <kern/format.h>
#include <kern/ksym.h>
#include <kern/mm.h>
#include <kern/percpu.h>
#include <kern/platform.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/time.h>
#include <kern/trace.h>
#include <kern/uprobes.h>
#include <kern/trap.h>
#include <kern/proc.h>
#include <kern/vm.h>
#include <kern/mutex.h>
#include <kern/signal.h>
#include <asm/signal.h>
#include <asm/siginfo.h>
#include <arch/trapframe.h>

void *ksvc_alloc(size_t size)
{
	return kmalloc(size);
}

void ksvc_free(void *p)
{
	kfree(p);
}

void *ksvc_alloc_pages(unsigned int order)
{
	return alloc_pages(order);
}

void ksvc_free_pages(void *p, unsigned int order)
{
	free_pages(p, order);
}

uint64_t ksvc_virt_to_phys(const void *p)
{
	return virt_to_phys(p);
}

static bool user_range_ok(const void *p, size_t n)
{
	uint64_t a = (uint64_t)p;

	return a < USER_VA_END && n <= USER_VA_END - a;
}

int ksvc_copy_from_user(void *dst, const void *usrc, size_t n)
{
	if (!user_range_ok(usrc, n))
		return -EFAULT;
	return arch_copy_user(dst, usrc, n) ? -EFAULT : 0;
}

int ksvc_copy_to_user(void *udst, const void *src, size_t n)
{
	if (!user_range_ok(udst, n))
		return -EFAULT;
	return arch_copy_user(udst, src, n) ? -EFAULT : 0;
}

long ksvc_strncpy_from_user(char *dst, const void *usrc, size_t n)
{
	if ((uint64_t)usrc >= USER_VA_END)
		return -EFAULT;
	if (n > USER_VA_END - (uint64_t)usrc)
		n = USER_VA_END - (uint64_t)usrc;
	long r = arch_strncpy_user(dst, usrc, n);

	if (r < 0)
		return -EFAULT;
	if ((size_t)r == n)
		return -ENAMETOOLONG;
	return r;
}

int ksvc_read_nofault(void *dst, const void *src, size_t n, bool user)
{
	uint64_t a = (uint64_t)src;

	if (user ? !user_range_ok(src, n) : (a < PAGE_OFFSET || a + n < a))
		return -EFAULT;
	/* In IRQ context a user page fault must not be resolved (it may sleep): the fault
	 * handler sees preempt_count and takes the fixup instead. */
	current_task()->preempt_count++;
	size_t left = arch_copy_user(dst, src, n);

	current_task()->preempt_count--;
	return left ? -EFAULT : 0;
}

int ksvc_write_user_nofault(void *udst, const void *src, size_t n)
{
	if (!user_range_ok(udst, n))
		return -EFAULT;
	current_task()->preempt_count++; /* as above: the fault takes the fixup */
	size_t left = arch_copy_user(udst, src, n);

	current_task()->preempt_count--;
	return left ? -EFAULT : 0;
}

int arch_read_pair(uint64_t dst[2], const void *src); /* uaccess.S */

int ksvc_read_pair_nofault(uint64_t out[2], uint64_t addr, bool user)
{
	struct task *t;
	int err;

	if (addr & 15)
		return ksvc_read_nofault(out, (const void *)addr, 2 * sizeof(uint64_t), user);
	if (user ? addr >= USER_VA_END : addr < PAGE_OFFSET)
		return -EFAULT; /* 16-aligned: the pair does not cross the end of either range */
	t = current_task();
	t->preempt_count++; /* as ksvc_read_nofault: a user fault takes the fixup */
	err = arch_read_pair(out, (const void *)addr);
	t->preempt_count--;
	return err ? -EFAULT : 0;
}

unsigned int ksvc_walk_frames_nofault(uint64_t *out, unsigned int room, uint64_t fp, bool user)
{
	struct task *t = current_task();
	/* where a record may start: in the space, not 0, the pair not past its end */
	uint64_t lo = user ? 8 : PAGE_OFFSET, span = (user ? USER_VA_END - 16 : ~15ull) - lo;
	unsigned int n = 0;
	uint64_t rec[2];

	t->preempt_count++; /* as ksvc_read_nofault: a user fault takes the fixup */
	while (n < room && !(fp & 7) && fp - lo <= span) {
		/* 16-aligned: one pair in one page; else the pair may cross into the next one */
		if ((fp & 15) ? arch_copy_user(rec, (const void *)fp, sizeof(rec)) != 0
			      : arch_read_pair(rec, (const void *)fp) != 0)
			break;
		if (!rec[1])
			break;
		out[n++] = rec[1];
		if (rec[0] <= fp)
			break;
		fp = rec[0];
	}
	t->preempt_count--;
	return n;
}

uint64_t ksvc_clock_ns(void)
{
	return time_ns();
}

uint64_t ksvc_clock_tai_ns(void)
{
	return clock_realtime_ns();
}

unsigned int ksvc_cpu_id(void)
{
	return this_cpu()->id;
}

void ksvc_migrate_disable(void)
{
	migrate_disable();
}

void ksvc_migrate_enable(void)
{
	migrate_enable();
}

unsigned int ksvc_nr_cpus(void)
{
	return nr_cpus_possible;
}

/* Linux's kernel/bpf/syscall.c bpf_prog_active: the BPF recursion guard (perf/bpf_attach.c) */
DEFINE_PER_CPU(int, bpf_prog_active);

int *ksvc_bpf_prog_active(void)
{
	return this_cpu_ptr(&bpf_prog_active);
}

uint64_t ksvc_per_cpu_offset(unsigned int cpu)
{
	return cpu < MAX_CPUS ? __per_cpu_offset[cpu] : 0;
}

uint64_t ksvc_kallsyms_lookup_name(const char *name)
{
	uint64_t addr;

	return ksym_addr_any(name, &addr) ? addr : 0;
}

int ksvc_current_tgid(void)
{
	struct task *t = current_task();

	return proc_tgid(t);
}

int ksvc_current_tid(void)
{
	return current_task()->tid;
}

uint64_t ksvc_current_pid_tgid(void)
{
	struct task *t = current_task();

	return (uint64_t)(uint32_t)proc_tgid(t) << 32 | (uint32_t)t->tid;
}

uint32_t ksvc_current_uid(void)
{
	return 0;
}

uint32_t ksvc_current_gid(void)
{
	return 0;
}

void ksvc_current_comm(char comm[16])
{
	memcpy(comm, current_task()->comm, 16);
	comm[15] = 0;
}

static uint64_t rand_state = 0x9e3779b97f4a7c15ull;

void ksvc_seed_random(uint64_t seed);
void ksvc_seed_random(uint64_t seed)
{
	rand_state ^= seed ? seed : time_counter();
}

uint32_t ksvc_random_u32(void)
{
	/* splitmix64 step; racy updates between CPUs only make it more random. */
	uint64_t z = (rand_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

void ksvc_vprintk(const char *fmt, va_list ap)
{
	vprintk(fmt, ap);
}

void ksvc_printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}

unsigned long ksvc_irq_save(void)
{
	unsigned long f = read_sysreg(daif);

	__asm__ volatile("msr daifset, #2" ::: "memory");
	return f;
}

void ksvc_irq_restore(unsigned long flags)
{
	write_sysreg(daif, flags);
}

void arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* ---- the handlers perf registers, and the interrupted context ---- */

extern struct platform boot_platform;

static bool (*pmu_irq_fn)(const uint64_t *regs, bool user);

static bool pmu_irq(uint32_t intid, struct trapframe *tf, void *arg)
{
	(void)intid;
	(void)arg;
	_Static_assert(sizeof(*tf) >= 34 * sizeof(uint64_t), "user_pt_regs order");
	return pmu_irq_fn((const uint64_t *)tf, trapframe_from_user(tf));
}

int ksvc_pmu_irq_register(bool (*fn)(const uint64_t *regs, bool user))
{
	if (!boot_platform.has_pmu)
		return -ENODEV;
	if (pmu_irq_fn)
		return -EBUSY;
	pmu_irq_fn = fn;
	return irq_request(boot_platform.pmu_intid, IRQ_VIRQ_ARM_PMU, "arm-pmu", pmu_irq, NULL);
}

void ksvc_hw_breakpoint_register(bool (*hit)(bool watch, uint64_t addr, bool write,
					     const uint64_t *regs, bool user, bool irqs_off),
				 void (*suspend)(bool kernel, bool on))
{
	debug_hw_register(hit, suspend);
}

bool ksvc_in_irq(void)
{
	return this_cpu()->irq_tf != NULL;
}

void ksvc_user_regs(uint64_t regs[34])
{
	struct uthread *ut = current_uthread();

	if (ut)
		memcpy(regs, ut->tf, 34 * sizeof(uint64_t));
	else
		memset(regs, 0, 34 * sizeof(uint64_t));
}

int ksvc_trace_event_open(uint64_t id)
{
	return trace_event_by_id(id) ? 0 : uprobe_event_open(id);
}

void ksvc_trace_event_close(uint64_t id)
{
	if (!trace_event_by_id(id))
		uprobe_event_close(id);
}

const char *ksvc_trace_event_name(uint64_t id)
{
	const struct trace_event *ev = trace_event_by_id(id);

	return ev ? ev->name : NULL;
}

void ksvc_trace_use(uint64_t id, int delta)
{
	trace_use(id, delta);
}

static const struct trace_field probe_fields[2][2] = {
	{ { "unsigned long __probe_ip", "__probe_ip", 8, 8, 0 } },
	{ { "unsigned long __probe_func", "__probe_func", 8, 8, 0 },
	  { "unsigned long __probe_ret_ip", "__probe_ret_ip", 16, 8, 0 } },
};

/* A uprobe_events/kprobe_events event's fields: the probe's, then its fetch arguments. */
struct uev_fields {
	uint64_t id;
	unsigned int n; /* 0: no such event */
	struct trace_field f[2 + PROBE_ARGS_MAX];
	char decl[PROBE_ARGS_MAX][48];
	char name[PROBE_ARGS_MAX][24]; /* info is the walk's copy: gone after the callback */
};

static void uev_fields_of(const struct uprobe_event_info *info, void *arg)
{
	struct uev_fields *u = arg;

	if (info->id != u->id)
		return;
	u->n = 1u + info->ret;
	memcpy(u->f, probe_fields[info->ret], sizeof(u->f[0]) * u->n);
	for (unsigned int i = 0; i < info->nargs; i++) {
		const struct probe_arg *a = &info->args[i];
		struct trace_field *f = &u->f[u->n++];

		if (a->type == 'S')
			ksnprintf(u->decl[i], sizeof(u->decl[i]), "__data_loc char[] %s", a->name);
		else
			ksnprintf(u->decl[i], sizeof(u->decl[i]), "%c%u %s", a->type == 's' ? 's' : 'u',
				  a->size * 8u, a->name);
		memcpy(u->name[i], a->name, sizeof(u->name[i]));
		*f = (struct trace_field){ u->decl[i], u->name[i], a->offset, a->size, a->type == 's' };
	}
}

int ksvc_trace_filter_new(uint64_t id, int probe, const char *str, struct trace_filter **out)
{
	struct trace_filter_err err;
	const struct trace_event *ev;
	struct uev_fields *u;
	int ret;

	/* a kprobe/uprobe PMU event's trace event is perf's own, never added to tracefs, whose
	 * adding defines the fields: only the common and generic ones (create_local_trace_*) */
	if (probe)
		return trace_filter_parse(NULL, 0, str, out, &err);
	ev = trace_event_by_id(id);
	if (ev)
		return trace_filter_parse(ev->fields, ev->nr_fields, str, out, &err);
	u = kmalloc(sizeof(*u)); /* a uprobe_events or kprobe_events event */
	if (!u)
		return -ENOMEM;
	u->id = id;
	u->n = 0;
	uprobe_events_each(uev_fields_of, u);
	ret = u->n ? trace_filter_parse(u->f, u->n, str, out, &err) : -EINVAL;
	kfree(u);
	return ret;
}

bool ksvc_trace_filter_match(const struct trace_filter *f, const void *rec, uint32_t size)
{
	char comm[16];

	if (!f)
		return true;
	ksvc_current_comm(comm);
	return trace_filter_match(f, rec, size, comm, ksvc_cpu_id());
}

void ksvc_trace_filter_free(struct trace_filter *f)
{
	trace_filter_free(f);
}

void ksvc_clock_info(uint32_t *freq_hz, uint64_t *counter, uint64_t *ns)
{
	unsigned long f = ksvc_irq_save();

	*freq_hz = time_counter_freq();
	*counter = time_counter();
	*ns = time_ns();
	ksvc_irq_restore(f);
}

/* ---- wait queues ---- */

struct wait_queue *ksvc_waitq_alloc(void)
{
	struct wait_queue *wq = kmalloc(sizeof(*wq));

	if (wq)
		waitq_init(wq);
	return wq;
}

void ksvc_waitq_free(struct wait_queue *wq)
{
	kfree(wq);
}

void ksvc_waitq_wake_all(struct wait_queue *wq)
{
	waitq_wake_all(wq);
}

/* ---- tasks and CPUs for perf: struct ksvc_task is struct task ---- */

struct ksvc_task *ksvc_task_current(void)
{
	return (struct ksvc_task *)current_task();
}

struct ksvc_task *ksvc_task_find(int tid)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = tid > 0 ? proc_find_thread_locked(tid) : NULL;

	spin_unlock_irqrestore(&proc_tree_lock, f);
	return (struct ksvc_task *)ut;
}

int ksvc_task_tid(const struct ksvc_task *t)
{
	return ((const struct task *)t)->tid;
}

int ksvc_task_tgid(const struct ksvc_task *t)
{
	return proc_tgid((const struct task *)t);
}

int ksvc_task_ppid(const struct ksvc_task *kt)
{
	const struct proc *p = ((const struct task *)kt)->proc;

	return p ? READ_ONCE(p->ppid) : 0;
}

void **ksvc_task_perf_slot(struct ksvc_task *t)
{
	return &((struct task *)t)->perf_ctx;
}

void **ksvc_task_bpf_slot(struct ksvc_task *t)
{
	return &((struct task *)t)->bpf_storage;
}

/*
 * Another task's memory: its mm read under its process's lock (exec and exit swap it there),
 * either locked at once (find_vma: the final mm_put waits for that lock before it tears the
 * mm down, so it stays while held) or with a reference (copy_from_user_task).
 */
struct task_mm {
	bool lock; /* trylock the mm (else take a reference) */
	struct mm *mm;
};

static int task_mm_take(struct task *t, void *arg)
{
	struct task_mm *m = arg;
	struct proc *p = t->proc;
	int r = -ENOENT;

	if (!p || spin_is_held_by_me(&p->lock)) /* run from inside it: a kprobe's program */
		return -ENOENT;
	unsigned long f = spin_lock_irqsave(&p->lock);

	if (p->mm) {
		r = 0;
		if (!m->lock)
			mm_get(p->mm);
		else if (!kmutex_trylock(&p->mm->lock))
			r = -EBUSY;
		m->mm = p->mm;
	}
	spin_unlock_irqrestore(&p->lock, f);
	return r;
}

/*
 * Linux's mmap_unlock_irq_work: find_vma called with interrupts masked (a program on a timer
 * or PMU overflow) leaves the mm locked until an irq_work unlocks it; a second call on that
 * CPU before the work ran is -EBUSY.
 */
struct vma_unlock {
	struct ksvc_irq_work w; /* first */
	struct mm *mm; /* locked, waiting for w; NULL when idle */
	struct task *owner;
};
static struct vma_unlock vma_unlocks[PLATFORM_MAX_CPUS];

static void vma_unlock_run(struct ksvc_irq_work *w)
{
	struct vma_unlock *u = (struct vma_unlock *)w;
	struct mm *mm = u->mm;

	kmutex_unlock_for(&mm->lock, u->owner);
	WRITE_ONCE(u->mm, NULL);
}

int ksvc_task_find_vma(struct ksvc_task *kt, uint64_t addr, void (*fn)(void *vma, void *arg),
		       void *arg)
{
	struct task *t = (struct task *)kt;
	struct task_mm m = { .lock = true };
	struct vm_area *v;
	struct vma_unlock *u = NULL;
	int r;

	if (read_sysreg(daif) & DAIF_IRQ) {
		u = &vma_unlocks[this_cpu()->id % PLATFORM_MAX_CPUS];
		if (READ_ONCE(u->mm))
			return -EBUSY;
	}

	if (t == current_task()) {
		struct proc *p = t->proc;

		m.mm = p ? p->mm : NULL;
		if (!m.mm)
			return -ENOENT;
		if (!kmutex_trylock(&m.mm->lock))
			return -EBUSY;
	} else {
		r = sched_with_live_task(t, task_mm_take, &m);
		if (r)
			return r == -ESRCH ? -ENOENT : r;
	}
	v = vm_find_locked(m.mm, addr);
	if (v)
		fn(v, arg);
	if (u) {
		u->w.fn = vma_unlock_run;
		u->owner = current_task();
		WRITE_ONCE(u->mm, m.mm);
		ksvc_irq_work_queue(&u->w);
	} else {
		kmutex_unlock(&m.mm->lock);
	}
	return v ? 0 : -ENOENT;
}

int ksvc_task_copy_from_user(struct ksvc_task *kt, void *dst, uint64_t uaddr, uint32_t size)
{
	struct task_mm m = { .lock = false };
	uint64_t n;

	if (sched_with_live_task((struct task *)kt, task_mm_take, &m))
		return 0;
	n = vm_access_remote(m.mm, uaddr, dst, size, false);
	mm_put(m.mm);
	return (int)n;
}

static int task_live(struct task *t, void *arg)
{
	if (arg) /* the frame at the top of its kernel stack (a kernel thread's stays unused) */
		*(void **)arg = (char *)t->kstack + KSTACK_SIZE - sizeof(struct trapframe);
	return 0;
}

bool ksvc_task_live(const struct ksvc_task *kt)
{
	struct task *t = (struct task *)kt;

	return t == current_task() || !sched_with_live_task(t, task_live, NULL);
}

void *ksvc_task_user_regs(struct ksvc_task *kt)
{
	struct task *t = (struct task *)kt;
	void *regs = NULL;

	if (t == current_task())
		task_live(t, &regs);
	else
		sched_with_live_task(t, task_live, &regs);
	return regs;
}

struct task_stack {
	bool user;
	uint64_t *ips;
	unsigned int max, n;
};

static int task_stack_walk(struct task *t, void *arg)
{
	struct task_stack *s = arg;

	if (s->user) {
		struct uthread *ut = task_uthread(t);

		if (!ut || !trapframe_from_user(ut->tf))
			return -EFAULT;
		if (t != current_task()) /* Linux 6.1 walks no other task's user stack */
			return -EOPNOTSUPP;
		/* perf_callchain_user on the user registers: the pc, then the frame records from
		 * x29 */
		s->ips[s->n++] = ut->tf->pc;
		s->n += ksvc_walk_frames_nofault(s->ips + 1, s->max - 1, ut->tf->x[29], true);
		return 0;
	}
	/* the return into the scheduler cpu_switch saved, then the records up its stack */
	s->ips[s->n++] = t->ctx.lr;
	s->n += ksvc_walk_frames_nofault(s->ips + 1, s->max - 1, t->ctx.fp, false);
	return 0;
}

long ksvc_task_stack(struct ksvc_task *kt, bool user, uint64_t *ips, unsigned int max)
{
	struct task *t = (struct task *)kt;
	struct task_stack s = { .user = user, .ips = ips, .max = max };
	int r;

	if (!max)
		return 0;
	if (t == current_task() && !user) /* from here: this function's caller first */
		return ksvc_walk_frames_nofault(ips, max, (uint64_t)__builtin_frame_address(0),
						false);
	r = sched_with_live_task(t, task_stack_walk, &s);
	if (r)
		return r == -ESRCH ? -EFAULT : r;
	return s.n;
}

int ksvc_task_running_cpu(const struct ksvc_task *kt)
{
	const struct task *t = (const struct task *)kt;
	unsigned int cpu = READ_ONCE(t->cpu);

	/* on_cpu, not cpus[cpu].current: __schedule sets on_cpu before it calls
	 * perf_task_switch and current only after.  A task between the two has had its perf
	 * context looked at already, so it must count as running: whoever installs an event
	 * then asks that CPU, which answers once the switch is done.  (Checking current too
	 * lost such installs: the event stayed off until the task was next switched in.) */
	if (!atomic_load(&t->on_cpu) || cpu >= nr_cpus_possible)
		return -1;
	return (int)cpu;
}

bool ksvc_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpus_possible && atomic_load(&cpus[cpu].online);
}

void ksvc_run_on_cpu(unsigned int cpu, void (*fn)(void *arg), void *arg)
{
	smp_call(cpu, fn, arg, true);
}

/* ---- deferred work: a per-CPU list run from a self-IPI (Linux's irq_work) ---- */

#define IW_QUEUED 1u
#define IW_RUNNING 2u

static struct ksvc_irq_work *irq_work_list[MAX_CPUS];

bool ksvc_irq_work_queue(struct ksvc_irq_work *w)
{
	unsigned int st = atomic_load(&w->state);

	do {
		if (st & IW_QUEUED)
			return false;
	} while (!atomic_compare_exchange_weak(&w->state, &st, st | IW_QUEUED));
	unsigned long f = ksvc_irq_save();
	unsigned int cpu = this_cpu()->id;
	bool first = !irq_work_list[cpu];

	w->next = irq_work_list[cpu];
	irq_work_list[cpu] = w;
	if (first)
		ipi_send(cpu, IPI_WORK);
	ksvc_irq_restore(f);
	return true;
}

/* The IPI_WORK handler (gic.c): interrupts masked. */
void irq_work_run(void)
{
	unsigned int cpu = this_cpu()->id;
	struct ksvc_irq_work *w = irq_work_list[cpu];

	irq_work_list[cpu] = NULL;
	while (w) {
		struct ksvc_irq_work *next = w->next;

		/* queued -> running: from here it may be queued again (by its own fn too) */
		atomic_fetch_xor(&w->state, IW_QUEUED | IW_RUNNING);
		w->fn(w);
		atomic_fetch_and(&w->state, ~IW_RUNNING);
		w = next;
	}
}

void ksvc_irq_work_sync(struct ksvc_irq_work *w)
{
	while (atomic_load(&w->state))
		arch_cpu_relax();
}

/* ---- perf's synchronous SIGTRAP (Linux's send_sig_perf) ---- */

void ksvc_send_sig_perf(uint64_t addr, uint32_t type, uint64_t data)
{
	struct uthread *ut = current_uthread();
	struct ksiginfo info;

	if (!ut || proc_exiting())
		return;
	memset(&info, 0, sizeof(info));
	info.signo = SIGTRAP;
	info.code = TRAP_PERF;
	info.addr = addr;
	info.perf_data = data;
	info.perf_type = type;
	/* a blocked SIGTRAP is delivered later: asynchronous to the event */
	info.perf_flags = (READ_ONCE(ut->sigmask) >> (SIGTRAP - 1)) & 1 ? TRAP_PERF_FLAG_ASYNC : 0;
	signal_send_thread(ut, SIGTRAP, &info);
}

int ksvc_signal_current(int sig, bool thread)
{
	struct uthread *ut = current_uthread();
	struct ksiginfo info;

	if (!ut || proc_exiting() || ksvc_current_tgid() == 1)
		return -EPERM;
	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (!sig)
		return 0;
	/* Linux's SEND_SIG_PRIV: SI_KERNEL from pid 0, uid 0 */
	memset(&info, 0, sizeof(info));
	info.signo = sig;
	info.code = SI_KERNEL;
	return thread ? signal_send_thread(ut, sig, &info) : signal_send_proc(ut->task.proc, sig, &info);
}

/* ---- one-shot timers over ktimer ---- */

struct ksvc_timer {
	struct ktimer kt;
	ksvc_timer_fn *fn;
	void *arg;
};

/* ktimers run from the timer interrupt (kernel/time.c), whose frame trap_irq recorded */
static void ksvc_timer_fire(struct ktimer *kt)
{
	struct ksvc_timer *t = container_of(kt, struct ksvc_timer, kt);
	struct trapframe *tf = this_cpu()->irq_tf;

	_Static_assert(sizeof(*tf) >= 34 * sizeof(uint64_t), "user_pt_regs order");
	t->fn(t->arg, (const uint64_t *)tf, trapframe_from_user(tf));
}

struct ksvc_timer *ksvc_timer_alloc(ksvc_timer_fn *fn, void *arg)
{
	struct ksvc_timer *t = kmalloc(sizeof(*t));

	if (!t)
		return NULL;
	ktimer_init(&t->kt, ksvc_timer_fire);
	t->fn = fn;
	t->arg = arg;
	return t;
}

void ksvc_timer_free(struct ksvc_timer *t)
{
	if (!t)
		return;
	ktimer_cancel(&t->kt);
	kdebug_assert(t->kt.cpu < 0); /* freed while on a CPU's list: a use after free */
	kfree(t);
}

void ksvc_timer_start(struct ksvc_timer *t, uint64_t delay_ns)
{
	if (t->kt.cpu < 0)
		ktimer_arm(&t->kt, time_ns() + delay_ns);
}

void ksvc_timer_cancel(struct ksvc_timer *t)
{
	ktimer_cancel(&t->kt);
}

bool ksvc_timer_try_cancel(struct ksvc_timer *t)
{
	return ktimer_try_cancel(&t->kt);
}
