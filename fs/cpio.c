/*
 * cpio.c - iterator over an in-memory "newc" cpio archive, the initramfs format.
 *
 * What it does: walks the headers of a newc archive ("070701", and "070702" whose header
 * carries a checksum of the file body) held entirely in memory, hands back each member's
 * metadata with pointers into the buffer, stops at "TRAILER!!!", and normalises member names
 * into root-relative paths.  Every length and offset is checked against the buffer before
 * use, so a hostile archive gets -EINVAL and never a read outside the buffer.
 *
 * What it does not do: create files (fs/ramfs does, from what this returns), decompress,
 * or read the old binary / odc ("070707") formats; those are rejected as Linux rejects them
 * in init/initramfs.c ("incorrect cpio method used: use -H newc option").
 *
 * ABI: the newc header as written by cpio(1) -H newc / -H crc and read by Linux's
 * init/initramfs.c: 6 bytes of magic, then 13 fields of 8 ASCII hex digits (ino, mode, uid,
 * gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check),
 * 110 bytes in all.  The name (namesize bytes, NUL included) follows; header plus name is
 * padded with NULs to a multiple of 4 bytes, and so is the body.  Offsets are aligned
 * relative to the start of the buffer, as Linux counts them from the start of the archive.
 *
 * Stricter than Linux, on purpose: Linux parses each field with simple_strtoul and quietly
 * stops at a non-hex character; here any non-hex digit is -EINVAL.  A member whose name or
 * body runs past the end is -EINVAL (Linux reports "junk within compressed archive").
 * As in Linux, a name is the C string up to its first NUL, and the "070702" checksum (sum of
 * the body's bytes, mod 2^32) is verified for regular files only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/string.h>
#include <fs/cpio.h>

#define CPIO_HDR_SIZE 110u
#define CPIO_MAGIC_LEN 6u
#define CPIO_FIELD_LEN 8u
#define CPIO_TRAILER "TRAILER!!!"
/* File type bits of c_mode, as the cpio format (POSIX <cpio.h> C_ISREG) defines them. */
#define CPIO_TYPE_MASK 0170000u
#define CPIO_TYPE_REG 0100000u

/* Field order in the header, after the magic. */
enum cpio_field {
	F_INO,
	F_MODE,
	F_UID,
	F_GID,
	F_NLINK,
	F_MTIME,
	F_FILESIZE,
	F_DEVMAJOR,
	F_DEVMINOR,
	F_RDEVMAJOR,
	F_RDEVMINOR,
	F_NAMESIZE,
	F_CHECK,
	F_COUNT,
};

_Static_assert(CPIO_MAGIC_LEN + F_COUNT * CPIO_FIELD_LEN == CPIO_HDR_SIZE, "newc header size");

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 8 hex digits; anything else is malformed. */
static int parse_hex8(const char *p, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < CPIO_FIELD_LEN; i++) {
		int d = hex_digit(p[i]);

		if (d < 0)
			return -EINVAL;
		v = (v << 4) | (uint32_t)d;
	}
	*out = v;
	return 0;
}

/*
 * pos + n rounded up to 4, if it stays within len; the padding itself must be inside the
 * buffer.  Written to avoid overflow: pos <= len always holds on entry.
 */
static bool advance_aligned(size_t len, size_t pos, size_t n, size_t *end)
{
	size_t pad;

	if (n > len - pos)
		return false;
	pos += n;
	pad = (4 - (pos & 3)) & 3;
	if (pad > len - pos)
		return false;
	*end = pos + pad;
	return true;
}

static uint32_t body_checksum(const unsigned char *p, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += p[i];
	return sum;
}

static int parse_header(const char *h, uint32_t f[F_COUNT], bool *has_check)
{
	if (memcmp(h, "07070", 5) != 0)
		return -EINVAL;
	if (h[5] == '1')
		*has_check = false;
	else if (h[5] == '2')
		*has_check = true;
	else
		return -EINVAL; /* "070707" (odc) and anything else */

	for (unsigned int i = 0; i < F_COUNT; i++) {
		if (parse_hex8(h + CPIO_MAGIC_LEN + i * CPIO_FIELD_LEN, &f[i]))
			return -EINVAL;
	}
	return 0;
}

