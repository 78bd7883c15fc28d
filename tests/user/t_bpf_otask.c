/* t_bpf_otask: other tasks, as BPF programs reach them through the current one's typed links,
 * and the helpers that take them (tests/user/bpf/otask.bpf.c, relocated by Debian's libbpf 1.1
 * against perfkernel's struct task / struct trapframe or Linux's task_struct / pt_regs).
 * A forked child runs BPF_PROG_TYPE_SYSCALL programs (BPF_PROG_TEST_RUN) while its parent sleeps
 * in waitpid:
 * - task->real_parent->tgid is getppid(), task->group_leader's id and task->tgid are getpid(),
 *   also from a second thread after the leader thread exited, and in an orphan once its
 *   parent exited (the kernel retargets the links); real_parent leads up through init to the
 *   task of pid 0, its own real_parent (Linux's swapper/0; perfkernel's CPU 0 idle task);
 * - bpf_get_task_stack(parent, ...) gives kernel frames of the sleeping parent (> 0 bytes, a
 *   multiple of 8, the rest of the buffer zeroed); size 0 gives 0; a size not a multiple of 8
 *   and unknown flags -EINVAL; skip past every frame -EFAULT; on the current task too;
 *   BPF_F_USER_STACK: the current task's user pc first, another task's -EOPNOTSUPP (Linux
 *   6.1 walks no other task's user stack) with the buffer zeroed;
 * - bpf_task_pt_regs(current)->pc lies in this program's text and ->sp near its stack;
 * - bpf_copy_from_user_task reads the parent's global after the parent changed it (the child's
 *   copy still has the old value); flags 1 -EINVAL; address 0 -EFAULT with the buffer zeroed;
 * - bpf_find_vma on the parent finds its text's area;
 * - bpf_task_storage_get(F_CREATE) on the parent from the child's perf_event program: the
 *   parent reads the count by its own pidfd.
 * Refused: copy_from_user_task in a perf_event program ("helper call might sleep in a
 * non-sleepable prog", EINVAL), a number as the task of get_task_stack / task_pt_regs (EACCES,
 * "R1 type=scalar expected=ptr_").
 * Two find_vma calls in one run of a perf_event program on a cpu-clock overflow (hard IRQ):
 * the first 0, the second -EBUSY (the first one's unlock still waits for its irq_work).
 * With bpf_jit_enable 0 the find_vma programs are not loaded (Linux 6.1 refuses callbacks in
 * interpreted programs): those checks are skipped.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "bpf_faults.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const char _binary_otask_bpf_o_start[], _binary_otask_bpf_o_end[];
extern char __executable_start[], etext[];

static char vlog[65536];
static volatile uint64_t shared_val = 0x1111;

struct runner {
	struct bpf_object *obj;
	struct bpf_map *out;
};

/* net.core.bpf_jit_enable: Linux refuses callbacks (find_vma's) in interpreted programs
 * ("callbacks are not allowed in non-JITed programs"), so those checks need the JIT */
static int jit;

static int open_all(struct runner *r)
{
	struct bpf_program *p;

	r->obj = bpf_object__open_mem(_binary_otask_bpf_o_start,
				      (size_t)(_binary_otask_bpf_o_end - _binary_otask_bpf_o_start),
				      NULL);
	if (!r->obj)
		return -errno;
	bpf_object__for_each_program(p, r->obj) {
		const char *n = bpf_program__name(p);

		bpf_program__set_autoload(p, strcmp(n, "copy_nosleep") && strcmp(n, "stack_scalar") &&
						     strcmp(n, "regs_scalar") &&
						     (jit || (strcmp(n, "pvma") && strcmp(n, "vma_twice"))));
		bpf_program__set_log_buf(p, vlog, sizeof(vlog));
	}
	vlog[0] = 0;
	int err = bpf_object__load(r->obj);

	r->out = bpf_object__find_map_by_name(r->obj, "out");
	return err;
}

