/* t_bpf_pcpu: typed kernel symbols and per-CPU variables, as libbpf's `extern ... __ksym` uses
 * them (tests/user/bpf/pcpu.bpf.c, Debian's libbpf 1.1).
 * The kernel's BTF (/sys/kernel/btf/vmlinux) has a DATASEC ".data..percpu" listing VARs
 * bpf_prog_active (int) and kstat (struct kernel_stat), which /proc/kallsyms also names; libbpf
 * turns each extern into lddw BPF_PSEUDO_BTF_ID with the VAR's id.  A perf_event program (on
 * this thread's page faults) reads *bpf_this_cpu_ptr(&bpf_prog_active) == 1 (its own run, as
 * Linux's bpf_overflow_handler counts it) and a non-zero this_cpu_ptr(&kstat)->irqs_sum;
 * bpf_per_cpu_ptr gives an instance per possible CPU (as many as /sys/devices/system/cpu/
 * possible lists, each with interrupts counted), this CPU's being this_cpu_ptr's, and NULL at
 * the CPU count and at 0xffffffff.
 * The kernel resolves a ksym through its symbol table (kallsyms_lookup_name): Debian's 6.1
 * arm64 kernel is built without CONFIG_KALLSYMS_ALL, so its /proc/kallsyms names no data symbol
 * and every load above is ENOENT "ldimm64 failed to find the address for kernel symbol
 * 'bpf_prog_active'." (checked there instead); perfkernel's table has the data symbols
 * (KALLSYMS_ALL's behaviour), so the programs load and run.
 * Refused as Linux 6.1's verifier refuses them (EACCES): a load through the per-CPU variable
 * itself ("access percpu memory"), a store into this_cpu_ptr's int ("cannot write into
 * rdonly_mem"), per_cpu_ptr's result used before a NULL check ("rdonly_mem_or_null"), a read
 * past the int ("invalid access to memory, mem_size=4 off=4 size=4"), this_cpu_ptr(ctx)
 * ("R1 type=ctx expected=percpu_ptr_", which Linux's log shows too).  Raw lddw
 * BPF_PSEUDO_BTF_ID (check_pseudo_btf_id): an
 * id past the last type is ENOENT "ldimm64 insn specifies invalid btf_id", the id of int EINVAL
 * "isn't KIND_VAR", a BTF fd that is not one EINVAL "invalid module BTF object FD specified.",
 * the VAR's id loads.
 * bpf_snprintf_btf (program "show", on a page fault) of bytes this test puts in a map value,
 * shown as uapi types both kernels' BTF describe alike: its text and return value are Linux
 * 6.1's, byte for byte (the SHOW_* strings below were printed by Linux under refvm.sh), for a
 * struct of ints under each BTF_F_* flag, bitfields and signed ints (struct bpf_insn), an enum
 * by name and by number, a char array (struct bpf_map_info), a nested typedef'd struct with an
 * array (struct bpf_perf_event_data), raw and NULL pointers (struct sigaction), unions (struct
 * perf_event_attr), a VAR; a hashed pointer is 0x00000000 and 8 hex digits; truncation
 * returns the whole length with str_size - 1 bytes and a NUL; flags 16, btf_ptr_size 8, type
 * id 0 and a DATASEC are -EINVAL, a type id past the last or >= 2^31 -ENOENT, an unmapped
 * address -EFAULT.
 * Passes on Linux 6.1 (refvm.sh --smp 2, JIT on and off: 43 checks, the ksym ones as the
 * ENOENT above), 2026-12-01; here 52 checks.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"
#include "bpf_insn.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf_perf_event.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

extern const char _binary_pcpu_bpf_o_start[], _binary_pcpu_bpf_o_end[];

static char vlog[65536];
static int have_ksyms; /* /proc/kallsyms names the per-CPU variables (CONFIG_KALLSYMS_ALL) */

#define NO_ADDR "ldimm64 failed to find the address for kernel symbol 'bpf_prog_active'."

/* The count of possible CPUs, from /sys/devices/system/cpu/possible ("0" or "0-N") */
static int possible_cpus(void)
{
	char buf[64] = { 0 };
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY), lo = 0, hi = -1;

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = 0;
	close(fd);
	int n = sscanf(buf, "%d-%d", &lo, &hi);

	return n == 2 ? hi + 1 : n == 1 ? lo + 1 : -1;
}

