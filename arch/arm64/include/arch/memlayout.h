/*
 * memlayout.h - the kernel's virtual address map (48-bit VA, 4 KiB pages).
 *
 *   0x0000_0000_0000_0000 .. USER_VA_END        user space (TTBR0, per process)
 *   PAGE_OFFSET = 0xffff_0000_0000_0000 + pa    linear map of all RAM (TTBR1)
 *   IOMAP_BASE  = 0xffff_7000_0000_0000 ..      MMIO mappings, device attributes
 *   KIMAGE_VA   = 0xffff_8000_0000_0000 + off   the kernel image, at the same offset within
 *                                               2 MiB as the physical load address
 */
#pragma once

#ifdef __ASSEMBLY__
#define MUL(x) (x)
#else
#define MUL(x) (x##ul)
#endif

#define PAGE_SHIFT 12
#define PAGE_SIZE (MUL(1) << PAGE_SHIFT)
#define VA_BITS 48
#define USER_VA_END (MUL(1) << VA_BITS)
#define PAGE_OFFSET MUL(0xffff000000000000)
#define JIT_BASE MUL(0xffff600000000000) /* JIT code, read+execute: 64 MiB, tables made at boot */
#define JIT_SIZE (MUL(64) << 20)
#define IOMAP_BASE MUL(0xffff700000000000)
#define IOMAP_END MUL(0xffff7fffffffffff)
#define KIMAGE_VA MUL(0xffff800000000000)
#define TEXT_OFFSET 0x80000
#define KSTACK_SIZE (16 * 1024)
#define MAX_CPUS 8

#ifndef __ASSEMBLY__
#include <stdint.h>

extern uint64_t kimage_voffset; /* kernel image VA - PA */

static inline void *phys_to_virt(uint64_t pa)
{
	return (void *)(pa + PAGE_OFFSET);
}

static inline uint64_t virt_to_phys(const void *va)
{
	uint64_t v = (uint64_t)va;

	return v >= KIMAGE_VA ? v - kimage_voffset : v - PAGE_OFFSET;
}
#endif
