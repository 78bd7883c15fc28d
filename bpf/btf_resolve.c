/*
 * btf_resolve.c - pass 2 of the BTF parser (Linux 6.1's btf_check_all_types): every type that
 * refers to others is followed depth first, at most 32 deep, with Linux's three stopping
 * rules (from a pointer: at anything but a modifier or pointer; from a struct or array: at
 * anything but a modifier, struct or array; else at what needs no resolving), so that a
 * struct may hold a pointer to itself but not itself.  A type met again on the walk's own
 * path is a loop (EEXIST).  On the way: array index and element types, each member placed
 * inside its struct by its type's rule, datasec variables sized, func arguments named, decl
 * tags on a component that exists; then every func_proto's return and argument types.
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf_parse.h"

/* ---- pass 2: references (resolve) ---- */

/* Where the walk may stop, by what it started from (Linux's resolve modes). */
static bool is_sink(const struct benv *env, const struct btf_type *next)
{
	switch (env->mode) {
	case MODE_TBD:
		return !needs_resolve(next);
	case MODE_PTR:
		return !is_modifier(next) && !is_kind(next, BTF_KIND_PTR);
	default:
		return !is_modifier(next) && !is_kind(next, BTF_KIND_ARRAY) && !is_struct(next);
	}
}

static bool is_resolved(const struct benv *env, uint32_t id)
{
	return env->visit[id] == RESOLVED;
}

static int push(struct benv *env, const struct btf_type *t, uint32_t id)
{
	if (env->top == MAX_DEPTH)
		return -E2BIG;
	if (env->visit[id] != NOT_VISITED)
		return -EEXIST; /* back on the walk's own path: a loop */
	env->visit[id] = VISITED;
	env->st[env->top].t = t;
	env->st[env->top].id = id;
	env->st[env->top].next = 0;
	env->top++;
	if (env->mode == MODE_TBD) {
		if (is_kind(t, BTF_KIND_PTR))
			env->mode = MODE_PTR;
		else if (is_struct(t) || is_kind(t, BTF_KIND_ARRAY))
			env->mode = MODE_AGGR;
	}
	return 0;
}

static void pop_resolved(struct benv *env, uint32_t rid, uint32_t rsize)
{
	uint32_t id = env->st[--env->top].id;

	env->b->rid[id] = rid;
	env->b->rsize[id] = rsize;
	env->visit[id] = RESOLVED;
}

static const struct btf_type *id_resolve(const struct bpf_btf *b, uint32_t *id)
{
	*id = b->rid[*id];
	return bpf_btf_type(b, *id);
}

#define BAD(msg)                                  \
	do {                                      \
		bpf_btf_log_type(env, t, true, "%s", msg); \
		return -EINVAL;                   \
	} while (0)

/* modifier, var and ptr: one reference, followed until a sized type (or void, fwd, func
 * proto where that is allowed) */
static int resolve_ref(struct benv *env, const struct btf_type *t)
{
	uint32_t k = bpf_btf_kind(t), nid = t->type;
	const struct btf_type *next = bpf_btf_type(env->b, nid);

	if (!next || source_only(next))
		BAD("Invalid type_id");
	if (!is_sink(env, next) && !is_resolved(env, nid))
		return push(env, next, nid);
	if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST &&
	    k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG && is_modifier(next)) {
		/* a var or ptr met a modifier resolved (for a struct) to a ptr: that ptr must
		 * not lead back here */
		uint32_t rid = nid;
		const struct btf_type *rt = id_resolve(env->b, &rid);

		if (rt && is_kind(rt, BTF_KIND_PTR) && !is_sink(env, rt) && !is_resolved(env, rid))
			return push(env, rt, rid);
	}
	if (!bpf_btf_type_id_size(env->b, &nid, NULL)) {
		if (k == BTF_KIND_VAR)
			BAD("Invalid type_id"); /* a variable has a size */
		if (is_resolved(env, nid))
			next = id_resolve(env->b, &nid);
		if (next != &bpf_btf_void && !is_kind(next, BTF_KIND_FWD) &&
		    !is_kind(next, BTF_KIND_FUNC_PROTO))
			BAD("Invalid type_id");
	}
	pop_resolved(env, nid, 0);
	return 0;
}

