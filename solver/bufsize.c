// SPDX-License-Identifier: GPL-2.0-or-later
/* Model-sized receive buffers. See bufsize.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "solver/bneck.h"
#include "solver/bufsize.h"
#include "solver/bulkq.h"

/* The time criterion's grid: K grows by 2^(1/4) per point. */
#define GRID_RATIO	1.189207115002721

static int check_stage(const struct bufsize_stage *s)
{
	if (!(s->arrival_per_s >= 0.0) || !isfinite(s->arrival_per_s) ||
	    !(s->service_per_s > 0.0) || !isfinite(s->service_per_s) ||
	    s->batch_pkts < 1 ||
	    !(s->vacation_s >= 0.0) || !isfinite(s->vacation_s) ||
	    (s->vacation_s > 0.0 && !(s->vacation_period_s > s->vacation_s &&
				      isfinite(s->vacation_period_s))))
		return -EINVAL;
	return 0;
}

int bufsize_stage_loss(const struct bufsize_stage *s, uint32_t k, double *loss)
{
	struct bulkq_params p = {
		.arrival_per_s = s->arrival_per_s,
		.service_per_s = s->service_per_s,
		.queue_pkts = k,
		.batch_pkts = s->batch_pkts,
		.rule = s->rule,
	};
	struct bulkq_result r;
	int err = check_stage(s);

	if (!err)
		err = bulkq_loss(&p, &r);
	/* mu N / lambda beyond 1e100: the queue loses below e^(-230 K/N). */
	if (err == -ERANGE)
		r.loss = 0.0;
	else if (err)
		return err;
	*loss = fmax(r.loss, bneck_vacation_loss(s->arrival_per_s, (double)k,
						 s->vacation_s, s->vacation_period_s));
	return 0;
}

/* The least K the search may answer: a strict server needs N queued. */
static uint32_t least_k(const struct bufsize_stage *s, uint32_t min_pkts)
{
	uint32_t lo = min_pkts ? min_pkts : 1;

	if (s->rule == RXB_BATCH_STRICT && lo < s->batch_pkts)
		lo = s->batch_pkts;
	return lo;
}

/*
 * A search's test of one K: whether the criterion holds there, and the
 * value it is judged by (the loss, or T). Counts the evaluation in the
 * result; 0 or the evaluation's error.
 */
typedef int (*k_test_fn)(void *ctx, uint32_t k, bool *ok, double *v);

/*
 * Between @lo, which fails, and *@hi, which holds with value *@hi_v: the
 * least K that holds, into *@hi and *@hi_v (exact when the criterion does
 * not fail again above a K that holds).
 */
static int bisect(k_test_fn test, void *ctx, uint32_t lo, uint32_t *hi, double *hi_v)
{
	while (*hi - lo > 1) {
		uint32_t mid = lo + (*hi - lo) / 2;
		double v;
		bool ok;
		int err = test(ctx, mid, &ok, &v);

		if (err)
			return err;
		if (ok) {
			*hi = mid;
			*hi_v = v;
		} else {
			lo = mid;
		}
	}
	return 0;
}

struct probe {
	const struct bufsize_stage *s;
	double target;
	struct bufsize_result *r;
};

/* Does K meet the loss target? A k_test_fn on a struct probe. */
static int loss_ok(void *ctx, uint32_t k, bool *ok, double *loss)
{
	struct probe *pr = ctx;
	int err = bufsize_stage_loss(pr->s, k, loss);

	pr->r->evaluations++;
	*ok = !err && *loss <= pr->target;
	return err;
}

struct time_probe {
	bufsize_time_fn fn;
	void *ctx;
	double bound;
	struct bufsize_result *r;
};

/* Is T at K within the bound? A k_test_fn on a struct time_probe. */
static int time_ok(void *ctx, uint32_t k, bool *ok, double *t)
{
	struct time_probe *tp = ctx;
	int err = tp->fn(tp->ctx, k, t);

	tp->r->evaluations++;
	*ok = !err && *t <= tp->bound;
	return err;
}

