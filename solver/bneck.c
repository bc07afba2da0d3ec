// SPDX-License-Identifier: GPL-2.0-or-later
/* Effective bottleneck rate: argmin of T(B) over the sending rate. See bneck.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/bneck.h"
#include "solver/bulkq.h"
#include "solver/lnmath.h"
#include "solver/spread.h"

#define GOLDEN_ITERS	60
#define REFINE_REL_WIDTH 1e-7
/* Below this many packets lost per file, burst absorption is not computed. */
#define BURST_MIN_LOST_PKTS 1e-6
/* The least share of its rate interrupts leave a stage's server. */
#define IRQ_MIN_SHARE 0.05
/* The largest mu_rel_sd taken: beyond it the rate is not a measurement. */
#define MU_REL_SD_MAX 1.0
/*
 * Three-point Gauss-Hermite rule for E[f(Z)], Z standard normal: nodes 0
 * and +-sqrt(3), weights 2/3 and 1/6. Exact for polynomials of degree 5;
 * T(B) is a step function of the rate factor near an edge, so what it
 * buys is a 1-in-6 weight on a drain sqrt(3) sd slow, which is what moves
 * the rate off the edge (docs/model.md §3.3).
 */
#define GH3_NODE	1.7320508075688772
#define GH3_W_MID	(2.0 / 3.0)
#define GH3_W_SIDE	(1.0 / 6.0)
/*
 * The expected time is searched on this many rates around the plain
 * optimum (robust()), then refined to this relative width: each point
 * costs three evaluations, and at K = 29000 (a 64 MiB buffer) one costs
 * 0.3-0.6 ms.
 */
#define ROBUST_POINTS	32
#define ROBUST_REL_WIDTH 1e-4

int bneck_ws_init(struct bneck_ws *ws, uint32_t max_points)
{
	memset(ws, 0, sizeof(*ws));
	if (max_points < 2)
		return -EINVAL;
	ws->curve = calloc(max_points, sizeof(*ws->curve));
	if (!ws->curve)
		return -ENOMEM;
	ws->cap = max_points;
	return 0;
}

void bneck_ws_finish(struct bneck_ws *ws)
{
	free(ws->curve);
	free(ws->qwork);
	memset(ws, 0, sizeof(*ws));
}

const char *bneck_loss_name(enum bneck_loss m)
{
	switch (m) {
	case BNECK_LOSS_QUEUE:
		return "queue";
	case BNECK_LOSS_SPREAD:
		return "spread";
	}
	return "?";
}

const char *bneck_rounds_name(enum bneck_rounds r)
{
	switch (r) {
	case BNECK_ROUNDS_BURST:
		return "burst";
	case BNECK_ROUNDS_SEED:
		return "seed";
	}
	return "?";
}

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

static int check_inputs(const struct rxb_stage_inputs *st, uint32_t nstages,
			const struct bneck_xfer *x)
{
	if (nstages < 1 || nstages > BNECK_MAX_STAGES)
		return -EINVAL;
	for (uint32_t i = 0; i < nstages; i++) {
		if (!pos_finite(st[i].mu_net_per_s) || st[i].queue_pkts < 1 ||
		    st[i].batch_pkts < 1)
			return -EINVAL;
		if (!(st[i].vacation_s >= 0.0) || !isfinite(st[i].vacation_s) ||
		    (st[i].vacation_s > 0.0 &&
		     !(st[i].vacation_period_s > st[i].vacation_s &&
		       isfinite(st[i].vacation_period_s))))
			return -EINVAL;
		if (!(st[i].irq_ns_per_pkt >= 0.0) || !isfinite(st[i].irq_ns_per_pkt))
			return -EINVAL;
		if (!(st[i].mu_rel_sd >= 0.0) || !(st[i].mu_rel_sd <= MU_REL_SD_MAX))
			return -EINVAL;
		if (!(st[i].mu_net_full_per_s >= 0.0) || !isfinite(st[i].mu_net_full_per_s) ||
		    st[i].mu_net_full_per_s > st[i].mu_net_per_s)
			return -EINVAL;
		if (st[i].load_independent)
			continue;
		if (!pos_finite(st[i].mu_pio_per_s) ||
		    !pos_finite(st[i].mu_disk_per_s) ||
		    !(st[i].cpu_bound >= 0.0) || !(st[i].io_bound >= 0.0))
			return -EINVAL;
	}
	if (!pos_finite(x->payload_bytes) || !pos_finite(x->file_bytes) ||
	    !(x->one_way_delay_s >= 0.0) || !isfinite(x->one_way_delay_s) ||
	    !pos_finite(x->min_rate_bps) || !pos_finite(x->line_rate_bps) ||
	    !(x->min_rate_bps < x->line_rate_bps) || x->points < 2 ||
	    !(x->loss_episode_pkts == 0.0 ||
	      (x->loss_episode_pkts >= 1.0 && isfinite(x->loss_episode_pkts))) ||
	    (x->rounds != BNECK_ROUNDS_BURST && x->rounds != BNECK_ROUNDS_SEED) ||
	    (x->loss_model != BNECK_LOSS_QUEUE && x->loss_model != BNECK_LOSS_SPREAD))
		return -EINVAL;
	return 0;
}

