// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Banded GTH reduction: steady state and mean time to absorption of chains
 * with a narrow band in some order of their states. See ctmc_band.h.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/ctmc_band.h"

/*
 * The back substitution starts from pi_0 = 1; on chains whose probabilities
 * span more than the double range the later values grow past it. They are
 * then scaled down by this power of two (exactly), which underflows only
 * values that the final normalisation would underflow anyway.
 */
#define BAND_RESCALE_AT	0x1p512
#define BAND_RESCALE_BY	0x1p-512

/* Row k (new order) holds columns [k - lower, k + upper]. */
struct band {
	uint32_t m, lower, upper;
	size_t w;
	double *a;
};

static inline double *band_at(const struct band *b, uint32_t i, uint32_t j)
{
	return b->a + (size_t)i * b->w + (b->lower + (size_t)j - i);
}

static uint64_t band_entries(const struct ctmc_graph_order *o)
{
	return (uint64_t)o->m * ((uint64_t)o->lower + o->upper + 1);
}

static uint64_t band_work(const struct ctmc_graph_order *o)
{
	return (uint64_t)o->m * (o->lower + 1ull) * (o->upper + 1ull);
}

static bool band_pays(const struct ctmc *q, const struct ctmc_graph_order *o)
{
	return band_entries(o) <= CTMC_BAND_MAX_ENTRIES &&
	       band_work(o) <= CTMC_BAND_WORK_SWEEPS *
			       ((uint64_t)q->nnz + q->n);
}

int ctmc_band_pick(const struct ctmc *q, const struct ctmc_graph_csc *t,
		   bool transient_only, bool force, struct ctmc_graph_order *o,
		   bool *worth)
{
	struct ctmc_graph_order cm;
	int err = ctmc_graph_order_natural(q, transient_only, o);

	if (err)
		return err;
	*worth = band_pays(q, o);
	if (!*worth) {
		struct ctmc_graph_order lb = { .m = o->m };
		/* The widest band that could pay, with the other side 0. */
		uint64_t enough = CTMC_BAND_WORK_SWEEPS *
				  ((uint64_t)q->nnz + q->n) / (o->m ? o->m : 1);
		uint32_t bound;

		/* No order narrow enough (when not forced): skip the search. */
		err = ctmc_graph_band_bound(q, t, transient_only,
					    enough > UINT32_MAX ? UINT32_MAX
								: (uint32_t)enough,
					    &bound);
		lb.lower = bound;
		if (!err && !force && !band_pays(q, &lb))
			return 0;
		/* The chain's own order is wide: look for its level structure. */
		if (!err)
			err = ctmc_graph_order_cm(q, t, transient_only, &cm);
		if (err) {
			ctmc_graph_order_finish(o);
			return err;
		}
		if (band_work(&cm) < band_work(o)) {
			ctmc_graph_order_finish(o);
			*o = cm;
		} else {
			ctmc_graph_order_finish(&cm);
		}
		*worth = band_pays(q, o);
	}
	if (force && band_entries(o) > CTMC_BAND_MAX_ENTRIES) {
		ctmc_graph_order_finish(o);
		return -E2BIG;
	}
	return 0;
}

/*
 * Each reduced rate is a sum of at most w updates of three roundings each,
 * as in the dense GTH's 3 n^2 eps (w = n there); a relative perturbation
 * of every rate moves each result by a relative amount of the same order
 * (O'Cinneide, "Entrywise perturbation theory and error analysis for
 * Markov chains").
 */
double ctmc_band_err_bound(const struct ctmc_graph_order *o)
{
	return 3.0 * (double)o->m * ((double)o->lower + o->upper + 1.0) *
	       DBL_EPSILON;
}

/*
 * The rates between states of the subset into the band; those leaving it
 * (into absorbing states) summed per row into @out when not NULL.
 */
static int band_fill(struct band *b, const struct ctmc *q,
		     const struct ctmc_graph_order *o, double *out)
{
	b->m = o->m;
	b->lower = o->lower;
	b->upper = o->upper;
	b->w = (size_t)o->lower + o->upper + 1;
	b->a = calloc((size_t)o->m * b->w + 1, sizeof(*b->a));
	if (!b->a)
		return -ENOMEM;
	for (uint32_t k = 0; k < o->m; k++) {
		uint32_t i = o->old_of[k];

		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++) {
			uint32_t c = o->new_of[q->col[e]];

			if (c != UINT32_MAX)
				*band_at(b, k, c) = q->rate[e];
			else if (out)
				out[k] += q->rate[e];
		}
	}
	return 0;
}

