/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters of the metrics (docs/metrics.md) that the daemon derives
 * from per-epoch deltas: packets and drops per flow port, probe runs and
 * run time per BPF program, the solves' durations. Each epoch's record is
 * folded in once (metrics_totals_epoch(), after the flows' epoch), so the
 * counters only grow, from the daemon's start, whether or not anyone
 * scrapes them.
 *
 * Bounded: per port, a flow's port while it has a flow and, after it went
 * away, until its entry is needed for another port (METRICS_TOTALS_PORTS
 * entries: FLOWS_MAX live flows always fit); per port at most
 * METRICS_TOTALS_REASONS drop reasons (the rest count under "OTHER"); at
 * most METRICS_TOTALS_PROGS programs.
 *
 * Pure bookkeeping: no I/O, no allocation.
 */
#ifndef RXB_DAEMON_METRICS_TOTALS_H
#define RXB_DAEMON_METRICS_TOTALS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/flows.h"
#include "daemon/serve/promtext.h"
#include "rxb/measure.h"

#define METRICS_TOTALS_PORTS	(FLOWS_MAX + FLOWS_PAST_MAX)
#define METRICS_TOTALS_REASONS	16
#define METRICS_TOTALS_PROGS	(2 * RXB_MAX_PROGS)
/* Drops in an epoch whose reasons were not measured (/proc only). */
#define METRICS_REASON_UNKNOWN	"unknown"
/* Reasons beyond the socket's largest of the epoch, or beyond the table. */
#define METRICS_REASON_OTHER	"OTHER"

struct metrics_drops {
	char reason[RXB_REASON_LEN];
	uint64_t pkts;
};

struct metrics_port {
	bool used;
	uint16_t port;
	uint64_t last_epoch;		/* the latest epoch it had a flow in */
	uint64_t pkts_in, pkts_out;	/* over the epochs that counted them */
	double counted_s;		/* those epochs' length */
	int nreasons;
	struct metrics_drops drops[METRICS_TOTALS_REASONS];
	uint64_t reports;		/* senders' transfer reports */
	uint64_t flow_created_ns;	/* the flow whose reports were last seen */
	uint64_t flow_reports;		/* its count then */
};

struct metrics_prog {
	char prog[RXB_NAME_LEN];
	uint64_t runs, run_ns;
};

struct metrics_totals {
	struct metrics_port ports[METRICS_TOTALS_PORTS];
	int nprogs;
	struct metrics_prog progs[METRICS_TOTALS_PROGS];
	struct promtext_hist solve_s;	/* each successful solve's duration */
};

/* The solve-time histogram's bounds, in seconds. */
extern const double metrics_totals_solve_bounds[];
extern const int metrics_totals_nsolve_bounds;

void metrics_totals_init(struct metrics_totals *t);
/* Fold in epoch @e (its deltas) for the flows in @f. */
void metrics_totals_epoch(struct metrics_totals *t, const struct flows *f,
			  const struct rxb_epoch *e);
/* A solve took @solve_s (flows_ops.solved). */
void metrics_totals_solved(struct metrics_totals *t, double solve_s);
/* @port's totals, NULL when none. */
const struct metrics_port *metrics_totals_port(const struct metrics_totals *t, uint16_t port);

#endif
