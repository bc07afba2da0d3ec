/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Export of an explored net's CTMC in PRISM's explicit format, so a result
 * can be checked with a standard model checker:
 *
 *	prism -importmodel P.tra,sta,lab -ctmc -importstaterewards P.srew \
 *	      -pf 'R=? [ F "absorbed" ]'
 *
 * .tra  "n m", then "i j rate" per transition (rates per second)
 * .sta  "(v1,...,vk)", then "i:(x1,...,xk)"; the variables are "start"
 *       followed by the net's places; states are numbered in lexicographic
 *       order of their values, as PRISM numbers them
 * .lab  0="init" 1="deadlock" 2="absorbed", then "i: labels" per labelled
 *       state; "absorbed" (= "deadlock") are the states without transitions
 * .srew "n m", then "i 1" for every state that is neither absorbing nor the
 *       start state: the reward accumulated until absorption is the time
 *
 * A CTMC has one initial state. When an initial distribution alpha is
 * given (the tagged-customer chain starts in the steady state of the
 * background net), an extra state with start = 0 (all places 0) leads to
 * state i at rate q alpha_i, and is the "init" state. Its reward is 0, so
 * R=? [F "absorbed"] from it is exactly E[R]; P=? [F<=t "absorbed"] is F(t)
 * delayed by an exponential time of mean 1/q (q is chosen large: see
 * prism_export.start_rate_per_s). Without alpha, state 0 of the space is
 * "init" and start = 1 everywhere.
 *
 * Text goes through the caller's writer; the library does no I/O. The
 * writer returns 0 or a negative errno, which is passed back.
 */
#ifndef RXB_SOLVER_PRISM_H
#define RXB_SOLVER_PRISM_H

#include <stddef.h>

#include "solver/srn.h"

typedef int (*prism_write_fn)(void *wctx, const char *buf, size_t len);

struct prism_export {
	const struct srn_net *net;	/* variable names */
	const struct srn_space *sp;
	const double *alpha;		/* NULL, or sp->nstates probabilities */
	double start_rate_per_s;	/* q, used with alpha */
};

/*
 * The state numbering shared by all four files; call first, then
 * prism_write() for each file, then prism_finish().
 */
struct prism_order {
	uint32_t n;		/* exported states (space + start state) */
	uint32_t *old_of;	/* new index -> space state (UINT32_MAX: start) */
	uint32_t *new_of;	/* space state -> new index */
	uint32_t start;		/* new index of the start state, or UINT32_MAX */
	uint64_t ntrans;	/* exported transitions */
};

int prism_prepare(const struct prism_export *e, struct prism_order *ord);
void prism_finish(struct prism_order *ord);

/* The four files, in the order above. */
enum prism_file { PRISM_TRA, PRISM_STA, PRISM_LAB, PRISM_SREW, PRISM_FILES };

/* The file's extension without the dot: "tra", "sta", "lab", "srew" ("?" for none). */
const char *prism_file_ext(enum prism_file f);

/* File @f through @w. 0, -EINVAL for no such file, or the first error of @w. */
int prism_write(const struct prism_export *e, const struct prism_order *ord,
		enum prism_file f, prism_write_fn w, void *wctx);

#endif
