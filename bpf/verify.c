/*
 * verify.c - the eBPF verifier's walk: every path through the program is followed with an
 * abstract state (register types and value ranges, stack slot contents, call frames), so that
 * when the walk finishes every memory access, helper call and exit has been proven safe.
 *
 * Per instruction class: ALU (scalar range arithmetic, pointer arithmetic rules), conditional
 * jumps (decided when ranges allow, otherwise both ways with refined ranges; null checks of
 * map_value_or_null), calls (helpers in verify_mem.c, bpf-to-bpf with new frames; global
 * functions, walked on their own first, only checked against their BTF: verify_func.c), exit.
 * Memory accesses are checked in verify_mem.c, structure and CFG in verify_cfg.c.
 *
 * Termination: states at prune points are kept as checkpoints.  A new state contained in a fully
 * explored checkpoint is pruned; one contained in a checkpoint still on the current path is an
 * infinite loop (EINVAL); bounded loops unroll until their counter decides the exit, within
 * Linux's budget of 1,000,000 processed instructions (E2BIG).
 * Pruning compares only the scalars whose bounds mattered below the checkpoint (precision
 * tracking, verify_prec.c; each path keeps the jumps it took since its last checkpoint for it),
 * so loops whose counters differ from path to path converge as on Linux.  The infinite-loop
 * check compares all scalars.  Registers that are never read again are ignored (static
 * liveness, verify_cfg.c).
 * Linux 6.1 is the reference for messages and errnos; this is a smaller verifier: no tnums,
 * no scalar ids, no packet or socket types.
 */
#include <stdarg.h>
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "interp_ops.h"
#include "verify.h"

#define MAX_STORED_STATES 8192
#define MAX_STATES_PER_INSN 1024
#define EVICT_AFTER 128 /* list length from which failing checkpoints go */
#define MAX_PENDING 8192
#define PTR_OFF_MAX (1 << 29)

int verr(struct venv *env, int err, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	bpf_log(env->log, "%s", line);
	return err;
}

const char *reg_type_name(uint8_t t)
{
	static const char *const names[] = {
		[NOT_INIT] = "?",
		[SCALAR] = "scalar",
		[PTR_TO_CTX] = "ctx",
		[PTR_TO_STACK] = "fp",
		[CONST_PTR_TO_MAP] = "map_ptr",
		[PTR_TO_MAP_VALUE] = "map_value",
		[PTR_TO_MAP_VALUE_OR_NULL] = "map_value_or_null",
		[PTR_TO_MAP_KEY] = "map_key",
		[PTR_TO_MEM] = "alloc_mem",
		[PTR_TO_MEM_OR_NULL] = "alloc_mem_or_null",
		[PTR_TO_FUNC] = "func",
		[PTR_TO_DYNPTR] = "dynptr_ptr",
		[PTR_TO_BTF_ID] = "ptr_",
		[PTR_TO_PERCPU_BTF_ID] = "percpu_ptr_",
		[PTR_TO_BTF_ID_OR_NULL] = "ptr_or_null_",
		[PTR_TO_RDONLY_MEM] = "rdonly_mem",
		[PTR_TO_RDONLY_MEM_OR_NULL] = "rdonly_mem_or_null",
		[PTR_TO_BTF_ID_UNTRUSTED] = "untrusted_ptr_",
		[PTR_TO_BTF_ID_UNTRUSTED_OR_NULL] = "untrusted_ptr_or_null_",
	};
	return t < ARRAY_SIZE(names) ? names[t] : "?";
}

const char *reg_name(const struct reg *r)
{
	if (r->plain && r->type == PTR_TO_MEM)
		return "mem";
	if (r->plain && r->type == PTR_TO_MEM_OR_NULL)
		return "mem_or_null";
	return reg_type_name(r->type);
}

struct frame *cur_frame(struct venv *env)
{
	return env->cur->frames[env->cur->curframe];
}

void mark_unknown(struct reg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = SCALAR;
	r->umax = UINT64_MAX;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
}

void mark_const(struct reg *r, uint64_t v)
{
	memset(r, 0, sizeof(*r));
	r->type = SCALAR;
	r->umin = r->umax = v;
	r->smin = r->smax = (int64_t)v;
}

bool reg_is_const(const struct reg *r)
{
	return r->type == SCALAR && r->umin == r->umax;
}

bool is_pointer(const struct reg *r)
{
	return r->type != SCALAR && r->type != NOT_INIT;
}

/* Tighten signed and unsigned bounds against each other. */
void reg_sync(struct reg *r)
{
	if ((int64_t)r->umin >= 0 || (int64_t)r->umax < 0) {
		if ((int64_t)r->umin >= 0 && (int64_t)r->umax < 0)
			goto s2u; /* crosses the sign boundary */
		r->smin = MAX(r->smin, (int64_t)r->umin);
		r->smax = MIN(r->smax, (int64_t)r->umax);
	}
s2u:
	if (r->smin >= 0 || r->smax < 0) {
		r->umin = MAX(r->umin, (uint64_t)r->smin);
		r->umax = MIN(r->umax, (uint64_t)r->smax);
	}
}

bool reg_bad(const struct reg *r)
{
	return r->umin > r->umax || r->smin > r->smax;
}

/* ---- references ---- */

