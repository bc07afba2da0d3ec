// SPDX-License-Identifier: GPL-2.0-or-later
/* The bottleneck search over rate pieces. See bneck_pieces.h. */
#include "solver/bneck_pieces.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool pieces_valid(const struct bneck_piece *p, uint32_t npieces, uint32_t nstages)
{
	if (!npieces || npieces > BNECK_MAX_PIECES || !nstages || nstages > BNECK_MAX_STAGES)
		return false;
	for (uint32_t j = 0; j < npieces; j++) {
		if (!p[j].stages || !(p[j].at_bps > 0.0) || !isfinite(p[j].at_bps))
			return false;
		if (j && !(p[j].at_bps > p[j - 1].at_bps))
			return false;
	}
	return true;
}

void bneck_piece_windows(struct rxb_stage_inputs *dst, const struct rxb_stage_inputs *src)
{
	dst->offcpu_per_s = src->offcpu_per_s;
	memcpy(dst->offcpu_hist, src->offcpu_hist, sizeof(dst->offcpu_hist));
	memcpy(dst->offcpu_mean_s, src->offcpu_mean_s, sizeof(dst->offcpu_mean_s));
	memcpy(dst->offcpu_sd_s, src->offcpu_sd_s, sizeof(dst->offcpu_sd_s));
	dst->offcpu_gap_s = src->offcpu_gap_s;
	dst->wake_per_s = src->wake_per_s;
	memcpy(dst->wake_hist, src->wake_hist, sizeof(dst->wake_hist));
	memcpy(dst->wake_mean_s, src->wake_mean_s, sizeof(dst->wake_mean_s));
	memcpy(dst->wake_sd_s, src->wake_sd_s, sizeof(dst->wake_sd_s));
	dst->wake_max_s = src->wake_max_s;
	dst->windows_seen_pps = src->windows_seen_pps;
}

bool bneck_piece_range(const struct bneck_piece *p, uint32_t npieces, uint32_t j,
		       const struct bneck_xfer *x, double *lo_bps, double *hi_bps)
{
	double lo = x->min_rate_bps, hi = x->line_rate_bps;

	if (j > 0)
		lo = fmax(lo, sqrt(p[j - 1].at_bps * p[j].at_bps));
	if (j + 1 < npieces)
		hi = fmin(hi, sqrt(p[j].at_bps * p[j + 1].at_bps));
	*lo_bps = lo;
	*hi_bps = hi;
	return lo < hi;
}

uint32_t bneck_piece_of(const struct bneck_piece *p, uint32_t npieces, double rate_bps)
{
	uint32_t j = 0;

	while (j + 1 < npieces && rate_bps > sqrt(p[j].at_bps * p[j + 1].at_bps))
		j++;
	return j;
}

