/* t_uprobe: the uprobe PMU (perf_event_open with the type from
 * /sys/bus/event_source/devices/uprobe/type), checked against Linux 6.1's ABI; passes on
 * perfkernel and on Linux (refvm.sh).  The probed functions are this program's own: their
 * file offsets come from /proc/self/maps (address - mapping start + mapping offset).
 *
 *  1 sysfs: type, format/retprobe "config:0", format/ref_ctr_offset "config:32-63".
 *  2 errnos: no path (EINVAL), an empty one (EINVAL), a bad pointer (EFAULT), a missing file
 *    (ENOENT), a directory (EINVAL), an offset not 4-aligned or past the end (EINVAL), a
 *    branch stack (EOPNOTSUPP).
 *  3 counting at entry: every call counts while enabled, none while disabled, two events on
 *    one probe both count; the BRK is in the process's text while probed and the original
 *    bytes are back after the last close; each probed function still computes its result,
 *    whether its first instruction runs out of line (add, stp, ldr) or is simulated (adrp,
 *    adr, b, bl, b.cond, cbz, cbnz, tbz, tbnz, ret, br, blr); literal loads, ldxr and svc
 *    are EINVAL (arm64 rejects them).
 *  4 sampling: PERF_SAMPLE_IP is the probe, TID ours, RAW the uprobe record (20 bytes:
 *    common header, then the probe address).
 *  5 return probes (config:0): one hit per return, the sample's IP is the return address and
 *    its RAW 28 bytes (function, return address).
 *  6 inherit: a forked child's calls count in the parent's event (the parent hits the probe
 *    first, and the child calls only once the parent's fork returned: otherwise Linux 6.1
 *    loses the child's hits, or all of them, in about half the runs; and the child is born
 *    on the parent's CPU and stays there: when the child moves to another CPU, by
 *    sched_setaffinity or by the scheduler's balancing, Linux 6.1 stops counting every hit
 *    after the fork, the child's and the parent's later ones; measured under refvm: lost in
 *    4 of 4 runs with the child moved (4 of 4 also when the moved child makes no call), 0
 *    of 4 with it left where it was born, 1 in 6 runs of this test unpinned, 0 in 10 with
 *    the parent pinned before the fork); a per-task event on a child that execs this program
 *    again counts the new program's calls (the probe is put in at mmap time).
 *  7 BPF_PROG_TYPE_KPROBE: SET_BPF (EINVAL for TRACEPOINT and PERF_EVENT programs on a
 *    uprobe, and for a KPROBE program on a software event; EEXIST for a second), the program
 *    reads the argument from ctx (pt_regs x0) at each hit, 0 from it drops the hit; on a
 *    CPU-wide event (pid -1) it runs for hits on any CPU, and for this process only on a
 *    per-task one;
 *    BPF_LINK_CREATE with BPF_PERF_EVENT attaches, kprobe_multi is EOPNOTSUPP (Debian's 6.1
 *    has no CONFIG_FPROBE).
 *  9 uprobe_events' fetch arguments: %xN, %sp/%pc, +OFF(%reg), :u/s/x 8..64, :string, $retval: the
 *    listing, the format files and the records as Linux 6.1's.
 *  8 uprobe_events: definitions (named, default-named return probe, ENOENT, EINVAL), the
 *    listing, events/<group>/<event>/{id,format} as Linux prints them, the event counted and
 *    sampled as PERF_TYPE_TRACEPOINT (RAW common_type = its id), uprobe_profile's hits, EBUSY
 *    while open (delete, O_TRUNC), deletion, the group directory going, O_TRUNC clearing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tracing.h"
#include "tap.h"

#define BRK_UPROBE 0xd42000a0u /* BRK #0x005 */

static int uprobe_type = -1;
static char self_path[512];

/* ---- the probed functions: first instructions of every kind the kernel must handle ---- */

uint64_t probe_data = 0x1122334455667788ull;
uint64_t f_add(uint64_t x);  /* add: out of line */
uint64_t f_stp(uint64_t x);  /* stp x29, x30, [sp, #-16]!: out of line, a frame */
uint64_t f_ldr(uint64_t *p); /* ldr x0, [x0]: out of line */
uint64_t f_adrp(void);	     /* adrp + ldr of probe_data */
uint64_t f_adr(void);	     /* adr of a literal, then a load from it */
uint64_t f_b(void);	     /* b forward */
uint64_t f_bl(uint64_t x);   /* bl to f_add */
uint64_t f_bcond(uint64_t x); /* cmp, then the probe on b.eq */
uint64_t f_cbz(uint64_t x);  /* cbz x0 */
uint64_t f_cbnz(uint64_t x); /* cbnz w0 */
uint64_t f_tbz(uint64_t x);  /* tbz x0, #40 */
uint64_t f_tbnz(uint64_t x); /* tbnz w0, #3 */
uint64_t f_ldrlit(void);     /* ldr x0, =literal; ldrsw x1, literal: rejected */
uint64_t f_inh(uint64_t x);  /* add: the fork and exec tests' own probe */
void f_rej(void);	     /* ldxr, svc: rejected (never called) */
uint64_t f_ret(uint64_t x);  /* the probe on the ret itself */
uint64_t f_br(uint64_t x);   /* br x16 */
uint64_t f_blr(uint64_t x);  /* blr x16 to f_add */

