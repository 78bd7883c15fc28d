/*
 * info.c - BPF_OBJ_GET_INFO_BY_FD for programs, maps and links, and the lines their fds add to
 * /proc/PID/fdinfo/N: what bpftool shows.
 *
 * Linux 6.1 (kernel/bpf/syscall.c) is the reference.  info_len above what the kernel knows
 * needs a zero tail (E2BIG), is cut to the struct's size and written back.  A program's info
 * starts from the caller's struct (pointers and counts are inputs: at most the count given is
 * copied, the true count is written back); a map's and a link's start from zeros.  Fields:
 * type, id, tag, name, load_time (ns since boot), created_by_uid, gpl_compatible, map_ids,
 * run_time_ns / run_cnt (while kernel.bpf_stats_enabled), verified_insns, xlated_prog_insns
 * (the instructions as the verifier left them, map addresses shown as map ids with
 * BPF_PSEUDO_MAP_FD / BPF_PSEUDO_MAP_VALUE and the value's offset, as bpf_insn_prepare_dump),
 * jited_prog_insns / jited_prog_len, nr_jited_ksyms / jited_ksyms and nr_jited_func_lens /
 * jited_func_lens (one function: the JIT makes one image of a program and its subprograms),
 * nr_prog_tags / prog_tags, the record sizes of func_info, line_info and jited_line_info
 * (EINVAL for other sizes), btf_id, nr_func_info / func_info and nr_line_info / line_info as
 * loaded (prog_btf.c), nr_jited_line_info 0 (Linux: one address per line when JITed).
 * An fd that is not open: EBADFD; not a bpf object: EINVAL.
 *
 * Differences from Linux: helper calls in xlated_prog_insns keep the helper's id (Linux: the
 * function's offset from __bpf_call_base, which bpftool names the same way); Linux's
 * verifier rewrites (inlined map lookups, ctx field conversions) are not made here.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"

_Static_assert(sizeof(struct bpf_prog_info) == 232, "Linux 6.1 struct bpf_prog_info");
_Static_assert(sizeof(struct bpf_map_info) == 88, "Linux 6.1 struct bpf_map_info");

/* ---- programs ---- */

/* The map and offset a fixed-up lddw address points into (bpf_map_from_imm). */
static struct bpf_map *map_of_addr(const struct bpf_prog *prog, uint64_t addr, uint8_t src,
				   uint32_t *off)
{
	for (uint32_t i = 0; i < prog->nr_maps; i++) {
		struct bpf_map *m = prog->maps[i];

		if (src == BPF_PSEUDO_MAP_FD && addr == (uintptr_t)m) {
			*off = 0;
			return m;
		}
		if (src == BPF_PSEUDO_MAP_VALUE && m->type == BPF_MAP_TYPE_ARRAY &&
		    addr >= (uintptr_t)bpf_array_base(m) &&
		    addr < (uintptr_t)bpf_array_base(m) + m->value_size) {
			*off = (uint32_t)(addr - (uintptr_t)bpf_array_base(m));
			return m;
		}
	}
	return NULL;
}

/* bpf_insn_prepare_dump: the instructions with map addresses back as map ids, a typed ksym's
 * lddw as the constant address it became (convert_pseudo_ld_imm64), and the verifier's probe
 * loads (loads through a kernel object's pointer) as the loads they were. */
static struct bpf_insn *xlated_dump(const struct bpf_prog *prog)
{
	struct bpf_insn *d = ksvc_alloc((size_t)prog->len * sizeof(*d));

