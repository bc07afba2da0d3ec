/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rxbneckd's own files share (nothing else includes this):
 *   daemon.c         life cycle and the event loop
 *   daemon_flows.c   the flows' wiring: senders, rates and pauses, history,
 *                    one epoch's model step and probe plan
 *   daemon_reload.c  the configuration into the parts: at start, on reload,
 *                    and read back
 *   daemon_streams.c the stream-count advisor: samples in, STREAMS out, history
 * and daemon_buffer.c, the receive-buffer adaptation (its own header).
 */
#ifndef RXB_DAEMON_DAEMON_INT_H
#define RXB_DAEMON_DAEMON_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/daemon.h"

/* daemon.c */
int daemon_arm_timer(struct daemon *d, uint32_t interval_ms);
/*
 * Put the collector's preemption ring in the epoll set (wake on its next
 * event) or take it out.
 */
void daemon_rx_ring_watch(struct daemon *d, bool on);
/* systemd's STATUS= line: at most every few seconds unless @force. */
void daemon_status(struct daemon *d, bool force);
/* The [buffer] timer in the epoll set as it is now (after a reconfigure). */
int daemon_buffer_watch(struct daemon *d);

/* daemon_flows.c */
/* flows_init() with the daemon's callbacks and [measure] watch_ports. */
int daemon_flows_init(struct daemon *d);
/* The sender server's callbacks into the flows. */
void daemon_flows_sender_ops(struct daemon *d, struct sendsrv_ops *ops);
/* After the epoch's measurement (d->epoch): model, ports, probes, state. */
void daemon_flows_epoch(struct daemon *d);
/* Tell the collector which ports to watch when the flows changed. */
void daemon_flows_sync_ports(struct daemon *d);
/* Tell the collector netplan's answer when it changed. */
void daemon_flows_probe_every(struct daemon *d, uint64_t now);

/* daemon_streams.c */
/* The advisor, the transfers' sampler, the history from the state directory. */
int daemon_streams_init(struct daemon *d);
/* Save the history, free. */
void daemon_streams_finish(struct daemon *d);
/* The sender server's STREAMS callbacks. */
void daemon_streams_sender_ops(struct daemon *d, struct sendsrv_ops *ops);
/* After the epoch's measurement: sample, refit, push STREAMS, save. */
void daemon_streams_epoch(struct daemon *d);
/* [streams] from @next: 0, or -errno with why (nothing changed). */
int daemon_streams_reload(struct daemon *d, const struct rxb_config *next, char *why,
			  size_t wlen);
/* [streams] as the parts run it. */
void daemon_streams_effective(const struct daemon *d, struct rxb_config *out);

/* daemon_reload.c */
/* Which HELLOs are served ([control], struct daemon_admit). */
void daemon_reload_admit(struct daemon *d, const struct rxb_config *cfg);
void daemon_reload_flows_params(const struct daemon *d, const struct rxb_config *cfg,
				struct flows_params *p);
void daemon_reload_netplan_params(const struct rxb_config *cfg, struct netplan_params *p);
/* What the collector takes from @cfg (attach: as the daemon started). */
void daemon_reload_collector_cfg(const struct daemon *d, const struct rxb_config *cfg,
				 struct daemon_collector_cfg *out);
/* What the receive-buffer adaptation takes from @cfg. */
void daemon_reload_buffer_cfg(const struct rxb_config *cfg, struct daemon_buffer_cfg *out);
/* A collector with @cc, the flows' ports and netplan's sampling; logged. */
int daemon_reload_start_collector(struct daemon *d, const struct daemon_collector_cfg *cc,
				  struct collect **out);

#endif
