// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The wake-up waits' slots cut at the longest wait (solver/offwin.h,
 * offwin_in.wake_max_s) against independent truths:
 *  - a cap inside a slot [a, b): that slot's waits are log-uniform on
 *    [a, cap]. E[(W − x)+] and E[(W² − x²)/2; W > x] over the histogram
 *    equal the closed forms derived here and a midpoint-rule integral of
 *    the density 1 / (w ln(cap/a)) on [a, cap] (10⁶ points), directly and
 *    through l_wake (offwin_loss()) and the round's end term
 *    (offwin_round_absorb()); with every wait at its slot's top, the cut
 *    slot's are at the cap;
 *  - a cap at or above every slot's top, and no cap (0): the same numbers
 *    as without the cut, to the bit;
 *  - a slot wholly at or above the cap (a stale cap) is not cut, while
 *    the slot the cap lies in is;
 *  - bneck_compute() uses the stage's wake_max_s, and refuses a negative
 *    or non-finite one.
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
#include "solver/offwin.h"
#include "bneck_fixture.h"
#include "check_rel.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"

#define NS		32
#define MID_POINTS	1000000L
#define NU_PER_S	20.0	/* waits per second */
#define K_PKTS		1000.0

/* The slot @r's edges in seconds, from the definition (2^r ns). */
static double edge_s(int r)
{
	return ldexp(1.0, r) * 1e-9;
}

/*
 * E[(W − x)+] for W log-uniform on [a, c]: the integral of
 * (w − x) / (w ln(c/a)) from y = max(a, x) to c.
 */
static double excess_closed(double a, double c, double x)
{
	double y = fmax(a, x);

	if (x >= c)
		return 0.0;
	return ((c - y) - x * log(c / y)) / log(c / a);
}

/* E[(W² − x²)/2; W > x], the same W: (w² − x²) / (2 w ln(c/a)) from y to c. */
static double end_closed(double a, double c, double x)
{
	double y = fmax(a, x);

	if (x >= c)
		return 0.0;
	return ((c * c - y * y) / 4.0 - x * x / 2.0 * log(c / y)) / log(c / a);
}

/* Both by the midpoint rule on [a, c] over the density 1 / (w ln(c/a)). */
static void midpoint(double a, double c, double x, double *excess, double *end)
{
	double h = (c - a) / (double)MID_POINTS, span = log(c / a);

	*excess = *end = 0.0;
	for (long i = 0; i < MID_POINTS; i++) {
		double w = a + ((double)i + 0.5) * h, p = h / (w * span);

		if (w <= x)
			continue;
		*excess += (w - x) * p;
		*end += (w * w - x * x) / 2.0 * p;
	}
}

/*
 * The histogram's means from its slots' spans (@top_s[r]: where slot r
 * ends, its edge or the cap), each slot's closed form checked against
 * the midpoint rule first.
 */
static void hist_truth(const double *count, const double *top_s, double x,
		       double *excess, double *end)
{
	double total = 0.0, se = 0.0, s2 = 0.0;

	for (int r = 0; r < NS; r++) {
		double e, e2, me, me2;

		if (!(count[r] > 0.0))
			continue;
		e = excess_closed(edge_s(r), top_s[r], x);
		e2 = end_closed(edge_s(r), top_s[r], x);
		midpoint(edge_s(r), top_s[r], x, &me, &me2);
		check_abs(e, me, 1e-9 * e + 1e-12 * top_s[r], "excess: closed vs midpoint");
		check_abs(e2, me2, 1e-9 * e2 + 1e-12 * top_s[r] * top_s[r],
			  "end: closed vs midpoint");
		total += count[r];
		se += count[r] * e;
		s2 += count[r] * e2;
	}
	*excess = se / total;
	*end = s2 / total;
}

/* Waits only, at @lambda = K/x: l_wake = ν E and absorption λ ν E[end]. */
static struct offwin_in wake_in(const double *count, double cap_s)
{
	return (struct offwin_in){
		.nslots = NS, .queue_pkts = K_PKTS, .on_pkts_per_s = 1e7,
		.wake_per_s = NU_PER_S, .wake_count = count, .wake_max_s = cap_s,
	};
}

