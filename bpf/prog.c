/*
 * prog.c - eBPF programs: BPF_PROG_LOAD (decode the attributes, resolve map fds in lddw,
 * verify, then commit: id, decoded code, fd), references and the program fd (anon file
 * "bpf-prog", with Linux's fdinfo), its id (obj.c), and bpf_prog_run for the kernel (with
 * kernel.bpf_stats_enabled's run count and time).
 *
 * Linux 6.1 ABI (union bpf_attr's prog_type .. fd_array): E2BIG for 0 or too many insns,
 * EINVAL for unknown types/flags/names and bad log attributes, EFAULT for bad pointers,
 * EBADF/EINVAL for lddw map fds that are not maps, ENOSPC when the log was too small.
 * Program types: BPF_PROG_TYPE_PERF_EVENT, BPF_PROG_TYPE_SYSCALL (for PROG_TEST_RUN) and
 * BPF_PROG_TYPE_SOCKET_FILTER (loads, with Linux's __sk_buff access rules; none runs here),
 * BPF_PROG_TYPE_TRACEPOINT (attached to tracepoint events: perf/bpf_attach.c) and
 * BPF_PROG_TYPE_KPROBE (ctx a struct pt_regs; uprobe and kprobe events take them,
 * perf/bpf_attach.c).
 * The tag is Linux's: the first 8 bytes of the SHA-1 of the instructions as loaded, with the
 * imm of both halves of map lddws (BPF_PSEUDO_MAP_FD, BPF_PSEUDO_MAP_VALUE) zeroed, as fds and
 * offsets there differ from load to load (bpf_prog_calc_tag).
 * With bpf_jit_enable (the default) a verified program also gets JIT code (jit.c), which
 * bpf_prog_run prefers.  Not here: BTF, func/line info, attach types.
 */
#include <stdint.h>

#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "sha1.h"

static void prog_free(struct bpf_prog *prog)
{
	bpf_timer_prog_del(prog);
	for (uint32_t i = 0; i < prog->nr_maps; i++)
		bpf_map_put(prog->maps[i]);
	ksvc_free(prog->insns);
	ksvc_free(prog->orig);
	ksvc_free(prog->dinsns);
	bpf_jit_free(&prog->jit);
	ksvc_free(prog->func_info);
	ksvc_free(prog->linfo);
	ksvc_free(prog->ksyms);
	if (prog->btf)
		bpf_btf_put(prog->btf);
	ksvc_free(prog);
}

void bpf_prog_get(struct bpf_prog *prog)
{
	atomic_fetch_add(&prog->refcnt, 1);
}

void bpf_prog_put(struct bpf_prog *prog)
{
	if (!prog || atomic_fetch_sub(&prog->refcnt, 1) != 1)
		return;
	bpf_id_free(BPF_OBJ_PROG, prog->id);
	prog_free(prog);
}

uint32_t bpf_prog_type(const struct bpf_prog *prog)
{
	return prog->type;
}

uint32_t bpf_prog_id(const struct bpf_prog *prog)
{
	return prog->id;
}

/* inline in each caller: the common run is one frame (the stack) and one call */
static inline __attribute__((always_inline)) uint64_t prog_run(const struct bpf_prog *prog,
								void *ctx)
{
	uint64_t stack[BPF_STACK_SIZE / 8] __attribute__((aligned(16)));

	if (prog->jit.fn)
		return prog->jit.fn((uintptr_t)ctx, 0, stack + BPF_STACK_SIZE / 8);
	return bpf_interp_run(prog->dinsns, (uintptr_t)ctx, 0, stack + BPF_STACK_SIZE / 8, NULL);
}

/* Linux's bpf_prog_run under bpf_stats_enabled_key: runs and their time */
static __attribute__((noinline)) uint64_t prog_run_stats(const struct bpf_prog *prog, void *ctx)
{
	struct bpf_prog *p = (struct bpf_prog *)prog; /* the statistics only */
	uint64_t t0 = ksvc_clock_ns(), ret = prog_run(prog, ctx);

	atomic_fetch_add_explicit(&p->run_time_ns, ksvc_clock_ns() - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->run_cnt, 1, memory_order_relaxed);
	return ret;
}

