/*
 * helpers_timer.c - bpf_timer: bpf_timer_init, bpf_timer_set_callback, bpf_timer_start and
 * bpf_timer_cancel over the seam's one-shot timers, and the map hooks that cancel and free a
 * value's timer when its element is overwritten or deleted and when the map loses its last user
 * reference (Linux 6.1's bpf_timer_cancel_and_free from check_and_free_fields and
 * map_release_uref).
 *
 * Linux 6.1 semantics: init takes CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME only (all
 * three count relative expiries the same here), else -EINVAL; a second init -EBUSY; a map with
 * no user reference left (fd or pin) -EPERM, from set_callback too.  set_callback keeps the
 * calling program alive (a reference) until the timer is cancelled or freed.  start: flags 0
 * only, and an initialized timer with a callback, else -EINVAL; the expiry is relative and the
 * callback runs once on the CPU that started it, with (map, key, value): an array's key is the
 * element's index.  cancel: -EINVAL uninitialized, -EDEADLK from the timer's own callback, else
 * whether it was pending (1/0), after waiting out a callback running on another CPU; it forgets
 * the callback (and drops the program) as Linux's drop_prog_refcnt.
 *
 * The value's struct bpf_timer holds a pointer to the timer's state (struct bpf_hrt), made by
 * init.  One IRQ-safe lock (timer_lock) covers every value's pointer and each state's program
 * and callback; it is never held while a callback runs or is waited for.  A state leaves its
 * value (bpf_timer_detach, under the map's lock if need be) before it is released: cancelled,
 * every running callback waited out, its program dropped, freed.  Released from its own
 * callback (the callback deleted its element), the end of the callback frees it instead, from
 * irq_work once the timer interrupt is over.  While a callback runs it holds a reference on its
 * program of its own, so set_callback may replace the program meanwhile.
 *
 * The helpers learn the calling program from the callback's address: programs that call
 * bpf_timer_set_callback are registered at load (bpf_timer_prog_add) and their decoded
 * instructions hold every callback they can pass (such programs are interpreted: jit.c).
 */
#include <stdatomic.h>
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/spinlock.h>
#include <kern/string.h>
#include "bpf_internal.h"

#define P(x) ((void *)(uintptr_t)(x))

/* Linux's clockids (<linux/time.h>), which the uapi headers bpf sees do not define */
#define TIMER_CLOCK_REALTIME 0
#define TIMER_CLOCK_MONOTONIC 1
#define TIMER_CLOCK_BOOTTIME 7
#define TIMER_MAX_CLOCKS 16

#define TIMER_MAX_CPUS 64

struct bpf_hrt {
	struct ksvc_timer *kt; /* (c) */
	struct bpf_map *map; /* (c) no reference: the map releases its timers before it goes */
	void *value; /* (c) the element's value */
	void *key; /* (c) the callback's r2: the hash element's key, or &idx */
	uint32_t idx; /* (c) array maps: the element's index */
	struct bpf_prog *prog; /* (L) a reference, or NULL: no callback */
	uint64_t fn; /* (L) the callback (bpf_callback_run's), 0: none */
	bool detached; /* (L) its value let go of it: no callback starts any more */
	bool free_at_end; /* (L) released from its own callback: the callback's end frees it */
	struct bpf_hrt *next; /* release lists (bpf_timer_detach), then the graveyard */
};

/* The value's struct bpf_timer: its first word is ours */
struct timer_field {
	struct bpf_hrt *t;
	uint64_t unused;
};
_Static_assert(sizeof(struct timer_field) == sizeof(struct bpf_timer), "struct bpf_timer");

/* Programs that may pass a callback to bpf_timer_set_callback */
struct cb_prog {
	struct bpf_prog *prog;
	struct cb_prog *next;
};

static struct spinlock timer_lock;
static struct cb_prog *cb_progs; /* (L) */
static struct bpf_hrt *running[TIMER_MAX_CPUS]; /* (L) the callback each CPU is running */
static struct bpf_hrt *graveyard; /* (L) states their own callback released */

static struct timer_field *field_of(const struct bpf_map *map, void *value)
{
	return (struct timer_field *)((uint8_t *)value + map->timer_off);
}

/* ---- releasing ---- */

/* Cancelled, with no callback running anywhere (nor starting: it is detached) */
static void hrt_free(struct bpf_hrt *t)
{
	ksvc_timer_free(t->kt); /* not pending: waits out a callback still running elsewhere */
	if (t->prog)
		bpf_prog_put(t->prog);
	ksvc_free(t);
}

static void graveyard_fn(struct ksvc_irq_work *w)
{
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct bpf_hrt *t = graveyard;

	graveyard = NULL;
	spin_unlock_irqrestore(&timer_lock, f);
	while (t) {
		struct bpf_hrt *next = t->next;

		hrt_free(t);
		t = next;
	}
}

static struct ksvc_irq_work graveyard_work = { .fn = graveyard_fn };

struct bpf_hrt *bpf_timer_detach(const struct bpf_map *map, void *value, struct bpf_hrt *list)
{
	if (map->timer_off < 0)
		return list;
	struct timer_field *tf = field_of(map, value);
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct bpf_hrt *t = tf->t;

