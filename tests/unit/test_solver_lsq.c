// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * solver/lsq against independent truths: exact data on a known plane, the
 * QR least squares of LAPACK (dgels) on the observations themselves rather
 * than on the normal equations, (X^T X)^-1 by LU (dgetrf/dgetri), the
 * textbook standard error from the explicit residuals, weighted least
 * squares for the decayed sums, the closed form of n_eff for geometric
 * weights, and the uncentred R^2 of each term on the others for the
 * separability bound.
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

#include "solver/lsq.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

#define NOBS 40

/* Observations: x in [1, 100) x [1000, 91000) x [0, 50000), y on a plane
 * (3.5, 1200, 700) with relative noise @noise. */
static void observe(uint64_t *st, double noise, double x[NOBS][LSQ_TERMS], double y[NOBS])
{
	for (int i = 0; i < NOBS; i++) {
		x[i][0] = 1 + floor(99 * test_uniform(st));
		x[i][1] = 1000 + floor(9e4 * test_uniform(st));
		x[i][2] = floor(5e4 * test_uniform(st));
		y[i] = (3.5 * x[i][0] + 1200 * x[i][1] + 700 * x[i][2]) *
		       (1 + noise * (2 * test_uniform(st) - 1));
	}
}

/* LAPACK's least squares of y on the terms @idx[0..k), rows weighted by
 * @w (NULL: 1), into @c; the weighted residual sum of squares into @rss. */
static void lapack_fit(const double x[NOBS][LSQ_TERMS], const double y[NOBS],
		       const double *w, const int *idx, int k, double *c, double *rss)
{
	double a[NOBS * LSQ_TERMS], b[NOBS];

	for (int i = 0; i < NOBS; i++) {
		double sw = w ? sqrt(w[i]) : 1;

		for (int q = 0; q < k; q++)
			a[i * k + q] = sw * x[i][idx[q]];
		b[i] = sw * y[i];
	}
	assert_int_equal(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', NOBS, k, 1, a, k, b, 1), 0);
	*rss = 0;
	for (int i = 0; i < NOBS; i++) {
		double r = y[i];

		for (int q = 0; q < k; q++)
			r -= x[i][idx[q]] * b[q];
		*rss += (w ? w[i] : 1) * r * r;
	}
	memcpy(c, b, (size_t)k * sizeof(*c));
}

/* (X^T X)^-1 by LU from the observations, its diagonal into @var. */
static void lapack_inv_diag(const double x[NOBS][LSQ_TERMS], const int *idx, int k,
			    double *var)
{
	double m[LSQ_TERMS * LSQ_TERMS] = { 0 };
	lapack_int ipiv[LSQ_TERMS];

	for (int i = 0; i < NOBS; i++)
		for (int p = 0; p < k; p++)
			for (int q = 0; q < k; q++)
				m[p * k + q] += x[i][idx[p]] * x[i][idx[q]];
	assert_int_equal(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, k, k, m, k, ipiv), 0);
	assert_int_equal(LAPACKE_dgetri(LAPACK_ROW_MAJOR, k, m, k, ipiv), 0);
	for (int q = 0; q < k; q++)
		var[q] = m[q * k + q];
}

static void fill(struct lsq *s, const double x[NOBS][LSQ_TERMS], const double y[NOBS],
		 double d)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NOBS; i++) {
		lsq_decay(s, d);
		lsq_add(s, x[i], y[i], 4);
	}
}

/* Exact data: the plane back, with every solver, and no standard error. */
static void test_exact_plane(void **state)
{
	static const int all[3] = { 0, 1, 2 };
	double x[NOBS][LSQ_TERMS], y[NOBS], c[3], var[3], c2[2], v2[2], c1, v1;
	struct lsq s;
	uint64_t st = 11;
	int bad;

	(void)state;
	observe(&st, 0, x, y);
	fill(&s, x, y, 1);
	assert_true(s.ok);
	assert_int_equal(lsq_solve(&s, all, 3, 0.02, c, var, &bad), 0);
	check_rel_strict(c[0], 3.5, 1e-7);
	check_rel_strict(c[1], 1200, 1e-12);
	check_rel_strict(c[2], 700, 1e-12);
	assert_true(lsq_se(&s, 3, lsq_explained(&s, all, 3, c), var[1]) < 1e-6 * 1200);
	/* Two terms on a plane of two, by Cramer and by Cholesky. */
	for (int i = 0; i < NOBS; i++)
		y[i] = 9500 * x[i][0] + 1500 * x[i][1];
	fill(&s, x, y, 1);
	assert_int_equal(lsq_solve2(&s, 0, 1, 0.02, c2, v2), 0);
	check_rel_strict(c2[0], 9500, 1e-9);
	check_rel_strict(c2[1], 1500, 1e-12);
	assert_int_equal(lsq_solve(&s, all, 2, 0.02, c, var, &bad), 0);
	check_rel_strict(c[0], 9500, 1e-9);
	check_rel_strict(c[1], 1500, 1e-12);
	/* One term. */
	for (int i = 0; i < NOBS; i++)
		y[i] = 1500 * x[i][1];
	fill(&s, x, y, 1);
	assert_int_equal(lsq_solve1(&s, 1, &c1, &v1), 0);
	check_rel_strict(c1, 1500, 1e-15);
	check_rel_strict(v1, 1 / s.xx[1][1], 0);
}

