/*
 * tracefs.c - tracefs and debugfs, the mount(2) and umount2(2) syscalls that place them, and
 * /proc/mounts.
 *
 * What it does: tracefs is one tree of pseudo files (statfs TRACEFS_MAGIC) built at boot:
 *   events/<system>/<event>/{id,format,enable,filter}, events/<system>/{enable,filter},
 *   events/{enable,header_page,header_event}: one directory per tracepoint of the table
 *     (<kern/trace.h>; syscalls:* only for the syscalls we have; ftrace:* as Linux lists
 *     them, for perf record's tracing data, though no tracer fires them), built at the first lookup
 *     or listing of its system's directory;
 *   available_events ("system:event" lines), available_tracers / current_tracer ("nop", the
 *     only tracer), tracing_on, trace (the nop tracer's empty buffer header), trace_pipe (what
 *     bpf_trace_printk wrote, consumed as it is read, waiting for it when empty), the
 *     function tracer's control files (set_ftrace_pid, tracing_cpumask, ...: see below),
 *     saved_cmdlines, uprobe_events and
 *     uprobe_profile (trace_uprobe.c's text interface over kernel/uprobe_events.c:
 *     "p|r[:[GRP/]EVENT] PATH:OFFSET", "-:[GRP/]EVENT", O_TRUNC clears), kprobe_events and
 *     kprobe_profile (trace_kprobe.c's: "p[:[GRP/]EVENT] SYM[+OFFS]", "r[MAXACTIVE][:...] SYM",
 *     default group kprobes and name p_SYM_OFFS; no modules or addresses); both with fetch
 *     arguments (kernel/uprobe_events.c probe_args_parse: registers, $stack[N], $comm,
 *     @ADDR, @+OFF, @SYM, nested +OFF(...), typed);
 *     each definition gets events/GRP/EVENT/{id,format,enable,filter}).
 * debugfs (DEBUGFS_MAGIC) holds only tracing/, where tracefs shows through as Linux's
 * automount does.  Both are mounted at boot, as Debian's init does, at /sys/kernel/tracing and
 * /sys/kernel/debug ("none" as the source): perf's api/fs finds them by statfs magic and
 * /proc/mounts.  mount(2) mounts tracefs or debugfs on any directory again (a mount point's
 * ->mounted points at the root; the path walk enters it), and proc or sysfs on /proc or /sys
 * (already there: nothing to do but list them); umount2 takes the last mount off a directory.
 *
 * mount(2) of type "bpf" makes a new bpf filesystem (bpffs.c); "cgroup2" mounts the one
 * cgroup hierarchy (cgroupfs.c) again.
 *
 * What it does not do: other filesystem types (ENODEV: the kernel has no block devices, and its
 * one ramfs is the root), mount flags beyond listing ro/rw, remount, bind and move mounts
 * (EINVAL), event enabling into an ftrace ring buffer (enable files accept writes and change
 * nothing; filter files check and keep what is written, show it or its parse error as Linux
 * does, and filter nothing: perf's tracepoint events take PERF_EVENT_IOC_SET_FILTER's), a
 * function tracer.
 *
 * ABI: Linux 6.1 fs/namespace.c (copy_mount_string EFAULT, user_path_at ENOENT/ENOTDIR,
 * get_fs_type ENODEV, umount of a non-mount point EINVAL, unknown umount flags EINVAL),
 * fs/tracefs/inode.c (root 0700, files 0440/0640, directories 0750),
 * kernel/trace/trace_events.c (event_id_read "%llu\n", event format: the common fields, an
 * empty line, the event's fields, an empty line, "print fmt: ..."), trace_events.c
 * show_header (header_page / header_event text as 6.1 prints it on arm64), fs/proc_namespace.c
 * show_vfsmnt ("src dir type opts 0 0").
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/trace.h>
#include <kern/uprobes.h>
#include <bpf/bpf.h>
#include <asm-generic/poll.h>
#include <linux/fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/stat.h>
#include "fs_internal.h"

static struct inode *tracefs_root, *debugfs_root, *events_root;

/* ---- the mount table (V) ---- */

#define MOUNTS_MAX 16

struct mount {
	struct inode *point; /* a reference; its ->mounted is root */
	struct inode *root;
	const char *type;
	char src[32];
	char path[128]; /* where it was mounted, as /proc/mounts shows it */
};
static struct mount mounts[MOUNTS_MAX];
static unsigned int nr_mounts;

static int proc_mounts_show(struct inode *ino, struct pbuf *b)
{
	pb_printf(b, "rootfs / rootfs rw 0 0\nproc /proc proc rw,relatime 0 0\n"
		  "sys /sys sysfs rw,relatime 0 0\n");
	fs_mutex_lock(&vfs_lock);
	for (unsigned int i = 0; i < nr_mounts; i++)
		pb_printf(b, "%s %s %s rw,relatime 0 0\n", mounts[i].src, mounts[i].path,
			  mounts[i].type);
	fs_mutex_unlock(&vfs_lock);
	return 0;
}

const struct pseudo_ops proc_mounts_ops = { .show = proc_mounts_show };

/* Mount root (type) on directory point (after any mount already there), at path. */
static int mount_locked(struct inode *point, struct inode *root, const char *type,
			const char *src, const char *path)
{
	fs_mutex_assert_held(&vfs_lock);
	struct mount *m;

	if (nr_mounts == MOUNTS_MAX)
		return -ENOMEM;
	if (point == root)
		return 0; /* the same filesystem over itself: Linux stacks it; nothing changes */
	if (point->mounted || point == tracefs_root || point == debugfs_root ||
	    point->fs_magic == TRACEFS_MAGIC || point->fs_magic == DEBUGFS_MAGIC)
		return -EBUSY;
	m = &mounts[nr_mounts++];
	inode_get(point);
	m->point = point;
	m->root = root;
	m->type = type;
	ksnprintf(m->src, sizeof(m->src), "%s", src);
	ksnprintf(m->path, sizeof(m->path), "%s", path);
	point->mounted = root;
	root->parent = point->parent; /* ".." leaves the mount */
	return 0;
}

/* ---- generated files ---- */

