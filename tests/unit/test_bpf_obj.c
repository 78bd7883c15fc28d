/*
 * test_bpf_obj.c - bpf/obj.c and bpf/info.c through bpf_sys and the fake fd table: the one id
 * table (per-kind ids, reuse after free, GET_NEXT_ID walks, GET_FD_BY_ID's errnos and
 * open_flags, a dying object is not handed out), map fds opened read-only and write-only,
 * OBJ_GET_INFO_BY_FD (program arrays and counts, map ids in xlated instructions, info_len
 * rules), the fdinfo text of programs and maps, runtime statistics, BPF_OBJ_PIN's probe
 * (EINVAL for a fd that is no bpf object; the host fake has no bpffs: EPERM),
 * BPF_TASK_FD_QUERY's errnos without perf, and an empty BTF id space.
 * LeakSanitizer checks at exit that closing every fd frees everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/sysctl.h>
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../fakes/ksvc_fake.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static union bpf_attr a;

static union bpf_attr *zattr(void)
{
	memset(&a, 0, sizeof(a));
	return &a;
}

static long sys(int cmd)
{
	return bpf_sys(cmd, &a, sizeof(a));
}

static int map_create(uint32_t flags)
{
	zattr()->map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	a.map_flags = flags;
	strcpy(a.map_name, "m");
	return (int)sys(BPF_MAP_CREATE);
}

/* r1 = map fd (lddw), r0 = 0, exit: a program that holds the map */
static int prog_load(int map, uint32_t type)
{
	struct bpf_insn p[] = { I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, map),
				I(0, 0, 0, 0, 0), MOV(0, 0), EXIT };

	zattr()->prog_type = type;
	a.insns = (uintptr_t)p;
	a.insn_cnt = map >= 0 ? 4 : 2;
	if (map < 0)
		a.insns = (uintptr_t)&p[2];
	a.license = (uintptr_t)"GPL";
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags = BPF_F_SLEEPABLE;
	strcpy(a.prog_name, "p");
	return (int)sys(BPF_PROG_LOAD);
}

static uint32_t id_of(int fd)
{
	struct bpf_prog_info info = { 0 };

	zattr()->info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	return sys(BPF_OBJ_GET_INFO_BY_FD) ? 0 : info.id;
}

static long next_id(int cmd, uint32_t start, uint32_t *next)
{
	long r;

	zattr()->start_id = start;
	r = sys(cmd);
	*next = a.next_id;
	return r;
}

static long fd_by_id(int cmd, uint32_t id, uint32_t open_flags)
{
	zattr()->prog_id = id;
	a.open_flags = open_flags;
	return sys(cmd);
}

