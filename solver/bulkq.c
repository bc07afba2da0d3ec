// SPDX-License-Identifier: GPL-2.0-or-later
/* M/M[N]/1/K loss by the cut recursion, and as a general CTMC. See bulkq.h. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/bulkq.h"
#include "solver/lnmath.h"

#define RESCALE_ABOVE	0x1p+600
#define RESCALE_EXP	600
#define STACK_WINDOW	256
/* Consecutive ratios equal to this many ulps count as settled. */
#define SETTLED_EPS	(32.0 * DBL_EPSILON)

static int check_params(const struct bulkq_params *p)
{
	if (!(p->arrival_per_s >= 0.0) || !isfinite(p->arrival_per_s) ||
	    !(p->service_per_s > 0.0) || !isfinite(p->service_per_s) ||
	    p->queue_pkts < 1 || p->batch_pkts < 1 ||
	    (p->rule != RXB_BATCH_PARTIAL && p->rule != RXB_BATCH_STRICT))
		return -EINVAL;
	if (p->rule == RXB_BATCH_STRICT && p->batch_pkts > p->queue_pkts)
		return -EINVAL;	/* the server could never fire */
	return 0;
}

/* State of the downward recursion; values are stored times 2^-scale_exp. */
struct rec {
	double r;		/* mu / lambda */
	uint32_t K, N;
	double *win;		/* win[m % N] = pi_m for the N values above j */
	double S;		/* sum of the window */
	double sum_below;	/* sum of pi_m for j <= m < K */
	int64_t scale_exp;
};

static void rescale(struct rec *s)
{
	for (uint32_t i = 0; i < s->N; i++)
		s->win[i] = ldexp(s->win[i], -RESCALE_EXP);
	s->S = ldexp(s->S, -RESCALE_EXP);
	s->sum_below = ldexp(s->sum_below, -RESCALE_EXP);
	s->scale_exp += RESCALE_EXP;
}

static double window_sum(const struct rec *s)
{
	double sum = 0.0;

	for (uint32_t i = 0; i < s->N; i++)
		sum += s->win[i];
	return sum;
}

/*
 * ln of the strict rule's bottom states 0..N-2 once the window above them is
 * geometric: pi_i = r * sum_{m=N}^{i+N} pi_m with pi_m = pi_N rho^(N-m), so
 * their sum is r pi_N sum_{i=0}^{N-2} (N-1-i) rho^-i.
 */
static double ln_strict_bottom(double ln_r, double ln_pi_n, double ln_rho,
			       uint32_t N)
{
	double acc = -INFINITY;

	for (uint32_t i = 0; i + 2 <= N; i++)
		acc = ln_add(acc, log((double)(N - 1 - i)) - i * ln_rho);
	return ln_r + ln_pi_n + acc;
}

/*
 * The exact bottom of the strict rule (j = N-2 .. 0) from the window, which
 * holds pi_{N-1} .. pi_{2N-2}: prefix sums upwards, no subtraction.
 */
static void strict_bottom_exact(struct rec *s)
{
	double prefix = 0.0;

	for (uint32_t i = 0; i + 2 <= s->N; i++) {
		prefix += s->win[(s->N + i) % s->N];
		s->sum_below += s->r * prefix;
	}
}

/*
 * Where the walk down from K stopped, and what it knows of the rest: the
 * tests for an early stop watch the ratio of successive values.
 */
struct walk {
	double prev, last_ratio;	/* the last value and its ratio to the one before */
	uint32_t stable;		/* consecutive ratios within SETTLED_EPS */
	bool heavy;			/* stopped: the rest below heavy_bound */
	double heavy_bound;
	double tail_ln;			/* ln of the extrapolated rest, -inf if none */
	double extrap_err;
};

/* The window for @p (on @stack_win when it fits), holding pi_K = 1. */
static int rec_init(struct rec *s, const struct bulkq_params *p, double *stack_win)
{
	*s = (struct rec){ .K = p->queue_pkts, .N = p->batch_pkts,
			   .r = p->service_per_s / p->arrival_per_s, .S = 1.0 };
	if (!(s->r * s->N <= 1e100))
		return -ERANGE;
	if (s->N <= STACK_WINDOW) {
		s->win = stack_win;
	} else {
		s->win = malloc((size_t)s->N * sizeof(*s->win));
		if (!s->win)
			return -ENOMEM;
	}
	memset(s->win, 0, (size_t)s->N * sizeof(*s->win));
	s->win[s->K % s->N] = 1.0;	/* pi_K, unnormalised */
	return 0;
}

