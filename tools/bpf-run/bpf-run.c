/*
 * bpf-run.c - host tool: run eBPF bytecode through perfkernel's interpreter (bpf/interp.c)
 * without the verifier, for the conformance suite and the benchmarks.
 *
 *   bpf-run [--repeat N] [--mem FILE] [--time] PROGRAM
 *   bpf-run DIRECTORY          every *.data in it: "PASS name" / "FAIL name: why", then
 *                              "N passed, M failed"
 *   bpf-run --dump FILE.data   the assembled program as hex (8 bytes per slot), for checks
 *
 * PROGRAM is raw bytecode (8 bytes per slot, struct bpf_insn little-endian) or a bpf_conformance
 * `.data` file (`-- asm` or `-- raw`, `-- mem`, `-- result`).  r1 = the memory (--mem FILE, the
 * .data file's `-- mem`, else 4096 bytes of the benchmark buffer), r2 = its length, r10 = top of
 * a stack of BPF_MAX_FRAMES frames of 512 bytes.  Prints `r0=0x<hex> insns=<N>` where N counts
 * the instructions of one run (the counting interpreter); --repeat N runs the fast interpreter N
 * more times (what benchmarks measure), --time adds `ns_per_run=<ns>` for those runs.
 * Programs get bpf_check_structure (jump/call targets, opcodes, helper ids) only: no verifier.
 * So a helper call is refused (exit 1, naming the helper) when the helper takes anything but
 * plain numbers (a map, a key, memory, ctx, a callback): nothing vouches for such a pointer.
 *
 *   --jit, --jit-llsc   run the program's JIT code (bpf/jit.c) instead of the fast interpreter,
 *                       and take r0 from it (insns still counts the interpreter's run, whose r0
 *                       must agree).  Only on an aarch64 host (or under qemu-aarch64).  --jit
 *                       uses LSE atomics when the CPU has them (AT_HWCAP), --jit-llsc never.
 *                       A program the JIT refuses is interpreted and named on stderr; a
 *                       directory run ends with "jit: N compiled, M interpreted".
 *   --jit --fuzz N [--seed S]   differential fuzzing: N random terminating programs (every
 *                       ALU/ALU64 operation incl. sdiv/smod, movsx, byte swaps; forward
 *                       JMP/JMP32/JA/gotol; stack loads, sign-extending loads, stores and atomics
 *                       of every size) run through the interpreter and the JIT: r0 (a fold of
 *                       r0-r9) and the stack must be identical.  Prints "fuzz: N programs, C
 *                       compared, M differ, R refused"; exits 1 on any difference or refusal.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../bpf/bpf_internal.h"
#include "bpf-run.h"
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

static int jit_mode; /* 0 interpreter, 1 JIT (LSE when present), 2 JIT with LL/SC atomics */
static int jit_compiled, jit_interpreted;

/* r0 from the JIT code of p, or 0 with *ok false when the JIT refuses the program. */
static uint64_t run_jit(const struct bpf_insn *insns, int len, uint64_t r1, uint64_t r2, void *top,
			long repeat, bool *ok)
{
	struct bpf_jit_opts o = { .frame_size = BPF_STACK_SIZE };
	struct bpf_jit_image img;
	uint64_t r0;
	int err;

#if defined(__aarch64__) && defined(HWCAP_ATOMICS)
	o.lse = jit_mode == 1 && (getauxval(AT_HWCAP) & HWCAP_ATOMICS);
#endif
	err = bpf_jit_compile(insns, (uint32_t)len, &o, &img);
	*ok = !err;
	if (err) {
		jit_interpreted++;
		fprintf(stderr, "bpf-run: JIT refused the program (%d): interpreted\n", err);
		return 0;
	}
	jit_compiled++;
	r0 = img.fn(r1, r2, top);
	for (long i = 0; i < repeat; i++)
		img.fn(r1, r2, top);
	bpf_jit_free(&img);
	return r0;
}