	if (!d)
		return NULL;
	memcpy(d, prog->insns, (size_t)prog->len * sizeof(*d));
	for (uint32_t i = 0; i < prog->len; i++) {
		uint8_t c = d[i].code;

		if (BPF_CLASS(c) == BPF_LDX && BPF_MODE(c) == BPF_PROBE_MEM)
			d[i].code = (uint8_t)(BPF_LDX | BPF_SIZE(c) | BPF_MEM);
		if (BPF_CLASS(c) == BPF_LDX && BPF_MODE(c) == BPF_PROBE_MEMSX)
			d[i].code = (uint8_t)(BPF_LDX | BPF_SIZE(c) | BPF_MEMSX);
	}
	for (uint32_t i = 0; i + 1 < prog->len; i++) {
		uint64_t addr = (uint32_t)d[i].imm | (uint64_t)(uint32_t)d[i + 1].imm << 32;
		struct bpf_map *m;
		uint32_t off;

		if (d[i].code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (d[i].src_reg == BPF_PSEUDO_BTF_ID) /* a typed ksym: its address, as a constant */
			d[i].src_reg = 0;
		m = map_of_addr(prog, addr, d[i].src_reg, &off);
		if (m) {
			d[i].imm = (int32_t)m->id;
			d[i + 1].imm = (int32_t)off;
		}
		i++;
	}
	return d;
}

static int put_u32(uint64_t uarr, uint32_t i, uint32_t v)
{
	return ksvc_copy_to_user((uint32_t *)BPF_UPTR(uarr) + i, &v, sizeof(v)) ? -EFAULT : 0;
}

static int put_u64(uint64_t uarr, uint32_t i, uint64_t v)
{
	return ksvc_copy_to_user((uint64_t *)BPF_UPTR(uarr) + i, &v, sizeof(v)) ? -EFAULT : 0;
}

/* set_info_rec_size: the record sizes given must be the kernel's; then they are written. */
static int rec_sizes(struct bpf_prog_info *info)
{
	if ((info->nr_func_info || info->func_info_rec_size) &&
	    info->func_info_rec_size != sizeof(struct bpf_func_info))
		return -EINVAL;
	if ((info->nr_line_info || info->line_info_rec_size) &&
	    info->line_info_rec_size != sizeof(struct bpf_line_info))
		return -EINVAL;
	if ((info->nr_jited_line_info || info->jited_line_info_rec_size) &&
	    info->jited_line_info_rec_size != sizeof(uint64_t))
		return -EINVAL;
	info->func_info_rec_size = sizeof(struct bpf_func_info);
	info->line_info_rec_size = sizeof(struct bpf_line_info);
	info->jited_line_info_rec_size = sizeof(uint64_t);
	return 0;
}

/* The variable-length arrays: map ids, xlated and jited code, ksyms, lengths, tags. */
static int prog_info_arrays(const struct bpf_prog *prog, struct bpf_prog_info *info)
{
	uint32_t ulen = info->nr_map_ids;
	int err;

	info->nr_map_ids = prog->nr_maps;
	for (uint32_t i = 0; i < ulen && i < prog->nr_maps; i++)
		if ((err = put_u32(info->map_ids, i, prog->maps[i]->id)))
			return err;
	err = rec_sizes(info);
	if (err)
		return err;
	ulen = info->xlated_prog_len;
	info->xlated_prog_len = prog->len * sizeof(struct bpf_insn);
	if (ulen) {
		struct bpf_insn *d = xlated_dump(prog);

		if (!d)
			return -ENOMEM;
		err = ksvc_copy_to_user(BPF_UPTR(info->xlated_prog_insns), d,
					MIN(ulen, info->xlated_prog_len)) ? -EFAULT : 0;
		ksvc_free(d);
		if (err)
			return err;
	}
	ulen = info->jited_prog_len;
	info->jited_prog_len = prog->jit.len;
	if (prog->jit.len && ulen &&
	    ksvc_copy_to_user(BPF_UPTR(info->jited_prog_insns), prog->jit.text,
			      MIN(ulen, prog->jit.len)))
		return -EFAULT;
	/* one function: its address (the interpreter's entry when not compiled) and length */
	ulen = info->nr_jited_ksyms;
	info->nr_jited_ksyms = 1;
	if (ulen && (err = put_u64(info->jited_ksyms, 0,
				   prog->jit.fn ? (uintptr_t)prog->jit.text :
						  (uintptr_t)&bpf_interp_run)))
		return err;
	ulen = info->nr_jited_func_lens;
	info->nr_jited_func_lens = 1;
	if (ulen && (err = put_u32(info->jited_func_lens, 0, prog->jit.len)))
		return err;
	ulen = info->nr_func_info;
	info->nr_func_info = prog->nr_func_info;
	if (ulen && prog->nr_func_info &&
	    ksvc_copy_to_user(BPF_UPTR(info->func_info), prog->func_info,
			      sizeof(*prog->func_info) * MIN(ulen, prog->nr_func_info)))
		return -EFAULT;
	ulen = info->nr_line_info;
	info->nr_line_info = prog->nr_linfo;
	if (ulen && prog->nr_linfo &&
	    ksvc_copy_to_user(BPF_UPTR(info->line_info), prog->linfo,
			      sizeof(*prog->linfo) * MIN(ulen, prog->nr_linfo)))
		return -EFAULT;
	info->nr_jited_line_info = 0; /* one JIT image without a per-line address map */
	ulen = info->nr_prog_tags;
	info->nr_prog_tags = 1;
	if (ulen && ksvc_copy_to_user(BPF_UPTR(info->prog_tags), prog->tag, sizeof(prog->tag)))
		return -EFAULT;
	return 0;
}

/* The start every info shares: the tail rule, info_len cut to the kernel's size, the struct
 * zeroed and, when from_user, the caller's bytes copied in. */
static int info_in(const union bpf_attr *attr, void *info, uint32_t ksize, bool from_user,
		   uint32_t *len)
{
	void *uinfo = BPF_UPTR(attr->info.info);
	int err = bpf_user_tail_zero(uinfo, ksize, attr->info.info_len);

	if (err)
		return err;
	*len = MIN(attr->info.info_len, ksize);
	memset(info, 0, ksize);
	if (from_user && ksvc_copy_from_user(info, uinfo, *len))
		return -EFAULT;
	return 0;
}

/* ... and the end: the struct (len bytes of it) and info_len back. */
static int info_out(const union bpf_attr *attr, const void *info, uint32_t len,
		    union bpf_attr *uattr)
{
	if (ksvc_copy_to_user(BPF_UPTR(attr->info.info), info, len) ||
	    ksvc_copy_to_user(&uattr->info.info_len, &len, sizeof(len)))
		return -EFAULT;
	return 0;
}

static int prog_info(struct bpf_prog *prog, const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_prog_info info;
	uint32_t len;
	int err = info_in(attr, &info, sizeof(info), true, &len);

	if (err)
		return err;
	info.type = prog->type;
	info.id = prog->id;
	info.load_time = prog->load_time;
	info.created_by_uid = prog->uid;
	info.gpl_compatible = prog->gpl;
	memcpy(info.tag, prog->tag, sizeof(info.tag));
	memcpy(info.name, prog->name, sizeof(info.name));
	info.run_time_ns = atomic_load(&prog->run_time_ns);
	info.run_cnt = atomic_load(&prog->run_cnt);
	info.recursion_misses = 0;
	info.verified_insns = prog->verified_insns;
	info.btf_id = prog->btf ? bpf_btf_id(prog->btf) : 0;
	info.attach_btf_id = 0;
	info.attach_btf_obj_id = 0;
	err = prog_info_arrays(prog, &info);
	return err ? err : info_out(attr, &info, len, uattr);
}

/* ---- maps and links ---- */

static int map_info(struct bpf_map *map, const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_map_info info;
	uint32_t len;
	int err = info_in(attr, &info, sizeof(info), false, &len);

	if (err)
		return err;
	info.type = map->type;
	info.id = map->id;
	info.key_size = map->key_size;
	info.value_size = map->value_size;
	info.max_entries = map->max_entries;
	info.map_flags = map->map_flags;
	info.map_extra = map->map_extra;
	memcpy(info.name, map->name, sizeof(info.name));
	if (map->btf) {
		info.btf_id = bpf_btf_id(map->btf);
		info.btf_key_type_id = map->btf_key_type_id;
		info.btf_value_type_id = map->btf_value_type_id;
	}
	return info_out(attr, &info, len, uattr);
}

static int link_info(struct bpf_link *link, const union bpf_attr *attr, union bpf_attr *uattr)
{
	struct bpf_link_info info;
	uint32_t len;
	int err = info_in(attr, &info, sizeof(info), true, &len);

	if (err)
		return err;
	info.type = link->type;
	info.id = link->id;
	info.prog_id = link->prog->id; /* a perf link has no fill_link_info in 6.1 */
	return info_out(attr, &info, len, uattr);
}

int bpf_obj_info(const union bpf_attr *attr, union bpf_attr *uattr)
{
	int fd = (int)attr->info.bpf_fd, err;
	struct bpf_prog *prog;
	struct bpf_map *map;
	struct bpf_link *link;
	struct bpf_btf *btf;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(info.info)))
		return -EINVAL;
	err = bpf_prog_get_fd(fd, &prog);
	if (err == -EBADF)
		return -EBADFD; /* Linux: fdget failed */
	if (!err) {
		err = prog_info(prog, attr, uattr);
		bpf_prog_put(prog);
		return err;
	}
	if (!bpf_map_get_fd(fd, &map)) {
		err = map_info(map, attr, uattr);
		bpf_map_put(map);
		return err;
	}
	if (!bpf_link_get_fd(fd, &link)) {
		err = link_info(link, attr, uattr);
		bpf_link_put(link);
		return err;
	}
	if (!bpf_btf_get_fd(fd, &btf)) {
		err = bpf_btf_info(btf, attr, uattr);
		bpf_btf_put(btf);
		return err;
	}
	return -EINVAL;
}

