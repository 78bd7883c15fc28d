/*
 * kprobes.c - kernel probes: a BRK patched into the kernel's own text at a function's
 * address (from the image's symbol table) plus an offset, and what runs when one is hit
 * (perf's kprobe PMU registers them through ksvc_kprobe_register and receives the hits
 * through perf_kprobe_hit).
 *
 * Linux 6.1 (kernel/kprobes.c, arch/arm64/kernel/probes/) is the reference for what user
 * space sees: the probe is BRK #0x004 (KPROBES_BRK_IMM); an unknown symbol is ENOENT, an
 * address outside the kernel's text, not 4-aligned, on a refused instruction, inside an
 * exclusive load/store sequence, or on a function the kernel will not probe (its own trap, perf, BPF and lock code: Linux's
 * NOKPROBE blacklist) is EINVAL; the probed instruction is simulated when it uses the PC and
 * otherwise runs out of line from a read-only executable slot of its own followed by
 * BRK #0x006 (KPROBES_BRK_SS_IMM), whose trap resumes after the probe (Linux single-steps the
 * slot instead); a hit while this CPU already handles one is missed (kprobe_running).
 *
 * The text is written through the linear map's alias of the image (the image's own mapping is
 * read-only) and made visible to instruction fetch on every CPU (DC CVAU, IC IVAU broadcast,
 * DSB, ISB).  A BRK may replace any instruction while other CPUs run it (the architecture
 * allows it); putting the original back races with a CPU that still fetches the BRK: such a
 * CPU finds no probe there and the instruction no longer a BRK, and runs it again.
 * Return probes (only at a function's first instruction, else EINVAL, as kprobe_on_func_entry):
 * the entry hit saves the link register on the task's own stack of pending returns and points
 * it at a trampoline (a BRK #0x004 of its own), whose hit reports the return and resumes at
 * the saved address.
 * Not built: removing slots (a site keeps its slot for the kernel's life: at most 512 sites
 * per boot, then ENOSPC).
 *
 * Locks: kprobe_mutex (sleeping) serialises register/unregister; the BRK path reads the
 * table without it (an entry's address, instruction and slot are set before it is armed and
 * never change afterwards).
 */
#include <arch/memlayout.h>
#include <arch/trapframe.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/ksym.h>
#include <kern/mm.h>
#include <kern/probe_insn.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/trap.h>
#include <kern/uprobes.h>
#include <kern/vm.h>
#include <perf/perf.h>

#define KPROBE_BRK_IMM 0x004
#define KPROBE_SS_IMM 0x006
#define KPROBE_BRK (0xd4200000u | (KPROBE_BRK_IMM << 5))
#define KPROBE_SS_BRK (0xd4200000u | (KPROBE_SS_IMM << 5))
#define KPROBES_MAX 512
#define KSYM_NAME_LEN 512

struct ksvc_kprobe {
	uint64_t addr;		/* 0: a free entry */
	uint32_t insn;		/* the original instruction */
	uint32_t *slot;		/* its out-of-line copy and the BRK after it, or NULL */
	unsigned int nr;	/* registrations (atomic; armed from 0 to 1 under kprobe_mutex) */
	unsigned int nr_ret;	/* of them, return probes' (atomic) */
	bool entry;		/* addr is a function's first instruction */
};

/* A task's pending return probes (task->kretprobes), pushed at the probed function's entry and
 * popped at the trampoline when it returns; only the task itself touches it, IRQs masked. */
#define KRET_DEPTH 16
struct kretprobe_task {
	unsigned int depth;
	struct { struct ksvc_kprobe *k; uint64_t func, ret; } ri[KRET_DEPTH];
};

static struct ksvc_kprobe kprobes[KPROBES_MAX];
static uint32_t *kret_trampoline; /* a BRK #4 of its own: where hijacked returns land */
static struct kmutex kprobe_mutex;
static bool kprobe_running[MAX_CPUS]; /* [IRQs masked] this CPU is in a hit's handlers */
/* [IRQs masked] the function those handlers report, for bpf_get_func_ip: the probe's address
 * when it is a function's first instruction, else 0 (Linux's KPROBE_FLAG_ON_FUNC_ENTRY) */