/*
 * Reduce states m-1 .. @stop in turn. State k leaves at
 * s[k] = out[k] + sum_{j<k} a_kj (out NULL: 0), the rate out of it once the
 * later states are reduced; every earlier state i that enters k at a_ik
 * then enters each j < k through k at a_ik a_kj / s_k more, reaches the
 * outside at a_ik out_k / s_k more and carries a_ik rhs_k / s_k more of
 * the right-hand side. Only positive numbers are added.
 */
static int band_reduce(struct band *b, uint32_t stop, double *out,
		       double *rhs, double *s)
{
	for (uint32_t k = b->m; k-- > stop;) {
		uint32_t jlo = k > b->lower ? k - b->lower : 0;
		uint32_t ilo = k > b->upper ? k - b->upper : 0;
		const double *ak = band_at(b, k, jlo);
		double sk = 0.0;

		for (uint32_t j = jlo; j < k; j++)
			sk += ak[j - jlo];
		if (out)
			sk += out[k];
		if (!(sk > 0.0) || !isfinite(sk))
			return -EINVAL;	/* k cannot leave to earlier states */
		s[k] = sk;
		for (uint32_t i = ilo; i < k; i++) {
			double aik = *band_at(b, i, k), f;
			double *ai;

			if (aik == 0.0)
				continue;
			f = aik / sk;
			ai = band_at(b, i, jlo);
			for (uint32_t j = jlo; j < k; j++)
				ai[j - jlo] += f * ak[j - jlo];
			if (out)
				out[i] += f * out[k];
			if (rhs)
				rhs[i] += f * rhs[k];
		}
	}
	return 0;
}

int ctmc_band_steady(const struct ctmc *q, const struct ctmc_graph_order *o,
		     double *pi)
{
	struct band b;
	double *s = malloc(((size_t)o->m + 1) * sizeof(*s));
	double *x = malloc(((size_t)o->m + 1) * sizeof(*x));
	double sum;
	int err;

	memset(&b, 0, sizeof(b));
	if (o->m != q->n || !o->m) {
		err = -EINVAL;
		goto out;
	}
	err = s && x ? band_fill(&b, q, o, NULL) : -ENOMEM;
	if (!err)
		err = band_reduce(&b, 1, NULL, NULL, s);
	if (err)
		goto out;
	/* pi_k = sum_{i<k} pi_i a_ik / s_k from pi_0 = 1. */
	x[0] = 1.0;
	for (uint32_t k = 1; k < b.m; k++) {
		uint32_t ilo = k > b.upper ? k - b.upper : 0;
		double v = 0.0;

		for (uint32_t i = ilo; i < k; i++)
			v += x[i] * *band_at(&b, i, k);
		x[k] = v / s[k];
		if (x[k] > BAND_RESCALE_AT)
			for (uint32_t i = 0; i <= k; i++)
				x[i] *= BAND_RESCALE_BY;
	}
	sum = 0.0;
	for (uint32_t k = 0; k < b.m; k++)
		sum += x[k];
	for (uint32_t k = 0; k < b.m; k++)
		pi[o->old_of[k]] = x[k] / sum;
out:
	free(b.a);
	free(s);
	free(x);
	return err;
}

int ctmc_band_absorb(const struct ctmc *q, const struct ctmc_graph_order *o,
		     double *tau)
{
	size_t m1 = (size_t)o->m + 1;
	double *s = malloc(m1 * sizeof(*s)), *out = calloc(m1, sizeof(*out));
	double *rhs = malloc(m1 * sizeof(*rhs)), *x = malloc(m1 * sizeof(*x));
	struct band b;
	int err;

	memset(&b, 0, sizeof(b));
	err = s && out && rhs && x ? band_fill(&b, q, o, out) : -ENOMEM;
	if (err)
		goto out;
	for (uint32_t k = 0; k < b.m; k++)
		rhs[k] = 1.0;
	err = band_reduce(&b, 0, out, rhs, s);
	if (err)
		goto out;
	/* tau_k = (rhs_k + sum_{j<k} a_kj tau_j) / s_k. */
	for (uint32_t k = 0; k < b.m; k++) {
		uint32_t jlo = k > b.lower ? k - b.lower : 0;
		const double *ak = band_at(&b, k, jlo);
		double v = rhs[k];

		for (uint32_t j = jlo; j < k; j++)
			v += ak[j - jlo] * x[j];
		x[k] = v / s[k];
	}
	memset(tau, 0, (size_t)q->n * sizeof(*tau));
	for (uint32_t k = 0; k < b.m; k++)
		tau[o->old_of[k]] = x[k];
out:
	free(b.a);
	free(s);
	free(out);
	free(rhs);
	free(x);
	return err;
}
