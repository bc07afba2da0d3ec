// SPDX-License-Identifier: GPL-2.0-or-later
/* Loss to the measured off-CPU windows of a queue's server. See offwin.h. */
#include "solver/offwin.h"

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

/*
 * The shape formulas below take a < b and x < b: the piece functions
 * handle a piece that is one point (an empty span, or a placement at an
 * edge) and x at or above its top.
 *
 * E[(W − x)+] for W log-uniform on [a, b]:
 *   x <= a:      (b − a)/ln(b/a) − x
 *   a < x < b:   ((b − x) − x ln(b/x)) / ln(b/a)
 */
static double loguniform_excess(double a, double b, double x)
{
	double span = log(b / a);

	if (x <= a)
		return (b - a) / span - x;
	return ((b - x) - x * log(b / x)) / span;
}

/*
 * Slot @r's edges in seconds, its top cut at @cap_s (the longest wait;
 * <= 0: none) where the cap lies inside the slot: no wait there is longer
 * than the cap, so they spread over [a, cap] only. A slot wholly at or
 * above the cap stays whole: its waits were counted, so the cap is the
 * one that is wrong (a longest wait from other epochs than the
 * histogram's), and cutting the slot would put them below where they
 * were measured.
 */
static void slot_bounds(size_t r, double cap_s, double *a, double *b)
{
	offwin_slot_s(r, a, b);
	if (cap_s > *a && cap_s < *b)
		*b = cap_s;
}

/* A histogram with, where measured, each slot's mean and spread. */
struct hist {
	const double *count;
	const double *mean_s;	/* NULL: no slot's moments known */
	const double *sd_s;
	size_t nslots;
	double cap_s;		/* the longest window; <= 0: unknown */
};

/*
 * A slot's windows: log-uniform on [a, b] (the slot, when only their
 * count is known) or uniform on it (around their measured mean); a == b:
 * all at a.
 */
struct piece {
	double a, b;
	bool uniform;
};

/*
 * Slot @r's windows. Without their moments, log-uniform over the slot.
 * With them, uniform on m ± h, h = √3 sd, the uniform law with the slot's
 * mean and standard deviation, as far as the slot and the longest window
 * allow (h less where m ± √3 sd would pass them; a longest window below
 * the mean is stale and left out). Windows that the scheduler's tick makes
 * nearly equal (a co-runner runs whole ticks) are then where they were
 * measured, not spread over a factor of two; spread ones keep a tail, and
 * the loss grows from zero continuously as the rate rises past K / (m + h).
 */
static struct piece slot_piece(const struct hist *h, size_t r)
{
	double a, b, m, d;

	offwin_slot_s(r, &a, &b);
	m = h->mean_s ? h->mean_s[r] : 0.0;
	d = h->sd_s ? h->sd_s[r] : 0.0;
	if (!(m >= a && m < b) || !(d >= 0.0) || !isfinite(d)) {
		slot_bounds(r, h->cap_s, &a, &b);
		return (struct piece){ a, b, false };
	}
	if (h->cap_s >= m && h->cap_s < b)
		b = h->cap_s;
	d = fmin(sqrt(3.0) * d, fmin(m - a, b - m));
	return (struct piece){ m - d, m + d, true };
}

typedef double (*piece_fn)(const struct piece *pc, double x, enum offwin_within w);

/* The mean of @per_piece over the histogram (normalised by its total). */
static double hist_mean(const struct hist *h, double x_s, enum offwin_within w,
			piece_fn per_piece)
{
	size_t nslots = h->nslots < OFFWIN_MAX_SLOTS ? h->nslots : OFFWIN_MAX_SLOTS;
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < nslots; r++) {
		struct piece pc;

		if (!(h->count[r] > 0.0))
			continue;
		total += h->count[r];
		pc = slot_piece(h, r);
		sum += h->count[r] * per_piece(&pc, x_s, w);
	}
	return total > 0.0 ? sum / total : 0.0;
}

/* E[(W − x)+] for W uniform on [a, b]. */
static double uniform_excess(double a, double b, double x)
{
	if (x <= a)
		return (a + b) / 2.0 - x;
	return (b - x) * (b - x) / (2.0 * (b - a));
}

/*
 * Where @pc's windows are all at one point (its span is empty, or @w puts
 * them at an edge), that point; else -1.
 */
static double piece_point(const struct piece *pc, enum offwin_within w)
{
	if (w == OFFWIN_LOW || pc->b <= pc->a)
		return pc->a;
	if (w == OFFWIN_HIGH)
		return pc->b;
	return -1.0;
}

