/* t_bpf_basic: bpf(2) (syscall 280) basics as root: map create/update/lookup/
 * delete/get_next_key errnos, freeze, trivial program loads, verifier
 * rejections with Linux's log wording, attr size rules, OBJ_GET_INFO_BY_FD, the program tag
 * (SHA-1 of the instructions with map lddw imms zeroed, computed here with bpf/sha1.c).
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72);
 * the tag checks: refvm.sh --smp 2, 2026-11-29.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "../../bpf/sha1.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

static union {
	union bpf_attr a;
	unsigned char raw[4096];
} ub;

static long sys_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return syscall(SYS_bpf, cmd, attr, size);
}

static union bpf_attr *zattr(void)
{
	memset(&ub, 0, sizeof(ub));
	return &ub.a;
}

static int map_create(int type, unsigned ks, unsigned vs, unsigned max, const char *name)
{
	union bpf_attr *a = zattr();
	a->map_type = type;
	a->key_size = ks;
	a->value_size = vs;
	a->max_entries = max;
	if (name)
		strncpy(a->map_name, name, sizeof(a->map_name) - 1);
	return sys_bpf(BPF_MAP_CREATE, a, sizeof(*a));
}

static long map_op(int cmd, int fd, const void *key, void *val_or_next, uint64_t flags)
{
	union bpf_attr *a = zattr();
	a->map_fd = fd;
	a->key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a->next_key = (uintptr_t)val_or_next;
	else
		a->value = (uintptr_t)val_or_next;
	a->flags = flags;
	return sys_bpf(cmd, a, sizeof(*a));
}

static char logbuf[65536];

static int prog_load(int type, const struct bpf_insn *insns, int n, const char *license, int log_level, char *log,
		     unsigned log_size, const char *name)
{
	union bpf_attr *a = zattr();
	a->prog_type = type;
	a->insns = (uintptr_t)insns;
	a->insn_cnt = n;
	a->license = (uintptr_t)license;
	a->log_level = log_level;
	a->log_buf = (uintptr_t)log;
	a->log_size = log_size;
	if (log)
		log[0] = 0;
	if (name)
		strncpy(a->prog_name, name, sizeof(a->prog_name) - 1);
	return sys_bpf(BPF_PROG_LOAD, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)

static void check_array(void)
{
	int fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, "arr");
	if (!CHECK(fd >= 0, "MAP_CREATE ARRAY 4x(4,8)", "errno %d (%s)", errno, strerrorname_np(errno)))
		return;
	uint32_t k = 1;
	uint64_t v = 0x1122334455667788ULL, out = 0;
	CHECK(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0) == 0 && out == 0, "ARRAY lookup of unset slot -> zeros",
	      "errno %d out %llx", errno, (unsigned long long)out);
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_ANY) == 0, "ARRAY update ANY", "errno %d", errno);
	CHECK(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0) == 0 && out == v, "ARRAY lookup returns value", "%llx",
	      (unsigned long long)out);
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_EXIST) == 0, "ARRAY update EXIST ok", "errno %d", errno);
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_NOEXIST), EEXIST, "ARRAY update NOEXIST -> EEXIST");
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, 99), EINVAL, "ARRAY update bad flags -> EINVAL");
	k = 4;
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_ANY), E2BIG, "ARRAY update index >= max -> E2BIG");
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), ENOENT, "ARRAY lookup index >= max -> ENOENT");
	k = 1;
	EXPECT_ERRNO(map_op(BPF_MAP_DELETE_ELEM, fd, &k, NULL, 0), EINVAL, "ARRAY delete -> EINVAL");
	uint32_t next = 99;
	CHECK(map_op(BPF_MAP_GET_NEXT_KEY, fd, NULL, &next, 0) == 0 && next == 0, "ARRAY next_key(NULL) -> 0",
	      "next %u errno %d", next, errno);
	CHECK(map_op(BPF_MAP_GET_NEXT_KEY, fd, &k, &next, 0) == 0 && next == 2, "ARRAY next_key(1) -> 2", "next %u", next);
	k = 3;
	EXPECT_ERRNO(map_op(BPF_MAP_GET_NEXT_KEY, fd, &k, &next, 0), ENOENT, "ARRAY next_key(last) -> ENOENT");
	k = 100;
	CHECK(map_op(BPF_MAP_GET_NEXT_KEY, fd, &k, &next, 0) == 0 && next == 0, "ARRAY next_key(out of range) -> 0",
	      "next %u errno %d", next, errno);
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, (void *)8, 0), ENOENT,
		     "ARRAY lookup out of range with bad value ptr -> ENOENT (checked before the copy)");
	k = 0;
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, (void *)8, 0), EFAULT, "ARRAY lookup value ptr bad -> EFAULT");

	/* info */
	struct bpf_map_info info;
	memset(&info, 0, sizeof(info));
	union bpf_attr *a = zattr();
	a->info.bpf_fd = fd;
	a->info.info_len = sizeof(info);
	a->info.info = (uintptr_t)&info;
	long r = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a));
	CHECK(r == 0 && info.type == BPF_MAP_TYPE_ARRAY && info.key_size == 4 && info.value_size == 8 &&
		      info.max_entries == 4 && strcmp(info.name, "arr") == 0 && info.id != 0,
	      "OBJ_GET_INFO_BY_FD map: type/sizes/name/id", "r %ld errno %d type %u name '%s'", r, errno, info.type,
	      info.name);
	CHECK(ub.a.info.info_len == sizeof(info), "OBJ_GET_INFO_BY_FD writes back info_len", "%u", ub.a.info.info_len);

	/* freeze */
	a = zattr();
	a->map_fd = fd;
	CHECK(sys_bpf(BPF_MAP_FREEZE, a, sizeof(*a)) == 0, "MAP_FREEZE", "errno %d", errno);
	k = 0;
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_ANY), EPERM, "update after FREEZE -> EPERM");
	CHECK(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0) == 0, "lookup after FREEZE ok", "errno %d", errno);
	a = zattr();
	a->map_fd = fd;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_FREEZE, a, sizeof(*a)), EBUSY, "FREEZE twice -> EBUSY");
	close(fd);
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), EBADF, "lookup on closed map fd -> EBADF");
}

