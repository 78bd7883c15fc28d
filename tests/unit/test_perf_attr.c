/*
 * test_perf_attr.c - table-driven tests of perf/attr.c: one row per case with the errno Linux
 * 6.1 returns, run through the checks in the order perf_event_open makes them (first failure
 * wins), plus the size-version rules (E2BIG with the size written back, zero-filled short
 * structs, non-zero tails) and the group/clock/online helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <time.h>

#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

static const struct perf_limits LIM = {
    .max_sample_rate = 100000,
    .max_stack = 127,
    .nr_cpus = 4,
    .online_mask = 0x7, /* CPU 3 offline */
    .have_sve = true,
};

/* The user's bytes: an attr followed by room for a larger (future) struct. */
struct uattr_buf {
	struct perf_event_attr a;
	uint8_t tail[4096];
};

struct row {
	const char *name;
	void (*setup)(struct uattr_buf *u);
	int pid, cpu;
	unsigned long flags;
	int expect; /* negative errno or 0 */
};

/* The decode steps core.c runs, in Linux's order, with pid != -1 meaning a task was found. */
static int run_open(struct uattr_buf *u, int pid, int cpu, unsigned long flags,
		    struct perf_event_attr *attr)
{
	bool has_task = pid != -1 && !(flags & PERF_FLAG_PID_CGROUP);
	int err;

	err = perf_attr_decode(u, pid, cpu, flags, &LIM, attr);
	if (!err)
		err = perf_attr_check_alloc(attr, cpu, has_task, &LIM);
	if (!err)
		err = perf_attr_check_pmu(attr, 0);
	if (!err && attr->use_clockid)
		err = perf_attr_check_clockid(attr->clockid, 0);
	if (!err)
		err = perf_attr_check_cpu_online(cpu, has_task, &LIM);
	if (!err)
		err = perf_attr_check_aux_event(attr, false);
	return err;
}

#define SETUP(n, body)                                                                             \
	static void n(struct uattr_buf *u)                                                         \
	{                                                                                          \
		body;                                                                              \
	}

