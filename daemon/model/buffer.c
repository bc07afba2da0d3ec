// SPDX-License-Identifier: GPL-2.0-or-later
/* Receive-buffer sizing for the watched sockets. See buffer.h. */
#include "daemon/model/buffer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

/* The model is sized again when a rate moved by this much. */
#define MODEL_RATE_MOVED	0.10

const char *buffer_mode_name(enum buffer_mode m)
{
	static const char *const names[] = {
		[BUFFER_OFF] = "off",
		[BUFFER_ADVISE] = "advise",
		[BUFFER_APPLY] = "apply",
	};

	return RXB_NAME(names, m, "?");
}

const char *buffer_policy_name(enum buffer_policy p)
{
	static const char *const names[] = {
		[BUFFER_RRDA] = "rrda",
		[BUFFER_MODEL] = "model",
	};

	return RXB_NAME(names, p, "?");
}

static int check_params(const struct buffer_params *p)
{
	struct rrda_params r = p->rrda;

	if (p->mode > BUFFER_APPLY || p->policy > BUFFER_MODEL ||
	    !(p->loss_target >= 0.0 && p->loss_target < 1.0) ||
	    !(p->time_slack >= 0.0) || !isfinite(p->time_slack))
		return -EINVAL;
	/* floor 0 = each socket's own: checked per socket */
	if (r.floor_bytes > r.ceiling_bytes)
		return -EINVAL;
	return rrda_params_check(&r);
}

int buffer_init(struct buffer_set *b, const struct buffer_params *p)
{
	int err;

	memset(b, 0, sizeof(*b));
	err = check_params(p);
	if (err)
		return err;
	b->p = *p;
	b->kernel_max_bytes = rrda_kernel_max_bytes(0, p->force);
	return bneck_ws_init(&b->ws, 2);
}

void buffer_finish(struct buffer_set *b)
{
	bneck_ws_finish(&b->ws);
	memset(b, 0, sizeof(*b));
}

int buffer_set_params(struct buffer_set *b, const struct buffer_params *p)
{
	int err = check_params(p);

	if (err)
		return err;
	if (p->force != b->p.force)
		b->kernel_max_bytes = rrda_kernel_max_bytes(0, p->force);
	/* a new policy or model target: size again at the next update */
	if (p->policy != b->p.policy || p->loss_target != b->p.loss_target ||
	    p->time_slack != b->p.time_slack || p->rrda.ceiling_bytes != b->p.rrda.ceiling_bytes)
		for (int i = 0; i < b->n; i++)
			b->v[i].model.valid = false;
	b->p = *p;
	return 0;
}

struct buffer_sock *buffer_find(struct buffer_set *b, uint64_t inode)
{
	for (int i = 0; i < b->n; i++)
		if (b->v[i].inode == inode)
			return &b->v[i];
	return NULL;
}

const struct buffer_sock *buffer_port_sock(const struct buffer_set *b, uint16_t port)
{
	const struct buffer_sock *best = NULL;

	for (int i = 0; i < b->n; i++)
		if (b->v[i].port == port &&
		    (!best || b->v[i].recommend_bytes > best->recommend_bytes))
			best = &b->v[i];
	return best;
}

static const struct buffer_flow *flow_of(const struct buffer_step_in *in, uint16_t port)
{
	for (int i = 0; i < in->nflows; i++)
		if (in->flows[i].port == port)
			return &in->flows[i];
	return NULL;
}

static double truesize_of(const struct buffer_flow *f)
{
	return f && f->truesize_bytes > 0.0 && isfinite(f->truesize_bytes)
	       ? f->truesize_bytes : BUFFER_TRUESIZE_DEFAULT;
}

/* The largest size a change may set: the ceiling, or the kernel's limit. */
static uint64_t upper_bytes(const struct buffer_set *b)
{
	uint64_t k = b->kernel_max_bytes;

	return b->p.rrda.ceiling_bytes < k ? b->p.rrda.ceiling_bytes : k;
}

static struct buffer_sock *add_sock(struct buffer_set *b, const struct sockdiag_sock *s,
				    uint64_t now_ns)
{
	struct buffer_sock *x;

	if (b->n >= BUFFER_MAX_SOCKS) {
		b->dropped_socks++;
		return NULL;
	}
	x = &b->v[b->n++];
	memset(x, 0, sizeof(*x));
	x->inode = s->inode;
	x->cookie = s->cookie;
	x->port = s->port;
	x->uid = s->uid;
	x->first_ns = x->last_ns = now_ns;
	x->rmem_alloc = s->rmem_alloc;
	x->rcvbuf = s->rcvbuf;
	x->drops = s->drops;
	/* The floor: configured, or what the application chose (within the
	 * ceiling). */
	x->floor_bytes = b->p.rrda.floor_bytes ? b->p.rrda.floor_bytes :
			 s->rcvbuf < b->p.rrda.ceiling_bytes ? s->rcvbuf :
			 b->p.rrda.ceiling_bytes;
	x->recommend_bytes = s->rcvbuf;
	rrda_init(&x->rrda);
	return x;
}

