/* t_bpf_mapinmap: BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS as Linux 6.1 has
 * them.  Creation: the inner-map template from inner_map_fd (every map type here but a program
 * array, ENOTSUPP, and a map-in-map, EINVAL; EBADF / EINVAL for other fds; inner_map_fd
 * ignored by other map types), each outer kind's attribute rules, BPF_F_INNER_MAP on arrays
 * only.  The syscall: map fds in, ids out, the template refusing unlike maps (type, sizes,
 * flags, an array's max_entries unless BPF_F_INNER_MAP), each kind's flags and errnos, slots
 * holding their maps.  Programs: a lookup in the outer map gives the inner map (null-checked,
 * then usable as a map of the template's shape), swapped at run time by the syscall; the
 * verifier refusing update on the outer map and accesses past the template's value size.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_insn.h"
#include "bpf_raw.h"

#define ENOTSUPP_ 524
#define ST_W(o, i) INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, o, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)

static char logbuf[65536];

static int outer_create(uint32_t type, uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags, int inner)
{
	return map_create_attr(type, ks, vs, max, flags, 0, inner);
}

static long put(int outer, uint32_t key, int inner, uint64_t flags)
{
	return map_elem(BPF_MAP_UPDATE_ELEM, outer, &key, &inner, flags);
}

static long del(int outer, uint32_t key)
{
	return map_elem(BPF_MAP_DELETE_ELEM, outer, &key, NULL, 0);
}

static long get(int outer, uint32_t key, uint32_t *id)
{
	return map_elem(BPF_MAP_LOOKUP_ELEM, outer, &key, id, 0);
}

static uint32_t next_key(int fd)
{
	uint32_t nk = 12345;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.next_key = (uintptr_t)&nk;
	return sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) ? 12345 : nk;
}

static void templates(void)
{
	static const struct {
		uint32_t t, ks, vs, max;
		const char *name;
	} in[] = {
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 4, "array" },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, "percpu_array" },
		{ BPF_MAP_TYPE_HASH, 4, 8, 4, "hash" },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4, "percpu_hash" },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 4, "lru_hash" },
		{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, "perf_event_array" },
		{ BPF_MAP_TYPE_STACK_TRACE, 4, 8, 4, "stack_trace" },
		{ BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, "ringbuf" },
		{ BPF_MAP_TYPE_QUEUE, 0, 8, 4, "queue" },
		{ BPF_MAP_TYPE_STACK, 0, 8, 4, "stack" },
		{ BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 4, "bloom_filter" },
	};
	char what[128];
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0), pa, ao, p[2], fd;

	for (size_t i = 0; i < N_INSNS(in); i++) {
		int inner = map_create(in[i].t, in[i].ks, in[i].vs, in[i].max, 0), o, h;

		o = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, inner);
		h = outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, 0, inner);
		snprintf(what, sizeof(what), "a %s template for ARRAY_OF_MAPS and HASH_OF_MAPS", in[i].name);
		CHECK(inner >= 0 && o >= 0 && h >= 0, what, "inner %d array %d hash %d: %s", inner, o, h,
		      strerror(errno));
		close(inner);
		close(o);
		close(h);
	}
	pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, pa), ENOTSUPP_,
		     "a program array template: ENOTSUPP (524)");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, 0, pa), ENOTSUPP_,
		     "... for HASH_OF_MAPS too");
	ao = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, arr);
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, ao), EINVAL,
		     "an ARRAY_OF_MAPS template (two levels): EINVAL");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, 0, ao), EINVAL,
		     "... for HASH_OF_MAPS too");
	fd = outer_create(BPF_MAP_TYPE_ARRAY, 4, 4, 2, 0, arr);
	CHECK(fd >= 0, "an ARRAY ignores inner_map_fd", "%s", strerror(errno));
	close(fd);
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, 999), EBADF, "inner_map_fd closed: EBADF");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 8, 2, 0, 999), EINVAL,
		     "value_size 8 (before the fd): EINVAL");
	if (pipe(p) == 0) {
		EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, p[0]), EINVAL,
			     "inner_map_fd a pipe: EINVAL");
		close(p[0]);
		close(p[1]);
	}
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 0, 0, arr), EINVAL, "ARRAY_OF_MAPS max_entries 0: EINVAL");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, BPF_F_INNER_MAP, arr), EINVAL,
		     "ARRAY_OF_MAPS BPF_F_INNER_MAP: EINVAL");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, BPF_F_RDONLY_PROG, arr), EINVAL,
		     "ARRAY_OF_MAPS BPF_F_RDONLY_PROG: EINVAL");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 8, 2, 0, arr), EINVAL, "HASH_OF_MAPS value_size 8: EINVAL");
	EXPECT_ERRNO(outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 0, 4, 2, 0, arr), EINVAL, "HASH_OF_MAPS key_size 0: EINVAL");
	fd = outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, arr);
	CHECK(fd >= 0, "HASH_OF_MAPS with BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG", "%s", strerror(errno));
	close(fd);
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2, BPF_F_INNER_MAP), EINVAL,
		     "PERCPU_ARRAY BPF_F_INNER_MAP: EINVAL");
	EXPECT_ERRNO(map_create(BPF_MAP_TYPE_HASH, 4, 8, 2, BPF_F_INNER_MAP), EINVAL, "HASH BPF_F_INNER_MAP: EINVAL");
	fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 2, BPF_F_INNER_MAP);
	CHECK(fd >= 0, "ARRAY with BPF_F_INNER_MAP", "%s", strerror(errno));
	close(fd);
	close(ao);
	close(pa);
	close(arr);
}

static void array_of_maps(void)
{
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0), a8 = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 8, 0);
	int a16 = map_create(BPF_MAP_TYPE_ARRAY, 4, 16, 4, 0), h = map_create(BPF_MAP_TYPE_HASH, 4, 8, 4, 0);
	int ai = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_INNER_MAP);
	int ai8 = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 8, BPF_F_INNER_MAP);
	int ao = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, arr), aoi, fd;
	uint32_t v = 0, id;

	if (!CHECK(ao >= 0, "ARRAY_OF_MAPS of 2, template ARRAY(4, 8, 4)", "%s", strerror(errno)))
		return;
	EXPECT_ERRNO(get(ao, 0, &v), ENOENT, "LOOKUP of an empty slot: ENOENT");
	EXPECT_OK(put(ao, 0, arr, 0), "UPDATE slot 0 with the template map itself");
	v = 0;
	CHECK(get(ao, 0, &v) == 0 && v == obj_id(arr), "LOOKUP gives the inner map's id", "got %u want %u", v,
	      obj_id(arr));
	EXPECT_ERRNO(put(ao, 0, a8, 0), EINVAL, "an ARRAY of 8 entries (template 4): EINVAL");
	EXPECT_ERRNO(put(ao, 0, a16, 0), EINVAL, "an ARRAY of 16-byte values: EINVAL");
	EXPECT_ERRNO(put(ao, 0, h, 0), EINVAL, "a HASH: EINVAL");
	EXPECT_ERRNO(put(ao, 0, ai, 0), EINVAL, "an ARRAY with BPF_F_INNER_MAP (template without): EINVAL");
	EXPECT_ERRNO(put(ao, 0, arr, BPF_NOEXIST), EINVAL, "UPDATE with BPF_NOEXIST: EINVAL");
	EXPECT_ERRNO(put(ao, 0, 999, 0), EBADF, "UPDATE with a closed fd: EBADF");
	EXPECT_ERRNO(put(ao, 5, arr, 0), E2BIG, "UPDATE past the end: E2BIG");
	EXPECT_ERRNO(del(ao, 5), E2BIG, "DELETE past the end: E2BIG");
	EXPECT_ERRNO(get(ao, 5, &v), ENOENT, "LOOKUP past the end: ENOENT");
	EXPECT_ERRNO(del(ao, 1), ENOENT, "DELETE of an empty slot: ENOENT");
	EXPECT_ERRNO(map_elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, ao, &v, &v, 0), ENOTSUPP_,
		     "LOOKUP_AND_DELETE: ENOTSUPP (524)");
	CHECK(next_key(ao) == 0, "GET_NEXT_KEY(NULL) = 0", "got %u", next_key(ao));
	aoi = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, ai);
	EXPECT_OK(put(aoi, 0, ai8, 0), "template with BPF_F_INNER_MAP: an array of another size fits");
	EXPECT_ERRNO(put(aoi, 0, arr, 0), EINVAL, "... but not one without the flag: EINVAL");
	/* a slot keeps its map after the map's fd closes, until the slot goes */
	close(a16);
	a16 = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	id = obj_id(a16);
	EXPECT_OK(put(ao, 1, a16, 0), "UPDATE slot 1 with a new array");
	close(a16);
	fd = obj_fd_by_id(BPF_MAP_GET_FD_BY_ID, id);
	CHECK(fd >= 0, "a map in a slot outlives its fd", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(del(ao, 1), "DELETE slot 1");
	EXPECT_ERRNO(obj_fd_by_id(BPF_MAP_GET_FD_BY_ID, id), ENOENT, "the deleted slot's map is gone (GET_FD_BY_ID ENOENT)");
	close(aoi);
	close(ao);
	close(ai);
	close(ai8);
	close(h);
	close(a8);
	close(arr);
}

