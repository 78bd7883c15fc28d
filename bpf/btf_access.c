/*
 * btf_access.c - what a load through a kernel-typed pointer (the verifier's PTR_TO_BTF_ID)
 * reads, from the struct's BTF: a scalar, or a pointer to another struct.
 *
 * Linux 6.1's btf_struct_access / btf_struct_walk are the reference for the outcome and the
 * log lines: an access must lie inside the struct (EACCES "access beyond struct"), inside one
 * member (EACCES "access beyond the end of member"), a pointer member is read whole or not at
 * all (EACCES), a hole or the inside of a bitfield is "doesn't have field" (EINVAL).  Nested
 * structs and unions are walked into; arrays are taken element by element, but a scalar read
 * may run on to the array's true end (scratch space, as in Linux).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"

#define MAX_WALK 32 /* nested structs followed before giving up (kernel BTF nests less) */

uint32_t bpf_btf_find_by_name_kind(const struct bpf_btf *btf, const char *name, uint32_t kind)
{
	for (uint32_t id = 1; id < btf->nr_types; id++) {
		const struct btf_type *t = btf->types[id];
		const char *n;

		if (bpf_btf_kind(t) != kind)
			continue;
		n = bpf_btf_str(btf, t->name_off);
		if (n && !strcmp(n, name))
			return id;
	}
	return 0;
}

static const char *type_name(const struct bpf_btf *btf, const struct btf_type *t)
{
	const char *n = bpf_btf_str(btf, t->name_off);

	return n ? n : "";
}

static bool is_struct(const struct btf_type *t)
{
	return t && (bpf_btf_kind(t) == BTF_KIND_STRUCT || bpf_btf_kind(t) == BTF_KIND_UNION);
}

static uint32_t member_bit_off(const struct btf_type *t, const struct btf_member *m)
{
	return BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
}

static uint32_t member_bitfield(const struct btf_type *t, const struct btf_member *m)
{
	return BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BITFIELD_SIZE(m->offset) : 0;
}

/*
 * The member's type through modifiers, its whole size in *size, and for an array (of arrays)
 * the element's type, id and the element count; NULL when it has no size.
 */
static const struct btf_type *resolve_member(const struct bpf_btf *btf, uint32_t *id,
					     uint32_t *size, uint32_t *nelems, bool *array)
{
	const struct btf_type *t = bpf_btf_type_id_size(btf, id, size);
	uint32_t n = 1, eid;

	*array = false;
	for (int depth = 0; t && bpf_btf_kind(t) == BTF_KIND_ARRAY && depth < MAX_WALK; depth++) {
		const struct btf_array *a = (const struct btf_array *)(t + 1);

		*array = true;
		n *= a->nelems;
		eid = a->type;
		t = bpf_btf_skip_modifiers(btf, eid, &eid);
		*id = eid;
	}
	*nelems = n;
	return t;
}

int bpf_btf_struct_access(const struct bpf_btf *btf, struct bpf_verifier_log *log,
			  uint32_t struct_id, uint32_t off, uint32_t size, uint32_t *next_id)
{
	const struct btf_type *t = bpf_btf_skip_modifiers(btf, struct_id, NULL);

	for (int depth = 0; depth < MAX_WALK; depth++) {
		const struct btf_member *m;
		const char *tname;
		bool descended = false;

		if (!t)
			return -EINVAL;
		tname = type_name(btf, t);
		if (!is_struct(t)) {
			bpf_log(log, "Type '%s' is not a struct\n", tname);
			return -EINVAL;
		}
		if ((uint64_t)off + size > t->size) {
			bpf_log(log, "access beyond struct %s at off %u size %u\n", tname, off, size);
			return -EACCES;
		}
		m = (const struct btf_member *)(t + 1);
		for (uint32_t i = 0; i < bpf_btf_vlen(t) && !descended; i++, m++) {
			uint32_t moff = member_bit_off(t, m) / 8, bits = member_bitfield(t, m);
			uint32_t mid = m->type, msize, nelems, mend;
			const struct btf_type *mt;
			const char *mname = bpf_btf_str(btf, m->name_off);
			bool array;

			if (off + size <= moff)
				break; /* past the access: nothing further can hold it */
			if (bits) {
				uint32_t end_bit = member_bit_off(t, m) + bits;

				/* a read that covers the whole bitfield is a scalar; any part of
				 * one is "no field" below, as Linux keeps it simple */
				if (off <= moff && (end_bit + 7) / 8 <= off + size)
					return BTF_WALK_SCALAR;
				continue;
			}
			if (off < moff)
				break; /* a hole */
			mt = resolve_member(btf, &mid, &msize, &nelems, &array);
			if (!mt) {
				bpf_log(log, "field %s doesn't have size\n", mname ? mname : "");
				return -EFAULT;
			}
			mend = moff + msize;
			if (off >= mend)
				continue;
			if (array) {
				if (!msize || !nelems)
					continue; /* an empty array */
				msize /= nelems;
				moff += (off - moff) / msize * msize;
			}
			if (is_struct(mt)) { /* the access is inside it: walk it from its start */
				off -= moff;
				t = mt;
				descended = true;
				continue;
			}
			if (bpf_btf_kind(mt) == BTF_KIND_PTR) {
				const struct btf_type *st;
				uint32_t sid;

				if (msize != size || off != moff) {
					bpf_log(log, "cannot access ptr member %s with moff %u in struct "
						     "%s with off %u size %u\n",
						mname ? mname : "", moff, tname, off, size);
					return -EACCES;
				}
				st = bpf_btf_skip_modifiers(btf, mt->type, &sid);
				if (is_struct(st)) {
					*next_id = sid;
					return BTF_WALK_PTR;
				}
			}
			if (off + size > mend) {
				bpf_log(log, "access beyond the end of member %s (mend:%u) in struct %s "
					     "with off %u size %u\n",
					mname ? mname : "", mend, tname, off, size);
				return -EACCES;
			}
			return BTF_WALK_SCALAR;
		}
		if (!descended) {
			bpf_log(log, "struct %s doesn't have field at offset %d\n", tname, (int)off);
			return -EINVAL;
		}
	}
	return -EINVAL;
}

bool bpf_btf_nested_struct_at(const struct bpf_btf *btf, uint32_t struct_id, uint32_t off,
			      uint32_t *out)
{
	const struct btf_type *t = bpf_btf_skip_modifiers(btf, struct_id, NULL);

	/* btf_struct_walk of one byte at off, up to the first struct member starting there */
	for (int depth = 0; depth < MAX_WALK && is_struct(t) && off < t->size; depth++) {
		const struct btf_member *m = (const struct btf_member *)(t + 1);
		const struct btf_type *next = NULL;

		for (uint32_t i = 0; i < bpf_btf_vlen(t) && !next; i++, m++) {
			uint32_t moff = member_bit_off(t, m) / 8, mid = m->type, msize, nelems;
			const struct btf_type *mt;
			bool array;

			if (member_bitfield(t, m) || off < moff)
				continue;
			mt = resolve_member(btf, &mid, &msize, &nelems, &array);
			if (!mt || off >= moff + msize)
				continue;
			if (array) {
				if (!msize || !nelems)
					continue;
				msize /= nelems;
				moff += (off - moff) / msize * msize;
			}
			if (!is_struct(mt))
				return false; /* a scalar or pointer there */
			if (off == moff) {
				*out = mid;
				return true;
			}
			off -= moff;
			next = mt;
		}
		t = next;
	}
	return false;
}
