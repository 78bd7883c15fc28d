/*
 * btf.h - program BTF (BPF Type Format) objects inside bpf/: the parser and validator
 * (btf.c) and what programs and maps look up in a loaded BTF.  Shared by bpf/ files only.
 *
 * Lock legend: (c) set at creation, constant after; (a) atomic.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/btf.h>

struct bpf_verifier_log;

#define BPF_BTF_MAX_SIZE (16u * 1024 * 1024) /* Linux's BTF_MAX_SIZE */

struct bpf_btf {
	_Atomic uint32_t refcnt; /* (a) fds, programs, maps */
	uint32_t id; /* (c) 0 until the id table has it */
	uint8_t *data; /* (c) the bytes as loaded (bpf_btf_info.btf gives them back) */
	uint32_t size; /* (c) */
	struct btf_header hdr; /* (c) the known part of the header */
	uint32_t *tsec; /* (c) a 4-byte aligned copy of the type section */
	const char *strs; /* (c) the string section inside data */
	const struct btf_type **types; /* (c) [0] is void */
	uint32_t nr_types; /* (c) with void */
	uint32_t *rid, *rsize; /* (c) per type: what it resolved to, and its size */
	bool kernel; /* (c) the kernel's own (bpf_btf_vmlinux_init): named "vmlinux" */
};

/*
 * Parse and validate size bytes (a kernel copy; the object keeps its own) as Linux 6.1's
 * btf_parse does, logging its messages when log->level is set: 0 and *out with one
 * reference, or -EINVAL / -E2BIG / -ENOTSUPP / -ELOOP / -ENOSPC (log full) / -ENOMEM.
 */
int bpf_btf_parse(const void *data, uint32_t size, struct bpf_verifier_log *log,
		  struct bpf_btf **out);
void bpf_btf_get(struct bpf_btf *btf);
/* [sleep] Drop a reference; the last one frees the object and its id. */
void bpf_btf_put(struct bpf_btf *btf);

/* Linux's btf_kind_str: "INT", "STRUCT", ... ("UNKNOWN" past the last kind). */
const char *bpf_btf_kind_name(uint32_t kind);
/*
 * btf_show.c: the value at obj shown as type_id of btf describes it, Linux 6.1's
 * btf_type_snprintf_show for the BTF_F_* flags: the length of the whole text (buf holds what
 * fits of it, NUL-terminated when anything was written), or -EFAULT (obj unreadable) /
 * -EINVAL (a type without a size).
 */
int bpf_btf_snprintf_show(const struct bpf_btf *btf, uint32_t type_id, const void *obj,
			  char *buf, int32_t len, uint64_t flags);

/* The type with this id (0: void), or NULL beyond the last. */
const struct btf_type *bpf_btf_type(const struct bpf_btf *btf, uint32_t id);
/* The string at off, or NULL when off is outside the string section. */
const char *bpf_btf_str(const struct bpf_btf *btf, uint32_t off);
/* Linux's btf_type_id_size: the sized type *id stands for (through modifiers and vars),
 * its id back in *id and its size in *size; NULL for void, fwd, func, func_proto. */
const struct btf_type *bpf_btf_type_id_size(const struct bpf_btf *btf, uint32_t *id,
					    uint32_t *size);
/* Skip typedef/volatile/const/restrict/type_tag from id; the id reached in *res (may be NULL). */
const struct btf_type *bpf_btf_skip_modifiers(const struct bpf_btf *btf, uint32_t id,
					      uint32_t *res);

static inline uint32_t bpf_btf_kind(const struct btf_type *t)
{
	return BTF_INFO_KIND(t->info);
}

static inline uint32_t bpf_btf_vlen(const struct btf_type *t)
{
	return BTF_INFO_VLEN(t->info);
}

/* The kernel's own BTF object (bpf_btf_vmlinux_init), or NULL before it or without one. */
struct bpf_btf *bpf_btf_vmlinux(void);
/* The id of the first type of this kind named name, or 0 when there is none. */
uint32_t bpf_btf_find_by_name_kind(const struct bpf_btf *btf, const char *name, uint32_t kind);

/* bpf_btf_struct_access: what the access reads */
#define BTF_WALK_SCALAR 0
#define BTF_WALK_PTR 1 /* a pointer to the struct *next_id names */
/*
 * A read of size bytes at off of the struct (or union) struct_id names, as Linux 6.1's
 * btf_struct_access: BTF_WALK_SCALAR, BTF_WALK_PTR, or -EACCES / -EINVAL / -EFAULT with
 * Linux's log line.
 */
int bpf_btf_struct_access(const struct bpf_btf *btf, struct bpf_verifier_log *log,
			  uint32_t struct_id, uint32_t off, uint32_t size, uint32_t *next_id);
/* Linux's btf_struct_walk stopping at a nested struct: the id of the outermost struct member
 * (of struct_id, walking down) that starts exactly at off; false when off is in no such. */
bool bpf_btf_nested_struct_at(const struct bpf_btf *btf, uint32_t struct_id, uint32_t off,
			      uint32_t *out);