static int atoi_(const char *s)
{
	int v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

static int teardown(void **state)
{
	(void)state;
	ksvc_fake_close_all();
	return 0;
}

static void test_ids(void **state)
{
	int m1 = map_create(0), m2 = map_create(0), p = prog_load(m1, BPF_PROG_TYPE_SOCKET_FILTER);
	uint32_t idm1 = id_of(m1), idm2 = id_of(m2), idp = id_of(p), n;
	int fd;

	(void)state;
	assert_true(idm1 && idm2 && idp);
	assert_int_not_equal(idm1, idm2);
	/* each kind counts on its own: the program's id may equal a map's */
	assert_int_equal(next_id(BPF_MAP_GET_NEXT_ID, idm1, &n), 0);
	assert_int_equal(n, idm2);
	assert_int_equal(next_id(BPF_PROG_GET_NEXT_ID, idp - 1, &n), 0);
	assert_int_equal(n, idp);
	assert_int_equal(next_id(BPF_PROG_GET_NEXT_ID, idp, &n), -ENOENT);
	assert_int_equal(next_id(BPF_LINK_GET_NEXT_ID, 0, &n), -ENOENT);
	assert_int_equal(next_id(BPF_BTF_GET_NEXT_ID, 0, &n), -ENOENT);
	assert_int_equal(next_id(BPF_MAP_GET_NEXT_ID, 0x7fffffff, &n), -EINVAL);
	zattr()->start_id = 0;
	a.open_flags = 1; /* past next_id */
	assert_int_equal(sys(BPF_MAP_GET_NEXT_ID), -EINVAL);

	fd = (int)fd_by_id(BPF_MAP_GET_FD_BY_ID, idm2, 0);
	assert_true(fd >= 0);
	assert_int_equal(id_of(fd), idm2);
	assert_int_equal(ksvc_fake_close(fd), 0);
	assert_int_equal(fd_by_id(BPF_PROG_GET_FD_BY_ID, idp, BPF_F_RDONLY), -EINVAL);
	assert_int_equal(fd_by_id(BPF_MAP_GET_FD_BY_ID, idm2, BPF_F_RDONLY | BPF_F_WRONLY), -EINVAL);
	assert_int_equal(fd_by_id(BPF_MAP_GET_FD_BY_ID, 0, 0), -ENOENT);
	assert_int_equal(fd_by_id(BPF_LINK_GET_FD_BY_ID, 1, 0), -ENOENT);
	assert_int_equal(fd_by_id(BPF_BTF_GET_FD_BY_ID, 1, 0), -ENOENT);
	/* the program holds m1: its id lives on after the fd closes, m2's does not */
	assert_int_equal(ksvc_fake_close(m1), 0);
	assert_int_equal(ksvc_fake_close(m2), 0);
	fd = (int)fd_by_id(BPF_MAP_GET_FD_BY_ID, idm1, 0);
	assert_true(fd >= 0);
	assert_int_equal(ksvc_fake_close(fd), 0);
	assert_int_equal(fd_by_id(BPF_MAP_GET_FD_BY_ID, idm2, 0), -ENOENT);
	assert_int_equal(ksvc_fake_close(p), 0);
	assert_int_equal(fd_by_id(BPF_PROG_GET_FD_BY_ID, idp, 0), -ENOENT);
	assert_int_equal(fd_by_id(BPF_MAP_GET_FD_BY_ID, idm1, 0), -ENOENT);
	/* new objects get new ids, not the freed ones */
	m1 = map_create(0);
	assert_true(id_of(m1) > idm2);
}

static void test_map_modes(void **state)
{
	int m = map_create(0), ro, wo, rm;
	uint32_t k = 1;
	uint64_t v = 7;

	(void)state;
	ro = (int)fd_by_id(BPF_MAP_GET_FD_BY_ID, id_of(m), BPF_F_RDONLY);
	wo = (int)fd_by_id(BPF_MAP_GET_FD_BY_ID, id_of(m), BPF_F_WRONLY);
	assert_true(ro >= 0 && wo >= 0);
	zattr()->map_fd = (uint32_t)wo;
	a.key = (uintptr_t)&k;
	a.value = (uintptr_t)&v;
	assert_int_equal(sys(BPF_MAP_UPDATE_ELEM), 0);
	assert_int_equal(sys(BPF_MAP_LOOKUP_ELEM), -EPERM);
	a.map_fd = (uint32_t)ro;
	assert_int_equal(sys(BPF_MAP_UPDATE_ELEM), -EPERM);
	v = 0;
	assert_int_equal(sys(BPF_MAP_LOOKUP_ELEM), 0);
	assert_int_equal(v, 7);
	/* BPF_F_RDONLY at creation: the first fd is read-only, freeze checks no mode (6.1) */
	rm = map_create(BPF_F_RDONLY);
	zattr()->map_fd = (uint32_t)rm;
	a.key = (uintptr_t)&k;
	a.value = (uintptr_t)&v;
	assert_int_equal(sys(BPF_MAP_UPDATE_ELEM), -EPERM);
	zattr()->map_fd = (uint32_t)rm;
	assert_int_equal(sys(BPF_MAP_FREEZE), 0);
}

static void test_prog_info(void **state)
{
	int m = map_create(0), p = prog_load(m, BPF_PROG_TYPE_SOCKET_FILTER);
	struct bpf_prog_info info;
	struct bpf_insn x[4];
	uint32_t ids[2] = { 0 }, lens[1] = { 9 };
	uint64_t ksym = 0;
	uint8_t big[sizeof(info) + 8];

	(void)state;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 2;
	info.map_ids = (uintptr_t)ids;
	info.xlated_prog_len = sizeof(x);
	info.xlated_prog_insns = (uintptr_t)x;
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&ksym;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (uintptr_t)lens;
	zattr()->info.bpf_fd = (uint32_t)p;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD), 0);
	assert_int_equal(info.nr_map_ids, 1);
	assert_int_equal(ids[0], id_of(m));
	assert_int_equal(info.xlated_prog_len, 32);
	assert_int_equal(x[0].src_reg, BPF_PSEUDO_MAP_FD);
	assert_int_equal(x[0].imm, (int32_t)id_of(m));
	assert_int_equal(x[1].imm, 0);
	assert_int_equal(info.nr_jited_ksyms, 1);
	assert_true(ksym != 0);
	assert_int_equal(lens[0], info.jited_prog_len);
	assert_int_equal(info.nr_prog_tags, 1);
	assert_int_equal(info.func_info_rec_size, sizeof(struct bpf_func_info));
	assert_true(info.verified_insns > 0);
	assert_string_equal(info.name, "p");
	/* info_len: cut, written back; a dirty tail is E2BIG */
	memset(big, 0, sizeof(big));
	zattr()->info.bpf_fd = (uint32_t)p;
	a.info.info_len = sizeof(big);
	a.info.info = (uintptr_t)big;
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD), 0);
	assert_int_equal(a.info.info_len, sizeof(info));
	big[sizeof(info) + 1] = 1;
	a.info.info_len = sizeof(big);
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD), -E2BIG);
	memset(&info, 0, sizeof(info));
	info.line_info_rec_size = 3;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD), -EINVAL);
	a.info.bpf_fd = 99;
	assert_int_equal(sys(BPF_OBJ_GET_INFO_BY_FD), -EBADFD);
}

