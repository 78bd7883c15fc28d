/*
 * main.c - kernel entry after start.S: device tree, memory, interrupts, timers, CPUs, the
 * banner, then the first kernel thread (kinit), which runs the in-kernel self-tests or the
 * user /init and powers the machine off with its exit status.
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <arch/sysreg.h>
#include <arch/debug.h>
#include <kern/assert.h>
#include <kern/clock.h>
#include <kern/format.h>
#include <kern/irq.h>
#include <kern/irq_desc.h>
#include <kern/kernel.h>
#include <kern/mm.h>
#include <kern/percpu.h>
#include <kern/platform.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/time.h>
#include <kern/syscall.h>
#include <kern/vdso.h>
#include <kern/vm.h>
#include <kern/uprobes.h>
#include <libfdt.h>
#include <perf/perf.h>

extern char _head[], _kernel_end[];
void kmain(uint64_t dtb_pa, uint64_t image_pa);
void kernel_cpu_online(struct cpu *c);
void ksvc_seed_random(uint64_t seed);

uint64_t kimage_voffset;
struct platform boot_platform;
struct boot_options boot_opts;
static struct task idle_tasks[MAX_CPUS];

static bool has_word(const char *s, const char *w, const char **value)
{
	size_t n = strlen(w);

	while (*s) {
		while (*s == ' ')
			s++;
		const char *e = s;

		while (*e && *e != ' ')
			e++;
		if ((size_t)(e - s) >= n && memcmp(s, w, n) == 0 &&
		    ((size_t)(e - s) == n || s[n] == '=')) {
			if (value)
				*value = s[n] == '=' ? s + n + 1 : NULL;
			return true;
		}
		s = e;
	}
	return false;
}

static void parse_bootargs(const char *args)
{
	const char *v;

	semihost_enabled = has_word(args, "semihost", NULL);
	boot_opts.selftest = has_word(args, "selftest", NULL);
	boot_opts.quiet = has_word(args, "quiet", NULL);
	perf_debug = has_word(args, "perfdebug", NULL);
	if (has_word(args, "hungdump", &v) && v)
		for (; *v >= '0' && *v <= '9'; v++)
			boot_opts.hungdump_s = boot_opts.hungdump_s * 10 + (unsigned int)(*v - '0');
	if (has_word(args, "out", &v) && v) {
		size_t i = 0;

		while (v[i] && v[i] != ' ' && i < sizeof(boot_opts.out_path) - 1) {
			boot_opts.out_path[i] = v[i];
			i++;
		}
	}
}

static void print_pmu_banner(void)
{
	uint64_t dfr0 = read_sysreg(id_aa64dfr0_el1);
	unsigned int pmuver = (dfr0 >> 8) & 0xf;

	if (pmuver == 0 || pmuver == 0xf) {
		printk("PMU: none (ID_AA64DFR0_EL1.PMUVer %u)\n", pmuver);
		return;
	}
	uint64_t pmcr = read_sysreg(pmcr_el0);
	uint64_t ceid0 = read_sysreg(pmceid0_el0), ceid1 = read_sysreg(pmceid1_el0);

	printk("PMU: PMUv3 (PMUVer %#x), interrupt %s%u, %lu event counters + cycle counter "
	       "(PMCR_EL0.N), 64-bit event counters: %s\n",
	       pmuver, boot_platform.pmu_irq_is_ppi ? "PPI INTID " : "SPI INTID ",
	       boot_platform.pmu_intid, (pmcr >> 11) & 0x1f, pmuver >= 6 ? "yes" : "no");
	printk("PMU events implemented (PMCEID):");
	for (unsigned int ev = 0; ev < 64; ev++) {
		uint64_t word = ev < 32 ? ceid0 : ceid1;

		if (word >> (ev % 32) & 1)
			printk(" 0x%02x", ev);
	}
	printk("\n");
}

static void print_banner(void)
{
	const struct platform *pf = &boot_platform;
	uint64_t midr = read_sysreg(midr_el1);

	printk("perfkernel: aarch64, %u CPUs online of %u (MIDR %#lx)\n", nr_cpus_online,
	       nr_cpus_possible, midr);
	printk("memory: %lu MiB managed, %lu MiB free\n", mem_total_bytes() >> 20,
	       mem_free_bytes() >> 20);
	printk("GIC: v%d, timer: %u Hz (virtual timer INTID %u), tick %u Hz\n", pf->gic_version,
	       time_counter_freq(), pf->timer_virt_intid, TICK_HZ);
	if (pf->has_pmu)
		print_pmu_banner();
	else
		printk("PMU: no arm,armv8-pmuv3 node in the device tree\n");
}

void kernel_cpu_online(struct cpu *c)
{
	struct task *idle = &idle_tasks[c->id];

	idle->tid = 0;
	idle->kthread = true;
	/* Linux's idle task names: bpf_get_current_comm in a CPU-wide program reads them */
	ksnprintf(idle->comm, sizeof(idle->comm), "swapper/%u", c->id);
	spin_init(&idle->lock);
	sched_init_cpu(c, idle);
	gic_init_cpu();
	debug_cpu_init();
	perf_cpu_init();
	time_init_cpu();
	atomic_store(&c->online, true);
	__atomic_fetch_add(&nr_cpus_online, 1, __ATOMIC_SEQ_CST);
	__asm__ volatile("msr daifclr, #2" ::: "memory");
}

