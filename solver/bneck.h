/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The effective bottleneck rate (docs/model.md §4): the sending rate B in
 * [min rate, line rate] that minimises the RBUDP transfer time T(B).
 *
 * A flow's receive path has one or two queue stages (struct
 * rxb_stage_inputs, from include/rxb/measure.h), in the order the packets
 * meet them: stage A (NIC -> stack) then stage B (socket -> application).
 * Each stage is an M/M[N]/1/K queue whose service rate is
 *   load_independent:  mu = mu_net_per_s (softirq service preempts tasks);
 *   otherwise:         mu = 1 / E[R], E[R] from the tagged-customer net with
 *                      the stage's #C and #I (fractional counts interpolated,
 *                      see tagged_seed_mean()).
 * At sending rate B (bits/s) packets arrive at lambda = B / (8 S_pkt) per
 * second; stage B sees what stage A let through, and the overall loss is
 *	l(B) = 1 - (1 - l_A(B)) (1 - l_B(B (1 - l_A))) = l_A + l_B (1 - l_A),
 * summed in that positive form to keep its relative accuracy. T(B) is
 * rbudp_time() at B / 8 payload bytes per second.
 *
 * The search evaluates T on an evenly spaced grid of @points rates from the
 * minimum to the line rate (this is also the curve handed back), then
 * refines around the best grid point by golden-section search on its two
 * neighbouring intervals.
 *
 * A stage with mu_net_full_per_s (0 < mu_full < mu) is served at mu_full
 * wherever its arrivals exceed the rate it keeps up with at mu (its
 * capacity_bps): the fluid limit of a server that slows once its queue is
 * deep (docs/model.md §2.1).
 *
 * With burst rounds (struct bneck_xfer.rounds) each stage also gives the
 * packets a round's burst loses less than l n (bulkq_burst(), O(K) per
 * stage and rate; skipped where loss x file packets < 1e-6, which moves T
 * by less than that share of a round), and T(B) is rbudp_time_burst();
 * with seed rounds it is rbudp_time() at the overall loss.
 *
 * A stage whose rate is uncertain (struct rxb_stage_inputs.mu_rel_sd > 0)
 * makes the objective T(B) expected over a lognormal factor on its service
 * rates, by a three-point Gauss-Hermite rule (every stage's factor driven
 * by the same normal node), three evaluations per rate. It is minimised
 * on 32 rates around the plain optimum of the grid, then refined. The
 * curve stays T(B) at the measured rates; time_s and line_time_s are the
 * expectation; the loss, the breakdown and the stage figures are at the
 * measured rates.
 *
 * bneck_compute() is meant to run every epoch for every flow: apart from
 * the tagged-customer solve (a chain of #I + 1 states per integer corner)
 * it allocates nothing but, with burst rounds, the growth of the
 * workspace's queue scratch when K exceeds every K seen before (the
 * workspace owns it; bneck_ws_finish() frees it).
 */
#ifndef RXB_SOLVER_BNECK_H
#define RXB_SOLVER_BNECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxb/measure.h"
#include "solver/ctmc.h"
#include "solver/rbudp.h"
#include "solver/tagged.h"

#define BNECK_MAX_STAGES	2

/*
 * How the resend rounds are counted (docs/model.md §3):
 *   BNECK_ROUNDS_BURST  every round is a burst into queues that start empty
 *                       and absorb what they can (rbudp_time_burst(), with
 *                       each stage's absorbed count from bulkq_burst());
 *   BNECK_ROUNDS_SEED   every round loses the same fraction l (Banerjee
 *                       et al. eq. (2)-(3), rbudp_time()).
 */
enum bneck_rounds {
	BNECK_ROUNDS_BURST = 0,
	BNECK_ROUNDS_SEED = 1,
};

const char *bneck_rounds_name(enum bneck_rounds r);

/*
 * How far above the fastest it was seen reading at while its windows were
 * met the service model takes a receiver's windows as its whole service
 * process (reads, not arrivals: what the full socket dropped cost the
 * receiver nothing). A receiver that sleeps through most of its receiving
 * is woken into its CPU ahead of CPU-bound co-runners and meets few of
 * their turns; one that has work all the time meets each of them. Windows met at a rate hold near
 * it; at rates many times higher they miss the co-runners' share, and the
 * bulk queue at the shared rate bounds the loss there as with the windows
 * model. Twice: a sender following the advice reaches new rates in steps
 * of at most that, each measured before the next.
 */
#define BNECK_WINDOWS_REACH	2.0

