// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The bottleneck model's set-up: inputs checked, each stage's service
 * rates (tagged-customer net or load-independent, overflowed, between
 * vacations) and its capacity under interrupts. See bneck.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/bneck_model.h"
#include "solver/bulkq.h"
#include "solver/qphase.h"

/* The largest mu_rel_sd taken: beyond it the rate is not a measurement. */
#define MU_REL_SD_MAX 1.0

/* Scratch for bulkq_burst() on queues of up to @k packets. */
static int ws_reserve(struct bneck_ws *ws, uint32_t k)
{
	size_t need = BULKQ_BURST_WORK(k);
	double *w;

	if (need <= ws->qwork_len)
		return 0;
	w = realloc(ws->qwork, need * sizeof(*w));
	if (!w)
		return -ENOMEM;
	ws->qwork = w;
	ws->qwork_len = need;
	return 0;
}

static bool pos_finite(double v)
{
	return v > 0.0 && isfinite(v);
}

static bool nonneg_finite(double v)
{
	return v >= 0.0 && isfinite(v);
}

/* No quota (period 0), or one whose phases the solver takes. */
static bool quota_ok(const struct rxb_stage_inputs *in)
{
	if (!nonneg_finite(in->quota_period_s))
		return false;
	return in->quota_period_s == 0.0 ||
	       qphase_phases_valid(in->quota_period_s, in->quota_slow_s, in->quota_slow_share,
				   in->quota_fast_share);
}

/* See bneck.h. */
int bneck_check_inputs(const struct rxb_stage_inputs *st, uint32_t nstages,
		       const struct bneck_xfer *x)
{
	if (nstages < 1 || nstages > BNECK_MAX_STAGES)
		return -EINVAL;
	for (uint32_t i = 0; i < nstages; i++) {
		if (!pos_finite(st[i].mu_net_per_s) || st[i].queue_pkts < 1 ||
		    st[i].batch_pkts < 1)
			return -EINVAL;
		if (!nonneg_finite(st[i].vacation_s) ||
		    (st[i].vacation_s > 0.0 &&
		     !(st[i].vacation_period_s > st[i].vacation_s &&
		       isfinite(st[i].vacation_period_s))))
			return -EINVAL;
		if (!nonneg_finite(st[i].irq_ns_per_pkt))
			return -EINVAL;
		if (!(st[i].mu_rel_sd >= 0.0) || !(st[i].mu_rel_sd <= MU_REL_SD_MAX))
			return -EINVAL;
		if (!nonneg_finite(st[i].offcpu_per_s) || !nonneg_finite(st[i].offcpu_gap_s) ||
		    !nonneg_finite(st[i].wake_per_s) || !nonneg_finite(st[i].wake_max_s) ||
		    !nonneg_finite(st[i].windows_seen_pps) ||
		    !nonneg_finite(st[i].sat_drain_pkts_per_s) ||
		    !nonneg_finite(st[i].sat_drain_arrivals_pps) ||
		    !(st[i].queue_release_pkts >= 0.0) ||
		    !(st[i].queue_release_pkts <= st[i].queue_pkts))
			return -EINVAL;
		for (size_t r = 0; r < RXB_OFFCPU_SLOTS; r++)
			if (!nonneg_finite(st[i].offcpu_hist[r]) ||
			    !nonneg_finite(st[i].wake_hist[r]) ||
			    !nonneg_finite(st[i].offcpu_mean_s[r]) ||
			    !nonneg_finite(st[i].offcpu_sd_s[r]) ||
			    !nonneg_finite(st[i].wake_mean_s[r]) ||
			    !nonneg_finite(st[i].wake_sd_s[r]))
				return -EINVAL;
		if (!nonneg_finite(st[i].mu_net_full_per_s) ||
		    st[i].mu_net_full_per_s > st[i].mu_net_per_s)
			return -EINVAL;
		if (!quota_ok(&st[i]))
			return -EINVAL;
		if (st[i].load_independent)
			continue;
		if (!pos_finite(st[i].mu_pio_per_s) ||
		    !pos_finite(st[i].mu_disk_per_s) ||
		    !(st[i].cpu_bound >= 0.0) || !(st[i].io_bound >= 0.0))
			return -EINVAL;
	}
	if (!pos_finite(x->payload_bytes) || !pos_finite(x->file_bytes) ||
	    !nonneg_finite(x->one_way_delay_s) ||
	    !pos_finite(x->min_rate_bps) || !pos_finite(x->line_rate_bps) ||
	    !(x->min_rate_bps < x->line_rate_bps) || x->points < 2 ||
	    !(x->loss_episode_pkts == 0.0 ||
	      (x->loss_episode_pkts >= 1.0 && isfinite(x->loss_episode_pkts))) ||
	    !(x->time_slack_rel >= 0.0 && x->time_slack_rel <= 1.0) ||
	    (x->rounds != BNECK_ROUNDS_BURST && x->rounds != BNECK_ROUNDS_SEED) ||
	    (x->loss_model != BNECK_LOSS_QUEUE && x->loss_model != BNECK_LOSS_SPREAD &&
	     x->loss_model != BNECK_LOSS_WINDOWS && x->loss_model != BNECK_LOSS_SERVICE))
		return -EINVAL;
	return 0;
}

