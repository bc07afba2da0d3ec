// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Transient analysis by uniformization with Fox-Glynn truncation.
 *
 * With Lambda >= max_i q_i, P = I + Q / Lambda is a DTMC and
 *	p(t) = sum_k Poisson(k; Lambda t) p0 P^k.
 * Only the Poisson terms in [L, R] are kept, chosen (Fox and Glynn 1988)
 * so that the neglected Poisson mass is at most eps. Since every p0 P^k is
 * a probability vector, the truncation changes each probability by at most
 * eps; rounding adds O(R eps).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/ctmc.h"
#include "solver/ctmc_dist.h"


/*
 * Weights are computed relative to the mode m = floor(lambda) (w_m = 1) by
 * the ratios w_{k+1}/w_k = lambda/(k+1), w_{k-1}/w_k = k/lambda, so nothing
 * under- or overflows. Beyond R the ratios stay below lambda/(R+2) < 1, so
 * the right tail is at most w_{R+1} / (1 - lambda/(R+2)); below L they stay
 * below (L-1)/lambda, so the left tail is at most w_{L-1} / (1 - (L-1)/lambda).
 * Each tail is cut when its bound is below eps/2 of the kept mass.
 */
int ctmc_fg_compute(double lambda, double eps, struct ctmc_fg_weights *fw)
{
	double m_d, w, total = 1.0, tail_r, tail_l = 0.0;
	uint32_t m, left, right;

	memset(fw, 0, sizeof(*fw));
	if (!(lambda >= 0.0) || !isfinite(lambda) || !(eps > 0.0 && eps < 1.0))
		return -EINVAL;
	m_d = floor(lambda);
	if (m_d > (double)(UINT32_MAX / 2))
		return -E2BIG;
	m = (uint32_t)m_d;

	/* Right end. */
	right = m;
	w = 1.0;
	for (;;) {
		double wn = w * lambda / (right + 1.0);

		tail_r = wn / (1.0 - lambda / (right + 2.0));
		if (tail_r <= 0.5 * eps * total)
			break;
		if (right >= UINT32_MAX / 2)
			return -E2BIG;
		right++;
		w = wn;
		total += w;
	}
	/* Left end. */
	left = m;
	w = 1.0;
	while (left > 0) {
		double wp = w * left / lambda;

		tail_l = wp / (1.0 - (left - 1.0) / lambda);
		if (tail_l <= 0.5 * eps * total)
			break;
		left--;
		w = wp;
		total += w;
		tail_l = 0.0;
	}
	fw->w = malloc(((size_t)right - left + 1) * sizeof(*fw->w));
	if (!fw->w)
		return -ENOMEM;
	fw->left = left;
	fw->right = right;
	/* Fill outward from the mode, then normalise. */
	fw->w[m - left] = 1.0;
	for (uint32_t k = m; k < right; k++)
		fw->w[k + 1 - left] = fw->w[k - left] * lambda / (k + 1.0);
	for (uint32_t k = m; k > left; k--)
		fw->w[k - 1 - left] = fw->w[k - left] * k / lambda;
	total = 0.0;
	for (uint32_t k = left; k <= right; k++)
		total += fw->w[k - left];
	for (uint32_t k = left; k <= right; k++)
		fw->w[k - left] /= total;
	fw->trunc_mass = (tail_l + tail_r) / total;
	return 0;
}

void ctmc_fg_finish(struct ctmc_fg_weights *fw)
{
	free(fw->w);
	memset(fw, 0, sizeof(*fw));
}

int ctmc_unif_stay(const struct ctmc *q, double lambda, double **stay)
{
	double *s = malloc(((size_t)q->n + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->n; i++)
		s[i] = 1.0 - q->exit_rate[i] / lambda;
	*stay = s;
	return 0;
}

/* Scattered row by row. */
void ctmc_unif_step(const struct ctmc *q, double lambda, const double *stay,
		    const double *v, double *out)
{
	double inv = 1.0 / lambda;

	for (uint32_t i = 0; i < q->n; i++)
		out[i] = v[i] * stay[i];
	for (uint32_t i = 0; i < q->n; i++) {
		double vi = v[i] * inv;

		if (vi == 0.0)
			continue;
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++)
			out[q->col[e]] += vi * q->rate[e];
	}
}

int ctmc_transient(const struct ctmc *q, const double *p0, double t_s,
		   double eps, double *pt, struct ctmc_stat *st)
{
	struct ctmc_fg_weights fw;
	double lambda = ctmc_max_exit_rate(q);
	double *v, *nv, *stay = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	st->method = CTMC_METHOD_UNIF;
	st->residual = 0.0;
	st->err_bound = NAN;
	if (q->n == 0 || !(t_s >= 0.0) || !isfinite(t_s))
		return -EINVAL;
	if (lambda == 0.0 || t_s == 0.0) {
		memcpy(pt, p0, (size_t)q->n * sizeof(*pt));
		st->err_bound = 0.0;
		return 0;
	}
	err = ctmc_fg_compute(lambda * t_s, eps, &fw);
	if (err)
		return err;
	if (fw.right >= CTMC_DIST_MAX_STEPS) {
		ctmc_fg_finish(&fw);
		return -E2BIG;
	}
	v = malloc((size_t)q->n * sizeof(*v));
	nv = malloc((size_t)q->n * sizeof(*nv));
	if (!v || !nv || ctmc_unif_stay(q, lambda, &stay)) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(v, p0, (size_t)q->n * sizeof(*v));
	memset(pt, 0, (size_t)q->n * sizeof(*pt));
	for (uint32_t k = 0; k <= fw.right; k++) {
		double *tmp;

		if (k >= fw.left) {
			double wk = fw.w[k - fw.left];

			for (uint32_t i = 0; i < q->n; i++)
				pt[i] += wk * v[i];
		}
		if (k == fw.right)
			break;
		ctmc_unif_step(q, lambda, stay, v, nv);
		tmp = v, v = nv, nv = tmp;
	}
	st->iterations = fw.right + 1;
	st->err_bound = fw.trunc_mass + 4.0 * (fw.right + 1.0) * DBL_EPSILON;
	for (uint32_t i = 0; i < q->n; i++)
		if (!isfinite(pt[i]))
			err = -EDOM;
out:
	free(v);
	free(nv);
	free(stay);
	ctmc_fg_finish(&fw);
	return err;
}

int ctmc_absorb_cdf(const struct ctmc *q, const double *alpha,
		    const double *t_s, uint32_t nt, double eps,
		    uint32_t max_steps, double *cdf, double *survival,
		    struct ctmc_stat *st)
{
	struct ctmc_dist d;
	int err;

	memset(st, 0, sizeof(*st));
	st->method = CTMC_METHOD_UNIF;
	st->residual = 0.0;
	st->err_bound = NAN;
	if (nt == 0)
		return -EINVAL;
	err = ctmc_dist_init(&d, q, alpha, eps, max_steps);
	if (err)
		return err;
	st->err_bound = 0.0;
	for (uint32_t j = 0; !err && j < nt; j++) {
		double s, bound;

		err = ctmc_dist_survival(&d, t_s[j], &s, &bound);
		if (err)
			break;
		cdf[j] = 1.0 - s;
		if (survival)
			survival[j] = s;
		if (bound > st->err_bound)
			st->err_bound = bound;
	}
	st->iterations = d.len;
	ctmc_dist_finish(&d);
	return err;
}
