// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Absorption-time distribution by one uniformization pass, on a reduced
 * chain where that pays. See ctmc_dist.h.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/ctmc_dist.h"

/* Reduce when kept states x their Lambda is below this share of the whole. */
#define DIST_REDUCE_GAIN	0.7
/* Restart on the whole chain once the trap holds this share of eps. */
#define DIST_TRAP_SHARE		0.1
/* Masses at or below this share of eps end the sequence. */
#define DIST_CUT_SHARE		1e-3

static void dist_free_pass(struct ctmc_dist *d)
{
	free(d->v);
	free(d->nv);
	free(d->stay);
	d->v = d->nv = d->stay = NULL;
}

void ctmc_dist_finish(struct ctmc_dist *d)
{
	dist_free_pass(d);
	free(d->mass);
	if (d->reduced)
		ctmc_finish(&d->red);
	memset(d, 0, sizeof(*d));
}

/* Start the pass over @q from @alpha0. */
static int dist_start(struct ctmc_dist *d, const struct ctmc *q,
		      const double *alpha0)
{
	dist_free_pass(d);
	d->q = q;
	d->lambda = ctmc_max_exit_rate(q);
	if (d->lambda == 0.0)
		d->lambda = 1.0;	/* everything absorbing: any rate works */
	d->len = 0;
	d->complete = false;
	d->cut_mass = 0.0;
	d->v = malloc(((size_t)q->n + 1) * sizeof(*d->v));
	d->nv = malloc(((size_t)q->n + 1) * sizeof(*d->nv));
	if (!d->v || !d->nv || ctmc_unif_stay(q, d->lambda, &d->stay))
		return -ENOMEM;
	memcpy(d->v, alpha0, (size_t)q->n * sizeof(*d->v));
	return 0;
}

/*
 * The kept states (transient, alpha above CTMC_DIST_KEEP_REL of its
 * largest value) numbered 0..k-1 in @map, the absorbing ones k, the others
 * k + 1 (the trap). Returns k; *gain says whether the reduction pays.
 */
static uint32_t dist_keep(const struct ctmc *q, const double *alpha,
			  uint32_t *map, bool *gain)
{
	double amax = 0.0, lam = 0.0;
	uint32_t k = 0;

	for (uint32_t i = 0; i < q->n; i++)
		if (q->exit_rate[i] > 0.0 && alpha[i] > amax)
			amax = alpha[i];
	for (uint32_t i = 0; i < q->n; i++) {
		if (q->exit_rate[i] > 0.0 &&
		    alpha[i] > CTMC_DIST_KEEP_REL * amax) {
			map[i] = k++;
			lam = fmax(lam, q->exit_rate[i]);
		}
	}
	for (uint32_t i = 0; i < q->n; i++)
		if (!(q->exit_rate[i] > 0.0 &&
		      alpha[i] > CTMC_DIST_KEEP_REL * amax))
			map[i] = q->exit_rate[i] > 0.0 ? k + 1 : k;
	*gain = k > 0 && (double)k * lam <
		DIST_REDUCE_GAIN * (double)q->n * ctmc_max_exit_rate(q);
	return k;
}

/* The reduced chain into d->red and its initial distribution into @a. */
static int dist_build(struct ctmc_dist *d, const uint32_t *map, uint32_t k,
		      double **a)
{
	const struct ctmc *q = d->full;
	uint32_t *cols = NULL, width = 0;
	double *ar = calloc((size_t)k + 2, sizeof(*ar));
	int err;

	for (uint32_t i = 0; i < q->n; i++)
		if (q->row_ptr[i + 1] - q->row_ptr[i] > width)
			width = q->row_ptr[i + 1] - q->row_ptr[i];
	cols = malloc(((size_t)width + 1) * sizeof(*cols));
	err = ar && cols ? ctmc_init(&d->red, k + 2, 0) : -ENOMEM;
	for (uint32_t i = 0; !err && i < q->n; i++) {
		uint32_t lo = q->row_ptr[i], len = q->row_ptr[i + 1] - lo;

		ar[map[i]] += d->alpha[i];
		if (map[i] >= k)
			continue;
		for (uint32_t e = 0; e < len; e++)
			cols[e] = map[q->col[lo + e]];
		err = ctmc_add_row(&d->red, cols, q->rate + lo, len);
	}
	for (int extra = 0; !err && extra < 2; extra++)
		err = ctmc_add_row(&d->red, NULL, NULL, 0);	/* absorbing */
	if (!err)
		err = ctmc_seal(&d->red);
	free(cols);
	if (err) {
		free(ar);
		ctmc_finish(&d->red);
		return err;
	}
	d->reduced = true;
	d->trap = k + 1;
	*a = ar;
	return 0;
}

