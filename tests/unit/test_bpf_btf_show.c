/*
 * test_bpf_btf_show.c - bpf/btf_show.c, the text bpf_snprintf_btf writes, against Linux 6.1's.
 * A BTF built here describes uapi types as both kernels' BTF do (struct perf_event_header,
 * struct bpf_insn's bitfields, enum bpf_map_type, struct bpf_map_info's char array, struct
 * bpf_perf_event_data's typedef'd nested struct and array, struct sigaction's pointers and
 * typedef'd anonymous struct, a VAR); each expected string is what Linux 6.1 printed for the
 * same bytes under refvm.sh (tests/user/t_bpf_pcpu.c prints and checks them on both kernels).
 * Also: the truncation rule (the whole length back, str_size - 1 bytes and a NUL), a fault
 * (-EFAULT), a DATASEC (-EINVAL), a FUNC ("<unsupported kind:FUNC>") and the helper's own
 * argument checks.
 * The same BTF's per-CPU variables (a DATASEC ".data..percpu" of VARs) serve bpf/ksym.c's
 * typed ksyms (lddw BPF_PSEUDO_BTF_ID) and bpf_this_cpu_ptr / bpf_per_cpu_ptr, with the fake
 * seam's symbol table and per-CPU offsets: Linux 6.1's check_pseudo_btf_id outcomes and log
 * lines, what the verifier makes of each kind of variable (percpu_ptr_, ptr_, rdonly_mem) and
 * what the programs read.  (Debian's 6.1 kernel has no data symbols in kallsyms, so on Linux
 * under refvm.sh only the refusals before the symbol lookup can be compared: t_bpf_pcpu.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/btf.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <kern/errno.h>
#include "../../bpf/bpf_internal.h"
#include "../../bpf/btf.h"
#include "../fakes/ksvc_fake.h"
#include "bpf_unit_prog.h"

/* ---- a BTF blob, type by type ---- */

static uint32_t w[1024], nw;
static char strs[2048];
static uint32_t nstr = 1, ntypes;

static uint32_t str(const char *s)
{
	uint32_t off = nstr;

	if (!*s)
		return 0;
	strcpy(strs + nstr, s);
	nstr += (uint32_t)strlen(s) + 1;
	return off;
}

#define INFO(kind, vlen, kflag) ((uint32_t)(kflag) << 31 | (uint32_t)(kind) << 24 | (vlen))

static uint32_t type(const char *name, uint32_t info, uint32_t size_or_type)
{
	w[nw++] = str(name);
	w[nw++] = info;
	w[nw++] = size_or_type;
	return ++ntypes;
}

static uint32_t int_t(const char *name, uint32_t bytes, bool sign)
{
	uint32_t id = type(name, INFO(BTF_KIND_INT, 0, 0), bytes);

	w[nw++] = (sign ? BTF_INT_SIGNED : 0) << 24 | bytes * 8;
	return id;
}

static uint32_t typedef_t(const char *name, uint32_t to)
{
	return type(name, INFO(BTF_KIND_TYPEDEF, 0, 0), to);
}

static uint32_t array_t(uint32_t elem, uint32_t index, uint32_t n)
{
	uint32_t id = type("", INFO(BTF_KIND_ARRAY, 0, 0), 0);

	w[nw++] = elem;
	w[nw++] = index;
	w[nw++] = n;
	return id;
}

/* a struct's member: name, type, bit offset (kflag structs: bitfield size << 24 | offset) */
static void member(const char *name, uint32_t t, uint32_t off)
{
	w[nw++] = str(name);
	w[nw++] = t;
	w[nw++] = off;
}

static uint32_t blob(uint8_t *raw)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = 24,
				.type_len = nw * 4, .str_off = nw * 4, .str_len = nstr };

	memcpy(raw, &h, sizeof(h));
	memcpy(raw + 24, w, nw * 4);
	memcpy(raw + 24 + nw * 4, strs, nstr);
	return 24 + nw * 4 + nstr;
}

static uint32_t t_hdr, t_insn, t_maptype, t_mapinfo, t_pdata, t_sigaction, t_var, t_sec, t_func;
static uint32_t t_kstat_var, t_jiffies, t_plain_hdr, t_nosym, t_int;

