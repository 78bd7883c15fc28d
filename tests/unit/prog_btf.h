/*
 * prog_btf.h - the BTF and func_info a compiler would give a hand-written test program
 * (Linux 6.1 wants func_info for every lddw BPF_PSEUDO_FUNC): one BTF object with a FUNC per
 * kind of subprogram, and func_info records naming one per subprogram.  Included by the bpf
 * unit tests (test_bpf_verify, test_bpf_btf_access, test_bpf_fuzz); header-only.
 *
 * Types: 1 int, 2 int (void), 3 struct bpf_perf_event_data, 4 its pointer, 5 int *,
 * 6 int (struct bpf_perf_event_data *ctx, int x, int *p), 7 void *, 8 int (void *),
 * 9 struct bpf_perf_event_data *(void), 10 struct e {} (size 0) , 11 int (struct e *),
 * 12 int (int, int, int, int, int, int) and the FUNCs from PB_FUNC0: PB_STATIC static
 * int (void) ones, then those of enum pb_global (global but for s_args), then e * and
 * int (int x, int *p).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#define PB_STATIC 64
#define PB_FUNC0 13

/* fi codes: 0 a static int (void); these a global one (s_args: static) */
enum pb_global { PB_G_VOID = 1, PB_G_CTX_INT_PTR, PB_G_VOIDPTR, PB_G_RETPTR, PB_G_SIX, PB_G_EMPTY,
		 PB_S_ARGS, /* static, as g_args */
		 PB_G_MEM, /* int g_mem(int x, int *p) */
		 PB_G_NR };

struct pb_blob {
	uint32_t words[4096];
	uint32_t nw;
	char strs[2048];
	uint32_t ns;
	uint8_t raw[20000];
};

static inline uint32_t pb_str(struct pb_blob *b, const char *s)
{
	uint32_t off = b->ns;

	memcpy(b->strs + b->ns, s, strlen(s) + 1);
	b->ns += (uint32_t)strlen(s) + 1;
	return off;
}

#define PB_INFO(kind, kflag, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(kflag) << 31 | (vlen))

static inline void pb_w(struct pb_blob *b, uint32_t v)
{
	b->words[b->nw++] = v;
}

/* The blob (header, types, strings) in b->raw: its length. */
static inline uint32_t pb_build(struct pb_blob *b)
{
	static const char *const gname[PB_G_NR] = { "", "g_void", "g_args", "g_voidptr", "g_retptr",
						    "g_six", "g_empty", "s_args", "g_mem" };
	static const uint32_t gproto[PB_G_NR] = { 0, 2, 6, 8, 9, 12, 11, 6,
						   PB_FUNC0 + PB_STATIC + PB_G_NR };
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h) };
	char name[16];

	b->nw = 0;
	b->ns = 1;
	b->strs[0] = 0;
	pb_w(b, pb_str(b, "int")), pb_w(b, PB_INFO(BTF_KIND_INT, 0, 0)), pb_w(b, 4),
		pb_w(b, BTF_INT_SIGNED << 24 | 32); /* 1 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 0)), pb_w(b, 1); /* 2 */
	pb_w(b, pb_str(b, "bpf_perf_event_data")), pb_w(b, PB_INFO(BTF_KIND_STRUCT, 0, 0)),
		pb_w(b, 8); /* 3 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_PTR, 0, 0)), pb_w(b, 3); /* 4 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_PTR, 0, 0)), pb_w(b, 1); /* 5 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 3)), pb_w(b, 1); /* 6 */
	pb_w(b, pb_str(b, "ctx")), pb_w(b, 4);
	pb_w(b, pb_str(b, "x")), pb_w(b, 1);
	pb_w(b, pb_str(b, "p")), pb_w(b, 5);
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_PTR, 0, 0)), pb_w(b, 0); /* 7 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 1)), pb_w(b, 1); /* 8 */
	pb_w(b, pb_str(b, "v")), pb_w(b, 7);
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 0)), pb_w(b, 4); /* 9 */
	pb_w(b, pb_str(b, "e")), pb_w(b, PB_INFO(BTF_KIND_STRUCT, 0, 0)), pb_w(b, 0); /* 10 */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 1)), pb_w(b, 1); /* 11 */
	/* 11's argument: the pointer to e, the last type (after the FUNCs) */
	pb_w(b, pb_str(b, "a")), pb_w(b, PB_FUNC0 + PB_STATIC + PB_G_NR - 1);
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 6)), pb_w(b, 1); /* 12 */
	for (int i = 0; i < 6; i++) {
		name[0] = (char)('a' + i), name[1] = 0;
		pb_w(b, pb_str(b, name)), pb_w(b, 1);
	}
	for (int i = 0; i < PB_STATIC; i++) { /* 13 .. */
		snprintf(name, sizeof(name), "s%d", i);
		pb_w(b, pb_str(b, name)), pb_w(b, PB_INFO(BTF_KIND_FUNC, 0, BTF_FUNC_STATIC)), pb_w(b, 2);
	}
	for (int g = 1; g < PB_G_NR; g++)
		pb_w(b, pb_str(b, gname[g])),
			pb_w(b, PB_INFO(BTF_KIND_FUNC, 0, g == PB_S_ARGS ? BTF_FUNC_STATIC : BTF_FUNC_GLOBAL)),
			pb_w(b, gproto[g]);
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_PTR, 0, 0)), pb_w(b, 10); /* e * */
	pb_w(b, 0), pb_w(b, PB_INFO(BTF_KIND_FUNC_PROTO, 0, 2)), pb_w(b, 1); /* int (int, int *) */
	pb_w(b, pb_str(b, "x")), pb_w(b, 1);
	pb_w(b, pb_str(b, "p")), pb_w(b, 5);
	h.type_len = b->nw * 4;
	h.str_off = h.type_len;
	h.str_len = b->ns;
	memcpy(b->raw, &h, sizeof(h));
	memcpy(b->raw + sizeof(h), b->words, h.type_len);
	memcpy(b->raw + sizeof(h) + h.type_len, b->strs, b->ns);
	return (uint32_t)sizeof(h) + h.type_len + b->ns;
}