/* /proc/kallsyms has a line for name, at a non-zero address */
static int in_kallsyms(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a = 0;
	char sym[200], t;
	int n = 0;

	while (f && (n = fscanf(f, "%llx %c %199s%*[^\n]", &a, &t, sym)) == 3)
		if (!strcmp(sym, name))
			break;
	if (f)
		fclose(f);
	return n == 3 && a;
}

static void check_btf(struct btf *btf)
{
	int sec = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const char *names[] = { "bpf_prog_active", "kstat" };

	if (!CHECK(sec > 0, "the kernel's BTF has DATASEC .data..percpu", "%d", sec))
		return;
	const struct btf_type *t = btf__type_by_id(btf, sec);
	const struct btf_var_secinfo *v = btf_var_secinfos(t);

	for (int k = 0; k < 2; k++) {
		int id = btf__find_by_name_kind(btf, names[k], BTF_KIND_VAR), in = 0;
		char what[128];

		for (int i = 0; i < btf_vlen(t); i++)
			in |= (int)v[i].type == id;
		snprintf(what, sizeof(what), "VAR %s in .data..percpu", names[k]);
		CHECK(id > 0 && in, what, "id %d in datasec %d", id, in);
	}
	int st = btf__find_by_name_kind(btf, "kernel_stat", BTF_KIND_STRUCT);
	const struct btf_type *ks = st > 0 ? btf__type_by_id(btf, st) : NULL;
	const struct btf_member *m = ks ? btf_members(ks) : NULL;

	CHECK(m && !strcmp(btf__name_by_offset(btf, m->name_off), "irqs_sum") && !m->offset,
	      "struct kernel_stat begins with irqs_sum", "struct id %d", st);
}

static void check_read(void)
{
	struct bpf_object *obj =
		open_one_prog(_binary_pcpu_bpf_o_start, _binary_pcpu_bpf_o_end, "pcpu_read");
	struct bpf_program *prog;
	struct bpf_map *map;
	uint64_t v[8] = { 0 };
	int err, ncpu = possible_cpus();

	if (!CHECK(obj, "bpf_object__open_mem(pcpu.bpf.o)", "errno %d", errno))
		return;
	prog = bpf_object__find_program_by_name(obj, "pcpu_read");
	vlog[0] = 0;
	bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
	err = bpf_object__load(obj);
	if (!have_ksyms) {
		CHECK(err == -ENOENT && strstr(vlog, NO_ADDR),
		      "load pcpu_read without the symbols in kallsyms: ENOENT, failed to find the "
		      "address", "err %d: %.600s", err, vlog);
		bpf_object__close(obj);
		return;
	}
	if (!CHECK(!err, "load pcpu_read (__ksym per-CPU variables, this_cpu_ptr, per_cpu_ptr)",
		   "err %d: %.2000s", err, vlog)) {
		bpf_object__close(obj);
		return;
	}
	map = bpf_object__find_map_by_name(obj, "out");
	EXPECT_OK(run_on_faults(prog, 8), "pcpu_read on 8 page faults of this thread");
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(map, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	CHECK(v[1] == 101, "*this_cpu_ptr(&bpf_prog_active) is 1 in a perf_event program",
	      "%lld", (long long)v[1] - 100);
	CHECK(v[2] == 1, "this_cpu_ptr(&kstat)->irqs_sum is not 0", "%llu",
	      (unsigned long long)v[2]);
	CHECK(v[3] == 1, "this_cpu_ptr is per_cpu_ptr of bpf_get_smp_processor_id()", "%llu",
	      (unsigned long long)v[3]);
	CHECK(ncpu > 0 && v[4] == (uint64_t)ncpu,
	      "per_cpu_ptr gives one instance per possible CPU, then NULL", "%llu, possible %d",
	      (unsigned long long)v[4], ncpu);
	CHECK(v[5] == 1, "every CPU's kstat.irqs_sum is not 0", "%llu", (unsigned long long)v[5]);
	CHECK(v[6] == 1, "per_cpu_ptr at the CPU count and at 0xffffffff: NULL", "%llu",
	      (unsigned long long)v[6]);
	CHECK(v[7] == 1, "another CPU's instance is another address", "%llu",
	      (unsigned long long)v[7]);
	bpf_object__close(obj);
}

static void refused(const char *name, const char *msg, const char *what)
{
	int err = load_one_prog(_binary_pcpu_bpf_o_start, _binary_pcpu_bpf_o_end, name, vlog,
				sizeof(vlog));

	if (have_ksyms || !strcmp(name, "pcpu_ctx_arg")) /* the one without a ksym */
		CHECK(err == -EACCES && strstr(vlog, msg), what, "err %d log: %.600s", err, vlog);
	else
		CHECK(err == -ENOENT && strstr(vlog, NO_ADDR), name, "err %d log: %.600s", err, vlog);
}

static void check_refusals(void)
{
	refused("pcpu_direct", "R1 is ptr_int access percpu memory: off=0",
		"a load through the per-CPU variable: EACCES, access percpu memory");
	refused("pcpu_write", "cannot write into rdonly_mem",
		"a store into this_cpu_ptr's int: EACCES, cannot write into rdonly_mem");
	refused("pcpu_nullable", "invalid mem access 'rdonly_mem_or_null'",
		"per_cpu_ptr's result before a NULL check: EACCES, rdonly_mem_or_null");
	refused("pcpu_past_end", "invalid access to memory, mem_size=4 off=4 size=4",
		"a read past this_cpu_ptr's int: EACCES, mem_size=4 off=4 size=4");
	refused("pcpu_ctx_arg", "R1 type=ctx expected=percpu_ptr_",
		"this_cpu_ptr(ctx): EACCES, R1 type=ctx expected=percpu_ptr_");
}

/* lddw BPF_PSEUDO_BTF_ID id (BTF fd fd) into r1; r0 = 0: the load's fd or -errno */
static int load_btf_id(int32_t id, int32_t fd)
{
	struct bpf_insn insns[] = {
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_BTF_ID, 0, id), INSN(0, 0, 0, 0, fd),
		RET0,
	};
	int pfd;

	vlog[0] = 0;
	pfd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, insns, N_INSNS(insns), vlog, sizeof(vlog));
	if (pfd < 0)
		return -errno;
	close(pfd);
	return 0;
}

