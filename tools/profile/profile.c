/*
 * profile - sample a command's user stacks with an eBPF program and print them folded (the
 * input of flame graphs): one line per distinct stack, "comm;outermost;...;leaf count", most
 * samples first.
 *
 *   profile [-F freq] -- command [args...]     (default 99 Hz)
 *
 * Per-CPU cpu-clock events (pid -1, one per CPU) in frequency mode each get a
 * BPF_PROG_TYPE_PERF_EVENT program through BPF_LINK_CREATE, as libbpf's
 * bpf_program__attach_perf_event does.  The program keeps only the command's samples
 * (bpf_get_current_pid_tgid), copies the user stack out with bpf_get_stack and counts it in a
 * HASH map keyed by the stack itself, and returns 0 so no sample reaches a ring.
 * Afterwards the stacks are symbolized from the command's ELF .symtab (static binaries).
 * The program is assembled here from struct bpf_insn (no clang in the build).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys_bpf.h"
#include "sys_perf.h"

#define MAX_DEPTH 64 /* frames in a key */
#define KEY_BYTES (8 * MAX_DEPTH)
#define MAX_STACKS 4096
#define MAX_CPUS 64

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)

/*
 * The program.  The user stack (bpf_get_stack, zero-padded) is itself the key of the count
 * map, so two stacks never share a count; a STACK_TRACE map would drop every sample of a stack
 * whose id collides with an earlier one, and a workload with few distinct stacks can lose all
 * of one call path that way.  The key is built in a per-CPU scratch value (a hash key is at
 * most 512 bytes, MAX_BPF_STACK, so 64 frames).  Samples with no stack or no room are counted
 * in "lost".
 */
static int load_prog(int scratch, int counts, int lost, pid_t tgid, uint64_t stack_flags)
{
	struct bpf_insn p[] = {
		/* 0 */ MOV_REG(6, 1),
		/* 1 */ CALL(BPF_FUNC_get_current_pid_tgid),
		/* 2 */ INSN(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32),
		/* 3 */ INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 46, tgid), /* not ours: out */
		/* 4 */ MOV_IMM(1, 0),
		/* 5 */ INSN(BPF_STX | BPF_MEM | BPF_W, 10, 1, -4, 0), /* key 0 */
		/* 6 */ LD_MAP(1, scratch),
		/* 8 */ MOV_REG(2, 10),
		/* 9 */ ADD_IMM(2, -4),
		/* 10 */ CALL(BPF_FUNC_map_lookup_elem),
		/* 11 */ INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 38, 0), /* out */
		/* 12 */ MOV_REG(7, 0),
		/* 13 */ MOV_REG(1, 6),
		/* 14 */ MOV_REG(2, 7),
		/* 15 */ MOV_IMM(3, KEY_BYTES),
		/* 16 */ MOV_IMM(4, (int)stack_flags),
		/* 17 */ CALL(BPF_FUNC_get_stack),
		/* 18 */ INSN(BPF_JMP | BPF_JSLE | BPF_K, 0, 0, 23, 0), /* no stack: lost */
		/* 19 */ LD_MAP(1, counts),
		/* 21 */ MOV_REG(2, 7),
		/* 22 */ CALL(BPF_FUNC_map_lookup_elem),
		/* 23 */ INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0), /* new stack: insert */
		/* 24 */ MOV_IMM(1, 1), /* add: */
		/* 25 */ INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		/* 26 */ INSN(BPF_JMP | BPF_JA, 0, 0, 23, 0), /* out */
		/* 27 */ MOV_IMM(1, 1), /* insert: */
		/* 28 */ INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -16, 0),
		/* 29 */ LD_MAP(1, counts),
		/* 31 */ MOV_REG(2, 7),
		/* 32 */ MOV_REG(3, 10),
		/* 33 */ ADD_IMM(3, -16),
		/* 34 */ MOV_IMM(4, BPF_NOEXIST),
		/* 35 */ CALL(BPF_FUNC_map_update_elem),
		/* 36 */ INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 13, 0), /* out */
		/* 37 */ LD_MAP(1, counts), /* another CPU inserted it first, or the map is full */
		/* 39 */ MOV_REG(2, 7),
		/* 40 */ CALL(BPF_FUNC_map_lookup_elem),
		/* 41 */ INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, -18, 0), /* add */
		/* 42 */ LD_MAP(1, lost), /* lost: */
		/* 44 */ MOV_REG(2, 10),
		/* 45 */ ADD_IMM(2, -4),
		/* 46 */ CALL(BPF_FUNC_map_lookup_elem),
		/* 47 */ INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0), /* out */
		/* 48 */ MOV_IMM(1, 1),
		/* 49 */ INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		/* 50 */ MOV_IMM(0, 0), /* out: no sample reaches a ring */
		/* 51 */ INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static char log[65536];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)p;
	a.insn_cnt = sizeof(p) / sizeof(p[0]);
	a.license = (uintptr_t) "GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);

	if (fd < 0)
		fprintf(stderr, "profile: BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
	return fd;
}

