/* t_bpf_btf: BPF_BTF_LOAD of program BTF and the BTF object as bpf(2) shows it.
 * Blobs built here, one check per rule: the header (hdr_len, unsupported tail, magic,
 * version, flags, sections), the string section, each kind's own rules, the resolve pass
 * (references, loops, member placement, func arguments, datasec variables), type-tag order,
 * the log attributes and the log text itself (Linux 6.1's btf_verifier_log lines, whole),
 * then a good BTF's fd: BPF_OBJ_GET_INFO_BY_FD (id, size, raw bytes back, no name),
 * BPF_BTF_GET_FD_BY_ID, BPF_BTF_GET_NEXT_ID, fdinfo, pinning refused, the id gone at close.
 * Programs: prog_btf_fd with func_info and line_info (Linux's check_btf_func and
 * check_btf_line: counts, record sizes and tails, offsets, types, strings), what
 * BPF_OBJ_GET_INFO_BY_FD gives back, and the source lines in the verifier log.  Maps:
 * btf_fd with key and value type ids (sizes, the kinds that take no BTF or need a key, a
 * struct bpf_spin_lock in the value), the ids in bpf_map_info.  bpf_spin_lock and
 * bpf_spin_unlock: Linux 6.1 lets none of the program types here use a map whose value
 * holds a lock (check_map_prog_compatibility), and the helper wants the map's BTF and lock.
 */
#define _GNU_SOURCE
#include "btf_blob.h"
#include "tap.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define ENOTSUPP 524

static long bpf_a(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* ---- building blobs ---- */

static uint8_t raw[8192];

/* header + types + strings into raw: the size */
static uint32_t build(struct blob *b)
{
	return blob_build(b, raw);
}

static char logbuf[65536];

static int btf_load(const void *data, uint32_t size, uint32_t level, uint32_t logsz)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = (uintptr_t)data;
	a.btf_size = size;
	if (level) {
		logbuf[0] = 0;
		a.btf_log_buf = (uintptr_t)logbuf;
		a.btf_log_size = logsz;
		a.btf_log_level = level;
	}
	return (int)bpf_a(BPF_BTF_LOAD, &a);
}

/* Load raw[0..size) with a log: want errno err (0: success) and, when last is set, the
 * log's last line to be it. */
static void expect(const char *what, uint32_t size, int err, const char *last)
{
	int fd, e;
	const char *tail;
	size_t n;

	errno = 0;
	fd = btf_load(raw, size, 1, sizeof(logbuf));
	e = errno;
	if (fd >= 0)
		close(fd);
	if ((err == 0) != (fd >= 0) || (err && e != err)) {
		tap_fail(what, "want errno %d, got fd %d errno %d; log: %s", err, fd, e, logbuf);
		return;
	}
	if (!last) {
		tap_pass(what);
		return;
	}
	n = strlen(logbuf);
	tail = logbuf + n;
	if (n && tail[-1] == '\n')
		tail--;
	while (tail > logbuf && tail[-1] != '\n')
		tail--;
	CHECK(!strncmp(tail, last, strlen(last)) && strlen(tail) - strlen(last) <= 1, what,
	      "last log line [%s], want [%s]", tail, last);
}

/* int (1), used by most blobs */
static void base(struct blob *b)
{
	blob_init(b);
	t_int(b, "int", 4, BTF_INT_SIGNED, 32);
}

static void header_checks(void)
{
	struct blob b;
	uint32_t n;

	base(&b);
	n = build(&b);
	expect("good: one int", n, 0, NULL);
	expect("3 bytes: hdr_len not found", 3, EINVAL, "hdr_len not found");
	b.h.hdr_len = 400;
	memcpy(raw, &b.h, sizeof(b.h));
	expect("hdr_len beyond the data", n, EINVAL, "btf_header not found");

	/* a longer header: zeros are fine, anything else is E2BIG */
	{
		uint8_t big[256];
		struct btf_header h = b.h;

		h.hdr_len = 32;
		memset(big, 0, sizeof(big));
		memcpy(big, &h, sizeof(h));
		memcpy(big + 32, b.w, b.nw * 4);
		memcpy(big + 32 + b.nw * 4, b.s, b.ns);
		memcpy(raw, big, sizeof(big));
		expect("hdr_len 32, zero tail", 32 + b.nw * 4 + b.ns, 0, NULL);
		raw[30] = 1;
		expect("hdr_len 32, nonzero tail", 32 + b.nw * 4 + b.ns, E2BIG,
		       "Unsupported btf_header");
	}
	n = build(&b);
	raw[0] ^= 1;
	expect("bad magic", n, EINVAL, "Invalid magic");
	n = build(&b);
	raw[2] = 2;
	expect("version 2", n, ENOTSUPP, "Unsupported version");
	n = build(&b);
	raw[3] = 1;
	expect("flags 1", n, ENOTSUPP, "Unsupported flags");
	n = build(&b);
	expect("header only", 24, EINVAL, "No data");

	n = build(&b);
	b.h.str_off += 4;
	memcpy(raw, &b.h, sizeof(b.h));
	expect("gap before strings", n + 4, EINVAL, "Unsupported section found");
	b.h.str_off -= 8;
	memcpy(raw, &b.h, sizeof(b.h));
	expect("overlapping sections", n, EINVAL, "Section overlap found");
	b.h.str_off += 4;
	b.h.str_len += 10;
	memcpy(raw, &b.h, sizeof(b.h));
	expect("strings too long", n, EINVAL, "Total section length too long");
	b.h.str_len -= 10;
	b.h.str_off = 1000;
	memcpy(raw, &b.h, sizeof(b.h));
	expect("section offset beyond the data", n, EINVAL, "Invalid section offset");
	n = build(&b);
	expect("data after the strings", n + 3, EINVAL, "Unsupported section found");

	/* strings first, types after */
	{
		struct btf_header h = b.h;
		uint8_t tmp[512];

		h.str_off = 0;
		h.type_off = b.ns;
		memcpy(tmp, &h, sizeof(h));
		memcpy(tmp + 24, b.s, b.ns);
		memcpy(tmp + 24 + b.ns, b.w, b.nw * 4);
		memcpy(raw, tmp, sizeof(tmp));
		expect("string section first", n, EINVAL, "String section is not at the end");
	}
	n = build(&b);
	raw[n - 1] = 'x';
	expect("strings not NUL-terminated", n, EINVAL, "Invalid string section");
	n = build(&b);
	raw[24 + b.nw * 4] = 'x';
	expect("strings not starting with NUL", n, EINVAL, "Invalid string section");

	blob_init(&b);
	str(&b, "x");
	n = build(&b);
	expect("no types", n, EINVAL, "No type found");
	base(&b);
	w(&b, 0); /* 4 stray bytes: a type header is 12 */
	n = build(&b);
	expect("truncated type", n, EINVAL, "[2] meta_left:4 meta_needed:12");
}

