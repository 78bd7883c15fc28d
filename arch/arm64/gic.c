/*
 * gic.c - Arm Generic Interrupt Controller, versions 2 (memory-mapped CPU interface) and 3
 * (system-register CPU interface, per-CPU redistributors).  Addresses come from the device tree.
 *
 * Interrupts are group 1 on GICv3 and group 0 on GICv2 (QEMU's GICv2 without security
 * extensions answers 1022 to an IAR read for group 1 unless AckCtl is set), priority 0xa0.  SGIs are IPIs
 * (kernel/include/kern/irq.h), PPIs are per CPU (timer, PMU), SPIs are routed to the boot CPU.
 * Not supported: LPIs/ITS, affinity levels above 0 on GICv2, interrupt priorities as a policy.
 */
#include <arch/arch.h>
#include <arch/sysreg.h>
#include <arch/trapframe.h>
#include <kern/errno.h>
#include <kern/irq.h>
#include <kern/printk.h>
#include <kern/sched.h>

#define NR_INTIDS 1020
#define SPURIOUS 1023

/* Distributor (both versions) */
#define GICD_CTLR 0x000
#define GICD_TYPER 0x004
#define GICD_IGROUPR 0x080
#define GICD_ISENABLER 0x100
#define GICD_ICENABLER 0x180
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR 0x800
#define GICD_ICFGR 0xc00
#define GICD_SGIR 0xf00
#define GICD_IROUTER 0x6000
#define GICD_CTLR_ARE (1u << 4)

/* GICv2 CPU interface */
#define GICC_CTLR 0x00
#define GICC_PMR 0x04
#define GICC_IAR 0x0c
#define GICC_EOIR 0x10

/* GICv3 redistributor: RD_base frame, then SGI_base frame 64 KiB above it */
#define GICR_CTLR 0x0000
#define GICR_TYPER 0x0008
#define GICR_WAKER 0x0014
#define GICR_WAKER_PSLEEP (1u << 1)
#define GICR_WAKER_CASLEEP (1u << 2)
#define GICR_SGI 0x10000
#define GICR_TYPER_LAST (1u << 4)
#define GICR_TYPER_VLPIS (1u << 1)

/* GICv3 CPU interface system registers */
#define ICC_PMR_EL1 "S3_0_C4_C6_0"
#define ICC_IAR1_EL1 "S3_0_C12_C12_0"
#define ICC_EOIR1_EL1 "S3_0_C12_C12_1"
#define ICC_BPR1_EL1 "S3_0_C12_C12_3"
#define ICC_CTLR_EL1 "S3_0_C12_C12_4"
#define ICC_SRE_EL1 "S3_0_C12_C12_5"
#define ICC_IGRPEN1_EL1 "S3_0_C12_C12_7"
#define ICC_SGI1R_EL1 "S3_0_C12_C11_5"

static int version;
static uint64_t gicd, gicc, gicr_region, gicr_region_size;
static struct {
	irq_handler_t fn;
	void *arg;
	bool level;
	bool percpu_enabled; /* PPIs: enable on each CPU as it comes up */
} handlers[NR_INTIDS];

static inline uint32_t rd32(uint64_t a)
{
	return *(volatile uint32_t *)a;
}
static inline void wr32(uint64_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}
static inline void wr8(uint64_t a, uint8_t v)
{
	*(volatile uint8_t *)a = v;
}
static inline uint8_t rd8(uint64_t a)
{
	return *(volatile uint8_t *)a;
}
static inline uint64_t rd64(uint64_t a)
{
	return *(volatile uint64_t *)a;
}
static inline void wr64(uint64_t a, uint64_t v)
{
	*(volatile uint64_t *)a = v;
}

int gic_version(void)
{
	return version;
}

