// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The off-CPU window loss (solver/offwin.h, bneck with BNECK_LOSS_WINDOWS)
 * against independent truths:
 *  - the log-uniform slot's E[(W − x)+] against Simpson's rule over ln w
 *    (10^4 panels) below, inside and above the slot;
 *  - one window length every period P with long gaps: exactly the vacation
 *    loss (D − K/λ)+ / P of bneck_vacation_loss();
 *  - random windows drawn from a histogram (log-uniform within the slots)
 *    run through a fluid queue cycle by cycle: with gaps long enough to
 *    drain, the closed form within 4 standard errors of the simulation's
 *    mean plus 1 %; with short gaps,
 *    where the queue stays full, within 4 standard errors plus 2 %; with
 *    runs between, where it carries over more than one window, from a
 *    fifth below to 5 % above (4 standard errors each); and
 *    a gap given (offwin_in.gap_s) counts as the one the rate implies;
 *  - many short windows with short runs (a task woken per I/O on the
 *    receiver's CPU) through the same fluid queue cycle by cycle, exactly:
 *    no loss where the simulation has none, else within 4 standard errors
 *    plus 5 %, below, at and above the drain of the runs;
 *  - a server slower than the arrivals: the fluid's conservation;
 *  - the lower/upper-edge bounds bracket the log-uniform loss;
 *  - edge cases: no windows, an empty histogram, λ below K / W_max;
 *  - bneck_compute(): each point's stage loss is max(queue, l_win);
 *  - the "PER_S/SLOT:COUNT,..." parser.
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
#include "solver/offwin_piece.h"
#include "bneck_fixture.h"
#include "offwin_fixture.h"
#include "tests/unit/unit_main.h"

#define NS 32

static uint64_t rng_state;

static double uniform01(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Simpson over u = ln w of (w − x)+ / ln(b/a): the log-uniform density. */
static double simpson_excess(double a, double b, double x)
{
	const int n = 10000;
	double lo = log(a), hi = log(b), h = (hi - lo) / n, sum = 0.0;

	for (int k = 0; k <= n; k++) {
		double w = exp(lo + k * h), f = w > x ? w - x : 0.0;
		double c = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);

		sum += c * f;
	}
	return sum * h / 3.0 / (hi - lo);
}

static void test_slot_closed_form(void **state)
{
	double count[NS] = { 0 };
	double a, b;

	(void)state;
	count[20] = 1.0;
	offwin_slot_s(20, &a, &b);
	assert_true(fabs(a - 1048576e-9) < 1e-15 && fabs(b - 2097152e-9) < 1e-15);
	for (double f = 0.0; f <= 2.2; f += 0.05) {
		double x = f * a;
		double want = simpson_excess(a, b, x);
		double got = offwin_excess_s(count, NS, x, OFFWIN_LOGUNIFORM, 0.0);

		/* Simpson's error on the kink at x is O(h^2) of the slot. */
		assert_true(fabs(got - want) <= 1e-8 * b);
	}
	/* The mean of a log-uniform slot, and a scale-free histogram. */
	assert_true(fabs(offwin_mean_s(count, NS) - (b - a) / log(2.0)) < 1e-15);
	count[20] = 7.0;
	assert_true(fabs(offwin_mean_s(count, NS) - (b - a) / log(2.0)) < 1e-15);
}

/* One length D every P, drained in between: the vacation loss. */
static void test_periodic_is_vacation(void **state)
{
	double count[NS] = { 0 };
	double d_s = ldexp(1.0, 23) * 1e-9, p_s = 0.05, k = 3641.0;
	struct offwin_in in = {
		.per_s = 1.0 / p_s, .count = count, .nslots = NS,
		.queue_pkts = k, .on_pkts_per_s = 2e6,
	};

	(void)state;
	count[23] = 5.0;
	for (double lambda = 1e5; lambda <= 1.2e6; lambda *= 1.1) {
		double want = bneck_vacation_loss(lambda, k, d_s, p_s);
		double got = offwin_loss(&in, lambda, OFFWIN_LOW);

		assert_true(fabs(got - want) <= 1e-12);
	}
	/* The upper edge is the same at D = 2^24 ns. */
	assert_true(fabs(offwin_loss(&in, 8e5, OFFWIN_HIGH) -
			 bneck_vacation_loss(8e5, k, 2.0 * d_s, p_s)) <= 1e-12);
}

struct sim_out {
	double loss, se;	/* loss fraction and its standard error */
};

/*
 * A fluid queue of @k packets, arrivals at @lambda, drained at @c while on
 * the CPU, off for windows drawn from @count separated by @gap_s, run
 * cycle by cycle, exactly (arrivals and drain are linear within a window
 * and a run); the loss over @nwin windows, and its standard error from the
 * spread of each cycle's loss.
 */
static void simulate_cycles(const double *count, double k, double lambda, double c,
			    double gap_s, int nwin, struct sim_out *o)
{
	double q = 0.0, lost = 0.0, arrived = 0.0, s1 = 0.0, s2 = 0.0;

	for (int i = 0; i < nwin; i++) {
		double w = offwin_fixture_draw_s(count, NS, uniform01);
		double cyc_arr = lambda * (w + gap_s), cyc_lost = 0.0;

		q += lambda * w;
		if (q > k) {
			cyc_lost = q - k;
			q = k;
		}
		q = fmax(q - (c - lambda) * gap_s, 0.0);
		lost += cyc_lost;
		arrived += cyc_arr;
		s1 += cyc_lost / cyc_arr;
		s2 += (cyc_lost / cyc_arr) * (cyc_lost / cyc_arr);
	}
	o->loss = lost / arrived;
	o->se = sqrt(fmax(s2 / nwin - (s1 / nwin) * (s1 / nwin), 0.0) / nwin);
}

/*
 * Many short windows with short runs between (a task that wakes for each
 * I/O completion on the receiver's CPU: 8-131 µs windows, 27 µs runs,
 * a 1.3e6/s drain): the queue stays nearly empty below the rate the runs
 * drain, and fills above it. The closed form against the
 * simulation, 200000 windows per rate: zero where the simulation lost
 * nothing, else within 4 standard errors + 5 % of it, from 4e5 to 8e5
 * packets/s (the runs drain 6.8e5). Taking every window's room as what a
 * run frees after a full queue, (c − λ) g, gave loss at every one.
 */
static void test_against_simulation_io_windows(void **state)
{
	double count[NS] = { 0 }, k = 3641.0, c = 1.3e6, gap_s = 27e-6;
	struct offwin_in in = { .count = count, .nslots = NS, .queue_pkts = k,
				.on_pkts_per_s = c, .gap_s = gap_s };
	int lossless = 0, lossy = 0;

	(void)state;
	count[13] = 800.0;	/* 8-16 µs */
	count[14] = 26000.0;	/* 16-33 µs */
	count[15] = 1400.0;	/* 33-66 µs */
	count[16] = 150.0;	/* 66-131 µs */
	/* Windows back to back with their runs, as simulated. */
	in.per_s = 1.0 / (offwin_mean_s(count, NS) + gap_s);
	rng_state = 0x5eed0ff3ULL;
	for (double lambda = 4e5; lambda <= 8e5; lambda += 5e4) {
		struct sim_out o;
		double got = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);

		simulate_cycles(count, k, lambda, c, gap_s, 200000, &o);
		print_message("lambda %.0f io windows: sim %.5f +- %.5f, closed form %.5f\n",
			      lambda, o.loss, o.se, got);
		if (o.loss == 0.0) {
			assert_true(got <= 1e-9);
			lossless++;
		} else {
			assert_true(fabs(got - o.loss) <= 4.0 * o.se + 0.05 * o.loss);
			lossy++;
		}
	}
	assert_true(lossless >= 3 && lossy >= 3);
}