static int resolve_array(struct benv *env, const struct btf_type *t)
{
	const struct btf_array *a = (const struct btf_array *)(t + 1);
	uint32_t iid = a->index_type, eid = a->type, esize = 0;
	const struct btf_type *it = bpf_btf_type(env->b, iid), *et;

	if (nosize(it) || source_only(it))
		BAD("Invalid index");
	if (!is_sink(env, it) && !is_resolved(env, iid))
		return push(env, it, iid);
	it = bpf_btf_type_id_size(env->b, &iid, NULL);
	if (!it || !is_kind(it, BTF_KIND_INT) || !int_regular(it))
		BAD("Invalid index");
	et = bpf_btf_type(env->b, eid);
	if (nosize(et) || source_only(et))
		BAD("Invalid elem");
	if (!is_sink(env, et) && !is_resolved(env, eid))
		return push(env, et, eid);
	et = bpf_btf_type_id_size(env->b, &eid, &esize);
	if (!et)
		BAD("Invalid elem");
	if (is_kind(et, BTF_KIND_INT) && !int_regular(et))
		BAD("Invalid array of int");
	if (a->nelems && esize > UINT32_MAX / a->nelems)
		BAD("Array size overflows U32_MAX");
	pop_resolved(env, eid, esize * a->nelems);
	return 0;
}

#undef BAD
#define MBAD(msg)                              \
	do {                                   \
		bpf_btf_log_member(env, s, m, msg);    \
		return -EINVAL;                \
	} while (0)

static int member_check(struct benv *env, const struct btf_type *s, const struct btf_member *m,
			const struct btf_type *mt, bool kflag);

/* a plain (non-bitfield) member of a sized kind: whole bytes inside the struct */
static int member_bytes(struct benv *env, const struct btf_type *s, const struct btf_member *m,
			uint32_t size)
{
	if (m->offset & 7)
		MBAD("Member is not byte aligned");
	if (s->size - m->offset / 8 < size) /* unsigned, as Linux's check */
		MBAD("Member exceeds struct_size");
	return 0;
}

static int member_int(struct benv *env, const struct btf_type *s, const struct btf_member *m,
		      const struct btf_type *mt, bool kflag)
{
	uint32_t d = u32_at(mt, 0), off, nbits, copy;

	if (!kflag) {
		off = m->offset;
		if (UINT32_MAX - off < BTF_INT_OFFSET(d))
			MBAD("bits_offset exceeds U32_MAX");
		off += BTF_INT_OFFSET(d);
		nbits = BTF_INT_BITS(d);
	} else {
		if (!int_regular(mt))
			MBAD("Invalid member base type");
		nbits = BTF_MEMBER_BITFIELD_SIZE(m->offset);
		off = BTF_MEMBER_BIT_OFFSET(m->offset);
		if (!nbits) {
			if (off & 7)
				MBAD("Invalid member offset");
			nbits = BTF_INT_BITS(d);
		} else if (nbits > BTF_INT_BITS(d)) {
			MBAD("Invalid member bitfield_size");
		}
	}
	copy = nbits + (off & 7);
	if (copy > 128)
		MBAD("nr_copy_bits exceeds 128");
	if (s->size < off / 8 || s->size - off / 8 < BITS_UP(copy))
		MBAD("Member exceeds struct_size");
	return 0;
}

static int member_enum_kflag(struct benv *env, const struct btf_type *s,
			     const struct btf_member *m)
{
	uint32_t off = BTF_MEMBER_BIT_OFFSET(m->offset), nbits = BTF_MEMBER_BITFIELD_SIZE(m->offset);

	if (!nbits) {
		if (off & 7)
			MBAD("Member is not byte aligned");
		nbits = 32;
	} else if (nbits > 32) {
		MBAD("Invalid member bitfield_size");
	}
	if (s->size < BITS_UP(off + nbits))
		MBAD("Member exceeds struct_size");
	return 0;
}