int bufsize_for_loss(const struct bufsize_stage *s, double target,
		     uint32_t min_pkts, uint32_t max_pkts, struct bufsize_result *r)
{
	struct probe pr = { .s = s, .target = target, .r = r };
	uint32_t lo = least_k(s, min_pkts), hi, step;
	double loss, hi_loss;
	bool ok;
	int err;

	memset(r, 0, sizeof(*r));
	if (!(target >= 0.0 && target < 1.0) || max_pkts < lo)
		return -EINVAL;
	err = loss_ok(&pr, max_pkts, &ok, &r->loss_at_max);
	if (err)
		return err;
	r->queue_pkts = max_pkts;
	r->loss = r->loss_at_max;
	if (!ok)
		return 0;
	r->met = true;
	err = loss_ok(&pr, lo, &ok, &loss);
	if (err || ok) {
		if (ok) {
			r->queue_pkts = lo;
			r->loss = loss;
		}
		return err;
	}
	/* lo fails, max holds: double up from lo, then bisect. */
	hi = max_pkts;
	hi_loss = r->loss_at_max;
	for (step = 1; lo + step < hi; step *= 2) {
		err = loss_ok(&pr, lo + step, &ok, &loss);
		if (err)
			return err;
		if (ok) {
			hi = lo + step;
			hi_loss = loss;
			break;
		}
		lo += step;
		if (step > UINT32_MAX / 4)
			break;
	}
	err = bisect(loss_ok, &pr, lo, &hi, &hi_loss);
	if (err)
		return err;
	r->queue_pkts = hi;
	r->loss = hi_loss;
	return 0;
}

int bufsize_for_time(bufsize_time_fn fn, void *ctx, double slack,
		     uint32_t min_pkts, uint32_t max_pkts, struct bufsize_result *r)
{
	struct time_probe tp = { .fn = fn, .ctx = ctx, .r = r };
	uint32_t lo = min_pkts ? min_pkts : 1, hi, prev;
	double t, hi_t;
	bool ok;
	int err;

	memset(r, 0, sizeof(*r));
	if (!(slack >= 0.0) || !isfinite(slack) || max_pkts < lo)
		return -EINVAL;
	err = fn(ctx, max_pkts, &r->time_ref_s);
	r->evaluations++;
	if (err)
		return err;
	if (!(r->time_ref_s > 0.0) || !isfinite(r->time_ref_s))
		return -EDOM;
	tp.bound = (1.0 + slack) * r->time_ref_s;
	r->queue_pkts = max_pkts;
	r->time_s = r->time_ref_s;
	r->met = true;
	/* The grid: the first K that holds, and the one before it (prev, the
	 * last K that failed; at first the one below the range). */
	prev = lo - 1;
	hi = max_pkts;
	hi_t = r->time_ref_s;
	for (double g = lo; g < max_pkts; g *= GRID_RATIO) {
		uint32_t k = (uint32_t)g;

		if (k <= prev)
			k = prev + 1;
		if (k >= max_pkts)
			break;
		err = time_ok(&tp, k, &ok, &t);
		if (err)
			return err;
		if (ok) {
			hi = k;
			hi_t = t;
			break;
		}
		prev = k;
		g = k;
	}
	err = bisect(time_ok, &tp, prev, &hi, &hi_t);
	if (err)
		return err;
	r->queue_pkts = hi;
	r->time_s = hi_t;
	return 0;
}

uint64_t bufsize_bytes(uint32_t k, double truesize_bytes)
{
	double b = ceil((double)k * truesize_bytes);

	if (!(b > 0.0))
		return 0;
	return ((uint64_t)b + 1) & ~1ULL;
}

uint32_t bufsize_pkts(uint64_t bytes, double truesize_bytes)
{
	double k;

	if (!(truesize_bytes > 0.0))
		return 1;
	k = floor((double)bytes / truesize_bytes);
	if (k < 1.0)
		return 1;
	return k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
}
