/*
 * test_perf_sysfs.c - perf/sysfs.c: the PMU descriptions /sys/bus/event_source/devices shows
 * (names, types, armv8_pmuv3 format/events/caps strings as Linux 6.1 prints them, sw_incr left
 * out as refvm shows) and the perf sysctls (defaults, proc_dointvec ranges, read-only ones).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arch/pmu_sysreg.h>
#include <perf/perf.h>
#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

/* core.c is not linked: the limits sysfs.c reads and writes */
struct perf_limits perf_limits = {
	.max_sample_rate = PERF_DEFAULT_MAX_SAMPLE_RATE,
	.max_stack = PERF_DEFAULT_MAX_STACK,
};

/* QEMU -cpu max: SW_INCR, CPU_CYCLES, STALL_FRONTEND/BACKEND, STALL */
#define QEMU_PMCEID0 ((1ull << 0x11) | (1ull << 0x00))
#define QEMU_PMCEID1 ((1ull << (0x23 - 32)) | (1ull << (0x24 - 32)) | (1ull << (0x3c - 32)))

static struct perf_pmu fake_sw = { .name = "software" };

/* overflow.c is not linked: nothing here samples, so an overflow is a failure */
bool perf_event_overflow(struct perf_event *e, uint64_t period, const uint64_t *regs, bool user)
{
	fail_msg("unexpected overflow");
	return false;
}

static int setup(void **state)
{
	perf_pmu_reset_table();
	pmu_fake_reset(6, 5, QEMU_PMCEID0, QEMU_PMCEID1);
	if (perf_pmu_register(&fake_sw, PERF_TYPE_SOFTWARE))
		return -1;
	return pmuv3_probe(2);
}

static int teardown(void **state)
{
	pmuv3_remove();
	perf_pmu_reset_table();
	return 0;
}

struct seen {
	int n;
	char text[4096];
};

static void collect(const struct perf_sysfs_pmu *p, void *arg)
{
	struct seen *s = arg;
	size_t l = strlen(s->text);

	s->n++;
	l += (size_t)snprintf(s->text + l, sizeof(s->text) - l, "[%s %d cpus=%d]", p->name,
			      p->type, p->has_cpus);
	for (unsigned int i = 0; i < p->nr_format; i++)
		l += (size_t)snprintf(s->text + l, sizeof(s->text) - l, " f:%s=%s",
				      p->format[i].name, p->format[i].value);
	for (unsigned int i = 0; i < p->nr_events; i++)
		l += (size_t)snprintf(s->text + l, sizeof(s->text) - l, " e:%s=%s",
				      p->events[i].name, p->events[i].value);
	for (unsigned int i = 0; i < p->nr_caps; i++)
		l += (size_t)snprintf(s->text + l, sizeof(s->text) - l, " c:%s=%s",
				      p->caps[i].name, p->caps[i].value);
}

static void test_pmus(void **state)
{
	struct seen s = { 0 };

	assert_int_equal(perf_sysfs_pmus(collect, &s), 2);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.text,
			    "[software 1 cpus=0]"
			    "[armv8_pmuv3 8 cpus=1] f:event=config:0-15 f:long=config1:0"
			    " f:rdpmc=config1:1 e:cpu_cycles=event=0x0011"
			    " e:stall_frontend=event=0x0023 e:stall_backend=event=0x0024"
			    " e:stall=event=0x003c c:slots=0x00000000 c:bus_slots=0x00000000"
			    " c:bus_width=0x00000000");
}

static void test_sysctl_defaults(void **state)
{
	long v;

	assert_int_equal(perf_sysctl_get("perf_event_paranoid", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(perf_sysctl_get("perf_event_max_sample_rate", &v), 0);
	assert_int_equal(v, 100000);
	assert_int_equal(perf_sysctl_get("perf_event_mlock_kb", &v), 0);
	assert_int_equal(v, 516);
	assert_int_equal(perf_sysctl_get("perf_event_max_stack", &v), 0);
	assert_int_equal(v, 127);
	assert_int_equal(perf_sysctl_get("perf_cpu_time_max_percent", &v), 0);
	assert_int_equal(v, 25);
	assert_int_equal(perf_sysctl_get("nope", &v), -ENOENT);
}

static void test_sysctl_set(void **state)
{
	long v;

	assert_int_equal(perf_sysctl_set("perf_event_paranoid", -1), 0);
	assert_int_equal(perf_sysctl_get("perf_event_paranoid", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(perf_sysctl_set("perf_event_paranoid", 3), 0);
	assert_int_equal(perf_sysctl_set("perf_event_paranoid", 1L << 31), -EINVAL);
	/* max_sample_rate: at least 1, and perf_event_open sees it */
	assert_int_equal(perf_sysctl_set("perf_event_max_sample_rate", 0), -EINVAL);
	assert_int_equal(perf_sysctl_set("perf_event_max_sample_rate", 2000), 0);
	assert_int_equal(perf_limits.max_sample_rate, 2000);
	assert_int_equal(perf_sysctl_set("perf_event_max_sample_rate", 100000), 0);
	assert_int_equal(perf_sysctl_set("perf_event_mlock_kb", 1024), 0);
	assert_int_equal(perf_sysctl_get("perf_event_mlock_kb", &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(perf_sysctl_set("perf_event_mlock_kb", 516), 0);
	assert_int_equal(perf_sysctl_set("perf_event_max_stack", 64), -EPERM);
	assert_int_equal(perf_sysctl_set("nope", 1), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pmus, setup, teardown),
		cmocka_unit_test(test_sysctl_defaults),
		cmocka_unit_test(test_sysctl_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
