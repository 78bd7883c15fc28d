/*
 * cgroup.c - the cgroup v2 hierarchy: a tree of cgroups with reference counts, each process in
 * one of them (its threads with it), what cgroup.procs, cgroup.events and cgroup.stat tell
 * about them.  fs/cgroupfs.c is the filesystem over it; bpf/ asks it through the seam which
 * cgroup the current task is in.
 *
 * What it does: Linux 6.1's cgroup core without controllers.  A child starts in its parent's
 * cgroup; a process moves with a cgroup.procs write (threads together); once its last thread
 * exits it no longer populates the cgroup (Linux's cgroup_exit), though /proc/PID/cgroup
 * keeps naming it until the process is freed.  rmdir is refused (EBUSY) while a live process
 * or a live child cgroup is in it; a removed cgroup is "dying" (cgroup.stat) until its last
 * reference goes.  cgroup.max.depth / max.descendants limit mkdir (EAGAIN), as Linux's
 * cgroup_check_hierarchy_limits.
 *
 * Memory: BPF programs read the current task's cgroup (and walk its parents) from any
 * context without a lock, while another CPU may move that task and drop the last reference
 * of its old cgroup.  Linux frees cgroups after an RCU grace period; this kernel has none,
 * so a cgroup's memory is type-stable: a freed cgroup goes to a pool that later cgroups come
 * from and never back to kmalloc.  A racing reader may see a recycled cgroup (a stale answer,
 * as Linux's reader may see the old cgroup), never freed memory.
 *
 * cgroup.kill sends SIGKILL to every live process at or below a cgroup.
 *
 * What it does not do: controllers (cgroup.controllers is empty), threaded cgroups,
 * cgroup.freeze, namespaces, CLONE_INTO_CGROUP (no clone3 here).
 */
#include <kern/cgroup.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include <asm/signal.h>

static struct spinlock cgroup_lock = SPINLOCK_INIT;
static char root_name[1];
static struct cgroup root_cgroup = {
	.refs = 1, /* never dropped */
	.id = CGROUP_ROOT_ID,
	.name = root_name,
	.max_depth = CGROUP_MAX_UNLIMITED,
	.max_descendants = CGROUP_MAX_UNLIMITED,
};
static struct cgroup *free_pool; /* (L) type-stable: see the file comment */

struct cgroup *cgroup_root(void)
{
	return &root_cgroup;
}

void cgroup_get(struct cgroup *cg)
{
	atomic_fetch_add(&cg->refs, 1);
}

/* The last reference of a removed cgroup: it stops being dying, its parent loses a
 * reference, the memory goes to the pool. */
void cgroup_put(struct cgroup *cg)
{
	while (cg && atomic_fetch_sub(&cg->refs, 1) == 1) {
		struct cgroup *parent = cg->parent;
		unsigned long f = spin_lock_irqsave(&cgroup_lock);
		char *name = cg->name;

		for (struct cgroup *a = parent; a; a = a->parent)
			a->nr_dying_descendants--;
		cg->name = NULL;
		cg->free_next = free_pool;
		free_pool = cg;
		spin_unlock_irqrestore(&cgroup_lock, f);
		kfree(name);
		cg = parent;
	}
}

int cgroup_get_live(struct cgroup *cg)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int err = cg->dead ? -ENOENT : 0;

	if (!err)
		cgroup_get(cg);
	spin_unlock_irqrestore(&cgroup_lock, f);
	return err;
}

static bool populated_locked(const struct cgroup *cg)
{
	return cg->nr_procs > 0 || cg->nr_populated_children > 0;
}

/* cg's own process count changes by delta: carry populated changes up the tree.  The
 * number of cgroups whose populated state changed, from cg up (cgroup.events). */
static int procs_add_locked(struct cgroup *cg, int delta)
{
	spin_assert_held(&cgroup_lock);
	bool was = populated_locked(cg);
	int flipped = 0;

	cg->nr_procs += delta;
	while (was != populated_locked(cg)) {
		struct cgroup *p = cg->parent;

		flipped++;
		if (!p)
			break;
		was = populated_locked(p);
		p->nr_populated_children += populated_locked(cg) ? 1 : -1;
		cg = p;
	}
	return flipped;
}

/* Tell the cgroup.events watchers of levels cgroups from cg up (no lock held). */
static void notify_populated(struct cgroup *cg, int levels)
{
	for (; cg && levels > 0; levels--, cg = cg->parent)
		cgroupfs_events_changed(cg);
}

