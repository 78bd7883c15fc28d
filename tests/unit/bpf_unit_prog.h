/* bpf_unit_prog.h - the host tests' way to load a perf_event program through bpf(2)'s
 * BPF_PROG_LOAD (the fake seam's fd table; with func_info when it has a callback) and run it once on a zeroed context (header only,
 * for test_bpf_btf_access.c and test_bpf_btf_show.c). */
#ifndef TESTS_UNIT_BPF_UNIT_PROG_H
#define TESTS_UNIT_BPF_UNIT_PROG_H

#include <stdint.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf.h>
#include "../fakes/ksvc_fake.h"
#include "prog_btf.h"

/* BPF_PROG_LOAD of a perf_event program, its log (level 1) in log: the fd or -errno. */
static inline long unit_prog_load(const struct bpf_insn *insns, uint32_t n, const char *license,
				  char *log, uint32_t logsize)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(log, 0, logsize);
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)license;
	a.log_buf = (uintptr_t)log;
	a.log_size = logsize;
	a.log_level = 1;
	if (pb_has_pseudo_func(insns, n)) { /* a callback: the func_info a compiler would give */
		struct bpf_func_info fi[PB_STATIC];
		long btf_fd = pb_attach(&a, insns, n, NULL, 0, fi), ret;

		if (btf_fd < 0)
			return btf_fd;
		ret = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
		ksvc_fake_close((int)btf_fd);
		return ret;
	}
	return bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* Run the program of fd once with a zeroed bpf_perf_event_data_kern: its r0. */
static inline uint64_t unit_prog_run(long fd)
{
	struct bpf_perf_event_data_kern ctx;
	struct bpf_prog *prog;
	uint64_t r0;

	memset(&ctx, 0, sizeof(ctx));
	if (bpf_prog_get_fd((int)fd, &prog))
		return (uint64_t)-1;
	r0 = bpf_prog_run(prog, &ctx);
	bpf_prog_put(prog);
	return r0;
}

#endif
