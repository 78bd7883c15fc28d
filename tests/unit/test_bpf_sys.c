/*
 * test_bpf_sys.c - bpf(2) through bpf_sys and the fake fd table: attribute-size rules,
 * permissions, map commands with their errnos (EFAULT through the fake's bad user ranges),
 * MAP_FREEZE, PROG_LOAD/OBJ_GET_INFO_BY_FD, PROG_TEST_RUN, GET_NEXT_ID, BTF_LOAD, and the
 * reference rules (a program keeps its maps after their fds close; fds of the wrong kind).
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
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../fakes/ksvc_fake.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static union {
	union bpf_attr a;
	uint8_t raw[8192];
} u;

static union bpf_attr *zattr(void)
{
	memset(&u, 0, sizeof(u));
	return &u.a;
}

static int map_create(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max)
{
	union bpf_attr *a = zattr();

	a->map_type = type;
	a->key_size = ks;
	a->value_size = vs;
	a->max_entries = max;
	return (int)bpf_sys(BPF_MAP_CREATE, a, sizeof(*a));
}

static long map_op(int cmd, int fd, const void *key, void *val, uint64_t flags)
{
	union bpf_attr *a = zattr();

	a->map_fd = (uint32_t)fd;
	a->key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a->next_key = (uintptr_t)val;
	else
		a->value = (uintptr_t)val;
	a->flags = flags;
	return bpf_sys(cmd, a, sizeof(*a));
}

static long prog_load(uint32_t type, const struct bpf_insn *insns, uint32_t n, const char *name)
{
	union bpf_attr *a = zattr();

	a->prog_type = type;
	a->insns = (uintptr_t)insns;
	a->insn_cnt = n;
	a->license = (uintptr_t)"GPL";
	if (type == BPF_PROG_TYPE_SYSCALL)
		a->prog_flags = BPF_F_SLEEPABLE; /* Linux loads no other kind */
	if (name)
		strcpy(a->prog_name, name);
	return bpf_sys(BPF_PROG_LOAD, a, sizeof(*a));
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	memset(ksvc_fake.bad_user, 0, sizeof(ksvc_fake.bad_user));
	ksvc_fake.uid = 0;
	return 0;
}

static void test_attr_size(void **state)
{
	union bpf_attr *a;
	long fd;

	ksvc_fake.uid = 1000;
	assert_int_equal(map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 1), -EPERM);
	ksvc_fake.uid = 0;
	a = zattr();
	a->map_type = BPF_MAP_TYPE_ARRAY;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 1;
	fd = bpf_sys(BPF_MAP_CREATE, a, sizeof(*a) + 64);
	assert_true(fd >= 0);
	u.raw[sizeof(*a) + 10] = 1;
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, sizeof(*a) + 64), -E2BIG);
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, 4096 + 8), -E2BIG);
	u.raw[sizeof(*a) + 10] = 0;
	a->map_flags = 1u << 30;
	assert_true(bpf_sys(BPF_MAP_CREATE, a, 16) >= 0); /* flags beyond the size: not read */
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, sizeof(*a)), -EINVAL);
	a->map_flags = 0;
	u.raw[sizeof(*a) - 1] = 1; /* past MAP_CREATE's last field */
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, sizeof(*a)), -EINVAL);
	u.raw[sizeof(*a) - 1] = 0;
	strcpy(a->map_name, "bad-name");
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, sizeof(*a)), -EINVAL);
	ksvc_fake.bad_user[0].start = (uintptr_t)&u;
	ksvc_fake.bad_user[0].len = 1;
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, a, sizeof(*a)), -EFAULT);
	ksvc_fake.bad_user[0].len = 0;
	assert_int_equal(bpf_sys(9999, zattr(), sizeof(union bpf_attr)), -EINVAL);
	assert_int_equal(bpf_sys(BPF_BTF_LOAD, zattr(), sizeof(union bpf_attr)), -EINVAL);
}

