/*
 * verify_cfg.c - the verifier's structural pass: every instruction is a known opcode with
 * sane fields, lddw pairs are whole, jump and call targets lie inside the program (and inside
 * the caller's subprogram) and never in the middle of a lddw, helper ids exist, each
 * subprogram ends in exit or ja, and every instruction is reachable.  Also marks the prune
 * points (jump targets, conditional fall-throughs, call returns) the walk in verify.c uses.
 *
 * bpf_check_structure is also the only check of the verifier-free test path (bpf-run): what
 * it accepts cannot make the interpreter index outside its tables or the program.
 * Log texts and errnos follow Linux 6.1's check_subprogs/check_cfg (EINVAL, E2BIG).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "interp_ops.h"
#include "verify.h"

static bool is_lddw(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/*
 * The handler an instruction's code names for control flow (exit, ja, calls), whatever its
 * other fields hold: Linux's check_subprogs and check_cfg go by the code, and the walk refuses
 * reserved fields later, when it reaches the instruction.  Anything else: bpf_interp_op.
 */
static int cfg_op(const struct bpf_insn *in)
{
	switch (in->code) {
	case BPF_JMP | BPF_EXIT:
		return BPF_OP_EXIT;
	case BPF_JMP | BPF_JA:
		return BPF_OP_JA;
	case BPF_JMP32 | BPF_JA:
		return BPF_OP_JA32;
	case BPF_JMP | BPF_CALL:
		return in->src_reg == BPF_PSEUDO_CALL ? BPF_OP_CALL_LOCAL : BPF_OP_CALL;
	}
	return bpf_interp_op(in);
}

/* Does insn i jump (or call locally)?  Its target in *t (may be out of range). */
static bool jump_target(const struct bpf_insn *in, uint32_t i, int64_t *t)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	if (op == BPF_EXIT)
		return false;
	if (op == BPF_CALL) {
		*t = (int64_t)i + 1 + in->imm;
		return cls == BPF_JMP && BPF_SRC(in->code) == BPF_K && in->src_reg == BPF_PSEUDO_CALL;
	}
	if (cls == BPF_JMP32 && op == BPF_JA)
		*t = (int64_t)i + 1 + in->imm;
	else
		*t = (int64_t)i + 1 + in->off;
	return true;
}

/*
 * Is code an opcode Linux 6.1's instruction table has (plus the ISA v4 codes the interpreter
 * runs: LDX MEMSX, JMP32 JA, ALU64 END)?  Linux refuses an unknown code before anything else;
 * the fields that pick a variant (END's and an atomic's imm, sdiv's and movsx's off) and every
 * reserved field are checked in the walk (bpf_check_insn), in the order Linux meets them.
 */
static bool code_known(uint8_t code)
{
	uint8_t op = BPF_OP(code), size = BPF_SIZE(code), mode = BPF_MODE(code);
	bool k = BPF_SRC(code) == BPF_K;

	switch (BPF_CLASS(code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op == BPF_NEG)
			return k;
		if (op == BPF_END)
			return BPF_CLASS(code) == BPF_ALU || k;
		return op <= BPF_ARSH;
	case BPF_JMP:
		if (op == BPF_JA || op == BPF_CALL || op == BPF_EXIT)
			return k;
		return op <= BPF_JSLE;
	case BPF_JMP32:
		if (op == BPF_JA)
			return k;
		return op <= BPF_JSLE && op != BPF_CALL && op != BPF_EXIT;
	case BPF_LD:
		return code == (BPF_LD | BPF_IMM | BPF_DW) ||
		       ((mode == BPF_ABS || mode == BPF_IND) && size != BPF_DW);
	case BPF_LDX:
		return mode == BPF_MEM || (mode == BPF_MEMSX && size != BPF_DW);
	case BPF_ST:
		return mode == BPF_MEM;
	case BPF_STX:
		return mode == BPF_MEM || (mode == BPF_ATOMIC && (size == BPF_W || size == BPF_DW));
	}
	return false;
}

/* Reserved-field checks per class, as Linux's do_check does before it looks at operands. */
static int check_fields(const struct bpf_insn *in, int op, bool linux_rules,
			struct bpf_verifier_log *log)
{
	uint8_t cls = BPF_CLASS(in->code);

