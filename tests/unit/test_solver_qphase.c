// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loss to a co-runner's CPU quota (solver/qphase.h) against
 * independent truths:
 *  - where the fast phase empties the queue, every period starts empty
 *    and loses ((λ - c s_slow) T_s - K)+: that over λ P, nothing absorbed,
 *    one losing period per P;
 *  - far above the mean drain the queue never empties: the loss is
 *    1 - c (s_slow T_s + s_fast (P - T_s)) / (λ P);
 *  - a fluid queue stepped in time (P / 4000) from empty over 400 periods,
 *    random phases and rates: the last period's loss and what the periods
 *    before it lost less (the absorption) within the steps' rounding;
 *  - inputs out of range: -EINVAL;
 *  - bneck_compute() under the service model with the phases: each point's
 *    stage loss is the first closed form while the receiver keeps up, the
 *    first lossy rate is where a slow phase fills the queue, and the
 *    chosen rate lies at it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/qphase.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

/* Two busy loops held to 25 % of a CPU beside the receiver: 37.5 ms of 100 at 1/3. */
static struct qphase_in quota_in(double c)
{
	return (struct qphase_in){
		.period_s = 0.1, .slow_s = 0.0375, .slow_share = 1.0 / 3.0, .fast_share = 1.0,
		.queue_pkts = 3641.0, .on_pkts_per_s = c,
	};
}

static void test_empty_periods(void **state)
{
	struct qphase_in in = quota_in(1e6);
	struct qphase_eval e;

	(void)state;
	for (double lambda = 1e5; lambda < 6.5e5; lambda *= 1.03) {
		double over = (lambda - in.on_pkts_per_s * in.slow_share) * in.slow_s -
			      in.queue_pkts;
		double want = over > 0.0 ? over / (lambda * in.period_s) : 0.0;

		/* The fast phase empties what the slow one left (at most K). */
		assert_true((in.on_pkts_per_s - lambda) * (in.period_s - in.slow_s) >=
			    in.queue_pkts);
		assert_int_equal(qphase_eval(&in, lambda, &e), 0);
		assert_true(fabs(e.loss - want) <= 1e-12 * fmax(want, 1e-3));
		assert_true(e.absorb_pkts == 0.0);
		assert_true(e.lossy_per_s == (want > 0.0 ? 1.0 / in.period_s : 0.0));
	}
}

static void test_overload(void **state)
{
	struct qphase_in in = quota_in(1e6);
	double mean = in.on_pkts_per_s * (in.slow_share * in.slow_s +
					  in.fast_share * (in.period_s - in.slow_s)) / in.period_s;
	struct qphase_eval e;

	(void)state;
	for (double lambda = 1.3e6; lambda < 5e6; lambda *= 1.2) {
		assert_int_equal(qphase_eval(&in, lambda, &e), 0);
		assert_true(fabs(e.loss - (1.0 - mean / lambda)) <= 1e-12);
		/* A round from empty fills K before it loses: K absorbed. */
		assert_true(fabs(e.absorb_pkts - in.queue_pkts) <= 1e-6 * in.queue_pkts);
	}
}

/* The fluid queue stepped in time: per-period losses into @lost (@n periods). */
static void simulate(const struct qphase_in *in, double lambda, int n, double *lost)
{
	const int steps = 4000;
	double dt = in->period_s / steps, q = 0.0;
	int slow_steps = (int)lround(in->slow_s / dt);

	for (int p = 0; p < n; p++) {
		lost[p] = 0.0;
		for (int s = 0; s < steps; s++) {
			double share = s < slow_steps ? in->slow_share : in->fast_share;

			q += (lambda - in->on_pkts_per_s * share) * dt;
			if (q > in->queue_pkts) {
				lost[p] += q - in->queue_pkts;
				q = in->queue_pkts;
			}
			if (q < 0.0)
				q = 0.0;
		}
	}
}

