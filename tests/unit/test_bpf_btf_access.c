/*
 * test_bpf_btf_access.c - bpf/btf_access.c (what a load through a kernel-typed pointer reads)
 * and the verifier's PTR_TO_BTF_ID around it.  A small BTF stands in for the kernel's: its
 * struct task starts like the fake seam's task (tid, tgid, a pointer), so that programs calling
 * bpf_get_current_task_btf() can run here.  Each access outcome and log line is Linux 6.1's
 * btf_struct_walk's; the verified loads become BPF_PROBE_MEM and a fault reads 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include <bpf/bpf.h>
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../../bpf/btf.h"
#include <bpf/task.h>
#include "../fakes/ksvc_fake.h"
#include "prog_btf.h"

#define INFO(kind, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(vlen))

enum { T_INT = 1, T_TASK, T_PTR_TASK, T_ARR, T_INNER, T_PTR_INT, T_VMA, T_U64 };

/*
 * struct task {			size 48
 *	int tid;			0
 *	int tgid;			4
 *	struct task *slot;		8   (the fake's perf_slot: NULL)
 *	int arr[4];			16..32, then a hole to 40
 *	struct inner { int x, y; } in;	40..48
 * };  and an int *ip would be a scalar: struct inner2 is not needed
 */
static uint32_t kbtf_blob(uint8_t *raw)
{
	static const char strs[] = "\0int\0task\0tid\0tgid\0slot\0arr\0in\0inner\0x\0y\0vm_area"
				    "\0start\0end\0u64";
	uint32_t w[96], n = 0;

	uint32_t off[16], no = 0;
	const char *p = strs + 1;

	off[no++] = 0;
	while (p < strs + sizeof(strs) - 1) {
		off[no++] = (uint32_t)(p - strs);
		p += strlen(p) + 1;
	}
	/* off[1] int, [2] task, [3] tid, [4] tgid, [5] slot, [6] arr, [7] in, [8] inner, [9] x,
	 * [10] y, [11] vm_area, [12] start, [13] end, [14] u64 */
	w[n++] = off[1], w[n++] = INFO(BTF_KIND_INT, 0), w[n++] = 4, w[n++] = 1u << 24 | 32;
	w[n++] = off[2], w[n++] = INFO(BTF_KIND_STRUCT, 5), w[n++] = 48;
	w[n++] = off[3], w[n++] = T_INT, w[n++] = 0;
	w[n++] = off[4], w[n++] = T_INT, w[n++] = 32;
	w[n++] = off[5], w[n++] = T_PTR_TASK, w[n++] = 64;
	w[n++] = off[6], w[n++] = T_ARR, w[n++] = 128;
	w[n++] = off[7], w[n++] = T_INNER, w[n++] = 320;
	w[n++] = 0, w[n++] = INFO(BTF_KIND_PTR, 0), w[n++] = T_TASK;
	w[n++] = 0, w[n++] = INFO(BTF_KIND_ARRAY, 0), w[n++] = 0;
	w[n++] = T_INT, w[n++] = T_INT, w[n++] = 4;
	w[n++] = off[8], w[n++] = INFO(BTF_KIND_STRUCT, 2), w[n++] = 8;
	w[n++] = off[9], w[n++] = T_INT, w[n++] = 0;
	w[n++] = off[10], w[n++] = T_INT, w[n++] = 32;
	w[n++] = 0, w[n++] = INFO(BTF_KIND_PTR, 0), w[n++] = T_INT;
	/* struct vm_area { (a list link) u64 start; u64 end; }: the fake's vma */
	w[n++] = off[11], w[n++] = INFO(BTF_KIND_STRUCT, 2), w[n++] = 32;
	w[n++] = off[12], w[n++] = T_U64, w[n++] = 128;
	w[n++] = off[13], w[n++] = T_U64, w[n++] = 192;
	w[n++] = off[14], w[n++] = INFO(BTF_KIND_INT, 0), w[n++] = 8, w[n++] = 64;
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = 24,
				.type_len = n * 4, .str_off = n * 4, .str_len = sizeof(strs) };

	memcpy(raw, &h, sizeof(h));
	memcpy(raw + 24, w, n * 4);
	memcpy(raw + 24 + n * 4, strs, sizeof(strs));
	return 24 + n * 4 + (uint32_t)sizeof(strs);
}

static char logbuf[4096];

static int walk(uint32_t off, uint32_t size, uint32_t *next)
{
	struct bpf_verifier_log log = { .ubuf = logbuf, .size = sizeof(logbuf), .level = 1 };

	memset(logbuf, 0, sizeof(logbuf));
	*next = 0;
	return bpf_btf_struct_access(bpf_btf_vmlinux(), &log, T_TASK, off, size, next);
}