	if (in->dst_reg >= MAX_BPF_REG || in->src_reg >= MAX_BPF_REG) {
		if (!is_lddw(in) && !(cls == BPF_JMP && BPF_OP(in->code) == BPF_CALL)) {
			bpf_log(log, "R%d is invalid\n", in->dst_reg >= MAX_BPF_REG ? in->dst_reg :
										     in->src_reg);
			return -EINVAL;
		}
	}
	if (in->dst_reg >= MAX_BPF_REG) {
		bpf_log(log, "R%d is invalid\n", in->dst_reg);
		return -EINVAL;
	}
	if (op == BPF_OP_CALL || op == BPF_OP_CALL_LOCAL || op == BPF_OP_EXIT) {
		if (in->off || (op != BPF_OP_CALL_LOCAL && in->src_reg) || in->dst_reg ||
		    (op == BPF_OP_EXIT && in->imm)) {
			bpf_log(log, op == BPF_OP_EXIT ? "BPF_EXIT uses reserved fields\n" :
							 "BPF_CALL uses reserved fields\n");
			return -EINVAL;
		}
	}
	if (op == BPF_OP_JA && (in->imm || in->src_reg || in->dst_reg)) {
		bpf_log(log, "BPF_JA uses reserved fields\n");
		return -EINVAL;
	}
	if (!linux_rules)
		return 0; /* the verifier-free test path runs what the ISA defines */
	if (cls == BPF_ALU || cls == BPF_ALU64) {
		uint8_t aop = BPF_OP(in->code);
		bool k = BPF_SRC(in->code) == BPF_K;
		bool off_ok = !in->off || ((aop == BPF_DIV || aop == BPF_MOD) && in->off == 1) ||
			      (aop == BPF_MOV && !k && (in->off == 8 || in->off == 16 || in->off == 32));

		if ((aop != BPF_END && !k && in->imm) || ((k || aop == BPF_END) && in->src_reg) ||
		    !off_ok || (aop == BPF_NEG && (in->imm || in->src_reg))) {
			bpf_log(log, "BPF_%s uses reserved fields\n", aop == BPF_NEG ? "NEG" :
								aop == BPF_END ? "END" :
								aop == BPF_MOV ? "MOV" : "ALU");
			return -EINVAL;
		}
		/* constant divisors and shift counts: check_alu, after the operands (as Linux) */
	}
	if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_OP_CALL && op != BPF_OP_CALL_LOCAL &&
	    op != BPF_OP_CALLX && op != BPF_OP_EXIT && op != BPF_OP_JA && op != BPF_OP_JA32 &&
	    BPF_SRC(in->code) == BPF_K && in->src_reg) {
		bpf_log(log, "BPF_JMP/JMP32 uses reserved fields\n");
		return -EINVAL;
	}
	if ((cls == BPF_ST && in->src_reg) || (cls == BPF_LDX && in->imm) ||
	    (cls == BPF_STX && BPF_MODE(in->code) == BPF_MEM && in->imm)) {
		bpf_log(log, "BPF_%s uses reserved fields\n", cls == BPF_ST ? "ST" : cls == BPF_LDX ? "LDX" : "STX");
		return -EINVAL;
	}
	return 0;
}

/*
 * The walk's first look at an instruction it reaches (Linux checks these in do_check, so a
 * program that fails earlier on its path reports that failure instead): register numbers,
 * reserved fields, constant divisors and shifts, the variant fields, helper ids.
 */
int bpf_check_insn(const struct bpf_insn *in, struct bpf_verifier_log *log)
{
	uint8_t cls = BPF_CLASS(in->code), mode = BPF_MODE(in->code);
	int err = check_fields(in, cfg_op(in), true, log);

	if (err)
		return err;
	if (cls == BPF_LD && (mode == BPF_ABS || mode == BPF_IND)) {
		/* Linux takes these only in socket filters and friends, which run nothing here */
		bpf_log(log, "BPF_LD_[ABS|IND] instructions not allowed for this program type\n");
		return -EINVAL;
	}
	if (cfg_op(in) == BPF_OP_CALL && !bpf_helper_get(in->imm)) {
		/* as check_helper_call: an id in Linux's list is a helper this kernel lacks */
		if (bpf_helper_id_name(in->imm))
			bpf_log(log, "unknown func %s#%d\n", bpf_helper_id_name(in->imm), in->imm);
		else
			bpf_log(log, "invalid func unknown#%d\n", in->imm);
		return -EINVAL;
	}
	if (bpf_interp_op(in) != BPF_OP_BAD)
		return 0;
	if (cls == BPF_STX && mode == BPF_ATOMIC)
		bpf_log(log, "BPF_ATOMIC uses invalid atomic opcode %02x\n", in->imm);
	else if ((cls == BPF_ALU || cls == BPF_ALU64) && BPF_OP(in->code) == BPF_END)
		bpf_log(log, "BPF_END uses reserved fields\n");
	else
		bpf_log(log, "unknown opcode %02x\n", in->code);
	return -EINVAL;
}

