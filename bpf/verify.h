/*
 * verify.h - verifier state shared by verify.c (the walk, ALU, branches, calls),
 * verify_mem.c (memory accesses, helper arguments) and verify_cfg.c (structure, CFG).
 * Included only by bpf/verify*.c.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

#include "bpf_internal.h"

enum reg_type {
	NOT_INIT = 0,
	SCALAR,
	PTR_TO_CTX,
	PTR_TO_STACK,
	CONST_PTR_TO_MAP,
	PTR_TO_MAP_VALUE,
	PTR_TO_MAP_VALUE_OR_NULL,
	PTR_TO_MAP_KEY,
	PTR_TO_MEM, /* "alloc_mem" (Linux 6.1): a bpf_ringbuf_reserve record, mem_size bytes */
	PTR_TO_MEM_OR_NULL,
	PTR_TO_FUNC, /* lddw BPF_PSEUDO_FUNC: a callback subprogram (subprogno) */
	PTR_TO_DYNPTR, /* a helper's own local dynptr handed to a callback (user_ringbuf_drain) */
	PTR_TO_BTF_ID, /* a kernel object the kernel's BTF types (btf_id): loads are probe reads */
	/* typed ksyms (ksym.c) and what bpf_per_cpu_ptr / bpf_this_cpu_ptr make of them */
	PTR_TO_PERCPU_BTF_ID, /* a per-CPU variable (btf_id its type): no access, helpers only */
	PTR_TO_BTF_ID_OR_NULL, /* PTR_TO_BTF_ID or NULL (id for the null check) */
	PTR_TO_RDONLY_MEM, /* mem_size read-only bytes of a kernel variable (Linux's rdonly_mem) */
	PTR_TO_RDONLY_MEM_OR_NULL,
	/* PTR_TO_BTF_ID | PTR_UNTRUSTED (| PTR_MAYBE_NULL): loaded from a kptr (verify_kptr.c) or
	 * walked from such; read like PTR_TO_BTF_ID, never a helper's typed argument */
	PTR_TO_BTF_ID_UNTRUSTED,
	PTR_TO_BTF_ID_UNTRUSTED_OR_NULL,
};

/* The pointer types a null check turns into their pointer, or into 0 (Linux's PTR_MAYBE_NULL) */
static inline bool reg_maybe_null(uint8_t type)
{
	return type == PTR_TO_MAP_VALUE_OR_NULL || type == PTR_TO_MEM_OR_NULL ||
	       type == PTR_TO_BTF_ID_OR_NULL || type == PTR_TO_RDONLY_MEM_OR_NULL ||
	       type == PTR_TO_BTF_ID_UNTRUSTED_OR_NULL;
}

/* A kernel object's pointer that loads may go through. */
static inline bool is_btf_ptr(uint8_t type)
{
	return type == PTR_TO_BTF_ID || type == PTR_TO_BTF_ID_UNTRUSTED;
}

/*
 * A register: its type and, for scalars, the value's bounds; for pointers a fixed offset plus
 * a variable part whose bounds are the same four fields.  Constants have umin == umax.
 * precise matters only in checkpoints: a scalar whose bounds some decision below the checkpoint
 * relied on (verify_prec.c).  Pruning compares the bounds of precise scalars only.
 */
struct reg {
	uint8_t type;
	uint8_t frameno; /* PTR_TO_STACK: whose frame */
	uint8_t precise;
	uint8_t plain; /* PTR_TO_MEM(_OR_NULL): a global function's argument, "mem" to Linux */
	uint32_t id; /* *_OR_NULL: copies share an id for the null check */
	uint32_t ref_obj_id; /* PTR_TO_MEM(_OR_NULL): the reference it holds (vstate refs) */
	uint32_t mem_size; /* PTR_TO_(RDONLY_)MEM(_OR_NULL): bytes from off 0; PTR_TO_FUNC: subprogno */
	uint32_t btf_id; /* PTR_TO_(PERCPU_)BTF_ID(_OR_NULL): its type in the kernel's BTF */
	int32_t off;
	struct bpf_map *map;
	uint64_t umin, umax;
	int64_t smin, smax;
};

