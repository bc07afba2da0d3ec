// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * solver/streams_fit: the Best-Fitted Coefficients search against a
 * brute-force reference written independently here - every subset by
 * bitmask, coefficients by LAPACK's linear solves (and eq. 22 by
 * bisection in its plain form), the propositions as the paper states
 * them, the domain by evaluating the curve on a fine grid of 1 .. n_max,
 * eq. 35 from the curve - on random data sets of the paper's kind; that
 * the propositions do reject fits the error alone would pick; the advice
 * (peak, tolerance, receiver cap) against the curve evaluated at every n;
 * the exponential sampling strategy; the confidence's closed form.
 */
#include <lapacke.h>
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

#define MAXM	12
#define NMAX	40

/* ---------------------------------------------------- the reference -- */

/* Row-major A x = b for k unknowns by LU; false when singular. */
static bool solve(int k, double *a, double *b)
{
	lapack_int ipiv[3];

	if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, k, 1, a, k, ipiv, b, 1) != 0)
		return false;
	for (int i = 0; i < k; i++)
		if (!isfinite(b[i]))
			return false;
	return true;
}

/* a n^e + b through two points (n_i, v_i). */
static bool line2(double n1, double v1, double n2, double v2, double e, double *a, double *b)
{
	double m[4] = { pow(n1, e), 1, pow(n2, e), 1 }, r[2] = { v1, v2 };

	if (!solve(2, m, r))
		return false;
	*a = r[0];
	*b = r[1];
	return true;
}

static double yv(const struct streams_point *p)
{
	return p->n * p->n / (p->th * p->th);
}

static bool ref_newton(const struct streams_point *q, struct streams_coef *k)
{
	double r = (yv(&q[2]) - yv(&q[0])) / (yv(&q[1]) - yv(&q[0])), lo = -60, hi = 60;

	if (!(r > 1))
		return false;
	for (int i = 0; i < 300; i++) {
		double c = (lo + hi) / 2, h;

		h = fabs(c) < 1e-12 ? log(q[2].n / q[0].n) / log(q[1].n / q[0].n) :
		    (pow(q[2].n, c) - pow(q[0].n, c)) / (pow(q[1].n, c) - pow(q[0].n, c));
		if (h < r)
			lo = c;
		else
			hi = c;
	}
	k->c = (lo + hi) / 2;
	return line2(q[0].n, yv(&q[0]), q[1].n, yv(&q[1]), k->c, &k->a, &k->b);
}

static bool ref_avg(const struct streams_point *q, struct streams_coef *k)
{
	double a12, b12, a13, b13;

	if (!line2(q[0].n, yv(&q[0]), q[1].n, yv(&q[1]), 2, &a12, &b12) ||
	    !line2(q[0].n, yv(&q[0]), q[2].n, yv(&q[2]), 2, &a13, &b13))
		return false;
	/* The propositions apply to both pairs: reject here what breaks them. */
	if (!(a12 > 0 && b12 > 0 && a13 > 0 && b13 > 0))
		return false;
	if (k->model == STREAMS_AVG_ARITH) {
		k->a = (a12 + a13) / 2;
		k->b = (b12 + b13) / 2;
	} else if (k->model == STREAMS_AVG_GEOM) {
		k->a = sqrt(a12 * a13);
		k->b = sqrt(b12 * b13);
	} else {
		k->a = hypot(a12, a13) / sqrt(2);
		k->b = hypot(b12, b13) / sqrt(2);
	}
	return true;
}

/* The coefficients, or false (undetermined, or a pair breaking dinda's rules for avg). */
static bool ref_coef(enum streams_model m, const struct streams_point *q, double x,
		     struct streams_coef *k)
{
	double v[3] = { yv(&q[0]), q[0].n, 1 };

