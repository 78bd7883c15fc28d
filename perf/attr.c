/*
 * attr.c - perf_event_open(2) argument decoding: copy the user's struct perf_event_attr by its
 * size version, and the checks Linux 6.1 makes before a PMU sees the event.
 *
 * ABI: Linux 6.1 kernel/events/core.c: the start of sys_perf_event_open, perf_copy_attr,
 * perf_event_alloc, perf_event_set_clock, the group_leader block of perf_event_open, and
 * arch/arm64/kernel/perf_regs.c perf_reg_validate.  Linux returns the errno of the FIRST
 * failing check, so the functions below keep its order, and core.c calls them in this order
 * (perf_attr_decode runs the first three):
 *
 *   perf_attr_check_flags          flags & ~PERF_FLAG_ALL                          EINVAL
 *   perf_attr_copy                 size versions, field checks               E2BIG EFAULT EINVAL
 *   perf_attr_check_open           freq / period, PID_CGROUP with -1               EINVAL
 *   (core: get fd EMFILE; group_fd EBADF; task ESRCH)
 *   perf_attr_check_group_inherit  task event, inherit differs from the leader     EINVAL
 *   perf_attr_check_alloc          cpu range, sigtrap w/o task, inherit+READ       EINVAL
 *   (perf_pmu_init_event           ENOENT, EINVAL, EOPNOTSUPP from the PMU)
 *   perf_attr_check_pmu            aux_output on a PMU without AUX output          EOPNOTSUPP
 *   (core: sampling event on a PMU without interrupt                               EOPNOTSUPP)
 *   perf_attr_check_clockid        use_clockid                                     EINVAL
 *   (core: find the context)
 *   perf_attr_check_group          group leader rules                              EINVAL
 *   perf_attr_check_output         FD_OUTPUT's (and SET_OUTPUT's) buffer rules     EINVAL
 *   perf_attr_check_cpu_online     per-CPU event on an offline CPU                 ENODEV
 *   perf_attr_check_aux_event      aux_sample_size without an AUX leader           EINVAL
 *
 * Does not: permission checks (perf_event_paranoid, CAP_PERFMON, lockdown).  Every caller is
 * root on this kernel, for which Linux lets all of them pass; core.c adds them if that changes.
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <linux/time.h>

#include "perf_internal.h"

int perf_attr_check_flags(unsigned long flags)
{
	/* "for future expandability...": the very first check of the syscall */
	if (flags & ~(unsigned long)PERF_FLAG_ALL_KNOWN)
		return -EINVAL;
	return 0;
}

/* copy_struct_from_user: a larger user struct is fine only if the part we do not know is 0. */
static int copy_struct_from_user(void *dst, size_t ksize, const uint8_t *usrc, size_t usize)
{
	if (usize > ksize) {
		uint8_t chunk[64];

		for (size_t off = ksize; off < usize; off += sizeof(chunk)) {
			size_t n = MIN(sizeof(chunk), usize - off);

			if (ksvc_copy_from_user(chunk, usrc + off, n))
				return -EFAULT;
			for (size_t i = 0; i < n; i++)
				if (chunk[i])
					return -E2BIG;
		}
	}
	/* dst was zeroed: a short (older) struct leaves the newer fields 0 */
	return ksvc_copy_from_user(dst, usrc, MIN(ksize, usize));
}

int perf_attr_copy(void *uattr, struct perf_event_attr *attr, const struct perf_limits *lim)
{
	uint8_t *u = uattr;
	uint32_t size;
	int ret;

	memset(attr, 0, sizeof(*attr));
	if (ksvc_copy_from_user(&size, u + offsetof(struct perf_event_attr, size), sizeof(size)))
		return -EFAULT;
	/* ABI quirk: size 0 is the first published struct */
	if (!size)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > KSVC_PAGE_SIZE)
		goto err_size;
	ret = copy_struct_from_user(attr, sizeof(*attr), u, size);
	if (ret == -E2BIG)
		goto err_size;
	if (ret)
		return ret;
	attr->size = size;
	return perf_attr_check_fields(attr, lim);

err_size : {
	/* tell user space the size we speak; Linux ignores a fault here */
	uint32_t ours = sizeof(*attr);

	(void)ksvc_copy_to_user(u + offsetof(struct perf_event_attr, size), &ours, sizeof(ours));
	return -E2BIG;
}
}

/* arm64 perf_reg_validate: a non-empty mask of x0..x30, sp, pc (and VG with SVE). */
static int perf_reg_validate(uint64_t mask, const struct perf_limits *lim)
{
	uint64_t reserved = ~PERF_ARM64_REGS_VALID;

	if (lim->have_sve)
		reserved &= ~PERF_REG_EXTENDED_MASK;
	if (!mask || (mask & reserved))
		return -EINVAL;
	return 0;
}