int bpf_check_structure(const struct bpf_insn *insns, uint32_t len, bool linux_rules,
			struct bpf_verifier_log *log)
{
	uint8_t *mid; /* bit per slot: the second half of a lddw */
	int err = 0, op;

	if (len == 0) {
		bpf_log(log, "empty program\n");
		return -EINVAL;
	}
	if (len > BPF_MAX_INSNS_PRIV) {
		bpf_log(log, "BPF program is too large\n");
		return -E2BIG;
	}
	mid = ksvc_alloc(len / 8 + 1);
	if (!mid)
		return -ENOMEM;
	for (uint32_t i = 0; i < len; i++) {
		const struct bpf_insn *in = &insns[i];

		op = cfg_op(in);
		if (linux_rules ? !code_known(in->code) : op == BPF_OP_BAD) {
			bpf_log(log, "unknown opcode %02x\n", in->code);
			err = -EINVAL;
			goto out;
		}
		if (linux_rules && BPF_CLASS(in->code) == BPF_LDX && in->imm) {
			bpf_log(log, "BPF_LDX uses reserved fields\n"); /* Linux checks this one early */
			err = -EINVAL;
			goto out;
		}
		err = linux_rules ? 0 : check_fields(in, op, false, log);
		if (err)
			goto out;
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (i + 1 >= len || insns[i + 1].code || insns[i + 1].dst_reg ||
			    insns[i + 1].src_reg || insns[i + 1].off) {
				bpf_log(log, "invalid bpf_ld_imm64 insn\n");
				err = -EINVAL;
				goto out;
			}
			i++;
			mid[i / 8] |= (uint8_t)(1u << (i % 8));
			continue;
		}
		if (!linux_rules && op == BPF_OP_CALL && !bpf_helper_get(in->imm)) {
			bpf_log(log, "invalid func unknown#%d\n", in->imm);
			err = -EINVAL;
			goto out;
		}
	}
	for (uint32_t i = 0; i < len; i++) {
		int64_t t;

		if (mid[i / 8] & (1u << (i % 8)) || !jump_target(&insns[i], i, &t))
			continue;
		if (t < 0 || t >= len) {
			bpf_log(log, "jump out of range from insn %u to %lld\n", i, (long long)t);
			err = -EINVAL;
			goto out;
		}
		/* the verifier reports this in check_cfg, in Linux's order */
		if (!linux_rules && (mid[t / 8] & (1u << (t % 8)))) {
			bpf_log(log, "jump into the middle of ldimm64 insn %lld\n", (long long)t);
			err = -EINVAL;
			goto out;
		}
	}
	/* a lddw's data slot has code 0: never an exit.  By code, as Linux: an exit with reserved
	 * fields set still ends the program here (the walk refuses its fields) */
	op = insns[len - 1].code;
	if (op != (BPF_JMP | BPF_EXIT) && op != (BPF_JMP | BPF_JA) && op != (BPF_JMP32 | BPF_JA)) {
		bpf_log(log, "last insn is not an exit or jmp\n");
		err = -EINVAL;
	}
out:
	ksvc_free(mid);
	return err;
}

int subprog_of(const struct venv *env, uint32_t insn)
{
	int s = 0;

	for (uint32_t i = 1; i < env->nr_subprogs; i++)
		if (env->subprog_start[i] <= insn)
			s = (int)i;
	return s;
}

static int add_subprog(struct venv *env, uint32_t start)
{
	uint32_t i;

	for (i = 0; i < env->nr_subprogs; i++)
		if (env->subprog_start[i] == start)
			return 0;
	if (env->nr_subprogs == MAX_SUBPROGS)
		return verr(env, -E2BIG, "too many subprograms\n");
	/* keep sorted */
	for (i = env->nr_subprogs; i > 0 && env->subprog_start[i - 1] > start; i--)
		env->subprog_start[i] = env->subprog_start[i - 1];
	env->subprog_start[i] = start;
	env->nr_subprogs++;
	return 0;
}