int64_t acquire_ref(struct venv *env)
{
	struct vstate *st = env->cur;

	if (st->nrefs == MAX_REFS)
		return verr(env, -E2BIG, "more than %u references held at once\n", MAX_REFS);
	/* Linux's id_gen counts the or-null id and then the reference: the reference is the 2nd */
	env->next_id += 2;
	st->refs[st->nrefs].id = env->next_id;
	st->refs[st->nrefs].insn = env->idx;
	st->nrefs++;
	return env->next_id;
}

bool release_ref(struct vstate *st, uint32_t id)
{
	uint32_t i = 0;

	while (i < st->nrefs && st->refs[i].id != id)
		i++;
	if (i == st->nrefs)
		return false;
	memmove(&st->refs[i], &st->refs[i + 1], (st->nrefs - i - 1) * sizeof(st->refs[0]));
	st->nrefs--;
	for (uint32_t fi = 0; fi <= st->curframe; fi++) {
		struct frame *f = st->frames[fi];

		for (int r = 0; r < MAX_BPF_REG; r++)
			if (f->regs[r].ref_obj_id == id && f->regs[r].type != SCALAR)
				mark_unknown(&f->regs[r]);
		for (uint32_t s = 0; s < f->depth / 8; s++)
			if (f->stype[s * 8] == STACK_SPILL && f->spill[s].ref_obj_id == id &&
			    f->spill[s].type != SCALAR)
				mark_unknown(&f->spill[s]);
	}
	return true;
}

/* ---- frames and states ---- */

struct frame *frame_new(void)
{
	return ksvc_alloc(sizeof(struct frame));
}

void frame_free(struct frame *f)
{
	if (!f)
		return;
	ksvc_free(f->stype);
	ksvc_free(f->spill);
	ksvc_free(f);
}

int frame_grow(struct frame *f, int64_t lo)
{
	uint32_t need = (uint32_t)((-lo + 7) & ~7);
	uint8_t *st;
	struct reg *sp;

	if (need <= f->depth)
		return 0;
	st = ksvc_alloc(need);
	sp = ksvc_alloc(sizeof(*sp) * (need / 8));
	if (!st || !sp) {
		ksvc_free(st);
		ksvc_free(sp);
		return -ENOMEM;
	}
	if (f->depth) {
		memcpy(st, f->stype, f->depth);
		memcpy(sp, f->spill, sizeof(*sp) * (f->depth / 8));
	}
	ksvc_free(f->stype);
	ksvc_free(f->spill);
	f->stype = st;
	f->spill = sp;
	f->depth = need;
	return 0;
}

static struct frame *frame_dup(const struct frame *f)
{
	struct frame *n = ksvc_alloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = *f;
	n->stype = NULL;
	n->spill = NULL;
	n->depth = 0;
	if (f->depth && frame_grow(n, -(int64_t)f->depth)) {
		ksvc_free(n);
		return NULL;
	}
	if (f->depth) {
		memcpy(n->stype, f->stype, f->depth);
		memcpy(n->spill, f->spill, sizeof(*n->spill) * (f->depth / 8));
	}
	return n;
}

/* A copy of s; with_hist: its history too (else the copy has none). */
static struct vstate *state_copy(const struct vstate *s, bool with_hist)
{
	struct vstate *n = ksvc_alloc(sizeof(*n));

	if (!n)
		return NULL;
	n->curframe = s->curframe;
	n->nrefs = s->nrefs;
	n->active_lock = s->active_lock;
	memcpy(n->refs, s->refs, sizeof(n->refs));
	n->parent = s->parent;
	n->first = s->first;
	if (with_hist) {
		n->hist_lost = s->hist_lost;
		for (uint32_t i = 0; i < s->nhist; i++)
			hist_push(n, s->hist[i].idx, s->hist[i].prev);
	}
	for (uint32_t i = 0; i <= s->curframe; i++) {
		n->frames[i] = frame_dup(s->frames[i]);
		if (!n->frames[i]) {
			for (uint32_t k = 0; k < i; k++)
				frame_free(n->frames[k]);
			ksvc_free(n);
			return NULL;
		}
	}
	return n;
}

void state_free(struct vstate *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i <= s->curframe; i++)
		frame_free(s->frames[i]);
	ksvc_free(s->hist);
	ksvc_free(s);
}

static void branch_done(struct vstate *cp)
{
	while (cp) {
		if (--cp->branches)
			break;
		cp = cp->parent;
	}
}

struct idmap {
	uint32_t old[64], cur[64];
	uint32_t n;
};

static bool ids_match(struct idmap *m, uint32_t old, uint32_t cur)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->old[i] == old)
			return m->cur[i] == cur;
	if (m->n == 64)
		return false;
	m->old[m->n] = old;
	m->cur[m->n++] = cur;
	return true;
}

static bool range_within(const struct reg *old, const struct reg *cur)
{
	return cur->umin >= old->umin && cur->umax <= old->umax && cur->smin >= old->smin &&
	       cur->smax <= old->smax;
}

/*
 * Is every concrete register value cur may hold also allowed by old?  An imprecise scalar in
 * old allows any scalar, unless exact (comparing with a checkpoint still being explored).
 */
