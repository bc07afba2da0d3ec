/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the bneck tests: the check that bad numbers in a stage or a
 * transfer are refused, one value after another; a stage's off-CPU
 * windows as offwin's input, to check bneck's curve against; and the
 * expected time over an uncertain rate against three plain solves.
 */
#ifndef RXB_TEST_BNECK_FIXTURE_H
#define RXB_TEST_BNECK_FIXTURE_H

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

#include "tests/unit/check_rel.h"

#include "solver/bneck.h"
#include "solver/offwin.h"

/*
 * bneck_compute() refuses the one stage @s with @x (-EINVAL) for each of
 * @bad[0..n) put in turn into @field, a number of @s or of @x; @field is
 * left at the last of them.
 */
static inline void bneck_fixture_refuse_n(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
					  const struct bneck_xfer *x, double *field,
					  const double *bad, size_t n)
{
	struct bneck_result r;

	for (size_t i = 0; i < n; i++) {
		int err;

		*field = bad[i];
		err = bneck_compute(ws, s, 1, x, NULL, &r);
		if (err != -EINVAL) {
			fprintf(stderr, "bad value %.17g: bneck_compute() returned %d, not -EINVAL\n",
				bad[i], err);
			fail();
		}
	}
}

/*
 * The off-CPU windows of @s (one packet per service) with the whole CPU
 * between them: drained at mu_net, no waits after wake-ups.
 */
static inline struct offwin_in bneck_fixture_windows_in(const struct rxb_stage_inputs *s)
{
	return (struct offwin_in){
		.per_s = s->offcpu_per_s, .count = s->offcpu_hist,
		.nslots = RXB_OFFCPU_SLOTS, .queue_pkts = s->queue_pkts,
		.on_pkts_per_s = s->mu_net_per_s,
	};
}

/* T at exactly @rate_bps: a plain solve of stage @s whose sweep starts there. */
static inline double bneck_fixture_time_at(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
					   const struct bneck_xfer *x0, double rate_bps)
{
	struct bneck_xfer x = *x0;
	struct bneck_result r;

	x.min_rate_bps = rate_bps;
	x.line_rate_bps = rate_bps * (1 + 1e-9);
	x.points = 2;
	assert_int_equal(bneck_compute(ws, s, 1, &x, NULL, &r), 0);
	assert_true(r.curve[0].rate_bps == rate_bps);
	return r.curve[0].time_s;
}

/* @s with its service rates (mu_net, mu_net_full and the saturated drain
 * where given) times @f, and certain. */
static inline struct rxb_stage_inputs bneck_fixture_scaled(const struct rxb_stage_inputs *s,
							   double f)
{
	struct rxb_stage_inputs p = *s;

	p.mu_rel_sd = 0.0;
	p.mu_net_per_s *= f;
	p.mu_net_full_per_s *= f;
	p.sat_drain_pkts_per_s *= f;
	return p;
}

/*
 * The one stage @s, whose rate is uncertain (mu_rel_sd > 0), solved into
 * @r and checked against the three-point rule done by hand: plain solves
 * with the service rates scaled by 1, e^-sqrt3 sd and e^sqrt3 sd, weighted
 * 2/3, 1/6, 1/6. The curve must be the plain one; no rate of it may
 * expect less time than the rate chosen; the expected time at the line
 * rate and at the rate chosen must be the weighted sums to 1e-12.
 * Returns the plain optimum.
 */
static inline double bneck_fixture_check_expected(struct bneck_ws *ws,
						  const struct rxb_stage_inputs *s,
						  const struct bneck_xfer *x, struct bneck_result *r)
{
	const double sd = s->mu_rel_sd;
	const double fac[3] = { 1.0, exp(-sqrt(3.0) * sd), exp(sqrt(3.0) * sd) };
	const double w[3] = { 2.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0 };
	struct bneck_point *want = calloc(x->points, sizeof(*want));
	struct bneck_point *plain = calloc(x->points, sizeof(*plain));
	struct rxb_stage_inputs p;
	double plain_rate = 0.0, et = 0.0, chosen_bps, chosen_t;

	assert_non_null(want);
	assert_non_null(plain);
	assert_true(sd > 0.0);
	for (int j = 0; j < 3; j++) {
		p = bneck_fixture_scaled(s, fac[j]);
		assert_int_equal(bneck_compute(ws, &p, 1, x, NULL, r), 0);
		if (j == 0) {
			plain_rate = r->rate_bps;
			memcpy(plain, r->curve, x->points * sizeof(*plain));
		}
		for (uint32_t i = 0; i < x->points; i++) {
			want[i].rate_bps = r->curve[i].rate_bps;
			want[i].time_s += w[j] * r->curve[i].time_s;
		}
	}
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, r), 0);
	chosen_bps = r->rate_bps;
	chosen_t = r->time_s;
	for (int j = 0; j < 3; j++) {
		p = bneck_fixture_scaled(s, fac[j]);
		et += w[j] * bneck_fixture_time_at(ws, &p, x, chosen_bps);
	}
	check_rel(chosen_t, et, 1e-12, "E[T] at the rate chosen");
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, r), 0);
	for (uint32_t i = 0; i < x->points; i++) {
		assert_true(r->curve[i].rate_bps == plain[i].rate_bps);
		assert_true(r->curve[i].time_s == plain[i].time_s);
		assert_true(r->time_s <= want[i].time_s * (1 + 1e-12));
	}
	check_rel(r->line_time_s, want[x->points - 1].time_s, 1e-12, "E[T] at the line rate");
	free(want);
	free(plain);
	return plain_rate;
}

/* bneck_fixture_refuse_n() for the values listed after @field. */
#define bneck_fixture_refuses(ws, s, x, field, ...)				\
	bneck_fixture_refuse_n(ws, s, x, field, (const double[]){ __VA_ARGS__ },	\
			       sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double))

#endif
