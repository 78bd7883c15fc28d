/*
 * vm_internal.h - what kernel/vm.c (the address space: pages, page tables, VMAs) lends to
 * kernel/sys_mm.c (the mm system calls); nothing else includes it.  Every *_locked function
 * wants mm->lock held.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <kern/vm.h>

/* Drop a user page's reference; the page is freed with its last one. */
void vm_page_unref(uint64_t pfn);
/* A zeroed page-table page (pt_walk's allocator), NULL when out of memory. */
void *vm_pt_alloc(void);
void vm_tlb_flush_page(struct mm *mm, uint64_t va);
/* The PTE mapping pfn into user space with VMA_* flags' access. */
pte_t vm_user_pte(uint64_t pfn, uint32_t flags, bool writable);
/* Unmap the pages of [start, end) (special: vm_ops pages, which hold no reference). */
void vm_unmap_pages_locked(struct mm *mm, uint64_t start, uint64_t end, bool special);
/* Split v at addr (v->start < addr < v->end): the new VMA holding [addr, v->end), or NULL. */
struct vm_area *vm_split_locked(struct mm *mm, struct vm_area *v, uint64_t addr);
/* Remove [start, end) from the address space, splitting VMAs that straddle it: 0 or -ENOMEM. */
int vm_unmap_range_locked(struct mm *mm, uint64_t start, uint64_t end);