	memset(k, 0, sizeof(*k));
	k->model = m;
	k->x = x;
	switch (m) {
	case STREAMS_HACKER:
		k->b = v[0];
		return true;
	case STREAMS_DINDA:
		return line2(q[0].n, yv(&q[0]), q[1].n, yv(&q[1]), 2, &k->a, &k->b);
	case STREAMS_LOSS:
		return line2(q[0].n, q[0].th * q[0].th, q[1].n, q[1].th * q[1].th, 1 / x, &k->a,
			     &k->b);
	case STREAMS_LOG:
		if (!line2(q[0].n, log(yv(&q[0])), q[1].n, log(yv(&q[1])), 1, &k->b, &k->a))
			return false;
		k->a = exp(k->a);
		return true;
	case STREAMS_NEWTON:
		return ref_newton(q, k);
	case STREAMS_FULL2: {
		double a[9], b[3];

		for (int i = 0; i < 3; i++) {
			a[3 * i] = q[i].n * q[i].n;
			a[3 * i + 1] = q[i].n;
			a[3 * i + 2] = 1;
			b[i] = yv(&q[i]);
		}
		if (!solve(3, a, b))
			return false;
		k->a = b[0];
		k->b = b[1];
		k->c = b[2];
		return true;
	}
	case STREAMS_BREAK:
		k->nb = q[1].n;
		return line2(q[0].n, yv(&q[0]), q[1].n, yv(&q[1]), 2, &k->a, &k->b) &&
		       line2(q[1].n, yv(&q[1]), q[2].n, yv(&q[2]), 2, &k->a2, &k->b2);
	default:
		return ref_avg(q, k);
	}
}

/* The model's curve, written out again; NaN where not defined. */
static double ref_eval(const struct streams_coef *k, double n)
{
	double y;

	switch (k->model) {
	case STREAMS_HACKER:
		y = k->b;
		break;
	case STREAMS_LOSS:
		y = k->a * pow(n, 1 / k->x) + k->b;	/* Th^2 */
		return y > 0 ? sqrt(y) : NAN;
	case STREAMS_LOG:
		y = k->a * exp(k->b * n);
		break;
	case STREAMS_NEWTON:
		y = k->a * pow(n, k->c) + k->b;
		break;
	case STREAMS_FULL2:
		y = k->a * n * n + k->b * n + k->c;
		break;
	case STREAMS_BREAK:
		y = n <= k->nb ? k->a * n * n + k->b : k->a2 * n * n + k->b2;
		break;
	default:
		y = k->a * n * n + k->b;
		break;
	}
	return y > 0 ? n / sqrt(y) : NAN;
}

/* The propositions as the paper states them (§5.1), and the readings of streams.h. */
static bool ref_props(const struct streams_coef *k)
{
	switch (k->model) {
	case STREAMS_HACKER:
		return k->b > 0;
	case STREAMS_DINDA:
	case STREAMS_AVG_ARITH:
	case STREAMS_AVG_GEOM:
	case STREAMS_AVG_QUAD:
		return k->a > 0 && k->b > 0;
	case STREAMS_LOSS:
	case STREAMS_LOG:
		return k->a > 0;
	case STREAMS_NEWTON:
		return k->a > 0 && k->b > 0 && k->c >= 2 &&
		       (k->c == 2 || pow(2 * k->b / (k->a * (k->c - 2)), 1 / k->c) > 1);
	case STREAMS_FULL2:
		return k->a > 0 && k->b < 0 && k->c > 0 && 2 * k->c + k->b > 0;
	case STREAMS_BREAK:
		return k->a > 0 && k->b > 0 && k->a2 > 0;
	default:
		return false;
	}
}

/* Defined and finite on a grid of 1/64 over [1, n_max]. */
static bool ref_domain(const struct streams_coef *k, double n_max)
{
	for (double n = 1; n <= n_max; n += 1.0 / 64)
		if (!isfinite(ref_eval(k, n)))
			return false;
	return true;
}

static double ref_err(const struct streams_coef *k, const struct streams_point *p, int m)
{
	double s = 0;

	for (int i = 0; i < m; i++)
		s += pow(p[i].th - ref_eval(k, p[i].n), 2);
	return sqrt(s / m);
}

struct ref_best {
	bool found;
	double err, second;	/* best and second-best error */
	unsigned mask;
	bool unconstrained_bad;	/* the best without the propositions breaks them */
};

