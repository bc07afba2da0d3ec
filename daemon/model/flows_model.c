// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A flow's models: one per distinct transfer of its senders, each solved
 * on the flow's shared inputs, and the rates each publishes. See flows.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/model/flows_int.h"
#include "solver/bneck_pieces.h"
#include "solver/offwin.h"

/* A solve whose error bounds exceed this is trusted less. */
#define FLOWS_REL_ERR_OK	1e-6

/* ------------------------------------------------------------ transfer -- */

void flows_xfer_defaults(const struct flows *f, struct flow_xfer *x)
{
	memset(x, 0, sizeof(*x));
	x->payload_bytes = f->p.payload_bytes;
	x->file_bytes = f->p.file_bytes;
	x->one_way_delay_s = f->p.one_way_delay_s;
	x->line_rate_bps = f->p.line_rate_bps;
	x->min_rate_bps = f->p.min_rate_bps;
}

/*
 * The search range: up to the configured line rate or the sender's own
 * ceiling, whichever is lower. A ceiling at or below the configured
 * minimum moves the minimum to 1 % of it (the search needs min < max).
 */
void flows_xfer_range(const struct flows *f, struct flow_xfer *x)
{
	x->line_rate_bps = f->p.line_rate_bps;
	if (x->sender_max_rate_bps && (double)x->sender_max_rate_bps < x->line_rate_bps)
		x->line_rate_bps = (double)x->sender_max_rate_bps;
	x->min_rate_bps = f->p.min_rate_bps;
	if (x->min_rate_bps >= x->line_rate_bps)
		x->min_rate_bps = x->line_rate_bps / 100;
}

/* The sender's view: its payload and file size, half its RTT, its ceiling. */
static void xfer_from_peer(const struct flows *f, const struct sendsrv_peer *p,
			   struct flow_xfer *x)
{
	const struct rxbneck_hello *h = &p->hello;

	flows_xfer_defaults(f, x);
	x->from_sender = true;
	x->sender_max_rate_bps = h->max_rate_bps;
	rxb_strlcpy(x->sender, p->addr_str, sizeof(x->sender));
	if (h->payload_bytes)
		x->payload_bytes = h->payload_bytes;
	if (h->file_bytes)
		x->file_bytes = (double)h->file_bytes;
	if (h->rtt_us)
		x->one_way_delay_s = h->rtt_us / 2e6;
	flows_xfer_range(f, x);
}

/* ---------------------------------------------------------------- models -- */

/* What a sender's HELLO makes its transfer: fixed for the connection. */
static struct flow_xfer_key key_of(const struct sendsrv_peer *p)
{
	struct flow_xfer_key k = {
		.file_bytes = p->hello.file_bytes,
		.max_rate_bps = p->hello.max_rate_bps,
		.payload_bytes = p->hello.payload_bytes,
		.rtt_bucket = p->hello_rtt_us ?
			      (int32_t)floor(log(p->hello_rtt_us) / log(FLOWS_RTT_BUCKET)) : -1,
	};

	return k;
}

static bool key_equal(const struct flow_xfer_key *a, const struct flow_xfer_key *b)
{
	return a->file_bytes == b->file_bytes && a->max_rate_bps == b->max_rate_bps &&
	       a->payload_bytes == b->payload_bytes && a->rtt_bucket == b->rtt_bucket;
}

void flows_model_defaults(const struct flows *f, struct flow_model *m)
{
	memset(m, 0, sizeof(*m));
	flows_xfer_defaults(f, &m->xfer);
	m->key.rtt_bucket = -2;		/* no sender's */
	m->created_ns = flows_now_ns(f);
}

/* The index of @p's transfer's model in @fl, -1 when it has none. */
static int find(const struct flow *fl, const struct sendsrv_peer *p)
{
	struct flow_xfer_key k = key_of(p);

	for (int i = 0; i < fl->nmodels; i++)
		if (fl->m[i].xfer.from_sender && key_equal(&fl->m[i].key, &k))
			return i;
	return -1;
}

struct flow_model *flows_model_find(struct flow *fl, const struct sendsrv_peer *p)
{
	int i = find(fl, p);

	return i < 0 ? NULL : &fl->m[i];
}