/* ---- symbols from the ELF .symtab ---- */

struct sym {
	uint64_t addr, size;
	const char *name;
};

static struct sym *syms;
static size_t nsyms;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_syms(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *img;

	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto out;
	img = malloc((size_t)st.st_size);
	if (!img || read(fd, img, (size_t)st.st_size) != st.st_size)
		goto out;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size)
		goto out;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);

	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		Elf64_Shdr *strs = &sh[sh[i].sh_link];

		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
		    strs->sh_offset + strs->sh_size > (uint64_t)st.st_size)
			break;
		Elf64_Sym *s = (Elf64_Sym *)(img + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);

		syms = calloc(n, sizeof(*syms));
		for (size_t j = 0; syms && j < n; j++) {
			if (ELF64_ST_TYPE(s[j].st_info) != STT_FUNC || !s[j].st_value ||
			    s[j].st_name >= strs->sh_size)
				continue;
			syms[nsyms++] = (struct sym){ s[j].st_value, s[j].st_size,
						      img + strs->sh_offset + s[j].st_name };
		}
		break;
	}
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
out:
	if (fd >= 0)
		close(fd);
}

static const char *sym_name(uint64_t ip)
{
	size_t lo = 0, hi = nsyms;

	while (lo < hi) { /* the last symbol starting at or below ip */
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < syms[lo - 1].addr + (syms[lo - 1].size ? syms[lo - 1].size : 1))
		return syms[lo - 1].name;
	return "[unknown]";
}

/* ---- main ---- */

struct line {
	uint64_t count;
	char *text;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->text, y->text);
}

