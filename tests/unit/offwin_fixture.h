/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the windows loss model's tests: one window length drawn from
 * a log2-ns histogram as the daemon publishes it (slot r holds lengths in
 * [2^r, 2^(r+1)) ns), log-uniform within its slot, as solver/offwin.c
 * assumes. @uniform01 is the test's own generator of (0, 1).
 */
#ifndef RXB_TEST_OFFWIN_FIXTURE_H
#define RXB_TEST_OFFWIN_FIXTURE_H

#include <math.h>
#include <stddef.h>

#include "solver/offwin.h"

static inline double offwin_fixture_draw_s(const double *count, size_t nslots,
					   double (*uniform01)(void))
{
	double total = 0.0, u, a, b;
	size_t r;

	for (r = 0; r < nslots; r++)
		total += count[r];
	u = uniform01() * total;
	for (r = 0; r < nslots - 1; r++) {
		if (u < count[r])
			break;
		u -= count[r];
	}
	offwin_slot_s(r, &a, &b);
	return a * exp(uniform01() * log(b / a));
}

#endif