static void test_map_cmds(void **state)
{
	int fd = map_create(BPF_MAP_TYPE_HASH, 4, 8, 4), afd;
	uint32_t k = 7, next;
	uint64_t v = 42, out = 0;
	union bpf_attr *a;

	assert_true(fd >= 3);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), -ENOENT);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_NOEXIST), 0);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 0), 0);
	assert_int_equal(out, 42);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, BPF_F_LOCK), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, &out, 8), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_GET_NEXT_KEY, fd, NULL, &next, 0), 0);
	assert_int_equal(next, 7);
	assert_int_equal(map_op(BPF_MAP_GET_NEXT_KEY, fd, &k, &next, 0), -ENOENT);
	ksvc_fake.bad_user[0].start = 0x1000;
	ksvc_fake.bad_user[0].len = 0x1000;
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, (void *)0x1000, &out, 0), -EFAULT);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, fd, &k, (void *)0x1008, 0), -EFAULT);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, (void *)0x1008, 0), -EFAULT);
	ksvc_fake.bad_user[0].len = 0;
	assert_int_equal(map_op(BPF_MAP_DELETE_ELEM, fd, &k, NULL, 0), 0);
	assert_int_equal(map_op(BPF_MAP_DELETE_ELEM, fd, &k, NULL, 0), -ENOENT);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, 200, &k, &out, 0), -EBADF);

	/* freeze */
	afd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 2);
	a = zattr();
	a->map_fd = (uint32_t)afd;
	assert_int_equal(bpf_sys(BPF_MAP_FREEZE, a, sizeof(*a)), 0);
	assert_int_equal(bpf_sys(BPF_MAP_FREEZE, a, sizeof(*a)), -EBUSY);
	k = 0;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, afd, &k, &v, BPF_ANY), -EPERM);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, afd, &k, &out, 0), 0);

	/* perf event array before perf registers: EBADF */
	fd = map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 2);
	assert_true(fd >= 0);
	v = 5;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, fd, &k, &v, BPF_ANY), -EBADF);

	/* closed fd */
	assert_int_equal(ksvc_fake_close(afd), 0);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, afd, &k, &out, 0), -EBADF);
}

static void test_prog_and_info(void **state)
{
	/* r0 = *(u64 *)map_value(hash lookup of key 0), or 0 */
	struct bpf_insn prog[] = {
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0), I(BPF_LDX | BPF_MEM | BPF_DW, 0, 0, 0, 0),
		EXIT,
	};
	struct bpf_prog_info info;
	struct bpf_insn xl[9];
	uint32_t ids[2] = { 0, 0 }, k = 0;
	uint64_t v = 99;
	struct bpf_prog *p;
	struct bpf_map *m;
	union bpf_attr *a;
	int mfd, pfd;

	mfd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, mfd, &k, &v, BPF_ANY), 0);
	prog[3].imm = mfd;
	pfd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, prog, 9, "lookup");
	assert_true(pfd >= 0);
	/* the map's fd can go: the program holds the map */
	assert_int_equal(ksvc_fake_close(mfd), 0);
	assert_int_equal(bpf_prog_get_fd(pfd, &p), 0);
	assert_int_equal(bpf_prog_type(p), BPF_PROG_TYPE_PERF_EVENT);
	{
		struct bpf_perf_event_data_kern ctx;

		memset(&ctx, 0, sizeof(ctx));
		assert_int_equal(bpf_prog_run(p, &ctx), 99);
	}
	bpf_prog_put(p);
	assert_int_equal(bpf_map_get_fd(pfd, &m), -EINVAL);
	assert_int_equal(bpf_prog_get_fd_type(pfd, BPF_PROG_TYPE_SOCKET_FILTER, &p), -EINVAL);
	assert_int_equal(bpf_prog_get_fd_type(pfd, BPF_PROG_TYPE_PERF_EVENT, &p), 0);
	assert_true(bpf_prog_id(p) != 0);
	bpf_prog_put(p);
	assert_int_equal(bpf_prog_get_fd(77, &p), -EBADF);

	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = sizeof(xl);
	info.xlated_prog_insns = (uintptr_t)xl;
	info.nr_map_ids = 2;
	info.map_ids = (uintptr_t)ids;
	a = zattr();
	a->info.bpf_fd = (uint32_t)pfd;
	a->info.info_len = sizeof(info);
	a->info.info = (uintptr_t)&info;
	assert_int_equal(bpf_sys(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a)), 0);
	assert_int_equal(info.type, BPF_PROG_TYPE_PERF_EVENT);
	assert_string_equal(info.name, "lookup");
	assert_int_equal(info.nr_map_ids, 1);
	assert_true(ids[0] != 0);
	assert_int_equal(info.xlated_prog_len, sizeof(xl));
	assert_int_equal(xl[5].imm, BPF_FUNC_map_lookup_elem);
	assert_true(info.id != 0);
	assert_int_equal(info.gpl_compatible, 1);
	/* a longer info with a non-zero tail: E2BIG; a shorter one is cut */
	{
		uint8_t big[sizeof(info) + 16];

		memset(big, 0, sizeof(big));
		big[sizeof(info) + 3] = 1;
		a = zattr();
		a->info.bpf_fd = (uint32_t)pfd;
		a->info.info_len = sizeof(big);
		a->info.info = (uintptr_t)big;
		assert_int_equal(bpf_sys(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a)), -E2BIG);
		memset(big, 0, sizeof(big));
		a->info.info_len = 8;
		assert_int_equal(bpf_sys(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a)), 0);
		assert_int_equal(u.a.info.info_len, 8);
		assert_int_equal(big[8], 0);
	}
	a = zattr();
	a->info.bpf_fd = 77;
	a->info.info_len = sizeof(info);
	a->info.info = (uintptr_t)&info;
	/* Linux 6.1's fdget failure there is EBADFD (t_bpf_obj checks it on both kernels) */
	assert_int_equal(bpf_sys(BPF_OBJ_GET_INFO_BY_FD, a, sizeof(*a)), -EBADFD);
}