/* xlated_prog_insns of the lddw BPF_PSEUDO_BTF_ID program: a plain lddw of the address */
static void check_xlated(int32_t var)
{
	struct bpf_insn insns[] = {
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_BTF_ID, 0, var), INSN(0, 0, 0, 0, 0),
		RET0,
	};
	struct bpf_insn x[8];
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	unsigned long long want = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	char sym[200], t;
	unsigned long long a;
	int fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, insns, N_INSNS(insns), vlog, sizeof(vlog));

	while (f && fscanf(f, "%llx %c %199s%*[^\n]", &a, &t, sym) == 3)
		if (!strcmp(sym, "bpf_prog_active"))
			want = a;
	if (f)
		fclose(f);
	memset(&info, 0, sizeof(info));
	memset(x, 0, sizeof(x));
	info.xlated_prog_insns = (uintptr_t)x;
	info.xlated_prog_len = sizeof(x);
	CHECK(fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) && x[0].src_reg == 0 &&
		      ((unsigned long long)(uint32_t)x[1].imm << 32 | (uint32_t)x[0].imm) == want,
	      "xlated: the ksym's lddw is the constant address /proc/kallsyms gives",
	      "fd %d src_reg %u %#x %#x, kallsyms %#llx", fd, x[0].src_reg, x[1].imm, x[0].imm,
	      want);
	if (fd >= 0)
		close(fd);
}

