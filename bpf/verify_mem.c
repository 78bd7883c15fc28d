/*
 * verify_mem.c - the verifier's memory rules: loads and stores through ctx, stack and map value
 * pointers, atomics, and helper calls checked against each helper's argument types.
 *
 * Stack: 512 bytes per frame, tracked per byte (invalid / misc / spilled register); a read needs
 * every byte written first; an aligned 8-byte store of a register spills its state, and an
 * aligned 8-byte load brings it back.  Map values: the access, including the pointer's variable
 * offset, must fall inside value_size; BPF_F_RDONLY_PROG / WRONLY_PROG maps refuse writes /
 * reads.  Ctx of BPF_PROG_TYPE_PERF_EVENT: struct bpf_perf_event_data, read-only, regs words
 * 8 bytes wide, sample_period and addr also narrower.  Messages and errnos as Linux 6.1 (EACCES).
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"
#include "verify.h"

_Static_assert(offsetof(struct bpf_perf_event_data, regs) == 0, "regs first");
_Static_assert(offsetof(struct bpf_perf_event_data, sample_period) ==
		       sizeof(bpf_user_pt_regs_t), "sample_period follows regs");
_Static_assert(offsetof(struct bpf_perf_event_data, addr) ==
		       offsetof(struct bpf_perf_event_data, sample_period) + 8, "addr last");

static void set_loaded(struct reg *d, uint32_t size, bool sign_ext)
{
	mark_unknown(d);
	if (size == 8)
		return;
	if (sign_ext) {
		d->smin = -((int64_t)1 << (size * 8 - 1));
		d->smax = ((int64_t)1 << (size * 8 - 1)) - 1;
	} else {
		d->umax = ((uint64_t)1 << (size * 8)) - 1;
	}
	reg_sync(d);
}

/* Byte range [*lo, *hi) a pointer access may touch, relative to the object's start. */
static void access_range(const struct reg *p, int32_t off, uint32_t size, int64_t *lo, int64_t *hi)
{
	*lo = (int64_t)p->off + p->smin + off;
	*hi = (int64_t)p->off + p->smax + off + size;
}

static bool var_off(const struct reg *p)
{
	return p->smin != 0 || p->smax != 0;
}

/* The variable part of p as a tnum (value; mask), the one Linux's tnum_range gives. */
static void range_tnum(const struct reg *p, uint64_t *value, uint64_t *mask)
{
	uint64_t chi = (uint64_t)p->smin ^ (uint64_t)p->smax;
	int bits = chi ? 64 - __builtin_clzll(chi) : 0;

	*mask = bits > 63 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
	*value = bits > 63 ? 0 : (uint64_t)p->smin & ~*mask;
}

/*
 * Linux's check_ptr_alignment: stack accesses are always checked (the spill tracking needs
 * whole slots), other memory only when strict (atomics); one byte is always aligned.  The
 * variable part is known here as a range: its tnum is the one Linux's tnum_range gives.
 */
static int check_align(struct venv *env, const struct reg *p, int32_t off, uint32_t size,
		       bool strict)
{
	uint64_t value, mask, sv, mu;
	const char *desc = p->type == PTR_TO_STACK ? "stack " : p->type == PTR_TO_MAP_VALUE ? "value " :
			   p->type == PTR_TO_MAP_KEY ? "key " : p->type == PTR_TO_CTX ? "context " : "";

	if ((!strict && p->type != PTR_TO_STACK) || size == 1)
		return 0;
	range_tnum(p, &value, &mask);
	sv = value + (uint64_t)(int64_t)p->off + (uint64_t)(int64_t)off;
	mu = ((mask + sv) ^ sv) | mask;
	if (!(((sv & ~mu) | mu) & (size - 1)))
		return 0;
	return verr(env, -EACCES, "misaligned %saccess off (0x%llx; 0x%llx)+%d+%d size %u\n", desc,
		    (unsigned long long)value, (unsigned long long)mask, p->off, off, size);
}

/* ---- stack ---- */

/* The frame a stack pointer points into: always live (see the spill rule in stack_access). */
static struct frame *stack_frame(struct venv *env, const struct reg *p)
{
	return env->cur->frames[p->frameno];
}

static void note_depth(struct venv *env, struct frame *f, int64_t lo)
{
	uint32_t d = (uint32_t)-lo;

	if (f->subprog < MAX_SUBPROGS && d > env->subprog_depth[f->subprog])
		env->subprog_depth[f->subprog] = d;
}

/* Mark [lo, hi) written with plain data: spills it touches are destroyed. */
static int stack_mark_misc(struct frame *f, int64_t lo, int64_t hi)
{
	int err = frame_grow(f, lo);

	if (err)
		return err;
	for (int64_t o = lo; o < hi; o++) {
		uint32_t i = (uint32_t)(-o - 1);

		if (f->stype[i] == STACK_SPILL) {
			uint32_t s = i & ~7u;

			for (int k = 0; k < 8; k++)
				f->stype[s + k] = STACK_MISC;
		}
		f->stype[i] = STACK_MISC;
	}
	return 0;
}

static int stack_access(struct venv *env, uint32_t regno, const struct reg *p, int32_t off,
			uint32_t size, bool write, int32_t value_regno, bool sign_ext)
{
	struct frame *f = stack_frame(env, p), *cf = cur_frame(env);
	int64_t lo, hi;

	access_range(p, off, size, &lo, &hi);
	/* Linux 6.1: a variable-offset read past the frame fails its range check with EINVAL */
	if (var_off(p) && !write && (lo < -(int64_t)BPF_STACK_SIZE || hi > 0))
		return verr(env, -EINVAL,
			    "invalid variable-offset read from stack R%u off=%lld size=%u\n", regno,
			    (long long)lo, size);
	if (lo < -(int64_t)BPF_STACK_SIZE || hi > 0)
		return verr(env, -EACCES, "invalid%s%s stack R%u off=%lld size=%u\n",
			    var_off(p) ? " variable-offset" : "", write ? " write to" : " read from",
			    regno, (long long)lo, size);
	note_depth(env, f, lo);
	if (write) {
		if (var_off(p))
			return stack_mark_misc(f, lo, hi);
		if (value_regno >= 0 && is_pointer(&cf->regs[value_regno]) && size != 8)
			return verr(env, -EACCES, "invalid size of register spill\n");
		if (size == 8 && !(lo % 8) &&
		    (value_regno >= 0 || value_regno == VALUE_IMM)) {
			struct reg v;

			if (value_regno >= 0)
				v = cf->regs[value_regno];
			else
				mark_const(&v, (uint64_t)(int64_t)env->insns[env->idx].imm);
			/* the callee's frame dies on return: its address must not outlive it */
			if (v.type == PTR_TO_STACK && v.frameno > p->frameno)
				return verr(env, -EINVAL, "cannot spill pointers to stack into stack "
							  "frame of the caller\n");
			if (frame_grow(f, lo))
				return -ENOMEM;
			if (value_regno >= 0 && regno != BPF_REG_10)
				env->aux[env->idx] |= AUX_SPILL_INDIRECT;
			for (int64_t o = lo; o < hi; o++)
				f->stype[-o - 1] = STACK_SPILL;
			*stack_spill(f, lo) = v;
			return 0;
		}
		return stack_mark_misc(f, lo, hi);
	}
	if (stack_has_dynptr(f, lo, hi))
		return verr(env, -EACCES, "invalid read from stack off %lld+%d size %u\n", (long long)lo,
			    0, size);
	/* Slots never written read as unknown scalars: every loader here is privileged, and Linux
	 * lets those read uninitialized stack (allow_uninit_stack), directly and through helpers. */
	if (value_regno < 0)
		return 0;
	if (!var_off(p) && stack_type(f, lo) == STACK_SPILL) {
		const struct reg *sp = stack_spill(f, lo);

		if (size == 8 && !(lo % 8)) {
			if (regno != BPF_REG_10)
				env->aux[env->idx] |= AUX_FILL_INDIRECT;
			cf->regs[value_regno] = *sp;
			return 0;
		}
		if (is_pointer(sp))
			return verr(env, -EACCES, "invalid size of register fill\n");
	}
	set_loaded(&cf->regs[value_regno], size, sign_ext);
	return 0;
}

