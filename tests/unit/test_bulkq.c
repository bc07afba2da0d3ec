// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * M/M[N]/1/K loss: the cut recursion against the M/M/1/K closed form (in
 * extended precision) and against the general CTMC path (net -> GTH).
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
#include "solver/bulkq.h"
#include "tests/unit/unit_main.h"

/* ln |e^x - 1| in long double, also where e^x overflows. */
static long double ln_abs_expm1l(long double x)
{
	if (x > 50.0L)
		return x + log1pl(-expl(-x));
	return logl(fabsl(expm1l(x)));
}

/* ln pi_K of M/M/1/K: K ln rho + ln(1 - rho) - ln(1 - rho^(K+1)), long double. */
static long double mm1k_ln_block(long double rho, uint32_t K)
{
	long double l = logl(rho);

	if (rho == 1.0L)
		return -logl((long double)K + 1.0L);
	return (long double)K * l + ln_abs_expm1l(l) -
	       ln_abs_expm1l((long double)(K + 1) * l);
}

static void test_mm1k_closed_form(void **state)
{
	const double rhos[] = { 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999, 1.0, 1.001,
				1.5, 10.0 };
	const uint32_t ks[] = { 1, 2, 5, 16, 64, 1000 };
	int tiny = 0;

	(void)state;
	for (size_t a = 0; a < sizeof(rhos) / sizeof(rhos[0]); a++) {
		for (size_t b = 0; b < sizeof(ks) / sizeof(ks[0]); b++) {
			for (int rule = 0; rule < 2; rule++) {
				struct bulkq_params p = {
					.arrival_per_s = rhos[a] * 1000.0,
					.service_per_s = 1000.0,
					.queue_pkts = ks[b], .batch_pkts = 1,
					.rule = rule,
				};
				struct bulkq_result r;
				/* The load the solver sees, rounding included. */
				long double want = mm1k_ln_block(
					(long double)p.arrival_per_s /
					p.service_per_s, ks[b]);
				char what[96];

				assert_int_equal(bulkq_loss(&p, &r), 0);
				snprintf(what, sizeof(what), "rho %g K %u rule %d",
					 rhos[a], ks[b], rule);
				/* Full relative precision of pi_K itself... */
				if (want > -700.0L) {
					/* within the bound it reports */
					check_rel(r.loss, (double)expl(want),
						  fmax(r.rel_err, 4 * DBL_EPSILON),
						  what);
					if (r.loss < 1e-12)
						tiny++;
				}
				/* ...and of its logarithm beyond underflow. */
				check_rel(r.ln_loss, (double)want, 1e-14, what);
				assert_true(r.rel_err < 1e-9);
				check_rel(r.pass, (double)(-expm1l(want)),
					  1e-14, what);
			}
		}
	}
	assert_true(tiny >= 10);	/* the small-loss regime was exercised */
}

/* K = 65536: full length, far below underflow, and near rho = 1. */
static void test_mm1k_long_queue(void **state)
{
	const double rhos[] = { 0.1, 0.5, 0.99, 0.99999, 1.0, 1.00001, 2.0 };

	(void)state;
	for (size_t a = 0; a < sizeof(rhos) / sizeof(rhos[0]); a++) {
		struct bulkq_params p = {
			.arrival_per_s = rhos[a] * 5e4, .service_per_s = 5e4,
			.queue_pkts = 65536, .batch_pkts = 1,
			.rule = RXB_BATCH_PARTIAL,
		};
		struct bulkq_result r, f;
		long double want = mm1k_ln_block((long double)p.arrival_per_s /
						 p.service_per_s, 65536);
		char what[64];

		snprintf(what, sizeof(what), "K 65536 rho %g", rhos[a]);
		assert_int_equal(bulkq_loss(&p, &r), 0);
		assert_int_equal(bulkq_loss_full(&p, &f), 0);
		/* ln loss to ~1e-11 relative means loss to ~1e-11 relative. */
		check_rel(r.ln_loss, (double)want, 1e-11, what);
		check_rel(f.ln_loss, (double)want, 1e-11, what);
		if (want > -700.0L) {
			check_rel(r.loss, (double)expl(want), r.rel_err, what);
			check_rel(f.loss, (double)expl(want), f.rel_err, what);
		}
		assert_true(r.rel_err < 1e-8);
	}
}

static void test_recursion_equals_ctmc(void **state)
{
	const uint32_t ks[] = { 6, 7, 13, 64 };
	const double loads[] = { 0.02, 0.2, 0.6, 0.95, 1.0, 1.3, 4.0 };
	struct ctmc_opts o;

	(void)state;
	ctmc_opts_default(&o);
	o.method = CTMC_METHOD_GTH;
	for (size_t a = 0; a < sizeof(ks) / sizeof(ks[0]); a++) {
		for (size_t b = 0; b < sizeof(loads) / sizeof(loads[0]); b++) {
			for (int rule = 0; rule < 2; rule++) {
				/* load = lambda / (mu N) */
				struct bulkq_params p = {
					.arrival_per_s = loads[b] * 6 * 41600.0,
					.service_per_s = 41600.0,
					.queue_pkts = ks[a], .batch_pkts = 6,
					.rule = rule,
				};
				struct bulkq_result r, g;
				struct ctmc_stat st;
				char what[96];

				snprintf(what, sizeof(what),
					 "K %u load %g rule %d", ks[a], loads[b],
					 rule);
				assert_int_equal(bulkq_loss(&p, &r), 0);
				assert_int_equal(bulkq_loss_ctmc(&p, &o, &g, &st), 0);
				assert_int_equal(st.method, CTMC_METHOD_GTH);
				check_rel(r.loss, g.loss, 1e-12, what);
				check_rel(r.pass, g.pass, 1e-12, what);
			}
		}
	}
}

