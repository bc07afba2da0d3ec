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
#include <stdint.h>

#include "rxb/measure.h"
#include "solver/bneck.h"
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

/*
 * The stage the bneck tests add windows or waits to: one packet per service
 * at 7e5/s into a queue of 3641, no off-CPU time yet.
 */
static inline struct rxb_stage_inputs offwin_fixture_stage(void)
{
	return (struct rxb_stage_inputs){
		.cpu_bound = 2.0, .mu_pio_per_s = 1e3, .mu_disk_per_s = 1e3,
		.mu_net_per_s = 7e5, .queue_pkts = 3641, .batch_pkts = 1,
	};
}

/* The transfer they solve for: 200 MB over 100 ms one way, @points rates up to 10 Gb/s. */
static inline struct bneck_xfer offwin_fixture_xfer(uint32_t points, enum bneck_loss loss_model)
{
	return (struct bneck_xfer){
		.payload_bytes = 1472, .file_bytes = 2e8, .one_way_delay_s = 0.1,
		.line_rate_bps = 1e10, .min_rate_bps = 1e8, .points = points,
		.loss_model = loss_model,
	};
}

#endif