int ctmc_dist_init(struct ctmc_dist *d, const struct ctmc *q,
		   const double *alpha, double eps, uint32_t max_steps)
{
	uint32_t *map = NULL, k;
	double *ar = NULL;
	bool gain;
	int err;

	memset(d, 0, sizeof(*d));
	if (q->n == 0 || !(eps > 0.0 && eps < 1.0))
		return -EINVAL;
	for (uint32_t i = 0; i < q->n; i++)
		if (!(alpha[i] >= 0.0) || !isfinite(alpha[i]))
			return -EINVAL;
	d->full = q;
	d->alpha = alpha;
	d->eps = eps;
	d->max_steps = max_steps ? max_steps : CTMC_DIST_MAX_STEPS;
	d->cap = 1024;
	d->mass = malloc((size_t)d->cap * sizeof(*d->mass));
	map = malloc(((size_t)q->n + 1) * sizeof(*map));
	if (!d->mass || !map) {
		err = -ENOMEM;
		goto out;
	}
	k = dist_keep(q, alpha, map, &gain);
	err = gain ? dist_build(d, map, k, &ar) : 0;
	if (!err)
		err = d->reduced ? dist_start(d, &d->red, ar)
				 : dist_start(d, q, alpha);
out:
	free(map);
	free(ar);
	if (err)
		ctmc_dist_finish(d);
	return err;
}

/* Mass of the transient states in @v. */
static double transient_mass(const struct ctmc *q, const double *v)
{
	double mk = 0.0;

	for (uint32_t i = 0; i < q->n; i++)
		if (q->exit_rate[i] > 0.0)
			mk += v[i];
	return mk;
}

static int dist_grow(struct ctmc_dist *d)
{
	uint32_t cap = d->cap > d->max_steps / 2 ? d->max_steps : 2 * d->cap;
	double *m = realloc(d->mass, (size_t)cap * sizeof(*m));

	if (!m)
		return -ENOMEM;
	d->mass = m;
	d->cap = cap;
	return 0;
}

/* m_k for every k <= @k_max, or until the sequence ends. */
static int dist_extend(struct ctmc_dist *d, uint32_t k_max)
{
	while (!d->complete && d->len <= k_max) {
		double mk, *tmp;
		int err;

		if (d->len >= d->max_steps)
			return -E2BIG;
		if (d->len == d->cap && (err = dist_grow(d)))
			return err;
		if (d->len > 0) {
			ctmc_unif_step(d->q, d->lambda, d->stay, d->v, d->nv);
			tmp = d->v, d->v = d->nv, d->nv = tmp;
		}
		if (d->reduced && d->v[d->trap] > DIST_TRAP_SHARE * d->eps) {
			/* The reduction leaks: the whole chain from the start. */
			ctmc_finish(&d->red);
			d->reduced = false;
			d->restarts++;
			err = dist_start(d, d->full, d->alpha);
			if (err)
				return err;
			continue;
		}
		mk = transient_mass(d->q, d->v);
		if (!isfinite(mk))
			return -EDOM;
		d->mass[d->len++] = mk;
		if (mk <= DIST_CUT_SHARE * d->eps) {
			d->complete = true;
			d->cut_mass = mk;
		}
	}
	return 0;
}

int ctmc_dist_survival(struct ctmc_dist *d, double t_s, double *surv,
		       double *err_bound)
{
	struct ctmc_fg_weights fw;
	uint32_t restarts;
	double s = 0.0;
	int err;

	if (!(t_s >= 0.0) || !isfinite(t_s))
		return -EINVAL;
	do {
		restarts = d->restarts;
		err = ctmc_fg_compute(d->lambda * t_s, d->eps, &fw);
		if (err)
			return err;
		err = dist_extend(d, fw.right);
		if (!err && d->restarts != restarts)
			ctmc_fg_finish(&fw);	/* Lambda changed */
	} while (!err && d->restarts != restarts);
	for (uint32_t k = fw.left; !err && k <= fw.right && k < d->len; k++)
		s += fw.w[k - fw.left] * d->mass[k];
	if (!err) {
		*surv = s > 1.0 ? 1.0 : s;	/* rounding */
		*err_bound = fw.trunc_mass + d->cut_mass +
			     (d->reduced ? d->v[d->trap] : 0.0) +
			     4.0 * (fw.right + 1.0) * DBL_EPSILON;
	}
	ctmc_fg_finish(&fw);
	return err;
}
