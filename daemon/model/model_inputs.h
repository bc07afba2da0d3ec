/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * From measurements to the model's inputs, per watched flow (DESIGN §3).
 *
 * A flow is a local receive port. Each epoch the collector's record
 * (struct rxb_epoch) says what the kernel counted; this module keeps, per
 * flow, smoothed estimates of the load-independent costs of its receive
 * path (struct learn) and turns them, together with the epoch's workload
 * on the receiver's CPU(s), into one or two struct rxb_stage_inputs for
 * bneck_compute():
 *
 *  stage B (socket -> application), the tagged customer of the seed net:
 *    #C, #I        task classes of the CPU(s) the receiver threads ran on,
 *                  weighted by their on-CPU time there (this epoch; the
 *                  last known placement when the flow was idle);
 *    mu_P-Net      1 / (cpu_ns_per_pkt x N_B): a batch of N_B packets costs
 *                  N_B times the receiver's on-CPU time per packet;
 *    cpu_ns_per_pkt the receiver's CPU time per packet when it is saturated,
 *                  which is what sets the capacity: measured directly in
 *                  the epochs in which its socket overflowed while it
 *                  hardly slept (struct busy_sums, busy_add() in
 *                  model_inputs.c); until such epochs were seen at about
 *                  the present load, the marginal CPU time per packet:
 *                  on-CPU time = a x wake-ups + b x packets, fitted over the
 *                  epochs (struct mi_fit); b is the cost per packet of a
 *                  receiver that does not sleep, which is what it is when
 *                  its queue overflows. With empty reads measured the fit
 *                  has a third term, + e x empty reads: a polling
 *                  receiver's spin, which is not the packets' cost
 *                  (cost_solve3()). The plain ratio (on-CPU time /
 *                  packets) also charges every packet its share of the
 *                  wake-ups (a / packets per wake-up), which a saturated
 *                  receiver does not pay: on the 2-CPU test VM (all
 *                  epochs of one e2e run per k = 0..3) a = 6.5-10 us and
 *                  b = 1.37-1.68 us, and the ratio was 15-76 % above b,
 *                  the capacity as much below (docs/e2e.md). When the
 *                  recent epochs cannot separate a from b (every epoch the
 *                  same packets per wake-up) the last fit that could is
 *                  kept; the ratio is used only before any fit could.
 *                  The fit's b is itself biased high when the epochs it
 *                  sees have tens of packets per wake-up (1611 / 1483 ns
 *                  at k = 2 / 3 against 1136 / 1122 ns measured in
 *                  overflowing epochs, docs/e2e.md 6.2), hence the
 *                  saturated cost first;
 *    N_B           packets dequeued per wake-up of the receiver (at most
 *                  K_B; a receiver that never blocked drains up to K_B);
 *    K_B           rcvbuf / truesize per packet (the rcvbuf of the port's
 *                  UDP socket once one was seen: see learn_rcvbuf());
 *    mu_P-I/O, mu_D from the disk measurement (only used when #I > 0).
 *  stage A (NIC -> stack), load-independent: the busiest NAPI instance
 *    of the epoch (the per-CPU backlog for veth and lo):
 *    mu_A = polls per second of NET_RX service time, N_A = packets per
 *    poll, K_A = the device's RX ring (device or configured fallback) or
 *    net.core.netdev_max_backlog for the backlog.
 *
 * Smoothing: the costs are ratios (ns / packet, packets / wake-up, ...).
 * Each is kept as an exponentially decaying numerator and denominator,
 *	num <- d num + num_epoch,  den <- d den + den_epoch,  d = exp(-dt / tau)
 * (LEARN_TAU_S), so an epoch counts in proportion to its packets and old
 * epochs fade with wall time. An estimate counts as measured once its
 * decayed denominator holds LEARN_MIN_PKTS packets (LEARN_MIN_POLLS polls,
 * LEARN_MIN_IOS disk completions). The workload (#C, #I) is NOT smoothed: it
 * is already a time average over the epoch, and senders must hear about a
 * new CPU hog within an epoch.
 *
 * Where a value comes from is kept with it (enum value_src) and shown by
 * `rxbneckctl status`. Nothing is invented: an input that is neither
 * measured nor learned is VALUE_MISSING with a reason, and the stage that
 * needs it is not modelled.
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_INPUTS_H
#define RXB_DAEMON_MODEL_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxb/measure.h"
#include "solver/ewma.h"
#include "solver/lsq.h"

#define LEARN_TAU_S	5.0	/* smoothing time constant of the costs */
#define LEARN_MIN_PKTS	64.0	/* packets behind a per-packet cost */
#define LEARN_MIN_POLLS	16.0	/* NAPI polls behind a per-poll cost */
#define LEARN_MIN_IOS	8.0	/* disk completions behind a disk rate */
#define LEARN_MIN_EPISODES	3.0	/* loss episodes behind their median size */
#define LEARN_MAX_CPUS	8	/* CPUs of the receiver's placement kept */
#define VALUE_WHY_LEN	192

/* Where an input value comes from. */
enum value_src {
	VALUE_MISSING = 0,	/* not known: see why */
	VALUE_MEASURED,	/* counted in this epoch (smoothed) */
	VALUE_LEARNED,		/* counted earlier in this run; none this epoch */
	VALUE_HISTORY,		/* from the state directory (an earlier run) */
	VALUE_CONFIG,		/* configured (device did not report it) */
	VALUE_DEVICE,		/* reported by the device */
	VALUE_SYSCTL,		/* a kernel setting (netdev_max_backlog) */
};

const char *value_src_name(enum value_src s);

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

/*
 * The receiver's cost per packet measured in saturated epochs: its socket
 * overflowed (rcvbuf drops) and it hardly slept (at least BUSY_MIN_PPW
 * packets per wake-up, or none), it was on a CPU for at least
 * BUSY_MIN_SHARE of its fair share of the epoch, and the epoch's on-CPU
 * time per packet was at most BUSY_MAX_OVER_RATIO times the all-epochs
 * ratio (see busy_add()). A receiver that polls spins on its empty
 * socket once it has drained it, overflowing epoch or not: with e of the
 * three-term fit known, e x empty reads is taken off its on-CPU time;
 * without it, an epoch with more than one empty read per BUSY_MIN_PPW
 * packets is refused. Such a receiver does nothing but dequeue:
 * on-CPU ns / packets is the cost that defines its capacity, with no
 * wake-up share to separate. Decayed sums like struct ewma_ratio; load is
 * the packet-weighted #C + #I of the receiver's CPUs in those epochs.
 * The same sums over the epochs that pass every test but the overflow (no
 * rcvbuf drops: the receiver was as busy but kept up) give the kept-up
 * cost, struct learn.busy.kept: 12-25 % below the saturated one on the test
 * VM (docs/e2e.md §5.7, §5.6), where a full queue is read out of cache.
 */
struct busy_sums {
	double ns, pkts;	/* decayed on-CPU ns and packets dequeued */
	double load_pkts;	/* decayed sum of (#C + #I) x packets */
	double n;		/* decayed count of saturated epochs */
	bool ok;		/* pkts reached BUSY_MIN_PKTS since the last reset */
	uint64_t taken;		/* saturated epochs folded in (this run) */
	uint64_t refused;	/* overflowing epochs that failed a test */
};

#define BUSY_MIN_PKTS		10000.0	/* packets behind a saturated cost */
#define BUSY_MIN_PPW		400.0	/* packets per wake-up: "hardly slept" */
#define BUSY_MIN_SHARE	0.8	/* on-CPU time / fair share of the epoch */
#define BUSY_MAX_OVER_RATIO	2.0	/* ns/pkt at most this x the ratio */
#define BUSY_MAX_DLOAD	0.5	/* |#C + #I now - at measurement| to use it */

/* Busy epochs without overflow behind the cap of struct learn.busy.all_in. */
#define COST_CAP_MIN_EPOCHS	2

/*
 * The last epochs in which the receiver hardly slept (epoch_busy()'s tests
 * but the fair share's: a blast may cover part of the epoch), each with its
 * cost per packet: how much that cost moves from one epoch to the next at
 * the same load is how far the receiver's drain strays over about a blast
 * (struct inputs_stage_b.rate_rel_sd). An epoch of 250 ms is about a first
 * blast of 200 MB at 6 Gb/s.
 */
#define BUSY_SPREAD_EPOCHS	16
#define BUSY_SPREAD_MIN_EPOCHS	4	/* at the present load, for a spread */

struct busy_epoch {
	double ns_per_pkt;	/* on-CPU ns / packet (spin taken off) */
	double pkts;		/* packets dequeued */
	double load;		/* #C + #I beside the receiver */
};

/* The sums over the busy epochs, and the ring of their costs. */
struct busy {
	struct busy_sums sat;		/* cost while saturated */
	struct busy_sums kept;		/* cost while busy but keeping up */
	/*
	 * The same sums over the busy epochs without overflow, whatever
	 * their wake-ups and empty reads, with the whole on-CPU time: the
	 * cost per packet all in while the receiver had most of its share
	 * and kept up. Never below the packets' own cost, so a chosen cost
	 * above it is too high (cost_cap() in model_inputs.c).
	 */
	struct busy_sums all_in;
	struct busy_epoch spread[BUSY_SPREAD_EPOCHS];	/* a ring */
	uint32_t spread_n;			/* epochs in it */
	uint32_t spread_next;			/* where the next one goes */
};

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

/* What a flow has learned about its receive path. */
struct learn {
	/* stage B */
	struct ewma_ratio cpu_ns_per_pkt;	/* receiver on-CPU ns / pkts_out */
	struct cost_fit cost;			/* on-CPU ns = a wake-ups + b pkts
						 * (+ e empty reads) */
	struct busy busy;			/* the busy epochs' costs */
	struct ewma_ratio pkts_per_wakeup;	/* pkts_out / wake-ups */
	struct ewma_ratio truesize_per_pkt;	/* bytes charged / pkts enqueued */
	struct ewma_ratio irq_ns_per_pkt;		/* NET_RX softirq ns on the
						 * receiver's CPUs / pkts_in */
	/* loss episodes (bursts of rcvbuf drops) that ended, by size; decayed */
	double episode_hist[RXB_EPISODE_BUCKETS];
	double episodes_w;			/* their decayed count */
	bool episodes_ok;			/* LEARN_MIN_EPISODES have ended */
	uint64_t episodes_ended;		/* counted in this run */
	uint64_t episodes_seq;			/* epoch of the latest, 0 = none */
	uint32_t rcvbuf_bytes;			/* last seen, 0 = never */
	bool rcvbuf_udp;			/* rcvbuf_bytes is a UDP socket's */
	bool udp_seen;				/* a UDP socket dequeued, this run */
	uint8_t other_ipproto;			/* else the protocol that did, 0 = none */
	int ncpus;				/* last known placement */
	int cpu[LEARN_MAX_CPUS];
	double cpu_share[LEARN_MAX_CPUS];		/* sums to 1 */
	/* stage A */
	struct ewma_ratio napi_ns_per_poll;
	struct ewma_ratio napi_pkts_per_poll;	/* skbs per poll */
	struct ewma_ratio napi_dgrams_per_skb;	/* the flow's datagrams per skb
						 * the device's polls carried */
	char napi_dev[RXB_IFNAME_LEN];
	/* where the costs came from, and when they were last fed */
	enum value_src origin;		/* MEASURED (this run) or HISTORY */
	uint64_t last_traffic_ns;	/* CLOCK_MONOTONIC, 0 = never this run */
	uint64_t last_traffic_seq;	/* epoch of the last traffic, 0 = never */
	uint64_t history_age_s;		/* age of the history when loaded */
};

/* Host-wide disk estimates (not per flow). */
struct learn_disk {
	struct ewma_ratio service_ns;	/* disk ns per completion -> mu_D */
	struct ewma_ratio burst_ns;	/* I/O-bound CPU ns per burst -> mu_P-I/O */
};

/* One reported input. */
struct value {
	double v;		/* NaN when missing */
	enum value_src src;
	char why[VALUE_WHY_LEN];	/* for MISSING, and notes */
};

struct inputs_stage_a {
	bool present;		/* stage A modelled */
	char dev[RXB_IFNAME_LEN];
	struct value mu_per_s;
	struct value pkts_per_poll;		/* datagrams */
	struct value queue_pkts;		/* datagrams */
	struct value dgrams_per_skb;		/* >= 1: GSO/GRO packets */
};

struct inputs_stage_b {
	bool present;		/* stage B modelled */
	struct value cpu_bound;
	struct value io_bound;
	struct value cpu_ns_per_pkt;		/* saturated, else b of the fit,
						 * else the ratio; at most busy */
	enum cost_basis cpu_ns_per_pkt_basis;	/* which of them */
	double cpu_ns_per_pkt_ratio;		/* on-CPU ns / packet, NaN unknown */
	double cpu_ns_per_wakeup;		/* a of the fit, NaN without one */
	double cpu_ns_per_pkt_fit;		/* b of the fit (or last fit), NaN */
	double cpu_ns_per_empty_read;		/* e of the fit, NaN unless 3 terms */
	int cost_fit_terms;			/* 3, 2, or 0 (no fit used) */
	double spin_share;			/* e sz / st of the fit's epochs, NaN */
	char cost_fit_note[VALUE_WHY_LEN];		/* why the three-term fit cannot be
						 * solved now, "" when it can */
	double cpu_ns_per_pkt_saturated;	/* struct busy_sums's, NaN without */
	double saturated_load;			/* #C + #I it was measured at, NaN */
	double cpu_ns_per_pkt_kept_up;		/* struct learn.busy.kept's, NaN without */
	double kept_up_load;			/* #C + #I it was measured at, NaN */
	/*
	 * With the kept-up basis: the saturated cost, which serves the stage
	 * once its queue has overflowed (rxb_stage_inputs.mu_net_full_per_s);
	 * NaN otherwise.
	 */
	double cpu_ns_per_pkt_full;
	double cpu_ns_per_pkt_busy;		/* struct learn.busy.all_in's, NaN without */
	double busy_load;			/* #C + #I it was measured at, NaN */
	double cpu_ns_per_pkt_capped;		/* with basis "busy": the cost it
						 * capped; NaN otherwise */
	struct value pkts_per_wakeup;
	struct value queue_pkts;
	struct value mu_net_per_s;
	struct value mu_pio_per_s;
	struct value mu_disk_per_s;
	struct value irq_ns_per_pkt;		/* 0 when none was measured */
	/*
	 * The relative standard deviation of the cost per packet over the
	 * last busy epochs at the present load (struct learn.busy.spread),
	 * packets weighting: how far the receiver's drain strays from its
	 * estimate over about a blast. rxb_stage_inputs.mu_rel_sd with
	 * [model] rate_uncertainty = measured.
	 */
	struct value rate_rel_sd;
	/*
	 * Packets lost per loss episode: the median size of the episodes that
	 * ended (bpf/sockq.h; decayed like the costs). Reported; the solver
	 * uses it only with [model] loss_episodes = measured
	 * (bneck_xfer.loss_episode_pkts).
	 */
	struct value loss_episode_pkts;
	int ncpus;		/* the placement used for #C/#I */
	int cpu[LEARN_MAX_CPUS];
	double cpu_share[LEARN_MAX_CPUS];
	bool io_ignored;	/* #I > 0 measured but disk rates unknown */
};

/* What the epoch said about the flow's traffic. */
struct inputs_traffic {
	bool sock_seen;		/* the collector reported the port */
	bool counts_valid;
	uint64_t pkts_in, pkts_out, drops;
	uint64_t rcvbuf_drops;
};

/* The inputs for one flow in one epoch. */
struct inputs {
	struct inputs_traffic traffic;
	struct inputs_stage_a a;
	struct inputs_stage_b b;
	uint32_t nstages;	/* 0: not modelled (see why) */
	struct rxb_stage_inputs stages[2];	/* path order: A then B */
	bool no_traffic;	/* costs not measured in this run */
	uint16_t confidence;	/* per mille, before the solve */
	char why[224];		/* why nstages == 0 or what is approximate */
};

/* Settings that come from the configuration and the kernel. */
struct inputs_env {
	enum rxb_batch_rule rule;
	uint32_t netdev_max_backlog;	/* 0: unknown */
	uint32_t fallback_rx_ring;	/* for devices without a report */
	bool irq_in_task_time;		/* the kernel charges interrupt time to
					 * the task it interrupts */
	bool depth_cost;		/* [model] queue_depth_cost: the kept-up
					 * cost below the overflow, the
					 * saturated one above */
	bool rate_uncertainty;		/* [model] rate_uncertainty = measured:
					 * rate_rel_sd into the solve */
	uint64_t now_ns;		/* CLOCK_MONOTONIC at the epoch's end */
};

void learn_init(struct learn *l);
void learn_disk_init(struct learn_disk *d);

/*
 * The median size (packets) of the loss episodes @l has seen end, by
 * their decayed weights, once LEARN_MIN_EPISODES have ended, else NaN: the geometric
 * middle of the bucket the median falls in (sizes known to a factor of
 * 1.25). Decay leaves it as it was.
 */
double learn_episode_pkts(const struct learn *l);

/*
 * The saturated cost (ns / packet) once it has had BUSY_MIN_PKTS packets,
 * else NaN; @load (may be NULL) gets the #C + #I it was measured at. Decay
 * leaves both as they were.
 */
double busy_sums_value(const struct busy_sums *s, double *load);

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

/* Fold one epoch's disk measurement into @d. */
void learn_disk_update(struct learn_disk *d, const struct rxb_epoch *e, double dt_s);

/*
 * Fold the epoch's measurements of @port into @l (smoothing) and compute
 * the flow's stage inputs into @out. @e may be NULL (no epoch yet): then
 * only what @l knows is used and the workload is missing.
 */
void inputs_update(struct learn *l, const struct learn_disk *disk, uint16_t port,
	       const struct rxb_epoch *e, double dt_s, const struct inputs_env *env,
	       struct inputs *out);

/* The same without folding anything in (a new sender, a reload). */
void inputs_compute(const struct learn *l, const struct learn_disk *disk, uint16_t port,
		const struct rxb_epoch *e, const struct inputs_env *env,
		struct inputs *out);

#endif