enum tf_kind {
	TF_FORMAT,	/* parg: index into trace_events */
	TF_AVAILABLE_EVENTS,
	TF_TRACE,
	TF_HEADER_PAGE,
	TF_HEADER_EVENT,
	TF_PROBE_FORMAT, /* parg >> 8: a uprobe event's id */
	TF_UPROBE_EVENTS,
	TF_UPROBE_PROFILE,
	TF_KPROBE_EVENTS,
	TF_KPROBE_PROFILE,
};

static void format_head(struct pbuf *b, const char *name, unsigned int id)
{
	pb_printf(b, "name: %s\nID: %u\nformat:\n", name, id);
	pb_printf(b, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
}

static void format_show(struct pbuf *b, const struct trace_event *ev)
{
	format_head(b, ev->name, ev->id);
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		const struct trace_field *f = &ev->fields[i];

		pb_printf(b, "\tfield:%s;\toffset:%u;\tsize:%u;\tsigned:%u;\n", f->decl, f->offset,
			  f->size, f->is_signed);
	}
	pb_printf(b, "\nprint fmt: %s\n", ev->print_fmt);
}

/* ---- uprobe events: uprobe_events, uprobe_profile, their format files ---- */

struct probe_show {
	struct pbuf *b;
	enum tf_kind kind;
	unsigned int id;
};

/* The fetch arguments: " NAME=SPEC" for the listing (trace_probe.c's), fields and print fmt
 * pieces for the format file (the field types u/s, x shown as u, none as a hex u64). */
static void args_list(struct pbuf *b, const struct uprobe_event_info *i)
{
	for (unsigned int a = 0; a < i->nargs; a++)
		pb_printf(b, " %s=%s", i->args[a].name, i->args[a].spec);
	pb_printf(b, "\n");
}

static void args_fields(struct pbuf *b, const struct uprobe_event_info *i)
{
	for (unsigned int a = 0; a < i->nargs; a++) {
		const struct probe_arg *p = &i->args[a];

		if (p->type == 'S')
			pb_printf(b, "\tfield:__data_loc char[] %s;\toffset:%u;\tsize:4;\tsigned:1;\n",
				  p->name, p->offset);
		else
			pb_printf(b, "\tfield:%c%u %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
				  p->type == 's' ? 's' : 'u', p->size * 8u, p->name, p->offset, p->size,
				  p->type == 's');
	}
}

static void args_fmt(struct pbuf *b, const struct uprobe_event_info *i)
{
	for (unsigned int a = 0; a < i->nargs; a++) {
		const struct probe_arg *p = &i->args[a];
		const char *l = p->size == 8 ? "L" : "";

		if (p->type == 'S')
			pb_printf(b, " %s=\\\"%%s\\\"", p->name);
		else if (p->type == 'u')
			pb_printf(b, " %s=%%%su", p->name, l);
		else if (p->type == 's')
			pb_printf(b, " %s=%%%sd", p->name, l);
		else
			pb_printf(b, " %s=0x%%%sx", p->name, l);
	}
	pb_printf(b, "\"");
}

static void args_recs(struct pbuf *b, const struct uprobe_event_info *i)
{
	for (unsigned int a = 0; a < i->nargs; a++)
		pb_printf(b, i->args[a].type == 'S' ? ", __get_str(%s)" : ", REC->%s", i->args[a].name);
	pb_printf(b, "\n");
}

static void probe_show_one(const struct uprobe_event_info *i, void *arg)
{
	struct probe_show *s = arg;

	if ((s->kind == TF_UPROBE_EVENTS || s->kind == TF_UPROBE_PROFILE) && i->kprobe)
		return;
	if ((s->kind == TF_KPROBE_EVENTS || s->kind == TF_KPROBE_PROFILE) && !i->kprobe)
		return;
	switch (s->kind) {
	case TF_UPROBE_EVENTS:
		pb_printf(s->b, "%c:%s/%s %s:0x%016llx", i->ret ? 'r' : 'p', i->group, i->name,
			  i->path, (unsigned long long)i->offset);
		if (i->ref_ctr_offset) /* trace_uprobe_show */
			pb_printf(s->b, "(0x%llx)", (unsigned long long)i->ref_ctr_offset);
		args_list(s->b, i);
		break;
	case TF_UPROBE_PROFILE:
		pb_printf(s->b, "  %s %-44s %15llu\n", i->path, i->name,
			  (unsigned long long)i->hits);
		break;
	case TF_KPROBE_EVENTS: /* trace_kprobe_show: rN for a return probe's maxactive */
		if (i->ret)
			pb_printf(s->b, "r%u", i->maxactive);
		else
			pb_printf(s->b, "p");
		pb_printf(s->b, ":%s/%s %s", i->group, i->name, i->path);
		if (i->offset)
			pb_printf(s->b, "+%llu", (unsigned long long)i->offset);
		args_list(s->b, i);
		break;
	case TF_KPROBE_PROFILE: /* probes_profile_seq_show: hits, then misses (none here) */
		pb_printf(s->b, "  %-44s %15llu %15llu\n", i->name, (unsigned long long)i->hits, 0ull);
		break;
	default:
		if (i->id != s->id)
			break;
		/* trace_uprobe.c uprobe_event_define_fields / set_print_fmt */
		format_head(s->b, i->name, i->id);
		if (i->ret) {
			pb_printf(s->b, "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
				  "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n");
			args_fields(s->b, i);
			pb_printf(s->b, "\nprint fmt: \"(%%lx <- %%lx)");
			args_fmt(s->b, i);
			pb_printf(s->b, ", REC->__probe_func, REC->__probe_ret_ip");
		} else {
			pb_printf(s->b, "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n");
			args_fields(s->b, i);
			pb_printf(s->b, "\nprint fmt: \"(%%lx)");
			args_fmt(s->b, i);
			pb_printf(s->b, ", REC->__probe_ip");
		}
		args_recs(s->b, i);
		break;
	}
}

