/*
 * test_perf_record.c - byte-for-byte tests of perf/record.c: PERF_RECORD_SAMPLE in Linux's
 * field order for each sample_type bit and combinations, read_format single/group forms,
 * the sample_id_all trailer, PERF_RECORD_LOST, and writing across a wrapping cursor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

/* Expected bytes, built field by field. */
struct exp {
	uint8_t b[4096];
	size_t n;
};

static void e64(struct exp *e, uint64_t v)
{
	memcpy(e->b + e->n, &v, 8);
	e->n += 8;
}

static void e32(struct exp *e, uint32_t v)
{
	memcpy(e->b + e->n, &v, 4);
	e->n += 4;
}

static void ehdr(struct exp *e, uint32_t type, uint16_t misc, uint16_t size)
{
	e32(e, type);
	memcpy(e->b + e->n, &misc, 2);
	memcpy(e->b + e->n + 2, &size, 2);
	e->n += 4;
}

static const struct perf_sample_id SID = {
    .pid = 0x11,
    .tid = 0x22,
    .time = 0x3333,
    .id = 0x44,
    .stream_id = 0x55,
    .cpu = 3,
};

/* Encode d under attr into a fresh buffer, check size == expected and bytes equal. */
static void check_sample(const struct perf_event_attr *attr, const struct perf_sample_data *d,
			 uint16_t misc, const struct exp *e)
{
	uint8_t buf[4096];
	struct perf_out o;
	size_t size = perf_sample_size(attr, d);

	assert_int_equal(size, e->n);
	assert_int_equal(size % 8, 0);
	memset(buf, 0xa5, sizeof(buf));
	perf_out_init(&o, buf, size);
	perf_sample_write(&o, attr, d, misc, size);
	assert_int_equal(o.left, 0);
	assert_memory_equal(buf, e->b, e->n);
}

static void test_sample_ip_tid_time(void **state)
{
	/* perf record -e cycles: IP|TID|TIME is 32 bytes (perf-abi-notes) */
	struct perf_event_attr attr = {.sample_type =
					   PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME};
	struct perf_sample_data d = {.sid = SID, .ip = 0x400123};
	struct exp e = {.n = 0};

	ehdr(&e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 32);
	e64(&e, 0x400123);
	e32(&e, 0x11);
	e32(&e, 0x22);
	e64(&e, 0x3333);
	check_sample(&attr, &d, perf_sample_misc(true, false), &e);
}

static void test_sample_fixed_fields_order(void **state)
{
	struct perf_event_attr attr = {
	    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	struct perf_sample_data d = {.sid = SID, .ip = 1, .addr = 2, .period = 100000};
	struct exp e = {.n = 0};

	ehdr(&e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP, 80);
	e64(&e, 0x44); /* IDENTIFIER first */
	e64(&e, 1);
	e32(&e, 0x11);
	e32(&e, 0x22);
	e64(&e, 0x3333);
	e64(&e, 2);
	e64(&e, 0x44);
	e64(&e, 0x55);
	e32(&e, 3);
	e32(&e, 0);
	e64(&e, 100000);
	check_sample(&attr, &d, perf_sample_misc(false, true), &e);
}

static void test_sample_read_single_and_group(void **state)
{
	struct perf_read_entry ent[3] = {{10, 1, 7}, {20, 2, 8}, {30, 3, 9}};
	struct perf_read_values rv = {
	    .time_enabled = 500, .time_running = 400, .nr = 1, .ent = ent};
	struct perf_event_attr attr = {
	    .sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD,
	    .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			   PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};
	struct perf_sample_data d = {.sid = SID, .period = 9, .read = &rv};
	struct exp e = {.n = 0};

	/* single: value, enabled, running, id, lost */
	ehdr(&e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 56);
	e64(&e, 9);
	e64(&e, 10);
	e64(&e, 500);
	e64(&e, 400);
	e64(&e, 1);
	e64(&e, 7);
	check_sample(&attr, &d, PERF_RECORD_MISC_USER, &e);

	/* group: nr, enabled, running, then {value,id,lost} per member, leader first */
	attr.read_format |= PERF_FORMAT_GROUP;
	rv.nr = 3;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 8 + 24 + 72);
	e64(&e, 9);
	e64(&e, 3);
	e64(&e, 500);
	e64(&e, 400);
	for (int i = 0; i < 3; i++) {
		e64(&e, ent[i].value);
		e64(&e, ent[i].id);
		e64(&e, ent[i].lost);
	}
	check_sample(&attr, &d, PERF_RECORD_MISC_USER, &e);
}

