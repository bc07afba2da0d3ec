/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --follow: take the sending rate from rxbneckd's RATE frames and obey its
 * PAUSE schedules, through librxbneck (include/rxbneck/client.h).
 *
 * The sender opens the connection before the transfer, waits (bounded) for
 * the first RATE, and then polls between send batches: the newest rate,
 * and whether the newest pause schedule says "stop now, until T" or "next
 * stop at T". The schedule arithmetic - windows relative to the daemon's
 * send time, shifted by the lead (the RTT by default), one-shot or periodic
 * - is the library's (PROTOCOL.md §6.2); this module records what was used
 * for the summary and keeps the transfer going at the last rate, without
 * pauses, if the daemon connection drops mid-transfer.
 */
#ifndef RBUDP_FOLLOW_H
#define RBUDP_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rxbneck_client;

struct rbudp_follow_opts {
	const char *host;		/* rxbneckd */
	uint16_t port;			/* its sender control port */
	uint16_t flow_port;		/* the receiver's UDP port */
	uint32_t dgram_bytes;		/* UDP payload per datagram (S_pkt) */
	uint64_t file_bytes;
	uint32_t rtt_us;		/* 2 x one-way delay estimate */
	bool obey_pause;		/* false: subscribe to RATE only (--no-pause) */
	int64_t pause_lead_us;		/* < 0: the library's default (the RTT) */
	int first_rate_timeout_ms;
	uint64_t max_rate_bps;		/* ceiling: announced, and rates capped to it; 0 = none */
};

struct rbudp_follow_rate {
	uint64_t t_ns;			/* when it arrived (CLOCK_MONOTONIC) */
	uint64_t rate_bps;
	double loss;
	uint64_t xfer_time_us;		/* predicted transfer time, 0 = not computed */
	uint64_t epoch;
	uint16_t flags;
	uint16_t confidence;
};

/* A PAUSE schedule as received, in the sender's clock. */
struct rbudp_follow_sched {
	uint64_t received_ns;		/* when the frame arrived (librxbneck) */
	uint64_t first_stop_ns;		/* received + start_in - lead */
	uint64_t duration_us, period_us;
	uint32_t repeat_count;
	bool cancel;
};

struct rbudp_follow_window {
	uint64_t start_ns, end_ns;	/* a pause the sender honoured */
};

struct rbudp_follow {
	struct rxbneck_client *c;
	struct rbudp_follow_opts o;
	bool connected;			/* false after the daemon went away */
	char lost[256];			/* why, when it went away */
	uint64_t lost_ns;
	struct rbudp_follow_rate *rates;
	uint32_t n_rates, cap_rates;
	struct rbudp_follow_window *windows;
	uint32_t n_windows, cap_windows;
	struct rbudp_follow_sched *scheds;
	uint32_t n_scheds, cap_scheds;
	uint32_t pause_frames;		/* PAUSE schedules received */
	uint32_t cancel_frames;
	uint64_t pause_ns;		/* total time paused */
	bool report_accepted;
	char daemon_name[64];
};

/*
 * Connect, say HELLO, wait up to first_rate_timeout_ms for a RATE.
 * Returns 0, or -1 with the reason in @err.
 */
int rbudp_follow_open(struct rbudp_follow *f, const struct rbudp_follow_opts *o,
		      char *err, size_t err_size);
/* BYE, close, free. */
void rbudp_follow_close(struct rbudp_follow *f);

/*
 * Read what the daemon sent. Then *rate_bps = the newest rate;
 * *paused_until_ns = end of the pause in force at @now_ns (0: none);
 * *next_stop_ns = start of the next pause (UINT64_MAX: none known).
 * Never fails: a lost connection is recorded and the last rate kept.
 */
void rbudp_follow_poll(struct rbudp_follow *f, uint64_t now_ns, uint64_t *rate_bps,
		       uint64_t *paused_until_ns, uint64_t *next_stop_ns);

/* The sender paused from @start_ns to @end_ns. */
void rbudp_follow_paused(struct rbudp_follow *f, uint64_t start_ns, uint64_t end_ns);

/* Newest rate, capped to max_rate_bps (0 if none). */
uint64_t rbudp_follow_rate(const struct rbudp_follow *f);

/* Send the transfer's REPORT when the daemon accepts reports (best effort). */
void rbudp_follow_report(struct rbudp_follow *f, uint32_t rounds, uint64_t elapsed_ns,
			 uint64_t first_rate_bps, uint64_t pkts_sent, uint64_t pkts_resent,
			 uint64_t pkts_lost_first, bool aborted);

#endif