int gic_init(const struct platform *pf)
{
	version = pf->gic_version;
	gicd = ioremap(pf->gicd_base, pf->gicd_size);
	if (!gicd)
		return -ENOMEM;
	unsigned int lines = 32 * ((rd32(gicd + GICD_TYPER) & 0x1f) + 1);

	if (lines > NR_INTIDS)
		lines = NR_INTIDS;
	wr32(gicd + GICD_CTLR, 0);
	/* SPIs: disabled, group 1 (GICv3) or 0 (GICv2), default priority. */
	for (unsigned int i = 32; i < lines; i += 32) {
		wr32(gicd + GICD_ICENABLER + i / 8, ~0u);
		wr32(gicd + GICD_IGROUPR + i / 8, pf->gic_version == 2 ? 0 : ~0u);
	}
	for (unsigned int i = 32; i < lines; i++)
		wr8(gicd + GICD_IPRIORITYR + i, 0xa0);
	if (version == 2) {
		gicc = ioremap(pf->gicc_base, pf->gicc_size ? pf->gicc_size : 0x2000);
		if (!gicc)
			return -ENOMEM;
		wr32(gicd + GICD_CTLR, 1); /* group 0 */
	} else {
		gicr_region = ioremap(pf->gicr_base, pf->gicr_size);
		gicr_region_size = pf->gicr_size;
		if (!gicr_region)
			return -ENOMEM;
		wr32(gicd + GICD_CTLR, GICD_CTLR_ARE | 3);
	}
	return 0;
}

static uint64_t find_redistributor(uint64_t mpidr)
{
	uint32_t aff = (uint32_t)((mpidr & 0xffffff) | ((mpidr >> 32 & 0xff) << 24));

	for (uint64_t off = 0; off < gicr_region_size;) {
		uint64_t rd = gicr_region + off;
		uint64_t typer = rd64(rd + GICR_TYPER);

		if ((uint32_t)(typer >> 32) == aff)
			return rd;
		if (typer & GICR_TYPER_LAST)
			break;
		off += (typer & GICR_TYPER_VLPIS) ? 0x40000 : 0x20000;
	}
	return 0;
}

void gic_init_cpu(void)
{
	struct cpu *c = this_cpu();

	if (version == 2) {
		/* Banked SGI/PPI registers: group 0, priority. */
		wr32(gicd + GICD_IGROUPR, 0);
		for (int i = 0; i < 32; i++)
			wr8(gicd + GICD_IPRIORITYR + i, 0xa0);
		c->gic_cpu_mask = rd8(gicd + GICD_ITARGETSR);
		wr32(gicc + GICC_PMR, 0xff);
		wr32(gicc + GICC_CTLR, 1); /* EnableGrp0, signalled as IRQ (FIQEn clear) */
	} else {
		uint64_t rd = find_redistributor(read_sysreg(mpidr_el1));

		if (!rd) {
			printk("gic: no redistributor for cpu %u\n", c->id);
			return;
		}
		c->gicr_base = rd;
		wr32(rd + GICR_WAKER, rd32(rd + GICR_WAKER) & ~GICR_WAKER_PSLEEP);
		while (rd32(rd + GICR_WAKER) & GICR_WAKER_CASLEEP)
			;
		wr32(rd + GICR_SGI + GICD_IGROUPR, ~0u);
		for (int i = 0; i < 32; i++)
			wr8(rd + GICR_SGI + GICD_IPRIORITYR + i, 0xa0);
		write_sysreg_s(ICC_SRE_EL1, read_sysreg_s(ICC_SRE_EL1) | 1);
		isb();
		write_sysreg_s(ICC_PMR_EL1, 0xff);
		write_sysreg_s(ICC_BPR1_EL1, 0);
		write_sysreg_s(ICC_CTLR_EL1, 0);
		write_sysreg_s(ICC_IGRPEN1_EL1, 1);
		isb();
	}
	/* SGIs are always on; PPIs that were registered come on for this CPU too. */
	for (uint32_t i = 0; i < 32; i++)
		if (i < 16 || handlers[i].percpu_enabled)
			irq_enable(i, handlers[i].level);
}

