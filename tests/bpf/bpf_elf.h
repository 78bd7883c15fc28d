/*
 * bpf_elf.h - host-test loader for the clang -target bpf objects built from the .bpf.c files in tests/bpf/:
 * creates their maps ("maps" section, struct bpf_map_def) and global-data arrays (.bss, .data,
 * .rodata) through bpf_sys, patches lddw relocations (map fd / map value) and loads one section
 * as a program.  Host only (libc, <elf.h>); a tiny stand-in for libbpf.
 */
#pragma once

#include <stdint.h>

#define BPF_ELF_MAX_MAPS 16

struct bpf_elf_obj {
	int nmaps;
	int map_fds[BPF_ELF_MAX_MAPS];
	char map_names[BPF_ELF_MAX_MAPS][32];
	int insn_cnt;
	char log[65536];
};

/* Path of a built object: $BUILD/bpf/<name>.o (BUILD defaults to "build"). */
const char *bpf_elf_path(const char *name, char *buf, unsigned long len);
/* Load section sec of the object at path as prog_type: the program fd, or -errno. */
int bpf_elf_load(const char *path, const char *sec, uint32_t prog_type, struct bpf_elf_obj *obj);
/* fd of the map created for symbol (or section name for global data), or -1. */
int bpf_elf_map_fd(const struct bpf_elf_obj *obj, const char *name);
