/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What /proc gives without BPF (degraded mode), and the CPU idle
 * time the BPF path takes from /proc too. Each function keeps the previous
 * reading in the collect_proc state and fills its part of the epoch with the
 * change since; the first call of each only takes the baseline (and leaves
 * its values NaN / invalid).
 *
 * Degraded task classes use the same rule as collect_sched.h, with
 *   on-CPU / runqueue wait = /proc/<pid>/task/<tid>/schedstat,
 *   preemptions / blocks   = nonvoluntary / voluntary_ctxt_switches,
 *   the CPU                = the last CPU it ran on (stat field 39),
 *   disk waits             = delayacct_blkio_ticks, which only count with
 *                            kernel.task_delayacct=1: otherwise io_bound is
 *                            NaN and the reason says so.
 * Threads first seen in an epoch are classified from the next one on.
 * Disk: /proc/diskstats of the busiest whole disk, mean time per completed
 * request (queueing in the block layer included: "await", not pure service).
 * Sockets: /proc/net/udp{,6} drops (sk_drops, every reason) per local port;
 * packet counts are unknown (counts_valid false), but that packets arrived
 * is seen (arrivals_seen) when the port's sockets dropped some or held
 * some at the end of the epoch, or when they are the namespace's only UDP
 * sockets and its UDP counters (/proc/net/snmp{,6}) moved.
 */
#ifndef RXB_DAEMON_COLLECT_PROC_H
#define RXB_DAEMON_COLLECT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxb/measure.h"

struct collect_proc;

int collect_proc_init(struct collect_proc **out);
void collect_proc_finish(struct collect_proc *cp);

/* busy_frac per CPU; with @irq_fracs also hardirq/softirq_frac from the
 * irq/softirq ticks (all softirq vectors, not only NET_RX). Sets ncpus if
 * it is 0. 0 or -errno. */
int collect_proc_cpu_times(struct collect_proc *cp, struct rxb_epoch *out, bool irq_fracs);

/* Task classes, runnable_avg, per CPU. @why gets a reason when io_bound
 * cannot be measured. 0 or -errno. */
int collect_proc_tasks(struct collect_proc *cp, struct rxb_epoch *out, char *why, size_t whylen);

/* out->disk (service fields only). 0 or -errno. */
int collect_proc_disk(struct collect_proc *cp, struct rxb_epoch *out);

/*
 * The sockets bound to a watched port: how many, and the sum of their
 * inodes. Another sum, or more sockets, means a receiver that started
 * since, which only the socket dequeue probe can name.
 */
struct port_socks {
	uint16_t port;
	uint32_t nsocks;
	uint64_t inode_sum;
};

/* @out[i] for each of @ports (at most RXB_MAX_SOCKS): its UDP sockets, from
 * /proc/net/udp and udp6. The number filled, or -errno. */
int collect_proc_udp_port_socks(struct collect_proc *cp, const uint16_t *ports, int nports,
			 struct port_socks *out);

/* out->socks[] for @ports: drops from /proc/net/udp{,6}, arrivals_seen. 0 or -errno. */
int collect_proc_sockets(struct collect_proc *cp, const uint16_t *ports, int nports,
		  struct rxb_epoch *out);

/* out->irqs[] from /proc/interrupts: counts and rates (no handler time). */
int collect_proc_irqs(struct collect_proc *cp, struct rxb_epoch *out);

#endif
