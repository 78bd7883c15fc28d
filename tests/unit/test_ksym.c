/* test_ksym.c - kernel/lib/ksym.c: addresses to function names in a /proc/kallsyms-style table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <kern/ksym.h>

static const char tab[] = "ffff800000080000 T _head\n"
			  "ffff800000080040 T _stext\n"
			  "ffff800000080040 t start\n"
			  "ffff800000080100 T kmain\n"
			  "ffff800000080180 R a_table\n"
			  "ffff800000080200 t helper_with_a_long_name\n"
			  "ffff800000090000 R _etext\n";

static void test_lookup(void **state)
{
	char name[64];
	uint64_t off = 99;

	(void)state;
	assert_false(ksym_find(tab, sizeof(tab) - 1, 0xffff80000007ffffull, name, sizeof(name), &off));
	assert_true(ksym_find(tab, sizeof(tab) - 1, 0xffff800000080000ull, name, sizeof(name), &off));
	assert_string_equal(name, "_head");
	assert_int_equal(off, 0);
	/* the last of several functions at one address */
	assert_true(ksym_find(tab, sizeof(tab) - 1, 0xffff800000080044ull, name, sizeof(name), &off));
	assert_string_equal(name, "start");
	assert_int_equal(off, 4);
	/* data symbols are skipped: 0x1c0 is still kmain's */
	assert_true(ksym_find(tab, sizeof(tab) - 1, 0xffff8000000801c0ull, name, sizeof(name), &off));
	assert_string_equal(name, "kmain");
	assert_int_equal(off, 0xc0);
	/* cut to the buffer */
	assert_true(ksym_find(tab, sizeof(tab) - 1, 0xffff800000080208ull, name, 7, &off));
	assert_string_equal(name, "helper");
	assert_int_equal(off, 8);
	/* a truncated table ends the walk without reading past it */
	assert_true(ksym_find(tab, 40, 0xffff800000080208ull, name, sizeof(name), &off));
	assert_string_equal(name, "_head");
	assert_false(ksym_find(tab, 0, 0xffff800000080208ull, name, sizeof(name), &off));
	assert_false(ksym_find(tab, sizeof(tab) - 1, 0xffff800000080208ull, name, 0, &off));
}

static void test_by_name(void **state)
{
	uint64_t addr = 0, size = 0;

	(void)state;
	assert_true(ksym_find_name(tab, sizeof(tab) - 1, "kmain", &addr, &size));
	assert_int_equal(addr, 0xffff800000080100ull);
	assert_int_equal(size, 0x80); /* to the next symbol, a data one */
	assert_true(ksym_find_name(tab, sizeof(tab) - 1, "helper_with_a_long_name", &addr, &size));
	assert_int_equal(size, 0xfe00);
	/* data symbols and prefixes are not functions of that name */
	assert_false(ksym_find_name(tab, sizeof(tab) - 1, "a_table", &addr, &size));
	assert_false(ksym_find_name(tab, sizeof(tab) - 1, "kmai", &addr, &size));
	assert_false(ksym_find_name(tab, 30, "kmain", &addr, &size));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