static void build(void)
{
	uint32_t u32i = int_t("unsigned int", 4, false), u32 = typedef_t("__u32", u32i);
	uint32_t u16 = typedef_t("__u16", int_t("short unsigned int", 2, false));
	uint32_t u8 = typedef_t("__u8", int_t("unsigned char", 1, false));
	uint32_t s16 = typedef_t("__s16", int_t("short int", 2, true));
	uint32_t inti = int_t("int", 4, true), s32 = typedef_t("__s32", inti);
	uint32_t u64 = typedef_t("__u64", int_t("long long unsigned int", 8, false));
	uint32_t ulong = int_t("long unsigned int", 8, false), chr = int_t("char", 1, false);
	uint32_t proto, sigset, regs;

	t_hdr = type("perf_event_header", INFO(BTF_KIND_STRUCT, 3, 0), 8);
	member("type", u32, 0);
	member("misc", u16, 32);
	member("size", u16, 48);
	t_insn = type("bpf_insn", INFO(BTF_KIND_STRUCT, 5, 1), 8);
	member("code", u8, 0);
	member("dst_reg", u8, 4u << 24 | 8);
	member("src_reg", u8, 4u << 24 | 12);
	member("off", s16, 16);
	member("imm", s32, 32);
	t_maptype = type("bpf_map_type", INFO(BTF_KIND_ENUM, 3, 0), 4);
	w[nw++] = str("BPF_MAP_TYPE_UNSPEC"), w[nw++] = 0;
	w[nw++] = str("BPF_MAP_TYPE_HASH"), w[nw++] = 1;
	w[nw++] = str("BPF_MAP_TYPE_ARRAY"), w[nw++] = 2;
	uint32_t name16 = array_t(chr, inti, 16);

	t_mapinfo = type("bpf_map_info", INFO(BTF_KIND_STRUCT, 15, 0), 88);
	member("type", u32, 0);
	member("id", u32, 32);
	member("key_size", u32, 64);
	member("value_size", u32, 96);
	member("max_entries", u32, 128);
	member("map_flags", u32, 160);
	member("name", name16, 192);
	member("ifindex", u32, 320);
	member("btf_vmlinux_value_type_id", u32, 352);
	member("netns_dev", u64, 384);
	member("netns_ino", u64, 448);
	member("btf_id", u32, 512);
	member("btf_key_type_id", u32, 544);
	member("btf_value_type_id", u32, 576);
	member("map_extra", u64, 640);
	uint32_t regs31 = array_t(u64, inti, 31);

	regs = type("user_pt_regs", INFO(BTF_KIND_STRUCT, 4, 0), 272);
	member("regs", regs31, 0);
	member("sp", u64, 1984);
	member("pc", u64, 2048);
	member("pstate", u64, 2112);
	regs = typedef_t("bpf_user_pt_regs_t", regs);
	t_pdata = type("bpf_perf_event_data", INFO(BTF_KIND_STRUCT, 3, 0), 288);
	member("regs", regs, 0);
	member("sample_period", u64, 2176);
	member("addr", u64, 2240);
	/* void (*)(int) behind typedefs, as <linux/signal_types.h> has them */
	proto = type("", INFO(BTF_KIND_FUNC_PROTO, 0, 0), 0);
	uint32_t handler = typedef_t("__sighandler_t",
				     type("", INFO(BTF_KIND_PTR, 0, 0), typedef_t("__signalfn_t", proto)));
	uint32_t restorer = typedef_t("__sigrestore_t",
				      type("", INFO(BTF_KIND_PTR, 0, 0), typedef_t("__restorefn_t", proto)));
	uint32_t sig1 = array_t(ulong, inti, 1);

	sigset = type("", INFO(BTF_KIND_STRUCT, 1, 0), 8);
	member("sig", sig1, 0);
	sigset = typedef_t("sigset_t", sigset);
	t_sigaction = type("sigaction", INFO(BTF_KIND_STRUCT, 4, 0), 32);
	member("sa_handler", handler, 0);
	member("sa_flags", ulong, 64);
	member("sa_restorer", restorer, 128);
	member("sa_mask", sigset, 192);
	uint32_t kstat = type("kernel_stat", INFO(BTF_KIND_STRUCT, 1, 0), 8);

	member("irqs_sum", ulong, 0);
	t_int = inti;
	t_var = type("bpf_prog_active", INFO(BTF_KIND_VAR, 0, 0), inti);
	w[nw++] = BTF_VAR_GLOBAL_ALLOCATED;
	t_kstat_var = type("kstat", INFO(BTF_KIND_VAR, 0, 0), kstat);
	w[nw++] = BTF_VAR_GLOBAL_ALLOCATED;
	t_sec = type(".data..percpu", INFO(BTF_KIND_DATASEC, 2, 0), 16);
	w[nw++] = t_var, w[nw++] = 0, w[nw++] = 4;
	w[nw++] = t_kstat_var, w[nw++] = 8, w[nw++] = 8;
	/* variables outside the per-CPU section: an integer, a struct, one not in kallsyms */
	t_jiffies = type("jiffies", INFO(BTF_KIND_VAR, 0, 0), u64);
	w[nw++] = BTF_VAR_GLOBAL_ALLOCATED;
	t_plain_hdr = type("last_header", INFO(BTF_KIND_VAR, 0, 0), t_hdr);
	w[nw++] = BTF_VAR_GLOBAL_ALLOCATED;
	t_nosym = type("no_such_symbol", INFO(BTF_KIND_VAR, 0, 0), inti);
	w[nw++] = BTF_VAR_GLOBAL_ALLOCATED;
	t_func = type("percpu_init", INFO(BTF_KIND_FUNC, 0, 0), proto);
}