/* ---- fdinfo: the lines after pos/flags/mnt_id/ino (bpf_*_show_fdinfo) ---- */

static void tag_hex(const uint8_t tag[8], char out[17])
{
	for (int i = 0; i < 8; i++)
		ksnprintf(out + 2 * i, 3, "%02x", tag[i]);
}

size_t bpf_prog_fdinfo(void *priv, char *buf, size_t size)
{
	const struct bpf_prog *prog = priv;
	char tag[17];

	tag_hex(prog->tag, tag);
	return (size_t)ksnprintf(buf, size,
			       "prog_type:\t%u\nprog_jited:\t%u\nprog_tag:\t%s\nmemlock:\t%llu\n"
			       "prog_id:\t%u\nrun_time_ns:\t%llu\nrun_cnt:\t%llu\n"
			       "recursion_misses:\t%llu\nverified_insns:\t%u\n",
			       prog->type, bpf_prog_jited(prog) ? 1u : 0u, tag,
			       (unsigned long long)bpf_prog_memlock(prog), prog->id,
			       (unsigned long long)atomic_load(&prog->run_time_ns),
			       (unsigned long long)atomic_load(&prog->run_cnt), 0ull,
			       prog->verified_insns);
}

/* Linux 6.1's bpf_map_memory_footprint: entries of key and value rounded to 8, in pages. */
static uint64_t map_memlock(const struct bpf_map *map)
{
	uint64_t entry = (map->key_size + bpf_map_sys_value_size(map) + 7) & ~7ull;

	return (map->max_entries * entry + KSVC_PAGE_SIZE - 1) & ~(uint64_t)(KSVC_PAGE_SIZE - 1);
}