static uint64_t kprobe_func_ip[MAX_CPUS];

/* Prefixes of the functions the hit path runs or that run with its locks held. */
static const char *const blacklist[] = {
	"perf_", "pmuv3_", "bpf_", "ksvc_", "trap_", "spin_", "kprobe", "uprobe", "debug_",
	"arch_", "gic_", "irq", "sched", "schedule", "timer", "tlb", "mm_", "memcpy", "memset",
	"memmove", "memcmp", "str", "printk", "vprintk", "klog", "uart", "ksym", "kmalloc",
	"kfree", "alloc_pages", "free_pages", "page_", "probe_insn", "vm_", "signal_", "wait",
	"kmutex", "sys_bpf", "sys_perf_event_open", "fpsimd", "cpu_", "smp_", "psci", "trace_",
	/* the assembly of exception entry and return, boot, context switch and user copies */
	"el0_", "el1", "el2_", "ret_to_", "thread_trampoline", "user_thread_start",
	"init_thread_start", "vectors", "_head", "primary_", "secondary_", "map_blocks", "pt_walk",
	"table_alloc", "ioremap", "semihost", "uaccess", "ipi_", "dump_backtrace", "print_addr",
	"report", "syscall_dispatch", "kpanic", "panic", "idle",
};

static bool blacklisted(const char *name)
{
	for (unsigned int i = 0; i < sizeof(blacklist) / sizeof(blacklist[0]); i++)
		if (!strncmp(name, blacklist[i], strlen(blacklist[i])))
			return true;
	return false;
}

/* Write one instruction of the kernel's text and make every CPU fetch it. */
static void text_poke(uint64_t addr, uint32_t insn)
{
	uint32_t *alias = phys_to_virt(virt_to_phys((void *)addr));

	WRITE_ONCE(*alias, insn);
	__asm__ volatile("dc cvau, %0\n dsb ish\n ic ivau, %1\n dsb ish\n isb"
			 ::"r"(alias), "r"(addr) : "memory");
}

/*
 * Inside a load-exclusive/store-exclusive sequence (Linux's is_probed_address_atomic, 16
 * instructions back within the function)?  The trap would clear the exclusive monitor and the
 * store-exclusive would fail for ever.
 */
static bool in_exclusive(uint64_t addr, uint64_t func)
{
	for (uint64_t a = addr; a >= func + 4 && addr - a < 16 * 4; a -= 4) {
		uint32_t i = *(const uint32_t *)(a - 4);

		if ((i & 0x3f000000u) == 0x08000000u) /* load/store exclusive */
			return (i >> 22) & 1; /* a load first: inside; a store: after one */
	}
	return false;
}

/* The probe address for sym+off or addr, and whether it is a function's first instruction:
 * 0, -ENOENT, -EINVAL. */
static int resolve(const char *sym, uint64_t off, uint64_t *addr, bool *entry)
{
	char name[64];
	uint64_t base, size, at;

	if (sym) {
		if (!ksym_addr(sym, &base, &size))
			return -ENOENT;
		*addr = base + off;
	}
	if (!ksym_is_text(*addr) || (*addr & 3) || !ksym_lookup(*addr, name, sizeof(name), &at) ||
	    blacklisted(name) || in_exclusive(*addr, *addr - at))
		return -EINVAL;
	*entry = at == 0;
	return 0;
}

int ksvc_kprobe_register(const char *sym, uint64_t off, uint64_t addr, bool ret,
			 struct ksvc_kprobe **out)
{
	struct ksvc_kprobe *k = NULL, *free_k = NULL;
	bool entry;
	int err;