/*
 * Packets per second a server of @pkts_per_s keeps up with when interrupts
 * take @irq_ns of its CPU per arrival: the lambda where
 * lambda = pkts_per_s x bneck_irq_share(lambda). Unfloored that is
 * pkts_per_s / (1 + pkts_per_s irq_ns); where the share there is below
 * @min_share, the root lies on the floor, at pkts_per_s x min_share (the
 * difference of both sides falls with lambda, so the root is unique).
 */
static double irq_capacity(double pkts_per_s, double irq_ns, double min_share)
{
	double lam;

	if (!(irq_ns > 0.0))
		return pkts_per_s;
	lam = pkts_per_s / (1.0 + pkts_per_s * irq_ns * 1e-9);
	return fmax(lam, pkts_per_s * min_share);
}

static int stage_service(const struct rxb_stage_inputs *in,
			 const struct bneck_xfer *x, const struct ctmc_opts *o,
			 struct bneck_stage *out)
{
	memset(out, 0, sizeof(*out));
	if (in->load_independent) {
		out->service_rate_per_s = in->mu_net_per_s;
		out->mean_response_s = 1.0 / in->mu_net_per_s;
	} else {
		struct tagged_rates r = {
			.mu_pio_per_s = in->mu_pio_per_s,
			.mu_disk_per_s = in->mu_disk_per_s,
			.mu_net_per_s = in->mu_net_per_s,
		};
		int err = tagged_seed_mean(in->cpu_bound, in->io_bound, &r, o,
					   &out->tagged);

		if (err)
			return err;
		out->tagged_used = true;
		out->service_rate_per_s = out->tagged.service_rate_per_s;
		out->mean_response_s = out->tagged.mean_response_s;
	}
	out->capacity_bps = irq_capacity(out->service_rate_per_s * in->batch_pkts,
					 in->irq_ns_per_pkt, BNECK_IRQ_MIN_SHARE) *
			    x->payload_bytes * 8.0;
	return 0;
}

/* stage_service() of a variant of a stage's inputs: its rate into @mu,
 * its capacity into @capacity_bps (may be NULL). */
static int variant_service(const struct rxb_stage_inputs *v, const struct bneck_xfer *x,
			   const struct ctmc_opts *o, double *mu, double *capacity_bps)
{
	struct bneck_stage st;
	int err = stage_service(v, x, o, &st);

	if (err)
		return err;
	*mu = st.service_rate_per_s;
	if (capacity_bps)
		*capacity_bps = st.capacity_bps;
	return 0;
}

/*
 * The stage's service rate once its queue has overflowed
 * (mu_net_full_per_s) into @mu_full, and the rate it then drains into
 * out->capacity_full_bps.
 */
static int stage_full_service(const struct rxb_stage_inputs *in,
			      const struct bneck_xfer *x, const struct ctmc_opts *o,
			      struct bneck_stage *out, double *mu_full)
{
	struct rxb_stage_inputs full = *in;

	full.mu_net_per_s = in->mu_net_full_per_s;
	return variant_service(&full, x, o, mu_full, &out->capacity_full_bps);
}

/*
 * The stage's service rate between its vacations: the predicted vacations
 * are the CPU-bound tasks' turns, so in between it runs without them
 * (#C = 0). Measured off-CPU windows (@windows) hold every co-runner's
 * turns, the I/O-bound tasks' CPU bursts too: between them it runs alone
 * (#C = #I = 0), or those bursts would count twice.
 */
static int stage_on_service(const struct rxb_stage_inputs *in, bool windows,
			    const struct bneck_xfer *x, const struct ctmc_opts *o,
			    double *mu_on)
{
	struct rxb_stage_inputs alone = *in;

	alone.cpu_bound = 0.0;
	if (windows)
		alone.io_bound = 0.0;
	return variant_service(&alone, x, o, mu_on, NULL);
}

/* See bneck_model.h. */
bool bneck_model_windows(const struct bneck_model *md, uint32_t i)
{
	return (md->x->loss_model == BNECK_LOSS_WINDOWS ||
		md->x->loss_model == BNECK_LOSS_SERVICE) && !md->st[i].load_independent &&
	       (md->st[i].offcpu_per_s > 0.0 || md->st[i].wake_per_s > 0.0);
}

