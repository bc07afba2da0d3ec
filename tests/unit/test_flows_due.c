// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for flows_due() (daemon/model/flows_due.c): when a
 * flow is solved again and when its last solve is kept - the schedule
 * docs/daemon.md states, input by input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model/flows.h"
#include "daemon/model/flows_int.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/flows_fixture.h"
#include "tests/unit/unit_main.h"

/* One epoch of the standard traffic at @cpu_bound and @ns_per_pkt. */
static void feed(struct flows *f, uint64_t seq, double cpu_bound, double ns_per_pkt)
{
	struct rxb_epoch *e = epoch(seq, cpu_bound, 20000);

	e->socks[0].receiver_oncpu_ns = (uint64_t)(ns_per_pkt * 20000);
	e->socks[0].ran_on[0].oncpu_ns = e->socks[0].receiver_oncpu_ns;
	e->socks[0].cpu_ns_per_pkt = ns_per_pkt;
	flows_epoch(f, e, 1000);
	free(e);
}

/*
 * flows_due(): unchanged inputs keep the last solve (published as this
 * epoch's value), a load change is solved at once, a moved cost once the
 * solver's CPU share allows, and nothing waits longer than 10 s.
 */
static void test_solve_reuse(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	const struct flow *fl;
	uint64_t rate1, seq;

	(void)state;
	setup(&f, &pub);
	fl = &f.v[0];
	feed(&f, 1, 0, NS_PER_PKT);
	assert_int_equal(fl->m[0].solves, 1);
	rate1 = pub.last.rate_bps;
	/* The same traffic: no solve for 10 s of epochs (epoch s ends at
	 * s + 1 s), the same rate published as each epoch's value. */
	for (seq = 2; seq <= 10; seq++) {
		feed(&f, seq, 0, NS_PER_PKT);
		assert_int_equal(fl->m[0].solves, 1);
		assert_int_equal(fl->m[0].state, FLOW_MODEL);
		assert_int_equal(pub.last.epoch, seq);
		assert_int_equal(pub.last.rate_bps, rate1);
	}
	assert_int_equal(fl->m[0].solves_reused, 9);
	/* 10 s after the last solve: refreshed. */
	feed(&f, 11, 0, NS_PER_PKT);
	assert_int_equal(fl->m[0].solves, 2);
	/* A CPU hog arrives: solved at once, and the rate falls. */
	feed(&f, 12, 1, NS_PER_PKT);
	assert_int_equal(fl->m[0].solves, 3);
	assert_true(pub.last.rate_bps < rate1 * 0.7);
	/* The cost per packet moves: solved when the CPU share allows. The
	 * last solve "took" 100 ms: the next may come 2 s after it. */
	((struct flow *)fl)->m[0].good.solve_ms = 100;
	feed(&f, 13, 1, NS_PER_PKT * 1.5);
	assert_int_equal(fl->m[0].solves, 3);
	assert_int_equal(fl->m[0].solves_reused, 10);
	feed(&f, 14, 1, NS_PER_PKT * 1.5);
	assert_int_equal(fl->m[0].solves, 4);
	assert_int_equal(fl->m[0].good.epoch, 14);
	flows_finish(&f);
}

/*
 * feed()'s epoch with the receiver's off-CPU windows: 100 after preemption
 * of 4-8 us with 50 us runs between, 50 waits after a wake-up of 2-4 ms,
 * the longest @wake_max_ns, in 0.5 s of its active time.
 */
static void feed_windows(struct flows *f, uint64_t seq, double wake_max_ns)
{
	struct rxb_epoch *e = epoch(seq, 0, 20000);
	struct rxb_sock_meas *s = &e->socks[0];

	s->receivers_valid = true;
	s->active_ns = 0.5e9;
	s->offcpu_hist[12] = 100;
	s->run_before_preempt_ns = 50000;
	s->wake_hist[21] = 50;
	s->wake_max_ns = wake_max_ns;
	flows_epoch(f, e, 1000);
	free(e);
}

