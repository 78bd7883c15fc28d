/*
 * platform.h - what the device tree tells the kernel about the machine (kernel/dt.c fills it).
 * Interrupt numbers are GIC INTIDs (SPI n -> 32 + n, PPI n -> 16 + n).  Nothing here is
 * hard-coded anywhere else: every address and number comes from the DTB.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define PLATFORM_MAX_CPUS 8
#define PLATFORM_MAX_MEM 8
#define PLATFORM_MAX_RESERVED 16

struct phys_range {
	uint64_t base, size;
};

enum psci_conduit { PSCI_NONE, PSCI_HVC, PSCI_SMC };

struct platform {
	struct phys_range mem[PLATFORM_MAX_MEM];
	unsigned int nr_mem;
	struct phys_range reserved[PLATFORM_MAX_RESERVED]; /* /memreserve/ and /reserved-memory */
	unsigned int nr_reserved;

	uint64_t uart_base; /* PL011 (stdout-path, else the first arm,pl011) */
	uint32_t uart_intid;
	uint64_t rtc_base; /* PL031 real-time clock (the first arm,pl031), 0 when none */

	int gic_version; /* 2 or 3 */
	uint64_t gicd_base, gicd_size;
	uint64_t gicc_base, gicc_size; /* GICv2 CPU interface */
	uint64_t gicr_base, gicr_size; /* GICv3 redistributors (first region) */

	uint32_t timer_phys_intid, timer_virt_intid; /* arm,armv8-timer (non-secure EL1) */
	uint32_t timer_freq_hz; /* clock-frequency when the DT gives one, else 0 */

	bool has_pmu;
	uint32_t pmu_intid; /* arm,armv8-pmuv3 */
	bool pmu_irq_is_ppi;

	enum psci_conduit psci_conduit;
	uint32_t psci_fn_cpu_on, psci_fn_system_off, psci_fn_system_reset;

	unsigned int nr_cpus;
	uint64_t cpu_mpidr[PLATFORM_MAX_CPUS];
	unsigned int cpus_ignored; /* cpu nodes beyond PLATFORM_MAX_CPUS */

	char bootargs[512];
	uint64_t initrd_start, initrd_end; /* physical; both 0 when there is none */
	uint64_t rng_seed; /* from /chosen rng-seed or kaslr-seed, else 0 */
};

/*
 * Parse a flattened device tree.  0, or -EINVAL when the blob is not a valid DTB or lacks
 * something the kernel cannot run without (memory, a GIC, the timer); the kernel then stops.
 */
int dt_parse(const void *fdt, struct platform *out);
