// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a round's ends take off its loss to the off-CPU windows
 * (offwin_round_absorb()), against a second method: the round's loss
 * integrated from its definition,
 *
 *   loss(n) = ν ∫_0^D E[(λ min(W, u) − F)+] du,   D = n / λ,
 *
 * u the time left in the round when a window begins, by Simpson's rule
 * over u (200 panels up to the longest window, constant after it) and
 * over ln w within each log-uniform slot (40 panels on each piece
 * between the corners w = F/λ and w = u), for the windows
 * after preemption (F = K − (min(K, λ D') − (c − λ) g)+ from the window
 * D' before and the run g, averaged over D' by Simpson over ln D', 16
 * panels on each piece between the room's corners) and the waits after a
 * wake-up (F = K) alike. Checked:
 *  - a round longer than its longest window loses n l − (the end term),
 *    n l from offwin_loss(), to 1e-5 of the round's loss, where the
 *    queue keeps up on average (λ (E[W] + g) <= c g);
 *  - the start term is λ (E[(W − F/λ)+] − E[(W − K/λ)+]), each by
 *    Simpson over the slots (the first window after preemption finds K);
 *  - a round shorter than its longest window loses at least
 *    (n l − absorbed)+ (the lower bound offwin.h states), and a round of
 *    fewer packets than the room F loses nothing;
 *  - the lower and upper slot edges bracket the log-uniform end term.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "solver/offwin.h"
#include "tests/unit/unit_main.h"

#define NS 32

/* Simpson over [@lo, @hi] in ln w of (min(w, u) − x)+. */
static double simpson_min(double lo, double hi, double u, double x)
{
	const int n = 40;
	double h = (hi - lo) / n, s = 0.0;

	for (int k = 0; k <= n; k++) {
		double w = fmin(exp(lo + k * h), u);
		double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

		s += c * (w > x ? w - x : 0.0);
	}
	return s * h / 3.0;
}

/*
 * E[(min(W, u) − x)+] over the histogram: Simpson over ln w in each slot,
 * cut at its corners w = x and w = u.
 */
static double excess_min(const double *count, double u, double x)
{
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < NS; r++) {
		double a, b, cut[2], lo, s = 0.0;

		if (!(count[r] > 0.0))
			continue;
		offwin_slot_s(r, &a, &b);
		cut[0] = fmin(x, u);
		cut[1] = fmax(x, u);
		lo = log(a);
		for (int j = 0; j < 2; j++) {
			if (cut[j] > exp(lo) && cut[j] < b) {
				s += simpson_min(lo, log(cut[j]), u, x);
				lo = log(cut[j]);
			}
		}
		s += simpson_min(lo, log(b), u, x);
		total += count[r];
		sum += count[r] * s / log(b / a);
	}
	return total > 0.0 ? sum / total : 0.0;
}

/* The longest window of the histogram: the top of its last slot. */
static double top_s(const double *count)
{
	double a, b = 0.0;

	for (size_t r = 0; r < NS; r++)
		if (count[r] > 0.0)
			offwin_slot_s(r, &a, &b);
	return b;
}

/*
 * A round of @d_s seconds at @lambda: packets lost to windows of one kind
 * that find @room_pkts. Past the longest window the integrand is constant.
 */
static double round_loss_quad(const double *count, double per_s, double lambda,
			      double room_pkts, double d_s)
{
	const int n = 200;
	double top = fmin(top_s(count), d_s), h = top / n, sum = 0.0;

	for (int k = 0; k <= n; k++) {
		double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

		sum += c * excess_min(count, k * h, room_pkts / lambda);
	}
	sum = sum * h / 3.0 + (d_s - top) * excess_min(count, 1.0, room_pkts / lambda);
	return lambda * per_s * sum;
}

/*
 * The room a window after preemption finds after one of @prev_s, from its
 * definition: the previous window filled the empty queue to
 * min(K, λ prev), the run of g drained (c − λ) g of it.
 */
static double room_after(const struct offwin_in *in, double lambda, double prev_s)
{
	double left = fmin(in->queue_pkts, lambda * prev_s) -
		      fmax(in->on_pkts_per_s - lambda, 0.0) * in->gap_s;

	return in->queue_pkts - fmax(left, 0.0);
}

typedef double (*room_quad_fn)(const void *arg, double room_pkts);

/* Simpson over ln w on [@lo, @hi] of @fn at the room after a window of w. */
static double simpson_previous(const struct offwin_in *in, double lambda, room_quad_fn fn,
			       const void *arg, double lo, double hi)
{
	const int n = 16;
	double h = (hi - lo) / n, s = 0.0;

	for (int k = 0; k <= n; k++) {
		double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

		s += c * fn(arg, room_after(in, lambda, exp(lo + k * h)));
	}
	return s * h / 3.0;
}

/*
 * The mean of @fn over the previous window, log-uniform in each slot:
 * Simpson over ln w, each slot cut where the room has a corner (the
 * previous window brings what a run drains, or fills the queue).
 */
static double over_previous(const struct offwin_in *in, double lambda, room_quad_fn fn,
			    const void *arg)
{
	double corner[2] = { fmax(in->on_pkts_per_s - lambda, 0.0) * in->gap_s / lambda,
			     in->queue_pkts / lambda };
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < NS; r++) {
		double a, b, lo, s = 0.0;

		if (!(in->count[r] > 0.0))
			continue;
		offwin_slot_s(r, &a, &b);
		lo = log(a);
		for (int j = 0; j < 2; j++) {
			if (corner[j] > exp(lo) && corner[j] < b) {
				s += simpson_previous(in, lambda, fn, arg, lo, log(corner[j]));
				lo = log(corner[j]);
			}
		}
		s += simpson_previous(in, lambda, fn, arg, lo, log(b));
		total += in->count[r];
		sum += in->count[r] * s / (log(b) - log(a));
	}
	return total > 0.0 ? sum / total : 0.0;
}

struct fixture {
	double count[NS], wake[NS];
	struct offwin_in in;
};

/* Preemption windows of 4-34 ms 60 a second, wake-up waits of 2-8 ms 30. */
static void fixture_init(struct fixture *f, double gap_s)
{
	memset(f, 0, sizeof(*f));
	f->count[22] = 30.0;	/* 4.2-8.4 ms */
	f->count[23] = 50.0;	/* 8.4-16.8 ms */
	f->count[24] = 20.0;	/* 16.8-33.6 ms */
	f->wake[21] = 60.0;	/* 2.1-4.2 ms */
	f->wake[22] = 40.0;	/* 4.2-8.4 ms */
	f->in = (struct offwin_in){
		.per_s = 60.0, .count = f->count, .nslots = NS,
		.queue_pkts = 1500.0, .on_pkts_per_s = 6e5, .gap_s = gap_s,
		.wake_per_s = 30.0, .wake_count = f->wake,
	};
}

struct round_arg {
	const struct fixture *f;
	double lambda, d_s;
};

static double round_at_room(const void *arg, double room_pkts)
{
	const struct round_arg *ra = arg;

	return round_loss_quad(ra->f->count, ra->f->in.per_s, ra->lambda, room_pkts, ra->d_s);
}

/* The round's loss by quadrature, both kinds of window. */
static double round_quad(const struct fixture *f, double lambda, double d_s)
{
	struct round_arg ra = { f, lambda, d_s };

	return over_previous(&f->in, lambda, round_at_room, &ra) +
	       round_loss_quad(f->wake, f->in.wake_per_s, lambda, f->in.queue_pkts, d_s);
}

static double excess_at_room(const void *arg, double room_pkts)
{
	const struct round_arg *ra = arg;

	return excess_min(ra->f->count, 1.0, room_pkts / ra->lambda);
}

/* λ (E[(W − F/λ)+] − E[(W − K/λ)+]) by Simpson: min(W, u) with u past the slots. */
static double start_term_quad(const struct fixture *f, double lambda)
{
	struct round_arg ra = { f, lambda, 0.0 };

	return lambda * (over_previous(&f->in, lambda, excess_at_room, &ra) -
			 excess_min(f->count, 1.0, f->in.queue_pkts / lambda));
}

/*
 * Whether the windows and runs bring more than the receiver drains,
 * λ (E[W] + g) > c g: then the queue stays full and the loss is not the
 * rooms' (offwin.h).
 */
static bool overloaded(const struct fixture *f, double lambda)
{
	double mean_s = excess_min(f->count, 1.0, 0.0);

	return lambda * (mean_s + f->in.gap_s) > f->in.on_pkts_per_s * f->in.gap_s;
}

static void check_long_round(const struct fixture *f, double lambda, double d_s)
{
	double n = lambda * d_s, l = offwin_loss(&f->in, lambda, OFFWIN_LOGUNIFORM);
	double got = offwin_round_absorb(&f->in, lambda, OFFWIN_LOGUNIFORM);
	double quad = round_quad(f, lambda, d_s), start = start_term_quad(f, lambda);

	print_message("lambda %.0f: n l %.1f, quadrature %.1f, absorbed %.1f (start %.1f)\n",
		      lambda, n * l, quad, got, start);
	assert_true(quad > 0.0 && got > 0.0);
	/* The end term alone: what the round's end takes off n l. */
	assert_true(fabs((n * l - quad) - (got - start)) <= 1e-5 * quad);
	assert_true(got - start > 0.0);
}

/*
 * Rounds of 0.2 s (longer than any window), the fixture's windows @gap_s
 * apart, from @lambda_lo to @lambda_hi packets/s, where the queue keeps up
 * on average: with gaps that drain it (F = K) the end term alone, with
 * short ones (F < K after the long windows) the start term too.
 */
static void sweep_long_rounds(double gap_s, double lambda_lo, double lambda_hi, double step)
{
	struct fixture f;
	int checked = 0;

	fixture_init(&f, gap_s);
	for (double lambda = lambda_lo; lambda <= lambda_hi; lambda += step) {
		double start;

		if (overloaded(&f, lambda))
			continue;
		start = start_term_quad(&f, lambda);
		if (room_after(&f.in, lambda, top_s(f.count)) < f.in.queue_pkts)
			assert_true(start > 1.0);
		else
			assert_true(fabs(start) <= 1e-9);
		check_long_round(&f, lambda, 0.2);
		checked++;
	}
	assert_true(checked >= 3);
}

static void test_drained_end_term(void **state)
{
	(void)state;
	/* (6e5 − 5e5) × 0.05 s = 5000 > K: every window finds an empty queue. */
	sweep_long_rounds(0.05, 2e5, 5e5, 1e5);
}

static void test_short_gaps_start_term(void **state)
{
	(void)state;
	/*
	 * (6e5 − λ) × 0.002 s < K, and more than a mean window brings at
	 * 5e4-7e4/s: after the long windows F < K.
	 */
	sweep_long_rounds(0.002, 5e4, 7e4, 1e4);
}

/* Rounds shorter than the longest window: the stated lower bound. */
static void test_short_round_bound(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f, 0.05);
	for (double lambda = 2e5; lambda <= 6e5; lambda += 2e5) {
		double l = offwin_loss(&f.in, lambda, OFFWIN_LOGUNIFORM);
		double c = offwin_round_absorb(&f.in, lambda, OFFWIN_LOGUNIFORM);
		double free_pkts = room_after(&f.in, lambda, top_s(f.count));

		for (double d_s = 0.002; d_s <= 0.04; d_s *= 1.5) {
			double quad = round_quad(&f, lambda, d_s);

			assert_true(quad >= fmax(lambda * d_s * l - c, 0.0) - 1e-5 * (quad + 1.0));
			if (lambda * d_s < free_pkts)
				assert_true(quad <= 1e-9);
		}
	}
}

