/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bottleneck search's model (internal to solver/bneck*.c): a flow's
 * stages with their inputs checked and their service rates computed, ready
 * for bneck_eval_objective() to evaluate T(B) at any rate.
 */
#ifndef RXB_SOLVER_BNECK_MODEL_H
#define RXB_SOLVER_BNECK_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/bneck.h"
#include "solver/offwin_piece.h"

/* The least share of its rate interrupts leave a stage's server. */
#define BNECK_IRQ_MIN_SHARE	0.05
/* The interrupts' share left at a saturated drain's arrivals, at least,
 * for the drain to be moved to other rates (bneck_model_sat_drain()). */
#define BNECK_SAT_MIN_SHARE	0.5

/* Everything T(B) needs once the service rates are known. */
struct bneck_model {
	const struct rxb_stage_inputs *st;
	uint32_t nstages;
	double mu[BNECK_MAX_STAGES];
	double mu_on[BNECK_MAX_STAGES];	/* obey_pauses, windows: between vacations */
	/* With mu_net_full_per_s: the service rate once overflowed, and the
	 * arrival rate above which it applies (0: never). */
	double mu_full[BNECK_MAX_STAGES];
	double keep_up_pkts_per_s[BNECK_MAX_STAGES];
	bool paused[BNECK_MAX_STAGES];	/* obey_pauses and this stage has vacations */
	/*
	 * Under BNECK_LOSS_SERVICE with windows_seen_pps known, the larger of
	 * the shared drain (mu x batch) and that, where the measured windows
	 * leave the stage more than it: above it they do not hold
	 * (bneck_model_served_alone()); 0: no such bound.
	 */
	double share_reach_pkts_per_s[BNECK_MAX_STAGES];
	/* The windows' slots as pieces, once per solve (bneck_model_window_in()). */
	struct offwin_pieces pieces[BNECK_MAX_STAGES];
	const struct bneck_xfer *x;
	struct rbudp_params rb;
	double *qwork;		/* bulkq_burst() scratch (burst rounds) */
	double file_pkts;	/* packets in the file: the largest round */
	bool burst_always;	/* bulkq_burst() even where it cannot matter */
	bool expect;		/* bneck_eval_objective() takes the expectation */
	double max_rel_sd;	/* the largest mu_rel_sd; > 0: the rate is uncertain */
	double z;		/* the standard normal node eval_rate() is at */
	double worst_rel_err;
	uint32_t evaluations;
};

/*
 * Checks the inputs (-EINVAL), computes every stage's service rates (into
 * md and res->stage[]), reserves the burst-queue scratch in @ws. @md comes
 * with st, nstages and x set; @res is cleared first.
 */
int bneck_model_setup(struct bneck_model *md, struct bneck_ws *ws,
		      const struct ctmc_opts *o, struct bneck_result *res);

/*
 * Stage @i's drain alone on its CPU, packets/s, scaled by @scale
 * (interrupts, the spread node): c of the windows and of a quota's phases.
 */
double bneck_model_on_drain(const struct bneck_model *md, uint32_t i, double scale);

/*
 * Stage @i's measured off-CPU windows (offwin.h) as offwin's input, its
 * drain on the CPU the whole-CPU rate scaled by @scale (interrupts, the
 * spread node), with the slots' pieces bneck_model_setup() built.
 */
struct offwin_in bneck_model_window_in(const struct bneck_model *md, uint32_t i,
				       double scale);

/* Does stage @i lose to its measured off-CPU windows (BNECK_LOSS_WINDOWS,
 * BNECK_LOSS_SERVICE)? */
bool bneck_model_windows(const struct bneck_model *md, uint32_t i);

/*
 * Does stage @i lose to a co-runner's CPU quota (BNECK_LOSS_WINDOWS,
 * BNECK_LOSS_SERVICE with quota_period_s)? Its phases then stand for
 * its windows (solver/qphase.h).
 */
bool bneck_model_quota(const struct bneck_model *md, uint32_t i);

/*
 * The factor on stage @i's service rates at the node md->z: e^(z sd), a
 * lognormal with median 1 (1 where the rate is certain).
 */
double bneck_model_scale(const struct bneck_model *md, uint32_t i);

/*
 * Whether stage @i has a saturated drain (sat_drain_pkts_per_s) that
 * bounds it: under BNECK_LOSS_SERVICE, a task's stage, with or without a
 * quota's phases.
 */
bool bneck_model_has_sat_drain(const struct bneck_model *md, uint32_t i);

/*
 * Stage @i's saturated drain at the node md->z and arrivals @lambda,
 * packets/s: as measured, moved from the arrivals it was measured at
 * (sat_drain_arrivals_pps, where known) to @lambda by their interrupts'
 * share of the CPU, where that share was at least BNECK_SAT_MIN_SHARE
 * then. 0 where the stage has none.
 */
double bneck_model_sat_drain(const struct bneck_model *md, uint32_t i, double lambda);

/*
 * Is stage @i at @lambda (packets/s) served at its own rate between its
 * windows, with the co-runners in them (BNECK_LOSS_SERVICE within the
 * windows' reach, BNECK_WINDOWS_REACH, and at most its saturated drain,
 * or without one, at most the larger of its shared drain and its windows'
 * fastest reads where the windows leave it more: share_reach_pkts_per_s)?
 * Else a stage with windows is the bulk queue at the shared rate beside
 * them, or at its saturated drain above that.
 */
bool bneck_model_served_alone(const struct bneck_model *md, uint32_t i, double lambda);

/*
 * Is stage @i at @lambda above share_reach_pkts_per_s (at the node
 * md->z), with no saturated drain in force: not served alone for that?
 */
bool bneck_model_over_share(const struct bneck_model *md, uint32_t i, double lambda);

#endif