/* Run the syscall program name with out[5..7] = in5, in6, in7: its out[0..4] in v. */
static int run(struct runner *r, const char *name, uint64_t in5, uint64_t in6, uint64_t *v)
{
	struct bpf_program *p = bpf_object__find_program_by_name(r->obj, name);
	uint64_t in[8] = { [5] = in5, [6] = in6 };
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	for (uint32_t k = 0; k < 8; k++)
		bpf_map__update_elem(r->out, &k, sizeof(k), &in[k], sizeof(in[k]), 0);
	err = bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
	if (err)
		err = -errno;
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(r->out, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	return err;
}

/* links from the calling thread: real_parent's tgid is getppid(), the group leader's id and
 * tgid are getpid(); how many checks failed */
static int links_check(struct runner *r, const char *who)
{
	uint64_t v[8] = { 0 };
	char what[160];
	int err = run(r, "links", 0, 0, v), bad = 0;

	snprintf(what, sizeof(what), "%s: real_parent->tgid is getppid(), group_leader's id and "
		 "tgid are getpid()", who);
	bad += !CHECK(!err && (int)v[1] == getppid() && (int)v[2] == getpid() &&
			      (int)v[3] == getpid(),
		      what, "err %d: %lld %lld %lld, getppid %d getpid %d", err, (long long)v[1],
		      (long long)v[2], (long long)v[3], getppid(), getpid());
	return bad;
}

static int report_fd = -1;
static struct runner *thread_runner;

/* a second thread of a process whose leader has exited (pthread's main thread left with
 * SYS_exit): the links still hold */
static void *after_leader(void *arg)
{
	char ok;

	(void)arg;
	usleep(50000);
	ok = links_check(thread_runner, "a thread after its leader exited") ? 'n' : 'y';
	if (write(report_fd, &ok, 1) < 0) {
	}
	syscall(SYS_exit_group, 0);
	return NULL;
}

/* the links kept right by the kernel: in a thread, after the leader thread exits, in an orphan
 * reparented to init */
static void check_links_kept(struct runner *r)
{
	int rp[2], st;
	char c = 0;
	pid_t pid;

	if (pipe(rp))
		return;
	thread_runner = r;
	report_fd = rp[1];
	pid = fork();
	if (pid == 0) {
		pthread_t th;

		close(rp[0]);
		tap_nfail = 0;
		if (pthread_create(&th, NULL, after_leader, NULL))
			_exit(3);
		syscall(SYS_exit, 0); /* the leader thread alone */
	}
	CHECK(read(rp[0], &c, 1) == 1 && c == 'y', "links from a thread whose leader exited", "%c",
	      c);
	waitpid(pid, &st, 0);

	pid = fork();
	if (pid == 0) {
		pid_t me = getpid(), g;

		close(rp[0]);
		tap_nfail = 0;
		g = fork();
		if (g == 0) {
			/* the grandchild: wait until its parent is gone, then look */
			for (int i = 0; i < 500 && getppid() == me; i++)
				usleep(10000);
			c = getppid() != me && !links_check(r, "an orphan") ? 'y' : 'n';
			if (write(rp[1], &c, 1) < 0) {
			}
			_exit(0);
		}
		_exit(g > 0 ? 0 : 1);
	}
	close(rp[1]);
	waitpid(pid, &st, 0);
	c = 0;
	CHECK(read(rp[0], &c, 1) == 1 && c == 'y', "an orphan's real_parent is its new parent", "%c",
	      c);
	close(rp[0]);
}

/* In the child: the parent is asleep in waitpid, its shared_val already changed. */
static void child_checks(struct runner *r)
{
	uint64_t v[8];
	int err;
	uint64_t text = (uint64_t)(uintptr_t)&child_checks;

	links_check(r, "the child");
	run(r, "links", 0, 0, v);
	CHECK((v[0] & 0xff) >= 3 && (v[0] & 0xff) < 16 && (v[0] >> 8) == 1,
	      "real_parent leads up through init to pid 0, its own real_parent (swapper/0)",
	      "%llu steps, self-parent %llu", (unsigned long long)(v[0] & 0xff),
	      (unsigned long long)(v[0] >> 8));

	/* the parent's kernel stack: it sleeps in waitpid */
	err = run(r, "pstack", 128, 0, v);
	CHECK(!err && (int64_t)v[1] > 0 && v[1] % 8 == 0 && v[1] <= 128,
	      "get_task_stack(parent, 128 bytes): > 0 kernel frames", "err %d ret %lld", err,
	      (long long)v[1]);
	CHECK(v[2] >= 0xffff000000000000ull, "its first frame is a kernel address", "%#llx",
	      (unsigned long long)v[2]);
	CHECK(v[3] == 1, "the bytes past the frames are zeroed", "%llu", (unsigned long long)v[3]);
	printf("# get_task_stack(parent asleep in waitpid, 16 slots): %lld bytes, first %#llx\n",
	       (long long)v[1], (unsigned long long)v[2]);
	run(r, "pstack", 0, 0, v);
	CHECK(v[1] == 0, "get_task_stack(parent, 0 bytes): 0", "%lld", (long long)v[1]);
	run(r, "pstack", 12, 0, v);
	CHECK((int64_t)v[1] == -EINVAL, "a size not a multiple of 8: -EINVAL", "%lld",
	      (long long)v[1]);
	run(r, "pstack", 64, 1ull << 20, v);
	CHECK((int64_t)v[1] == -EINVAL, "unknown flags: -EINVAL", "%lld", (long long)v[1]);
	run(r, "pstack", 64, BPF_F_USER_BUILD_ID, v);
	CHECK((int64_t)v[1] == -EINVAL && v[2] == 0 && v[3] == 1,
	      "BPF_F_USER_BUILD_ID without BPF_F_USER_STACK: -EINVAL, buffer zeroed", "%lld",
	      (long long)v[1]);
	run(r, "pstack", 64, 255, v);
	CHECK((int64_t)v[1] == -EFAULT && v[2] == 0, "skip 255 (past every frame): -EFAULT, zeroed",
	      "%lld", (long long)v[1]);
	run(r, "pstack", 128, BPF_F_USER_STACK, v);
	CHECK((int64_t)v[1] == -EOPNOTSUPP && v[2] == 0 && v[3] == 1,
	      "BPF_F_USER_STACK on the parent (another task): -EOPNOTSUPP, buffer zeroed",
	      "%lld first %#llx", (long long)v[1], (unsigned long long)v[2]);
	err = run(r, "mystack", 0, 0, v);
	CHECK(!err && (int64_t)v[1] > 0 && v[2] >= 0xffff000000000000ull,
	      "get_task_stack(current): kernel frames", "err %d ret %lld first %#llx", err,
	      (long long)v[1], (unsigned long long)v[2]);
	printf("# get_task_stack(current, 16 slots): %lld bytes\n", (long long)v[1]);
	run(r, "mystack", 0, BPF_F_USER_STACK, v);
	CHECK((int64_t)v[1] > 0 && v[2] >= (uint64_t)(uintptr_t)__executable_start &&
		      v[2] < (uint64_t)(uintptr_t)etext,
	      "get_task_stack(current, USER_STACK): our pc first", "ret %lld first %#llx",
	      (long long)v[1], (unsigned long long)v[2]);

	/* the user registers of this thread, saved at its syscall */
	uint64_t here = (uint64_t)(uintptr_t)&err;

	err = run(r, "regs", 0, 0, v);
	CHECK(!err && v[1] >= (uint64_t)(uintptr_t)__executable_start &&
		      v[1] < (uint64_t)(uintptr_t)etext,
	      "task_pt_regs(current)->pc is in this program's text", "err %d pc %#llx [%p, %p)", err,
	      (unsigned long long)v[1], (void *)__executable_start, (void *)etext);
	CHECK(v[2] < here && here - v[2] < 64 * 1024, "task_pt_regs(current)->sp is just below our frame",
	      "sp %#llx, a local at %#llx", (unsigned long long)v[2], (unsigned long long)here);

	/* the parent's memory */
	uint64_t addr = (uint64_t)(uintptr_t)&shared_val;

	err = run(r, "pcopy", addr, 0, v);
	CHECK(!err && v[1] == 0 && v[2] == 0x2222 && shared_val == 0x1111,
	      "copy_from_user_task(parent, &shared_val): 0, the parent's value after the fork",
	      "err %d ret %lld got %#llx (ours %#llx)", err, (long long)v[1],
	      (unsigned long long)v[2], (unsigned long long)shared_val);
	run(r, "pcopy", addr, 1, v);
	CHECK((int64_t)v[1] == -EINVAL && v[2] == ~0ull, "flags 1: -EINVAL, the buffer untouched",
	      "%lld %#llx", (long long)v[1], (unsigned long long)v[2]);
	EXPECT_OK(run_on_faults(bpf_object__find_program_by_name(r->obj, "parent_count"), 8),
		  "parent_count on 8 page faults of the child");
	run(r, "pcopy", 0, 0, v);
	CHECK((int64_t)v[1] == -EFAULT && v[2] == 0, "address 0: -EFAULT, the buffer zeroed",
	      "%lld %#llx", (long long)v[1], (unsigned long long)v[2]);

	if (!jit) {
		tap_skip("find_vma(parent)", "callbacks need the JIT (bpf_jit_enable 0)");
		return;
	}
	err = run(r, "pvma", text, 0, v);
	CHECK(!err && v[1] == 0 && v[2] == 1 && v[3] <= text && text < v[4],
	      "find_vma(parent, our text): 0, once, the area holds it",
	      "err %d ret %lld calls %llu [%#llx, %#llx)", err, (long long)v[1],
	      (unsigned long long)v[2], (unsigned long long)v[3], (unsigned long long)v[4]);
	run(r, "pvma", 0, 0, v);
	CHECK((int64_t)v[1] == -ENOENT && v[2] == 0, "find_vma(parent, 0): -ENOENT", "%lld",
	      (long long)v[1]);
}

static void check_refusals(void)
{
	int err;

	err = load_one_prog(_binary_otask_bpf_o_start, _binary_otask_bpf_o_end, "copy_nosleep", vlog,
			    sizeof(vlog));
	CHECK(err == -EINVAL && strstr(vlog, "helper call might sleep in a non-sleepable prog"),
	      "copy_from_user_task in a perf_event program: EINVAL, might sleep", "err %d: %.600s",
	      err, vlog);
	err = load_one_prog(_binary_otask_bpf_o_start, _binary_otask_bpf_o_end, "stack_scalar", vlog,
			    sizeof(vlog));
	CHECK(err == -EACCES && strstr(vlog, "R1 type=scalar expected=ptr_"),
	      "get_task_stack with a number as its task: EACCES", "err %d: %.600s", err, vlog);
	err = load_one_prog(_binary_otask_bpf_o_start, _binary_otask_bpf_o_end, "regs_scalar", vlog,
			    sizeof(vlog));
	CHECK(err == -EACCES && strstr(vlog, "R1 type=scalar expected=ptr_"),
	      "task_pt_regs with a number as its task: EACCES", "err %d: %.600s", err, vlog);
}

/* vma_twice on cpu-clock overflows of this thread (a timer interrupt on both kernels) */
static void check_vma_busy(struct runner *r)
{
	struct bpf_program *p = bpf_object__find_program_by_name(r->obj, "vma_twice");
	struct perf_event_attr a;
	uint64_t v[8] = { 0 }, in[8] = { [5] = (uint64_t)(uintptr_t)&check_vma_busy };
	struct bpf_link *link;
	int fd;

	if (!jit) {
		tap_skip("find_vma twice on an overflow", "callbacks need the JIT (bpf_jit_enable 0)");
		return;
	}
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__update_elem(r->out, &k, sizeof(k), &in[k], sizeof(in[k]), 0);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000; /* 1 ms */
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (!CHECK(fd >= 0, "perf_event_open(cpu-clock, 1 ms)", "errno %d", errno))
		return;
	link = bpf_program__attach_perf_event(p, fd);
	if (!CHECK(link, "attach vma_twice", "errno %d", errno)) {
		close(fd);
		return;
	}
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t k = 5;

		bpf_map__lookup_elem(r->out, &k, sizeof(k), &v[5], sizeof(v[5]), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (v[5] && t1.tv_sec - t0.tv_sec < 5);
	bpf_link__destroy(link);
	close(fd);
	for (uint32_t k = 0; k < 8; k++)
		bpf_map__lookup_elem(r->out, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	CHECK(v[5] == 0, "the program ran on an overflow", "out[5] %#llx", (unsigned long long)v[5]);
	CHECK(v[1] == 0 && (int64_t)v[2] == -EBUSY,
	      "find_vma twice in one overflow run: 0, then -EBUSY (the unlock waits for irq_work)",
	      "%lld, %lld", (long long)v[1], (long long)v[2]);
}

int main(void)
{
	struct runner r;
	int err, pfd[2], st = 0;
	pid_t pid;

	tap_init("t_bpf_otask", 120);
	libbpf_set_print(faults_quiet);
	jit = bpf_jit_enabled();
	err = open_all(&r);
	if (!CHECK(!err, "load otask.bpf.o's programs", "err %d: %.3000s", err, vlog))
		return tap_done();
	check_refusals();
	check_vma_busy(&r);

	if (pipe(pfd))
		return tap_done();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(2);
		usleep(20000); /* the parent is in waitpid by then */
		tap_nfail = 0; /* the child's own */
		child_checks(&r);
		fflush(stdout);
		_exit(tap_nfail ? 1 : 0);
	}
	close(pfd[0]);
	shared_val = 0x2222; /* after the fork: only the parent's copy */
	if (write(pfd[1], "x", 1) != 1)
		tap_fail("write to the child", "errno %d", errno);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's checks passed", "status %#x", st);
	/* what the child's program stored on its parent, read by our own pidfd */
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	uint64_t count = 0;

	CHECK(bpf_map__lookup_elem(bpf_object__find_map_by_name(r.obj, "pcount"), &self,
				   sizeof(self), &count, sizeof(count), 0) == 0 && count >= 8,
	      "task storage on real_parent from the child's program: our value by our pidfd",
	      "errno %d count %llu", errno, (unsigned long long)count);
	close(self);
	check_links_kept(&r);
	bpf_object__close(r.obj);
	return tap_done();
}