static bool regsafe(const struct reg *old, const struct reg *cur, struct idmap *m, bool exact)
{
	if (old->type == NOT_INIT)
		return true;
	if (cur->type != old->type)
		return false;
	switch (old->type) {
	case SCALAR:
		return (!exact && !old->precise) || range_within(old, cur);
	case PTR_TO_MEM:
	case PTR_TO_MEM_OR_NULL: /* where in the memory too, as Linux's regsafe */
		return old->mem_size == cur->mem_size && ids_match(m, old->ref_obj_id, cur->ref_obj_id) &&
		       (old->type == PTR_TO_MEM || ids_match(m, old->id, cur->id)) &&
		       old->off == cur->off && range_within(old, cur);
	case PTR_TO_FUNC:
		return old->mem_size == cur->mem_size;
	case PTR_TO_RDONLY_MEM_OR_NULL:
	case PTR_TO_BTF_ID_OR_NULL:
	case PTR_TO_BTF_ID_UNTRUSTED_OR_NULL:
		if (!ids_match(m, old->id, cur->id))
			return false;
		/* fall through */
	case PTR_TO_RDONLY_MEM:
	case PTR_TO_PERCPU_BTF_ID:
	case PTR_TO_BTF_ID:
	case PTR_TO_BTF_ID_UNTRUSTED:
		return old->btf_id == cur->btf_id && old->mem_size == cur->mem_size &&
		       old->off == cur->off && range_within(old, cur);
	case PTR_TO_MAP_VALUE_OR_NULL:
	case PTR_TO_MAP_VALUE: /* a value with a bpf_spin_lock keeps its id */
		if (!ids_match(m, old->id, cur->id))
			return false;
		/* fall through */
	default:
		return old->map == cur->map && old->off == cur->off &&
		       old->frameno == cur->frameno && range_within(old, cur);
	}
}

static bool unknown_scalar(const struct reg *r)
{
	return r->type == SCALAR && r->umin == 0 && r->umax == UINT64_MAX &&
	       r->smin == INT64_MIN && r->smax == INT64_MAX;
}

static bool stacksafe(const struct frame *old, const struct frame *cur, struct idmap *m,
		      bool exact)
{
	for (uint32_t i = 0; i < old->depth; i++) {
		uint8_t o = old->stype[i], c = i < cur->depth ? cur->stype[i] : STACK_INVALID;

		if (o == STACK_INVALID)
			continue;
		if (c == STACK_INVALID)
			return false;
		/* a dynptr only where old had the same one (type, first slot, reference) */
		if ((o == STACK_DYNPTR) != (c == STACK_DYNPTR))
			return false;
		if (o == STACK_DYNPTR) {
			const struct reg *os = &old->spill[i / 8], *cs = &cur->spill[i / 8];

			if (os->off != cs->off || os->mem_size != cs->mem_size ||
			    !ids_match(m, os->id, cs->id))
				return false;
			continue;
		}
		if (o == STACK_SPILL) {
			if (i % 8)
				continue;
			const struct reg *os = &old->spill[i / 8];

			if (c == STACK_SPILL) {
				if (!regsafe(os, &cur->spill[i / 8], m, exact))
					return false;
			} else if (!unknown_scalar(os) &&
				   (exact || os->type != SCALAR || os->precise)) {
				return false; /* plain data reads back as an unknown scalar */
			}
		}
	}
	return true;
}

/*
 * Does old allow everything cur may do from insn idx on?  Dead registers don't count.  exact:
 * old is still being explored, so its precise marks are not all there yet.
 */
static bool states_subsume(struct venv *env, const struct vstate *old,
			   const struct vstate *cur, uint32_t idx, bool exact)
{
	struct idmap *m = env->idmap; /* scratch; only the first n pairs are used */

	m->n = 0;
	if (old->curframe != cur->curframe)
		return false;
	for (uint32_t f = 0; f <= old->curframe; f++) {
		const struct frame *of = old->frames[f], *cf = cur->frames[f];
		/* callers resume after their call: what is live there (r0-r5 are rewritten) */
		uint16_t live = f == old->curframe ? env->live[idx] :
			old->frames[f + 1]->callsite + 1 < env->len ?
				env->live[old->frames[f + 1]->callsite + 1] : 0xffff;

		if (of->callsite != cf->callsite)
			return false;
		for (int r = 0; r < MAX_BPF_REG; r++)
			if ((live & (1u << r)) && !regsafe(&of->regs[r], &cf->regs[r], m, exact))
				return false;
		if (!stacksafe(of, cf, m, exact))
			return false;
	}
	if (old->active_lock != cur->active_lock) /* Linux compares the ids as they are */
		return false;
	/* the same references, held by the same registers (Linux's refsafe) */
	if (old->nrefs != cur->nrefs)
		return false;
	for (uint32_t i = 0; i < old->nrefs; i++)
		if (!ids_match(m, old->refs[i].id, cur->refs[i].id))
			return false;
	return true;
}

/*
 * The walk reached insn idx from prev.  1: prune this path, 0: go on, <0: error.
 * Checkpoints that keep failing to prune are dropped from the list (Linux's miss heuristic),
 * which keeps long loops linear.
 */
