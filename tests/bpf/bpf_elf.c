/*
 * bpf_elf.c - host-test loader for clang -target bpf objects (see bpf_elf.h).  Handles what
 * clang 14 emits for the programs in tests/bpf/: R_BPF_64_64 relocations on lddw against map
 * symbols in "maps" and against global data in .bss/.data/.rodata.  Not a general ELF loader:
 * no BTF, no .maps, no bpf-to-bpf call relocations across sections.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include "bpf_elf.h"

struct bpf_map_def_legacy {
	unsigned int type, key_size, value_size, max_entries, map_flags;
};

const char *bpf_elf_path(const char *name, char *buf, unsigned long len)
{
	const char *b = getenv("BUILD");

	snprintf(buf, len, "%s/bpf/%s.o", b && *b ? b : "build", name);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static int add_map(struct bpf_elf_obj *obj, const char *name, uint32_t type, uint32_t ks,
		   uint32_t vs, uint32_t max, uint32_t flags)
{
	union bpf_attr a;
	int fd;

	if (obj->nmaps == BPF_ELF_MAX_MAPS)
		return -E2BIG;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	for (int i = 0, j = 0; name[i] && j < 15; i++)
		if ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '_')
			a.map_name[j++] = name[i];
	fd = (int)bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0)
		return fd;
	obj->map_fds[obj->nmaps] = fd;
	snprintf(obj->map_names[obj->nmaps], sizeof(obj->map_names[0]), "%s", name);
	obj->nmaps++;
	return fd;
}

int bpf_elf_map_fd(const struct bpf_elf_obj *obj, const char *name)
{
	for (int i = 0; i < obj->nmaps; i++)
		if (!strcmp(obj->map_names[i], name))
			return obj->map_fds[i];
	return -1;
}

int bpf_elf_load(const char *path, const char *sec, uint32_t prog_type, struct bpf_elf_obj *obj)
{
	size_t len;
	char *img = slurp(path, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;
	const char *shstr, *str = NULL;
	Elf64_Sym *syms = NULL;
	int nsyms = 0, prog_sec = -1, rel_sec = -1, maps_sec = -1, lic_sec = -1;
	int sec_fd[64];
	struct bpf_insn *insns = NULL;
	union bpf_attr a;
	char relname[128];
	int err = -EINVAL;

	memset(obj, 0, sizeof(*obj));
	if (!img)
		return -ENOENT;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shnum > 64)
		goto out;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	shstr = img + sh[eh->e_shstrndx].sh_offset;
	snprintf(relname, sizeof(relname), ".rel%s", sec);
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *n = shstr + sh[i].sh_name;

		sec_fd[i] = -1;
		if (!strcmp(n, sec))
			prog_sec = i;
		else if (!strcmp(n, relname))
			rel_sec = i;
		else if (!strcmp(n, "maps"))
			maps_sec = i;
		else if (!strcmp(n, "license"))
			lic_sec = i;
		else if (sh[i].sh_type == SHT_SYMTAB) {
			syms = (Elf64_Sym *)(img + sh[i].sh_offset);
			nsyms = (int)(sh[i].sh_size / sizeof(Elf64_Sym));
			str = img + sh[sh[i].sh_link].sh_offset;
		}
	}
	if (prog_sec < 0 || !syms)
		goto out;
	/* global data sections become one-element arrays, like libbpf's .bss/.data/.rodata maps */
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *n = shstr + sh[i].sh_name;
		uint32_t key = 0;
		bool ro = !strcmp(n, ".rodata");
		void *val;

		if (strcmp(n, ".bss") && strcmp(n, ".data") && !ro)
			continue;
		if (!sh[i].sh_size)
			continue;
		err = add_map(obj, n, BPF_MAP_TYPE_ARRAY, 4, (uint32_t)sh[i].sh_size, 1,
			      BPF_F_MMAPABLE | (ro ? BPF_F_RDONLY_PROG : 0));
		if (err < 0)
			goto out;
		sec_fd[i] = err;
		val = calloc(1, sh[i].sh_size);
		if (sh[i].sh_type != SHT_NOBITS)
			memcpy(val, img + sh[i].sh_offset, sh[i].sh_size);
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)sec_fd[i];
		a.key = (uintptr_t)&key;
		a.value = (uintptr_t)val;
		err = (int)bpf_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
		free(val);
		if (err)
			goto out;
		if (ro) {
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)sec_fd[i];
			err = (int)bpf_sys(BPF_MAP_FREEZE, &a, sizeof(a));
			if (err)
				goto out;
		}
	}
	obj->insn_cnt = (int)(sh[prog_sec].sh_size / 8);
	insns = malloc(sh[prog_sec].sh_size);
	memcpy(insns, img + sh[prog_sec].sh_offset, sh[prog_sec].sh_size);
	/* maps: one per symbol in "maps" */
	int sym_fd[1024];

	for (int s = 0; s < nsyms && s < 1024; s++) {
		sym_fd[s] = -1;
		if (maps_sec >= 0 && syms[s].st_shndx == maps_sec && syms[s].st_name) {
			struct bpf_map_def_legacy *d =
				(void *)(img + sh[maps_sec].sh_offset + syms[s].st_value);

			err = add_map(obj, str + syms[s].st_name, d->type, d->key_size,
				      d->value_size, d->max_entries, d->map_flags);
			if (err < 0)
				goto out;
			sym_fd[s] = err;
		}
	}
	if (rel_sec >= 0) {
		Elf64_Rel *rel = (Elf64_Rel *)(img + sh[rel_sec].sh_offset);

		for (size_t r = 0; r < sh[rel_sec].sh_size / sizeof(*rel); r++) {
			int s = (int)ELF64_R_SYM(rel[r].r_info);
			struct bpf_insn *in = &insns[rel[r].r_offset / 8];

			err = -EINVAL;
			if (s >= nsyms || s >= 1024 || in->code != (BPF_LD | BPF_IMM | BPF_DW))
				goto out;
			if (sym_fd[s] >= 0) {
				in->src_reg = BPF_PSEUDO_MAP_FD;
				in->imm = sym_fd[s];
			} else if (syms[s].st_shndx < eh->e_shnum && sec_fd[syms[s].st_shndx] >= 0) {
				in[1].imm = (int32_t)(syms[s].st_value + (uint32_t)in->imm);
				in->src_reg = BPF_PSEUDO_MAP_VALUE;
				in->imm = sec_fd[syms[s].st_shndx];
			} else {
				goto out;
			}
		}
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = prog_type;
	a.insn_cnt = (uint32_t)obj->insn_cnt;
	a.insns = (uintptr_t)insns;
	a.license = (uintptr_t)(lic_sec >= 0 ? img + sh[lic_sec].sh_offset : "GPL");
	a.log_buf = (uintptr_t)obj->log;
	a.log_size = sizeof(obj->log);
	a.log_level = 1;
	snprintf(a.prog_name, sizeof(a.prog_name), "%.15s", sec);
	err = (int)bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
out:
	free(insns);
	free(img);
	return err;
}
