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
 *    every point above it is the windows model's, to the bit;
 *  - with windows that leave the receiver more than its share beside two
 *    busy loops, every point up to the larger of the shared drain and the
 *    fastest reads they were met at is the curve with no loop beside
 *    them, to the bit, and every point above it has the windows model's
 *    loss, at least the fluid bound, T no less than that model's and a
 *    first round losing no less than the windows' round; with those
 *    reads not known, no such bound;
 *  - with the receiver's rate uncertain (mu_rel_sd), between the windows
 *    or through a quota's two phases, the rate chosen is the one with the
 *    least time expected by the three-point rule, done by hand with plain
 *    solves at scaled rates (bneck_fixture_check_expected());
 *  - with its saturated drain D given, every point at most D is as
 *    without it, to the bit, and above D the loss is the larger of the
 *    bulk queue drained at D and offwin_loss(), with a round losing no
 *    less than the windows' own round would; with the rate uncertain too,
 *    the time expected at the rate chosen is a fine quadrature's over the
 *    normal factor (plain solves at scaled rates) within 1 %; through a
 *    quota's phases the same, with the phases' loss and round in place of
 *    the windows', and the rate chosen comes down to about D.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/bulkq.h"
#include "solver/offwin.h"
#include "solver/qphase.h"
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

/* Stage @s's curve under @x into @loss and @time_s. */
static void curve_xfer(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
		       const struct bneck_xfer *x, double *loss, double *time_s)
{
	struct bneck_result r;

	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, &r), 0);
	assert_int_equal(r.npoints, x->points);
	for (uint32_t j = 0; j < r.npoints; j++) {
		loss[j] = r.curve[j].loss;
		time_s[j] = r.curve[j].time_s;
	}
}

/* Stage @s's curve under @loss_model into @loss and @time_s. */
static void curve_of(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
		     enum bneck_loss loss_model, double *loss, double *time_s)
{
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, loss_model);

	curve_xfer(ws, s, &x, loss, time_s);
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

/*
 * Windows of 1-4 ms, 100 a second, with 250 000 packets/s drained between
 * them, and no busy loop beside them: the windows are all the time it is
 * away (test_share_reach() puts two loops beside them).
 */
static void fill_short_windows(struct rxb_stage_inputs *s)
{
	fill_windows(s);
	s->cpu_bound = 0.0;
	memset(s->offcpu_hist, 0, sizeof(s->offcpu_hist));
	s->offcpu_per_s = 100.0;
	s->offcpu_hist[20] = 50.0;	/* 1-2 ms */
	s->offcpu_hist[21] = 50.0;	/* 2-4 ms */
	s->mu_net_per_s = 2.5e5;
}

/*
 * Windows met while the receiver slept through most of its receiving
 * (fill_short_windows(): a fifth of the time) beside two busy loops leave
 * it more than the third of its CPU it gets once it has work all the
 * time. With the fastest reads they were met at given (@seen_of_drain x
 * the shared drain, the queue model's rate beside the loops) and no
 * saturated drain, the bound B is the larger of the two: every point up
 * to B is the curve of the same windows with no loop beside them, to the
 * bit (served alone between the windows either way); above it the loss
 * is `windows`' (the larger of the bulk queue at the shared rate and the
 * windows'), at least the fluid bound 1 - drain / lambda, T no less than
 * `windows`' and a round losing no less than the windows' own round would
 * (as above a saturated drain: test_sat_drain()). Without those reads
 * known the windows are taken as met at the rate asked: no bound. Windows
 * that hold the loops' turns (fill_windows(): three quarters of the time)
 * have no such bound: test_service_points().
 */
