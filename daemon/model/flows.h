/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-epoch pipeline of rxbneckd: for every watched flow (a local
 * receive port), measured epoch -> model inputs -> bottleneck solve ->
 * RATE offered to the flow's senders (docs/daemon.md).
 *
 *	flows_epoch(f, epoch)          once per epoch, after collect_epoch()
 *	flows_sender_hello(f, peer)    a sender said HELLO (may refuse it)
 *	flows_sender_gone(f, port)     it left
 *	flows_set_config_ports(), flows_set_params()   (re)configuration
 *
 * A flow exists while its port is in [measure] watch_ports or has at least
 * one connected sender; at most RXB_MAX_SOCKS at a time (what the collector
 * can watch). The model is solved for the transfer the newest sender of the
 * port announced in its HELLO (payload, file size, RTT/2, its max rate),
 * or with the [model] defaults while no sender is connected.
 *
 * What a flow publishes (the RATE frame, PROTOCOL.md §5.7/§6.1):
 *   model       the bottleneck rate of this epoch's solve; confidence from
 *               the inputs' sources (inputs.h) and the solver's error
 *               bounds; UNCONSTRAINED when it is the top of the search;
 *               before the flow's own traffic (costs from this port's
 *               history, another flow's or the defaults, prior.h)
 *               NO_TRAFFIC and PROVISIONAL, and DEFAULT_COST with the
 *               defaults.
 *   stale       the solve failed (or its inputs went missing): the last
 *               good value, flag STALE, its own epoch; status says why.
 *   provisional nothing to model yet (no traffic, and the receiver's
 *               socket or the epoch's workload not known): the top of
 *               the search, loss 0 and xfer_time_us 0 ("not computed"),
 *               flag NO_TRAFFIC, confidence 0 (unknown), so a sender can
 *               start and its first epoch of traffic gives real inputs.
 * DEGRADED is added whenever the epoch's record says BPF is missing or
 * only partly loaded.
 *
 * After the rate, each flow's pause-window predictor (daemon/model/pause.h,
 * docs/pause.md) is checked against and fed with the epoch's preemptions of
 * the flow's receiver threads, and what it plans (a schedule, or CANCEL)
 * goes to ops->publish_pause.
 *
 * Allocation: the solver workspace at init (and again when sweep_points
 * grows on a reload); per epoch only the solver's small tagged chains.
 */
#ifndef RXB_DAEMON_FLOWS_H
#define RXB_DAEMON_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/inputs.h"
#include "daemon/model/pause.h"
#include "daemon/serve/sendsrv.h"
#include "rxb/measure.h"
#include "rxbneck/proto.h"
#include "solver/bneck.h"

#define FLOWS_MAX	RXB_MAX_SOCKS

/* The transfer a flow's model is solved for. */
struct flow_xfer {
	double payload_bytes;
	double file_bytes;
	double one_way_delay_s;
	double line_rate_bps;	/* top of the search */
	double min_rate_bps;	/* bottom */
	bool from_sender;	/* a HELLO said so (else [model] defaults) */
	uint64_t sender_max_rate_bps;	/* its HELLO.max_rate_bps, 0 = unknown */
	uint64_t sender_id;	/* that sender (sendsrv_peer.id), 0 = gone */
	char sender[SENDSRV_ADDR_STRLEN];
};

enum flow_state {
	FLOW_NONE = 0,		/* nothing published yet */
	FLOW_PROVISIONAL,	/* nothing to model: provisional RATE */
	FLOW_MODEL,		/* solved, for inputs like this epoch's */
	FLOW_STALE,		/* solve failed: last good value */
};

const char *flows_state_name(enum flow_state s);

/* A solved model. */
struct flow_estimate {
	uint64_t epoch;		/* computed in */
	uint64_t epoch_end_ns;	/* that epoch's end (the epochs' clock) */
	uint64_t at_ns;		/* CLOCK_MONOTONIC */
	uint32_t points;	/* [model] sweep_points then */
	enum bneck_rounds rounds;	/* [model] rounds then */
	double loss_episode_pkts;	/* bneck_xfer's then: 0 = one by one */
	struct flow_xfer xfer;
	uint32_t nstages;
	struct rxb_stage_inputs inputs[BNECK_MAX_STAGES];
	struct bneck_result res;	/* res.curve is not kept (NULL) */
	/*
	 * With predicted off-CPU windows: the solve for a sender that pauses
	 * through them (PROTOCOL.md §6.3), its curve not kept either.
	 */
	bool has_between;
	struct bneck_result between;
	double n_resend;
	uint16_t confidence;
	bool unconstrained;
	double solve_ms;
};