/* STACK_DYNPTR: two slots of a struct bpf_dynptr; the lower slot's spill entry has off 1
 * (Linux's first_slot), both have the dynptr type in mem_size and its reference in id. */
enum slot_type { STACK_INVALID = 0, STACK_MISC, STACK_ZERO, STACK_SPILL, STACK_DYNPTR };

/* One call frame: registers, and the stack below its fp tracked per byte as deep as used. */
struct frame {
	struct reg regs[MAX_BPF_REG];
	uint32_t callsite; /* insn index of the call that made this frame */
	uint32_t subprog;
	uint8_t callback; /* a helper's callback (enum bpf_cb): r0 is checked at its exit */
	uint32_t depth; /* bytes tracked below fp, a multiple of 8 */
	uint8_t *stype; /* stype[i]: the byte at fp-1-i (enum slot_type) */
	struct reg *spill; /* spill[s]: the register spilled to the 8-byte slot fp-8-8s */
};

static inline uint8_t stack_type(const struct frame *f, int64_t o)
{
	uint64_t i = (uint64_t)(-o - 1);

	return i < f->depth ? f->stype[i] : STACK_INVALID;
}

static inline struct reg *stack_spill(const struct frame *f, int64_t o)
{
	return &f->spill[(-o - 1) / 8];
}

/* The path from a state's parent checkpoint to it jumped to idx from prev. */
struct hist_entry {
	uint32_t idx, prev;
};

/* A reference a path holds (a ringbuf reservation): released before the program exits. */
#define MAX_REFS 64
struct vref {
	uint32_t id, insn; /* insn: the call that acquired it */
};

struct vstate {
	struct frame *frames[BPF_MAX_FRAMES];
	struct vref refs[MAX_REFS];
	uint32_t nrefs;
	uint32_t active_lock; /* id of the map value whose bpf_spin_lock is held, 0: none */
	uint32_t curframe;
	struct vstate *parent; /* last checkpoint on this path */
	uint32_t branches; /* checkpoints: live paths below this one */
	uint32_t insn; /* checkpoints: where */
	struct vstate *next; /* checkpoint list of one insn, or the evicted list */
	uint32_t hit, miss; /* checkpoints: pruning successes and failures */
	/*
	 * The instructions from the parent checkpoint (at insn first; 0 without a parent) to this
	 * state: every non-sequential step in hist, the last one executed in last (checkpoints).
	 * hist_lost: hist overflowed, so backtracking through it gives up (marks all precise).
	 */
	uint32_t first, last;
	struct hist_entry *hist;
	uint32_t nhist, hist_cap;
	bool hist_lost;
	bool all_precise; /* checkpoints: every scalar here and above is precise */
};

/* env->aux[insn]: what some path saw the insn do, for backtracking (verify_prec.c) */
#define AUX_FILL_INDIRECT 1 /* filled a spilled register through a pointer other than r10 */
#define AUX_SPILL_INDIRECT 2 /* spilled a register through a pointer other than r10 */
#define AUX_JMP_SCALARS 4 /* compared two scalar registers */
#define AUX_SEEN 8 /* the walk reached it: the rest is dead code, replaced once verified */
#define AUX_PROBE_MEM 16 /* a load through PTR_TO_BTF_ID: becomes BPF_PROBE_MEM once verified */

#define MAX_SUBPROGS 64

struct idmap; /* verify.c */