static void test_read_format_sizes(void **state)
{
	/* perf stat: TOTAL_TIME_ENABLED|RUNNING reads 24 bytes; perf record ID|LOST 24 */
	assert_int_equal(
	    perf_read_size(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING, 1), 24);
	assert_int_equal(perf_read_size(PERF_FORMAT_ID | PERF_FORMAT_LOST, 1), 24);
	assert_int_equal(perf_read_size(0, 1), 8);
	assert_int_equal(perf_read_size(PERF_FORMAT_GROUP, 2), 24);
	assert_int_equal(
	    perf_read_size(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_RUNNING, 2),
	    48);

	struct perf_read_entry ent = {.value = 77, .id = 5, .lost = 2};
	struct perf_read_values rv = {.time_enabled = 1, .time_running = 2, .nr = 1, .ent = &ent};
	uint64_t buf[3];
	struct perf_out o;

	perf_out_init(&o, buf, sizeof(buf));
	perf_read_write(&o, PERF_FORMAT_ID | PERF_FORMAT_LOST, &rv);
	assert_int_equal(buf[0], 77);
	assert_int_equal(buf[1], 5);
	assert_int_equal(buf[2], 2);
	perf_out_init(&o, buf, sizeof(buf));
	perf_read_write(&o, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING, &rv);
	assert_int_equal(buf[0], 77);
	assert_int_equal(buf[1], 1);
	assert_int_equal(buf[2], 2);
}

static void test_sample_callchain_raw(void **state)
{
	uint64_t cc[3] = {(uint64_t)PERF_CONTEXT_USER, 0x1000, 0x2000};
	uint8_t raw[5] = {1, 2, 3, 4, 5};
	struct perf_event_attr attr = {.sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW};
	struct perf_sample_data d = {.callchain = cc, .callchain_nr = 3, .raw = raw, .raw_size = 5};
	struct exp e = {.n = 0};

	/* raw: u32 size(=12: 5 data + 7 pad so u32+data is 16) + data + zero pad */
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 8 + 32 + 16);
	e64(&e, 3);
	e64(&e, cc[0]);
	e64(&e, cc[1]);
	e64(&e, cc[2]);
	e32(&e, 12);
	memcpy(e.b + e.n, raw, 5);
	memset(e.b + e.n + 5, 0, 7);
	e.n += 12;
	check_sample(&attr, &d, 2, &e);

	/* raw of 4 bytes: size 4, no pad */
	d.raw_size = 4;
	d.callchain_nr = 0;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 24);
	e64(&e, 0);
	e32(&e, 4);
	memcpy(e.b + e.n, raw, 4);
	e.n += 4;
	check_sample(&attr, &d, 2, &e);

	/* no raw data: Linux writes {size 4, u32 0} */
	d.raw = NULL;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 24);
	e64(&e, 0);
	e32(&e, 4);
	e32(&e, 0);
	check_sample(&attr, &d, 2, &e);
}

static void test_sample_branch_stack(void **state)
{
	struct perf_branch_entry br[2] = {{.from = 1, .to = 2}, {.from = 3, .to = 4}};
	struct perf_event_attr attr = {.sample_type = PERF_SAMPLE_BRANCH_STACK,
				       .branch_sample_type = PERF_SAMPLE_BRANCH_ANY};
	struct perf_sample_data d = {.branches = br, .branch_nr = 2, .branch_hw_idx = 9};
	struct exp e = {.n = 0};

	ehdr(&e, PERF_RECORD_SAMPLE, 2, 8 + 8 + 48);
	e64(&e, 2);
	memcpy(e.b + e.n, br, sizeof(br));
	e.n += sizeof(br);
	check_sample(&attr, &d, 2, &e);

	attr.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 8 + 16 + 48);
	e64(&e, 2);
	e64(&e, 9);
	memcpy(e.b + e.n, br, sizeof(br));
	e.n += sizeof(br);
	check_sample(&attr, &d, 2, &e);

	d.branches = NULL; /* no stack: nr = 0 only */
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 16);
	e64(&e, 0);
	check_sample(&attr, &d, 2, &e);
}