static void check_hash(void)
{
	int fd = map_create(BPF_MAP_TYPE_HASH, 4, 8, 4, "h");
	if (!CHECK(fd >= 0, "MAP_CREATE HASH 4x(4,8)", "errno %d (%s)", errno, strerrorname_np(errno)))
		return;
	uint32_t k = 7;
	uint64_t v = 42, out = 0;
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), ENOENT, "HASH lookup missing -> ENOENT");
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_EXIST), ENOENT, "HASH update EXIST on missing -> ENOENT");
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_NOEXIST) == 0, "HASH update NOEXIST new key", "errno %d", errno);
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_NOEXIST), EEXIST, "HASH update NOEXIST existing -> EEXIST");
	v = 43;
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_EXIST) == 0, "HASH update EXIST existing", "errno %d", errno);
	CHECK(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0) == 0 && out == 43, "HASH lookup value", "%llu",
	      (unsigned long long)out);
	for (uint32_t i = 100; i < 103; i++)
		map_op(BPF_MAP_UPDATE_ELEM, fd, &i, &v, BPF_ANY);
	uint32_t extra = 200;
	EXPECT_ERRNO(map_op(BPF_MAP_UPDATE_ELEM, fd, &extra, &v, BPF_ANY), E2BIG, "HASH insert into full map -> E2BIG");
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_ANY) == 0, "HASH update existing key in full map ok", "errno %d",
	      errno);
	/* iterate */
	uint32_t cur, next;
	int cnt = 0;
	long r = map_op(BPF_MAP_GET_NEXT_KEY, fd, NULL, &next, 0);
	uint32_t seen = 0;
	while (r == 0 && cnt < 10) {
		cnt++;
		seen += next;
		cur = next;
		r = map_op(BPF_MAP_GET_NEXT_KEY, fd, &cur, &next, 0);
	}
	int e = errno;
	CHECK(cnt == 4 && seen == 7 + 100 + 101 + 102 && r == -1 && e == ENOENT, "HASH GET_NEXT_KEY visits all 4 then ENOENT",
	      "cnt %d sum %u r %ld errno %d", cnt, seen, r, e);
	uint32_t missing = 5555;
	CHECK(map_op(BPF_MAP_GET_NEXT_KEY, fd, &missing, &next, 0) == 0, "HASH next_key(missing key) -> first key",
	      "errno %d", errno);
	CHECK(map_op(BPF_MAP_DELETE_ELEM, fd, &k, NULL, 0) == 0, "HASH delete", "errno %d", errno);
	EXPECT_ERRNO(map_op(BPF_MAP_DELETE_ELEM, fd, &k, NULL, 0), ENOENT, "HASH delete missing -> ENOENT");
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), ENOENT, "HASH lookup deleted -> ENOENT");
	CHECK(map_op(BPF_MAP_UPDATE_ELEM, fd, &extra, &v, BPF_ANY) == 0, "HASH insert after delete frees a slot", "errno %d",
	      errno);
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, fd, (void *)8, &out, 0), EFAULT, "HASH lookup key ptr bad -> EFAULT");
	close(fd);
}