static void hash_of_maps(void)
{
	int h = map_create(BPF_MAP_TYPE_HASH, 4, 8, 4, 0), h2 = map_create(BPF_MAP_TYPE_HASH, 4, 8, 100, 0);
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	int ho = outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 2, 0, h);
	uint32_t v = 0, k = 7;

	if (!CHECK(ho >= 0, "HASH_OF_MAPS of 2, template HASH(4, 8)", "%s", strerror(errno)))
		return;
	EXPECT_ERRNO(get(ho, 7, &v), ENOENT, "LOOKUP of a missing key: ENOENT");
	EXPECT_ERRNO(put(ho, 7, h2, BPF_EXIST), ENOENT, "UPDATE of a missing key with BPF_EXIST: ENOENT");
	EXPECT_OK(put(ho, 7, h2, 0), "UPDATE key 7 with a HASH of 100 entries (max_entries may differ)");
	EXPECT_ERRNO(put(ho, 7, h2, BPF_NOEXIST), EEXIST, "UPDATE of key 7 with BPF_NOEXIST: EEXIST");
	EXPECT_ERRNO(put(ho, 7, 999, BPF_NOEXIST), EBADF, "a closed fd with BPF_NOEXIST: EBADF (the fd first)");
	EXPECT_ERRNO(put(ho, 7, arr, 0), EINVAL, "an ARRAY (template HASH): EINVAL");
	EXPECT_ERRNO(put(ho, 7, h, 5), EINVAL, "UPDATE flags 5: EINVAL");
	EXPECT_OK(put(ho, 8, h, 0), "UPDATE key 8");
	EXPECT_ERRNO(put(ho, 9, h, 0), E2BIG, "a third key in a HASH_OF_MAPS of 2: E2BIG");
	v = 0;
	CHECK(get(ho, 7, &v) == 0 && v == obj_id(h2), "LOOKUP gives the inner map's id", "got %u want %u", v,
	      obj_id(h2));
	EXPECT_OK(put(ho, 7, h, BPF_EXIST), "UPDATE key 7 again with BPF_EXIST replaces its map");
	CHECK(get(ho, 7, &v) == 0 && v == obj_id(h), "... LOOKUP gives the new id", "got %u want %u", v, obj_id(h));
	EXPECT_OK(del(ho, 7), "DELETE key 7");
	EXPECT_ERRNO(del(ho, 7), ENOENT, "DELETE of key 7 again: ENOENT");
	EXPECT_ERRNO(map_elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, ho, &k, &v, 0), ENOTSUPP_,
		     "LOOKUP_AND_DELETE: ENOTSUPP (524)");
	CHECK(next_key(ho) == 8, "GET_NEXT_KEY(NULL) = 8, the only key", "got %u", next_key(ho));
	close(ho);
	close(h);
	close(h2);
	close(arr);
}

