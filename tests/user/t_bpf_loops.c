/* t_bpf_loops: five clang-built perf_event programs with loops (tests/user/bpf/loops.bpf.c:
 * a bounded for loop, a while loop, nested loops, bpf_loop with a callback, bpf_loop stopped
 * by its callback) load through Debian's libbpf 1.1 and give the same results here and on
 * Linux 6.1; also bpf_for_each_map_elem over an array and bpf_loop's errors (flags: -EINVAL,
 * more than 1 << 23 loops: -E2BIG).  Each program runs on page faults (SOFTWARE, period 1,
 * this CPU) and writes its results to an array map the test reads.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const char _binary_loops_bpf_o_start[], _binary_loops_bpf_o_end[];
extern const char _binary_badloops_bpf_o_start[], _binary_badloops_bpf_o_end[];

static char logbuf[65536];

/* Load program name of badloops.bpf.o alone: 0 or the load's -errno, the log in logbuf. */
static int load_one(const char *name)
{
	return load_one_prog(_binary_badloops_bpf_o_start, _binary_badloops_bpf_o_end, name, logbuf,
			     sizeof(logbuf));
}

static const struct bad {
	const char *name, *what;
	int err;
	const char *msg;
} bads[] = {
	{ "cb_ret2", "a bpf_loop callback returning 2: EINVAL", -EINVAL,
	  "At callback return the register R0 has value" },
	{ "each_pea", "for_each_map_elem over a perf event array: ENOTSUPP (524)", -524,
	  "callback function not allowed for map" },
	{ "key_write", "a for_each_map_elem callback writing its key: EACCES", -EACCES,
	  "write to change key R2 not allowed" },
	{ "nested_loop", "bpf_loop in a bpf_loop callback loads", 0, "" },
	{ "cb_ok", "a bpf_loop callback reading its stack context loads", 0, "" },
};




static const char *const progs[] = { "sum_for", "collatz", "nested", "loop_cb", "loop_stop",
				     "each_elem", "loop_errors" };

int main(void)
{
	uint64_t params[4] = { 100, 27, 10, 0 }, res[16] = { 0 }, want[16] = { 0 }, h = 0;
	struct bpf_object *obj;
	cpu_set_t set;
	int err, resfd, parfd;
	char what[128];

	tap_init("t_bpf_loops", 60);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	libbpf_set_print(faults_quiet);
	obj = bpf_object__open_mem(_binary_loops_bpf_o_start,
				   (size_t)(_binary_loops_bpf_o_end - _binary_loops_bpf_o_start), NULL);
	if (!CHECK(obj, "bpf_object__open_mem", "errno %d", errno))
		return tap_done();
	err = bpf_object__load(obj);
	if (!CHECK(!err, "bpf_object__load: all seven loop programs verify", "err %d", err))
		return tap_done();
	resfd = bpf_object__find_map_fd_by_name(obj, "res");
	parfd = bpf_object__find_map_fd_by_name(obj, "params");
	for (uint32_t k = 0; k < 4; k++)
		bpf_map_update_elem(parfd, &k, &params[k], 0);
	for (unsigned int i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i]);

		snprintf(what, sizeof(what), "%s runs on page faults", progs[i]);
		err = p ? run_on_faults(p, 8) : -ENOENT;
		CHECK(!err, what, "err %d", err);
	}
	for (uint32_t k = 0; k < 16; k++)
		bpf_map_lookup_elem(resfd, &k, &res[k]);
	for (uint64_t i = 0; i < 100; i++)
		h = h * 31 + i;
	want[0] = h;
	want[1] = 111;
	want[2] = 64;
	want[3] = 4950;
	want[4] = 100;
	want[5] = 8;
	want[6] = 8;
	want[7] = 137 + (6ull << 32);
	want[8] = 4;
	want[9] = (uint64_t)-EINVAL;
	want[10] = (uint32_t)-E2BIG; /* Linux inlines bpf_loop: a 32-bit move */
	want[11] = 0;
	static const char *const names[] = {
		"bounded for loop: hash of 0..99",
		"while loop: collatz(27) takes 111 steps",
		"nested loops: 64 of 10x10 products divisible by 3",
		"bpf_loop(100): the callback summed its indexes to 4950",
		"bpf_loop(100) returns 100",
		"bpf_loop stopped by the callback at index 7 returns 8",
		"bpf_loop stopped at index 7: 8 callback runs",
		"bpf_for_each_map_elem: values sum to 137, keys to 6",
		"bpf_for_each_map_elem over a 4-entry array returns 4",
		"bpf_loop with flags 1: -EINVAL",
		"bpf_loop with 1<<23 + 1 loops: -E2BIG",
		"bpf_loop refused: the callback never ran",
	};
	for (int k = 0; k < 12; k++)
		CHECK(res[k] == want[k], names[k], "got %#llx want %#llx", (unsigned long long)res[k],
		      (unsigned long long)want[k]);
	bpf_object__close(obj);
	for (unsigned int i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		err = load_one(bads[i].name);
		CHECK(err == bads[i].err && strstr(logbuf, bads[i].msg), bads[i].what,
		      "got %d, log: %.400s", err, logbuf);
	}
	return tap_done();
}
