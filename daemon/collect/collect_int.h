/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The collector's insides, shared by its files (nothing else includes this):
 *   collect.c         options, life cycle, snapshots, one epoch's record
 *   collect_probes.c  the probe groups: loading them, what a failure leaves
 *                     degraded, closing them, their programs' run-time cost
 */
#ifndef RXB_DAEMON_COLLECT_INT_H
#define RXB_DAEMON_COLLECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/blkio.h"
#include "bpf/netrx.h"
#include "bpf/sched.h"
#include "bpf/sockq.h"
#include "daemon/collect/collect.h"
#include "daemon/collect/collect_net.h"
#include "daemon/collect/collect_proc.h"
#include "daemon/collect/collect_queues.h"
#include "daemon/collect/cpushare.h"
#include "daemon/collect/nic.h"
#include "daemon/collect/rx_preempts.h"
#include "daemon/collect/sampling.h"

#define MAX_RX_TIDS		256

struct prog_cost {
	const struct bpf_program *prog;
	uint64_t run_cnt, run_time_ns;
};

struct collect {
	uint16_t ports[RXB_MAX_SOCKS];
	int nports;
	char devices[COLLECT_MAX_DEVICES][RXB_IFNAME_LEN];
	int ndevices;
	struct nic_fallback fb;
	char fb_note[64];	/* where the ring fallback came from */

	char attach_mode[16];
	struct sched_probe *sp;
	struct netrx_probe *np;
	struct sockq_probe *sq;
	struct blkio_probe *bp;
	int cur;		/* index of the latest snapshots */
	struct sched_snap sched[2];
	struct netrx_snap net[2];
	struct sockq_snap sock[2];
	struct blkio_snap blk[2];
	struct collect_sched_tid_time rx[MAX_RX_TIDS];
	bool report_tasks;
	struct collect_sched_report report;
	struct cpushare share;

	struct sampling smp;	/* when the per-packet programs are attached */
	struct collect_queues queues;	/* the watched UDP queues at snapshots */
	bool queues_read;		/* every one at the latest snapshot */
	struct collect_net_sirq sirq;	/* softirq share without stage A */
	struct collect_net_rx_memory rx_mem;

	int stats_fd;		/* BPF_ENABLE_STATS, -1 when off */
	int nprogs;
	struct prog_cost cost[RXB_MAX_PROGS];

	struct collect_proc *proc;
	struct nic_reader *nic;
	struct rx_preempts rxp;	/* of the latest epoch (rxb_epoch.rx_preempts) */

	uint64_t seq;
	uint64_t last_ns;
	uint32_t degraded;	/* fixed at init; per-epoch bits are added */
	char degraded_reason[256];
	int first_err;		/* of the probe groups that failed to load */
};
/* collect.c: append "; why" to a degraded_reason (@buf of @size bytes). */
void collect_add_reason(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* collect_probes.c */
/*
 * Load the probe groups @opts asks for (none with COLLECT_ATTACH_NONE) and
 * turn on their run-time statistics; what fails is left out and noted in
 * c->degraded and c->degraded_reason.
 */
void collect_probes_open(struct collect *c, const struct collect_opts *opts);
/*
 * Read the programs' run counts and times; with @report (and statistics
 * on), their change since the previous call goes into out->probe_cost[].
 */
void collect_probes_costs(struct collect *c, struct rxb_epoch *out, bool report);
/* Detach every group and put BPF statistics back as they were. */
void collect_probes_close(struct collect *c);

#endif
