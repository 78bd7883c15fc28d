/* t_bpf_user_ringbuf: BPF_MAP_TYPE_USER_RINGBUF and bpf_user_ringbuf_drain as Linux 6.1 has
 * them.  The map: the ring buffer's creation rules, ENOTSUPP element commands, mmap with the
 * consumer page read-only (EPERM writable) and the producer page and data writable, poll
 * writable while there is room.  User space writes records by hand (8-byte header, then the
 * producer position); a clang-built perf_event program (tests/user/bpf/userrb.bpf.c, loaded by
 * libbpf: Linux wants BTF func_info for callbacks) drains them on page faults: each sample reaches
 * the callback as a dynptr (dynptr_read, dynptr_data), DISCARD samples are skipped and not
 * counted, a BUSY one stops the drain, a record past the producer position is -EINVAL, flags
 * other than the wakeup ones -EINVAL, the consumer position advances.  The verifier: the map
 * for this helper only and this helper for the map only, a callback's dynptr that cannot be
 * submitted.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"
#include "bpf_insn.h"

#include <poll.h>
#include <sys/mman.h>

#define PG 4096
#define ENOTSUPP_ 524
#define ST_W(o, i) INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, o, i)
#define ST_DW(o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, o, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define FP(r, o) MOV_X(r, 10), ADD_K(r, o)

extern const char _binary_userrb_bpf_o_start[], _binary_userrb_bpf_o_end[];

static char logbuf[65536];
static int res, urb, params;

static uint64_t res_get(uint32_t k)
{
	uint64_t v = 0;

	map_elem(BPF_MAP_LOOKUP_ELEM, res, &k, &v, 0);
	return v;
}

static void res_clear(void)
{
	uint64_t z = 0;

	for (uint32_t k = 0; k < 8; k++)
		map_elem(BPF_MAP_UPDATE_ELEM, res, &k, &z, 0);
}

static struct bpf_object *open_obj(void)
{
	return bpf_object__open_mem(_binary_userrb_bpf_o_start,
				    (size_t)(_binary_userrb_bpf_o_end - _binary_userrb_bpf_o_start), NULL);
}

/* Load program name of userrb.bpf.o alone: 0 or the load's -errno, the log in logbuf. */
static int load_one(const char *name)
{
	return load_one_prog(_binary_userrb_bpf_o_start, _binary_userrb_bpf_o_end, name, logbuf,
			     sizeof(logbuf));
}


struct ring {
	volatile uint64_t *cons, *prod;
	uint8_t *data;
};

/* Append a record of len bytes (value v in its first 8) with header flags; publish it. */
static void produce(struct ring *r, uint32_t len, uint64_t v, uint32_t flags)
{
	uint64_t pos = *r->prod;
	uint32_t hdr[2] = { len | flags, 0 };

	memcpy(r->data + (pos & (PG - 1)) + 8, &v, 8);
	memcpy(r->data + (pos & (PG - 1)), hdr, 8);
	__atomic_store_n(r->prod, pos + ((len + 8 + 7) & ~7u), __ATOMIC_RELEASE);
}

static void map_rules(void)
{
	uint32_t k = 0, v;
	void *m;
	int fd;

	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_USER_RINGBUF, 4, 0, PG, 0), EINVAL, "key_size 4: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 3 * PG, 0), EINVAL, "max_entries not a power of 2: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PG, BPF_F_RDONLY_PROG), EINVAL, "BPF_F_RDONLY_PROG: EINVAL");
	fd = map_create(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PG, 0);
	if (!CHECK(fd >= 0, "a user ring buffer of one page", "%s", strerror(errno)))
		return;
	EXPECT_ERRNO(map_elem(BPF_MAP_LOOKUP_ELEM, fd, NULL, &v, 0), ENOTSUPP_, "LOOKUP: ENOTSUPP (524)");
	EXPECT_ERRNO(map_elem(BPF_MAP_UPDATE_ELEM, fd, NULL, &v, 0), ENOTSUPP_, "UPDATE: ENOTSUPP (524)");
	EXPECT_ERRNO(map_elem(BPF_MAP_UPDATE_ELEM, fd, &k, &v, 0), EINVAL, "UPDATE with a key: EINVAL");
	errno = 0;
	m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m == MAP_FAILED && errno == EPERM, "the consumer page writable: EPERM", "%p %s", m, strerror(errno));
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "the consumer page read-only", "%s", strerror(errno));
	if (m != MAP_FAILED)
		munmap(m, PG);
	m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PG);
	CHECK(m != MAP_FAILED, "the producer page and the data writable", "%s", strerror(errno));
	if (m != MAP_FAILED)
		munmap(m, 3 * PG);
	{
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

		CHECK(poll(&p, 1, 0) == 1 && p.revents == POLLOUT, "an empty user ring polls writable", "revents %#x",
		      p.revents);
	}
	close(fd);
}