static int state_visited(struct venv *env, uint32_t idx, uint32_t prev)
{
	struct vstate *cp, **pp, *cur = env->cur;
	bool jumped = idx != prev + 1; /* the first insn has prev + 1 == 0 */
	uint32_t n = 0;

	if (!env->prune[idx])
		goto go_on;
	for (pp = &env->visited[idx]; (cp = *pp);) {
		/* a checkpoint still being explored has only some of its precise marks */
		bool sub = states_subsume(env, cp, cur, idx, cp->branches != 0);

		if (sub && cp->branches)
			return verr(env, -EINVAL, "infinite loop detected at insn %u\n", idx);
		if (sub) {
			cp->hit++;
			if (jumped)
				hist_push(cur, idx, prev);
			propagate_precision(env, cp, idx);
			return 1;
		}
		if (++cp->miss > cp->hit * 3 + 3 && n >= EVICT_AFTER) {
			*pp = cp->next;
			cp->next = env->evicted;
			env->evicted = cp;
			continue;
		}
		pp = &cp->next;
		n++;
	}
	if (env->nr_stored >= MAX_STORED_STATES || n >= MAX_STATES_PER_INSN)
		goto go_on; /* memory bound: go on unpruned (the insn budget still holds) */
	/* like Linux: a new checkpoint only after 2 jumps and 8 insns since the last one */
	if (env->jmps_since < 2 || env->insns_since < 8)
		goto go_on;
	env->jmps_since = env->insns_since = 0;
	cp = state_copy(cur, false);
	if (!cp)
		return -ENOMEM;
	/* the path's history so far is the checkpoint's; cur's starts here */
	cp->hist = cur->hist;
	cp->nhist = cur->nhist;
	cp->hist_cap = cur->hist_cap;
	cp->hist_lost = cur->hist_lost;
	cp->last = prev;
	checkpoint_init_precision(env, cp);
	cur->hist = NULL;
	cur->nhist = cur->hist_cap = 0;
	cur->hist_lost = false;
	cur->first = idx;
	cp->branches = 1;
	cp->insn = idx;
	cp->next = env->visited[idx];
	env->visited[idx] = cp;
	cur->parent = cp;
	env->nr_stored++;
	return 0;
go_on:
	if (jumped)
		hist_push(cur, idx, prev);
	return 0;
}

int push_branch(struct venv *env, uint32_t insn, struct vstate **out)
{
	struct vstate *s;

	if (env->stack_len >= MAX_PENDING)
		return verr(env, -E2BIG, "The sequence of %u jumps is too complex.\n",
			    env->stack_len);
	if (env->stack_len == env->stack_cap) {
		uint32_t cap = env->stack_cap ? env->stack_cap * 2 : 64;
		struct pending *n = ksvc_alloc(sizeof(*n) * cap);

		if (!n)
			return -ENOMEM;
		if (env->stack)
			memcpy(n, env->stack, sizeof(*n) * env->stack_len);
		ksvc_free(env->stack);
		env->stack = n;
		env->stack_cap = cap;
	}
	s = state_copy(env->cur, true);
	if (!s)
		return -ENOMEM;
	if (s->parent)
		s->parent->branches++;
	env->stack[env->stack_len].st = s;
	env->stack[env->stack_len].from = env->idx;
	env->stack[env->stack_len].log_pos = env->log ? env->log->len : 0;
	env->stack[env->stack_len++].insn = insn;
	*out = s;
	return 0;
}

/* ---- registers ---- */

int check_reg_read(struct venv *env, uint32_t regno)
{
	if (cur_frame(env)->regs[regno].type == NOT_INIT)
		return verr(env, -EACCES, "R%u !read_ok\n", regno);
	return 0;
}

int check_reg_write(struct venv *env, uint32_t regno)
{
	if (regno == BPF_REG_10)
		return verr(env, -EACCES, "frame pointer is read only\n");
	return 0;
}

/* ---- calls and exit ---- */