static int tf_show(struct inode *ino, struct pbuf *b)
{
	long arg = ino->parg;
	struct probe_show ps = { b, (enum tf_kind)(arg & 0xff), (unsigned int)(arg >> 8) };

	switch ((enum tf_kind)(arg & 0xff)) {
	case TF_PROBE_FORMAT:
	case TF_UPROBE_EVENTS:
	case TF_UPROBE_PROFILE:
	case TF_KPROBE_EVENTS:
	case TF_KPROBE_PROFILE:
		uprobe_events_each(probe_show_one, &ps);
		break;
	case TF_FORMAT:
		format_show(b, &trace_events[arg >> 8]);
		break;
	case TF_AVAILABLE_EVENTS:
		for (unsigned int i = 0; i < trace_nr_events; i++)
			if (trace_event_by_id(trace_events[i].id))
				pb_printf(b, "%s:%s\n", trace_events[i].system, trace_events[i].name);
		break;
	case TF_TRACE:
		pb_printf(b, "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:%u\n"
			  "#\n"
			  "#                                _-----=> irqs-off/BH-disabled\n"
			  "#                               / _----=> need-resched\n"
			  "#                              | / _---=> hardirq/softirq\n"
			  "#                              || / _--=> preempt-depth\n"
			  "#                              ||| / _-=> migrate-disable\n"
			  "#                              |||| /     delay\n"
			  "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
			  "#              | |         |   |||||     |         |\n",
			  ksvc_nr_cpus());
		break;
	case TF_HEADER_PAGE:
		pb_printf(b, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n");
		break;
	case TF_HEADER_EVENT:
		pb_printf(b, "# compressed entry header\n\ttype_len    :    5 bits\n"
			  "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
			  "\tpadding     : type == 29\n\ttime_extend : type == 30\n"
			  "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n");
		break;
	}
	return 0;
}

static const struct pseudo_ops tf_ops = { .show = tf_show };

/* A control file that shows fixed text (pdata) and takes any write (enable, filter, ...). */
static long accept_store(struct inode *ino, const char *buf, size_t n)
{
	(void)ino;
	(void)buf;
	return (long)n;
}

static int ctl_show(struct inode *ino, struct pbuf *b)
{
	if (ino->pdata)
		pb_putn(b, ino->pdata, strlen(ino->pdata));
	return 0;
}

static const struct pseudo_ops ctl_ops = { .show = ctl_show, .store = accept_store };

/* current_tracer: only "nop" exists (tracing_set_tracer: EINVAL for an unknown one). */
static long tracer_store(struct inode *ino, const char *buf, size_t n)
{
	size_t len = n;

	(void)ino;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (len == 3 && !memcmp(buf, "nop", 3))
		return (long)n;
	return -EINVAL;
}

static const struct pseudo_ops tracer_ops = { .show = ctl_show, .store = tracer_store };

static struct inode *ctl_file_locked(struct inode *dir, const char *name, uint32_t mode,
				     const struct pseudo_ops *ops, const char *text)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ino = pseudo_file_locked(dir, name, mode, ops, 0);
	size_t len = strlen(text) + 1;

	if (ino && (ino->pdata = kmalloc(len)) != NULL)
		memcpy(ino->pdata, text, len);
	return ino;
}

/*
 * ---- the function tracer's control files (kernel/trace/ftrace.c, trace.c) ----
 *
 * There is no function tracer here: the kernel is not built with function entry hooks, so
 * available_tracers lists only nop and current_tracer refuses function and function_graph
 * (EINVAL), as a Linux without those tracers does.  Their control files exist and keep what is
 * written to them, checked as Linux checks it, so that perf ftrace resets them and then reports
 * the missing tracer as it does on such a Linux:
 *   set_ftrace_pid: pids separated by blanks (a word that is not a number: EINVAL), "no pid"
 *     when empty; O_TRUNC clears it;
 *   tracing_cpumask: a hex CPU mask (EINVAL otherwise), shown in hex;
 *   max_graph_depth, tracing_thresh: an unsigned decimal (EINVAL otherwise);
 *   set_ftrace_filter, set_ftrace_notrace, set_graph_function, set_graph_notrace: function
 *     names, of which this kernel has none to trace (available_filter_functions is empty), so
 *     blanks are taken and any name is EINVAL (ftrace_process_regex finds no match).
 * Not built: the options/ files of the function tracers (a Linux without them has none; perf
 * ignores their absence), buffer_size_kb.
 */
enum { FT_PID, FT_CPUMASK, FT_UINT, FT_FUNCS };
#define FT_TEXT 128
static struct spinlock ft_lock = SPINLOCK_INIT; /* the files' texts (pdata, FT_TEXT bytes) */

static int ft_show(struct inode *ino, struct pbuf *b)
{
	char text[FT_TEXT];
	unsigned long f = spin_lock_irqsave(&ft_lock);

	memcpy(text, ino->pdata, FT_TEXT);
	spin_unlock_irqrestore(&ft_lock, f);
	pb_putn(b, text, strlen(text));
	return 0;
}

static bool ft_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* The next word of buf[*at..n): its start and length (0 at the end). */
static size_t ft_word(const char *buf, size_t n, size_t *at, const char **w)
{
	size_t len = 0;

	while (*at < n && ft_blank(buf[*at]))
		(*at)++;
	*w = buf + *at;
	while (*at < n && !ft_blank(buf[*at]) && buf[*at])
		(*at)++, len++;
	return len;
}

/* A number of base 10 or 16 in w[0..len), digits only (no sign, no "0x"): 0 or -EINVAL. The
 * length caps keep it within 64 bits. */
static int ft_number(const char *w, size_t len, unsigned int base, uint64_t *v)
{
	char digits[20];
	char *end;

	if (!len || len > (base == 16 ? 16u : 19u) || w[0] == '+' || w[0] == '-' ||
	    (len > 1 && (w[1] == 'x' || w[1] == 'X')))
		return -EINVAL;
	memcpy(digits, w, len);
	digits[len] = 0;
	*v = strtoul(digits, &end, (int)base);
	return *end ? -EINVAL : 0;
}

