/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arithmetic on logarithms of positive quantities, for probabilities that
 * underflow a double (loss probabilities of long queues) and for sums that
 * would overflow one (unnormalised state probabilities). Internal to solver/.
 */
#ifndef RXB_SOLVER_LNMATH_H
#define RXB_SOLVER_LNMATH_H

#include <math.h>
#include <stdint.h>

/* ln(e^a + e^b); either may be -inf. */
static inline double ln_add(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	if (hi == -INFINITY)
		return -INFINITY;
	return hi + log1p(exp(lo - hi));
}

/* ln(1 + e^a), accurate for every a. */
static inline double ln_1p_exp(double a)
{
	if (a > 0.0)
		return a + log1p(exp(-a));
	return log1p(exp(a));
}

/* 1 / (1 + e^-a), accurate for every a. */
static inline double sigmoid(double a)
{
	if (a >= 0.0)
		return 1.0 / (1.0 + exp(-a));
	return exp(a) / (1.0 + exp(a));
}

/* ln |e^y - 1| for y != 0. */
static inline double ln_abs_expm1(double y)
{
	if (y > 40.0)
		return y + log1p(-exp(-y));
	if (y > 0.0)
		return log(expm1(y));
	return log(-expm1(y));
}

/* ln sum_{k=1}^{c} rho^k with ln_rho = ln rho; -inf when c = 0. */
static inline double ln_geom_sum(double ln_rho, uint64_t c)
{
	if (c == 0)
		return -INFINITY;
	if (ln_rho == 0.0)
		return log((double)c);
	return ln_rho + ln_abs_expm1((double)c * ln_rho) - ln_abs_expm1(ln_rho);
}

#endif