static int setup(void **state)
{
	static uint8_t raw[1024];
	uint32_t size = kbtf_blob(raw);

	return bpf_btf_vmlinux_init(raw, size);
}

static void test_walk(void **state)
{
	uint32_t next;

	assert_int_equal(bpf_btf_find_by_name_kind(bpf_btf_vmlinux(), "task", BTF_KIND_STRUCT),
			 T_TASK);
	assert_int_equal(bpf_btf_find_by_name_kind(bpf_btf_vmlinux(), "tid", BTF_KIND_STRUCT), 0);
	assert_int_equal(walk(0, 4, &next), BTF_WALK_SCALAR);
	assert_int_equal(walk(4, 2, &next), BTF_WALK_SCALAR); /* part of an int */
	/* a pointer to a struct: typed, read whole only */
	assert_int_equal(walk(8, 8, &next), BTF_WALK_PTR);
	assert_int_equal(next, T_TASK);
	assert_int_equal(walk(8, 4, &next), -EACCES);
	assert_string_equal(logbuf, "cannot access ptr member slot with moff 8 in struct task with "
				    "off 8 size 4\n");
	assert_int_equal(walk(12, 4, &next), -EACCES); /* its upper half */
	/* array elements, and the array as scratch space up to its true end */
	assert_int_equal(walk(20, 4, &next), BTF_WALK_SCALAR);
	assert_int_equal(walk(16, 16, &next), BTF_WALK_SCALAR);
	assert_int_equal(walk(28, 8, &next), -EACCES);
	assert_string_equal(logbuf, "access beyond the end of member arr (mend:32) in struct task "
				    "with off 28 size 8\n");
	/* an int read across two members */
	assert_int_equal(walk(2, 4, &next), -EACCES);
	assert_string_equal(logbuf, "access beyond the end of member tid (mend:4) in struct task "
				    "with off 2 size 4\n");
	/* the hole after arr */
	assert_int_equal(walk(32, 4, &next), -EINVAL);
	assert_string_equal(logbuf, "struct task doesn't have field at offset 32\n");
	/* into the nested struct */
	assert_int_equal(walk(44, 4, &next), BTF_WALK_SCALAR);
	assert_int_equal(walk(40, 8, &next), -EACCES); /* the whole inner struct: x ends at 4 */
	assert_string_equal(logbuf, "access beyond the end of member x (mend:4) in struct inner "
				    "with off 0 size 8\n");
	assert_int_equal(walk(46, 4, &next), -EACCES);
	assert_int_equal(walk(48, 1, &next), -EACCES);
	assert_string_equal(logbuf, "access beyond struct task at off 48 size 1\n");
	assert_int_equal(walk(44, 8, &next), -EACCES);
	assert_string_equal(logbuf, "access beyond struct task at off 44 size 8\n");
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define MOVR(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ALU(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_FUNC(d, off) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_FUNC, 0, off), INSN(0, 0, 0, 0, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)

static long load(const struct bpf_insn *insns, uint32_t n, const char *license)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(logbuf, 0, sizeof(logbuf));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)license;
	a.log_buf = (uintptr_t)logbuf;
	a.log_size = sizeof(logbuf);
	a.log_level = 1;
	if (pb_has_pseudo_func(insns, n)) { /* a callback: the func_info a compiler would give */
		struct bpf_func_info fi[PB_STATIC];
		long btf_fd = pb_attach(&a, insns, n, NULL, 0, fi), ret;

		assert_true(btf_fd >= 0);
		ret = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		ksvc_fake_close((int)btf_fd);
		return ret;
	}
	return bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}