static void test_sample_regs_stack_user(void **state)
{
	uint64_t regs[PERF_REG_ARM64_MAX];
	uint8_t stack[24];
	struct perf_event_attr attr = {
	    .sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	    /* LR (bit 30, what perf -g asks), SP, PC, x0 */
	    .sample_regs_user = (1ull << 30) | (1ull << 31) | (1ull << 32) | 1,
	};

	for (int i = 0; i < PERF_REG_ARM64_MAX; i++)
		regs[i] = 0x100 + i;
	for (int i = 0; i < 24; i++)
		stack[i] = (uint8_t)i;

	struct perf_sample_data d = {.regs_user_abi = PERF_SAMPLE_REGS_ABI_64,
				     .regs_user = regs,
				     .stack_user_sp = (uintptr_t)stack,
				     .stack_user_size = 24};
	struct exp e = {.n = 0};

	ehdr(&e, PERF_RECORD_SAMPLE, 2, 8 + 40 + 8 + 24 + 8);
	e64(&e, PERF_SAMPLE_REGS_ABI_64);
	e64(&e, 0x100);
	e64(&e, 0x100 + 30);
	e64(&e, 0x100 + 31);
	e64(&e, 0x100 + 32);
	e64(&e, 24);
	memcpy(e.b + e.n, stack, 24);
	e.n += 24;
	e64(&e, 24); /* dyn_size */
	check_sample(&attr, &d, 2, &e);

	/* a faulting stack: size kept, zeros, dyn_size 0 */
	ksvc_fake.bad_user[0].start = (uintptr_t)stack;
	ksvc_fake.bad_user[0].len = sizeof(stack);
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 2, 8 + 40 + 8 + 24 + 8);
	e64(&e, PERF_SAMPLE_REGS_ABI_64);
	e64(&e, 0x100);
	e64(&e, 0x100 + 30);
	e64(&e, 0x100 + 31);
	e64(&e, 0x100 + 32);
	e64(&e, 24);
	memset(e.b + e.n, 0, 24);
	e.n += 24;
	e64(&e, 0);
	check_sample(&attr, &d, 2, &e);
	ksvc_fake.bad_user[0].len = 0;

	/* kernel thread: abi NONE, no regs; stack size 0 only */
	d.regs_user_abi = PERF_SAMPLE_REGS_ABI_NONE;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 1, 24);
	e64(&e, 0);
	e64(&e, 0);
	check_sample(&attr, &d, 1, &e);
}

static void test_sample_tail_fields(void **state)
{
	uint64_t iregs[PERF_REG_ARM64_MAX] = {[PERF_REG_ARM64_PC] = 0xffff000012345678ull};
	struct perf_event_attr attr = {
	    .sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
			   PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			   PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |
			   PERF_SAMPLE_AUX,
	    .sample_regs_intr = 1ull << PERF_REG_ARM64_PC,
	};
	struct perf_sample_data d = {.weight = 1,
				     .data_src = 2,
				     .transaction = 3,
				     .regs_intr_abi = PERF_SAMPLE_REGS_ABI_64,
				     .regs_intr = iregs,
				     .phys_addr = 4,
				     .cgroup = 5,
				     .data_page_size = 4096,
				     .code_page_size = 8192};
	struct exp e = {.n = 0};

	ehdr(&e, PERF_RECORD_SAMPLE, 1, 8 + 8 * 10);
	e64(&e, 1);
	e64(&e, 2);
	e64(&e, 3);
	e64(&e, PERF_SAMPLE_REGS_ABI_64);
	e64(&e, 0xffff000012345678ull);
	e64(&e, 4);
	e64(&e, 5);
	e64(&e, 4096);
	e64(&e, 8192);
	e64(&e, 0); /* aux_size */
	check_sample(&attr, &d, 1, &e);

	/* WEIGHT_STRUCT takes the same slot */
	attr.sample_type = PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_TIME;
	d.sid.time = 42;
	d.weight = 0x0003000200000001ull;
	e.n = 0;
	ehdr(&e, PERF_RECORD_SAMPLE, 1, 24);
	e64(&e, 42);
	e64(&e, 0x0003000200000001ull);
	check_sample(&attr, &d, 1, &e);
}

