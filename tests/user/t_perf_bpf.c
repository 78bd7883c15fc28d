/* t_perf_bpf: BPF_PROG_TYPE_PERF_EVENT programs on a sampling page-faults event (period 4 over
 * 64 new pages, about 16 overflows): PERF_EVENT_IOC_SET_BPF and BPF_LINK_CREATE (BPF_PERF_EVENT)
 * errnos (EBADF, EINVAL, EEXIST); the program sees sample_period and the fault address in its
 * ctx, bpf_get_attach_cookie gives the link's cookie, bpf_perf_prog_read_value the count;
 * returning 0 drops every sample (the ring stays empty) while the count still advances; closing
 * the link detaches the program.
 * Also a hardware (cycles) event, bpf_get_stackid (user stacks, and kernel stacks from
 * cpu-clock samples inside write()), bpf_get_stack, and
 * bpf_perf_event_output into a bpf-output event in a PERF_EVENT_ARRAY (PERF_SAMPLE_RAW).
 * And issue 14's "count" program (bpf_get_current_pid_tgid, a HASH lookup keyed by it, an atomic
 * add, an update on first sight) with 8-byte keys and 4-byte ones (the tid), JIT-compiled and
 * interpreted (net.core.bpf_jit_enable 1 and 0): each key counts every sample of this thread.
 * Passes on Linux 6.1 (refvm.sh --smp 2), 2026-12-01 (78/78).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "sys_bpf.h"
#include "sys_perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define DATA_PAGES 8

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

static int load_type = BPF_PROG_TYPE_PERF_EVENT; /* what load_insns loads */

static int load_insns(const struct bpf_insn *p, unsigned int n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = load_type;
	a.insns = (uintptr_t)p;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

/* bpf_perf_event_output(ctx, array, index 0, &ctx->addr, 8); return 0 */
static int load_output_prog(int array_fd)
{
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		LDX64(7, 6, offsetof(struct bpf_perf_event_data, addr)),
		STX64(10, 7, -8),
		MOV64_REG(1, 6),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, array_fd),
		INSN(0, 0, 0, 0, 0),
		MOV64_IMM(3, 0),
		MOV64_REG(4, 10),
		ADD64_IMM(4, -8),
		MOV64_IMM(5, 8),
		CALL(BPF_FUNC_perf_event_output),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	return load_insns(p, sizeof(p) / sizeof(p[0]));
}

/* id = bpf_get_stackid(ctx, stacks, flags); if id >= 0: map[0].cookie = 1 << 32 | id; return 1 */
static int load_stack_prog(int stacks_fd, int flags)
{
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, stacks_fd),
		INSN(0, 0, 0, 0, 0),
		MOV64_IMM(3, flags),
		CALL(BPF_FUNC_get_stackid),
		MOV64_REG(7, 0),
		INSN(BPF_JMP | BPF_JSLT | BPF_K, 0, 0, 11, 0),
		MOV64_IMM(1, 1), /* r7 = id | 1 << 32: "an id was stored" (ids start at 0) */
		INSN(BPF_ALU64 | BPF_LSH | BPF_K, 1, 0, 0, 32),
		INSN(BPF_ALU64 | BPF_OR | BPF_X, 7, 1, 0, 0),
		ST32(10, -4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0),
		STX64(0, 7, 24),
		MOV64_IMM(0, 1),
		EXIT(),
	};
	return load_insns(p, sizeof(p) / sizeof(p[0]));
}

/* n = bpf_get_stack(ctx, buf[8], 64, BPF_F_USER_STACK); map[0].cookie = n, .counter = buf[0] */
static int load_get_stack_prog(void)
{
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -64),
		MOV64_REG(1, 6),
		MOV64_IMM(3, 64),
		MOV64_IMM(4, BPF_F_USER_STACK),
		CALL(BPF_FUNC_get_stack),
		MOV64_REG(7, 0),
		ST32(10, -68, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -68),
		CALL(BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5, 0),
		STX64(0, 7, 24),
		LDX64(1, 10, -64),
		STX64(0, 1, 32),
		MOV64_IMM(0, 1),
		EXIT(),
		MOV64_IMM(0, 1),
		EXIT(),
	};
	return load_insns(p, sizeof(p) / sizeof(p[0]));
}

/* *(key) in map counts up: lookup, atomic add of 1, or update(key, 1) on first sight; the key
 * at r10 + key_off, r10 - 24 free for the value */
