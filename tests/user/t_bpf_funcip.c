/* t_bpf_funcip: bpf_get_func_ip in BPF_PROG_TYPE_KPROBE programs on kprobe and uprobe PMU
 * events (perf_event_open with the types from /sys/bus/event_source/devices/{kprobe,uprobe}/type,
 * PERF_EVENT_IOC_SET_BPF).  The program counts its runs and stores what the helper returned in
 * an array map; the probed kernel function is the getppid handler (__arm64_sys_getppid on
 * Linux, sys_getppid here), its address from /proc/kallsyms.
 *
 *  1 a kprobe on the function's first instruction, by name and by address: that address.
 *  2 a kprobe on a later instruction (the first that opens from +4: Linux refuses +4 there,
 *    takes +8): 0 (Linux 6.1 answers only for probes on a function's entry,
 *    KPROBE_FLAG_ON_FUNC_ENTRY).
 *  3 a kretprobe on it: the function's address (6.1's rethook runs the return handler as
 *    the probe's own kprobe).
 *  4 a uprobe and a uretprobe on a function of this program: 0 (no kprobe runs).
 * The tier runs it with the JIT on and off; passes on Linux 6.1 (refvm.sh --smp 2) with
 * bpf_jit_enable 1 and 0, 2026-12-01 (17/17 each).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include "tracing.h"
#include "tap.h"

uint64_t fip_target(uint64_t x); /* the uprobe's function */
__asm__(".text\n.p2align 3\n.globl fip_target\n.type fip_target,%function\n"
	"fip_target: add x0, x0, #7\n ret\n");

static int map_fd = -1;

/* value[0] += 1, value[1] = bpf_get_func_ip(ctx); return 0 */
static int load_funcip_prog(void)
{
	struct bpf_insn set[] = {
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_func_ip),
		MOV64_REG(7, 0),
	};

	return bpf_count_prog_r7(BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_KPROBE, map_fd, 0, set, 2);
}

static void map_reset(void)
{
	uint32_t key = 0;
	uint64_t v[2] = { 0, 0x5a5a5a5a5a5a5a5aull };

	bpf_map_elem(BPF_MAP_UPDATE_ELEM, map_fd, &key, v, 0);
}

static int pmu_type(const char *pmu)
{
	char path[96], buf[32];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	return read_file(path, buf, sizeof(buf)) > 0 ? atoi(buf) : -1;
}

#define N_CALLS 5

/*
 * Open the event a describes on this task, attach prog, enable it, run trigger N_CALLS times,
 * and check the program ran that often and saw want from bpf_get_func_ip.
 */
static void probe_case(const char *what, struct perf_event_attr *a, int prog, void (*trigger)(void),
		       uint64_t want)
{
	char name[160];
	uint64_t v[2];
	int fd;

	a->disabled = 1;
	fd = (int)peo(a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(name, sizeof(name), "%s: perf_event_open", what);
		CHECK(0, name, "errno %d", errno);
		return;
	}
	map_reset();
	int set = ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog);

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < N_CALLS; i++)
		trigger();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	bpf_count_value(map_fd, v);
	close(fd);
	snprintf(name, sizeof(name), "%s: the program runs at each of %d hits", what, N_CALLS);
	CHECK(set == 0 && v[0] == N_CALLS, name, "SET_BPF %d errno %d, %llu runs", set, errno,
	      (unsigned long long)v[0]);
	snprintf(name, sizeof(name), "%s: bpf_get_func_ip is %#llx", what, (unsigned long long)want);
	CHECK(v[1] == want, name, "got %#llx", (unsigned long long)v[1]);
}

static void call_getppid(void)
{
	syscall(SYS_getppid);
}

static void call_target(void)
{
	volatile uint64_t r = fip_target(1);

	(void)r;
}

int main(void)
{
	static const char *const names[] = { "__arm64_sys_getppid", "sys_getppid", NULL };
	const char *sym = NULL;
	int kp = pmu_type("kprobe"), up = pmu_type("uprobe");
	struct perf_event_attr a;

	tap_init("t_bpf_funcip", 60);
	uint64_t addr = kallsyms_find(names, &sym);

	CHECK(kp >= 0 && up >= 0, "kprobe and uprobe PMU types", "%d %d", kp, up);
	CHECK(addr != 0, "the getppid handler in /proc/kallsyms (as root)", "not found");
	map_fd = bpf_count_map();
	int prog = map_fd >= 0 ? load_funcip_prog() : -1;

	CHECK(prog >= 0, "a KPROBE program calling bpf_get_func_ip loads", "map %d errno %d", map_fd,
	      errno);
	if (kp < 0 || up < 0 || !addr || prog < 0)
		return tap_done();
	printf("# probed %s at %#llx\n", sym, (unsigned long long)addr);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)kp;
	a.config1 = (uintptr_t)sym;
	probe_case("kprobe on the entry by name", &a, prog, call_getppid, addr);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)kp;
	a.config2 = addr;
	probe_case("kprobe on the entry by address", &a, prog, call_getppid, addr);

	/* the first instruction past the entry that takes a probe (Linux refuses some) */
	int in = -1;

	for (uint64_t o = 4; o <= 32 && in < 0; o += 4) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = (uint32_t)kp;
		a.config1 = (uintptr_t)sym;
		a.config2 = o;
		in = (int)peo(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	CHECK(in >= 0, "a kprobe inside the function opens", "errno %d", errno);
	if (in >= 0) {
		char what[64];

		close(in);
		printf("# inside at +%llu\n", (unsigned long long)a.config2);
		snprintf(what, sizeof(what), "kprobe at entry+%llu", (unsigned long long)a.config2);
		probe_case(what, &a, prog, call_getppid, 0);
	}

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)kp;
	a.config = 1;
	a.config1 = (uintptr_t)sym;
	probe_case("kretprobe", &a, prog, call_getppid, addr);

	char path[512];
	long off = map_file_offset((void *)fip_target, path, sizeof(path));

	CHECK(off >= 0, "fip_target's file offset from /proc/self/maps", "not found");
	if (off >= 0) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = (uint32_t)up;
		a.config1 = (uintptr_t)path;
		a.config2 = (uint64_t)off;
		probe_case("uprobe", &a, prog, call_target, 0);
		a.config = 1;
		probe_case("uretprobe", &a, prog, call_target, 0);
	}
	close(prog);
	close(map_fd);
	return tap_done();
}