static void hist_fixture(double *count)
{
	memset(count, 0, NS * sizeof(*count));
	count[22] = 30.0;	/* 4.2-8.4 ms */
	count[23] = 50.0;	/* 8.4-16.8 ms */
	count[24] = 20.0;	/* 16.8-33.6 ms */
}

/*
 * One point of a sweep: the closed form's input @in for the fixture's
 * windows @gap_s apart, the simulated loss @o at @lambda and the closed
 * form's @got.
 */
typedef void (*sim_check_fn)(struct offwin_in *in, double gap_s, double lambda,
			     const struct sim_out *o, double got);

/*
 * Simulates the fixture's windows, @gap_s apart (their rate from the mean
 * window and the gap), before a queue of 3641 packets drained at 5e5/s, for
 * arrivals from @lambda_lo to @lambda_hi by @step, and hands each point to
 * @check; @seed makes the run repeatable.
 */
static void sim_sweep(double gap_s, uint64_t seed, double lambda_lo, double lambda_hi,
		      double step, sim_check_fn check)
{
	double count[NS], k = 3641.0, c = 5e5;
	double mean_s;

	hist_fixture(count);
	mean_s = offwin_mean_s(count, NS);
	rng_state = seed;
	for (double lambda = lambda_lo; lambda <= lambda_hi; lambda += step) {
		struct offwin_in in = {
			.per_s = 1.0 / (mean_s + gap_s), .count = count, .nslots = NS,
			.queue_pkts = k, .on_pkts_per_s = c,
		};
		struct sim_out o;

		simulate_cycles(count, k, lambda, c, gap_s, 4000, &o);
		check(&in, gap_s, lambda, &o, offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM));
	}
}

