/* t_kbtf: the kernel's own BTF, as its clients read it.
 * /sys/kernel/btf/vmlinux as kernel/bpf/sysfs_btf.c makes it: a read-only regular file (0444,
 * open for writing EACCES), st_size the BTF's size, read a page at most per read(2)
 * (kernfs_file_direct_read), SEEK_END and pread at any offset; its bytes are raw BTF (magic
 * 0xeb9f, version 1, header + types + strings = the size) that libbpf's btf__parse and
 * btf__load_vmlinux_btf read, describing struct perf_event_attr as the uapi header does.
 * CO-RE (tests/user/bpf/core.bpf.c, via Debian's libbpf 1.1): a perf_event program reads the
 * current thread's id through its kernel's own thread struct (perfkernel's struct task .tid,
 * Linux's struct task_struct .pid, relocated by libbpf against the running kernel's BTF) and
 * gets gettid(); bpf_core_field_exists / field_offset / type_size answer from the kernel's
 * struct perf_event_attr; a CO-RE read of a field the kernel lacks makes libbpf poison the
 * instruction and the load fails with EINVAL and libbpf's "failed to resolve CO-RE relocation".
 * The same bytes are BTF object 1, named "vmlinux", kernel_btf (what bpftool btf list and
 * bpftrace look for): its info gives them back, and a name buffer too short is ENOSPC with the
 * name cut, as btf_get_info_by_fd.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define VMLINUX "/sys/kernel/btf/vmlinux"

extern const char _binary_core_bpf_o_start[], _binary_core_bpf_o_end[];

/* libbpf's messages, kept for the checks (and shown when one fails) */
static char logbuf[16384];
static size_t loglen;

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG && loglen < sizeof(logbuf) - 1) {
		int n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, ap);

		if (n > 0)
			loglen = loglen + (size_t)n < sizeof(logbuf) - 1 ? loglen + (size_t)n
									: sizeof(logbuf) - 1;
	}
	return 0;
}

/* The file as sysfs serves it: the bytes in *out (malloc'd), their count. */
static long check_file(char **out)
{
	struct stat st;
	long total = 0, first = -1;
	char *buf;
	int fd;

	*out = NULL;
	if (!CHECK(stat(VMLINUX, &st) == 0, "stat " VMLINUX, "errno %d", errno))
		return -1;
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0444, VMLINUX " is a regular file, 0444",
	      "mode %o", st.st_mode);
	CHECK(st.st_size > 24 && st.st_size < (64 << 20), "st_size is the BTF's size", "%lld",
	      (long long)st.st_size);
	errno = 0;
	CHECK(open(VMLINUX, O_WRONLY) < 0 && errno == EACCES, "open O_WRONLY: EACCES", "errno %d",
	      errno);
	errno = 0;
	CHECK(open(VMLINUX, O_RDWR) < 0 && errno == EACCES, "open O_RDWR: EACCES", "errno %d", errno);
	fd = open(VMLINUX, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "open O_RDONLY", "errno %d", errno))
		return -1;
	buf = malloc((size_t)st.st_size + 65536);
	for (;;) {
		long n = read(fd, buf + total, 65536);

		if (first < 0)
			first = n;
		if (n <= 0)
			break;
		total += n;
	}
	CHECK(first == 4096, "read(65536) returns one page (kernfs_file_direct_read)", "%ld", first);
	CHECK(total == st.st_size, "the reads add up to st_size", "%ld of %lld", total,
	      (long long)st.st_size);
	CHECK(lseek(fd, 0, SEEK_END) == st.st_size, "lseek SEEK_END: st_size", "errno %d", errno);
	char c2[2];
	CHECK(pread(fd, c2, 2, st.st_size - 1) == 1 && c2[0] == buf[st.st_size - 1],
	      "pread of the last byte", "errno %d", errno);
	CHECK(pread(fd, c2, 2, st.st_size) == 0, "pread at st_size: 0 (end of file)", "errno %d", errno);
	close(fd);

	struct btf_header h;

	memcpy(&h, buf, sizeof(h));
	CHECK(h.magic == BTF_MAGIC && h.version == BTF_VERSION && h.hdr_len == sizeof(h),
	      "raw BTF: magic 0xeb9f, version 1, 24-byte header", "magic %#x version %u hdr_len %u",
	      h.magic, h.version, h.hdr_len);
	CHECK(h.type_off == 0 && h.str_off == h.type_len &&
		      (long)h.hdr_len + h.type_len + h.str_len == total,
	      "header + types + strings is the file", "types %u+%u strings %u+%u of %ld", h.type_off,
	      h.type_len, h.str_off, h.str_len, total);
	*out = buf;
	return total;
}