/* ---- map values and ringbuf records: Linux's check_mem_region_access ---- */

#define MAX_VAR_OFF (1ll << 29) /* BPF_MAX_VAR_OFF */

static int region_oob(struct venv *env, const struct reg *p, int64_t off, uint64_t size,
		      uint64_t limit)
{
	if (off >= 0 && size > 0 && (uint64_t)off + size <= limit)
		return 0;
	if (p->type == PTR_TO_MAP_VALUE)
		return verr(env, -EACCES, "invalid access to map value, value_size=%u off=%lld size=%llu\n",
			    (unsigned int)limit, (long long)off, (unsigned long long)size);
	if (p->type == PTR_TO_MAP_KEY)
		return verr(env, -EACCES, "invalid access to map key, key_size=%u off=%lld size=%llu\n",
			    (unsigned int)limit, (long long)off, (unsigned long long)size);
	return verr(env, -EACCES, "invalid access to memory, mem_size=%u off=%lld size=%llu\n",
		    (unsigned int)limit, (long long)off, (unsigned long long)size);
}

/*
 * size bytes at off (the insn's offset plus the pointer's fixed one) and the pointer's
 * variable part inside [0, limit): both ends of the variable part are checked.
 */
static int region_access(struct venv *env, uint32_t regno, const struct reg *p, int64_t off,
			 uint64_t size, uint64_t limit)
{
	if (p->smin < 0 && (p->smin == INT64_MIN || off + p->smin != (int32_t)(off + p->smin) ||
			    p->smin + off < 0))
		return verr(env, -EACCES, "R%u min value is negative, either use unsigned index "
					  "or do a if (index >=0) check.\n", regno);
	if (region_oob(env, p, p->smin + off, size, limit))
		return verr(env, -EACCES, "R%u min value is outside of the allowed memory range\n", regno);
	if (p->umax >= (uint64_t)MAX_VAR_OFF)
		return verr(env, -EACCES, "R%u unbounded memory access, make sure to bounds check any "
					  "such access\n", regno);
	if (region_oob(env, p, (int64_t)p->umax + off, size, limit))
		return verr(env, -EACCES, "R%u max value is outside of the allowed memory range\n", regno);
	return 0;
}

static int map_value_range(struct venv *env, uint32_t regno, const struct reg *p, int64_t off,
			   uint64_t size, bool write, bool helper)
{
	const struct bpf_map *m = p->map;

	if (write && (m->map_flags & BPF_F_RDONLY_PROG))
		return verr(env, -EACCES, "write into map forbidden, value_size=%u off=%lld size=%llu\n",
			    m->value_size, (long long)off, (unsigned long long)size);
	if (!write && (m->map_flags & BPF_F_WRONLY_PROG))
		return verr(env, -EACCES, "read from map forbidden, value_size=%u off=%lld size=%llu\n",
			    m->value_size, (long long)off, (unsigned long long)size);
	int err = region_access(env, regno, p, off, size, m->value_size);

	if (err)
		return err;
	/* Linux's check_map_access: no load, store or helper touches a bpf_spin_lock */
	if (m->spin_lock_off >= 0 && p->smin + off < m->spin_lock_off + (int64_t)sizeof(struct bpf_spin_lock) &&
	    m->spin_lock_off < (int64_t)p->umax + off + (int64_t)size)
		return verr(env, -EACCES, "bpf_spin_lock cannot be accessed directly by load/store\n");
	if (m->timer_off >= 0 && p->smin + off < m->timer_off + (int64_t)sizeof(struct bpf_timer) &&
	    m->timer_off < (int64_t)p->umax + off + (int64_t)size)
		return verr(env, -EACCES, "bpf_timer cannot be accessed directly by load/store\n");
	return kptr_check_overlap(env, p, off, size, helper);
}

/* ---- ctx ---- */

#define SKB_OFF(f) ((int64_t)offsetof(struct __sk_buff, f))
#define SKB_END(f) ((int64_t)offsetof(struct __sk_buff, f) + (int64_t)sizeof(((struct __sk_buff *)0)->f))
#define SKB_IN(o, f) ((o) >= SKB_OFF(f) && (o) < SKB_END(f))

/*
 * A socket filter's __sk_buff, as Linux's sk_filter_is_valid_access and
 * bpf_skb_is_valid_access: fields a socket filter may not see, cb[] the only writable one,
 * pointer-sized fields whole, the rest read narrowly.  sk is a socket pointer Linux types;
 * this verifier has no socket type, so the value read is an unknown scalar.
 */
static bool skb_access_ok(int64_t o, uint32_t size, bool write)
{
	bool cb = o >= SKB_OFF(cb[0]) && o < SKB_END(cb[4]);

	if (SKB_IN(o, tc_classid) || SKB_IN(o, data) || SKB_IN(o, data_meta) ||
	    SKB_IN(o, data_end) || (o >= SKB_OFF(family) && o < SKB_END(local_port)) ||
	    SKB_IN(o, tstamp) || SKB_IN(o, wire_len) || SKB_IN(o, hwtstamp))
		return false;
	if (write && !cb)
		return false;
	if (o < 0 || o >= (int64_t)sizeof(struct __sk_buff) || o % size)
		return false;
	if (cb)
		return o + size <= SKB_END(cb[4]);
	if (SKB_IN(o, sk)) /* whole; Linux types it a socket, here it reads as a scalar */
		return !write && o == SKB_OFF(sk) && size == 8;
	if (SKB_IN(o, flow_keys) || o == SKB_OFF(tstamp_type) ||
	    (o >= SKB_END(tstamp_type) && o < SKB_OFF(hwtstamp)))
		return false;
	return write ? size == 4 : size <= 4 && !(size & (size - 1));
}

