/*
 * procfs.c - /proc: the files perf tools (and ps, top, glibc) read, in Linux 6.1's formats.
 *
 * What it does: under /proc (statfs PROC_SUPER_MAGIC): cpuinfo (arm64 c_show: processor,
 * BogoMIPS from CNTFRQ as Linux's timer-based loops_per_jiffy with HZ 250, the Features of
 * the HWCAPs exec advertises, the MIDR fields), meminfo (the first lines of Linux's, real
 * MemTotal/MemFree/MemAvailable, Slab/SUnreclaim from kmalloc, the rest 0), version, uptime (idle: the idle tasks' run
 * time), kallsyms (every kernel symbol, built into the image), modules (empty), mounts, sys/kernel/ perf sysctls
 * (perf/sysfs.c keeps them) and kptr_restrict, self -> <tgid>, and <tgid>/ for every process:
 * status, comm, stat, maps, cmdline, exe, fd/ (procfs_fd.c), task/<tid>/{status,comm,stat}.  The /proc
 * directory refreshes its <tgid> entries at each lookup and listing (pseudo.c), so a dead
 * process's directory goes away and a new one appears.
 *
 * Assumptions: each CPU's MIDR is read on that CPU (pseudo_cpu_midr).  /proc/PID/cmdline is
 * read from the process's memory only when PID is the reader (other processes show an empty
 * cmdline, as Linux shows for kernel threads).  /proc/PID/exe reads back as the path of the file
 * mapped at the start of the code, and opens the process's executable.  Sysctls Linux lets root write but we keep fixed (kptr_restrict,
 * perf_event_max_stack, perf_cpu_time_max_percent) refuse writes with EACCES at open.
 *
 * ABI: fs/proc/array.c (status, stat: 52 fields), task_mmu.c show_map_vma (maps: name at
 * column 73), meminfo.c show_val_kb ("%-16s%8lu kB"), arch/arm64/kernel/cpuinfo.c c_show,
 * proc_dointvec for sysctl writes (leading blanks, optional '-', digits, then blanks;
 * anything else is EINVAL).
 */
#include <stdatomic.h>
#include <arch/sysreg.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/irq.h>
#include <kern/irq_desc.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/platform.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <kern/time.h>
#include <kern/vm.h>
#include <linux/stat.h>
#include <bpf/sysctl.h>
#include <perf/perf.h>
#include "fs_internal.h"

#define PROC_MAX_LIST 1024
/* kernel/exec.c's AT_HWCAP: HWCAP_FP | HWCAP_ASIMD | HWCAP_EVTSTRM | HWCAP_CPUID */
#define PROC_HWCAP ((1ul << 0) | (1ul << 1) | (1ul << 2) | (1ul << 11))
#define USER_HZ 100

extern struct proc *init_proc; /* kernel/proc.c: the root of the process tree */
extern const char kallsyms_text[], kallsyms_text_end[]; /* kernel/kallsyms.S */

static struct inode *proc_root;

/* ---- processes: snapshots taken under proc_tree_lock ---- */

/* The thread a /proc file of id parg talks about (the leader for a process), or NULL.
 * Call with proc_tree_lock held. */
static struct uthread *proc_thread_locked(long parg, struct proc **pp)
{
	spin_assert_held(&proc_tree_lock);
	int id = (int)(parg & 0x7fffffff);
	struct uthread *ut;
	struct proc *p;

	if (parg & PROC_TASK_BIT) {
		ut = proc_find_thread_locked(id);
		*pp = ut ? ut->task.proc : NULL;
		return ut;
	}
	p = proc_find_locked(id);
	ut = proc_find_thread_locked(id);
	if (!p && ut) /* /proc/<tid> of a thread that does not lead: its process, its view */
		p = ut->task.proc;
	*pp = p;
	if (!p)
		return NULL;
	if (ut && ut->task.proc == p)
		return ut;
	if (list_empty(&p->threads))
		return NULL;
	return list_entry(p->threads.next, struct uthread, thread_node);
}

struct proc_snap {
	int tgid, pid, ppid, pgid, sid, nr_threads, cpu;
	char comm[TASK_COMM_LEN];
	char state;
	uint32_t umask;
	uint64_t min_flt, maj_flt, cmin_flt, cmaj_flt, utime, stime, cutime, cstime;
	uint64_t nvcsw, nivcsw;
	struct mm *mm; /* a reference, or NULL */
};