/* Everything T(B) needs once the service rates are known. */
struct model {
	const struct rxb_stage_inputs *st;
	uint32_t nstages;
	double mu[BNECK_MAX_STAGES];
	double mu_on[BNECK_MAX_STAGES];	/* obey_pauses: between vacations */
	/* With mu_net_full_per_s: the service rate once overflowed, and the
	 * arrival rate above which it applies (0: never). */
	double mu_full[BNECK_MAX_STAGES];
	double keep_up_pkts_per_s[BNECK_MAX_STAGES];
	bool paused[BNECK_MAX_STAGES];	/* obey_pauses and this stage has vacations */
	const struct bneck_xfer *x;
	struct rbudp_params rb;
	double *qwork;		/* bulkq_burst() scratch (burst rounds) */
	double file_pkts;	/* packets in the file: the largest round */
	bool burst_always;	/* bulkq_burst() even where it cannot matter */
	bool expect;		/* eval_objective() takes the expectation */
	double max_rel_sd;	/* the largest mu_rel_sd; > 0: the rate is uncertain */
	double z;		/* the standard normal node eval_rate() is at */
	double worst_rel_err;
	uint32_t evaluations;
};

struct eval {
	struct bneck_point pt;
	double stage_loss[BNECK_MAX_STAGES];
	double stage_lambda[BNECK_MAX_STAGES];
	double stage_mu[BNECK_MAX_STAGES];	/* the rate its queue was served at */
	double send_frac;	/* of the time the sender sends (obey_pauses) */
	double stage_absorb[BNECK_MAX_STAGES];
	double stage_meanq[BNECK_MAX_STAGES];
	struct rbudp_time t;
};

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
static bool burst_matters(const struct model *md, bool vac_wins, double loss)
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
 * lambda x irq_ns up to 0.4 at every #C (docs/e2e.md §5.4), far past the
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

/*
 * The factor on stage @i's service rates at the node md->z: e^(z sd), a
 * lognormal with median 1. Scaling the rate where the stage keeps up by
 * it too is exact without interrupts and close with them.
 */
static double stage_scale(const struct model *md, uint32_t i)
{
	if (md->z == 0.0 || !(md->st[i].mu_rel_sd > 0.0))
		return 1.0;
	return exp(md->z * md->st[i].mu_rel_sd);
}

/* Is stage @i a fluid queue with a spread drain (BNECK_LOSS_SPREAD)? */
static bool spread_stage(const struct model *md, uint32_t i)
{
	return md->x->loss_model == BNECK_LOSS_SPREAD && !md->st[i].load_independent;
}