static int ctx_access(struct venv *env, uint32_t regno, const struct reg *p, int32_t off,
		      uint32_t size, bool write)
{
	int64_t o = (int64_t)p->off + off;
	const int64_t regs_end = offsetof(struct bpf_perf_event_data, sample_period);
	bool ok = false;

	/* Linux's check_ptr_off_reg: only ctx itself is dereferenced, the offset in the insn */
	if (p->off < 0)
		return verr(env, -EACCES, "negative offset ctx ptr R%u off=%d disallowed\n", regno,
			    p->off);
	if (p->off)
		return verr(env, -EACCES, "dereference of modified ctx ptr R%u off=%d disallowed\n",
			    regno, p->off);
	if (var_off(p)) {
		uint64_t value, mask;

		range_tnum(p, &value, &mask);
		return verr(env, -EACCES, "variable ctx access var_off=(0x%llx; 0x%llx) disallowed\n",
			    (unsigned long long)value, (unsigned long long)mask);
	}
	if (env->prog->type == BPF_PROG_TYPE_SOCKET_FILTER && skb_access_ok(o, size, write))
		ok = true;
	if (env->prog->type == BPF_PROG_TYPE_PERF_EVENT && !write && o >= 0 &&
	    o + size <= (int64_t)sizeof(struct bpf_perf_event_data) && o % size == 0) {
		if (o < regs_end)
			ok = size == 8;
		else
			ok = true; /* sample_period, addr: narrow loads allowed */
	}
	/* BPF_PROG_TYPE_TRACEPOINT: the raw record past its first word, read-only (Linux's
	 * tp_prog_is_valid_access, PERF_MAX_TRACE_SIZE 2048) */
	if (env->prog->type == BPF_PROG_TYPE_TRACEPOINT && !write && o >= 8 && o + size <= 2048 &&
	    o % size == 0)
		ok = true;
	/* BPF_PROG_TYPE_KPROBE: struct pt_regs (336 bytes on arm64), read-only, aligned loads
	 * (kprobe_prog_is_valid_access) */
	if (env->prog->type == BPF_PROG_TYPE_KPROBE && !write && o >= 0 && o + size <= 336 &&
	    o % size == 0)
		ok = true;
	/* BPF_PROG_TYPE_SYSCALL: ctx is the caller's buffer; PROG_TEST_RUN checks its size */
	if (env->prog->type == BPF_PROG_TYPE_SYSCALL && o >= 0 && o + size < 65535 && o % size == 0)
		ok = true;
	if (!ok)
		return verr(env, -EACCES, "invalid bpf_context access off=%lld size=%u\n",
			    (long long)o, size);
	if ((uint32_t)(o + size) > env->max_ctx_off)
		env->max_ctx_off = (uint32_t)(o + size);
	return 0;
}

/* The name of a kernel type (Linux's "ptr_" + name in the messages). */
static const char *btf_type_str(uint32_t id)
{
	const struct bpf_btf *btf = bpf_btf_vmlinux();
	const struct btf_type *t = btf ? bpf_btf_type(btf, id) : NULL;
	const char *n = t ? bpf_btf_str(btf, t->name_off) : NULL;

	return n ? n : "";
}

/* The kernel's struct task's BTF id (Linux's btf_tracing_ids[TASK]), 0 without kernel BTF. */
static uint32_t task_btf_id(void)
{
	const struct bpf_btf *kbtf = bpf_btf_vmlinux();

	return kbtf ? bpf_btf_find_by_name_kind(kbtf, "task", BTF_KIND_STRUCT) : 0;
}

/* A helper's task argument (ARG_PTR_TO_BTF_ID with the task's id): Linux's check_reg_type
 * and check_func_arg_reg_off messages, EACCES. */
static int task_arg(struct venv *env, uint32_t regno, const struct reg *r)
{
	uint32_t want = task_btf_id();

	if (r->type != PTR_TO_BTF_ID || !want)
		return verr(env, -EACCES, "R%u type=%s expected=ptr_\n", regno,
			    reg_type_name(r->type));
	/* btf_struct_ids_match: an offset would have to land on a nested task, which has none */
	if (r->btf_id != want || r->off)
		return verr(env, -EACCES, "R%u is of type %s but %s is expected\n", regno,
			    btf_type_str(r->btf_id), btf_type_str(want));
	if (var_off(r) || r->umin)
		return verr(env, -EACCES, "variable ptr_ access var_off=(%#llx; %#llx) disallowed\n",
			    (unsigned long long)r->umin, (unsigned long long)(r->umax - r->umin));
	return 0;
}

/*
 * A load through a kernel object's pointer (Linux's check_ptr_to_btf_access): a constant
 * offset, read only, what the struct's BTF has there; the load becomes a probe read.
 */
static int btf_access(struct venv *env, uint32_t regno, const struct reg *p, int32_t off,
		      uint32_t size, bool write, int32_t value_regno, bool sign_ext)
{
	const char *tname = btf_type_str(p->btf_id);
	int64_t o = (int64_t)p->off + off;
	uint32_t next = 0;
	int ret;

	if (o < 0)
		return verr(env, -EACCES, "R%u is ptr_%s invalid negative access: off=%lld\n", regno,
			    tname, (long long)o);
	if (var_off(p) || p->umin)
		return verr(env, -EACCES, "R%u is ptr_%s invalid variable offset: off=%lld, "
					  "var_off=(%#llx; %#llx)\n", regno, tname, (long long)o,
			    (unsigned long long)p->umin,
			    (unsigned long long)(p->umax - p->umin));
	if (p->type == PTR_TO_PERCPU_BTF_ID) /* only bpf_per_cpu_ptr / bpf_this_cpu_ptr take it */
		return verr(env, -EACCES, "R%u is ptr_%s access percpu memory: off=%lld\n", regno,
			    tname, (long long)o);
	if (write)
		return verr(env, -EACCES, "only read is supported\n");
	ret = bpf_btf_struct_access(bpf_btf_vmlinux(), env->log, p->btf_id, (uint32_t)o, size,
				    &next);
	if (ret < 0)
		return ret;
	env->aux[env->idx] |= AUX_PROBE_MEM;
	if (value_regno < 0)
		return 0;
	if (ret == BTF_WALK_SCALAR) {
		set_loaded(&cur_frame(env)->regs[value_regno], size, sign_ext);
		return 0;
	}
	struct reg *d = &cur_frame(env)->regs[value_regno];
	uint8_t type = p->type; /* a walk from an untrusted pointer stays untrusted */

	memset(d, 0, sizeof(*d));
	d->type = type;
	d->btf_id = next;
	return 0;
}

