// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * solver/ewma: the decay factor against exp(), a decayed ratio against a
 * hand computation and against explicit weights summed afresh, and the
 * rules around it (minimum weight, bad epochs, idle decay, reset, set);
 * the recent maximum against brute force.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "solver/ewma.h"
#include "tests/unit/unit_main.h"

static void test_decay(void **state)
{
	(void)state;
	/* One time constant: 1 / e; two: 1 / e^2. */
	assert_true(fabs(ewma_decay(5.0, 5.0) - 0.36787944117144233) < 1e-16);
	assert_true(fabs(ewma_decay(0.25, 0.125) - 0.1353352832366127) < 1e-16);
	/* Nothing elapsed, or nonsense: no decay. */
	assert_true(ewma_decay(0, 5.0) == 1.0);
	assert_true(ewma_decay(-1, 5.0) == 1.0);
	assert_true(ewma_decay(NAN, 5.0) == 1.0);
	assert_true(ewma_decay(INFINITY, 5.0) == 1.0);
}

/* Three epochs by hand: (10, 2), (30, 3) at d = 0.5, then (6, 1) at d = 0.25. */
static void test_ratio_by_hand(void **state)
{
	struct ewma_ratio r = { 0 };

	(void)state;
	ewma_ratio_add(&r, 0.5, 10, 2, 4);
	/* den 2 < 4: not yet an estimate. */
	assert_false(r.ok);
	assert_true(isnan(ewma_ratio_value(&r)));
	ewma_ratio_add(&r, 0.5, 30, 3, 4);
	/* num 10 * 0.5 + 30 = 35, den 2 * 0.5 + 3 = 4. */
	assert_true(r.ok);
	assert_true(ewma_ratio_value(&r) == 35.0 / 4.0);
	ewma_ratio_add(&r, 0.25, 6, 1, 4);
	/* num 35 / 4 + 6 = 14.75, den 4 / 4 + 1 = 2: qualified stays so. */
	assert_true(r.ok);
	assert_true(ewma_ratio_value(&r) == 14.75 / 2.0);
}

/*
 * A random series: the recursion against sum_i d^(N-1-i) num_i /
 * sum_i d^(N-1-i) den_i computed from the weights directly.
 */
static void test_ratio_weights(void **state)
{
	struct ewma_ratio r = { 0 };
	double num[200], den[200], d = exp(-0.25 / 5.0);
	uint64_t st = 7;

	(void)state;
	for (int i = 0; i < 200; i++) {
		st = st * 6364136223846793005ULL + 1442695040888963407ULL;
		den[i] = (double)(st >> 40);
		num[i] = den[i] * (1000 + (double)(st >> 54));
		ewma_ratio_add(&r, d, num[i], den[i], 64);
	}
	{
		double sn = 0, sd = 0;

		for (int i = 0; i < 200; i++) {
			double w = pow(d, 199 - i);

			sn += w * num[i];
			sd += w * den[i];
		}
		assert_true(fabs(ewma_ratio_value(&r) - sn / sd) <= 1e-12 * (sn / sd));
		assert_true(fabs(r.den - sd) <= 1e-12 * sd);
	}
}

static void test_ratio_rules(void **state)
{
	struct ewma_ratio r = { 0 };
	double v;

	(void)state;
	ewma_ratio_add(&r, 1, 500, 100, 64);
	v = ewma_ratio_value(&r);
	assert_true(v == 5.0);
	/* Bad epochs add nothing but still decay the sums. */
	ewma_ratio_add(&r, 0.5, NAN, 10, 64);
	ewma_ratio_add(&r, 1, 10, -1, 64);
	ewma_ratio_add(&r, 1, -10, 1, 64);
	ewma_ratio_add(&r, 1, INFINITY, 1, 64);
	assert_true(r.den == 50 && r.num == 250);
	/* Decay alone (an idle flow) keeps the value, even below the
	 * minimum weight. */
	for (int i = 0; i < 20; i++)
		ewma_ratio_add(&r, 0.5, 0, 0, INFINITY);
	assert_true(r.den < 1e-3);
	assert_true(ewma_ratio_value(&r) == v);
	/* Reset: nothing known until the minimum weight again. */
	ewma_ratio_reset(&r);
	assert_true(isnan(ewma_ratio_value(&r)));
	ewma_ratio_add(&r, 1, 63 * 7, 63, 64);
	assert_true(isnan(ewma_ratio_value(&r)));
	/* Set: the value at once, with the weight given; 64 fresh packets
	 * at 1 then weigh as much. */
	ewma_ratio_set(&r, 3, 64);
	assert_true(ewma_ratio_value(&r) == 3);
	ewma_ratio_add(&r, 1, 64, 64, 64);
	assert_true(ewma_ratio_value(&r) == 2);
	/* A zero weight is no estimate. */
	ewma_ratio_set(&r, 3, 0);
	assert_true(isnan(ewma_ratio_value(&r)));
}