static void kind_checks(void)
{
	struct blob b;

	base(&b);
	w(&b, 0), w(&b, INFO(20, 0, 0)), w(&b, 0);
	expect("kind 20", build(&b), EINVAL, "[2] Invalid kind:20");
	base(&b);
	w(&b, 0), w(&b, 1u << 29 | INFO(BTF_KIND_PTR, 0, 0)), w(&b, 1);
	expect("info bit 29", build(&b), EINVAL, "[2] Invalid btf_info:22000000");
	base(&b);
	w(&b, 900), w(&b, INFO(BTF_KIND_PTR, 0, 0)), w(&b, 1);
	expect("name offset past the strings", build(&b), EINVAL, "[2] Invalid name_offset:900");

	blob_init(&b);
	t_int(&b, "int", 4, 0, 40);
	expect("int: 40 bits in 4 bytes", build(&b), EINVAL,
	       "[1] INT int size=4 bits_offset=0 nr_bits=40 encoding=(none) nr_bits exceeds type_size");
	blob_init(&b);
	t_int(&b, "int", 16, 0, 129);
	expect("int: 129 bits", build(&b), EINVAL,
	       "[1] INT int size=16 bits_offset=0 nr_bits=129 encoding=(none) nr_bits exceeds 128");
	blob_init(&b);
	t_int(&b, "int", 4, 3, 32);
	expect("int: two encodings", build(&b), ENOTSUPP,
	       "[1] INT int size=4 bits_offset=0 nr_bits=32 encoding=UNKN Unsupported encoding");
	blob_init(&b);
	t_int(&b, "1nt", 4, 0, 32);
	expect("int named 1nt (ints may)", build(&b), 0, NULL);

	base(&b);
	t_ref(&b, BTF_KIND_PTR, str(&b, "p"), 1);
	expect("named ptr", build(&b), EINVAL, "[2] PTR p type_id=1 Invalid name");
	base(&b);
	t_ref(&b, BTF_KIND_TYPEDEF, 0, 1);
	expect("typedef without a name", build(&b), EINVAL, "[2] TYPEDEF (anon) type_id=1 Invalid name");
	base(&b);
	t_ref(&b, BTF_KIND_TYPEDEF, str(&b, "a-b"), 1);
	expect("typedef a-b", build(&b), EINVAL, "[2] TYPEDEF a-b type_id=1 Invalid name");
	base(&b);
	t_ref(&b, BTF_KIND_CONST, 0, 0x100000);
	expect("const of type 0x100000", build(&b), EINVAL,
	       "[2] CONST (anon) type_id=1048576 Invalid type_id");
	base(&b);
	t_ref(&b, BTF_KIND_PTR, 0, 7);
	expect("ptr to a missing type", build(&b), EINVAL, "[2] PTR (anon) type_id=7 Invalid type_id");
	base(&b);
	t_ref(&b, BTF_KIND_FWD, str(&b, "s"), 1);
	expect("fwd with a type", build(&b), EINVAL, "[2] FWD s struct type != 0");

	/* typedef loop: 2 -> 3 -> 2 */
	base(&b);
	t_ref(&b, BTF_KIND_TYPEDEF, str(&b, "a"), 3);
	t_ref(&b, BTF_KIND_TYPEDEF, str(&b, "b"), 2);
	expect("typedef loop: EEXIST", build(&b), EEXIST, "[2] TYPEDEF a type_id=3 Loop detected");
	/* ptr loop through const: allowed for struct self-reference only */
	base(&b);
	t_ref(&b, BTF_KIND_PTR, 0, 3);
	t_ref(&b, BTF_KIND_CONST, 0, 2);
	expect("const ptr loop: EEXIST", build(&b), EEXIST, "[2] PTR (anon) type_id=3 Loop detected");

	/* struct s { int a; struct s *next; } is fine */
	base(&b);
	w(&b, str(&b, "s")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 16);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "next")), w(&b, 3), w(&b, 64);
	t_ref(&b, BTF_KIND_PTR, 0, 2);
	expect("self-referencing struct", build(&b), 0, NULL);
	/* ... but struct s { struct s x; } is a loop */
	base(&b);
	w(&b, str(&b, "s")), w(&b, INFO(BTF_KIND_STRUCT, 0, 1)), w(&b, 4);
	w(&b, str(&b, "x")), w(&b, 2), w(&b, 0);
	expect("struct containing itself: EEXIST", build(&b), EEXIST, "[2] STRUCT s size=4 vlen=1 Loop detected");
	/* members: offsets in order, inside the struct */
	base(&b);
	w(&b, str(&b, "s")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 8);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 32);
	w(&b, str(&b, "b")), w(&b, 1), w(&b, 0);
	expect("members out of order", build(&b), EINVAL, "\tb type_id=1 bits_offset=0 Invalid member bits_offset");
	base(&b);
	w(&b, str(&b, "s")), w(&b, INFO(BTF_KIND_STRUCT, 0, 1)), w(&b, 6);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 32);
	expect("member past the end", build(&b), EINVAL, "\ta type_id=1 bits_offset=32 Member exceeds struct_size");
	base(&b);
	w(&b, str(&b, "u")), w(&b, INFO(BTF_KIND_UNION, 0, 1)), w(&b, 8);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 32);
	expect("union member at 32", build(&b), EINVAL, "\ta type_id=1 bits_offset=32 Invalid member bits_offset");
	base(&b);
	w(&b, str(&b, "s")), w(&b, INFO(BTF_KIND_STRUCT, 1, 1)), w(&b, 4);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 33u << 24 | 0);
	expect("bitfield of 33 in an int", build(&b), EINVAL,
	       "\ta type_id=1 bitfield_size=33 bits_offset=0 Invalid member bitfield_size");

	/* arrays */
	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_ARRAY, 0, 0)), w(&b, 0), w(&b, 0), w(&b, 1), w(&b, 4);
	expect("array of void", build(&b), EINVAL,
	       "[2] ARRAY (anon) type_id=0 index_type_id=1 nr_elems=4 Invalid elem");
	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_ARRAY, 0, 0)), w(&b, 0), w(&b, 1), w(&b, 1), w(&b, 4);
	b.w[b.nw - 3] = 1;
	expect("int[4]", build(&b), 0, NULL);
	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_ARRAY, 0, 0)), w(&b, 0), w(&b, 1), w(&b, 1), w(&b, 0x40000000);
	expect("int[0x40000000]", build(&b), EINVAL,
	       "[2] ARRAY (anon) type_id=1 index_type_id=1 nr_elems=1073741824 Array size overflows U32_MAX");

	/* enums */
	base(&b);
	w(&b, str(&b, "e")), w(&b, INFO(BTF_KIND_ENUM, 0, 1)), w(&b, 3);
	w(&b, str(&b, "A")), w(&b, 1);
	expect("enum of size 3", build(&b), EINVAL, "[2] ENUM e size=3 vlen=1 Unexpected size");
	base(&b);
	w(&b, str(&b, "e")), w(&b, INFO(BTF_KIND_ENUM64, 1, 1)), w(&b, 8);
	w(&b, str(&b, "A")), w(&b, 0xffffffff), w(&b, 0xffffffff);
	expect("enum64 -1", build(&b), 0, NULL);

	/* functions */
	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_FUNC_PROTO, 0, 1)), w(&b, 1);
	w(&b, 0), w(&b, 1);
	w(&b, str(&b, "f")), w(&b, INFO(BTF_KIND_FUNC, 0, 0)), w(&b, 2);
	expect("func with an unnamed arg", build(&b), EINVAL, "[3] FUNC f type_id=2 Invalid arg#1");
	base(&b);
	w(&b, str(&b, "f")), w(&b, INFO(BTF_KIND_FUNC, 0, 3)), w(&b, 1);
	expect("func linkage 3", build(&b), EINVAL, "[2] FUNC f type_id=1 Invalid func linkage");
	base(&b);
	w(&b, str(&b, "f")), w(&b, INFO(BTF_KIND_FUNC, 0, 0)), w(&b, 1);
	expect("func of an int", build(&b), EINVAL, "[2] FUNC f type_id=1 Invalid type_id");
	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_FUNC_PROTO, 0, 2)), w(&b, 9);
	w(&b, 0), w(&b, 1), w(&b, 0), w(&b, 0);
	expect("proto returning type 9", build(&b), EINVAL,
	       "[2] FUNC_PROTO (anon) return=9 args=(1 (anon), vararg) Invalid return type");

	/* var, datasec, float, decl tag, type tag */
	base(&b);
	w(&b, str(&b, "v")), w(&b, INFO(BTF_KIND_VAR, 0, 0)), w(&b, 1), w(&b, 2);
	expect("extern var", build(&b), EINVAL, "[2] VAR v type_id=1 linkage=2 Linkage not supported");
	base(&b);
	w(&b, str(&b, "v")), w(&b, INFO(BTF_KIND_VAR, 0, 0)), w(&b, 1), w(&b, 1);
	w(&b, str(&b, ".data")), w(&b, INFO(BTF_KIND_DATASEC, 0, 1)), w(&b, 4);
	w(&b, 2), w(&b, 0), w(&b, 4);
	expect(".data with int v", build(&b), 0, NULL);
	base(&b);
	w(&b, str(&b, "v")), w(&b, INFO(BTF_KIND_VAR, 0, 0)), w(&b, 1), w(&b, 1);
	w(&b, str(&b, ".data")), w(&b, INFO(BTF_KIND_DATASEC, 0, 1)), w(&b, 4);
	w(&b, 2), w(&b, 2), w(&b, 4);
	expect("datasec entry past the end", build(&b), EINVAL,
	       "\t type_id=2 offset=2 size=4 Invalid offset+size");
	base(&b);
	w(&b, str(&b, ".data")), w(&b, INFO(BTF_KIND_DATASEC, 0, 1)), w(&b, 4);
	w(&b, 1), w(&b, 0), w(&b, 4);
	expect("datasec of an int", build(&b), EINVAL, "\t type_id=1 offset=0 size=4 Not a VAR kind member");
	base(&b);
	w(&b, str(&b, "float")), w(&b, INFO(BTF_KIND_FLOAT, 0, 0)), w(&b, 3);
	expect("float of 3 bytes", build(&b), EINVAL, "[2] FLOAT float size=3 Invalid type_size");
	base(&b);
	w(&b, str(&b, "tag")), w(&b, INFO(BTF_KIND_DECL_TAG, 0, 0)), w(&b, 1), w(&b, (uint32_t)-1);
	expect("decl tag on an int", build(&b), EINVAL, "[2] DECL_TAG tag type=1 component_idx=-1 Invalid type_id");
	base(&b);
	t_ref(&b, BTF_KIND_CONST, 0, 1);
	t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, "user"), 2);
	t_ref(&b, BTF_KIND_PTR, 0, 3);
	expect("type tag before const", build(&b), 0, NULL);
	base(&b);
	t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, "user"), 1);
	t_ref(&b, BTF_KIND_CONST, 0, 2);
	t_ref(&b, BTF_KIND_TYPE_TAG, str(&b, "user"), 3);
	t_ref(&b, BTF_KIND_PTR, 0, 4);
	expect("type tag after const", build(&b), EINVAL, "Type tags don't precede modifiers");
}

