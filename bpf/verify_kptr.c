/*
 * verify_kptr.c - the verifier's rules for kptrs: the kernel-object pointers a map value's BTF
 * tags "kptr" (map_btf.c finds them), as Linux 6.1's check_map_access (kptr part),
 * check_map_kptr_access, map_kptr_match_type and process_kptr_func have them.
 *
 * A kptr is 8 bytes at a constant offset, reached only by a BPF_MEM load or store of a double
 * word (never a helper, an atomic or a variable offset).  A load gives the pointed-to struct,
 * untrusted and maybe NULL ("untrusted_ptr_or_null_"): after the NULL check its fields are read
 * with probe reads, and a walk from it stays untrusted.  A store takes NULL or a pointer to that
 * struct (or to an object that starts with it).  Errors are EACCES with Linux's log lines.
 * Referenced kptrs ("kptr_ref") never reach here: map_btf.c refuses them (no destructor kfunc
 * exists in this kernel), so bpf_kptr_xchg, which works on them only, is always refused.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"
#include "verify.h"

static const char *kname(uint32_t id)
{
	const struct bpf_btf *btf = bpf_btf_vmlinux();
	const struct btf_type *t = btf ? bpf_btf_type(btf, id) : NULL;
	const char *n = t ? bpf_btf_str(btf, t->name_off) : NULL;

	return n ? n : "";
}

static bool var_part(const struct reg *p)
{
	return p->smin != 0 || p->smax != 0;
}

int kptr_check_overlap(struct venv *env, const struct reg *p, int64_t off, uint64_t size,
		       bool helper)
{
	const struct bpf_map *m = p->map;

	for (uint32_t i = 0; i < m->nr_kptrs; i++) {
		int64_t k = m->kptrs[i].off;

		if (!(p->smin + off < k + 8 && k < (int64_t)p->umax + off + (int64_t)size))
			continue;
		if (helper)
			return verr(env, -EACCES, "kptr cannot be accessed indirectly by helper\n");
		if (var_part(p))
			return verr(env, -EACCES, "kptr access cannot have variable offset\n");
		if (k != off + (int64_t)p->umin)
			return verr(env, -EACCES, "kptr access misaligned expected=%u off=%llu\n",
				    (unsigned int)k, (unsigned long long)(off + (int64_t)p->umin));
		if (size != 8)
			return verr(env, -EACCES, "kptr access size must be BPF_DW\n");
		break;
	}
	return 0;
}

/* btf_struct_ids_match: id at off is need, or (not strict) off starts a nested struct that
 * is need or begins with it. */
static bool ids_match(uint32_t id, int32_t off, uint32_t need, bool strict)
{
	const struct bpf_btf *btf = bpf_btf_vmlinux();

	if (!off && id == need)
		return true;
	if (strict || !btf)
		return false;
	for (int depth = 0; depth < 32; depth++) {
		if (!bpf_btf_nested_struct_at(btf, id, (uint32_t)off, &id))
			return false;
		if (id == need)
			return true;
		off = 0;
	}
	return false;
}

/* map_kptr_match_type: r (regno) may be stored in kptr k (or exchanged into it). */
static int kptr_match(struct venv *env, const struct bpf_kptr_field *k, const struct reg *r,
		      uint32_t regno)
{
	const char *targ = kname(k->btf_id), *rname = "";
	bool ok = r->type == PTR_TO_BTF_ID || (!k->ref && (r->type == PTR_TO_BTF_ID_UNTRUSTED ||
							    r->type == PTR_TO_BTF_ID_UNTRUSTED_OR_NULL));

	if (ok) {
		rname = kname(r->btf_id);
		/* __check_ptr_off_reg with a fixed offset allowed */
		if (r->off < 0)
			return verr(env, -EACCES, "negative offset %s ptr R%u off=%d disallowed\n",
				    reg_type_name(r->type), regno, r->off);
		if (var_part(r) || r->umin)
			return verr(env, -EACCES, "variable %s access var_off=(%#llx; %#llx) disallowed\n",
				    reg_type_name(r->type), (unsigned long long)r->umin,
				    (unsigned long long)(r->umax - r->umin));
		if (ids_match(r->btf_id, r->off, k->btf_id, k->ref))
			return 0;
	}
	return verr(env, -EACCES, "invalid kptr access, R%u type=%s%s expected=%s%s%s%s%s\n", regno,
		    reg_type_name(r->type), rname, reg_type_name(PTR_TO_BTF_ID), targ,
		    k->ref ? "" : " or ", k->ref ? "" : reg_type_name(PTR_TO_BTF_ID_UNTRUSTED),
		    k->ref ? "" : targ);
}

int kptr_field_access(struct venv *env, const struct bpf_kptr_field *k, int32_t value_regno)
{
	const struct bpf_insn *in = &env->insns[env->idx];
	uint8_t cls = BPF_CLASS(in->code);
	struct frame *f = cur_frame(env);

	if (BPF_MODE(in->code) != BPF_MEM)
		return verr(env, -EACCES, "kptr in map can only be accessed using BPF_MEM instruction "
					  "mode\n");
	if (cls != BPF_LDX && k->ref)
		return verr(env, -EACCES, "store to referenced kptr disallowed\n");
	switch (cls) {
	case BPF_LDX: {
		struct reg *d;

		if (value_regno < 0)
			return 0;
		d = &f->regs[value_regno];
		memset(d, 0, sizeof(*d));
		d->type = PTR_TO_BTF_ID_UNTRUSTED_OR_NULL;
		d->btf_id = k->btf_id;
		d->id = ++env->next_id; /* for the NULL check */
		return 0;
	}
	case BPF_STX: {
		const struct reg *v = &f->regs[in->src_reg];

		if (reg_is_const(v) && !v->umin)
			return 0;
		return kptr_match(env, k, v, in->src_reg);
	}
	case BPF_ST:
		if (in->imm)
			return verr(env, -EACCES, "BPF_ST imm must be 0 when storing to kptr at off=%u\n",
				    k->off);
		return 0;
	default:
		return verr(env, -EACCES, "kptr in map can only be accessed using BPF_LDX/BPF_STX/"
					  "BPF_ST\n");
	}
}

int kptr_xchg_arg(struct venv *env, uint32_t regno, const struct reg *r)
{
	const struct bpf_map *m = r->map;
	const struct bpf_kptr_field *k;
	int64_t off;

	if (var_part(r))
		return verr(env, -EACCES, "R%u doesn't have constant offset. kptr has to be at the "
					  "constant offset\n", regno);
	if (!m->btf)
		return verr(env, -EACCES, "map '%s' has to have BTF in order to use bpf_kptr_xchg\n",
			    m->name);
	if (!m->nr_kptrs) {
		if (m->kptr_err == -E2BIG)
			return verr(env, -EACCES, "map '%s' has more than %d kptr\n", m->name,
				    BPF_MAP_KPTR_MAX);
		return verr(env, -EACCES, "map '%s' has no valid kptr\n", m->name);
	}
	off = r->off + (int64_t)r->umin;
	k = bpf_map_kptr_at(m, off);
	if (!k)
		return verr(env, -EACCES, "off=%d doesn't point to kptr\n", (int)off);
	if (!k->ref)
		return verr(env, -EACCES, "off=%d kptr isn't referenced kptr\n", (int)off);
	/* map_btf.c makes no referenced kptr: nothing could release what the exchange returns */
	return verr(env, -EFAULT, "verifier internal error: referenced kptr at off=%d\n", (int)off);
}
