/*
 * exec.c - execve(2) of static aarch64 ELF programs (ET_EXEC and static-PIE) and "#!" scripts.
 *
 * Before the point of no return: copy the arguments in (Linux's limits: E2BIG), open the file
 * (ENOENT, EACCES), read its headers and validate them (kernel/elf.c: ENOEXEC, EIO).  After it: a new
 * address space with each PT_LOAD as a private file mapping (bytes past p_filesz zero), an
 * 8 MiB stack at the top of user space with argv/envp/auxv laid out as Linux's
 * create_elf_tables (kernel/exec_stack.c), close-on-exec fds closed, caught signals reset, the
 * comm set to the file's basename.  A program with PT_INTERP (dynamically linked) gets its
 * interpreter (ld.so, an ET_DYN) mapped too, where Linux's top-down mmap puts it (as high as
 * it fits under mmap_base): execution starts at the interpreter's entry with AT_BASE its load
 * address and AT_ENTRY the program's; ld.so maps the libraries itself.  A missing interpreter
 * fails execve with ENOENT, one that is not an aarch64 ELF with ELIBBAD (EIO when shorter than
 * an ELF header), as Linux.  Last comes the vDSO (kernel/vdso.c: AT_SYSINFO_EHDR, the signal
 * return trampoline), below the interpreter, and its PERF_RECORD_MMAP2 after theirs.
 */
#include <linux/fcntl.h>
#include <linux/binfmts.h>
#include <linux/elf.h>
#include <linux/resource.h>
#include <asm/hwcap.h>
#include <arch/memlayout.h>
#include <arch/trapframe.h>
#include <fs/vfs.h>
#include <kern/trace.h>
#include <kern/elf.h>
#include <kern/errno.h>
#include <kern/exec_stack.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/uprobes.h>
#include <kern/signal.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/vdso.h>
#include <kern/vm.h>
#include <perf/perf.h>

#define ARG_BUF_ORDER 6 /* 256 KiB of argument and environment strings */
#define MAX_ARGS 16384
#define STACK_SIZE (8ull << 20)

struct exec_args {
	char *buf; /* strings, packed */
	size_t used;
	const char **argv, **envp;
	size_t argc, envc;
};

static void args_free(struct exec_args *a)
{
	if (a->buf)
		free_pages(a->buf, ARG_BUF_ORDER);
	kfree(a->argv);
	kfree(a->envp);
}

static int args_add(struct exec_args *a, const char ***vec, size_t *n, const char *s)
{
	size_t len = strlen(s) + 1;

	if (*n >= MAX_ARGS || a->used + len > (PAGE_SIZE << ARG_BUF_ORDER))
		return -E2BIG;
	memcpy(a->buf + a->used, s, len);
	(*vec)[(*n)++] = a->buf + a->used;
	a->used += len;
	return 0;
}

/* Copy a NULL-terminated user array of strings. */
static int copy_user_strings(struct exec_args *a, const char ***vec, size_t *n, uint64_t uvec)
{
	if (!uvec)
		return 0;
	for (;;) {
		uint64_t up;

		if (ksvc_copy_from_user(&up, (void *)(uvec + *n * 8), 8))
			return -EFAULT;
		if (!up)
			return 0;
		if (*n >= MAX_ARGS)
			return -E2BIG;
		size_t room = (PAGE_SIZE << ARG_BUF_ORDER) - a->used;
		long len = ksvc_strncpy_from_user(a->buf + a->used, (void *)up,
						  room < MAX_ARG_STRLEN ? room : MAX_ARG_STRLEN);

		if (len == -ENAMETOOLONG)
			return -E2BIG;
		if (len < 0)
			return (int)len;
		(*vec)[(*n)++] = a->buf + a->used;
		a->used += (size_t)len + 1;
	}
}

