// SPDX-License-Identifier: GPL-2.0-or-later
/* Loss to the measured off-CPU windows of a queue's server. See offwin.h. */
#include "solver/offwin.h"
#include "solver/offwin_piece.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void offwin_slot_s(size_t r, double *lo_s, double *hi_s)
{
	*lo_s = ldexp(1.0, (int)r) * 1e-9;
	*hi_s = ldexp(1.0, (int)r + 1) * 1e-9;
}

/* A histogram with, where measured, each slot's mean and spread. */
struct hist {
	const double *count;
	size_t nslots;
	const struct offwin_piece *pc;			/* where count > 0 */
	struct offwin_piece own[OFFWIN_MAX_SLOTS];	/* pc when none given */
};

/*
 * @h over @count (@nslots of them), each slot's piece from @given (built
 * for the solve, offwin_pieces_init()) or else from its moments (@mean_s,
 * @sd_s; NULL: none measured) and the longest window @cap_s.
 */
static void hist_init(struct hist *h, const double *count, const double *mean_s,
		      const double *sd_s, size_t nslots, double cap_s,
		      const struct offwin_piece *given)
{
	h->count = count;
	h->nslots = nslots < OFFWIN_MAX_SLOTS ? nslots : OFFWIN_MAX_SLOTS;
	if (given) {
		h->pc = given;
		return;
	}
	offwin_pieces_of_hist(h->own, count, mean_s, sd_s, h->nslots, cap_s);
	h->pc = h->own;
}

typedef double (*piece_fn)(const struct offwin_piece *pc, double x, enum offwin_within w);

/* The mean of @per_piece over the histogram (normalised by its total). */
static double hist_mean(const struct hist *h, double x_s, enum offwin_within w,
			piece_fn per_piece)
{
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < h->nslots; r++) {
		if (!(h->count[r] > 0.0))
			continue;
		total += h->count[r];
		sum += h->count[r] * per_piece(&h->pc[r], x_s, w);
	}
	return total > 0.0 ? sum / total : 0.0;
}

double offwin_excess_s(const double *count, size_t nslots, double x_s,
		       enum offwin_within w, double cap_s)
{
	struct hist h;

	hist_init(&h, count, NULL, NULL, nslots, cap_s, NULL);
	return hist_mean(&h, x_s, w, offwin_piece_excess);
}

double offwin_end_s2(const double *count, size_t nslots, double x_s,
		     enum offwin_within w, double cap_s)
{
	struct hist h;

	hist_init(&h, count, NULL, NULL, nslots, cap_s, NULL);
	return hist_mean(&h, x_s, w, offwin_piece_end);
}

void offwin_slot_moments(const double *count, const double *sum_s, const double *sq_s2,
			 size_t nslots, double *mean_s, double *sd_s)
{
	for (size_t r = 0; r < nslots; r++) {
		double m, var;

		mean_s[r] = sd_s[r] = 0.0;
		if (!(count[r] > 0.0) || !(sum_s[r] > 0.0))
			continue;
		m = sum_s[r] / count[r];
		var = sq_s2[r] / count[r] - m * m;
		mean_s[r] = m;
		sd_s[r] = var > 0.0 ? sqrt(var) : 0.0;
	}
}

double offwin_mean_s(const double *count, size_t nslots)
{
	return offwin_excess_s(count, nslots, 0.0, OFFWIN_LOGUNIFORM, 0.0);
}

double offwin_room_pkts(double queue_pkts, double lambda, double on_pkts_per_s,
			double gap_s, double prev_s)
{
	double drained = 0.0, left;

	if (!(queue_pkts > 0.0))
		return 0.0;
	if (on_pkts_per_s > lambda && gap_s > 0.0)
		drained = (on_pkts_per_s - lambda) * gap_s;
	left = lambda * (prev_s > 0.0 ? prev_s : 0.0);
	if (left > queue_pkts)
		left = queue_pkts;
	left -= drained;
	return left > 0.0 ? queue_pkts - left : queue_pkts;
}

/* The windows after preemption at one rate: what their rooms depend on. */
struct preempt {
	const struct offwin_in *in;
	struct hist h;
	enum offwin_within w;
	double lambda, gap_s;
	double full_s;		/* K/λ: the room of an empty queue */
	double drained_s;	/* (c − λ)+ g / λ: what a gap frees */
};

/* False when there are no windows after preemption to take. */
static bool preempt_init(struct preempt *p, const struct offwin_in *in, double lambda,
			 enum offwin_within w)
{
	double mean_s;

