// SPDX-License-Identifier: GPL-2.0-or-later
/* The receiver's cost per packet: the fit and the choice. See cost.h. */
#include "daemon/model/cost.h"

#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "daemon/model/busy.h"
#include "daemon/model/inputs.h"
#include "daemon/model/learn.h"
#include "solver/lsq.h"

static const char *const basis_names[] = {
	[COST_NONE] = "none",
	[COST_SATURATED] = "saturated",
	[COST_FIT] = "fit",
	[COST_LAST_FIT] = "last-fit",
	[COST_RATIO] = "ratio",
	[COST_KEPT_UP] = "kept-up",
	[COST_BUSY] = "busy",
};

const char *cost_basis_name(enum cost_basis b)
{
	if ((unsigned)b >= RXB_ARRAY_SIZE(basis_names))
		return "?";
	return basis_names[b];
}

/* The fit's terms: struct lsq's x_0, x_1, x_2. */
enum { FIT_W, FIT_P, FIT_Z };

/*
 * Fold an epoch (w wake-ups, p packets, z empty reads, t on-CPU ns) into the
 * fit after decaying it by @d. An epoch without packets, or with a count
 * that is not a count, adds nothing; empty reads not measured count as 0.
 */
static void fit_add(struct lsq *f, double d, double w, double p, double z, double t)
{
	lsq_decay(f, d);
	if (!isfinite(w) || !isfinite(p) || !isfinite(t) || w < 0 || !(p > 0) || t < 0)
		return;
	if (!isfinite(z) || z < 0)
		z = 0;
	lsq_add(f, (const double[LSQ_TERMS]){ w, p, z }, t, COST_FIT_MIN_EPOCHS);
}

/* b's standard error at most COST_FIT_MAX_REL_SE of @v (lsq_se()). */
static bool fit_coef_precise(const struct lsq *f, int k, double explained,
			     double var_v, double v)
{
	return lsq_se(f, k, explained, var_v) <= COST_FIT_MAX_REL_SE * v;
}

int cost_solve2(const struct lsq *f, double *a, double *b)
{
	static const int wp[2] = { FIT_W, FIT_P };
	double c[2], var[2], explained, var_b;
	int k = 2;

	*a = *b = NAN;
	if (!f->ok || lsq_solve2(f, FIT_W, FIT_P, COST_FIT_MIN_SPREAD, c, var))
		return -1;
	explained = lsq_explained(f, wp, 2, c);
	var_b = var[1];
	if (c[0] < 0) {
		c[0] = 0;
		lsq_solve1(f, FIT_P, &c[1], &var_b);
		explained = lsq_explained(f, &wp[1], 1, &c[1]);
		k = 1;
	}
	if (!(c[1] > 0) || !isfinite(c[0]) || !isfinite(c[1]))
		return -1;
	if (!fit_coef_precise(f, k, explained, var_b, c[1]))
		return -1;
	*a = c[0];
	*b = c[1];
	return 0;
}

/* The three-term fit solved, before its checks. */
struct fit3 {
	double a, b, e;		/* a: NaN without the wake-up term, 0 if negative */
	double var_b, var_e;	/* (M^-1)_bb, (M^-1)_ee */
	double explained;	/* the part of sum t^2 the fit explains */
	int k;			/* terms */
};

/*
 * Keep a solution of @k terms whose last two are p and z (b and e; a
 * before them when k is 3) into @s.
 */
static void fit3_keep(struct fit3 *s, const struct lsq *f, const int *terms, int k,
		      const double *x, const double *var)
{
	int ib = k - 2;

	s->b = x[ib];
	s->e = x[ib + 1];
	s->explained = lsq_explained(f, terms, k, x);
	s->var_b = var[ib];
	s->var_e = var[ib + 1];
	s->k = k;
}

/*
 * t = a w + b p + e z into @s; t = b p + e z when the wake-ups are too
 * rare to separate or a comes out negative. 0, or -1 with the reason.
 */
