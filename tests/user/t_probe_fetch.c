/* t_probe_fetch: the fetch arguments of uprobe_events and kprobe_events beyond registers and
 * +OFF(%reg), checked against Linux 6.1; passes on perfkernel and on Linux (refvm.sh).
 *
 *  1 uprobe_events takes $stack, $stackN (decimal, any N), $comm / $COMM (a string), @ADDR,
 *    @+FILE_OFFSET (signed) and nested +OFF(...) around any of them up to 14 reads, listing
 *    them as written; refuses (EINVAL) $comm with another type or dereferenced, a string
 *    that is not read from memory, @SYM (kprobes only), a bad $stackN or @+OFF, 15 reads, an
 *    argument longer than 63 bytes, $retval outside a return probe.
 *  2 their values in a hit's record (PERF_SAMPLE_RAW): $stack is the stack pointer at the
 *    probe, $stack2 the u64 two slots up, $comm the task's name, +8(+0(%x0)) and
 *    +0(+8(%x0)):string two reads deep, @+OFF this program's text segment at that file
 *    offset (a u64 of code and a string), @ADDR:u32 the low half of a u64, +0(+16($stack)) a read through the
 *    stack; the format file's fields as Linux lays them out.
 *  3 kprobe_events: @+OFF is EINVAL, an unknown @SYM ENOENT; $comm, $stack and @SYM of the
 *    getpid handler are accepted and listed as written.
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "tracing.h"
#include "tap.h"

#define UE "/sys/kernel/tracing/uprobe_events"
#define KE "/sys/kernel/tracing/kprobe_events"

uint64_t gval = 0xcafef00d12345678ull;
/* @+OFF is read where the probed text's mapping puts OFF (translate_user_vaddr): a string
 * in the text's segment */
static const char rostr[] = "rodata-string";
static uint64_t inner[2] = { 0, 0x1122334455667788ull };
static const char *hello = "hello";
static uint64_t ptrs[2];

/* pf(x0, sp_at_call, magic): the probed function; call_pf saves x29/x30, then x2 two slots
 * above the stack pointer pf starts with ($stack2), and passes that stack pointer in x1. */
uint64_t pf(uint64_t x0, uint64_t sp, uint64_t magic);
uint64_t call_pf(uint64_t x0, uint64_t magic);
__asm__(".text\n.balign 16\n"
	".globl pf\n.type pf,%function\npf: add x0, x0, x2\n ret\n"
	".globl call_pf\n.type call_pf,%function\n"
	"call_pf: stp x29, x30, [sp, #-32]!\n mov x29, sp\n str x1, [sp, #16]\n"
	" mov x2, x1\n mov x1, sp\n bl pf\n ldp x29, x30, [sp], #32\n ret\n");

static char path[512];
static long off_pf, off_rostr;

static int define(const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "p:t_pfetch/x %s:0x%lx %s\n", path, off_pf, args);
	int r = write_file(UE, cmd, O_TRUNC);

	write_file(UE, "", O_TRUNC);
	return r;
}

static void test_parse(void)
{
	static const char *const ok[] = {
		"s=$stack", "s=$stack0", "s=$stack512", "s=$stack18446744073709551615", "c=$comm",
		"c=$COMM", "c=$comm:string", "a=@0x1234", "a=@0x1234:string", "f=@+0x10",
		"f=@+-16", "f=@+0x20:string", "n=+8(+0(%x0))", "n=-8($stack):s16",
		"n=+0(@+0x10)", "n=+0($stack3)",
		"n=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%x0))))))))))))))",
		"n=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@+0x10)))))))))))))",
	};
	static const char *const bad[] = {
		"c=$comm:u32", "c=+0($comm)", "s=$stack:string", "s=%x0:string", "s=@jiffies",
		"s=$stackx", "s=$stack-1", "s=$stack0x10", "s=@+zz", "s=@-0x10", "s=@+0x10+8",
		"s=@0x10(%x0)", "s=+0x10(%x0", "s=+0x10((%x0))", "s=+(%x0)", "s=$retval",
		"s=+0($retval)",
		"n=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%x0)))))))))))))))",
		"n=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@+0x10))))))))))))))",
		"n=+0x1000000000(+0x1000000000(+0x1000000000(+0x1000000000(+0x1000000000(%x0)))))",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char what[160];
		int r = define(ok[i]);

		snprintf(what, sizeof(what), "uprobe_events takes %s", ok[i]);
		tap_check(r == 0, what, "%s", strerror(-r));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[160];
		int r = define(bad[i]);

		snprintf(what, sizeof(what), "uprobe_events refuses %s (EINVAL)", bad[i]);
		tap_check(r == -EINVAL, what, "%d", r);
	}
}