/* a good BTF whose whole log is compared */
static uint32_t good_blob(struct blob *b)
{
	base(b);
	t_ref(b, BTF_KIND_PTR, 0, 3);
	w(b, str(b, "node")), w(b, INFO(BTF_KIND_STRUCT, 0, 2)), w(b, 16);
	w(b, str(b, "val")), w(b, 1), w(b, 0);
	w(b, str(b, "next")), w(b, 2), w(b, 64);
	w(b, 0), w(b, INFO(BTF_KIND_FUNC_PROTO, 0, 1)), w(b, 1);
	w(b, str(b, "n")), w(b, 2);
	w(b, str(b, "walk")), w(b, INFO(BTF_KIND_FUNC, 0, 1)), w(b, 4);
	return build(b);
}

static const char good_log[] =
	"magic: 0xeb9f\nversion: 1\nflags: 0x0\nhdr_len: 24\ntype_off: 0\ntype_len: 96\n"
	"str_off: 96\nstr_len: 26\nbtf_total_size: 146\n"
	"[1] INT int size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n"
	"[2] PTR (anon) type_id=3\n"
	"[3] STRUCT node size=16 vlen=2\n"
	"\tval type_id=1 bits_offset=0\n"
	"\tnext type_id=2 bits_offset=64\n"
	"[4] FUNC_PROTO (anon) return=1 args=(2 n)\n"
	"[5] FUNC walk type_id=4\n";

