// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/outcome: predictions against reported outcomes. Scripted
 * REPORTs with hand-computed ratios and loss errors: the ring's statistics
 * equal them; RATEs that predict nothing (confidence 0, no RATE, T 0) and
 * ABORTED reports stay out of them; the ring keeps the newest OUTCOME_MAX
 * in order when it wraps.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/model/outcome.h"
#include "tests/unit/unit_main.h"

#define EPS 1e-12

static struct rxbneck_rate rate(uint64_t bps, double loss, double t_s, uint16_t conf)
{
	return (struct rxbneck_rate){ .port = 9000, .confidence = conf, .rate_bps = bps,
				      .loss = loss, .xfer_time_us = (uint64_t)(t_s * 1e6 + 0.5) };
}

/* A finished transfer: 1000 first-round datagrams, @lost of them lost. */
static struct rxbneck_report report(double t_s, uint64_t lost)
{
	return (struct rxbneck_report){ .port = 9000, .rounds = 2, .file_bytes = 1000000,
					.elapsed_us = (uint64_t)(t_s * 1e6 + 0.5),
					.rate_bps = 1000000000, .pkts_sent = 1000 + lost,
					.pkts_resent = lost, .pkts_lost_first = lost };
}

static void test_scripted(void **state)
{
	struct outcome o;
	struct outcome_stats s;
	struct rxbneck_rate r1 = rate(1000000000, 0.01, 1.0, 500);
	struct rxbneck_rate r2 = rate(800000000, 0.05, 2.0, 500);
	struct rxbneck_rate r3 = rate(600000000, 0.0, 0.5, 500);
	struct rxbneck_rate prov = rate(10000000000ULL, 0.0, 0.0, 0);
	struct rxbneck_report ab = report(0.3, 0);
	struct rxbneck_report a = report(1.2, 30), b = report(1.8, 20), c = report(0.75, 0);
	const struct outcome_entry *e;

	(void)state;
	outcome_init(&o);
	outcome_stats(&o, &s);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.time_ratio_median) && isnan(s.loss_err_pp_mean));

	/* ratio 1.2, loss 3 % vs 1 %: +2 pp */
	assert_int_equal(outcome_add(&o, 1, &r1, 2000, &a), 1);
	/* ratio 0.9, loss 2 % vs 5 %: -3 pp */
	assert_int_equal(outcome_add(&o, 2, &r2, 2000, &b), 1);
	/* ratio 1.5, loss 0 vs 0 */
	assert_int_equal(outcome_add(&o, 3, &r3, 2000, &c), 1);
	/* provisional: kept, predicts nothing */
	assert_int_equal(outcome_add(&o, 4, &prov, 2000, &a), 1);
	/* aborted: counted only */
	ab.flags = RXBNECK_REPORT_ABORTED;
	assert_int_equal(outcome_add(&o, 5, &r1, 2000, &ab), 0);

	assert_int_equal(o.n, 4);
	assert_int_equal(o.total, 4);
	assert_int_equal(o.aborted, 1);
	e = outcome_at(&o, 0);
	assert_int_equal(e->at_ns, 1);
	assert_float_equal(e->pred_time_s, 1.0, EPS);
	assert_float_equal(e->meas_time_s, 1.2, EPS);
	assert_float_equal(e->pred_loss, 0.01, EPS);
	assert_float_equal(e->meas_loss, 0.03, EPS);
	assert_float_equal(e->pred_rate_bps, 1e9, 0);
	e = outcome_at(&o, 3);
	assert_true(isnan(e->pred_time_s) && isnan(e->pred_loss));
	assert_float_equal(e->pred_rate_bps, 1e10, 0);
	assert_int_equal(e->pred_confidence, 0);

	outcome_stats(&o, &s);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.n_time, 3);
	assert_int_equal(s.n_loss, 3);
	assert_float_equal(s.time_ratio_median, 1.2, 1e-9);
	assert_float_equal(s.time_ratio_min, 0.9, 1e-9);
	assert_float_equal(s.time_ratio_max, 1.5, 1e-9);
	assert_float_equal(s.time_ratio_mean, 1.2, 1e-9);
	assert_float_equal(s.loss_err_pp_mean, 5.0 / 3, 1e-9);
	assert_float_equal(s.loss_bias_pp_mean, -1.0 / 3, 1e-9);
}

static void test_nothing_predicted(void **state)
{
	struct outcome o;
	struct outcome_stats s;
	struct rxbneck_rate no_t = rate(1000000000, 0.02, 0.0, 300);
	struct rxbneck_report r = report(1.0, 10);
	struct rxbneck_report empty = { .port = 9000, .rounds = 1, .elapsed_us = 5 };

	(void)state;
	outcome_init(&o);
	outcome_add(&o, 1, NULL, 0, &r);		/* no RATE at all */
	outcome_add(&o, 2, &no_t, 0, &r);		/* T not computed, loss predicted */
	outcome_add(&o, 3, &no_t, 0, &empty);		/* no first-round datagrams */
	assert_true(isnan(outcome_at(&o, 0)->pred_rate_bps));
	assert_true(isnan(outcome_at(&o, 2)->meas_loss));
	outcome_stats(&o, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.n_time, 0);
	assert_true(isnan(s.time_ratio_median) && isnan(s.time_ratio_min) &&
		    isnan(s.time_ratio_max) && isnan(s.time_ratio_mean));
	assert_int_equal(s.n_loss, 1);
	assert_float_equal(s.loss_err_pp_mean, 1.0, 1e-9);	/* 1 % vs 2 % */
}

static void test_wrap(void **state)
{
	struct outcome o;
	struct outcome_stats s;
	struct rxbneck_rate r = rate(1000000000, 0.0, 1.0, 500);

	(void)state;
	outcome_init(&o);
	/* transfer i takes i s on a predicted 1 s: ratio i */
	for (int i = 1; i <= 20; i++) {
		struct rxbneck_report rep = report((double)i, 0);

		outcome_add(&o, (uint64_t)i, &r, 0, &rep);
	}
	assert_int_equal(o.n, OUTCOME_MAX);
	assert_int_equal(o.total, 20);
	for (uint32_t i = 0; i < OUTCOME_MAX; i++)
		assert_int_equal(outcome_at(&o, i)->at_ns, 20 - OUTCOME_MAX + 1 + i);
	outcome_stats(&o, &s);
	/* ratios 5..20: median (12 + 13) / 2, mean 12.5 */
	assert_int_equal(s.n_time, 16);
	assert_float_equal(s.time_ratio_median, 12.5, 1e-9);
	assert_float_equal(s.time_ratio_mean, 12.5, 1e-9);
	assert_float_equal(s.time_ratio_min, 5, 1e-9);
	assert_float_equal(s.time_ratio_max, 20, 1e-9);
	assert_float_equal(s.loss_err_pp_mean, 0, 0);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_scripted),
	cmocka_unit_test(test_nothing_predicted),
	cmocka_unit_test(test_wrap),
)
