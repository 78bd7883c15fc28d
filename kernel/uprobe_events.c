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
 * Fetch arguments (trace_probe.c): [NAME=]FETCH[:TYPE] (FETCH[:TYPE] at most 63 bytes) with
 * FETCH %x0..%x30, %sp, %pc, $stack, $stackN (the N-th u64 at the stack pointer), $retval
 * (return probes), $comm (a string), @ADDR, @+OFF (uprobes: the probed file's offset OFF
 * where the probed text maps it, translate_user_vaddr), @SYM[+|-OFF] (kprobes; ENOENT for an
 * unknown one), or +|-OFF(FETCH); the @ forms and each +|-OFF() read memory without faulting
 * (0 when it cannot be read), 14 reads at most.  TYPE u/s/x 8..64 (none: a hex u64), packed
 * after the record's head in order; :string (of memory read, or $comm) copies up to 256
 * bytes after the fixed part behind a __data_loc word (length 0 when the memory cannot be
 * read, as strncpy_from_user_nofault's EFAULT).  A hit builds each record under uev_lock.
 * A uprobe's "(REF)" suffix gives its reference counter (kernel/uprobes.c raises it while
 * the event is open).
 * Not built: the other types, the %return suffix
 * (tracefs rejects it with EINVAL), BPF programs on these events, the
 * ftrace ring buffer ("enable" changes nothing), filters on the arguments.
 *
 * Locks: uev_mutex (sleeping) covers the table's definitions and use counts; uev_lock (spin)
 * the probe pointers and hit counts the BRK path reads.  uev_mutex is taken before
 * uprobe_mutex (kernel/uprobes.c).
 */
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/ksym.h>
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
		     uint64_t ref_ctr, bool ret, bool kprobe, unsigned int maxactive, const struct probe_arg *args,
		     unsigned int nargs, uint16_t *id)
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
	e->info.ref_ctr_offset = ref_ctr;
	e->info.ret = ret;
	e->info.kprobe = kprobe;
	e->info.maxactive = maxactive;
	e->info.nargs = nargs;
	memcpy(e->info.args, args, sizeof(*args) * nargs);
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
			err = ksvc_uprobe_register(e->path, e->info.offset, e->info.ref_ctr_offset,
						    e->info.ret, &u);
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

/* ---- fetch arguments (trace_probe.c traceprobe_parse_probe_arg, a subset) ---- */

bool probe_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "%x0".."%x30", "%sp", "%pc": the register's index, or -1. */
static int reg_of(const char *s, size_t len)
{
	char *end;

	if (len == 3 && !memcmp(s, "%sp", 3))
		return PROBE_ARG_SP;
	if (len == 3 && !memcmp(s, "%pc", 3))
		return PROBE_ARG_PC;
	if (len < 3 || s[0] != '%' || s[1] != 'x' || s[2] < '0' || s[2] > '9')
		return -1;
	unsigned long r = strtoul(s + 2, &end, 10);

	return end == s + len && r <= 30 ? (int)r : -1;
}

/* kstrtoul/kstrtol on all of s (NUL-terminated): digits after an optional sign (signed_ok) and
 * a 0x/0 prefix (base 0), nothing else. */
