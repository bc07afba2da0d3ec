// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common/ratelimit: messages driven through windows by hand, each count
 * against what the rule (a burst per window, the rest owned up to when the
 * next window opens) gives worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/ratelimit.h"
#include "tests/unit/unit_main.h"

#define WINDOW_NS 1000u

static void test_burst_then_dropped(void **state)
{
	struct ratelimit r;
	uint64_t dropped = 99;

	(void)state;
	ratelimit_init(&r, WINDOW_NS, 3, 5000);
	/* 3 allowed, 4 held back, all within the first window. */
	for (int i = 0; i < 7; i++) {
		assert_int_equal(ratelimit_ok(&r, 5000 + (uint64_t)i * 100, &dropped), i < 3);
		assert_int_equal(dropped, 0);
	}
	/* Still inside the window, one ns before it closes. */
	assert_false(ratelimit_ok(&r, 5000 + WINDOW_NS - 1, &dropped));
	assert_int_equal(dropped, 0);
	/* The next window: the 5 held back are reported once, the burst is fresh. */
	assert_true(ratelimit_ok(&r, 5000 + WINDOW_NS, &dropped));
	assert_int_equal(dropped, 5);
	assert_true(ratelimit_ok(&r, 5000 + WINDOW_NS + 1, &dropped));
	assert_int_equal(dropped, 0);
}

static void test_quiet_windows_report_nothing(void **state)
{
	struct ratelimit r;
	uint64_t dropped = 99;

	(void)state;
	ratelimit_init(&r, WINDOW_NS, 1, 0);
	assert_true(ratelimit_ok(&r, 10, &dropped));
	assert_int_equal(dropped, 0);
	/* A window later, nothing was held back: nothing to report. */
	assert_true(ratelimit_ok(&r, 10 * WINDOW_NS, &dropped));
	assert_int_equal(dropped, 0);
	assert_false(ratelimit_ok(&r, 10 * WINDOW_NS + 1, &dropped));
	assert_false(ratelimit_ok(&r, 10 * WINDOW_NS + 2, &dropped));
	/* Long after: the two of the last window, not more. */
	assert_true(ratelimit_ok(&r, 50 * WINDOW_NS, &dropped));
	assert_int_equal(dropped, 2);
}

static void test_zero_burst_allows_nothing(void **state)
{
	struct ratelimit r;
	uint64_t dropped;

	(void)state;
	ratelimit_init(&r, WINDOW_NS, 0, 0);
	assert_false(ratelimit_ok(&r, 1, &dropped));
	assert_false(ratelimit_ok(&r, 2, &dropped));
	assert_false(ratelimit_ok(&r, WINDOW_NS, &dropped));
	assert_int_equal(dropped, 2);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_burst_then_dropped),
	cmocka_unit_test(test_quiet_windows_report_nothing),
	cmocka_unit_test(test_zero_burst_allows_nothing),
)
