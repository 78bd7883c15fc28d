/* ktest.h - in-kernel self-tests: KTEST(name) { ... return ktest_fail("why"); or 0 } */
#pragma once

#include <kern/printk.h>

struct ktest {
	const char *name;
	int (*fn)(char *why, unsigned long why_len); /* 0 pass, 1 fail, 2 skip */
};

#define KTEST_PASS 0
#define KTEST_FAIL 1
#define KTEST_SKIP 2

#define KTEST(name)                                                                                \
	static int ktest_##name(char *why, unsigned long why_len);                                 \
	static const struct ktest ktest_desc_##name __attribute__((used, section(".ktests"))) = { \
		#name, ktest_##name                                                                \
	};                                                                                         \
	static int ktest_##name(char *why, unsigned long why_len)
