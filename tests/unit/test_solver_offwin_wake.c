// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loss to a receiver's waits for the CPU after a wakeup (solver/offwin.h,
 * l_wake = ν_w E[(W − K/λ)+]) against independent truths:
 *  - every wait at one length D (a slot's edge): exactly ν_w (D − K/λ)+;
 *  - the waits begin with the queue empty: neither the drain on the CPU nor
 *    the gap changes them, and with windows after preemption the two
 *    losses add (capped at 1);
 *  - a slot-by-slot fluid queue (10 µs slots) whose receiver drains at c,
 *    blocks when the queue is empty, is woken by the next arrival and then
 *    waits a time drawn from the histogram (log-uniform within its slots):
 *    the closed form at the simulated rate of waits within 4 standard
 *    errors (100000 waits) of the simulated loss plus 1 % (the slots'
 *    rounding);
 *  - bneck_compute() with waits and no windows after preemption: each
 *    point's stage loss is max(queue, l_wake); bad waits are -EINVAL.
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
#include "solver/offwin.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

#define NS 32

static uint64_t rng_state;

static double uniform01(void)
{
	return test_uniform_open(&rng_state);
}

/* The slot @r's edges in seconds, from the definition (2^r ns). */
static double edge_s(int r)
{
	return ldexp(1.0, r) * 1e-9;
}

static void test_one_length(void **state)
{
	double wake[NS] = { 0 }, k = 3641.0, nu = 40.0;
	struct offwin_in in = {
		.nslots = NS, .queue_pkts = k, .on_pkts_per_s = 1e6,
		.wake_per_s = nu, .wake_count = wake,
	};

	(void)state;
	wake[23] = 3.0;
	for (double lambda = 1e5; lambda <= 1.5e6; lambda *= 1.07) {
		double lo = nu * fmax(edge_s(23) - k / lambda, 0.0);
		double hi = nu * fmax(edge_s(24) - k / lambda, 0.0);

		assert_true(fabs(offwin_loss(&in, lambda, OFFWIN_LOW) - lo) <= 1e-13);
		assert_true(fabs(offwin_loss(&in, lambda, OFFWIN_HIGH) - hi) <= 1e-13);
		assert_true(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM) >= lo - 1e-15);
		assert_true(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM) <= hi + 1e-15);
	}
	/* Shorter than K/λ at the upper edge: nothing lost. */
	assert_true(offwin_loss(&in, k / edge_s(24) * 0.999, OFFWIN_HIGH) == 0.0);
	/* Capped at 1. */
	in.wake_per_s = 1e6;
	assert_true(offwin_loss(&in, 1e9, OFFWIN_HIGH) == 1.0);
}

static void test_empty_queue_and_sum(void **state)
{
	double wake[NS] = { 0 }, pre[NS] = { 0 }, k = 3641.0, lambda = 6e5;
	struct offwin_in w = {
		.nslots = NS, .queue_pkts = k, .on_pkts_per_s = 7e5,
		.wake_per_s = 25.0, .wake_count = wake,
	};
	struct offwin_in p = {
		.per_s = 10.0, .count = pre, .nslots = NS, .queue_pkts = k,
		.on_pkts_per_s = 7e5, .gap_s = 1e-3,
	};
	struct offwin_in both = p;
	double lw, lp;

	(void)state;
	wake[22] = 5.0;
	wake[23] = 1.0;
	pre[23] = 2.0;
	lw = offwin_loss(&w, lambda, OFFWIN_LOGUNIFORM);
	assert_true(lw > 0.0);
	/* F = K: the drain and the gap do not enter. */
	w.on_pkts_per_s = 6.1e5;
	w.gap_s = 1e-6;
	assert_true(offwin_loss(&w, lambda, OFFWIN_LOGUNIFORM) == lw);
	/* The same waits after preemption with a short gap lose more. */
	p.count = wake;
	p.per_s = w.wake_per_s;
	assert_true(offwin_loss(&p, lambda, OFFWIN_LOGUNIFORM) > lw);
	p.count = pre;
	p.per_s = 10.0;
	lp = offwin_loss(&p, lambda, OFFWIN_LOGUNIFORM);
	both.wake_per_s = w.wake_per_s;
	both.wake_count = wake;
	assert_true(fabs(offwin_loss(&both, lambda, OFFWIN_LOGUNIFORM) - (lp + lw)) <=
		    1e-15 * (lp + lw) + 1e-300);
	/* None: no loss; no count array: none either. */
	w.wake_per_s = 0.0;
	assert_true(offwin_loss(&w, lambda, OFFWIN_LOGUNIFORM) == 0.0);
	w.wake_per_s = 25.0;
	w.wake_count = NULL;
	assert_true(offwin_loss(&w, lambda, OFFWIN_LOGUNIFORM) == 0.0);
}