static int solve3_terms(const struct lsq *f, struct fit3 *s, char *why, size_t len)
{
	static const char *const term[] = { "wake-ups", "packets", "empty reads" };
	static const int all[3] = { FIT_W, FIT_P, FIT_Z }, pz[2] = { FIT_P, FIT_Z };
	double x[3], var[3];
	int bad;

	s->a = NAN;
	if (f->xx[FIT_W][FIT_W] > 0) {
		if (lsq_solve(f, all, 3, COST_FIT_MIN_SPREAD, x, var, &bad)) {
			if (!(f->x[FIT_W] <= COST_FIT_RARE_WAKEUPS * f->x[FIT_Z])) {
				if (why)
					snprintf(why, len, "%s not separable from the other terms",
						 term[all[bad]]);
				return -1;
			}
			/* A polling receiver's few wake-ups: without them. */
		} else if (x[0] >= 0) {
			s->a = x[0];
			fit3_keep(s, f, all, 3, x, var);
			return 0;
		} else {
			/* Negative a: not physical, the fit without it (a = 0). */
			s->a = 0;
		}
	}
	if (lsq_solve(f, pz, 2, COST_FIT_MIN_SPREAD, x, var, &bad)) {
		if (why)
			snprintf(why, len, "%s not separable from %s", term[pz[bad]],
				 term[pz[1 - bad]]);
		return -1;
	}
	fit3_keep(s, f, pz, 2, x, var);
	return 0;
}

/* cost_solve3()'s checks of a solution: 0, -1 or -2 (e alone). */
static int solve3_check(const struct lsq *f, const struct fit3 *s, double *b, double *e,
			char *why, size_t len)
{
	if (!(s->b > 0) || s->e < 0) {
		if (why)
			snprintf(why, len, "%s", !(s->b > 0) ? "packet cost not positive" :
				 "negative cost per empty read");
		return -1;
	}
	if (!fit_coef_precise(f, s->k, s->explained, s->var_b, s->b)) {
		if (why)
			snprintf(why, len, "packet cost uncertain: standard error above "
				 "%.0f %% of %.0f ns", 100 * COST_FIT_MAX_REL_SE, s->b);
		/*
		 * A receiver that spins most of its time leaves its packets
		 * a small part of the on-CPU time to explain, so b can stay
		 * uncertain for as long as it keeps polling while e, the
		 * cost of what fills the rest, is well known. e alone takes
		 * the spin out of the saturated epochs (busy_add()).
		 */
		if (s->e > 0 && fit_coef_precise(f, s->k, s->explained, s->var_e, s->e)) {
			*e = s->e;
			return -2;
		}
		return -1;
	}
	*b = s->b;
	*e = s->e;
	return 0;
}

int cost_solve3(const struct lsq *f, double *a, double *b, double *e,
		char *why, size_t len)
{
	struct fit3 s;
	int ret;

	*a = *b = *e = NAN;
	if (why && len)
		why[0] = '\0';
	if (!f->ok || !(f->xx[FIT_P][FIT_P] > 0)) {
		if (why)
			snprintf(why, len, "too few epochs");
		return -1;
	}
	if (!(f->xx[FIT_Z][FIT_Z] > 0)) {
		if (why)
			snprintf(why, len, "no empty reads");
		return -1;
	}
	if (solve3_terms(f, &s, why, len))
		return -1;
	ret = solve3_check(f, &s, b, e, why, len);
	if (!ret)
		*a = s.a;
	return ret;
}

void cost_fit_init(struct cost_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->spin_e_ns = NAN;
}

void cost_fit_add(struct cost_fit *f, double d, double w, double p, double z, double t)
{
	double fa, fb, fe;

	fit_add(&f->sums, d, w, p, z, t);
	if (!cost_solve2(&f->sums, &fa, &fb)) {
		f->a_ns = fa;
		f->b_ns = fb;
		f->known = true;
	}
	switch (cost_solve3(&f->sums, &fa, &fb, &fe, NULL, 0)) {
	case 0:
		f->a3_ns = fa;
		f->b3_ns = fb;
		f->e3_ns = fe;
		f->known3 = true;
		f->spin_e_ns = fe;
		break;
	case -2:
		f->spin_e_ns = fe;
		break;
	}
}

void cost_fit_decay(struct cost_fit *f, double d)
{
	lsq_decay(&f->sums, d);
}