__asm__(".text\n"
	".p2align 3\n"
	".globl f_add\n.type f_add,%function\n"
	"f_add: add x0, x0, #3\n ret\n"
	".globl f_stp\n.type f_stp,%function\n"
	"f_stp: stp x29, x30, [sp, #-16]!\n mov x29, sp\n add x0, x0, #5\n ldp x29, x30, [sp], #16\n ret\n"
	".globl f_ldr\n.type f_ldr,%function\n"
	"f_ldr: ldr x0, [x0]\n ret\n"
	".globl f_adrp\n.type f_adrp,%function\n"
	"f_adrp: adrp x0, probe_data\n ldr x0, [x0, :lo12:probe_data]\n ret\n"
	".globl f_adr\n.type f_adr,%function\n"
	"f_adr: adr x1, 1f\n ldr w0, [x1]\n ret\n 1: .word 0x5eed\n"
	".globl f_b\n.type f_b,%function\n"
	"f_b: b 1f\n mov x0, #1\n ret\n 1: mov x0, #2\n ret\n"
	".globl f_bl\n.type f_bl,%function\n"
	"f_bl: stp x29, x30, [sp, #-16]!\n bl f_add\n ldp x29, x30, [sp], #16\n ret\n"
	".globl f_bcond\n.type f_bcond,%function\n"
	"f_bcond: cmp x0, #7\n b.eq 1f\n mov x0, #10\n ret\n 1: mov x0, #20\n ret\n"
	".globl f_cbz\n.type f_cbz,%function\n"
	"f_cbz: cbz x0, 1f\n mov x0, #10\n ret\n 1: mov x0, #20\n ret\n"
	".globl f_cbnz\n.type f_cbnz,%function\n"
	"f_cbnz: cbnz w0, 1f\n mov x0, #10\n ret\n 1: mov x0, #20\n ret\n"
	".globl f_tbz\n.type f_tbz,%function\n"
	"f_tbz: tbz x0, #40, 1f\n mov x0, #10\n ret\n 1: mov x0, #20\n ret\n"
	".globl f_tbnz\n.type f_tbnz,%function\n"
	"f_tbnz: tbnz w0, #3, 1f\n mov x0, #10\n ret\n 1: mov x0, #20\n ret\n"
	".globl f_ldrlit\n.type f_ldrlit,%function\n"
	"f_ldrlit: ldr x0, 1f\n ldrsw x1, 2f\n add x0, x0, x1\n ret\n"
	" .p2align 3\n 1: .quad 0x100000000\n 2: .word 0xfffffffe\n .word 0\n"
	".globl f_inh\n.type f_inh,%function\n"
	"f_inh: add x0, x0, #3\n ret\n"
	".globl f_rej\n.type f_rej,%function\n"
	"f_rej: ldxr x1, [x0]\n svc #0\n ret\n"
	".globl f_ret\n.type f_ret,%function\n"
	"f_ret: add x0, x0, #9\n ret\n"
	".globl f_br\n.type f_br,%function\n"
	"f_br: adr x16, 1f\n br x16\n mov x0, #1\n 1: add x0, x0, #11\n ret\n"
	".globl f_blr\n.type f_blr,%function\n"
	"f_blr: stp x29, x30, [sp, #-16]!\n adr x16, f_add\n blr x16\n ldp x29, x30, [sp], #16\n ret\n");

/* The file offset of the code at addr in this program (and self_path), or -1. */
static long file_offset(const void *addr)
{
	return map_file_offset(addr, self_path, sizeof(self_path));
}

static void up_attr(struct perf_event_attr *a, const char *path, uint64_t off, bool ret)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)uprobe_type;
	a->config = ret;
	a->config1 = (uintptr_t)path;
	a->config2 = off;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

/* A counting per-task event on addr (enabled), or -1. */
static int probe_fd(const void *addr, int pid, bool ret, bool inherit)
{
	struct perf_event_attr a;
	long off = file_offset(addr);

	if (off < 0)
		return -1;
	up_attr(&a, self_path, (uint64_t)off, ret);
	a.inherit = inherit;
	return (int)peo(&a, pid, -1, -1, 0);
}

/* ---- 1: sysfs ---- */

static void test_sysfs(void)
{
	char buf[128];

	CHECK(read_file("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf)) > 0 &&
		      (uprobe_type = atoi(buf)) > 0,
	      "/sys/bus/event_source/devices/uprobe/type", "%s", buf);
	CHECK(read_file("/sys/bus/event_source/devices/uprobe/format/retprobe", buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, "config:0\n"),
	      "format/retprobe is config:0", "'%s'", buf);
	CHECK(read_file("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset", buf,
			sizeof(buf)) > 0 && !strcmp(buf, "config:32-63\n"),
	      "format/ref_ctr_offset is config:32-63", "'%s'", buf);
}

/* ---- 2: errnos ---- */

static void test_errnos(void)
{
	struct perf_event_attr a;
	long off = file_offset((void *)f_add);

	up_attr(&a, self_path, (uint64_t)off, false);
	a.config1 = 0;
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "no path (config1 0) is EINVAL");
	up_attr(&a, "", 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an empty path is EINVAL");
	up_attr(&a, (const char *)8, 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EFAULT, "a bad path pointer is EFAULT");
	up_attr(&a, "/no/such/file", 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), ENOENT, "a missing file is ENOENT");
	up_attr(&a, "/", 0, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "a directory is EINVAL");
	up_attr(&a, self_path, (uint64_t)off + 2, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an offset not 4-aligned is EINVAL");
	up_attr(&a, self_path, 1ull << 40, false);
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, "an offset past the end of the file is EINVAL");
	up_attr(&a, self_path, (uint64_t)off, false);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EOPNOTSUPP, "a branch stack is EOPNOTSUPP");
	/* arm64 arch_uprobe_analyze_insn: instructions neither stepped nor simulated */
	static const struct { const char *what; const void *at; } rej[] = {
		{ "a probe on ldr (literal) is EINVAL (6.1 simulates it for kprobes only)", (const void *)f_ldrlit },
		{ "a probe on ldrsw (literal) is EINVAL", (const char *)f_ldrlit + 4 },
		{ "a probe on ldxr is EINVAL", (const void *)f_rej },
		{ "a probe on svc is EINVAL", (const char *)f_rej + 4 },
	};
	for (size_t i = 0; i < sizeof(rej) / sizeof(rej[0]); i++) {
		up_attr(&a, self_path, (uint64_t)file_offset(rej[i].at), false);
		EXPECT_ERRNO(peo(&a, 0, -1, -1, 0), EINVAL, rej[i].what);
	}
}

/* ---- 3: counting ---- */

static uint32_t text_word(const void *addr)
{
	uint32_t w;

	memcpy(&w, addr, 4);
	return w;
}

struct probed {
	const char *name;
	const void *fn;
	unsigned int at; /* the probe's byte offset in the function */
	uint64_t (*call)(void);
	uint64_t want;
};

