// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for common/: JSON writer and strict parsing. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/json.h"
#include "common/parse.h"
#include "common/util.h"

static void test_json_nesting_and_escaping(void **state)
{
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_str(&w, "name", "a\"b\\c\n\x01");
	json_arr_begin(&w, "xs");
	json_int(&w, NULL, -3);
	json_uint(&w, NULL, 18446744073709551615ULL);
	json_double(&w, NULL, 0.5);
	json_double(&w, NULL, NAN);
	json_arr_end(&w);
	json_obj_begin(&w, "empty");
	json_obj_end(&w);
	json_bool(&w, "t", true);
	json_null(&w, "n");
	json_obj_end(&w);
	assert_true(json_ok(&w));
	assert_string_equal(json_text(&w),
		"{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"xs\":[-3,18446744073709551615,0.5,null],"
		"\"empty\":{},\"t\":true,\"n\":null}");
	json_finish(&w);
}

static void test_json_double_round_trips(void **state)
{
	const double vals[] = { 1e-300, 3.141592653589793, 9.5e8, 1.0 / 3.0 };
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	for (size_t i = 0; i < RXB_ARRAY_SIZE(vals); i++) {
		json_reset(&w);
		json_double(&w, NULL, vals[i]);
		assert_true(strtod(json_text(&w), NULL) == vals[i]);
	}
	json_finish(&w);
}

static void test_json_unbalanced_fails(void **state)
{
	struct json_writer w;

	(void)state;
	json_init(&w, true);
	json_obj_begin(&w, NULL);
	assert_false(json_ok(&w)); /* still open */
	json_arr_end(&w);
	json_arr_end(&w);          /* one too many */
	assert_false(json_ok(&w));
	json_finish(&w);
}

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rxb_parse_u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(rxb_parse_u64("0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(rxb_parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("1x", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("101", 0, 100, &v), -ERANGE);
	assert_int_equal(rxb_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 16); /* untouched on failure */
}

static void test_parse_double_and_si(void **state)
{
	double d = 0;

	(void)state;
	assert_int_equal(rxb_parse_double("4.6", 0, 1e9, &d), 0);
	assert_true(d == 4.6);
	assert_int_equal(rxb_parse_double("nan", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("inf", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("0x1p3", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("1e400", 0, 1e9, &d), -ERANGE);
	assert_int_equal(rxb_parse_double("-1", 0, 1e9, &d), -ERANGE);
	assert_int_equal(rxb_parse_si("950M", 0, 1e12, &d), 0);
	assert_true(d == 950e6);
	assert_int_equal(rxb_parse_si("1.5G", 0, 1e12, &d), 0);
	assert_true(d == 1.5e9);
	assert_int_equal(rxb_parse_si("64Ki", 0, 1e12, &d), 0);
	assert_true(d == 65536.0);
	assert_int_equal(rxb_parse_si("1e9", 0, 1e12, &d), 0);
	assert_true(d == 1e9);
	assert_int_equal(rxb_parse_si("5X", 0, 1e12, &d), -EINVAL);
	assert_int_equal(rxb_parse_si("2T", 0, 1e12, &d), -ERANGE);
}

static void test_parse_bool_and_strlcpy(void **state)
{
	char buf[4];
	bool b = false;

	(void)state;
	assert_int_equal(rxb_parse_bool("Yes", &b), 0);
	assert_true(b);
	assert_int_equal(rxb_parse_bool("off", &b), 0);
	assert_false(b);
	assert_int_equal(rxb_parse_bool("maybe", &b), -EINVAL);
	assert_int_equal(rxb_strlcpy(buf, "abcdef", sizeof(buf)), 6);
	assert_string_equal(buf, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_nesting_and_escaping),
		cmocka_unit_test(test_json_double_round_trips),
		cmocka_unit_test(test_json_unbalanced_fails),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_double_and_si),
		cmocka_unit_test(test_parse_bool_and_strlcpy),
	};

	return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