static void test_every_bit_consistent(void **state)
{
	/* every subset of the simple fixed-size bits: size formula == bytes written, 8-aligned */
	static const uint64_t bits[] = {
	    PERF_SAMPLE_IP,	    PERF_SAMPLE_TID, PERF_SAMPLE_TIME,	    PERF_SAMPLE_ADDR,
	    PERF_SAMPLE_ID,	    PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,    PERF_SAMPLE_STREAM_ID,
	    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_RAW, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_READ};
	uint64_t cc[2] = {1, 2};
	struct perf_read_entry ent = {1, 2, 3};
	struct perf_read_values rv = {.nr = 1, .ent = &ent};
	uint8_t raw[3] = {9, 9, 9};
	struct perf_sample_data d = {
	    .sid = SID, .callchain = cc, .callchain_nr = 2, .raw = raw, .raw_size = 3, .read = &rv};

	for (unsigned int m = 0; m < (1u << ARRAY_SIZE(bits)); m++) {
		struct perf_event_attr attr = {.read_format = PERF_FORMAT_ID};
		uint8_t buf[512];
		struct perf_out o;

		for (unsigned int i = 0; i < ARRAY_SIZE(bits); i++)
			if (m & (1u << i))
				attr.sample_type |= bits[i];
		size_t size = perf_sample_size(&attr, &d);

		assert_int_equal(size % 8, 0);
		perf_out_init(&o, buf, size);
		perf_sample_write(&o, &attr, &d, 2, perf_sample_size(&attr, &d));
		assert_int_equal(o.left, 0);
		struct perf_event_header *h = (void *)buf;
		assert_int_equal(h->size, size);
		assert_int_equal(h->type, PERF_RECORD_SAMPLE);
	}
}

static void test_trailer_and_lost(void **state)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID |
		      PERF_SAMPLE_ID | PERF_SAMPLE_TIME | PERF_SAMPLE_TID | PERF_SAMPLE_IP;
	uint8_t buf[128];
	struct perf_out o;
	struct exp e = {.n = 0};

	assert_int_equal(perf_id_trailer_size(st, false), 0);
	assert_int_equal(perf_id_trailer_size(st, true), 48);
	assert_int_equal(perf_id_trailer_size(PERF_SAMPLE_TID | PERF_SAMPLE_TIME, true), 16);

	/* LOST: {id, lost} + trailer in TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER order */
	ehdr(&e, PERF_RECORD_LOST, 0, 8 + 16 + 48);
	e64(&e, 0x55);
	e64(&e, 17);
	e32(&e, 0x11);
	e32(&e, 0x22);
	e64(&e, 0x3333);
	e64(&e, 0x44);
	e64(&e, 0x55);
	e32(&e, 3);
	e32(&e, 0);
	e64(&e, 0x44);
	assert_int_equal(perf_lost_size(st, true), e.n);
	perf_out_init(&o, buf, e.n);
	perf_lost_write(&o, 0x55, 17, st, true, &SID);
	assert_memory_equal(buf, e.b, e.n);

	/* without sample_id_all: 24 bytes */
	assert_int_equal(perf_lost_size(st, false), 24);
}

