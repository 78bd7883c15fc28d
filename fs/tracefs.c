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
 *     bpf_trace_printk wrote, consumed as it is read), saved_cmdlines, kprobe_events (empty:
 *     no kprobes), uprobe_events and uprobe_profile (trace_uprobe.c's text interface over
 *     kernel/uprobe_events.c: "p|r[:[GRP/]EVENT] PATH:OFFSET", "-:[GRP/]EVENT", O_TRUNC
 *     clears; each definition gets events/GRP/EVENT/{id,format,enable,filter}).
 * debugfs (DEBUGFS_MAGIC) holds only tracing/, where tracefs shows through as Linux's
 * automount does.  Both are mounted at boot, as Debian's init does, at /sys/kernel/tracing and
 * /sys/kernel/debug ("none" as the source): perf's api/fs finds them by statfs magic and
 * /proc/mounts.  mount(2) mounts tracefs or debugfs on any directory again (a mount point's
 * ->mounted points at the root; the path walk enters it), and proc or sysfs on /proc or /sys
 * (already there: nothing to do but list them); umount2 takes the last mount off a directory.
 *
 * mount(2) of type "bpf" makes a new bpf filesystem (bpffs.c).
 *
 * What it does not do: other filesystem types (ENODEV: the kernel has no block devices, and its
 * one ramfs is the root), mount flags beyond listing ro/rw, remount, bind and move mounts
 * (EINVAL), event enabling into an ftrace ring buffer (enable and filter files accept writes
 * and change nothing: perf's tracepoint events do not use them), a blocking trace_pipe.
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
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/trace.h>
#include <kern/uprobes.h>
#include <bpf/bpf.h>
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
	TF_TRACE_PIPE,
	TF_HEADER_PAGE,
	TF_HEADER_EVENT,
	TF_PROBE_FORMAT, /* parg >> 8: a uprobe event's id */
	TF_UPROBE_EVENTS,
	TF_UPROBE_PROFILE,
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

static void probe_show_one(const struct uprobe_event_info *i, void *arg)
{
	struct probe_show *s = arg;

	switch (s->kind) {
	case TF_UPROBE_EVENTS:
		pb_printf(s->b, "%c:%s/%s %s:0x%016llx\n", i->ret ? 'r' : 'p', i->group, i->name,
			  i->path, (unsigned long long)i->offset);
		break;
	case TF_UPROBE_PROFILE:
		pb_printf(s->b, "  %s %-44s %15llu\n", i->path, i->name,
			  (unsigned long long)i->hits);
		break;
	default:
		if (i->id != s->id)
			break;
		/* trace_uprobe.c uprobe_event_define_fields / set_print_fmt */
		format_head(s->b, i->name, i->id);
		if (i->ret)
			pb_printf(s->b, "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
				  "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
				  "\nprint fmt: \"(%%lx <- %%lx)\", REC->__probe_func, REC->__probe_ret_ip\n");
		else
			pb_printf(s->b, "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
				  "\nprint fmt: \"(%%lx)\", REC->__probe_ip\n");
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
	case TF_TRACE_PIPE: {
		char buf[512];
		size_t n;

		while ((n = bpf_trace_read(buf, sizeof(buf))) > 0)
			pb_putn(b, buf, n);
		break;
	}
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
	ctl_file_locked(d, "filter", 0640, &ctl_ops, "none\n");
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
			ctl_file_locked(d, "filter", 0640, &ctl_ops, "none\n");
		}
	}
}

static const struct pseudo_ops events_dir_ops = { .refresh = events_dir_refresh };

/* ---- uprobe_events: definitions (trace_uprobe.c create_trace_uprobe) ---- */

/* is_good_name: [A-Za-z_][A-Za-z0-9_]* */
static bool good_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "[GRP/]EVENT" after the command letter's ':' into group and name (default group uprobes). */
static int split_name(const char *s, char *group, char *name, size_t size)
{
	const char *slash = strchr(s, '/');

	if (slash) {
		if ((size_t)(slash - s) >= size || strlen(slash + 1) >= size)
			return -EINVAL;
		memcpy(group, s, (size_t)(slash - s));
		group[slash - s] = 0;
		s = slash + 1;
	} else {
		ksnprintf(group, size, "uprobes");
	}
	if (strlen(s) >= size)
		return -EINVAL;
	ksnprintf(name, size, "%s", s);
	return good_name(group) && good_name(name) ? 0 : -EINVAL;
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

	if (!colon || colon == argv[1])
		return -EINVAL;
	if (argc > 2)
		return -EINVAL; /* fetch arguments: not built */
	*colon = 0;
	uint64_t off = strtoul(colon + 1, &end, 0);

	if (end == colon + 1 || *end)
		return -EINVAL; /* also "(ref_ctr)" and "%return": not built */
	if (argv[0][1] == ':') {
		err = split_name(argv[0] + 2, group, name, sizeof(name));
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
		err = uprobe_event_add(group, name, argv[1], off, ret, &id);
	if (!err)
		probe_dirs_add(group, name, id);
	return err;
}

static int probe_command(char *line)
{
	char *argv[8];
	int argc = 0;
	char group[64], name[64];

	for (char *p = line; *p && argc < 8;) {
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
		int err = argv[0][1] == ':' && argc == 1 ? split_name(argv[0] + 2, group, name, 64)
							 : -EINVAL;

		if (!err)
			err = uprobe_event_del(group, name);
		if (!err)
			probe_dirs_del(group, name);
		return err;
	}
	if (argv[0][0] != 'p' && argv[0][0] != 'r')
		return -EINVAL;
	return probe_define(argv, argc);
}

/* Each line a command (trace_parse_run_command): '#' starts a comment. */
static long uprobe_events_store(struct inode *ino, const char *buf, size_t n)
{
	char line[512];

	(void)ino;
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
		err = probe_command(line);
		if (err)
			return err;
	}
	return (long)n;
}

struct probe_names {
	unsigned int n;
	char group[64][64], name[64][64];
};

static void probe_name_one(const struct uprobe_event_info *i, void *arg)
{
	struct probe_names *pn = arg;

	if (pn->n < 64) {
		memcpy(pn->group[pn->n], i->group, 64);
		memcpy(pn->name[pn->n], i->name, 64);
		pn->n++;
	}
}

/* O_TRUNC: every probe goes (dyn_events_release_all), or EBUSY when one is in use. */
static int uprobe_events_truncate(struct inode *ino)
{
	struct probe_names *pn = kmalloc(sizeof(*pn));
	int err;

	(void)ino;
	if (!pn)
		return -ENOMEM;
	uprobe_events_each(probe_name_one, pn);
	err = uprobe_event_clear();
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
	pseudo_file_locked(r, "trace", 0640, &tf_ops, TF_TRACE);
	pseudo_file_locked(r, "trace_pipe", 0440, &tf_ops, TF_TRACE_PIPE);
	ctl_file_locked(r, "saved_cmdlines", 0440, &ctl_ops, "");
	ctl_file_locked(r, "kprobe_events", 0640, &ctl_ops, "");
	pseudo_file_locked(r, "uprobe_events", 0640, &uprobe_events_ops, TF_UPROBE_EVENTS);
	pseudo_file_locked(r, "uprobe_profile", 0440, &tf_ops, TF_UPROBE_PROFILE);
	ctl_file_locked(r, "set_event", 0640, &ctl_ops, "");
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
