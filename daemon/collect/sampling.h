/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * When the collector's per-packet programs are attached: netrx's softirq
 * and napi_poll programs and sockq's enqueue and dequeue programs cost
 * time on every packet, so with [measure] net_probe_every = N they are
 * attached for one epoch in N only (the first epoch, then every N-th, and
 * the first whole epoch after a new port is watched). An epoch is sampled
 * when they were attached from before the snapshot that starts it until
 * after the one that ends it, so its counts cover exactly the same
 * interval as everything else in the record.
 *
 * Between samples a receiver that starts is unknown to the dequeue probe
 * and counts as one more CPU-bound task on its CPU. A new socket on a
 * watched port is its sign - a UDP socket bound there, or a TCP listener
 * (not established connections, which a running server accepts in threads
 * it already has, and which would keep the programs attached on a busy
 * port): seen from socket diagnostics, or, without them, UDP sockets from
 * /proc/net/udp. One attaches the programs at once (sampling_poll()) or
 * for the next epoch (sampling_epoch_end()).
 *
 * Within the sampled epochs, stage A's programs (netrx: NET_RX softirq
 * entry and exit, napi_poll) are attached in one in @a_every at most: the
 * first sampled epoch, then the first sampled one at least @a_every epochs
 * after the last with stage A. On veth and loopback every packet is its own
 * softirq and its own poll, so those three programs are three of the four
 * or five program runs per packet on the CPU that queues the packets, and
 * what they measure (the time per poll, the packets per poll, the NET_RX
 * softirq time per softirq) is a cost the model learns over many epochs,
 * not a count it needs in each. The socket's enqueue program
 * (sk_data_ready, on the same CPU) goes with them: it alone reads the
 * memory charged per packet and the receive buffer, and in the other
 * sampled epochs a port's arrivals are its dequeues plus the change of its
 * queue (read through socket diagnostics at each snapshot) plus its drops
 * (collect_net.h). The dequeue program stays attached in every sampled
 * epoch. The enqueue program does too, in every sampled epoch, whenever
 * some watched port's arrivals could not be derived without it: without
 * stage A's probe or socket diagnostics, while a watched port's queue
 * cannot be read (no socket found, no access to its network namespace),
 * and until a counted epoch with packets has measured each port's memory
 * per packet (the derived epochs divide the queue by it) - a port that is
 * new, or idle since the daemon started, is counted, not left without
 * arrivals. It is detached again in the first sampled epoch without stage
 * A after every port has both. With net_probe_every >= a_every every
 * sampled epoch has stage A.
 *
 * The collector owns one struct sampling; the probes and the /proc reader
 * stay the collector's.
 */
#ifndef RXB_DAEMON_COLLECT_SAMPLING_H
#define RXB_DAEMON_COLLECT_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/collect/collect_proc.h"
#include "rxb/measure.h"

#include "common/util.h"

/* Between epochs, a look for new sockets this often (sampling_poll()). */
#define SAMPLING_POLL_NS	(100 * RXB_NSEC_PER_MSEC)

struct netrx_probe;
struct sockq_probe;
struct sockdiag;

struct sampling {
	struct netrx_probe *np;		/* NULL: not loaded */
	struct sockq_probe *sq;		/* NULL: not loaded */
	struct collect_proc *proc;	/* /proc/net/udp without diag */
	struct sockdiag *diag;		/* owned; NULL: unavailable */
	uint32_t every;			/* sample one epoch in this many */
	uint64_t next_seq;		/* the next epoch to sample */
	bool on;			/* attached now */
	uint64_t whole_seq;		/* the first epoch they cover whole
					 * (attached before the snapshot that
					 * started it) */
	uint64_t poll_next_ns;		/* sampling_poll(): next look */
	uint64_t sampled_seq;		/* the latest sampled epoch */
	uint64_t forced;		/* out-of-turn attachments for new
					 * receivers */
	uint64_t attach_ns, detach_ns;	/* the latest ones took */
	bool attach_failing;		/* logged once per failure streak */
	/* Stage A (np) within the sampled epochs. */
	uint32_t a_every;		/* one sampled epoch in this many */
	uint64_t a_next_seq;		/* the next epoch stage A may be in */
	bool a_on;			/* np attached now */
	uint64_t a_whole_seq;		/* the first epoch np covers whole */
	uint64_t a_seq;			/* the latest epoch with stage A */
	/* The enqueue program (SOCKQ_ENQ_TP) within the sampled epochs. */
	bool enq_on;			/* attached now */
	uint64_t enq_whole_seq;		/* the first epoch it covers whole */
	bool enq_counted;		/* it covered the epoch ended last */
	bool derive_ready;		/* every watched port's arrivals can be
					 * derived: its queue was read at the
					 * latest snapshot and a counted epoch
					 * named its memory per packet (the
					 * collector's to set; false until it
					 * does) */
	int nseen;			/* the sockets on each watched port */
	struct port_socks seen[RXB_MAX_SOCKS];	/* at the last look */
};

/*
 * Start with the programs attached (they open attached: the first epoch is
 * a sampled one), sampling one epoch in @every, and open the socket
 * diagnostics (without them, new receivers on UDP ports come from
 * /proc/net/udp through @proc, on TCP ports at the sampling cadence).
 */
void sampling_init(struct sampling *s, struct netrx_probe *np, struct sockq_probe *sq,
		   struct collect_proc *proc, uint32_t every, uint32_t a_every);
void sampling_finish(struct sampling *s);

/* One epoch in @every (>= 1) from the latest sample on, the epoch after
 * @seq at the earliest. */
void sampling_set_every(struct sampling *s, uint32_t every, uint64_t seq);

/* A new port is watched during epoch @seq + 1: sample the first whole
 * epoch from now rather than up to every - 1 later. */
void sampling_new_port(struct sampling *s, uint64_t seq);

/*
 * At the end of epoch @seq, before the snapshot that ends it: whether it
 * was a sampled one (and in *@stage_a, whether stage A's programs covered
 * it too); then, for the next epoch, attach the programs if it is to be
 * sampled (a new socket on @ports makes it so).
 */
bool sampling_epoch_end(struct sampling *s, uint64_t seq, const uint16_t *ports,
			int nports, bool *stage_a);

/*
 * After that snapshot: detach the programs unless the next epoch is
 * sampled, stage A's unless it is due, and the enqueue program unless it
 * goes with stage A or sampling_enq_wanted() (from s->derive_ready, which
 * the collector sets before this).
 */
void sampling_plan(struct sampling *s, uint64_t seq);

/*
 * Whether a sampled epoch has the enqueue program: with stage A's
 * programs (@stage_a), or when arrivals could not be derived without it
 * (no stage A probe @have_np, no diagnostics @have_diag, or not
 * @derive_ready).
 */
bool sampling_enq_wanted(bool stage_a, bool have_np, bool have_diag, bool derive_ready);

/* When to call sampling_poll() next (CLOCK_MONOTONIC; UINT64_MAX: never). */
uint64_t sampling_poll_due_ns(const struct sampling *s, int nports);

/* Between epochs (the last ended being @seq): attach the programs at once
 * if a new socket appeared on @ports. */
void sampling_poll(struct sampling *s, uint64_t now_ns, uint64_t seq,
		   const uint16_t *ports, int nports);

#endif
