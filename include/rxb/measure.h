/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-epoch measurement record and the model inputs derived from it.
 *
 * Collectors (daemon/collect/collect*.c, reading bpf/ counters, /proc and netlink)
 * fill one struct rxb_epoch per epoch. The daemon turns it into one
 * struct rxb_stage_inputs per queue stage of each watched flow, which is what
 * the solver consumes (docs/measurement.md, docs/model.md). Both live here so the boundary between
 * "what was measured" and "what the model needs" is one header.
 *
 * Units are in the names. Counts (pkts_, drops, polls) are deltas over the
 * epoch; rates are per second of wall time unless the name says otherwise.
 * A measured value that is not available is NaN for doubles (and the
 * corresponding `*_valid`/`*_source` field says why) - never a made-up zero.
 *
 * Fields may be added; renaming or changing units is an API change.
 */
#ifndef RXB_MEASURE_H
#define RXB_MEASURE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define RXB_MAX_CPUS		512
#define RXB_MAX_SOCKS		16	/* watched ports */
#define RXB_MAX_TIDS		8	/* receiver threads per watched socket */
#define RXB_MAX_NICS		16
#define RXB_MAX_NAPI		16
#define RXB_MAX_IRQS		32
#define RXB_MAX_PROGS		32
#define RXB_MAX_DROP_REASONS	64
#define RXB_NAME_LEN		32
#define RXB_IFNAME_LEN		16	/* IFNAMSIZ */
#define RXB_REASON_LEN		48
#define RXB_NOTE_LEN		128

/* ---------------------------------------------------------------- model -- */

/* How a bulk service takes packets from the queue (docs/model.md §2). */
enum rxb_batch_rule {
	RXB_BATCH_PARTIAL = 0,	/* removes min(n, N): coalescing with a timeout */
	RXB_BATCH_STRICT = 1,	/* fires only with >= N present (the SRN's SPN) */
};

/* Slots of the off-CPU window histogram (the sched probe's SCHED_HIST_SLOTS). */
#define RXB_OFFCPU_SLOTS	32

/*
 * Per slot of such a histogram, the windows' lengths summed and their
 * squares summed, weighted as the counts are: with the count, each slot's
 * mean and standard deviation.
 */
struct rxb_win_sums {
	double sum_s[RXB_OFFCPU_SLOTS];
	double sq_s2[RXB_OFFCPU_SLOTS];
};