static int proc_snapshot(long parg, struct proc_snap *s)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p;
	struct uthread *ut = proc_thread_locked(parg, &p);
	struct list_node *n;

	memset(s, 0, sizeof(*s));
	if (!p || !ut) {
		spin_unlock_irqrestore(&proc_tree_lock, f);
		return -ESRCH;
	}
	s->tgid = p->tgid;
	s->pid = (int)(parg & 0x7fffffff); /* the tgid, or a tid (task/<tid>, /proc/<tid>) */
	s->ppid = p->parent ? p->parent->tgid : 0;
	s->pgid = p->pgid;
	s->sid = p->sid;
	s->umask = p->umask;
	memcpy(s->comm, ut->task.comm, TASK_COMM_LEN);
	s->comm[TASK_COMM_LEN - 1] = 0;
	s->cpu = (int)ut->task.cpu;
	s->state = &ut->task == current_task() ? 'R'
		   : ut->task.state == TASK_RUNNABLE ? 'R'
		   : ut->task.state == TASK_SLEEPING ? 'S' : 'Z';
	s->nvcsw = ut->task.nvcsw;
	s->nivcsw = ut->task.nivcsw;
	spin_lock(&p->lock);
	s->nr_threads = p->nr_threads;
	s->min_flt = p->min_flt;
	s->maj_flt = p->maj_flt;
	s->utime = p->utime_ns;
	s->stime = p->stime_ns;
	if (parg & PROC_TASK_BIT) {
		s->min_flt = ut->min_flt;
		s->maj_flt = ut->maj_flt;
		task_cputime_split(&ut->task, &s->utime, &s->stime);
	} else {
		list_for_each(n, &p->threads) {
			struct uthread *t = list_entry(n, struct uthread, thread_node);
			uint64_t u, st;

			s->min_flt += t->min_flt;
			s->maj_flt += t->maj_flt;
			task_cputime_split(&t->task, &u, &st);
			s->utime += u;
			s->stime += st;
		}
	}
	s->cmin_flt = p->cmin_flt;
	s->cmaj_flt = p->cmaj_flt;
	s->cutime = p->cutime_ns;
	s->cstime = p->cstime_ns;
	s->mm = p->mm;
	if (s->mm)
		mm_get(s->mm);
	spin_unlock(&p->lock);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return 0;
}

static const char *state_name(char c)
{
	return c == 'R' ? "R (running)" : c == 'S' ? "S (sleeping)" : "Z (zombie)";
}

static uint64_t ns_to_ticks(uint64_t ns)
{
	return ns / (1000000000ull / USER_HZ);
}

static uint64_t mm_vsize(struct mm *mm)
{
	uint64_t sz = 0;
	struct list_node *n;

	kmutex_lock(&mm->lock);
	list_for_each(n, &mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);

		sz += v->end - v->start;
	}
	kmutex_unlock(&mm->lock);
	return sz;
}

static int show_status(struct inode *ino, struct pbuf *b)
{
	struct proc_snap s;
	uint64_t vsz = 0;
	int err = proc_snapshot(ino->parg, &s);

	if (err)
		return err;
	if (s.mm) {
		vsz = mm_vsize(s.mm) / 1024;
		mm_put(s.mm);
	}
	pb_printf(b, "Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\n"
		  "PPid:\t%d\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\n"
		  "Groups:\t \nNStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n",
		  s.comm, s.umask, state_name(s.state), s.tgid, s.pid, s.ppid, s.tgid, s.pid,
		  s.pgid, s.sid);
	if (s.mm)
		pb_printf(b, "VmPeak:\t%8lu kB\nVmSize:\t%8lu kB\n", (unsigned long)vsz,
			  (unsigned long)vsz);
	pb_printf(b, "Threads:\t%d\nSigQ:\t0/3477\nSigPnd:\t0000000000000000\n"
		  "ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
		  "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n"
		  "CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n"
		  "CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n"
		  "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\n"
		  "Seccomp_filters:\t0\nCpus_allowed:\t%x\nCpus_allowed_list:\t",
		  s.nr_threads, (unsigned int)((1ull << nr_cpus_possible) - 1));
	pb_cpu_list(b, false);
	pb_printf(b, "\nMems_allowed:\t0001\nMems_allowed_list:\t0\n"
		  "voluntary_ctxt_switches:\t%lu\nnonvoluntary_ctxt_switches:\t%lu\n",
		  (unsigned long)s.nvcsw, (unsigned long)s.nivcsw);
	return 0;
}

static int show_comm(struct inode *ino, struct pbuf *b)
{
	struct proc_snap s;
	int err = proc_snapshot(ino->parg, &s);

	if (err)
		return err;
	if (s.mm)
		mm_put(s.mm);
	pb_printf(b, "%s\n", s.comm);
	return 0;
}