	if (!(in->per_s > 0.0) || !in->count)
		return false;
	hist_init(&p->h, in->count, in->mean_s, in->sd_s, in->nslots, 0.0,
		  in->pieces ? in->pieces->win : NULL);
	mean_s = hist_mean(&p->h, 0.0, OFFWIN_LOGUNIFORM, offwin_piece_excess);
	if (!(mean_s > 0.0))
		return false;
	p->in = in;
	p->w = w;
	p->lambda = lambda;
	p->gap_s = in->gap_s > 0.0 ? in->gap_s : 1.0 / in->per_s - mean_s;
	p->full_s = (in->queue_pkts > 0.0 ? in->queue_pkts : 0.0) / lambda;
	p->drained_s = in->on_pkts_per_s > lambda && p->gap_s > 0.0 ?
		       (in->on_pkts_per_s - lambda) * p->gap_s / lambda : 0.0;
	return true;
}

/* The room F/λ (seconds of arrivals) after a window of @prev_s. */
static double room_after_s(const struct preempt *p, double prev_s)
{
	return offwin_room_pkts(p->full_s * p->lambda, p->lambda, p->in->on_pkts_per_s,
				p->gap_s, prev_s) / p->lambda;
}

/* Nodes and weights of the 8-point Gauss-Legendre rule on [-1, 1]. */
static const double gl_node[8] = {
	-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
	0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363,
};
static const double gl_weight[8] = {
	0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
	0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763,
};

/* @pc's density at @u (ln seconds for a log-uniform piece, else seconds). */
static double piece_density(const struct offwin_piece *pc, double u)
{
	return pc->law == OFFWIN_LAW_LOGUNIFORM ? 1.0 / log(pc->b / pc->a)
						: offwin_piece_density(pc, u);
}

/*
 * @fn of the windows at the room one finds after a window of exp(@u)
 * (log-uniform @pc: u is ln seconds) or @u seconds.
 */
static double room_term(const struct preempt *p, const struct offwin_piece *pc, double u,
			piece_fn fn)
{
	double prev_s = pc->law == OFFWIN_LAW_LOGUNIFORM ? exp(u) : u;

	return hist_mean(&p->h, room_after_s(p, prev_s), p->w, fn);
}

/* Insert @at into the ascending @brk[0..*n) if it lies inside (@lo, @hi). */
static void add_break(double *brk, size_t *n, double at, double lo, double hi)
{
	size_t i = *n;

	if (!(at > lo && at < hi))
		return;
	while (i > 0 && brk[i - 1] > at) {
		brk[i] = brk[i - 1];
		i--;
	}
	brk[i] = at;
	(*n)++;
}

/*
 * The mean of @fn at the room a window finds after one drawn from @pc:
 * the room is K/λ up to the drain, then falls as the previous window's
 * overflow, then stays at what the gap frees, and a falling density bends
 * at each e-folding: smooth between those breaks, so each stretch is taken
 * by Gauss-Legendre (in ln seconds for a log-uniform piece). Divided by
 * the same rule's integral of the density: a steep falling law's last
 * stretch (15 to 40 e-foldings) misses ~1e-11 of its mass, which would
 * otherwise put the mean below a point placement's.
 */
static double room_mean_over(const struct preempt *p, const struct offwin_piece *pc,
			     piece_fn fn)
{
	bool log_scale = pc->law == OFFWIN_LAW_LOGUNIFORM;
	double lo, hi, brk[8], sum = 0.0, mass = 0.0;
	size_t n = 0;

	if (log_scale) {
		lo = log(pc->a);
		hi = log(pc->b);
	} else {
		n = offwin_piece_quad(pc, &lo, &hi, brk);
	}
	if (p->drained_s > 0.0)
		add_break(brk, &n, log_scale ? log(p->drained_s) : p->drained_s, lo, hi);
	if (p->full_s > 0.0)
		add_break(brk, &n, log_scale ? log(p->full_s) : p->full_s, lo, hi);
	for (size_t j = 0; j <= n; j++) {
		double from = j ? brk[j - 1] : lo, to = j < n ? brk[j] : hi;
		double mid = (from + to) / 2.0, half = (to - from) / 2.0;

		for (size_t q = 0; q < 8; q++) {
			double u = mid + half * gl_node[q], dens = piece_density(pc, u);

			sum += gl_weight[q] * half * (dens * room_term(p, pc, u, fn));
			mass += gl_weight[q] * half * dens;
		}
	}
	return mass > 0.0 ? sum / mass : 0.0;
}

/*
 * E over the previous window of @fn at the room the next one finds: the
 * queue that window left, K − ((min(K, λ D') − (c − λ)+ g)+, the previous
 * window D' drawn from the same histogram, placed within its slots as
 * p->w says.
 */
