// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The off-CPU window loss with each slot's measured mean and standard
 * deviation (solver/offwin.h) against closed forms worked by hand:
 *  - windows all of one length (sd 0; a co-runner's whole ticks): each
 *    loses what does not fit in the empty queue, ν (W − K/λ)+ / 1 of the
 *    arrivals, and only those longer than K/λ lose;
 *  - windows with a spread: uniform on mean ± √3 sd, their loss, losing
 *    windows and a round's end term against Simpson's rule over that
 *    density (10^4 panels), below, inside and above it;
 *  - a spread of more than (m − edge)/s the slot allows falls away from
 *    that edge, at the ratio 1 or below as the exponential of the same sd
 *    over the slot (closed form by hand); a longest wait below the mean is
 *    left out, one above it is the edge; a mean outside its slot leaves
 *    the slot log-uniform (tests/unit/test_solver_offwin_falling.c checks
 *    the ratios between 1 and √3);
 *  - a round's end term for windows of one length: λ ν (W² − x²)/2;
 *  - the share of the time the windows take (offwin_off_share()): ν m
 *    for windows of mean m inside their slot, the mean of the exponential
 *    rising to the longest for waits cut there (as above), ν (b − a)/ln 2
 *    for a log-uniform slot [a, b), at most 1, 0 without windows;
 *  - the "SLOT:COUNT:MEAN:SD" form of the parser.
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

#include "solver/offwin.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"

#define NS 32
#define K_PKTS 3641.0
#define SLOT_12MS 23		/* [8.39, 16.78) ms */

struct win {
	double count[NS], mean_s[NS], sd_s[NS];
	struct offwin_in in;
};

/*
 * @per_s windows after preemption, all in slot 23 with the moments given,
 * long runs between them at a fast drain: each window finds the queue
 * empty (room K).
 */
static void win_init(struct win *w, double per_s, double mean_s, double sd_s)
{
	memset(w, 0, sizeof(*w));
	w->count[SLOT_12MS] = per_s;
	w->mean_s[SLOT_12MS] = mean_s;
	w->sd_s[SLOT_12MS] = sd_s;
	w->in = (struct offwin_in){
		.per_s = per_s, .count = w->count, .mean_s = w->mean_s, .sd_s = w->sd_s,
		.nslots = NS, .queue_pkts = K_PKTS, .on_pkts_per_s = 1e7, .gap_s = 0.05,
	};
}

/* ν E[(W − K/λ)+] over windows all of length @len_s. */
static double one_length_loss(double per_s, double len_s, double lambda)
{
	return per_s * fmax(len_s - K_PKTS / lambda, 0.0);
}

enum what { EXCESS, TAIL, END };

/*
 * E of (W − x)+, [W > x] or (W² − x²)/2 [W > x] for W uniform on [lo, hi],
 * by Simpson's rule (10^4 panels; the kink at x is a panel edge when x
 * lies inside, by splitting the range there).
 */
static double simpson_uniform(double lo, double hi, double x, enum what what)
{
	const int n = 10000;
	double a = fmax(lo, x), h, sum;

	if (a >= hi)
		return 0.0;
	h = (hi - a) / n;
	sum = 0.0;
	for (int i = 0; i <= n; i++) {
		double w = a + i * h, f, c = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);

		f = what == EXCESS ? w - x : what == TAIL ? 1.0 : (w * w - x * x) / 2.0;
		sum += c * f;
	}
	return sum * h / 3.0 / (hi - lo);
}

/* ν E[(W − K/λ)+] over W uniform on [@lo, @hi], by Simpson. */
static double uniform_loss(double per_s, double lo, double hi, double lambda)
{
	return per_s * simpson_uniform(lo, hi, K_PKTS / lambda, EXCESS);
}

static void test_one_length(void **state)
{
	struct win w;

	(void)state;
	win_init(&w, 10.0, 0.012, 0.0);
	/* 3.0 Gb/s of 1456-byte packets: the queue holds 14.1 ms: nothing lost. */
	assert_true(offwin_loss(&w.in, 3e9 / 8 / 1456, OFFWIN_LOGUNIFORM) == 0.0);
	assert_true(offwin_lossy_per_s(&w.in, 3e9 / 8 / 1456, OFFWIN_LOGUNIFORM) == 0.0);
	/* 3.2e5/s: it holds 11.4 ms; every window loses 0.62 ms of arrivals. */
	check_rel(offwin_loss(&w.in, 3.2e5, OFFWIN_LOGUNIFORM),
		  one_length_loss(10.0, 0.012, 3.2e5), 1e-12, "one length");
	check_rel(offwin_lossy_per_s(&w.in, 3.2e5, OFFWIN_LOGUNIFORM), 10.0, 1e-12,
		  "every window loses");
	/* The edge placements are the same point: nothing left to bound. */
	check_rel(offwin_loss(&w.in, 3.2e5, OFFWIN_LOW),
		  offwin_loss(&w.in, 3.2e5, OFFWIN_HIGH), 1e-12, "low = high");
	/* Without the moments the slot reaches 16.8 ms: loss at 3.0 Gb/s. */
	w.in.mean_s = w.in.sd_s = NULL;
	assert_true(offwin_loss(&w.in, 3e9 / 8 / 1456, OFFWIN_LOGUNIFORM) > 0.0);
}

