// SPDX-License-Identifier: GPL-2.0-or-later
/* The parallel-stream throughput models of Yildirim et al. See streams.h. */
#include "solver/streams.h"

#include <math.h>
#include <string.h>

/* Newton's iteration on eq. 22: the start (the paper's "small number"),
 * the bracket it may not leave, and when it has converged. */
#define NEWTON_C0		1.0
#define NEWTON_C_MAX		256.0
#define NEWTON_MAX_ITERS	100
#define NEWTON_TOL		1e-14
/* Below this |c L|, ln h and its derivative by their series at c = 0. */
#define NEWTON_SERIES		1e-6

static const char *const model_names[STREAMS_NMODELS] = {
	[STREAMS_NONE] = "measured",
	[STREAMS_HACKER] = "hacker",
	[STREAMS_DINDA] = "dinda",
	[STREAMS_LOSS] = "loss",
	[STREAMS_LOG] = "log",
	[STREAMS_NEWTON] = "newton",
	[STREAMS_FULL2] = "full2",
	[STREAMS_BREAK] = "break",
	[STREAMS_AVG_ARITH] = "avg-arith",
	[STREAMS_AVG_GEOM] = "avg-geom",
	[STREAMS_AVG_QUAD] = "avg-quad",
};

const char *streams_model_name(enum streams_model m)
{
	return (unsigned)m < STREAMS_NMODELS ? model_names[m] : "?";
}

int streams_model_from_name(const char *name)
{
	for (int m = 0; m < STREAMS_NMODELS; m++)
		if (!strcmp(name, model_names[m]))
			return m;
	return -1;
}

int streams_model_points(enum streams_model m)
{
	switch (m) {
	case STREAMS_HACKER:
		return 1;
	case STREAMS_DINDA:
	case STREAMS_LOSS:
	case STREAMS_LOG:
		return 2;
	case STREAMS_NEWTON:
	case STREAMS_FULL2:
	case STREAMS_BREAK:
	case STREAMS_AVG_ARITH:
	case STREAMS_AVG_GEOM:
	case STREAMS_AVG_QUAD:
		return 3;
	default:
		return 0;
	}
}

