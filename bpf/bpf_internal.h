/*
 * bpf_internal.h - types shared by the files of bpf/ only (programs, maps, helpers, verifier,
 * interpreter).  The rest of the kernel uses include/bpf/bpf.h.
 *
 * Lock legend:  (c) set at creation, constant after;  (a) atomic;  (m) map->lock;
 *               (f) frozen under map->lock, read without it by the verifier.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>

/* Linux's kernel-internal "operation not supported" errno, which bpf(2) hands to userland. */
#define BPF_ENOTSUPP 524

#define BPF_MAX_INSNS 4096 /* BPF_MAXINSNS: the unprivileged cap */
#define BPF_MAX_INSNS_PRIV 1000000 /* BPF_COMPLEXITY_LIMIT_INSNS: privileged cap */
#define BPF_STACK_SIZE 512 /* MAX_BPF_STACK, for all frames of a call chain together */
#define BPF_MAX_FRAMES 8 /* MAX_CALL_FRAMES */
#define BPF_MAX_MAPS 64 /* MAX_USED_MAPS */

/* ISA v4 sign-extending loads: newer than the 6.1 uapi header, value from RFC 9669. */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

/* Kernel-internal load modes (Linux's filter.h values) the verifier gives loads through a
 * kernel object's pointer: a fault reads 0.  Never accepted from userland. */
#define BPF_PROBE_MEM 0x20
#define BPF_PROBE_MEMSX 0x40

_Static_assert(sizeof(struct bpf_insn) == 8, "struct bpf_insn is one 64-bit slot");

/* ---- interpreter ---- */

/*
 * A decoded instruction: the handler's label (computed goto), a pre-computed 64-bit operand
 * and the original fields.  One per slot, so slots keep their indexes; the second slot of lddw
 * is never dispatched.  The union holds: jumps and local calls, the target instruction;
 * helper calls, the function; lddw, the 64-bit value; ALU and ST with BPF_K, imm sign-extended.
 */
struct bpf_dinsn {
	const void *op;
	union {
		const struct bpf_dinsn *target;
		uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
		uint64_t k;
	};
	uint8_t dst, src;
	int16_t off;
	int32_t imm;
};

/*
 * Decode len slots (structurally valid: see bpf_check_structure) for the fast or the counting
 * interpreter.  frame_size is the stack a bpf-to-bpf call reserves for its caller's frame;
 * prog_type picks each helper call's function (bpf_helper_impl; 0 for the test path).
 */
void bpf_interp_decode(const struct bpf_insn *insns, uint32_t len, struct bpf_dinsn *out,
		       uint32_t frame_size, bool counting, uint32_t prog_type);
/* The handler index (enum bpf_interp_op in interp_ops.h) of one instruction; BAD if invalid. */
int bpf_interp_op(const struct bpf_insn *in);
/*
 * Run from slot 0 with r1, r2 and r10 = stack_top.  count: NULL for a program decoded for the
 * fast interpreter; for one decoded with counting, receives the executed instructions.  Below
 * stack_top there must be frame_size bytes per nested call plus the innermost frame's stack:
 * verified programs keep all of it within BPF_STACK_SIZE; the verifier-free test path gives
 * BPF_MAX_FRAMES * BPF_STACK_SIZE.
 */
uint64_t bpf_interp_run(const struct bpf_dinsn *prog, uint64_t r1, uint64_t r2, void *stack_top,
			uint64_t *count);

/* ---- JIT (jit.c) ---- */

/* JIT-compiled code: called as fn(r1, r2, r10); returns r0. */
typedef uint64_t (*bpf_jit_fn)(uint64_t r1, uint64_t r2, void *stack_top);

struct bpf_jit_opts {
	uint32_t frame_size; /* what a bpf-to-bpf call reserves for its caller (as the interpreter) */
	bool lse; /* emit LSE atomics (ID_AA64ISAR0_EL1.Atomic), else LDAXR/STLXR loops */
	bool verified; /* the verifier ran: registers need no zeroing at entry */
	uint32_t prog_type; /* picks each helper's function (bpf_helper_impl) */
	/* a verified program's maps: a map_lookup_elem call whose map is known at its call site
	 * (an lddw of one of them) calls the map's own lookup */
	struct bpf_map *const *maps;
	uint32_t nr_maps;
	/* where the current task's ids are (ksvc_current_layout): get_current_pid_tgid inline;
	 * NULL: the helper is called */
	const struct ksvc_current_layout *cur;
};

struct bpf_jit_image {
	bpf_jit_fn fn; /* NULL: not compiled, interpret */
	void *text; /* from ksvc_text_alloc */
	uint32_t len; /* bytes */
};

/* bpf_jit_enable (/proc/sys/net/core/bpf_jit_enable): 0 interprets new loads. */
extern _Atomic int bpf_jit_enable;
/*
 * Translate len structurally valid slots to A64 words (ksvc_alloc'd, *nwords of them): 0 or
 * -EINVAL (something the JIT does not cover: callx, an unknown helper), -E2BIG, -ENOMEM.
 */
int bpf_jit_emit(const struct bpf_insn *insns, uint32_t len, const struct bpf_jit_opts *o,
		 uint32_t **code, uint32_t *nwords);
/* bpf_jit_emit, then install the code as executable memory.  0 or -errno (img zeroed). */
int bpf_jit_compile(const struct bpf_insn *insns, uint32_t len, const struct bpf_jit_opts *o,
		    struct bpf_jit_image *img);