static unsigned int count_insns(struct bpf_insn *p, int map, int16_t key_off)
{
	unsigned int n = 0;

	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = MOV64_REG(2, 10);
	p[n++] = ADD64_IMM(2, key_off);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0);
	p[n++] = MOV64_IMM(1, 1);
	p[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD);
	p[n++] = INSN(BPF_JMP | BPF_JA, 0, 0, 9, 0);
	p[n++] = INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -24, 1);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = MOV64_REG(2, 10);
	p[n++] = ADD64_IMM(2, key_off);
	p[n++] = MOV64_REG(3, 10);
	p[n++] = ADD64_IMM(3, -24);
	p[n++] = MOV64_IMM(4, BPF_ANY);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	return n;
}

static void map_zero(void)
{
	struct val v = { 0 };
	uint32_t key = 0;

	bpf_map_elem(BPF_MAP_UPDATE_ELEM, map_fd, &key, &v, 0);
}

static struct val map_get(void)
{
	struct val v = { 0 };
	uint32_t key = 0;

	bpf_map_elem(BPF_MAP_LOOKUP_ELEM, map_fd, &key, &v, 0);
	return v;
}

static uint64_t last_ip; /* PERF_SAMPLE_IP of the last sample run() saw */

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
	e->fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
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

		if (h->type == PERF_RECORD_SAMPLE) {
			samples++;
			last_ip = *(uint64_t *)(h + 1);
		}
		tail += h->size;
	}
	__atomic_store_n(&e->m->data_tail, tail, __ATOMIC_RELEASE);
	if (read(e->fd, count, sizeof(*count)) != sizeof(*count))
		*count = 0;
	munmap(buf, 64 * PG);
	return samples;
}

/* issue 14's count program, keyed by pid_tgid (8 bytes) and by the tid (4), with the JIT on
 * (jit 1) or off (0) */
static void count_case(int jit)
{
	int h8 = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, 64, 0);
	int h4 = bpf_map_new(BPF_MAP_TYPE_HASH, 4, 8, 64, 0);
	uint64_t pid_tgid = (uint64_t)getpid() << 32 | (uint32_t)syscall(SYS_gettid), k8 = pid_tgid;
	uint64_t count, lo, hi, n, v8 = 0, v4 = 0;
	uint32_t k4 = (uint32_t)pid_tgid;
	struct bpf_insn p[64];
	unsigned int i = 0;
	struct ev e;
	int prog;

	p[i++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[i++] = STX64(10, 0, -8);
	p[i++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -16, 0);
	i += count_insns(p + i, h8, -8);
	i += count_insns(p + i, h4, -16);
	p[i++] = MOV64_IMM(0, 1);
	p[i++] = EXIT();
	prog = h8 >= 0 && h4 >= 0 ? load_insns(p, i) : -1;
	if (!CHECK(prog >= 0,
		   jit ? "count program, JIT-compiled: loads" : "count program, interpreted: loads",
		   "maps %d %d errno %d", h8, h4, errno))
		goto out;
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	CHECK(sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 && (info.jited_prog_len != 0) == jit,
	      jit ? "count program: JIT-compiled (jited_prog_len)" : "count program: interpreted",
	      "jited_prog_len %u errno %d", info.jited_prog_len, errno);
	if (CHECK(ev_open(&e) == 0 && ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, prog) == 0,
		  jit ? "count program, JIT-compiled: on a page-faults event"
		      : "count program, interpreted: on a page-faults event", "errno %d", errno)) {
		n = run(&e, &count, &lo, &hi);
		bpf_map_elem(BPF_MAP_LOOKUP_ELEM, h8, &k8, &v8, 0);
		bpf_map_elem(BPF_MAP_LOOKUP_ELEM, h4, &k4, &v4, 0);
		CHECK(n >= 15 && v8 == n && v4 == n,
		      jit ? "JIT-compiled: pid_tgid and tid keys count every sample"
			  : "interpreted: pid_tgid and tid keys count every sample",
		      "%llu samples, key %#llx: %llu, key %u: %llu", (unsigned long long)n,
		      (unsigned long long)k8, (unsigned long long)v8, k4, (unsigned long long)v4);
		ev_close(&e);
	}
	close(prog);
