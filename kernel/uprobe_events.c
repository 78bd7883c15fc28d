/*
 * uprobe_events.c - uprobe trace events: the probes tracefs's uprobe_events file defines
 * ("p:probe_hot/burn /bin/hot:0x6d4"), each a tracepoint with a dynamic id that perf opens
 * as PERF_TYPE_TRACEPOINT (perf probe -x, then perf record -e probe_hot:burn).
 *
 * Linux 6.1 kernel/trace/trace_uprobe.c is the reference: an event is only a definition
 * until a perf event opens it; the first one registers the uprobe (so a bad offset is the
 * perf_event_open's EINVAL, as there), the last close unregisters it.  A hit writes the
 * event's record, struct uprobe_trace_entry_head: the common header with common_type = the
 * id, then __probe_ip (or __probe_func and __probe_ret_ip for a return probe), and counts in
 * uprobe_profile.  Ids are handed out from 1206, the first dynamic id of Debian's 6.1 arm64
 * kernel (its static events end at 1205), and not reused.  Deleting an event a perf event has
 * open is EBUSY.
 * kprobe_events events (trace_kprobe.c) share the table and the ids: a kernel symbol and
 * offset, registered with ksvc_kprobe_register when the first perf event opens them; their
 * records are the same layout with the kernel's registers (IRQs off in common_flags).
 * Not built: fetch arguments, %return and ref_ctr suffixes (tracefs rejects them with
 * EINVAL), BPF programs on these events, the ftrace ring buffer ("enable" changes nothing).
 *
 * Locks: uev_mutex (sleeping) covers the table's definitions and use counts; uev_lock (spin)
 * the probe pointers and hit counts the BRK path reads.  uev_mutex is taken before
 * uprobe_mutex (kernel/uprobes.c).
 */
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/string.h>
#include <kern/trace.h>
#include <kern/uprobes.h>
#include <kern/vm.h>
#include <perf/perf.h>

#define UEV_MAX 64
#define UEV_FIRST_ID 1206

struct uprobe_event {
	struct uprobe_event_info info; /* info.id 0: a free slot */
	char *path;
	unsigned int users;	/* perf events open on it (uev_mutex) */
	struct ksvc_uprobe *u;	/* registered while users (uev_lock to read) */
	struct ksvc_kprobe *k;	/* a kprobe event's, likewise */
};

static struct uprobe_event uevs[UEV_MAX];
static struct kmutex uev_mutex;
static struct spinlock uev_lock = SPINLOCK_INIT;
static uint16_t uev_next_id = UEV_FIRST_ID; /* (uev_mutex) */
static bool uev_ready;

static void uev_init_once(void)
{
	if (!__atomic_exchange_n(&uev_ready, true, __ATOMIC_ACQ_REL))
		kmutex_init(&uev_mutex);
}

static struct uprobe_event *find_locked(const char *group, const char *name)
{
	for (unsigned int i = 0; i < UEV_MAX; i++)
		if (uevs[i].info.id && !strcmp(uevs[i].info.group, group) &&
		    !strcmp(uevs[i].info.name, name))
			return &uevs[i];
	return NULL;
}


static struct uprobe_event *by_id_locked(uint64_t id)
{
	for (unsigned int i = 0; i < UEV_MAX; i++)
		if (id && uevs[i].info.id == id)
			return &uevs[i];
	return NULL;
}

int uprobe_event_add(const char *group, const char *name, const char *path, uint64_t offset,
		     bool ret, bool kprobe, unsigned int maxactive, uint16_t *id)
{
	struct uprobe_event *e = NULL;
	size_t plen = strlen(path) + 1;
	char *p = kmalloc(plen);
	int err = 0;

	if (!p)
		return -ENOMEM;
	memcpy(p, path, plen);
	uev_init_once();
	kmutex_lock(&uev_mutex);
	if (find_locked(group, name))
		err = -EEXIST;
	for (unsigned int i = 0; i < UEV_MAX && !err && !e; i++)
		if (!uevs[i].info.id)
			e = &uevs[i];
	if (!err && (!e || uev_next_id >= TRACE_MAX_ID))
		err = -ENOSPC;
	if (err) {
		kmutex_unlock(&uev_mutex);
		kfree(p);
		return err;
	}
	*e = (struct uprobe_event){ .path = p };
	ksnprintf(e->info.group, sizeof(e->info.group), "%s", group);
	ksnprintf(e->info.name, sizeof(e->info.name), "%s", name);
	e->info.path = p;
	e->info.offset = offset;
	e->info.ret = ret;
	e->info.kprobe = kprobe;
	e->info.maxactive = maxactive;
	e->info.id = uev_next_id++;
	*id = e->info.id;
	kmutex_unlock(&uev_mutex);
	return 0;
}

static void release_locked(struct uprobe_event *e)
{
	kfree(e->path);
	*e = (struct uprobe_event){ 0 };
}