SETUP(s_ok, (void)u)
SETUP(s_size0, u->a.size = 0)
SETUP(s_size_ver1, u->a.size = PERF_ATTR_SIZE_VER1)
SETUP(s_size_small, u->a.size = 63)
SETUP(s_size_page, u->a.size = 4097)
SETUP(s_size_big_zero_tail, u->a.size = 200)
SETUP(s_size_big_tail, {
	u->a.size = 200;
	u->tail[71 - 0] = 1;
})
SETUP(s_size_big_tail_first, {
	u->a.size = 136;
	u->tail[0] = 1;
})
SETUP(s_size_exact_page, u->a.size = 4096)
SETUP(s_res1, u->a.__reserved_1 = 1)
SETUP(s_res1_top, u->a.__reserved_1 = 1u << 25)
SETUP(s_res2, u->a.__reserved_2 = 1)
SETUP(s_res3, u->a.__reserved_3 = 1)
SETUP(s_st_unknown, u->a.sample_type = PERF_SAMPLE_MAX)
SETUP(s_st_high, u->a.sample_type = 1ull << 63)
SETUP(s_rf_unknown, u->a.read_format = PERF_FORMAT_MAX)
SETUP(s_rf_all, u->a.read_format = PERF_FORMAT_MAX - 1)
SETUP(s_br_unknown, {
	u->a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	u->a.branch_sample_type = PERF_SAMPLE_BRANCH_MAX;
})
SETUP(s_br_plm_only, {
	u->a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	u->a.branch_sample_type = PERF_SAMPLE_BRANCH_USER;
})
SETUP(s_br_none, { u->a.sample_type = PERF_SAMPLE_BRANCH_STACK; })
SETUP(s_br_ok, {
	u->a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	u->a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
})
SETUP(s_br_ignored, { u->a.branch_sample_type = PERF_SAMPLE_BRANCH_MAX; })
SETUP(s_regs_user_zero, u->a.sample_type = PERF_SAMPLE_REGS_USER)
SETUP(s_regs_user_lr, {
	u->a.sample_type = PERF_SAMPLE_REGS_USER;
	u->a.sample_regs_user = 1ull << 30;
})
SETUP(s_regs_user_all, {
	u->a.sample_type = PERF_SAMPLE_REGS_USER;
	u->a.sample_regs_user = (1ull << 33) - 1;
})
SETUP(s_regs_user_bit33, {
	u->a.sample_type = PERF_SAMPLE_REGS_USER;
	u->a.sample_regs_user = 1ull << 33;
})
SETUP(s_regs_user_vg, {
	u->a.sample_type = PERF_SAMPLE_REGS_USER;
	u->a.sample_regs_user = 1ull << 46;
})
SETUP(s_regs_user_ignored, u->a.sample_regs_user = 1ull << 63)
SETUP(s_stack_ok, {
	u->a.sample_type = PERF_SAMPLE_STACK_USER;
	u->a.sample_stack_user = 8192;
})
SETUP(s_stack_unaligned, {
	u->a.sample_type = PERF_SAMPLE_STACK_USER;
	u->a.sample_stack_user = 8190;
})
SETUP(s_stack_max, {
	u->a.sample_type = PERF_SAMPLE_STACK_USER;
	u->a.sample_stack_user = 0xffff;
})
SETUP(s_stack_big, {
	u->a.sample_type = PERF_SAMPLE_STACK_USER;
	u->a.sample_stack_user = 0x10000;
})
SETUP(s_stack_zero, { u->a.sample_type = PERF_SAMPLE_STACK_USER; })
SETUP(s_regs_intr_zero, u->a.sample_type = PERF_SAMPLE_REGS_INTR)
SETUP(s_regs_intr_ok, {
	u->a.sample_type = PERF_SAMPLE_REGS_INTR;
	u->a.sample_regs_intr = 1ull << 32;
})
SETUP(s_weight_both, u->a.sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)
SETUP(s_cgroup, u->a.sample_type = PERF_SAMPLE_CGROUP)
SETUP(s_inherit_thread, u->a.inherit_thread = 1)
SETUP(s_inherit_thread_ok, {
	u->a.inherit = 1;
	u->a.inherit_thread = 1;
})
SETUP(s_remove_enable, {
	u->a.remove_on_exec = 1;
	u->a.enable_on_exec = 1;
})
SETUP(s_sigtrap, u->a.sigtrap = 1)
SETUP(s_sigtrap_ok, {
	u->a.sigtrap = 1;
	u->a.remove_on_exec = 1;
})
SETUP(s_freq_max, {
	u->a.freq = 1;
	u->a.sample_freq = 100000;
})
SETUP(s_freq_over, {
	u->a.freq = 1;
	u->a.sample_freq = 100001;
})
SETUP(s_period_top, u->a.sample_period = 1ull << 63)
SETUP(s_period_big, u->a.sample_period = (1ull << 63) - 1)
SETUP(s_freq_top_bit_ok, {
	u->a.freq = 0;
	u->a.sample_period = 4000;
})
SETUP(s_inherit_read, {
	u->a.inherit = 1;
	u->a.sample_type = PERF_SAMPLE_READ;
})
SETUP(s_inherit_read_group, {
	u->a.inherit = 1;
	u->a.sample_type = PERF_SAMPLE_READ;
	u->a.read_format = PERF_FORMAT_GROUP;
})
SETUP(s_precise, u->a.precise_ip = 3)
SETUP(s_aux_output, u->a.aux_output = 1)
SETUP(s_aux_sample, u->a.aux_sample_size = 4096)
SETUP(s_aux_wm, u->a.aux_watermark = 4096)
SETUP(s_clock_mono, {
	u->a.use_clockid = 1;
	u->a.clockid = CLOCK_MONOTONIC;
})
SETUP(s_clock_real, {
	u->a.use_clockid = 1;
	u->a.clockid = CLOCK_REALTIME;
})
SETUP(s_clock_bad, {
	u->a.use_clockid = 1;
	u->a.clockid = 99;
})
SETUP(s_clock_unused, { u->a.clockid = 99; })
/* two faults at once: the first in Linux's order wins */
SETUP(s_res_and_freq, {
	u->a.__reserved_2 = 1;
	u->a.freq = 1;
	u->a.sample_freq = 1u << 30;
})
SETUP(s_size_and_res, {
	u->a.size = 63;
	u->a.__reserved_2 = 1;
})
SETUP(s_regsintr_then_weight, {
	u->a.sample_type = PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
})
SETUP(s_freq_and_sigtrap, {
	u->a.freq = 1;
	u->a.sample_freq = 1u << 30;
	u->a.sigtrap = 1;
	u->a.remove_on_exec = 1;
})
SETUP(s_inherit_read_and_cpu, {
	u->a.inherit = 1;
	u->a.sample_type = PERF_SAMPLE_READ;
})
/* what the real tools send (perf-abi-notes) */
SETUP(s_perf_stat, {
	u->a.disabled = 1;
	u->a.inherit = 1;
	u->a.enable_on_exec = 1;
	u->a.exclude_guest = 1;
	u->a.sample_type = PERF_SAMPLE_IDENTIFIER;
	u->a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
})
SETUP(s_perf_record, {
	u->a.sample_period = 100000;
	u->a.disabled = 1;
	u->a.inherit = 1;
	u->a.mmap = 1;
	u->a.comm = 1;
	u->a.enable_on_exec = 1;
	u->a.task = 1;
	u->a.sample_id_all = 1;
	u->a.exclude_guest = 1;
	u->a.mmap2 = 1;
	u->a.comm_exec = 1;
	u->a.ksymbol = 1;
	u->a.bpf_event = 1;
	u->a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
	u->a.sample_regs_user = 0x40000000;
	u->a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
})
SETUP(s_probe_size0, {
	u->a.size = 0;
	u->a.type = PERF_TYPE_SOFTWARE;
	u->a.exclude_kernel = 1;
})

