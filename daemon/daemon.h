/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd's event loop: one thread, one epoll set with
 *   a signalfd    SIGTERM/SIGINT stop, SIGHUP reloads;
 *   a timerfd     the epoch ([measure] interval_ms): collect -> flows
 *                 (model inputs -> solve -> publish);
 *   a timerfd     receive-buffer adaptation ([buffer] dt_ms, only when
 *                 [buffer] mode is not off: daemon_buffer.h);
 *   sendsrv's fds the sender control protocol (docs/PROTOCOL.md);
 *   ctlsrv's fds  rxbneckctl's commands (docs/CONTROL.md);
 *   metricsrv's   the Prometheus endpoint ([metrics], docs/metrics.md),
 *   epoll fd      when enabled;
 * and an epoll_wait timeout for the servers' deadlines and the systemd
 * watchdog. Everything the daemon knows lives in struct daemon; status
 * (daemon/serve/status.c) renders it. daemon.c holds the loop and the life
 * cycle, daemon_flows.c the flows' wiring to the other parts,
 * daemon_reload.c the configuration's way into them (daemon_int.h),
 * daemon_buffer.c the receive-buffer adaptation.
 *
 *	daemon_init(d, config_path)   load config, state dir, collector,
 *	                              servers; READY=1 when all are up
 *	daemon_run(d)                 until SIGTERM/SIGINT
 *	daemon_finish(d)              STOPPING=1, BYE to senders, save state
 */
#ifndef RXB_DAEMON_DAEMON_H
#define RXB_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/config.h"
#include "daemon/daemon_buffer.h"
#include "daemon/serve/ctlsrv.h"
#include "daemon/model/advisor.h"
#include "daemon/model/flows.h"
#include "daemon/model/streams_hist.h"
#include "daemon/model/xfers.h"
#include "daemon/collect/netplan.h"
#include "daemon/collect/recvcost.h"
#include "daemon/serve/metrics_totals.h"
#include "daemon/serve/metricsrv.h"
#include "daemon/serve/notify.h"
#include "daemon/serve/sendsrv.h"
#include "daemon/model/state.h"
#include "rxb/measure.h"

struct collect;
struct sockdiag;

#define DAEMON_RELOAD_MSG_LEN	512
#define DAEMON_MAX_CHANGES	16	/* changed keys kept for status */

struct daemon_reload {
	uint64_t count, failures;
	uint64_t at_unix_s;		/* last attempt, 0 = none */
	bool ok;
	char msg[DAEMON_RELOAD_MSG_LEN];	/* error, or what changed */
	int nrestart;			/* changed keys needing a restart */
	char restart[DAEMON_MAX_CHANGES][48];	/* "[section] key" */
};

/* What the collector takes from the configuration (daemon_reload.c). */
struct daemon_collector_cfg {
	enum rxb_attach_mode attach;
	bool bpf_stats;
	struct rxb_ifname_list devices;
	uint32_t fallback_rx_ring, fallback_rx_max_frames, fallback_rx_usecs;
};

/* A watched port's receivers: on-CPU ns per byte read (daemon_streams.c). */
struct daemon_streams_cost {
	uint16_t port;			/* 0: free */
	struct ewma_ratio ns_per_byte;
	int threads;			/* reading threads (on as many CPUs), >= 1 */
	uint64_t seen_seq;		/* last epoch that fed it */
};

struct sockdiag;

/* The stream-count advisor's parts ([streams], daemon_streams.c). */
struct daemon_streams {
	bool on;			/* [streams] enabled */
	struct rxb_port_list ports;	/* [streams] ports, empty: listening ones */
	uint32_t save_s;
	double min_sample_s;		/* the key as given */
	struct advisor adv;
	struct xfers xf;
	struct sockdiag *sd;		/* NULL: no socket diagnostics */
	uint64_t listen_map[65536 / 64];	/* listening TCP ports, last epoch */
	struct daemon_streams_cost cost[RXB_MAX_SOCKS];
	uint64_t dumps, dump_errors;
	int last_err;			/* of the last dump, 0 = ok */
	double dump_us;			/* the last epoch's dumps took */
	uint32_t conns_skipped;		/* beyond max_conns, last dump */
	uint64_t samples_off;		/* senders' samples while disabled */
	bool dirty;			/* samples since the last save */
	uint64_t saved_ns, saves, save_errors;
	int save_err;
	int load_err;			/* reading the history at start, 0 = ok */
	struct streams_hist_stats loaded;
};