static void check_dir(void)
{
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *e;
	int seen = 0;

	if (!CHECK(d, "opendir /sys/kernel/btf", "errno %d", errno))
		return;
	while ((e = readdir(d)))
		seen |= !strcmp(e->d_name, "vmlinux") && e->d_type == DT_REG;
	closedir(d);
	CHECK(seen, "/sys/kernel/btf lists vmlinux (DT_REG)", "not listed");
}

/* The kernel's BTF as libbpf reads it; which thread struct it has: 1 perfkernel's, 2 Linux's. */
static int check_libbpf_btf(long size, int *attr_size)
{
	struct btf *btf = btf__parse(VMLINUX, NULL);
	int flavour = 0;

	*attr_size = -1;
	if (!CHECK(btf, "btf__parse(" VMLINUX ")", "errno %d", errno))
		return 0;
	CHECK(btf__type_cnt(btf) > 100, "it has types", "%u", btf__type_cnt(btf));
	int id = btf__find_by_name_kind(btf, "perf_event_attr", BTF_KIND_STRUCT);

	if (CHECK(id > 0, "struct perf_event_attr is in it", "%d", id)) {
		*attr_size = (int)btf__resolve_size(btf, (uint32_t)id);
		CHECK(*attr_size == sizeof(struct perf_event_attr),
		      "its size is the uapi header's", "%d, header %zu", *attr_size,
		      sizeof(struct perf_event_attr));
		const struct btf_type *t = btf__type_by_id(btf, (uint32_t)id);
		const struct btf_member *m = btf_members(t);
		int off = -1;

		for (unsigned int i = 0; i < btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, m[i].name_off), "config"))
				off = (int)btf_member_bit_offset(t, i);
		CHECK(off == 8 * offsetof(struct perf_event_attr, config),
		      "its config member at the header's offset", "bit %d", off);
	}
	int ours = btf__find_by_name_kind(btf, "task", BTF_KIND_STRUCT);
	int lx = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);

	CHECK((ours > 0) != (lx > 0), "one thread struct: struct task or struct task_struct",
	      "task %d task_struct %d", ours, lx);
	flavour = ours > 0 ? 1 : lx > 0 ? 2 : 0;
	btf__free(btf);

	btf = btf__load_vmlinux_btf();
	CHECK(btf && (long)btf__type_cnt(btf) > 100, "btf__load_vmlinux_btf (libbpf's search)",
	      "errno %d", errno);
	btf__free(btf);
	return flavour;
}

static struct bpf_object *open_core(const char *only)
{
	return open_one_prog(_binary_core_bpf_o_start, _binary_core_bpf_o_end, only);
}