/* attr.branch_sample_type with PERF_SAMPLE_BRANCH_STACK */
static int check_branch(struct perf_event_attr *attr)
{
	uint64_t mask = attr->branch_sample_type;

	/* only defined bits */
	if (mask & ~(uint64_t)(PERF_SAMPLE_BRANCH_MAX - 1))
		return -EINVAL;
	/* at least one branch type besides the privilege levels */
	if (!(mask & ~(uint64_t)PERF_SAMPLE_BRANCH_PLM_ALL))
		return -EINVAL;
	/* no privilege level given: inherit the event's exclude_* */
	if (!(mask & PERF_SAMPLE_BRANCH_PLM_ALL)) {
		if (!attr->exclude_kernel)
			mask |= PERF_SAMPLE_BRANCH_KERNEL;
		if (!attr->exclude_user)
			mask |= PERF_SAMPLE_BRANCH_USER;
		if (!attr->exclude_hv)
			mask |= PERF_SAMPLE_BRANCH_HV;
		attr->branch_sample_type = mask;
	}
	/* kernel/hv levels need perf_allow_kernel: root passes */
	return 0;
}

int perf_attr_check_fields(struct perf_event_attr *attr, const struct perf_limits *lim)
{
	int ret = 0;

	/* __reserved_1 (flag bits 38..63), __reserved_2 (u16 after sample_max_stack),
	 * __reserved_3 (u32 after aux_sample_size) */
	if (attr->__reserved_1 || attr->__reserved_2 || attr->__reserved_3)
		return -EINVAL;
	/* sample_type / read_format: no bits beyond the ones this ABI defines */
	if (attr->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1))
		return -EINVAL;
	if (attr->read_format & ~(uint64_t)(PERF_FORMAT_MAX - 1))
		return -EINVAL;
	if (attr->sample_type & PERF_SAMPLE_BRANCH_STACK) {
		ret = check_branch(attr);
		if (ret)
			return ret;
	}
	/* sample_regs_user: arm64 register mask */
	if (attr->sample_type & PERF_SAMPLE_REGS_USER) {
		ret = perf_reg_validate(attr->sample_regs_user, lim);
		if (ret)
			return ret;
	}
	/* sample_stack_user: below the u16 record limit and u64-aligned (arm64 has the dump) */
	if (attr->sample_type & PERF_SAMPLE_STACK_USER) {
		if (attr->sample_stack_user >= 0xffffu)
			return -EINVAL;
		if (attr->sample_stack_user & 7)
			return -EINVAL;
	}
	/* sample_max_stack: 0 means the sysctl */
	if (!attr->sample_max_stack)
		attr->sample_max_stack = lim->max_stack;
	/* sample_regs_intr: Linux keeps this result and returns it only if nothing below fails */
	if (attr->sample_type & PERF_SAMPLE_REGS_INTR)
		ret = perf_reg_validate(attr->sample_regs_intr, lim);
	/* PERF_SAMPLE_CGROUP is accepted: Debian builds CONFIG_CGROUP_PERF */
	/* WEIGHT and WEIGHT_STRUCT share one slot */
	if ((attr->sample_type & PERF_SAMPLE_WEIGHT) &&
	    (attr->sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
		return -EINVAL;
	/* inherit_thread only refines inherit */
	if (!attr->inherit && attr->inherit_thread)
		return -EINVAL;
	if (attr->remove_on_exec && attr->enable_on_exec)
		return -EINVAL;
	/* sigtrap: the event must not outlive an exec */
	if (attr->sigtrap && !attr->remove_on_exec)
		return -EINVAL;
	return ret;
}

int perf_attr_check_open(const struct perf_event_attr *attr, int pid, int cpu, unsigned long flags,
			 const struct perf_limits *lim)
{
	/* exclude_kernel == 0 and namespaces need privileges: root passes */
	if (attr->freq) {
		/* sample_freq above kernel.perf_event_max_sample_rate */
		if (attr->sample_freq > lim->max_sample_rate)
			return -EINVAL;
	} else {
		/* sample_period must fit in s64 */
		if (attr->sample_period & (1ull << 63))
			return -EINVAL;
	}
	/* PHYS_ADDR (privilege) and REGS_INTR (lockdown): root without lockdown passes */
	/* cgroup mode: pid is the cgroup fd and a CPU is required */
	if ((flags & PERF_FLAG_PID_CGROUP) && (pid == -1 || cpu == -1))
		return -EINVAL;
	return 0;
}

int perf_attr_decode(void *uattr, int pid, int cpu, unsigned long flags,
		     const struct perf_limits *lim, struct perf_event_attr *attr)
{
	int err = perf_attr_check_flags(flags);

	if (err)
		return err;
	err = perf_attr_copy(uattr, attr, lim);
	if (err)
		return err;
	return perf_attr_check_open(attr, pid, cpu, flags, lim);
}

int perf_attr_check_group_inherit(const struct perf_event_attr *attr, bool has_task,
				  const struct perf_group_info *leader)
{
	if (has_task && leader && leader->inherit != !!attr->inherit)
		return -EINVAL;
	return 0;
}

int perf_attr_check_alloc(struct perf_event_attr *attr, int cpu, bool has_task,
			  const struct perf_limits *lim)
{
	/* cpu: -1 only for a task event (so pid == -1 && cpu == -1 fails here), else < nr_cpu_ids
	 */
	if ((unsigned int)cpu >= lim->nr_cpus) {
		if (!has_task || cpu != -1)
			return -EINVAL;
	}
	/* sigtrap needs a task to signal */
	if (attr->sigtrap && !has_task)
		return -EINVAL;
	/* PERF_SAMPLE_READ is not supported on inherited events (perf_output_read) */
	if (attr->inherit && (attr->sample_type & PERF_SAMPLE_READ))
		return -EINVAL;
	/* branch_sample_type means nothing without BRANCH_STACK */
	if (!(attr->sample_type & PERF_SAMPLE_BRANCH_STACK))
		attr->branch_sample_type = 0;
	return 0;
}

int perf_attr_check_pmu(const struct perf_event_attr *attr, unsigned int pmu_caps)
{
	if (attr->aux_output && !(pmu_caps & PERF_PMU_CAP_AUX_OUTPUT))
		return -EOPNOTSUPP;
	return 0;
}

int perf_attr_check_clockid(int clockid, unsigned int pmu_caps)
{
	bool nmi_safe = false;

	switch (clockid) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
		nmi_safe = true;
		break;
	case CLOCK_REALTIME:
	case CLOCK_BOOTTIME:
	case CLOCK_TAI:
		break;
	default:
		return -EINVAL;
	}
	if (!nmi_safe && !(pmu_caps & PERF_PMU_CAP_NO_NMI))
		return -EINVAL;
	return 0;
}