const char *streams_reject_name(enum streams_reject r)
{
	static const char *const names[] = {
		[STREAMS_OK] = "ok",
		[STREAMS_BAD_INPUT] = "samples do not determine the coefficients",
		[STREAMS_A_NOT_POSITIVE] = "a' <= 0",
		[STREAMS_B_NOT_POSITIVE] = "b' <= 0",
		[STREAMS_B_NOT_NEGATIVE] = "b' >= 0",
		[STREAMS_C_BELOW_2] = "c' < 2",
		[STREAMS_C_NOT_POSITIVE] = "c' <= 0",
		[STREAMS_PEAK_BELOW_1] = "peak at or below one stream",
		[STREAMS_OUT_OF_DOMAIN] = "not defined at some n",
	};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

/* ---------------------------------------------------- coefficients -- */

/* y = n^2 / th^2: the measured p'_n. */
static double y_of(const struct streams_point *p)
{
	double q = p->n / p->th;

	return q * q;
}

static bool finite2(double a, double b)
{
	return isfinite(a) && isfinite(b);
}

/* Dinda et al. (eq. 5-6): y = a n^2 + b through two samples. */
static enum streams_reject dinda(const struct streams_point *p1, const struct streams_point *p2,
				 double *a, double *b)
{
	double y1 = y_of(p1), y2 = y_of(p2);

	*a = (y2 - y1) / (p2->n * p2->n - p1->n * p1->n);
	*b = y1 - *a * p1->n * p1->n;
	return finite2(*a, *b) ? STREAMS_OK : STREAMS_BAD_INPUT;
}

/* Eq. 14-15 on t = Th'_n (or Th_n^2): t = a n^(1/x) + b. */
static enum streams_reject loss_fit(double n1, double t1, double n2, double t2, double x,
				    double *a, double *b)
{
	double e1, e2;

	if (!(x >= 1) || !isfinite(x))
		return STREAMS_BAD_INPUT;
	e1 = pow(n1, 1 / x);
	e2 = pow(n2, 1 / x);
	*a = (t2 - t1) / (e2 - e1);
	*b = t1 - *a * e1;
	return finite2(*a, *b) ? STREAMS_OK : STREAMS_BAD_INPUT;
}

/* Eq. 18-19: y = a e^(b n). */
static enum streams_reject logm(const struct streams_point *p1, const struct streams_point *p2,
				double *a, double *b)
{
	double y1 = y_of(p1), y2 = y_of(p2);

	*b = log(y2 / y1) / (p2->n - p1->n);
	*a = y1 * exp(-*b * p1->n);
	return finite2(*a, *b) ? STREAMS_OK : STREAMS_BAD_INPUT;
}

/* Eq. 31-33: the divided differences of y. */
static enum streams_reject full2(const struct streams_point *p, struct streams_coef *k)
{
	double n1 = p[0].n, n2 = p[1].n, n3 = p[2].n;
	double y1 = y_of(&p[0]), y2 = y_of(&p[1]), y3 = y_of(&p[2]);
	double d12 = (y2 - y1) / (n2 - n1), d13 = (y3 - y1) / (n3 - n1);

	k->a = (d13 - d12) / (n3 - n2);
	k->b = d12 - (n1 + n2) * k->a;
	k->c = y1 - n1 * n1 * k->a - n1 * k->b;
	return finite2(k->a, k->b) && isfinite(k->c) ? STREAMS_OK : STREAMS_BAD_INPUT;
}

/* Eq. 22-24: c' by Newton's iteration, then a' and b'. */
static enum streams_reject newton(const struct streams_point *p, struct streams_coef *k)
{
	double y1 = y_of(&p[0]), y2 = y_of(&p[1]), y3 = y_of(&p[2]);
	double r = (y3 - y1) / (y2 - y1), c;

	if (streams_newton_order(p[0].n, p[1].n, p[2].n, r, &c, NULL))
		return STREAMS_BAD_INPUT;
	k->c = c;
	/* n2^c - n1^c = n1^c (e^(c ln(n2/n1)) - 1): no cancellation. */
	k->a = (y2 - y1) / (pow(p[0].n, c) * expm1(c * log(p[1].n / p[0].n)));
	k->b = y1 - k->a * pow(p[0].n, c);
	return finite2(k->a, k->b) ? STREAMS_OK : STREAMS_BAD_INPUT;
}

/* §3.2: dinda of (n1, n2) and of (n1, n3), averaged. */
static enum streams_reject average(enum streams_model m, const struct streams_point *p,
				   struct streams_coef *k)
{
	double a12, b12, a13, b13;

	if (dinda(&p[0], &p[1], &a12, &b12) || dinda(&p[0], &p[2], &a13, &b13))
		return STREAMS_BAD_INPUT;
	/* Kept for streams_check(): both pairs must satisfy dinda's propositions. */
	k->a2 = fmin(a12, a13);
	k->b2 = fmin(b12, b13);
	if (m == STREAMS_AVG_ARITH) {
		k->a = (a12 + a13) / 2;
		k->b = (b12 + b13) / 2;
	} else if (m == STREAMS_AVG_GEOM) {
		/* Undefined unless both are positive: the check rejects it then. */
		k->a = a12 > 0 && a13 > 0 ? sqrt(a12 * a13) : NAN;
		k->b = b12 > 0 && b13 > 0 ? sqrt(b12 * b13) : NAN;
	} else {
		k->a = sqrt((a12 * a12 + a13 * a13) / 2);
		k->b = sqrt((b12 * b12 + b13 * b13) / 2);
	}
	return STREAMS_OK;
}

static bool points_ok(const struct streams_point *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (!(p[i].n >= 1) || !(p[i].th > 0) || !isfinite(p[i].n) || !isfinite(p[i].th))
			return false;
		if (i && !(p[i].n > p[i - 1].n))
			return false;
	}
	return true;
}

