/*
 * ring.c - the perf mmap ring buffer: the user page (struct perf_event_mmap_page) and the
 * writer side of the data area.
 *
 * ABI: Linux 6.1 kernel/events/ring_buffer.c (__perf_output_begin, perf_output_put_handle,
 * ring_buffer_init) and core.c (perf_mmap size rules, perf_event_init_userpage,
 * perf_event_update_userpage), arm64 arch_perf_update_userpage for the time_* fields.
 * The mapping is 1 + 2^n pages: page 0 the user page, data at data_offset = one page.
 * User space reads data_head, then records, then stores data_tail; we never overwrite bytes
 * between data_tail and data_head unless the mapping is read-only (overwrite mode).
 *
 * Writers: output_begin reserves space (with PERF_RECORD_LOST first when records were dropped
 * and both fit) under ring->lock with IRQs masked; the caller writes through the handle's
 * cursor; output_end publishes data_head with a release store and tells whether readers must
 * be woken (wakeup_events / watermark), which the caller defers: nothing here sleeps,
 * allocates (except create) or wakes.
 *
 * Backward rings (attr.write_backward, __perf_output_begin's backward case): head runs down
 * from 0, each record goes below the previous one, and data_head is published as that
 * (negative) position, so a reader walks forward from data_head to the newest-first records.
 *
 * Does not: map pages into user space, poll/wait queues, AUX areas (aux_* stay 0), or
 * per-event accounting beyond returning -ENOSPC.
 */
#include <kern/assert.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>

#include "perf_internal.h"

#define PAGE KSVC_PAGE_SIZE

long perf_ring_pages_for_len(uint64_t len)
{
	uint64_t nr;

	if (len < PAGE || (len % PAGE))
		return -EINVAL;
	nr = len / PAGE - 1;
	/* data pages: none, or a power of two */
	if (nr != 0 && (nr & (nr - 1)))
		return -EINVAL;
	if (nr > (1u << 20))
		return -ENOMEM;
	return (long)nr;
}

static unsigned int log2_u32(uint32_t v)
{
	unsigned int n = 0;

	while ((1u << n) < v)
		n++;
	return n;
}

int perf_ring_create(uint32_t nr_pages, uint32_t watermark, bool overwrite, struct perf_ring **out)
{
	struct perf_ring *r;
	struct perf_event_mmap_page *up;

	if (nr_pages & (nr_pages - 1))
		return -EINVAL;
	r = ksvc_alloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	spin_init(&r->lock);
	r->user_page = ksvc_alloc_pages(0);
	if (!r->user_page)
		goto err_free_ring;
	r->nr_pages = nr_pages;
	if (nr_pages) {
		r->order = log2_u32(nr_pages);
		r->data = ksvc_alloc_pages(r->order);
		if (!r->data)
			goto err_free_user_page;
	}
	r->data_size = (uint64_t)nr_pages * PAGE;
	/* ring_buffer_init: the wakeup watermark is capped at the buffer, default half of it */
	r->watermark = watermark ? MIN((uint64_t)watermark, r->data_size) : 0;
	if (!r->watermark)
		r->watermark = r->data_size / 2;
	r->overwrite = overwrite;
	atomic_store_explicit(&r->refs, 1, memory_order_relaxed);

	/* perf_event_init_userpage; version/compat_version stay 0 as on Linux */
	up = r->user_page;
	up->cap_bit0_is_deprecated = 1;
	up->size = offsetof(struct perf_event_mmap_page, __reserved);
	up->data_offset = PAGE;
	up->data_size = r->data_size;
	*out = r;
	return 0;

err_free_user_page:
	ksvc_free_pages(r->user_page, 0);
err_free_ring:
	ksvc_free(r);
	return -ENOMEM;
}

void perf_ring_get(struct perf_ring *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
}