/*
 * A bpf-to-bpf call into a subprogram that is still being called (recursion, direct or not):
 * Linux's check_cfg meets it as a back-edge of a call, which no loop allowance covers: EINVAL.
 * A depth-first walk of the call graph from the main program, in instruction order.
 */
static int check_recursion(struct venv *env)
{
	const struct bpf_insn *insns = env->insns;
	uint32_t stack[MAX_SUBPROGS + 1], at[MAX_SUBPROGS + 1], depth = 0;
	uint8_t state[MAX_SUBPROGS] = { 0 }; /* 0 new, 1 on the walk, 2 done */

	if (env->nr_subprogs < 2)
		return 0;
	stack[0] = 0;
	at[0] = env->subprog_start[0];
	state[0] = 1;
	depth = 1;
	while (depth) {
		uint32_t s = stack[depth - 1], i = at[depth - 1];

		if (i >= env->subprog_start[s + 1]) {
			state[s] = 2;
			depth--;
			continue;
		}
		at[depth - 1] = i + (is_lddw(&insns[i]) ? 2 : 1);
		if (cfg_op(&insns[i]) != BPF_OP_CALL_LOCAL)
			continue;
		uint32_t target = i + 1 + (uint32_t)insns[i].imm;
		int callee = subprog_of(env, target);

		if (callee < 0)
			continue;
		if (state[callee] == 1)
			return verr(env, -EINVAL, "back-edge from insn %u to %u\n", i, target);
		if (state[callee] == 0 && depth <= MAX_SUBPROGS) {
			state[callee] = 1;
			stack[depth] = (uint32_t)callee;
			at[depth++] = env->subprog_start[callee];
		}
	}
	return 0;
}

/* Subprogram boundaries (Linux's check_subprogs): jumps stay inside, each ends in exit or ja. */
int check_subprogs(struct venv *env)
{
	const struct bpf_insn *insns = env->insns;
	uint32_t len = env->len;
	int err;

	env->nr_subprogs = 1;
	env->subprog_start[0] = 0;
	for (uint32_t i = 0; i < len; i++) {
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL) {
			err = add_subprog(env, i + 1 + insns[i].imm);
			if (err)
				return err;
		}
		if (is_lddw(&insns[i]) && insns[i].src_reg == BPF_PSEUDO_FUNC) {
			/* a callback's address: its target starts a subprogram too */
			int64_t t = (int64_t)i + 1 + insns[i].imm;

			if (t < 0 || t >= len)
				return verr(env, -EINVAL, "call to invalid destination\n");
			err = add_subprog(env, (uint32_t)t);
			if (err)
				return err;
		}
		if (is_lddw(&insns[i]))
			i++;
	}
	env->subprog_start[env->nr_subprogs] = len;
	if (env->log && (env->log->level & 2))
		for (uint32_t s = 0; s < env->nr_subprogs; s++)
			bpf_log(env->log, "func#%u @%u\n", s, env->subprog_start[s]);
	/* jumps stay inside their subprogram; each subprogram ends in exit or ja */
	for (uint32_t s = 0; s < env->nr_subprogs; s++) {
		uint32_t lo = env->subprog_start[s], hi = env->subprog_start[s + 1];
		int op = cfg_op(&insns[hi - 1]);

		for (uint32_t i = lo; i < hi; i++) {
			int64_t t;

			if (jump_target(&insns[i], i, &t) &&
			    cfg_op(&insns[i]) != BPF_OP_CALL_LOCAL && (t < lo || t >= hi))
				return verr(env, -EINVAL, "jump out of range from insn %u to %lld\n", i,
					    (long long)t);
			if (is_lddw(&insns[i]))
				i++;
		}
		if (op != BPF_OP_EXIT && op != BPF_OP_JA && op != BPF_OP_JA32)
			return verr(env, -EINVAL, "last insn is not an exit or jmp\n");
	}
	return 0;
}

