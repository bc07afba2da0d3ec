/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a flow learns about its receive path from the epochs: the smoothed
 * costs, the cost fit (cost.h), the busy epochs' sums (busy.h), the
 * saturated drain (drain.h), the loss episodes, where its receiver runs,
 * its receive buffer; and, host-wide, the disk's rates. inputs.h turns
 * them into the model's inputs.
 *
 * Smoothing: the costs are ratios (ns / packet, packets / wake-up, ...),
 * each kept as an exponentially decaying numerator and denominator
 * (struct ewma_ratio, time constant LEARN_TAU_S), so an epoch counts in
 * proportion to its packets and old epochs fade with wall time. An
 * estimate counts as measured once its decayed denominator holds
 * LEARN_MIN_PKTS packets (LEARN_MIN_POLLS polls, LEARN_MIN_IOS disk
 * completions); an idle flow's estimates keep their values while their
 * weight decays, so the first epochs of new traffic take over at once.
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_LEARN_H
#define RXB_DAEMON_MODEL_LEARN_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/arrive.h"
#include "daemon/model/busy.h"
#include "daemon/model/cost.h"
#include "daemon/model/drain.h"
#include "daemon/model/value.h"
#include "rxb/measure.h"
#include "solver/ewma.h"

#define LEARN_TAU_S		5.0	/* smoothing time constant of the costs */
#define LEARN_MIN_PKTS		64.0	/* packets behind a per-packet cost */
#define LEARN_MIN_POLLS		16.0	/* NAPI polls behind a per-poll cost */
#define LEARN_MIN_IOS		8.0	/* disk completions behind a disk rate */
#define LEARN_MIN_EPISODES	3.0	/* loss episodes behind their median size */
#define LEARN_MAX_CPUS		8	/* CPUs of the receiver's placement kept */
/* An epoch's longest wake-up wait is kept while it weighs this much (its
 * waits in the histogram are down to 5 %: three time constants). */
#define LEARN_WAKE_MAX_MIN_W	0.05

/*
 * Off-CPU windows learned over epochs with traffic: the scheduler probe's
 * log2-ns counts of the windows after a preemption and of the waits for
 * the CPU after a wake-up, with their lengths' sums.
 */
struct learn_win {
	double offcpu_hist[RXB_OFFCPU_SLOTS];
	double wake_hist[RXB_OFFCPU_SLOTS];
	struct rxb_win_sums offcpu_sums, wake_sums;	/* their lengths, decayed alike */
	struct ewma_max wake_max_ns;		/* their longest, same epochs */
	double offcpu_s;			/* decayed seconds of traffic they came from */
	double arrived;				/* decayed packets that arrived
						 * in those seconds */
	struct ewma_max seen_pps;		/* the fastest reads per second of
						 * receiving in those epochs */
	struct ewma_ratio offcpu_gap_ns;	/* run a preemption ended, per
						 * window after one */
};

/*
 * The windows by the rate packets arrived at (per second of receiving in
 * the epoch, read or dropped: the rate sent, which the solve's rates are;
 * an overrun receiver reads at its drain whatever the rate): a receiver
 * with little to do sleeps and is woken often, one with more is woken
 * less and waits longer (bneck_pieces.h). An epoch feeds the band of its
 * arrival rate, in steps of LEARN_BAND_STEP. A band decays by its own
 * seconds of receiving (time constant LEARN_BAND_TAU_S), not by wall
 * time: a rate met once every minute or so keeps several transfers' worth
 * of windows, the rare long ones among them, where the wall clock would
 * leave it the last transfer's (a few hundred waits). A band stands for
 * its rates while it was fed within LEARN_BAND_KEEP_S of the flow's last
 * traffic, for LEARN_BAND_MIN_S of receiving at least, at the receiver
 * load of the present (within LEARN_BAND_LOAD_TASKS). Only an epoch with
 * LEARN_BAND_MIN_EPOCH_S of receiving feeds a band: at a transfer's edges
 * a few packets over a short stretch of receiving give rates anywhere from
 * nothing to above the line rate, each of which would take a band. With
 * LEARN_BANDS in use, a new rate takes a band stale or of another load
 * (the one fed longest ago), else of the bands not fed for
 * LEARN_BAND_HOLD_S the one with the least receiving behind it, else none:
 * a sender that sweeps more rates than there are bands, each for a second
 * or so, would otherwise have every band taken before its rate came round
 * again, and none would ever stand for its rates.
 */
