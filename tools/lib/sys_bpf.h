/*
 * sys_bpf.h - bpf(2) for the userland tests (tests/user) and tools (tools/profile): the raw
 * syscall, map creation, element operations and program loading with a verifier log.
 *
 * Thin on purpose: each returns what the syscall returns (-1 with errno set), so a test sees
 * Linux's errno untouched, and leaves the attr fields it does not name at zero.  Header-only
 * (static inline), like tests/user/tap.h; the programs find it through -Itools/lib.
 * Not here: libbpf (t_libbpf*.c use Debian's), program text (each test builds its own).
 */
#pragma once

#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* bpf(cmd, a, sizeof(*a)) */
static inline long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* BPF_MAP_CREATE with map_extra (a bloom filter's hash count) and inner_map_fd (a map-in-map's
 * template; 0 for the other types): the map's fd */
static inline int bpf_map_new_ext(uint32_t type, uint32_t key_size, uint32_t value_size,
				  uint32_t max_entries, uint32_t map_flags, uint64_t map_extra,
				  int inner_map_fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = max_entries;
	a.map_flags = map_flags;
	a.map_extra = map_extra;
	a.inner_map_fd = (uint32_t)inner_map_fd;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

/* BPF_MAP_CREATE: the map's fd */
static inline int bpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size,
			      uint32_t max_entries, uint32_t map_flags)
{
	return bpf_map_new_ext(type, key_size, value_size, max_entries, map_flags, 0, 0);
}

/* BPF_MAP_LOOKUP_ELEM / UPDATE_ELEM / DELETE_ELEM / GET_NEXT_KEY (value_or_next: the next
 * key's buffer) */
static inline long bpf_map_elem(int cmd, int fd, const void *key, void *value_or_next,
				uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uintptr_t)value_or_next;
	else
		a.value = (uintptr_t)value_or_next;
	a.flags = flags;
	return sys_bpf(cmd, &a);
}

/* BPF_PROG_LOAD of a GPL program; log (log_size bytes, may be NULL) gets the verifier's
 * log_level 1 text, emptied first */
static inline int bpf_prog_new(uint32_t type, uint32_t prog_flags, const struct bpf_insn *insns,
			       uint32_t n, char *log, uint32_t log_size)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.prog_flags = prog_flags;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	if (log && log_size) {
		log[0] = 0;
		a.log_level = 1;
		a.log_buf = (uintptr_t)log;
		a.log_size = log_size;
	}
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

/* net.core.bpf_jit_enable: set it to v (0 when it took), or read it with v < 0 (its value);
 * -1 when the file is missing or refuses */
static inline int bpf_jit_sysctl(int v)
{
	char c[4] = "";
	int fd = open("/proc/sys/net/core/bpf_jit_enable", v < 0 ? O_RDONLY : O_WRONLY), r;

	if (fd < 0)
		return -1;
	if (v < 0) {
		r = read(fd, c, 1) == 1 ? c[0] - '0' : -1;
	} else {
		c[0] = (char)('0' + v);
		r = write(fd, c, 1) == 1 ? 0 : -1;
	}
	close(fd);
	return r;
}