static int64_t check_local_call(struct venv *env, const struct bpf_insn *in, uint32_t idx)
{
	struct vstate *st = env->cur;
	struct frame *caller = cur_frame(env), *callee;
	uint32_t target = idx + 1 + in->imm;

	uint32_t sub = (uint32_t)subprog_of(env, target);
	int err;

	if (st->curframe + 1 >= BPF_MAX_FRAMES)
		return verr(env, -E2BIG, "the call stack of %u frames is too deep\n",
			    st->curframe + 2); /* (the walk's wording: no " !") */
	err = check_subprog_call_btf(env, sub);
	if (err == -EFAULT)
		return err;
	if (env->sub_global[sub]) {
		/* verified on its own already (or later, in Linux's order): only the arguments */
		uint8_t *g = &env->gcall[env->root * MAX_SUBPROGS + sub];

		if (err)
			return verr(env, err, "Caller passes invalid args into func#%u\n", sub);
		if (env->log && env->log->level)
			bpf_log(env->log, "Func#%u is global and valid. Skipping.\n", sub);
		for (int r = BPF_REG_0; r <= BPF_REG_5; r++)
			memset(&caller->regs[r], 0, sizeof(struct reg));
		mark_unknown(&caller->regs[BPF_REG_0]);
		if (*g < st->curframe + 1)
			*g = (uint8_t)(st->curframe + 1);
		return idx + 1;
	}
	callee = frame_new();
	if (!callee)
		return -ENOMEM;
	for (int r = BPF_REG_1; r <= BPF_REG_5; r++)
		callee->regs[r] = caller->regs[r];
	callee->regs[BPF_REG_10].type = PTR_TO_STACK;
	callee->regs[BPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	callee->callsite = idx;
	callee->subprog = sub;
	st->frames[++st->curframe] = callee;
	if (st->curframe + 1 > env->max_frames)
		env->max_frames = st->curframe + 1;
	return target;
}

/* Returns the next instruction, or 1 << 32 when the path ends, or a negative errno. */
static int64_t check_exit(struct venv *env)
{
	struct vstate *st = env->cur;
	struct frame *callee = cur_frame(env), *caller;
	uint32_t ret;
	int err;

	/* the main program's exit: every reference it took must be released by now */
	if (st->curframe == 0 && st->nrefs) {
		for (uint32_t i = 0; i < st->nrefs; i++)
			verr(env, 0, "Unreleased reference id=%u alloc_insn=%u\n", st->refs[i].id,
			     st->refs[i].insn);
		return -EINVAL;
	}
	err = check_reg_read(env, BPF_REG_0);
	if (err)
		return err;
	if (st->curframe == 0 && env->root && callee->regs[BPF_REG_0].type != SCALAR)
		return verr(env, -EINVAL, "At subprogram exit the register R0 is not a scalar value "
					  "(%s)\n", reg_type_name(callee->regs[BPF_REG_0].type));
	if (st->curframe == 0)
		return (int64_t)1 << 32;
	if (callee->callback) {
		/* a helper's callback: r0 says go on (0) or stop (1); the helper's own return is
		 * already in the caller's r0 (Linux's prepare_func_exit for in_callback_fn).  A timer
		 * callback runs later (Linux verifies it as an async state, check_return_code): r0 a
		 * known 0; here it is one more frame of the caller, returning to the call. */
		const struct reg *r0 = &callee->regs[BPF_REG_0];
		bool async = callee->callback == CB_TIMER;
		const char *at = async ? "async callback" : "callback return";
		const char *range = async ? "(0x0; 0x0)" : "(0x0; 0x1)";

		if (r0->type != SCALAR && async)
			return verr(env, -EINVAL, "In async callback the register R0 is not a known "
						  "value (%s)\n", reg_type_name(r0->type));
		if (r0->type != SCALAR)
			return verr(env, -EACCES, "R0 not a scalar value\n");
		if (r0->umax > (async ? 0 : 1)) {
			if (reg_is_const(r0))
				return verr(env, -EINVAL, "At %s the register R0 has value (0x%llx; 0x0) "
							  "should have been in %s\n", at,
					    (unsigned long long)r0->umin, range);
			return verr(env, -EINVAL, "At %s the register R0 has unknown scalar value "
						  "should have been in %s\n", at, range);
		}
		mark_reg_precise(env, BPF_REG_0);
		ret = callee->callsite + 1;
		frame_free(callee);
		st->frames[st->curframe--] = NULL;
		return ret;
	}
	if (callee->regs[BPF_REG_0].type == PTR_TO_STACK &&
	    callee->regs[BPF_REG_0].frameno == st->curframe)
		return verr(env, -EINVAL, "cannot return stack pointer to the caller frame\n");
	caller = st->frames[st->curframe - 1];
	caller->regs[BPF_REG_0] = callee->regs[BPF_REG_0];
	for (int r = BPF_REG_1; r <= BPF_REG_5; r++)
		memset(&caller->regs[r], 0, sizeof(struct reg));
	ret = callee->callsite + 1;
	frame_free(callee);
	st->frames[st->curframe--] = NULL;
	return ret;
}
/*
 * Linux's reg_type_mismatch for a load's source or a store's destination: every path must
 * bring the same pointer type when one of them is a context or a kernel object, whose
 * accesses are rewritten per instruction (EINVAL).
 */
static int same_ptr_type(struct venv *env, uint32_t idx, uint8_t type)
{
	uint8_t *prev = &env->ptr_type[idx];
	bool rewritten = type == PTR_TO_CTX || is_btf_ptr(type) || *prev == PTR_TO_CTX ||
			 is_btf_ptr(*prev);

	if (!*prev)
		*prev = type;
	else if (*prev != type && rewritten)
		return verr(env, -EINVAL, "same insn cannot be used with different pointers\n");
	return 0;
}


/* ---- the walk ---- */

/* One instruction; returns the next index, 1 << 32 at a path's end, -EAGAIN if impossible. */
static int64_t do_insn(struct venv *env, uint32_t idx)
{
	const struct bpf_insn *in = &env->insns[idx];
	struct frame *f = cur_frame(env);
	uint8_t cls = BPF_CLASS(in->code);
	int op = bpf_interp_op(in);
	int err = 0;

	env->idx = idx;
	if (env->log && (env->log->level & 3)) { /* do_check's lines per instruction walked */
		char text[96];

		bpf_prog_log_linfo(env->prog, idx, env->log, &env->prev_linfo); /* "; <source>" */
		bpf_disasm(text, sizeof(text), in, env->len - idx);
		bpf_log(env->log, "%u: %s\n", idx, text);
	}
	err = bpf_check_insn(in, env->log);
	if (err)
		return err;
	env->aux[idx] |= AUX_SEEN;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		err = check_alu(env, in);
		return err ? (int64_t)err : (int64_t)idx + 1;
	case BPF_LDX: {
		uint8_t type;

		err = check_reg_read(env, in->src_reg);
		if (!err)
			err = check_reg_write(env, in->dst_reg);
		type = f->regs[in->src_reg].type; /* before the load may overwrite it */
		if (!err)
			err = check_mem_access(env, in->src_reg, in->off, insn_size(in->code), false,
					       in->dst_reg, BPF_MODE(in->code) == BPF_MEMSX);
		if (!err)
			err = same_ptr_type(env, idx, type);
		return err ? (int64_t)err : (int64_t)idx + 1;
	}
	case BPF_ST:
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_ATOMIC) {
			err = check_atomic(env, in);
			return err ? (int64_t)err : (int64_t)idx + 1;
		}
		/* as Linux: the source register first, then the destination */
		err = cls == BPF_STX ? check_reg_read(env, in->src_reg) : 0;
		if (!err)
			err = check_reg_read(env, in->dst_reg);
		/* Linux refuses an immediate store into ctx whatever the program type */
		if (!err && cls == BPF_ST && f->regs[in->dst_reg].type == PTR_TO_CTX)
			err = verr(env, -EACCES, "BPF_ST stores into R%u %s is not allowed\n",
				   in->dst_reg, reg_type_name(PTR_TO_CTX));
		if (!err)
			err = check_mem_access(env, in->dst_reg, in->off, insn_size(in->code), true,
					       cls == BPF_STX ? in->src_reg : VALUE_IMM, false);
		if (!err && cls == BPF_STX)
			err = same_ptr_type(env, idx, f->regs[in->dst_reg].type);
		return err ? (int64_t)err : (int64_t)idx + 1;
	case BPF_LD: {
		struct reg *d = &f->regs[in->dst_reg];

		err = check_reg_write(env, in->dst_reg);
		if (err)
			return err;
		if (in->src_reg == BPF_PSEUDO_MAP_FD) {
			memset(d, 0, sizeof(*d));
			d->type = CONST_PTR_TO_MAP;
			d->map = (struct bpf_map *)(uintptr_t)((uint32_t)in[0].imm |
							       (uint64_t)(uint32_t)in[1].imm << 32);
		} else if (in->src_reg == BPF_PSEUDO_FUNC) {
			uint32_t sub = (uint32_t)subprog_of(env, (uint32_t)(idx + 1 + in->imm));

			err = check_pseudo_func(env, sub);
			if (err)
				return err;
			memset(d, 0, sizeof(*d));
			d->type = PTR_TO_FUNC;
			d->mem_size = sub;
		} else if (in->src_reg == BPF_PSEUDO_BTF_ID) {
			/* a typed ksym, resolved at load (ksym.c); Linux's check_ld_imm */
			const struct bpf_ksym_ld *k = bpf_ksym_of(env->prog, (uint32_t)idx);

			if (!k)
				return verr(env, -EFAULT, "bpf verifier is misconfigured\n");
			memset(d, 0, sizeof(*d));
			d->type = k->kind == BPF_KSYM_PERCPU ? PTR_TO_PERCPU_BTF_ID :
				  k->kind == BPF_KSYM_BTF ? PTR_TO_BTF_ID : PTR_TO_RDONLY_MEM;
			d->btf_id = k->kind == BPF_KSYM_MEM ? 0 : k->btf_id;
			d->mem_size = k->mem_size;
		} else if (in->src_reg == BPF_PSEUDO_MAP_VALUE) {
			/* the loader put the value's address in the pair: find its map again */
			uint64_t addr = (uint32_t)in[0].imm | (uint64_t)(uint32_t)in[1].imm << 32;

			memset(d, 0, sizeof(*d));
			d->type = PTR_TO_MAP_VALUE;
			for (uint32_t i = 0; i < env->prog->nr_maps; i++) {
				struct bpf_map *m = env->prog->maps[i];
				uint64_t base;

				if (m->type != BPF_MAP_TYPE_ARRAY)
					continue;
				base = (uintptr_t)bpf_array_base(m);
				if (addr >= base && addr < base + m->value_size) {
					d->map = m;
					d->off = (int32_t)(addr - base);
				}
			}
			if (!d->map)
				return verr(env, -EINVAL, "invalid map value address\n");
		} else {
			mark_const(d, (uint32_t)in[0].imm | (uint64_t)(uint32_t)in[1].imm << 32);
		}
		return idx + 2;
	}
	case BPF_JMP:
	case BPF_JMP32:
		switch (op) {
		case BPF_OP_JA:
			return idx + 1 + in->off;
		case BPF_OP_JA32:
			return idx + 1 + in->imm;
		case BPF_OP_CALL:
			if (env->cur->active_lock && in->imm != BPF_FUNC_spin_unlock)
				return verr(env, -EINVAL, "function calls are not allowed while holding a lock\n");
			env->call_next = -1;
			err = check_helper_call(env, in);
			if (!err && env->call_next >= 0)
				return env->call_next; /* into the helper's callback */
			return err ? (int64_t)err : (int64_t)idx + 1;
		case BPF_OP_CALL_LOCAL:
			if (env->cur->active_lock)
				return verr(env, -EINVAL, "function calls are not allowed while holding a lock\n");
			return check_local_call(env, in, idx);
		case BPF_OP_EXIT:
			if (env->cur->active_lock)
				return verr(env, -EINVAL, "bpf_spin_unlock is missing\n");
			return check_exit(env);
		default:
			return check_cond_jmp(env, in, idx);
		}
	}
	return verr(env, -EINVAL, "unknown opcode %02x\n", in->code);
}