int cpio_next(const void *buf, size_t len, size_t *offset, struct cpio_entry *out)
{
	const char *base = buf;
	size_t pos = *offset, name_pos, data_pos, end;
	uint32_t f[F_COUNT];
	bool has_check, trailer;
	int err;

	if (!buf || pos > len || (pos & 3))
		return -EINVAL;
	if (len - pos < CPIO_HDR_SIZE)
		return -EINVAL;
	err = parse_header(base + pos, f, &has_check);
	if (err)
		return err;

	/* The name: namesize bytes including the NUL, which must be the last of them. */
	name_pos = pos + CPIO_HDR_SIZE;
	if (f[F_NAMESIZE] == 0 || f[F_NAMESIZE] > len - name_pos)
		return -EINVAL;
	if (base[name_pos + f[F_NAMESIZE] - 1] != '\0')
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	out->name = base + name_pos;
	out->name_len = strnlen(out->name, f[F_NAMESIZE]);
	trailer = strcmp(out->name, CPIO_TRAILER) == 0;

	/* Header plus name padded to 4; the trailer may end the buffer without its padding. */
	if (!advance_aligned(len, name_pos, f[F_NAMESIZE], &data_pos)) {
		if (!trailer || f[F_FILESIZE] != 0)
			return -EINVAL;
		*offset = len;
		return 0;
	}
	if (!advance_aligned(len, data_pos, f[F_FILESIZE], &end)) {
		if (!trailer || f[F_FILESIZE] > len - data_pos)
			return -EINVAL;
		end = len;
	}

	out->data = base + data_pos;
	out->data_size = f[F_FILESIZE];
	out->ino = f[F_INO];
	out->mode = f[F_MODE];
	out->uid = f[F_UID];
	out->gid = f[F_GID];
	out->nlink = f[F_NLINK];
	out->mtime = f[F_MTIME];
	out->dev_major = f[F_DEVMAJOR];
	out->dev_minor = f[F_DEVMINOR];
	out->rdev_major = f[F_RDEVMAJOR];
	out->rdev_minor = f[F_RDEVMINOR];
	out->check = f[F_CHECK];
	out->header_offset = pos;

	if (trailer) {
		*offset = end;
		return 0;
	}
	if (has_check && (out->mode & CPIO_TYPE_MASK) == CPIO_TYPE_REG &&
	    body_checksum(out->data, out->data_size) != out->check)
		return -EINVAL;
	*offset = end;
	return 1;
}

int cpio_skip_padding(const void *buf, size_t len, size_t *offset)
{
	const char *base = buf;
	size_t pos = *offset;

	if (!buf || pos > len)
		return -EINVAL;
	while (pos < len && base[pos] == '\0')
		pos++;
	*offset = pos;
	if (pos == len)
		return 0;
	/* As Linux's do_reset: a header after the NULs must start 4-byte aligned. */
	if (pos & 3)
		return -EINVAL;
	return 1;
}

/* Length of the component starting at name[i] (up to '/' or the end). */
static size_t component_len(const char *name, size_t name_len, size_t i)
{
	size_t n = 0;

	while (i + n < name_len && name[i + n] != '/')
		n++;
	return n;
}

int cpio_name_normalize(const char *name, size_t name_len, char *out, size_t out_size)
{
	size_t i = 0, o = 0;

	if (!name || !out || out_size == 0)
		return -EINVAL;
	/* A NUL ends the name early, as it would for a C string. */
	name_len = strnlen(name, name_len);

	while (i < name_len) {
		size_t n = component_len(name, name_len, i);

		if (n == 0 || (n == 1 && name[i] == '.')) {
			i += n + 1; /* empty ("//", leading "/") or "." component */
			continue;
		}
		if (n == 2 && name[i] == '.' && name[i + 1] == '.')
			return -EINVAL;
		/* o <= i always, so copying forward in place never overwrites unread input. */
		if (o != 0) {
			if (o + 1 >= out_size)
				return -ENAMETOOLONG;
			out[o++] = '/';
		}
		if (n >= out_size - o)
			return -ENAMETOOLONG;
		for (size_t k = 0; k < n; k++)
			out[o + k] = name[i + k];
		o += n;
		i += n + 1;
	}
	out[o] = '\0';
	if (o > INT32_MAX)
		return -ENAMETOOLONG;
	return (int)o;
}
