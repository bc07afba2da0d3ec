// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a round's ends take off its loss to the off-CPU windows
 * (offwin_round_absorb()), against a second method: the round's loss
 * integrated from its definition,
 *
 *   loss(n) = ν ∫_0^D E[(λ min(W, u) − F)+] du,   D = n / λ,
 *
 * u the time left in the round when a window begins, by Simpson's rule
 * over u (4000 panels) and over ln w within each log-uniform slot (400
 * panels), for the windows after preemption (F from their gap) and the
 * waits after a wake-up (F = K) alike. Checked:
 *  - a round longer than its longest window loses n l − (the end term),
 *    n l from offwin_loss(), to 1e-6 of the round's loss;
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
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "solver/offwin.h"
#include "tests/unit/unit_main.h"

#define NS 32

/* E[(min(W, u) − x)+] over the histogram, Simpson over ln w in each slot. */
static double excess_min(const double *count, double u, double x)
{
	const int n = 400;
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < NS; r++) {
		double a, b, lo, h, s = 0.0;

		if (!(count[r] > 0.0))
			continue;
		offwin_slot_s(r, &a, &b);
		lo = log(a);
		h = (log(b) - lo) / n;
		for (int k = 0; k <= n; k++) {
			double w = fmin(exp(lo + k * h), u);
			double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

			s += c * (w > x ? w - x : 0.0);
		}
		total += count[r];
		sum += count[r] * s * h / 3.0 / (log(b) - lo);
	}
	return total > 0.0 ? sum / total : 0.0;
}

/* A round of @d_s seconds at @lambda: packets lost to windows of one kind. */
static double round_loss_quad(const double *count, double per_s, double lambda,
			      double room_pkts, double d_s)
{
	const int n = 4000;
	double h = d_s / n, sum = 0.0;

	for (int k = 0; k <= n; k++) {
		double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

		sum += c * excess_min(count, k * h, room_pkts / lambda);
	}
	return lambda * per_s * sum * h / 3.0;
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

/* The round's loss by quadrature, both kinds of window. */
static double round_quad(const struct fixture *f, double lambda, double d_s)
{
	double free_pkts = offwin_free_pkts(f->in.queue_pkts, lambda,
					    f->in.on_pkts_per_s, f->in.gap_s);

	return round_loss_quad(f->count, f->in.per_s, lambda, free_pkts, d_s) +
	       round_loss_quad(f->wake, f->in.wake_per_s, lambda, f->in.queue_pkts, d_s);
}

/* λ (E[(W − F/λ)+] − E[(W − K/λ)+]) by Simpson: min(W, u) with u past the slots. */
static double start_term_quad(const struct fixture *f, double lambda)
{
	double free_pkts = offwin_free_pkts(f->in.queue_pkts, lambda,
					    f->in.on_pkts_per_s, f->in.gap_s);

	return lambda * (excess_min(f->count, 1.0, free_pkts / lambda) -
			 excess_min(f->count, 1.0, f->in.queue_pkts / lambda));
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
	assert_true(fabs((n * l - quad) - (got - start)) <= 1e-6 * quad);
	assert_true(got - start > 0.0);
}

/*
 * Rounds of 0.2 s (longer than any window), the fixture's windows @gap_s
 * apart, at 2e5 .. @lambda_hi packets/s: with gaps that drain the queue
 * (F = K) the end term alone, with short ones (F < K) the start term too.
 */
static void sweep_long_rounds(double gap_s, double lambda_hi)
{
	struct fixture f;

	fixture_init(&f, gap_s);
	for (double lambda = 2e5; lambda <= lambda_hi; lambda += 1e5) {
		double free_pkts = offwin_free_pkts(f.in.queue_pkts, lambda,
						    f.in.on_pkts_per_s, f.in.gap_s);
		double start = start_term_quad(&f, lambda);

		if (free_pkts < f.in.queue_pkts)
			assert_true(start > 1.0);
		else
			assert_true(fabs(start) <= 1e-9);
		check_long_round(&f, lambda, 0.2);
	}
}

static void test_drained_end_term(void **state)
{
	(void)state;
	/* (6e5 − 5e5) × 0.05 s = 5000 > K: every window finds an empty queue. */
	sweep_long_rounds(0.05, 5e5);
}

static void test_short_gaps_start_term(void **state)
{
	(void)state;
	/* (6e5 − 2e5) × 0.002 s = 800 < K: F < K at every rate. */
	sweep_long_rounds(0.002, 5e5);
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
		double free_pkts = offwin_free_pkts(f.in.queue_pkts, lambda,
						    f.in.on_pkts_per_s, f.in.gap_s);

		for (double d_s = 0.002; d_s <= 0.04; d_s *= 1.5) {
			double quad = round_quad(&f, lambda, d_s);

			assert_true(quad >= fmax(lambda * d_s * l - c, 0.0) - 1e-6 * (quad + 1.0));
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

UNIT_TEST_MAIN(
	cmocka_unit_test(test_drained_end_term),
	cmocka_unit_test(test_short_gaps_start_term),
	cmocka_unit_test(test_short_round_bound),
	cmocka_unit_test(test_edges_bracket),
)