int cgroup_create(struct cgroup *parent, const char *name, size_t len, uint64_t id,
		  struct cgroup **out)
{
	char *nm = kmalloc(len + 1);
	struct cgroup *cg = NULL;
	unsigned long f;
	int err = 0;

	if (!nm)
		return -ENOMEM;
	memcpy(nm, name, len);
	nm[len] = 0;
	f = spin_lock_irqsave(&cgroup_lock);
	if (parent->dead)
		err = -ENOENT;
	for (struct cgroup *a = parent; a && !err; a = a->parent) {
		if (parent->level + 1 - a->level > a->max_depth ||
		    a->nr_descendants >= a->max_descendants)
			err = -EAGAIN;
	}
	if (!err && free_pool) {
		cg = free_pool;
		free_pool = cg->free_next;
	}
	spin_unlock_irqrestore(&cgroup_lock, f);
	if (!err && !cg) {
		cg = kmalloc(sizeof(*cg));
		if (!cg)
			err = -ENOMEM;
	}
	if (err) {
		kfree(nm);
		return err;
	}
	/* a pooled cgroup may still be read by a racing BPF program: each field is written
	 * whole, and parent stays a cgroup (or NULL) throughout */
	WRITE_ONCE(cg->parent, parent);
	cg->id = id;
	cg->level = parent->level + 1;
	cg->name = nm;
	cg->nr_procs = cg->nr_populated_children = cg->nr_children = 0;
	cg->nr_descendants = cg->nr_dying_descendants = 0;
	cg->max_depth = cg->max_descendants = CGROUP_MAX_UNLIMITED;
	cg->dead = false;
	cg->free_next = NULL;
	atomic_store(&cg->refs, 1);
	cgroup_get(parent);
	f = spin_lock_irqsave(&cgroup_lock);
	if (parent->dead) {
		/* rmdir of the parent won the race: it had no children when it checked */
		spin_unlock_irqrestore(&cgroup_lock, f);
		cg->dead = true;
		cgroup_put(cg);
		return -ENOENT;
	}
	parent->nr_children++;
	for (struct cgroup *a = parent; a; a = a->parent)
		a->nr_descendants++;
	spin_unlock_irqrestore(&cgroup_lock, f);
	*out = cg;
	return 0;
}

int cgroup_remove(struct cgroup *cg)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int err = 0;

	if (!cg->parent || populated_locked(cg) || cg->nr_children)
		err = -EBUSY;
	else if (cg->dead)
		err = -ENOENT;
	if (!err) {
		cg->dead = true;
		cg->parent->nr_children--;
		for (struct cgroup *a = cg->parent; a; a = a->parent) {
			a->nr_descendants--;
			a->nr_dying_descendants++;
		}
	}
	spin_unlock_irqrestore(&cgroup_lock, f);
	return err;
}

/* ---- processes ---- */

void cgroup_fork_locked(struct proc *child, struct proc *parent)
{
	spin_assert_held(&proc_tree_lock);
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	struct cgroup *cg = parent->cgroup ? parent->cgroup : &root_cgroup;

	cgroup_get(cg);
	child->cgroup = cg;
	procs_add_locked(cg, 1);
	spin_unlock_irqrestore(&cgroup_lock, f);
}

void cgroup_exit_locked(struct proc *p, struct cgroup **flipped, int *levels)
{
	spin_assert_held(&proc_tree_lock);
	unsigned long f = spin_lock_irqsave(&cgroup_lock);

	*flipped = NULL;
	*levels = 0;
	if (p->cgroup && !p->cgroup_exited) {
		p->cgroup_exited = true;
		*levels = procs_add_locked(p->cgroup, -1);
		if (*levels) {
			*flipped = p->cgroup;
			cgroup_get(p->cgroup); /* p may be reaped before the notice */
		}
	}
	spin_unlock_irqrestore(&cgroup_lock, f);
}

void cgroup_notify_flipped(struct cgroup *flipped, int levels)
{
	notify_populated(flipped, levels);
	cgroup_put(flipped);
}

void cgroup_proc_free(struct proc *p)
{
	cgroup_put(p->cgroup);
	p->cgroup = NULL;
}

/* Move p into dst (proc_tree_lock held): the cgroup it left, whose reference the caller
 * drops, or NULL; the populated changes to report, from old (*old_levels) and from dst
 * (*dst_levels) up. */