static double piece_excess(const struct piece *pc, double x, enum offwin_within w)
{
	double v = piece_point(pc, w);

	if (v >= 0.0)
		return v > x ? v - x : 0.0;
	if (x >= pc->b)
		return 0.0;
	return pc->uniform ? uniform_excess(pc->a, pc->b, x) :
			     loguniform_excess(pc->a, pc->b, x);
}

/* A log2 histogram without moments, as the public functions take it. */
static struct hist plain_hist(const double *count, size_t nslots, double cap_s)
{
	return (struct hist){ .count = count, .nslots = nslots, .cap_s = cap_s };
}

double offwin_excess_s(const double *count, size_t nslots, double x_s,
		       enum offwin_within w, double cap_s)
{
	struct hist h = plain_hist(count, nslots, cap_s);

	return hist_mean(&h, x_s, w, piece_excess);
}

/*
 * E[(W^2 − x^2)/2; W > x] for W log-uniform on [a, b] (density
 * 1 / (w ln(b/a))), y = max(a, x):
 *   ((b^2 − y^2)/2 − x^2 ln(b/y)) / (2 ln(b/a)).
 */
static double loguniform_end(double a, double b, double x)
{
	double y = x > a ? x : a;

	return ((b * b - y * y) / 2.0 - x * x * log(b / y)) / (2.0 * log(b / a));
}

/* The same for W uniform on [a, b]. */
static double uniform_end(double a, double b, double x)
{
	double y = x > a ? x : a;

	return ((b * b * b - y * y * y) / 6.0 - x * x * (b - y) / 2.0) / (b - a);
}

static double piece_end(const struct piece *pc, double x, enum offwin_within w)
{
	double v = piece_point(pc, w);

	if (v >= 0.0)
		return v > x ? (v * v - x * x) / 2.0 : 0.0;
	if (x >= pc->b)
		return 0.0;
	return pc->uniform ? uniform_end(pc->a, pc->b, x) : loguniform_end(pc->a, pc->b, x);
}

double offwin_end_s2(const double *count, size_t nslots, double x_s,
		     enum offwin_within w, double cap_s)
{
	struct hist h = plain_hist(count, nslots, cap_s);