static void programs(void)
{
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0), arr2 = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	int hin = map_create(BPF_MAP_TYPE_HASH, 4, 8, 4, 0);
	int ao = outer_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 1, 0, arr);
	int ho = outer_create(BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 1, 0, hin);
	uint64_t c1 = 0, c2 = 0, c3 = 0, seven = 7;
	uint32_t one = 1, three = 3;
	int fd, err;

	if (!CHECK(arr >= 0 && arr2 >= 0 && hin >= 0 && ao >= 0 && ho >= 0, "two arrays, a hash and their outer maps",
		   "%s", strerror(errno)))
		return;
	map_elem(BPF_MAP_UPDATE_ELEM, hin, &three, &seven, 0);
	{
		/* ao[0][1] += 1; ho[7][3] += 1 */
#define INNER_INC(outer, okey, ikey)                                                               \
	ST_W(-4, okey), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, outer), CALL(BPF_FUNC_map_lookup_elem), \
		JEQ_K(0, 0, 8), MOV_X(1, 0), ST_W(-8, ikey), MOV_X(2, 10), ADD_K(2, -8),             \
		CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 2), MOV_K(1, 1),                         \
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD)
		struct bpf_insn p[] = { INNER_INC(ao, 0, 1), INNER_INC(ho, 7, 3), RET0 };
		struct bpf_insn upd[] = { ST_W(-4, 0), MOV_X(2, 10), ADD_K(2, -4), MOV_X(3, 10), ADD_K(3, -4),
					  MOV_K(4, 0), LD_MAP(1, ao), CALL(BPF_FUNC_map_update_elem), RET0 };
		/* the inner value is 8 bytes: a read at offset 8 is past it */
		struct bpf_insn past[] = { ST_W(-4, 0), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, ao),
					   CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 6), MOV_X(1, 0), MOV_X(2, 10),
					   ADD_K(2, -4), CALL(BPF_FUNC_map_lookup_elem), JEQ_K(0, 0, 1),
					   LDX_DW(0, 0, 8), RET0 };
		/* the outer lookup used as a map before its null check */
		struct bpf_insn nocheck[] = { ST_W(-4, 0), MOV_X(2, 10), ADD_K(2, -4), LD_MAP(1, ao),
					      CALL(BPF_FUNC_map_lookup_elem), MOV_X(1, 0), MOV_X(2, 10), ADD_K(2, -4),
					      CALL(BPF_FUNC_map_lookup_elem), RET0 };

		EXPECT_ERRNO(prog_load_log(BPF_PROG_TYPE_PERF_EVENT, upd, N_INSNS(upd), logbuf, sizeof(logbuf)), EINVAL,
			     "map_update_elem on an ARRAY_OF_MAPS: EINVAL");
		CHECK(strstr(logbuf, "cannot pass map_type 12 into func bpf_map_update_elem#2"),
		      "... log: cannot pass map_type 12 into func bpf_map_update_elem#2", "%s", logbuf);
		EXPECT_ERRNO(prog_load_log(BPF_PROG_TYPE_PERF_EVENT, past, N_INSNS(past), logbuf, sizeof(logbuf)),
			     EACCES, "reading past the template's value size: EACCES");
		CHECK(strstr(logbuf, "invalid access to map value, value_size=8 off=8 size=8"),
		      "... log: invalid access to map value, value_size=8 off=8 size=8", "%s", logbuf);
		EXPECT_ERRNO(prog_load_log(BPF_PROG_TYPE_PERF_EVENT, nocheck, N_INSNS(nocheck), logbuf, sizeof(logbuf)),
			     EACCES, "an inner map used before the null check: EACCES");
		CHECK(strstr(logbuf, "R1 type=map_value_or_null expected=map_ptr"),
		      "... log: R1 type=map_value_or_null expected=map_ptr", "%s", logbuf);
		fd = prog_load_log(BPF_PROG_TYPE_PERF_EVENT, p, N_INSNS(p), logbuf, sizeof(logbuf));
		if (!CHECK(fd >= 0, "a program looking up through both outer maps loads", "%s\n%s", strerror(errno),
			   logbuf))
			return;
	}
	err = prog_run_on_faults(fd, 4);
	CHECK(!err, "it runs on page faults with both outer maps empty", "err %d", err);
	put(ao, 0, arr, 0);
	put(ho, 7, hin, 0);
	err = prog_run_on_faults(fd, 4);
	map_elem(BPF_MAP_LOOKUP_ELEM, arr, &one, &c1, 0);
	map_elem(BPF_MAP_LOOKUP_ELEM, hin, &three, &c3, 0);
	CHECK(!err && c1 >= 4 && c3 == 7 + c1, "the program counts in ao[0][1] and ho[7][3]",
	      "err %d: %llu, %llu", err, (unsigned long long)c1, (unsigned long long)c3);
	put(ao, 0, arr2, 0);
	err = prog_run_on_faults(fd, 4);
	map_elem(BPF_MAP_LOOKUP_ELEM, arr2, &one, &c2, 0);
	{
		uint64_t again = 0;

		map_elem(BPF_MAP_LOOKUP_ELEM, arr, &one, &again, 0);
		CHECK(!err && c2 >= 4 && again == c1, "after the syscall swaps ao[0], the program counts in the new array",
		      "err %d: new %llu, old %llu then %llu", err, (unsigned long long)c2, (unsigned long long)c1,
		      (unsigned long long)again);
	}
	close(fd);
	close(ao);
	close(ho);
	close(arr);
	close(arr2);
	close(hin);
}

int main(void)
{
	tap_init("t_bpf_mapinmap", 60);
	templates();
	array_of_maps();
	hash_of_maps();
	programs();
	return tap_done();
}
