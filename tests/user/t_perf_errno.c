/* t_perf_errno: the perf_event_open(2) (syscall 241) errno table, and the
 * errnos of operations on a perf fd (read/ioctl/mmap/...). Must run as root.
 * Each row: (attr tweak, pid, cpu, group_fd, flags) -> fd or errno, as
 * recorded on Debian's Linux 6.1 under refvm.sh --smp 4 (-cpu max): QEMU's PMU
 * implements few events, so hardware events it lacks fail with ENOENT. Rows
 * whose answer depends on the PMU model accept an alternative (commented).
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define ATTR_SZ ((int)sizeof(struct perf_event_attr)) /* 128 = PERF_ATTR_SIZE_VER7 in 6.1 */

static union {
	struct perf_event_attr a;
	unsigned char raw[8192];
} ub;

/* ---- attr tweaks (applied to a zeroed SOFTWARE/CPU_CLOCK, disabled, exclude_kernel... base) ---- */
typedef void (*tweak_fn)(struct perf_event_attr *);
#define TW(name, body) static void name(struct perf_event_attr *a) { body; }
TW(t_none, (void)a)
TW(t_size0, a->size = 0)
TW(t_size1, a->size = 1)
TW(t_size63, a->size = 63)
TW(t_size64, a->size = 64)
TW(t_size72, a->size = 72)
TW(t_size100, a->size = 100)
TW(t_size130, a->size = 130)
TW(t_size200, a->size = 200)
TW(t_size200_tail, a->size = 200; ub.raw[190] = 1)
TW(t_size200_tail_at_128, a->size = 200; ub.raw[ATTR_SZ] = 1)
TW(t_size4096, a->size = 4096)
TW(t_size4096_tail, a->size = 4096; ub.raw[4095] = 0x80)
TW(t_size4097, a->size = 4097)
TW(t_size_huge, a->size = 0xffffffff)
TW(t_res1, a->__reserved_1 = 1)
TW(t_res1_top, a->__reserved_1 = 1u << 25)
TW(t_res2, a->__reserved_2 = 1)
TW(t_res3, a->__reserved_3 = 1)
TW(t_res2_small_size, a->__reserved_2 = 1; a->size = 64) /* beyond size: not copied, ignored */
TW(t_type1000, a->type = 1000)
TW(t_type_neg, a->type = 0xffffffff)
TW(t_sw_max, a->config = PERF_COUNT_SW_MAX)
TW(t_sw_1000, a->config = 1000)
TW(t_sw_dummy, a->config = PERF_COUNT_SW_DUMMY)
TW(t_sw_bpf_output, a->config = PERF_COUNT_SW_BPF_OUTPUT)
TW(t_sw_task_clock, a->config = PERF_COUNT_SW_TASK_CLOCK)
TW(t_sw_page_faults, a->config = PERF_COUNT_SW_PAGE_FAULTS)
TW(t_sw_cs, a->config = PERF_COUNT_SW_CONTEXT_SWITCHES)
TW(t_sw_migr, a->config = PERF_COUNT_SW_CPU_MIGRATIONS)
TW(t_hw_cycles, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_CPU_CYCLES)
TW(t_hw_instr, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_INSTRUCTIONS)
TW(t_hw_cache_misses, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_CACHE_MISSES)
TW(t_hw_branch_misses, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_BRANCH_MISSES)
TW(t_hw_branch_instr, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS)
TW(t_hw_bus_cycles, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_BUS_CYCLES)
TW(t_hw_ref_cycles, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_REF_CPU_CYCLES)
TW(t_hw_max, a->type = PERF_TYPE_HARDWARE; a->config = PERF_COUNT_HW_MAX)
TW(t_hw_100, a->type = PERF_TYPE_HARDWARE; a->config = 100)
TW(t_hw_hi32, a->type = PERF_TYPE_HARDWARE; a->config = (1ULL << 32) | PERF_COUNT_HW_CPU_CYCLES)
TW(t_raw_cycles, a->type = PERF_TYPE_RAW; a->config = 0x11)
TW(t_raw_inst, a->type = PERF_TYPE_RAW; a->config = 0x08)
TW(t_raw_unimpl, a->type = PERF_TYPE_RAW; a->config = 0x10) /* BR_MIS_PRED: QEMU lacks it, raw opens anyway */
TW(t_raw_big, a->type = PERF_TYPE_RAW; a->config = 0xffff)
TW(t_cache_l1d_read_access, a->type = PERF_TYPE_HW_CACHE;
   a->config = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16))
