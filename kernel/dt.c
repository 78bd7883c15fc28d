/*
 * dt.c - reads the flattened device tree (through libfdt) into struct platform.
 *
 * Portable: the kernel links Debian's arm64 libfdt.a, host tests the host's libfdt, and both
 * parse the DTBs QEMU's virt machine produces (tests/unit/fixtures).  It understands memory
 * nodes, /memreserve/ and /reserved-memory, the PL011, GICv2 (arm,cortex-a15-gic, arm,gic-400)
 * and GICv3 (arm,gic-v3), the generic timer, the PMUv3 interrupt, PSCI (0.1 function ids and
 * the 0.2+ standard ones), cpus and /chosen (bootargs, initrd, rng-seed).  It does not walk
 * interrupt-map or translate through bus ranges: virt's devices sit on the root bus.
 */
#include <kern/errno.h>
#include <kern/platform.h>
#include <kern/string.h>
#include <libfdt.h>

#define PSCI_0_2_FN64_CPU_ON 0xc4000003u
#define PSCI_0_2_FN_SYSTEM_OFF 0x84000008u
#define PSCI_0_2_FN_SYSTEM_RESET 0x84000009u

static uint64_t read_cells(const fdt32_t *p, int cells)
{
	uint64_t v = 0;

	for (int i = 0; i < cells; i++)
		v = (v << 32) | fdt32_to_cpu(p[i]);
	return v;
}

/* The index-th (address, size) pair of node's reg, using the parent's cell counts. */
static int dt_reg(const void *fdt, int node, int index, uint64_t *addr, uint64_t *size)
{
	int parent = fdt_parent_offset(fdt, node);
	int ac = parent >= 0 ? fdt_address_cells(fdt, parent) : 2;
	int sc = parent >= 0 ? fdt_size_cells(fdt, parent) : 2;
	int len;
	const fdt32_t *reg = fdt_getprop(fdt, node, "reg", &len);

	if (ac < 1 || ac > 2 || sc < 0 || sc > 2 || !reg)
		return -EINVAL;
	int stride = ac + sc;

	if (len < (index + 1) * stride * 4)
		return -EINVAL;
	reg += index * stride;
	*addr = read_cells(reg, ac);
	*size = sc ? read_cells(reg + ac, sc) : 0;
	return 0;
}

/* The index-th GIC interrupt specifier <type number flags> of node, as an INTID. */
static int dt_irq(const void *fdt, int node, int index, uint32_t *intid, bool *is_ppi)
{
	int len;
	const fdt32_t *p = fdt_getprop(fdt, node, "interrupts", &len);

	if (!p || len < (index + 1) * 12)
		return -EINVAL;
	p += index * 3;
	uint32_t type = fdt32_to_cpu(p[0]), num = fdt32_to_cpu(p[1]);

	if (type > 1)
		return -EINVAL;
	*intid = num + (type == 0 ? 32 : 16);
	if (is_ppi)
		*is_ppi = type == 1;
	return 0;
}

static void add_reserved(struct platform *pf, uint64_t base, uint64_t size)
{
	if (size && pf->nr_reserved < PLATFORM_MAX_RESERVED) {
		pf->reserved[pf->nr_reserved].base = base;
		pf->reserved[pf->nr_reserved].size = size;
		pf->nr_reserved++;
	}
}

static int parse_memory(const void *fdt, struct platform *pf)
{
	int node;

	fdt_for_each_subnode(node, fdt, 0) {
		const char *type = fdt_getprop(fdt, node, "device_type", NULL);

		if (!type || strcmp(type, "memory") != 0)
			continue;
		for (int i = 0; pf->nr_mem < PLATFORM_MAX_MEM; i++) {
			uint64_t base, size;

			if (dt_reg(fdt, node, i, &base, &size))
				break;
			if (size) {
				pf->mem[pf->nr_mem].base = base;
				pf->mem[pf->nr_mem].size = size;
				pf->nr_mem++;
			}
		}
	}
	for (int i = 0; i < fdt_num_mem_rsv(fdt); i++) {
		uint64_t base, size;

		if (fdt_get_mem_rsv(fdt, i, &base, &size) == 0)
			add_reserved(pf, base, size);
	}
	int rm = fdt_path_offset(fdt, "/reserved-memory");

	if (rm >= 0) {
		fdt_for_each_subnode(node, fdt, rm) {
			uint64_t base, size;

			if (dt_reg(fdt, node, 0, &base, &size) == 0)
				add_reserved(pf, base, size);
		}
	}
	return pf->nr_mem ? 0 : -EINVAL;
}