static void share_reach_case(double seen_of_drain)
{
	struct rxb_stage_inputs s, alone;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE), xw;
	const double bits = 8.0 * x.payload_bytes, n = x.file_bytes / x.payload_bytes;
	double al[POINTS], al_t[POINTS], win[POINTS], win_t[POINTS], drain, bound, lambda, lw;
	struct bneck_result r;
	struct bneck_ws ws;
	struct offwin_in in;
	int within = 0, beyond = 0;

	x.rounds = BNECK_ROUNDS_BURST;
	xw = x;
	xw.loss_model = BNECK_LOSS_WINDOWS;
	fill_short_windows(&alone);
	s = alone;
	s.cpu_bound = 2.0;
	in = bneck_fixture_windows_in(&s);
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	drain = r.stage[0].service_rate_per_s * s.batch_pkts;
	s.windows_seen_pps = alone.windows_seen_pps = seen_of_drain * drain;
	bound = fmax(drain, seen_of_drain * drain);
	/* Within the reach, so that below B only the bound is in question. */
	assert_true(bound <= BNECK_WINDOWS_REACH * s.windows_seen_pps);
	assert_true(in.on_pkts_per_s * (1.0 - offwin_off_share(&in)) > 1.5 * drain);
	curve_xfer(&ws, &alone, &x, al, al_t);
	curve_xfer(&ws, &s, &xw, win, win_t);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t j = 0; j < POINTS; j++) {
		const struct bneck_point *p = &r.curve[j];

		lambda = p->rate_bps / bits;
		if (lambda <= bound) {
			assert_true(p->loss == al[j] && p->time_s == al_t[j]);
			within++;
			continue;
		}
		beyond++;
		lw = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);
		assert_true(p->loss == win[j]);
		assert_true(p->loss >= 1.0 - drain / lambda - 1e-12);
		assert_true(p->time_s >= win_t[j] * (1 - 1e-12));
		assert_true(p->first_loss * n >= n * lw -
			    offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM) - 1e-6 * n);
	}
	print_message("seen %.1f x the shared drain %.3f Gb/s: %d points within %.3f Gb/s, %d "
		      "beyond; rate %.3f Gb/s\n", seen_of_drain, drain * bits / 1e9, within,
		      bound * bits / 1e9, beyond, r.rate_bps / 1e9);
	assert_true(within >= 5 && beyond >= 20);
	assert_true(r.rate_bps <= 1.5 * bound * bits);
	check_rel(r.stage[0].share_reach_bps, bound * bits, 1e-12, "share_reach_bps");
	bneck_ws_finish(&ws);
}

static void test_share_reach(void **state)
{
	struct rxb_stage_inputs s;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	double al[POINTS], t[POINTS], l[POINTS], drain, lambda;
	struct bneck_result r;
	struct bneck_ws ws;
	int below_fluid = 0;

	(void)state;
	share_reach_case(0.6);
	share_reach_case(1.5);
	/*
	 * The reads not known: the windows hold at every rate, the loss the
	 * same with the loops or without (T is not: the queue left after a
	 * blast empties at the shared rate), below the fluid bound at the
	 * shared drain at some rates.
	 */
	fill_short_windows(&s);
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	curve_xfer(&ws, &s, &x, al, t);
	s.cpu_bound = 2.0;
	curve_xfer(&ws, &s, &x, l, t);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	drain = r.stage[0].service_rate_per_s * s.batch_pkts;
	assert_true(r.stage[0].share_reach_bps == 0.0);
	for (uint32_t j = 0; j < POINTS; j++) {
		assert_true(l[j] == al[j]);
		lambda = r.curve[j].rate_bps / (8.0 * x.payload_bytes);
		below_fluid += l[j] < 1.0 - drain / lambda;
	}
	assert_true(below_fluid >= 10);
	bneck_ws_finish(&ws);
}

/*
 * The receiver's rate uncertain under `service`: T expected over the
 * three-point rule on its drain between the windows. Here the receiver
 * drains 250 000 packets/s (2.9 Gb/s) between 1-4 ms windows that the
 * queue holds at any rate swept, so the plain optimum sits near that
 * drain, and with it uncertain the rate must come down by about the slow
 * node's factor e^-sqrt3 sd.
 */
static void test_uncertain_windows(void **state)
{
	struct rxb_stage_inputs s;
	struct bneck_xfer x = offwin_fixture_xfer(200, BNECK_LOSS_SERVICE);
	struct bneck_result r;
	struct bneck_ws ws;
	double plain_bps, slow = exp(-sqrt(3.0) * 0.1);

	(void)state;
	fill_short_windows(&s);
	s.mu_rel_sd = 0.1;
	x.rounds = BNECK_ROUNDS_BURST;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	plain_bps = bneck_fixture_check_expected(&ws, &s, &x, &r);
	print_message("windows, sd %.2f: %.3f Gb/s, plain %.3f\n", s.mu_rel_sd,
		      r.rate_bps / 1e9, plain_bps / 1e9);
	assert_true(r.rate_bps < plain_bps * (1.0 - 0.5 * (1.0 - slow)));
	assert_true(r.rate_bps > plain_bps * slow * 0.9);
	bneck_ws_finish(&ws);
}

