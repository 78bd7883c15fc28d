/*
 * futex.c - fast user-space mutexes: FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAIT_BITSET,
 * FUTEX_WAKE_BITSET, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, and the CLONE_CHILD_CLEARTID wake.
 *
 * ABI: futex(2) of Linux 6.1 (<linux/futex.h>).  FUTEX_WAIT's timeout is relative on
 * CLOCK_MONOTONIC; FUTEX_WAIT_BITSET's is absolute, on CLOCK_REALTIME with
 * FUTEX_CLOCK_REALTIME (only WAIT_BITSET accepts that flag: ENOSYS otherwise, as Linux).
 * Errors: EINVAL (unaligned word, bad timespec, zero bitset, negative requeue counts), EFAULT,
 * EAGAIN (value differs), ETIMEDOUT, and an interrupted wait returns -ERESTARTSYS (no timeout)
 * or -ERESTARTNOHAND (with one), which signal delivery turns into EINTR or a restart.
 *
 * Keys, as Linux's get_futex_key: a private futex (FUTEX_PRIVATE_FLAG), and a shared one in
 * private memory, is (mm, address); a shared futex in a MAP_SHARED mapping is the physical
 * address of the word, found with an AT S1E0R translation (arm64: this file's only
 * architecture dependency), so processes sharing the page meet on it.  (Linux uses the inode
 * and offset for file mappings; the physical page is the same thing while it is resident,
 * and pages here are never evicted.)
 *
 * Waiting: the waiter joins its bucket first, then reads the word (a full barrier between, as
 * the waker has between its store and its scan), so a wake cannot fall between the check and
 * the sleep.  The comparison of FUTEX_CMP_REQUEUE is not atomic with the requeue (the word is
 * read before the bucket locks are taken).  Robust lists (exit_robust_list) are walked at
 * thread exit; the owner-died update is a plain read and write of the user word, not Linux's
 * atomic cmpxchg, so a waiter always gets a wake whether or not it set FUTEX_WAITERS.
 * Not done: PI futexes, FUTEX_WAKE_OP, FUTEX_FD.
 */
#include <linux/futex.h>
#include <linux/time_types.h>
#include <kern/assert.h>
#include <kern/clock.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/futex.h>
#include <kern/proc.h>
#include <kern/sched.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/time.h>
#include <kern/vm.h>

#define FUTEX_HASH_BITS 6

struct futex_key {
	uint64_t a, b; /* private: (mm, va); shared: (0, pa) */
};

struct futex_bucket {
	struct spinlock lock;
	struct list_node waiters; /* struct futex_waiter */
};

struct futex_waiter {
	struct list_node node; /* (bucket->lock) */
	struct futex_bucket *bucket; /* changes on requeue, under both bucket locks */
	struct futex_key key;
	uint32_t bitset;
	bool woken; /* (bucket->lock) */
	struct wait_queue wq; /* the waiter alone sleeps here */
};

static struct futex_bucket futex_hash[1u << FUTEX_HASH_BITS];
static bool futex_ready;
static struct spinlock futex_init_lock = SPINLOCK_INIT;

static void futex_init_once(void)
{
	if (__atomic_load_n(&futex_ready, __ATOMIC_ACQUIRE))
		return;
	unsigned long f = spin_lock_irqsave(&futex_init_lock);

	if (!futex_ready) {
		for (unsigned int i = 0; i < ARRAY_SIZE(futex_hash); i++) {
			spin_init(&futex_hash[i].lock);
			list_init(&futex_hash[i].waiters);
		}
		__atomic_store_n(&futex_ready, true, __ATOMIC_RELEASE);
	}
	spin_unlock_irqrestore(&futex_init_lock, f);
}

static struct futex_bucket *futex_bucket_of(const struct futex_key *k)
{
	uint64_t h = (k->a ^ (k->b >> 2) ^ (k->b >> 14)) * 0x9e3779b97f4a7c15ull;

	return &futex_hash[h >> (64 - FUTEX_HASH_BITS)];
}

static bool futex_key_eq(const struct futex_key *x, const struct futex_key *y)
{
	return x->a == y->a && x->b == y->b;
}

/* Physical address of a mapped, user-readable word of the current address space. */
static bool futex_user_pa(uint64_t va, uint64_t *pa)
{
	unsigned long f = ksvc_irq_save(); /* PAR_EL1 is per CPU: no switch in between */
	uint64_t par;

	__asm__ volatile("at s1e0r, %1\n\tisb\n\tmrs %0, par_el1" : "=r"(par) : "r"(va) : "memory");
	ksvc_irq_restore(f);
	if (par & 1)
		return false;
	*pa = (par & 0x0000fffffffff000ull) | (va & 0xfff);
	return true;
}