static void test_next_id(void **state)
{
	static const struct bpf_insn ok[] = { MOV(0, 0), EXIT };
	union bpf_attr *a;
	uint32_t id1, id2;
	int p1, p2;

	ksvc_fake_close_all();
	a = zattr();
	assert_int_equal(bpf_sys(BPF_PROG_GET_NEXT_ID, a, sizeof(*a)), -ENOENT);
	p1 = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, ok, 2, NULL);
	p2 = (int)prog_load(BPF_PROG_TYPE_SOCKET_FILTER, ok, 2, NULL);
	assert_true(p1 >= 0 && p2 >= 0);
	a = zattr();
	assert_int_equal(bpf_sys(BPF_PROG_GET_NEXT_ID, a, sizeof(*a)), 0);
	id1 = u.a.next_id;
	a = zattr();
	a->start_id = id1;
	assert_int_equal(bpf_sys(BPF_PROG_GET_NEXT_ID, a, sizeof(*a)), 0);
	id2 = u.a.next_id;
	assert_true(id2 > id1);
	a = zattr();
	a->start_id = id2;
	assert_int_equal(bpf_sys(BPF_PROG_GET_NEXT_ID, a, sizeof(*a)), -ENOENT);
	ksvc_fake_close(p1);
	ksvc_fake_close(p2);
	a = zattr();
	assert_int_equal(bpf_sys(BPF_PROG_GET_NEXT_ID, a, sizeof(*a)), -ENOENT);
	a = zattr();
	assert_int_equal(bpf_sys(BPF_MAP_GET_NEXT_ID, a, sizeof(*a)), -ENOENT);
}

