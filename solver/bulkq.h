/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The M/M[N]/1/K bulk-service loss queue (docs/model.md §2).
 *
 * Packets arrive as a Poisson stream of rate lambda and are blocked when K
 * are queued. A single server completes services at rate mu (batches per
 * second); a service removes min(n, N) packets (rule "partial": coalescing
 * with a timeout) or, with rule "strict" (Banerjee et al.'s SPN, an input arc of
 * multiplicity N), fires only when n >= N and removes N. The loss
 * probability is the blocking probability pi_K (Poisson arrivals see time
 * averages).
 *
 * bulkq_loss() solves the chain by the cut equations
 *	lambda pi_j = mu * sum { pi_m : m in [j+1, min(j+N, K)], strict: m >= N }
 * from pi_K downwards: every term is positive, so pi_K keeps full relative
 * accuracy even below 1e-300 (it is also returned as a logarithm). Below the
 * top boundary the recursion has constant coefficients; as soon as the
 * ratio pi_j / pi_{j+1} has settled to machine precision (the dominant root
 * of lambda = mu sum_{k=1..N} w^k took over) the rest of the sum is a
 * geometric series summed in closed form, so the cost is usually far below
 * O(K). bulkq_loss_full() runs the plain O(K) recursion, and
 * bulkq_loss_ctmc() builds the same queue as a stochastic reward net and
 * solves the general CTMC - both exist to check bulkq_loss().
 */
#ifndef RXB_SOLVER_BULKQ_H
#define RXB_SOLVER_BULKQ_H

#include <stdbool.h>
#include <stdint.h>

#include "rxb/measure.h"
#include "solver/ctmc.h"
#include "solver/srn.h"

struct bulkq_params {
	double arrival_per_s;	/* lambda, packets per second, >= 0 */
	double service_per_s;	/* mu, batches per second, > 0 */
	uint32_t queue_pkts;	/* K >= 1 */
	uint32_t batch_pkts;	/* N >= 1 (strict: N <= K) */
	enum rxb_batch_rule rule;
};

struct bulkq_result {
	double loss;		/* pi_K (0 when it underflows: see ln_loss) */
	double ln_loss;		/* ln pi_K; -inf when lambda = 0 */
	double pass;		/* 1 - pi_K, computed without cancellation */
	double rel_err;		/* estimated bound on the relative error of loss */
	uint32_t steps;		/* states visited by the exact recursion */
	bool tail;		/* the geometric tail was used */
};

/*
 * Returns 0, or -EINVAL for bad parameters, -ERANGE when mu N / lambda is
 * beyond 1e100 (the loss is then below exp(-K/N * 230); not a use case).
 */
int bulkq_loss(const struct bulkq_params *p, struct bulkq_result *r);
int bulkq_loss_full(const struct bulkq_params *p, struct bulkq_result *r);

/*
 * A finite burst into the queue (docs/model.md §3.2). A round of RBUDP is a
 * burst of n arrivals into a queue that starts empty; the expected number
 * of them lost is, once n is long against the queue's relaxation,
 *
 *	E[lost_n] = n l - c + o(1),	c = sum_{m=0}^{K-1} g_m P(Q >= m),
 *
 * with l = pi_K and g_m = lambda pi_K E_m[time to reach m + 1]: the
 * expected extra loss of starting with m + 1 rather than m packets queued
 * (0 <= g_m <= 1: one more packet queued costs at most one more loss).
 * Derivation: the chain only moves up one packet at a time, so the time
 * from 0 to K is the sum of those passage times, and the deviation-matrix
 * identity integral (P(Q(t) = K | Q(0) = 0) - pi_K) dt = pi_K (E_pi tau_K -
 * E_0 tau_K) gives the loss deficit over a burst of fixed *duration*,
 * sum_m g_m P(Q > m). A burst of a fixed *number* of arrivals loses less
 * by E_pi[g_Q; Q < K] more (an arrival that came early - one more in the
 * same time - adds g_Q to the later losses; summing that covariance over
 * the earlier gaps), which turns P(Q > m) into P(Q >= m). The g_m follow
 * upwards from
 *	lambda g_m = lambda pi_K + mu_m sum_{j=max(0,m-N)}^{m-1} g_j
 * (mu_m = mu where a service can fire, else 0), all terms positive.
 * c <= E[Q] + 1 - l; in heavy overload c -> K (every queued packet displaces
 * a later one: the fluid n (1 - C/lambda) - K); for M/M/1/K at lambda = mu,
 * c = K (K + 5) / (6 (K + 1)), about E[Q] / 3.
 */
struct bulkq_burst_result {
	double loss;		/* pi_K from this pass (underflows to 0 below ~1e-308) */
	double mean_queue_pkts;	/* E[Q] */
	double absorb_pkts;	/* c, packets (a burst of n arrivals loses n l - c) */
	double max_extra_loss;	/* max g_m: <= 1 up to rounding (a check) */
};

/* Doubles of scratch bulkq_burst() needs for a queue of @k packets. */
#define BULKQ_BURST_WORK(k)	(2 * ((size_t)(k) + 1))

/*
 * O(K): a downward cut recursion (as bulkq_loss_full()) keeps
 * P(Q > m) / P(Q >= m) per state in @work (BULKQ_BURST_WORK(K) doubles,
 * the caller's), then one upward pass gives P(Q > m), E[Q], g and c.
 * Above capacity (mu N < lambda) both passes stop where P(Q >= m) is 1 to
 * double precision and g has settled, and add the rest in closed form: a
 * deep buffer far above capacity costs a few hundred states, not K.
 * Returns 0, -EINVAL (as bulkq_loss()) or -ERANGE (mu N / lambda > 1e100).
 * With lambda = 0 everything is 0.
 */
int bulkq_burst(const struct bulkq_params *p, double *work,
		struct bulkq_burst_result *r);

/*
 * The same queue as a net: place "queue"; transition "arrive" (rate lambda,
 * output arc 1, inhibitor arc K) and "serve" (rate mu; strict: input arc N;
 * partial: input arc of marking-dependent multiplicity min(n, N) and guard
 * n >= 1). Explore it with @p as the context.
 */
int bulkq_net_build(struct srn_net *net, const struct bulkq_params *p);

/* pi_K from the general path: net -> reachability -> CTMC steady state. */
int bulkq_loss_ctmc(const struct bulkq_params *p, const struct ctmc_opts *o,
		    struct bulkq_result *r, struct ctmc_stat *st);

#endif