static void log_checks(void)
{
	struct blob b;
	uint32_t n = good_blob(&b);
	int fd;

	fd = btf_load(raw, n, 1, sizeof(logbuf));
	CHECK(fd >= 0 && !strcmp(logbuf, good_log), "whole log of a good BTF", "fd %d errno %d log:\n%s",
	      fd, errno, logbuf);
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = btf_load(raw, n, 1, 128);
	CHECK(fd < 0 && errno == ENOSPC && strlen(logbuf) == 127, "log of 128 bytes: ENOSPC",
	      "fd %d errno %d len %zu", fd, errno, strlen(logbuf));
	EXPECT_ERRNO(btf_load(raw, n, 1, 127), EINVAL, "log_size 127");
	EXPECT_ERRNO(btf_load(raw, n, 8, 4096), EINVAL, "log_level 8");
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.btf = (uintptr_t)raw;
		a.btf_size = n;
		a.btf_log_size = 4096;
		EXPECT_ERRNO(bpf_a(BPF_BTF_LOAD, &a), EINVAL, "log_size without a buffer");
		a.btf_log_size = 0;
		a.btf_size = 16 * 1024 * 1024 + 1;
		EXPECT_ERRNO(bpf_a(BPF_BTF_LOAD, &a), E2BIG, "btf_size 16 MiB + 1");
		a.btf_size = n;
		a.btf = 8;
		EXPECT_ERRNO(bpf_a(BPF_BTF_LOAD, &a), EFAULT, "btf at address 8");
		a.btf = (uintptr_t)raw;
		((uint8_t *)&a)[sizeof(a) - 1] = 1;
		EXPECT_ERRNO(bpf_a(BPF_BTF_LOAD, &a), EINVAL, "attr tail not zero");
	}
}

static int btf_info(int fd, struct bpf_btf_info *info, uint32_t len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = len;
	a.info.info = (uintptr_t)info;
	return (int)bpf_a(BPF_OBJ_GET_INFO_BY_FD, &a);
}

