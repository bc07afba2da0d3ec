/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RBUDP sender engine: control connection, paced blast rounds, resends
 * of what the receiver reports missing, until the receiver reports the
 * file complete and verified. The CLI (send_main.c) parses options, opens
 * the source, runs this and prints the summary.
 */
#ifndef RBUDP_SENDER_H
#define RBUDP_SENDER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/rbudp/source.h"
#include "tools/rbudp/wire.h"

struct rbudp_follow;

struct rbudp_send_opts {
	const char *host;		/* receiver */
	uint16_t port;			/* receiver's TCP and UDP port */
	uint64_t rate_bps;		/* fixed rate, UDP payload bit/s */
	struct rbudp_follow *follow;	/* rate and pauses from rxbneckd, or NULL */
	uint64_t delay_ns;		/* emulated one-way delay before each blast */
	uint32_t batch_pkts;		/* datagrams per sendmmsg */
	uint32_t burst_pkts;		/* pacing credit cap */
	uint32_t gso_segs;		/* datagrams per UDP GSO send; 0/1: no GSO */
	uint32_t max_rounds;
	uint32_t stall_rounds;		/* give up after this many rounds without progress */
	int timeout_ms;			/* connect, setup, feedback */
	int sndbuf_bytes;		/* 0: leave the default */
	const uint8_t *psk;		/* pre-shared key (--key-file), or NULL */
	size_t psk_len;
	bool progress;			/* progress lines on stderr */
	volatile sig_atomic_t *stop;	/* set by a signal handler */
};

struct rbudp_send_round {
	uint32_t round;
	uint32_t pkts_sent;
	uint32_t pkts_lost;		/* reported missing at the end of the round */
	uint64_t bytes_sent;		/* file bytes */
	uint64_t udp_bytes;		/* UDP payload bytes (headers included) */
	uint64_t start_ns;		/* blast start, from the transfer start */
	uint64_t blast_ns;		/* first send to last send */
	uint64_t wait_ns;		/* BLAST_DONE to the complete feedback */
	uint64_t pause_ns;		/* honoured PAUSE time inside the blast */
	uint64_t rate_bps;		/* rate at the blast start */
};

struct rbudp_send_result {
	bool ok;			/* complete and verified */
	char error[300];		/* why not, when !ok */
	char peer[80];
	uint8_t digest[RBUDP_DIGEST_LEN];	/* SHA-256 of the file */
	uint64_t digest_ns;		/* time to compute the digest */
	bool digest_checked;		/* the receiver hashed the file it kept */
	bool psk;			/* the session was keyed by a pre-shared key */
	uint64_t setup_ns;		/* connect + SETUP/SETUP_OK */
	uint64_t t0_ns;			/* transfer start, CLOCK_MONOTONIC */
	uint32_t gso_segs;		/* datagrams per send in use; 1: no GSO */
	uint64_t transfer_ns;		/* SETUP_OK to COMPLETE (Banerjee et al.'s
					 * eq. 2: T) */
	uint64_t verify_wait_ns;	/* COMPLETE to VERIFIED */
	uint64_t rcvbuf_bytes;		/* as the receiver reported */
	uint64_t feedback_delay_ns;	/* as the receiver reported */
	uint32_t verify_status;		/* enum rbudp_verify_status; UINT32_MAX: none */
	uint64_t pkts_sent;
	uint64_t bytes_sent;
	uint64_t udp_bytes;
	uint64_t send_calls;		/* sendmmsg calls */
	uint64_t pause_ns;		/* total honoured PAUSE time */
	uint32_t n_rounds;
	uint32_t cap_rounds;
	struct rbudp_send_round *rounds;
};

void rbudp_send_result_init(struct rbudp_send_result *r);
void rbudp_send_result_finish(struct rbudp_send_result *r);

/* Run one transfer of @src. Returns 0 when verified, else -1 (r->error says why). */
int rbudp_send_run(const struct rbudp_send_opts *o, const struct rbudp_source *src,
		   struct rbudp_send_result *r);

#endif
