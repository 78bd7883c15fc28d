/* t_bpf_bloom: BPF_MAP_TYPE_BLOOM_FILTER as Linux 6.1 has it.  Creation (key_size 0, map_extra
 * as the hash count, EINVAL for the rest; map_extra in bpf_map_info and fdinfo), the syscall
 * side (UPDATE adds, LOOKUP tests the value given, flags EINVAL, DELETE and GET_NEXT_KEY
 * EOPNOTSUPP, LOOKUP_AND_DELETE ENOTSUPP), no false negatives, and the exact false positives of
 * BPF_F_ZERO_SEED filters (jhash2 for 4-byte values, jhash for 5 and 13 bytes), recorded on
 * Linux 6.1 under refvm.sh.  Programs: bpf_map_push_elem / bpf_map_peek_elem from a perf_event
 * program, push flags EINVAL, and the verifier refusing pop and lookup on the map.
 * Run with an argument, it prints the false positives instead of checking them.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"

#include <fcntl.h>

#define ST_DW(o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, o, i)
#define ST_W(o, i) INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, o, i)
#define ENOTSUPP_ 524

static char logbuf[65536];

static int bloom_create(uint32_t vsz, uint32_t max, uint32_t flags, uint64_t extra)
{
	return map_create_attr(BPF_MAP_TYPE_BLOOM_FILTER, 0, vsz, max, flags, extra, 0);
}

static long add(int fd, void *v, uint64_t flags)
{
	return map_elem(BPF_MAP_UPDATE_ELEM, fd, NULL, v, flags);
}

static long test(int fd, void *v)
{
	return map_elem(BPF_MAP_LOOKUP_ELEM, fd, NULL, v, 0);
}

static void creation(void)
{
	struct bpf_map_info info;
	union bpf_attr a;
	char buf[1024], path[64];
	int fd, f;
	ssize_t n;

	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_BLOOM_FILTER, 4, 8, 10, 0), EINVAL, "key_size 4: EINVAL");
	EXPECT_ERRNO(bloom_create(0, 10, 0, 0), EINVAL, "value_size 0: EINVAL");
	EXPECT_ERRNO(bloom_create(8, 0, 0, 0), EINVAL, "max_entries 0: EINVAL");
	EXPECT_ERRNO(bloom_create(8, 10, 0, 16), EINVAL, "map_extra 16 (beyond the 4 hash-count bits): EINVAL");
	EXPECT_ERRNO(bloom_create(8, 10, BPF_F_MMAPABLE, 0), EINVAL, "BPF_F_MMAPABLE: EINVAL");
	EXPECT_ERRNO(bloom_create(8, 10, BPF_F_NO_PREALLOC, 0), EINVAL, "BPF_F_NO_PREALLOC: EINVAL");
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	a.map_extra = 1;
	EXPECT_ERRNO(sys_bpf(BPF_MAP_CREATE, &a), EINVAL, "map_extra on an ARRAY: EINVAL");
	fd = bloom_create(8, 10, BPF_F_ZERO_SEED | BPF_F_RDONLY_PROG, 3);
	if (!CHECK(fd >= 0, "value_size 8, map_extra 3, ZERO_SEED | RDONLY_PROG", "%s", strerror(errno)))
		return;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	CHECK(sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 && info.type == BPF_MAP_TYPE_BLOOM_FILTER &&
		      info.map_extra == 3 && info.key_size == 0 && info.value_size == 8,
	      "bpf_map_info: type 30, key_size 0, map_extra 3", "type %u extra %llu", info.type,
	      (unsigned long long)info.map_extra);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	if (f >= 0)
		close(f);
	CHECK(strstr(buf, "map_type:\t30\n") && strstr(buf, "map_extra:\t0x3\n"), "fdinfo: map_type 30, map_extra 0x3",
	      "%s", buf);
	close(fd);
}

static void syscalls(void)
{
	uint64_t v = 42, w;
	uint32_t key = 0;
	int fd = bloom_create(8, 100, 0, 0), ok = 1;

	if (!CHECK(fd >= 0, "value_size 8, 100 entries, default hashes", "%s", strerror(errno)))
		return;
	EXPECT_ERRNO(test(fd, &v), ENOENT, "LOOKUP of a value never added: ENOENT");
	EXPECT_ERRNO(add(fd, &v, BPF_EXIST), EINVAL, "UPDATE with BPF_EXIST: EINVAL");
	EXPECT_ERRNO(add(fd, &v, BPF_NOEXIST), EINVAL, "UPDATE with BPF_NOEXIST: EINVAL");
	EXPECT_ERRNO(map_elem(BPF_MAP_UPDATE_ELEM, fd, &key, &v, 0), EINVAL, "UPDATE with a key: EINVAL");
	EXPECT_OK(add(fd, &v, BPF_ANY), "UPDATE adds 42");
	w = v;
	EXPECT_OK(test(fd, &w), "LOOKUP of 42: maybe present (0)");
	CHECK(w == 42, "LOOKUP writes nothing back", "value %llu", (unsigned long long)w);
	EXPECT_ERRNO(map_elem(BPF_MAP_DELETE_ELEM, fd, NULL, NULL, 0), EOPNOTSUPP, "DELETE: EOPNOTSUPP");
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.next_key = (uintptr_t)&key;
		EXPECT_ERRNO(sys_bpf(BPF_MAP_GET_NEXT_KEY, &a), EOPNOTSUPP, "GET_NEXT_KEY: EOPNOTSUPP");
	}
	EXPECT_ERRNO(map_elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, NULL, &w, 0), ENOTSUPP_,
		     "LOOKUP_AND_DELETE: ENOTSUPP (524)");
	for (uint64_t i = 1000; i < 1100; i++)
		add(fd, &i, 0);
	for (uint64_t i = 1000; i < 1100; i++)
		ok &= test(fd, &i) == 0;
	CHECK(ok, "no false negatives: 100 values added, 100 found", "a value added was not found");
	close(fd);
}

/*
 * A ZERO_SEED filter of 64 bits with one hash holding value 0 (as vsz bytes): which of the
 * values 1..400 (little-endian, zero-padded to vsz) it reports present.  Written as a list.
 */