static int parse_gic(const void *fdt, struct platform *pf)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "arm,gic-v3");

	if (node >= 0) {
		pf->gic_version = 3;
		if (dt_reg(fdt, node, 0, &pf->gicd_base, &pf->gicd_size) ||
		    dt_reg(fdt, node, 1, &pf->gicr_base, &pf->gicr_size))
			return -EINVAL;
		return 0;
	}
	node = fdt_node_offset_by_compatible(fdt, -1, "arm,cortex-a15-gic");
	if (node < 0)
		node = fdt_node_offset_by_compatible(fdt, -1, "arm,gic-400");
	if (node < 0)
		return -EINVAL;
	pf->gic_version = 2;
	if (dt_reg(fdt, node, 0, &pf->gicd_base, &pf->gicd_size) ||
	    dt_reg(fdt, node, 1, &pf->gicc_base, &pf->gicc_size))
		return -EINVAL;
	return 0;
}

static int parse_timer(const void *fdt, struct platform *pf)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "arm,armv8-timer");
	const fdt32_t *freq;

	if (node < 0)
		return -EINVAL;
	/* interrupts: secure phys, non-secure phys, virt, hyp */
	if (dt_irq(fdt, node, 1, &pf->timer_phys_intid, NULL) ||
	    dt_irq(fdt, node, 2, &pf->timer_virt_intid, NULL))
		return -EINVAL;
	freq = fdt_getprop(fdt, node, "clock-frequency", NULL);
	pf->timer_freq_hz = freq ? fdt32_to_cpu(*freq) : 0;
	return 0;
}

static void parse_pmu(const void *fdt, struct platform *pf)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "arm,armv8-pmuv3");

	if (node >= 0 && dt_irq(fdt, node, 0, &pf->pmu_intid, &pf->pmu_irq_is_ppi) == 0)
		pf->has_pmu = true;
}

static void parse_psci(const void *fdt, struct platform *pf)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "arm,psci");
	const char *method;
	const fdt32_t *fn;

	if (node < 0)
		node = fdt_node_offset_by_compatible(fdt, -1, "arm,psci-0.2");
	if (node < 0)
		return;
	method = fdt_getprop(fdt, node, "method", NULL);
	if (!method)
		return;
	if (strcmp(method, "hvc") == 0)
		pf->psci_conduit = PSCI_HVC;
	else if (strcmp(method, "smc") == 0)
		pf->psci_conduit = PSCI_SMC;
	else
		return;
	if (fdt_node_check_compatible(fdt, node, "arm,psci-0.2") == 0 ||
	    fdt_node_check_compatible(fdt, node, "arm,psci-1.0") == 0) {
		pf->psci_fn_cpu_on = PSCI_0_2_FN64_CPU_ON;
		pf->psci_fn_system_off = PSCI_0_2_FN_SYSTEM_OFF;
		pf->psci_fn_system_reset = PSCI_0_2_FN_SYSTEM_RESET;
	} else {
		/* PSCI 0.1 has no SYSTEM_OFF; CPU_ON's id comes from the node. */
		fn = fdt_getprop(fdt, node, "cpu_on", NULL);
		pf->psci_fn_cpu_on = fn ? fdt32_to_cpu(*fn) : 0;
	}
}