static int args_init(struct exec_args *a)
{
	memset(a, 0, sizeof(*a));
	a->buf = alloc_pages(ARG_BUF_ORDER);
	a->argv = kmalloc(MAX_ARGS * sizeof(char *));
	a->envp = kmalloc(MAX_ARGS * sizeof(char *));
	if (!a->buf || !a->argv || !a->envp) {
		args_free(a);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The file's head: as much of its start as the planner reads (the ELF header, the program
 * headers, PT_INTERP's path; at least a page, for "#!"), never the whole program: the
 * PT_LOADs are mapped from the file.  A head past 4 MiB (headers placed there on purpose)
 * fails with ENOMEM.
 */
struct exec_head {
	void *buf;
	size_t len; /* bytes read into buf */
	unsigned int order;
	uint64_t size; /* the file's size */
};

static void head_free(struct exec_head *h)
{
	if (h->buf)
		free_pages(h->buf, h->order);
	h->buf = NULL;
}

static int head_read(struct file *f, struct exec_head *h)
{
	uint64_t want = PAGE_SIZE;

	memset(h, 0, sizeof(*h));
	h->size = file_size(f);
	for (;;) {
		unsigned int order = 0;

		want = want < h->size ? want : h->size;
		while ((PAGE_SIZE << order) < want)
			order++;
		if (order > PAGE_MAX_ORDER)
			return -ENOMEM;
		head_free(h);
		h->buf = alloc_pages(order);
		if (!h->buf)
			return -ENOMEM;
		h->order = order;
		long got = file_pread_kernel(f, h->buf, want, 0);

		if (got < 0 || (uint64_t)got != want) {
			head_free(h);
			return got < 0 ? (int)got : -EIO;
		}
		h->len = want;
		uint64_t need = elf_plan_head_need(h->buf, h->len, h->size);

		if (need <= h->len)
			return 0;
		want = need;
	}
}

/* "#!interp [arg]": rewrite the arguments to run the interpreter on the script. */
static int script_args(struct exec_args *a, const char *buf, size_t size, const char *path,
		       char *interp, size_t interp_size)
{
	size_t end = 2;
	char line[BINPRM_BUF_SIZE + 1];

	while (end < size && end < BINPRM_BUF_SIZE && buf[end] != '\n')
		end++;
	memcpy(line, buf + 2, end - 2);
	line[end - 2] = 0;
	char *p = line;

	while (*p == ' ' || *p == '\t')
		p++;
	char *name = p;

	while (*p && *p != ' ' && *p != '\t')
		p++;
	char *arg = NULL;

	if (*p) {
		*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p) {
			arg = p;
			char *e = p + strlen(p);

			while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
				*--e = 0;
		}
	}
	if (!*name || strlen(name) >= interp_size)
		return -ENOEXEC;
	memcpy(interp, name, strlen(name) + 1);
	/* new argv: interp [arg] path argv[1..] */
	size_t old = a->argc;
	const char **v = kmalloc(MAX_ARGS * sizeof(char *));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	err = args_add(a, &v, &n, name);
	if (!err && arg)
		err = args_add(a, &v, &n, arg);
	if (!err)
		err = args_add(a, &v, &n, path);
	for (size_t i = 1; !err && i < old; i++) {
		if (n >= MAX_ARGS)
			err = -E2BIG;
		else
			v[n++] = a->argv[i];
	}
	if (err) {
		kfree(v);
		return err;
	}
	kfree(a->argv);
	a->argv = v;
	a->argc = n;
	return 0;
}

static void set_comm(struct task *t, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	memset(t->comm, 0, TASK_COMM_LEN);
	for (int i = 0; i < TASK_COMM_LEN - 1 && base[i]; i++)
		t->comm[i] = base[i];
}

/*
 * PERF_RECORD_MMAP2 for each PT_LOAD of the new image, as load_elf_binary makes them: elf_map's
 * file-backed part (up to the page holding the segment's last file byte), then the anonymous
 * rest that set_brk maps for the bss ("//anon", pgoff its address).  Events take the exec ones
 * with attr.mmap, the others with attr.mmap_data.
 */
static void exec_mmap_records(const struct elf_plan *plan, struct file *f, const char *path)
{
	struct elf_segment seg;
	uint64_t ino;
	uint32_t dev;

	file_id(f, &ino, &dev);
	for (unsigned int i = 0; i < plan->nr_segs; i++) {
		if (elf_plan_segment(plan, i, &seg) || seg.end <= seg.start)
			continue;
		uint64_t fend = (seg.copy_to + seg.file_len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);

		if (!seg.file_len || fend < seg.start)
			fend = seg.start;
		if (fend > seg.end)
			fend = seg.end;
		struct perf_mmap_info m = {
			.pid = (uint32_t)current_proc()->tgid,
			.tid = (uint32_t)current_task()->tid,
			.addr = seg.start,
			.len = fend - seg.start,
			.pgoff = seg.file_offset - (seg.copy_to - seg.start),
			.maj = dev >> 8,
			.min = dev & 0xff,
			.ino = ino,
			.prot = (uint32_t)seg.prot,
			.flags = 0x2 /* MAP_PRIVATE */,
			.filename = file_path(f) ? file_path(f) : path,
			.exec = (seg.prot & 4) != 0,
			.user = true,
		};

		if (m.len)
			perf_task_mmap(&m);
		if (seg.end > fend) {
			m.addr = fend;
			m.len = seg.end - fend;
			m.pgoff = fend;
			m.maj = m.min = 0;
			m.ino = 0;
			m.filename = "//anon";
			perf_task_mmap(&m);
		}
	}
}

/* Build the new image; past the point of no return an error kills the process. */
/* Map every PT_LOAD of plan from f into mm (mm->lock held). */
static int map_segments(struct mm *mm, struct file *f, const struct elf_plan *plan)
{
	struct elf_segment seg;
	int err = 0;

	for (unsigned int i = 0; i < plan->nr_segs && !err; i++) {
		if (elf_plan_segment(plan, i, &seg) || seg.end <= seg.start)
			continue;
		uint32_t fl = (seg.prot & 1 ? VMA_READ : 0) | (seg.prot & 2 ? VMA_WRITE : 0) |
			      (seg.prot & 4 ? VMA_EXEC : 0);
		uint64_t page_off = seg.file_offset - (seg.copy_to - seg.start);

		err = vm_map_fixed(mm, seg.start, seg.end - seg.start, fl, seg.file_len ? f : NULL,
				   page_off >> PAGE_SHIFT, seg.copy_to + seg.file_len, NULL, NULL);
	}
	return err;
}

/* The program's interpreter: its file and plan (file NULL for a static program). */
struct interp {
	struct file *file;
	struct elf_plan plan;
	struct exec_head head;
};

static int load_image(struct proc *p, struct file *f, const struct elf_plan *plan,
		      struct exec_args *a, const char *path, const struct interp *in)
{
	struct mm *mm = mm_new(), *old = p->mm;
	int err = 0;

	if (!mm)
		return -ENOMEM;
	kmutex_lock(&mm->lock);
	err = map_segments(mm, f, plan);
	if (!err && in->file)
		err = map_segments(mm, in->file, &in->plan);
	mm->start_brk = mm->brk = plan->brk_start;
	mm->start_code = plan->start_code;
	mm->end_code = plan->end_code;
	mm->start_data = plan->start_data;
	mm->end_data = plan->end_data;
	mm->stack_top = USER_VA_END;
	mm->mmap_base = ELF_PLAN_MMAP_BASE(USER_VA_END);
	if (!err)
		err = vm_map_fixed(mm, mm->stack_top - STACK_SIZE, STACK_SIZE,
				   VMA_READ | VMA_WRITE | VMA_STACK, NULL, 0, 0, NULL, NULL);
	if (!err)
		err = vdso_map(mm); /* last, as Linux's arch_setup_additional_pages */
	kmutex_unlock(&mm->lock);
	if (err) {
		mm_put(mm);
		return err;
	}
	unsigned long fl = spin_lock_irqsave(&p->lock); /* uprobes' walk of every mm reads it */

	p->mm = mm;
	spin_unlock_irqrestore(&p->lock, fl);
	mm_activate(mm);
	mm_put(old);
	uprobe_exec(current_uthread());

	struct exec_stack_args sa = {
		.argv = a->argv,
		.argc = a->argc,
		.envp = a->envp,
		.envc = a->envc,
		.filename = path,
		.platform = "aarch64",
		.stack_rlimit = p->rlim[RLIMIT_STACK].cur,
		.minsigstksz = 5120,
		.hwcap = HWCAP_FP | HWCAP_ASIMD | HWCAP_EVTSTRM | HWCAP_CPUID,
		.phdr = plan->phdr_addr,
		.phent = plan->phent,
		.phnum = plan->phnum,
		.entry = plan->entry,
		.base = in->file ? in->plan.load_bias : 0,
		.sysinfo_ehdr = mm->vdso,
	};
	for (int i = 0; i < 16; i += 4) {
		uint32_t r = ksvc_random_u32();

		memcpy(sa.random + i, &r, 4);
	}
	long need = exec_stack_size(&sa);

	if (need < 0)
		return (int)need;
	size_t bufsz = ((size_t)need + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	unsigned int order = 0;

	while ((PAGE_SIZE << order) < bufsz)
		order++;
	uint8_t *img = alloc_pages(order);
	struct exec_stack_layout lay;

	if (!img)
		return -ENOMEM;
	err = exec_stack_build(&sa, img, PAGE_SIZE << order, mm->stack_top, &lay);
	if (!err)
		err = ksvc_copy_to_user((void *)(mm->stack_top - lay.used),
					img + (PAGE_SIZE << order) - lay.used, lay.used);
	free_pages(img, order);
	if (err)
		return err;
	mm->arg_start = lay.arg_start;
	mm->arg_end = lay.arg_end;
	mm->env_start = lay.env_start;
	mm->env_end = lay.env_end;

	struct uthread *ut = current_uthread();
	struct trapframe *tf = ut->tf;

	memset(tf, 0, sizeof(*tf));
	tf->sp = lay.sp;
	tf->pc = in->file ? in->plan.entry : plan->entry;
	tf->pstate = 0; /* EL0t, interrupts unmasked */
	memset(&ut->fp, 0, sizeof(ut->fp));
	ut->tpidr_el0 = 0;
	__asm__ volatile("msr tpidr_el0, xzr");
	fpsimd_load_zero();
	set_comm(&ut->task, path);
	{
		/* /proc/PID/exe: this file from now on (Linux's mm->exe_file) */
		struct inode *exe = f->inode, *old_exe;

		if (exe)
			inode_get(exe);
		unsigned long fl = spin_lock_irqsave(&p->lock);

		old_exe = p->exe;
		p->exe = exe;
		spin_unlock_irqrestore(&p->lock, fl);
		inode_put(old_exe);
	}
	files_close_on_exec(p->files);
	signal_exec_reset(p);
	perf_task_exec();
	perf_task_comm(ut->task.comm, true);
	vm_perf_record_at(mm, mm->stack_top - 1); /* [stack] first, as setup_arg_pages */
	exec_mmap_records(plan, f, path);
	if (in->file)
		exec_mmap_records(&in->plan, in->file, plan->interp);
	vdso_exec_mmap_records(mm);
	trace_sched_process_exec(path, ut->task.tid); /* after the new image's records, as Linux */
	proc_vfork_release(ut);
	return 0;
}

/*
 * Open and plan the interpreter, before the point of no return (load_elf_binary): open_exec's
 * errors (ENOENT, EACCES), EIO when it is shorter than an ELF header, ELIBBAD for a file that
 * is not an aarch64 ELF, its own plan's errors otherwise.  It goes where a top-down mmap puts it, as an ET_DYN without PT_INTERP.
 */
static int open_interp(const char *path, struct interp *in)
{
	int err = vfs_open_kernel(AT_FDCWD, path, O_RDONLY, &in->file);

	if (err) {
		in->file = NULL;
		return err;
	}
	if (!file_is_regular(in->file) || !file_may_exec(in->file))
		err = -EACCES;
	else
		err = head_read(in->file, &in->head);
	if (!err && in->head.size < sizeof(Elf64_Ehdr)) {
		head_free(&in->head);
		err = -EIO; /* elf_read's short read */
	} else if (!err) {
		err = elf_plan_head(in->head.buf, in->head.len, in->head.size, USER_VA_END,
				    &in->plan);
		if (err == -ENOEXEC)
			err = -ELIBBAD;
		if (err)
			head_free(&in->head);
	}
	if (err) {
		file_put(in->file);
		in->file = NULL;
	}
	return err;
}

static int do_execve(const char *path, struct exec_args *a)
{
	struct proc *p = current_proc();
	char interp[BINPRM_BUF_SIZE];
	int err;

	for (int depth = 0;; depth++) {
		struct file *f;
		struct exec_head h;

		err = vfs_open_kernel(AT_FDCWD, path, O_RDONLY, &f);
		if (err)
			return err;
		if (!file_is_regular(f) || !file_may_exec(f)) {
			file_put(f);
			return -EACCES;
		}
		err = head_read(f, &h);
		if (err) {
			file_put(f);
			return err;
		}
		const char *buf = h.buf;

		if (h.len >= 2 && buf[0] == '#' && buf[1] == '!') {
			err = depth < 4 ? script_args(a, buf, h.len, path, interp, sizeof(interp))
					: -ELOOP;
			head_free(&h);
			file_put(f);
			if (err)
				return err;
			path = interp;
			continue;
		}
		struct elf_plan plan;
		struct interp in = { 0 };

		err = elf_plan_head(h.buf, h.len, h.size, USER_VA_END, &plan);
		if (!err && plan.interp)
			err = open_interp(plan.interp, &in);
		if (err && !elf_plan_err_is_fatal(err)) {
			head_free(&h);
			file_put(f);
			return err;
		}
		if (!err)
			err = load_image(p, f, &plan, a, path, &in);
		if (in.file) {
			head_free(&in.head);
			file_put(in.file);
		}
		head_free(&h);
		file_put(f);
		if (err) {
			/* past the point of no return: die as Linux does */
			signal_force_fault(11, 0x80, 0);
			return err;
		}
		return 0;
	}
}

static long sys_execve(uint64_t upath, uint64_t uargv, uint64_t uenvp)
{
	struct exec_args a;
	char *path = kmalloc(4096);
	long err;

	if (!path)
		return -ENOMEM;
	err = ksvc_strncpy_from_user(path, (void *)upath, 4096);
	if (err < 0) {
		kfree(path);
		return err;
	}
	if (!path[0]) {
		kfree(path);
		return -ENOENT;
	}
	err = args_init(&a);
	if (!err)
		err = copy_user_strings(&a, &a.argv, &a.argc, uargv);
	if (!err)
		err = copy_user_strings(&a, &a.envp, &a.envc, uenvp);
	if (!err)
		err = do_execve(path, &a);
	args_free(&a);
	kfree(path);
	return err;
}
SYSCALL(__NR_execve, sys_execve);

int exec_kernel_path(const char *path, char *const argv[], char *const envp[])
{
	struct exec_args a;
	int err = args_init(&a);

	for (size_t i = 0; !err && argv && argv[i]; i++)
		err = args_add(&a, &a.argv, &a.argc, argv[i]);
	for (size_t i = 0; !err && envp && envp[i]; i++)
		err = args_add(&a, &a.envp, &a.envc, envp[i]);
	if (!err)
		err = do_execve(path, &a);
	args_free(&a);
	return err;
}
