/* test_trace_filter.c - trace/filter.c: the filter language's parse errors (errno, code and
 * position, as Linux 6.1 gave them for sched:sched_switch under refvm), the filter file's
 * error text, and matching records: integers of each size and signedness, &&/||/!/parentheses,
 * the generic cpu and comm fields, char[16] and __data_loc strings with == != and ~ globs, char *
 * fields and FIELD.ustring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <kern/errno.h>
#include <kern/trace.h>
#include "../fakes/ksvc_fake.h"

bool trace_syscall_exists(unsigned int nr)
{
	(void)nr;
	return true;
}

static const struct trace_event *event(const char *sys, const char *name)
{
	for (unsigned int i = 0; i < trace_nr_events; i++)
		if (!strcmp(trace_events[i].system, sys) && !strcmp(trace_events[i].name, name))
			return &trace_events[i];
	fail_msg("no %s:%s", sys, name);
	return NULL;
}

static int parse_ev(const struct trace_event *ev, const char *s, struct trace_filter **f,
		    struct trace_filter_err *e)
{
	return trace_filter_parse(ev->fields, ev->nr_fields, s, f, e);
}

/* sched_switch: the errno, the error and its position Linux 6.1 reported */
static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int err, code, pos;
	} t[] = {
		{ "prev_comm == bash", -EINVAL, TRACE_FILT_INVALID_VALUE, 14 },
		{ "prev_comm < \"a\"", -EINVAL, TRACE_FILT_ILLEGAL_FIELD_OP, 13 },
		{ "prev_pid == \"1\"", -EINVAL, TRACE_FILT_EXPECT_DIGIT, 13 },
		{ "prev_comm == 1", -EINVAL, TRACE_FILT_EXPECT_STRING, 14 },
		{ "COMM == sh", -EINVAL, TRACE_FILT_INVALID_VALUE, 9 },
		{ "nosuch == 1", -EINVAL, TRACE_FILT_FIELD_NOT_FOUND, 7 },
		{ " (nosuch == 1)", -EINVAL, TRACE_FILT_FIELD_NOT_FOUND, 9 },
		{ "prev_pid = 1", -EINVAL, TRACE_FILT_INVALID_OP, 10 },
		{ "prev_pid", -EINVAL, TRACE_FILT_INVALID_OP, 9 },
		{ "prev_pid == 1 &&", -EINVAL, TRACE_FILT_INVALID_FILTER, 16 },
		{ "prev_pid == 1 && !", -EINVAL, TRACE_FILT_INVALID_FILTER, 18 },
		{ "(prev_pid == 1", -ENOENT, TRACE_FILT_TOO_MANY_OPEN, 0 },
		{ "prev_pid == 1)", -EPERM, TRACE_FILT_TOO_MANY_CLOSE, 13 },
		{ "prev_pid == 1)(", -EPERM, TRACE_FILT_TOO_MANY_CLOSE, 13 },
		{ "prev_pid == 1a", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 13 },
		{ "prev_pid == 0x", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 13 },
		{ "prev_pid == 08", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 13 },
		{ "prev_pid == 18446744073709551615", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 13 },
		{ "prev_pid == 123456789012345678901234", -EINVAL, TRACE_FILT_OPERAND_TOO_LONG, 37 },
		{ "prev_pid == 1 & next_pid == 2", -EPERM, TRACE_FILT_TOO_MANY_PREDS, 14 },
		{ "prev_pid >= 1 junk", -EPERM, TRACE_FILT_TOO_MANY_PREDS, 14 },
		{ "prev_pid == 1 ()", -EPERM, TRACE_FILT_TOO_MANY_PREDS, 14 },
		{ "prev_pid == 1 !", -EPERM, TRACE_FILT_TOO_MANY_PREDS, 14 },
		{ "prev_comm == \"abc", -ESRCH, TRACE_FILT_MISSING_QUOTE, 13 },
		{ "prev_pid == +1", -EINVAL, TRACE_FILT_INVALID_VALUE, 13 },
		{ "prev_pid == -", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 13 },
		{ "prev_pid ~ 1", -EINVAL, TRACE_FILT_ILLEGAL_FIELD_OP, 12 },
		{ "prev_pid == 1 || || next_pid == 2", -EPERM, TRACE_FILT_NONE, 0 },
		{ "&& prev_pid == 1", -EPERM, TRACE_FILT_NONE, 0 },
		{ "(prev_pid == 1 &&)", -EPERM, TRACE_FILT_NONE, 0 },
		{ "1 == prev_pid", -EINVAL, TRACE_FILT_FIELD_NOT_FOUND, 2 },
		{ "0", -EINVAL, TRACE_FILT_FIELD_NOT_FOUND, 2 },
		{ "!", -EINVAL, TRACE_FILT_NO_FILTER, 1 },
		{ "!!", -EINVAL, TRACE_FILT_NO_FILTER, 2 },
		{ "()", -EINVAL, TRACE_FILT_NONE, 0 },
		{ "", -EINVAL, TRACE_FILT_NONE, 0 },
		{ "   ", -EINVAL, TRACE_FILT_NONE, 0 },
		{ "prev_state > 18446744073709551615", -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, 14 },
	};
	const struct trace_event *ev = event("sched", "sched_switch");

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct trace_filter *f = (struct trace_filter *)1;
		struct trace_filter_err e;
		int r = parse_ev(ev, t[i].s, &f, &e);

		if (r != t[i].err || e.code != t[i].code || (t[i].code && e.pos != t[i].pos))
			fail_msg("[%s]: %d code %d pos %d, want %d code %d pos %d", t[i].s, r,
				 e.code, e.pos, t[i].err, t[i].code, t[i].pos);
		assert_null(f);
	}
}