static uint64_t c_add(void) { return f_add(4); }
static uint64_t c_stp(void) { return f_stp(4); }
static uint64_t c_ldr(void) { return f_ldr(&probe_data); }
static uint64_t c_adrp(void) { return f_adrp(); }
static uint64_t c_adr(void) { return f_adr(); }
static uint64_t c_b(void) { return f_b(); }
static uint64_t c_bl(void) { return f_bl(1); }
static uint64_t c_bcond(void) { return f_bcond(7) + f_bcond(8); }
static uint64_t c_cbz(void) { return f_cbz(0) + f_cbz(1ull << 32); }
static uint64_t c_cbnz(void) { return f_cbnz(0) * 100 + f_cbnz(1ull << 32) * 10 + f_cbnz(5); }
static uint64_t c_tbz(void) { return f_tbz(1ull << 40) + f_tbz(0) * 100; }
static uint64_t c_tbnz(void) { return f_tbnz(8) + f_tbnz(7) * 100; }
static uint64_t c_ret(void) { return f_ret(1); }
static uint64_t c_br(void) { return f_br(1); }
static uint64_t c_blr(void) { return f_blr(1); }

static const struct probed probed[] = {
	{ "add (out of line)", f_add, 0, c_add, 7 },
	{ "stp (out of line)", f_stp, 0, c_stp, 9 },
	{ "ldr (out of line)", f_ldr, 0, c_ldr, 0x1122334455667788ull },
	{ "adrp", f_adrp, 0, c_adrp, 0x1122334455667788ull },
	{ "adr", f_adr, 0, c_adr, 0x5eed },
	{ "b", f_b, 0, c_b, 2 },
	{ "bl", f_bl, 4, c_bl, 4 },
	{ "b.cond", f_bcond, 4, c_bcond, 30 },
	{ "cbz", f_cbz, 0, c_cbz, 30 },
	{ "cbnz (32-bit)", f_cbnz, 0, c_cbnz, 10 * 100 + 10 * 10 + 20 },
	{ "tbz", f_tbz, 0, c_tbz, 10 + 2000 },
	{ "tbnz (32-bit)", f_tbnz, 0, c_tbnz, 20 + 1000 },
	{ "ret", f_ret, 4, c_ret, 10 },
	{ "br", f_br, 4, c_br, 12 },
	{ "blr", f_blr, 8, c_blr, 4 },
};

static void test_count(void)
{
	char what[160];

	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		const struct probed *p = &probed[i];
		const char *at = (const char *)p->fn + p->at;
		uint32_t orig = text_word(at);
		int fd = probe_fd(at, 0, false, false);
		uint64_t bad = 0;

		snprintf(what, sizeof(what), "a probe on %s: opens", p->name);
		if (!CHECK(fd >= 0, what, "%s", strerror(errno)))
			continue;
		uint32_t now = text_word(at);

		for (int k = 0; k < 100; k++)
			if (p->call() != p->want)
				bad++;
		uint64_t c = count_of(fd);

		snprintf(what, sizeof(what), "a probe on %s: 100 calls count %s per call, results right",
			 p->name, p->call == c_bcond || p->call == c_cbz || p->call == c_tbz ||
					  p->call == c_tbnz ? "2" : p->call == c_cbnz ? "3" : "1");
		uint64_t per = p->call == c_bcond || p->call == c_cbz || p->call == c_tbz ||
					       p->call == c_tbnz ? 2 : p->call == c_cbnz ? 3 : 1;
		CHECK(c == 100 * per && !bad, what, "count %llu, %llu wrong results (want %llu, got %llu)",
		      (unsigned long long)c, (unsigned long long)bad, (unsigned long long)p->want,
		      (unsigned long long)p->call());
		close(fd);
		snprintf(what, sizeof(what), "a probe on %s: BRK #5 in the text while probed, the original after",
			 p->name);
		CHECK(now == BRK_UPROBE && text_word(at) == orig, what, "%08x then %08x, original %08x",
		      now, text_word(at), orig);
	}

	/* enable/disable, two events on one probe */
	int a = probe_fd((void *)f_add, 0, false, false), b = probe_fd((void *)f_add, 0, false, false);

	if (!CHECK(a >= 0 && b >= 0, "two events on one probe open", "%s", strerror(errno)))
		return;
	for (int k = 0; k < 10; k++)
		f_add(k);
	ioctl(a, PERF_EVENT_IOC_DISABLE, 0);
	for (int k = 0; k < 10; k++)
		f_add(k);
	uint64_t ca = count_of(a), cb = count_of(b);

	CHECK(ca == 10 && cb == 20, "disabled, an event stops counting; the other on the probe counts on",
	      "%llu and %llu", (unsigned long long)ca, (unsigned long long)cb);
	close(a);
	for (int k = 0; k < 10; k++)
		f_add(k);
	cb = count_of(b);
	CHECK(cb == 30 && text_word((void *)f_add) == BRK_UPROBE,
	      "closing one event leaves the probe to the other", "%llu", (unsigned long long)cb);
	close(b);
}

/* ---- 4, 5: sampling ---- */

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t size;
};

static int ring_open(struct ring *r, const void *addr, bool ret)
{
	struct perf_event_attr a;
	long off = file_offset(addr);

	up_attr(&a, self_path, (uint64_t)off, ret);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	r->fd = (int)peo(&a, 0, -1, -1, 0);
	if (r->fd < 0)
		return -1;
	r->size = 3 * 4096;
	r->pg = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	return r->pg == MAP_FAILED ? -1 : 0;
}

struct sample {
	uint64_t ip;
	uint32_t pid, tid, rawsize;
	uint8_t raw[64];
};

/* The samples in the ring (at most max): how many. */
static int ring_samples(struct ring *r, struct sample *s, int max)
{
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE), pos = 0;
	uint8_t *data = (uint8_t *)r->pg + 4096;
	int n = 0;

	while (pos < head && n < max) {
		struct perf_event_header *h = (void *)(data + pos % (r->size - 4096));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint8_t *p = (uint8_t *)(h + 1);

			memcpy(&s[n].ip, p, 8);
			memcpy(&s[n].pid, p + 8, 4);
			memcpy(&s[n].tid, p + 12, 4);
			memcpy(&s[n].rawsize, p + 16, 4);
			memcpy(s[n].raw, p + 20, s[n].rawsize < 64 ? s[n].rawsize : 64);
			n++;
		}
		pos += h->size;
	}
	return n;
}

