/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the windows loss model's tests: one window length drawn from
 * a log2-ns histogram as the daemon publishes it (slot r holds lengths in
 * [2^r, 2^(r+1)) ns), log-uniform within its slot, as solver/offwin.c
 * assumes. @uniform01 is the test's own generator of (0, 1).
 */
#ifndef RXB_TEST_OFFWIN_FIXTURE_H
#define RXB_TEST_OFFWIN_FIXTURE_H

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

/*
 * @r, solved with BNECK_LOSS_WINDOWS, has at every point the larger of
 * the queue model's loss there (@qloss, point by point) and offwin_loss()
 * of @in at the point's packet rate. True if the windows' loss ruled,
 * above 1e-3, at some point (else the test proves nothing).
 */
static inline bool offwin_fixture_check_curve(const struct bneck_result *r, const double *qloss,
					      const struct offwin_in *in, double payload_bytes)
{
	bool some = false;

	for (uint32_t j = 0; j < r->npoints; j++) {
		double lambda = r->curve[j].rate_bps / (8.0 * payload_bytes);
		double lw = offwin_loss(in, lambda, OFFWIN_LOGUNIFORM);
		double want = fmax(qloss[j], lw);

		assert_true(fabs(r->curve[j].loss - want) <= 1e-9 * fmax(want, 1e-300));
		if (lw > qloss[j] && lw > 1e-3)
			some = true;
	}
	return some;
}

/*
 * @s, whose receiver waits after its wake-ups (wake_per_s, wake_hist,
 * wake_max_s), solved into @r with the queue model and then with
 * BNECK_LOSS_WINDOWS (@x is left at it): true if the second curve is the
 * larger of the first and l_wake at every point, l_wake ruling somewhere.
 */
static inline bool offwin_fixture_wake_curve(struct bneck_ws *ws,
					     const struct rxb_stage_inputs *s,
					     struct bneck_xfer *x, struct bneck_result *r)
{
	struct offwin_in in = {
		.nslots = RXB_OFFCPU_SLOTS, .queue_pkts = s->queue_pkts,
		.on_pkts_per_s = s->mu_net_per_s, .wake_per_s = s->wake_per_s,
		.wake_count = s->wake_hist, .wake_max_s = s->wake_max_s,
		.release_pkts = s->queue_release_pkts,
	};
	double qloss[64];

	assert_true(x->points <= 64);
	x->loss_model = BNECK_LOSS_QUEUE;
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, r), 0);
	for (uint32_t j = 0; j < r->npoints; j++)
		qloss[j] = r->curve[j].loss;
	x->loss_model = BNECK_LOSS_WINDOWS;
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, r), 0);
	return offwin_fixture_check_curve(r, qloss, &in, x->payload_bytes);
}

/*
 * bneck refuses @s with a negative count in its histogram slot @count
 * (0 before and after), then with a rate of @bad_per_s in @per_s.
 */
static inline void offwin_fixture_refused(struct bneck_ws *ws, struct rxb_stage_inputs *s,
					  const struct bneck_xfer *x, double *count,
					  double *per_s, double bad_per_s)
{
	struct bneck_result r;

	*count = -1.0;
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, &r), -EINVAL);
	*count = 0.0;
	*per_s = bad_per_s;
	assert_int_equal(bneck_compute(ws, s, 1, x, NULL, &r), -EINVAL);
}

#endif