int uprobe_event_del(const char *group, const char *name, bool kprobe)
{
	int err = 0;

	uev_init_once();
	kmutex_lock(&uev_mutex);
	struct uprobe_event *e = find_locked(group, name);

	if (!e || e->info.kprobe != kprobe)
		err = -ENOENT;
	else if (e->users)
		err = -EBUSY;
	else
		release_locked(e);
	kmutex_unlock(&uev_mutex);
	return err;
}

int uprobe_event_clear(bool kprobe)
{
	int err = 0;

	uev_init_once();
	kmutex_lock(&uev_mutex);
	for (unsigned int i = 0; i < UEV_MAX; i++)
		if (uevs[i].info.id && uevs[i].info.kprobe == kprobe && uevs[i].users)
			err = -EBUSY;
	for (unsigned int i = 0; i < UEV_MAX && !err; i++)
		if (uevs[i].info.id && uevs[i].info.kprobe == kprobe)
			release_locked(&uevs[i]);
	kmutex_unlock(&uev_mutex);
	return err;
}

void uprobe_events_each(void (*fn)(const struct uprobe_event_info *info, void *arg), void *arg)
{
	uev_init_once();
	kmutex_lock(&uev_mutex);
	for (unsigned int i = 0; i < UEV_MAX; i++) {
		if (!uevs[i].info.id)
			continue;
		unsigned long f = spin_lock_irqsave(&uev_lock); /* hits change under it */
		struct uprobe_event_info copy = uevs[i].info;

		spin_unlock_irqrestore(&uev_lock, f);
		fn(&copy, arg);
	}
	kmutex_unlock(&uev_mutex);
}

bool uprobe_event_exists(uint64_t id)
{
	uev_init_once();
	kmutex_lock(&uev_mutex);
	bool found = by_id_locked(id) != NULL;

	kmutex_unlock(&uev_mutex);
	return found;
}

int uprobe_event_open(uint64_t id)
{
	int err = 0;

	uev_init_once();
	kmutex_lock(&uev_mutex);
	struct uprobe_event *e = by_id_locked(id);

	if (!e) {
		err = -EINVAL;
	} else if (!e->users) {
		struct ksvc_uprobe *u = NULL;
		struct ksvc_kprobe *k = NULL;

		if (e->info.kprobe)
			err = ksvc_kprobe_register(e->path, e->info.offset, 0, e->info.ret, &k);
		else
			err = ksvc_uprobe_register(e->path, e->info.offset, e->info.ret, &u);
		if (!err) {
			unsigned long f = spin_lock_irqsave(&uev_lock);

			e->u = u;
			e->k = k;
			spin_unlock_irqrestore(&uev_lock, f);
		}
	}
	if (!err)
		e->users++;
	kmutex_unlock(&uev_mutex);
	return err;
}

void uprobe_event_close(uint64_t id)
{
	kmutex_lock(&uev_mutex);
	struct uprobe_event *e = by_id_locked(id);

	if (e && e->users && !--e->users) {
		unsigned long f = spin_lock_irqsave(&uev_lock);
		struct ksvc_uprobe *u = e->u;
		struct ksvc_kprobe *k = e->k;

		e->u = NULL;
		e->k = NULL;
		spin_unlock_irqrestore(&uev_lock, f);
		if (k)
			ksvc_kprobe_unregister(k, e->info.ret);
		else
			ksvc_uprobe_unregister(u, e->info.ret);
	}
	kmutex_unlock(&uev_mutex);
}

/* The records of the events on probe (a uprobe's or a kprobe's): Linux's
 * {u,k}probe_trace_entry_head, the probe's address or the function and return address. */
static void events_hit(const void *probe, bool kprobe, const uint64_t *regs, bool ret,
		       uint64_t func)
{
	uint16_t ids[8];
	unsigned int n = 0;
	unsigned long f = spin_lock_irqsave(&uev_lock);

	for (unsigned int i = 0; i < UEV_MAX && n < 8; i++) {
		const void *p = kprobe ? (const void *)uevs[i].k : (const void *)uevs[i].u;

		if (p && p == probe && uevs[i].info.ret == ret) {
			uevs[i].info.hits++;
			ids[n++] = uevs[i].info.id;
		}
	}
	spin_unlock_irqrestore(&uev_lock, f);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t rec[3];
		uint64_t ip[2] = { ret ? func : regs[32], regs[32] };

		trace_common(rec, ids[i], kprobe);
		memcpy(&rec[1], ip, ret ? 16 : 8);
		perf_tp_event(ids[i], rec, ret ? 24 : 16, regs, !kprobe);
	}
}

void uprobe_events_hit(struct ksvc_uprobe *u, const uint64_t *regs, bool ret, uint64_t func)
{
	events_hit(u, false, regs, ret, func);
}

void kprobe_events_hit(struct ksvc_kprobe *k, const uint64_t *regs, bool ret, uint64_t func)
{
	events_hit(k, true, regs, ret, func);
}
