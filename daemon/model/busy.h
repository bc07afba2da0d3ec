/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The busy epochs of a flow's receiver: those in which it did nothing but
 * dequeue. Whether an epoch was one (epoch_busy() in busy.c), the decayed
 * sums of the receiver's on-CPU time and packets over them, which give its
 * cost per packet saturated, kept up and all in, and a ring of their
 * recent costs per packet, which gives how much that cost strays.
 *
 * A receiver that does nothing but dequeue pays no wake-ups: on-CPU ns /
 * packets is then the cost that defines its capacity. Three sums:
 *  sat     busy epochs in which its socket overflowed (rcvbuf drops): the
 *          saturated cost, what it pays with a full queue;
 *  kept    busy epochs without overflow: the kept-up cost, lower than the
 *          saturated one because a receiver that keeps up reads each
 *          packet soon after the softirq wrote it, while it is still in
 *          the cache, and one behind a full queue reads packets that have
 *          left it;
 *  all_in  epochs without overflow in which it had most of its share of
 *          the CPU, whatever its wake-ups and empty reads, with the whole
 *          on-CPU time: the cost per packet all in, never below the
 *          packets' own cost (cost_cap() holds the chosen cost to it).
 * Each is decayed like struct ewma_ratio, with the packet-weighted #C + #I
 * of the receiver's CPUs (the load) kept beside it: the cost depends on
 * the co-runners, so one measured at another load is not used.
 */
#ifndef RXB_DAEMON_MODEL_BUSY_H
#define RXB_DAEMON_MODEL_BUSY_H

#include <stdbool.h>
#include <stdint.h>

#include "rxb/measure.h"

struct busy_sums {
	double ns, pkts;	/* decayed on-CPU ns and packets dequeued */
	double load_pkts;	/* decayed sum of (#C + #I) x packets */
	double n;		/* decayed count of the epochs */
	bool ok;		/* pkts reached BUSY_MIN_PKTS since the last reset */
	uint64_t taken;		/* epochs folded in since the daemon started */
	uint64_t refused;	/* sat: overflowing epochs that failed a test */
};

/* The tests of a busy epoch: see epoch_busy() in busy.c. */
#define BUSY_MIN_PKTS		10000.0	/* packets behind a busy cost */
#define BUSY_MIN_PPW		400.0	/* packets per wake-up: "hardly slept" */
#define BUSY_MIN_SHARE		0.8	/* on-CPU time / fair share of the epoch */
#define BUSY_MAX_OVER_RATIO	2.0	/* ns/pkt at most this x the ratio */
#define BUSY_MAX_DLOAD		0.5	/* |#C + #I now - at measurement| to use it */

/*
 * The last epochs in which the receiver hardly slept (epoch_busy()'s tests
 * but the fair share's: a blast may cover part of the epoch), each with its
 * cost per packet: how much that cost moves from one epoch to the next at
 * the same load is how far the receiver's drain strays over about a blast
 * (struct inputs_stage_b.rate_rel_sd); an epoch of 250 ms is about as long
 * as a first blast of 200 MB at 6 Gb/s.
 */
#define BUSY_SPREAD_EPOCHS	16
#define BUSY_SPREAD_MIN_EPOCHS	4	/* at the present load, for a spread */

struct busy_epoch {
	double ns_per_pkt;	/* on-CPU ns / packet (spin taken off) */
	double pkts;		/* packets dequeued */
	double load;		/* #C + #I beside the receiver */
};

/* The sums over the busy epochs, and the ring of their costs. */
struct busy {
	struct busy_sums sat;		/* cost while saturated */
	struct busy_sums kept;		/* cost while busy but keeping up */
	struct busy_sums all_in;	/* cost all in while keeping up */
	struct busy_epoch spread[BUSY_SPREAD_EPOCHS];	/* a ring */
	uint32_t spread_n;		/* epochs in it */
	uint32_t spread_next;		/* where the next one goes */
};

/*
 * The cost (ns / packet) of @s once it has had BUSY_MIN_PKTS packets, else
 * NaN; @load (may be NULL) gets the #C + #I it was measured at. Decay
 * leaves both as they were.
 */
double busy_sums_value(const struct busy_sums *s, double *load);

/* Decay every sum of @b by @d (their values stay: see busy_sums_value()). */
void busy_decay(struct busy *b, double d);

/*
 * Fold the epoch @e of the receiver @s into @b after decaying it by @d:
 * @ratio_ns is the all-epochs on-CPU time per packet before this epoch,
 * @spin_ns the cost of an empty read (NaN when not known).
 */
void busy_add(struct busy *b, const struct rxb_sock_meas *s, const struct rxb_epoch *e,
	      double ratio_ns, double spin_ns, double d);

/*
 * Did the receiver of @s run for at least BUSY_MIN_SHARE of its fair share
 * of the CPU in @e ((1 - IRQ time) / (#C + #I + 1) of the epoch on the CPUs
 * it ran on)? A receiver whose queue stays full is always runnable and
 * gets it; one that ran less had time to spare.
 */
bool busy_used_share(const struct rxb_sock_meas *s, const struct rxb_epoch *e);

/*
 * The packet-weighted mean and standard deviation (Bessel-corrected) of
 * the cost per packet over the epochs in the ring measured within
 * BUSY_MAX_DLOAD of @load: true with them in @mean_ns, @sd_ns once
 * BUSY_SPREAD_MIN_EPOCHS qualify; @n gets how many did either way.
 */
bool busy_spread(const struct busy *b, double load, uint32_t *n, double *mean_ns,
		 double *sd_ns);

#endif