static void ring_close(struct ring *r)
{
	munmap(r->pg, r->size);
	close(r->fd);
}

static void raw_header(const uint8_t *raw, uint16_t *type, uint8_t *flags, uint8_t *preempt, int32_t *pid)
{
	memcpy(type, raw, 2);
	*flags = raw[2];
	*preempt = raw[3];
	memcpy(pid, raw + 4, 4);
}

static void __attribute__((noinline)) call_f_add_3(void)
{
	for (int k = 0; k < 3; k++)
		f_add(k);
	__asm__ volatile("" ::: "memory");
}

static void test_sample(void)
{
	struct ring r;
	struct sample s[8];
	uint16_t type;
	uint8_t flags, preempt;
	int32_t rpid = 0;
	uint64_t v = 0;

	if (!CHECK(ring_open(&r, (void *)f_add, false) == 0, "a sampling uprobe event with a ring", "%s",
		   strerror(errno)))
		return;
	call_f_add_3();
	int n = ring_samples(&r, s, 8);
	bool ok = n == 3;

	for (int i = 0; i < n && ok; i++) {
		memcpy(&v, s[i].raw + 8, 8);
		raw_header(s[i].raw, &type, &flags, &preempt, &rpid);
		ok = s[i].ip == (uintptr_t)f_add && s[i].pid == (uint32_t)getpid() &&
		     s[i].tid == (uint32_t)gettid() && s[i].rawsize == 20 && v == (uintptr_t)f_add &&
		     rpid == gettid() && !memcmp(s[i].raw + 16, "\0\0\0\0", 4);
	}
	if (n > 0)
		memcpy(&v, s[0].raw + 8, 8);
	CHECK(ok, "3 calls, 3 samples: IP the probe, our pid/tid, RAW 20 bytes (header, probe address)",
	      "n %d ip %llx (f_add %p) raw size %u vaddr %llx pid %d", n,
	      n ? (unsigned long long)s[0].ip : 0, (void *)f_add, n ? s[0].rawsize : 0,
	      n ? (unsigned long long)v : 0, n ? rpid : 0);
	if (n > 0) {
		raw_header(s[0].raw, &type, &flags, &preempt, &rpid);
		CHECK(type == 0 && flags == 0 && preempt == 0,
		      "RAW common header: type 0 (a perf-local probe), flags 0, preempt_count 0",
		      "type %u flags %u preempt %u", type, flags, preempt);
	}
	ring_close(&r);

	/* 5: return probes */
	if (!CHECK(ring_open(&r, (void *)f_add, true) == 0, "a return probe (config:0) opens", "%s",
		   strerror(errno)))
		return;
	call_f_add_3();
	n = ring_samples(&r, s, 8);
	ok = n == 3;
	uint64_t func = 0, ret = 0;

	for (int i = 0; i < n && ok; i++) {
		memcpy(&func, s[i].raw + 8, 8);
		memcpy(&ret, s[i].raw + 16, 8);
		ok = s[i].rawsize == 28 && func == (uintptr_t)f_add && ret == s[i].ip &&
		     ret > (uintptr_t)call_f_add_3 && ret < (uintptr_t)call_f_add_3 + 64;
	}
	CHECK(ok && count_of(r.fd) == 3,
	      "3 returns, 3 samples: IP the return address, RAW 28 bytes (function, return address)",
	      "n %d size %u func %llx ret %llx ip %llx (caller %p)", n, n ? s[0].rawsize : 0,
	      (unsigned long long)func, (unsigned long long)ret, n ? (unsigned long long)s[0].ip : 0,
	      (void *)call_f_add_3);
	/* entry and return together */
	int e = probe_fd((void *)f_stp, 0, false, false), x = probe_fd((void *)f_stp, 0, true, false);

	for (int k = 0; k < 5; k++)
		v = f_stp((uint64_t)k);
	CHECK(e >= 0 && x >= 0 && count_of(e) == 5 && count_of(x) == 5 && v == 9,
	      "entry and return probes on one function count 5 calls each", "%llu %llu",
	      (unsigned long long)count_of(e), (unsigned long long)count_of(x));
	close(e);
	close(x);
	ring_close(&r);
}

/* ---- 6: fork and exec ---- */

static void test_inherit_pinned(void);

static void test_inherit(void)
{
	cpu_set_t all, one;

	/* one CPU for the parent, so the child is born there and stays (see 6 above) */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	test_inherit_pinned();
	sched_setaffinity(0, sizeof(all), &all);
}

static void test_inherit_pinned(void)
{
	int fd = probe_fd((void *)f_inh, 0, false, true);

	if (!CHECK(fd >= 0, "an inherited uprobe event opens", "%s", strerror(errno)))
		return;
	for (int k = 0; k < 5; k++)
		f_inh(0);
	uint64_t before = count_of(fd);

	CHECK(before == 5, "an inherited event counts its own task's calls", "%llu",
	      (unsigned long long)before);
	int go[2];

	if (pipe(go))
		return;
	pid_t c = fork();

	if (c == 0) {
		uint64_t bad = 0;
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		for (int k = 0; k < 20; k++)
			if (f_inh((uint64_t)k) != (uint64_t)k + 3)
				bad++;
		_exit(bad ? 1 : 0);
	}
	int st = 0;

	close(go[0]);
	usleep(100000);
	if (write(go[1], "g", 1) != 1)
		st = -1;
	close(go[1]);
	waitpid(c, &st, 0);
	for (int k = 0; k < 5; k++)
		f_inh(0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && count_of(fd) == 30,
	      "a forked child runs the probed function right and its 20 calls count in the parent's event",
	      "status %x count %llu", st, (unsigned long long)count_of(fd));
	close(fd);

	/* a per-task event on a child that then execs this program */
	if (pipe(go))
		return;
	c = fork();
	if (c == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		execl(self_path, "t_uprobe", "--child", (char *)NULL);
		_exit(3);
	}
	close(go[0]);
	fd = probe_fd((void *)f_inh, c, false, false);
	int ok = fd >= 0;

	if (write(go[1], "g", 1) != 1)
		ok = 0;
	close(go[1]);
	waitpid(c, &st, 0);
	CHECK(ok && WIFEXITED(st) && WEXITSTATUS(st) == 0 && count_of(fd) == 30,
	      "a per-task event on a child that execs counts the new program's 30 calls",
	      "open %d status %x count %llu", ok, st, (unsigned long long)count_of(fd));
	if (fd >= 0)
		close(fd);
}