/* The FUNC type id for subprogram s given its fi code (0: static). */
static inline uint32_t pb_func_id(uint32_t s, uint8_t code)
{
	return code ? (uint32_t)PB_FUNC0 + PB_STATIC + code - 1 : (uint32_t)PB_FUNC0 + s % PB_STATIC;
}

/*
 * func_info for insns as the verifier splits them (subprograms start at 0 and at each local
 * call's and lddw BPF_PSEUDO_FUNC's target inside the program); fi[s] picks subprogram s's
 * FUNC (NULL: all static).  The number of records, at most max.
 */
static inline uint32_t pb_func_info(const struct bpf_insn *insns, uint32_t n, const uint8_t *fi,
				    uint32_t nfi, struct bpf_func_info *out, uint32_t max)
{
	uint32_t starts[PB_STATIC + 1], ns = 1;

	starts[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		bool call = insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL;
		bool func = insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
			    insns[i].src_reg == BPF_PSEUDO_FUNC;
		int64_t t = (int64_t)i + 1 + insns[i].imm;

		if ((call || func) && t >= 0 && t < n && ns < PB_STATIC) {
			uint32_t k = ns;

			for (uint32_t j = 0; j < ns; j++)
				if (starts[j] == (uint32_t)t)
					k = UINT32_MAX;
			if (k != UINT32_MAX) {
				while (k > 0 && starts[k - 1] > (uint32_t)t) {
					starts[k] = starts[k - 1];
					k--;
				}
				starts[k] = (uint32_t)t;
				ns++;
			}
		}
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM))
			i++;
	}
	if (ns > max)
		ns = max;
	for (uint32_t s = 0; s < ns; s++) {
		out[s].insn_off = starts[s];
		out[s].type_id = pb_func_id(s, fi && s < nfi ? fi[s] : 0);
	}
	return ns;
}

/* Does the program load a callback's address (then Linux wants func_info)? */
static inline bool pb_has_pseudo_func(const struct bpf_insn *insns, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) && insns[i].src_reg == BPF_PSEUDO_FUNC)
			return true;
	return false;
}

/* Load the BTF (bpf_sys) and point a's prog_btf_fd and func_info at it and fi: the BTF fd,
 * which the caller closes after the load, or a negative errno. */
static inline long pb_attach(union bpf_attr *a, const struct bpf_insn *insns, uint32_t n,
			     const uint8_t *kinds, uint32_t nkinds, struct bpf_func_info *fi)
{
	static struct pb_blob blob;
	union bpf_attr b;
	long fd;

	memset(&b, 0, sizeof(b));
	b.btf_size = pb_build(&blob);
	b.btf = (uintptr_t)blob.raw;
	fd = bpf_sys(BPF_BTF_LOAD, &b, sizeof(b));
	if (fd < 0)
		return fd;
	a->prog_btf_fd = (uint32_t)fd;
	a->func_info = (uintptr_t)fi;
	a->func_info_rec_size = sizeof(fi[0]);
	a->func_info_cnt = pb_func_info(insns, n, kinds, nkinds, fi, PB_STATIC);
	return fd;
}

/* BPF_PROG_LOAD of a perf_event program with func_info per kinds (NULL: all static) and its
 * level-1 log in log: the fd or -errno.  *btf: the BTF's fd, for the caller to close (< 0:
 * none was loaded). */
static inline long pb_prog_load(const struct bpf_insn *insns, uint32_t n, const uint8_t *kinds,
				uint32_t nkinds, char *log, uint32_t logsize, long *btf)
{
	struct bpf_func_info fi[PB_STATIC];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = logsize;
	a.log_level = 1;
	log[0] = 0;
	*btf = pb_attach(&a, insns, n, kinds, kinds ? nkinds : 0, fi);
	return *btf < 0 ? *btf : bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}