struct program {
	struct bpf_insn *insns;
	int len;
	uint8_t *mem;
	size_t memlen;
	int has_mem;
	int has_result;
	uint64_t result;
	int has_error;
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, 4096, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static void bench_buffer(uint8_t *buf, size_t len)
{
	uint32_t x = 0x12345678;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = (uint8_t)(x >> 24);
	}
}

/* Append the text of one section line to a growing string. */
static int append(char **s, size_t *len, const char *line)
{
	size_t l = strlen(line);
	char *n = realloc(*s, *len + l + 2);

	if (!n)
		return -1;
	memcpy(n + *len, line, l);
	n[*len + l] = '\n';
	n[*len + l + 1] = 0;
	*s = n;
	*len += l + 1;
	return 0;
}

static int parse_data(char *text, struct program *p, char *err, size_t errlen)
{
	char *sec[5] = { 0 }; /* asm, raw, mem, result, error */
	size_t seclen[5] = { 0 };
	static const char *const names[5] = { "asm", "raw", "mem", "result", "error" };
	int cur = -1, rc = -1;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "--") && !strchr(line, '#') && line[strspn(line, " \t")] == '-') {
			cur = -1;
			for (int i = 0; i < 5; i++)
				if (strstr(line, names[i]))
					cur = i;
			if (cur >= 0 && !sec[cur])
				append(&sec[cur], &seclen[cur], "");
			continue;
		}
		if (cur >= 0 && append(&sec[cur], &seclen[cur], line))
			goto out;
	}
	if (sec[1]) {
		char *s = sec[1], *end;
		int cap = 64;

		p->insns = calloc((size_t)cap, 8);
		for (;;) {
			char *hash = NULL;

			while (*s == ' ' || *s == '\t' || *s == '\n')
				s++;
			if (*s == '#') {
				hash = strchr(s, '\n');
				if (!hash)
					break;
				s = hash;
				continue;
			}
			if (!*s)
				break;
			uint64_t v = strtoull(s, &end, 16);

			if (end == s) {
				snprintf(err, errlen, "bad raw word");
				goto out;
			}
			s = end;
			if (p->len == cap)
				p->insns = realloc(p->insns, (size_t)(cap *= 2) * 8);
			memcpy(&p->insns[p->len++], &v, 8);
		}
	} else if (sec[0]) {
		if (bpfrun_assemble(sec[0], &p->insns, &p->len, err, errlen))
			goto out;
	} else {
		snprintf(err, errlen, "no program");
		goto out;
	}
	if (sec[2]) {
		char *s = sec[2], *end;

		p->mem = malloc(strlen(s) / 2 + 1);
		p->has_mem = 1;
		for (;;) {
			char *hash = strchr(s, '#');

			if (hash)
				*hash = ' ';
			unsigned long b = strtoul(s, &end, 16);

			if (end == s)
				break;
			p->mem[p->memlen++] = (uint8_t)b;
			s = end;
		}
	}
	if (sec[3]) {
		char *s = sec[3];

		while (*s == '\n' || *s == ' ')
			s++;
		p->has_result = 1;
		p->result = strtoull(s, NULL, 0);
		if (*s == '-')
			p->result = (uint64_t)strtoll(s, NULL, 0);
	}
	p->has_error = sec[4] != NULL;
	rc = 0;
out:
	for (int i = 0; i < 5; i++)
		free(sec[i]);
	return rc;
}

static int load_program(const char *path, struct program *p, char *err, size_t errlen)
{
	size_t len;
	char *text = read_file(path, &len);
	size_t pl = strlen(path);
	int rc;

	memset(p, 0, sizeof(*p));
	if (!text) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (pl > 5 && !strcmp(path + pl - 5, ".data")) {
		rc = parse_data(text, p, err, errlen);
		free(text);
		return rc;
	}
	if (len % 8 || !len) {
		free(text);
		snprintf(err, errlen, "%s: size %zu is not a multiple of 8", path, len);
		return -1;
	}
	p->insns = (struct bpf_insn *)text;
	p->len = (int)(len / 8);
	return 0;
}

