/* test_format.c - kernel/lib/format.c, the one formatting engine: kvsnprintf (printk, ksnprintf,
 * bpf/'s log and trace lines) and fmt_int / fmt_str (bpf_snprintf's conversions) against expected
 * strings, C's printf where they overlap. */
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

static void test_flags(void **state)
{
	(void)state;
	expect("+5 -5 +0| 5|-5", "%+d %+d %+d|% d|% d", 5, -5, 0, 5, -5);
	expect("+5 ", "%+-3d", 5);
	expect("-5   |-0005", "%-05d|%05d", -5, -5);
	expect("0x00001f|    0x1f|0x1f    ", "%#08x|%#8x|%-#8x", 31u, 31u, 31u);
	expect("0X001F", "%#06X", 31u);
	expect("    0x10|0x10", "%8p|%-p", (void *)16, (void *)16);
	expect("  -42|42", "%*d|%d", 5, -42, 42);
	expect("4294967295 -1", "%lu %hd", 4294967295ul, -1);
	expect("[0x1ff][  x]", "[%#lx][%3c]", 0x1fful, 'x');
	/* not conversions: copied as text, the arguments after them still line up */
	expect("%q 7", "%q %d", 7);
	expect("end%", "end%");
}

static void test_truncation(void **state)
{
	(void)state;
	char buf[5];

	assert_int_equal(ksnprintf(buf, sizeof(buf), "%s", "hello world"), 11);
	assert_string_equal(buf, "hell");
	assert_int_equal(ksnprintf(buf, 0, "abc"), 3);
}

/* One conversion through fmt_int / fmt_str as bpf/bprintf.c drives them (u64 arguments). */
static void expect_conv(const char *want, uint64_t v, struct fmt_spec sp)
{
	char buf[64];
	struct fmt_out o = { buf, sizeof(buf), 0 };

	if (sp.conv == 's')
		fmt_str(&o, (const char *)(uintptr_t)v, __builtin_strlen((const char *)(uintptr_t)v), &sp);
	else
		fmt_int(&o, v, &sp);
	assert_int_equal(fmt_end(&o), __builtin_strlen(want));
	assert_string_equal(buf, want);
}

static void test_engine(void **state)
{
	(void)state;
	/* size 4: the low 32 bits, sign-extended for d and i */
	expect_conv("-1", 0xffffffffull, (struct fmt_spec){ .conv = 'd', .size = 4 });
	expect_conv("4294967295", 0xffffffffull, (struct fmt_spec){ .conv = 'u', .size = 4 });
	expect_conv("1", 0x100000001ull, (struct fmt_spec){ .conv = 'u', .size = 4 });
	expect_conv("-1", UINT64_MAX, (struct fmt_spec){ .conv = 'i', .size = 8 });
	expect_conv("18446744073709551615", UINT64_MAX, (struct fmt_spec){ .conv = 'u', .size = 8 });
	/* bpf's %p: 16 hex digits; %pi4's byte: 3 digits; %pI6's group: 4 hex digits */
	expect_conv("00000000deadbeef", 0xdeadbeef, (struct fmt_spec){ .conv = 'x', .size = 8, .width = 16, .flags = FMT_ZERO });
	expect_conv("007", 7, (struct fmt_spec){ .conv = 'u', .size = 4, .width = 3, .flags = FMT_ZERO });
	expect_conv("0a0b", 0x0a0b, (struct fmt_spec){ .conv = 'x', .size = 4, .width = 4, .flags = FMT_ZERO });
	expect_conv("   +7", 7, (struct fmt_spec){ .conv = 'd', .size = 4, .width = 5, .flags = FMT_PLUS });
	expect_conv("+0007", 7, (struct fmt_spec){ .conv = 'd', .size = 4, .width = 5, .flags = FMT_PLUS | FMT_ZERO });
	expect_conv("7    ", 7, (struct fmt_spec){ .conv = 'd', .size = 4, .width = 5, .flags = FMT_LEFT | FMT_ZERO });
	expect_conv("  ab", (uintptr_t)"ab", (struct fmt_spec){ .conv = 's', .width = 4, .flags = FMT_ZERO });
	expect_conv("ab  ", (uintptr_t)"ab", (struct fmt_spec){ .conv = 's', .width = 4, .flags = FMT_LEFT });

	/* the length counts what did not fit; the buffer ends in a NUL */
	char small[4];
	struct fmt_out o = { small, sizeof(small), 0 };
	struct fmt_spec sp = { .conv = 'u', .size = 8 };

	fmt_int(&o, 123456, &sp);
	assert_int_equal(fmt_end(&o), 6);
	assert_string_equal(small, "123");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_truncation),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