/* ---- 7: BPF ---- */

static void test_bpf(void)
{
	struct perf_event_attr a;
	uint64_t v[2];
	int map, kp, kp0, tp, pe, fd, sw;

	map = bpf_count_map();
	kp = bpf_count_prog(BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_KPROBE, map, 1, BPF_DW, 0);
	kp0 = bpf_count_prog(BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_KPROBE, map, 0, BPF_DW, 0);
	tp = bpf_count_prog(BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_KPROBE, map, 1, BPF_DW, 0);
	pe = bpf_count_prog(BPF_PROG_TYPE_PERF_EVENT, BPF_PROG_TYPE_KPROBE, map, 1, BPF_DW, 0);
	if (!CHECK(map >= 0 && kp >= 0 && kp0 >= 0 && tp >= 0 && pe >= 0,
		   "BPF_PROG_TYPE_KPROBE programs reading pt_regs load", "%d %d %d %d %d: %s", map, kp,
		   kp0, tp, pe, strerror(errno)))
		return;
	fd = probe_fd((void *)f_add, 0, false, false);
	sw = sw_sampling_fd();
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, tp), EINVAL,
		     "SET_BPF of a TRACEPOINT program on a uprobe event is EINVAL");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, pe), EINVAL,
		     "SET_BPF of a PERF_EVENT program on a uprobe event is EINVAL");
	EXPECT_ERRNO(ioctl(sw, PERF_EVENT_IOC_SET_BPF, kp), EINVAL,
		     "SET_BPF of a KPROBE program on a software event is EINVAL");
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp), "SET_BPF of a KPROBE program on a uprobe event");
	EXPECT_ERRNO(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp), EEXIST, "a second SET_BPF is EEXIST");
	for (int k = 0; k < 10; k++)
		f_add(1000 + (uint64_t)k);
	bpf_count_value(map, v);
	CHECK(v[0] == 10 && v[1] == 1009 && count_of(fd) == 10,
	      "the program ran at each of 10 hits and read x0 from pt_regs; returning 1 keeps them",
	      "runs %llu x0 %llu count %llu", (unsigned long long)v[0], (unsigned long long)v[1],
	      (unsigned long long)count_of(fd));
	close(fd);
	for (int k = 0; k < 5; k++)
		f_add(0);
	bpf_count_value(map, v);
	CHECK(v[0] == 10, "closing the event takes its program off", "runs %llu", (unsigned long long)v[0]);

	fd = probe_fd((void *)f_add, 0, false, false);
	EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp0), "SET_BPF of a program returning 0");
	for (int k = 0; k < 10; k++)
		f_add(2000);
	bpf_count_value(map, v);
	CHECK(v[0] == 20 && v[1] == 2000 && count_of(fd) == 0,
	      "a program returning 0 runs and drops the hits: the event counts 0",
	      "runs %llu x0 %llu count %llu", (unsigned long long)v[0], (unsigned long long)v[1],
	      (unsigned long long)count_of(fd));
	close(fd);

	/* BPF_LINK_CREATE */
	fd = probe_fd((void *)f_add, 0, false, false);
	union bpf_attr la;

	memset(&la, 0, sizeof(la));
	la.link_create.prog_fd = (uint32_t)kp;
	la.link_create.target_fd = (uint32_t)fd;
	la.link_create.attach_type = BPF_TRACE_KPROBE_MULTI;
	EXPECT_ERRNO(sys_bpf(BPF_LINK_CREATE, &la), EOPNOTSUPP,
		     "BPF_LINK_CREATE of a KPROBE program as kprobe_multi is EOPNOTSUPP (Debian: no FPROBE)");
	la.link_create.attach_type = BPF_PERF_EVENT;
	int link = (int)sys_bpf(BPF_LINK_CREATE, &la);

	tap_ok(link, errno, "BPF_LINK_CREATE (BPF_PERF_EVENT) of a KPROBE program on a uprobe event");
	for (int k = 0; k < 4; k++)
		f_add(3000);
	bpf_count_value(map, v);
	CHECK(v[0] == 24 && v[1] == 3000 && count_of(fd) == 4, "the linked program runs at each hit",
	      "runs %llu x0 %llu count %llu", (unsigned long long)v[0], (unsigned long long)v[1],
	      (unsigned long long)count_of(fd));
	close(link);
	for (int k = 0; k < 4; k++)
		f_add(3000);
	bpf_count_value(map, v);
	CHECK(v[0] == 24 && count_of(fd) == 8, "closing the link detaches the program, the event counts on",
	      "runs %llu count %llu", (unsigned long long)v[0], (unsigned long long)count_of(fd));
	close(fd);

	/* a CPU-wide event on CPU 0 while this task runs on CPU 1 */
	cpu_set_t one, all;

	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sched_getaffinity(0, sizeof(all), &all) ||
	    sched_setaffinity(0, sizeof(one), &one)) {
		tap_skip("a CPU-wide event's program", "needs 2 CPUs");
	} else {
		up_attr(&a, self_path, (uint64_t)file_offset((void *)f_add), false);
		fd = (int)peo(&a, -1, 0, -1, 0);
		EXPECT_OK(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kp), "SET_BPF on a CPU-wide uprobe event");
		bpf_count_value(map, v);
		uint64_t runs = v[0];

		for (int k = 0; k < 6; k++)
			f_add(4000);
		bpf_count_value(map, v);
		CHECK(v[0] == runs + 6 && v[1] == 4000 && count_of(fd) == 0,
		      "a CPU-wide event's program runs at hits on another CPU, which the event does not count",
		      "runs %llu -> %llu count %llu", (unsigned long long)runs,
		      (unsigned long long)v[0], (unsigned long long)count_of(fd));
		close(fd);
		sched_setaffinity(0, sizeof(all), &all);
	}
	close(sw);
	close(kp);
	close(kp0);
	close(tp);
	close(pe);
	close(map);
}

