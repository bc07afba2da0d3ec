/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-epoch pipeline of rxbneckd: for every watched flow (a local
 * receive port), measured epoch -> model inputs -> bottleneck solve ->
 * RATE offered to the flow's senders (docs/daemon.md).
 *
 *	flows_epoch(f, epoch)          once per epoch, after collect_epoch()
 *	flows_sender_hello(f, peer)    a sender said HELLO (may refuse it)
 *	flows_sender_gone(f, peer)     it left
 *	flows_rate_for(f, peer, ...)   the rates that sender is to get now
 *	flows_set_config_ports(), flows_set_params()   (re)configuration
 *
 * A flow exists while its port is in [measure] watch_ports, has at least
 * one connected sender, or lingers flows_params.linger_ns after its last
 * sender left (a lingering flow gives way to a new one when the table is
 * full);
 * at most RXB_MAX_SOCKS at a time (what the collector can watch).
 *
 * What is shared and what is each sender's own (PROTOCOL.md §6.6): the
 * receive path - the measured model inputs, the pause-window predictor and
 * its schedule - belongs to the port and is shared by all its senders. The
 * transfer - payload, file size, RTT, the sender's max rate, which bound
 * the search and enter T(B) - is each sender's own: a flow keeps one
 * model (struct flow_model) per distinct transfer of its senders (the
 * HELLO's payload, file size and max rate, and its RTT within 5 %), at
 * most FLOW_MAX_XFERS, each solved on the shared inputs and each sender
 * answered from its own. A sender beyond that cap is answered from the
 * nearest transfer's model, with xfer_time_us 0 ("not computed"): it
 * cannot change anyone else's answer. With no sender, one model remains:
 * the [model] defaults', or the last sender's.
 *
 * Solves are bounded: at most FLOWS_SOLVES_PER_EPOCH per epoch over all
 * flows (a HELLO's included), the models waiting longest first; a model
 * over the cap keeps its last solve (RATE.epoch says how old) until a
 * later epoch, and a new one with none yet gives its sender no RATE until
 * then (PROTOCOL.md §6.1 allows the first RATE at the next epoch).
 *
 * What a model publishes (the RATE frame, PROTOCOL.md §5.7/§6.1):
 *   model       the bottleneck rate of this epoch's solve; confidence from
 *               the inputs' sources (inputs.h) and the solver's error
 *               bounds (at least 1); UNCONSTRAINED when it is the top of
 *               the search, the predicted loss there and the last counted
 *               epoch's drops are at most FLOWS_UNCONSTRAINED_LOSS;
 *               before the flow's own traffic (costs from this port's
 *               history, another flow's or the defaults, prior.h)
 *               NO_TRAFFIC and PROVISIONAL, and DEFAULT_COST with the
 *               defaults.
 *   stale       the solve failed (or its inputs went missing): the last
 *               good value, flag STALE, its own epoch; status says why.
 *   provisional nothing to model yet (no traffic, and the receiver's
 *               socket or the epoch's workload not known): the top of
 *               the search, loss 0 and xfer_time_us 0 ("not computed"),
 *               flag NO_TRAFFIC unless packets were seen (confidence 0:
 *               nothing modelled; epoch 0 before the first epoch), so a
 *               sender can start and its first epoch of traffic gives
 *               real inputs.
 * DEGRADED is added whenever the epoch's record says BPF is missing or
 * only partly loaded.
 *
 * The rate between pauses (PROTOCOL.md §6.3) is offered only while the
 * flow's published schedule covers the windows that rate's solve counts
 * on (flows_between_covered()); sendsrv gives it only to the senders that
 * schedule reached.
 *
 * After the rates, each flow's pause-window predictor (daemon/model/pause.h,
 * docs/pause.md) is checked against and fed with the epoch's preemptions of
 * the flow's receiver threads, and what it plans (a schedule, or CANCEL)
 * goes to ops->publish_pause; then ops->publish_rates offers the port's
 * senders their rates.
 *
 * Allocation: the solver workspace at init (and again when sweep_points
 * grows on a reload); per epoch only the solver's small tagged chains.
 */
#ifndef RXB_DAEMON_FLOWS_H
#define RXB_DAEMON_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/util.h"
#include "daemon/model/inputs.h"
#include "daemon/model/outcome.h"
#include "daemon/model/pause.h"
#include "daemon/serve/sendsrv.h"
#include "rxb/measure.h"
#include "rxbneck/proto.h"
#include "solver/bneck.h"

#define FLOWS_MAX		RXB_MAX_SOCKS
#define FLOW_MAX_XFERS		8	/* transfers modelled per flow */
#define FLOWS_SOLVES_PER_EPOCH	FLOWS_MAX	/* all flows' models */
#define FLOWS_UNCONSTRAINED_LOSS 1e-3	/* UNCONSTRAINED: predicted and dropped at most */
#define FLOWS_RTT_BUCKET	1.05	/* RTTs within this ratio share a model */

/* The transfer a model is solved for. */
struct flow_xfer {
	double payload_bytes;
	double file_bytes;
	double one_way_delay_s;
	double line_rate_bps;	/* top of the search */
	double min_rate_bps;	/* bottom */
	bool from_sender;	/* a HELLO said so (else [model] defaults) */
	uint64_t sender_max_rate_bps;	/* its HELLO.max_rate_bps, 0 = unknown */
	char sender[SENDSRV_ADDR_STRLEN];	/* whose HELLO made it */
};

/* What makes two senders' transfers the same (their HELLOs). */
struct flow_xfer_key {
	uint64_t file_bytes;
	uint64_t max_rate_bps;
	uint32_t payload_bytes;
	int32_t rtt_bucket;	/* log of HELLO.rtt_us in FLOWS_RTT_BUCKET steps */
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
	enum bneck_loss loss_model;	/* [model] loss then */
	double time_slack_rel;		/* [model] time_slack then */
	double loss_episode_pkts;	/* bneck_xfer's then: 0 = one by one */
	bool episodes_from_windows;	/* bneck_xfer's then */
	struct flow_xfer xfer;
	uint32_t nstages;
	struct rxb_stage_inputs inputs[BNECK_MAX_STAGES];
	/*
	 * [model] windows_by_rate with two bands or more (struct
	 * inputs.band_b): the pieces solved, each rate with the windows met
	 * nearest it: their measured rates (bits/s of payload, increasing),
	 * stage B with each one's windows (the rest as inputs[]), and the
	 * piece the rate was chosen in. nbands 0: inputs[] at every rate.
	 */
	uint32_t nbands;
	uint32_t band_chosen;
	double band_at_bps[LEARN_BANDS];
	struct rxb_stage_inputs band_b[LEARN_BANDS];
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

/* One transfer of a flow's senders, and what they are told. */
struct flow_model {
	struct flow_xfer_key key;
	struct flow_xfer xfer;		/* for the next solve */
	uint32_t nsenders;		/* connected senders with this transfer */
	uint64_t created_ns;		/* the epochs' clock */
	enum flow_state state;
	bool have_good;
	struct flow_estimate good;	/* the last good solve */
	int solve_err;			/* last failure (-errno), 0 = none */
	char solve_why[160];
	uint64_t solve_err_epoch;
	uint64_t solves, solve_failures;
	uint64_t solves_reused;		/* epochs that kept the last solve (flows_due()) */
	uint64_t solves_deferred;	/* epochs it waited: FLOWS_SOLVES_PER_EPOCH */
	bool has_rate;
	struct rxbneck_rate rate;	/* last value offered to its senders */
	bool has_rate_between;		/* rate_between solved with it */
	struct rxbneck_rate rate_between;	/* ... for senders that pause */
};

struct flow {
	uint16_t port;
	bool configured;		/* in [measure] watch_ports */
	uint32_t nsenders;		/* connected senders of this port */
	uint32_t nshared;		/* of them, answered from the nearest model */
	uint64_t shared_total;		/* HELLOs so answered, since it was made */
	uint64_t created_ns;
	uint64_t idle_since_ns;		/* the epochs' clock: last sender left */
	struct learn learn;
	struct inputs inputs;		/* of the last epoch (or hello) */
	/*
	 * The last epoch whose packets were counted (inputs.traffic with
	 * counts_valid): with the per-packet probes sampled, most epochs
	 * count drops only, and status shows this one beside them.
	 */
	struct inputs_traffic counted;
	uint64_t counted_seq;		/* its epoch, 0 = none yet */
	uint64_t counted_end_ns;	/* its end (the epochs' clock) */
	bool packets_seen;		/* arrivals measured at the port, ever */
	int nmodels;			/* >= 1 */
	struct flow_model m[FLOW_MAX_XFERS];
	int last_sent;			/* senders a RATE went to (publish_rates) */
	uint64_t reports;		/* REPORTs from senders */
	bool has_report;
	struct rxbneck_report last_report;
	double report_model_rate_bps;	/* what its model said then, NaN = nothing */
	double report_model_time_s;
	struct outcome outcome;		/* REPORTs against the RATE they started on */
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
	struct rxbneck_rate rate;	/* the last RATE its (first) model offered */
	uint64_t reports;
	struct outcome outcome;		/* taken back when the flow returns */
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
	enum bneck_loss loss_model;	/* [model] loss: queue or windows */
	bool loss_episodes;		/* [model] loss_episodes = measured */
	bool episodes_from_windows;	/* ... = windows (implies measured) */
	bool depth_cost;		/* [model] queue_depth_cost */
	bool quota_phases;		/* [model] quota_phases */
	bool drain_floor;		/* [model] drain_floor */
	bool windows_by_rate;		/* [model] windows_by_rate */
	double time_slack_rel;		/* [model] time_slack */
	bool rate_uncertainty;		/* [model] rate_uncertainty = measured */
	enum capacity_mode capacity;	/* [model] capacity */
	uint32_t fallback_rx_ring;	/* [measure] fallback_rx_ring */
	uint64_t linger_ns;		/* [measure] flow_linger_s */
	int irq_time_accounting;	/* CONFIG_IRQ_TIME_ACCOUNTING: 1, 0, < 0 unknown */
	struct pause_params pause;	/* [pause] */
};

struct flows_ops {
	void *ctx;
	/*
	 * The rates of @port's models changed: offer each of its senders its
	 * own (flows_rate_for(); sendsrv_offer_rates()). Returns how many a
	 * RATE went to.
	 */
	int (*publish_rates)(void *ctx, uint16_t port);
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
	uint32_t solves_left;		/* this epoch's, FLOWS_SOLVES_PER_EPOCH */
	uint64_t evicted;		/* lingering flows made way for new ones */
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
 * (a lingering one makes way; -ENOSPC when FLOWS_MAX flows hold senders
 * or are configured), and the model of the sender's transfer if there is
 * none (solved at once from the latest epoch if this epoch's solves allow).
 */
int flows_sender_hello(struct flows *f, const struct sendsrv_peer *p);
/* A sender that flows_sender_hello() accepted left. */
void flows_sender_gone(struct flows *f, const struct sendsrv_peer *p);
/* A sender reported a finished transfer (kept for status, with its model's answer). */
void flows_note_report(struct flows *f, const struct sendsrv_peer *p,
		       const struct rxbneck_report *r);
/* Refresh its model's RTT from a connected sender (SUBSCRIBE updates). */
void flows_sender_seen(struct flows *f, const struct sendsrv_peer *p);

/*
 * The rates for sender @p now (sendsrv_ops.rate_for): its model's RATE,
 * and the rate between pauses when the flow's schedule covers the windows
 * it counts on. 0 (none yet), 1 (@r) or 2 (@r and @between).
 */
int flows_rate_for(const struct flows *f, const struct sendsrv_peer *p,
		   struct rxbneck_rate *r, struct rxbneck_rate *between);
/*
 * The model sender @p is answered from: its own (*exact), else the nearest
 * with a rate (NULL: none).
 */
const struct flow_model *flows_model_of(const struct flows *f, const struct flow *fl,
					const struct sendsrv_peer *p, bool *exact);
/*
 * Whether the flow's published PAUSE schedule covers the windows the rate
 * between pauses of @m counts on (same period, windows at least as long,
 * within the re-solve tolerance); @why (may be NULL) says what is in
 * force and why, for status.
 */
bool flows_between_covered(const struct flow *fl, const struct flow_model *m,
			   char *why, size_t wlen);

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
