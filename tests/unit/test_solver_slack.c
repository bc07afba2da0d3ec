// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The time slack (struct bneck_xfer.time_slack_rel): the lowest rate
 * below the least T from which T stays within the slack all the way up,
 * against a brute-force walk down a fine grid of rates, each rate's T
 * from a one-rate evaluation (bneck_eval_at(), the objective: expected
 * over an uncertain rate where there is one):
 *  - one stage, rates certain (the walk uses the sweep's curve) and
 *    uncertain (it evaluates the expectation);
 *  - pieces: the walk crosses into the piece below where that piece's top
 *    is within the slack, and stops at the pieces' border where it is not;
 *  - no slack is the plain search, to the bit; the least is reported
 *    either way; a slack outside [0, 1] is refused.
 * The set-up is the e2e testbed's receiver: a 64 MiB socket (29000
 * packets), 200 MB at 100 ms one way, burst rounds.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/bneck_pieces.h"
#include "bneck_fixture.h"
#include "tests/unit/unit_main.h"

#define POINTS 200
#define FINE 1500

static const struct bneck_xfer xfer = {
	.payload_bytes = 1472, .file_bytes = 200e6, .one_way_delay_s = 0.1,
	.line_rate_bps = 10e9, .min_rate_bps = 1e8, .points = POINTS,
	.rounds = BNECK_ROUNDS_BURST,
};

/* A softirq-served stage draining @drain_bps, its rate uncertain by @sd. */
static struct rxb_stage_inputs stage(double drain_bps, double sd)
{
	struct rxb_stage_inputs s = {
		.load_independent = true, .queue_pkts = 29000, .batch_pkts = 64,
		.rule = RXB_BATCH_PARTIAL, .mu_rel_sd = sd,
	};

	s.mu_net_per_s = drain_bps / (8.0 * xfer.payload_bytes * s.batch_pkts);
	return s;
}

/* The objective at @rate_bps with the stage of its piece. */
static double time_at(struct bneck_ws *ws, const struct bneck_piece *p, uint32_t npieces,
		      double rate_bps)
{
	const struct rxb_stage_inputs *s = p[bneck_piece_of(p, npieces, rate_bps)].stages;
	struct bneck_at at;

	assert_int_equal(bneck_eval_at(ws, s, 1, &xfer, NULL, rate_bps, &at), 0);
	return at.pt.time_s;
}

/*
 * The brute-force walk: from @least_bps down a grid of FINE rates to
 * @lo_bps while T stays at most @time_max_s; the lowest rate within, and
 * in *@out_bps the grid rate below it (0: the walk reached @lo_bps).
 */
static double walk_fine(struct bneck_ws *ws, const struct bneck_piece *p, uint32_t npieces,
			double least_bps, double lo_bps, double time_max_s, double *out_bps)
{
	double within = least_bps;

	*out_bps = 0.0;
	for (int i = 1; i <= FINE; i++) {
		double rate = least_bps - (least_bps - lo_bps) * i / FINE;

		if (time_at(ws, p, npieces, rate) > time_max_s) {
			*out_bps = rate;
			break;
		}
		within = rate;
	}
	return within;
}

/*
 * @r (a solve with @slack) against the walk over [@lo_bps, its least]: T
 * at its rate within the slack, the rate between the fine walk's last
 * within and first outside.
 */
static void check_walk(struct bneck_ws *ws, const struct bneck_piece *p, uint32_t npieces,
		       const struct bneck_result *r, double slack, double lo_bps, const char *what)
{
	double time_max_s = r->least_time_s * (1.0 + slack), out_bps, within_bps;

	within_bps = walk_fine(ws, p, npieces, r->least_rate_bps, lo_bps, time_max_s, &out_bps);
	fprintf(stderr, "%s: least %.4f Gb/s T %.4f s; slack %.2f: %.4f Gb/s T %.4f s "
		"(fine walk: within %.4f, out %.4f)\n", what, r->least_rate_bps / 1e9,
		r->least_time_s, slack, r->rate_bps / 1e9, r->time_s, within_bps / 1e9,
		out_bps / 1e9);
	assert_true(out_bps > 0.0);	/* the walk ends inside the range */
	assert_true(r->rate_bps < r->least_rate_bps);
	assert_true(r->rate_bps <= within_bps * (1 + 1e-9));
	assert_true(r->rate_bps >= out_bps);
	assert_true(time_at(ws, p, npieces, r->rate_bps) <= time_max_s);
	/* The result's burst figures are computed in full (bneck.h: within 1e-6). */
	check_rel(r->time_s, time_at(ws, p, npieces, r->rate_bps), 1e-6, "T at the rate");
}

