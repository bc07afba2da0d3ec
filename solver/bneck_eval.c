// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * T(B) at one sending rate: each stage's loss (bulk queue, fluid spread,
 * server vacations, the sender's pauses), burst absorption, the transfer
 * time, and its expectation over uncertain service rates. See bneck.h.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "solver/bneck_eval.h"
#include "solver/bulkq.h"
#include "solver/lnmath.h"
#include "solver/offwin.h"
#include "solver/qphase.h"
#include "solver/spread.h"

/* Below this many packets lost per file, burst absorption is not computed. */
#define BURST_MIN_LOST_PKTS 1e-6

/*
 * The fraction of arrivals at @lambda a queue of @k packets loses to the
 * server's vacations: of every period P it is off for D, and once the
 * queue is full (k / lambda into the vacation) the rest of D overflows:
 * (D - k / lambda)+ / P. (Deterministic on/off service; the bulk queue's
 * exponential service spreads the same CPU share over time and misses
 * these long gaps.)
 */
double bneck_vacation_loss(double lambda, double k, double d_s, double p_s)
{
	double over;

	if (!(d_s > 0.0) || !(p_s > 0.0) || !(lambda > 0.0))
		return 0.0;
	over = d_s - k / lambda;
	return over > 0.0 ? over / p_s : 0.0;
}

/*
 * A stage whose vacations the sender pauses through (struct bneck_xfer,
 * obey_pauses): the sender is silent for d_pub = (D - K/lambda)+ of every
 * period P, so it sends for the fraction 1 - d_pub/P. In a period the
 * server, alone on its CPU for P - D, drains at most cap_on (P - D)
 * packets of the lambda (P - d_pub) that arrive (the queue ends each
 * window full when d_pub > 0); the excess is lost (the periodic fluid
 * bound), which is returned; the sending fraction goes to *send_frac.
 */
static double paused_loss(const struct rxb_stage_inputs *st, double lambda,
			  double cap_on, double *send_frac)
{
	double d = st->vacation_s, p = st->vacation_period_s;
	double d_pub = d - st->queue_pkts / lambda;
	double arrive, over;

	if (d_pub < 0.0)
		d_pub = 0.0;
	*send_frac = 1.0 - d_pub / p;
	arrive = lambda * (p - d_pub);
	over = arrive - cap_on * (p - d);
	return over > 0.0 ? over / arrive : 0.0;
}

/*
 * Does a stage losing @loss need bulkq_burst() (O(K) per stage and rate)?
 * Not when its vacations set the loss (no absorption then), and not where
 * loss x file packets is below BURST_MIN_LOST_PKTS: no round is larger than
 * the file, so every round then loses less than that with or without
 * absorption and T moves by less than that share of a round. Skipping the
 * rates below capacity cuts a solve on a deep socket buffer by a third
 * (e2e, K = 3641: 23-25 ms of CPU per epoch instead of 33-65 ms). The
 * reported point (burst_always) gets its queue figures in full.
 */
static bool burst_matters(const struct bneck_model *md, bool vac_wins, double loss)
{
	if (md->x->rounds != BNECK_ROUNDS_BURST)
		return false;
	if (md->burst_always)
		return true;
	return !vac_wins && loss * md->file_pkts >= BURST_MIN_LOST_PKTS;
}

/*
 * The share of its service rate a stage's server keeps while interrupt
 * context takes @irq_ns of its CPU per packet arriving at @lambda: every
 * task on the CPU loses that time alike, the receiver included, so its
 * rate scales by 1 - lambda x irq_ns (stage A on the receiver's CPU).
 * Never below @min_share, which only keeps the rate positive: the kernel
 * does hand a softirq that keeps running to ksoftirqd, a task among the
 * others, but the measured NET_RX share of the receiver's CPU followed
 * lambda x irq_ns up to 0.4 at every #C (docs/model.md §4), far past the
 * 1 / (#C + 2) such a task would get.
 */
