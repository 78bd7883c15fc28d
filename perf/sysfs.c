/*
 * sysfs.c - the read-only face perf shows through /sys and /proc (include/perf/perf.h):
 * the registered PMUs with their format, events and caps attributes, and the perf sysctls.
 *
 * What it does: perf_sysfs_pmus walks the type table (pmu.c) and describes each PMU as
 * Linux 6.1 does under /sys/bus/event_source/devices/<name>/: "software" has only its type;
 * "armv8_pmuv3" (arch/arm64/kernel/perf_event.c) has format/event "config:0-15",
 * format/long "config1:0", format/rdpmc "config1:1", one events/<name> "event=0x%04x" per
 * common event PMCEID says is implemented (armv8pmu_event_attr_is_visible) except sw_incr,
 * which Linux does not list on QEMU (refvm: max shows cpu_cycles, stall, stall_backend,
 * stall_frontend; cortex-a72 cpu_cycles only), caps/slots,
 * bus_slots, bus_width as "0x%08x" (PMMIR_EL1 fields; QEMU's PMMIR reads 0 and we do not
 * read it: reported as 0), and a cpus file; "uprobe" has format/retprobe "config:0" and
 * format/ref_ctr_offset "config:32-63", "kprobe" format/retprobe.  perf_sysctl_get/set keep kernel.perf_event_*:
 * paranoid (Debian default 3; proc_dointvec, any int), max_sample_rate (perf_limits, which
 * perf_event_open checks; minimum 1 as perf_proc_update_handler), mlock_kb (516, any int),
 * max_stack (127) and cpu_time_max_percent (25), the last two read-only here.
 *
 * What it does not do: enforce perf_event_paranoid (everyone is root here) or
 * perf_event_mlock_kb (the ring code has its own limit); lower the sample rate under load.
 *
 * ABI: sysfs strings as Linux 6.1 prints them (the caller adds the newline); sysctl ranges
 * as kernel/events/core.c.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <perf/perf.h>
#include "perf_internal.h"

/* Linux 6.1 armv8_pmuv3 sysfs event names (ARMV8_EVENT_ATTR), by event number. */
static const struct {
	uint16_t ev;
	const char *name;
} armv8_events[] = {
	{ 0x00, "sw_incr" }, { 0x01, "l1i_cache_refill" }, { 0x02, "l1i_tlb_refill" },
	{ 0x03, "l1d_cache_refill" }, { 0x04, "l1d_cache" }, { 0x05, "l1d_tlb_refill" },
	{ 0x06, "ld_retired" }, { 0x07, "st_retired" }, { 0x08, "inst_retired" },
	{ 0x09, "exc_taken" }, { 0x0a, "exc_return" }, { 0x0b, "cid_write_retired" },
	{ 0x0c, "pc_write_retired" }, { 0x0d, "br_immed_retired" }, { 0x0e, "br_return_retired" },
	{ 0x0f, "unaligned_ldst_retired" }, { 0x10, "br_mis_pred" }, { 0x11, "cpu_cycles" },
	{ 0x12, "br_pred" }, { 0x13, "mem_access" }, { 0x14, "l1i_cache" },
	{ 0x15, "l1d_cache_wb" }, { 0x16, "l2d_cache" }, { 0x17, "l2d_cache_refill" },
	{ 0x18, "l2d_cache_wb" }, { 0x19, "bus_access" }, { 0x1a, "memory_error" },
	{ 0x1b, "inst_spec" }, { 0x1c, "ttbr_write_retired" }, { 0x1d, "bus_cycles" },
	{ 0x1f, "l1d_cache_allocate" }, { 0x20, "l2d_cache_allocate" }, { 0x21, "br_retired" },
	{ 0x22, "br_mis_pred_retired" }, { 0x23, "stall_frontend" }, { 0x24, "stall_backend" },
	{ 0x25, "l1d_tlb" }, { 0x26, "l1i_tlb" }, { 0x27, "l2i_cache" },
	{ 0x28, "l2i_cache_refill" }, { 0x29, "l3d_cache_allocate" }, { 0x2a, "l3d_cache_refill" },
	{ 0x2b, "l3d_cache" }, { 0x2c, "l3d_cache_wb" }, { 0x2d, "l2d_tlb_refill" },
	{ 0x2e, "l2i_tlb_refill" }, { 0x2f, "l2d_tlb" }, { 0x30, "l2i_tlb" },
	{ 0x31, "remote_access" }, { 0x32, "ll_cache" }, { 0x33, "ll_cache_miss" },
	{ 0x34, "dtlb_walk" }, { 0x35, "itlb_walk" }, { 0x36, "ll_cache_rd" },
	{ 0x37, "ll_cache_miss_rd" }, { 0x38, "remote_access_rd" }, { 0x39, "l1d_cache_lmiss_rd" },
	{ 0x3a, "op_retired" }, { 0x3b, "op_spec" }, { 0x3c, "stall" },
	{ 0x3d, "stall_slot_backend" }, { 0x3e, "stall_slot_frontend" }, { 0x3f, "stall_slot" },
	{ 0x4000, "sample_pop" }, { 0x4001, "sample_feed" }, { 0x4002, "sample_filtrate" },
	{ 0x4003, "sample_collision" }, { 0x4004, "cnt_cycles" }, { 0x4005, "stall_backend_mem" },
	{ 0x4006, "l1i_cache_lmiss" }, { 0x4009, "l2d_cache_lmiss_rd" },
	{ 0x400a, "l2i_cache_lmiss" }, { 0x400b, "l3d_cache_lmiss_rd" }, { 0x400c, "trb_wrap" },
	{ 0x400e, "trb_trig" }, { 0x4010, "trcextout0" }, { 0x4011, "trcextout1" },
	{ 0x4012, "trcextout2" }, { 0x4013, "trcextout3" }, { 0x4018, "cti_trigout4" },
	{ 0x4019, "cti_trigout5" }, { 0x401a, "cti_trigout6" }, { 0x401b, "cti_trigout7" },
	{ 0x4020, "ldst_align_lat" }, { 0x4021, "ld_align_lat" }, { 0x4022, "st_align_lat" },
	{ 0x4024, "mem_access_checked" }, { 0x4025, "mem_access_checked_rd" },
	{ 0x4026, "mem_access_checked_wr" },
};

