/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stochastic reward nets: a small description language and the builder of
 * the CTMC of reachable markings.
 *
 * A net has places (with an initial marking) and timed transitions. Each
 * transition has input, output and inhibitor arcs with a multiplicity that
 * is a constant or a function of the marking, an optional guard, and a rate
 * that is a constant or a function of the marking. A transition is enabled
 * in marking m when every input place p holds >= mult tokens, every
 * inhibitor place holds < mult tokens, the guard holds, and the rate is > 0.
 * Firing removes the input multiplicities and adds the output ones
 * (multiplicities are evaluated in m, before firing).
 *
 * The description holds no pointers to caller data: rate functions and
 * guards receive the marking, the @ctx passed to srn_explore() and the
 * transition's integer @arg (e.g. which CPU it belongs to); multiplicity
 * functions receive the marking, @ctx and the arc's place. So a net can be
 * built once and explored with different parameters.
 *
 * srn_explore() enumerates the markings reachable from one or more initial
 * markings breadth-first, numbering them in discovery order (the initial
 * markings first, in the order given), and builds the CTMC row by row:
 * transitions to the same marking are merged, firings that do not change
 * the marking are dropped. A marking where nothing is enabled is absorbing.
 */
#ifndef RXB_SOLVER_SRN_H
#define RXB_SOLVER_SRN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solver/ctmc.h"

#define SRN_NAME_LEN	32

typedef double (*srn_rate_fn)(const int32_t *m, const void *ctx, int arg);
typedef bool (*srn_guard_fn)(const int32_t *m, const void *ctx, int arg);
/* A marking-dependent multiplicity gets the arc's own place. */
typedef int32_t (*srn_mult_fn)(const int32_t *m, const void *ctx,
			       uint32_t place);

enum srn_arc_kind {
	SRN_ARC_IN = 0,
	SRN_ARC_OUT,
	SRN_ARC_INHIBIT,
};

struct srn_arc {
	uint32_t place;
	enum srn_arc_kind kind;
	int32_t mult;		/* used when mult_fn is NULL */
	srn_mult_fn mult_fn;
};

struct srn_transition {
	char name[SRN_NAME_LEN];
	srn_rate_fn rate_fn;	/* NULL: rate_const */
	double rate_const;	/* per second */
	srn_guard_fn guard;	/* NULL: always true */
	int arg;
	uint32_t first_arc;	/* arcs [first_arc, first_arc + narcs) */
	uint32_t narcs;
};

struct srn_place {
	char name[SRN_NAME_LEN];
	int32_t initial;
};

struct srn_net {
	struct srn_place *places;
	uint32_t nplaces, places_cap;
	struct srn_transition *trans;
	uint32_t ntrans, trans_cap;
	struct srn_arc *arcs;	/* grouped by transition */
	uint32_t narcs, arcs_cap;
};

void srn_init(struct srn_net *net);
void srn_finish(struct srn_net *net);

/* Return the new place/transition index, or a negative errno. */
int srn_add_place(struct srn_net *net, const char *name, int32_t initial);
int srn_add_transition(struct srn_net *net, const char *name,
		       srn_rate_fn rate_fn, double rate_const, int arg);
/*
 * Arcs of transition @t; they must be added right after the transition
 * (before the next srn_add_transition), which keeps them contiguous.
 */
int srn_add_arc(struct srn_net *net, uint32_t t, enum srn_arc_kind kind,
		uint32_t place, int32_t mult, srn_mult_fn mult_fn);
int srn_set_guard(struct srn_net *net, uint32_t t, srn_guard_fn guard);

/* The net's own initial marking into @m (nplaces entries). */
void srn_initial_marking(const struct srn_net *net, int32_t *m);
int srn_place_index(const struct srn_net *net, const char *name);

struct srn_explore_opts {
	uint32_t max_states;	/* 0: 1 << 24 */
};

/* The reachability graph: markings and the CTMC over them. */
struct srn_space {
	uint32_t nplaces;
	uint32_t nstates;
	int32_t *markings;	/* nstates x nplaces, state i at i * nplaces */
	struct ctmc chain;
	/* hash of markings: state + 1 (0 = empty) | hash fingerprint << 32 */
	uint64_t *slots;
	uint32_t nslots;	/* power of two */
	size_t markings_cap;	/* in states */
};

/*
 * Explore from the @ninit markings in @init (ninit x nplaces). Duplicates
 * among them are merged (the first index wins). Errors: -EINVAL (bad net or
 * negative marking), -EDOM (a rate function returned a negative or
 * non-finite rate), -E2BIG (more than max_states markings, or a token count
 * overflow), -ENOMEM.
 */
int srn_explore(const struct srn_net *net, const void *ctx,
		const int32_t *init, uint32_t ninit,
		const struct srn_explore_opts *opts, struct srn_space *sp);
void srn_space_finish(struct srn_space *sp);

static inline const int32_t *srn_marking(const struct srn_space *sp,
					 uint32_t state)
{
	return sp->markings + (size_t)state * sp->nplaces;
}

/* Index of marking @m, or -1 when it was not reached. */
int64_t srn_find(const struct srn_space *sp, const int32_t *m);

/* Bytes held by the space (markings, hash, chain). */
size_t srn_space_bytes(const struct srn_space *sp);

#endif