/*
 * One step down: pi_jj = r x the window's sum, stored in the slot of
 * pi_{jj+N} (0 above K), which *@evicted gets. Returns pi_jj.
 */
static double rec_step(struct rec *s, uint32_t jj, double *evicted)
{
	double v = s->r * s->S;

	*evicted = s->win[jj % s->N];
	s->win[jj % s->N] = v;
	/*
	 * Slide the window sum. The rounding of a sliding sum does not
	 * cancel out but drifts, and the drift would be multiplied into
	 * every later value, so the sum is recomputed from the window
	 * once per N steps (O(1) amortised), and whenever the
	 * subtraction would cancel.
	 */
	if (jj % s->N == 0 || *evicted > 0.5 * (s->S + v))
		s->S = window_sum(s);
	else
		s->S = s->S + v - *evicted;
	s->sum_below += v;
	return v;
}

/*
 * Heavy load (rN < 1): every later value is at most rN times the
 * window's maximum, so what is left is below N S rN / (1 - rN). True, with
 * that bound relative to the sum so far, once it is negligible.
 */
static bool heavy_rest(const struct rec *s, struct walk *w)
{
	double rn = s->r * s->N, rest;

	if (!(rn < 1.0))
		return false;
	rest = s->N * s->S * rn / (1.0 - rn);
	if (!(rest <= 0x1p-60 * s->sum_below))
		return false;
	w->heavy_bound = rest / s->sum_below;
	w->heavy = true;
	return true;
}

/*
 * The window is geometric with ratio rho, taken over a whole window to
 * average the rounding out. The rest pi_{jj-1} .. pi_lo is
 * pi_jj * sum_{k=1}^{c} rho^k (and the strict rule's bottom). A window
 * spanning more than a double's range (a long batch at a light load)
 * holds values the rescaling took below DBL_MIN, with their precision
 * gone: no extrapolation from those (the caller checks @evicted); and the
 * ratio in logs where v / evicted overflows.
 */
static void geometric_rest(const struct rec *s, double v, double evicted, uint32_t jj,
			   uint32_t lo, bool strict, struct walk *w)
{
	double ratio_n = v / evicted;
	double ln_rho = (isfinite(ratio_n) ? log(ratio_n) : log(v) - log(evicted)) / s->N;
	double ln_v = log(v) + s->scale_exp * M_LN2;
	uint32_t c = jj - lo;

	w->tail_ln = ln_v + ln_geom_sum(ln_rho, c);
	if (strict)
		w->tail_ln = ln_add(w->tail_ln,
				    ln_strict_bottom(log(s->r), ln_v + (double)(jj - s->N) * ln_rho,
						     ln_rho, s->N));
	w->extrap_err = 64.0 * DBL_EPSILON * c;
}

/*
 * Whether the values have settled into a geometric sequence, long enough
 * to extrapolate from pi_jj = @v (with @jj far enough above @lo and below
 * K for a whole window of settled ratios).
 */
static bool settled(const struct rec *s, struct walk *w, double v, double evicted,
		    uint32_t jj, uint32_t lo)
{
	double ratio = v / w->prev;

	if (fabs(ratio - w->last_ratio) <= SETTLED_EPS * ratio)
		w->stable++;
	else
		w->stable = 0;
	w->last_ratio = ratio;
	return w->stable >= s->N + 2 && (uint64_t)jj + s->N <= s->K &&
	       jj >= lo + 2 * s->N + 2 && evicted >= DBL_MIN;
}

/*
 * pi_K = 2^-scale_exp in stored units. With A = ln(sum below K / pi_K),
 * ln loss = -ln(1 + e^A) and pass = 1 / (1 + e^-A): both without
 * cancellation whatever the size of A.
 */
static int rec_result(const struct rec *s, const struct walk *w, struct bulkq_result *res)
{
	double ln_below = ln_add(log(s->sum_below) + s->scale_exp * M_LN2, w->tail_ln);

	res->ln_loss = -ln_1p_exp(ln_below);
	res->loss = exp(res->ln_loss);
	res->pass = sigmoid(ln_below);
	res->rel_err = (s->N + 3.0) * DBL_EPSILON * (res->steps + 1) +
		       w->extrap_err + w->heavy_bound;
	return isfinite(res->ln_loss) && isfinite(res->pass) ? 0 : -EDOM;
}