static int setup(void **state)
{
	static uint8_t raw[16384];

	build();
	return bpf_btf_vmlinux_init(raw, blob(raw));
}

/* ---- Linux 6.1's text for the same bytes (tests/user/t_bpf_pcpu.c's SHOW_* strings) ---- */

static const char hdr_0[] =
	"(struct perf_event_header){\n .type = (__u32)9,\n .misc = (__u16)2,\n}\n";
static const char hdr_c[] = "(struct perf_event_header){.type = (__u32)9,.misc = (__u16)2,}";
static const char hdr_n[] = "{\n 9,\n 2,\n}\n";
static const char hdr_z[] = "(struct perf_event_header){\n .type = (__u32)9,\n .misc = (__u16)2,"
			    "\n .size = (__u16)0,\n}\n";
static const char hdr_all[] = "{9,2,0,}";

static char out[4096];

static int show(uint32_t id, uint64_t flags, const void *obj, int32_t len)
{
	memset(out, 0x7e, sizeof(out));
	return bpf_btf_snprintf_show(bpf_btf_vmlinux(), id, obj, out, len, flags);
}

static void expect(uint32_t id, uint64_t flags, const void *obj, const char *want)
{
	assert_int_equal(show(id, flags, obj, sizeof(out)), strlen(want));
	assert_string_equal(out, want);
}

static void test_flags(void **state)
{
	struct perf_event_header h = { .type = 9, .misc = 2 };

	expect(t_hdr, 0, &h, hdr_0);
	expect(t_hdr, BTF_F_COMPACT, &h, hdr_c);
	expect(t_hdr, BTF_F_NONAME, &h, hdr_n);
	expect(t_hdr, BTF_F_ZERO, &h, hdr_z);
	expect(t_hdr, BTF_F_COMPACT | BTF_F_NONAME | BTF_F_PTR_RAW | BTF_F_ZERO, &h, hdr_all);
}

static void test_truncation(void **state)
{
	struct perf_event_header h = { .type = 9, .misc = 2 };

	/* vsnprintf per piece: str_size - 1 bytes and a NUL, the whole length back */
	assert_int_equal(show(t_hdr, BTF_F_COMPACT, &h, 10), strlen(hdr_c));
	assert_string_equal(out, "(struct p");
	assert_int_equal(show(t_hdr, BTF_F_COMPACT, &h, 1), strlen(hdr_c));
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 0x7e);
	/* exactly the text's length: its last byte gives way to the NUL */
	assert_int_equal(show(t_hdr, BTF_F_COMPACT, &h, (int32_t)strlen(hdr_c)), strlen(hdr_c));
	assert_int_equal(strlen(out), strlen(hdr_c) - 1);
	assert_int_equal(show(t_hdr, BTF_F_COMPACT, &h, 0), strlen(hdr_c));
	assert_int_equal(out[0], 0x7e);
}

