/* bpf_insn.h - eBPF instructions as C expressions for the tests that write programs by hand
 * (header only): struct bpf_insn p[] = { MOV_K(0, 0), EXIT_INSN }. */
#ifndef TESTS_USER_BPF_INSN_H
#define TESTS_USER_BPF_INSN_H

#include <linux/bpf.h>

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_K(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define CALL_LOCAL(off) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, off)
#define JEQ_K(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT_INSN INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define RET0 MOV_K(0, 0), EXIT_INSN
#define N_INSNS(a) (sizeof(a) / sizeof((a)[0]))

#endif