/* What the solver needs for one queue stage of one flow. */
struct rxb_stage_inputs {
	double cpu_bound;	/* #C on the server's CPU(s); may be fractional */
	double io_bound;	/* #I */
	double mu_pio_per_s;	/* CPU burst rate of I/O-bound tasks */
	double mu_disk_per_s;	/* disk service rate */
	double mu_net_per_s;	/* server's rate per batch when alone on the CPU */
	/*
	 * The same once the queue has overflowed, when it is lower: a
	 * receiver that has fallen behind reads each packet long after it
	 * arrived, out of cache (docs/model.md §2.1). Arrivals beyond what
	 * the server keeps up with at mu_net_per_s fill the queue, and it is
	 * then served at this rate: the fluid limit of a server that slows
	 * once its queue is deep. 0: mu_net_per_s throughout.
	 */
	double mu_net_full_per_s;
	uint32_t queue_pkts;	/* K */
	uint32_t batch_pkts;	/* N */
	enum rxb_batch_rule rule;
	/*
	 * Stage A served in softirq context preempts tasks: its rate does not
	 * depend on #C/#I, so the tagged-customer step is skipped.
	 */
	bool load_independent;
	/*
	 * A server that stays runnable and is switched out by the scheduler
	 * for vacation_s (D) once every vacation_period_s (P): while it is
	 * off, arrivals beyond the K the queue holds are lost. 0: none known
	 * (a server that sleeps between batches, or not measured).
	 */
	double vacation_s;
	double vacation_period_s;
	/*
	 * CPU time per packet arriving at this stage that interrupt context
	 * (an earlier stage's softirq: RPS, or the NIC's IRQ on this CPU)
	 * spends on the server's CPU, ns. It preempts every task there, so at
	 * an arrival rate lambda the server keeps 1 - lambda x this of the
	 * service rate the rest describes. 0: none (the usual case when the
	 * softirq runs on another CPU).
	 */
	double irq_ns_per_pkt;
	/*
	 * How far the server's rate strays, over the length of a blast, from
	 * the rate the rest describes: the relative standard deviation of a
	 * lognormal factor on every service rate of the stage (0: known
	 * exactly). The solver then minimises the transfer time expected over
	 * that factor (bneck.h), which keeps the rate off an edge where a
	 * drain a few per cent slow costs a round.
	 */
	double mu_rel_sd;
	/*
	 * The server's off-CPU windows after preemption (docs/model.md
	 * §2.2): offcpu_per_s of them per second, their lengths as a log2
	 * histogram of nanoseconds (slot r: [2^r, 2^(r+1)) ns; only its shape
	 * matters). Used by the windows loss model (BNECK_LOSS_WINDOWS);
	 * offcpu_per_s 0: none measured.
	 */
	double offcpu_per_s;
	double offcpu_hist[RXB_OFFCPU_SLOTS];
	/*
	 * Each slot's mean window and its standard deviation, seconds (0:
	 * not measured: the slot is taken log-uniform, solver/offwin.h).
	 */
	double offcpu_mean_s[RXB_OFFCPU_SLOTS];
	double offcpu_sd_s[RXB_OFFCPU_SLOTS];
	double offcpu_gap_s;	/* mean run a window ends; 0: unknown */
	/*
	 * Its runqueue waits after a wakeup from sleep, per second and as a
	 * log2-ns histogram: off-CPU windows that begin with the queue empty
	 * (it blocked because the socket was). 0: none measured.
	 */
	double wake_per_s;
	double wake_hist[RXB_OFFCPU_SLOTS];
	double wake_mean_s[RXB_OFFCPU_SLOTS];	/* as offcpu_mean_s */
	double wake_sd_s[RXB_OFFCPU_SLOTS];
	/*
	 * The longest of those waits: the top slot's waits lie below it
	 * rather than spread over the whole slot. 0: unknown.
	 */
	double wake_max_s;
	/*
	 * The fastest the receiver read, packets per second of receiving,
	 * while the windows above were met. The windows of a receiver that had little to do
	 * say little of those it meets with more: under the service model
	 * (BNECK_LOSS_SERVICE) they hold up to BNECK_WINDOWS_REACH times this
	 * rate, and above it the stage is as under BNECK_LOSS_WINDOWS.
	 * 0: not known, no bound.
	 */
	double windows_seen_pps;
	/*
	 * Packets the reader dequeues before the queue's memory is given back
	 * (a UDP socket returns it once a quarter of its buffer was read,
	 * unless the queue ran empty): a full queue admits nothing until
	 * then. 0: at once.
	 */
	double queue_release_pkts;
	/*
	 * What the server was measured to drain, packets per second, while
	 * its queue overflowed at this load (it then stays runnable and
	 * takes its turns with the co-runners). Under the service loss model
	 * (BNECK_LOSS_SERVICE) a stage whose arrivals exceed it is a queue
	 * drained at it, not the server alone between its windows or in a
	 * quota's fast phase. 0: not measured.
	 */
	double sat_drain_pkts_per_s;
	/*
	 * Packets per second that arrived while that drain was measured. The
	 * interrupts of every one of them (irq_ns_per_pkt, dropped or not)
	 * took the receiver's CPU, so at arrivals lambda the drain is
	 * sat_drain_pkts_per_s x bneck_irq_share(lambda) /
	 * bneck_irq_share(sat_drain_arrivals_pps): more below a blast's
	 * rate, less above it. 0: not known, the drain at every rate.
	 */
	double sat_drain_arrivals_pps;
	/*
	 * A co-runner held to a CPU quota (solver/qphase.h): its period, the
	 * part of it the group runs, and the receiver's CPU share while it
	 * runs and while it is throttled. quota_period_s 0: none. Under the
	 * windows and service loss models they stand for the windows, which
	 * such a group's turns make.
	 */
	double quota_period_s;
	double quota_slow_s;
	double quota_slow_share;
	double quota_fast_share;
};

