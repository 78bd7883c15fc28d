/*
 * cpio_write.c - writer of "newc" cpio archives, the counterpart of cpio.c: members are
 * streamed through a caller's byte sink (emit), so a large file goes out page by page
 * without being copied.  vfs_archive_tree (fs/initramfs.c) writes /out with it.
 *
 * What it does: the 110-byte "070701" header (13 fields of 8 lowercase hex digits: ino, mode,
 * uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize,
 * check = 0), the NUL-terminated name, and NUL padding to a multiple of 4 bytes counted from
 * the start of the archive, after the name and after the body; then the "TRAILER!!!" member
 * (all fields 0 but nlink 1 and namesize 11), as GNU cpio -H newc writes it.
 *
 * What it does not do: the "070702" checksum format, hard-link grouping, bodies of 4 GiB or
 * more (newc's filesize field has 32 bits: -EFBIG).
 *
 * Portable: built into the kernel and into host tests (tests/unit/test_fs_cpio_write.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/string.h>
#include <fs/cpio.h>

#define CPIO_WHDR_SIZE 110u
#define CPIO_WFIELDS 13u

static void w_emit(struct cpio_writer *w, const void *buf, size_t n)
{
	if (n)
		w->emit(buf, n, w->arg);
	w->off += n;
}

void cpio_write_pad(struct cpio_writer *w)
{
	static const char zeros[4];

	w_emit(w, zeros, (size_t)((4 - w->off % 4) % 4));
}

/* A newc header field: 8 hex digits, no NUL */
static void hex8(char *out, uint32_t v)
{
	char t[9];

	ksnprintf(t, sizeof(t), "%08x", (unsigned int)v);
	memcpy(out, t, 8);
}

int cpio_write_header(struct cpio_writer *w, const struct cpio_member *m)
{
	size_t namesize = strlen(m->name) + 1;
	char hdr[CPIO_WHDR_SIZE];

	if (m->size > UINT32_MAX || namesize > UINT32_MAX)
		return -EFBIG;
	const uint32_t f[CPIO_WFIELDS] = {
		m->ino,	      m->mode,	     m->uid,	    m->gid,	   m->nlink,
		m->mtime,     (uint32_t)m->size, m->dev_major, m->dev_minor, m->rdev_major,
		m->rdev_minor, (uint32_t)namesize, 0,
	};

	memcpy(hdr, "070701", 6);
	for (unsigned int i = 0; i < CPIO_WFIELDS; i++)
		hex8(hdr + 6 + 8 * i, f[i]);
	w_emit(w, hdr, sizeof(hdr));
	w_emit(w, m->name, namesize);
	cpio_write_pad(w);
	return 0;
}

void cpio_write_data(struct cpio_writer *w, const void *buf, size_t n)
{
	w_emit(w, buf, n);
}

void cpio_write_trailer(struct cpio_writer *w)
{
	const struct cpio_member t = { .name = "TRAILER!!!", .nlink = 1 };

	cpio_write_header(w, &t);
}
