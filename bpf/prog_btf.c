/*
 * prog_btf.c - a program's BTF (BPF_PROG_LOAD's prog_btf_fd, func_info and line_info), as
 * Linux 6.1's check_btf_info / check_btf_func / check_btf_line check it once the
 * subprograms are known, and the source lines the verifier log quotes (verbose_linfo).
 *
 * Rules and messages: without func_info and line_info prog_btf_fd is not looked at; else it
 * must be a BTF fd (EBADF, EINVAL).  func_info: one record per subprogram, rec_size in
 * [8, 252] and a multiple of 4, bytes past the kernel's record zero (E2BIG, the kernel's size
 * written back to func_info_rec_size), the first at insn 0, increasing, each at its
 * subprogram's start, each naming a BTF FUNC.  line_info: rec_size in [16, 252] and a
 * multiple of 4 (EINVAL, no message, as Linux), the same tail rule, offsets increasing and
 * inside the program, never on an lddw's second half, strings inside the string section, the
 * first line of each subprogram at its start.  Both are kept for BPF_OBJ_GET_INFO_BY_FD.
 *
 * What the verifier makes of the records (callbacks, global functions): verify_func.c.
 * Nothing patches instructions, so the records' offsets stay as loaded.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"

#define FUNCINFO_MIN 8u
#define REC_MAX 252u
#define LINEINFO_MIN 16u

_Static_assert(sizeof(struct bpf_func_info) == 8, "struct bpf_func_info");
_Static_assert(sizeof(struct bpf_line_info) == 16, "struct bpf_line_info");

/* One user record of urec bytes into a kernel one of ksize: bytes past ksize must be zero
 * (E2BIG with Linux's message, and ksize's part written back to *ursize). */
static int copy_rec(void *k, size_t ksize, const uint8_t *u, uint32_t urec, uint32_t *ursize,
		    uint32_t back, const char *msg, struct bpf_verifier_log *log)
{
	int err = bpf_user_tail_zero(u, ksize, urec);

	if (err == -E2BIG) {
		bpf_log(log, "%s", msg);
		if (ursize && ksvc_copy_to_user(ursize, &back, sizeof(back)))
			err = -EFAULT;
	}
	if (err)
		return err;
	return ksvc_copy_from_user(k, u, MIN((size_t)urec, ksize)) ? -EFAULT : 0;
}

static int check_func(struct bpf_prog *prog, const union bpf_attr *attr, union bpf_attr *uattr,
		      const uint32_t *sub_start, uint32_t nr_sub, struct bpf_verifier_log *log)
{
	uint32_t n = attr->func_info_cnt, urec = attr->func_info_rec_size;
	uint32_t copy = MIN(urec, (uint32_t)sizeof(struct bpf_func_info)), prev = 0;
	const uint8_t *u = BPF_UPTR(attr->func_info);
	struct bpf_func_info *k;
	int err;

	if (!n)
		return 0;
	if (n != nr_sub) {
		bpf_log(log, "number of funcs in func_info doesn't match number of subprogs\n");
		return -EINVAL;
	}
	if (urec < FUNCINFO_MIN || urec > REC_MAX || urec % 4) {
		bpf_log(log, "invalid func info rec size %u\n", urec);
		return -EINVAL;
	}
	k = ksvc_alloc(sizeof(*k) * n);
	if (!k)
		return -ENOMEM;
	memset(k, 0, sizeof(*k) * n);
	for (uint32_t i = 0; i < n; i++, u += urec) {
		const struct btf_type *t;

		err = copy_rec(&k[i], sizeof(*k), u, urec, uattr ? &uattr->func_info_rec_size : NULL,
			       copy, "nonzero tailing record in func info", log);
		if (err)
			goto err_free;
		err = -EINVAL;
		if (!i && k[i].insn_off) {
			bpf_log(log, "nonzero insn_off %u for the first func info record",
				k[i].insn_off);
			goto err_free;
		}
		if (i && k[i].insn_off <= prev) {
			bpf_log(log, "same or smaller insn offset (%u) than previous func info record (%u)",
				k[i].insn_off, prev);
			goto err_free;
		}
		if (sub_start[i] != k[i].insn_off) {
			bpf_log(log, "func_info BTF section doesn't match subprog layout in BPF program\n");
			goto err_free;
		}
		t = bpf_btf_type(prog->btf, k[i].type_id);
		if (!t || !k[i].type_id || bpf_btf_kind(t) != BTF_KIND_FUNC) {
			bpf_log(log, "invalid type id %d in func info", (int)k[i].type_id);
			goto err_free;
		}
		prev = k[i].insn_off;
	}
	prog->func_info = k;
	prog->nr_func_info = n;
	return 0;
err_free:
	ksvc_free(k);
	return err;
}