/* ---------------------------------------------------------- measurement -- */

struct rxb_cpu_meas {
	int cpu;
	double cpu_bound;	/* time-weighted number of CPU-bound tasks here */
	double io_bound;	/* time-weighted number of I/O-bound tasks here */
	double busy_frac;	/* 1 - idle fraction of the epoch */
	double softirq_frac;	/* NET_RX softirq time / epoch */
	double hardirq_frac;	/* hard IRQ handler time / epoch */
	double runnable_avg;	/* mean runnable tasks (incl. running) */
	uint64_t switches;
	uint64_t preemptions;	/* switches with prev still runnable */
	double cpu_bound_slice_ns; /* mean slice of the CPU-bound tasks here */
	uint64_t untraced_switches;	/* switches the tracepoint missed (seen
					 * as a break in the prev/next chain) */
	double cpu_bound_run_ns;	/* mean run of the CPU-bound tasks here
					 * that ended in preemption: the slice
					 * as the tick enforces it */
	double cpu_bound_eff;	/* competing load in nice-0 receiver
				 * equivalents: weights, quotas, part-time
				 * tasks (daemon/collect/cpushare.h) */
	bool cpu_bound_eff_valid;	/* false: not measured, use cpu_bound */
	/*
	 * One competing cgroup held to a CPU quota here makes two phases per
	 * period (daemon/collect/cpushare.h): its period, the part of it the
	 * group runs, and a nice-0 receiver's share then and while the group
	 * is throttled. quota_period_s 0: no such group (or several).
	 */
	double quota_period_s;
	double quota_slow_s;
	double quota_slow_share;
	double quota_fast_share;
};

struct rxb_disk_meas {
	bool valid;		/* false: no completions this epoch */
	char device[32];	/* the disk measured (the busiest one) */
	uint64_t completions;	/* requests the service time is the mean of */
	double mean_service_ns;	/* block_rq_issue -> block_rq_complete */
	double service_rate_per_s;	/* 1 / mean_service_ns: mu_D */
	double mean_cpu_burst_ns;	/* I/O-bound tasks' on-CPU time between disk waits */
	double io_cpu_rate_per_s;	/* 1 / mean_cpu_burst_ns: mu_P-I/O */
};

/* Stage A: one NAPI instance (or the per-CPU backlog). */
struct rxb_napi_meas {
	char dev[RXB_IFNAME_LEN];
	uint64_t polls;
	uint64_t pkts;
	double pkts_per_poll;	/* N_A */
	int32_t budget;
	double service_ns_per_poll;	/* NET_RX softirq time attributed per poll */
	double service_rate_per_s;	/* polls per second of softirq busy time */
	uint64_t full_polls;	/* polls that used their whole budget */
};

struct rxb_irq_meas {
	int irq;
	char name[RXB_NAME_LEN];
	uint64_t count;
	double rate_per_s;
	double mean_ns;
};

struct rxb_cpu_time {
	int cpu;
	uint64_t oncpu_ns;
};

struct rxb_drop_count {
	char reason[RXB_REASON_LEN];	/* enum skb_drop_reason name, sans prefix */
	uint64_t count;
};

/* Stage B: one watched socket (by local port). */
/*
 * One involuntary preemption of a watched socket's receiver thread (it left
 * the CPU still runnable) and the off-CPU interval that followed: what the
 * pause-window predictor is checked against (docs/pause.md). Times are
 * CLOCK_MONOTONIC ns.
 */
#define RXB_RX_PREEMPT_EEVDF	0x1	/* the kernel schedules with EEVDF */

