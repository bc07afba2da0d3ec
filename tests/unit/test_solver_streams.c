// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * solver/streams: each model's coefficients recovered from samples that
 * model generated with known coefficients (1e-9 relative without noise);
 * with seeded noise, the Best-Fitted Coefficients over 40 noisy samples
 * within the bounds the noise allows (stated per model below); Newton's
 * iteration on the paper's kind of curves, against the known order and a
 * bisection of eq. 22 in its plain form; the §5 propositions rejecting
 * curves that break them; the packet-loss model's two forms (loss rates,
 * eq. 13-15 and 2; throughputs squared) agreeing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "check_rel.h"
#include "solver/streams.h"
#include "solver/streams_fit.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

/* Throughputs in bits/s, as the daemon feeds them: y = n^2/Th^2 ~ 1e-18. */
#define GBPS	1e9

/* Th_n of p'_n = @pn: n / sqrt(p'_n). */
static double th_of(double n, double pn)
{
	return n / sqrt(pn);
}

static void pts3(struct streams_point *p, const double *n, double (*f)(double, const double *),
		 const double *k, int m)
{
	for (int i = 0; i < m; i++) {
		p[i].n = n[i];
		p[i].th = f(n[i], k);
	}
}

/* The models' curves from their coefficients k[], written out here. */
static double f_dinda(double n, const double *k)
{
	return th_of(n, k[0] * n * n + k[1]);
}

static double f_log(double n, const double *k)
{
	return th_of(n, k[0] * exp(k[1] * n));
}

static double f_newton(double n, const double *k)
{
	return th_of(n, k[0] * pow(n, k[2]) + k[1]);
}

static double f_full2(double n, const double *k)
{
	return th_of(n, k[0] * n * n + k[1] * n + k[2]);
}

static double f_loss(double n, const double *k)
{
	return sqrt(k[0] * pow(n, 1 / k[2]) + k[1]);
}

static void recover(enum streams_model m, const struct streams_point *p, double x,
		    struct streams_coef *k)
{
	assert_int_equal(streams_coef(m, p, x, k), STREAMS_OK);
	assert_int_equal(k->model, m);
}

/* ---------------------------------------------------------- exact -- */

/*
 * Model @m's curve @f with coefficients @want, sampled at the @np stream
 * counts @n and fitted back (extra parameter @x): the first @np
 * coefficients come back to 1e-9 relative. The fit in *k.
 */
static void round_trip(enum streams_model m, const double *n,
		       double (*f)(double, const double *), const double *want, int np,
		       double x, const char *name, struct streams_coef *k)
{
	const char *const coef[3] = { "a'", "b'", "c'" };
	struct streams_point p[3];
	char what[64];

	pts3(p, n, f, want, np);
	recover(m, p, x, k);
	for (int i = 0; i < np; i++) {
		snprintf(what, sizeof(what), "%s %s", name, coef[i]);
		check_rel(i == 0 ? k->a : i == 1 ? k->b : k->c, want[i], 1e-9, what);
	}
}

static void test_exact_two_point(void **state)
{
	/* Dinda: 1/sqrt(a') = 1 Gb/s for ever, 100 Mb/s for one stream. */
	const double kd[2] = { 1 / (GBPS * GBPS), 1 / (0.1 * GBPS * 0.1 * GBPS) };
	const double kl[2] = { 2e-17, 0.09 };
	const double kx[3] = { 3e16, 1e16, 3 };
	const double n15[2] = { 1, 5 }, n27[2] = { 2, 7 }, n28[2] = { 2, 8 };
	struct streams_point p[3];
	struct streams_coef k;

	(void)state;
	round_trip(STREAMS_DINDA, n15, f_dinda, kd, 2, NAN, "dinda", &k);
	round_trip(STREAMS_LOG, n27, f_log, kl, 2, NAN, "log", &k);
	check_rel(streams_peak_n(&k), 2 / kl[1], 1e-9, "log peak 2/b'");
	round_trip(STREAMS_LOSS, n28, f_loss, kx, 2, 3, "loss", &k);
	/* Hacker: n times one stream of 240 Mb/s, from the sample at n = 3. */
	p[0].n = 3;
	p[0].th = 3 * 0.24 * GBPS;
	recover(STREAMS_HACKER, p, NAN, &k);
	check_rel(streams_eval(&k, 10), 2.4 * GBPS, 1e-12, "hacker at 10");
	check_rel(k.b, 1 / (0.24 * GBPS * 0.24 * GBPS), 1e-12, "hacker b'");
}

