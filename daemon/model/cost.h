/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver's cost per packet (stage B's cpu_ns_per_pkt): the fit of
 * its on-CPU time against its wake-ups, packets and empty reads, and the
 * choice among the estimates - saturated, kept up, the fit, the last fit
 * that could separate its terms, the plain ratio, capped by what the
 * receiver paid all in while busy.
 */
#ifndef RXB_DAEMON_MODEL_COST_H
#define RXB_DAEMON_MODEL_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/model/value.h"
#include "rxb/measure.h"
#include "solver/lsq.h"

/*
 * A decaying least-squares fit of the receiver's on-CPU time t per epoch
 * against its wake-ups w, packets p and empty reads z:
 *	t = a w + b p + e z		(cost_solve3())
 *	t = a w + b p			(cost_solve2(), the sums of z unused)
 * A busy-polling receiver never sleeps (w ~ 0) and spends most of its time
 * turning on an empty socket, one empty read per turn: without the z term
 * that time is charged to the packets (14.5 us per packet against a
 * saturated 1.1-1.6 us in the e2e runs, docs/e2e.md 8). The sums decay
 * like the ratios (weight d per epoch); n counts the epochs (decayed too);
 * sz and st are the decayed sums of z and t, for the spin's share of the
 * on-CPU time (e sz / st), sw that of w; stt gives the residual sum of
 * squares, hence the standard error of b (COST_FIT_MAX_REL_SE).
 */
#define COST_FIT_MIN_EPOCHS	4.0	/* decayed epochs behind a fit */
/* 1 - r^2 of (w, p) below: a, b not separable. With three terms: each
 * term's 1 - R^2 against the other two (uncentred, 1 / its variance
 * inflation factor) must reach it - the same bound for two. */
#define COST_FIT_MIN_SPREAD	0.02
/*
 * The standard error of b at most this share of b, or the fit is not
 * used: b's variance is s^2 (M^-1)_bb, s^2 the residual sum of squares
 * over (n_eff - terms), n_eff = n^2 / n2 the effective number of the
 * decayed epochs (a steady series at 250 ms and LEARN_TAU_S: 40). The
 * spread above says whether the terms are separable in principle; this
 * says whether the epochs' noise lets them be. Two hogs starting beside
 * a blocking receiver at a steady rate raised its on-CPU time per packet
 * from 4.1 to 6.5 us (cache and wake-up latency) while its packets fell
 * 17 % and its wake-ups stayed: the two-term fit explained the rise by
 * wake-ups at 25 us each and b fell to 40 ns and below (standard error
 * 900 ns), which passed the spread test at 0.03-0.05, and the rate rose
 * with the load (CI, 2026-11-26); at 15 % a fit over both loads still
 * passed 10 s after the hogs with b 23 % low (test_fit_load_change).
 * Quiet epochs of the same receiver give b within 3-8.5 %.
 */
#define COST_FIT_MAX_REL_SE	0.10
/* Spin (e z) at least this share of the on-CPU time: a fit without the z
 * term would charge it to the packets, so when the three-term fit cannot
 * be solved the last one that could is kept rather than the two-term fit. */
#define COST_FIT_MAX_SPIN		0.1
/* Wake-ups at most this many per empty read: a polling receiver's few (at
 * a round's end), which can be as steady per epoch as its spin. When they
 * cannot be separated the fit is t = b p + e z, their time (a few us each
 * against thousands of reads) going mostly to e. A blocking receiver
 * makes about one empty read per wake-up: far above. */
#define COST_FIT_RARE_WAKEUPS	0.01
/*
 * Empty reads per packet (decayed over the fit's epochs) from which the
 * ratio on-CPU / packets is spin, not a cost: a busy-polling receiver at a
 * low rate turned its loop 29 times per packet (~28 us "per packet"
 * against a 1.6 us cost), and a rate computed from that kept the arrivals
 * low enough to keep it so (docs/e2e.md §8). One read per packet or wake-up
 * is what a receiver that blocks or naps makes.
 */
#define COST_RATIO_MAX_EMPTY_READS	2.0

/* Busy epochs without overflow behind the cap of struct learn.busy.all_in. */
#define COST_CAP_MIN_EPOCHS	2

