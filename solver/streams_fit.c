// SPDX-License-Identifier: GPL-2.0-or-later
/* Best-Fitted Coefficients and the stream-count advice. See streams_fit.h. */
#include "solver/streams_fit.h"

#include <math.h>
#include <string.h>

/* The paper's ranking of the models, for ties (streams_fit.h). */
static const enum streams_model preference[] = {
	STREAMS_FULL2, STREAMS_NEWTON, STREAMS_BREAK, STREAMS_LOG, STREAMS_DINDA,
	STREAMS_AVG_ARITH, STREAMS_AVG_GEOM, STREAMS_AVG_QUAD, STREAMS_LOSS, STREAMS_HACKER,
};

_Static_assert(sizeof(preference) / sizeof(preference[0]) == STREAMS_NMODELS - 1,
	       "every model is ranked");

bool streams_fit_points_ok(const struct streams_point *p, int m)
{
	if (m < 1 || m > STREAMS_FIT_MAX_POINTS)
		return false;
	for (int i = 0; i < m; i++) {
		if (!(p[i].n >= 1) || !(p[i].n <= STREAMS_N_LIMIT) || !(p[i].th > 0) ||
		    !isfinite(p[i].th))
			return false;
		if (i && !(p[i].n > p[i - 1].n))
			return false;
	}
	return true;
}

double streams_fit_err(const struct streams_coef *k, const struct streams_point *p, int m)
{
	double s = 0;

	for (int i = 0; i < m; i++) {
		double e = p[i].th - streams_eval(k, p[i].n);	/* eq. 34 */

		s += e * e;
	}
	return sqrt(s / m);
}

/* One combination: its coefficients, checked, and its error if it is the best yet. */
static void try_one(struct streams_bfc *b, enum streams_model model,
		    const struct streams_point *p, int m, double n_max, const int *idx, double x)
{
	struct streams_point q[3];
	struct streams_coef k;
	int np = streams_model_points(model);
	double err;

	for (int i = 0; i < np; i++)
		q[i] = p[idx[i]];
	b->tried++;
	if (streams_coef(model, q, x, &k) != STREAMS_OK) {
		b->undetermined++;
		return;
	}
	/* §5: the propositions spare the error of a curve they rule out. */
	if (streams_check(&k, n_max) != STREAMS_OK) {
		b->rejected++;
		return;
	}
	err = streams_fit_err(&k, p, m);
	if (!isfinite(err)) {
		b->rejected++;
		return;
	}
	if (b->found && !(err < b->err))
		return;
	b->found = true;
	b->coef = k;
	b->err = err;
	memcpy(b->idx, idx, sizeof(b->idx));
}

/* Every exponent of the packet-loss model for one combination, or the combination once. */
static void try_comb(struct streams_bfc *b, enum streams_model model,
		     const struct streams_point *p, int m, double n_max, const int *idx)
{
	static const double xs[STREAMS_FIT_NLOSS_X] = STREAMS_FIT_LOSS_X;

	if (model != STREAMS_LOSS) {
		try_one(b, model, p, m, n_max, idx, NAN);
		return;
	}
	for (int i = 0; i < STREAMS_FIT_NLOSS_X; i++)
		try_one(b, model, p, m, n_max, idx, xs[i]);
}

int streams_fit_bfc(enum streams_model model, const struct streams_point *p, int m,
		    double n_max, struct streams_bfc *out)
{
	int np = streams_model_points(model), idx[3] = { -1, -1, -1 };

	memset(out, 0, sizeof(*out));
	out->err = NAN;
	out->idx[0] = out->idx[1] = out->idx[2] = -1;
	if (!np || !streams_fit_points_ok(p, m) || !(n_max >= 1))
		return -1;
	if (m < np)
		return 0;
	/* The paper's loops: i < j < k over the samples. */
	for (idx[0] = 0; idx[0] < m; idx[0]++) {
		if (np == 1) {
			try_comb(out, model, p, m, n_max, idx);
			continue;
		}
		for (idx[1] = idx[0] + 1; idx[1] < m; idx[1]++) {
			if (np == 2) {
				try_comb(out, model, p, m, n_max, idx);
				continue;
			}
			for (idx[2] = idx[1] + 1; idx[2] < m; idx[2]++)
				try_comb(out, model, p, m, n_max, idx);
		}
	}
	return 0;
}

double streams_fit_confidence(double rel_err, int m, int k)
{
	double fit = 1 - rel_err, held = m > k ? 1 - ldexp(1, k - m) : 0;

	if (!(fit > 0))
		return 0;
	return fmin(fit, 1) * held;
}

/* The chosen model: the smallest error, ties to the earlier in the ranking. */
static enum streams_model choose(const struct streams_fit_result *r, double tie)
{
	enum streams_model best = STREAMS_NONE;

