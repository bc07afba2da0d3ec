/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * From measurements to the model's inputs, per watched flow.
 *
 * A flow is a local receive port. Each epoch the collector's record
 * (struct rxb_epoch) says what the kernel counted; learn.c keeps, per
 * flow, smoothed estimates of the load-independent costs of its receive
 * path (struct learn), and this module turns them, together with the
 * epoch's workload on the receiver's CPU(s), into one or two struct
 * rxb_stage_inputs for bneck_compute(). The stages are those of the
 * end-system model of Banerjee, Mukherjee and Ghosal ("Modeling and
 * Analysis to Estimate the End-System Performance Bottleneck Rate for
 * High-Speed Data Transfer"):
 *
 *  stage B (socket -> application), the tagged customer of their
 *  stochastic reward net:
 *    #C, #I        task classes of the CPU(s) the receiver threads ran on,
 *                  weighted by their on-CPU time there (this epoch; the
 *                  last known placement when the flow was idle);
 *    mu_P-Net      1 / (cpu_ns_per_pkt x N_B): a batch of N_B packets costs
 *                  N_B times the receiver's on-CPU time per packet;
 *    cpu_ns_per_pkt the receiver's CPU time per packet when it is
 *                  saturated, which is what sets the capacity; cost.h
 *                  says how it is estimated;
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
 * The workload (#C, #I) is not smoothed: it is already a time average
 * over the epoch, and senders must hear about a new CPU hog within an
 * epoch. Where a value comes from is kept with it (struct value) and
 * shown by `rxbneckctl status`. Nothing is invented: an input that is
 * neither measured nor learned is VALUE_MISSING with a reason, and the
 * stage that needs it is not modelled.
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_INPUTS_H
#define RXB_DAEMON_MODEL_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/capacity.h"
#include "daemon/model/cost.h"
#include "daemon/model/learn.h"
#include "daemon/model/value.h"
#include "rxb/measure.h"

/* The receiver's on-CPU share on one CPU for that CPU's quota phases to count. */
#define INPUTS_QUOTA_MIN_SHARE	0.9

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
	/*
	 * A co-runner's CPU quota on the CPU the receiver ran on (struct
	 * rxb_cpu_meas.quota_*): its phases, quota_period_s 0 without.
	 */
	double quota_period_s, quota_slow_s, quota_slow_share, quota_fast_share;
	struct value cpu_ns_per_pkt;		/* saturated, else b of the fit,
						 * else the ratio; at most busy */
	enum cost_basis cpu_ns_per_pkt_basis;	/* which of them */
	double cpu_ns_per_pkt_ratio;		/* on-CPU ns / packet, NaN unknown */
	double cpu_ns_per_wakeup;		/* a of the fit, NaN without one */
	double cpu_ns_per_pkt_fit;		/* b of the fit (or last fit), NaN */
	double cpu_ns_per_empty_read;		/* e of the fit, NaN unless 3 terms */
	double ovf_pkts_per_wakeup;		/* packets per wake-up where the
						 * socket overflowed, NaN before */
	double fit_wake_share_ns;		/* a / that, added to a fit's b;
						 * NaN when not */
	int cost_fit_terms;			/* 3, 2, or 0 (no fit used) */
	double spin_share;			/* e sum z / sum t over the fit's
						 * epochs, NaN */
	char cost_fit_note[VALUE_WHY_LEN];	/* why the three-term fit cannot be
						 * solved now, "" when it can */
	double cpu_ns_per_pkt_saturated;	/* busy.sat's, NaN without */
	double saturated_load;			/* #C + #I it was measured at, NaN */
	double cpu_ns_per_pkt_kept_up;		/* busy.kept's, NaN without */
	double kept_up_load;			/* #C + #I it was measured at, NaN */
	/*
	 * With the kept-up basis: the saturated cost, which serves the stage
	 * once its queue has overflowed (rxb_stage_inputs.mu_net_full_per_s);
	 * NaN otherwise.
	 */
	double cpu_ns_per_pkt_full;
	double cpu_ns_per_pkt_busy;		/* busy.all_in's, NaN without */
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
	 * last busy epochs at the present load (struct busy.spread),
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
	/*
	 * The receiver threads' off-CPU windows after preemption as learned
	 * over the epochs it received in (struct learn.win): per second of
	 * receiving and their log2-ns histogram; 0 and empty when none were
	 * seen (a sleeping receiver, no scheduler probe), when they were
	 * learned at another load (windows_other_load) or over less than
	 * LEARN_WIN_FRESH_S of receiving since they started afresh at this
	 * one (windows_fresh_s). The windows loss
	 * model's input (rxb_stage_inputs.offcpu_*; docs/model.md §2.2).
	 */
	double offcpu_per_s;
	double offcpu_hist[RXB_OFFCPU_SLOTS];
	double offcpu_mean_s[RXB_OFFCPU_SLOTS];	/* each slot's mean window, 0 unknown */
	double offcpu_sd_s[RXB_OFFCPU_SLOTS];	/* and its standard deviation */
	double offcpu_gap_s;	/* the mean run a preemption ended, 0 unknown */
	double wake_per_s;	/* runqueue waits after a wakeup, the same way */
	double wake_hist[RXB_OFFCPU_SLOTS];
	double wake_mean_s[RXB_OFFCPU_SLOTS];
	double wake_sd_s[RXB_OFFCPU_SLOTS];
	double wake_max_s;	/* the longest of them, 0 unknown */
	double windows_seen_pps;	/* the fastest the receiver read while
					 * they were met, per second of
					 * receiving; 0 unknown */
	double windows_load;	/* #C + #I they were learned at, NaN unknown */
	double windows_fresh_s;	/* receiving fed at it since they started afresh */
	bool windows_other_load;	/* learned at another load: left out */
	/* Packets read before a UDP socket gives their memory back (a
	 * quarter of K_B); 0 for other sockets. */
	double queue_release_pkts;
	/* Where the capacity came from: the cost, or the saturated drain
	 * mu_net_per_s (and stages[].mu_net_full_per_s) was scaled to. */
	struct capacity capacity;
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

/*
 * A TCP flow: the port's sockets are all TCP (learn_stream_only()). Its
 * packets as the probes count them are coalesced segments (one per GRO
 * skb, tens of KB), so the rate is counted in bytes: bytes_per_pkt is
 * bytes dequeued / packets dequeued (smoothed like the costs), the
 * configured payload_bytes until measured. A TCP receiver does not
 * overflow its socket (the advertised window holds the sender back), so
 * there is no loss to search against: the advice is the drain rate the
 * receiver's CPU share allows,
 *   drain_bps = bytes_per_pkt x 8 / (cpu_ns_per_pkt x (#C + 1)),
 * its on-CPU time per packet with the CPU shared with #C CPU-bound tasks.
 */
struct inputs_tcp {
	bool present;			/* a TCP flow with its cost known */
	struct value bytes_per_pkt;	/* inputs_tcp_advise() fills the fallback */
	struct value cpu_ns_per_pkt;	/* on-CPU ns / packet dequeued */
	double share;			/* #C + 1 */
	double drain_bps;		/* inputs_tcp_advise(), NaN before */
};

/* The inputs for one flow in one epoch. */
struct inputs {
	struct inputs_traffic traffic;
	struct inputs_stage_a a;
	struct inputs_stage_b b;
	struct inputs_tcp tcp;	/* with nstages == 0: the TCP drain rate */
	uint32_t nstages;	/* 0: not modelled (see why) */
	struct rxb_stage_inputs stages[2];	/* path order: A then B */
	/*
	 * Stage B with the windows of each band that stands for its rates
	 * now (learn_bands_live()), in increasing arrival rate (band_at_pps,
	 * packets per second of receiving): the solve's pieces
	 * (solver/bneck_pieces.h), with [model] windows_by_rate. Only their
	 * windows fields are used (bneck_piece_windows()): the rest of
	 * each piece's stage B is stages[]'s at the solve. 0 when fewer than
	 * two bands do: stages[] then holds at every rate.
	 */
	uint32_t nbands;
	double band_at_pps[LEARN_BANDS];
	struct rxb_stage_inputs band_b[LEARN_BANDS];
	bool no_traffic;	/* costs not measured since the daemon started */
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
	bool quota_phases;		/* [model] quota_phases: a quota's
					 * phases into stage B's inputs */
	bool drain_floor;		/* [model] drain_floor: the saturated
					 * drain, where usable, into stage B */
	bool rate_uncertainty;		/* [model] rate_uncertainty = measured:
					 * rate_rel_sd into the solve */
	bool windows_by_rate;		/* [model] windows_by_rate: the bands */
	enum capacity_mode capacity;	/* [model] capacity */
	uint64_t now_ns;		/* CLOCK_MONOTONIC at the epoch's end */
};

/*
 * Fold the epoch @e's measurements of @port into @l (learn_epoch()) and
 * compute the flow's stage inputs into @out (inputs_compute()).
 */
void inputs_update(struct learn *l, const struct learn_disk *disk, uint16_t port,
		   const struct rxb_epoch *e, double dt_s, const struct inputs_env *env,
		   struct inputs *out);

/*
 * The flow's stage inputs from what @l knows, without folding anything in
 * (a new sender, a reload). @e may be NULL (no epoch yet): then only what
 * @l knows is used and the workload is missing.
 */
void inputs_compute(const struct learn *l, const struct learn_disk *disk, uint16_t port,
		    const struct rxb_epoch *e, const struct inputs_env *env,
		    struct inputs *out);

/* The receiver's load, #C + #I of its CPUs, from @b; NaN when not measured. */
double inputs_receiver_load(const struct inputs_stage_b *b);

/*
 * The drain rate of TCP flow @t (present) into t->drain_bps, with
 * @payload_bytes (the configured one) as bytes_per_pkt until one was
 * measured; returns it.
 */
double inputs_tcp_advise(struct inputs_tcp *t, double payload_bytes);

#endif