double bneck_irq_share(double lambda, double irq_ns, double min_share)
{
	double share;

	if (!(irq_ns > 0.0) || !(lambda > 0.0))
		return 1.0;
	share = 1.0 - lambda * irq_ns * 1e-9;
	return share > min_share ? share : min_share;
}

/* @oe's round figures (offwin_eval_round()) for stage @i, once. */
static const struct offwin_eval *window_round(const struct bneck_model *md, uint32_t i,
					      double scale, struct offwin_eval *oe)
{
	struct offwin_in in;

	if (!oe->round) {
		in = bneck_model_window_in(md, i, scale);
		offwin_eval_round(&in, oe);
	}
	return oe;
}

/* Is stage @i a fluid queue with a spread drain (BNECK_LOSS_SPREAD)? */
static bool spread_stage(const struct bneck_model *md, uint32_t i)
{
	return md->x->loss_model == BNECK_LOSS_SPREAD && !md->st[i].load_independent;
}

/*
 * BNECK_LOSS_SERVICE within the windows' reach: what a round at @lambda
 * into stage @i, whose windows set its loss, absorbs: what the round's
 * start and end take off n l within the windows' own fluid model
 * (offwin_round_absorb()). 0 for the other models:
 * with them the windows' loss is counted per window, each from a drained
 * queue.
 */
static double service_absorb(const struct bneck_model *md, uint32_t i, double lambda,
			     double scale, struct offwin_eval *oe)
{
	if (!bneck_model_served_alone(md, i, lambda))
		return 0.0;
	return window_round(md, i, scale, oe)->absorb_pkts;
}

/*
 * With episodes_from_windows, stage @i's loss episode where its windows
 * (@oe, at @lambda) set its loss @loss (packets a losing window loses),
 * kept in @ev when this stage loses more than the one kept so far.
 */
static void window_episode(const struct bneck_model *md, uint32_t i, double lambda,
			   double scale, double loss, struct offwin_eval *oe,
			   struct bneck_eval *ev)
{
	double lossy_per_s;

	if (!md->x->episodes_from_windows || md->paused[i] || !bneck_model_windows(md, i) ||
	    !(loss > ev->episode_loss))
		return;
	/* Only where the windows, not the vacations, set the loss. */
	if (!(oe->loss >= loss))
		return;
	lossy_per_s = window_round(md, i, scale, oe)->lossy_per_s;
	if (!(lossy_per_s > 0.0))
		return;
	ev->episode_pkts = fmax(1.0, lambda * loss / lossy_per_s);
	ev->episode_loss = loss;
}

/* Stage @i's quota phases (qphase.h) at @lambda into @qe. */
static void quota_eval(const struct bneck_model *md, uint32_t i, double lambda,
		       double scale, struct qphase_eval *qe)
{
	const struct rxb_stage_inputs *st = &md->st[i];
	struct qphase_in in = {
		.period_s = st->quota_period_s,
		.slow_s = st->quota_slow_s,
		.slow_share = st->quota_slow_share,
		.fast_share = st->quota_fast_share,
		.queue_pkts = st->queue_pkts,
		.on_pkts_per_s = bneck_model_on_drain(md, i, scale),
	};

	/* Checked with the inputs (bneck_model_setup()); nothing lost else. */
	if (qphase_eval(&in, lambda, qe))
		memset(qe, 0, sizeof(*qe));
}

/*
 * With a quota's phases setting stage @i's loss @loss at @lambda: what a
 * round absorbs where the stage is served alone, and the episode (one per
 * losing period) with episodes_from_windows.
 */
static double quota_absorb(const struct bneck_model *md, uint32_t i, double lambda,
			   double loss, const struct qphase_eval *qe, struct bneck_eval *ev)
{
	if (md->x->episodes_from_windows && qe->lossy_per_s > 0.0 &&
	    loss > ev->episode_loss) {
		ev->episode_pkts = fmax(1.0, lambda * loss / qe->lossy_per_s);
		ev->episode_loss = loss;
	}
	return bneck_model_served_alone(md, i, lambda) ? qe->absorb_pkts : 0.0;
}