static void init_state(struct venv *env, struct vstate *st)
{
	struct frame *f = st->frames[0];

	f->regs[BPF_REG_1].type = PTR_TO_CTX;
	f->regs[BPF_REG_10].type = PTR_TO_STACK;
	(void)env;
}

/* log_level 1 without 2: the log shows the path that failed, not those that passed (Linux's
 * pop_log) */
static bool log_paths_only(const struct venv *env)
{
	return env->log && (env->log->level & 3) == 1;
}

/*
 * One walk from insn start (0, or a global function's first) with env->cur as its state.
 * log_level 1: when it passes, the log goes back to log_base (Linux 6.1 keeps nothing of a
 * global function's walk but the line after it, nothing at all of a program that passes).
 */
static int do_check(struct venv *env, uint32_t start, uint32_t log_base)
{
	int64_t next;
	uint32_t idx = start, prev = UINT32_MAX;
	int err;

	/* the state at the start, as Linux prints it (a global function's: global_func_state) */
	if (!start && env->log && (env->log->level & 3))
		bpf_log(env->log, "0: R1=ctx(off=0,imm=0) R10=fp0\n");
	for (;;) {
		if (++env->processed > BPF_MAX_INSNS_PRIV)
			return verr(env, -E2BIG, "BPF program is too large. Processed %u insn\n",
				    env->processed);
		env->insns_since++;
		if (BPF_CLASS(env->insns[idx].code) == BPF_JMP ||
		    BPF_CLASS(env->insns[idx].code) == BPF_JMP32)
			env->jmps_since++;
		err = state_visited(env, idx, prev);
		if (err < 0)
			return err;
		if (err && env->log && (env->log->level & 3))
			bpf_log(env->log, "%u: safe\n", idx); /* an equal state was seen: pruned */
		next = err ? (int64_t)1 << 32 : do_insn(env, idx);
		if (next < 0 && next != -EAGAIN)
			return (int)next;
		if (next >= 0 && next < env->len) {
			prev = idx;
			idx = (uint32_t)next;
			continue;
		}
		/* this path is done: take the next pending one */
		branch_done(env->cur->parent);
		state_free(env->cur);
		env->cur = NULL;
		if (!env->stack_len) {
			/* as Linux at log_level 1: a program that passes leaves no path behind */
			if (log_paths_only(env))
				bpf_log_rewind(env->log, log_base);
			return 0;
		}
		env->stack_len--;
		if (log_paths_only(env)) /* the log keeps only the path being walked */
			bpf_log_rewind(env->log, env->stack[env->stack_len].log_pos);
		env->cur = env->stack[env->stack_len].st;
		idx = env->stack[env->stack_len].insn;
		prev = env->stack[env->stack_len].from;
	}
}

