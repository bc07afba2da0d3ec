/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage B's capacity from the saturated drain (drain.h) where it stands.
 *
 * The model's capacity of the socket stage is what its server keeps up
 * with: the tagged customer's service rate (its share of the CPU among #C
 * CPU-bound and #I I/O-bound tasks, the end-system net of Banerjee,
 * Mukherjee and Ghosal) times N, less the interrupts' share
 * (solver/bneck.h: lambda = mu N x (1 - lambda irq_ns)). Built from the
 * cost per packet (cost.h) and the counted load, it misses what the
 * receiver really drains with a full queue by the error of each: the cost
 * of a receiver that kept up is below the saturated one, and a share
 * from counts is not the share a quota, a weight or a part-time co-runner
 * leaves. Near the knee the loss moves by a factor of two for a few per
 * cent of capacity, so where the receiver's saturated drain is known at
 * the present load and fresh (drain_usable()), mu_net (and the overflowed
 * mu_net_full with it) can scale so that the stage's capacity is that
 * drain; otherwise the capacity stays what the cost gives.
 *
 * Which one is used is [model] capacity (enum capacity_mode): with
 * "cost" the drain is still learned and reported (what it would give and
 * the scale it would take) but the stage inputs are the cost's, bit for
 * bit; with "drain" they are scaled wherever the drain is usable.
 */
#ifndef RXB_DAEMON_MODEL_CAPACITY_H
#define RXB_DAEMON_MODEL_CAPACITY_H

#include <stdint.h>

#include "daemon/model/drain.h"
#include "daemon/model/value.h"
#include "rxb/measure.h"

/* A scale outside these is not taken: drain and cost disagree too much. */
#define CAPACITY_MIN_SCALE	0.25
#define CAPACITY_MAX_SCALE	4.0

/* [model] capacity, in the order of its names in daemon/config.c. */
enum capacity_mode {
	CAPACITY_MODE_COST = 0,	/* never scale: the drain is reported only */
	CAPACITY_MODE_DRAIN,	/* scale to the drain where it is usable */
};

enum capacity_basis {
	CAPACITY_COST = 0,	/* the cost per packet and the counted share */
	CAPACITY_DRAIN,		/* the saturated drain (mu_net scaled to it) */
};

/* Where stage B's capacity came from, for the status. */
struct capacity {
	enum capacity_mode mode;	/* [model] capacity at the time */
	enum capacity_basis basis;
	double cost_pkts_per_s;		/* what the cost gives, NaN unknown */
	double drain_pkts_per_s;	/* the saturated drain, NaN without */
	double drain_load;		/* #C + #I it was measured at, NaN */
	double drain_arrivals_pps;	/* arrivals it was measured at, NaN */
	uint64_t drain_epochs;		/* saturated epochs behind it */
	double scale;			/* applied to mu_net: 1 with the cost */
	double drain_scale;		/* what the drain would apply, NaN
					 * where it is not usable or more
					 * than x4 from the cost */
	bool drain_usable;		/* drain_usable(): what the receiver
					 * drained, whatever the cost says
					 * (the floor's condition) */
	double pkts_per_s;		/* the capacity the solve gets */
	char why[VALUE_WHY_LEN];	/* why the cost, or what the drain was */
};

const char *capacity_basis_name(enum capacity_basis b);
const char *capacity_mode_name(enum capacity_mode m);

/*
 * The capacity (packets / s) of stage @in with its mu_net_per_s replaced
 * by @mu: the tagged customer's rate times N, less the interrupts' share.
 * NaN when the end-system net cannot be solved.
 */
double capacity_pkts_per_s(const struct rxb_stage_inputs *in, double mu);

/*
 * Fill @c for stage @in (all other inputs set) and, when @mode is
 * CAPACITY_MODE_DRAIN and the drain @d is usable at @load and @now_ns,
 * scale @in's mu_net_per_s and mu_net_full_per_s so that the overflowed
 * stage drains what @d measured. With CAPACITY_MODE_COST @in is left
 * untouched; @c still says what the drain would have done.
 */
void capacity_calibrate(const struct drain *d, double load, uint64_t now_ns,
			enum capacity_mode mode, struct rxb_stage_inputs *in,
			struct capacity *c);

#endif
