/*
 * test_perf_ring.c - perf/ring.c against a simulated user-space reader: user page contents,
 * mmap size rules, time conversion values Linux shows under QEMU, wrap, LOST records,
 * watermark and wakeup_events wakeups, overwrite mode, and a concurrent reader thread that
 * checks every record arrives intact and in order (or is accounted for by PERF_RECORD_LOST).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../perf/perf_internal.h"
#include "../fakes/ksvc_fake.h"

#define PG 4096u

static const struct perf_ring_writer W_PLAIN = {.sid = {.stream_id = 77}};
static const struct perf_ring_writer W_IDALL = {
    .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IP,
    .sample_id_all = true,
    .sid = {.pid = 5, .tid = 6, .time = 1234, .id = 70, .stream_id = 77},
};

/* A record of size bytes: header, then the fill byte; the reader checks it. */
static void make_rec(uint8_t *buf, size_t size, uint8_t fill)
{
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = 0, .size = size};

	memcpy(buf, &h, 8);
	memset(buf + 8, fill, size - 8);
}

/* The simulated reader: what perf's ring reader does (head acquire, copy, tail release). */
struct reader {
	uint8_t rec[65536];
	size_t nrec;
	uint64_t lost_total;
	unsigned int lost_records;
};

typedef void (*rec_fn)(struct reader *rd, const struct perf_event_header *h, const uint8_t *rec);

static size_t reader_drain(struct perf_ring *r, struct reader *rd, rec_fn fn)
{
	struct perf_event_mmap_page *up = r->user_page;
	uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = up->data_tail;
	uint64_t size = up->data_size;
	const uint8_t *data = (const uint8_t *)up + up->data_offset;
	size_t n = 0;

	/* the test's data pages are separate from the user page: read through ring->data */
	data = r->data;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & (size - 1);

		for (int i = 0; i < 8; i++)
			((uint8_t *)&h)[i] = data[(off + i) & (size - 1)];
		assert_true(h.size >= 8 && h.size % 8 == 0 && tail + h.size <= head);
		for (size_t i = 0; i < h.size; i++)
			rd->rec[i] = data[(off + i) & (size - 1)];
		if (h.type == PERF_RECORD_LOST) {
			uint64_t lost;

			memcpy(&lost, rd->rec + 16, 8);
			rd->lost_total += lost;
			rd->lost_records++;
		}
		if (fn)
			fn(rd, &h, rd->rec);
		tail += h.size;
		n++;
	}
	/* the full barrier before the tail store (Linux's D) */
	__atomic_store_n(&up->data_tail, tail, __ATOMIC_RELEASE);
	rd->nrec += n;
	return n;
}

static void test_mmap_sizes(void **state)
{
	assert_int_equal(perf_ring_pages_for_len(PG), 0);
	assert_int_equal(perf_ring_pages_for_len(2 * PG), 1);
	assert_int_equal(perf_ring_pages_for_len(3 * PG), 2);
	assert_int_equal(perf_ring_pages_for_len(4 * PG), -EINVAL);
	assert_int_equal(perf_ring_pages_for_len(129 * PG), 128); /* perf record: 528384 bytes */
	assert_int_equal(perf_ring_pages_for_len(528384), 128);
	assert_int_equal(perf_ring_pages_for_len(0), -EINVAL);
	assert_int_equal(perf_ring_pages_for_len(PG + 1), -EINVAL);
}