	tf->t = NULL;
	tf->unused = 0;
	if (t) {
		t->detached = true;
		t->next = list;
		list = t;
	}
	spin_unlock_irqrestore(&timer_lock, f);
	return list;
}

void bpf_timer_release(struct bpf_hrt *list)
{
	while (list) {
		struct bpf_hrt *t = list;
		unsigned long f = spin_lock_irqsave(&timer_lock);
		bool self = ksvc_cpu_id() < TIMER_MAX_CPUS && running[ksvc_cpu_id()] == t;

		list = t->next;
		if (self) {
			/* its own callback: drop a pending expiry, free it when the callback ends */
			ksvc_timer_try_cancel(t->kt);
			t->free_at_end = true;
		}
		spin_unlock_irqrestore(&timer_lock, f);
		if (self)
			continue;
		/* the first cancel takes it off its CPU's list, the free waits for callbacks */
		f = ksvc_irq_save();
		ksvc_timer_try_cancel(t->kt);
		ksvc_irq_restore(f);
		hrt_free(t);
	}
}

void bpf_timer_free_value(const struct bpf_map *map, void *value)
{
	bpf_timer_release(bpf_timer_detach(map, value, NULL));
}

void bpf_map_copy_value(const struct bpf_map *map, void *dst, const void *src)
{
	uint32_t skip[2][2], n = 0, pos = 0;

	/* copy_map_value: around the bpf_spin_lock and the bpf_timer, in offset order */
	if (map->spin_lock_off >= 0) {
		skip[n][0] = (uint32_t)map->spin_lock_off;
		skip[n++][1] = sizeof(struct bpf_spin_lock);
	}
	if (map->timer_off >= 0) {
		skip[n][0] = (uint32_t)map->timer_off;
		skip[n++][1] = sizeof(struct bpf_timer);
	}
	if (n == 2 && skip[0][0] > skip[1][0]) {
		uint32_t o = skip[0][0], s = skip[0][1];

		skip[0][0] = skip[1][0];
		skip[0][1] = skip[1][1];
		skip[1][0] = o;
		skip[1][1] = s;
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy((uint8_t *)dst + pos, (const uint8_t *)src + pos, skip[i][0] - pos);
		pos = skip[i][0] + skip[i][1];
	}
	memcpy((uint8_t *)dst + pos, (const uint8_t *)src + pos, map->value_size - pos);
}

/* ---- programs with timer callbacks ---- */

int bpf_timer_prog_add(struct bpf_prog *prog)
{
	struct cb_prog *c = ksvc_alloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->prog = prog;
	unsigned long f = spin_lock_irqsave(&timer_lock);

	c->next = cb_progs;
	cb_progs = c;
	spin_unlock_irqrestore(&timer_lock, f);
	return 0;
}

void bpf_timer_prog_del(struct bpf_prog *prog)
{
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct cb_prog **pp = &cb_progs, *c = NULL;

	while (*pp && (*pp)->prog != prog)
		pp = &(*pp)->next;
	if (*pp) {
		c = *pp;
		*pp = c->next;
	}
	spin_unlock_irqrestore(&timer_lock, f);
	ksvc_free(c);
}

/* The registered program whose decoded code holds fn; timer_lock held */
static struct bpf_prog *prog_of_callback(uint64_t fn)
{
	uintptr_t a = (uintptr_t)(fn & ~1ull);

	for (struct cb_prog *c = cb_progs; c; c = c->next) {
		uintptr_t base = (uintptr_t)c->prog->dinsns;

		if (a >= base && a < base + (uintptr_t)c->prog->len * sizeof(struct bpf_dinsn))
			return c->prog;
	}
	return NULL;
}

/* ---- the callback ---- */

/* The seam's timer expired: hard IRQ on the CPU that started it, interrupts masked */
static void timer_fire(void *arg, const uint64_t *regs, bool user)
{
	struct bpf_hrt *t = arg;
	unsigned int cpu = ksvc_cpu_id();
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct bpf_prog *prog = t->prog;
	uint64_t fn = t->fn;
	bool end;

	(void)regs;
	(void)user;
	if (!fn || t->detached || cpu >= TIMER_MAX_CPUS) {
		spin_unlock_irqrestore(&timer_lock, f);
		return;
	}
	bpf_prog_get(prog); /* the callback's own: set_callback may drop the timer's */
	__atomic_store_n(&running[cpu], t, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&timer_lock, f);
	(void)bpf_callback_run(fn, (uintptr_t)t->map, (uintptr_t)t->key, (uintptr_t)t->value, 0);
	f = spin_lock_irqsave(&timer_lock);
	__atomic_store_n(&running[cpu], NULL, __ATOMIC_RELEASE);
	/* once: a second run of it on another CPU (started there while this one ran) may end
	 * later; the free waits for that one */
	end = t->free_at_end;
	t->free_at_end = false;
	if (end) {
		t->next = graveyard;
		graveyard = t;
	}
	spin_unlock_irqrestore(&timer_lock, f);
	if (end)
		ksvc_irq_work_queue(&graveyard_work);
	bpf_prog_put(prog);
}

