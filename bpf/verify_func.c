/*
 * verify_func.c - what a program's BTF func_info tells the verifier about its subprograms,
 * as Linux 6.1 uses it (check_btf_func's linkage, check_ld_imm, do_check_subprogs,
 * btf_prepare_func_args, btf_check_subprog_call / btf_check_func_arg_match, check_return_code
 * for subprograms):
 *
 * - lddw BPF_PSEUDO_FUNC needs func_info ("missing btf func_info", EINVAL) and a static target
 *   ("callback function not static", EINVAL): a global function is never a callback.
 * - A global function (BTF_FUNC_GLOBAL) is verified once, on its own, before the main program,
 *   with its arguments typed from its BTF prototype: an int or enum is an unknown scalar, a
 *   pointer to the program type's context struct (matched by name) is ctx, a pointer to
 *   anything with a size is memory of that size that may be NULL; anything else is refused.
 *   It must return an int or enum, and R0 at its exit must be a scalar.
 * - A call of a global function checks the caller's r1-r5 against the prototype (a scalar
 *   where an int is declared, ctx where the context is, readable and writable memory of the
 *   pointee's size or NULL where another pointer is) and does not walk the body: r0 becomes an
 *   unknown scalar.  What the callee may write through a memory argument is unknown to the
 *   caller afterwards (its stack bytes become misc): Linux 6.1 keeps them as they were.
 * - A static function is walked from each call site; a prototype that does not match the call
 *   (arguments the compiler dropped) is logged and marks the function unreliable, as on Linux.
 *   So is the main program's prototype against R1 = ctx before its walk.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"
#include "verify.h"

enum { GARG_NONE, GARG_SCALAR, GARG_CTX, GARG_MEM };

static const char *const kind_str[] = {
	"UNKNOWN", "INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF", "VOLATILE",
	"CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC", "FLOAT", "DECL_TAG",
	"TYPE_TAG", "ENUM64",
};

/* Linux's btf_type_str */
static const char *type_str(const struct btf_type *t)
{
	uint32_t k = t ? bpf_btf_kind(t) : 0;

	return k < ARRAY_SIZE(kind_str) ? kind_str[k] : "UNKNOWN";
}

static const char *type_name(const struct bpf_btf *btf, const struct btf_type *t)
{
	const char *s = t ? bpf_btf_str(btf, t->name_off) : NULL;

	return s ? s : "";
}

static bool is_scalar(const struct btf_type *t)
{
	uint32_t k = t ? bpf_btf_kind(t) : 0;

	return k == BTF_KIND_INT || k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64;
}

static bool is_kind(const struct btf_type *t, uint32_t kind)
{
	return t && bpf_btf_kind(t) == kind;
}

/* Linux's btf_resolve_size: bytes of the type (through modifiers and arrays) or -EINVAL for
 * one without a size (void, fwd, func, var, ...) or past 32 bits. */