TW(t_cache_bad_type, a->type = PERF_TYPE_HW_CACHE; a->config = 0xff)
TW(t_cache_bad_op, a->type = PERF_TYPE_HW_CACHE; a->config = PERF_COUNT_HW_CACHE_L1D | (0xff << 8))
TW(t_cache_bad_result, a->type = PERF_TYPE_HW_CACHE; a->config = PERF_COUNT_HW_CACHE_L1D | (0xff << 16))
TW(t_cache_node, a->type = PERF_TYPE_HW_CACHE; a->config = PERF_COUNT_HW_CACHE_NODE) /* not in armv8 map */
TW(t_sample_type_bad, a->sample_type = 1ULL << 40)
TW(t_sample_type_max, a->sample_type = PERF_SAMPLE_MAX)
TW(t_sample_ok, a->sample_period = 100000; a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)
TW(t_read_format_bad, a->read_format = 1ULL << 20)
TW(t_read_format_all, a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			       PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST)
TW(t_freq_ok, a->freq = 1; a->sample_freq = 1000)
TW(t_freq_too_high, a->freq = 1; a->sample_freq = 1000000000)
TW(t_freq_max_u64, a->freq = 1; a->sample_freq = ~0ULL)
TW(t_period_top_bit, a->sample_period = 1ULL << 63)
TW(t_period_max_ok, a->sample_period = (1ULL << 63) - 1)
TW(t_hw_freq_ok, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->freq = 1; a->sample_freq = 1000)
TW(t_excl_user, a->exclude_user = 1)
TW(t_excl_kernel, a->exclude_kernel = 1)
TW(t_excl_hv, a->exclude_hv = 1)
TW(t_excl_idle_sw, a->exclude_idle = 1)
TW(t_excl_all_sw, a->exclude_user = 1; a->exclude_kernel = 1; a->exclude_hv = 1)
TW(t_excl_host_guest_sw, a->exclude_host = 1; a->exclude_guest = 1)
TW(t_hw_excl_user, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_user = 1)
TW(t_hw_excl_kernel, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_kernel = 1)
TW(t_hw_excl_hv, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_hv = 1)
TW(t_hw_excl_all, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_user = 1; a->exclude_kernel = 1;
   a->exclude_hv = 1)
TW(t_hw_excl_idle, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_idle = 1)
TW(t_hw_excl_guest, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_guest = 1)
TW(t_hw_excl_host, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_host = 1)
TW(t_hw_excl_host_guest, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->exclude_host = 1; a->exclude_guest = 1)
TW(t_precise_sw, a->precise_ip = 1)
TW(t_precise_hw, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->precise_ip = 1)
TW(t_precise_hw3, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->precise_ip = 3)
TW(t_sigtrap_no_roe, a->sigtrap = 1)
TW(t_sigtrap_roe, a->sigtrap = 1; a->remove_on_exec = 1)
TW(t_sigtrap_inherit_no_thread, a->sigtrap = 1; a->remove_on_exec = 1; a->inherit = 1)
TW(t_inherit_thread_no_inherit, a->inherit_thread = 1)
TW(t_roe_no_inherit, a->remove_on_exec = 1)
TW(t_clockid_bad, a->use_clockid = 1; a->clockid = 12345)
TW(t_clockid_mono, a->use_clockid = 1; a->clockid = 1)
TW(t_stack_user_unaligned, a->sample_type = PERF_SAMPLE_STACK_USER; a->sample_stack_user = 13)
TW(t_stack_user_ok, a->sample_type = PERF_SAMPLE_STACK_USER; a->sample_stack_user = 8192)
TW(t_regs_user_bad, a->sample_type = PERF_SAMPLE_REGS_USER; a->sample_regs_user = 1ULL << 40)
TW(t_regs_user_ok, a->sample_type = PERF_SAMPLE_REGS_USER; a->sample_regs_user = (1ULL << 33) - 1)
TW(t_regs_intr_bad, a->sample_type = PERF_SAMPLE_REGS_INTR; a->sample_regs_intr = 1ULL << 40)
TW(t_branch_stack_sw, a->sample_type = PERF_SAMPLE_BRANCH_STACK; a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY)
TW(t_branch_stack_hw, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->sample_type = PERF_SAMPLE_BRANCH_STACK;
   a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY)