static void check_map_create_errors(void)
{
	EXPECT_ERRNO(map_create(9999, 4, 8, 4, NULL), EINVAL, "MAP_CREATE unknown type -> EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_ARRAY, 8, 8, 4, NULL), EINVAL, "ARRAY key_size 8 -> EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_ARRAY, 4, 0, 4, NULL), EINVAL, "ARRAY value_size 0 -> EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 0, NULL), EINVAL, "ARRAY max_entries 0 -> EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_HASH, 0, 8, 4, NULL), EINVAL, "HASH key_size 0 -> EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_HASH, 4, 8, 0, NULL), EINVAL, "HASH max_entries 0 -> EINVAL");
	union bpf_attr *a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 8;
	a->max_entries = 1;
	memcpy(a->map_name, "bad-name!", 9);
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, a, sizeof(*a)), EINVAL, "map_name with '-' or '!' -> EINVAL");
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 8;
	a->max_entries = 1;
	a->map_flags = 1u << 30;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, a, sizeof(*a)), EINVAL, "MAP_CREATE unknown map_flags -> EINVAL");
	int nul = open("/dev/null", O_RDONLY);
	uint32_t k = 0;
	uint64_t v;
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, nul, &k, &v, 0), EINVAL, "map op on non-map fd -> EINVAL");
	EXPECT_ERRNO(map_op(BPF_MAP_LOOKUP_ELEM, 555, &k, &v, 0), EBADF, "map op on bad fd -> EBADF");
	close(nul);
	EXPECT_ERRNO(sys_bpf(9999, zattr(), sizeof(union bpf_attr)), EINVAL, "unknown bpf cmd -> EINVAL");
}

static void check_attr_size(void)
{
	union bpf_attr *a;
	unsigned big = sizeof(union bpf_attr) + 64;
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	long fd = sys_bpf(BPF_MAP_CREATE, a, big);
	CHECK(fd >= 0, "attr size > sizeof with zero tail ok", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	ub.raw[sizeof(union bpf_attr) + 10] = 1;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, a, big), E2BIG, "attr size > sizeof with nonzero tail -> E2BIG");
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	fd = sys_bpf(BPF_MAP_CREATE, a, 20); /* just the 5 leading u32 fields */
	CHECK(fd >= 0, "short attr size (20) ok, rest treated as zero", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	a->map_flags = 1u << 30; /* beyond size 16: not copied */
	fd = sys_bpf(BPF_MAP_CREATE, a, 16);
	CHECK(fd >= 0, "fields beyond given size ignored", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, a, 4096 + 8), E2BIG, "attr size > PAGE_SIZE -> E2BIG");
	/* the command's unused trailing fields must be zero */
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	ub.raw[sizeof(union bpf_attr) - 1] = 1;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, a, sizeof(union bpf_attr)), EINVAL,
		     "nonzero byte after MAP_CREATE's last field -> EINVAL");
}