/* ---- 8: uprobe_events ---- */

#define TRACEFS "/sys/kernel/tracing"

static void test_events(void)
{
	char cmd[768], buf[4096], want[2048];
	long off = file_offset((void *)f_inh);
	struct perf_event_attr a;
	int id, fd;

	if (access(TRACEFS "/uprobe_events", F_OK)) {
		tap_skip("uprobe_events", "no tracefs at " TRACEFS);
		return;
	}
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/inh %s:0x%lx\n", self_path, off);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) ? -1 : 0,
		  "uprobe_events: define p:t_uprobe/inh");
	snprintf(cmd, sizeof(cmd), "r %s:%ld\n", self_path, off);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) ? -1 : 0,
		  "uprobe_events: define a return probe with the default name p_<file>_0x<offset> (decimal offset)");
	CHECK(write_file(TRACEFS "/uprobe_events", "p:t_uprobe/x /no/such/file:0x10\n", O_APPEND) == -ENOENT,
	      "uprobe_events: a missing file is ENOENT", "%d", write_file(TRACEFS "/uprobe_events", "p:t_uprobe/x /no/such/file:0x10\n", O_APPEND));
	CHECK(write_file(TRACEFS "/uprobe_events", "p:t_uprobe/1x /bin/sh:0x10\n", O_APPEND) == -EINVAL,
	      "uprobe_events: a name that starts with a digit is EINVAL", "-");
	read_file(TRACEFS "/uprobe_events", buf, sizeof(buf));
	snprintf(want, sizeof(want), "p:t_uprobe/inh %s:0x%016lx\nr:uprobes/p_t_0x%lx %s:0x%016lx\n",
		 self_path, off, off, self_path, off);
	CHECK(strstr(buf, want) != NULL, "uprobe_events lists both as Linux prints them", "'%s'", buf);
	read_file(TRACEFS "/events/t_uprobe/inh/id", buf, sizeof(buf));
	id = atoi(buf);
	read_file(TRACEFS "/events/t_uprobe/inh/format", buf, sizeof(buf));
	snprintf(want, sizeof(want),
		 "name: inh\nID: %d\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n\n"
		 "print fmt: \"(%%lx)\", REC->__probe_ip\n", id);
	CHECK(id > 0 && !strcmp(buf, want), "events/t_uprobe/inh/format as Linux's", "'%s'", buf);
	snprintf(cmd, sizeof(cmd), TRACEFS "/events/uprobes/p_t_0x%lx/format", off);
	buf[0] = 0;
	read_file(cmd, buf, sizeof(buf));
	CHECK(strstr(buf, "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
			  "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n\n"
			  "print fmt: \"(%lx <- %lx)\", REC->__probe_func, REC->__probe_ret_ip\n") != NULL,
	      "a return probe's format has __probe_func and __probe_ret_ip", "'%s'", buf);

	/* the event as PERF_TYPE_TRACEPOINT: counting and RAW */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	fd = (int)peo(&a, 0, -1, -1, 0);
	struct ring r = { fd, NULL, 3 * 4096 };
	struct sample sm[8];

	if (!CHECK(fd >= 0, "perf_event_open of the uprobe event's id (PERF_TYPE_TRACEPOINT)", "%s",
		   strerror(errno)))
		return;
	r.pg = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	for (int k = 0; k < 4; k++)
		f_inh(0);
	int n = r.pg == MAP_FAILED ? -1 : ring_samples(&r, sm, 8);
	uint16_t type = 0;
	uint64_t ip = 0;

	if (n > 0) {
		memcpy(&type, sm[0].raw, 2);
		memcpy(&ip, sm[0].raw + 8, 8);
	}
	CHECK(n == 4 && count_of(fd) == 4 && sm[0].rawsize == 20 && type == id &&
		      ip == (uintptr_t)f_inh && sm[0].ip == (uintptr_t)f_inh,
	      "4 calls: 4 samples, RAW common_type the event's id, __probe_ip the probe",
	      "n %d count %llu size %u type %u ip %llx", n, (unsigned long long)count_of(fd),
	      n > 0 ? sm[0].rawsize : 0, type, (unsigned long long)ip);
	read_file(TRACEFS "/uprobe_profile", buf, sizeof(buf));
	snprintf(want, sizeof(want), "  %s %-44s %15lu\n", self_path, "inh", 4ul);
	CHECK(strstr(buf, want) != NULL, "uprobe_profile counts the 4 hits", "'%s'", buf);
	CHECK(write_file(TRACEFS "/uprobe_events", "-:t_uprobe/inh\n", O_APPEND) == -EBUSY,
	      "deleting an event a perf event has open is EBUSY", "-");
	CHECK(write_file(TRACEFS "/uprobe_events", "\n", O_TRUNC) == -EBUSY,
	      "an O_TRUNC open of uprobe_events while one is open is EBUSY", "-");
	if (r.pg != MAP_FAILED)
		munmap(r.pg, r.size);
	close(fd);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", "-:t_uprobe/inh\n", O_APPEND) ? -1 : 0,
		  "-:t_uprobe/inh deletes it once closed");
	CHECK(access(TRACEFS "/events/t_uprobe", F_OK) && errno == ENOENT,
	      "its group directory goes with its last event", "-");
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", "", O_TRUNC) ? -1 : 0,
		  "an O_TRUNC open clears the rest");
	read_file(TRACEFS "/uprobe_events", buf, sizeof(buf));
	CHECK(!strstr(buf, self_path), "uprobe_events no longer lists this program's probes", "'%s'", buf);
}

/* A counting event on tracefs event group/name with filter f: its count over one
 * f_add4(x, y, p, q) call, or ~0 when it cannot be set up. */
