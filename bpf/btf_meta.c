/*
 * btf_meta.c - pass 1 of the BTF parser: each type on its own, in section order (Linux 6.1's
 * btf_check_meta and the kinds' check_meta): info bits, kind, name offset, then the kind's
 * rules (vlen, kind_flag, size, names as C identifiers, struct members in order and inside
 * the struct, enum values, datasec entries), one log line per type as Linux prints it.
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf_parse.h"

/* ---- pass 1: each type on its own (check_meta) ---- */

static int32_t meta_short(struct benv *env, const struct btf_type *t, uint32_t left,
			  uint32_t need)
{
	if (left >= need)
		return 0;
	bpf_btf_log_type(env, t, false, "meta_left:%u meta_needed:%u", left, need);
	return -EINVAL;
}

#define FAIL(msg)                               \
	do {                                    \
		bpf_btf_log_type(env, t, true, "%s", msg); \
		return -EINVAL;                 \
	} while (0)

static int32_t meta_int(struct benv *env, const struct btf_type *t, uint32_t left)
{
	uint32_t d, bits, enc;

	if (meta_short(env, t, left, 4))
		return -EINVAL;
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	d = u32_at(t, 0);
	if (d & ~INT_MASK) {
		bpf_btf_log_type(env, t, false, "Invalid int_data:%x", d);
		return -EINVAL;
	}
	bits = BTF_INT_BITS(d) + BTF_INT_OFFSET(d);
	if (bits > 128) {
		bpf_btf_log_type(env, t, true, "nr_bits exceeds %u", 128u);
		return -EINVAL;
	}
	if (BITS_UP(bits) > t->size)
		FAIL("nr_bits exceeds type_size");
	enc = BTF_INT_ENCODING(d);
	if (enc && enc != BTF_INT_SIGNED && enc != BTF_INT_CHAR && enc != BTF_INT_BOOL) {
		bpf_btf_log_type(env, t, true, "Unsupported encoding");
		return -BPF_ENOTSUPP;
	}
	bpf_btf_log_type(env, t, true, NULL);
	return 4;
}

/* ptr, typedef, volatile, const, restrict, type_tag */
static int32_t meta_ref(struct benv *env, const struct btf_type *t, uint32_t left)
{
	(void)left;
	uint32_t k = bpf_btf_kind(t);

	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if (t->type > BTF_MAX_TYPE)
		FAIL("Invalid type_id");
	if (k == BTF_KIND_TYPEDEF) {
		if (!t->name_off || !bpf_btf_name_ok(env->b, t->name_off, false))
			FAIL("Invalid name");
	} else if (k == BTF_KIND_TYPE_TAG) {
		const char *v = bpf_btf_str(env->b, t->name_off);

		if (!v || !v[0])
			FAIL("Invalid name");
	} else if (t->name_off) {
		FAIL("Invalid name");
	}
	bpf_btf_log_type(env, t, true, NULL);
	return 0;
}

static int32_t meta_fwd(struct benv *env, const struct btf_type *t, uint32_t left)
{
	(void)left;
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (t->type)
		FAIL("type != 0");
	if (!t->name_off || !bpf_btf_name_ok(env->b, t->name_off, false))
		FAIL("Invalid name");
	bpf_btf_log_type(env, t, true, NULL);
	return 0;
}

static int32_t meta_array(struct benv *env, const struct btf_type *t, uint32_t left)
{
	if (meta_short(env, t, left, sizeof(struct btf_array)))
		return -EINVAL;
	if (t->name_off)
		FAIL("Invalid name");
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if (t->size)
		FAIL("size != 0");
	if (!u32_at(t, 0) || u32_at(t, 0) > BTF_MAX_TYPE)
		FAIL("Invalid elem");
	if (!u32_at(t, 1) || u32_at(t, 1) > BTF_MAX_TYPE)
		FAIL("Invalid index");
	bpf_btf_log_type(env, t, true, NULL);
	return sizeof(struct btf_array);
}