#define ARGS_FMT                                                                                   \
	"st=$stack sp=%%x1 s2=$stack2 c=$comm n=+8(+0(%%x0)) ns=+0(+8(%%x0)):string f=@+0x%lx "     \
	"fs=@+0x%lx:string i=@0x%lx:u32 m=+0(+16($stack))"

static void test_record(void)
{
	char args[512], cmd[2048], buf[4096], want[2048];

	snprintf(args, sizeof(args), ARGS_FMT, off_pf, off_rostr, (unsigned long)(uintptr_t)&gval);
	snprintf(cmd, sizeof(cmd), "p:t_pfetch/r %s:0x%lx %s\n", path, off_pf, args);
	int r = write_file(UE, cmd, O_TRUNC);

	if (!CHECK(r == 0, "uprobe_events: a probe with every kind of fetch", "%s", strerror(-r)))
		return;
	read_file(UE, buf, sizeof(buf));
	snprintf(want, sizeof(want), "p:t_pfetch/r %s:0x%016lx %s\n", path, off_pf, args);
	CHECK(!strcmp(buf, want), "uprobe_events lists it as written", "[%s] want [%s]", buf, want);
	long id = event_id("t_pfetch/r");

	snprintf(want, sizeof(want),
		 "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		 "\tfield:u64 st;\toffset:16;\tsize:8;\tsigned:0;\n"
		 "\tfield:u64 sp;\toffset:24;\tsize:8;\tsigned:0;\n"
		 "\tfield:u64 s2;\toffset:32;\tsize:8;\tsigned:0;\n"
		 "\tfield:__data_loc char[] c;\toffset:40;\tsize:4;\tsigned:1;\n"
		 "\tfield:u64 n;\toffset:44;\tsize:8;\tsigned:0;\n"
		 "\tfield:__data_loc char[] ns;\toffset:52;\tsize:4;\tsigned:1;\n"
		 "\tfield:u64 f;\toffset:56;\tsize:8;\tsigned:0;\n"
		 "\tfield:__data_loc char[] fs;\toffset:64;\tsize:4;\tsigned:1;\n"
		 "\tfield:u32 i;\toffset:68;\tsize:4;\tsigned:0;\n"
		 "\tfield:u64 m;\toffset:72;\tsize:8;\tsigned:0;\n\n"
		 "print fmt: \"(%%lx) st=0x%%Lx sp=0x%%Lx s2=0x%%Lx c=\\\"%%s\\\" n=0x%%Lx ns=\\\"%%s\\\" "
		 "f=0x%%Lx fs=\\\"%%s\\\" i=%%u m=0x%%Lx\", REC->__probe_ip, REC->st, REC->sp, REC->s2, "
		 "__get_str(c), REC->n, __get_str(ns), REC->f, __get_str(fs), REC->i, REC->m\n");
	char wf[4096];

	snprintf(wf, sizeof(wf), "name: r\nID: %ld\nformat:\n" TRACE_COMMON_FIELDS "%s", id, want);
	int n = format_is("t_pfetch/r", wf, 1, buf, sizeof(buf));

	CHECK(n > 0, "its format file as Linux's", "[%s]", buf);

	int fd = tp_open(id, 0, 1);
	size_t size = 9 * 4096;
	struct perf_event_mmap_page *pg =
		fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;

	if (!CHECK(pg != MAP_FAILED, "a sampling event on it", "%s", strerror(errno)))
		goto out;
	ptrs[0] = (uintptr_t)inner;
	ptrs[1] = (uintptr_t)hello;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	uint64_t res = call_pf((uintptr_t)ptrs, (uintptr_t)&gval);

	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	const uint8_t *d = (const uint8_t *)pg + 4096, *rec = d + 12;
	const struct perf_event_header *h = (const void *)d;
	uint32_t rsize = 0;

	if (!CHECK(res == (uintptr_t)ptrs + (uintptr_t)&gval && pg->data_head &&
			   h->type == PERF_RECORD_SAMPLE,
		   "the probed call ran and its hit was sampled", "head %llu",
		   (unsigned long long)pg->data_head))
		goto out;
	memcpy(&rsize, d + 8, 4);
	uint64_t st, sp, s2, nn, f, m;
	uint32_t c, ns, fs, i;

	memcpy(&st, rec + 16, 8);
	memcpy(&sp, rec + 24, 8);
	memcpy(&s2, rec + 32, 8);
	memcpy(&c, rec + 40, 4);
	memcpy(&nn, rec + 44, 8);
	memcpy(&ns, rec + 52, 4);
	memcpy(&f, rec + 56, 8);
	memcpy(&fs, rec + 64, 4);
	memcpy(&i, rec + 68, 4);
	memcpy(&m, rec + 72, 8);
	CHECK(st == sp && sp != 0, "$stack: the stack pointer at the probe", "%#llx vs %#llx",
	      (unsigned long long)st, (unsigned long long)sp);
	CHECK(s2 == (uintptr_t)&gval, "$stack2: the u64 two slots above it", "%#llx",
	      (unsigned long long)s2);
	CHECK(nn == inner[1], "+8(+0(%x0)): two reads deep", "%#llx", (unsigned long long)nn);
	uint64_t code;

	memcpy(&code, (const void *)pf, 8);
	CHECK(f == code, "@+OFF: this program's u64 at that file offset (pf's code)", "%#llx",
	      (unsigned long long)f);
	CHECK(i == (uint32_t)gval, "@ADDR:u32: the low half of the u64 there", "%#x", i);
	CHECK(m == gval, "+0(+16($stack)): a read through the stack", "%#llx",
	      (unsigned long long)m);
	/* the strings after the fixed part (80 bytes), in argument order */
	const char *sc = (const char *)rec + (c & 0xffff), *sns = (const char *)rec + (ns & 0xffff);
	const char *sfs = (const char *)rec + (fs & 0xffff);

	CHECK((c & 0xffff) == 80 && (c >> 16) == strlen("t_probe_fetch") + 1 &&
		      !strcmp(sc, "t_probe_fetch"),
	      "$comm: the task's name, the first string after the record", "loc %#x '%.16s'", c, sc);
	CHECK((ns & 0xffff) == 80 + (c >> 16) && !strcmp(sns, "hello"),
	      "+0(+8(%x0)):string: the string two reads deep", "loc %#x '%.16s'", ns, sns);
	CHECK((fs >> 16) == strlen(rostr) + 1 && !strcmp(sfs, rostr),
	      "@+OFF:string: this program's string at that file offset", "loc %#x '%.16s'", fs, sfs);
	CHECK(rsize == ((80 + (c >> 16) + (ns >> 16) + (fs >> 16) + 4 + 7) & ~7u) - 4,
	      "the record's size: the strings, padded as perf_trace_buf_alloc", "%u", rsize);
out:
	if (pg != MAP_FAILED)
		munmap(pg, size);
	if (fd >= 0)
		close(fd);
	write_file(UE, "", O_TRUNC);
}