/*
 * The loss model of the stages served by a task (not load-independent;
 * docs/fidelity.md):
 *   BNECK_LOSS_QUEUE   the M/M[N]/1/K queue at the measured rate;
 *   BNECK_LOSS_SPREAD  a deterministic fluid queue of K packets drained at
 *                      C e^(sd Z), Z standard normal drawn once per
 *                      transfer, sd the stage's mu_rel_sd: loss
 *                      (1 - C_Z / lambda)+, c = K; T(B), the loss and the
 *                      first blast's loss expected over Z (spread.h's
 *                      rule). The three-point rate-uncertainty search is
 *                      then not used: the expectation is the objective on
 *                      the grid itself.
 *   BNECK_LOSS_WINDOWS the bulk queue, and the loss to the stage's measured
 *                      off-CPU windows (struct rxb_stage_inputs
 *                      offcpu_per_s, offcpu_hist, wake_per_s, wake_hist;
 *                      offwin.h) bounding it
 *                      from below as the vacation loss does: the stage
 *                      loses max(queue, vacations, l_win).
 *   BNECK_LOSS_SERVICE the measured service process alone: the receiver
 *                      served at its own rate between its off-CPU windows
 *                      (l_win + l_wake, and the bulk queue at that rate,
 *                      the larger), not the bulk queue at the rate shared
 *                      with the co-runners, whose turns the windows are.
 *                      With burst rounds, a round into it absorbs what
 *                      its start and end take off the windows' loss
 *                      (offwin_round_absorb()). A stage with no windows
 *                      measured is the bulk queue, as with
 *                      BNECK_LOSS_QUEUE; at a rate above
 *                      BNECK_WINDOWS_REACH x the fastest reads its
 *                      windows were met at (windows_seen_pps), the stage
 *                      is as under BNECK_LOSS_WINDOWS; so it is above the
 *                      larger of the stage's shared drain and those reads
 *                      where its windows leave it more than that
 *                      (bneck_model_over_share()), a round absorbing no
 *                      more than the windows' own.
 */
enum bneck_loss {
	BNECK_LOSS_QUEUE = 0,
	BNECK_LOSS_SPREAD = 1,
	BNECK_LOSS_WINDOWS = 2,
	BNECK_LOSS_SERVICE = 3,
};

const char *bneck_loss_name(enum bneck_loss m);

struct bneck_xfer {
	double payload_bytes;	/* S_pkt: payload bytes per packet */
	double file_bytes;	/* S_total */
	double one_way_delay_s;	/* T_prop */
	double line_rate_bps;	/* top of the sweep */
	double min_rate_bps;	/* bottom of the sweep, > 0 */
	uint32_t points;	/* grid points, >= 2 */
	/*
	 * The sender obeys PAUSE (RBUDP+, docs/pause.md): in every vacation of a
	 * stage's server it is silent for the part the queue cannot absorb,
	 * (D - K/lambda)+, so the rate searched is the rate between pauses.
	 * That stage is then served at its whole-CPU rate (no CPU-bound
	 * tasks: they are what the vacations are), loses what a period's
	 * arrivals exceed its on-time's service (a fluid bound) or what its
	 * bulk queue loses, whichever is larger, and T counts the blasts at
	 * the rate times the sending fraction.
	 */
	bool obey_pauses;
	enum bneck_rounds rounds;	/* round model; 0 = burst */
	/*
	 * Burst rounds: mean packets lost per loss episode (struct
	 * rbudp_params); 0 = packets are lost one by one.
	 */
	double loss_episode_pkts;
	/*
	 * With the windows' loss models: where a stage's measured windows set
	 * its loss, its episode at each rate is what a losing window loses on
	 * average (offwin_lossy_per_s()) instead of loss_episode_pkts.
	 */
	bool episodes_from_windows;
	enum bneck_loss loss_model;	/* 0 = the bulk queue */
	/*
	 * The time slack: 0, the rate of least T; > 0, the lowest rate below
	 * it from which T stays within (1 + time_slack_rel) x the least all
	 * the way up to it. Where T is nearly flat over a stretch above the
	 * knee, the argmin moves with every input's noise and the fast end
	 * loses more packets for no shorter transfer; the slack takes the
	 * stretch's low end. The objective is walked down the grid from the
	 * least (evaluated there where the curve is not the objective: an
	 * uncertain rate), then bisected between the last grid rate within
	 * and the first outside.
	 */
	double time_slack_rel;
};

struct bneck_point {
	double rate_bps;
	double loss;		/* overall loss probability */
	double ln_loss;		/* its logarithm (valid below 1e-308 too) */
	double time_s;		/* T(B) */
	double n_resend;	/* N_resend there (struct rbudp_time) */
	double first_loss;	/* expected fraction of the first blast lost
				 * (burst rounds: net of absorption; seed: loss) */
};

struct bneck_stage {
	double service_rate_per_s;	/* mu: batches per second */
	double mean_response_s;	/* E[R] = 1 / mu */
	double capacity_bps;	/* mu N S_pkt 8 (with irq_ns_per_pkt: the rate
				 * where arrivals = service): what it drains */
	double capacity_full_bps;	/* the same at mu_net_full_per_s: what it
					 * drains once overflowed (0 without) */
	double share_reach_bps;	/* BNECK_LOSS_SERVICE: the rate above which its
				 * windows, met while it slept, do not hold
				 * (no saturated drain in force; 0: none) */
	double arrival_per_s;	/* lambda at the bottleneck rate */
	double loss;		/* this stage's loss at the bottleneck rate */
	double absorb_pkts;	/* c of a round there (burst rounds; else 0) */
	double mean_queue_pkts;	/* E[Q] there (burst rounds; else 0) */
	bool tagged_used;	/* false for load-independent stages */
	struct tagged_result tagged;
};

