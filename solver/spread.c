// SPDX-License-Identifier: GPL-2.0-or-later
/* Expectations over a spread drain. See spread.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "solver/spread.h"

/* A Gauss-Legendre rule on [-1, 1]: its nodes in the order they are added. */
struct gl_node {
	double x, w;
};

/* Four points: +-0.340, +-0.861. */
static const struct gl_node gl4[4] = {
	{ -0.3399810435848563, 0.6521451548625461 },
	{ -0.8611363115940526, 0.3478548451374538 },
	{ 0.3399810435848563, 0.6521451548625461 },
	{ 0.8611363115940526, 0.3478548451374538 },
};
/* Three points: the middle, and +-sqrt(3/5). */
static const struct gl_node gl3[3] = {
	{ 0.0, 8.0 / 9.0 },
	{ -0.7745966692414834, 5.0 / 9.0 },
	{ 0.7745966692414834, 5.0 / 9.0 },
};

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
static uint32_t panel_ends(const double *breaks, uint32_t nbreaks, double z_max, double *ends)
{
	uint32_t n = 0;

	ends[n++] = -z_max;
	for (uint32_t i = 0; i < nbreaks; i++)
		if (isfinite(breaks[i]) && breaks[i] > -z_max &&
		    breaks[i] < z_max)
			ends[n++] = breaks[i];
	ends[n++] = z_max;
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

/*
 * Gauss-Legendre nodes of [lo, hi] cut into panels at most @width wide,
 * @nodes (3 or 4) in each.
 */
static void add_panels(struct spread_rule *rule, double lo, double hi, double width,
		       uint32_t nodes)
{
	const struct gl_node *gl = nodes == 3 ? gl3 : gl4;
	uint32_t np = (uint32_t)ceil((hi - lo) / width);
	double h;

	if (!(hi > lo))
		return;
	if (np < 1)
		np = 1;
	h = (hi - lo) / np;
	for (uint32_t p = 0; p < np; p++) {
		double mid = lo + (p + 0.5) * h, half = 0.5 * h;

		for (uint32_t k = 0; k < nodes; k++) {
			double z = mid + half * gl[k].x;

			add_node(rule, z, half * gl[k].w * norm_pdf(z));
		}
	}
}

int spread_rule_build(const double *breaks, uint32_t nbreaks, struct spread_rule *rule)
{
	return spread_rule_build_shaped(breaks, nbreaks, SPREAD_Z_MAX, SPREAD_PANEL_WIDTH,
					SPREAD_GL_NODES, rule);
}

int spread_rule_build_shaped(const double *breaks, uint32_t nbreaks, double z_max,
			     double width, uint32_t nodes, struct spread_rule *rule)
{
	double ends[SPREAD_MAX_BREAKS + 2], tail = spread_norm_cdf(-z_max);
	double sum = 0.0;
	uint32_t ne, lo_node, hi_node;

	rule->n = 0;
	if (nbreaks > SPREAD_MAX_BREAKS || (nbreaks && !breaks) ||
	    !(z_max > 0.0 && z_max <= SPREAD_Z_MAX) || !(width >= SPREAD_PANEL_WIDTH) ||
	    (nodes != 3 && nodes != SPREAD_GL_NODES))
		return -EINVAL;
	ne = panel_ends(breaks, nbreaks, z_max, ends);
	for (uint32_t i = 0; i + 1 < ne; i++)
		add_panels(rule, ends[i], ends[i + 1], width, nodes);
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
