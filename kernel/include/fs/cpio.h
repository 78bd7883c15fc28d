/*
 * cpio.h - iterator over an in-memory "newc" cpio archive (the initramfs format).
 *
 * Pure parsing: no allocation, no file system side effects.  fs/cpio.c; host tests in
 * tests/unit/test_cpio.c.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One archive member.  name and data point into the caller's buffer (not copied). */
struct cpio_entry {
	const char *name; /* NUL-terminated inside the buffer */
	size_t name_len; /* strlen(name): bytes before the first NUL */
	const void *data; /* file body (symlink target for S_IFLNK) */
	size_t data_size;
	uint32_t ino;
	uint32_t mode; /* S_IFMT type bits and permissions, as stat's st_mode */
	uint32_t uid, gid;
	uint32_t nlink;
	uint32_t mtime; /* seconds since the epoch */
	uint32_t dev_major, dev_minor; /* device holding the file (hard-link identity) */
	uint32_t rdev_major, rdev_minor; /* for S_IFCHR / S_IFBLK */
	uint32_t check; /* "070702" data checksum field (0 for "070701") */
	size_t header_offset; /* where this entry's header starts in the buffer */
};

/*
 * Parse the entry at *offset in buf[0..len).  Returns 1 with *out filled and *offset advanced
 * past the entry and its padding; 0 at the "TRAILER!!!" entry (*offset then points just past
 * it, padding included when present); -EINVAL for anything malformed (*offset unchanged).
 * Never reads outside buf[0..len).
 */
int cpio_next(const void *buf, size_t len, size_t *offset, struct cpio_entry *out);

/*
 * Skip the NUL padding that may follow a trailer (Linux accepts several archives concatenated
 * with NUL padding in between, each header 4-byte aligned).  Returns 1 when another header
 * starts at the new *offset, 0 when only NULs remain up to len, -EINVAL when a header would
 * start misaligned.
 */
int cpio_skip_padding(const void *buf, size_t len, size_t *offset);

/*
 * Normalise an archive path into a path relative to the root: leading "/" and "./" are
 * dropped, "//" and "/./" collapse, a trailing "/" is dropped; "." alone gives "" (the root).
 * Any ".." component gives -EINVAL.  name is name_len bytes (need not be NUL-terminated);
 * out receives the result NUL-terminated.  out may equal name (in place); other overlaps are
 * not allowed.  Returns the result's length, -EINVAL, or -ENAMETOOLONG when out_size is too
 * small.
 */
int cpio_name_normalize(const char *name, size_t name_len, char *out, size_t out_size);

/* ---- writing (fs/cpio_write.c): a newc archive streamed through a byte sink ---- */

struct cpio_writer {
	void (*emit)(const void *buf, size_t n, void *arg);
	void *arg;
	uint64_t off; /* bytes emitted so far: padding is relative to the archive start */
};

/* A member's header fields (newc "070701", no checksum). */
struct cpio_member {
	const char *name; /* NUL-terminated, stored as given */
	uint32_t ino, mode, uid, gid, nlink, mtime;
	uint64_t size; /* body bytes: newc holds 32 bits */
	uint32_t dev_major, dev_minor, rdev_major, rdev_minor;
};

/* Header, name and padding: 0, or -EFBIG when size does not fit newc's 32-bit field. The
 * body follows with cpio_write_data (exactly size bytes in all), then cpio_write_pad. */
int cpio_write_header(struct cpio_writer *w, const struct cpio_member *m);
void cpio_write_data(struct cpio_writer *w, const void *buf, size_t n);
void cpio_write_pad(struct cpio_writer *w);
/* The "TRAILER!!!" member that ends an archive. */
void cpio_write_trailer(struct cpio_writer *w);