struct flow_model *flows_model_add(struct flows *f, struct flow *fl,
				   const struct sendsrv_peer *p, bool *made)
{
	struct flow_model *m = flows_model_find(fl, p);

	*made = false;
	if (m)
		return m;
	/* The one left when the last senders went (or the defaults') gives way. */
	for (int i = 0; i < fl->nmodels && !m; i++)
		if (!fl->m[i].nsenders)
			m = &fl->m[i];
	if (!m && fl->nmodels == FLOW_MAX_XFERS)
		return NULL;
	if (!m)
		m = &fl->m[fl->nmodels++];
	memset(m, 0, sizeof(*m));
	m->key = key_of(p);
	xfer_from_peer(f, p, &m->xfer);
	m->created_ns = flows_now_ns(f);
	*made = true;
	return m;
}

void flows_model_unused(struct flow *fl, struct flow_model *m)
{
	int i = (int)(m - fl->m);

	for (int j = 0; j < fl->nmodels; j++)
		if (fl->m[j].nsenders) {
			memmove(&fl->m[i], &fl->m[i + 1],
				(size_t)(fl->nmodels - i - 1) * sizeof(fl->m[0]));
			fl->nmodels--;
			return;
		}
	/* The flow's last senders left: their model stays, as the flow's. */
}

/* The nearest of @fl's models with a rate: a sender without its own. */
static const struct flow_model *nearest(const struct flows *f, const struct flow *fl,
					const struct sendsrv_peer *p)
{
	const struct flow_model *best = NULL;
	double best_d = INFINITY;
	struct flow_xfer x;

	xfer_from_peer(f, p, &x);
	for (int i = 0; i < fl->nmodels; i++) {
		const struct flow_xfer *y = &fl->m[i].xfer;
		double d = 4 * fabs(log(x.payload_bytes / y->payload_bytes)) +
			   fabs(log(x.file_bytes / y->file_bytes)) +
			   fabs(log(x.line_rate_bps / y->line_rate_bps)) +
			   fabs(log((x.one_way_delay_s + 1e-6) / (y->one_way_delay_s + 1e-6)));

		if (fl->m[i].has_rate && !(d >= best_d)) {
			best = &fl->m[i];
			best_d = d;
		}
	}
	return best;
}

const struct flow_model *flows_model_of(const struct flows *f, const struct flow *fl,
					const struct sendsrv_peer *p, bool *exact)
{
	int i = find(fl, p);

	*exact = i >= 0;
	return i >= 0 ? &fl->m[i] : nearest(f, fl, p);
}

/* ------------------------------------------------------------- publish -- */

static uint16_t degraded_flag(const struct rxb_epoch *e)
{
	if (e && (e->degraded & (RXB_DEGRADED_NO_BPF | RXB_DEGRADED_PARTIAL_PROBES)))
		return RXBNECK_RATE_DEGRADED;
	return 0;
}

static uint64_t to_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)llround(v);
}

/* What the model's senders are told (flows_rate_for()) until its next run. */
static void publish(struct flow_model *m, const struct rxbneck_rate *r,
		    const struct rxbneck_rate *between)
{
	m->rate = *r;
	m->has_rate = true;
	m->has_rate_between = between != NULL;
	if (between)
		m->rate_between = *between;
}

/*
 * PROTOCOL.md §6.1: UNCONSTRAINED says the receiving host is not the
 * bottleneck, which the top of the search alone does not show (with little
 * delay, blasting and resending can beat a lossy receiver): the model must
 * also predict loss below FLOWS_UNCONSTRAINED_LOSS there, and the flow's
 * last counted epoch must not show the host dropping more than that share
 * of the datagrams that reached the socket.
 */
static bool receiver_keeps_up(const struct flow *fl, const struct flow_estimate *g)
{
	const struct inputs_traffic *t = &fl->counted;

	if (!(g->res.loss <= FLOWS_UNCONSTRAINED_LOSS))
		return false;
	return !fl->counted_seq ||
	       (double)t->drops <= FLOWS_UNCONSTRAINED_LOSS * (double)t->pkts_in;
}