uint64_t bpf_prog_run(const struct bpf_prog *prog, void *ctx)
{
	if (bpf_stats_on())
		return prog_run_stats(prog, ctx);
	return prog_run(prog, ctx);
}

uint64_t bpf_prog_run_perf(const struct bpf_prog *prog, const uint64_t *regs, uint64_t period,
			   uint64_t addr, void *event, uint64_t cookie)
{
	struct bpf_perf_event_data_kern ctx;
	uint32_t n = prog->max_ctx_offset;

	ctx.regs = regs;
	ctx.data.sample_period = period;
	ctx.data.addr = addr;
	ctx.event = event;
	ctx.cookie = cookie;
	/* only what the program reads itself (a copy of 272 bytes costs more than most runs) */
	if (n)
		memcpy(&ctx.data.regs, regs, MIN(n, (uint32_t)sizeof(ctx.data.regs)));
	if (bpf_stats_on())
		return prog_run_stats(prog, &ctx);
	return prog_run(prog, &ctx);
}

bool bpf_prog_jited(const struct bpf_prog *prog)
{
	return prog->jit.fn != NULL;
}

/* Linux 6.1 on arm64: bpf_prog_size() is the struct bpf_prog header (72 bytes) plus the
 * instructions, rounded up to pages. */
uint64_t bpf_prog_memlock(const struct bpf_prog *prog)
{
	uint64_t bytes = 72 + (uint64_t)prog->len * sizeof(struct bpf_insn);

	return (bytes + KSVC_PAGE_SIZE - 1) & ~(uint64_t)(KSVC_PAGE_SIZE - 1);
}

/* ---- the program file ---- */

static void prog_file_get(void *priv)
{
	bpf_prog_get(priv);
}

static void prog_file_release(void *priv)
{
	bpf_prog_put(priv);
}

const struct ksvc_file_ops bpf_prog_fops = {
	.name = "bpf-prog",
	.get = prog_file_get,
	.release = prog_file_release,
	.show_fdinfo = bpf_prog_fdinfo,
};

int bpf_prog_fd_install(struct bpf_prog *prog)
{
	return ksvc_fd_install(&bpf_prog_fops, prog, true);
}

int bpf_prog_get_fd(int fd, struct bpf_prog **out)
{
	void *priv;
	int err = ksvc_fd_get(fd, &bpf_prog_fops, &priv);

	if (err)
		return err == -EINVAL ? -EINVAL : -EBADF;
	*out = priv;
	return 0;
}

int bpf_prog_get_fd_type(int fd, uint32_t type, struct bpf_prog **out)
{
	struct bpf_prog *prog;
	int err = bpf_prog_get_fd(fd, &prog);

	if (err)
		return err;
	if (prog->type != type) {
		bpf_prog_put(prog);
		return -EINVAL;
	}
	*out = prog;
	return 0;
}

/* ---- BPF_PROG_LOAD ---- */

static bool license_gpl(const char *l)
{
	static const char *const ok[] = { "GPL", "GPL v2", "GPL and additional rights",
					  "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(l, ok[i]))
			return true;
	return false;
}

static int add_map(struct bpf_prog *prog, struct bpf_map *map, struct bpf_verifier_log *log)
{
	for (uint32_t i = 0; i < prog->nr_maps; i++) {
		if (prog->maps[i] == map) {
			bpf_map_put(map); /* already held once */
			return 0;
		}
	}
	if (prog->nr_maps == BPF_MAX_MAPS) {
		bpf_map_put(map);
		bpf_log(log, "too many maps\n");
		return -E2BIG;
	}
	prog->maps[prog->nr_maps++] = map;
	return 0;
}

/* Linux's check_map_prog_compatibility: the map types a sleepable program may use. */
static bool sleepable_map(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
		return true;
	default:
		return false;
	}
}

/* Linux 6.1's check_map_prog_compatibility for values with a bpf_spin_lock or bpf_timer
 * (map_btf.c finds them): no program type here may use them yet. */
