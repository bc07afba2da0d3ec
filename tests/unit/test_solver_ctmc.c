// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CTMC solvers against independent truths: birth-death closed forms (GTH's
 * relative accuracy on tiny probabilities), GTH vs Gauss-Seidel, LU vs
 * Gauss-Seidel vs a hand-solved absorbing chain, uniformization vs a dense
 * matrix exponential (scaling and squaring, written here), the mean time
 * to absorption vs the integral of 1 - F(t), Fox-Glynn vs the Poisson pmf
 * from lgamma, and the error paths.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check_rel.h"

#include "solver/ctmc.h"
#include "ctmc_fixture.h"
#include "tests/unit/unit_main.h"

/* Birth-death chain on 0..n-1 with birth b and death d (per state). */
static void build_birth_death(struct ctmc *q, uint32_t n, double b, double d)
{
	assert_int_equal(ctmc_init(q, n, 2 * n), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cols[2];
		double rates[2];
		uint32_t k = 0;

		if (i > 0)
			cols[k] = i - 1, rates[k++] = d;
		if (i + 1 < n)
			cols[k] = i + 1, rates[k++] = b;
		assert_int_equal(ctmc_add_row(q, cols, rates, k), 0);
	}
	assert_int_equal(ctmc_seal(q), 0);
}

/*
 * pi_i = rho^i (1 - rho) / (1 - rho^n): probabilities down to 1e-250 must
 * come out with full relative precision.
 */
static void test_gth_birth_death_relative(void **state)
{
	const uint32_t n = 250;
	const double rho = 0.1;
	struct ctmc q;
	struct ctmc_opts o;
	struct ctmc_stat st;
	double *pi = malloc(n * sizeof(*pi));

	(void)state;
	build_birth_death(&q, n, rho * 7.0, 7.0);
	ctmc_opts_default(&o);
	o.method = CTMC_METHOD_GTH;
	assert_int_equal(ctmc_steady_state(&q, &o, pi, &st), 0);
	assert_int_equal(st.method, CTMC_METHOD_GTH);
	for (uint32_t i = 0; i < n; i++) {
		long double want = powl(rho, i) * (1.0L - rho) /
				   (1.0L - powl(rho, n));
		char what[32];

		snprintf(what, sizeof(what), "pi[%u]", i);
		/* Within the a-priori bound it reports, and much better. */
		check_rel(pi[i], (double)want, 300 * DBL_EPSILON, what);
		assert_true(300 * DBL_EPSILON <= st.err_bound);
	}
	assert_true(pi[n - 1] < 1e-240);
	assert_true(st.residual < 1e-15);
	free(pi);
	ctmc_finish(&q);
}

/* A random irreducible chain: GTH and Gauss-Seidel agree. */
static void build_random(struct ctmc *q, uint32_t n, unsigned seed)
{
	double *a = calloc((size_t)n * n, sizeof(*a));

	srand(seed);
	for (uint32_t i = 0; i < n; i++) {
		a[(size_t)i * n + (i + 1) % n] = 1.0 + rand() % 7;	/* a ring */
		for (int k = 0; k < 3; k++)
			a[(size_t)i * n + rand() % n] += (rand() % 1000) / 100.0;
	}
	assert_int_equal(ctmc_from_dense(q, n, a), 0);
	free(a);
}

static void test_gth_equals_gauss_seidel(void **state)
{
	const uint32_t n = 300;
	struct ctmc q;
	struct ctmc_opts o;
	struct ctmc_stat sg, ss;
	double *pg = malloc(n * sizeof(*pg)), *ps = malloc(n * sizeof(*ps));

	(void)state;
	build_random(&q, n, 7);
	ctmc_opts_default(&o);
	o.method = CTMC_METHOD_GTH;
	assert_int_equal(ctmc_steady_state(&q, &o, pg, &sg), 0);
	o.method = CTMC_METHOD_SOR;
	assert_int_equal(ctmc_steady_state(&q, &o, ps, &ss), 0);
	assert_int_equal(ss.method, CTMC_METHOD_SOR);
	assert_true(ss.iterations > 1);
	for (uint32_t i = 0; i < n; i++)
		check_rel(ps[i], pg[i], 1e-10, "gs vs gth");
	assert_true(sg.residual < 1e-14 && ss.residual < 1e-12);
	/* AUTO picks by size. */
	o.method = CTMC_METHOD_AUTO;
	o.dense_max = n - 1;
	assert_int_equal(ctmc_steady_state(&q, &o, ps, &ss), 0);
	assert_int_equal(ss.method, CTMC_METHOD_SOR);
	o.dense_max = n;
	assert_int_equal(ctmc_steady_state(&q, &o, ps, &ss), 0);
	assert_int_equal(ss.method, CTMC_METHOD_GTH);
	free(pg);
	free(ps);
	ctmc_finish(&q);
}

