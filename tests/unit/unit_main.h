/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The main() of a unit-test program: every test_*.c runs its cmocka tests
 * as one group without group setup or teardown, so the runner is written
 * here once.
 *
 *	UNIT_TEST_MAIN(
 *		cmocka_unit_test(test_a),
 *		cmocka_unit_test_setup_teardown(test_b, setup, teardown),
 *	)
 */
#ifndef RXB_TESTS_UNIT_MAIN_H
#define RXB_TESTS_UNIT_MAIN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define UNIT_TEST_MAIN(...)						\
	int main(void)							\
	{								\
		const struct CMUnitTest tests[] = { __VA_ARGS__ };	\
									\
		return cmocka_run_group_tests(tests, NULL, NULL);	\
	}

#endif
