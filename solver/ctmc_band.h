/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Direct solvers for chains whose rate matrix is banded in some order of
 * the states (solver/ctmc_graph.h): birth-death chains (bandwidth 1),
 * quasi-birth-death chains (block tridiagonal: bandwidth below twice the
 * level size), bulk queues (bandwidth = the batch size).
 *
 * Both solvers eliminate states from the last to the first, like dense
 * GTH; with lower bandwidth l and upper u the fill stays inside the band,
 * so the work is O(m l u) and the memory O(m (l + u + 1)):
 *
 *   ctmc_band_steady()  GTH state reduction (Grassmann, Taksar and Heyman,
 *                       "Regenerative analysis and steady state
 *                       distributions for Markov chains"). Every operation
 *                       adds or multiplies positive numbers, so each pi_i
 *                       keeps its relative accuracy however small it is;
 *                       in the chain's own order it does exactly the
 *                       floating-point operations of the dense GTH.
 *   ctmc_band_absorb()  mean times to absorption tau = (-Q_TT)^-1 1 by the
 *                       same reduction on the transient block: the matrix
 *                       is kept as its off-diagonal rates and each state's
 *                       rate into absorption (never a diagonal, which
 *                       elimination would update by subtraction), as in
 *                       Alfa, Xue and Ye, "Entrywise perturbation theory
 *                       for diagonally dominant M-matrices with
 *                       applications". Subtraction-free, so every tau_i has
 *                       a componentwise relative error bound.
 *
 * ctmc_band_pick() chooses the ordering (the chain's own, or Cuthill-McKee
 * when that is narrower) and says whether the band is worth it.
 */
#ifndef RXB_SOLVER_CTMC_BAND_H
#define RXB_SOLVER_CTMC_BAND_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/ctmc.h"
#include "solver/ctmc_graph.h"

/*
 * A band solve is chosen when its work m (l + 1) (u + 1) is at most this
 * many times the work of one Gauss-Seidel sweep (nnz + n): the iterative
 * solvers need tens to tens of thousands of sweeps on the project's
 * chains, and their count cannot be known beforehand.
 */
#define CTMC_BAND_WORK_SWEEPS	64

/* ...and its band holds at most this many doubles (1 GiB). */
#define CTMC_BAND_MAX_ENTRIES	(1ull << 27)

/*
 * The ordering to use for the states (all of them, or the transient ones
 * when @transient_only) into @o, and whether a band solve pays (*worth).
 * With @force the narrower ordering is returned whatever its cost, and
 * -E2BIG only when the band would exceed CTMC_BAND_MAX_ENTRIES.
 */
int ctmc_band_pick(const struct ctmc *q, const struct ctmc_graph_csc *t,
		   bool transient_only, bool force, struct ctmc_graph_order *o,
		   bool *worth);

/* The a-priori componentwise relative error bound of both solvers. */
double ctmc_band_err_bound(const struct ctmc_graph_order *o);

/*
 * pi Q = 0, sum pi = 1 of an irreducible chain in the order @o (over all
 * states). -EINVAL if a state cannot leave to the states before it once
 * the later ones are reduced (the chain is reducible).
 */
int ctmc_band_steady(const struct ctmc *q, const struct ctmc_graph_order *o,
		     double *pi);

/*
 * Mean time to absorption from every state into @tau (q->n entries, 0 for
 * absorbing states), @o over the transient states. -EINVAL when a
 * transient state cannot reach absorption.
 */
int ctmc_band_absorb(const struct ctmc *q, const struct ctmc_graph_order *o,
		     double *tau);

#endif
