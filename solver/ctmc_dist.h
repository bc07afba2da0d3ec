/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The distribution of the time to absorption of a CTMC from an initial
 * distribution alpha, by uniformization, for any number of times.
 *
 * With Lambda >= the exit rate of every transient state, P = I + Q / Lambda
 * and the transient masses m_k = alpha P^k 1_T of the uniformized chain,
 *	1 - F(t) = sum_k Poisson(k; Lambda t) m_k,
 * a sum of positive terms. The masses are computed once, on demand, up to
 * the largest k a query needs: F at many times (a quantile's bisection,
 * several quantiles) costs one pass of matrix-vector steps to the largest
 * time, and each query only a Fox-Glynn window of the stored masses.
 *
 * The pass runs on a reduced chain where that pays: the transient states
 * where alpha is below CTMC_DIST_KEEP_REL of its largest value are left
 * out, and the rates into them lead to a trap. Lambda is then the largest
 * exit rate of the states kept, often well below the chain's, and every
 * step is over fewer states. The masses m'_k of the kept states are a lower
 * bound and m'_k + trap_k an upper one (the trap holds what entered the
 * states left out, some of which may still be transient), so the trap's
 * mass is added to every error bound. Should it exceed a tenth of the
 * requested eps, the pass restarts on the whole chain.
 *
 * Once m_k <= 1e-3 eps the later masses are taken as 0 and that m_k
 * (cut_mass) is added to every error bound.
 */
#ifndef RXB_SOLVER_CTMC_DIST_H
#define RXB_SOLVER_CTMC_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/ctmc.h"

#define CTMC_DIST_MAX_STEPS	10000000u
#define CTMC_DIST_KEEP_REL	1e-30

struct ctmc_dist {
	const struct ctmc *full;	/* the caller's chain */
	const double *alpha;		/* the caller's, over full */
	struct ctmc red;		/* the reduced chain, when used */
	bool reduced;
	uint32_t trap;			/* its trap state */
	const struct ctmc *q;		/* the chain stepped: full or &red */
	double lambda;			/* uniformization rate, per second */
	double eps;
	double cut_mass;	/* the mass where the sequence ended, or 0 */
	bool complete;
	uint32_t len;		/* masses computed: m_0 .. m_{len-1} */
	uint32_t cap;
	uint32_t max_steps;	/* more needed: -E2BIG */
	uint32_t restarts;	/* passes restarted on the whole chain */
	double *mass;
	double *v, *nv, *stay;	/* alpha P^(len-1), scratch, 1 - q_i/Lambda */
};

/*
 * @alpha (q->n entries, >= 0) must stay valid until ctmc_dist_finish().
 * @eps: the truncation each query is computed to. @max_steps 0:
 * CTMC_DIST_MAX_STEPS.
 */
int ctmc_dist_init(struct ctmc_dist *d, const struct ctmc *q,
		   const double *alpha, double eps, uint32_t max_steps);
void ctmc_dist_finish(struct ctmc_dist *d);

/*
 * 1 - F(@t_s) into @surv, within @err_bound (absolute: Poisson truncation
 * at the eps given to init, the cut, the trap, rounding) of the exact
 * value. -E2BIG when it needs more than max_steps steps.
 */
int ctmc_dist_survival(struct ctmc_dist *d, double t_s, double *surv,
		       double *err_bound);

#endif
