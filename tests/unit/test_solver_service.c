// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The `service` loss model (bneck.h BNECK_LOSS_SERVICE) against
 * independent truths, on a receiver that shares its CPU with two busy
 * loops and is switched out for 4-33 ms windows 60 times a second:
 *  - every point's stage loss is the larger of the bulk queue served at
 *    the receiver's own rate (the queue model solved with #C = 0) and
 *    offwin_loss() at the point's packet rate: the co-runners' share is
 *    not counted a second time, nor the CPU bursts of I/O-bound tasks
 *    (#I = 2 beside the loops: the queue at #C = #I = 0);
 *  - where the windows set the loss, the first blast of n packets loses
 *    (n l − c)+, c what the round's ends absorb by offwin_round_absorb()
 *    (test_solver_offwin_round checks it by quadrature) at the receiver's
 *    own drain, with no step at the shared mean drain (the queue model's
 *    rate with the co-runners);
 *  - N_resend there is the brute-force iteration of the rounds,
 *    n_{i+1} = (n_i l − c)+, counted as sum min(1, n_i) (packets lost one
 *    by one);
 *  - a stage without measured windows is the queue model, point by point;
 *  - with the fastest reads its windows were met at given, every point
 *    up to BNECK_WINDOWS_REACH times that is `service`'s without it, and
 *    every point above it is the windows model's, to the bit.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/offwin.h"
#include "bneck_fixture.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"

#define POINTS 64

static void fill_windows(struct rxb_stage_inputs *s)
{
	*s = offwin_fixture_stage();
	s->offcpu_per_s = 60.0;
	s->offcpu_hist[22] = 30.0;	/* 4.2-8.4 ms */
	s->offcpu_hist[23] = 50.0;	/* 8.4-16.8 ms */
	s->offcpu_hist[24] = 20.0;	/* 16.8-33.6 ms */
}

/* Rounds after the first by direct iteration: sum of min(1, n_i), i >= 1. */
static double iterate_resends(double n_pkts, double loss, double absorb_pkts)
{
	double rounds = 0.0;

	for (int i = 0; i < 100000; i++) {
		n_pkts = fmax(n_pkts * loss - absorb_pkts, 0.0);
		if (!(n_pkts > 0.0))
			break;
		rounds += fmin(1.0, n_pkts);
	}
	return rounds;
}

struct regimes {
	int above, below;	/* windows ruling: above / below the shared drain */
};

/*
 * One point of @r (`service`) against the truths above; @qalone the
 * queue model's loss at #C = 0 there, @drain_pkts_per_s the shared drain.
 */
static void check_point(const struct bneck_point *pt, double qalone, const struct offwin_in *in,
			const struct bneck_xfer *x, double drain_pkts_per_s, struct regimes *seen)
{
	double lambda = pt->rate_bps / (8.0 * x->payload_bytes);
	double n = x->file_bytes / x->payload_bytes;
	double lw = offwin_loss(in, lambda, OFFWIN_LOGUNIFORM);
	double want = fmax(qalone, lw), absorb, first;

	assert_true(fabs(pt->loss - want) <= 1e-9 * fmax(want, 1e-300));
	if (!(lw > qalone) || !(lw > 1e-3) || !(lw < 1.0))
		return;
	absorb = offwin_round_absorb(in, lambda, OFFWIN_LOGUNIFORM);
	first = fmax(n * lw - absorb, 0.0) / n;
	assert_true(fabs(pt->first_loss - first) <= 1e-9 * fmax(first, 1e-12));
	assert_true(fabs(pt->n_resend - iterate_resends(n, lw, absorb)) <= 1e-6);
	assert_true(absorb > 0.0);
	if (n * lw > absorb) {
		if (lambda > drain_pkts_per_s)
			seen->above++;
		else
			seen->below++;
	}
}

/*
 * The points of `service` on the fixture's windows with @io_bound I/O-bound
 * tasks beside the loops: their CPU bursts are in the measured windows too,
 * so between them the receiver runs alone (#C = #I = 0).
 */
static void service_points(double io_bound)
{
	struct rxb_stage_inputs s, alone;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_QUEUE);
	struct bneck_result r;
	struct bneck_ws ws;
	struct offwin_in in;
	struct regimes seen = { 0 };
	double qalone[POINTS], drain;
	int differ = 0;

	fill_windows(&s);
	s.io_bound = io_bound;
	s.mu_pio_per_s = 2000.0;	/* 0.5 ms CPU bursts */
	s.mu_disk_per_s = 1000.0;
	alone = s;
	alone.cpu_bound = 0.0;
	if (io_bound > 0.0) {
		/* The queue alone with the I/O bursts counted loses more. */
		assert_int_equal(bneck_ws_init(&ws, x.points), 0);
		assert_int_equal(bneck_compute(&ws, &alone, 1, &x, NULL, &r), 0);
		for (uint32_t j = 0; j < r.npoints; j++)
			qalone[j] = r.curve[j].loss;
		alone.io_bound = 0.0;
		assert_int_equal(bneck_compute(&ws, &alone, 1, &x, NULL, &r), 0);
		for (uint32_t j = 0; j < r.npoints; j++)
			differ += qalone[j] > r.curve[j].loss * 1.01 + 1e-9;
		assert_true(differ >= 3);
		bneck_ws_finish(&ws);
	}
	in = bneck_fixture_windows_in(&s);
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	/* The shared drain: the queue model's rate beside the two loops. */
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	drain = r.stage[0].service_rate_per_s * s.batch_pkts;
	assert_true(drain < 0.5 * s.mu_net_per_s);
	assert_int_equal(bneck_compute(&ws, &alone, 1, &x, NULL, &r), 0);
	for (uint32_t j = 0; j < r.npoints; j++)
		qalone[j] = r.curve[j].loss;
	x.loss_model = BNECK_LOSS_SERVICE;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	assert_int_equal(r.npoints, POINTS);
	for (uint32_t j = 0; j < r.npoints; j++)
		check_point(&r.curve[j], qalone[j], &in, &x, drain, &seen);
	print_message("windows ruling: %d points above the shared drain, %d below\n",
		      seen.above, seen.below);
	assert_true(seen.above >= 3 && seen.below >= 3);
	assert_string_equal(bneck_loss_name(BNECK_LOSS_SERVICE), "service");
	offwin_fixture_refused(&ws, &s, &x, &s.offcpu_hist[3], &s.offcpu_per_s, -1.0);
	bneck_ws_finish(&ws);
}