static double death_linear(uint32_t i, uint32_t n)
{
	(void)n;
	return 1.0 + 0.5 * i;
}

/* The pure death chain of 60 states at 1 + i / 2, by LU and by Gauss-Seidel. */
static void test_absorb_mean_lu_and_gs(void **state)
{
	(void)state;
	for (int m = 0; m < 2; m++) {
		enum ctmc_method method = m ? CTMC_METHOD_SOR : CTMC_METHOD_LU;
		struct ctmc_stat st;

		ctmc_fixture_death(60, death_linear, method, 1e-12, &st);
		assert_int_equal(st.method, method);
		assert_true(st.err_bound < 1e-10);
	}
}

/* A chain with a transient state that cannot reach absorption: -EINVAL. */
static void test_absorb_unreachable(void **state)
{
	/* 0 <-> 1 closed, 2 -> 3 absorbing. */
	const double a[16] = {
		0, 1, 0, 0,
		1, 0, 0, 0,
		0, 0, 0, 2,
		0, 0, 0, 0,
	};
	const double alpha[4] = { 0, 0, 1, 0 };
	struct ctmc q;
	struct ctmc_stat st;
	double mean;
	bool irr = true;

	(void)state;
	assert_int_equal(ctmc_from_dense(&q, 4, a), 0);
	assert_int_equal(ctmc_absorb_mean(&q, alpha, NULL, &mean, NULL, &st),
			 -EINVAL);
	assert_int_equal(ctmc_is_irreducible(&q, &irr), 0);
	assert_false(irr);
	{
		double pi[4];

		assert_int_equal(ctmc_steady_state(&q, NULL, pi, &st), -EINVAL);
	}
	ctmc_finish(&q);
}

static void test_bad_rates_rejected(void **state)
{
	struct ctmc q;
	uint32_t c[2] = { 1, 2 };
	double r[2] = { 1.0, NAN };

	(void)state;
	assert_int_equal(ctmc_init(&q, 4, 4), 0);
	assert_int_equal(ctmc_add_row(&q, c, r, 2), -EDOM);
	r[1] = -1.0;
	assert_int_equal(ctmc_add_row(&q, c, r, 2), -EDOM);
	r[1] = 2.0;
	/* Repeated columns merge, self-loops go. */
	c[1] = 1;
	assert_int_equal(ctmc_add_row(&q, c, r, 2), 0);
	assert_int_equal(q.nnz, 1);
	assert_true(q.rate[0] == 3.0 && q.exit_rate[0] == 3.0);
	c[0] = 1;
	assert_int_equal(ctmc_add_row(&q, c, r, 1), 0);	/* self-loop */
	assert_int_equal(q.nnz, 1);
	assert_int_equal(ctmc_seal(&q), 0);
	c[0] = 9;
	assert_int_equal(ctmc_add_row(&q, c, r, 1), 0);
	assert_int_equal(ctmc_seal(&q), -EINVAL);	/* column out of range */
	ctmc_finish(&q);
}

/* ---------------------------------------------- uniformization vs expm -- */