/*
 * Stage @i's loss at @lambda to its server being away: with the sender
 * pausing through its vacations, what the periodic fluid bound loses at
 * the server's rate @cap_pkts_per_s (lowering ev->send_frac to the share
 * of the time it sends); else its vacations' loss and, with the windows'
 * models, the larger of that and its measured windows' (drain scaled by
 * @scale), or of its quota's phases (@qe), which stand for the windows.
 */
static double away_loss(struct bneck_model *md, uint32_t i, double lambda,
			double cap_pkts_per_s, double scale, struct bneck_eval *ev,
			struct offwin_eval *oe, struct qphase_eval *qe)
{
	struct offwin_in in;
	double frac, vac;

	memset(oe, 0, sizeof(*oe));
	memset(qe, 0, sizeof(*qe));
	if (md->paused[i]) {
		vac = paused_loss(&md->st[i], lambda, cap_pkts_per_s, &frac);
		if (frac < ev->send_frac)
			ev->send_frac = frac;
		return vac;
	}
	vac = bneck_vacation_loss(lambda, md->st[i].queue_pkts, md->st[i].vacation_s,
				  md->st[i].vacation_period_s);
	if (bneck_model_quota(md, i)) {
		quota_eval(md, i, lambda, scale, qe);
		vac = fmax(vac, qe->loss);
	} else if (bneck_model_windows(md, i)) {
		in = bneck_model_window_in(md, i, scale);
		offwin_eval_loss(&in, lambda, OFFWIN_LOGUNIFORM, oe);
		vac = fmax(vac, oe->loss);
	}
	return vac;
}

/*
 * Stage @i's loss at @lambda and what a round's burst into it absorbs,
 * into @ev's stage figures and @rs. Lowers ev->send_frac where the
 * sender pauses through its vacations.
 */
/* What serves stage @i at arrivals @lambda (stage_serve()). */
struct stage_serve {
	double share;		/* left to it by its arrivals' interrupts */
	double f;		/* the capacity's scale */
	double mu;		/* its rate per batch, shared, kept up or full */
	bool alone;		/* served alone between its windows */
	bool behind;		/* drained at its saturated drain */
	bool over;		/* above its share with no drain measured */
	struct bulkq_params p;	/* the bulk queue at the rate that serves it */
};

static void stage_serve(const struct bneck_model *md, uint32_t i, double lambda,
			struct stage_serve *sv)
{
	double sat = bneck_model_sat_drain(md, i, lambda);

	sv->share = bneck_irq_share(lambda, md->st[i].irq_ns_per_pkt, BNECK_IRQ_MIN_SHARE);
	sv->f = bneck_model_scale(md, i);
	/* Beyond what it keeps up with, the queue fills: the full rate. */
	sv->mu = sv->f * (md->keep_up_pkts_per_s[i] > 0.0 &&
			  lambda > sv->f * md->keep_up_pkts_per_s[i] ?
			  md->mu_full[i] : md->mu[i]);
	/* Served alone between its windows: the co-runners are in them. */
	sv->alone = md->paused[i] || bneck_model_served_alone(md, i, lambda);
	/*
	 * Behind: drained at what it was measured to drain overflowed,
	 * interrupts and all (no share taken off it again). A quota's
	 * phases serve it alone at any rate, but only in the fast phase:
	 * above the drain measured over whole periods it cannot catch up
	 * in that phase either.
	 */
	sv->behind = sat > 0.0 && lambda > sat && !md->paused[i] &&
		     (!sv->alone || bneck_model_quota(md, i));
	/* Above its share with no drain measured: as behind, at the shared rate. */
	sv->over = !md->paused[i] && bneck_model_over_share(md, i, lambda);
	sv->p = (struct bulkq_params){
		.arrival_per_s = lambda,
		.service_per_s = sv->behind ? sat / md->st[i].batch_pkts :
			sv->share * (sv->alone ? sv->f * md->mu_on[i] : sv->mu),
		.queue_pkts = md->st[i].queue_pkts,
		.batch_pkts = md->st[i].batch_pkts,
		.rule = md->st[i].rule,
	};
}

