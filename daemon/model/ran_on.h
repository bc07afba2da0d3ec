/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a watched socket's receiver threads ran in an epoch
 * (struct rxb_sock_meas.ran_on), for the model's per-flow parts.
 */
#ifndef RXB_DAEMON_MODEL_RAN_ON_H
#define RXB_DAEMON_MODEL_RAN_ON_H

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

#endif