/* See bneck_model.h. */
bool bneck_model_quota(const struct bneck_model *md, uint32_t i)
{
	return (md->x->loss_model == BNECK_LOSS_WINDOWS ||
		md->x->loss_model == BNECK_LOSS_SERVICE) && !md->st[i].load_independent &&
	       md->st[i].quota_period_s > 0.0;
}

/* See bneck_model.h. Scaling the rate where the stage keeps up by it too
 * is exact without interrupts and close with them. */
double bneck_model_scale(const struct bneck_model *md, uint32_t i)
{
	if (md->z == 0.0 || !(md->st[i].mu_rel_sd > 0.0))
		return 1.0;
	return exp(md->z * md->st[i].mu_rel_sd);
}

/* See bneck_model.h. */
bool bneck_model_has_sat_drain(const struct bneck_model *md, uint32_t i)
{
	const struct rxb_stage_inputs *st = &md->st[i];

	return md->x->loss_model == BNECK_LOSS_SERVICE && !st->load_independent &&
	       st->sat_drain_pkts_per_s > 0.0;
}

/*
 * See bneck_model.h. The interrupts of the arrivals come out of the
 * receiver's CPU as in eval_stage()'s share: the drain measured at one
 * arrival rate is moved to another by the ratio of the shares. Not where
 * they took more than BNECK_SAT_MIN_SHARE of it at the measurement: so
 * deep in livelock the share is the model's guess, and a ratio of two
 * guesses could multiply the drain many times.
 */
double bneck_model_sat_drain(const struct bneck_model *md, uint32_t i, double lambda)
{
	const struct rxb_stage_inputs *st = &md->st[i];
	double d, at;

	if (!bneck_model_has_sat_drain(md, i))
		return 0.0;
	d = bneck_model_scale(md, i) * st->sat_drain_pkts_per_s;
	if (!(st->sat_drain_arrivals_pps > 0.0) || !(st->irq_ns_per_pkt > 0.0))
		return d;
	at = bneck_irq_share(st->sat_drain_arrivals_pps, st->irq_ns_per_pkt,
			     BNECK_IRQ_MIN_SHARE);
	if (!(at >= BNECK_SAT_MIN_SHARE))
		return d;
	return d * bneck_irq_share(lambda, st->irq_ns_per_pkt, BNECK_IRQ_MIN_SHARE) / at;
}

/*
 * See bneck_model.h. Windows that leave the receiver more of the CPU than
 * its share beside the co-runners were met while it slept through most
 * of its receiving: a receiver that needs more than its share, and more
 * than it was seen to read with them, has work all the time and gets
 * only that share. A measured saturated drain says what it then gets,
 * and takes the place of this bound.
 */
bool bneck_model_over_share(const struct bneck_model *md, uint32_t i, double lambda)
{
	return md->x->loss_model == BNECK_LOSS_SERVICE && !bneck_model_quota(md, i) &&
	       !bneck_model_has_sat_drain(md, i) && md->share_reach_pkts_per_s[i] > 0.0 &&
	       lambda > bneck_model_scale(md, i) * md->share_reach_pkts_per_s[i];
}

/* See bneck_model.h. */
bool bneck_model_served_alone(const struct bneck_model *md, uint32_t i, double lambda)
{
	double seen = md->st[i].windows_seen_pps, sat;

	if (md->x->loss_model != BNECK_LOSS_SERVICE)
		return false;
	/* The quota's phases are known from its settings, at any rate. */
	if (bneck_model_quota(md, i))
		return true;
	/*
	 * Above what it drained with its queue overflowed, the receiver
	 * never catches up: it stays runnable, and its co-runners take
	 * their turns between its runs rather than in windows it can
	 * recover from.
	 */
	sat = bneck_model_sat_drain(md, i, lambda);
	if (sat > 0.0 && lambda > sat)
		return false;
	if (bneck_model_over_share(md, i, lambda))
		return false;
	return bneck_model_windows(md, i) && !(seen > 0.0 && lambda > BNECK_WINDOWS_REACH * seen);
}

double bneck_model_on_drain(const struct bneck_model *md, uint32_t i, double scale)
{
	return scale * md->mu_on[i] * md->st[i].batch_pkts;
}

