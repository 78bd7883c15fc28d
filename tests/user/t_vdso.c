/*
 * t_vdso.c - the vDSO, as arm64 Linux 6.1 provides it.
 *
 * Checks: AT_SYSINFO_EHDR points at an AArch64 ET_DYN whose dynamic symbols (found through
 * each of its hash tables: Linux's has a SysV one, ours a GNU one too) include
 * __kernel_clock_gettime, __kernel_gettimeofday, __kernel_clock_getres and
 * __kernel_rt_sigreturn at version LINUX_2.6.39, with a GNU build-id note; /proc/self/maps
 * names it [vdso] (r-xp) with [vvar] (r--p) just below; its functions called directly agree
 * with the syscalls (each value between two syscall readings, the same resolutions,
 * CLOCK_MONOTONIC never going back when alternating them, also moving between CPUs), fall
 * back to the syscall for CPU-time and invalid clocks, and fault in user space on a bad
 * pointer (SIGSEGV inside [vdso], where the syscall returns EFAULT).  No syscall is made for
 * the clocks the vDSO answers: a perf execute breakpoint after every svc instruction of the
 * vDSO counts 0 over many calls, and 1 for a CPU-time clock (so the check can fail).  A
 * handler installed without SA_RESTORER returns through __kernel_rt_sigreturn.  A perf event
 * with attr.mmap/mmap2/mmap_data on a child that execs records [vvar] (data) and then
 * [vdso], after the exec COMM and the program's own MMAP2.  Built twice: static (t_vdso) and
 * dynamically linked (t_vdso_dyn, where ld.so rather than libc's static start-up finds the
 * vDSO).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unwind.h>
#include <unistd.h>
#include "tap.h"
#include "sys_perf.h"

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, struct timezone *);
typedef int (*getres_fn)(clockid_t, struct timespec *);

/* The vDSO as its ELF describes itself. */
struct vdso {
	uintptr_t base, bias;
	const Elf64_Sym *symtab;
	const char *strtab;
	const Elf64_Word *hash;	   /* DT_HASH */
	const Elf64_Word *gnu_hash; /* DT_GNU_HASH */
	const Elf64_Half *versym;
	const Elf64_Verdef *verdef;
	uintptr_t text_start, text_end; /* the PT_LOAD */
	int has_build_id;
};

static struct vdso vd;

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* The version name of symbol i, or NULL. */
static const char *sym_version(uint32_t i)
{
	if (!vd.versym || !vd.verdef)
		return NULL;
	Elf64_Half ndx = vd.versym[i] & 0x7fff;
	const Elf64_Verdef *d = vd.verdef;

	for (;;) {
		if (d->vd_ndx == ndx && !(d->vd_flags & VER_FLG_BASE)) {
			const Elf64_Verdaux *a = (const void *)((const char *)d + d->vd_aux);
			return vd.strtab + a->vda_name;
		}
		if (!d->vd_next)
			return NULL;
		d = (const void *)((const char *)d + d->vd_next);
	}
}

static int sym_matches(uint32_t i, const char *name, const char *version)
{
	const Elf64_Sym *s = &vd.symtab[i];
	const char *v = sym_version(i);

	return s->st_shndx != SHN_UNDEF && !strcmp(vd.strtab + s->st_name, name) && v &&
	       !strcmp(v, version);
}

/* Symbol index through DT_HASH, or 0. */
static uint32_t lookup_sysv(const char *name, const char *version)
{
	uint32_t nbucket = vd.hash[0];
	const Elf64_Word *bucket = vd.hash + 2, *chain = bucket + nbucket;

	for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i])
		if (sym_matches(i, name, version))
			return i;
	return 0;
}

/* Symbol index through DT_GNU_HASH (bloom filter included), or 0. */
static uint32_t lookup_gnu(const char *name, const char *version)
{
	const Elf64_Word *h = vd.gnu_hash;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
	const uint64_t *bloom = (const uint64_t *)(h + 4);
	const Elf64_Word *buckets = (const Elf64_Word *)(bloom + bloom_size);
	const Elf64_Word *chain = buckets + nbuckets;
	uint32_t hv = gnu_hash(name);
	uint64_t word = bloom[(hv / 64) % bloom_size];

	if (!((word >> (hv % 64)) & (word >> ((hv >> shift) % 64)) & 1))
		return 0;
	uint32_t i = buckets[hv % nbuckets];

	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];

		if ((ch | 1) == (hv | 1) && sym_matches(i, name, version))
			return i;
		if (ch & 1)
			return 0;
	}
}