/* Why the receiver's cost is not known: the most specific reason first. */
static const char *no_cost_why(const struct learn *l, const struct rxb_epoch *e,
			       uint16_t port)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);

	if (e && !(e->probes & RXB_PROBE_SOCKQ))
		return "socket not measured: the socket probe is not loaded";
	if (e && !(e->probes & RXB_PROBE_SCHED))
		return "receiver CPU time not measured: the scheduler probe is not loaded";
	if (s && !s->counts_valid)
		return "socket counters not measured this epoch";
	if (l->origin == VALUE_MISSING)
		return "no traffic seen on the port yet";
	return "too few packets measured";
}

/* The fit's other terms for a why: " + A ns/wake-up[ + E ns/empty read]". */
static void fit_terms(char *buf, size_t size, double a, double e)
{
	int n = 0;

	buf[0] = '\0';
	if (isfinite(a))
		n = snprintf(buf, size, " + %.0f ns/wake-up", a);
	if (isfinite(e) && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " + %.0f ns/empty read", e);
}

/*
 * With @depth ([model] queue_depth_cost): the kept-up cost (in @b already)
 * when it and the saturated one were both measured at about the present
 * load and it is the lower, the saturated one going to
 * cpu_ns_per_pkt_full for the rates that overflow the queue. 0 if so.
 */
static int choose_kept_up(bool depth, double now, double sat, double sat_load,
			  const char *terms, double ratio, enum value_src src,
			  struct inputs_stage_b *b)
{
	double kept = b->cpu_ns_per_pkt_kept_up, kept_load = b->kept_up_load;

	if (!depth || !(kept > 0) || !(kept < sat) || !isfinite(now) ||
	    !(fabs(now - kept_load) <= BUSY_MAX_DLOAD))
		return -1;
	value_set(&b->cpu_ns_per_pkt, kept, src);
	b->cpu_ns_per_pkt_basis = COST_KEPT_UP;
	b->cpu_ns_per_pkt_full = sat;
	if (isfinite(b->cpu_ns_per_pkt_fit))
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "kept up at #C+#I %.1f; saturated %.0f once overflowed, at %.1f "
			 "(fit %.0f ns/pkt%s, ratio %.0f)", kept_load, sat, sat_load,
			 b->cpu_ns_per_pkt_fit, terms, ratio);
	else
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "kept up at #C+#I %.1f; saturated %.0f once overflowed, at %.1f "
			 "(no fit yet, ratio %.0f)", kept_load, sat, sat_load, ratio);
	return 0;
}

/*
 * Is the receiver's on-CPU time too much spin to be charged to its
 * packets: COST_RATIO_MAX_EMPTY_READS empty reads per packet or more over
 * the fit's epochs (a busy-polling one), or a spin known from e to be
 * COST_FIT_MAX_SPIN of that time (@spin_share, NaN when e is not known)?
 */
static bool spins(const struct learn *l, double spin_share)
{
	return (l->cost.sums.x[FIT_P] > 0 &&
		l->cost.sums.x[FIT_Z] >= COST_RATIO_MAX_EMPTY_READS * l->cost.sums.x[FIT_P]) ||
	       spin_share >= COST_FIT_MAX_SPIN;
}

/* What cost_choose() weighs. */
struct pick {
	double ns;		/* the ratio, on-CPU ns / packet */
	double sat, sat_load;	/* the saturated cost and its load, NaN */
	double a, b, e;		/* the fit used, NaN when none */
	char terms[64];		/* its terms but b, for the why */
	bool spin;		/* spins(): no two-term fit nor ratio */
	enum value_src src;
};

/* Every estimate beside the one chosen, before any is. */
static void report_estimates(struct inputs_stage_b *b, const struct pick *p,
			     double kept, double kept_load)
{
	b->cpu_ns_per_pkt_ratio = p->ns > 0 ? p->ns : NAN;
	b->cpu_ns_per_wakeup = NAN;
	b->cpu_ns_per_pkt_fit = NAN;
	b->cpu_ns_per_pkt_saturated = p->sat > 0 ? p->sat : NAN;
	b->saturated_load = p->sat > 0 ? p->sat_load : NAN;
	b->cpu_ns_per_pkt_kept_up = kept > 0 ? kept : NAN;
	b->kept_up_load = kept > 0 ? kept_load : NAN;
	b->cpu_ns_per_pkt_full = NAN;
	b->cpu_ns_per_pkt_basis = COST_NONE;
	b->cpu_ns_per_empty_read = NAN;
	b->ovf_pkts_per_wakeup = NAN;
	b->fit_wake_share_ns = NAN;
	b->cost_fit_terms = 0;
	b->spin_share = NAN;
	b->cost_fit_note[0] = '\0';
}