static void matmul(const double *a, const double *b, double *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			double s = 0.0;

			for (uint32_t k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}

/*
 * exp(A) by scaling and squaring with a 30-term Taylor series on
 * A / 2^s, ||A / 2^s||_inf <= 1/8: an independent dense method.
 */
static void expm(const double *a, double *e, uint32_t n)
{
	double norm = 0.0, *s = malloc(n * n * sizeof(*s));
	double *term = malloc(n * n * sizeof(*term)), *tmp = malloc(n * n * sizeof(*tmp));
	int sq = 0;

	for (uint32_t i = 0; i < n; i++) {
		double r = 0.0;

		for (uint32_t j = 0; j < n; j++)
			r += fabs(a[i * n + j]);
		if (r > norm)
			norm = r;
	}
	while (norm / ldexp(1.0, sq) > 0.125)
		sq++;
	for (uint32_t i = 0; i < n * n; i++)
		s[i] = a[i] / ldexp(1.0, sq);
	memset(e, 0, n * n * sizeof(*e));
	memset(term, 0, n * n * sizeof(*term));
	for (uint32_t i = 0; i < n; i++)
		e[i * n + i] = term[i * n + i] = 1.0;
	for (int k = 1; k <= 30; k++) {
		matmul(term, s, tmp, n);
		for (uint32_t i = 0; i < n * n; i++) {
			term[i] = tmp[i] / k;
			e[i] += term[i];
		}
	}
	for (int k = 0; k < sq; k++) {
		matmul(e, e, tmp, n);
		memcpy(e, tmp, n * n * sizeof(*e));
	}
	free(s);
	free(term);
	free(tmp);
}

static void test_uniformization_vs_expm(void **state)
{
	const uint32_t n = 12;
	const double times[] = { 0.0, 1e-3, 0.05, 0.3, 2.0, 15.0 };
	double a[12 * 12] = { 0 }, g[12 * 12], e[12 * 12], p0[12] = { 0 };
	struct ctmc q;

	(void)state;
	srand(3);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			if (i != j && rand() % 3 == 0)
				a[i * n + j] = (rand() % 100) / 10.0;
	a[(n - 2) * n + (n - 1)] = 0.7;
	memset(a + (n - 1) * n, 0, n * sizeof(double));	/* absorbing */
	assert_int_equal(ctmc_from_dense(&q, n, a), 0);
	p0[0] = 0.6;
	p0[3] = 0.4;
	for (size_t k = 0; k < sizeof(times) / sizeof(times[0]); k++) {
		double pt[12], pe[12] = { 0 };
		struct ctmc_stat st;

		/* Generator G = A - diag(row sums), times t. */
		for (uint32_t i = 0; i < n; i++) {
			double rs = 0.0;

			for (uint32_t j = 0; j < n; j++) {
				g[i * n + j] = i == j ? 0.0 : a[i * n + j] * times[k];
				rs += g[i * n + j];
			}
			g[i * n + i] = -rs;
		}
		expm(g, e, n);
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < n; j++)
				pe[j] += p0[i] * e[i * n + j];
		assert_int_equal(ctmc_transient(&q, p0, times[k], 1e-13, pt, &st), 0);
		for (uint32_t j = 0; j < n; j++) {
			if (!(fabs(pt[j] - pe[j]) <= 1e-11 + st.err_bound)) {
				fprintf(stderr, "t %g p[%u] unif %.15g expm %.15g\n",
					times[k], j, pt[j], pe[j]);
				fail();
			}
		}
		assert_true(st.err_bound < 1e-9);
		/* F(t) from the streaming path equals the absorbing entry. */
		{
			double f, s;

			assert_int_equal(ctmc_absorb_cdf(&q, p0, &times[k], 1,
							 1e-13, 0, &f, &s, &st), 0);
			assert_true(fabs(f - pe[n - 1]) <= 1e-11 + st.err_bound);
			assert_true(fabs(f + s - 1.0) < 1e-15);
		}
	}
	ctmc_finish(&q);
}

/*
 * Mean time to absorption by the linear solve equals the integral of the
 * survival function 1 - F(t) from uniformization (composite Simpson on a
 * fine grid up to where 1 - F < 1e-16).
 */