/*
 * 12 ms ± 1 ms: uniform on 12 ± 1.732 ms. At each rate the loss, the
 * losing windows and, with the queue empty at every window, the round's
 * end term against Simpson's rule.
 */
static void test_spread(void **state)
{
	const double lambdas[] = { 2.0e5, 2.8e5, 3.0e5, 3.2e5, 4.0e5 };
	double lo = 0.012 - sqrt(3.0) * 0.001, hi = 0.012 + sqrt(3.0) * 0.001;
	struct win w;

	(void)state;
	win_init(&w, 8.0, 0.012, 0.001);
	for (size_t i = 0; i < sizeof(lambdas) / sizeof(lambdas[0]); i++) {
		double l = lambdas[i], x = K_PKTS / l, want = uniform_loss(8.0, lo, hi, l);

		if (want == 0.0)
			assert_true(offwin_loss(&w.in, l, OFFWIN_LOGUNIFORM) == 0.0);
		else
			check_rel(offwin_loss(&w.in, l, OFFWIN_LOGUNIFORM), want, 1e-9, "spread");
		check_abs(offwin_lossy_per_s(&w.in, l, OFFWIN_LOGUNIFORM),
			  8.0 * simpson_uniform(lo, hi, x, TAIL), 1e-9, "losing windows");
		check_abs(offwin_round_absorb(&w.in, l, OFFWIN_LOGUNIFORM),
			  l * 8.0 * simpson_uniform(lo, hi, x, END), 1e-6, "end term");
	}
	/* Its loss lies between all at the mean and the bound of the two moments. */
	for (size_t i = 0; i < sizeof(lambdas) / sizeof(lambdas[0]); i++) {
		double l = lambdas[i], gap = 0.012 - K_PKTS / l;
		double scarf = (sqrt(1e-6 + gap * gap) + gap) / 2.0;
		double got = offwin_loss(&w.in, l, OFFWIN_LOGUNIFORM);

		assert_true(got >= 8.0 * fmax(gap, 0.0) - 1e-15);
		assert_true(got <= 8.0 * scarf + 1e-15);
	}
}

/*
 * E[(W − x)+] for W − @a exponential of mean @s cut at @len (density
 * e^(−t/s) / (s (1 − e^(−len/s)))), @a < x < a + len: the integral of
 * P(W > w) from x, by hand.
 */
static double cut_exp_excess(double a, double s, double len, double x)
{
	double tail = exp(-len / s);

	return (s * (exp(-(x - a) / s) - tail) - (a + len - x) * tail) / (1.0 - tail);
}

/* The same with W = top − T, T so distributed: ∫ P(T < t) dt up to top − x. */
static double cut_exp_excess_top(double top, double s, double len, double x)
{
	double c = top - x;

	return (c - s * (1.0 - exp(-c / s))) / (1.0 - exp(-len / s));
}

static void test_spread_kept_in_slot(void **state)
{
	double a, b, lambda = 4.0e5;
	struct win w, plain;

	(void)state;
	offwin_slot_s(SLOT_12MS, &a, &b);
	/*
	 * 9 ms ± 3 ms: 0.2 sd above the slot's foot, more spread than any law
	 * falling from it with that mean: the exponential of sd 3 ms there.
	 */
	win_init(&w, 10.0, 0.009, 0.003);
	check_rel(offwin_loss(&w.in, lambda, OFFWIN_LOGUNIFORM),
		  10.0 * cut_exp_excess(a, 0.003, b - a, K_PKTS / lambda), 1e-9,
		  "exponential from the foot");
	/* A mean outside its slot is no measurement of it: log-uniform. */
	win_init(&w, 10.0, 0.005, 0.001);
	win_init(&plain, 10.0, 0.0, 0.0);
	plain.in.mean_s = plain.in.sd_s = NULL;
	check_rel(offwin_loss(&w.in, lambda, OFFWIN_LOGUNIFORM),
		  offwin_loss(&plain.in, lambda, OFFWIN_LOGUNIFORM), 1e-12, "mean outside");
}

/*
 * Waits after a wake-up: the longest one is the slot's top where above
 * the mean, unless below it. 12 ± 1 ms under a longest of 12.5 ms lies
 * 0.5 sd below it: the exponential of sd 1 ms rising to 12.5 ms.
 */