static void set_config(uint64_t cfg_base, uint32_t intid, bool level)
{
	uint64_t reg = cfg_base + (intid / 16) * 4;
	uint32_t shift = (intid % 16) * 2 + 1;
	uint32_t v = rd32(reg);

	v = level ? v & ~(1u << shift) : v | (1u << shift);
	wr32(reg, v);
}

void irq_enable(uint32_t intid, bool level)
{
	if (intid >= NR_INTIDS)
		return;
	if (intid < 32) {
		uint64_t base = version == 2 ? gicd : this_cpu()->gicr_base + GICR_SGI;

		if (!base)
			return;
		if (intid >= 16)
			set_config(base + GICD_ICFGR, intid, level);
		wr32(base + GICD_ISENABLER, 1u << intid);
		return;
	}
	set_config(gicd + GICD_ICFGR, intid, level);
	if (version == 2)
		wr8(gicd + GICD_ITARGETSR + intid, (uint8_t)cpus[0].gic_cpu_mask);
	else
		wr64(gicd + GICD_IROUTER + 8 * intid, cpus[0].mpidr & 0xff00ffffffull);
	wr32(gicd + GICD_ISENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

void irq_disable(uint32_t intid)
{
	if (intid >= NR_INTIDS)
		return;
	if (intid < 32) {
		uint64_t base = version == 2 ? gicd : this_cpu()->gicr_base + GICR_SGI;

		wr32(base + GICD_ICENABLER, 1u << intid);
		return;
	}
	wr32(gicd + GICD_ICENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

int irq_register(uint32_t intid, irq_handler_t fn, void *arg)
{
	if (intid >= NR_INTIDS)
		return -EINVAL;
	if (handlers[intid].fn && handlers[intid].fn != fn)
		return -EBUSY;
	handlers[intid].fn = fn;
	handlers[intid].arg = arg;
	handlers[intid].level = true;
	if (intid >= 16 && intid < 32)
		handlers[intid].percpu_enabled = true;
	return 0;
}

void ipi_send(unsigned int cpu, unsigned int sgi)
{
	dsb_ishst(); /* data for the target CPU visible before the interrupt */
	if (version == 2) {
		wr32(gicd + GICD_SGIR, (cpus[cpu].gic_cpu_mask << 16) | sgi);
		return;
	}
	uint64_t mpidr = cpus[cpu].mpidr;
	uint64_t v = (1ull << (mpidr & 0xf)) | (((mpidr >> 8) & 0xff) << 16) |
		     ((uint64_t)sgi << 24) | (((mpidr >> 16) & 0xff) << 32) |
		     (((mpidr >> 32) & 0xff) << 48);

	write_sysreg_s(ICC_SGI1R_EL1, v);
	isb();
}

void gic_handle_irq(struct trapframe *tf)
{
	for (;;) {
		uint32_t iar = version == 2 ? rd32(gicc + GICC_IAR) : (uint32_t)read_sysreg_s(ICC_IAR1_EL1);
		uint32_t intid = iar & 0x3ff;

		if (intid >= NR_INTIDS)
			break;
		this_cpu_ptr(&kstat)->irqs_sum++;
		if (intid < 16) {
			/* SGIs are edge: EOI first so a new IPI sent meanwhile is not lost. */
			if (version == 2)
				wr32(gicc + GICC_EOIR, iar);
			else
				write_sysreg_s(ICC_EOIR1_EL1, iar);
			if (intid == IPI_STOP)
				for (;;)
					__asm__ volatile("msr daifset, #0xf\n wfi");
			else if (handlers[intid].fn) /* kernel/irq.c's IPI actions */
				handlers[intid].fn(intid, tf, handlers[intid].arg);
			continue;
		}
		if (handlers[intid].fn)
			handlers[intid].fn(intid, tf, handlers[intid].arg);
		else
			printk("gic: unexpected interrupt %u\n", intid);
		if (version == 2)
			wr32(gicc + GICC_EOIR, iar);
		else
			write_sysreg_s(ICC_EOIR1_EL1, iar);
	}
}