#define LEARN_BANDS		16
#define LEARN_BAND_STEP		1.0905077326652577	/* 2^(1/8) */
#define LEARN_BAND_TAU_S	5.0
#define LEARN_BAND_KEEP_S	120.0
#define LEARN_BAND_MIN_S	1.0
#define LEARN_BAND_LOAD_TASKS	0.5
#define LEARN_BAND_MIN_EPOCH_S	0.1
#define LEARN_BAND_HOLD_S	60.0
/* All rates' windows, started afresh at a load, stand for it once fed this
 * much receiving, as a band does (LEARN_BAND_MIN_S): a transfer's first
 * epoch holds a tenth of a second of it or so, too little to have met the
 * long windows that set the loss. */
#define LEARN_WIN_FRESH_S	LEARN_BAND_MIN_S

struct learn_band {
	struct learn_win w;
	int32_t key;		/* floor(log(arrival pps) / log(LEARN_BAND_STEP)) */
	double fed_s;		/* seconds of receiving fed, not decayed */
	double estimated_s;	/* of those, with the packets estimated */
	double load;		/* #C + #I when last fed, NaN unknown */
	uint64_t last_ns;	/* CLOCK_MONOTONIC of its last epoch, 0 = unused */
};

/*
 * Where a flow's costs come from before its own packets were measured
 * (daemon/model/prior.h). Its own measurements, and this port's costs
 * from an earlier run (origin VALUE_HISTORY), are LEARN_PRIOR_NONE.
 */
enum learn_prior {
	LEARN_PRIOR_NONE = 0,
	LEARN_PRIOR_HOST,	/* another flow's, learned on this host */
	LEARN_PRIOR_DEFAULT,	/* the documented defaults: nothing learned */
};

/* What a flow has learned about its receive path. */
struct learn {
	/* stage B */
	struct ewma_ratio cpu_ns_per_pkt;	/* receiver on-CPU ns / pkts_out */
	struct cost_fit cost;			/* on-CPU ns = a wake-ups + b pkts
						 * (+ e empty reads) */
	struct busy busy;			/* the busy epochs' costs */
	struct arrive arrive;			/* the arrivals of unsampled epochs */
	struct drain drain;			/* the saturated drain (drain.h) */
	struct ewma_ratio pkts_per_wakeup;	/* pkts_out / wake-ups */
	/* The same over the epochs whose socket overflowed (decayed from
	 * one to the next): what the fit's wake-up cost is shared by where
	 * the queue is lost (cost.c). Not kept across restarts. */
	struct ewma_ratio pkts_per_wakeup_ovf;
	struct ewma_ratio truesize_per_pkt;	/* bytes charged / pkts enqueued */
	struct ewma_ratio bytes_per_pkt;	/* bytes dequeued / pkts_out: a
						 * TCP socket's packets are
						 * coalesced segments */
	struct ewma_ratio irq_ns_per_pkt;	/* NET_RX softirq ns on the
						 * receiver's CPUs / pkts_in */
	/*
	 * The receiver's off-CPU windows while it received, decayed like the
	 * costs over the epochs with traffic and kept in between: an idle
	 * receiver is blocked, and its windows then say nothing about the
	 * next transfer's. All of them (win), and by the rate they were met
	 * at (band): see struct learn_band. Both are of the receiver load
	 * they were fed at: the waits are the co-runners' turns, so windows
	 * of a load LEARN_BAND_LOAD_TASKS away from the present say nothing
	 * about the next transfer's (learn_win_other_load()); an epoch at
	 * such a load starts them afresh, and they stand for the present
	 * once fed LEARN_WIN_FRESH_S of receiving at it. A flow's first
	 * windows count from its first epoch.
	 */
	struct learn_win win;
	double win_load;			/* #C + #I the epochs that fed win
						 * were at (NaN: unknown) */
	double win_fresh_s;			/* seconds of receiving fed since
						 * win started afresh at it */
	bool win_afresh;			/* win started afresh at another
						 * load than it had been fed at */
	struct learn_band band[LEARN_BANDS];
	int band_fed;				/* the band this epoch fed, -1 none */
	double band_load;			/* the load the last band fed was
						 * fed at (NaN: none yet) */
	/* loss episodes (bursts of rcvbuf drops) that ended, by size; decayed */
	double episode_hist[RXB_EPISODE_BUCKETS];
	double episodes_w;			/* their decayed count */
	bool episodes_ok;			/* LEARN_MIN_EPISODES have ended */
	uint64_t episodes_ended;		/* since the daemon started */
	uint64_t episodes_seq;			/* epoch of the latest, 0 = none */
	uint32_t rcvbuf_bytes;			/* last seen, 0 = never */
	bool rcvbuf_udp;			/* rcvbuf_bytes is a UDP socket's */
	bool udp_seen;				/* a UDP socket dequeued (since
						 * the daemon started) */
	uint8_t other_ipproto;			/* else the protocol that did, 0 = none */
	int ncpus;				/* last known placement */
	int cpu[LEARN_MAX_CPUS];
	double cpu_share[LEARN_MAX_CPUS];	/* sums to 1 */
	/* stage A */
	struct ewma_ratio napi_ns_per_poll;
	struct ewma_ratio napi_pkts_per_poll;	/* skbs per poll */
	struct ewma_ratio napi_dgrams_per_skb;	/* the flow's datagrams per skb
						 * the device's polls carried */
	char napi_dev[RXB_IFNAME_LEN];
	/* where the costs came from, and when they were last fed */
	enum value_src origin;		/* MEASURED (since the daemon started)
					 * or HISTORY (an earlier run's) */
	uint64_t last_traffic_ns;	/* CLOCK_MONOTONIC, 0 = never */
	uint64_t last_traffic_seq;	/* epoch of the last traffic, 0 = never */
	uint64_t history_age_s;		/* age of the history when loaded */
	enum learn_prior prior;		/* with origin VALUE_HISTORY: whose */
	uint16_t prior_port;		/* LEARN_PRIOR_HOST: that flow's port */
};