/* Is uaddr in a MAP_SHARED mapping of the current address space? */
static bool futex_in_shared_vma(uint64_t uaddr)
{
	struct mm *mm = current_proc()->mm;
	bool shared;

	if (!mm)
		return false;
	kmutex_lock(&mm->lock);
	struct vm_area *v = vm_find_locked(mm, uaddr);

	shared = v && (v->flags & VMA_SHARED);
	kmutex_unlock(&mm->lock);
	return shared;
}

/*
 * get_futex_key: (mm, address) for a private futex and for a shared one in private memory
 * (where copy-on-write may move the page between wait and wake); the physical address for a
 * shared futex in a MAP_SHARED mapping, faulted in first.
 */
static int futex_key_make(uint64_t uaddr, bool private_, struct futex_key *k)
{
	uint64_t pa;
	uint32_t v;

	if (uaddr & 3)
		return -EINVAL;
	if (!private_ && futex_in_shared_vma(uaddr)) {
		if (ksvc_copy_from_user(&v, (const void *)(uintptr_t)uaddr, sizeof(v)))
			return -EFAULT;
		if (futex_user_pa(uaddr, &pa)) {
			k->a = 0;
			k->b = pa;
			return 0;
		}
	}
	k->a = (uint64_t)(uintptr_t)current_proc()->mm;
	k->b = uaddr;
	return 0;
}

static int futex_read(uint64_t uaddr, uint32_t *v)
{
	return ksvc_copy_from_user(v, (const void *)(uintptr_t)uaddr, sizeof(*v)) ? -EFAULT : 0;
}

static void futex_barrier(void)
{
	__asm__ volatile("dmb ish" ::: "memory");
}

/* Lock the bucket fw is on now (requeue may move it). */
static struct futex_bucket *futex_lock_waiter(struct futex_waiter *fw, unsigned long *f)
{
	for (;;) {
		struct futex_bucket *b = READ_ONCE(fw->bucket);

		*f = spin_lock_irqsave(&b->lock);
		if (READ_ONCE(fw->bucket) == b)
			return b;
		spin_unlock_irqrestore(&b->lock, *f);
	}
}

/* deadline: monotonic ns, 0 for none. */
static long futex_wait(uint64_t uaddr, bool private_, uint32_t val, uint32_t bitset,
		       uint64_t deadline)
{
	struct futex_waiter fw;
	struct waiter w = { 0 };
	struct task *t = current_task();
	uint32_t cur;
	unsigned long f;
	int r;

	if (!bitset)
		return -EINVAL;
	if (uaddr & 3)
		return -EINVAL;
	r = futex_read(uaddr, &cur); /* faults the page in, so the key is its frame */
	if (r)
		return r;
	if (cur != val)
		return -EAGAIN;
	r = futex_key_make(uaddr, private_, &fw.key);
	if (r)
		return r;
	fw.bitset = bitset;
	fw.woken = false;
	waitq_init(&fw.wq);
	fw.bucket = futex_bucket_of(&fw.key);
	f = spin_lock_irqsave(&fw.bucket->lock);
	list_add_tail(&fw.bucket->waiters, &fw.node);
	spin_unlock_irqrestore(&fw.bucket->lock, f);
	futex_barrier(); /* pairs with the barrier in futex_wake: queue, then read the word */

	long ret = 0;

	r = futex_read(uaddr, &cur);
	if (r || cur != val) {
		ret = r ? r : -EAGAIN;
	} else {
		for (;;) {
			waitq_prepare(&fw.wq, &w);
			if (READ_ONCE(fw.woken))
				break;
			if (signal_pending(t)) {
				ret = deadline ? -ERESTARTNOHAND : -ERESTARTSYS;
				break;
			}
			if (!waitq_block(&w, deadline)) {
				ret = -ETIMEDOUT;
				break;
			}
		}
		waitq_finish(&fw.wq, &w);
	}
	struct futex_bucket *b = futex_lock_waiter(&fw, &f);

	if (fw.woken)
		ret = 0; /* a wake counted us: report it, whatever else happened */
	else
		list_del(&fw.node);
	spin_unlock_irqrestore(&b->lock, f);
	return ret;
}