static void object_checks(void)
{
	struct blob b;
	uint32_t n = good_blob(&b), id, next;
	struct bpf_btf_info info;
	uint8_t back[512];
	char name[8], line[512], path[64];
	union bpf_attr a;
	int fd, fd2, ffd;

	fd = btf_load(raw, n, 0, 0);
	if (!CHECK(fd >= 0, "load without a log", "errno %d", errno))
		return;
	memset(&info, 0, sizeof(info));
	memset(back, 0xaa, sizeof(back));
	info.btf = (uintptr_t)back;
	info.btf_size = sizeof(back);
	info.name = (uintptr_t)name;
	info.name_len = sizeof(name);
	name[0] = 'x';
	CHECK(!btf_info(fd, &info, sizeof(info)) && info.id && info.btf_size == n &&
		      !memcmp(back, raw, n) && back[n] == 0xaa && info.name_len == 0 && !name[0] &&
		      !info.kernel_btf,
	      "info: id, size, the bytes back, no name", "id %u size %u name_len %u", info.id,
	      info.btf_size, info.name_len);
	id = info.id;
	memset(&info, 0, sizeof(info));
	info.btf = (uintptr_t)back;
	info.btf_size = 10;
	memset(back, 0, sizeof(back));
	CHECK(!btf_info(fd, &info, sizeof(info)) && info.btf_size == n && !memcmp(back, raw, 10) &&
		      !back[10],
	      "info: btf_size 10 copies 10 bytes, tells the size", "size %u", info.btf_size);
	memset(&info, 0, sizeof(info));
	info.name = (uintptr_t)name;
	EXPECT_ERRNO(btf_info(fd, &info, sizeof(info)), EINVAL, "info: name without name_len");
	{
		uint8_t big[sizeof(info) + 8];

		memset(big, 0, sizeof(big));
		big[sizeof(info) + 3] = 1;
		EXPECT_ERRNO(btf_info(fd, (struct bpf_btf_info *)big, sizeof(big)), E2BIG,
			     "info: nonzero tail past the struct");
	}
	memset(&a, 0, sizeof(a));
	a.btf_id = id;
	fd2 = (int)bpf_a(BPF_BTF_GET_FD_BY_ID, &a);
	memset(&info, 0, sizeof(info));
	CHECK(fd2 >= 0 && !btf_info(fd2, &info, sizeof(info)) && info.id == id,
	      "BTF_GET_FD_BY_ID", "fd %d errno %d", fd2, errno);
	memset(&a, 0, sizeof(a));
	a.start_id = id - 1;
	next = 0;
	if (!bpf_a(BPF_BTF_GET_NEXT_ID, &a))
		next = a.next_id;
	CHECK(next == id, "BTF_GET_NEXT_ID from id - 1", "next %u, id %u", next, id);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ffd = open(path, O_RDONLY);
	line[0] = 0;
	if (ffd >= 0) {
		char buf[512], want[32];
		ssize_t r = read(ffd, buf, sizeof(buf) - 1);

		buf[r > 0 ? r : 0] = 0;
		snprintf(want, sizeof(want), "btf_id:\t%u\n", id);
		snprintf(line, sizeof(line), "%s", strstr(buf, want) ? "found" : buf);
		close(ffd);
	}
	CHECK(!strcmp(line, "found"), "fdinfo has btf_id", "%s", line);
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "a BTF fd is O_RDONLY", "flags %x",
	      fcntl(fd, F_GETFL));
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)"/sys/fs/bpf/t_bpf_btf";
	a.bpf_fd = (uint32_t)fd;
	EXPECT_ERRNO(bpf_a(BPF_OBJ_PIN, &a), EINVAL, "a BTF cannot be pinned");
	close(fd);
	memset(&info, 0, sizeof(info));
	CHECK(fd2 >= 0 && !btf_info(fd2, &info, sizeof(info)) && info.id == id,
	      "the id's fd keeps it", "errno %d", errno);
	if (fd2 >= 0)
		close(fd2);
	memset(&a, 0, sizeof(a));
	a.btf_id = id;
	EXPECT_ERRNO(bpf_a(BPF_BTF_GET_FD_BY_ID, &a), ENOENT, "last fd closed: the id is gone");
}

/* ---- programs and maps with BTF ---- */

static uint32_t s_file, s_l0, s_l1;

/* 1 int, 2 int(void), 3 func main, 4 func sub, 5 struct pair {int a, b}, 6 struct
 * bpf_spin_lock {int val}, 7 struct locked {int a; struct bpf_spin_lock l} */
static int prog_btf(void)
{
	struct blob b;

	base(&b);
	w(&b, 0), w(&b, INFO(BTF_KIND_FUNC_PROTO, 0, 0)), w(&b, 1);
	w(&b, str(&b, "main")), w(&b, INFO(BTF_KIND_FUNC, 0, 1)), w(&b, 2);
	w(&b, str(&b, "sub")), w(&b, INFO(BTF_KIND_FUNC, 0, 0)), w(&b, 2);
	w(&b, str(&b, "pair")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 8);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "b")), w(&b, 1), w(&b, 32);
	w(&b, str(&b, "bpf_spin_lock")), w(&b, INFO(BTF_KIND_STRUCT, 0, 1)), w(&b, 4);
	w(&b, str(&b, "val")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "locked")), w(&b, INFO(BTF_KIND_STRUCT, 0, 2)), w(&b, 8);
	w(&b, str(&b, "a")), w(&b, 1), w(&b, 0);
	w(&b, str(&b, "l")), w(&b, 6), w(&b, 32);
	s_file = str(&b, "/src/prog.c");
	s_l0 = str(&b, "\tint x = 0;");
	s_l1 = str(&b, "  return 1;");
	return btf_load(raw, build(&b), 0, 0);
}

#define INSN(c, d, s_, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) })

/* main: r0 = 0; call sub; exit.  sub (insn 3): r0 = 1; exit */
static const struct bpf_insn two_funcs[] = {
	INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
	INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),
	INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
	INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
};

static uint32_t finfo[2][3]; /* records of up to 12 bytes */
static struct bpf_line_info linfo[2];