static int vdso_parse(uintptr_t base)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	int loads = 0;

	memset(&vd, 0, sizeof(vd));
	vd.base = base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_type != ET_DYN || eh->e_machine != EM_AARCH64)
		return 0;
	ph = (const void *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !loads++) {
			vd.bias = base + ph[i].p_offset - ph[i].p_vaddr;
			vd.text_start = base + ph[i].p_offset;
			vd.text_end = vd.text_start + ph[i].p_filesz;
		}
	}
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(vd.bias + ph[i].p_vaddr);
		if (ph[i].p_type == PT_NOTE) {
			const char *p = (const char *)(vd.bias + ph[i].p_vaddr), *e = p + ph[i].p_memsz;

			while (p + sizeof(Elf64_Nhdr) <= e) {
				const Elf64_Nhdr *n = (const void *)p;

				if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
				    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz >= 16)
					vd.has_build_id = 1;
				p += sizeof(*n) + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
			}
		}
	}
	if (!loads || !dyn)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = vd.bias + dyn->d_un.d_ptr;

		switch (dyn->d_tag) {
		case DT_SYMTAB: vd.symtab = (const void *)p; break;
		case DT_STRTAB: vd.strtab = (const void *)p; break;
		case DT_HASH: vd.hash = (const void *)p; break;
		case DT_GNU_HASH: vd.gnu_hash = (const void *)p; break;
		case DT_VERSYM: vd.versym = (const void *)p; break;
		case DT_VERDEF: vd.verdef = (const void *)p; break;
		}
	}
	return vd.symtab && vd.strtab && (vd.hash || vd.gnu_hash);
}

/* The function's address, checked through each hash table the vDSO has. */
static void *vdso_sym(const char *name)
{
	uint32_t a = vd.hash ? lookup_sysv(name, "LINUX_2.6.39") : 0;
	uint32_t b = vd.gnu_hash ? lookup_gnu(name, "LINUX_2.6.39") : 0;
	char what[128];

	snprintf(what, sizeof(what), "%s@LINUX_2.6.39 found through each hash table", name);
	if (!CHECK((a || b) && (!vd.hash || a) && (!vd.gnu_hash || b) && (!a || !b || a == b), what,
		   "DT_HASH index %u, DT_GNU_HASH index %u", a, b))
		return NULL;
	if (!a)
		a = b;
	const Elf64_Sym *s = &vd.symtab[a];

	snprintf(what, sizeof(what), "%s is a global function inside the image", name);
	/* Linux's __kernel_rt_sigreturn is STT_NOTYPE (SYM_CODE_START) */
	CHECK((ELF64_ST_TYPE(s->st_info) == STT_FUNC ||
	       (ELF64_ST_TYPE(s->st_info) == STT_NOTYPE && !strcmp(name, "__kernel_rt_sigreturn"))) &&
		      ELF64_ST_BIND(s->st_info) == STB_GLOBAL &&
		      vd.bias + s->st_value >= vd.text_start && vd.bias + s->st_value < vd.text_end,
	      what, "type %d bind %d value %#lx", ELF64_ST_TYPE(s->st_info),
	      ELF64_ST_BIND(s->st_info), (unsigned long)s->st_value);
	return (void *)(vd.bias + s->st_value);
}

static gettime_fn v_gettime;
static gettimeofday_fn v_gettimeofday;
static getres_fn v_getres;
static uintptr_t v_sigreturn;

/* ---- /proc/self/maps ---- */