/* T(B) and the figures behind it, every service rate at its node md->z. */
static int eval_rate(struct model *md, double rate_bps, struct eval *ev)
{
	double lambda = rate_bps / (8.0 * md->x->payload_bytes);
	double ln_loss = -INFINITY, ln_pass = 0.0;
	struct rbudp_stage rs[BNECK_MAX_STAGES];
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->send_frac = 1.0;
	for (uint32_t i = 0; i < md->nstages; i++) {
		double share = bneck_irq_share(lambda, md->st[i].irq_ns_per_pkt,
					       IRQ_MIN_SHARE);
		double f = stage_scale(md, i);
		/* Beyond what it keeps up with, the queue fills: the full rate. */
		double mu = f * (md->keep_up_pkts_per_s[i] > 0.0 &&
				 lambda > f * md->keep_up_pkts_per_s[i] ?
				 md->mu_full[i] : md->mu[i]);
		struct bulkq_params p = {
			.arrival_per_s = lambda,
			.service_per_s = share * (md->paused[i] ? f * md->mu_on[i] : mu),
			.queue_pkts = md->st[i].queue_pkts,
			.batch_pkts = md->st[i].batch_pkts,
			.rule = md->st[i].rule,
		};
		struct bulkq_burst_result br = { 0 };
		struct bulkq_result r;
		bool vac_wins;
		double vac;

		if (spread_stage(md, i)) {
			spread_fluid_loss(lambda, p.service_per_s * p.batch_pkts, &r);
		} else {
			err = bulkq_loss(&p, &r);
			if (err)
				return err;
		}
		/*
		 * A stage that loses more to its server's vacations than the
		 * bulk queue says: both describe the same CPU sharing, so the
		 * larger is the stage's loss (not their sum).
		 */
		if (md->paused[i]) {
			double frac;

			vac = paused_loss(&md->st[i], lambda,
					  p.service_per_s * md->st[i].batch_pkts, &frac);
			if (frac < ev->send_frac)
				ev->send_frac = frac;
		} else {
			vac = bneck_vacation_loss(lambda, md->st[i].queue_pkts,
						  md->st[i].vacation_s,
						  md->st[i].vacation_period_s);
		}
		vac_wins = vac > r.loss;
		if (vac_wins) {
			r.loss = vac;
			r.ln_loss = log(vac);
			r.pass = 1.0 - vac;
		}
		if (spread_stage(md, i)) {
			/* Above its drain a fluid queue ends every round full. */
			br.absorb_pkts = vac_wins || !(r.loss > 0.0) ? 0.0 :
					 md->st[i].queue_pkts;
		} else if (burst_matters(md, vac_wins, r.loss)) {
			err = bulkq_burst(&p, md->qwork, &br);
			if (err)
				return err;
			/*
			 * The vacation loss is per off window, each window
			 * starting from a drained queue: a round's burst gets
			 * no absorption beyond what l_vac already counts.
			 */
			if (vac_wins)
				br.absorb_pkts = 0.0;
		}
		ev->stage_lambda[i] = lambda;
		ev->stage_mu[i] = p.service_per_s;
		ev->stage_loss[i] = r.loss;
		ev->stage_absorb[i] = br.absorb_pkts;
		ev->stage_meanq[i] = br.mean_queue_pkts;
		rs[i].loss = r.loss;
		rs[i].pass = r.pass;
		rs[i].absorb_pkts = br.absorb_pkts;
		/* After the blast nothing arrives: it empties at its whole rate. */
		rs[i].drain_pkts_per_s = mu * md->st[i].batch_pkts;
		/* l = l_prev + l_i (1 - l_prev): lost here after passing so far. */
		ln_loss = ln_add(ln_loss, r.ln_loss + ln_pass);
		ln_pass += log(r.pass);
		lambda *= r.pass;	/* the next stage sees what passed */
		if (r.rel_err > md->worst_rel_err)
			md->worst_rel_err = r.rel_err;
	}
	if (ln_loss > 0.0)
		ln_loss = 0.0;	/* rounding */
	/* A sender that pauses blasts at rate_bps only while it sends. */
	if (md->x->rounds == BNECK_ROUNDS_BURST)
		err = rbudp_time_burst(&md->rb, rate_bps / 8.0 * ev->send_frac, rs,
				       md->nstages, &ev->t);
	else
		err = rbudp_time(&md->rb, rate_bps / 8.0 * ev->send_frac, ln_loss,
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
 * (spread_rule_build()): of the last spread stage with a spread, where
 * its drain falls to the arrivals, where the first blast starts to lose
 * (the drain below lambda (1 - K / n0)), where it loses one loss episode
 * and where the depth cost sets in.
 * Returns how many; 0 when no stage is spread.
 */
static uint32_t spread_breaks(const struct model *md, double rate_bps, double *brk)
{
	double lambda = rate_bps / (8.0 * md->x->payload_bytes);
	uint32_t n = 0;

	for (uint32_t i = md->nstages; i-- > 0;) {
		const struct rxb_stage_inputs *st = &md->st[i];
		double sd = st->mu_rel_sd, a = 1.0 - st->queue_pkts / md->file_pkts;
		double c = bneck_irq_share(lambda, st->irq_ns_per_pkt, IRQ_MIN_SHARE) *
			   md->mu[i] * st->batch_pkts;

		if (!spread_stage(md, i) || !(sd > 0.0))
			continue;
		brk[n++] = log(lambda / c) / sd;
		if (a > 0.0)
			brk[n++] = log(lambda * a / c) / sd;
		/* ... and where it loses one episode: a round is then certain. */
		a -= md->x->loss_episode_pkts / md->file_pkts;
		if (a > 0.0 && md->x->loss_episode_pkts > 1.0)
			brk[n++] = log(lambda * a / c) / sd;
		if (md->keep_up_pkts_per_s[i] > 0.0)
			brk[n++] = log(lambda / md->keep_up_pkts_per_s[i]) / sd;
		break;
	}
	return n;
}

/*
 * BNECK_LOSS_SPREAD: T(B), the loss, the first blast's loss and N_resend
 * expected over the spread factor by spread_rule_build()'s rule; the
 * stage figures at the median drain (z = 0).
 */
static int eval_spread(struct model *md, double rate_bps, struct eval *ev)
{
	double brk[SPREAD_MAX_BREAKS], t = 0.0, loss = 0.0, first = 0.0, nres = 0.0;
	struct spread_rule rule;
	struct eval node;
	uint32_t nb;
	int err;

	md->z = 0.0;
	err = eval_rate(md, rate_bps, ev);
	nb = spread_breaks(md, rate_bps, brk);
	if (err || nb == 0)
		return err;
	err = spread_rule_build(brk, nb, &rule);
	for (uint32_t j = 0; j < rule.n && !err; j++) {
		md->z = rule.z[j];
		err = eval_rate(md, rate_bps, &node);
		t += rule.w[j] * node.pt.time_s;
		loss += rule.w[j] * node.pt.loss;
		first += rule.w[j] * node.pt.first_loss;
		nres += rule.w[j] * node.pt.n_resend;
	}
	md->z = 0.0;
	if (err)
		return err;
	ev->pt.time_s = t;
	ev->pt.loss = fmin(loss, 1.0);
	ev->pt.ln_loss = log(ev->pt.loss);
	ev->pt.first_loss = fmin(first, 1.0);
	ev->pt.n_resend = nres;
	return 0;
}

/*
 * The objective at @rate_bps: with BNECK_LOSS_SPREAD eval_spread(); with md->expect, T(B) expected over the
 * stages' rate factors (struct rxb_stage_inputs.mu_rel_sd) by GH3_*,
 * everything in @ev but pt.time_s at the measured rates; else T(B).
 */
static int eval_objective(struct model *md, double rate_bps, struct eval *ev)
{
	static const double node[2] = { -GH3_NODE, GH3_NODE };
	struct eval side;
	double t;
	int err;

	if (md->x->loss_model == BNECK_LOSS_SPREAD)
		return eval_spread(md, rate_bps, ev);
	md->z = 0.0;
	err = eval_rate(md, rate_bps, ev);
	if (err || !md->expect)
		return err;
	t = GH3_W_MID * ev->pt.time_s;
	for (int j = 0; j < 2 && !err; j++) {
		md->z = node[j];
		err = eval_rate(md, rate_bps, &side);
		t += GH3_W_SIDE * side.pt.time_s;
	}
	md->z = 0.0;
	if (err)
		return err;
	ev->pt.time_s = t;
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
					 in->irq_ns_per_pkt, IRQ_MIN_SHARE) *
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
 * The stage's service rate between its vacations: the vacations are the
 * CPU-bound tasks' turns, so in between it runs without them (#C = 0).
 */
static int stage_on_service(const struct rxb_stage_inputs *in,
			    const struct bneck_xfer *x, const struct ctmc_opts *o,
			    double *mu_on)
{
	struct rxb_stage_inputs alone = *in;

	alone.cpu_bound = 0.0;
	return variant_service(&alone, x, o, mu_on, NULL);
}

/*
 * Golden-section search for the minimum of T on [a, b], starting from the
 * best point known so far; keeps the best evaluation in *best.
 */
static int refine(struct model *md, double a, double b, double rel_width,
		  struct eval *best)
{
	const double g = 0.6180339887498949;
	double c = b - g * (b - a), d = a + g * (b - a);
	struct eval ec, ed;
	int err;

	err = eval_objective(md, c, &ec);
	if (!err)
		err = eval_objective(md, d, &ed);
	for (int i = 0; !err && i < GOLDEN_ITERS; i++) {
		if (b - a <= rel_width * b)
			break;
		if (ec.pt.time_s <= ed.pt.time_s) {
			b = d;
			d = c;
			ed = ec;
			c = b - g * (b - a);
			err = eval_objective(md, c, &ec);
		} else {
			a = c;
			c = d;
			ec = ed;
			d = a + g * (b - a);
			err = eval_objective(md, d, &ed);
		}
	}
	if (err)
		return err;
	if (ec.pt.time_s < best->pt.time_s)
		*best = ec;
	if (ed.pt.time_s < best->pt.time_s)
		*best = ed;
	return 0;
}

/*
 * With an uncertain rate: the rate that minimises the expected time, from
 * the plain optimum @plain_bps. At each node the time is T(B) of a server
 * f times as fast, whose optimum lies near f x plain_bps; where the
 * three are unimodal their weighted sum has its minimum between the
 * smallest and the largest of theirs. So the expectation is searched on
 * ROBUST_POINTS rates over plain_bps e^(-+2 sqrt3 sd) (twice the nodes'
 * spread, for the scaling being approximate) within the sweep's range,
 * then refined around the best. *best gets the chosen evaluation.
 */
static int robust(struct model *md, double plain_bps, struct eval *best)
{
	double spread = exp(2.0 * GH3_NODE * md->max_rel_sd);
	double lo = fmax(md->x->min_rate_bps, plain_bps / spread);
	double hi = fmin(md->x->line_rate_bps, plain_bps * spread);
	double step = (hi - lo) / (ROBUST_POINTS - 1), rates[ROBUST_POINTS];
	uint32_t kbest = 0;
	struct eval ev;
	int err;

	best->pt.time_s = INFINITY;
	md->expect = true;
	for (uint32_t k = 0; k < ROBUST_POINTS; k++) {
		rates[k] = k + 1 == ROBUST_POINTS ? hi : lo + k * step;
		err = eval_objective(md, rates[k], &ev);
		if (err)
			return err;
		if (ev.pt.time_s < best->pt.time_s) {
			*best = ev;
			kbest = k;
		}
	}
	if (!isfinite(best->pt.time_s))
		return -EDOM;
	lo = rates[kbest ? kbest - 1 : 0];
	hi = rates[kbest + 1 < ROBUST_POINTS ? kbest + 1 : kbest];
	return hi > lo ? refine(md, lo, hi, ROBUST_REL_WIDTH, best) : 0;
}

/*
 * Everything eval_objective() needs: the inputs checked, the stages'
 * service rates (into res->stage[]), the queue scratch.
 */
static int model_setup(struct model *md, struct bneck_ws *ws,
		       const struct ctmc_opts *o, struct bneck_result *res)
{
	const struct rxb_stage_inputs *stages = md->st;
	const struct bneck_xfer *x = md->x;
	uint32_t nstages = md->nstages;
	int err;

	memset(res, 0, sizeof(*res));
	err = check_inputs(stages, nstages, x);
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
		if (x->obey_pauses && stages[i].vacation_s > 0.0) {
			err = stage_on_service(&stages[i], x, o, &md->mu_on[i]);
			if (err)
				return err;
			md->paused[i] = true;
		}
	}
	return 0;
}

int bneck_eval_at(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, double rate_bps, struct bneck_at *out)
{
	struct model md = { .st = stages, .nstages = nstages, .x = x };
	struct bneck_result res;
	struct eval ev;
	int err;

	memset(out, 0, sizeof(*out));
	if (!pos_finite(rate_bps))
		return -EINVAL;
	err = model_setup(&md, ws, o, &res);
	if (err)
		return err;
	md.expect = md.max_rel_sd > 0.0;
	err = eval_objective(&md, rate_bps, &ev);
	if (err)
		return err;
	out->pt = ev.pt;
	for (uint32_t i = 0; i < nstages; i++) {
		out->stage_arrival_per_s[i] = ev.stage_lambda[i];
		out->stage_service_per_s[i] = ev.stage_mu[i];
		out->stage_loss[i] = ev.stage_loss[i];
	}
	return 0;
}

int bneck_compute(struct bneck_ws *ws, const struct rxb_stage_inputs *stages,
		  uint32_t nstages, const struct bneck_xfer *x,
		  const struct ctmc_opts *o, struct bneck_result *res)
{
	struct model md = { .st = stages, .nstages = nstages, .x = x };
	struct eval ev, best = { .pt.time_s = INFINITY };
	uint32_t kbest = 0;
	double step, lo, hi;
	int err;

	err = model_setup(&md, ws, o, res);
	if (err)
		return err;

	step = (x->line_rate_bps - x->min_rate_bps) / (x->points - 1);
	for (uint32_t k = 0; k < x->points; k++) {
		double rate = k + 1 == x->points ? x->line_rate_bps
						 : x->min_rate_bps + k * step;

		err = eval_objective(&md, rate, &ev);
		if (err)
			return err;
		ws->curve[k] = ev.pt;
		if (ev.pt.time_s < best.pt.time_s) {
			best = ev;
			kbest = k;
		}
	}
	if (!isfinite(best.pt.time_s))
		return -EDOM;	/* nothing ever completes */
	res->line_time_s = ev.pt.time_s;
	res->line_loss = ev.pt.loss;

	lo = kbest ? ws->curve[kbest - 1].rate_bps : x->min_rate_bps;
	hi = kbest + 1 < x->points ? ws->curve[kbest + 1].rate_bps
				   : x->line_rate_bps;
	if (md.max_rel_sd > 0.0 && x->loss_model == BNECK_LOSS_QUEUE) {
		/*
		 * An uncertain rate: the plain optimum only centres robust().
		 * The expectation at the line rate, then the rate that
		 * minimises it.
		 */
		md.expect = true;
		err = eval_objective(&md, x->line_rate_bps, &ev);
		if (err)
			return err;
		res->line_time_s = ev.pt.time_s;
		err = robust(&md, best.pt.rate_bps, &best);
		if (err)
			return err;
	} else if (hi > lo) {
		err = refine(&md, lo, hi, REFINE_REL_WIDTH, &best);
		if (err)
			return err;
	}

	if (x->rounds == BNECK_ROUNDS_BURST) {
		/* The chosen point again, its queue figures computed in full. */
		md.burst_always = true;
		err = eval_objective(&md, best.pt.rate_bps, &best);
		if (err)
			return err;
	}
	res->rate_bps = best.pt.rate_bps;
	res->loss = best.pt.loss;
	res->ln_loss = best.pt.ln_loss;
	res->time_s = best.pt.time_s;
	res->pause_fraction = 1.0 - best.send_frac;
	res->breakdown = best.t;
	for (uint32_t i = 0; i < nstages; i++) {
		res->stage[i].arrival_per_s = best.stage_lambda[i];
		res->stage[i].loss = best.stage_loss[i];
		res->stage[i].absorb_pkts = best.stage_absorb[i];
		res->stage[i].mean_queue_pkts = best.stage_meanq[i];
	}
	res->loss_rel_err = md.worst_rel_err;
	res->evaluations = md.evaluations;
	res->npoints = x->points;
	res->curve = ws->curve;
	return 0;
}
