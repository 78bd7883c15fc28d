/* t_bpf_kptr: kernel pointers kept in map values (Linux 6.1's kptrs), raw instructions and
 * BTF blobs built here.  The thread struct is perfkernel's struct task or Linux's task_struct,
 * whichever /sys/kernel/btf/vmlinux has; its thread id field is tid or pid.
 * Maps (BPF_MAP_CREATE with a value struct holding "u64 a; struct T __kptr *p;"): array and
 * hash take it, a per-CPU hash is EOPNOTSUPP, BPF_F_RDONLY_PROG / WRONLY_PROG EACCES.  Values
 * whose kptrs do not parse still make a map, with no kptr (bpf_kptr_xchg's message says why):
 * a struct name the kernel lacks, a "kptr_ref" (no destructor for the type), a tag other than
 * kptr, a member not 8-byte aligned anywhere in the struct, one bad kptr beside a good one,
 * nine kptrs ("more than 8 kptr"; eight are fine).
 * Programs (BPF_PROG_TYPE_SYSCALL, run by BPF_PROG_TEST_RUN): one stores
 * bpf_get_current_task_btf() in the kptr, another loads it, checks NULL and reads the thread
 * id through it (gettid()); user space reads the field as 0, and after a user update the
 * program finds NULL (array, hash, and a per-CPU array for every CPU's copy).
 * Refused, EACCES with Linux's line: a load of the kptr used without the NULL check
 * ('untrusted_ptr_or_null_'), a scalar stored ("invalid kptr access"), a pointer
 * into the task's middle stored, BPF_ST of 1, a 4-byte or misaligned access, an atomic add, a
 * variable offset, a helper writing over the field, bpf_kptr_xchg (not a referenced kptr /
 * not a kptr), and the untrusted task handed to bpf_find_vma (perf_event program).
 * Clang-built (tests/user/bpf/kptr.bpf.c, libbpf): a global __kptr (in a .data.* section's
 * map, its value a DATASEC); a perf_event program on this thread's page faults reads the thread id
 * through the kptr the previous run stored (NULL the first time).
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_faults.h"
#include "btf_blob.h"

#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf_a(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static const char *task_name; /* the kernel's thread struct */
static int tid_off = -1; /* its thread id field (tid / pid) */

/* The kernel's thread struct and its id fields, from /sys/kernel/btf/vmlinux. */
static int find_task(void)
{
	static const char *names[] = { "task", "task_struct" }, *tids[] = { "tid", "pid" };
	struct btf *vm = btf__parse("/sys/kernel/btf/vmlinux", NULL);

	if (!vm)
		return -1;
	for (int i = 0; i < 2 && !task_name; i++) {
		int id = btf__find_by_name_kind(vm, names[i], BTF_KIND_STRUCT);
		const struct btf_type *t = id > 0 ? btf__type_by_id(vm, id) : NULL;

		if (!t)
			continue;
		for (int m = 0; m < btf_vlen(t); m++) {
			const char *n = btf__name_by_offset(vm, btf_members(t)[m].name_off);

			if (!strcmp(n, tids[i]))
				tid_off = (int)btf_member_bit_offset(t, m) / 8;
		}
		task_name = names[i];
	}
	btf__free(vm);
	return task_name && tid_off >= 0 ? 0 : -1;
}

/* ---- map BTF ---- */

/* value layouts */
enum variant {
	V_GOOD, /* { u64 a; struct T __kptr *p; } */
	V_NO_TYPE, /* the struct is one the kernel lacks */
	V_REF, /* __kptr_ref */
	V_OTHER_TAG, /* a type tag "user" */
	V_INT_AT_4, /* { u32 a; u32 b; struct T __kptr *p; } */
	V_MIXED, /* { u64 a; struct T __kptr *p1; struct no_such __kptr *p2; } */
	V_EIGHT, /* eight kptrs: Linux's most */
	V_NINE, /* nine kptrs */
};

/* the value struct's members ("a" and the kptrs) and size */
static uint32_t members(enum variant v)
{
	return v == V_NINE ? 10 : v == V_EIGHT ? 9 : v == V_INT_AT_4 || v == V_MIXED ? 3 : 2;
}

enum { T_INT = 1, T_U64, T_U32, T_TASK, T_TAG, T_PTR, T_VAL };

/* A BTF fd with int (1), u64 (2), u32 (3), the struct (4), its tag (5), a pointer (6) and the
 * value struct (7) of this variant. */
