/*
 * pgtable.h - AArch64 stage-1 translation tables, 4 KiB granule, 4 levels (48-bit VA).
 * Descriptor bits from the Arm ARM D8.3; the walker in mmu.c serves kernel and user tables.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define PTE_VALID (1ull << 0)
#define PTE_TABLE (1ull << 1) /* levels 0-2: next-level table; level 3: page */
#define PTE_PAGE (3ull << 0)
#define PTE_BLOCK (1ull << 0)
#define PTE_ATTRIDX(i) ((uint64_t)(i) << 2)
#define PTE_USER (1ull << 6) /* AP[1]: EL0 access */
#define PTE_RDONLY (1ull << 7) /* AP[2] */
#define PTE_SH_INNER (3ull << 8)
#define PTE_AF (1ull << 10)
#define PTE_NG (1ull << 11)
#define PTE_PXN (1ull << 53)
#define PTE_UXN (1ull << 54)
#define PTE_SW_COW (1ull << 55) /* software: copy-on-write page */
#define PTE_SW_SHARED (1ull << 56) /* software: MAP_SHARED page */
#define PTE_ADDR_MASK 0x0000fffffffff000ull

typedef uint64_t pte_t;

/* Allocates one zeroed table page and returns its linear-map address (NULL: out of memory). */
typedef void *(*pt_alloc_fn)(void);

/* The level-3 entry for va in root, allocating tables when alloc is set; NULL if absent/OOM. */
pte_t *pt_walk(pte_t *root, uint64_t va, bool alloc, pt_alloc_fn alloc_fn);
