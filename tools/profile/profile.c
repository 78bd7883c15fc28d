/*
 * profile - sample a command's user stacks with an eBPF program and print them folded (the
 * input of flame graphs): one line per distinct stack, "comm;outermost;...;leaf count", most
 * samples first.
 *
 *   profile [-F freq] [-k] -- command [args...]     (default 99 Hz)
 *
 * Per-CPU cpu-clock events (pid -1, one per CPU) in frequency mode each get a
 * BPF_PROG_TYPE_PERF_EVENT program through BPF_LINK_CREATE, as libbpf's
 * bpf_program__attach_perf_event does.  The program keeps only the command's samples
 * (bpf_get_current_pid_tgid), records the user stack with bpf_get_stackid into a STACK_TRACE
 * map and counts it in a HASH map keyed by stack id, and returns 0 so no sample reaches a ring.
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

#define MAX_DEPTH 127
#define MAX_STACKS 1024
#define MAX_CPUS 64

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int map_create(int type, unsigned int ks, unsigned int vs, unsigned int max)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static long map_op(int cmd, int fd, const void *key, void *value_or_next)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uintptr_t)value_or_next;
	else
		a.value = (uintptr_t)value_or_next;
	return sys_bpf(cmd, &a);
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)

static int load_prog(int stacks, int counts, pid_t tgid, uint64_t stack_flags)
{
	struct bpf_insn p[] = {
		/* 0 */ MOV_REG(6, 1),
		/* 1 */ CALL(BPF_FUNC_get_current_pid_tgid),
		/* 2 */ INSN(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32),
		/* 3 */ INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 26, tgid), /* not ours: out */
		/* 4 */ MOV_REG(1, 6),
		/* 5 */ LD_MAP(2, stacks),
		/* 7 */ MOV_IMM(3, (int)stack_flags),
		/* 8 */ CALL(BPF_FUNC_get_stackid),
		/* 9 */ INSN(BPF_JMP | BPF_JSLT | BPF_K, 0, 0, 20, 0), /* no stack: out */
		/* 10 */ INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0),
		/* 11 */ LD_MAP(1, counts),
		/* 13 */ MOV_REG(2, 10),
		/* 14 */ ADD_IMM(2, -4),
		/* 15 */ CALL(BPF_FUNC_map_lookup_elem),
		/* 16 */ INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0), /* new stack: insert */
		/* 17 */ MOV_IMM(1, 1),
		/* 18 */ INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		/* 19 */ INSN(BPF_JMP | BPF_JA, 0, 0, 10, 0),
		/* 20 */ MOV_IMM(1, 1),
		/* 21 */ INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -16, 0),
		/* 22 */ LD_MAP(1, counts),
		/* 24 */ MOV_REG(2, 10),
		/* 25 */ ADD_IMM(2, -4),
		/* 26 */ MOV_REG(3, 10),
		/* 27 */ ADD_IMM(3, -16),
		/* 28 */ MOV_IMM(4, BPF_NOEXIST),
		/* 29 */ CALL(BPF_FUNC_map_update_elem),
		/* 30 */ MOV_IMM(0, 0), /* out: no sample reaches a ring */
		/* 31 */ INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
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
	int stacks = map_create(BPF_MAP_TYPE_STACK_TRACE, 4, 8 * MAX_DEPTH, MAX_STACKS);
	int counts = map_create(BPF_MAP_TYPE_HASH, 4, 8, MAX_STACKS);
	int prog = stacks >= 0 && counts >= 0 ? load_prog(stacks, counts, pid, BPF_F_USER_STACK) : -1;

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
		ev[cpu] = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
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
	uint32_t key, next;
	uint64_t ips[MAX_DEPTH], total = 0;
	int first = 1;

	while (lines && nl < MAX_STACKS &&
	       map_op(BPF_MAP_GET_NEXT_KEY, counts, first ? NULL : &key, &next) == 0) {
		uint64_t n;
		char *t = malloc(16 * 1024);
		size_t len = 0;
		int depth = 0;

		first = 0;
		key = next;
		if (!t || map_op(BPF_MAP_LOOKUP_ELEM, counts, &key, &n) ||
		    map_op(BPF_MAP_LOOKUP_ELEM, stacks, &key, ips)) {
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
	qsort(lines, nl, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nl; i++)
		printf("%s %llu\n", lines[i].text, (unsigned long long)lines[i].count);
	fprintf(stderr, "profile: %llu samples, %zu stacks, %d CPUs at %lu Hz; %s exited %d\n",
		(unsigned long long)total, nl, ncpu, freq, comm,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
