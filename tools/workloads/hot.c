/*
 * hot.c - a workload with one known hot function, for perf record demos and end-to-end tests.
 *
 * burn() spins for a number of iterations; caller_a() and caller_b() each
 * call it, so `perf report` shows burn first and `perf report -g` shows the
 * two call paths. Build static, -O1 -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer -fno-inline so burn keeps its own symbol and,
 * although it is a leaf, its own frame record (the host's perf cannot fix
 * up an arm64 leaf from the sampled LR: it has no arm64 libunwind).
 *
 *   hot [iterations-in-millions]   (default 20)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long burn(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	return x;
}

__attribute__((noinline)) static void caller_a(unsigned long n)
{
	sink += burn(n);
}

__attribute__((noinline)) static void caller_b(unsigned long n)
{
	sink += burn(n / 2);
}

int main(int argc, char **argv)
{
	unsigned long m = argc > 1 ? strtoul(argv[1], NULL, 0) : 20;

	for (int r = 0; r < 4; r++) {
		caller_a(m * 1000000UL / 4);
		caller_b(m * 1000000UL / 4);
	}
	printf("hot: %lu\n", sink & 1);
	return 0;
}
