// SPDX-License-Identifier: GPL-2.0-or-later
/* The per-epoch pipeline: inputs -> solve -> publish, per flow. See flows.h. */
#include "daemon/model/flows.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"

/* A solve whose error bounds exceed this is trusted less. */
#define FLOWS_REL_ERR_OK	1e-6

static const char *const state_names[] = {
	[FLOW_NONE] = "none",
	[FLOW_PROVISIONAL] = "provisional",
	[FLOW_MODEL] = "model",
	[FLOW_STALE] = "stale",
};

const char *flows_state_name(enum flow_state s)
{
	if ((unsigned)s >= RXB_ARRAY_SIZE(state_names))
		return "?";
	return state_names[s];
}

static int check_params(const struct flows_params *p)
{
	if (!(p->payload_bytes >= 1) || !(p->file_bytes >= 1) ||
	    !(p->one_way_delay_s >= 0) || !isfinite(p->one_way_delay_s) ||
	    !(p->min_rate_bps > 0) || !(p->line_rate_bps >= p->min_rate_bps) ||
	    !isfinite(p->line_rate_bps) || p->sweep_points < 2 ||
	    (p->rounds != BNECK_ROUNDS_BURST && p->rounds != BNECK_ROUNDS_SEED))
		return -EINVAL;
	return 0;
}

int flows_init(struct flows *f, const struct flows_params *p,
	       const struct flows_ops *ops)
{
	int err;

	memset(f, 0, sizeof(*f));
	err = check_params(p);
	if (err)
		return err;
	err = bneck_ws_init(&f->ws, p->sweep_points);
	if (err)
		return err;
	f->p = *p;
	f->ops = *ops;
	ctmc_opts_default(&f->copts);
	learn_disk_init(&f->disk);
	return 0;
}

/* Keep what status shows of a flow that goes away (newest last, one per port). */
static void flow_remember(struct flows *f, const struct flow *fl)
{
	struct flow_past *p;
	int i;

	for (i = 0; i < f->npast && f->past[i].port != fl->port; i++)
		;
	if (i == f->npast && f->npast == FLOWS_PAST_MAX)
		i = 0;			/* the oldest goes */
	if (i < f->npast)
		memmove(&f->past[i], &f->past[i + 1], (size_t)(f->npast - i - 1) * sizeof(*p));
	else
		f->npast++;
	p = &f->past[f->npast - 1];
	memset(p, 0, sizeof(*p));
	p->port = fl->port;
	p->left_ns = rxb_mono_ns();
	p->has_rate = fl->has_rate;
	p->rate = fl->rate;
	p->reports = fl->reports;
	p->cpu_ns_per_pkt = ewma_ratio_value(&fl->learn.cpu_ns_per_pkt);
	p->pkts_per_wakeup = ewma_ratio_value(&fl->learn.pkts_per_wakeup);
	p->ncpus = fl->learn.ncpus;
	memcpy(p->cpu, fl->learn.cpu, sizeof(p->cpu));
	memcpy(p->cpu_share, fl->learn.cpu_share, sizeof(p->cpu_share));
}

/* A flow that comes back is not a past one. */
static void flow_unremember(struct flows *f, uint16_t port)
{
	for (int i = 0; i < f->npast; i++)
		if (f->past[i].port == port) {
			memmove(&f->past[i], &f->past[i + 1],
				(size_t)(f->npast - i - 1) * sizeof(f->past[0]));
			f->npast--;
			return;
		}
}

static void flow_forget(struct flows *f, int i)
{
	flow_remember(f, &f->v[i]);
	if (f->ops.history_put && f->v[i].learn.origin != VALUE_MISSING)
		f->ops.history_put(f->ops.ctx, f->v[i].port, &f->v[i].learn);
	pause_finish(&f->v[i].pause);
	memmove(&f->v[i], &f->v[i + 1], (size_t)(f->n - i - 1) * sizeof(f->v[0]));
	f->n--;
	f->ports_changed = true;
}

void flows_finish(struct flows *f)
{
	while (f->n)
		flow_forget(f, f->n - 1);
	bneck_ws_finish(&f->ws);
}

/* ------------------------------------------------------------ transfer -- */