static int show_stat(struct inode *ino, struct pbuf *b)
{
	struct proc_snap s;
	struct mm m = { 0 };
	uint64_t vsz = 0;
	int err = proc_snapshot(ino->parg, &s);

	if (err)
		return err;
	if (s.mm) {
		vsz = mm_vsize(s.mm);
		m.start_code = s.mm->start_code;
		m.end_code = s.mm->end_code;
		m.stack_top = s.mm->stack_top;
		m.start_data = s.mm->start_data;
		m.end_data = s.mm->end_data;
		m.start_brk = s.mm->start_brk;
		m.arg_start = s.mm->arg_start;
		m.arg_end = s.mm->arg_end;
		m.env_start = s.mm->env_start;
		m.env_end = s.mm->env_end;
		mm_put(s.mm);
	}
	/* pid comm state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt */
	pb_printf(b, "%d (%s) %c %d %d %d 0 -1 4194304 %lu %lu %lu %lu ", s.pid, s.comm, s.state,
		  s.ppid, s.pgid, s.sid, (unsigned long)s.min_flt, (unsigned long)s.cmin_flt,
		  (unsigned long)s.maj_flt, (unsigned long)s.cmaj_flt);
	/* utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss
	 * rsslim */
	pb_printf(b, "%lu %lu %lu %lu 20 0 %d 0 0 %lu 0 18446744073709551615 ",
		  (unsigned long)ns_to_ticks(s.utime), (unsigned long)ns_to_ticks(s.stime),
		  (unsigned long)ns_to_ticks(s.cutime), (unsigned long)ns_to_ticks(s.cstime),
		  s.nr_threads, (unsigned long)vsz);
	/* startcode endcode startstack kstkesp kstkeip signal blocked sigignore sigcatch wchan
	 * nswap cnswap exit_signal processor rt_priority policy delayacct_blkio guest_time
	 * cguest_time */
	pb_printf(b, "%lu %lu %lu 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0 ",
		  (unsigned long)m.start_code, (unsigned long)m.end_code,
		  (unsigned long)m.stack_top, s.cpu);
	/* start_data end_data start_brk arg_start arg_end env_start env_end exit_code */
	pb_printf(b, "%lu %lu %lu %lu %lu %lu %lu 0\n", (unsigned long)m.start_data,
		  (unsigned long)m.end_data, (unsigned long)m.start_brk,
		  (unsigned long)m.arg_start, (unsigned long)m.arg_end,
		  (unsigned long)m.env_start, (unsigned long)m.env_end);
	return 0;
}

static int show_maps(struct inode *ino, struct pbuf *b)
{
	struct proc_snap s;
	struct list_node *n;
	char *path;
	int err = proc_snapshot(ino->parg, &s);

	if (err)
		return err;
	if (!s.mm)
		return 0;
	path = kmalloc(VFS_PATH_MAX);
	if (!path) {
		mm_put(s.mm);
		return -ENOMEM;
	}
	kmutex_lock(&s.mm->lock); /* lock order: mm->lock -> vfs_lock */
	list_for_each(n, &s.mm->vmas) {
		struct vm_area *v = list_entry(n, struct vm_area, node);
		struct inode *fi = v->file ? v->file->inode : NULL;
		const char *name = NULL;

		pb_printf(b, "%08lx-%08lx %c%c%c%c %08lx %02x:%02x %lu ", (unsigned long)v->start,
			  (unsigned long)v->end, v->flags & VMA_READ ? 'r' : '-',
			  v->flags & VMA_WRITE ? 'w' : '-', v->flags & VMA_EXEC ? 'x' : '-',
			  v->flags & VMA_SHARED ? 's' : 'p',
			  (unsigned long)(fi ? v->pgoff << 12 : 0), 0, fi ? VFS_DEV : 0,
			  (unsigned long)(fi ? fi->ino : 0));
		if (fi && !(v->flags & VMA_SPECIAL)) {
			fs_mutex_lock(&vfs_lock);
			if (vfs_inode_path_locked(fi, path, VFS_PATH_MAX))
				name = path;
			fs_mutex_unlock(&vfs_lock);
		} else if (v->flags & VMA_STACK) {
			name = "[stack]";
		} else if (!fi && v->ops && v->ops->name) {
			name = v->ops->name; /* [vvar], [vdso] */
		} else if (!fi && v->start <= s.mm->brk && v->end >= s.mm->start_brk) {
			name = "[heap]";
		}
		if (name) {
			pb_pad(b, 72);
			pb_printf(b, " %s", name);
		}
		pb_putn(b, "\n", 1);
	}
	kmutex_unlock(&s.mm->lock);
	mm_put(s.mm);
	kfree(path);
	return 0;
}