/*
 * Noisy data with equal weights: coefficients against dgels, (M^-1)_jj
 * against dgetri, the standard error against sqrt(RSS / (n - k) (M^-1)_jj)
 * from the explicit residuals; for the three terms, two of them, and the
 * two by Cramer's rule.
 */
static void test_against_lapack(void **state)
{
	static const int sets[][3] = { { 0, 1, 2 }, { 1, 2, 0 }, { 0, 1, 0 } };
	static const int ks[] = { 3, 2, 2 };
	double x[NOBS][LSQ_TERMS], y[NOBS];
	struct lsq s;
	uint64_t st = 5;

	(void)state;
	observe(&st, 0.05, x, y);
	fill(&s, x, y, 1);
	check_rel_strict(lsq_n_eff(&s), NOBS, 1e-15);
	for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++) {
		const int *idx = sets[t];
		int k = ks[t], bad;
		double c[3], var[3], lc[3], lvar[3], rss, ex;

		assert_int_equal(lsq_solve(&s, idx, k, 0.02, c, var, &bad), 0);
		lapack_fit(x, y, NULL, idx, k, lc, &rss);
		lapack_inv_diag(x, idx, k, lvar);
		ex = lsq_explained(&s, idx, k, c);
		for (int q = 0; q < k; q++) {
			check_rel_strict(c[q], lc[q], 1e-9);
			check_rel_strict(var[q], lvar[q], 1e-9);
			check_rel_strict(lsq_se(&s, k, ex, var[q]), sqrt(rss / (NOBS - k) * lvar[q]),
				  1e-6);
		}
		if (k == 2) {
			double c2[2], v2[2];

			assert_int_equal(lsq_solve2(&s, idx[0], idx[1], 0.02, c2, v2), 0);
			for (int q = 0; q < 2; q++) {
				check_rel_strict(c2[q], lc[q], 1e-9);
				check_rel_strict(v2[q], lvar[q], 1e-9);
			}
		}
	}
	/* Fewer observations than terms + 1: no standard error. */
	{
		struct lsq few = { 0 };
		double c[3], var[3];
		int bad;
		static const int all[3] = { 0, 1, 2 };

		for (int i = 0; i < 3; i++)
			lsq_add(&few, x[i], y[i], 4);
		assert_false(few.ok);
		assert_int_equal(lsq_solve(&few, all, 3, 0, c, var, &bad), 0);
		assert_true(isnan(lsq_se(&few, 3, lsq_explained(&few, all, 3, c), var[1])));
		assert_true(isnan(lsq_se(&s, 3, 0, -1)));
	}
}

/*
 * Decayed sums are weighted least squares with weights d^(N-1-i): the
 * coefficients against dgels on rows scaled by sqrt(weight); n and n_eff
 * against their closed forms; and more decay alone (an idle series)
 * changes neither the coefficients nor their standard errors.
 */
static void test_decayed(void **state)
{
	static const int all[3] = { 0, 1, 2 };
	const double d = exp(-0.25 / 5.0);
	double x[NOBS][LSQ_TERMS], y[NOBS], w[NOBS], c[3], var[3], lc[3], rss, se[3];
	struct lsq s;
	uint64_t st = 17;
	int bad;

	(void)state;
	observe(&st, 0.05, x, y);
	fill(&s, x, y, d);
	for (int i = 0; i < NOBS; i++)
		w[i] = pow(d, NOBS - 1 - i);
	assert_int_equal(lsq_solve(&s, all, 3, 0.02, c, var, &bad), 0);
	lapack_fit(x, y, w, all, 3, lc, &rss);
	for (int q = 0; q < 3; q++)
		check_rel_strict(c[q], lc[q], 1e-9);
	check_rel_strict(s.n, (1 - pow(d, NOBS)) / (1 - d), 1e-12);
	check_rel_strict(lsq_n_eff(&s), pow((1 - pow(d, NOBS)) / (1 - d), 2) /
				 ((1 - pow(d, 2 * NOBS)) / (1 - d * d)), 1e-12);
	for (int q = 0; q < 3; q++)
		se[q] = lsq_se(&s, 3, lsq_explained(&s, all, 3, c), var[q]);
	for (int i = 0; i < 50; i++)
		lsq_decay(&s, 0.9);
	{
		double c2[3], var2[3];

		assert_int_equal(lsq_solve(&s, all, 3, 0.02, c2, var2, &bad), 0);
		for (int q = 0; q < 3; q++) {
			check_rel_strict(c2[q], c[q], 1e-9);
			check_rel_strict(lsq_se(&s, 3, lsq_explained(&s, all, 3, c2), var2[q]), se[q],
				  1e-6);
		}
	}
}

