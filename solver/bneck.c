// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Effective bottleneck rate: argmin of T(B) over the sending rate (see
 * bneck.h): the grid sweep, golden-section refinement, and the search for
 * the rate that minimises the expected time. The model is set up by
 * bneck_model.c and evaluated by bneck_eval.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/bneck.h"
#include "solver/bneck_eval.h"

#define GOLDEN_ITERS	60
#define REFINE_REL_WIDTH 1e-7
/*
 * The expected time is searched on this many rates around the plain
 * optimum (robust()), then refined to this relative width: each point
 * costs three evaluations, and at K = 29000 (a 64 MiB buffer) one costs
 * 0.3-0.6 ms.
 */
#define ROBUST_POINTS	32
#define ROBUST_REL_WIDTH 1e-4

int bneck_ws_init(struct bneck_ws *ws, uint32_t max_points)
{
	memset(ws, 0, sizeof(*ws));
	if (max_points < 2)
		return -EINVAL;
	ws->curve = calloc(max_points, sizeof(*ws->curve));
	if (!ws->curve)
		return -ENOMEM;
	ws->cap = max_points;
	return 0;
}

void bneck_ws_finish(struct bneck_ws *ws)
{
	free(ws->curve);
	free(ws->qwork);
	free(ws->stitch);
	free(ws->piece_st);
	memset(ws, 0, sizeof(*ws));
}

const char *bneck_loss_name(enum bneck_loss m)
{
	switch (m) {
	case BNECK_LOSS_QUEUE:
		return "queue";
	case BNECK_LOSS_SPREAD:
		return "spread";
	case BNECK_LOSS_WINDOWS:
		return "windows";
	case BNECK_LOSS_SERVICE:
		return "service";
	}
	return "?";
}

const char *bneck_rounds_name(enum bneck_rounds r)
{
	switch (r) {
	case BNECK_ROUNDS_BURST:
		return "burst";
	case BNECK_ROUNDS_SEED:
		return "seed";
	}
	return "?";
}

/*
 * Golden-section search for the minimum of T on [a, b], starting from the
 * best point known so far; keeps the best evaluation in *best.
 */
static int refine(struct bneck_model *md, double a, double b, double rel_width,
		  struct bneck_eval *best)
{
	const double g = 0.6180339887498949;
	double c = b - g * (b - a), d = a + g * (b - a);
	struct bneck_eval ec, ed;
	int err;

	err = bneck_eval_objective(md, c, &ec);
	if (!err)
		err = bneck_eval_objective(md, d, &ed);
	for (int i = 0; !err && i < GOLDEN_ITERS; i++) {
		if (b - a <= rel_width * b)
			break;
		if (ec.pt.time_s <= ed.pt.time_s) {
			b = d;
			d = c;
			ed = ec;
			c = b - g * (b - a);
			err = bneck_eval_objective(md, c, &ec);
		} else {
			a = c;
			c = d;
			ec = ed;
			d = a + g * (b - a);
			err = bneck_eval_objective(md, d, &ed);
		}
	}
	if (err)
		return err;
	if (ec.pt.time_s < best->pt.time_s)
		*best = ec;
	if (ed.pt.time_s < best->pt.time_s)
		*best = ed;
	return 0;
}

/*
 * With an uncertain rate: the rate that minimises the expected time, from
 * the plain optimum @plain_bps. At each node the time is T(B) of a server
 * f times as fast, whose optimum lies near f x plain_bps; where the
 * three are unimodal their weighted sum has its minimum between the
 * smallest and the largest of theirs. So the expectation is searched on
 * ROBUST_POINTS rates over plain_bps e^(-+2 sqrt3 sd) (twice the nodes'
 * spread, for the scaling being approximate) within the sweep's range,
 * then refined around the best. *best gets the chosen evaluation.
 */