static uint32_t member_bit_off(const struct btf_type *s, const struct btf_member *m)
{
	return BTF_INFO_KFLAG(s->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
}

static int32_t meta_struct(struct benv *env, const struct btf_type *t, uint32_t left)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	uint32_t need = bpf_btf_vlen(t) * (uint32_t)sizeof(*m), last = 0;
	bool is_union = bpf_btf_kind(t) == BTF_KIND_UNION;

	if (meta_short(env, t, left, need))
		return -EINVAL;
	if (t->name_off && !bpf_btf_name_ok(env->b, t->name_off, false))
		FAIL("Invalid name");
	bpf_btf_log_type(env, t, true, NULL);
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++, m++) {
		uint32_t off = member_bit_off(t, m);
		const char *why = NULL;
		char buf[48];

		if (!bpf_btf_name_off_ok(env->b, m->name_off)) {
			ksnprintf(buf, sizeof(buf), "Invalid member name_offset:%u", m->name_off);
			why = buf;
		} else if (m->name_off && !bpf_btf_name_ok(env->b, m->name_off, false)) {
			why = "Invalid name";
		} else if (!m->type || m->type > BTF_MAX_TYPE) {
			why = "Invalid type_id";
		} else if ((is_union && off) || last > off) {
			why = "Invalid member bits_offset"; /* ">": a last "char a[0]" shares */
		} else if (BITS_UP(off) > t->size) {
			why = "Member bits_offset exceeds its struct size";
		}
		bpf_btf_log_member(env, t, m, why);
		if (why)
			return -EINVAL;
		last = off;
	}
	return (int32_t)need;
}

static int32_t meta_enum(struct benv *env, const struct btf_type *t, uint32_t left)
{
	bool e64 = bpf_btf_kind(t) == BTF_KIND_ENUM64, sgn = BTF_INFO_KFLAG(t->info);
	uint32_t rec = e64 ? 12 : 8, need = bpf_btf_vlen(t) * rec;

	if (meta_short(env, t, left, need))
		return -EINVAL;
	if (t->size > 8 || !t->size || (t->size & (t->size - 1)))
		FAIL("Unexpected size");
	if (t->name_off && !bpf_btf_name_ok(env->b, t->name_off, false))
		FAIL("Invalid name");
	bpf_btf_log_type(env, t, true, NULL);
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
		uint32_t off = u32_at(t, i * rec / 4), lo = u32_at(t, i * rec / 4 + 1);
		uint64_t v = e64 ? (uint64_t)u32_at(t, i * rec / 4 + 2) << 32 | lo : lo;
		const char *name;

		if (!bpf_btf_name_off_ok(env->b, off)) {
			bpf_btf_elog(env, "\tInvalid name_offset:%u", off);
			return -EINVAL;
		}
		if (!off || !bpf_btf_name_ok(env->b, off, false))
			FAIL("Invalid name");
		name = bpf_btf_name_of(env->b, off);
		if (e64)
			bpf_btf_elog(env, sgn ? "\t%s val=%lld\n" : "\t%s val=%llu\n", name,
			     (unsigned long long)v);
		else
			bpf_btf_elog(env, sgn ? "\t%s val=%d\n" : "\t%s val=%u\n", name, lo);
	}
	return (int32_t)need;
}

static int32_t meta_proto(struct benv *env, const struct btf_type *t, uint32_t left)
{
	uint32_t need = bpf_btf_vlen(t) * (uint32_t)sizeof(struct btf_param);

	if (meta_short(env, t, left, need))
		return -EINVAL;
	if (t->name_off)
		FAIL("Invalid name");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	bpf_btf_log_type(env, t, true, NULL);
	return (int32_t)need;
}

static int32_t meta_func(struct benv *env, const struct btf_type *t, uint32_t left)
{
	(void)left;
	if (!t->name_off || !bpf_btf_name_ok(env->b, t->name_off, false))
		FAIL("Invalid name");
	if (bpf_btf_vlen(t) > BTF_FUNC_GLOBAL)
		FAIL("Invalid func linkage");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	bpf_btf_log_type(env, t, true, NULL);
	return 0;
}

static int32_t meta_var(struct benv *env, const struct btf_type *t, uint32_t left)
{
	uint32_t linkage;

	if (meta_short(env, t, left, 4))
		return -EINVAL;
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if (!t->name_off || !bpf_btf_name_ok(env->b, t->name_off, true))
		FAIL("Invalid name");
	if (!t->type || t->type > BTF_MAX_TYPE)
		FAIL("Invalid type_id");
	linkage = u32_at(t, 0);
	if (linkage != BTF_VAR_STATIC && linkage != BTF_VAR_GLOBAL_ALLOCATED)
		FAIL("Linkage not supported");
	bpf_btf_log_type(env, t, true, NULL);
	return 4;
}