static void test_user_page(void **state)
{
	struct perf_ring *r;

	assert_int_equal(perf_ring_create(3, 0, false, &r), -EINVAL);
	assert_int_equal(perf_ring_create(4, 0, false, &r), 0);
	struct perf_event_mmap_page *up = r->user_page;

	assert_int_equal(up->version, 0);
	assert_int_equal(up->compat_version, 0);
	assert_int_equal(up->data_offset, PG);
	assert_int_equal(up->data_size, 4 * PG);
	assert_int_equal(up->size, offsetof(struct perf_event_mmap_page, __reserved));
	assert_int_equal(up->cap_bit0_is_deprecated, 1);
	assert_int_equal(up->cap_bit0, 0);
	assert_int_equal(up->data_head, 0);
	assert_int_equal(up->aux_offset, 0);
	assert_int_equal(up->aux_size, 0);
	assert_int_equal(r->watermark, 2 * PG);
	assert_int_equal(perf_ring_page_phys(r, 0), (uintptr_t)up);
	assert_int_equal(perf_ring_page_phys(r, 1), (uintptr_t)r->data);
	assert_int_equal(perf_ring_page_phys(r, 4), (uintptr_t)r->data + 3 * PG);
	assert_int_equal(perf_ring_page_phys(r, 5), 0);
	perf_ring_get(r);
	perf_ring_put(r);
	perf_ring_put(r);

	/* watermark capped at the buffer; ENOMEM unwinds */
	assert_int_equal(perf_ring_create(1, 100000, false, &r), 0);
	assert_int_equal(r->watermark, PG);
	perf_ring_put(r);
	ksvc_fake.fail_alloc_after = 2;
	assert_int_equal(perf_ring_create(1, 0, false, &r), -ENOMEM);
	ksvc_fake.fail_alloc_after = 1;
	assert_int_equal(perf_ring_create(1, 0, false, &r), -ENOMEM);
	ksvc_fake.fail_alloc_after = -1;
}

static void test_time_conv(void **state)
{
	struct perf_time_conv tc;

	/* QEMU's 62.5 MHz counter: Linux shows time_shift 21, time_mult 33554432 (16 ns/tick) */
	perf_time_conv_init(&tc, 62500000, 57, 1000, 5000000);
	assert_int_equal(tc.time_shift, 21);
	assert_int_equal(tc.time_mult, 33554432);
	assert_int_equal(tc.time_mask, 0x1ffffffffffffffull);
	assert_int_equal(tc.time_cycles, 1000);
	assert_int_equal(tc.time_zero, 5000000 - 16000);
	assert_int_equal(perf_time_conv_cyc_to_ns(&tc, 62500000), 1000000000);

	/* other frequencies: within 1 ppm, as sched_clock's own rounding */
	static const uint32_t freqs[] = {1000000000, 24000000, 19200000, 100000000, 50000000};
	for (size_t i = 0; i < ARRAY_SIZE(freqs); i++) {
		perf_time_conv_init(&tc, freqs[i], 56, 0, 0);
		uint64_t ns = perf_time_conv_cyc_to_ns(&tc, freqs[i]);

		assert_true(ns >= 999999000 && ns <= 1000001000);
		assert_true(tc.time_shift <= 31);
	}

	struct perf_ring *r;
	struct perf_userpage_event ev = {.index = 33,
					 .offset = -5,
					 .time_enabled = 10,
					 .time_running = 9,
					 .pmc_width = 64,
					 .cap_user_rdpmc = true};

	assert_int_equal(perf_ring_create(1, 0, false, &r), 0);
	perf_time_conv_init(&tc, 62500000, 57, 1000, 5000000);
	perf_ring_update_userpage(r, &ev, &tc, 7000000);
	struct perf_event_mmap_page *up = r->user_page;

	assert_int_equal(up->lock, 2);
	assert_int_equal(up->index, 33);
	assert_int_equal(up->offset, -5);
	assert_int_equal(up->time_enabled, 10);
	assert_int_equal(up->time_running, 9);
	assert_int_equal(up->pmc_width, 64);
	assert_int_equal(up->cap_user_rdpmc, 1);
	assert_int_equal(up->cap_user_time, 1);
	assert_int_equal(up->cap_user_time_zero, 1);
	assert_int_equal(up->cap_user_time_short, 1);
	assert_int_equal(up->time_shift, 21);
	assert_int_equal(up->time_mult, 33554432);
	assert_int_equal(up->time_mask, 0x1ffffffffffffffull);
	assert_int_equal(up->time_offset, (uint64_t)(tc.time_zero - 7000000));
	assert_int_equal(up->cap_bit0_is_deprecated, 1);
	ev.cap_user_rdpmc = false;
	perf_ring_update_userpage(r, &ev, NULL, 0);
	assert_int_equal(up->lock, 4);
	assert_int_equal(up->cap_user_rdpmc, 0);
	assert_int_equal(up->cap_user_time, 0);
	perf_ring_put(r);
}

