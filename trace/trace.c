/*
 * trace.c - the tracepoint table's lookups and use counts, and the common record header.
 *
 * What it does: finds an event by its id (binary search of the generated table, which is
 * sorted) or a syscall's enter/exit event by number (an index built at the first lookup);
 * counts the active perf events of each event (trace_on[], trace_syscalls_on) so the hooks
 * in kernel/ stay one load and a branch while nothing listens; fills the 8-byte common header
 * every record starts with.
 *
 * ABI: Linux 6.1 include/linux/trace_events.h struct trace_entry (unsigned short type,
 * unsigned char flags, unsigned char preempt_count, int pid); TRACE_FLAG_IRQS_OFF 0x01.
 * Portable: built into the kernel and into host tests.
 */
#include <stdatomic.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <kern/trace.h>

_Atomic int trace_on[TRACE_MAX_ID];
_Atomic int trace_syscalls_on;

static const struct trace_event *lookup(uint64_t id)
{
	unsigned int lo = 0, hi = trace_nr_events;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (trace_events[mid].id == id)
			return &trace_events[mid];
		if (trace_events[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct trace_event *trace_event_by_id(uint64_t id)
{
	const struct trace_event *ev = id < TRACE_MAX_ID ? lookup(id) : NULL;

	if (ev && ev->sc_nr >= 0 && !trace_syscall_exists((unsigned int)ev->sc_nr))
		return NULL;
	return ev;
}

/* index + 1 into trace_events of each syscall's enter [0] and exit [1] event; 0: none */
static uint16_t sc_index[2][NR_SYSCALLS];
static _Atomic int sc_index_built;

static void build_sc_index(void)
{
	for (unsigned int i = 0; i < trace_nr_events; i++) {
		const struct trace_event *ev = &trace_events[i];

		if (ev->sc_nr < 0 || ev->sc_nr >= NR_SYSCALLS)
			continue;
		sc_index[ev->name[5] == 'x'][ev->sc_nr] = (uint16_t)(i + 1); /* sys_e"x"it_ */
	}
	atomic_store_explicit(&sc_index_built, 1, memory_order_release);
}

const struct trace_event *trace_syscall_event(unsigned int nr, bool exit)
{
	if (!atomic_load_explicit(&sc_index_built, memory_order_acquire))
		build_sc_index(); /* idempotent: racing builders write the same values */
	if (nr >= NR_SYSCALLS || !sc_index[exit][nr] || !trace_syscall_exists(nr))
		return NULL;
	return &trace_events[sc_index[exit][nr] - 1];
}

void trace_use(uint64_t id, int delta)
{
	const struct trace_event *ev = id < TRACE_MAX_ID ? lookup(id) : NULL;

	if (!ev)
		return;
	atomic_fetch_add(&trace_on[id], delta);
	if (ev->sc_nr >= 0 || id == TRACE_ID_RAW_SYS_ENTER || id == TRACE_ID_RAW_SYS_EXIT)
		atomic_fetch_add(&trace_syscalls_on, delta);
}

void trace_common(void *rec, unsigned int id, bool irqs_off)
{
	uint8_t *p = rec;
	uint16_t type = (uint16_t)id;
	int32_t pid = ksvc_current_tid();

	memcpy(p, &type, 2);
	/* TRACE_FLAG_IRQS_OFF, TRACE_FLAG_HARDIRQ */
	p[2] = (uint8_t)((irqs_off ? 0x01 : 0x00) | (ksvc_in_irq() ? 0x08 : 0x00));
	p[3] = 0; /* preempt count: the kernel is not preemptible where the hooks run */
	memcpy(p + 4, &pid, 4);
}