static long ft_store(struct inode *ino, const char *buf, size_t n)
{
	char text[FT_TEXT] = "";
	size_t at = 0, len, used = 0;
	const char *w;
	uint64_t v;
	unsigned long f;
	int kind = (int)ino->parg;

	switch (kind) {
	case FT_PID: /* trace_pid_write: each word a pid; the file lists them after a write */
		while ((len = ft_word(buf, n, &at, &w)) != 0) {
			if (ft_number(w, len, 10, &v) || v >= (1u << 22))
				return -EINVAL;
			if (used + 12 < FT_TEXT)
				used += (size_t)ksnprintf(text + used, FT_TEXT - used, "%llu\n",
							  (unsigned long long)v);
		}
		if (!used) {
			/* blanks alone leave the list as it was (O_TRUNC is what clears it) */
			return (long)n;
		}
		break;
	case FT_CPUMASK: /* tracing_cpumask_write: cpumask_parse_user */
		len = ft_word(buf, n, &at, &w);
		if (ft_number(w, len, 16, &v) || ft_word(buf, n, &at, &w))
			return -EINVAL;
		v &= ksvc_nr_cpus() >= 64 ? ~0ull : (1ull << ksvc_nr_cpus()) - 1;
		ksnprintf(text, FT_TEXT, "%llx\n", (unsigned long long)v);
		break;
	case FT_UINT: /* kstrtoul_from_user */
		len = ft_word(buf, n, &at, &w);
		if (ft_number(w, len, 10, &v) || v > UINT32_MAX || ft_word(buf, n, &at, &w))
			return -EINVAL;
		ksnprintf(text, FT_TEXT, "%llu\n", (unsigned long long)v);
		break;
	default: /* FT_FUNCS: no function matches any name */
		if (ft_word(buf, n, &at, &w))
			return -EINVAL;
		return (long)n;
	}
	f = spin_lock_irqsave(&ft_lock);
	memcpy(ino->pdata, text, FT_TEXT);
	spin_unlock_irqrestore(&ft_lock, f);
	return (long)n;
}

/* O_TRUNC on set_ftrace_pid (ftrace_pid_open: the list is cleared); the others keep theirs. */
static int ft_truncate(struct inode *ino)
{
	unsigned long f;

	if ((int)ino->parg != FT_PID)
		return 0;
	f = spin_lock_irqsave(&ft_lock);
	ksnprintf(ino->pdata, FT_TEXT, "no pid\n");
	spin_unlock_irqrestore(&ft_lock, f);
	return 0;
}

static const struct pseudo_ops ft_ops = { .show = ft_show, .store = ft_store, .truncate = ft_truncate };

static void ft_file_locked(struct inode *dir, const char *name, int kind, const char *text)
{
	struct inode *ino = pseudo_file_locked(dir, name, 0640, &ft_ops, kind);

	if (ino && (ino->pdata = kmalloc(FT_TEXT)) != NULL)
		ksnprintf(ino->pdata, FT_TEXT, "%s", text);
}

static void ftrace_files_locked(struct inode *r)
{
	char mask[24];

	fs_mutex_assert_held(&vfs_lock);
	ksnprintf(mask, sizeof(mask), "%llx\n",
		  (unsigned long long)(ksvc_nr_cpus() >= 64 ? ~0ull : (1ull << ksvc_nr_cpus()) - 1));
	ft_file_locked(r, "set_ftrace_pid", FT_PID, "no pid\n");
	ft_file_locked(r, "tracing_cpumask", FT_CPUMASK, mask);
	ft_file_locked(r, "max_graph_depth", FT_UINT, "0\n");
	ft_file_locked(r, "tracing_thresh", FT_UINT, "0\n");
	ft_file_locked(r, "set_ftrace_filter", FT_FUNCS, "#### all functions enabled ####\n");
	ft_file_locked(r, "set_ftrace_notrace", FT_FUNCS, "");
	ft_file_locked(r, "set_graph_function", FT_FUNCS, "#### all functions enabled ####\n");
	ft_file_locked(r, "set_graph_notrace", FT_FUNCS, "");
	ctl_file_locked(r, "available_filter_functions", 0440, &ctl_ops, "");
}

/*
 * trace_pipe (tracing_read_pipe, tracing_poll_pipe): what bpf_trace_printk wrote, consumed as
 * it is read.  A read of an empty pipe waits for a line (EAGAIN with O_NONBLOCK; a signal
 * ends the wait with ERESTARTSYS), then returns what there is, up to the size asked; poll
 * reports POLLIN while bytes are waiting.  Like Linux's, it has no file position.
 */
static struct wait_queue trace_pipe_wq;

static bool trace_pipe_ready(void *ctx, size_t arg)
{
	(void)ctx, (void)arg;
	return bpf_trace_pending();
}

static long trace_pipe_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	char buf[256];
	size_t got;
	int err;

	(void)pos;
	if (!n)
		return 0;
	while (!bpf_trace_pending()) {
		if (atomic_load(&f->flags) & O_NONBLOCK)
			return -EAGAIN;
		err = fs_wait_event(&trace_pipe_wq, trace_pipe_ready, NULL, 0);
		if (err)
			return err;
	}
	got = bpf_trace_read(buf, MIN(n, sizeof(buf)));
	return ksvc_copy_to_user(ubuf, buf, got) ? -EFAULT : (long)got;
}

static unsigned int trace_pipe_poll(struct file *f, struct ksvc_poll *pt)
{
	(void)f;
	ksvc_poll_wait(pt, &trace_pipe_wq);
	return bpf_trace_pending() ? POLLIN | POLLRDNORM : 0;
}

static const struct file_ops trace_pipe_fops = { .read = trace_pipe_read, .poll = trace_pipe_poll };

/* trace: a write is taken and dropped (tracing_write_stub); O_TRUNC would empty the ring
 * buffer the nop tracer never fills. */
static const struct pseudo_ops trace_ops = { .show = tf_show, .store = accept_store };

/* ---- filter files (trace_events_filter.c apply_event_filter, apply_subsystem_event_filter) ---- */

/* What each event's filter file shows (kmalloc'd, with its newline), by table index; NULL:
 * "none".  Set by writes to the event's or its system's filter, under filter_lock.  The
 * ftrace ring buffer they would filter does not exist, so they filter nothing: perf's events
 * take their filter from PERF_EVENT_IOC_SET_FILTER, as on Linux. */
static char *ev_filter[TRACE_MAX_ID];
static struct spinlock filter_lock = SPINLOCK_INIT;

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void filter_set(unsigned int idx, char *text)
{
	unsigned long f = spin_lock_irqsave(&filter_lock);
	char *old = ev_filter[idx];

	ev_filter[idx] = text;
	spin_unlock_irqrestore(&filter_lock, f);
	kfree(old);
}

/* The text for str after err (0: str itself), or NULL when out of memory. */
static char *filter_text(const char *str, int err, const struct trace_filter_err *e)
{
	size_t n = err ? trace_filter_err_text(NULL, 0, str, e) : strlen(str);
	char *t = kmalloc(n + 2);

	if (!t)
		return NULL;
	if (err)
		trace_filter_err_text(t, n + 1, str, e);
	else
		memcpy(t, str, n);
	t[n] = '\n';
	t[n + 1] = 0;
	return t;
}