static const struct row rows[] = {
    {"plain counting event", s_ok, 0, -1, 0, 0},
    {"size 0 is VER0", s_size0, 0, -1, 0, 0},
    {"size VER1", s_size_ver1, 0, -1, 0, 0},
    {"size below VER0", s_size_small, 0, -1, 0, -E2BIG},
    {"size above a page", s_size_page, 0, -1, 0, -E2BIG},
    {"size exactly a page, zero tail", s_size_exact_page, 0, -1, 0, 0},
    {"larger struct, zero tail", s_size_big_zero_tail, 0, -1, 0, 0},
    {"larger struct, non-zero tail", s_size_big_tail, 0, -1, 0, -E2BIG},
    {"larger struct, first tail byte", s_size_big_tail_first, 0, -1, 0, -E2BIG},
    {"__reserved_1 bit 0", s_res1, 0, -1, 0, -EINVAL},
    {"__reserved_1 top bit", s_res1_top, 0, -1, 0, -EINVAL},
    {"__reserved_2", s_res2, 0, -1, 0, -EINVAL},
    {"__reserved_3", s_res3, 0, -1, 0, -EINVAL},
    {"sample_type PERF_SAMPLE_MAX", s_st_unknown, 0, -1, 0, -EINVAL},
    {"sample_type bit 63", s_st_high, 0, -1, 0, -EINVAL},
    {"read_format PERF_FORMAT_MAX", s_rf_unknown, 0, -1, 0, -EINVAL},
    {"read_format every known bit", s_rf_all, 0, -1, 0, 0},
    {"branch_sample_type unknown bit", s_br_unknown, 0, -1, 0, -EINVAL},
    {"branch_sample_type only PLM", s_br_plm_only, 0, -1, 0, -EINVAL},
    {"branch_sample_type empty", s_br_none, 0, -1, 0, -EINVAL},
    {"branch_sample_type any", s_br_ok, 0, -1, 0, 0},
    {"branch_sample_type without BRANCH_STACK", s_br_ignored, 0, -1, 0, 0},
    {"sample_regs_user 0", s_regs_user_zero, 0, -1, 0, -EINVAL},
    {"sample_regs_user LR", s_regs_user_lr, 0, -1, 0, 0},
    {"sample_regs_user x0..pc", s_regs_user_all, 0, -1, 0, 0},
    {"sample_regs_user bit 33", s_regs_user_bit33, 0, -1, 0, -EINVAL},
    {"sample_regs_user VG with SVE", s_regs_user_vg, 0, -1, 0, 0},
    {"sample_regs_user without REGS_USER", s_regs_user_ignored, 0, -1, 0, 0},
    {"sample_stack_user 8192", s_stack_ok, 0, -1, 0, 0},
    {"sample_stack_user unaligned", s_stack_unaligned, 0, -1, 0, -EINVAL},
    {"sample_stack_user USHRT_MAX", s_stack_max, 0, -1, 0, -EINVAL},
    {"sample_stack_user 64K", s_stack_big, 0, -1, 0, -EINVAL},
    {"sample_stack_user 0", s_stack_zero, 0, -1, 0, 0},
    {"sample_regs_intr 0", s_regs_intr_zero, 0, -1, 0, -EINVAL},
    {"sample_regs_intr pc", s_regs_intr_ok, 0, -1, 0, 0},
    {"WEIGHT and WEIGHT_STRUCT", s_weight_both, 0, -1, 0, -EINVAL},
    {"SAMPLE_CGROUP (CONFIG_CGROUP_PERF)", s_cgroup, 0, -1, 0, 0},
    {"inherit_thread without inherit", s_inherit_thread, 0, -1, 0, -EINVAL},
    {"inherit_thread with inherit", s_inherit_thread_ok, 0, -1, 0, 0},
    {"remove_on_exec with enable_on_exec", s_remove_enable, 0, -1, 0, -EINVAL},
    {"sigtrap without remove_on_exec", s_sigtrap, 0, -1, 0, -EINVAL},
    {"sigtrap with remove_on_exec", s_sigtrap_ok, 0, -1, 0, 0},
    {"sigtrap on a CPU event", s_sigtrap_ok, -1, 0, 0, -EINVAL},
    {"freq at max_sample_rate", s_freq_max, 0, -1, 0, 0},
    {"freq above max_sample_rate", s_freq_over, 0, -1, 0, -EINVAL},
    {"sample_period bit 63", s_period_top, 0, -1, 0, -EINVAL},
    {"sample_period 2^63-1", s_period_big, 0, -1, 0, 0},
    {"sample_period 4000", s_freq_top_bit_ok, 0, -1, 0, 0},
    {"inherit with SAMPLE_READ", s_inherit_read, 0, -1, 0, -EINVAL},
    {"inherit with SAMPLE_READ and GROUP", s_inherit_read_group, 0, -1, 0, -EINVAL},
    {"precise_ip 3 (arm PMU ignores it)", s_precise, 0, -1, 0, 0},
    {"aux_output without AUX PMU", s_aux_output, 0, -1, 0, -EOPNOTSUPP},
    {"aux_sample_size without AUX leader", s_aux_sample, 0, -1, 0, -EINVAL},
    {"aux_watermark alone", s_aux_wm, 0, -1, 0, 0},
    {"clockid MONOTONIC", s_clock_mono, 0, -1, 0, 0},
    {"clockid REALTIME on an NMI PMU", s_clock_real, 0, -1, 0, -EINVAL},
    {"clockid unknown", s_clock_bad, 0, -1, 0, -EINVAL},
    {"clockid without use_clockid", s_clock_unused, 0, -1, 0, 0},
    {"flags unknown bit", s_ok, 0, -1, 1ul << 4, -EINVAL},
    {"flags unknown bit beats E2BIG", s_size_small, 0, -1, 1ul << 4, -EINVAL},
    {"flags FD_CLOEXEC", s_ok, 0, -1, PERF_FLAG_FD_CLOEXEC, 0},
    {"flags FD_NO_GROUP|FD_OUTPUT", s_ok, 0, -1, PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT, 0},
    {"flags PID_CGROUP with cpu -1", s_ok, 5, -1, PERF_FLAG_PID_CGROUP, -EINVAL},
    {"flags PID_CGROUP with pid -1", s_ok, -1, 0, PERF_FLAG_PID_CGROUP, -EINVAL},
    {"flags PID_CGROUP with fd and cpu", s_ok, 5, 0, PERF_FLAG_PID_CGROUP, 0},
    {"pid -1 cpu -1", s_ok, -1, -1, 0, -EINVAL},
    {"pid -1 cpu 0", s_ok, -1, 0, 0, 0},
    {"task on cpu 2", s_ok, 0, 2, 0, 0},
    {"cpu == nr_cpus", s_ok, -1, 4, 0, -EINVAL},
    {"task with cpu == nr_cpus", s_ok, 0, 4, 0, -EINVAL},
    {"cpu -2", s_ok, 0, -2, 0, -EINVAL},
    {"CPU event on an offline cpu", s_ok, -1, 3, 0, -ENODEV},
    {"task event on an offline cpu", s_ok, 0, 3, 0, 0},
    {"E2BIG before reserved", s_size_and_res, 0, -1, 0, -E2BIG},
    {"reserved before freq", s_res_and_freq, 0, -1, 0, -EINVAL},
    {"REGS_INTR error kept through WEIGHT check", s_regsintr_then_weight, 0, -1, 0, -EINVAL},
    {"freq before sigtrap-on-cpu", s_freq_and_sigtrap, -1, 0, 0, -EINVAL},
    {"cpu range before inherit+READ", s_inherit_read_and_cpu, -1, -1, 0, -EINVAL},
    {"perf stat's attr", s_perf_stat, 0, -1, PERF_FLAG_FD_CLOEXEC, 0},
    {"perf record -g's attr", s_perf_record, 0, 0, PERF_FLAG_FD_CLOEXEC, 0},
    {"perf's size-0 cloexec probe", s_probe_size0, -1, 0, PERF_FLAG_FD_CLOEXEC, 0},
};

