/*
 * btf.c - BPF_BTF_LOAD's parser and validator for program BTF (portable: no fds, no user
 * memory; btf_sys.c hands it a kernel copy): the header, the sections, the log, the object
 * and its lookups here; pass 1 in btf_meta.c, pass 2 in btf_resolve.c.
 *
 * Linux 6.1's kernel/bpf/btf.c is the reference for what is accepted, in which order it is
 * checked, the errno and the log text (btf_log_level set):
 *   header: hdr_len, unsupported tail (E2BIG), magic, version and flags (ENOTSUPP), no data,
 *     the two sections without gap or overlap, the string section last, NUL first and last;
 *   pass 1 (check_meta): each type's info bits, kind, name offset and its kind's own rules
 *     (names as C identifiers, vlen/kind_flag/size rules, members in order), one log line per
 *     type ("[id] KIND name details") as Linux prints them;
 *   pass 2 (resolve): every reference followed depth first with Linux's three modes (what a
 *     pointer, a struct or array, or anything else may stop at), loops ("Loop detected"), depth
 *     32, member placement inside its struct, datasec variables, func and func_proto
 *     arguments; then the type-tag chains (type tags before other modifiers, ELOOP).
 * Not here: kernel or module BTF (no base BTF: type ids and string offsets start at 0), the
 * pretty printer, kptr and timer fields.
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf_parse.h"

_Static_assert(sizeof(struct btf_header) == 24, "BTF header");
_Static_assert(sizeof(struct btf_type) == 12, "btf_type");

const struct btf_type bpf_btf_void;

static const char *const kind_str[NR_BTF_KINDS] = {
	[BTF_KIND_UNKN] = "UNKNOWN",	   [BTF_KIND_INT] = "INT",
	[BTF_KIND_PTR] = "PTR",		   [BTF_KIND_ARRAY] = "ARRAY",
	[BTF_KIND_STRUCT] = "STRUCT",	   [BTF_KIND_UNION] = "UNION",
	[BTF_KIND_ENUM] = "ENUM",	   [BTF_KIND_FWD] = "FWD",
	[BTF_KIND_TYPEDEF] = "TYPEDEF",	   [BTF_KIND_VOLATILE] = "VOLATILE",
	[BTF_KIND_CONST] = "CONST",	   [BTF_KIND_RESTRICT] = "RESTRICT",
	[BTF_KIND_FUNC] = "FUNC",	   [BTF_KIND_FUNC_PROTO] = "FUNC_PROTO",
	[BTF_KIND_VAR] = "VAR",		   [BTF_KIND_DATASEC] = "DATASEC",
	[BTF_KIND_FLOAT] = "FLOAT",	   [BTF_KIND_DECL_TAG] = "DECL_TAG",
	[BTF_KIND_TYPE_TAG] = "TYPE_TAG", [BTF_KIND_ENUM64] = "ENUM64",
};

/* ---- lookups ---- */

const char *bpf_btf_kind_name(uint32_t kind)
{
	return kind < NR_BTF_KINDS && kind_str[kind] ? kind_str[kind] : "UNKNOWN";
}

const struct btf_type *bpf_btf_type(const struct bpf_btf *btf, uint32_t id)
{
	return id < btf->nr_types ? btf->types[id] : NULL;
}

const char *bpf_btf_str(const struct bpf_btf *btf, uint32_t off)
{
	return off < btf->hdr.str_len ? btf->strs + off : NULL;
}

bool bpf_btf_name_off_ok(const struct bpf_btf *b, uint32_t off)
{
	return off <= BTF_MAX_NAME_OFFSET && off < b->hdr.str_len;
}

static bool name_char_ok(char c, bool first, bool dot_ok)
{
	bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	bool digit = c >= '0' && c <= '9';

	return (first ? alpha : alpha || digit) || c == '_' || (dot_ok && c == '.');
}

/* A C identifier (dot_ok: a section name may hold dots) shorter than NAME_MAX_LEN. */
bool bpf_btf_name_ok(const struct bpf_btf *b, uint32_t off, bool dot_ok)
{
	const char *s = bpf_btf_str(b, off), *limit;

	if (!s || !name_char_ok(*s, true, dot_ok))
		return false;
	limit = s + NAME_MAX_LEN;
	for (s++; *s && s < limit; s++)
		if (!name_char_ok(*s, false, dot_ok))
			return false;
	return !*s;
}