/* Every subset of @np samples by bitmask; every loss exponent. */
static void ref_bfc(enum streams_model model, const struct streams_point *p, int m,
		    double n_max, struct ref_best *rb)
{
	static const double xs[STREAMS_FIT_NLOSS_X] = STREAMS_FIT_LOSS_X;
	int np = streams_model_points(model), nx = model == STREAMS_LOSS ? STREAMS_FIT_NLOSS_X : 1;
	double free_best = INFINITY;
	bool free_ok = false;

	memset(rb, 0, sizeof(*rb));
	rb->err = rb->second = INFINITY;
	for (unsigned mask = 0; mask < (1u << m); mask++) {
		struct streams_point q[3];
		int k = 0;

		if (__builtin_popcount(mask) != np)
			continue;
		for (int i = 0; i < m; i++)
			if (mask & (1u << i))
				q[k++] = p[i];
		for (int xi = 0; xi < nx; xi++) {
			struct streams_coef c;
			double e;

			if (!ref_coef(model, q, xs[xi], &c))
				continue;
			e = ref_err(&c, p, m);
			if (isfinite(e) && e < free_best) {
				free_best = e;
				free_ok = ref_props(&c) && ref_domain(&c, n_max);
			}
			if (!ref_props(&c) || !ref_domain(&c, n_max) || !isfinite(e))
				continue;
			if (e < rb->err) {
				rb->second = rb->err;
				rb->err = e;
				rb->mask = mask;
				rb->found = true;
			} else if (e < rb->second) {
				rb->second = e;
			}
		}
	}
	rb->unconstrained_bad = isfinite(free_best) && !free_ok;
}

/* ------------------------------------------------------- data sets -- */

/*
 * @m distinct n from 1 .. NMAX and throughputs of a curve that rises to a
 * peak and falls (a Newton curve of random order and peak), or rises to a
 * plateau (window-limited streams sharing a bottleneck), with noise.
 */
static void dataset(uint64_t *st, int m, struct streams_point *p)
{
	bool used[NMAX + 1] = { false };
	double c = 2.2 + 3 * test_uniform(st), peak = 3 + 27 * test_uniform(st), noise = 0.05 * test_uniform(st);
	double b = 1e-17, a = 2 * b / ((c - 2) * pow(peak, c)), w = 5e7 + 2e8 * test_uniform(st);
	bool plateau = test_uniform(st) < 0.3;
	int k = 0;

	while (k < m) {
		int n = 1 + (int)(test_uniform(st) * NMAX);

		if (used[n])
			continue;
		used[n] = true;
		k++;
	}
	k = 0;
	for (int n = 1; n <= NMAX; n++) {
		if (!used[n])
			continue;
		p[k].n = n;
		p[k].th = plateau ? fmin(n * w, 10 * w) : n / sqrt(a * pow(n, c) + b);
		p[k].th *= 1 + noise * (2 * test_uniform(st) - 1);
		k++;
	}
}

static unsigned mask_of(const int *idx, int np)
{
	unsigned mask = 0;

	for (int i = 0; i < np; i++)
		mask |= 1u << idx[i];
	return mask;
}

static void test_bfc_brute_force(void **state)
{
	uint64_t st = 2024;
	int compared = 0, same_choice = 0, bad_free = 0;

	(void)state;
	for (int set = 0; set < 150; set++) {
		struct streams_point p[MAXM];
		int m = 3 + (int)(test_uniform(&st) * (MAXM - 2));

		dataset(&st, m, p);
		for (int model = 1; model < STREAMS_NMODELS; model++) {
			struct streams_bfc b;
			struct ref_best rb;
			double mean = 0;

			for (int i = 0; i < m; i++)
				mean += p[i].th / m;
			assert_int_equal(streams_fit_bfc(model, p, m, NMAX, &b), 0);
			ref_bfc(model, p, m, NMAX, &rb);
			bad_free += rb.unconstrained_bad;
			if (b.found != rb.found) {
				fprintf(stderr, "set %d %s: found %d, reference %d\n", set,
					streams_model_name(model), b.found, rb.found);
				fail();
			}
			if (!b.found)
				continue;
			compared++;
			assert_true(fabs(b.err - rb.err) <= 1e-9 * mean + 1e-7 * rb.err);
			/* The same combination when the minimum is clearly unique. */
			if (rb.second > rb.err * (1 + 1e-6) + 1e-9 * mean) {
				assert_int_equal(mask_of(b.idx, streams_model_points(model)), rb.mask);
				same_choice++;
			}
		}
	}
	fprintf(stderr, "BFC: %d fits compared, %d unique choices, %d where the error "
		"alone picks a fit the propositions reject\n", compared, same_choice, bad_free);
	assert_true(compared > 500);
	assert_true(same_choice > 300);
	/* The propositions matter: without them the search would pick bad fits. */
	assert_true(bad_free > 20);
}