static void check_drained(struct offwin_in *in, double gap_s, double lambda,
			  const struct sim_out *o, double got)
{
	/* The gap drains a full queue: the closed form is exact. */
	assert_true((in->on_pkts_per_s - lambda) * gap_s >= in->queue_pkts);
	print_message("lambda %.0f: sim %.5f +- %.5f, closed form %.5f\n",
		      lambda, o->loss, o->se, got);
	assert_true(o->loss > 0.0);
	assert_true(fabs(got - o->loss) <= 4.0 * o->se + 0.01 * o->loss);
}

static void test_against_simulation_drained(void **state)
{
	(void)state;
	sim_sweep(0.04, 0x5eed0ff1ULL, 2e5, 3.2e5, 6e4, check_drained);
}

static void check_short_gaps(struct offwin_in *in, double gap_s, double lambda,
			     const struct sim_out *o, double got)
{
	assert_true((in->on_pkts_per_s - lambda) * gap_s < in->queue_pkts);
	print_message("lambda %.0f short gaps: sim %.5f +- %.5f, closed form %.5f\n",
		      lambda, o->loss, o->se, got);
	/* The queue stays full: the overload term. */
	assert_true(fabs(got - o->loss) <= 4.0 * o->se + 0.02 * o->loss);
	/* The gap given is the gap the rate implies: the same loss. */
	in->gap_s = gap_s;
	assert_true(fabs(offwin_loss(in, lambda, OFFWIN_LOGUNIFORM) - got) <= 1e-12);
	/* Windows in clusters: few a second, short runs between. */
	in->per_s /= 10.0;
	assert_true(fabs(offwin_loss(in, lambda, OFFWIN_LOGUNIFORM) - got / 10.0) <= 1e-12);
}

static void test_against_simulation_short_gaps(void **state)
{
	(void)state;
	sim_sweep(0.004, 0x5eed0ff2ULL, 1.5e5, 3e5, 5e4, check_short_gaps);
}

static void check_middle_gaps(struct offwin_in *in, double gap_s, double lambda,
			      const struct sim_out *o, double got)
{
	(void)gap_s;
	assert_true((in->on_pkts_per_s - lambda) * gap_s < in->queue_pkts);
	print_message("lambda %.0f middle gaps: sim %.5f +- %.5f, closed form %.5f\n",
		      lambda, o->loss, o->se, got);
	/* The queue carries over more than one window: at most a fifth low. */
	assert_true(got <= 1.05 * o->loss + 4.0 * o->se);
	assert_true(got >= 0.8 * o->loss - 4.0 * o->se);
}

static void test_against_simulation_middle_gaps(void **state)
{
	(void)state;
	sim_sweep(0.01, 0x5eed0ff4ULL, 1.5e5, 3e5, 5e4, check_middle_gaps);
}

static void test_bounds_bracket(void **state)
{
	double count[NS];
	struct offwin_in in = { .count = count, .nslots = NS, .queue_pkts = 3641.0,
				.on_pkts_per_s = 5e5 };

	(void)state;
	hist_fixture(count);
	in.per_s = 25.0;
	for (double lambda = 1e5; lambda < 6e5; lambda *= 1.05) {
		double lo = offwin_loss(&in, lambda, OFFWIN_LOW);
		double mid = offwin_loss(&in, lambda, OFFWIN_LOGUNIFORM);
		double hi = offwin_loss(&in, lambda, OFFWIN_HIGH);

		assert_true(lo <= mid + 1e-15 && mid <= hi + 1e-15);
		assert_true(hi <= 1.0);
	}
}

