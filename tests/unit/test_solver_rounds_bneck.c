// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bneck with burst rounds (BNECK_ROUNDS_BURST) and loss in episodes
 * against independent truths: the e2e testbed's numbers (docs/e2e.md
 * §1), the rounds iterated one by one, and every point of the curve
 * recomputed here with bulkq_burst() and rbudp_time_burst() at its rate.
 * The burst model itself is test_solver_rounds.c's.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/bulkq.h"
#include "solver/rbudp.h"
#include "tests/unit/bneck_fixture.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"

/*
 * The e2e testbed's receiver as one load-independent stage: @cap_bps of
 * @payload_bytes packets served in batches of @batch_pkts, a queue of
 * @queue_pkts (docs/e2e.md §1).
 */
static struct rxb_stage_inputs testbed_stage(double cap_bps, double payload_bytes,
					     uint32_t batch_pkts, uint32_t queue_pkts)
{
	const double N = batch_pkts;

	return (struct rxb_stage_inputs){
		.load_independent = true, .queue_pkts = queue_pkts, .batch_pkts = batch_pkts,
		.rule = RXB_BATCH_PARTIAL,
		.mu_net_per_s = cap_bps / (N * payload_bytes * 8.0),
	};
}

/* The testbed's 200 MB transfer by burst rounds, swept from 100 Mb/s to 6 Gb/s. */
static struct bneck_xfer testbed_xfer(double payload_bytes, double one_way_delay_s,
				      uint32_t points)
{
	return (struct bneck_xfer){
		.payload_bytes = payload_bytes, .file_bytes = 200e6,
		.one_way_delay_s = one_way_delay_s, .line_rate_bps = 6e9, .min_rate_bps = 1e8,
		.points = points, .rounds = BNECK_ROUNDS_BURST,
	};
}

/* A workspace for @x's points, and bneck's answer for @s and @x in it. */
static void testbed_solve(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
			  const struct bneck_xfer *x, struct bneck_result *r)
{
	assert_int_equal(bneck_ws_init(ws, x->points), 0);
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, r), 0);
}

/* bneck with burst rounds: the e2e testbed's numbers (docs/e2e.md §1). */
static void test_bneck_burst(void **state)
{
	/* k = 2: 2.43 Gb/s of 1472-byte payloads, N 42, K 3641. */
	struct rxb_stage_inputs s = testbed_stage(2.43e9, 1472.0, 42, 3641);
	struct bneck_xfer x = testbed_xfer(1472.0, 0.01, 200);
	struct bneck_ws ws;
	struct bneck_result rb, rs;

	(void)state;
	testbed_solve(&ws, &s, &x, &rb);
	x.rounds = BNECK_ROUNDS_SEED;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &rs), 0);
	fprintf(stderr, "  testbed k=2: burst rate %.3g T %.4g (line: T %.4g, loss %.3f);"
		" seed rate %.3g T %.4g (line T %.4g)\n",
		rb.rate_bps, rb.time_s, rb.line_time_s, rb.line_loss, rs.rate_bps,
		rs.time_s, rs.line_time_s);
	/* Above capacity the burst model is flatter than eq. (3). */
	assert_true(rb.line_time_s < rs.line_time_s);
	assert_true(rb.time_s <= rs.time_s * (1 + 1e-9));
	assert_true(rb.stage[0].absorb_pkts >= 0.0);
	/* Workspace growth with K, and a bad round model. */
	s.queue_pkts = 40000;
	x.rounds = BNECK_ROUNDS_BURST;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &rb), 0);
	assert_true(ws.qwork_len >= BULKQ_BURST_WORK(40000));
	x.rounds = (enum bneck_rounds)7;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &rb), -EINVAL);
	bneck_ws_finish(&ws);
	assert_string_equal(bneck_rounds_name(BNECK_ROUNDS_BURST), "burst");
	assert_string_equal(bneck_rounds_name(BNECK_ROUNDS_SEED), "seed");
}