static int64_t resolve_size(const struct bpf_btf *btf, const struct btf_type *t)
{
	uint64_t nelems = 1, size = 0;

	for (int depth = 0; t && depth < 32; depth++) {
		switch (bpf_btf_kind(t)) {
		case BTF_KIND_INT:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_FLOAT:
			size = t->size;
			goto done;
		case BTF_KIND_PTR:
			size = sizeof(void *);
			goto done;
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			t = bpf_btf_type(btf, t->type);
			continue;
		case BTF_KIND_ARRAY: {
			const struct btf_array *a = (const struct btf_array *)(t + 1);

			nelems *= a->nelems;
			if (nelems > UINT32_MAX)
				return -EINVAL;
			t = bpf_btf_type(btf, a->type);
			continue;
		}
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;
done:
	size *= nelems;
	return size > UINT32_MAX ? -EINVAL : (int64_t)size;
}

/*
 * The name bpf_ctx_convert gives the program type's context (Linux's btf_get_prog_ctx_type
 * compares the pointee struct's name with it): the user-visible struct, or for the types whose
 * context is not a struct the name of what stands there (never a struct's name, but for the
 * syscall type's "void *", which is the anonymous struct's empty one).
 */
static const char *ctx_name(uint32_t prog_type)
{
	switch (prog_type) {
	case BPF_PROG_TYPE_PERF_EVENT: return "bpf_perf_event_data";
	case BPF_PROG_TYPE_SOCKET_FILTER: return "__sk_buff";
	case BPF_PROG_TYPE_KPROBE: return "bpf_user_pt_regs_t";
	case BPF_PROG_TYPE_TRACEPOINT: return "__u64";
	case BPF_PROG_TYPE_SYSCALL: return "";
	default: return NULL;
	}
}

/* Does ptr (a BTF pointer) point to the program type's context struct? */
static bool is_ctx_ptr(const struct venv *env, const struct btf_type *ptr)
{
	const struct bpf_btf *btf = env->prog->btf;
	const struct btf_type *t = bpf_btf_skip_modifiers(btf, ptr->type, NULL);
	const char *want = ctx_name(env->prog->type);

	if (!want || !(is_kind(t, BTF_KIND_STRUCT) || is_kind(t, BTF_KIND_UNION)))
		return false;
	return !strcmp(type_name(btf, t), want);
}

void func_info_linkage(struct venv *env)
{
	const struct bpf_prog *prog = env->prog;

	for (uint32_t s = 0; s < env->nr_subprogs && prog->func_info; s++) {
		const struct btf_type *t = bpf_btf_type(prog->btf, prog->func_info[s].type_id);

		env->sub_global[s] = t && bpf_btf_vlen(t) == BTF_FUNC_GLOBAL;
	}
}

int check_pseudo_func(struct venv *env, uint32_t subprog)
{
	const struct btf_type *t;

	if (!env->prog->func_info)
		return verr(env, -EINVAL, "missing btf func_info\n");
	t = bpf_btf_type(env->prog->btf, env->prog->func_info[subprog].type_id);
	if (!t || bpf_btf_vlen(t) != BTF_FUNC_STATIC) /* global, or extern */
		return verr(env, -EINVAL, "callback function not static\n");
	return 0;
}

/* The FUNC and FUNC_PROTO of subprogram s (func_info is checked: both exist). */
static const struct btf_type *func_proto(const struct venv *env, uint32_t s, const char **name)
{
	const struct bpf_btf *btf = env->prog->btf;
	const struct btf_type *f = bpf_btf_type(btf, env->prog->func_info[s].type_id);

	*name = type_name(btf, f);
	f = f ? bpf_btf_type(btf, f->type) : NULL;
	return is_kind(f, BTF_KIND_FUNC_PROTO) ? f : NULL;
}

/* Linux's btf_prepare_func_args: f's registers from subprogram s's prototype. */
static int prepare_args(struct venv *env, uint32_t s, struct frame *f)
{
	const struct bpf_btf *btf = env->prog->btf;
	const struct btf_param *args;
	const struct btf_type *proto, *t;
	const char *name;
	uint32_t nargs;

	proto = func_proto(env, s, &name);
	if (env->log && env->log->level)
		bpf_log(env->log, "Validating %s() func#%u...\n", name, s);
	if (env->sub_unreliable[s])
		return verr(env, -EFAULT, "Verifier bug in function %s()\n", name);
	if (!proto)
		return verr(env, -EFAULT, "Invalid type of function %s()\n", name);
	args = (const struct btf_param *)(proto + 1);
	nargs = bpf_btf_vlen(proto);
	if (nargs > 5)
		return verr(env, -EINVAL, "Global function %s() with %u > 5 args. Buggy compiler.\n",
			    name, nargs);
	t = bpf_btf_skip_modifiers(btf, proto->type, NULL);
	if (!is_scalar(t))
		return verr(env, -EINVAL, "Global function %s() doesn't return scalar. Only those "
					  "are supported.\n", name);
	for (uint32_t i = 0; i < nargs; i++) {
		struct reg *r = &f->regs[BPF_REG_1 + i];
		int64_t size;

		t = bpf_btf_skip_modifiers(btf, args[i].type, NULL);
		if (is_scalar(t)) {
			mark_unknown(r);
			continue;
		}
		if (is_kind(t, BTF_KIND_PTR)) {
			if (is_ctx_ptr(env, t)) {
				memset(r, 0, sizeof(*r));
				r->type = PTR_TO_CTX;
				continue;
			}
			t = bpf_btf_skip_modifiers(btf, t->type, NULL);
			size = resolve_size(btf, t);
			if (size < 0)
				return verr(env, -EINVAL, "arg#%u reference type('%s %s') size cannot be "
							  "determined: %lld\n", i, type_str(t),
					    type_name(btf, t), (long long)size);
			memset(r, 0, sizeof(*r));
			r->type = PTR_TO_MEM_OR_NULL;
			r->plain = 1;
			r->mem_size = (uint32_t)size;
			r->id = ++env->next_id; /* renumbered below */
			continue;
		}
		return verr(env, -EINVAL, "Arg#%u type %s in %s() is not supported yet.\n", i,
			    type_str(t), name);
	}
	/* Linux numbers the memory arguments twice (btf_prepare_func_args, then
	 * do_check_common): the second ids are theirs */
	for (uint32_t i = 0; i < nargs; i++)
		if (f->regs[BPF_REG_1 + i].type == PTR_TO_MEM_OR_NULL)
			f->regs[BPF_REG_1 + i].id = ++env->next_id;
	return 0;
}

/* Linux's register state line for the start of a global function's walk (log level 2). */
static void log_entry_state(struct venv *env, const struct frame *f, uint32_t insn)
{
	bpf_log(env->log, "%u:", insn);
	for (int r = BPF_REG_1; r <= BPF_REG_5; r++) {
		const struct reg *g = &f->regs[r];

		if (g->type == SCALAR)
			bpf_log(env->log, " R%d=scalar()", r);
		else if (g->type == PTR_TO_CTX)
			bpf_log(env->log, " R%d=ctx(off=0,imm=0)", r);
		else if (g->type == PTR_TO_MEM_OR_NULL)
			bpf_log(env->log, " R%d=mem_or_null(id=%u,off=0,imm=0)", r, g->id);
	}
	bpf_log(env->log, " R10=fp0\n");
}

int global_func_state(struct venv *env, uint32_t s, struct frame *f)
{
	int err = prepare_args(env, s, f);

	if (err)
		return err;
	f->regs[BPF_REG_10].type = PTR_TO_STACK;
	f->subprog = s;
	if (env->log && (env->log->level & 3))
		log_entry_state(env, f, env->subprog_start[s]);
	return 0;
}

/* Linux's check_mem_reg: NULL, or size bytes readable and writable (the write only checked
 * by Linux; here it also leaves the caller's bytes unknown, see the top). */
static int mem_arg(struct venv *env, uint32_t regno, uint32_t size)
{
	struct reg *r = &cur_frame(env)->regs[regno];
	struct reg saved = *r;
	int err;

	if (reg_is_const(r) && !r->umin)
		return 0;
	if (r->type == PTR_TO_MAP_VALUE_OR_NULL)
		r->type = PTR_TO_MAP_VALUE;
	else if (r->type == PTR_TO_MEM_OR_NULL)
		r->type = PTR_TO_MEM;
	switch (r->type) {
	case PTR_TO_STACK:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
	case PTR_TO_MEM:
		err = helper_mem(env, regno, size, false) ?: helper_mem(env, regno, size, true);
		break;
	case PTR_TO_CTX:
		/* the types whose ctx loads Linux does not rewrite: its last byte */
		if (env->prog->type == BPF_PROG_TYPE_SYSCALL || env->prog->type == BPF_PROG_TYPE_KPROBE ||
		    env->prog->type == BPF_PROG_TYPE_TRACEPOINT) {
			err = !size ? 0 :
			      check_mem_access(env, regno, (int32_t)size - 1, 1, false, VALUE_NONE, false) ?:
			      check_mem_access(env, regno, (int32_t)size - 1, 1, true, VALUE_UNKNOWN, false);
			break;
		}
		/* fall through */
	default:
		err = verr(env, -EACCES, "R%u type=%s expected=fp\n", regno, reg_name(r));
		break;
	}
	*r = saved;
	return err;
}

/* Linux's check_func_arg_reg_off for an argument of no declared kind (ARG_DONTCARE). */
static int arg_reg_off(struct venv *env, uint32_t regno, const struct reg *r)
{
	switch (r->type) {
	case PTR_TO_STACK:
	case PTR_TO_MAP_KEY:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MEM:
	case SCALAR:
		return 0;
	default:
		break;
	}
	if (r->off < 0)
		return verr(env, -EACCES, "negative offset %s ptr R%u off=%d disallowed\n",
			    reg_name(r), regno, r->off);
	if (r->off && r->type != PTR_TO_BTF_ID)
		return verr(env, -EACCES, "dereference of modified %s ptr R%u off=%d disallowed\n",
			    reg_name(r), regno, r->off);
	if (r->type != NOT_INIT && (r->smin || r->smax)) {
		uint64_t chi = (uint64_t)r->smin ^ (uint64_t)r->smax;
		int bits = chi ? 64 - __builtin_clzll(chi) : 0;
		uint64_t mask = bits > 63 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;

		return verr(env, -EACCES, "variable %s access var_off=(%#llx; %#llx) disallowed\n",
			    reg_name(r), (unsigned long long)((uint64_t)r->smin & ~mask),
			    (unsigned long long)mask);
	}
	return 0;
}

/* Linux's btf_check_func_arg_match: for a call (processing_call), memory pointers only for a
 * global callee; for the main program's own start, none. */
static int arg_match(struct venv *env, uint32_t s, bool call)
{
	const struct bpf_btf *btf = env->prog->btf;
	struct reg *regs = cur_frame(env)->regs;
	const struct btf_type *proto, *t, *ref;
	const struct btf_param *args;
	const char *name;
	uint32_t nargs;
	int err;

	proto = func_proto(env, s, &name);
	if (!proto)
		return verr(env, -EFAULT, "Invalid BTF of func %s\n", name);
	args = (const struct btf_param *)(proto + 1);
	nargs = bpf_btf_vlen(proto);
	if (nargs > 5)
		return verr(env, -EINVAL, "Function %s has %u > 5 args\n", name, nargs);
	for (uint32_t i = 0; i < nargs; i++) {
		uint32_t regno = BPF_REG_1 + i;
		struct reg *r = &regs[regno];
		int64_t size;

		t = bpf_btf_skip_modifiers(btf, args[i].type, NULL);
		if (is_scalar(t)) {
			if (r->type == SCALAR)
				continue;
			return verr(env, -EINVAL, "R%u is not a scalar\n", regno);
		}
		if (!is_kind(t, BTF_KIND_PTR))
			return verr(env, -EINVAL, "Unrecognized arg#%u type %s\n", i, type_str(t));
		ref = bpf_btf_skip_modifiers(btf, t->type, NULL);
		err = arg_reg_off(env, regno, r);
		if (err)
			return err;
		if (is_ctx_ptr(env, t)) {
			if (r->type != PTR_TO_CTX)
				return verr(env, -EINVAL, "arg#%u expected pointer to ctx, but got %s\n", i,
					    type_str(t));
		} else if (env->sub_global[s] && call) {
			size = resolve_size(btf, ref);
			if (size < 0)
				return verr(env, -EINVAL, "arg#%u reference type('%s %s') size cannot be "
							  "determined: %lld\n", i, type_str(ref),
					    type_name(btf, ref), (long long)size);
			if (mem_arg(env, regno, (uint32_t)size))
				return -EINVAL;
		} else {
			return verr(env, -EINVAL, "reg type unsupported for arg#%u function %s#%u\n", i,
				    name, env->prog->func_info[s].type_id);
		}
	}
	return 0;
}

int check_subprog_call_btf(struct venv *env, uint32_t s)
{
	int err;

	if (!env->prog->func_info || env->sub_unreliable[s])
		return -EINVAL;
	err = arg_match(env, s, true);
	/* arguments the compiler dropped from a static function, or a bad call of a global one:
	 * the prototype no longer describes the function */
	if (err && err != -EFAULT)
		env->sub_unreliable[s] = 1;
	return err;
}

int check_main_prototype(struct venv *env)
{
	int err;

	if (!env->prog->func_info)
		return 0;
	err = arg_match(env, 0, false);
	if (err && err != -EFAULT)
		env->sub_unreliable[0] = 1;
	return err == -EFAULT ? err : 0;
}
