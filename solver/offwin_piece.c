// SPDX-License-Identifier: GPL-2.0-or-later
/* How one log2 slot's windows lie within it. See offwin_piece.h. */
#include "solver/offwin_piece.h"

#include <math.h>

/*
 * I(n, z) = ∫_0^1 s^(n−1) e^(−z s) ds for n = 1..3 into @in[n − 1], z >= 0:
 * their series Σ (−z)^k / (k! (n + k)) below 1, where the closed form
 * cancels; above, up from I(1, z) = (1 − e^−z)/z by parts:
 * I(n) = ((n − 1) I(n − 1) − e^−z)/z. One pass gives all three.
 */
static void unit_ints(double z, double in[3])
{
	double term = 1.0, ez;

	if (z < 1.0) {
		in[0] = in[1] = in[2] = 0.0;
		for (int k = 0; k < 20; k++) {
			for (int n = 1; n <= 3; n++)
				in[n - 1] += term / (n + k);
			term *= -z / (k + 1);
		}
		return;
	}
	ez = exp(-z);
	in[0] = -expm1(-z) / z;
	for (int j = 2; j <= 3; j++)
		in[j - 1] = ((j - 1) * in[j - 2] - ez) / z;
}

/*
 * J(n, z) = ∫_0^1 (1 − r)^(n−1) e^(−z r) dr for n = 1..3 into @jn[n − 1],
 * from the I(n, z).
 */
static void unit_ints_rev(double z, double jn[3])
{
	double in[3];

	unit_ints(z, in);
	jn[0] = in[0];
	jn[1] = in[0] - in[1];
	jn[2] = in[0] - 2.0 * in[1] + in[2];
}

/* Mean and sd of t on [0, 1] with density ∝ e^(−κ t). */
static void unit_moments(double k, double *mean, double *sd)
{
	double in[3], m;

	unit_ints(k, in);
	m = in[1] / in[0];
	*mean = m;
	*sd = sqrt(fmax(in[2] / in[0] - m * m, 0.0));
}

/*
 * κ whose mean / sd is @rho, 1 < @rho < √3: mean / sd falls from √3 at
 * κ = 0 to 1 as κ grows; bisection on ln κ over [10^−8, 10^4].
 */
static double fit_kappa(double rho)
{
	double lo = log(1e-8), hi = log(1e4), m, s;

	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2.0;

		unit_moments(exp(mid), &m, &s);
		if (m > rho * s)
			lo = mid;
		else
			hi = mid;
	}
	return exp((lo + hi) / 2.0);
}

