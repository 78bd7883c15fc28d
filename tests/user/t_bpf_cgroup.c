/* t_bpf_cgroup: BPF_MAP_TYPE_CGROUP_ARRAY and the cgroup helpers as Linux 6.1 has them.
 * A perf_event program run on this task's page faults records get_current_cgroup_id,
 * get_current_ancestor_cgroup_id at levels 0-3 and current_task_under_cgroup on each slot of a
 * cgroup array (a cgroup, its child, the root, an empty slot, an index past the end), while
 * the task sits in the root, is moved into a child cgroup, into its parent, and back: the ids
 * are the directories' inode numbers (stat), the ancestors and "under" answers follow the
 * tree, an empty slot is -EAGAIN, a slot past the end -E2BIG.  A slot keeps its cgroup after
 * rmdir (still a cgroup, nothing under it).
 * The map's syscall side: create checks (key/value size 4, PRESERVE_ELEMS EINVAL), update
 * with a cgroup directory fd, EBADF for no fd, a file, a directory elsewhere, a cgroup's file,
 * ENOENT for a removed cgroup, EINVAL for flags, E2BIG past the end; lookup ENOTSUPP (524);
 * delete ENOENT / E2BIG.  The verifier pairs the helper with this map type only (EINVAL).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"
#include "cgroup_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define ENOTSUPP_ 524
#define NRES 12

#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)

static int res_map, cg_map;
static char logbuf[65536];

/* results: 0 cgroup id, 1-4 ancestor ids at levels 0..3, 5-9 under(slot 0..4), 10 under(100),
 * 11 ancestor id at level -1 */
static int load_prog(void)
{
	struct bpf_insn p[160];
	size_t n = 0;
	int slot = 0;

#define EMIT(...)                                                                                  \
	do {                                                                                       \
		const struct bpf_insn e_[] = { __VA_ARGS__ };                                      \
		for (size_t i_ = 0; i_ < N_INSNS(e_); i_++)                                        \
			p[n++] = e_[i_];                                                           \
	} while (0)
#define STORE() EMIT(STX_DW(9, 0, 8 * slot++))
	EMIT(ST_W(10, -4, 0), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, res_map),
	     CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 0));
	size_t jmp = n - 1;

	EMIT(MOV_X(9, 0));
	EMIT(CALL(BPF_FUNC_get_current_cgroup_id));
	STORE();
	for (int l = 0; l < 4; l++) {
		EMIT(MOV_K(1, l), CALL(BPF_FUNC_get_current_ancestor_cgroup_id));
		STORE();
	}
	for (int s = 0; s < 5; s++) {
		EMIT(LD_MAP(1, cg_map), MOV_K(2, s), CALL(BPF_FUNC_current_task_under_cgroup));
		STORE();
	}
	EMIT(LD_MAP(1, cg_map), MOV_K(2, 100), CALL(BPF_FUNC_current_task_under_cgroup));
	STORE();
	EMIT(MOV_K(1, -1), CALL(BPF_FUNC_get_current_ancestor_cgroup_id));
	STORE();
	p[jmp].off = (int16_t)(n - jmp - 1);
	EMIT(RET0);
#undef STORE
#undef EMIT
	return prog_load_log(BPF_PROG_TYPE_PERF_EVENT, p, n, logbuf, sizeof(logbuf));
}