/* A write's string, trailing white space cut (strstrip), or an errno. */
static int filter_arg(const char *buf, size_t n, char **out)
{
	char *s;

	if (n >= KSVC_PAGE_SIZE)
		return -EINVAL;
	s = kmalloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, buf, n);
	while (n && is_space(s[n - 1]))
		n--;
	s[n] = 0;
	*out = s;
	return 0;
}

static bool is_zero(const char *s)
{
	while (is_space(*s))
		s++;
	return s[0] == '0' && !s[1];
}

/* events/<system>/<event>/filter: parg is the event's table index */
static long ev_filter_store(struct inode *ino, const char *buf, size_t n)
{
	const struct trace_event *ev = &trace_events[ino->parg];
	struct trace_filter_err e;
	struct trace_filter *f = NULL;
	char *s;
	int err = filter_arg(buf, n, &s);

	if (err)
		return err;
	if (is_zero(s)) {
		filter_set((unsigned int)ino->parg, NULL);
	} else {
		err = trace_filter_parse(ev->fields, ev->nr_fields, s, &f, &e);
		trace_filter_free(f);
		filter_set((unsigned int)ino->parg, filter_text(s, err, &e));
	}
	kfree(s);
	return err ? err : (long)n;
}

static int ev_filter_show(struct inode *ino, struct pbuf *b)
{
	unsigned long f = spin_lock_irqsave(&filter_lock);
	const char *t = ev_filter[ino->parg];

	if (t)
		pb_putn(b, t, strlen(t));
	else
		pb_putn(b, "none\n", 5);
	spin_unlock_irqrestore(&filter_lock, f);
	return 0;
}

static const struct pseudo_ops ev_filter_ops = { .show = ev_filter_show, .store = ev_filter_store };

/* events/<system>/filter: parg is the index of one of the system's events.  Each event gets
 * the filter, or its error (BAD_SUBSYS_FILTER); the file itself keeps the default text. */
static long sys_filter_store(struct inode *ino, const char *buf, size_t n)
{
	const char *sys = trace_events[ino->parg].system;
	struct trace_filter_err bad = { TRACE_FILT_BAD_SUBSYS_FILTER, 0 };
	char *s;
	int err = filter_arg(buf, n, &s);

	if (err)
		return err;
	for (unsigned int i = 0; i < trace_nr_events; i++) {
		const struct trace_event *ev = &trace_events[i];
		struct trace_filter_err e;
		struct trace_filter *f = NULL;

		if (strcmp(ev->system, sys) || !trace_event_by_id(ev->id))
			continue;
		if (is_zero(s)) {
			filter_set(i, NULL);
			continue;
		}
		int r = trace_filter_parse(ev->fields, ev->nr_fields, s, &f, &e);

		trace_filter_free(f);
		filter_set(i, filter_text(s, r, &bad));
	}
	kfree(s);
	return (long)n;
}

static int sys_filter_show(struct inode *ino, struct pbuf *b)
{
	(void)ino;
	pb_printf(b, "### global filter ###\n# Use this to set filters for multiple events.\n"
		     "# Only events with the given fields will be affected.\n"
		     "# If no events are modified, an error message will be displayed here\n");
	return 0;
}

static const struct pseudo_ops sys_filter_ops = { .show = sys_filter_show,
						  .store = sys_filter_store };

/* ---- events/ ---- */

static void event_dir_locked(struct inode *sys, unsigned int idx)
{
	fs_mutex_assert_held(&vfs_lock);
	const struct trace_event *ev = &trace_events[idx];
	struct inode *d = pseudo_mkdir_locked(sys, ev->name, 0750, NULL, 0);
	struct inode *id;

	if (!d)
		return;
	ctl_file_locked(d, "enable", 0640, &ctl_ops, "0\n");
	pseudo_file_locked(d, "filter", 0640, &ev_filter_ops, (long)idx);
	pseudo_file_locked(d, "format", 0440, &tf_ops, (long)idx << 8 | TF_FORMAT);
	id = pseudo_text_locked(d, "id", "%u\n", ev->id);
	if (id)
		id->mode = S_IFREG | 0440;
}

/* A system directory: parg is the index of its first event + 1 until built, then 0. */
static void sys_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	(void)name;
	(void)len;
	if (!dir->parg)
		return;
	const char *sys = trace_events[dir->parg - 1].system;

	dir->parg = 0;
	for (unsigned int i = 0; i < trace_nr_events; i++)
		if (!strcmp(trace_events[i].system, sys) && trace_event_by_id(trace_events[i].id))
			event_dir_locked(dir, i);
}

static const struct pseudo_ops sys_dir_ops = { .refresh = sys_dir_refresh };

static void events_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	(void)name;
	(void)len;
	if (dir->parg)
		return;
	dir->parg = 1;
	for (unsigned int i = 0; i < trace_nr_events; i++) {
		const char *sys = trace_events[i].system;
		struct inode *d;

		if (ramfs_lookup_locked(dir, sys, strlen(sys)) || !trace_event_by_id(trace_events[i].id))
			continue;
		d = pseudo_mkdir_locked(dir, sys, 0750, &sys_dir_ops, (long)i + 1);
		if (d) {
			ctl_file_locked(d, "enable", 0640, &ctl_ops, "0\n");
			pseudo_file_locked(d, "filter", 0640, &sys_filter_ops, (long)i);
		}
	}
}

static const struct pseudo_ops events_dir_ops = { .refresh = events_dir_refresh };

/* ---- uprobe_events: definitions (trace_uprobe.c create_trace_uprobe) ---- */


/* "[GRP/]EVENT" after the command letter's ':' into group and name (default group: dflt). */
static int split_name(const char *s, char *group, char *name, size_t size, const char *dflt)
{
	const char *slash = strchr(s, '/');

	if (slash) {
		if ((size_t)(slash - s) >= size || strlen(slash + 1) >= size)
			return -EINVAL;
		memcpy(group, s, (size_t)(slash - s));
		group[slash - s] = 0;
		s = slash + 1;
	} else {
		ksnprintf(group, size, "%s", dflt);
	}
	if (strlen(s) >= size)
		return -EINVAL;
	ksnprintf(name, size, "%s", s);
	return probe_name_ok(group) && probe_name_ok(name) ? 0 : -EINVAL;
}