static void check_fill(struct reader *rd, const struct perf_event_header *h, const uint8_t *rec)
{
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	for (size_t i = 9; i < h->size; i++)
		assert_int_equal(rec[i], rec[8]);
}

/* write_backward: records go down from 0; data_head is the newest record's (negative)
 * position, and reading forward from it gives the records newest first, wrapping. */
static void test_backward(void **state)
{
	struct perf_ring *r;
	uint8_t rec[PG];
	bool wake;

	(void)state;
	assert_int_equal(perf_ring_create(1, 0, true, &r), 0);
	r->backward = true;
	for (unsigned int i = 0; i < 3; i++) {
		make_rec(rec, 64, (uint8_t)(0x10 + i));
		assert_int_equal(perf_ring_write(r, rec, 64, &W_PLAIN, &wake), 0);
		assert_int_equal(r->user_page->data_head, (uint64_t)-(int64_t)(64 * (i + 1)));
	}
	uint64_t head = r->user_page->data_head;
	for (unsigned int i = 0; i < 3; i++) {
		const uint8_t *p = r->data + ((head + 64 * i) & (PG - 1));

		assert_int_equal(((const struct perf_event_header *)p)->size, 64);
		assert_int_equal(p[8], 0x12 - i); /* newest first */
	}
	/* overwrite: it keeps going round; the newest record is always at data_head */
	for (unsigned int i = 0; i < 100; i++) {
		make_rec(rec, 40, (uint8_t)i);
		assert_int_equal(perf_ring_write(r, rec, 40, &W_PLAIN, &wake), 0);
		assert_int_equal(r->data[(r->user_page->data_head + 8) & (PG - 1)], (uint8_t)i);
	}
	perf_ring_put(r);
	/* not overwrite: the room below head ends at data_tail */
	assert_int_equal(perf_ring_create(1, 0, false, &r), 0);
	r->backward = true;
	make_rec(rec, PG / 2, 1);
	assert_int_equal(perf_ring_write(r, rec, PG / 2, &W_PLAIN, &wake), 0);
	assert_int_equal(perf_ring_write(r, rec, PG / 2, &W_PLAIN, &wake), -ENOSPC);
	assert_int_equal(perf_ring_unread(r), PG / 2);
	perf_ring_put(r);
}

static void test_write_and_wrap(void **state)
{
	struct perf_ring *r;
	struct reader *rd = calloc(1, sizeof(*rd));
	uint8_t rec[PG];
	bool wake;

	assert_int_equal(perf_ring_create(1, 0, false, &r), 0);
	/* 7 x 560-byte records: the 8th wraps past the end of the page */
	for (unsigned int round = 0; round < 20; round++) {
		for (unsigned int i = 0; i < 3; i++) {
			size_t size = 8 * (1 + (round * 7 + i * 13) % 60);

			make_rec(rec, size, (uint8_t)(round * 3 + i));
			assert_int_equal(perf_ring_write(r, rec, size, &W_PLAIN, &wake), 0);
		}
		reader_drain(r, rd, check_fill);
	}
	assert_int_equal(rd->nrec, 60);
	assert_int_equal(rd->lost_records, 0);
	assert_true(r->user_page->data_head > PG); /* it did wrap */
	assert_int_equal(perf_ring_unread(r), 0);

	/* a record straddling the end: bytes land at the end and the start of the area */
	uint64_t head = r->head;
	uint64_t skip = PG - (head & (PG - 1)) - 16; /* leave 16 bytes before the end */

	if (skip < 8)
		skip += PG;
	make_rec(rec, skip, 1);
	assert_int_equal(perf_ring_write(r, rec, skip, &W_PLAIN, &wake), 0);
	reader_drain(r, rd, check_fill);
	make_rec(rec, 48, 0xee);
	assert_int_equal(perf_ring_write(r, rec, 48, &W_PLAIN, &wake), 0);
	assert_int_equal(r->data[PG - 16], PERF_RECORD_SAMPLE);
	assert_int_equal(r->data[0], 0xee);
	assert_int_equal(r->data[31], 0xee);
	reader_drain(r, rd, check_fill);
	perf_ring_put(r);
	free(rd);
}