	return hist_mean(&h, x_s, w, piece_end);
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

/* The windows after preemption of @in, with their slots' moments. */
static struct hist preempt_hist(const struct offwin_in *in)
{
	return (struct hist){ .count = in->count, .mean_s = in->mean_s, .sd_s = in->sd_s,
			      .nslots = in->nslots };
}

/* Its waits after a wakeup, none longer than the longest. */
static struct hist wake_hist(const struct offwin_in *in)
{
	return (struct hist){ .count = in->wake_count, .mean_s = in->wake_mean_s,
			      .sd_s = in->wake_sd_s, .nslots = in->nslots,
			      .cap_s = in->wake_max_s };
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
	p->h = preempt_hist(in);
	mean_s = hist_mean(&p->h, 0.0, OFFWIN_LOGUNIFORM, piece_excess);
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

/* Something of the windows (excess, tail, end term) at a room of @x_s. */
typedef double (*room_fn)(const struct offwin_in *in, double x_s, enum offwin_within w);

/* Nodes and weights of the 8-point Gauss-Legendre rule on [-1, 1]. */
static const double gl_node[8] = {
	-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
	0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363,
};
static const double gl_weight[8] = {
	0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
	0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763,
};

/* The room a window finds after one of exp(@u) (@log) or @u seconds. */
static double room_at(const struct preempt *p, double u, bool log_scale, room_fn fn)
{
	return fn(p->in, room_after_s(p, log_scale ? exp(u) : u), p->w);
}

/*
 * The mean of @fn at the room a window finds after one of [@u0, @u1], the
 * previous window uniform there in ln seconds (@log_scale: log-uniform) or
 * in seconds: the room is K/λ up to the drain, then falls as the previous
 * window's overflow, then stays at what the gap frees: smooth between those
 * breaks, so each piece is taken by Gauss-Legendre.
 */
static double room_mean_over(const struct preempt *p, double u0, double u1, bool log_scale,
			     room_fn fn)
{
	double brk[4] = { u0, u1, u1, u1 }, sum = 0.0, at;
	size_t n = 1;

	if (!(u1 > u0))
		return room_at(p, u0, log_scale, fn);
	if (p->drained_s > 0.0) {
		at = log_scale ? log(p->drained_s) : p->drained_s;
		if (at > u0 && at < u1)
			brk[n++] = at;
	}
	if (p->full_s > 0.0) {
		at = log_scale ? log(p->full_s) : p->full_s;
		if (at > brk[n - 1] && at < u1)
			brk[n++] = at;
	}
	brk[n] = u1;
	for (size_t j = 0; j < n; j++) {
		double mid = (brk[j] + brk[j + 1]) / 2.0, half = (brk[j + 1] - brk[j]) / 2.0;

		for (size_t q = 0; q < 8; q++)
			sum += gl_weight[q] * half *
			       room_at(p, mid + half * gl_node[q], log_scale, fn);
	}
	return sum / (u1 - u0);
}

/*
 * E over the previous window of @fn at the room the next one finds: the
 * queue that window left, K − ((min(K, λ D') − (c − λ)+ g)+, the previous
 * window D' drawn from the same histogram, placed within its slots as
 * p->w says.
 */
static double room_mean(const struct preempt *p, room_fn fn)
{
	const struct hist *h = &p->h;
	size_t nslots = h->nslots < OFFWIN_MAX_SLOTS ? h->nslots : OFFWIN_MAX_SLOTS;
	double total = 0.0, sum = 0.0;

	for (size_t r = 0; r < nslots; r++) {
		struct piece pc;
		double v;

		if (!(h->count[r] > 0.0))
			continue;
		total += h->count[r];
		pc = slot_piece(h, r);
		v = piece_point(&pc, p->w);
		if (v >= 0.0)
			v = fn(p->in, room_after_s(p, v), p->w);
		else if (pc.uniform)
			v = room_mean_over(p, pc.a, pc.b, false, fn);
		else
			v = room_mean_over(p, log(pc.a), log(pc.b), true, fn);
		sum += h->count[r] * v;
	}
	return total > 0.0 ? sum / total : 0.0;
}

static double excess_at(const struct offwin_in *in, double x_s, enum offwin_within w)
{
	struct hist h = preempt_hist(in);

	return hist_mean(&h, x_s, w, piece_excess);
}

/*
 * Seconds of arrivals a window loses on average when the windows and the
 * runs between them bring more than the receiver drains: the queue then
 * stays full, and each cycle loses λ (E[W] + g) − c g of it.
 */
static double overload_s(const struct preempt *p)
{
	double mean_s = hist_mean(&p->h, 0.0, p->w, piece_excess);
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

/*
 * l_wake: the waits after a wakeup, each from an empty queue, none longer
 * than the longest one measured.
 */
static double wake_loss(const struct offwin_in *in, double lambda,
			enum offwin_within w)
{
	struct hist h = wake_hist(in);

	if (!(in->wake_per_s > 0.0) || !in->wake_count)
		return 0.0;
	return in->wake_per_s * hist_mean(&h, wake_room_s(in, lambda), w, piece_excess);
}

/* P(W > x) for W spread over @pc (as the shape formulas above take it). */
static double piece_tail(const struct piece *pc, double x, enum offwin_within w)
{
	double v = piece_point(pc, w), a = pc->a, b = pc->b;

	if (v >= 0.0)
		return v > x ? 1.0 : 0.0;
	if (x <= a)
		return 1.0;
	if (x >= b)
		return 0.0;
	return pc->uniform ? (b - x) / (b - a) : log(b / x) / log(b / a);
}

static double tail_at(const struct offwin_in *in, double x_s, enum offwin_within w)
{
	struct hist h = preempt_hist(in);

	return hist_mean(&h, x_s, w, piece_tail);
}

static double end_at(const struct offwin_in *in, double x_s, enum offwin_within w)
{
	struct hist h = preempt_hist(in);

	return hist_mean(&h, x_s, w, piece_end);
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
	double l = 0.0;

	memset(ev, 0, sizeof(*ev));
	if (!(lambda > 0.0) || !isfinite(lambda))
		return;
	ev->lambda = lambda;
	ev->w = w;
	if (preempt_init(&p, in, lambda, w)) {
		ev->preempt = true;
		ev->excess_s = room_mean(&p, excess_at);
		ev->overload_s = overload_s(&p);
		l = in->per_s * fmax(ev->excess_s, ev->overload_s);
	}
	l += wake_loss(in, lambda, w);
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
	double n = 0.0, sum_s = 0.0, room_s;

	if (!(ev->lambda > 0.0))
		return;
	if (ev->preempt && preempt_init(&p, in, ev->lambda, ev->w)) {
		/* In overload the queue stays full: every window loses. */
		n += in->per_s * (ev->overload_s > ev->excess_s ? 1.0 : room_mean(&p, tail_at));
		sum_s += in->per_s * room_mean(&p, end_at);
		sum_s += (ev->excess_s - excess_at(in, p.full_s, ev->w)) * round_windows(in, ev->lambda);
	}
	if (in->wake_per_s > 0.0 && in->wake_count) {
		struct hist h = wake_hist(in);

		room_s = wake_room_s(in, ev->lambda);
		n += in->wake_per_s * hist_mean(&h, room_s, ev->w, piece_tail);
		sum_s += in->wake_per_s * hist_mean(&h, room_s, ev->w, piece_end);
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