static void test_ustack_size(void **state)
{
	const uint64_t top = 1ull << 48; /* arm64 TASK_SIZE with 48-bit VAs */

	/* kernel thread: nothing */
	assert_int_equal(perf_sample_ustack_size(8192, 40, false, top - 0x10000, top), 0);
	/* room enough: as asked */
	assert_int_equal(perf_sample_ustack_size(8192, 40, true, top - 0x10000, top), 8192);
	/* 4 KiB below the top of user space: cut to 4096 */
	assert_int_equal(perf_sample_ustack_size(8192, 40, true, top - 4096, top), 4096);
	/* sp beyond the top: nothing to copy */
	assert_int_equal(perf_sample_ustack_size(8192, 40, true, top + 8, top), 0);
	/* the record would pass 64 KiB: what is left, 8-aligned; the whole sample is 0xfff8 */
	uint16_t s = perf_sample_ustack_size(65528, 1000, true, 0x1000, top);

	assert_int_equal(s, 65528 - 1016);
	assert_int_equal(1000 + 16 + s, 0xfff8);
	assert_int_equal(s % 8, 0);
}

static void test_out_wraps(void **state)
{
	/* a 32-byte area, cursor at 24: a 16-byte record wraps after 8 bytes */
	uint8_t area[32];
	struct perf_out o = {.base = area, .size = 32, .off = 24, .left = 16};
	struct perf_event_attr attr = {.sample_type = PERF_SAMPLE_IP};
	struct perf_sample_data d = {.ip = 0x0102030405060708ull};

	memset(area, 0, sizeof(area));
	perf_sample_write(&o, &attr, &d, 2, perf_sample_size(&attr, &d));
	assert_int_equal(o.off, 8);
	assert_int_equal(area[24], PERF_RECORD_SAMPLE);
	assert_int_equal(area[30], 16);
	assert_int_equal(area[0], 0x08);
	assert_int_equal(area[7], 0x01);
}

static void test_out_wraps_everywhere(void **state)
{
	/* the inline u64/u32 stores and the callchain's run of u64 against the byte-wise wrapping
	 * copy: a sample written from every 4-byte offset of a small area reads back (unrolled
	 * from that offset) as the same bytes as into a flat buffer */
	uint64_t cc[5] = {PERF_CONTEXT_USER, 0x401000, 0x401100, 0x401200, 0x401300};
	struct perf_read_entry ent = {7, 8, 9};
	struct perf_read_values rv = {.nr = 1, .ent = &ent, .time_enabled = 5, .time_running = 6};
	uint8_t raw[5] = {1, 2, 3, 4, 5};
	struct perf_sample_data d = {.sid = SID, .ip = 0x400123, .period = 4000, .read = &rv,
				     .callchain = cc, .callchain_nr = 5, .raw = raw, .raw_size = 5};
	struct perf_event_attr attr = {
	    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |
			   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW,
	    .read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED};
	size_t size = perf_sample_size(&attr, &d);
	uint8_t flat[256], area[160], unrolled[256];
	struct perf_out o;

	assert_true(size < sizeof(area));
	perf_out_init(&o, flat, size);
	perf_sample_write(&o, &attr, &d, 2, size);
	for (size_t off = 0; off < sizeof(area); off += 4) {
		memset(area, 0xee, sizeof(area));
		o = (struct perf_out){.base = area, .size = sizeof(area), .off = off, .left = size};
		perf_sample_write(&o, &attr, &d, 2, size);
		assert_int_equal(o.left, 0);
		assert_int_equal(o.off, (off + size) % sizeof(area));
		for (size_t i = 0; i < size; i++)
			unrolled[i] = area[(off + i) % sizeof(area)];
		assert_memory_equal(unrolled, flat, size);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample_ip_tid_time),
	    cmocka_unit_test(test_sample_fixed_fields_order),
	    cmocka_unit_test(test_sample_read_single_and_group),
	    cmocka_unit_test(test_read_format_sizes),
	    cmocka_unit_test(test_sample_callchain_raw),
	    cmocka_unit_test(test_sample_branch_stack),
	    cmocka_unit_test(test_sample_regs_stack_user),
	    cmocka_unit_test(test_sample_tail_fields),
	    cmocka_unit_test(test_every_bit_consistent),
	    cmocka_unit_test(test_trailer_and_lost),
	    cmocka_unit_test(test_ustack_size),
	    cmocka_unit_test(test_out_wraps_everywhere),
	    cmocka_unit_test(test_out_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