static int32_t meta_datasec(struct benv *env, const struct btf_type *t, uint32_t left)
{
	const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);
	uint32_t need = bpf_btf_vlen(t) * (uint32_t)sizeof(*v);
	uint64_t end = 0, sum = 0;

	if (meta_short(env, t, left, need))
		return -EINVAL;
	if (!t->size)
		FAIL("size == 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if (!t->name_off || !bpf_btf_name_ok(env->b, t->name_off, true))
		FAIL("Invalid name");
	bpf_btf_log_type(env, t, true, NULL);
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++, v++) {
		const char *why = NULL;

		if (!v->type || v->type > BTF_MAX_TYPE)
			why = "Invalid type_id";
		else if (v->offset < end || v->offset >= t->size)
			why = "Invalid offset";
		else if (!v->size || v->size > t->size)
			why = "Invalid size";
		else if ((end = (uint64_t)v->offset + v->size) > t->size)
			why = "Invalid offset+size";
		bpf_btf_log_vsi(env, t, v, why);
		if (why)
			return -EINVAL;
		sum += v->size;
	}
	if (t->size < sum)
		FAIL("Invalid btf_info size");
	return (int32_t)need;
}

static int32_t meta_float(struct benv *env, const struct btf_type *t, uint32_t left)
{
	(void)left;
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if (t->size != 2 && t->size != 4 && t->size != 8 && t->size != 12 && t->size != 16)
		FAIL("Invalid type_size");
	bpf_btf_log_type(env, t, true, NULL);
	return 0;
}

static int32_t meta_decl_tag(struct benv *env, const struct btf_type *t, uint32_t left)
{
	const char *v;

	if (meta_short(env, t, left, 4))
		return -EINVAL;
	v = bpf_btf_str(env->b, t->name_off);
	if (!v || !v[0])
		FAIL("Invalid value");
	if (bpf_btf_vlen(t))
		FAIL("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		FAIL("Invalid btf_info kind_flag");
	if ((int32_t)u32_at(t, 0) < -1)
		FAIL("Invalid component_idx");
	bpf_btf_log_type(env, t, true, NULL);
	return 4;
}

/* each kind's pass-1 check: the bytes of records after its btf_type, or -errno */
static int32_t (*const meta_of[NR_BTF_KINDS])(struct benv *, const struct btf_type *, uint32_t) = {
	[BTF_KIND_INT] = meta_int,	   [BTF_KIND_PTR] = meta_ref,
	[BTF_KIND_ARRAY] = meta_array,	   [BTF_KIND_STRUCT] = meta_struct,
	[BTF_KIND_UNION] = meta_struct,	   [BTF_KIND_ENUM] = meta_enum,
	[BTF_KIND_FWD] = meta_fwd,	   [BTF_KIND_TYPEDEF] = meta_ref,
	[BTF_KIND_VOLATILE] = meta_ref,	   [BTF_KIND_CONST] = meta_ref,
	[BTF_KIND_RESTRICT] = meta_ref,	   [BTF_KIND_FUNC] = meta_func,
	[BTF_KIND_FUNC_PROTO] = meta_proto, [BTF_KIND_VAR] = meta_var,
	[BTF_KIND_DATASEC] = meta_datasec, [BTF_KIND_FLOAT] = meta_float,
	[BTF_KIND_DECL_TAG] = meta_decl_tag, [BTF_KIND_TYPE_TAG] = meta_ref,
	[BTF_KIND_ENUM64] = meta_enum,
};

/* The bytes type t takes in the section (header and its kind's records), or -errno. */
int32_t bpf_btf_check_meta(struct benv *env, const struct btf_type *t, uint32_t left)
{
	int32_t n;

	if (left < sizeof(*t)) {
		bpf_btf_elog(env, "[%u] meta_left:%u meta_needed:%u", env->log_id, left,
		     (uint32_t)sizeof(*t));
		return -EINVAL;
	}
	left -= sizeof(*t);
	if (t->info & ~INFO_MASK) {
		bpf_btf_elog(env, "[%u] Invalid btf_info:%x", env->log_id, t->info);
		return -EINVAL;
	}
	if (bpf_btf_kind(t) > BTF_KIND_MAX || bpf_btf_kind(t) == BTF_KIND_UNKN) {
		bpf_btf_elog(env, "[%u] Invalid kind:%u", env->log_id, bpf_btf_kind(t));
		return -EINVAL;
	}
	if (!bpf_btf_name_off_ok(env->b, t->name_off)) {
		bpf_btf_elog(env, "[%u] Invalid name_offset:%u", env->log_id, t->name_off);
		return -EINVAL;
	}
	n = meta_of[bpf_btf_kind(t)](env, t, left);
	return n < 0 ? n : n + (int32_t)sizeof(*t);
}

#undef FAIL

