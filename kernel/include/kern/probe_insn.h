/*
 * probe_insn.h - decoding and simulating a probed arm64 instruction (kernel/probe_insn.c).
 */
#pragma once

#include <stdint.h>

struct trapframe;

enum probe_insn_kind {
	PROBE_INSN_STEP,     /* runs out of line, then the next instruction */
	PROBE_INSN_SIMULATE, /* uses the PC: probe_insn_simulate */
	PROBE_INSN_REJECT,   /* arm64 Linux refuses to probe it (EINVAL) */
};

enum probe_insn_kind probe_insn_classify(uint32_t insn);
/* Execute insn, found at pc, on tf: registers and tf->pc as the instruction would leave them. */
void probe_insn_simulate(uint32_t insn, struct trapframe *tf, uint64_t pc);
