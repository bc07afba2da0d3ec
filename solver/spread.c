// SPDX-License-Identifier: GPL-2.0-or-later
/* Expectations over a spread drain. See spread.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "solver/spread.h"

/* 4-point Gauss-Legendre on [-1, 1]: nodes +-x, weights w. */
static const double gl_x[2] = { 0.3399810435848563, 0.8611363115940526 };
static const double gl_w[2] = { 0.6521451548625461, 0.3478548451374538 };

double spread_norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

double spread_excess_mean(double a, double r, double sd)
{
	double d;

	if (!(a > 0.0) || !(r > 0.0))
		return 0.0;
	if (!(sd > 0.0))
		return a > r ? a - r : 0.0;
	d = log(a / r) / sd;
	return fmax(0.0, a * spread_norm_cdf(d) -
			 r * exp(0.5 * sd * sd) * spread_norm_cdf(d - sd));
}

void spread_fluid_loss(double arrival_per_s, double drain_pkts_per_s,
		       struct bulkq_result *r)
{
	memset(r, 0, sizeof(*r));
	r->pass = 1.0;
	r->ln_loss = -INFINITY;
	if (arrival_per_s > drain_pkts_per_s) {
		r->pass = drain_pkts_per_s / arrival_per_s;
		r->ln_loss = log1p(-r->pass);
		r->loss = -expm1(log(r->pass));
	}
}

static double norm_pdf(double z)
{
	return exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
}

/* The panel ends: -Z_MAX, the breakpoints inside, Z_MAX, sorted. */
static uint32_t panel_ends(const double *breaks, uint32_t nbreaks, double *ends)
{
	uint32_t n = 0;

	ends[n++] = -SPREAD_Z_MAX;
	for (uint32_t i = 0; i < nbreaks; i++)
		if (isfinite(breaks[i]) && breaks[i] > -SPREAD_Z_MAX &&
		    breaks[i] < SPREAD_Z_MAX)
			ends[n++] = breaks[i];
	ends[n++] = SPREAD_Z_MAX;
	for (uint32_t i = 1; i < n; i++)	/* insertion sort: n <= 6 */
		for (uint32_t j = i; j > 0 && ends[j - 1] > ends[j]; j--) {
			double t = ends[j];

			ends[j] = ends[j - 1];
			ends[j - 1] = t;
		}
	return n;
}

static void add_node(struct spread_rule *rule, double z, double w)
{
	rule->z[rule->n] = z;
	rule->w[rule->n] = w;
	rule->n++;
}

/* Gauss-Legendre nodes of [lo, hi] cut into panels of SPREAD_PANEL_WIDTH at most. */
static void add_panels(struct spread_rule *rule, double lo, double hi)
{
	uint32_t np = (uint32_t)ceil((hi - lo) / SPREAD_PANEL_WIDTH);
	double h;

	if (!(hi > lo))
		return;
	if (np < 1)
		np = 1;
	h = (hi - lo) / np;
	for (uint32_t p = 0; p < np; p++) {
		double mid = lo + (p + 0.5) * h, half = 0.5 * h;

		for (int s = -1; s <= 1; s += 2)
			for (int k = 0; k < 2; k++) {
				double z = mid + s * half * gl_x[k];

				add_node(rule, z, half * gl_w[k] * norm_pdf(z));
			}
	}
}

int spread_rule_build(const double *breaks, uint32_t nbreaks, struct spread_rule *rule)
{
	double ends[SPREAD_MAX_BREAKS + 2], tail = spread_norm_cdf(-SPREAD_Z_MAX);
	double sum = 0.0;
	uint32_t ne, lo_node, hi_node;

	rule->n = 0;
	if (nbreaks > SPREAD_MAX_BREAKS || (nbreaks && !breaks))
		return -EINVAL;
	ne = panel_ends(breaks, nbreaks, ends);
	for (uint32_t i = 0; i + 1 < ne; i++)
		add_panels(rule, ends[i], ends[i + 1]);
	/* The tails beyond +-Z_MAX (1e-9 each) on the outermost nodes. */
	lo_node = hi_node = 0;
	for (uint32_t i = 0; i < rule->n; i++) {
		if (rule->z[i] < rule->z[lo_node])
			lo_node = i;
		if (rule->z[i] > rule->z[hi_node])
			hi_node = i;
	}
	rule->w[lo_node] += tail;
	rule->w[hi_node] += tail;
	for (uint32_t i = 0; i < rule->n; i++)
		sum += rule->w[i];
	for (uint32_t i = 0; i < rule->n; i++)	/* what the panels miss: E[1] = 1 */
		rule->w[i] /= sum;
	return 0;
}