enum streams_reject streams_coef(enum streams_model m, const struct streams_point *p,
				 double x, struct streams_coef *out)
{
	struct streams_coef k = { .model = m, .a = NAN, .b = NAN, .c = NAN, .a2 = NAN,
				  .b2 = NAN, .nb = NAN, .x = NAN };
	enum streams_reject r;
	int np = streams_model_points(m);

	*out = k;
	if (!np || !points_ok(p, np))
		return STREAMS_BAD_INPUT;
	switch (m) {
	case STREAMS_HACKER:
		k.a = 0;
		k.b = y_of(&p[0]);
		r = STREAMS_OK;
		break;
	case STREAMS_DINDA:
		r = dinda(&p[0], &p[1], &k.a, &k.b);
		break;
	case STREAMS_LOSS:
		k.x = x;
		r = loss_fit(p[0].n, p[0].th * p[0].th, p[1].n, p[1].th * p[1].th, x, &k.a, &k.b);
		break;
	case STREAMS_LOG:
		r = logm(&p[0], &p[1], &k.a, &k.b);
		break;
	case STREAMS_NEWTON:
		r = newton(p, &k);
		break;
	case STREAMS_FULL2:
		r = full2(p, &k);
		break;
	case STREAMS_BREAK:
		k.nb = p[1].n;
		r = dinda(&p[0], &p[1], &k.a, &k.b);
		if (r == STREAMS_OK)
			r = dinda(&p[1], &p[2], &k.a2, &k.b2);
		break;
	default:
		r = average(m, p, &k);
		break;
	}
	if (r == STREAMS_OK)
		*out = k;
	return r;
}

/* -------------------------------------------------------- the curve -- */

/* n / sqrt(@rad): NaN unless the radicand is positive. */
static double over_root(double n, double rad)
{
	return rad > 0 && isfinite(rad) ? n / sqrt(rad) : NAN;
}

double streams_eval(const struct streams_coef *k, double n)
{
	switch (k->model) {
	case STREAMS_HACKER:
		return over_root(n, k->b);
	case STREAMS_DINDA:
	case STREAMS_AVG_ARITH:
	case STREAMS_AVG_GEOM:
	case STREAMS_AVG_QUAD:
		return over_root(n, k->a * n * n + k->b);
	case STREAMS_LOSS: {
		double t = k->a * pow(n, 1 / k->x) + k->b;

		return t > 0 && isfinite(t) ? sqrt(t) : NAN;
	}
	case STREAMS_LOG:
		/* n e^(-b n / 2) / sqrt(a): no overflow of e^(b n). */
		return k->a > 0 ? n * exp(-k->b * n / 2) / sqrt(k->a) : NAN;
	case STREAMS_NEWTON:
		return over_root(n, k->a * pow(n, k->c) + k->b);
	case STREAMS_FULL2:
		return over_root(n, (k->a * n + k->b) * n + k->c);
	case STREAMS_BREAK:
		if (n <= k->nb)
			return over_root(n, k->a * n * n + k->b);
		return over_root(n, k->a2 * n * n + k->b2);
	default:
		return NAN;
	}
}

double streams_peak_n(const struct streams_coef *k)
{
	switch (k->model) {
	case STREAMS_HACKER:
	case STREAMS_DINDA:
	case STREAMS_LOSS:
	case STREAMS_AVG_ARITH:
	case STREAMS_AVG_GEOM:
	case STREAMS_AVG_QUAD:
		return INFINITY;
	case STREAMS_LOG:
		return k->b > 0 ? 2 / k->b : INFINITY;
	case STREAMS_NEWTON:
		if (k->c == 2)
			return INFINITY;
		return k->c > 2 && k->a > 0 && k->b > 0 ?
			pow(2 * k->b / (k->a * (k->c - 2)), 1 / k->c) : NAN;
	case STREAMS_FULL2:
		return k->b < 0 && k->c > 0 ? -2 * k->c / k->b : NAN;
	case STREAMS_BREAK:
		/* The second piece falls when b2 < 0 (its derivative's sign). */
		return k->b2 < 0 ? k->nb : INFINITY;
	default:
		return NAN;
	}
}

/* a n^2 + b > 0 on [lo, hi] (a > 0: the smallest is at lo). */
static bool dinda_defined(double a, double b, double lo)
{
	return a * lo * lo + b > 0;
}

/* (a n + b) n + c > 0 on [1, n_max]: at the vertex if inside, else the ends. */
static bool full2_defined(const struct streams_coef *k, double n_max)
{
	double v = -k->b / (2 * k->a);

	if (v > 1 && v < n_max)
		return (k->a * v + k->b) * v + k->c > 0;
	return k->a + k->b + k->c > 0 && (k->a * n_max + k->b) * n_max + k->c > 0;
}