struct offwin_in bneck_model_window_in(const struct bneck_model *md, uint32_t i,
				       double scale)
{
	const struct rxb_stage_inputs *st = &md->st[i];
	struct offwin_in in = {
		.per_s = st->offcpu_per_s,
		.count = st->offcpu_hist,
		.mean_s = st->offcpu_mean_s,
		.sd_s = st->offcpu_sd_s,
		.nslots = RXB_OFFCPU_SLOTS,
		.queue_pkts = st->queue_pkts,
		.on_pkts_per_s = bneck_model_on_drain(md, i, scale),
		.gap_s = st->offcpu_gap_s,
		.wake_per_s = st->wake_per_s,
		.wake_count = st->wake_hist,
		.wake_mean_s = st->wake_mean_s,
		.wake_sd_s = st->wake_sd_s,
		.wake_max_s = st->wake_max_s,
		.release_pkts = st->queue_release_pkts,
		.round_pkts = fmax(md->x->file_bytes / md->x->payload_bytes, 1.0),
		.pieces = &md->pieces[i],
	};

	return in;
}

/*
 * Stage @i's share_reach_pkts_per_s (bneck_model.h): the larger of its
 * shared drain and the fastest reads its windows were met at, where its
 * windows (at scale 1, after mu_on[i]) leave it more than that between
 * them, c (1 - their share of the time); else 0, and 0 where those reads
 * are not known: windows are then taken as met at the rate asked.
 */
static double share_reach(const struct bneck_model *md, uint32_t i)
{
	struct offwin_in in = bneck_model_window_in(md, i, 1.0);
	double shared = md->mu[i] * md->st[i].batch_pkts;
	double seen = md->st[i].windows_seen_pps, reach;

	if (md->x->loss_model != BNECK_LOSS_SERVICE || !(shared > 0.0) || !(seen > 0.0))
		return 0.0;
	reach = fmax(shared, seen);
	return in.on_pkts_per_s * (1.0 - offwin_off_share(&in)) > reach ? reach : 0.0;
}

/* See bneck_model.h. */
int bneck_model_setup(struct bneck_model *md, struct bneck_ws *ws,
		      const struct ctmc_opts *o, struct bneck_result *res)
{
	const struct rxb_stage_inputs *stages = md->st;
	const struct bneck_xfer *x = md->x;
	uint32_t nstages = md->nstages;
	bool away;
	int err;

	memset(res, 0, sizeof(*res));
	err = bneck_check_inputs(stages, nstages, x);
	if (err)
		return err;
	if (x->points > ws->cap)
		return -EINVAL;
	md->rb.file_bytes = x->file_bytes;
	md->rb.payload_bytes = x->payload_bytes;
	md->rb.one_way_delay_s = x->one_way_delay_s;
	md->rb.loss_episode_pkts = x->loss_episode_pkts;
	if (x->rounds == BNECK_ROUNDS_BURST) {
		uint32_t kmax = 0;

		for (uint32_t i = 0; i < nstages; i++)
			if (stages[i].queue_pkts > kmax)
				kmax = stages[i].queue_pkts;
		err = ws_reserve(ws, kmax);
		if (err)
			return err;
		md->qwork = ws->qwork;
	}
	md->file_pkts = fmax(x->file_bytes / x->payload_bytes, 1.0);
	res->nstages = nstages;
	for (uint32_t i = 0; i < nstages; i++) {
		md->max_rel_sd = fmax(md->max_rel_sd, stages[i].mu_rel_sd);
		err = stage_service(&stages[i], x, o, &res->stage[i]);
		if (err)
			return err;
		md->mu[i] = res->stage[i].service_rate_per_s;
		if (res->stage[i].tagged.rel_err > res->model_rel_err)
			res->model_rel_err = res->stage[i].tagged.rel_err;
		if (stages[i].mu_net_full_per_s > 0.0 &&
		    stages[i].mu_net_full_per_s < stages[i].mu_net_per_s) {
			err = stage_full_service(&stages[i], x, o, &res->stage[i],
						 &md->mu_full[i]);
			if (err)
				return err;
			md->keep_up_pkts_per_s[i] = res->stage[i].capacity_bps /
						    (x->payload_bytes * 8.0);
		}
		/* The windows or a quota's phases hold every co-runner's turns. */
		away = bneck_model_windows(md, i) || bneck_model_quota(md, i);
		if (bneck_model_windows(md, i)) {
			struct offwin_in in = bneck_model_window_in(md, i, 1.0);

			offwin_pieces_init(&md->pieces[i], &in);
		}
		if ((x->obey_pauses && stages[i].vacation_s > 0.0) || away) {
			err = stage_on_service(&stages[i], away, x, o, &md->mu_on[i]);
			if (err)
				return err;
			md->paused[i] = x->obey_pauses && stages[i].vacation_s > 0.0;
		}
		if (bneck_model_windows(md, i)) {
			md->share_reach_pkts_per_s[i] = share_reach(md, i);
			if (!bneck_model_has_sat_drain(md, i))
				res->stage[i].share_reach_bps = md->share_reach_pkts_per_s[i] *
								x->payload_bytes * 8.0;
		}
	}
	return 0;
}

