/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How the windows of one log2 slot lie within it, for solver/offwin.c
 * (docs/model.md §2.2).
 *
 * Without the slot's moments its windows are log-uniform over the slot
 * (density ∝ 1/w). With its mean m and standard deviation s, they take
 * the truncated exponential e^(−β t)/Z, t the distance from one edge, that
 * has those two moments:
 *  - where m ± √3 s fits in the slot, β = 0: uniform on m ± √3 s;
 *  - where it would pass an edge, the density falls away from that edge
 *    (the nearer, in units of s): t on [0, L] with β L = κ set by
 *    (m − edge)/s, which runs from √3 (κ = 0, uniform) to 1 (κ → ∞, the
 *    exponential), and L by the mean; waits crowded above a scheduler
 *    tick, as at the foot of their slot, keep their tail this way where a
 *    uniform shrunk into the slot would lose it;
 *  - where (m − edge)/s <= 1 no such law has both moments: the exponential
 *    of the same spread, β = 1/s, over the whole slot.
 * The top of the slot is the longest window where that lies in it above
 * the mean. A piece of one point (s = 0) is all at m.
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_OFFWIN_PIECE_H
#define RXB_SOLVER_OFFWIN_PIECE_H

#include <stdbool.h>
#include <stddef.h>

#include "solver/offwin.h"

enum offwin_law {
	OFFWIN_LAW_LOGUNIFORM,	/* density ∝ 1/w on [a, b] */
	OFFWIN_LAW_FALLING,	/* density ∝ e^(−β t) on [a, b], t from one edge */
};

struct offwin_piece {
	double a, b;		/* its span; b <= a: all at a */
	enum offwin_law law;
	double beta;		/* FALLING: β >= 0 per second; 0: uniform */
	bool from_top;		/* FALLING: t = b − w (else t = w − a) */
	double norm;		/* FALLING: 1 / ∫ e^(−β t) dt over the span */
};

/*
 * Both histograms of an offwin_in as pieces, slot by slot: the windows
 * after preemption, and the waits after a wakeup cut at the longest.
 * They do not depend on the rate, and building a falling piece fits its κ
 * by bisection: a solve that built them at every rate spent about half
 * its time doing so.
 */
struct offwin_pieces {
	struct offwin_piece win[OFFWIN_MAX_SLOTS];	/* where count > 0 */
	struct offwin_piece wake[OFFWIN_MAX_SLOTS];	/* where wake_count > 0 */
};

/*
 * The piece of each slot of @count (@nslots <= OFFWIN_MAX_SLOTS) that has
 * a window into @pc[slot], from the slots' moments (@mean_s, @sd_s; NULL:
 * none measured) and the longest window @cap_s (offwin_piece_of_slot()).
 */
void offwin_pieces_of_hist(struct offwin_piece *pc, const double *count,
			   const double *mean_s, const double *sd_s, size_t nslots,
			   double cap_s);

/*
 * The pieces of @in's histograms into @pcs: what offwin_eval_loss() and
 * offwin_eval_round() build for themselves when in->pieces is NULL.
 */
void offwin_pieces_init(struct offwin_pieces *pcs, const struct offwin_in *in);

/*
 * Slot @r's piece from its mean and sd (seconds; a mean outside the slot:
 * not measured, log-uniform) and the longest window @cap_s (<= 0: none).
 */
void offwin_piece_of_slot(struct offwin_piece *pc, size_t r, double mean_s, double sd_s,
			  double cap_s);

/* Where @w puts all of @pc's windows at one point (or its span is one): it; else −1. */
double offwin_piece_point(const struct offwin_piece *pc, enum offwin_within w);

/* E[(W − x)+], P(W > x) and E[(W² − x²)/2; W > x] for W on @pc as @w places it. */
double offwin_piece_excess(const struct offwin_piece *pc, double x, enum offwin_within w);
double offwin_piece_tail(const struct offwin_piece *pc, double x, enum offwin_within w);
double offwin_piece_end(const struct offwin_piece *pc, double x, enum offwin_within w);

/* A falling piece's density at @w (per second). */
double offwin_piece_density(const struct offwin_piece *pc, double w);

/*
 * A falling piece's span for a quadrature, the far tail past 40 e-foldings
 * left out (lo, hi), and its e-folding points 1, 3, 7, 15 / β inside it,
 * ascending, into @brk[4]: returns how many.
 */
size_t offwin_piece_quad(const struct offwin_piece *pc, double *lo, double *hi,
			 double brk[4]);

#endif /* RXB_SOLVER_OFFWIN_PIECE_H */
