// SPDX-License-Identifier: GPL-2.0-or-later
/* Loss to a co-runner held to a CPU quota. See qphase.h. */
#include "solver/qphase.h"

#include <errno.h>
#include <math.h>

/* Periods iterated after the last jump before the state is taken as periodic. */
#define QPHASE_MAX_STEPS	64

/* One period of the fluid queue. */
struct qphase_period {
	double rise_slow;	/* (λ - c s_slow) T_s: the slow phase's net fill */
	double rise;		/* and the whole period's, d */
	double queue_pkts;
	double slow_s, fast_s;
	double net_slow, net_fast;	/* λ - c s, packets/s */
};

bool qphase_phases_valid(double period_s, double slow_s, double slow_share,
			 double fast_share)
{
	return isfinite(period_s) && period_s > 0.0 && isfinite(slow_s) && slow_s > 0.0 &&
	       slow_s <= period_s && isfinite(slow_share) && slow_share > 0.0 &&
	       slow_share <= 1.0 && isfinite(fast_share) && fast_share >= slow_share &&
	       fast_share <= 1.0;
}

bool qphase_valid(const struct qphase_in *in)
{
	return qphase_phases_valid(in->period_s, in->slow_s, in->slow_share, in->fast_share) &&
	       isfinite(in->queue_pkts) && in->queue_pkts >= 1.0 &&
	       isfinite(in->on_pkts_per_s) && in->on_pkts_per_s > 0.0;
}

/* One phase from @q: the queue at its end; what overflowed into @lost. */
static double phase_step(double q, double net_per_s, double len_s, double k, double *lost)
{
	double end = q + net_per_s * len_s;

	if (end > k) {
		*lost += end - k;
		return k;
	}
	return end < 0.0 ? 0.0 : end;
}

/* One period from @q0 (the queue at its start); its loss into @lost. */
static double period_step(const struct qphase_period *p, double q0, double *lost)
{
	double q1;

	*lost = 0.0;
	q1 = phase_step(q0, p->net_slow, p->slow_s, p->queue_pkts, lost);
	return phase_step(q1, p->net_fast, p->fast_s, p->queue_pkts, lost);
}

/*
 * Periods from @q0 in which neither bound is reached: the queue only
 * moves by d each, and nothing is lost. 0 where one is reached at once.
 */
static double free_periods(const struct qphase_period *p, double q0)
{
	double hi = fmax(0.0, fmax(p->rise_slow, p->rise));
	double lo = fmin(0.0, fmin(p->rise_slow, p->rise));

	if (q0 + hi > p->queue_pkts || q0 + lo < 0.0 || p->rise == 0.0)
		return 0.0;
	if (p->rise > 0.0)
		return floor((p->queue_pkts - hi - q0) / p->rise);
	return floor((q0 + lo) / -p->rise);
}

int qphase_eval(const struct qphase_in *in, double lambda, struct qphase_eval *out)
{
	struct qphase_period p;
	double q = 0.0, lost = 0.0, sum_lost = 0.0, periods = 0.0, n;

	out->loss = out->absorb_pkts = out->lossy_per_s = 0.0;
	if (!qphase_valid(in) || !isfinite(lambda) || !(lambda > 0.0))
		return -EINVAL;
	p.queue_pkts = in->queue_pkts;
	p.slow_s = in->slow_s;
	p.fast_s = in->period_s - in->slow_s;
	p.net_slow = lambda - in->on_pkts_per_s * in->slow_share;
	p.net_fast = lambda - in->on_pkts_per_s * in->fast_share;
	p.rise_slow = p.net_slow * p.slow_s;
	p.rise = p.rise_slow + p.net_fast * p.fast_s;
	/*
	 * From an empty queue the state after each period is a nondecreasing
	 * function of the one before with slopes 0 and 1: it drifts by d
	 * while no bound is reached (jumped over at once), then settles.
	 */
	for (int steps = 0; steps < QPHASE_MAX_STEPS; steps++) {
		double next;

		n = free_periods(&p, q);
		q += n * p.rise;
		periods += n;
		next = period_step(&p, q, &lost);
		periods += 1.0;
		sum_lost += lost;
		if (fabs(next - q) <= 1e-12 * p.queue_pkts)
			break;
		q = next;
	}
	out->loss = fmin(1.0, lost / (lambda * in->period_s));
	/* The periods before the periodic state lost less than it. */
	out->absorb_pkts = fmax(0.0, periods * lost - sum_lost);
	out->lossy_per_s = lost > 0.0 ? 1.0 / in->period_s : 0.0;
	return 0;
}
