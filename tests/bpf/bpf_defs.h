/*
 * bpf_defs.h - what the BPF C programs under tests/bpf/ need, without libbpf: SEC(), the
 * legacy "maps" section definition (struct bpf_map_def, as old libbpf and perf read it), and
 * helper declarations by id from <linux/bpf.h>.  Compiled only by clang -target bpf.
 */
#pragma once

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#define SEC(name) __attribute__((section(name), used))

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   unsigned long long flags) = (void *)BPF_FUNC_map_update_elem;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
static unsigned long long (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static long (*bpf_trace_printk)(const char *fmt, unsigned int fmt_size, ...) =
	(void *)BPF_FUNC_trace_printk;
static unsigned int (*bpf_get_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;
static unsigned int (*bpf_get_smp_processor_id)(void) = (void *)BPF_FUNC_get_smp_processor_id;
static unsigned long long (*bpf_get_current_pid_tgid)(void) = (void *)BPF_FUNC_get_current_pid_tgid;
static long (*bpf_get_current_comm)(void *buf, unsigned int size) = (void *)BPF_FUNC_get_current_comm;
static long (*bpf_perf_event_output)(void *ctx, void *map, unsigned long long flags, void *data,
				     unsigned long long size) = (void *)BPF_FUNC_perf_event_output;
static long (*bpf_get_stackid)(void *ctx, void *map, unsigned long long flags) =
	(void *)BPF_FUNC_get_stackid;
static long (*bpf_probe_read_kernel)(void *dst, unsigned int size, const void *src) =
	(void *)BPF_FUNC_probe_read_kernel;
