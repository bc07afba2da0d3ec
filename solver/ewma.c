// SPDX-License-Identifier: GPL-2.0-or-later
/* Exponentially weighted ratio estimates. See ewma.h. */
#include "solver/ewma.h"

#include <math.h>
#include <string.h>

double ewma_decay(double dt_s, double tau_s)
{
	if (!(dt_s > 0) || !isfinite(dt_s))
		return 1.0;
	return exp(-dt_s / tau_s);
}

void ewma_ratio_add(struct ewma_ratio *r, double d, double num, double den,
		    double min_den)
{
	if (!isfinite(num) || !isfinite(den) || num < 0 || den < 0)
		num = den = 0;
	r->num = r->num * d + num;
	r->den = r->den * d + den;
	if (r->den >= min_den && r->den > 0)
		r->ok = true;
}

double ewma_ratio_value(const struct ewma_ratio *r)
{
	if (!r->ok || !(r->den > 0) || !isfinite(r->num))
		return NAN;
	return r->num / r->den;
}

void ewma_ratio_reset(struct ewma_ratio *r)
{
	memset(r, 0, sizeof(*r));
}

void ewma_ratio_set(struct ewma_ratio *r, double v, double weight)
{
	r->num = v * weight;
	r->den = weight;
	r->ok = true;
}
