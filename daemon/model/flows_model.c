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

bool flows_bands_used(const struct flows *f, const struct flow *fl)
{
	return f->p.windows_by_rate && fl->inputs.nbands >= 2 &&
	       (f->p.loss_model == BNECK_LOSS_WINDOWS || f->p.loss_model == BNECK_LOSS_SERVICE);
}

/*
 * bneck_compute() with fl->inputs, over the bands' pieces where they are
 * used (*@chosen: the piece of the rate; 0 otherwise). A piece's stage B
 * is the flow's with the band's windows: what was set on the flow's since
 * the bands were made (the predicted vacations, a socket buffer just
 * changed) holds in every piece.
 */
static int solve(struct flows *f, const struct flow *fl, const struct bneck_xfer *x,
		 struct bneck_result *out, uint32_t *chosen)
{
	uint32_t ns = fl->inputs.nstages, n = fl->inputs.nbands;
	double at_bps[LEARN_BANDS];

	_Static_assert(LEARN_BANDS <= BNECK_MAX_PIECES, "a band per piece");
	*chosen = 0;
	if (!flows_bands_used(f, fl))
		return bneck_compute(&f->ws, fl->inputs.stages, ns, x, &f->copts, out);
	for (uint32_t j = 0; j < n; j++)
		at_bps[j] = fl->inputs.band_at_pps[j] * x->payload_bytes * 8;
	return bneck_compute_windows(&f->ws, fl->inputs.stages, ns, fl->inputs.band_b, at_bps, n,
				     x, &f->copts, out, chosen);
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

double flows_episode_pkts(const struct flows *f, const struct flow *fl)
{
	const struct value *m = &fl->inputs.b.loss_episode_pkts;

	if (!f->p.loss_episodes || f->p.rounds != BNECK_ROUNDS_BURST ||
	    m->src == VALUE_MISSING || !(m->v >= 1) || !isfinite(m->v))
		return 0;
	return m->v;
}

bool flows_episodes_from_windows(const struct flows *f)
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
		.loss_episode_pkts = flows_episode_pkts(f, fl),
		.episodes_from_windows = flows_episodes_from_windows(f),
		.loss_model = f->p.loss_model,
		.time_slack_rel = f->p.time_slack_rel,
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
	est.time_slack_rel = f->p.time_slack_rel;
	est.loss_episode_pkts = x.loss_episode_pkts;
	est.episodes_from_windows = x.episodes_from_windows;
	est.at_ns = rxb_mono_ns();
	est.xfer = m->xfer;
	est.nstages = fl->inputs.nstages;
	memcpy(est.inputs, fl->inputs.stages, sizeof(est.inputs));
	if (flows_bands_used(f, fl)) {
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
	if (!flows_due(f, fl, m, e)) {
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