out:
	close(h8);
	close(h4);
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

	/* a hardware event: cycles in user mode, period 100000, until 10 overflows (QEMU's
	 * PMUv3 has no instructions event on every CPU model; cycles it always has) */
	struct perf_event_attr ha;

	memset(&ha, 0, sizeof(ha));
	ha.size = sizeof(ha);
	ha.type = PERF_TYPE_HARDWARE;
	ha.config = PERF_COUNT_HW_CPU_CYCLES;
	ha.sample_period = 100000;
	ha.sample_type = PERF_SAMPLE_IP;
	ha.exclude_kernel = 1;
	ha.exclude_hv = 1;
	ha.disabled = 1;
	for (int ret = 1; ret >= 0; ret--) {
		int hfd = (int)sys_perf_event_open(&ha, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		struct perf_event_mmap_page *hm =
			hfd >= 0 ? mmap(NULL, (1 + DATA_PAGES) * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
					hfd, 0)
				 : MAP_FAILED;

		if (!CHECK(hm != MAP_FAILED, "open and mmap cycles, period 100000", "errno %d",
			   errno))
			break;
		EXPECT_OK(ioctl(hfd, PERF_EVENT_IOC_SET_BPF, ret ? keep : drop),
			  ret ? "SET_BPF (returns 1) on a hardware event"
			      : "SET_BPF (returns 0) on a hardware event");
		v0 = map_get();
		/* QEMU's cycles follow host time: spin until 10 overflows ran (or 10 s) */
		time_t t0 = time(NULL);

		ioctl(hfd, PERF_EVENT_IOC_ENABLE, 0);
		do {
			for (volatile int i = 0; i < 100000; i++)
				;
			v = map_get();
		} while (v.runs - v0.runs < 10 && time(NULL) - t0 < 10);
		ioctl(hfd, PERF_EVENT_IOC_DISABLE, 0);
		v = map_get();
		n = 0;
		for (uint64_t t = hm->data_tail, hd = hm->data_head; t < hd;) {
			struct perf_event_header *h = (void *)((char *)hm + PG + t % (DATA_PAGES * PG));

			n += h->type == PERF_RECORD_SAMPLE;
			t += h->size;
		}
		if (read(hfd, &count, sizeof(count)) != sizeof(count))
			count = 0;
		if (ret) {
			CHECK(n >= 10 && v.runs - v0.runs == n,
			      "hardware overflows run the program, samples go out", "%llu samples, %llu runs",
			      (unsigned long long)n, (unsigned long long)(v.runs - v0.runs));
		} else {
			CHECK(n == 0 && v.runs - v0.runs >= 10,
			      "hardware overflows: returning 0 drops every sample", "%llu samples, %llu runs",
			      (unsigned long long)n, (unsigned long long)(v.runs - v0.runs));
			CHECK(count >= 1000000, "and the count still advances", "count %llu",
			      (unsigned long long)count);
		}
		munmap(hm, (1 + DATA_PAGES) * PG);
		close(hfd);
	}

	/* bpf_get_stackid with BPF_F_USER_STACK: the stack's first entry is the sample's ip */
	int stacks = bpf_map_new(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 16, 64, 0);
	int sprog = stacks >= 0 ? load_stack_prog(stacks, BPF_F_USER_STACK) : -1;

	if (CHECK(sprog >= 0 && ev_open(&e) == 0, "STACK_TRACE map, get_stackid program, event",
		  "stacks %d prog %d errno %d", stacks, sprog, errno)) {
		uint64_t ips[16] = { 0 };
		uint32_t id;

		EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, sprog), "SET_BPF the get_stackid program");
		n = run(&e, &count, &lo, &hi);
		v = map_get();
		id = (uint32_t)v.cookie;
		CHECK(n >= 15 && v.cookie >> 32 == 1, "get_stackid returns a stack id", "%#llx",
		      (unsigned long long)v.cookie);
		EXPECT_OK(bpf_map_elem(BPF_MAP_LOOKUP_ELEM, stacks, &id, ips, 0), "look the stack up by id");
		CHECK(ips[0] == last_ip && ips[1] != 0,
		      "the user stack starts at the sample's ip, then its callers", "%#llx %#llx vs %#llx",
		      (unsigned long long)ips[0], (unsigned long long)ips[1],
		      (unsigned long long)last_ip);
		ev_close(&e);
	}

	/* bpftrace's stack map for ustack/kstack: 131072 ids of 127 frames, 133 MB that Linux
	 * allocates at create time; ids from a sampling program look up as above */
	int big = bpf_map_new(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 127, 131072, 0);
	int bprog = big >= 0 ? load_stack_prog(big, BPF_F_USER_STACK) : -1;

	if (CHECK(bprog >= 0 && ev_open(&e) == 0, "STACK_TRACE map of 131072 x 127 frames",
		  "map %d prog %d errno %d", big, bprog, errno)) {
		uint64_t ips[127] = { 0 };
		uint32_t id;

		EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, bprog), "SET_BPF on the big stack map");
		map_zero();
		n = run(&e, &count, &lo, &hi);
		v = map_get();
		id = (uint32_t)v.cookie;
		CHECK(n >= 15 && v.cookie >> 32 == 1 && id < 131072,
		      "get_stackid into the big map returns an id", "%#llx",
		      (unsigned long long)v.cookie);
		EXPECT_OK(bpf_map_elem(BPF_MAP_LOOKUP_ELEM, big, &id, ips, 0), "look it up in the big map");
		CHECK(ips[0] == last_ip, "the big map's stack starts at the sample's ip",
		      "%#llx vs %#llx", (unsigned long long)ips[0], (unsigned long long)last_ip);
		ev_close(&e);
	}
	if (bprog >= 0)
		close(bprog);
	if (big >= 0)
		close(big);

	/* bpf_get_stack with BPF_F_USER_STACK into the program's stack */
	int gprog = load_get_stack_prog();

	if (CHECK(gprog >= 0 && ev_open(&e) == 0, "get_stack program and event", "prog %d errno %d",
		  gprog, errno)) {
		map_zero();
		EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, gprog), "SET_BPF the get_stack program");
		n = run(&e, &count, &lo, &hi);
		v = map_get();
		CHECK(n >= 15 && v.cookie >= 16 && v.cookie <= 64 && v.cookie % 8 == 0,
		      "get_stack returns the bytes written (8 per frame)", "%lld", (long long)v.cookie);
		CHECK(v.counter == last_ip, "its first frame is the sample's ip", "%#llx vs %#llx",
		      (unsigned long long)v.counter, (unsigned long long)last_ip);
		ev_close(&e);
	}

	/* kernel stacks: cpu-clock samples taken inside write() give a kernel call chain */
	int kprog = stacks >= 0 ? load_stack_prog(stacks, 0) : -1;
	struct perf_event_attr ka;

	memset(&ka, 0, sizeof(ka));
	ka.size = sizeof(ka);
	ka.type = PERF_TYPE_SOFTWARE;
	ka.config = PERF_COUNT_SW_CPU_CLOCK;
	ka.sample_period = 100000;
	ka.disabled = 1;
	int kfd = (int)sys_perf_event_open(&ka, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	int devnull = open("/dev/null", O_WRONLY);

	if (CHECK(kprog >= 0 && kfd >= 0 && devnull >= 0, "kernel get_stackid program, cpu-clock",
		  "prog %d fd %d errno %d", kprog, kfd, errno)) {
		uint64_t ips[16] = { 0 };
		uint32_t id;
		time_t t0 = time(NULL);

		map_zero();
		v.cookie = 0;
		EXPECT_OK(ioctl(kfd, PERF_EVENT_IOC_SET_BPF, kprog), "SET_BPF it on cpu-clock");
		ioctl(kfd, PERF_EVENT_IOC_ENABLE, 0);
		while (time(NULL) - t0 < 10) {
			for (int i = 0; i < 1000; i++)
				if (write(devnull, "x", 1) != 1)
					break;
			v = map_get();
			if (v.cookie)
				break;
		}
		ioctl(kfd, PERF_EVENT_IOC_DISABLE, 0);
		id = (uint32_t)v.cookie;
		CHECK(v.cookie >> 32 == 1, "get_stackid (kernel) gives a stack id for an in-kernel sample",
		      "none in 10 s");
		EXPECT_OK(bpf_map_elem(BPF_MAP_LOOKUP_ELEM, stacks, &id, ips, 0), "look the kernel stack up");
		CHECK(ips[0] >= 0xffff000000000000ull, "its first frame is a kernel address", "%#llx",
		      (unsigned long long)ips[0]);
		close(kfd);
	}

	/* bpf_perf_event_output into a bpf-output event held in a PERF_EVENT_ARRAY */
	struct perf_event_attr oa;

	memset(&oa, 0, sizeof(oa));
	oa.size = sizeof(oa);
	oa.type = PERF_TYPE_SOFTWARE;
	oa.config = PERF_COUNT_SW_BPF_OUTPUT;
	oa.sample_type = PERF_SAMPLE_RAW;
	oa.wakeup_events = 1;
	int ofd = (int)sys_perf_event_open(&oa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	struct perf_event_mmap_page *om =
		ofd >= 0 ? mmap(NULL, (1 + DATA_PAGES) * PG, PROT_READ | PROT_WRITE, MAP_SHARED, ofd, 0)
			 : MAP_FAILED;
	int arr = bpf_map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1, 0);
	uint32_t k0 = 0;
	int oprog = arr >= 0 ? load_output_prog(arr) : -1;

	if (CHECK(om != MAP_FAILED && oprog >= 0, "bpf-output event, PERF_EVENT_ARRAY, output program",
		  "ofd %d arr %d prog %d errno %d", ofd, arr, oprog, errno) &&
	    CHECK(ev_open(&e) == 0, "open a page-faults event", "errno %d", errno)) {
		EXPECT_OK(bpf_map_elem(BPF_MAP_UPDATE_ELEM, arr, &k0, &ofd, 0), "store the bpf-output fd in slot 0");
		EXPECT_OK(ioctl(e.fd, PERF_EVENT_IOC_SET_BPF, oprog), "SET_BPF the output program");
		n = run(&e, &count, &lo, &hi);
		CHECK(n == 0, "the program returns 0: the sampling event's ring stays empty", "%llu",
		      (unsigned long long)n);

		uint64_t tail = om->data_tail, head = __atomic_load_n(&om->data_head, __ATOMIC_ACQUIRE);
		uint64_t raws = 0, good = 0;
		char *data = (char *)om + PG;

		while (tail < head) {
			struct perf_event_header *h = (void *)(data + (tail % (DATA_PAGES * PG)));

			if (h->type == PERF_RECORD_SAMPLE) {
				uint32_t size = *(uint32_t *)(h + 1);
				uint64_t addr;

				memcpy(&addr, (char *)(h + 1) + 4, 8);
				raws++;
				good += h->size == 24 && size == 12 && addr >= lo && addr < hi;
			}
			tail += h->size;
		}
		CHECK(raws >= 15 && raws <= 17, "one PERF_SAMPLE_RAW record per overflow in its ring",
		      "%llu records", (unsigned long long)raws);
		CHECK(good == raws, "each holds the 8 bytes written (raw size 12: padded to 8-byte end)",
		      "%llu of %llu", (unsigned long long)good, (unsigned long long)raws);
		ev_close(&e);
	}

	/* The same helpers from KPROBE programs (uprobes; bpftrace's BEGIN, END, uprobe:), whose
	 * ctx is struct pt_regs, and from TRACEPOINT programs (bpftrace's printf and ustack in a
	 * tracepoint: probe): Linux's kprobe_prog_func_proto and tp_prog_func_proto have
	 * perf_event_output, get_stackid and get_stack, not perf_prog_read_value (perf_event
	 * programs only) */
	int stk = bpf_map_new(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 16, 64, 0);
	static const struct {
		int type;
		const char *name;
	} kinds[] = { { BPF_PROG_TYPE_KPROBE, "KPROBE" }, { BPF_PROG_TYPE_TRACEPOINT, "TRACEPOINT" } };

	for (unsigned int k = 0; k < 2; k++) {
		struct bpf_insn rv[] = {
			MOV64_REG(2, 10),
			ADD64_IMM(2, -24),
			MOV64_IMM(3, 24),
			CALL(BPF_FUNC_perf_prog_read_value),
			MOV64_IMM(0, 0),
			EXIT(),
		};
		int kp[4];

		load_type = kinds[k].type;
		/* the output program reads ctx+16: a register (KPROBE), a record field (TRACEPOINT) */
		kp[0] = arr >= 0 ? load_output_prog(arr) : -1;
		kp[1] = stk >= 0 ? load_stack_prog(stk, BPF_F_USER_STACK) : -1;
		kp[2] = load_get_stack_prog();
		errno = 0;
		kp[3] = load_insns(rv, sizeof(rv) / sizeof(rv[0]));
		CHECK(kp[0] >= 0 && kp[1] >= 0 && kp[2] >= 0,
		      k ? "TRACEPOINT programs call perf_event_output, get_stackid, get_stack"
			: "KPROBE programs call perf_event_output, get_stackid, get_stack",
		      "fds %d %d %d errno %d", kp[0], kp[1], kp[2], errno);
		CHECK(kp[3] < 0 && errno == EINVAL,
		      k ? "a TRACEPOINT program calling perf_prog_read_value: EINVAL"
			: "a KPROBE program calling perf_prog_read_value: EINVAL",
		      "fd %d errno %d", kp[3], errno);
		for (int i = 0; i < 4; i++)
			if (kp[i] >= 0)
				close(kp[i]);
	}
	load_type = BPF_PROG_TYPE_PERF_EVENT;
	if (stk >= 0)
		close(stk);

	/* issue 14's count program, JIT-compiled then interpreted */
	int jit_old = bpf_jit_sysctl(-1);

	if (jit_old >= 0)
		bpf_jit_sysctl(1); /* whatever this run was started with */
	count_case(1);
	if (jit_old >= 0 && bpf_jit_sysctl(0) == 0) {
		count_case(0);
		bpf_jit_sysctl(jit_old);
	} else {
		tap_skip("count program, interpreted", "bpf_jit_enable 0 refused: a JIT-only kernel");
	}
	return tap_done();
}
