/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decaying least squares through the origin with up to three terms,
 *	y = c_0 x_0 + c_1 x_1 + c_2 x_2,
 * kept as the sums of the normal equations, (sum x x^T) c = sum x y.
 *
 * Each observation weighs 1 when it is added, and every sum decays by the
 * same factor d per step (lsq_decay()), so old observations fade the way
 * the ewma ratios' do. Scaling every sum alike leaves the solution and its
 * standard errors as they were: an idle series keeps its fit.
 *
 * A term is fitted only if the others leave enough of it unexplained: on
 * the normal equations scaled to unit diagonal, C = D M D with D =
 * diag(1 / sqrt(M_jj)), term j keeps 1 / (C^-1)_jj of its (uncentred)
 * variance, the reciprocal of its variance inflation factor; for two terms
 * that is 1 - r^2. Below @min_spread the terms are not separable.
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_LSQ_H
#define RXB_SOLVER_LSQ_H

#include <stdbool.h>

#define LSQ_TERMS	3

struct lsq {
	double xx[LSQ_TERMS][LSQ_TERMS];	/* sum x_i x_j (both halves) */
	double xy[LSQ_TERMS];			/* sum x_i y */
	double x[LSQ_TERMS];			/* sum x_i */
	double y;				/* sum y */
	double yy;				/* sum y^2: the residuals */
	double n;				/* sum of the weights */
	double n2;				/* sum of their squares */
	bool ok;	/* n reached its minimum since the last reset */
};

/* Scale every sum by @d (n2 by d^2): one step of decay. */
void lsq_decay(struct lsq *s, double d);

/* Add the observation (@x, @y) with weight 1; ok once n >= @min_n. */
void lsq_add(struct lsq *s, const double x[LSQ_TERMS], double y, double min_n);

/*
 * n^2 / n2: how many equally weighted observations the decayed ones are
 * worth (n itself with equal weights).
 */
double lsq_n_eff(const struct lsq *s);

/*
 * y = c x_@i alone into @c, with (M^-1)_ii = 1 / sum x_i^2 into @var:
 * 0, or -1 when sum x_i^2 is not positive.
 */
int lsq_solve1(const struct lsq *s, int i, double *c, double *var);

/*
 * y = c_0 x_@i + c_1 x_@j by Cramer's rule into @c, (M^-1)_ii and
 * (M^-1)_jj into @var: 0, or -1 when a sum of squares is not positive or
 * 1 - r^2 of the two terms is not above @min_spread.
 */
int lsq_solve2(const struct lsq *s, int i, int j, double min_spread,
	       double c[2], double var[2]);

/*
 * y = sum_q c_q x_@idx[q] over @k terms (1..LSQ_TERMS): the scaled normal
 * equations factored C = L L^T (Cholesky) and solved by substitution.
 * 0 with the coefficients in @c and (M^-1)_jj in @var, or -1 with the
 * position in @idx of the term that failed in @bad: its sum of squares not
 * positive, its pivot zero (a combination of the earlier terms), less than
 * @min_spread of it unexplained by the others, or its coefficient not
 * finite.
 */
int lsq_solve(const struct lsq *s, const int *idx, int k, double min_spread,
	      double *c, double *var, int *bad);

/* sum_q c_q (sum x_@idx[q] y): the part of sum y^2 the fit explains. */
double lsq_explained(const struct lsq *s, const int *idx, int k, const double *c);

/*
 * The standard error of a coefficient whose (M^-1)_jj is @var, in a fit of
 * @k terms that explains @explained: sqrt(s^2 @var) with the residual
 * variance s^2 = (sum y^2 - @explained) / (n_eff - @k). NaN when n_eff <=
 * @k, @var < 0 or the sums are not finite. With equal weights it is the
 * textbook standard error; exact data leave rounding (a residual ~1e-16
 * of sum y^2).
 */
double lsq_se(const struct lsq *s, int k, double explained, double var);

#endif