static void test_edges_bracket(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f, 0.05);
	for (double lambda = 1e5; lambda <= 1e6; lambda *= 1.3) {
		double lo = offwin_round_absorb(&f.in, lambda, OFFWIN_LOW);
		double mid = offwin_round_absorb(&f.in, lambda, OFFWIN_LOGUNIFORM);
		double hi = offwin_round_absorb(&f.in, lambda, OFFWIN_HIGH);

		assert_true(lo <= mid + 1e-9 && mid <= hi + 1e-9);
	}
	/* No windows, no rate: nothing absorbed. */
	assert_true(offwin_round_absorb(&f.in, 0.0, OFFWIN_LOGUNIFORM) == 0.0);
	f.in.per_s = 0.0;
	f.in.wake_per_s = 0.0;
	assert_true(offwin_round_absorb(&f.in, 3e5, OFFWIN_LOGUNIFORM) == 0.0);
}

/*
 * A receiver that mostly sleeps, preempted now and then with short runs
 * before (the windows' overload term makes each lose its whole length):
 * its first round meets such a window only now and then, so adding them
 * never lowers the round's loss below the waits' alone (the round's first
 * window takes back at most what those windows lose in it).
 */
static void test_rare_windows_never_lower(void **state)
{
	double count[NS] = { 0 }, mean_s[NS] = { 0 }, sd_s[NS] = { 0 }, wake[NS] = { 0 };
	double n0 = 2e8 / 1456;
	struct offwin_in in = {
		.count = count, .mean_s = mean_s, .sd_s = sd_s, .nslots = NS,
		.queue_pkts = 3641, .on_pkts_per_s = 1.4e6, .gap_s = 20e-6,
		.wake_per_s = 100, .wake_count = wake, .release_pkts = 910,
		.round_pkts = n0,
	};

	(void)state;
	wake[20] = 45;
	wake[21] = 55;
	count[21] = 1;
	mean_s[21] = 3.77e-3;
	for (double lambda = 6e5; lambda <= 8.6e5; lambda += 2e4) {
		double with, alone;

		in.per_s = 1.3;
		with = fmax(n0 * offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM) -
			    offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM), 0.0);
		in.per_s = 0.0;
		alone = fmax(n0 * offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM) -
			     offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM), 0.0);
		assert_true(with >= alone * (1 - 1e-12));
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_drained_end_term),
	cmocka_unit_test(test_short_gaps_start_term),
	cmocka_unit_test(test_short_round_bound),
	cmocka_unit_test(test_edges_bracket),
	cmocka_unit_test(test_rare_windows_never_lower),
)