static void xfer_defaults(const struct flows *f, struct flow_xfer *x)
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
static void xfer_range(const struct flows *f, struct flow_xfer *x)
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

	xfer_defaults(f, x);
	x->from_sender = true;
	x->sender_id = p->id;
	x->sender_max_rate_bps = h->max_rate_bps;
	rxb_strlcpy(x->sender, p->addr_str, sizeof(x->sender));
	if (h->payload_bytes)
		x->payload_bytes = h->payload_bytes;
	if (h->file_bytes)
		x->file_bytes = (double)h->file_bytes;
	if (h->rtt_us)
		x->one_way_delay_s = h->rtt_us / 2e6;
	xfer_range(f, x);
}

int flows_set_params(struct flows *f, const struct flows_params *p)
{
	int err = check_params(p);

	if (err)
		return err;
	if (p->sweep_points > f->ws.cap) {
		struct bneck_ws ws;

		err = bneck_ws_init(&ws, p->sweep_points);
		if (err)
			return err;
		bneck_ws_finish(&f->ws);
		f->ws = ws;
	}
	f->p = *p;
	for (int i = 0; i < f->n; i++) {
		struct flow_xfer *x = &f->v[i].xfer;

		pause_set_params(&f->v[i].pause, &p->pause);

		/* A sender's own values stay; the defaults and bounds change. */
		if (!x->from_sender)
			xfer_defaults(f, x);
		xfer_range(f, x);
	}
	return 0;
}

/* --------------------------------------------------------------- flows -- */

struct flow *flows_find(struct flows *f, uint16_t port)
{
	for (int i = 0; i < f->n; i++)
		if (f->v[i].port == port)
			return &f->v[i];
	return NULL;
}

static struct flow *flow_add(struct flows *f, uint16_t port)
{
	struct flow *fl;

	if (f->n == FLOWS_MAX)
		return NULL;
	fl = &f->v[f->n++];
	memset(fl, 0, sizeof(*fl));
	flow_unremember(f, port);
	fl->port = port;
	fl->created_ns = rxb_mono_ns();
	xfer_defaults(f, &fl->xfer);
	learn_init(&fl->learn);
	pause_init(&fl->pause, &f->p.pause);
	if (f->ops.history_get && f->ops.history_get(f->ops.ctx, port, &fl->learn)) {
		fl->learn.origin = VALUE_HISTORY;
		fl->learn.last_traffic_ns = 0;
		fl->learn.last_traffic_seq = 0;
		rxb_info("flow %u: receive-path costs from history (%llu s old)",
			 port, (unsigned long long)fl->learn.history_age_s);
	}
	f->ports_changed = true;
	return fl;
}

static bool port_in(uint16_t port, const uint16_t *ports, int n)
{
	for (int i = 0; i < n; i++)
		if (ports[i] == port)
			return true;
	return false;
}

int flows_set_config_ports(struct flows *f, const uint16_t *ports, int n)
{
	int need = n;

	if (n < 0 || n > FLOWS_MAX)
		return -ENOSPC;
	for (int i = 0; i < f->n; i++)
		if (f->v[i].nsenders && !port_in(f->v[i].port, ports, n))
			need++;
	if (need > FLOWS_MAX)
		return -ENOSPC;
	for (int i = f->n - 1; i >= 0; i--) {
		struct flow *fl = &f->v[i];

		fl->configured = port_in(fl->port, ports, n);
		if (!fl->configured && !fl->nsenders)
			flow_forget(f, i);
	}
	for (int i = 0; i < n; i++) {
		struct flow *fl = flows_find(f, ports[i]);

		if (!fl)
			fl = flow_add(f, ports[i]);
		if (fl)		/* cannot fail: counted above */
			fl->configured = true;
	}
	return 0;
}

int flows_ports(struct flows *f, uint16_t *ports)
{
	for (int i = 0; i < f->n; i++)
		ports[i] = f->v[i].port;
	f->ports_changed = false;
	return f->n;
}

/* ------------------------------------------------------------- publish -- */

static struct inputs_env env_of(const struct flows *f, const struct rxb_epoch *e)
{
	struct inputs_env env = {
		.rule = f->p.rule,
		.netdev_max_backlog = f->netdev_max_backlog,
		.fallback_rx_ring = f->p.fallback_rx_ring,
		.irq_in_task_time = f->p.irq_time_accounting == 0,
		.depth_cost = f->p.depth_cost,
		.rate_uncertainty = f->p.rate_uncertainty,
		.now_ns = e ? e->end_ns : rxb_mono_ns(),
	};