/* A PERF_EVENT program the verifier must reject with EACCES and want in its log. */
static void expect_perf_reject(const struct bpf_insn *insns, int n, const char *what, const char *want)
{
	char why[160];

	errno = 0;
	int fd = prog_load(BPF_PROG_TYPE_PERF_EVENT, insns, n, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	int e = errno;

	snprintf(why, sizeof(why), "%s -> EACCES", what);
	tap_errno(fd, e, EACCES, why);
	snprintf(why, sizeof(why), "%s: log \"%s\"", what, want);
	CHECK(strstr(logbuf, want) != NULL, why, "log ends: %s", logbuf + (strlen(logbuf) > 200 ? strlen(logbuf) - 200 : 0));
}

static void check_prog(void)
{
	struct bpf_insn ok[] = {MOV64_IMM(0, 0), EXIT()};
	int fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "GPL", 0, NULL, 0, "trivial");
	CHECK(fd >= 0, "PROG_LOAD SOCKET_FILTER mov r0,0; exit", "errno %d (%s)", errno, strerrorname_np(errno));
	if (fd >= 0) {
		struct bpf_prog_info info;
		memset(&info, 0, sizeof(info));
		union bpf_attr *a = zattr();
		a->info.bpf_fd = fd;
		a->info.info_len = sizeof(info);
		a->info.info = (uintptr_t)&info;
		long r = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a));
		CHECK(r == 0 && info.type == BPF_PROG_TYPE_SOCKET_FILTER && strcmp(info.name, "trivial") == 0 && info.id != 0,
		      "OBJ_GET_INFO_BY_FD prog: type/name/id", "r %ld errno %d type %u name '%s'", r, errno, info.type,
		      info.name);
		/* smaller info_len: truncated copy, info_len written back as the smaller size */
		memset(&info, 0, sizeof(info));
		a = zattr();
		a->info.bpf_fd = fd;
		a->info.info_len = 8;
		a->info.info = (uintptr_t)&info;
		r = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a));
		CHECK(r == 0 && ub.a.info.info_len == 8 && info.type == BPF_PROG_TYPE_SOCKET_FILTER && info.name[0] == 0,
		      "OBJ_GET_INFO_BY_FD info_len 8 copies only 8 bytes", "r %ld len %u", r, ub.a.info.info_len);
		close(fd);
	}
	fd = prog_load(BPF_PROG_TYPE_PERF_EVENT, ok, 2, "GPL", 0, NULL, 0, NULL);
	CHECK(fd >= 0, "PROG_LOAD PERF_EVENT mov r0,0; exit", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "Proprietary", 0, NULL, 0, NULL);
	CHECK(fd >= 0, "PROG_LOAD non-GPL license without GPL helpers ok", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	CHECK(fd >= 0, "PROG_LOAD with log_level 1 ok", "errno %d", errno);
	if (fd >= 0)
		close(fd);

	struct bpf_insn r2[] = {MOV64_REG(0, 2), EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, r2, 2, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	int e = errno;
	tap_errno(fd, e, EACCES, "read of uninitialized R2 -> EACCES");
	CHECK(strstr(logbuf, "R2 !read_ok") != NULL, "verifier log contains \"R2 !read_ok\"", "log: %.200s", logbuf);
	struct bpf_insn nor0[] = {EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, nor0, 1, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EACCES, "exit without setting R0 -> EACCES");
	CHECK(strstr(logbuf, "R0 !read_ok") != NULL, "verifier log contains \"R0 !read_ok\"", "log: %.200s", logbuf);
	/* same failing program without a log: EACCES too */
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, r2, 2, "GPL", 0, NULL, 0, NULL), EACCES,
		     "uninitialized read without log -> EACCES");

	/* a 32-bit move of a scalar over a pointer leaves a scalar: loads and atomics through it
	 * are rejected (the fuzzer found the pointer kept) */
	struct bpf_insn w1ctx[] = {MOV64_IMM(2, 3), INSN(BPF_ALU | BPF_MOV | BPF_X, 1, 2, 0, 0),
				   INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, 0, 0), EXIT()};
	struct bpf_insn w1fp[] = {MOV64_REG(1, 10), INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -8),
				  INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), INSN(BPF_ALU | BPF_MOV | BPF_K, 1, 0, 0, 256),
				  MOV64_IMM(3, 1), INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 1, 3, 0, BPF_ADD | BPF_FETCH),
				  MOV64_IMM(0, 0), EXIT()};
	expect_perf_reject(w1ctx, 4, "w1 = w2 over the ctx pointer, then a load through r1",
			   "R1 invalid mem access 'scalar'");
	expect_perf_reject(w1fp, 8, "w1 = 256 over a stack pointer, then an atomic through r1",
			   "R1 invalid mem access 'scalar'");

	struct bpf_insn noexit[] = {MOV64_IMM(0, 0)};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, noexit, 1, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EINVAL, "program not ending in exit -> EINVAL");
	CHECK(strstr(logbuf, "last insn is not an exit or jmp") != NULL, "log: \"last insn is not an exit or jmp\"",
	      "log: %.200s", logbuf);
	struct bpf_insn jmp_oob[] = {JA(5), MOV64_IMM(0, 0), EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, jmp_oob, 3, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EINVAL, "jump out of range -> EINVAL");
	CHECK(strstr(logbuf, "jump out of range from insn 0 to 6") != NULL, "log: \"jump out of range from insn 0 to 6\"",
	      "log: %.200s", logbuf);
	struct bpf_insn badop[] = {INSN(0xff, 0, 0, 0, 0), MOV64_IMM(0, 0), EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, badop, 3, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EINVAL, "unknown opcode -> EINVAL");
	CHECK(strstr(logbuf, "unknown opcode ff") != NULL, "log: \"unknown opcode ff\"", "log: %.200s", logbuf);
	struct bpf_insn badreg[] = {MOV64_IMM(11, 0), MOV64_IMM(0, 0), EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, badreg, 3, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EINVAL, "register 11 -> EINVAL");
	CHECK(strstr(logbuf, "R11 is invalid") != NULL, "log: \"R11 is invalid\"", "log: %.200s", logbuf);
	struct bpf_insn wr10[] = {MOV64_IMM(10, 0), MOV64_IMM(0, 0), EXIT()};
	errno = 0;
	fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, wr10, 3, "GPL", 1, logbuf, sizeof(logbuf), NULL);
	e = errno;
	tap_errno(fd, e, EACCES, "write to frame pointer R10 -> EACCES");
	CHECK(strstr(logbuf, "frame pointer is read only") != NULL, "log: \"frame pointer is read only\"", "log: %.200s",
	      logbuf);

	/* load-time attr errors */
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 0, "GPL", 0, NULL, 0, NULL), E2BIG, "insn_cnt 0 -> E2BIG (sic)");
	EXPECT_ERRNO(prog_load(9999, ok, 2, "GPL", 0, NULL, 0, NULL), EINVAL, "unknown prog type -> EINVAL");
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "GPL", 1, NULL, 1024, NULL), EINVAL,
		     "log_level without log_buf -> EINVAL");
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "GPL", 1, logbuf, 16, NULL), EINVAL,
		     "log_size < 128 -> EINVAL");
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, "GPL", 0, logbuf, 1024, NULL), EINVAL,
		     "log_buf without log_level -> EINVAL");
	/* log_level 2 prints every insn state: a 128-byte log is too small -> ENOSPC */
	struct bpf_insn longer[] = {MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 3), MOV64_IMM(4, 4), MOV64_IMM(0, 0), EXIT()};
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, longer, 6, "GPL", 2, logbuf, 128, NULL), ENOSPC,
		     "verbose log overflows 128-byte buffer -> ENOSPC");
	EXPECT_ERRNO(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, (void *)8, 2, "GPL", 0, NULL, 0, NULL), EFAULT,
		     "insns pointer bad -> EFAULT");
}

