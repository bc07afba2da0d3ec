// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status document's RATE objects: a flow's rate (flows[].rate,
 * senders[].last_rate) and a past flow's last one (learned_flows[].last),
 * against documents written out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/json.h"
#include "daemon/daemon.h"
#include "daemon/serve/status_flow.h"
#include "tests/unit/json_check.h"
#include "tests/unit/unit_main.h"

static void test_rate(void **state)
{
	const struct rxbneck_rate r = {
		.port = 9000, .rate_bps = 1000, .loss = 0.5, .epoch = 7, .confidence = 999,
		.xfer_time_us = 1500000,
		/* A bit the documents have no name for is left out. */
		.flags = RXBNECK_RATE_DEGRADED | RXBNECK_RATE_BETWEEN_PAUSES | 0x8000,
	};
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	status_flow_rate_json(&w, NULL, &r);
	json_check_text(&w,
		"{\"rate_bps\":1000,\"loss\":0.5,\"epoch\":7,\"confidence\":999,"
		"\"xfer_time_us\":1500000,\"flags\":[\"degraded\",\"between_pauses\"]}");
}

static void test_past_flow_last(void **state)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct json_writer w;
	const char *t;

	(void)state;
	assert_non_null(d);
	d->flows.npast = 2;
	d->flows.past[0] = (struct flow_past){
		.port = 9001, .left_ns = 1000000000, .has_rate = true, .reports = 3,
		.rate = { .port = 9001, .rate_bps = 950000000, .loss = 0.25, .epoch = 12,
			  .confidence = 800, .xfer_time_us = 5, .flags = RXBNECK_RATE_STALE },
	};
	d->flows.past[1] = (struct flow_past){ .port = 9002, .left_ns = 1000000000 };
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	status_flow_learned_json(&w, d, 3000000000ULL);
	json_obj_end(&w);
	assert_true(json_ok(&w));
	t = json_text(&w);
	/* Newest first; a past flow's last rate has no flags or time. */
	assert_non_null(strstr(t, "{\"learned_flows\":[{\"port\":9002,\"origin\":\"this run\","
			       "\"left_age_s\":2,"));
	assert_non_null(strstr(t, "\"last\":null}"));
	assert_non_null(strstr(t, "\"last\":{\"rate_bps\":950000000,\"loss\":0.25,\"epoch\":12,"
			       "\"confidence\":800,\"reports\":3}}]}"));
	assert_true(strstr(t, "\"port\":9002") < strstr(t, "\"port\":9001"));
	json_finish(&w);
	free(d);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_rate),
	cmocka_unit_test(test_past_flow_last),
)