static int run(int prog, int64_t *r)
{
	uint32_t k = 0;
	int64_t zero[NRES];

	memset(zero, 0x55, sizeof(zero));
	map_elem(BPF_MAP_UPDATE_ELEM, res_map, &k, zero, BPF_ANY);
	if (prog_run_on_faults(prog, 1))
		return -1;
	return (int)map_elem(BPF_MAP_LOOKUP_ELEM, res_map, &k, r, 0);
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

struct expect {
	const char *where;
	int64_t v[NRES];
};

static void check_run(int prog, const struct expect *e)
{
	static const char *const names[NRES] = {
		"get_current_cgroup_id", "ancestor(0)", "ancestor(1)", "ancestor(2)", "ancestor(3)",
		"under(slot 0: A)", "under(slot 1: A/b)", "under(slot 2: empty)",
		"under(slot 3: root)", "under(slot 4: removed C)", "under(100): -E2BIG",
		"ancestor(-1)"
	};
	int64_t r[NRES];
	char what[128];

	if (!tap_check(run(prog, r) == 0, e->where, "run: %s", strerror(errno)))
		return;
	for (int i = 0; i < NRES; i++) {
		snprintf(what, sizeof(what), "%s: %s", e->where, names[i]);
		tap_check(r[i] == e->v[i], what, "%lld, want %lld", (long long)r[i],
			  (long long)e->v[i]);
	}
}

static void set_slot(uint32_t k, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	char what[128];

	snprintf(what, sizeof(what), "update slot %u with %s's fd", k, path);
	tap_check(fd >= 0 && map_elem(BPF_MAP_UPDATE_ELEM, cg_map, &k, &fd, BPF_ANY) == 0, what,
		  "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void check_update_err(const char *what, uint32_t k, int fd, uint64_t flags, int want)
{
	long r = map_elem(BPF_MAP_UPDATE_ELEM, cg_map, &k, &fd, flags);

	tap_check(r == -1 && errno == want, what, "%ld errno %d, want %d", r, errno, want);
}

static void map_checks(const char *A, const char *C)
{
	char path[256];
	uint32_t k, v;
	long r;
	int fd;

	errno = 0;
	tap_check(map_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 8, 4, 0) < 0 && errno == EINVAL,
		  "create with value_size 8: EINVAL", "%s", strerror(errno));
	tap_check(map_create(BPF_MAP_TYPE_CGROUP_ARRAY, 8, 4, 4, 0) < 0 && errno == EINVAL,
		  "create with key_size 8: EINVAL", "%s", strerror(errno));
	tap_check(map_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, BPF_F_PRESERVE_ELEMS) < 0 &&
			  errno == EINVAL,
		  "create with PRESERVE_ELEMS: EINVAL", "%s", strerror(errno));
	fd = open(CG, O_RDONLY | O_DIRECTORY);
	check_update_err("update with flags NOEXIST: EINVAL", 0, fd, BPF_NOEXIST, EINVAL);
	check_update_err("update past the end: E2BIG", 5, fd, BPF_ANY, E2BIG);
	close(fd);
	check_update_err("update with no such fd: EBADF", 0, 999, BPF_ANY, EBADF);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	check_update_err("update with another directory: EBADF", 0, fd, BPF_ANY, EBADF);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	check_update_err("update with a file: EBADF", 0, fd, BPF_ANY, EBADF);
	close(fd);
	snprintf(path, sizeof(path), "%s/cgroup.procs", A);
	fd = open(path, O_RDONLY);
	check_update_err("update with a cgroup's file: EBADF", 0, fd, BPF_ANY, EBADF);
	close(fd);
	if (mkdir(C, 0755) == 0) {
		fd = open(C, O_RDONLY | O_DIRECTORY);
		rmdir(C);
		check_update_err("update with a removed cgroup: ENOENT", 0, fd, BPF_ANY, ENOENT);
		close(fd);
	}
	k = 0;
	r = map_elem(BPF_MAP_LOOKUP_ELEM, cg_map, &k, &v, 0);
	tap_check(r == -1 && errno == ENOTSUPP_, "syscall lookup: ENOTSUPP", "%ld errno %d", r,
		  errno);
	k = 2;
	r = map_elem(BPF_MAP_DELETE_ELEM, cg_map, &k, NULL, 0);
	tap_check(r == -1 && errno == ENOENT, "delete of an empty slot: ENOENT", "%ld errno %d", r,
		  errno);
	k = 9;
	r = map_elem(BPF_MAP_DELETE_ELEM, cg_map, &k, NULL, 0);
	tap_check(r == -1 && errno == E2BIG, "delete past the end: E2BIG", "%ld errno %d", r, errno);
}

static void verifier_checks(void)
{
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
	const struct bpf_insn wrong_map[] = {
		LD_MAP(1, arr), MOV_K(2, 0), CALL(BPF_FUNC_current_task_under_cgroup), RET0,
	};
	const struct bpf_insn lookup[] = {
		ST_W(10, -4, 0), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, cg_map),
		CALL(BPF_FUNC_map_lookup_elem), RET0,
	};
	int fd;

	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, wrong_map, N_INSNS(wrong_map), logbuf,
			   sizeof(logbuf));
	tap_check(fd < 0 && errno == EINVAL, "current_task_under_cgroup on an ARRAY: EINVAL",
		  "%d %s", fd, strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, lookup, N_INSNS(lookup), logbuf,
			   sizeof(logbuf));
	tap_check(fd < 0 && errno == EINVAL, "map_lookup_elem on a CGROUP_ARRAY: EINVAL", "%d %s",
		  fd, strerror(errno));
	if (fd >= 0)
		close(fd);
	close(arr);
}

