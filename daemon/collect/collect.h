/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The measurement collector: turns what the BPF probes (bpf/), /proc and
 * netlink counted since the previous call into one struct rxb_epoch
 * (include/rxb/measure.h), the input of the model.
 *
 *	struct collect_opts o = COLLECT_OPTS_DEFAULT;
 *	struct collect *c;
 *	struct rxb_epoch *e = malloc(sizeof(*e));  // large: do not put on the stack
 *	o.ports = ports; o.nports = 1;
 *	if (collect_init(&c, &o) == 0) {
 *		// ... every epoch:
 *		collect_epoch(c, e);   // the counters since the previous call
 *		collect_finish(c);
 *	}
 *
 * collect_init() loads and attaches the probes (tp_btf or raw_tp, see
 * enum collect_attach), takes the baseline, and returns. Each
 * collect_epoch() covers the time since the previous call (or since
 * collect_init()). Nothing here crashes or leaks on a kernel/BPF failure:
 * a probe group that cannot be loaded is left out and the record says so in
 * `degraded` / `degraded_reason`; with no BPF at all the record holds what
 * /proc and netlink give. Values that cannot be measured are NaN (or,
 * for counts, marked invalid by their *_valid flag) - never invented.
 *
 * Not thread-safe: one thread (the epoch loop) owns a collector.
 */
#ifndef RXB_DAEMON_COLLECT_H
#define RXB_DAEMON_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/util.h"
#include "daemon/collect/collect_sched.h"
#include "rxb/measure.h"

enum collect_attach {
	COLLECT_ATTACH_AUTO = 0,	/* tp_btf if the feature probe says so, else raw_tp */
	COLLECT_ATTACH_TP_BTF,		/* force tp_btf (fails -> degraded) */
	COLLECT_ATTACH_RAW_TP,		/* force the raw_tp fallback */
	COLLECT_ATTACH_NONE,		/* no BPF: /proc and netlink only */
};

/* Fallback NIC parameters for devices that do not report them (veth). */
#define COLLECT_DEFAULT_RX_RING		256	/* virtio-net/veth-like ring */
#define COLLECT_DEFAULT_RX_MAX_FRAMES	1	/* no coalescing: one frame per IRQ */
#define COLLECT_DEFAULT_RX_USECS	0

#define COLLECT_MAX_DEVICES	RXB_MAX_NICS

/* Probe groups (bpf/) to load: enum rxb_probe_group bits. */
#define COLLECT_GROUP_SCHED	RXB_PROBE_SCHED
#define COLLECT_GROUP_NETRX	RXB_PROBE_NETRX
#define COLLECT_GROUP_SOCKQ	RXB_PROBE_SOCKQ
#define COLLECT_GROUP_BLKIO	RXB_PROBE_BLKIO
#define COLLECT_GROUP_ALL	0xfu

/* [measure] net_probe_every's upper bound: one epoch in an hour at 1 s. */
#define COLLECT_MAX_NET_PROBE_EVERY	3600
/*
 * The daemon's net_stage_a_every: while it learns (per-packet programs in
 * every epoch) stage A's costs come from one epoch in 8, which still gives
 * the 15-s learning phase two epochs of them at 1-s epochs (eight at
 * 250 ms), and takes three of the per-packet program runs off seven
 * epochs in eight: with one in 4 the learning epochs kept 0.976 of the
 * probes-off throughput, short of 0.97 within their intervals; with one
 * in 8, 0.987 (docs/measurement.md, "Overhead").
 */
#define COLLECT_STAGE_A_EVERY		8

