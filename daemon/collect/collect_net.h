/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receive path's two stages (docs/measurement.md) from two snapshots of the BPF
 * probes taken one epoch apart. Pure computation: no I/O.
 *
 * Stage A (netrx): per NAPI instance polls, packets per poll (N_A) and the
 * service time per poll; per IRQ counts and handler time; per CPU the share
 * of time in hard IRQ handlers and in NET_RX softirq.
 *
 * Stage B (sockq + sched), per watched port:
 *   pkts_in        = enqueued (sk_data_ready) + dropped at the socket
 *   pkts_out       = dequeued by the application (sock_recv_length)
 *   queue change   = enqueued - dequeued in the epoch (queue_pkts_delta,
 *                    = pkts_in - pkts_out - drops): every packet queued
 *                    passes sk_data_ready, every one taken sock_recv_length
 *   cpu_ns_per_pkt = on-CPU time of the threads that dequeued from it,
 *                    split between sockets by packets dequeued, per packet
 * In a sampled epoch without the enqueue program (sampling.h) arrivals
 * follow by conservation instead (collect_net_conserve()):
 *   queue change   = round(rqueue_end / truesize) - round(rqueue_start /
 *                    truesize): the queue read through socket diagnostics
 *                    at the epoch's edges, in packets of the memory charged
 *                    per packet the latest counted epoch measured
 *   pkts_enqueued  = pkts_out + queue change; pkts_in = that + drops
 *   bytes_in       = bytes_out + queue change x bytes per packet (ditto)
 * exact while the packets are of one size; truesize_per_pkt_bytes is then
 * NaN (not measured) and rcvbuf the diagnostics'. A queue empty at both
 * edges needs no memory per packet: its change is 0.
 *   queue_pkts_cap = floor(rcvbuf / truesize per packet), at least 1: UDP
 *                    queues a packet while the memory charged with it stays
 *                    <= rcvbuf (older kernels admitted one packet more)
 */
#ifndef RXB_DAEMON_COLLECT_NET_H
#define RXB_DAEMON_COLLECT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/netrx.h"
#include "bpf/sched.h"
#include "bpf/sockq.h"
#include "daemon/collect/collect_sched.h"
#include "rxb/measure.h"

/*
 * NET_RX softirqs per CPU counted by the kernel (/proc/softirqs), and the
 * time per softirq that stage A's programs measured last on each CPU: the
 * softirq share of a sampled epoch without them (sampling.h).
 */
struct collect_net_sirq {
	int ncpus;			/* CPUs in cnt[]; 0: not read yet */
	uint64_t cnt[RXB_MAX_CPUS];	/* at the latest epoch end */
	int ndelta;			/* CPUs in delta[]; 0: unknown */
	uint64_t delta[RXB_MAX_CPUS];	/* over the latest epoch */
	double ns_per[RXB_MAX_CPUS];	/* time per softirq; 0: not yet */
};

/* Take the counts of @text (/proc/softirqs) as the latest epoch's end
 * (NULL: unreadable, the deltas are unknown until two reads succeed). */
void collect_net_sirq_update(struct collect_net_sirq *q, const char *text);

/*
 * Fill out->napi[], out->irqs[] and cpus[].softirq_frac / hardirq_frac.
 * Not @sampled (the per-packet programs were not attached for the whole
 * epoch): only the IRQs and hardirq_frac; napi[] stays empty and
 * softirq_frac NaN. Sampled without @stage_a (its programs detached):
 * napi[] empty, softirq_frac estimated from @q (a CPU never timed is
 * priced at the others' mean time per softirq; NaN before any was timed);
 * with @stage_a, @q (may be NULL) learns each CPU's time per softirq from
 * an epoch that timed enough of them. A share above 1 is NaN.
 */
void collect_net_stage_a(const struct netrx_snap *prev, const struct netrx_snap *cur,
		  bool sampled, bool stage_a, struct collect_net_sirq *q,
		  struct rxb_epoch *out);

/*
 * The distinct receiver threads in @cur (sorted), for collect_sched_compute().
 * Returns how many were written to @tids (at most @max).
 */