	err = resolve(sym, off, &addr, &entry);
	if (err)
		return err;
	if (ret && (!entry || !kret_trampoline))
		return -EINVAL; /* register_kretprobe: kprobe_on_func_entry */
	kmutex_lock(&kprobe_mutex);
	for (unsigned int i = 0; i < KPROBES_MAX && !k; i++) {
		if (kprobes[i].addr == addr)
			k = &kprobes[i];
		else if (!kprobes[i].addr && !free_k)
			free_k = &kprobes[i];
	}
	/* a probed address shows its BRK: the instruction is the one kept at its first probe */
	uint32_t insn = k ? k->insn : *(const uint32_t *)addr;
	enum probe_insn_kind kind = probe_insn_classify(insn);

	if (kind == PROBE_INSN_REJECT || insn == KPROBE_BRK) {
		kmutex_unlock(&kprobe_mutex);
		return -EINVAL;
	}
	if (!k && !free_k) {
		kmutex_unlock(&kprobe_mutex);
		return -ENOSPC;
	}
	if (!k) {
		uint32_t code[2] = { insn, KPROBE_SS_BRK };

		k = free_k;
		k->insn = insn;
		k->entry = entry;
		k->slot = kind == PROBE_INSN_STEP ? ksvc_text_alloc(code, sizeof(code)) : NULL;
		if (kind == PROBE_INSN_STEP && !k->slot) {
			kmutex_unlock(&kprobe_mutex);
			return -ENOMEM;
		}
		__atomic_store_n(&k->addr, addr, __ATOMIC_RELEASE);
	}
	if (ret)
		__atomic_fetch_add(&k->nr_ret, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&k->nr, 1, __ATOMIC_RELAXED) == 0)
		text_poke(addr, KPROBE_BRK);
	kmutex_unlock(&kprobe_mutex);
	*out = k;
	return 0;
}

void ksvc_kprobe_dup(struct ksvc_kprobe *k, bool ret)
{
	/* under perf's spinlocks (fork): no mutex; the caller's registration keeps nr above 0 */
	if (ret)
		__atomic_fetch_add(&k->nr_ret, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&k->nr, 1, __ATOMIC_RELAXED);
}

void ksvc_kprobe_unregister(struct ksvc_kprobe *k, bool ret)
{
	kmutex_lock(&kprobe_mutex);
	if (ret)
		__atomic_sub_fetch(&k->nr_ret, 1, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&k->nr, 1, __ATOMIC_RELAXED) == 0)
		text_poke(k->addr, k->insn);
	kmutex_unlock(&kprobe_mutex);
}

void kprobe_task_free(struct task *t)
{
	kfree(t->kretprobes);
	t->kretprobes = NULL;
}

/* [IRQs masked] Entry of a function with return probes: its return goes to the trampoline
 * (Linux's arch_prepare_kretprobe).  Past the depth, the return is missed, as Linux misses
 * it when its instances run out. */
static void kret_hijack(struct ksvc_kprobe *k, struct trapframe *tf)
{
	struct task *t = current_task();
	struct kretprobe_task *rt = t->kretprobes;

	if (!rt)
		rt = t->kretprobes = kmalloc(sizeof(*rt));
	if (!rt || rt->depth == KRET_DEPTH)
		return;
	rt->ri[rt->depth].k = k;
	rt->ri[rt->depth].func = tf->pc;
	rt->ri[rt->depth].ret = tf->x[30];
	rt->depth++;
	tf->x[30] = (uint64_t)kret_trampoline;
}

/* [IRQs masked] A hijacked return: back to the real caller, reported as the probe's return
 * (pc the return address, x0 the value).  An entry stays until it returns, so a probe whose
 * returns are pending keeps its slot (the table never frees one). */
