/*
 * syscall.h - the system-call table, assembled at boot from SYSCALL(nr, fn) entries that each
 * module places in the .syscalls section (so every module keeps its own entries; the result is
 * the usual [__NR_x] = sys_x table).  Arguments arrive in x0-x5; the return value goes to x0
 * as a value or a negative errno.  Unknown numbers return -ENOSYS, logged once per number.
 */
#pragma once

#include <stdint.h>
#include <asm/unistd.h>

struct trapframe;

typedef long (*syscall_fn)(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
			   uint64_t a5);

struct syscall_entry {
	unsigned int nr;
	syscall_fn fn;
	const char *name;
};

#define SYSCALL_CAT2(a, b) a##b
#define SYSCALL_CAT(a, b) SYSCALL_CAT2(a, b)
/* The handler may take fewer arguments than six: the AAPCS64 caller passes them in registers
 * either way, as Linux's own syscall wrappers rely on. */
#define SYSCALL(nr_, fn_)                                                                          \
	static const struct syscall_entry SYSCALL_CAT(__syscall_entry_, __COUNTER__)               \
		__attribute__((used, section(".syscalls"))) = {                                    \
			(nr_), (syscall_fn)(void (*)(void))(fn_), #fn_                             \
		}

#define NR_SYSCALLS 512

void syscall_init(void);
void syscall_dispatch(struct trapframe *tf);

/* -ERESTARTSYS style restart is not used: an interrupted blocking call returns -EINTR. */