static void test_test_run(void **state)
{
	/* syscall program: ctx[1] = ctx[0] * 2 (u32s); trace_printk("hi\n") (its header reads the
	 * CPU id); return 7 */
	static const struct bpf_insn prog[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		I(BPF_LDX | BPF_MEM | BPF_W, 2, 6, 0, 0), I(BPF_ALU64 | BPF_LSH | BPF_K, 2, 0, 0, 1),
		I(BPF_STX | BPF_MEM | BPF_W, 6, 2, 4, 0),
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0x0a6968),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -4),
		MOV(2, 4), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_trace_printk), MOV(0, 7), EXIT,
	};
	static const struct bpf_insn ok[] = { MOV(0, 0), EXIT };
	uint32_t ctx[2] = { 21, 0 };
	char trace[256] = { 0 };
	union bpf_attr *a;
	int fd = (int)prog_load(BPF_PROG_TYPE_SYSCALL, prog, 11, "sys");

	assert_true(fd >= 0);
	bpf_trace_reset();
	a = zattr();
	a->test.prog_fd = (uint32_t)fd;
	a->test.ctx_in = (uintptr_t)ctx;
	a->test.ctx_size_in = sizeof(ctx);
	ksvc_fake.migrate_disables = 0;
	ksvc_fake.cpu_id_migrate_depth = 0;
	assert_int_equal(bpf_sys(BPF_PROG_TEST_RUN, a, sizeof(*a)), 0);
	assert_int_equal(u.a.test.retval, 7);
	/* the run was pinned to its CPU (bpf_prog_run_pin_on_cpu), and unpinned after */
	assert_int_equal(ksvc_fake.migrate_disables, 1);
	assert_int_equal(ksvc_fake.cpu_id_migrate_depth, 1);
	assert_int_equal(ksvc_fake.migrate_depth, 0);
	assert_int_equal(ctx[1], 42);
	bpf_trace_read(trace, sizeof(trace) - 1);
	assert_non_null(strstr(trace, "fake-task-100"));
	assert_non_null(strstr(trace, "bpf_trace_printk: hi"));
	assert_non_null(strstr(ksvc_fake.log, "bpf_trace_printk: hi"));
	/* ctx smaller than what the program reads */
	a = zattr();
	a->test.prog_fd = (uint32_t)fd;
	a->test.ctx_in = (uintptr_t)ctx;
	a->test.ctx_size_in = 4;
	assert_int_equal(bpf_sys(BPF_PROG_TEST_RUN, a, sizeof(*a)), -EINVAL);
	a->test.ctx_size_in = 8;
	a->test.repeat = 2;
	assert_int_equal(bpf_sys(BPF_PROG_TEST_RUN, a, sizeof(*a)), -EINVAL);
	assert_int_equal(ksvc_fake.migrate_depth, 0);
	/* perf_event programs have no test_run in Linux */
	fd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, ok, 2, NULL);
	a = zattr();
	a->test.prog_fd = (uint32_t)fd;
	assert_int_equal(bpf_sys(BPF_PROG_TEST_RUN, a, sizeof(*a)), -BPF_ENOTSUPP);
	a->test.prog_fd = 99;
	assert_int_equal(bpf_sys(BPF_PROG_TEST_RUN, a, sizeof(*a)), -EBADF);
}

static long read_42(void *event, struct bpf_perf_event_value *v)
{
	v->counter = 42 + (event != NULL);
	v->enabled = v->running = 7;
	return 0;
}

static const struct bpf_perf_ops perf_ops = { .event_read = read_42 };

/* The perf-attach hooks a PERF_EVENT program reaches through its ctx. */
static void test_perf_ctx_helpers(void **state)
{
	static const struct bpf_insn prog[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_attach_cookie),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -24),
		MOV(3, 24), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_prog_read_value),
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -24, 0), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0),
		EXIT,
	};
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *p;
	int dummy, fd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, prog, 11, "ctxh");

	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_get_fd_type(fd, BPF_PROG_TYPE_PERF_EVENT, &p), 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.cookie = 1000;
	ctx.event = &dummy;
	assert_int_equal(bpf_prog_run(p, &ctx), 1000); /* no perf ops: -ENOENT, zeroed value */
	bpf_register_perf_ops(&perf_ops);
	assert_int_equal(bpf_prog_run(p, &ctx), 1043);
	bpf_register_perf_ops(NULL);
	bpf_prog_put(p);
}

static const uint64_t *sample_regs;

static long callchain_pc(void *ctx, bool user, uint64_t *ips, uint32_t max)
{
	const struct bpf_perf_event_data_kern *k = ctx;

	(void)user;
	/* the sample's own registers through the pointer, not a copy */
	ips[0] = k->regs == sample_regs ? k->regs[32] : 0;
	return max ? 1 : 0;
}

static const struct bpf_perf_ops chain_ops = { .callchain = callchain_pc };

/* bpf_prog_run_perf: the ctx a program reads (regs as far as it reads them, sample_period,
 * addr, the cookie) and the one its helpers get (all registers through ctx->regs). */
static void test_run_perf(void **state)
{
	static const struct bpf_insn prog[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		I(BPF_LDX | BPF_MEM | BPF_DW, 7, 1, 16, 0), /* regs[2] */
		I(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, 272, 0), /* sample_period */
		I(BPF_ALU64 | BPF_ADD | BPF_X, 7, 2, 0, 0),
		I(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, 280, 0), /* addr */
		I(BPF_ALU64 | BPF_ADD | BPF_X, 7, 2, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_attach_cookie),
		I(BPF_ALU64 | BPF_ADD | BPF_X, 7, 0, 0, 0),
		/* get_stack(ctx, fp - 8, 8, 0): the pc as the helper saw it */
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8), MOV(3, 8), MOV(4, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_stack),
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -8, 0), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0),
		EXIT,
	};
	uint64_t regs[34];
	struct bpf_prog *p;
	int dummy, fd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, prog, 17, "runperf");

	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_get_fd_type(fd, BPF_PROG_TYPE_PERF_EVENT, &p), 0);
	for (int i = 0; i < 34; i++)
		regs[i] = 1000000ull * (i + 1);
	bpf_register_perf_ops(&chain_ops);
	sample_regs = regs;
	/* regs[2] 3000000 + period 20 + addr 300 + cookie 4000 + pc (regs[32]) 33000000 */
	assert_int_equal(bpf_prog_run_perf(p, regs, 20, 300, &dummy, 4000), 36004320);
	bpf_register_perf_ops(NULL);
	bpf_prog_put(p);
}

