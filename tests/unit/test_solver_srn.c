// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stochastic reward nets: reachability and the generated CTMC on nets whose
 * chains are known by hand, error paths, and the closed CPU/disk network's
 * product-form steady state.
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

#include "solver/srn.h"
#include "solver/tagged.h"
#include "tests/unit/unit_main.h"

/* Rate of "move": 2.0 * tokens in place 0 (an infinite-server station). */
static double per_token(const int32_t *m, const void *ctx, int arg)
{
	const double *scale = ctx;

	return *scale * m[arg];
}

static double bad_rate(const int32_t *m, const void *ctx, int arg)
{
	(void)m;
	(void)arg;
	return *(const double *)ctx;
}

static bool even_only(const int32_t *m, const void *ctx, int arg)
{
	(void)ctx;
	return m[arg] % 2 == 0;
}

static int32_t everything(const int32_t *m, const void *ctx, uint32_t place)
{
	(void)ctx;
	return m[place];
}

static double rate_of(const struct srn_space *sp, uint32_t from, uint32_t to)
{
	const struct ctmc *q = &sp->chain;

	for (uint32_t e = q->row_ptr[from]; e < q->row_ptr[from + 1]; e++)
		if (q->col[e] == to)
			return q->rate[e];
	return 0.0;
}

/* Three tokens moving a -> b at 2 * #a, back b -> a at 1: 4 markings. */
static void test_explore_simple(void **state)
{
	struct srn_net net;
	struct srn_space sp;
	double scale = 2.0;
	int32_t m0[2] = { 3, 0 };
	int a, b, t;

	(void)state;
	srn_init(&net);
	a = srn_add_place(&net, "a", 3);
	b = srn_add_place(&net, "b", 0);
	t = srn_add_transition(&net, "move", per_token, 0.0, a);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_IN, a, 1, NULL), 0);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_OUT, b, 1, NULL), 0);
	t = srn_add_transition(&net, "back", NULL, 1.0, 0);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_IN, b, 1, NULL), 0);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_OUT, a, 1, NULL), 0);
	/* Arcs only for the last transition. */
	assert_int_equal(srn_add_arc(&net, 0, SRN_ARC_IN, a, 1, NULL), -EINVAL);
	assert_int_equal(srn_place_index(&net, "b"), b);

	assert_int_equal(srn_explore(&net, &scale, m0, 1, NULL, &sp), 0);
	assert_int_equal(sp.nstates, 4);
	assert_int_equal(sp.chain.nnz, 6);
	for (int32_t k = 0; k <= 3; k++) {
		int32_t m[2] = { 3 - k, k }, mn[2] = { 2 - k, k + 1 };
		int64_t i = srn_find(&sp, m), j;

		assert_true(i >= 0);
		if (k < 3) {
			j = srn_find(&sp, mn);
			assert_true(rate_of(&sp, i, j) == 2.0 * (3 - k));
			assert_true(rate_of(&sp, j, i) == 1.0);
		}
	}
	srn_space_finish(&sp);

	/* Limits and bad rates. */
	{
		struct srn_explore_opts o = { .max_states = 3 };

		assert_int_equal(srn_explore(&net, &scale, m0, 1, &o, &sp), -E2BIG);
		scale = -1.0;
		assert_int_equal(srn_explore(&net, &scale, m0, 1, NULL, &sp), -EDOM);
		scale = NAN;
		assert_int_equal(srn_explore(&net, &scale, m0, 1, NULL, &sp), -EDOM);
		m0[0] = -1;
		assert_int_equal(srn_explore(&net, &scale, m0, 1, NULL, &sp), -EINVAL);
	}
	srn_finish(&net);
}

/*
 * Inhibitor arc (a counter up to 5), a guard (drain only from even counts)
 * and a marking-dependent multiplicity (drain empties the place); several
 * initial markings with a duplicate.
 */
static void test_inhibitor_guard_mult(void **state)
{
	struct srn_net net;
	struct srn_space sp;
	double r = 4.0;
	int32_t init[3] = { 3, 0, 3 };
	int p, t;

	(void)state;
	srn_init(&net);
	p = srn_add_place(&net, "count", 0);
	t = srn_add_transition(&net, "up", bad_rate, 0.0, 0);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_OUT, p, 1, NULL), 0);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_INHIBIT, p, 5, NULL), 0);
	t = srn_add_transition(&net, "drain", NULL, 0.5, p);
	assert_int_equal(srn_add_arc(&net, t, SRN_ARC_IN, p, 0, everything), 0);
	assert_int_equal(srn_set_guard(&net, t, even_only), 0);

	assert_int_equal(srn_explore(&net, &r, init, 3, NULL, &sp), 0);
	/* 3 and 0 first (the duplicate 3 merged), then 4, 1, 5, 2. */
	assert_int_equal(sp.nstates, 6);
	assert_int_equal(srn_marking(&sp, 0)[0], 3);
	assert_int_equal(srn_marking(&sp, 1)[0], 0);
	for (int32_t c = 0; c <= 5; c++) {
		int32_t m = c, up = c + 1, zero = 0;
		int64_t i = srn_find(&sp, &m);

		assert_true(i >= 0);
		if (c < 5)
			assert_true(rate_of(&sp, i, srn_find(&sp, &up)) == 4.0);
		else
			assert_true(sp.chain.exit_rate[i] == (c % 2 ? 0.0 : 0.5));
		if (c % 2 == 0 && c > 0)
			assert_true(rate_of(&sp, i, srn_find(&sp, &zero)) == 0.5);
		if (c % 2)
			assert_true(rate_of(&sp, i, srn_find(&sp, &zero)) == 0.0);
	}
	/* 5 is odd and full: nothing enabled, absorbing. */
	{
		int32_t five = 5;

		assert_true(sp.chain.exit_rate[srn_find(&sp, &five)] == 0.0);
	}
	srn_space_finish(&sp);
	srn_finish(&net);
}