/* The histogram's numbers at @x with the cut at @cap_s, against the truth. */
static void check_at(const double *count, const double *top_s, double cap_s, double x)
{
	struct offwin_in in = wake_in(count, cap_s);
	double lambda = K_PKTS / x, e, e2;

	hist_truth(count, top_s, x, &e, &e2);
	check_rel(offwin_excess_s(count, NS, x, OFFWIN_LOGUNIFORM, cap_s), e, 1e-12,
		  "offwin_excess_s, cut");
	check_rel(offwin_end_s2(count, NS, x, OFFWIN_LOGUNIFORM, cap_s), e2, 1e-12,
		  "offwin_end_s2, cut");
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM), NU_PER_S * e, 1e-12,
		  "l_wake");
	check_rel(offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM),
		  lambda * NU_PER_S * e2, 1e-12, "round absorption");
}

static void test_cap_inside_slot(void **state)
{
	double count[NS] = { 0 }, top[NS], cap = 11e-3, high = 0.0, total = 0.0;
	const double xs[] = { 1e-4, 1.5e-3, 5e-3, 9e-3, 10.9e-3, 12e-3, 20e-3 };

	(void)state;
	count[20] = 5.0;	/* 1.05-2.1 ms */
	count[22] = 3.0;	/* 4.2-8.4 ms */
	count[23] = 2.0;	/* 8.4-16.8 ms: cut at 11 ms */
	for (int r = 0; r < NS; r++)
		top[r] = edge_s(r + 1);
	top[23] = cap;
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		check_at(count, top, cap, xs[i]);
	/* The cut matters: a third less excess where x is within the top slot. */
	assert_true(offwin_excess_s(count, NS, 9e-3, OFFWIN_LOGUNIFORM, cap) <
		    0.67 * offwin_excess_s(count, NS, 9e-3, OFFWIN_LOGUNIFORM, 0.0));
	/* All at their slots' tops: the cut slot's at the cap. */
	for (int r = 0; r < NS; r++) {
		high += count[r] * fmax(top[r] - 5e-3, 0.0);
		total += count[r];
	}
	check_rel(offwin_excess_s(count, NS, 5e-3, OFFWIN_HIGH, cap), high / total,
		  1e-15, "OFFWIN_HIGH cut");
}

/* Every number with the cut at @cap_s is the uncut one, to the bit. */
static void check_uncut(const double *count, double cap_s)
{
	const enum offwin_within ws[] = { OFFWIN_LOGUNIFORM, OFFWIN_LOW, OFFWIN_HIGH };
	struct offwin_in cut = wake_in(count, cap_s), none = wake_in(count, 0.0);

	for (size_t j = 0; j < 3; j++) {
		for (double x = 1e-5; x < 0.05; x *= 1.13) {
			enum offwin_within w = ws[j];
			double lambda = K_PKTS / x;

			assert_true(offwin_excess_s(count, NS, x, w, cap_s) ==
				    offwin_excess_s(count, NS, x, w, 0.0));
			assert_true(offwin_end_s2(count, NS, x, w, cap_s) ==
				    offwin_end_s2(count, NS, x, w, 0.0));
			assert_true(offwin_loss(&cut, lambda, w) == offwin_loss(&none, lambda, w));
			assert_true(offwin_round_absorb(&cut, lambda, w) ==
				    offwin_round_absorb(&none, lambda, w));
		}
	}
}

static void test_cap_above_or_unknown(void **state)
{
	double count[NS] = { 0 }, top[NS];

	(void)state;
	count[20] = 5.0;
	count[22] = 3.0;
	count[23] = 2.0;
	check_uncut(count, 0.0);
	check_uncut(count, edge_s(24));	/* the top slot's top */
	check_uncut(count, 1.0);
	/* No cut is the whole slots' log-uniform truth. */
	for (int r = 0; r < NS; r++)
		top[r] = edge_s(r + 1);
	check_at(count, top, 0.0, 9e-3);
}

static void test_slot_above_cap(void **state)
{
	double count[NS] = { 0 }, top[NS], cap = 5e-3;

	(void)state;
	count[20] = 5.0;	/* 1.05-2.1 ms */
	count[23] = 2.0;	/* 8.4-16.8 ms: above a cap of 5 ms */
	check_uncut(count, cap);
	check_uncut(count, edge_s(23));	/* the cap at its lower edge */
	/* With waits in the slot the cap lies in, that one is cut, not the one above. */
	count[22] = 3.0;	/* 4.2-8.4 ms: cut at 5 ms */
	for (int r = 0; r < NS; r++)
		top[r] = edge_s(r + 1);
	top[22] = cap;
	check_at(count, top, cap, 4.5e-3);
	check_at(count, top, cap, 9e-3);
}