/*
 * Loss in episodes of m packets: a resend round happens with probability
 * min(1, n_i / m). Against the rounds iterated one by one here (the map
 * n -> max(0, n l - c)), which the solver sums in closed form per piece;
 * m = 0 and m = 1 are the same model; m < 1 is refused.
 */
static void test_loss_episodes(void **state)
{
	const struct {
		double l, c, n0;
	} cases[] = {
		{ 0.3, 0.0, 1e5 },	/* geometric: Banerjee et al.'s */
		{ 0.01, 0.0, 136240 },
		{ 0.5, 40.0, 1e5 },	/* absorbed: ends after a few rounds */
		{ 0.00275, 0.0, 136240 },	/* the e2e testbed's knee at k = 2 */
		{ 0.9, 3641.0, 142000 },	/* far above capacity */
	};
	const double ms[] = { 1.0, 7.5, 2000.0, 1e5 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rbudp_stage st = {
			.loss = cases[i].l, .pass = 1.0 - cases[i].l,
			.absorb_pkts = cases[i].c,
		};
		struct rbudp_params rp = {
			.file_bytes = cases[i].n0 * 1000.0, .payload_bytes = 1000.0,
			.one_way_delay_s = 0.1,
		};
		struct rbudp_time t0, t;

		assert_int_equal(rbudp_time_burst(&rp, 1e8, &st, 1, &t0), 0);
		for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
			double m = ms[j], x = cases[i].n0, N = 0.0, P = 0.0;
			double tol;

			/* Far below a packet the rest adds < 1e-12 of a round. */
			for (int r = 0; r < 100000 && x > 1e-15; r++) {
				x = fmax(0.0, x * cases[i].l - cases[i].c);
				N += fmin(1.0, x / m);
				P += x;
			}
			rp.loss_episode_pkts = m;
			assert_int_equal(rbudp_time_burst(&rp, 1e8, &st, 1, &t), 0);
			fprintf(stderr, "  l %g c %g m %g: N_resend %.6g (iterated %.6g), resent %.6g (%.6g)\n",
				cases[i].l, cases[i].c, m, t.n_resend, N, t.resend_pkts, P);
			tol = 1e-9 * fmax(1.0, N);
			check_abs(t.n_resend, N, tol, "N_resend with episodes");
			check_abs(t.resend_pkts, P, 1e-9 * fmax(1.0, P), "packets resent");
			/* The packets resent do not depend on m; the rounds fall with it. */
			check_abs(t.resend_pkts, t0.resend_pkts, 1e-9 * fmax(1.0, P), "resent vs m = 0");
			assert_true(t.n_resend <= t0.n_resend * (1.0 + 1e-12));
			check_abs(t.time_s, t.first_s + t.resend_s + t.bitmap_s + t.drain_s,
				  1e-12 * t.time_s, "T's terms");
			if (m == 1.0)
				check_abs(t.time_s, t0.time_s, 1e-12 * t0.time_s, "m = 1 is m = 0");
		}
		rp.loss_episode_pkts = 0.5;
		assert_int_equal(rbudp_time_burst(&rp, 1e8, &st, 1, &t), -EINVAL);
		rp.loss_episode_pkts = INFINITY;
		assert_int_equal(rbudp_time_burst(&rp, 1e8, &st, 1, &t), -EINVAL);
	}
}

/*
 * With episodes a loss near the knee costs a round only sometimes, so the
 * optimum moves up towards the capacity and T there falls; a bad m is
 * refused.
 */