static void test_bad_sizes_and_empty_ring(void **state)
{
	struct perf_ring *r;
	struct perf_ring_handle h;

	assert_int_equal(perf_ring_create(1, 0, false, &r), 0);
	assert_int_equal(perf_ring_output_begin(r, &h, 0, &W_PLAIN), -EINVAL);
	assert_int_equal(perf_ring_output_begin(r, &h, 12, &W_PLAIN), -EINVAL);
	assert_int_equal(perf_ring_output_begin(r, &h, 0x10000, &W_PLAIN), -EINVAL);
	assert_int_equal(r->lost, 0);
	perf_ring_put(r);

	/* user page only: nothing to write into, and Linux does not count it lost */
	assert_int_equal(perf_ring_create(0, 0, false, &r), 0);
	assert_int_equal(perf_ring_output_begin(r, &h, 16, &W_PLAIN), -ENOSPC);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->user_page->data_size, 0);
	perf_ring_put(r);
}

static void test_lost(void **state)
{
	struct perf_ring *r;
	struct reader *rd = calloc(1, sizeof(*rd));
	uint8_t rec[1024];
	bool wake;
	int n = 0;

	assert_int_equal(perf_ring_create(1, 0, false, &r), 0);
	make_rec(rec, 1024, 0x42);
	/* 1 page holds 3 records of 1024 (CIRC_SPACE keeps one slot free) */
	while (perf_ring_write(r, rec, 1024, &W_IDALL, &wake) == 0)
		n++;
	assert_int_equal(n, 3);
	assert_int_equal(perf_ring_write(r, rec, 1024, &W_IDALL, &wake), -ENOSPC);
	/* 1023 bytes are free: a small record would fit together with its LOST */
	assert_int_equal(perf_ring_write(r, rec, 1000, &W_IDALL, &wake), -ENOSPC);
	assert_int_equal(r->lost, 3);
	uint64_t head_before = r->user_page->data_head;

	/* the reader frees space: LOST {id 77, lost 3} + trailer comes before the next record */
	reader_drain(r, rd, NULL);
	make_rec(rec, 64, 0x43);
	assert_int_equal(perf_ring_write(r, rec, 64, &W_IDALL, &wake), 0);
	assert_int_equal(r->user_page->data_head, head_before + 40 + 64);
	assert_int_equal(r->lost, 0);

	uint64_t off = head_before & (PG - 1);
	struct perf_event_header *lh = (void *)(r->data + off);
	uint64_t *lv = (void *)(r->data + off + 8);
	uint32_t *lt = (void *)(r->data + off + 24);

	assert_int_equal(lh->type, PERF_RECORD_LOST);
	assert_int_equal(lh->misc, 0);
	assert_int_equal(lh->size, 40);
	assert_int_equal(lv[0], 77);
	assert_int_equal(lv[1], 3);
	assert_int_equal(lt[0], 5); /* trailer: pid, tid, time (TID, TIME; IP is not in it) */
	assert_int_equal(lt[1], 6);
	assert_int_equal(*(uint64_t *)(lt + 2), 1234);
	assert_int_equal(((struct perf_event_header *)(r->data + off + 40))->size, 64);
	reader_drain(r, rd, NULL);
	assert_int_equal(rd->lost_total, 3);

	/* when LOST + record do not fit, both wait and the count grows */
	make_rec(rec, 1024, 0x44);
	while (perf_ring_write(r, rec, 1024, &W_PLAIN, &wake) == 0)
		;
	assert_int_equal(r->lost, 1);
	/* free exactly one 1024 slot: the 1024 record + 24-byte LOST does not fit */
	struct perf_event_mmap_page *up = r->user_page;

	up->data_tail += 1024;
	uint64_t space = (up->data_tail - (r->head + 1)) & (PG - 1);

	if (space >= 1024 && space < 1024 + 24) {
		assert_int_equal(perf_ring_write(r, rec, 1024, &W_PLAIN, &wake), -ENOSPC);
		assert_int_equal(r->lost, 2);
	}
	/* a small record fits with its LOST */
	assert_int_equal(perf_ring_write(r, rec, 16, &W_PLAIN, &wake), 0);
	assert_int_equal(r->lost, 0);
	perf_ring_put(r);
	free(rd);
}

