/* tracing.h - what the tracing tests (t_tracepoint, t_uprobe) share (header only):
 * perf_event_open (tools/lib/sys_perf.h), reading a small tracefs/sysfs file, and a counting eBPF program that adds
 * 1 to word 0 of an array map's element 0, stores one word of its ctx in word 1, and returns
 * a chosen value (the tests check both words to see that it ran and what its ctx held).
 */
#ifndef TESTS_USER_TRACING_H
#define TESTS_USER_TRACING_H

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys_bpf.h"
#include "sys_perf.h"

/* perf_event_open(2) by the name the tracing tests call it */
static inline long peo(struct perf_event_attr *a, int pid, int cpu, int group_fd,
		       unsigned long flags)
{
	return sys_perf_event_open(a, pid, cpu, group_fd, flags);
}

/* An event's count (read without read_format), all ones when the read fails. */
static inline uint64_t count_of(int fd)
{
	uint64_t c = 0;

	if (read(fd, &c, sizeof(c)) != sizeof(c))
		return ~0ull;
	return c;
}

/* A disabled cpu-clock sampling event on this task (for the wrong-program-type checks). */
static inline int sw_sampling_fd(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 100000;
	a.disabled = 1;
	return (int)peo(&a, 0, -1, -1, 0);
}

/* The file's contents, NUL-terminated, in buf: the length, or -errno. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY), n = 0, r;

	if (fd < 0)
		return -errno;
	while ((size_t)n < size - 1 && (r = (int)read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	return n;
}

/* Write text to the file at path (opened O_WRONLY | flags) in one write: 0 or -errno. */
static inline int write_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | flags), r;

	if (fd < 0)
		return -errno;
	r = (int)write(fd, text, strlen(text));
	r = r < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* The id of tracefs's events/<sysev> ("sched/sched_switch"), or -1. */
static inline long event_id(const char *sysev)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", sysev);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* The file offset that addr of this process maps (its path, from /proc/self/maps, into
 * path), or -1. */
static inline long map_file_offset(const void *addr, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[768];
	long off = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		char perms[8], p[512] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %511s", &lo, &hi, perms, &pgoff, p) < 4)
			continue;
		if ((uintptr_t)addr >= lo && (uintptr_t)addr < hi && p[0] == '/') {
			off = (long)((uintptr_t)addr - lo + pgoff);
			snprintf(path, size, "%s", p);
			break;
		}
	}
	fclose(f);
	return off;
}

/* The address of the first of names found in /proc/kallsyms (T or t), or 0. */
static inline uint64_t kallsyms_find(const char *const *names, const char **found)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[200];
	unsigned long long a;
	char t;
	uint64_t best = 0;

	if (!f)
		return 0;
	while (!best && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %199s", &a, &t, sym) != 3 || (t != 'T' && t != 't'))
			continue;
		for (int i = 0; names[i]; i++)
			if (!strcmp(sym, names[i])) {
				best = a;
				*found = names[i];
			}
	}
	fclose(f);
	return best;
}

/* Every format file's common fields and the empty line after them. */
#define TRACE_COMMON_FIELDS                                                                        \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                       \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                       \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"               \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Is tracefs's events/<sysev>/format (read into buf) want: the whole file when exact, else
 * its start?  The length read, or -1 when it differs (-errno when it cannot be read). */
static inline int format_is(const char *sysev, const char *want, int exact, char *buf, size_t size)
{
	char path[256];
	int n;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/format", sysev);
	n = read_file(path, buf, size);
	if (n <= 0)
		return n < 0 ? n : -1;
	return (exact ? strcmp(buf, want) : strncmp(buf, want, strlen(want))) ? -1 : n;
}

/* A disabled tracepoint event on this task: counting (period 0) or sampling PERF_SAMPLE_RAW. */
static inline int tp_open(long id, int inherit, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.disabled = 1;
	a.inherit = (unsigned)inherit;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_RAW;
	return (int)peo(&a, 0, -1, -1, 0);
}

#define INSN(c, d, s_, o, i)                                                                       \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s_) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s_, 0, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The array map (one element of two u64 words) the counting program writes: fd or -1. */
static inline int bpf_count_map(void)
{
	union bpf_attr ma;

	memset(&ma, 0, sizeof(ma));
	ma.map_type = BPF_MAP_TYPE_ARRAY;
	ma.key_size = 4;
	ma.value_size = 16;
	ma.max_entries = 1;
	return (int)sys_bpf(BPF_MAP_CREATE, &ma);
}

/*
 * Load a program of type: when type is counting_type, the n_set (at most 4) instructions
 * set_r7 that put a value in r7, then value[0] += 1 and value[1] = r7, returning ret; any
 * other type gets "return 1" (for the wrong-type attach checks).  The fd or -1.
 */
static inline int bpf_count_prog_r7(uint32_t type, uint32_t counting_type, int map, int ret,
				    const struct bpf_insn *set_r7, unsigned int n_set)
{
	struct bpf_insn tail[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(2, 10),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0),
		MOV64_IMM(1, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 7, 8, 0),
		MOV64_IMM(0, ret),
		EXIT(),
	};
	struct bpf_insn p[4 + sizeof(tail) / sizeof(tail[0])];
	struct bpf_insn trivial[] = { MOV64_IMM(0, 1), EXIT() };
	union bpf_attr a;

	if (n_set > 4)
		return -1;
	memcpy(p, set_r7, n_set * sizeof(*p));
	memcpy(p + n_set, tail, sizeof(tail));
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uintptr_t)(type == counting_type ? p : trivial);
	a.insn_cnt = type == counting_type ? n_set + sizeof(tail) / sizeof(tail[0]) : 2;
	a.license = (uintptr_t) "GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

/* bpf_count_prog_r7 with value[1] = the ctx word of size ld_size (BPF_W, BPF_DW) at ctx_off. */
static inline int bpf_count_prog(uint32_t type, uint32_t counting_type, int map, int ret,
				 uint8_t ld_size, int16_t ctx_off)
{
	struct bpf_insn ld = INSN(BPF_LDX | BPF_MEM | ld_size, 7, 1, ctx_off, 0);

	return bpf_count_prog_r7(type, counting_type, map, ret, &ld, 1);
}

/* The two words of the map's element 0 (all ones when the lookup fails). */
static inline void bpf_count_value(int map, uint64_t v[2])
{
	union bpf_attr a;
	uint32_t key = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)v;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
		v[0] = v[1] = ~0ull;
}

#endif
