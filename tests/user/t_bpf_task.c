/* t_bpf_task: kernel-typed pointers (the verifier's PTR_TO_BTF_ID) from the kernel's BTF.
 * bpf_get_current_task_btf() returns the current thread's struct (perfkernel's struct task,
 * Linux's struct task_struct) typed by /sys/kernel/btf/vmlinux, and a program reads its fields
 * with plain loads (tests/user/bpf/task.bpf.c, relocated by Debian's libbpf 1.1): the thread
 * id is gettid(), eight bytes of the comm array are prctl(PR_GET_NAME)'s, and a pointer member
 * (the all-tasks list link) is a typed pointer too, whose prev leads back into the task.
 * bpf_find_vma(task, an address of this program's text, callback, ctx, 0) returns 0 after one
 * callback whose vma (struct vm_area / vm_area_struct, typed too) holds the address; address
 * 0 is -ENOENT, flags 1 -EINVAL.
 * BPF_MAP_TYPE_TASK_STORAGE: a program counts its runs in bpf_task_storage_get(F_CREATE)'s
 * value of the current thread; user space reads, writes (BPF_NOEXIST EEXIST, BPF_EXIST ENOENT)
 * and deletes it by a pidfd (pidfd_open), a key that is no pidfd is EBADF, get_next_key
 * ENOTSUPP; bpf_task_storage_delete gives 0 then -ENOENT; a child's value is there by its
 * pidfd until it is reaped (ENOENT); map_lookup_elem on such a map is refused (EINVAL);
 * creation wants BPF_F_NO_PREALLOC, max_entries 0, a 4-byte key, BTF (EINVAL), a value under
 * 64 KiB (E2BIG).
 * Refused as Linux 6.1's check_ptr_to_btf_access / btf_struct_access refuse them (raw
 * instructions, EACCES): a store through the pointer ("only read is supported"), a load past
 * the struct's end ("access beyond struct"), at a negative offset ("invalid negative access"),
 * at a variable offset ("invalid variable offset"); one load reached with the task pointer
 * and with a stack pointer is EINVAL ("same insn cannot be used with different pointers").  Such loads run as probe reads (JIT-compiled
 * here and on Linux) and xlated_prog_insns shows them as the loads they were.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"
#include "bpf_insn.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char _binary_task_bpf_o_start[], _binary_task_bpf_o_end[];

enum { OUT_RUNS, OUT_FLAVOUR, OUT_TID, OUT_COMM, OUT_LINK };

static char vlog[65536];

/* task.bpf.o with only program name to load */
static struct bpf_object *open_one(const char *name)
{
	return open_one_prog(_binary_task_bpf_o_start, _binary_task_bpf_o_end, name);
}

static void check_fields(void)
{
	struct bpf_object *obj = open_one("task_fields");
	struct bpf_program *prog;
	struct bpf_map *map;
	uint64_t v[8] = { 0 }, comm8 = 0;
	char comm[16] = { 0 };
	int err;

	if (!CHECK(obj, "bpf_object__open_mem(task.bpf.o)", "errno %d", errno))
		return;
	prog = bpf_object__find_program_by_name(obj, "task_fields");
	vlog[0] = 0;
	bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "load task_fields (loads through get_current_task_btf's pointer)",
		   "err %d: %.2000s", err, vlog)) {
		bpf_object__close(obj);
		return;
	}
	map = bpf_object__find_map_by_name(obj, "out");
	struct bpf_prog_info info;
	__u32 ilen = sizeof(info);
	int jit = bpf_jit_enabled();

	memset(&info, 0, sizeof(info));
	CHECK(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &ilen) == 0 &&
		      (info.jited_prog_len > 0) == (jit != 0),
	      "JIT-compiled, its probe loads too, as bpf_jit_enable says", "errno %d jited_prog_len %u, "
	      "bpf_jit_enable %d", errno, info.jited_prog_len, jit);
	EXPECT_OK(run_on_faults(prog, 16), "task_fields on 16 page faults of this thread");
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(map, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	prctl(PR_GET_NAME, comm);
	memcpy(&comm8, comm, sizeof(comm8));
	CHECK(v[OUT_RUNS] >= 16, "the program ran for each fault", "%llu runs",
	      (unsigned long long)v[OUT_RUNS]);
	CHECK(v[OUT_FLAVOUR] == 1 || v[OUT_FLAVOUR] == 2, "the kernel's BTF has its thread struct",
	      "%llu", (unsigned long long)v[OUT_FLAVOUR]);
	CHECK(v[OUT_TID] == (uint64_t)gettid(), "task->tid (task_struct->pid) is gettid()",
	      "%llu, gettid %d", (unsigned long long)v[OUT_TID], (int)gettid());
	CHECK(v[OUT_COMM] == comm8, "8 bytes of task->comm are PR_GET_NAME's", "%#llx, comm '%s'",
	      (unsigned long long)v[OUT_COMM], comm);
	CHECK(v[OUT_LINK] == 1, "a pointer member is typed: link.next->prev is &task->link", "%llu",
	      (unsigned long long)v[OUT_LINK]);
	bpf_object__close(obj);
}