/*
 * The memory given back only after R packets were read: a wait loses from
 * K/λ − R/c on (the queue full at K/λ, then R read at c before it admits
 * again), so l_wake and the absorption are the truths at that x; a
 * release longer than the fill leaves x = 0; without a drain (c = 0) or a
 * release nothing moves.
 */
static void test_release(void **state)
{
	double count[NS] = { 0 }, top[NS], x = 9e-3, e, e2;
	struct offwin_in in = wake_in(count, 0.0);
	double lambda = K_PKTS / x;

	(void)state;
	count[22] = 3.0;	/* 4.2-8.4 ms */
	count[23] = 2.0;	/* 8.4-16.8 ms */
	for (int r = 0; r < NS; r++)
		top[r] = edge_s(r + 1);
	in.on_pkts_per_s = 1.25e5;
	in.release_pkts = 250.0;	/* R/c = 2 ms */
	hist_truth(count, top, x - 2e-3, &e, &e2);
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM), NU_PER_S * e, 1e-12,
		  "l_wake, released after R");
	check_rel(offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM),
		  lambda * NU_PER_S * e2, 1e-12, "absorption, released after R");
	in.release_pkts = 2000.0;	/* 16 ms: longer than the fill */
	hist_truth(count, top, 0.0, &e, &e2);
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM), NU_PER_S * e, 1e-12,
		  "l_wake, x = 0");
	in.on_pkts_per_s = 0.0;
	hist_truth(count, top, x, &e, &e2);
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM), NU_PER_S * e, 1e-12,
		  "l_wake, no drain known");
	in.on_pkts_per_s = 1.25e5;
	in.release_pkts = 0.0;
	check_rel(offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM), NU_PER_S * e, 1e-12,
		  "l_wake, no release");
}

/* P(W > x) for W log-uniform on [a, c]: closed form, and the midpoint rule. */
static double tail_closed(double a, double c, double x)
{
	return x >= c ? 0.0 : log(c / fmax(a, x)) / log(c / a);
}

static double tail_midpoint(double a, double c, double x)
{
	double h = (c - a) / (double)MID_POINTS, span = log(c / a), p = 0.0;

	for (long i = 0; i < MID_POINTS; i++) {
		double w = a + ((double)i + 0.5) * h;

		if (w > x)
			p += h / (w * span);
	}
	return p;
}

/*
 * The waits that lose per second: ν_w P(W > x) at x = K/λ − R/c, the slot
 * the longest wait lies in cut there, against the closed form (itself
 * against the midpoint rule); the lower- and upper-edge placements
 * bracket it; so a loss episode, λ l_wake / that, is the mean excess of a
 * losing wait in packets.
 */
static void test_lossy_per_s(void **state)
{
	double count[NS] = { 0 }, x = 9e-3, cap = 11e-3, lambda = K_PKTS / x;
	struct offwin_in in = wake_in(count, cap);
	double p22, p23, want, ex;

	(void)state;
	count[22] = 3.0;	/* 4.2-8.4 ms: all below x */
	count[23] = 2.0;	/* 8.4-16.8 ms, cut at 11 ms */
	in.on_pkts_per_s = 1.25e5;
	in.release_pkts = 125.0;	/* R/c = 1 ms: x = 8 ms */
	p22 = tail_closed(edge_s(22), edge_s(23), 8e-3);
	p23 = tail_closed(edge_s(23), cap, 8e-3);
	/* The step at x puts the midpoint rule off by up to one cell's mass. */
	check_abs(p22, tail_midpoint(edge_s(22), edge_s(23), 8e-3), 2e-6, "P, slot 22");
	check_abs(p23, tail_midpoint(edge_s(23), cap, 8e-3), 2e-6, "P, slot 23 cut");
	want = NU_PER_S * (3.0 * p22 + 2.0 * p23) / 5.0;
	check_rel(offwin_lossy_per_s(&in, lambda, OFFWIN_LOGUNIFORM), want, 1e-12,
		  "lossy waits per second");
	assert_true(offwin_lossy_per_s(&in, lambda, OFFWIN_LOW) <= want * (1 + 1e-12));
	assert_true(offwin_lossy_per_s(&in, lambda, OFFWIN_HIGH) >= want * (1 - 1e-12));
	/* The episode: the excess of the waits past x over those waits. */
	ex = (3.0 * excess_closed(edge_s(22), edge_s(23), 8e-3) +
	      2.0 * excess_closed(edge_s(23), cap, 8e-3)) / 5.0;
	check_rel(lambda * offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM) /
		  offwin_lossy_per_s(&in, lambda, OFFWIN_LOGUNIFORM),
		  lambda * ex * NU_PER_S / want, 1e-12, "episode");
	/* None loses: 0. */
	assert_true(offwin_lossy_per_s(&in, K_PKTS / 1.0, OFFWIN_LOGUNIFORM) == 0.0);
}