/* events/GROUP/NAME for a new event (GROUP made when missing). */
static void probe_dirs_add(const char *group, const char *name, uint16_t id)
{
	struct ramfs_dirent *de;
	struct inode *g, *d;

	fs_mutex_lock(&vfs_lock);
	if (!events_root)
		goto out;
	events_dir_refresh(events_root, NULL, 0);
	de = ramfs_lookup_locked(events_root, group, strlen(group));
	g = de ? de->inode : pseudo_mkdir_locked(events_root, group, 0750, NULL, 0);
	if (!g)
		goto out;
	if (!de) {
		ctl_file_locked(g, "enable", 0640, &ctl_ops, "0\n");
		ctl_file_locked(g, "filter", 0640, &ctl_ops, "none\n");
	} else if (g->pseudo && g->pseudo->refresh) {
		g->pseudo->refresh(g, NULL, 0); /* a static system's events first */
	}
	d = pseudo_mkdir_locked(g, name, 0750, NULL, 0);
	if (d) {
		struct inode *idf;

		ctl_file_locked(d, "enable", 0640, &ctl_ops, "0\n");
		ctl_file_locked(d, "filter", 0640, &ctl_ops, "none\n");
		pseudo_file_locked(d, "format", 0440, &tf_ops, (long)id << 8 | TF_PROBE_FORMAT);
		idf = pseudo_text_locked(d, "id", "%u\n", id);
		if (idf)
			idf->mode = S_IFREG | 0440;
	}
out:
	fs_mutex_unlock(&vfs_lock);
}

/* Take events/GROUP/NAME away, and GROUP with its last probe event. */
static void probe_dirs_del(const char *group, const char *name)
{
	struct ramfs_dirent *gde, *de;

	fs_mutex_lock(&vfs_lock);
	gde = events_root ? ramfs_lookup_locked(events_root, group, strlen(group)) : NULL;
	de = gde ? ramfs_lookup_locked(gde->inode, name, strlen(name)) : NULL;
	if (de)
		pseudo_remove_locked(gde->inode, de);
	if (gde && !gde->inode->pseudo) {
		bool others = false;
		struct list_node *n;

		list_for_each(n, &gde->inode->dirents) {
			struct ramfs_dirent *e = list_entry(n, struct ramfs_dirent, node);

			others |= S_ISDIR(e->inode->mode);
		}
		if (!others)
			pseudo_remove_locked(events_root, gde);
	}
	fs_mutex_unlock(&vfs_lock);
}

static int probe_define(char **argv, int argc)
{
	char group[64], name[64];
	bool ret = argv[0][0] == 'r';
	char *colon = argc < 2 ? NULL : strrchr(argv[1], ':'), *end; /* argv[1] only if given */
	struct inode *ino;
	uint16_t id;
	int err;

	struct probe_arg args[PROBE_ARGS_MAX];
	unsigned int nargs = 0;

	if (!colon || colon == argv[1])
		return -EINVAL;
	err = probe_args_parse(argv + 2, argc - 2, ret, false, args, &nargs);
	if (err)
		return err;
	*colon = 0;
	/* "OFF(REF)": the reference counter's offset last, in parentheses (trace_uprobe_create) */
	char *rctr = strchr(colon + 1, '(');
	uint64_t ref_ctr = 0;

	if (rctr) {
		char *rend = strchr(rctr, ')');

		if (!rend || rend[1])
			return -EINVAL;
		*rctr = *rend = 0;
		ref_ctr = strtoul(rctr + 1, &end, 0);
		if (end == rctr + 1 || *end)
			return -EINVAL;
	}
	uint64_t off = strtoul(colon + 1, &end, 0);

	if (end == colon + 1 || *end)
		return -EINVAL; /* also "%return": not built */
	if (argv[0][1] == ':') {
		err = split_name(argv[0] + 2, group, name, sizeof(name), "uprobes");
		if (err)
			return err;
	} else if (argv[0][1]) {
		return -EINVAL;
	} else {
		/* "p_%s_0x%lx" (a 'p' for return probes too): the file's name up to its first
		 * '.', '-' or '_' */
		const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
		char tail[32];
		size_t n = 0;

		while (base[n] && base[n] != '.' && base[n] != '-' && base[n] != '_' &&
		       n < sizeof(tail) - 1) {
			tail[n] = base[n];
			n++;
		}
		tail[n] = 0;
		ksnprintf(group, sizeof(group), "uprobes");
		ksnprintf(name, sizeof(name), "p_%s_0x%llx", tail, (unsigned long long)off);
	}
	err = vfs_lookup_at(AT_FDCWD, argv[1], true, &ino);
	if (err)
		return err;
	err = S_ISREG(ino->mode) ? 0 : -EINVAL;
	inode_put(ino);
	if (!err)
		err = uprobe_event_add(group, name, argv[1], off, ref_ctr, ret, false, 0, args, nargs,
				       &id);
	if (!err)
		probe_dirs_add(group, name, id);
	return err;
}

/* trace_kprobe_create: "p[:[GRP/]EVENT] SYM[+OFFS]", "r[MAXACTIVE][:[GRP/]EVENT] SYM[+0]". */
static int kprobe_define(char **argv, int argc)
{
	char group[64], name[64], *plus, *end, *cmd = argv[0] + 1;
	bool ret = argv[0][0] == 'r';
	unsigned int maxactive = 0;
	uint64_t off = 0;
	uint16_t id;
	int err;

	struct probe_arg args[PROBE_ARGS_MAX];
	unsigned int nargs = 0;

	if (argc < 2 || strchr(argv[1], ':'))
		return -EINVAL; /* modules, uprobe paths: not built / not a kprobe */
	err = probe_args_parse(argv + 2, argc - 2, ret, true, args, &nargs);
	if (err)
		return err;
	if (ret && *cmd >= '0' && *cmd <= '9') {
		maxactive = (unsigned int)strtoul(cmd, &end, 10);
		if (!maxactive)
			return -EINVAL;
		cmd = end;
	}
	if (*cmd && *cmd != ':')
		return -EINVAL;
	plus = strchr(argv[1], '+');
	if (plus) {
		*plus = 0;
		off = strtoul(plus + 1, &end, 0);
		if (end == plus + 1 || *end)
			return -EINVAL;
	}
	if (!argv[1][0] || (argv[1][0] >= '0' && argv[1][0] <= '9'))
		return -EINVAL; /* addresses: not built */
	if (*cmd == ':') {
		err = split_name(cmd + 1, group, name, sizeof(name), "kprobes");
		if (err)
			return err;
	} else {
		ksnprintf(group, sizeof(group), "kprobes");
		ksnprintf(name, sizeof(name), "%c_%s_%llu", ret ? 'r' : 'p', argv[1],
			  (unsigned long long)off);
		if (!probe_name_ok(name))
			return -EINVAL;
	}
	if (ret && !maxactive) /* register_kretprobe's default */
		maxactive = ksvc_nr_cpus() * 2 > 10 ? ksvc_nr_cpus() * 2 : 10;
	err = kprobe_check(argv[1], off, ret);
	if (!err)
		err = uprobe_event_add(group, name, argv[1], off, 0, ret, true, maxactive, args, nargs,
				       &id);
	if (!err)
		probe_dirs_add(group, name, id);
	return err;
}

