/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Throughput of n parallel TCP streams: the models of Yildirim, Yin and
 * Kosar, "Prediction of Optimal Parallelism Level in Wide Area Data
 * Transfers" (IEEE TPDS 2011), and of the two models they start from
 * (Hacker, Noble and Athey; Lu, Qiao, Dinda and Bustamante).
 *
 * Every model but the packet-loss one writes the aggregate throughput of
 * n streams as Th_n = n / sqrt(p'_n), p'_n = p_n RTT_n^2 / (c^2 MSS^2)
 * (the paper's eq. 2-3), and models p'_n. With y_n = n^2 / Th_n^2 the
 * measured p'_n, a model is a curve through the points (n, y_n), and its
 * coefficients follow from as many samples (n, Th_n) as it has:
 *
 *  hacker  p'_n = b'                  (eq. 2: n times one stream), 1 sample
 *  dinda   p'_n = a' n^2 + b'         (eq. 3-6), 2 samples
 *  loss    Th'_n = a' n^(1/x) + b'    (eq. 12-15), 2 samples and x; below
 *  log     p'_n = a' e^(b' n)         (eq. 16-19), 2 samples
 *  newton  p'_n = a' n^c' + b'        (eq. 20-25), 3 samples
 *  full2   p'_n = a' n^2 + b' n + c'  (eq. 26-33), 3 samples
 *  break   dinda through (n1, n2) up to n2, dinda through (n2, n3)
 *          above it (§3.2), 3 samples
 *  avg-*   dinda's a', b' of (n1, n2) and of (n1, n3) averaged,
 *          arithmetically, geometrically or quadratically (§3.2), 3 samples
 *
 * How the paper's garbled equations are read here:
 *  - eq. 19: b' = log base e^(n1 - n2) of (Th2^2 n1^2) / (Th1^2 n2^2),
 *    that is b' = ln(y2 / y1) / (n2 - n1); eq. 18: a' = y1 e^(-b' n1).
 *  - eq. 31-33 are Newton's divided differences of y over n1, n2, n3:
 *    a' = ((y3 - y1)/(n3 - n1) - (y2 - y1)/(n2 - n1)) / (n3 - n2),
 *    b' = (y2 - y1)/(n2 - n1) - (n1 + n2) a',  c' = y1 - n1^2 a' - n1 b'.
 *    (eq. 28-30 write b'n where b'n_i is meant.)
 *  - eq. 22 has a root at c' = 0 on both sides (0/0); it is solved as
 *    h(c) = (n3^c - n1^c) / (n2^c - n1^c) = R, R = (y3 - y1)/(y2 - y1),
 *    h increasing from 1 (c -> -inf) to inf, so there is exactly one root
 *    when R > 1 and none otherwise. Newton's iteration (eq. 25) runs on
 *    ln h(c) - ln R, which is nearly linear in c, from c'_0 = 1, and falls
 *    back to bisection within a bracket when a step leaves it.
 *  - the packet-loss model: eq. 12 defines Th'_n = RTT^2 Th_n^2 /
 *    (MSS^2 c^2) = n^2 / p_n. From loss rates, eq. 14-15 give a', b' and
 *    eq. 13 the loss rate p_n = n^2 / Th'_n, which eq. 2 turns into a
 *    throughput (streams_loss_*()). From throughputs alone, Th_n^2 is
 *    Th'_n times the constant (MSS c / RTT)^2, so the same eq. 14-15 on
 *    z_n = Th_n^2 give a' and b' in the throughput's units squared and
 *    Th_n = sqrt(a' n^(1/x) + b'): that is how the fit uses it.
 *  - the §5 propositions (streams_check()): dinda a' > 0, b' > 0;
 *    newton a' > 0, b' > 0, c' >= 2 and (2b' / (a'(c' - 2)))^(1/c') > 1
 *    (the peak past one stream; c' = 2 is dinda's curve, no peak, and is
 *    accepted); full2 a' > 0, b' < 0, c' > 0, 2c' + b' > 0 (the proof's
 *    "> 1" is the peak -2c'/b' > 1, which is 2c' + b' > 0). Averaging and
 *    the break function take dinda's: both averaged pairs, and the break
 *    function's rising piece, satisfy them; its second piece models the
 *    fall (figure 2.d), which dinda's curve does only with b' < 0, so
 *    there only a' > 0 is asked (the streams beyond n2 add less than they
 *    carry). The paper states none for the logarithmic and packet-loss
 *    models: log needs a' > 0 (true of any measured curve); loss needs
 *    a' > 0 (the rising, logarithmic curve the model is for). Every model
 *    must also be defined (radicand > 0, and the throughput finite) at
 *    every n from 1 to n_max, the paper's predictability P_pre = 1
 *    (§6.2.1).
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_STREAMS_H
#define RXB_SOLVER_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

/* Largest stream count a curve is evaluated at. */
#define STREAMS_N_LIMIT		1024

enum streams_model {
	STREAMS_NONE = 0,	/* no model: the best measured point */
	STREAMS_HACKER,
	STREAMS_DINDA,
	STREAMS_LOSS,
	STREAMS_LOG,
	STREAMS_NEWTON,
	STREAMS_FULL2,
	STREAMS_BREAK,
	STREAMS_AVG_ARITH,
	STREAMS_AVG_GEOM,
	STREAMS_AVG_QUAD,
	STREAMS_NMODELS
};

/* "hacker", "dinda", ..., "avg-quad"; "measured" for NONE; "?" otherwise. */
const char *streams_model_name(enum streams_model m);
/* The model named @name, or -1. */
int streams_model_from_name(const char *name);
/* Samples the model's coefficients take: 1, 2 or 3 (0 for NONE). */
int streams_model_points(enum streams_model m);

/* One sample: n streams gave th (any unit of throughput, > 0). */
struct streams_point {
	double n;
	double th;
};

/*
 * A model's coefficients, named as in the paper: a', b', c' in a, b, c;
 * the break function's second piece in a2, b2 from n = nb on; the
 * packet-loss model's exponent 1/x in x.
 */
struct streams_coef {
	enum streams_model model;
	double a, b, c;
	double a2, b2, nb;
	double x;
};

/* Why a fit is rejected (streams_check()). */
enum streams_reject {
	STREAMS_OK = 0,
	STREAMS_BAD_INPUT,	/* n not increasing, th not positive, no root */
	STREAMS_A_NOT_POSITIVE,
	STREAMS_B_NOT_POSITIVE,
	STREAMS_B_NOT_NEGATIVE,	/* full2 */
	STREAMS_C_BELOW_2,	/* newton */
	STREAMS_C_NOT_POSITIVE,	/* full2 */
	STREAMS_PEAK_BELOW_1,	/* newton (2b'/(a'(c'-2)))^(1/c') <= 1, full2 2c'+b' <= 0 */
	STREAMS_OUT_OF_DOMAIN,	/* radicand <= 0 somewhere in 1..n_max */
};

const char *streams_reject_name(enum streams_reject r);

/*
 * @m's coefficients from exactly streams_model_points(@m) samples @p,
 * increasing in n, th > 0 (the loss model with exponent 1 / @x, x >= 1;
 * @x is ignored by the others). STREAMS_OK, or STREAMS_BAD_INPUT when the
 * samples do not determine them (equal y where a difference divides, eq.
 * 22 without a root, non-finite results).
 */
enum streams_reject streams_coef(enum streams_model m, const struct streams_point *p,
				 double x, struct streams_coef *out);

/*
 * The §5 propositions for @k (see above), and that the curve is defined
 * at every n in [1, @n_max]. STREAMS_OK or the first one that fails.
 */
enum streams_reject streams_check(const struct streams_coef *k, double n_max);

/* The predicted throughput at @n, or NaN where the model is not defined. */
double streams_eval(const struct streams_coef *k, double n);

/*
 * Where the curve peaks, from its coefficients: newton
 * (2b'/(a'(c'-2)))^(1/c'), full2 -2c'/b', log 2/b', break nb when its
 * second piece falls; +inf for a curve that rises for ever (hacker, dinda,
 * loss, averaging, newton with c' = 2); NaN when the coefficients give none.
 */
double streams_peak_n(const struct streams_coef *k);

/*
 * Eq. 22 by Newton's iteration (eq. 25): the c' with
 * (n3^c' - n1^c') / (n2^c' - n1^c') = @r, for n1 < n2 < n3. 0 with the
 * root in @c and the iterations in @iters (may be NULL), or -1 when
 * @r <= 1 (no root) or the inputs are not finite.
 */
int streams_newton_order(double n1, double n2, double n3, double r, double *c, int *iters);

/*
 * The packet-loss model from loss rates (eq. 11-15). Th'_n = n^2 / p_n:
 * a', b' from the loss rates @p1, @p2 at @n1 < @n2 with exponent 1 / @x
 * (eq. 14-15): 0, or -1 when they do not determine them.
 */
int streams_loss_coef(double n1, double p1, double n2, double p2, double x,
		      double *a, double *b);
/* Eq. 13: p_n = n^2 / (a' n^(1/x) + b'); NaN where that is not positive. */
double streams_loss_rate(double a, double b, double x, double n);
/*
 * Eq. 2 (Hacker et al.): the upper bound on the throughput of @n streams
 * of @mss_bytes segments with round-trip time @rtt_s and loss rate @p,
 * c the constant (sqrt(3/2) for TCP Reno's saw-tooth), in bits/s.
 */
double streams_hacker_bps(double mss_bytes, double rtt_s, double p, double c, double n);

#endif
