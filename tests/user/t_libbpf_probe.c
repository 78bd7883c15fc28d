/* t_libbpf_probe: Debian's libbpf 1.1 (static) attaching BPF_PROG_TYPE_KPROBE programs
 * (tests/user/bpf/probes.bpf.c, embedded) as its users write them: SEC("uprobe//bin/hot:burn")
 * and SEC("uretprobe//bin/hot:burn") auto-attached (libbpf reads burn's offset from /bin/hot,
 * the uprobe PMU's type and format/retprobe from sysfs, opens pid -1 cpu 0 and links the
 * program), and bpf_program__attach_kprobe on the getpid handler (its name from
 * /proc/kallsyms: __arm64_sys_getpid on Linux, sys_getpid here).  /bin/hot 1 calls burn 8
 * times, for 1.5 million iterations in all; the programs count only the tgid the test names
 * in their target map.  Passes here and on Linux 6.1 (refvm.sh).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char _binary_probes_bpf_o_start[], _binary_probes_bpf_o_end[];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		vfprintf(stderr, fmt, ap);
	return 0;
}

static const char *getpid_symbol(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[200];
	const char *found = NULL;

	while (f && !found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*c %199s", sym) != 1)
			continue;
		if (!strcmp(sym, "__arm64_sys_getpid"))
			found = "__arm64_sys_getpid";
		else if (!strcmp(sym, "sys_getpid"))
			found = "sys_getpid";
	}
	if (f)
		fclose(f);
	return found;
}

static uint64_t value(int map, uint32_t k)
{
	uint64_t v = ~0ull;

	bpf_map_lookup_elem(map, &k, &v);
	return v;
}

int main(void)
{
	tap_init("t_libbpf_probe", 60);
	libbpf_set_print(quiet);
	struct bpf_object *obj = bpf_object__open_mem(
		_binary_probes_bpf_o_start,
		(size_t)(_binary_probes_bpf_o_end - _binary_probes_bpf_o_start), NULL);

	if (!CHECK(obj, "bpf_object__open_mem", "errno %d", errno))
		return tap_done();
	if (!CHECK(!bpf_object__load(obj), "bpf_object__load of three KPROBE programs", "errno %d", errno))
		return tap_done();
	int counts = bpf_object__find_map_fd_by_name(obj, "counts");
	int target = bpf_object__find_map_fd_by_name(obj, "target");
	struct bpf_program *burn = bpf_object__find_program_by_name(obj, "on_burn");
	struct bpf_program *ret = bpf_object__find_program_by_name(obj, "on_burn_ret");
	struct bpf_program *gp = bpf_object__find_program_by_name(obj, "on_getpid");
	struct bpf_link *l1 = bpf_program__attach(burn);

	CHECK(l1, "SEC(\"uprobe//bin/hot:burn\") auto-attaches", "errno %d", errno);
	struct bpf_link *l2 = bpf_program__attach(ret);

	CHECK(l2, "SEC(\"uretprobe//bin/hot:burn\") auto-attaches", "errno %d", errno);
	const char *sym = getpid_symbol();
	struct bpf_link *l3 = sym ? bpf_program__attach_kprobe(gp, false, sym) : NULL;

	CHECK(l3, "bpf_program__attach_kprobe on the getpid handler", "%s: errno %d", sym ? sym : "none",
	      errno);

	/* hot, started stopped: its tgid goes into target before it runs */
	int go[2];

	if (pipe(go))
		return tap_done();
	pid_t c = fork();

	if (c == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		execl("/bin/hot", "hot", "1", (char *)NULL);
		_exit(3);
	}
	uint32_t k0 = 0;
	uint64_t t = (uint64_t)c;
	int st = 0;

	bpf_map_update_elem(target, &k0, &t, BPF_ANY);
	close(go[0]);
	if (write(go[1], "g", 1) != 1)
		st = -1;
	close(go[1]);
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "/bin/hot 1 ran under the probes", "status %x", st);
	CHECK(value(counts, 0) == 8 && value(counts, 3) == 1500000,
	      "the uprobe program ran at burn's 8 calls and read its argument from pt_regs",
	      "%llu calls, %llu iterations", (unsigned long long)value(counts, 0),
	      (unsigned long long)value(counts, 3));
	CHECK(value(counts, 1) == 8, "the uretprobe program ran at burn's 8 returns", "%llu",
	      (unsigned long long)value(counts, 1));
	t = (uint64_t)getpid();
	bpf_map_update_elem(target, &k0, &t, BPF_ANY);
	for (int i = 0; i < 6; i++)
		syscall(SYS_getpid);
	CHECK(value(counts, 2) == 6, "the kprobe program ran at our 6 getpid calls", "%llu",
	      (unsigned long long)value(counts, 2));
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bpf_link__destroy(l3);
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpid);
	CHECK(value(counts, 2) == 6, "bpf_link__destroy takes the kprobe program off", "%llu",
	      (unsigned long long)value(counts, 2));
	bpf_object__close(obj);
	return tap_done();
}