TW(t_branch_stack_zero, a->sample_type = PERF_SAMPLE_BRANCH_STACK; a->branch_sample_type = 0)
TW(t_branch_bad_bits, a->sample_type = PERF_SAMPLE_BRANCH_STACK; a->branch_sample_type = 1ULL << 40)
TW(t_sample_max_stack_big, a->sample_type = PERF_SAMPLE_CALLCHAIN; a->sample_max_stack = 60000)
TW(t_aux_output_sw, a->aux_output = 1)
TW(t_inherit_sample_read, a->inherit = 1; a->sample_type = PERF_SAMPLE_READ; a->read_format = PERF_FORMAT_GROUP)
TW(t_inherit_sample_read_nogroup, a->inherit = 1; a->sample_type = PERF_SAMPLE_READ)
TW(t_inherit_ok, a->inherit = 1)
TW(t_enable_on_exec, a->enable_on_exec = 1)
TW(t_mmap_comm_task, a->mmap = 1; a->comm = 1; a->task = 1; a->mmap2 = 1; a->comm_exec = 1; a->sample_id_all = 1)
TW(t_watermark, a->watermark = 1; a->wakeup_watermark = 4096)
TW(t_bp_zero_len, a->type = PERF_TYPE_BREAKPOINT; a->config = 0; a->bp_type = 0)
TW(t_bp_exec, a->type = PERF_TYPE_BREAKPOINT; a->config = 0; a->bp_type = HW_BREAKPOINT_X;
   a->bp_addr = (uintptr_t)&sys_perf_event_open; a->bp_len = 4)
TW(t_bp_bad_len, a->type = PERF_TYPE_BREAKPOINT; a->config = 0; a->bp_type = HW_BREAKPOINT_W;
   a->bp_addr = (uintptr_t)&ub; a->bp_len = 3)
TW(t_hw_cycles_sampling, a->type = PERF_TYPE_HARDWARE; a->config = 0; a->sample_period = 100000;
   a->sample_type = PERF_SAMPLE_IP)

enum { P_SELF = 0, P_ANY = -1, P_NOSUCH = -1000, P_CHILD = -1001, P_NEG2 = -2, P_NULLPID = -1002 };
enum { C_ANY = -1, C_NCPU = -1000, C_HUGE = 9999, C_NEG2 = -2, C_LAST = -1001 };
enum { G_NONE = -1, G_LEADER = -1000, G_DEVNULL = -1001, G_CLOSED = -1002, G_SIBLING = -1003,
       G_LEADER_CPU0 = -1004, G_HW_LEADER = -1005, G_OTHER_TASK = -1006, G_NEG2 = -2 };
#define OK 0
#define NOALT (-1)

struct pcase {
	const char *name;
	tweak_fn tw;
	int pid, cpu, group;
	unsigned long flags;
	int want, alt; /* want: 0 = an fd, else the errno; alt: also accepted (PMU-model dependent) */
};