struct rxb_rx_preempt {
	uint32_t tid;
	uint32_t cpu;		/* where it was preempted */
	uint32_t flags;		/* RXB_RX_PREEMPT_* */
	uint32_t blocks;	/* runs of this thread that ended by blocking
				 * since its previous preemption */
	uint32_t port;		/* the watched port it last dequeued from */
	uint64_t run_start_ns;	/* switch-in that began the preempted run
				 * (0: not seen) */
	uint64_t out_ns;	/* switched out while runnable */
	uint64_t in_ns;		/* on a CPU again */
	uint64_t slice_ns;	/* its se.slice then (EEVDF; 0 on CFS) */
	uint64_t next_slice_ns;	/* se.slice of the task that took the CPU */
};

/*
 * Sizes of loss episodes (bursts of rcvbuf drops, bpf/sockq.h), in packets,
 * by bucket: four per power of two, bucket i covering the sizes from
 * rxb_episode_bucket_lo(i) up to rxb_episode_bucket_lo(i + 1).
 */
#define RXB_EPISODE_BUCKETS	128
#define RXB_EPISODE_BINS	8

static inline double rxb_episode_bucket_lo(unsigned int i)
{
	return (double)(1ULL << (i / 4)) * (1.0 + (double)(i % 4) / 4.0);
}

struct rxb_episode_bin {
	uint16_t bucket;	/* < RXB_EPISODE_BUCKETS */
	uint32_t count;		/* episodes of that size that ended */
};

struct rxb_sock_meas {
	uint16_t port;
	uint8_t ipproto;	/* IPPROTO_UDP / IPPROTO_TCP */
	uint8_t rcvbuf_ipproto;	/* that of the socket rcvbuf_bytes is from,
				 * 0 = unknown */
	uint64_t pkts_in;	/* arrived at the socket: enqueued + dropped there */
	uint64_t pkts_out;	/* dequeued by the application */
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t drops;		/* all reasons attributed to this socket */
	uint64_t drops_rcvbuf;	/* reason SOCKET_RCVBUFF */
	uint64_t recv_wakeups;	/* times the receiver was woken to dequeue */
	double pkts_per_wakeup;	/* N_B */
	uint64_t receiver_oncpu_ns;
	double cpu_ns_per_pkt;	/* receiver threads' on-CPU ns / pkts_out */
	int ntids;
	int32_t tids[RXB_MAX_TIDS];
	int ncpus_ran;
	struct rxb_cpu_time ran_on[8];	/* where the receiver threads ran */
	uint32_t rcvbuf_bytes;	/* sk_rcvbuf at the end of the epoch */
	double truesize_per_pkt_bytes;	/* memory charged per queued packet */
	uint32_t queue_pkts_cap;	/* K_B = rcvbuf / truesize */
	int64_t queue_pkts_delta;	/* change of the queue length over the epoch */
	/* Added with the collectors (daemon/collect/collect*.c). */
	uint64_t pkts_enqueued;	/* of pkts_in, queued (the rest were dropped) */
	bool counts_valid;	/* pkts_*, bytes_*, drops_rcvbuf, queue, receiver
				 * fields measured (false without BPF) */
	bool drops_valid;	/* drops measured (BPF with rx_sk, or /proc) */
	bool arrivals_seen;	/* without counts (no BPF): /proc showed packets
				 * arriving at the port's sockets this epoch
				 * (drops, queued bytes, or the namespace's UDP
				 * counters when no other UDP socket is bound) */
	/* The receiver threads' scheduling, the pause-window inputs (§6). */
	uint64_t receiver_preemptions;
	double run_before_preempt_ns;	/* mean run that ended in preemption */
	double preempt_off_ns;	/* mean off-CPU interval after a preemption */
	double sleep_off_ns;	/* mean off-CPU interval after blocking */
	/*
	 * Of those after a sleep in S state (on an empty socket), the part
	 * spent woken but waiting for a CPU: how many, and their mean.
	 */
	uint64_t wake_waits;
	double wake_wait_ns;
	/*
	 * The time the receiver threads had traffic: on the CPU, off it
	 * after a preemption, and asleep for less than SCHED_IDLE_SLEEP_NS
	 * (bpf/sched.h) or blocked on anything but its socket; weighted as
	 * above. The off-CPU windows' rates are per second of this.
	 */
	double active_ns;
	/*
	 * The off-CPU intervals after preemption, counted by log2 ns slot
	 * (slot r: [2^r, 2^(r+1)) ns), each thread weighted by its share of
	 * the port's packets; valid with receivers_valid.
	 */
	double offcpu_hist[RXB_OFFCPU_SLOTS];
	struct rxb_win_sums offcpu_sums;	/* their lengths, the same way */
	/* Their runqueue waits after a wakeup from sleep, the same way. */
	double wake_hist[RXB_OFFCPU_SLOTS];
	struct rxb_win_sums wake_sums;
	/* The longest of those waits (any thread's), 0: none seen; valid
	 * with receivers_valid. */
	double wake_max_ns;
	int nreasons;
	struct rxb_drop_count drop_reasons[8];	/* this socket's, largest first */
	/* Added with the sampling of the per-packet probes (net_sampled). */
	bool queue_valid;	/* queue_pkts_delta measured: the queue length
				 * at both ends of the epoch is known */
	bool reasons_valid;	/* drops_rcvbuf, drop_reasons[] measured (the
				 * drop probe with rx_sk; every epoch) */
	bool receivers_valid;	/* tids, ran_on, receiver_oncpu_ns,
				 * recv_wakeups, receiver_* measured; in an
				 * epoch that was not sampled: for the threads
				 * that dequeued in the latest sampled one */
	/* Added with the spin separation (daemon/model/cost.c). */
	uint64_t empty_reads;	/* reads that found the queue empty (-EAGAIN):
				 * a polling receiver's turns of its loop;
				 * valid with counts_valid */	/* Added with the loss episodes (bpf/sockq.h). */
	uint64_t drop_episodes;	/* rcvbuf drop episodes begun in the epoch;
				 * valid with reasons_valid */
	int nepisode_bins;	/* episodes that ended in the epoch, by size, */
	struct rxb_episode_bin episodes_ended[RXB_EPISODE_BINS];	/* smallest first */
	bool episode_bins_cut;	/* more sizes than RXB_EPISODE_BINS: the
				 * largest are missing */
};