static void test_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct uattr_buf *u = calloc(1, sizeof(*u));
		struct perf_event_attr attr;
		int err;

		u->a.size = sizeof(u->a);
		rows[i].setup(u);
		err = run_open(u, rows[i].pid, rows[i].cpu, rows[i].flags, &attr);
		if (err != rows[i].expect)
			fail_msg("row '%s': got %d, want %d", rows[i].name, err, rows[i].expect);
		if (err == -E2BIG && rows[i].flags == 0)
			assert_int_equal(u->a.size, PERF_ATTR_SIZE_VER7);
		free(u);
	}
}

static void test_short_struct_zero_filled(void **state)
{
	/* a VER0 (64-byte) user struct: what lies beyond it in user memory is not read */
	uint8_t user[128];
	struct perf_event_attr attr;

	memset(user, 0xff, sizeof(user));
	memset(user, 0, 64);
	((struct perf_event_attr *)user)->size = 64;
	((struct perf_event_attr *)user)->config = 7;
	assert_int_equal(perf_attr_copy(user, &attr, &LIM), 0);
	assert_int_equal(attr.size, 64);
	assert_int_equal(attr.config, 7);
	assert_int_equal(attr.config1, 0);
	assert_int_equal(attr.sample_regs_user, 0);
	assert_int_equal(attr.sig_data, 0);
	/* sample_max_stack defaulted to the sysctl */
	assert_int_equal(attr.sample_max_stack, 127);

	/* size 0 reads 64 bytes and reports size 64 */
	((struct perf_event_attr *)user)->size = 0;
	assert_int_equal(perf_attr_copy(user, &attr, &LIM), 0);
	assert_int_equal(attr.size, PERF_ATTR_SIZE_VER0);
}