static void test_wake_cap(void **state)
{
	double count[NS] = { 0 }, mean_s[NS] = { 0 }, sd_s[NS] = { 0 }, lambda = 3.4e5;
	double a, b;
	struct offwin_in in = {
		.nslots = NS, .queue_pkts = K_PKTS, .on_pkts_per_s = 1e7,
		.wake_per_s = 20.0, .wake_count = count, .wake_mean_s = mean_s,
		.wake_sd_s = sd_s, .wake_max_s = 0.0125,
	};

	(void)state;
	offwin_slot_s(SLOT_12MS, &a, &b);
	count[SLOT_12MS] = 1.0;
	mean_s[SLOT_12MS] = 0.012;
	sd_s[SLOT_12MS] = 0.001;
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM),
		  20.0 * cut_exp_excess_top(0.0125, 0.001, 0.0125 - a, K_PKTS / lambda), 1e-9,
		  "rising to the longest");
	in.wake_max_s = 0.0105;	/* stale: below the mean */
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM),
		  uniform_loss(20.0, 0.012 - sqrt(3.0) * 0.001, 0.012 + sqrt(3.0) * 0.001,
			       lambda), 1e-9, "stale longest");
}

/*
 * A round's end: a window that begins u < W before the blast stops loses
 * (λ u − K)+; over the round's windows that takes λ ν (W² − x²)/2 off its
 * loss, and its first window finds the empty queue as every window does
 * here, so that term adds nothing.
 */
static void test_round_end(void **state)
{
	double lambda = 3.5e5, x = K_PKTS / lambda;
	struct win w;

	(void)state;
	win_init(&w, 10.0, 0.012, 0.0);
	check_rel(offwin_round_absorb(&w.in, lambda, OFFWIN_LOGUNIFORM),
		  lambda * 10.0 * (0.012 * 0.012 - x * x) / 2.0, 1e-9, "end term");
}

static void test_off_share(void **state)
{
	double count[NS] = { 0 }, mean_s[NS] = { 0 }, sd_s[NS] = { 0 }, a, b;
	struct win w;

	(void)state;
	win_init(&w, 10.0, 0.012, 0.001);
	check_rel(offwin_off_share(&w.in), 10.0 * 0.012, 1e-9, "preemptions");
	/* Waits after wake-ups beside them, cut at a longest of 12.5 ms. */
	count[SLOT_12MS] = 1.0;
	mean_s[SLOT_12MS] = 0.012;
	sd_s[SLOT_12MS] = 0.001;
	w.in.wake_per_s = 20.0;
	w.in.wake_count = count;
	w.in.wake_mean_s = mean_s;
	w.in.wake_sd_s = sd_s;
	w.in.wake_max_s = 0.0125;
	/* E[W] = (W − foot)+ above the foot, plus the foot. */
	offwin_slot_s(SLOT_12MS, &a, &b);
	check_rel(offwin_off_share(&w.in),
		  10.0 * 0.012 + 20.0 * (a + cut_exp_excess_top(0.0125, 0.001, 0.0125 - a, a)),
		  1e-9, "with the waits");
	/* No moments: log-uniform over the slot. */
	w.in.mean_s = w.in.sd_s = NULL;
	w.in.wake_per_s = 0.0;
	check_rel(offwin_off_share(&w.in), 10.0 * (b - a) / log(2.0), 1e-9, "log-uniform");
	w.in.per_s = 200.0;
	assert_true(offwin_off_share(&w.in) == 1.0);
	w.in.per_s = 0.0;
	assert_true(offwin_off_share(&w.in) == 0.0);
}

static void test_parse_moments(void **state)
{
	double count[NS], mean_s[NS], sd_s[NS], per_s;

	(void)state;
	assert_int_equal(offwin_parse("9.6/22:0.5,23:9.6:12000000:150000", &per_s, count,
				      mean_s, sd_s, NS), 0);
	assert_true(per_s == 9.6 && count[22] == 0.5 && count[23] == 9.6);
	assert_true(mean_s[22] == 0.0 && sd_s[22] == 0.0);
	check_rel(mean_s[23], 0.012, 1e-15, "mean");
	check_rel(sd_s[23], 1.5e-4, 1e-15, "sd");
	static const char *const bad[] = {
		"1/23:1:5", "1/23:1:5:", "1/23:1::5", "1/23:1:5:-1", "1/23:1:5:1:2",
		"1/23:1:nan:1", "1/23:1:5:1,", "1/23:1:5:1,23:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mean_s[23] = 1.0;
		assert_int_equal(offwin_parse(bad[i], &per_s, count, mean_s, sd_s, NS), -EINVAL);
		assert_true(per_s == 0.0 && count[23] == 0.0 && mean_s[23] == 0.0);
	}
	/* Moments where the caller takes none, or one array without the other. */
	assert_int_equal(offwin_parse("1/23:1:5:1", &per_s, count, NULL, NULL, NS), -EINVAL);
	assert_int_equal(offwin_parse("1/23:1", &per_s, count, mean_s, NULL, NS), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_one_length),
	cmocka_unit_test(test_spread),
	cmocka_unit_test(test_spread_kept_in_slot),
	cmocka_unit_test(test_wake_cap),
	cmocka_unit_test(test_round_end),
	cmocka_unit_test(test_off_share),
	cmocka_unit_test(test_parse_moments),
)
