/*
 * perfdata.c - write a perf.data file (format PERFILE2) that Linux perf 6.1
 * `perf report` and `perf script` read, as described in
 * tools/perf/Documentation/perf.data-file-format.txt.
 *
 * File layout we produce (all little-endian, native):
 *   struct perf_file_header        magic, sizes, sections, feature bitmap
 *   u64 ids[nr_ids]                the event ids, referenced by the attr
 *   struct perf_file_attr          { perf_event_attr (VER7, 128 bytes), ids section }
 *   data                           records, copied from the rings by record.c
 *   struct perf_file_section[nr]   one per feature bit set, in bit order
 *   feature payloads
 * Only one event (one attr) is written. Features: BUILD_ID (empty),
 * HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM,
 * CMDLINE, EVENT_DESC, SAMPLE_TIME.
 *
 * Not written: tracing data, topology, PMU mappings, build-ids of the DSOs.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL  /* "PERFILE2" read as a u64 */
#define FILE_ATTR_SIZE PERF_ATTR_SIZE_VER7 /* perf 6.1 rejects a larger attr */
#define NAME_ALIGN 64

/* Feature bit numbers of perf 6.1's header.h (HEADER_*). */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
	FEAT_BITS = 256,
};

struct file_section {
	uint64_t offset;
	uint64_t size;
};

struct file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct file_section attrs;
	struct file_section data;
	struct file_section event_types;
	uint64_t adds_features[FEAT_BITS / 64];
};
_Static_assert(sizeof(struct file_header) == 104, "perf_file_header is 104 bytes");

/* A growable byte buffer for one feature payload. */
struct buf {
	char *p;
	size_t len, cap;
};

static void buf_put(struct buf *b, const void *src, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;

		while (cap < b->len + len)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, len);
	b->len += len;
}

static void buf_u32(struct buf *b, uint32_t v)
{
	buf_put(b, &v, sizeof(v));
}

static void buf_u64(struct buf *b, uint64_t v)
{
	buf_put(b, &v, sizeof(v));
}

/* perf's do_write_string: u32 len (NUL included, rounded up to 64), then the padded string. */
static void buf_string(struct buf *b, const char *s)
{
	static const char zeros[NAME_ALIGN];
	uint32_t olen = (uint32_t)strlen(s) + 1;
	uint32_t len = (olen + NAME_ALIGN - 1) & ~(uint32_t)(NAME_ALIGN - 1);

	buf_u32(b, len);
	buf_put(b, s, olen);
	buf_put(b, zeros, len - olen);
}

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static void read_line(const char *path, char *out, size_t len, const char *dflt)
{
	FILE *f = fopen(path, "r");

	snprintf(out, len, "%s", dflt);
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static void attr_bytes(struct buf *b, const struct perf_event_attr *attr)
{
	char a[FILE_ATTR_SIZE];

	memset(a, 0, sizeof(a));
	memcpy(a, attr, sizeof(*attr) < sizeof(a) ? sizeof(*attr) : sizeof(a));
	((struct perf_event_attr *)a)->size = FILE_ATTR_SIZE;
	buf_put(b, a, sizeof(a));
}

int perf_data_begin(struct perf_data_file *f, const char *path, const struct perf_event_attr *attr,
		    const char *evname, const uint64_t *ids, int nr_ids)
{
	struct buf b = {0};
	struct file_header hdr;
	uint64_t ids_off = sizeof(hdr);
	int err;

	f->attr = attr;
	f->evname = evname;
	f->ids = ids;
	f->nr_ids = nr_ids;
	f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (f->fd < 0)
		return -errno;
	/* placeholder header; perf_data_finish rewrites it */
	memset(&hdr, 0, sizeof(hdr));
	buf_put(&b, &hdr, sizeof(hdr));
	buf_put(&b, ids, sizeof(uint64_t) * (size_t)nr_ids);
	attr_bytes(&b, attr);
	buf_u64(&b, ids_off);
	buf_u64(&b, sizeof(uint64_t) * (uint64_t)nr_ids);
	f->data_off = b.len;
	f->data_size = 0;
	err = write_all(f->fd, b.p, b.len);
	free(b.p);
	return err;
}

int perf_data_write(struct perf_data_file *f, const void *p, size_t len)
{
	int err = write_all(f->fd, p, len);

	if (!err)
		f->data_size += len;
	return err;
}

static void feat_cpuid(struct buf *b)
{
	char midr[64];

	read_line("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", midr, sizeof(midr),
		  "0x0000000000000000");
	buf_string(b, midr);
}

static void feat_cmdline(struct buf *b, int argc, char **argv)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	buf_u32(b, (uint32_t)argc + 1);
	buf_string(b, n > 0 ? exe : "perf");
	for (int i = 0; i < argc; i++)
		buf_string(b, argv[i]);
}

