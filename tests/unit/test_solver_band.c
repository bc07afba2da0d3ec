// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The band reduction (solver/ctmc_band.h) against independent truths:
 * dense GTH on small random banded chains (every state, to 1e-14, with
 * probabilities far below 1e-12), the product form of birth-death chains
 * (closed form in long double, down to 1e-250), LAPACK LU and the pure
 * death chain's sum for the mean time to absorption; the structure
 * detection (a shuffled birth-death chain is found tridiagonal by
 * Cuthill-McKee, a quasi-birth-death chain block tridiagonal, a random
 * chain and the SMP net are left to Gauss-Seidel); and the absorption-time
 * distribution of solver/ctmc_dist.h on a reduced chain against whole-chain
 * uniformization (ctmc_transient(), a separate code path), including a
 * reduction that leaks and restarts.
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
#include "solver/ctmc_band.h"
#include "solver/ctmc_dist.h"
#include "solver/tagged.h"
#include "ctmc_fixture.h"
#include "tagged_fixture.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

/*
 * A random chain on n states whose rates i -> j are nonzero only for
 * -l <= j - i <= u, each present with probability 1/2 and of size
 * 10^(spread * (U - 1/2)); the neighbours i -> i+1 and i+1 -> i are always
 * there (irreducible). Upward rates are scaled by @up, so that the
 * probabilities fall (up < 1) geometrically with the state.
 */
static void build_banded(struct ctmc *q, uint32_t n, uint32_t l, uint32_t u,
			 double spread, double up, uint64_t seed)
{
	uint32_t cols[64];
	double rates[64];

	assert_true(l + u < 64);
	assert_int_equal(ctmc_init(q, n, n * (l + u)), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;

		for (uint32_t j = i > l ? i - l : 0; j <= i + u && j < n; j++) {
			bool must = j + 1 == i || j == i + 1;

			if (j == i || (!must && test_uniform(&seed) < 0.5))
				continue;
			cols[k] = j;
			rates[k] = pow(10.0, spread * (test_uniform(&seed) - 0.5)) *
				   (j > i ? up : 1.0);
			k++;
		}
		assert_int_equal(ctmc_add_row(q, cols, rates, k), 0);
	}
	assert_int_equal(ctmc_seal(q), 0);
}

static double *solve(const struct ctmc *q, enum ctmc_method m,
		     struct ctmc_stat *st)
{
	struct ctmc_opts o;
	double *pi = malloc(q->n * sizeof(*pi));

	ctmc_opts_default(&o);
	o.method = m;
	assert_non_null(pi);
	assert_int_equal(ctmc_steady_state(q, &o, pi, st), 0);
	assert_int_equal(st->method, m == CTMC_METHOD_AUTO ? st->method : m);
	return pi;
}