/* Run task_vma on 4 page faults with this address and these flags; out[] back in v. */
static void find_vma_run(struct bpf_program *prog, struct bpf_map *map, uint64_t addr,
			 uint64_t flags, uint64_t *v)
{
	uint64_t in[8] = { [5] = addr, [6] = flags };

	for (uint32_t k = 0; k < 8; k++)
		bpf_map__update_elem(map, &k, sizeof(k), &in[k], sizeof(in[k]), 0);
	EXPECT_OK(run_on_faults(prog, 4), "task_vma on 4 page faults of this thread");
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(map, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
}

/* bpf_find_vma(current task, an address of this program's text, callback, ctx, flags) */
static void check_find_vma(void)
{
	struct bpf_object *obj = open_one("task_vma");
	struct bpf_program *prog;
	struct bpf_map *map;
	uint64_t v[8] = { 0 }, text = (uint64_t)(uintptr_t)&check_find_vma;
	int err;

	if (!CHECK(obj, "bpf_object__open_mem(task.bpf.o) for task_vma", "errno %d", errno))
		return;
	prog = bpf_object__find_program_by_name(obj, "task_vma");
	vlog[0] = 0;
	bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "load task_vma (find_vma with a callback reading the vma)", "err %d: %.2000s",
		   err, vlog)) {
		bpf_object__close(obj);
		return;
	}
	map = bpf_object__find_map_by_name(obj, "out");
	find_vma_run(prog, map, text, 0, v);
	CHECK(v[1] == 0 && v[2] == 1, "find_vma on our text: 0, the callback ran once",
	      "ret %lld calls %llu", (long long)v[1], (unsigned long long)v[2]);
	CHECK(v[3] <= text && text < v[4], "the callback's vma holds the address",
	      "[%#llx, %#llx) %#llx", (unsigned long long)v[3], (unsigned long long)v[4],
	      (unsigned long long)text);
	find_vma_run(prog, map, 0, 0, v);
	CHECK((int64_t)v[1] == -ENOENT && v[2] == 0, "find_vma on address 0: -ENOENT, no callback",
	      "%lld, %llu calls", (long long)v[1], (unsigned long long)v[2]);
	find_vma_run(prog, map, text, 1, v);
	CHECK((int64_t)v[1] == -EINVAL && v[2] == 0, "find_vma with flags 1: -EINVAL, no callback",
	      "%lld, %llu calls", (long long)v[1], (unsigned long long)v[2]);
	bpf_object__close(obj);

	err = load_one_prog(_binary_task_bpf_o_start, _binary_task_bpf_o_end, "vma_scalar_task",
			    vlog, sizeof(vlog));
	CHECK(err == -EACCES && strstr(vlog, "R1 type=scalar expected=ptr_"),
	      "find_vma with a number as its task: EACCES, R1 type=scalar expected=ptr_",
	      "err %d log: %.600s", err, vlog);
	err = load_one_prog(_binary_task_bpf_o_start, _binary_task_bpf_o_end, "vma_moved_task",
			    vlog, sizeof(vlog));
	CHECK(err == -EACCES && strstr(vlog, "R1 is of type task"),
	      "find_vma with the task pointer + 8: EACCES, R1 is of type task.. but task.. expected",
	      "err %d log: %.600s", err, vlog);
}

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

/* out[] and counts[pidfd] after prog ran on n faults */
static void count_run(struct bpf_program *prog, int n)
{
	EXPECT_OK(run_on_faults(prog, n), "the program on page faults of this thread");
}

static uint64_t out_get(struct bpf_map *out, uint32_t k)
{
	uint64_t v = 0;

	bpf_map__lookup_elem(out, &k, sizeof(k), &v, sizeof(v), 0);
	return v;
}

/* BPF_MAP_TYPE_TASK_STORAGE: a per-thread counter the program keeps and user space reads,
 * writes and deletes by pidfd */