static void reset_info(void)
{
	memset(finfo, 0, sizeof(finfo));
	finfo[0][0] = 0, finfo[0][1] = 3;
	finfo[1][0] = 3, finfo[1][1] = 4;
	linfo[0] = (struct bpf_line_info){ .insn_off = 0, .file_name_off = s_file, .line_off = s_l0,
					  .line_col = 5 << 10 | 2 };
	linfo[1] = (struct bpf_line_info){ .insn_off = 3, .file_name_off = s_file, .line_off = s_l1,
					  .line_col = 7 << 10 | 3 };
}

static union bpf_attr pa;

/* load two_funcs with func_info of rec size frec (packed from finfo) and line_info */
static int load_prog(int btf, uint32_t nfunc, uint32_t frec, uint32_t nline, uint32_t lrec, uint32_t level)
{
	static uint8_t fbuf[64], lbuf[128];

	for (uint32_t i = 0; i < 2; i++)
		memcpy(fbuf + i * frec, finfo[i], frec < 12 ? frec : 12);
	for (uint32_t i = 0; i < 2; i++) {
		memset(lbuf + i * lrec, 0, lrec);
		memcpy(lbuf + i * lrec, &linfo[i], lrec < 16 ? lrec : 16);
	}
	memset(&pa, 0, sizeof(pa));
	pa.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	pa.insns = (uintptr_t)two_funcs;
	pa.insn_cnt = 5;
	pa.license = (uintptr_t)"GPL";
	pa.prog_btf_fd = (uint32_t)btf;
	pa.func_info = (uintptr_t)fbuf;
	pa.func_info_cnt = nfunc;
	pa.func_info_rec_size = frec;
	pa.line_info = (uintptr_t)lbuf;
	pa.line_info_cnt = nline;
	pa.line_info_rec_size = lrec;
	logbuf[0] = 0;
	pa.log_level = level ? level : 1;
	pa.log_buf = (uintptr_t)logbuf;
	pa.log_size = sizeof(logbuf);
	return (int)bpf_a(BPF_PROG_LOAD, &pa);
}

static void expect_prog(const char *what, int fd, int err, const char *msg)
{
	int e = errno;

	if (fd >= 0)
		close(fd);
	CHECK((err ? fd < 0 && e == err : fd >= 0) && (!msg || strstr(logbuf, msg)), what,
	      "fd %d errno %d, want %d [%s]; log: %s", fd, fd < 0 ? e : 0, err, msg ? msg : "", logbuf);
}

static void prog_checks(void)
{
	struct bpf_prog_info info;
	struct bpf_func_info fi[3];
	struct bpf_line_info li[3];
	struct bpf_btf_info binfo;
	int btf = prog_btf(), fd;

	if (!CHECK(btf >= 0, "program BTF loads", "errno %d", errno))
		return;
	reset_info();
	fd = load_prog(btf, 2, 8, 2, 16, 2);
	if (CHECK(fd >= 0, "two functions with func_info and line_info", "errno %d; log: %s", errno, logbuf)) {
		CHECK(strstr(logbuf, "; int x = 0;\n") && strstr(logbuf, "; return 1;\n"),
		      "the log quotes the source lines, trimmed", "%s", logbuf);
		memset(&info, 0, sizeof(info));
		memset(fi, 0xff, sizeof(fi));
		memset(li, 0xff, sizeof(li));
		info.nr_func_info = 3;
		info.func_info_rec_size = sizeof(fi[0]);
		info.func_info = (uintptr_t)fi;
		info.nr_line_info = 3;
		info.line_info_rec_size = sizeof(li[0]);
		info.line_info = (uintptr_t)li;
		memset(&binfo, 0, sizeof(binfo));
		{
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.info.bpf_fd = (uint32_t)fd;
			a.info.info_len = sizeof(info);
			a.info.info = (uintptr_t)&info;
			bpf_a(BPF_OBJ_GET_INFO_BY_FD, &a);
		}
		btf_info(btf, &binfo, sizeof(binfo));
		CHECK(info.btf_id == binfo.id && info.nr_func_info == 2 && fi[0].insn_off == 0 &&
			      fi[0].type_id == 3 && fi[1].insn_off == 3 && fi[1].type_id == 4 &&
			      fi[2].insn_off == 0xffffffff,
		      "info: btf_id and func_info", "btf_id %u (%u) nr %u [%u %u] [%u %u]", info.btf_id,
		      binfo.id, info.nr_func_info, fi[0].insn_off, fi[0].type_id, fi[1].insn_off,
		      fi[1].type_id);
		CHECK(info.nr_line_info == 2 && !memcmp(li, linfo, sizeof(linfo)) &&
			      li[2].insn_off == 0xffffffff,
		      "info: line_info as loaded", "nr %u", info.nr_line_info);
		close(fd);
	}
	expect_prog("func_info of 12-byte records, zero tail", load_prog(btf, 2, 12, 2, 16, 0), 0, NULL);
	finfo[1][2] = 7;
	fd = load_prog(btf, 2, 12, 2, 16, 0);
	expect_prog("func_info tail not zero: E2BIG", fd, E2BIG, "nonzero tailing record in func info");
	CHECK(pa.func_info_rec_size == 8, "E2BIG writes the kernel's record size back", "%u",
	      pa.func_info_rec_size);
	reset_info();
	expect_prog("one func_info for two functions", load_prog(btf, 1, 8, 2, 16, 0), EINVAL,
		    "number of funcs in func_info doesn't match number of subprogs");
	expect_prog("func_info rec size 4", load_prog(btf, 2, 4, 2, 16, 0), EINVAL,
		    "invalid func info rec size 4");
	expect_prog("func_info rec size 256", load_prog(btf, 2, 256, 2, 16, 0), EINVAL,
		    "invalid func info rec size 256");
	finfo[0][0] = 1;
	expect_prog("first func_info at insn 1", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "nonzero insn_off 1 for the first func info record");
	reset_info();
	finfo[1][0] = 2;
	expect_prog("second func_info off its function", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "func_info BTF section doesn't match subprog layout in BPF program");
	reset_info();
	finfo[1][0] = 0;
	expect_prog("func_info offsets not increasing", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "same or smaller insn offset (0) than previous func info record (0)");
	reset_info();
	finfo[1][1] = 1;
	expect_prog("func_info naming an int", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "invalid type id 1 in func info");
	reset_info();
	expect_prog("line_info rec size 8", load_prog(btf, 2, 8, 2, 8, 0), EINVAL, NULL);
	expect_prog("line_info for main only", load_prog(btf, 2, 8, 1, 16, 0), EINVAL,
		    "missing bpf_line_info for 1 funcs starting from func#1");
	linfo[1].insn_off = 5;
	expect_prog("line_info past the program", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "Invalid line_info[1].insn_off:5 (prev_offset:0 prog->len:5)");
	reset_info();
	linfo[1].insn_off = 4;
	expect_prog("line_info skipping a function start", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "missing bpf_line_info for func#1");
	reset_info();
	linfo[0].line_off = 5000;
	expect_prog("line_info string past the section", load_prog(btf, 2, 8, 2, 16, 0), EINVAL,
		    "Invalid line_info[0].line_off or .file_name_off");
	reset_info();
	expect_prog("line_info without func_info", load_prog(btf, 0, 0, 2, 16, 0), 0, NULL);
	expect_prog("prog_btf_fd not open", load_prog(9999, 2, 8, 2, 16, 0), EBADF, NULL);
	expect_prog("prog_btf_fd 0 (not a BTF)", load_prog(0, 2, 8, 2, 16, 0), EINVAL, NULL);
	expect_prog("prog_btf_fd unused without func/line info", load_prog(9999, 0, 0, 0, 0, 0), 0, NULL);
	close(btf);
}