static void check_raw(struct btf *btf)
{
	int var = btf__find_by_name_kind(btf, "bpf_prog_active", BTF_KIND_VAR);
	int int_id = btf__find_by_name_kind(btf, "int", BTF_KIND_INT);
	int n = (int)btf__type_cnt(btf), err;

	err = load_btf_id(var, 0);
	if (have_ksyms) {
		CHECK(err == 0, "lddw BPF_PSEUDO_BTF_ID of VAR bpf_prog_active loads", "%d: %.600s",
		      err, vlog);
		check_xlated(var);
	}
	else
		CHECK(err == -ENOENT && strstr(vlog, NO_ADDR),
		      "lddw BPF_PSEUDO_BTF_ID of VAR bpf_prog_active, not in kallsyms: ENOENT",
		      "%d: %.600s", err, vlog);
	err = load_btf_id(n + 1000, 0);
	CHECK(err == -ENOENT && strstr(vlog, "ldimm64 insn specifies invalid btf_id"),
	      "lddw BPF_PSEUDO_BTF_ID past the last type: ENOENT, invalid btf_id", "%d: %.600s",
	      err, vlog);
	err = load_btf_id(int_id, 0);
	CHECK(err == -EINVAL && strstr(vlog, "in ldimm64 isn't KIND_VAR"),
	      "lddw BPF_PSEUDO_BTF_ID of int: EINVAL, isn't KIND_VAR", "%d: %.600s", err, vlog);
	err = load_btf_id(var, 1); /* stdout: no BTF */
	CHECK(err == -EINVAL && strstr(vlog, "invalid module BTF object FD specified."),
	      "lddw BPF_PSEUDO_BTF_ID with a BTF fd that is none: EINVAL", "%d: %.600s", err, vlog);
}

/* ---- bpf_snprintf_btf ---- */

/* Linux 6.1's text (refvm.sh), the same types here: uapi structs both kernels describe alike */
#define SHOW_HDR_0 \
	"(struct perf_event_header){\n .type = (__u32)9,\n .misc = (__u16)2,\n}" \
	"\n"
#define SHOW_HDR_C "(struct perf_event_header){.type = (__u32)9,.misc = (__u16)2,}"
#define SHOW_HDR_N "{\n 9,\n 2,\n}\n"
#define SHOW_HDR_Z \
	"(struct perf_event_header){\n .type = (__u32)9,\n .misc = (__u16)2,\n " \
	".size = (__u16)0,\n}\n"
#define SHOW_HDR_ALL "{9,2,0,}"
#define SHOW_INSN \
	"(struct bpf_insn){.code = (__u8)133,.dst_reg = (__u8)0x1,.src_reg = (_" \
	"_u8)0x2,.off = (__s16)-3,.imm = (__s32)7,}"
#define SHOW_ENUM "(enum bpf_map_type)BPF_MAP_TYPE_ARRAY\n"
#define SHOW_ENUM99 "(enum bpf_map_type)99\n"
#define SHOW_MAPINFO \
	"(struct bpf_map_info){.type = (__u32)2,.id = (__u32)5,.key_size = (__u" \
	"32)4,.name = (char[])['h','e','l','l','o',],}"
#define SHOW_MAPINFO_Z \
	"(struct bpf_map_info){.type = (__u32)2,.id = (__u32)5,.key_size = (__u" \
	"32)4,.value_size = (__u32)0,.max_entries = (__u32)0,.map_flags = (__u3" \
	"2)0,.name = (char[])['h','e','l','l','o',],.ifindex = (__u32)0,.btf_vm" \
	"linux_value_type_id = (__u32)0,.netns_dev = (__u64)0,.netns_ino = (__u" \
	"64)0,.btf_id = (__u32)0,.btf_key_type_id = (__u32)0,.btf_value_type_id" \
	" = (__u32)0,.map_extra = (__u64)0,}"
#define SHOW_PERFDATA \
	"(struct bpf_perf_event_data){\n .regs = (bpf_user_pt_regs_t){\n  .regs" \
	" = (__u64[])[\n   1,\n   3,\n  ],\n },\n .sample_period = (__u64)100," \
	"\n}\n"
#define SHOW_SIGACTION \
	"(struct sigaction){.sa_handler = (__sighandler_t *)0x0000000000001234," \
	".sa_flags = (long unsigned int)67108864,.sa_mask = (sigset_t){.sig = (" \
	"long unsigned int[])[5,],},}"
#define SHOW_ATTR \
	"(struct perf_event_attr){.type = (__u32)1,.size = (__u32)128,.config =" \
	" (__u64)2,(union){.sample_period = (__u64)4000,.sample_freq = (__u64)4" \
	"000,},.disabled = (__u64)0x1,.exclude_kernel = (__u64)0x1,(union){.wak" \
	"eup_events = (__u32)3,.wakeup_watermark = (__u32)3,},}"
