// SPDX-License-Identifier: GPL-2.0-or-later
/* Predictions against outcomes, per flow. See outcome.h. */
#include "daemon/model/outcome.h"

#include <math.h>
#include <string.h>

void outcome_init(struct outcome *o)
{
	memset(o, 0, sizeof(*o));
}

int outcome_add(struct outcome *o, uint64_t at_ns, const struct rxbneck_rate *pred,
		uint64_t rtt_us, const struct rxbneck_report *r)
{
	struct outcome_entry *e;
	bool modelled = pred && pred->confidence > 0;
	uint64_t first_pkts;

	if (r->flags & RXBNECK_REPORT_ABORTED) {
		o->aborted++;
		return 0;
	}
	e = &o->e[o->next];
	memset(e, 0, sizeof(*e));
	e->at_ns = at_ns;
	e->file_bytes = r->file_bytes;
	e->rtt_us = rtt_us;
	e->pred_rate_bps = pred ? (double)pred->rate_bps : NAN;
	e->pred_confidence = pred ? pred->confidence : 0;
	e->sent_rate_bps = (double)r->rate_bps;
	e->pred_time_s = modelled && pred->xfer_time_us ? pred->xfer_time_us / 1e6 : NAN;
	e->meas_time_s = r->elapsed_us / 1e6;
	e->pred_loss = modelled && pred->loss >= 0 && pred->loss <= 1 ? pred->loss : NAN;
	first_pkts = r->pkts_sent >= r->pkts_resent ? r->pkts_sent - r->pkts_resent : 0;
	e->meas_loss = first_pkts ? (double)r->pkts_lost_first / (double)first_pkts : NAN;
	e->rounds = r->rounds;
	o->next = (o->next + 1) % OUTCOME_MAX;
	if (o->n < OUTCOME_MAX)
		o->n++;
	o->total++;
	return 1;
}

const struct outcome_entry *outcome_at(const struct outcome *o, uint32_t i)
{
	uint32_t first = (o->next + OUTCOME_MAX - o->n) % OUTCOME_MAX;

	return &o->e[(first + i) % OUTCOME_MAX];
}

/* Median of @v[0..n) (n >= 1), sorting it. */
static double median(double *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		double x = v[i];
		uint32_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void outcome_stats(const struct outcome *o, struct outcome_stats *s)
{
	double ratio[OUTCOME_MAX];
	double rsum = 0, esum = 0, bsum = 0;

	memset(s, 0, sizeof(*s));
	s->n = o->n;
	for (uint32_t i = 0; i < o->n; i++) {
		const struct outcome_entry *e = outcome_at(o, i);

		if (isfinite(e->pred_time_s) && e->pred_time_s > 0 && isfinite(e->meas_time_s)) {
			ratio[s->n_time] = e->meas_time_s / e->pred_time_s;
			rsum += ratio[s->n_time++];
		}
		if (isfinite(e->pred_loss) && isfinite(e->meas_loss)) {
			esum += fabs(e->meas_loss - e->pred_loss) * 100;
			bsum += (e->meas_loss - e->pred_loss) * 100;
			s->n_loss++;
		}
	}
	s->time_ratio_mean = s->n_time ? rsum / s->n_time : NAN;
	s->time_ratio_min = s->time_ratio_max = NAN;
	for (uint32_t i = 0; i < s->n_time; i++) {
		if (!(ratio[i] >= s->time_ratio_min))
			s->time_ratio_min = ratio[i];
		if (!(ratio[i] <= s->time_ratio_max))
			s->time_ratio_max = ratio[i];
	}
	s->time_ratio_median = s->n_time ? median(ratio, s->n_time) : NAN;
	s->loss_err_pp_mean = s->n_loss ? esum / s->n_loss : NAN;
	s->loss_bias_pp_mean = s->n_loss ? bsum / s->n_loss : NAN;
}