static void test_overwrite_mode(void **state)
{
	struct perf_ring *r;
	uint8_t rec[1024];
	bool wake;

	assert_int_equal(perf_ring_create(1, 0, true, &r), 0);
	make_rec(rec, 1024, 1);
	for (int i = 0; i < 10; i++)
		assert_int_equal(perf_ring_write(r, rec, 1024, &W_PLAIN, &wake), 0);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->user_page->data_head, 10240);
	perf_ring_put(r);
}

static void test_watermark(void **state)
{
	struct perf_ring *r;
	uint8_t rec[256];
	bool wake;
	int wakes = 0;

	/* default: half the buffer (4 pages -> 8192 bytes) */
	assert_int_equal(perf_ring_create(4, 0, false, &r), 0);
	make_rec(rec, 256, 1);
	for (int i = 1; i <= 40; i++) {
		assert_int_equal(perf_ring_write(r, rec, 256, &W_PLAIN, &wake), 0);
		if (wake) {
			wakes++;
			/* head passed the watermark: 8192 bytes is 32 records; > means the 33rd */
			assert_int_equal(i, 33);
		}
		r->user_page->data_tail = r->user_page->data_head;
	}
	assert_int_equal(wakes, 1);
	perf_ring_put(r);

	/* perf's side-band event: watermark=1, wakeup_watermark=1 wakes on every record */
	assert_int_equal(perf_ring_create(4, 1, false, &r), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(perf_ring_write(r, rec, 256, &W_PLAIN, &wake), 0);
		assert_true(wake);
	}
	perf_ring_put(r);

	/* wakeup_events = 3 (no attr.watermark): every third sample */
	assert_int_equal(perf_ring_create(4, 0, false, &r), 0);
	wakes = 0;
	for (int i = 1; i <= 9; i++) {
		struct perf_ring_handle h;

		assert_int_equal(perf_ring_output_begin(r, &h, 64, &W_PLAIN), 0);
		make_rec(rec, 64, 2);
		perf_out_put(&h.out, rec, 64);
		wake = perf_ring_output_end(&h, 3);
		assert_int_equal(wake, i % 3 == 0);
		wakes += wake;
	}
	assert_int_equal(wakes, 3);
	perf_ring_put(r);
}

/* ---- concurrent reader ---- */

#define NREC 200000

struct conc {
	struct perf_ring *r;
	_Atomic int done;
	uint64_t next_seq; /* reader: next sequence number expected */
	uint64_t seen, lost;
};

static struct conc *the_conc;

