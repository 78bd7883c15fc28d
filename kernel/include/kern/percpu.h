/*
 * percpu.h - per-CPU variables, as Linux lays them out: DEFINE_PER_CPU puts a variable in the
 * image's .data..percpu section, which is only the template; kernel/percpu.c gives each possible
 * CPU its own copy at boot, and __per_cpu_offset[cpu] is the distance from the template to that
 * copy.  The template's address (what /proc/kallsyms and the kernel's BTF show for the
 * variable) plus a CPU's offset is that CPU's instance: what per_cpu_ptr computes, here and in
 * the bpf_per_cpu_ptr / bpf_this_cpu_ptr helpers (through ksvc_per_cpu_offset).
 *
 * Before percpu_init the offsets are 0 and every CPU uses the template, whose contents then
 * become each copy's starting value.  this_cpu_ptr is stable only while the caller cannot
 * migrate (interrupts masked or preemption off).
 */
#pragma once

#include <stdint.h>
#include <arch/memlayout.h>
#include <kern/sched.h>

#define PER_CPU_SECTION __attribute__((section(".data..percpu")))
#define DEFINE_PER_CPU(type, name) PER_CPU_SECTION __typeof__(type) name
#define DECLARE_PER_CPU(type, name) extern PER_CPU_SECTION __typeof__(type) name

/* [boot, then read-only] template to CPU i's copy; 0 until percpu_init */
extern uint64_t __per_cpu_offset[MAX_CPUS];
extern char __per_cpu_start[], __per_cpu_end[]; /* the template (linker.ld) */

#define per_cpu_ptr(ptr, cpu) \
	((__typeof__(ptr))((uintptr_t)(ptr) + __per_cpu_offset[(cpu)]))
#define this_cpu_ptr(ptr) per_cpu_ptr(ptr, this_cpu()->id)
#define per_cpu(var, cpu) (*per_cpu_ptr(&(var), (cpu)))

/* [boot] Give each of the nr possible CPUs its copy of the template (kmain, after mm_init). */
void percpu_init(unsigned int nr);