struct flow {
	uint16_t port;
	bool configured;		/* in [measure] watch_ports */
	uint32_t nsenders;		/* connected senders of this port */
	uint64_t created_ns;
	struct flow_xfer xfer;		/* for the next solve */
	struct learn learn;
	struct inputs inputs;	/* of the last epoch (or hello) */
	/*
	 * The last epoch whose packets were counted (inputs.traffic with
	 * counts_valid): with the per-packet probes sampled, most epochs
	 * count drops only, and status shows this one beside them.
	 */
	struct inputs_traffic counted;
	uint64_t counted_seq;		/* its epoch, 0 = none yet */
	uint64_t counted_end_ns;	/* its end (the epochs' clock) */
	enum flow_state state;
	bool have_good;
	struct flow_estimate good;	/* the last good solve */
	int solve_err;			/* last failure (-errno), 0 = none */
	char solve_why[160];
	uint64_t solve_err_epoch;
	uint64_t solves, solve_failures;
	uint64_t solves_reused;		/* epochs that kept the last solve (solve_due()) */
	bool has_rate;
	struct rxbneck_rate rate;	/* last value offered to senders */
	bool has_rate_between;		/* rate_between offered with it */
	struct rxbneck_rate rate_between;	/* ... to senders that pause */
	int last_sent;			/* senders it went to (publish result) */
	uint64_t reports;		/* REPORTs from senders */
	bool has_report;
	struct rxbneck_report last_report;
	double report_model_rate_bps;	/* what the model said then, NaN = nothing */
	double report_model_time_s;
	struct pause pause;		/* RBUDP+ pause windows */
};

/*
 * A flow that went away (its last sender left, its port no longer
 * configured): what status lists under learned flows for a while.
 */
struct flow_past {
	uint16_t port;
	uint64_t left_ns;		/* CLOCK_MONOTONIC */
	bool has_rate;
	struct rxbneck_rate rate;	/* the last RATE it offered */
	uint64_t reports;
	double cpu_ns_per_pkt;		/* learned costs, NaN = not learned */
	double pkts_per_wakeup;
	int ncpus;			/* the receiver's last placement */
	int cpu[LEARN_MAX_CPUS];
	double cpu_share[LEARN_MAX_CPUS];
};

#define FLOWS_PAST_MAX	16

struct flows_params {
	double payload_bytes;		/* [model] payload_bytes */
	double file_bytes;		/* [model] default_file_bytes */
	double one_way_delay_s;		/* [model] default_one_way_delay_ms */
	double line_rate_bps;
	double min_rate_bps;
	uint32_t sweep_points;
	enum rxb_batch_rule rule;
	enum bneck_rounds rounds;	/* [model] rounds */
	bool loss_episodes;		/* [model] loss_episodes = measured */
	bool depth_cost;		/* [model] queue_depth_cost */
	bool rate_uncertainty;		/* [model] rate_uncertainty = measured */
	uint32_t fallback_rx_ring;	/* [measure] fallback_rx_ring */
	int irq_time_accounting;	/* CONFIG_IRQ_TIME_ACCOUNTING: 1, 0, < 0 unknown */
	struct pause_params pause;	/* [pause] */
};

struct flows_ops {
	void *ctx;
	/*
	 * Offer a RATE to the port's subscribers, and the rate between pause
	 * windows for those that pause (NULL: none; sendsrv_publish_rate).
	 */
	int (*publish_rate)(void *ctx, const struct rxbneck_rate *r,
			    const struct rxbneck_rate *between);
	/* Optional: a PAUSE schedule or CANCEL (sendsrv_publish_pause). */
	int (*publish_pause)(void *ctx, const struct rxbneck_pause *p);
	/* Optional: learned costs of @port from the state directory. */
	bool (*history_get)(void *ctx, uint16_t port, struct learn *out);
	/* Optional: a flow goes away; remember what it learned. */
	void (*history_put)(void *ctx, uint16_t port, const struct learn *l);
	/*
	 * Optional, at a HELLO while the flow has no traffic of its own:
	 * costs for @l when it has none of its own (prior.h) and the
	 * receiver's placement and receive buffer from its socket now,
	 * for datagrams of @payload_bytes.
	 */
	void (*prior)(void *ctx, uint16_t port, double payload_bytes, struct learn *l);
	/* Optional: a solve of @port's model succeeded and took @solve_s. */
	void (*solved)(void *ctx, uint16_t port, double solve_s);
};