/*
 * Without the verifier nothing says a helper's pointer argument points anywhere: a program
 * calling a helper that takes one (map_lookup_elem with a scalar in r1, say) is refused with
 * a message instead of crashing the tool.  0, or -1 with err set.
 */
static int check_helpers(const struct program *p, char *err, size_t errlen)
{
	for (int i = 0; i < p->len; i++) {
		const struct bpf_insn *in = &p->insns[i];
		const struct bpf_helper *h;

		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++;
			continue;
		}
		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg == BPF_PSEUDO_CALL)
			continue;
		h = bpf_helper_get(in->imm);
		for (int a = 0; h && a < 5; a++) {
			if (h->args[a] == ARG_NONE || h->args[a] == ARG_ANY)
				continue;
			snprintf(err, errlen,
				 "refused: insn %d calls helper %d (%s), whose argument %d is a pointer "
				 "(bpf-run has no verifier to check it)", i, in->imm, h->name, a + 1);
			return -1;
		}
	}
	return 0;
}

struct run_result {
	uint64_t r0, insns, ns;
};

static int run(struct program *p, long repeat, struct run_result *res, char *err, size_t errlen)
{
	struct bpf_verifier_log log = { 0 };
	struct bpf_dinsn *cd, *fd;
	uint8_t *stack = calloc(BPF_MAX_FRAMES, BPF_STACK_SIZE);
	void *top = stack + BPF_MAX_FRAMES * BPF_STACK_SIZE;
	uint64_t r1 = p->has_mem ? (uint64_t)(uintptr_t)p->mem : 0;
	struct timespec t0, t1;
	uint8_t *orig = NULL;
	int rc;

	rc = bpf_check_structure(p->insns, (uint32_t)p->len, false, &log);
	if (rc) {
		snprintf(err, errlen, "rejected (%d): %.*s", rc, (int)log.klen, log.kbuf);
		free(stack);
		return -1;
	}
	if (check_helpers(p, err, errlen)) {
		free(stack);
		return -1;
	}
	cd = calloc((size_t)p->len, sizeof(*cd));
	fd = calloc((size_t)p->len, sizeof(*fd));
	bpf_interp_decode(p->insns, (uint32_t)p->len, cd, BPF_STACK_SIZE, true, 0);
	bpf_interp_decode(p->insns, (uint32_t)p->len, fd, BPF_STACK_SIZE, false, 0);
	if (jit_mode && p->has_mem && p->memlen) {
		orig = malloc(p->memlen);
		memcpy(orig, p->mem, p->memlen);
	}
	res->r0 = bpf_interp_run(cd, r1, p->memlen, top, &res->insns);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (jit_mode) {
		bool ok;
		uint64_t r0;

#if !defined(__aarch64__)
		snprintf(err, errlen, "--jit runs aarch64 code: use an aarch64 build (qemu-aarch64)");
		free(orig);
		free(cd);
		free(fd);
		free(stack);
		return -1;
#endif
		/* the interpreter's run left memory changed: run the JIT on a fresh copy */
		if (orig)
			memcpy(p->mem, orig, p->memlen);
		r0 = run_jit(p->insns, p->len, r1, p->memlen, top, repeat, &ok);
		if (ok)
			res->r0 = r0;
	} else {
		for (long i = 0; i < repeat; i++)
			bpf_interp_run(fd, r1, p->memlen, top, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->ns = repeat ? (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
				      (t1.tv_nsec - t0.tv_nsec)) / (uint64_t)repeat : 0;
	free(orig);
	free(cd);
	free(fd);
	free(stack);
	return 0;
}

/* ---- differential fuzzing (--fuzz) ---- */

static uint64_t fuzz_state;

static uint32_t fuzz_rand(void)
{
	fuzz_state = fuzz_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(fuzz_state >> 33);
}

static int32_t fuzz_imm(void)
{
	static const int32_t edge[] = { 0, 1, -1, 2, 7, 31, 32, 63, 64, INT32_MIN, INT32_MAX,
					0xffff, 0x8000, -4096, 4095, 4096, 255, 256 };

	return fuzz_rand() % 3 ? edge[fuzz_rand() % (sizeof(edge) / sizeof(edge[0]))]
			       : (int32_t)fuzz_rand();
}

#define FZ(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* One random instruction at slot i of a body ending at slot end (forward jumps only). */
static int fuzz_insn(struct bpf_insn *p, int i, int end)
{
	static const uint8_t alu[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
				       BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH, BPF_END };
	static const uint8_t jmp[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
				       BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE, BPF_JA };
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	static const int32_t atomics[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH,
					   BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH,
					   BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG };
	uint8_t d = (uint8_t)(fuzz_rand() % 10), s = (uint8_t)(fuzz_rand() % 10);
	uint32_t kind = fuzz_rand() % 16;
	uint8_t sz = sizes[fuzz_rand() % 4];
	int bytes;
	int16_t off;

	/* a stack offset aligned to the access size, within the 512 bytes under r10 */
	bytes = sz == BPF_B ? 1 : sz == BPF_H ? 2 : sz == BPF_W ? 4 : 8;
	off = (int16_t)-(int)(bytes * (1 + fuzz_rand() % (512 / bytes)));
	if (kind < 8) {
		uint8_t op = alu[fuzz_rand() % sizeof(alu)];
		uint8_t cls = fuzz_rand() & 1 ? BPF_ALU64 : BPF_ALU;
		uint8_t src = fuzz_rand() & 1 ? BPF_X : BPF_K;
		int16_t o = 0;
		int32_t imm = fuzz_imm();

		if (op == BPF_END) {
			imm = 16 << (fuzz_rand() % 3);
			if (cls == BPF_ALU64)
				src = BPF_K; /* bswap */
		} else if ((op == BPF_DIV || op == BPF_MOD) && fuzz_rand() & 1) {
			o = 1; /* sdiv, smod */
		} else if (op == BPF_MOV && src == BPF_X && fuzz_rand() % 3 == 0) {
			o = (int16_t)(8 << (fuzz_rand() % (cls == BPF_ALU64 ? 3 : 2))); /* movsx */
		}
		if (op == BPF_NEG)
			src = BPF_K;
		p[i] = FZ(cls | op | src, d, src == BPF_X ? s : 0, o, imm);
		return 1;
	}
	if (kind < 11) {
		uint8_t op = jmp[fuzz_rand() % sizeof(jmp)];
		uint8_t cls = fuzz_rand() & 1 ? BPF_JMP : BPF_JMP32;
		uint8_t src = fuzz_rand() & 1 ? BPF_X : BPF_K;
		int t = (int)(fuzz_rand() % (uint32_t)(end - i)); /* 0 .. end-i-1 */

		if (op == BPF_JA) {
			p[i] = cls == BPF_JMP ? FZ(BPF_JMP | BPF_JA, 0, 0, (int16_t)t, 0)
					      : FZ(BPF_JMP32 | BPF_JA, 0, 0, 0, t); /* gotol */
			return 1;
		}
		p[i] = FZ(cls | op | src, d, src == BPF_X ? s : 0, (int16_t)t, fuzz_imm());
		return 1;
	}
	if (kind < 13) { /* loads from the stack, plain or sign-extending */
		bool sx = sz != BPF_DW && fuzz_rand() & 1;

		p[i] = FZ(BPF_LDX | (sx ? BPF_MEMSX : BPF_MEM) | sz, d, 10, off, 0);
		return 1;
	}
	if (kind < 15) {
		p[i] = fuzz_rand() & 1 ? FZ(BPF_STX | BPF_MEM | sz, 10, s, off, 0)
				       : FZ(BPF_ST | BPF_MEM | sz, 10, 0, off, fuzz_imm());
		return 1;
	}
	/* atomics: word or doubleword */
	sz = fuzz_rand() & 1 ? BPF_DW : BPF_W;
	off = (int16_t)-(int)((sz == BPF_DW ? 8 : 4) * (1 + fuzz_rand() % 64));
	p[i] = FZ(BPF_STX | BPF_ATOMIC | sz, 10, s, off, atomics[fuzz_rand() % 10]);
	return 1;
}

static int run_fuzz(long n, uint64_t seed)
{
	uint8_t *s1 = calloc(BPF_MAX_FRAMES, BPF_STACK_SIZE), *s2 = calloc(BPF_MAX_FRAMES, BPF_STACK_SIZE);
	size_t ssz = (size_t)BPF_MAX_FRAMES * BPF_STACK_SIZE;
	struct bpf_insn p[128];
	struct bpf_dinsn dp[128];
	long differ = 0, refused = 0, ran = 0;

	fuzz_state = seed;
	for (long k = 0; k < n; k++) {
		struct bpf_verifier_log log = { 0 };
		int len = 0, body = 4 + (int)(fuzz_rand() % 48), end;
		uint64_t r0i, r0j;
		bool ok;

		for (int r = 0; r < 10; r++) { /* every register defined */
			uint64_t v = (uint64_t)fuzz_imm() << 32 | (uint32_t)fuzz_imm();

			p[len++] = FZ(BPF_LD | BPF_DW | BPF_IMM, (uint8_t)r, 0, 0, (int32_t)v);
			p[len++] = FZ(0, 0, 0, 0, (int32_t)(v >> 32));
		}
		end = len + body;
		while (len < end)
			len += fuzz_insn(p, len, end);
		for (int r = 1; r < 10; r++) { /* fold r1-r9 into r0 */
			p[len++] = FZ(BPF_ALU64 | BPF_MUL | BPF_K, 0, 0, 0, 31);
			p[len++] = FZ(BPF_ALU64 | BPF_XOR | BPF_X, 0, (uint8_t)r, 0, 0);
		}
		p[len++] = FZ(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		if (bpf_check_structure(p, (uint32_t)len, false, &log))
			continue;
		memset(s1, 0, ssz);
		memset(s2, 0, ssz);
		bpf_interp_decode(p, (uint32_t)len, dp, BPF_STACK_SIZE, false, 0);
		r0i = bpf_interp_run(dp, 0, 0, s1 + ssz, NULL);
		r0j = run_jit(p, len, 0, 0, s2 + ssz, 0, &ok);
		if (!ok) {
			refused++;
			continue;
		}
		ran++;
		if (r0i != r0j || memcmp(s1, s2, ssz)) {
			if (differ++ < 5) {
				printf("FAIL fuzz program %ld (seed %llu): r0 %#llx interpreter, %#llx JIT%s\n", k,
				       (unsigned long long)seed, (unsigned long long)r0i,
				       (unsigned long long)r0j, memcmp(s1, s2, ssz) ? "; stacks differ" : "");
				for (int q = 0; q < len; q++)
					printf("  %02x %u %u %d %d\n", p[q].code, p[q].dst_reg, p[q].src_reg,
					       p[q].off, p[q].imm);
			}
		}
	}
	printf("fuzz: %ld programs, %ld compared, %ld differ, %ld refused\n", n, ran, differ, refused);
	free(s1);
	free(s2);
	return differ || refused || ran < n / 2 ? 1 : 0;
}

static int filter_data(const struct dirent *d)
{
	size_t l = strlen(d->d_name);

	return l > 5 && !strcmp(d->d_name + l - 5, ".data");
}

static int run_dir(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, filter_data, alphasort), pass = 0, failed = 0;

	if (n < 0) {
		perror(dir);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		char path[4096], err[512] = "";
		struct program p;
		struct run_result r;
		int ok = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (load_program(path, &p, err, sizeof(err)) == 0) {
			if (run(&p, 0, &r, err, sizeof(err)) == 0) {
				if (p.has_error)
					snprintf(err, sizeof(err), "expected an error, got r0=0x%llx",
						 (unsigned long long)r.r0);
				else if (p.has_result && r.r0 != p.result)
					snprintf(err, sizeof(err), "r0=0x%llx, expected 0x%llx",
						 (unsigned long long)r.r0, (unsigned long long)p.result);
				else
					ok = 1;
			} else if (p.has_error) {
				ok = 1;
			}
		}
		if (ok) {
			printf("PASS %s\n", list[i]->d_name);
			pass++;
		} else {
			printf("FAIL %s: %s\n", list[i]->d_name, err);
			failed++;
		}
		free(p.insns);
		free(p.mem);
		free(list[i]);
	}
	free(list);
	if (jit_mode)
		printf("jit: %d compiled, %d interpreted\n", jit_compiled, jit_interpreted);
	printf("%d passed, %d failed\n", pass, failed);
	return failed ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bpf-run [--jit|--jit-llsc] [--repeat N] [--mem FILE] [--time] PROGRAM|DIR\n"
			"       bpf-run --dump FILE.data\n"
			"       bpf-run --jit|--jit-llsc --fuzz N [--seed S]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long repeat = 0, fuzz_n = 0;
	uint64_t seed = 1;
	const char *memfile = NULL, *path;
	int timing = 0, dump = 0;
	struct program p;
	struct run_result r;
	char err[512];
	DIR *d;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
			memfile = argv[++i];
		else if (!strcmp(argv[i], "--time"))
			timing = 1;
		else if (!strcmp(argv[i], "--fuzz") && i + 1 < argc)
			fuzz_n = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--jit"))
			jit_mode = 1;
		else if (!strcmp(argv[i], "--jit-llsc"))
			jit_mode = 2;
		else if (!strcmp(argv[i], "--dump"))
			dump = 1;
		else
			return usage();
	}
	if (fuzz_n > 0 && jit_mode && i == argc)
		return run_fuzz(fuzz_n, seed);
	if (i + 1 != argc || repeat < 0)
		return usage();
	path = argv[i];
	d = opendir(path);
	if (d) {
		closedir(d);
		return run_dir(path);
	}
	if (load_program(path, &p, err, sizeof(err))) {
		fprintf(stderr, "bpf-run: %s\n", err);
		return 1;
	}
	if (dump) {
		for (int k = 0; k < p.len; k++)
			for (int b = 0; b < 8; b++)
				printf("%02x", ((uint8_t *)&p.insns[k])[b]);
		printf("\n");
		return 0;
	}
	if (memfile) {
		size_t len;

		free(p.mem);
		p.mem = (uint8_t *)read_file(memfile, &len);
		if (!p.mem) {
			fprintf(stderr, "bpf-run: %s: %s\n", memfile, strerror(errno));
			return 1;
		}
		p.memlen = len;
		p.has_mem = 1;
	} else if (!p.has_mem) {
		p.mem = malloc(4096);
		p.memlen = 4096;
		p.has_mem = 1;
		bench_buffer(p.mem, 4096);
	}
	if (run(&p, repeat, &r, err, sizeof(err))) {
		fprintf(stderr, "bpf-run: %s\n", err);
		return 1;
	}
	printf("r0=0x%llx insns=%llu\n", (unsigned long long)r.r0, (unsigned long long)r.insns);
	if (timing)
		printf("ns_per_run=%llu\n", (unsigned long long)r.ns);
	free(p.insns);
	free(p.mem);
	return 0;
}