static int lock_timer_compat(const struct bpf_prog *prog, const struct bpf_map *map,
			     struct bpf_verifier_log *log)
{
	bool tracing = prog->type == BPF_PROG_TYPE_KPROBE || prog->type == BPF_PROG_TYPE_TRACEPOINT ||
		       prog->type == BPF_PROG_TYPE_PERF_EVENT;
	const char *why = NULL;

	if (map->spin_lock_off >= 0)
		why = prog->type == BPF_PROG_TYPE_SOCKET_FILTER ? "socket filter progs cannot use bpf_spin_lock yet\n" :
		      tracing					    ? "tracing progs cannot use bpf_spin_lock yet\n" :
		      (prog->prog_flags & BPF_F_SLEEPABLE)	    ? "sleepable progs cannot use bpf_spin_lock yet\n" :
								      NULL;
	if (!why && map->timer_off >= 0 && tracing)
		why = "tracing progs cannot use bpf_timer yet\n";
	if (!why)
		return 0;
	bpf_log(log, "%s", why);
	return -EINVAL;
}

/*
 * lddw with a map source: take the map (the program holds it) and put its address, or its
 * value's address, in the instruction pair (Linux's resolve_pseudo_ldimm64).
 */
static int resolve_maps(struct bpf_prog *prog, const union bpf_attr *attr,
			struct bpf_verifier_log *log)
{
	for (uint32_t i = 0; i + 1 < prog->len; i++) {
		struct bpf_insn *in = &prog->insns[i];
		struct bpf_map *map;
		uint64_t addr;
		int fd = in->imm, err;

		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		i++;
		if (in->src_reg == 0 || in->src_reg == BPF_PSEUDO_FUNC)
			continue; /* a callback's address: the verifier checks its target */
		if (in->src_reg == BPF_PSEUDO_BTF_ID) { /* a typed kernel symbol (ksym.c) */
			err = bpf_ksym_resolve(prog, i - 1, log);
			if (err)
				return err;
			continue;
		}
		if (in->src_reg == BPF_PSEUDO_MAP_IDX || in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
			const int32_t *ufds = (const int32_t *)(uintptr_t)attr->fd_array;

			if (!ufds) {
				bpf_log(log, "fd_idx without fd_array is invalid\n");
				return -EPROTO;
			}
			if (ksvc_copy_from_user(&fd, ufds + in->imm, sizeof(fd)))
				return -EFAULT;
		} else if (in->src_reg != BPF_PSEUDO_MAP_FD && in->src_reg != BPF_PSEUDO_MAP_VALUE) {
			bpf_log(log, "unrecognized bpf_ld_imm64 insn\n");
			return -EINVAL;
		}
		err = bpf_map_get_fd(fd, &map);
		if (err) {
			bpf_log(log, "fd %d is not pointing to valid bpf_map\n", fd);
			return err;
		}
		err = lock_timer_compat(prog, map, log);
		if (err) {
			bpf_map_put(map);
			return err;
		}
		if ((prog->prog_flags & BPF_F_SLEEPABLE) && !sleepable_map(map->type)) {
			bpf_map_put(map);
			bpf_log(log, "Sleepable programs can only use array, hash, and ringbuf maps\n");
			return -EINVAL;
		}
		if (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_IDX) {
			if (in[1].imm) {
				bpf_map_put(map);
				bpf_log(log, "unrecognized bpf_ld_imm64 insn\n");
				return -EINVAL;
			}
			addr = (uintptr_t)map;
			in->src_reg = BPF_PSEUDO_MAP_FD;
		} else {
			uint32_t off = (uint32_t)in[1].imm;

			if (map->type != BPF_MAP_TYPE_ARRAY || map->max_entries != 1) {
				bpf_map_put(map);
				bpf_log(log, "direct value access on map type %u is not supported\n", map->type);
				return map->type == BPF_MAP_TYPE_ARRAY ? -BPF_ENOTSUPP : -EINVAL;
			}
			if (off >= map->value_size) {
				bpf_map_put(map);
				bpf_log(log, "invalid access to map value pointer, value_size=%u off=%u\n",
					map->value_size, off);
				return -EINVAL;
			}
			addr = (uintptr_t)bpf_array_base(map) + off;
			in->src_reg = BPF_PSEUDO_MAP_VALUE;
		}
		err = add_map(prog, map, log);
		if (err)
			return err;
		in[0].imm = (int32_t)(uint32_t)addr;
		in[1].imm = (int32_t)(uint32_t)(addr >> 32);
	}
	return 0;
}