static bool whole_number(const char *s, int base, bool signed_ok, uint64_t *out)
{
	bool neg = false;
	char *end;

	if (signed_ok && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return false;
	uint64_t v = strtoul(s, &end, base);

	if (*end)
		return false;
	*out = neg ? (uint64_t)-(int64_t)v : v;
	return true;
}

/* One more memory read at off from what s (not empty) fetches. */
static int push_deref(struct probe_arg *a, int64_t off)
{
	if (a->nderef == PROBE_DEREF_MAX)
		return -EINVAL; /* TOO_MANY_OPS */
	a->offs[a->nderef++] = off;
	return 0;
}

/* parse_probe_arg: the fetch s (NUL-terminated, modified) into a's start and reads. */
static int parse_fetch(char *s, bool ret, bool kprobe, struct probe_arg *a)
{
	size_t len = strlen(s);
	uint64_t v;
	int r;

	switch (s[0]) {
	case '%':
		r = reg_of(s, len);
		if (r < 0)
			return -EINVAL;
		a->reg = (uint8_t)r;
		return 0;
	case '$':
		if (!strcmp(s, "$retval")) {
			if (!ret)
				return -EINVAL;
			a->reg = PROBE_ARG_RETVAL;
		} else if (!strcmp(s, "$stack")) {
			a->reg = PROBE_ARG_SP;
		} else if (!strncmp(s, "$stack", 6) && whole_number(s + 6, 10, false, &v)) {
			a->reg = PROBE_ARG_STACKN;
			a->imm = v;
		} else if (!strcmp(s, "$comm") || !strcmp(s, "$COMM")) {
			a->reg = PROBE_ARG_COMM;
		} else {
			return -EINVAL;
		}
		return 0;
	case '@': /* memory at an address, a file offset (uprobes) or a symbol (kprobes) */
		if (s[1] >= '0' && s[1] <= '9') {
			if (!whole_number(s + 1, 0, false, &v))
				return -EINVAL;
			a->reg = PROBE_ARG_IMM;
		} else if (s[1] == '+') {
			if (kprobe || !whole_number(s + 2, 0, true, &v))
				return -EINVAL;
			a->reg = PROBE_ARG_FOFFS;
		} else {
			char *sign = s + 1;
			uint64_t off = 0, size;

			while (*sign && *sign != '+' && *sign != '-')
				sign++;

			if (!kprobe || (*sign && !whole_number(sign, 0, true, &off)))
				return -EINVAL;
			*sign = 0;
			if (!ksym_addr(s + 1, &v, &size))
				return -ENOENT;
			v += off;
			a->reg = PROBE_ARG_IMM;
		}
		a->imm = v;
		return push_deref(a, 0);
	case '+':
	case '-': { /* OFF(FETCH): the memory at OFF from what FETCH gives */
		char *open = strchr(s, '(');

		if (!open || s[len - 1] != ')')
			return -EINVAL;
		*open = 0;
		s[len - 1] = 0;
		if (!whole_number(s, 0, true, &v))
			return -EINVAL;
		r = parse_fetch(open + 1, ret, kprobe, a);
		if (r)
			return r;
		if (a->reg == PROBE_ARG_COMM)
			return -EINVAL; /* COMM_CANT_DEREF */
		return push_deref(a, (int64_t)v);
	}
	}
	return -EINVAL;
}

static int parse_one(const char *in, bool ret, bool kprobe, struct probe_arg *a)
{
	char buf[PROBE_ARGSTR_MAX + 1], *colon;
	const char *t = NULL;
	size_t len = strlen(in);

	if (len > PROBE_ARGSTR_MAX)
		return -EINVAL; /* ARG_TOO_LONG */
	memcpy(buf, in, len + 1);
	memcpy(a->spec, in, len + 1);
	a->type = 'd';
	a->size = 8;
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		t = colon + 1;
		char *end;

		if (!strcmp(t, "string")) {
			a->type = 'S';
			a->size = 4; /* its __data_loc word; the bytes follow the fixed part */
		} else if (*t != 'u' && *t != 's' && *t != 'x') {
			return -EINVAL; /* the other types: not built */
		} else {
			unsigned long bits = strtoul(t + 1, &end, 10);

			if (*end || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
				return -EINVAL;
			a->type = *t;
			a->size = (uint8_t)(bits / 8);
		}
	}
	int err = parse_fetch(buf, ret, kprobe, a);

	if (err)
		return err;
	if (a->reg == PROBE_ARG_COMM) { /* a string, and only that */
		if (t && a->type != 'S')
			return -EINVAL;
		a->type = 'S';
		a->size = 4;
	} else if (a->type == 'S' && !a->nderef) {
		return -EINVAL; /* a string is read from memory: BAD_STRING */
	}
	return 0;
}

int probe_args_parse(char **argv, int argc, bool ret, bool kprobe, struct probe_arg *args,
		     unsigned int *n)
{
	uint16_t at = ret ? 24 : 16;

	if (argc > PROBE_ARGS_MAX)
		return -EINVAL;
	for (int i = 0; i < argc; i++) {
		struct probe_arg *a = &args[i];
		char *eq = strchr(argv[i], '=');
		int err;

		*a = (struct probe_arg){ 0 };
		if (eq) {
			*eq = 0;
			if (!probe_name_ok(argv[i]) || strlen(argv[i]) >= sizeof(a->name))
				return -EINVAL;
			ksnprintf(a->name, sizeof(a->name), "%s", argv[i]);
		} else {
			ksnprintf(a->name, sizeof(a->name), "arg%d", i + 1);
		}
		err = parse_one(eq ? eq + 1 : argv[i], ret, kprobe, a);
		if (err)
			return err;
		for (int j = 0; j < i; j++)
			if (!strcmp(args[j].name, a->name))
				return -EINVAL;
		a->offset = at;
		at = (uint16_t)(at + a->size);
	}
	*n = (unsigned int)argc;
	return 0;
}

#define PROBE_STR_MAX 256 /* bytes of one string argument, its NUL included */

/* Where the fetch of a ends: *addr, the address its last read is at (true), or *val, its
 * value (a register, $stack...: false).  An intermediate read that faults gives 0, as the
 * whole fetch does on Linux.  base: the probed file's load bias (@+OFF). */
static bool fetch_where(const struct probe_arg *a, const uint64_t *regs, bool user,
			uint64_t base, uint64_t *out)
{
	uint64_t v;

	switch (a->reg) {
	case PROBE_ARG_RETVAL:
		v = regs[0];
		break;
	case PROBE_ARG_STACKN: /* get_user_stack_nth / regs_get_kernel_stack_nth: 0 if unreadable */
		v = 0;
		if (a->imm > (UINT64_MAX - regs[31]) / 8 ||
		    ksvc_read_nofault(&v, (const void *)(uintptr_t)(regs[31] + 8 * a->imm), 8, user))
			v = 0;
		break;
	case PROBE_ARG_IMM:
		v = a->imm;
		break;
	case PROBE_ARG_FOFFS:
		v = base + a->imm;
		break;
	default:
		v = regs[a->reg];
		break;
	}
	if (!a->nderef) {
		*out = v;
		return false;
	}
	for (unsigned int i = 0; i + 1 < a->nderef; i++) {
		uint64_t next = 0;

		if (ksvc_read_nofault(&next, (const void *)(uintptr_t)(v + (uint64_t)a->offs[i]), 8,
				      user))
			next = 0;
		v = next;
	}
	*out = v + (uint64_t)a->offs[a->nderef - 1];
	return true;
}

/* A string argument: the NUL-terminated bytes at its address ($comm: the task's name) copied
 * to rec + at (at most room), its __data_loc word (length << 16 | offset) at its field;
 * nothing when the first byte cannot be read (length 0, as Linux's fetch_store_string on a
 * fault).  The bytes used. */
static uint32_t fetch_string(const struct probe_arg *a, const uint64_t *regs, bool user,
			     uint64_t base, uint8_t *rec, uint32_t at, uint32_t room)
{
	uint32_t max = room < PROBE_STR_MAX ? room : PROBE_STR_MAX, n = 0;
	bool fault = false;
	char comm[16];
	uint64_t addr;

	if (a->reg == PROBE_ARG_COMM) {
		ksvc_current_comm(comm);
		comm[15] = 0;
		n = (uint32_t)strlen(comm) + 1;
		n = n < max ? n : max;
		memcpy(rec + at, comm, n);
	} else {
		fetch_where(a, regs, user, base, &addr);
		while (n < max) {
			char c;

			if (ksvc_read_nofault(&c, (const void *)(uintptr_t)(addr + n), 1, user)) {
				fault = true;
				break;
			}
			rec[at + n++] = (uint8_t)c;
			if (!c)
				break;
		}
	}
	if (fault)
		n = 0; /* strncpy_from_user_nofault's EFAULT: an empty location */
	else if (n && rec[at + n - 1])
		rec[at + n - 1] = 0; /* cut at max, the NUL last (its length counts the NUL) */
	uint32_t loc = n << 16 | at;

	memcpy(rec + a->offset, &loc, 4);
	return n;
}

/* The argument's value at a hit (0 when its memory cannot be read, as Linux leaves it). */
static void fetch(const struct probe_arg *a, const uint64_t *regs, bool user, uint64_t base,
		  uint8_t *out)
{
	uint64_t v;

	if (fetch_where(a, regs, user, base, &v)) {
		uint64_t addr = v;

		v = 0;
		if (ksvc_read_nofault(&v, (const void *)(uintptr_t)addr, a->size, user))
			v = 0;
	}
	memcpy(out, &v, a->size); /* little-endian: the low bytes */
}

/* The record of event e at a hit (uev_lock held: the fetches read memory without faulting),
 * rec zeroed: its size as perf takes it. */
static uint32_t event_record(const struct uprobe_event *e, bool kprobe, const uint64_t *regs,
			     bool ret, uint64_t func, uint8_t *rec, uint32_t room)
{
	const struct uprobe_event_info *info = &e->info;
	uint64_t ip[2] = { ret ? func : regs[32], regs[32] };
	uint32_t size = ret ? 24 : 16;
	/* translate_user_vaddr: the probe's address less its file offset */
	uint64_t base = (ret ? func : regs[32]) - info->offset;

	trace_common(rec, info->id, kprobe);
	memcpy(rec + 8, ip, ret ? 16 : 8);
	for (unsigned int j = 0; j < info->nargs; j++) {
		if (info->args[j].type != 'S')
			fetch(&info->args[j], regs, !kprobe, base, rec + info->args[j].offset);
		size = info->args[j].offset + info->args[j].size;
	}
	for (unsigned int j = 0; j < info->nargs; j++) /* strings after the fixed part */
		if (info->args[j].type == 'S')
			size += fetch_string(&info->args[j], regs, !kprobe, base, rec, size,
					     room - size);
	/* perf_trace_buf_alloc: the u32 size and the record end 8-aligned */
	return ((size + 4 + 7) & ~7u) - 4;
}

/* The records of the events on probe (a uprobe's or a kprobe's): Linux's
 * {u,k}probe_trace_entry_head, the probe's address or the function and return address, then
 * the fetch arguments packed; each built under uev_lock, handed to perf after it. */
static void events_hit(const void *probe, bool kprobe, const uint64_t *regs, bool ret,
		       uint64_t func)
{
	uint8_t rec[24 + PROBE_ARGS_MAX * 8 + 2 * PROBE_STR_MAX + 8];

	for (unsigned int i = 0; i < UEV_MAX; i++) {
		unsigned long f = spin_lock_irqsave(&uev_lock);
		struct uprobe_event *e = &uevs[i];
		const void *p = kprobe ? (const void *)e->k : (const void *)e->u;

		if (!p || p != probe || e->info.ret != ret) {
			spin_unlock_irqrestore(&uev_lock, f);
			continue;
		}
		e->info.hits++;
		uint16_t id = e->info.id;

		memset(rec, 0, sizeof(rec));
		uint32_t size = event_record(e, kprobe, regs, ret, func, rec, sizeof(rec) - 8);

		spin_unlock_irqrestore(&uev_lock, f);
		perf_tp_event(id, rec, size, regs, !kprobe);
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
