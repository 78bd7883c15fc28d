/*
 * mutex.c - the kernel's sleeping mutex (struct kmutex, kernel/include/kern/mutex.h): one
 * owner task, waiters sleep on a wait queue and retry when the owner lets go.  mm->lock is one.
 *
 * What it does not do: priority inheritance, recursion, fairness (a woken waiter may lose to a
 * newcomer), use from interrupt context (kmutex_lock may sleep).
 */
#include <kern/assert.h>
#include <kern/mutex.h>
#include <kern/trace.h>

void kmutex_init(struct kmutex *m)
{
	spin_init(&m->lock);
	m->owner = NULL;
	waitq_init(&m->wq);
}

void kmutex_lock(struct kmutex *m)
{
	struct task *me = current_task();
	bool waited = false;

	for (;;) {
		unsigned long f = spin_lock_irqsave(&m->lock);

		if (!m->owner) {
			m->owner = me;
			spin_unlock_irqrestore(&m->lock, f);
			if (waited)
				trace_contention_end(m);
			return;
		}
		spin_unlock_irqrestore(&m->lock, f);
		if (!waited)
			trace_contention_begin(m);
		waited = true;
		wait_event(&m->wq, READ_ONCE(m->owner) == NULL);
	}
}

bool kmutex_trylock(struct kmutex *m)
{
	unsigned long f = spin_lock_irqsave(&m->lock);
	bool taken = !m->owner;

	if (taken)
		m->owner = current_task();
	spin_unlock_irqrestore(&m->lock, f);
	return taken;
}

void kmutex_unlock(struct kmutex *m)
{
	kmutex_unlock_for(m, current_task());
}

void kmutex_unlock_for(struct kmutex *m, struct task *owner)
{
	unsigned long f = spin_lock_irqsave(&m->lock);

	kassert(m->owner == owner);
	m->owner = NULL;
	spin_unlock_irqrestore(&m->lock, f);
	waitq_wake_one(&m->wq);
}
