// SPDX-License-Identifier: GPL-2.0-or-later
/* Exponentially weighted ratio estimates and recent maxima. See ewma.h. */
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

/* Drop the first @k values of @m. */
static void max_drop_front(struct ewma_max *m, int k)
{
	memmove(m->v, m->v + k, (size_t)(m->n - k) * sizeof(m->v[0]));
	memmove(m->w, m->w + k, (size_t)(m->n - k) * sizeof(m->w[0]));
	m->n -= k;
}

void ewma_max_add(struct ewma_max *m, double d, double v, double min_w)
{
	int old = 0;

	for (int i = 0; i < m->n; i++) {
		m->w[i] *= d;
		if (!(m->w[i] >= min_w))
			old = i + 1;	/* weights increase: all before go too */
	}
	max_drop_front(m, old);
	if (!(v > 0) || !isfinite(v))
		return;
	/* An older value no larger than @v can no longer be the largest. */
	while (m->n > 0 && m->v[m->n - 1] <= v)
		m->n--;
	if (m->n == EWMA_MAX_KEEP) {
		m->w[m->n - 1] = 1.0;
		return;
	}
	m->v[m->n] = v;
	m->w[m->n++] = 1.0;
}

double ewma_max_value(const struct ewma_max *m)
{
	return m->n > 0 ? m->v[0] : 0.0;
}
