/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the bneck tests: the check that bad numbers in a stage or a
 * transfer are refused, one value after another; and a stage's off-CPU
 * windows as offwin's input, to check bneck's curve against.
 */
#ifndef RXB_TEST_BNECK_FIXTURE_H
#define RXB_TEST_BNECK_FIXTURE_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/offwin.h"

/*
 * bneck_compute() refuses the one stage @s with @x (-EINVAL) for each of
 * @bad[0..n) put in turn into @field, a number of @s or of @x; @field is
 * left at the last of them.
 */
static inline void bneck_fixture_refuse_n(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
					  const struct bneck_xfer *x, double *field,
					  const double *bad, size_t n)
{
	struct bneck_result r;

	for (size_t i = 0; i < n; i++) {
		int err;

		*field = bad[i];
		err = bneck_compute(ws, s, 1, x, NULL, &r);
		if (err != -EINVAL) {
			fprintf(stderr, "bad value %.17g: bneck_compute() returned %d, not -EINVAL\n",
				bad[i], err);
			fail();
		}
	}
}

/*
 * The off-CPU windows of @s (one packet per service) with the whole CPU
 * between them: drained at mu_net, no waits after wake-ups.
 */
static inline struct offwin_in bneck_fixture_windows_in(const struct rxb_stage_inputs *s)
{
	return (struct offwin_in){
		.per_s = s->offcpu_per_s, .count = s->offcpu_hist,
		.nslots = RXB_OFFCPU_SLOTS, .queue_pkts = s->queue_pkts,
		.on_pkts_per_s = s->mu_net_per_s,
	};
}

/* bneck_fixture_refuse_n() for the values listed after @field. */
#define bneck_fixture_refuses(ws, s, x, field, ...)				\
	bneck_fixture_refuse_n(ws, s, x, field, (const double[]){ __VA_ARGS__ },	\
			       sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double))

#endif
