/* test_format.c - kernel/lib/format.c (the printk formatter) against expected strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <kern/format.h>

static void expect(const char *want, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)__builtin_strlen(want));
}

static void test_numbers(void **state)
{
	(void)state;
	expect("42 -7 0", "%d %i %u", 42, -7, 0u);
	expect("ff FF 17", "%x %X %o", 255u, 255u, 15u);
	expect("00042|42   |   42", "%05d|%-5d|%5d", 42, 42, 42);
	expect("-0042", "%05d", -42);
	expect("18446744073709551615", "%lu", UINT64_MAX);
	expect("-9223372036854775808", "%ld", INT64_MIN);
	expect("0x1000", "%p", (void *)0x1000);
	expect("%", "%%");
	expect("0x1f 0 0X1F", "%#x %#x %#X", 31u, 0u, 31u);
}

static void test_strings(void **state)
{
	(void)state;
	expect("ab|  ab|ab  |(null)", "%s|%4s|%-4s|%s", "ab", "ab", "ab", (char *)0);
	expect("abc", "%.3s", "abcdef");
	expect("x", "%c", 'x');
}

static void test_truncation(void **state)
{
	(void)state;
	char buf[5];

	assert_int_equal(ksnprintf(buf, sizeof(buf), "%s", "hello world"), 11);
	assert_string_equal(buf, "hell");
	assert_int_equal(ksnprintf(buf, 0, "abc"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_truncation),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
