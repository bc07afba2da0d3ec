// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bneck_compute_pieces() (solver/bneck_pieces.h) against independent
 * truths, on the `service` model's fixture receiver with three sets of
 * off-CPU windows measured at 2, 4 and 7 Gb/s (few long windows at the
 * fast rate, many short ones at the slow):
 *  - one piece is bneck_compute(), to the bit, curve included;
 *  - the pieces' ranges split at the geometric middles of their rates
 *    and cover the sweep without gap, and bneck_piece_of() agrees;
 *  - every point of the stitched curve is T at that rate with the stages
 *    of the piece it lies in (a plain solve at that one rate), to the bit;
 *  - the rate chosen lies in the piece reported, T there is that piece's
 *    T at the rate, and no rate of a brute-force grid of 4000 rates over
 *    the sweep (each with its own piece's stages) has a T below it by
 *    more than 1e-6 (the grid's own resolution);
 *  - pieces with the same stages choose as bneck_compute() does, within
 *    the golden-section refinement's width;
 *  - bneck_compute_windows() is bneck_compute_pieces() over pieces built
 *    by hand (the base stage with each set's windows), to the bit, and
 *    the base's other inputs (its buffer) hold in every piece;
 *  - pieces above the line rate are passed over, and so is a piece whose
 *    windows leave nothing to complete (-EDOM where every piece's do);
 *    unordered rates, none, or more than BNECK_MAX_PIECES are refused.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/bneck_pieces.h"
#include "bneck_fixture.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"

#define POINTS 64
#define NPIECES 3

/* Windows measured at @at_gbps: @per_s a second, in slots lo..lo+2 by @w. */
static void windows_at(struct rxb_stage_inputs *s, double per_s, int lo, const double *w)
{
	*s = offwin_fixture_stage();
	s->offcpu_per_s = per_s;
	for (int i = 0; i < 3; i++)
		s->offcpu_hist[lo + i] = w[i];
}

static void fixture(struct rxb_stage_inputs *st, struct bneck_piece *p)
{
	static const double slow[] = { 60, 30, 10 }, mid[] = { 30, 50, 20 };

	windows_at(&st[0], 900.0, 16, slow);	/* 65-524 us, 900/s */
	windows_at(&st[1], 200.0, 19, mid);	/* 0.5-4 ms, 200/s */
	windows_at(&st[2], 60.0, 22, mid);	/* 4-33 ms, 60/s */
	p[0] = (struct bneck_piece){ .at_bps = 2e9, .stages = &st[0] };
	p[1] = (struct bneck_piece){ .at_bps = 4e9, .stages = &st[1] };
	p[2] = (struct bneck_piece){ .at_bps = 7e9, .stages = &st[2] };
}

static void test_one_piece_is_compute(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES];
	struct bneck_piece p[NPIECES];
	struct bneck_point curve[POINTS];
	struct bneck_result a, b;
	struct bneck_ws ws;
	uint32_t which = 99;

	(void)state;
	fixture(st, p);
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_compute(&ws, &st[1], 1, &x, NULL, &a), 0);
	memcpy(curve, a.curve, sizeof(curve));
	assert_int_equal(bneck_compute_pieces(&ws, &p[1], 1, 1, &x, NULL, &b, &which), 0);
	assert_int_equal(which, 0);
	assert_true(a.rate_bps == b.rate_bps && a.time_s == b.time_s && a.loss == b.loss);
	assert_true(a.line_time_s == b.line_time_s && a.evaluations == b.evaluations);
	assert_int_equal(b.npoints, POINTS);
	for (uint32_t k = 0; k < POINTS; k++)
		assert_true(b.curve[k].rate_bps == curve[k].rate_bps &&
			    b.curve[k].time_s == curve[k].time_s);
	bneck_ws_finish(&ws);
}

static void test_ranges(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES];
	struct bneck_piece p[NPIECES];
	double lo, hi, prev_hi = x.min_rate_bps;

	(void)state;
	fixture(st, p);
	for (uint32_t j = 0; j < NPIECES; j++) {
		assert_true(bneck_piece_range(p, NPIECES, j, &x, &lo, &hi));
		assert_true(lo == prev_hi);
		prev_hi = hi;
		/* Inside the range: this piece; a hair outside: a neighbour. */
		assert_int_equal(bneck_piece_of(p, NPIECES, sqrt(lo * hi)), j);
		if (j + 1 < NPIECES) {
			check_rel(hi, sqrt(p[j].at_bps * p[j + 1].at_bps), 1e-15, "boundary");
			assert_int_equal(bneck_piece_of(p, NPIECES, hi * (1 + 1e-9)), j + 1);
		}
	}
	assert_true(prev_hi == x.line_rate_bps);
}

/* T at @rate with @p's piece for it, as a plain one-rate solve. */
static double piecewise_time(struct bneck_ws *ws, const struct bneck_piece *p,
			     const struct bneck_xfer *x, double rate)
{
	return bneck_fixture_time_at(ws, p[bneck_piece_of(p, NPIECES, rate)].stages, x, rate);
}

static void test_against_brute_force(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES];
	struct bneck_piece p[NPIECES];
	struct bneck_point curve[POINTS + 3 * NPIECES];
	struct bneck_result r;
	struct bneck_ws ws, ws2;
	double best = INFINITY, lo, hi;
	uint32_t which, n;

	(void)state;
	fixture(st, p);
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_ws_init(&ws2, POINTS), 0);
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, &which), 0);
	n = r.npoints;
	assert_true(n >= POINTS - NPIECES && n <= POINTS + 3 * NPIECES);
	memcpy(curve, r.curve, n * sizeof(curve[0]));
	for (uint32_t k = 0; k < n; k++) {
		/* A piece's last rate is the next one's first: either's T. */
		double t = curve[k].time_s, rate = curve[k].rate_bps;
		double t0 = piecewise_time(&ws2, p, &x, rate);

		if (k + 1 < n && curve[k + 1].rate_bps == rate)
			t0 = bneck_fixture_time_at(&ws2, p[bneck_piece_of(p, NPIECES, rate)].stages,
						   &x, rate);
		if (k && curve[k - 1].rate_bps == rate)
			t0 = bneck_fixture_time_at(&ws2,
				p[bneck_piece_of(p, NPIECES, rate * (1 + 1e-12))].stages, &x, rate);
		assert_true(t == t0);
		assert_true(!k || rate >= curve[k - 1].rate_bps);
	}
	assert_true(bneck_piece_range(p, NPIECES, which, &x, &lo, &hi));
	assert_true(r.rate_bps >= lo && r.rate_bps <= hi);
	check_rel(r.time_s, bneck_fixture_time_at(&ws2, p[which].stages, &x, r.rate_bps), 1e-6,
		  "T at the rate chosen, its piece's");
	for (int k = 0; k <= 4000; k++) {
		double rate = x.min_rate_bps + k * (x.line_rate_bps - x.min_rate_bps) / 4000;

		best = fmin(best, piecewise_time(&ws2, p, &x, rate));
	}
	print_message("pieces: rate %.3f Gb/s in piece %u, T %.6f s; brute force %.6f s\n",
		      r.rate_bps / 1e9, which, r.time_s, best);
	assert_true(r.time_s <= best * (1 + 1e-6));
	/* The fixture's windows make a piece other than the slowest matter. */
	assert_true(which > 0);
	bneck_ws_finish(&ws);
	bneck_ws_finish(&ws2);
}