static void false_positives(uint32_t vsz, char *out, size_t size)
{
	uint8_t v[16];
	size_t len = 0;
	int fd = bloom_create(vsz, 1, BPF_F_ZERO_SEED, 1);

	out[0] = 0;
	if (fd < 0) {
		snprintf(out, size, "create: %s", strerror(errno));
		return;
	}
	memset(v, 0, sizeof(v));
	add(fd, v, 0);
	for (uint32_t i = 1; i <= 400; i++) {
		memset(v, 0, sizeof(v));
		memcpy(v, &i, 4);
		if (test(fd, v) == 0)
			len += (size_t)snprintf(out + len, size - len, "%u,", i);
	}
	close(fd);
}

/* Linux 6.1 (Debian arm64, refvm.sh, 2026-12-01), `t_bpf_bloom print` */
static const struct {
	uint32_t vsz;
	const char *want;
} fps[] = {
	{ 4, "26,59,127,180,224,312,343," },
	{ 5, "54,142," },
	{ 13, "17,125,129,191,253," },
};

static void programs(void)
{
	int bloom = bloom_create(8, 100, 0, 0), res = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0), fd, err;
	uint64_t v = 42, r[4] = { 0 };

	if (!CHECK(bloom >= 0 && res >= 0, "a bloom filter and a result array", "%s", strerror(errno)))
		return;
	{
		/* res[k] = r0 of: push 42 (k 0), peek 42 (k 1), peek 43 (k 2), push 44 flags 1 (k 3) */
#define STORE(k) MOV_X(7, 0), ST_W(-12, k), MOV_X(2, 10), ADD_K(2, -12), LD_MAP(1, res), \
	CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 1), INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 7, 0, 0)