static void test_err_text(void **state)
{
	(void)state;
	const struct trace_event *ev = event("sched", "sched_switch");
	static const struct {
		const char *s, *text;
	} t[] = {
		{ "prev_comm == bash",
		  "prev_comm == bash\n              ^\nparse_error: Invalid value (did you forget quotes)?\n" },
		{ "(prev_pid == 1", "(prev_pid == 1\n^\nparse_error: Too many '('\n" },
		{ "prev_pid", "prev_pid\n        ^\nparse_error: Invalid operator\n" },
		{ "()", "()\nError: (0)\n" },
		{ "!", "!\n ^\nparse_error: No filter found\n" },
		{ "prev_pid == 1 &&", "prev_pid == 1 &&\n                ^\nparse_error: Meaningless filter expression\n" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct trace_filter *f;
		struct trace_filter_err e;
		char buf[512];

		assert_true(parse_ev(ev, t[i].s, &f, &e) < 0);
		assert_int_equal(trace_filter_err_text(buf, sizeof(buf), t[i].s, &e), strlen(t[i].text));
		assert_string_equal(buf, t[i].text);
	}
	/* a small buffer: cut, terminated, the full length returned */
	struct trace_filter *f;
	struct trace_filter_err e;
	char small[8];

	assert_true(parse_ev(ev, "prev_pid", &f, &e) < 0);
	assert_int_equal(trace_filter_err_text(small, sizeof(small), "prev_pid", &e), 49);
	assert_string_equal(small, "prev_pi");
}

/* a sched_switch record: prev_comm[16]@8 prev_pid@24 prev_prio@28 prev_state(long)@32
 * next_comm[16]@40 next_pid@56 next_prio@60 */
static void switch_rec(uint8_t *rec, const char *prev, int prev_pid, int64_t state, int next_pid)
{
	int32_t v;

	memset(rec, 0, 64);
	strncpy((char *)rec + 8, prev, 16);
	memcpy(rec + 24, &prev_pid, 4);
	v = 120;
	memcpy(rec + 28, &v, 4);
	memcpy(rec + 32, &state, 8);
	strcpy((char *)rec + 40, "next");
	memcpy(rec + 56, &next_pid, 4);
	v = 120;
	memcpy(rec + 60, &v, 4);
	v = 77;
	memcpy(rec + 4, &v, 4); /* common_pid */
}

static int match(const char *s, const uint8_t *rec, const char *comm, unsigned int cpu)
{
	struct trace_filter *f;
	struct trace_filter_err e;
	int r = parse_ev(event("sched", "sched_switch"), s, &f, &e);
	char c[16] = { 0 };

	if (r)
		fail_msg("[%s]: %d", s, r);
	strncpy(c, comm, 15);
	r = trace_filter_match(f, rec, 64, c, cpu);
	trace_filter_free(f);
	return r;
}

static void test_match_ints(void **state)
{
	(void)state;
	uint8_t rec[64];

	switch_rec(rec, "bash", 42, -1, 7);
	assert_true(match("prev_pid == 42", rec, "x", 0));
	assert_false(match("prev_pid != 42", rec, "x", 0));
	assert_true(match("prev_pid==42&&next_pid!=8", rec, "x", 0));
	assert_true(match("prev_pid < 43 && prev_pid <= 42 && prev_pid > 41 && prev_pid >= 42", rec, "x", 0));
	assert_false(match("prev_pid < 42", rec, "x", 0));
	assert_true(match("prev_pid & 2", rec, "x", 0));
	assert_false(match("prev_pid & 1", rec, "x", 0));
	assert_true(match("prev_pid == 0x2a", rec, "x", 0));
	assert_true(match("prev_pid == 052", rec, "x", 0));
	/* signed long: -1 is less than 0 */
	assert_true(match("prev_state < 0", rec, "x", 0));
	assert_true(match("prev_state == -1", rec, "x", 0));
	assert_true(match("common_pid == 77", rec, "x", 0));
	/* precedence and inversion */
	assert_true(match("prev_pid == 1 || next_pid == 7 && prev_prio == 120", rec, "x", 0));
	assert_false(match("(prev_pid == 1 || next_pid == 7) && prev_prio == 121", rec, "x", 0));
	assert_true(match("prev_pid == 1 || next_pid == 8 || prev_prio == 120", rec, "x", 0));
	assert_false(match("!(prev_pid == 42)", rec, "x", 0));
	assert_true(match("!(prev_pid == 1 && next_pid == 7)", rec, "x", 0));
	assert_false(match("!(!(prev_pid == 1) && next_pid == 7)", rec, "x", 0));
	assert_true(match("! ! prev_pid == 42", rec, "x", 0));
	assert_true(match("!prev_pid == 1 && (next_pid == 7 || (prev_prio != 3))", rec, "x", 0));
	assert_true(match("((((prev_pid == 42))))", rec, "x", 0));
	assert_false(match("prev_pid == 42 && !(next_pid == 7 || prev_pid == 1)", rec, "x", 0));
	/* cpu */
	assert_true(match("cpu == 3", rec, "x", 3));
	assert_false(match("CPU < 3", rec, "x", 3));
	assert_false(match("cpu & 3", rec, "x", 3));
}

static void test_match_strings(void **state)
{
	(void)state;
	uint8_t rec[64];

	switch_rec(rec, "bash", 42, 0, 7);
	assert_true(match("prev_comm == \"bash\"", rec, "x", 0));
	assert_true(match("prev_comm == 'bash'", rec, "x", 0));
	assert_false(match("prev_comm == \"bas\"", rec, "x", 0));
	assert_false(match("prev_comm == \"ba*\"", rec, "x", 0)); /* no glob with == */
	assert_true(match("prev_comm != \"ba*\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"ba*\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"*as*\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"*\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"b?sh\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"[a-c]a*h\"", rec, "x", 0));
	assert_false(match("prev_comm ~ \"[!b]ash\"", rec, "x", 0));
	assert_true(match("prev_comm ~ \"!zsh\"", rec, "x", 0));
	assert_false(match("prev_comm ~ \"!bash\"", rec, "x", 0));
	/* "*x" compares the end of the whole 16-byte field, as regex_match_end does */
	assert_false(match("prev_comm ~ \"*sh\"", rec, "x", 0));
	switch_rec(rec, "abcdefghijklmno", 42, 0, 7);
	assert_true(match("prev_comm ~ \"*mno\"", rec, "x", 0));
	/* comm: the current task's */
	assert_true(match("comm == \"t_tp\"", rec, "t_tp", 0));
	assert_true(match("COMM ~ \"t_*\"", rec, "t_tp", 0));
	assert_false(match("comm != \"t_tp\"", rec, "t_tp", 0));
}

/* sched_process_exec: __data_loc char[] filename */
static void test_match_data_loc(void **state)
{
	(void)state;
	const struct trace_event *ev = event("sched", "sched_process_exec");
	uint8_t rec[64];
	uint32_t loc = (8u << 16) | 20;
	struct trace_filter *f;
	struct trace_filter_err e;
	char comm[16] = "x";

	memset(rec, 0, sizeof(rec));
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 20, "/bin/sh", 8);
	assert_int_equal(parse_ev(ev, "filename == \"/bin/sh\"", &f, &e), 0);
	assert_true(trace_filter_match(f, rec, 28, comm, 0));
	trace_filter_free(f);
	assert_int_equal(parse_ev(ev, "filename ~ \"*sh\"", &f, &e), 0);
	assert_true(trace_filter_match(f, rec, 28, comm, 0));
	/* a location outside the record never matches */
	assert_false(trace_filter_match(f, rec, 24, comm, 0));
	trace_filter_free(f);
	assert_int_equal(parse_ev(ev, "filename ~ \"/usr/*\"", &f, &e), 0);
	assert_false(trace_filter_match(f, rec, 28, comm, 0));
	trace_filter_free(f);
	/* an empty location (length 0): "" for ==, !=, "x*" and globs; "*x" never matches */
	loc = 20;
	memcpy(rec + 8, &loc, 4);
	assert_int_equal(parse_ev(ev, "filename == \"\" && filename != \"x\"", &f, &e), 0);
	assert_true(trace_filter_match(f, rec, 28, comm, 0));
	trace_filter_free(f);
	assert_int_equal(parse_ev(ev, "filename ~ \"*\" || filename ~ \"x*\" || filename ~ \"?\"", &f, &e), 0);
	assert_false(trace_filter_match(f, rec, 28, comm, 0));
	trace_filter_free(f);
}