/* A loop held to 25 % beside another: 37.5 ms of each 100 at a third. */
static void set_quota_25(struct rxb_stage_inputs *s)
{
	s->quota_period_s = 0.1;
	s->quota_slow_s = 0.0375;
	s->quota_slow_share = 1.0 / 3.0;
	s->quota_fast_share = 1.0;
}

/*
 * The same through a quota's phases (a loop held to 25 % beside another:
 * 37.5 ms of each 100 at a third of the CPU, then all of it). The plain
 * optimum lies at the fluid edge lambda* = c s_slow + K / T_slow (no loss
 * below it, a lost round above: test_solver_qphase); with the drain
 * uncertain it comes down to about the slow node's edge, c e^-sqrt3 sd
 * s_slow + K / T_slow.
 */
static void test_uncertain_quota(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage();
	struct bneck_xfer x = offwin_fixture_xfer(400, BNECK_LOSS_SERVICE);
	const double sd = 0.1, bits = 8.0 * x.payload_bytes;
	double c = s.mu_net_per_s * s.batch_pkts, edge_bps, slow_edge_bps, plain_bps;
	struct bneck_result r;
	struct bneck_ws ws;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	set_quota_25(&s);
	s.mu_rel_sd = sd;
	edge_bps = (c * s.quota_slow_share + s.queue_pkts / s.quota_slow_s) * bits;
	slow_edge_bps = (c * exp(-sqrt(3.0) * sd) * s.quota_slow_share +
			 s.queue_pkts / s.quota_slow_s) * bits;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	plain_bps = bneck_fixture_check_expected(&ws, &s, &x, &r);
	print_message("quota, sd %.2f: %.3f Gb/s (slow node's edge %.3f), plain %.3f "
		      "(edge %.3f)\n", sd, r.rate_bps / 1e9, slow_edge_bps / 1e9,
		      plain_bps / 1e9, edge_bps / 1e9);
	assert_true(plain_bps <= edge_bps && plain_bps >= 0.97 * edge_bps);
	assert_true(r.rate_bps <= slow_edge_bps * 1.01);
	assert_true(r.rate_bps >= slow_edge_bps * 0.9);
	bneck_ws_finish(&ws);
}

/*
 * @with and @without solved into @r and @r0, each in a workspace of its
 * own (@ws, @ws0, initialised here): a result's curve lives in its
 * workspace, and a second solve in the same one would overwrite it.
 */
static void solve_pair(struct bneck_ws *ws, struct bneck_ws *ws0,
		       const struct rxb_stage_inputs *with,
		       const struct rxb_stage_inputs *without, const struct bneck_xfer *x,
		       struct bneck_result *r, struct bneck_result *r0)
{
	assert_int_equal(bneck_ws_init(ws, x->points), 0);
	assert_int_equal(bneck_ws_init(ws0, x->points), 0);
	assert_int_equal(bneck_compute(ws0, without, 1, x, NULL, r0), 0);
	assert_int_equal(bneck_compute(ws, with, 1, x, NULL, r), 0);
}

/* The loss of @s's queue drained in single packets at @d_pps, fed at @lambda. */
static double drained_at(const struct rxb_stage_inputs *s, double lambda, double d_pps)
{
	struct bulkq_params q = {
		.arrival_per_s = lambda, .service_per_s = d_pps,
		.queue_pkts = s->queue_pkts, .batch_pkts = 1, .rule = s->rule,
	};
	struct bulkq_result qr;

	assert_int_equal(bulkq_loss(&q, &qr), 0);
	return qr.loss;
}

/*
 * A saturated drain D of 150 000 packets/s (1.77 Gb/s) under windows
 * that alone lose from about 2.3 Gb/s: below D the curve is the one
 * without it, above it the bulk queue drained at D (#C = 0, a queue of
 * one-packet services at D) or the windows, the larger.
 */