static void check_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perm[8];
	unsigned long s, e, vs = 0, ve = 0, ws = 0, we = 0;
	char vperm[8] = "", wperm[8] = "";

	if (!CHECK(f, "/proc/self/maps opens", "%s", strerror(errno)))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perm) != 3)
			continue;
		if (strstr(line, " [vdso]\n")) {
			vs = s, ve = e;
			strcpy(vperm, perm);
		} else if (strstr(line, " [vvar]\n")) {
			ws = s, we = e;
			strcpy(wperm, perm);
		}
	}
	fclose(f);
	CHECK(vs == vd.base && !strcmp(vperm, "r-xp"), "/proc/self/maps: [vdso] r-xp at AT_SYSINFO_EHDR",
	      "[vdso] %#lx-%#lx %s, AT_SYSINFO_EHDR %#lx", vs, ve, vperm, (unsigned long)vd.base);
	CHECK(ve >= vd.text_end, "[vdso] covers the image", "ends %#lx, image ends %#lx", ve,
	      (unsigned long)vd.text_end);
	CHECK(ws && we == vs && !strcmp(wperm, "r--p"), "/proc/self/maps: [vvar] r--p just below [vdso]",
	      "[vvar] %#lx-%#lx %s", ws, we, wperm);
	printf("# [vvar] %lu KiB, [vdso] %lu KiB\n", (we - ws) >> 10, (ve - vs) >> 10);
}

/* ---- clocks ---- */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static long sys_gettime(clockid_t c, struct timespec *t)
{
	return syscall(SYS_clock_gettime, c, t);
}