/* The getpid handler's name in /proc/kallsyms (Linux's or ours), or NULL. */
static const char *getpid_name(void)
{
	static char name[200];
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[200], t;
	unsigned long long a;

	if (!f)
		return NULL;
	name[0] = 0;
	while (!name[0] && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %199s", &a, &t, sym) == 3 && (t == 'T' || t == 't') &&
		    (!strcmp(sym, "__arm64_sys_getpid") || !strcmp(sym, "sys_getpid")))
			snprintf(name, sizeof(name), "%s", sym);
	fclose(f);
	return name[0] ? name : NULL;
}

static void test_kprobe(void)
{
	const char *sym = getpid_name();
	char cmd[512], buf[1024];

	if (!CHECK(sym != NULL, "the getpid handler in /proc/kallsyms", "%s", "none"))
		return;
	snprintf(cmd, sizeof(cmd), "p:t_pfetch/k %s f=@+0x10\n", sym);
	CHECK(write_file(KE, cmd, O_TRUNC) == -EINVAL, "kprobe_events refuses @+OFF (EINVAL)", "%s",
	      "no");
	snprintf(cmd, sizeof(cmd), "p:t_pfetch/k %s f=@no_such_symbol_here\n", sym);
	CHECK(write_file(KE, cmd, O_TRUNC) == -ENOENT, "kprobe_events: an unknown @SYM is ENOENT",
	      "%s", "no");
	snprintf(cmd, sizeof(cmd), "p:t_pfetch/k %s c=$comm s=$stack s1=$stack1 i=@%s:u32 j=@%s+4:u32\n",
		 sym, sym, sym);
	int r = write_file(KE, cmd, O_TRUNC);

	CHECK(r == 0, "kprobe_events takes $comm, $stack, $stack1, @SYM and @SYM+OFF", "%s",
	      strerror(-r));
	read_file(KE, buf, sizeof(buf));
	CHECK(!strcmp(buf, cmd), "and lists them as written", "[%s] want [%s]", buf, cmd);
	write_file(KE, "", O_TRUNC);
}

int main(void)
{
	tap_init("t_probe_fetch", 60);
	off_pf = map_file_offset((void *)pf, path, sizeof(path));
	off_rostr = map_file_offset(rostr, path, sizeof(path));
	if (!CHECK(off_pf > 0 && off_rostr > 0 &&
			   (uintptr_t)pf - (uintptr_t)off_pf == (uintptr_t)rostr - (uintptr_t)off_rostr,
		   "the file offsets of pf and of a string in its segment", "%ld %ld", off_pf,
		   off_rostr))
		return tap_done();
	if (access(UE, F_OK)) {
		tap_fail("uprobe_events", "no tracefs");
		return tap_done();
	}
	test_parse();
	test_record();
	test_kprobe();
	return tap_done();
}