	for (size_t i = 0; i < sizeof(preference) / sizeof(preference[0]); i++) {
		const struct streams_bfc *b = &r->per_model[preference[i]];

		if (!b->found)
			continue;
		if (best == STREAMS_NONE || b->err < r->per_model[best].err - tie)
			best = preference[i];
	}
	return best;
}

/*
 * The advice from the curve: the peak over 1 .. n_max; then, of the n up
 * to the peak (past it more streams only lose) not predicted above the
 * cap, the fewest within the tolerance of the best of them.
 */
static void advise(struct streams_fit_result *r, const struct streams_fit_opts *o)
{
	const struct streams_coef *k = &r->best.coef;
	double best = 0, limit = o->cap > 0 ? o->cap : INFINITY;
	uint32_t n_free;

	r->n_peak = 1;
	r->th_peak = streams_eval(k, 1);
	for (uint32_t n = 2; n <= r->n_max; n++) {
		double t = streams_eval(k, n);

		if (t > r->th_peak) {
			r->th_peak = t;
			r->n_peak = n;
		}
	}
	r->rising = r->n_peak == r->n_max && r->n_max > 1 &&
		    streams_eval(k, r->n_max) > streams_eval(k, r->n_max - 1);
	for (uint32_t n = 1; n <= r->n_peak; n++) {
		double t = streams_eval(k, n);

		if (t <= limit && t > best)
			best = t;
	}
	for (n_free = 1; n_free < r->n_peak &&
	     streams_eval(k, n_free) < (1 - o->tolerance) * r->th_peak; n_free++)
		;
	if (!(best > 0)) {
		/* Even one stream is predicted above the cap. */
		r->n_opt = 1;
		r->th_opt = streams_eval(k, 1);
		r->capped = true;
		return;
	}
	for (r->n_opt = 1; r->n_opt < r->n_peak; r->n_opt++) {
		double t = streams_eval(k, r->n_opt);

		if (t <= limit && t >= (1 - o->tolerance) * best)
			break;
	}
	r->th_opt = streams_eval(k, r->n_opt);
	r->capped = r->n_opt != n_free || streams_eval(k, n_free) > limit;
}

/* No model: the best measured sample, below the cap if any is. */
static void advise_measured(struct streams_fit_result *r, const struct streams_point *p, int m,
			    const struct streams_fit_opts *o)
{
	int best = -1, top = 0;

	for (int i = 0; i < m; i++) {
		if (p[i].th > p[top].th)
			top = i;
		if ((!(o->cap > 0) || p[i].th <= o->cap) && (best < 0 || p[i].th > p[best].th))
			best = i;
	}
	r->capped = best != top && best >= 0;
	if (best < 0)
		best = top;
	r->n_opt = (uint32_t)p[best].n;
	r->th_opt = p[best].th;
	r->th_peak = p[top].th;
	r->n_peak = (uint32_t)p[top].n;
}

int streams_fit_best(const struct streams_point *p, int m, const struct streams_fit_opts *o,
		     struct streams_fit_result *res)
{
	uint32_t models = o->models ? o->models : STREAMS_FIT_ALL;
	double mean = 0, n_max;

	memset(res, 0, sizeof(*res));
	res->best.err = res->rel_err = NAN;
	if (!streams_fit_points_ok(p, m) || o->n_max < 1 || o->n_max > STREAMS_N_LIMIT ||
	    !(o->tolerance >= 0 && o->tolerance < 1) || !(o->cap >= 0))
		return -1;
	n_max = fmax(o->n_max, floor(p[m - 1].n));
	res->n_max = (uint32_t)n_max;
	for (int i = 0; i < m; i++)
		mean += p[i].th / m;
	for (int model = 1; model < STREAMS_NMODELS; model++)
		if (models & (1u << model))
			streams_fit_bfc(model, p, m, n_max, &res->per_model[model]);
		else
			res->per_model[model].err = NAN;
	res->model = choose(res, STREAMS_FIT_TIE * mean);
	if (res->model == STREAMS_NONE) {
		advise_measured(res, p, m, o);
		return 0;
	}
	res->best = res->per_model[res->model];
	res->rel_err = res->best.err / mean;
	res->confidence = streams_fit_confidence(res->rel_err, m,
						 streams_model_points(res->model));
	advise(res, o);
	return 0;
}

uint32_t streams_fit_expo_next(const struct streams_point *p, int m, double rise,
			       uint32_t n_max)
{
	double prev = NAN;

	for (uint32_t n = 1; n <= n_max; n *= 2) {
		int i;

		for (i = 0; i < m && p[i].n != n; i++)
			;
		if (i == m)
			return n;
		if (!isnan(prev) && !(p[i].th >= (1 + rise) * prev))
			return 0;
		prev = p[i].th;
		if (n > UINT32_MAX / 2)
			break;
	}
	return 0;
}
