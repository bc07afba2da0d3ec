/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneck-shape at run time: the receivers (their daemon connection, the
 * advice, the rate in force, their class's counters) and the devices
 * (what was found there, what was installed).
 *
 *   agent.c   resolving receivers to addresses and devices, cleaning up
 *             what earlier instances left, installing and removing the
 *             qdiscs, the state records;
 *   peer.c    the daemon connections (librxbneck), the rate in force and
 *             applying it, the class counters;
 *   status.c  the status lines, text and JSON.
 *
 * The event loop (shape_main.c) polls the connections' sockets and calls
 * shape_peer_process() for the ready ones and shape_agent_tick() when the
 * next deadline (shape_agent_next_ns()) comes.
 */
#ifndef SHAPE_AGENT_H
#define SHAPE_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rxbneck/client.h"
#include "tools/shape/conf.h"
#include "tools/shape/policy.h"
#include "tools/shape/state.h"
#include "tools/shape/tc.h"

struct shape_dev;

/* Back-off between connection attempts: from this, doubling to the
 * configured ceiling. */
#define SHAPE_BACKOFF_MIN_MS	500u

struct shape_rx {
	const struct shape_receiver_conf *conf;
	struct shape_addr addrs[SHAPE_MAX_ADDRS];
	unsigned naddr;
	struct shape_dev *dev;
	uint16_t minor;			/* class MAJOR:minor */
	uint32_t hdr_bytes;		/* link + IP + transport, per packet */
	double payload_bytes;		/* per packet, for the conversion */
	bool payload_measured;		/* from the counters, not the configuration */
	uint32_t hello_payload_bytes;	/* told to the daemon */

	/* The daemon. */
	struct rxbneck_client *client;
	bool connected;
	uint64_t next_attempt_ns;
	uint64_t backoff_ms;
	unsigned failures;		/* attempts in a row that failed */
	char last_error[320];
	uint64_t instance_id;
	uint64_t connects;

	/* Its advice and what is in force. */
	struct shape_policy policy;
	bool have_rate;
	struct rxbneck_rate rate;	/* the latest RATE */
	uint64_t rate_ns;		/* when it arrived */
	uint64_t rates;			/* RATE frames received */
	enum shape_mode mode;		/* in force */
	uint64_t force_bps;		/* payload bits/s in force; 0: unshaped */
	uint64_t wire_Bps;		/* the class's rate */
	uint32_t burst_bytes;
	bool installed;			/* the class exists */

	/* The class's counters. */
	struct shape_tc_stats st;
	struct shape_tc_stats st_mark;	/* at the last payload estimate */
	uint64_t payload_mark_ns;	/* ... taken then */
	uint64_t peak_backlog_bytes;
	uint64_t peak_qlen;
	/* Reads of the counters, and those that found packets queued: the
	 * share of the second tells how much of the time the class held its
	 * senders back (shaping binds) rather than passing what came. */
	uint64_t polls, busy_polls;
	bool have_stats;
};

struct shape_dev {
	struct shape_tc_dev tc;
	char found_kind[SHAPE_STATE_KIND_MAX];	/* the root qdisc before us */
	int lock_fd;
	bool installed;			/* our root qdisc is there */
	struct shape_rx *rx[SHAPE_MAX_RECEIVERS];
	unsigned nrx;
};

struct shape_agent {
	const struct shape_conf *conf;
	bool dry_run;
	bool json;
	FILE *out;			/* status lines (and dry-run commands) */
	struct shape_tc *tc;
	uint64_t netns_ino;
	struct shape_rx rx[SHAPE_MAX_RECEIVERS];
	unsigned nrx;
	struct shape_dev dev[SHAPE_MAX_RECEIVERS];
	unsigned ndev;
	int fq;				/* shape_tc_fq_available() */
	uint64_t start_ns;
	uint64_t next_stats_ns;
	uint64_t next_status_ns;
	int fatal;			/* a tc change failed: exit and restore */
	char fatal_msg[320];
};

/*
 * Resolve every receiver (addresses: the configured ones or the daemon
 * host's; device: the configured one or the route's), open the tc socket.
 * Nothing on any device is touched yet.
 */
int shape_agent_init(struct shape_agent *a, const struct shape_conf *c, bool dry_run,
		     bool json, FILE *out, char *err, size_t errlen);
/* Close the connections and the socket; devices must be restored first. */
void shape_agent_finish(struct shape_agent *a);

/*
 * Remove what earlier instances left in this network namespace: every
 * device with a state file whose lock is free, and every configured
 * device whose root qdisc is an HTB with our handle. Takes the locks of
 * the configured devices (-EBUSY when another instance holds one).
 */
int shape_agent_cleanup(struct shape_agent *a, char *err, size_t errlen);

/*
 * Install the root qdiscs and one class per receiver at its initial
 * target, record them, then make the first connection attempts. On
 * failure everything installed so far is removed again.
 */
int shape_agent_start(struct shape_agent *a, char *err, size_t errlen);

/* Remove our root qdiscs (the kernel restores its default) and records. */
void shape_agent_restore(struct shape_agent *a);

/* peer.c */
void shape_peer_connect(struct shape_agent *a, struct shape_rx *rx, uint64_t now_ns);
void shape_peer_process(struct shape_agent *a, struct shape_rx *rx, uint64_t now_ns);
void shape_peer_apply(struct shape_agent *a, struct shape_rx *rx, uint64_t now_ns);
void shape_peer_stats(struct shape_agent *a, uint64_t now_ns);
void shape_peer_close(struct shape_rx *rx);

/* Reconnects, hold expiries, counters, status lines due at @now_ns. */
void shape_agent_tick(struct shape_agent *a, uint64_t now_ns);
/* When shape_agent_tick() must run next. */
uint64_t shape_agent_next_ns(const struct shape_agent *a, uint64_t now_ns);

/* status.c: one status report (text or JSON by a->json) to a->out. */
void shape_status_print(struct shape_agent *a, uint64_t now_ns, const char *event);
/* Why PAUSE is not applied, for logs and the status. */
extern const char shape_status_pause_note[];

#endif