static int show_cmdline(struct inode *ino, struct pbuf *b)
{
	struct proc_snap s;
	int err = proc_snapshot(ino->parg, &s);
	uint64_t len;
	char *k;

	if (err)
		return err;
	if (!s.mm)
		return 0;
	len = s.mm->arg_end > s.mm->arg_start ? s.mm->arg_end - s.mm->arg_start : 0;
	len = MIN(len, (uint64_t)65536);
	if (s.mm == current_proc()->mm && len && (k = kmalloc(len))) {
		if (!ksvc_copy_from_user(k, (const void *)s.mm->arg_start, len))
			pb_putn(b, k, len);
		kfree(k);
	}
	mm_put(s.mm);
	return 0;
}

/* readlink /proc/PID/exe: the path of the process's executable (proc.exe, set at exec). */
static long exe_readlink(struct inode *ino, char *buf, size_t size)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct inode *fi = NULL;
	struct proc *p;
	char *path;
	size_t len = 0;

	if (proc_thread_locked(ino->parg, &p) && p) {
		spin_lock(&p->lock);
		fi = p->exe;
		if (fi)
			inode_get(fi);
		spin_unlock(&p->lock);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	if (!fi)
		return -ENOENT;
	path = kmalloc(VFS_PATH_MAX);
	if (path) {
		fs_mutex_lock(&vfs_lock);
		len = vfs_inode_path_locked(fi, path, VFS_PATH_MAX);
		fs_mutex_unlock(&vfs_lock);
		len = MIN(len, size);
		memcpy(buf, path, len);
		kfree(path);
	}
	inode_put(fi);
	return path ? (long)len : -ENOMEM;
}

static const struct pseudo_ops status_ops = { .show = show_status };
static const struct pseudo_ops comm_ops = { .show = show_comm };
static const struct pseudo_ops stat_ops = { .show = show_stat };
static const struct pseudo_ops maps_ops = { .show = show_maps };
static const struct pseudo_ops cmdline_ops = { .show = show_cmdline };
/* open through /proc/PID/exe: the process's executable (proc.exe), deleted or not */
static struct inode *exe_follow(struct inode *ino)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p;
	struct inode *exe = NULL;

	if (proc_thread_locked(ino->parg, &p) && p) {
		spin_lock(&p->lock);
		exe = p->exe; /* its reference is put under vfs_lock, which the caller holds */
		spin_unlock(&p->lock);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return exe;
}

static const struct pseudo_ops exe_ops = { .readlink = exe_readlink, .follow = exe_follow };

int procfs_with_files(long parg, void (*fn)(struct files *fs, void *arg), void *arg)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p;
	int err = -ESRCH;

	if (proc_thread_locked(parg, &p) && p) {
		spin_lock(&p->lock);
		if (p->files) {
			fn(p->files, arg);
			err = 0;
		}
		spin_unlock(&p->lock);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

/* ---- the <tgid> and task/<tid> directories ---- */

static int collect_threads(int tgid, int *ids, int max)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = proc_find_locked(tgid);
	struct uthread *ut = p ? NULL : proc_find_thread_locked(tgid);
	int cnt = 0;

	if (ut) /* /proc/<tid>/task of a thread that does not lead: its group's threads */
		p = ut->task.proc;

	if (p)
		cnt = proc_live_tids_locked(p, ids, max);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return cnt;
}

static bool thread_alive(int tid)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = proc_find_thread_locked(tid);
	bool alive = ut && ut->task.state != TASK_ZOMBIE;

	spin_unlock_irqrestore(&proc_tree_lock, f);
	return alive;
}

static void collect_procs_rec(struct proc *p, int *ids, int *cnt, int max, int depth)
{
	struct list_node *n;

	if (!p->zombie && *cnt < max)
		ids[(*cnt)++] = p->tgid;
	if (depth > 64)
		return;
	list_for_each(n, &p->children)
		collect_procs_rec(list_entry(n, struct proc, sibling), ids, cnt, max, depth + 1);
}

static int collect_procs(int *ids, int max)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	int cnt = 0;

	if (init_proc)
		collect_procs_rec(init_proc, ids, &cnt, max, 0);
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return cnt;
}