const char *bpf_btf_name_of(const struct bpf_btf *b, uint32_t off)
{
	const char *s;

	if (!off)
		return "(anon)";
	s = bpf_btf_str(b, off);
	return s ? s : "(invalid-name-offset)";
}

const struct btf_type *bpf_btf_skip_modifiers(const struct bpf_btf *btf, uint32_t id,
					      uint32_t *res)
{
	const struct btf_type *t = bpf_btf_type(btf, id);

	for (int n = 0; t && is_modifier(t) && n < MAX_DEPTH; n++) {
		id = t->type;
		t = bpf_btf_type(btf, id);
	}
	if (res)
		*res = id;
	return t;
}

const struct btf_type *bpf_btf_type_id_size(const struct bpf_btf *btf, uint32_t *id,
					    uint32_t *size)
{
	uint32_t sid = *id, sz;
	const struct btf_type *t = bpf_btf_type(btf, sid);

	if (nosize(t))
		return NULL;
	if (!has_size(t) && !is_kind(t, BTF_KIND_ARRAY) && !is_kind(t, BTF_KIND_PTR)) {
		if (!is_modifier(t) && !is_kind(t, BTF_KIND_VAR))
			return NULL;
		sid = btf->rid[sid];
		t = bpf_btf_type(btf, sid);
		if (nosize(t))
			return NULL;
	}
	if (has_size(t))
		sz = t->size;
	else if (is_kind(t, BTF_KIND_ARRAY))
		sz = btf->rsize[sid];
	else if (is_kind(t, BTF_KIND_PTR))
		sz = 8;
	else
		return NULL;
	*id = sid;
	if (size)
		*size = sz;
	return t;
}

/* ---- the log ---- */

bool bpf_btf_log_on(const struct benv *env)
{
	return env->log && env->log->level && env->log->ubuf;
}

static void elogv(struct benv *env, const char *fmt, va_list ap)
{
	char buf[256];

	kvsnprintf(buf, sizeof(buf), fmt, ap);
	bpf_log(env->log, "%s", buf);
}

/* btf_verifier_log: text as given, no newline added */
void bpf_btf_elog(struct benv *env, const char *fmt, ...)
{
	va_list ap;

	if (!bpf_btf_log_on(env))
		return;
	va_start(ap, fmt);
	elogv(env, fmt, ap);
	va_end(ap);
}

static void proto_details(struct benv *env, const struct btf_type *t)
{
	const struct btf_param *a = (const struct btf_param *)(t + 1);
	uint32_t n = bpf_btf_vlen(t);

	bpf_btf_elog(env, "return=%u args=(", t->type);
	if (!n) {
		bpf_btf_elog(env, "void");
	} else if (n == 1 && !a[0].type) {
		bpf_btf_elog(env, "vararg");
	} else {
		bpf_btf_elog(env, "%u %s", a[0].type, bpf_btf_name_of(env->b, a[0].name_off));
		for (uint32_t i = 1; i + 1 < n; i++)
			bpf_btf_elog(env, ", %u %s", a[i].type, bpf_btf_name_of(env->b, a[i].name_off));
		if (n > 1 && a[n - 1].type)
			bpf_btf_elog(env, ", %u %s", a[n - 1].type, bpf_btf_name_of(env->b, a[n - 1].name_off));
		else if (n > 1)
			bpf_btf_elog(env, ", vararg");
	}
	bpf_btf_elog(env, ")");
}

