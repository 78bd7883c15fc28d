/* t_bpf_obj: bpf(2) on programs, maps and links as objects, what bpftool reads:
 * BPF_{PROG,MAP,LINK}_GET_NEXT_ID and _GET_FD_BY_ID with their errnos, BPF_OBJ_GET_INFO_BY_FD
 * (fields, info_len truncation and tail rules, map ids in xlated instructions, record sizes),
 * run_cnt/run_time_ns under BPF_ENABLE_STATS and kernel.bpf_stats_enabled, /proc/self/fdinfo
 * of prog, map and link fds, BPF_TASK_FD_QUERY (tracepoint program, PERF_EVENT program, no
 * program, not a perf event), and a bpf filesystem (mount -t bpf, BPF_OBJ_PIN, BPF_OBJ_GET,
 * unlink, a pinned map outliving its fds).
 *
 *   t_bpf_obj            the checks (TAP lines)
 *   t_bpf_obj hold [DIR] for tests/e2e/debian-bpftool.sh: loads map "pk_counts" (hash, keys
 *                        1..3 = 10, 20, 30), program "pk_tp" (counts sched_switch hits in key 1)
 *                        on a sched:sched_switch event and "pk_sample" linked to a cpu-clock
 *                        event, pins the map as DIR/pk_counts and the program as DIR/pk_tp when
 *                        DIR is given, prints "READY", then waits for a signal.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01: 117/117, as here.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_perf.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

#define ENOTSUPP 524
#define TRACEFS "/sys/kernel/tracing"

#define INSN(c, d, s_, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s_) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s_, 0, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static long sys_bpf(int cmd, union bpf_attr *a, unsigned size)
{
	return syscall(SYS_bpf, cmd, a, size);
}

static long bpf_a(int cmd, union bpf_attr *a)
{
	return sys_bpf(cmd, a, sizeof(*a));
}

static int map_create(const char *name)
{
	union bpf_attr a = { .map_type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
			     .max_entries = 16 };

	strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	return (int)bpf_a(BPF_MAP_CREATE, &a);
}

static int map_put(int fd, uint32_t k, uint64_t v)
{
	union bpf_attr a = { .map_fd = fd, .key = (uintptr_t)&k, .value = (uintptr_t)&v };

	return (int)bpf_a(BPF_MAP_UPDATE_ELEM, &a);
}

static uint64_t map_get(int fd, uint32_t k)
{
	uint64_t v = UINT64_MAX;
	union bpf_attr a = { .map_fd = fd, .key = (uintptr_t)&k, .value = (uintptr_t)&v };

	bpf_a(BPF_MAP_LOOKUP_ELEM, &a);
	return v;
}

/* r1 = map (lddw), *(u32 *)(r10 - 4) = 1, lookup, if found *value += 1; return ret.  12 slots. */
static const int COUNT_LEN = 12;
static void count_prog(struct bpf_insn *p, int map, int ret)
{
	int i = 0;

	p[i++] = INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 1);
	p[i++] = INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map);
	p[i++] = INSN(0, 0, 0, 0, 0);
	p[i++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[i++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	p[i++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[i++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
	p[i++] = MOV64_IMM(BPF_REG_1, 1);
	p[i++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD);
	p[i++] = MOV64_IMM(BPF_REG_0, ret);
	p[i++] = EXIT();
	p[i++] = EXIT(); /* never reached: keeps COUNT_LEN even */
}

static int prog_load(int type, const struct bpf_insn *insns, int n, const char *name, int flags)
{
	union bpf_attr a = { .prog_type = type, .insns = (uintptr_t)insns, .insn_cnt = n,
			     .license = (uintptr_t)"GPL", .prog_flags = flags };

	strncpy(a.prog_name, name, sizeof(a.prog_name) - 1);
	return (int)bpf_a(BPF_PROG_LOAD, &a);
}

static int load_count(int type, int map, const char *name)
{
	struct bpf_insn p[16];

	count_prog(p, map, 1);
	return prog_load(type, p, COUNT_LEN - 1, name, 0);
}

static int info_of(int fd, void *info, uint32_t *len)
{
	union bpf_attr a = { .info.bpf_fd = fd, .info.info_len = *len, .info.info = (uintptr_t)info };
	int r = (int)bpf_a(BPF_OBJ_GET_INFO_BY_FD, &a);

	*len = a.info.info_len;
	return r;
}

static uint32_t id_of(int fd)
{
	struct bpf_prog_info pi = { 0 };
	struct bpf_map_info mi = { 0 };
	uint32_t len = sizeof(pi);

	if (!info_of(fd, &pi, &len))
		return pi.id; /* the id field is at offset 4 in the three info structs */
	len = sizeof(mi);
	return info_of(fd, &mi, &len) ? 0 : mi.id;
}

static int cpu_clock_event(void)
{
	struct perf_event_attr at = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(at),
				      .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
				      .disabled = 1 };

	return (int)sys_perf_event_open(&at, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static long tp_id(const char *sysev)
{
	char path[256], buf[32] = "";
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/id", sysev);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = 0;
	close(fd);
	return buf[0] ? atol(buf) : -1;
}

static int tp_event(long id)
{
	struct perf_event_attr at = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(at), .config = id,
				      .sample_period = 1 };

	return (int)sys_perf_event_open(&at, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int link_create(int prog, int event)
{
	union bpf_attr a = { .link_create.prog_fd = prog, .link_create.target_fd = event,
			     .link_create.attach_type = BPF_PERF_EVENT };

	return (int)bpf_a(BPF_LINK_CREATE, &a);
}

static int next_id(int cmd, uint32_t start, uint32_t *next)
{
	union bpf_attr a = { .start_id = start };
	int r = (int)bpf_a(cmd, &a);

	*next = a.next_id;
	return r;
}

static int fd_by_id(int cmd, uint32_t id, uint32_t open_flags)
{
	union bpf_attr a = { .prog_id = id, .open_flags = open_flags };

	return (int)bpf_a(cmd, &a);
}

/* Does the id walk of cmd from 0 meet want? */
static bool walk_finds(int cmd, uint32_t want)
{
	uint32_t id = 0, n;

	while (!next_id(cmd, id, &n)) {
		if (n <= id)
			return false;
		if (n == want)
			return true;
		id = n;
	}
	return false;
}

/* ---- ids and fds by id ---- */

static int map_del(int fd, uint32_t k)
{
	union bpf_attr a = { .map_fd = fd, .key = (uintptr_t)&k };

	return (int)bpf_a(BPF_MAP_DELETE_ELEM, &a);
}

static int map_next(int fd, uint32_t *next)
{
	union bpf_attr a = { .map_fd = fd, .key = 0, .next_key = (uintptr_t)next };

	return (int)bpf_a(BPF_MAP_GET_NEXT_KEY, &a);
}

static int map_freeze(int fd)
{
	union bpf_attr a = { .map_fd = fd };

	return (int)bpf_a(BPF_MAP_FREEZE, &a);
}

static int fd_flags(int fd)
{
	char path[64], buf[256];
	int f, n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	n = f < 0 ? -1 : (int)read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strstr(buf, "flags:\t") ? (int)strtol(strstr(buf, "flags:\t") + 7, NULL, 8) : -1;
}

/* Map fds opened read-only or write-only (open_flags), and a map created BPF_F_RDONLY. */
static void test_map_modes(int map, uint32_t mid)
{
	uint32_t nk;
	int ro = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, BPF_F_RDONLY);
	int wo = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, BPF_F_WRONLY);
	int e, m, rw;
	union bpf_attr a = { .map_type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
			     .max_entries = 4, .map_flags = BPF_F_RDONLY };

	CHECK(ro >= 0 && fd_flags(ro) == 02000000, "MAP_GET_FD_BY_ID BPF_F_RDONLY: an O_RDONLY fd", "%d flags %o", ro, fd_flags(ro));
	CHECK(wo >= 0 && fd_flags(wo) == 02000001, "MAP_GET_FD_BY_ID BPF_F_WRONLY: an O_WRONLY fd", "%d flags %o", wo, fd_flags(wo));
	CHECK(map_get(ro, 2) == 20 && map_next(ro, &nk) == 0, "read-only fd: lookup and get_next_key", "%s", strerror(errno));
	e = map_put(ro, 9, 9) ? errno : 0;
	CHECK(e == EPERM, "read-only fd: update EPERM", "%s", strerror(e));
	e = map_del(ro, 2) ? errno : 0;
	CHECK(e == EPERM, "read-only fd: delete EPERM", "%s", strerror(e));
	CHECK(map_put(wo, 9, 90) == 0 && map_del(wo, 9) == 0, "write-only fd: update and delete", "%s", strerror(errno));
	e = map_get(wo, 2) == UINT64_MAX ? errno : 0;
	CHECK(e == EPERM, "write-only fd: lookup EPERM", "%s", strerror(e));
	e = map_next(wo, &nk) ? errno : 0;
	CHECK(e == EPERM, "write-only fd: get_next_key EPERM", "%s", strerror(e));
	close(ro);
	close(wo);
	(void)map;
	m = (int)bpf_a(BPF_MAP_CREATE, &a);
	CHECK(m >= 0 && fd_flags(m) == 02000000, "a BPF_F_RDONLY map's own fd is O_RDONLY", "%d flags %o", m, fd_flags(m));
	e = map_put(m, 1, 1) ? errno : 0;
	CHECK(e == EPERM, "BPF_F_RDONLY map: update through its fd EPERM", "%s", strerror(e));
	rw = fd_by_id(BPF_MAP_GET_FD_BY_ID, id_of(m), 0);
	CHECK(rw >= 0 && fd_flags(rw) == 02000002 && map_put(rw, 1, 1) == 0,
	      "BPF_F_RDONLY map: a read-write fd by id updates it (the flag is the first fd's mode)", "%s", strerror(errno));
	e = map_freeze(m) ? errno : 0;
	CHECK(e == 0, "BPF_F_RDONLY map: freeze through its read-only fd works (6.1 checks no fd mode)", "%s", strerror(e));
	e = map_put(rw, 1, 2) ? errno : 0;
	CHECK(e == EPERM, "frozen: update through the read-write fd EPERM", "%s", strerror(e));
	close(rw);
	close(m);
}

static void test_ids(int prog, int map, int link, int link_prog)
{
	uint32_t pid = id_of(prog), mid = id_of(map), lid, n;
	struct bpf_link_info li = { 0 };
	uint32_t len = sizeof(li);
	int fd, e;

	CHECK(info_of(link, &li, &len) == 0 && li.prog_id == id_of(link_prog) &&
		      li.type == BPF_LINK_TYPE_PERF_EVENT && len == sizeof(li),
	      "link info: type PERF_EVENT, its program's id", "type %u prog_id %u (want %u) len %u: %s",
	      li.type, li.prog_id, id_of(link_prog), len, strerror(errno));
	lid = li.id;
	CHECK(walk_finds(BPF_PROG_GET_NEXT_ID, pid), "PROG_GET_NEXT_ID walks to our program", "id %u not met", pid);
	CHECK(walk_finds(BPF_MAP_GET_NEXT_ID, mid), "MAP_GET_NEXT_ID walks to our map", "id %u not met", mid);
	CHECK(walk_finds(BPF_LINK_GET_NEXT_ID, lid), "LINK_GET_NEXT_ID walks to our link", "id %u not met", lid);
	e = next_id(BPF_PROG_GET_NEXT_ID, INT_MAX, &n) ? errno : 0;
	CHECK(e == EINVAL, "GET_NEXT_ID from INT_MAX: EINVAL", "%s", strerror(e));
	e = next_id(BPF_MAP_GET_NEXT_ID, INT_MAX - 1, &n) ? errno : 0;
	CHECK(e == ENOENT, "GET_NEXT_ID past the last id: ENOENT", "%s", strerror(e));

	fd = fd_by_id(BPF_PROG_GET_FD_BY_ID, pid, 0);
	CHECK(fd >= 0 && id_of(fd) == pid, "PROG_GET_FD_BY_ID gives a fd of the program", "fd %d: %s", fd, strerror(errno));
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "the fd is close-on-exec", "F_GETFD");
	close(fd);
	fd = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, 0);
	CHECK(fd >= 0 && id_of(fd) == mid, "MAP_GET_FD_BY_ID gives a fd of the map", "fd %d: %s", fd, strerror(errno));
	CHECK(fd >= 0 && map_get(fd, 2) == 20, "the map read through it", "key 2 = %llu", (unsigned long long)map_get(fd, 2));
	close(fd);
	fd = fd_by_id(BPF_LINK_GET_FD_BY_ID, lid, 0);
	len = sizeof(li);
	CHECK(fd >= 0 && info_of(fd, &li, &len) == 0 && li.id == lid, "LINK_GET_FD_BY_ID gives a fd of the link", "fd %d: %s", fd, strerror(errno));
	close(fd);
	e = fd_by_id(BPF_PROG_GET_FD_BY_ID, 0, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "PROG_GET_FD_BY_ID of id 0: ENOENT", "%s", strerror(e));
	e = fd_by_id(BPF_PROG_GET_FD_BY_ID, INT_MAX - 2, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "PROG_GET_FD_BY_ID of an unused id: ENOENT", "%s", strerror(e));
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, INT_MAX - 2, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "MAP_GET_FD_BY_ID of an unused id: ENOENT", "%s", strerror(e));
	e = fd_by_id(BPF_LINK_GET_FD_BY_ID, INT_MAX - 2, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "LINK_GET_FD_BY_ID of an unused id: ENOENT", "%s", strerror(e));
	e = fd_by_id(BPF_PROG_GET_FD_BY_ID, pid, BPF_F_RDONLY) < 0 ? errno : 0;
	CHECK(e == EINVAL, "PROG_GET_FD_BY_ID with open_flags: EINVAL", "%s", strerror(e));
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, BPF_F_RDONLY | BPF_F_WRONLY) < 0 ? errno : 0;
	CHECK(e == EINVAL, "MAP_GET_FD_BY_ID with RDONLY|WRONLY: EINVAL", "%s", strerror(e));
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, 1u << 7) < 0 ? errno : 0;
	CHECK(e == EINVAL, "MAP_GET_FD_BY_ID with an unknown open flag: EINVAL", "%s", strerror(e));

	test_map_modes(map, mid);

	/* a closed map's id is gone */
	fd = map_create("gone");
	n = id_of(fd);
	close(fd);
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, n, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "a closed map's id: ENOENT", "%s", strerror(e));
	CHECK(!walk_finds(BPF_MAP_GET_NEXT_ID, n), "a closed map's id is not walked", "id %u met", n);
}

