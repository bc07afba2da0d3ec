// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spread-drain loss model (solver/spread.h, bneck with
 * BNECK_LOSS_SPREAD) against independent truths:
 *  - spread_excess_mean() against the integral done by brute force (the
 *    trapezoid rule on 10^6 panels of the normal density), and its sd = 0
 *    limit;
 *  - spread_rule_build()'s rule on moments of Z and on the kinked
 *    integrand it is made for;
 *  - bneck_compute(): with sd = 0 every point against the deterministic
 *    fluid queue by hand (loss 1 - C / lambda, the first blast's
 *    n (1 - C / lambda) - K, T from rbudp_time_burst()); with sd > 0 the
 *    first blast's loss against the closed form and T against a brute
 *    force expectation (the trapezoid rule over the factor, 4000 panels;
 *    converged to 1e-7) to 1e-3: the rule's panels end at the first
 *    blast's kinks, not where a later round crosses a loss episode, which
 *    costs it up to 5e-4.
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
#include "solver/rbudp.h"
#include "solver/spread.h"
#include "tests/unit/unit_main.h"

#define PAYLOAD		1472.0
#define FILE_BYTES	200e6
#define QUEUE		3641u
#define BATCH		296u
#define MU_PER_S	803.6446	/* C = mu N = 237.9 kpps, 2.80 Gb/s */

static void check_close(double got, double want, double rel, double abs_tol,
			const char *what)
{
	if (!(fabs(got - want) <= abs_tol + rel * fabs(want))) {
		fprintf(stderr, "%s: got %.12g want %.12g diff %.3g\n", what, got, want,
			fabs(got - want));
		fail();
	}
}

static double phi(double z)
{
	return exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
}

/* E[f(Z)] by the trapezoid rule on [-10, 10] in @n panels. */
static double brute(double (*f)(double, const void *), const void *arg, long n)
{
	double h = 20.0 / n, s = 0.0;

	for (long i = 0; i <= n; i++) {
		double z = -10.0 + i * h;

		s += (i == 0 || i == n ? 0.5 : 1.0) * f(z, arg) * phi(z);
	}
	return s * h;
}

struct excess {
	double a, r, sd;
};

static double excess_at(double z, const void *arg)
{
	const struct excess *e = arg;

	return fmax(0.0, e->a - e->r * exp(e->sd * z));
}

static void test_excess_closed_form(void **state)
{
	static const struct excess cases[] = {
		{ 0.973, 0.98, 0.08 }, { 0.973, 0.9, 0.12 }, { 0.973, 1.2, 0.05 },
		{ 0.5, 0.3, 0.3 }, { 0.99, 0.2, 0.14 }, { 0.973, 1.5, 0.03 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct excess *e = &cases[i];

		check_close(spread_excess_mean(e->a, e->r, e->sd),
			    brute(excess_at, e, 1000000), 1e-8, 1e-13, "excess mean");
	}
	/* sd = 0: the deterministic fluid queue; and continuity into it. */
	check_close(spread_excess_mean(0.9, 0.5, 0.0), 0.4, 0, 1e-15, "sd 0");
	assert_true(spread_excess_mean(0.9, 1.5, 0.0) == 0.0);
	check_close(spread_excess_mean(0.9, 0.5, 1e-6), 0.4, 0, 1e-9, "sd -> 0");
	assert_true(spread_excess_mean(-0.1, 0.5, 0.1) == 0.0);
}

static void test_rule(void **state)
{
	struct spread_rule rule;
	double brk[2] = { 0.3, -7.0 }, m0 = 0, m2 = 0, m4 = 0;
	struct excess e = { 0.973, 0.98, 0.08 };
	double kink = log(e.a / e.r) / e.sd, got = 0;

	(void)state;
	assert_int_equal(spread_rule_build(brk, 2, &rule), 0);
	assert_true(rule.n <= SPREAD_MAX_NODES);
	for (uint32_t i = 0; i < rule.n; i++) {
		double z2 = rule.z[i] * rule.z[i];

		m0 += rule.w[i];
		m2 += rule.w[i] * z2;
		m4 += rule.w[i] * z2 * z2;
	}
	check_close(m0, 1.0, 0, 1e-14, "E[1]");
	check_close(m2, 1.0, 0, 1e-6, "E[Z^2]");
	check_close(m4, 3.0, 0, 1e-5, "E[Z^4]");
	/* The kinked integrand, with its kink as a breakpoint. */
	assert_int_equal(spread_rule_build(&kink, 1, &rule), 0);
	for (uint32_t i = 0; i < rule.n; i++)
		got += rule.w[i] * excess_at(rule.z[i], &e);
	check_close(got, spread_excess_mean(e.a, e.r, e.sd), 1e-7, 1e-12, "rule at a kink");
	/* The most panels it can take. */
	{
		double many[SPREAD_MAX_BREAKS] = { -5.5, -0.5, 0.5, 5.5 };

		assert_int_equal(spread_rule_build(many, SPREAD_MAX_BREAKS, &rule), 0);
		assert_true(rule.n <= SPREAD_MAX_NODES);
		assert_int_equal(spread_rule_build(many, SPREAD_MAX_BREAKS + 1, &rule), -EINVAL);
	}
}

static struct rxb_stage_inputs stage(double sd)
{
	/* #C = #I = 0: E[R] = 1 / mu_net exactly, so C = mu N. */
	struct rxb_stage_inputs s = {
		.mu_pio_per_s = 4600.0, .mu_disk_per_s = 1010.0,
		.mu_net_per_s = MU_PER_S, .queue_pkts = QUEUE, .batch_pkts = BATCH,
		.rule = RXB_BATCH_PARTIAL, .mu_rel_sd = sd,
	};

	return s;
}

static struct bneck_xfer xfer(double episode)
{
	struct bneck_xfer x = {
		.payload_bytes = PAYLOAD, .file_bytes = FILE_BYTES, .one_way_delay_s = 0.1,
		.line_rate_bps = 10e9, .min_rate_bps = 1e9, .points = 91,
		.rounds = BNECK_ROUNDS_BURST, .loss_episode_pkts = episode,
		.loss_model = BNECK_LOSS_SPREAD,
	};

	return x;
}

/* T of the deterministic fluid queue drained at @c_pps, by hand. */
static double fluid_time(double rate_bps, double c_pps, double episode, double *first)
{
	double lambda = rate_bps / (8.0 * PAYLOAD), n0 = FILE_BYTES / PAYLOAD;
	double l = lambda > c_pps ? 1.0 - c_pps / lambda : 0.0;
	struct rbudp_params p = {
		.file_bytes = FILE_BYTES, .payload_bytes = PAYLOAD,
		.one_way_delay_s = 0.1, .loss_episode_pkts = episode,
	};
	struct rbudp_stage st = {
		.loss = l, .pass = 1.0 - l, .absorb_pkts = l > 0.0 ? QUEUE : 0.0,
		.drain_pkts_per_s = c_pps,
	};
	struct rbudp_time t;

	assert_int_equal(rbudp_time_burst(&p, rate_bps / 8.0, &st, 1, &t), 0);
	if (first)
		*first = fmax(0.0, n0 * l - QUEUE) / n0;
	return t.time_s;
}

static void test_bneck_fluid_sd0(void **state)
{
	struct rxb_stage_inputs s = stage(0.0);
	struct bneck_xfer x = xfer(2000.0);
	double c = MU_PER_S * BATCH;
	struct bneck_result r;
	struct bneck_ws ws;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t i = 0; i < r.npoints; i++) {
		const struct bneck_point *pt = &r.curve[i];
		double lambda = pt->rate_bps / (8.0 * PAYLOAD), first;
		double t = fluid_time(pt->rate_bps, c, 2000.0, &first);

		check_close(pt->loss, lambda > c ? 1.0 - c / lambda : 0.0, 0, 1e-12, "fluid loss");
		check_close(pt->first_loss, first, 0, 1e-12, "fluid first blast");
		check_close(pt->time_s, t, 1e-12, 0, "fluid T");
	}
	/* The best rate of a deterministic drain: the fastest whose first
	 * blast the buffer still covers, lambda (1 - K / n0) = C. */
	check_close(r.rate_bps, c * 8.0 * PAYLOAD / (1.0 - QUEUE / (FILE_BYTES / PAYLOAD)),
		    2e-3, 0, "fluid optimum");
	bneck_ws_finish(&ws);
}

