/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the collector's tests (test_collect_net.c,
 * test_collect_json.c): an empty epoch record of @ncpus CPUs, the
 * caller's to free. Include after <cmocka.h>.
 */
#ifndef RXB_TESTS_UNIT_COLLECT_FIXTURE_H
#define RXB_TESTS_UNIT_COLLECT_FIXTURE_H

#include <stdlib.h>

#include "rxb/measure.h"

static inline struct rxb_epoch *collect_fixture_epoch(int ncpus)
{
	struct rxb_epoch *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->ncpus = ncpus;
	return e;
}

#endif
