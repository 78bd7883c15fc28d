/* test_trace.c - trace/trace.c and the generated table trace/events_gen.c: lookups by id and
 * by syscall, the use counts that turn the hooks on, the common record header, and the table's
 * own consistency (sorted ids, fields inside the record, Linux's fixed ids). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <asm/unistd.h>
#include <kern/syscall.h>
#include <kern/trace.h>
#include "../fakes/ksvc_fake.h"

static bool no_getppid;

/* kernel/syscall.c's answer: every syscall exists, but getppid when no_getppid */
bool trace_syscall_exists(unsigned int nr)
{
	return !(no_getppid && nr == __NR_getppid);
}

static void test_table(void **state)
{
	(void)state;
	assert_true(trace_nr_events > 500);
	for (unsigned int i = 0; i < trace_nr_events; i++) {
		const struct trace_event *ev = &trace_events[i];

		if (i)
			assert_true(trace_events[i - 1].id < ev->id);
		assert_true(ev->id < TRACE_MAX_ID);
		for (unsigned int f = 0; f < ev->nr_fields; f++)
			assert_true(ev->fields[f].offset + ev->fields[f].size <= ev->size ||
				    !strncmp(ev->fields[f].decl, "__data_loc", 10));
	}
}

static void test_lookup(void **state)
{
	const struct trace_event *ev;

	(void)state;
	ev = trace_event_by_id(TRACE_ID_SCHED_SWITCH);
	assert_non_null(ev);
	assert_string_equal(ev->system, "sched");
	assert_string_equal(ev->name, "sched_switch");
	assert_int_equal(ev->size, 64);
	assert_int_equal(ev->nr_fields, 7);
	assert_string_equal(ev->fields[3].decl, "long prev_state");
	assert_int_equal(ev->fields[3].offset, 32);
	assert_string_equal(trace_event_by_id(TRACE_ID_RAW_SYS_ENTER)->name, "sys_enter");
	assert_string_equal(trace_event_by_id(TRACE_ID_SCHED_PROCESS_EXEC)->name,
			    "sched_process_exec");
	assert_string_equal(trace_event_by_id(TRACE_ID_SCHED_WAKEUP)->name, "sched_wakeup");
	assert_null(trace_event_by_id(0));
	assert_null(trace_event_by_id(TRACE_MAX_ID));
	assert_null(trace_event_by_id(~0ull));

	ev = trace_syscall_event(__NR_getpid, false);
	assert_non_null(ev);
	assert_string_equal(ev->name, "sys_enter_getpid");
	assert_int_equal(ev->id, 181);
	assert_int_equal(ev->size, 16);
	ev = trace_syscall_event(__NR_getpid, true);
	assert_string_equal(ev->name, "sys_exit_getpid");
	assert_int_equal(ev->size, 24);
	ev = trace_syscall_event(__NR_openat, false);
	assert_int_equal(ev->size, 16 + 4 * 8);
	assert_int_equal(trace_syscall_event(__NR_fadvise64, false)->sc_nr, __NR_fadvise64);
	assert_null(trace_syscall_event(NR_SYSCALLS, false));
	assert_null(trace_syscall_event(~0u, true));

	/* syscalls the kernel lacks have no events */
	ev = trace_syscall_event(__NR_getppid, false);
	assert_non_null(ev);
	no_getppid = true;
	assert_null(trace_syscall_event(__NR_getppid, false));
	assert_null(trace_event_by_id(ev->id));
	no_getppid = false;

	/* the fixed ids the irq and timer hooks name are those events */
	static const struct { unsigned int id; const char *sys, *name; uint16_t size; } fixed[] = {
		{ TRACE_ID_IRQ_HANDLER_ENTRY, "irq", "irq_handler_entry", 16 },
		{ TRACE_ID_IRQ_HANDLER_EXIT, "irq", "irq_handler_exit", 16 },
		{ TRACE_ID_HRTIMER_INIT, "timer", "hrtimer_init", 24 },
		{ TRACE_ID_HRTIMER_START, "timer", "hrtimer_start", 48 },
		{ TRACE_ID_HRTIMER_CANCEL, "timer", "hrtimer_cancel", 16 },
		{ TRACE_ID_HRTIMER_EXPIRE_ENTRY, "timer", "hrtimer_expire_entry", 32 },
		{ TRACE_ID_HRTIMER_EXPIRE_EXIT, "timer", "hrtimer_expire_exit", 16 },
	};
	for (unsigned int i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		ev = trace_event_by_id(fixed[i].id);
		assert_non_null(ev);
		assert_string_equal(ev->system, fixed[i].sys);
		assert_string_equal(ev->name, fixed[i].name);
		assert_int_equal(ev->size, fixed[i].size);
	}
}

static void test_use(void **state)
{
	(void)state;
	assert_false(trace_enabled(TRACE_ID_SCHED_SWITCH));
	trace_use(TRACE_ID_SCHED_SWITCH, 1);
	trace_use(TRACE_ID_SCHED_SWITCH, 1);
	assert_true(trace_enabled(TRACE_ID_SCHED_SWITCH));
	assert_int_equal(atomic_load(&trace_syscalls_on), 0);
	trace_use(TRACE_ID_SCHED_SWITCH, -1);
	trace_use(TRACE_ID_SCHED_SWITCH, -1);
	assert_false(trace_enabled(TRACE_ID_SCHED_SWITCH));
	/* syscall events, raw and per syscall, share the dispatcher's one switch */
	trace_use(181, 1);
	trace_use(TRACE_ID_RAW_SYS_EXIT, 1);
	assert_int_equal(atomic_load(&trace_syscalls_on), 2);
	trace_use(181, -1);
	trace_use(TRACE_ID_RAW_SYS_EXIT, -1);
	assert_int_equal(atomic_load(&trace_syscalls_on), 0);
	trace_use(0, 1); /* no such event: ignored */
	trace_use(~0ull, 1);
	assert_int_equal(atomic_load(&trace_on[0]), 0);
}

static void test_common(void **state)
{
	uint8_t rec[8];
	uint16_t type;
	int32_t pid;

	(void)state;
	ksvc_fake.tid = 4242;
	trace_common(rec, 264, true);
	memcpy(&type, rec, 2);
	memcpy(&pid, rec + 4, 4);
	assert_int_equal(type, 264);
	assert_int_equal(rec[2], 1);
	assert_int_equal(rec[3], 0);
	assert_int_equal(pid, 4242);
	trace_common(rec, 181, false);
	assert_int_equal(rec[2], 0);
	/* in an interrupt handler: TRACE_FLAG_HARDIRQ beside TRACE_FLAG_IRQS_OFF */
	ksvc_fake.in_irq = true;
	trace_common(rec, TRACE_ID_IRQ_HANDLER_ENTRY, true);
	ksvc_fake.in_irq = false;
	assert_int_equal(rec[2], 0x09);
	trace_common(rec, TRACE_ID_IRQ_HANDLER_ENTRY, true);
	assert_int_equal(rec[2], 0x01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_use),
		cmocka_unit_test(test_common),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