static void prog_tag(struct bpf_prog *prog)
{
	uint8_t digest[BPF_SHA1_DIGEST];
	struct bpf_sha1 s;
	bool map_ld = false;

	bpf_sha1_init(&s);
	for (uint32_t i = 0; i < prog->len; i++) {
		struct bpf_insn in = prog->orig[i];

		if (map_ld && !in.code && !in.dst_reg && !in.src_reg && !in.off) {
			in.imm = 0; /* the second half of a map lddw */
			map_ld = false;
		} else if (!map_ld && in.code == (BPF_LD | BPF_IMM | BPF_DW) &&
			   (in.src_reg == BPF_PSEUDO_MAP_FD || in.src_reg == BPF_PSEUDO_MAP_VALUE)) {
			in.imm = 0;
			map_ld = true;
		} else {
			map_ld = false;
		}
		bpf_sha1_update(&s, &in, sizeof(in));
	}
	bpf_sha1_final(&s, digest);
	memcpy(prog->tag, digest, sizeof(prog->tag));
}

/* Attribute checks with no side effects (decode). */
static int load_check(const union bpf_attr *attr)
{
	uint32_t flags_ok = BPF_F_STRICT_ALIGNMENT | BPF_F_ANY_ALIGNMENT | BPF_F_TEST_STATE_FREQ |
			    BPF_F_SLEEPABLE | BPF_F_TEST_RND_HI32;

	if (attr->prog_flags & ~flags_ok)
		return -EINVAL;
	if (attr->prog_type != BPF_PROG_TYPE_PERF_EVENT && attr->prog_type != BPF_PROG_TYPE_SYSCALL &&
	    attr->prog_type != BPF_PROG_TYPE_SOCKET_FILTER && attr->prog_type != BPF_PROG_TYPE_TRACEPOINT &&
	    attr->prog_type != BPF_PROG_TYPE_KPROBE)
		return -EINVAL;
	if ((attr->prog_flags & BPF_F_SLEEPABLE) && attr->prog_type != BPF_PROG_TYPE_SYSCALL)
		return -EINVAL;
	if (attr->insn_cnt == 0 || attr->insn_cnt > BPF_MAX_INSNS_PRIV)
		return -E2BIG;
	if (bpf_obj_name_check(attr->prog_name))
		return -EINVAL;
	/* prog_btf_fd, func_info and line_info: prog_btf.c, once the subprograms are known */
	if (attr->attach_btf_id || attr->attach_prog_fd || attr->core_relo_cnt)
		return -EINVAL;
	if (attr->log_level || attr->log_buf || attr->log_size) {
		if (attr->log_size < 128 || attr->log_size > (UINT32_MAX >> 2) || !attr->log_level ||
		    !attr->log_buf || (attr->log_level & ~7u))
			return -EINVAL;
	}
	return 0;
}