static void publish_estimate(const struct flow *fl, struct flow_model *m,
			     const struct rxb_epoch *e, bool stale)
{
	const struct flow_estimate *g = &m->good;
	struct rxbneck_rate r = {
		.port = fl->port,
		.flags = degraded_flag(e),
		.confidence = g->confidence,
		.rate_bps = to_u64(g->res.rate_bps),
		.loss = g->res.loss,
		.epoch = g->epoch,
		.xfer_time_us = to_u64(g->res.time_s * 1e6),
	};

	if (stale)
		r.flags |= RXBNECK_RATE_STALE;
	if (g->unconstrained && receiver_keeps_up(fl, g))
		r.flags |= RXBNECK_RATE_UNCONSTRAINED;
	if (fl->inputs.no_traffic)
		r.flags |= RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL;
	if (fl->inputs.no_traffic && fl->learn.prior == LEARN_PRIOR_DEFAULT)
		r.flags |= RXBNECK_RATE_DEFAULT_COST;
	if (!(r.loss >= 0) || r.loss > 1)
		r.loss = 1;	/* cannot happen for a successful solve */
	m->state = stale ? FLOW_STALE : FLOW_MODEL;
	if (g->has_between) {
		struct rxbneck_rate b = r;

		b.flags |= RXBNECK_RATE_BETWEEN_PAUSES;
		b.rate_bps = to_u64(g->between.rate_bps);
		b.loss = g->between.loss >= 0 && g->between.loss <= 1 ? g->between.loss : 1;
		b.xfer_time_us = to_u64(g->between.time_s * 1e6);
		publish(m, &r, &b);
		return;
	}
	publish(m, &r, NULL);
}

/*
 * Nothing to model: the top of the search, flagged as not computed, and as
 * without traffic unless packets were seen (without BPF the receive path
 * cannot be modelled, but /proc shows the port receiving).
 */
static void publish_provisional(const struct flow *fl, struct flow_model *m,
				const struct rxb_epoch *e)
{
	struct rxbneck_rate r = {
		.port = fl->port,
		.flags = degraded_flag(e),
		.confidence = 0,
		.rate_bps = to_u64(m->xfer.line_rate_bps),
		.loss = 0,
		.epoch = e ? e->seq : 0,
		.xfer_time_us = 0,
	};

	if (fl->learn.origin != VALUE_MEASURED && !fl->packets_seen)
		r.flags |= RXBNECK_RATE_NO_TRAFFIC;
	m->state = FLOW_PROVISIONAL;
	publish(m, &r, NULL);
}

/*
 * A TCP flow (struct inputs_tcp): the drain rate, up to the line rate. The
 * loss on the wire is 0: a TCP receiver does not overflow its socket
 * (status shows it as not modelled).
 */
static void publish_tcp(struct flow *fl, struct flow_model *m, const struct rxb_epoch *e)
{
	double bps = inputs_tcp_advise(&fl->inputs.tcp, m->xfer.payload_bytes);
	struct rxbneck_rate r = {
		.port = fl->port,
		.flags = degraded_flag(e),
		.confidence = fl->inputs.confidence,
		.rate_bps = to_u64(fmin(bps, m->xfer.line_rate_bps)),
		.loss = 0,
		.epoch = e ? e->seq : 0,
		.xfer_time_us = 0,
	};

	if (!(bps < m->xfer.line_rate_bps))
		r.flags |= RXBNECK_RATE_UNCONSTRAINED;
	if (fl->inputs.no_traffic)
		r.flags |= RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL;
	m->state = FLOW_MODEL;
	publish(m, &r, NULL);
}

/* ---------------------------------------------------------------- solve -- */

/* At least 1: confidence 0 is kept for a value nothing was modelled with
 * (PROTOCOL.md §6.1). */
static uint16_t solved_confidence(const struct flow *fl, const struct bneck_result *res)
{
	double c = fl->inputs.confidence;

	if (!(res->model_rel_err <= FLOWS_REL_ERR_OK) ||
	    !(res->loss_rel_err <= FLOWS_REL_ERR_OK))
		c *= 0.5;
	return c >= 1.5 ? (uint16_t)lround(fmin(c, 1000)) : 1;
}

/* What a solver error (0 or -errno, see solver/) means here. */
static const char *solve_strerror(int err)
{
	switch (-err) {
	case EINVAL:
		return "invalid model inputs";
	case E2BIG:
		return "the workload is too large for the model (too many tasks)";
	case EDOM:
		return "no finite transfer time at any rate";
	case ERANGE:
		return "a queue could not be evaluated";
	case ETIMEDOUT:
		return "the iterative solver did not converge";
	case ENOMEM:
		return "out of memory";
	}
	return strerror(-err);
}

static void solve_failed(struct flow_model *m, uint64_t epoch, int err, const char *why)
{
	m->solve_err = err;
	m->solve_err_epoch = epoch;
	m->solve_failures++;
	rxb_strlcpy(m->solve_why, why, sizeof(m->solve_why));
}

/* Does a stage's server take (predicted) vacations? */
static bool has_vacations(const struct inputs *in)
{
	for (uint32_t i = 0; i < in->nstages; i++)
		if (in->stages[i].vacation_s > 0 && in->stages[i].vacation_period_s > 0)
			return true;
	return false;
}

