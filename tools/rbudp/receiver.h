/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RBUDP receiver engine. One thread does everything - it is the
 * "receiver thread" rxbneckd watches by its UDP port - with one ppoll()
 * loop over the UDP socket, the control connection and the listening
 * socket (other senders are turned away while a transfer runs).
 */
#ifndef RBUDP_RECEIVER_H
#define RBUDP_RECEIVER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tools/rbudp/recv_accept.h"
#include "tools/rbudp/wire.h"

struct rbudp_recv_opts {
	const char *output;		/* file to write; NULL with --discard */
	int64_t delay_ns;		/* feedback delay; < 0: the sender's */
	uint32_t batch_pkts;		/* datagrams per recvmmsg */
	uint64_t poll_ns;		/* nap between reads while data flows; 0: block */
	bool busy_poll;			/* never sleep while a round's data may come */
	uint64_t drain_idle_ns;		/* after BLAST_DONE: quiet time that ends a round */
	uint64_t drain_max_ns;		/* ... and the most a drain may take */
	int timeout_ms;			/* silence limit during a transfer */
	int setup_timeout_ms;		/* HELLO..SETUP, and SETUP_OK..first datagram
					 * (plus the sender's announced delay) */
	const uint8_t *psk;		/* pre-shared key (--key-file), or NULL */
	size_t psk_len;
	uint64_t max_mem_bytes;		/* largest file held in memory */
	uint64_t gap_ns;		/* record arrival gaps at least this long; 0: off */
	bool progress;
	volatile sig_atomic_t *stop;
};

struct rbudp_recv_round {
	uint32_t round;
	uint32_t pkts_expected;		/* missing before the round */
	uint32_t pkts_sent;		/* as the sender's BLAST_DONE says */
	uint32_t pkts_received;		/* new packets during the round */
	uint32_t pkts_lost;		/* still missing at its end */
	uint32_t pkts_duplicate;
	uint64_t first_rx_ns;		/* first/last datagram, from transfer start */
	uint64_t last_rx_ns;
	uint64_t bytes_received;	/* payload of new packets */
	uint64_t drain_ns;		/* BLAST_DONE to the end of the round */
};

/* A pause in arrivals inside a round (read times, so receiver stalls show too). */
struct rbudp_recv_gap {
	uint32_t round;
	uint64_t start_ns, end_ns;	/* from the transfer start */
};

#define RBUDP_RECV_GAPS_MAX 4096

struct rbudp_recv_result {
	bool ok;
	char error[300];
	char peer[80];
	bool have_setup;
	struct rbudp_setup setup;
	uint64_t feedback_delay_ns;
	uint64_t t0_ns;			/* SETUP_OK sent, CLOCK_MONOTONIC */
	uint64_t transfer_ns;		/* SETUP_OK sent to COMPLETE sent */
	uint64_t verify_ns;
	uint64_t write_ns;
	uint64_t dgrams;		/* all datagrams read */
	uint64_t pkts_received;		/* distinct packets */
	uint64_t pkts_duplicate;
	uint64_t bad_short, bad_seq, bad_len;
	uint64_t rejected;		/* well-formed datagrams with a wrong token or tag */
	bool psk;			/* keyed by the pre-shared key */
	bool counted;			/* a real session: authenticated handshake
					 * (--key-file) or an authenticated datagram */
	uint64_t socket_drops;		/* kernel's per-socket count; UINT64_MAX: unknown */
	uint8_t digest[RBUDP_DIGEST_LEN];	/* SHA-256 of the file kept */
	bool digest_checked;		/* false with --discard: nothing kept to hash */
	bool verified;
	uint32_t n_rounds, cap_rounds;
	struct rbudp_recv_round *rounds;
	uint32_t n_gaps;		/* recorded (at most RBUDP_RECV_GAPS_MAX) */
	uint64_t gaps_total;		/* seen */
	struct rbudp_recv_gap *gaps;
};

struct rbudp_receiver {
	int udp;
	int listen_fd;
	int rcvbuf_bytes;		/* effective, as getsockopt reports */
	char local[80];
	/* Connections waiting for their turn (recv_accept.h). */
	int pending[RBUDP_RECV_PENDING_MAX];
	struct sockaddr_storage pending_addr[RBUDP_RECV_PENDING_MAX];
	unsigned n_pending;
	uint64_t queued, turned_away;
};

/* Bind UDP and TCP on @addr:@port. Errors are logged. 0 or negative errno. */
int rbudp_receiver_open(struct rbudp_receiver *rx, const char *addr, uint16_t port,
			int rcvbuf_bytes);
void rbudp_receiver_close(struct rbudp_receiver *rx);

void rbudp_recv_result_init(struct rbudp_recv_result *r);
void rbudp_recv_result_finish(struct rbudp_recv_result *r);

/*
 * Wait for a sender and serve one session. Returns 0 when a session ran
 * (r->ok says how it went, r->counted whether it was a real transfer) or
 * -EINTR when stopped before one began.
 */
int rbudp_receiver_serve(struct rbudp_receiver *rx, const struct rbudp_recv_opts *o,
			 struct rbudp_recv_result *r);

#endif
