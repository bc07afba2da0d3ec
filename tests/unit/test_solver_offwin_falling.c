// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A slot whose windows crowd against one of its edges (solver/offwin_piece.h):
 * their mean less than √3 sd from the edge, as waits just past a scheduler
 * tick sit at the foot of their slot. Checked against a second method:
 *  - the law's first two moments, read back through the public loss and
 *    end term below the span, are the measured ones;
 *  - the test finds the truncated exponential with those moments itself
 *    (Simpson's rule for its moments, bisection in κ on a linear grid) and
 *    the loss, the losing windows and the end term agree with Simpson's
 *    rule over that density, crowded at the foot and at the top;
 *  - (m − edge)/s <= 1: the exponential of rate 1/s over the whole slot;
 *  - a spread just inside and just past √3 sd from the edge: the loss moves
 *    continuously from the uniform law;
 *  - short runs between windows, so the room depends on the window before:
 *    the loss against a double Simpson integral over both windows.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "solver/offwin.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"

#define NS 32
#define K_PKTS 3641.0
#define SLOT_4MS 22		/* [4.19, 8.39) ms */
#define PANELS 4000

/* A law: density ∝ e^(−β t) on [lo, hi], t from lo (or from hi: top). */
struct law {
	double lo, hi, beta;
	bool top;
};

static double law_weight(const struct law *l, double w)
{
	return exp(-l->beta * (l->top ? l->hi - w : w - l->lo));
}

enum what { EXCESS, TAIL, END, MEAN, SQUARE };

static double what_at(enum what what, double w, double x)
{
	switch (what) {
	case EXCESS: return w - x;
	case TAIL: return 1.0;
	case END: return (w * w - x * x) / 2.0;
	case MEAN: return w;
	default: return w * w;
	}
}

/*
 * E of @what over @l, counting only w > x for the first three (the kink
 * at x a panel edge), by Simpson's rule (PANELS panels), normalised by
 * Simpson's integral of the density.
 */
static double simpson(const struct law *l, double x, enum what what)
{
	double a = what <= END ? fmax(l->lo, x) : l->lo, h, sum = 0.0, z = 0.0;
	double hz = (l->hi - l->lo) / PANELS;

	for (int i = 0; i <= PANELS; i++) {
		double c = (i == 0 || i == PANELS) ? 1 : (i % 2 ? 4 : 2);

		z += c * law_weight(l, l->lo + i * hz);
	}
	z *= hz / 3.0;
	if (a >= l->hi)
		return 0.0;
	h = (l->hi - a) / PANELS;
	for (int i = 0; i <= PANELS; i++) {
		double w = a + i * h, c = (i == 0 || i == PANELS) ? 1 : (i % 2 ? 4 : 2);

		sum += c * law_weight(l, w) * what_at(what, w, x);
	}
	return sum * h / 3.0 / z;
}

/*
 * The truncated exponential falling from @edge (the slot's foot, or its
 * top: @top) with mean @m and sd @s, 1 < |m − edge| / s < √3: κ = β L by
 * bisection on [0, 500] with Simpson's moments of e^(−κ t) on [0, 1].
 */
static struct law fit(double edge, bool top, double m, double s)
{
	double rho = fabs(m - edge) / s, lo = 0.0, hi = 500.0, mt = 0.0, len;
	struct law unit = { 0.0, 1.0, 0.0, false };

	for (int i = 0; i < 60; i++) {
		double sq;

		unit.beta = (lo + hi) / 2.0;
		mt = simpson(&unit, 0.0, MEAN);
		sq = simpson(&unit, 0.0, SQUARE);
		if (mt > rho * sqrt(sq - mt * mt))
			lo = unit.beta;
		else
			hi = unit.beta;
	}
	len = fabs(m - edge) / mt;
	if (top)
		return (struct law){ edge - len, edge, unit.beta / len, true };
	return (struct law){ edge, edge + len, unit.beta / len, false };
}

struct win {
	double count[NS], mean_s[NS], sd_s[NS];
	struct offwin_in in;
};

/*
 * Waits after a wakeup, all in slot 22 with the moments given, the
 * longest @cap_s: each from an empty queue (room K/λ).
 */
static void wake_init(struct win *w, double mean_s, double sd_s, double cap_s)
{
	memset(w, 0, sizeof(*w));
	w->count[SLOT_4MS] = 1.0;
	w->mean_s[SLOT_4MS] = mean_s;
	w->sd_s[SLOT_4MS] = sd_s;
	w->in = (struct offwin_in){
		.nslots = NS, .queue_pkts = K_PKTS, .on_pkts_per_s = 1e7,
		.wake_per_s = 20.0, .wake_count = w->count, .wake_mean_s = w->mean_s,
		.wake_sd_s = w->sd_s, .wake_max_s = cap_s,
	};
}

/* The loss, losing windows and end term at K/λ = @x_s against @l. */
static void check_law(const struct win *w, const struct law *l, double x_s, const char *what)
{
	double lambda = K_PKTS / x_s, want = 20.0 * simpson(l, x_s, EXCESS);
	char name[96];

	snprintf(name, sizeof(name), "%s at %.3f ms", what, x_s * 1e3);
	if (want == 0.0)
		assert_true(offwin_loss(&w->in, lambda, OFFWIN_LOGUNIFORM) == 0.0);
	else
		check_rel(offwin_loss(&w->in, lambda, OFFWIN_LOGUNIFORM), want, 1e-7, name);
	check_abs(offwin_lossy_per_s(&w->in, lambda, OFFWIN_LOGUNIFORM),
		  20.0 * simpson(l, x_s, TAIL), 1e-9, name);
	check_abs(offwin_round_absorb(&w->in, lambda, OFFWIN_LOGUNIFORM),
		  lambda * 20.0 * simpson(l, x_s, END), 1e-7, name);
}

/* Mean and sd of the law as the public functions give them, from below its span. */
static void read_moments(const struct win *w, double *mean, double *sd)
{
	double x = 0.004, lambda = K_PKTS / x;
	double excess = offwin_loss(&w->in, lambda, OFFWIN_LOGUNIFORM) / 20.0;
	double end = offwin_round_absorb(&w->in, lambda, OFFWIN_LOGUNIFORM) / (20.0 * lambda);

	*mean = excess + x;
	*sd = sqrt(2.0 * end + x * x - *mean * *mean);
}

/* 4.50 ± 0.233 ms: 1.30 sd above the slot's foot 4.194 ms. */
static void test_foot(void **state)
{
	const double xs[] = { 0.0043, 0.0045, 0.0048, 0.00505, 0.0052, 0.0056 };
	double a, b, mean, sd;
	struct win w;
	struct law l;

	(void)state;
	offwin_slot_s(SLOT_4MS, &a, &b);
	wake_init(&w, 0.0045, 0.000233, 0.0);
	read_moments(&w, &mean, &sd);
	check_rel(mean, 0.0045, 1e-9, "mean");
	check_rel(sd, 0.000233, 1e-6, "sd");
	l = fit(a, false, 0.0045, 0.000233);
	/* It keeps a tail past the 4.80 ms a uniform shrunk into the slot would end at. */
	assert_true(l.hi > 0.0050 && l.hi < b);
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		check_law(&w, &l, xs[i], "foot");
}

/* Crowded against the longest wait, 13.2 ms: 12.0 ± 1.0 ms, 1.2 sd below it. */
static void test_top(void **state)
{
	const double xs[] = { 0.0095, 0.0110, 0.0120, 0.0128, 0.0131 };
	struct win w;
	struct law l;

	(void)state;
	wake_init(&w, 0.0120, 0.0010, 0.0132);
	w.count[SLOT_4MS] = 0.0;
	w.count[23] = 1.0;
	w.mean_s[23] = 0.0120;
	w.sd_s[23] = 0.0010;
	l = fit(0.0132, true, 0.0120, 0.0010);
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		check_law(&w, &l, xs[i], "top");
}

/* 4.40 ± 0.30 ms: 0.69 sd above the foot: e^(−t / 0.30 ms) over the slot. */
static void test_beyond_exponential(void **state)
{
	double a, b;
	struct win w;
	struct law l;

	(void)state;
	offwin_slot_s(SLOT_4MS, &a, &b);
	wake_init(&w, 0.0044, 0.0003, 0.0);
	l = (struct law){ a, b, 1.0 / 0.0003, false };
	check_law(&w, &l, 0.0040, "exponential");
	check_law(&w, &l, 0.0046, "exponential");
	check_law(&w, &l, 0.0060, "exponential");
}

/* Either side of m − √3 s = the foot the loss moves by what the sd moved. */
static void test_continuous_at_uniform(void **state)
{
	double a, b, m = 0.0047, s0, lambda = K_PKTS / 0.0049, l0, l1;
	struct win w;

	(void)state;
	offwin_slot_s(SLOT_4MS, &a, &b);
	s0 = (m - a) / sqrt(3.0);
	wake_init(&w, m, s0 * (1.0 - 1e-7), 0.0);
	l0 = offwin_loss(&w.in, lambda, OFFWIN_LOGUNIFORM);
	wake_init(&w, m, s0 * (1.0 + 1e-7), 0.0);
	l1 = offwin_loss(&w.in, lambda, OFFWIN_LOGUNIFORM);
	check_rel(l1, l0, 1e-5, "continuous");
}

/*
 * Windows after preemption 4.50 ± 0.233 ms with 4.6 ms runs between them
 * at a drain c = 2 λ, K/λ = 4.7 ms: a run frees λ 4.6 ms, so a window
 * finds F(D') = K − (min(K, λ D') − (c − λ) g)+: K after a window shorter
 * than 4.6 ms, less after a longer one. The loss ν E[(W − F(D')/λ)+]
 * against Simpson over D' of Simpson over W.
 */
static void test_room_after_previous(void **state)
{
	const double lambda = K_PKTS / 0.0047, per_s = 40.0, gap_s = 0.0046;
	double a, b, sum = 0.0, z = 0.0, h;
	struct win w;
	struct law l;

	(void)state;
	offwin_slot_s(SLOT_4MS, &a, &b);
	memset(&w, 0, sizeof(w));
	w.count[SLOT_4MS] = 1.0;
	w.mean_s[SLOT_4MS] = 0.0045;
	w.sd_s[SLOT_4MS] = 0.000233;
	w.in = (struct offwin_in){
		.per_s = per_s, .count = w.count, .mean_s = w.mean_s, .sd_s = w.sd_s,
		.nslots = NS, .queue_pkts = K_PKTS, .on_pkts_per_s = 2.0 * lambda,
		.gap_s = gap_s,
	};
	l = fit(a, false, 0.0045, 0.000233);
	h = (l.hi - l.lo) / 2000;
	for (int i = 0; i <= 2000; i++) {
		double d = l.lo + i * h, c = (i == 0 || i == 2000) ? 1 : (i % 2 ? 4 : 2);
		double room = offwin_room_pkts(K_PKTS, lambda, 2.0 * lambda, gap_s, d) / lambda;

		sum += c * law_weight(&l, d) * simpson(&l, room, EXCESS);
		z += c * law_weight(&l, d);
	}
	check_rel(offwin_loss(&w.in, lambda, OFFWIN_LOGUNIFORM), per_s * sum / z, 1e-6,
		  "room after the previous window");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_foot),
	cmocka_unit_test(test_top),
	cmocka_unit_test(test_beyond_exponential),
	cmocka_unit_test(test_continuous_at_uniform),
	cmocka_unit_test(test_room_after_previous),
)