/* ---------------------------------------------------------- advice -- */

/*
 * The curve at every n: its argmax, and the fewest n up to it within tol
 * of the best of those under the cap.
 */
static void brute_advice(const struct streams_coef *k, uint32_t n_max, double tol, double cap,
			 uint32_t *peak, uint32_t *opt)
{
	double best = 0, top = 0;

	*peak = 1;
	for (uint32_t n = 1; n <= n_max; n++) {
		double t = streams_eval(k, n);

		if (t > top) {
			top = t;
			*peak = n;
		}
	}
	for (uint32_t n = 1; n <= *peak; n++) {
		double t = streams_eval(k, n);

		if ((cap <= 0 || t <= cap) && t > best)
			best = t;
	}
	for (*opt = 1; *opt < *peak; (*opt)++) {
		double t = streams_eval(k, *opt);

		if ((cap <= 0 || t <= cap) && t >= (1 - tol) * best)
			break;
	}
}

static void test_advice_exponential_samples(void **state)
{
	/* A Newton curve peaking at n ~ 12.9, sampled at 1, 2, 4, 8, 16. */
	const struct streams_coef truth = { .model = STREAMS_NEWTON, .a = 4e-21, .b = 1.2e-17,
					    .c = 3.3 };
	struct streams_fit_opts o = { .n_max = 32, .tolerance = 0.02 };
	struct streams_point p[5];
	struct streams_fit_result r;
	uint32_t peak, opt;

	(void)state;
	for (int i = 0; i < 5; i++) {
		p[i].n = 1 << i;
		p[i].th = streams_eval(&truth, p[i].n);
	}
	assert_int_equal(streams_fit_best(p, 5, &o, &r), 0);
	assert_int_equal(r.model, STREAMS_NEWTON);
	assert_true(r.rel_err < 1e-9);
	for (int n = 1; n <= 32; n++)
		check_rel(streams_eval(&r.best.coef, n), streams_eval(&truth, n), 1e-9, "curve");
	brute_advice(&truth, 32, 0.02, 0, &peak, &opt);
	assert_int_equal(r.n_peak, peak);
	assert_int_equal(r.n_opt, opt);
	assert_false(r.capped);
	assert_false(r.rising);
	assert_true(r.n_opt < r.n_peak);
	/*
	 * A cap below the peak: the rising side, never past the peak where
	 * the curve comes back under it with more streams.
	 */
	o.cap = 0.95 * r.th_peak;
	assert_int_equal(streams_fit_best(p, 5, &o, &r), 0);
	brute_advice(&truth, 32, 0.02, o.cap, &peak, &opt);
	assert_int_equal(r.n_opt, opt);
	assert_true(r.capped);
	assert_true(r.n_opt < r.n_peak);
	assert_true(r.th_opt <= o.cap);
	o.cap = 0;
	assert_int_equal(streams_fit_best(p, 5, &o, &r), 0);
	/* Two held-out samples, an exact fit: 1 - 1/4. */
	check_rel(r.confidence, 0.75, 1e-6, "confidence");
	/* Three samples: every three-coefficient model is exact; the ranking picks full2. */
	assert_int_equal(streams_fit_best(p, 3, &o, &r), 0);
	assert_int_equal(r.model, STREAMS_FULL2);
	assert_true(r.confidence == 0);
}