static int btf_fd(enum variant v)
{
	static uint8_t raw[24 + 4 * 512 + 1024];
	static struct blob b;
	union bpf_attr a;
	uint32_t nmem = members(v);

	blob_init(&b);
	t_int(&b, "int", 4, BTF_INT_SIGNED, 32);
	t_int(&b, "u64", 8, 0, 64);
	t_int(&b, "u32", 4, 0, 32);
	w(&b, str(&b, v == V_NO_TYPE ? "no_such_kernel_struct" : task_name));
	w(&b, INFO(BTF_KIND_STRUCT, 0, 0)), w(&b, 0);
	t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, v == V_REF ? "kptr_ref" : v == V_OTHER_TAG ? "user" :
							      "kptr"), T_TASK);
	t_ref(&b, BTF_KIND_PTR, 0, T_TAG);
	w(&b, str(&b, "val")), w(&b, INFO(BTF_KIND_STRUCT, 0, nmem));
	w(&b, v == V_INT_AT_4 ? 16 : 8 * nmem);
	if (v == V_INT_AT_4) {
		w(&b, str(&b, "a")), w(&b, T_U32), w(&b, 0);
		w(&b, str(&b, "b")), w(&b, T_U32), w(&b, 32);
		w(&b, str(&b, "p")), w(&b, T_PTR), w(&b, 64);
	} else {
		w(&b, str(&b, "a")), w(&b, T_U64), w(&b, 0);
		for (uint32_t i = 1; i < nmem; i++) {
			char n[4] = { 'p', (char)('0' + i), 0 }; /* p1..p9 */

			w(&b, str(&b, n)), w(&b, v == V_MIXED && i == 2 ? T_VAL + 3 : T_PTR);
			w(&b, 64 * i);
		}
	}
	if (v == V_MIXED) { /* T_VAL + 1..3: struct no_such, its kptr tag, a pointer */
		w(&b, str(&b, "no_such_kernel_struct")), w(&b, INFO(BTF_KIND_STRUCT, 0, 0)), w(&b, 0);
		t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, "kptr"), T_VAL + 1);
		t_ref(&b, BTF_KIND_PTR, 0, T_VAL + 2);
	}
	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)raw;
	a.btf_size = blob_build(&b, raw);
	return (int)bpf_a(BPF_BTF_LOAD, &a);
}

static int kmap_create(uint32_t type, enum variant v, uint32_t flags)
{
	union bpf_attr a;
	int btf = btf_fd(v), fd;

	if (btf < 0)
		return -1000 - errno;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = v == V_INT_AT_4 ? 16 : 8 * members(v);
	a.max_entries = 4;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = T_VAL;
	strcpy(a.map_name, "kptrs");
	fd = (int)bpf_a(BPF_MAP_CREATE, &a);
	if (fd < 0)
		fd = -errno;
	close(btf);
	return fd;
}

static int elem(int cmd, int fd, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	return bpf_a(cmd, &a) ? -errno : 0;
}

/* ---- programs ---- */

static char vlog[65536];

static int prog_load(uint32_t type, const struct bpf_insn *p, uint32_t n)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	vlog[0] = 0;
	a.prog_type = type;
	a.insns = (uintptr_t)p;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	a.log_buf = (uintptr_t)vlog;
	a.log_size = sizeof(vlog);
	a.log_level = 1;
	if (type == BPF_PROG_TYPE_SYSCALL)
		a.prog_flags = BPF_F_SLEEPABLE; /* Linux: "Syscall programs can only be sleepable" */
	fd = (int)bpf_a(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

static int run(int fd, uint32_t *retval)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (bpf_a(BPF_PROG_TEST_RUN, &a))
		return -errno;
	*retval = a.test.retval;
	return 0;
}

#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JNE_K(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define AND_K(d, i) INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define ADD_X(d, s) INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)

/* r0 = &value[0] of map, or return 0: 7 insns */
#define LOOKUP0(map)                                                                            \
	ST(BPF_W, 10, -4, 0), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, map),                        \
		CALL(BPF_FUNC_map_lookup_elem), JNE_K(0, 0, 1), EXIT_INSN

/* Load the program; it must be refused with err and a log holding msg. */
static void refused(const char *what, uint32_t type, const struct bpf_insn *p, uint32_t n,
		    int err, const char *msg)
{
	int fd = prog_load(type, p, n);

	if (fd >= 0)
		close(fd);
	CHECK(fd == err && strstr(vlog, msg), what, "%d (want %d), log: %s", fd, err,
	      strlen(vlog) > 600 ? vlog + strlen(vlog) - 600 : vlog);
}