/*
 * Walk down from pi_K to pi_lo (below it the strict rule's bottom), or
 * until the rest is known without walking it (@allow_tail): what is below
 * negligible under heavy load, or the values geometric.
 */
static int rec_walk(struct rec *s, uint32_t lo, bool strict, bool allow_tail,
		    struct walk *w, struct bulkq_result *res)
{
	uint32_t j = s->K;

	while (j > lo) {
		uint32_t jj = j - 1;
		double evicted, v = rec_step(s, jj, &evicted);

		j = jj;
		res->steps++;
		if (!(v < INFINITY))
			return -EDOM;
		if (allow_tail && heavy_rest(s, w))
			return 0;
		if (allow_tail && settled(s, w, v, evicted, jj, lo)) {
			geometric_rest(s, v, evicted, jj, lo, strict, w);
			res->tail = true;
			return 0;
		}
		w->prev = v;
		if (v > RESCALE_ABOVE || s->S > RESCALE_ABOVE) {
			rescale(s);
			w->prev = ldexp(w->prev, -RESCALE_EXP);
		}
	}
	if (strict)
		strict_bottom_exact(s);
	return 0;
}

static int run(const struct bulkq_params *p, bool allow_tail, struct bulkq_result *res)
{
	double stack_win[STACK_WINDOW];
	struct walk w = { .prev = 1.0, .last_ratio = NAN, .tail_ln = -INFINITY };
	struct rec s;
	bool strict;
	uint32_t lo;
	int err = check_params(p);

	if (err)
		return err;
	memset(res, 0, sizeof(*res));
	if (p->arrival_per_s == 0.0) {
		res->loss = 0.0;
		res->ln_loss = -INFINITY;
		res->pass = 1.0;
		return 0;
	}
	err = rec_init(&s, p, stack_win);
	if (err)
		return err;
	strict = p->rule == RXB_BATCH_STRICT && s.N > 1;
	lo = strict ? s.N - 1 : 0;	/* the recurrence is uniform for j >= lo */
	err = rec_walk(&s, lo, strict, allow_tail, &w, res);
	if (!err)
		err = rec_result(&s, &w, res);
	if (s.win != stack_win)
		free(s.win);
	return err;
}

int bulkq_loss(const struct bulkq_params *p, struct bulkq_result *r)
{
	return run(p, true, r);
}

int bulkq_loss_full(const struct bulkq_params *p, struct bulkq_result *r)
{
	return run(p, false, r);
}

/* ------------------------------------------------------- finite burst -- */

/* Can a service fire with m packets queued? */
static bool can_serve(const struct bulkq_params *p, uint32_t m)
{
	if (p->rule == RXB_BATCH_STRICT)
		return m >= p->batch_pkts;
	return m >= 1;
}

/*
 * pi_j at most this share of P(Q > j) makes up[j] exactly 1: tail + pi_j
 * then rounds to tail (less than half its ulp away).
 */
#define BURST_FLAT	0x1p-55

/*
 * Downward: pi (unnormalised, in @pi, times 2^-scale) from K to 0 by the
 * cut equations, and up[m] = P(Q > m) / P(Q >= m) = tail / (pi_m + tail),
 * a ratio of positive numbers at the same scale, so rescaling the window
 * never touches it.
 *
 * Returns the lowest state it computed; up[] below it is 1 and not
 * stored. In overload (r N < 1) pi falls geometrically below the top, and
 * once N states in a row have pi_m <= BURST_FLAT x tail_m, every state
 * below does too: pi_j = r x (sum of the N above) <= r N x BURST_FLAT x
 * tail_j < BURST_FLAT x tail_j, as the tail only grows downwards. On a
 * deep buffer far above capacity that leaves a few hundred states of the
 * K (a 64 MiB socket buffer is K ~ 30 000-65 000).
 */
