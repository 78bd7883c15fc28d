/*
 * helpers_dynptr.c - the dynptr helpers of Linux 6.1: bpf_dynptr_from_mem, bpf_dynptr_read,
 * bpf_dynptr_write, bpf_dynptr_data and the ring buffer's reserve/submit/discard_dynptr.
 *
 * A struct bpf_dynptr (16 opaque bytes on the program's stack, which the verifier lets no
 * instruction read) holds Linux's struct bpf_dynptr_kern: data, size with the type in bits
 * 28-30 and read-only in bit 31, offset.  Sizes above 2^24 - 1 are E2BIG; a failed
 * constructor leaves the dynptr null (data NULL), which reads, writes and data refuse.  The
 * verifier (verify_dynptr.c) tracks which stack slots hold a dynptr and the reference a ring
 * buffer dynptr holds; here only the run-time half.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/string.h>
#include "bpf_internal.h"

struct dynptr_kern {
	void *data;
	uint32_t size; /* bits 0-23 size, 28-30 type, 31 read-only */
	uint32_t offset;
};
_Static_assert(sizeof(struct dynptr_kern) == sizeof(struct bpf_dynptr), "Linux's bpf_dynptr_kern");

#define DYNPTR_MAX_SIZE ((1u << 24) - 1)
#define DYNPTR_TYPE_SHIFT 28
#define DYNPTR_SIZE_MASK 0xffffffu
#define DYNPTR_RDONLY_BIT (1u << 31)

#define P(x) ((void *)(uintptr_t)(x))

void bpf_dynptr_init(void *ptr, void *data, enum bpf_dynptr_type type, uint32_t size)
{
	struct dynptr_kern *d = ptr;

	d->data = data;
	d->size = size | (uint32_t)type << DYNPTR_TYPE_SHIFT;
	d->offset = 0;
}

static void set_null(struct dynptr_kern *d)
{
	memset(d, 0, sizeof(*d));
}

static uint32_t dsize(const struct dynptr_kern *d)
{
	return d->size & DYNPTR_SIZE_MASK;
}

/* bpf_dynptr_check_off_len: [offset, offset + len) inside the dynptr, else -E2BIG. */
static int check_off_len(const struct dynptr_kern *d, uint32_t offset, uint32_t len)
{
	uint32_t size = dsize(d);

	return len > size || offset > size - len ? -E2BIG : 0;
}

uint64_t bpf_h_dynptr_from_mem(uint64_t data, uint64_t size, uint64_t flags, uint64_t ptr,
			       uint64_t a5)
{
	int err = (uint32_t)size > DYNPTR_MAX_SIZE ? -E2BIG : flags ? -EINVAL : 0;

	if (err) {
		set_null(P(ptr));
		return (uint64_t)(int64_t)err;
	}
	bpf_dynptr_init(P(ptr), P(data), BPF_DYNPTR_LOCAL, (uint32_t)size);
	return 0;
}

uint64_t bpf_h_dynptr_read(uint64_t dst, uint64_t len, uint64_t src, uint64_t offset,
			   uint64_t flags)
{
	const struct dynptr_kern *d = P(src);
	int err;

	if (!d->data || flags)
		return (uint64_t)-EINVAL;
	err = check_off_len(d, (uint32_t)offset, (uint32_t)len);
	if (err)
		return (uint64_t)(int64_t)err;
	memcpy(P(dst), (const uint8_t *)d->data + d->offset + (uint32_t)offset, (uint32_t)len);
	return 0;
}

uint64_t bpf_h_dynptr_write(uint64_t dst, uint64_t offset, uint64_t src, uint64_t len,
			    uint64_t flags)
{
	struct dynptr_kern *d = P(dst);
	int err;

	if (!d->data || flags || (d->size & DYNPTR_RDONLY_BIT))
		return (uint64_t)-EINVAL;
	err = check_off_len(d, (uint32_t)offset, (uint32_t)len);
	if (err)
		return (uint64_t)(int64_t)err;
	memcpy((uint8_t *)d->data + d->offset + (uint32_t)offset, P(src), (uint32_t)len);
	return 0;
}

/* A pointer to len bytes at offset, or NULL (null, out of range or read-only dynptr). */
uint64_t bpf_h_dynptr_data(uint64_t ptr, uint64_t offset, uint64_t len, uint64_t a4, uint64_t a5)
{
	const struct dynptr_kern *d = P(ptr);

	if (!d->data || check_off_len(d, (uint32_t)offset, (uint32_t)len) ||
	    (d->size & DYNPTR_RDONLY_BIT))
		return 0;
	return (uintptr_t)((uint8_t *)d->data + d->offset + (uint32_t)offset);
}

/* The dynptr holds a reservation whatever happens: the verifier wants it submitted or
 * discarded on every path, which does nothing for a null one. */
uint64_t bpf_h_ringbuf_reserve_dynptr(uint64_t map, uint64_t size, uint64_t flags, uint64_t ptr,
				      uint64_t a5)
{
	void *sample;

	if (flags) {
		set_null(P(ptr));
		return (uint64_t)-EINVAL;
	}
	if ((uint32_t)size > DYNPTR_MAX_SIZE) {
		set_null(P(ptr));
		return (uint64_t)-E2BIG;
	}
	sample = bpf_ringbuf_reserve(P(map), (uint32_t)size, 0);
	if (!sample) {
		set_null(P(ptr));
		return (uint64_t)-EINVAL; /* no room: Linux 6.1 says EINVAL here too */
	}
	bpf_dynptr_init(P(ptr), sample, BPF_DYNPTR_RINGBUF, (uint32_t)size);
	return 0;
}

static uint64_t ringbuf_commit_dynptr(uint64_t ptr, uint64_t flags, bool discard)
{
	struct dynptr_kern *d = P(ptr);

	if (!d->data)
		return 0;
	bpf_ringbuf_commit(d->data, flags, discard);
	set_null(d);
	return 0;
}

uint64_t bpf_h_ringbuf_submit_dynptr(uint64_t ptr, uint64_t flags, uint64_t a3, uint64_t a4,
				     uint64_t a5)
{
	return ringbuf_commit_dynptr(ptr, flags, false);
}

uint64_t bpf_h_ringbuf_discard_dynptr(uint64_t ptr, uint64_t flags, uint64_t a3, uint64_t a4,
				      uint64_t a5)
{
	return ringbuf_commit_dynptr(ptr, flags, true);
}
