/*
 * trapframe.h - registers saved on exception entry (vectors.S builds it on the kernel stack).
 * The layout of the first 34 words is the arm64 user_pt_regs layout (x0-x30, sp, pc, pstate),
 * which ptrace, signal frames and BPF perf-event contexts expose to user space.
 */
#pragma once

#define TF_X0 0
#define TF_X30 240
#define TF_SP 248
#define TF_PC 256
#define TF_PSTATE 264
#define TF_ESR 272
#define TF_FAR 280
#define TF_SIZE 288

#ifndef __ASSEMBLY__
#include <stdint.h>

struct trapframe {
	uint64_t x[31];
	uint64_t sp; /* SP_EL0: the user stack pointer */
	uint64_t pc; /* ELR_EL1 */
	uint64_t pstate; /* SPSR_EL1 */
	uint64_t esr;
	uint64_t far;
};

_Static_assert(sizeof(struct trapframe) == TF_SIZE, "trapframe layout");
_Static_assert(__builtin_offsetof(struct trapframe, pc) == TF_PC, "trapframe layout");

static inline int trapframe_from_user(const struct trapframe *tf)
{
	return (tf->pstate & 0xf) == 0; /* EL0t */
}
#endif