struct collect_opts {
	const uint16_t *ports;		/* local ports to watch (UDP/TCP) */
	int nports;			/* <= RXB_MAX_SOCKS */
	enum collect_attach attach;
	unsigned groups;		/* COLLECT_GROUP_* bits; 0 = all */
	/* NIC devices to report; none: every up, non-loopback device. */
	const char (*devices)[RXB_IFNAME_LEN];
	int ndevices;
	uint32_t fallback_rx_ring;
	uint32_t fallback_rx_max_frames;
	uint32_t fallback_rx_usecs;
	/* Turn on kernel.bpf_stats_enabled while the collector lives (the
	 * previous setting comes back when it is closed) for probe_cost[]. */
	bool bpf_stats;
	/* Seed per-task baselines from /proc at start, so the first epoch
	 * also covers tasks that did not switch since the probes attached. */
	bool seed_from_proc;
	/* Keep the list of classified tasks of the last epoch
	 * (collect_task_report()), for inspection and tests. */
	bool report_tasks;
	/*
	 * Attach the per-packet programs (stage A's softirq and napi_poll
	 * programs, stage B's enqueue and dequeue programs) for one epoch in
	 * this many only: the first epoch, then every net_probe_every-th, and
	 * the first whole epoch after a new port is watched. 0 or 1: every
	 * epoch. The record says which epochs were sampled (net_sampled);
	 * drops, task classes, IRQs and the disk are measured in every one.
	 */
	uint32_t net_probe_every;
	/*
	 * Within the sampled epochs, attach stage A's programs (NET_RX
	 * softirq entry and exit, napi_poll) in one in this many at most
	 * (sampling.h); 0 or 1: in every sampled epoch. The record says
	 * which epochs had them (net_stage_a).
	 */
	uint32_t net_stage_a_every;
};

#define COLLECT_OPTS_DEFAULT {						\
	.attach = COLLECT_ATTACH_AUTO,					\
	.fallback_rx_ring = COLLECT_DEFAULT_RX_RING,			\
	.fallback_rx_max_frames = COLLECT_DEFAULT_RX_MAX_FRAMES,	\
	.fallback_rx_usecs = COLLECT_DEFAULT_RX_USECS,			\
	.bpf_stats = true,						\
	.seed_from_proc = true,						\
	.net_probe_every = 1,						\
	.net_stage_a_every = 1,						\
}

struct collect;

/*
 * Create a collector. Fails only for invalid options (-EINVAL) or no memory
 * (-ENOMEM); kernel-side failures degrade instead. The options are copied.
 */
int collect_init(struct collect **out, const struct collect_opts *opts);

/*
 * Fill @out with everything counted since the previous call. @out is
 * overwritten entirely. 0, or -errno when nothing at all could be read (the
 * record then still says why in degraded_reason).
 */
int collect_epoch(struct collect *c, struct rxb_epoch *out);

/* The classified tasks of the last epoch (empty unless report_tasks). */
const struct collect_sched_report *collect_task_report(const struct collect *c);

/* Watch these ports from now on (senders come and go). 0 or -errno. */
int collect_set_ports(struct collect *c, const uint16_t *ports, int n);

/* Sample the per-packet programs one epoch in @every from now on (1..
 * COLLECT_MAX_NET_PROBE_EVERY; see collect_opts). 0 or -EINVAL. */
int collect_set_net_probe_every(struct collect *c, uint32_t every);

/*
 * Between epochs, while the per-packet programs are detached (sampling):
 * look for new sockets on the watched ports (UDP sockets, TCP listeners)
 * every SAMPLING_POLL_NS (sampling.h) and attach the programs at once when
 * one appears, so a receiver that starts between two samples is named at
 * its first read. collect_poll_due_ns(): when to call collect_poll() next
 * (CLOCK_MONOTONIC; UINT64_MAX: no need).
 */
uint64_t collect_poll_due_ns(const struct collect *c);
void collect_poll(struct collect *c, uint64_t now_ns);

/*
 * Within an epoch: the receiver preemptions queued since the last call (or
 * the epoch), in *out (valid until the next call or collect_epoch()); they
 * are handed out again, with the rest, by the next collect_epoch(). So the
 * daemon can act on a new receiver's scheduler turns before the epoch ends
 * (flows_rx_early()). Returns how many; 0 without the scheduler probe.
 */
size_t collect_rx_preempts_early(struct collect *c, const struct rxb_rx_preempt **out);
/*
 * A descriptor, owned by @c, that polls readable while preemptions wait for
 * collect_rx_preempts_early(): an event loop can sleep until the first one
 * instead of looking on a timer. -errno without the scheduler probe.
 */
int collect_rx_preempts_fd(const struct collect *c);

/* Detach everything, restore bpf_stats_enabled, free. NULL is allowed. */
void collect_finish(struct collect *c);

/* "sched,netrx,sockq,blkio" (any subset, or "all") -> bits; -1 if bad. */
int collect_groups_parse(const char *s);

/* "auto", "tp_btf", "raw_tp", "none" <-> enum; -1 if unknown. */
int collect_attach_parse(const char *s);
const char *collect_attach_name(enum collect_attach a);

#endif
