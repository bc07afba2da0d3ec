/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Expectations over a drain that is steady within a transfer and spread
 * from one transfer to the next (docs/fidelity.md): a stage drains at
 * C e^(sd Z), Z standard normal, drawn once per transfer.
 *
 * spread_excess_mean() is the closed form of the one expectation the
 * first blast's loss needs; spread_rule_build() a quadrature rule for
 * E[f(Z)] when f is only piecewise smooth (T(B) of a fluid queue has
 * kinks where the first blast starts to lose and where the drain falls
 * below the arrivals): Gauss-Legendre panels on [-SPREAD_Z_MAX,
 * SPREAD_Z_MAX] that end at the given breakpoints, weighted by the normal
 * density, the two tails' mass put on the end nodes so that the weights
 * sum to 1 exactly (f is constant in both tails where it is used).
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_SPREAD_H
#define RXB_SOLVER_SPREAD_H

#include <stdint.h>

#include "solver/bulkq.h"

#define SPREAD_Z_MAX		6.0
#define SPREAD_MAX_BREAKS	4
/* Panels at most this wide, plus one per breakpoint, 4 nodes each. */
#define SPREAD_PANEL_WIDTH	0.5
#define SPREAD_GL_NODES		4
#define SPREAD_PANELS		24	/* 2 SPREAD_Z_MAX / SPREAD_PANEL_WIDTH */
#define SPREAD_MAX_NODES	(SPREAD_GL_NODES * (SPREAD_PANELS + SPREAD_MAX_BREAKS))

struct spread_rule {
	uint32_t n;
	double z[SPREAD_MAX_NODES];
	double w[SPREAD_MAX_NODES];
};

/* Phi(x), the standard normal distribution function (erfc: accurate tails). */
double spread_norm_cdf(double x);

/*
 * E[(a - r e^(sd Z))+] for r > 0, sd >= 0: with d = ln(a / r) / sd,
 * a Phi(d) - r e^(sd^2 / 2) Phi(d - sd); (a - r)+ at sd = 0; 0 for a <= 0.
 * The first blast's expected loss fraction of a fluid queue of K packets
 * drained at C e^(sd Z) is this at a = 1 - K / n, r = C / lambda.
 */
double spread_excess_mean(double a, double r, double sd);

/*
 * A deterministic fluid queue fed at @arrival_per_s and drained at
 * @drain_pkts_per_s loses what arrives beyond the drain:
 * (1 - drain / arrival)+, into @r (rel_err 0, no steps).
 */
void spread_fluid_loss(double arrival_per_s, double drain_pkts_per_s,
		       struct bulkq_result *r);

/*
 * The rule for E[f(Z)] with panels ending at @breaks (@nbreaks <=
 * SPREAD_MAX_BREAKS, any order; those outside the open interval
 * (-SPREAD_Z_MAX, SPREAD_Z_MAX) or not finite are ignored). Returns 0 or
 * -EINVAL.
 */
int spread_rule_build(const double *breaks, uint32_t nbreaks, struct spread_rule *rule);

/*
 * The same over (-@z_max, @z_max) (at most SPREAD_Z_MAX; the tails beyond
 * on the outermost nodes) with panels at most @width wide (at least
 * SPREAD_PANEL_WIDTH) of @nodes Gauss-Legendre nodes (3 or
 * SPREAD_GL_NODES): fewer nodes, for an f smooth between the breaks.
 */
int spread_rule_build_shaped(const double *breaks, uint32_t nbreaks, double z_max,
			     double width, uint32_t nodes, struct spread_rule *rule);

#endif
