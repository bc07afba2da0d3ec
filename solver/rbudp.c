// SPDX-License-Identifier: GPL-2.0-or-later
/* RBUDP transfer time: seed eq. (2)-(3), and the burst round model. See rbudp.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "solver/rbudp.h"

/*
 * Payload of the resend blasts relative to S: sum_{i=1}^{n} l^i
 * = l (1 - l^n) / (1 - l), written with expm1 so that it stays accurate for
 * l -> 0 and l -> 1 (where it tends to n).
 */
static double resend_fraction(double ln_l, double n)
{
	if (n == 0.0 || ln_l == -INFINITY)
		return 0.0;
	return exp(ln_l) * expm1(n * ln_l) / expm1(ln_l);
}

/* A transfer that never completes: every remaining term is infinite. */
static void never_completes(struct rbudp_time *out)
{
	out->n_resend = INFINITY;
	out->resend_rounds = INFINITY;
	out->resend_pkts = INFINITY;
	out->resend_s = INFINITY;
	out->bitmap_s = INFINITY;
	out->time_s = INFINITY;
}

int rbudp_time(const struct rbudp_params *p, double rate_bytes_per_s,
	       double ln_loss, struct rbudp_time *out)
{
	double S = p->file_bytes, B = rate_bytes_per_s, tp = p->one_way_delay_s;
	double bitmap_s;

	memset(out, 0, sizeof(*out));
	if (!(S > 0.0) || !isfinite(S) || !(p->payload_bytes > 0.0) ||
	    !isfinite(p->payload_bytes) || !(tp >= 0.0) || !isfinite(tp) ||
	    !(B > 0.0) || !isfinite(B) || isnan(ln_loss) || ln_loss > 0.0)
		return -EINVAL;
	out->first_s = tp + S / B;
	bitmap_s = S / (8.0 * p->payload_bytes * B) + tp;
	if (ln_loss == 0.0) {
		never_completes(out);	/* everything is lost */
		return 0;
	}
	if (ln_loss == -INFINITY || p->payload_bytes >= S)
		out->n_resend = 0.0;
	else
		out->n_resend = log(p->payload_bytes / S) / ln_loss;
	out->resend_rounds = ceil(out->n_resend);
	out->resend_pkts = S / p->payload_bytes *
			   resend_fraction(ln_loss, out->resend_rounds);
	out->resend_s = out->n_resend * tp + out->resend_pkts * p->payload_bytes / B;
	out->bitmap_s = (out->n_resend + 1.0) * bitmap_s;
	out->time_s = out->first_s + out->resend_s + out->bitmap_s;
	return 0;
}

/* ------------------------------------------------------- burst rounds -- */

/* Steps of the closed-form jumps are capped here (rounds beyond 2^50 mean T = inf anyway). */
#define MAX_JUMP	0x1p50
/* Each loop turn advances at least one round; this many turns is a bug. */
#define MAX_TURNS	100000

/*
 * The affine piece of f around n: f = L n - c for n in (lo, ...]. On it the
 * time to empty the queues after a round of n is affine too: u n + v.
 */
struct piece {
	bool any;		/* some stage loses */
	double L, pass, c;	/* slope, 1 - slope, intercept (f = L n - c) */
	double lo;		/* below this the set of losing stages changes */
	double u, v;		/* drain seconds of a round of n: u n + v */
};

static struct piece piece_at(const struct rbudp_stage *st, unsigned ns, double n)
{
	/* Input of stage s: alpha n + beta, on the piece containing n. */
	double alpha = 1.0, beta = 0.0;
	struct piece pc = { .lo = -INFINITY };

	for (unsigned s = 0; s < ns; s++) {
		double in = alpha * n + beta, thr, d = st[s].drain_pkts_per_s;

		if (!(in * st[s].loss > st[s].absorb_pkts)) {
			/* It keeps (alpha n + beta) l of the round at the end. */
			if (d > 0.0) {
				pc.u += alpha * st[s].loss / d;
				pc.v += beta * st[s].loss / d;
			}
			continue;
		}
		/* Stage s loses (alpha n + beta) l - c, passes the rest, ends full. */
		if (d > 0.0)
			pc.v += st[s].absorb_pkts / d;
		pc.any = true;
		pc.L += alpha * st[s].loss;
		pc.c += st[s].absorb_pkts - beta * st[s].loss;
		thr = (st[s].absorb_pkts / st[s].loss - beta) / alpha;
		if (thr > pc.lo)
			pc.lo = thr;
		beta = beta * st[s].pass + st[s].absorb_pkts;
		alpha *= st[s].pass;
	}
	pc.pass = alpha;
	return pc;
}

double rbudp_round_lost(const struct rbudp_stage *st, unsigned nstages,
			double n_pkts)
{
	double lost = 0.0, in = n_pkts;

	for (unsigned s = 0; s < nstages; s++) {
		double x = in * st[s].loss - st[s].absorb_pkts;

		if (x > 0.0) {
			lost += x;
			in -= x;
		}
	}
	return lost;
}

static double ln_slope(const struct piece *pc)
{
	return pc->L < 0.5 ? log(pc->L) : log1p(-pc->pass);
}

/*
 * Rounds x_1..x_k of the piece from x (all of them on it): their sum.
 * x_j = L^j (x + a) - a.
 */
static double piece_sum(const struct piece *pc, double ln_L, double x, double k,
			double *x_k)
{
	double a = pc->c / pc->pass, Lk = exp(k * ln_L);

	*x_k = Lk * (x + a) - a;
	return (x + a) * pc->L * -expm1(k * ln_L) / pc->pass - k * a;
}