static int member_float(struct benv *env, const struct btf_type *s, const struct btf_member *m,
			const struct btf_type *mt)
{
	uint32_t align = MIN(8u, mt->size) * 8;

	if (m->offset % align)
		MBAD("Member is not properly aligned");
	if ((uint64_t)m->offset / 8 + mt->size > s->size)
		MBAD("Member exceeds struct_size");
	return 0;
}

/* Linux's check_member / check_kflag_member of the member's type */
static int member_check(struct benv *env, const struct btf_type *s, const struct btf_member *m,
			const struct btf_type *mt, bool kflag)
{
	uint32_t k = bpf_btf_kind(mt), size = 0;

	if (is_modifier(mt)) {
		struct btf_member rm = *m;
		const struct btf_type *rt = bpf_btf_type_id_size(env->b, &rm.type, NULL);

		if (!rt)
			MBAD("Invalid member");
		return member_check(env, s, &rm, rt, kflag);
	}
	if (k == BTF_KIND_INT)
		return member_int(env, s, m, mt, kflag);
	if (kflag && (k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64))
		return member_enum_kflag(env, s, m);
	if (k != BTF_KIND_PTR && k != BTF_KIND_ARRAY && k != BTF_KIND_STRUCT &&
	    k != BTF_KIND_UNION && k != BTF_KIND_FLOAT && k != BTF_KIND_ENUM &&
	    k != BTF_KIND_ENUM64) {
		bpf_btf_log_type(env, s, false, kflag ? "Unsupported check_kflag_member" :
						 "Unsupported check_member");
		return -EINVAL;
	}
	if (kflag && BTF_MEMBER_BITFIELD_SIZE(m->offset))
		MBAD("Invalid member bitfield_size");
	/* no bitfield: the offset is bits only, as without kind_flag */
	switch (k) {
	case BTF_KIND_FLOAT:
		return member_float(env, s, m, mt);
	case BTF_KIND_PTR:
		size = 8;
		break;
	case BTF_KIND_ARRAY: {
		uint32_t aid = m->type;

		bpf_btf_type_id_size(env->b, &aid, &size);
		break;
	}
	default:
		size = mt->size;
		break;
	}
	return member_bytes(env, s, m, size);
}

static int resolve_struct(struct benv *env, const struct btf_type *s, uint16_t next)
{
	const struct btf_member *m = (const struct btf_member *)(s + 1);
	bool kflag = BTF_INFO_KFLAG(s->info);
	int err;

	if (next) { /* the member pushed last time is resolved now: place it */
		const struct btf_member *lm = m + next - 1;

		err = member_check(env, s, lm, bpf_btf_type(env->b, lm->type), kflag);
		if (err)
			return err;
	}
	for (uint32_t i = next; i < bpf_btf_vlen(s); i++) {
		const struct btf_type *mt = bpf_btf_type(env->b, m[i].type);

		if (nosize(mt) || source_only(mt)) {
			bpf_btf_log_member(env, s, &m[i], "Invalid member");
			return -EINVAL;
		}
		if (!is_sink(env, mt) && !is_resolved(env, m[i].type)) {
			env->st[env->top - 1].next = (uint16_t)(i + 1);
			return push(env, mt, m[i].type);
		}
		err = member_check(env, s, &m[i], mt, kflag);
		if (err)
			return err;
	}
	pop_resolved(env, 0, 0);
	return 0;
}

static int resolve_datasec(struct benv *env, const struct btf_type *t, uint16_t next)
{
	const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);

	for (uint32_t i = next; i < bpf_btf_vlen(t); i++) {
		const struct btf_type *vt = bpf_btf_type(env->b, v[i].type);
		uint32_t tid, tsize = 0;

		if (!vt || !is_kind(vt, BTF_KIND_VAR)) {
			bpf_btf_log_vsi(env, t, &v[i], "Not a VAR kind member");
			return -EINVAL;
		}
		if (!is_sink(env, vt) && !is_resolved(env, v[i].type)) {
			env->st[env->top - 1].next = (uint16_t)(i + 1);
			return push(env, vt, v[i].type);
		}
		tid = vt->type;
		if (!bpf_btf_type_id_size(env->b, &tid, &tsize)) {
			bpf_btf_log_vsi(env, t, &v[i], "Invalid type");
			return -EINVAL;
		}
		if (v[i].size < tsize) {
			bpf_btf_log_vsi(env, t, &v[i], "Invalid size");
			return -EINVAL;
		}
	}
	pop_resolved(env, 0, 0);
	return 0;
}