#define SHOW_VAR "(int)2\n"
#define SHOW_SIGACTION_0 \
	"(struct sigaction){.sa_handler = (__sighandler_t *)0x0000000000000000," \
	".sa_flags = (long unsigned int)0,.sa_restorer = (__sigrestore_t *)0x000" \
	"0000000000000,.sa_mask = (sigset_t){.sig = (long unsigned int[])[0,],},}"

struct show_in {
	uint32_t type_id, str_size;
	uint64_t flags;
	uint64_t addr;
	uint32_t ptr_size, pad;
	uint64_t data[64];
};
struct show_out {
	int64_t ret;
	char str[2048];
};

static struct bpf_object *show_obj;
static struct bpf_program *show_prog;
static struct bpf_map *show_inmap, *show_outmap;
static struct btf *kbtf;

/* The kernel's type id of name (kind), or 0 */
static uint32_t kid(const char *name, int kind)
{
	int id = btf__find_by_name_kind(kbtf, name, kind);

	return id > 0 ? (uint32_t)id : 0;
}

/* Run show with in; out back */
static int show_run(struct show_in *in, struct show_out *out)
{
	uint32_t k = 0;

	memset(out, 0x7e, sizeof(*out));
	out->ret = -1000;
	bpf_map__update_elem(show_outmap, &k, sizeof(k), out, sizeof(*out), 0);
	if (bpf_map__update_elem(show_inmap, &k, sizeof(k), in, sizeof(*in), 0))
		return -errno;
	int err = run_on_faults(show_prog, 1);

	bpf_map__lookup_elem(show_outmap, &k, sizeof(k), out, sizeof(*out), 0);
	return err;
}

/* "..." with \n as \\n, for a FAIL line */
static const char *esc(const char *s, size_t max)
{
	static char buf[2][2400];
	static int w;
	char *b = buf[w ^= 1];
	size_t o = 0;

	for (size_t i = 0; s[i] && i < max && o + 3 < sizeof(buf[0]); i++) {
		if (s[i] == '\n') {
			b[o++] = '\\';
			b[o++] = 'n';
		} else {
			b[o++] = s[i];
		}
	}
	b[o] = 0;
	return b;
}

/* Show n bytes of data as the kernel type id with flags in str_size bytes: the text and the
 * return value must be want (want NULL: the return is want_ret, a negative errno) */
static void show_check(const char *what, uint32_t id, uint64_t flags, const void *data, size_t n,
		       uint32_t str_size, const char *want, long want_ret)
{
	struct show_in in;
	struct show_out out;
	int err;

	memset(&in, 0, sizeof(in));
	in.type_id = id;
	in.str_size = str_size;
	in.flags = flags;
	in.ptr_size = 16;
	if (data)
		memcpy(in.data, data, n);
	err = show_run(&in, &out);
	if (!want) {
		CHECK(!err && out.ret == want_ret, what, "ret %lld (run %d)", (long long)out.ret, err);
		return;
	}
	long full = (long)strlen(want);
	int fits = (uint32_t)full < str_size;

	CHECK(!err && out.ret == full &&
		      !strncmp(out.str, want, fits ? (size_t)full + 1 : str_size - 1) &&
		      (fits || !out.str[str_size - 1]),
	      what, "ret %lld want %ld: \"%s\" want \"%s\"", (long long)out.ret, full,
	      esc(out.str, str_size), esc(want, (size_t)-1));
}

/* A pointer without BTF_F_PTR_RAW: "0x" and 16 hex digits, the first 8 zero (a 32-bit hash),
 * not the address; the same address hashes the same way */
static void check_hashed(uint32_t id)
{
	struct show_in in = { .type_id = id, .str_size = 2048, .flags = BTF_F_COMPACT,
			      .ptr_size = 16, .data = { 0x12345678 } };
	struct show_out out, again;
	unsigned long long h = 0;
	const char *p;
	int n = 0;

	show_run(&in, &out);
	show_run(&in, &again);
	p = strstr(out.str, ".sa_handler = (__sighandler_t *)0x00000000");
	CHECK(out.ret > 0 && p && sscanf(p + 34, "%16llx%n", &h, &n) == 1 && n == 16 &&
		      h != 0x12345678 && !strcmp(out.str, again.str),
	      "a pointer without BTF_F_PTR_RAW: 0x00000000 and a 32-bit hash, stable",
	      "\"%s\" then \"%s\"", out.str, again.str);
}