/* The receiver's cost fit and what it last gave. */
struct cost_fit {
	struct lsq sums;		/* on-CPU ns = a wake-ups + b pkts
					 * (+ e empty reads) */
	double a_ns, b_ns;		/* the last separable fit's a, b */
	bool known;			/* a_ns, b_ns set */
	double a3_ns, b3_ns, e3_ns;	/* the last three-term fit's (a NaN:
					 * no wake-ups) */
	bool known3;			/* a3_ns, b3_ns, e3_ns set */
	/*
	 * The cost of one empty read (ns): e of the last three-term fit
	 * whose e was known to within COST_FIT_MAX_REL_SE, even if its b was
	 * not (cost_solve3() returned -2); NaN before any. What takes a
	 * spinning receiver's spin out of its saturated epochs.
	 */
	double spin_e_ns;
};

/* Which estimate cpu_ns_per_pkt is. */
enum cost_basis {
	COST_NONE = 0,	/* none: cpu_ns_per_pkt is missing */
	COST_SATURATED,	/* struct busy_sums: on-CPU ns / pkt while overflowing */
	COST_FIT,		/* b of the fit over the recent epochs */
	COST_LAST_FIT,	/* b of the last fit that could separate its terms */
	COST_RATIO,		/* on-CPU ns / pkt over all epochs */
	COST_KEPT_UP,	/* the kept-up cost, the saturated one above it
				 * (struct inputs_env.depth_cost) */
	COST_BUSY,		/* what it paid, wake-ups and all, while it
				 * was busy and kept up (struct learn.busy.all_in), when
				 * below the estimate chosen */
};

const char *cost_basis_name(enum cost_basis b);

struct learn;
struct inputs_stage_b;

/* Zero @f, with no spin cost known (NaN). */
void cost_fit_init(struct cost_fit *f);

/*
 * Fold one epoch (@w wake-ups, @p packets, @z empty reads, @t on-CPU ns)
 * into @f after decaying it by @d, and keep what the fits then give.
 */
void cost_fit_add(struct cost_fit *f, double d, double w, double p, double z, double t);

/* Decay @f's sums by @d: an epoch that measured nothing. */
void cost_fit_decay(struct cost_fit *f, double d);

/*
 * The fit's per-wake-up and per-packet costs (ns) into @a and @b: 0 when
 * the fit is usable, -1 when it has had too few epochs or the epochs
 * cannot separate the two, or b's standard error exceeds COST_FIT_MAX_REL_SE
 * of it (then @a, @b are NaN). Like the ratios, a fit
 * that qualified stays usable while the flow is idle: decay scales every
 * sum alike, which leaves a and b as they were. A negative a is not physical:
 * the fit is then b alone (a = 0, b = sum t p / sum p^2).
 */
int cost_solve2(const struct lsq *f, double *a, double *b);

/*
 * The three-term fit t = a w + b p + e z into @a, @b, @e: 0 when usable,
 * else -1 with @a, @b, @e NaN and the reason in @why (@len bytes): too few
 * epochs, no empty reads (the two-term fit is then the whole story), a
 * term that the others explain to within COST_FIT_MIN_SPREAD (singular or
 * ill-conditioned normal equations), e < 0, or b's standard error above
 * COST_FIT_MAX_REL_SE of b. In that last case, when e > 0 is itself known to
 * within COST_FIT_MAX_REL_SE, it is returned in @e and the result is -2
 * (@a, @b NaN). Solved by Cholesky on the
 * normal equations scaled to unit diagonal. Without wake-ups in the epochs,
 * or with too few to separate (at most COST_FIT_RARE_WAKEUPS per empty read),
 * a is NaN and t = b p + e z is fitted; a negative a is taken as 0 and
 * b, e refitted without it (as cost_solve2() does).
 */
int cost_solve3(const struct lsq *f, double *a, double *b, double *e,
		char *why, size_t len);

/*
 * Stage B's cpu_ns_per_pkt and the estimates beside it into @b, from what
 * @l learned; @src is the source of a measured value (measured now or
 * learned), @depth [model] queue_depth_cost. @b's cpu_bound and io_bound
 * must be set (the load picks the saturated and kept-up costs).
 */
void cost_choose(const struct learn *l, const struct rxb_epoch *e, uint16_t port,
		 enum value_src src, bool depth, struct inputs_stage_b *b);

/* Lower @b's cost to what the receiver paid all in while busy (see cost.c). */
void cost_cap(const struct learn *l, struct inputs_stage_b *b);

#endif