static void check_task_storage(void)
{
	struct bpf_object *obj = open_one("task_count");
	struct bpf_program *prog, *uncount;
	struct bpf_map *out, *counts;
	uint64_t v = 0, runs;
	int pidfd, err, fd;

	if (!CHECK(obj, "bpf_object__open_mem(task.bpf.o) for task_count", "errno %d", errno))
		return;
	bpf_program__set_autoload(bpf_object__find_program_by_name(obj, "task_uncount"), true);
	prog = bpf_object__find_program_by_name(obj, "task_count");
	uncount = bpf_object__find_program_by_name(obj, "task_uncount");
	vlog[0] = 0;
	bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "load task_count and task_uncount (a TASK_STORAGE map)", "err %d: %.2000s",
		   err, vlog)) {
		bpf_object__close(obj);
		return;
	}
	out = bpf_object__find_map_by_name(obj, "out");
	counts = bpf_object__find_map_by_name(obj, "counts");
	fd = bpf_map__fd(counts);
	pidfd = pidfd_open(getpid(), 0);
	CHECK(pidfd >= 0, "pidfd_open(getpid(), 0)", "errno %d", errno);
	errno = 0;
	CHECK(bpf_map_lookup_elem(fd, &pidfd, &v) < 0 && errno == ENOENT,
	      "lookup by our pidfd before any run: ENOENT", "errno %d", errno);
	count_run(prog, 16);
	runs = out_get(out, 0);
	CHECK(bpf_map_lookup_elem(fd, &pidfd, &v) == 0 && v == runs && runs >= 16,
	      "lookup by pidfd: the program's count is its runs", "%llu, %llu runs",
	      (unsigned long long)v, (unsigned long long)runs);
	CHECK(out_get(out, 1) == 1, "task_storage_get without F_CREATE finds the same value", "%llu",
	      (unsigned long long)out_get(out, 1));
	v = 1000;
	errno = 0;
	CHECK(bpf_map_update_elem(fd, &pidfd, &v, BPF_NOEXIST) < 0 && errno == EEXIST,
	      "update BPF_NOEXIST: EEXIST", "errno %d", errno);
	CHECK(bpf_map_update_elem(fd, &pidfd, &v, BPF_EXIST) == 0, "update BPF_EXIST to 1000",
	      "errno %d", errno);
	count_run(prog, 4);
	runs = out_get(out, 0) - runs;
	CHECK(bpf_map_lookup_elem(fd, &pidfd, &v) == 0 && v == 1000 + runs,
	      "the program counts on from the value written", "%llu, %llu more runs",
	      (unsigned long long)v, (unsigned long long)runs);
	count_run(uncount, 1);
	CHECK(out_get(out, 2) == 0 && (int64_t)out_get(out, 3) == -ENOENT && out_get(out, 4) == 0,
	      "bpf_task_storage_delete: 0, then -ENOENT; get finds nothing", "%lld %lld %#llx",
	      (long long)out_get(out, 2), (long long)out_get(out, 3),
	      (unsigned long long)out_get(out, 4));
	errno = 0;
	CHECK(bpf_map_lookup_elem(fd, &pidfd, &v) < 0 && errno == ENOENT,
	      "lookup after the delete: ENOENT", "errno %d", errno);
	v = 7;
	errno = 0;
	CHECK(bpf_map_update_elem(fd, &pidfd, &v, BPF_EXIST) < 0 && errno == ENOENT,
	      "update BPF_EXIST without a value: ENOENT", "errno %d", errno);
	CHECK(bpf_map_update_elem(fd, &pidfd, &v, BPF_NOEXIST) == 0 &&
		      bpf_map_lookup_elem(fd, &pidfd, &v) == 0 && v == 7,
	      "update BPF_NOEXIST makes one from user space", "errno %d v %llu", errno,
	      (unsigned long long)v);
	CHECK(bpf_map_delete_elem(fd, &pidfd) == 0, "delete by pidfd", "errno %d", errno);
	errno = 0;
	CHECK(bpf_map_delete_elem(fd, &pidfd) < 0 && errno == ENOENT, "delete again: ENOENT",
	      "errno %d", errno);
	errno = 0;
	CHECK(bpf_map_lookup_elem(fd, &fd, &v) < 0 && errno == EBADF,
	      "a key that is not a pidfd (the map's own fd): EBADF", "errno %d", errno);
	errno = 0;
	CHECK(bpf_map_get_next_key(fd, NULL, &v) < 0 && errno == 524,
	      "get_next_key: ENOTSUPP (524)", "errno %d", errno);
	/* a child's value: there while it lives, its pidfd ENOENT once it is reaped */
	int go[2], done[2];

	if (pipe(go) == 0 && pipe(done) == 0) {
		pid_t child = fork();
		char c = 0;

		if (child == 0) {
			run_on_faults(prog, 4);
			if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		int cfd = child > 0 ? pidfd_open(child, 0) : -1;
		int st = 0;

		CHECK(cfd >= 0 && read(done[0], &c, 1) == 1 && bpf_map_lookup_elem(fd, &cfd, &v) == 0 &&
			      v >= 4,
		      "a child's count, by its pidfd", "cfd %d errno %d v %llu", cfd, errno,
		      (unsigned long long)v);
		if (write(go[1], "x", 1) != 1)
			perror("write");
		waitpid(child, &st, 0);
		errno = 0;
		CHECK(bpf_map_lookup_elem(fd, &cfd, &v) < 0 && errno == ENOENT,
		      "the child reaped: its pidfd's lookup is ENOENT", "errno %d", errno);
		close(cfd);
	}
	close(pidfd);
	bpf_object__close(obj);

	err = load_one_prog(_binary_task_bpf_o_start, _binary_task_bpf_o_end, "count_lookup", vlog,
			    sizeof(vlog));
	CHECK(err == -EINVAL && strstr(vlog, "cannot pass map_type 29 into func bpf_map_lookup_elem#1"),
	      "map_lookup_elem on a task storage map: EINVAL, cannot pass map_type 29",
	      "err %d log: %.600s", err, vlog);
}