/*
 * episodes_from_windows: each rate's T is the T with that rate's episode,
 * λ l / (lossy windows per second), given as loss_episode_pkts; the loss
 * does not move.
 */
static void test_bneck_episodes(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage();
	struct bneck_xfer x = offwin_fixture_xfer(12, BNECK_LOSS_SERVICE);
	struct bneck_result r, one;
	struct bneck_point pts[64];
	struct bneck_ws ws;
	uint32_t n, checked = 0;

	(void)state;
	s.cpu_bound = 0;
	s.wake_per_s = 50.0;
	s.wake_hist[23] = 2.0;	/* 8.4-16.8 ms */
	s.wake_hist[24] = 1.0;	/* 17-34 ms */
	s.wake_max_s = 20e-3;
	x.rounds = BNECK_ROUNDS_BURST;
	x.loss_episode_pkts = 5000.0;
	x.episodes_from_windows = true;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	n = r.npoints;
	assert_true(n <= 64);
	memcpy(pts, r.curve, n * sizeof(pts[0]));
	for (uint32_t j = 0; j < n; j++) {
		struct bneck_xfer xj = x;
		double lambda = pts[j].rate_bps / (8.0 * x.payload_bytes);
		struct offwin_in in = {
			.nslots = RXB_OFFCPU_SLOTS, .queue_pkts = s.queue_pkts,
			.wake_per_s = s.wake_per_s, .wake_count = s.wake_hist,
			.wake_max_s = s.wake_max_s,
		};
		double lossy = offwin_lossy_per_s(&in, lambda, OFFWIN_LOGUNIFORM);
		double l = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);

		if (!(lossy > 0.0) || !(l >= pts[j].loss * (1 - 1e-9)))
			continue;	/* the windows do not set the loss there */
		xj.episodes_from_windows = false;
		xj.loss_episode_pkts = fmax(1.0, lambda * l / lossy);
		assert_int_equal(bneck_compute(&ws, &s, 1, &xj, NULL, &one), 0);
		assert_true(one.curve[j].rate_bps == pts[j].rate_bps);
		check_rel(one.curve[j].time_s, pts[j].time_s, 1e-9, "T at the rate's episode");
		check_rel(one.curve[j].loss, pts[j].loss, 1e-12, "the loss");
		checked++;
	}
	assert_true(checked >= 3);
	bneck_ws_finish(&ws);
}

static void test_bneck_wake_max(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage();
	struct bneck_xfer x = offwin_fixture_xfer(48, BNECK_LOSS_QUEUE);
	struct bneck_result r;
	struct bneck_ws ws;

	(void)state;
	s.wake_per_s = 10.0;
	s.wake_hist[24] = 2.0;	/* 17-34 ms */
	s.wake_hist[25] = 1.0;	/* 34-67 ms: cut at 45 ms */
	s.wake_max_s = 45e-3;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_true(offwin_fixture_wake_curve(&ws, &s, &x, &r));
	bneck_fixture_refuses(&ws, &s, &x, &s.wake_max_s, -1.0, NAN, INFINITY);
	/* The release: at most the queue, a number >= 0; used by the curve. */
	s.wake_max_s = 45e-3;
	s.queue_release_pkts = s.queue_pkts / 4.0;
	assert_true(offwin_fixture_wake_curve(&ws, &s, &x, &r));
	bneck_fixture_refuses(&ws, &s, &x, &s.queue_release_pkts, s.queue_pkts + 1.0, -1.0, NAN);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_cap_inside_slot),
	cmocka_unit_test(test_cap_above_or_unknown),
	cmocka_unit_test(test_slot_above_cap),
	cmocka_unit_test(test_release),
	cmocka_unit_test(test_lossy_per_s),
	cmocka_unit_test(test_bneck_episodes),
	cmocka_unit_test(test_bneck_wake_max),
)