static void map_checks(void)
{
	int fd;

	fd = kmap_create(BPF_MAP_TYPE_ARRAY, V_GOOD, 0);
	CHECK(fd >= 0, "array with a kptr in its value: created", "%d", fd);
	close(fd);
	fd = kmap_create(BPF_MAP_TYPE_HASH, V_GOOD, 0);
	CHECK(fd >= 0, "hash with a kptr in its value: created", "%d", fd);
	close(fd);
	fd = kmap_create(BPF_MAP_TYPE_PERCPU_HASH, V_GOOD, 0);
	CHECK(fd == -EOPNOTSUPP, "per-CPU hash with a kptr: EOPNOTSUPP", "%d", fd);
	fd = kmap_create(BPF_MAP_TYPE_ARRAY, V_GOOD, BPF_F_RDONLY_PROG);
	CHECK(fd == -EACCES, "kptr in a BPF_F_RDONLY_PROG array: EACCES", "%d", fd);
	fd = kmap_create(BPF_MAP_TYPE_ARRAY, V_GOOD, BPF_F_WRONLY_PROG);
	CHECK(fd == -EACCES, "kptr in a BPF_F_WRONLY_PROG array: EACCES", "%d", fd);
	/* values whose kptrs do not parse still make a map; bpf_kptr_xchg tells what it found */
	static const struct {
		enum variant v;
		const char *what, *msg;
	} bad[] = {
		{ V_NO_TYPE, "kptr to a struct the kernel lacks", "map 'kptrs' has no valid kptr" },
		{ V_REF, "kptr_ref to the thread struct (no destructor)", "map 'kptrs' has no valid kptr" },
		{ V_OTHER_TAG, "pointer tagged \"user\"", "map 'kptrs' has no valid kptr" },
		{ V_INT_AT_4, "a u32 member at offset 4 besides the kptr", "map 'kptrs' has no valid kptr" },
		{ V_MIXED, "a good kptr and one to a struct the kernel lacks",
		  "map 'kptrs' has no valid kptr" },
		{ V_EIGHT, "eight kptrs", "off=8 kptr isn't referenced kptr" },
		{ V_NINE, "nine kptrs", "map 'kptrs' has more than 8 kptr" },
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[160];

		fd = kmap_create(BPF_MAP_TYPE_ARRAY, bad[i].v, 0);
		snprintf(what, sizeof(what), "%s: map created", bad[i].what);
		if (!CHECK(fd >= 0, what, "%d", fd))
			continue;
		const struct bpf_insn xchg[] = { LOOKUP0(fd), MOV_X(1, 0), ADD_K(1, 8), MOV_K(2, 0),
						 CALL(BPF_FUNC_kptr_xchg), RET0 };

		snprintf(what, sizeof(what), "%s: bpf_kptr_xchg refused: %s", bad[i].what, bad[i].msg);
		refused(what, BPF_PROG_TYPE_SYSCALL, xchg, N_INSNS(xchg), -EACCES, bad[i].msg);
		close(fd);
	}
}