/* Linux's tag: SHA-1 of the insns, both imms of BPF_PSEUDO_MAP_FD/VALUE lddws zeroed. */
static void expected_tag(const struct bpf_insn *insns, int n, uint8_t tag[8])
{
	uint8_t digest[BPF_SHA1_DIGEST];
	struct bpf_sha1 s;

	bpf_sha1_init(&s);
	for (int i = 0; i < n; i++) {
		struct bpf_insn in = insns[i];

		if (in.code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (in.src_reg == BPF_PSEUDO_MAP_FD || in.src_reg == BPF_PSEUDO_MAP_VALUE)) {
			struct bpf_insn hi = insns[++i];

			in.imm = hi.imm = 0;
			bpf_sha1_update(&s, &in, sizeof(in));
			in = hi;
		}
		bpf_sha1_update(&s, &in, sizeof(in));
	}
	bpf_sha1_final(&s, digest);
	memcpy(tag, digest, 8);
}

static int prog_tag_of(int fd, uint8_t tag[8])
{
	struct bpf_prog_info info;
	union bpf_attr *a = zattr();

	memset(&info, 0, sizeof(info));
	a->info.bpf_fd = fd;
	a->info.info_len = sizeof(info);
	a->info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a)))
		return -1;
	memcpy(tag, info.tag, 8);
	return 0;
}