static void test_sat_drain(void **state)
{
	struct rxb_stage_inputs s, none;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct bneck_result r, r0;
	struct bneck_ws ws, ws0;
	struct offwin_in in;
	const double d_pps = 1.5e5, n = x.file_bytes / x.payload_bytes;
	int above = 0, below = 0, bulk_rules = 0;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	fill_short_windows(&none);
	s = none;
	s.sat_drain_pkts_per_s = d_pps;
	in = bneck_fixture_windows_in(&s);
	solve_pair(&ws, &ws0, &s, &none, &x, &r, &r0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		const struct bneck_point *pt = &r.curve[j];
		double lambda = pt->rate_bps / (8.0 * x.payload_bytes), lw, want, absorb, lq;

		if (lambda <= d_pps) {
			assert_true(pt->loss == r0.curve[j].loss);
			assert_true(pt->time_s == r0.curve[j].time_s);
			below++;
			continue;
		}
		above++;
		lq = drained_at(&s, lambda, d_pps);
		lw = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);
		want = fmax(lq, lw);
		assert_true(fabs(pt->loss - want) <= 1e-9 * fmax(want, 1e-300));
		if (!(lq > lw))
			continue;
		bulk_rules++;
		absorb = offwin_round_absorb(&in, lambda, OFFWIN_LOGUNIFORM);
		assert_true(pt->first_loss * n >= n * lw - absorb - 1e-6 * n);
		/* Never faster than the windows alone: behind is no shortcut. */
		assert_true(pt->time_s >= r0.curve[j].time_s * (1 - 1e-12));
	}
	print_message("saturated drain: %d points below, %d above (%d where the bulk queue "
		      "rules)\n", below, above, bulk_rules);
	assert_true(below >= 5 && above >= 20 && bulk_rules >= 10);

	/*
	 * Interrupts on the receiver's CPU (300 ns a packet) slow its drain
	 * between the windows, not the measured drain D, which holds them.
	 */
	s.irq_ns_per_pkt = 300.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		const struct bneck_point *pt = &r.curve[j];
		double lambda = pt->rate_bps / (8.0 * x.payload_bytes), want;

		if (lambda <= d_pps)
			continue;
		in.on_pkts_per_s = s.mu_net_per_s *
				   bneck_irq_share(lambda, s.irq_ns_per_pkt, 0.05);
		want = fmax(drained_at(&s, lambda, d_pps),
			    offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM));
		assert_true(fabs(pt->loss - want) <= 1e-9 * fmax(want, 1e-300));
	}
	s.irq_ns_per_pkt = 0.0;

	/*
	 * Rare 2-8 ms windows beside one loop cost a round from 5.1 Gb/s,
	 * with little absorbed; D at 6.5 Gb/s. Just above D the bulk
	 * queue's loss is small and its queue would absorb it all: without
	 * the windows' bound on that, T would fall below the windows' own
	 * there and the rate jump to D.
	 */
	memset(&none, 0, sizeof(none));
	none.cpu_bound = 1.0;
	none.mu_pio_per_s = none.mu_disk_per_s = 1e3;
	none.mu_net_per_s = 1.4e6;
	none.queue_pkts = 3641;
	none.batch_pkts = 1;
	none.offcpu_per_s = 3.0;
	none.offcpu_hist[21] = 80.0;	/* 2-4 ms */
	none.offcpu_hist[22] = 20.0;	/* 4-8 ms */
	s = none;
	s.sat_drain_pkts_per_s = 5.5e5;
	x = offwin_fixture_xfer(200, BNECK_LOSS_SERVICE);
	x.rounds = BNECK_ROUNDS_BURST;
	bneck_ws_finish(&ws);
	bneck_ws_finish(&ws0);
	solve_pair(&ws, &ws0, &s, &none, &x, &r, &r0);
	for (uint32_t j = 0; j < r.npoints; j++)
		assert_true(r.curve[j].time_s >= r0.curve[j].time_s * (1 - 1e-12));
	print_message("rare windows: %.3f Gb/s with D, %.3f without\n", r.rate_bps / 1e9,
		      r0.rate_bps / 1e9);
	assert_true(r.rate_bps == r0.rate_bps);
	assert_true(r.rate_bps < s.sat_drain_pkts_per_s * 8.0 * x.payload_bytes);
	s.sat_drain_pkts_per_s = -1.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	s.sat_drain_pkts_per_s = NAN;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	bneck_ws_finish(&ws0);
	bneck_ws_finish(&ws);
}

/*
 * The drain D = 150 000 packets/s measured while 400 000 a second arrived,
 * 300 ns of interrupts each on the receiver's CPU (12 % of it then): at
 * arrivals lambda the drain is D (1 - lambda 300 ns) / 0.88, more than D
 * below the blast's rate. Every point whose arrivals exceed that drain is
 * the bulk queue drained at it or the windows, the larger; every other
 * point is the curve without a drain, to the bit. The knee, lambda = D(lambda),
 * is D / (0.88 + D 300 ns) = 162 162 packets/s; the rate chosen lies
 * above D and not above the knee. Arrivals whose interrupts took more than
 * half the CPU leave D as it is; negative or NaN arrivals are refused.
 */
