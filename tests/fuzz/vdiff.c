/*
 * vdiff.c - the eBPF verifier, compared with Linux's: generates short random programs from a
 * seed (the same programs on every kernel), loads each with BPF_PROG_LOAD and prints one line
 * per program: its number, the errno (0 when it loaded) and, for a refusal, the verifier's
 * reason (the log's last line before the "processed" figures).  tests/fuzz/verifier-diff.sh
 * runs it here and on Linux and compares; tests/fuzz/vdiff-linux.txt keeps Linux 6.1's answers.
 *
 * usage: vdiff SEED COUNT [-v]   (-v also prints each program, as hex instructions)
 *
 * The programs are built to get far into the verifier: registers set before use most of the
 * time, ctx loads at offsets perf_event and syscall programs allow, stack slots written before
 * read, forward jumps that stay inside the program, map lookups with and without the NULL check,
 * pointer arithmetic on the stack, the map value and ctx.  Nothing here is run, only loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MAXN 24

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11) % n;
}

static const int32_t imms[] = { 0, 1, -1, 2, 7, 8, 16, 31, 32, 63, 64, 255, 4096, -8, -16, -512,
				0x7fffffff, (int32_t)0x80000000, 0xffff, 3 };
static const uint8_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD, BPF_OR, BPF_AND,
				   BPF_XOR, BPF_LSH, BPF_RSH, BPF_ARSH, BPF_MOV, BPF_NEG };
static const uint8_t jmp_ops[] = { BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE, BPF_JSGT,
				   BPF_JSGE, BPF_JSLT, BPF_JSLE, BPF_JSET };
static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
static const int32_t helpers[] = { BPF_FUNC_ktime_get_ns, BPF_FUNC_get_prandom_u32,
				   BPF_FUNC_get_smp_processor_id, BPF_FUNC_get_current_pid_tgid,
				   BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem,
				   BPF_FUNC_map_delete_elem, BPF_FUNC_probe_read_kernel };

static int reg(void)
{
	return rnd(10) < 8 ? (int)rnd(10) : (int)rnd(11);
}

static int32_t imm(void)
{
	return rnd(4) ? imms[rnd(sizeof(imms) / sizeof(imms[0]))] : (int32_t)(rnd(2000) - 1000);
}

/* one random instruction (or two, for lddw) at p; returns how many */
static int gen(struct bpf_insn *p, int at, int len, int map)
{
	uint32_t k = rnd(100);
	int d = reg(), s = reg();
	uint8_t sz = sizes[rnd(4)];
	int16_t off;

	if (k < 22) { /* ALU */
		uint8_t op = alu_ops[rnd(sizeof(alu_ops))];
		uint8_t cls = rnd(3) ? BPF_ALU64 : BPF_ALU;

		if (op == BPF_NEG)
			p[0] = I(cls | op, d, 0, 0, 0);
		else if (rnd(2))
			p[0] = I(cls | op | BPF_K, d, 0, 0, imm());
		else
			p[0] = I(cls | op | BPF_X, d, s, 0, 0);
		return 1;
	}
	if (k < 34) { /* set a register */
		p[0] = I(BPF_ALU64 | BPF_MOV | BPF_K, rnd(10), 0, 0, imm());
		return 1;
	}
	if (k < 44) { /* load from ctx (r1 or a copy), or from the stack */
		off = rnd(3) ? (int16_t)(rnd(14) * 8) : (int16_t)(rnd(120) - 8);
		if (rnd(3))
			p[0] = I(BPF_LDX | BPF_MEM | sz, rnd(10), rnd(4) ? 1 : s, off, 0);
		else
			p[0] = I(BPF_LDX | BPF_MEM | sz, rnd(10), 10, -(int16_t)(rnd(8) * 8 + 8), 0);
		return 1;
	}
	if (k < 56) { /* store to the stack, or somewhere else */
		off = -(int16_t)(rnd(8) * 8 + 8);
		if (rnd(5) == 0)
			off += (int16_t)rnd(8) - 4;
		d = rnd(6) ? 10 : reg();
		if (rnd(2))
			p[0] = I(BPF_ST | BPF_MEM | sz, d, 0, d == 10 ? off : (int16_t)rnd(64), imm());
		else
			p[0] = I(BPF_STX | BPF_MEM | sz, d, s, d == 10 ? off : (int16_t)rnd(64), 0);
		return 1;
	}
	if (k < 60) { /* atomics */
		static const int32_t aops[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH,
						BPF_XCHG, BPF_CMPXCHG, BPF_XOR | BPF_FETCH };

		p[0] = I(BPF_STX | BPF_ATOMIC | (rnd(2) ? BPF_DW : BPF_W), rnd(5) ? 10 : reg(), s,
			 -(int16_t)(rnd(8) * 8 + 8), aops[rnd(8)]);
		return 1;
	}
	if (k < 72 && at + 2 < len) { /* a forward jump inside the program */
		uint8_t op = jmp_ops[rnd(sizeof(jmp_ops))];
		uint8_t cls = rnd(4) ? BPF_JMP : BPF_JMP32;
		int16_t to = (int16_t)rnd((uint32_t)(len - at - 2));

		if (rnd(8) == 0)
			p[0] = I(BPF_JMP | BPF_JA, 0, 0, to, 0);
		else if (rnd(2))
			p[0] = I(cls | op | BPF_K, d, 0, to, imm());
		else
			p[0] = I(cls | op | BPF_X, d, s, to, 0);
		return 1;
	}
	if (k < 80) { /* pointer arithmetic */
		if (rnd(2)) {
			p[0] = I(BPF_ALU64 | BPF_MOV | BPF_X, d, rnd(3) ? 10 : 1, 0, 0);
			return 1;
		}
		p[0] = I(BPF_ALU64 | (rnd(3) ? BPF_ADD : BPF_SUB) | BPF_K, d, 0, 0,
			 rnd(2) ? -(int32_t)(rnd(8) * 8 + 8) : (int32_t)rnd(24));
		return 1;
	}
	if (k < 86 && at + 3 < len) { /* the map into r1, a key pointer into r2 */
		p[0] = I(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map);
		p[1] = I(0, 0, 0, 0, 0);
		return 2;
	}
	if (k < 90) {
		p[0] = I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
		return 1;
	}
	if (k < 97) { /* a helper call */
		p[0] = I(BPF_JMP | BPF_CALL, 0, 0, 0, helpers[rnd(sizeof(helpers) / sizeof(helpers[0]))]);
		return 1;
	}
	p[0] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return 1;
}

