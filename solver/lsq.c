// SPDX-License-Identifier: GPL-2.0-or-later
/* Decaying least squares with up to three terms. See lsq.h. */
#include "solver/lsq.h"

#include <math.h>

/* A Cholesky pivot of the unit-diagonal system at most this: singular. */
#define LSQ_SINGULAR	1e-12

typedef double lsq_mat[LSQ_TERMS][LSQ_TERMS];

void lsq_decay(struct lsq *s, double d)
{
	for (int i = 0; i < LSQ_TERMS; i++) {
		for (int j = 0; j < LSQ_TERMS; j++)
			s->xx[i][j] *= d;
		s->xy[i] *= d;
		s->x[i] *= d;
	}
	s->y *= d;
	s->yy *= d;
	s->n *= d;
	s->n2 *= d * d;
}

void lsq_add(struct lsq *s, const double x[LSQ_TERMS], double y, double min_n)
{
	for (int i = 0; i < LSQ_TERMS; i++) {
		for (int j = 0; j < LSQ_TERMS; j++)
			s->xx[i][j] += x[i] * x[j];
		s->xy[i] += x[i] * y;
		s->x[i] += x[i];
	}
	s->y += y;
	s->yy += y * y;
	s->n += 1;
	s->n2 += 1;
	if (s->n >= min_n)
		s->ok = true;
}

double lsq_n_eff(const struct lsq *s)
{
	return s->n2 > 0 ? s->n * s->n / s->n2 : 0;
}

int lsq_solve1(const struct lsq *s, int i, double *c, double *var)
{
	if (!(s->xx[i][i] > 0))
		return -1;
	*c = s->xy[i] / s->xx[i][i];
	*var = 1 / s->xx[i][i];
	return 0;
}

int lsq_solve2(const struct lsq *s, int i, int j, double min_spread,
	       double c[2], double var[2])
{
	double mii = s->xx[i][i], mjj = s->xx[j][j], mij = s->xx[i][j], det;

	if (!(mjj > 0) || !(mii > 0))
		return -1;
	/* 1 - r^2 of the two terms: 0 when every x_j / x_i was the same. */
	det = mii * mjj - mij * mij;
	if (!(det > min_spread * mii * mjj))
		return -1;
	c[0] = (mjj * s->xy[i] - mij * s->xy[j]) / det;
	c[1] = (mii * s->xy[j] - mij * s->xy[i]) / det;
	var[0] = mjj / det;
	var[1] = mii / det;
	return 0;
}

/* D = diag(1 / sqrt(M_jj)) into @d and C = D M D into @cm. */
static int scale(const struct lsq *s, const int *idx, int k, double *d, lsq_mat cm,
		 int *bad)
{
	for (int i = 0; i < k; i++) {
		double mii = s->xx[idx[i]][idx[i]];

		if (!(mii > 0) || !isfinite(mii)) {
			*bad = i;
			return -1;
		}
		d[i] = 1 / sqrt(mii);
	}
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++)
			cm[i][j] = d[i] * s->xx[idx[i]][idx[j]] * d[j];
	return 0;
}

/* C = L L^T into @l (lower triangle; @l zeroed by the caller). */
static int cholesky(const lsq_mat cm, int k, lsq_mat l, int *bad)
{
	for (int j = 0; j < k; j++) {
		double s = cm[j][j];

		for (int q = 0; q < j; q++)
			s -= l[j][q] * l[j][q];
		/* Term j is a combination of the earlier ones. */
		if (!(s > LSQ_SINGULAR)) {
			*bad = j;
			return -1;
		}
		l[j][j] = sqrt(s);
		for (int i = j + 1; i < k; i++) {
			double t = cm[i][j];

			for (int q = 0; q < j; q++)
				t -= l[i][q] * l[j][q];
			l[i][j] = t / l[j][j];
		}
	}
	return 0;
}

/*
 * (C^-1)_jj = sum_i (L^-1)_ij^2 for each term: it must keep @min_spread of
 * its variance unexplained (1 / (C^-1)_jj); (M^-1)_jj = d_j^2 (C^-1)_jj
 * into @var.
 */
static int spread(const lsq_mat l, const double *d, int k, double min_spread,
		  double *var, int *bad)
{
	lsq_mat li = { { 0 } };

	for (int j = 0; j < k; j++) {
		li[j][j] = 1 / l[j][j];
		for (int i = j + 1; i < k; i++) {
			double t = 0;

			for (int q = j; q < i; q++)
				t -= l[i][q] * li[q][j];
			li[i][j] = t / l[i][i];
		}
	}
	for (int j = 0; j < k; j++) {
		double inv = 0;

		for (int i = j; i < k; i++)
			inv += li[i][j] * li[i][j];
		if (!(1 / inv >= min_spread)) {
			*bad = j;
			return -1;
		}
		var[j] = d[j] * d[j] * inv;
	}
	return 0;
}

/* C cs = D r: L y = D r, L^T cs = y; then c = D cs. */
static int substitute(const struct lsq *s, const int *idx, int k, const lsq_mat l,
		      const double *d, double *c, int *bad)
{
	double y[LSQ_TERMS], cs[LSQ_TERMS];

	for (int i = 0; i < k; i++) {
		double t = d[i] * s->xy[idx[i]];

		for (int q = 0; q < i; q++)
			t -= l[i][q] * y[q];
		y[i] = t / l[i][i];
	}
	for (int i = k - 1; i >= 0; i--) {
		double t = y[i];

		for (int q = i + 1; q < k; q++)
			t -= l[q][i] * cs[q];
		cs[i] = t / l[i][i];
	}
	for (int i = 0; i < k; i++) {
		c[i] = d[i] * cs[i];
		if (!isfinite(c[i])) {
			*bad = i;
			return -1;
		}
	}
	return 0;
}

int lsq_solve(const struct lsq *s, const int *idx, int k, double min_spread,
	      double *c, double *var, int *bad)
{
	double d[LSQ_TERMS];
	lsq_mat cm, l = { { 0 } };

	*bad = 0;
	if (k < 1 || k > LSQ_TERMS)
		return -1;
	if (scale(s, idx, k, d, cm, bad) || cholesky(cm, k, l, bad) ||
	    spread(l, d, k, min_spread, var, bad))
		return -1;
	return substitute(s, idx, k, l, d, c, bad);
}

double lsq_explained(const struct lsq *s, const int *idx, int k, const double *c)
{
	double e = 0;

	for (int q = 0; q < k; q++)
		e += c[q] * s->xy[idx[q]];
	return e;
}

double lsq_se(const struct lsq *s, int k, double explained, double var)
{
	double dof = s->n2 > 0 ? s->n * s->n / s->n2 - k : 0;
	double rss = s->yy - explained;

	if (!(dof > 0) || !(var >= 0) || !isfinite(rss))
		return NAN;
	if (rss < 0)
		rss = 0;
	return sqrt(rss / dof * var);
}