/* Load insns and compare bpf_prog_info.tag with the tag computed here. */
static void check_tag_of(const struct bpf_insn *insns, int n, const char *what)
{
	uint8_t want[8], got[8];
	int fd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, insns, n, "GPL", 0, NULL, 0, NULL);

	if (fd < 0) {
		tap_fail(what, "load: errno %d", errno);
		return;
	}
	expected_tag(insns, n, want);
	CHECK(prog_tag_of(fd, got) == 0 && !memcmp(got, want, 8), what,
	      "got %02x%02x%02x%02x%02x%02x%02x%02x want %02x%02x%02x%02x%02x%02x%02x%02x", got[0],
	      got[1], got[2], got[3], got[4], got[5], got[6], got[7], want[0], want[1], want[2],
	      want[3], want[4], want[5], want[6], want[7]);
	close(fd);
}

static void check_tag(void)
{
	int afd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, "tagmap");
	int bfd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, "tagmap2");
	struct bpf_insn plain[] = {MOV64_IMM(0, 7), MOV64_IMM(1, -1), EXIT()};
	/* 80 bytes: more than one SHA-1 block */
	struct bpf_insn lookup[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
		MOV64_REG(2, 10),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, afd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, afd),
		INSN(0, 0, 0, 0, 4),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	uint8_t t1[8], t2[8];
	int fd1, fd2;

	if (!CHECK(afd >= 0 && bfd >= 0, "MAP_CREATE for the tag checks", "errno %d", errno))
		return;
	check_tag_of(plain, 3, "prog tag = SHA-1 of the insns (first 8 bytes)");
	check_tag_of(lookup, 10, "prog tag with map lddws: their imms count as 0");
	/* the same code with another map fd and value offset has the same tag */
	fd1 = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, lookup, 10, "GPL", 0, NULL, 0, NULL);
	lookup[3].imm = lookup[6].imm = bfd;
	lookup[7].imm = 0;
	fd2 = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, lookup, 10, "GPL", 0, NULL, 0, NULL);
	CHECK(fd1 >= 0 && fd2 >= 0 && !prog_tag_of(fd1, t1) && !prog_tag_of(fd2, t2) &&
	      !memcmp(t1, t2, 8), "prog tag does not depend on map fds or value offsets",
	      "fds %d %d errno %d", fd1, fd2, errno);
	close(fd1);
	close(fd2);
	close(afd);
	close(bfd);
}

int main(void)
{
	tap_init("t_bpf_basic", 20);
	if (geteuid() != 0) {
		tap_skip("all", "needs root (euid %d)", geteuid());
		return tap_done();
	}
	check_array();
	check_hash();
	check_map_create_errors();
	check_attr_size();
	check_prog();
	check_tag();
	return tap_done();
}