/* A larger net: the hash grows and every marking is found again. */
static void test_many_markings(void **state)
{
	struct srn_net net;
	struct srn_space sp;
	double scale = 1.0;
	int32_t m0[3] = { 60, 0, 0 };
	int t;

	(void)state;
	srn_init(&net);
	srn_add_place(&net, "x", 60);
	srn_add_place(&net, "y", 0);
	srn_add_place(&net, "z", 0);
	for (int i = 0; i < 3; i++) {
		t = srn_add_transition(&net, "mv", per_token, 0.0, i);
		srn_add_arc(&net, t, SRN_ARC_IN, i, 1, NULL);
		srn_add_arc(&net, t, SRN_ARC_OUT, (i + 1) % 3, 1, NULL);
	}
	assert_int_equal(srn_explore(&net, &scale, m0, 1, NULL, &sp), 0);
	assert_int_equal(sp.nstates, 61 * 62 / 2);	/* compositions of 60 in 3 */
	for (uint32_t i = 0; i < sp.nstates; i++) {
		const int32_t *m = srn_marking(&sp, i);

		assert_int_equal(m[0] + m[1] + m[2], 60);
		assert_int_equal(srn_find(&sp, m), i);
	}
	assert_true(srn_space_bytes(&sp) > sp.nstates * 3 * sizeof(int32_t));
	srn_space_finish(&sp);
	srn_finish(&net);
}

/*
 * The background of the uniprocessor net is a closed network: #C CPU-bound tasks
 * and i I/O-bound tasks share the PS CPU, I - i are at the FCFS disk. Its
 * product form is pi(i) ~ (mu_D / mu_P-I/O)^i binom(i + #C, i). I = 60
 * makes probabilities down to ~1e-40; GTH must get all of them to full
 * relative precision, and Gauss-Seidel to its tolerance.
 */
static void test_product_form(void **state)
{
	const struct tagged_rates r = { 4600.0, 1010.0, 41600.0 };
	const uint32_t C = 3, I = 60;
	struct tagged_model m;
	struct srn_space sp;
	struct ctmc_opts o;
	struct ctmc_stat st;
	long double *want = calloc(I + 1, sizeof(*want)), norm = 0.0L;
	double *pi;

	(void)state;
	for (uint32_t i = 0; i <= I; i++) {
		want[i] = expl(i * logl(1010.0L / 4600.0L) + lgammal(i + C + 1.0L) -
			       lgammal(i + 1.0L) - lgammal(C + 1.0L));
		norm += want[i];
	}
	assert_int_equal(tagged_seed_init(&m, C, I, &r), 0);
	assert_int_equal(srn_explore(&m.net, m.ctx, m.bg_initial, 1, NULL, &sp), 0);
	assert_int_equal(sp.nstates, I + 1);
	pi = malloc(sp.nstates * sizeof(*pi));
	ctmc_opts_default(&o);
	for (int meth = 0; meth < 2; meth++) {
		o.method = meth ? CTMC_METHOD_SOR : CTMC_METHOD_GTH;
		assert_int_equal(ctmc_steady_state(&sp.chain, &o, pi, &st), 0);
		for (uint32_t s = 0; s < sp.nstates; s++) {
			uint32_t i = (uint32_t)srn_marking(&sp, s)[1];	/* io_cpu */
			double w = (double)(want[i] / norm);
			double rel = fabs(pi[s] - w) / w;

			if (!(rel <= (meth ? 1e-10 : 1e-13))) {
				fprintf(stderr, "%s: pi(i=%u) %.17g want %.17g\n",
					meth ? "gs" : "gth", i, pi[s], w);
				fail();
			}
		}
	}
	assert_true((double)(want[I] / norm) < 1e-30);
	free(pi);
	free(want);
	srn_space_finish(&sp);
	tagged_model_finish(&m);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_explore_simple),
	cmocka_unit_test(test_inhibitor_guard_mult),
	cmocka_unit_test(test_many_markings),
	cmocka_unit_test(test_product_form),
)