static int stitch_reserve(struct bneck_ws *ws, uint32_t n)
{
	struct bneck_point *s;

	if (n <= ws->stitch_cap)
		return 0;
	s = realloc(ws->stitch, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	ws->stitch = s;
	ws->stitch_cap = n;
	return 0;
}

/* Piece @j's share of @x's grid points, at least two. */
static uint32_t piece_points(const struct bneck_xfer *x, double lo, double hi)
{
	double share = (hi - lo) / (x->line_rate_bps - x->min_rate_bps);
	uint32_t n = (uint32_t)lround(x->points * share);

	return n < 2 ? 2 : (n > x->points ? x->points : n);
}

/* Fold piece @j's result @r into the combined @res. */
static void fold(struct bneck_result *res, const struct bneck_result *r, bool *have,
		 uint32_t j, uint32_t *which)
{
	uint32_t evaluations = res->evaluations + r->evaluations;
	double loss_err = fmax(res->loss_rel_err, r->loss_rel_err);
	double model_err = fmax(res->model_rel_err, r->model_rel_err);

	if (!*have || r->time_s < res->time_s) {
		*res = *r;
		*which = j;
		*have = true;
	}
	res->evaluations = evaluations;
	res->loss_rel_err = loss_err;
	res->model_rel_err = model_err;
	/* Pieces come in increasing rate: the last has the line rate. */
	res->line_time_s = r->line_time_s;
	res->line_loss = r->line_loss;
}

/* Piece @j's search within @x: its range and share of the grid, no slack. */
static bool piece_xfer(const struct bneck_piece *p, uint32_t npieces, uint32_t j,
		       const struct bneck_xfer *x, struct bneck_xfer *xj)
{
	*xj = *x;
	xj->time_slack_rel = 0.0;
	if (!bneck_piece_range(p, npieces, j, x, &xj->min_rate_bps, &xj->line_rate_bps))
		return false;
	xj->points = piece_points(x, xj->min_rate_bps, xj->line_rate_bps);
	return true;
}

/*
 * The time slack over the pieces: from the least T's rate in piece
 * *@which down while T stays within the slack of it, on into the piece
 * below where a piece's stretch reaches its bottom (T steps where the
 * pieces meet: the walk stops there if the lower piece's top is over).
 * @res keeps its line rate, curve and least; the rest is the lowest
 * rate's, and *@which its piece.
 */
static int slack_pieces(struct bneck_ws *ws, const struct bneck_piece *p, uint32_t npieces,
			uint32_t nstages, const struct bneck_xfer *x, const struct ctmc_opts *o,
			struct bneck_result *res, uint32_t *which)
{
	double time_max_s = res->least_time_s * (1.0 + x->time_slack_rel);
	double from_bps = res->least_rate_bps;
	uint32_t evaluations = res->evaluations;
	struct bneck_result r, keep = *res;
	bool bottom = true;

	for (int64_t j = *which; j >= 0 && bottom; j--) {
		struct bneck_xfer xj;
		int err;

		if (!piece_xfer(p, npieces, (uint32_t)j, x, &xj))
			continue;
		if (from_bps > xj.line_rate_bps)
			from_bps = xj.line_rate_bps;
		err = bneck_compute_down(ws, p[j].stages, nstages, &xj, o, from_bps,
					 time_max_s, &r, &bottom);
		if (err == -ERANGE || err == -EDOM)
			break;	/* the piece below starts over the slack */
		if (err)
			return err;
		evaluations += r.evaluations;
		*res = r;
		*which = (uint32_t)j;
		from_bps = xj.min_rate_bps;
	}
	res->least_rate_bps = keep.least_rate_bps;
	res->least_time_s = keep.least_time_s;
	res->line_time_s = keep.line_time_s;
	res->line_loss = keep.line_loss;
	res->loss_rel_err = fmax(res->loss_rel_err, keep.loss_rel_err);
	res->model_rel_err = fmax(res->model_rel_err, keep.model_rel_err);
	res->evaluations = evaluations;
	res->npoints = keep.npoints;
	res->curve = keep.curve;
	return 0;
}

int bneck_compute_pieces(struct bneck_ws *ws, const struct bneck_piece *p,
			 uint32_t npieces, uint32_t nstages, const struct bneck_xfer *x,
			 const struct ctmc_opts *o, struct bneck_result *res,
			 uint32_t *which)
{
	uint32_t n = 0, chosen = 0;
	bool have = false, line_inf = false;
	int err;

	memset(res, 0, sizeof(*res));
	if (!pieces_valid(p, npieces, nstages))
		return -EINVAL;
	err = bneck_check_inputs(p[0].stages, nstages, x);
	if (err)
		return err;
	/* Each piece rounds its share up by at most 1/2 or takes 2. */
	err = stitch_reserve(ws, x->points + 3 * npieces);
	if (err)
		return err;
	err = -EDOM;
	for (uint32_t j = 0; j < npieces; j++) {
		struct bneck_xfer xj;
		struct bneck_result r;
		int e;

		if (!piece_xfer(p, npieces, j, x, &xj))
			continue;
		e = bneck_compute(ws, p[j].stages, nstages, &xj, o, &r);
		if (e == -EDOM) {
			line_inf = xj.line_rate_bps == x->line_rate_bps;
			continue;
		}
		if (e)
			return e;
		if (n + r.npoints > ws->stitch_cap)
			return -ERANGE;
		memcpy(ws->stitch + n, r.curve, r.npoints * sizeof(*ws->stitch));
		n += r.npoints;
		fold(res, &r, &have, j, &chosen);
	}
	if (!have) {
		memset(res, 0, sizeof(*res));
		return err;
	}
	if (line_inf) {
		res->line_time_s = INFINITY;
		res->line_loss = 1.0;
	}
	res->npoints = n;
	res->curve = ws->stitch;
	if (x->time_slack_rel > 0.0) {
		err = slack_pieces(ws, p, npieces, nstages, x, o, res, &chosen);
		if (err) {
			memset(res, 0, sizeof(*res));
			return err;
		}
	}
	if (which)
		*which = chosen;
	return 0;
}

int bneck_compute_windows(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
			  uint32_t nstages, const struct rxb_stage_inputs *win,
			  const double *at_bps, uint32_t nwin, const struct bneck_xfer *x,
			  const struct ctmc_opts *o, struct bneck_result *res, uint32_t *which)
{
	struct bneck_piece p[BNECK_MAX_PIECES];

	memset(res, 0, sizeof(*res));
	if (!nwin || nwin > BNECK_MAX_PIECES || !nstages || nstages > BNECK_MAX_STAGES)
		return -EINVAL;
	if (!ws->piece_st) {
		ws->piece_st = calloc(BNECK_MAX_PIECES, sizeof(*ws->piece_st));
		if (!ws->piece_st)
			return -ENOMEM;
	}
	for (uint32_t j = 0; j < nwin; j++) {
		memcpy(ws->piece_st[j], stages, nstages * sizeof(*stages));
		bneck_piece_windows(&ws->piece_st[j][nstages - 1], &win[j]);
		p[j].at_bps = at_bps[j];
		p[j].stages = ws->piece_st[j];
	}
	return bneck_compute_pieces(ws, p, nwin, nstages, x, o, res, which);
}
