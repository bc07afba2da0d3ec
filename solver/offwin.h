/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loss to the off-CPU windows of a queue's server, from their measured
 * distribution (docs/model.md §2.2).
 *
 * A receiver that stays runnable is switched out by the scheduler for
 * windows W that come at ν per second. During a window its queue of K
 * packets fills at λ and what does not fit overflows: (λ W − F)+, F the
 * room free when the window began. Between windows it is back on the CPU
 * and the queue drains at c − λ, c its drain rate on the CPU (packets/s).
 * The loss fraction is
 *
 *   l_win(λ) = ν E[(λ W − F)+] / λ = ν E[(W − F/λ)+].
 *
 * The free room: with g the time on the CPU between windows (measured: the
 * mean run that a preemption ended; else the mean gap 1/ν − E[W]), a
 * window finds what the window before it (D', from the same distribution)
 * left after the run between them:
 *
 *   F(D') = K − (min(K, λ D') − (c − λ)+ g)+,
 *
 * i.e. the queue is taken as empty before that previous window. And when
 * the windows and runs bring more than the receiver drains,
 * λ (E[W] + g) > c g, the queue stays full and each window loses at least
 * that excess:
 *
 *   l_win(λ) = ν max(E_{W,D'}[(W − F(D')/λ)+], E[W] + g − c g/λ).
 *
 * This is exact when (c − λ) g >= K (each window starts from an empty
 * queue). With short runs, a fluid queue fed by windows of the histogram
 * g apart lies within a few per cent of it where one of the two terms
 * rules, and up to about a fifth above it where they meet (the queue
 * carries over more than one window; test_solver_offwin simulates it).
 * Co-runners that take their turns in clusters (loops under a CPU quota)
 * leave short runs between the windows of a cluster and long ones between
 * clusters: the mean run then overstates the room the windows find.
 * Periodic windows (one length D, ν = 1/P) with long gaps give
 * (D − K/λ)+ / P, the vacation loss of bneck_vacation_loss().
 *
 * A receiver that blocks does so because its queue is empty; the next
 * arrival wakes it, and it may then wait on the runqueue behind a
 * co-runner for a time W_w before it runs. Those windows (ν_w per second)
 * begin with the queue empty, F = K, whatever the gaps:
 *
 *   l_wake(λ) = ν_w E[(W_w − K/λ)+],
 *
 * exact for the fluid queue (arrivals at λ throughout; the one packet that
 * woke it is within the fluid's rounding). The stage loses
 * min(1, l_win + l_wake).
 *
 * Those waits are bounded: a woken receiver waits at most one turn of each
 * co-runner. Where the longest wait is known (wake_max_s), the slot it lies
 * in holds no wait above it, and its waits are spread over [2^r ns, max]
 * instead of the whole slot, which would reach up to twice the bound.
 *
 * W comes from a log2 histogram of nanoseconds (the sched probe's: slot r
 * holds [2^r, 2^(r+1)) ns; slot 0 is taken as [1, 2) and the last slot as
 * [2^r, 2^(r+1)) too). Within a slot W is taken log-uniform (density ∝ 1/w,
 * the shape a log2 histogram of a smooth, wide distribution has at its
 * resolution). Any other shape inside the slots lies between taking every
 * window at its slot's lower edge and at its upper edge, which
 * OFFWIN_LOW and OFFWIN_HIGH compute: a bound on what the assumption can
 * move.
 *
 * Where a slot's mean m and standard deviation s were measured as well
 * (the probe sums each slot's lengths and their squares), its windows are
 * taken uniform on m ± √3 s instead, the uniform law with those two
 * moments; where that would pass an edge of the slot (or the longest
 * window), a truncated exponential falling away from that edge with the
 * same two moments (solver/offwin_piece.h). A slot's windows are often
 * nearly equal: a receiver preempted among busy co-runners waits for
 * whole ticks of each (three at HZ 250: 12.0 ms, mid-slot), which
 * log-uniform would spread from 8.4 to 16.8 ms, a quarter of them past
 * 14 ms. Waits just past a tick crowd the foot of their slot instead
 * (4.5 ± 0.23 ms in [4.19, 8.39)): the falling law keeps their tail,
 * which ends near the longest wait measured, where a uniform shrunk into
 * the slot would end short of it. E[(W − x)+] of any shape with the two
 * moments lies between the point at the mean, (m − x)+, and Scarf's bound
 * ((s² + (m − x)²)^½ + (m − x)) / 2; and unlike a few points, both laws'
 * loss grows from zero continuously with the rate.
 *
 * Pure: no I/O, no allocation, no globals.
 */
#ifndef RXB_SOLVER_OFFWIN_H
#define RXB_SOLVER_OFFWIN_H

#include <stdbool.h>
#include <stddef.h>

#define OFFWIN_MAX_SLOTS	64

/* Where the windows of one log2 slot lie within it. */
enum offwin_within {
	OFFWIN_LOGUNIFORM = 0,	/* density ∝ 1/w over the slot (with its
				 * moments: the law of offwin_piece.h) */
	OFFWIN_LOW,		/* all at its lower edge 2^r ns (with its
				 * moments: at that law's lower end) */
	OFFWIN_HIGH,		/* all at its upper edge 2^(r+1) ns (that law's top) */
};

struct offwin_pieces;

struct offwin_in {
	double per_s;		/* ν: windows per second */
	const double *count;	/* [nslots] windows per log2 slot (any scale) */
	/*
	 * [nslots] each slot's mean length and its standard deviation, in
	 * seconds; NULL, or a mean outside its slot (0: not measured): the
	 * slot is log-uniform.
	 */
	const double *mean_s;
	const double *sd_s;
	size_t nslots;		/* <= OFFWIN_MAX_SLOTS */
	double queue_pkts;	/* K */
	double on_pkts_per_s;	/* c: the drain on the CPU */
	double gap_s;		/* g: on the CPU between windows; 0: 1/ν − E[W] */
	double wake_per_s;	/* ν_w: waits after a wakeup per second */
	const double *wake_count;	/* [nslots] their log2 slots; NULL: none */
	const double *wake_mean_s;	/* [nslots] their slots' moments, as above */
	const double *wake_sd_s;
	double wake_max_s;	/* the longest of them: cuts its slot; 0: unknown */
	/*
	 * R: packets the reader dequeues before the queue's memory is given
	 * back (UDP returns it once a quarter of the buffer was read, unless
	 * the queue ran empty); 0: at once. After a wait the queue admits
	 * nothing until R more are read, so a wait overflows it from K/λ − R/c
	 * on.
	 */
	double release_pkts;
	/*
	 * The packets of a transfer's first round (offwin_round_absorb());
	 * 0: rounds taken as long enough to meet a window.
	 */
	double round_pkts;
	/*
	 * The slots' pieces, built from this input's histograms by
	 * offwin_pieces_init() (solver/offwin_piece.h) for a whole solve;
	 * NULL: each call builds them.
	 */
	const struct offwin_pieces *pieces;
};

/* [lo, hi) seconds of slot @r. */
void offwin_slot_s(size_t r, double *lo_s, double *hi_s);

/*
 * E[(W − x)+] in seconds over the histogram (normalised by its total), W
 * placed within its slots as @w says, none above @cap_s (> 0: the slot
 * [a, b) with a < @cap_s < b is taken as [a, @cap_s]; the others are
 * whole, as a slot above the cap holds waits the histogram counted: the
 * cap is stale; <= 0: no cut); 0 for an empty histogram.
 */
double offwin_excess_s(const double *count, size_t nslots, double x_s,
		       enum offwin_within w, double cap_s);

/*
 * E[(W^2 − x^2)/2; W > x] in seconds squared over the histogram, the same
 * way: a round's end term (offwin_round_absorb()).
 */
double offwin_end_s2(const double *count, size_t nslots, double x_s,
		     enum offwin_within w, double cap_s);

/*
 * Windows per second that lose at @lambda, each kind from its own room as
 * offwin_loss() takes it: ν P(W > F/λ) + ν_w P(W > K/λ − R/c), the waits'
 * slots cut at their longest. λ offwin_loss() / this is the packets a
 * losing window loses on average: a loss episode. 0 when none loses.
 */
double offwin_lossy_per_s(const struct offwin_in *in, double lambda, enum offwin_within w);

/*
 * Each slot's mean and standard deviation in seconds, from its count
 * (@count, any scale) and the sums of its windows' lengths and squares on
 * the same scale (@sum_s, @sq_s2); 0 where a slot is empty or its sums are.
 */
void offwin_slot_moments(const double *count, const double *sum_s, const double *sq_s2,
			 size_t nslots, double *mean_s, double *sd_s);

/* E[W] in seconds (log-uniform within the slots); 0 when empty. */
double offwin_mean_s(const double *count, size_t nslots);

/*
 * The room free when a window begins after a window of @prev_s and a run
 * of @gap_s: K − (min(K, λ prev) − (c − λ)+ g)+, see above.
 */
double offwin_room_pkts(double queue_pkts, double lambda, double on_pkts_per_s,
			double gap_s, double prev_s);

/*
 * The share of the time the windows take, ν E[W] + ν_w E[W_w] (their
 * slots' laws as offwin_loss() takes them, with OFFWIN_LOGUNIFORM), at
 * most 1; 0 without windows. Between them the receiver may drain at most
 * c (1 − this).
 */
double offwin_off_share(const struct offwin_in *in);

/*
 * min(1, l_win(@lambda) + l_wake(@lambda)), see above; 0 without windows
 * (per_s and wake_per_s <= 0, empty histograms) or for @lambda <= 0.
 */
double offwin_loss(const struct offwin_in *in, double lambda, enum offwin_within w);

/*
 * What a round (a blast of n packets at @lambda into an empty queue) loses
 * less than n × offwin_loss(), in packets, when the round lasts longer
 * than its longest window (docs/model.md §2.2):
 *
 * - its end: a window that begins u < W before the round ends loses only
 *   (λ u − F)+, not (λ W − F)+. Over the round's windows (ν per second)
 *   that takes off λ ν E[(W² − x²)/2; W > x], x = F/λ for the windows
 *   after preemption and K/λ for the waits after a wake-up;
 * - its start: the round's first window after preemption finds the empty
 *   queue's room K, not F: λ (E[(W − F/λ)+] − E[(W − K/λ)+]), times the
 *   windows a first round of @in->round_pkts meets where that is less than
 *   one, ν round_pkts/λ: a round that meets a window only now and then
 *   takes back only what those windows lose, not the waits' loss too.
 *
 * (F over the previous window's length as above.)
 *
 * A round shorter than its longest windows loses more than n l minus this
 * (and never less than 0): it is then a lower bound on the round's loss.
 * 0 for @lambda <= 0 or without windows.
 */
double offwin_round_absorb(const struct offwin_in *in, double lambda,
			   enum offwin_within w);

/*
 * offwin_loss(), offwin_lossy_per_s() and offwin_round_absorb() at one
 * rate, sharing what they have in common (the windows' mean excess over
 * the room they find): offwin_eval_loss() fills loss, and then
 * offwin_eval_round() (the same @in) lossy_per_s and absorb_pkts. The
 * rest is offwin_eval_loss()'s for offwin_eval_round().
 */
struct offwin_eval {
	double loss;		/* offwin_loss() */
	double lossy_per_s;	/* offwin_lossy_per_s() */
	double absorb_pkts;	/* offwin_round_absorb() */
	bool round;		/* offwin_eval_round() filled the two above */
	double lambda;
	enum offwin_within w;
	bool preempt;		/* windows after preemption taken */
	double excess_s;	/* their E over D' of E[(W − F(D')/λ)+] */
	double overload_s;	/* and E[W] + g − c g/λ, at least 0 */
};

void offwin_eval_loss(const struct offwin_in *in, double lambda, enum offwin_within w,
		      struct offwin_eval *ev);
void offwin_eval_round(const struct offwin_in *in, struct offwin_eval *ev);

/*
 * Parse "PER_S/SLOT:COUNT,SLOT:COUNT,..." (windows per second, then the
 * histogram's non-empty slots; e.g. "180/21:40,22:75,23:12") into @per_s
 * and @count[@nslots] (zeroed first). A slot may carry its windows' mean
 * and standard deviation in ns, "SLOT:COUNT:MEAN:SD" (e.g.
 * "9.6/23:9.6:12000000:150000"), into @mean_s and @sd_s in seconds
 * (zeroed first; both NULL: moments are refused). Slots must be <
 * @nslots, numbers finite and >= 0; a slot may appear once. 0, or
 * -EINVAL (then all outputs are zero).
 */
int offwin_parse(const char *s, double *per_s, double *count, double *mean_s,
		 double *sd_s, size_t nslots);

#endif