static int build(struct bpf_insn *p, int map)
{
	int len = 3 + (int)rnd(MAXN - 4), n = 0;

	/* most programs start the way compiled ones do: the key slot and r2 ready */
	if (rnd(3)) {
		p[n++] = I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -8, (int32_t)rnd(4));
		p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
		p[n++] = I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
	}
	while (n < len - 2)
		n += gen(p + n, n, len - 2, map);
	if (rnd(4))
		p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, (int32_t)rnd(2));
	p[n++] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

static char logbuf[1 << 16];

/* the verifier's reason: the last line before "processed ..." */
static const char *reason(void)
{
	static char line[200];
	char *end = strstr(logbuf, "\nprocessed "), *b;

	if (!end)
		end = logbuf + strlen(logbuf);
	while (end > logbuf && end[-1] == '\n')
		end--;
	for (b = end; b > logbuf && b[-1] != '\n'; b--)
		;
	snprintf(line, sizeof(line), "%.*s", (int)(end - b), b);
	return line;
}

int main(int argc, char **argv)
{
	unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
	int count = argc > 2 ? atoi(argv[2]) : 1000, verbose = argc > 3;
	static const uint32_t types[] = { BPF_PROG_TYPE_PERF_EVENT, BPF_PROG_TYPE_PERF_EVENT,
					  BPF_PROG_TYPE_SYSCALL, BPF_PROG_TYPE_SOCKET_FILTER };
	union bpf_attr a;
	int map;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 16;
	a.max_entries = 8;
	map = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (map < 0) {
		perror("vdiff: map");
		return 1;
	}
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < count; i++) {
		struct bpf_insn p[MAXN + 4];
		uint32_t type = types[rnd(4)];
		int n = build(p, map), fd, e;

		memset(&a, 0, sizeof(a));
		a.prog_type = type;
		a.prog_flags = type == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0;
		a.insns = (uintptr_t)p;
		a.insn_cnt = (uint32_t)n;
		a.license = (uintptr_t) "GPL";
		a.log_level = 1;
		a.log_buf = (uintptr_t)logbuf;
		a.log_size = sizeof(logbuf);
		logbuf[0] = 0;
		fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
		e = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		printf("%lu.%d %d %s\n", seed, i, e, e ? reason() : "");
		if (verbose)
			for (int j = 0; j < n; j++)
				printf("    %2d: %02x %x %x %d %d\n", j, p[j].code, p[j].dst_reg,
				       p[j].src_reg, p[j].off, p[j].imm);
	}
	close(map);
	return 0;
}
