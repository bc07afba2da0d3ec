// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/shape/policy.c: the rate in force through the
 * daemon's life cycle (no advice yet, advice, lost within and past the
 * hold, back), for both fallbacks, on a scripted clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tools/shape/policy.h"
#include "tests/unit/unit_main.h"

#define S 1000000000ULL
#define HOLD (30 * S)

static void expect(const struct shape_policy *p, uint64_t now, enum shape_mode m,
		   uint64_t rate, uint64_t until)
{
	struct shape_target t = shape_policy_target(p, now);

	assert_int_equal(t.mode, m);
	assert_int_equal(t.rate_bps, rate);
	assert_int_equal(t.until_ns, until);
}

static void test_life_cycle_fallback_rate(void **state)
{
	struct shape_policy p;

	(void)state;
	shape_policy_init(&p, HOLD, 500000000, 100 * S);
	/* Before any contact: the fallback, not a hold of nothing. */
	expect(&p, 100 * S, SHAPE_MODE_FALLBACK, 500000000, UINT64_MAX);
	shape_policy_connected(&p, 101 * S);
	expect(&p, 101 * S, SHAPE_MODE_FALLBACK, 500000000, UINT64_MAX);
	shape_policy_advice(&p, 2000000000, 102 * S);
	expect(&p, 102 * S, SHAPE_MODE_ADVICE, 2000000000, UINT64_MAX);
	/* A connected daemon that says nothing new still stands by its advice. */
	expect(&p, 1000 * S, SHAPE_MODE_ADVICE, 2000000000, UINT64_MAX);
	shape_policy_lost(&p, 1000 * S);
	expect(&p, 1000 * S, SHAPE_MODE_HOLD, 2000000000, 1030 * S);
	expect(&p, 1030 * S - 1, SHAPE_MODE_HOLD, 2000000000, 1030 * S);
	expect(&p, 1030 * S, SHAPE_MODE_FALLBACK, 500000000, UINT64_MAX);
	/* Back after the hold: the old advice is forgotten until a new RATE. */
	shape_policy_connected(&p, 1040 * S);
	expect(&p, 1040 * S, SHAPE_MODE_FALLBACK, 500000000, UINT64_MAX);
	shape_policy_advice(&p, 1500000000, 1041 * S);
	expect(&p, 1041 * S, SHAPE_MODE_ADVICE, 1500000000, UINT64_MAX);
	/* Back within the hold: the advice stays in force at once. */
	shape_policy_lost(&p, 1100 * S);
	shape_policy_connected(&p, 1110 * S);
	expect(&p, 1110 * S, SHAPE_MODE_ADVICE, 1500000000, UINT64_MAX);
	/* Repeated reports change nothing: the hold counts from the first loss. */
	shape_policy_lost(&p, 1200 * S);
	shape_policy_lost(&p, 1220 * S);
	expect(&p, 1229 * S, SHAPE_MODE_HOLD, 1500000000, 1230 * S);
}

static void test_unshaped_and_zero_hold(void **state)
{
	struct shape_policy p;

	(void)state;
	shape_policy_init(&p, 0, 0, 5 * S);
	expect(&p, 5 * S, SHAPE_MODE_UNSHAPED, 0, UINT64_MAX);
	shape_policy_connected(&p, 6 * S);
	shape_policy_advice(&p, 700000000, 7 * S);
	expect(&p, 7 * S, SHAPE_MODE_ADVICE, 700000000, UINT64_MAX);
	/* A hold of 0: unshaped the moment the daemon is lost. */
	shape_policy_lost(&p, 8 * S);
	expect(&p, 8 * S, SHAPE_MODE_UNSHAPED, 0, UINT64_MAX);
	/* Never connected: advice cannot arrive, the fallback stays. */
	shape_policy_init(&p, HOLD, 0, 0);
	expect(&p, 365 * 86400 * S, SHAPE_MODE_UNSHAPED, 0, UINT64_MAX);
	assert_string_equal(shape_policy_mode_name(SHAPE_MODE_HOLD), "hold");
	assert_string_equal(shape_policy_mode_name(SHAPE_MODE_UNSHAPED), "unshaped");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_life_cycle_fallback_rate),
	cmocka_unit_test(test_unshaped_and_zero_hold),
)