static void details(struct benv *env, const struct btf_type *t)
{
	static const char *const enc[] = { "(none)", "SIGNED", "CHAR", "UNKN", "BOOL" };
	uint32_t d;

	switch (bpf_btf_kind(t)) {
	case BTF_KIND_INT:
		d = u32_at(t, 0);
		bpf_btf_elog(env, "size=%u bits_offset=%u nr_bits=%u encoding=%s", t->size,
		     BTF_INT_OFFSET(d), BTF_INT_BITS(d),
		     BTF_INT_ENCODING(d) <= 4 ? enc[BTF_INT_ENCODING(d)] : "UNKN");
		break;
	case BTF_KIND_ARRAY:
		bpf_btf_elog(env, "type_id=%u index_type_id=%u nr_elems=%u", u32_at(t, 0), u32_at(t, 1),
		     u32_at(t, 2));
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_DATASEC:
		bpf_btf_elog(env, "size=%u vlen=%u", t->size, bpf_btf_vlen(t));
		break;
	case BTF_KIND_FWD:
		bpf_btf_elog(env, "%s", BTF_INFO_KFLAG(t->info) ? "union" : "struct");
		break;
	case BTF_KIND_FUNC_PROTO:
		proto_details(env, t);
		break;
	case BTF_KIND_VAR:
		bpf_btf_elog(env, "type_id=%u linkage=%u", t->type, u32_at(t, 0));
		break;
	case BTF_KIND_FLOAT:
		bpf_btf_elog(env, "size=%u", t->size);
		break;
	case BTF_KIND_DECL_TAG:
		bpf_btf_elog(env, "type=%u component_idx=%d", t->type, (int32_t)u32_at(t, 0));
		break;
	default: /* ptr, the modifiers, func */
		bpf_btf_elog(env, "type_id=%u", t->type);
		break;
	}
}

/* "[id] KIND name [details][ msg]\n"; with_details false for a type whose extra data may be
 * missing (Linux's btf_verifier_log_basic) */
void bpf_btf_log_type(struct benv *env, const struct btf_type *t, bool with_details,
		     const char *fmt, ...)
{
	va_list ap;

	if (!bpf_btf_log_on(env))
		return;
	bpf_btf_elog(env, "[%u] %s %s%s", env->log_id, kind_str[bpf_btf_kind(t)],
	     bpf_btf_name_of(env->b, t->name_off), with_details ? " " : "");
	if (with_details)
		details(env, t);
	if (fmt && *fmt) {
		bpf_btf_elog(env, " ");
		va_start(ap, fmt);
		elogv(env, fmt, ap);
		va_end(ap);
	}
	bpf_btf_elog(env, "\n");
}

void bpf_btf_log_member(struct benv *env, const struct btf_type *s, const struct btf_member *m,
		       const char *fmt)
{
	if (!bpf_btf_log_on(env))
		return;
	if (env->resolving)
		bpf_btf_log_type(env, s, true, NULL);
	if (BTF_INFO_KFLAG(s->info))
		bpf_btf_elog(env, "\t%s type_id=%u bitfield_size=%u bits_offset=%u",
		     bpf_btf_name_of(env->b, m->name_off), m->type, BTF_MEMBER_BITFIELD_SIZE(m->offset),
		     BTF_MEMBER_BIT_OFFSET(m->offset));
	else
		bpf_btf_elog(env, "\t%s type_id=%u bits_offset=%u", bpf_btf_name_of(env->b, m->name_off), m->type,
		     m->offset);
	if (fmt && *fmt)
		bpf_btf_elog(env, " %s", fmt);
	bpf_btf_elog(env, "\n");
}

void bpf_btf_log_vsi(struct benv *env, const struct btf_type *ds,
		    const struct btf_var_secinfo *v, const char *fmt)
{
	if (!bpf_btf_log_on(env))
		return;
	if (env->resolving)
		bpf_btf_log_type(env, ds, true, NULL);
	bpf_btf_elog(env, "\t type_id=%u offset=%u size=%u", v->type, v->offset, v->size);
	if (fmt && *fmt)
		bpf_btf_elog(env, " %s", fmt);
	bpf_btf_elog(env, "\n");
}

/* ---- header and sections ---- */