static void test_edges(void **state)
{
	double count[NS] = { 0 }, k = 3641.0;
	struct offwin_in in = { .per_s = 100.0, .count = count, .nslots = NS,
				.queue_pkts = k, .on_pkts_per_s = 1e7 };
	double w_max = ldexp(1.0, 21) * 1e-9;	/* top of slot 20 */

	(void)state;
	/* Empty histogram, no windows, no arrivals. */
	assert_true(offwin_loss(&in, 5e5, OFFWIN_LOGUNIFORM) == 0.0);
	count[18] = 3.0;
	count[20] = 1.0;
	assert_true(offwin_loss(&in, 0.0, OFFWIN_LOGUNIFORM) == 0.0);
	in.per_s = 0.0;
	assert_true(offwin_loss(&in, 5e9, OFFWIN_LOGUNIFORM) == 0.0);
	in.per_s = 100.0;
	/* Below K / W_max nothing overflows; just above, something. */
	assert_true(offwin_loss(&in, k / w_max, OFFWIN_LOGUNIFORM) == 0.0);
	assert_true(offwin_loss(&in, 0.999 * k / w_max, OFFWIN_HIGH) == 0.0);
	assert_true(offwin_loss(&in, 1.01 * k / w_max, OFFWIN_LOGUNIFORM) > 0.0);
	/*
	 * A server slower than the arrivals on the CPU as well: by the fluid's
	 * conservation it loses all but what it drains in its runs,
	 * 1 − c (1 − ν E[W]) / λ.
	 */
	in.on_pkts_per_s = 1e5;
	assert_true(fabs(offwin_loss(&in, 2e5, OFFWIN_LOGUNIFORM) -
			 (1.0 - 1e5 * (1.0 - 100.0 * offwin_mean_s(count, NS)) / 2e5)) < 1e-12);
	/* Windows that fill more than the time: capped at 1. */
	in.per_s = 1e4;
	assert_true(offwin_loss(&in, 2e5, OFFWIN_LOGUNIFORM) == 1.0);
	/* The room after a window of 1 s, and after none, and a short one. */
	assert_true(offwin_room_pkts(k, 2e5, 1e5, 1.0, 1.0) == 0.0);
	assert_true(offwin_room_pkts(k, 1e5, 2e5, 1.0, 1.0) == k);
	assert_true(offwin_room_pkts(k, 1e5, 2e5, 1e-3, 1.0) == 100.0);
	assert_true(offwin_room_pkts(k, 1e5, 2e5, 1e-3, 0.0) == k);
	assert_true(fabs(offwin_room_pkts(k, 1e5, 2e5, 1e-3, 0.01) - (k - 900.0)) < 1e-9);
	assert_true(offwin_room_pkts(0.0, 1e5, 2e5, 1e-3, 0.01) == 0.0);
}

static void fill_stage(struct rxb_stage_inputs *s)
{
	*s = offwin_fixture_stage();
	s->offcpu_per_s = 60.0;
	s->offcpu_hist[22] = 30.0;
	s->offcpu_hist[23] = 50.0;
	s->offcpu_hist[24] = 20.0;
}

static void test_bneck_windows(void **state)
{
	struct rxb_stage_inputs s;
	struct bneck_xfer x = offwin_fixture_xfer(64, BNECK_LOSS_WINDOWS);
	struct bneck_result rq, rw;
	struct bneck_ws ws;
	struct offwin_in in;
	double qloss[64];

	(void)state;
	fill_stage(&s);
	in = bneck_fixture_windows_in(&s);	/* #C = 0 */
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	x.loss_model = BNECK_LOSS_QUEUE;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &rq), 0);
	/* Keep the queue model's curve: the workspace is reused. */
	for (uint32_t j = 0; j < rq.npoints; j++)
		qloss[j] = rq.curve[j].loss;
	x.loss_model = BNECK_LOSS_WINDOWS;
	assert_int_equal(bneck_compute(&ws, &s, 1, &x, NULL, &rw), 0);
	assert_int_equal(rw.npoints, rq.npoints);
	assert_true(offwin_fixture_check_curve(&rw, qloss, &in, x.payload_bytes));
	/* Windows at a lower rate than the queue's choice cost it. */
	assert_true(rw.rate_bps <= rq.rate_bps);
	assert_string_equal(bneck_loss_name(BNECK_LOSS_WINDOWS), "windows");
	offwin_fixture_refused(&ws, &s, &x, &s.offcpu_hist[3], &s.offcpu_per_s, NAN);
	bneck_ws_finish(&ws);
}

/*
 * The slots' pieces built once for a solve (offwin_pieces_init(), which
 * bneck_model_setup() does) give every figure of offwin_eval_loss() and
 * offwin_eval_round() exactly as the pieces each call builds: both
 * histograms, slots with moments (a narrow one, uniform; wide ones,
 * falling from an edge) and without, the waits' slot cut at the longest,
 * at rates from a few windows' loss to overload, each placement. Pieces
 * of another longest wait differ: the calls do use the given ones.
 */
