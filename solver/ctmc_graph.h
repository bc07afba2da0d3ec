/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The transition graph of a CTMC (solver/ctmc.h): its transpose, searches
 * over it, and the bandwidth of its rate matrix under an ordering of the
 * states, with a Cuthill-McKee ordering that narrows it.
 *
 * The bandwidth decides whether a chain is solved directly by banded
 * elimination (solver/ctmc_band.h): a birth-death chain is tridiagonal, a
 * quasi-birth-death chain with levels of b states has bandwidth < 2b, and
 * both costs O(n b^2). The states can come in any order: when the order
 * given is wide, Cuthill-McKee (breadth-first from a pseudo-peripheral
 * state, neighbours by increasing degree) recovers the level structure.
 */
#ifndef RXB_SOLVER_CTMC_GRAPH_H
#define RXB_SOLVER_CTMC_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/ctmc.h"

/* The transpose (column access) of the off-diagonal part. */
struct ctmc_graph_csc {
	uint32_t *col_ptr;
	uint32_t *row;
	double *rate;
};

int ctmc_graph_csc_build(const struct ctmc *q, struct ctmc_graph_csc *t);
void ctmc_graph_csc_finish(struct ctmc_graph_csc *t);

/*
 * Mark (seen[i] = 1) every state reachable from the @nseed seeds, following
 * rows of @q (forward, @t NULL) or columns of @t (backward). @stack has
 * room for q->n states. Returns how many were newly marked.
 */
uint32_t ctmc_graph_reach(const struct ctmc *q, const struct ctmc_graph_csc *t,
			  const uint32_t *seeds, uint32_t nseed, uint8_t *seen,
			  uint32_t *stack);

/* Every state reaches every other (forward and backward search from 0). */
int ctmc_graph_irreducible(const struct ctmc *q, const struct ctmc_graph_csc *t,
			   bool *irreducible);

/*
 * An ordering of a subset of the states: the states with exit rate > 0
 * when @transient_only (the transient block of an absorbing chain), all of
 * them otherwise. new_of[i] is state i's position (UINT32_MAX when it is
 * not in the subset), old_of[k] the state at position k.
 */
struct ctmc_graph_order {
	uint32_t m;		/* states in the subset */
	uint32_t *old_of;	/* m entries */
	uint32_t *new_of;	/* q->n entries */
	uint32_t lower;		/* max (new_of[i] - new_of[j]) over rates i -> j */
	uint32_t upper;		/* max (new_of[j] - new_of[i]) */
	bool reordered;		/* Cuthill-McKee, not the chain's own order */
};

/* The subset in the chain's own order, with its bandwidths. */
int ctmc_graph_order_natural(const struct ctmc *q, bool transient_only,
			     struct ctmc_graph_order *o);
/*
 * A lower bound on max(lower, upper) in every ordering of the subset: the
 * states within distance k of one state (in the symmetrised graph) take
 * at least that many positions, and k steps span at most 2 k b of them,
 * so b >= (ball_k - 1) / (2 k) (Chvatal's density bound). One
 * breadth-first search, so a wide chain is known before any reordering;
 * it stops once the bound exceeds @enough (what the caller can use).
 */
int ctmc_graph_band_bound(const struct ctmc *q, const struct ctmc_graph_csc *t,
			  bool transient_only, uint32_t enough, uint32_t *bound);

/*
 * The subset in Cuthill-McKee order (each connected component of the
 * symmetrised graph in turn), with its bandwidths.
 */
int ctmc_graph_order_cm(const struct ctmc *q, const struct ctmc_graph_csc *t,
			bool transient_only, struct ctmc_graph_order *o);
void ctmc_graph_order_finish(struct ctmc_graph_order *o);

#endif
