/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * T(B) at one sending rate over a set-up model (internal to
 * solver/bneck*.c): the stages' queues in series, the sender's pauses,
 * and the expectation over uncertain rates.
 */
#ifndef RXB_SOLVER_BNECK_EVAL_H
#define RXB_SOLVER_BNECK_EVAL_H

#include "solver/bneck_model.h"

/*
 * Three-point Gauss-Hermite rule for E[f(Z)], Z standard normal: nodes 0
 * and +-sqrt(3), weights 2/3 and 1/6. Exact for polynomials of degree 5;
 * T(B) is a step function of the rate factor near an edge, so what it
 * buys is a 1-in-6 weight on a drain sqrt(3) sd slow, which is what moves
 * the rate off the edge (docs/model.md §3.3).
 */
#define BNECK_GH3_NODE	1.7320508075688772
#define BNECK_GH3_W_MID	(2.0 / 3.0)
#define BNECK_GH3_W_SIDE	(1.0 / 6.0)
/*
 * The expectation over a stage held to its saturated drain (eval_steps()):
 * its rule spans +-this (the tails, 3e-5 each, on its outermost nodes).
 */
#define BNECK_SAT_Z_MAX	4.0

struct bneck_eval {
	struct bneck_point pt;
	double stage_loss[BNECK_MAX_STAGES];
	double stage_lambda[BNECK_MAX_STAGES];
	double stage_mu[BNECK_MAX_STAGES];	/* the rate its queue was served at */
	double send_frac;	/* of the time the sender sends (obey_pauses) */
	double stage_absorb[BNECK_MAX_STAGES];
	double stage_meanq[BNECK_MAX_STAGES];
	/* The loss episode from the windows (episodes_from_windows), of the
	 * stage that loses most by its windows; 0: none. */
	double episode_pkts;
	double episode_loss;	/* that stage's loss */
	struct rbudp_time t;
};

/*
 * The objective at @rate_bps into @ev: with BNECK_LOSS_SPREAD, T(B) and the
 * loss expected over the spread factor; with md->expect, T(B) expected
 * over the stages' rate factors (struct rxb_stage_inputs.mu_rel_sd) by
 * the three-point rule, or, where a stage held to its saturated drain
 * steps up by a round at some node, by a Gauss-Legendre rule on the
 * panels between the steps; the
 * rest of @ev at the measured rates; else T(B). Counts md->evaluations.
 */
int bneck_eval_objective(struct bneck_model *md, double rate_bps, struct bneck_eval *ev);

#endif