static int map_btf(int btf, uint32_t type, uint32_t ks, uint32_t vs, uint32_t kid, uint32_t vid,
		   uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ? 2 : 4;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = kid;
	a.btf_value_type_id = vid;
	return (int)bpf_a(BPF_MAP_CREATE, &a);
}

static int elem(int cmd, int fd, const void *key, void *value, uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)value;
	a.flags = flags;
	return (int)bpf_a(cmd, &a);
}

static void map_checks(void)
{
	struct bpf_map_info info;
	struct bpf_btf_info binfo;
	int btf = prog_btf(), fd;

	if (btf < 0)
		return;
	fd = map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 5, 0);
	if (CHECK(fd >= 0, "hash map int -> struct pair", "errno %d", errno)) {
		union bpf_attr a;

		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uintptr_t)&info;
		bpf_a(BPF_OBJ_GET_INFO_BY_FD, &a);
		memset(&binfo, 0, sizeof(binfo));
		btf_info(btf, &binfo, sizeof(binfo));
		CHECK(info.btf_id == binfo.id && info.btf_key_type_id == 1 &&
			      info.btf_value_type_id == 5,
		      "map info: btf_id, key and value type ids", "%u/%u %u %u", info.btf_id, binfo.id,
		      info.btf_key_type_id, info.btf_value_type_id);
		close(fd);
	}
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 4, 12, 1, 5, 0), EINVAL, "value size 12 for an 8-byte struct");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 8, 8, 1, 5, 0), EINVAL, "key size 8 for an int");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 0, 5, 0), EINVAL, "hash without a key type");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 3, 0), EINVAL, "value type a func");
	EXPECT_ERRNO(map_btf(9999, BPF_MAP_TYPE_HASH, 4, 8, 1, 5, 0), EBADF, "btf_fd not open");
	EXPECT_ERRNO(map_btf(0, BPF_MAP_TYPE_HASH, 4, 8, 1, 5, 0), EINVAL, "btf_fd 0 (not a BTF)");
	fd = map_btf(btf, BPF_MAP_TYPE_ARRAY, 4, 8, 1, 5, 0);
	CHECK(fd >= 0, "array int -> struct pair", "errno %d", errno);
	if (fd >= 0)
		close(fd);
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_ARRAY, 4, 8, 0, 5, 0), EINVAL,
		     "array without a key type, value not a datasec");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1, 1, 0), ENOTSUPP,
		     "perf event array takes no BTF");
	fd = map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 7, 0);
	CHECK(fd >= 0, "hash value with a bpf_spin_lock", "errno %d", errno);
	if (fd >= 0) {
		uint32_t k = 1, v[2] = { 5, 0x12345678 }, out[2] = { 9, 9 };

		CHECK(!elem(BPF_MAP_UPDATE_ELEM, fd, &k, v, 0) && !elem(BPF_MAP_LOOKUP_ELEM, fd, &k, out, 0) &&
			      out[0] == 5 && out[1] == 0,
		      "the lock's bytes are neither stored nor shown", "errno %d: %u %x", errno, out[0], out[1]);
		v[0] = 6;
		out[0] = 9;
		CHECK(!elem(BPF_MAP_UPDATE_ELEM, fd, &k, v, BPF_F_LOCK) &&
			      !elem(BPF_MAP_LOOKUP_ELEM, fd, &k, out, BPF_F_LOCK) && out[0] == 6 && out[1] == 0,
		      "BPF_F_LOCK update and lookup", "errno %d: %u %x", errno, out[0], out[1]);
		close(fd);
	}
	fd = map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 5, 0);
	if (fd >= 0) {
		uint32_t k = 1, v[2] = { 5, 7 };

		EXPECT_ERRNO(elem(BPF_MAP_UPDATE_ELEM, fd, &k, v, BPF_F_LOCK), EINVAL,
			     "BPF_F_LOCK on a value without a lock");
		close(fd);
	}
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 7, BPF_F_RDONLY_PROG), EACCES,
		     "bpf_spin_lock in a BPF_F_RDONLY_PROG map");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_LRU_HASH, 4, 8, 1, 7, 0), ENOTSUPP,
		     "bpf_spin_lock in an LRU hash value");
	EXPECT_ERRNO(map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 0, 0), EINVAL, "key type without a value type");
	close(btf);
}

