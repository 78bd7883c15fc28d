/* t_bpf_sleepable: the map types a sleepable program (BPF_PROG_TYPE_SYSCALL with
 * BPF_F_SLEEPABLE) may use, as Linux 6.1's check_map_prog_compatibility has them: arrays,
 * hashes, ring buffers (both kinds) and maps of maps load; perf event arrays, stack traces,
 * queues, stacks, program arrays and bloom filters are EINVAL with "Sleepable programs can
 * only use array, hash, and ringbuf maps".
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"

static char logbuf[8192];

int main(void)
{
	static const struct {
		uint32_t t, ks, vs, max;
		int ok;
		const char *name;
	} m[] = {
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 4, 1, "array" },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, 1, "percpu_array" },
		{ BPF_MAP_TYPE_HASH, 4, 8, 4, 1, "hash" },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4, 1, "percpu_hash" },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 4, 1, "lru_hash" },
		{ BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 1, "ringbuf" },
		{ BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096, 1, "user_ringbuf" },
		{ BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 1, "array_of_maps" },
		{ BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, 1, "hash_of_maps" },
		{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, 0, "perf_event_array" },
		{ BPF_MAP_TYPE_STACK_TRACE, 4, 8, 4, 0, "stack_trace" },
		{ BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0, "queue" },
		{ BPF_MAP_TYPE_STACK, 0, 8, 4, 0, "stack" },
		{ BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0, "prog_array" },
		{ BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 4, 0, "bloom_filter" },
	};
	int inner;

	tap_init("t_bpf_sleepable", 60);
	inner = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	for (size_t i = 0; i < N_INSNS(m); i++) {
		int fd = map_create_attr(m[i].t, m[i].ks, m[i].vs, m[i].max, 0, 0, inner), p, e;
		struct bpf_insn prog[] = { LD_MAP(1, fd), RET0 };
		union bpf_attr a;
		char what[128];

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SYSCALL;
		a.prog_flags = BPF_F_SLEEPABLE;
		a.insns = (uintptr_t)prog;
		a.insn_cnt = N_INSNS(prog);
		a.license = (uintptr_t) "GPL";
		a.log_level = 1;
		a.log_buf = (uintptr_t)logbuf;
		a.log_size = sizeof(logbuf);
		logbuf[0] = 0;
		p = (int)sys_bpf(BPF_PROG_LOAD, &a);
		e = errno;
		if (m[i].ok) {
			snprintf(what, sizeof(what), "a sleepable program may use a %s", m[i].name);
			CHECK(fd >= 0 && p >= 0, what, "map %d prog %d %s\n%s", fd, p, strerror(e), logbuf);
		} else {
			snprintf(what, sizeof(what), "a sleepable program using a %s: EINVAL", m[i].name);
			CHECK(fd >= 0 && p < 0 && e == EINVAL &&
				      strstr(logbuf, "Sleepable programs can only use array, hash, and ringbuf maps"),
			      what, "map %d prog %d %s\n%s", fd, p, strerror(e), logbuf);
		}
		if (p >= 0)
			close(p);
		close(fd);
	}
	close(inner);
	return tap_done();
}
