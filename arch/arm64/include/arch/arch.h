/* arch.h - what kernel/ calls in arch/arm64 (boot-time setup and low-level services). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/platform.h>

struct trapframe;

/* uart.c */
void uart_init(uint64_t mmio_va);
void uart_putc(char c);
int uart_getc(void);

/* mmu.c: kernel page tables (TTBR1). */
#define MAP_NORMAL 0
#define MAP_DEVICE 1
#define MAP_TEXT 2 /* normal memory, read-only, executable at EL1 (JIT code) */
/* Map [pa, pa + size) at va in the kernel half; tables come from the early pool until
 * mmu_use_page_allocator() is called.  0 or -ENOMEM. */
int mmu_map_kernel(uint64_t va, uint64_t pa, uint64_t size, int type);
void mmu_use_page_allocator(void);
/* Remove the page mappings of [va, va + size) (made with MAP_TEXT or MAP_DEVICE) and invalidate
 * their TLB entries on every CPU. */
void mmu_unmap_kernel(uint64_t va, uint64_t size);
/* Map device registers; returns the virtual address (page offset kept), 0 on failure. */
uint64_t ioremap(uint64_t pa, uint64_t size);

/* gic.c */
int gic_init(const struct platform *pf);
void gic_init_cpu(void);
void gic_handle_irq(struct trapframe *tf);

/* psci.c */
void psci_init(const struct platform *pf);
int psci_cpu_on(uint64_t mpidr, uint64_t entry_pa, uint64_t context);
__attribute__((noreturn)) void psci_system_off(void);

/* semihosting (arch/arm64/semihost.c): only when the bootargs say "semihost" */
extern bool semihost_enabled;
__attribute__((noreturn)) void semihost_exit(int code);
long semihost_open(const char *path, int mode); /* mode 4 = "wb" */
long semihost_write(long fd, const void *buf, size_t n);
void semihost_close(long fd);

/* trap.c */
void trap_init(void);
void dump_backtrace(uint64_t fp);