int check_subprog_tail_calls(struct venv *env, bool btf)
{
	const struct bpf_insn *insns = env->insns;

	for (uint32_t i = env->subprog_start[1]; env->nr_subprogs > 1 && i < env->len; i++) {
		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].imm != BPF_FUNC_tail_call ||
		    insns[i].src_reg == BPF_PSEUDO_CALL)
			continue;
		if (!btf) /* Linux's check_abnormal_return */
			return verr(env, -EINVAL, "tail_call is not allowed in subprogs without BTF\n");
		env->tail_call_subs |= 1ull << subprog_of(env, i);
	}
	return 0;
}

/* A subprogram's stack as Linux's check_max_stack_depth counts it: in 32-byte steps, at least one */
static uint32_t stack_step(const struct venv *env, uint32_t s)
{
	return (MAX(env->subprog_depth[s], 1u) + 31) & ~31u;
}

/*
 * The static call graph (local calls and callbacks' lddw) walked depth first as Linux does:
 * entering a tail-calling subprogram with 256 bytes or more of frames above it is refused, as
 * a tail call keeps those frames while the next program takes up to a full stack of its own.
 * Paths too deep are left to the frame check that follows.
 */
int check_tail_call_stack(struct venv *env)
{
	const struct bpf_insn *insns = env->insns;
	uint32_t ret_insn[BPF_MAX_FRAMES], ret_sub[BPF_MAX_FRAMES];
	uint32_t frame = 0, s = 0, i = 0, depth = 0, end;

	if (!env->tail_call_subs)
		return 0;
enter:
	if (s && (env->tail_call_subs >> s & 1) && depth >= 256)
		return verr(env, -EACCES, "tail_calls are not allowed when call stack of previous "
					  "frames is %u bytes. Too large\n", depth);
	depth += stack_step(env, s);
resume:
	end = s + 1 < env->nr_subprogs ? env->subprog_start[s + 1] : env->len;
	for (; i < end; i++) {
		bool call = insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL;
		bool func = insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    insns[i].src_reg == BPF_PSEUDO_FUNC;

		if (!call && !func)
			continue;
		if (frame + 1 >= BPF_MAX_FRAMES)
			return 0;
		ret_insn[frame] = i + 1;
		ret_sub[frame] = s;
		frame++;
		s = (uint32_t)subprog_of(env, i + 1 + (uint32_t)insns[i].imm);
		i = env->subprog_start[s];
		goto enter;
	}
	if (!frame)
		return 0;
	depth -= stack_step(env, s);
	frame--;
	i = ret_insn[frame];
	s = ret_sub[frame];
	goto resume;
}

int check_cfg(struct venv *env)
{
	const struct bpf_insn *insns = env->insns;
	uint32_t len = env->len, *work, nwork = 0;
	uint8_t *seen;
	int err;

	err = check_recursion(env);
	if (err)
		return err;

	seen = ksvc_alloc(len);
	work = ksvc_alloc(sizeof(*work) * (len + 1));
	if (!seen || !work) {
		ksvc_free(seen);
		ksvc_free(work);
		return -ENOMEM;
	}
	err = 0;
	for (uint32_t s = 0; s < env->nr_subprogs; s++) {
		work[nwork++] = env->subprog_start[s];
		seen[env->subprog_start[s]] = 1;
	}
	env->prune[0] = 1;
	while (nwork) {
		uint32_t i = work[--nwork];
		const struct bpf_insn *in = &insns[i];
		/* by code, as Linux's check_cfg: the walk checks the fields later */
		bool ja = in->code == (BPF_JMP | BPF_JA) || in->code == (BPF_JMP32 | BPF_JA);
		bool call = in->code == (BPF_JMP | BPF_CALL);
		int64_t succ[2];
		int ns = 0;

		if (in->code == (BPF_JMP | BPF_EXIT))
			continue;
		if (ja) {
			jump_target(in, i, &succ[ns++]);
		} else if (call) {
			succ[ns++] = i + 1;
		} else if (is_lddw(in)) {
			succ[ns++] = i + 2;
		} else if (BPF_CLASS(in->code) == BPF_JMP || BPF_CLASS(in->code) == BPF_JMP32) {
			succ[ns++] = i + 1;
			jump_target(in, i, &succ[ns++]);
		} else {
			succ[ns++] = i + 1;
		}
		for (int k = 0; k < ns; k++) {
			if (succ[k] < 0 || succ[k] >= len) {
				err = verr(env, -EINVAL, "jump out of range from insn %u to %lld\n", i,
					   (long long)succ[k]);
				goto out;
			}
			/* prune points: where paths meet (jump targets, after branches and calls) */
			if (ns == 2 || ja || call)
				env->prune[succ[k]] = 1;
			if (!seen[succ[k]]) {
				seen[succ[k]] = 1;
				work[nwork++] = (uint32_t)succ[k];
			}
		}
	}
	for (uint32_t i = 0; i < len; i++) {
		if (!seen[i]) {
			err = verr(env, -EINVAL, "unreachable insn %u\n", i);
			goto out;
		}
		if (is_lddw(&insns[i])) {
			if (seen[i + 1]) {
				err = verr(env, -EINVAL, "jump into the middle of ldimm64 insn %u\n", i);
				goto out;
			}
			i++;
		}
	}
out:
	ksvc_free(seen);
	ksvc_free(work);
	return err;
}