static void test_mean_equals_survival_integral(void **state)
{
	const uint32_t n = 8, grid = 20001;
	double a[8 * 8] = { 0 }, alpha[8] = { 0.5, 0.3, 0.2 };
	double *t = malloc(grid * sizeof(*t)), *f = malloc(grid * sizeof(*f));
	double *s = malloc(grid * sizeof(*s));
	double mean, h, tmax, integral = 0.0;
	struct ctmc q;
	struct ctmc_stat st;

	(void)state;
	/* A chain with a slow loop (0 <-> 1) before absorption in 7. */
	a[0 * n + 1] = 3.0; a[1 * n + 0] = 2.5; a[1 * n + 2] = 0.4;
	a[2 * n + 3] = 5.0; a[3 * n + 1] = 1.0; a[3 * n + 4] = 4.0;
	a[4 * n + 5] = 9.0; a[5 * n + 6] = 0.8; a[6 * n + 7] = 2.0;
	a[6 * n + 0] = 0.3; a[2 * n + 7] = 0.05;
	assert_int_equal(ctmc_from_dense(&q, n, a), 0);
	assert_int_equal(ctmc_absorb_mean(&q, alpha, NULL, &mean, NULL, &st), 0);
	assert_int_equal(st.method, CTMC_METHOD_LU);
	tmax = 40.0 * mean;
	h = tmax / (grid - 1);
	for (uint32_t i = 0; i < grid; i++)
		t[i] = i * h;
	assert_int_equal(ctmc_absorb_cdf(&q, alpha, t, grid, 1e-14, 0, f, s, &st), 0);
	assert_true(s[grid - 1] < 1e-12);
	for (uint32_t i = 0; i < grid; i++)
		integral += s[i] * (i == 0 || i == grid - 1 ? 1 : (i % 2 ? 4 : 2));
	integral *= h / 3.0;
	check_rel(integral, mean, 1e-9, "integral of survival");
	/* F is a distribution function. */
	for (uint32_t i = 1; i < grid; i++)
		assert_true(f[i] >= f[i - 1] - 1e-15);
	assert_true(f[0] == 0.0);
	free(t);
	free(f);
	free(s);
	ctmc_finish(&q);
}

/* Fox-Glynn weights against the pmf from lgamma, and its truncation bound. */
static void test_fox_glynn(void **state)
{
	const double lambdas[] = { 0.0, 0.3, 4.0, 57.5, 1e3, 2.5e5 };

	(void)state;
	for (size_t i = 0; i < sizeof(lambdas) / sizeof(lambdas[0]); i++) {
		struct ctmc_fg_weights fw;
		double lam = lambdas[i], kept = 0.0;

		assert_int_equal(ctmc_fg_compute(lam, 1e-12, &fw), 0);
		assert_true(fw.trunc_mass <= 1e-12);
		for (uint32_t k = fw.left; k <= fw.right; k++) {
			double want = lam == 0.0 ? (k == 0)
				: exp(k * log(lam) - lam - lgamma(k + 1.0));

			kept += want;
			/* Relative to the largest weights, normalisation included. */
			assert_true(fabs(fw.w[k - fw.left] - want) <=
				    1e-12 + 1e-9 * want);
		}
		/* The true mass outside the window is within the bound. */
		assert_true(1.0 - kept <= 1e-12 + 1e-9);
		if (lam > 100)
			assert_true(fw.right - fw.left < 20 * sqrt(lam));
		ctmc_fg_finish(&fw);
	}
	{
		struct ctmc_fg_weights fw;

		assert_int_equal(ctmc_fg_compute(-1.0, 1e-12, &fw), -EINVAL);
		assert_int_equal(ctmc_fg_compute(1.0, 0.0, &fw), -EINVAL);
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_gth_birth_death_relative),
	cmocka_unit_test(test_gth_equals_gauss_seidel),
	cmocka_unit_test(test_absorb_mean_lu_and_gs),
	cmocka_unit_test(test_absorb_unreachable),
	cmocka_unit_test(test_bad_rates_rejected),
	cmocka_unit_test(test_uniformization_vs_expm),
	cmocka_unit_test(test_mean_equals_survival_integral),
	cmocka_unit_test(test_fox_glynn),
)
