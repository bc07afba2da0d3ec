// SPDX-License-Identifier: GPL-2.0-or-later
/* The arrivals of an epoch without the per-packet probes. See arrive.h. */
#include "daemon/model/arrive.h"

#include <math.h>
#include <string.h>

void arrive_init(struct arrive *a)
{
	memset(a, 0, sizeof(*a));
	cost_fit_init(&a->fit);
}

double arrive_estimate(const struct arrive *a, const struct rxb_sock_meas *s, double *reads)
{
	double t, w, p;

	*reads = NAN;
	if (!s || !s->receivers_valid || !a->fit.known || !(a->fit.b_ns > 0))
		return NAN;
	t = (double)s->receiver_oncpu_ns;
	w = (double)s->recv_wakeups;
	/* A wake-up cost above the time (few packets, a long wake-up): none read. */
	p = fmax(t - a->fit.a_ns * w, 0) / a->fit.b_ns;
	*reads = p;
	return p + (double)s->drops;
}

/* Check the estimate of @s's arrivals, @act_s seconds of receiving. */
static void check(struct arrive *a, const struct rxb_sock_meas *s, double act_s)
{
	double reads, est = arrive_estimate(a, s, &reads), counted;
	double e;

	counted = (double)(s->pkts_in ? s->pkts_in : s->pkts_out);
	if (!(est > 0) || !(counted > 0))
		return;
	e = log(est / counted);
	a->err_sum += fabs(e) * act_s;
	a->bias_sum += e * act_s;
	a->checked_s += act_s;
	a->checked_w += 1;
	a->checks++;
}

void arrive_learn(struct arrive *a, const struct rxb_sock_meas *s, double act_s, double d)
{
	bool ok = s && s->receivers_valid && s->counts_valid;

	a->err_sum *= d;
	a->bias_sum *= d;
	a->checked_s *= d;
	a->checked_w *= d;
	if (ok && act_s >= ARRIVE_MIN_CHECK_EPOCH_S && isfinite(act_s))
		check(a, s, act_s);
	if (ok)
		cost_fit_add(&a->fit, d, (double)s->recv_wakeups, (double)s->pkts_out, 0,
			     (double)s->receiver_oncpu_ns);
	else
		cost_fit_decay(&a->fit, d);
}

double arrive_err(const struct arrive *a)
{
	return a->checked_s > 0 ? a->err_sum / a->checked_s : NAN;
}

double arrive_bias(const struct arrive *a)
{
	return a->checked_s > 0 ? a->bias_sum / a->checked_s : NAN;
}

bool arrive_trusted(const struct arrive *a)
{
	return a->checked_w >= ARRIVE_MIN_CHECKS && arrive_err(a) <= ARRIVE_MAX_ERR;
}