static int eval_stage(struct bneck_model *md, uint32_t i, double lambda,
		      struct bneck_eval *ev, struct rbudp_stage *rs, struct bulkq_result *r)
{
	struct stage_serve sv;
	const struct bulkq_params *p = &sv.p;
	struct bulkq_burst_result br = { 0 };
	struct offwin_eval oe;
	struct qphase_eval qe;
	bool vac_wins;
	double vac;
	int err;

	stage_serve(md, i, lambda, &sv);
	if (spread_stage(md, i)) {
		spread_fluid_loss(lambda, p->service_per_s * p->batch_pkts, r);
	} else {
		err = bulkq_loss(p, r);
		if (err)
			return err;
	}
	/*
	 * A stage that loses more to its server's vacations than the
	 * bulk queue says: both describe the same CPU sharing, so the
	 * larger is the stage's loss (not their sum).
	 */
	vac = away_loss(md, i, lambda, p->service_per_s * p->batch_pkts, sv.share * sv.f, ev,
		       &oe, &qe);
	vac_wins = vac > r->loss;
	if (vac_wins) {
		r->loss = vac;
		r->ln_loss = log(vac);
		r->pass = 1.0 - vac;
	}
	if (spread_stage(md, i)) {
		/* Above its drain a fluid queue ends every round full. */
		br.absorb_pkts = vac_wins || !(r->loss > 0.0) ? 0.0 :
				 md->st[i].queue_pkts;
	} else if (burst_matters(md, vac_wins, r->loss)) {
		err = bulkq_burst(p, md->qwork, &br);
		if (err)
			return err;
	}
	/*
	 * The vacation loss is per off window, each window starting from a
	 * drained queue: a round's burst gets no absorption beyond what
	 * l_vac already counts, but for service_absorb()'s.
	 */
	if (vac_wins && bneck_model_quota(md, i) && !md->paused[i]) {
		br.absorb_pkts = quota_absorb(md, i, lambda, vac, &qe, ev);
	} else if (sv.behind && bneck_model_quota(md, i)) {
		/* As between windows, below: no more than its phases let in. */
		br.absorb_pkts = fmin(br.absorb_pkts, qe.absorb_pkts);
	} else if (vac_wins) {
		br.absorb_pkts = service_absorb(md, i, lambda, sv.share * sv.f, &oe);
		window_episode(md, i, lambda, sv.share * sv.f, vac, &oe, ev);
	} else if ((sv.behind || sv.over) && bneck_model_windows(md, i)) {
		/*
		 * Behind its drain (or above its share) the receiver still
		 * meets its windows: a round takes in no more than they leave
		 * it room for at its own rate, else T would fall as the rate
		 * crosses the drain.
		 */
		br.absorb_pkts = fmin(br.absorb_pkts,
				      window_round(md, i, sv.share * sv.f, &oe)->absorb_pkts);
	}
	ev->stage_lambda[i] = lambda;
	ev->stage_mu[i] = p->service_per_s;
	ev->stage_loss[i] = r->loss;
	ev->stage_absorb[i] = br.absorb_pkts;
	ev->stage_meanq[i] = br.mean_queue_pkts;
	rs->loss = r->loss;
	rs->pass = r->pass;
	rs->absorb_pkts = br.absorb_pkts;
	/* After the blast nothing arrives: it empties at its whole rate. */
	rs->drain_pkts_per_s = sv.mu * md->st[i].batch_pkts;
	return 0;
}