/* The number of steps j >= 1 with x_j >= theta (x >= theta), possibly +inf. */
static double steps_above(const struct piece *pc, double ln_L, double x, double theta)
{
	double a = pc->c / pc->pass;

	if (!(theta + a > 0.0))
		return INFINITY;
	return floor(log((theta + a) / (x + a)) / ln_L);
}

/* The rounds' sums; drain_s is the drain of every round, the first included. */
struct burst_sums {
	double rounds, n_resend, pkts, drain_s;
};

/*
 * @k rounds with inputs x, x_1, .., x_{k-1} (@sum_in their total) on the
 * piece: their drain.
 */
static double piece_drain(const struct piece *pc, double sum_in, double k)
{
	return pc->u * sum_in + pc->v * k;
}

/*
 * @m packets per loss episode (>= 1): a round whose input x_j is below m
 * happens with probability x_j / m, one at or above it certainly.
 */
static int burst_rounds(const struct rbudp_stage *st, unsigned ns, double n0,
			double m, struct burst_sums *out)
{
	double x = n0, R = 0.0, N = 0.0, P = 0.0, D = 0.0;

	for (int turn = 0; turn < MAX_TURNS; turn++) {
		struct piece pc = piece_at(st, ns, x);
		double ln_L, k, y, sum;

		if (!(x > 0.0))
			goto done;
		if (!pc.any) {
			D += piece_drain(&pc, x, 1.0);	/* the last round */
			goto done;	/* nothing more is lost */
		}
		ln_L = ln_slope(&pc);
		if (x >= m) {
			/* Full rounds while x_j >= max(lo, m). */
			k = steps_above(&pc, ln_L, x, fmax(pc.lo, m));
			if (k > MAX_JUMP)
				k = MAX_JUMP;
			if (k >= 2.0) {
				sum = piece_sum(&pc, ln_L, x, k - 1.0, &y);
				R += k - 1.0;
				N += k - 1.0;
				P += sum;
				D += piece_drain(&pc, x + sum - y, k - 1.0);
				x = y;
				if (!isfinite(P))
					goto done;
				continue;
			}
		} else {
			/*
			 * Below one episode every round adds x_j to the
			 * packets and x_j / m to the rounds.
			 */
			if (!(pc.c > 0.0) && !(pc.lo > 0.0)) {
				/* Geometric to the end: sum_{j>=1} x L^j. */
				sum = x * pc.L / pc.pass;
				N += sum / m;
				P += sum;
				D += pc.u * (x + sum);	/* v = 0: no stage absorbs here */
				goto done;
			}
			k = steps_above(&pc, ln_L, x, fmax(pc.lo, 0.0));
			if (k > MAX_JUMP)
				k = MAX_JUMP;
			if (k >= 2.0) {
				sum = piece_sum(&pc, ln_L, x, k - 1.0, &y);
				N += sum / m;
				P += sum;
				D += piece_drain(&pc, x + sum - y, k - 1.0);
				x = y;
				continue;
			}
		}
		/* One exact round. */
		y = rbudp_round_lost(st, ns, x);
		D += piece_drain(&pc, x, 1.0);
		if (y >= m) {
			R += 1.0;
			N += 1.0;
		} else {
			N += y / m;
		}
		P += y;
		x = y;
	}
	return -ERANGE;
done:
	out->rounds = R;
	out->n_resend = N;
	out->pkts = P;
	out->drain_s = D;
	return 0;
}

int rbudp_time_burst(const struct rbudp_params *p, double rate_bytes_per_s,
		     const struct rbudp_stage *st, unsigned nstages,
		     struct rbudp_time *out)
{
	double S = p->file_bytes, B = rate_bytes_per_s, tp = p->one_way_delay_s;
	struct burst_sums sums;
	double bitmap_s, n0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(S > 0.0) || !isfinite(S) || !(p->payload_bytes > 0.0) ||
	    !isfinite(p->payload_bytes) || !(tp >= 0.0) || !isfinite(tp) ||
	    !(B > 0.0) || !isfinite(B) || nstages < 1 || nstages > RBUDP_MAX_STAGES ||
	    !(p->loss_episode_pkts == 0.0 ||
	      (p->loss_episode_pkts >= 1.0 && isfinite(p->loss_episode_pkts))))
		return -EINVAL;
	for (unsigned s = 0; s < nstages; s++)
		if (!(st[s].loss >= 0.0 && st[s].loss <= 1.0) ||
		    !(st[s].pass >= 0.0 && st[s].pass <= 1.0) ||
		    !(fabs(st[s].loss + st[s].pass - 1.0) <= 1e-9) ||
		    !(st[s].absorb_pkts >= 0.0) || !isfinite(st[s].absorb_pkts) ||
		    !(st[s].drain_pkts_per_s >= 0.0) || !isfinite(st[s].drain_pkts_per_s))
			return -EINVAL;
	out->first_s = tp + S / B;
	bitmap_s = S / (8.0 * p->payload_bytes * B) + tp;
	for (unsigned s = 0; s < nstages; s++) {
		if (st[s].pass == 0.0) {
			/* A stage loses everything. */
			never_completes(out);
			return 0;
		}
	}
	n0 = fmax(S / p->payload_bytes, 1.0);
	err = burst_rounds(st, nstages, n0, fmax(p->loss_episode_pkts, 1.0), &sums);
	if (err)
		return err;
	out->resend_rounds = sums.rounds;
	out->n_resend = sums.n_resend;
	out->resend_pkts = sums.pkts;
	out->drain_s = sums.drain_s;
	out->resend_s = out->n_resend * tp + out->resend_pkts * p->payload_bytes / B;
	out->bitmap_s = (out->n_resend + 1.0) * bitmap_s;
	out->time_s = out->first_s + out->resend_s + out->bitmap_s + out->drain_s;
	return 0;
}