/* Band = dense GTH on every component, the tiny ones included. */
static void test_band_equals_gth(void **state)
{
	static const struct { uint32_t n, l, u; double spread, up; } cases[] = {
		{ 2, 1, 1, 2.0, 1.0 }, { 40, 1, 1, 4.0, 0.05 },
		{ 150, 3, 2, 6.0, 0.2 }, { 300, 6, 6, 8.0, 0.5 },
		{ 300, 9, 1, 3.0, 4.0 }, { 257, 1, 12, 2.0, 0.1 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ctmc q;
		struct ctmc_stat sb, sg;
		double *pb, *pg, smallest = 1.0;

		build_banded(&q, cases[c].n, cases[c].l, cases[c].u,
			     cases[c].spread, cases[c].up, 1000 + c);
		pb = solve(&q, CTMC_METHOD_BAND, &sb);
		pg = solve(&q, CTMC_METHOD_GTH, &sg);
		assert_true(sb.band_lower <= cases[c].l &&
			    sb.band_upper <= cases[c].u);
		for (uint32_t i = 0; i < q.n; i++) {
			char what[48];

			snprintf(what, sizeof(what), "case %zu pi[%u]", c, i);
			check_rel(pb[i], pg[i], 1e-14, what);
			assert_true(pb[i] > 0.0);
			if (pb[i] < smallest)
				smallest = pb[i];
		}
		/* The chains with a downward pull reach far below 1e-12. */
		if (cases[c].up <= 0.1 && cases[c].n > 2)
			assert_true(smallest < 1e-30);
		assert_true(sb.residual < 1e-14);
		assert_true(sb.err_bound > 0.0 && sb.err_bound < 1e-9);
		free(pb);
		free(pg);
		ctmc_finish(&q);
	}
}

/*
 * A birth-death chain with state-dependent rates, b_i = 3 + sin(i) and
 * d_i = 6 i / (i + 50): pi_i is proportional to prod_{k<i} b_k / d_{k+1},
 * computed here in long double logarithms. Large enough for AUTO to pick
 * the band; probabilities from ~1 down past 1e-300. @mirror numbers the
 * states from the other end, so that the reduction's back substitution
 * starts from the least likely state and climbs past the double range
 * (the rescaling path).
 */
static void check_birth_death(bool mirror)
{
	const uint32_t n = 3000;
	struct ctmc q;
	struct ctmc_stat st;
	long double *lw = malloc(n * sizeof(*lw)), lmax = -INFINITY, lsum = 0;
	double *pi, smallest = 1.0;
	uint32_t below = 0;

	assert_int_equal(ctmc_init(&q, n, 2 * n), 0);
	for (uint32_t s = 0; s < n; s++) {
		uint32_t i = mirror ? n - 1 - s : s, cols[2], k = 0;
		double rates[2];

		if (i > 0)
			cols[k] = mirror ? s + 1 : s - 1, rates[k++] = 6.0 * i / (i + 50.0);
		if (i + 1 < n)
			cols[k] = mirror ? s - 1 : s + 1, rates[k++] = 3.0 + sin((double)i);
		assert_int_equal(ctmc_add_row(&q, cols, rates, k), 0);
	}
	assert_int_equal(ctmc_seal(&q), 0);
	lw[0] = 0.0L;
	for (uint32_t i = 1; i < n; i++) {
		/* The doubles the chain holds, multiplied in long double. */
		double b = 3.0 + sin((double)(i - 1)), d = 6.0 * i / (i + 50.0);

		lw[i] = lw[i - 1] + logl((long double)b) - logl((long double)d);
	}
	for (uint32_t i = 0; i < n; i++)
		if (lw[i] > lmax)
			lmax = lw[i];
	for (uint32_t i = 0; i < n; i++)
		lsum += expl(lw[i] - lmax);
	pi = solve(&q, CTMC_METHOD_AUTO, &st);
	assert_int_equal(st.method, CTMC_METHOD_BAND);
	assert_int_equal(st.band_lower, 1);
	assert_int_equal(st.band_upper, 1);
	for (uint32_t i = 0; i < n; i++) {
		double want = (double)(expl(lw[i] - lmax) / lsum);
		double got = pi[mirror ? n - 1 - i : i];
		char what[48];

		if (want < DBL_MIN)
			continue;
		snprintf(what, sizeof(what), "%spi[%u]", mirror ? "mirrored " : "", i);
		/* Within the a-priori bound it reports, and far better. */
		check_rel(got, want, 1e-12, what);
		check_rel(got, want, st.err_bound, what);
		below += want < 1e-12;
		smallest = fmin(smallest, got);
	}
	assert_true(below > 500);
	assert_true(smallest < 1e-300);
	free(pi);
	free(lw);
	ctmc_finish(&q);
}

static void test_birth_death_product_form(void **state)
{
	(void)state;
	check_birth_death(false);
	check_birth_death(true);
}

/* Rates spanning 1e-9 .. 1e9 in no order. */
static double death_spread(uint32_t i, uint32_t n)
{
	return pow(10.0, 18.0 * ((i * 7919) % n) / n - 9.0);
}

/* The pure death chain of 2000 states at death_spread(): by the band. */
static void test_absorb_death_chain(void **state)
{
	struct ctmc_stat st;

	(void)state;
	ctmc_fixture_death(2000, death_spread, CTMC_METHOD_AUTO, 1e-14, &st);
	assert_int_equal(st.method, CTMC_METHOD_BAND);
}

/* Band absorption = LAPACK LU on small birth-death chains with killing. */
static void test_absorb_band_equals_lu(void **state)
{
	(void)state;
	for (uint32_t n = 3; n <= 300; n = n * 3 + 1) {
		struct ctmc q;
		struct ctmc_opts o;
		struct ctmc_stat sb, sl;
		double *alpha = calloc(n + 1, sizeof(*alpha));
		double *tb = malloc((n + 1) * sizeof(*tb));
		double *tl = malloc((n + 1) * sizeof(*tl));
		double mb, ml;
		uint64_t seed = n;

		/* States 0..n-1 transient, n absorbing, killing from each. */
		assert_int_equal(ctmc_init(&q, n + 1, 3 * n), 0);
		for (uint32_t i = 0; i <= n; i++) {
			uint32_t cols[3];
			double rates[3];
			uint32_t k = 0;

			if (i < n && i > 0)
				cols[k] = i - 1, rates[k++] = 1.0 + 100.0 * test_uniform(&seed);
			if (i + 1 < n)
				cols[k] = i + 1, rates[k++] = 1.0 + 100.0 * test_uniform(&seed);
			if (i < n)
				cols[k] = n, rates[k++] = 0.01 + test_uniform(&seed);
			assert_int_equal(ctmc_add_row(&q, cols, rates, k), 0);
			if (i < n)
				alpha[i] = test_uniform(&seed);
		}
		assert_int_equal(ctmc_seal(&q), 0);
		ctmc_opts_default(&o);
		o.method = CTMC_METHOD_BAND;
		assert_int_equal(ctmc_absorb_mean(&q, alpha, &o, &mb, tb, &sb), 0);
		o.method = CTMC_METHOD_LU;
		assert_int_equal(ctmc_absorb_mean(&q, alpha, &o, &ml, tl, &sl), 0);
		assert_int_equal(sb.method, CTMC_METHOD_BAND);
		assert_true(sb.band_lower == 1 && sb.band_upper == 1);
		for (uint32_t i = 0; i < n; i++)
			check_rel(tb[i], tl[i], 1e-12, "tau band vs lu");
		check_rel(mb, ml, 1e-12, "mean band vs lu");
		assert_true(sb.residual < 1e-14);
		free(alpha);
		free(tb);
		free(tl);
		ctmc_finish(&q);
	}
}

/* ------------------------------------------------------------ detection -- */

/* A birth-death chain whose states are numbered in a random order. */
static void test_detect_shuffled(void **state)
{
	const uint32_t n = 1500;
	uint32_t *perm = malloc(n * sizeof(*perm));
	struct ctmc q, qs;
	struct ctmc_stat st, sts;
	double *pi, *pis;
	uint64_t seed = 99;

	(void)state;
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(test_uniform(&seed) * (i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	build_banded(&q, n, 1, 1, 3.0, 0.3, 5);
	/* State perm[i] of qs is state i of q. */
	assert_int_equal(ctmc_init(&qs, n, 2 * n), 0);
	{
		uint32_t *inv = malloc(n * sizeof(*inv));

		for (uint32_t i = 0; i < n; i++)
			inv[perm[i]] = i;
		for (uint32_t s = 0; s < n; s++) {
			uint32_t i = inv[s], cols[2], k = 0;
			double rates[2];

			for (uint32_t e = q.row_ptr[i]; e < q.row_ptr[i + 1]; e++) {
				cols[k] = perm[q.col[e]];
				rates[k++] = q.rate[e];
			}
			assert_int_equal(ctmc_add_row(&qs, cols, rates, k), 0);
		}
		free(inv);
	}
	assert_int_equal(ctmc_seal(&qs), 0);
	pi = solve(&q, CTMC_METHOD_AUTO, &st);
	pis = solve(&qs, CTMC_METHOD_AUTO, &sts);
	assert_int_equal(st.method, CTMC_METHOD_BAND);
	assert_int_equal(sts.method, CTMC_METHOD_BAND);
	/* Cuthill-McKee from an end of the path numbers it in order. */
	assert_int_equal(sts.band_lower, 1);
	assert_int_equal(sts.band_upper, 1);
	for (uint32_t i = 0; i < n; i++)
		if (pi[i] >= DBL_MIN)
			check_rel(pis[perm[i]], pi[i], 1e-13, "shuffled");
	free(pi);
	free(pis);
	free(perm);
	ctmc_finish(&q);
	ctmc_finish(&qs);
}

/*
 * A quasi-birth-death chain: levels of 4 phases, level moves +-1 with
 * phase changes inside and between neighbouring levels. Block tridiagonal:
 * bandwidth below 2 x 4; Gauss-Seidel agrees.
 */
static void test_detect_qbd(void **state)
{
	const uint32_t levels = 400, ph = 4, n = levels * ph;
	struct ctmc q;
	struct ctmc_stat sb, sg;
	double *pb, *pg;
	uint64_t seed = 7;

	(void)state;
	assert_int_equal(ctmc_init(&q, n, n * 12), 0);
	for (uint32_t s = 0; s < n; s++) {
		uint32_t lv = s / ph, cols[12], k = 0;
		double rates[12];

		for (uint32_t to = 0; to < n; to++) {
			uint32_t tl = to / ph;

			if (to == s || tl + 1 < lv || tl > lv + 1)
				continue;
			if (tl == lv || test_uniform(&seed) < 0.6) {
				cols[k] = to;
				rates[k++] = (tl < lv ? 2.0 : 1.0) *
					     (0.2 + test_uniform(&seed));
			}
		}
		assert_int_equal(ctmc_add_row(&q, cols, rates, k), 0);
	}
	assert_int_equal(ctmc_seal(&q), 0);
	pb = solve(&q, CTMC_METHOD_AUTO, &sb);
	assert_int_equal(sb.method, CTMC_METHOD_BAND);
	assert_true(sb.band_lower < 2 * ph && sb.band_upper < 2 * ph);
	pg = solve(&q, CTMC_METHOD_SOR, &sg);
	for (uint32_t i = 0; i < n; i++)
		if (pb[i] > 1e-200)
			check_rel(pg[i], pb[i], 1e-9, "qbd gs vs band");
	free(pb);
	free(pg);
	ctmc_finish(&q);
}

/* No order makes these narrow: the automatic choice stays iterative. */
static void test_detect_wide(void **state)
{
	const uint32_t n = 2000;
	double *a = NULL;
	struct ctmc q;
	struct ctmc_stat st;
	uint64_t seed = 3;
	double *pi;

	(void)state;
	/* A ring plus random long-range rates. */
	assert_int_equal(ctmc_init(&q, n, 4 * n), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cols[4] = { (i + 1) % n };
		double rates[4] = { 1.0 };

		for (int k = 1; k < 4; k++) {
			cols[k] = (uint32_t)(test_uniform(&seed) * n);
			rates[k] = test_uniform(&seed) + 0.1;
		}
		assert_int_equal(ctmc_add_row(&q, cols, rates, 4), 0);
	}
	assert_int_equal(ctmc_seal(&q), 0);
	pi = solve(&q, CTMC_METHOD_AUTO, &st);
	assert_int_equal(st.method, CTMC_METHOD_SOR);
	free(pi);
	free(a);
	ctmc_finish(&q);
	/* The SMP net's chains too; the one-CPU net's are tridiagonal. */
	{
		const struct tagged_rates r = { 4600.0, 1010.0, 41600.0 };
		struct tagged_smp_params p = {
			.ncpus = 3, .cpu_bound = 4, .io_bound = 6, .rates = r,
			.migrate_per_s = 1000.0,
		};
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;

		tagged_fixture_smp(&m, &p, &ch, &res);
		assert_int_equal(res.steady.method, CTMC_METHOD_SOR);
		assert_int_equal(res.absorb.method, CTMC_METHOD_SOR);
		tagged_fixture_finish(&m, &ch);
		tagged_fixture_seed(&m, 30, 900, &r, &ch, &res);
		assert_int_equal(res.steady.method, CTMC_METHOD_BAND);
		assert_int_equal(res.absorb.method, CTMC_METHOD_BAND);
		assert_int_equal(res.steady.band_lower, 1);
		assert_int_equal(res.absorb.band_upper, 1);
		tagged_fixture_finish(&m, &ch);
	}
}

/* ------------------------------------------- absorption-time distribution -- */

/* |F from ctmc_dist - F from ctmc_transient| within both error bounds. */
static void check_dist_vs_transient(const struct ctmc *q, const double *alpha,
				    const double *t, uint32_t nt,
				    struct ctmc_dist *d)
{
	double *pt = malloc(q->n * sizeof(*pt));

	for (uint32_t k = 0; k < nt; k++) {
		struct ctmc_stat st;
		double s, bound, mass = 0.0;

		assert_int_equal(ctmc_dist_survival(d, t[k], &s, &bound), 0);
		assert_int_equal(ctmc_transient(q, alpha, t[k], 1e-13, pt, &st), 0);
		for (uint32_t i = 0; i < q->n; i++)
			if (q->exit_rate[i] > 0.0)
				mass += pt[i];
		if (!(fabs(s - mass) <= bound + st.err_bound + 1e-13)) {
			fprintf(stderr, "t %g: dist %.15g transient %.15g bounds %g %g\n",
				t[k], s, mass, bound, st.err_bound);
			fail();
		}
		assert_true(bound < 1e-11);
	}
	free(pt);
}

/*
 * The tagged chain of the one-CPU net: the pass runs on a reduced chain
 * (fewer states, a lower uniformization rate) and every F agrees with
 * whole-chain uniformization within the bounds; the quantiles equal those
 * of a whole-chain pass per evaluation to the bisection's 1e-6.
 */
static void test_dist_reduced(void **state)
{
	const struct tagged_rates r = { 4600.0, 1010.0, 41600.0 };
	static const double ps[3] = { 0.5, 0.9, 0.99 };
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	struct ctmc_dist d;
	double t[6], tq[3];

	(void)state;
	tagged_fixture_seed(&m, 400, 800, &r, &ch, &res);
	assert_int_equal(ctmc_dist_init(&d, &ch.tag.chain, ch.alpha, 1e-12, 0), 0);
	assert_true(d.reduced);
	assert_true(d.q->n < ch.tag.nstates / 2);
	assert_true(d.lambda < ctmc_max_exit_rate(&ch.tag.chain));
	for (int k = 0; k < 6; k++)
		t[k] = res.mean_response_s * (0.1 + 1.3 * k);
	check_dist_vs_transient(&ch.tag.chain, ch.alpha, t, 6, &d);
	assert_int_equal(d.restarts, 0);
	ctmc_dist_finish(&d);

	assert_int_equal(tagged_quantiles(&ch, ps, 3, res.mean_response_s, tq), 0);
	for (int j = 0; j < 3; j++) {
		double f[1], lo = tq[j] * (1 - 1e-6), hi = tq[j] * (1 + 1e-6);
		struct ctmc_stat st;
		double *pt = malloc(ch.tag.nstates * sizeof(*pt));

		/* F(lo) < p <= F(hi) by whole-chain uniformization. */
		assert_int_equal(ctmc_transient(&ch.tag.chain, ch.alpha, lo, 1e-13,
						pt, &st), 0);
		f[0] = pt[ch.absorbed];
		assert_true(f[0] < ps[j] + 1e-11);
		assert_int_equal(ctmc_transient(&ch.tag.chain, ch.alpha, hi, 1e-13,
						pt, &st), 0);
		assert_true(pt[ch.absorbed] >= ps[j] - 1e-11);
		free(pt);
	}
	tagged_fixture_finish(&m, &ch);
}

/*
 * alpha on state 0 of a chain that drifts upwards before absorption at
 * the top: the reduced chain keeps state 0 only, its trap fills at once,
 * and the pass restarts on the whole chain; the results stay exact.
 */
static void test_dist_restart(void **state)
{
	const uint32_t n = 60;
	struct ctmc q;
	struct ctmc_dist d;
	double *alpha = calloc(n + 1, sizeof(*alpha)), t[4] = { 0.5, 2, 5, 12 };

	(void)state;
	assert_int_equal(ctmc_init(&q, n + 1, 3 * n), 0);
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t cols[2];
		double rates[2];
		uint32_t k = 0;

		if (i < n)
			cols[k] = i + 1, rates[k++] = 20.0;
		if (i > 0 && i < n)
			cols[k] = i - 1, rates[k++] = 5.0;
		assert_int_equal(ctmc_add_row(&q, cols, rates, k), 0);
	}
	assert_int_equal(ctmc_seal(&q), 0);
	alpha[0] = 1.0;
	assert_int_equal(ctmc_dist_init(&d, &q, alpha, 1e-12, 0), 0);
	assert_true(d.reduced);
	check_dist_vs_transient(&q, alpha, t, 4, &d);
	assert_int_equal(d.restarts, 1);
	assert_false(d.reduced);
	ctmc_dist_finish(&d);
	free(alpha);
	ctmc_finish(&q);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_band_equals_gth),
	cmocka_unit_test(test_birth_death_product_form),
	cmocka_unit_test(test_absorb_death_chain),
	cmocka_unit_test(test_absorb_band_equals_lu),
	cmocka_unit_test(test_detect_shuffled),
	cmocka_unit_test(test_detect_qbd),
	cmocka_unit_test(test_detect_wide),
	cmocka_unit_test(test_dist_reduced),
	cmocka_unit_test(test_dist_restart),
)