/*
 * Which fit gives the cost: the present three-term one, the last one when
 * the receiver spins, the present two-term one, the last separable one,
 * or none (COST_RATIO) - into @b's basis and terms, the fit into @p.
 */
static void pick_fit(const struct learn *l, struct pick *p, struct inputs_stage_b *b)
{
	if (!cost_solve3(&l->cost.sums, &p->a, &p->b, &p->e, b->cost_fit_note,
			 sizeof(b->cost_fit_note))) {
		/* Three terms: the spin on the empty socket is not the packets'. */
		b->cpu_ns_per_pkt_basis = COST_FIT;
		b->cost_fit_terms = 3;
		b->spin_share = p->e * l->cost.sums.x[FIT_Z] / l->cost.sums.y;
	} else if (l->cost.known3 && b->spin_share >= COST_FIT_MAX_SPIN) {
		/*
		 * The receiver spins (e x empty reads a large share of its
		 * on-CPU time) but the recent epochs cannot separate the three
		 * terms: a busy-polling receiver at a steady rate turns its
		 * loop about as often per packet in every epoch. The two-term
		 * fit would charge the spin to the packets; keep the last
		 * three-term fit, as the last separable fit is kept below.
		 */
		p->a = l->cost.a3_ns;
		p->b = l->cost.b3_ns;
		p->e = l->cost.e3_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 3;
	} else if (!p->spin && !cost_solve2(&l->cost.sums, &p->a, &p->b)) {
		b->cpu_ns_per_pkt_basis = COST_FIT;
		b->cost_fit_terms = 2;
	} else if (!p->spin && l->cost.known) {
		/*
		 * The recent epochs all had about the same packets per
		 * wake-up (a steady low rate), which decays the fit's spread
		 * below separability. The per-packet cost is the receiver's
		 * code on this CPU, not the rate; the ratio would charge each
		 * packet its share of a wake-up again (at 4 packets per
		 * wake-up, a / 4: more than b itself). Keep the last
		 * separable fit.
		 */
		p->a = l->cost.a_ns;
		p->b = l->cost.b_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 2;
	} else if (l->cost.known3) {
		p->a = l->cost.a3_ns;
		p->b = l->cost.b3_ns;
		p->e = l->cost.e3_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 3;
	} else {
		b->cpu_ns_per_pkt_basis = COST_RATIO;
	}
}

/* The fit's numbers into @b, and its terms but b into p->terms. */
static void report_fit(struct pick *p, struct inputs_stage_b *b)
{
	if (b->cpu_ns_per_pkt_basis == COST_RATIO)
		return;
	b->cpu_ns_per_pkt_fit = p->b;
	b->cpu_ns_per_wakeup = p->a;
	if (b->cost_fit_terms == 3) {
		b->cpu_ns_per_empty_read = p->e;
		fit_terms(p->terms, sizeof(p->terms), p->a, p->e);
	} else {
		fit_terms(p->terms, sizeof(p->terms), p->a, NAN);
	}
}

/*
 * A saturated receiver pays no wake-ups: its cost per packet is what
 * sets the capacity. Measured at another load it is not used: the
 * cost depends on the co-runners (BUSY_MAX_DLOAD, busy_add()). True when
 * the saturated cost (or the kept-up one, choose_kept_up()) was chosen.
 */