/* Registers an instruction reads (use) and writes (def), for liveness. */
static void use_def(const struct bpf_insn *in, int op, uint16_t *use, uint16_t *def)
{
	uint8_t cls = BPF_CLASS(in->code);
	uint16_t d = (uint16_t)(1u << in->dst_reg), s = (uint16_t)(1u << in->src_reg);

	*use = *def = 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		*def = d;
		if (BPF_OP(in->code) != BPF_MOV)
			*use |= d;
		if (BPF_SRC(in->code) == BPF_X && BPF_OP(in->code) != BPF_END &&
		    BPF_OP(in->code) != BPF_NEG)
			*use |= s;
		break;
	case BPF_LDX:
		*use = s;
		*def = d;
		break;
	case BPF_ST:
		*use = d;
		break;
	case BPF_STX:
		*use = d | s;
		if (BPF_MODE(in->code) == BPF_ATOMIC) {
			if (in->imm == BPF_CMPXCHG) {
				*use |= 1;
				*def = 1;
			} else if (in->imm & BPF_FETCH) {
				*def = s;
			}
		}
		break;
	case BPF_LD:
		*def = d;
		break;
	default: /* JMP, JMP32 */
		if (op == BPF_OP_CALL) {
			/* only the arguments the helper's table row declares are checked */
			const struct bpf_helper *h = bpf_helper_get(in->imm);

			for (int a = 0; h && a < 5 && h->args[a]; a++)
				*use |= (uint16_t)(1u << (BPF_REG_1 + a));
			*def = 0x3f; /* r0 set, r1-r5 clobbered */
		} else if (op == BPF_OP_CALL_LOCAL) {
			*use = 0x3e; /* r1-r5: the callee may read any */
			*def = 0x3f;
		} else if (op == BPF_OP_EXIT) {
			*use = 1;
		} else if (op != BPF_OP_JA && op != BPF_OP_JA32) {
			*use = d | (BPF_SRC(in->code) == BPF_X ? s : 0);
		}
		break;
	}
}

/*
 * live[i]: registers whose value at insn i may still be read (backward dataflow to a fixed
 * point).  States that differ only in dead registers are the same state for pruning.
 */
int compute_liveness(struct venv *env)
{
	const struct bpf_insn *insns = env->insns;
	uint32_t len = env->len;
	bool changed = true;

	env->live = ksvc_alloc(sizeof(*env->live) * len);
	if (!env->live)
		return -ENOMEM;
	while (changed) {
		changed = false;
		for (uint32_t k = len; k-- > 0;) {
			const struct bpf_insn *in = &insns[k];
			int op = cfg_op(in);
			uint16_t use, def, out = 0, nl;
			int64_t t;

			if (k > 0 && is_lddw(&insns[k - 1]) && (k < 2 || !is_lddw(&insns[k - 2])))
				continue; /* data slot (approximation only matters for odd lddw runs) */
			use_def(in, op, &use, &def);
			if (op != BPF_OP_EXIT && op != BPF_OP_JA && op != BPF_OP_JA32) {
				uint32_t next = k + (is_lddw(in) ? 2 : 1);

				if (next < len)
					out |= env->live[next];
			}
			if (op != BPF_OP_CALL_LOCAL && jump_target(in, k, &t) && t >= 0 && t < len)
				out |= env->live[t];
			nl = (uint16_t)(use | (out & ~def) | (1u << BPF_REG_10));
			if (nl != env->live[k]) {
				env->live[k] = nl;
				changed = true;
			}
		}
	}
	return 0;
}