/* bpf_get_func_ip in a KPROBE program: what the kernel says of the kprobe running on this CPU
 * (its function, or 0 on a uprobe or inside a function), not a constant */
static void test_func_ip_kprobe(void **state)
{
	static const struct bpf_insn prog[] = {
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_func_ip), EXIT,
	};
	uint64_t regs[34] = { 0 };
	struct bpf_prog *p;
	int fd = (int)prog_load(BPF_PROG_TYPE_KPROBE, prog, 2, "funcip");

	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_get_fd_type(fd, BPF_PROG_TYPE_KPROBE, &p), 0);
	ksvc_fake.kprobe_running_addr = 0xffff800010234560ull;
	assert_true(bpf_prog_run(p, regs) == 0xffff800010234560ull);
	ksvc_fake.kprobe_running_addr = 0xffff800010abcde0ull;
	assert_true(bpf_prog_run(p, regs) == 0xffff800010abcde0ull);
	ksvc_fake.kprobe_running_addr = 0;
	assert_true(bpf_prog_run(p, regs) == 0);
	bpf_prog_put(p);
}

/* r0 = a program run with ctx, for the tail-call test */
static uint64_t run_fd(int fd)
{
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *p;
	uint64_t r;

	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(bpf_prog_get_fd(fd, &p), 0);
	r = bpf_prog_run(p, &ctx);
	bpf_prog_put(p);
	return r;
}

/*
 * BPF_MAP_TYPE_PROG_ARRAY and bpf_tail_call: the syscall side (program fds in, ids out, the
 * owner), the interpreter's tail call (no return, misses fall through, at most 33 a run), and
 * the references: a slot holds its program, the map's last fd empties the slots (a program
 * in its own array is freed then: LeakSanitizer).
 */