static void conc_rec(struct reader *rd, const struct perf_event_header *h, const uint8_t *rec)
{
	struct conc *c = the_conc;

	if (h->type == PERF_RECORD_LOST) {
		uint64_t lost;

		memcpy(&lost, rec + 16, 8);
		c->next_seq += lost; /* the dropped sequence numbers */
		c->lost += lost;
		return;
	}
	uint64_t seq;

	assert_int_equal(h->type, PERF_RECORD_SAMPLE);
	memcpy(&seq, rec + 8, 8);
	assert_int_equal(seq, c->next_seq);
	/* body: every byte after the seq is seq's low byte */
	for (size_t i = 16; i < h->size; i++)
		if (rec[i] != (uint8_t)seq)
			fail_msg("torn record %llu at byte %zu", (unsigned long long)seq, i);
	c->next_seq++;
	c->seen++;
}

static void *reader_thread(void *arg)
{
	struct conc *c = arg;
	struct reader *rd = calloc(1, sizeof(*rd));

	for (;;) {
		int done = atomic_load(&c->done);

		reader_drain(c->r, rd, conc_rec);
		if (done)
			break;
	}
	reader_drain(c->r, rd, conc_rec);
	free(rd);
	return NULL;
}

static void test_concurrent_reader(void **state)
{
	struct conc c = {0};
	pthread_t th;
	uint64_t ok = 0, dropped = 0;

	the_conc = &c;
	assert_int_equal(perf_ring_create(2, 0, false, &c.r), 0);
	for (uint64_t seq = 0; seq < NREC; seq++) {
		/* the reader starts late: the first attempts fill the ring and lose records */
		if (seq == 100)
			assert_int_equal(pthread_create(&th, NULL, reader_thread, &c), 0);
		size_t size = 16 + 8 * (seq % 37);
		struct perf_ring_handle h;
		struct perf_event_header hd = {.type = PERF_RECORD_SAMPLE, .size = size};

		if (perf_ring_output_begin(c.r, &h, size, &W_PLAIN)) {
			dropped++;
			/* let the reader catch up before the next try, so records cross both ways
			 */
			while (seq >= 100 && perf_ring_unread(c.r) > c.r->data_size / 2)
				sched_yield();
			continue;
		}
		perf_out_put(&h.out, &hd, 8);
		perf_out_u64(&h.out, seq);
		for (size_t i = 16; i < size; i += 8) {
			uint64_t v = 0x0101010101010101ull * (uint8_t)seq;

			perf_out_u64(&h.out, v);
		}
		perf_ring_output_end(&h, 0);
		ok++;
	}
	/* one more record so a pending LOST is delivered; sequence numbers count attempts */
	for (uint64_t seq = NREC;; seq++) {
		struct perf_ring_handle h;
		struct perf_event_header hd = {.type = PERF_RECORD_SAMPLE, .size = 16};

		if (perf_ring_output_begin(c.r, &h, 16, &W_PLAIN)) {
			dropped++;
			sched_yield();
			continue;
		}
		perf_out_put(&h.out, &hd, 8);
		perf_out_u64(&h.out, seq);
		perf_ring_output_end(&h, 0);
		ok++;
		break;
	}
	atomic_store(&c.done, 1);
	pthread_join(th, NULL);
	/* every attempt is either seen or reported lost */
	assert_int_equal(c.seen, ok);
	assert_int_equal(c.lost, dropped);
	/* both paths were exercised: records crossed over, and some were lost */
	assert_true(ok > NREC / 2);
	assert_true(dropped > 0);
	perf_ring_put(c.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mmap_sizes),
	    cmocka_unit_test(test_user_page),
	    cmocka_unit_test(test_time_conv),
	    cmocka_unit_test(test_backward),
	    cmocka_unit_test(test_write_and_wrap),
	    cmocka_unit_test(test_bad_sizes_and_empty_ring),
	    cmocka_unit_test(test_lost),
	    cmocka_unit_test(test_overwrite_mode),
	    cmocka_unit_test(test_watermark),
	    cmocka_unit_test(test_concurrent_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
