// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tagged-customer analysis against closed forms: with no I/O-bound tasks R
 * is exponential with rate mu_P-Net / (#C + 1); with one I/O-bound task the
 * 2-state transient chain is solved by hand; fractional counts follow the
 * documented bilinear rule; the SMP net reduces to the uniprocessor net on one CPU
 * and to a closed form without migration; GS and dense paths agree.
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
#include <cmocka.h>

#include "tests/unit/check_rel.h"
#include "tests/unit/tagged_fixture.h"
#include "solver/tagged.h"
#include "tests/unit/unit_main.h"

static const struct tagged_rates table2 = { 4600.0, 1010.0, 41600.0 };

/* #I = 0: PS with #C + 1 customers, R ~ Exp(mu / (#C + 1)). */
static void test_cpu_bound_only(void **state)
{
	(void)state;
	for (uint32_t C = 0; C <= 6; C++) {
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;
		double rate = table2.mu_net_per_s / (C + 1), t[4], f[4], q;
		struct ctmc_stat st;

		tagged_fixture_seed(&m, C, 0, &table2, &ch, &res);
		check_rel(res.mean_response_s, 1.0 / rate, 1e-14, "E[R]");
		check_rel(res.service_rate_per_s, rate, 1e-14, "mu");
		assert_int_equal(res.bg_states, 1);
		assert_int_equal(res.tag_states, 2);
		for (int k = 0; k < 4; k++)
			t[k] = (0.1 + k) / rate;
		assert_int_equal(tagged_cdf(&ch, t, 4, 1e-13, f, &st), 0);
		for (int k = 0; k < 4; k++)
			assert_true(fabs(f[k] + expm1(-rate * t[k])) < 1e-12);
		assert_int_equal(tagged_quantile(&ch, 0.9, res.mean_response_s, &q), 0);
		check_rel(q, log(10.0) / rate, 2e-6, "p90");
		tagged_fixture_finish(&m, &ch);
	}
}

/*
 * #I = 1. Background: io at the CPU (i = 1) or at the disk (i = 0);
 * pi_1 = mu_D / (mu_D + mu_P/(1+C)). Tagged chain from (i, tag):
 *   (1): to disk at a = mu_P/(C+2), done at b1 = mu_N/(C+2)
 *   (0): disk done at mu_D, done at b0 = mu_N/(C+1)
 * tau_1 (a + b1) - a tau_0 = 1, -mu_D tau_1 + (mu_D + b0) tau_0 = 1.
 */
static void test_one_io_task_by_hand(void **state)
{
	(void)state;
	for (uint32_t C = 0; C <= 4; C++) {
		double mp = table2.mu_pio_per_s, md = table2.mu_disk_per_s;
		double mn = table2.mu_net_per_s;
		double pi1 = md / (md + mp / (1 + C)), pi0 = 1.0 - pi1;
		double a = mp / (C + 2), b1 = mn / (C + 2), b0 = mn / (C + 1);
		double det = (a + b1) * (md + b0) - a * md;
		double tau1 = (md + b0 + a) / det, tau0 = (a + b1 + md) / det;
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;

		tagged_fixture_seed(&m, C, 1, &table2, &ch, &res);
		check_rel(res.mean_response_s, pi1 * tau1 + pi0 * tau0, 1e-13,
			  "E[R] with one I/O task");
		assert_int_equal(res.bg_states, 2);
		assert_int_equal(res.tag_states, 3);	/* + the absorbing one */
		assert_true(res.rel_err < 1e-12);
		tagged_fixture_finish(&m, &ch);
	}
}

/* E[R] is the integral of 1 - F(t) on the tagged chain too. */
static void test_mean_equals_integral(void **state)
{
	const uint32_t grid = 8001;
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	struct ctmc_stat st;
	double *t = malloc(grid * sizeof(*t)), *f = malloc(grid * sizeof(*f));
	double h, integral = 0.0;

	(void)state;
	tagged_fixture_seed(&m, 2, 3, &table2, &ch, &res);
	h = 30.0 * res.mean_response_s / (grid - 1);
	for (uint32_t i = 0; i < grid; i++)
		t[i] = i * h;
	assert_int_equal(tagged_cdf(&ch, t, grid, 1e-14, f, &st), 0);
	for (uint32_t i = 0; i < grid; i++)
		integral += (1.0 - f[i]) * (i == 0 || i == grid - 1 ? 1 : (i % 2 ? 4 : 2));
	integral *= h / 3.0;
	check_rel(integral, res.mean_response_s, 1e-9, "integral");
	free(t);
	free(f);
	tagged_fixture_finish(&m, &ch);
}

/* The rate falls as tasks are added, CPU-bound ones hurt more. */
static void test_monotone(void **state)
{
	double prev_c = INFINITY;

	(void)state;
	for (uint32_t C = 0; C <= 4; C++) {
		double prev_i = INFINITY, mu_c0 = 0.0;

		for (uint32_t I = 0; I <= 3; I++) {
			struct tagged_result res;

			assert_int_equal(tagged_seed_mean(C, I, &table2, NULL, &res), 0);
			assert_true(res.service_rate_per_s < prev_i);
			prev_i = res.service_rate_per_s;
			if (I == 0)
				mu_c0 = res.service_rate_per_s;
			if (I == 1) {
				struct tagged_result more_c;

				assert_int_equal(tagged_seed_mean(C + 1, 0, &table2,
								  NULL, &more_c), 0);
				assert_true(more_c.service_rate_per_s <
					    res.service_rate_per_s);
			}
		}
		assert_true(mu_c0 < prev_c);
		prev_c = mu_c0;
	}
}

/* Fractional counts: bilinear interpolation of E[R] between integer nets. */
static void test_fractional(void **state)
{
	struct tagged_result r, c[4];

	(void)state;
	/* Exactly linear in #C when #I = 0. */
	assert_int_equal(tagged_seed_mean(1.5, 0.0, &table2, NULL, &r), 0);
	check_rel(r.mean_response_s, 2.5 / table2.mu_net_per_s, 1e-14, "C 1.5");
	/* Integers are the nets themselves. */
	assert_int_equal(tagged_seed_mean(2.0, 3.0, &table2, NULL, &r), 0);
	{
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result d;

		tagged_fixture_seed(&m, 2, 3, &table2, &ch, &d);
		assert_true(r.mean_response_s == d.mean_response_s);
		tagged_fixture_finish(&m, &ch);
	}
	/* (2.25, 1.5) from the four corners. */
	assert_int_equal(tagged_seed_mean(2, 1, &table2, NULL, &c[0]), 0);
	assert_int_equal(tagged_seed_mean(3, 1, &table2, NULL, &c[1]), 0);
	assert_int_equal(tagged_seed_mean(2, 2, &table2, NULL, &c[2]), 0);
	assert_int_equal(tagged_seed_mean(3, 2, &table2, NULL, &c[3]), 0);
	assert_int_equal(tagged_seed_mean(2.25, 1.5, &table2, NULL, &r), 0);
	check_rel(r.mean_response_s,
		  0.75 * 0.5 * c[0].mean_response_s + 0.25 * 0.5 * c[1].mean_response_s +
		  0.75 * 0.5 * c[2].mean_response_s + 0.25 * 0.5 * c[3].mean_response_s,
		  1e-14, "bilinear");
	check_rel(r.service_rate_per_s, 1.0 / r.mean_response_s, 1e-15, "mu");
	/* Between its neighbours, and continuous at the integers. */
	assert_true(r.mean_response_s > c[0].mean_response_s &&
		    r.mean_response_s < c[3].mean_response_s);
	assert_int_equal(tagged_seed_mean(2.999999999, 1.0, &table2, NULL, &r), 0);
	check_rel(r.mean_response_s, c[1].mean_response_s, 1e-8, "continuity");
	assert_int_equal(tagged_seed_mean(-0.5, 1.0, &table2, NULL, &r), -EINVAL);
	assert_int_equal(tagged_seed_mean(NAN, 1.0, &table2, NULL, &r), -EINVAL);
	assert_int_equal(tagged_seed_mean(1e9, 1.0, &table2, NULL, &r), -E2BIG);
}

/* The SMP net on one CPU is the uniprocessor net. */
static void test_smp_one_cpu(void **state)
{
	(void)state;
	for (uint32_t C = 0; C <= 3; C++) {
		for (uint32_t I = 0; I <= 4; I += 2) {
			struct tagged_smp_params p = {
				.ncpus = 1, .cpu_bound = C, .io_bound = I,
				.rates = table2, .migrate_per_s = 500.0,
			};
			struct tagged_model m;
			struct tagged_chain ch;
			struct tagged_result smp, seed;

			tagged_fixture_smp(&m, &p, &ch, &smp);
			assert_int_equal(tagged_seed_mean(C, I, &table2, NULL, &seed), 0);
			check_rel(smp.mean_response_s, seed.mean_response_s, 1e-13,
				  "smp P=1");
			tagged_fixture_finish(&m, &ch);
		}
	}
}

/* Two CPUs, no balancing, no I/O: CPU 0 keeps ceil(C/2) CPU-bound tasks. */
static void test_smp_pinned(void **state)
{
	(void)state;
	for (uint32_t C = 0; C <= 5; C++) {
		struct tagged_smp_params p = {
			.ncpus = 2, .cpu_bound = C, .io_bound = 0,
			.rates = table2, .migrate_per_s = 0.0,
		};
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;

		tagged_fixture_smp(&m, &p, &ch, &res);
		check_rel(res.mean_response_s,
			  ((C + 1) / 2 + 1) / table2.mu_net_per_s, 1e-14, "pinned");
		tagged_fixture_finish(&m, &ch);
	}
}

/* A few thousand states: the iterative and the dense paths agree. */
static void test_smp_methods_agree(void **state)
{
	struct tagged_smp_params p = {
		.ncpus = 3, .cpu_bound = 4, .io_bound = 6,
		.rates = table2, .migrate_per_s = 1000.0,
	};
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result dense, iter;
	struct ctmc_opts o;

	(void)state;
	assert_int_equal(tagged_smp_init(&m, &p), 0);
	ctmc_opts_default(&o);
	o.dense_max = 100000;	/* GTH + LU */
	assert_int_equal(tagged_analyze(&m, &o, &ch, &dense), 0);
	assert_int_equal(dense.steady.method, CTMC_METHOD_GTH);
	assert_int_equal(dense.absorb.method, CTMC_METHOD_LU);
	assert_true(dense.bg_states > 1000);
	tagged_chain_finish(&ch);
	o.dense_max = 10;	/* Gauss-Seidel both */
	assert_int_equal(tagged_analyze(&m, &o, &ch, &iter), 0);
	assert_int_equal(iter.steady.method, CTMC_METHOD_SOR);
	assert_int_equal(iter.absorb.method, CTMC_METHOD_SOR);
	check_rel(iter.mean_response_s, dense.mean_response_s, 1e-10, "gs vs dense");
	assert_int_equal(iter.tag_states, dense.tag_states);
	/* The CPU with the receiver is busier than on a single CPU: fewer tasks. */
	assert_true(dense.mean_response_s < (4 + 1) / table2.mu_net_per_s);
	tagged_fixture_finish(&m, &ch);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_cpu_bound_only),
	cmocka_unit_test(test_one_io_task_by_hand),
	cmocka_unit_test(test_mean_equals_integral),
	cmocka_unit_test(test_monotone),
	cmocka_unit_test(test_fractional),
	cmocka_unit_test(test_smp_one_cpu),
	cmocka_unit_test(test_smp_pinned),
	cmocka_unit_test(test_smp_methods_agree),
)