static void close_fds(int a, int b, int c)
{
	int fds[] = { a, b, c };

	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* *st: a program storing bpf_get_current_task_btf() in map's kptr (returns 1); *ld: one
 * returning 1 + the thread id read through it, or 1000 for NULL.  Fds or -errno. */
static void store_load_progs(int map, int *st, int *ld)
{
	const struct bpf_insn store[] = {
		LOOKUP0(map), MOV_X(6, 0), CALL(BPF_FUNC_get_current_task_btf), STX(BPF_DW, 6, 0, 8),
		MOV_K(0, 1), EXIT_INSN,
	};
	const struct bpf_insn load[] = {
		LOOKUP0(map), LDX(BPF_DW, 1, 0, 8), JNE_K(1, 0, 2), MOV_K(0, 1000), EXIT_INSN,
		LDX(BPF_W, 0, 1, (int16_t)tid_off), ADD_K(0, 1), EXIT_INSN,
	};

	*st = prog_load(BPF_PROG_TYPE_SYSCALL, store, N_INSNS(store));
	*ld = prog_load(BPF_PROG_TYPE_SYSCALL, load, N_INSNS(load));
}

/* Store the current task, then read its thread id back through the kptr; user space sees 0 */
static void store_load_checks(uint32_t type)
{
	int map = kmap_create(type, V_GOOD, 0), st, ld;
	uint64_t v[2] = { 0, 0 };
	uint32_t ret = 0;

	if (!CHECK(map >= 0, "map for the store and load programs", "%d", map))
		return;
	if (type == BPF_MAP_TYPE_HASH)
		elem(BPF_MAP_UPDATE_ELEM, map, 0, v);
	const char *kind = type == BPF_MAP_TYPE_HASH ? "hash" : "array";
	char what[160];

	store_load_progs(map, &st, &ld);
	snprintf(what, sizeof(what), "%s: program storing get_current_task_btf() in the kptr loads",
		 kind);
	CHECK(st >= 0, what, "%d", st);
	snprintf(what, sizeof(what), "%s: program reading the task's id through the kptr loads", kind);
	CHECK(ld >= 0, what, "%d log: %.600s", ld, vlog);
	if (st < 0 || ld < 0)
		goto out;
	CHECK(run(ld, &ret) == 0 && ret == 1000, "before any store the kptr is NULL", "ret %u", ret);
	CHECK(run(st, &ret) == 0 && ret == 1, "the store program ran", "ret %u", ret);
	CHECK(run(ld, &ret) == 0 && ret == (uint32_t)gettid() + 1,
	      "through the kptr: the thread id is gettid()", "ret %u, gettid %d", ret, (int)gettid());
	v[0] = v[1] = 0x5555;
	CHECK(elem(BPF_MAP_LOOKUP_ELEM, map, 0, v) == 0 && v[0] == 0 && v[1] == 0,
	      "user space reads the kptr field as 0", "%#llx %#llx", (unsigned long long)v[0],
	      (unsigned long long)v[1]);
	CHECK(run(ld, &ret) == 0 && ret == (uint32_t)gettid() + 1, "the kptr is still there after",
	      "ret %u", ret);
	v[0] = 7;
	v[1] = 0x1234;
	CHECK(elem(BPF_MAP_UPDATE_ELEM, map, 0, v) == 0, "user space updates the element", "%d",
	      errno);
	CHECK(run(ld, &ret) == 0 && ret == 1000, "after the update the kptr is NULL", "ret %u", ret);
	CHECK(elem(BPF_MAP_LOOKUP_ELEM, map, 0, v) == 0 && v[0] == 7 && v[1] == 0,
	      "the rest of the value is the update's", "%#llx %#llx", (unsigned long long)v[0],
	      (unsigned long long)v[1]);
out:
	close_fds(st, ld, map);
}

/* A per-CPU array: each CPU's value has its kptr; the syscalls show and write zeros there.
 * The store runs on one CPU (this thread is pinned to CPU 0), the others' stay NULL. */
static void percpu_checks(void)
{
	int map = kmap_create(BPF_MAP_TYPE_PERCPU_ARRAY, V_GOOD, 0), st, ld, ncpu;
	uint64_t v[2 * 64];
	uint32_t ret = 0;
	cpu_set_t set;

	ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (!CHECK(map >= 0 && ncpu > 0 && ncpu <= 64, "per-CPU array with a kptr", "%d, %d CPUs",
		   map, ncpu))
		return;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	store_load_progs(map, &st, &ld);
	if (!CHECK(st >= 0 && ld >= 0, "per-CPU array: store and load programs", "%d %d", st, ld))
		goto out;
	CHECK(run(st, &ret) == 0 && run(ld, &ret) == 0 && ret == (uint32_t)gettid() + 1,
	      "per-CPU array: the thread id through this CPU's kptr", "ret %u", ret);
	memset(v, 0x55, sizeof(v));
	int ok = elem(BPF_MAP_LOOKUP_ELEM, map, 0, v) == 0;

	for (int c = 0; c < ncpu; c++)
		ok = ok && v[2 * c] == 0 && v[2 * c + 1] == 0;
	CHECK(ok, "per-CPU array: user space reads every CPU's kptr as 0", "cpu0 %#llx %#llx",
	      (unsigned long long)v[0], (unsigned long long)v[1]);
	CHECK(run(ld, &ret) == 0 && ret == (uint32_t)gettid() + 1, "per-CPU array: still there",
	      "ret %u", ret);
	for (int c = 0; c < ncpu; c++)
		v[2 * c] = 3, v[2 * c + 1] = 0x1234;
	CHECK(elem(BPF_MAP_UPDATE_ELEM, map, 0, v) == 0, "per-CPU array: user space updates it",
	      "%d", errno);
	CHECK(run(ld, &ret) == 0 && ret == 1000, "per-CPU array: after the update the kptr is NULL",
	      "ret %u", ret);
out:
	close_fds(st, ld, map);
}

extern const char _binary_kptr_bpf_o_start[], _binary_kptr_bpf_o_end[];

/* kptr.bpf.c's program for this kernel's thread struct on 8 page faults of this thread */
static void clang_checks(void)
{
	const char *name = strcmp(task_name, "task") ? "kptr_lx" : "kptr_pk";
	struct bpf_object *obj = open_one_prog(_binary_kptr_bpf_o_start, _binary_kptr_bpf_o_end, name);
	struct bpf_program *prog;
	struct bpf_map *out, *bss;
	uint64_t o[3] = { 0, 0, 0 }, v = 1;
	uint32_t k = 0;
	int err;

	if (!CHECK(obj, "bpf_object__open_mem(kptr.bpf.o)", "errno %d", errno))
		return;
	prog = bpf_object__find_program_by_name(obj, name);
	vlog[0] = 0;
	bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "clang-built: a global __kptr (.data.* map) and the program load", "err %d: %s",
		   err, strlen(vlog) > 600 ? vlog + strlen(vlog) - 600 : vlog))
		goto out;
	EXPECT_OK(run_on_faults(prog, 8), "clang-built: the program on 8 page faults of this thread");
	out = bpf_object__find_map_by_name(obj, "out");
	bss = bpf_object__find_map_by_name(obj, strcmp(task_name, "task") ? ".data.lx" : ".data.pk");
	for (k = 0; k < 3; k++)
		bpf_map__lookup_elem(out, &k, sizeof(k), &o[k], sizeof(o[k]), 0);
	k = 0;
	bpf_map__lookup_elem(bss, &k, sizeof(k), &v, sizeof(v), 0);
	CHECK(o[0] >= 8 && o[2] == 1, "clang-built: the kptr was NULL on the first run only",
	      "%llu runs, %llu NULL", (unsigned long long)o[0], (unsigned long long)o[2]);
	CHECK(o[1] == (uint64_t)gettid(), "clang-built: the thread id through the kptr is gettid()",
	      "%llu, gettid %d", (unsigned long long)o[1], (int)gettid());
	CHECK(v == 0, "clang-built: user space reads the global kptr as 0", "%#llx",
	      (unsigned long long)v);
