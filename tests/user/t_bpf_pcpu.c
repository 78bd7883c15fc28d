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

static void check_raw(struct btf *btf)
{
	int var = btf__find_by_name_kind(btf, "bpf_prog_active", BTF_KIND_VAR);
	int int_id = btf__find_by_name_kind(btf, "int", BTF_KIND_INT);
	int n = (int)btf__type_cnt(btf), err;

	err = load_btf_id(var, 0);
	if (have_ksyms)
		CHECK(err == 0, "lddw BPF_PSEUDO_BTF_ID of VAR bpf_prog_active loads", "%d: %.600s",
		      err, vlog);
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
	btf__free(btf);
	return tap_done();
}