static void verifier(void)
{
	int u = map_create(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, PG, 0), fd, err;
	struct bpf_insn output[] = { ST_DW(-8, 0), LD_MAP(1, u), FP(2, -8), MOV_K(3, 8), MOV_K(4, 0),
				     CALL(BPF_FUNC_ringbuf_output), RET0 };

	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, output, N_INSNS(output), logbuf, sizeof(logbuf));
	CHECK(fd < 0 && errno == EINVAL && strstr(logbuf, "cannot pass map_type 31 into func bpf_ringbuf_output#130"),
	      "ringbuf_output on a USER_RINGBUF: EINVAL", "fd %d %s\n%s", fd, strerror(errno), logbuf);
	close(u);
	err = load_one("drain_rb");
	CHECK(err == -EINVAL && strstr(logbuf, "cannot pass map_type 27 into func bpf_user_ringbuf_drain#209"),
	      "user_ringbuf_drain on a RINGBUF: EINVAL", "err %d\n%s", err, logbuf);
	err = load_one("submit_cb");
	CHECK(err == -EINVAL && strstr(logbuf, "arg 1 is an unacquired reference"),
	      "a callback submitting its dynptr: EINVAL", "err %d\n%s", err, logbuf);
}

static void set_flags(uint64_t f)
{
	uint32_t k = 0;

	map_elem(BPF_MAP_UPDATE_ELEM, params, &k, &f, 0);
}

int main(void)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct ring r;
	int err;

	tap_init("t_bpf_user_ringbuf", 60);
	libbpf_set_print(faults_quiet);
	map_rules();
	verifier();
	obj = open_obj();
	if (!CHECK(obj, "bpf_object__open_mem", "errno %d", errno))
		return tap_done();
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), "drain"));
	err = bpf_object__load(obj);
	if (!CHECK(!err, "the drain program loads", "err %d", err))
		return tap_done();
	prog = bpf_object__find_program_by_name(obj, "drain");
	res = bpf_object__find_map_fd_by_name(obj, "res");
	urb = bpf_object__find_map_fd_by_name(obj, "urb");
	params = bpf_object__find_map_fd_by_name(obj, "params");
	r.cons = mmap(NULL, PG, PROT_READ, MAP_SHARED, urb, 0);
	r.prod = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, urb, PG);
	r.data = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, urb, 2 * PG);
	if (!CHECK(r.cons != MAP_FAILED && r.prod != MAP_FAILED && r.data != MAP_FAILED, "the ring maps", "%s",
		   strerror(errno)))
		return tap_done();

	/* two samples and a discarded one between them */
	produce(&r, 8, 0x100, 0);
	produce(&r, 8, 0x7777, 1u << 30);
	produce(&r, 8, 0x23, 0);
	{
		struct pollfd p = { .fd = urb, .events = POLLOUT };

		CHECK(poll(&p, 1, 0) == 1, "with 48 of 4096 bytes used it polls writable", "revents %#x", p.revents);
	}
	res_clear();
	err = run_on_faults(prog, 2);
	CHECK(!err, "the drain program runs on page faults", "err %d", err);
	CHECK(res_get(0) == 2 && res_get(1) == 2, "2 samples drained (the discarded one not counted), 2 callbacks",
	      "drained %llu, callbacks %llu", (unsigned long long)res_get(0), (unsigned long long)res_get(1));
	CHECK(res_get(2) == 0x123, "the callbacks read 0x100 and 0x23 through their dynptrs", "sum %#llx",
	      (unsigned long long)res_get(2));
	CHECK(res_get(3) == 2, "reading 8 bytes at offset 1 of an 8-byte sample fails (-E2BIG)", "%llu",
	      (unsigned long long)res_get(3));
	CHECK(res_get(4) == 2, "dynptr_data of a user ring sample: a pointer (6.1's dynptr is writable)", "%llu",
	      (unsigned long long)res_get(4));
	CHECK(*r.cons == 48 && *r.prod == 48, "the consumer position reaches the producer's (48)", "cons %llu prod %llu",
	      (unsigned long long)*r.cons, (unsigned long long)*r.prod);

	/* a BUSY sample stops the drain; then the same sample completed */
	produce(&r, 8, 0x5, 1u << 31);
	res_clear();
	err = run_on_faults(prog, 2);
	CHECK(!err && res_get(0) == 0 && *r.cons == 48, "a BUSY sample is not consumed", "err %d drained %llu cons %llu",
	      err, (unsigned long long)res_get(0), (unsigned long long)*r.cons);
	__atomic_store_n((uint32_t *)(r.data + 48), 8u, __ATOMIC_RELEASE);
	err = run_on_faults(prog, 2);
	CHECK(!err && res_get(0) == 1 && res_get(2) == 5 && *r.cons == 64, "once complete it is",
	      "err %d drained %llu read %llu cons %llu", err, (unsigned long long)res_get(0),
	      (unsigned long long)res_get(2), (unsigned long long)*r.cons);

	/* flags 4: -EINVAL, nothing consumed */
	produce(&r, 8, 0x9, 0);
	res_clear();
	set_flags(4);
	err = run_on_faults(prog, 1);
	CHECK(!err && (int64_t)res_get(0) < 0 && (int64_t)res_get(0) % EINVAL == 0 && *r.cons == 64,
	      "drain with flags 4: -EINVAL and nothing consumed", "err %d r0 sum %lld cons %llu", err,
	      (long long)res_get(0), (unsigned long long)*r.cons);
	set_flags(0);
	/* a record longer than the producer position says: -EINVAL */
	__atomic_store_n((uint32_t *)(r.data + 64), 64u, __ATOMIC_RELEASE);
	res_clear();
	err = run_on_faults(prog, 1);
	CHECK(!err && (int64_t)res_get(0) < 0 && (int64_t)res_get(0) % EINVAL == 0 && res_get(1) == 0,
	      "a sample past the producer position: -EINVAL", "err %d r0 sum %lld", err, (long long)res_get(0));
	bpf_object__close(obj);
	return tap_done();
}
