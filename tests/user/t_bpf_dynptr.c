/* t_bpf_dynptr: the dynptr helpers as Linux 6.1 has them.  At run time (a perf_event program
 * on page faults): bpf_dynptr_from_mem over a map value, dynptr_write / dynptr_read / dynptr_data
 * with their bounds (-E2BIG, NULL) and flags (-EINVAL), a null dynptr after a failed
 * constructor; bpf_ringbuf_reserve_dynptr / submit / discard, the record user space reads,
 * reservations refused (flags, no room: -EINVAL) that must still be discarded.  The verifier: map values
 * only for dynptr_from_mem, 8-aligned stack slots, no reading them, initialized or not as each
 * helper wants, ring buffer dynptrs released on every path, slices dying with their dynptr.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"

#include <sys/mman.h>

#define ST_DW(o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, o, i)
#define ST_W(o, i) INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, o, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define FP(r, o) MOV_X(r, 10), ADD_K(r, o)
#define JNE_K(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
/* res[k] = r0 */
#define STORE(res, k)                                                                              \
	MOV_X(7, 0), ST_W(-4, k), FP(2, -4), LD_MAP(1, res), CALL(BPF_FUNC_map_lookup_elem),        \
		JEQ_K(0, 0, 1), STX_DW(0, 7, 0)

static char logbuf[65536];

static int res_fd, buf_fd, rb_fd;

static uint64_t res_get(uint32_t k)
{
	uint64_t v = 0;

	map_elem(BPF_MAP_LOOKUP_ELEM, res_fd, &k, &v, 0);
	return v;
}

static int load(const struct bpf_insn *p, size_t n)
{
	return prog_load_log(BPF_PROG_TYPE_PERF_EVENT, p, n, logbuf, sizeof(logbuf));
}

/* A program that must not load: errno want and the log line msg. */
static void refused(const struct bpf_insn *p, size_t n, int want, const char *msg, const char *what)
{
	int fd = load(p, n), e = errno;

	if (fd >= 0)
		close(fd);
	CHECK(fd < 0 && e == want && strstr(logbuf, msg), what, "fd %d errno %d, log:\n%s", fd, e, logbuf);
}