struct at_rate {
	double rate_bps, sd, episode;
};

static double time_at(double z, const void *arg)
{
	const struct at_rate *a = arg;

	return fluid_time(a->rate_bps, MU_PER_S * BATCH * exp(a->sd * z), a->episode, NULL);
}

static void test_bneck_spread(void **state)
{
	static const double sds[] = { 0.03, 0.08, 0.14 };

	(void)state;
	for (size_t k = 0; k < sizeof(sds) / sizeof(sds[0]); k++) {
		struct rxb_stage_inputs s = stage(sds[k]);
		struct bneck_xfer x = xfer(3000.0);
		double c = MU_PER_S * BATCH, n0 = FILE_BYTES / PAYLOAD;
		struct bneck_result r;
		struct bneck_ws ws;

		assert_int_equal(bneck_ws_init(&ws, x.points), 0);
		assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
		for (uint32_t i = 0; i < r.npoints; i += 3) {
			const struct bneck_point *pt = &r.curve[i];
			double lambda = pt->rate_bps / (8.0 * PAYLOAD);
			struct at_rate a = { pt->rate_bps, sds[k], 3000.0 };

			check_close(pt->first_loss,
				    spread_excess_mean(1.0 - QUEUE / n0, c / lambda, sds[k]),
				    1e-6, 1e-9, "first blast vs closed form");
			check_close(pt->time_s, brute(time_at, &a, 4000), 1e-3, 0,
				    "E[T] vs brute force");
		}
		/* A spread drain costs: the best expected T is above the
		 * deterministic optimum's and the rate below its edge. */
		assert_true(r.rate_bps < c * 8.0 * PAYLOAD / (1.0 - QUEUE / n0));
		bneck_ws_finish(&ws);
	}
}

static void test_bad_model(void **state)
{
	struct rxb_stage_inputs s = stage(0.1);
	struct bneck_xfer x = xfer(0.0);
	struct bneck_result r;
	struct bneck_ws ws;

	(void)state;
	x.loss_model = (enum bneck_loss)7;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	bneck_ws_finish(&ws);
	assert_string_equal(bneck_loss_name(BNECK_LOSS_SPREAD), "spread");
	assert_string_equal(bneck_loss_name(BNECK_LOSS_QUEUE), "queue");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_excess_closed_form),
	cmocka_unit_test(test_rule),
	cmocka_unit_test(test_bneck_fluid_sd0),
	cmocka_unit_test(test_bneck_spread),
	cmocka_unit_test(test_bad_model),
)