size_t collect_net_receivers(const struct sockq_snap *cur, struct collect_sched_tid_time *tids,
		      size_t max);

/* Name of a drop reason value, or NULL (then the number is shown). */
typedef const char *(*collect_net_reason_fn)(void *arg, uint32_t reason);

/*
 * Which threads received from each watched port in the latest sampled
 * epoch, and each one's share of its packets that came from that port: in
 * the epochs in between, the receivers' scheduling (always measured) is
 * attributed to the ports with these.
 */
#define COLLECT_NET_MAX_RX_PER_PORT	32

struct collect_net_port_rx {
	uint16_t port;
	int n;
	uint32_t tid[COLLECT_NET_MAX_RX_PER_PORT];
	double share[COLLECT_NET_MAX_RX_PER_PORT];
	/* The latest epoch with enqueues counted: memory charged and payload
	 * per enqueued packet (0: none yet), for the derived epochs. */
	double truesize_per_pkt_bytes;
	double bytes_per_pkt;
};

/* A derived epoch's arrivals (collect_net_conserve()). */
struct collect_net_derived {
	int64_t queue_pkts_delta;
	uint64_t pkts_enqueued;
	uint64_t bytes_in;
};

/*
 * Arrivals by conservation from @pkts_out and @bytes_out dequeued, the
 * queue's bytes charged at the epoch's start and end (@rq0_bytes,
 * @rq1_bytes) and the memory charged and payload per packet. False (and
 * *@d untouched) when @truesize_per_pkt_bytes is not positive and the
 * queue was not empty at both edges.
 */
bool collect_net_conserve(uint64_t pkts_out, uint64_t bytes_out, uint64_t rq0_bytes,
			  uint64_t rq1_bytes, double truesize_per_pkt_bytes,
			  double bytes_per_pkt, struct collect_net_derived *d);

struct collect_net_rx_memory {
	int nports;
	struct collect_net_port_rx ports[RXB_MAX_SOCKS];
};

/*
 * Whether the memory charged per packet of every port of @ports is known:
 * left in @mem by a counted epoch, or counted (@enq_counted) by the epoch
 * from @prev to @cur, which collect_net_stage_b() has not taken in yet
 * (NULL: none). Without it a derived epoch has the arrivals of a port only
 * while its queue is empty at both edges, so the enqueue program stays
 * attached until then (sampling.h).
 */
bool collect_net_sizes_known(const struct collect_net_rx_memory *mem,
			     const struct sockq_snap *prev, const struct sockq_snap *cur,
			     bool enq_counted, const uint16_t *ports, int nports);

/*
 * Fill out->socks[] for @ports from the socket snapshots, the receivers'
 * on-CPU times (@tids from collect_sched_compute()) and the receivers' scheduling
 * statistics (rx entries of the sched snapshots; either may be NULL).
 *
 * @sampled: the per-packet programs were attached for the whole epoch, so
 * the packet counts, the queue and the costs are measured; @mem is then
 * updated with the epoch's receivers. @enq_counted: the enqueue program
 * was too; else arrivals are derived (above), which needs the queue at
 * both edges (have_rqueue) and a counted epoch with packets before (unless
 * the queue was empty at both): without them the port's epoch is reported
 * as not sampled. Otherwise only the drops (their
 * probe is always attached) and the scheduling of the receivers in @mem
 * are reported; counts_valid is false.
 */
void collect_net_stage_b(const struct sockq_snap *prev, const struct sockq_snap *cur,
		  const struct sched_snap *sprev, const struct sched_snap *scur,
		  const struct collect_sched_tid_time *tids, size_t ntids,
		  const uint16_t *ports, int nports, collect_net_reason_fn name, void *arg,
		  bool sampled, bool enq_counted, struct collect_net_rx_memory *mem,
		  struct rxb_epoch *out);

/* Host-wide drops by reason. */
void collect_net_drop_reasons(const struct sockq_snap *prev, const struct sockq_snap *cur,
		       collect_net_reason_fn name, void *arg, struct rxb_epoch *out);

#endif
