/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_check_text(): the writer @w ended without an error and wrote
 * exactly @want; then it is finished. Include after <cmocka.h>.
 */
#ifndef RXB_TESTS_UNIT_JSON_CHECK_H
#define RXB_TESTS_UNIT_JSON_CHECK_H

#include "common/json.h"

static inline void json_check_text(struct json_writer *w, const char *want)
{
	assert_true(json_ok(w));
	assert_string_equal(json_text(w), want);
	json_finish(w);
}

#endif