static void test_bneck_episodes(void **state)
{
	const double cap_bps = 2.75e9;
	struct rxb_stage_inputs s = testbed_stage(cap_bps, 1468.0, 106, 3642);
	struct bneck_xfer x = testbed_xfer(1468.0, 0.1, 400);
	struct bneck_ws ws;
	struct bneck_result r1, r2;

	(void)state;
	testbed_solve(&ws, &s, &x, &r1);
	x.loss_episode_pkts = 2000.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r2), 0);
	fprintf(stderr, "  k=2 knee, 100 ms: m = 1: %.4g b/s T %.4g s; m = 2000: %.4g b/s T %.4g s\n",
		r1.rate_bps, r1.time_s, r2.rate_bps, r2.time_s);
	assert_true(r2.rate_bps >= r1.rate_bps);
	assert_true(r2.time_s <= r1.time_s);
	assert_true(r2.rate_bps <= 1.1 * cap_bps);
	bneck_fixture_refuses(&ws, &s, &x, &x.loss_episode_pkts, 0.9, NAN);
	bneck_ws_finish(&ws);
}

/* The queue of a load-independent stage (mu = mu_net) fed at @rate_bps. */
static struct bulkq_params stage_queue(const struct rxb_stage_inputs *s,
				       double payload_bytes, double rate_bps)
{
	return (struct bulkq_params){
		.arrival_per_s = rate_bps / (8.0 * payload_bytes),
		.service_per_s = s->mu_net_per_s, .queue_pkts = s->queue_pkts,
		.batch_pkts = s->batch_pkts, .rule = s->rule,
	};
}

/*
 * bneck_compute() skips bulkq_burst() where loss x file packets < 1e-6.
 * Every point of its curve must equal T computed here with the absorption
 * at every rate (a one-stage, load-independent queue: mu is mu_net), and
 * the reported point carries its queue figures in full.
 */
static void test_bneck_burst_skip_exact(void **state)
{
	const struct rxb_stage_inputs s = testbed_stage(2.43e9, 1472.0, 42, 3641);
	struct bneck_xfer x = testbed_xfer(1472.0, 0.01, 120);
	const struct rbudp_params rp = {
		.file_bytes = x.file_bytes, .payload_bytes = x.payload_bytes,
		.one_way_delay_s = x.one_way_delay_s,
	};
	double *work = calloc(BULKQ_BURST_WORK(3641), sizeof(double));
	struct bneck_ws ws;
	struct bneck_result res;
	unsigned skipped = 0;

	(void)state;
	assert_non_null(work);
	testbed_solve(&ws, &s, &x, &res);
	for (uint32_t i = 0; i < x.points; i++) {
		const struct bneck_point *pt = &res.curve[i];
		const struct bulkq_params q = stage_queue(&s, x.payload_bytes, pt->rate_bps);
		struct bulkq_burst_result br;
		struct bulkq_result r;
		struct rbudp_stage st;
		struct rbudp_time t;

		assert_int_equal(bulkq_loss(&q, &r), 0);
		assert_int_equal(bulkq_burst(&q, work, &br), 0);
		st = (struct rbudp_stage){ r.loss, r.pass, br.absorb_pkts,
					   s.mu_net_per_s * s.batch_pkts };
		assert_int_equal(rbudp_time_burst(&rp, pt->rate_bps / 8.0, &st, 1, &t), 0);
		if (r.loss * x.file_bytes / x.payload_bytes < 1e-6 && br.absorb_pkts > 0)
			skipped++;
		check_abs(pt->time_s, t.time_s, 1e-9 * t.time_s, "T with full absorption");
	}
	/* The case exercises the skip: the rates below capacity. */
	assert_true(skipped > 10);
	{
		const struct bulkq_params q = stage_queue(&s, x.payload_bytes, res.rate_bps);
		struct bulkq_burst_result br;

		assert_int_equal(bulkq_burst(&q, work, &br), 0);
		check_abs(res.stage[0].absorb_pkts, br.absorb_pkts, 1e-12, "absorb at the optimum");
		check_abs(res.stage[0].mean_queue_pkts, br.mean_queue_pkts, 1e-9, "E[Q] at the optimum");
	}
	bneck_ws_finish(&ws);
	free(work);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_bneck_burst),
	cmocka_unit_test(test_loss_episodes),
	cmocka_unit_test(test_bneck_episodes),
	cmocka_unit_test(test_bneck_burst_skip_exact),
)