static void test_pieces_given(void **state)
{
	double count[NS] = { 0 }, mean[NS] = { 0 }, sd[NS] = { 0 };
	double wcount[NS] = { 0 }, wmean[NS] = { 0 }, wsd[NS] = { 0 };
	struct offwin_in in = { .per_s = 40.0, .count = count, .mean_s = mean, .sd_s = sd,
				.nslots = NS, .queue_pkts = 3641.0, .on_pkts_per_s = 1.2e6,
				.wake_per_s = 300.0, .wake_count = wcount, .wake_mean_s = wmean,
				.wake_sd_s = wsd, .wake_max_s = 6.5e-3, .release_pkts = 910.0,
				.round_pkts = 137000.0 };
	struct offwin_pieces pcs, other;
	static const enum offwin_within ws[] = { OFFWIN_LOGUNIFORM, OFFWIN_LOW, OFFWIN_HIGH };
	int differ = 0, lossy = 0, n = 0;

	(void)state;
	count[21] = 5.0, mean[21] = 3.0e-3, sd[21] = 0.9e-3;	/* wide: falling */
	count[22] = 9.0, mean[22] = 4.4e-3, sd[22] = 0.1e-3;	/* narrow: uniform */
	count[23] = 2.0;					/* no moments */
	wcount[12] = 800.0, wmean[12] = 5.6e-6, wsd[12] = 1.0e-6;
	wcount[13] = 200.0;
	wcount[22] = 30.0, wmean[22] = 5.0e-3, wsd[22] = 0.4e-3;	/* cut at 6.5 ms */
	offwin_pieces_init(&pcs, &in);
	in.wake_max_s = 5.3e-3;
	offwin_pieces_init(&other, &in);
	in.wake_max_s = 6.5e-3;
	for (size_t k = 0; k < sizeof(ws) / sizeof(ws[0]); k++) {
		for (double lambda = 2e5; lambda < 2e6; lambda *= 1.13) {
			struct offwin_eval built, given, stale;

			in.pieces = NULL;
			offwin_eval_loss(&in, lambda, ws[k], &built);
			offwin_eval_round(&in, &built);
			in.pieces = &pcs;
			offwin_eval_loss(&in, lambda, ws[k], &given);
			offwin_eval_round(&in, &given);
			assert_true(given.loss == built.loss && given.excess_s == built.excess_s &&
				    given.overload_s == built.overload_s &&
				    given.lossy_per_s == built.lossy_per_s &&
				    given.absorb_pkts == built.absorb_pkts);
			lossy += built.loss > 0.0;
			n++;
			in.pieces = &other;
			offwin_eval_loss(&in, lambda, ws[k], &stale);
			offwin_eval_round(&in, &stale);
			differ += stale.loss != built.loss || stale.absorb_pkts != built.absorb_pkts;
		}
	}
	print_message("%d of %d points lossy, %d differ with stale pieces\n", lossy, n, differ);
	assert_true(2 * lossy >= n && differ > 0);
}

static void test_parse(void **state)
{
	double count[NS], per_s;

	(void)state;
	assert_int_equal(offwin_parse("180/21:40,22:75.5,23:0", &per_s, count, NULL, NULL, NS), 0);
	assert_true(per_s == 180.0 && count[21] == 40.0 && count[22] == 75.5 &&
		    count[23] == 0.0 && count[0] == 0.0);
	assert_int_equal(offwin_parse("0/", &per_s, count, NULL, NULL, NS), 0);
	assert_true(per_s == 0.0);
	static const char *const bad[] = {
		"", "180", "180/21", "180/21:", "180/:4", "180/21:4,", "180/21:4,21:5",
		"180/32:1", "180/2.5:1", "-1/3:1", "180/3:-1", "nan/3:1", "180/3:inf",
		"1e999/3:1", "180/3:1x", " 180/3:1", "180/3: 1", "180//3:1", "180/3:1,,4:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		per_s = 5.0;
		assert_int_equal(offwin_parse(bad[i], &per_s, count, NULL, NULL, NS), -EINVAL);
		assert_true(per_s == 0.0 && count[3] == 0.0 && count[21] == 0.0);
	}
	assert_int_equal(offwin_parse(NULL, &per_s, count, NULL, NULL, NS), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_slot_closed_form),
	cmocka_unit_test(test_periodic_is_vacation),
	cmocka_unit_test(test_against_simulation_drained),
	cmocka_unit_test(test_against_simulation_short_gaps),
	cmocka_unit_test(test_against_simulation_io_windows),
	cmocka_unit_test(test_against_simulation_middle_gaps),
	cmocka_unit_test(test_bounds_bracket),
	cmocka_unit_test(test_edges),
	cmocka_unit_test(test_bneck_windows),
	cmocka_unit_test(test_parse),
	cmocka_unit_test(test_pieces_given),
)
