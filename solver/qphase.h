/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loss to a co-runner held to a CPU quota (docs/model.md §2.4).
 *
 * A cgroup with a CPU quota runs its tasks until they have used q of
 * each period P, then is throttled until the period ends. Beside a
 * receiver it makes two phases per period: a slow one of length T_s while
 * the group runs (the receiver gets its weighted share s_slow of the CPU,
 * T_s = q / (the group's share then)) and a fast one of P - T_s while the
 * group is throttled (share s_fast, 1 when nothing else runs there). The
 * receiver's queue of K packets, fed at λ, drains at c s_slow and c s_fast
 * in turn (c its drain alone on the CPU), and overflows where it fills.
 *
 * The windows a receiver meets under such a group (solver/offwin.h) all
 * fall in the slow phases, a few milliseconds apart: the mean run between
 * windows then overstates the room each finds, and the windows' loss is
 * spread over rates at which a whole slow phase does not fill the queue.
 * Taken as a fluid queue, the phases give the loss the cluster causes:
 *
 *   queue at the end of the slow phase   q1 = min(K, q0 + (λ - c s_slow) T_s)
 *   and at the end of the period         q0' = ...the same with s_fast, P - T_s
 *
 * (each clamped at 0 and K), what overflows at K being lost. The loss
 * fraction is what one period loses in the periodic state, over λ P.
 * Where the fast phase empties the queue (the usual case below capacity)
 * every period starts empty and loses ((λ - c s_slow) T_s - K)+ in its
 * slow phase. The slices within a slow phase (the scheduler's turns) are
 * not resolved: the fluid takes the receiver's share as a rate.
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_QPHASE_H
#define RXB_SOLVER_QPHASE_H

#include <stdbool.h>

struct qphase_in {
	double period_s;	/* P, the quota's period */
	double slow_s;		/* T_s: the part of it the group runs (0, P] */
	double slow_share;	/* the receiver's CPU share then, (0, 1] */
	double fast_share;	/* and while the group is throttled, [slow, 1] */
	double queue_pkts;	/* K */
	double on_pkts_per_s;	/* c: its drain alone on the CPU */
};

struct qphase_eval {
	double loss;		/* fraction of the arrivals lost, periodic state */
	/*
	 * What a round that starts with an empty queue at a period's start
	 * loses less than loss x its packets (the periods before the
	 * periodic state is reached). 0 where every period starts empty.
	 */
	double absorb_pkts;
	double lossy_per_s;	/* periods that lose, per second: 1/P or 0 */
};

/* Are @in's figures usable: all finite and within the ranges above? */
bool qphase_valid(const struct qphase_in *in);

/* The same for the phases alone (struct rxb_stage_inputs.quota_*). */
bool qphase_phases_valid(double period_s, double slow_s, double slow_share,
			 double fast_share);

/*
 * The loss at @lambda (packets/s, > 0) into @out. -EINVAL for inputs that
 * are not qphase_valid().
 */
int qphase_eval(const struct qphase_in *in, double lambda, struct qphase_eval *out);

#endif