static int parse_hdr(struct benv *env)
{
	struct bpf_btf *b = env->b;
	struct btf_header *h = &b->hdr;
	uint32_t hdr_len, total, expect;
	struct {
		uint32_t off, len;
	} sec[2], tmp;

	if (b->size < offsetof(struct btf_header, hdr_len) + sizeof(uint32_t)) {
		bpf_btf_elog(env, "hdr_len not found");
		return -EINVAL;
	}
	memcpy(&hdr_len, b->data + offsetof(struct btf_header, hdr_len), sizeof(hdr_len));
	if (b->size < hdr_len) {
		bpf_btf_elog(env, "btf_header not found");
		return -EINVAL;
	}
	for (uint32_t i = sizeof(*h); i < hdr_len; i++) {
		if (b->data[i]) {
			bpf_btf_elog(env, "Unsupported btf_header");
			return -E2BIG;
		}
	}
	memset(h, 0, sizeof(*h));
	memcpy(h, b->data, MIN(hdr_len, (uint32_t)sizeof(*h)));
	if (bpf_btf_log_on(env)) {
		bpf_btf_elog(env, "magic: 0x%x\n", h->magic);
		bpf_btf_elog(env, "version: %u\n", h->version);
		bpf_btf_elog(env, "flags: 0x%x\n", h->flags);
		bpf_btf_elog(env, "hdr_len: %u\n", h->hdr_len);
		bpf_btf_elog(env, "type_off: %u\n", h->type_off);
		bpf_btf_elog(env, "type_len: %u\n", h->type_len);
		bpf_btf_elog(env, "str_off: %u\n", h->str_off);
		bpf_btf_elog(env, "str_len: %u\n", h->str_len);
		bpf_btf_elog(env, "btf_total_size: %u\n", b->size);
	}
	if (h->magic != BTF_MAGIC) {
		bpf_btf_elog(env, "Invalid magic");
		return -EINVAL;
	}
	if (h->version != BTF_VERSION) {
		bpf_btf_elog(env, "Unsupported version");
		return -BPF_ENOTSUPP;
	}
	if (h->flags) {
		bpf_btf_elog(env, "Unsupported flags");
		return -BPF_ENOTSUPP;
	}
	if (b->size == h->hdr_len) {
		bpf_btf_elog(env, "No data");
		return -EINVAL;
	}
	/* the two sections sorted by offset (then length) tile what follows the header */
	sec[0].off = h->type_off, sec[0].len = h->type_len;
	sec[1].off = h->str_off, sec[1].len = h->str_len;
	if (sec[1].off < sec[0].off || (sec[1].off == sec[0].off && sec[1].len < sec[0].len)) {
		tmp = sec[0], sec[0] = sec[1], sec[1] = tmp;
	}
	total = 0;
	expect = b->size - h->hdr_len;
	for (int i = 0; i < 2; i++) {
		if (expect < sec[i].off) {
			bpf_btf_elog(env, "Invalid section offset");
			return -EINVAL;
		}
		if (total < sec[i].off) {
			bpf_btf_elog(env, "Unsupported section found");
			return -EINVAL;
		}
		if (total > sec[i].off) {
			bpf_btf_elog(env, "Section overlap found");
			return -EINVAL;
		}
		if (expect - total < sec[i].len) {
			bpf_btf_elog(env, "Total section length too long");
			return -EINVAL;
		}
		total += sec[i].len;
	}
	if (expect != total) {
		bpf_btf_elog(env, "Unsupported section found");
		return -EINVAL;
	}
	return 0;
}

static int parse_strs(struct benv *env)
{
	struct bpf_btf *b = env->b;
	const struct btf_header *h = &b->hdr;
	const char *start = (const char *)b->data + h->hdr_len + h->str_off;

	if ((uint64_t)h->hdr_len + h->str_off + h->str_len != b->size) {
		bpf_btf_elog(env, "String section is not at the end");
		return -EINVAL;
	}
	b->strs = start;
	if (!h->str_len || h->str_len - 1 > BTF_MAX_NAME_OFFSET || start[h->str_len - 1] ||
	    start[0]) {
		bpf_btf_elog(env, "Invalid string section");
		return -EINVAL;
	}
	return 0;
}