size_t bpf_map_fdinfo(void *priv, char *buf, size_t size)
{
	struct bpf_map *map = priv;
	uint32_t owner_type;
	bool owner_jited;
	size_t n;

	n = (size_t)ksnprintf(buf, size,
			    "map_type:\t%u\nkey_size:\t%u\nvalue_size:\t%u\nmax_entries:\t%u\n"
			    "map_flags:\t0x%x\nmap_extra:\t0x%llx\nmemlock:\t%llu\nmap_id:\t%u\n"
			    "frozen:\t%u\n",
			    map->type, map->key_size, map->value_size, map->max_entries,
			    map->map_flags, (unsigned long long)map->map_extra,
			    (unsigned long long)map_memlock(map), map->id, map->frozen ? 1u : 0u);
	/* a program array that a program has met: its owner (bpf_map_show_fdinfo) */
	if (n < size && bpf_prog_array_owner(map, &owner_type, &owner_jited))
		n += (size_t)ksnprintf(buf + n, size - n, "owner_prog_type:\t%u\nowner_jited:\t%u\n",
				     owner_type, owner_jited ? 1u : 0u);
	return n;
}

size_t bpf_link_fdinfo(void *priv, char *buf, size_t size)
{
	const struct bpf_link *link = priv;
	char tag[17];

	tag_hex(link->prog->tag, tag);
	/* bpf_link_type_strs: BPF_LINK_TYPE(BPF_LINK_TYPE_PERF_EVENT, perf) */
	return (size_t)ksnprintf(buf, size, "link_type:\t%s\nlink_id:\t%u\nprog_tag:\t%s\nprog_id:\t%u\n",
			       "perf", link->id, tag, link->prog->id);
}