static const struct { clockid_t id; const char *name; } clocks[] = {
	{ CLOCK_REALTIME, "REALTIME" },	  { CLOCK_MONOTONIC, "MONOTONIC" },
	{ CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW" }, { CLOCK_REALTIME_COARSE, "REALTIME_COARSE" },
	{ CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE" }, { CLOCK_BOOTTIME, "BOOTTIME" },
	{ CLOCK_TAI, "TAI" },
};
#define NCLOCKS (sizeof(clocks) / sizeof(clocks[0]))

static void check_clocks(void)
{
	char what[128];

	for (size_t i = 0; i < NCLOCKS; i++) {
		struct timespec a, v, b;
		int bad = 0, r = 0;

		for (int k = 0; k < 200 && !bad; k++) {
			sys_gettime(clocks[i].id, &a);
			r = v_gettime(clocks[i].id, &v);
			sys_gettime(clocks[i].id, &b);
			bad = r || v.tv_nsec < 0 || v.tv_nsec >= 1000000000 || ts_ns(&a) > ts_ns(&v) ||
			      ts_ns(&v) > ts_ns(&b);
		}
		snprintf(what, sizeof(what), "vDSO clock_gettime(%s) between two syscalls", clocks[i].name);
		CHECK(!bad, what, "ret %d: %lld.%09ld <= %lld.%09ld <= %lld.%09ld", r,
		      (long long)a.tv_sec, a.tv_nsec, (long long)v.tv_sec, v.tv_nsec,
		      (long long)b.tv_sec, b.tv_nsec);

		struct timespec rs = { -1, -1 }, rv = { -2, -2 };
		long sr = syscall(SYS_clock_getres, clocks[i].id, &rs);
		int vr = v_getres(clocks[i].id, &rv);

		snprintf(what, sizeof(what), "vDSO clock_getres(%s) is the syscall's", clocks[i].name);
		CHECK(sr == 0 && vr == 0 && rs.tv_sec == rv.tv_sec && rs.tv_nsec == rv.tv_nsec, what,
		      "syscall %ld %lld.%09ld, vDSO %d %lld.%09ld", sr, (long long)rs.tv_sec,
		      rs.tv_nsec, vr, (long long)rv.tv_sec, rv.tv_nsec);
	}
	CHECK(v_getres(CLOCK_MONOTONIC, NULL) == 0, "vDSO clock_getres(MONOTONIC, NULL) returns 0",
	      "nonzero");

	/* clock_settime moves the vDSO's CLOCK_REALTIME too (the kernel's [vvar] update) */
	struct timespec now, later, a1, v1, b1;

	sys_gettime(CLOCK_REALTIME, &now);
	later = now;
	later.tv_sec += 1000;
	if (syscall(SYS_clock_settime, CLOCK_REALTIME, &later) == 0) {
		sys_gettime(CLOCK_REALTIME, &a1);
		int r1 = v_gettime(CLOCK_REALTIME, &v1);
		sys_gettime(CLOCK_REALTIME, &b1);

		sys_gettime(CLOCK_REALTIME, &now);
		now.tv_sec -= 1000;
		syscall(SYS_clock_settime, CLOCK_REALTIME, &now);
		CHECK(r1 == 0 && ts_ns(&a1) <= ts_ns(&v1) && ts_ns(&v1) <= ts_ns(&b1) &&
			      v1.tv_sec >= later.tv_sec,
		      "after clock_settime(+1000 s) the vDSO's CLOCK_REALTIME is the syscall's",
		      "%lld.%09ld <= %lld.%09ld <= %lld.%09ld", (long long)a1.tv_sec, a1.tv_nsec,
		      (long long)v1.tv_sec, v1.tv_nsec, (long long)b1.tv_sec, b1.tv_nsec);
	} else {
		tap_skip("clock_settime moves the vDSO's CLOCK_REALTIME", "clock_settime: %s",
			 strerror(errno));
	}

	/* gettimeofday: between two CLOCK_REALTIME syscalls, timezone as the syscall's */
	struct timespec a, b;
	struct timeval tv;
	struct timezone tz = { -7, -7 }, stz = { -9, -9 };
	struct timeval stv;

	sys_gettime(CLOCK_REALTIME, &a);
	int r = v_gettimeofday(&tv, &tz);
	sys_gettime(CLOCK_REALTIME, &b);
	int64_t us = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;

	CHECK(r == 0 && ts_ns(&a) / 1000 <= us && us <= ts_ns(&b) / 1000,
	      "vDSO gettimeofday between two CLOCK_REALTIME syscalls", "ret %d: %lld <= %lld <= %lld us",
	      r, (long long)(ts_ns(&a) / 1000), (long long)us, (long long)(ts_ns(&b) / 1000));
	syscall(SYS_gettimeofday, &stv, &stz);
	CHECK(tz.tz_minuteswest == stz.tz_minuteswest && tz.tz_dsttime == stz.tz_dsttime,
	      "vDSO gettimeofday's timezone is the syscall's", "vDSO %d/%d, syscall %d/%d",
	      tz.tz_minuteswest, tz.tz_dsttime, stz.tz_minuteswest, stz.tz_dsttime);
	CHECK(v_gettimeofday(NULL, NULL) == 0, "vDSO gettimeofday(NULL, NULL) returns 0", "nonzero");

	/* fallbacks: CPU-time clocks through the syscall, invalid ones get its EINVAL */
	struct timespec p1, pv, p2;

	sys_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
	r = v_gettime(CLOCK_PROCESS_CPUTIME_ID, &pv);
	sys_gettime(CLOCK_PROCESS_CPUTIME_ID, &p2);
	CHECK(r == 0 && ts_ns(&p1) <= ts_ns(&pv) && ts_ns(&pv) <= ts_ns(&p2),
	      "vDSO clock_gettime(PROCESS_CPUTIME_ID) between two syscalls", "ret %d", r);
	r = v_gettime(CLOCK_THREAD_CPUTIME_ID, &pv);
	CHECK(r == 0 && ts_ns(&pv) > 0, "vDSO clock_gettime(THREAD_CPUTIME_ID)", "ret %d", r);
	r = v_gettime((clockid_t)100, &pv);
	CHECK(r == -EINVAL, "vDSO clock_gettime(100) returns -EINVAL", "got %d", r);
	/* the calling process's CPU clock with the clock type 3, which does not exist: EINVAL
	 * whatever pids exist (-1000 named pid 124's PROF clock, which on a Linux that had run
	 * the other tests first was a live process: 0) */
	r = v_getres((clockid_t)-5, &pv); /* ~0 << 3 | 3 */
	CHECK(r == -EINVAL, "vDSO clock_getres(invalid CPU clock) returns -EINVAL", "got %d", r);
	r = v_gettime(CLOCK_PROCESS_CPUTIME_ID, NULL);
	CHECK(r == -EFAULT, "vDSO clock_gettime(PROCESS_CPUTIME_ID, NULL) returns -EFAULT (syscall)",
	      "got %d", r);
}

/* Read CLOCK_MONOTONIC n times, alternately through the vDSO and the syscall: false when it
 * went back from *last (then left at the later value, *now at the earlier). */
static int monotonic_steps(int n, int64_t *last, int64_t *now)
{
	struct timespec t;

	for (int k = 0; k < n; k++) {
		if (k & 1)
			sys_gettime(CLOCK_MONOTONIC, &t);
		else
			v_gettime(CLOCK_MONOTONIC, &t);
		*now = ts_ns(&t);
		if (*now < *last)
			return 0;
		*last = *now;
	}
	return 1;
}

/* CLOCK_MONOTONIC alternating vDSO and syscall never goes back, here and across CPUs. */
static void check_monotonic(void)
{
	int64_t last = 0, now = 0;
	int ok, moves = 0, ncpu = 0;
	cpu_set_t all, one;

	ok = monotonic_steps(20000, &last, &now);
	CHECK(ok, "CLOCK_MONOTONIC: vDSO and syscall alternating never go back", "%lld < %lld",
	      (long long)now, (long long)last);

	if (sched_getaffinity(0, sizeof(all), &all) || (ncpu = CPU_COUNT(&all)) < 2) {
		tap_skip("CLOCK_MONOTONIC never goes back across CPUs", "one CPU");
		return;
	}
	for (int i = 0; i < 400 && ok; i++) {
		int cpu = -1;

		for (int c = 0, n = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all) && n++ == i % ncpu)
				cpu = c;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			moves++;
		ok = monotonic_steps(4, &last, &now);
	}
	sched_setaffinity(0, sizeof(all), &all);
	CHECK(ok && moves > 100, "CLOCK_MONOTONIC never goes back moving between CPUs",
	      "%lld < %lld, %d moves", (long long)now, (long long)last, moves);
}

/*
 * ---- no syscall: perf execute breakpoints after every svc of the vDSO ----
 * On the instruction after each svc, where a syscall returns: on the svc itself Linux steps
 * over the breakpoint with single-step, which over an svc ends in a SIGTRAP to the task
 * (syscall_trace_exit reports the step).  The vDSO calls nothing outside itself, so a
 * syscall it makes returns to one of these.
 */

static int bp_open(uintptr_t addr)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = addr;
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	return (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t bp_count(int fd)
{
	uint64_t v = ~0ull;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ull;
	return v;
}

static void run_clock_calls(int n)
{
	struct timespec t;
	struct timeval tv;
	struct timezone tz;

	for (int i = 0; i < n; i++)
		for (size_t c = 0; c < NCLOCKS; c++) {
			v_gettime(clocks[c].id, &t);
			v_getres(clocks[c].id, &t);
		}
	for (int i = 0; i < n; i++)
		v_gettimeofday(&tv, &tz);
	/* glibc, static here, finds the vDSO through AT_SYSINFO_EHDR and calls it too */
	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		clock_gettime(CLOCK_REALTIME, &t);
		gettimeofday(&tv, NULL);
	}
}

/* glibc's clock_gettime and gettimeofday enter the vDSO's: breakpoints on their entries. */
static void check_glibc_calls_vdso(void)
{
	int fd_gt = bp_open((uintptr_t)v_gettime), fd_tod = bp_open((uintptr_t)v_gettimeofday);
	struct timespec t;
	struct timeval tv;

	if (fd_gt < 0 || fd_tod < 0) {
		tap_skip("glibc's clock_gettime and gettimeofday call the vDSO's",
			 "no execute breakpoint opens: %s", strerror(errno));
	} else {
		ioctl(fd_gt, PERF_EVENT_IOC_ENABLE, 0);
		ioctl(fd_tod, PERF_EVENT_IOC_ENABLE, 0);
		for (int i = 0; i < 10; i++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			gettimeofday(&tv, NULL);
		}
		ioctl(fd_gt, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(fd_tod, PERF_EVENT_IOC_DISABLE, 0);
		uint64_t n_gt = bp_count(fd_gt), n_tod = bp_count(fd_tod);

		CHECK(n_gt == 10 && n_tod == 10,
		      "glibc's clock_gettime and gettimeofday call the vDSO's (10 calls each)",
		      "__kernel_clock_gettime %llu, __kernel_gettimeofday %llu",
		      (unsigned long long)n_gt, (unsigned long long)n_tod);
	}
	if (fd_gt >= 0)
		close(fd_gt);
	if (fd_tod >= 0)
		close(fd_tod);
}

static void check_no_syscall(void)
{
	uint64_t in_calls = 0, in_fallback = 0;
	int nsvc = 0, opened = 0;

	for (uintptr_t p = vd.text_start; p + 4 <= vd.text_end; p += 4) {
		uint32_t insn = *(const uint32_t *)p;

		if ((insn & 0xffe0001fu) != 0xd4000001u) /* svc #imm */
			continue;
		nsvc++;
		int fd = bp_open(p + 4);

		if (fd < 0)
			continue;
		opened++;
		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		run_clock_calls(50);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		in_calls += bp_count(fd);
		/* the control: a CPU-time clock goes to the kernel through one of these */
		struct timespec t;

		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		v_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		in_fallback += bp_count(fd);
		close(fd);
	}
	if (!opened) {
		tap_skip("no svc executed in the vDSO's clocks", "no execute breakpoint opens (%d svc): %s",
			 nsvc, strerror(errno));
		return;
	}
	CHECK(opened == nsvc, "an execute breakpoint after each of the vDSO's svc instructions",
	      "%d of %d", opened, nsvc);
	CHECK(in_fallback == 1, "control: vDSO clock_gettime(PROCESS_CPUTIME_ID) executes one svc",
	      "%llu", (unsigned long long)in_fallback);
	CHECK(in_calls == 0,
	      "no svc executed by 50 rounds of the vDSO's clocks, getres, gettimeofday, direct and "
	      "through glibc",
	      "%llu", (unsigned long long)in_calls);
}

/* ---- faults in user space; the signal return trampoline ---- */

static sigjmp_buf jb;
static volatile uintptr_t fault_addr, fault_pc, handler_lr;

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	fault_addr = (uintptr_t)si->si_addr;
	fault_pc = ((ucontext_t *)uc)->uc_mcontext.pc;
	siglongjmp(jb, 1);
}

/* The unwinder's walk from the handler: the frames' pcs. */
static uintptr_t unwind_pcs[32];
static int unwind_n;

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *ctx, void *arg)
{
	if (unwind_n >= 32)
		return _URC_END_OF_STACK;
	unwind_pcs[unwind_n++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

__attribute__((noinline)) static void usr1_handler(int sig)
{
	handler_lr = (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	unwind_n = 0;
	_Unwind_Backtrace(unwind_step, NULL);
}

/* Whence the signal came: the unwinder must get back here through the trampoline. */
__attribute__((noinline)) static void raise_usr1(void)
{
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
}

static void check_signals(void)
{
	struct sigaction sa, old;
	void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec *bad = (struct timespec *)page;

	long sr = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, bad);
	int se = errno;

	CHECK(sr == -1 && se == EFAULT, "syscall clock_gettime to a read-only page: EFAULT",
	      "%ld errno %d", sr, se);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, &old);
	fault_addr = fault_pc = 0;
	if (!sigsetjmp(jb, 1)) {
		v_gettime(CLOCK_MONOTONIC, bad);
		tap_fail("vDSO clock_gettime to a read-only page: SIGSEGV inside [vdso]", "returned");
	} else {
		CHECK(fault_addr == (uintptr_t)bad && fault_pc >= vd.text_start && fault_pc < vd.text_end,
		      "vDSO clock_gettime to a read-only page: SIGSEGV inside [vdso]",
		      "si_addr %#lx (want %p), pc %#lx", (unsigned long)fault_addr, (void *)bad,
		      (unsigned long)fault_pc);
	}
	sigaction(SIGSEGV, &old, NULL);
	munmap(page, 4096);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_handler; /* glibc passes no SA_RESTORER on arm64 */
	sigaction(SIGUSR1, &sa, &old);
	raise_usr1();
	sigaction(SIGUSR1, &old, NULL);
	CHECK(handler_lr == v_sigreturn, "a handler without SA_RESTORER returns to __kernel_rt_sigreturn",
	      "lr %#lx, __kernel_rt_sigreturn %#lx", (unsigned long)handler_lr,
	      (unsigned long)v_sigreturn);
	int tramp = -1, back_in_test = 0;

	for (int i = 0; i < unwind_n; i++) {
		if (unwind_pcs[i] == v_sigreturn && tramp < 0)
			tramp = i;
		if (tramp >= 0 && i > tramp && unwind_pcs[i] >= (uintptr_t)check_signals &&
		    unwind_pcs[i] < (uintptr_t)check_signals + 4096)
			back_in_test = 1;
	}
	CHECK(tramp >= 0 && back_in_test,
	      "the unwinder goes from the handler through __kernel_rt_sigreturn back to the caller",
	      "%d frames, trampoline frame %d, back in check_signals %d", unwind_n, tramp,
	      back_in_test);
	CHECK(v_sigreturn && ((const uint32_t *)v_sigreturn)[0] == 0xd2801168u &&
		      ((const uint32_t *)v_sigreturn)[1] == 0xd4000001u,
	      "__kernel_rt_sigreturn is mov x8, #139; svc #0", "differs");
}

/* ---- PERF_RECORD_MMAP2 of [vdso] at exec ---- */

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

static void check_exec_records(const char *self)
{
	int go[2];
	struct perf_event_attr a;

	if (pipe(go))
		return;
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		execl(self, self, "--exec-child", (char *)NULL);
		_exit(3);
	}
	close(go[0]);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;
	a.mmap2 = 1;
	a.mmap_data = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.exclude_kernel = 1;
	int fd = (int)sys_perf_event_open(&a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	size_t len = 9 * 4096;
	void *ring = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	int st = 0;

	if (write(go[1], "x", 1) != 1)
		return;
	close(go[1]);
	waitpid(pid, &st, 0);
	if (!CHECK(fd >= 0 && ring != MAP_FAILED, "perf dummy event with mmap/mmap2/mmap_data/comm on the child",
		   "fd %d: %s", fd, strerror(errno)))
		return;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child execs and exits 0", "status %#x", st);

	struct perf_event_mmap_page *pg = ring;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	const char *data = (const char *)ring + 4096;
	int idx = 0, comm_at = -1, exe_at = -1, vvar_at = -1, vdso_at = -1;
	struct mmap2_rec vdso_rec, vvar_rec;
	const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;

	memset(&vdso_rec, 0, sizeof(vdso_rec));
	memset(&vvar_rec, 0, sizeof(vvar_rec));
	for (uint64_t off = 0; off < head && head <= len - 4096; idx++) {
		const struct perf_event_header *h = (const void *)(data + off);

		if (!h->size)
			break;
		if (h->type != PERF_RECORD_MMAP2)
			printf("# record %u misc %#x\n", h->type, h->misc);
		if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    comm_at < 0)
			comm_at = idx;
		if (h->type == PERF_RECORD_MMAP2) {
			const struct mmap2_rec *m = (const void *)h;
			const char *b = strrchr(m->filename, '/');

			printf("# MMAP2 %s %#lx+%#lx pgoff %#lx prot %u flags %#x misc %#x\n",
			       m->filename, (unsigned long)m->addr, (unsigned long)m->len,
			       (unsigned long)m->pgoff, m->prot, m->flags, h->misc);
			if (b && !strcmp(b + 1, base) && (m->prot & PROT_EXEC) && exe_at < 0)
				exe_at = idx;
			if (!strcmp(m->filename, "[vdso]") && vdso_at < 0) {
				vdso_at = idx;
				memcpy(&vdso_rec, m, sizeof(vdso_rec));
			}
			if (!strcmp(m->filename, "[vvar]") && vvar_at < 0) {
				vvar_at = idx;
				memcpy(&vvar_rec, m, sizeof(vvar_rec));
			}
		}
		off += h->size;
	}
	uint64_t vdso_len = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long s, e;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " [vdso]\n") && sscanf(line, "%lx-%lx", &s, &e) == 2)
			vdso_len = e - s;
	if (f)
		fclose(f);

	CHECK(vdso_at >= 0, "PERF_RECORD_MMAP2 for [vdso] at exec", "none in %d records", idx);
	if (vdso_at < 0)
		return;
	CHECK(vdso_rec.pid == (uint32_t)pid && vdso_rec.tid == (uint32_t)pid &&
		      vdso_rec.len == vdso_len && vdso_rec.pgoff == 0 && vdso_rec.maj == 0 &&
		      vdso_rec.min == 0 && vdso_rec.ino == 0 &&
		      vdso_rec.prot == (PROT_READ | PROT_EXEC) && vdso_rec.flags == MAP_PRIVATE &&
		      vdso_rec.h.misc == PERF_RECORD_MISC_USER,
	      "[vdso] MMAP2: pid/tid, len, pgoff 0, no device/inode, r-x, MAP_PRIVATE, MISC_USER",
	      "pid %u tid %u (want %d) len %#lx (want %#lx) pgoff %#lx dev %u:%u ino %lu prot %u "
	      "flags %#x misc %#x", vdso_rec.pid, vdso_rec.tid, (int)pid,
	      (unsigned long)vdso_rec.len, (unsigned long)vdso_len, (unsigned long)vdso_rec.pgoff,
	      vdso_rec.maj, vdso_rec.min, (unsigned long)vdso_rec.ino, vdso_rec.prot,
	      vdso_rec.flags, vdso_rec.h.misc);
	CHECK(comm_at >= 0 && exe_at > comm_at && vdso_at > exe_at,
	      "order: COMM (exec), the program's MMAP2, then [vdso]", "comm %d exe %d vdso %d",
	      comm_at, exe_at, vdso_at);
	CHECK(vvar_at >= 0 && vvar_at < vdso_at && vvar_rec.addr + vvar_rec.len == vdso_rec.addr &&
		      vvar_rec.prot == PROT_READ &&
		      vvar_rec.h.misc == (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA),
	      "mmap_data: [vvar] MMAP2 (data) just before [vdso], mapped just below it",
	      "vvar at %d (vdso %d) %#lx+%#lx prot %u misc %#x", vvar_at, vdso_at,
	      (unsigned long)vvar_rec.addr, (unsigned long)vvar_rec.len, vvar_rec.prot,
	      vvar_rec.h.misc);
	munmap(ring, len);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return 0;
	/* t_vdso (static) or t_vdso_dyn (the same test dynamically linked: ld.so sets the vDSO up) */
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	tap_init(prog, 60);

	uintptr_t base = getauxval(AT_SYSINFO_EHDR);

	if (!CHECK(base, "AT_SYSINFO_EHDR in the auxiliary vector", "missing"))
		return tap_done();
	if (!CHECK(vdso_parse(base), "AT_SYSINFO_EHDR is an AArch64 ET_DYN with a symbol table and hash",
		   "not a usable ELF"))
		return tap_done();
	/* Linux 6.1's has DT_HASH only (--hash-style=sysv); ours has both */
	printf("# DT_HASH %s, DT_GNU_HASH %s\n", vd.hash ? "yes" : "no", vd.gnu_hash ? "yes" : "no");
	CHECK(vd.versym && vd.verdef, "the vDSO has symbol versions", "versym %p verdef %p",
	      (void *)vd.versym, (void *)vd.verdef);
	CHECK(vd.has_build_id, "the vDSO has a GNU build-id note", "none");
	if (!vd.versym || !vd.verdef)
		return tap_done();
	v_gettime = (gettime_fn)vdso_sym("__kernel_clock_gettime");
	v_gettimeofday = (gettimeofday_fn)vdso_sym("__kernel_gettimeofday");
	v_getres = (getres_fn)vdso_sym("__kernel_clock_getres");
	v_sigreturn = (uintptr_t)vdso_sym("__kernel_rt_sigreturn");
	if (!v_gettime || !v_gettimeofday || !v_getres || !v_sigreturn)
		return tap_done();

	check_maps();
	check_clocks();
	check_monotonic();
	check_no_syscall();
	check_glibc_calls_vdso();
	check_signals();
	check_exec_records(argv[0]);
	return tap_done();
}