static enum streams_reject check_newton(const struct streams_coef *k)
{
	if (!(k->a > 0))
		return STREAMS_A_NOT_POSITIVE;
	if (!(k->b > 0))
		return STREAMS_B_NOT_POSITIVE;
	if (!(k->c >= 2))
		return STREAMS_C_BELOW_2;
	/* c' = 2: (2b'/0)^(1/2) = inf > 1, dinda's curve. */
	if (k->c > 2 && !(pow(2 * k->b / (k->a * (k->c - 2)), 1 / k->c) > 1))
		return STREAMS_PEAK_BELOW_1;
	return STREAMS_OK;
}

static enum streams_reject check_full2(const struct streams_coef *k, double n_max)
{
	if (!(k->a > 0))
		return STREAMS_A_NOT_POSITIVE;
	if (!(k->b < 0))
		return STREAMS_B_NOT_NEGATIVE;
	if (!(k->c > 0))
		return STREAMS_C_NOT_POSITIVE;
	if (!(2 * k->c + k->b > 0))
		return STREAMS_PEAK_BELOW_1;
	return full2_defined(k, n_max) ? STREAMS_OK : STREAMS_OUT_OF_DOMAIN;
}

/* The model's own checks (§5 and its domain). */
static enum streams_reject check_model(const struct streams_coef *k, double n_max)
{
	switch (k->model) {
	case STREAMS_HACKER:
		return k->b > 0 && isfinite(k->b) ? STREAMS_OK : STREAMS_B_NOT_POSITIVE;
	case STREAMS_DINDA:
		if (!(k->a > 0))
			return STREAMS_A_NOT_POSITIVE;
		return k->b > 0 && isfinite(k->b) ? STREAMS_OK : STREAMS_B_NOT_POSITIVE;
	case STREAMS_AVG_ARITH:
	case STREAMS_AVG_GEOM:
	case STREAMS_AVG_QUAD:
		/* a2, b2: the smaller of each pair's (average()). */
		if (!(k->a2 > 0) || !(k->a > 0))
			return STREAMS_A_NOT_POSITIVE;
		return k->b2 > 0 && k->b > 0 ? STREAMS_OK : STREAMS_B_NOT_POSITIVE;
	case STREAMS_LOSS:
		if (!(k->a > 0))
			return STREAMS_A_NOT_POSITIVE;
		/* Rising: smallest at n = 1. */
		return k->a + k->b > 0 ? STREAMS_OK : STREAMS_OUT_OF_DOMAIN;
	case STREAMS_LOG:
		return k->a > 0 && isfinite(k->b) ? STREAMS_OK : STREAMS_A_NOT_POSITIVE;
	case STREAMS_NEWTON:
		return check_newton(k);
	case STREAMS_FULL2:
		return check_full2(k, n_max);
	case STREAMS_BREAK:
		if (!(k->a > 0) || !(k->a2 > 0))
			return STREAMS_A_NOT_POSITIVE;
		if (!(k->b > 0))
			return STREAMS_B_NOT_POSITIVE;
		/* The second piece rises in a n^2 + b from its start. */
		return dinda_defined(k->a2, k->b2, k->nb) ? STREAMS_OK : STREAMS_OUT_OF_DOMAIN;
	default:
		return STREAMS_BAD_INPUT;
	}
}

/*
 * Every curve here is monotone or has one peak: finite at both ends and at
 * the peak, it is finite in between (coefficients from extreme samples can
 * make e^(b'n) or a radicand overflow).
 */
enum streams_reject streams_check(const struct streams_coef *k, double n_max)
{
	enum streams_reject r = check_model(k, n_max);
	double peak = streams_peak_n(k);

	if (r != STREAMS_OK)
		return r;
	if (!isfinite(streams_eval(k, 1)) || !isfinite(streams_eval(k, n_max)))
		return STREAMS_OUT_OF_DOMAIN;
	if (peak > 1 && peak < n_max && !isfinite(streams_eval(k, peak)))
		return STREAMS_OUT_OF_DOMAIN;
	return STREAMS_OK;
}

/* ------------------------------------------------ Newton's iteration -- */

/* ln |e^x - 1|, also where e^x overflows; x != 0. */
static double ln_abs_expm1(double x)
{
	if (x > 0)
		return x + log1p(-exp(-x));
	return log1p(-exp(x));
}

/*
 * phi(c) = ln h(c) - ln r with h(c) = expm1(c l3) / expm1(c l2) (eq. 22
 * divided by n1^c), l = ln(n / n1); its derivative in @d.
 */
