/*
 * ksym.c - typed kernel symbols in programs (libbpf's `extern ... __ksym`): the lddw
 * BPF_PSEUDO_BTF_ID pair names a VAR of the kernel's BTF (insn[0].imm its id, insn[1].imm a
 * BTF fd, 0 for vmlinux), and loading resolves it as Linux 6.1's check_pseudo_btf_id: the
 * symbol's address from the kernel's symbol table goes into the pair, and the verifier learns
 * what the register then holds (bpf_ksym_of): a per-CPU variable (listed in the BTF's
 * ".data..percpu" DATASEC) is a percpu_ptr_ that only bpf_per_cpu_ptr / bpf_this_cpu_ptr
 * (here too) turn into a pointer, a struct is a ptr_ to it, anything else read-only memory of
 * its size.
 *
 * Does not: module BTF (there are no modules; a BTF fd other than the kernel's is refused as
 * Linux refuses a bad one, "invalid module BTF object FD specified.").
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"

/* Is VAR id one of the per-CPU variables (Linux's find_btf_percpu_datasec)? */
static bool var_is_percpu(const struct bpf_btf *btf, uint32_t id)
{
	uint32_t sec = bpf_btf_find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *t = sec ? bpf_btf_type(btf, sec) : NULL;
	const struct btf_var_secinfo *vsi;

	if (!t)
		return false;
	vsi = (const struct btf_var_secinfo *)(t + 1);
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++)
		if (vsi[i].type == id)
			return true;
	return false;
}

static int add_ksym(struct bpf_prog *prog, const struct bpf_ksym_ld *k)
{
	struct bpf_ksym_ld *n = ksvc_alloc((prog->nr_ksyms + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	if (prog->nr_ksyms)
		memcpy(n, prog->ksyms, prog->nr_ksyms * sizeof(*n));
	n[prog->nr_ksyms++] = *k;
	ksvc_free(prog->ksyms);
	prog->ksyms = n;
	return 0;
}

int bpf_ksym_resolve(struct bpf_prog *prog, uint32_t idx, struct bpf_verifier_log *log)
{
	struct bpf_insn *in = &prog->insns[idx];
	uint32_t id = (uint32_t)in[0].imm, type, tid;
	struct bpf_ksym_ld k = { .insn = idx };
	const struct bpf_btf *btf = bpf_btf_vmlinux();
	const struct btf_type *t;
	const char *name;
	uint64_t addr;

	if (in[1].imm) {
		struct bpf_btf *fb;
		bool kernel;

		/* only the kernel's own BTF can name a kernel symbol: no module BTF here (the
		 * kernel's outlives the program: no reference kept) */
		if (bpf_btf_get_fd(in[1].imm, &fb)) {
			bpf_log(log, "invalid module BTF object FD specified.\n");
			return -EINVAL;
		}
		kernel = fb->kernel;
		bpf_btf_put(fb);
		if (!kernel) {
			bpf_log(log, "invalid module BTF object FD specified.\n");
			return -EINVAL;
		}
		btf = bpf_btf_vmlinux();
	} else if (!btf) {
		bpf_log(log, "kernel is missing BTF, make sure CONFIG_DEBUG_INFO_BTF=y is specified "
			     "in Kconfig.\n");
		return -EINVAL;
	}
	t = id ? bpf_btf_type(btf, id) : NULL;
	if (!t) {
		bpf_log(log, "ldimm64 insn specifies invalid btf_id %d.\n", (int)id);
		return -ENOENT;
	}
	if (bpf_btf_kind(t) != BTF_KIND_VAR) {
		bpf_log(log, "pseudo btf_id %d in ldimm64 isn't KIND_VAR.\n", (int)id);
		return -EINVAL;
	}
	name = bpf_btf_str(btf, t->name_off);
	addr = name ? ksvc_kallsyms_lookup_name(name) : 0;
	if (!addr) {
		bpf_log(log, "ldimm64 failed to find the address for kernel symbol '%s'.\n",
			name ? name : "");
		return -ENOENT;
	}
	type = t->type;
	t = bpf_btf_skip_modifiers(btf, type, &tid);
	if (var_is_percpu(btf, id)) {
		k.kind = BPF_KSYM_PERCPU;
		k.btf_id = tid;
	} else if (t && (bpf_btf_kind(t) == BTF_KIND_STRUCT || bpf_btf_kind(t) == BTF_KIND_UNION)) {
		k.kind = BPF_KSYM_BTF;
		k.btf_id = tid;
	} else {
		uint32_t sid = type, size;

		if (!bpf_btf_type_id_size(btf, &sid, &size)) {
			const char *tn = t ? bpf_btf_str(btf, t->name_off) : NULL;

			bpf_log(log, "ldimm64 unable to resolve the size of type '%s': %d\n",
				tn ? tn : "", -EINVAL);
			return -EINVAL;
		}
		k.kind = BPF_KSYM_MEM;
		k.mem_size = size;
	}
	in[0].imm = (int32_t)(uint32_t)addr;
	in[1].imm = (int32_t)(uint32_t)(addr >> 32);
	return add_ksym(prog, &k);
}

const struct bpf_ksym_ld *bpf_ksym_of(const struct bpf_prog *prog, uint32_t idx)
{
	for (uint32_t i = 0; i < prog->nr_ksyms; i++)
		if (prog->ksyms[i].insn == idx)
			return &prog->ksyms[i];
	return NULL;
}

/* bpf_per_cpu_ptr(percpu_ptr, cpu): cpu's instance, NULL past the last possible CPU */
uint64_t bpf_h_per_cpu_ptr(uint64_t ptr, uint64_t cpu, uint64_t a3, uint64_t a4, uint64_t a5)
{
	if ((uint32_t)cpu >= ksvc_nr_cpus())
		return 0;
	return ptr + ksvc_per_cpu_offset((uint32_t)cpu);
}

/* bpf_this_cpu_ptr(percpu_ptr): this CPU's instance (a program runs without migrating) */
uint64_t bpf_h_this_cpu_ptr(uint64_t ptr, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return ptr + ksvc_per_cpu_offset(ksvc_cpu_id());
}
