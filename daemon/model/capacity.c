// SPDX-License-Identifier: GPL-2.0-or-later
/* Stage B's capacity from the saturated drain. See capacity.h. */
#include "daemon/model/capacity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solver/ctmc.h"
#include "solver/tagged.h"

/* Fixed-point steps: one is exact without I/O-bound tasks (E[R] linear in 1/mu). */
#define CAPACITY_STEPS		6
#define CAPACITY_REL_TOL	1e-9

const char *capacity_basis_name(enum capacity_basis b)
{
	return b == CAPACITY_DRAIN ? "saturated_drain" : "cost";
}

const char *capacity_mode_name(enum capacity_mode m)
{
	return m == CAPACITY_MODE_DRAIN ? "drain" : "cost";
}

double capacity_pkts_per_s(const struct rxb_stage_inputs *in, double mu)
{
	struct tagged_rates r = {
		.mu_pio_per_s = in->mu_pio_per_s,
		.mu_disk_per_s = in->mu_disk_per_s,
		.mu_net_per_s = mu,
	};
	struct tagged_result t;
	struct ctmc_opts o;
	double x, irq = in->irq_ns_per_pkt > 0 ? in->irq_ns_per_pkt * 1e-9 : 0;

	if (!(mu > 0) || !isfinite(mu))
		return NAN;
	if (in->load_independent) {
		x = mu * in->batch_pkts;
	} else {
		ctmc_opts_default(&o);
		if (tagged_seed_mean(in->cpu_bound, in->io_bound, &r, &o, &t) ||
		    !(t.service_rate_per_s > 0))
			return NAN;
		x = t.service_rate_per_s * in->batch_pkts;
	}
	return x / (1 + x * irq);
}

/*
 * The mu at which @in's capacity is @target (packets / s): the tagged
 * rate's target is target / (1 - target irq); mu is scaled towards it
 * until the net's rate meets it. NaN when it cannot be met.
 */
static double mu_for(const struct rxb_stage_inputs *in, double mu, double target)
{
	double irq = in->irq_ns_per_pkt > 0 ? in->irq_ns_per_pkt * 1e-9 : 0;
	double want, y;

	if (!(target * irq < 0.5))
		return NAN;	/* interrupts would take most of the CPU */
	want = target / (1 - target * irq);
	for (int i = 0; i < CAPACITY_STEPS; i++) {
		y = capacity_pkts_per_s(in, mu);
		if (!(y > 0))
			return NAN;
		y = y / (1 - y * irq);	/* back to the tagged rate */
		if (fabs(y / want - 1) <= CAPACITY_REL_TOL)
			return mu;
		mu *= want / y;
	}
	y = capacity_pkts_per_s(in, mu);
	return fabs(y / target - 1) <= 1e-6 ? mu : NAN;
}

void capacity_calibrate(const struct drain *d, double load, uint64_t now_ns,
			enum capacity_mode mode, struct rxb_stage_inputs *in,
			struct capacity *c)
{
	double ref = in->mu_net_full_per_s > 0 ? in->mu_net_full_per_s : in->mu_net_per_s;
	double mu, f;

	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->basis = CAPACITY_COST;
	c->scale = 1;
	c->drain_scale = NAN;
	c->cost_pkts_per_s = capacity_pkts_per_s(in, ref);
	c->pkts_per_s = c->cost_pkts_per_s;
	c->drain_pkts_per_s = drain_pkts_per_s(d, &c->drain_load);
	c->drain_arrivals_pps = drain_arrivals_pps(d);
	c->drain_epochs = d->taken;
	if (!drain_usable(d, load, now_ns, c->why, sizeof(c->why)))
		return;
	c->drain_usable = true;
	mu = mu_for(in, ref, c->drain_pkts_per_s);
	f = mu / ref;
	if (!(f >= CAPACITY_MIN_SCALE && f <= CAPACITY_MAX_SCALE)) {
		snprintf(c->why, sizeof(c->why),
			 "saturated drain %.0f pkts/s against %.0f from the cost: not taken "
			 "as the capacity", c->drain_pkts_per_s, c->cost_pkts_per_s);
		return;
	}
	c->drain_scale = f;
	if (mode != CAPACITY_MODE_DRAIN) {
		snprintf(c->why, sizeof(c->why),
			 "[model] capacity = cost; the saturated drain (%.0f pkts/s) would scale it x %.3f",
			 c->drain_pkts_per_s, f);
		return;
	}
	in->mu_net_per_s *= f;
	if (in->mu_net_full_per_s > 0)
		in->mu_net_full_per_s = fmin(in->mu_net_full_per_s * f, in->mu_net_per_s);
	c->basis = CAPACITY_DRAIN;
	c->scale = f;
	c->pkts_per_s = c->drain_pkts_per_s;
	snprintf(c->why, sizeof(c->why),
		 "saturated drain at #C+#I %.2f (%llu epochs); the cost gives %.0f pkts/s",
		 c->drain_load, (unsigned long long)c->drain_epochs, c->cost_pkts_per_s);
}
