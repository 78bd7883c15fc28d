/*
 * test_perf_bpf_attach.c - perf/bpf_attach.c against fake programs: one program per event
 * (EEXIST), PERF_EVENT programs only (EINVAL), detach by program (a link only removes its own),
 * inheritance taking a reference, the overflow filter (the program's ctx: regs, period, addr,
 * cookie; return 0 drops), the per-CPU recursion guard dropping a nested overflow, and the
 * references a program gains and loses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include "../fakes/ksvc_fake.h"
#include "../../perf/perf_internal.h"

/* ---- fake programs ---- */

struct bpf_prog {
	uint32_t type;
	int refs;
	uint64_t ret;
	int runs;
	struct bpf_perf_event_data_kern seen;
	struct perf_event *nest; /* run the filter on this event from inside the program */
	bool nested_kept;
};

uint32_t bpf_prog_type(const struct bpf_prog *p) { return p->type; }
void bpf_prog_get(struct bpf_prog *p) { p->refs++; }
void bpf_prog_put(struct bpf_prog *p) { p->refs--; }
uint32_t bpf_prog_id(const struct bpf_prog *p) { (void)p; return 1; }
void bpf_register_perf_ops(const struct bpf_perf_ops *ops) { (void)ops; }

uint64_t bpf_prog_run(const struct bpf_prog *cp, void *ctx)
{
	struct bpf_prog *p = (struct bpf_prog *)cp;

	p->runs++;
	memcpy(&p->seen, ctx, sizeof(p->seen));
	if (p->nest) {
		uint64_t regs[34] = { 0 };

		p->nested_kept = perf_bpf_filter(p->nest, 1, regs, 0);
	}
	return p->ret;
}

/* bpf/'s: the ctx it builds, as a program would see it */
uint64_t bpf_prog_run_perf(const struct bpf_prog *p, const uint64_t *regs, uint64_t period,
			   uint64_t addr, void *event, uint64_t cookie)
{
	struct bpf_perf_event_data_kern ctx;

	memset(&ctx, 0, sizeof(ctx));
	memcpy(&ctx.data.regs, regs, sizeof(ctx.data.regs));
	ctx.data.sample_period = period;
	ctx.data.addr = addr;
	ctx.event = event;
	ctx.cookie = cookie;
	ctx.regs = regs;
	return bpf_prog_run(p, &ctx);
}

/* what bpf_attach.c calls in core.c / sample.c: not reached by these tests */
int perf_event_get_fd(int fd, struct perf_event **out) { (void)fd; (void)out; return -EBADF; }
int perf_event_get_task_fd(int tid, int fd, struct perf_event **out)
{
	(void)tid; (void)fd; (void)out;
	return -EBADF;
}
void perf_event_put(struct perf_event *e) { (void)e; }
long perf_output_raw(struct perf_event *e, const uint64_t *regs, bool user, const void *raw,
		     uint32_t size)
{
	(void)e; (void)regs; (void)user; (void)raw; (void)size;
	return -ENOSPC;
}
long perf_bpf_callchain(const uint64_t *regs, bool ru, bool user, uint64_t *ips, uint32_t max)
{
	(void)regs; (void)ru; (void)user; (void)ips; (void)max;
	return 0;
}

static struct perf_kevent ka, kb;

static struct perf_event *ev(struct perf_kevent *k)
{
	memset(k, 0, sizeof(*k));
	k->ev.core = &k->core;
	spin_init(&k->core.bpf_lock);
	return &k->ev;
}

static void test_attach_rules(void **state)
{
	struct bpf_prog p = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1 };
	struct bpf_prog q = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1 };
	struct bpf_prog s = { .type = BPF_PROG_TYPE_SOCKET_FILTER, .refs = 1 };
	struct perf_event *e = ev(&ka);

	(void)state;
	assert_int_equal(perf_event_set_bpf(e, &s, 0), -EINVAL);
	assert_int_equal(perf_event_set_bpf(e, &p, 7), 0);
	assert_ptr_equal(perf_core(e)->prog, &p);
	assert_int_equal(perf_core(e)->bpf_cookie, 7);
	assert_int_equal(perf_event_set_bpf(e, &q, 0), -EEXIST);
	assert_int_equal(perf_event_set_bpf(e, &s, 0), -EEXIST); /* EEXIST before the type */
	perf_event_clear_bpf(e, &q); /* not its program: stays */
	assert_ptr_equal(perf_core(e)->prog, &p);
	assert_int_equal(p.refs, 1);
	perf_event_clear_bpf(e, &p);
	assert_null(perf_core(e)->prog);
	assert_int_equal(p.refs, 0); /* the event's reference went */
	assert_int_equal(perf_event_set_bpf(e, &q, 0), 0);
	perf_event_clear_bpf(e, NULL); /* any program */
	assert_null(perf_core(e)->prog);
	assert_int_equal(q.refs, 0);
}

/* Tracepoint events: TRACEPOINT programs only (EINVAL before EEXIST), kept with the
 * tracepoint: they run at every hit of that id, see the record with the registers' address in
 * its first word, and a 0 drops the hit; the tracepoint is on while a program is attached. */