/* Whether the solve takes the windows by rate (struct inputs.band_b). */
static bool bands_used(const struct flows *f, const struct flow *fl)
{
	return f->p.windows_by_rate && fl->inputs.nbands >= 2 &&
	       (f->p.loss_model == BNECK_LOSS_WINDOWS || f->p.loss_model == BNECK_LOSS_SERVICE);
}

/*
 * bneck_compute() with fl->inputs, over the bands' pieces where they are
 * used (*@chosen: the piece of the rate; 0 otherwise).
 */
static int solve(struct flows *f, const struct flow *fl, const struct bneck_xfer *x,
		 struct bneck_result *out, uint32_t *chosen)
{
	uint32_t ns = fl->inputs.nstages, n = fl->inputs.nbands;
	struct bneck_piece p[LEARN_BANDS];

	_Static_assert(LEARN_BANDS <= BNECK_MAX_PIECES, "a band per piece");
	*chosen = 0;
	if (!bands_used(f, fl))
		return bneck_compute(&f->ws, fl->inputs.stages, ns, x, &f->copts, out);
	for (uint32_t j = 0; j < n; j++) {
		memcpy(f->piece_st[j], fl->inputs.stages, ns * sizeof(f->piece_st[j][0]));
		f->piece_st[j][ns - 1] = fl->inputs.band_b[j];
		p[j].at_bps = fl->inputs.band_at_pps[j] * x->payload_bytes * 8;
		p[j].stages = f->piece_st[j];
	}
	return bneck_compute_pieces(&f->ws, p, n, ns, x, &f->copts, out, chosen);
}

/*
 * The rate for a sender that obeys PAUSE (docs/pause.md, PROTOCOL.md §6.3): it
 * is silent in the part of each window the queue cannot absorb, so the
 * receiver drains at its whole-CPU speed whenever it gets data. Solved
 * before the plain rate so that the workspace's curve is the plain one.
 */
static bool solve_between(struct flows *f, const struct flow *fl, struct bneck_xfer x,
			  struct bneck_result *out)
{
	uint32_t chosen;
	int err;

	if (!has_vacations(&fl->inputs))
		return false;
	x.obey_pauses = true;
	err = solve(f, fl, &x, out, &chosen);
	if (err || !(isfinite(out->rate_bps) && out->rate_bps > 0 &&
		     out->loss >= 0 && out->loss <= 1 && isfinite(out->time_s))) {
		rxb_debug("flow %u: no rate between pauses: %s", fl->port,
			  solve_strerror(err ? err : -EDOM));
		return false;
	}
	out->curve = NULL;	/* overwritten by the plain solve */
	return true;
}

/* The episode size the solve uses ([model] loss_episodes): 0 = none. */
static double episode_pkts(const struct flows *f, const struct flow *fl)
{
	const struct value *m = &fl->inputs.b.loss_episode_pkts;

	if (!f->p.loss_episodes || f->p.rounds != BNECK_ROUNDS_BURST ||
	    m->src == VALUE_MISSING || !(m->v >= 1) || !isfinite(m->v))
		return 0;
	return m->v;
}

/* Whether the solve takes each rate's episode from the windows. */
static bool episodes_from_windows(const struct flows *f)
{
	return f->p.episodes_from_windows && f->p.rounds == BNECK_ROUNDS_BURST &&
	       (f->p.loss_model == BNECK_LOSS_WINDOWS || f->p.loss_model == BNECK_LOSS_SERVICE);
}