static uint64_t filtered_count(const char *ev, const char *f, uint64_t x, uint64_t y,
			       const void *p, uint64_t q);

/* f_add under a name that passes x1..x3 too (the same instructions) */
uint64_t f_add4(uint64_t x, uint64_t y, const void *p, uint64_t q);
__asm__(".globl f_add4\n.set f_add4, f_add\n");

/* fetch arguments: registers, memory at a register plus an offset, types, $retval */
static void test_event_args(void)
{
	char cmd[2048], buf[4096], want[2048];
	long off = file_offset((void *)f_add);
	uint64_t (*call)(uint64_t, uint64_t, const void *, uint64_t) = f_add4;
	static uint64_t mem[2] = { 1, 0xdeadbeefcafeull };

	if (access(TRACEFS "/uprobe_events", F_OK))
		return;
	snprintf(cmd, sizeof(cmd),
		 "p:t_uprobe/args %s:0x%lx %%x0 v=%%x1:u32 n=%%x1:s16 h=%%x1:x8 m=+8(%%x2):u64 "
		 "z=+0(%%x3):u32\nr:t_uprobe/rargs %s:0x%lx rv=$retval %%x1:s32\n",
		 self_path, off, self_path, off);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) ? -1 : 0,
		  "uprobe_events: probes with fetch arguments");
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/bad %s:0x%lx r=$retval\n", self_path, off);
	CHECK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) == -EINVAL,
	      "$retval in an entry probe is EINVAL", "-");
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/bad %s:0x%lx %%x31\n", self_path, off);
	CHECK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) == -EINVAL, "%x31 is EINVAL", "-");
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/bad %s:0x%lx %%x0:u7\n", self_path, off);
	CHECK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) == -EINVAL, "a type :u7 is EINVAL", "-");
	read_file(TRACEFS "/uprobe_events", buf, sizeof(buf));
	snprintf(want, sizeof(want),
		 "p:t_uprobe/args %s:0x%016lx arg1=%%x0 v=%%x1:u32 n=%%x1:s16 h=%%x1:x8 "
		 "m=+8(%%x2):u64 z=+0(%%x3):u32\nr:t_uprobe/rargs %s:0x%016lx rv=$retval arg2=%%x1:s32\n",
		 self_path, off, self_path, off);
	CHECK(strstr(buf, want) != NULL, "uprobe_events lists the arguments as Linux", "'%s'", buf);
	read_file(TRACEFS "/events/t_uprobe/args/format", buf, sizeof(buf));
	CHECK(strstr(buf, "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			  "\tfield:u64 arg1;\toffset:16;\tsize:8;\tsigned:0;\n"
			  "\tfield:u32 v;\toffset:24;\tsize:4;\tsigned:0;\n"
			  "\tfield:s16 n;\toffset:28;\tsize:2;\tsigned:1;\n"
			  "\tfield:u8 h;\toffset:30;\tsize:1;\tsigned:0;\n"
			  "\tfield:u64 m;\toffset:31;\tsize:8;\tsigned:0;\n"
			  "\tfield:u32 z;\toffset:39;\tsize:4;\tsigned:0;\n\n"
			  "print fmt: \"(%lx) arg1=0x%Lx v=%u n=%d h=0x%x m=%Lu z=%u\", REC->__probe_ip, "
			  "REC->arg1, REC->v, REC->n, REC->h, REC->m, REC->z\n") != NULL,
	      "the arguments' fields packed and their print fmt, as Linux", "'%s'", buf);
	read_file(TRACEFS "/events/t_uprobe/rargs/format", buf, sizeof(buf));
	CHECK(strstr(buf, "\tfield:u64 rv;\toffset:24;\tsize:8;\tsigned:0;\n"
			  "\tfield:s32 arg2;\toffset:32;\tsize:4;\tsigned:1;\n\n"
			  "print fmt: \"(%lx <- %lx) rv=0x%Lx arg2=%d\", REC->__probe_func, "
			  "REC->__probe_ret_ip, REC->rv, REC->arg2\n") != NULL,
	      "a return probe's arguments after __probe_ret_ip", "'%s'", buf);

	struct perf_event_attr a;
	int fds[2];
	struct ring r[2];
	struct sample sm[2][4];
	int n[2];

	for (int k = 0; k < 2; k++) {
		read_file(k ? TRACEFS "/events/t_uprobe/rargs/id" : TRACEFS "/events/t_uprobe/args/id",
			  buf, sizeof(buf));
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)atoi(buf);
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW; /* ring_samples' */
		fds[k] = (int)peo(&a, 0, -1, -1, 0);
		r[k] = (struct ring){ fds[k], NULL, 3 * 4096 };
		r[k].pg = fds[k] < 0 ? MAP_FAILED
				    : mmap(NULL, r[k].size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[k], 0);
	}
	uint64_t got = call(5, 0x1234fff0, mem, 8);

	for (int k = 0; k < 2; k++)
		n[k] = r[k].pg == MAP_FAILED ? -1 : ring_samples(&r[k], sm[k], 4);
	uint64_t a1 = 0, m = 1, rv = 0;
	uint32_t v = 0, z = 1;
	int16_t s16 = 0;
	uint8_t h = 0;
	int32_t s32 = 0;

	if (n[0] == 1) {
		const uint8_t *p = sm[0][0].raw;

		memcpy(&a1, p + 16, 8);
		memcpy(&v, p + 24, 4);
		memcpy(&s16, p + 28, 2);
		h = p[30];
		memcpy(&m, p + 31, 8);
		memcpy(&z, p + 39, 4);
	}
	CHECK(n[0] == 1 && sm[0][0].rawsize == 44 && a1 == 5 && v == 0x1234fff0 && s16 == -16 &&
		      h == 0xf0 && m == mem[1] && z == 0,
	      "a hit's record: the registers, typed, the memory at x2+8, 0 for unreadable memory",
	      "n %d size %u arg1 %llu v %x n %d h %x m %llx z %u", n[0], n[0] > 0 ? sm[0][0].rawsize : 0,
	      (unsigned long long)a1, v, s16, h, (unsigned long long)m, z);
	if (n[1] == 1) {
		memcpy(&rv, sm[1][0].raw + 24, 8);
		memcpy(&s32, sm[1][0].raw + 32, 4);
	}
	CHECK(n[1] == 1 && sm[1][0].rawsize == 36 && got == 8 && rv == 8 && s32 == 0x1234fff0,
	      "a return's record: $retval and the register then", "n %d size %u rv %llu s32 %x", n[1],
	      n[1] > 0 ? sm[1][0].rawsize : 0, (unsigned long long)rv, (unsigned)s32);
	for (int k = 0; k < 2; k++) {
		if (r[k].pg != MAP_FAILED)
			munmap(r[k].pg, r[k].size);
		if (fds[k] >= 0)
			close(fds[k]);
	}
	uint64_t c1 = filtered_count("args", "v == 0x1234fff0 && n < 0 && h == 0xf0 && m == 0xdeadbeefcafe",
				     5, 0x1234fff0, mem, 8);
	uint64_t c0 = filtered_count("args", "m != 0xdeadbeefcafe || arg1 != 5", 5, 0x1234fff0, mem, 8);

	CHECK(c1 == 1 && c0 == 0, "SET_FILTER on the arguments (u32, s16, x8, memory, default)",
	      "counts %lld %lld", (long long)c1, (long long)c0);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", "-:t_uprobe/args\n-:t_uprobe/rargs\n", O_APPEND)
			  ? -1 : 0, "the probes with arguments go");

	/* :string: the bytes after the fixed part behind a __data_loc word; none when unreadable */
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/sarg %s:0x%lx s=+0(%%x2):string t=+0(%%x3):string\n",
		 self_path, off);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) ? -1 : 0,
		  "uprobe_events: string arguments");
	snprintf(cmd, sizeof(cmd), "p:t_uprobe/bad %s:0x%lx s=%%x2:string\n", self_path, off);
	CHECK(write_file(TRACEFS "/uprobe_events", cmd, O_APPEND) == -EINVAL,
	      "a string of a register (no memory) is EINVAL", "-");
	read_file(TRACEFS "/events/t_uprobe/sarg/format", buf, sizeof(buf));
	CHECK(strstr(buf, "\tfield:__data_loc char[] s;\toffset:16;\tsize:4;\tsigned:1;\n"
			  "\tfield:__data_loc char[] t;\toffset:20;\tsize:4;\tsigned:1;\n\n"
			  "print fmt: \"(%lx) s=\\\"%s\\\" t=\\\"%s\\\"\", REC->__probe_ip, "
			  "__get_str(s), __get_str(t)\n") != NULL,
	      "string arguments' fields and print fmt as Linux", "'%s'", buf);
	read_file(TRACEFS "/events/t_uprobe/sarg/id", buf, sizeof(buf));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)atoi(buf);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	fds[0] = (int)peo(&a, 0, -1, -1, 0);
	r[0] = (struct ring){ fds[0], NULL, 3 * 4096 };
	r[0].pg = fds[0] < 0 ? MAP_FAILED
			     : mmap(NULL, r[0].size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	call(0, 0, "hello", 8);
	n[0] = r[0].pg == MAP_FAILED ? -1 : ring_samples(&r[0], sm[0], 4);
	uint32_t ls = 0, lt = 1;

	if (n[0] == 1) {
		memcpy(&ls, sm[0][0].raw + 16, 4);
		memcpy(&lt, sm[0][0].raw + 20, 4);
	}
	CHECK(n[0] == 1 && sm[0][0].rawsize == 36 && ls == (6u << 16 | 24) && lt == (0u << 16 | 30) &&
		      !memcmp(sm[0][0].raw + 24, "hello", 6),
	      "a hit's strings: \"hello\" at 24 (6 bytes), the unreadable one empty at 30",
	      "n %d size %u s %x t %x", n[0], n[0] > 0 ? sm[0][0].rawsize : 0, ls, lt);
	if (r[0].pg != MAP_FAILED)
		munmap(r[0].pg, r[0].size);
	if (fds[0] >= 0)
		close(fds[0]);
	c1 = filtered_count("sarg", "s == \"hello\" && t != \"x\" && s ~ \"h*o\"", 0, 0, "hello", 8);
	c0 = filtered_count("sarg", "s ~ \"x*\"", 0, 0, "hello", 8);
	CHECK(c1 == 1 && c0 == 0, "SET_FILTER on string arguments", "counts %lld %lld", (long long)c1,
	      (long long)c0);
	EXPECT_OK(write_file(TRACEFS "/uprobe_events", "-:t_uprobe/sarg\n", O_APPEND) ? -1 : 0,
		  "the probe with strings goes");
}

