/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bottleneck search over rate pieces: bneck_compute() where a stage's
 * inputs depend on the rate they were measured at.
 *
 * The receiver's off-CPU windows are not one property of the host: a
 * receiver that reads at 3 Gb/s sleeps and wakes thousands of times a
 * second, one that reads at 5 Gb/s beside the same co-runners is woken a
 * few hundred times and waits longer each time. Windows met at one rate
 * predict another's loss badly, and a mix of several rates' windows
 * predicts none of them. So each set of stage inputs holds for the rates
 * nearest the rate it was measured at: piece j covers the rates between
 * the geometric midpoints of its measured rate and its neighbours', the
 * lowest piece down to the sweep's minimum, the highest up to the line
 * rate. Each piece is searched as bneck_compute() searches the whole
 * range, with its share of the grid points (at least two), and the rate
 * with the least T over all pieces is the answer.
 */
#ifndef RXB_SOLVER_BNECK_PIECES_H
#define RXB_SOLVER_BNECK_PIECES_H

#include <stdint.h>

#include "solver/bneck.h"

#define BNECK_MAX_PIECES	16

struct bneck_piece {
	double at_bps;				/* the rate its inputs were
						 * measured at, > 0 */
	const struct rxb_stage_inputs *stages;	/* nstages of them */
};

/* Copy the off-CPU windows fields (offcpu_*, wake_*, windows_seen_pps) of @src to @dst. */
void bneck_piece_windows(struct rxb_stage_inputs *dst, const struct rxb_stage_inputs *src);

/*
 * The range of rates piece @j of @npieces (in increasing at_bps) covers
 * within @x's sweep; false where it covers none of it.
 */
bool bneck_piece_range(const struct bneck_piece *p, uint32_t npieces, uint32_t j,
		       const struct bneck_xfer *x, double *lo_bps, double *hi_bps);

/* The piece whose range holds @rate_bps (the nearest in log-rate). */
uint32_t bneck_piece_of(const struct bneck_piece *p, uint32_t npieces, double rate_bps);

/*
 * bneck_compute() over @npieces pieces (1..BNECK_MAX_PIECES, at_bps
 * increasing, else -EINVAL): @res is the result of the piece whose
 * least T is least (its stage figures are that piece's), with the line
 * rate's T and loss from the highest piece, the evaluations summed and
 * the error bounds the worst; its curve is every piece's grid in order
 * (a piece's last rate is the next one's first: the curve steps there),
 * held in @ws until the next call. A piece whose T is infinite
 * everywhere is passed over; -EDOM when every piece's is. *@which gets
 * the index of the chosen piece (may be NULL).
 */
int bneck_compute_pieces(struct bneck_ws *ws, const struct bneck_piece *p,
			 uint32_t npieces, uint32_t nstages, const struct bneck_xfer *x,
			 const struct ctmc_opts *o, struct bneck_result *res,
			 uint32_t *which);

/*
 * bneck_compute_pieces() where the pieces differ only in the receiver's
 * off-CPU windows: piece j is @stages with the windows of @win[j] (the
 * fields bneck_piece_windows() copies) on the last stage, measured at
 * @at_bps[j] (increasing). Everything else on the last stage is
 * @stages', so what was set there after the windows were measured (a
 * socket buffer, predicted vacations) holds in every piece. The pieces'
 * stages are held in @ws.
 */
int bneck_compute_windows(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
			  uint32_t nstages, const struct rxb_stage_inputs *win,
			  const double *at_bps, uint32_t nwin, const struct bneck_xfer *x,
			  const struct ctmc_opts *o, struct bneck_result *res, uint32_t *which);

#endif
