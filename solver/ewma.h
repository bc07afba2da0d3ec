/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exponentially weighted ratio estimates.
 *
 * A cost measured per epoch is a ratio (ns / packet, packets / wake-up,
 * ...). It is kept as a decaying numerator and denominator,
 *	num <- d num + num_epoch,  den <- d den + den_epoch,
 * with d = exp(-dt / tau) for an epoch of dt seconds (ewma_decay()), so an
 * epoch counts in proportion to its denominator (its packets) and old
 * epochs fade with wall time. The estimate is num / den once den has
 * reached a minimum weight; decay alone (an idle flow) scales both sums
 * alike and leaves the value as it was.
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_EWMA_H
#define RXB_SOLVER_EWMA_H

#include <stdbool.h>

struct ewma_ratio {
	double num;
	double den;
	bool ok;	/* den reached its minimum since the last reset */
};

/* exp(-@dt_s / @tau_s); 1 (no decay) when @dt_s is not a positive number. */
double ewma_decay(double dt_s, double tau_s);

/*
 * Decay @r by @d and fold one epoch's (@num, @den) into it; the estimate
 * qualifies once den reaches @min_den. A negative or non-finite @num or
 * @den adds nothing (the decay still applies).
 */
void ewma_ratio_add(struct ewma_ratio *r, double d, double num, double den,
		    double min_den);

/* num / den once qualified (and den > 0, num finite), else NaN. */
double ewma_ratio_value(const struct ewma_ratio *r);

/* Forget everything: the next value needs its minimum weight again. */
void ewma_ratio_reset(struct ewma_ratio *r);

/*
 * Start from a known value @v that weighs @weight (a value restored from
 * an earlier run: as much as the minimum of fresh data, so new epochs
 * take over as they come).
 */
void ewma_ratio_set(struct ewma_ratio *r, double v, double weight);

/*
 * The largest value among the recent epochs: those whose weight, 1 when
 * added and decayed like the ratios since, is still at least a minimum.
 * Kept as the epochs' values that a newer and larger one has not made
 * irrelevant: decreasing from the oldest, so the first is the largest.
 * When EWMA_MAX_KEEP of them are held, the newest keeps its value and
 * takes the new epoch's weight: the largest may then be held longer than
 * its own epochs, never dropped early.
 */
#define EWMA_MAX_KEEP	8

struct ewma_max {
	double v[EWMA_MAX_KEEP];	/* decreasing */
	double w[EWMA_MAX_KEEP];	/* their weights, increasing */
	int n;
};

/*
 * Decay @m by @d, forget the values whose weight fell below @min_w, and
 * add one epoch's largest @v (nothing when @v is not a positive number:
 * the epoch had none; the decay still applies).
 */
void ewma_max_add(struct ewma_max *m, double d, double v, double min_w);

/* The largest value held, 0 when none. */
double ewma_max_value(const struct ewma_max *m);

#endif