/* Linux's free_states between two walks: the checkpoints of one never prune the other. */
static void free_checkpoints(struct venv *env)
{
	for (uint32_t i = 0; env->visited && i < env->len; i++) {
		for (struct vstate *s = env->visited[i], *n; s; s = n) {
			n = s->next;
			state_free(s);
		}
		env->visited[i] = NULL;
	}
	for (struct vstate *s = env->evicted, *n; s; s = n) {
		n = s->next;
		state_free(s);
	}
	env->evicted = NULL;
}

static struct vstate *state_new(void)
{
	struct vstate *st = ksvc_alloc(sizeof(*st));

	if (st)
		st->frames[0] = frame_new();
	if (st && !st->frames[0]) {
		ksvc_free(st);
		st = NULL;
	}
	return st;
}

/*
 * Linux's do_check_subprogs: each global function on its own, in order, before the main
 * program, from the state its prototype gives.
 */
static int check_global_funcs(struct venv *env)
{
	uint32_t log_base;
	int err;

	for (uint32_t s = 1; s < env->nr_subprogs; s++) {
		if (!env->sub_global[s])
			continue;
		env->cur = state_new();
		if (!env->cur)
			return -ENOMEM;
		env->root = s;
		env->max_frames = 1;
		log_base = env->log ? env->log->len : 0;
		err = global_func_state(env, s, env->cur->frames[0]);
		if (!err)
			err = do_check(env, env->subprog_start[s], log_base);
		if (err)
			return err;
		env->root_frames[s] = (uint8_t)env->max_frames;
		free_checkpoints(env);
		if (env->log && env->log->level)
			bpf_log(env->log, "Func#%u is safe for any args that match its prototype\n", s);
	}
	env->root = 0;
	env->max_frames = 1;
	env->cur = state_new();
	return env->cur ? 0 : -ENOMEM;
}