uint32_t buffer_take_min(struct buffer_sock *x)
{
	uint32_t m = x->rcvbuf_min ? x->rcvbuf_min : x->rcvbuf;

	x->rcvbuf_min = x->rcvbuf;
	return m;
}

/* The memory figures of a step, for status. */
static void note_memory(struct buffer_sock *x)
{
	if (!x->rcvbuf_min || x->rcvbuf < x->rcvbuf_min)
		x->rcvbuf_min = x->rcvbuf;
	x->steps++;
	x->rcvbuf_sum += x->rcvbuf;
	x->rmem_sum += x->rmem_alloc;
	if (x->rcvbuf > x->rcvbuf_peak)
		x->rcvbuf_peak = x->rcvbuf;
	if (x->rmem_alloc > x->rmem_peak)
		x->rmem_peak = x->rmem_alloc;
}

/* RRDA's step for @x from a new sample @s; its target into recommend_bytes. */
static void step_rrda(struct buffer_set *b, struct buffer_sock *x,
		      const struct sockdiag_sock *s, const struct buffer_step_in *in,
		      double ts)
{
	struct rrda_params p = b->p.rrda;
	uint32_t ddrops = s->have_drops ? s->drops - x->drops : 0;	/* wraps */
	double surplus = (double)s->rmem_alloc - (double)x->rmem_alloc +
			 (double)ddrops * ts;
	struct rrda_input ri = {
		.recv_bytes = surplus > 0 ? surplus : 0.0,
		.srv_bytes = surplus < 0 ? -surplus : 0.0,
		.interval_s = (double)(in->now_ns - x->last_ns) / 1e9,
		.cur_bytes = b->p.mode == BUFFER_APPLY ? s->rcvbuf : x->recommend_bytes,
		.mem_util = x->alpha,
		.mem_pressure = x->pressure,
		.kernel_max_bytes = b->kernel_max_bytes,
	};

	p.floor_bytes = x->floor_bytes;
	if (p.ceiling_bytes < p.floor_bytes)
		p.ceiling_bytes = p.floor_bytes;
	if (rrda_step(&p, &x->rrda, &ri, &x->last) == 0) {
		x->have_decision = true;
		x->recommend_bytes = x->last.target_bytes;
	}
}

static void rrda_reason(const struct buffer_sock *x, char *buf, size_t len)
{
	const struct rrda_decision *d = &x->last;

	snprintf(buf, len, "rrda %s: f=%+d v_b=%+.0f v'=%+.0f B/epoch alpha=%.3f "
		 "step=%+.0f", rrda_why_name(d->why), d->f, d->vb_bytes, d->ema_bytes,
		 x->alpha, d->step_bytes);
}

static void model_reason(const struct buffer_sock *x, char *buf, size_t len)
{
	const struct buffer_model_rec *m = &x->model;

	if (m->by_time)
		snprintf(buf, len, "model: K=%u pkts x %.0f B, T %.4g s within %.3g s "
			 "of the largest buffer's, at %.4g Mb/s", m->r.queue_pkts,
			 m->truesize_bytes, m->r.time_s, m->r.time_ref_s, m->rate_bps / 1e6);
	else
		snprintf(buf, len, "model: K=%u pkts x %.0f B, socket loss %.3g at %.4g Mb/s",
			 m->r.queue_pkts, m->truesize_bytes, m->r.loss, m->rate_bps / 1e6);
}

/* The model policy: apply @to now? (hysteresis, shrink hold, pressure) */
static bool model_due(struct buffer_sock *x, uint64_t cur, uint64_t to, uint64_t now)
{
	if (!x->model.valid ||
	    fabs((double)to - (double)cur) < BUFFER_HYSTERESIS * (double)cur) {
		x->shrink_since_ns = 0;
		return false;
	}
	if (to > cur) {
		x->shrink_since_ns = 0;
		return !x->pressure;	/* no growth under udp_mem pressure */
	}
	if (!x->shrink_since_ns)
		x->shrink_since_ns = now;
	return now - x->shrink_since_ns >= BUFFER_SHRINK_HOLD_NS;
}