int main(void)
{
	char A[96], B[128], C[128];
	uint64_t ida, idb;
	int prog;

	tap_init("t_bpf_cgroup", 60);
	cg_mount();
	snprintf(A, sizeof(A), CG "/t_bpf_cgroup.%d", getpid());
	snprintf(B, sizeof(B), "%s/b", A);
	snprintf(C, sizeof(C), "%s/c", A);
	if (!tap_check(mkdir(A, 0755) == 0 && mkdir(B, 0755) == 0, "mkdir A and A/b", "%s",
		       strerror(errno)))
		return tap_done();
	ida = ino_of(A);
	idb = ino_of(B);
	res_map = map_create(BPF_MAP_TYPE_ARRAY, 4, 8 * NRES, 1, 0);
	cg_map = map_create(BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 5, 0);
	if (!tap_check(res_map >= 0 && cg_map >= 0, "create the maps", "%s", strerror(errno)))
		return tap_done();
	map_checks(A, C);
	verifier_checks();
	set_slot(0, A);
	set_slot(1, B);
	set_slot(3, CG);
	if (mkdir(C, 0755) == 0) {
		set_slot(4, C);
		tap_check(rmdir(C) == 0, "rmdir of a cgroup a map slot holds", "%s",
			  strerror(errno));
	}
	prog = load_prog();
	if (!tap_check(prog >= 0, "load the program", "%s\n%s", strerror(errno), logbuf))
		return tap_done();

	const struct expect in_root = { "in the root", { 1, 1, 0, 0, 0, 0, 0, -EAGAIN, 1, 0,
							 -E2BIG, 0 } };
	const struct expect in_b = { "in A/b", { (int64_t)idb, 1, (int64_t)ida, (int64_t)idb, 0, 1,
						 1, -EAGAIN, 1, 0, -E2BIG, 0 } };
	const struct expect in_a = { "in A", { (int64_t)ida, 1, (int64_t)ida, 0, 0, 1, 0, -EAGAIN,
					       1, 0, -E2BIG, 0 } };

	check_run(prog, &in_root);
	tap_check(cg_move(B, 0) == 0, "move into A/b", "%s", strerror(errno));
	check_run(prog, &in_b);
	tap_check(cg_move(A, 0) == 0, "move into A", "%s", strerror(errno));
	check_run(prog, &in_a);
	tap_check(cg_move(CG, getpid()) == 0, "back to the root", "%s", strerror(errno));
	check_run(prog, &in_root);
	close(prog);
	close(cg_map);
	close(res_map);
	tap_check(rmdir(B) == 0 && rmdir(A) == 0, "rmdir of our cgroups", "%s", strerror(errno));
	return tap_done();
}