static int parse_types(struct benv *env)
{
	struct bpf_btf *b = env->b;
	const struct btf_header *h = &b->hdr;
	uint32_t left, cap = 0, nwords;
	const uint8_t *cur;
	int err;

	if (h->type_off & 3) {
		bpf_btf_elog(env, "Unaligned type_off");
		return -EINVAL;
	}
	if (!h->type_len) {
		bpf_btf_elog(env, "No type found");
		return -EINVAL;
	}
	/* types are read as words: an aligned copy whatever hdr_len was */
	nwords = (h->type_len + 3) / 4;
	b->tsec = ksvc_alloc((size_t)nwords * 4);
	if (!b->tsec)
		return -ENOMEM;
	b->tsec[nwords - 1] = 0;
	memcpy(b->tsec, b->data + h->hdr_len + h->type_off, h->type_len);
	b->nr_types = 1;
	cur = (const uint8_t *)b->tsec;
	left = h->type_len;
	env->log_id = 1;
	while (left) {
		const struct btf_type *t = (const struct btf_type *)cur;
		int32_t n = bpf_btf_check_meta(env, t, left);

		if (n < 0)
			return n;
		if (b->nr_types >= cap) {
			const struct btf_type **nt;

			if (b->nr_types == BTF_MAX_TYPE) {
				bpf_btf_elog(env, "Exceeded max num of types");
				return -E2BIG;
			}
			cap = cap ? cap * 2 : 64;
			nt = ksvc_alloc(sizeof(*nt) * cap);
			if (!nt)
				return -ENOMEM;
			if (b->types)
				memcpy(nt, b->types, sizeof(*nt) * b->nr_types);
			ksvc_free(b->types);
			b->types = nt;
			b->types[0] = &bpf_btf_void;
		}
		b->types[b->nr_types++] = t;
		cur += n;
		left -= (uint32_t)n;
		env->log_id++;
	}
	err = bpf_btf_resolve_all(env);
	return err;
}

/* Type tags come first in a modifier chain; chains end (btf_check_type_tags). */
static int check_type_tags(struct benv *env)
{
	struct bpf_btf *b = env->b;
	uint32_t good = 0;

	for (uint32_t i = 1; i < b->nr_types; i++) {
		const struct btf_type *t = b->types[i];
		uint32_t cur = i;
		int limit = 32;
		bool in_tags;

		if (!is_modifier(t))
			continue;
		in_tags = is_kind(t, BTF_KIND_TYPE_TAG);
		while (is_modifier(t)) {
			if (!limit--) {
				bpf_btf_elog(env, "Max chain length or cycle detected");
				return -ELOOP;
			}
			if (is_kind(t, BTF_KIND_TYPE_TAG)) {
				if (!in_tags) {
					bpf_btf_elog(env, "Type tags don't precede modifiers");
					return -EINVAL;
				}
			} else {
				in_tags = false;
			}
			if (cur <= good)
				break;
			cur = t->type;
			t = bpf_btf_type(b, cur);
			if (!t)
				return -EINVAL;
		}
		good = i;
	}
	return 0;
}

static void btf_free(struct bpf_btf *b)
{
	ksvc_free(b->types);
	ksvc_free(b->tsec);
	ksvc_free(b->rid);
	ksvc_free(b->rsize);
	ksvc_free(b->data);
	ksvc_free(b);
}

int bpf_btf_parse(const void *data, uint32_t size, struct bpf_verifier_log *log,
		  struct bpf_btf **out)
{
	struct benv env = { .log = log };
	struct bpf_btf *b;
	int err;

	if (size > BPF_BTF_MAX_SIZE)
		return -E2BIG;
	b = ksvc_alloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	memset(b, 0, sizeof(*b));
	b->data = ksvc_alloc(size ? size : 1);
	if (!b->data) {
		ksvc_free(b);
		return -ENOMEM;
	}
	memcpy(b->data, data, size);
	b->size = size;
	env.b = b;
	err = parse_hdr(&env);
	if (!err)
		err = parse_strs(&env);
	if (!err)
		err = parse_types(&env);
	if (!err)
		err = check_type_tags(&env);
	if (!err && log && log->level && (log->truncated || log->len >= log->size - 1))
		err = -ENOSPC;
	ksvc_free(env.visit);
	if (err) {
		btf_free(b);
		return err;
	}
	atomic_store(&b->refcnt, 1);
	*out = b;
	return 0;
}

void bpf_btf_get(struct bpf_btf *btf)
{
	atomic_fetch_add(&btf->refcnt, 1);
}

void bpf_btf_put(struct bpf_btf *btf)
{
	if (!btf || atomic_fetch_sub(&btf->refcnt, 1) != 1)
		return;
	if (btf->id)
		bpf_id_free(BPF_OBJ_BTF, btf->id);
	btf_free(btf);
}