/* Apply mode: the change @x should get now, if any. */
static bool want_change(const struct buffer_set *b, struct buffer_sock *x,
			uint64_t now, struct buffer_action *a)
{
	uint64_t cur = x->rcvbuf, to = x->recommend_bytes;

	if (to == cur)
		x->shrink_since_ns = 0;
	if (b->p.mode != BUFFER_APPLY || !to || to == cur)
		return false;
	if (b->p.policy == BUFFER_MODEL && !model_due(x, cur, to, now))
		return false;
	memset(a, 0, sizeof(*a));
	a->inode = x->inode;
	a->port = x->port;
	a->from_bytes = cur;
	a->to_bytes = to;
	if (b->p.policy == BUFFER_MODEL)
		model_reason(x, a->reason, sizeof(a->reason));
	else
		rrda_reason(x, a->reason, sizeof(a->reason));
	return true;
}

/* Drop the sockets the latest dump did not have (closed). */
static void forget_unseen(struct buffer_set *b)
{
	int j = 0;

	for (int i = 0; i < b->n; i++)
		if (b->v[i].seen)
			b->v[j++] = b->v[i];
	b->n = j;
}

int buffer_step(struct buffer_set *b, const struct buffer_step_in *in,
		struct buffer_action *act, int max)
{
	double alpha = in->mem && in->mem->mem_valid ? procmem_utilisation(&in->mem->mem) : 1.0;
	bool pressure = in->mem && procmem_udp_pressure(in->mem);
	int nact = 0;

	b->steps++;
	b->kernel_max_bytes = rrda_kernel_max_bytes(in->mem ? in->mem->rmem_max_bytes : 0,
						    b->p.force);
	for (int i = 0; i < b->n; i++)
		b->v[i].seen = false;
	for (int i = 0; i < in->nsocks; i++) {
		const struct sockdiag_sock *s = &in->socks[i];
		const struct buffer_flow *f = flow_of(in, s->port);
		struct buffer_sock *x;

		if (!f || !s->have_mem)
			continue;
		x = buffer_find(b, s->inode);
		if (!x) {
			x = add_sock(b, s, in->now_ns);
			if (x)
				x->seen = true;
			continue;
		}
		x->seen = true;
		x->alpha = alpha;
		x->pressure = pressure;
		if (in->now_ns > x->last_ns) {
			if (b->p.policy == BUFFER_RRDA && b->p.mode != BUFFER_OFF)
				step_rrda(b, x, s, in, truesize_of(f));
			if (s->have_drops)
				x->drops_total += (uint32_t)(s->drops - x->drops);
			x->last_ns = in->now_ns;
		}
		x->rmem_alloc = s->rmem_alloc;
		x->rcvbuf = s->rcvbuf;
		x->drops = s->drops;
		x->truesize_bytes = truesize_of(f);
		if (b->p.policy == BUFFER_MODEL && x->model.valid)
			x->recommend_bytes = x->model.bytes;
		note_memory(x);
		if (nact < max && want_change(b, x, in->now_ns, &act[nact]))
			nact++;
	}
	forget_unseen(b);
	return nact;
}

/*
 * The rate a socket is sized for: what arrives while traffic is measured
 * (a sender that follows RATE sends that; one that does not sends this),
 * else the rate the daemon publishes (the next transfer's).
 */
static double sizing_rate(const struct buffer_flow *f)
{
	return f->arrival_bps > 0.0 ? f->arrival_bps : f->published_bps;
}

struct time_ctx {
	struct bneck_ws *ws;
	struct rxb_stage_inputs st[BNECK_MAX_STAGES];
	uint32_t nstages;
	struct bneck_xfer x;
	double rate_bps;
};

/* T with the socket stage's queue at @k packets (bufsize_time_fn). */
static int time_at(void *arg, uint32_t k, double *t_s)
{
	struct time_ctx *c = arg;
	struct bneck_at at;
	int err;

	c->st[c->nstages - 1].queue_pkts = k;
	err = bneck_eval_at(c->ws, c->st, c->nstages, &c->x, NULL, c->rate_bps, &at);
	*t_s = at.pt.time_s;
	return err;
}