/* Parse s for ev (it must parse), match rec (size bytes) with comm "x", free: the answer. */
static bool parse_match(const struct trace_event *ev, const char *s, const uint8_t *rec,
			uint32_t size)
{
	struct trace_filter *f;
	struct trace_filter_err e;
	char comm[16] = "x";

	assert_int_equal(parse_ev(ev, s, &f, &e), 0);
	bool m = trace_filter_match(f, rec, size, comm, 0);

	trace_filter_free(f);
	return m;
}

/* char * fields (syscalls:sys_enter_openat's filename): FIELD.ustring compares the user string
 * at the pointer; FIELD the kernel one, and an unreadable pointer never matches, even != */
static void test_match_pointer(void **state)
{
	(void)state;
	const struct trace_event *ev = event("syscalls", "sys_enter_openat");
	static const char path[] = "/etc/passwd";
	uint64_t ptr = (uintptr_t)path;
	uint8_t rec[48];
	struct trace_filter *f;
	struct trace_filter_err e;

	memset(rec, 0, sizeof(rec));
	memcpy(rec + 24, &ptr, 8); /* filename: offset 24 */
	assert_true(parse_match(ev, "filename.ustring == \"/etc/passwd\"", rec, 48));
	assert_true(parse_match(ev, "filename.ustring ~ \"*pass*\" && filename.ustring != \"x\"", rec, 48));
	assert_false(parse_match(ev, "filename.ustring ~ \"/usr/*\"", rec, 48));
	/* the pointer field past the record: no match */
	assert_false(parse_match(ev, "filename.ustring == \"/etc/passwd\"", rec, 28));
	/* an unreadable pointer: no match for ==, != or ~ */
	ptr = 0;
	memcpy(rec + 24, &ptr, 8);
	assert_false(parse_match(ev, "filename.ustring != \"x\" || filename != \"x\" || filename ~ \"*\"", rec, 48));
	/* ".ustring" after another field is that field; a number for a string is EXPECT_STRING */
	assert_int_equal(parse_ev(ev, "dfd.ustring == 3", &f, &e), 0);
	trace_filter_free(f);
	assert_int_equal(parse_ev(ev, "filename.ustring == 3", &f, &e), -EINVAL);
	assert_int_equal(e.code, TRACE_FILT_EXPECT_STRING);
	assert_int_equal(parse_ev(ev, "filename.ustringx == \"x\"", &f, &e), -EINVAL);
	assert_int_equal(e.code, TRACE_FILT_INVALID_OP);
	assert_int_equal(e.pos, 17);
}