static const struct perf_sysfs_attr armv8_format[] = {
	{ "event", "config:0-15" },
	{ "long", "config1:0" },
	{ "rdpmc", "config1:1" },
};

static const struct perf_sysfs_attr armv8_caps[] = {
	{ "slots", "0x00000000" },
	{ "bus_slots", "0x00000000" },
	{ "bus_width", "0x00000000" },
};

/* kernel/events/core.c: the uprobe PMU's format group; the kprobe PMU's is its first */
static const struct perf_sysfs_attr uprobe_format[] = {
	{ "retprobe", "config:0" },
	{ "ref_ctr_offset", "config:32-63" },
};

#define EV_VALUE_LEN 16

int perf_sysfs_pmus(void (*emit)(const struct perf_sysfs_pmu *pmu, void *arg), void *arg)
{
	static struct perf_sysfs_attr ev[ARRAY_SIZE(armv8_events)];
	static char ev_val[ARRAY_SIZE(armv8_events)][EV_VALUE_LEN];
	static struct spinlock ev_lock = SPINLOCK_INIT;
	int n = 0;

	for (uint32_t t = 0; t < PERF_PMU_MAX_TYPES; t++) {
		struct perf_pmu *pmu = perf_pmu_find(t);
		struct perf_sysfs_pmu d = { 0 };

		if (!pmu || !pmu->name)
			continue;
		d.name = pmu->name;
		d.type = pmu->type;
		if (pmu == pmuv3_pmu()) {
			unsigned int ne = 0;
			unsigned long fl;

			d.has_cpus = true;
			d.format = armv8_format;
			d.nr_format = ARRAY_SIZE(armv8_format);
			d.caps = armv8_caps;
			d.nr_caps = ARRAY_SIZE(armv8_caps);
			/* The table is static (no large stack frame); emit must not sleep. */
			fl = spin_lock_irqsave(&ev_lock);
			for (size_t i = 0; i < ARRAY_SIZE(armv8_events); i++) {
				/* Linux 6.1 under QEMU lists no sw_incr although PMCEID0
				 * bit 0 is set (refvm; ../shared/tools/perf-abi-notes.md). */
				if (!armv8_events[i].ev ||
				    !pmuv3_event_implemented(armv8_events[i].ev))
					continue;
				ksnprintf(ev_val[ne], EV_VALUE_LEN, "event=0x%04x", armv8_events[i].ev);
				ev[ne].name = armv8_events[i].name;
				ev[ne].value = ev_val[ne];
				ne++;
			}
			d.events = ev;
			d.nr_events = ne;
			emit(&d, arg);
			spin_unlock_irqrestore(&ev_lock, fl);
		} else {
			if (pmu->type == PERF_TYPE_UPROBE || pmu->type == PERF_TYPE_KPROBE) {
				d.format = uprobe_format; /* kprobe: retprobe only */
				d.nr_format = pmu->type == PERF_TYPE_UPROBE ? ARRAY_SIZE(uprobe_format) : 1;
			}
			emit(&d, arg);
		}
		n++;
	}
	return n;
}