static void test_tracepoint(void **state)
{
	struct bpf_prog p = { .type = BPF_PROG_TYPE_TRACEPOINT, .refs = 1, .ret = 1 };
	struct bpf_prog pe = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1 };
	struct perf_event *e = ev(&ka), *child = ev(&kb);
	uint64_t regs[34] = { 0 }, rec[3] = { 0xffff, 42, 43 };
	struct perf_tp_hit hit = { 181, rec, sizeof(rec), regs, true };

	(void)state;
	e->attr.type = PERF_TYPE_TRACEPOINT;
	e->attr.config = 181;
	child->attr = e->attr;
	ksvc_fake.trace_uses = 0;
	assert_true(perf_tp_bpf_run(&hit)); /* nothing attached: kept */
	assert_int_equal(perf_event_set_bpf(e, &pe, 0), -EINVAL);
	assert_int_equal(perf_event_set_bpf(e, &p, 0), 0);
	assert_int_equal(perf_event_set_bpf(e, &pe, 0), -EINVAL); /* the type before EEXIST */
	assert_int_equal(ksvc_fake.trace_uses, 1);
	perf_event_inherit_bpf(child, e);
	assert_null(perf_core(child)->prog); /* the tracepoint's program covers children */
	assert_true(perf_tp_bpf_run(&hit));
	assert_int_equal(p.runs, 1);
	uint64_t first;

	memcpy(&first, &p.seen, 8);
	assert_int_equal(first, (uintptr_t)regs);
	assert_int_equal(((uint64_t *)&p.seen)[1], 42);
	hit.id = 180; /* another tracepoint: not run */
	assert_true(perf_tp_bpf_run(&hit));
	assert_int_equal(p.runs, 1);
	hit.id = 181;
	p.ret = 0;
	assert_false(perf_tp_bpf_run(&hit));
	perf_tp_bpf_release(e); /* the event goes away */
	assert_int_equal(ksvc_fake.trace_uses, 0);
	assert_true(perf_tp_bpf_run(&hit));
	assert_int_equal(p.runs, 2);
	perf_event_clear_bpf(e, NULL);
	assert_int_equal(ksvc_fake.trace_uses, 0);
	assert_int_equal(p.refs, 0);
}

static void test_inherit(void **state)
{
	struct bpf_prog p = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1 };
	struct perf_event *parent = ev(&ka), *child = ev(&kb);

	(void)state;
	perf_event_inherit_bpf(child, parent);
	assert_null(perf_core(child)->prog);
	assert_int_equal(perf_event_set_bpf(parent, &p, 99), 0);
	perf_event_inherit_bpf(child, parent);
	assert_ptr_equal(perf_core(child)->prog, &p);
	assert_int_equal(perf_core(child)->bpf_cookie, 99);
	assert_int_equal(p.refs, 2);
	perf_event_clear_bpf(parent, NULL);
	perf_event_clear_bpf(child, NULL);
	assert_int_equal(p.refs, 0);
}

static void test_filter(void **state)
{
	struct bpf_prog p = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1, .ret = 1 };
	struct perf_event *e = ev(&ka);
	uint64_t regs[34];

	(void)state;
	for (int i = 0; i < 34; i++)
		regs[i] = 0x1000 + i;
	assert_true(perf_bpf_filter(e, 10, regs, 0)); /* no program: keep */
	assert_int_equal(perf_event_set_bpf(e, &p, 0xc00c1e), 0);
	assert_true(perf_bpf_filter(e, 4000, regs, 0xadd));
	assert_int_equal(p.runs, 1);
	assert_memory_equal(&p.seen.data.regs, regs, sizeof(p.seen.data.regs));
	assert_int_equal(p.seen.data.sample_period, 4000);
	assert_int_equal(p.seen.data.addr, 0xadd);
	assert_int_equal(p.seen.cookie, 0xc00c1e);
	assert_ptr_equal(p.seen.event, e);
	assert_ptr_equal(p.seen.regs, regs); /* the helpers' registers */
	p.ret = 0;
	assert_false(perf_bpf_filter(e, 4000, regs, 0)); /* 0 drops */
	p.ret = 0x100000000ull;
	assert_true(perf_bpf_filter(e, 4000, regs, 0)); /* any non-zero r0 keeps */
	perf_event_clear_bpf(e, NULL);
}

static void test_recursion_guard(void **state)
{
	struct bpf_prog inner = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1, .ret = 1 };
	struct bpf_prog outer = { .type = BPF_PROG_TYPE_PERF_EVENT, .refs = 1, .ret = 1 };
	struct perf_event *a = ev(&ka), *b = ev(&kb);
	uint64_t regs[34] = { 0 };

	(void)state;
	assert_int_equal(perf_event_set_bpf(a, &outer, 0), 0);
	assert_int_equal(perf_event_set_bpf(b, &inner, 0), 0);
	outer.nest = b; /* an overflow of b while a's program runs on this CPU */
	outer.nested_kept = true;
	assert_true(perf_bpf_filter(a, 1, regs, 0));
	assert_int_equal(inner.runs, 0);
	assert_false(outer.nested_kept); /* dropped without running b's program */
	outer.nest = NULL;
	assert_true(perf_bpf_filter(b, 1, regs, 0)); /* the guard was released */
	assert_int_equal(inner.runs, 1);
	perf_event_clear_bpf(a, NULL);
	perf_event_clear_bpf(b, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_rules),
		cmocka_unit_test(test_tracepoint),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_recursion_guard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