static void test_against_simulation(void **state)
{
	enum { PERIODS = 400 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	double lost[PERIODS];
	int checked = 0;

	(void)state;
	for (int i = 0; i < 60; i++) {
		struct qphase_in in = {
			.period_s = 0.01 + 0.2 * test_uniform_open(&rng),
			.slow_share = 0.05 + 0.9 * test_uniform_open(&rng),
			.queue_pkts = 200.0 + 8000.0 * test_uniform_open(&rng),
			.on_pkts_per_s = 2e5 + 2e6 * test_uniform_open(&rng),
		};
		double mean, lambda, absorb = 0.0, last;
		struct qphase_eval e;

		/* On the stepping's grid, so that both see the same phases. */
		in.slow_s = in.period_s * round(4000.0 * (0.1 + 0.8 * test_uniform_open(&rng))) / 4000.0;
		in.fast_share = in.slow_share + (1.0 - in.slow_share) * test_uniform_open(&rng);
		mean = in.on_pkts_per_s * (in.slow_share * in.slow_s +
					   in.fast_share * (in.period_s - in.slow_s)) / in.period_s;
		lambda = mean * (0.6 + 0.7 * test_uniform_open(&rng));
		simulate(&in, lambda, PERIODS, lost);
		last = lost[PERIODS - 1];
		/* Settled: the last periods lose alike (else the horizon is short). */
		if (fabs(lost[PERIODS - 2] - last) > 1e-9 * in.queue_pkts + 1e-6 * last)
			continue;
		for (int p = 0; p < PERIODS; p++)
			absorb += last - lost[p];
		assert_int_equal(qphase_eval(&in, lambda, &e), 0);
		print_message("P %.3f Ts %.3f s %.2f/%.2f K %.0f c %.0f lambda/mean %.2f: "
			      "loss %.6f sim %.6f, absorb %.1f sim %.1f\n", in.period_s,
			      in.slow_s, in.slow_share, in.fast_share, in.queue_pkts,
			      in.on_pkts_per_s, lambda / mean, e.loss,
			      last / (lambda * in.period_s), e.absorb_pkts, absorb);
		/* A step moves the queue by at most |net| dt: the rounding. */
		assert_true(fabs(e.loss * lambda * in.period_s - last) <=
			    1e-3 * lambda * in.period_s * 0.01 + 1e-6 * last);
		assert_true(fabs(e.absorb_pkts - absorb) <= 2e-3 * in.queue_pkts + 1e-4 * absorb);
		checked++;
	}
	assert_true(checked >= 40);
}

static void test_invalid(void **state)
{
	struct qphase_eval e;
	struct qphase_in bad[] = { quota_in(1e6), quota_in(1e6), quota_in(1e6),
				   quota_in(1e6), quota_in(1e6), quota_in(1e6) };

	(void)state;
	bad[0].period_s = 0.0;
	bad[1].slow_s = 0.2;
	bad[2].slow_share = 0.0;
	bad[3].fast_share = 0.2;
	bad[4].slow_s = NAN;
	bad[5].on_pkts_per_s = INFINITY;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(qphase_valid(&bad[i]));
		assert_int_equal(qphase_eval(&bad[i], 1e5, &e), -EINVAL);
	}
	assert_int_equal(qphase_eval(&bad[0], 0.0, &e), -EINVAL);
}

static void test_bneck(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage();
	struct bneck_xfer x = offwin_fixture_xfer(400, BNECK_LOSS_SERVICE);
	/* #C and #I 0: the receiver alone drains mu_net x N (E[R] = 1 / mu). */
	double c = s.mu_net_per_s * s.batch_pkts, edge;
	struct qphase_in in = quota_in(c);
	struct bneck_result r;
	struct bneck_ws ws;
	bool lossy_seen = false;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	s.quota_period_s = in.period_s;
	s.quota_slow_s = in.slow_s;
	s.quota_slow_share = in.slow_share;
	s.quota_fast_share = in.fast_share;
	edge = c * in.slow_share + in.queue_pkts / in.slow_s;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t i = 0; i < r.npoints; i++) {
		const struct bneck_point *pt = &r.curve[i];
		double lambda = pt->rate_bps / (8.0 * x.payload_bytes);
		double over = (lambda - c * in.slow_share) * in.slow_s - in.queue_pkts;

		if (lambda > c - in.queue_pkts / (in.period_s - in.slow_s))
			break;
		if (over <= 0.0) {
			assert_true(pt->loss < 1e-9);
			continue;
		}
		assert_true(fabs(pt->loss - over / (lambda * in.period_s)) <= 1e-9);
		if (!lossy_seen)
			assert_true(lambda > edge);
		lossy_seen = true;
	}
	assert_true(lossy_seen);
	/* Lossless up to the edge, a lost round beyond it: the choice is there. */
	assert_true(r.rate_bps <= edge * 8.0 * x.payload_bytes);
	assert_true(r.rate_bps >= 0.97 * edge * 8.0 * x.payload_bytes);
	s.quota_slow_s = 0.2;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_empty_periods),
	cmocka_unit_test(test_overload),
	cmocka_unit_test(test_against_simulation),
	cmocka_unit_test(test_invalid),
	cmocka_unit_test(test_bneck),
)