static void local_dynptr(void)
{
	/* r6 = buf[0] (64 bytes); dynptr at fp-32 over it */
	struct bpf_insn p[] = {
		ST_W(-4, 0), FP(2, -4), LD_MAP(1, buf_fd), CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 1),
		INSN(BPF_JMP | BPF_JA, 0, 0, 2, 0), RET0, MOV_X(6, 0),
		/* res[0] = dynptr_from_mem(r6, 64, 0, fp-32) */
		MOV_X(1, 6), MOV_K(2, 64), MOV_K(3, 0), FP(4, -32), CALL(BPF_FUNC_dynptr_from_mem), STORE(res_fd, 0),
		/* res[1] = dynptr_write(fp-16, 8, &0x11223344, 8, 0) */
		ST_DW(-40, 0x11223344), FP(1, -32), MOV_K(2, 8), FP(3, -40), MOV_K(4, 8), MOV_K(5, 0),
		CALL(BPF_FUNC_dynptr_write), STORE(res_fd, 1),
		/* res[2] = dynptr_read(fp-32, 8, fp-16, 8, 0); res[3] = what it read */
		FP(1, -48), MOV_K(2, 8), FP(3, -32), MOV_K(4, 8), MOV_K(5, 0), CALL(BPF_FUNC_dynptr_read),
		STORE(res_fd, 2), LDX_DW(0, 10, -48), STORE(res_fd, 3),
		/* res[4] = dynptr_read at offset 60 (8 bytes past 64): -E2BIG */
		FP(1, -48), MOV_K(2, 8), FP(3, -32), MOV_K(4, 60), MOV_K(5, 0), CALL(BPF_FUNC_dynptr_read),
		STORE(res_fd, 4),
		/* res[5] = dynptr_write with flags 1: -EINVAL */
		FP(1, -32), MOV_K(2, 0), FP(3, -40), MOV_K(4, 8), MOV_K(5, 1), CALL(BPF_FUNC_dynptr_write),
		STORE(res_fd, 5),
		/* res[6] = 1 + (data(fp-16, 0, 16) != NULL), and *data = 7 through it */
		FP(1, -32), MOV_K(2, 0), MOV_K(3, 16), CALL(BPF_FUNC_dynptr_data), MOV_K(1, 1), JEQ_K(0, 0, 3),
		MOV_K(1, 7), STX_DW(0, 1, 0), MOV_K(1, 2), MOV_X(0, 1), STORE(res_fd, 6),
		/* res[7] = 1 + (data(fp-16, 60, 8) == NULL) */
		FP(1, -32), MOV_K(2, 60), MOV_K(3, 8), CALL(BPF_FUNC_dynptr_data), MOV_K(1, 1), JNE_K(0, 0, 1),
		MOV_K(1, 2), MOV_X(0, 1), STORE(res_fd, 7),
		/* res[8] = dynptr_from_mem with flags 1 at fp-48: -EINVAL, then res[9] = a read of it */
		MOV_X(1, 6), MOV_K(2, 8), MOV_K(3, 1), FP(4, -80), CALL(BPF_FUNC_dynptr_from_mem), STORE(res_fd, 8),
		FP(1, -48), MOV_K(2, 8), FP(3, -80), MOV_K(4, 0), MOV_K(5, 0), CALL(BPF_FUNC_dynptr_read),
		STORE(res_fd, 9),
		RET0,
	};
	uint64_t b[8] = { 0 };
	uint32_t k = 0;
	int fd = load(p, N_INSNS(p)), err;

	if (!CHECK(fd >= 0, "a program using a local dynptr over a map value loads", "%s\n%s", strerror(errno), logbuf))
		return;
	err = prog_run_on_faults(fd, 4);
	CHECK(!err, "it runs on page faults", "err %d", err);
	CHECK(res_get(0) == 0 && res_get(1) == 0 && res_get(2) == 0, "from_mem, write and read: 0",
	      "%llx %llx %llx", (unsigned long long)res_get(0), (unsigned long long)res_get(1),
	      (unsigned long long)res_get(2));
	CHECK(res_get(3) == 0x11223344, "dynptr_read reads what dynptr_write wrote", "%llx",
	      (unsigned long long)res_get(3));
	CHECK((int32_t)res_get(4) == -E2BIG, "dynptr_read past the end: -E2BIG", "%llx", (unsigned long long)res_get(4));
	CHECK((int32_t)res_get(5) == -EINVAL, "dynptr_write with flags: -EINVAL", "%llx", (unsigned long long)res_get(5));
	CHECK(res_get(6) == 2, "dynptr_data inside: a pointer", "%llu", (unsigned long long)res_get(6));
	CHECK(res_get(7) == 2, "dynptr_data past the end: NULL", "%llu", (unsigned long long)res_get(7));
	CHECK((int32_t)res_get(8) == -EINVAL, "dynptr_from_mem with flags: -EINVAL", "%llx", (unsigned long long)res_get(8));
	CHECK((int32_t)res_get(9) == -EINVAL, "dynptr_read of the null dynptr it left: -EINVAL", "%llx",
	      (unsigned long long)res_get(9));
	map_elem(BPF_MAP_LOOKUP_ELEM, buf_fd, &k, b, 0);
	CHECK(b[0] == 7 && b[1] == 0x11223344, "the map value holds what went through the dynptr",
	      "%llx %llx", (unsigned long long)b[0], (unsigned long long)b[1]);
	close(fd);
}