static uint32_t burst_down(const struct bulkq_params *p, double *pi, double *up)
{
	const uint32_t K = p->queue_pkts, N = p->batch_pkts;
	const double r = p->service_per_s / p->arrival_per_s;
	const uint32_t first = p->rule == RXB_BATCH_STRICT ? N : 1;
	const bool overload = r * N < 1.0;
	double S = 0.0, tail = 0.0;
	uint32_t flat = 0;

	pi[K] = 1.0;
	for (uint32_t j = K; j-- > 0;) {
		uint32_t in = j + 1, out = j + 1 + N;
		double v;

		/* The window of state j: pi_m, m in [j+1, min(j+N, K)], m >= first. */
		tail += pi[in];
		if (in >= first)
			S += pi[in];
		if (out <= K && out >= first)
			S -= pi[out];
		/*
		 * The sliding sum drifts (and in overload cancels: the evicted
		 * term is the window's largest), so it is recomputed every N
		 * steps, O(K) in all. Its absolute error stays near eps times
		 * the window's largest value, which is at most tail: up[j] moves
		 * by about eps r. A sum driven below 0 is recomputed at once.
		 */
		if (j % N == 0 || S < 0.0) {
			S = 0.0;
			for (uint32_t m = in; m <= K && m <= j + N; m++)
				if (m >= first)
					S += pi[m];
		}
		v = r * S;
		pi[j] = v;
		up[j] = tail / (v + tail);
		if (overload && v <= BURST_FLAT * tail) {
			if (++flat >= N)
				return j;
		} else {
			flat = 0;
		}
		if (v > RESCALE_ABOVE || tail > RESCALE_ABOVE) {
			for (uint32_t m = j; m <= K && m <= j + N; m++)
				pi[m] = ldexp(pi[m], -RESCALE_EXP);
			S = ldexp(S, -RESCALE_EXP);
			tail = ldexp(tail, -RESCALE_EXP);
		}
	}
	return 0;
}

/* Sum of g_j over the N states below @m: j in [max(0, m - N), m - 1]. */
static double burst_window(const double *g, uint32_t m, uint32_t N)
{
	double W = 0.0;

	for (uint32_t j = m > N ? m - N : 0; j < m; j++)
		W += g[j];
	return W;
}

/*
 * g_m for m in (@m, @flat_top) all equal to g_m = @v once it has settled
 * (P(Q >= m) = 1 there, so each adds v to c): add them at once, and leave
 * g[] and the window sum *W as the loop would at @flat_top. Returns the
 * state the loop goes on from.
 */
static uint32_t burst_skip(double *g, uint32_t N, uint32_t m, uint32_t flat_top,
			   double v, double *W, double *absorb)
{
	uint32_t from = flat_top > m + N ? flat_top - N : m + 1;

	*absorb += v * (double)(flat_top - m - 1);
	for (uint32_t j = from; j < flat_top; j++)
		g[j] = v;
	*W = burst_window(g, flat_top, N);
	return flat_top;
}

int bulkq_burst(const struct bulkq_params *p, double *work,
		struct bulkq_burst_result *res)
{
	const uint32_t K = p->queue_pkts, N = p->batch_pkts;
	double *g, *up, r, ptail = 1.0, W = 0.0, l, prev = -1.0;
	uint32_t flat_top, settled = 0;
	int err = check_params(p);

	if (err)
		return err;
	memset(res, 0, sizeof(*res));
	if (p->arrival_per_s == 0.0)
		return 0;
	r = p->service_per_s / p->arrival_per_s;
	if (!(r * N <= 1e100))
		return -ERANGE;
	g = work;
	up = work + (size_t)K + 1;
	flat_top = burst_down(p, g, up);