	return env;
}

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

static void publish(struct flows *f, struct flow *fl, const struct rxbneck_rate *r,
		    const struct rxbneck_rate *between)
{
	fl->rate = *r;
	fl->has_rate = true;
	fl->has_rate_between = between != NULL;
	if (between)
		fl->rate_between = *between;
	fl->last_sent = f->ops.publish_rate ?
			f->ops.publish_rate(f->ops.ctx, r, between) : 0;
	if (fl->last_sent < 0)
		rxb_warn("flow %u: RATE %llu b/s refused by the control server (%d)",
			 fl->port, (unsigned long long)r->rate_bps, fl->last_sent);
}

static void publish_estimate(struct flows *f, struct flow *fl,
			     const struct rxb_epoch *e, bool stale)
{
	const struct flow_estimate *g = &fl->good;
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
	if (g->unconstrained)
		r.flags |= RXBNECK_RATE_UNCONSTRAINED;
	if (fl->inputs.no_traffic)
		r.flags |= RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL;
	if (fl->inputs.no_traffic && fl->learn.prior == LEARN_PRIOR_DEFAULT)
		r.flags |= RXBNECK_RATE_DEFAULT_COST;
	if (!(r.loss >= 0) || r.loss > 1)
		r.loss = 1;	/* cannot happen for a successful solve */
	fl->state = stale ? FLOW_STALE : FLOW_MODEL;
	if (g->has_between) {
		struct rxbneck_rate b = r;

		b.flags |= RXBNECK_RATE_BETWEEN_PAUSES;
		b.rate_bps = to_u64(g->between.rate_bps);
		b.loss = g->between.loss >= 0 && g->between.loss <= 1 ? g->between.loss : 1;
		b.xfer_time_us = to_u64(g->between.time_s * 1e6);
		publish(f, fl, &r, &b);
		return;
	}
	publish(f, fl, &r, NULL);
}

/* Nothing to model: the top of the search, flagged as not computed. */
static void publish_provisional(struct flows *f, struct flow *fl,
				const struct rxb_epoch *e)
{
	struct rxbneck_rate r = {
		.port = fl->port,
		.flags = degraded_flag(e),
		.confidence = 0,
		.rate_bps = to_u64(fl->xfer.line_rate_bps),
		.loss = 0,
		.epoch = e ? e->seq : 0,
		.xfer_time_us = 0,
	};

	if (fl->learn.origin != VALUE_MEASURED)
		r.flags |= RXBNECK_RATE_NO_TRAFFIC;
	fl->state = FLOW_PROVISIONAL;
	publish(f, fl, &r, NULL);
}

/* ---------------------------------------------------------------- solve -- */