/* Solve with fl->inputs; keep the result as m's good estimate on success. */
static int model_solve(struct flows *f, const struct flow *fl, struct flow_model *m,
		       const struct rxb_epoch *e)
{
	struct bneck_xfer x = {
		.payload_bytes = m->xfer.payload_bytes,
		.file_bytes = m->xfer.file_bytes,
		.one_way_delay_s = m->xfer.one_way_delay_s,
		.line_rate_bps = m->xfer.line_rate_bps,
		.min_rate_bps = m->xfer.min_rate_bps,
		.points = f->p.sweep_points,
		.rounds = f->p.rounds,
		.loss_episode_pkts = episode_pkts(f, fl),
		.episodes_from_windows = episodes_from_windows(f),
		.loss_model = f->p.loss_model,
	};
	struct flow_estimate est;
	uint64_t t0 = rxb_mono_ns();
	char why[160];
	int err;

	memset(&est, 0, sizeof(est));
	m->solves++;
	est.has_between = solve_between(f, fl, x, &est.between);
	err = solve(f, fl, &x, &est.res, &est.band_chosen);
	if (!err && !(isfinite(est.res.rate_bps) && est.res.rate_bps > 0 &&
		      est.res.loss >= 0 && est.res.loss <= 1 &&
		      isfinite(est.res.time_s)))
		err = -EDOM;
	if (err) {
		snprintf(why, sizeof(why), "bottleneck solve failed: %s (%s)",
			 solve_strerror(err), strerror(-err));
		solve_failed(m, e ? e->seq : 0, err, why);
		rxb_warn("flow %u (%s): %s; keeping the last good estimate", fl->port,
			 m->xfer.from_sender ? m->xfer.sender : "defaults", why);
		return err;
	}
	est.epoch = e ? e->seq : 0;
	est.epoch_end_ns = e ? e->end_ns : 0;
	est.points = f->p.sweep_points;
	est.rounds = f->p.rounds;
	est.loss_model = f->p.loss_model;
	est.loss_episode_pkts = x.loss_episode_pkts;
	est.episodes_from_windows = x.episodes_from_windows;
	est.at_ns = rxb_mono_ns();
	est.xfer = m->xfer;
	est.nstages = fl->inputs.nstages;
	memcpy(est.inputs, fl->inputs.stages, sizeof(est.inputs));
	if (bands_used(f, fl)) {
		est.nbands = fl->inputs.nbands;
		for (uint32_t j = 0; j < est.nbands; j++) {
			est.band_at_bps[j] = fl->inputs.band_at_pps[j] * x.payload_bytes * 8;
			est.band_b[j] = fl->inputs.band_b[j];
		}
	}
	est.res.curve = NULL;	/* lives in the shared workspace */
	est.n_resend = est.res.breakdown.n_resend;
	est.confidence = solved_confidence(fl, &est.res);
	est.unconstrained = est.res.rate_bps >= x.line_rate_bps * (1 - 1e-9);
	est.solve_ms = (double)(rxb_mono_ns() - t0) / 1e6;
	m->good = est;
	m->have_good = true;
	m->solve_err = 0;
	m->solve_why[0] = '\0';
	if (f->ops.solved)
		f->ops.solved(f->ops.ctx, fl->port, est.solve_ms / 1e3);
	return 0;
}

/*
 * When to solve again. With a deep socket buffer one solve costs 10-25 ms
 * of CPU (the burst rounds are O(K) per rate and K runs to thousands),
 * while most epochs' inputs differ from those of the last solve by less
 * than their own noise. Compared with the inputs of the last good solve
 * (so that a slow drift adds up):
 *  - nothing good yet, another transfer, another queue (K, N, rule), #C or
 *    #I moved by SOLVE_URGENT_TASKS, vacations, a saturated drain, a deep
 *    queue's rate or a quota came or went: solve now;
 *  - the windows a rate between pauses was solved with no longer covered
 *    by this epoch's: solve once the solver is back within
 *    SOLVE_BETWEEN_CPU_SHARE of one CPU;
 *  - a rate (the drain's too) moved by SOLVE_MOVED_REL, #C or #I by
 *    SOLVE_MOVED_TASKS, the vacations, windows, spread or quota phases by
 *    SOLVE_MOVED_REL: solve once the solver is back within
 *    SOLVE_CPU_SHARE of one CPU (the last solve's time / share since it);
 *  - the windows by rate (struct flow_estimate.nbands) came, went or
 *    changed in number: solve now; a band's rate moved by
 *    SOLVE_MOVED_REL: as a moved rate (a band's own windows move the
 *    windows of all rates with them: as moved windows);
 *  - otherwise solve every SOLVE_REFRESH_NS.
 * Time is the epochs' clock, so a replayed or simulated run decides alike.
 */
#define SOLVE_URGENT_TASKS	0.5
#define SOLVE_MOVED_TASKS	0.1
#define SOLVE_MOVED_REL		0.03
#define SOLVE_CPU_SHARE		0.05
#define SOLVE_BETWEEN_CPU_SHARE	0.25
#define SOLVE_REFRESH_NS	(10 * RXB_NSEC_PER_SEC)

enum solve_need { SOLVE_NOT, SOLVE_MOVED, SOLVE_NOW };

static bool moved_rel(double a, double b)
{
	if (a == b || (isnan(a) && isnan(b)))
		return false;
	if (!isfinite(a) || !isfinite(b) || !(fabs(b) > 0))
		return true;
	return fabs(a / b - 1) > SOLVE_MOVED_REL;
}