int bpf_prog_load(const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_verifier_log log = { .ubuf = (char *)(uintptr_t)attr->log_buf,
					.size = attr->log_size,
					.level = attr->log_level };
	char license[128];
	struct bpf_prog *prog;
	size_t bytes;
	int err, fd;

	err = load_check(attr);
	if (err)
		return err;
	/* like strncpy_from_user: a license longer than the buffer is cut, not an error */
	if (ksvc_strncpy_from_user(license, (const void *)(uintptr_t)attr->license,
				   sizeof(license) - 1) == -EFAULT)
		return -EFAULT;
	license[sizeof(license) - 1] = 0;
	bytes = (size_t)attr->insn_cnt * sizeof(struct bpf_insn);
	prog = ksvc_alloc(sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	atomic_store(&prog->refcnt, 1);
	prog->load_attr = attr;
	prog->load_uattr = uattr;
	prog->type = attr->prog_type;
	prog->expected_attach_type = attr->expected_attach_type;
	prog->prog_flags = attr->prog_flags;
	prog->len = attr->insn_cnt;
	prog->gpl = license_gpl(license);
	memcpy(prog->name, attr->prog_name, BPF_OBJ_NAME_LEN);
	prog->insns = ksvc_alloc(bytes);
	prog->orig = ksvc_alloc(bytes);
	prog->dinsns = ksvc_alloc(sizeof(struct bpf_dinsn) * prog->len);
	err = -ENOMEM;
	if (!prog->insns || !prog->orig || !prog->dinsns)
		goto err_free_prog;
	err = -EFAULT;
	if (ksvc_copy_from_user(prog->orig, (const void *)(uintptr_t)attr->insns, bytes))
		goto err_free_prog;
	memcpy(prog->insns, prog->orig, bytes);
	/* Linux's check_attach_btf_id (which it runs after check_subprogs) */
	if (prog->type == BPF_PROG_TYPE_SYSCALL && !(prog->prog_flags & BPF_F_SLEEPABLE)) {
		bpf_log(&log, "Syscall programs can only be sleepable\n");
		err = -EINVAL;
	} else {
		err = resolve_maps(prog, attr, &log);
	}
	if (!err)
		err = bpf_verify(prog, &log);
	{
		int lerr = bpf_log_finish(&log);

		if (lerr)
			err = lerr;
	}
	prog->load_attr = NULL;
	prog->load_uattr = NULL;
	if (err)
		goto err_free_prog;

	/* Linux's bpf_check_tail_call: a program array the program uses takes it as owner or
	 * refuses it (a different type or JIT state) */
	prog->jit_requested = atomic_load(&bpf_jit_enable) != 0;
	for (uint32_t i = 0; i < prog->nr_maps; i++) {
		if (prog->maps[i]->type == BPF_MAP_TYPE_PROG_ARRAY &&
		    !bpf_prog_array_compatible(prog->maps[i], prog)) {
			err = -EINVAL;
			goto err_free_prog;
		}
	}

	/* commit */
	bpf_interp_decode(prog->insns, prog->len, prog->dinsns, prog->stack_depth, false,
			  prog->type);
	/* bpf_timer_set_callback finds its caller by the callback's address (helpers_timer.c) */
	for (uint32_t i = 0; i < prog->len; i++) {
		if (prog->insns[i].code == (BPF_JMP | BPF_CALL) && !prog->insns[i].src_reg &&
		    prog->insns[i].imm == BPF_FUNC_timer_set_callback) {
			err = bpf_timer_prog_add(prog);
			if (err)
				goto err_free_prog;
			break;
		}
	}
	if (atomic_load(&bpf_jit_enable)) {
		struct ksvc_current_layout cur;
		struct bpf_jit_opts jo = { .frame_size = prog->stack_depth,
					   .lse = ksvc_cpu_has_lse_atomics(),
					   .verified = true,
					   .prog_type = prog->type,
					   .maps = prog->maps,
					   .nr_maps = prog->nr_maps,
					   .cur = ksvc_current_layout(&cur) ? &cur : NULL };

		/* a program the JIT does not cover (or no memory for it) is interpreted */
		(void)bpf_jit_compile(prog->insns, prog->len, &jo, &prog->jit);
	}
	prog_tag(prog);
	prog->load_time = ksvc_clock_ns();
	prog->uid = ksvc_current_uid();
	err = bpf_id_alloc(BPF_OBJ_PROG, prog, &prog->refcnt, &prog->id);
	if (err)
		goto err_free_prog;
	fd = bpf_prog_fd_install(prog);
	if (fd < 0)
		bpf_prog_put(prog);
	return fd;

err_free_prog:
	prog_free(prog);
	return err;
}