/* Wake up to n (at least one, as Linux) waiters on key whose bitset meets bitset. */
static int futex_wake_key(const struct futex_key *k, int n, uint32_t bitset)
{
	struct futex_bucket *b = futex_bucket_of(k);
	struct list_node *node, *tmp;
	int woken = 0;

	futex_barrier(); /* pairs with futex_wait: the caller's store, then the scan */
	unsigned long f = spin_lock_irqsave(&b->lock);

	list_for_each_safe(node, tmp, &b->waiters) {
		struct futex_waiter *fw = list_entry(node, struct futex_waiter, node);

		if (!futex_key_eq(&fw->key, k) || !(fw->bitset & bitset))
			continue;
		list_del(&fw->node);
		fw->woken = true;
		waitq_wake_all(&fw->wq); /* before unlocking: fw lives on the waiter's stack */
		if (++woken >= n)
			break;
	}
	spin_unlock_irqrestore(&b->lock, f);
	return woken;
}

static long futex_wake(uint64_t uaddr, bool private_, int n, uint32_t bitset)
{
	struct futex_key k;
	int r;

	if (!bitset)
		return -EINVAL;
	r = futex_key_make(uaddr, private_, &k);
	if (r)
		return r;
	if (!private_) {
		/* get_futex_key faults the word in for a shared futex: unmapped is EFAULT.  A
		 * private wake needs no page, as Linux. */
		uint32_t word;

		if (ksvc_copy_from_user(&word, (void *)uaddr, sizeof(word)))
			return -EFAULT;
	}
	return futex_wake_key(&k, n, bitset);
}

/* Wake one waiter on uaddr with a private or a shared key (robust lists do not say which). */
static void futex_wake_address_mode(uint64_t uaddr, bool private_)
{
	struct futex_key k;

	if (futex_key_make(uaddr, private_, &k) == 0)
		futex_wake_key(&k, 1, FUTEX_BITSET_MATCH_ANY);
}

void futex_wake_address(uint64_t uaddr, int n)
{
	struct futex_key k;

	futex_init_once();
	if (futex_key_make(uaddr, false, &k) == 0)
		futex_wake_key(&k, n, FUTEX_BITSET_MATCH_ANY);
}

static long futex_requeue(uint64_t uaddr, uint64_t uaddr2, bool private_, int nr_wake,
			  int nr_requeue, const uint32_t *cmpval)
{
	struct futex_key k1, k2;
	unsigned long f;
	int r, done = 0, moved = 0;

	if (nr_wake < 0 || nr_requeue < 0)
		return -EINVAL;
	r = futex_key_make(uaddr, private_, &k1);
	if (!r)
		r = futex_key_make(uaddr2, private_, &k2);
	if (r)
		return r;
	if (cmpval) {
		uint32_t cur;

		r = futex_read(uaddr, &cur);
		if (r)
			return r;
		if (cur != *cmpval)
			return -EAGAIN;
	}
	struct futex_bucket *b1 = futex_bucket_of(&k1), *b2 = futex_bucket_of(&k2);

	futex_barrier();
	/* both buckets, lower address first */
	f = ksvc_irq_save();
	spin_lock(b1 < b2 ? &b1->lock : &b2->lock);
	if (b1 != b2)
		spin_lock(b1 < b2 ? &b2->lock : &b1->lock);
	struct list_node *node, *tmp;

	list_for_each_safe(node, tmp, &b1->waiters) {
		struct futex_waiter *fw = list_entry(node, struct futex_waiter, node);

		if (done + moved - nr_wake >= nr_requeue)
			break;
		if (!futex_key_eq(&fw->key, &k1))
			continue;
		list_del(&fw->node);
		if (done + moved < nr_wake) {
			fw->woken = true;
			waitq_wake_all(&fw->wq);
			done++;
		} else {
			fw->key = k2;
			WRITE_ONCE(fw->bucket, b2);
			list_add_tail(&b2->waiters, &fw->node);
			moved++;
		}
	}
	if (b1 != b2)
		spin_unlock(b1 < b2 ? &b2->lock : &b1->lock);
	spin_unlock(b1 < b2 ? &b1->lock : &b2->lock);
	ksvc_irq_restore(f);
	return done + moved;
}

/* The timeout argument: relative (FUTEX_WAIT) or absolute (FUTEX_WAIT_BITSET, on the realtime
 * clock with FUTEX_CLOCK_REALTIME), as a monotonic deadline; 0 when none. */