/* ---- the helpers ---- */

uint64_t bpf_h_timer_init(uint64_t timer, uint64_t map, uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct timer_field *tf = P(timer);
	struct bpf_map *m = P(map);
	uint32_t clockid = (uint32_t)flags & (TIMER_MAX_CLOCKS - 1);
	struct bpf_hrt *t;
	unsigned long f;
	int err = 0;

	if (flags >= TIMER_MAX_CLOCKS || (clockid != TIMER_CLOCK_MONOTONIC &&
					   clockid != TIMER_CLOCK_REALTIME &&
					   clockid != TIMER_CLOCK_BOOTTIME))
		return (uint64_t)(int64_t)-EINVAL;
	f = spin_lock_irqsave(&timer_lock);
	if (tf->t) {
		err = -EBUSY;
		goto out;
	}
	if (!atomic_load(&m->usercnt)) {
		err = -EPERM; /* the map is going: its timers are being freed */
		goto out;
	}
	t = ksvc_alloc(sizeof(*t));
	if (t)
		t->kt = ksvc_timer_alloc(timer_fire, t);
	if (!t || !t->kt) {
		ksvc_free(t);
		err = -ENOMEM;
		goto out;
	}
	t->map = m;
	t->value = (uint8_t *)tf - m->timer_off;
	if (m->type == BPF_MAP_TYPE_ARRAY) {
		uint8_t *base;
		uint32_t elem;

		bpf_array_layout(m, &base, &elem);
		t->idx = (uint32_t)(((uint8_t *)t->value - base) / elem);
		t->key = &t->idx;
	} else { /* the hash maps: the key, rounded to 8, before the value */
		t->key = (uint8_t *)t->value - ((m->key_size + 7) & ~7u);
	}
	tf->t = t;
out:
	spin_unlock_irqrestore(&timer_lock, f);
	return (uint64_t)(int64_t)err;
}

uint64_t bpf_h_timer_set_callback(uint64_t timer, uint64_t fn, uint64_t a3, uint64_t a4,
				  uint64_t a5)
{
	struct timer_field *tf = P(timer);
	struct bpf_prog *prog, *old = NULL;
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct bpf_hrt *t = tf->t;
	int err = 0;

	if (!t) {
		err = -EINVAL;
		goto out;
	}
	if (!atomic_load(&t->map->usercnt)) {
		err = -EPERM;
		goto out;
	}
	prog = prog_of_callback(fn);
	if (!prog) {
		err = -EINVAL; /* not reached: the verifier checked fn */
		goto out;
	}
	if (prog != t->prog) {
		bpf_prog_get(prog); /* it runs: its count is not 0 */
		old = t->prog;
		t->prog = prog;
	}
	t->fn = fn;
out:
	spin_unlock_irqrestore(&timer_lock, f);
	if (old)
		bpf_prog_put(old);
	return (uint64_t)(int64_t)err;
}

uint64_t bpf_h_timer_start(uint64_t timer, uint64_t nsecs, uint64_t flags, uint64_t a4,
			   uint64_t a5)
{
	struct timer_field *tf = P(timer);
	unsigned long f;
	struct bpf_hrt *t;
	int err = 0;

	if (flags)
		return (uint64_t)(int64_t)-EINVAL;
	f = spin_lock_irqsave(&timer_lock);
	t = tf->t;
	if (!t || !t->prog) {
		err = -EINVAL;
	} else {
		/* hrtimer_start: a pending expiry moves to the new one, on this CPU */
		ksvc_timer_try_cancel(t->kt);
		ksvc_timer_start(t->kt, nsecs);
	}
	spin_unlock_irqrestore(&timer_lock, f);
	return (uint64_t)(int64_t)err;
}

uint64_t bpf_h_timer_cancel(uint64_t timer, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct timer_field *tf = P(timer);
	struct bpf_prog *prog = NULL;
	unsigned long f = spin_lock_irqsave(&timer_lock);
	struct bpf_hrt *t = tf->t;
	bool was = false;
	int err = 0;

	if (!t)
		err = -EINVAL;
	else if (ksvc_cpu_id() < TIMER_MAX_CPUS && running[ksvc_cpu_id()] == t)
		err = -EDEADLK; /* its own callback: waiting for it would never end */
	if (!err) {
		prog = t->prog;
		t->prog = NULL;
		t->fn = 0;
		was = ksvc_timer_try_cancel(t->kt);
	}
	spin_unlock_irqrestore(&timer_lock, f);
	if (err)
		return (uint64_t)(int64_t)err;
	/* wait out a callback running on another CPU (t itself may be freed meanwhile by its
	 * element's delete: only compared here); one that fires from now on finds no callback */
	for (unsigned int cpu = 0; cpu < TIMER_MAX_CPUS; cpu++)
		while (__atomic_load_n(&running[cpu], __ATOMIC_ACQUIRE) == t)
			;
	if (prog)
		bpf_prog_put(prog);
	return was;
}