static void test_prog_array(void **state)
{
	/* r0 = 7 */
	struct bpf_insn target[] = { MOV(0, 7), EXIT };
	/* tail call slot r3 = 0; r0 = 1 when it falls through */
	struct bpf_insn entry[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		MOV(3, 0), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call), MOV(0, 1), EXIT,
	};
	/* counter[0] += 1, then tail call slot 1 (itself); r0 = the counter when it falls through */
	struct bpf_insn self[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 10, 0), MOV(1, 1),
		I(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD), I(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
		I(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		MOV(3, 1), I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 7, 0, 0), EXIT, MOV(0, 0), EXIT,
	};
	uint32_t k = 0, id = 0, owner;
	uint64_t zero = 0;
	struct bpf_map *m;
	bool jited;
	int pa, cnt, tfd, efd, sfd, sock, fd;

	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2);
	assert_true(pa >= 0);
	assert_int_equal(map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 8, 2), -EINVAL);
	cnt = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	tfd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, target, 2, NULL);
	sock = (int)prog_load(BPF_PROG_TYPE_SOCKET_FILTER, target, 2, NULL);
	entry[1].imm = pa;
	self[4].imm = cnt;
	self[12].imm = pa;
	efd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, entry, 7, NULL);
	sfd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, self, 20, NULL);
	assert_true(tfd >= 0 && sock >= 0 && efd >= 0 && sfd >= 0);
	/* loading entry made perf_event programs the owner */
	assert_int_equal(bpf_map_get_fd(pa, &m), 0);
	assert_true(bpf_prog_array_owner(m, &owner, &jited));
	assert_int_equal(owner, BPF_PROG_TYPE_PERF_EVENT);
	bpf_map_put(m);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &sock, BPF_ANY), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &pa, BPF_ANY), -EINVAL);
	fd = 77;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &fd, BPF_ANY), -EBADF);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &tfd, BPF_NOEXIST), -EINVAL);
	k = 2;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &tfd, BPF_ANY), -E2BIG);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, pa, &k, &id, 0), -ENOENT);
	k = 0;
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, pa, &k, &id, 0), -ENOENT);
	assert_int_equal(run_fd(efd), 1); /* empty slot: falls through */
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &tfd, BPF_ANY), 0);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, pa, &k, &id, 0), 0);
	{
		struct bpf_prog *t;

		assert_int_equal(bpf_prog_get_fd(tfd, &t), 0);
		assert_int_equal(id, bpf_prog_id(t));
		bpf_prog_put(t);
	}
	assert_int_equal(run_fd(efd), 7); /* the target's r0: no return to entry */
	/* the slot keeps the target after its fd closes */
	assert_int_equal(ksvc_fake_close(tfd), 0);
	assert_int_equal(run_fd(efd), 7);
	assert_int_equal(map_op(BPF_MAP_DELETE_ELEM, pa, &k, NULL, 0), 0);
	assert_int_equal(map_op(BPF_MAP_DELETE_ELEM, pa, &k, NULL, 0), -ENOENT);
	assert_int_equal(run_fd(efd), 1);
	/* itself in slot 1: 1 run + 33 tail calls */
	k = 1;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, pa, &k, &sfd, BPF_ANY), 0);
	k = 0;
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, cnt, &k, &zero, BPF_ANY), 0);
	assert_int_equal(run_fd(sfd), 34);
	assert_int_equal(run_fd(sfd), 68);
	/* the array's last fd: slots empty, so self (in its own array) can go */
	assert_int_equal(ksvc_fake_close(pa), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, cnt, &k, &zero, BPF_ANY), 0);
	assert_int_equal(run_fd(sfd), 1);
	/* a socket filter cannot load against a perf_event-owned array */
	{
		struct bpf_insn uses[] = { I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0),
					   I(0, 0, 0, 0, 0), MOV(0, 0), EXIT };

		pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 2);
		uses[0].imm = pa;
		assert_true(prog_load(BPF_PROG_TYPE_PERF_EVENT, uses, 4, NULL) >= 0);
		assert_int_equal(prog_load(BPF_PROG_TYPE_SOCKET_FILTER, uses, 4, NULL), -EINVAL);
	}
}

static int outer_create(uint32_t type, int inner)
{
	union bpf_attr *a = zattr();

	a->map_type = type;
	a->key_size = 4;
	a->value_size = 4;
	a->max_entries = 2;
	a->inner_map_fd = (uint32_t)inner;
	return (int)bpf_sys(BPF_MAP_CREATE, a, sizeof(*a));
}

/*
 * ARRAY_OF_MAPS and HASH_OF_MAPS: the template's errnos, a program's lookup through both
 * (bpf_prog_run), the slots' references (the inner maps' fds close first; LeakSanitizer checks
 * that the outer maps' last references free them, the hash walking its elements).
 */
