/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a watched socket's receiver threads ran in an epoch
 * (struct rxb_sock_meas.ran_on), for the model's per-flow parts.
 */
#ifndef RXB_DAEMON_MODEL_RAN_ON_H
#define RXB_DAEMON_MODEL_RAN_ON_H

#include <math.h>
#include <stdbool.h>

#include "common/util.h"
#include "rxb/measure.h"

/* The CPUs the receiver ran on that the record holds (ran_on is bounded). */
static inline int ran_on_count(const struct rxb_sock_meas *s)
{
	return s->ncpus_ran < (int)RXB_ARRAY_SIZE(s->ran_on) ? s->ncpus_ran :
	       (int)RXB_ARRAY_SIZE(s->ran_on);
}

/* The receiver's on-CPU time over them, ns. */
static inline double ran_on_total_ns(const struct rxb_sock_meas *s)
{
	double total = 0;

	for (int i = 0; i < ran_on_count(s); i++)
		total += (double)s->ran_on[i].oncpu_ns;
	return total;
}

/*
 * #C + #I of the CPUs the receiver ran on in @e, weighted by its on-CPU
 * time on each, #C by its effective count where measured (as the model's
 * inputs take it, inputs.c): false when a CPU or its counts are unknown.
 */
static inline bool ran_on_load(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
			       double *load)
{
	double total = ran_on_total_ns(s);

	*load = 0;
	if (!(total > 0))
		return false;
	for (int i = 0; i < ran_on_count(s); i++) {
		const struct rxb_cpu_meas *c;
		int cpu = s->ran_on[i].cpu;
		double n;

		if (!s->ran_on[i].oncpu_ns)
			continue;
		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS)
			return false;
		c = &e->cpus[cpu];
		n = (c->cpu_bound_eff_valid && isfinite(c->cpu_bound_eff) ? c->cpu_bound_eff
									   : c->cpu_bound) +
		    c->io_bound;
		if (!isfinite(n) || n < 0)
			return false;
		*load += (double)s->ran_on[i].oncpu_ns / total * n;
	}
	return true;
}

#endif