static bool parse_id(const char *name, size_t len, int *id)
{
	long v = 0;

	if (!len || len > 9 || name[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (name[i] - '0');
	}
	*id = (int)v;
	return true;
}

static bool id_in(const int *ids, int cnt, int id)
{
	for (int i = 0; i < cnt; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* proc_cgroup_show: "0::/path" (the v2 hierarchy only) */
static int cgroup_show(struct inode *ino, struct pbuf *b)
{
	return cgroupfs_proc_show((int)(ino->parg & 0x7fffffff), ino->parg & PROC_TASK_BIT, b);
}

static const struct pseudo_ops cgroup_ops = { .show = cgroup_show };

static void task_dir_refresh(struct inode *dir, const char *name, size_t len);
static const struct pseudo_ops task_dir_ops = { .refresh = task_dir_refresh };

static void make_pid_dir_locked(struct inode *parent, int id, bool task)
{
	fs_mutex_assert_held(&vfs_lock);
	long arg = id | (task ? PROC_TASK_BIT : 0);
	char nm[16];
	struct inode *d;

	ksnprintf(nm, sizeof(nm), "%d", id);
	d = pseudo_mkdir_locked(parent, nm, 0555, NULL, arg);
	if (!d)
		return;
	pseudo_file_locked(d, "status", 0444, &status_ops, arg);
	pseudo_file_locked(d, "comm", 0644, &comm_ops, arg);
	pseudo_file_locked(d, "stat", 0444, &stat_ops, arg);
	pseudo_file_locked(d, "maps", 0444, &maps_ops, arg);
	pseudo_file_locked(d, "cmdline", 0444, &cmdline_ops, arg);
	pseudo_file_locked(d, "cgroup", 0444, &cgroup_ops, arg);
	pseudo_symlink_locked(d, "exe", NULL, &exe_ops, arg);
	/* every process's root is the one root (no chroot here): bcc's symbol resolver opens
	 * a process's files through it */
	pseudo_symlink_locked(d, "root", "/", NULL, arg);
	pseudo_mkdir_locked(d, "fd", 0500, &procfs_fd_dir_ops, arg);
	pseudo_mkdir_locked(d, "fdinfo", 0500, &procfs_fdinfo_dir_ops, arg);
	if (!task)
		pseudo_mkdir_locked(d, "task", 0555, &task_dir_ops, id);
}

/* Bring the numeric entries of dir in line with ids (name: only that entry). */
static void sync_ids_locked(struct inode *dir, const char *name, size_t len, const int *ids,
			    int cnt, bool task)
{
	fs_mutex_assert_held(&vfs_lock);
	struct list_node *n, *next;
	int want;

	for (n = dir->dirents.next; n != &dir->dirents; n = next) {
		struct ramfs_dirent *de = list_entry(n, struct ramfs_dirent, node);
		int id;

		next = n->next;
		if (name && (de->len != len || memcmp(de->name, name, len)))
			continue;
		if (parse_id(de->name, de->len, &id) && !id_in(ids, cnt, id))
			pseudo_remove_locked(dir, de);
	}
	if (name) {
		if (parse_id(name, len, &want) && id_in(ids, cnt, want) &&
		    !ramfs_lookup_locked(dir, name, len))
			make_pid_dir_locked(dir, want, task);
		return;
	}
	for (int i = 0; i < cnt; i++) {
		char nm[16];
		int l = ksnprintf(nm, sizeof(nm), "%d", ids[i]);

		if (!ramfs_lookup_locked(dir, nm, (size_t)l))
			make_pid_dir_locked(dir, ids[i], task);
	}
}

static void task_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	int ids[256], cnt, want;

	if (name && !parse_id(name, len, &want))
		return;
	cnt = collect_threads((int)dir->parg, ids, 256);
	sync_ids_locked(dir, name, len, ids, cnt, true);
}

static void self_refresh_locked(struct inode *dir)
{
	fs_mutex_assert_held(&vfs_lock);
	struct proc *p = current_proc();
	struct ramfs_dirent *de = ramfs_lookup_locked(dir, "self", 4);
	char nm[16];

	if (!p)
		return;
	ksnprintf(nm, sizeof(nm), "%d", p->tgid);
	if (de && de->inode->target && !strcmp(de->inode->target, nm))
		return;
	if (de)
		ramfs_unlink_locked(dir, de);
	pseudo_symlink_locked(dir, "self", nm, NULL, 0);
}

static void root_refresh(struct inode *dir, const char *name, size_t len)
{
	int *ids, cnt, want = 0;

	if (name && len == 4 && !memcmp(name, "self", 4)) {
		self_refresh_locked(dir);
		return;
	}
	if (name && !parse_id(name, len, &want))
		return;
	if (!name)
		self_refresh_locked(dir);
	ids = kmalloc(PROC_MAX_LIST * sizeof(int));
	if (!ids)
		return;
	cnt = collect_procs(ids, PROC_MAX_LIST - 1);
	if (name && !id_in(ids, cnt, want) && thread_alive(want))
		ids[cnt++] = want; /* /proc/<tid>: found by lookup, not listed (as Linux) */
	sync_ids_locked(dir, name, len, ids, cnt, false);
	kfree(ids);
}

static const struct pseudo_ops root_ops = { .refresh = root_refresh };

/* ---- system-wide files ---- */

static int show_cpuinfo(struct inode *ino, struct pbuf *b)
{
	static const char *const hwcap_names[] = {
		"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics",
		"fphp", "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3",
		"sm3", "sm4", "asimddp", "sha512", "sve", "asimdfhm", "dit", "uscat", "ilrcpc",
		"flagm", "ssbs", "sb", "paca", "pacg",
	};
	uint64_t lpj = read_sysreg(cntfrq_el0) / 250; /* HZ 250: timer-based delay loop */

	for (unsigned int i = 0; i < nr_cpus_possible; i++) {
		uint64_t midr;

		if (!atomic_load(&cpus[i].online))
			continue;
		midr = pseudo_cpu_midr(i);
		pb_printf(b, "processor\t: %u\nBogoMIPS\t: %lu.%02lu\nFeatures\t:", i,
			  (unsigned long)(lpj / (500000 / 250)),
			  (unsigned long)((lpj / (5000 / 250)) % 100));
		for (unsigned int h = 0; h < ARRAY_SIZE(hwcap_names); h++)
			if (PROC_HWCAP & (1ul << h))
				pb_printf(b, " %s", hwcap_names[h]);
		pb_printf(b, "\nCPU implementer\t: 0x%02x\nCPU architecture: 8\n"
			  "CPU variant\t: 0x%x\nCPU part\t: 0x%03x\nCPU revision\t: %u\n\n",
			  (unsigned int)(midr >> 24) & 0xff, (unsigned int)(midr >> 20) & 0xf,
			  (unsigned int)(midr >> 4) & 0xfff, (unsigned int)midr & 0xf);
	}
	return 0;
}

static void kb(struct pbuf *b, const char *label, uint64_t bytes)
{
	pb_printf(b, "%-16s%8lu kB\n", label, (unsigned long)(bytes / 1024));
}

static int show_meminfo(struct inode *ino, struct pbuf *b)
{
	static const char *const zeros[] = {
		"Buffers:", "Cached:", "SwapCached:", "Active:", "Inactive:", "Active(anon):",
		"Inactive(anon):", "Active(file):", "Inactive(file):", "Unevictable:", "Mlocked:",
		"SwapTotal:", "SwapFree:", "Zswap:", "Zswapped:", "Dirty:", "Writeback:",
		"AnonPages:", "Mapped:", "Shmem:",
	};
	uint64_t free = mem_free_bytes();

	kb(b, "MemTotal:", mem_total_bytes());
	kb(b, "MemFree:", free);
	kb(b, "MemAvailable:", free);
	for (unsigned int i = 0; i < ARRAY_SIZE(zeros); i++)
		kb(b, zeros[i], 0);
	/* the kernel's own objects (kmalloc), none reclaimable: what a leak check watches */
	kb(b, "KReclaimable:", 0);
	kb(b, "Slab:", kernel_kmem.bytes_in_use);
	kb(b, "SReclaimable:", 0);
	kb(b, "SUnreclaim:", kernel_kmem.bytes_in_use);
	pb_printf(b, "HugePages_Total:       0\nHugePages_Free:        0\n"
		  "HugePages_Rsvd:        0\nHugePages_Surp:        0\n");
	kb(b, "Hugepagesize:", 2048 * 1024);
	kb(b, "Hugetlb:", 0);
	return 0;
}

static int show_uptime(struct inode *ino, struct pbuf *b)
{
	uint64_t up = time_ns(), idle = 0;

	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		if (cpus[i].idle)
			idle += cpus[i].idle->runtime_ns;
	pb_printf(b, "%lu.%02lu %lu.%02lu\n", (unsigned long)(up / 1000000000ull),
		  (unsigned long)(up / 10000000ull % 100), (unsigned long)(idle / 1000000000ull),
		  (unsigned long)(idle / 10000000ull % 100));
	return 0;
}

static int show_kallsyms(struct inode *ino, struct pbuf *b)
{
	pb_putn(b, kallsyms_text, (size_t)(kallsyms_text_end - kallsyms_text));
	return 0;
}

/* /proc/interrupts as Linux's show_interrupts prints it (3-digit numbers, the GIC's chip
 * name, hwirq, trigger, action), then arm64's show_ipi_list; no "Err:" line (the kernel does
 * not count spurious interrupts). */
struct interrupts_show {
	struct pbuf *b;
	unsigned int ipi[IRQ_NR_LINUX_IPIS][PLATFORM_MAX_CPUS];
};

static void interrupt_line(void *ctx, const struct irq_info *in)
{
	struct interrupts_show *s = ctx;
	struct pbuf *b = s->b;

	if (in->virq - IRQ_VIRQ_IPI_BASE < IRQ_NR_LINUX_IPIS) { /* IRQ_HIDDEN: listed as IPIn */
		memcpy(s->ipi[in->virq - IRQ_VIRQ_IPI_BASE], in->count, sizeof(in->count));
		return;
	}
	pb_printf(b, "%3u: ", in->virq);
	for (unsigned int c = 0; c < nr_cpus_possible && c < PLATFORM_MAX_CPUS; c++)
		if (atomic_load(&cpus[c].online))
			pb_printf(b, "%10u ", in->count[c]);
	pb_printf(b, " %8s %3u %-8s  %s\n", gic_version() == 3 ? "GICv3" : "GIC-0", in->intid,
		  "Level", in->name);
}

static int show_interrupts(struct inode *ino, struct pbuf *b)
{
	static const char *const ipi_types[IRQ_NR_LINUX_IPIS] = {
		"Rescheduling interrupts", "Function call interrupts", "CPU stop interrupts",
		"CPU stop (for crash dump) interrupts", "Timer broadcast interrupts",
		"IRQ work interrupts", "CPU wake-up interrupts",
	};
	struct interrupts_show *s = kmalloc(sizeof(*s));

	(void)ino;
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->b = b;
	pb_printf(b, "%11s", "");
	for (unsigned int c = 0; c < nr_cpus_possible; c++)
		if (atomic_load(&cpus[c].online))
			pb_printf(b, "CPU%-8u", c);
	pb_printf(b, "\n");
	irq_for_each(interrupt_line, s);
	for (unsigned int i = 0; i < IRQ_NR_LINUX_IPIS; i++) {
		pb_printf(b, "IPI%u:", i);
		for (unsigned int c = 0; c < nr_cpus_possible && c < PLATFORM_MAX_CPUS; c++)
			if (atomic_load(&cpus[c].online))
				pb_printf(b, "%10u ", s->ipi[i][c]);
		pb_printf(b, "      %s\n", ipi_types[i]);
	}
	kfree(s);
	return 0;
}

static const struct pseudo_ops cpuinfo_ops = { .show = show_cpuinfo };
static const struct pseudo_ops interrupts_ops = { .show = show_interrupts };
static const struct pseudo_ops meminfo_ops = { .show = show_meminfo };
static const struct pseudo_ops uptime_ops = { .show = show_uptime };
static const struct pseudo_ops kallsyms_ops = { .show = show_kallsyms };

/* ---- /proc/sys/kernel ---- */

static const char *const sysctl_names[] = {
	"perf_event_paranoid",	"perf_event_max_sample_rate", "perf_event_mlock_kb",
	"perf_event_max_stack", "perf_cpu_time_max_percent",
	"perf_user_access", /* index 5: writable, as indexes 0-2 */
};

static int sysctl_show(struct inode *ino, struct pbuf *b)
{
	long v;
	int err = perf_sysctl_get(sysctl_names[ino->parg], &v);

	if (err)
		return err;
	pb_printf(b, "%ld\n", v);
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* proc_dointvec's parse of one value: blanks, [-]digits, blanks; 1 when there is only blank,
 * -EINVAL for anything else. */
static int sysctl_parse(const char *buf, size_t n, long *out)
{
	size_t i = 0;
	bool neg = false;
	long v = 0;

	while (i < n && is_blank(buf[i]))
		i++;
	if (i == n)
		return 1;
	if (buf[i] == '-') {
		neg = true;
		i++;
	}
	if (i == n || buf[i] < '0' || buf[i] > '9')
		return -EINVAL;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > 2147483648L)
			return -EINVAL;
	}
	if (i < n && !is_blank(buf[i]) && buf[i] != 0)
		return -EINVAL;
	*out = neg ? -v : v;
	return 0;
}

static long sysctl_store(struct inode *ino, const char *buf, size_t n)
{
	long v;
	int err = sysctl_parse(buf, n, &v);

	if (err)
		return err < 0 ? err : (long)n; /* nothing but blanks: accepted, nothing changes */
	err = perf_sysctl_set(sysctl_names[ino->parg], v);
	return err ? err : (long)n;
}

/* /proc/sys/kernel/{bpf_stats_enabled,unprivileged_bpf_disabled} and
 * /proc/sys/net/core/bpf_jit_{enable,harden,kallsyms} (bpf/obj.c) */
static const char *const bpf_sysctl_names[] = { "bpf_stats_enabled", "unprivileged_bpf_disabled",
						 "bpf_jit_enable", "bpf_jit_harden",
						 "bpf_jit_kallsyms" };

static int bpf_sysctl_show(struct inode *ino, struct pbuf *b)
{
	long v;
	int err = bpf_sysctl_get(bpf_sysctl_names[ino->parg], &v);

	if (err)
		return err;
	pb_printf(b, "%ld\n", v);
	return 0;
}

static long bpf_sysctl_store(struct inode *ino, const char *buf, size_t n)
{
	long v;
	int err = sysctl_parse(buf, n, &v);

	if (err)
		return err < 0 ? err : (long)n;
	err = bpf_sysctl_set(bpf_sysctl_names[ino->parg], v);
	return err ? err : (long)n;
}

static const struct pseudo_ops bpf_sysctl_ops = { .show = bpf_sysctl_show,
						  .store = bpf_sysctl_store };
static const struct pseudo_ops bpf_sysctl_ro_ops = { .show = bpf_sysctl_show };

static const struct pseudo_ops sysctl_rw_ops = { .show = sysctl_show, .store = sysctl_store };
static const struct pseudo_ops sysctl_ro_ops = { .show = sysctl_show };

void procfs_init(struct inode *procdir)
{
	struct inode *sys, *kern, *net, *core;

	fs_mutex_lock(&vfs_lock);
	proc_root = procdir;
	procdir->fs_magic = PROC_SUPER_MAGIC;
	procdir->pseudo = &root_ops;
	pseudo_file_locked(procdir, "cpuinfo", 0444, &cpuinfo_ops, 0);
	pseudo_file_locked(procdir, "meminfo", 0444, &meminfo_ops, 0);
	pseudo_file_locked(procdir, "uptime", 0444, &uptime_ops, 0);
	pseudo_file_locked(procdir, "interrupts", 0444, &interrupts_ops, 0);
	pseudo_file_locked(procdir, "kallsyms", 0444, &kallsyms_ops, 0);
	pseudo_text_locked(procdir, "version",
			   "Linux version 6.1.0-perfkernel (root@perfkernel) (gcc %s) "
			   "#1 SMP PREEMPT perfkernel\n", __VERSION__);
	pseudo_text_locked(procdir, "modules", "%s", "");
	pseudo_file_locked(procdir, "mounts", 0444, &proc_mounts_ops, 0);
	sys = pseudo_mkdir_locked(procdir, "sys", 0555, NULL, 0);
	kern = sys ? pseudo_mkdir_locked(sys, "kernel", 0555, NULL, 0) : NULL;
	if (kern) {
		for (long i = 0; i < (long)ARRAY_SIZE(sysctl_names); i++)
			pseudo_file_locked(kern, sysctl_names[i], 0644,
					   (i < 3 || i == 5) ? &sysctl_rw_ops : &sysctl_ro_ops, i);
		pseudo_text_locked(kern, "kptr_restrict", "0\n");
		for (long i = 0; i < 2; i++)
			pseudo_file_locked(kern, bpf_sysctl_names[i], 0644, &bpf_sysctl_ops, i);
	}
	net = sys ? pseudo_mkdir_locked(sys, "net", 0555, NULL, 0) : NULL;
	core = net ? pseudo_mkdir_locked(net, "core", 0555, NULL, 0) : NULL;
	if (core) {
		pseudo_file_locked(core, "bpf_jit_enable", 0644, &bpf_sysctl_ops, 2);
		for (long i = 3; i < (long)ARRAY_SIZE(bpf_sysctl_names); i++)
			pseudo_file_locked(core, bpf_sysctl_names[i], 0444, &bpf_sysctl_ro_ops, i);
	}
	fs_mutex_unlock(&vfs_lock);
}