/* ---- sysctls ---- */

static int sysctl_paranoid = 3; /* Debian's CONFIG_SECURITY_PERF_EVENTS_RESTRICT default */
static int sysctl_mlock_kb = 516; /* (512 + 4) KiB: 512 KiB of data and the user page */
static const int sysctl_cpu_time_max_percent = 25;

int perf_sysctl_get(const char *name, long *val)
{
	if (!strcmp(name, "perf_event_paranoid"))
		*val = READ_ONCE(sysctl_paranoid);
	else if (!strcmp(name, "perf_event_max_sample_rate"))
		*val = READ_ONCE(perf_limits.max_sample_rate);
	else if (!strcmp(name, "perf_event_mlock_kb"))
		*val = READ_ONCE(sysctl_mlock_kb);
	else if (!strcmp(name, "perf_event_max_stack"))
		*val = READ_ONCE(perf_limits.max_stack);
	else if (!strcmp(name, "perf_cpu_time_max_percent"))
		*val = sysctl_cpu_time_max_percent;
	else if (!strcmp(name, "perf_user_access"))
		*val = READ_ONCE(pmuv3_user_access);
	else
		return -ENOENT;
	return 0;
}

int perf_sysctl_set(const char *name, long val)
{
	if (val < -2147483648L || val > 2147483647L)
		return -EINVAL; /* proc_dointvec: an int */
	if (!strcmp(name, "perf_event_paranoid")) {
		WRITE_ONCE(sysctl_paranoid, (int)val);
	} else if (!strcmp(name, "perf_event_max_sample_rate")) {
		if (val < 1)
			return -EINVAL; /* extra1 = SYSCTL_ONE */
		WRITE_ONCE(perf_limits.max_sample_rate, (uint32_t)val);
	} else if (!strcmp(name, "perf_event_mlock_kb")) {
		WRITE_ONCE(sysctl_mlock_kb, (int)val);
	} else if (!strcmp(name, "perf_user_access")) {
		if (val < 0 || val > 1)
			return -EINVAL; /* proc_dointvec_minmax, 0..1 */
		WRITE_ONCE(pmuv3_user_access, val == 1);
	} else if (!strcmp(name, "perf_event_max_stack") ||
		   !strcmp(name, "perf_cpu_time_max_percent")) {
		return -EPERM;
	} else {
		return -ENOENT;
	}
	return 0;
}