/* many predicates: the walk is linear and forward */
static void test_long(void **state)
{
	(void)state;
	static char s[4096];
	uint8_t rec[64];
	size_t n = 0;

	switch_rec(rec, "bash", 42, 0, 7);
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%sprev_pid == %d", i ? " || " : "", 1000 + i);
	snprintf(s + n, sizeof(s) - n, " || (next_pid == 7 && prev_pid == 42)");
	assert_true(match(s, rec, "x", 0));
	n = 0;
	for (int i = 0; i < 150; i++)
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%s(prev_pid != %d", i ? " && " : "", i + 100);
	for (int i = 0; i < 150; i++)
		s[n++] = ')';
	s[n] = 0;
	assert_true(match(s, rec, "x", 0));
}

/* out of memory at each allocation in turn: ENOMEM, nothing half made */
static void test_nomem(void **state)
{
	(void)state;
	const struct trace_event *ev = event("sched", "sched_switch");
	struct trace_filter *f;
	struct trace_filter_err e;
	int r;

	for (int n = 0; n < 12; n++) {
		ksvc_fake.fail_alloc_after = n;
		r = parse_ev(ev, "prev_comm ~ \"b*\" || prev_pid == 1", &f, &e);
		ksvc_fake.fail_alloc_after = -1;
		if (!r) {
			trace_filter_free(f);
			assert_true(n >= 6);
			return;
		}
		assert_int_equal(r, -ENOMEM);
		assert_null(f);
	}
	fail();
}

/* random strings of the language's pieces: never a crash or a read outside the record (ASan),
 * every error one of Linux's errnos, every accepted filter matchable */
static void test_random(void **state)
{
	(void)state;
	static const char *const piece[] = {
		"prev_pid", "prev_comm", "comm", "cpu", "common_pid", "prev_state", "next_comm",
		"nosuch", "==", "!=", "<", "<=", ">", ">=", "&", "~", "&&", "||", "!", "(", ")",
		" ", "1", "-1", "0x10", "077", "\"ba*\"", "\"*sh\"", "\"[a-\"", "'x'", "\"",
		"\"?\\\\*\"", "&|", "9999999999999999999999",
	};
	const struct trace_event *ev = event("sched", "sched_switch");
	uint32_t seed = 12345;
	uint8_t rec[64];
	char s[256], c[16] = "bash";
	int accepted = 0;

	switch_rec(rec, "bash", 42, 1, 7);
	for (int n = 0; n < 20000; n++) {
		size_t len = 0;
		int k = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 9;

		s[0] = 0;
		if (n & 1) { /* a well-formed filter, one character changed in a third of them */
			static const char *const num[] = { "prev_pid", "common_pid", "cpu", "prev_state" };
			static const char *const nop[] = { "==", "!=", "<", "<=", ">", ">=", "&" };
			static const char *const str[] = { "prev_comm", "comm", "next_comm" };
			static const char *const sop[] = { "==", "!=", "~" };
			static const char *const val[] = { "\"bash\"", "\"b*\"", "\"*a*\"", "\"?ash\"", "\"[ab]*\"" };
			int open = 0;

			for (int i = 0; i <= k % 5; i++) {
				uint32_t r = (seed = seed * 1103515245u + 12345u) >> 8;

				len += (size_t)snprintf(s + len, sizeof(s) - len, "%s%s%s", i ? (r & 1 ? " && " : " || ") : "",
							r & 2 ? "!" : "", r & 4 ? "(" : "");
				open += (r & 4) != 0;
				if (r & 8)
					len += (size_t)snprintf(s + len, sizeof(s) - len, "%s %s %d", num[(r >> 4) % 4],
								nop[(r >> 6) % 7], (int)(r >> 9) % 200 - 50);
				else
					len += (size_t)snprintf(s + len, sizeof(s) - len, "%s %s %s", str[(r >> 4) % 3],
								sop[(r >> 6) % 3], val[(r >> 9) % 5]);
			}
			while (open--)
				len += (size_t)snprintf(s + len, sizeof(s) - len, ")");
			if (k < 3 && len)
				s[((seed = seed * 1103515245u + 12345u) >> 16) % len] = "()!&|\"x1 "[k * 3 % 10];
			k = -1;
		}
		for (int i = 0; i <= k; i++) {
			const char *p = piece[((seed = seed * 1103515245u + 12345u) >> 16) %
					      (sizeof(piece) / sizeof(piece[0]))];

			if (len + strlen(p) + 2 >= sizeof(s))
				break;
			len += (size_t)snprintf(s + len, sizeof(s) - len, "%s ", p);
		}
		struct trace_filter *f;
		struct trace_filter_err e;
		int r = parse_ev(ev, s, &f, &e);

		if (r == 0) {
			accepted++;
			(void)trace_filter_match(f, rec, 64, c, 1);
			(void)trace_filter_match(f, rec, 16, c, 1); /* a short record: fields outside fail */
			trace_filter_free(f);
		} else if (r != -EINVAL && r != -EPERM && r != -ENOENT && r != -ESRCH) {
			fail_msg("[%s]: %d", s, r);
		}
	}
	if (accepted < 5000)
		fail_msg("only %d of 20000 accepted", accepted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),	      cmocka_unit_test(test_err_text),
		cmocka_unit_test(test_match_ints),    cmocka_unit_test(test_match_strings),
		cmocka_unit_test(test_match_data_loc), cmocka_unit_test(test_match_pointer),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_nomem), cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