static void test_map_in_map(void **state)
{
	/* r0 = outer[0] ? (inner[0] ? *inner[0] : 2) : 1 */
	struct bpf_insn prog[] = {
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 2, 0), MOV(0, 1), EXIT,
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		I(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 2, 0), MOV(0, 2), EXIT,
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 0, 0, 0), EXIT,
	};
	struct bpf_perf_event_data_kern ctx;
	uint32_t k = 0, id = 0;
	uint64_t v = 42;
	union bpf_attr *a;
	struct bpf_prog *p;
	int arr, hin, pa, ao, ho, pfd;

	arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	hin = map_create(BPF_MAP_TYPE_HASH, 4, 8, 1);
	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 1);
	assert_int_equal(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, pa), -BPF_ENOTSUPP);
	assert_int_equal(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 77), -EBADF);
	assert_int_equal(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, pa), -BPF_ENOTSUPP);
	ao = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, arr);
	ho = outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, hin);
	assert_true(ao >= 0 && ho >= 0);
	assert_int_equal(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, ao), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ao, &k, &hin, BPF_ANY), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ho, &k, &arr, BPF_ANY), -EINVAL);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, arr, &k, &v, BPF_ANY), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, hin, &k, &v, BPF_ANY), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ao, &k, &arr, BPF_ANY), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ho, &k, &hin, BPF_NOEXIST), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ho, &k, &hin, BPF_NOEXIST), -EEXIST);
	assert_int_equal(map_op(BPF_MAP_LOOKUP_ELEM, ho, &k, &id, 0), 0);
	assert_true(id != 0);
	memset(&ctx, 0, sizeof(ctx));
	prog[3].imm = ao;
	pfd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, prog, 18, NULL);
	assert_true(pfd >= 0);
	assert_int_equal(bpf_prog_get_fd(pfd, &p), 0);
	assert_int_equal(bpf_prog_run(p, &ctx), 42);
	bpf_prog_put(p);
	assert_int_equal(map_op(BPF_MAP_DELETE_ELEM, ao, &k, NULL, 0), 0);
	assert_int_equal(bpf_prog_get_fd(pfd, &p), 0);
	assert_int_equal(bpf_prog_run(p, &ctx), 1);
	bpf_prog_put(p);
	prog[3].imm = ho;
	pfd = (int)prog_load(BPF_PROG_TYPE_PERF_EVENT, prog, 18, NULL);
	assert_true(pfd >= 0);
	assert_int_equal(bpf_prog_get_fd(pfd, &p), 0);
	assert_int_equal(bpf_prog_run(p, &ctx), 42);
	bpf_prog_put(p);
	/* the inner maps' fds go first: the hash of maps keeps hin until it is freed */
	assert_int_equal(ksvc_fake_close(hin), 0);
	assert_int_equal(ksvc_fake_close(arr), 0);
	assert_int_equal(map_op(BPF_MAP_UPDATE_ELEM, ao, &k, &pa, BPF_ANY), -EINVAL);
	a = zattr();
	a->map_id = id;
	hin = (int)bpf_sys(BPF_MAP_GET_FD_BY_ID, a, sizeof(*a));
	assert_true(hin >= 0);
	assert_int_equal(ksvc_fake_close(hin), 0);
	assert_int_equal(ksvc_fake_close(pfd), 0); /* the program on ho */
	assert_int_equal(ksvc_fake_close(ho), 0);
	a = zattr();
	a->map_id = id;
	assert_int_equal(bpf_sys(BPF_MAP_GET_FD_BY_ID, a, sizeof(*a)), -ENOENT);
}

static void test_load_errors(void **state)
{
	static const struct bpf_insn ok[] = { MOV(0, 0), EXIT };
	union bpf_attr *a;

	a = zattr();
	a->prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a->insns = (uintptr_t)ok;
	a->insn_cnt = 2;
	ksvc_fake.bad_user[0].start = 0x2000;
	ksvc_fake.bad_user[0].len = 0x100;
	a->license = 0x2000;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -EFAULT);
	a->license = (uintptr_t)"GPL";
	a->insns = 0x2000;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -EFAULT);
	a->insns = (uintptr_t)ok;
	a->prog_flags = BPF_F_SLEEPABLE;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -EINVAL);
	a->prog_flags = 1u << 20;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -EINVAL);
	a->prog_flags = 0;
	{
		/* Linux 6.1: a SYSCALL program must be sleepable */
		static char log[256];
		uint32_t type = a->prog_type;

		a->prog_type = BPF_PROG_TYPE_SYSCALL;
		a->log_buf = (uintptr_t)log;
		a->log_size = sizeof(log);
		a->log_level = 1;
		assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -EINVAL);
		assert_non_null(strstr(log, "Syscall programs can only be sleepable"));
		a->prog_type = type;
		a->log_buf = 0;
		a->log_size = 0;
		a->log_level = 0;
	}
	a->insn_cnt = 1000001;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -E2BIG);
	a->insn_cnt = 2;
	ksvc_fake.fail_alloc_after = 0;
	assert_int_equal(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)), -ENOMEM);
	ksvc_fake.fail_alloc_after = -1;
	assert_true(bpf_sys(BPF_PROG_LOAD, a, sizeof(*a)) >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_attr_size, teardown),
		cmocka_unit_test_teardown(test_map_cmds, teardown),
		cmocka_unit_test_teardown(test_prog_and_info, teardown),
		cmocka_unit_test_teardown(test_next_id, teardown),
		cmocka_unit_test_teardown(test_test_run, teardown),
		cmocka_unit_test_teardown(test_load_errors, teardown),
		cmocka_unit_test_teardown(test_perf_ctx_helpers, teardown),
		cmocka_unit_test_teardown(test_run_perf, teardown),
		cmocka_unit_test_teardown(test_func_ip_kprobe, teardown),
		cmocka_unit_test_teardown(test_prog_array, teardown),
		cmocka_unit_test_teardown(test_map_in_map, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