static double phi(double c, double l2, double l3, double ln_r, double *d)
{
	if (fabs(c * l3) < NEWTON_SERIES) {
		/* ln h = ln(l3/l2) + c (l3 - l2)/2 + O(c^2). */
		*d = (l3 - l2) / 2 + c * (l3 * l3 - l2 * l2) / 12;
		return log(l3 / l2) + c * (l3 - l2) / 2 - ln_r;
	}
	/* d/dc ln|e^(c l) - 1| = l / (1 - e^(-c l)). */
	*d = l3 / -expm1(-c * l3) - l2 / -expm1(-c * l2);
	return ln_abs_expm1(c * l3) - ln_abs_expm1(c * l2) - ln_r;
}

/* The ends of a bracket of the root and phi there. */
struct bracket {
	double lo, hi, flo, fhi;
};

/* phi(lo) < 0 < phi(hi); -1 if there is none within NEWTON_C_MAX. */
static int bracket(double l2, double l3, double ln_r, struct bracket *b)
{
	double d;

	b->lo = -1;
	b->hi = 4;
	while ((b->flo = phi(b->lo, l2, l3, ln_r, &d)) >= 0) {
		b->lo *= 2;
		if (b->lo < -NEWTON_C_MAX)
			return -1;
	}
	while ((b->fhi = phi(b->hi, l2, l3, ln_r, &d)) <= 0) {
		b->hi *= 2;
		if (b->hi > NEWTON_C_MAX)
			return -1;
	}
	return 0;
}

/*
 * The next iterate: Newton's step (eq. 25) when it stays inside the
 * bracket; else the secant through the bracket's ends (a Newton step
 * overshoots a root that sits by an end), else its middle.
 */
static double next_iterate(double x, double f, double d, const struct bracket *b)
{
	double next = x - f / d;

	if (next > b->lo && next < b->hi)
		return next;
	next = (b->lo * b->fhi - b->hi * b->flo) / (b->fhi - b->flo);
	if (next > b->lo && next < b->hi)
		return next;
	return (b->lo + b->hi) / 2;
}

int streams_newton_order(double n1, double n2, double n3, double r, double *c, int *iters)
{
	double l2 = log(n2 / n1), l3 = log(n3 / n1), ln_r, x = NEWTON_C0;
	struct bracket b;
	int it;

	if (!(r > 1) || !isfinite(r) || !(l2 > 0) || !(l3 > l2) || !isfinite(l3))
		return -1;
	ln_r = log(r);
	if (bracket(l2, l3, ln_r, &b))
		return -1;
	if (!(x > b.lo && x < b.hi))
		x = (b.lo + b.hi) / 2;
	for (it = 1; it <= NEWTON_MAX_ITERS; it++) {
		double d, f = phi(x, l2, l3, ln_r, &d), next;

		if (f == 0)
			break;
		if (f < 0) {
			b.lo = x;
			b.flo = f;
		} else {
			b.hi = x;
			b.fhi = f;
		}
		next = next_iterate(x, f, d, &b);
		/* Converged, or the bracket is down to rounding. */
		if (fabs(next - x) <= NEWTON_TOL * (1 + fabs(x)) ||
		    b.hi - b.lo <= NEWTON_TOL * (1 + fabs(x))) {
			x = next;
			break;
		}
		x = next;
	}
	if (iters)
		*iters = it;
	*c = x;
	return isfinite(x) ? 0 : -1;
}

/* ---------------------------------------------------- loss-rate form -- */

int streams_loss_coef(double n1, double p1, double n2, double p2, double x,
		      double *a, double *b)
{
	if (!(n1 >= 1) || !(n2 > n1) || !(p1 > 0) || !(p2 > 0))
		return -1;
	return loss_fit(n1, n1 * n1 / p1, n2, n2 * n2 / p2, x, a, b) == STREAMS_OK ? 0 : -1;
}

double streams_loss_rate(double a, double b, double x, double n)
{
	double t = a * pow(n, 1 / x) + b;

	return t > 0 && isfinite(t) ? n * n / t : NAN;
}

double streams_hacker_bps(double mss_bytes, double rtt_s, double p, double c, double n)
{
	if (!(rtt_s > 0) || !(p > 0))
		return NAN;
	return 8 * mss_bytes * c / rtt_s * n / sqrt(p);
}