/* BPF_MAP_CREATE of a TASK_STORAGE map: Linux's attribute rules */
static void check_task_storage_create(void)
{
	struct btf *btf = btf__new_empty();
	int id = btf ? btf__add_int(btf, "int", 4, BTF_INT_SIGNED) : -1;
	int btf_fd = id > 0 && btf__load_into_kernel(btf) == 0 ? btf__fd(btf) : -1;
	struct {
		const char *what;
		uint32_t flags, max, ks, vs, kid;
		int err;
	} rows[] = {
		{ "without BPF_F_NO_PREALLOC: EINVAL", 0, 0, 4, 4, 1, EINVAL },
		{ "max_entries 1: EINVAL", BPF_F_NO_PREALLOC, 1, 4, 4, 1, EINVAL },
		{ "key_size 8: EINVAL", BPF_F_NO_PREALLOC, 0, 8, 4, 1, EINVAL },
		{ "no BTF key type: EINVAL", BPF_F_NO_PREALLOC, 0, 4, 4, 0, EINVAL },
		{ "BPF_F_RDONLY_PROG: EINVAL", BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, 0, 4, 4, 1,
		  EINVAL },
		{ "value_size 65535: E2BIG", BPF_F_NO_PREALLOC, 0, 4, 65535, 1, E2BIG },
		{ "value_size 65408 (65535 - 127): E2BIG", BPF_F_NO_PREALLOC, 0, 4, 65408, 1, E2BIG },
		/* at the limit the size passes, and the 4-byte value type is then wrong */
		{ "value_size 65407 with an int value type: EINVAL", BPF_F_NO_PREALLOC, 0, 4, 65407, 1,
		  EINVAL },
		{ "int key and value, BPF_F_NO_PREALLOC: created", BPF_F_NO_PREALLOC, 0, 4, 4, 1, 0 },
	};

	CHECK(btf_fd >= 0, "a BTF with an int", "errno %d", errno);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = rows[i].flags, .btf_fd = btf_fd,
			    .btf_key_type_id = rows[i].kid, .btf_value_type_id = rows[i].kid ? 1 : 0);
		int fd;

		errno = 0;
		fd = bpf_map_create(BPF_MAP_TYPE_TASK_STORAGE, "ts", rows[i].ks, rows[i].vs,
				    rows[i].max, &o);
		CHECK(rows[i].err ? fd < 0 && errno == rows[i].err : fd >= 0, rows[i].what,
		      "fd %d errno %d", fd, errno);
		if (fd >= 0)
			close(fd);
	}
	btf__free(btf);
}

#define CALL_TASK CALL(BPF_FUNC_get_current_task_btf)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)

/* A raw program is refused with EACCES and the log line Linux gives. */
static void refused(const char *what, const struct bpf_insn *insns, size_t n, const char *line)
{
	int fd;

	vlog[0] = 0;
	errno = 0;
	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, insns, n, vlog, sizeof(vlog));
	CHECK(fd < 0 && errno == EACCES && strstr(vlog, line), what, "fd %d errno %d log: %.600s", fd,
	      errno, vlog);
	if (fd >= 0)
		close(fd);
}