static void feat_event_desc(struct buf *b, const struct perf_data_file *f)
{
	buf_u32(b, 1);
	buf_u32(b, FILE_ATTR_SIZE);
	attr_bytes(b, f->attr);
	buf_u32(b, (uint32_t)f->nr_ids);
	buf_string(b, f->evname);
	for (int i = 0; i < f->nr_ids; i++)
		buf_u64(b, f->ids[i]);
}

static void feature(struct buf *b, int feat, const struct perf_data_file *f, int argc, char **argv,
		    uint64_t first_ts, uint64_t last_ts)
{
	struct utsname u;
	struct sysinfo si;
	long conf, onln;

	uname(&u);
	switch (feat) {
	case FEAT_BUILD_ID:
		break; /* no build-id records: report falls back to the DSO paths */
	case FEAT_HOSTNAME:
		buf_string(b, u.nodename);
		break;
	case FEAT_OSRELEASE:
		buf_string(b, u.release);
		break;
	case FEAT_VERSION:
		buf_string(b, "6.1.perfkernel");
		break;
	case FEAT_ARCH:
		buf_string(b, u.machine);
		break;
	case FEAT_NRCPUS:
		conf = sysconf(_SC_NPROCESSORS_CONF);
		onln = sysconf(_SC_NPROCESSORS_ONLN);
		buf_u32(b, (uint32_t)(conf > 0 ? conf : 1)); /* nr_cpus_avail */
		buf_u32(b, (uint32_t)(onln > 0 ? onln : 1)); /* nr_cpus_online */
		break;
	case FEAT_CPUDESC:
		buf_string(b, u.machine);
		break;
	case FEAT_CPUID:
		feat_cpuid(b);
		break;
	case FEAT_TOTAL_MEM:
		buf_u64(b, sysinfo(&si) ? 0 : (uint64_t)si.totalram * si.mem_unit / 1024);
		break;
	case FEAT_CMDLINE:
		feat_cmdline(b, argc, argv);
		break;
	case FEAT_EVENT_DESC:
		feat_event_desc(b, f);
		break;
	case FEAT_SAMPLE_TIME:
		buf_u64(b, first_ts);
		buf_u64(b, last_ts);
		break;
	}
}

int perf_data_finish(struct perf_data_file *f, int argc, char **argv, uint64_t first_ts,
		     uint64_t last_ts)
{
	static const int feats[] = {FEAT_BUILD_ID, FEAT_HOSTNAME,   FEAT_OSRELEASE,
				    FEAT_VERSION,  FEAT_ARCH,	    FEAT_NRCPUS,
				    FEAT_CPUDESC,  FEAT_CPUID,	    FEAT_TOTAL_MEM,
				    FEAT_CMDLINE,  FEAT_EVENT_DESC, FEAT_SAMPLE_TIME};
	enum { NR_FEATS = sizeof(feats) / sizeof(feats[0]) };
	struct file_section sec[NR_FEATS];
	struct buf payload = {0};
	struct file_header hdr;
	uint64_t feat_off = f->data_off + f->data_size;
	uint64_t off = feat_off + sizeof(sec);
	int err;

	memset(&hdr, 0, sizeof(hdr));
	for (int i = 0; i < NR_FEATS; i++) {
		size_t before = payload.len;

		feature(&payload, feats[i], f, argc, argv, first_ts, last_ts);
		sec[i].offset = off + before;
		sec[i].size = payload.len - before;
		hdr.adds_features[feats[i] / 64] |= 1ULL << (feats[i] % 64);
	}
	if (lseek(f->fd, (off_t)feat_off, SEEK_SET) < 0)
		return -errno;
	err = write_all(f->fd, sec, sizeof(sec));
	if (!err && payload.len)
		err = write_all(f->fd, payload.p, payload.len);
	free(payload.p);
	if (err)
		return err;

	hdr.magic = PERF_MAGIC2;
	hdr.size = sizeof(hdr);
	hdr.attr_size = FILE_ATTR_SIZE + sizeof(struct file_section);
	hdr.attrs.offset = sizeof(hdr) + sizeof(uint64_t) * (uint64_t)f->nr_ids;
	hdr.attrs.size = hdr.attr_size;
	hdr.data.offset = f->data_off;
	hdr.data.size = f->data_size;
	if (lseek(f->fd, 0, SEEK_SET) < 0)
		return -errno;
	err = write_all(f->fd, &hdr, sizeof(hdr));
	if (close(f->fd) < 0 && !err)
		err = -errno;
	f->fd = -1;
	return err;
}