/* ---- OBJ_GET_INFO_BY_FD ---- */

static void test_info(int prog, int map)
{
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	struct bpf_insn x[16], want[16];
	uint32_t ids[4] = { 0 }, lens[2] = { 7, 7 }, len;
	uint64_t ksyms[2] = { 0 }, tags = 0;
	uint8_t tag8[8] = { 0 };
	struct timespec ts;
	unsigned char big[sizeof(pi) + 16];
	int e;

	count_prog(want, map, 1);
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 4;
	pi.map_ids = (uintptr_t)ids;
	pi.xlated_prog_len = sizeof(x);
	pi.xlated_prog_insns = (uintptr_t)x;
	pi.nr_jited_ksyms = 2;
	pi.jited_ksyms = (uintptr_t)ksyms;
	pi.nr_jited_func_lens = 2;
	pi.jited_func_lens = (uintptr_t)lens;
	pi.nr_prog_tags = 1;
	pi.prog_tags = (uintptr_t)tag8;
	len = sizeof(pi);
	e = info_of(prog, &pi, &len) ? errno : 0;
	CHECK(!e && len == sizeof(pi), "prog info: info_len back", "%s len %u", strerror(e), len);
	CHECK(pi.type == BPF_PROG_TYPE_TRACEPOINT && !strcmp(pi.name, "pk_tp"), "prog info: type and name", "type %u name %s", pi.type, pi.name);
	CHECK(pi.nr_map_ids == 1 && ids[0] == id_of(map) && ids[1] == 0, "prog info: map_ids", "nr %u ids %u %u (map %u)", pi.nr_map_ids, ids[0], ids[1], id_of(map));
	/* Linux inlines the hash lookup (two more instructions): at least the program's length */
	CHECK(pi.xlated_prog_len >= (COUNT_LEN - 1) * 8 && pi.xlated_prog_len % 8 == 0, "prog info: xlated_prog_len", "%u", pi.xlated_prog_len);
	CHECK(x[1].code == (BPF_LD | BPF_IMM | BPF_DW) && x[1].src_reg == BPF_PSEUDO_MAP_FD &&
		      x[1].imm == (int)id_of(map) && x[2].imm == 0,
	      "xlated: the map lddw holds the map's id", "src %u imm %d / %d", x[1].src_reg, x[1].imm, x[2].imm);
	CHECK(!memcmp(&x[0], &want[0], 8) && !memcmp(&x[3], &want[3], 2 * 8) && x[5].code == (BPF_JMP | BPF_CALL),
	      "xlated: the instructions before the helper call as loaded", "differ");
	CHECK(pi.created_by_uid == 0 && pi.gpl_compatible, "prog info: created_by_uid 0, gpl_compatible", "uid %u gpl %u", pi.created_by_uid, pi.gpl_compatible);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	CHECK(pi.load_time > 0 && pi.load_time <= (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec,
	      "prog info: load_time in boot-time ns, before now", "%llu", (unsigned long long)pi.load_time);
	CHECK(pi.verified_insns > 0, "prog info: verified_insns", "%u", pi.verified_insns);
	CHECK(pi.nr_jited_ksyms == 1 && pi.nr_jited_func_lens == 1 && ksyms[0] && ksyms[1] == 0 &&
		      lens[0] == pi.jited_prog_len && lens[1] == 7,
	      "prog info: one function, its address and length", "ksyms %u %llx lens %u %u (jited %u)",
	      pi.nr_jited_ksyms, (unsigned long long)ksyms[0], lens[0], lens[1], pi.jited_prog_len);
	CHECK(pi.nr_prog_tags == 1 && !memcmp(tag8, pi.tag, 8) && (pi.tag[0] | pi.tag[7]), "prog info: prog_tags[0] is the tag", "differ");
	CHECK(pi.func_info_rec_size == sizeof(struct bpf_func_info) && pi.line_info_rec_size == sizeof(struct bpf_line_info) &&
		      pi.jited_line_info_rec_size == 8 && pi.nr_func_info == 0 && pi.btf_id == 0,
	      "prog info: record sizes, no func_info, no BTF", "%u %u %u nr_func_info %u", pi.func_info_rec_size,
	      pi.line_info_rec_size, pi.jited_line_info_rec_size, pi.nr_func_info);
	(void)tags;

	/* the caller's pointers stay; nothing copied without room */
	memset(&pi, 0, sizeof(pi));
	pi.map_ids = 0x1234;
	len = sizeof(pi);
	CHECK(info_of(prog, &pi, &len) == 0 && pi.map_ids == 0x1234 && pi.nr_map_ids == 1,
	      "prog info: counts only without room, the caller's pointer kept", "%llx %u", (unsigned long long)pi.map_ids, pi.nr_map_ids);
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 1;
	pi.map_ids = 8;
	len = sizeof(pi);
	e = info_of(prog, &pi, &len) ? errno : 0;
	CHECK(e == EFAULT, "prog info: a bad map_ids pointer: EFAULT", "%s", strerror(e));
	memset(&pi, 0, sizeof(pi));
	pi.func_info_rec_size = 4;
	len = sizeof(pi);
	e = info_of(prog, &pi, &len) ? errno : 0;
	CHECK(e == EINVAL, "prog info: a wrong func_info_rec_size: EINVAL", "%s", strerror(e));
	/* info_len rules */
	memset(&pi, 0, sizeof(pi));
	len = 8;
	CHECK(info_of(prog, &pi, &len) == 0 && len == 8 && pi.id == id_of(prog) && pi.tag[0] == 0,
	      "info_len 8: type and id only, info_len 8", "len %u", len);
	memset(big, 0, sizeof(big));
	len = sizeof(big);
	CHECK(info_of(prog, big, &len) == 0 && len == sizeof(pi), "info_len beyond the struct with a zero tail: cut to the struct", "len %u: %s", len, strerror(errno));
	big[sizeof(pi) + 3] = 1;
	len = sizeof(big);
	e = info_of(prog, big, &len) ? errno : 0;
	CHECK(e == E2BIG, "info_len beyond the struct with a non-zero tail: E2BIG", "%s", strerror(e));
	len = sizeof(pi);
	e = info_of(1000, &pi, &len) ? errno : 0;
	CHECK(e == EBADFD, "info of a closed fd: EBADFD", "%s", strerror(e));
	e = info_of(0, &pi, &len) ? errno : 0;
	CHECK(e == EINVAL, "info of a fd that is no bpf object: EINVAL", "%s", strerror(e));

	memset(&mi, 0xff, sizeof(mi));
	len = sizeof(mi);
	CHECK(info_of(map, &mi, &len) == 0 && mi.type == BPF_MAP_TYPE_HASH && mi.key_size == 4 &&
		      mi.value_size == 8 && mi.max_entries == 16 && mi.map_flags == 0 &&
		      !strcmp(mi.name, "pk_counts") && mi.btf_id == 0 && mi.ifindex == 0,
	      "map info: type, sizes, flags, name; no BTF (zeros, not the caller's bytes)", "type %u %u/%u/%u %s",
	      mi.type, mi.key_size, mi.value_size, mi.max_entries, mi.name);
}

/* ---- runtime statistics ---- */

/* One write of kernel.bpf_stats_enabled: 0 or the errno. */
static int sysctl_write(const char *v)
{
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, v, strlen(v)) < 0)
		e = errno;
	close(fd);
	return e;
}