static void test_shapes(void **state)
{
	struct bpf_insn insn = { .code = 0x85, .dst_reg = 1, .src_reg = 2, .off = -3, .imm = 7 };
	struct bpf_map_info mi = { .type = 2, .id = 5, .key_size = 4, .name = "hello" };
	struct bpf_perf_event_data pd = { .sample_period = 100 };
	uint64_t sa[4] = { 0x1234, 0x4000000, 0, 0x5 }, zeros[4] = { 0 };
	uint32_t v2 = 2, v99 = 99;

	expect(t_insn, BTF_F_COMPACT, &insn,
	       "(struct bpf_insn){.code = (__u8)133,.dst_reg = (__u8)0x1,.src_reg = (__u8)0x2,"
	       ".off = (__s16)-3,.imm = (__s32)7,}");
	expect(t_maptype, 0, &v2, "(enum bpf_map_type)BPF_MAP_TYPE_ARRAY\n");
	expect(t_maptype, 0, &v99, "(enum bpf_map_type)99\n");
	expect(t_mapinfo, BTF_F_COMPACT, &mi,
	       "(struct bpf_map_info){.type = (__u32)2,.id = (__u32)5,.key_size = (__u32)4,"
	       ".name = (char[])['h','e','l','l','o',],}");
	expect(t_mapinfo, BTF_F_COMPACT | BTF_F_ZERO, &mi,
	       "(struct bpf_map_info){.type = (__u32)2,.id = (__u32)5,.key_size = (__u32)4,"
	       ".value_size = (__u32)0,.max_entries = (__u32)0,.map_flags = (__u32)0,"
	       ".name = (char[])['h','e','l','l','o',],.ifindex = (__u32)0,"
	       ".btf_vmlinux_value_type_id = (__u32)0,.netns_dev = (__u64)0,"
	       ".netns_ino = (__u64)0,.btf_id = (__u32)0,.btf_key_type_id = (__u32)0,"
	       ".btf_value_type_id = (__u32)0,.map_extra = (__u64)0,}");
	pd.regs.regs[0] = 1;
	pd.regs.regs[2] = 3;
	expect(t_pdata, 0, &pd,
	       "(struct bpf_perf_event_data){\n .regs = (bpf_user_pt_regs_t){\n  .regs = "
	       "(__u64[])[\n   1,\n   3,\n  ],\n },\n .sample_period = (__u64)100,\n}\n");
	expect(t_sigaction, BTF_F_COMPACT | BTF_F_PTR_RAW, sa,
	       "(struct sigaction){.sa_handler = (__sighandler_t *)0x0000000000001234,"
	       ".sa_flags = (long unsigned int)67108864,.sa_mask = (sigset_t){.sig = "
	       "(long unsigned int[])[5,],},}");
	expect(t_sigaction, BTF_F_COMPACT | BTF_F_ZERO, zeros,
	       "(struct sigaction){.sa_handler = (__sighandler_t *)0x0000000000000000,"
	       ".sa_flags = (long unsigned int)0,.sa_restorer = (__sigrestore_t *)"
	       "0x0000000000000000,.sa_mask = (sigset_t){.sig = (long unsigned int[])[0,],},}");
	expect(t_var, 0, &v2, "(int)2\n");
	/* a hashed pointer: 8 zero digits then the hash, the same each time, not the address */
	show(t_sigaction, BTF_F_COMPACT, sa, sizeof(out));
	static const char pre[] = "(struct sigaction){.sa_handler = (__sighandler_t *)0x00000000";

	assert_memory_equal(out, pre, sizeof(pre) - 1);
	assert_memory_not_equal(out + sizeof(pre) - 1, "00001234", 8);
	assert_int_equal(out[sizeof(pre) - 1 + 8], ',');
	char first[256];

	strcpy(first, out);
	show(t_sigaction, BTF_F_COMPACT, sa, sizeof(out));
	assert_string_equal(out, first);
}