enum rxb_param_source {
	RXB_SRC_NONE = 0,	/* unknown */
	RXB_SRC_DEVICE,		/* answered by the device (ethtool netlink) */
	RXB_SRC_CONFIG,		/* device said "not supported": configured value */
};

struct rxb_nic_meas {
	char name[RXB_IFNAME_LEN];
	int ifindex;
	uint32_t rx_ring;	/* current RX ring size */
	uint32_t rx_ring_max;
	enum rxb_param_source ring_source;
	uint32_t rx_max_frames;	/* coalescing: frames per interrupt */
	uint32_t rx_usecs;
	enum rxb_param_source coalesce_source;
	uint64_t rx_packets;	/* IFLA_STATS64 deltas */
	uint64_t rx_missed;
	uint64_t rx_fifo;
	uint64_t rx_dropped;
	uint64_t rx_over;
	char note[RXB_NOTE_LEN];	/* e.g. why a fallback was used */
};

struct rxb_probe_cost {
	char prog[RXB_NAME_LEN];
	uint64_t run_cnt;	/* delta over the epoch */
	uint64_t run_time_ns;	/* delta over the epoch */
	double avg_ns;		/* run_time_ns / run_cnt */
};

/* Probe groups (bpf/) a record was measured with (rxb_epoch.probes). */
enum rxb_probe_group {
	RXB_PROBE_SCHED = 1u << 0,	/* task classes, receivers' CPU time */
	RXB_PROBE_NETRX = 1u << 1,	/* IRQs, NET_RX softirq, NAPI */
	RXB_PROBE_SOCKQ = 1u << 2,	/* watched sockets, drops by reason */
	RXB_PROBE_BLKIO = 1u << 3,	/* disk service time */
};