static void test_stats(void)
{
	struct bpf_insn p[] = { MOV64_IMM(BPF_REG_0, 0), EXIT() };
	struct bpf_prog_info pi;
	uint32_t len;
	union bpf_attr a;
	char buf[16] = "";
	int prog = prog_load(BPF_PROG_TYPE_SYSCALL, p, 2, "statsprog", BPF_F_SLEEPABLE), sfd, fd;

	if (prog < 0) {
		tap_fail("stats: a SYSCALL program loads", "%s", strerror(errno));
		return;
	}
#define RUN() (memset(&a, 0, sizeof(a)), a.test.prog_fd = prog, bpf_a(BPF_PROG_TEST_RUN, &a))
#define INFO() (memset(&pi, 0, sizeof(pi)), len = sizeof(pi), info_of(prog, &pi, &len))
	RUN();
	INFO();
	CHECK(pi.run_cnt == 0 && pi.run_time_ns == 0, "stats off: run_cnt 0", "%llu", (unsigned long long)pi.run_cnt);
	memset(&a, 0, sizeof(a));
	a.enable_stats.type = BPF_STATS_RUN_TIME;
	sfd = (int)bpf_a(BPF_ENABLE_STATS, &a);
	CHECK(sfd >= 0, "BPF_ENABLE_STATS gives a fd", "%s", strerror(errno));
	RUN();
	RUN();
	RUN();
	INFO();
	CHECK(pi.run_cnt == 3 && pi.run_time_ns > 0, "stats on: 3 runs counted, time > 0", "cnt %llu ns %llu",
	      (unsigned long long)pi.run_cnt, (unsigned long long)pi.run_time_ns);
	fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && !strcmp(buf, "0\n"),
	      "kernel.bpf_stats_enabled reads 0 while only a stats fd enables them", "'%s'", buf);
	close(fd);
	close(sfd);
	RUN();
	INFO();
	CHECK(pi.run_cnt == 3, "stats fd closed: not counted", "cnt %llu", (unsigned long long)pi.run_cnt);
	CHECK(sysctl_write("1") == 0, "kernel.bpf_stats_enabled = 1", "%s", strerror(errno));
	CHECK(sysctl_write("2") == EINVAL, "kernel.bpf_stats_enabled = 2: EINVAL", "%s", strerror(errno));
	RUN();
	INFO();
	CHECK(pi.run_cnt == 4, "sysctl on: counted", "cnt %llu", (unsigned long long)pi.run_cnt);
	CHECK(sysctl_write("0") == 0, "kernel.bpf_stats_enabled = 0", "%s", strerror(errno));
	RUN();
	INFO();
	CHECK(pi.run_cnt == 4, "sysctl off again: not counted", "cnt %llu", (unsigned long long)pi.run_cnt);
	memset(&a, 0, sizeof(a));
	a.enable_stats.type = 7;
	CHECK(bpf_a(BPF_ENABLE_STATS, &a) < 0 && errno == EINVAL, "BPF_ENABLE_STATS of an unknown type: EINVAL", "%s", strerror(errno));
	close(prog);
