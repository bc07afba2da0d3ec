/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver's saturated drain: packets it dequeued per second of wall
 * time while it had a backlog, in the epochs whose socket overflowed. That
 * is its capacity under the present load, measured where the loss is
 * decided, with whatever the scheduler really gave it (weights, quotas,
 * part-time co-runners, interrupts, cache misses of a full queue): no
 * model of the share or of the cost per packet stands between the two.
 *
 * Behind a backlog the receiver alternates between runs on its CPU and
 * waits for it: the co-runners' turns. It waits in two ways, both timed
 * by the scheduler probe per epoch: preempted (P intervals off the CPU,
 * of mean o), and woken from a sleep on an empty socket but not yet
 * running (W waits of mean w: it emptied its queue inside a blast and
 * blocked, and the next packet's wake-up found its CPU taken). Its busy
 * time is its on-CPU time plus those waits, and
 *	drain = pkts_out / (on-CPU + P o + W w).
 * Which of the two dominates depends on the scheduler: a co-runner may
 * keep preempting it at the end of each slice, or a woken receiver may
 * preempt the co-runner, drain its queue dry and block, so that in a
 * whole epoch it is never preempted and waits only after wake-ups. The
 * time it slept is left out: it includes the gaps between blasts and
 * rounds, which at 100 ms of delay fall in every epoch a blast overflows
 * in, while the blast itself covers only part of it. An
 * epoch counts (drain_add()) when
 *  - its socket overflowed (rcvbuf drops; any drops of the socket when the
 *    reasons were not measured): the arrivals outran the receiver, so its
 *    busy time was spent behind a backlog, not keeping up;
 *  - the receiver hardly slept (BUSY_MIN_PPW packets per wake-up): its
 *    busy time is one stretch behind the backlog, not many short ones
 *    that each began on a near-empty queue and paid a wake-up;
 *  - it dequeued DRAIN_MIN_EPOCH_PKTS packets and its spin is either
 *    known (empty reads x the cost of one, taken off the busy time) or
 *    negligible (as for the busy costs, busy.h).
 * Beside the packets, those that arrived (dropped or not): the softirq
 * of each ran on the receiver's CPU, so the drain holds at the arrival
 * rate it was measured at, and the solver moves it to another by the
 * interrupts' share (struct rxb_stage_inputs.sat_drain_arrivals_pps).
 * The sums decay like the costs (LEARN_TAU_S) and the value stays on
 * decay, with the load (#C + #I by effective count, weighted by the
 * receiver's on-CPU time per CPU) kept beside it: it is used only at about
 * the load it was measured at, and only while the last epoch behind it is
 * at most DRAIN_MAX_AGE_NS old (drain_usable()). A counted epoch at a load
 * more than DRAIN_MAX_DLOAD from the sums' starts them again: the drain
 * depends on the load as a whole, not as a mean over loads, and decayed
 * sums of two loads would give a drain of neither (other work on the
 * receiver's CPU for a few seconds would pull the quiet load's drain
 * down while it still counted as measured at that load).
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_DRAIN_H
#define RXB_DAEMON_MODEL_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxb/measure.h"

#define DRAIN_MIN_PKTS		20000.0	/* packets behind a drain */
#define DRAIN_MIN_EPOCH_PKTS	1000.0	/* an epoch's packets, to count */
#define DRAIN_MAX_DLOAD		0.5	/* |#C + #I now - at measurement| */
#define DRAIN_MAX_OVER_EPOCH	1.10	/* busy time / epoch length, at most */
#define DRAIN_MAX_AGE_NS	(600ull * 1000000000ull)	/* 10 min */

struct drain {
	double pkts;		/* decayed packets dequeued */
	double busy_ns;		/* decayed busy time (on-CPU + preempted) */
	double load_pkts;	/* decayed sum of (#C + #I) x packets */
	double arrived;		/* decayed packets that arrived, dropped or not */
	bool ok;		/* pkts reached DRAIN_MIN_PKTS */
	uint64_t taken;		/* epochs folded in since the daemon started */
	uint64_t refused;	/* overflowing epochs that failed a test */
	uint64_t last_ns;	/* CLOCK_MONOTONIC end of the last one, 0 = none */
};

/*
 * One epoch's busy stretch of the receiver @s in @e: true with its packets
 * in @pkts, busy time in @busy_ns and load in @load when the epoch counts
 * (see above); @spin_ns the cost of an empty read, NaN when not known.
 */
bool drain_epoch(const struct rxb_sock_meas *s, const struct rxb_epoch *e, double spin_ns,
		 double *pkts, double *busy_ns, double *load);

/* Decay @d by @k, then fold the epoch in when it counts. */
void drain_add(struct drain *d, const struct rxb_sock_meas *s, const struct rxb_epoch *e,
	       double spin_ns, double k);

/* Decay @d by @k: an epoch that measured nothing. */
void drain_decay(struct drain *d, double k);

/* Did the socket overflow: rcvbuf drops, or any of its drops without the reasons. */
bool drain_overflowed(const struct rxb_sock_meas *s);

/*
 * The drain in packets per second once DRAIN_MIN_PKTS were behind it,
 * else NaN; @load (may be NULL) gets the load it was measured at.
 */
double drain_pkts_per_s(const struct drain *d, double *load);

/*
 * The packets per second that arrived while the drain was measured
 * (arrivals over the same busy time): their interrupts took the
 * receiver's CPU too. NaN while drain_pkts_per_s() is.
 */
double drain_arrivals_pps(const struct drain *d);

/*
 * Whether the drain can stand for the capacity at load @load_now and
 * @now_ns (CLOCK_MONOTONIC): known, measured within DRAIN_MAX_DLOAD of
 * it and at most DRAIN_MAX_AGE_NS ago. False with the reason in @why.
 */
bool drain_usable(const struct drain *d, double load_now, uint64_t now_ns,
		  char *why, size_t len);

#endif