int check_mem_access(struct venv *env, uint32_t regno, int32_t off, uint32_t size, bool write,
		     int32_t value_regno, bool sign_ext)
{
	struct frame *f = cur_frame(env);
	struct reg *p = &f->regs[regno];
	int err;

	err = check_align(env, p, off, size, false);
	if (err)
		return err;
	switch (p->type) {
	case PTR_TO_STACK:
		return stack_access(env, regno, p, off, size, write, value_regno, sign_ext);
	case PTR_TO_MAP_VALUE: {
		const struct bpf_kptr_field *k;

		err = map_value_range(env, regno, p, (int64_t)p->off + off, size, write, false);
		k = err || var_off(p) ? NULL :
			bpf_map_kptr_at(p->map, (int64_t)p->off + off + (int64_t)p->umin);
		if (k) /* the access is exactly the kptr (kptr_check_overlap) */
			return kptr_field_access(env, k, value_regno);
		break;
	}
	case PTR_TO_CTX:
		err = ctx_access(env, regno, p, off, size, write);
		break;
	case PTR_TO_MEM:
		err = region_access(env, regno, p, (int64_t)p->off + off, size, p->mem_size);
		break;
	case PTR_TO_MAP_KEY: /* a for_each_map_elem callback's key: read-only */
		if (write)
			return verr(env, -EACCES, "write to change key R%u not allowed\n", regno);
		err = region_access(env, regno, p, (int64_t)p->off + off, size, p->map->key_size);
		break;
	case PTR_TO_RDONLY_MEM: /* a typed ksym's memory, or a per-CPU instance of it */
		if (write)
			return verr(env, -EACCES, "R%u cannot write into %s\n", regno,
				    reg_type_name(p->type));
		err = region_access(env, regno, p, (int64_t)p->off + off, size, p->mem_size);
		break;
	case PTR_TO_BTF_ID:
	case PTR_TO_PERCPU_BTF_ID:
	case PTR_TO_BTF_ID_UNTRUSTED:
		return btf_access(env, regno, p, off, size, write, value_regno, sign_ext);
	/* CONST_PTR_TO_MAP: Linux reads struct bpf_map's fields through vmlinux BTF, and refuses
	 * most (EACCES) of what is not a field; without BTF, every read here is refused so */
	case NOT_INIT:
		return verr(env, -EACCES, "R%u !read_ok\n", regno);
	default:
		return verr(env, -EACCES, "R%u invalid mem access '%s'\n", regno, reg_name(p));
	}
	if (err)
		return err;
	if (!write && value_regno >= 0)
		set_loaded(&f->regs[value_regno], size, sign_ext);
	return 0;
}

int check_atomic(struct venv *env, const struct bpf_insn *in)
{
	struct frame *f = cur_frame(env);
	uint32_t size = insn_size(in->code);
	struct reg *p = &f->regs[in->dst_reg];
	int64_t lo, hi;
	int err;

	/* Linux reads the source register first, then the destination */
	if (f->regs[in->src_reg].type == NOT_INIT || f->regs[in->dst_reg].type == NOT_INIT)
		return verr(env, -EACCES, "R%u !read_ok\n",
			    f->regs[in->src_reg].type == NOT_INIT ? in->src_reg : in->dst_reg);
	if (in->imm == BPF_CMPXCHG && f->regs[BPF_REG_0].type == NOT_INIT)
		return verr(env, -EACCES, "R0 !read_ok\n");
	/* A pointer in src (or in R0 for cmpxchg) is not refused: every loader here is privileged,
	 * and Linux lets those (allow_ptr_leaks) store pointers; the slot then holds a scalar. */
	if (p->type == PTR_TO_CTX)
		return verr(env, -EACCES, "BPF_ATOMIC stores into R%u %s is not allowed\n",
			    in->dst_reg, reg_type_name(p->type));
	if (p->type != PTR_TO_STACK && p->type != PTR_TO_MAP_VALUE && p->type != PTR_TO_MEM)
		return check_mem_access(env, in->dst_reg, in->off, size, true, VALUE_UNKNOWN, false)
			       ?: verr(env, -EACCES, "R%u invalid mem access '%s'\n", in->dst_reg,
				       reg_type_name(p->type)); /* as Linux: the access decides */
	err = check_align(env, p, in->off, size, true);
	if (err)
		return err;
	access_range(p, in->off, size, &lo, &hi);
	if (var_off(p))
		return verr(env, -EACCES, "misaligned access off %lld size %u\n", (long long)lo, size);
	if (in->src_reg == BPF_REG_10 && (in->imm & BPF_FETCH))
		return verr(env, -EACCES, "frame pointer is read only\n");
	err = check_mem_access(env, in->dst_reg, in->off, size, false, VALUE_NONE, false);
	if (!err)
		err = check_mem_access(env, in->dst_reg, in->off, size, true, VALUE_UNKNOWN, false);
	if (err)
		return err;
	if (in->imm & BPF_FETCH) {
		struct reg *r = &f->regs[in->imm == BPF_CMPXCHG ? BPF_REG_0 : in->src_reg];

		mark_unknown(r);
		if (size == 4) {
			r->umax = UINT32_MAX;
			reg_sync(r);
		}
	}
	return 0;
}

/* ---- helper calls ---- */

/* Memory argument regno: size bytes (at most) readable, or writable (and then initialized). */
int helper_mem(struct venv *env, uint32_t regno, uint64_t size, bool write)
{
	struct frame *f = cur_frame(env);
	struct reg *p = &f->regs[regno];
	int64_t lo, hi;

	if (size == 0)
		return 0;
	switch (p->type) {
	case PTR_TO_STACK: {
		struct frame *sf = stack_frame(env, p);

		access_range(p, 0, (uint32_t)size, &lo, &hi);
		if (lo < -(int64_t)BPF_STACK_SIZE || hi > 0)
			return verr(env, -EACCES, "invalid indirect access to stack R%u off=%lld size=%llu\n",
				    regno, (long long)lo, (unsigned long long)size);
		note_depth(env, sf, lo);
		if (write)
			return stack_mark_misc(sf, lo, hi);
		for (int64_t o = lo; o < hi; o++)
			if (stack_has_dynptr(sf, o, o + 1))
				return verr(env, -EACCES, "invalid indirect read from stack R%u off %lld+%lld "
							  "size %llu\n", regno, (long long)lo,
					    (long long)(o - lo), (unsigned long long)size);
		return 0; /* uninitialized bytes too, as in stack_access */
	}
	case PTR_TO_MAP_VALUE:
		return map_value_range(env, regno, p, p->off, size, write, true);
	case PTR_TO_MEM:
	case PTR_TO_RDONLY_MEM: /* read-only arguments only (ARG_MEM) */
		return region_access(env, regno, p, p->off, size, p->mem_size);
	case PTR_TO_MAP_KEY:
		if (write)
			return verr(env, -EACCES, "write to change key R%u not allowed\n", regno);
		return region_access(env, regno, p, p->off, size, p->map->key_size);
	case NOT_INIT:
		return verr(env, -EACCES, "R%u !read_ok\n", regno);
	default:
		return verr(env, -EACCES, "R%u type=%s expected=fp, map_value\n", regno,
			    reg_type_name(p->type));
	}
}