/* Why the record is incomplete; several may be set. */
enum rxb_degraded {
	RXB_DEGRADED_NO_BPF = 1u << 0,		/* probes not loaded: /proc only */
	RXB_DEGRADED_NO_NETLINK = 1u << 1,	/* NIC parameters unavailable */
	RXB_DEGRADED_NO_BPF_STATS = 1u << 2,	/* probe cost unknown */
	RXB_DEGRADED_PARTIAL_PROBES = 1u << 3,	/* some programs failed to attach */
};

struct rxb_epoch {
	uint64_t seq;		/* epoch number, from 1 */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	char attach_mode[16];	/* "tp_btf", "raw_tp" or "none" */

	int ncpus;
	struct rxb_cpu_meas cpus[RXB_MAX_CPUS];

	struct rxb_disk_meas disk;

	int nnapi;
	struct rxb_napi_meas napi[RXB_MAX_NAPI];

	int nirqs;
	struct rxb_irq_meas irqs[RXB_MAX_IRQS];

	int nsocks;
	struct rxb_sock_meas socks[RXB_MAX_SOCKS];

	int nnics;
	struct rxb_nic_meas nics[RXB_MAX_NICS];

	int nreasons;
	struct rxb_drop_count drops_by_reason[RXB_MAX_DROP_REASONS];

	int nprogs;
	struct rxb_probe_cost probe_cost[RXB_MAX_PROGS];

	uint32_t degraded;	/* enum rxb_degraded bits */
	char degraded_reason[256];
	uint32_t probes;	/* enum rxb_probe_group bits loaded */

	/*
	 * The per-packet probes (netrx's NET_RX softirq and napi_poll
	 * programs, sockq's enqueue and dequeue programs) are attached for
	 * one epoch in net_probe_every only. In an epoch that was not
	 * sampled, napi[] is empty, cpus[].softirq_frac is NaN and every
	 * socket has counts_valid and queue_valid false - not measured, not
	 * zero. Drops (drops_by_reason[], sockets' drops, drops_rcvbuf, drop
	 * reasons), IRQs, task classes, the disk and the receivers'
	 * scheduling are measured in every epoch.
	 */
	uint32_t net_probe_every;	/* 1: every epoch */
	bool net_sampled;		/* this epoch's stage A/B counts measured */
	/*
	 * Stage A's programs (NET_RX softirq, napi_poll) covered this epoch
	 * too: they are attached in one sampled epoch in net_stage_a_every
	 * at most. In a sampled epoch without them napi[] is empty and
	 * cpus[].softirq_frac is estimated (NET_RX softirqs of the epoch
	 * from /proc/softirqs times the time per softirq measured last on
	 * that CPU; NaN before the first).
	 */
	bool net_stage_a;
	uint32_t net_stage_a_every;
	uint64_t net_sampled_seq;	/* latest epoch with net_sampled (this
					 * one when it is), 0 = none yet */
	uint64_t net_attach_ns;		/* time the latest attach of those
					 * programs took, 0 = none yet */
	uint64_t net_detach_ns;		/* ... the latest detach */
	uint64_t net_forced;		/* times the per-packet programs were
					 * attached out of turn because a
					 * watched UDP port had a new socket
					 * (a receiver to name), this run */

	/*
	 * Every involuntary preemption of a receiver thread whose off-CPU
	 * interval ended during the epoch, oldest first. Borrowed from the
	 * collector: valid until its next collect_epoch() or
	 * collect_rx_preempts_early() (NULL/0 without the scheduler probe). rx_preempts_lost counts since start the
	 * events the kernel or the collector had no room for.
	 */
	const struct rxb_rx_preempt *rx_preempts;
	size_t nrx_preempts;
	uint64_t rx_preempts_lost;
};

/* The socket record of local @port in @e, NULL if none (or no @e). */
static inline const struct rxb_sock_meas *rxb_epoch_sock(const struct rxb_epoch *e,
							 uint16_t port)
{
	if (!e)
		return NULL;
	for (int i = 0; i < e->nsocks && i < RXB_MAX_SOCKS; i++)
		if (e->socks[i].port == port)
			return &e->socks[i];
	return NULL;
}

#endif