static void test_sat_drain_arrivals(void **state)
{
	struct rxb_stage_inputs s, none;
	struct bneck_xfer x = offwin_fixture_xfer(POINTS, BNECK_LOSS_SERVICE);
	struct bneck_result r, r0;
	struct bneck_ws ws, ws0;
	struct offwin_in in;
	const double d_pps = 1.5e5, arr_pps = 4e5, irq_ns = 300.0;
	const double knee = d_pps / (1 - arr_pps * irq_ns * 1e-9 + d_pps * irq_ns * 1e-9);
	int above = 0, below = 0, between = 0;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	fill_short_windows(&none);
	none.irq_ns_per_pkt = irq_ns;
	s = none;
	s.sat_drain_pkts_per_s = d_pps;
	s.sat_drain_arrivals_pps = arr_pps;
	in = bneck_fixture_windows_in(&s);
	solve_pair(&ws, &ws0, &s, &none, &x, &r, &r0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		const struct bneck_point *pt = &r.curve[j];
		double lambda = pt->rate_bps / (8.0 * x.payload_bytes), want;
		double d = d_pps * (1 - lambda * irq_ns * 1e-9) / (1 - arr_pps * irq_ns * 1e-9);

		if (lambda <= d) {
			assert_true(pt->loss == r0.curve[j].loss);
			assert_true(pt->time_s == r0.curve[j].time_s);
			below++;
			between += lambda > d_pps;
			continue;
		}
		above++;
		assert_true(lambda > knee * (1 - 1e-12));
		in.on_pkts_per_s = s.mu_net_per_s * bneck_irq_share(lambda, irq_ns, 0.05);
		want = fmax(drained_at(&s, lambda, d), offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM));
		assert_true(fabs(pt->loss - want) <= 1e-9 * fmax(want, 1e-300));
	}
	print_message("drain moved by its arrivals: knee %.0f packets/s, %d points below it "
		      "(%d above D), %d above; rate %.3f Gb/s (D %.3f)\n", knee, below, between,
		      above, r.rate_bps / 1e9, d_pps * 8.0 * x.payload_bytes / 1e9);
	assert_true(below >= 5 && between >= 1 && above >= 20);
	assert_true(r.rate_bps <= knee * 8.0 * x.payload_bytes * (1 + 1e-9));
	assert_true(r.rate_bps > d_pps * 8.0 * x.payload_bytes);
	/* Interrupts that took 60 % of the CPU at the measurement: D as it is. */
	s.sat_drain_arrivals_pps = 2e6;
	none = s;
	none.sat_drain_arrivals_pps = 0.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	assert_int_equal(bneck_compute(&ws0, &none, 1, &x, NULL, &r0), 0);
	for (uint32_t j = 0; j < r.npoints; j++)
		assert_true(r.curve[j].time_s == r0.curve[j].time_s);
	s.sat_drain_arrivals_pps = -1.0;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	s.sat_drain_arrivals_pps = NAN;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), -EINVAL);
	bneck_ws_finish(&ws0);
	bneck_ws_finish(&ws);
}

/*
 * A saturated drain under a quota's phases (test_uncertain_quota()'s: the
 * fluid edge c / 3 + K / 37.5 ms is 3.89 Gb/s), D at 250 000 packets/s
 * (2.94 Gb/s), below that edge: what the receiver drained over whole
 * periods while it overflowed. Up to D the curve is the one without it,
 * to the bit; above D the loss is the larger of the bulk queue drained
 * at D and the phases' own (qphase_eval()), a round losing no less than
 * the phases' round would, never faster than without D; and the rate
 * chosen comes down from the phases' edge to about D.
 */
