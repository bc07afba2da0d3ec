// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for tools/rbudp/error: a transfer keeps its first error only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tools/rbudp/error.h"
#include "tests/unit/unit_main.h"

static bool keep(char *error, size_t size, const char *peer, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool keep(char *error, size_t size, const char *peer, const char *fmt, ...)
{
	va_list ap;
	bool kept;

	va_start(ap, fmt);
	kept = rbudp_error_keep(error, size, peer, fmt, ap);
	va_end(ap);
	return kept;
}

static void test_first_error_kept(void **state)
{
	char error[16] = "";

	(void)state;
	assert_true(keep(error, sizeof(error), "192.0.2.1:9000", "round %d lost", 3));
	assert_string_equal(error, "round 3 lost");
	assert_false(keep(error, sizeof(error), NULL, "later"));
	assert_string_equal(error, "round 3 lost");
	/* Cut to the buffer, still terminated. */
	error[0] = '\0';
	assert_true(keep(error, sizeof(error), NULL, "%s", "a much longer message"));
	assert_string_equal(error, "a much longer m");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_first_error_kept),
)
