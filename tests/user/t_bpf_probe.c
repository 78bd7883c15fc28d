/* t_bpf_probe: which helpers BPF_PROG_TYPE_PERF_EVENT programs may call, found as
 * `bpftool feature probe kernel` finds them: load `call ID; r0 = 0; exit` (GPL) for every
 * helper id and count the helper as available unless the verifier log says "invalid func " or
 * "unknown func ".  The set must be Linux 6.1's (Debian's arm64 kernel under refvm.sh: 77
 * helpers, listed below): every one is built here.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <linux/bpf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

static char logbuf[65536];

static int probe(int id)
{
	struct bpf_insn insns[3] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = id },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 3;
	a.license = (uintptr_t) "GPL";
	a.log_level = 1;
	a.log_buf = (uintptr_t)logbuf;
	a.log_size = sizeof(logbuf);
	logbuf[0] = 0;
	fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return !strstr(logbuf, "invalid func ") && !strstr(logbuf, "unknown func ");
}

/* Linux 6.1 (Debian arm64, refvm.sh), 2026-11-30: 81 ids by this probe */
static const int linux61[] = {
	1,   2,	  3,   4,   5,	 6,   7,   8,	12,  14,  15,  16,  22,	 25,  27,  35,	36,
	37,  42,  45,  55,  56,	 67,  80,  87,	88,  89,  93,  94,  105, 106, 109, 112, 113,
	114, 115, 117, 118, 119, 120, 123, 125, 130, 131, 132, 133, 134, 141, 148, 149, 153,
	154, 156, 157, 158, 164, 165, 169, 170, 171, 172, 173, 174, 175, 176, 177, 180, 181,
	182, 191, 194, 195, 197, 198, 199, 200, 201, 202, 203, 208, 209,
};

static int in(const int *set, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == id)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	char what[96], list[2048];
	size_t len = 0;
	int n = 0;

	tap_init("t_bpf_probe", 60);
	list[0] = 0;
	for (int id = 1; id < __BPF_FUNC_MAX_ID; id++) {
		int ok = probe(id);
		int want = in(linux61, sizeof(linux61) / sizeof(linux61[0]), id);

		if (ok) {
			n++;
			len += snprintf(list + len, sizeof(list) - len, "%d,", id);
		}
		if (argc > 1)
			continue;
		snprintf(what, sizeof(what), "helper %d %s", id, want ? "available" : "refused");
		if (ok == want)
			tap_pass(what);
		else
			tap_fail(what, "got %s", ok ? "available" : "refused");
	}
	printf("# %d helpers available: %s\n", n, list);
	return tap_done();
}