static void test_exact_three_point(void **state)
{
	/* The paper's kind: up to a peak, then down to a floor (Fig. 1). */
	const double kn[3] = { 4e-21, 1.2e-17, 3.3 };
	const double kf[3] = { 3e-20, -8e-19, 9e-18 };
	const double n[3] = { 1, 7, 25 };
	struct streams_coef k;

	(void)state;
	round_trip(STREAMS_NEWTON, n, f_newton, kn, 3, NAN, "newton", &k);
	assert_int_equal(streams_check(&k, 40), STREAMS_OK);
	check_rel(streams_peak_n(&k), pow(2 * kn[1] / (kn[0] * (kn[2] - 2)), 1 / kn[2]), 1e-9,
		  "newton peak");
	round_trip(STREAMS_FULL2, n, f_full2, kf, 3, NAN, "full2", &k);
	assert_int_equal(streams_check(&k, 40), STREAMS_OK);
	check_rel(streams_peak_n(&k), -2 * kf[2] / kf[1], 1e-12, "full2 peak");
}

/* The break function's two pieces, and each averaging of two pairs. */
static void test_exact_break_and_average(void **state)
{
	const double n1 = 1, n2 = 6, n3 = 20, a1 = 1e-18, b1 = 2.5e-17, a2 = 2e-18;
	const double a12 = 1e-18, b12 = 3e-17, a13 = 1.6e-18;
	double y2 = a1 * n2 * n2 + b1, b2 = y2 - a2 * n2 * n2, y1 = a12 + b12;
	double b13 = y1 - a13, ref[3][2];
	struct streams_point p[3] = { { n1, th_of(n1, a1 + b1) }, { n2, th_of(n2, y2) },
				      { n3, th_of(n3, a2 * n3 * n3 + b2) } };
	struct streams_coef k;

	(void)state;
	recover(STREAMS_BREAK, p, NAN, &k);
	check_rel(k.a, a1, 1e-9, "break a1");
	check_rel(k.b, b1, 1e-9, "break b1");
	check_rel(k.a2, a2, 1e-9, "break a2");
	check_rel(k.b2, b2, 1e-9, "break b2");
	assert_true(b2 < 0);
	assert_int_equal(streams_check(&k, 40), STREAMS_OK);
	check_rel(streams_peak_n(&k), n2, 0, "break falls after n2");
	check_rel(streams_eval(&k, 12), th_of(12, a2 * 144 + b2), 1e-12, "second piece");

	/* Samples whose pairs (n1, n2) and (n1, n3) are two Dinda curves. */
	p[0] = (struct streams_point){ 1, th_of(1, y1) };
	p[1] = (struct streams_point){ 4, th_of(4, a12 * 16 + b12) };
	p[2] = (struct streams_point){ 9, th_of(9, a13 * 81 + b13) };
	ref[0][0] = (a12 + a13) / 2;
	ref[0][1] = (b12 + b13) / 2;
	ref[1][0] = sqrt(a12 * a13);
	ref[1][1] = sqrt(b12 * b13);
	ref[2][0] = sqrt((a12 * a12 + a13 * a13) / 2);
	ref[2][1] = sqrt((b12 * b12 + b13 * b13) / 2);
	for (int i = 0; i < 3; i++) {
		recover(STREAMS_AVG_ARITH + i, p, NAN, &k);
		check_rel(k.a, ref[i][0], 1e-9, streams_model_name(STREAMS_AVG_ARITH + i));
		check_rel(k.b, ref[i][1], 1e-9, streams_model_name(STREAMS_AVG_ARITH + i));
	}
}