static int text_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static const char *resolve(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return cmd;
	for (const char *p = path ? path : "/bin:/usr/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, p, cmd);
		if (access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return cmd;
}

int main(int argc, char **argv)
{
	unsigned long freq = 99;
	int opt, go[2], ev[MAX_CPUS], links[MAX_CPUS], ncpu = 0, status;
	char pathbuf[4096];

	while ((opt = getopt(argc, argv, "+F:")) != -1) {
		if (opt != 'F')
			goto usage;
		freq = strtoul(optarg, NULL, 0);
	}
	if (optind >= argc || !freq) {
usage:
		fprintf(stderr, "usage: profile [-F freq] [--] command [args...]\n");
		return 2;
	}
	const char *exe = resolve(argv[optind], pathbuf, sizeof(pathbuf));
	const char *comm = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;

	if (pipe(go))
		return perror("pipe"), 1;
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		execv(exe, argv + optind);
		fprintf(stderr, "profile: %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(go[0]);
	int scratch = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, KEY_BYTES, 1, 0);
	int counts = bpf_map_new(BPF_MAP_TYPE_HASH, KEY_BYTES, 8, MAX_STACKS, 0);
	int lost = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
	int prog = scratch >= 0 && counts >= 0 && lost >= 0 ?
			   load_prog(scratch, counts, lost, pid, BPF_F_USER_STACK) : -1;

	if (prog < 0) {
		fprintf(stderr, "profile: maps or program: %s\n", strerror(errno));
		kill(pid, SIGKILL);
		return 1;
	}
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct perf_event_attr a;
		union bpf_attr la;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = freq;
		a.sample_type = PERF_SAMPLE_IP;
		ev[cpu] = (int)sys_perf_event_open(&a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (ev[cpu] < 0)
			break; /* past the last CPU */
		memset(&la, 0, sizeof(la));
		la.link_create.prog_fd = prog;
		la.link_create.target_fd = ev[cpu];
		la.link_create.attach_type = BPF_PERF_EVENT;
		links[cpu] = (int)sys_bpf(BPF_LINK_CREATE, &la);
		if (links[cpu] < 0) {
			fprintf(stderr, "profile: BPF_LINK_CREATE cpu %d: %s\n", cpu, strerror(errno));
			kill(pid, SIGKILL);
			return 1;
		}
		ncpu++;
	}
	if (!ncpu) {
		fprintf(stderr, "profile: perf_event_open cpu-clock: %s\n", strerror(errno));
		kill(pid, SIGKILL);
		return 1;
	}
	if (write(go[1], "g", 1) != 1)
		return perror("write"), 1;
	close(go[1]);
	if (waitpid(pid, &status, 0) < 0)
		return perror("waitpid"), 1;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		close(links[cpu]);
		close(ev[cpu]);
	}

	load_syms(exe);
	struct line *lines = calloc(MAX_STACKS, sizeof(*lines));
	size_t nl = 0;
	uint64_t key[MAX_DEPTH], next[MAX_DEPTH], total = 0, nlost = 0;
	uint32_t zero = 0;
	int first = 1;

	while (lines && nl < MAX_STACKS &&
	       bpf_map_elem(BPF_MAP_GET_NEXT_KEY, counts, first ? NULL : key, next, 0) == 0) {
		uint64_t n;
		const uint64_t *ips = next;
		char *t = malloc(16 * 1024);
		size_t len = 0;
		int depth = 0;

		first = 0;
		memcpy(key, next, sizeof(key));
		if (!t || bpf_map_elem(BPF_MAP_LOOKUP_ELEM, counts, key, &n, 0)) {
			free(t);
			continue;
		}
		while (depth < MAX_DEPTH && ips[depth])
			depth++;
		len += (size_t)snprintf(t + len, 16 * 1024 - len, "%s", comm);
		for (int i = depth - 1; i >= 0 && len < 16 * 1024 - 256; i--) /* outermost first */
			len += (size_t)snprintf(t + len, 16 * 1024 - len, ";%s",
						/* a return address points past its call */
						sym_name(i ? ips[i] - 4 : ips[i]));
		lines[nl++] = (struct line){ n, t };
		total += n;
	}
	/* stacks that differ only within a function name the same line: merge them */
	qsort(lines, nl, sizeof(*lines), text_cmp);
	size_t nm = 0;

	for (size_t i = 0; i < nl; i++) {
		if (nm && !strcmp(lines[nm - 1].text, lines[i].text)) {
			lines[nm - 1].count += lines[i].count;
			free(lines[i].text);
		} else {
			lines[nm++] = lines[i];
		}
	}
	nl = nm;
	qsort(lines, nl, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nl; i++)
		printf("%s %llu\n", lines[i].text, (unsigned long long)lines[i].count);
	if (bpf_map_elem(BPF_MAP_LOOKUP_ELEM, lost, &zero, &nlost, 0))
		nlost = 0;
	fprintf(stderr, "profile: %llu samples (%llu lost), %zu stacks, %d CPUs at %lu Hz; %s exited %d\n",
		(unsigned long long)total, (unsigned long long)nlost, nl, ncpu, freq, comm,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