static void test_errors(void **state)
{
	struct perf_event_header h = { .type = 9 };
	char buf[64];
	struct btf_ptr p = { .ptr = &h, .type_id = t_hdr };

	/* what cannot be read: nothing shown, -EFAULT */
	ksvc_fake.bad_user[0].start = (uintptr_t)&h;
	ksvc_fake.bad_user[0].len = sizeof(h);
	assert_int_equal(show(t_hdr, 0, &h, sizeof(out)), -EFAULT);
	assert_int_equal(out[0], 0x7e);
	ksvc_fake.bad_user[0].len = 0;
	/* no size: -EINVAL; a kind without a show: Linux's btf_df_show */
	assert_int_equal(show(t_sec, 0, &h, sizeof(out)), -EINVAL);
	expect(t_func, 0, &h, "<unsupported kind:FUNC>");
	/* the helper's checks (bpf_btf_printf_prepare) */
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p,
						     sizeof(p), 0),
			 strlen(hdr_0) - strlen("\n .misc = (__u16)2,"));
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p,
						     sizeof(p), 16), -EINVAL);
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p, 8,
						     0), -EINVAL);
	p.type_id = 0;
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p,
						     sizeof(p), 0), -EINVAL);
	p.type_id = 100000;
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p,
						     sizeof(p), 0), -ENOENT);
	p.type_id = 0x80000000u;
	assert_int_equal((int64_t)bpf_h_snprintf_btf((uintptr_t)buf, sizeof(buf), (uintptr_t)&p,
						     sizeof(p), 0), -ENOENT);
}

/* ---- typed ksyms and the per-CPU helpers ---- */

#define NCPU 2
/* the per-CPU template (what kallsyms names) and each CPU's copy, as kernel/percpu.c lays them */
static struct pcpu {
	int32_t active;
	uint32_t pad;
	uint64_t irqs_sum;
} template, copies[NCPU];
static uint64_t jiffies = 12345;
static struct perf_event_header last_header = { .type = 7, .size = 64 };