/* A falling piece on [@a, @b] at @beta from its lower edge or from @top. */
static void set_falling(struct offwin_piece *pc, double a, double b, double beta, bool top)
{
	double len = b - a, in[3];

	*pc = (struct offwin_piece){ .a = a, .b = b, .law = OFFWIN_LAW_FALLING,
				     .beta = beta, .from_top = top };
	if (len > 0.0) {
		unit_ints(beta * len, in);
		pc->norm = 1.0 / (len * in[0]);
	}
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

void offwin_piece_of_slot(struct offwin_piece *pc, size_t r, double m, double sd,
			  double cap_s)
{
	double a, b, h, room, len, beta, mt, st;
	bool top;

	offwin_slot_s(r, &a, &b);
	if (!(m >= a && m < b) || !(sd >= 0.0) || !isfinite(sd)) {
		slot_bounds(r, cap_s, &a, &b);
		*pc = (struct offwin_piece){ .a = a, .b = b, .law = OFFWIN_LAW_LOGUNIFORM };
		return;
	}
	/* A longest window below the mean is stale: left out. */
	if (cap_s >= m && cap_s < b)
		b = cap_s;
	h = sqrt(3.0) * sd;
	if (h <= m - a && h <= b - m) {
		set_falling(pc, m - h, m + h, 0.0, false);
		return;
	}
	top = b - m < m - a;
	room = top ? b - m : m - a;
	if (room > sd) {
		double k = fit_kappa(room / sd);

		unit_moments(k, &mt, &st);
		len = fmin(room / mt, b - a);
		beta = k * mt / room;
	} else {
		/* No falling law has both moments: the one of the same spread. */
		len = b - a;
		beta = 1.0 / sd;
		/* A spread too small to tell from none: all at the edge. */
		if (!(beta * len < 1e6))
			len = 0.0;
	}
	if (top)
		set_falling(pc, b - len, b, beta, true);
	else
		set_falling(pc, a, a + len, beta, false);
}

double offwin_piece_point(const struct offwin_piece *pc, enum offwin_within w)
{
	if (w == OFFWIN_LOW || pc->b <= pc->a)
		return pc->a;
	if (w == OFFWIN_HIGH)
		return pc->b;
	return -1.0;
}

/*
 * E[(W − x)^j; W > x], j = 0, 1, 2, into @q for W on a falling piece of
 * span L = b − a: with c the distance of x from the edge the density falls
 * from, each is one integral ∫ s^j e^(−β s) ds over what lies past x,
 * taken as v^(j+1) I(j+1, β v) or, from the top, c^(j+1) J(j+1, β c), so
 * that nothing cancels near the piece's ends; below the span, the whole
 * moments about x.
 */
static void falling_q(const struct offwin_piece *pc, double x, double q[3])
{
	double len = pc->b - pc->a, c, v, f, in[3];

	c = pc->from_top ? pc->b - x : x - pc->a;
	if (pc->from_top ? c >= len : c <= 0.0) {
		/* All of it lies past x: W − x = ±(c − t) for t from the edge. */
		double d = pc->from_top ? c : -c;
		double sign = pc->from_top ? -1.0 : 1.0;
		double et, et2;

		unit_ints(pc->beta * len, in);
		et = pc->norm * len * len * in[1];
		et2 = pc->norm * len * len * len * in[2];
		q[0] = 1.0;
		q[1] = d + sign * et;
		q[2] = d * d + 2.0 * sign * d * et + et2;
		return;
	}
	if (pc->from_top ? c <= 0.0 : c >= len) {
		q[0] = q[1] = q[2] = 0.0;
		return;
	}
	if (pc->from_top) {
		unit_ints_rev(pc->beta * c, in);
		for (int j = 0; j < 3; j++)
			q[j] = pc->norm * pow(c, j + 1) * in[j];
		return;
	}
	v = len - c;
	f = pc->norm * exp(-pc->beta * c);
	unit_ints(pc->beta * v, in);
	for (int j = 0; j < 3; j++)
		q[j] = f * pow(v, j + 1) * in[j];
}

/*
 * E[(W − x)+] for W log-uniform on [a, b], a < b, x < b:
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
 * E[(W^2 − x^2)/2; W > x] for W log-uniform on [a, b] (density
 * 1 / (w ln(b/a))), y = max(a, x):
 *   ((b^2 − y^2)/2 − x^2 ln(b/y)) / (2 ln(b/a)).
 */
static double loguniform_end(double a, double b, double x)
{
	double y = x > a ? x : a;

	return ((b * b - y * y) / 2.0 - x * x * log(b / y)) / (2.0 * log(b / a));
}

enum term { TERM_EXCESS, TERM_TAIL, TERM_END };

/*
 * One of the three at x: at a point, directly; past the span, 0; else by
 * the piece's law (E[(W² − x²)/2; W > x] = x q1 + q2/2, W = x + s).
 */
static double piece_term(const struct offwin_piece *pc, double x, enum offwin_within w,
			 enum term t)
{
	double v = offwin_piece_point(pc, w), q[3];

	if (v >= 0.0) {
		if (!(v > x))
			return 0.0;
		return t == TERM_EXCESS ? v - x : t == TERM_TAIL ? 1.0 : (v * v - x * x) / 2.0;
	}
	if (x >= pc->b)
		return 0.0;
	if (pc->law == OFFWIN_LAW_LOGUNIFORM) {
		if (t == TERM_EXCESS)
			return loguniform_excess(pc->a, pc->b, x);
		if (t == TERM_END)
			return loguniform_end(pc->a, pc->b, x);
		return x <= pc->a ? 1.0 : log(pc->b / x) / log(pc->b / pc->a);
	}
	falling_q(pc, x, q);
	return t == TERM_EXCESS ? q[1] : t == TERM_TAIL ? q[0] : x * q[1] + q[2] / 2.0;
}

double offwin_piece_excess(const struct offwin_piece *pc, double x, enum offwin_within w)
{
	return piece_term(pc, x, w, TERM_EXCESS);
}

double offwin_piece_tail(const struct offwin_piece *pc, double x, enum offwin_within w)
{
	return piece_term(pc, x, w, TERM_TAIL);
}

double offwin_piece_end(const struct offwin_piece *pc, double x, enum offwin_within w)
{
	return piece_term(pc, x, w, TERM_END);
}

double offwin_piece_density(const struct offwin_piece *pc, double w)
{
	double t = pc->from_top ? pc->b - w : w - pc->a;

	return pc->norm * exp(-pc->beta * t);
}

size_t offwin_piece_quad(const struct offwin_piece *pc, double *lo, double *hi,
			 double brk[4])
{
	static const double fold[4] = { 1.0, 3.0, 7.0, 15.0 };
	double len = pc->b - pc->a, reach = len, t[4];
	size_t n = 0;

	if (pc->beta > 0.0 && 40.0 / pc->beta < len)
		reach = 40.0 / pc->beta;
	*lo = pc->from_top ? pc->b - reach : pc->a;
	*hi = pc->from_top ? pc->b : pc->a + reach;
	while (n < 4 && pc->beta > 0.0 && fold[n] / pc->beta < reach) {
		t[n] = fold[n] / pc->beta;
		n++;
	}
	/* Ascending in w: from the top, the farthest fold first. */
	for (size_t i = 0; i < n; i++)
		brk[i] = pc->from_top ? pc->b - t[n - 1 - i] : pc->a + t[i];
	return n;
}

void offwin_pieces_of_hist(struct offwin_piece *pc, const double *count,
			   const double *mean_s, const double *sd_s, size_t nslots,
			   double cap_s)
{
	for (size_t r = 0; r < nslots; r++) {
		if (count[r] > 0.0)
			offwin_piece_of_slot(&pc[r], r, mean_s ? mean_s[r] : 0.0,
					     sd_s ? sd_s[r] : 0.0, cap_s);
	}
}

void offwin_pieces_init(struct offwin_pieces *pcs, const struct offwin_in *in)
{
	size_t n = in->nslots < OFFWIN_MAX_SLOTS ? in->nslots : OFFWIN_MAX_SLOTS;

	if (in->count)
		offwin_pieces_of_hist(pcs->win, in->count, in->mean_s, in->sd_s, n, 0.0);
	if (in->wake_count)
		offwin_pieces_of_hist(pcs->wake, in->wake_count, in->wake_mean_s,
				      in->wake_sd_s, n, in->wake_max_s);
}
