// SPDX-License-Identifier: GPL-2.0-or-later
/* The per-epoch pipeline: inputs -> solve -> publish, per flow. See flows.h. */
#include "daemon/model/flows.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/model/flows_int.h"

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
	    !(p->time_slack_rel >= 0 && p->time_slack_rel <= 1) ||
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
	f->solves_left = FLOWS_SOLVES_PER_EPOCH;
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
	p->has_rate = fl->m[0].has_rate;
	p->rate = fl->m[0].rate;
	p->reports = fl->reports;
	p->outcome = fl->outcome;
	p->cpu_ns_per_pkt = ewma_ratio_value(&fl->learn.cpu_ns_per_pkt);
	p->pkts_per_wakeup = ewma_ratio_value(&fl->learn.pkts_per_wakeup);
	p->ncpus = fl->learn.ncpus;
	memcpy(p->cpu, fl->learn.cpu, sizeof(p->cpu));
	memcpy(p->cpu_share, fl->learn.cpu_share, sizeof(p->cpu_share));
}

/* A flow that comes back is not a past one; its record of outcomes to @o. */
static void flow_unremember(struct flows *f, uint16_t port, struct outcome *o)
{
	for (int i = 0; i < f->npast; i++)
		if (f->past[i].port == port) {
			*o = f->past[i].outcome;
			memmove(&f->past[i], &f->past[i + 1],
				(size_t)(f->npast - i - 1) * sizeof(f->past[0]));
			f->npast--;
			return;
		}
}