struct venv {
	struct bpf_prog *prog;
	const struct bpf_insn *insns;
	uint32_t len;
	struct bpf_verifier_log *log;
	const struct bpf_line_info *prev_linfo; /* the source line the log quoted last */
	struct vstate *cur;
	uint32_t idx; /* instruction being checked */
	uint32_t processed;
	uint32_t next_id;
	uint32_t nr_subprogs;
	uint32_t subprog_start[MAX_SUBPROGS + 1];
	uint32_t subprog_depth[MAX_SUBPROGS];
	uint32_t max_frames;
	uint8_t *prune; /* per insn: a prune point */
	uint16_t *live; /* per insn: registers that may still be read */
	uint8_t *aux; /* per insn: AUX_* */
	uint8_t *ptr_type; /* per load/store insn: the pointer type the first path used (reg_type) */
	struct vstate **visited; /* per insn: checkpoint list */
	struct vstate *evicted; /* checkpoints dropped from their list, freed at the end */
	struct idmap *idmap; /* scratch for comparing states */
	uint32_t nr_stored;
	uint32_t jmps_since, insns_since; /* since the last checkpoint */
	/* pending branches */
	struct pending {
		struct vstate *st;
		uint32_t insn, from; /* resume at insn, reached by a jump from from */
		uint32_t log_pos; /* log_level 1: the log goes back here when it is taken */
	} *stack;
	uint32_t stack_len, stack_cap;
	bool pruned_or_done;
	uint32_t max_ctx_off;
	int64_t call_next; /* check_helper_call: >= 0, the callback's first insn to walk next */
	/* func_info (verify_func.c): per subprogram */
	uint8_t sub_global[MAX_SUBPROGS]; /* BTF_FUNC_GLOBAL: verified once, on its own */
	uint8_t sub_unreliable[MAX_SUBPROGS]; /* a call did not match its prototype */
	uint32_t root; /* the subprogram whose own walk this is: 0, or a global function */
	uint8_t root_frames[MAX_SUBPROGS]; /* frames each own walk used */
	uint8_t *gcall; /* [root * MAX_SUBPROGS + callee]: frames above a global function's call */
	uint64_t tail_call_subs; /* bit s: subprogram s (s > 0) has a bpf_tail_call */
};

/* verify.c */
struct frame *cur_frame(struct venv *env);
struct frame *frame_new(void);
void frame_free(struct frame *f);
/* Track the stack of f down to fp+lo (lo < 0): 0 or -ENOMEM. */
int frame_grow(struct frame *f, int64_t lo);
void mark_unknown(struct reg *r);
void mark_const(struct reg *r, uint64_t v);
void reg_sync(struct reg *r);
bool reg_is_const(const struct reg *r);
bool is_pointer(const struct reg *r);
const char *reg_type_name(uint8_t t);
/* r's type as Linux's log names it (reg_type_str): "mem" for plain memory */
const char *reg_name(const struct reg *r);
int verr(struct venv *env, int err, const char *fmt, ...);

/* value_regno of check_mem_access for stores that are not a register */
#define VALUE_IMM (-1) /* BPF_ST: the insn's imm */
#define VALUE_UNKNOWN (-2) /* atomics: some scalar */
#define VALUE_NONE (-3) /* loads whose result is handled by the caller */