static void test_branch_plm_propagation(void **state)
{
	struct perf_event_attr attr = {
	    .size = sizeof(attr),
	    .sample_type = PERF_SAMPLE_BRANCH_STACK,
	    .branch_sample_type = PERF_SAMPLE_BRANCH_ANY,
	    .exclude_kernel = 1,
	};

	assert_int_equal(perf_attr_check_fields(&attr, &LIM), 0);
	assert_int_equal(attr.branch_sample_type,
			 PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_HV);
	/* cleared at alloc when BRANCH_STACK is not sampled */
	attr.sample_type = 0;
	assert_int_equal(perf_attr_check_alloc(&attr, 0, true, &LIM), 0);
	assert_int_equal(attr.branch_sample_type, 0);
}

static void test_vg_without_sve(void **state)
{
	struct perf_limits lim = LIM;
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .sample_type = PERF_SAMPLE_REGS_USER,
				       .sample_regs_user = 1ull << 46};

	lim.have_sve = false;
	assert_int_equal(perf_attr_check_fields(&attr, &lim), -EINVAL);
}

static void test_faults(void **state)
{
	struct uattr_buf *u = calloc(1, sizeof(*u));
	struct perf_event_attr attr;

	u->a.size = 200;
	/* fault in the tail beyond our struct */
	ksvc_fake.bad_user[0].start = (uintptr_t)u->tail + 40;
	ksvc_fake.bad_user[0].len = 8;
	assert_int_equal(perf_attr_copy(u, &attr, &LIM), -EFAULT);
	/* fault on the size field itself */
	ksvc_fake.bad_user[0].start = (uintptr_t)&u->a.size;
	ksvc_fake.bad_user[0].len = 4;
	assert_int_equal(perf_attr_copy(u, &attr, &LIM), -EFAULT);
	/* fault inside the struct */
	ksvc_fake.bad_user[0].start = (uintptr_t)&u->a.branch_sample_type;
	ksvc_fake.bad_user[0].len = 8;
	u->a.size = sizeof(u->a);
	assert_int_equal(perf_attr_copy(u, &attr, &LIM), -EFAULT);
	/* a VER0 struct does not reach branch_sample_type */
	u->a.size = 64;
	assert_int_equal(perf_attr_copy(u, &attr, &LIM), 0);
	ksvc_fake.bad_user[0].len = 0;
	free(u);
}