int buffer_model_size(struct bneck_ws *ws, const struct buffer_flow *f,
		      double loss_target, double time_slack, uint64_t floor_bytes,
		      uint64_t hi_bytes, struct buffer_model_rec *out)
{
	struct time_ctx c = { .ws = ws, .nstages = f->nstages, .x = f->xfer };
	const struct rxb_stage_inputs *sb;
	struct bufsize_stage st;
	struct bneck_at at;
	uint32_t kmax;
	int err;

	memset(out, 0, sizeof(*out));
	out->solved_ns = f->solved_ns;
	if (!f->have_model || f->nstages < 1 || f->nstages > BNECK_MAX_STAGES) {
		snprintf(out->why, sizeof(out->why), "no model of the flow yet");
		return -ENODATA;
	}
	out->rate_bps = sizing_rate(f);
	if (!(out->rate_bps > 0.0) || !isfinite(out->rate_bps)) {
		snprintf(out->why, sizeof(out->why), "no rate to size for");
		return -ENODATA;
	}
	out->truesize_bytes = truesize_of(f);
	kmax = bufsize_pkts(hi_bytes, out->truesize_bytes);
	memcpy(c.st, f->stages, sizeof(c.st));
	c.x.points = 2;		/* one rate is evaluated: no sweep */
	c.rate_bps = out->rate_bps;
	err = bneck_eval_at(ws, c.st, c.nstages, &c.x, NULL, c.rate_bps, &at);
	if (err) {
		snprintf(out->why, sizeof(out->why), "model at %.4g Mb/s: %s",
			 c.rate_bps / 1e6, strerror(-err));
		return err;
	}
	sb = &c.st[c.nstages - 1];
	st = (struct bufsize_stage){
		.arrival_per_s = at.stage_arrival_per_s[c.nstages - 1],
		.service_per_s = at.stage_service_per_s[c.nstages - 1],
		.batch_pkts = sb->batch_pkts,
		.rule = sb->rule,
		.vacation_s = sb->vacation_s,
		.vacation_period_s = sb->vacation_period_s,
	};
	if (sb->rule == RXB_BATCH_STRICT && kmax < sb->batch_pkts)
		kmax = sb->batch_pkts;
	err = bufsize_for_loss(&st, loss_target, 1, kmax, &out->r);
	if (!err && !out->r.met) {
		double at_max = out->r.loss_at_max;

		out->by_time = true;
		err = bufsize_for_time(time_at, &c, time_slack,
				       sb->rule == RXB_BATCH_STRICT ? sb->batch_pkts : 1,
				       kmax, &out->r);
		/* the socket's loss there, for status */
		if (!err)
			err = bufsize_stage_loss(&st, out->r.queue_pkts, &out->r.loss);
		out->r.loss_at_max = at_max;
	}
	if (err) {
		snprintf(out->why, sizeof(out->why), "sizing: %s", strerror(-err));
		return err;
	}
	out->bytes = bufsize_bytes(out->r.queue_pkts, out->truesize_bytes);
	if (out->bytes < floor_bytes)
		out->bytes = floor_bytes + (floor_bytes & 1);
	if (out->bytes > hi_bytes)
		out->bytes = hi_bytes & ~1ULL;
	out->valid = true;
	return 0;
}

static bool moved(double now, double then)
{
	if (!(then > 0.0))
		return now > 0.0;
	return fabs(now / then - 1.0) >= MODEL_RATE_MOVED;
}

int buffer_model_update(struct buffer_set *b, const struct buffer_flow *f, bool force)
{
	int first = 0;

	if (b->p.mode == BUFFER_OFF || b->p.policy != BUFFER_MODEL)
		return 0;
	for (int i = 0; i < b->n; i++) {
		struct buffer_sock *x = &b->v[i];
		double rate = sizing_rate(f);
		int err;

		if (x->port != f->port)
			continue;
		if (!force && x->model.valid && x->model.solved_ns == f->solved_ns &&
		    !moved(rate, x->model.rate_bps))
			continue;
		err = buffer_model_size(&b->ws, f, b->p.loss_target, b->p.time_slack,
					x->floor_bytes, upper_bytes(b), &x->model);
		if (!err)
			x->recommend_bytes = x->model.bytes;
		if (err && !first)
			first = err;
	}
	return first;
}

void buffer_applied(struct buffer_set *b, const struct buffer_action *a,
		    uint64_t now_bytes, int err, const char *why, uint64_t now_ns)
{
	struct buffer_sock *x = buffer_find(b, a->inode);

	if (!x)
		return;
	x->act_err = err;
	snprintf(x->act_why, sizeof(x->act_why), "%s", err && why ? why : "");
	if (err)
		return;
	x->changes++;
	x->last_change_ns = now_ns;
	x->last_from_bytes = a->from_bytes;
	x->last_to_bytes = now_bytes;
	snprintf(x->last_reason, sizeof(x->last_reason), "%s", a->reason);
	if (now_bytes <= UINT32_MAX)
		x->rcvbuf = (uint32_t)now_bytes;
}

double buffer_overflow_window_s(double queue_pkts, double drops, double episodes,
				double lambda)
{
	if (!(queue_pkts >= 0) || !(drops > 0) || !(episodes > 0) || !(lambda > 0) ||
	    !isfinite(lambda))
		return 0.0;
	return (queue_pkts + drops / episodes) / lambda;
}
