/* t_bpf_mmap: mmap of BPF_F_MMAPABLE arrays (libbpf's global data: .data/.rodata/.bss) as
 * root: values written through the mapping are what lookups return and the other way round;
 * MAP_PRIVATE, an offset past the array, and a map without BPF_F_MMAPABLE get EINVAL; a hash
 * map gets 524 (the kernel's ENOTSUPP, which Linux returns here); FREEZE with a writable mapping gets EBUSY, a frozen map refuses PROT_WRITE
 * (EPERM) and still maps read-only.
 * Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29. */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_bpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int create(int type, unsigned vs, unsigned max, unsigned flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static long elem(int cmd, int fd, uint32_t key, uint64_t *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)val;
	return sys_bpf(cmd, &a);
}

static long freeze(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	return sys_bpf(BPF_MAP_FREEZE, &a);
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t v;

	tap_init("t_bpf_mmap", 60);
	if (geteuid() != 0) {
		tap_skip("all", "needs root");
		return tap_done();
	}
	int fd = create(BPF_MAP_TYPE_ARRAY, 8, 512, BPF_F_MMAPABLE); /* one page */

	if (!CHECK(fd >= 0, "MAP_CREATE ARRAY BPF_F_MMAPABLE", "errno %d", errno))
		return tap_done();
	uint64_t *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (!CHECK(m != MAP_FAILED, "mmap shared read-write", "errno %d", errno))
		return tap_done();
	m[7] = 0x1122334455667788ull;
	CHECK(elem(BPF_MAP_LOOKUP_ELEM, fd, 7, &v) == 0 && v == 0x1122334455667788ull,
	      "a store through the mapping is what lookup returns", "v %#llx", (unsigned long long)v);
	v = 42;
	CHECK(elem(BPF_MAP_UPDATE_ELEM, fd, 300, &v) == 0 && m[300] == 42,
	      "an update is visible through the mapping", "m[300] %llu", (unsigned long long)m[300]);
	EXPECT_ERRNO(mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0), EINVAL, "MAP_PRIVATE -> EINVAL");
	EXPECT_ERRNO(mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, pg), EINVAL,
		     "offset past the array -> EINVAL");
	EXPECT_ERRNO(mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, 0), EINVAL,
		     "length past the array -> EINVAL");
	EXPECT_ERRNO(freeze(fd), EBUSY, "FREEZE with a writable mapping -> EBUSY");
	CHECK(munmap(m, pg) == 0, "munmap", "errno %d", errno);
	EXPECT_OK(freeze(fd), "FREEZE once the writable mapping is gone");
	EXPECT_ERRNO(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EPERM,
		     "frozen map: PROT_WRITE mapping -> EPERM");
	m = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED && m[300] == 42, "frozen map: read-only mapping shows the values",
	      "errno %d", errno);
	if (m != MAP_FAILED)
		munmap(m, pg);
	close(fd);

	int plain = create(BPF_MAP_TYPE_ARRAY, 8, 512, 0);

	EXPECT_ERRNO(mmap(NULL, pg, PROT_READ, MAP_SHARED, plain, 0), EINVAL,
		     "array without BPF_F_MMAPABLE -> EINVAL");
	close(plain);
	int hash = create(BPF_MAP_TYPE_HASH, 8, 16, 0);

	EXPECT_ERRNO(mmap(NULL, pg, PROT_READ, MAP_SHARED, hash, 0), 524,
		     "hash map -> 524 (ENOTSUPP)");
	close(hash);
	return tap_done();
}