static void test_same_stages(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES];
	struct bneck_piece p[NPIECES];
	struct bneck_result a, b;
	struct bneck_ws ws;

	(void)state;
	fixture(st, p);
	for (uint32_t j = 0; j < NPIECES; j++)
		p[j].stages = &st[1];
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_compute(&ws, &st[1], 1, &x, NULL, &a), 0);
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &b, NULL), 0);
	print_message("same stages: %.6f Gb/s T %.9f s, in pieces %.6f Gb/s T %.9f s\n",
		      a.rate_bps / 1e9, a.time_s, b.rate_bps / 1e9, b.time_s);
	check_rel(b.time_s, a.time_s, 1e-6, "T of the same stages in pieces");
	bneck_ws_finish(&ws);
}

static void test_windows_over_base(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES], base, hand[NPIECES];
	struct bneck_piece p[NPIECES];
	double at_bps[NPIECES];
	struct bneck_result a, b;
	struct bneck_ws ws, ws2;
	uint32_t wa, wb;

	(void)state;
	fixture(st, p);
	/* A base whose windows are none of the pieces' and whose buffer differs. */
	base = st[1];
	base.queue_pkts = st[1].queue_pkts / 2;
	base.offcpu_per_s = 5.0;
	for (uint32_t j = 0; j < NPIECES; j++) {
		hand[j] = base;
		bneck_piece_windows(&hand[j], &st[j]);
		p[j].stages = &hand[j];
		at_bps[j] = p[j].at_bps;
	}
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_ws_init(&ws2, POINTS), 0);
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &a, &wa), 0);
	assert_int_equal(bneck_compute_windows(&ws2, &base, 1, st, at_bps, NPIECES, &x, NULL, &b,
					       &wb), 0);
	assert_int_equal(wa, wb);
	assert_true(a.rate_bps == b.rate_bps && a.time_s == b.time_s);
	assert_int_equal(a.npoints, b.npoints);
	for (uint32_t i = 0; i < a.npoints; i++)
		assert_true(a.curve[i].rate_bps == b.curve[i].rate_bps &&
			    a.curve[i].time_s == b.curve[i].time_s);
	for (uint32_t j = 0; j < NPIECES; j++) {
		assert_int_equal(ws2.piece_st[j][0].queue_pkts, base.queue_pkts);
		assert_true(ws2.piece_st[j][0].offcpu_per_s == st[j].offcpu_per_s);
	}
	assert_int_equal(bneck_compute_windows(&ws2, &base, 1, st, at_bps, 0, &x, NULL, &b, NULL),
			 -EINVAL);
	bneck_ws_finish(&ws);
	bneck_ws_finish(&ws2);
}