/* Host-wide disk estimates (not per flow). */
struct learn_disk {
	struct ewma_ratio service_ns;	/* disk ns per completion -> mu_D */
	struct ewma_ratio burst_ns;	/* I/O-bound CPU ns per burst -> mu_P-I/O */
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
 * The off-CPU windows @w holds: after a preemption, per second of
 * receiving, their histogram (decayed counts) in @hist and in *@gap_s the
 * mean run a preemption ended (0 when unknown); likewise the waits after
 * a wake-up (@wake_hist, *@wake_per_s). All 0 before the first epoch with
 * traffic the scheduler probe saw.
 */
double learn_offcpu(const struct learn_win *w, double *hist, double *gap_s,
		    double *wake_hist, double *wake_per_s);

/*
 * Each slot's mean and standard deviation, seconds, of the windows after
 * a preemption (@mean_s, @sd_s) and of the waits after a wake-up
 * (@wake_mean_s, @wake_sd_s) @w holds; 0 where a slot is empty.
 */
void learn_offcpu_moments(const struct learn_win *w, double *mean_s, double *sd_s,
			  double *wake_mean_s, double *wake_sd_s);

/*
 * The fastest reads, packets per second of receiving, of the epochs
 * whose windows still weigh in (LEARN_WAKE_MAX_MIN_W); 0 when unknown.
 */
double learn_windows_seen_pps(const struct learn_win *w);

/*
 * The longest of those waits after a wake-up, in the epochs whose waits
 * still weigh in the histogram (LEARN_WAKE_MAX_MIN_W); 0 when unknown.
 */
double learn_wake_max_s(const struct learn_win *w);

/* The mean arrival rate of @w's epochs, packets per second of receiving; 0 unknown. */
double learn_win_arrival_pps(const struct learn_win *w);

/*
 * The bands of @l that stand for their rates now (struct learn_band), at
 * the receiver load @load (NaN: unknown, no band does): their indices
 * into @l->band in increasing arrival rate, at most LEARN_BANDS; returns how
 * many.
 */
int learn_bands_live(const struct learn *l, double load, int *idx);

/* Does band @i of @l stand for its rates now, at the receiver load @load? */
bool learn_band_live(const struct learn *l, int i, double load);

/* The receiver load @load (#C + #I) the band this epoch fed was fed at. */
void learn_band_load(struct learn *l, double load);
/*
 * Were all rates' windows (win) fed at another receiver load than @load,
 * LEARN_BAND_LOAD_TASKS away or more (both known)? The load moved while
 * the flow was idle, or in epochs that did not feed them.
 */
bool learn_win_other_load(const struct learn *l, double load);
/* Do all rates' windows stand for the receiver load @load (struct learn.win)? */
bool learn_win_stand(const struct learn *l, double load);

/* Fold one epoch's disk measurement into @d. */
void learn_disk_update(struct learn_disk *d, const struct rxb_epoch *e, double dt_s);

/*
 * Fold the epoch @e (of @dt_s seconds) into what @l knows of @port; @load
 * is the receiver load (#C + #I) on its CPUs in @e, NaN unknown.
 * @irq_in_task_time: the kernel charges interrupt time to the task it
 * interrupts (it is then taken off the receiver's time); @now_ns
 * (CLOCK_MONOTONIC) is when the flow last saw traffic if it did now.
 */
void learn_epoch(struct learn *l, uint16_t port, const struct rxb_epoch *e, double dt_s,
		 double load, bool irq_in_task_time, uint64_t now_ns);

/*
 * Were @l's costs measured in @e - or, when @e did not sample the
 * per-packet probes, in the last epoch that did?
 */
bool learn_fresh(const struct learn *l, const struct rxb_epoch *e, uint16_t port);

/* Only stream sockets (TCP) dequeued on the port: no datagrams to model. */
bool learn_stream_only(const struct learn *l);

#endif
