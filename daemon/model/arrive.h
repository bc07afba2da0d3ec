/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The packets that arrived at a flow's socket in an epoch without the
 * per-packet probes ([measure] net_probe_every > 1), estimated from what is
 * measured in every epoch: the receiver's on-CPU time and wake-ups (the
 * scheduler probe) and the socket's drops (kfree_skb).
 *
 * In the sampled epochs the receiver's on-CPU time t is fitted against its
 * wake-ups w and the packets it read p, t = a w + b p (struct cost_fit,
 * cost_solve2()). Unlike the cost fit, t is taken as measured, with the
 * interrupt time a kernel without CONFIG_IRQ_TIME_ACCOUNTING charges to
 * the receiver: an unsampled epoch's softirq time is not measured, so it
 * could not be taken off there either. An unsampled epoch's reads are then
 * (t - a w) / b, and its arrivals those plus its drops; the change of the
 * queue (at most a receive buffer, against hundreds of thousands of
 * packets a second) is left out.
 *
 * Every sampled epoch of ARRIVE_MIN_CHECK_EPOCH_S of receiving or more
 * checks the estimate before it is learned from: the fit of the epochs
 * before it estimates the epoch's arrivals from its time, wake-ups and
 * drops, against the counted ones. The error ln(estimate / counted) is
 * averaged, absolute and signed, over the checked epochs, weighted by
 * their seconds of receiving and decayed like the fit. The estimate is
 * trusted once ARRIVE_MIN_CHECKS epochs (decayed) were checked and the mean
 * absolute error is at most ARRIVE_MAX_ERR, one band step of the windows
 * by rate: an estimated epoch joins the band nearest its rate within a
 * step (learn.c), so that a rate's epochs, a few per cent either side of
 * it (on the e2e testbed 4 % on average per 250-ms epoch, no matter the
 * rate or the loss), average into one band.
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_ARRIVE_H
#define RXB_DAEMON_MODEL_ARRIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/cost.h"
#include "rxb/measure.h"

#define ARRIVE_MIN_CHECK_EPOCH_S	0.1	/* receiving behind a check */
#define ARRIVE_MIN_CHECKS		3.0	/* decayed epochs checked */
#define ARRIVE_MAX_ERR			0.0866	/* ln(2^(1/8)): a band of the
						 * windows by rate */

struct arrive {
	struct cost_fit fit;	/* on-CPU ns as measured = a w + b p */
	double err_sum;		/* decayed sum of |ln(est / counted)| x seconds */
	double bias_sum;	/* the same, signed */
	double checked_s;	/* decayed seconds of receiving checked */
	double checked_w;	/* decayed epochs checked */
	uint64_t checks;	/* epochs checked since the daemon started */
	uint64_t estimated;	/* unsampled epochs estimated since then */
};

void arrive_init(struct arrive *a);

/*
 * A sampled epoch with traffic: check the estimate against @s's counted
 * arrivals when @act_s (its seconds of receiving) reaches
 * ARRIVE_MIN_CHECK_EPOCH_S, then fit its time, wake-ups and reads; both
 * decayed by @d first. @s must have its receivers' time measured
 * (receivers_valid) and its packets counted (counts_valid), else the
 * epoch only decays them.
 */
void arrive_learn(struct arrive *a, const struct rxb_sock_meas *s, double act_s, double d);

/*
 * The packets that arrived in @s's epoch by the fit: reads and drops, with
 * the reads into @reads; NaN (both) when the receivers' time was not
 * measured or no fit could yet separate a from b.
 */
double arrive_estimate(const struct arrive *a, const struct rxb_sock_meas *s, double *reads);

/* The mean absolute and signed error of the checks (NaN before any). */
double arrive_err(const struct arrive *a);
double arrive_bias(const struct arrive *a);

/* Is the estimate trusted (see above)? */
bool arrive_trusted(const struct arrive *a);

#endif