static void test_group_rules(void **state)
{
	int ctx_a, ctx_b;
	struct perf_group_info leader = {
	    .is_leader = true, .inherit = true, .cpu = -1, .ctx = &ctx_a};
	struct perf_event_attr attr = {.inherit = 1};

	assert_int_equal(perf_attr_check_group_inherit(&attr, true, &leader), 0);
	assert_int_equal(perf_attr_check_group_inherit(&attr, true, NULL), 0);
	attr.inherit = 0;
	assert_int_equal(perf_attr_check_group_inherit(&attr, true, &leader), -EINVAL);
	/* per-CPU events: Linux compares inherit only with a task */
	assert_int_equal(perf_attr_check_group_inherit(&attr, false, &leader), 0);
	attr.inherit = 1;

	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), 0);
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, NULL), 0);
	assert_int_equal(perf_attr_check_group(&attr, 0, &ctx_a, &leader), -EINVAL);
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_b, &leader), -EINVAL);
	attr.pinned = 1;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), -EINVAL);
	attr.pinned = 0;
	attr.exclusive = 1;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), -EINVAL);
	attr.exclusive = 0;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), -EINVAL);
	leader.use_clockid = true;
	leader.clockid = CLOCK_MONOTONIC;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), 0);
	leader.clockid = CLOCK_MONOTONIC_RAW;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), -EINVAL);
	leader.clockid = CLOCK_MONOTONIC;
	leader.is_leader = false;
	assert_int_equal(perf_attr_check_group(&attr, -1, &ctx_a, &leader), -EINVAL);
}

static void test_output_rules(void **state)
{
	int a, b, task1, task2;
	struct perf_output_info ev = {.event = &a, .cpu = -1, .task = &task1};
	struct perf_output_info out = {.event = &b, .cpu = -1, .task = &task1};

	assert_int_equal(perf_attr_check_output(&ev, &out), 0);
	assert_int_equal(perf_attr_check_output(&ev, &ev), -EINVAL);
	out.task = &task2;
	assert_int_equal(perf_attr_check_output(&ev, &out), -EINVAL);
	/* per-CPU buffers: same CPU, any task */
	ev.cpu = out.cpu = 2;
	assert_int_equal(perf_attr_check_output(&ev, &out), 0);
	out.cpu = 1;
	assert_int_equal(perf_attr_check_output(&ev, &out), -EINVAL);
	out.cpu = 2;
	out.use_clockid = true;
	out.clockid = CLOCK_MONOTONIC_RAW;
	assert_int_equal(perf_attr_check_output(&ev, &out), -EINVAL);
	ev.use_clockid = true;
	ev.clockid = CLOCK_MONOTONIC_RAW;
	assert_int_equal(perf_attr_check_output(&ev, &out), 0);
	out.write_backward = true;
	assert_int_equal(perf_attr_check_output(&ev, &out), -EINVAL);
	out.write_backward = false;
	ev.mmapped = true;
	assert_int_equal(perf_attr_check_output(&ev, &out), -EINVAL);
}

static void test_clockids(void **state)
{
	assert_int_equal(perf_attr_check_clockid(CLOCK_MONOTONIC, 0), 0);
	assert_int_equal(perf_attr_check_clockid(CLOCK_MONOTONIC_RAW, 0), 0);
	assert_int_equal(perf_attr_check_clockid(CLOCK_REALTIME, 0), -EINVAL);
	assert_int_equal(perf_attr_check_clockid(CLOCK_REALTIME, PERF_PMU_CAP_NO_NMI), 0);
	assert_int_equal(perf_attr_check_clockid(CLOCK_BOOTTIME, PERF_PMU_CAP_NO_NMI), 0);
	assert_int_equal(perf_attr_check_clockid(CLOCK_TAI, PERF_PMU_CAP_NO_NMI), 0);
	assert_int_equal(perf_attr_check_clockid(CLOCK_PROCESS_CPUTIME_ID, PERF_PMU_CAP_NO_NMI),
			 -EINVAL);
	assert_int_equal(perf_attr_check_clockid(-1, PERF_PMU_CAP_NO_NMI), -EINVAL);
	assert_int_equal(perf_attr_check_pmu(&(struct perf_event_attr){.aux_output = 1},
					     PERF_PMU_CAP_AUX_OUTPUT),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_short_struct_zero_filled),
	    cmocka_unit_test(test_branch_plm_propagation),
	    cmocka_unit_test(test_vg_without_sve),
	    cmocka_unit_test(test_faults),
	    cmocka_unit_test(test_group_rules),
	    cmocka_unit_test(test_output_rules),
	    cmocka_unit_test(test_clockids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