static int parse_cpus(const void *fdt, struct platform *pf)
{
	int cpus = fdt_path_offset(fdt, "/cpus"), node;

	if (cpus < 0)
		return -EINVAL;
	fdt_for_each_subnode(node, fdt, cpus) {
		const char *type = fdt_getprop(fdt, node, "device_type", NULL);
		uint64_t mpidr, unused;

		if (!type || strcmp(type, "cpu") != 0 || dt_reg(fdt, node, 0, &mpidr, &unused))
			continue;
		if (pf->nr_cpus == PLATFORM_MAX_CPUS) {
			pf->cpus_ignored++;
			continue;
		}
		pf->cpu_mpidr[pf->nr_cpus++] = mpidr;
	}
	return pf->nr_cpus ? 0 : -EINVAL;
}

static void parse_uart(const void *fdt, struct platform *pf)
{
	int node = -1, len;
	const char *path = NULL;
	int chosen = fdt_path_offset(fdt, "/chosen");

	if (chosen >= 0)
		path = fdt_getprop(fdt, chosen, "stdout-path", &len);
	if (path) {
		/* "path[:options]" or an alias */
		const char *colon = memchr(path, ':', strnlen(path, (size_t)len));
		int plen = colon ? (int)(colon - path) : (int)strnlen(path, (size_t)len);

		node = path[0] == '/' ? fdt_path_offset_namelen(fdt, path, plen) : -1;
		if (node < 0 && path[0] != '/') {
			const char *alias = fdt_get_alias_namelen(fdt, path, plen);

			node = alias ? fdt_path_offset(fdt, alias) : -1;
		}
	}
	if (node < 0 || fdt_node_check_compatible(fdt, node, "arm,pl011") != 0)
		node = fdt_node_offset_by_compatible(fdt, -1, "arm,pl011");
	if (node < 0)
		return;
	uint64_t size;

	if (dt_reg(fdt, node, 0, &pf->uart_base, &size))
		pf->uart_base = 0;
	if (dt_irq(fdt, node, 0, &pf->uart_intid, NULL))
		pf->uart_intid = 0;
}

static void parse_rtc(const void *fdt, struct platform *pf)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "arm,pl031");
	uint64_t size;

	if (node < 0 || dt_reg(fdt, node, 0, &pf->rtc_base, &size))
		pf->rtc_base = 0;
}

static uint64_t prop_u64(const void *fdt, int node, const char *name, int *found)
{
	int len;
	const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

	*found = p && (len == 4 || len == 8);
	if (!*found)
		return 0;
	return read_cells(p, len / 4);
}

static void parse_chosen(const void *fdt, struct platform *pf)
{
	int chosen = fdt_path_offset(fdt, "/chosen"), len, f1, f2;
	const char *args;
	const fdt32_t *seed;

	if (chosen < 0)
		return;
	args = fdt_getprop(fdt, chosen, "bootargs", &len);
	if (args && len > 0) {
		size_t n = strnlen(args, (size_t)len);

		if (n >= sizeof(pf->bootargs))
			n = sizeof(pf->bootargs) - 1;
		memcpy(pf->bootargs, args, n);
		pf->bootargs[n] = 0;
	}
	uint64_t start = prop_u64(fdt, chosen, "linux,initrd-start", &f1);
	uint64_t end = prop_u64(fdt, chosen, "linux,initrd-end", &f2);

	if (f1 && f2 && end > start) {
		pf->initrd_start = start;
		pf->initrd_end = end;
	}
	seed = fdt_getprop(fdt, chosen, "rng-seed", &len);
	if (!seed)
		seed = fdt_getprop(fdt, chosen, "kaslr-seed", &len);
	if (seed && len >= 8)
		pf->rng_seed = read_cells(seed, 2);
}

int dt_parse(const void *fdt, struct platform *pf)
{
	int err;

	memset(pf, 0, sizeof(*pf));
	if (fdt_check_header(fdt) != 0)
		return -EINVAL;
	err = parse_memory(fdt, pf);
	if (!err)
		err = parse_gic(fdt, pf);
	if (!err)
		err = parse_timer(fdt, pf);
	if (!err)
		err = parse_cpus(fdt, pf);
	if (err)
		return err;
	parse_pmu(fdt, pf);
	parse_psci(fdt, pf);
	parse_uart(fdt, pf);
	parse_rtc(fdt, pf);
	parse_chosen(fdt, pf);
	return 0;
}