/*
 * What receiving threads can drain, bits/s: the tagged customer of stage
 * B's model (Banerjee et al.'s end-system net) moving 64 KiB at
 * @ns_per_byte of CPU among @cpu_bound and @io_bound background tasks,
 * times @threads (on as many CPUs). I/O-bound tasks without both disk
 * rates count as CPU-bound. NaN with the reason in @why when unknown;
 * else @why names the inputs.
 */
double daemon_streams_drain_bps(double ns_per_byte, int threads, double cpu_bound,
				double io_bound, double mu_pio_per_s, double mu_disk_per_s,
				const struct ctmc_opts *o, char *why, size_t len);

/* A peer's advice as the STREAMS frame carries it (daemon_streams.c). */
void daemon_streams_frame(const struct advisor_peer *ap, struct rxbneck_streams *out);

/*
 * Which HELLOs the daemon serves ([control], daemon_flows.c), and what it
 * refused by reason (status: senders.refused; sendsrv counts the refusals
 * at accept).
 */
struct daemon_admit {
	uint32_t max_flows_per_address;
	struct rxb_uid_list owner_uids;	/* empty: any */
	struct sockdiag *diag;		/* for owner_uids; opened when needed */
	uint64_t flows_full;		/* FLOWS_MAX flows hold senders or are watched */
	uint64_t flows_per_address;	/* max_flows_per_address reached */
	uint64_t not_owner;		/* the port's socket is not an owner_uids' */
};

struct daemon {
	char config_path[RXB_CONF_PATH_LEN];
	struct rxb_config cfg;		/* the file as last loaded */
	struct rxb_config started;	/* what the sockets etc. were made with */
	int epfd, sigfd, tfd;
	bool stop;
	uint64_t started_ns;		/* CLOCK_MONOTONIC */
	uint64_t started_unix_s;
	uint64_t instance_id;		/* reported; sendsrv has its own */

	struct notify notify;
	struct state state;
	bool state_ok;
	uint64_t state_saved_ns;
	bool state_soon;		/* save within seconds: a flow went, or a save failed */

	struct collect *col;
	struct daemon_collector_cfg col_cfg;	/* what col was started with */
	struct netplan netplan;		/* when the per-packet probes attach */
	uint32_t net_every_now;		/* what the collector was last told */
	struct rxb_epoch *epoch;	/* the latest record (heap: large) */
	bool have_epoch;
	uint64_t epochs, overruns;
	double collect_ms, epoch_ms_spent;
	uint32_t netdev_max_backlog;
	int irq_time_accounting;	/* CONFIG_IRQ_TIME_ACCOUNTING: 1, 0, < 0 unknown */

	struct flows flows;
	struct recvcost recvcost;	/* the receive path's cost, for the defaults */
	struct daemon_streams streams;
	struct daemon_buffer buf;	/* [buffer]: receive-buffer adaptation */
	int buf_fd;			/* its timer as in epfd, -1: none */
	struct daemon_admit admit;
	struct sendsrv *ss;
	uint16_t sendsrv_port;
	struct ctlsrv *cs;
	struct metricsrv *ms;		/* NULL unless [metrics] enabled */
	struct metrics_totals metrics_totals;	/* counters from the epochs */

	struct daemon_reload reload;
	uint64_t status_sent_ns;
	uint64_t rx_early_due_ns;	/* next look at the receivers' turns within
					 * an epoch (flows_rx_early_ns()) */
	int rx_ring_fd;			/* the collector's preemption ring while
					 * in epfd, else -1 */
	bool rx_ring_failed;		/* cannot be watched: look on the timer */
	char status_line[200];
};

/*
 * Load @config_path and bring everything up. On failure returns -errno
 * after logging why (a config error names FILE:LINE and the key) and
 * leaves nothing behind.
 */
int daemon_init(struct daemon *d, const char *config_path);
/* The loop; returns 0 after SIGTERM/SIGINT, -errno on a fatal error. */
int daemon_run(struct daemon *d);
void daemon_finish(struct daemon *d);

/*
 * Re-read the configuration (SIGHUP, `rxbneckctl reload`) and apply every
 * key whose row says CONFIG_RELOAD_LIVE. On error nothing changes; 0 or
 * -errno, d->reload says what happened (and lists the restart-only keys
 * whose value in the file is not the one running).
 */
int daemon_reload(struct daemon *d);

/*
 * The configuration as the daemon's parts run it, read back from them
 * (the logger, the epoch timer, netplan, the flows, the collector's
 * settings, the sender server's limits), restart-only keys as started.
 * After a successful reload it equals the file's but for restart-only
 * keys; a value two parts disagree on comes back as 0.
 */
void daemon_reload_effective(const struct daemon *d, struct rxb_config *out);

#endif