out:
	bpf_object__close(obj);
}

static void refusal_checks(void)
{
	int map = kmap_create(BPF_MAP_TYPE_ARRAY, V_GOOD, 0);
	char msg[200];

	if (!CHECK(map >= 0, "map for the refusals", "%d", map))
		return;
	const struct bpf_insn no_null[] = { LOOKUP0(map), LDX(BPF_DW, 1, 0, 8), LDX(BPF_W, 0, 1, 0),
					    EXIT_INSN };
	refused("the loaded kptr read before its NULL check", BPF_PROG_TYPE_SYSCALL, no_null,
		N_INSNS(no_null), -EACCES, "R1 invalid mem access 'untrusted_ptr_or_null_'");
	const struct bpf_insn scalar[] = { LOOKUP0(map), MOV_K(1, 5), STX(BPF_DW, 0, 1, 8), RET0 };
	snprintf(msg, sizeof(msg), "invalid kptr access, R1 type=scalar expected=ptr_%s or "
		 "untrusted_ptr_%s", task_name, task_name);
	refused("a scalar stored in the kptr", BPF_PROG_TYPE_SYSCALL, scalar, N_INSNS(scalar),
		-EACCES, msg);
	const struct bpf_insn middle[] = { LOOKUP0(map), MOV_X(6, 0),
					   CALL(BPF_FUNC_get_current_task_btf),
					   ADD_K(0, tid_off), STX(BPF_DW, 6, 0, 8), RET0 };
	snprintf(msg, sizeof(msg), "invalid kptr access, R0 type=ptr_%s expected=ptr_%s or "
		 "untrusted_ptr_%s", task_name, task_name, task_name);
	refused("&task->tid (a pointer into the task) stored in the kptr", BPF_PROG_TYPE_SYSCALL, middle, N_INSNS(middle),
		-EACCES, msg);
	const struct bpf_insn st1[] = { LOOKUP0(map), ST(BPF_DW, 0, 8, 1), RET0 };
	refused("BPF_ST of 1 in the kptr", BPF_PROG_TYPE_SYSCALL, st1, N_INSNS(st1), -EACCES,
		"BPF_ST imm must be 0 when storing to kptr at off=8");
	const struct bpf_insn st0[] = { LOOKUP0(map), ST(BPF_DW, 0, 8, 0), LDX(BPF_DW, 1, 0, 8),
					STX(BPF_DW, 0, 1, 8), RET0 };
	int fd = prog_load(BPF_PROG_TYPE_SYSCALL, st0, N_INSNS(st0));

	CHECK(fd >= 0, "BPF_ST of 0, and the loaded kptr stored back: accepted", "%d log: %.600s",
	      fd, vlog);
	if (fd >= 0)
		close(fd);
	const struct bpf_insn w4[] = { LOOKUP0(map), LDX(BPF_W, 1, 0, 8), RET0 };
	refused("a 4-byte load of the kptr", BPF_PROG_TYPE_SYSCALL, w4, N_INSNS(w4), -EACCES,
		"kptr access size must be BPF_DW");
	const struct bpf_insn mis[] = { LOOKUP0(map), LDX(BPF_W, 1, 0, 12), RET0 };
	refused("a load at offset 12, inside the kptr", BPF_PROG_TYPE_SYSCALL, mis, N_INSNS(mis),
		-EACCES, "kptr access misaligned expected=8 off=12");
	const struct bpf_insn atomic[] = { LOOKUP0(map), MOV_K(1, 1),
					   INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 8, BPF_ADD), RET0 };
	refused("an atomic add on the kptr", BPF_PROG_TYPE_SYSCALL, atomic, N_INSNS(atomic),
		-EACCES, "kptr in map can only be accessed using BPF_MEM instruction mode");
	const struct bpf_insn var[] = { LOOKUP0(map), LDX(BPF_DW, 1, 0, 0), AND_K(1, 8),
					ADD_X(0, 1), LDX(BPF_DW, 1, 0, 0), RET0 };
	refused("a load at a variable offset over the kptr", BPF_PROG_TYPE_SYSCALL, var,
		N_INSNS(var), -EACCES, "kptr access cannot have variable offset");
	const struct bpf_insn helper[] = { LOOKUP0(map), MOV_X(1, 0), MOV_K(2, 16), MOV_K(3, 0),
					   CALL(BPF_FUNC_probe_read_kernel), RET0 };
	refused("bpf_probe_read_kernel writing over the kptr", BPF_PROG_TYPE_SYSCALL, helper,
		N_INSNS(helper), -EACCES, "kptr cannot be accessed indirectly by helper");
	const struct bpf_insn xchg[] = { LOOKUP0(map), MOV_X(1, 0), ADD_K(1, 8), MOV_K(2, 0),
					 CALL(BPF_FUNC_kptr_xchg), RET0 };
	refused("bpf_kptr_xchg on an unreferenced kptr", BPF_PROG_TYPE_SYSCALL, xchg, N_INSNS(xchg),
		-EACCES, "off=8 kptr isn't referenced kptr");
	const struct bpf_insn xchg0[] = { LOOKUP0(map), MOV_X(1, 0), MOV_K(2, 0),
					  CALL(BPF_FUNC_kptr_xchg), RET0 };
	refused("bpf_kptr_xchg at offset 0", BPF_PROG_TYPE_SYSCALL, xchg0, N_INSNS(xchg0), -EACCES,
		"off=0 doesn't point to kptr");
	const struct bpf_insn vma[] = { LOOKUP0(map), LDX(BPF_DW, 1, 0, 8), JNE_K(1, 0, 2), RET0,
					MOV_K(2, 0), MOV_K(3, 0), MOV_K(4, 0), MOV_K(5, 0),
					CALL(BPF_FUNC_find_vma), RET0 };
	refused("the NULL-checked kptr given to bpf_find_vma", BPF_PROG_TYPE_PERF_EVENT, vma,
		N_INSNS(vma), -EACCES, "R1 type=untrusted_ptr_ expected=ptr_");
	close(map);
}

int main(void)
{
	tap_init("t_bpf_kptr", 60);
	libbpf_set_print(faults_quiet);
	if (!CHECK(find_task() == 0, "the kernel's BTF has its thread struct with tid/pid",
		   "%s %d", task_name ? task_name : "-", tid_off))
		return tap_done();
	map_checks();
	store_load_checks(BPF_MAP_TYPE_ARRAY);
	store_load_checks(BPF_MAP_TYPE_HASH);
	percpu_checks();
	clang_checks();
	refusal_checks();
	return tap_done();
}