static double room_mean(const struct preempt *p, piece_fn fn)
{
	const struct hist *h = &p->h;
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < h->nslots; r++) {
		const struct offwin_piece *pc = &h->pc[r];
		double v;

		if (!(h->count[r] > 0.0))
			continue;
		total += h->count[r];
		v = offwin_piece_point(pc, p->w);
		if (v >= 0.0)
			v = hist_mean(h, room_after_s(p, v), p->w, fn);
		else
			v = room_mean_over(p, pc, fn);
		sum += h->count[r] * v;
	}
	return total > 0.0 ? sum / total : 0.0;
}

/*
 * Seconds of arrivals a window loses on average when the windows and the
 * runs between them bring more than the receiver drains: the queue then
 * stays full, and each cycle loses λ (E[W] + g) − c g of it.
 */
static double overload_s(const struct preempt *p)
{
	double mean_s = hist_mean(&p->h, 0.0, p->w, offwin_piece_excess);
	double g = p->gap_s > 0.0 ? p->gap_s : 0.0;
	double over_s = mean_s + g - p->in->on_pkts_per_s * g / p->lambda;

	return over_s > 0.0 ? over_s : 0.0;
}

/*
 * How long a wait after a wakeup may last before it loses: it begins with
 * the queue empty (F = K), which is full after K/λ; and the memory the
 * reader frees is given back only after R packets, read at c once it runs,
 * while the full queue turns arrivals away: K/λ − R/c, at least 0.
 */
static double wake_room_s(const struct offwin_in *in, double lambda)
{
	double room_s = (in->queue_pkts > 0.0 ? in->queue_pkts : 0.0) / lambda;

	if (in->release_pkts > 0.0 && in->on_pkts_per_s > 0.0)
		room_s -= in->release_pkts / in->on_pkts_per_s;
	return room_s > 0.0 ? room_s : 0.0;
}

/* The waits after a wakeup of @in into @h, none longer than the longest; false: none. */
static bool wake_init(struct hist *h, const struct offwin_in *in)
{
	if (!(in->wake_per_s > 0.0) || !in->wake_count)
		return false;
	hist_init(h, in->wake_count, in->wake_mean_s, in->wake_sd_s, in->nslots,
		  in->wake_max_s, in->pieces ? in->pieces->wake : NULL);
	return true;
}

/* See offwin.h. */
double offwin_off_share(const struct offwin_in *in)
{
	struct hist h;
	double share = 0.0;

	if (in->per_s > 0.0 && in->count) {
		hist_init(&h, in->count, in->mean_s, in->sd_s, in->nslots, 0.0,
			  in->pieces ? in->pieces->win : NULL);
		share += in->per_s * hist_mean(&h, 0.0, OFFWIN_LOGUNIFORM, offwin_piece_excess);
	}
	if (wake_init(&h, in))
		share += in->wake_per_s * hist_mean(&h, 0.0, OFFWIN_LOGUNIFORM,
						     offwin_piece_excess);
	return share < 1.0 ? share : 1.0;
}

/*
 * l_win + l_wake: a window after preemption loses what does not fit in the
 * room the window before it left, or at least its share of the overload;
 * a wait after a wakeup, from an empty queue, what does not fit in K.
 */
void offwin_eval_loss(const struct offwin_in *in, double lambda, enum offwin_within w,
		      struct offwin_eval *ev)
{
	struct preempt p;
	struct hist h;
	double l = 0.0;

	memset(ev, 0, sizeof(*ev));
	if (!(lambda > 0.0) || !isfinite(lambda))
		return;
	ev->lambda = lambda;
	ev->w = w;
	if (preempt_init(&p, in, lambda, w)) {
		ev->preempt = true;
		ev->excess_s = room_mean(&p, offwin_piece_excess);
		ev->overload_s = overload_s(&p);
		l = in->per_s * fmax(ev->excess_s, ev->overload_s);
	}
	if (wake_init(&h, in))
		l += in->wake_per_s * hist_mean(&h, wake_room_s(in, lambda), w,
						offwin_piece_excess);
	ev->loss = l < 1.0 ? l : 1.0;
}

/* The windows after preemption a first round meets, at most 1 (0: no round given). */
static double round_windows(const struct offwin_in *in, double lambda)
{
	if (!(in->round_pkts > 0.0))
		return 1.0;
	return fmin(1.0, in->per_s * in->round_pkts / lambda);
}

/*
 * The windows that lose, each kind from its own room; and what a round's
 * ends take off its loss: the windows that begin within W of its end
 * (their end term) and the round's first window after preemption, which
 * finds the empty queue's room K instead of F.
 */