/*
 * With the windows' service model, steady windows keep the last solve, and
 * a longer longest wait after a wake-up alone (the rest unchanged) is
 * solved again: it moves the waits' loss.
 */
static void test_solve_windows_moved(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct flows_params p;
	const struct flow *fl;
	uint64_t seq;

	(void)state;
	setup(&f, &pub);
	params(&p);
	p.loss_model = BNECK_LOSS_SERVICE;
	assert_int_equal(flows_set_params(&f, &p), 0);
	fl = &f.v[0];
	feed_windows(&f, 1, 2.5e6);
	assert_int_equal(fl->m[0].solves, 1);
	assert_true(fl->m[0].good.inputs[0].wake_per_s > 0);
	check_rel_strict(fl->m[0].good.inputs[0].wake_max_s, 2.5e-3, 1e-12);
	for (seq = 2; seq <= 4; seq++)
		feed_windows(&f, seq, 2.5e6);
	assert_int_equal(fl->m[0].solves, 1);
	assert_int_equal(fl->m[0].solves_reused, 3);
	feed_windows(&f, 5, 3.5e6);
	assert_int_equal(fl->m[0].solves, 2);
	check_rel_strict(fl->m[0].good.inputs[0].wake_max_s, 3.5e-3, 1e-12);
	flows_finish(&f);
}

/*
 * feed_windows()'s epoch with @pkts arriving and read (in its 0.5 s
 * active); the epoch is the flows' latest (f->last) until the caller frees it.
 */
static struct rxb_epoch *feed_windows_at(struct flows *f, uint64_t seq, uint64_t pkts)
{
	struct rxb_epoch *e = epoch(seq, 0, pkts);
	struct rxb_sock_meas *s = &e->socks[0];

	s->receivers_valid = true;
	s->active_ns = 0.5e9;
	s->offcpu_hist[12] = 100;
	s->run_before_preempt_ns = 50000;
	s->wake_hist[21] = pkts / 400;
	s->wake_max_ns = 3e6;
	flows_epoch(f, e, 1000);
	return e;
}

/*
 * The windows by rate ([model] windows_by_rate): a second band that comes
 * (fed 1 s at another rate) is solved at once, over two pieces at the
 * bands' arrival rates; a socket buffer set between epochs
 * (flows_set_rcvbuf()) holds in every piece's stage, as the flow's
 * predicted vacations do: only the windows come from the bands.
 */
static void test_solve_windows_by_rate(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct flows_params p;
	const struct flow *fl;
	const struct flow_estimate *g;
	struct rxb_epoch *last;
	uint64_t solves;

	(void)state;
	setup(&f, &pub);
	params(&p);
	p.loss_model = BNECK_LOSS_SERVICE;
	p.windows_by_rate = true;
	assert_int_equal(flows_set_params(&f, &p), 0);
	fl = &f.v[0];
	g = &fl->m[0].good;
	free(feed_windows_at(&f, 1, 20000));
	free(feed_windows_at(&f, 2, 20000));
	assert_int_equal(g->nbands, 0);
	free(feed_windows_at(&f, 3, 60000));
	assert_int_equal(g->nbands, 0);
	solves = fl->m[0].solves;
	last = feed_windows_at(&f, 4, 60000);
	assert_int_equal(fl->m[0].solves, solves + 1);
	assert_int_equal(g->nbands, 2);
	check_rel_strict(g->band_at_bps[0], 40000.0 * 8 * g->xfer.payload_bytes, 1e-12);
	check_rel_strict(g->band_at_bps[1], 120000.0 * 8 * g->xfer.payload_bytes, 1e-12);
	check_rel_strict(g->band_b[0].wake_per_s, 50.0 / 0.5, 1e-12);
	check_rel_strict(g->band_b[1].wake_per_s, 150.0 / 0.5, 1e-12);
	assert_true(g->band_chosen < 2);
	assert_int_equal(flows_set_rcvbuf(&f, PORT, 1 << 20, true), 1);
	for (uint32_t j = 0; j < 2; j++) {
		assert_int_equal(f.ws.piece_st[j][0].queue_pkts, fl->inputs.stages[0].queue_pkts);
		assert_true(f.ws.piece_st[j][0].wake_per_s == g->band_b[j].wake_per_s);
	}
	flows_finish(&f);
	free(last);
}