void bpf_jit_free(struct bpf_jit_image *img);

/* Helper functions take r1..r5 and return r0. */
typedef uint64_t (*bpf_helper_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

/* ---- helpers ---- */

enum bpf_arg {
	ARG_NONE = 0,
	ARG_ANY, /* any initialized value */
	ARG_CONST_MAP, /* CONST_PTR_TO_MAP */
	ARG_MAP_KEY, /* pointer to key_size readable bytes of the map in the map argument */
	ARG_MAP_VALUE, /* pointer to value_size readable bytes */
	ARG_MAP_VALUE_OR_NULL, /* the same, or NULL (task_storage_get's initial value) */
	ARG_MAP_VALUE_UNINIT, /* pointer to value_size writable bytes (pop, peek) */
	ARG_MEM, /* pointer to readable memory whose size is the next argument */
	ARG_MEM_UNINIT, /* pointer to writable memory whose size is the next argument */
	ARG_SIZE, /* constant-bounded size of the previous memory argument, may be 0 */
	ARG_SIZE_NZ, /* like ARG_SIZE but not zero */
	ARG_CTX, /* the program's context */
	ARG_CONST_STR, /* read-only map value holding a NUL-terminated string (unused) */
	ARG_ALLOC_SIZE, /* a known constant: the size of the memory the helper returns */
	ARG_RINGBUF_RELEASE, /* an alloc_mem at offset 0: its reference ends here */
	ARG_FUNC, /* PTR_TO_FUNC: a callback subprogram (lddw BPF_PSEUDO_FUNC) */
	ARG_STACK_OR_NULL, /* a stack pointer or NULL: the callback's context */
	ARG_CONST_SIZE_NZ, /* a known non-zero constant (strtol's buffer length is ARG_SIZE) */
	ARG_CONST_STR_RO, /* read-only (frozen BPF_F_RDONLY_PROG) array value, NUL within (fmt) */
	ARG_MEM_RO_OR_NULL, /* readable memory or NULL with the next argument its size */
	ARG_PTR_TO_LONG, /* 8 writable bytes (strtol's result) */
	ARG_PERCPU_BTF, /* a per-CPU variable: lddw BPF_PSEUDO_BTF_ID of one (percpu_ptr_) */
	ARG_BTF_ONLY, /* an argument only BTF types can fill: never a register here */
	ARG_TASK, /* a task: PTR_TO_BTF_ID of the kernel's struct task, unmoved */
	ARG_MAP_VALUE_BTF, /* a bpf_spin_lock / bpf_timer / kptr in a map value: needs map BTF */
	ARG_DYNPTR, /* an initialized struct bpf_dynptr on the stack, of any type */
	ARG_DYNPTR_UNINIT_LOCAL, /* stack slots that become a local dynptr */
	ARG_DYNPTR_UNINIT_RINGBUF, /* stack slots that become a ring buffer dynptr (a reference) */
	ARG_DYNPTR_RINGBUF_RELEASE, /* a ring buffer dynptr: its reference ends here */
};

/* The callback a helper runs, and with what registers (Linux's set_*_callback_state). */
enum bpf_cb {
	CB_NONE = 0,
	CB_LOOP, /* bpf_loop: r1 index, r2 ctx */
	CB_MAP_ELEM, /* for_each_map_elem: r1 map, r2 key, r3 value, r4 ctx */
	CB_FIND_VMA, /* find_vma: r1 task, r2 vma, r3 ctx */
	CB_USER_RINGBUF, /* user_ringbuf_drain: r1 a dynptr (PTR_TO_DYNPTR), r2 ctx */
	CB_TIMER, /* timer_set_callback: r1 map, r2 key, r3 value; runs later, must return 0 */
};

enum bpf_ret {
	RET_INTEGER = 0,
	RET_VOID,
	RET_MAP_VALUE_OR_NULL,
	RET_RINGBUF_MEM_OR_NULL, /* ARG_ALLOC_SIZE bytes, a new reference */
	RET_BTF_ID, /* a pointer typed by kernel BTF, which this kernel has not: refused */
	RET_DYNPTR_MEM_OR_NULL, /* ARG_ALLOC_SIZE bytes inside the dynptr argument, or NULL */
	/* the per-CPU argument's instance (Linux's RET_PTR_TO_MEM_OR_BTF_ID | MEM_RDONLY): a ptr_
	 * to a struct, read-only memory of the type's size otherwise; _OR_NULL: or NULL */
	RET_PERCPU_OBJ,
	RET_PERCPU_OBJ_OR_NULL,
};

/*
 * Which program types may call a helper, as Linux 6.1 sorts them (bpf_base_func_proto for
 * every type; bpf_tracing_func_proto for kprobe, tracepoint, perf_event, raw_tracepoint and
 * syscall programs; pe_prog_func_proto for perf_event only).  A program of another type is
 * told "unknown func".
 */
enum bpf_avail {
	AV_BASE = 0,
	AV_TRACING,
	AV_PERF,
};

struct bpf_helper {
	const char *name;
	bpf_helper_fn fn;
	uint8_t args[5]; /* enum bpf_arg */
	uint8_t ret; /* enum bpf_ret */
	bool gpl_only;
	uint8_t avail; /* enum bpf_avail: the program types that may call it */
	uint8_t cb; /* enum bpf_cb */
	bool might_sleep; /* sleepable programs only (Linux's fn->might_sleep) */
};

/*
 * Run the callback that lddw BPF_PSEUDO_FUNC loaded (fn) with r1..r4 on a stack of its own
 * (interp.c): its r0.  [any] from the helpers of a running program only.
 */
uint64_t bpf_callback_run(uint64_t fn, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4);

/* Index table by enum bpf_func_id; NULL name = not provided. */
extern const struct bpf_helper bpf_helpers[__BPF_FUNC_MAX_ID];
const struct bpf_helper *bpf_helper_get(int32_t id);
/* May a program of prog_type call h? */
bool bpf_helper_allowed(const struct bpf_helper *h, uint32_t prog_type);
/* The function a call to helper id runs in a program of prog_type (a tracepoint program's
 * ctx holds its registers behind a pointer, a syscall program's none): NULL if none. */
bpf_helper_fn bpf_helper_impl(int32_t id, uint32_t prog_type);

/* trace_printk buffer (helpers.c) */
void bpf_trace_reset(void);
/* [any] One bpf_trace_printk line of the current task with msg (helpers.c). */
void bpf_trace_line(const char *msg);

/* helpers_str.c */
uint64_t bpf_h_strncmp(uint64_t s1, uint64_t n, uint64_t s2, uint64_t a4, uint64_t a5);
/* helpers_task.c: the helpers on a task, and the end of __bpf_get_stack (n addresses in ips or
 * an errno, fewer than min -EFAULT; past the first skip, what fits in buf, the rest zeroed) */
uint64_t bpf_h_get_task_stack(uint64_t task, uint64_t buf, uint64_t size, uint64_t flags,
			      uint64_t a5);
uint64_t bpf_h_task_pt_regs(uint64_t task, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t bpf_h_copy_from_user_task(uint64_t dst, uint64_t size, uint64_t uptr, uint64_t task,
				   uint64_t flags);
uint64_t bpf_h_find_vma(uint64_t task, uint64_t addr, uint64_t fn, uint64_t ctx, uint64_t flags);
uint64_t bpf_stack_result(void *buf, uint64_t size, const uint64_t *ips, long n, long min,
			  uint32_t skip);
uint64_t bpf_h_strtol(uint64_t buf, uint64_t len, uint64_t flags, uint64_t res, uint64_t a5);
uint64_t bpf_h_strtoul(uint64_t buf, uint64_t len, uint64_t flags, uint64_t res, uint64_t a5);

/* map_task_storage.c: bpf_task_storage_get / bpf_task_storage_delete */
uint64_t bpf_h_task_storage_get(uint64_t map, uint64_t task, uint64_t value, uint64_t flags,
				uint64_t a5);
uint64_t bpf_h_task_storage_delete(uint64_t map, uint64_t task, uint64_t a3, uint64_t a4,
				   uint64_t a5);

/* helpers_dynptr.c: the dynptr helpers; the struct bpf_dynptr a helper fills (Linux's
 * bpf_dynptr_init, offset 0). */
enum bpf_dynptr_type { BPF_DYNPTR_INVALID = 0, BPF_DYNPTR_LOCAL, BPF_DYNPTR_RINGBUF };
void bpf_dynptr_init(void *ptr, void *data, enum bpf_dynptr_type type, uint32_t size);
uint64_t bpf_h_dynptr_from_mem(uint64_t data, uint64_t size, uint64_t flags, uint64_t ptr,
			       uint64_t a5);
uint64_t bpf_h_dynptr_read(uint64_t dst, uint64_t len, uint64_t src, uint64_t offset,
			   uint64_t flags);
uint64_t bpf_h_dynptr_write(uint64_t dst, uint64_t offset, uint64_t src, uint64_t len,
			    uint64_t flags);
uint64_t bpf_h_dynptr_data(uint64_t ptr, uint64_t offset, uint64_t len, uint64_t a4, uint64_t a5);
uint64_t bpf_h_ringbuf_reserve_dynptr(uint64_t map, uint64_t size, uint64_t flags, uint64_t ptr,
				      uint64_t a5);
uint64_t bpf_h_ringbuf_submit_dynptr(uint64_t ptr, uint64_t flags, uint64_t a3, uint64_t a4,
				     uint64_t a5);
uint64_t bpf_h_ringbuf_discard_dynptr(uint64_t ptr, uint64_t flags, uint64_t a3, uint64_t a4,
				      uint64_t a5);

/* helpers_timer.c: the bpf_timer helpers, and the hooks of the maps holding timers */
struct bpf_hrt; /* one initialized timer */
uint64_t bpf_h_timer_init(uint64_t timer, uint64_t map, uint64_t flags, uint64_t a4, uint64_t a5);
uint64_t bpf_h_timer_set_callback(uint64_t timer, uint64_t fn, uint64_t a3, uint64_t a4,
				  uint64_t a5);
uint64_t bpf_h_timer_start(uint64_t timer, uint64_t nsecs, uint64_t flags, uint64_t a4,
			   uint64_t a5);
uint64_t bpf_h_timer_cancel(uint64_t timer, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
/* [any] Take the timer out of a map value (nothing when the map has no bpf_timer): the field
 * is zeroed and no program reaches the timer any more.  It is pushed on list, returned.
 * Callable under map->lock. */
struct bpf_hrt *bpf_timer_detach(const struct bpf_map *map, void *value, struct bpf_hrt *list);
/* [any] Cancel and free the timers bpf_timer_detach collected once no callback of theirs runs
 * (one releasing itself from its callback: when that returns).  Never under a lock a callback
 * may take (map->lock). */
void bpf_timer_release(struct bpf_hrt *list);
/* Both for one value (Linux's bpf_timer_cancel_and_free). */
void bpf_timer_free_value(const struct bpf_map *map, void *value);
/* Linux's copy_map_value: value_size bytes but the bpf_spin_lock and the bpf_timer. */
void bpf_map_copy_value(const struct bpf_map *map, void *dst, const void *src);
/* A program that calls bpf_timer_set_callback, from its load (0 or -ENOMEM) to its free. */
int bpf_timer_prog_add(struct bpf_prog *prog);
void bpf_timer_prog_del(struct bpf_prog *prog);

/* bprintf.c: Linux's bpf_bprintf_prepare rules for fmt (NUL within fmt_size) with num_args
 * u64 arguments: 0 or -EINVAL.  The snprintf and trace_vprintk helpers. */
int bpf_bprintf_check(const char *fmt, uint64_t fmt_size, uint32_t num_args);
uint64_t bpf_trace_fmt(const char *fmt, uint64_t fmt_size, const uint64_t *args, uint32_t num_args);
uint64_t bpf_h_snprintf(uint64_t str, uint64_t size, uint64_t fmt, uint64_t data, uint64_t len);
uint64_t bpf_h_trace_vprintk(uint64_t fmt, uint64_t fmt_size, uint64_t data, uint64_t len,
			     uint64_t a5);

/* ---- maps ---- */

struct bpf_map;

typedef void *(*bpf_map_lookup_fn)(struct bpf_map *map, const void *key);

struct bpf_map_ops {
	/* Check attributes beyond the common ones; no side effects. */
	int (*check)(const union bpf_attr *attr);
	int (*alloc)(struct bpf_map *map);
	void (*free)(struct bpf_map *map);
	/* [any] Program-side lookup: this CPU's value, or NULL. */
	void *(*lookup)(struct bpf_map *map, const void *key);
	/* Optional, for the JIT: a lookup with lookup's results, specialized for this map as it
	 * was created (its key size, its flavour), or NULL (call lookup). */
	bpf_map_lookup_fn (*lookup_for)(const struct bpf_map *map);
	/* [any] Per-CPU maps: cpu's value (cpu < ksvc_nr_cpus()), or NULL. */
	void *(*lookup_cpu)(struct bpf_map *map, const void *key, uint32_t cpu);
	/* [any] value is value_size bytes (per-CPU maps: this CPU only). */
	int (*update)(struct bpf_map *map, const void *key, const void *value, uint64_t flags);
	int (*delete)(struct bpf_map *map, const void *key);
	/* Syscall side. value is sys_value_size() bytes. */
	int (*sys_lookup)(struct bpf_map *map, const void *key, void *value);
	int (*sys_update)(struct bpf_map *map, const void *key, const void *value, uint64_t flags);
	int (*get_next_key)(struct bpf_map *map, const void *key, void *next);
	/* Called when the last user fd goes (perf event array drops its events). */
	void (*release_uref)(struct bpf_map *map);
	/* [any] Keyless maps (queue, stack, bloom filter): bpf_map_push_elem, and
	 * bpf_map_pop_elem (remove) or bpf_map_peek_elem.  0 or -errno. */
	long (*push)(struct bpf_map *map, const void *value, uint64_t flags);
	long (*pop)(struct bpf_map *map, void *value, bool remove);
};

#define BPF_MAP_KPTR_MAX 8 /* Linux's BPF_MAP_VALUE_OFF_MAX */

struct bpf_map {
	const struct bpf_map_ops *ops; /* (c) */
	_Atomic uint32_t refcnt; /* (a) programs and fds */
	_Atomic uint32_t usercnt; /* (a) fds only */
	uint32_t type, key_size, value_size, max_entries, map_flags; /* (c) */
	uint64_t map_extra; /* (c) BPF_MAP_CREATE's map_extra (bloom filter: hash count) */
	uint32_t id; /* (c) */
	char name[BPF_OBJ_NAME_LEN]; /* (c) */
	bool frozen; /* (f) */
	struct bpf_map *inner_meta; /* (c) map-in-map: the inner maps' template (map_in_map.c) */
	struct bpf_btf *btf; /* (c) btf_fd's BTF (a reference) when type ids came, or NULL */
	uint32_t btf_key_type_id, btf_value_type_id; /* (c) */
	int32_t spin_lock_off, timer_off; /* (c) their offsets in the value, or -errno: none */
	/* (c) kptr fields of the value (map_btf.c), by offset; kptr_err: why the value's BTF has
	 * none usable (Linux keeps btf_parse_kptrs's error and creates the map), else 0 */
	struct bpf_kptr_field {
		uint32_t off, btf_id; /* btf_id: the struct in the kernel's BTF */
		bool ref; /* __kptr_ref */
	} kptrs[BPF_MAP_KPTR_MAX];
	uint32_t nr_kptrs;
	int32_t kptr_err;
	uint32_t mmap_writers; /* writable mappings of an mmapable array (map->lock) */
	struct spinlock lock;
	void *priv; /* (c) type-specific storage */
};

/* Rounded value size of one CPU in a per-CPU map and the syscall value size. */
uint32_t bpf_map_sys_value_size(const struct bpf_map *map);
bool bpf_map_is_percpu(uint32_t type);
const struct bpf_map_ops *bpf_map_ops_of(uint32_t type);

int bpf_map_create(const union bpf_attr *attr, struct bpf_map **out);
/* map_btf.c: BPF_MAP_CREATE's BTF attributes checked and kept on an allocated map: 0 or
 * -errno (nothing kept). */
int bpf_map_check_btf(struct bpf_map *map, const union bpf_attr *attr);
/* The value's kptr field at exactly off, or NULL. */
const struct bpf_kptr_field *bpf_map_kptr_at(const struct bpf_map *map, int64_t off);
/* [any] Linux's check_and_init_map_value for kptrs: a value copied in or out of the map
 * carries no kernel pointer (zeros). */
void bpf_map_kptrs_zero(const struct bpf_map *map, void *value);
void bpf_map_get(struct bpf_map *map);
void bpf_map_put(struct bpf_map *map);
/* fd -> map with a reference: -EBADF / -EINVAL as Linux's bpf_map_get. */
int bpf_map_get_fd(int fd, struct bpf_map **out);
/* The same, with the fd's access mode (Linux's FMODE_CAN_READ / FMODE_CAN_WRITE). */
int bpf_map_get_fd_mode(int fd, struct bpf_map **out, bool *can_read, bool *can_write);
/* A new fd for map, opened read-only or write-only by BPF_F_RDONLY / BPF_F_WRONLY in
 * open_flags (else read-write), with a user reference; the fd takes over the caller's
 * reference.  The fd or -errno (the caller keeps its reference). */
int bpf_map_fd_install(struct bpf_map *map, uint32_t open_flags);
/* Linux's object-name rule for map_name/prog_name: 0 or -EINVAL. */
int bpf_obj_name_check(const char *name);
/* True when helper func_id may take this map (check_map_func_compatibility). */
bool bpf_map_func_ok(const struct bpf_map *map, int32_t func_id);

/* map_ringbuf.c: what the helpers and the map file need of a BPF_MAP_TYPE_RINGBUF. */
struct ksvc_poll;
struct ksvc_mmap;
/* [any] bpf_ringbuf_output: 0, -EINVAL (flags) or -EAGAIN (no room). */
long bpf_ringbuf_output(struct bpf_map *map, const void *data, uint64_t size, uint64_t flags);
/* [any] bpf_ringbuf_reserve: a size-byte body to fill, or NULL (flags, no room). */
void *bpf_ringbuf_reserve(struct bpf_map *map, uint64_t size, uint64_t flags);
/* [any] bpf_ringbuf_submit (discard false) and _discard of a body from bpf_ringbuf_reserve. */
void bpf_ringbuf_commit(void *sample, uint64_t flags, bool discard);
/* [any] bpf_ringbuf_query: BPF_RB_AVAIL_DATA, RING_SIZE, CONS_POS, PROD_POS; else 0. */
uint64_t bpf_ringbuf_query(struct bpf_map *map, uint64_t flags);
/* [any] bpf_user_ringbuf_drain of a BPF_MAP_TYPE_USER_RINGBUF: the callback fn gets each
 * sample as a dynptr; the samples consumed, or -EINVAL, -EBUSY, -E2BIG, -ENOMEM. */
long bpf_user_ringbuf_drain(struct bpf_map *map, uint64_t fn, uint64_t ctx, uint64_t flags);
unsigned int bpf_ringbuf_poll(struct bpf_map *map, struct ksvc_poll *pt);
/* A mapping of the ring: 0, -EPERM (writable beyond the consumer page) or -EINVAL. */
int bpf_ringbuf_mmap_check(struct bpf_map *map, const struct ksvc_mmap *m);
uint64_t bpf_ringbuf_mmap_phys(struct bpf_map *map, uint64_t pgoff);

/* Per-type ops (map_array.c, map_hash.c, map_misc.c) */
extern const struct bpf_map_ops bpf_array_ops, bpf_percpu_array_ops, bpf_hash_ops,
	bpf_percpu_hash_ops, bpf_lru_hash_ops, bpf_perf_array_ops, bpf_stack_ops, bpf_ringbuf_ops,
	bpf_qstack_ops, bpf_prog_array_ops, bpf_bloom_ops, bpf_array_of_maps_ops,
	bpf_hash_of_maps_ops, bpf_user_ringbuf_ops, bpf_task_storage_ops, bpf_cgroup_array_ops;

/* map_cgroup_array.c: bpf_current_task_under_cgroup on slot index: 1 (the current task is in
 * that cgroup or below), 0, -E2BIG (past the end), -EAGAIN (an empty slot).  [any] */
long bpf_cgroup_array_current_under(struct bpf_map *map, uint32_t index);

/* map_prog_array.c: BPF_MAP_TYPE_PROG_ARRAY.  Does prog fit the map's owner (the first
 * program type and JIT state to meet it, which this call records)?  Linux's
 * bpf_prog_map_compatible, for updates and for loads of programs using the map. */
bool bpf_prog_array_compatible(struct bpf_map *map, const struct bpf_prog *prog);
/* The owner for fdinfo: false when no program has met the map (or it is no program array). */
bool bpf_prog_array_owner(struct bpf_map *map, uint32_t *type, bool *jited);
/* [any] The program in slot index (no reference taken: see map_prog_array.c), or NULL. */
const struct bpf_prog *bpf_prog_array_get(struct bpf_map *map, uint32_t index);
/* map_in_map.c: the template of the map inner_fd names (ksvc_alloc'd, no id, ops shared):
 * 0, -EBADF, -EINVAL (no map, or a map-in-map) or -ENOTSUPP (a program array). */
int bpf_map_meta_alloc(int inner_fd, struct bpf_map **out);

/* Linux's MAX_TAIL_CALL_CNT: tail calls one run may make. */
#define BPF_MAX_TAIL_CALLS 33
/* Tail calls in one run, over every call path: Linux 6.1 counts 33 per path only (a call
 * restores the count), so a subprogram called twice that tail-calls its own program runs about
 * 2^33 programs there and stalls the CPU; here the run's 2112th tail call falls through as a
 * spent count does.  No program that stays within it sees a difference. */
#define BPF_MAX_TAIL_CALLS_RUN (BPF_MAX_TAIL_CALLS * 64)

/* BPF_MAP_CREATE's checks for a map of fds (program array, array of maps: Linux's
 * fd_array_map_alloc_check): u32 key and value, flags NUMA_NODE, RDONLY, WRONLY only. */
int bpf_fd_array_check(const union bpf_attr *attr);
/* The syscall update of a map of fds (perf event array, program array): the slot and the fd,
 * or -EINVAL (flags other than BPF_ANY) / -E2BIG (index past the end), as Linux checks them. */
int bpf_fd_array_slot(const struct bpf_map *map, const void *key, const void *value,
		      uint64_t flags, uint32_t *index, int *fd);
/* Slot index of a map of fds (slots: its max_entries pointers) becomes ptr (NULL: empty it),
 * under map->lock, published with a release store for the programs that read it: the old
 * pointer, whose reference the caller now owns. */
void *bpf_fd_array_swap(struct bpf_map *map, void **slots, uint32_t index, void *ptr);
/* The delete of a map of fds: -E2BIG past the end, -ENOENT for an empty slot, else 0 and the
 * emptied slot's pointer in *old (the caller drops its reference). */
int bpf_fd_array_take(struct bpf_map *map, void **slots, const void *key, void **old);
/* get_next_key of an index-keyed map: the next index, 0 for NULL or past the end. */
int bpf_array_next_key(struct bpf_map *map, const void *key, void *next);

/* map_queue.c: QUEUE and STACK maps.  [any] push: 0, -EINVAL (flags), -E2BIG (full);
 * pop (remove) or peek: 0 or -ENOENT with value zeroed. */
long bpf_qstack_push(struct bpf_map *map, const void *value, uint64_t flags);
long bpf_qstack_pop(struct bpf_map *map, void *value, bool remove);

/* STACK_TRACE maps: insert a call chain, returning its id or -errno (get_stackid). */
long bpf_stackmap_insert(struct bpf_map *map, const uint64_t *ips, uint32_t nr, uint64_t flags);
/* PERF_EVENT_ARRAY: the event at index (with no new reference: caller runs with the map held). */
void *bpf_perf_array_event(struct bpf_map *map, uint32_t index);
/* Mmapable array: base of the value area. */
void *bpf_array_base(struct bpf_map *map);
/* A BPF_MAP_TYPE_ARRAY (not per-CPU): value i < max_entries is at *base + i * *elem, for the
 * whole life of the map (the JIT's inline lookup).  false for other types. */
bool bpf_array_layout(const struct bpf_map *map, uint8_t **base, uint32_t *elem);

/* Registered perf ops or NULL (helpers.c). */
const struct bpf_perf_ops *bpf_perf(void);

/* ---- programs ---- */

struct bpf_verifier_log;

struct bpf_prog {
	_Atomic uint32_t refcnt; /* (a) */
	uint32_t type, expected_attach_type, prog_flags; /* (c) */
	uint32_t len; /* (c) slots */
	uint32_t id; /* (c) */
	uint32_t stack_depth; /* (c) bytes of stack per frame reserved by the interpreter */
	uint32_t max_ctx_offset; /* (c) highest ctx byte read + 1 */
	bool gpl; /* (c) */
	/* (c) bpf_jit_enable at load: Linux's prog->jited, which a program array's owner
	 * compares (the JIT may still leave the program to the interpreter) */
	bool jit_requested;
	char name[BPF_OBJ_NAME_LEN]; /* (c) */
	uint8_t tag[8]; /* (c) */
	uint64_t load_time; /* (c) */
	uint32_t uid; /* (c) */
	uint32_t verified_insns; /* (c) instructions the verifier processed */
	_Atomic uint64_t run_cnt, run_time_ns; /* (a) while bpf_stats_enabled */
	uint32_t nr_maps; /* (c) */
	struct bpf_map *maps[BPF_MAX_MAPS]; /* (c) references held */
	struct bpf_insn *insns; /* (c) after fixups (map pointers in lddw) */
	struct bpf_insn *orig; /* (c) as loaded, for bpf_prog_info.xlated */
	struct bpf_dinsn *dinsns; /* (c) decoded for the fast interpreter */
	struct bpf_jit_image jit; /* (c) JIT-compiled code, or fn NULL */
	struct bpf_btf *btf; /* (c) prog_btf_fd's BTF (a reference) when func/line info came */
	struct bpf_func_info *func_info; /* (c) one per subprogram, or NULL */
	uint32_t nr_func_info; /* (c) */
	struct bpf_line_info *linfo; /* (c) or NULL */
	uint32_t nr_linfo; /* (c) */
	struct bpf_ksym_ld *ksyms; /* (c) the typed ksym lddws (ksym.c), nr_ksyms of them */
	uint32_t nr_ksyms; /* (c) */
	/* during BPF_PROG_LOAD only: the attributes (and the user's, for record sizes written
	 * back) that bpf_prog_check_btf reads once the subprograms are known */
	const union bpf_attr *load_attr;
	union bpf_attr *load_uattr;
};

/* ---- typed kernel symbols (ksym.c) ---- */

/* What the register of a resolved lddw BPF_PSEUDO_BTF_ID holds (Linux's aux->btf_var). */
enum bpf_ksym_kind {
	BPF_KSYM_PERCPU = 1, /* a per-CPU variable: percpu_ptr_ to btf_id */
	BPF_KSYM_BTF, /* a struct or union: ptr_ to btf_id */
	BPF_KSYM_MEM, /* anything else: mem_size bytes of read-only memory */
};
struct bpf_ksym_ld {
	uint32_t insn; /* the lddw's first slot */
	uint32_t kind; /* enum bpf_ksym_kind */
	uint32_t btf_id; /* in the kernel's BTF, modifiers skipped */
	uint32_t mem_size;
};
/*
 * Resolve the lddw BPF_PSEUDO_BTF_ID at prog->insns[idx] as Linux 6.1's check_pseudo_btf_id:
 * the variable's address into the pair, what it is into prog->ksyms.  0, or -EINVAL /
 * -ENOENT with Linux's log line, -ENOMEM.
 */
int bpf_ksym_resolve(struct bpf_prog *prog, uint32_t idx, struct bpf_verifier_log *log);
/* The resolved ksym lddw at insn idx, or NULL. */
const struct bpf_ksym_ld *bpf_ksym_of(const struct bpf_prog *prog, uint32_t idx);
uint64_t bpf_h_per_cpu_ptr(uint64_t ptr, uint64_t cpu, uint64_t a3, uint64_t a4, uint64_t a5);
/* btf_show.c: bpf_snprintf_btf */
uint64_t bpf_h_snprintf_btf(uint64_t str, uint64_t str_size, uint64_t ptr, uint64_t ptr_size,
			    uint64_t flags);
uint64_t bpf_h_this_cpu_ptr(uint64_t ptr, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);

/* prog.c */
extern const struct ksvc_file_ops bpf_prog_fops;
extern const struct ksvc_file_ops bpf_map_fops;
/* BPF_PROG_LOAD with attr already copied in (uattr: the user's, for what Linux writes back):
 * the new fd or -errno. */
int bpf_prog_load(const union bpf_attr *attr, union bpf_attr *uattr);
/* prog_btf.c: check and keep func_info / line_info (prog->load_attr) against the
 * subprograms starting at sub_start[0..nr_sub): 0 or -errno with Linux's log line. */
int bpf_prog_check_btf(struct bpf_prog *prog, const uint32_t *sub_start, uint32_t nr_sub,
		       struct bpf_verifier_log *log);
/* The verifier log's "; <source line>" before insn when its line differs from *prev. */
void bpf_prog_log_linfo(const struct bpf_prog *prog, uint32_t insn, struct bpf_verifier_log *log,
			const struct bpf_line_info **prev);
/* A new fd for prog, taking over the caller's reference: the fd or -errno (caller keeps it). */
int bpf_prog_fd_install(struct bpf_prog *prog);
/* bpf_prog_run's "jited" state: the JIT's code runs (Linux's prog->jited). */
bool bpf_prog_jited(const struct bpf_prog *prog);
/* Linux's prog->pages << PAGE_SHIFT: the memlock bpftool shows (fdinfo). */
uint64_t bpf_prog_memlock(const struct bpf_prog *prog);

/* ---- links (link.c): BPF_LINK_CREATE's perf event links ---- */

struct bpf_link {
	_Atomic uint32_t refcnt; /* (a) fds, pins */
	uint32_t type; /* (c) enum bpf_link_type */
	uint32_t id; /* (c) */
	struct bpf_prog *prog; /* (c) the link's reference; the event holds another while attached */
	void *event; /* (c) a reference on the perf event */
};
extern const struct ksvc_file_ops bpf_link_fops;
int bpf_link_create(const union bpf_attr *attr);
void bpf_link_get(struct bpf_link *link);
void bpf_link_put(struct bpf_link *link);
/* fd -> link with a reference: -EBADF / -EINVAL. */
int bpf_link_get_fd(int fd, struct bpf_link **out);

/* ---- object ids, fds by id, pins, stats (obj.c) ---- */

enum bpf_obj_kind { BPF_OBJ_PROG = 1, BPF_OBJ_MAP, BPF_OBJ_LINK, BPF_OBJ_BTF };
/* One id table for programs, maps and links, each kind with its own ids (as Linux's three
 * idrs): an id for obj, whose reference count refcnt GET_FD_BY_ID raises: 0 or -ENOSPC. */
int bpf_id_alloc(enum bpf_obj_kind kind, void *obj, _Atomic uint32_t *refcnt, uint32_t *id);
/* [any] The object's last reference is gone: its id is free. */
void bpf_id_free(enum bpf_obj_kind kind, uint32_t id);
/* BPF_*_GET_NEXT_ID, BPF_*_GET_FD_BY_ID, BPF_OBJ_PIN, BPF_OBJ_GET, BPF_ENABLE_STATS,
 * BPF_TASK_FD_QUERY: attr copied in, uattr the user's. */
int bpf_obj_next_id(int cmd, const union bpf_attr *attr, union bpf_attr *uattr);
int bpf_obj_fd_by_id(int cmd, const union bpf_attr *attr);
int bpf_obj_pin(const union bpf_attr *attr);
int bpf_obj_get(const union bpf_attr *attr);
int bpf_enable_stats(const union bpf_attr *attr);
int bpf_task_fd_query(const union bpf_attr *attr, union bpf_attr *uattr);
/* [any] Runtime statistics on (kernel.bpf_stats_enabled or a BPF_ENABLE_STATS fd); inline:
 * every program run asks. */
extern _Atomic int bpf_stats_users;
static inline bool bpf_stats_on(void)
{
	return atomic_load_explicit(&bpf_stats_users, memory_order_relaxed) > 0;
}

/* ---- BTF objects (btf.c parses, btf_sys.c) ---- */

struct bpf_btf;
extern const struct ksvc_file_ops bpf_btf_fops;
/* BPF_BTF_LOAD with attr copied in: the new fd or -errno. */
int bpf_btf_load(const union bpf_attr *attr);
/* fd -> BTF with a reference: -EBADF / -EINVAL (not a BTF fd). */
int bpf_btf_get_fd(int fd, struct bpf_btf **out);
/* A new fd taking over the caller's reference: the fd or -errno (caller keeps it). */
int bpf_btf_fd_install(struct bpf_btf *btf);
void bpf_btf_put(struct bpf_btf *btf);
uint32_t bpf_btf_id(const struct bpf_btf *btf);
/* BPF_OBJ_GET_INFO_BY_FD of a BTF fd. */
int bpf_btf_info(struct bpf_btf *btf, const union bpf_attr *attr, union bpf_attr *uattr);

/* ---- BPF_OBJ_GET_INFO_BY_FD and fdinfo (info.c) ---- */

int bpf_obj_info(const union bpf_attr *attr, union bpf_attr *uattr);
size_t bpf_prog_fdinfo(void *prog, char *buf, size_t size);
size_t bpf_map_fdinfo(void *map, char *buf, size_t size);
size_t bpf_link_fdinfo(void *link, char *buf, size_t size);

/* bpf(2)'s attribute rules, shared by the command files (syscall.c) */
#define BPF_END_OF(field) (offsetof(union bpf_attr, field) + sizeof(((union bpf_attr *)0)->field))
#define BPF_UPTR(x) ((void *)(uintptr_t)(x))
/* CHECK_ATTR: the bytes after the command's last field are zero. */
bool bpf_attr_tail_dirty(const union bpf_attr *attr, size_t end);
/* bpf_check_uarg_tail_zero: bytes [known, size) of a user struct are zero (else E2BIG). */
int bpf_user_tail_zero(const void *uptr, size_t known, size_t size);

/* ---- verifier ---- */

struct bpf_verifier_log {
	char *ubuf; /* user log_buf or NULL */
	uint32_t size, level;
	uint32_t len; /* bytes produced so far (excluding the final NUL) */
	char kbuf[256]; /* one line being formatted */
	uint32_t klen;
	bool truncated;
};

void bpf_log(struct bpf_verifier_log *log, const char *fmt, ...);
/* [any] A BPF_PROBE_MEM load: size (1, 2, 4, 8) bytes at addr zero-extended, 0 if it faults. */
uint64_t bpf_probe_load(uintptr_t addr, uint32_t size);
/* Linux's bpf_vlog_reset: the user's log ends at pos again (a NUL written there) */
void bpf_log_rewind(struct bpf_verifier_log *log, uint32_t pos);
/* disasm.c: in as Linux's verifier log writes it, without index or newline (left: the
 * instructions from in to the program's end); helper names by id (NULL if none) */
int bpf_disasm(char *buf, size_t size, const struct bpf_insn *in, uint32_t left);
const char *bpf_helper_id_name(int32_t id);
/* Copy what is left and terminate; -ENOSPC when the buffer was too small, -EFAULT. */
int bpf_log_finish(struct bpf_verifier_log *log);

/*
 * Structural checks shared by the verifier and the verifier-free test path: jump and call
 * targets, lddw pairs, known opcodes, registers, known helpers, last insn.  linux_rules adds
 * what Linux rejects although the ISA defines it: callx, reserved fields, division by a zero
 * immediate, out-of-range immediate shifts.  0 or -EINVAL / -E2BIG with a log line.
 */
int bpf_check_structure(const struct bpf_insn *insns, uint32_t len, bool linux_rules,
			struct bpf_verifier_log *log);

/*
 * Verify prog->insns (after map fds became pointers and maps[] is filled).  Sets stack_depth
 * and max_ctx_offset.  0 or -errno (EINVAL, EACCES, E2BIG, ...), with the log filled.
 */
int bpf_verify(struct bpf_prog *prog, struct bpf_verifier_log *log);