void offwin_eval_round(const struct offwin_in *in, struct offwin_eval *ev)
{
	struct preempt p;
	struct hist h;
	double n = 0.0, sum_s = 0.0, room_s, first_s;

	if (!(ev->lambda > 0.0))
		return;
	if (ev->preempt && preempt_init(&p, in, ev->lambda, ev->w)) {
		/* In overload the queue stays full: every window loses. */
		n += in->per_s * (ev->overload_s > ev->excess_s ? 1.0 :
				  room_mean(&p, offwin_piece_tail));
		sum_s += in->per_s * room_mean(&p, offwin_piece_end);
		first_s = hist_mean(&p.h, p.full_s, ev->w, offwin_piece_excess);
		sum_s += (ev->excess_s - first_s) * round_windows(in, ev->lambda);
	}
	if (wake_init(&h, in)) {
		room_s = wake_room_s(in, ev->lambda);
		n += in->wake_per_s * hist_mean(&h, room_s, ev->w, offwin_piece_tail);
		sum_s += in->wake_per_s * hist_mean(&h, room_s, ev->w, offwin_piece_end);
	}
	ev->lossy_per_s = n;
	ev->absorb_pkts = ev->lambda * sum_s;
	ev->round = true;
}

double offwin_loss(const struct offwin_in *in, double lambda, enum offwin_within w)
{
	struct offwin_eval ev;

	offwin_eval_loss(in, lambda, w, &ev);
	return ev.loss;
}

double offwin_lossy_per_s(const struct offwin_in *in, double lambda, enum offwin_within w)
{
	struct offwin_eval ev;

	offwin_eval_loss(in, lambda, w, &ev);
	offwin_eval_round(in, &ev);
	return ev.lossy_per_s;
}

double offwin_round_absorb(const struct offwin_in *in, double lambda,
			   enum offwin_within w)
{
	struct offwin_eval ev;

	offwin_eval_loss(in, lambda, w, &ev);
	offwin_eval_round(in, &ev);
	return ev.absorb_pkts;
}

/* A number from *@p up to a delimiter in @stops; advances *@p. */
static int parse_num(const char **p, const char *stops, double *out)
{
	char *end;

	if (!**p || strchr(stops, **p) || **p == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtod(*p, &end);
	if (end == *p || errno == ERANGE || !isfinite(*out) || *out < 0.0)
		return -EINVAL;
	if (*end && !strchr(stops, *end))
		return -EINVAL;
	*p = end;
	return 0;
}

/* ":MEAN:SD" in ns after a slot's count, into seconds. */
static int parse_moments(const char **p, double *mean_s, double *sd_s)
{
	double mean_ns, sd_ns;

	if (!mean_s || **p != ':')
		return -EINVAL;
	(*p)++;
	if (parse_num(p, ":", &mean_ns) || **p != ':')
		return -EINVAL;
	(*p)++;
	if (parse_num(p, ",", &sd_ns))
		return -EINVAL;
	*mean_s = mean_ns * 1e-9;
	*sd_s = sd_ns * 1e-9;
	return 0;
}

static int parse_slots(const char *p, double *count, double *mean_s, double *sd_s,
		       size_t nslots)
{
	uint64_t seen = 0;

	while (*p) {
		double slot, n, m = 0.0, sd = 0.0;

		if (parse_num(&p, ":", &slot) || *p != ':')
			return -EINVAL;
		p++;
		if (parse_num(&p, ",:", &n))
			return -EINVAL;
		if (*p == ':' && parse_moments(&p, mean_s ? &m : NULL, &sd))
			return -EINVAL;
		if (slot != floor(slot) || slot >= (double)nslots ||
		    (seen >> (unsigned)slot) & 1u)
			return -EINVAL;
		seen |= (uint64_t)1 << (unsigned)slot;
		count[(size_t)slot] = n;
		if (mean_s) {
			mean_s[(size_t)slot] = m;
			sd_s[(size_t)slot] = sd;
		}
		if (*p == ',') {
			p++;
			if (!*p)
				return -EINVAL;
		}
	}
	return 0;
}

static void parse_clear(double *per_s, double *count, double *mean_s, double *sd_s,
			size_t nslots)
{
	*per_s = 0.0;
	memset(count, 0, nslots * sizeof(*count));
	if (mean_s && sd_s) {
		memset(mean_s, 0, nslots * sizeof(*mean_s));
		memset(sd_s, 0, nslots * sizeof(*sd_s));
	}
}

int offwin_parse(const char *s, double *per_s, double *count, double *mean_s,
		 double *sd_s, size_t nslots)
{
	const char *p = s;
	int err;

	if (nslots > OFFWIN_MAX_SLOTS || !mean_s != !sd_s) {
		*per_s = 0.0;
		return -EINVAL;
	}
	parse_clear(per_s, count, mean_s, sd_s, nslots);
	if (!s)
		return -EINVAL;
	err = parse_num(&p, "/", per_s);
	if (!err && *p != '/')
		err = -EINVAL;
	if (!err)
		err = parse_slots(p + 1, count, mean_s, sd_s, nslots);
	if (err)
		parse_clear(per_s, count, mean_s, sd_s, nslots);
	return err;
}