static int helper_size(struct venv *env, uint32_t regno, bool zero_ok, uint64_t *size)
{
	const struct reg *r = &cur_frame(env)->regs[regno];

	if (r->type != SCALAR)
		return verr(env, -EACCES, "R%u type=%s expected=scalar\n", regno,
			    reg_type_name(r->type));
	if (r->smin < 0)
		return verr(env, -EACCES, "R%u min value is negative, either use unsigned or 'var &= const'\n",
			    regno);
	if (r->umax >= (1u << 29))
		return verr(env, -EACCES, "R%u unbounded memory access, use 'var &= const' or "
					  "'if (var < const)'\n", regno);
	if (r->umin == 0 && !zero_ok)
		return verr(env, -EACCES, "R%u invalid zero-sized read\n", regno);
	mark_reg_precise(env, regno);
	*size = r->umax;
	return 0;
}

/*
 * ARG_PTR_TO_CONST_STR: a constant offset into a frozen read-only array value, NUL-terminated
 * before the value's end (Linux's check_func_arg; the string is read at load time).
 */
static int const_str(struct venv *env, uint32_t regno, const struct reg *r, const char **out)
{
	const char *s;
	uint32_t off;

	if (r->type != PTR_TO_MAP_VALUE)
		return verr(env, -EACCES, "R%u type=%s expected=map_value\n", regno,
			    reg_type_name(r->type));
	if (!(r->map->map_flags & BPF_F_RDONLY_PROG) || !__atomic_load_n(&r->map->frozen, __ATOMIC_ACQUIRE) ||
	    r->map->type != BPF_MAP_TYPE_ARRAY)
		return verr(env, -EACCES, "R%u does not point to a readonly map'\n", regno);
	if (var_off(r))
		return verr(env, -EACCES, "R%u is not a constant address'\n", regno);
	off = (uint32_t)r->off;
	if (off >= r->map->value_size)
		return verr(env, -EACCES, "invalid access to map value, value_size=%u off=%u size=1\n",
			    r->map->value_size, off);
	s = (const char *)bpf_array_base(r->map) + off;
	if (!memchr(s, 0, r->map->value_size - off))
		return verr(env, -EINVAL, "string is not zero-terminated\n");
	*out = s;
	return 0;
}

#define MAX_CALLBACK_NEST 4 /* ~1.3 KiB of kernel stack each */

static bool map_has_for_each(const struct bpf_map *m)
{
	switch (m->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return true;
	default:
		return false;
	}
}

/*
 * The callback of the helper being checked gets a frame of its own and is walked next, once,
 * as Linux 6.1 does (set_loop_callback_state, set_map_elem_callback_state); *out is attached
 * by the caller once the helper's own registers are settled.
 */
static int callback_frame(struct venv *env, const struct bpf_helper *h, uint32_t subprog,
			  struct bpf_map *map, struct frame **out)
{
	struct vstate *st = env->cur;
	struct frame *caller = cur_frame(env), *callee;
	struct reg *r;

