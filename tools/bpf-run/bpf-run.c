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
 *
 *   --jit, --jit-llsc   run the program's JIT code (bpf/jit.c) instead of the fast interpreter,
 *                       and take r0 from it (insns still counts the interpreter's run, whose r0
 *                       must agree).  Only on an aarch64 host (or under qemu-aarch64).  --jit
 *                       uses LSE atomics when the CPU has them (AT_HWCAP), --jit-llsc never.
 *                       A program the JIT refuses is interpreted and named on stderr; a
 *                       directory run ends with "jit: N compiled, M interpreted".
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
	cd = calloc((size_t)p->len, sizeof(*cd));
	fd = calloc((size_t)p->len, sizeof(*fd));
	bpf_interp_decode(p->insns, (uint32_t)p->len, cd, BPF_STACK_SIZE, true);
	bpf_interp_decode(p->insns, (uint32_t)p->len, fd, BPF_STACK_SIZE, false);
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
			"       bpf-run --dump FILE.data\n");
	return 2;
}

int main(int argc, char **argv)
{
	long repeat = 0;
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
		else if (!strcmp(argv[i], "--jit"))
			jit_mode = 1;
		else if (!strcmp(argv[i], "--jit-llsc"))
			jit_mode = 2;
		else if (!strcmp(argv[i], "--dump"))
			dump = 1;
		else
			return usage();
	}
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
