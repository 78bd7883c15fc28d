/*
 * btf_blob.h - raw BTF blobs built by hand, for tests that feed BPF_BTF_LOAD (or the kernel's BTF
 * parser on the host) exact bytes, including wrong ones.  Shared by guest programs
 * (tests/user) and host unit tests (tests/unit); header only, everything static.
 *
 * Use: blob_init (string 0 is ""), then w() words of the type section, str() for names, then
 * blob_build() writes header + types + strings.  b->h is the header blob_build wrote: a test may
 * change it and copy it over the output again to make a bad header.
 */
#pragma once

#include <stdint.h>
#include <string.h>
#include <linux/btf.h>

/* a type's info word */
#define INFO(kind, kflag, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(kflag) << 31 | (uint32_t)(vlen))

struct blob {
	uint32_t w[512]; /* the type section, in words */
	uint32_t nw;
	char s[1024]; /* the string section */
	uint32_t ns;
	struct btf_header h; /* filled by blob_build */
};

static inline void blob_init(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	b->ns = 1;
}

/* add a string: its offset */
static inline uint32_t str(struct blob *b, const char *x)
{
	uint32_t off = b->ns;

	strcpy(b->s + b->ns, x);
	b->ns += (uint32_t)strlen(x) + 1;
	return off;
}

static inline void w(struct blob *b, uint32_t v)
{
	b->w[b->nw++] = v;
}

static inline void t_int(struct blob *b, const char *name, uint32_t size, uint32_t enc, uint32_t bits)
{
	w(b, str(b, name));
	w(b, INFO(BTF_KIND_INT, 0, 0));
	w(b, size);
	w(b, enc << 24 | bits);
}

/* a kind whose third word is a type id (ptr, typedef, const, volatile, restrict, func, ...) */
static inline void t_ref(struct blob *b, uint32_t kind, uint32_t name_off, uint32_t type)
{
	w(b, name_off);
	w(b, INFO(kind, 0, 0));
	w(b, type);
}

/* header + types + strings into out (at least 24 + 4 * 512 + 1024 bytes): the size */
static inline uint32_t blob_build(struct blob *b, uint8_t *out)
{
	b->h.magic = BTF_MAGIC;
	b->h.version = BTF_VERSION;
	b->h.hdr_len = sizeof(b->h);
	b->h.type_off = 0;
	b->h.type_len = b->nw * 4;
	b->h.str_off = b->nw * 4;
	b->h.str_len = b->ns;
	memcpy(out, &b->h, sizeof(b->h));
	memcpy(out + sizeof(b->h), b->w, b->nw * 4);
	memcpy(out + sizeof(b->h) + b->nw * 4, b->s, b->ns);
	return (uint32_t)sizeof(b->h) + b->nw * 4 + b->ns;
}