/* T(B) and the figures behind it, every service rate at its node md->z. */
static int eval_rate(struct bneck_model *md, double rate_bps, struct bneck_eval *ev)
{
	double lambda = rate_bps / (8.0 * md->x->payload_bytes);
	double ln_loss = -INFINITY, ln_pass = 0.0;
	struct rbudp_stage rs[BNECK_MAX_STAGES];
	struct rbudp_params rb;
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->send_frac = 1.0;
	for (uint32_t i = 0; i < md->nstages; i++) {
		struct bulkq_result r;

		err = eval_stage(md, i, lambda, ev, &rs[i], &r);
		if (err)
			return err;
		/* l = l_prev + l_i (1 - l_prev): lost here after passing so far. */
		ln_loss = ln_add(ln_loss, r.ln_loss + ln_pass);
		ln_pass += log(r.pass);
		lambda *= r.pass;	/* the next stage sees what passed */
		if (r.rel_err > md->worst_rel_err)
			md->worst_rel_err = r.rel_err;
	}
	if (ln_loss > 0.0)
		ln_loss = 0.0;	/* rounding */
	rb = md->rb;
	if (ev->episode_pkts > 0.0)
		rb.loss_episode_pkts = ev->episode_pkts;
	/* A sender that pauses blasts at rate_bps only while it sends. */
	if (md->x->rounds == BNECK_ROUNDS_BURST)
		err = rbudp_time_burst(&rb, rate_bps / 8.0 * ev->send_frac, rs,
				       md->nstages, &ev->t);
	else
		err = rbudp_time(&rb, rate_bps / 8.0 * ev->send_frac, ln_loss,
				 &ev->t);
	if (err)
		return err;
	ev->pt.first_loss = md->x->rounds == BNECK_ROUNDS_BURST ?
			    rbudp_round_lost(rs, md->nstages, md->file_pkts) / md->file_pkts :
			    exp(ln_loss);
	ev->pt.rate_bps = rate_bps;
	ev->pt.ln_loss = ln_loss;
	ev->pt.loss = exp(ln_loss);
	ev->pt.time_s = ev->t.time_s;
	ev->pt.n_resend = ev->t.n_resend;
	md->evaluations++;
	return 0;
}

/*
 * The breakpoints of T over the spread factor's normal node at @rate_bps
 * (spread_rule_build()): of the last spread stage with a spread (or, under
 * `service`, with its saturated drain in force: that drain), where
 * its drain falls to the arrivals, where the first blast starts to lose
 * (the drain below lambda (1 - K / n0)), where it loses one loss episode
 * and where the depth cost sets in.
 * Returns how many; 0 when no stage is spread.
 */
static uint32_t spread_breaks(const struct bneck_model *md, double rate_bps, double *brk)
{
	double lambda = rate_bps / (8.0 * md->x->payload_bytes);
	uint32_t n = 0;

	for (uint32_t i = md->nstages; i-- > 0;) {
		const struct rxb_stage_inputs *st = &md->st[i];
		double sd = st->mu_rel_sd, a = 1.0 - st->queue_pkts / md->file_pkts;
		double sat = bneck_model_sat_drain(md, i, lambda), c;

		if (!(sd > 0.0) || !(spread_stage(md, i) || sat > 0.0))
			continue;
		/* The saturated drain where in force, else the shared drain. */
		c = sat > 0.0 ? sat :
		    bneck_irq_share(lambda, st->irq_ns_per_pkt, BNECK_IRQ_MIN_SHARE) *
		    md->mu[i] * st->batch_pkts;
		brk[n++] = log(lambda / c) / sd;
		if (a > 0.0)
			brk[n++] = log(lambda * a / c) / sd;
		/* ... and where it loses one episode: a round is then certain. */
		a -= md->x->loss_episode_pkts / md->file_pkts;
		if (a > 0.0 && md->x->loss_episode_pkts > 1.0)
			brk[n++] = log(lambda * a / c) / sd;
		/* The shared queue's overflowed rate: not where the drain is. */
		if (!(sat > 0.0) && md->keep_up_pkts_per_s[i] > 0.0)
			brk[n++] = log(lambda / md->keep_up_pkts_per_s[i]) / sd;
		break;
	}
	return n;
}

/*
 * The rule's weighted sums of T, the loss, the first round's loss and the
 * resends over its nodes z, each solved at @rate_bps, into @sum; md->z is
 * back at 0 after.
 */
static int eval_rule(struct bneck_model *md, double rate_bps, const struct spread_rule *rule,
		     struct bneck_point *sum)
{
	struct bneck_eval node;
	int err = 0;