static int check_line(struct bpf_prog *prog, const union bpf_attr *attr, union bpf_attr *uattr,
		      const uint32_t *sub_start, uint32_t nr_sub, struct bpf_verifier_log *log)
{
	uint32_t n = attr->line_info_cnt, urec = attr->line_info_rec_size, s = 0, prev = 0;
	uint32_t ksize = sizeof(struct bpf_line_info);
	const uint8_t *u = BPF_UPTR(attr->line_info);
	struct bpf_line_info *l;
	int err;

	if (!n)
		return 0;
	if (n > INT32_MAX / sizeof(*l))
		return -EINVAL;
	if (urec < LINEINFO_MIN || urec > REC_MAX || urec % 4)
		return -EINVAL;
	l = ksvc_alloc(sizeof(*l) * n);
	if (!l)
		return -ENOMEM;
	memset(l, 0, sizeof(*l) * n);
	for (uint32_t i = 0; i < n; i++, u += urec) {
		err = copy_rec(&l[i], ksize, u, urec, uattr ? &uattr->line_info_rec_size : NULL,
			       ksize, "nonzero tailing record in line_info", log);
		if (err)
			goto err_free;
		err = -EINVAL;
		if ((i && l[i].insn_off <= prev) || l[i].insn_off >= prog->len) {
			bpf_log(log, "Invalid line_info[%u].insn_off:%u (prev_offset:%u prog->len:%u)\n",
				i, l[i].insn_off, prev, prog->len);
			goto err_free;
		}
		if (!prog->orig[l[i].insn_off].code) {
			bpf_log(log, "Invalid insn code at line_info[%u].insn_off\n", i);
			goto err_free;
		}
		if (!bpf_btf_str(prog->btf, l[i].line_off) ||
		    !bpf_btf_str(prog->btf, l[i].file_name_off)) {
			bpf_log(log, "Invalid line_info[%u].line_off or .file_name_off\n", i);
			goto err_free;
		}
		if (s != nr_sub) {
			if (l[i].insn_off == sub_start[s]) {
				s++;
			} else if (sub_start[s] < l[i].insn_off) {
				bpf_log(log, "missing bpf_line_info for func#%u\n", s);
				goto err_free;
			}
		}
		prev = l[i].insn_off;
	}
	if (s != nr_sub) {
		bpf_log(log, "missing bpf_line_info for %u funcs starting from func#%u\n", nr_sub - s, s);
		err = -EINVAL;
		goto err_free;
	}
	prog->linfo = l;
	prog->nr_linfo = n;
	return 0;
err_free:
	ksvc_free(l);
	return err;
}

int bpf_prog_check_btf(struct bpf_prog *prog, const uint32_t *sub_start, uint32_t nr_sub,
		       struct bpf_verifier_log *log)
{
	const union bpf_attr *attr = prog->load_attr;
	int err;

	if (!attr || (!attr->func_info_cnt && !attr->line_info_cnt))
		return 0;
	err = bpf_btf_get_fd((int)attr->prog_btf_fd, &prog->btf);
	if (err)
		return err;
	err = check_func(prog, attr, prog->load_uattr, sub_start, nr_sub, log);
	if (!err)
		err = check_line(prog, attr, prog->load_uattr, sub_start, nr_sub, log);
	return err;
}

/* Linux's find_linfo: the last record at or before insn */
static const struct bpf_line_info *find_linfo(const struct bpf_prog *prog, uint32_t insn)
{
	uint32_t i;

	if (!prog->nr_linfo || insn >= prog->len)
		return NULL;
	for (i = 1; i < prog->nr_linfo; i++)
		if (insn < prog->linfo[i].insn_off)
			break;
	return &prog->linfo[i - 1];
}

void bpf_prog_log_linfo(const struct bpf_prog *prog, uint32_t insn, struct bpf_verifier_log *log,
			const struct bpf_line_info **prev)
{
	const struct bpf_line_info *l;
	const char *s;

	if (!log || !log->level || !prog->btf)
		return;
	l = find_linfo(prog, insn);
	if (!l || l == *prev)
		return;
	s = bpf_btf_str(prog->btf, l->line_off);
	while (s && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f'))
		s++;
	bpf_log(log, "; %s\n", s ? s : "");
	*prev = l;
}