static uint64_t filtered_count(const char *ev, const char *f, uint64_t x, uint64_t y,
			       const void *p, uint64_t q)
{
	char path[128], buf[32];
	struct perf_event_attr a;
	uint64_t c = ~0ull;

	snprintf(path, sizeof(path), TRACEFS "/events/t_uprobe/%s/id", ev);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return c;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)atoi(buf);
	a.disabled = 1;
	int fd = (int)peo(&a, 0, -1, -1, 0);

	if (fd < 0)
		return c;
	if (!ioctl(fd, PERF_EVENT_IOC_SET_FILTER, f)) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		f_add4(x, y, p, q);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		c = count_of(fd);
	}
	close(fd);
	return c;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child")) {
		uint64_t bad = 0;

		for (int k = 0; k < 30; k++)
			if (f_inh((uint64_t)k) != (uint64_t)k + 3)
				bad++;
		return bad ? 1 : 0;
	}
	tap_init("t_uprobe", 60);
	test_sysfs();
	if (uprobe_type < 0) {
		tap_skip("uprobe events", "no uprobe PMU");
		return tap_done();
	}
	if (file_offset((void *)f_add) < 0) {
		tap_fail("the probed function's file offset", "not found in /proc/self/maps");
		return tap_done();
	}
	test_errnos();
	test_count();
	test_sample();
	test_inherit();
	test_bpf();
	test_events();
	test_event_args();
	return tap_done();
}
