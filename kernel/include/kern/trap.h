/*
 * trap.h - what arch/arm64/trap.c hands to kernel/ and the user-access primitives.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trapframe;

/* kernel/usertrap.c: an exception from EL0 (syscall, fault, ...), interrupts enabled. */
void trap_user_sync(struct trapframe *tf);
/* Before returning to EL0: is there work (signals) to do, and do it. */
bool trap_user_work_pending(struct trapframe *tf);
void trap_user_work(struct trapframe *tf);
/*
 * A BRK #imm goes to the handler registered for imm (uprobes and kprobes register theirs at
 * boot; a handler checks which level the BRK came from): it returns true when it dealt with
 * the trap (tf updated), false for the SIGTRAP a BRK from EL0 gives otherwise (a kernel BRK
 * is then a panic).  At most a few handlers; register at boot only.
 */
void trap_brk_register(uint16_t imm, bool (*fn)(struct trapframe *tf));
/* A BRK trapped (from EL0, or from EL1 with interrupts masked): its handler's answer. */
bool trap_brk(struct trapframe *tf);
/* A kernel data abort: resolve a user page fault, or resume a user-access routine at its
 * fixup; false when the fault is a kernel bug. */
bool trap_fixup_uaccess(struct trapframe *tf);
/* kernel/: handle a fault on a user address from kernel mode; true when now mapped. */
bool mm_fault_from_kernel(uint64_t far, bool write);
void mm_debug_pte(uint64_t va);

/* arch/arm64/uaccess.S: copy n bytes where either side may fault; returns bytes NOT copied. */
size_t arch_copy_user(void *dst, const void *src, size_t n);
/* Copy a string of at most n bytes including NUL: its length, n when no NUL, -1 on fault. */
long arch_strncpy_user(char *dst, const char *src, size_t n);