void perf_ring_put(struct perf_ring *r)
{
	/* acq_rel: the last holder sees every other holder's writes before freeing */
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (r->data)
		ksvc_free_pages(r->data, r->order);
	ksvc_free_pages(r->user_page, 0);
	ksvc_free(r);
}

uint64_t perf_ring_page_phys(const struct perf_ring *r, uint64_t pgoff)
{
	if (pgoff == 0)
		return ksvc_virt_to_phys(r->user_page);
	if (pgoff > r->nr_pages)
		return 0;
	return ksvc_virt_to_phys(r->data + (pgoff - 1) * PAGE);
}

/* ---- time conversion (sched_clock's mult/shift, clocks_calc_mult_shift) ---- */

void perf_time_conv_init(struct perf_time_conv *tc, uint32_t freq_hz, unsigned int bits,
			 uint64_t epoch_cyc, uint64_t epoch_ns)
{
	const uint64_t maxsec = 3600; /* sched_clock_register's conversion range */
	uint64_t tmp;
	uint32_t sft, sftacc = 32;

	/* shift bits lost to the range: maxsec * freq must fit after the multiply */
	tmp = (maxsec * freq_hz) >> 32;
	while (tmp) {
		tmp >>= 1;
		sftacc--;
	}
	/* the largest shift whose mult still fits the range: best accuracy */
	for (sft = 32; sft > 0; sft--) {
		tmp = (uint64_t)1000000000u << sft;
		tmp += freq_hz / 2;
		tmp /= freq_hz;
		if ((tmp >> sftacc) == 0)
			break;
	}
	tc->time_mult = (uint32_t)tmp;
	tc->time_shift = (uint16_t)sft;
	tc->time_mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	tc->time_cycles = epoch_cyc;
	/* arm64: subtract the cycle base so readers without cap_user_time_short still work */
	tc->time_zero = epoch_ns - perf_time_conv_cyc_to_ns(tc, epoch_cyc);
	/* time_shift 32 would break the original 32-bit conversion formula */
	if (tc->time_shift == 32) {
		tc->time_shift = 31;
		tc->time_mult >>= 1;
	}
}

uint64_t perf_time_conv_cyc_to_ns(const struct perf_time_conv *tc, uint64_t cyc)
{
	/* mul_u64_u32_shr */
	return (uint64_t)(((unsigned __int128)cyc * tc->time_mult) >> tc->time_shift);
}

