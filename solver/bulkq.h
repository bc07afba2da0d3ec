/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The M/M[N]/1/K bulk-service loss queue (DESIGN §5.2).
 *
 * Packets arrive as a Poisson stream of rate lambda and are blocked when K
 * are queued. A single server completes services at rate mu (batches per
 * second); a service removes min(n, N) packets (rule "partial": coalescing
 * with a timeout) or, with rule "strict" (the seeds' SPN, an input arc of
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