/*
 * The recent maximum against brute force: every epoch's value with its
 * weight recomputed as the product of the decays since, the largest of
 * those still weighing the minimum. Exact until the list is full; never
 * below it after.
 */
static void test_max_brute(void **state)
{
	enum { N = 3000 };
	static double val[N], wt[N];
	struct ewma_max m = { 0 };
	unsigned int seed = 12345;
	bool was_full = false;
	int exact = 0;

	(void)state;
	for (int e = 0; e < N; e++) {
		double d = 0.5 + 0.5 * rand_r(&seed) / (double)RAND_MAX, truth = 0;
		int kind = rand_r(&seed) % 10;

		/* Some epochs without a value, one not a number. */
		val[e] = kind == 0 ? 0 : kind == 1 ? NAN : 1 + rand_r(&seed) % 1000;
		for (int i = 0; i < e; i++)
			wt[i] *= d;
		wt[e] = 1;
		ewma_max_add(&m, d, val[e], 0.05);
		for (int i = 0; i <= e; i++)
			if (wt[i] >= 0.05 && val[i] > truth)
				truth = val[i];
		was_full |= m.n == EWMA_MAX_KEEP;
		if (!was_full) {
			assert_true(ewma_max_value(&m) == truth);
			exact++;
		}
		assert_true(ewma_max_value(&m) >= truth);
	}
	assert_true(exact > 100);
}

/* The rules: empty, idle decay, a full list. */
static void test_max_rules(void **state)
{
	struct ewma_max m = { 0 };

	(void)state;
	assert_true(ewma_max_value(&m) == 0);
	ewma_max_add(&m, 1, 5, 0.05);
	ewma_max_add(&m, 0.5, 3, 0.05);
	assert_true(ewma_max_value(&m) == 5);
	/* Epochs without a value: 5 (weight 0.5 when 3 came) ages out
	 * first. */
	for (int i = 0; i < 3; i++)
		ewma_max_add(&m, 0.5, 0, 0.05);
	assert_true(ewma_max_value(&m) == 5);	/* 0.0625 */
	ewma_max_add(&m, 0.5, NAN, 0.05);
	assert_true(ewma_max_value(&m) == 3);	/* 0.03125 and 0.0625 */
	ewma_max_add(&m, 0.5, 0, 0.05);
	assert_true(ewma_max_value(&m) == 0);
	/* Ten decreasing values, no decay: the list holds eight; the ninth
	 * and tenth leave the newest held (3) with their weight. */
	for (int v = 10; v >= 1; v--)
		ewma_max_add(&m, 1, v, 0.05);
	assert_int_equal(m.n, EWMA_MAX_KEEP);
	assert_true(m.v[0] == 10 && m.v[EWMA_MAX_KEEP - 1] == 3);
	/* A larger value replaces all that are no larger. */
	ewma_max_add(&m, 1, 7, 0.05);
	assert_int_equal(m.n, 4);
	assert_true(m.v[3] == 7 && ewma_max_value(&m) == 10);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_decay),
	cmocka_unit_test(test_ratio_by_hand),
	cmocka_unit_test(test_ratio_weights),
	cmocka_unit_test(test_ratio_rules),
	cmocka_unit_test(test_max_brute),
	cmocka_unit_test(test_max_rules),
)