static uint16_t solved_confidence(const struct flow *fl, const struct bneck_result *res)
{
	double c = fl->inputs.confidence;

	if (!(res->model_rel_err <= FLOWS_REL_ERR_OK) ||
	    !(res->loss_rel_err <= FLOWS_REL_ERR_OK))
		c *= 0.5;
	return (uint16_t)lround(c);
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

static void solve_failed(struct flow *fl, uint64_t epoch, int err, const char *why)
{
	fl->solve_err = err;
	fl->solve_err_epoch = epoch;
	fl->solve_failures++;
	rxb_strlcpy(fl->solve_why, why, sizeof(fl->solve_why));
}

/* Does a stage's server take (predicted) vacations? */
static bool has_vacations(const struct inputs *in)
{
	for (uint32_t i = 0; i < in->nstages; i++)
		if (in->stages[i].vacation_s > 0 && in->stages[i].vacation_period_s > 0)
			return true;
	return false;
}

/*
 * The rate for a sender that obeys PAUSE (docs/pause.md, PROTOCOL.md §6.3): it
 * is silent in the part of each window the queue cannot absorb, so the
 * receiver drains at its whole-CPU speed whenever it gets data. Solved
 * before the plain rate so that the workspace's curve is the plain one.
 */
static bool solve_between(struct flows *f, struct flow *fl, struct bneck_xfer x,
			  struct bneck_result *out)
{
	int err;

	if (!has_vacations(&fl->inputs))
		return false;
	x.obey_pauses = true;
	err = bneck_compute(&f->ws, fl->inputs.stages, fl->inputs.nstages, &x,
			    &f->copts, out);
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

/* Solve with fl->inputs; keep the result as the good estimate on success. */
static int flow_solve(struct flows *f, struct flow *fl, const struct rxb_epoch *e)
{
	struct bneck_xfer x = {
		.payload_bytes = fl->xfer.payload_bytes,
		.file_bytes = fl->xfer.file_bytes,
		.one_way_delay_s = fl->xfer.one_way_delay_s,
		.line_rate_bps = fl->xfer.line_rate_bps,
		.min_rate_bps = fl->xfer.min_rate_bps,
		.points = f->p.sweep_points,
		.rounds = f->p.rounds,
		.loss_episode_pkts = episode_pkts(f, fl),
	};
	struct flow_estimate est;
	uint64_t t0 = rxb_mono_ns();
	char why[160];
	int err;

	memset(&est, 0, sizeof(est));
	fl->solves++;
	est.has_between = solve_between(f, fl, x, &est.between);
	err = bneck_compute(&f->ws, fl->inputs.stages, fl->inputs.nstages, &x,
			    &f->copts, &est.res);
	if (!err && !(isfinite(est.res.rate_bps) && est.res.rate_bps > 0 &&
		      est.res.loss >= 0 && est.res.loss <= 1 &&
		      isfinite(est.res.time_s)))
		err = -EDOM;
	if (err) {
		snprintf(why, sizeof(why), "bottleneck solve failed: %s (%s)",
			 solve_strerror(err), strerror(-err));
		solve_failed(fl, e ? e->seq : 0, err, why);
		rxb_warn("flow %u: %s; keeping the last good estimate", fl->port, why);
		return err;
	}
	est.epoch = e ? e->seq : 0;
	est.epoch_end_ns = e ? e->end_ns : 0;
	est.points = f->p.sweep_points;
	est.rounds = f->p.rounds;
	est.loss_episode_pkts = x.loss_episode_pkts;
	est.at_ns = rxb_mono_ns();
	est.xfer = fl->xfer;
	est.nstages = fl->inputs.nstages;
	memcpy(est.inputs, fl->inputs.stages, sizeof(est.inputs));
	est.res.curve = NULL;	/* lives in the shared workspace */
	est.n_resend = est.res.breakdown.n_resend;
	est.confidence = solved_confidence(fl, &est.res);
	est.unconstrained = est.res.rate_bps >= x.line_rate_bps * (1 - 1e-9);
	est.solve_ms = (double)(rxb_mono_ns() - t0) / 1e6;
	fl->good = est;
	fl->have_good = true;
	fl->solve_err = 0;
	fl->solve_why[0] = '\0';
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
 *    #I moved by SOLVE_URGENT_TASKS, vacations came or went: solve now;
 *  - a rate moved by SOLVE_MOVED_REL, #C or #I by SOLVE_MOVED_TASKS, the
 *    vacations by SOLVE_MOVED_REL: solve once the solver is back within
 *    SOLVE_CPU_SHARE of one CPU (the last solve's time / share since it);
 *  - otherwise solve every SOLVE_REFRESH_NS.
 * Time is the epochs' clock, so a replayed or simulated run decides alike.
 */
#define SOLVE_URGENT_TASKS	0.5
#define SOLVE_MOVED_TASKS	0.1
#define SOLVE_MOVED_REL		0.03
#define SOLVE_CPU_SHARE		0.05
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

static enum solve_need stage_moved(const struct rxb_stage_inputs *now,
				   const struct rxb_stage_inputs *then)
{
	double dc = fabs(now->cpu_bound - then->cpu_bound);
	double di = fabs(now->io_bound - then->io_bound);

	if (now->queue_pkts != then->queue_pkts || now->batch_pkts != then->batch_pkts ||
	    now->rule != then->rule || now->load_independent != then->load_independent ||
	    (now->vacation_s > 0) != (then->vacation_s > 0) ||
	    !(dc < SOLVE_URGENT_TASKS) || !(di < SOLVE_URGENT_TASKS))
		return SOLVE_NOW;
	if (dc > SOLVE_MOVED_TASKS || di > SOLVE_MOVED_TASKS ||
	    moved_rel(now->mu_net_per_s, then->mu_net_per_s) ||
	    moved_rel(now->mu_pio_per_s, then->mu_pio_per_s) ||
	    moved_rel(now->mu_disk_per_s, then->mu_disk_per_s) ||
	    moved_rel(now->irq_ns_per_pkt, then->irq_ns_per_pkt) ||
	    moved_rel(now->vacation_s, then->vacation_s) ||
	    moved_rel(now->vacation_period_s, then->vacation_period_s))
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

static bool solve_due(const struct flows *f, const struct flow *fl,
		      const struct rxb_epoch *e)
{
	const struct flow_estimate *g = &fl->good;
	enum solve_need need = SOLVE_NOT;
	uint64_t since;

	if (!fl->have_good || fl->solve_err || !e || e->end_ns < g->epoch_end_ns ||
	    g->nstages != fl->inputs.nstages || g->points != f->p.sweep_points ||
	    g->rounds != f->p.rounds || !xfer_same(&g->xfer, &fl->xfer) ||
	    g->loss_episode_pkts != episode_pkts(f, fl))
		return true;
	for (uint32_t i = 0; i < g->nstages && need != SOLVE_NOW; i++) {
		enum solve_need s = stage_moved(&fl->inputs.stages[i], &g->inputs[i]);

		if (s > need)
			need = s;
	}
	since = e->end_ns - g->epoch_end_ns;
	switch (need) {
	case SOLVE_NOW:
		return true;
	case SOLVE_MOVED:
		return since >= g->solve_ms * 1e6 / SOLVE_CPU_SHARE;
	default:
		return since >= SOLVE_REFRESH_NS;
	}
}

/* Solve and publish what the flow's inputs allow. */
static void flow_run(struct flows *f, struct flow *fl, const struct rxb_epoch *e)
{
	if (!fl->inputs.nstages) {
		if (fl->have_good) {
			/* Inputs went missing after a good solve: say so. */
			solve_failed(fl, e ? e->seq : 0, -ENODATA, fl->inputs.why);
			publish_estimate(f, fl, e, true);
		} else {
			publish_provisional(f, fl, e);
		}
		return;
	}
	if (!solve_due(f, fl, e)) {
		/* Still the answer for this epoch's inputs: it is this epoch's
		 * value (RATE.epoch; the refresh rule counts epochs by it). */
		fl->solves_reused++;
		fl->good.epoch = e->seq;
		publish_estimate(f, fl, e, false);
	} else if (flow_solve(f, fl, e) == 0)
		publish_estimate(f, fl, e, false);
	else if (fl->have_good)
		publish_estimate(f, fl, e, true);
	else
		publish_provisional(f, fl, e);
}

/*
 * How long the flow's receive queue (K_B packets) takes to fill, in ns; 0
 * when that is unknown (then a window is paused whole, as in RBUDP+). It
 * fills at the rate data arrives: the rate offered to the senders that
 * pause, or what arrived at the socket this epoch (queued + dropped) if
 * that was more - a sender may send faster than it was told, and pausing
 * it too little loses data where pausing too long only idles the link.
 */
static uint64_t queue_absorb_ns(const struct flow *fl, double dt_s)
{
	const struct value *k = &fl->inputs.b.queue_pkts;
	const struct inputs_traffic *t = &fl->inputs.traffic;
	const struct rxbneck_rate *r = fl->has_rate_between ? &fl->rate_between : &fl->rate;
	double bits = fl->xfer.payload_bytes * 8, rate_bps = 0, ns;

	if (fl->has_rate)
		rate_bps = (double)r->rate_bps;
	if (t->counts_valid && dt_s > 0)
		rate_bps = fmax(rate_bps, (t->pkts_in + t->rcvbuf_drops) * bits / dt_s);
	if (!(rate_bps > 0) || k->src == VALUE_MISSING || !(k->v > 0) || !(bits > 0))
		return 0;
	ns = k->v * bits / rate_bps * 1e9;
	return ns < 60e9 ? (uint64_t)ns : (uint64_t)60e9;
}

/*
 * Pause windows (docs/pause.md): check the predictor against the preemptions
 * of the flow's receiver threads and feed it.
 */
static void flow_pause_learn(struct flow *fl, const struct rxb_epoch *e)
{
	const struct rxb_sock_meas *m = rxb_epoch_sock(e, fl->port);

	pause_epoch(&fl->pause, e, m ? m->tids : NULL,
		    m ? (m->ntids < RXB_MAX_TIDS ? m->ntids : RXB_MAX_TIDS) : 0);
}

/*
 * A receiver that stays runnable is off the CPU for the predicted window
 * D once every period P: the socket stage's server takes vacations, which
 * the solver turns into loss (bneck_vacation_loss()). Only when this
 * epoch had the windows (a receiver that sleeps between reads has none).
 */
static void flow_vacations(struct flow *fl)
{
	const struct pause *ps = &fl->pause;
	struct rxb_stage_inputs *b;

	/* D before the [pause] window caps, which are about what to publish. */
	if (!fl->inputs.nstages || !ps->pred.valid || !ps->pred.d_model_ns ||
	    !ps->pred.tio_ns || ps->ep_long < PAUSE_MIN_EVENTS)
		return;
	b = &fl->inputs.stages[fl->inputs.nstages - 1];	/* stage B: the socket */
	b->vacation_s = ps->pred.d_model_ns / 1e9;
	b->vacation_period_s = (ps->pred.tio_ns + ps->pred.d_model_ns) / 1e9;
}

/* Publish what the pause predictor plans. */
static void flow_pause(struct flows *f, struct flow *fl, const struct rxb_epoch *e,
		       double dt_s)
{
	double rtt_us = fl->xfer.one_way_delay_s * 2e6;
	struct rxbneck_pause p;
	int sent;

	if (!pause_plan(&fl->pause, fl->port, rxb_mono_ns(), (uint64_t)(dt_s * 1e9),
			rtt_us < RXBNECK_TIME_MAX_US ? (uint32_t)rtt_us : RXBNECK_TIME_MAX_US,
			e->seq, queue_absorb_ns(fl, dt_s), &p))
		return;
	sent = f->ops.publish_pause ? f->ops.publish_pause(f->ops.ctx, &p) : 0;
	if (sent < 0)
		rxb_warn("flow %u: PAUSE refused by the control server (%d)", fl->port, sent);
	pause_note_sent(&fl->pause, &p, sent);
}

uint64_t flows_rx_early_ns(const struct flows *f, uint64_t min_ns)
{
	uint64_t every = 0;

	for (int i = 0; i < f->n; i++) {
		const struct flow *fl = &f->v[i];
		const struct pause *ps = &fl->pause;
		uint64_t e = min_ns;

		if (!fl->nsenders || !ps->p.enabled)
			continue;
		/*
		 * No schedule out: the first one waits for these events. One
		 * out: they say when its phase went wrong, which shows at the
		 * receiver's returns, one per period. Reading more often
		 * mostly finds nothing and then wakes again at the next event:
		 * two wake-ups per turn, about 170 a second with two hogs in
		 * bench/rx_early.sh.
		 */
		if (ps->sched_active && ps->sched_period_ns + RXB_NSEC_PER_MSEC > e)
			e = ps->sched_period_ns + RXB_NSEC_PER_MSEC;
		if (!every || e < every)
			every = e;
	}
	return every;
}

void flows_rx_early(struct flows *f, const struct rxb_rx_preempt *ev, size_t n)
{
	const struct rxb_epoch *e = f->last;
	double dt_s;

	if (!e || !n || e->end_ns <= e->start_ns)
		return;
	dt_s = (double)(e->end_ns - e->start_ns) / 1e9;
	for (int i = 0; i < f->n; i++) {
		struct flow *fl = &f->v[i];

		if (fl->nsenders && pause_early(&fl->pause, ev, n, fl->port))
			flow_pause(f, fl, e, dt_s);
	}
}

/* One flow's epoch: fold the measurements in, solve, publish the rate,
 * then the pause windows. */
static void flow_epoch(struct flows *f, struct flow *fl, const struct rxb_epoch *e,
		       double dt_s)
{
	struct inputs_env env = env_of(f, e);

	inputs_update(&fl->learn, &f->disk, fl->port, e, dt_s, &env, &fl->inputs);
	if (fl->inputs.traffic.counts_valid) {
		fl->counted = fl->inputs.traffic;
		fl->counted_seq = e->seq;
		fl->counted_end_ns = e->end_ns;
	}
	flow_pause_learn(fl, e);
	flow_vacations(fl);
	flow_run(f, fl, e);
	flow_pause(f, fl, e, dt_s);
}

void flows_epoch(struct flows *f, const struct rxb_epoch *e,
		 uint32_t netdev_max_backlog)
{
	double dt_s = e->end_ns > e->start_ns ? (double)(e->end_ns - e->start_ns) / 1e9 : 0;
	uint64_t t0 = rxb_mono_ns();

	f->last = e;
	f->netdev_max_backlog = netdev_max_backlog;
	f->epochs++;
	learn_disk_update(&f->disk, e, dt_s);
	for (int i = 0; i < f->n; i++)
		flow_epoch(f, &f->v[i], e, dt_s);
	f->last_solve_ms = (double)(rxb_mono_ns() - t0) / 1e6;
}

/* ------------------------------------------------------------- senders -- */

int flows_sender_hello(struct flows *f, const struct sendsrv_peer *p)
{
	uint16_t port = p->hello.flow_port;
	struct flow *fl = flows_find(f, port);
	struct inputs_env env;

	if (!fl) {
		fl = flow_add(f, port);
		if (!fl)
			return -ENOSPC;
	}
	fl->nsenders++;
	xfer_from_peer(f, p, &fl->xfer);
	if (fl->learn.origin != VALUE_MEASURED && f->ops.prior)
		f->ops.prior(f->ops.ctx, port, fl->xfer.payload_bytes, &fl->learn);
	/* A rate for this sender right away, from the latest epoch. */
	env = env_of(f, f->last);
	inputs_compute(&fl->learn, &f->disk, port, f->last, &env, &fl->inputs);
	flow_run(f, fl, f->last);
	return 0;
}

void flows_sender_seen(struct flows *f, const struct sendsrv_peer *p)
{
	struct flow *fl = flows_find(f, p->hello.flow_port);

	/* The newest connected sender of the port sets its transfer. */
	if (fl && p->id >= fl->xfer.sender_id)
		xfer_from_peer(f, p, &fl->xfer);
}

void flows_sender_gone(struct flows *f, const struct sendsrv_peer *p)
{
	for (int i = 0; i < f->n; i++) {
		struct flow *fl = &f->v[i];

		if (fl->port != p->hello.flow_port)
			continue;
		if (fl->xfer.sender_id == p->id)
			fl->xfer.sender_id = 0;	/* values stay until another says */
		if (fl->nsenders)
			fl->nsenders--;
		if (!fl->nsenders && !fl->configured)
			flow_forget(f, i);
		return;
	}
}

void flows_note_report(struct flows *f, struct flow *fl, const struct rxbneck_report *r)
{
	(void)f;
	fl->reports++;
	fl->has_report = true;
	fl->last_report = *r;
	fl->report_model_rate_bps = fl->have_good ? fl->good.res.rate_bps : NAN;
	fl->report_model_time_s = fl->have_good ? fl->good.res.time_s : NAN;
}

int flows_set_rcvbuf(struct flows *f, uint16_t port, uint32_t rcvbuf_bytes, bool solve_now)
{
	struct flow *fl = flows_find(f, port);
	struct rxb_stage_inputs *b;
	double ts, k;

	if (!fl)
		return -ENOENT;
	fl->learn.rcvbuf_bytes = rcvbuf_bytes;
	fl->learn.rcvbuf_udp = true;
	ts = ewma_ratio_value(&fl->learn.truesize_per_pkt);
	if (!solve_now || !fl->inputs.nstages || !f->last || !(ts > 0))
		return 0;
	/* The socket stage as compute_b() will see it at the next epoch. */
	b = &fl->inputs.stages[fl->inputs.nstages - 1];
	k = floor(rcvbuf_bytes / ts);
	b->queue_pkts = k < 1 ? 1 : k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
	if (b->batch_pkts > b->queue_pkts)
		b->batch_pkts = b->queue_pkts;
	fl->inputs.b.queue_pkts.v = b->queue_pkts;
	flow_run(f, fl, f->last);
	return 1;
}