/* Strict and partial differ (the bottom N-1 states), and in the right way. */
static void test_rules_differ(void **state)
{
	struct bulkq_params p = {
		.arrival_per_s = 1e5, .service_per_s = 2e4,
		.queue_pkts = 64, .batch_pkts = 6,
	};
	struct bulkq_result part, strict;

	(void)state;
	p.rule = RXB_BATCH_PARTIAL;
	assert_int_equal(bulkq_loss(&p, &part), 0);
	p.rule = RXB_BATCH_STRICT;
	assert_int_equal(bulkq_loss(&p, &strict), 0);
	/* The strict server idles with < N queued: it loses more. */
	assert_true(strict.loss > part.loss * (1.0 + 1e-9));
}

/*
 * A long batch at a light load (N = 908 of K = 3641, the receiver alone on
 * its CPU at 10 Mb/s): the window of N values spans more than a double's
 * range, the oldest underflow; the tail must not extrapolate from them.
 * Against the plain recursion.
 */
static void test_long_batch_light_load(void **state)
{
	const double lambdas[] = { 858.0, 1000.0, 2000.0, 2e4, 1.2e6 };

	(void)state;
	for (size_t b = 0; b < sizeof(lambdas) / sizeof(lambdas[0]); b++) {
		struct bulkq_params p = {
			.arrival_per_s = lambdas[b], .service_per_s = 1403.276,
			.queue_pkts = 3641, .batch_pkts = 908, .rule = RXB_BATCH_PARTIAL,
		};
		struct bulkq_result r, f;
		char what[64];

		snprintf(what, sizeof(what), "N 908 lambda %g", lambdas[b]);
		assert_int_equal(bulkq_loss(&p, &r), 0);
		assert_int_equal(bulkq_loss_full(&p, &f), 0);
		check_rel(r.ln_loss, f.ln_loss, fmax(1e-11, r.rel_err + f.rel_err), what);
		check_rel(r.pass, f.pass, 1e-11, what);
	}
}

/* Geometric tail: large K against the plain recursion, several N. */
static void test_tail_equals_full(void **state)
{
	const double loads[] = { 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0, 1.001, 1.2, 3.0 };
	const uint32_t batches[] = { 1, 6, 64 };

	(void)state;
	for (size_t n = 0; n < sizeof(batches) / sizeof(batches[0]); n++) {
		for (size_t b = 0; b < sizeof(loads) / sizeof(loads[0]); b++) {
			for (int rule = 0; rule < 2; rule++) {
				uint32_t N = batches[n];
				struct bulkq_params p = {
					.arrival_per_s = loads[b] * N * 1e4,
					.service_per_s = 1e4,
					.queue_pkts = 65536, .batch_pkts = N,
					.rule = rule,
				};
				struct bulkq_result r, f;
				char what[64];

				snprintf(what, sizeof(what),
					 "tail N %u load %g rule %d", N,
					 loads[b], rule);
				assert_int_equal(bulkq_loss(&p, &r), 0);
				assert_int_equal(bulkq_loss_full(&p, &f), 0);
				check_rel(r.ln_loss, f.ln_loss,
					  fmax(1e-11, r.rel_err + f.rel_err), what);
				check_rel(r.pass, f.pass, 1e-11, what);
				assert_false(f.tail);
				assert_true(r.steps <= f.steps);
			}
		}
	}
}

static void test_bad_params(void **state)
{
	struct bulkq_params p = {
		.arrival_per_s = 1.0, .service_per_s = 1.0,
		.queue_pkts = 4, .batch_pkts = 6, .rule = RXB_BATCH_STRICT,
	};
	struct bulkq_result r;

	(void)state;
	assert_int_equal(bulkq_loss(&p, &r), -EINVAL);	/* N > K strict */
	p.rule = RXB_BATCH_PARTIAL;
	assert_int_equal(bulkq_loss(&p, &r), 0);	/* fine when partial */
	p.service_per_s = 0.0;
	assert_int_equal(bulkq_loss(&p, &r), -EINVAL);
	p.service_per_s = NAN;
	assert_int_equal(bulkq_loss(&p, &r), -EINVAL);
	p.service_per_s = 1.0;
	p.queue_pkts = 0;
	assert_int_equal(bulkq_loss(&p, &r), -EINVAL);
	p.queue_pkts = 4;
	p.arrival_per_s = -1.0;
	assert_int_equal(bulkq_loss(&p, &r), -EINVAL);
	p.arrival_per_s = 0.0;
	assert_int_equal(bulkq_loss(&p, &r), 0);
	assert_true(r.loss == 0.0 && r.pass == 1.0 && isinf(r.ln_loss));
	p.arrival_per_s = 1e-200;
	assert_int_equal(bulkq_loss(&p, &r), -ERANGE);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_mm1k_closed_form),
	cmocka_unit_test(test_mm1k_long_queue),
	cmocka_unit_test(test_recursion_equals_ctmc),
	cmocka_unit_test(test_rules_differ),
	cmocka_unit_test(test_tail_equals_full),
	cmocka_unit_test(test_long_batch_light_load),
	cmocka_unit_test(test_bad_params),
)