struct flows {
	struct flows_params p;
	struct flows_ops ops;
	struct bneck_ws ws;
	struct ctmc_opts copts;
	struct learn_disk disk;
	int n;
	struct flow v[FLOWS_MAX];
	int npast;			/* the newest FLOWS_PAST_MAX gone */
	struct flow_past past[FLOWS_PAST_MAX];	/* oldest first */
	bool ports_changed;		/* flows_ports() differs from last read */
	const struct rxb_epoch *last;	/* the latest record (caller's memory) */
	uint32_t netdev_max_backlog;
	uint64_t epochs;
	double last_solve_ms;		/* all flows, last epoch */
};

int flows_init(struct flows *f, const struct flows_params *p,
	       const struct flows_ops *ops);
/* Every flow is handed to history_put first. */
void flows_finish(struct flows *f);

/* New [model] parameters; 0 or -ENOMEM (the old ones stay). */
int flows_set_params(struct flows *f, const struct flows_params *p);

/*
 * The configured ports ([measure] watch_ports). Flows of ports no longer
 * configured and without senders go away. -ENOSPC when they do not fit
 * next to the ports senders use (nothing is changed then).
 */
int flows_set_config_ports(struct flows *f, const uint16_t *ports, int n);

/*
 * A sender said HELLO for p->hello.flow_port: creates the flow if needed
 * (-ENOSPC when FLOWS_MAX flows exist), takes the sender's transfer
 * parameters and publishes a rate at once from the latest epoch.
 */
int flows_sender_hello(struct flows *f, const struct sendsrv_peer *p);
/* A sender that flows_sender_hello() accepted left. */
void flows_sender_gone(struct flows *f, const struct sendsrv_peer *p);
/* A sender reported a finished transfer (kept for status). */
void flows_note_report(struct flows *f, struct flow *fl, const struct rxbneck_report *r);
/* Refresh transfer parameters from a connected sender (RTT updates). */
void flows_sender_seen(struct flows *f, const struct sendsrv_peer *p);

/*
 * One epoch: @e is the collector's record, which must stay valid until
 * the next call (status and new senders read it). @netdev_max_backlog is
 * the current sysctl (0: unknown).
 */
void flows_epoch(struct flows *f, const struct rxb_epoch *e,
		 uint32_t netdev_max_backlog);

/*
 * Within an epoch: does a flow follow its receivers' preemptions (senders,
 * [pause] enabled)? Then the daemon hands it the receivers' preemptions as
 * they come (collect_rx_preempts_early()), and flows_rx_early() publishes
 * a schedule as soon as the predictor has its windows, rather than at the
 * end of the epoch: a new receiver's first windows are known after ~50 ms,
 * the epoch ends up to an epoch later, and until then the sender blasts
 * into them. With a schedule out, it publishes a new one as soon as the
 * receiver comes back out of its phase (pause_early()).
 */
/* 0 when no flow follows the preemptions; else how often to read them:
 * @min_ns, or once per period of a schedule out when that is longer. */
uint64_t flows_rx_early_ns(const struct flows *f, uint64_t min_ns);
void flows_rx_early(struct flows *f, const struct rxb_rx_preempt *ev, size_t n);

struct flow *flows_find(struct flows *f, uint16_t port);

/*
 * The receiver's socket buffer of @port was set to @rcvbuf_bytes (by the
 * daemon, [buffer] mode = apply): the model's K from now on. With
 * @solve_now and inputs to solve with, the flow is solved and its rate
 * published at once (1 is returned), so the next RATE reflects the new
 * capacity; else the next epoch's solve takes it (0). -ENOENT: no flow.
 */
int flows_set_rcvbuf(struct flows *f, uint16_t port, uint32_t rcvbuf_bytes, bool solve_now);
/* The ports to watch; returns the count (<= FLOWS_MAX). */
int flows_ports(struct flows *f, uint16_t *ports);

#endif