/* Frames deep a walk from subprogram s goes, with the global functions it calls on top. */
static uint32_t frames_from(const struct venv *env, uint32_t s, uint32_t depth)
{
	uint32_t n = env->root_frames[s];

	for (uint32_t c = 1; depth < MAX_SUBPROGS && c < env->nr_subprogs; c++) {
		uint8_t at = env->gcall[s * MAX_SUBPROGS + c];

		if (at)
			n = MAX(n, at + frames_from(env, c, depth + 1));
	}
	return n;
}

static void env_free(struct venv *env)
{
	state_free(env->cur);
	for (uint32_t i = 0; i < env->stack_len; i++)
		state_free(env->stack[i].st);
	ksvc_free(env->stack);
	if (env->visited) {
		for (uint32_t i = 0; i < env->len; i++) {
			struct vstate *s = env->visited[i], *n;

			for (; s; s = n) {
				n = s->next;
				state_free(s);
			}
		}
	}
	ksvc_free(env->visited);
	for (struct vstate *s = env->evicted, *n; s; s = n) {
		n = s->next;
		state_free(s);
	}
	ksvc_free(env->prune);
	ksvc_free(env->live);
	ksvc_free(env->aux);
	ksvc_free(env->ptr_type);
	ksvc_free(env->idmap);
	ksvc_free(env->gcall);
}

int bpf_verify(struct bpf_prog *prog, struct bpf_verifier_log *log)
{
	struct venv env = { .prog = prog, .insns = prog->insns, .len = prog->len, .log = log };
	uint32_t depth = 0;
	int err;

	err = bpf_check_structure(prog->insns, prog->len, true, log);
	if (err)
		goto stats;
	env.prune = ksvc_alloc(prog->len);
	env.aux = ksvc_alloc(prog->len);
	env.ptr_type = ksvc_alloc(prog->len);
	env.idmap = ksvc_alloc(sizeof(*env.idmap));
	env.visited = ksvc_alloc(sizeof(*env.visited) * prog->len);
	env.gcall = ksvc_alloc(MAX_SUBPROGS * MAX_SUBPROGS);
	if (!env.prune || !env.aux || !env.ptr_type || !env.visited || !env.idmap || !env.gcall) {
		err = -ENOMEM;
		goto out;
	}
	err = check_subprogs(&env);
	if (!err) /* Linux's check_btf_info, which needs the subprograms */
		err = bpf_prog_check_btf(prog, env.subprog_start, env.nr_subprogs, log);
	if (!err)
		err = check_subprog_tail_calls(&env, prog->func_info || prog->linfo);
	if (!err)
		err = check_cfg(&env);
	if (!err)
		err = compute_liveness(&env);
	if (!err) {
		func_info_linkage(&env);
		err = check_global_funcs(&env);
	}
	if (!err) {
		init_state(&env, env.cur);
		err = check_main_prototype(&env);
	}
	if (!err)
		err = do_check(&env, 0, 0);
	if (err)
		goto stats;
	err = check_tail_call_stack(&env);
	if (err)
		goto stats;
	env.root_frames[0] = (uint8_t)env.max_frames;
	/* Linux's check_max_stack_depth counts the frames of global functions' calls too */
	env.max_frames = frames_from(&env, 0, 0);
	if (env.max_frames > BPF_MAX_FRAMES) { /* Linux counts the calls (frames past main) */
		err = verr(&env, -E2BIG, "the call stack of %u frames is too deep !\n",
			   env.max_frames - 1);
		goto stats;
	}
	for (uint32_t s = 0; s < env.nr_subprogs; s++)
		depth = MAX(depth, env.subprog_depth[s]);
	depth = (depth + 15) & ~15u;
	if (env.nr_subprogs > 1 && depth * env.max_frames > BPF_STACK_SIZE) {
		err = verr(&env, -EACCES, "combined stack size of %u calls is %u. Too large\n",
			   env.max_frames, depth * env.max_frames);
		goto stats;
	}
	prog->stack_depth = env.nr_subprogs > 1 ? depth : BPF_STACK_SIZE;
	prog->max_ctx_offset = env.max_ctx_off;
	prog->verified_insns = env.processed; /* bpf_prog_info.verified_insns */
	/* As Linux's sanitize_dead_code: what the walk never reached (its fields never checked)
	 * becomes "ja -1", so neither the decoder nor the JIT ever looks at it. */
	for (uint32_t i = 0; i < prog->len; i++) {
		if (env.aux[i] & AUX_SEEN) {
			/* Linux's convert_ctx_accesses: a kernel object's load may fault, it reads 0 */
			if (env.aux[i] & AUX_PROBE_MEM) {
				uint8_t c = prog->insns[i].code;

				prog->insns[i].code = (uint8_t)(BPF_LDX | BPF_SIZE(c) |
								 (BPF_MODE(c) == BPF_MEMSX ?
									  BPF_PROBE_MEMSX : BPF_PROBE_MEM));
			}
			if (prog->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW))
				i++;
			continue;
		}
		prog->insns[i] = (struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = -1 };
	}
stats: /* as Linux: the figures close the log whether the program passed or not */
	bpf_log(log, "processed %u insns (limit %u) max_states_per_insn 0 total_states %u "
		     "peak_states %u mark_read 0\n",
		env.processed, BPF_MAX_INSNS_PRIV, env.nr_stored, env.nr_stored);
out:
	env_free(&env);
	return err;
}
