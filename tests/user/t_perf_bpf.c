/* t_perf_bpf: BPF_PROG_TYPE_PERF_EVENT programs on a sampling page-faults event (period 4 over
 * 64 new pages, about 16 overflows): PERF_EVENT_IOC_SET_BPF and BPF_LINK_CREATE (BPF_PERF_EVENT)
 * errnos (EBADF, EINVAL, EEXIST); the program sees sample_period and the fault address in its
 * ctx, bpf_get_attach_cookie gives the link's cookie, bpf_perf_prog_read_value the count;
 * returning 0 drops every sample (the ring stays empty) while the count still advances; closing
 * the link detaches the program.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-11-29.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096
#define DATA_PAGES 8

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX64(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX64(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST32(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* value: runs, addr, sample_period, cookie, counter (from perf_prog_read_value) */
struct val {
	uint64_t runs, addr, period, cookie, counter;
};

static int load_prog(int type, int map_fd, int ret)
{
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		MOV64_REG(1, 6),
		CALL(BPF_FUNC_get_attach_cookie),
		MOV64_REG(9, 0),
		MOV64_REG(1, 6),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -24),
		MOV64_IMM(3, 24),
		CALL(BPF_FUNC_perf_prog_read_value),
		LDX64(7, 6, offsetof(struct bpf_perf_event_data, addr)),
		LDX64(8, 6, offsetof(struct bpf_perf_event_data, sample_period)),
		ST32(10, -28, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -28),
		CALL(BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 9, 0),
		MOV64_IMM(1, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		STX64(0, 7, 8),
		STX64(0, 8, 16),
		STX64(0, 9, 24),
		LDX64(1, 10, -24),
		STX64(0, 1, 32),
		MOV64_IMM(0, ret),
		EXIT(),
		MOV64_IMM(0, ret),
		EXIT(),
	};
	struct bpf_insn trivial[] = { MOV64_IMM(0, 0), EXIT() };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	if (type == BPF_PROG_TYPE_PERF_EVENT) {
		a.insns = (uintptr_t)p;
		a.insn_cnt = sizeof(p) / sizeof(p[0]);
	} else {
		a.insns = (uintptr_t)trivial;
		a.insn_cnt = 2;
	}
	a.license = (uintptr_t) "GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

static int link_create(int prog, int target, int attach_type, uint32_t flags, uint64_t cookie)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog;
	a.link_create.target_fd = target;
	a.link_create.attach_type = attach_type;
	a.link_create.flags = flags;
	a.link_create.perf_event.bpf_cookie = cookie;
	return (int)sys_bpf(BPF_LINK_CREATE, &a);
}

static int map_fd;

static struct val map_get(void)
{
	struct val v = { 0 };
	uint32_t key = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map_fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
	return v;
}

struct ev {
	int fd;
	struct perf_event_mmap_page *m;
};

static int ev_open(struct ev *e)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 4;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
	a.disabled = 1;
	e->fd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->m = mmap(NULL, (1 + DATA_PAGES) * PG, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
	return e->m == MAP_FAILED ? -1 : 0;
}

static void ev_close(struct ev *e)
{
	munmap(e->m, (1 + DATA_PAGES) * PG);
	close(e->fd);
}