static void ringbuf_dynptr(void)
{
	struct bpf_insn p[] = {
		/* res[10] = reserve_dynptr(rb, 16, 0, fp-32); write 0xabc at 0; submit */
		LD_MAP(1, rb_fd), MOV_K(2, 16), MOV_K(3, 0), FP(4, -32), CALL(BPF_FUNC_ringbuf_reserve_dynptr),
		STORE(res_fd, 10),
		ST_DW(-40, 0xabc), FP(1, -32), MOV_K(2, 0), FP(3, -40), MOV_K(4, 8), MOV_K(5, 0),
		CALL(BPF_FUNC_dynptr_write), STORE(res_fd, 11),
		FP(1, -32), MOV_K(2, 0), CALL(BPF_FUNC_ringbuf_submit_dynptr),
		/* res[12] = reserve_dynptr with flags 1: -EINVAL; discarded all the same */
		LD_MAP(1, rb_fd), MOV_K(2, 16), MOV_K(3, 1), FP(4, -32), CALL(BPF_FUNC_ringbuf_reserve_dynptr),
		STORE(res_fd, 12), FP(1, -32), MOV_K(2, 0), CALL(BPF_FUNC_ringbuf_discard_dynptr),
		/* res[13] = reserve_dynptr of more than the ring: -EINVAL (6.1) */
		LD_MAP(1, rb_fd), MOV_K(2, 8192), MOV_K(3, 0), FP(4, -32), CALL(BPF_FUNC_ringbuf_reserve_dynptr),
		STORE(res_fd, 13), FP(1, -32), MOV_K(2, 0), CALL(BPF_FUNC_ringbuf_discard_dynptr),
		RET0,
	};
	int fd = load(p, N_INSNS(p)), err;
	volatile uint64_t *prod;
	uint8_t *data;

	if (!CHECK(fd >= 0, "a program using ring buffer dynptrs loads", "%s\n%s", strerror(errno), logbuf))
		return;
	err = prog_run_on_faults(fd, 1);
	CHECK(!err, "it runs on page faults", "err %d", err);
	CHECK(res_get(10) == 0 && res_get(11) == 0, "reserve_dynptr and a write into it: 0", "%llx %llx",
	      (unsigned long long)res_get(10), (unsigned long long)res_get(11));
	CHECK((int32_t)res_get(12) == -EINVAL, "reserve_dynptr with flags: -EINVAL", "%llx", (unsigned long long)res_get(12));
	CHECK((int32_t)res_get(13) == -EINVAL, "reserve_dynptr of 8192 bytes in a 4096-byte ring: -EINVAL", "%llx",
	      (unsigned long long)res_get(13));
	prod = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rb_fd, 4096);
	data = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, rb_fd, 2 * 4096);
	if (CHECK(prod != MAP_FAILED && data != MAP_FAILED, "the ring maps", "%s", strerror(errno))) {
		uint32_t len;
		uint64_t v;

		memcpy(&len, data, 4);
		memcpy(&v, data + 8, 8);
		CHECK(*prod >= 24 && len == 16 && v == 0xabc, "the first record: 16 bytes starting 0xabc",
		      "producer %llu len %u value %llx", (unsigned long long)*prod, len, (unsigned long long)v);
		munmap((void *)prod, 4096);
		munmap(data, 2 * 4096);
	}
	close(fd);
}