static int futex_deadline(uint64_t uts, bool relative, bool realtime, uint64_t *deadline)
{
	struct __kernel_timespec ts;

	*deadline = 0;
	if (!uts)
		return 0;
	if (ksvc_copy_from_user(&ts, (const void *)(uintptr_t)uts, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (long long)NSEC_PER_SEC)
		return -EINVAL;
	uint64_t ns = (uint64_t)ts.tv_sec >= (UINT64_MAX / 4) / NSEC_PER_SEC
			      ? UINT64_MAX / 4
			      : (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	uint64_t now = time_ns();

	if (relative) {
		*deadline = now + ns;
	} else if (realtime) {
		uint64_t rt = clock_realtime_ns();

		*deadline = ns > rt ? now + (ns - rt) : now;
	} else {
		*deadline = ns;
	}
	if (!*deadline)
		*deadline = 1; /* an absolute time of 0 has passed; 0 means "none" */
	return 0;
}

static long sys_futex(uint64_t uaddr, uint64_t op_, uint64_t val, uint64_t uts, uint64_t uaddr2,
		      uint64_t val3)
{
	int op = (int)op_;
	int cmd = op & FUTEX_CMD_MASK;
	bool private_ = op & FUTEX_PRIVATE_FLAG;
	bool realtime = op & FUTEX_CLOCK_REALTIME;
	uint64_t deadline;
	int r;

	futex_init_once();
	if (realtime && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT_REQUEUE_PI &&
	    cmd != FUTEX_LOCK_PI2)
		return -ENOSYS;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		r = futex_deadline(uts, cmd == FUTEX_WAIT, realtime, &deadline);
		if (r)
			return r;
		return futex_wait(uaddr, private_, (uint32_t)val,
				  cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY : (uint32_t)val3,
				  deadline);
	case FUTEX_WAKE:
		return futex_wake(uaddr, private_, (int)val, FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAKE_BITSET:
		return futex_wake(uaddr, private_, (int)val, (uint32_t)val3);
	case FUTEX_REQUEUE:
		return futex_requeue(uaddr, uaddr2, private_, (int)val, (int)uts, NULL);
	case FUTEX_CMP_REQUEUE: {
		uint32_t cmp = (uint32_t)val3;

		return futex_requeue(uaddr, uaddr2, private_, (int)val, (int)uts, &cmp);
	}
	default:
		return -ENOSYS;
	}
}
SYSCALL(__NR_futex, sys_futex);

/* ---- robust futex lists at thread exit ---- */

#define ROBUST_LIST_LIMIT 2048

static int robust_fetch(uint64_t uaddr, uint64_t *entry, bool *pi)
{
	uint64_t v;

	if (ksvc_copy_from_user(&v, (const void *)(uintptr_t)uaddr, sizeof(v)))
		return -EFAULT;
	*entry = v & ~1ull;
	*pi = v & 1;
	return 0;
}

/* handle_futex_death: the dying thread tid still owns the lock word at uaddr.  For the
 * pending entry a released word (0) may still have a waiter that missed its wake. */
static void robust_futex_death(uint64_t uaddr, int tid, bool pending)
{
	uint32_t uval, nval;

	if ((uaddr & 3) || futex_read(uaddr, &uval))
		return;
	if (pending && uval == 0) {
		futex_wake_address_mode(uaddr, false);
		futex_wake_address_mode(uaddr, true);
		return;
	}
	if ((uval & FUTEX_TID_MASK) != (uint32_t)tid)
		return;
	nval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
	if (ksvc_copy_to_user((void *)(uintptr_t)uaddr, &nval, sizeof(nval)))
		return;
	futex_wake_address_mode(uaddr, false);
	futex_wake_address_mode(uaddr, true);
}

void futex_exit_robust_list(struct uthread *ut)
{
	struct robust_list_head h;
	uint64_t head = ut->robust_list, entry, pending, next;
	bool pi, pending_pi, next_pi;
	int tid = ut->task.tid;

	if (!head)
		return;
	futex_init_once();
	if (ksvc_copy_from_user(&h, (const void *)(uintptr_t)head, sizeof(h)))
		return;
	entry = (uint64_t)(uintptr_t)h.list.next & ~1ull;
	pi = (uint64_t)(uintptr_t)h.list.next & 1;
	if (robust_fetch(head + __builtin_offsetof(struct robust_list_head, list_op_pending),
			 &pending, &pending_pi))
		return;
	for (int limit = ROBUST_LIST_LIMIT; entry != head && limit > 0; limit--) {
		if (robust_fetch(entry, &next, &next_pi))
			return;
		/* the pending entry is handled last, once */
		if (entry != pending && !pi)
			robust_futex_death(entry + (uint64_t)h.futex_offset, tid, false);
		entry = next;
		pi = next_pi;
	}
	if (pending && !pending_pi)
		robust_futex_death(pending + (uint64_t)h.futex_offset, tid, true);
}