static const struct pcase cases[] = {
	/* size rules */
	{"size 0 (= VER0)", t_size0, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 1 -> E2BIG", t_size1, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 63 -> E2BIG", t_size63, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 64 (VER0)", t_size64, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 72 (VER1)", t_size72, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 100 (between versions)", t_size100, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 130 (not multiple of 8)", t_size130, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size sizeof (128)", t_none, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 200 zero tail", t_size200, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 200 nonzero tail -> E2BIG", t_size200_tail, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 200 nonzero first tail byte -> E2BIG", t_size200_tail_at_128, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 4096 zero tail", t_size4096, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"size 4096 nonzero last byte -> E2BIG", t_size4096_tail, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 4097 -> E2BIG", t_size4097, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	{"size 0xffffffff -> E2BIG", t_size_huge, P_SELF, C_ANY, G_NONE, 0, E2BIG, NOALT},
	/* reserved fields */
	{"__reserved_1 bit 0 -> EINVAL", t_res1, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"__reserved_1 top bit -> EINVAL", t_res1_top, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"__reserved_2 -> EINVAL", t_res2, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"__reserved_3 -> EINVAL", t_res3, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"__reserved_2 beyond size 64 ignored", t_res2_small_size, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* types and configs */
	{"type 1000 -> ENOENT", t_type1000, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"type 0xffffffff -> ENOENT", t_type_neg, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"SW config SW_MAX -> ENOENT", t_sw_max, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"SW config 1000 -> ENOENT", t_sw_1000, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"SW DUMMY", t_sw_dummy, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW BPF_OUTPUT", t_sw_bpf_output, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW TASK_CLOCK", t_sw_task_clock, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW PAGE_FAULTS", t_sw_page_faults, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW CONTEXT_SWITCHES", t_sw_cs, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW CPU_MIGRATIONS", t_sw_migr, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW CPU_CYCLES", t_hw_cycles, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* QEMU counts instructions only with -icount (refvm.sh without --icount: ENOENT;
	 * our QEMU runs use -icount shift=0: opens). */
	{"HW INSTRUCTIONS (ENOENT unless QEMU -icount)", t_hw_instr, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	/* QEMU's PMU lacks these events (PMCEID): ENOENT; a PMU with them opens: accept OK */
	{"HW CACHE_MISSES (QEMU lacks) -> ENOENT", t_hw_cache_misses, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	{"HW BRANCH_MISSES (QEMU lacks) -> ENOENT", t_hw_branch_misses, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	{"HW BRANCH_INSTRUCTIONS (QEMU lacks) -> ENOENT", t_hw_branch_instr, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	{"HW BUS_CYCLES (QEMU lacks) -> ENOENT", t_hw_bus_cycles, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	{"HW REF_CPU_CYCLES (no armv8 mapping) -> ENOENT", t_hw_ref_cycles, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"HW config HW_MAX -> EINVAL", t_hw_max, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"HW config 100 -> EINVAL", t_hw_100, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	/* bits 32..63 of a HARDWARE config are the "extended PMU type" (5.13+, hybrid PMUs);
	 * 6.1 opens this one */
	{"HW config with bit 32 set (extended type) opens", t_hw_hi32, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"RAW 0x11 (CPU_CYCLES)", t_raw_cycles, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"RAW 0x08 (INST_RETIRED)", t_raw_inst, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"RAW 0x10 (unimplemented by QEMU) still opens", t_raw_unimpl, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"RAW 0xffff", t_raw_big, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* maps to L1D_CACHE (0x04), which QEMU's PMU lacks; a real core opens it */
	{"HW_CACHE L1D read access (QEMU lacks) -> ENOENT", t_cache_l1d_read_access, P_SELF, C_ANY, G_NONE, 0, ENOENT, OK},
	{"HW_CACHE bad cache type -> EINVAL", t_cache_bad_type, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"HW_CACHE bad op -> EINVAL", t_cache_bad_op, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"HW_CACHE bad result -> EINVAL", t_cache_bad_result, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"HW_CACHE NODE read access (unsupported) -> ENOENT", t_cache_node, P_SELF, C_ANY, G_NONE, 0, ENOENT, NOALT},
	{"BREAKPOINT bp_type 0 -> EINVAL", t_bp_zero_len, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"BREAKPOINT exec on a function", t_bp_exec, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"BREAKPOINT write len 3 (arm64 allows 1..8)", t_bp_bad_len, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* sample/read formats */
	{"sample_type unknown bit -> EINVAL", t_sample_type_bad, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_type PERF_SAMPLE_MAX -> EINVAL", t_sample_type_max, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sampling IP|TID|TIME", t_sample_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"read_format unknown bit -> EINVAL", t_read_format_bad, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"read_format all known bits", t_read_format_all, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"freq 1000 (SW)", t_freq_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"freq 1e9 above max rate -> EINVAL", t_freq_too_high, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"freq ~0 -> EINVAL", t_freq_max_u64, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_period bit 63 -> EINVAL", t_period_top_bit, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_period 2^63-1 ok", t_period_max_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW cycles freq 1000", t_hw_freq_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW cycles sampling period", t_hw_cycles_sampling, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* exclude_* */
	{"SW exclude_user", t_excl_user, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW exclude_kernel", t_excl_kernel, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW exclude_hv", t_excl_hv, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW exclude_idle", t_excl_idle_sw, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW exclude user+kernel+hv", t_excl_all_sw, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW exclude host+guest", t_excl_host_guest_sw, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude_user", t_hw_excl_user, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude_kernel", t_hw_excl_kernel, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude_hv", t_hw_excl_hv, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude user+kernel+hv", t_hw_excl_all, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude_idle -> EOPNOTSUPP", t_hw_excl_idle, P_SELF, C_ANY, G_NONE, 0, EOPNOTSUPP, NOALT},
	{"HW exclude_guest", t_hw_excl_guest, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude_host", t_hw_excl_host, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW exclude host+guest", t_hw_excl_host_guest, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"SW precise_ip 1", t_precise_sw, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW precise_ip 1", t_precise_hw, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"HW precise_ip 3", t_precise_hw3, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* misc attr rules */
	{"sigtrap without remove_on_exec -> EINVAL", t_sigtrap_no_roe, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sigtrap + remove_on_exec", t_sigtrap_roe, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* 6.1 only refuses this combination later, when inheriting across a non-thread clone */
	{"sigtrap + inherit without inherit_thread opens", t_sigtrap_inherit_no_thread, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"inherit_thread without inherit -> EINVAL", t_inherit_thread_no_inherit, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"remove_on_exec alone", t_roe_no_inherit, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"use_clockid bad clock -> EINVAL", t_clockid_bad, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"use_clockid MONOTONIC", t_clockid_mono, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"sample_stack_user not multiple of 8 -> EINVAL", t_stack_user_unaligned, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_stack_user 8192", t_stack_user_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"sample_regs_user bit 40 -> EINVAL", t_regs_user_bad, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_regs_user x0..pc", t_regs_user_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"sample_regs_intr bit 40 -> EINVAL", t_regs_intr_bad, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"BRANCH_STACK on SW -> EOPNOTSUPP", t_branch_stack_sw, P_SELF, C_ANY, G_NONE, 0, EOPNOTSUPP, NOALT},
	{"BRANCH_STACK on HW (no BRBE) -> EOPNOTSUPP", t_branch_stack_hw, P_SELF, C_ANY, G_NONE, 0, EOPNOTSUPP, NOALT},
	{"BRANCH_STACK with branch_sample_type 0 -> EINVAL", t_branch_stack_zero, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"branch_sample_type unknown bit -> EINVAL", t_branch_bad_bits, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"sample_max_stack 60000 > max -> EOVERFLOW", t_sample_max_stack_big, P_SELF, C_ANY, G_NONE, 0, EOVERFLOW, NOALT},
	{"aux_output on SW event -> EOPNOTSUPP", t_aux_output_sw, P_SELF, C_ANY, G_NONE, 0, EOPNOTSUPP, NOALT},
	{"inherit + SAMPLE_READ + FORMAT_GROUP -> EINVAL", t_inherit_sample_read, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	/* 6.1 refuses inherit with PERF_SAMPLE_READ altogether (allowed from 6.12) */
	{"inherit + SAMPLE_READ -> EINVAL", t_inherit_sample_read_nogroup, P_SELF, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"inherit", t_inherit_ok, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"enable_on_exec", t_enable_on_exec, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"mmap/comm/task/mmap2/comm_exec/sample_id_all", t_mmap_comm_task, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	{"watermark", t_watermark, P_SELF, C_ANY, G_NONE, 0, OK, NOALT},
	/* pid / cpu */
	{"pid -1 cpu -1 -> EINVAL", t_none, P_ANY, C_ANY, G_NONE, 0, EINVAL, NOALT},
	{"pid -1 cpu 0 (system-wide)", t_none, P_ANY, 0, G_NONE, 0, OK, NOALT},
	{"pid 0 cpu 0", t_none, P_SELF, 0, G_NONE, 0, OK, NOALT},
	{"pid -1 cpu 0 HW cycles", t_hw_cycles, P_ANY, 0, G_NONE, 0, OK, NOALT},
	{"pid -1 cpu = last cpu", t_none, P_ANY, C_LAST, G_NONE, 0, OK, NOALT},
	{"cpu == nr possible cpus -> EINVAL", t_none, P_SELF, C_NCPU, G_NONE, 0, EINVAL, NOALT},
	{"cpu 9999 -> EINVAL", t_none, P_SELF, C_HUGE, G_NONE, 0, EINVAL, NOALT},
	{"cpu -2 -> EINVAL", t_none, P_SELF, C_NEG2, G_NONE, 0, EINVAL, NOALT},
	{"pid -1 cpu 9999 -> EINVAL", t_none, P_ANY, C_HUGE, G_NONE, 0, EINVAL, NOALT},
	{"pid no such task -> ESRCH", t_none, P_NOSUCH, C_ANY, G_NONE, 0, ESRCH, NOALT},
	{"pid -2 -> ESRCH", t_none, P_NEG2, C_ANY, G_NONE, 0, ESRCH, NOALT},
	{"pid of a child process", t_none, P_CHILD, C_ANY, G_NONE, 0, OK, NOALT},
	{"pid of a child, cpu = last cpu", t_none, P_CHILD, C_LAST, G_NONE, 0, OK, NOALT},
	{"pid = own pid explicitly", t_none, P_NULLPID, C_ANY, G_NONE, 0, OK, NOALT},
	/* flags */
	{"flags FD_CLOEXEC", t_none, P_SELF, C_ANY, G_NONE, PERF_FLAG_FD_CLOEXEC, OK, NOALT},
	{"flags bit 4 -> EINVAL", t_none, P_SELF, C_ANY, G_NONE, 1UL << 4, EINVAL, NOALT},
	{"flags bit 63 -> EINVAL", t_none, P_SELF, C_ANY, G_NONE, 1UL << 63, EINVAL, NOALT},
	{"flags FD_NO_GROUP without group", t_none, P_SELF, C_ANY, G_NONE, PERF_FLAG_FD_NO_GROUP, OK, NOALT},
	{"flags FD_OUTPUT (no group fd)", t_none, P_SELF, C_ANY, G_NONE, PERF_FLAG_FD_OUTPUT, OK, NOALT},
	{"flags PID_CGROUP with cpu -1 -> EINVAL", t_none, P_SELF, C_ANY, G_NONE, PERF_FLAG_PID_CGROUP, EINVAL, NOALT},
	{"flags PID_CGROUP, pid is not a cgroup fd -> EBADF", t_none, P_NULLPID, 0, G_NONE, PERF_FLAG_PID_CGROUP, EBADF, NOALT},
	/* group_fd */
	{"group_fd -2 -> EBADF", t_none, P_SELF, C_ANY, G_NEG2, 0, EBADF, NOALT},
	{"group_fd closed -> EBADF", t_none, P_SELF, C_ANY, G_CLOSED, 0, EBADF, NOALT},
	{"group_fd /dev/null (not perf) -> EBADF", t_none, P_SELF, C_ANY, G_DEVNULL, 0, EBADF, NOALT},
	{"group_fd = SW leader", t_none, P_SELF, C_ANY, G_LEADER, 0, OK, NOALT},
	{"HW member of SW leader", t_hw_cycles, P_SELF, C_ANY, G_LEADER, 0, OK, NOALT},
	{"SW member of HW leader", t_none, P_SELF, C_ANY, G_HW_LEADER, 0, OK, NOALT},
	{"group_fd = a sibling (not leader) -> EINVAL", t_none, P_SELF, C_ANY, G_SIBLING, 0, EINVAL, NOALT},
	{"group leader cpu 0, member cpu 1 -> EINVAL", t_none, P_SELF, 1, G_LEADER_CPU0, 0, EINVAL, NOALT}, /* smp 1: cpu 1 invalid, EINVAL too */
	{"group leader cpu 0, member cpu 0", t_none, P_SELF, 0, G_LEADER_CPU0, 0, OK, NOALT},
	{"group leader on self, member on child -> EINVAL", t_none, P_CHILD, C_ANY, G_LEADER, 0, EINVAL, NOALT},
	/* member.inherit != leader.inherit -> EINVAL */
	{"inherit member of non-inherit leader -> EINVAL", t_inherit_ok, P_SELF, C_ANY, G_LEADER, 0, EINVAL, NOALT},
	{"FD_NO_GROUP with leader fd", t_none, P_SELF, C_ANY, G_LEADER, PERF_FLAG_FD_NO_GROUP, OK, NOALT},
	/* FD_NO_GROUP: group_fd must still be a perf fd, but none of the group rules apply */
	{"FD_NO_GROUP group_fd -2 -> EBADF", t_none, P_SELF, C_ANY, G_NEG2, PERF_FLAG_FD_NO_GROUP, EBADF, NOALT},
	{"FD_NO_GROUP group_fd closed -> EBADF", t_none, P_SELF, C_ANY, G_CLOSED, PERF_FLAG_FD_NO_GROUP, EBADF, NOALT},
	{"FD_NO_GROUP group_fd /dev/null -> EBADF", t_none, P_SELF, C_ANY, G_DEVNULL, PERF_FLAG_FD_NO_GROUP, EBADF, NOALT},
	{"FD_NO_GROUP with a sibling fd", t_none, P_SELF, C_ANY, G_SIBLING, PERF_FLAG_FD_NO_GROUP, OK, NOALT},
	{"FD_NO_GROUP, leader cpu 0, event cpu 1", t_none, P_SELF, 1, G_LEADER_CPU0, PERF_FLAG_FD_NO_GROUP, OK, EINVAL}, /* smp 1: cpu 1 invalid */
	{"FD_NO_GROUP with other task's leader", t_none, P_SELF, C_ANY, G_OTHER_TASK, PERF_FLAG_FD_NO_GROUP, OK, NOALT},
	{"FD_NO_GROUP inherit event, non-inherit leader fd", t_inherit_ok, P_SELF, C_ANY, G_LEADER, PERF_FLAG_FD_NO_GROUP, OK, NOALT},
	{"FD_NO_GROUP|FD_OUTPUT, leader without a ring -> EINVAL", t_none, P_SELF, C_ANY, G_LEADER, PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT, EINVAL, NOALT},
	/* FD_OUTPUT redirects output to group_fd's buffer; the leader has none -> EINVAL */
	{"FD_OUTPUT with leader fd -> EINVAL", t_none, P_SELF, C_ANY, G_LEADER, PERF_FLAG_FD_OUTPUT, EINVAL, NOALT},
	{"group member of other task's leader -> EINVAL", t_none, P_SELF, C_ANY, G_OTHER_TASK, 0, EINVAL, NOALT},
};

static int ncpus;
static pid_t child = -1;
static int leader = -1, hw_leader = -1, leader_cpu0 = -1, sibling = -1, child_leader = -1, devnull = -1;

static void base_attr(struct perf_event_attr *a)
{
	memset(&ub, 0, sizeof(ub));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = ATTR_SZ;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->disabled = 1;
}

static int open_simple(int type, unsigned long long config, int pid, int cpu, int group)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.disabled = 1;
	return sys_perf_event_open(&a, pid, cpu, group, 0);
}

static void run_table(int record)
{
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		base_attr(&ub.a);
		c->tw(&ub.a);
		int pid = c->pid == P_NOSUCH ? 999999 : c->pid == P_CHILD ? child : c->pid == P_NULLPID ? getpid() : c->pid;
		if (c->pid == P_NULLPID && (c->flags & PERF_FLAG_PID_CGROUP))
			pid = devnull; /* "pid" is a cgroup fd here */
		int cpu = c->cpu == C_NCPU ? ncpus : c->cpu == C_LAST ? ncpus - 1 : c->cpu;
		int group = c->group;
		switch (c->group) {
		case G_LEADER: group = leader; break;
		case G_HW_LEADER: group = hw_leader; break;
		case G_DEVNULL: group = devnull; break;
		case G_CLOSED: group = 200; break;
		case G_SIBLING: group = sibling; break;
		case G_LEADER_CPU0: group = leader_cpu0; break;
		case G_OTHER_TASK: group = child_leader; break;
		}
		uint32_t size_in = ub.a.size;
		errno = 0;
		long fd = sys_perf_event_open(&ub.a, pid, cpu, group, c->flags);
		int e = errno;
		int got = fd >= 0 ? OK : e;
		if (record) {
			printf("REC %-50s -> %s\n", c->name, fd >= 0 ? "fd" : strerrorname_np(e));
		} else {
			char what[128];
			snprintf(what, sizeof(what), "perf_event_open %s", c->name);
			CHECK(got == c->want || (c->alt != NOALT && got == c->alt), what, "want %s, got %s",
			      c->want == OK ? "fd" : strerrorname_np(c->want), fd >= 0 ? "fd" : strerrorname_np(e));
		}
		if (fd >= 0 && (c->flags & PERF_FLAG_FD_CLOEXEC))
			CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "PERF_FLAG_FD_CLOEXEC sets FD_CLOEXEC", "%d",
			      fcntl(fd, F_GETFD));
		if (fd >= 0)
			close(fd);
		/* E2BIG writes the kernel's attr size back into attr->size */
		if (fd < 0 && e == E2BIG && !record) {
			char what[128];
			snprintf(what, sizeof(what), "E2BIG for %s writes back size %d", c->name, ATTR_SZ);
			CHECK(ub.a.size == (uint32_t)ATTR_SZ, what, "size was %u, now %u", size_in, ub.a.size);
		}
	}
}

static void check_fd_ops(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
	int fd = sys_perf_event_open(&a, 0, -1, -1, 0);
	if (!CHECK(fd >= 0, "open TASK_CLOCK for fd ops", "errno %d", errno))
		return;
	uint64_t buf[8];
	EXPECT_ERRNO(read(fd, buf, 8), ENOSPC, "read with buffer shorter than read_format -> ENOSPC");
	EXPECT_ERRNO(read(fd, buf, 23), ENOSPC, "read 23 of 24 bytes -> ENOSPC");
	ssize_t n = read(fd, buf, sizeof(buf));
	CHECK(n == 24, "read returns exactly value+enabled+id = 24 bytes", "got %zd", n);
	uint64_t id = 0;
	int r = ioctl(fd, PERF_EVENT_IOC_ID, &id);
	CHECK(r == 0 && id != 0, "PERF_EVENT_IOC_ID returns an id", "r %d id %llu", r, (unsigned long long)id);
	CHECK(n == 24 && buf[2] == id, "read_format ID matches IOC_ID", "read %llu ioc %llu", (unsigned long long)buf[2],
	      (unsigned long long)id);
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_ID, (void *)8), EFAULT, "IOC_ID bad pointer -> EFAULT");
	EXPECT_ERRNO(ioctl(fd, _IO('$', 99)), ENOTTY, "unknown perf ioctl -> ENOTTY");
	EXPECT_ERRNO(ioctl(fd, TCGETS), ENOTTY, "TCGETS on perf fd -> ENOTTY");
	CHECK(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) == 0, "IOC_DISABLE", "errno %d", errno);
	CHECK(ioctl(fd, PERF_EVENT_IOC_RESET, 0) == 0, "IOC_RESET", "errno %d", errno);
	CHECK(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0, "IOC_ENABLE", "errno %d", errno);
	uint64_t per = 0;
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_PERIOD, &per), EINVAL, "IOC_PERIOD on counting event -> EINVAL");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "x"), EINVAL, "IOC_SET_FILTER on SW event -> EINVAL");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, 200), EBADF, "IOC_SET_OUTPUT closed fd -> EBADF");
	CHECK(ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, -1L) == 0, "IOC_SET_OUTPUT -1 ok", "errno %d", errno);
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1), EINVAL, "IOC_REFRESH on non-sampling/inherit event -> EINVAL");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, 200), EBADF, "IOC_SET_BPF bad fd -> EBADF");
	EXPECT_ERRNO(lseek(fd, 0, SEEK_SET), ESPIPE, "lseek on perf fd -> ESPIPE");
	EXPECT_ERRNO(write(fd, buf, 8), EINVAL, "write on perf fd -> EINVAL");
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m == MAP_FAILED && errno == EINVAL, "mmap 1+3 pages (not 1+2^n) -> EINVAL", "m %p errno %d", m, errno);
	m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m == MAP_FAILED && errno == EINVAL, "mmap MAP_PRIVATE -> EINVAL", "m %p errno %d", m, errno);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
	CHECK(m == MAP_FAILED && errno == EINVAL, "mmap nonzero offset -> EINVAL", "m %p errno %d", m, errno);
	m = mmap(NULL, 5 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (CHECK(m != MAP_FAILED, "mmap 1+4 pages ok", "errno %d", errno)) {
		struct perf_event_mmap_page *mp = m;
		CHECK(mp->data_offset == (uint64_t)pg && mp->data_size == (uint64_t)4 * pg, "mmap page data_offset/size",
		      "%llu %llu", (unsigned long long)mp->data_offset, (unsigned long long)mp->data_size);
		void *m2 = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHECK(m2 == MAP_FAILED && errno == EINVAL, "second mmap with different size -> EINVAL", "errno %d", errno);
		munmap(m, 5 * pg);
	}
	close(fd);

	/* group read: read_format GROUP */
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	int l = sys_perf_event_open(&a, 0, -1, -1, 0);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	int s1 = sys_perf_event_open(&a, 0, -1, l, 0);
	CHECK(l >= 0 && s1 >= 0, "open group of 2", "errno %d", errno);
	EXPECT_ERRNO(read(l, buf, 8 + 16), ENOSPC, "group read short buffer -> ENOSPC");
	n = read(l, buf, sizeof(buf));
	CHECK(n == 8 + 2 * 16 && buf[0] == 2, "group read: nr=2, {value,id} x2 = 40 bytes", "n %zd nr %llu", n,
	      (unsigned long long)buf[0]);
	close(s1);
	close(l);
}

