// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon_streams_drain_bps(): the receiver cap of the stream-count
 * advice. With CPU-bound background tasks only, the tagged customer shares
 * one CPU among c + 1 tasks (processor sharing), so 64 KiB takes
 * (c + 1) * 65536 * ns_per_byte and the cap is threads * 8 / ((c + 1) *
 * ns_per_byte * 1e-9) bits/s; a fractional c interpolates between its
 * neighbours (the model's own time-weighted mix), which is the same line.
 * I/O-bound tasks without disk rates count as CPU-bound. With them, the cap
 * lies between the one with no I/O task and the one with all of them
 * CPU-bound.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/daemon.h"
#include "solver/ctmc.h"
#include "tests/unit/unit_main.h"

static double ps_bps(double ns_per_byte, int threads, double c)
{
	return threads * 8.0 / ((c + 1) * ns_per_byte * 1e-9);
}

static void test_cpu_bound_closed_form(void **state)
{
	struct ctmc_opts o;
	char why[160];

	(void)state;
	ctmc_opts_default(&o);
	for (int threads = 1; threads <= 3; threads++)
		for (double c = 0; c <= 4; c += 0.25)
			for (double ns = 0.25; ns <= 4; ns *= 2) {
				double v = daemon_streams_drain_bps(ns, threads, c, 0, 0, 0, &o,
								    why, sizeof(why));

				assert_true(fabs(v / ps_bps(ns, threads, c) - 1) < 1e-9);
				assert_non_null(strstr(why, "ns/B"));
			}
}

static void test_io_bound(void **state)
{
	struct ctmc_opts o;
	char why[160];
	double v, lo, hi;

	(void)state;
	ctmc_opts_default(&o);
	/* No disk rates: two I/O-bound tasks are two more CPU-bound ones. */
	v = daemon_streams_drain_bps(1, 1, 1, 2, 0, 0, &o, why, sizeof(why));
	assert_true(fabs(v / ps_bps(1, 1, 3) - 1) < 1e-9);
	assert_non_null(strstr(why, "counted as CPU-bound"));
	/* With them: between no I/O-bound task and all of them on the CPU. */
	v = daemon_streams_drain_bps(1, 1, 1, 2, 2e4, 1e3, &o, why, sizeof(why));
	lo = ps_bps(1, 1, 3);
	hi = ps_bps(1, 1, 1);
	assert_true(v > lo && v < hi);
	assert_null(strstr(why, "counted as CPU-bound"));
}

static void test_unknown(void **state)
{
	struct ctmc_opts o;
	char why[160];

	(void)state;
	ctmc_opts_default(&o);
	assert_true(isnan(daemon_streams_drain_bps(0, 1, 0, 0, 0, 0, &o, why, sizeof(why))));
	assert_true(isnan(daemon_streams_drain_bps(NAN, 1, 0, 0, 0, 0, &o, why, sizeof(why))));
	assert_true(isnan(daemon_streams_drain_bps(1, 0, 0, 0, 0, 0, &o, why, sizeof(why))));
	assert_true(isnan(daemon_streams_drain_bps(1, 1, -1, 0, 0, 0, &o, why, sizeof(why))));
	assert_non_null(strstr(why, "could not be solved"));
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_cpu_bound_closed_form),
	cmocka_unit_test(test_io_bound),
	cmocka_unit_test(test_unknown),
)