static void test_refused_and_skipped(void **state)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct rxb_stage_inputs st[NPIECES];
	struct bneck_piece p[NPIECES], many[BNECK_MAX_PIECES + 1];
	struct bneck_result r, a;
	struct bneck_ws ws;
	uint32_t which;

	(void)state;
	fixture(st, p);
	assert_int_equal(bneck_ws_init(&ws, POINTS), 0);
	assert_int_equal(bneck_compute_pieces(&ws, p, 0, 1, &x, NULL, &r, NULL), -EINVAL);
	p[1].at_bps = p[0].at_bps;
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, NULL), -EINVAL);
	p[1].at_bps = NAN;
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, NULL), -EINVAL);
	for (uint32_t j = 0; j <= BNECK_MAX_PIECES; j++)
		many[j] = (struct bneck_piece){ .at_bps = 1e9 * (j + 1), .stages = &st[0] };
	assert_int_equal(bneck_compute_pieces(&ws, many, BNECK_MAX_PIECES + 1, 1, &x, NULL, &r,
					      NULL), -EINVAL);
	/* Pieces measured far above the line rate cover nothing of it. */
	fixture(st, p);
	p[1].at_bps = 1e12;
	p[2].at_bps = 2e12;
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, &which), 0);
	assert_int_equal(which, 0);
	assert_int_equal(bneck_compute(&ws, &st[0], 1, &x, NULL, &a), 0);
	assert_true(r.rate_bps == a.rate_bps && r.time_s == a.time_s);
	/*
	 * Windows that would take more than all the time (60 a second of
	 * 17 ms on average): nothing completes in their piece, which is
	 * passed over; the line rate's T is then infinite.
	 */
	fixture(st, p);
	st[2].offcpu_hist[22] = 10;
	st[2].offcpu_hist[23] = 40;
	st[2].offcpu_hist[24] = 50;
	assert_int_equal(bneck_compute(&ws, &st[2], 1, &x, NULL, &a), -EDOM);
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, &which), 0);
	assert_true(which < 2 && isinf(r.line_time_s));
	assert_true(r.curve[r.npoints - 1].rate_bps < x.line_rate_bps);
	/* Every piece so: nothing completes anywhere. */
	for (uint32_t j = 0; j < NPIECES; j++)
		p[j].stages = &st[2];
	assert_int_equal(bneck_compute_pieces(&ws, p, NPIECES, 1, &x, NULL, &r, NULL), -EDOM);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_one_piece_is_compute),
	cmocka_unit_test(test_ranges),
	cmocka_unit_test(test_against_brute_force),
	cmocka_unit_test(test_same_stages),
	cmocka_unit_test(test_windows_over_base),
	cmocka_unit_test(test_refused_and_skipped),
)