/* One of a stage's inputs the solver takes, by its place in the struct. */
struct due_input {
	const char *name;
	size_t off;
	bool came_or_went;	/* 0 and back solved at once */
};

#define DUE_INPUT(field, now) { #field, offsetof(struct rxb_stage_inputs, field), now }

static const struct due_input due_inputs[] = {
	DUE_INPUT(mu_net_full_per_s, true),
	DUE_INPUT(sat_drain_pkts_per_s, true),
	DUE_INPUT(sat_drain_arrivals_pps, false),
	DUE_INPUT(mu_rel_sd, false),
	DUE_INPUT(quota_period_s, true),
	DUE_INPUT(quota_slow_s, false),
	DUE_INPUT(quota_slow_share, false),
	DUE_INPUT(quota_fast_share, false),
	DUE_INPUT(mu_net_per_s, false),
	DUE_INPUT(irq_ns_per_pkt, false),
};

static double *due_field(struct rxb_stage_inputs *in, const struct due_input *d)
{
	return (double *)((char *)in + d->off);
}

/*
 * Is the flow due at @after_ns past its last solve, with its stage 0 at
 * @now and the last solve's at @then?
 */
static bool due_at(struct flows *f, const struct rxb_stage_inputs *then,
		   const struct rxb_stage_inputs *now, uint64_t after_ns)
{
	struct flow *fl = &f->v[0];
	struct flow_model *m = &fl->m[0];
	struct rxb_epoch e = { .end_ns = m->good.epoch_end_ns + after_ns };

	m->good.inputs[0] = *then;
	fl->inputs.stages[0] = *now;
	return flows_due(f, fl, m, &e);
}

/*
 * Every input the solver takes makes the flow due when it moves: the drain
 * floor's drain and its arrivals, the deep queue's rate, the rate's
 * spread, a quota's phases (and, for comparison, the server's own rate and
 * the interrupts' cost). Moved by 10 %, each is due once the solver's CPU
 * share allows (the last solve took 100 ms: 2 s after it, not 1 ms
 * after); moved by 1 % (below the 3 % rule), not before the 10 s refresh;
 * one that came or went (0 now) at once.
 */
static void test_solve_inputs_moved(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_stage_inputs base, now;
	const uint64_t ms = 1000000;

	(void)state;
	setup(&f, &pub);
	feed(&f, 1, 0, NS_PER_PKT);
	assert_int_equal(f.v[0].m[0].solves, 1);
	f.v[0].m[0].good.solve_ms = 100;
	base = f.v[0].m[0].good.inputs[0];
	for (size_t i = 0; i < RXB_ARRAY_SIZE(due_inputs); i++)
		*due_field(&base, &due_inputs[i]) = 1000.0 * (i + 1);
	assert_false(due_at(&f, &base, &base, 2000 * ms));
	assert_true(due_at(&f, &base, &base, 10000 * ms));
	for (size_t i = 0; i < RXB_ARRAY_SIZE(due_inputs); i++) {
		const struct due_input *d = &due_inputs[i];

		print_message("%s\n", d->name);
		now = base;
		*due_field(&now, d) *= 1.10;
		assert_false(due_at(&f, &base, &now, 1 * ms));
		assert_true(due_at(&f, &base, &now, 2000 * ms));
		now = base;
		*due_field(&now, d) *= 1.01;
		assert_false(due_at(&f, &base, &now, 2000 * ms));
		now = base;
		*due_field(&now, d) = 0;
		assert_true(due_at(&f, &base, &now, 2000 * ms));
		assert_int_equal(due_at(&f, &base, &now, 1 * ms), d->came_or_went);
	}
	flows_finish(&f);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_solve_reuse),
	cmocka_unit_test(test_solve_windows_moved),
	cmocka_unit_test(test_solve_windows_by_rate),
	cmocka_unit_test(test_solve_inputs_moved),
)