static void check_show(void)
{
	struct perf_event_header h = { .type = 9, .misc = 2 };
	struct bpf_insn insn = { .code = 0x85, .dst_reg = 1, .src_reg = 2, .off = -3, .imm = 7 };
	struct bpf_map_info mi = { .type = 2, .id = 5, .key_size = 4, .name = "hello" };
	struct perf_event_attr pa = { .type = 1, .size = 128, .config = 2, .sample_period = 4000,
				      .disabled = 1, .exclude_kernel = 1, .wakeup_events = 3 };
	struct bpf_perf_event_data pd = { .sample_period = 100 };
	uint64_t sa[4] = { 0x1234, 0x4000000, 0, 0x5 }; /* handler, flags, restorer, mask */
	uint32_t map_type = 2, bad_type = 99, eh = kid("perf_event_header", BTF_KIND_STRUCT);
	int err;

	show_obj = open_one_prog(_binary_pcpu_bpf_o_start, _binary_pcpu_bpf_o_end, "show");
	if (!CHECK(show_obj, "bpf_object__open_mem(pcpu.bpf.o) for show", "errno %d", errno))
		return;
	show_prog = bpf_object__find_program_by_name(show_obj, "show");
	vlog[0] = 0;
	bpf_program__set_log_buf(show_prog, vlog, sizeof(vlog));
	err = bpf_object__load(show_obj);
	if (err)
		printf("%s", vlog + (strlen(vlog) > 3000 ? strlen(vlog) - 3000 : 0));
	if (!CHECK(!err, "load show (bpf_snprintf_btf)", "err %d: ...%s", err,
		   vlog + (strlen(vlog) > 700 ? strlen(vlog) - 700 : 0)))
		goto out;
	show_inmap = bpf_object__find_map_by_name(show_obj, "show_in");
	show_outmap = bpf_object__find_map_by_name(show_obj, "show_out");
	pd.regs.regs[0] = 1;
	pd.regs.regs[2] = 3;

	/* a struct of ints, each flag */
	show_check("perf_event_header, flags 0", eh, 0, &h, sizeof(h), 2048,
		   SHOW_HDR_0, 0);
	show_check("perf_event_header, BTF_F_COMPACT", eh, BTF_F_COMPACT, &h, sizeof(h), 2048,
		   SHOW_HDR_C, 0);
	show_check("perf_event_header, BTF_F_NONAME", eh, BTF_F_NONAME, &h, sizeof(h), 2048,
		   SHOW_HDR_N, 0);
	show_check("perf_event_header, BTF_F_ZERO", eh, BTF_F_ZERO, &h, sizeof(h), 2048,
		   SHOW_HDR_Z, 0);
	show_check("perf_event_header, all flags", eh, 15, &h, sizeof(h), 2048, SHOW_HDR_ALL, 0);
	/* truncation: the length of the whole text, str_size - 1 bytes of it and a NUL */
	show_check("perf_event_header in 10 bytes: the whole length, 9 bytes", eh, BTF_F_COMPACT,
		   &h, sizeof(h), 10, SHOW_HDR_C, 0);
	show_check("perf_event_header in 1 byte", eh, BTF_F_COMPACT, &h, sizeof(h), 1, SHOW_HDR_C,
		   0);
	/* bitfields and signed ints */
	show_check("bpf_insn (bitfields)", kid("bpf_insn", BTF_KIND_STRUCT), BTF_F_COMPACT, &insn,
		   sizeof(insn), 2048, SHOW_INSN, 0);
	/* enums */
	show_check("enum bpf_map_type 2", kid("bpf_map_type", BTF_KIND_ENUM), 0, &map_type, 4, 2048,
		   SHOW_ENUM, 0);
	show_check("enum bpf_map_type 99 (no enumerator)", kid("bpf_map_type", BTF_KIND_ENUM), 0,
		   &bad_type, 4, 2048, SHOW_ENUM99, 0);
	/* a char array among zeros */
	show_check("bpf_map_info (char array)", kid("bpf_map_info", BTF_KIND_STRUCT), BTF_F_COMPACT,
		   &mi, sizeof(mi), 2048, SHOW_MAPINFO, 0);
	show_check("bpf_map_info, BTF_F_ZERO", kid("bpf_map_info", BTF_KIND_STRUCT),
		   BTF_F_COMPACT | BTF_F_ZERO, &mi, sizeof(mi), 2048, SHOW_MAPINFO_Z, 0);
	/* a nested struct (a typedef of one) holding an array */
	show_check("bpf_perf_event_data (nested, array)",
		   kid("bpf_perf_event_data", BTF_KIND_STRUCT), 0, &pd, sizeof(pd), 2048,
		   SHOW_PERFDATA, 0);
	/* pointers (raw), a typedef'd anonymous struct */
	show_check("sigaction, BTF_F_PTR_RAW", kid("sigaction", BTF_KIND_STRUCT),
		   BTF_F_COMPACT | BTF_F_PTR_RAW, sa, sizeof(sa), 2048, SHOW_SIGACTION, 0);
	/* NULL pointers, hashed or not, are 0 (BTF_F_ZERO shows them) */
	memset(sa, 0, sizeof(sa));
	show_check("sigaction of zeros, BTF_F_ZERO", kid("sigaction", BTF_KIND_STRUCT),
		   BTF_F_COMPACT | BTF_F_ZERO, sa, sizeof(sa), 2048, SHOW_SIGACTION_0, 0);
	check_hashed(kid("sigaction", BTF_KIND_STRUCT));
	/* unions and bitfields */
	show_check("perf_event_attr (unions, bitfields)", kid("perf_event_attr", BTF_KIND_STRUCT),
		   BTF_F_COMPACT, &pa, sizeof(pa), 2048, SHOW_ATTR, 0);
	/* a VAR shows its type's value */
	show_check("VAR bpf_prog_active", kid("bpf_prog_active", BTF_KIND_VAR), 0, &map_type, 4,
		   2048, SHOW_VAR, 0);
	/* refusals */
	show_check("DATASEC .data..percpu: -EINVAL", kid(".data..percpu", BTF_KIND_DATASEC), 0, &h,
		   sizeof(h), 2048, NULL, -EINVAL);
	show_check("flags 16: -EINVAL", eh, 16, &h, sizeof(h), 2048, NULL, -EINVAL);
	show_check("type id 0: -EINVAL", 0, 0, &h, sizeof(h), 2048, NULL, -EINVAL);
	show_check("type id past the last: -ENOENT", (uint32_t)btf__type_cnt(kbtf) + 5, 0, &h,
		   sizeof(h), 2048, NULL, -ENOENT);
	show_check("type id 0x80000000: -ENOENT", 0x80000000u, 0, &h, sizeof(h), 2048, NULL,
		   -ENOENT);
	{
		struct show_in in = { .type_id = eh, .str_size = 64, .ptr_size = 8 };
		struct show_out out;

		show_run(&in, &out);
		CHECK(out.ret == -EINVAL, "btf_ptr_size 8: -EINVAL", "%lld", (long long)out.ret);
		in.ptr_size = 16;
		in.addr = 8;
		show_run(&in, &out);
		CHECK(out.ret == -EFAULT, "an unmapped address: -EFAULT", "%lld",
		      (long long)out.ret);
	}
out:
	bpf_object__close(show_obj);
}

int main(void)
{
	struct btf *btf;

	tap_init("t_bpf_pcpu", 60);
	libbpf_set_print(faults_quiet);
	btf = btf__load_vmlinux_btf();
	if (!CHECK(btf, "btf__load_vmlinux_btf", "errno %d", errno))
		return tap_done();
	have_ksyms = in_kallsyms("bpf_prog_active") && in_kallsyms("kstat");
	printf("# /proc/kallsyms %s the per-CPU variables\n", have_ksyms ? "names" : "lacks");
	check_btf(btf);
	check_read();
	check_refusals();
	check_raw(btf);
	kbtf = btf;
	check_show();
	btf__free(btf);
	return tap_done();
}
