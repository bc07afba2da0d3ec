/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver's cost per packet, stage B's cpu_ns_per_pkt: the fit of its
 * on-CPU time against its wake-ups, packets and empty reads, and the
 * choice among the estimates (cost_choose()).
 *
 * What sets the stage's capacity is the receiver's CPU time per packet
 * when it is saturated: measured directly in the epochs in which its
 * socket overflowed while it hardly slept (busy.h), and used once such
 * epochs were seen at about the present load. Until then, the marginal
 * CPU time per packet, b of the fit below: the cost per packet of a
 * receiver that does not sleep, which is what it is when its queue
 * overflows. The plain ratio (on-CPU time / packets) also charges every
 * packet its share of the wake-ups (a / packets per wake-up), which a
 * saturated receiver does not pay; a wake-up costs several microseconds
 * against one or two per packet, so at tens of packets per wake-up the
 * ratio is tens of per cent above b and the capacity as much below. When
 * the recent epochs cannot separate a from b (every epoch the same
 * packets per wake-up) the last fit that could is kept; the ratio is used
 * only before any fit could. The fit's b is itself higher than the
 * saturated cost when its epochs have only tens of packets per wake-up,
 * hence the saturated cost first. With [model] queue_depth_cost the cost
 * of a busy receiver that kept up (lower: its packets are read while
 * still in the cache) serves below the overflow, the saturated one above
 * it. Last, the cost is held to what the receiver paid all in while it
 * was busy and kept up (cost_cap()).
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
 * The fit: decaying least squares (solver/lsq.h) of the receiver's on-CPU
 * time t per epoch against its wake-ups w, packets p and empty reads z
 * (struct lsq's x_0, x_1, x_2):
 *	t = a w + b p + e z		(cost_solve3())
 *	t = a w + b p			(cost_solve2(), z unused)
 * A busy-polling receiver never sleeps (w ~ 0) and spends most of its time
 * turning on an empty socket, one empty read per turn: without the z term
 * that time is charged to the packets, at many times their own cost. The
 * sums decay like the ratios (struct ewma_ratio); those of z and t give
 * the spin's share of the on-CPU time (e sum z / sum t), sum t^2 the
 * residuals, hence the standard error of b (COST_FIT_MAX_REL_SE).
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
 * decayed epochs (40 for a steady series of 250-ms epochs at
 * LEARN_TAU_S). The spread above says whether the terms are separable in
 * principle; this says whether the epochs' noise lets them be. When CPU
 * hogs start beside a receiver at a steady rate, its cost per packet
 * rises (the hogs share its caches, its wake-ups wait longer) while its
 * wake-ups stay: a two-term fit over epochs from both loads explains the
 * rise by the wake-ups, and b falls towards zero - with a standard error
 * many times b, while the spread test still passes - and the rate would
 * rise with the load. The quiet epochs of a receiver give b well inside
 * the bound.
 */
#define COST_FIT_MAX_REL_SE	0.10
/* Spin (e z) at least this share of the on-CPU time: a fit without the z
 * term would charge it to the packets, so when the three-term fit cannot
 * be solved the last one that could is kept rather than the two-term fit. */
#define COST_FIT_MAX_SPIN	0.1
/* Wake-ups at most this many per empty read: a polling receiver's few (at
 * a round's end), which can be as steady per epoch as its spin. When they
 * cannot be separated the fit is t = b p + e z, their time (a few us each
 * against thousands of reads) going mostly to e. A blocking receiver
 * makes about one empty read per wake-up: far above. */
#define COST_FIT_RARE_WAKEUPS	0.01
/*
 * Empty reads per packet (decayed over the fit's epochs) from which the
 * ratio on-CPU / packets is spin, not a cost: a busy-polling receiver at a
 * low rate turns its loop tens of times per packet, tens of microseconds
 * "per packet" against a cost of one or two, and a rate computed from that
 * keeps the arrivals low enough to keep it so. A receiver that blocks or
 * naps makes about one read per packet or wake-up.
 */
#define COST_RATIO_MAX_EMPTY_READS	2.0

/* Busy epochs without overflow behind the cap (struct busy.all_in). */
#define COST_CAP_MIN_EPOCHS	2
/* Packets dequeued in overflowing epochs (decayed) before their packets per
 * wake-up share the fit's wake-up cost out (wake_share_ns() in cost.c). */
#define COST_OVF_MIN_PKTS	1000.0

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
	COST_NONE = 0,		/* none: cpu_ns_per_pkt is missing */
	COST_SATURATED,		/* on-CPU ns / pkt while overflowing (busy.sat) */
	COST_FIT,		/* b of the fit over the recent epochs */
	COST_LAST_FIT,		/* b of the last fit that could separate its terms */
	COST_RATIO,		/* on-CPU ns / pkt over all epochs */
	COST_KEPT_UP,		/* the kept-up cost, the saturated one above it
				 * (struct inputs_env.depth_cost) */
	COST_BUSY,		/* what it paid, wake-ups and all, while it
				 * was busy and kept up (busy.all_in), when
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