static void test_fdinfo_and_stats(void **state)
{
	int m = map_create(0), p = prog_load(-1, BPF_PROG_TYPE_SYSCALL), sfd;
	const struct ksvc_file_ops *ops;
	void *priv;
	char buf[512];
	long v;

	(void)state;
	priv = ksvc_fake_fd_priv(m, &ops);
	ops->show_fdinfo(priv, buf, sizeof(buf));
	assert_non_null(strstr(buf, "map_type:\t2\nkey_size:\t4\nvalue_size:\t8\nmax_entries:\t4\n"
				    "map_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t4096\n"));
	assert_non_null(strstr(buf, "\nfrozen:\t0\n"));
	priv = ksvc_fake_fd_priv(p, &ops);
	ops->show_fdinfo(priv, buf, sizeof(buf));
	assert_true(strstr(buf, "prog_type:\t") && atoi_(strstr(buf, "prog_type:\t") + 11) ==
						     BPF_PROG_TYPE_SYSCALL);
	assert_non_null(strstr(buf, "\nrun_cnt:\t0\n"));
	/* a stats fd counts runs while it is open */
	zattr()->enable_stats.type = BPF_STATS_RUN_TIME;
	sfd = (int)sys(BPF_ENABLE_STATS);
	assert_true(sfd >= 0);
	assert_true(bpf_stats_on());
	zattr()->test.prog_fd = (uint32_t)p;
	assert_int_equal(sys(BPF_PROG_TEST_RUN), 0);
	assert_int_equal(ksvc_fake_close(sfd), 0);
	assert_false(bpf_stats_on());
	zattr()->test.prog_fd = (uint32_t)p;
	assert_int_equal(sys(BPF_PROG_TEST_RUN), 0);
	ops->show_fdinfo(priv, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nrun_cnt:\t1\n"));
	/* the sysctl reads what was written, and enables them too */
	assert_int_equal(bpf_sysctl_get("bpf_stats_enabled", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(bpf_sysctl_set("bpf_stats_enabled", 2), -EINVAL);
	assert_int_equal(bpf_sysctl_set("bpf_stats_enabled", 1), 0);
	assert_true(bpf_stats_on());
	assert_int_equal(bpf_sysctl_set("bpf_stats_enabled", 1), 0); /* no second count */
	assert_int_equal(bpf_sysctl_set("bpf_stats_enabled", 0), 0);
	assert_false(bpf_stats_on());
	assert_int_equal(bpf_sysctl_set("unprivileged_bpf_disabled", 0), -EPERM);
	assert_int_equal(bpf_sysctl_get("nope", &v), -ENOENT);
}

static void test_pin_and_query(void **state)
{
	int m = map_create(0);

	(void)state;
	zattr()->bpf_fd = 77;
	a.pathname = (uintptr_t)"/sys/fs/bpf/x";
	assert_int_equal(sys(BPF_OBJ_PIN), -EINVAL); /* no bpf object */
	a.bpf_fd = (uint32_t)m;
	assert_int_equal(sys(BPF_OBJ_PIN), -EPERM); /* the fake: no bpffs */
	a.file_flags = BPF_F_RDONLY;
	assert_int_equal(sys(BPF_OBJ_PIN), -EINVAL);
	zattr()->pathname = (uintptr_t)"/sys/fs/bpf/x";
	a.bpf_fd = 1;
	assert_int_equal(sys(BPF_OBJ_GET), -EINVAL);
	a.bpf_fd = 0;
	assert_int_equal(sys(BPF_OBJ_GET), -ENOENT);
	/* TASK_FD_QUERY: no such task, no such fd, flags; a map fd is neither perf nor link */
	zattr()->task_fd_query.pid = 12345;
	assert_int_equal(sys(BPF_TASK_FD_QUERY), -ENOENT);
	a.task_fd_query.pid = (uint32_t)ksvc_current_tid();
	a.task_fd_query.fd = 200;
	assert_int_equal(sys(BPF_TASK_FD_QUERY), -EBADF);
	a.task_fd_query.fd = (uint32_t)m;
	assert_int_equal(sys(BPF_TASK_FD_QUERY), -BPF_ENOTSUPP);
	a.task_fd_query.flags = 1;
	assert_int_equal(sys(BPF_TASK_FD_QUERY), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ids, teardown),
		cmocka_unit_test_teardown(test_map_modes, teardown),
		cmocka_unit_test_teardown(test_prog_info, teardown),
		cmocka_unit_test_teardown(test_fdinfo_and_stats, teardown),
		cmocka_unit_test_teardown(test_pin_and_query, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