/* a func's type is a func_proto whose arguments all have names */
static int func_check(struct benv *env, const struct btf_type *t)
{
	const struct btf_type *p = bpf_btf_type(env->b, t->type);
	const struct btf_param *a;

	if (!p || !is_kind(p, BTF_KIND_FUNC_PROTO)) {
		bpf_btf_log_type(env, t, true, "Invalid type_id");
		return -EINVAL;
	}
	a = (const struct btf_param *)(p + 1);
	for (uint32_t i = 0; i < bpf_btf_vlen(p); i++) {
		if (!a[i].name_off && a[i].type) {
			bpf_btf_log_type(env, t, true, "Invalid arg#%u", i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

static int resolve_decl_tag(struct benv *env, const struct btf_type *t)
{
	uint32_t nid = t->type, vlen;
	const struct btf_type *next = bpf_btf_type(env->b, nid);
	int32_t idx = (int32_t)u32_at(t, 0);

	if (!next || !(is_kind(next, BTF_KIND_FUNC) || is_struct(next) ||
		       is_kind(next, BTF_KIND_VAR) || is_kind(next, BTF_KIND_TYPEDEF))) {
		bpf_btf_log_type(env, t, true, "Invalid type_id");
		return -EINVAL;
	}
	if (!is_sink(env, next) && !is_resolved(env, nid))
		return push(env, next, nid);
	if (idx != -1) {
		if (is_kind(next, BTF_KIND_VAR) || is_kind(next, BTF_KIND_TYPEDEF)) {
			bpf_btf_log_type(env, t, true, "Invalid component_idx");
			return -EINVAL;
		}
		if (is_struct(next)) {
			vlen = bpf_btf_vlen(next);
		} else {
			const struct btf_type *p = bpf_btf_type(env->b, next->type);

			vlen = p ? bpf_btf_vlen(p) : 0;
		}
		if ((uint32_t)idx >= vlen) {
			bpf_btf_log_type(env, t, true, "Invalid component_idx");
			return -EINVAL;
		}
	}
	pop_resolved(env, nid, 0);
	return 0;
}

static int resolve_top(struct benv *env)
{
	const struct btf_type *t = env->st[env->top - 1].t;
	uint16_t next = env->st[env->top - 1].next;
	int err;

	switch (bpf_btf_kind(t)) {
	case BTF_KIND_ARRAY:
		return resolve_array(env, t);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return resolve_struct(env, t, next);
	case BTF_KIND_DATASEC:
		return resolve_datasec(env, t, next);
	case BTF_KIND_DECL_TAG:
		return resolve_decl_tag(env, t);
	case BTF_KIND_FUNC:
		err = func_check(env, t);
		if (!err)
			pop_resolved(env, t->type, 0);
		return err;
	case BTF_KIND_PTR:
	case BTF_KIND_VAR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return resolve_ref(env, t);
	default: /* never pushed: what needs no resolving is a sink */
		bpf_btf_log_type(env, t, false, "Unsupported resolve");
		return -EINVAL;
	}
}

/* What a resolved type must look like (Linux's final sanity check) */
static bool resolve_valid(struct benv *env, const struct btf_type *t, uint32_t id)
{
	const struct bpf_btf *b = env->b;

	if (!is_resolved(env, id))
		return false;
	if (is_struct(t) || is_kind(t, BTF_KIND_DATASEC))
		return !b->rid[id] && !b->rsize[id];
	if (is_kind(t, BTF_KIND_DECL_TAG) || is_kind(t, BTF_KIND_FUNC))
		return b->rid[id] && !b->rsize[id];
	if (is_modifier(t) || is_kind(t, BTF_KIND_PTR) || is_kind(t, BTF_KIND_VAR)) {
		uint32_t r = id;
		const struct btf_type *rt = id_resolve(b, &r);

		return rt && !is_modifier(rt) && !is_kind(rt, BTF_KIND_VAR) &&
		       !is_kind(rt, BTF_KIND_DATASEC);
	}
	if (is_kind(t, BTF_KIND_ARRAY)) {
		const struct btf_array *a = (const struct btf_array *)(t + 1);
		uint32_t eid = a->type, esize = 0;
		const struct btf_type *et = bpf_btf_type_id_size(b, &eid, &esize);

		return et && !is_modifier(et) && a->nelems * esize == b->rsize[id];
	}
	return false;
}

static int resolve(struct benv *env, const struct btf_type *t, uint32_t id)
{
	uint32_t saved = env->log_id;
	int err = 0;

	env->mode = MODE_TBD;
	push(env, t, id);
	while (!err && env->top) {
		env->log_id = env->st[env->top - 1].id;
		err = resolve_top(env);
	}
	env->log_id = id;
	if (err == -E2BIG)
		bpf_btf_log_type(env, t, true, "Exceeded max resolving depth:%u", MAX_DEPTH);
	else if (err == -EEXIST)
		bpf_btf_log_type(env, t, true, "Loop detected");
	if (!err && !resolve_valid(env, t, id)) {
		bpf_btf_log_type(env, t, true, "Invalid resolve state");
		err = -EINVAL;
	}
	env->log_id = saved;
	return err;
}

static int resolve_if_needed(struct benv *env, const struct btf_type *t, uint32_t id)
{
	return needs_resolve(t) && !is_resolved(env, id) ? resolve(env, t, id) : 0;
}

/* a func_proto's return type and arguments: sized (or void return, a last vararg) */
static int proto_check(struct benv *env, const struct btf_type *t)
{
	const struct btf_param *a = (const struct btf_param *)(t + 1);
	uint32_t n = bpf_btf_vlen(t);
	int err;

	if (t->type) {
		uint32_t rid = t->type;
		const struct btf_type *rt = bpf_btf_type(env->b, rid);

		if (!rt) {
			bpf_btf_log_type(env, t, true, "Invalid return type");
			return -EINVAL;
		}
		err = resolve_if_needed(env, rt, rid);
		if (err)
			return err;
		if (!bpf_btf_type_id_size(env->b, &rid, NULL)) {
			bpf_btf_log_type(env, t, true, "Invalid return type");
			return -EINVAL;
		}
	}
	if (!n)
		return 0;
	if (!a[n - 1].type) {
		if (a[n - 1].name_off) {
			bpf_btf_log_type(env, t, true, "Invalid arg#%u", n);
			return -EINVAL;
		}
		n--;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t aid = a[i].type;
		const struct btf_type *at = bpf_btf_type(env->b, aid);

		if (!at || (a[i].name_off && (!bpf_btf_name_off_ok(env->b, a[i].name_off) ||
					      !bpf_btf_name_ok(env->b, a[i].name_off, false)))) {
			bpf_btf_log_type(env, t, true, "Invalid arg#%u", i + 1);
			return -EINVAL;
		}
		err = resolve_if_needed(env, at, aid);
		if (err)
			return err;
		if (!bpf_btf_type_id_size(env->b, &aid, NULL)) {
			bpf_btf_log_type(env, t, true, "Invalid arg#%u", i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

int bpf_btf_resolve_all(struct benv *env)
{
	struct bpf_btf *b = env->b;
	int err;

	b->rid = ksvc_alloc(sizeof(uint32_t) * b->nr_types);
	b->rsize = ksvc_alloc(sizeof(uint32_t) * b->nr_types);
	env->visit = ksvc_alloc(b->nr_types);
	if (!b->rid || !b->rsize || !env->visit)
		return -ENOMEM;
	memset(b->rid, 0, sizeof(uint32_t) * b->nr_types);
	memset(b->rsize, 0, sizeof(uint32_t) * b->nr_types);
	memset(env->visit, 0, b->nr_types);
	env->resolving = true;
	for (uint32_t id = 1; id < b->nr_types; id++) {
		const struct btf_type *t = b->types[id];

		env->log_id = id;
		err = resolve_if_needed(env, t, id);
		if (!err && is_kind(t, BTF_KIND_FUNC_PROTO))
			err = proto_check(env, t);
		if (err)
			return err;
	}
	return 0;
}