static int probe_command(char *line, bool kprobe)
{
	char *argv[PROBE_ARGS_MAX + 3];
	int argc = 0;
	char group[64], name[64];

	for (char *p = line; *p;) {
		if (argc == PROBE_ARGS_MAX + 3)
			return -EINVAL; /* more arguments than are built */
		while (*p == ' ' || *p == '\t')
			*p++ = 0;
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	if (!argc)
		return 0;
	if (argv[0][0] == '-') {
		int err = argv[0][1] == ':' && argc == 1
				  ? split_name(argv[0] + 2, group, name, 64, kprobe ? "kprobes" : "uprobes")
				  : -EINVAL;

		if (!err)
			err = uprobe_event_del(group, name, kprobe);
		if (!err)
			probe_dirs_del(group, name);
		return err;
	}
	if (argv[0][0] != 'p' && argv[0][0] != 'r')
		return -EINVAL;
	return kprobe ? kprobe_define(argv, argc) : probe_define(argv, argc);
}

/* Each line a command (trace_parse_run_command): '#' starts a comment.  parg: the kind. */
static long uprobe_events_store(struct inode *ino, const char *buf, size_t n)
{
	char line[512];

	for (size_t at = 0; at < n;) {
		const char *nl = memchr(buf + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (buf + at)) : n - at;
		int err;

		if (len >= sizeof(line))
			return -EINVAL;
		memcpy(line, buf + at, len);
		line[len] = 0;
		at += len + 1;
		char *hash = strchr(line, '#');

		if (hash)
			*hash = 0;
		err = probe_command(line, ino->parg == TF_KPROBE_EVENTS);
		if (err)
			return err;
	}
	return (long)n;
}

struct probe_names {
	unsigned int n;
	bool kprobe;
	char group[64][64], name[64][64];
};

static void probe_name_one(const struct uprobe_event_info *i, void *arg)
{
	struct probe_names *pn = arg;

	if (pn->n < 64 && i->kprobe == pn->kprobe) {
		memcpy(pn->group[pn->n], i->group, 64);
		memcpy(pn->name[pn->n], i->name, 64);
		pn->n++;
	}
}

/* O_TRUNC: every probe of the file's kind goes (dyn_events_release_all), or EBUSY when one
 * is in use. */
static int uprobe_events_truncate(struct inode *ino)
{
	struct probe_names *pn = kmalloc(sizeof(*pn));
	bool kprobe = ino->parg == TF_KPROBE_EVENTS;
	int err;

	if (!pn)
		return -ENOMEM;
	pn->n = 0;
	pn->kprobe = kprobe;
	uprobe_events_each(probe_name_one, pn);
	err = uprobe_event_clear(kprobe);
	for (unsigned int i = 0; i < pn->n && !err; i++)
		probe_dirs_del(pn->group[i], pn->name[i]);
	kfree(pn);
	return err;
}

static const struct pseudo_ops uprobe_events_ops = {
	.show = tf_show,
	.store = uprobe_events_store,
	.truncate = uprobe_events_truncate,
};

/* ---- the trees ---- */

static struct inode *fs_root_new(uint32_t magic)
{
	struct inode *r = ramfs_inode_new(S_IFDIR | 0700);

	if (!r)
		return NULL;
	r->nlink = 2;
	r->parent = r;
	r->fs_magic = magic;
	return r; /* the creation reference keeps it forever */
}

static void build_tracefs_locked(struct inode *r)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *ev = pseudo_mkdir_locked(r, "events", 0750, &events_dir_ops, 0);

	events_root = ev;
	if (ev) {
		ctl_file_locked(ev, "enable", 0640, &ctl_ops, "0\n");
		pseudo_file_locked(ev, "header_page", 0440, &tf_ops, TF_HEADER_PAGE);
		pseudo_file_locked(ev, "header_event", 0440, &tf_ops, TF_HEADER_EVENT);
	}
	pseudo_file_locked(r, "available_events", 0440, &tf_ops, TF_AVAILABLE_EVENTS);
	ctl_file_locked(r, "available_tracers", 0440, &ctl_ops, "nop\n");
	ctl_file_locked(r, "current_tracer", 0640, &tracer_ops, "nop\n");
	ctl_file_locked(r, "tracing_on", 0640, &ctl_ops, "1\n");
	pseudo_file_locked(r, "trace", 0640, &trace_ops, TF_TRACE);
	struct inode *tp = pseudo_file_locked(r, "trace_pipe", 0440, &tf_ops, TF_TRACE);

	if (tp)
		tp->fops = &trace_pipe_fops;
	ctl_file_locked(r, "saved_cmdlines", 0440, &ctl_ops, "");
	pseudo_file_locked(r, "kprobe_events", 0640, &uprobe_events_ops, TF_KPROBE_EVENTS);
	pseudo_file_locked(r, "kprobe_profile", 0440, &tf_ops, TF_KPROBE_PROFILE);
	pseudo_file_locked(r, "uprobe_events", 0640, &uprobe_events_ops, TF_UPROBE_EVENTS);
	pseudo_file_locked(r, "uprobe_profile", 0440, &tf_ops, TF_UPROBE_PROFILE);
	ctl_file_locked(r, "set_event", 0640, &ctl_ops, "");
	ftrace_files_locked(r);
}

