/* test_dt.c - kernel/dt.c against DTBs dumped from QEMU virt (GICv2/v3, 1 and 4 CPUs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <libfdt.h>

#include <kern/errno.h>
#include <kern/platform.h>

#ifndef FIXTURES
#define FIXTURES "tests/unit/fixtures"
#endif

static void *load(const char *name, size_t extra)
{
	char path[256];
	FILE *f;
	long n;
	void *buf;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + extra);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (extra)
		assert_int_equal(fdt_open_into(buf, buf, (int)(n + (long)extra)), 0);
	return buf;
}

static void check_common(const struct platform *pf)
{
	assert_int_equal(pf->nr_mem, 1);
	assert_int_equal(pf->mem[0].base, 0x40000000);
	assert_int_equal(pf->mem[0].size, 256u << 20);
	assert_int_equal(pf->uart_base, 0x09000000);
	assert_int_equal(pf->uart_intid, 32 + 1);
	assert_int_equal(pf->rtc_base, 0x09010000); /* virt's PL031 */
	assert_int_equal(pf->timer_phys_intid, 16 + 14);
	assert_int_equal(pf->timer_virt_intid, 16 + 11);
	assert_true(pf->has_pmu);
	assert_int_equal(pf->pmu_intid, 16 + 7);
	assert_true(pf->pmu_irq_is_ppi);
	assert_int_equal(pf->psci_conduit, PSCI_HVC);
	assert_int_equal(pf->psci_fn_cpu_on, 0xc4000003);
	assert_int_equal(pf->psci_fn_system_off, 0x84000008);
	assert_int_equal(pf->gicd_base, 0x08000000);
}

static void test_gicv2_smp1(void **state)
{
	(void)state;
	struct platform pf;
	void *fdt = load("virt-gicv2-smp1.dtb", 0);

	assert_int_equal(dt_parse(fdt, &pf), 0);
	check_common(&pf);
	assert_int_equal(pf.gic_version, 2);
	assert_int_equal(pf.gicc_base, 0x08010000);
	assert_int_equal(pf.nr_cpus, 1);
	assert_int_equal(pf.cpu_mpidr[0], 0);
	free(fdt);
}

static void test_gicv3_smp4(void **state)
{
	(void)state;
	struct platform pf;
	void *fdt = load("virt-gicv3-smp4.dtb", 0);

	assert_int_equal(dt_parse(fdt, &pf), 0);
	check_common(&pf);
	assert_int_equal(pf.gic_version, 3);
	assert_int_equal(pf.gicr_base, 0x080a0000);
	assert_int_equal(pf.gicr_size, 0xf60000);
	assert_int_equal(pf.nr_cpus, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pf.cpu_mpidr[i], (uint64_t)i);
	free(fdt);
}

static void test_gicv2_smp4_and_v3_smp1(void **state)
{
	(void)state;
	struct platform pf;
	void *a = load("virt-gicv2-smp4.dtb", 0), *b = load("virt-gicv3-smp1.dtb", 0);

	assert_int_equal(dt_parse(a, &pf), 0);
	assert_int_equal(pf.gic_version, 2);
	assert_int_equal(pf.nr_cpus, 4);
	assert_int_equal(dt_parse(b, &pf), 0);
	assert_int_equal(pf.gic_version, 3);
	assert_int_equal(pf.nr_cpus, 1);
	free(a);
	free(b);
}

static void test_chosen(void **state)
{
	(void)state;
	struct platform pf;
	void *fdt = load("virt-gicv3-smp1.dtb", 4096);
	int chosen = fdt_path_offset(fdt, "/chosen");

	assert_true(chosen >= 0);
	assert_int_equal(fdt_setprop_string(fdt, chosen, "bootargs", "console=ttyAMA0 semihost"), 0);
	assert_int_equal(fdt_setprop_u64(fdt, chosen, "linux,initrd-start", 0x48000000), 0);
	assert_int_equal(fdt_setprop_u32(fdt, chosen, "linux,initrd-end", 0x48100000), 0);
	assert_int_equal(fdt_add_mem_rsv(fdt, 0x4f000000, 0x1000), 0);
	assert_int_equal(dt_parse(fdt, &pf), 0);
	assert_string_equal(pf.bootargs, "console=ttyAMA0 semihost");
	assert_int_equal(pf.initrd_start, 0x48000000);
	assert_int_equal(pf.initrd_end, 0x48100000);
	assert_int_equal(pf.nr_reserved, 1);
	assert_int_equal(pf.reserved[0].base, 0x4f000000);
	assert_true(pf.rng_seed != 0);
	free(fdt);
}

static void test_garbage_and_missing(void **state)
{
	(void)state;
	struct platform pf;
	char junk[256];
	void *fdt = load("virt-gicv2-smp1.dtb", 4096);

	memset(junk, 0x5a, sizeof(junk));
	assert_int_equal(dt_parse(junk, &pf), -EINVAL);
	/* No timer: the kernel cannot run, so parsing fails cleanly. */
	int timer = fdt_node_offset_by_compatible(fdt, -1, "arm,armv8-timer");

	assert_true(timer >= 0);
	assert_int_equal(fdt_del_node(fdt, timer), 0);
	assert_int_equal(dt_parse(fdt, &pf), -EINVAL);
	free(fdt);
	/* A PMU node is optional. */
	fdt = load("virt-gicv2-smp1.dtb", 4096);
	int pmu = fdt_node_offset_by_compatible(fdt, -1, "arm,armv8-pmuv3");

	assert_int_equal(fdt_del_node(fdt, pmu), 0);
	assert_int_equal(dt_parse(fdt, &pf), 0);
	assert_false(pf.has_pmu);
	free(fdt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gicv2_smp1),
		cmocka_unit_test(test_gicv3_smp4),
		cmocka_unit_test(test_gicv2_smp4_and_v3_smp1),
		cmocka_unit_test(test_chosen),
		cmocka_unit_test(test_garbage_and_missing),
	};
	return cmocka_run_group_tests_name("dt", tests, NULL, NULL);
}