static void test_sat_drain_quota(void **state)
{
	struct rxb_stage_inputs s = offwin_fixture_stage(), none;
	struct bneck_xfer x = offwin_fixture_xfer(200, BNECK_LOSS_SERVICE);
	const double d_pps = 2.5e5, bits = 8.0 * x.payload_bytes;
	const double n = x.file_bytes / x.payload_bytes;
	struct bneck_result r, r0;
	struct bneck_ws ws, ws0;
	int above = 0, bulk_rules = 0;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	set_quota_25(&s);
	none = s;
	s.sat_drain_pkts_per_s = d_pps;
	solve_pair(&ws, &ws0, &s, &none, &x, &r, &r0);
	for (uint32_t j = 0; j < r.npoints; j++) {
		const struct bneck_point *pt = &r.curve[j];
		double lambda = pt->rate_bps / bits, lq;
		struct qphase_in in = {
			.period_s = s.quota_period_s, .slow_s = s.quota_slow_s,
			.slow_share = s.quota_slow_share, .fast_share = s.quota_fast_share,
			.queue_pkts = s.queue_pkts, .on_pkts_per_s = s.mu_net_per_s,
		};
		struct qphase_eval qe;

		if (lambda <= d_pps) {
			assert_true(pt->loss == r0.curve[j].loss);
			assert_true(pt->time_s == r0.curve[j].time_s);
			continue;
		}
		above++;
		lq = drained_at(&s, lambda, d_pps);
		assert_int_equal(qphase_eval(&in, lambda, &qe), 0);
		assert_true(fabs(pt->loss - fmax(lq, qe.loss)) <=
			    1e-9 * fmax(pt->loss, 1e-300));
		assert_true(pt->time_s >= r0.curve[j].time_s * (1 - 1e-12));
		if (!(lq > qe.loss))
			continue;
		bulk_rules++;
		assert_true(pt->first_loss * n >= n * qe.loss - qe.absorb_pkts - 1e-6 * n);
	}
	print_message("quota with D %.2f Gb/s: %.3f Gb/s, without D %.3f; %d points above D "
		      "(%d where the bulk queue rules)\n", d_pps * bits / 1e9, r.rate_bps / 1e9,
		      r0.rate_bps / 1e9, above, bulk_rules);
	assert_true(above >= 100 && bulk_rules >= 20);
	assert_true(r0.rate_bps > 1.2 * d_pps * bits);
	assert_true(r.rate_bps <= 1.02 * d_pps * bits && r.rate_bps >= 0.9 * d_pps * bits);
	bneck_ws_finish(&ws0);
	bneck_ws_finish(&ws);
}

/*
 * The saturated drain with the rate uncertain: T steps up by a round
 * where the drain falls below what the queue cannot take, so the solver
 * integrates on panels between such steps. Its expected time at the rate
 * chosen against a 4000-node trapezoid over z in [-8, 8] of plain solves
 * at scaled rates (D scaled with them): within 1 %. The rate comes below
 * the plain optimum, and below D.
 */
static void test_uncertain_sat_drain(void **state)
{
	struct rxb_stage_inputs s, p;
	struct bneck_xfer x = offwin_fixture_xfer(200, BNECK_LOSS_SERVICE);
	struct bneck_result r;
	struct bneck_ws ws;
	const double sd = 0.12, zlo = -8.0, zhi = 8.0;
	const int nodes = 4000;
	double plain_bps, rate, et = 0.0, h = (zhi - zlo) / nodes;

	(void)state;
	x.rounds = BNECK_ROUNDS_BURST;
	fill_short_windows(&s);
	s.sat_drain_pkts_per_s = 1.5e5;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	plain_bps = r.rate_bps;
	s.mu_rel_sd = sd;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &r), 0);
	rate = r.rate_bps;
	for (int j = 0; j <= nodes; j++) {
		double z = zlo + j * h, w = (j == 0 || j == nodes ? 0.5 : 1.0) * h;

		p = bneck_fixture_scaled(&s, exp(sd * z));
		et += w * exp(-0.5 * z * z) / sqrt(2.0 * M_PI) *
		      bneck_fixture_time_at(&ws, &p, &x, rate);
	}
	print_message("saturated drain, sd %.2f: %.3f Gb/s (plain %.3f, D %.3f), E[T] %.4f s, "
		      "quadrature %.4f s\n", sd, rate / 1e9, plain_bps / 1e9,
		      s.sat_drain_pkts_per_s * 8.0 * x.payload_bytes / 1e9, r.time_s, et);
	check_rel(r.time_s, et, 0.01, "E[T] at the rate chosen against the quadrature");
	assert_true(rate < plain_bps);
	assert_true(rate < s.sat_drain_pkts_per_s * 8.0 * x.payload_bytes);
	bneck_ws_finish(&ws);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_service_points),
	cmocka_unit_test(test_service_points_io_bound),
	cmocka_unit_test(test_no_windows_is_queue),
	cmocka_unit_test(test_windows_reach),
	cmocka_unit_test(test_share_reach),
	cmocka_unit_test(test_uncertain_windows),
	cmocka_unit_test(test_uncertain_quota),
	cmocka_unit_test(test_sat_drain_quota),
	cmocka_unit_test(test_sat_drain),
	cmocka_unit_test(test_sat_drain_arrivals),
	cmocka_unit_test(test_uncertain_sat_drain),
)