int perf_attr_check_group(const struct perf_event_attr *attr, int cpu, const void *ctx,
			  const struct perf_group_info *leader)
{
	if (!leader)
		return 0;
	/* no recursive hierarchy: group_fd must name a leader */
	if (!leader->is_leader)
		return -EINVAL;
	/* all events in a group use the same clock */
	if (leader->use_clockid != !!attr->use_clockid ||
	    (attr->use_clockid && leader->clockid != attr->clockid))
		return -EINVAL;
	/* same CPU, and same task or both per-CPU */
	if (leader->cpu != cpu)
		return -EINVAL;
	if (leader->ctx != ctx)
		return -EINVAL;
	/* only a group leader can be exclusive or pinned */
	if (attr->exclusive || attr->pinned)
		return -EINVAL;
	return 0;
}

int perf_attr_check_output(const struct perf_output_info *ev, const struct perf_output_info *out)
{
	/* no circular reference */
	if (ev->event == out->event)
		return -EINVAL;
	/* no cross-CPU buffers; a cpu -1 buffer belongs to one task */
	if (out->cpu != ev->cpu)
		return -EINVAL;
	if (out->cpu == -1 && out->task != ev->task)
		return -EINVAL;
	/* one clock per buffer */
	if (out->use_clockid != ev->use_clockid || (ev->use_clockid && out->clockid != ev->clockid))
		return -EINVAL;
	/* one write direction per buffer */
	if (out->write_backward != ev->write_backward)
		return -EINVAL;
	/* cannot redirect an event that has its own mapping */
	if (ev->mmapped)
		return -EINVAL;
	return 0;
}

int perf_attr_check_cpu_online(int cpu, bool has_task, const struct perf_limits *lim)
{
	if (has_task)
		return 0;
	if (cpu < 0 || cpu >= 64 || !(lim->online_mask & (1ull << cpu)))
		return -ENODEV;
	return 0;
}

int perf_attr_check_aux_event(const struct perf_event_attr *attr, bool leader_is_aux)
{
	/* aux_output / aux_sample_size need an AUX group leader (none exists here) */
	if ((attr->aux_output || attr->aux_sample_size) && !leader_is_aux)
		return -EINVAL;
	return 0;
}