static char logbuf[4096];

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LD_KSYM(d, id) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_BTF_ID, 0, (int32_t)(id)), \
		INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define MOV(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ADD(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define JNE0(d, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, 0)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static long load(const struct bpf_insn *insns, uint32_t n)
{
	return unit_prog_load(insns, n, "GPL", logbuf, sizeof(logbuf));
}

/* load, run once, close: r0 */
static uint64_t load_run(const struct bpf_insn *insns, uint32_t n)
{
	long fd = load(insns, n);
	uint64_t r0;

	if (fd < 0)
		fail_msg("load: %ld %s", fd, logbuf);
	r0 = unit_prog_run(fd);
	ksvc_fake_close((int)fd);
	return r0;
}

static void refused(const struct bpf_insn *insns, uint32_t n, long err, const char *line)
{
	long fd = load(insns, n);

	if (fd >= 0)
		ksvc_fake_close((int)fd);
	assert_int_equal(fd, err);
	if (!strstr(logbuf, line))
		fail_msg("log lacks \"%s\": %s", line, logbuf);
}

static int ksym_setup(void)
{
	static const struct ksvc_fake_ksym syms[] = {
		{ "bpf_prog_active", (uintptr_t)&template.active },
		{ "kstat", (uintptr_t)&template.irqs_sum },
		{ "jiffies", (uintptr_t)&jiffies },
		{ "last_header", (uintptr_t)&last_header },
		{ NULL, 0 },
	};

	ksvc_fake.ksyms = syms;
	ksvc_fake.nr_cpus = NCPU;
	for (int c = 0; c < NCPU; c++) {
		ksvc_fake.per_cpu_offset[c] = (uintptr_t)&copies[c] - (uintptr_t)&template;
		copies[c].active = 10 + c;
		copies[c].irqs_sum = 1000 + (uint64_t)c;
	}
	return 0;
}

static void test_ksym_percpu(void **state)
{
	/* *this_cpu_ptr(&bpf_prog_active): this CPU's copy, not the template */
	const struct bpf_insn this_int[] = { LD_KSYM(1, t_var), CALL(BPF_FUNC_this_cpu_ptr),
					     LDX(BPF_W, 0, 0, 0), EXIT };
	/* per_cpu_ptr(&kstat, 1)->irqs_sum: a ptr_ to the struct after the NULL check */
	const struct bpf_insn per_struct[] = { LD_KSYM(1, t_kstat_var), MOV(2, 1),
					       CALL(BPF_FUNC_per_cpu_ptr), JNE0(0, 2), MOV(0, 77),
					       EXIT, LDX(BPF_DW, 0, 0, 0), EXIT };
	/* per_cpu_ptr past the last CPU: NULL */
	const struct bpf_insn past[] = { LD_KSYM(1, t_var), MOV(2, NCPU),
					 CALL(BPF_FUNC_per_cpu_ptr), JNE0(0, 2), MOV(0, 77), EXIT,
					 MOV(0, 1), EXIT };

	ksym_setup();
	ksvc_fake.cpu = 1;
	assert_int_equal(load_run(this_int, N(this_int)), 11);
	ksvc_fake.cpu = 0;
	assert_int_equal(load_run(this_int, N(this_int)), 10);
	assert_int_equal(load_run(per_struct, N(per_struct)), 1001);
	assert_int_equal(load_run(past, N(past)), 77);
}

static void test_ksym_plain(void **state)
{
	/* a u64 outside the per-CPU section: 8 read-only bytes */
	const struct bpf_insn jif[] = { LD_KSYM(0, t_jiffies), LDX(BPF_DW, 0, 0, 0), EXIT };
	const struct bpf_insn jif_past[] = { LD_KSYM(0, t_jiffies), LDX(BPF_W, 0, 0, 8), EXIT };
	const struct bpf_insn jif_store[] = { LD_KSYM(1, t_jiffies), ST(BPF_W, 1, 0, 1), MOV(0, 0),
					      EXIT };
	/* a struct: a ptr_ to it, read by its BTF */
	const struct bpf_insn hdr[] = { LD_KSYM(0, t_plain_hdr), LDX(BPF_H, 0, 0, 6), EXIT };

	ksym_setup();
	assert_int_equal(load_run(jif, N(jif)), 12345);
	refused(jif_past, N(jif_past), -EACCES, "invalid access to memory, mem_size=8 off=8 size=4");
	refused(jif_store, N(jif_store), -EACCES, "R1 cannot write into rdonly_mem");
	assert_int_equal(load_run(hdr, N(hdr)), 64);
}

static void test_ksym_refused(void **state)
{
	const struct bpf_insn nosym[] = { LD_KSYM(0, t_nosym), MOV(0, 0), EXIT };
	const struct bpf_insn notvar[] = { LD_KSYM(0, t_int), MOV(0, 0), EXIT };
	const struct bpf_insn badid[] = { LD_KSYM(0, 100000), MOV(0, 0), EXIT };
	const struct bpf_insn direct[] = { LD_KSYM(1, t_var), LDX(BPF_W, 0, 1, 0), EXIT };
	const struct bpf_insn moved[] = { LD_KSYM(1, t_var), ADD(1, 4), CALL(BPF_FUNC_this_cpu_ptr),
					  MOV(0, 0), EXIT };
	const struct bpf_insn scalar[] = { MOV(1, 0), CALL(BPF_FUNC_this_cpu_ptr), MOV(0, 0), EXIT };
	const struct bpf_insn nocheck[] = { LD_KSYM(1, t_var), MOV(2, 0), CALL(BPF_FUNC_per_cpu_ptr),
					    LDX(BPF_W, 0, 0, 0), EXIT };
	struct bpf_insn badfd[] = { LD_KSYM(0, t_var), MOV(0, 0), EXIT };

	ksym_setup();
	refused(nosym, N(nosym), -ENOENT,
		"ldimm64 failed to find the address for kernel symbol 'no_such_symbol'.\n");
	refused(notvar, N(notvar), -EINVAL, "pseudo btf_id ");
	assert_non_null(strstr(logbuf, " in ldimm64 isn't KIND_VAR.\n"));
	refused(badid, N(badid), -ENOENT, "ldimm64 insn specifies invalid btf_id 100000.\n");
	refused(direct, N(direct), -EACCES, "R1 is ptr_int access percpu memory: off=0\n");
	refused(moved, N(moved), -EACCES,
		"dereference of modified percpu_ptr_ ptr R1 off=4 disallowed\n");
	refused(scalar, N(scalar), -EACCES, "R1 type=scalar expected=percpu_ptr_\n");
	refused(nocheck, N(nocheck), -EACCES, "R0 invalid mem access 'rdonly_mem_or_null'\n");
	badfd[1].imm = 12345; /* a BTF fd that is not open */
	refused(badfd, N(badfd), -EINVAL, "invalid module BTF object FD specified.\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_ksym_percpu),
		cmocka_unit_test(test_ksym_plain),
		cmocka_unit_test(test_ksym_refused),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
