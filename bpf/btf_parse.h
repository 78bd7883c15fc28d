/*
 * btf_parse.h - what the three parts of the BTF parser share (btf.c: header, sections, the
 * log and the object; btf_meta.c: pass 1, each type alone; btf_resolve.c: pass 2, the
 * references) and btf_show.c, which walks types the same way.  Private to those files.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <linux/btf.h>

#include "btf.h"

struct bpf_verifier_log;

#define INFO_MASK 0x9f00ffffu /* the bits btf_type.info may use */
#define INT_MASK 0x0fffffffu
#define MAX_DEPTH 32 /* MAX_RESOLVE_DEPTH */
#define NAME_MAX_LEN 512 /* KSYM_NAME_LEN: identifiers are shorter */
#define BITS_UP(b) (((b) + 7) / 8)

_Static_assert(sizeof(struct btf_header) == 24, "BTF header");
_Static_assert(sizeof(struct btf_type) == 12, "btf_type");



enum { NOT_VISITED, VISITED, RESOLVED };
enum { MODE_TBD, MODE_PTR, MODE_AGGR }; /* what the walk from the first type may stop at */

struct benv {
	struct bpf_btf *b;
	struct bpf_verifier_log *log;
	uint8_t *visit;
	struct {
		const struct btf_type *t;
		uint32_t id;
		uint16_t next; /* struct members / datasec entries done */
	} st[MAX_DEPTH];
	uint32_t top;
	int mode;
	uint32_t log_id; /* the type the log lines name */
	bool resolving; /* pass 2: a member line repeats its struct's line first */
};


extern const struct btf_type bpf_btf_void; /* type 0 */

/* ---- type predicates ---- */

static inline bool is_kind(const struct btf_type *t, uint32_t k)
{
	return t != &bpf_btf_void && bpf_btf_kind(t) == k;
}

static inline bool is_modifier(const struct btf_type *t)
{
	switch (t == &bpf_btf_void ? 0 : bpf_btf_kind(t)) {
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return true;
	}
	return false;
}

static inline bool is_struct(const struct btf_type *t)
{
	return is_kind(t, BTF_KIND_STRUCT) || is_kind(t, BTF_KIND_UNION);
}

static inline bool has_size(const struct btf_type *t)
{
	switch (t == &bpf_btf_void ? 0 : bpf_btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_DATASEC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_ENUM64:
		return true;
	}
	return false;
}

static inline bool nosize(const struct btf_type *t)
{
	return !t || t == &bpf_btf_void || is_kind(t, BTF_KIND_FWD) || is_kind(t, BTF_KIND_FUNC) ||
	       is_kind(t, BTF_KIND_FUNC_PROTO);
}

/* var, decl_tag and datasec are where a walk starts, never where it passes */
static inline bool source_only(const struct btf_type *t)
{
	return is_kind(t, BTF_KIND_VAR) || is_kind(t, BTF_KIND_DECL_TAG) ||
	       is_kind(t, BTF_KIND_DATASEC);
}

static inline bool needs_resolve(const struct btf_type *t)
{
	return is_modifier(t) || is_kind(t, BTF_KIND_PTR) || is_struct(t) ||
	       is_kind(t, BTF_KIND_ARRAY) || is_kind(t, BTF_KIND_VAR) ||
	       is_kind(t, BTF_KIND_FUNC) || is_kind(t, BTF_KIND_DECL_TAG) ||
	       is_kind(t, BTF_KIND_DATASEC);
}

static inline uint32_t u32_at(const struct btf_type *t, uint32_t i)
{
	return ((const uint32_t *)(t + 1))[i];
}

/* A plain u8/u16/u32/u64/u128: no bit offset, whole bytes */
static inline bool int_regular(const struct btf_type *t)
{
	uint32_t d = u32_at(t, 0), bits = BTF_INT_BITS(d), bytes = BITS_UP(bits);

	return !(bits & 7) && !BTF_INT_OFFSET(d) &&
	       (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16);
}


/* ---- btf.c: names and the log (Linux's btf_verifier_log* texts) ---- */

bool bpf_btf_name_off_ok(const struct bpf_btf *b, uint32_t off);
/* A C identifier (dot_ok: a section name) shorter than NAME_MAX_LEN. */
bool bpf_btf_name_ok(const struct bpf_btf *b, uint32_t off, bool dot_ok);
const char *bpf_btf_name_of(const struct bpf_btf *b, uint32_t off);
bool bpf_btf_log_on(const struct benv *env);
/* text as given, no newline added */
void bpf_btf_elog(struct benv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "[id] KIND name [details][ msg]\n"; with_details false when its records may be missing */
void bpf_btf_log_type(struct benv *env, const struct btf_type *t, bool with_details,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void bpf_btf_log_member(struct benv *env, const struct btf_type *s, const struct btf_member *m,
			const char *msg);
void bpf_btf_log_vsi(struct benv *env, const struct btf_type *ds,
		     const struct btf_var_secinfo *v, const char *msg);

/* btf_meta.c: the bytes type t takes in the section, or -errno (pass 1). */
int32_t bpf_btf_check_meta(struct benv *env, const struct btf_type *t, uint32_t left);
/* btf_resolve.c: pass 2 over every type. */
int bpf_btf_resolve_all(struct benv *env);