static uint64_t run(long fd)
{
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *prog;
	uint64_t r0;

	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(bpf_prog_get_fd((int)fd, &prog), 0);
	r0 = bpf_prog_run(prog, &ctx);
	bpf_prog_put(prog);
	return r0;
}

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static void test_verify_and_run(void **state)
{
	/* the current task's tid, then its slot (NULL) followed: the probe read gives 0 */
	const struct bpf_insn tid[] = { CALL(BPF_FUNC_get_current_task_btf), LDX(BPF_W, 0, 0, 0),
					EXIT };
	const struct bpf_insn chase[] = { CALL(BPF_FUNC_get_current_task_btf), LDX(BPF_DW, 1, 0, 8),
					  LDX(BPF_W, 0, 1, 4), ALU(BPF_ADD, 0, 7), EXIT };
	const struct bpf_insn nested[] = { CALL(BPF_FUNC_get_current_task_btf), ALU(BPF_ADD, 0, 40),
					   LDX(BPF_W, 0, 0, 4), EXIT };
	const struct bpf_insn store[] = { CALL(BPF_FUNC_get_current_task_btf), MOV(1, 0),
					  STX(BPF_W, 0, 1, 0), MOV(0, 0), EXIT };
	const struct bpf_insn helper_mem[] = { CALL(BPF_FUNC_get_current_task_btf), MOVR(1, 0),
					       MOV(2, 4), CALL(BPF_FUNC_trace_printk), MOV(0, 0),
					       EXIT };
	long fd;

	ksvc_fake.tid = 4242;
	/* the fake's nofault reads fault only in the ranges it is told: the first page, as NULL's */
	ksvc_fake.bad_user[0].start = 0;
	ksvc_fake.bad_user[0].len = 4096;
	fd = load(tid, N(tid), "GPL");
	assert_true(fd >= 0);
	assert_int_equal(run(fd), 4242);
	ksvc_fake_close((int)fd);
	fd = load(chase, N(chase), "GPL");
	if (fd < 0)
		fail_msg("chase: %ld %s", fd, logbuf);
	assert_int_equal(run(fd), 7);
	ksvc_fake_close((int)fd);
	fd = load(nested, N(nested), "GPL");
	if (fd < 0)
		fail_msg("nested: %ld %s", fd, logbuf);
	ksvc_fake_close((int)fd);
	assert_int_equal(load(store, N(store), "GPL"), -EACCES);
	assert_non_null(strstr(logbuf, "only read is supported\n"));
	/* gpl_only, as Linux */
	assert_int_equal(load(tid, N(tid), "MIT"), -EINVAL);
	/* a kernel object is not memory a helper may read */
	assert_int_equal(load(helper_mem, N(helper_mem), "GPL"), -EACCES);
}

/* bpf_find_vma: the callback gets the task and the fake's vma (typed: it reads end), once */
static void test_find_vma(void **state)
{
	/* ctx at fp-8: the callback stores vma->end there; r0 = ret + that */
	const struct bpf_insn prog[] = {
		ST(BPF_DW, 10, -8, 0), CALL(BPF_FUNC_get_current_task_btf), MOVR(1, 0),
		MOV(2, 0x5000), LD_FUNC(3, 8), MOVR(4, 10), ALU(BPF_ADD, 4, -8), MOV(5, 0),
		CALL(BPF_FUNC_find_vma), LDX(BPF_DW, 1, 10, -8),
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0), EXIT,
		/* callback (task, vma, ctx): *ctx = vma->end + task->tid */
		LDX(BPF_DW, 4, 2, 24), LDX(BPF_W, 5, 1, 0), INSN(BPF_ALU64 | BPF_ADD | BPF_X, 4, 5, 0, 0),
		STX(BPF_DW, 3, 4, 0), MOV(0, 0), EXIT,
	};
	/* the callback writing the vma: refused */
	const struct bpf_insn write_vma[] = {
		CALL(BPF_FUNC_get_current_task_btf), MOVR(1, 0), MOV(2, 0), LD_FUNC(3, 5), MOV(4, 0),
		MOV(5, 0), CALL(BPF_FUNC_find_vma), EXIT,
		MOV(0, 0), STX(BPF_DW, 2, 0, 16), EXIT,
	};
	/* a scalar task, and the task moved by 4 */
	const struct bpf_insn scalar[] = {
		MOV(1, 0), MOV(2, 0), LD_FUNC(3, 5), MOV(4, 0), MOV(5, 0), CALL(BPF_FUNC_find_vma),
		EXIT, MOV(0, 0), EXIT,
	};
	const struct bpf_insn moved[] = {
		CALL(BPF_FUNC_get_current_task_btf), MOVR(1, 0), ALU(BPF_ADD, 1, 4), MOV(2, 0),
		LD_FUNC(3, 5), MOV(4, 0), MOV(5, 0), CALL(BPF_FUNC_find_vma), EXIT, MOV(0, 0), EXIT,
	};
	long fd;

	ksvc_fake.tid = 5;
	ksvc_fake.vma.start = 0x4000;
	ksvc_fake.vma.end = 0x6000;
	fd = load(prog, N(prog), "GPL");
	if (fd < 0)
		fail_msg("find_vma: %ld %s", fd, logbuf);
	assert_int_equal(run(fd), 0x6000 + 5); /* returned 0, the callback ran */
	ksvc_fake.vma.start = 0x8000; /* 0x5000 is no longer mapped */
	ksvc_fake.vma.end = 0x9000;
	assert_int_equal((int64_t)run(fd), -ENOENT);
	ksvc_fake_close((int)fd);
	assert_int_equal(load(write_vma, N(write_vma), "GPL"), -EACCES);
	assert_non_null(strstr(logbuf, "only read is supported\n"));
	assert_int_equal(load(scalar, N(scalar), "GPL"), -EACCES);
	assert_non_null(strstr(logbuf, "R1 type=scalar expected=ptr_\n"));
	assert_int_equal(load(moved, N(moved), "GPL"), -EACCES);
	assert_non_null(strstr(logbuf, "R1 is of type task but task is expected\n"));
}