static void check_core(int flavour, int attr_size)
{
	struct bpf_object *obj = open_core("read_tid");
	uint64_t v[8] = { 0 };

	if (!CHECK(obj, "bpf_object__open_mem(core.bpf.o)", "errno %d", errno))
		return;
	loglen = 0;
	int err = bpf_object__load(obj);

	if (!CHECK(!err, "CO-RE load of read_tid (relocated against " VMLINUX ")", "err %d: %s", err,
		   logbuf)) {
		bpf_object__close(obj);
		return;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "read_tid");
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "out");

	EXPECT_OK(run_on_faults(prog, 16), "read_tid on 16 page faults of this thread");
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(map, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	CHECK(v[0] >= 16, "the program ran for each fault", "%llu runs", (unsigned long long)v[0]);
	CHECK(v[1] == (uint64_t)flavour && flavour,
	      "bpf_core_type_exists picked the kernel's own thread struct", "%llu, BTF has %d",
	      (unsigned long long)v[1], flavour);
	CHECK(v[2] == (uint64_t)gettid(), "BPF_CORE_READ of the thread's id is gettid()",
	      "%llu, gettid %d", (unsigned long long)v[2], (int)gettid());
	CHECK(v[3] == 1, "bpf_core_field_exists(perf_event_attr, config): 1", "%llu",
	      (unsigned long long)v[3]);
	CHECK(v[4] == 0, "bpf_core_field_exists(perf_event_attr, a field it lacks): 0", "%llu",
	      (unsigned long long)v[4]);
	CHECK(v[5] == offsetof(struct perf_event_attr, config),
	      "bpf_core_field_offset(perf_event_attr, config): the header's", "%llu",
	      (unsigned long long)v[5]);
	CHECK(attr_size > 0 && v[6] == (uint64_t)attr_size,
	      "bpf_core_type_size(perf_event_attr): the kernel's", "%llu, BTF %d",
	      (unsigned long long)v[6], attr_size);
	bpf_object__close(obj);

	obj = open_core("read_missing");
	if (!CHECK(obj, "bpf_object__open_mem(core.bpf.o) again", "errno %d", errno))
		return;
	loglen = 0;
	logbuf[0] = 0;
	errno = 0;
	err = bpf_object__load(obj);
	CHECK(err == -EINVAL && errno == EINVAL,
	      "a CO-RE read of a field the kernel lacks: the load fails, EINVAL", "err %d errno %d", err,
	      errno);
	/* libbpf finds the poisoned call in the verifier's log ("N: (85) call unknown#195896080",
	 * then "invalid func unknown#195896080") and puts the relocation in its place */
	if (!CHECK(strstr(logbuf, "failed to resolve CO-RE relocation") &&
			   strstr(logbuf, "struct perf_event_attr___kbtf.no_such_field_kbtf"),
		   "libbpf reports the relocation it could not resolve", "not in libbpf's log (stderr)"))
		fprintf(stderr, "%s", logbuf);
	bpf_object__close(obj);
}

/* BTF object 1: the kernel's, with the file's bytes */
static void check_object(const char *raw, long size)
{
	int fd = bpf_btf_get_fd_by_id(1);
	struct bpf_btf_info info;
	char name[16], *data = malloc((size_t)size);
	__u32 len = sizeof(info);

	if (!CHECK(fd >= 0, "BTF_GET_FD_BY_ID 1: the kernel's BTF", "errno %d", errno)) {
		free(data);
		return;
	}
	memset(&info, 0, sizeof(info));
	info.btf = (uintptr_t)data;
	info.btf_size = (__u32)size;
	info.name = (uintptr_t)name;
	info.name_len = sizeof(name);
	CHECK(bpf_obj_get_info_by_fd(fd, &info, &len) == 0, "its info", "errno %d", errno);
	CHECK(info.id == 1 && info.kernel_btf == 1 && strcmp(name, "vmlinux") == 0 &&
		      info.name_len == 7,
	      "id 1, kernel_btf, named vmlinux (name_len 7)", "id %u kernel %u name '%s' len %u",
	      info.id, info.kernel_btf, name, info.name_len);
	CHECK(info.btf_size == size && memcmp(data, raw, (size_t)size) == 0,
	      "its bytes are /sys/kernel/btf/vmlinux's", "%u bytes of %ld", info.btf_size, size);
	memset(&info, 0, sizeof(info));
	memset(name, 'x', sizeof(name));
	info.name = (uintptr_t)name;
	info.name_len = 4;
	len = sizeof(info);
	errno = 0;
	CHECK(bpf_obj_get_info_by_fd(fd, &info, &len) < 0 && errno == ENOSPC &&
		      memcmp(name, "vml", 4) == 0 && info.name_len == 7,
	      "a 4-byte name buffer: ENOSPC, 'vml' and its NUL, name_len 7", "errno %d '%.4s' %u",
	      errno, name, info.name_len);
	close(fd);
	free(data);
}

int main(void)
{
	char *raw;
	int attr_size;

	tap_init("t_kbtf", 60);
	libbpf_set_print(keep_log);
	long size = check_file(&raw);

	check_dir();
	if (size > 0) {
		int flavour = check_libbpf_btf(size, &attr_size);

		check_core(flavour, attr_size);
		check_object(raw, size);
	}
	free(raw);
	return tap_done();
}