static void flow_forget(struct flows *f, int i)
{
	rxb_debug("flow %u: forgotten", f->v[i].port);
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

/* -------------------------------------------------------------- params -- */

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
		struct flow *fl = &f->v[i];

		pause_set_params(&fl->pause, &p->pause);
		for (int j = 0; j < fl->nmodels; j++) {
			struct flow_model *m = &fl->m[j];

			/* A sender's own values stay; the defaults and bounds change. */
			if (!m->xfer.from_sender)
				flows_xfer_defaults(f, &m->xfer);
			flows_xfer_range(f, &m->xfer);
		}
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

/* A flow that stays only because its last sender left lately. */
static bool lingering(const struct flow *fl)
{
	return !fl->configured && !fl->nsenders;
}

/* The lingering flow whose sender left first: -1 when none lingers. */
static int oldest_lingering(const struct flows *f)
{
	int best = -1;

	for (int i = 0; i < f->n; i++)
		if (lingering(&f->v[i]) &&
		    (best < 0 || f->v[i].idle_since_ns < f->v[best].idle_since_ns))
			best = i;
	return best;
}

/* A new flow; when the table is full a lingering one makes way. */
static struct flow *flow_add(struct flows *f, uint16_t port)
{
	struct flow *fl;

	if (f->n == FLOWS_MAX) {
		int i = oldest_lingering(f);

		if (i < 0)
			return NULL;
		rxb_info("flow %u: forgotten early (its senders left) to make way for port %u",
			 f->v[i].port, port);
		flow_forget(f, i);
		f->evicted++;
	}
	fl = &f->v[f->n++];
	memset(fl, 0, sizeof(*fl));
	flow_unremember(f, port, &fl->outcome);
	fl->port = port;
	fl->created_ns = rxb_mono_ns();
	fl->nmodels = 1;
	flows_model_defaults(f, &fl->m[0]);
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
		bool was = fl->configured;

		fl->configured = port_in(fl->port, ports, n);
		/* No longer watched and nobody sends: gone (a lingering one
		 * stays, and makes way in flow_add() if room is needed). */
		if (!fl->configured && !fl->nsenders && was)
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

static struct inputs_env env_of(const struct flows *f, const struct rxb_epoch *e)
{
	struct inputs_env env = {
		.rule = f->p.rule,
		.netdev_max_backlog = f->netdev_max_backlog,
		.fallback_rx_ring = f->p.fallback_rx_ring,
		.irq_in_task_time = f->p.irq_time_accounting == 0,
		.depth_cost = f->p.depth_cost,
		.quota_phases = f->p.quota_phases,
		.drain_floor = f->p.drain_floor,
		.windows_by_rate = f->p.windows_by_rate,
		.rate_uncertainty = f->p.rate_uncertainty,
		.capacity = f->p.capacity,
		.now_ns = e ? e->end_ns : rxb_mono_ns(),
	};

	return env;
}

/* ------------------------------------------------------ pause windows -- */

/*
 * The rate data arrives at from the flow's senders: each model's rate (the
 * rate between pauses where there is one: what a sender that pauses is
 * told) times its senders; without senders, the highest.
 */
static double offered_bps(const struct flow *fl)
{
	double sum = 0, top = 0;

	for (int i = 0; i < fl->nmodels; i++) {
		const struct flow_model *m = &fl->m[i];
		double r;

		if (!m->has_rate)
			continue;
		r = (double)(m->has_rate_between ? m->rate_between.rate_bps : m->rate.rate_bps);
		sum += r * m->nsenders;
		top = fmax(top, r);
	}
	return sum > 0 ? sum : top;
}

/*
 * How long the flow's receive queue (K_B packets) takes to fill, in ns; 0
 * when that is unknown (then a window is paused whole, as in Datta et
 * al.'s RBUDP+). It fills at the rate data arrives: the rate offered to the senders that
 * pause, or what arrived at the socket this epoch (queued + dropped) if
 * that was more - a sender may send faster than it was told, and pausing
 * it too little loses data where pausing too long only idles the link.
 * The smallest payload of the flow's models counts: the most packets.
 */
static uint64_t queue_absorb_ns(const struct flow *fl, double dt_s)
{
	const struct value *k = &fl->inputs.b.queue_pkts;
	const struct inputs_traffic *t = &fl->inputs.traffic;
	double bits = INFINITY, rate_bps = offered_bps(fl), ns;

	for (int i = 0; i < fl->nmodels; i++)
		bits = fmin(bits, fl->m[i].xfer.payload_bytes * 8);
	if (t->counts_valid && dt_s > 0)
		rate_bps = fmax(rate_bps, (t->pkts_in + t->rcvbuf_drops) * bits / dt_s);
	if (!(rate_bps > 0) || k->src == VALUE_MISSING || !(k->v > 0) || !(bits > 0) ||
	    !isfinite(bits))
		return 0;
	ns = k->v * bits / rate_bps * 1e9;
	return ns < 60e9 ? (uint64_t)ns : (uint64_t)60e9;
}

/* The longest RTT of the flow's senders' models (of any without senders). */
static double longest_rtt_us(const struct flow *fl)
{
	double with = 0, any = 0;

	for (int i = 0; i < fl->nmodels; i++) {
		double r = fl->m[i].xfer.one_way_delay_s * 2e6;

		any = fmax(any, r);
		if (fl->m[i].nsenders)
			with = fmax(with, r);
	}
	return with > 0 ? with : any;
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
	double rtt_us = longest_rtt_us(fl);
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


/* -------------------------------------------------------------- epochs -- */

/* Packets arrived at the port (measured, or seen in what /proc gives). */
static void note_packets(struct flow *fl, const struct rxb_epoch *e)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, fl->port);

	if (s && ((s->counts_valid && s->pkts_in) || s->arrivals_seen))
		fl->packets_seen = true;
}

/* Fold the epoch's measurements into the flow's shared inputs. */
static void flow_measure(struct flows *f, struct flow *fl, const struct rxb_epoch *e,
			 double dt_s)
{
	struct inputs_env env = env_of(f, e);

	note_packets(fl, e);
	inputs_update(&fl->learn, &f->disk, fl->port, e, dt_s, &env, &fl->inputs);
	if (fl->inputs.traffic.counts_valid) {
		fl->counted = fl->inputs.traffic;
		fl->counted_seq = e->seq;
		fl->counted_end_ns = e->end_ns;
	}
	flow_pause_learn(fl, e);
	flow_vacations(fl);
}

/* A model due for a solve, and since when it has waited. */
struct due {
	struct flow *fl;
	struct flow_model *m;
	uint64_t since_ns;
};

/* The longest waiting first; of equals, one never solved first. */
static int due_cmp(const void *a, const void *b)
{
	const struct due *x = a, *y = b;

	if (x->since_ns != y->since_ns)
		return x->since_ns < y->since_ns ? -1 : 1;
	return (int)x->m->have_good - (int)y->m->have_good;
}

/*
 * Every model's rate for this epoch. The solves due get this epoch's
 * FLOWS_SOLVES_PER_EPOCH, those that have waited longest (since their
 * last good solve, or since they were made) first.
 */
static void run_models(struct flows *f, const struct rxb_epoch *e)
{
	struct due due[FLOWS_MAX * FLOW_MAX_XFERS];
	size_t n = 0;

	for (int i = 0; i < f->n; i++)
		for (int j = 0; j < f->v[i].nmodels; j++) {
			struct flow *fl = &f->v[i];
			struct flow_model *m = &fl->m[j];

			if (fl->inputs.nstages && flows_due(f, fl, m, e))
				due[n++] = (struct due){ fl, m, m->have_good ?
							 m->good.epoch_end_ns : m->created_ns };
			else
				flows_model_run(f, fl, m, e, false);
		}
	qsort(due, n, sizeof(due[0]), due_cmp);
	for (size_t k = 0; k < n; k++)
		flows_model_run(f, due[k].fl, due[k].m, e, true);
}

/* Offer the port's senders their rates (after the PAUSE: the schedule
 * they get decides which rate is theirs). */
static void publish_rates(struct flows *f, struct flow *fl)
{
	fl->last_sent = f->ops.publish_rates ? f->ops.publish_rates(f->ops.ctx, fl->port) : 0;
	if (fl->last_sent < 0)
		rxb_warn("flow %u: RATE refused by the control server (%d)", fl->port,
			 fl->last_sent);
}

void flows_epoch(struct flows *f, const struct rxb_epoch *e,
		 uint32_t netdev_max_backlog)
{
	double dt_s = e->end_ns > e->start_ns ? (double)(e->end_ns - e->start_ns) / 1e9 : 0;
	uint64_t t0 = rxb_mono_ns();

	f->last = e;
	f->netdev_max_backlog = netdev_max_backlog;
	f->epochs++;
	f->solves_left = FLOWS_SOLVES_PER_EPOCH;
	learn_disk_update(&f->disk, e, dt_s);
	/* Lingering flows whose time is up go (before their epoch's work). */
	for (int i = f->n - 1; i >= 0; i--)
		if (lingering(&f->v[i]) && e->end_ns - f->v[i].idle_since_ns >= f->p.linger_ns)
			flow_forget(f, i);
	for (int i = 0; i < f->n; i++)
		flow_measure(f, &f->v[i], e, dt_s);
	run_models(f, e);
	for (int i = 0; i < f->n; i++) {
		flow_pause(f, &f->v[i], e, dt_s);
		publish_rates(f, &f->v[i]);
	}
	f->last_solve_ms = (double)(rxb_mono_ns() - t0) / 1e6;
}

/* ------------------------------------------------------------- senders -- */

int flows_sender_hello(struct flows *f, const struct sendsrv_peer *p)
{
	uint16_t port = p->hello.flow_port;
	struct flow *fl = flows_find(f, port);
	struct flow_model *m;
	struct inputs_env env;
	bool made;

	if (!fl) {
		fl = flow_add(f, port);
		if (!fl)
			return -ENOSPC;
	}
	fl->nsenders++;
	m = flows_model_add(f, fl, p, &made);
	if (!m) {
		fl->nshared++;
		fl->shared_total++;
		rxb_notice("flow %u: sender %s: %d transfers modelled already; it is answered "
			   "from the nearest, without a transfer time", port, p->addr_str,
			   FLOW_MAX_XFERS);
		return 0;
	}
	m->nsenders++;
	if (!made)
		return 0;
	if (fl->learn.origin != VALUE_MEASURED && f->ops.prior)
		f->ops.prior(f->ops.ctx, port, m->xfer.payload_bytes, &fl->learn);
	/* A rate for this sender right away, from the latest epoch. */
	env = env_of(f, f->last);
	inputs_compute(&fl->learn, &f->disk, port, f->last, &env, &fl->inputs);
	flows_model_run(f, fl, m, f->last, true);
	return 0;
}

void flows_sender_seen(struct flows *f, const struct sendsrv_peer *p)
{
	struct flow *fl = flows_find(f, p->hello.flow_port);
	struct flow_model *m = fl ? flows_model_find(fl, p) : NULL;
	bool made;

	if (fl && !m && fl->nshared) {
		/* Answered from the nearest: its own model once there is room. */
		m = flows_model_add(f, fl, p, &made);
		if (m) {
			fl->nshared--;
			m->nsenders++;
		}
	}
	/* Its RTT now (SUBSCRIBE), for the model's next solve. */
	if (m && p->hello.rtt_us)
		m->xfer.one_way_delay_s = p->hello.rtt_us / 2e6;
}

void flows_sender_gone(struct flows *f, const struct sendsrv_peer *p)
{
	struct flow *fl = flows_find(f, p->hello.flow_port);
	struct flow_model *m;

	if (!fl)
		return;
	m = flows_model_find(fl, p);
	if (m && m->nsenders) {
		if (!--m->nsenders)
			flows_model_unused(fl, m);
	} else if (fl->nshared) {
		fl->nshared--;
	}
	if (fl->nsenders && !--fl->nsenders && !fl->configured)
		fl->idle_since_ns = flows_now_ns(f);	/* lingers, then goes */
}

/*
 * The RATE @r's transfer started on. Of those sent at its rate, the last
 * one the sender could have had when its transfer began: sent a round
 * trip (the HELLO's) and the transfer's elapsed time before the REPORT
 * came (p->last_rx_ns: the REPORT just read). A RATE of the same rate
 * sent during the transfer (a re-solve moved its confidence or time) is
 * not the one it started on. Else the last one sent when its first round
 * went at that rate (a RATE can overtake the first before the blast
 * begins), else the first one sent (a sender capped by its own maximum).
 */
static const struct rxbneck_rate *start_rate(const struct sendsrv_peer *p,
					     const struct rxbneck_report *r)
{
	/* elapsed_us is the sender's word: held below what overflows. */
	uint64_t back_ns = (r->elapsed_us < UINT64_MAX / 4000 ? r->elapsed_us * 1000 :
			    UINT64_MAX / 4) + (uint64_t)p->hello_rtt_us * 1000;
	uint64_t start_ns = p->last_rx_ns > back_ns ? p->last_rx_ns - back_ns : 0;

	for (uint32_t i = p->nrates_sent; i-- > 0;)
		if (i < SENDSRV_RATES_KEPT && p->rates_sent_ns[i] <= start_ns &&
		    p->rates_sent[i].rate_bps == r->rate_bps)
			return &p->rates_sent[i];
	if (p->has_rate && p->last_rate.rate_bps == r->rate_bps)
		return &p->last_rate;
	return p->has_first_rate ? &p->first_rate : NULL;
}

void flows_note_report(struct flows *f, const struct sendsrv_peer *p,
		       const struct rxbneck_report *r)
{
	struct flow *fl = flows_find(f, p->hello.flow_port);
	const struct flow_model *m;
	bool exact;

	if (!fl)
		return;
	m = flows_model_of(f, fl, p, &exact);
	fl->reports++;
	fl->has_report = true;
	fl->last_report = *r;
	fl->report_model_rate_bps = m && m->have_good ? m->good.res.rate_bps : NAN;
	fl->report_model_time_s = m && m->have_good && exact ? m->good.res.time_s : NAN;
	outcome_add(&fl->outcome, rxb_mono_ns(), start_rate(p, r), p->hello_rtt_us, r);
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
	for (int j = 0; j < fl->nmodels; j++)
		flows_model_run(f, fl, &fl->m[j], f->last, true);
	publish_rates(f, fl);
	return 1;
}