#undef RUN
#undef INFO
}

/* ---- fdinfo ---- */

static int fdinfo(int fd, char *buf, size_t size)
{
	char path[64];
	int f, n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -1;
	n = (int)read(f, buf, size - 1);
	close(f);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void test_fdinfo(int prog, int map, int link, int link_prog, int event)
{
	struct bpf_prog_info pi = { 0 };
	char buf[1024], line[128], tag[17];
	uint32_t len = sizeof(pi);

	info_of(prog, &pi, &len);
	for (int i = 0; i < 8; i++)
		sprintf(tag + 2 * i, "%02x", pi.tag[i]);
	fdinfo(prog, buf, sizeof(buf));
	CHECK(!strncmp(buf, "pos:\t0\nflags:\t02000002\nmnt_id:\t", 30), "prog fdinfo: pos, flags 02000002, mnt_id first", "%.60s", buf);
	CHECK(has_line(buf, "prog_type:\t5"), "prog fdinfo: prog_type 5", "%s", buf);
	snprintf(line, sizeof(line), "prog_tag:\t%s", tag);
	CHECK(has_line(buf, line), "prog fdinfo: prog_tag", "want %s in %s", line, buf);
	snprintf(line, sizeof(line), "prog_id:\t%u", pi.id);
	CHECK(has_line(buf, line), "prog fdinfo: prog_id", "%s", buf);
	CHECK(has_line(buf, "memlock:\t4096") && has_line(buf, "recursion_misses:\t0") &&
		      strstr(buf, "\nprog_jited:\t") && strstr(buf, "\nrun_time_ns:\t") && strstr(buf, "\nrun_cnt:\t"),
	      "prog fdinfo: memlock 4096, prog_jited, run_time_ns, run_cnt, recursion_misses", "%s", buf);
	snprintf(line, sizeof(line), "verified_insns:\t%u", pi.verified_insns);
	CHECK(has_line(buf, line), "prog fdinfo: verified_insns as the info's", "%s", buf);

	fdinfo(map, buf, sizeof(buf));
	snprintf(line, sizeof(line), "map_id:\t%u", id_of(map));
	CHECK(has_line(buf, "map_type:\t1") && has_line(buf, "key_size:\t4") && has_line(buf, "value_size:\t8") &&
		      has_line(buf, "max_entries:\t16") && has_line(buf, "map_flags:\t0x0") &&
		      has_line(buf, "map_extra:\t0x0") && has_line(buf, "memlock:\t4096") && has_line(buf, line) &&
		      has_line(buf, "frozen:\t0"),
	      "map fdinfo: type, sizes, flags, extra, memlock, id, frozen", "%s", buf);
	fdinfo(link, buf, sizeof(buf));
	snprintf(line, sizeof(line), "prog_id:\t%u", id_of(link_prog));
	CHECK(!strncmp(buf, "pos:\t0\nflags:\t02000000\n", 23) && has_line(buf, "link_type:\tperf") &&
		      strstr(buf, "\nlink_id:\t") && has_line(buf, line),
	      "link fdinfo: flags 02000000 (O_RDONLY), link_type perf, link_id, prog_id", "%s", buf);
	fdinfo(event, buf, sizeof(buf));
	CHECK(!strncmp(buf, "pos:\t0\nflags:\t02000002\nmnt_id:\t", 30) && strstr(buf, "\nino:\t") &&
		      !strchr(strstr(buf, "\nino:\t") + 1, '\n')[1],
	      "perf event fdinfo: pos, flags, mnt_id, ino and nothing more (6.1)", "%s", buf);
}

/* ---- BPF_TASK_FD_QUERY ---- */

static int fd_query(int pid, int fd, uint32_t flags, char *buf, uint32_t *buf_len, uint32_t *prog_id,
		    uint32_t *fd_type)
{
	union bpf_attr a = { .task_fd_query = { .pid = pid, .fd = fd, .flags = flags,
						.buf_len = *buf_len, .buf = (uintptr_t)buf } };
	int r = (int)bpf_a(BPF_TASK_FD_QUERY, &a);

	*buf_len = a.task_fd_query.buf_len;
	*prog_id = a.task_fd_query.prog_id;
	*fd_type = a.task_fd_query.fd_type;
	return r;
}

static void test_query(int tp, int prog, int link)
{
	char buf[64];
	uint32_t bl, pid, ty;
	int me = getpid(), e, ev, sp;
	struct bpf_insn ret1[] = { MOV64_IMM(BPF_REG_0, 1), EXIT() };

	bl = sizeof(buf);
	e = fd_query(me, 0, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == ENOTSUPP, "TASK_FD_QUERY of fd 0: ENOTSUPP (bpftool's probe)", "%d", e);
	bl = sizeof(buf);
	e = fd_query(me, tp, 1, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == EINVAL, "TASK_FD_QUERY with flags: EINVAL", "%s", strerror(e));
	bl = sizeof(buf);
	e = fd_query(INT_MAX - 5, 0, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == ENOENT, "TASK_FD_QUERY of no such pid: ENOENT", "%s", strerror(e));
	bl = sizeof(buf);
	e = fd_query(me, 999, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == EBADF, "TASK_FD_QUERY of a closed fd: EBADF", "%s", strerror(e));
	bl = sizeof(buf);
	memset(buf, 'x', sizeof(buf));
	e = fd_query(me, tp, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(!e && pid == id_of(prog) && ty == BPF_FD_TYPE_TRACEPOINT && !strcmp(buf, "sched_switch") && bl == 12,
	      "TASK_FD_QUERY of a tracepoint event: its program, TRACEPOINT, \"sched_switch\"",
	      "%s: prog %u type %u buf %.20s len %u", strerror(e), pid, ty, buf, bl);
	bl = 6;
	memset(buf, 'x', sizeof(buf));
	e = fd_query(me, tp, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == ENOSPC && !strcmp(buf, "sched") && bl == 12 && pid == id_of(prog),
	      "TASK_FD_QUERY with a short buffer: ENOSPC, cut, buf_len the full length", "%s %.10s %u", strerror(e), buf, bl);
	bl = sizeof(buf);
	e = fd_query(me, tp, 0, (char *)8, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == EFAULT, "TASK_FD_QUERY with a bad buffer: EFAULT", "%s", strerror(e));
	bl = 0;
	e = fd_query(me, tp, 0, NULL, &bl, &pid, &ty) ? errno : 0;
	CHECK(!e && bl == 12, "TASK_FD_QUERY without a buffer: buf_len only", "%s %u", strerror(e), bl);
	bl = sizeof(buf);
	e = fd_query(me, link, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == ENOTSUPP, "TASK_FD_QUERY of a perf link: ENOTSUPP", "%d", e);
	ev = cpu_clock_event();
	bl = sizeof(buf);
	e = fd_query(me, ev, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == ENOENT, "TASK_FD_QUERY of a perf event without a program: ENOENT", "%s", strerror(e));
	sp = prog_load(BPF_PROG_TYPE_PERF_EVENT, ret1, 2, "q_sample", 0);
	CHECK(sp >= 0 && ioctl(ev, PERF_EVENT_IOC_SET_BPF, sp) == 0, "a PERF_EVENT program on a cpu-clock event", "%s", strerror(errno));
	bl = sizeof(buf);
	e = fd_query(me, ev, 0, buf, &bl, &pid, &ty) ? errno : 0;
	CHECK(e == EOPNOTSUPP, "TASK_FD_QUERY of a PERF_EVENT program: EOPNOTSUPP (Linux 6.1)", "%s", strerror(e));
	close(ev);
	close(sp);
}

/* ---- bpffs ---- */

#define MNT "/tmp/t_bpf_obj.bpffs"

static int obj_pin(int fd, const char *path)
{
	union bpf_attr a = { .bpf_fd = fd, .pathname = (uintptr_t)path };

	return (int)bpf_a(BPF_OBJ_PIN, &a);
}

static int obj_get(const char *path, uint32_t flags)
{
	union bpf_attr a = { .pathname = (uintptr_t)path, .file_flags = flags };

	return (int)bpf_a(BPF_OBJ_GET, &a);
}

static void test_bpffs(int prog, int link)
{
	struct statfs sf;
	struct stat st;
	DIR *d;
	struct dirent *de;
	int map, fd, e, seen = 0;
	uint32_t mid;

	mkdir(MNT, 0755);
	CHECK(mount("bpf", MNT, "bpf", 0, NULL) == 0, "mount -t bpf", "%s", strerror(errno));
	CHECK(statfs(MNT, &sf) == 0 && sf.f_type == BPF_FS_MAGIC, "statfs: BPF_FS_MAGIC", "%lx", (long)sf.f_type);
	CHECK(stat(MNT, &st) == 0 && (st.st_mode & 07777) == 01777, "the root is mode 01777", "%o", st.st_mode);
	map = map_create("pinned");
	mid = id_of(map);
	map_put(map, 5, 55);
	CHECK(obj_pin(map, MNT "/m") == 0, "BPF_OBJ_PIN a map", "%s", strerror(errno));
	CHECK(stat(MNT "/m", &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == (0600 & ~022),
	      "the pin is a regular file, 0600 less the umask", "%o", st.st_mode);
	e = obj_pin(map, MNT "/m") ? errno : 0;
	CHECK(e == EEXIST, "pin over an existing name: EEXIST", "%s", strerror(e));
	e = obj_pin(map, "/tmp/t_bpf_obj.notbpf") ? errno : 0;
	CHECK(e == EPERM, "pin outside a bpf filesystem: EPERM", "%s", strerror(e));
	e = obj_pin(map, (const char *)8) ? errno : 0;
	CHECK(e == EFAULT, "pin at a bad path pointer: EFAULT", "%s", strerror(e));
	e = obj_pin(1000, MNT "/bad") ? errno : 0;
	CHECK(e == EINVAL, "pin of a closed fd: EINVAL", "%s", strerror(e));
	e = obj_pin(map, MNT "/nodir/m") ? errno : 0;
	CHECK(e == ENOENT, "pin in a missing directory: ENOENT", "%s", strerror(e));
	{
		union bpf_attr a = { .bpf_fd = map, .pathname = (uintptr_t)MNT "/f", .file_flags = BPF_F_RDONLY };

		e = bpf_a(BPF_OBJ_PIN, &a) ? errno : 0;
		CHECK(e == EINVAL, "pin with file_flags: EINVAL", "%s", strerror(e));
	}
	CHECK(obj_pin(prog, MNT "/p") == 0 && obj_pin(link, MNT "/l") == 0, "pin a program and a link", "%s", strerror(errno));
	CHECK(mkdir(MNT "/sub", 0700) == 0 && obj_pin(prog, MNT "/sub/p") == 0, "mkdir in bpffs, pin there", "%s", strerror(errno));
	CHECK(statfs(MNT "/sub", &sf) == 0 && sf.f_type == BPF_FS_MAGIC, "the subdirectory is bpffs too", "%lx", (long)sf.f_type);
	close(map);
	fd = obj_get(MNT "/m", 0);
	CHECK(fd >= 0 && id_of(fd) == mid && map_get(fd, 5) == 55, "BPF_OBJ_GET: the pinned map outlived its fd", "fd %d: %s", fd, strerror(errno));
	close(fd);
	fd = obj_get(MNT "/m", BPF_F_RDONLY);
	e = fd >= 0 && map_put(fd, 6, 6) ? errno : 0;
	CHECK(fd >= 0 && map_get(fd, 5) == 55 && e == EPERM, "BPF_OBJ_GET of a map with BPF_F_RDONLY: reads, update EPERM", "%s", strerror(errno));
	close(fd);
	fd = obj_get(MNT "/p", 0);
	CHECK(fd >= 0 && id_of(fd) == id_of(prog), "BPF_OBJ_GET of the program", "%s", strerror(errno));
	close(fd);
	fd = obj_get(MNT "/p", BPF_F_RDONLY);
	CHECK(fd >= 0, "BPF_OBJ_GET of a program with BPF_F_RDONLY: a fd (the flags are ignored)", "%s", strerror(errno));
	close(fd);
	e = obj_get(MNT "/l", BPF_F_RDONLY) < 0 ? errno : 0;
	CHECK(e == EINVAL, "BPF_OBJ_GET of a link with BPF_F_RDONLY: EINVAL", "%s", strerror(e));
	fd = obj_get(MNT "/l", 0);
	CHECK(fd >= 0 && id_of(fd) == id_of(link), "BPF_OBJ_GET of the link", "%s", strerror(errno));
	close(fd);
	e = open(MNT "/m", O_RDONLY) < 0 ? errno : 0;
	CHECK(e == EIO, "open(2) of a pinned map: EIO", "%s", strerror(e));
	e = obj_get(MNT "/nope", 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "BPF_OBJ_GET of a missing name: ENOENT", "%s", strerror(e));
	e = obj_get(MNT "/sub", 0) < 0 ? errno : 0;
	CHECK(e == EACCES, "BPF_OBJ_GET of a directory: EACCES", "%s", strerror(e));
	e = obj_get("/proc/self/status", 0) < 0 ? errno : 0;
	CHECK(e == EACCES, "BPF_OBJ_GET of a file that is no pin: EACCES", "%s", strerror(e));
	d = opendir(MNT);
	while (d && (de = readdir(d)))
		seen += !strcmp(de->d_name, "m") + !strcmp(de->d_name, "p") + !strcmp(de->d_name, "l") +
			!strcmp(de->d_name, "sub");
	if (d)
		closedir(d);
	CHECK(seen == 4, "ls shows the pins and the directory", "%d of 4", seen);
	CHECK(unlink(MNT "/m") == 0, "unlink the map's pin", "%s", strerror(errno));
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "the unpinned map with no fd is gone", "%s", strerror(e));
	unlink(MNT "/p");
	unlink(MNT "/l");
	rmdir(MNT "/sub"); /* not empty: sub/p stays */
	/* umount ends the filesystem: a map pinned only there goes with it */
	map = map_create("umounted");
	mid = id_of(map);
	CHECK(obj_pin(map, MNT "/sub/m2") == 0, "pin a second map", "%s", strerror(errno));
	close(map);
	CHECK(umount(MNT) == 0, "umount the bpffs", "%s", strerror(errno));
	e = fd_by_id(BPF_MAP_GET_FD_BY_ID, mid, 0) < 0 ? errno : 0;
	CHECK(e == ENOENT, "after umount the map pinned only there is gone", "%s", strerror(e));
	CHECK(stat(MNT "/sub", &st) < 0 && errno == ENOENT, "the mount point is an empty directory again", "%s", strerror(errno));
	rmdir(MNT);
}

/* ---- the e2e's holder ---- */

static void on_sig(int s)
{
	(void)s;
}

static int hold(const char *dir)
{
	long id = tp_id("sched/sched_switch");
	int map = map_create("pk_counts"), prog, tp, ev, sp, link;
	struct bpf_insn ret1[] = { MOV64_IMM(BPF_REG_0, 1), EXIT() };
	char path[256];

	map_put(map, 1, 10);
	map_put(map, 2, 20);
	map_put(map, 3, 30);
	prog = load_count(BPF_PROG_TYPE_TRACEPOINT, map, "pk_tp");
	tp = id > 0 ? tp_event(id) : -1;
	if (map < 0 || prog < 0 || tp < 0 || ioctl(tp, PERF_EVENT_IOC_SET_BPF, prog)) {
		printf("hold: map %d prog %d tp %d (id %ld): %s\n", map, prog, tp, id, strerror(errno));
		return 1;
	}
	ev = cpu_clock_event();
	sp = prog_load(BPF_PROG_TYPE_PERF_EVENT, ret1, 2, "pk_sample", 0);
	link = link_create(sp, ev);
	if (link < 0) {
		printf("hold: link: %s\n", strerror(errno));
		return 1;
	}
	if (dir) {
		snprintf(path, sizeof(path), "%s/pk_counts", dir);
		if (obj_pin(map, path))
			printf("hold: pin %s: %s\n", path, strerror(errno));
		snprintf(path, sizeof(path), "%s/pk_tp", dir);
		if (obj_pin(prog, path))
			printf("hold: pin %s: %s\n", path, strerror(errno));
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("READY map %u prog %u link\n", id_of(map), id_of(prog));
	fflush(stdout);
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	long id;
	int map, prog, tp, ev, sp, link;
	struct bpf_insn ret1[] = { MOV64_IMM(BPF_REG_0, 1), EXIT() };

	if (argc >= 2 && !strcmp(argv[1], "hold"))
		return hold(argc >= 3 ? argv[2] : NULL);
	tap_init("t_bpf_obj", 60);
	id = tp_id("sched/sched_switch");
	map = map_create("pk_counts");
	map_put(map, 1, 10);
	map_put(map, 2, 20);
	prog = load_count(BPF_PROG_TYPE_TRACEPOINT, map, "pk_tp");
	tp = id > 0 ? tp_event(id) : -1;
	ev = cpu_clock_event();
	sp = prog_load(BPF_PROG_TYPE_PERF_EVENT, ret1, 2, "pk_sample", 0);
	link = link_create(sp, ev);
	if (map < 0 || prog < 0 || tp < 0 || ioctl(tp, PERF_EVENT_IOC_SET_BPF, prog) || link < 0) {
		tap_fail("setup", "map %d prog %d tp %d (id %ld) link %d: %s", map, prog, tp, id, link, strerror(errno));
		return tap_done();
	}
	test_ids(prog, map, link, sp);
	test_info(prog, map);
	test_stats();
	test_fdinfo(prog, map, link, sp, ev);
	test_query(tp, prog, link);
	test_bpffs(prog, link);
	return tap_done();
}