struct bneck_result {
	double rate_bps;	/* the effective bottleneck rate */
	double loss;		/* overall loss there */
	double ln_loss;
	double time_s;		/* T there (expected, with mu_rel_sd) */
	double least_rate_bps;	/* where T is least (rate_bps without a time slack) */
	double least_time_s;	/* T there */
	double pause_fraction;	/* of the time the sender pauses there (obey_pauses) */
	struct rbudp_time breakdown;
	double line_time_s;	/* T at the line rate, for comparison */
	double line_loss;
	double loss_rel_err;	/* worst loss error estimate over the search */
	double model_rel_err;	/* worst E[R] error bound over the stages */
	uint32_t evaluations;	/* T(B) evaluations */
	uint32_t nstages;
	struct bneck_stage stage[BNECK_MAX_STAGES];
	uint32_t npoints;
	const struct bneck_point *curve;	/* npoints, in the workspace */
};

struct bneck_ws {
	struct bneck_point *curve;
	uint32_t cap;
	double *qwork;		/* bulkq_burst() scratch, grown to the largest K */
	size_t qwork_len;
	struct bneck_point *stitch;	/* bneck_compute_pieces()' curve, grown */
	uint32_t stitch_cap;
	/* bneck_compute_windows()' pieces' stages, BNECK_MAX_PIECES of them once used */
	struct rxb_stage_inputs (*piece_st)[BNECK_MAX_STAGES];
};

/*
 * Loss to a server's vacations (struct rxb_stage_inputs.vacation_s): of
 * arrivals at @lambda per second into a queue of @k packets whose server is
 * off for @d_s of every @p_s, (d_s - k / lambda)+ / p_s; 0 without them.
 */
double bneck_vacation_loss(double lambda, double k, double d_s, double p_s);

/*
 * The share of its service rate a server keeps when interrupts take
 * @irq_ns of its CPU per packet arriving at @lambda per second
 * (struct rxb_stage_inputs.irq_ns_per_pkt): 1 - lambda irq_ns, but at
 * least @min_share; 1 without them. bneck_compute() uses 0.05 (only to
 * keep the rate positive) and reports as capacity_bps the rate the stage
 * keeps up with: the lambda where lambda = mu N x the share there.
 */
double bneck_irq_share(double lambda, double irq_ns, double min_share);

int bneck_ws_init(struct bneck_ws *ws, uint32_t max_points);
void bneck_ws_finish(struct bneck_ws *ws);

/*
 * The input checks bneck_compute() and bneck_eval_at() make first: 0, or
 * -EINVAL where a stage or the transfer is out of the solver's domain (a
 * reader of inputs from elsewhere can test what it read against them).
 */
int bneck_check_inputs(const struct rxb_stage_inputs *stages, uint32_t nstages,
		       const struct bneck_xfer *x);

/*
 * @stages: @nstages (1 or 2) stages in path order. Returns 0, -EINVAL for
 * bad inputs (or more points than the workspace holds), -ERANGE/-EDOM when
 * a queue cannot be evaluated or T is infinite everywhere, or what the
 * tagged-customer solve returned.
 */
int bneck_compute(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, struct bneck_result *res);

/*
 * The time slack's walk on its own (the pieces' search, bneck_pieces.c):
 * from @from_bps down @x's grid while the objective stays at most
 * @time_max_s, then bisected; @res as bneck_compute()'s at the lowest rate
 * within (least_* at @from_bps; no curve, no line rate). *@bottom: the
 * stretch reached x->min_rate_bps. x->time_slack_rel is not used. -ERANGE
 * where T at @from_bps is over @time_max_s already.
 */
int bneck_compute_down(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		       uint32_t nstages, const struct bneck_xfer *x,
		       const struct ctmc_opts *o, double from_bps, double time_max_s,
		       struct bneck_result *res, bool *bottom);

/*
 * One rate's figures: T(B) (expected, with mu_rel_sd) and, per stage, the
 * arrival rate, the service rate its queue was solved with there
 * (interrupt share, the full rate beyond keeping up, the rate between
 * vacations for a sender that pauses) and its loss. For sizing a stage's
 * queue at a given rate (bufsize.h).
 */
struct bneck_at {
	struct bneck_point pt;
	double stage_arrival_per_s[BNECK_MAX_STAGES];
	double stage_service_per_s[BNECK_MAX_STAGES];
	double stage_loss[BNECK_MAX_STAGES];
};

/* As bneck_compute() at the one rate @rate_bps (x's sweep is not used but
 * checked). */
int bneck_eval_at(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, double rate_bps, struct bneck_at *out);

#endif