static bool choose_saturated(const struct pick *p, bool depth, double now,
			     struct inputs_stage_b *b)
{
	if (!(p->sat > 0 && isfinite(now) && fabs(now - p->sat_load) <= BUSY_MAX_DLOAD))
		return false;
	if (!choose_kept_up(depth, now, p->sat, p->sat_load, p->terms, p->ns, p->src, b))
		return true;
	value_set(&b->cpu_ns_per_pkt, p->sat, p->src);
	b->cpu_ns_per_pkt_basis = COST_SATURATED;
	if (isfinite(p->b))
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "saturated at #C+#I %.1f (fit %.0f ns/pkt%s, ratio %.0f)",
			 p->sat_load, p->b, p->terms, p->ns);
	else
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "saturated at #C+#I %.1f (no fit yet, ratio %.0f)", p->sat_load, p->ns);
	return true;
}

/*
 * The fit's b leaves the wake-ups out, as a receiver that never sleeps
 * does. One whose socket overflows while it still wakes - its co-runners
 * take the CPU in turns of milliseconds (niced, quota-limited, part-time)
 * and it empties its queue between them - pays them where its capacity is
 * decided: a per wake-up over the packets each wake-up dequeued in the
 * overflowing epochs. 0 when it never slept there, NaN before such epochs.
 */
static double wake_share_ns(const struct learn *l, double a_ns)
{
	const struct ewma_ratio *r = &l->pkts_per_wakeup_ovf;

	if (!(a_ns > 0) || !(r->num >= COST_OVF_MIN_PKTS))
		return NAN;
	return a_ns * r->den / r->num;
}

/* The cost from b of the fit (COST_FIT or COST_LAST_FIT), with the
 * wake-ups' share where the socket overflowed. */
static void choose_fit(const struct learn *l, const struct pick *p, struct inputs_stage_b *b)
{
	const struct ewma_ratio *r = &l->pkts_per_wakeup_ovf;
	double w = wake_share_ns(l, p->a);
	char share[64] = "";

	if (isfinite(w)) {
		/* den 0: it never slept while overflowing (a batch of K). */
		b->ovf_pkts_per_wakeup = r->den > 0 ? r->num / r->den : INFINITY;
		b->fit_wake_share_ns = w;
		snprintf(share, sizeof(share), " + %.0f: a at %.0f pkts/wake-up overflowing",
			 w, b->ovf_pkts_per_wakeup);
	}
	value_set(&b->cpu_ns_per_pkt, isfinite(w) ? p->b + w : p->b, p->src);
	snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
		 "marginal: %.0f ns/pkt%s%s%s (ratio %.0f)", p->b, p->terms,
		 b->cpu_ns_per_pkt_basis == COST_LAST_FIT ? ", last separable fit" : "",
		 share, p->ns);
}

/* Without a saturated cost: b of the fit, else the ratio, unless it spins. */
static void choose_marginal(const struct learn *l, const struct pick *p,
			    struct inputs_stage_b *b)
{
	char other[64] = "";
	size_t len;

	if (p->sat > 0)
		snprintf(other, sizeof(other), "; saturated %.0f at #C+#I %.1f not used",
			 p->sat, p->sat_load);
	switch (b->cpu_ns_per_pkt_basis) {
	case COST_FIT:
	case COST_LAST_FIT:
		choose_fit(l, p, b);
		break;
	default:
		if (p->spin) {
			b->cpu_ns_per_pkt_basis = COST_NONE;
			value_missing(&b->cpu_ns_per_pkt,
				      "spin, not packets: %.1f empty reads per packet "
				      "(ratio %.0f); needs a fit that separates them or "
				      "a saturated epoch%s",
				      l->cost.sums.x[FIT_Z] / l->cost.sums.x[FIT_P], p->ns, other);
			return;
		}
		value_set(&b->cpu_ns_per_pkt, p->ns, p->src);
		rxb_strlcpy(b->cpu_ns_per_pkt.why,
			    "ratio: wake-up and packet costs not separable yet",
			    sizeof(b->cpu_ns_per_pkt.why));
		break;
	}
	len = strlen(b->cpu_ns_per_pkt.why);
	if (other[0] && len < sizeof(b->cpu_ns_per_pkt.why))
		rxb_strlcpy(b->cpu_ns_per_pkt.why + len, other,
			    sizeof(b->cpu_ns_per_pkt.why) - len);
}