static void test_one_stage(void **state)
{
	const double sds[] = { 0.0, 0.08 };
	struct bneck_ws ws;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	for (size_t i = 0; i < 2; i++) {
		struct rxb_stage_inputs s = stage(5.4e9, sds[i]);
		struct bneck_piece p = { .at_bps = 1e9, .stages = &s };
		struct bneck_xfer x = xfer;
		struct bneck_result plain, r;

		assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &plain), 0);
		assert_true(plain.least_rate_bps == plain.rate_bps);
		assert_true(plain.least_time_s == plain.time_s);
		x.time_slack_rel = 0.02;
		assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
		assert_true(r.least_rate_bps == plain.rate_bps);
		/* Before the chosen point's burst figures in full (bneck.h: 1e-6). */
		check_rel(r.least_time_s, plain.time_s, 1e-6, "least T");
		assert_true(r.line_time_s == plain.line_time_s);
		check_walk(&ws, &p, 1, &r, 0.02, x.min_rate_bps, sds[i] > 0 ? "uncertain" : "certain");
	}
	bneck_ws_finish(&ws);
}

/*
 * Two pieces: windows-free stages draining 5.4 Gb/s (measured at 3 Gb/s)
 * and 6.5 Gb/s (at 8 Gb/s), split at 4.9 Gb/s. With a slack of 0.6 the
 * walk from the fast piece's least crosses the border and goes on in the
 * slow one; with the slow piece draining 1 Gb/s its top is far over, and
 * the walk stops at the border.
 */
static void test_pieces(void **state)
{
	struct rxb_stage_inputs slow = stage(5.4e9, 0.0), fast = stage(6.5e9, 0.0);
	struct bneck_piece p[2] = {
		{ .at_bps = 3e9, .stages = &slow }, { .at_bps = 8e9, .stages = &fast },
	};
	double border_bps = sqrt(3e9 * 8e9);
	struct bneck_xfer x = xfer;
	struct bneck_result plain, r;
	struct bneck_ws ws;
	uint32_t which;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_compute_pieces(&ws, p, 2, 1, &x, NULL, &plain, &which), 0);
	assert_int_equal(which, 1);
	x.time_slack_rel = 0.6;
	assert_int_equal(bneck_compute_pieces(&ws, p, 2, 1, &x, NULL, &r, &which), 0);
	assert_true(r.least_rate_bps == plain.rate_bps);
	assert_true(r.least_time_s == plain.time_s);
	assert_int_equal(r.npoints, plain.npoints);
	assert_int_equal(which, 0);
	assert_true(r.rate_bps < border_bps);
	check_walk(&ws, p, 2, &r, 0.6, x.min_rate_bps, "pieces, crossing");

	slow = stage(1e9, 0.0);
	assert_true(time_at(&ws, p, 2, border_bps * (1 - 1e-9)) > plain.time_s * 1.6);
	assert_int_equal(bneck_compute_pieces(&ws, p, 2, 1, &x, NULL, &r, &which), 0);
	assert_int_equal(which, 1);
	check_rel(r.rate_bps, border_bps, 1e-12, "stopped at the border");
	assert_true(r.time_s <= r.least_time_s * 1.6);
	bneck_ws_finish(&ws);
}

static void test_refused(void **state)
{
	struct rxb_stage_inputs s = stage(5.4e9, 0.0);
	struct bneck_xfer x = xfer;
	struct bneck_ws ws;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	bneck_fixture_refuses(&ws, &s, &x, &x.time_slack_rel, -0.01, 1.01, NAN, INFINITY);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_one_stage),
	cmocka_unit_test(test_pieces),
	cmocka_unit_test(test_refused),
)