	/* Upwards: P(Q > m) = prod_{j<=m} up[j], kept in up[]; 1 below flat_top. */
	res->mean_queue_pkts = flat_top;
	for (uint32_t m = flat_top; m < K; m++) {
		ptail *= up[m];
		up[m] = ptail;
		res->mean_queue_pkts += ptail;
	}
	l = ptail;
	res->loss = l;
	/*
	 * Below ~1e-280 the loss carries few significant bits and c (of the
	 * order of K l) is far below one packet: leave it 0.
	 */
	if (!(l > 1e-280))
		return 0;
	for (uint32_t m = 0; m < K; m++) {
		double v, ge = m > flat_top ? up[m - 1] : 1.0;	/* P(Q >= m) */

		/* W, kept by adding and evicting, is summed afresh every N. */
		if (m % N == 0)
			W = burst_window(g, m, N);
		v = can_serve(p, m) ? l + r * W : l;
		g[m] = v;
		res->absorb_pkts += v * ge;
		if (v > res->max_extra_loss)
			res->max_extra_loss = v;
		W += v;
		if (m + 1 > N)
			W -= g[m - N];
		/*
		 * Where P(Q >= m) = 1, g_m = l + r x (the N before) settles to
		 * l / (1 - r N) in overload: once N + 1 in a row agree to a few
		 * ulps the rest up to flat_top are that value.
		 */
		settled = m >= N && fabs(v - prev) <= 4.0 * DBL_EPSILON * v ? settled + 1 : 0;
		prev = v;
		if (settled > N && m + 1 < flat_top) {
			m = burst_skip(g, N, m, flat_top, v, &W, &res->absorb_pkts) - 1;
			settled = 0;
		}
	}
	return 0;
}

/* ------------------------------------------------------- general CTMC -- */

static int32_t partial_take(const int32_t *m, const void *ctx, uint32_t place)
{
	const struct bulkq_params *p = ctx;
	int32_t n = m[place];

	return (uint32_t)n < p->batch_pkts ? n : (int32_t)p->batch_pkts;
}

static bool nonempty(const int32_t *m, const void *ctx, int arg)
{
	(void)ctx;
	(void)arg;
	return m[0] > 0;
}

int bulkq_net_build(struct srn_net *net, const struct bulkq_params *p)
{
	int q, t, err;

	err = check_params(p);
	if (err)
		return err;
	if (p->queue_pkts > INT32_MAX || p->batch_pkts > INT32_MAX)
		return -EINVAL;
	srn_init(net);
	q = srn_add_place(net, "queue", 0);
	if (q < 0)
		goto fail_q;
	t = srn_add_transition(net, "arrive", NULL, p->arrival_per_s, 0);
	err = t < 0 ? t : 0;
	if (!err)
		err = srn_add_arc(net, t, SRN_ARC_OUT, q, 1, NULL);
	if (!err)
		err = srn_add_arc(net, t, SRN_ARC_INHIBIT, q,
				  (int32_t)p->queue_pkts, NULL);
	if (err)
		goto fail;
	t = srn_add_transition(net, "serve", NULL, p->service_per_s, 0);
	err = t < 0 ? t : 0;
	if (!err && p->rule == RXB_BATCH_STRICT)
		err = srn_add_arc(net, t, SRN_ARC_IN, q,
				  (int32_t)p->batch_pkts, NULL);
	if (!err && p->rule == RXB_BATCH_PARTIAL) {
		err = srn_add_arc(net, t, SRN_ARC_IN, q, 0, partial_take);
		if (!err)
			err = srn_set_guard(net, t, nonempty);
	}
	if (err)
		goto fail;
	return 0;
fail_q:
	err = q;
fail:
	srn_finish(net);
	return err;
}

int bulkq_loss_ctmc(const struct bulkq_params *p, const struct ctmc_opts *o,
		    struct bulkq_result *r, struct ctmc_stat *st)
{
	struct srn_net net;
	struct srn_space sp;
	int32_t m0 = 0, mk;
	double *pi = NULL;
	int64_t k;
	int err;

	memset(r, 0, sizeof(*r));
	memset(st, 0, sizeof(*st));
	err = bulkq_net_build(&net, p);
	if (err)
		return err;
	err = srn_explore(&net, p, &m0, 1, NULL, &sp);
	srn_finish(&net);
	if (err)
		return err;
	pi = malloc((size_t)sp.nstates * sizeof(*pi));
	err = pi ? ctmc_steady_state(&sp.chain, o, pi, st) : -ENOMEM;
	if (err)
		goto out;
	mk = (int32_t)p->queue_pkts;
	k = srn_find(&sp, &mk);
	if (k < 0) {
		err = -EINVAL;
		goto out;
	}
	r->loss = pi[k];
	r->ln_loss = log(pi[k]);
	r->pass = 0.0;
	for (uint32_t i = 0; i < sp.nstates; i++)
		if ((int64_t)i != k)
			r->pass += pi[i];
	r->rel_err = st->err_bound;
	r->steps = sp.nstates;
out:
	free(pi);
	srn_space_finish(&sp);
	return err;
}