static int robust(struct bneck_model *md, double plain_bps, struct bneck_eval *best)
{
	double spread = exp(2.0 * BNECK_GH3_NODE * md->max_rel_sd);
	double lo = fmax(md->x->min_rate_bps, plain_bps / spread);
	double hi = fmin(md->x->line_rate_bps, plain_bps * spread);
	double step = (hi - lo) / (ROBUST_POINTS - 1), rates[ROBUST_POINTS];
	uint32_t kbest = 0;
	struct bneck_eval ev;
	int err;

	best->pt.time_s = INFINITY;
	md->expect = true;
	for (uint32_t k = 0; k < ROBUST_POINTS; k++) {
		rates[k] = k + 1 == ROBUST_POINTS ? hi : lo + k * step;
		err = bneck_eval_objective(md, rates[k], &ev);
		if (err)
			return err;
		if (ev.pt.time_s < best->pt.time_s) {
			*best = ev;
			kbest = k;
		}
	}
	if (!isfinite(best->pt.time_s))
		return -EDOM;
	lo = rates[kbest ? kbest - 1 : 0];
	hi = rates[kbest + 1 < ROBUST_POINTS ? kbest + 1 : kbest];
	return hi > lo ? refine(md, lo, hi, ROBUST_REL_WIDTH, best) : 0;
}

/* Rate @k of @x's grid, as bneck_compute() sweeps it. */
static double grid_rate(const struct bneck_xfer *x, uint32_t k)
{
	double step = (x->line_rate_bps - x->min_rate_bps) / (x->points - 1);

	return k + 1 == x->points ? x->line_rate_bps : x->min_rate_bps + k * step;
}

/*
 * The time slack's walk (struct bneck_xfer.time_slack_rel): from *@best
 * down @md's grid while the objective stays at most @time_max_s, then
 * bisected between the last grid rate within and the first outside;
 * *@best gets the lowest rate within. @grid: the objective on the grid
 * where the curve is it (else NULL: evaluated). *@bottom: the stretch
 * reached the grid's minimum.
 */
static int slack_down(struct bneck_model *md, const struct bneck_point *grid,
		      double time_max_s, struct bneck_eval *best, bool *bottom)
{
	const struct bneck_xfer *x = md->x;
	double within_bps = best->pt.rate_bps, out_bps = 0.0;
	struct bneck_eval ev;
	uint32_t k = x->points;
	int err;

	while (k > 0 && grid_rate(x, k - 1) >= within_bps)
		k--;
	for (; k > 0; k--) {
		double rate = grid_rate(x, k - 1), t;

		if (grid) {
			t = grid[k - 1].time_s;
		} else {
			err = bneck_eval_objective(md, rate, &ev);
			if (err)
				return err;
			t = ev.pt.time_s;
		}
		if (!(t <= time_max_s)) {
			out_bps = rate;
			break;
		}
		within_bps = rate;
	}
	*bottom = k == 0;
	for (int i = 0; !*bottom && i < GOLDEN_ITERS; i++) {
		double mid = 0.5 * (out_bps + within_bps);

		if (within_bps - out_bps <= REFINE_REL_WIDTH * within_bps)
			break;
		err = bneck_eval_objective(md, mid, &ev);
		if (err)
			return err;
		if (ev.pt.time_s <= time_max_s)
			within_bps = mid;
		else
			out_bps = mid;
	}
	if (within_bps == best->pt.rate_bps)
		return 0;
	return bneck_eval_objective(md, within_bps, best);
}

/*
 * @best into @res: the chosen point again with burst rounds, its queue
 * figures computed in full.
 */
static int finish(struct bneck_model *md, struct bneck_eval *best, struct bneck_result *res)
{
	int err;

	if (md->x->rounds == BNECK_ROUNDS_BURST) {
		md->burst_always = true;
		err = bneck_eval_objective(md, best->pt.rate_bps, best);
		if (err)
			return err;
	}
	res->rate_bps = best->pt.rate_bps;
	res->loss = best->pt.loss;
	res->ln_loss = best->pt.ln_loss;
	res->time_s = best->pt.time_s;
	res->pause_fraction = 1.0 - best->send_frac;
	res->breakdown = best->t;
	for (uint32_t i = 0; i < md->nstages; i++) {
		res->stage[i].arrival_per_s = best->stage_lambda[i];
		res->stage[i].loss = best->stage_loss[i];
		res->stage[i].absorb_pkts = best->stage_absorb[i];
		res->stage[i].mean_queue_pkts = best->stage_meanq[i];
	}
	res->loss_rel_err = md->worst_rel_err;
	res->evaluations = md->evaluations;
	return 0;
}

int bneck_compute_down(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		       uint32_t nstages, const struct bneck_xfer *x,
		       const struct ctmc_opts *o, double from_bps, double time_max_s,
		       struct bneck_result *res, bool *bottom)
{
	struct bneck_model md = { .st = stages, .nstages = nstages, .x = x };
	struct bneck_eval best;
	int err;