	if (st->curframe + 1 >= BPF_MAX_FRAMES)
		return verr(env, -E2BIG, "the call stack of %u frames is too deep\n",
			    st->curframe + 2);
	/* each nested callback runs on the kernel stack (interp.c): bounded here, not in Linux */
	for (uint32_t fi = 0, n = 0; fi <= st->curframe; fi++)
		if (st->frames[fi]->callback && ++n >= MAX_CALLBACK_NEST)
			return verr(env, -E2BIG, "callbacks nested %u deep: more than the kernel stack "
						 "here allows\n", n + 1);
	if (h->cb == CB_MAP_ELEM && !map_has_for_each(map))
		return verr(env, -BPF_ENOTSUPP, "callback function not allowed for map\n");
	callee = frame_new();
	if (!callee)
		return -ENOMEM;
	r = callee->regs;
	switch (h->cb) {
	case CB_LOOP:
		mark_unknown(&r[BPF_REG_1]);
		r[BPF_REG_2] = caller->regs[BPF_REG_3];
		break;
	case CB_MAP_ELEM:
	case CB_TIMER: /* set_timer_callback_state: the timer's map, key and value */
		r[BPF_REG_1].type = CONST_PTR_TO_MAP;
		r[BPF_REG_1].map = map;
		r[BPF_REG_2].type = PTR_TO_MAP_KEY;
		r[BPF_REG_2].map = map;
		r[BPF_REG_3].type = PTR_TO_MAP_VALUE;
		r[BPF_REG_3].map = map;
		if (h->cb == CB_MAP_ELEM)
			r[BPF_REG_4] = caller->regs[BPF_REG_3];
		break;
	case CB_FIND_VMA: { /* set_find_vma_callback_state: the task, its vma, ctx */
		const struct bpf_btf *kbtf = bpf_btf_vmlinux();
		uint32_t vma = kbtf ? bpf_btf_find_by_name_kind(kbtf, "vm_area", BTF_KIND_STRUCT) : 0;

		if (!vma) {
			frame_free(callee);
			return verr(env, -EINVAL, "kernel BTF has no struct vm_area\n");
		}
		r[BPF_REG_1] = caller->regs[BPF_REG_1];
		r[BPF_REG_2].type = PTR_TO_BTF_ID;
		r[BPF_REG_2].btf_id = vma;
		r[BPF_REG_3] = caller->regs[BPF_REG_4];
		break;
	}
	case CB_USER_RINGBUF: /* set_user_ringbuf_callback_state */
		r[BPF_REG_1].type = PTR_TO_DYNPTR;
		r[BPF_REG_2] = caller->regs[BPF_REG_3];
		break;
	default:
		break;
	}
	r[BPF_REG_10].type = PTR_TO_STACK;
	r[BPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	callee->callsite = env->idx;
	callee->subprog = subprog;
	callee->callback = h->cb;
	*out = callee;
	return 0;
}


/* Linux's process_timer_func: the map value's one struct bpf_timer, at a constant offset
 * (its EINVALs are check_func_arg's EACCES). */
static int timer_arg(struct venv *env, const struct reg *r)
{
	const struct bpf_map *m = r->map;
	int64_t off = r->off + (int64_t)r->umin;

	if (m->timer_off == -E2BIG)
		return verr(env, -EACCES, "map '%s' has more than one 'struct bpf_timer'\n", m->name);
	if (m->timer_off == -ENOENT)
		return verr(env, -EACCES, "map '%s' doesn't have 'struct bpf_timer'\n", m->name);
	if (m->timer_off < 0)
		return verr(env, -EACCES, "map '%s' is not a struct type or bpf_timer is mangled\n",
			    m->name);
	if (off != m->timer_off)
		return verr(env, -EACCES, "off %lld doesn't point to 'struct bpf_timer' that is at %d\n",
			    (long long)off, m->timer_off);
	return 0;
}

/* Linux's process_spin_lock: the map value's one struct bpf_spin_lock, at a constant offset;
 * one lock held at a time, released by the value (reg id) that took it.  Its EINVAL is
 * check_func_arg's EACCES. */
static int spin_lock_arg(struct venv *env, uint32_t regno, const struct reg *r, bool lock)
{
	const struct bpf_map *m = r->map;
	struct vstate *st = env->cur;
	int64_t off = r->off + (int64_t)r->umin;

	if (m->spin_lock_off < 0) {
		if (m->spin_lock_off == -E2BIG)
			return verr(env, -EACCES, "map '%s' has more than one 'struct bpf_spin_lock'\n",
				    m->name);
		if (m->spin_lock_off == -ENOENT)
			return verr(env, -EACCES, "map '%s' doesn't have 'struct bpf_spin_lock'\n", m->name);
		return verr(env, -EACCES, "map '%s' is not a struct type or bpf_spin_lock is mangled\n",
			    m->name);
	}
	if (off != m->spin_lock_off)
		return verr(env, -EACCES, "off %lld doesn't point to 'struct bpf_spin_lock'\n",
			    (long long)off);
	(void)regno;
	if (lock) {
		if (st->active_lock)
			return verr(env, -EACCES, "Locking two bpf_spin_locks are not allowed\n");
		st->active_lock = r->id; /* 0 for a value not from a lookup: as Linux, not held */
		return 0;
	}
	if (!st->active_lock)
		return verr(env, -EACCES, "bpf_spin_unlock without taking a lock\n");
	if (st->active_lock != r->id)
		return verr(env, -EACCES, "bpf_spin_unlock of different lock\n");
	st->active_lock = 0;
	return 0;
}

/*
 * r0 of bpf_per_cpu_ptr / bpf_this_cpu_ptr (Linux's RET_PTR_TO_MEM_OR_BTF_ID | MEM_RDONLY):
 * a ptr_ to the per-CPU variable's struct, or read-only memory of its type's size; or_null:
 * either may be NULL.
 */
static int percpu_ret(struct venv *env, uint32_t btf_id, bool or_null)
{
	const struct bpf_btf *kbtf = bpf_btf_vmlinux();
	struct reg *r0 = &cur_frame(env)->regs[BPF_REG_0];
	const struct btf_type *t = kbtf ? bpf_btf_skip_modifiers(kbtf, btf_id, &btf_id) : NULL;
	uint32_t size = 0, sid = btf_id;

	memset(r0, 0, sizeof(*r0));
	if (t && (bpf_btf_kind(t) == BTF_KIND_STRUCT || bpf_btf_kind(t) == BTF_KIND_UNION)) {
		r0->type = or_null ? PTR_TO_BTF_ID_OR_NULL : PTR_TO_BTF_ID;
		r0->btf_id = btf_id;
	} else {
		if (!t || !bpf_btf_type_id_size(kbtf, &sid, &size)) {
			const char *n = t ? bpf_btf_str(kbtf, t->name_off) : NULL;

			return verr(env, -EINVAL, "unable to resolve the size of type '%s': %d\n",
				    n ? n : "", -EINVAL);
		}
		r0->type = or_null ? PTR_TO_RDONLY_MEM_OR_NULL : PTR_TO_RDONLY_MEM;
		r0->mem_size = size;
	}
	if (or_null)
		r0->id = ++env->next_id;
	return 0;
}

int check_helper_call(struct venv *env, const struct bpf_insn *in)
{
	struct frame *cb_frame = NULL;
	uint32_t cb_subprog = 0;
	const char *str = "";
	const struct bpf_helper *h = bpf_helper_get(in->imm);
	struct frame *f = cur_frame(env);
	struct bpf_map *map = NULL, *timer_map = NULL;
	struct dynptr_meta dm = { 0 };
	uint64_t alloc_size = 0;
	uint32_t release = 0, ret_btf_id = 0;
	int err;

	if (!h)
		return verr(env, -EINVAL, "invalid func unknown#%d\n", in->imm);
	if (!bpf_helper_allowed(h, env->prog->type))
		return verr(env, -EINVAL, "unknown func %s#%d\n", h->name, in->imm);
	if (h->gpl_only && !env->prog->gpl)
		return verr(env, -EINVAL, "cannot call GPL-restricted function from non-GPL compatible program\n");
	if (h->might_sleep && !(env->prog->prog_flags & BPF_F_SLEEPABLE))
		return verr(env, -EINVAL, "helper call might sleep in a non-sleepable prog\n");
	for (uint32_t i = 0; i < 5 && h->args[i]; i++) {
		uint32_t regno = BPF_REG_1 + i;
		struct reg *r = &f->regs[regno];
		uint64_t size = 0;

		if (r->type == NOT_INIT)
			return verr(env, -EACCES, "R%u !read_ok\n", regno);
		switch (h->args[i]) {
		case ARG_CONST_MAP:
			if (r->type != CONST_PTR_TO_MAP)
				return verr(env, -EACCES, "R%u type=%s expected=map_ptr\n", regno,
					    reg_type_name(r->type));
			/* bpf_timer_init: the timer's own map (no inner-map uids here: 0) */
			if (timer_map && r->map != timer_map)
				return verr(env, -EINVAL, "timer pointer in R1 map_uid=0 doesn't match map "
							  "pointer in R2 map_uid=0\n");
			map = r->map; /* its type is checked after the arguments, as Linux does */
			break;
		case ARG_MAP_VALUE_OR_NULL:
			if (reg_is_const(r) && !r->umin)
				break;
			/* fall through */
		case ARG_MAP_KEY:
		case ARG_MAP_VALUE:
		case ARG_MAP_VALUE_UNINIT:
			if (!map)
				return verr(env, -EACCES, "invalid map_ptr to access map->%s\n",
					    h->args[i] == ARG_MAP_KEY ? "key" : "value");
			if (r->type != PTR_TO_STACK && r->type != PTR_TO_MAP_VALUE &&
			    r->type != PTR_TO_MAP_KEY)
				return verr(env, -EACCES,
					    "R%u type=%s expected=fp, pkt, pkt_meta, map_key, map_value\n",
					    regno, reg_type_name(r->type));
			size = h->args[i] == ARG_MAP_KEY ? map->key_size : map->value_size;
			if (!size) /* a keyless map (queue, stack, ringbuf) given to a keyed helper */
				return verr(env, -EACCES, "invalid zero-sized read\n");
			err = helper_mem(env, regno, size, h->args[i] == ARG_MAP_VALUE_UNINIT);
			if (err)
				return err;
			break;
		case ARG_MEM:
		case ARG_MEM_UNINIT:
			/* the pointer's type at its own argument, its range at the size's (Linux) */
			/* Linux's ARG_PTR_TO_MEM | MEM_RDONLY takes rdonly_mem, a writable one not */
			if (r->type != PTR_TO_STACK && r->type != PTR_TO_MAP_VALUE &&
			    r->type != PTR_TO_MAP_KEY && r->type != PTR_TO_MEM &&
			    (r->type != PTR_TO_RDONLY_MEM || h->args[i] == ARG_MEM_UNINIT))
				return verr(env, -EACCES, "R%u type=%s expected=fp, pkt, pkt_meta, "
							  "map_key, map_value, mem, alloc_mem, buf\n",
					    regno, reg_type_name(r->type));
			err = helper_size(env, regno + 1, h->args[i + 1] == ARG_SIZE, &size);
			if (!err)
				err = helper_mem(env, regno, size, h->args[i] == ARG_MEM_UNINIT);
			if (err)
				return err;
			i++; /* the size argument is done */
			break;
		case ARG_FUNC:
			if (r->type != PTR_TO_FUNC)
				return verr(env, -EACCES, "R%u type=%s expected=func\n", regno,
					    reg_type_name(r->type));
			cb_subprog = r->mem_size;
			break;
		case ARG_STACK_OR_NULL:
			if (r->type != PTR_TO_STACK && !(reg_is_const(r) && !r->umin))
				return verr(env, -EACCES, "R%u type=%s expected=fp\n", regno,
					    reg_type_name(r->type));
			break;
		case ARG_CONST_STR_RO:
			err = const_str(env, regno, r, &str);
			if (err)
				return err;
			break;
		case ARG_MEM_RO_OR_NULL:
			err = helper_size(env, regno + 1, true, &size);
			if (!err && !(reg_is_const(r) && !r->umin))
				err = helper_mem(env, regno, size, false);
			if (err)
				return err;
			i++;
			break;
		case ARG_PTR_TO_LONG:
			err = helper_mem(env, regno, 8, true);
			if (err)
				return err;
			break;
		case ARG_MAP_VALUE_BTF: {
			/* Linux's process_spin_lock / process_timer_func / process_kptr_func
			 * (verify_kptr.c) */
			const char *what = in->imm == BPF_FUNC_spin_lock ||
							   in->imm == BPF_FUNC_spin_unlock ?
					   "bpf_spin_lock" : "bpf_timer";

			if (r->type != PTR_TO_MAP_VALUE)
				return verr(env, -EACCES, "R%u type=%s expected=map_value\n", regno,
					    reg_type_name(r->type));
			if (in->imm == BPF_FUNC_kptr_xchg)
				return kptr_xchg_arg(env, regno, r);
			/* check_func_arg turns process_spin_lock's (timer's, kptr's) EINVAL into EACCES */
			if (var_off(r))
				return verr(env, -EACCES, "R%u doesn't have constant offset. %s has to be "
							  "at the constant offset\n", regno, what);
			if (!r->map->btf)
				return verr(env, -EACCES, "map '%s' has to have BTF in order to use %s\n",
					    r->map->name, what);
			if (in->imm != BPF_FUNC_spin_lock && in->imm != BPF_FUNC_spin_unlock) {
				err = timer_arg(env, r);
				if (err)
					return err;
				timer_map = r->map;
				break;
			}
			err = spin_lock_arg(env, regno, r, in->imm == BPF_FUNC_spin_lock);
			if (err)
				return err;
			break;
		}
		case ARG_DYNPTR:
		case ARG_DYNPTR_UNINIT_LOCAL:
		case ARG_DYNPTR_UNINIT_RINGBUF:
		case ARG_DYNPTR_RINGBUF_RELEASE:
			err = dynptr_check_arg(env, regno, i, h->args[i], &dm);
			if (err)
				return err;
			break;
		case ARG_TASK:
			err = task_arg(env, regno, r);
			if (err)
				return err;
			break;
		case ARG_PERCPU_BTF:
			/* Linux's check_reg_type, check_func_arg_reg_off, then the btf_id */
			if (r->type != PTR_TO_PERCPU_BTF_ID)
				return verr(env, -EACCES, "R%u type=%s expected=percpu_ptr_\n", regno,
					    reg_type_name(r->type));
			if (r->off)
				return verr(env, -EACCES, "dereference of modified percpu_ptr_ ptr R%u "
							  "off=%d disallowed\n", regno, r->off);
			if (var_off(r) || r->umin)
				return verr(env, -EACCES, "variable percpu_ptr_ access var_off=(%#llx; "
							  "%#llx) disallowed\n",
					    (unsigned long long)r->umin,
					    (unsigned long long)(r->umax - r->umin));
			if (!r->btf_id)
				return verr(env, -EACCES, "Helper has invalid btf_id in R%u\n", regno);
			ret_btf_id = r->btf_id;
			break;
		case ARG_BTF_ONLY:
			/* only a BTF-typed pointer fits: no register can hold one without BTF */
			return verr(env, -EACCES, "R%u type=%s expected=ptr_\n", regno,
				    reg_type_name(r->type));
		case ARG_CTX:
			if (r->type != PTR_TO_CTX || r->off || var_off(r))
				return verr(env, -EACCES, "R%u type=%s expected=ctx\n", regno,
					    reg_type_name(r->type));
			break;
		case ARG_ALLOC_SIZE:
			if (!reg_is_const(r))
				return verr(env, -EACCES, "R%u is not a known constant'\n", regno);
			mark_reg_precise(env, regno);
			alloc_size = r->umin;
			break;
		case ARG_RINGBUF_RELEASE:
			if (r->type != PTR_TO_MEM || r->plain) /* a ring buffer's record only */
				return verr(env, -EACCES, "R%u type=%s expected=alloc_mem\n", regno,
					    reg_name(r));
			if (var_off(r))
				return verr(env, -EACCES, "variable alloc_mem access var_off=(%lld; %lld) "
							  "disallowed\n", (long long)r->smin,
					    (long long)r->smax);
			if (r->off)
				return verr(env, -EACCES, "dereference of modified alloc_mem ptr R%u off=%d "
							  "disallowed\n", regno, r->off);
			release = r->ref_obj_id;
			break;
		default:
			break;
		}
	}
	/* Linux's order: the dynptr a constructor made, the one released, then per-helper checks */
	err = dynptr_commit(env, &dm);
	if (err)
		return err;
	if (in->imm == BPF_FUNC_dynptr_from_mem && f->regs[BPF_REG_1].type != PTR_TO_MAP_VALUE)
		return verr(env, -EACCES, "Unsupported reg type %s for bpf_dynptr_from_mem data\n",
			    reg_type_name(f->regs[BPF_REG_1].type));
	if (in->imm == BPF_FUNC_snprintf) {
		/* Linux's check_bpf_snprintf_call: the constant format against data_len / 8 args */
		const struct reg *len = &f->regs[BPF_REG_5];

		if (len->umin % 8)
			return -EINVAL;
		err = bpf_bprintf_check(str, UINT32_MAX, (uint32_t)(len->umin / 8));
		if (err)
			return verr(env, err, "Invalid format string\n");
	}
	if (in->imm == BPF_FUNC_get_func_ip && env->prog->type != BPF_PROG_TYPE_KPROBE &&
	    env->prog->type != BPF_PROG_TYPE_TRACING)
		return verr(env, -BPF_ENOTSUPP, "func %s#%d not supported for program type %u\n",
			    h->name, in->imm, env->prog->type);
	if (h->ret == RET_BTF_ID) {
		/* its ret_btf_id names a type of the kernel's BTF: our struct task for
		 * get_current_task_btf, the user-register frame (struct trapframe, Linux's
		 * struct pt_regs) for task_pt_regs; the others' types are not built here */
		const struct bpf_btf *kbtf = bpf_btf_vmlinux();

		if (kbtf && in->imm == BPF_FUNC_get_current_task_btf)
			ret_btf_id = task_btf_id();
		else if (kbtf && in->imm == BPF_FUNC_task_pt_regs)
			ret_btf_id = bpf_btf_find_by_name_kind(kbtf, "trapframe", BTF_KIND_STRUCT);
		if (!ret_btf_id)
			return verr(env, -EINVAL, "invalid return type 8 of func %s#%d\n", h->name,
				    in->imm);
	}
	if (h->cb) {
		err = callback_frame(env, h, cb_subprog, h->cb == CB_TIMER ? timer_map : map, &cb_frame);
		if (err)
			return err;
	}
	if (in->imm == BPF_FUNC_tail_call) {
		/* Linux's record_func_key: a program array only; a constant index in range is
		 * precise (the JIT's direct jumps depend on it) */
		const struct reg *r3 = &f->regs[BPF_REG_3];

		if (map->type != BPF_MAP_TYPE_PROG_ARRAY)
			return verr(env, -EINVAL, "kernel subsystem misconfigured verifier\n");
		if (reg_is_const(r3) && r3->umin < map->max_entries)
			mark_reg_precise(env, BPF_REG_3);
	}
	/* a tail call never returns to release what the program holds (check_reference_leak) */
	if (in->imm == BPF_FUNC_tail_call && env->cur->nrefs) {
		for (uint32_t i = 0; i < env->cur->nrefs; i++)
			verr(env, 0, "Unreleased reference id=%u alloc_insn=%u\n",
			     env->cur->refs[i].id, env->cur->refs[i].insn);
		return verr(env, -EINVAL, "tail_call would lead to reference leak\n");
	}
	/* Linux's check_map_func_compatibility, after the arguments and the callback's setup */
	if (map && !bpf_map_func_ok(map, in->imm)) {
		frame_free(cb_frame);
		return verr(env, -EINVAL, "cannot pass map_type %u into func %s#%d\n", map->type,
			    h->name, in->imm);
	}

	if (release && !release_ref(env->cur, release))
		return verr(env, -EINVAL, "release of unacquired reference\n"); /* not reached */
	for (int r = BPF_REG_1; r <= BPF_REG_5; r++)
		memset(&f->regs[r], 0, sizeof(struct reg));
	mark_unknown(&f->regs[BPF_REG_0]);
	if (h->ret == RET_VOID)
		memset(&f->regs[BPF_REG_0], 0, sizeof(struct reg)); /* NOT_INIT */
	if (h->ret == RET_RINGBUF_MEM_OR_NULL) {
		struct reg *r0 = &f->regs[BPF_REG_0];
		int64_t id = acquire_ref(env);

		if (id < 0)
			return (int)id;
		memset(r0, 0, sizeof(*r0));
		r0->type = PTR_TO_MEM_OR_NULL;
		r0->mem_size = (uint32_t)alloc_size;
		r0->id = r0->ref_obj_id = (uint32_t)id;
	}
	if (h->ret == RET_DYNPTR_MEM_OR_NULL) {
		/* a slice: dies with the dynptr's reference (none for a local dynptr) */
		struct reg *r0 = &f->regs[BPF_REG_0];

		memset(r0, 0, sizeof(*r0));
		r0->type = PTR_TO_MEM_OR_NULL;
		r0->mem_size = (uint32_t)alloc_size;
		r0->id = ++env->next_id;
		r0->ref_obj_id = dm.ref;
	}
	if (h->ret == RET_PERCPU_OBJ || h->ret == RET_PERCPU_OBJ_OR_NULL) {
		err = percpu_ret(env, ret_btf_id, h->ret == RET_PERCPU_OBJ_OR_NULL);
		if (err)
			return err;
	}
	if (h->ret == RET_BTF_ID) { /* never NULL (the current task, a task's frame) */
		struct reg *r0 = &f->regs[BPF_REG_0];

		memset(r0, 0, sizeof(*r0));
		r0->type = PTR_TO_BTF_ID;
		r0->btf_id = ret_btf_id;
	}
	if (h->ret == RET_MAP_VALUE_OR_NULL) {
		struct reg *r0 = &f->regs[BPF_REG_0];

		memset(r0, 0, sizeof(*r0));
		r0->type = PTR_TO_MAP_VALUE_OR_NULL;
		r0->map = map;
		r0->id = ++env->next_id;
	}
	if (cb_frame) {
		env->cur->frames[++env->cur->curframe] = cb_frame;
		if (env->cur->curframe + 1 > env->max_frames)
			env->max_frames = env->cur->curframe + 1;
		env->call_next = env->subprog_start[cb_subprog];
	}
	return 0;
}