/* Touch 64 new pages with the event on; the samples in the ring and the event's count. */
static uint64_t run(struct ev *e, uint64_t *count, uint64_t *lo, uint64_t *hi)
{
	char *buf = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t tail = e->m->data_tail, head, samples = 0;
	char *data = (char *)e->m + PG;

	*lo = (uint64_t)buf;
	*hi = (uint64_t)buf + 64 * PG;
	ioctl(e->fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(e->fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 64; i++)
		buf[i * PG] = 1;
	ioctl(e->fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&e->m->data_head, __ATOMIC_ACQUIRE);
	while (tail < head) {
		struct perf_event_header *h = (void *)(data + (tail % (DATA_PAGES * PG)));

		samples += h->type == PERF_RECORD_SAMPLE;
		tail += h->size;
	}
	__atomic_store_n(&e->m->data_tail, tail, __ATOMIC_RELEASE);
	if (read(e->fd, count, sizeof(*count)) != sizeof(*count))
		*count = 0;
	munmap(buf, 64 * PG);
	return samples;
}

int main(void)
{
	union bpf_attr a;
	struct ev e;
	uint64_t count, lo, hi, n;
	struct val v0, v;

	tap_init("t_perf_bpf", 60);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = sizeof(struct val);
	a.max_entries = 1;
	map_fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	int keep = load_prog(BPF_PROG_TYPE_PERF_EVENT, map_fd, 1);
	int drop = load_prog(BPF_PROG_TYPE_PERF_EVENT, map_fd, 0);
	int sock = load_prog(BPF_PROG_TYPE_SOCKET_FILTER, -1, 0);

	if (!CHECK(map_fd >= 0 && keep >= 0 && drop >= 0 && sock >= 0,
		   "load PERF_EVENT programs (map, ctx fields, cookie, perf_prog_read_value)",
		   "map %d keep %d drop %d sock %d errno %d", map_fd, keep, drop, sock, errno))
		return tap_done();
	if (!CHECK(ev_open(&e) == 0, "open and mmap a page-faults event, period 4", "errno %d",
		   errno))
		return tap_done();

	EXPECT_ERRNO(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, -1), EBADF, "SET_BPF fd -1: EBADF");
	EXPECT_ERRNO(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, map_fd), EINVAL,
		     "SET_BPF with a map fd: EINVAL");
	EXPECT_ERRNO(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, sock), EINVAL,
		     "SET_BPF with a SOCKET_FILTER program: EINVAL");
	EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, keep), "SET_BPF a PERF_EVENT program");
	EXPECT_ERRNO(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, keep), EEXIST,
		     "SET_BPF a second program: EEXIST");
	EXPECT_ERRNO(link_create(keep, e.fd, BPF_PERF_EVENT, 0, 1), EEXIST,
		     "LINK_CREATE on an event with a program: EEXIST");

	v0 = map_get();
	n = run(&e, &count, &lo, &hi);
	v = map_get();
	CHECK(n >= 15 && n <= 17, "program returning 1: the samples go out (about 16)",
	      "%llu samples", (unsigned long long)n);
	CHECK(v.runs - v0.runs == n, "the program ran once per sample", "%llu runs, %llu samples",
	      (unsigned long long)(v.runs - v0.runs), (unsigned long long)n);
	CHECK(v.period == 4, "ctx->sample_period is the period", "%llu",
	      (unsigned long long)v.period);
	CHECK(v.addr >= lo && v.addr < hi, "ctx->addr is the fault address", "%#llx not in %#llx..%#llx",
	      (unsigned long long)v.addr, (unsigned long long)lo, (unsigned long long)hi);
	CHECK(v.cookie == 0, "SET_BPF: bpf_get_attach_cookie is 0", "%#llx",
	      (unsigned long long)v.cookie);
	CHECK(v.counter >= 56 && v.counter <= 66, "perf_prog_read_value: the count at the last overflow",
	      "%llu", (unsigned long long)v.counter);
	ev_close(&e);

	/* a program returning 0 drops every sample; the count still advances */
	if (!CHECK(ev_open(&e) == 0, "open a second event", "errno %d", errno))
		return tap_done();
	EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, drop), "SET_BPF a program returning 0");
	v0 = map_get();
	n = run(&e, &count, &lo, &hi);
	v = map_get();
	CHECK(n == 0, "program returning 0: the ring stays empty", "%llu samples",
	      (unsigned long long)n);
	CHECK(v.runs - v0.runs >= 15 && v.runs - v0.runs <= 17, "the program still ran (about 16)",
	      "%llu runs", (unsigned long long)(v.runs - v0.runs));
	CHECK(count >= 64 && count <= 70, "the count still advances (64 faults)", "count %llu",
	      (unsigned long long)count);
	ev_close(&e);

	/* BPF_LINK_CREATE */
	if (!CHECK(ev_open(&e) == 0, "open a third event", "errno %d", errno))
		return tap_done();
	EXPECT_ERRNO(link_create(keep, -1, BPF_PERF_EVENT, 0, 0), EBADF,
		     "LINK_CREATE target fd -1: EBADF");
	EXPECT_ERRNO(link_create(keep, map_fd, BPF_PERF_EVENT, 0, 0), EBADF,
		     "LINK_CREATE target a map fd: EBADF");
	EXPECT_ERRNO(link_create(keep, e.fd, BPF_PERF_EVENT, 1, 0), EINVAL,
		     "LINK_CREATE flags 1: EINVAL");
	EXPECT_ERRNO(link_create(keep, e.fd, BPF_TRACE_FENTRY, 0, 0), EINVAL,
		     "LINK_CREATE attach type FENTRY for a PERF_EVENT program: EINVAL");
	EXPECT_ERRNO(link_create(sock, e.fd, BPF_PERF_EVENT, 0, 0), EINVAL,
		     "LINK_CREATE a SOCKET_FILTER program: EINVAL");
	EXPECT_ERRNO(link_create(-1, e.fd, BPF_PERF_EVENT, 0, 0), EBADF,
		     "LINK_CREATE program fd -1: EBADF");
	int link = link_create(keep, e.fd, BPF_PERF_EVENT, 0, 0xfeedbeef12ull);

	CHECK(link >= 0, "LINK_CREATE BPF_PERF_EVENT with a cookie", "errno %d", errno);
	EXPECT_ERRNO(link_create(keep, e.fd, BPF_PERF_EVENT, 0, 0), EEXIST,
		     "a second link on the event: EEXIST");
	EXPECT_ERRNO(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, drop), EEXIST,
		     "SET_BPF on a linked event: EEXIST");
	v0 = map_get();
	n = run(&e, &count, &lo, &hi);
	v = map_get();
	CHECK(n >= 15 && n <= 17 && v.runs - v0.runs == n, "linked program runs once per sample",
	      "%llu samples %llu runs", (unsigned long long)n, (unsigned long long)(v.runs - v0.runs));
	CHECK(v.cookie == 0xfeedbeef12ull, "bpf_get_attach_cookie is the link's cookie", "%#llx",
	      (unsigned long long)v.cookie);
	close(link);
	v0 = map_get();
	n = run(&e, &count, &lo, &hi);
	v = map_get();
	CHECK(n >= 15 && n <= 17 && v.runs == v0.runs, "closing the link detaches the program",
	      "%llu samples %llu runs", (unsigned long long)n, (unsigned long long)(v.runs - v0.runs));
	EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, drop), "SET_BPF after the link closed");
	ev_close(&e);
	return tap_done();
}