static int move_locked(struct proc *p, struct cgroup *dst, struct cgroup **old, int *old_levels,
		       int *dst_levels)
{
	spin_assert_held(&proc_tree_lock);
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int err = 0;

	*old = NULL;
	if (dst->dead) {
		err = -ENODEV;
	} else if (p->cgroup && !p->cgroup_exited && p->cgroup != dst && !p->exiting) {
		*old_levels = procs_add_locked(p->cgroup, -1);
		*old = p->cgroup;
		cgroup_get(dst);
		WRITE_ONCE(p->cgroup, dst);
		*dst_levels = procs_add_locked(dst, 1);
	}
	spin_unlock_irqrestore(&cgroup_lock, f);
	return err;
}

int cgroup_attach_proc(struct cgroup *dst, int pid)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct proc *p = NULL;
	struct cgroup *old = NULL;
	int err = -ESRCH, old_levels = 0, dst_levels = 0;

	if (pid == 0) {
		p = current_proc();
	} else {
		struct uthread *ut = proc_find_thread_locked(pid);

		p = ut ? ut->task.proc : NULL; /* a tid moves its whole process, as Linux */
	}
	if (p && !p->zombie)
		err = move_locked(p, dst, &old, &old_levels, &dst_levels);
	else if (p)
		err = dst->dead ? -ENODEV : 0; /* exited: nothing to move */
	spin_unlock_irqrestore(&proc_tree_lock, f);
	notify_populated(old, old_levels); /* old: our reference; dst: the caller's file's */
	notify_populated(dst, dst_levels);
	cgroup_put(old);
	return err;
}

int cgroup_attach_thread(struct cgroup *dst, int tid)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = tid ? proc_find_thread_locked(tid) : current_uthread();
	struct proc *p = ut ? ut->task.proc : NULL;
	int err = -ESRCH;

	if (p) {
		unsigned long g = spin_lock_irqsave(&cgroup_lock);

		if (dst->dead)
			err = -ENODEV;
		else
			err = p->cgroup == dst || p->cgroup_exited ? 0 : -EOPNOTSUPP;
		spin_unlock_irqrestore(&cgroup_lock, g);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

/* ---- lookups ---- */

struct cgroup *cgroup_of_task(const struct task *t)
{
	const struct proc *p = t->proc;
	struct cgroup *cg = p ? READ_ONCE(p->cgroup) : NULL;

	return cg ? cg : &root_cgroup;
}

struct cgroup *cgroup_ancestor(struct cgroup *cg, int level)
{
	int l = READ_ONCE(cg->level);

	if (level < 0 || level > l)
		return NULL;
	/* bounded by the starting level: a recycled cgroup (see above) cannot loop us */
	for (; l > level && cg; l--)
		cg = READ_ONCE(cg->parent);
	return cg;
}

bool cgroup_is_descendant(struct cgroup *cg, struct cgroup *anc)
{
	return cgroup_ancestor(cg, READ_ONCE(anc->level)) == anc;
}

static int path_locked(struct cgroup *cg, char *buf, size_t size)
{
	spin_assert_held(&cgroup_lock);
	size_t at = size;

	if (size < 2)
		return -ENAMETOOLONG;
	buf[--at] = 0;
	for (; cg && cg->parent; cg = cg->parent) {
		size_t n = cg->name ? strlen(cg->name) : 0;

		if (at < n + 1)
			return -ENAMETOOLONG;
		at -= n;
		memcpy(buf + at, cg->name, n);
		buf[--at] = '/';
	}
	if (at == size - 1)
		buf[--at] = '/';
	memmove(buf, buf + at, size - at);
	return (int)(size - at - 1);
}

int cgroup_path(struct cgroup *cg, char *buf, size_t size)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int r = path_locked(cg, buf, size);

	spin_unlock_irqrestore(&cgroup_lock, f);
	return r;
}

int cgroup_path_of(int id, bool tid, char *buf, size_t size)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	struct uthread *ut = proc_find_thread_locked(id);
	struct proc *p = tid ? (ut ? ut->task.proc : NULL) : proc_find_locked(id);
	int r = -ESRCH;

	if (!p && ut)
		p = ut->task.proc;
	if (p) {
		unsigned long g = spin_lock_irqsave(&cgroup_lock);

		r = path_locked(p->cgroup ? p->cgroup : &root_cgroup, buf, size);
		spin_unlock_irqrestore(&cgroup_lock, g);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return r;
}

