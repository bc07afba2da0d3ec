/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the CTMC tests: the pure death chain, whose mean times to
 * absorption are sums of the inverse rates. Include after <cmocka.h>.
 */
#ifndef RXB_TEST_CTMC_FIXTURE_H
#define RXB_TEST_CTMC_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "solver/ctmc.h"
#include "tests/unit/check_rel.h"

/*
 * The chain n-1 -> ... -> 0, state i > 0 leaving for i - 1 at @death(i, n),
 * state 0 absorbing, started uniformly; its mean times to absorption by
 * @method: tau_i within relative @tol of sum_{k=1..i} 1 / d_k (summed here
 * in long double from the rates the chain holds), tau_0 = 0, the mean
 * within @tol of their average. The solver's figures into @st.
 */
static inline void ctmc_fixture_death(uint32_t n, double (*death)(uint32_t i, uint32_t n),
				      enum ctmc_method method, double tol, struct ctmc_stat *st)
{
	double *alpha = malloc(n * sizeof(*alpha)), *tau = malloc(n * sizeof(*tau)), mean;
	long double want = 0.0L, mean_want = 0.0L;
	struct ctmc_opts o;
	struct ctmc q;

	assert_true(alpha && tau);
	assert_int_equal(ctmc_init(&q, n, n), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t col = i ? i - 1 : 0;
		double r = i ? death(i, n) : 0.0;

		assert_int_equal(ctmc_add_row(&q, &col, &r, i ? 1 : 0), 0);
		alpha[i] = 1.0 / n;
	}
	assert_int_equal(ctmc_seal(&q), 0);
	ctmc_opts_default(&o);
	o.method = method;
	assert_int_equal(ctmc_absorb_mean(&q, alpha, &o, &mean, tau, st), 0);
	for (uint32_t i = 1; i < n; i++) {
		char what[48];

		want += 1.0L / (long double)q.rate[q.row_ptr[i]];
		mean_want += want / n;
		snprintf(what, sizeof(what), "%s tau[%u]", ctmc_method_name(st->method), i);
		check_rel(tau[i], (double)want, tol, what);
	}
	check_rel(mean, (double)mean_want, tol, ctmc_method_name(st->method));
	assert_true(tau[0] == 0.0);
	free(alpha);
	free(tau);
	ctmc_finish(&q);
}

#endif