void kernel_shutdown(int status)
{
	out_flush();
	printk("perfkernel: exit status %d\n", status);
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (cpus[i].online && &cpus[i] != this_cpu())
			ipi_send(i, IPI_STOP);
	psci_system_off();
}

static struct ktimer hung_timer;

static void hung_fn(struct ktimer *t)
{
	(void)t;
	sched_dump_tasks();
}

static void kinit(void *arg)
{
	(void)arg;
	if (boot_opts.hungdump_s) {
		unsigned long f = ksvc_irq_save();

		ktimer_init(&hung_timer, hung_fn);
		ktimer_arm(&hung_timer, time_ns() + boot_opts.hungdump_s * NSEC_PER_SEC);
		ksvc_irq_restore(f);
	}
	if (boot_opts.selftest)
		kernel_shutdown(ktest_run_all());
	kernel_start_user(); /* does not return: init's exit ends the run */
}

void kmain(uint64_t dtb_pa, uint64_t image_pa)
{
	struct cpu *c0 = &cpus[0];
	uint64_t dtb_block = dtb_pa & ~((2ull << 20) - 1);

	kimage_voffset = (uint64_t)_head - image_pa;
	c0->id = 0;
	c0->current = &idle_tasks[0];
	write_sysreg(tpidr_el1, c0);
	/* The DTB, through the linear map: 4 MiB around it covers any DTB (at most 2 MiB). */
	if (mmu_map_kernel(PAGE_OFFSET + dtb_block, dtb_block, 4ull << 20, MAP_NORMAL) ||
	    dt_parse(phys_to_virt(dtb_pa), &boot_platform))
		for (;;)
			__asm__ volatile("wfe"); /* no console yet: nothing else to do */
	const struct platform *pf = &boot_platform;

	if (pf->uart_base)
		uart_init(ioremap(pf->uart_base, 0x1000));
	parse_bootargs(pf->bootargs);
	psci_init(pf);
	mm_init(pf, image_pa, virt_to_phys(_kernel_end), dtb_pa,
		fdt_totalsize(phys_to_virt(dtb_pa)));
	ksvc_seed_random(pf->rng_seed);
	nr_cpus_possible = pf->nr_cpus;
	for (unsigned int i = 0; i < pf->nr_cpus; i++) {
		cpus[i].id = i;
		cpus[i].mpidr = pf->cpu_mpidr[i];
	}
	percpu_init(nr_cpus_possible);
	if (gic_init(pf))
		kpanic("GIC initialisation failed");
	irq_init_ipis();
	vm_init();
	uprobe_init();
	kprobe_init();
	syscall_init();
	time_init(pf->timer_virt_intid, pf->timer_freq_hz);
	if (pf->rtc_base) /* PL031 RTCDR (offset 0): seconds since the epoch */
		clock_realtime_init(*(volatile uint32_t *)ioremap(pf->rtc_base, 0x1000));
	vdso_init(); /* after the RTC: it copies the realtime offset */
	if (perf_init()) /* with its PMU interrupt and breakpoint handlers */
		kpanic("perf initialisation failed");
	kernel_cpu_online(c0);
	smp_boot_secondaries();
	print_banner();
	if (pf->cpus_ignored)
		printk("warning: %u CPUs beyond %d ignored\n", pf->cpus_ignored, MAX_CPUS);
	if (!kthread_create("kinit", kinit, NULL, -1))
		kpanic("cannot create kinit");
	idle_loop();
}