static void test_service_points(void **state)
{
	(void)state;
	service_points(0.0);
}

static void test_service_points_io_bound(void **state)
{
	(void)state;
	service_points(2.0);
}

static void test_no_windows_is_queue(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage();
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_QUEUE);
	struct bneck_result r;
	struct bneck_ws ws;
	double loss[POINTS], time_s[POINTS], rate_bps;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		loss[j] = r.curve[j].loss;
		time_s[j] = r.curve[j].time_s;
	}
	rate_bps = r.rate_bps;
	x.loss_model = BNECK_LOSS_SERVICE;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		assert_true(r.curve[j].loss == loss[j]);
		assert_true(r.curve[j].time_s == time_s[j]);
	}
	assert_true(r.rate_bps == rate_bps);
	bneck_ws_finish(&ws);
}

/* Stage @s's curve under @loss_model into @loss and @time_s. */
static void curve_of(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
		     enum bneck_loss loss_model, double *loss, double *time_s)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, loss_model);
	struct bneck_result r;

	assert_int_equal(bneck_compute(ws, s, 1, &x, NULL, &r), 0);
	assert_int_equal(r.npoints, POINTS);
	for (uint32_t j = 0; j < r.npoints; j++) {
		loss[j] = r.curve[j].loss;
		time_s[j] = r.curve[j].time_s;
	}
}

static void test_windows_reach(void **state)
{
	struct rxb_stage_inputs s;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct bneck_result r;
	struct bneck_ws ws;
	double svc[POINTS], svc_t[POINTS], win[POINTS], win_t[POINTS];
	double seen_pps, lambda;
	int within = 0, beyond = 0, differ = 0;

	(void)state;
	fill_windows(&s);
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	curve_of(&ws, &s, BNECK_LOSS_SERVICE, svc, svc_t);
	curve_of(&ws, &s, BNECK_LOSS_WINDOWS, win, win_t);
	/* The reach in the middle of the sweep. */
	seen_pps = (x.min_rate_bps + x.line_rate_bps) / 2 / (8.0 * x.payload_bytes) /
		   BNECK_WINDOWS_REACH;
	s.windows_seen_pps = seen_pps;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	assert_int_equal(r.npoints, POINTS);
	for (uint32_t j = 0; j < POINTS; j++) {
		const struct bneck_point *p = &r.curve[j];

		lambda = p->rate_bps / (8.0 * x.payload_bytes);
		if (lambda <= BNECK_WINDOWS_REACH * seen_pps) {
			assert_true(p->loss == svc[j] && p->time_s == svc_t[j]);
			within++;
		} else {
			assert_true(p->loss == win[j] && p->time_s == win_t[j]);
			differ += win[j] > svc[j] * 1.01 + 1e-12 || win_t[j] > svc_t[j] * 1.001;
			beyond++;
		}
	}
	print_message("%d points within the reach, %d beyond (%d of them worse "
		      "than service)\n", within, beyond, differ);
	assert_true(within >= 10 && beyond >= 10 && differ >= 3);
	s.windows_seen_pps = -1.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	s.windows_seen_pps = NAN;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_service_points),
	cmocka_unit_test(test_service_points_io_bound),
	cmocka_unit_test(test_no_windows_is_queue),
	cmocka_unit_test(test_windows_reach),
)