/* Eq. 11-15 and 2: loss rates in, throughput out; and the throughput form. */
static void test_loss_rates(void **state)
{
	/* MSS 1448 B, RTT 50 ms, Th'_n = a' n^(1/2) + b' = n^2 / p_n. */
	const double a = 4e5, b = 1e5, x = 2, mss = 1448, rtt = 0.05, c = sqrt(1.5);
	double p1 = streams_loss_rate(a, b, x, 1), p8 = streams_loss_rate(a, b, x, 8);
	double ka, kb, kt[3];
	struct streams_point pt[2];
	struct streams_coef k;

	(void)state;
	check_rel(p1, 1 / (a + b), 1e-15, "eq. 13 at n = 1");
	assert_int_equal(streams_loss_coef(1, p1, 8, p8, x, &ka, &kb), 0);
	check_rel(ka, a, 1e-9, "eq. 14");
	check_rel(kb, b, 1e-9, "eq. 15");
	/* The throughput form on the throughputs eq. 2 gives: a', b' times (MSS c/RTT)^2. */
	for (int i = 0; i < 2; i++) {
		pt[i].n = i ? 8 : 1;
		pt[i].th = streams_hacker_bps(mss, rtt, streams_loss_rate(a, b, x, pt[i].n), c,
					      pt[i].n);
	}
	recover(STREAMS_LOSS, pt, x, &k);
	kt[0] = 8 * mss * c / rtt;
	check_rel(k.a, a * kt[0] * kt[0], 1e-9, "throughput-form a'");
	check_rel(k.b, b * kt[0] * kt[0], 1e-9, "throughput-form b'");
	check_rel(streams_eval(&k, 20), streams_hacker_bps(mss, rtt,
		  streams_loss_rate(a, b, x, 20), c, 20), 1e-9, "both forms at n = 20");
	/* Eq. 2 itself: 1448 B, 50 ms, p = 1e-4, one stream. */
	check_rel(streams_hacker_bps(mss, rtt, 1e-4, c, 1), 8 * 1448 * c / 0.05 / 0.01, 1e-15,
		  "eq. 2");
}

/* --------------------------------------------------------- Newton -- */

/* Eq. 22 in its plain form, h(c) - r, by bisection: the independent root. */
static double bisect_order(double n1, double n2, double n3, double r)
{
	double lo = -50, hi = 50;

	for (int i = 0; i < 200; i++) {
		double c = (lo + hi) / 2, h;

		h = fabs(c) < 1e-12 ? log(n3 / n1) / log(n2 / n1) :
				      (pow(n3, c) - pow(n1, c)) / (pow(n2, c) - pow(n1, c));
		if (h < r)
			lo = c;
		else
			hi = c;
	}
	return (lo + hi) / 2;
}

static void test_newton_converges(void **state)
{
	/* Orders and triples of the paper's experiments (1-7-25, 1-7-15, ...). */
	static const double orders[] = { 2.05, 2.2, 2.5, 3, 3.3, 4, 6, 9 };
	static const double triples[][3] = {
		{ 1, 7, 25 }, { 1, 7, 15 }, { 1, 5, 10 }, { 1, 2, 4 }, { 2, 4, 8 }, { 1, 8, 32 },
	};
	int worst = 0;

	(void)state;
	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		for (size_t t = 0; t < sizeof(triples) / sizeof(triples[0]); t++) {
			const double *n = triples[t];
			double r = (pow(n[2], orders[o]) - pow(n[0], orders[o])) /
				   (pow(n[1], orders[o]) - pow(n[0], orders[o]));
			double c;
			int it;

			assert_int_equal(streams_newton_order(n[0], n[1], n[2], r, &c, &it), 0);
			check_rel(c, orders[o], 1e-12, "Newton's root");
			check_rel(c, bisect_order(n[0], n[1], n[2], r), 1e-9, "against bisection");
			if (it > worst)
				worst = it;
		}
	}
	/* "A very close approximation ... with only a few iterations". */
	fprintf(stderr, "Newton's iteration: at most %d iterations\n", worst);
	assert_true(worst <= 8);
	/* Orders below 1 and below 0 too (the root exists for every r > 1). */
	for (double c0 = -3; c0 < 1.6; c0 += 0.7) {
		double r = (pow(30, c0) - 1) / (pow(6, c0) - 1), c;

		assert_int_equal(streams_newton_order(1, 6, 30, r, &c, NULL), 0);
		if (fabs(c0) > 1e-9)
			check_rel(c, c0, 1e-9, "order below 2");
	}
	/* r <= 1: y3 - y1 no larger than y2 - y1 has no root. */
	double c;

	assert_int_equal(streams_newton_order(1, 2, 4, 1.0, &c, NULL), -1);
	assert_int_equal(streams_newton_order(1, 2, 4, 0.5, &c, NULL), -1);
	assert_int_equal(streams_newton_order(1, 2, 4, NAN, &c, NULL), -1);
}

