/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * When to attach the per-packet probes: "learn, then sample".
 *
 * The per-packet programs (NET_RX softirq, napi_poll, socket enqueue and
 * dequeue) are most of the measurement's cost on a busy receive path
 * (docs/measurement.md, "Overhead"), and what they measure - the receive
 * path's costs per packet - only changes when the receive path does. So
 * they are attached in every epoch for a while after a change (learning),
 * and for one epoch in [measure] net_probe_every once the costs had that
 * long to settle. A change is what makes the costs learned so far stale:
 *  - the daemon starts, or the configuration asks for it (reload);
 *  - a flow (watched port) appears;
 *  - a flow's receiver runs on a CPU where its path was not learned;
 *  - #C or #I of a CPU the receiver runs on moved by NETPLAN_MOVED_TASKS
 *    or more since it was learned there (the move that makes the solver
 *    re-solve at once, flows.c SOLVE_URGENT_TASKS).
 *
 * Each flow remembers the CPUs its receiver ran on while its path was
 * learned, each with the load (#C, #I) it had then: a receiver that is not
 * pinned and moves among CPUs it has run on before is no change, however
 * often it moves. A CPU it reaches while learning is under way joins the
 * set without starting again (every epoch is sampled then anyway); one it
 * reaches later starts learning once, and joins. A receiver "runs on" a
 * CPU in an epoch when it had NETPLAN_MIN_SHARE of its on-CPU time there
 * (or most of it): a brief visit elsewhere is not a move. Loads are
 * compared on the CPUs it runs on now, each against that CPU's own
 * learned load, so a move between a loaded and an idle CPU is not taken
 * for a load change either.
 *
 * #C, #I and the placement come from the scheduler probes, attached in
 * every epoch, so a change is noticed within an epoch. A value that went
 * missing (no receiver between two transfers, #C unknown) is no change:
 * the next transfer on the same CPU under the same load keeps what was
 * learned. Pure logic on the epochs' clock; the daemon applies the answer
 * with collect_set_net_probe_every().
 */
#ifndef RXB_DAEMON_NETPLAN_H
#define RXB_DAEMON_NETPLAN_H

#include <stdbool.h>
#include <stdint.h>

#define NETPLAN_MAX_FLOWS	64	/* >= FLOWS_MAX (checked in daemon.c) */
#define NETPLAN_OBS_CPUS	8	/* CPUs of one epoch's placement */
#define NETPLAN_MAX_CPUS	16	/* learned CPUs kept per flow (the least
					 * recently used one makes room) */
#define NETPLAN_MOVED_TASKS	0.5
#define NETPLAN_MIN_SHARE	0.25
#define NETPLAN_WHY_LEN		96

struct netplan_params {
	uint32_t steady_every;	/* one epoch in this many once settled (>= 1) */
	uint64_t learn_ns;	/* every epoch for this long after a change;
				 * 0: always one in steady_every */
};

/* One CPU of a receiver's placement and that CPU's load. */
struct netplan_cpu {
	int cpu;
	double share;		/* of the receiver's on-CPU time (observations) */
	double cpu_bound;	/* #C of the CPU, NaN unknown */
	double io_bound;	/* #I of the CPU, NaN unknown */
	uint64_t seen_ns;	/* learned CPUs: the last epoch it ran there */
};

/* What one epoch says about a flow's receive path. */
struct netplan_obs {
	uint16_t port;
	int ncpus;		/* 0: the receiver's placement is unknown */
	struct netplan_cpu cpus[NETPLAN_OBS_CPUS];
};

/* A flow's receive path as it was learned: CPU by CPU. */
struct netplan_flow {
	uint16_t port;
	int ncpus;
	struct netplan_cpu cpus[NETPLAN_MAX_CPUS];
};

struct netplan {
	struct netplan_params p;
	bool started;
	uint64_t learn_until_ns;	/* every epoch sampled before this */
	uint64_t learn_starts;		/* changes seen (start included) */
	uint64_t last_change_ns;
	char why[NETPLAN_WHY_LEN];	/* the latest change */
	int nbase;
	struct netplan_flow base[NETPLAN_MAX_FLOWS];
};

/* 0, or -EINVAL for steady_every 0. */
int netplan_init(struct netplan *np, const struct netplan_params *p);
void netplan_finish(struct netplan *np);
/* New parameters (reload); what was learned is kept. 0 or -EINVAL. */
int netplan_set_params(struct netplan *np, const struct netplan_params *p);

/* Learn from @now_ns on, because of @why (logged by the caller). */
void netplan_learn(struct netplan *np, uint64_t now_ns, const char *why);

/*
 * One epoch ending at @now_ns with the flows @obs: starts learning when
 * the first epoch comes or a flow's receive path changed (see above).
 * Flows not in @obs are forgotten. True when learning started now.
 */
bool netplan_epoch(struct netplan *np, uint64_t now_ns,
		   const struct netplan_obs *obs, int nobs);

/* One epoch in how many to sample from @now_ns on. */
uint32_t netplan_every(const struct netplan *np, uint64_t now_ns);
bool netplan_learning(const struct netplan *np, uint64_t now_ns);

#endif