/* ---- bpf_spin_lock ---- */

static struct bpf_insn lp[64];
static uint32_t nl;

static void e(struct bpf_insn in)
{
	lp[nl++] = in;
}

#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define MOVR(d, s_) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s_, 0, 0)
#define ADDI(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define MOVI(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)

enum lock_variant { L_GOOD, L_NO_UNLOCK, L_COUNT };

/* value = lookup(map, 0); if (value) { lock(&value->l); ...; unlock(&value->l) } return 0 */
static int load_locker(int map, enum lock_variant v, uint32_t type)
{
	union bpf_attr a;

	nl = 0;
	e(INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0));
	e(MOVR(2, 10));
	e(ADDI(2, -4));
	e(INSN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, map));
	e(INSN(0, 0, 0, 0, 0));
	e(CALL(BPF_FUNC_map_lookup_elem));
	e(INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0)); /* to the exit: patched below */
	{
		uint32_t jeq = nl - 1;

		e(MOVR(6, 0));
		e(MOVR(1, 6));
		e(ADDI(1, 4));
		e(CALL(BPF_FUNC_spin_lock));
		if (v == L_COUNT) { /* value->a += 1 under the lock */
			e(INSN(BPF_LDX | BPF_MEM | BPF_W, 7, 6, 0, 0));
			e(ADDI(7, 1));
			e(INSN(BPF_STX | BPF_MEM | BPF_W, 6, 7, 0, 0));
		}
		if (v != L_NO_UNLOCK) {
			e(MOVR(1, 6));
			e(ADDI(1, 4));
			e(CALL(BPF_FUNC_spin_unlock));
		}
		lp[jeq].off = (int16_t)(nl - jeq - 1);
	}
	e(MOVI(0, 0));
	e(INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uintptr_t)lp;
	a.insn_cnt = nl;
	a.license = (uintptr_t)"GPL";
	logbuf[0] = 0;
	a.log_level = 1;
	a.log_buf = (uintptr_t)logbuf;
	a.log_size = sizeof(logbuf);
	return (int)bpf_a(BPF_PROG_LOAD, &a);
}

static void spin_lock_checks(void)
{
	int btf = prog_btf(), m, plain, nolock, fd;

	if (btf < 0)
		return;
	m = map_btf(btf, BPF_MAP_TYPE_HASH, 4, 8, 1, 7, 0);
	plain = map_btf(-1, BPF_MAP_TYPE_HASH, 4, 8, 0, 0, 0);
	nolock = map_btf(btf, BPF_MAP_TYPE_ARRAY, 4, 8, 1, 5, 0);
	if (!CHECK(m >= 0 && plain >= 0 && nolock >= 0, "maps for bpf_spin_lock", "errno %d", errno))
		return;
	/* Linux 6.1's check_map_prog_compatibility: no type here may use such a map yet */
	expect_prog("socket filter: lock refused", load_locker(m, L_GOOD, BPF_PROG_TYPE_SOCKET_FILTER),
		    EINVAL, "socket filter progs cannot use bpf_spin_lock yet\n");
	expect_prog("perf_event: lock refused", load_locker(m, L_GOOD, BPF_PROG_TYPE_PERF_EVENT),
		    EINVAL, "tracing progs cannot use bpf_spin_lock yet\n");
	expect_prog("kprobe: even a count refused", load_locker(m, L_COUNT, BPF_PROG_TYPE_KPROBE),
		    EINVAL, "tracing progs cannot use bpf_spin_lock yet\n");
	expect_prog("tracepoint: no unlock, refused first for the map",
		    load_locker(m, L_NO_UNLOCK, BPF_PROG_TYPE_TRACEPOINT), EINVAL,
		    "tracing progs cannot use bpf_spin_lock yet\n");
	/* without a lock in the value, the helper's own checks */
	expect_prog("a map without BTF", load_locker(plain, L_GOOD, BPF_PROG_TYPE_PERF_EVENT), EACCES,
		    "map '' has to have BTF in order to use bpf_spin_lock\n");
	expect_prog("a value without a lock", load_locker(nolock, L_GOOD, BPF_PROG_TYPE_PERF_EVENT),
		    EACCES, "map '' doesn't have 'struct bpf_spin_lock'\n");
	fd = load_locker(nolock, L_COUNT, BPF_PROG_TYPE_PERF_EVENT);
	expect_prog("a lockless value, counted under a lock call: refused", fd, EACCES,
		    "map '' doesn't have 'struct bpf_spin_lock'\n");
	close(m);
	close(plain);
	close(nolock);
	close(btf);
}

int main(void)
{
	tap_init("t_bpf_btf", 60);
	header_checks();
	kind_checks();
	log_checks();
	object_checks();
	prog_checks();
	map_checks();
	spin_lock_checks();
	return tap_done();
}