/* ------------------------------------------------- the propositions -- */

static enum streams_reject fit_check(enum streams_model m, double (*f)(double, const double *),
				     const double *k, const double *n, double n_max)
{
	struct streams_point p[3];
	struct streams_coef c;

	pts3(p, n, f, k, 3);
	assert_int_equal(streams_coef(m, p, 2, &c), STREAMS_OK);
	return streams_check(&c, n_max);
}

static void test_propositions(void **state)
{
	const double n[3] = { 1, 4, 10 };
	/* Super-linear growth (a' < 0), and a fall (b' < 0), for dinda. */
	const double super[2] = { -1e-19, 1e-16 }, fall[2] = { 1e-18, -1e-19 };
	/* Newton: order 1.5; order 3 peaking below one stream. */
	const double low[3] = { 1e-18, 1e-17, 1.5 }, early[3] = { 1e-17, 1e-18, 3 };
	/* Full second order: b' >= 0; c' <= 0; 2c' + b' <= 0; undefined at n = 5. */
	const double f_bpos[3] = { 1e-18, 1e-18, 1e-17 }, f_cneg[3] = { 1e-17, -1e-18, -1e-18 };
	const double f_peak[3] = { 3e-17, -4e-17, 1.9e-17 };
	struct streams_coef k = { .model = STREAMS_FULL2, .a = 1, .b = -10, .c = 6 };

	(void)state;
	assert_int_equal(fit_check(STREAMS_DINDA, f_dinda, super, n, 40), STREAMS_A_NOT_POSITIVE);
	assert_int_equal(fit_check(STREAMS_DINDA, f_dinda, fall, n, 40), STREAMS_B_NOT_POSITIVE);
	assert_int_equal(fit_check(STREAMS_AVG_ARITH, f_dinda, fall, n, 40),
			 STREAMS_B_NOT_POSITIVE);
	assert_int_equal(fit_check(STREAMS_NEWTON, f_newton, low, n, 40), STREAMS_C_BELOW_2);
	assert_int_equal(fit_check(STREAMS_NEWTON, f_newton, early, n, 40),
			 STREAMS_PEAK_BELOW_1);
	assert_int_equal(fit_check(STREAMS_FULL2, f_full2, f_bpos, n, 40),
			 STREAMS_B_NOT_NEGATIVE);
	assert_int_equal(fit_check(STREAMS_FULL2, f_full2, f_cneg, n, 40),
			 STREAMS_C_NOT_POSITIVE);
	assert_int_equal(fit_check(STREAMS_FULL2, f_full2, f_peak, n, 40), STREAMS_PEAK_BELOW_1);
	/* a n^2 + b n + c = n^2 - 10 n + 6 < 0 at n = 5: samples cannot give it
	 * (y > 0), the coefficients can. */
	assert_int_equal(streams_check(&k, 40), STREAMS_OUT_OF_DOMAIN);
	assert_true(isnan(streams_eval(&k, 5)));
	/* Break: a rising first piece is required (dinda's), a falling second allowed. */
	k = (struct streams_coef){ .model = STREAMS_BREAK, .a = 1e-18, .b = -1e-19, .a2 = 1e-18,
				   .b2 = 1e-17, .nb = 4 };
	assert_int_equal(streams_check(&k, 40), STREAMS_B_NOT_POSITIVE);
	/* Loss: a falling curve (a' < 0) is not the model's. */
	k = (struct streams_coef){ .model = STREAMS_LOSS, .a = -1, .b = 10, .x = 2 };
	assert_int_equal(streams_check(&k, 40), STREAMS_A_NOT_POSITIVE);
}

