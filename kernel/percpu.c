/*
 * percpu.c - the per-CPU area (kern/percpu.h): one copy of the .data..percpu template per
 * possible CPU, made at boot from the template as it is then, and __per_cpu_offset[], the
 * distance from the template to each copy, as Linux's setup_per_cpu_areas.  The copies are
 * whole pages from the page allocator and are never freed.  The variables keep their template
 * addresses in /proc/kallsyms and in the kernel's BTF (a VAR each, in a DATASEC named
 * ".data..percpu", as pahole encodes Linux's), which is what BPF's typed ksyms resolve.
 *
 * Does not: add per-CPU memory later (Linux's alloc_percpu); CPUs are fixed at boot here.
 */
#include <stddef.h>
#include <kern/assert.h>
#include <kern/mm.h>
#include <kern/percpu.h>
#include <kern/string.h>

uint64_t __per_cpu_offset[MAX_CPUS];

void percpu_init(unsigned int nr)
{
	size_t size = (size_t)(__per_cpu_end - __per_cpu_start);
	unsigned int order = 0;

	if (!size)
		return;
	while ((4096ul << order) < size)
		order++;
	for (unsigned int cpu = 0; cpu < nr && cpu < MAX_CPUS; cpu++) {
		char *copy = alloc_pages(order);

		if (!copy)
			kpanic("percpu: no memory for cpu %u's area", cpu);
		memcpy(copy, __per_cpu_start, size);
		__per_cpu_offset[cpu] = (uint64_t)(uintptr_t)copy - (uint64_t)(uintptr_t)__per_cpu_start;
	}
}
