/* ksym.h - kernel addresses to function names, from the symbol table the image carries
 * (kernel/kallsyms.S, the text /proc/kallsyms shows). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * In tab (len bytes of "%016lx %c %s\n" lines, by address), the function (type T or t) at or
 * below addr: its name copied to name (NUL-terminated, cut at size) and addr's offset in
 * *off.  false when no function starts at or below addr.
 */
bool ksym_find(const char *tab, size_t len, uint64_t addr, char *name, size_t size, uint64_t *off);

/* [any] ksym_find in the running kernel's own table, for addresses in its code only. */
bool ksym_lookup(uint64_t addr, char *name, size_t size, uint64_t *off);
/*
 * The function (T or t) called name in tab: its address and its size (to the next symbol's
 * address); false when there is none.
 */
bool ksym_find_name(const char *tab, size_t len, const char *name, uint64_t *addr, uint64_t *size);
/* The address of the first symbol of any type (code or data) named name, as Linux's
 * kallsyms_lookup_name: false when there is none. */
bool ksym_find_any(const char *tab, size_t len, const char *name, uint64_t *addr);
/* [any] ksym_find_name in the running kernel's own table. */
bool ksym_addr(const char *name, uint64_t *addr, uint64_t *size);
/* [any] Is addr in the kernel image's code? */
bool ksym_is_text(uint64_t addr);
/* [any] ksym_find_any in the running kernel's own table. */
bool ksym_addr_any(const char *name, uint64_t *addr);