static void verifier(void)
{
	struct bpf_insn stack_mem[] = { FP(1, -48), MOV_K(2, 8), MOV_K(3, 0), FP(4, -16),
					CALL(BPF_FUNC_dynptr_from_mem), RET0 };
#define FROM_MAP(off)                                                                              \
	ST_W(-4, 0), FP(2, -4), LD_MAP(1, buf_fd), CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 1),  \
		INSN(BPF_JMP | BPF_JA, 0, 0, 2, 0), RET0, MOV_X(1, 0), MOV_K(2, 8), MOV_K(3, 0),    \
		FP(4, off), CALL(BPF_FUNC_dynptr_from_mem)
	struct bpf_insn read_slot[] = { FROM_MAP(-16), LDX_DW(0, 10, -16), RET0 };
	struct bpf_insn unaligned[] = { FROM_MAP(-20), RET0 };
	struct bpf_insn twice[] = { FROM_MAP(-16), FROM_MAP(-16), RET0 };
	struct bpf_insn uninit[] = { FP(1, -32), MOV_K(2, 8), FP(3, -16), MOV_K(4, 0), MOV_K(5, 0),
				     CALL(BPF_FUNC_dynptr_read), RET0 };
	struct bpf_insn submit_local[] = { FROM_MAP(-16), FP(1, -16), MOV_K(2, 0),
					   CALL(BPF_FUNC_ringbuf_submit_dynptr), RET0 };
	struct bpf_insn leak[] = { LD_MAP(1, rb_fd), MOV_K(2, 16), MOV_K(3, 0), FP(4, -16),
				   CALL(BPF_FUNC_ringbuf_reserve_dynptr), RET0 };
	struct bpf_insn wrong_map[] = { LD_MAP(1, buf_fd), MOV_K(2, 16), MOV_K(3, 0), FP(4, -16),
					CALL(BPF_FUNC_ringbuf_reserve_dynptr), RET0 };
	struct bpf_insn not_stack[] = { FP(1, -32), MOV_K(2, 8), MOV_K(3, 0), MOV_K(4, 0), MOV_K(5, 0),
					CALL(BPF_FUNC_dynptr_read), RET0 };
	/* a slice of a ring buffer dynptr read after the dynptr is submitted */
	struct bpf_insn stale[] = { LD_MAP(1, rb_fd), MOV_K(2, 16), MOV_K(3, 0), FP(4, -16),
				    CALL(BPF_FUNC_ringbuf_reserve_dynptr), FP(1, -16), MOV_K(2, 0), MOV_K(3, 8),
				    CALL(BPF_FUNC_dynptr_data), MOV_X(6, 0), FP(1, -16), MOV_K(2, 0),
				    CALL(BPF_FUNC_ringbuf_submit_dynptr), JEQ_K(6, 0, 1), LDX_DW(0, 6, 0), RET0 };
	/* the dynptr's bytes as a helper's memory argument */
	struct bpf_insn helper_read[] = { FROM_MAP(-16), ST_W(-20, 0), FP(2, -20), FP(3, -16), MOV_K(4, 0),
					  LD_MAP(1, res_fd), CALL(BPF_FUNC_map_update_elem), RET0 };

	refused(stack_mem, N_INSNS(stack_mem), EACCES, "Unsupported reg type fp for bpf_dynptr_from_mem data",
		"dynptr_from_mem over the stack: EACCES (map values only in 6.1)");
	refused(read_slot, N_INSNS(read_slot), EACCES, "invalid read from stack off -16+0 size 8",
		"reading a dynptr's stack slot: EACCES");
	refused(unaligned, N_INSNS(unaligned), EINVAL, "cannot pass in dynptr at an offset",
		"a dynptr at fp-20: EINVAL");
	refused(twice, N_INSNS(twice), EINVAL, "Dynptr has to be an uninitialized dynptr",
		"dynptr_from_mem over a dynptr: EINVAL");
	refused(uninit, N_INSNS(uninit), EINVAL, "Expected an initialized dynptr as arg #3",
		"dynptr_read of stack that holds no dynptr: EINVAL");
	refused(submit_local, N_INSNS(submit_local), EINVAL, "arg 1 is an unacquired reference",
		"ringbuf_submit_dynptr of a local dynptr: EINVAL");
	refused(leak, N_INSNS(leak), EINVAL, "Unreleased reference id=",
		"a ring buffer dynptr never submitted: EINVAL");
	refused(wrong_map, N_INSNS(wrong_map), EINVAL, "cannot pass map_type 2 into func bpf_ringbuf_reserve_dynptr#198",
		"ringbuf_reserve_dynptr on an ARRAY: EINVAL");
	refused(not_stack, N_INSNS(not_stack), EACCES, "R3 type=scalar expected=fp, dynptr_ptr",
		"a dynptr argument that is no pointer: EACCES");
	refused(stale, N_INSNS(stale), EACCES, "R6 invalid mem access 'scalar'",
		"a slice read after its dynptr is submitted: EACCES");
	refused(helper_read, N_INSNS(helper_read), EACCES, "invalid indirect read from stack R3 off -16+0 size 8",
		"a dynptr's bytes as a helper's value: EACCES");
}

int main(void)
{
	tap_init("t_bpf_dynptr", 60);
	res_fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0);
	buf_fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 64, 1, 0);
	rb_fd = map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	if (!CHECK(res_fd >= 0 && buf_fd >= 0 && rb_fd >= 0, "result and buffer arrays, a ring buffer", "%s",
		   strerror(errno)))
		return tap_done();
	verifier();
	local_dynptr();
	ringbuf_dynptr();
	return tap_done();
}