	sum->time_s = sum->loss = sum->first_loss = sum->n_resend = 0.0;
	for (uint32_t j = 0; j < rule->n && !err; j++) {
		md->z = rule->z[j];
		err = eval_rate(md, rate_bps, &node);
		sum->time_s += rule->w[j] * node.pt.time_s;
		sum->loss += rule->w[j] * node.pt.loss;
		sum->first_loss += rule->w[j] * node.pt.first_loss;
		sum->n_resend += rule->w[j] * node.pt.n_resend;
	}
	md->z = 0.0;
	return err;
}

/*
 * BNECK_LOSS_SPREAD: T(B), the loss, the first blast's loss and N_resend
 * expected over the spread factor by spread_rule_build()'s rule; the
 * stage figures at the median drain (z = 0).
 */
static int eval_spread(struct bneck_model *md, double rate_bps, struct bneck_eval *ev)
{
	double brk[SPREAD_MAX_BREAKS];
	struct spread_rule rule;
	struct bneck_point sum;
	uint32_t nb;
	int err;

	md->z = 0.0;
	err = eval_rate(md, rate_bps, ev);
	nb = spread_breaks(md, rate_bps, brk);
	if (err || nb == 0)
		return err;
	err = spread_rule_build(brk, nb, &rule);
	if (!err)
		err = eval_rule(md, rate_bps, &rule, &sum);
	if (err)
		return err;
	ev->pt.time_s = sum.time_s;
	ev->pt.loss = fmin(sum.loss, 1.0);
	ev->pt.ln_loss = log(ev->pt.loss);
	ev->pt.first_loss = fmin(sum.first_loss, 1.0);
	ev->pt.n_resend = sum.n_resend;
	return 0;
}

/*
 * T expected over the rate factor where a stage is held to its saturated
 * drain (bneck_model_sat_drain()): T steps up by a round where that drain
 * falls below the arrivals' share the queue cannot take (spread_breaks()),
 * which the three-point rule would smear over its spacing of 1.73. So a
 * three-point Gauss-Legendre rule on each panel between those steps, over
 * +-BNECK_SAT_Z_MAX, into *t_s; *done false (nothing evaluated) where no
 * stage has such steps.
 */
static int eval_steps(struct bneck_model *md, double rate_bps, double *t_s, bool *done)
{
	double brk[SPREAD_MAX_BREAKS];
	struct spread_rule rule;
	struct bneck_point sum;
	uint32_t nb = spread_breaks(md, rate_bps, brk);
	int err;

	*done = nb > 0;
	if (!nb)
		return 0;
	err = spread_rule_build_shaped(brk, nb, BNECK_SAT_Z_MAX, 2.0 * BNECK_SAT_Z_MAX, 3, &rule);
	if (err)
		return err;
	err = eval_rule(md, rate_bps, &rule, &sum);
	*t_s = sum.time_s;
	return err;
}

/* See bneck_eval.h. */
int bneck_eval_objective(struct bneck_model *md, double rate_bps,
			 struct bneck_eval *ev)
{
	static const double node[2] = { -BNECK_GH3_NODE, BNECK_GH3_NODE };
	struct bneck_eval side;
	bool stepped;
	double t;
	int err;

	if (md->x->loss_model == BNECK_LOSS_SPREAD)
		return eval_spread(md, rate_bps, ev);
	md->z = 0.0;
	err = eval_rate(md, rate_bps, ev);
	if (err || !md->expect)
		return err;
	err = eval_steps(md, rate_bps, &t, &stepped);
	if (err || stepped) {
		if (!err)
			ev->pt.time_s = t;
		return err;
	}
	t = BNECK_GH3_W_MID * ev->pt.time_s;
	for (int j = 0; j < 2 && !err; j++) {
		md->z = node[j];
		err = eval_rate(md, rate_bps, &side);
		t += BNECK_GH3_W_SIDE * side.pt.time_s;
	}
	md->z = 0.0;
	if (err)
		return err;
	ev->pt.time_s = t;
	return 0;
}

