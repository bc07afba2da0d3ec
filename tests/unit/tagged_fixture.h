/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the tagged-customer tests: a net built and analysed with the
 * default options (each step must succeed), and the teardown of both.
 */
#ifndef RXB_TEST_TAGGED_FIXTURE_H
#define RXB_TEST_TAGGED_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "solver/tagged.h"

/* The uniprocessor net of @cpu_bound and @io_bound tasks at @r, analysed. */
static inline void tagged_fixture_seed(struct tagged_model *m, uint32_t cpu_bound,
				       uint32_t io_bound, const struct tagged_rates *r,
				       struct tagged_chain *ch, struct tagged_result *res)
{
	assert_int_equal(tagged_seed_init(m, cpu_bound, io_bound, r), 0);
	assert_int_equal(tagged_analyze(m, NULL, ch, res), 0);
}

/* The SMP net of @p, analysed. */
static inline void tagged_fixture_smp(struct tagged_model *m, const struct tagged_smp_params *p,
				      struct tagged_chain *ch, struct tagged_result *res)
{
	assert_int_equal(tagged_smp_init(m, p), 0);
	assert_int_equal(tagged_analyze(m, NULL, ch, res), 0);
}

static inline void tagged_fixture_finish(struct tagged_model *m, struct tagged_chain *ch)
{
	tagged_chain_finish(ch);
	tagged_model_finish(m);
}

#endif