static struct inode *sys_kernel_dir_locked(struct inode *sysdir, const char *name)
{
	fs_mutex_assert_held(&vfs_lock);
	struct ramfs_dirent *de = ramfs_lookup_locked(sysdir, "kernel", 6);
	struct inode *k = de ? de->inode : pseudo_mkdir_locked(sysdir, "kernel", 0755, NULL, 0);

	if (!k)
		return NULL;
	de = ramfs_lookup_locked(k, name, strlen(name));
	return de ? de->inode : pseudo_mkdir_locked(k, name, 0700, NULL, 0);
}

void tracefs_init(struct inode *sysdir)
{
	struct inode *t, *d, *dt;

	waitq_init(&trace_pipe_wq);
	bpf_trace_set_waitq(&trace_pipe_wq);
	fs_mutex_lock(&vfs_lock);
	tracefs_root = fs_root_new(TRACEFS_MAGIC);
	debugfs_root = fs_root_new(DEBUGFS_MAGIC);
	if (tracefs_root)
		build_tracefs_locked(tracefs_root);
	if (debugfs_root && tracefs_root) {
		dt = pseudo_mkdir_locked(debugfs_root, "tracing", 0700, NULL, 0);
		if (dt) {
			dt->mounted = tracefs_root; /* tracefs's automount in debugfs */
			inode_get(dt);
		}
	}
	t = sys_kernel_dir_locked(sysdir, "tracing");
	d = sys_kernel_dir_locked(sysdir, "debug");
	if (t && tracefs_root)
		mount_locked(t, tracefs_root, "tracefs", "none", "/sys/kernel/tracing");
	if (d && debugfs_root)
		mount_locked(d, debugfs_root, "debugfs", "none", "/sys/kernel/debug");
	fs_mutex_unlock(&vfs_lock);
}

/* ---- mount(2), umount2(2) ---- */

/* A user string into buf (at most size with the NUL): 0, -EFAULT; longer is cut. */
static int user_string(uint64_t u, char *buf, size_t size)
{
	long n = ksvc_strncpy_from_user(buf, (const void *)u, size);

	if (n == -ENAMETOOLONG) {
		buf[size - 1] = 0;
		return 0;
	}
	return n < 0 ? (int)n : 0;
}

static long sys_mount(uint64_t usrc, uint64_t utarget, uint64_t utype, uint64_t flags,
		      uint64_t udata)
{
	char type[32] = "", src[32] = "none", data[64];
	char *kpath;
	struct inode *point, *root = NULL;
	int err;

	if (utype && (err = user_string(utype, type, sizeof(type))))
		return err;
	if (usrc && (err = user_string(usrc, src, sizeof(src))))
		return err;
	if (udata && (err = user_string(udata, data, sizeof(data))))
		return err;
	err = vfs_path_from_user((const void *)utarget, &kpath);
	if (err)
		return err;
	err = vfs_lookup_at(AT_FDCWD, kpath, true, &point);
	if (err)
		goto out;
	if (!S_ISDIR(point->mode)) {
		err = -ENOTDIR;
		goto out_put;
	}
	if (flags & (MS_REMOUNT | MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE |
		     MS_UNBINDABLE)) {
		err = -EINVAL;
		goto out_put;
	}
	if (!utype) {
		err = -EINVAL; /* do_new_mount: no type */
		goto out_put;
	}
	fs_mutex_lock(&vfs_lock);
	if (!strcmp(type, "tracefs"))
		root = tracefs_root;
	else if (!strcmp(type, "debugfs"))
		root = debugfs_root;
	if (root) {
		err = mount_locked(point, root, root == tracefs_root ? "tracefs" : "debugfs", src,
				   kpath);
	} else if (!strcmp(type, "bpf")) {
		/* bpffs.c: every mount a new tree */
		root = bpffs_root_new();
		err = root ? mount_locked(point, root, "bpf", src, kpath) : -ENOMEM;
		if (err && root) {
			root->nlink = 0;
			inode_put_locked(root);
		}
	} else if (!strcmp(type, "cgroup2")) {
		/* cgroupfs.c: every mount shows the one hierarchy */
		root = cgroupfs_root_locked();
		err = root ? mount_locked(point, root, "cgroup2", src, kpath) : -ENOMEM;
	} else if (!strcmp(type, "proc") || !strcmp(type, "sysfs")) {
		/* already mounted at /proc and /sys: there again is fine, elsewhere not here */
		err = point->fs_magic == (type[0] == 'p' ? PROC_SUPER_MAGIC : SYSFS_MAGIC) &&
		      point->parent == vfs_root() ? 0 : -EBUSY;
	} else {
		err = -ENODEV;
	}
	fs_mutex_unlock(&vfs_lock);
out_put:
	inode_put(point);
out:
	kfree(kpath);
	return err;
}
SYSCALL(__NR_mount, sys_mount);

/* umount2 flags (Linux include/linux/fs.h; the uapi headers do not carry them) */
#define UMOUNT_FLAGS (1u /* MNT_FORCE */ | 2u /* MNT_DETACH */ | 4u /* MNT_EXPIRE */ |        \
		      8u /* UMOUNT_NOFOLLOW */)
#define UMOUNT_NOFOLLOW_FLAG 8u

static long sys_umount2(uint64_t utarget, uint64_t flags)
{
	char *kpath;
	struct inode *root, *point = NULL;
	int err;

	if (flags & ~(uint64_t)UMOUNT_FLAGS)
		return -EINVAL;
	err = vfs_path_from_user((const void *)utarget, &kpath);
	if (err)
		return err;
	err = vfs_lookup_at(AT_FDCWD, kpath, !(flags & UMOUNT_NOFOLLOW_FLAG), &root);
	kfree(kpath);
	if (err)
		return err;
	fs_mutex_lock(&vfs_lock);
	err = -EINVAL; /* not a mount point */
	for (unsigned int i = nr_mounts; i-- > 0;) {
		if (mounts[i].root != root)
			continue;
		point = mounts[i].point;
		point->mounted = NULL;
		if (root->fs_magic == BPF_FS_MAGIC)
			bpffs_kill_locked(root); /* each bpffs mount is its own tree */
		memmove(&mounts[i], &mounts[i + 1], (nr_mounts - i - 1) * sizeof(mounts[0]));
		nr_mounts--;
		err = 0;
		break;
	}
	fs_mutex_unlock(&vfs_lock);
	inode_put(root);
	if (point)
		inode_put(point);
	return err;
}
SYSCALL(__NR_umount2, sys_umount2);
