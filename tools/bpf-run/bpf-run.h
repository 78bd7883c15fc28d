/* bpf-run.h - pieces of the host tool bpf-run (tools/bpf-run/). */
#pragma once

#include <stddef.h>
#include <linux/bpf.h>

#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* ISA v4 sign-extending loads (newer than the 6.1 uapi) */
#endif

/* Assemble bpf_conformance asm text: 0, or -1 with a message in err. */
int bpfrun_assemble(const char *text, struct bpf_insn **out, int *nslots, char *err, size_t errlen);