/*
 * The off-CPU windows (the windows loss model's input) came, went, or moved:
 * their rate, their mean length, the mean run between them, the longest
 * wait after a wake-up (it cuts the waits' top slot, where their loss
 * comes from) or what the reader frees memory after, by SOLVE_MOVED_REL.
 */
static enum solve_need windows_moved(const struct rxb_stage_inputs *now,
				     const struct rxb_stage_inputs *then)
{
	if ((now->offcpu_per_s > 0) != (then->offcpu_per_s > 0) ||
	    (now->wake_per_s > 0) != (then->wake_per_s > 0))
		return SOLVE_NOW;
	if (moved_rel(now->offcpu_per_s, then->offcpu_per_s) ||
	    moved_rel(now->offcpu_gap_s, then->offcpu_gap_s) ||
	    moved_rel(offwin_mean_s(now->offcpu_hist, RXB_OFFCPU_SLOTS),
		      offwin_mean_s(then->offcpu_hist, RXB_OFFCPU_SLOTS)) ||
	    moved_rel(now->wake_per_s, then->wake_per_s) ||
	    moved_rel(offwin_mean_s(now->wake_hist, RXB_OFFCPU_SLOTS),
		      offwin_mean_s(then->wake_hist, RXB_OFFCPU_SLOTS)) ||
	    moved_rel(now->wake_max_s, then->wake_max_s) ||
	    moved_rel(now->windows_seen_pps, then->windows_seen_pps) ||
	    moved_rel(now->queue_release_pkts, then->queue_release_pkts))
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

/*
 * The service beyond the server's own rate came, went or moved: the rate
 * it serves a deep queue at, the saturated drain and the arrivals it was
 * measured under (the drain floor, docs/model.md §2.3), the spread of the
 * rate, a co-runner's quota phases.
 */
static enum solve_need service_moved(const struct rxb_stage_inputs *now,
				     const struct rxb_stage_inputs *then)
{
	if ((now->mu_net_full_per_s > 0) != (then->mu_net_full_per_s > 0) ||
	    (now->sat_drain_pkts_per_s > 0) != (then->sat_drain_pkts_per_s > 0) ||
	    (now->quota_period_s > 0) != (then->quota_period_s > 0))
		return SOLVE_NOW;
	if (moved_rel(now->mu_net_full_per_s, then->mu_net_full_per_s) ||
	    moved_rel(now->sat_drain_pkts_per_s, then->sat_drain_pkts_per_s) ||
	    moved_rel(now->sat_drain_arrivals_pps, then->sat_drain_arrivals_pps) ||
	    moved_rel(now->mu_rel_sd, then->mu_rel_sd) ||
	    moved_rel(now->quota_period_s, then->quota_period_s) ||
	    moved_rel(now->quota_slow_s, then->quota_slow_s) ||
	    moved_rel(now->quota_slow_share, then->quota_slow_share) ||
	    moved_rel(now->quota_fast_share, then->quota_fast_share))
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

static enum solve_need stage_moved(const struct rxb_stage_inputs *now,
				   const struct rxb_stage_inputs *then, bool windows)
{
	enum solve_need w = windows ? windows_moved(now, then) : SOLVE_NOT;
	enum solve_need v = service_moved(now, then);
	double dc = fabs(now->cpu_bound - then->cpu_bound);
	double di = fabs(now->io_bound - then->io_bound);

	if (now->queue_pkts != then->queue_pkts || now->batch_pkts != then->batch_pkts ||
	    now->rule != then->rule || now->load_independent != then->load_independent ||
	    (now->vacation_s > 0) != (then->vacation_s > 0) ||
	    !(dc < SOLVE_URGENT_TASKS) || !(di < SOLVE_URGENT_TASKS) || w == SOLVE_NOW ||
	    v == SOLVE_NOW)
		return SOLVE_NOW;
	if (dc > SOLVE_MOVED_TASKS || di > SOLVE_MOVED_TASKS ||
	    moved_rel(now->mu_net_per_s, then->mu_net_per_s) ||
	    moved_rel(now->mu_pio_per_s, then->mu_pio_per_s) ||
	    moved_rel(now->mu_disk_per_s, then->mu_disk_per_s) ||
	    moved_rel(now->irq_ns_per_pkt, then->irq_ns_per_pkt) ||
	    moved_rel(now->vacation_s, then->vacation_s) ||
	    moved_rel(now->vacation_period_s, then->vacation_period_s) ||
	    w == SOLVE_MOVED || v == SOLVE_MOVED)
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

/*
 * A pause schedule of windows @sched_dur_s every @sched_period_s pauses
 * every window of @dur_s every @period_s (a solve's stage B vacations): as
 * long, in the same period, within the re-solve tolerance.
 */
static bool windows_cover(double sched_dur_s, double sched_period_s, double dur_s,
			  double period_s)
{
	return sched_dur_s >= dur_s * (1 - SOLVE_MOVED_REL) &&
	       fabs(sched_period_s - period_s) <= period_s * SOLVE_MOVED_REL;
}

/*
 * The rate between pauses counts on the windows it was solved with, and the
 * schedule planned after the solves pauses this epoch's (flow_vacations(),
 * pause_plan()). Windows that shrank or moved out of those of the last solve
 * would leave its senders on the plain rate until a deferred solve came:
 * they are solved sooner (SOLVE_BETWEEN_CPU_SHARE; not at once, so that
 * windows jittering by a few per cent from epoch to epoch cannot take a
 * quarter of a CPU). Windows the [pause] caps cut short are not, as no
 * solve makes a capped schedule cover them.
 */
static bool between_uncovered(const struct flow *fl, const struct flow_estimate *g)
{
	const struct rxb_stage_inputs *now, *then;

	if (!g->has_between || !fl->pause.p.enabled || !g->nstages)
		return false;
	now = &fl->inputs.stages[g->nstages - 1];
	then = &g->inputs[g->nstages - 1];
	if (!(now->vacation_s > 0) || !(then->vacation_s > 0))
		return false;	/* came or went: stage_moved() solves now */
	return !windows_cover(now->vacation_s, now->vacation_period_s, then->vacation_s,
			      then->vacation_period_s);
}

/*
 * The solver has been idle long enough since the last good solve to be
 * back within @cpu_share of one CPU: that solve's time / the share.
 */
static bool solver_within_share(const struct flow_estimate *g, uint64_t since_ns,
				double cpu_share)
{
	return since_ns >= g->solve_ms * 1e6 / cpu_share;
}

/* The bands of a solve against the flow's now (see flows_model_due()). */
static enum solve_need bands_moved(const struct flows *f, const struct flow *fl,
				   const struct flow_estimate *g)
{
	uint32_t n = bands_used(f, fl) ? fl->inputs.nbands : 0;
	double bytes = g->xfer.payload_bytes * 8;

	if (n != g->nbands)
		return SOLVE_NOW;
	for (uint32_t j = 0; j < n; j++)
		if (moved_rel(fl->inputs.band_at_pps[j] * bytes, g->band_at_bps[j]))
			return SOLVE_MOVED;
	return SOLVE_NOT;
}

/* The same transfer as far as the solver is concerned. */
static bool xfer_same(const struct flow_xfer *a, const struct flow_xfer *b)
{
	return a->payload_bytes == b->payload_bytes && a->file_bytes == b->file_bytes &&
	       a->one_way_delay_s == b->one_way_delay_s &&
	       a->line_rate_bps == b->line_rate_bps && a->min_rate_bps == b->min_rate_bps;
}

bool flows_model_due(const struct flows *f, const struct flow *fl,
		     const struct flow_model *m, const struct rxb_epoch *e)
{
	const struct flow_estimate *g = &m->good;
	enum solve_need need = SOLVE_NOT;
	uint64_t since;

	if (!m->have_good || m->solve_err || !e || e->end_ns < g->epoch_end_ns ||
	    g->nstages != fl->inputs.nstages || g->points != f->p.sweep_points ||
	    g->rounds != f->p.rounds || g->loss_model != f->p.loss_model ||
	    !xfer_same(&g->xfer, &m->xfer) ||
	    g->loss_episode_pkts != episode_pkts(f, fl) ||
	    g->episodes_from_windows != episodes_from_windows(f))
		return true;
	for (uint32_t i = 0; i < g->nstages && need != SOLVE_NOW; i++) {
		enum solve_need s = stage_moved(&fl->inputs.stages[i], &g->inputs[i],
						f->p.loss_model == BNECK_LOSS_WINDOWS ||
						f->p.loss_model == BNECK_LOSS_SERVICE);

		if (s > need)
			need = s;
	}
	if (need != SOLVE_NOW) {
		enum solve_need s = bands_moved(f, fl, g);

		if (s > need)
			need = s;
	}
	since = e->end_ns - g->epoch_end_ns;
	if (need != SOLVE_NOW && between_uncovered(fl, g) &&
	    solver_within_share(g, since, SOLVE_BETWEEN_CPU_SHARE))
		return true;
	switch (need) {
	case SOLVE_NOW:
		return true;
	case SOLVE_MOVED:
		return solver_within_share(g, since, SOLVE_CPU_SHARE);
	default:
		return since >= SOLVE_REFRESH_NS;
	}
}

/* ----------------------------------------------------------------- run -- */

void flows_model_run(struct flows *f, struct flow *fl, struct flow_model *m,
		     const struct rxb_epoch *e, bool may_solve)
{
	if (!fl->inputs.nstages && fl->inputs.tcp.present) {
		publish_tcp(fl, m, e);
		return;
	}
	if (!fl->inputs.nstages) {
		if (m->have_good) {
			/* Inputs went missing after a good solve: say so. */
			solve_failed(m, e ? e->seq : 0, -ENODATA, fl->inputs.why);
			publish_estimate(fl, m, e, true);
		} else {
			publish_provisional(fl, m, e);
		}
		return;
	}
	if (!flows_model_due(f, fl, m, e)) {
		/* Still the answer for this epoch's inputs: it is this epoch's
		 * value (RATE.epoch; the refresh rule counts epochs by it). */
		m->solves_reused++;
		m->good.epoch = e->seq;
		publish_estimate(fl, m, e, false);
		return;
	}
	if (!may_solve || !f->solves_left) {
		/* Over this epoch's solves: the last one stands, its own epoch. */
		m->solves_deferred++;
		if (m->have_good)
			publish_estimate(fl, m, e, m->solve_err != 0);
		return;
	}
	f->solves_left--;
	if (model_solve(f, fl, m, e) == 0)
		publish_estimate(fl, m, e, false);
	else if (m->have_good)
		publish_estimate(fl, m, e, true);
	else
		publish_provisional(fl, m, e);
}

/* --------------------------------------------------------------- rates -- */

/*
 * PROTOCOL.md §6.3: the rate between pauses counts on a pause in every
 * window of the vacations it was solved with (stage B's D every P); the
 * schedule out must pause them all - the same period and windows as long,
 * within the re-solve tolerance (the rate is solved again when they move
 * more). Not when [pause] max_window_ms cut the windows short, nor while
 * no schedule is out (none yet, withdrawn, or CANCEL).
 */
bool flows_between_covered(const struct flow *fl, const struct flow_model *m,
			   char *why, size_t wlen)
{
	const struct pause *ps = &fl->pause;
	const struct flow_estimate *g = &m->good;
	const struct rxb_stage_inputs *b;
	char tmp[8];

	if (!why) {
		why = tmp;
		wlen = sizeof(tmp);
	}
	if (!m->has_rate_between || !g->nstages) {
		snprintf(why, wlen, "plain: no pause windows in the model");
		return false;
	}
	b = &g->inputs[g->nstages - 1];
	if (!ps->sched_active) {
		snprintf(why, wlen, "plain: no PAUSE schedule out (%s)",
			 ps->why[0] ? ps->why : "none planned yet");
		return false;
	}
	if (!windows_cover(ps->sched_dur_ns / 1e9, ps->sched_period_ns / 1e9, b->vacation_s,
			   b->vacation_period_s)) {
		snprintf(why, wlen, "plain: the schedule out (%.0f us every %.0f us) does not "
			 "cover the windows the rate counts on (%.0f us every %.0f us)",
			 ps->sched_dur_ns / 1e3, ps->sched_period_ns / 1e3, b->vacation_s * 1e6,
			 b->vacation_period_s * 1e6);
		return false;
	}
	snprintf(why, wlen, "between pauses: the schedule of epoch %llu pauses %.0f us every "
		 "%.0f us", (unsigned long long)ps->last.epoch, ps->sched_dur_ns / 1e3,
		 ps->sched_period_ns / 1e3);
	return true;
}

int flows_rate_for(const struct flows *f, const struct sendsrv_peer *p,
		   struct rxbneck_rate *r, struct rxbneck_rate *between)
{
	const struct flow *fl = flows_find((struct flows *)f, p->hello.flow_port);
	const struct flow_model *m;
	bool exact;

	if (!fl)
		return 0;
	m = flows_model_of(f, fl, p, &exact);
	if (!m || !m->has_rate)
		return 0;
	*r = m->rate;
	if (!exact)
		r->xfer_time_us = 0;	/* not computed for its transfer */
	if (!flows_between_covered(fl, m, NULL, 0))
		return 1;
	*between = m->rate_between;
	if (!exact)
		between->xfer_time_us = 0;
	return 2;
}