int cgroup_list(struct cgroup *cg, bool threads, int *ids, int max)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	int cnt = 0;

	for (struct proc *p = proc_first_locked(); p && cnt < max; p = proc_next_locked(p)) {
		if (p->zombie || p->cgroup_exited || (p->cgroup ? p->cgroup : &root_cgroup) != cg)
			continue;
		if (threads)
			cnt += proc_live_tids_locked(p, ids + cnt, max - cnt);
		else
			ids[cnt++] = p->tgid;
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return cnt;
}

int cgroup_kill(struct cgroup *cg)
{
	unsigned long f = spin_lock_irqsave(&proc_tree_lock);
	int err = READ_ONCE(cg->dead) ? -ENODEV : 0;

	/* every live process at or below cg (their cgroups only change under proc_tree_lock) */
	for (struct proc *p = proc_first_locked(); p && !err; p = proc_next_locked(p)) {
		if (!p->zombie && !p->cgroup_exited &&
		    cgroup_is_descendant(p->cgroup ? p->cgroup : &root_cgroup, cg))
			signal_send_proc(p, SIGKILL, NULL);
	}
	spin_unlock_irqrestore(&proc_tree_lock, f);
	return err;
}

void cgroup_stat(struct cgroup *cg, struct cgroup_stat *st)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);

	st->populated = populated_locked(cg);
	st->dead = cg->dead;
	st->nr_descendants = cg->nr_descendants;
	st->nr_dying_descendants = cg->nr_dying_descendants;
	st->max_depth = cg->max_depth;
	st->max_descendants = cg->max_descendants;
	spin_unlock_irqrestore(&cgroup_lock, f);
}

int cgroup_set_max(struct cgroup *cg, bool depth, int value)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int err = cg->dead ? -ENODEV : 0;

	if (!err && depth)
		cg->max_depth = value;
	else if (!err)
		cg->max_descendants = value;
	spin_unlock_irqrestore(&cgroup_lock, f);
	return err;
}

/* ---- the seam for bpf/ (include/kern/ksvc.h) ---- */

void ksvc_cgroup_put(struct cgroup *cg)
{
	cgroup_put(cg);
}

bool ksvc_cgroup_current_under(struct cgroup *cg)
{
	return cgroup_is_descendant(cgroup_of_task(current_task()), cg);
}

uint64_t ksvc_cgroup_current_id(void)
{
	return READ_ONCE(cgroup_of_task(current_task())->id);
}

uint64_t ksvc_cgroup_current_ancestor_id(int level)
{
	struct cgroup *a = cgroup_ancestor(cgroup_of_task(current_task()), level);

	return a ? READ_ONCE(a->id) : 0;
}

/*
 * The perf_event controller.  Linux enables it implicitly on cgroup2, but a cgroup gets
 * perf_event state of its own (a css) only when its parent's subtree_ss_mask holds the
 * controller, and Linux computes that mask (with the implicit controllers in it) only when a
 * controller is enabled or disabled in the parent's cgroup.subtree_control
 * (cgroup_apply_control); a fresh hierarchy has none below the root.  No controller exists
 * here, so no such write can succeed, and every cgroup's perf_event state stays the root's,
 * as on a Linux where nothing was written to cgroup.subtree_control (refvm: PERF_SAMPLE_CGROUP
 * says 1 in a child cgroup, no cgroup-switches are counted between tasks of the root and a
 * child, perf_event_open with a child cgroup's fd is ENOENT; after "+memory" / "-memory" in the
 * root's subtree_control they become the child's).
 */
static bool has_perf_state(const struct cgroup *cg)
{
	return !cg->parent; /* the root: see above */
}

static struct cgroup *perf_cgroup_of(struct cgroup *cg)
{
	while (!has_perf_state(cg))
		cg = READ_ONCE(cg->parent);
	return cg;
}

int cgroup_perf_get(struct cgroup *cg)
{
	unsigned long f = spin_lock_irqsave(&cgroup_lock);
	int err = cg->dead || !has_perf_state(cg) ? -ENOENT : 0;

	if (!err)
		cgroup_get(cg);
	spin_unlock_irqrestore(&cgroup_lock, f);
	return err;
}

uint64_t ksvc_cgroup_current_perf_id(void)
{
	return READ_ONCE(perf_cgroup_of(cgroup_of_task(current_task()))->id);
}