static void check_refusals(void)
{
	const struct bpf_insn store[] = { CALL_TASK, MOV_K(1, 0),
					  INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 1, 0, 0), RET0 };
	const struct bpf_insn beyond[] = { CALL_TASK, LDX(BPF_DW, 1, 0, 32000), RET0 };
	const struct bpf_insn negative[] = { CALL_TASK, LDX(BPF_W, 1, 0, -8), RET0 };
	const struct bpf_insn variable[] = {
		CALL(BPF_FUNC_get_prandom_u32),
		MOV_X(6, 0),
		INSN(BPF_ALU64 | BPF_AND | BPF_K, 6, 0, 0, 8),
		CALL_TASK,
		INSN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 6, 0, 0),
		LDX(BPF_B, 1, 0, 0),
		RET0,
	};
	const struct bpf_insn ok[] = { CALL_TASK, LDX(BPF_B, 1, 0, 0), RET0 };
	/* one load reached with the task pointer on one path and a stack pointer on the other */
	const struct bpf_insn mixed[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0),
		CALL(BPF_FUNC_get_prandom_u32),
		JEQ_K(0, 0, 3),
		CALL_TASK,
		MOV_X(1, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, 2, 0),
		MOV_X(1, 10),
		ADD_K(1, -8),
		LDX(BPF_B, 0, 1, 0),
		EXIT_INSN,
	};
	int fd;

	refused("a store through the task pointer: EACCES, only read is supported", store,
		N_INSNS(store), "only read is supported");
	refused("a load 32000 bytes in: EACCES, access beyond struct", beyond, N_INSNS(beyond),
		"access beyond struct");
	refused("a load at -8: EACCES, invalid negative access", negative, N_INSNS(negative),
		"invalid negative access: off=-8");
	refused("a load at a variable offset: EACCES, invalid variable offset", variable,
		N_INSNS(variable), "invalid variable offset");
	vlog[0] = 0;
	errno = 0;
	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, mixed, N_INSNS(mixed), vlog, sizeof(vlog));
	CHECK(fd < 0 && errno == EINVAL &&
		      strstr(vlog, "same insn cannot be used with different pointers"),
	      "one load through the task pointer or the stack: EINVAL, same insn cannot be used "
	      "with different pointers", "fd %d errno %d log: %.600s", fd, errno, vlog);
	if (fd >= 0)
		close(fd);
	/* the same rule for the context (Linux's reg_type_mismatch) */
	const struct bpf_insn ctx_or_stack[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0),
		MOV_X(6, 1),
		CALL(BPF_FUNC_get_prandom_u32),
		MOV_X(2, 6),
		JEQ_K(0, 0, 2),
		MOV_X(2, 10),
		ADD_K(2, -8),
		LDX(BPF_DW, 0, 2, 0),
		RET0,
	};

	vlog[0] = 0;
	errno = 0;
	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, ctx_or_stack, N_INSNS(ctx_or_stack), vlog,
			   sizeof(vlog));
	CHECK(fd < 0 && errno == EINVAL &&
		      strstr(vlog, "same insn cannot be used with different pointers"),
	      "one load through ctx or the stack: EINVAL, the same message", "fd %d errno %d log: "
	      "%.600s", fd, errno, vlog);
	if (fd >= 0)
		close(fd);
	/* byte 0 is the first member's (perfkernel: a saved register; Linux: thread_info) */
	vlog[0] = 0;
	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, ok, N_INSNS(ok), vlog, sizeof(vlog));
	CHECK(fd >= 0, "the same program loading byte 0 is accepted", "errno %d log: %.600s", errno,
	      vlog);
	if (fd >= 0) {
		/* the load runs as a probe read, but the dump shows it as loaded (Linux's
		 * bpf_insn_prepare_dump) */
		struct bpf_insn x[8];
		struct bpf_prog_info info;
		__u32 ilen = sizeof(info);

		memset(&info, 0, sizeof(info));
		memset(x, 0xff, sizeof(x));
		info.xlated_prog_len = sizeof(x);
		info.xlated_prog_insns = (uintptr_t)x;
		CHECK(bpf_obj_get_info_by_fd(fd, &info, &ilen) == 0 && info.xlated_prog_len >= 16 &&
			      x[1].code == (BPF_LDX | BPF_MEM | BPF_B) && x[1].dst_reg == 1 &&
			      x[1].src_reg == 0 && x[1].off == 0,
		      "xlated: the load is BPF_LDX|BPF_MEM|BPF_B as loaded", "errno %d len %u code %#x",
		      errno, info.xlated_prog_len, x[1].code);
		close(fd);
	}
}

int main(void)
{
	tap_init("t_bpf_task", 60);
	libbpf_set_print(faults_quiet);
	check_fields();
	check_find_vma();
	check_task_storage();
	check_task_storage_create();
	check_refusals();
	return tap_done();
}