static inline uint32_t insn_size(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* verify.c: references (ringbuf reservations) a path holds */
/* A new reference acquired by the insn being checked: its id, or a negative errno. */
int64_t acquire_ref(struct venv *env);
/* The reference ends: it leaves st's list and every register or spill holding it becomes an
 * unknown scalar.  false if st does not hold it. */
bool release_ref(struct vstate *st, uint32_t id);

/* verify_mem.c */
int check_mem_access(struct venv *env, uint32_t regno, int32_t off, uint32_t size, bool write,
		     int32_t value_regno, bool sign_ext);
int check_atomic(struct venv *env, const struct bpf_insn *in);
int check_helper_call(struct venv *env, const struct bpf_insn *in);

/* verify.c */
bool reg_bad(const struct reg *r);
void state_free(struct vstate *s);
/* Queue the current state to be explored from insn later; *out is the queued copy. */
int push_branch(struct venv *env, uint32_t insn, struct vstate **out);
int check_reg_read(struct venv *env, uint32_t regno);
int check_reg_write(struct venv *env, uint32_t regno);

/* verify_alu.c */
int check_alu(struct venv *env, const struct bpf_insn *in);

/* verify_jmp.c: next insn index, or -EAGAIN when the fall-through is impossible */
int64_t check_cond_jmp(struct venv *env, const struct bpf_insn *in, uint32_t idx);

/* verify_prec.c */
void hist_push(struct vstate *st, uint32_t idx, uint32_t prev);
/* The bounds of scalar regno at the insn being checked decide something: keep them exact. */
void mark_reg_precise(struct venv *env, uint32_t regno);
/* cur was pruned at insn idx by old: what old needed exact, cur's checkpoints need too. */
void propagate_precision(struct venv *env, const struct vstate *old, uint32_t idx);
/* A new checkpoint starts with nothing precise (everything with bpf-to-bpf calls). */
void checkpoint_init_precision(const struct venv *env, struct vstate *cp);

/* verify_dynptr.c: struct bpf_dynptr arguments (Linux 6.1's rules for its stack slots) */
struct dynptr_meta {
	uint32_t uninit_regno; /* a constructor's dynptr argument */
	uint8_t uninit_type; /* enum bpf_dynptr_type it becomes */
	uint32_t release_regno; /* submit/discard's dynptr argument */
	uint32_t ref; /* the reference of the initialized dynptr argument (dynptr_data) */
};
/* Argument argno (0-based) in regno, of kind arg (ARG_DYNPTR*): 0 or -errno with the log. */
int dynptr_check_arg(struct venv *env, uint32_t regno, uint32_t argno, uint8_t arg,
		     struct dynptr_meta *m);
/* After every argument passed: the constructor's slots become a dynptr (a reference for a
 * ring buffer one), the released one's slots and reference go.  0 or -errno. */
int dynptr_commit(struct venv *env, const struct dynptr_meta *m);
/* Would an access of [lo, hi) of f's stack touch a dynptr (which no instruction may read)? */
bool stack_has_dynptr(const struct frame *f, int64_t lo, int64_t hi);

/* verify_kptr.c: kptr fields of map values (Linux 6.1's rules, EACCES) */
/* check_map_access's part: an access of size bytes at off (p's fixed offset in) of the map
 * value p points to, by an instruction or (helper) by a helper, that touches a kptr. */
int kptr_check_overlap(struct venv *env, const struct reg *p, int64_t off, uint64_t size,
		       bool helper);
/* check_map_kptr_access: the insn being checked loads (into value_regno) or stores kptr k. */
int kptr_field_access(struct venv *env, const struct bpf_kptr_field *k, int32_t value_regno);
/* process_kptr_func: bpf_kptr_xchg's map value argument r in regno. */
int kptr_xchg_arg(struct venv *env, uint32_t regno, const struct reg *r);

/* verify_mem.c: memory argument regno, size bytes readable (write: writable, then misc) */
int helper_mem(struct venv *env, uint32_t regno, uint64_t size, bool write);

/* verify_func.c: subprograms as their BTF func_info says (Linux 6.1's global functions) */
/* After bpf_prog_check_btf: each subprogram's linkage. */
void func_info_linkage(struct venv *env);
/* lddw BPF_PSEUDO_FUNC of subprog: func_info, and a static target.  0 or -EINVAL. */
int check_pseudo_func(struct venv *env, uint32_t subprog);
/* Frame 0 of global function s's own walk, its arguments typed from BTF: 0 or -errno. */
int global_func_state(struct venv *env, uint32_t s, struct frame *f);
/* A call of subprogram s against its prototype (Linux's btf_check_subprog_call): 0, or
 * -EINVAL (-EACCES) with the log line when it does not match, -EFAULT for broken BTF. */
int check_subprog_call_btf(struct venv *env, uint32_t s);
/* The main program's prototype against its first registers (Linux's
 * btf_check_subprog_arg_match at its start): only the log lines matter, or -EFAULT. */
int check_main_prototype(struct venv *env);

/* verify_cfg.c */
int check_subprogs(struct venv *env);
/* Tail calls outside the main program: refused without BTF (Linux's check_abnormal_return);
 * with it, noted in tail_call_subs (Linux 6.1 runs them from its JIT, this kernel from its
 * interpreter). */
int check_subprog_tail_calls(struct venv *env, bool btf);
/* After the walk: Linux's check_max_stack_depth for them, the frames of every static call
 * path above a tail-calling subprogram under 256 bytes (EACCES). */
int check_tail_call_stack(struct venv *env);
/* Linux's check_cfg: no recursion, every insn reachable (loops are proven bounded later);
 * marks the prune points. */
int check_cfg(struct venv *env);
int bpf_check_insn(const struct bpf_insn *in, struct bpf_verifier_log *log);
int subprog_of(const struct venv *env, uint32_t insn);
int compute_liveness(struct venv *env);