	*bottom = false;
	err = bneck_model_setup(&md, ws, o, res);
	if (err)
		return err;
	if (!(from_bps >= x->min_rate_bps && from_bps <= x->line_rate_bps))
		return -EINVAL;
	md.expect = md.max_rel_sd > 0.0 && x->loss_model != BNECK_LOSS_SPREAD;
	err = bneck_eval_objective(&md, from_bps, &best);
	if (err)
		return err;
	if (!(best.pt.time_s <= time_max_s))
		return -ERANGE;
	res->least_rate_bps = from_bps;
	res->least_time_s = best.pt.time_s;
	err = slack_down(&md, NULL, time_max_s, &best, bottom);
	if (!err)
		err = finish(&md, &best, res);
	return err;
}

int bneck_eval_at(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, double rate_bps, struct bneck_at *out)
{
	struct bneck_model md = { .st = stages, .nstages = nstages, .x = x };
	struct bneck_result res;
	struct bneck_eval ev;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(rate_bps > 0.0) || !isfinite(rate_bps))
		return -EINVAL;
	err = bneck_model_setup(&md, ws, o, &res);
	if (err)
		return err;
	md.expect = md.max_rel_sd > 0.0;
	err = bneck_eval_objective(&md, rate_bps, &ev);
	if (err)
		return err;
	out->pt = ev.pt;
	for (uint32_t i = 0; i < nstages; i++) {
		out->stage_arrival_per_s[i] = ev.stage_lambda[i];
		out->stage_service_per_s[i] = ev.stage_mu[i];
		out->stage_loss[i] = ev.stage_loss[i];
	}
	return 0;
}

int bneck_compute(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, struct bneck_result *res)
{
	struct bneck_model md = { .st = stages, .nstages = nstages, .x = x };
	struct bneck_eval ev, best = { .pt.time_s = INFINITY };
	uint32_t kbest = 0;
	double lo, hi;
	int err;

	err = bneck_model_setup(&md, ws, o, res);
	if (err)
		return err;

	for (uint32_t k = 0; k < x->points; k++) {
		err = bneck_eval_objective(&md, grid_rate(x, k), &ev);
		if (err)
			return err;
		ws->curve[k] = ev.pt;
		if (ev.pt.time_s < best.pt.time_s) {
			best = ev;
			kbest = k;
		}
	}
	if (!isfinite(best.pt.time_s))
		return -EDOM;	/* nothing ever completes */
	res->line_time_s = ev.pt.time_s;
	res->line_loss = ev.pt.loss;

	lo = kbest ? ws->curve[kbest - 1].rate_bps : x->min_rate_bps;
	hi = kbest + 1 < x->points ? ws->curve[kbest + 1].rate_bps
				   : x->line_rate_bps;
	if (md.max_rel_sd > 0.0 && x->loss_model != BNECK_LOSS_SPREAD) {
		/*
		 * An uncertain rate: the plain optimum only centres robust().
		 * The expectation at the line rate, then the rate that
		 * minimises it. Every loss model but `spread` (whose
		 * objective is its own expectation over the drain) scales
		 * its drains by the node's factor: the windows' and the
		 * quota phases' c too (bneck_model_on_drain()).
		 */
		md.expect = true;
		err = bneck_eval_objective(&md, x->line_rate_bps, &ev);
		if (err)
			return err;
		res->line_time_s = ev.pt.time_s;
		err = robust(&md, best.pt.rate_bps, &best);
		if (err)
			return err;
	} else if (hi > lo) {
		err = refine(&md, lo, hi, REFINE_REL_WIDTH, &best);
		if (err)
			return err;
	}
	res->least_rate_bps = best.pt.rate_bps;
	res->least_time_s = best.pt.time_s;
	if (x->time_slack_rel > 0.0) {
		bool bottom;

		err = slack_down(&md, md.expect ? NULL : ws->curve,
				 best.pt.time_s * (1.0 + x->time_slack_rel), &best, &bottom);
		if (err)
			return err;
	}
	err = finish(&md, &best, res);
	if (err)
		return err;
	if (res->rate_bps == res->least_rate_bps)
		res->least_time_s = res->time_s;	/* its burst figures in full */
	res->npoints = x->points;
	res->curve = ws->curve;
	return 0;
}