static bool kret_return(struct trapframe *tf, bool report)
{
	struct kretprobe_task *rt = current_task()->kretprobes;

	if (!rt || !rt->depth)
		return false;
	rt->depth--;
	struct ksvc_kprobe *k = rt->ri[rt->depth].k;

	tf->pc = rt->ri[rt->depth].ret;
	if (report && READ_ONCE(k->nr_ret)) {
		unsigned int cpu = this_cpu()->id;

		/* Linux 6.1 (rethook) runs return handlers as the probe's own: its function */
		kprobe_func_ip[cpu] = rt->ri[rt->depth].func;
		perf_kprobe_hit(k, (const uint64_t *)tf, true, rt->ri[rt->depth].func);
		kprobe_events_hit(k, (const uint64_t *)tf, true, rt->ri[rt->depth].func);
		kprobe_func_ip[cpu] = 0;
	}
	return true;
}

int kprobe_check(const char *sym, uint64_t off, bool ret)
{
	uint64_t addr = 0;
	bool entry;
	int err = resolve(sym, off, &addr, &entry);

	if (!err && ret && !entry)
		err = -EINVAL;
	if (err)
		return err;
	kmutex_lock(&kprobe_mutex);
	uint32_t insn = *(const uint32_t *)addr;

	for (unsigned int i = 0; i < KPROBES_MAX; i++)
		if (kprobes[i].addr == addr)
			insn = kprobes[i].insn; /* probed now: its BRK is in the text */
	if (probe_insn_classify(insn) == PROBE_INSN_REJECT || insn == KPROBE_BRK)
		err = -EINVAL;
	kmutex_unlock(&kprobe_mutex);
	return err;
}

/* [IRQs masked] BRK #4 or #6 in the kernel. */
static bool kprobe_brk(struct trapframe *tf)
{
	uint16_t imm = (uint16_t)(tf->esr & 0xffff);
	uint64_t pc = tf->pc;
	struct ksvc_kprobe *k = NULL;

	if (trapframe_from_user(tf))
		return false;
	unsigned int cpu = this_cpu()->id;

	if (imm == KPROBE_BRK_IMM && kret_trampoline && pc == (uint64_t)kret_trampoline) {
		bool report = !kprobe_running[cpu];

		kprobe_running[cpu] = true;
		bool ok = kret_return(tf, report);

		kprobe_running[cpu] = !report;
		return ok;
	}
	for (unsigned int i = 0; i < KPROBES_MAX && !k; i++) {
		struct ksvc_kprobe *e = &kprobes[i];
		uint64_t a = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);

		if (!a)
			continue;
		if (imm == KPROBE_SS_IMM && e->slot && pc == (uint64_t)e->slot + 4) {
			tf->pc = a + 4; /* the out-of-line step is done */
			return true;
		}
		if (imm == KPROBE_BRK_IMM && a == pc)
			k = e;
	}
	if (!k)
		return imm == KPROBE_BRK_IMM && *(const uint32_t *)pc != KPROBE_BRK; /* gone: rerun */
	if (READ_ONCE(k->nr) && !kprobe_running[cpu]) {
		unsigned int nr_ret = READ_ONCE(k->nr_ret);

		kprobe_running[cpu] = true;
		if (READ_ONCE(k->nr) > nr_ret) {
			kprobe_func_ip[cpu] = k->entry ? k->addr : 0;
			perf_kprobe_hit(k, (const uint64_t *)tf, false, 0);
			kprobe_events_hit(k, (const uint64_t *)tf, false, 0);
			kprobe_func_ip[cpu] = 0;
		}
		if (nr_ret)
			kret_hijack(k, tf);
		kprobe_running[cpu] = false;
	}
	if (k->slot)
		tf->pc = (uint64_t)k->slot;
	else
		probe_insn_simulate(k->insn, tf, pc);
	return true;
}

uint64_t ksvc_kprobe_running_addr(void)
{
	return kprobe_func_ip[this_cpu()->id];
}

void kprobe_init(void)
{
	static const uint32_t tramp[1] = { KPROBE_BRK };

	kmutex_init(&kprobe_mutex);
	kret_trampoline = ksvc_text_alloc(tramp, sizeof(tramp));
	trap_brk_register(KPROBE_BRK_IMM, kprobe_brk);
	trap_brk_register(KPROBE_SS_IMM, kprobe_brk);
}