/*
 * The separability bound: each term's 1 / (C^-1)_jj is 1 - R_j^2, the
 * uncentred R^2 of x_j regressed on the other terms (computed here by
 * dgels). A bound just below the smallest passes; just above it, the
 * solve fails and names that term. Two terms: 1 - r^2 from the sums.
 */
static void test_spread(void **state)
{
	static const int all[3] = { 0, 1, 2 };
	double x[NOBS][LSQ_TERMS], y[NOBS], c[3], var[3], lo = INFINITY;
	struct lsq s;
	uint64_t st = 23;
	int bad, worst = -1;

	(void)state;
	observe(&st, 0.01, x, y);
	/* x_2 nearly a combination of x_0 and x_1. */
	for (int i = 0; i < NOBS; i++)
		x[i][2] = 40 * x[i][0] + 0.3 * x[i][1] + 500 * test_uniform(&st);
	fill(&s, x, y, 1);
	for (int j = 0; j < 3; j++) {
		int others[2] = { (j + 1) % 3, (j + 2) % 3 };
		double xj[NOBS], oc[2], rss, ss = 0, r2;

		for (int i = 0; i < NOBS; i++) {
			xj[i] = x[i][j];
			ss += xj[i] * xj[i];
		}
		lapack_fit(x, xj, NULL, others, 2, oc, &rss);
		r2 = 1 - rss / ss;
		if (1 - r2 < lo) {
			lo = 1 - r2;
			worst = j;
		}
	}
	print_message("smallest 1 - R^2: %.6g (term %d)\n", lo, worst);
	assert_true(lo < 0.02);
	assert_int_equal(lsq_solve(&s, all, 3, lo * (1 - 1e-6), c, var, &bad), 0);
	assert_int_equal(lsq_solve(&s, all, 3, lo * (1 + 1e-6), c, var, &bad), -1);
	assert_int_equal(bad, worst);
	/* Two terms: 1 - r^2, r^2 = (sum x0 x1)^2 / (sum x0^2 sum x1^2). */
	{
		double sxx = 0, syy = 0, sxy = 0, r2, c2[2], v2[2];
		static const int pair[2] = { 0, 2 };

		for (int i = 0; i < NOBS; i++) {
			sxx += x[i][0] * x[i][0];
			syy += x[i][2] * x[i][2];
			sxy += x[i][0] * x[i][2];
		}
		r2 = sxy * sxy / (sxx * syy);
		assert_int_equal(lsq_solve2(&s, 0, 2, (1 - r2) * (1 - 1e-6), c2, v2), 0);
		assert_int_equal(lsq_solve2(&s, 0, 2, (1 - r2) * (1 + 1e-6), c2, v2), -1);
		assert_int_equal(lsq_solve(&s, pair, 2, (1 - r2) * (1 - 1e-6), c, var, &bad), 0);
		assert_int_equal(lsq_solve(&s, pair, 2, (1 - r2) * (1 + 1e-6), c, var, &bad), -1);
	}
}

/* Singular and empty systems fail, naming the term. */
static void test_singular(void **state)
{
	static const int all[3] = { 0, 1, 2 }, rev[3] = { 2, 1, 0 };
	double x[NOBS][LSQ_TERMS], y[NOBS], c[3], var[3], c2[2], v2[2], c1, v1;
	struct lsq s;
	uint64_t st = 29;
	int bad;

	(void)state;
	observe(&st, 0.01, x, y);
	for (int i = 0; i < NOBS; i++)
		x[i][2] = x[i][0] + x[i][1];
	fill(&s, x, y, 1);
	assert_int_equal(lsq_solve(&s, all, 3, 0, c, var, &bad), -1);
	assert_int_equal(bad, 2);
	/* Proportional terms: Cramer's determinant is zero. */
	for (int i = 0; i < NOBS; i++)
		x[i][2] = 3 * x[i][0];
	fill(&s, x, y, 1);
	assert_int_equal(lsq_solve2(&s, 0, 2, 0, c2, v2), -1);
	assert_int_equal(lsq_solve(&s, rev, 3, 0, c, var, &bad), -1);
	assert_int_equal(bad, 2);
	/* A term that is always zero. */
	for (int i = 0; i < NOBS; i++)
		x[i][2] = 0;
	fill(&s, x, y, 1);
	assert_int_equal(lsq_solve(&s, rev, 3, 0.02, c, var, &bad), -1);
	assert_int_equal(bad, 0);
	assert_int_equal(lsq_solve1(&s, 2, &c1, &v1), -1);
	assert_int_equal(lsq_solve2(&s, 2, 1, 0, c2, v2), -1);
	/* No terms, too many. */
	assert_int_equal(lsq_solve(&s, all, 0, 0.02, c, var, &bad), -1);
	assert_int_equal(lsq_solve(&s, all, 4, 0.02, c, var, &bad), -1);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_exact_plane),
	cmocka_unit_test(test_against_lapack),
	cmocka_unit_test(test_decayed),
	cmocka_unit_test(test_spread),
	cmocka_unit_test(test_singular),
)