/*
 * A receiver that drains at @c, blocks when its queue is empty and, woken
 * by the next arrival, waits a drawn time before it runs, over @nwait
 * waits in slots of @dt_s. Returns the loss fraction, its standard error
 * (the ratio estimator's, over the cycles) and the waits per second.
 */
static void simulate_waits(const double *count, double k, double lambda, double c,
			   double dt_s, int nwait, double *loss, double *se,
			   double *per_s)
{
	double lost = 0.0, arrived = 0.0, slots = 0.0, *cl, *ca, var = 0.0;

	cl = calloc((size_t)nwait, sizeof(*cl));
	ca = calloc((size_t)nwait, sizeof(*ca));
	assert_non_null(cl);
	assert_non_null(ca);
	for (int i = 0; i < nwait; i++) {
		long off = lround(offwin_fixture_draw_s(count, NS, uniform01) / dt_s), t;
		double q = 0.0;

		/* Woken with the queue empty: off the CPU for @off slots. */
		for (t = 0; t < off; t++) {
			q += lambda * dt_s;
			ca[i] += lambda * dt_s;
			if (q > k) {
				cl[i] += q - k;
				q = k;
			}
		}
		/* On the CPU until the queue is empty again, then it blocks. */
		for (; q > 0.0; t++) {
			ca[i] += lambda * dt_s;
			q -= (c - lambda) * dt_s;
		}
		slots += (double)t;
		lost += cl[i];
		arrived += ca[i];
	}
	*loss = lost / arrived;
	for (int i = 0; i < nwait; i++)
		var += (cl[i] - *loss * ca[i]) * (cl[i] - *loss * ca[i]);
	*se = sqrt(var) / arrived;
	*per_s = nwait / (slots * dt_s);
	free(cl);
	free(ca);
}

static void test_against_simulation(void **state)
{
	double count[NS] = { 0 }, k = 3641.0, c = 8e5;

	(void)state;
	count[12] = 600.0;	/* 4-8 µs: most waits */
	count[18] = 60.0;	/* 0.26-0.52 ms */
	count[22] = 6.0;	/* 4.2-8.4 ms */
	count[23] = 3.0;	/* 8.4-16.8 ms */
	rng_state = 0x3a5e1dULL;
	for (double lambda = 4e5; lambda <= 7e5; lambda += 1e5) {
		double loss, se, per_s, got;
		struct offwin_in in = {
			.nslots = NS, .queue_pkts = k, .on_pkts_per_s = c,
			.wake_count = count,
		};

		simulate_waits(count, k, lambda, c, 10e-6, 100000, &loss, &se, &per_s);
		in.wake_per_s = per_s;
		got = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);
		print_message("lambda %.0f: %.1f waits/s, sim %.5f +- %.5f, closed form %.5f\n",
			      lambda, per_s, loss, se, got);
		assert_true(loss > 0.0);
		assert_true(fabs(got - loss) <= 4.0 * se + 0.01 * loss);
	}
}

static void test_bneck_waits(void **state)
{
	struct rxb_stage_inputs s;
	struct bneck_xfer x = offwin_fixture_xfer(48, BNECK_LOSS_QUEUE);
	struct bneck_result r;
	struct bneck_ws ws;

	(void)state;
	s = offwin_fixture_stage();
	s.wake_per_s = 10.0;
	s.wake_hist[24] = 2.0;	/* 17-34 ms */
	s.wake_hist[25] = 1.0;	/* 34-67 ms */
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_true(offwin_fixture_wake_curve(&ws, &s, &x, &r));
	offwin_fixture_refused(&ws, &s, &x, &s.wake_hist[5], &s.wake_per_s, INFINITY);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_one_length),
	cmocka_unit_test(test_empty_queue_and_sum),
	cmocka_unit_test(test_against_simulation),
	cmocka_unit_test(test_bneck_waits),
)