#define VAL(x) ST_DW(-8, x), MOV_X(2, 10), ADD_K(2, -8), LD_MAP(1, bloom)
		struct bpf_insn p[] = {
			VAL(42), MOV_K(3, 0), CALL(BPF_FUNC_map_push_elem), STORE(0),
			VAL(42), CALL(BPF_FUNC_map_peek_elem), STORE(1),
			VAL(43), CALL(BPF_FUNC_map_peek_elem), STORE(2),
			VAL(44), MOV_K(3, 1), CALL(BPF_FUNC_map_push_elem), STORE(3),
			RET0,
		};
		struct bpf_insn pop[] = { VAL(1), CALL(BPF_FUNC_map_pop_elem), RET0 };
		struct bpf_insn lookup[] = { VAL(1), CALL(BPF_FUNC_map_lookup_elem), RET0 };

		EXPECT_ERRNO(prog_load_log(BPF_PROG_TYPE_PERF_EVENT, pop, N_INSNS(pop), logbuf, sizeof(logbuf)),
			     EINVAL, "map_pop_elem on a bloom filter: EINVAL");
		CHECK(strstr(logbuf, "cannot pass map_type 30 into func bpf_map_pop_elem#88"),
		      "... log: cannot pass map_type 30 into func bpf_map_pop_elem#88", "%s", logbuf);
		EXPECT_ERRNO(prog_load_log(BPF_PROG_TYPE_PERF_EVENT, lookup, N_INSNS(lookup), logbuf, sizeof(logbuf)),
			     EACCES, "map_lookup_elem on a bloom filter (no key): EACCES");
		CHECK(strstr(logbuf, "invalid zero-sized read"), "... log: invalid zero-sized read", "%s", logbuf);
		fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, p, N_INSNS(p), logbuf, sizeof(logbuf));
		if (!CHECK(fd >= 0, "a perf_event program pushing and peeking loads", "%s\n%s", strerror(errno), logbuf))
			return;
	}
	err = prog_run_on_faults(fd, 4);
	CHECK(!err, "it runs on page faults", "err %d", err);
	for (uint32_t k = 0; k < 4; k++)
		map_elem(BPF_MAP_LOOKUP_ELEM, res, &k, &r[k], 0);
	CHECK(r[0] == 0 && r[1] == 0, "push then peek of 42: 0, 0", "%lld %lld", (long long)r[0], (long long)r[1]);
	CHECK((int32_t)r[2] == -ENOENT, "peek of 43, never pushed: -ENOENT", "%lld", (long long)r[2]);
	CHECK((int32_t)r[3] == -EINVAL, "push with flags 1: -EINVAL", "%lld", (long long)r[3]);
	EXPECT_OK(test(bloom, &v), "the syscall finds what the program pushed");
	v = 44;
	EXPECT_ERRNO(test(bloom, &v), ENOENT, "... and not what its refused push carried");
	close(fd);
	close(bloom);
	close(res);
}

int main(int argc, char **argv)
{
	char got[4096];

	tap_init("t_bpf_bloom", 60);
	if (argc > 1) {
		for (size_t i = 0; i < N_INSNS(fps); i++) {
			false_positives(fps[i].vsz, got, sizeof(got));
			printf("{ %u, \"%s\" },\n", fps[i].vsz, got);
		}
		return 0;
	}
	creation();
	syscalls();
	for (size_t i = 0; i < N_INSNS(fps); i++) {
		char what[96];

		false_positives(fps[i].vsz, got, sizeof(got));
		snprintf(what, sizeof(what), "ZERO_SEED false positives of a %u-byte filter are Linux's", fps[i].vsz);
		CHECK(!strcmp(got, fps[i].want), what, "got %s", got);
	}
	programs();
	return tap_done();
}
