/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RBUDP file-transfer time as a function of the sending rate and the loss
 * probability (Banerjee et al. eq. (2)-(3); docs/model.md §3):
 *
 *	T = [T_prop + S/B]                                     first blast
 *	  + [N_resend T_prop + sum_{i=1}^{ceil(N_resend)} S l^i / B]   resends
 *	  + [(N_resend + 1) (S / (8 S_pkt B) + T_prop)]         loss bitmaps
 *
 *	N_resend = ln(S_pkt / S) / ln(l)
 *
 * B in payload bytes per second, S = file bytes, S_pkt = payload bytes per
 * packet, T_prop = one-way delay. N_resend stays real-valued where it
 * multiplies (as Banerjee et al. write it), so T is continuous in l; only the
 * number of resend blasts in the sum is rounded up. Limits: l = 0 gives
 * N_resend = 0 (one blast, one bitmap); l -> 1 gives T -> infinity;
 * S <= S_pkt (one packet) gives N_resend = 0. The loss is passed as its
 * logarithm as well, because T depends on ln l for l far below 1e-300.
 */
#ifndef RXB_SOLVER_RBUDP_H
#define RXB_SOLVER_RBUDP_H

struct rbudp_params {
	double file_bytes;	/* S_total */
	double payload_bytes;	/* S_pkt */
	double one_way_delay_s;	/* T_prop */
	/*
	 * Burst rounds only: the mean number of packets one loss episode
	 * takes (an overflow of the receiver's queue while it is off its CPU
	 * loses a run of packets, not independent ones). 0 or 1: packets are
	 * lost one by one. >= 1 otherwise.
	 */
	double loss_episode_pkts;
};

struct rbudp_time {
	double time_s;		/* T; +inf when l = 1 */
	double n_resend;	/* N_resend, real-valued */
	double resend_rounds;	/* seed: ceil(N_resend); burst: rounds expected to lose >= 1 episode */
	double resend_pkts;	/* expected packets resent over all rounds */
	double first_s;		/* the three bracketed terms of eq. (2) */
	double resend_s;
	double bitmap_s;
	double drain_s;		/* burst: emptying the queues after every blast */
};

/*
 * @rate_bytes_per_s = B > 0; @ln_loss = ln l in [-inf, 0]. Returns 0 or
 * -EINVAL for out-of-range arguments.
 */
int rbudp_time(const struct rbudp_params *p, double rate_bytes_per_s,
	       double ln_loss, struct rbudp_time *out);

/*
 * The burst round model (docs/model.md §3.2): each round is a burst into
 * queues that start empty, so a stage with stationary loss l that absorbs
 * c packets (bulkq_burst()) loses max(0, n l - c) of a round of n.
 * Stages in path order: stage s sees what the earlier ones let through,
 * n_s = n - (lost before s), so a round of n loses
 *
 *	f(n) = sum_s max(0, n_s l_s - c_s),
 *
 * a continuous, increasing, piecewise affine map (where every stage loses,
 * f(n) = n l - (c_A (1 - l_B) + c_B) with l = l_A + l_B (1 - l_A), the
 * overall loss). With n_0 = S / S_pkt packets (at least 1) and
 * n_{i+1} = f(n_i), a resend round i >= 1 happens with probability
 * min(1, n_i / m), m the packets per loss episode (loss_episode_pkts, 1
 * when packets are lost one by one): certainly when at least one episode
 * is expected; with the expected number of episodes when it is below one,
 * exact when at most one can occur. So
 *
 *	N_resend = sum_{i>=1} min(1, n_i / m),   resent packets = sum_{i>=1} n_i,
 *	T = [T_prop + S/B] + [N_resend T_prop + S_pkt sum n_i / B]
 *	  + [(N_resend + 1) (S / (8 S_pkt B) + T_prop)]           (eq. (2))
 *	  + drain_s                                               (below)
 *
 * Both sums are evaluated in closed form on each affine piece
 * (n_j = L^j (n + a) - a, a = c / (1 - L)), so the cost does not grow with
 * the number of rounds. Limits: every c = 0 gives Banerjee et al.'s geometric
 * rounds (resend_rounds = floor(eq. (3)), N_resend within
 * l / (1 - l) of it); l = 0 everywhere gives one round; a deterministic
 * fluid queue (l = 1 - C / lambda, c = K) loses n (1 - C / lambda) - K.
 * N_resend is continuous in l and c (so is T up to one packet's blast).
 *
 * A round starts from empty queues, so it ends only when they are empty
 * again: the receiver reports its bitmap after reading what is still
 * queued when the blast stops (Banerjee et al.'s K = 64 takes a fraction of a
 * millisecond; an 8 MiB socket buffer, K = 3641, takes 17 ms at 2.5 Gb/s,
 * once per lossy round). Of a round of n_s packets into stage s, the
 * queue holds min(n_s l_s, c_s) at the end: what it absorbed beyond its
 * service, at most c_s (a fluid queue above capacity ends full,
 * c = K). With the stage's drain rate D_s (packets per second, its
 * service rate with nothing arriving; 0 leaves it out), T gains
 *
 *	drain_s = sum over rounds i >= 0, stages s of min(n_{i,s} l_s, c_s) / D_s,
 *
 * affine in n_i on each piece of the map and summed in closed form with
 * the rounds.
 */
#define RBUDP_MAX_STAGES	4

struct rbudp_stage {
	double loss;		/* l in [0, 1] */
	double pass;		/* 1 - l, given separately to avoid cancellation */
	double absorb_pkts;	/* c >= 0 */
	double drain_pkts_per_s;	/* D >= 0: emptying rate; 0 = not counted */
};

/*
 * Returns 0 or -EINVAL (bad arguments, 0 or more than RBUDP_MAX_STAGES
 * stages, loss + pass not 1 to 1e-9). A stage with loss 1 makes T infinite.
 */
int rbudp_time_burst(const struct rbudp_params *p, double rate_bytes_per_s,
		     const struct rbudp_stage *st, unsigned nstages,
		     struct rbudp_time *out);

/* One round of the map above: expected packets lost of a round of @n_pkts. */
double rbudp_round_lost(const struct rbudp_stage *st, unsigned nstages,
			double n_pkts);

#endif