/*
 * cpu_ns_per_pkt: the saturated cost when it was measured at about the
 * present load (or the kept-up one below it, choose_kept_up()), else b of
 * the fit (or of the last separable fit), else the ratio; cost_cap() may
 * lower it after. The why says which and gives the others beside it.
 */
void cost_choose(const struct learn *l, const struct rxb_epoch *e, uint16_t port,
		 enum value_src src, bool depth, struct inputs_stage_b *b)
{
	struct pick p = { .a = NAN, .b = NAN, .e = NAN, .src = src };
	double kept_load, kept = busy_sums_value(&l->busy.kept, &kept_load);

	p.ns = ewma_ratio_value(&l->cpu_ns_per_pkt);
	p.sat = busy_sums_value(&l->busy.sat, &p.sat_load);
	report_estimates(b, &p, kept, kept_load);
	if (learn_stream_only(l)) {
		value_missing(&b->cpu_ns_per_pkt,
			      "no datagrams: the port's sockets are %s (protocol %u), whose "
			      "packets are coalesced segments; the model is of a UDP receiver",
			      l->other_ipproto == IPPROTO_TCP ? "TCP" : "not UDP",
			      l->other_ipproto);
		return;
	}
	if (!(p.ns > 0)) {
		value_missing(&b->cpu_ns_per_pkt, "%s", no_cost_why(l, e, port));
		return;
	}
	if (isfinite(l->cost.spin_e_ns) && l->cost.sums.y > 0)
		b->spin_share = l->cost.spin_e_ns * l->cost.sums.x[FIT_Z] / l->cost.sums.y;
	/*
	 * A spinning receiver's two-term fits (the present one and the
	 * last) put the spin on its packets and its few wake-ups: a b
	 * several times the packets' cost, milliseconds per wake-up, and a
	 * rate as many times too low. Like the ratio (below), they are then
	 * no cost.
	 */
	p.spin = spins(l, b->spin_share);
	pick_fit(l, &p, b);
	report_fit(&p, b);
	if (choose_saturated(&p, depth, inputs_receiver_load(b), b))
		return;
	choose_marginal(l, &p, b);
}

/*
 * Hold the cost to what the receiver has been seen to pay while it kept
 * up (struct busy.all_in): a cost above that is one it has beaten, at
 * this load, with its wake-ups paid on top. Needed because the estimate
 * it caps can rest on one epoch and then never be corrected: a single
 * saturated epoch whose cost came out high gives a rate below what the
 * receiver drains, so no transfer at that rate overflows again to bring
 * in a better one, while the busy epochs without loss keep showing the
 * receiver doing better.
 */
void cost_cap(const struct learn *l, struct inputs_stage_b *b)
{
	double load, v = busy_sums_value(&l->busy.all_in, &load), now = inputs_receiver_load(b);
	char was[VALUE_WHY_LEN];
	int n;

	b->cpu_ns_per_pkt_busy = v > 0 ? v : NAN;
	b->busy_load = v > 0 ? load : NAN;
	b->cpu_ns_per_pkt_capped = NAN;
	if (!(v > 0) || l->busy.all_in.taken < COST_CAP_MIN_EPOCHS || !isfinite(now) ||
	    !(fabs(now - load) <= BUSY_MAX_DLOAD) ||
	    b->cpu_ns_per_pkt.src == VALUE_MISSING || !(b->cpu_ns_per_pkt.v > v))
		return;
	b->cpu_ns_per_pkt_capped = b->cpu_ns_per_pkt.v;
	rxb_strlcpy(was, b->cpu_ns_per_pkt.why, sizeof(was));
	b->cpu_ns_per_pkt.v = v;
	b->cpu_ns_per_pkt_basis = COST_BUSY;
	/* The old why goes last: the estimate that was capped and its own why. */
	n = snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
		     "busy, kept up at #C+#I %.1f: %.0f ns/pkt all in, below %.0f, ",
		     load, v, b->cpu_ns_per_pkt_capped);
	if (n > 0 && (size_t)n < sizeof(b->cpu_ns_per_pkt.why))
		rxb_strlcpy(b->cpu_ns_per_pkt.why + n, was,
			    sizeof(b->cpu_ns_per_pkt.why) - (size_t)n);
}