static void test_advice_cap(void **state)
{
	/* Dinda's curve: 100 Mb/s per stream, 1 Gb/s for ever. */
	const struct streams_coef truth = { .model = STREAMS_DINDA, .a = 1e-18, .b = 1e-16 };
	struct streams_fit_opts o = { .n_max = 64, .tolerance = 0.05, .models = 1u << STREAMS_DINDA };
	struct streams_point p[4];
	struct streams_fit_result r;
	uint32_t peak, opt;

	(void)state;
	for (int i = 0; i < 4; i++) {
		p[i].n = 1 << (i + 1);
		p[i].th = streams_eval(&truth, p[i].n);
	}
	assert_int_equal(streams_fit_best(p, 4, &o, &r), 0);
	assert_int_equal(r.model, STREAMS_DINDA);
	assert_true(r.rising);
	assert_int_equal(r.n_peak, 64);
	brute_advice(&truth, 64, 0.05, 0, &peak, &opt);
	assert_int_equal(r.n_opt, opt);
	assert_false(r.capped);
	/* The receiver drains 600 Mb/s: the best under it, then the tolerance. */
	o.cap = 6e8;
	assert_int_equal(streams_fit_best(p, 4, &o, &r), 0);
	brute_advice(&truth, 64, 0.05, 6e8, &peak, &opt);
	assert_int_equal(r.n_opt, opt);
	assert_true(r.capped);
	assert_true(r.th_opt <= 6e8);
	assert_true(streams_eval(&truth, r.n_opt + 1) > 6e8 * 0.95);
	/* Below one stream's throughput: one stream, capped. */
	o.cap = 5e7;
	assert_int_equal(streams_fit_best(p, 4, &o, &r), 0);
	assert_int_equal(r.n_opt, 1);
	assert_true(r.capped);
	/* No model allowed that has enough samples: the best measured one. */
	o.cap = 0;
	o.models = 1u << STREAMS_NEWTON;
	assert_int_equal(streams_fit_best(p, 2, &o, &r), 0);
	assert_int_equal(r.model, STREAMS_NONE);
	assert_int_equal(r.n_opt, 4);
	check_rel(r.th_opt, p[1].th, 0, "measured");
	/* Bad input. */
	p[1].n = p[0].n;
	assert_int_equal(streams_fit_best(p, 4, &o, &r), -1);
	p[1].n = 4;
	p[1].th = NAN;
	assert_int_equal(streams_fit_best(p, 4, &o, &r), -1);
}

static void test_expo_next(void **state)
{
	struct streams_point p[6] = { { 1, 10 }, { 2, 19 }, { 4, 30 }, { 8, 31 } };

	(void)state;
	assert_int_equal(streams_fit_expo_next(p, 0, 0.05, 64), 1);
	assert_int_equal(streams_fit_expo_next(p, 1, 0.05, 64), 2);
	assert_int_equal(streams_fit_expo_next(p, 2, 0.05, 64), 4);
	assert_int_equal(streams_fit_expo_next(p, 3, 0.05, 64), 8);
	/* 31 < 1.05 x 30: stopped rising. */
	assert_int_equal(streams_fit_expo_next(p, 4, 0.05, 64), 0);
	/* Rising, but 16 is beyond n_max = 8. */
	p[3].th = 50;
	assert_int_equal(streams_fit_expo_next(p, 4, 0.05, 8), 0);
	assert_int_equal(streams_fit_expo_next(p, 4, 0.05, 64), 16);
	/* Other samples in between do not count; a missing power of two is next. */
	p[0] = (struct streams_point){ 1, 10 };
	p[1] = (struct streams_point){ 3, 25 };
	p[2] = (struct streams_point){ 4, 30 };
	assert_int_equal(streams_fit_expo_next(p, 3, 0.05, 64), 2);
}

static void test_confidence(void **state)
{
	(void)state;
	check_rel(streams_fit_confidence(0.1, 5, 3), 0.9 * 0.75, 1e-15, "two held out");
	check_rel(streams_fit_confidence(0, 4, 2), 0.75, 1e-15, "exact");
	assert_true(streams_fit_confidence(0, 3, 3) == 0);
	assert_true(streams_fit_confidence(1.5, 9, 2) == 0);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_bfc_brute_force),
	cmocka_unit_test(test_advice_exponential_samples),
	cmocka_unit_test(test_advice_cap),
	cmocka_unit_test(test_expo_next),
	cmocka_unit_test(test_confidence),
)