int main(int argc, char **argv)
{
	int record = argc > 1 && strcmp(argv[1], "record") == 0;
	tap_init("t_perf_errno", 30);
	if (geteuid() != 0) {
		tap_skip("all", "needs root (euid %d)", geteuid());
		return tap_done();
	}
	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	devnull = open("/dev/null", O_RDONLY);
	int gate[2];
	pipe(gate);
	child = fork();
	if (child == 0) {
		char c;
		close(gate[1]);
		(void)!read(gate[0], &c, 1);
		_exit(0);
	}
	close(gate[0]);
	leader = open_simple(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, -1, -1);
	hw_leader = open_simple(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, -1, -1);
	leader_cpu0 = open_simple(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 0, -1);
	sibling = open_simple(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, -1, leader);
	child_leader = open_simple(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, child, -1, -1);
	CHECK(leader >= 0 && hw_leader >= 0 && leader_cpu0 >= 0 && sibling >= 0 && child_leader >= 0,
	      "helper events (leaders, sibling) open", "%d %d %d %d %d errno %d", leader, hw_leader, leader_cpu0, sibling,
	      child_leader, errno);
	CHECK(ncpus >= 1, "sysconf nprocessors_conf", "%d", ncpus);
	run_table(record);
	if (!record)
		check_fd_ops();
	close(gate[1]);
	waitpid(child, NULL, 0);
	return tap_done();
}