/* The domain checks, which are analytic, against evaluating every n. */
static void test_domain_against_every_n(void **state)
{
	uint64_t st = 5;
	int checked = 0;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct streams_coef k = { .model = STREAMS_FULL2 };
		bool defined = true;

		k.a = test_uniform(&st);
		k.b = -20 * test_uniform(&st);
		k.c = 30 * test_uniform(&st);
		if (k.b >= 0 || 2 * k.c + k.b <= 0)
			continue;
		for (int n = 1; n <= 40; n++)
			defined = defined && !isnan(streams_eval(&k, n)) &&
				  (k.a * n + k.b) * n + k.c > 0;
		/* The vertex between integers: the check is on the real line. */
		for (double n = 1; n <= 40; n += 1.0 / 64)
			defined = defined && (k.a * n + k.b) * n + k.c > 0;
		assert_int_equal(streams_check(&k, 40) == STREAMS_OK, defined);
		checked++;
	}
	assert_true(checked > 1000);
}

/* ---------------------------------------------------- seeded noise -- */

/*
 * 40 samples (n = 1 .. 40) of a model's curve, each throughput times
 * 1 + u, u uniform in [-0.01, 0.01]; the BFC over them. Bounds: every
 * model's curve from the best combination stays within 3 % of the true
 * curve over 1 .. 40 (three times the noise: the fitted samples' own
 * errors, amplified by extrapolating from them); and the coefficient
 * bounds given per model.
 */
static void noisy(const struct streams_coef *truth, uint64_t seed, struct streams_bfc *b)
{
	struct streams_point p[40];
	uint64_t st = seed;
	double worst = 0;

	for (int i = 0; i < 40; i++) {
		p[i].n = i + 1;
		p[i].th = streams_eval(truth, p[i].n) * (1 + 0.02 * (test_uniform(&st) - 0.5));
	}
	assert_int_equal(streams_fit_bfc(truth->model, p, 40, 40, b), 0);
	assert_true(b->found);
	for (int n = 1; n <= 40; n++) {
		double t = streams_eval(truth, n), f = streams_eval(&b->coef, n);

		worst = fmax(worst, fabs(f - t) / t);
	}
	if (!(worst < 0.03)) {
		fprintf(stderr, "%s: the fitted curve is %.3g from the true one\n",
			streams_model_name(truth->model), worst);
		fail();
	}
}

static void test_noise(void **state)
{
	const struct streams_coef dinda = { .model = STREAMS_DINDA, .a = 1e-18, .b = 1e-16 };
	const struct streams_coef newton = { .model = STREAMS_NEWTON, .a = 4e-21, .b = 1.2e-17,
					     .c = 3.3 };
	const struct streams_coef full2 = { .model = STREAMS_FULL2, .a = 3e-20, .b = -8e-19,
					    .c = 9e-18 };
	const struct streams_coef logm = { .model = STREAMS_LOG, .a = 2e-17, .b = 0.09 };
	struct streams_bfc b;

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		/*
		 * Coefficients: the dominant terms within 10 % (a' of a curve
		 * that reaches its plateau at n ~ 10, the order c' of a curve
		 * whose peak and fall the 40 samples span); the others only
		 * through the curve's bound above, as a 1 % noise at n = 1 moves
		 * b' of dinda and c' of full2 by several per cent.
		 */
		noisy(&dinda, seed, &b);
		check_rel(b.coef.a, dinda.a, 0.10, "noisy dinda a'");
		noisy(&newton, seed, &b);
		check_rel(b.coef.c, newton.c, 0.10, "noisy newton c'");
		noisy(&full2, seed, &b);
		check_rel(b.coef.a, full2.a, 0.10, "noisy full2 a'");
		noisy(&logm, seed, &b);
		check_rel(b.coef.b, logm.b, 0.10, "noisy log b'");
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_exact_two_point),
	cmocka_unit_test(test_exact_three_point),
	cmocka_unit_test(test_exact_break_and_average),
	cmocka_unit_test(test_loss_rates),
	cmocka_unit_test(test_newton_converges),
	cmocka_unit_test(test_propositions),
	cmocka_unit_test(test_domain_against_every_n),
	cmocka_unit_test(test_noise),
)
