/* test_page.c - the buddy allocator and kmalloc over a host arena (kernel/page.c, kmalloc.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kern/page.h>

#define ARENA_PAGES 4096 /* 16 MiB */

static void *arena;
static struct page meta[ARENA_PAGES];
static struct page_allocator pa;
static uint64_t base_pfn;

static int setup(void **state)
{
	(void)state;
	if (!arena && posix_memalign(&arena, 4u << 20, (size_t)ARENA_PAGES * 4096))
		return -1;
	base_pfn = (uintptr_t)arena >> 12;
	page_allocator_init(&pa, 0);
	assert_int_equal(page_zone_add(&pa, base_pfn, ARENA_PAGES, meta), 0);
	return 0;
}

static void test_free_range_and_counts(void **state)
{
	(void)state;
	page_free_range(&pa, base_pfn + 3, ARENA_PAGES - 3);
	assert_int_equal(pa.nr_free, ARENA_PAGES - 3);
	uint64_t pfn;

	/* A 4 MiB block exists: the arena is 4 MiB aligned and pages 1024.. are free. */
	assert_true(page_alloc(&pa, PAGE_MAX_ORDER, &pfn));
	assert_int_equal(pfn % 1024, 0);
	assert_true(pfn >= base_pfn + 3);
	page_free(&pa, pfn, PAGE_MAX_ORDER);
	assert_int_equal(pa.nr_free, ARENA_PAGES - 3);
	/* The reserved pages are never handed out. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(page_lookup(&pa, base_pfn + i)->state, PAGE_RESERVED);
}

static void test_exhaust_and_merge(void **state)
{
	(void)state;
	page_free_range(&pa, base_pfn, ARENA_PAGES);
	static uint64_t got[ARENA_PAGES];
	uint64_t n = 0, pfn;

	while (page_alloc(&pa, 0, &pfn)) {
		assert_true(pfn >= base_pfn && pfn < base_pfn + ARENA_PAGES);
		got[n++] = pfn;
	}
	assert_int_equal(n, ARENA_PAGES);
	assert_int_equal(pa.nr_free, 0);
	/* Each page handed out once. */
	static uint8_t seen[ARENA_PAGES];
	memset(seen, 0, sizeof(seen));
	for (uint64_t i = 0; i < n; i++) {
		assert_int_equal(seen[got[i] - base_pfn], 0);
		seen[got[i] - base_pfn] = 1;
	}
	/* Free in a scrambled order; everything must merge back into maximal blocks. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j = (i * 2654435761u) % n;
		uint64_t t = got[i];

		got[i] = got[j];
		got[j] = t;
	}
	for (uint64_t i = 0; i < n; i++)
		page_free(&pa, got[i], 0);
	assert_int_equal(pa.nr_free, ARENA_PAGES);
	for (int i = 0; i < ARENA_PAGES / 1024; i++) {
		assert_true(page_alloc(&pa, PAGE_MAX_ORDER, &pfn));
	}
	assert_false(page_alloc(&pa, 0, &pfn));
}

static void test_bad_order(void **state)
{
	(void)state;
	uint64_t pfn;

	page_free_range(&pa, base_pfn, ARENA_PAGES);
	assert_false(page_alloc(&pa, PAGE_MAX_ORDER + 1, &pfn));
}

static void test_kmalloc_classes(void **state)
{
	(void)state;
	struct kmem k;
	size_t sizes[] = { 1, 8, 16, 17, 100, 512, 2048, 2049, 4096, 10000, 1u << 20 };
	void *ptrs[64];

	page_free_range(&pa, base_pfn, ARENA_PAGES);
	kmem_init(&k, &pa);
	for (size_t r = 0; r < 4; r++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			unsigned char *p = kmem_alloc(&k, sizes[i]);

			assert_non_null(p);
			assert_int_equal((uintptr_t)p % 16, 0);
			for (size_t b = 0; b < sizes[i]; b++)
				assert_int_equal(p[b], 0);
			memset(p, 0xa5, sizes[i]);
			ptrs[r * 11 + i] = p;
		}
	}
	for (size_t i = 0; i < 44; i++)
		kmem_free(&k, ptrs[i]);
	assert_int_equal(k.bytes_in_use, 0);
	assert_int_equal(pa.nr_free, ARENA_PAGES);
	kmem_free(&k, NULL);
}

static void test_kmalloc_many_small(void **state)
{
	(void)state;
	struct kmem k;
	static void *p[20000];

	page_free_range(&pa, base_pfn, ARENA_PAGES);
	kmem_init(&k, &pa);
	for (int i = 0; i < 20000; i++) {
		p[i] = kmem_alloc(&k, 24 + (i % 7) * 40);
		assert_non_null(p[i]);
		*(int *)p[i] = i;
	}
	for (int i = 0; i < 20000; i += 2)
		kmem_free(&k, p[i]);
	for (int i = 1; i < 20000; i += 2)
		assert_int_equal(*(int *)p[i], i);
	for (int i = 1; i < 20000; i += 2)
		kmem_free(&k, p[i]);
	assert_int_equal(k.bytes_in_use, 0);
	assert_int_equal(pa.nr_free, ARENA_PAGES);
}

static void test_kmalloc_oom(void **state)
{
	(void)state;
	struct kmem k;

	page_free_range(&pa, base_pfn, 8);
	kmem_init(&k, &pa);
	assert_null(kmem_alloc(&k, 64 * 4096));
	void *a = kmem_alloc(&k, 8 * 4096);

	assert_non_null(a);
	assert_null(kmem_alloc(&k, 16));
	kmem_free(&k, a);
	assert_non_null(a = kmem_alloc(&k, 16));
	kmem_free(&k, a);
}

/* KDEBUG (host tests have it): a write to a freed slab object, a double free and a write past
 * the end of an object panic at the next allocation of that object, at the second free, or
 * at the free.  Each runs in a child: kpanic
 * aborts. */
static int died_of_abort(void (*fn)(struct kmem *k))
{
	pid_t c = fork();
	int st = 0;

	if (c == 0) {
		struct kmem k;

		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		page_free_range(&pa, base_pfn, ARENA_PAGES);
		kmem_init(&k, &pa);
		fn(&k);
		_exit(0);
	}
	waitpid(c, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void write_after_free(struct kmem *k)
{
	char *a = kmem_alloc(k, 64);

	kmem_alloc(k, 64); /* keep the slab page */
	kmem_free(k, a);
	a[40] = 1; /* the bug */
	kmem_alloc(k, 64); /* the same object again: its poison is broken */
}

static void double_free(struct kmem *k)
{
	char *a = kmem_alloc(k, 64);

	kmem_alloc(k, 64); /* keep the slab page */
	kmem_free(k, a);
	kmem_free(k, a);
}

static void write_past_end(struct kmem *k)
{
	char *a = kmem_alloc(k, 40);

	a[40] = 1; /* one byte past the 40 asked for */
	kmem_free(k, a);
}

static void clean_reuse(struct kmem *k)
{
	char *a = kmem_alloc(k, 64);

	memset(a, 0x6b, 64); /* poison-like contents in a live object are no free */
	kmem_free(k, a);
	a = kmem_alloc(k, 64);
	kmem_free(k, a);
}

static void test_kmalloc_debug_poison(void **state)
{
	(void)state;
	assert_true(died_of_abort(write_after_free));
	assert_true(died_of_abort(double_free));
	assert_true(died_of_abort(write_past_end));
	assert_false(died_of_abort(clean_reuse));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_free_range_and_counts, setup),
		cmocka_unit_test_setup(test_exhaust_and_merge, setup),
		cmocka_unit_test_setup(test_bad_order, setup),
		cmocka_unit_test_setup(test_kmalloc_classes, setup),
		cmocka_unit_test_setup(test_kmalloc_many_small, setup),
		cmocka_unit_test_setup(test_kmalloc_oom, setup),
		cmocka_unit_test_setup(test_kmalloc_debug_poison, setup),
	};
	return cmocka_run_group_tests_name("page", tests, NULL, NULL);
}