void perf_ring_update_userpage(struct perf_ring *r, const struct perf_userpage_event *ev,
			       const struct perf_time_conv *tc, uint64_t now_ns)
{
	struct perf_event_mmap_page *up = r->user_page;

	/*
	 * Seqlock write side: lock odd while the fields change.  The release fences pair with the
	 * acquire fences of the user's read loop (lock, rmb, fields, rmb, lock again).
	 */
	__atomic_store_n(&up->lock, up->lock + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	up->index = ev->index;
	up->offset = ev->offset;
	up->time_enabled = ev->time_enabled;
	up->time_running = ev->time_running;
	up->cap_user_rdpmc = ev->cap_user_rdpmc;
	if (ev->cap_user_rdpmc)
		up->pmc_width = ev->pmc_width;
	if (tc) {
		up->time_mult = tc->time_mult;
		up->time_shift = tc->time_shift;
		up->time_zero = tc->time_zero;
		up->time_cycles = tc->time_cycles;
		up->time_mask = tc->time_mask;
		up->time_offset = tc->time_zero - now_ns;
		up->cap_user_time = 1;
		up->cap_user_time_zero = 1;
		up->cap_user_time_short = 1;
	} else {
		up->cap_user_time = 0;
		up->cap_user_time_zero = 0;
		up->cap_user_time_short = 0;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&up->lock, up->lock + 1, __ATOMIC_RELAXED);
}

/* ---- writer ---- */

/* Free bytes when the writer is at head and the reader at tail (Linux CIRC_SPACE). */
static uint64_t circ_space(uint64_t head, uint64_t tail, uint64_t size)
{
	return (tail - (head + 1)) & (size - 1);
}

int perf_ring_output_begin(struct perf_ring *r, struct perf_ring_handle *h, size_t size,
			   const struct perf_ring_writer *w)
{
	uint64_t head, total = size, lost_size = 0;

	if (!size || (size & 7) || size > PERF_RECORD_MAX_SIZE)
		return -EINVAL;
	/* a mapping of the user page only has nowhere to write; Linux does not count it lost */
	if (!r->nr_pages)
		return -ENOSPC;
	h->ring = r;
	h->irqflags = spin_lock_irqsave(&r->lock);
	h->wakeup_at_begin = r->wakeup;
	if (r->lost) {
		kassert(w);
		lost_size = perf_lost_size(w->sample_type, w->sample_id_all);
		total += lost_size;
	}
	head = r->head;
	if (!r->overwrite) {
		/*
		 * Acquire pairs with the reader's full barrier before its store of data_tail
		 * (Linux's A/D pair): bytes it is still reading are not overwritten.
		 */
		uint64_t tail = __atomic_load_n(&r->user_page->data_tail, __ATOMIC_ACQUIRE);

		/* ring_buffer_has_space: backward, the free room is below head, above tail */
		uint64_t space = r->backward ? circ_space(tail, head, r->data_size)
					     : circ_space(head, tail, r->data_size);

		if (space < total) {
			r->lost++;
			spin_unlock_irqrestore(&r->lock, h->irqflags);
			return -ENOSPC;
		}
	}
	r->head = r->backward ? head - total : head + total;
	/* watermark: wake readers each time another watermark's worth of bytes is written */
	uint64_t written = r->backward ? -r->head : r->head;

	if (written - r->wakeup > r->watermark)
		r->wakeup += r->watermark;

	h->out.base = r->data;
	h->out.size = r->data_size;
	h->out.off = (r->backward ? r->head : head) & (r->data_size - 1);
	h->out.left = total;
	if (lost_size) {
		perf_lost_write(&h->out, w->sid.stream_id, r->lost, w->sample_type,
				w->sample_id_all, &w->sid);
		r->lost = 0;
	}
	return 0;
}

bool perf_ring_output_end(struct perf_ring_handle *h, uint32_t wakeup_events)
{
	struct perf_ring *r = h->ring;
	bool wake;

	kassert(spin_is_held_by_me(&r->lock));
	kassert(h->out.left == 0);
	/* wakeup_events: every n-th sample wakes readers (only without attr.watermark) */
	if (wakeup_events && ++r->events >= wakeup_events) {
		r->events -= wakeup_events;
		r->wakeup++;
	}
	/*
	 * Release pairs with the reader's load of data_head followed by its read barrier
	 * (Linux's B/C pair): the record is complete before the head that covers it.
	 */
	__atomic_store_n(&r->user_page->data_head, r->head, __ATOMIC_RELEASE);
	wake = h->wakeup_at_begin != r->wakeup;
	spin_unlock_irqrestore(&r->lock, h->irqflags);
	return wake;
}

int perf_ring_write(struct perf_ring *r, const void *rec, size_t size,
		    const struct perf_ring_writer *w, bool *wake)
{
	struct perf_ring_handle h;
	int err = perf_ring_output_begin(r, &h, size, w);

	*wake = false;
	if (err)
		return err;
	perf_out_put(&h.out, rec, size);
	*wake = perf_ring_output_end(&h, 0);
	return 0;
}

uint64_t perf_ring_unread(struct perf_ring *r)
{
	/* acquire pairs with the reader's release of data_tail */
	uint64_t tail = __atomic_load_n(&r->user_page->data_tail, __ATOMIC_ACQUIRE);
	uint64_t head = __atomic_load_n(&r->user_page->data_head, __ATOMIC_ACQUIRE);

	return r->backward ? tail - head : head - tail;
}