/* BPF_MAP_TYPE_TASK_STORAGE on the fake task: a program's counter, read by (fake) pidfd,
 * gone with the thread (bpf_task_free) and with the map (LeakSanitizer checks both) */
static void test_task_storage(void **state)
{
	static uint8_t raw[1024];
	union bpf_attr a;
	long btf_fd, map_fd, fd;
	uint64_t v = 0;
	int key;

	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = kbtf_blob(raw);
	btf_fd = bpf_sys(BPF_BTF_LOAD, &a, sizeof(a));
	assert_true(btf_fd >= 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_TASK_STORAGE;
	a.key_size = 4;
	a.value_size = 8;
	a.map_flags = BPF_F_NO_PREALLOC;
	a.btf_fd = (uint32_t)btf_fd;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = T_U64;
	map_fd = bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
	assert_true(map_fd >= 0);
	a.btf_value_type_id = T_INT; /* a 4-byte value type for an 8-byte value */
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, &a, sizeof(a)), -EINVAL);
	a.btf_value_type_id = T_U64;
	a.max_entries = 1;
	assert_int_equal(bpf_sys(BPF_MAP_CREATE, &a, sizeof(a)), -EINVAL);

	/* r0 = ++*task_storage_get(map, current, NULL, F_CREATE) */
	const struct bpf_insn count[] = {
		CALL(BPF_FUNC_get_current_task_btf), MOVR(2, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)map_fd), INSN(0, 0, 0, 0, 0),
		MOV(3, 0), MOV(4, BPF_LOCAL_STORAGE_GET_F_CREATE), CALL(BPF_FUNC_task_storage_get),
		INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 1, 0), EXIT,
		LDX(BPF_DW, 1, 0, 0), ALU(BPF_ADD, 1, 1), STX(BPF_DW, 0, 1, 0), MOVR(0, 1), EXIT,
	};
	/* the returned value without the NULL check: refused */
	const struct bpf_insn unchecked[] = {
		CALL(BPF_FUNC_get_current_task_btf), MOVR(2, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, (int32_t)map_fd), INSN(0, 0, 0, 0, 0),
		MOV(3, 0), MOV(4, 0), CALL(BPF_FUNC_task_storage_get), LDX(BPF_DW, 0, 0, 0), EXIT,
	};

	ksvc_fake.current_task = 0;
	ksvc_fake.tid = 77;
	fd = load(count, N(count), "GPL");
	if (fd < 0)
		fail_msg("count: %ld %s", fd, logbuf);
	assert_int_equal(run(fd), 1);
	assert_int_equal(run(fd), 2);
	key = KSVC_FAKE_PIDFD_BASE + 77;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), 0);
	assert_int_equal(v, 2);
	key = 3; /* not a pidfd */
	assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), -EBADF);
	key = KSVC_FAKE_PIDFD_BASE + 4242; /* no such thread */
	assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), -ENOENT);
	/* the thread's end takes its value */
	bpf_task_free(ksvc_task_current());
	key = KSVC_FAKE_PIDFD_BASE + 77;
	assert_int_equal(bpf_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)), -ENOENT);
	assert_int_equal(run(fd), 1); /* made again */
	assert_int_equal(load(unchecked, N(unchecked), "GPL"), -EACCES);
	assert_non_null(strstr(logbuf, "invalid mem access 'map_value_or_null'"));
	/* the map's end takes the rest (LeakSanitizer) */
	ksvc_fake_close((int)fd);
	ksvc_fake_close((int)map_fd);
	ksvc_fake_close((int)btf_fd);
}

static int teardown(void **state)
{
	ksvc_fake_close_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk),
		cmocka_unit_test_teardown(test_verify_and_run, teardown),
		cmocka_unit_test_teardown(test_find_vma, teardown),
		cmocka_unit_test_teardown(test_task_storage, teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
